// The triggers' table, the controller's half: each row spreads its trigger's row of api/v1/triggers.ts (its words,
// annotations, admission check, how the record names its Jobs: what every reader needs) and adds what only a pass
// does — which requests the trigger has this pass (its source), the Job a request creates, whether it already ran,
// its books (which status fields count its runs, which Jobs are its own), and the Event and count a create makes.
// The run path (controllers/runpath.ts), the books (observe.ts, books.ts) and admission (runs.ts)
// read the row and never switch on a trigger, so a new trigger is a row there and here, not an edit elsewhere. Pure.
import {
  AFTER_ANNOTATION,
  AFTER_ROW,
  afterJobName,
  afterRequest,
  afterSubject,
  endedRuns,
  parseAfterRequest,
  backfillRequestOf,
  BACKFILL_ROW,
  backfillSubject,
  classifyJob,
  type CronJobWire,
  type CronJobWireStatus,
  DEFAULT_MAX_CATCH_UP_RUNS,
  ENDED_REASON_ANNOTATION,
  EventReason,
  finishedAt,
  holdsSlotName,
  isRetryJob,
  type Job,
  jobForBackfill,
  jobForRunNow,
  jobForSlot,
  jobNameFor,
  type JobSource,
  manualJobName,
  MAX_BACKFILL_SLOTS,
  MAX_CATCH_UP_SLOTS,
  MAX_RUN_NOW_REQUEST_LENGTH,
  nextAttemptOwed,
  RecordDecision,
  RecordReason,
  RecordTrigger,
  requestIdOf,
  retriable,
  RETRY_ATTEMPT_ANNOTATION,
  RETRY_OF_ANNOTATION,
  RETRY_ROW,
  retryAttemptOf,
  retryAttemptValue,
  retryJobName,
  jitterOffsetSeconds,
  jitterSecondsOf,
  maxRunsOf,
  retryOf,
  retrySubject,
  runsLeft,
  rowOfJob,
  RUN_NOW_ROW,
  runFactsOf,
  runNowRequesterOf,
  runNowRequestOf,
  runNowSubject,
  SCHEDULE_ROW,
  scheduledTimeOf,
  type ScheduleSource,
  slotSubject,
  type TriggerRow,
  withJitterOffset,
  withRetryMark,
  withRunFacts,
  withScheduleSources,
  type CronJobSchedules,
} from "../api/v1/index.ts";
import { slotsInRange } from "../api/v1/schedule/index.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import { digest } from "../runtime/objects.ts";
import { backfillDecision } from "./backfill.ts";
import type { EventDecision } from "./events.ts";
import type { RunOutcome } from "./metrics.ts";
import type { RunSubject, TimedDecision } from "./record.ts";
import type { UpstreamsRead } from "./after.ts";

/** The CronJob as the rows read it. */
export type CronJobView = Pick<CronJobWire, "metadata" | "status">;

/**
 * An Event that describes a state: it comes once per (topic, key), not on every pass while the state holds, and
 * so does its count.
 */
export interface StateEvent extends EventDecision {
  once: { topic: string; key: string };
  count?: RunOutcome;
}

/** What a trigger's source sees of the pass (steps 6–7 decided it). */
export interface SourceInput {
  readonly cronJob: Readonly<CronJobWire> & { readonly spec: Readonly<CronJobWire["spec"]> };
  /** The pass's status so far. */
  readonly status: Readonly<CronJobWireStatus>;
  /**
   * The CronJob's schedules, skipping the slots spec.exclusions holds; undefined when they do not parse (the guards
   * report it). `written`: the same without exclusions (what a backfill asked to include excluded slots runs).
   */
  readonly schedules: CronJobSchedules | undefined;
  readonly written: CronJobSchedules | undefined;
  /** The schedule's due slots this pass (step 7), oldest first; none while not scheduling. */
  readonly due: readonly Date[];
  /** What `@every` counted from when step 7 found them. */
  readonly anchor: Date | undefined;
  /** Truncated to the second. */
  readonly now: Date;
  /** Every Job of the CronJob known this pass. */
  readonly jobs: readonly Readonly<Job>[];
  /** spec.after's upstreams and their Jobs (controllers/after.ts); none without spec.after. */
  readonly upstreams?: UpstreamsRead | undefined;
  /** The clock's time, not truncated: startingDeadlineSeconds is counted to the millisecond. */
  readonly clockNow?: Date;
}

/** What a trigger asks of this pass. */
interface Plan<R> {
  /** Its requests, oldest first: the run path stops at the first one that cannot run now. */
  readonly requests: Iterable<R>;
  /** At most this many may start this pass; when more are left the pass is requeued at once. */
  readonly max?: number;
  /** Decided before any run (a backfill request started, refused or cancelled): the status, and its Events. */
  readonly status?: CronJobWireStatus;
  /**
   * Decided before any run, for the record (a retry held for its delay, or superseded): the run path writes them
   * through the one record writer, in this order.
   */
  readonly decisions?: readonly TimedDecision[];
  readonly events?: readonly (EventDecision | StateEvent)[];
  /** A request that is not due yet is, then: the pass is requeued for it. */
  readonly wakeAt?: Date;
  /** After the walk; `complete`: every request was handled. */
  finish?(
    status: Readonly<CronJobWireStatus>,
    complete: boolean,
  ): { status: CronJobWireStatus; events: EventDecision[] };
}

/**
 * What happened to one request: its Job created, an existing one of ours adopted, its run found already done
 * (`ran`: status books it, or a Job holds its name), or a foreign Job holding the name (`conflict`). `job`: the
 * Job that holds the name, when known.
 */
