// Exclusion windows: times a CronJob skips, given inline (spec.exclusions.windows) or in a shared
// ExclusionCalendar (spec.windows). This module parses a stored list of them into compiled windows
// (compiledwindows.ts), with apimachinery-style field errors, and names each in canonical text for messages;
// excludingschedule.ts reads slots against them (zones, DST, the schedule that skips them). No clock reads, no
// I/O: every answer is a function of the arguments.

import {
  AbsoluteWindow,
  type CompiledWindow,
  type DaySet,
  RecurringWindow,
  type WindowDays,
} from "./compiledwindows.ts";
import { GO_SPACE, MONTH_LONG_NAMES, parseScheduleSpec, type CronFields } from "./grammar.ts";

export const MAX_EXCLUSION_WINDOWS = 366;

const MAX_NAME_LENGTH = 63;
const MAX_STRING_LENGTH = 64;
const MAX_QUOTED_VALUE = 256;

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const ABSOLUTE_KEYS = ["start", "end"] as const;
const RECURRING_KEYS = ["daysOfMonth", "months", "daysOfWeek", "from", "to"] as const;
const KEYS: readonly string[] = ["name", ...ABSOLUTE_KEYS, ...RECURRING_KEYS];

interface ExclusionWindow {
  name?: string;
  start?: string;
  end?: string;
  daysOfMonth?: string;
  months?: string;
  daysOfWeek?: string;
  from?: string;
  to?: string;
}

interface FieldError {
  field: string;
  value: unknown;
  /** The whole apimachinery-style line: `<field>: Invalid value: <value>: <reason>`. */
  message: string;
  /** What the line says after the value; "TooMany": the list is too long (`<field>: Too many: <count>: <reason>`). */
  reason: string;
  type?: "TooMany";
}

// ---------------------------------------------------------------------------------------------------------------
// Messages

function cut(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max)}… (${s.length - max} more characters)`;
}

// As apimachinery prints values (and runtime/field.ts): strings quoted, numbers, booleans and null bare, the rest
// as JSON; cut, because a stored value can be any size and messages go into conditions and Events.
function quote(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(cut(value, MAX_QUOTED_VALUE));
  if (value === null || value === undefined) return "null";
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  try {
    return cut(JSON.stringify(value) ?? String(value), MAX_QUOTED_VALUE);
  } catch {
    return `"${typeof value}"`;
  }
}

function invalid(field: string, value: unknown, reason: string): FieldError {
  return { field, value, message: `${field}: Invalid value: ${quote(value)}: ${reason}`, reason };
}

// ---------------------------------------------------------------------------------------------------------------
// Dates and times

const MONTH_NAMES = MONTH_LONG_NAMES.map((n) => n.slice(0, 3));
/** Monday first, as people list weekdays; index 7 is Sunday again (cron's 0). */
const ISO_DAY_NAMES = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

const LOCAL_DATE_TIME = /^(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])(?:T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?)?$/;
const DATE_FORMAT = "not a date (YYYY-MM-DD) or local date-time (YYYY-MM-DDTHH:MM[:SS])";
const TIME_OF_DAY = /^([01]\d|2[0-3]):([0-5]\d)$/;

interface LocalTime {
  readonly wall: number;
  readonly isDate: boolean;
  readonly text: string;
}

function wallOf(year: number, month: number, day: number, ms = 0): number {
  const d = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  d.setUTCFullYear(year, month - 1, day);
  return d.getTime() + ms;
}

function daysInMonth(year: number, month: number): number {
  return new Date(wallOf(year, month + 1, 0)).getUTCDate();
}

function parseLocalTime(field: string, value: string): LocalTime | FieldError {
  const m = LOCAL_DATE_TIME.exec(value);
  if (!m) return invalid(field, value, DATE_FORMAT);
  const [, y, mo, d, hh, mm, ss] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (day > daysInMonth(year, month)) {
    return invalid(
      field,
      value,
      `no such day: ${MONTH_LONG_NAMES[month - 1]} ${y} has ${daysInMonth(year, month)} days`,
    );
  }
  const date = `${y}-${mo}-${d}`;
  if (hh === undefined) return { wall: wallOf(year, month, day), isDate: true, text: date };
  const seconds = Number(ss ?? 0);
  const ms = Number(hh) * HOUR + Number(mm) * MINUTE + seconds * SECOND;
  const text = `${date}T${hh}:${mm}${seconds ? `:${ss}` : ""}`;
  return { wall: wallOf(year, month, day, ms), isDate: false, text };
}

/** "HH:MM" as ms after midnight; `to` may also be "24:00". */
function parseTimeOfDay(field: string, value: string, allowEndOfDay: boolean): number | FieldError {
  if (allowEndOfDay && value === "24:00") return DAY;
  const m = TIME_OF_DAY.exec(value);
  if (!m) return invalid(field, value, `not a time of day (HH:MM, 00:00-${allowEndOfDay ? "24:00" : "23:59"})`);
  return Number(m[1]) * HOUR + Number(m[2]) * MINUTE;
}

function timeText(ms: number): string {
  const h = Math.floor(ms / HOUR);
  const m = Math.floor((ms % HOUR) / MINUTE);
  return `${String(h).padStart(2, "0")}:${String(m).padStart(2, "0")}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Parsing

