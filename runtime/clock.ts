// Time is injected so the reconciler, queues, rate limiters and the event recorder can be driven
// deterministically in tests (the kubebuilder tutorial's Clock). One interface for all of them.

export interface Clock {
  now(): Date;
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
  now: () => new Date(),
  setTimer(fn, delayMs) {
    const t = setTimeout(fn, delayMs);
    return {
      cancel: () => clearTimeout(t),
      ref: () => void t.ref(),
      unref: () => void t.unref(),
    };
  },
};