interface Handled {
  readonly result: "created" | "adopted" | "ran" | "conflict";
  readonly job?: Readonly<Job> | undefined;
}

/** What run() needs to know of the pass to tell whether a request already ran. */
interface RanView {
  readonly cronJobName: string;
  /** Every Job of the CronJob known this pass, by name. */
  readonly jobs: ReadonlyMap<string, Readonly<Job>>;
  readonly status: Readonly<CronJobWireStatus>;
}

/** The row's part for one request (the row applied to it): what the run path asks of it. */
export interface TriggerRun {
  readonly trigger: string;
  readonly row: Trigger;
  /** The Job the request creates (its name is the run's lock). */
  job(cronJob: JobSource): Job;
  /** Whether the request already ran: its run in the books, or a Job holding its name (returned). */
  ran(view: RanView): { ran: false } | { ran: true; job?: Readonly<Job> | undefined };
  /** How many more of the trigger's own Jobs may run now, given every active Job (none: no limit of its own). */
  room?(active: readonly Readonly<Job>[]): number;
  /** What is reported while the concurrency policy holds the request back (`running`: the active Jobs' names). */
  held?(running: string[]): StateEvent;
  /** Books the handled request: the trigger's books after it. */
  book(status: Readonly<CronJobWireStatus>, r: Handled): CronJobWireStatus;
  /**
   * The slot the run was due at, for a trigger that runs slots as they come (the schedule): the creation skew is
   * measured from it, and with Replace it may pass a Job of an older slot that does not move lastScheduleTime
   * (observe.ts mayReplace).
   */
  dueAt?(): Date;
  /** The Event, count and log line of a Job this pass created. */
  created(jobName: string): { event: EventDecision; count: RunOutcome; log: string };
  /** What the record (status.recentRuns) says the request is: its trigger, slot and request id. */
  subject(): RunSubject;
}

/** A trigger: its row (api/v1/triggers.ts), its source and its books. Requests come out of plan() bound to the row. */
export interface Trigger<Name extends string = string> extends TriggerRow<Name> {
  /** With concurrencyPolicy Replace: delete the running Jobs and run, or wait as with Forbid. */
  readonly onReplace: "replace" | "wait";
  /** A foreign Job holding a request's name: stop the walk there (nothing later overtakes it), or go on. */
  readonly onConflict: "stop" | "next";
  /** This pass's requests; undefined: none. */
  plan(input: SourceInput): Plan<TriggerRun> | undefined;
  /**
   * Finished Jobs the row will still need (a failed run a retry may be owed for): history cleanup keeps them, also
   * on a pass that does not run the row (suspended, stopped), so a resume still finds them.
   */
  keeps?(
    cronJob: SourceInput["cronJob"],
    jobs: readonly Readonly<Job>[],
    status: Readonly<CronJobWireStatus> | undefined,
  ): string[];
  /** A Job with the name this trigger gives its run: created by us (maybe before a crash). */
  ours(cronJob: CronJobView, job: Readonly<Job>): boolean;
  /** A Job of ours whose run the stored status has not booked, by this trigger's books. */
  unbooked(cronJob: CronJobView, job: Readonly<Job>): boolean;
  /** The trigger's books brought up to date with the children (step 4); unchanged by default. */
  observe?(
    status: CronJobWireStatus,
    cronJob: CronJobView & { spec?: { maxRuns?: number | undefined } },
    jobs: readonly Readonly<Job>[],
  ): CronJobWireStatus;
}

/** The row that made a Job: the one whose annotation it carries, else the table's default row (the schedule). */
export const triggerOfJob = (triggers: readonly Trigger[], job: Readonly<Job>): Trigger => rowOfJob(triggers, job);

/** A row's part for its own request type R: TriggerRun's functions, with the request as an argument. */
export interface RunParts<R> {
  job(cronJob: JobSource, r: R): Job;
  ran(view: RanView, r: R): { ran: false } | { ran: true; job?: Readonly<Job> | undefined };
  room?(r: R, active: readonly Readonly<Job>[]): number;
  held?(r: R, running: string[]): StateEvent;
  book(status: Readonly<CronJobWireStatus>, r: R, rec: Handled): CronJobWireStatus;
  dueAt?(r: R): Date;
  created(r: R, jobName: string): { event: EventDecision; count: RunOutcome; log: string };
  subject(r: R): RunSubject;
}

/** A request bound to its row's part: what a source hands the run path. */
export function bindRun<R>(row: Trigger, r: R, parts: RunParts<R>): TriggerRun {
  const { room, held, dueAt } = parts;
  return {
    trigger: row.name,
    row,
    job: (cronJob) => parts.job(cronJob, r),
    ran: (view) => parts.ran(view, r),
    ...(room ? { room: (active: readonly Readonly<Job>[]) => room(r, active) } : {}),
    ...(held ? { held: (running: string[]) => held(r, running) } : {}),
    book: (status, rec) => parts.book(status, r, rec),
    ...(dueAt ? { dueAt: () => dueAt(r) } : {}),
    created: (jobName) => parts.created(r, jobName),
    subject: () => parts.subject(r),
  };
}

/** A Job named for a slot (`<cronjob>-<unix seconds>`) and marked with it. */
const holdsSlot = (cronJob: CronJobView, job: Readonly<Job>) => holdsSlotName(cronJob.metadata.name ?? "", job);

/** The Job holding a name, if any. */
function jobNamed(view: RanView, name: string): { ran: false } | { ran: true; job: Readonly<Job> } {
  const job = view.jobs.get(name);
  return job ? { ran: true, job } : { ran: false };
}

