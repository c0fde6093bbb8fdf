// Exclusion windows: times a CronJob skips, given inline (spec.exclusions.windows) or in a shared
// ExclusionCalendar (spec.windows). No clock reads, no I/O: every answer is a function of the arguments (an
// ExcludingSchedule remembers what its last searches found, which changes how fast it answers, never what).
//
// Windows are wall-clock spans with no zone of their own: a CronJob reads them in its schedule's zone (each
// schedule's own zone when it has several), so one calendar serves CronJobs in any zone. A slot is excluded when
// its own wall-clock time — the instant the schedule computed, read in the schedule's zone — falls in a span.
// DST follows from that rule alone:
//
// - Fall back: the repeated hour shows twice on the wall clock, so a window over it holds both occurrences (in
//   Europe/Berlin on 2026-10-25 a 02:00–03:00 window holds 02:30 CEST and 02:30 CET).
// - Spring forward: the missing hour never shows, so a window inside the gap holds nothing; a fixed-hour slot
//   the schedule shifts out of the gap (02:30 -> 03:30 CEST) is tested at 03:30, where it really fires.
//
// Instant -> wall clock goes through ZoneRules (transitions cached per zone), never Intl per slot: the
// controller asks on every reconcile, and a search may test many slots.
//
// ExcludingSchedule skips whole covered spans at once (a two-week freeze over a minutely schedule is one jump,
// not 20 000 slot tests), jumping only as far as the offset in force at the slot is known to hold, so a DST
// change inside a span never makes it skip a slot the span does not hold.

import { GO_SPACE, MONTH_LONG_NAMES, parseScheduleSpec, type CronFields } from "./grammar.ts";
import { NO_SLOT, type Schedule, WrappedSchedule } from "./schedule.ts";
import { ZoneRules } from "./timezone.ts";

export const MAX_EXCLUSION_WINDOWS = 366;
/** Consecutive excluded slots ExcludingSchedule tests before it gives up (see NO_SLOT). */
export const MAX_SKIPPED_SLOTS = 100_000;

const MAX_NAME_LENGTH = 63;
const MAX_STRING_LENGTH = 64;
const MAX_QUOTED_VALUE = 256;

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
// Past all absolute windows, recurring ones repeat with the calendar, whose weekdays repeat every 28 years
// (leap years included, century years aside): a search that long that finds nothing will never find anything.
const HORIZON = Math.round(28 * 365.2425) * DAY;
const YEAR = 366 * DAY;
// A recurring span that runs into the next day (all-day windows on consecutive days) is followed this many
// days per step, so a window covering everything still costs a handful of jumps per horizon, not one per day.
const MAX_MERGE_DAYS = 62;
// Spans of different windows that touch or overlap are merged this many times per step.
const MAX_MERGE_STEPS = 32;

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

/** A wall-clock span: start inclusive, end exclusive, in "floating" ms (the wall clock read as if it were UTC). */
interface WallSpan {
  readonly start: number;
  readonly end: number;
}

/** Compiled window: knows whether a wall-clock time is inside, and how it reads in messages. */
export interface CompiledWindow {
  /** The name if given, else canonical text: "2026-12-25", "2026-12-20 to 2027-01-05", "daily 02:00–04:00". */
  readonly text: string;
  containsWall(wallMs: number): boolean;
  /** The contiguous span of this window that holds wallMs (following it across days it runs into); undefined: outside. */
  spanAt(wallMs: number): WallSpan | undefined;
  /** Absolute windows: the first wall ms they cover; recurring: undefined. */
  readonly startsAtWall: number | undefined;
  /** Absolute windows: the last wall ms they cover (exclusive end); recurring: undefined. */
  readonly endsAtWall: number | undefined;
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
// Windows

class AbsoluteWindow implements CompiledWindow {
  readonly text: string;
  readonly startsAtWall: number;
  readonly endsAtWall: number;

  constructor(text: string, start: number, end: number) {
    this.text = text;
    this.startsAtWall = start;
    this.endsAtWall = end;
  }

  containsWall(wallMs: number): boolean {
    return wallMs >= this.startsAtWall && wallMs < this.endsAtWall;
  }

