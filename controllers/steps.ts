// Reconcile steps as functions over plain data: each takes what it needs and returns what it decided (status
// changes, conditions, an Event); the reconciler (cronjob_controller.ts) applies the decision. No I/O, no clock.
import {
  BACKFILL_ANNOTATION,
  type backfillRequestOf,
  classifyJob,
  MAX_BACKFILL_SLOTS,
  MAX_CATCH_UP_SLOTS,
  slotsInRange,
  type MissedRunPolicy,
  type CronJobWire,
  type CronJobWireStatus,
  finishedAt,
  type Job,
  jobNameFor,
  scheduledTimeOf,
} from "../api/v1/index.ts";
import {
  type parseHashedSchedule,
  type Schedule,
  scheduleWindow,
  TOO_MANY_MISSED,
  validateTimeZone,
} from "../api/v1/schedule/index.ts";
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
    /** status.stopped as step 4b left it. */
    status?: Pick<CronJobWireStatus, "stopped">;
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
  const stopped = cronJob.status?.stopped;
  if (stopped) {
    const message =
      `Stopped after ${stopped.failures} failed runs in a row (spec.stopAfterConsecutiveFailures) at ${stopped.time}: ` +
      "no new Jobs are started; resume with `kubectl cron resume NAME` or by changing the spec.";
    return {
      stop: true,
      // Like a suspended CronJob: an explicit run-now request still runs.
      suspended: true,
      conditions: [
        { type: "Available", status: "False", reason: "StoppedAfterFailures", message },
        progressing,
        { type: "Degraded", status: "True", reason: "StoppedAfterFailures", message },
      ],
      resolvedSchedule: parsed.resolved,
    };
  }
  return { stop: false, schedule: parsed.schedule, resolvedSchedule: parsed.resolved };
}

/** Step 4b's decision: the status fields of the failure stop, and an Event when it stops or resumes. */
interface FailureStopDecision {
  status: CronJobWireStatus;
  event?: EventDecision;
}

/**
 * Step 4b, stop after repeated failures: counts the runs whose end this pass reports (`finished`, in the order
 * they finished: a failure adds one, a success sets 0), stops at spec.stopAfterConsecutiveFailures, and resumes on
 * a new resume request or a spec change since the stop. Every input is stored state, so a pass repeated after a
 * crash decides the same. Without the spec field nothing is counted and the fields go.
 */
export function failureStop(o: {
  stopAfter: number | undefined;
  generation: number | undefined;
  status: Readonly<CronJobWireStatus>;
  finished: readonly Readonly<Job>[];
  resumeRequest: string | undefined;
  now: Date;
}): FailureStopDecision {
  const { consecutiveFailures: _count, stopped: _stopped, ...rest } = o.status;
  const generation = o.generation ?? 0;
  const status: CronJobWireStatus = { ...rest };
  let event: EventDecision | undefined;
  let stopped = o.status.stopped;
  let count = o.status.consecutiveFailures ?? 0;
  // A request is consumed whether or not the CronJob is stopped, so an old annotation cannot resume a later stop.
  const newRequest = o.resumeRequest !== undefined && o.resumeRequest !== o.status.lastResumeRequest;
  if (newRequest) status.lastResumeRequest = o.resumeRequest;
  if (o.stopAfter === undefined) return { status };
  if (stopped && (newRequest || stopped.generation !== generation)) {
    event = {
      reason: "Resumed",
      message: newRequest
        ? `Scheduling resumed by the resume request "${o.resumeRequest}" after ${stopped.failures} failed runs in a row`
        : `Scheduling resumed: the spec changed (generation ${generation}) after ${stopped.failures} failed runs in a row`,
    };
    stopped = undefined;
    count = 0;
  }
  const byEnd = [...o.finished].sort(
    (a, b) =>
      (finishedAt(a)?.getTime() ?? 0) - (finishedAt(b)?.getTime() ?? 0) ||
      (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""),
  );
  for (const job of byEnd) count = classifyJob(job) === "failed" ? count + 1 : 0;
  status.consecutiveFailures = count;
  if (!stopped && count >= o.stopAfter) {
    stopped = { time: rfc3339(o.now), failures: count, generation };
    event = {
      reason: "StoppedAfterFailures",
      message: `Stopped scheduling after ${count} failed runs in a row (spec.stopAfterConsecutiveFailures ${o.stopAfter}); running Jobs are not touched. Resume with kubectl cron resume, or change the spec.`,
    };
  }
  if (stopped) status.stopped = stopped;
  return { status, ...(event ? { event } : {}) };
}