// --- the schedule ----------------------------------------------------------------------------------

interface SlotRequest {
  slot: Date;
  sources?: readonly ScheduleSource[] | undefined;
  /** An older missed slot run by missedRunPolicy RunAll (a newer one is due too). */
  catchUp?: boolean;
  /** Counted in status.scheduledRuns (spec.maxRuns is set). */
  counted?: boolean;
  /** spec.jitter: the slot's offset in seconds; its run was due at the slot plus it. */
  offset?: number;
}

/** spec.maxCatchUpRuns as stored, bounded: the CRD bounds it to 1–100, a value outside must not stop every pass. */
function catchUpCap(stored: unknown): number {
  return typeof stored === "number" && Number.isInteger(stored) && stored >= 1
    ? Math.min(stored, MAX_CATCH_UP_SLOTS)
    : DEFAULT_MAX_CATCH_UP_RUNS;
}

const slotJob = (cronJob: JobSource, r: SlotRequest) =>
  withScheduleSources(jobForSlot(cronJob, r.slot), r.slot, r.sources);

const schedule: Trigger<"schedule"> = {
  ...SCHEDULE_ROW,
  onReplace: "replace",
  // A foreign Job holding a due slot's name is refused (the record says so) and the walk goes on: with RunAll the
  // newer missed slots run, and lastScheduleTime passes the refused one. Stopping there held every later slot
  // back until RunAll's cap dropped the refused one, a hundred slots later.
  onConflict: "next",
  // Step 9, the schedule's row: the due slots (one, unless missedRunPolicy RunAll catches up), oldest first, at most
  // spec.maxCatchUpRuns per pass.
  // spec.maxRuns: no more start than it has left (the guards stop scheduling once none is).
  plan: (input) => {
    const left = runsLeft(input.cronJob.spec, input.status);
    const counted = left !== undefined;
    const jitter = jitterSecondsOf(input.cronJob.spec);
    const { namespace = "", name = "" } = input.cronJob.metadata;
    return {
      max: Math.min(catchUpCap(input.cronJob.spec.maxCatchUpRuns), left ?? Infinity),
      requests: input.due.map((slot, i) =>
        bindRun(
          schedule,
          {
            slot,
            sources: input.schedules?.sourcesAt(slot, input.anchor),
            catchUp: i < input.due.length - 1,
            counted,
            // Jittered: every slot has an offset, 0 included (its Job says so); none without spec.jitter.
            ...(jitter > 0 ? { offset: jitterOffsetSeconds({ namespace, name }, slot, jitter) } : {}),
          },
          scheduleParts,
        ),
      ),
    };
  },
  ours: holdsSlot,
  unbooked: (cronJob, job) => {
    const slot = scheduledTimeOf(job);
    const last = cronJob.status?.lastScheduleTime;
    return holdsSlot(cronJob, job) && !!slot && (!last || slot.getTime() > Date.parse(last));
  },
  // status.scheduledRuns, counted while spec.maxRuns is set: the stored count and every Job of a slot the stored
  // status has not booked (created before a crash, or in a pass whose write is still to come), so a repeated pass
  // counts a run once; gone when spec.maxRuns is unset.
  observe: (status, cronJob, jobs) => {
    const { scheduledRuns: _counted, ...rest } = status;
    if (maxRunsOf(cronJob.spec) === undefined) return rest;
    const unbooked = jobs.filter((j) => schedule.unbooked(cronJob, j)).length;
    return { ...rest, scheduledRuns: (cronJob.status?.scheduledRuns ?? 0) + unbooked };
  },
};

const scheduleParts: RunParts<SlotRequest> = {
  // A catch-up slot's Job says so, for the record rebuilt from it (api/v1/recentruns.ts); one made with spec.retry
  // set may be retried (retry's row).
  job: (cronJob: JobSource, r: SlotRequest) =>
    withJitterOffset(withRetryMark(withRunFacts(slotJob(cronJob, r), { catchUp: r.catchUp }), cronJob.spec), r.offset),
  // The slot ran if status says so, or a Job of ours holds its name: in the cache, or listed in status.active
  // (confirmed by the API server in step 3: a Job the cache has not seen yet).
  ran: (view: RanView, r: SlotRequest) => {
    const last = view.status.lastScheduleTime;
    if (last && new Date(last) >= r.slot) return { ran: true };
    const name = jobNameFor(view.cronJobName, r.slot);
    const held = jobNamed(view, name);
    if (held.ran) return held;
    return view.status.active?.some((a) => a.name === name) ? { ran: true } : { ran: false };
  },
  held: (r: SlotRequest): StateEvent => ({
    reason: EventReason.JobAlreadyActive,
    message: `Not starting job for ${rfc3339(r.slot)} because a previous job is still running (concurrencyPolicy Forbid)`,
    once: { topic: EventReason.JobAlreadyActive, key: rfc3339(r.slot) },
    count: "skipped_forbid",
  }),
  // lastScheduleTime is the schedule's alone: the base the next missed slots are counted from. A slot that ran
  // already changes nothing.
  book: (status: Readonly<CronJobWireStatus>, r: SlotRequest, rec: Handled): CronJobWireStatus =>
    rec.result === "created" || rec.result === "adopted"
      ? {
          ...status,
          lastScheduleTime: rfc3339(r.slot),
          ...(r.counted ? { scheduledRuns: (status.scheduledRuns ?? 0) + 1 } : {}),
        }
      : { ...status },
  // A jittered slot's run was due at its start: the creation skew counts from it.
  dueAt: (r: SlotRequest) => startOf(r),
  created: (r: SlotRequest, name: string) => ({
    event: { reason: EventReason.SuccessfulCreate, message: `Created job ${name}` },
    count: "created",
    log: `created Job for scheduled time ${rfc3339(r.slot)}`,
  }),
  subject: (r: SlotRequest) => slotSubject(r.slot, r.catchUp, startOf(r)),
};