type Raw = ExclusionWindow;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The window's string fields, with an error for each unknown key and each value that is not a bounded string. */
function readFields(item: Record<string, unknown>, path: string, errors: FieldError[]): Raw {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(item)) {
    const value = item[key];
    const field = `${path}.${cut(key, MAX_STRING_LENGTH)}`;
    // An explicit undefined is what TypeScript callers write for "absent"; JSON cannot say it.
    if (value === undefined) continue;
    if (!KEYS.includes(key)) {
      errors.push(invalid(field, value, `unknown field; a window has ${KEYS.join(", ")}`));
    } else if (typeof value !== "string") {
      errors.push(invalid(field, value, "must be a string"));
    } else {
      const max = key === "name" ? MAX_NAME_LENGTH : MAX_STRING_LENGTH;
      if (value.length > max) errors.push(invalid(field, value, `must be at most ${max} characters`));
      else raw[key] = value;
    }
  }
  return raw as Raw;
}

function checkName(name: string | undefined, path: string, errors: FieldError[]): void {
  if (name === undefined) return;
  if (name.trim() === "") errors.push(invalid(`${path}.name`, name, "must not be empty"));
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  else if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) {
    errors.push(invalid(`${path}.name`, name, "must not contain control characters"));
  }
}

function compileAbsolute(raw: Raw, path: string, errors: FieldError[]): CompiledWindow | undefined {
  if (raw.start === undefined) {
    if (raw.end !== undefined) errors.push(invalid(`${path}.end`, raw.end, "needs a start"));
    return undefined;
  }
  const start = parseLocalTime(`${path}.start`, raw.start);
  const end = raw.end === undefined ? undefined : parseLocalTime(`${path}.end`, raw.end);
  if ("message" in start) errors.push(start);
  if (end && "message" in end) errors.push(end);
  if ("message" in start || (end && "message" in end)) return undefined;

  if (end === undefined && !start.isDate) {
    errors.push(invalid(`${path}.start`, raw.start, "a date-time start needs an end (a date alone is that whole day)"));
    return undefined;
  }
  const endWall = end === undefined ? start.wall + DAY : end.isDate ? end.wall + DAY : end.wall;
  if (endWall <= start.wall) {
    errors.push(invalid(`${path}.end`, raw.end, `must be after start ${JSON.stringify(raw.start)}`));
    return undefined;
  }
  const single = start.isDate && (end === undefined || end.text === start.text);
  const text = raw.name ?? (single ? start.text : `${start.text} to ${end?.text ?? ""}`);
  return new AbsoluteWindow(text, start.wall, endWall);
}

type FieldName = "day-of-month" | "month" | "day-of-week";

