// A CronJob's schedules as the hub (v1, the storage version) keeps them: spec.schedule with spec.timeZone is
// the first, and the schedules a v2 object has after its first are kept in MORE_SCHEDULES_ANNOTATION. The
// conversion (api/v2/conversion.ts) writes and takes back that annotation; the controller, the webhooks and
// `kubectl cron` read a CronJob's whole list through scheduleEntriesOf, so a v1 reader never sees one schedule
// where a v2 writer put several.
import { type FieldError, invalidField } from "../../runtime/field.ts";
import { GROUP } from "./groupversion_info.ts";
import { type HashKey, parseScheduleList, ScheduleSet } from "./schedule/index.ts";

/**
 * On a v1 CronJob: its schedules after the first, as JSON `[{"schedule":"…","timeZone":"…"}, …]` (timeZone
 * left out when unset), written by the v1 ↔ v2 conversion.
 */
export const MORE_SCHEDULES_ANNOTATION = `${GROUP}/more-schedules`;

/** One schedule of a CronJob's list: a cron expression and the zone it is evaluated in (UTC when unset). */
export interface ScheduleEntry {
  schedule: unknown;
  timeZone?: unknown;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** An entry with its fields in a fixed order: what the annotation holds, so a round trip is byte for byte. */
export function scheduleEntry(v: unknown): ScheduleEntry {
  const e = isObj(v) ? v : {};
  return { schedule: e.schedule, ...(e.timeZone !== undefined ? { timeZone: e.timeZone } : {}) };
}

/** The annotation's value for `more` (the schedules after the first). */
export function moreSchedulesValue(more: readonly unknown[]): string {
  return JSON.stringify(more.map(scheduleEntry));
}

/**
 * The annotation's schedules, or undefined when `text` is not what moreSchedulesValue writes (not JSON, not a
 * non-empty list of entries with a string schedule, or not in its canonical form).
 */
export function parseMoreSchedules(text: string | undefined): ScheduleEntry[] | undefined {
  if (text === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(v) || v.length === 0 || !v.every((e) => isObj(e) && typeof e.schedule === "string")) {
    return undefined;
  }
  if (moreSchedulesValue(v) !== text) return undefined;
  return v.map(scheduleEntry);
}

const ANNOTATION_FIELD = `metadata.annotations[${MORE_SCHEDULES_ANNOTATION}]`;

type EntriesResult = { ok: true; entries: ScheduleEntry[] } | { ok: false; error: FieldError };

/**
 * A v1 CronJob's schedules, first spec.schedule (with spec.timeZone), then the annotation's. An annotation
 * that is not the conversion's own writing is an error naming it: the CronJob's schedules are then unknown,
 * and guessing would run a schedule nobody asked for, or miss one.
 */
export function scheduleEntriesOf(obj: unknown): EntriesResult {
  const o = isObj(obj) ? obj : {};
  const spec = isObj(o.spec) ? o.spec : {};
  const meta = isObj(o.metadata) ? o.metadata : {};
  const annotations = isObj(meta.annotations) ? meta.annotations : {};
  const first: ScheduleEntry = {
    schedule: spec.schedule,
    ...(spec.timeZone !== undefined ? { timeZone: spec.timeZone } : {}),
  };
  const raw = annotations[MORE_SCHEDULES_ANNOTATION];
  if (raw === undefined) return { ok: true, entries: [first] };
  const more = typeof raw === "string" ? parseMoreSchedules(raw) : undefined;
  if (!more) {
    return {
      ok: false,
      error: invalidField(
        ANNOTATION_FIELD,
        raw,
        'must be a JSON list of {"schedule": "<cron>", "timeZone": "<IANA zone>"} as the v2 API writes it ' +
          "(set spec.schedules through batch.tutorial.kubebuilder.io/v2 instead), or be removed",
      ),
    };
  }
  return { ok: true, entries: [first, ...more] };
}

/** Where a schedule list error of a v1 object points: entry 0 is spec.schedule/spec.timeZone, the rest the annotation. */
export function v1ScheduleField(field: string): string {
  const m = /^spec\.schedules(?:\[(\d+)\])?(.*)$/.exec(field);
  if (!m) return field;
  if (m[1] === undefined) return ANNOTATION_FIELD;
  const index = Number(m[1]);
  if (index === 0) return m[2] === ".timeZone" ? "spec.timeZone" : m[2] === ".schedule" ? "spec.schedule" : "spec";
  return `${ANNOTATION_FIELD}[${index - 1}]${m[2]}`;
}

type CronJobSchedulesResult =
  | { ok: true; set: ScheduleSet; entries: ScheduleEntry[]; warnings: string[] }
  | { ok: false; errors: FieldError[]; warnings: string[] };

/**
 * A v1 CronJob's schedules validated and parsed into a ScheduleSet (H hashed with `key`), errors at the v1
 * object's own fields (spec.schedule, spec.timeZone, the annotation). Never throws.
 */
export function parseCronJobSchedules(obj: unknown, key: HashKey): CronJobSchedulesResult {
  const entries = scheduleEntriesOf(obj);
  if (!entries.ok) return { ok: false, errors: [entries.error], warnings: [] };
  const list = parseScheduleList(entries.entries, key);
  const warnings = list.warnings.map((w) => w.replace(/^(\S+):/, (_, f: string) => `${v1ScheduleField(f)}:`));
  if (!list.ok) {
    return { ok: false, errors: list.errors.map((e) => ({ ...e, field: v1ScheduleField(e.field) })), warnings };
  }
  return { ok: true, set: list.set, entries: entries.entries, warnings };
}
