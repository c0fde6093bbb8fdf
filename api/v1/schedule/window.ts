import type { Schedule } from "./schedule.ts";

/** More missed slots than this in a window is "too many missed start times" (the built-in's limit). */
export const TOO_MANY_MISSED = 100;
/** Counting stops here: one more is all it takes to know the window holds too many. */
export const MISSED_COUNT_CAP = TOO_MANY_MISSED + 1;

interface ScheduleWindowInput {
  readonly schedule: Schedule;
  /** Exclusive lower bound: max(lastScheduleTime ?? creationTimestamp, now - startingDeadlineSeconds). */
  readonly earliest: Date;
  readonly now: Date;
  /** lastScheduleTime ?? creationTimestamp; what `@every` counts from. */
  readonly anchor?: Date;
  /** Defaults to MISSED_COUNT_CAP. */
  readonly cap?: number;
}

interface ScheduleWindow {
  /** The most recent slot in (earliest, now]. */
  readonly missed?: Date;
  /** The first slot strictly after now. */
  readonly next: Date;
  /** Slots in (earliest, now], counted up to the cap. */
  readonly missedCount: number;
}

/**
 * What is due at `now`. Bounded however long the controller was down: the newest slot comes from a single
 * backwards search, and counting visits at most `cap` slots.
 */
export function scheduleWindow(input: ScheduleWindowInput): ScheduleWindow {
  const { schedule, earliest, now, anchor } = input;
  const cap = input.cap ?? MISSED_COUNT_CAP;
  const next = schedule.next(now, anchor);
  const newest = schedule.mostRecent(now, anchor);
  if (newest === undefined || newest.getTime() <= earliest.getTime()) return { next, missedCount: 0 };

  const missedCount = countSlots(schedule, earliest, now, anchor, cap).count;
  return { missed: newest, next, missedCount };
}

// How many anchor + k·interval slots (k >= 1) lie at or before t.
function everyIndex(t: Date, anchor: Date, seconds: number): number {
  const base = Math.floor(anchor.getTime() / 1000) * 1000;
  return Math.max(0, Math.floor((t.getTime() - base) / (seconds * 1000)));
}

/**
 * The slots of `schedule` in [from, to], oldest first, after `after` when given (exclusive), at most `max` (one
 * more than a bound tells the caller it is exceeded). `anchor`: what an @every schedule counts from.
 */
export function slotsInRange(
  schedule: Schedule,
  from: Date,
  to: Date,
  o: { after?: Date; max: number; anchor?: Date },
): Date[] {
  const out: Date[] = [];
  const start = o.after && o.after.getTime() >= from.getTime() ? o.after : new Date(from.getTime() - 1);
  for (let t = schedule.next(start, o.anchor); t.getTime() <= to.getTime() && out.length < o.max;) {
    out.push(t);
    t = schedule.next(t, o.anchor);
  }
  return out;
}

/** The slots in (after, notAfter], newest first, at most `max`. */
export function newestSlots(schedule: Schedule, after: Date, notAfter: Date, anchor: Date, max: number): Date[] {
  const out: Date[] = [];
  for (let t = schedule.mostRecent(notAfter, anchor); t && t > after && out.length < max;) {
    out.push(t);
    t = schedule.mostRecent(new Date(t.getTime() - 1), anchor);
  }
  return out;
}

/** How far countSlots (and unionCountSlots) counts: beyond it, a count is "more than" this. */
export const SLOT_COUNT_LIMIT = 100_000;

/**
 * The number of slots in (after, notAfter], exact up to `limit` (`exact: false` past it). A count a message
 * quotes comes from here, never from a window capped for another purpose.
 */
export function countSlots(
  schedule: Schedule,
  after: Date,
  notAfter: Date,
  anchor: Date | undefined,
  limit: number = SLOT_COUNT_LIMIT,
): { count: number; exact: boolean } {
  if (notAfter.getTime() <= after.getTime()) return { count: 0, exact: true };
  if (schedule.everySeconds !== undefined && anchor !== undefined) {
    const n = everyIndex(notAfter, anchor, schedule.everySeconds) - everyIndex(after, anchor, schedule.everySeconds);
    return n > limit ? { count: limit, exact: false } : { count: n, exact: true };
  }
  let count = 0;
  for (let t = schedule.next(after, anchor); t.getTime() <= notAfter.getTime(); t = schedule.next(t, anchor)) {
    if (count === limit) return { count, exact: false };
    count++;
  }
  return { count, exact: true };
}

/** A count as a message says it: "1234", or "more than 100000" when counting stopped at its limit. */
export function countText(c: { count: number; exact: boolean }): string {
  return c.exact ? String(c.count) : `more than ${c.count}`;
}
