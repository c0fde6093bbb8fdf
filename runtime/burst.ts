// Urgent writes first. When many urgent writes come at once (a controller creating the Jobs of a few thousand
// schedules that fall on the same second), every other write sent in those seconds (Events, status
// bookkeeping, deletes) queues in the same API server ahead of some of them. A BurstWindow is noted by each
// urgent write; background writers ask it whether to wait, and are woken once no urgent write came for
// quietMs. A burst holds them at most maxHoldMs, so a controller that never stops creating still gets its
// bookkeeping written (only later).
import type { Clock } from "./clock.ts";

interface BurstWindowOptions {
  /** Quiet this long (no urgent write) ends a burst. */
  quietMs?: number;
  /** A burst holds background writes at most this long; after that they flow until the next quiet gap. */
  maxHoldMs?: number;
  clock?: Clock;
}

/** What a writer sees of the window: whether to hold, and when to try again. */
export interface BurstGate {
  active(): boolean;
  whenQuiet(): Promise<void>;
}

const DEFAULT_QUIET_MS = 500;
const DEFAULT_MAX_HOLD_MS = 30_000;

export class BurstWindow implements BurstGate {
  readonly #quietMs: number;
  readonly #maxHoldMs: number;
  readonly #now: () => number;
  /** The last urgent write, and the first one of the current burst (ms since the epoch). */
  #last = -Infinity;
  #since = -Infinity;
  #waiters: Array<() => void> = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(o: BurstWindowOptions = {}) {
    this.#quietMs = o.quietMs ?? DEFAULT_QUIET_MS;
    this.#maxHoldMs = o.maxHoldMs ?? DEFAULT_MAX_HOLD_MS;
    const clock = o.clock;
    this.#now = clock ? () => clock.now().getTime() : () => Date.now();
  }

  /** An urgent write was just sent. */
  note(): void {
    const t = this.#now();
    if (t - this.#last >= this.#quietMs) this.#since = t;
    this.#last = t;
  }

  /** Whether background writes should wait now. */
  active(): boolean {
    const t = this.#now();
    return t - this.#last < this.#quietMs && t - this.#since < this.#maxHoldMs;
  }

  /** Resolves once background writes may go (at once if they may now). */
  whenQuiet(): Promise<void> {
    if (!this.active()) return Promise.resolve();
    return new Promise((resolve) => {
      this.#waiters.push(resolve);
      this.#arm();
    });
  }

  #arm(): void {
    if (this.#timer) return;
    const t = this.#now();
    const wait = Math.max(1, Math.min(this.#last + this.#quietMs, this.#since + this.#maxHoldMs) - t);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.active()) {
        this.#arm();
        return;
      }
      for (const w of this.#waiters.splice(0, this.#waiters.length)) w();
    }, wait);
    // Waiting for quiet must not keep a process alive that has nothing else to do.
    this.#timer.unref();
  }
}
