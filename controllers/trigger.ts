// A trigger's row, the controller's half (the table is controllers/triggers.ts, a file per row beside it): each row
// spreads its trigger's row of api/v1/triggers.ts (its words, annotations, admission check, how the record names its
// Jobs: what every reader needs) and adds what only a pass does — which requests the trigger has this pass (its
// source), the Job a request creates, whether it already ran, its books (which status fields count its runs, which
// Jobs are its own), and the Event and count a create makes. This file holds the row's shape and what rows share —
// a slot's request (the schedule's and a backfill's), the names that tell a row's Jobs (the retry reads the
// schedule's and the after row's) — so that no row imports another. Pure.
import {
  AFTER_ANNOTATION,
  afterJobName,
  type CronJobWire,
  type CronJobWireStatus,
  holdsSlotName,
  type Job,
  type JobSource,
  parseAfterRequest,
  rowOfJob,
  type ScheduleSource,
  type TriggerRow,
  type CronJobSchedules,
} from "../api/v1/index.ts";
import { joinJobName, parseJoinRequest } from "../api/v1/join.ts";
import type { EventDecision } from "./events.ts";
import type { RunOutcome } from "./metrics.ts";
import type { RunSubject, TimedDecision } from "./record.ts";
import type { UpstreamsRead } from "./upstreams.ts";

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
  /** spec.after's upstreams and their Jobs (read by controllers/after.ts); none without spec.after. */
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
export interface Handled {
  readonly result: "created" | "adopted" | "ran" | "conflict";
  readonly job?: Readonly<Job> | undefined;
}

/** What run() needs to know of the pass to tell whether a request already ran. */
export interface RanView {
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

/** A slot's request: what the schedule row runs, and what a backfill's slots extend. */
export interface SlotRequest {
  slot: Date;
  sources?: readonly ScheduleSource[] | undefined;
  /** An older missed slot run by missedRunPolicy RunAll (a newer one is due too). */
  catchUp?: boolean;
  /** Counted in status.scheduledRuns (spec.maxRuns is set). */
  counted?: boolean;
  /** spec.jitter: the slot's offset in seconds; its run was due at the slot plus it. */
  offset?: number;
}

/** A Job named for a slot (`<cronjob>-<unix seconds>`) and marked with it. */
export const holdsSlot = (cronJob: CronJobView, job: Readonly<Job>) => holdsSlotName(cronJob.metadata.name ?? "", job);

/** A Job named as a join's (spec.afterPolicy All, trigger-join.ts): created by us. */
export function holdsJoinName(cronJob: CronJobView, job: Readonly<Job>): boolean {
  const runs = parseJoinRequest(job.metadata?.annotations?.[AFTER_ANNOTATION]);
  return !!runs && job.metadata?.name === joinJobName(cronJob.metadata.name ?? "", runs);
}

/**
 * A Job named as a run after upstreams (spec.after, trigger-after.ts): after one upstream's run, or a join of every
 * upstream's. The after row's Jobs by their names, which the retry reads too (an after run is a run it may retry).
 */
export function holdsAfterName(cronJob: CronJobView, job: Readonly<Job>): boolean {
  if (holdsJoinName(cronJob, job)) return true;
  const up = parseAfterRequest(job.metadata?.annotations?.[AFTER_ANNOTATION]);
  return !!up && job.metadata?.name === afterJobName(cronJob.metadata.name ?? "", up.cronJob, up.job);
}

/** The Job holding a name, if any. */
export function jobNamed(view: RanView, name: string): { ran: false } | { ran: true; job: Readonly<Job> } {
  const job = view.jobs.get(name);
  return job ? { ran: true, job } : { ran: false };
}