  spanAt(wallMs: number): WallSpan | undefined {
    return this.containsWall(wallMs) ? { start: this.startsAtWall, end: this.endsAtWall } : undefined;
  }
}

/** Allowed values of one day field, indexed by value; undefined when the field is absent or `*`. */
type DaySet = readonly boolean[] | undefined;

class RecurringWindow implements CompiledWindow {
  readonly text: string;
  readonly startsAtWall = undefined;
  readonly endsAtWall = undefined;
  readonly #daysOfMonth: DaySet;
  readonly #months: DaySet;
  readonly #daysOfWeek: DaySet;
  readonly #from: number;
  /** Where a matching day's span ends, from that day's midnight: past 24:00 when it wraps midnight. */
  readonly #until: number;

  constructor(
    text: string,
    days: { daysOfMonth: DaySet; months: DaySet; daysOfWeek: DaySet },
    from: number,
    to: number,
  ) {
    this.text = text;
    this.#daysOfMonth = days.daysOfMonth;
    this.#months = days.months;
    this.#daysOfWeek = days.daysOfWeek;
    this.#from = from;
    this.#until = from < to ? to : to + DAY;
  }

  containsWall(wallMs: number): boolean {
    return this.#dayHolding(wallMs) !== undefined;
  }

  spanAt(wallMs: number): WallSpan | undefined {
    const day = this.#dayHolding(wallMs);
    if (day === undefined) return undefined;
    let first = day;
    let last = day;
    // Only a span a whole day long can touch the next day's.
    if (this.#until - this.#from === DAY) {
      while (last - day < MAX_MERGE_DAYS && this.#matches(last + 1)) last++;
      while (day - first < MAX_MERGE_DAYS && this.#matches(first - 1)) first--;
    }
    return { start: first * DAY + this.#from, end: last * DAY + this.#until };
  }

  /** The matching day (days since the epoch) whose span holds wallMs: that day, or the day before when wrapping. */
  #dayHolding(wallMs: number): number | undefined {
    const day = Math.floor(wallMs / DAY);
    for (const d of [day, day - 1]) {
      const offset = wallMs - d * DAY;
      if (offset >= this.#from && offset < this.#until && this.#matches(d)) return d;
    }
    return undefined;
  }

  // Unlike cron's day-of-month/day-of-week OR, every given field must match: "days 1-7, Mon" is the first Monday.
  #matches(day: number): boolean {
    const d = new Date(day * DAY);
    return (
      allows(this.#daysOfMonth, d.getUTCDate()) &&
      allows(this.#months, d.getUTCMonth() + 1) &&
      allows(this.#daysOfWeek, d.getUTCDay())
    );
  }
}

function allows(set: DaySet, value: number): boolean {
  return set === undefined || set[value] === true;
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

function recurringText(days: { daysOfMonth: DaySet; months: DaySet; daysOfWeek: DaySet }, from: number, to: number) {
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

// ---------------------------------------------------------------------------------------------------------------
// Exclusions and the schedule that skips them

/** A named set of windows: `by` is how messages name its source, e.g. "calendar holidays-de" or "spec.exclusions". */
export interface ExclusionSource {
  /** Where the windows are, in words ("calendar NAME", "spec.exclusions"). */
  readonly by: string;
  /** The ExclusionCalendar they come from; absent: the CronJob's own windows. */
  readonly calendar?: string;
  readonly windows: readonly CompiledWindow[];
}

/** The window that holds a slot, and where it is. */
export interface ExclusionHit {
  by: string;
  calendar?: string;
  window: string;
}

export class Exclusions {
  readonly empty: boolean;
  /** The earliest start and latest end of the absolute windows (wall ms); undefined without any. */
  readonly absoluteSpan: WallSpan | undefined;
  readonly #sources: readonly ExclusionSource[];
  readonly #windows: readonly CompiledWindow[];
  readonly #zones = new Map<string, ZoneRules>();

  constructor(sources: readonly ExclusionSource[]) {
    // Copied: ExcludingSchedule remembers what it found, which holds only while the windows stay as they are.
    this.#sources = sources.map((s) => ({ ...s, windows: [...s.windows] }));
    this.#windows = this.#sources.flatMap((s) => s.windows);
    this.empty = this.#windows.length === 0;
    this.absoluteSpan = absoluteSpanOf(this.#windows);
  }

  /**
   * The first window (in source order) whose wall-clock span holds the slot, read in timeZone; undefined: not
   * excluded. Throws a RangeError for a zone ICU does not know (a schedule's zone is validated long before).
   */
  excludedBy(slot: Date, timeZone: string): ExclusionHit | undefined {
    const ms = slot.getTime();
    const wall = ms + this.zone(timeZone).offsetAt(ms);
    for (const source of this.#sources) {
      const w = source.windows.find((x) => x.containsWall(wall));
      if (w) return { by: source.by, ...(source.calendar ? { calendar: source.calendar } : {}), window: w.text };
    }
    return undefined;
  }

  /** Zone rules by name, kept for the life of this object so a search reads cached transitions. */
  zone(timeZone: string): ZoneRules {
    let rules = this.#zones.get(timeZone);
    if (!rules) {
      rules = new ZoneRules(timeZone);
      this.#zones.set(timeZone, rules);
    }
    return rules;
  }

  /** Where the covered stretch holding wallMs ends (exclusive; touching spans of any window merged), or undefined. */
  coveredUntil(wallMs: number): number | undefined {
    let end = this.#widest(wallMs, (s) => s.end, Math.max);
    if (end === undefined) return undefined;
    for (let i = 0; i < MAX_MERGE_STEPS; i++) {
      const further = this.#widest(end, (s) => s.end, Math.max);
      if (further === undefined || further <= end) break;
      end = further;
    }
    return end;
  }

  /** Where the covered stretch holding wallMs begins (inclusive), or undefined. */
  coveredFrom(wallMs: number): number | undefined {
    let start = this.#widest(wallMs, (s) => s.start, Math.min);
    if (start === undefined) return undefined;
    for (let i = 0; i < MAX_MERGE_STEPS; i++) {
      const earlier = this.#widest(start - 1, (s) => s.start, Math.min);
      if (earlier === undefined || earlier >= start) break;
      start = earlier;
    }
    return start;
  }

  #widest(wallMs: number, edge: (s: WallSpan) => number, pick: (a: number, b: number) => number): number | undefined {
    let best: number | undefined;
    for (const w of this.#windows) {
      const s = w.spanAt(wallMs);
      if (s) best = best === undefined ? edge(s) : pick(best, edge(s));
    }
    return best;
  }
}

function absoluteSpanOf(windows: readonly CompiledWindow[]): WallSpan | undefined {
  let span: WallSpan | undefined;
  for (const w of windows) {
    if (w.startsAtWall === undefined || w.endsAtWall === undefined) continue;
    span = {
      start: Math.min(span?.start ?? Infinity, w.startsAtWall),
      end: Math.max(span?.end ?? -Infinity, w.endsAtWall),
    };
  }
  return span;
}

/**
 * A schedule that skips excluded slots: next/mostRecent return only slots no window holds, read in the inner
 * schedule's own timeZone. Everything else delegates. Bounded: when no slot is left within 28 years (past the
 * last absolute window), or after MAX_SKIPPED_SLOTS excluded slots in one search, next() returns the far-future
 * instant 8.64e15 ms (the largest Date) and mostRecent() undefined.
 */
export class ExcludingSchedule extends WrappedSchedule {
  readonly exclusions: Exclusions;
  readonly #zone: ZoneRules;
  /** Every inner slot in (lo, hi] on this grid is held by a window (see #learn). */
  #known: { lo: number; hi: number; grid: number | undefined } | undefined;

  constructor(inner: Schedule, exclusions: Exclusions) {
    super(inner);
    this.exclusions = exclusions;
    this.#zone = exclusions.zone(inner.timeZone);
  }

  next(after: Date, anchor?: Date): Date {
    if (this.exclusions.empty) return this.inner.next(after, anchor);
    const from = after.getTime();
    // The sentinel is a fixed point: a union asking past it must not push the inner schedule past Date's range.
    if (from >= NO_SLOT) return new Date(NO_SLOT);
    const horizon = Math.max(from, (this.exclusions.absoluteSpan?.end ?? -Infinity) + DAY) + HORIZON;
    // Without an anchor `@every` counts from `after`: so must every step of the search, or a jump would move the grid.
    const grid = anchor ?? after;
    let cursor = from;
    let found: Date | undefined;
    for (let skipped = 0; skipped < MAX_SKIPPED_SLOTS; skipped++) {
      cursor = this.#knownForward(cursor, grid);
      const slot = this.inner.next(new Date(cursor), grid);
      const t = slot.getTime();
      // No slot lies between the cursor and this one: all before it are known to be held.
      cursor = t - 1;
      if (!(t <= horizon)) break;
      const offset = this.#zone.offsetAt(t);
      const end = this.exclusions.coveredUntil(t + offset);
      if (end === undefined) {
        found = slot;
        break;
      }
      cursor = this.#forwardJump(t, offset, end) - 1;
    }
    this.#learn(from, cursor, grid);
    return found ?? new Date(NO_SLOT);
  }

  mostRecent(notAfter: Date, anchor?: Date): Date | undefined {
    if (this.exclusions.empty) return this.inner.mostRecent(notAfter, anchor);
    const from = notAfter.getTime();
    const horizon = Math.min(from, (this.exclusions.absoluteSpan?.start ?? Infinity) - DAY) - HORIZON;
    let cursor = from;
    let found: Date | undefined;
    for (let skipped = 0; skipped < MAX_SKIPPED_SLOTS; skipped++) {
      cursor = this.#knownBackward(cursor, anchor);
      const slot = this.inner.mostRecent(new Date(cursor), anchor);
      if (slot === undefined) break;
      const t = slot.getTime();
      cursor = t;
      if (!(t >= horizon)) break;
      const offset = this.#zone.offsetAt(t);
      const start = this.exclusions.coveredFrom(t + offset);
      if (start === undefined) {
        found = slot;
        break;
      }
      cursor = this.#backwardJump(t, offset, start) - 1;
    }
    this.#learn(cursor, from, anchor);
    return found;
  }

  // What one search learnt, the next reuses: the controller asks again on every reconcile, a little later each
  // time, and a schedule whose slots are all held (a calendar changed under it) would otherwise pay for decades
  // of slots each time. Sound because the inner schedule and the windows never change.
  #learn(lo: number, hi: number, grid: Date | undefined): void {
    if (!(lo < hi)) return;
    const g = this.#gridKey(grid);
    const k = this.#known;
    if (k && k.grid === g && lo <= k.hi && hi >= k.lo) {
      this.#known = { lo: Math.min(lo, k.lo), hi: Math.max(hi, k.hi), grid: g };
    } else {
      this.#known = { lo, hi, grid: g };
    }
  }

  /** Where a forward search from cursor may resume: past the stretch known to be held, if it is in one. */
  #knownForward(cursor: number, grid: Date | undefined): number {
    const k = this.#known;
    return k && k.grid === this.#gridKey(grid) && cursor >= k.lo && cursor < k.hi ? k.hi : cursor;
  }

  #knownBackward(cursor: number, grid: Date | undefined): number {
    const k = this.#known;
    return k && k.grid === this.#gridKey(grid) && cursor > k.lo && cursor <= k.hi ? k.lo : cursor;
  }

  // Cron slots do not depend on the anchor; `@every` slots do, to the second.
  #gridKey(grid: Date | undefined): number | undefined {
    if (!this.inner.isEvery) return 0;
    return grid === undefined ? undefined : Math.floor(grid.getTime() / SECOND);
  }

  // Every instant from t up to the result shows a covered wall time: the offset in force at t holds until
  // the first transition, and the wall clock runs straight within it. Past a transition the next slot is tested
  // afresh, so a fall-back that repeats times outside the span is never jumped over.
  #forwardJump(t: number, offset: number, endWall: number): number {
    const target = endWall - offset;
    return this.#zone.firstTransitionIn(t, target)?.at ?? target;
  }

  #backwardJump(t: number, offset: number, startWall: number): number {
    const target = startWall - offset;
    return this.#zone.lastTransitionIn(target, t)?.at ?? target;
  }
}

/**
 * For the webhook: whether exclusions leave the schedule any slot. "never": none within 28 years after `from`
 * (and after the last absolute window's end); "notWithinYear": the schedule has slots in the 366 days after
 * `from` and the exclusions hold every one of them; "ok" otherwise (a schedule that has no slot in that year by
 * itself, such as "0 0 29 2 *", is not the exclusions' doing).
 */
export function slotsLeft(schedule: Schedule, exclusions: Exclusions, from: Date): "ok" | "notWithinYear" | "never" {
  if (exclusions.empty) return "ok";
  const next = new ExcludingSchedule(schedule, exclusions).next(from).getTime();
  if (next >= NO_SLOT) return "never";
  const yearEnd = from.getTime() + YEAR;
  if (next <= yearEnd) return "ok";
  return schedule.next(from).getTime() <= yearEnd ? "notWithinYear" : "ok";
}
