// Step 6, the guards: what keeps a CronJob from scheduling this pass (deleting, an unknown zone, an unparseable
// schedule, suspended, stopped after failures), with the conditions that say why. Pure.
import type { CronJobWire, CronJobWireStatus } from "../api/v1/index.ts";
import { type Schedule, validateTimeZone } from "../api/v1/schedule/index.ts";
import { type ConditionInput, NOT_DEGRADED, progressingCondition } from "./conditions.ts";
import type { EventDecision } from "./events.ts";

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
 * The CronJob's schedules as the guards read them: parsed (parseHashedSchedule's result for one schedule, the
 * union's for several, schedules.ts), or the error naming the field and value.
 */
type GuardedSchedule =
  { ok: true; schedule: Schedule; resolved: string } | { ok: false; error: { field: string; message: string } };

/**
 * Step 6, the guards: deleting, an unknown time zone, an unparseable schedule, suspended. `parsed` is the
 * CronJob's schedules parsed in their zones (the reconciler's cache); `activeCount` how many of its Jobs run.
 */
export function guards(
  cronJob: {
    metadata: Pick<CronJobWire["metadata"], "deletionTimestamp">;
    spec: Pick<CronJobWire["spec"], "timeZone" | "suspend">;
    /** status.stopped as step 4b left it. */
    status?: Pick<CronJobWireStatus, "stopped">;
  },
  parsed: GuardedSchedule,
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
        isZoneField(parsed.error.field) ? "UnknownTimeZone" : "InvalidSchedule",
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

/** spec.timeZone, or the time zone of one of the other schedules (the more-schedules annotation's entries). */
function isZoneField(field: string): boolean {
  return field === "spec.timeZone" || field.endsWith("].timeZone");
}

/** Step 6's status: the resolved schedule as the guards decided, and no nextScheduleTime until step 12. */
export function statusAfterGuards(status: Readonly<CronJobWireStatus>, guard: GuardDecision): CronJobWireStatus {
  const { nextScheduleTime: _next, resolvedSchedule, ...rest } = status;
  if (guard.resolvedSchedule === null) return rest;
  const resolved = guard.resolvedSchedule ?? resolvedSchedule;
  return resolved === undefined ? rest : { ...rest, resolvedSchedule: resolved };
}
