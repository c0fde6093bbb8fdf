// Time zone validation (Kubernetes' rules) and UTC-offset lookups with the exact instants of offset changes,
// which the slot mapping in slots.ts needs to place DST gaps and repeated hours.
//
// The offset of a zone at one instant comes from date-fns-tz (toZonedTime). What it does not do stays here:
// Kubernetes' zone-name rules, and finding the exact instants at which a zone's offset changes (ZoneRules
// below scans each year and bisects to the second, then memoises, so the hot path reads a cached list).
// Not used from date-fns-tz, and why: getTimezoneOffset(zone, date) is the offset for a *wall time* (given an
// instant near a transition it answers the offset on the other side), and fromZonedTime moves a wall time in a
// DST gap backwards and picks either occurrence of a repeated one (by the zone's and the process's offsets),
// where our policy (slots.ts) shifts forwards and takes the first. date-fns-tz carries wall times in a Date's
// local fields, i.e. in the process's own zone; #offsetOf checks for the one case where that loses them.

import { createRequire } from "node:module";
import type { toZonedTime as ToZonedTime } from "date-fns-tz/toZonedTime";
import { ScheduleError } from "./errors.ts";

/**
 * date-fns-tz, loaded on the first offset of a zone other than UTC: at load it makes an Intl.DateTimeFormat (to test
 * for hourCycle support), which pages in ICU's date data (~8 MB of RSS, issue 72) that a fleet of UTC schedules never
 * needs. The plugin's bundle turns this require into its own (hack/build-plugin.ts).
 */
let zonedTime: typeof ToZonedTime | undefined;
const toZonedTime: typeof ToZonedTime = (date, timeZone, options) => {
  zonedTime ??= (createRequire(import.meta.url)("date-fns-tz/toZonedTime") as { toZonedTime: typeof ToZonedTime })
    .toZonedTime;
  return zonedTime(date, timeZone, options);
};

const SECOND = 1000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

// Kubernetes' validTimeZoneCharacters, applied to each "/"-separated part.
const ZONE_PART = /^[A-Za-z.\-_0-9+]{1,14}$/;
const EXAMPLE = 'an IANA name such as "America/New_York" or "Etc/UTC"';

/** Kubernetes' spec.timeZone rules, checked against the ICU zone data Node ships. */
export function validateTimeZone(timeZone: string): ScheduleError | undefined {
  const invalid = (reason: string) => new ScheduleError("spec.timeZone", String(timeZone), reason);
  if (typeof timeZone !== "string") return invalid(`must be a string; use ${EXAMPLE}`);
  if (timeZone === "") return invalid(`must not be empty; omit spec.timeZone for UTC or use ${EXAMPLE}`);
  if (timeZone.toLowerCase() === "local") {
    return invalid(`"Local" (the controller's own zone) is not allowed; use ${EXAMPLE}`);
  }
  // ICU takes "+01:00"-style offsets; Go's LoadLocation, and so Kubernetes, does not.
  if (/^[+-]\d/.test(timeZone)) {
    return invalid(`a UTC offset is not a time zone name; use ${EXAMPLE} (or "Etc/GMT-1" for UTC+1)`);
  }
  const parts = timeZone.split("/");
  if (parts.some((p) => p === "." || p === ".." || p.startsWith("-") || !ZONE_PART.test(p))) {
    return invalid(`unknown time zone; use ${EXAMPLE}`);
  }
  let resolved: string;
  try {
    resolved = resolvedZone(timeZone);
  } catch {
    return invalid(`unknown time zone; use ${EXAMPLE}`);
  }
  // ICU matches names case-insensitively; Go reads zoneinfo files, whose names are case-sensitive.
  if (resolved.toLowerCase() === timeZone.toLowerCase() && resolved !== timeZone) {
    return invalid(`time zone names are case-sensitive; did you mean ${JSON.stringify(resolved)}?`);
  }
  if (parts.some((p) => /^[a-z]/.test(p))) {
    return invalid(`time zone names are case-sensitive and start each part with a capital letter; use ${EXAMPLE}`);
  }
  return undefined;
}

/** An instant at which the UTC offset changes; offsets are in milliseconds east of UTC. */
export interface Transition {
  readonly at: number;
  readonly before: number;
  readonly after: number;
}