/** One cron day field, parsed by the schedule grammar itself so windows and schedules accept the same syntax. */
function parseDayField(field: string, value: string, which: FieldName): CronFields | FieldError {
  if (GO_SPACE.test(value) || /\s/.test(value)) return invalid(field, value, "must not contain spaces");
  const spec =
    which === "day-of-month" ? `0 0 ${value} * *` : which === "month" ? `0 0 * ${value} *` : `0 0 * * ${value}`;
  const r = parseScheduleSpec(spec);
  if (!r.ok) return invalid(field, value, r.reason);
  if (r.spec.kind !== "cron") return invalid(field, value, "not a cron field");
  return r.spec.fields;
}

function daySet(values: readonly number[], min: number, max: number): DaySet {
  if (values.length === max - min + 1) return undefined;
  const set: boolean[] = [];
  for (const v of values) set[v] = true;
  return set;
}

/** "1-7", "1,15", "Mon-Fri", "Sat,Sun": runs of three or more as ranges. */
function listText(values: readonly number[], name: (v: number) => string): string {
  const parts: string[] = [];
  for (let i = 0; i < values.length;) {
    let j = i;
    while (j + 1 < values.length && values[j + 1] === (values[j] ?? 0) + 1) j++;
    const [a, b] = [values[i] ?? 0, values[j] ?? 0];
    if (j - i >= 2) parts.push(`${name(a)}-${name(b)}`);
    else for (let k = i; k <= j; k++) parts.push(name(values[k] ?? 0));
    i = j + 1;
  }
  return parts.join(",");
}

/** Evenly spaced days (a cron step) as cron writes them, "1-31/2", not spelled out at length. */
function stepText(values: readonly number[]): string | undefined {
  const [a = 0, b = 0] = values;
  const step = b - a;
  if (values.length < 4 || step < 2 || values.some((v, i) => v !== a + i * step)) return undefined;
  return `${a}-${values[values.length - 1] ?? a}/${step}`;
}

function setValues(set: DaySet): number[] {
  const out: number[] = [];
  set?.forEach((on, v) => {
    if (on) out.push(v);
  });
  return out;
}

function recurringText(days: WindowDays, from: number, to: number) {
  const parts: string[] = [];
  const dom = setValues(days.daysOfMonth);
  if (dom.length > 0) parts.push(`${dom.length === 1 ? "day" : "days"} ${stepText(dom) ?? listText(dom, String)}`);
  const months = setValues(days.months);
  if (months.length > 0) parts.push(listText(months, (m) => MONTH_NAMES[m - 1] ?? String(m)));
  const isoDays = setValues(days.daysOfWeek)
    .map((d) => (d === 0 ? 7 : d))
    .sort((a, b) => a - b);
  if (isoDays.length > 0) parts.push(listText(isoDays, (d) => ISO_DAY_NAMES[d] ?? String(d)));
  const time = `${timeText(from)}–${timeText(to)}`;
  return parts.length === 0 ? `daily ${time}` : `${parts.join(", ")}, ${time}`;
}

function compileRecurring(raw: Raw, path: string, errors: FieldError[]): CompiledWindow | undefined {
  const before = errors.length;
  const field = (key: "daysOfMonth" | "months" | "daysOfWeek", which: FieldName): DaySet => {
    const value = raw[key];
    if (value === undefined) return undefined;
    const r = parseDayField(`${path}.${key}`, value, which);
    if ("message" in r) {
      errors.push(r);
      return undefined;
    }
    if (which === "day-of-month") return daySet(r.dayOfMonth, 1, 31);
    return which === "month" ? daySet(r.month, 1, 12) : daySet(r.dayOfWeek, 0, 6);
  };
  const days = {
    daysOfMonth: field("daysOfMonth", "day-of-month"),
    months: field("months", "month"),
    daysOfWeek: field("daysOfWeek", "day-of-week"),
  };
  const from = raw.from === undefined ? 0 : parseTimeOfDay(`${path}.from`, raw.from, false);
  const to = raw.to === undefined ? DAY : parseTimeOfDay(`${path}.to`, raw.to, true);
  if (typeof from !== "number") errors.push(from);
  if (typeof to !== "number") errors.push(to);
  if (errors.length === before) checkDaysOccur(raw, path, errors);
  if (errors.length > before || typeof from !== "number" || typeof to !== "number") return undefined;
  return new RecurringWindow(raw.name ?? recurringText(days, from, to), days, from, to);
}

