// The words the operator writes for users to read, declared once (as k8s.io/api declares a Job's
// JobReasonBackoffLimitExceeded): the record's (status.recentRuns: an entry's trigger, decision, reason and outcome)
// and the reasons of the controller's Events. The controller writes them, the API schema's enums and descriptions
// (the CRD, docs/reference/api.md) are built from them, and `kubectl cron why` reads them, with their descriptions.
// Each table maps a word to what it means; `Words` turns a table into its constants (`RecordDecision.Held` is
// "Held"), so no part spells a word out.

/** A table's constants: each word is its own value, with the table's doc comment. */
export type Words<T> = { readonly [K in keyof T]: K };

function wordsOf<T extends Record<string, unknown>>(table: T): Words<T> {
  return Object.freeze(Object.fromEntries(Object.keys(table).map((k) => [k, k]))) as Words<T>;
}

/** A word's meaning, in the words users read (the API reference, `kubectl cron why`). */
interface Meaning {
  readonly description: string;
  /**
   * A record decision its Job tells by itself (its name, slot, creation and conditions): a status write that only
   * adds or completes such an entry may be folded into a later one (controllers/statusfold.ts).
   */
  readonly toldByItsJob?: boolean;
}

/** "Word (its description), Word (…)": a table as the API reference lists it. */
export function listed(
  table: Readonly<Record<string, Meaning>>,
  words: readonly string[] = Object.keys(table),
): string {
  return words.map((w) => `${w} (${table[w]!.description})`).join(", ");
}

// --- the record: status.recentRuns ------------------------------------------------------------------

/** An entry's `trigger`: what asked for the run. */
export const RECORD_TRIGGERS = {
  /** A slot of the schedule, decided when it came. */
  Schedule: { description: "a slot, when it came" },
  /**
   * Written by versions before issue 46 for an older missed slot run by missedRunPolicy RunAll; now such a run is
   * trigger Schedule with reason MissedRunPolicyRunAll. Kept so stored records stay valid.
   */
  CatchUp: { description: "older records: a missed slot run by RunAll (now Schedule, MissedRunPolicyRunAll)" },
  /** A run-now request (the run-now annotation, `kubectl cron run`). */
  RunNow: { description: "a run-now request" },
  /** A slot of a backfill request (`kubectl cron backfill`). */
  Backfill: { description: "a slot of a backfill request" },
  /** A new run for a slot whose run failed (spec.retry). */
  Retry: { description: "a new run for a slot whose run failed (spec.retry)" },
  /** A run of an upstream CronJob ended as spec.after asks (the request names it, the scheduledTime is its end). */
  After: { description: "a run of a CronJob spec.after names ended" },
} as const satisfies Record<string, Meaning>;
export const RecordTrigger = wordsOf(RECORD_TRIGGERS);
export type RecordTrigger = keyof typeof RECORD_TRIGGERS;

/** An entry's `decision`: what the operator decided about the slot or request. */
export const RECORD_DECISIONS = {
  /** Its Job was created. */
  Created: { description: "its Job was created", toldByItsJob: true },
  /** Its Job already existed, created by this operator (before a restart, or a lost status write). */
  Adopted: { description: "its Job existed (created before a restart)", toldByItsJob: true },
  /** Not started: the starting deadline had passed when the operator reached the slot. */
  Missed: { description: "not started: past startingDeadlineSeconds" },
  /** Not run: the missed-run policy runs other slots (the reason says which rule). */
  Skipped: { description: "not run by missedRunPolicy" },
  /**
   * Not started (yet): the concurrency policy and a running Job, its concurrency group (reason, blockedBy), a
   * calendar that cannot be read, or a retry's delay.
   */
  Held: { description: "not started (yet), see reason" },
  /** The API server refused to create its Job (the reason and message are the API server's). */
  Refused: { description: "the API server refused to create its Job, see reason and message" },
  /** Scheduling stopped: after failed runs in a row, or ended by spec.maxRuns or spec.endTime (the reason says which). */
  Stopped: { description: "scheduling stopped, see reason" },
} as const satisfies Record<string, Meaning>;
export const RecordDecision = wordsOf(RECORD_DECISIONS);
export type RecordDecision = keyof typeof RECORD_DECISIONS;

/**
 * An entry's `reason`, when the operator gives it (a Refused entry's is the API server's: an open set, so the field
 * stays a string). By decision: Created and Adopted, the trigger's reason (a missed slot RunAll runs:
 * MissedRunPolicyRunAll); Missed, StartingDeadlineExceeded; Skipped, one of SKIPPED_REASONS, ExcludedByCalendar or
 * RetrySuperseded; Held, ConcurrencyPolicyForbid, one of HELD_BY_GROUP_REASONS, CalendarNotFound or RetryDelay;
 * Stopped, StoppedAfterFailures, MaxRunsReached or EndTimeReached.
 */