/** When a slot's run was due: the slot plus its jitter offset. */
const startOf = (r: SlotRequest) => new Date(r.slot.getTime() + (r.offset ?? 0) * 1000);

// --- run now ---------------------------------------------------------------------------------------

interface RunNowRequest {
  request: string;
  requestedBy: string | undefined;
}

const runNow: Trigger<"runNow"> = {
  ...RUN_NOW_ROW,
  onReplace: "replace",
  onConflict: "stop",
  // Step 9, the run-now row: a new request runs once. The Job's name comes from the request, so a repeat after a crash
  // finds it; status.lastRunNowRequest books it (history cleanup keeps the Job until then).
  plan: (input) => {
    const request = runNowRequestOf(input.cronJob);
    if (!request || input.status.lastRunNowRequest === request) return undefined;
    if (request.length > MAX_RUN_NOW_REQUEST_LENGTH) {
      return {
        requests: [],
        events: [
          {
            reason: EventReason.RunNowRefused,
            message: `run-now request refused: the annotation's value is ${request.length} characters, at most ${MAX_RUN_NOW_REQUEST_LENGTH} are allowed`,
            once: { topic: EventReason.RunNowRefused, key: digest(request) },
          },
        ],
      };
    }
    const requestedBy = runNowRequesterOf(input.cronJob, request);
    return { requests: [bindRun(runNow, { request, requestedBy }, runNowParts)] };
  },
  ours: (cronJob, job) =>
    job.metadata?.name === manualJobName(cronJob.metadata.name ?? "", requestIdOf(runNow, job) ?? ""),
  unbooked: (cronJob, job) => {
    const request = requestIdOf(runNow, job);
    return (
      runNow.ours(cronJob, job) && request === runNowRequestOf(cronJob) && request !== cronJob.status?.lastRunNowRequest
    );
  },
  // A run-now request whose Job exists was run (maybe before a crash, before its status write).
  observe: (status, cronJob, jobs) => {
    const request = runNowRequestOf(cronJob);
    const name = request ? manualJobName(cronJob.metadata.name ?? "", request) : undefined;
    return request && jobs.some((j) => j.metadata?.name === name) ? { ...status, lastRunNowRequest: request } : status;
  },
};

const runNowParts: RunParts<RunNowRequest> = {
  job: (cronJob: JobSource, r: RunNowRequest) => jobForRunNow(cronJob, r.request, r.requestedBy),
  ran: (view: RanView, r: RunNowRequest) =>
    view.status.lastRunNowRequest === r.request ? { ran: true } : { ran: false },
  held: (r: RunNowRequest, running: string[]): StateEvent => ({
    reason: EventReason.RunNowDeferred,
    message: `run-now request "${r.request}" waits: concurrencyPolicy is Forbid and ${running.join(", ")} still running`,
    once: { topic: EventReason.RunNowDeferred, key: r.request },
  }),
  book: (status: Readonly<CronJobWireStatus>, r: RunNowRequest, rec: Handled): CronJobWireStatus =>
    rec.result === "created" || rec.result === "adopted" ? { ...status, lastRunNowRequest: r.request } : { ...status },
  created: (r: RunNowRequest, name: string) => ({
    event: {
      reason: EventReason.RunNow,
      message: `Created job ${name} for run-now request "${r.request}", requested by ${r.requestedBy ?? "an unknown user (no admission webhook recorded who)"}`,
    },
    count: "manual",
    log: `created Job for run-now request "${r.request}"`,
  }),
  subject: (r: RunNowRequest) => runNowSubject(r.request),
};

// --- backfill --------------------------------------------------------------------------------------

interface BackfillSlot extends SlotRequest {
  id: string;
  parallelism: number;
}

type BackfillStatus = NonNullable<CronJobWireStatus["backfill"]>;

/** status with `backfill` set (or removed). */
function withBackfill(status: Readonly<CronJobWireStatus>, bf: BackfillStatus | undefined): CronJobWireStatus {
  const { backfill: _old, ...rest } = status;
  return bf ? { ...rest, backfill: bf } : rest;
}

