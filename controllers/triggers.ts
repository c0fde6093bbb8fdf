// The triggers' table: everything that differs between the schedule, a run-now request and a backfill request is a
// row here — which requests the trigger has this pass (its source), the Job a request creates, whether it already
// ran, the trigger's books (which status fields count its runs, which Jobs are its own), what admission asks of it,
// and the Event and count a create makes. The run path (controllers/cronjob_controller.ts run()), the books
// (observe.ts, books.ts) and admission (runs.ts) read the row and never switch on a trigger, so a new trigger is a
// row and its source, not an edit there. Pure.
import {
  BACKFILL_REQUEST_ANNOTATION,
  backfillRequestOf,
  type CronJobSchedules,
  type CronJobWire,
  type CronJobWireStatus,
  DEFAULT_MAX_CATCH_UP_RUNS,
  EventReason,
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
  RecordTrigger,
  RUN_NOW_REQUEST_ANNOTATION,
  runNowRequesterOf,
  runNowRequestOf,
  scheduledTimeOf,
  type ScheduleSource,
  withRunFacts,
  withScheduleSources,
} from "../api/v1/index.ts";
import { slotsInRange } from "../api/v1/schedule/index.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import { digest } from "../runtime/objects.ts";
import { backfillDecision } from "./backfill.ts";
import type { EventDecision } from "./events.ts";
import type { RunOutcome } from "./metrics.ts";

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
  /** The CronJob's schedules; undefined when they do not parse (the guards report it). */
  readonly schedules: CronJobSchedules | undefined;
  /** The schedule's due slots this pass (step 7), oldest first; none while not scheduling. */
  readonly due: readonly Date[];
  /** What `@every` counted from when step 7 found them. */
  readonly anchor: Date | undefined;
  /** Truncated to the second. */
  readonly now: Date;
}

/** What a trigger asks of this pass. */
interface Plan<R> {
  /** Its requests, oldest first: the run path stops at the first one that cannot run now. */
  readonly requests: Iterable<R>;
  /** At most this many may start this pass; when more are left the pass is requeued at once. */
  readonly max?: number;
  /** Decided before any run (a backfill request started, refused or cancelled): the status, and its Events. */
  readonly status?: CronJobWireStatus;
  readonly events?: readonly (EventDecision | StateEvent)[];
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

/** A request as the record names it. */
interface RunSubject {
  trigger: RecordTrigger;
  scheduledTime?: Date;
  request?: string;
}

/** A trigger: its source and its books. Requests come out of plan() already bound to the row (TriggerRun). */
export interface Trigger<Name extends string = string> {
  readonly name: Name;
  /** Its runs' trigger in the record (status.recentRuns). */
  readonly recordAs: RecordTrigger;
  /** Runs while scheduling is suspended or stopped after failures (an explicit request does, as `kubectl create job --from`). */
  readonly runsWhileSuspended: boolean;
  /** With concurrencyPolicy Replace: delete the running Jobs and run, or wait as with Forbid. */
  readonly onReplace: "replace" | "wait";
  /** A foreign Job holding a request's name: stop the walk there (nothing later overtakes it), or go on. */
  readonly onConflict: "stop" | "next";
  /** The annotation its Jobs carry the request's id in; none for the table's default row, which claims the others. */
  readonly requestAnnotation?: string;
  /** Its Jobs move lastScheduleTime, the base missed slots are counted from (the schedule's own book). */
  readonly movesLastScheduleTime: boolean;
  /**
   * Its Jobs take a schedule slot's name without moving lastScheduleTime: for the schedule such a Job is the only
   * sign its slot ran, so it is kept until the schedule has passed that slot (observe.ts mayDelete).
   */
  readonly takesScheduleSlots: boolean;
  /** This pass's requests; undefined: none. */
  plan(input: SourceInput): Plan<TriggerRun> | undefined;
  /** A Job with the name this trigger gives its run: created by us (maybe before a crash). */
  ours(cronJob: CronJobView, job: Readonly<Job>): boolean;
  /** A Job of ours whose run the stored status has not booked, by this trigger's books. */
  unbooked(cronJob: CronJobView, job: Readonly<Job>): boolean;
  /** The trigger's books brought up to date with the children (step 4); unchanged by default. */
  observe?(status: CronJobWireStatus, cronJob: CronJobView, jobs: readonly Readonly<Job>[]): CronJobWireStatus;
}

/** The request id a Job ran for, by the row's annotation (undefined: a scheduled run, or not this trigger's). */
export function requestIdOf(row: Trigger, job: Readonly<Job>): string | undefined {
  return row.requestAnnotation === undefined ? undefined : job.metadata?.annotations?.[row.requestAnnotation];
}

/** The row that made a Job: the one whose annotation it carries, else the table's default row (the schedule). */
export function triggerOfJob(triggers: readonly Trigger[], job: Readonly<Job>): Trigger {
  return (
    triggers.find((t) => requestIdOf(t, job) !== undefined) ??
    triggers.find((t) => t.requestAnnotation === undefined) ??
    triggers[0]!
  );
}

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
function holdsSlotName(cronJob: CronJobView, job: Readonly<Job>): boolean {
  const slot = scheduledTimeOf(job);
  return !!slot && job.metadata?.name === jobNameFor(cronJob.metadata.name ?? "", slot);
}

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
  name: "schedule",
  recordAs: RecordTrigger.Schedule,
  runsWhileSuspended: false,
  onReplace: "replace",
  // A foreign Job holding a due slot's name is refused (the record says so) and the walk goes on: with RunAll the
  // newer missed slots run, and lastScheduleTime passes the refused one. Stopping there held every later slot
  // back until RunAll's cap dropped the refused one, a hundred slots later.
  onConflict: "next",
  movesLastScheduleTime: true,
  takesScheduleSlots: false,
  // Step 9, the schedule's row: the due slots (one, unless missedRunPolicy RunAll catches up), oldest first, at most
  // spec.maxCatchUpRuns per pass.
  plan: (input) => ({
    max: catchUpCap(input.cronJob.spec.maxCatchUpRuns),
    requests: input.due.map((slot, i) =>
      bindRun(
        schedule,
        { slot, sources: input.schedules?.sourcesAt(slot, input.anchor), catchUp: i < input.due.length - 1 },
        scheduleParts,
      ),
    ),
  }),
  ours: holdsSlotName,
  unbooked: (cronJob, job) => {
    const slot = scheduledTimeOf(job);
    const last = cronJob.status?.lastScheduleTime;
    return holdsSlotName(cronJob, job) && !!slot && (!last || slot.getTime() > Date.parse(last));
  },
};

