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
  retry?: Retry,
): Verdict {
  const name = job?.metadata?.name ?? entry?.job ?? "";
  const created = job?.metadata?.creationTimestamp ?? entry?.decidedAt;
  const run: Run = {
    name,
    created,
    // A retry's lateness is its delay, not the operator's: it says its attempt instead.
    ran: {
      when: c.slotText,
      job: name,
      ...(created && !retry ? { createdAfter: String(secondsBetween(c.slot, new Date(created))) } : {}),
      ...retry,
    },
    evidence: entry ? [entryLine(entry)] : [],
    retry,
  };
  return job ? liveVerdict(c, job, run) : goneVerdict(c, run, entry?.outcome);
}

/** Which attempt of spec.retry a Job is, after which Job failed. */
interface Retry {
  attempt: string;
  attempts: string;
  failedJob: string;
}

/** What every verdict on the run says of it: its Job's name and creation, the words' params, the evidence so far. */
interface Run {
  name: string;
  created: string | undefined;
  ran: { when: string; job: string; createdAfter?: string } & Partial<Retry>;
  evidence: string[];
  retry: Retry | undefined;
}

/** A Job gone from the cluster (history cleanup, or deleted): the record's outcome is all there is to tell. */
function goneVerdict(c: SlotContext, run: Run, o: RecentRun["outcome"]): Verdict {
  const { name, created, evidence } = run;
  if (o?.result === OutcomeResult.Complete) {
    const took =
      o.finishedAt && created ? { took: humanDuration(secondsBetween(new Date(created), new Date(o.finishedAt))) } : {};
    return { status: "healthy", verdict: NO_CAUSE.completed({ ...run.ran, ...took }), evidence, fix: [] };
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
        when: c.slotText,
        reason: o.reason ?? "Failed",
        ...(o.message ? { message: o.message } : {}),
        namespace: c.namespace,
        job: name,
        oomKilled: false,
        deadlineExceeded: o.reason === "DeadlineExceeded",
        ...run.retry,
      },
      [...evidence, `Job ${name} is gone (history cleanup): its Pods' details went with it`],
    );
  }
  return {
    status: "unknown",
    verdict: NO_CAUSE.outcomeLost({ when: c.slotText, job: name }),
    evidence: [...evidence, `no Job named ${name} in ${c.namespace}: deleted before it ended, or by hand`],
    fix: [],
  };
}

/** A Job found live: ended (well, by the operator's start timeout, failed), queued, or running with or without trouble. */
function liveVerdict(c: SlotContext, job: Readonly<Job>, run: Run): Verdict {
  const { name, created, evidence } = run;
  evidence.push(
    `Job ${name}: created ${created ?? "?"}${run.ran.createdAfter !== undefined ? ` (created ${run.ran.createdAfter} s after the slot)` : ""}`,
  );
  const kind = classifyJob(job);
  if (kind === "successful") {
    const start = job.status?.startTime ?? created;
    const end = finishedAt(job);
    const took = start && end ? { took: humanDuration(secondsBetween(new Date(start), end)) } : {};
    return { status: "healthy", verdict: NO_CAUSE.completed({ ...run.ran, ...took }), evidence, fix: [] };
  }
  if (job.metadata?.annotations?.[ENDED_REASON_ANNOTATION] === EndedReason.StartTimeout)
    return endedByStartTimeout(c, job, run);
  if (kind === "failed") return failedVerdict(c, job, run);
  // A queued Job has no Pods until whoever suspended it lets it start: not stuck, waiting.
  const queued = queuedBy(job);
  if (queued) return queuedVerdict(c, job, queued, run);
  return troubleVerdict(c, job, run) ?? runningVerdict(c, job, run);
}

function endedByStartTimeout(c: SlotContext, job: Readonly<Job>, run: Run): Verdict {
  const { name } = run;
  const annotations = job.metadata?.annotations ?? {};
  const failed = job.status?.conditions?.find((x) => x.type === "Failed" && x.status === "True");
  const deadline = (job.spec as { activeDeadlineSeconds?: number } | undefined)?.activeDeadlineSeconds;
  return startTimeout(
    c,
    name,
    { pods: annotations[ENDED_PODS_ANNOTATION], message: annotations[ENDED_MESSAGE_ANNOTATION] },
    [
      ...run.evidence,
      `Job ${name}: ${ENDED_REASON_ANNOTATION}: ${EndedReason.StartTimeout}; ${ENDED_PODS_ANNOTATION}: ${annotations[ENDED_PODS_ANNOTATION] ?? "(none)"}; ${ENDED_MESSAGE_ANNOTATION}: ${annotations[ENDED_MESSAGE_ANNOTATION] ?? "(none)"}`,
      failed
        ? `Job ${name}: Failed, ${failed.reason ?? "?"} (the operator lowered its activeDeadlineSeconds to ${deadline ?? "?"} to end it)`
        : `Job ${name}: ending: the Job controller fails it at its lowered activeDeadlineSeconds (${deadline ?? "?"})`,
    ],
  );
}

function failedVerdict(c: SlotContext, job: Readonly<Job>, run: Run): Verdict {
  const why = failureEvidence(job, c.podsOf(run.name));
  return found(
    "job-failed",
    {
      when: c.slotText,
      reason: why.reason,
      namespace: c.namespace,
      job: run.name,
      oomKilled: why.reason.includes("OOMKilled"),
      deadlineExceeded: why.reason.startsWith("DeadlineExceeded"),
      ...run.retry,
    },
    [...run.evidence, ...why.evidence],
  );
}

function queuedVerdict(
  c: SlotContext,
  job: Readonly<Job>,
  queued: NonNullable<ReturnType<typeof queuedBy>>,
  run: Run,
): Verdict {
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
      when: c.slotText,
      job: run.name,
      queuedBy: queued.by,
      ...(queued.since ? { since: stamp(queued.since) } : {}),
      namespace: c.namespace,
      kueue: queue !== undefined,
    },
    [
      ...run.evidence,
      `Job ${run.name}: ${held.join(", ")}; the operator counts it as running (concurrencyPolicy, its group's places) and never unsuspends it`,
    ],
  );
}

/**
 * What keeps the running Job's Pods from working. A Job just created has nothing to show yet; an earlier run of the
 * same CronJob still running may show what will hold this one too (every run of an image that cannot be pulled:
 * under a short schedule the newest run is often seconds old).
 */
function troubleVerdict(c: SlotContext, job: Readonly<Job>, run: Run): Verdict | undefined {
  const { f, slotText: when } = c;
  const trouble = podTrouble(job, c.podsOf(run.name), f.events, f.now, when);
  if (trouble) return { ...trouble, evidence: [...run.evidence, ...trouble.evidence] };
  const age = run.created ? f.now.getTime() - Date.parse(run.created) : Infinity;
  if (age >= JUST_STARTED_MS) return undefined;
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
        ...run.evidence,
        `Job ${run.name} started ${seconds} s ago: its Pods show nothing yet; Job ${otherName}, an earlier run still running:`,
        ...t.evidence,
      ],
    };
  }
  return undefined;
}

function runningVerdict(c: SlotContext, job: Readonly<Job>, run: Run): Verdict {
  const alive = keptAlive(job, c.podsOf(run.name), c.f.now);
  return {
    status: "healthy",
    verdict: NO_CAUSE.running({ ...run.ran, age: alive.age, bounds: alive.bounds }),
    evidence: [...run.evidence, ...alive.evidence],
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
