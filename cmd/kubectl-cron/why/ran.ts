// The verdict on a slot a Job ran (found live, or only in the record): healthy, job-failed, or what keeps its Pods
// from working.
import { classifyJob, finishedAt, type Job, OutcomeResult, type RecentRun } from "../../../api/v1/index.ts";
import { humanDuration } from "../history.ts";
import { failureEvidence, keptAlive, podTrouble } from "./jobs.ts";
import { entryLine } from "./record.ts";
import { found, secondsBetween, type SlotContext, type Verdict } from "./verdict.ts";

/** The verdict on a Job that ran the slot (found live, or only in the record). */
export function ranVerdict(c: SlotContext, job: Readonly<Job> | undefined, entry: RecentRun | undefined): Verdict {
  const { f, slotText: when } = c;
  const evidence = entry ? [entryLine(entry)] : [];
  const name = job?.metadata?.name ?? entry?.job ?? "";
  const created = job?.metadata?.creationTimestamp ?? entry?.decidedAt;
  const startedLate = created ? ` (created ${secondsBetween(c.slot, new Date(created))} s after the slot)` : "";
  if (!job) {
    const o = entry?.outcome;
    if (o?.result === OutcomeResult.Complete) {
      const took =
        o.finishedAt && created
          ? `Complete in ${humanDuration(secondsBetween(new Date(created), new Date(o.finishedAt)))}`
          : "Complete";
      return { status: "healthy", verdict: `ran at ${when}: Job ${name}${startedLate}, ${took}`, evidence, fix: [] };
    }
    if (o?.result === OutcomeResult.Failed) {
      return found(
        "job-failed",
        `ran at ${when} and failed: Job ${name} ${o.reason ?? "Failed"}${o.message ? ` (${o.message})` : ""}`,
        [...evidence, `Job ${name} is gone (history cleanup): its Pods' details went with it`],
        {
          namespace: c.namespace,
          job: name,
          oomKilled: false,
          deadlineExceeded: o.reason === "DeadlineExceeded",
        },
      );
    }
    return {
      status: "unknown",
      verdict: `ran at ${when} (Job ${name}), but the Job is gone and the record has no outcome for it`,
      evidence: [...evidence, `no Job named ${name} in ${c.namespace}: deleted before it ended, or by hand`],
      fix: [],
    };
  }
  const pods = c.podsOf(name);
  evidence.push(`Job ${name}: created ${created ?? "?"}${startedLate}`);
  const kind = classifyJob(job);
  if (kind === "successful") {
    const start = job.status?.startTime ?? created;
    const end = finishedAt(job);
    const took = start && end ? ` in ${humanDuration(secondsBetween(new Date(start), end))}` : "";
    return {
      status: "healthy",
      verdict: `ran at ${when}: Job ${name}${startedLate}, Complete${took}`,
      evidence,
      fix: [],
    };
  }
  if (kind === "failed") {
    const why = failureEvidence(job, pods);
    return found("job-failed", `ran at ${when} and failed: Job ${name} ${why.reason}`, [...evidence, ...why.evidence], {
      namespace: c.namespace,
      job: name,
      oomKilled: why.reason.includes("OOMKilled"),
      deadlineExceeded: why.reason.startsWith("DeadlineExceeded"),
    });
  }
  const trouble = podTrouble(job, pods, f.events, f.now);
  if (trouble) {
    return {
      status: "cause",
      cause: trouble.cause,
      verdict: `started at ${when} but never got to work: ${trouble.summary}`,
      evidence: [...evidence, ...trouble.evidence],
      fix: trouble.fix,
    };
  }
  const alive = keptAlive(job, pods, f.now);
  return {
    status: "healthy",
    verdict: `ran at ${when}: Job ${name}${startedLate} ${alive.text}`,
    evidence: [...evidence, ...alive.evidence],
    fix: [],
  };
}
