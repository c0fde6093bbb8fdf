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

  let missedCount = 0;
  if (schedule.everySeconds !== undefined && anchor !== undefined) {
    missedCount = Math.min(
      cap,
      everyIndex(now, anchor, schedule.everySeconds) - everyIndex(earliest, anchor, schedule.everySeconds),
    );
  } else {
    for (
      let t = schedule.next(earliest, anchor);
      t.getTime() <= now.getTime() && missedCount < cap;
      t = schedule.next(t, anchor)
    ) {
      missedCount++;
    }
  }
  return { missed: newest, next, missedCount };
}

// How many anchor + k·interval slots (k >= 1) lie at or before t.
function everyIndex(t: Date, anchor: Date, seconds: number): number {
  const base = Math.floor(anchor.getTime() / 1000) * 1000;
  return Math.max(0, Math.floor((t.getTime() - base) / (seconds * 1000)));
}
