// Exclusions and the schedule that skips them: which window holds a slot, and the next or most recent slot no
// window holds. No clock reads, no I/O: every answer is a function of the arguments (an ExcludingSchedule
// remembers what its last searches found, which changes how fast it answers, never what). The windows themselves
// are parsed in exclusionwindows.ts.
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

import type { CompiledWindow, WallSpan } from "./compiledwindows.ts";
import { NO_SLOT, type Schedule, WrappedSchedule } from "./schedule.ts";
import { ZoneRules } from "./timezone.ts";

/** Consecutive excluded slots ExcludingSchedule tests before it gives up (see NO_SLOT). */
export const MAX_SKIPPED_SLOTS = 100_000;

const SECOND = 1000;
const DAY = 24 * 60 * 60 * SECOND;
// Past all absolute windows, recurring ones repeat with the calendar, whose weekdays repeat every 28 years
// (leap years included, century years aside): a search that long that finds nothing will never find anything.
const HORIZON = Math.round(28 * 365.2425) * DAY;
const YEAR = 366 * DAY;
// Spans of different windows that touch or overlap are merged this many times per step.
const MAX_MERGE_STEPS = 32;

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
