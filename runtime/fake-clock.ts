// A manually stepped clock for tests: time only moves in set() and advance(); advance() fires due timers
// in time order with now() set to each timer's due time, as a real clock would observe it.
import type { TimerClock, TimerHandle } from "./clock.ts";

/**
 * advance() gives up after firing this many timers: a timer that keeps re-arming itself without time
 * moving (a bug under test) would otherwise spin forever, synchronously, where no test timeout can
 * interrupt it.
 */
const MAX_TIMERS_PER_ADVANCE = 100_000;

interface FakeTimer {
  at: number;
  seq: number;
  fn: () => void;
  refed: boolean;
}

export class FakeClock implements TimerClock {
  #now: number;
  #seq = 0;
  readonly #timers = new Set<FakeTimer>();

  /** Starts at `start` (a Date, an RFC 3339 string or milliseconds since the epoch). */
  constructor(start: Date | string | number = 0) {
    this.#now = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.#now);
  }

  /** Jumps to `t` without firing timers (a wall clock set by hand). */
  set(t: Date | string): void {
    this.#now = new Date(t).getTime();
  }

  setTimer(fn: () => void, delayMs: number): TimerHandle {
    // Real setTimeout silently turns these into 1 ms; failing loudly catches callers that forget.
    if (delayMs > 2 ** 31 - 1) throw new RangeError(`timer delay ${delayMs} ms exceeds setTimeout's maximum`);
    const timer: FakeTimer = { at: this.#now + Math.max(0, delayMs), seq: this.#seq++, fn, refed: true };
    this.#timers.add(timer);
    return {
      cancel: () => void this.#timers.delete(timer),
      ref: () => void (timer.refed = true),
      unref: () => void (timer.refed = false),
    };
  }

  advance(ms: number): void {
    const target = this.#now + ms;
    for (let fired = 0; ; fired++) {
      let next: FakeTimer | undefined;
      for (const t of this.#timers) {
        if (t.at <= target && (next === undefined || t.at < next.at || (t.at === next.at && t.seq < next.seq))) {
          next = t;
        }
      }
      if (next === undefined) break;
      if (fired >= MAX_TIMERS_PER_ADVANCE) {
        throw new Error(
          `FakeClock.advance(${ms}) fired ${fired} timers and more are due (now ${this.#now} ms): a timer re-arming itself?`,
        );
      }
      this.#timers.delete(next);
      this.#now = Math.max(this.#now, next.at);
      next.fn();
    }
    this.#now = target;
  }

  /** Timers scheduled and not yet fired or cancelled. */
  pendingTimers(): number {
    return this.#timers.size;
  }

  /** Pending timers that would keep a real process alive. */
  refedTimers(): number {
    let n = 0;
    for (const t of this.#timers) if (t.refed) n++;
    return n;
  }
}