/** Step 6's status: the resolved schedule as the guards decided, and no nextScheduleTime until step 12. */
export function statusAfterGuards(status: Readonly<CronJobWireStatus>, guard: GuardDecision): CronJobWireStatus {
  const { nextScheduleTime: _next, resolvedSchedule, ...rest } = status;
  if (guard.resolvedSchedule === null) return rest;
  const resolved = guard.resolvedSchedule ?? resolvedSchedule;
  return resolved === undefined ? rest : { ...rest, resolvedSchedule: resolved };
}

/** What step 7 decides. */
interface ScheduleDecision {
  /** The slots to run now, oldest first (at most one unless missedRunPolicy is RunAll). */
  due: Date[];
  /** The next slot after now (the requeue time). */
  next: Date;
  /** The newest slot, when startingDeadlineSeconds put it out of reach unstarted. */
  tooLate?: { slot: Date; deadline: number };
  /** The newest slot the missed-run policy does not run (Skip; RunAll beyond its newest 100, or Replace). */
  notRun?: { slot: Date; policy: MissedRunPolicy; count: number };
  /** More slots were missed than TOO_MANY_MISSED: reported, and only the newest run. */
  tooManyMissed?: EventDecision;
}

/**
 * Step 7: which slots run now, and when the next one is.
 *
 * RunLatest (the default, the built-in's rule): the due slot is the newest one after the last run (else
 * creation) that is not later than startingDeadlineSeconds: a slot exactly that late still starts, as in the
 * built-in controller (`scheduledTime + deadline` before now is too late). Only slots that could still run count
 * toward "too many missed". `now` is truncated to the second, `clockNow` is not (a slot half a second past its
 * deadline is too late).
 *
 * Skip: the same slot, only if it is the one the stored status announced as nextScheduleTime (reached late
 * under load, it still runs; a slot that passed while the operator was down, the CronJob suspended or stopped, or
 * a Forbid run active was never announced).
 *
 * RunAll: every slot in that window, oldest first, at most the newest MAX_CATCH_UP_SLOTS; with Replace only
 * the newest (each would replace the one before).
 */
export function scheduleDecision(o: {
  schedule: Schedule;
  lastScheduleTime: string | undefined;
  creationTimestamp: string | undefined;
  startingDeadlineSeconds: number | undefined;
  missedRunPolicy?: string | undefined;
  concurrencyPolicy?: string | undefined;
  /**
   * The stored status.nextScheduleTime (Skip runs only the announced slot). A CronJob no pass has seen yet
   * (`neverReconciled`) is owed the first slot after its creation.
   */
  announced?: string | undefined;
  neverReconciled?: boolean;
  now: Date;
  clockNow: Date;
}): ScheduleDecision {
  const { schedule, now, clockNow, startingDeadlineSeconds: deadline } = o;
  const policy: MissedRunPolicy =
    o.missedRunPolicy === "Skip" || o.missedRunPolicy === "RunAll" ? o.missedRunPolicy : "RunLatest";
  const base = new Date(o.lastScheduleTime || o.creationTimestamp || now);
  // The first instant a slot may have and still start.
  const cutoff = deadline === undefined ? undefined : clockNow.getTime() - deadline * 1000;
  // scheduleWindow's lower bound is exclusive; one millisecond before the cut-off keeps it inclusive.
  const earliest = cutoff !== undefined && cutoff - 1 > base.getTime() ? new Date(cutoff - 1) : base;
  const w = scheduleWindow({ schedule, earliest, now, anchor: base });
  const decision: ScheduleDecision = { due: [], next: w.next };
  const tooMany = w.missedCount > TOO_MANY_MISSED;
  if (tooMany && policy === "RunLatest") {
    // The built-in controller and the tutorial stop scheduling here; we report and run the newest.
    decision.tooManyMissed = {
      reason: "TooManyMissedTimes",
      message: `too many missed start times: more than ${TOO_MANY_MISSED} since ${rfc3339(earliest)}; starting only the most recent one`,
    };
  }
  if (w.missed) {
    if (policy === "RunLatest") decision.due = [w.missed];
    else if (policy === "Skip") {
      const announced = o.announced
        ? new Date(o.announced)
        : o.neverReconciled && !o.lastScheduleTime
          ? schedule.next(base, base)
          : undefined;
      if (announced && announced.getTime() === w.missed.getTime()) decision.due = [w.missed];
      else decision.notRun = { slot: w.missed, policy, count: Math.min(w.missedCount, TOO_MANY_MISSED) };
    } else if (o.concurrencyPolicy === "Replace") {
      decision.due = [w.missed];
      const older = schedule.mostRecent(new Date(w.missed.getTime() - 1), base);
      if (older && older > earliest) decision.notRun = { slot: older, policy, count: w.missedCount - 1 };
    } else {
      const slots = newestSlots(schedule, earliest, now, base, MAX_CATCH_UP_SLOTS + 1);
      if (slots.length > MAX_CATCH_UP_SLOTS) {
        const dropped = slots.pop()!;
        decision.notRun = { slot: dropped, policy, count: w.missedCount - MAX_CATCH_UP_SLOTS };
        decision.tooManyMissed = {
          reason: "TooManyMissedTimes",
          message: `too many missed start times: more than ${MAX_CATCH_UP_SLOTS} since ${rfc3339(earliest)}; running the newest ${MAX_CATCH_UP_SLOTS}, oldest first (missedRunPolicy RunAll)`,
        };
      }
      decision.due = slots.reverse();
    }
  }
  if (cutoff !== undefined) {
    // The newest slot before the cut-off that never ran: reported when nothing is due (RunLatest, Skip), and
    // with RunAll whatever runs (older slots it would have run expired).
    const newest = schedule.mostRecent(policy === "RunAll" ? new Date(cutoff - 1) : now, base);
    if ((policy === "RunAll" || !w.missed) && newest && newest > base && newest.getTime() < cutoff)
      decision.tooLate = { slot: newest, deadline: deadline! };
  }
  return decision;
}

