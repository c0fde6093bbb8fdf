// The triggers' rows, the half every reader needs: what asks for a run (the schedule, a run-now request, a backfill
// request, a retry) as the record, the admission webhook, `kubectl cron` and the controller all read it — its words
// (its record trigger, Event reasons, the plugin's word), the annotation its Jobs carry, whether it is an explicit
// request, which status field it moves, the record's subject of a Job it made (recorded), the Job an entry's run has
// (jobOf), which run of its slot an entry is (runIndex), whether a failure is run again and so not counted towards a
// stop (runsAgain), its admission check (validate) and what the webhook adds to a request (stamp), and the runs it
// has pending later (pending: a retry's attempts) with how they are said. The controller's half (plan, ran,
// book: controllers/triggers.ts) spreads a row and adds what only a pass does. A reader loops over TRIGGER_ROWS and
// never switches on a trigger, so a new trigger is a row here, its half there, its words in reasons.ts and its
// annotations and `why` causes in a module of its own (the causes listed here by row name, TRIGGER_CAUSES; what the
// plugin's `why` says of it beyond them, its half in cmd/kubectl-cron/answer/why/halves.ts). Pure.
import { backfillRequestOf, BACKFILL_ANNOTATION, BACKFILL_REQUEST_ANNOTATION } from "./backfill.ts";
import { type Job, scheduledTimeOf } from "./job.ts";
import { jobNameFor } from "./jobnames.ts";
import { CRONJOB_NAME_LABEL } from "./groupversion_info.ts";
import { EventReason, RecordDecision, RecordReason, RecordTrigger } from "./reasons.ts";
import { type RecentRunWire, runFactsOf } from "./recentruns.ts";
import {
  parseRetryAttempt,
  RETRY_OF_ANNOTATION,
  retriable,
  retryAttemptOf,
  retryAttemptValue,
  retryJobName,
  retryOf,
  RETRY_CAUSES,
} from "./retry.ts";
import {
  manualJobName,
  MAX_RUN_NOW_REQUEST_LENGTH,
  RUN_NOW_ANNOTATION,
  RUN_NOW_REQUEST_ANNOTATION,
  RUN_NOW_REQUESTED_BY_ANNOTATION,
  runNowRequestedByValue,
  runNowRequestOf,
  RUN_NOW_CAUSES,
} from "./runnow.ts";
import { type CronJobSchedules, shortestInterval } from "./schedules.ts";
import { jitterOffsetOf, validateJitter } from "./jitter.ts";
import { AFTER_ANNOTATION, AFTER_CAUSES, afterJobName, parseAfterRequest, validateUpstreams } from "./after.ts";
import type { WhyCause } from "./metadata.ts";
import { joinJobName, parseJoinRequest, validateAfterPolicy } from "./join.ts";
import { countText } from "./schedule/index.ts";
import { MAX_BACKFILL_SLOTS } from "./backfill.ts";
import { type FieldError, invalidField } from "../../runtime/field.ts";

/** A run as the record names it: its trigger, slot and request, and the reason it ran for. */
export interface RunSubject {
  trigger: RecordTrigger;
  reason: RecordReason;
  scheduledTime?: Date;
  request?: string;
  /** What the entry of its Job says beyond its reason (a retry: which attempt, after which failure). */
  message?: string;
  /** A retry's attempt, as a field. */
  attempt?: RecentRunWire["attempt"];
  /** A jittered slot's run: when it was due to start (its slot plus its offset, spec.jitter). */
  startsAt?: Date;
}

/** What a row's validate() sees of a CronJob under admission (any version: the schedules are parsed already). */
export interface ValidationInput {
  /** The CronJob's name (metadata.name). */
  readonly name?: string;
  readonly annotations: Readonly<Record<string, unknown>>;
  readonly spec: Readonly<Record<string, unknown>>;
  /** Undefined when they do not parse (the webhook reports that itself). */
  readonly schedules: CronJobSchedules | undefined;
  readonly creationTimestamp: string | undefined;
  /** The admission time. */
  readonly now: Date;
  /** The stored object's annotations (UPDATE; undefined on CREATE): an unchanged request is not checked again. */
  readonly oldAnnotations: Readonly<Record<string, unknown>> | undefined;
}

