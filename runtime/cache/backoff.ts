// Jittered exponential backoff (client-go's wait.Backoff / reflector backoff manager).

interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  factor?: number;
  /** 0..1: the delay is multiplied by a random factor in [1, 1 + jitter]. */
  jitter?: number;
  /** After this long without a failure the backoff resets. */
  resetAfterMs?: number;
  random?: () => number;
  now?: () => number;
}

export class Backoff {
  private readonly o: Required<BackoffOptions>;
  private current = 0;
  private lastFailure = -Infinity;

  constructor(o: BackoffOptions) {
    this.o = {
      factor: 2,
      jitter: 1,
      resetAfterMs: 2 * o.maxMs,
      random: Math.random,
      now: () => performance.now(),
      ...o,
    };
  }

  /** The delay before the next attempt after a failure. */
  next(): number {
    const now = this.o.now();
    if (now - this.lastFailure > this.o.resetAfterMs) this.current = 0;
    this.lastFailure = now;
    this.current = this.current === 0 ? this.o.initialMs : Math.min(this.current * this.o.factor, this.o.maxMs);
    return Math.min(this.o.maxMs, this.current * (1 + this.o.jitter * this.o.random()));
  }

  reset(): void {
    this.current = 0;
  }
}

/** Sleep that wakes early (resolving false) when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(t);
      resolve(false);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