// Days 30-31 with months FEB only never match; the grammar already knows which months have which days.
function checkDaysOccur(raw: Raw, path: string, errors: FieldError[]): void {
  if (raw.daysOfMonth === undefined || raw.months === undefined) return;
  const r = parseScheduleSpec(`0 0 ${raw.daysOfMonth} ${raw.months} *`);
  if (!r.ok) {
    const reason = r.reason.replace(/^never fires: /, "");
    errors.push(invalid(`${path}.daysOfMonth`, raw.daysOfMonth, `never matches: ${reason}`));
  }
}

function compileWindow(item: unknown, path: string, errors: FieldError[]): CompiledWindow | undefined {
  if (!isObject(item)) {
    errors.push(invalid(path, item, "must be an object (a window: start and end, or recurring fields)"));
    return undefined;
  }
  const before = errors.length;
  const raw = readFields(item, path, errors);
  checkName(raw.name, path, errors);
  const absolute = ABSOLUTE_KEYS.filter((k) => raw[k] !== undefined || item[k] !== undefined);
  const recurring = RECURRING_KEYS.filter((k) => raw[k] !== undefined || item[k] !== undefined);
  if (absolute.length > 0 && recurring.length > 0) {
    for (const k of recurring) {
      errors.push(
        invalid(
          `${path}.${k}`,
          item[k],
          `not allowed with ${absolute.join(" and ")}: a window is either absolute (start, end) or recurring (${RECURRING_KEYS.join(", ")})`,
        ),
      );
    }
    return undefined;
  }
  if (absolute.length === 0 && recurring.length === 0) {
    errors.push(
      invalid(path, item, `a window needs start (and optionally end) or at least one of ${RECURRING_KEYS.join(", ")}`),
    );
    return undefined;
  }
  // A field already refused (not a string, too long) is not parsed, and the window is not compiled.
  if (errors.length > before) return undefined;
  return absolute.length > 0 ? compileAbsolute(raw, path, errors) : compileRecurring(raw, path, errors);
}

/**
 * Parses a list of windows stored at `path` (e.g. "spec.exclusions.windows"); errors name each item as
 * `${path}[i]` and its fields below that. Undefined is an empty list. Never throws: any input gives windows or
 * errors.
 */
export function parseExclusionWindows(
  list: unknown,
  path: string,
): { ok: true; windows: CompiledWindow[] } | { ok: false; errors: FieldError[] } {
  try {
    if (list === undefined) return { ok: true, windows: [] };
    if (!Array.isArray(list)) return { ok: false, errors: [invalid(path, list, "must be a list of windows")] };
    if (list.length > MAX_EXCLUSION_WINDOWS) {
      const reason = `must have at most ${MAX_EXCLUSION_WINDOWS} items`;
      const message = `${path}: Too many: ${list.length}: ${reason}`;
      return { ok: false, errors: [{ field: path, value: list.length, message, reason, type: "TooMany" }] };
    }
    const errors: FieldError[] = [];
    const windows: CompiledWindow[] = [];
    for (const [i, item] of list.entries()) {
      const w = compileWindow(item, `${path}[${i}]`, errors);
      if (w) windows.push(w);
    }
    return errors.length > 0 ? { ok: false, errors } : { ok: true, windows };
  } catch (e) {
    // Only reachable through a bug (or an exotic object such as a Proxy); still a result, as promised.
    return {
      ok: false,
      errors: [invalid(path, "", `could not be parsed: ${e instanceof Error ? e.message : String(e)}`)],
    };
  }
}