const backfill: Trigger<"backfill"> = {
  ...BACKFILL_ROW,
  // A backfill never replaces a run: with Forbid or Replace it runs one Job at a time, when nothing runs.
  onReplace: "wait",
  // A foreign Job holding a slot's name is counted skipped, and the walk goes on.
  onConflict: "next",
  // Step 9, the backfill row: a request (backfill.ts decides whether it starts, is refused or cancelled), worked
  // through oldest slot first after status.backfill.lastSlot. A slot whose Job exists (scheduled, run by an earlier
  // request, or by this one before a crash) is not run again; admission holds the rest to the request's
  // parallelism.
  plan: (input) => {
    const { cronJob, now } = input;
    const request = backfillRequestOf(cronJob);
    // A backfill skips the slots spec.exclusions holds, as the schedule did, unless the request includes them.
    const schedules = request?.ok && request.request.includeExcluded ? input.written : input.schedules;
    if (!schedules || (!request && !input.status.backfill)) return undefined;
    const anchor = new Date(cronJob.metadata.creationTimestamp ?? now);
    const decision = backfillDecision({ request, stored: input.status.backfill, schedules, anchor, now });
    const bf = decision.backfill;
    const status = withBackfill(input.status, bf);
    const events = decision.event ? [decision.event] : [];
    if (!bf || bf.phase !== "Running" || !request?.ok) return { requests: [], status, events };
    const { id, parallelism, from, to } = request.request;
    const pending = slotsInRange(schedules.schedule, from, to, {
      ...(bf.lastSlot ? { after: new Date(bf.lastSlot) } : {}),
      max: MAX_BACKFILL_SLOTS,
      anchor,
    });
    return {
      status,
      events,
      requests: pending.map((slot) =>
        bindRun(backfill, { slot, id, parallelism, sources: schedules.sourcesAt(slot, anchor) }, backfillParts),
      ),
      finish: (after, complete) => {
        const done = after.backfill;
        if (!complete || !done || done.phase !== "Running") return { status: { ...after }, events: [] };
        return {
          status: withBackfill(after, { ...done, phase: "Complete" }),
          events: [
            {
              reason: EventReason.BackfillComplete,
              message: `Backfill "${id}" complete: ${done.created} slots run, ${done.skipped} already had their Job`,
            },
          ],
        };
      },
    };
  },
  ours: holdsSlot,
  unbooked: (cronJob, job) => {
    if (!holdsSlot(cronJob, job)) return false;
    const id = requestIdOf(backfill, job);
    const current = backfillRequestOf(cronJob);
    if (!current?.ok || current.request.id !== id) return false;
    const bf = cronJob.status?.backfill;
    if (!bf || bf.id !== id) return true;
    const slot = scheduledTimeOf(job);
    return bf.phase === "Running" && !!slot && (!bf.lastSlot || slot.getTime() > Date.parse(bf.lastSlot));
  },
};

const backfillParts: RunParts<BackfillSlot> = {
  job: (cronJob: JobSource, r: BackfillSlot) =>
    withScheduleSources(jobForBackfill(cronJob, r.slot, r.id), r.slot, r.sources),
  ran: (view: RanView, r: BackfillSlot) => jobNamed(view, jobNameFor(view.cronJobName, r.slot)),
  room: (r: BackfillSlot, active: readonly Readonly<Job>[]) =>
    r.parallelism - active.filter((j) => requestIdOf(backfill, j) === r.id).length,
  book: backfillBook,
  created: (r: BackfillSlot, name: string) => ({
    event: { reason: EventReason.SuccessfulCreate, message: `Created job ${name} (backfill "${r.id}")` },
    count: "created",
    log: `created Job for backfill "${r.id}" slot ${rfc3339(r.slot)}`,
  }),
  subject: (r: BackfillSlot) => backfillSubject(r.slot, r.id),
};

/**
 * The backfill's book, status.backfill: a handled slot is `created` when this request's Job runs it (created now,
 * or found: created by this request before a crash lost the status write), `skipped` when another Job holds it
 * (scheduled, an earlier request's, a foreign Job); either way its progress moves past the slot.
 */
export function backfillBook(
  status: Readonly<CronJobWireStatus>,
  r: { slot: Date; id: string },
  rec: Handled,
): CronJobWireStatus {
  const bf = status.backfill;
  if (!bf) return { ...status };
  const ours =
    rec.result === "created" || (rec.result !== "conflict" && !!rec.job && requestIdOf(backfill, rec.job) === r.id);
  const counted = ours ? { ...bf, created: bf.created + 1 } : { ...bf, skipped: bf.skipped + 1 };
  return withBackfill(status, { ...counted, lastSlot: rfc3339(r.slot) });
}

// --- retry ----------------------------------------------------------------------------------------

interface RetryRequest {
  slot: Date;
  /** The slot's first Job: its name, with k, names every attempt. */
  first: string;
  /** The attempt (1 is the first retry) and the limit when it was decided. */
  k: number;
  n: number;
  /** The attempt that failed, and how. */
  failed: string;
  why: string;
  sources?: readonly ScheduleSource[] | undefined;
}

/** The attempts of each retriable slot, by its first Job's name. */
interface Chain {
  slot: Date;
  first: string;
  /** The newest attempt known (0: the first Job). */
  latest: { k: number; job: Readonly<Job> };
}

/**
 * The slots a retry may be owed for, from the Jobs: a slot's first Job made while spec.retry was set (withRetryMark),
 * and the attempts that name it. A first Job deleted by history cleanup after its retry started is known from the
 * retry's annotations.
 */
function chainsOf(cronJob: CronJobView, jobs: readonly Readonly<Job>[]): Chain[] {
  const chains = new Map<string, Chain>();
  for (const job of jobs) {
    const slot = scheduledTimeOf(job);
    const name = job.metadata?.name ?? "";
    if (!slot) continue;
    const attempt = retryAttemptOf(job);
    const k = attempt ? attempt.k : 0;
    const first = attempt ? attempt.of : name;
    // A slot's own Job, or a run after an upstream's (spec.after): both runs spec.retry may run again.
    const ownRun = holdsSlot(cronJob, job) || after.ours(cronJob, job);
    if (attempt ? !retry.ours(cronJob, job) : !(ownRun && retriable(job))) continue;
    const known = chains.get(first);
    if (!known || k > known.latest.k) chains.set(first, { slot, first, latest: { k, job } });
  }
  return [...chains.values()].sort((a, b) => a.slot.getTime() - b.slot.getTime() || a.first.localeCompare(b.first));
}

