// The schedule grammar of Kubernetes CronJobs: robfig/cron v3 ParseStandard, rule for rule (including its
// quirks), but with error messages that say which field is wrong and what would be accepted. cron-parser is
// deliberately not used for parsing: it accepts things Kubernetes rejects (seconds, 7, L, #, H) and rejects
// things Kubernetes accepts (@midnight, @every, duplicate list values).

import { formatGoSeconds, parseGoDuration } from "./duration.ts";

export interface CronFields {
  /** Sorted, de-duplicated allowed values; day-of-week uses 0 = Sunday. */
  readonly minute: readonly number[];
  readonly hour: readonly number[];
  readonly dayOfMonth: readonly number[];
  readonly month: readonly number[];
  readonly dayOfWeek: readonly number[];
  /**
   * robfig's "star bit": set when a list item is `*` or `?` without a step above 1. When either day field
   * has it, a day must match both day fields; otherwise matching either is enough.
   */
  readonly dayOfMonthStar: boolean;
  readonly dayOfWeekStar: boolean;
  /** The hour field uses `*`, `?` or a step, so the schedule follows real time across DST changes. */
  readonly hourFollowsRealTime: boolean;
}

type ParsedSpec =
  | { readonly kind: "cron"; readonly fields: CronFields; readonly description: string }
  | { readonly kind: "every"; readonly seconds: number; readonly description: string };

type SpecResult = { ok: true; spec: ParsedSpec } | { ok: false; reason: string };

interface FieldSpec {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: ReadonlyMap<string, number>;
  readonly allowed: string;
  /** A day field: robfig takes it with no values (","), read by `dayFields`. */
  readonly day?: true;
}

const MONTH_NAMES = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DAY_NAMES = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
export const MONTH_LONG_NAMES = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];
// February counts 29 days: a schedule for Feb 29 fires in leap years, which is enough to be valid.
const MAX_DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

const FIELDS: readonly FieldSpec[] = [
  { name: "minute", min: 0, max: 59, allowed: "0-59" },
  { name: "hour", min: 0, max: 23, allowed: "0-23" },
  { name: "day-of-month", min: 1, max: 31, allowed: "1-31", day: true },
  {
    name: "month",
    min: 1,
    max: 12,
    names: new Map(MONTH_NAMES.map((n, i) => [n, i + 1])),
    allowed: "1-12 or jan-dec",
  },
  {
    name: "day-of-week",
    min: 0,
    max: 6,
    names: new Map(DAY_NAMES.map((n, i) => [n, i])),
    allowed: "0-6 or sun-sat",
    day: true,
  },
];

const FIELD_LIST = "minute hour day-of-month month day-of-week";
const SYNTAX = "*, ?, lists (a,b), ranges (a-b) and steps (*/n, a-b/n, a/n)";

const DESCRIPTORS: ReadonlyMap<string, string> = new Map([
  ["@yearly", "0 0 1 1 *"],
  ["@annually", "0 0 1 1 *"],
  ["@monthly", "0 0 1 * *"],
  ["@weekly", "0 0 * * 0"],
  ["@daily", "0 0 * * *"],
  ["@midnight", "0 0 * * *"],
  ["@hourly", "0 * * * *"],
]);
const DESCRIPTOR_LIST = "@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every <duration>";
const EVERY_PREFIX = "@every ";
const DURATION_EXAMPLES = "a Go duration such as 90s, 1h30m or 1.5h";

// Go's strings.Fields splits on unicode.IsSpace, which is not quite JavaScript's \s (U+0085 yes, U+FEFF no).
export const GO_SPACE = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;

type ParsedField = { values: number[]; star: boolean; realTime: boolean };
type FieldResult = ({ ok: true } & ParsedField) | { ok: false; reason: string };
type ValueResult = { ok: true; value: number } | { ok: false; reason: string };

function describeRange(spec: FieldSpec, value: number): string {
  // Other crons (and cron-parser) take 7 for Sunday; Kubernetes does not.
  if (spec.name === "day-of-week" && value === 7) return `${spec.min}-${spec.max} (use 0 for Sunday)`;
  if (spec.names) return `${spec.min}-${spec.max} (or ${spec.allowed.split(" or ")[1] ?? ""})`;
  return `${spec.min}-${spec.max}`;
}