export const RECORD_REASONS = {
  /** Created or Adopted for a slot of the schedule (trigger Schedule). */
  Scheduled: { description: "its slot came" },
  /**
   * Created or Adopted for an older missed slot that missedRunPolicy RunAll runs (trigger Schedule; versions before
   * issue 46 wrote trigger CatchUp).
   */
  MissedRunPolicyRunAll: { description: "missedRunPolicy RunAll runs a missed slot" },
  /** Created or Adopted for a run-now request (trigger RunNow). */
  RunNowRequested: { description: "a run-now request" },
  /** Created or Adopted for a slot of a backfill request (trigger Backfill). */
  BackfillRequested: { description: "a backfill request" },
  /** Missed: the slot's startingDeadlineSeconds had passed when the operator reached it. */
  StartingDeadlineExceeded: { description: "startingDeadlineSeconds had passed" },
  /** Created or Adopted for a new run of a slot whose run failed (trigger Retry; request: attempt/limit). */
  RetryAfterFailure: { description: "the slot's run failed and spec.retry runs it again" },
  /** Held: a retry waits for spec.retry.delaySeconds after the failed run (startsAt says when). */
  RetryDelay: { description: "a retry waits for its delay" },
  /** Skipped: a retry not run, as a newer slot's run started (concurrencyPolicy Forbid or Replace). */
  RetrySuperseded: { description: "a newer slot ran first" },
  /** Skipped: a slot inside an exclusion window (the message names the calendar or spec.exclusions, and the window). */
  ExcludedByCalendar: { description: "an exclusion window holds the slot" },
  /** Held: spec.exclusions.calendars names an ExclusionCalendar that does not exist or does not parse. */
  CalendarNotFound: { description: "a calendar named cannot be read" },
  /** Skipped: missedRunPolicy Skip runs only the slot announced in nextScheduleTime. */
  MissedRunPolicySkip: { description: "missedRunPolicy Skip runs only the announced time, not a missed one" },
  /** Skipped: missedRunPolicy RunAll runs at most the newest missed slots (its cap). */
  RunAllLimit: { description: "missedRunPolicy RunAll runs only the newest missed times, up to its limit" },
  /** Skipped: missedRunPolicy RunAll with concurrencyPolicy Replace runs only the newest slot. */
  RunAllReplace: {
    description: "missedRunPolicy RunAll with concurrencyPolicy Replace runs only the newest missed time",
  },
  /** Held: concurrencyPolicy Forbid and a running Job. */
  ConcurrencyPolicyForbid: { description: "concurrencyPolicy Forbid and a running Job" },
  /** Held: the CronJob's concurrency group runs as many Jobs as its limit (blockedBy: one of them). */
  ConcurrencyGroupFull: { description: "its group is full" },
  /** Held: an older slot of another CronJob of the group waits for the next free place. */
  ConcurrencyGroupQueue: { description: "older runs of its group wait first" },
  /** Held: spec.concurrencyGroup names a ConcurrencyGroup that does not exist in the CronJob's namespace. */
  ConcurrencyGroupNotFound: { description: "no such group in its namespace" },
  /** Stopped: spec.stopAfterConsecutiveFailures failed runs in a row. */
  StoppedAfterFailures: { description: "too many failed runs in a row" },
  /** Created or Adopted after an upstream's run ended (trigger After; request: `<upstream>/<its Job>`). */
  UpstreamEnded: { description: "a run of a CronJob spec.after names ended" },
  /** Skipped: missedRunPolicy RunLatest runs only the newest of the upstream's runs that ended unanswered. */
  UpstreamNewerRun: { description: "missedRunPolicy RunLatest runs after the upstream's newest run only" },
  /** Stopped: status.scheduledRuns reached spec.maxRuns. */
  MaxRunsReached: { description: "spec.maxRuns scheduled runs were made" },
  /** Stopped: spec.endTime passed and no slot is left to run. */
  EndTimeReached: { description: "spec.endTime passed" },
} as const satisfies Record<string, Meaning>;
export const RecordReason = wordsOf(RECORD_REASONS);
export type RecordReason = keyof typeof RECORD_REASONS;

/** The reasons of a Skipped entry: the missed-run policy's rule that did not run the slot. */
export const SKIPPED_REASONS = [
  RecordReason.MissedRunPolicySkip,
  RecordReason.RunAllLimit,
  RecordReason.RunAllReplace,
  RecordReason.UpstreamNewerRun,
] as const satisfies readonly RecordReason[];

