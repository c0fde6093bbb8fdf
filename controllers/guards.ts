// Step 6, the guards: what keeps a CronJob from scheduling this pass (deleting, an unknown zone, an unparseable
// schedule, suspended, stopped after failures), with the conditions that say why. Pure.
import {
  cronJobSchedules,
  type CronJobSchedules,
  type CronJobWire,
  type CronJobWireStatus,
  EventReason,
  maxRunsEnd,
  MORE_SCHEDULES_ANNOTATION,
  type ScheduleEnd,
  upstreamsOf,
} from "../api/v1/index.ts";
import { type HashKey, type Schedule, validateTimeZone } from "../api/v1/schedule/index.ts";
import { type FieldError, fieldErrorBody } from "../runtime/field.ts";
import { type ConditionInput, endedConditions, NOT_DEGRADED, progressingCondition } from "./conditions.ts";
import type { EventDecision } from "./events.ts";
import type { StateEvent } from "./trigger.ts";
import type { ReconcilerMemory } from "./memory.ts";

/**
 * Step 6's decision. `stop`: nothing is scheduled this pass (the conditions say why, and nextScheduleTime goes);
 * a suspended CronJob still runs an explicit run-now request. Otherwise the schedule to compute slots with.
 */
export type GuardDecision =
  | {
      stop: true;
      /** Only scheduling stops (suspended, or stopped after failures): explicit requests still run. */
      requestsRun: boolean;
      conditions: ConditionInput[];
      /** status.resolvedSchedule: the resolved schedule, or null to remove it (unparseable). Absent: unchanged. */
      resolvedSchedule?: string | null;
      event?: EventDecision;
      /** Scheduling ended (spec.maxRuns): the record says so once (limits.ts). */
      ended?: ScheduleEnd;
    }
  | { stop: false; schedule: Schedule; resolvedSchedule: string };

/** A CronJob's schedules as the guards read them: parsed, or the error naming the fields and values. */
type ParsedSchedules =
  { ok: true; schedules: CronJobSchedules } | { ok: false; error: { field: string; message: string } };

/** Longest value quoted from a field error: an annotation stored with admission bypassed can be any size. */
const MAX_QUOTED = 256;

/**
 * The CronJob's schedules (api/v1/schedules.ts), H hashed with `key`; the errors as one guard error: every field
 * named with its value (bounded), and the first error's field deciding the condition's reason (a zone error is
 * UnknownTimeZone, as for spec.timeZone).
 */
export function parsedSchedules(cronJob: unknown, key: HashKey): ParsedSchedules {
  const parsed = cronJobSchedules(cronJob, key);
  if (parsed.ok) return { ok: true, schedules: parsed.schedules };
  const message = parsed.errors.map((e) => `${e.field}: ${fieldErrorBody(bounded(e))}`).join("; ");
  return { ok: false, error: { field: parsed.errors[0]?.field ?? "spec.schedule", message } };
}

function bounded(e: FieldError): FieldError {
  const v = e.value;
  if (typeof v !== "string" || v.length <= MAX_QUOTED) return e;
  return { ...e, value: `${v.slice(0, MAX_QUOTED)}… (${v.length - MAX_QUOTED} more characters)` };
}

/**
 * Step 6, the guards: deleting, an unknown time zone, an unparseable schedule, suspended. `parsed` is the
 * CronJob's schedules parsed in their zones (the reconciler's cache); `activeCount` how many of its Jobs run.
 */
export function guards(
  cronJob: {
    metadata: Pick<CronJobWire["metadata"], "deletionTimestamp">;
    spec: Pick<CronJobWire["spec"], "timeZone" | "suspend" | "maxRuns">;
    /** status.stopped as step 5 left it, and the scheduled runs step 4 counted. */
    status?: Pick<CronJobWireStatus, "stopped" | "scheduledRuns">;
  },
  parsed: ParsedSchedules,
  activeCount: number,
): GuardDecision {
  const progressing = progressingCondition(activeCount);
  if (cronJob.metadata.deletionTimestamp) {
    return {
      stop: true,
      requestsRun: false,
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
      requestsRun: false,
      conditions: invalid("UnknownTimeZone", tzErr.message),
      event: { reason: EventReason.UnknownTimeZone, message: tzErr.message },
    };
  }
  if (!parsed.ok) {
    return {
      stop: true,
      requestsRun: false,
      conditions: invalid(
        isZoneField(parsed.error.field) ? "UnknownTimeZone" : "InvalidSchedule",
        parsed.error.message,
      ),
      resolvedSchedule: null,
      event: { reason: EventReason.UnparseableSchedule, message: parsed.error.message },
    };
  }
  const paused = pausedGuard(cronJob, progressing, parsed.schedules.resolved);
  if (paused) return paused;
  const ended = maxRunsEnd(cronJob.spec, cronJob.status);
  if (ended) return endedGuard(ended, activeCount, parsed.schedules.resolved);
  return { stop: false, schedule: parsed.schedules.schedule, resolvedSchedule: parsed.schedules.resolved };
}

