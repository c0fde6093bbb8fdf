// Turning wall-clock slots into instants, with our DST policy:
//
// - Fixed-hour schedules (the hour field lists values or ranges) fire once per local slot. A slot that a
//   spring-forward gap skips fires shifted forward by the gap (02:30 -> 03:30 when 02:00 jumps to 03:00); a
//   slot that a fall-back repeats fires at its first occurrence only.
// - Schedules whose hour field is `*`, `?` or a step follow real time: an instant fires when the wall clock
//   then shows a matching time, so an hourly job runs in both repeated hours and skips nothing that exists.
//
// The time line is walked regime by regime (a regime is a stretch with one UTC offset). Inside a regime the
// wall clock is the instant plus a constant, so cron-parser's answer on wall time maps back exactly; only the
// regime boundaries need care, which keeps next/mostRecent exact for any schedule without scanning slots.

import type { CronFields } from "./grammar.ts";
import type { Transition, ZoneRules } from "./timezone.ts";
import { WallClockCron } from "./wallclock.ts";

const MS = 1;
// Longer than any gap or repeated stretch in tzdata (Samoa skipped a whole day in 2011).
const LOOKBACK = 2 * 86_400_000;
// Regimes crossed per query: two per year at most, and a feasible schedule fires within 8 years (Feb 29).
const MAX_REGIMES = 1000;

export class CronSlots {
  readonly #zone: ZoneRules;
  readonly #wall: WallClockCron;
  readonly #fixedHour: boolean;

  constructor(fields: CronFields, zone: ZoneRules) {
    this.#zone = zone;
    this.#wall = new WallClockCron(fields);
    this.#fixedHour = !fields.hourFollowsRealTime;
  }

  /** The first slot strictly after `after` (ms). */
  next(after: number): number {
    const zone = this.#zone;
    if (zone.isUTC) return this.#wall.nextAfter(after);
    let p = after;
    let low = after; // candidates must be > low
    let best = Infinity;
    for (let i = 0; i < MAX_REGIMES; i++) {
      const o = zone.offsetAt(p);
      const began = zone.lastTransitionIn(p - LOOKBACK, p);

      // Slots shown on the wall clock during this regime; with a fixed hour, not the second pass of a fold.
      let lowA = low;
      if (this.#fixedHour && began && began.before > o) lowA = Math.max(lowA, began.at + (began.before - o) - MS);
      const candidate = this.#wall.nextAfter(lowA + o) - o;

      if (this.#fixedHour && began && began.before < o) best = Math.min(best, this.#firstGapSlotAfter(began, low));

      const ends = zone.firstTransitionIn(p, candidate);
      if (!ends) return Math.min(best, candidate);
      if (best < ends.at) return best;
      p = ends.at;
      low = ends.at - MS;
    }
    throw new Error(`schedule: no slot found after ${new Date(after).toISOString()} within ${MAX_REGIMES} offsets`);
  }

  /** The latest slot at or before `notAfter` (ms), or undefined if there is none the library can reach. */
  mostRecent(notAfter: number): number | undefined {
    const zone = this.#zone;
    if (zone.isUTC) return this.#wall.latestAtOrBefore(notAfter);
    let p = notAfter;
    let best = -Infinity;
    for (let i = 0; i < MAX_REGIMES; i++) {
      const o = zone.offsetAt(p);
      const wall = this.#wall.latestAtOrBefore(p + o);
      if (wall === undefined) return best === -Infinity ? undefined : best;
      let candidate: number | undefined = wall - o;

      // The regime holding p began either after the candidate (which then belongs to an earlier regime) or
      // at most a fold's length before it, which is all the fold and gap rules need to know.
      const after = zone.lastTransitionIn(candidate, p);
      const began = after ?? zone.lastTransitionIn(candidate - LOOKBACK, candidate);
      if (after) candidate = undefined;
      if (candidate !== undefined && this.#fixedHour && began && began.before > o) {
        if (candidate < began.at + (began.before - o)) candidate = undefined;
      }
      if (candidate !== undefined) best = Math.max(best, candidate);

      if (this.#fixedHour && began && began.before < o) best = Math.max(best, this.#lastGapSlotAtOrBefore(began, p));

      if (!began) return best === -Infinity ? undefined : best;
      if (best >= began.at) return best;
      p = began.at - MS;
    }
    throw new Error(`schedule: no slot found before ${new Date(notAfter).toISOString()} within ${MAX_REGIMES} offsets`);
  }

  // Wall times in [at + before, at + after) never show on the clock; a fixed-hour slot there fires at
  // wall - before, i.e. shifted forward by the gap.
  #firstGapSlotAfter(gap: Transition, low: number): number {
    const wall = this.#wall.nextAfter(Math.max(low + gap.before, gap.at + gap.before - MS));
    return wall < gap.at + gap.after ? wall - gap.before : Infinity;
  }

  #lastGapSlotAtOrBefore(gap: Transition, high: number): number {
    const wall = this.#wall.latestAtOrBefore(Math.min(high + gap.before, gap.at + gap.after - MS));
    return wall !== undefined && wall >= gap.at + gap.before ? wall - gap.before : -Infinity;
  }
}