/** What a row's stamp() sees of a CronJob under admission (CREATE or UPDATE). */
export interface StampInput {
  readonly annotations: Readonly<Record<string, unknown>>;
  /** The stored object's annotations (UPDATE; undefined on CREATE). */
  readonly oldAnnotations: Readonly<Record<string, unknown>> | undefined;
  /** The user the API server authenticated: only the webhook knows who asked. */
  readonly username: string;
}

/** What a row's runsAgain() reads besides the failed Job: every Job of the CronJob, its spec and its last slot. */
export interface RunsAgainInput {
  readonly jobs: readonly Readonly<Job>[];
  readonly spec: object | undefined;
  readonly lastScheduleTime: string | undefined;
}

/** A trigger's row: what every reader of its runs needs. */
export interface TriggerRow<Name extends string = string> {
  readonly name: Name;
  /** Its runs' trigger in the record (status.recentRuns). */
  readonly recordAs: RecordTrigger;
  /** Every record trigger its entries carry: recordAs, and what earlier versions wrote for its runs. */
  readonly records: readonly RecordTrigger[];
  /** How `kubectl cron history` names its runs (the TRIGGER column). */
  readonly word: string;
  /** The reasons of the Events its runs make (created, held): its own, so the API reference and `why` list them. */
  readonly eventReasons: readonly EventReason[];
  /** The annotation its Jobs carry the request's id in; none for the table's default row, which claims the others. */
  readonly requestAnnotation?: string;
  /**
   * An explicit request (run-now, backfill), as `kubectl create job --from` is: it runs while scheduling is suspended
   * or stopped after failures, and waits for a group's place since it was asked, not since its slot.
   */
  readonly explicit: boolean;
  /** Its Jobs move lastScheduleTime, the base missed slots are counted from (the schedule's own book). */
  readonly movesLastScheduleTime: boolean;
  /**
   * Its Jobs take a schedule slot's name without moving lastScheduleTime: for the schedule such a Job is the only
   * sign its slot ran, so it is kept until the schedule has passed that slot.
   */
  readonly takesScheduleSlots: boolean;
  /**
   * Where a slot has entries of several triggers, which one `why` reads as the slot's own: the lowest rank; none:
   * its entries are never a slot's own (a retry's are about an attempt after it).
   */
  readonly slotRank?: number;
  /**
   * How the record names a Job of this row (step 4 enters a Job the record lacks): its trigger, the reason it ran
   * for, its slot and request. The controller's subject() of the request the Job ran for gives the same words.
   */
  recorded(job: Readonly<Job>): RunSubject;
  /** The name of the Job a record entry of this row ran as (undefined: the entry does not say). */
  jobOf(cronJobName: string, e: Readonly<Pick<RecentRunWire, "scheduledTime" | "request">>): string | undefined;
  /**
   * The admission webhook's check of the trigger's own request (its annotation) and settings: errors name the field
   * and the value. The webhook runs every row's; none for a trigger with nothing to check.
   */
  validate?(input: ValidationInput): { errors: FieldError[]; warnings: string[] };
  /**
   * The annotations the mutating webhook adds to a CronJob under admission for this row's request (run-now: who
   * asked); none: it adds nothing.
   */
  stamp?(input: StampInput): Record<string, string>;
  /**
   * Which run of its slot a record entry of this row is about: 0 the slot's own, k its k-th later run (a retry's
   * attempt k). The record orders entries decided in the same second by it. None: 0.
   */
  runIndex?(e: Readonly<Pick<RecentRunWire, "request" | "attempt">>): number;
  /**
   * Which run of its slot a Job of this row is (`kubectl cron history`): its order after the slot's own (a retry's
   * attempt k), how the row says it ("1/3": attempt 1 of 3), and the slot's first Job it follows. None: the slot's own.
   */
  runOfJob?(job: Readonly<Job>): { order: number; which: string; first: string } | undefined;
  /**
   * Whether this row will run a failed Job's run again (a retry's attempt is owed): its failure is then not counted
   * towards spec.stopAfterConsecutiveFailures, the last run's is. None: it runs no failure again.
   */
  runsAgain?(job: Readonly<Job>, o: RunsAgainInput): boolean;
  /**
   * Its runs the record says wait (Held entries: a retry for its delay, or behind a Job or its group), oldest first,
   * each said in the row's own words (`what`): `kubectl cron next` and the dashboard print them with the row's word.
   */
  pending?<E extends AttemptEntryInput>(cronJob: PendingInput<E>): PendingEntry<E>[];
}