/** The next attempt a slot is owed, and whether a newer slot's run superseded it (Forbid, Replace). */
interface Owed {
  k: number;
  /** The attempt that failed, and how. */
  failed: string;
  why: string;
  /** The newer slot's run that started first under Forbid or Replace: the retry is not run. */
  newer?: Date;
}

/**
 * Whether a slot is owed its next attempt: its newest attempt failed with attempts left, and the next was never made.
 * An attempt is made once: a Job gone (Replace deleted it, or a user did) is still known from the books (the status
 * lists it active, or the record names it) or from the Job that replaced it (its run facts), so it is not made again.
 * With Forbid or Replace a newer slot's run supersedes it (the stored lastScheduleTime past its slot).
 */
function attemptOwed(
  cronJob: CronJobView & Pick<CronJobWire, "spec">,
  chain: Chain,
  jobs: readonly Readonly<Job>[],
  status: Readonly<CronJobWireStatus> | undefined,
): Owed | undefined {
  const { job, k: tried } = chain.latest;
  if (classifyJob(job) !== "failed") return undefined;
  const next = nextAttemptOwed(cronJob.spec, chain.slot, tried, status?.lastScheduleTime);
  if (!next) return undefined;
  const { k } = next;
  const nextName = retryJobName(cronJob.metadata.name ?? "", chain.first, k);
  const made =
    (status?.active ?? []).some((r) => r.name === nextName) ||
    (status?.recentRuns ?? []).some((e) => e.job === nextName || e.replaced?.includes(nextName)) ||
    jobs.some((j) => runFactsOf(j).replaced.includes(nextName));
  if (made) return undefined;
  const owed: Owed = { k, failed: job.metadata?.name ?? "", why: failureOf(job) };
  return next.newer ? { ...owed, newer: next.newer } : owed;
}

/** How a Job failed, in the record's words: its Failed condition's reason, or the operator's own (starts.ts). */
function failureOf(job: Readonly<Job>): string {
  const ended = job.metadata?.annotations?.[ENDED_REASON_ANNOTATION];
  const failed = job.status?.conditions?.find((c) => c.type === "Failed" && c.status === "True");
  return ended ?? failed?.reason ?? "Failed";
}

const retry: Trigger<"retry"> = {
  ...RETRY_ROW,
  // It never replaces a run: a newer slot's run supersedes it instead (below).
  onReplace: "wait",
  onConflict: "next",
  // Step 9, the retry row: for each retriable slot whose newest attempt failed with attempts left, the next attempt,
  // once spec.retry.delaySeconds have passed since the failure (until then a Held entry says when). With Forbid or
  // Replace a retry does not run after a newer slot's run started (lastScheduleTime passed its slot): a Skipped entry
  // says so. The attempts are derived from the Jobs on every pass, so a crash or a leader change neither repeats nor
  // skips one.
  plan: (input) => {
    const policy = retryOf(input.cronJob.spec);
    if (!policy) return undefined;
    const { now, cronJob } = input;
    const decisions: TimedDecision[] = [];
    let wakeAt: Date | undefined;
    const requests: TriggerRun[] = [];
    for (const chain of chainsOf(cronJob, input.jobs)) {
      const owed = attemptOwed(cronJob, chain, input.jobs, input.status);
      if (!owed) continue;
      const { k, failed, why } = owed;
      const subject = {
        trigger: RecordTrigger.Retry,
        scheduledTime: chain.slot,
        request: retryAttemptValue(k, policy.limit),
        attempt: { number: k, of: policy.limit, after: failed, failure: why.slice(0, 64) },
      };
      const attempt = `attempt ${k} of ${policy.limit}`;
      if (owed.newer) {
        const message = `${attempt} not run: Job ${failed} failed (${why}), and the run of ${rfc3339(owed.newer)} started first (concurrencyPolicy ${cronJob.spec.concurrencyPolicy})`;
        decisions.push({
          decision: {
            ...subject,
            decision: RecordDecision.Skipped,
            reason: RecordReason.RetrySuperseded,
            message,
            supersededBy: owed.newer,
          },
          at: now,
        });
        continue;
      }
      const at = new Date((finishedAt(chain.latest.job) ?? now).getTime() + policy.delaySeconds * 1000);
      if (at > now) {
        const message = `${attempt} starts at ${rfc3339(at)}: Job ${failed} failed (${why}); spec.retry.delaySeconds ${policy.delaySeconds}`;
        decisions.push({
          decision: {
            ...subject,
            decision: RecordDecision.Held,
            reason: RecordReason.RetryDelay,
            message,
            startsAt: at,
          },
          at: now,
        });
        if (!wakeAt || at < wakeAt) wakeAt = at;
        continue;
      }
      const sources = input.schedules?.sourcesAt(chain.slot, input.anchor);
      requests.push(
        bindRun(retry, { slot: chain.slot, first: chain.first, k, n: policy.limit, failed, why, sources }, retryParts),
      );
    }
    return { requests, decisions, ...(wakeAt ? { wakeAt } : {}) };
  },
  keeps: (cronJob, jobs, status) => {
    const policy = retryOf(cronJob.spec);
    if (!policy) return [];
    return chainsOf(cronJob, jobs)
      .filter((c) => {
        const owed = attemptOwed(cronJob, c, jobs, status);
        return owed && !owed.newer;
      })
      .map((c) => c.latest.job.metadata?.name ?? "");
  },
  ours: (cronJob, job) => isRetryJob(cronJob.metadata.name ?? "", job),
  // Its books are the Jobs themselves: nothing in status to catch up.
  unbooked: () => false,
};

