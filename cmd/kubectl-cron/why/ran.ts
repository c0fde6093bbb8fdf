// The verdict on a slot a Job ran (found live, or only in the record): healthy, job-failed, or what keeps its Pods
// from working.
import { classifyJob, finishedAt, type Job, OutcomeResult, type RecentRun } from "../../../api/v1/index.ts";
import { NO_CAUSE } from "../causes.ts";
import { humanDuration } from "../history.ts";
import { failureEvidence, keptAlive, podTrouble } from "./jobs.ts";
import { entryLine } from "./record.ts";
import { found, secondsBetween, type SlotContext, type Verdict } from "./verdict.ts";

/** A run younger than this may not show its trouble yet (a Pod's image pull fails seconds after it starts). */
const JUST_STARTED_MS = 30_000;

/** The verdict on a Job that ran the slot (found live, or only in the record). */
export function ranVerdict(c: SlotContext, job: Readonly<Job> | undefined, entry: RecentRun | undefined): Verdict {
  const { f, slotText: when } = c;
  const evidence = entry ? [entryLine(entry)] : [];
  const name = job?.metadata?.name ?? entry?.job ?? "";
  const created = job?.metadata?.creationTimestamp ?? entry?.decidedAt;
  const ran = {
    when,
    job: name,
    ...(created ? { createdAfter: String(secondsBetween(c.slot, new Date(created))) } : {}),
  };
  if (!job) {
    const o = entry?.outcome;
    if (o?.result === OutcomeResult.Complete) {
      const took =
        o.finishedAt && created
          ? { took: humanDuration(secondsBetween(new Date(created), new Date(o.finishedAt))) }
          : {};
      return { status: "healthy", verdict: NO_CAUSE.completed({ ...ran, ...took }), evidence, fix: [] };
    }
    if (o?.result === OutcomeResult.Failed) {
      return found(
        "job-failed",
        {
          when,
          reason: o.reason ?? "Failed",
          ...(o.message ? { message: o.message } : {}),
          namespace: c.namespace,
          job: name,
          oomKilled: false,
          deadlineExceeded: o.reason === "DeadlineExceeded",
        },
        [...evidence, `Job ${name} is gone (history cleanup): its Pods' details went with it`],
      );
    }
    return {
      status: "unknown",
      verdict: NO_CAUSE.outcomeLost({ when, job: name }),
      evidence: [...evidence, `no Job named ${name} in ${c.namespace}: deleted before it ended, or by hand`],
      fix: [],
    };
  }
  const pods = c.podsOf(name);
  evidence.push(
    `Job ${name}: created ${created ?? "?"}${created ? ` (created ${ran.createdAfter} s after the slot)` : ""}`,
  );
  const kind = classifyJob(job);
  if (kind === "successful") {
    const start = job.status?.startTime ?? created;
    const end = finishedAt(job);
    const took = start && end ? { took: humanDuration(secondsBetween(new Date(start), end)) } : {};
    return {
      status: "healthy",
      verdict: NO_CAUSE.completed({ ...ran, ...took }),
      evidence,
      fix: [],
    };
  }
  if (kind === "failed") {
    const why = failureEvidence(job, pods);
    return found(
      "job-failed",
      {
        when,
        reason: why.reason,
        namespace: c.namespace,
        job: name,
        oomKilled: why.reason.includes("OOMKilled"),
        deadlineExceeded: why.reason.startsWith("DeadlineExceeded"),
      },
      [...evidence, ...why.evidence],
    );
  }
  const trouble = podTrouble(job, pods, f.events, f.now, when);
  if (trouble) return { ...trouble, evidence: [...evidence, ...trouble.evidence] };
  // A Job just created has nothing to show yet; an earlier run of the same CronJob still running may show what will
  // hold this one too (every run of an image that cannot be pulled: under a short schedule the newest run is often
  // seconds old).
  const age = created ? f.now.getTime() - Date.parse(created) : Infinity;
  if (age < JUST_STARTED_MS) {
    const earlier = f.jobs
      .filter((j) => j !== job && classifyJob(j) === "active")
      .sort((a, b) => (b.metadata?.creationTimestamp ?? "").localeCompare(a.metadata?.creationTimestamp ?? ""));
    for (const other of earlier) {
      const otherName = other.metadata?.name ?? "";
      const t = podTrouble(other, c.podsOf(otherName), f.events, f.now, when);
      if (!t) continue;
      const seconds = Math.max(0, Math.round(age / 1000));
      return {
        ...t,
        evidence: [
          ...evidence,
          `Job ${name} started ${seconds} s ago: its Pods show nothing yet; Job ${otherName}, an earlier run still running:`,
          ...t.evidence,
        ],
      };
    }
  }
  const alive = keptAlive(job, pods, f.now);
  return {
    status: "healthy",
    verdict: NO_CAUSE.running({ ...ran, age: alive.age, bounds: alive.bounds }),
    evidence: [...evidence, ...alive.evidence],
    fix: [],
  };
}