/** What pending() reads of a CronJob: its spec (the row's own settings) and its record. */
export interface PendingInput<E> {
  spec?: object | undefined;
  status?: { recentRuns?: E[] | undefined } | undefined;
}

/**
 * A run a row's record says waits: its slot (or when it was asked), which run it is in the row's words, when it
 * starts, and what it follows.
 */
export interface PendingEntry<E> {
  entry: E;
  slot: Date;
  /** Which run it is, in its row's words ("attempt 2 of 3"); none: its word says it all. */
  what?: string;
  /** Its order among its slot's pending runs (a retry: its attempt). */
  order: number;
  /** When it starts (a delay's end). */
  startsAt?: Date;
  /** The Job whose failure it follows, and how that failed. */
  failedJob?: string;
  failure?: string;
  /** A retry's attempt k of n, as fields (`next -o json`). */
  attempt?: { number: number; of: number };
}

/** What an attempt's entry is read from. */
export type AttemptEntryInput = Pick<
  RecentRunWire,
  "trigger" | "decision" | "decidedAt" | "scheduledTime" | "request" | "attempt" | "startsAt" | "supersededBy"
>;

/** An attempt the record decided about: its slot, k of n, and its facts. */
export interface AttemptEntry<E> {
  entry: E;
  slot: Date;
  /** Attempt k (1 is the first retry) of the n spec.retry.limit allowed. */
  k: number;
  n: number;
  /** RetryDelay: when it starts. */
  startsAt?: Date;
  /** The attempt before it that failed, and how. */
  failedJob?: string;
  failure?: string;
  /** RetrySuperseded: the newer run that started first. */
  newerRun?: Date;
}

/** The request id a Job ran for, by the row's annotation (undefined: a scheduled run, or not this trigger's). */
export function requestIdOf(row: Pick<TriggerRow, "requestAnnotation">, job: Readonly<Job>): string | undefined {
  return row.requestAnnotation === undefined ? undefined : job.metadata?.annotations?.[row.requestAnnotation];
}

/** The row that made a Job: the one whose annotation it carries, else the table's default row (the schedule). */
export function rowOfJob<R extends Pick<TriggerRow, "requestAnnotation">>(rows: readonly R[], job: Readonly<Job>): R {
  return (
    rows.find((t) => requestIdOf(t, job) !== undefined) ??
    rows.find((t) => t.requestAnnotation === undefined) ??
    rows[0]!
  );
}

/** The row whose runs a record entry is about (by its trigger); undefined: a trigger no row knows. */
export function rowOfEntry<R extends Pick<TriggerRow, "records">>(
  rows: readonly R[],
  e: Readonly<Pick<RecentRunWire, "trigger">>,
): R | undefined {
  return rows.find((r) => (r.records as readonly string[]).includes(e.trigger));
}

/** A Job named for a slot (`<cronjob>-<unix seconds>`) and marked with it. */
export function holdsSlotName(cronJobName: string, job: Readonly<Job>): boolean {
  const slot = scheduledTimeOf(job);
  return !!slot && job.metadata?.name === jobNameFor(cronJobName, slot);
}

/** A slot's Job name, from an entry's scheduledTime (undefined: none, or not a time). */
function slotJobOf(cronJobName: string, e: Readonly<Pick<RecentRunWire, "scheduledTime">>): string | undefined {
  const slot = e.scheduledTime === undefined ? undefined : new Date(e.scheduledTime);
  return slot && !Number.isNaN(slot.getTime()) ? jobNameFor(cronJobName, slot) : undefined;
}

// --- the schedule ----------------------------------------------------------------------------------

/** A slot's run as the record names it: an older missed slot run by RunAll says so by its reason. */
export const slotSubject = (
  slot: Date | undefined,
  catchUp: boolean | undefined,
  startsAt?: Date | undefined,
): RunSubject => ({
  trigger: RecordTrigger.Schedule,
  reason: catchUp ? RecordReason.MissedRunPolicyRunAll : RecordReason.Scheduled,
  ...(slot ? { scheduledTime: slot } : {}),
  ...(startsAt && slot && startsAt.getTime() !== slot.getTime() ? { startsAt } : {}),
});