function unsupportedFeature(spec: FieldSpec, expr: string, piece: string): string | undefined {
  let feature: string | undefined;
  if (expr.includes("#")) feature = '"#" (nth day-of-week of the month)';
  else if (/^H(\(|$)/.test(piece)) feature = '"H" (hashed value)';
  else if (/^(\d*L|LW)$/i.test(piece)) feature = '"L" (last day)';
  else if (/^\d+W$/i.test(piece)) feature = '"W" (nearest weekday)';
  if (feature === undefined) return undefined;
  return `${spec.name} ${JSON.stringify(expr)}: ${feature} is not supported; use values ${spec.allowed} with ${SYNTAX}`;
}

// strconv.Atoi semantics: an optional "+" sign and decimal digits; "-" never reaches here because it splits ranges.
function parseAtoi(text: string): number | undefined {
  return /^\+?[0-9]+$/.test(text) ? Number(text) : undefined;
}

function parseValue(spec: FieldSpec, expr: string, piece: string): ValueResult {
  const named = spec.names?.get(piece.toLowerCase());
  if (named !== undefined) return { ok: true, value: named };
  const n = parseAtoi(piece);
  if (n === undefined) {
    const unsupported = unsupportedFeature(spec, expr, piece);
    if (unsupported) return { ok: false, reason: unsupported };
    if (piece === "") {
      return {
        ok: false,
        reason: `${spec.name} ${JSON.stringify(expr)} is not a valid value, range or step; use values ${spec.allowed} with ${SYNTAX}`,
      };
    }
    const what = spec.names ? `neither a number nor a name in ${spec.allowed}` : `not a number in ${spec.allowed}`;
    return { ok: false, reason: `${spec.name} value ${JSON.stringify(piece)} is ${what}` };
  }
  if (n < spec.min || n > spec.max) {
    return { ok: false, reason: `${spec.name} value ${piece} is out of range ${describeRange(spec, n)}` };
  }
  return { ok: true, value: n };
}

function parseField(spec: FieldSpec, text: string): FieldResult {
  // strings.FieldsFunc drops empty list items, so robfig (and Kubernetes) accept "1,,2".
  const items = text.split(",").filter((item) => item !== "");
  if (items.length === 0 && !spec.day) {
    return { ok: false, reason: `never fires: ${spec.name} ${JSON.stringify(text)} has no values` };
  }
  const bits = new Set<number>();
  let star = false;
  let realTime = false;
  for (const expr of items) {
    const rangeAndStep = expr.split("/");
    if (rangeAndStep.length > 2) {
      return { ok: false, reason: `${spec.name} ${JSON.stringify(expr)} has more than one "/"` };
    }
    const lowAndHigh = (rangeAndStep[0] ?? "").split("-");
    const first = lowAndHigh[0] ?? "";
    let start: number;
    let end: number;
    let itemStar = false;
    if (first === "*" || first === "?") {
      // robfig ignores whatever follows "*-", so "*-5" means "*"; kept for parity with Kubernetes.
      start = spec.min;
      end = spec.max;
      itemStar = true;
      realTime = true;
    } else {
      const low = parseValue(spec, expr, first);
      if (!low.ok) return low;
      start = low.value;
      if (lowAndHigh.length === 1) {
        end = start;
      } else if (lowAndHigh.length === 2) {
        const high = parseValue(spec, expr, lowAndHigh[1] ?? "");
        if (!high.ok) return high;
        end = high.value;
      } else {
        return { ok: false, reason: `${spec.name} ${JSON.stringify(expr)} has more than one "-"` };
      }
    }
    let step = 1;
    if (rangeAndStep.length === 2) {
      realTime = true;
      const stepText = rangeAndStep[1] ?? "";
      const parsed = parseAtoi(stepText);
      if (parsed === undefined) {
        return {
          ok: false,
          reason: `${spec.name} step ${JSON.stringify(stepText)} in ${JSON.stringify(expr)} must be a positive whole number`,
        };
      }
      step = parsed;
      // "N/step" means "N-max/step".
      if (lowAndHigh.length === 1) end = spec.max;
      if (step > 1) itemStar = false;
    }
    if (start > end) {
      return {
        ok: false,
        reason: `${spec.name} range ${rangeAndStep[0] ?? ""} is reversed (${start} > ${end}); write it as low-high`,
      };
    }
    if (step === 0) {
      return { ok: false, reason: `${spec.name} step 0 in ${JSON.stringify(expr)} must be at least 1` };
    }
    for (let v = start; v <= end; v += step) bits.add(v);
    star ||= itemStar;
  }
  return { ok: true, values: [...bits].sort((a, b) => a - b), star, realTime };
}

type DayFields = { ok: true; dom: ParsedField; dow: ParsedField } | { ok: false; reason: string };

/**
 * robfig reads a day field of no values (",") as no day without its star bit, so by its either-day rule the other
 * day field alone says the days: Kubernetes runs "0 0 , * 1" every Monday. That is the other field with a star in
 * this one. With a star in the other, or no values in either, no day matches: refused, as every schedule that never
 * fires is.
 */
function dayFields(dom: ParsedField, dow: ParsedField, tokens: readonly string[]): DayFields {
  const [domText, dowText] = [JSON.stringify(tokens[2] ?? ""), JSON.stringify(tokens[4] ?? "")];
  const neverFires = (empty: string, other: string) => ({
    ok: false as const,
    reason: `never fires: ${empty} and ${other}`,
  });
  if (dom.values.length === 0 && (dow.values.length === 0 || dow.star)) {
    return neverFires(`day-of-month ${domText} has no values`, `day-of-week is ${dowText}`);
  }
  if (dow.values.length === 0 && dom.star) {
    return neverFires(`day-of-week ${dowText} has no values`, `day-of-month is ${domText}`);
  }
  return {
    ok: true,
    dom: dom.values.length === 0 ? everyDay(FIELDS[2]!) : dom,
    dow: dow.values.length === 0 ? everyDay(FIELDS[4]!) : dow,
  };
}

/** A day field as `*` reads: every value, with the star bit. */
function everyDay(spec: FieldSpec): ParsedField {
  return {
    values: Array.from({ length: spec.max - spec.min + 1 }, (_, i) => spec.min + i),
    star: true,
    realTime: false,
  };
}

function joinOr(words: readonly string[]): string {
  if (words.length <= 1) return words.join("");
  return `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}`;
}

function parseFields(tokens: readonly string[], description: string): SpecResult {
  if (tokens.length !== 5) {
    const given = tokens.length === 1 ? "1 field given" : `${tokens.length} fields given`;
    const seconds = tokens.length === 6 ? " (seconds are not supported)" : "";
    const hint = tokens.length < 5 ? `, or a descriptor: ${DESCRIPTOR_LIST}` : "";
    return { ok: false, reason: `${given}; a schedule has 5 fields: ${FIELD_LIST}${seconds}${hint}` };
  }
  type Parsed = Extract<FieldResult, { ok: true }>;
  const parsed: Parsed[] = [];
  for (const [i, spec] of FIELDS.entries()) {
    const r = parseField(spec, tokens[i] ?? "");
    if (!r.ok) return r;
    parsed.push(r);
  }
  const [minute, hour, month] = [parsed[0]!, parsed[1]!, parsed[3]!];
  const days = dayFields(parsed[2]!, parsed[4]!, tokens);
  if (!days.ok) return days;
  const { dom, dow } = days;

  // With a star in day-of-week, days must match day-of-month, which some months never have.
  if (dow.star && !dom.star) {
    const smallestDay = dom.values[0] ?? 32;
    const fits = month.values.some((m) => smallestDay <= (MAX_DAYS_IN_MONTH[m - 1] ?? 0));
    if (!fits) {
      const months = month.values.map((m) => MONTH_LONG_NAMES[m - 1] ?? String(m));
      return {
        ok: false,
        reason: `never fires: day-of-month ${tokens[2] ?? ""} does not occur in ${joinOr(months)}`,
      };
    }
  }

  return {
    ok: true,
    spec: {
      kind: "cron",
      description,
      fields: {
        minute: minute.values,
        hour: hour.values,
        dayOfMonth: dom.values,
        month: month.values,
        dayOfWeek: dow.values,
        dayOfMonthStar: dom.star,
        dayOfWeekStar: dow.star,
        hourFollowsRealTime: hour.realTime,
      },
    },
  };
}

function parseEvery(schedule: string): SpecResult {
  const text = schedule.slice(EVERY_PREFIX.length);
  const d = parseGoDuration(text);
  if (!d.ok) return { ok: false, reason: `@every: ${d.reason}; use ${DURATION_EXAMPLES}` };
  // robfig drops sub-second parts; a zero or negative interval would fire continuously, so 1s is the floor.
  const seconds = d.nanoseconds / 1_000_000_000n;
  if (seconds < 1n) {
    return {
      ok: false,
      reason: `@every duration ${JSON.stringify(text)} is shorter than the minimum of 1s (sub-second parts are dropped)`,
    };
  }
  const n = Number(seconds);
  return { ok: true, spec: { kind: "every", seconds: n, description: `@every ${formatGoSeconds(n)}` } };
}

/** Parses the text of spec.schedule (time zone handling is the caller's). Never throws. */
export function parseScheduleSpec(schedule: string): SpecResult {
  if (schedule.split(GO_SPACE).every((t) => t === "")) {
    return {
      ok: false,
      reason: `empty schedule; a schedule has 5 fields: ${FIELD_LIST}, or a descriptor: ${DESCRIPTOR_LIST}`,
    };
  }
  if (/^\s*(CRON_)?TZ=/.test(schedule)) {
    return { ok: false, reason: "TZ= and CRON_TZ= prefixes are not supported; set spec.timeZone instead" };
  }
  // Like robfig, a descriptor must be the whole string: no surrounding spaces, lower case.
  if (schedule.startsWith("@")) {
    const fields = DESCRIPTORS.get(schedule);
    if (fields !== undefined) return parseFields(fields.split(" "), schedule);
    if (schedule.startsWith(EVERY_PREFIX)) return parseEvery(schedule);
    if (schedule === "@every" || /^@every\s/.test(schedule)) {
      return { ok: false, reason: `@every needs a duration after a single space, e.g. "@every 1h30m"` };
    }
    return { ok: false, reason: `unknown descriptor ${JSON.stringify(schedule)}; use ${DESCRIPTOR_LIST}` };
  }
  const tokens = schedule.split(GO_SPACE).filter((t) => t !== "");
  return parseFields(tokens, tokens.join(" "));
}