/**
 * The reasons of a Held entry that waits for its delay alone (`kubectl cron next` and `why` say when it starts, not
 * what holds it): a trigger whose runs wait a delay adds its reason here.
 */
export const DELAY_REASONS = [RecordReason.RetryDelay] as const satisfies readonly RecordReason[];

/** The reasons of a Held entry its concurrency group decided (spec.concurrencyGroup). */
export const HELD_BY_GROUP_REASONS = [
  RecordReason.ConcurrencyGroupFull,
  RecordReason.ConcurrencyGroupQueue,
  RecordReason.ConcurrencyGroupNotFound,
] as const satisfies readonly RecordReason[];

/**
 * A Refused entry's reason the operator gives itself (otherwise the API server's StatusReason: Forbidden,
 * Invalid, ...). AlreadyExists: the Job's name (the slot's or request's lock) is held by a Job this CronJob does not
 * control.
 */
export const RefusedReason = {
  /** The Job's name is taken by a Job that is not this CronJob's. */
  AlreadyExists: "AlreadyExists",
} as const;

/** An entry's `outcome.result`: how its Job ended. */
export const OUTCOME_RESULTS = {
  /** The Job completed. */
  Complete: { description: "the Job completed" },
  /** The Job failed (its Failed condition's reason and message go with it). */
  Failed: { description: "the Job failed, see reason and message" },
} as const satisfies Record<string, Meaning>;
export const OutcomeResult = wordsOf(OUTCOME_RESULTS);
export type OutcomeResult = keyof typeof OUTCOME_RESULTS;

/**
 * An outcome's reason the operator gives itself (otherwise the Job's Failed condition's: BackoffLimitExceeded,
 * DeadlineExceeded, ...): the run the operator ended, and why (its message says what the Pods showed).
 */
export const ENDED_REASONS = {
  /** Its Pods did not start within spec.startTimeoutSeconds: the operator ended the run. */
  StartTimeout: { description: "its Pods did not start within spec.startTimeoutSeconds: the operator ended it" },
} as const satisfies Record<string, Meaning>;
export const EndedReason = wordsOf(ENDED_REASONS);

/**
 * What the Pods of a run the operator ended (StartTimeout) showed, as a code: set by the controller from the Pods'
 * status when it ends the run (the Job's ENDED_PODS_ANNOTATION, the outcome's `pods`), so a reader never takes it
 * out of the message.
 */
export const PODS_SHOWED = {
  /** No Pod was created (a ResourceQuota, a LimitRange or an admission webhook refused them). */
  NoPod: { description: "no Pod was created" },
  /** A container's image could not be pulled (ErrImagePull, ImagePullBackOff, InvalidImageName, ErrImageNeverPull). */
  ImagePull: { description: "an image could not be pulled" },
  /** The scheduler found no node for a Pod (PodScheduled False). */
  Unschedulable: { description: "no node fits a Pod" },
  /** A container waited for another reason (CreateContainerConfigError, ...). */
  Waiting: { description: "a container waits for another reason" },
  /** The Pods were pending with nothing more to say. */
  Pending: { description: "the Pods were pending" },
} as const satisfies Record<string, Meaning>;
export const PodsShowed = wordsOf(PODS_SHOWED);
export type PodsShowed = keyof typeof PODS_SHOWED;

/** Why the operator holds a slot for a calendar (reason CalendarNotFound): the entry's `exclusion.problem`. */
export const CALENDAR_PROBLEMS = {
  /** spec.exclusions.calendars names an ExclusionCalendar the namespace does not have. */
  NotFound: { description: "the calendar does not exist" },
  /** Its windows (or the CronJob's own spec.exclusions.windows, or a calendar name) do not parse. */
  Invalid: { description: "the windows do not parse" },
} as const satisfies Record<string, Meaning>;
export const CalendarProblem = wordsOf(CALENDAR_PROBLEMS);
export type CalendarProblem = keyof typeof CALENDAR_PROBLEMS;

// --- the controller's Events --------------------------------------------------------------------------

/** An Event's type (core/v1). */
type EventType = "Normal" | "Warning";

/**
 * The reasons of the Events the CronJob controller emits, each with its type (docs/using-cronjobs.md lists them).
 * `routine`: an Event of every run that reports nothing wrong and whose fact the record (`status.recentRuns`) or
 * the history limits already keep. The recorder writes a CronJob's routine Events three at once, then one every 5
 * minutes (EventOptions.routine, the built-in's spam rate), so a fleet of every-minute CronJobs does not pay three
 * Event writes per run for what the record holds; an hourly CronJob keeps every one.
 */
