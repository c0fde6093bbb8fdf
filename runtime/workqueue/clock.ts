// Time is injected so queues and rate limiters can be driven deterministically in tests.

export interface Clock {
  /** Milliseconds; only differences are meaningful. */
  now(): number;
}

export interface TimerHandle {
  cancel(): void;
  /** Keep the process alive while this timer is pending. */
  ref(): void;
  /** Let the process exit even though this timer is pending. */
  unref(): void;
}

export interface TimerClock extends Clock {
  setTimer(fn: () => void, delayMs: number): TimerHandle;
}

// Date.now rather than performance.now so node:test mock timers (which fake Date and setTimeout
// together) also drive queues built on the real clock.
export const realClock: TimerClock = {
  now: () => Date.now(),
  setTimer(fn, delayMs) {
    const t = setTimeout(fn, delayMs);
    return {
      cancel: () => clearTimeout(t),
      ref: () => void t.ref(),
      unref: () => void t.unref(),
    };
  },
};