export const SCHEDULE_ROW: TriggerRow<"schedule"> = {
  name: "schedule",
  recordAs: RecordTrigger.Schedule,
  records: [RecordTrigger.Schedule, RecordTrigger.CatchUp],
  word: "scheduled",
  eventReasons: [EventReason.SuccessfulCreate, EventReason.JobAlreadyActive],
  explicit: false,
  movesLastScheduleTime: true,
  takesScheduleSlots: false,
  slotRank: 0,
  recorded: (job) => {
    const slot = scheduledTimeOf(job);
    const offset = jitterOffsetOf(job);
    const startsAt = slot && offset ? new Date(slot.getTime() + offset * 1000) : undefined;
    return slotSubject(slot, runFactsOf(job).catchUp, startsAt);
  },
  jobOf: slotJobOf,
  validate: validateSchedule,
};

/**
 * The schedule row's admission check of its own settings: spec.jitter shorter than the schedules' shortest gap
 * (counted from the creation, as the controller counts `@every`), and a warning for a spec.endTime already past.
 */
function validateSchedule(input: ValidationInput): { errors: FieldError[]; warnings: string[] } {
  const created = input.creationTimestamp ? new Date(input.creationTimestamp) : input.now;
  const shortest = input.schedules ? shortestInterval(input.schedules, created) : undefined;
  const jitter = validateJitter(input.spec.jitter, shortest);
  const end = typeof input.spec.endTime === "string" ? Date.parse(input.spec.endTime) : NaN;
  const warnings =
    end < input.now.getTime()
      ? [`spec.endTime: ${input.spec.endTime} has passed: the schedule starts no new run (run-now requests still run)`]
      : [];
  return { errors: jitter ? [jitter] : [], warnings };
}

// --- run now ---------------------------------------------------------------------------------------

/** A run-now request's run as the record names it. */
export const runNowSubject = (request: string | undefined): RunSubject => ({
  trigger: RecordTrigger.RunNow,
  reason: RecordReason.RunNowRequested,
  ...(request !== undefined ? { request } : {}),
});

export const RUN_NOW_ROW: TriggerRow<"runNow"> = {
  name: "runNow",
  recordAs: RecordTrigger.RunNow,
  records: [RecordTrigger.RunNow],
  word: "manual",
  eventReasons: [EventReason.RunNow, EventReason.RunNowDeferred, EventReason.RunNowRefused],
  requestAnnotation: RUN_NOW_REQUEST_ANNOTATION,
  explicit: true,
  movesLastScheduleTime: false,
  takesScheduleSlots: false,
  recorded: (job): RunSubject => runNowSubject(job.metadata?.annotations?.[RUN_NOW_REQUEST_ANNOTATION]),
  jobOf: (cronJobName, e) => (e.request === undefined ? undefined : manualJobName(cronJobName, e.request)),
  validate: ({ annotations }) => {
    const value = annotations[RUN_NOW_ANNOTATION];
    if (typeof value !== "string" || value.trim().length <= MAX_RUN_NOW_REQUEST_LENGTH)
      return { errors: [], warnings: [] };
    const detail = `must be no more than ${MAX_RUN_NOW_REQUEST_LENGTH} characters (any new value requests one run)`;
    return { errors: [invalidField(`metadata.annotations[${RUN_NOW_ANNOTATION}]`, value, detail)], warnings: [] };
  },
  // Who made a new or changed request: the controller names them in its RunNow Event and copies it onto the Job.
  stamp: ({ annotations, oldAnnotations, username }): Record<string, string> => {
    // The request as the controller reads it; a value that is no string (refused by the API server) is none.
    const requestOf = (a: Readonly<Record<string, unknown>> | undefined) => {
      const v = a?.[RUN_NOW_ANNOTATION];
      return typeof v === "string"
        ? runNowRequestOf({ metadata: { annotations: { [RUN_NOW_ANNOTATION]: v } } })
        : undefined;
    };
    const request = requestOf(annotations);
    if (request === undefined || request === requestOf(oldAnnotations)) return {};
    return { [RUN_NOW_REQUESTED_BY_ANNOTATION]: runNowRequestedByValue(username, request) };
  },
};

// --- backfill --------------------------------------------------------------------------------------