/**
 * Scheduling paused, by spec.suspend or by step 5's stop after failures: like a suspended built-in CronJob, explicit
 * requests still run; a stop after failures is Degraded too. Undefined: not paused.
 */
function pausedGuard(
  cronJob: Parameters<typeof guards>[0],
  progressing: ConditionInput,
  resolvedSchedule: string,
): GuardDecision | undefined {
  if (cronJob.spec.suspend) {
    return {
      stop: true,
      requestsRun: true,
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
      resolvedSchedule,
    };
  }
  const stopped = cronJob.status?.stopped;
  if (!stopped) return undefined;
  const message =
    `Stopped after ${stopped.failures} failed runs in a row (spec.stopAfterConsecutiveFailures) at ${stopped.time}: ` +
    "no new Jobs are started; resume with `kubectl cron resume NAME` or by changing the spec.";
  return {
    stop: true,
    // Like a suspended CronJob: an explicit run-now request still runs.
    requestsRun: true,
    conditions: [
      { type: "Available", status: "False", reason: "StoppedAfterFailures", message },
      progressing,
      { type: "Degraded", status: "True", reason: "StoppedAfterFailures", message },
    ],
    resolvedSchedule,
  };
}

/**
 * Scheduling has ended (spec.maxRuns reached, or spec.endTime passed with no slot left): like a suspended CronJob,
 * explicit requests still run; nothing is wrong, so it is not Degraded.
 */
function endedGuard(
  ended: ScheduleEnd,
  activeCount: number,
  resolvedSchedule: string,
): Extract<GuardDecision, { stop: true }> {
  return { stop: true, requestsRun: true, conditions: endedConditions(ended, activeCount), resolvedSchedule, ended };
}

/** spec.timeZone, or the time zone of one of the other schedules (the more-schedules annotation's entries). */
function isZoneField(field: string): boolean {
  return field === "spec.timeZone" || field.endsWith("].timeZone");
}

/** Step 6's status: the resolved schedule as the guards decided, and no nextScheduleTime until step 9 sets it. */
export function statusAfterGuards(status: Readonly<CronJobWireStatus>, guard: GuardDecision): CronJobWireStatus {
  const { nextScheduleTime: _next, resolvedSchedule, ...rest } = status;
  if (guard.resolvedSchedule === null) return rest;
  const resolved = guard.resolvedSchedule ?? resolvedSchedule;
  return resolved === undefined ? rest : { ...rest, resolvedSchedule: resolved };
}

/** A stopping guard's Event describes the CronJob's state: once per reason and message. */
export function guardEvents(guard: GuardDecision): StateEvent[] {
  const e = guard.stop ? guard.event : undefined;
  return e ? [{ ...e, once: { topic: "guard", key: `${e.reason}\u0000${e.message}` } }] : [];
}

/**
 * What a CronJob's parse reads besides its namespace and name, as the parse cache keys it (memory.ts): the schedule
 * and zone, the other schedules' annotation, the window (spec.startTime, spec.endTime), and with no schedule of its
 * own whether spec.after names an upstream.
 */
function parseKeyOf(cronJob: {
  metadata: { annotations?: Record<string, string> | undefined };
  spec: {
    schedule?: string | undefined;
    timeZone?: string | undefined;
    startTime?: string | undefined;
    endTime?: string | undefined;
    after?: unknown;
  };
}): { schedule: string; timeZone: string | undefined; more: string | undefined } {
  const { schedule, timeZone, startTime, endTime } = cronJob.spec;
  const window =
    startTime === undefined && endTime === undefined ? "" : `\u0001${startTime ?? ""}\u0001${endTime ?? ""}`;
  const more = `${cronJob.metadata.annotations?.[MORE_SCHEDULES_ANNOTATION] ?? ""}${window}` || undefined;
  const own = schedule ?? (upstreamsOf(cronJob.spec).length ? "\u0002after" : "\u0002none");
  return { schedule: own, timeZone, more };
}

/**
 * Step 6's parse: the parsed schedules, from memory's cache (per CronJob for an H schedule, shared otherwise), keyed by
 * all they are parsed from (parseKeyOf).
 */
export function cachedParse(
  memory: Pick<ReconcilerMemory<unknown>, "parsedSchedule">,
  cronJob: Parameters<typeof parseKeyOf>[0],
  key: HashKey,
): ParsedSchedules {
  const { schedule, timeZone, more } = parseKeyOf(cronJob);
  return memory.parsedSchedule(key, schedule, timeZone, () => parsedSchedules(cronJob, key), more);
}