const scheduleParts: RunParts<SlotRequest> = {
  // A catch-up slot's Job says so, for the record rebuilt from it (api/v1/recentruns.ts).
  job: (cronJob: JobSource, r: SlotRequest) => withRunFacts(slotJob(cronJob, r), { catchUp: r.catchUp }),
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
      ? { ...status, lastScheduleTime: rfc3339(r.slot) }
      : { ...status },
  dueAt: (r: SlotRequest) => r.slot,
  created: (r: SlotRequest, name: string) => ({
    event: { reason: EventReason.SuccessfulCreate, message: `Created job ${name}` },
    count: "created",
    log: `created Job for scheduled time ${rfc3339(r.slot)}`,
  }),
  subject: (r: SlotRequest) => ({
    trigger: r.catchUp ? RecordTrigger.CatchUp : RecordTrigger.Schedule,
    scheduledTime: r.slot,
  }),
};

// --- run now ---------------------------------------------------------------------------------------

interface RunNowRequest {
  request: string;
  requestedBy: string | undefined;
}

const runNow: Trigger<"runNow"> = {
  name: "runNow",
  recordAs: RecordTrigger.RunNow,
  runsWhileSuspended: true,
  onReplace: "replace",
  onConflict: "stop",
  requestAnnotation: RUN_NOW_REQUEST_ANNOTATION,
  movesLastScheduleTime: false,
  takesScheduleSlots: false,
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
  subject: (r: RunNowRequest) => ({ trigger: RecordTrigger.RunNow, request: r.request }),
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
  name: "backfill",
  recordAs: RecordTrigger.Backfill,
  runsWhileSuspended: true,
  // A backfill never replaces a run: with Forbid or Replace it runs one Job at a time, when nothing runs.
  onReplace: "wait",
  // A foreign Job holding a slot's name is counted skipped, and the walk goes on.
  onConflict: "next",
  requestAnnotation: BACKFILL_REQUEST_ANNOTATION,
  movesLastScheduleTime: false,
  takesScheduleSlots: true,
  // Step 9, the backfill row: a request (backfill.ts decides whether it starts, is refused or cancelled), worked
  // through oldest slot first after status.backfill.lastSlot. A slot whose Job exists (scheduled, run by an earlier
  // request, or by this one before a crash) is not run again; admission holds the rest to the request's
  // parallelism.
  plan: (input) => {
    const { cronJob, schedules, now } = input;
    const request = backfillRequestOf(cronJob);
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
  ours: holdsSlotName,
  unbooked: (cronJob, job) => {
    if (!holdsSlotName(cronJob, job)) return false;
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
  subject: (r: BackfillSlot) => ({ trigger: RecordTrigger.Backfill, scheduledTime: r.slot, request: r.id }),
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

/** The product's triggers, in the order a pass runs them (step 9). */
export const TRIGGERS = [schedule, runNow, backfill] as const satisfies readonly Trigger[];