/** A backfill request's slot as the record names it. */
export const backfillSubject = (slot: Date | undefined, id: string | undefined): RunSubject => ({
  trigger: RecordTrigger.Backfill,
  reason: RecordReason.BackfillRequested,
  ...(slot ? { scheduledTime: slot } : {}),
  ...(id !== undefined ? { request: id } : {}),
});

/**
 * The backfill row's admission check: the request parses, its range is in the past and holds at most
 * MAX_BACKFILL_SLOTS slots, counted as the controller counts them (`@every` slots from the creation time). An
 * unchanged request (an update of something else) is not checked again: its range only gets older.
 */
function validateBackfill(input: ValidationInput): { errors: FieldError[]; warnings: string[] } {
  const raw = input.annotations[BACKFILL_ANNOTATION];
  const none = { errors: [], warnings: [] };
  if (typeof raw !== "string" || raw === input.oldAnnotations?.[BACKFILL_ANNOTATION]) return none;
  const field = `metadata.annotations[${BACKFILL_ANNOTATION}]`;
  const bf = backfillRequestOf({ metadata: { annotations: { [BACKFILL_ANNOTATION]: raw } } });
  if (!bf) return none;
  if (!bf.ok) return { errors: [invalidField(field, raw, bf.reason)], warnings: [] };
  const { now } = input;
  if (bf.request.to.getTime() > now.getTime()) {
    const detail = `to is in the future (now is ${now.toISOString()}): a backfill runs past slots only`;
    return { errors: [invalidField(field, raw, detail)], warnings: [] };
  }
  if (!input.schedules) return none;
  const created = input.creationTimestamp ? new Date(input.creationTimestamp) : now;
  const slots = input.schedules.backfillSlotCount(bf.request.from, bf.request.to, created);
  if (slots.exact && slots.count <= MAX_BACKFILL_SLOTS) return none;
  const detail = `the range holds ${countText(slots)} slots of the schedule; at most ${MAX_BACKFILL_SLOTS} may be backfilled in one request: split it`;
  return { errors: [invalidField(field, raw, detail)], warnings: [] };
}

export const BACKFILL_ROW: TriggerRow<"backfill"> = {
  name: "backfill",
  recordAs: RecordTrigger.Backfill,
  records: [RecordTrigger.Backfill],
  word: "backfill",
  eventReasons: [
    EventReason.SuccessfulCreate,
    EventReason.BackfillStarted,
    EventReason.BackfillComplete,
    EventReason.BackfillCancelled,
    EventReason.BackfillRefused,
  ],
  requestAnnotation: BACKFILL_REQUEST_ANNOTATION,
  explicit: true,
  movesLastScheduleTime: false,
  takesScheduleSlots: true,
  slotRank: 1,
  recorded: (job): RunSubject =>
    backfillSubject(scheduledTimeOf(job), job.metadata?.annotations?.[BACKFILL_REQUEST_ANNOTATION]),
  jobOf: slotJobOf,
  validate: validateBackfill,
};

// --- retry ----------------------------------------------------------------------------------------

/** A retry's entry: which attempt, after which Job failed (how it failed is that Job's entry's outcome). */
const retriedText = (k: number, n: number, failed: string) => `${attemptText(k, n)}: Job ${failed} failed`;

/** Attempt k of n of a slot, after the Job `after` failed, as the record names it. */
export const retrySubject = (slot: Date | undefined, k: number, n: number, after: string): RunSubject => ({
  trigger: RecordTrigger.Retry,
  reason: RecordReason.RetryAfterFailure,
  ...(slot ? { scheduledTime: slot } : {}),
  request: retryAttemptValue(k, n),
  message: retriedText(k, n, after),
  attempt: { number: k, of: n, after },
});

/** A retry Job of ours: named from its slot's first Job and its attempt. */
export function isRetryJob(cronJobName: string, job: Readonly<Job>): boolean {
  const a = retryAttemptOf(job);
  return !!a && job.metadata?.name === retryJobName(cronJobName, a.of, a.k);
}

/**
 * Whether attempt k + 1 of a slot is still owed by spec.retry after attempt k (0: the first Job) failed: attempts are
 * left, and with Forbid or Replace no newer slot's run started (lastScheduleTime past the slot; `newer`: it, and the
 * attempt is not run). Undefined: no attempt is owed.
 */
