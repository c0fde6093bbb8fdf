// Step 6's input: a CronJob's schedules, the union of spec.schedule and the ones a v2 object keeps in
// MORE_SCHEDULES_ANNOTATION, as one Schedule (UnionSchedule) the schedule steps run unchanged; and what a slot's
// Job says about the schedules it came from. Pure.
import {
  MAX_SCHEDULE_LENGTH,
  parseCronJobSchedules,
  type ScheduleEntry,
  type ScheduleSource,
  scheduleEntriesOf,
} from "../api/v1/index.ts";
import {
  type HashKey,
  parseHashedSchedule,
  resolveHashedSchedule,
  ScheduleSet,
  UnionSchedule,
} from "../api/v1/schedule/index.ts";
import { type FieldError, fieldErrorBody } from "../runtime/field.ts";

/** A CronJob's schedules, parsed: what the guards check and the schedule steps compute slots with. */
export type ParsedSchedules =
  | {
      ok: true;
      /** The union as one Schedule; with one schedule, exactly that schedule's slots. */
      schedule: UnionSchedule;
      /** status.resolvedSchedule: each schedule with H resolved, joined by "; " (one schedule: its text alone). */
      resolved: string;
      /** What each slot's Job names as its sources; one entry per member, by index. */
      sources: ReadonlyMap<number, ScheduleSource>;
    }
  | { ok: false; error: { field: string; message: string } };

/** Longest value quoted from a field error: an annotation stored with admission bypassed can be any size. */
const MAX_QUOTED = 256;

/**
 * The CronJob's schedules. Without the annotation, spec.schedule goes through the single-schedule parse as
 * before (the same resolved text and the same error messages); with it, parseCronJobSchedules validates the
 * whole list, errors at the v1 fields (the annotation's entries included).
 */
export function parseSchedules(cronJob: unknown, key: HashKey): ParsedSchedules {
  const entries = scheduleEntriesOf(cronJob);
  if (entries.ok && entries.entries.length === 1) return parseOne(entries.entries[0]!, key);
  const list = parseCronJobSchedules(cronJob, key);
  if (!list.ok) return { ok: false, error: listError(list.errors) };
  return {
    ok: true,
    schedule: new UnionSchedule(list.set),
    resolved: joinedWithin(
      list.set.members.map((m) => resolvedText(m.text, key)),
      MAX_SCHEDULE_LENGTH,
    ),
    sources: sourcesOf(list.set, list.entries),
  };
}

/**
 * The texts joined by "; ", cut to `max` characters with "…": status.resolvedSchedule has the CRD's maxLength, and
 * a status the API server refuses would stop every status write of the CronJob.
 */
function joinedWithin(texts: readonly string[], max: number): string {
  const joined = texts.join("; ");
  return joined.length <= max ? joined : `${joined.slice(0, max - 1)}…`;
}

/** A member's text with H resolved. Every member parsed, so it resolves; the written text satisfies the types. */
function resolvedText(text: string, key: HashKey): string {
  const r = resolveHashedSchedule(text, key);
  return r.ok ? r.resolved : text;
}

function parseOne(entry: ScheduleEntry, key: HashKey): ParsedSchedules {
  const tz = entry.timeZone as string | undefined;
  const parsed = parseHashedSchedule(entry.schedule as string, key, tz);
  if (!parsed.ok) return parsed;
  const set = new ScheduleSet([{ index: 0, text: String(entry.schedule), schedule: parsed.schedule }]);
  return { ok: true, schedule: new UnionSchedule(set), resolved: parsed.resolved, sources: sourcesOf(set, [entry]) };
}

function sourcesOf(set: ScheduleSet, entries: readonly ScheduleEntry[]): Map<number, ScheduleSource> {
  const out = new Map<number, ScheduleSource>();
  for (const m of set.members) {
    const tz = entries[m.index]?.timeZone;
    out.set(m.index, { index: m.index, schedule: m.text, ...(typeof tz === "string" ? { timeZone: tz } : {}) });
  }
  return out;
}

/**
 * The list's errors as one guard error: every field named with its value (bounded), and the first error's field
 * deciding the condition's reason (a zone error is UnknownTimeZone, as for spec.timeZone).
 */
function listError(errors: readonly FieldError[]): { field: string; message: string } {
  const message = errors.map((e) => `${e.field}: ${fieldErrorBody(bounded(e))}`).join("; ");
  return { field: errors[0]?.field ?? "spec.schedule", message };
}

function bounded(e: FieldError): FieldError {
  const v = e.value;
  if (typeof v !== "string" || v.length <= MAX_QUOTED) return e;
  return { ...e, value: `${v.slice(0, MAX_QUOTED)}… (${v.length - MAX_QUOTED} more characters)` };
}

/**
 * What the `@every` members of a CronJob with several schedules count from: its creation time, each member's own
 * grid, so another member's run (which moves lastScheduleTime) does not re-phase it. Undefined for one schedule,
 * which counts from lastScheduleTime ?? creationTimestamp as always (scheduleDecision's default).
 */
export function everyAnchor(parsed: ParsedSchedules, creationTimestamp: string | undefined): Date | undefined {
  return parsed.ok && parsed.schedule.set.members.length > 1 && creationTimestamp
    ? new Date(creationTimestamp)
    : undefined;
}

/**
 * The sources a slot's Job is marked with: only for a CronJob with several schedules (a one-schedule CronJob's
 * Jobs are unchanged). `anchor`: what the `@every` members counted from when the slot was found.
 */
export function slotSources(
  parsed: ParsedSchedules,
  slot: Date,
  anchor: Date | undefined,
): ScheduleSource[] | undefined {
  if (!parsed.ok || parsed.schedule.set.members.length < 2) return undefined;
  const sources = parsed.schedule.sourcesAt(slot, anchor).map((i) => parsed.sources.get(i)!);
  return sources.length ? sources : undefined;
}