interface YearData {
  /** Offset in force just before the year starts. */
  readonly startOffset: number;
  /** Changes at instants in [Jan 1 00:00Z, next Jan 1 00:00Z), ascending. */
  readonly transitions: readonly Transition[];
}

// Transitions are found by daily probes, which assumes no zone changes its offset and back within one day
// (nothing in tzdata comes close). Results are memoised per zone and UTC year across Schedule instances
// because the controller re-parses schedules on every reconcile.
const yearCache = new Map<string, Map<number, YearData>>();
const MAX_CACHED_YEARS_PER_ZONE = 1024;

const floorSecond = (ms: number) => Math.floor(ms / SECOND) * SECOND;

// A day after 0001-01-01T00:00:00Z: from here on every zone's wall clock is in year 1 or later, which is all
// date-fns-tz reads (it drops the era, so 1 BC would read as 1 AD).
const FROM_YEAR_ONE = -62_135_596_800_000 + DAY;
// toZonedTime sets the date, then the time, in the process's zone. A process-zone gap (at most a day in
// tzdata: Samoa and Kwajalein skipped one) that swallowed either step leaves the Date at most two days after
// that gap began, so the process's offset then differs from this long before.
const PROCESS_GAP_LOOKBACK = 2 * DAY + HOUR;

/**
 * ICU's name for a zone (its canonical spelling: "UTC" for "Etc/UTC"), memoised: an Intl.DateTimeFormat is costly to
 * make (native ICU objects, freed only when collected), and every CronJob's schedule and slot ask again. Throws a
 * RangeError for a zone ICU does not know (not memoised).
 */
function resolvedZone(name: string): string {
  // Every schedule without spec.timeZone is in "UTC", which ICU knows by that name: asking it would page in its date
  // data (~8 MB of RSS, issue 72) for nothing.
  if (name === "UTC") return name;
  let resolved = resolvedNames.get(name);
  if (resolved === undefined) {
    resolved = new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
    if (resolvedNames.size >= 1024) resolvedNames.clear();
    resolvedNames.set(name, resolved);
  }
  return resolved;
}
const resolvedNames = new Map<string, string>();

export class ZoneRules {
  readonly name: string;
  /** True for UTC, where wall time is the instant and every lookup is skipped. */
  readonly isUTC: boolean;
  readonly #years: Map<number, YearData>;
  /** For the instants date-fns-tz cannot read (see #offsetOf); made on first use. */
  #eraFormat: Intl.DateTimeFormat | undefined;

  constructor(name: string) {
    this.name = name;
    const resolved = resolvedZone(name);
    this.isUTC = resolved === "UTC";
    let years = yearCache.get(resolved);
    if (!years) {
      years = new Map();
      yearCache.set(resolved, years);
    }
    this.#years = years;
  }

  /** The offset (ms east of UTC) in force at an instant. */
  offsetAt(ms: number): number {
    if (this.isUTC) return 0;
    const data = this.#year(new Date(ms).getUTCFullYear());
    let offset = data.startOffset;
    for (const t of data.transitions) {
      if (t.at > ms) break;
      offset = t.after;
    }
    return offset;
  }

  /** The earliest transition T with a < T.at <= b. */
  firstTransitionIn(a: number, b: number): Transition | undefined {
    if (this.isUTC || !(a < b)) return undefined;
    const last = new Date(b).getUTCFullYear();
    for (let y = new Date(a).getUTCFullYear(); y <= last; y++) {
      for (const t of this.#year(y).transitions) {
        if (t.at > b) return undefined;
        if (t.at > a) return t;
      }
    }
    return undefined;
  }

  /** The latest transition T with a < T.at <= b. */
  lastTransitionIn(a: number, b: number): Transition | undefined {
    if (this.isUTC || !(a < b)) return undefined;
    const first = new Date(a).getUTCFullYear();
    for (let y = new Date(b).getUTCFullYear(); y >= first; y--) {
      const list = this.#year(y).transitions;
      for (let i = list.length - 1; i >= 0; i--) {
        const t = list[i];
        if (t === undefined || t.at <= a) return undefined;
        if (t.at <= b) return t;
      }
    }
    return undefined;
  }

  #year(year: number): YearData {
    let data = this.#years.get(year);
    if (data) return data;
    if (this.#years.size >= MAX_CACHED_YEARS_PER_ZONE) this.#years.clear();
    data = this.#scanYear(year);
    this.#years.set(year, data);
    return data;
  }