export function nextAttemptOwed(
  spec: { retry?: unknown; concurrencyPolicy?: unknown } | undefined,
  slot: Date | undefined,
  k: number,
  lastScheduleTime: string | undefined,
): { k: number; limit: number; newer?: Date } | undefined {
  const policy = retryOf(spec);
  if (!policy || k >= policy.limit) return undefined;
  const exclusive = spec?.concurrencyPolicy === "Forbid" || spec?.concurrencyPolicy === "Replace";
  const last = lastScheduleTime ? new Date(lastScheduleTime) : undefined;
  const owed = { k: k + 1, limit: policy.limit };
  return exclusive && slot && last && last > slot ? { ...owed, newer: last } : owed;
}

/**
 * Whether a failed Job is not its slot's last attempt (spec.retry): a newer attempt of the slot exists, or one is
 * still owed and not superseded (nextAttemptOwed). A slot's failure counts once, after its last attempt.
 */
export function retriedLater(job: Readonly<Job>, o: RunsAgainInput): boolean {
  const attempt = retryAttemptOf(job);
  if (!attempt && !retriable(job)) return false;
  const k = attempt?.k ?? 0;
  const first = attempt?.of ?? job.metadata?.name;
  if (o.jobs.some((j) => retryAttemptOf(j)?.of === first && retryAttemptOf(j)!.k > k)) return true;
  const owed = nextAttemptOwed(
    o.spec as { retry?: unknown; concurrencyPolicy?: unknown } | undefined,
    scheduledTimeOf(job),
    k,
    o.lastScheduleTime,
  );
  return !!owed && !owed.newer;
}

/**
 * The retry row's admission check: with Forbid or Replace a retry does not run once the next slot's run has started,
 * so a delay that cannot fit before the next slot is said at once (a warning: the schedule may be irregular).
 */
function validateRetry(input: ValidationInput): { errors: FieldError[]; warnings: string[] } {
  const policy = retryOf(input.spec);
  const concurrency = input.spec.concurrencyPolicy;
  if (!policy || !input.schedules || (concurrency !== "Forbid" && concurrency !== "Replace"))
    return { errors: [], warnings: [] };
  const { schedule } = input.schedules;
  const first = schedule.next(input.now, input.now);
  const gap = (schedule.next(first, input.now).getTime() - first.getTime()) / 1000;
  if (!(policy.delaySeconds >= gap)) return { errors: [], warnings: [] };
  return {
    errors: [],
    warnings: [
      `spec.retry.delaySeconds: ${policy.delaySeconds} is not less than the ${gap} s between scheduled times: with concurrencyPolicy ${String(concurrency)} a retry is skipped once the next scheduled run has started (the record says so)`,
    ],
  };
}

export const RETRY_ROW: TriggerRow<"retry"> = {
  name: "retry",
  recordAs: RecordTrigger.Retry,
  records: [RecordTrigger.Retry],
  word: "retry",
  eventReasons: [EventReason.RetryCreated, EventReason.JobAlreadyActive],
  requestAnnotation: RETRY_OF_ANNOTATION,
  // A retry is the schedule's, not an explicit request: suspended or stopped, nothing is retried.
  explicit: false,
  movesLastScheduleTime: false,
  takesScheduleSlots: false,
  recorded: (job) => {
    const a = retryAttemptOf(job);
    if (!a) return { trigger: RecordTrigger.Retry, reason: RecordReason.RetryAfterFailure, ...slotOf(job) };
    // The attempt before it: the first Job, or the retry named from it (the Job is labelled with its CronJob).
    const cronJob = job.metadata?.labels?.[CRONJOB_NAME_LABEL] ?? "";
    return retrySubject(scheduledTimeOf(job), a.k, a.n, a.k === 1 ? a.of : retryJobName(cronJob, a.of, a.k - 1));
  },
  // Named from the slot's first Job and the attempt.
  jobOf: (cronJobName, e) => {
    const first = slotJobOf(cronJobName, e);
    const attempt = parseRetryAttempt(e.request);
    return first && attempt ? retryJobName(cronJobName, first, attempt.k) : undefined;
  },
  validate: validateRetry,
  runIndex: (e) => e.attempt?.number ?? parseRetryAttempt(e.request)?.k ?? 0,
  runOfJob: (job) => {
    const a = retryAttemptOf(job);
    return a ? { order: a.k, which: retryAttemptValue(a.k, a.n), first: a.of } : undefined;
  },
  runsAgain: (job, o) => retriedLater(job, o),
  // The attempts waiting; none when spec.retry is unset: the operator retries none.
  pending: <E extends AttemptEntryInput>(cronJob: PendingInput<E>) =>
    !retryOf(cronJob.spec)
      ? []
      : (cronJob.status?.recentRuns ?? [])
          .filter((e) => e.decision === RecordDecision.Held)
          .map((e) => attemptEntryOf(e))
          .filter((r): r is AttemptEntry<E> => r !== undefined)
          .map((a): PendingEntry<E> => ({
            entry: a.entry,
            slot: a.slot,
            what: attemptText(a.k, a.n),
            order: a.k,
            ...(a.startsAt ? { startsAt: a.startsAt } : {}),
            ...(a.failedJob ? { failedJob: a.failedJob } : {}),
            ...(a.failure ? { failure: a.failure } : {}),
            attempt: { number: a.k, of: a.n },
          })),
};

