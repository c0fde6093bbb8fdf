// The run path's table: every run — a due slot, a caught-up slot, a run-now request, a backfill slot — is a
// RunRequest, admitted by one rule (the concurrency policy, and the trigger's own limit), created or adopted by
// one create, and recorded by one step whose per-trigger part is a row here: which status fields the trigger's
// books hold, which Event and count a create makes. A new trigger is a new row, not a new path. Pure.
import {
  BACKFILL_REQUEST_ANNOTATION,
  type CronJobWireStatus,
  type Job,
  jobForBackfill,
  jobForRunNow,
  jobForSlot,
  type JobSource,
  type ScheduleSource,
  withScheduleSources,
} from "../api/v1/index.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import type { EventDecision } from "./events.ts";
import type { RunOutcome } from "./metrics.ts";
import type { Trigger } from "./observe.ts";

/**
 * One run to start: the Job (its name is the run's lock) and what asked for it. A slot of a CronJob with several
 * schedules carries the ones it came from (`sources`), which its Job names.
 */
export type RunRequest =
  | { trigger: "schedule"; slot: Date; sources?: readonly ScheduleSource[] }
  | { trigger: "runNow"; request: string; requestedBy: string | undefined }
  | { trigger: "backfill"; slot: Date; id: string; parallelism: number; sources?: readonly ScheduleSource[] };

/** The Job a request creates. */
export function jobFor(cronJob: JobSource, r: RunRequest): Job {
  switch (r.trigger) {
    case "schedule":
      return withScheduleSources(jobForSlot(cronJob, r.slot), r.slot, r.sources);
    case "runNow":
      return jobForRunNow(cronJob, r.request, r.requestedBy);
    case "backfill":
      return withScheduleSources(jobForBackfill(cronJob, r.slot, r.id), r.slot, r.sources);
  }
}

/**
 * An Event that describes a state: it comes once per (topic, key), not on every pass while the state holds, and
 * so does its count.
 */
export interface StateEvent extends EventDecision {
  once: { topic: string; key: string };
  count?: RunOutcome;
}

interface TriggerRow<R extends RunRequest> {
  /** With concurrencyPolicy Replace: delete the running Jobs and run, or wait as with Forbid. */
  onReplace: "replace" | "wait";
  /** How many more of the trigger's own Jobs may run now, given every active Job (none: no limit of its own). */
  room?(r: R, active: readonly Readonly<Job>[]): number;
  /** What is reported while the concurrency policy holds the request back (`running`: the active Jobs' names). */
  held?(r: R, running: string[]): StateEvent;
  /** The trigger's books after its Job was created or adopted. */
  record(status: Readonly<CronJobWireStatus>, r: R): CronJobWireStatus;
  /**
   * The slot the run was due at, for a trigger that runs slots as they come (the schedule): the creation skew is
   * measured from it, and with Replace it may pass a backfill Job of an older slot (observe.ts mayReplace).
   */
  dueAt?(r: R): Date;
  /** The Event, count and log line of a Job this pass created. */
  created(r: R, jobName: string): { event: EventDecision; count: RunOutcome; log: string };
}

type Rows = { [T in Trigger]: TriggerRow<Extract<RunRequest, { trigger: T }>> };