  #scanYear(year: number): YearData {
    const start = utcYearStart(year);
    const end = utcYearStart(year + 1);
    const transitions: Transition[] = [];
    let a = start - SECOND;
    let oa = this.#offsetOf(a);
    const startOffset = oa;
    for (let probe = start; ; probe = Math.min(probe + DAY, end - SECOND)) {
      const ob = this.#offsetOf(probe);
      while (oa !== ob) {
        // Bisect on whole seconds for the first instant whose offset differs from oa.
        let lo = a;
        let hi = probe;
        while (hi - lo > SECOND) {
          const mid = lo + Math.floor((hi - lo) / (2 * SECOND)) * SECOND;
          if (this.#offsetOf(mid) === oa) lo = mid;
          else hi = mid;
        }
        const after = this.#offsetOf(hi);
        transitions.push({ at: hi, before: oa, after });
        a = hi;
        oa = after;
      }
      a = probe;
      if (probe >= end - SECOND) break;
    }
    return { startOffset, transitions };
  }

  /** The offset (ms east of UTC, whole seconds: LMT offsets such as -0:44:30 are kept) at the second of `ms`. */
  #offsetOf(ms: number): number {
    if (this.isUTC) return 0;
    const at = floorSecond(ms);
    if (at >= FROM_YEAR_ONE) {
      // toZonedTime returns a Date whose *local* fields show the zone's wall clock. They are exact unless that
      // wall time does not exist in the process's own zone (its DST gap), which shows as the process's offset
      // changing shortly before the Date; then, and beyond Date's range, Intl is read here instead.
      const zoned = toZonedTime(at, this.name);
      const wall = localFieldsAsUTC(zoned);
      const earlier = new Date(zoned.getTime() - PROCESS_GAP_LOOKBACK);
      if (localFieldsAsUTC(earlier) - earlier.getTime() === wall - zoned.getTime()) {
        const offset = wall - at;
        if (Number.isFinite(offset)) return offset;
      }
    }
    return this.#eraAwareOffset(at);
  }

  // Intl's wall clock with its era, independent of the process's zone: for the instants date-fns-tz cannot read.
  #eraAwareOffset(at: number): number {
    this.#eraFormat ??= new Intl.DateTimeFormat("en-US", {
      timeZone: this.name,
      hourCycle: "h23",
      era: "short",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    const f: Record<string, string> = {};
    for (const part of this.#eraFormat.formatToParts(at)) f[part.type] = part.value;
    const yearOfEra = Number(f["year"]);
    const year = f["era"] === "BC" || f["era"] === "B" ? 1 - yearOfEra : yearOfEra;
    const wall = new Date(0);
    wall.setUTCFullYear(year, Number(f["month"]) - 1, Number(f["day"]));
    wall.setUTCHours(Number(f["hour"]), Number(f["minute"]), Number(f["second"]), 0);
    return wall.getTime() - at;
  }
}

// The zone rules utcOffsetAt uses, by name (the transitions themselves are memoised per zone above).
const rulesByName = new Map<string, ZoneRules>();
const MAX_CACHED_ZONES = 1024;

/**
 * The UTC offset (ms east of UTC, whole seconds) `timeZone` has at the instant `at`: the offset the schedule's
 * slots are computed with. Throws a RangeError for a zone ICU does not know.
 */
export function utcOffsetAt(timeZone: string, at: Date): number {
  let rules = rulesByName.get(timeZone);
  if (!rules) {
    rules = new ZoneRules(timeZone);
    if (rulesByName.size >= MAX_CACHED_ZONES) rulesByName.clear();
    rulesByName.set(timeZone, rules);
  }
  return rules.offsetAt(at.getTime());
}

/**
 * A Date's local fields (the process's zone) read as UTC. Exact to the millisecond, where getTimezoneOffset()
 * drops the seconds of an offset such as Monrovia's -0:44:30 before 1972.
 */
function localFieldsAsUTC(d: Date): number {
  const u = new Date(0);
  u.setUTCFullYear(d.getFullYear(), d.getMonth(), d.getDate());
  u.setUTCHours(d.getHours(), d.getMinutes(), d.getSeconds(), d.getMilliseconds());
  return u.getTime();
}

function utcYearStart(year: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, 0, 1);
  return d.getTime();
}
