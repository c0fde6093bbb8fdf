// metav1.Condition bookkeeping (apimachinery's meta.SetStatusCondition): lastTransitionTime moves only
// when a condition's status changes.
import {
  classifyJob,
  type Condition,
  finishedAt,
  type Job,
  type ScheduleEnd,
  scheduleEndText,
  scheduledTimeOf,
} from "../api/v1/index.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import { bounded } from "./events.ts";
import type { InputProblem } from "./input.ts";

/** Longest condition message written (messages quote API errors and user values). */
export const MAX_CONDITION_MESSAGE = 4096;

export type ConditionInput = Omit<Condition, "lastTransitionTime" | "observedGeneration">;

/** A condition as stored: only the fields setConditions reads, with their wire types. */
type StoredCondition = Pick<Condition, "type" | "lastTransitionTime"> & { status: string };

export function setConditions(
  previous: readonly StoredCondition[] | undefined,
  next: ConditionInput[],
  now: Date,
  observedGeneration: number | undefined,
): Condition[] {
  const ts = rfc3339(now);
  return next.map((c) => {
    const old = previous?.find((p) => p.type === c.type);
    const out: Condition = {
      ...c,
      message: bounded(c.message, MAX_CONDITION_MESSAGE),
      lastTransitionTime: old && old.status === c.status ? old.lastTransitionTime : ts,
    };
    if (observedGeneration !== undefined) out.observedGeneration = observedGeneration;
    return out;
  });
}

/**
 * Whether a condition's change is only a scheduled run's start or end, which the Jobs tell (controllers/statusfold.ts):
 * Progressing (how many Jobs run), and Available while it stays True (its message counts the running Jobs and names
 * the next run). Any other change (Degraded, Available going False, a guard's condition) is news.
 */
export function conditionChangeIsRoutine(
  before: Readonly<Pick<Condition, "type"> & { status: string }>,
  after: Readonly<Pick<Condition, "type"> & { status: string }>,
): boolean {
  if (before.type !== after.type) return false;
  if (after.type === "Progressing") return true;
  return after.type === "Available" && before.status === "True" && after.status === "True";
}

/** Progressing, from how many Jobs run. */
export function progressingCondition(activeCount: number): ConditionInput {
  return activeCount > 0
    ? { type: "Progressing", status: "True", reason: "JobsActive", message: `${activeCount} Job(s) running` }
    : { type: "Progressing", status: "False", reason: "NoJobsActive", message: "No Jobs running" };
}

export const NOT_DEGRADED: ConditionInput = {
  type: "Degraded",
  status: "False",
  reason: "AsExpected",
  message: "No problems detected",
};

/** What went wrong in this pass's writes (step 9's creates and deletes, step 10's), for Degraded. */
export interface WriteProblems {
  createFailed?: string;
  createConflict?: string;
  deleteFailed?: string;
  /** What is wrong with what it reads of other objects, in the inputs' order (inputs.ts): the first is said. */
  inputs?: readonly InputProblem[];
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

/**
 * Degraded: a failed write of this pass first, then the first problem of what it reads of other objects (the inputs
 * in their list's order), then whether the newest finished Job failed.
 */
export function degradedCondition(problems: WriteProblems, finished: readonly Readonly<Job>[]): ConditionInput {
  if (problems.createFailed)
    return { type: "Degraded", status: "True", reason: "JobCreationFailed", message: problems.createFailed };
  if (problems.createConflict)
    return { type: "Degraded", status: "True", reason: "JobCreationFailed", message: problems.createConflict };
  if (problems.deleteFailed)
    return { type: "Degraded", status: "True", reason: "JobDeletionFailed", message: problems.deleteFailed };
  const input = problems.inputs?.[0];
  if (input) return { type: "Degraded", status: "True", reason: input.reason, message: input.message };
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

/**
 * The conditions of a CronJob that schedules, once the triggers ran (step 9; the commit, step 10, writes them):
 * Available (with the next run), Progressing, Degraded.
 */
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
          message: `${activeCount} active Job(s); ${nextScheduleTime ? `next run at ${nextScheduleTime}` : "no scheduled time"}`,
        }
      : nextScheduleTime
        ? { type: "Available", status: "True", reason: "Scheduled", message: `Next run at ${nextScheduleTime}` }
        : {
            type: "Available",
            status: "True",
            reason: "AfterUpstreams",
            message: "No scheduled time: it runs after the CronJobs spec.after names",
          },
    progressingCondition(activeCount),
    degradedCondition(problems, finished),
  ];
}

/**
 * The conditions of a pass once the triggers ran (step 9; the commit writes them): a guard's (suspended, stopped,
 * invalid), the end of scheduling's (spec.maxRuns, spec.endTime), or a scheduling CronJob's.
 */
export function passConditions(
  guard: { stop: true; conditions: ConditionInput[] } | { stop: false },
  end: ScheduleEnd | undefined,
  pass: {
    active: ReadonlyMap<string, unknown>;
    status: { nextScheduleTime?: string | undefined };
    problems: WriteProblems;
  },
  finished: readonly Readonly<Job>[],
): ConditionInput[] {
  if (guard.stop) return guard.conditions;
  if (end) return endedConditions(end, pass.active.size);
  return scheduledConditions(pass.active.size, pass.status.nextScheduleTime, pass.problems, finished);
}

/** Scheduling has ended: like a suspended CronJob (explicit requests still run); nothing is wrong. */
export function endedConditions(end: ScheduleEnd, activeCount: number): ConditionInput[] {
  const message = scheduleEndText(end);
  return [
    { type: "Available", status: "False", reason: end.reason, message },
    progressingCondition(activeCount),
    NOT_DEGRADED,
  ];
}
