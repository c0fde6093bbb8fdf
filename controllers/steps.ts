// Reconcile steps as functions over plain data: each takes what it needs and returns what it decided (status
// changes, conditions, an Event); the reconciler (cronjob_controller.ts) applies the decision. No I/O, no clock.
import { classifyJob, type CronJobWire, finishedAt, type Job, scheduledTimeOf } from "../api/v1/index.ts";
import { type parseHashedSchedule, type Schedule, validateTimeZone } from "../api/v1/schedule/index.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import type { ConditionInput } from "./conditions.ts";
import type { EventReason } from "./events.ts";

interface EventDecision {
  reason: EventReason;
  message: string;
}

/** Progressing, from how many Jobs run. */
export function progressingCondition(activeCount: number): ConditionInput {
  return activeCount > 0
    ? { type: "Progressing", status: "True", reason: "JobsActive", message: `${activeCount} Job(s) running` }
    : { type: "Progressing", status: "False", reason: "NoJobsActive", message: "No Jobs running" };
}

const NOT_DEGRADED: ConditionInput = {
  type: "Degraded",
  status: "False",
  reason: "AsExpected",
  message: "No problems detected",
};

/**
 * Step 6's decision. `stop`: nothing is scheduled this pass (the conditions say why, and nextScheduleTime goes);
 * a suspended CronJob still runs an explicit run-now request. Otherwise the schedule to compute slots with.
 */
type GuardDecision =
  | {
      stop: true;
      suspended: boolean;
      conditions: ConditionInput[];
      /** status.resolvedSchedule: the resolved schedule, or null to remove it (unparseable). Absent: unchanged. */
      resolvedSchedule?: string | null;
      event?: EventDecision;
    }
  | { stop: false; schedule: Schedule; resolvedSchedule: string };

/**
 * Step 6, the guards: deleting, an unknown time zone, an unparseable schedule, suspended. `parsed` is the
 * CronJob's schedule parsed in its zone (the reconciler's cache); `activeCount` how many of its Jobs run.
 */
export function guards(
  cronJob: {
    metadata: Pick<CronJobWire["metadata"], "deletionTimestamp">;
    spec: Pick<CronJobWire["spec"], "timeZone" | "suspend">;
  },
  parsed: ReturnType<typeof parseHashedSchedule>,
  activeCount: number,
): GuardDecision {
  const progressing = progressingCondition(activeCount);
  if (cronJob.metadata.deletionTimestamp) {
    return {
      stop: true,
      suspended: false,
      conditions: [
        { type: "Available", status: "False", reason: "Deleting", message: "The CronJob is being deleted." },
        progressing,
        NOT_DEGRADED,
      ],
    };
  }
  const invalid = (reason: "UnknownTimeZone" | "InvalidSchedule", message: string): ConditionInput[] => [
    { type: "Available", status: "False", reason, message },
    progressing,
    { type: "Degraded", status: "True", reason, message },
  ];
  const tz = cronJob.spec.timeZone;
  const tzErr = tz !== undefined ? validateTimeZone(tz) : undefined;
  if (tzErr) {
    return {
      stop: true,
      suspended: false,
      conditions: invalid("UnknownTimeZone", tzErr.message),
      event: { reason: "UnknownTimeZone", message: tzErr.message },
    };
  }
  if (!parsed.ok) {
    return {
      stop: true,
      suspended: false,
      conditions: invalid(
        parsed.error.field === "spec.timeZone" ? "UnknownTimeZone" : "InvalidSchedule",
        parsed.error.message,
      ),
      resolvedSchedule: null,
      event: { reason: "UnparseableSchedule", message: parsed.error.message },
    };
  }
  if (cronJob.spec.suspend) {
    return {
      stop: true,
      suspended: true,
      conditions: [
        {
          type: "Available",
          status: "False",
          reason: "Suspended",
          message: "spec.suspend is true: no new Jobs are started.",
        },
        progressing,
        NOT_DEGRADED,
      ],
      resolvedSchedule: parsed.resolved,
    };
  }
  return { stop: false, schedule: parsed.schedule, resolvedSchedule: parsed.resolved };
}

/** Step 8's decision: the slot to record as status.lastMissedTime, with its Event; none if reported already. */
interface MissedDeadlineDecision {
  lastMissedTime: string;
  event: EventDecision;
}

/**
 * Step 8: a slot that passed its starting deadline unstarted is made visible, once per slot (status remembers
 * it, so a restart does not report it again).
 */
export function missedDeadline(
  lastMissedTime: string | undefined,
  tooLate: { slot: Date; deadline: number },
): MissedDeadlineDecision | undefined {
  const slot = rfc3339(tooLate.slot);
  if (lastMissedTime === slot) return undefined;
  const passed = rfc3339(new Date(tooLate.slot.getTime() + tooLate.deadline * 1000));
  return {
    lastMissedTime: slot,
    event: {
      reason: "MissSchedule",
      message: `Missed scheduled time to start a job: ${slot} (startingDeadlineSeconds ${tooLate.deadline} passed at ${passed})`,
    },
  };
}

/** What went wrong in this pass's writes (step 10–11), for Degraded. */
interface WriteProblems {
  createFailed?: string;
  createConflict?: string;
  deleteFailed?: string;
}

/**
 * The newest finished Job: by slot (its scheduled time), else by finish time; the name breaks a tie, so the
 * answer does not depend on the order the Jobs are listed in.
 */
export function newestFinished(finished: readonly Readonly<Job>[]): Readonly<Job> | undefined {
  let best: Readonly<Job> | undefined;
  let bestT = -Infinity;
  for (const j of finished) {
    const t = (scheduledTimeOf(j) ?? finishedAt(j))?.getTime() ?? -Infinity;
    if (t > bestT || (t === bestT && (j.metadata?.name ?? "") > (best?.metadata?.name ?? ""))) {
      best = j;
      bestT = t;
    }
  }
  return best;
}

/** Degraded: a failed write of this pass first, then whether the newest finished Job failed. */
export function degradedCondition(problems: WriteProblems, finished: readonly Readonly<Job>[]): ConditionInput {
  if (problems.createFailed)
    return { type: "Degraded", status: "True", reason: "JobCreationFailed", message: problems.createFailed };
  if (problems.createConflict)
    return { type: "Degraded", status: "True", reason: "JobCreationFailed", message: problems.createConflict };
  if (problems.deleteFailed)
    return { type: "Degraded", status: "True", reason: "JobDeletionFailed", message: problems.deleteFailed };
  const newest = newestFinished(finished);
  if (newest && classifyJob(newest) === "failed") {
    return {
      type: "Degraded",
      status: "True",
      reason: "LastJobFailed",
      message: `The newest finished Job ${newest.metadata?.name} failed`,
    };
  }
  return NOT_DEGRADED;
}

/** Step 12's conditions of a CronJob that schedules: Available (with the next run), Progressing, Degraded. */
export function scheduledConditions(
  activeCount: number,
  nextScheduleTime: string | undefined,
  problems: WriteProblems,
  finished: readonly Readonly<Job>[],
): ConditionInput[] {
  return [
    activeCount > 0
      ? {
          type: "Available",
          status: "True",
          reason: "JobsActive",
          message: `${activeCount} active Job(s); next run at ${nextScheduleTime}`,
        }
      : { type: "Available", status: "True", reason: "Scheduled", message: `Next run at ${nextScheduleTime}` },
    progressingCondition(activeCount),
    degradedCondition(problems, finished),
  ];
}
