// Time zone validation (Kubernetes' rules) and UTC-offset lookups with the exact instants of offset changes,
// which the slot mapping in slots.ts needs to place DST gaps and repeated hours.

import { ScheduleError } from "./errors.ts";

const SECOND = 1000;
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
    resolved = new Intl.DateTimeFormat("en-US", { timeZone }).resolvedOptions().timeZone;
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

export class ZoneRules {
  readonly name: string;
  /** True for UTC, where wall time is the instant and every lookup is skipped. */
  readonly isUTC: boolean;
  readonly #format: Intl.DateTimeFormat | undefined;
  readonly #years: Map<number, YearData>;

  constructor(name: string) {
    this.name = name;
    const resolved = new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
    this.isUTC = resolved === "UTC";
    this.#format = this.isUTC
      ? undefined
      : new Intl.DateTimeFormat("en-US", {
          timeZone: name,
          hourCycle: "h23",
          era: "short",
          year: "numeric",
          month: "numeric",
          day: "numeric",
          hour: "numeric",
          minute: "numeric",
          second: "numeric",
        });
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
    let oa = this.#intlOffset(a);
    const startOffset = oa;
    for (let probe = start; ; probe = Math.min(probe + DAY, end - SECOND)) {
      const ob = this.#intlOffset(probe);
      while (oa !== ob) {
        // Bisect on whole seconds for the first instant whose offset differs from oa.
        let lo = a;
        let hi = probe;
        while (hi - lo > SECOND) {
          const mid = lo + Math.floor((hi - lo) / (2 * SECOND)) * SECOND;
          if (this.#intlOffset(mid) === oa) lo = mid;
          else hi = mid;
        }
        const after = this.#intlOffset(hi);
        transitions.push({ at: hi, before: oa, after });
        a = hi;
        oa = after;
      }
      a = probe;
      if (probe >= end - SECOND) break;
    }
    return { startOffset, transitions };
  }

  #intlOffset(ms: number): number {
    const format = this.#format;
    if (!format) return 0;
    const at = floorSecond(ms);
    const f: Record<string, string> = {};
    for (const part of format.formatToParts(at)) f[part.type] = part.value;
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

function utcYearStart(year: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, 0, 1);
  return d.getTime();
}