/** The slots in (after, notAfter], newest first, at most `max`. */
function newestSlots(schedule: Schedule, after: Date, notAfter: Date, anchor: Date, max: number): Date[] {
  const out: Date[] = [];
  for (let t = schedule.mostRecent(notAfter, anchor); t && t > after && out.length < max;) {
    out.push(t);
    t = schedule.mostRecent(new Date(t.getTime() - 1), anchor);
  }
  return out;
}

/**
 * Step 9: the slot ran if status says so, or a Job of ours holds its name: in the cache (`children`), or listed
 * in status.active (confirmed by the API server in step 4: a Job the cache has not seen yet).
 */
export function slotAlreadyRan(
  cronJobName: string,
  children: readonly Readonly<Job>[],
  status: Readonly<CronJobWireStatus>,
  due: Date,
): boolean {
  const last = status.lastScheduleTime;
  if (last && new Date(last) >= due) return true;
  const name = jobNameFor(cronJobName, due);
  return children.some((j) => j.metadata?.name === name) || !!status.active?.some((r) => r.name === name);
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

/**
 * Step 8 for a slot the missed-run policy does not run: reported once (status.lastMissedTime), like a missed
 * deadline.
 */
export function missedByPolicy(
  lastMissedTime: string | undefined,
  notRun: { slot: Date; policy: MissedRunPolicy; count: number },
): MissedDeadlineDecision | undefined {
  const slot = rfc3339(notRun.slot);
  if (lastMissedTime && new Date(lastMissedTime).getTime() >= notRun.slot.getTime()) return undefined;
  const why =
    notRun.policy === "Skip"
      ? "missedRunPolicy Skip runs only the time status.nextScheduleTime announced (the operator was down, or the CronJob suspended, stopped or blocked by a Forbid run)"
      : notRun.count > 1
        ? `missedRunPolicy RunAll: ${notRun.count} older missed times are not run`
        : "missedRunPolicy RunAll with concurrencyPolicy Replace runs only the newest missed time";
  return {
    lastMissedTime: slot,
    event: { reason: "MissSchedule", message: `Missed scheduled time to start a job: ${slot} (${why})` },
  };
}

type BackfillStatus = NonNullable<CronJobWireStatus["backfill"]>;

/** Step 11c's decision on the request: the status.backfill to work with, and an Event when it changes phase. */
interface BackfillDecision {
  backfill: BackfillStatus | undefined;
  event?: EventDecision;
}

/** How far a refused range is counted, to say how many slots it would have made. */
const BACKFILL_COUNT_LIMIT = 100_000;

/**
 * Step 11c, the backfill request: a new request (a new id) starts — or is refused, with the reason (a range
 * in the future, more than MAX_BACKFILL_SLOTS slots, with the count) — replacing the one before; a running one
 * whose annotation went away (or changed) is cancelled. Otherwise the stored progress, unchanged.
 */
export function backfillDecision(o: {
  request: ReturnType<typeof backfillRequestOf>;
  stored: Readonly<BackfillStatus> | undefined;
  schedule: Schedule;
  anchor: Date;
  now: Date;
}): BackfillDecision {
  const { request, stored } = o;
  const cancel = (): BackfillDecision =>
    stored?.phase === "Running"
      ? {
          backfill: { ...stored, phase: "Cancelled" },
          event: {
            reason: "BackfillCancelled",
            message: `Backfill "${stored.id}" cancelled after ${stored.created} of ${stored.total} slots (the request was removed or replaced); Jobs already started keep running`,
          },
        }
      : { backfill: stored };
  if (!request) return cancel();
  if (!request.ok) {
    // Without an id there is nothing to record a refusal under: say it once per stored state.
    if (stored?.phase === "Refused" && stored.message === request.reason) return { backfill: stored };
    const refused: BackfillStatus = {
      id: stored?.id ?? "",
      from: stored?.from ?? rfc3339(o.now),
      to: stored?.to ?? rfc3339(o.now),
      phase: "Refused",
      total: 0,
      created: 0,
      skipped: 0,
      message: `${BACKFILL_ANNOTATION}: ${request.reason}`,
    };
    return { backfill: refused, event: { reason: "BackfillRefused", message: refused.message! } };
  }
  const r = request.request;
  if (stored?.id === r.id) return { backfill: stored };
  const base: BackfillStatus = {
    id: r.id,
    from: rfc3339(r.from),
    to: rfc3339(r.to),
    phase: "Running",
    total: 0,
    created: 0,
    skipped: 0,
  };
  const refuse = (message: string): BackfillDecision => ({
    backfill: { ...base, phase: "Refused", message },
    event: { reason: "BackfillRefused", message: `Backfill "${r.id}" refused: ${message}` },
  });
  if (r.to.getTime() > o.now.getTime())
    return refuse(`to (${base.to}) is in the future; a backfill runs past slots only`);
  const slots = slotsInRange(o.schedule, r.from, r.to, { max: BACKFILL_COUNT_LIMIT + 1, anchor: o.anchor });
  if (slots.length > MAX_BACKFILL_SLOTS) {
    const count = slots.length > BACKFILL_COUNT_LIMIT ? `more than ${BACKFILL_COUNT_LIMIT}` : String(slots.length);
    return refuse(`the range holds ${count} slots; at most ${MAX_BACKFILL_SLOTS} may be backfilled in one request`);
  }
  const started: BackfillDecision = {
    backfill: { ...base, total: slots.length },
    event: {
      reason: "BackfillStarted",
      message: `Backfill "${r.id}": ${slots.length} slots from ${base.from} to ${base.to}, at most ${r.parallelism} at a time`,
    },
  };
  // A request replacing a running one says so.
  if (stored?.phase === "Running") started.event!.message += ` (replaces "${stored.id}", cancelled)`;
  return started;
}

/** What went wrong in this pass's writes (steps 10–11b), for Degraded. */
export interface WriteProblems {
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

// --- 5 and 12: how far behind the books may fall --------------------------------------------------------

/**
 * Creation first, but the books never fall more than one run behind. A pass during a burst of Job creates,
 * or with other CronJobs waiting in the queue, may leave its status write and history cleanup to a later
 * pass — once. Under load that never lets up (more every-minute CronJobs than the apiserver can take), every
 * pass has a slot to create, so "a later pass" would never come: the status would stay without the runs
 * (and history cleanup, which keeps any Job whose run the stored status has not recorded, could delete
 * nothing), and Jobs would pile up in the cluster and in the controller's cache without bound (seen at 20,000
 * CronJobs in the benchmark: no delete at all in 7 minutes, then out of memory). These decide from stored
 * state only, so a restart keeps the bound.
 */
export function statusBehind(
  stored: Readonly<CronJobWireStatus> | undefined,
  observed: Readonly<CronJobWireStatus>,
  finished: readonly Readonly<Job>[] = [],
  now?: Date,
): boolean {
  // The children hold a run the stored status does not: an earlier pass already left its write to later.
  const o = observed.lastScheduleTime ? Date.parse(observed.lastScheduleTime) : NaN;
  const s = stored?.lastScheduleTime ? Date.parse(stored.lastScheduleTime) : NaN;
  if (!Number.isNaN(o) && (Number.isNaN(s) || o > s)) return true;
  // A run the stored status still lists as active ended (or its Job is gone) longer ago than a burst may
  // hold the books: a CronJob with no slot due has no create of its own to count passes by.
  if (now === undefined) return false;
  const stillActive = new Set((observed.active ?? []).map((r) => r.name));
  for (const ref of stored?.active ?? []) {
    if (!ref.name || stillActive.has(ref.name)) continue;
    const job = finished.find((j) => j.metadata?.name === ref.name);
    const ended = job ? finishedAt(job) : undefined;
    if (!ended || now.getTime() - ended.getTime() >= BOOKS_MAX_LATE_MS) return true;
  }
  return false;
}

/** How long a finished run may stay listed as active while bursts hold the status write (the burst's own cap). */
const BOOKS_MAX_LATE_MS = 30_000;

/** More than one run over a history limit: cleanup already waited a pass, and goes now. */
export function historyBehind(
  finished: { successful: number; failed: number },
  limits: { successful?: number; failed?: number },
): boolean {
  const over = (count: number, limit: number | undefined) => limit !== undefined && count > limit + 1;
  return over(finished.successful, limits.successful) || over(finished.failed, limits.failed);
}
