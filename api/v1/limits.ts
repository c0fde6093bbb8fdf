// A CronJob's limits on its schedule: the window its slots lie in (spec.startTime, spec.endTime) and how many
// scheduled runs it makes (spec.maxRuns, counted in status.scheduledRuns). The window is applied where a CronJob's
// schedules are parsed (schedules.ts), so every reader of its slots sees it; what ended scheduling, and how it is
// said, is decided here for the controller, `kubectl cron` and the dashboard alike. Pure.
import { type FieldError, invalidField } from "../../runtime/field.ts";
import { isObj } from "../../runtime/objects.ts";
import type { SlotWindow } from "./schedule/index.ts";

/** What ended a CronJob's scheduling: a reason code (the Available condition's, the record's) and its facts. */
export type ScheduleEnd =
  { reason: "MaxRunsReached"; made: number; of: number } | { reason: "EndTimeReached"; endTime: Date };

const timeOf = (v: unknown): Date | undefined => {
  if (typeof v !== "string" || v === "") return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : new Date(t);
};

/**
 * spec.startTime and spec.endTime as a slot window; errors name the field and the value (a stored object written with
 * admission bypassed: the CronJob is then not scheduled, as with a schedule that does not parse).
 */
export function slotWindowOf(
  spec: unknown,
): { ok: true; window: SlotWindow | undefined } | { ok: false; errors: FieldError[] } {
  const s = isObj(spec) ? spec : {};
  const errors: FieldError[] = [];
  const read = (field: "startTime" | "endTime") => {
    const v = s[field];
    if (v === undefined) return undefined;
    const t = timeOf(v);
    if (!t) errors.push(invalidField(`spec.${field}`, v, "must be an RFC 3339 time, for example 2026-12-01T00:00:00Z"));
    return t;
  };
  const start = read("startTime");
  const end = read("endTime");
  if (start && end && end.getTime() <= start.getTime())
    errors.push(invalidField("spec.endTime", s.endTime, `must be after spec.startTime (${String(s.startTime)})`));
  if (errors.length) return { ok: false, errors };
  return { ok: true, window: start || end ? { ...(start ? { start } : {}), ...(end ? { end } : {}) } : undefined };
}

/** spec.maxRuns as stored: a positive integer, else none (the CRD bounds it; a stored value outside limits nothing). */
export function maxRunsOf(spec: { maxRuns?: unknown } | undefined): number | undefined {
  const v = spec?.maxRuns;
  return typeof v === "number" && Number.isInteger(v) && v >= 1 ? v : undefined;
}

/** The end spec.maxRuns puts to scheduling: reached when status.scheduledRuns is at it. */
export function maxRunsEnd(
  spec: { maxRuns?: unknown } | undefined,
  status: { scheduledRuns?: number | undefined } | undefined,
): Extract<ScheduleEnd, { reason: "MaxRunsReached" }> | undefined {
  const of = maxRunsOf(spec);
  const made = status?.scheduledRuns ?? 0;
  return of !== undefined && made >= of ? { reason: "MaxRunsReached", made, of } : undefined;
}

/** How many more scheduled runs spec.maxRuns allows (undefined: no limit). */
export function runsLeft(
  spec: { maxRuns?: unknown } | undefined,
  status: { scheduledRuns?: number | undefined } | undefined,
): number | undefined {
  const of = maxRunsOf(spec);
  return of === undefined ? undefined : Math.max(0, of - (status?.scheduledRuns ?? 0));
}

/**
 * The end spec.endTime puts to scheduling: it has passed and the schedule has no slot left to run (`nextSlot`: the
 * windowed schedule's next slot, undefined when none; `due`: slots still due this pass, run late by the missed-run
 * policy).
 */
export function endTimeEnd(
  spec: { endTime?: unknown } | undefined,
  now: Date,
  nextSlot: Date | undefined,
  due: number,
): Extract<ScheduleEnd, { reason: "EndTimeReached" }> | undefined {
  const endTime = timeOf(spec?.endTime);
  if (!endTime || endTime.getTime() >= now.getTime() || nextSlot !== undefined || due > 0) return undefined;
  return { reason: "EndTimeReached", endTime };
}

/** The start spec.startTime still holds scheduling to (undefined: none, or it has passed). */
export function notStartedUntil(spec: { startTime?: unknown } | undefined, now: Date): Date | undefined {
  const start = timeOf(spec?.startTime);
  return start && start.getTime() > now.getTime() ? start : undefined;
}

/** How every reader says an end (the condition's message, `why`, the dashboard): one sentence. */
export function scheduleEndText(end: ScheduleEnd): string {
  return end.reason === "MaxRunsReached"
    ? `ended: ${end.made} of ${end.of} runs made (spec.maxRuns); run-now and backfill requests still run`
    : `ended: spec.endTime ${end.endTime.toISOString().replace(".000Z", "Z")} has passed; run-now requests still run`;
}
