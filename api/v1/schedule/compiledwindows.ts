// Compiled exclusion windows: the two kinds a window compiles to (exclusionwindows.ts parses them), each knowing
// which wall-clock times it holds. Windows are wall-clock spans with no zone of their own; reading a slot in its
// schedule's zone is excludingschedule.ts' job. Pure.

const DAY = 24 * 60 * 60 * 1000;
// A recurring span that runs into the next day (all-day windows on consecutive days) is followed this many
// days per step, so a window covering everything still costs a handful of jumps per horizon, not one per day.
const MAX_MERGE_DAYS = 62;

/** A wall-clock span: start inclusive, end exclusive, in "floating" ms (the wall clock read as if it were UTC). */
export interface WallSpan {
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

/** Allowed values of one day field, indexed by value; undefined when the field is absent or `*`. */
export type DaySet = readonly boolean[] | undefined;

/** A recurring window's day fields, each parsed to the values it allows. */
export interface WindowDays {
  readonly daysOfMonth: DaySet;
  readonly months: DaySet;
  readonly daysOfWeek: DaySet;
}

export class AbsoluteWindow implements CompiledWindow {
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

export class RecurringWindow implements CompiledWindow {
  readonly text: string;
  readonly startsAtWall = undefined;
  readonly endsAtWall = undefined;
  readonly #daysOfMonth: DaySet;
  readonly #months: DaySet;
  readonly #daysOfWeek: DaySet;
  readonly #from: number;
  /** Where a matching day's span ends, from that day's midnight: past 24:00 when it wraps midnight. */
  readonly #until: number;

  constructor(text: string, days: WindowDays, from: number, to: number) {
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
