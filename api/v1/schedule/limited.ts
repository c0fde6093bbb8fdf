// A schedule inside a window of time (spec.startTime, spec.endTime): no slot before the start or after the end, both
// inclusive. A wrapper over any Schedule, as ExcludingSchedule is, so every reader of a CronJob's slots (the
// controller's due slots, a backfill's range, `kubectl cron next`) asks the same questions and gets the window's
// answer without a case of its own. Pure.
import { NO_SLOT, type Schedule, WrappedSchedule } from "./schedule.ts";

/** The instants a CronJob's slots lie within; either side open when unset. */
export interface SlotWindow {
  readonly start?: Date | undefined;
  readonly end?: Date | undefined;
}

export class WindowedSchedule extends WrappedSchedule {
  readonly #start: number;
  readonly #end: number;

  constructor(inner: Schedule, window: SlotWindow) {
    super(inner);
    this.#start = window.start?.getTime() ?? -Infinity;
    this.#end = window.end?.getTime() ?? Infinity;
  }

  /** The first slot after `after` at or after the start; NO_SLOT past the end. */
  next(after: Date, anchor?: Date): Date {
    const t = after.getTime();
    if (t >= this.#end || t >= NO_SLOT) return new Date(NO_SLOT);
    // One millisecond before the start: next() is strictly after, and a slot at the start is in the window.
    const from = t < this.#start - 1 ? new Date(this.#start - 1) : after;
    // Without an anchor `@every` counts from `after`: the caller's, not the moved one, or the grid would move.
    const slot = this.inner.next(from, anchor ?? after);
    return slot.getTime() > this.#end ? new Date(NO_SLOT) : slot;
  }

  /** The latest slot at or before `notAfter` and the end, if it is not before the start. */
  mostRecent(notAfter: Date, anchor?: Date): Date | undefined {
    const t = Math.min(notAfter.getTime(), this.#end);
    if (t < this.#start) return undefined;
    const slot = this.inner.mostRecent(new Date(t), anchor);
    return slot && slot.getTime() >= this.#start ? slot : undefined;
  }
}

/**
 * The schedule of a CronJob with none of its own (it runs only after other CronJobs, spec.after): no slot, ever. A
 * member of its schedule set like any, so every reader of its slots gets "none" without a case of its own.
 */
export class NoSchedule implements Schedule {
  readonly description = "";
  readonly timeZone = "UTC";
  readonly isEvery = false;
  readonly everySeconds = undefined;
  readonly followsRealTime = true;

  next(): Date {
    return new Date(NO_SLOT);
  }

  mostRecent(): Date | undefined {
    return undefined;
  }
}