/** "attempt 2 of 3": how the record, the Events and the plugin say an attempt. */
export const attemptText = (k: number, n: number) => `attempt ${k} of ${n}`;

const timeOf = (s: string | undefined) => (s === undefined || Number.isNaN(Date.parse(s)) ? undefined : new Date(s));

/**
 * A record entry about a retry (trigger Retry, a slot), read from its fields: the attempt (`attempt`, or an earlier
 * version's request "k/N"), when it starts (`startsAt`), the newer run that superseded it (`supersededBy`).
 * Undefined: it is none. Its message is for people and never read.
 */
export function attemptEntryOf<E extends AttemptEntryInput>(e: E): AttemptEntry<E> | undefined {
  if (e.trigger !== RecordTrigger.Retry || !e.scheduledTime) return undefined;
  const attempt = e.attempt ? { k: e.attempt.number, n: e.attempt.of } : parseRetryAttempt(e.request);
  if (!attempt) return undefined;
  const startsAt = timeOf(e.startsAt);
  const newerRun = timeOf(e.supersededBy);
  return {
    entry: e,
    slot: new Date(e.scheduledTime),
    k: attempt.k,
    n: attempt.n,
    ...(startsAt ? { startsAt } : {}),
    ...(e.attempt?.after ? { failedJob: e.attempt.after } : {}),
    ...(e.attempt?.failure ? { failure: e.attempt.failure } : {}),
    ...(newerRun ? { newerRun } : {}),
  };
}

function slotOf(job: Readonly<Job>): { scheduledTime?: Date } {
  const slot = scheduledTimeOf(job);
  return slot ? { scheduledTime: slot } : {};
}

// --- after ----------------------------------------------------------------------------------------

/** A run after an upstream's run, as the record names it: its end is the run's slot, its Job the request. */
export const afterSubject = (ended: Date | undefined, request: string | undefined): RunSubject => ({
  trigger: RecordTrigger.After,
  reason: RecordReason.UpstreamEnded,
  ...(ended ? { scheduledTime: ended } : {}),
  ...(request !== undefined ? { request } : {}),
});

export const AFTER_ROW: TriggerRow<"after"> = {
  name: "after",
  recordAs: RecordTrigger.After,
  records: [RecordTrigger.After],
  word: "after",
  eventReasons: [EventReason.SuccessfulCreate, EventReason.JobAlreadyActive],
  requestAnnotation: AFTER_ANNOTATION,
  // The schedule's kind of run, not an explicit request: suspended, stopped or ended, nothing runs after an upstream.
  explicit: false,
  movesLastScheduleTime: false,
  takesScheduleSlots: false,
  slotRank: 2,
  recorded: (job) => afterSubject(scheduledTimeOf(job), job.metadata?.annotations?.[AFTER_ANNOTATION]),
  jobOf: (cronJobName, e) => {
    const joined = parseJoinRequest(e.request);
    if (joined) return joinJobName(cronJobName, joined);
    const up = parseAfterRequest(e.request);
    return up ? afterJobName(cronJobName, up.cronJob, up.job) : undefined;
  },
  validate: (input) => ({
    errors: [...validateUpstreams(String(input.name ?? ""), input.spec), ...validateAfterPolicy(input.spec)],
    warnings: [],
  }),
  // The runs after an upstream's run the record says wait (Held: behind a running Job, for a place in its group),
  // "slot" the upstream run's end: `kubectl cron next` and the dashboard show them.
  pending: <E extends AttemptEntryInput>(cronJob: PendingInput<E>) =>
    (cronJob.status?.recentRuns ?? [])
      .filter((e) => e.trigger === RecordTrigger.After && e.decision === RecordDecision.Held && e.scheduledTime)
      .map((e): PendingEntry<E> => ({
        entry: e,
        slot: new Date(e.scheduledTime!),
        what: `run after ${afterWords(e.request)}`,
        order: 0,
      })),
};

