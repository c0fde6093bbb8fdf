// The webhook's check of spec.exclusions: its own windows must parse (each error names the window's field and
// value), and they must leave the schedule a slot: exclusions that leave none ever are refused, as a schedule that
// never fires is; none in the next year is a warning. The calendars it names are read from the manager's cache and
// only ever warned about (a calendar may be applied, changed or deleted after the CronJob): one that is missing or
// does not parse (the controller would hold the slots), and calendars that leave the schedule no slot.
import { type CalendarRead, calendarNamesOf, type CronJobSchedules, exclusionsOf } from "../api/v1/index.ts";
import { Exclusions, parseExclusionWindows, slotsLeft } from "../api/v1/schedule/index.ts";
import { type FieldError, invalidField } from "../runtime/field.ts";
import { isObj } from "../runtime/objects.ts";
import type { AdmissionCheck } from "./admission_check.ts";

type WindowError = Extract<ReturnType<typeof parseExclusionWindows>, { ok: false }>["errors"][number];

/** The window parser's errors as field errors: the field, its value and the reason, as the parser says them. */
function fieldErrorsOf(errors: readonly WindowError[]): FieldError[] {
  return errors.map((e) =>
    e.type === "TooMany"
      ? { field: e.field, type: "FieldValueTooMany", value: e.value, detail: e.reason }
      : invalidField(e.field, e.value, e.reason),
  );
}

/**
 * The errors of a list of windows stored at `path` ("spec.exclusions.windows" of a CronJob, "spec.windows" of an
 * ExclusionCalendar): one per field at fault, naming it and its value, in the same words wherever the windows are.
 */
export function windowErrors(windows: unknown, path: string): FieldError[] {
  const parsed = parseExclusionWindows(windows, path);
  return parsed.ok ? [] : fieldErrorsOf(parsed.errors);
}

export function validateExclusions(
  exclusions: unknown,
  schedules: CronJobSchedules | undefined,
  now: Date,
): { errors: FieldError[]; warnings: string[] } {
  if (!isObj(exclusions) || exclusions.windows === undefined) return { errors: [], warnings: [] };
  const parsed = parseExclusionWindows(exclusions.windows, "spec.exclusions.windows");
  if (!parsed.ok) return { errors: fieldErrorsOf(parsed.errors), warnings: [] };
  if (!schedules || parsed.windows.length === 0) return { errors: [], warnings: [] };
  const own = new Exclusions([{ by: "spec.exclusions", windows: parsed.windows }]);
  // Several schedules: a slot is left when any of them keeps one (each reads the windows in its own zone).
  const left = schedules.written.set.members.map((m) => slotsLeft(m.schedule, own, now));
  if (left.includes("ok")) return { errors: [], warnings: [] };
  if (left.every((l) => l === "never"))
    return {
      errors: [
        invalidField(
          "spec.exclusions.windows",
          exclusions.windows,
          "leave the schedule no time to run: every scheduled time falls in a window",
        ),
      ],
      warnings: [],
    };
  return {
    errors: [],
    warnings: [
      "spec.exclusions.windows: leave the schedule no time to run in the next year: every scheduled time until then falls in a window",
    ],
  };
}

/** A calendar of the request's namespace as the manager's cache has it; "unknown" while the cache cannot say. */
type CalendarLookup = (namespace: string, name: string) => CalendarRead | "unknown";

/**
 * Warnings for the calendars spec.exclusions names: one missing or not parsing (its slots would be held until it is
 * fixed), and exclusions that, with the calendars, leave the schedule no slot ever or in the next year. Nothing when
 * the cache cannot say, or when the CronJob's own windows already leave none (validateExclusions says so).
 */
function calendarWarnings(
  spec: { exclusions?: unknown },
  namespace: string,
  schedules: CronJobSchedules | undefined,
  lookup: CalendarLookup,
  now: Date,
): string[] {
  const names = calendarNamesOf(spec);
  if (!names.length) return [];
  const reads: CalendarRead[] = [];
  for (const name of names) {
    const read = lookup(namespace, name);
    if (read === "unknown") return [];
    reads.push(read);
  }
  const view = exclusionsOf({ metadata: { namespace }, spec }, reads);
  if (view.hold) return view.hold.calendar ? [view.hold.problem] : [];
  if (!schedules || !view.exclusions) return [];
  const members = schedules.written.set.members;
  const ownOnly = exclusionsOf({ metadata: { namespace }, spec: { exclusions: { windows: windowsOf(spec) } } }, []);
  if (ownOnly.exclusions && !members.some((m) => slotsLeft(m.schedule, ownOnly.exclusions!, now) === "ok")) return [];
  const left = members.map((m) => slotsLeft(m.schedule, view.exclusions!, now));
  if (left.includes("ok")) return [];
  const by = `spec.exclusions.calendars (${names.join(", ")})`;
  return left.every((l) => l === "never")
    ? [
        `${by}: with these calendars every scheduled time falls in a window: the schedule would never run (not refused: a calendar can change)`,
      ]
    : [`${by}: with these calendars every scheduled time in the next year falls in a window`];
}

/** The calendars' check at admission (controllers/calendars.ts's input): calendarWarnings once the windows pass. */
export function calendarCheck(lookup: CalendarLookup): AdmissionCheck {
  return ({ spec, namespace, schedules, now, exclusionsValid }) =>
    exclusionsValid ? { warnings: calendarWarnings(spec, namespace, schedules, lookup, now) } : {};
}

function windowsOf(spec: { exclusions?: unknown }): unknown {
  return isObj(spec.exclusions) ? spec.exclusions.windows : undefined;
}