const retryParts: RunParts<RetryRequest> = {
  job: (cronJob: JobSource, r: RetryRequest) => {
    const job = withScheduleSources(jobForSlot(cronJob, r.slot), r.slot, r.sources);
    const annotations = {
      ...job.metadata?.annotations,
      [RETRY_OF_ANNOTATION]: r.first,
      [RETRY_ATTEMPT_ANNOTATION]: retryAttemptValue(r.k, r.n),
    };
    return {
      ...job,
      metadata: { ...job.metadata, name: retryJobName(cronJob.metadata.name ?? "", r.first, r.k), annotations },
    };
  },
  ran: (view: RanView, r: RetryRequest) => jobNamed(view, retryJobName(view.cronJobName, r.first, r.k)),
  held: (r: RetryRequest, running: string[]): StateEvent => ({
    reason: EventReason.JobAlreadyActive,
    message: `Not starting attempt ${r.k} of ${r.n} for ${rfc3339(r.slot)} because ${running.join(", ")} still running (a retry waits for the running Jobs under concurrencyPolicy Forbid or Replace)`,
    once: { topic: EventReason.JobAlreadyActive, key: `${rfc3339(r.slot)}/${r.k}` },
    count: "skipped_forbid",
  }),
  book: (status: Readonly<CronJobWireStatus>) => ({ ...status }),
  created: (r: RetryRequest, name: string) => ({
    event: {
      reason: EventReason.RetryCreated,
      message: `Created job ${name}: attempt ${r.k} of ${r.n} for ${rfc3339(r.slot)}, after ${r.failed} failed (${r.why})`,
    },
    count: "created",
    log: `created Job for retry ${r.k} of ${r.n} of scheduled time ${rfc3339(r.slot)}`,
  }),
  // As recorded(job) rebuilds it: how the attempt before failed is that Job's entry's outcome.
  subject: (r: RetryRequest) => retrySubject(r.slot, r.k, r.n, r.failed),
};

// --- after ----------------------------------------------------------------------------------------

interface AfterRequest {
  upstream: string;
  /** The upstream's Job whose end this run follows, and when it ended (the run's slot). */
  job: string;
  ended: Date;
  when: string;
}

/** How long after an upstream run's end a pass may first see it and still count it on time (missedRunPolicy Skip). */
const AFTER_ON_TIME_MS = 60_000;

type UpstreamBook = NonNullable<CronJobWireStatus["upstreams"]>[number];

/** status.upstreams with `cronJob`'s book set to `book`. */
function withUpstreamBook(status: Readonly<CronJobWireStatus>, book: UpstreamBook): CronJobWireStatus {
  const others = (status.upstreams ?? []).filter((b) => b.cronJob !== book.cronJob);
  return { ...status, upstreams: [...others, book].sort((a, b) => a.cronJob.localeCompare(b.cronJob)) };
}

const bookOf = (status: Readonly<CronJobWireStatus> | undefined, upstream: string) =>
  status?.upstreams?.find((b) => b.cronJob === upstream);

/** The after row's book after a decided upstream run: it and every older one are decided. */
const decided = (status: Readonly<CronJobWireStatus>, upstream: string, job: string, ended: Date) => {
  const book = bookOf(status, upstream);
  const at = book ? Date.parse(book.lastEnded) : -Infinity;
  if (at > ended.getTime() || (at === ended.getTime() && (book?.lastJob ?? "") >= job)) return { ...status };
  return withUpstreamBook(status, { cronJob: upstream, lastEnded: rfc3339(ended), lastJob: job });
};

/**
 * Which of an upstream's unanswered runs a pass runs after, by spec.missedRunPolicy (as for missed slots): RunAll
 * every one, oldest first; RunLatest (the default) the newest, the older ones Skipped; Skip those whose end the
 * operator saw within a minute (a run that ended while it was down is Skipped). A run whose end is older than
 * startingDeadlineSeconds is Missed, whatever the policy.
 */
function afterDecisions(
  pending: readonly { job: Readonly<Job>; ended: Date }[],
  policy: string | undefined,
  deadline: number | undefined,
  clockNow: Date,
): { run: typeof pending; skipped: { r: (typeof pending)[number]; reason: RecordReason; message: string }[] } {
  const skipped: { r: (typeof pending)[number]; reason: RecordReason; message: string }[] = [];
  let run = [...pending];
  if (deadline !== undefined) {
    const cutoff = clockNow.getTime() - deadline * 1000;
    for (const r of run.filter((p) => p.ended.getTime() < cutoff))
      skipped.push({
        r,
        reason: RecordReason.StartingDeadlineExceeded,
        message: `not run: its upstream run ended at ${rfc3339(r.ended)}, more than startingDeadlineSeconds ${deadline} ago`,
      });
    run = run.filter((p) => p.ended.getTime() >= cutoff);
  }
  if (policy === "Skip") {
    const late = run.filter((p) => clockNow.getTime() - p.ended.getTime() > AFTER_ON_TIME_MS);
    for (const r of late)
      skipped.push({
        r,
        reason: RecordReason.MissedRunPolicySkip,
        message: `not run: its upstream run ended at ${rfc3339(r.ended)}, while the operator was not running (missedRunPolicy Skip)`,
      });
    run = run.filter((p) => !late.includes(p));
  } else if (policy !== "RunAll" && run.length > 1) {
    const newest = run[run.length - 1]!;
    for (const r of run.slice(0, -1))
      skipped.push({
        r,
        reason: RecordReason.UpstreamNewerRun,
        message: `not run: a newer run of the upstream (${newest.job.metadata?.name ?? ""}) ended too, and missedRunPolicy RunLatest runs after the newest only`,
      });
    run = [newest];
  }
  return { run, skipped };
}