/** The upstream run (or, for a join, every upstream's run) an after request names, as people read it. */
function afterWords(request: string | undefined): string {
  const joined = parseJoinRequest(request);
  return joined ? `all of ${joined.map((r) => `${r.upstream}/${r.job}`).join(", ")}` : (request ?? "");
}

/** The product's triggers' rows, in the order a pass runs them. */
export const TRIGGER_ROWS: readonly TriggerRow[] = [SCHEDULE_ROW, RUN_NOW_ROW, BACKFILL_ROW, RETRY_ROW, AFTER_ROW];

/**
 * The rows' causes of `kubectl cron why`, by row name (a row with none has no entry), each written in its row's spec
 * module with its other words: the plugin's one table of causes (cmd/kubectl-cron/answer/causes.ts CAUSES) takes them
 * all from here, so a row's causes are said, and documented, without an edit there. Beside the rows rather than in
 * them: the plugin types its verdicts by each cause's id and facts, which a row's type does not keep.
 */
export const TRIGGER_CAUSES = {
  runNow: RUN_NOW_CAUSES,
  retry: RETRY_CAUSES,
  after: AFTER_CAUSES,
} as const satisfies Readonly<Record<string, readonly WhyCause[]>>;

/** The name of the Job that runs a record entry's run, by its trigger's row; undefined when the entry does not say. */
export function runJobName(
  cronJobName: string,
  e: Readonly<Pick<RecentRunWire, "trigger" | "scheduledTime" | "request">>,
  rows: readonly TriggerRow[] = TRIGGER_ROWS,
): string | undefined {
  return rowOfEntry(rows, e)?.jobOf(cronJobName, e);
}

/** A run the record says waits, with the word of the row it is of (how `next` and the dashboard name it). */
export type PendingRun<E> = PendingEntry<E> & { word: string };

/** The runs the record says wait, of every row, oldest slot first. */
export function pendingRuns<E extends AttemptEntryInput>(
  cronJob: PendingInput<E>,
  rows: readonly TriggerRow[] = TRIGGER_ROWS,
): PendingRun<E>[] {
  return rows
    .flatMap((r) => (r.pending?.(cronJob) ?? []).map((p) => ({ ...p, word: r.word })))
    .sort((a, b) => a.slot.getTime() - b.slot.getTime() || a.order - b.order);
}

/** Which run of its slot a record entry is about, by its row (0: the slot's own). */
export function runIndexOf(
  e: Readonly<Pick<RecentRunWire, "trigger" | "request" | "attempt">>,
  rows: readonly TriggerRow[] = TRIGGER_ROWS,
): number {
  return rowOfEntry(rows, e)?.runIndex?.(e) ?? 0;
}

/** Whether some row will run a failed Job's run again (its failure is not counted towards a stop). */
export function runAgain(
  job: Readonly<Job>,
  o: RunsAgainInput,
  rows: readonly Pick<TriggerRow, "runsAgain">[] = TRIGGER_ROWS,
): boolean {
  return rows.some((r) => r.runsAgain?.(job, o) ?? false);
}

/** The annotations the mutating webhook adds for every row's request (run-now: who asked). */
export function stampsOf(input: StampInput, rows: readonly TriggerRow[] = TRIGGER_ROWS): Record<string, string> {
  return Object.assign({}, ...rows.map((r) => r.stamp?.(input) ?? {})) as Record<string, string>;
}

/** Whether a record entry is an explicit request's (run-now, backfill): it runs while scheduling is suspended. */
export function isExplicit(
  e: Readonly<Pick<RecentRunWire, "trigger">>,
  rows: readonly TriggerRow[] = TRIGGER_ROWS,
): boolean {
  return rowOfEntry(rows, e)?.explicit ?? false;
}
