// The verdict on a slot a Job ran (found live, or only in the record): healthy, job-failed, ended by the operator
// because its Pods never started (start-timeout), queued (job-queued), or what keeps its Pods from working.
import {
  classifyJob,
  ENDED_MESSAGE_ANNOTATION,
  ENDED_PODS_ANNOTATION,
  ENDED_REASON_ANNOTATION,
  EndedReason,
  finishedAt,
  type Job,
  KUEUE_QUEUE_NAME_KEY,
  OutcomeResult,
  PodsShowed,
  queuedBy,
  type RecentRun,
} from "../../../../api/v1/index.ts";
import { NO_CAUSE } from "../causes.ts";
import { humanDuration } from "../../model/time.ts";
import { entryLine } from "./entry.ts";
import { failureEvidence, keptAlive, podTrouble } from "./jobs.ts";
import { found, secondsBetween, type SlotContext, stamp, type Verdict } from "./verdict.ts";

/** A run younger than this may not show its trouble yet (a Pod's image pull fails seconds after it starts). */
const JUST_STARTED_MS = 30_000;

/**
 * The verdict on a Job that ran the slot (found live, or only in the record); `retry`: the Job is a retry of it
 * (spec.retry), which attempt after which Job failed.
 */
export function ranVerdict(
  c: SlotContext,
  job: Readonly<Job> | undefined,
  entry: RecentRun | undefined,
  retry?: { attempt: string; attempts: string; failedJob: string },
): Verdict {
  const { f, slotText: when } = c;
  const evidence = entry ? [entryLine(entry)] : [];
  const name = job?.metadata?.name ?? entry?.job ?? "";
  const created = job?.metadata?.creationTimestamp ?? entry?.decidedAt;
  // A retry's lateness is its delay, not the operator's: it says its attempt instead.
  const ran = {
    when,
    job: name,
    ...(created && !retry ? { createdAfter: String(secondsBetween(c.slot, new Date(created))) } : {}),
    ...retry,
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
    if (o?.result === OutcomeResult.Failed && o.reason === EndedReason.StartTimeout) {
      return startTimeout(c, name, o, [
        ...evidence,
        `Job ${name} is gone (history cleanup): the record's outcome says why it ended`,
      ]);
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
          ...retry,
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
    `Job ${name}: created ${created ?? "?"}${ran.createdAfter !== undefined ? ` (created ${ran.createdAfter} s after the slot)` : ""}`,
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
  const annotations = job.metadata?.annotations ?? {};
  if (annotations[ENDED_REASON_ANNOTATION] === EndedReason.StartTimeout) {
    const failed = job.status?.conditions?.find((x) => x.type === "Failed" && x.status === "True");
    const deadline = (job.spec as { activeDeadlineSeconds?: number } | undefined)?.activeDeadlineSeconds;
    return startTimeout(
      c,
      name,
      { pods: annotations[ENDED_PODS_ANNOTATION], message: annotations[ENDED_MESSAGE_ANNOTATION] },
      [
        ...evidence,
        `Job ${name}: ${ENDED_REASON_ANNOTATION}: ${EndedReason.StartTimeout}; ${ENDED_PODS_ANNOTATION}: ${annotations[ENDED_PODS_ANNOTATION] ?? "(none)"}; ${ENDED_MESSAGE_ANNOTATION}: ${annotations[ENDED_MESSAGE_ANNOTATION] ?? "(none)"}`,
        failed
          ? `Job ${name}: Failed, ${failed.reason ?? "?"} (the operator lowered its activeDeadlineSeconds to ${deadline ?? "?"} to end it)`
          : `Job ${name}: ending: the Job controller fails it at its lowered activeDeadlineSeconds (${deadline ?? "?"})`,
      ],
    );
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
        ...retry,
      },
      [...evidence, ...why.evidence],
    );
  }
  // A queued Job has no Pods until whoever suspended it lets it start: not stuck, waiting.
  const queued = queuedBy(job);
  if (queued) {
    const spec = (job.spec ?? {}) as { suspend?: boolean; managedBy?: string };
    const queue = job.metadata?.labels?.[KUEUE_QUEUE_NAME_KEY];
    const held = [
      `spec.suspend ${spec.suspend ?? "(unset)"}`,
      ...(queue !== undefined ? [`label ${KUEUE_QUEUE_NAME_KEY}=${queue}`] : []),
      ...(spec.managedBy ? [`spec.managedBy ${spec.managedBy}`] : []),
    ];
    return found(
      "job-queued",
      {
        when,
        job: name,
        queuedBy: queued.by,
        ...(queued.since ? { since: stamp(queued.since) } : {}),
        namespace: c.namespace,
        kueue: queue !== undefined,
      },
      [
        ...evidence,
        `Job ${name}: ${held.join(", ")}; the operator counts it as running (concurrencyPolicy, its group's places) and never unsuspends it`,
      ],
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

/**
 * A run the operator ended because its Pods did not start within spec.startTimeoutSeconds (start-timeout): `pods`,
 * what its Pods showed as a code (the Job's ENDED_PODS_ANNOTATION, the outcome's `pods`; absent on an earlier
 * version's run, whose fix is then the general one); `message`, the same in words, quoted.
 */
function startTimeout(
  c: SlotContext,
  job: string,
  ended: { pods?: string | undefined; message?: string | undefined },
  evidence: string[],
): Verdict {
  const timeout = `${String(c.cronJob.spec?.startTimeoutSeconds ?? "?")}s`;
  return found(
    "start-timeout",
    {
      when: c.slotText,
      timeout,
      ...(ended.message ? { message: ended.message } : {}),
      namespace: c.namespace,
      job,
      imagePull: ended.pods === PodsShowed.ImagePull,
      unschedulable: ended.pods === PodsShowed.Unschedulable,
      noPod: ended.pods === PodsShowed.NoPod,
    },
    evidence,
  );
}