const after: Trigger<"after"> = {
  ...AFTER_ROW,
  onReplace: "replace",
  onConflict: "next",
  // Step 9, the after row: for each upstream of spec.after, its runs that ended as `when` asks since the book
  // (status.upstreams), oldest first, decided by the missed-run policy; the first pass after spec.after names an
  // upstream starts its book at that pass (the upstream's earlier runs are not this CronJob's). Nothing while
  // spec.after makes a cycle.
  plan: (input) => {
    const read = input.upstreams;
    if (!read?.upstreams.length || read.cycle) return undefined;
    const { cronJob, now } = input;
    const clockNow = input.clockNow ?? now;
    let status: CronJobWireStatus = { ...input.status };
    // The books of upstreams no longer named go.
    const named = new Set(read.upstreams.map((u) => u.cronJob));
    if (status.upstreams?.some((b) => !named.has(b.cronJob))) {
      const kept = status.upstreams.filter((b) => named.has(b.cronJob));
      const { upstreams: _old, ...rest } = status;
      status = kept.length ? { ...rest, upstreams: kept } : rest;
    }
    const decisions: TimedDecision[] = [];
    const requests: TriggerRun[] = [];
    for (const up of read.upstreams) {
      if (!up.found) continue;
      const book = bookOf(status, up.cronJob);
      if (!book) {
        status = withUpstreamBook(status, { cronJob: up.cronJob, lastEnded: rfc3339(now) });
        continue;
      }
      const pending = endedRuns(up.jobs, up.when, { ended: new Date(book.lastEnded), job: book.lastJob });
      const { run, skipped } = afterDecisions(
        pending,
        cronJob.spec.missedRunPolicy,
        cronJob.spec.startingDeadlineSeconds,
        clockNow,
      );
      for (const { r, reason, message } of skipped) {
        const name = r.job.metadata?.name ?? "";
        decisions.push({
          decision: {
            ...afterSubject(r.ended, afterRequest(up.cronJob, name)),
            decision: reason === RecordReason.StartingDeadlineExceeded ? RecordDecision.Missed : RecordDecision.Skipped,
            reason,
            message,
          },
          at: now,
        });
        status = decided(status, up.cronJob, name, r.ended);
      }
      for (const r of run)
        requests.push(
          bindRun(
            after,
            { upstream: up.cronJob, job: r.job.metadata?.name ?? "", ended: r.ended, when: up.when },
            afterParts,
          ),
        );
    }
    requests.sort((a, b) => (a.dueAt?.().getTime() ?? 0) - (b.dueAt?.().getTime() ?? 0));
    return { requests, decisions, status };
  },
  ours: (cronJob, job) => {
    const up = parseAfterRequest(requestIdOf(after, job));
    return !!up && job.metadata?.name === afterJobName(cronJob.metadata.name ?? "", up.cronJob, up.job);
  },
  // A run the book has not passed: its Job is the only sign it ran (history cleanup keeps it, its end is reported).
  unbooked: (cronJob, job) => {
    if (!after.ours(cronJob, job)) return false;
    const up = parseAfterRequest(requestIdOf(after, job))!;
    const ended = scheduledTimeOf(job);
    const book = bookOf(cronJob.status, up.cronJob);
    if (!book || !ended) return true;
    const at = Date.parse(book.lastEnded);
    return ended.getTime() > at || (ended.getTime() === at && up.job > (book.lastJob ?? ""));
  },
};

const afterParts: RunParts<AfterRequest> = {
  job: (cronJob: JobSource, r: AfterRequest) => {
    const job = withRetryMark(jobForSlot(cronJob, r.ended), cronJob.spec);
    const annotations = { ...job.metadata?.annotations, [AFTER_ANNOTATION]: afterRequest(r.upstream, r.job) };
    return {
      ...job,
      metadata: { ...job.metadata, name: afterJobName(cronJob.metadata.name ?? "", r.upstream, r.job), annotations },
    };
  },
  ran: (view: RanView, r: AfterRequest) => jobNamed(view, afterJobName(view.cronJobName, r.upstream, r.job)),
  held: (r: AfterRequest, running: string[]): StateEvent => ({
    reason: EventReason.JobAlreadyActive,
    message: `Not starting the run after ${r.upstream}'s Job ${r.job} because ${running.join(", ")} still running (concurrencyPolicy Forbid)`,
    once: { topic: EventReason.JobAlreadyActive, key: afterRequest(r.upstream, r.job) },
    count: "skipped_forbid",
  }),
  // Decided, whatever happened to it: a run after an upstream's run is made once.
  book: (status: Readonly<CronJobWireStatus>, r: AfterRequest) => decided(status, r.upstream, r.job, r.ended),
  dueAt: (r: AfterRequest) => r.ended,
  created: (r: AfterRequest, name: string) => ({
    event: {
      reason: EventReason.SuccessfulCreate,
      message: `Created job ${name} after ${r.upstream}'s Job ${r.job} ended (spec.after: ${r.when})`,
    },
    count: "created",
    log: `created Job after ${r.upstream}'s Job ${r.job}`,
  }),
  subject: (r: AfterRequest) => afterSubject(r.ended, afterRequest(r.upstream, r.job)),
};

/** The product's triggers, in the order a pass runs them (step 9). */
export const TRIGGERS = [schedule, runNow, backfill, retry, after] as const satisfies readonly Trigger[];