export const EVENT_REASONS = {
  /** A Job was created for a slot (of the schedule or of a backfill request). */
  SuccessfulCreate: { type: "Normal", routine: true, description: "a Job was created" },
  /** The API server refused a Job create. */
  FailedCreate: { type: "Warning", description: "the API server refused to create a Job" },
  /** The API server warned about a Job it created, or dropped fields of the template its Job API lacks. */
  JobWarning: { type: "Warning", description: "the API server's warnings about a Job it created" },
  /** A Job was deleted (history cleanup, concurrencyPolicy Replace). */
  SuccessfulDelete: { type: "Normal", routine: true, description: "a Job was deleted (history cleanup, Replace)" },
  /** A Job delete failed. */
  FailedDelete: { type: "Warning", description: "a Job could not be deleted" },
  /** A Job of this CronJob ended. */
  SawCompletedJob: { type: "Normal", routine: true, description: "a Job ended" },
  /** A Job status listed as active is gone. */
  MissingJob: { type: "Normal", description: "an active Job went missing" },
  /** A running Job of this CronJob that the operator did not create (or forgot). */
  UnexpectedJob: { type: "Warning", description: "a running Job the operator did not create" },
  /** A slot held back by concurrencyPolicy Forbid (once per slot). */
  JobAlreadyActive: { type: "Normal", description: "a slot waits: concurrencyPolicy Forbid and a running Job" },
  /** A slot not run: its starting deadline passed, or the missed-run policy does not run it. */
  MissSchedule: { type: "Warning", description: "a slot was missed" },
  /** More missed slots than the operator counts (the controller runs the newest). */
  TooManyMissedTimes: { type: "Warning", description: "too many missed slots to count" },
  /** spec.timeZone is not a known time zone. */
  UnknownTimeZone: { type: "Warning", description: "an unknown time zone" },
  /** The schedule does not parse. */
  UnparseableSchedule: { type: "Warning", description: "a schedule that does not parse" },
  /** A Job was created for a run-now request. */
  RunNow: { type: "Normal", description: "a Job was created for a run-now request" },
  /** A run-now request waits for a running Job (concurrencyPolicy Forbid). */
  RunNowDeferred: { type: "Normal", description: "a run-now request waits for a running Job" },
  /** A run-now request was refused (its value is too long). */
  RunNowRefused: { type: "Warning", description: "a run-now request was refused" },
  /** A run waits for a place in its concurrency group (once per run). */
  ConcurrencyGroupFull: { type: "Normal", description: "a run waits: its concurrency group is at its limit" },
  /** spec.concurrencyGroup names a group that does not exist: runs wait. */
  ConcurrencyGroupNotFound: { type: "Warning", description: "the concurrency group named does not exist" },
  /** A run's Pods did not start within spec.startTimeoutSeconds: the operator ended it. */
  StartTimeout: { type: "Warning", description: "a run was ended: its Pods did not start in time" },
  /** A Job was created to run a slot again after its run failed (spec.retry). */
  RetryCreated: { type: "Normal", description: "a Job was created to retry a failed slot" },
  /** spec.exclusions.calendars names a calendar that does not exist or does not parse: slots wait. */
  CalendarNotFound: { type: "Warning", description: "an exclusion calendar named cannot be read" },
  /** Scheduling stopped after spec.stopAfterConsecutiveFailures failed runs in a row. */
  StoppedAfterFailures: { type: "Warning", description: "scheduling stopped after failed runs in a row" },
  /** Scheduling ended: spec.maxRuns runs were made, or spec.endTime passed (once per end). */
  ScheduleEnded: { type: "Normal", description: "scheduling ended (spec.maxRuns, spec.endTime)" },
  /** Scheduling resumed after a stop (a resume request, or a changed spec). */
  Resumed: { type: "Normal", description: "scheduling resumed" },
  /** A backfill request started. */
  BackfillStarted: { type: "Normal", description: "a backfill request started" },
  /** A backfill request ran every slot of its range. */
  BackfillComplete: { type: "Normal", description: "a backfill request completed" },
  /** A backfill request was cancelled (its annotation removed or replaced). */
  BackfillCancelled: { type: "Normal", description: "a backfill request was cancelled" },
  /** A backfill request was refused (a range too large, a value that does not parse). */
  BackfillRefused: { type: "Warning", description: "a backfill request was refused" },
} as const satisfies Record<string, Meaning & { type: EventType; routine?: true }>;
export const EventReason = wordsOf(EVENT_REASONS);
export type EventReason = keyof typeof EVENT_REASONS;