const TRIGGERS: Rows = {
  schedule: {
    onReplace: "replace",
    held: (r) => ({
      reason: "JobAlreadyActive",
      message: `Not starting job for ${rfc3339(r.slot)} because a previous job is still running (concurrencyPolicy Forbid)`,
      once: { topic: "JobAlreadyActive", key: rfc3339(r.slot) },
      count: "skipped_forbid",
    }),
    // lastScheduleTime is the schedule's alone: the base the next missed slots are counted from.
    record: (status, r) => ({ ...status, lastScheduleTime: rfc3339(r.slot) }),
    dueAt: (r) => r.slot,
    created: (r, name) => ({
      event: { reason: "SuccessfulCreate", message: `Created job ${name}` },
      count: "created",
      log: `created Job for scheduled time ${rfc3339(r.slot)}`,
    }),
  },
  runNow: {
    onReplace: "replace",
    held: (r, running) => ({
      reason: "RunNowDeferred",
      message: `run-now request "${r.request}" waits: concurrencyPolicy is Forbid and ${running.join(", ")} still running`,
      once: { topic: "RunNowDeferred", key: r.request },
    }),
    record: (status, r) => ({ ...status, lastRunNowRequest: r.request }),
    created: (r, name) => ({
      event: {
        reason: "RunNow",
        message: `Created job ${name} for run-now request "${r.request}", requested by ${r.requestedBy ?? "an unknown user (no admission webhook recorded who)"}`,
      },
      count: "manual",
      log: `created Job for run-now request "${r.request}"`,
    }),
  },
  backfill: {
    // A backfill never replaces a run: with Forbid or Replace it runs one Job at a time, when nothing runs.
    onReplace: "wait",
    room: (r, active) =>
      r.parallelism - active.filter((j) => j.metadata?.annotations?.[BACKFILL_REQUEST_ANNOTATION] === r.id).length,
    // The request's progress (status.backfill) is the backfill's book: the source that walks its slots keeps it.
    record: (status) => ({ ...status }),
    created: (r, name) => ({
      event: { reason: "SuccessfulCreate", message: `Created job ${name} (backfill "${r.id}")` },
      count: "created",
      log: `created Job for backfill "${r.id}" slot ${rfc3339(r.slot)}`,
    }),
  },
};

/** A trigger's row applied to one request: what the run path asks of it. */
interface BoundRow {
  onReplace: "replace" | "wait";
  room?(active: readonly Readonly<Job>[]): number;
  held?(running: string[]): StateEvent;
  record(status: Readonly<CronJobWireStatus>): CronJobWireStatus;
  dueAt?(): Date;
  created(jobName: string): { event: EventDecision; count: RunOutcome; log: string };
}

function bind<R extends RunRequest>(row: TriggerRow<R>, r: R): BoundRow {
  const { room, held, dueAt } = row;
  return {
    onReplace: row.onReplace,
    ...(room ? { room: (active: readonly Readonly<Job>[]) => room(r, active) } : {}),
    ...(held ? { held: (running: string[]) => held(r, running) } : {}),
    record: (status) => row.record(status, r),
    ...(dueAt ? { dueAt: () => dueAt(r) } : {}),
    created: (jobName) => row.created(r, jobName),
  };
}

/** The row of a request's trigger, applied to it. */
export function rowOf(r: RunRequest): BoundRow {
  switch (r.trigger) {
    case "schedule":
      return bind(TRIGGERS.schedule, r);
    case "runNow":
      return bind(TRIGGERS.runNow, r);
    case "backfill":
      return bind(TRIGGERS.backfill, r);
  }
}

/** Admission's answer: run (after deleting `replace`, Replace's running Jobs), or wait. */
type Admission = { run: true; replace: readonly Readonly<Job>[] } | { run: false; held?: StateEvent };

/**
 * The one admission rule. `active`: every Job of the CronJob known to run this pass — the cache's, the ones the
 * cache has not caught up with (confirmed by a live read, or created or adopted earlier in this pass) — so a
 * limit can never be exceeded by a lagging cache.
 */
export function admit(
  concurrencyPolicy: string | undefined,
  r: RunRequest,
  active: readonly Readonly<Job>[],
  /**
   * Whether the stored status records a Job's run. A Job is deleted only once it does: until then the Job (its
   * name) is the run's only record, and a pass reading a status from before it would run the slot again.
   */
  recorded: (job: Readonly<Job>) => boolean = () => true,
): Admission {
  const row = rowOf(r);
  if (active.length > 0) {
    const running = active.map((j) => j.metadata?.name ?? "");
    if (concurrencyPolicy === "Forbid" || (concurrencyPolicy === "Replace" && row.onReplace === "wait")) {
      const held = row.held?.(running);
      return held ? { run: false, held } : { run: false };
    }
    // Replace waits for the books: a run this pass (or a pass whose status write is not stored yet) started is
    // replaced by a later pass.
    if (concurrencyPolicy === "Replace")
      return active.every(recorded) ? { run: true, replace: active } : { run: false };
  }
  const room = row.room?.(active);
  if (room !== undefined && room <= 0) return { run: false };
  return { run: true, replace: [] };
}
