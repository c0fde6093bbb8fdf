// client-go's rate limiters: how long a key should wait before it is retried. All delays are in ms.
import { realClock, type Clock } from "../clock.ts";

export interface RateLimiter<K extends string = string> {
  /** Delay before `key` should be retried; records the attempt. */
  when(key: K): number;
  /** Stops tracking `key`, e.g. after it succeeded. */
  forget(key: K): void;
  /** Failures recorded for `key`. */
  numRequeues(key: K): number;
}

/** Per-key backoff: baseDelayMs * 2^failures, capped at maxDelayMs. */
export class ItemExponentialFailureRateLimiter<K extends string = string> implements RateLimiter<K> {
  readonly #failures = new Map<K, number>();
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;

  constructor(opts: { baseDelayMs?: number; maxDelayMs?: number } = {}) {
    this.#baseDelayMs = opts.baseDelayMs ?? 5;
    this.#maxDelayMs = opts.maxDelayMs ?? 1000_000;
  }

  when(key: K): number {
    const exp = this.#failures.get(key) ?? 0;
    this.#failures.set(key, exp + 1);
    // 2^exp overflows to Infinity long after the cap is reached, so Math.min stays correct.
    return Math.min(this.#baseDelayMs * 2 ** exp, this.#maxDelayMs);
  }

  forget(key: K): void {
    this.#failures.delete(key);
  }

  numRequeues(key: K): number {
    return this.#failures.get(key) ?? 0;
  }
}

/**
 * Overall token bucket shared by all keys (golang.org/x/time/rate semantics): starts full, refills
 * at qps, and when() reserves a token, returning how long until it is available.
 */
export class BucketRateLimiter<K extends string = string> implements RateLimiter<K> {
  readonly #qps: number;
  readonly #burst: number;
  readonly #clock: Clock;
  #tokens: number;
  #last: number;

  constructor(opts: { qps?: number; burst?: number; clock?: Clock } = {}) {
    this.#qps = opts.qps ?? 10;
    this.#burst = opts.burst ?? 100;
    if (!(this.#qps > 0) || !(this.#burst >= 1)) throw new RangeError("BucketRateLimiter needs qps > 0 and burst >= 1");
    this.#clock = opts.clock ?? realClock;
    this.#tokens = this.#burst;
    this.#last = this.#clock.now().getTime();
  }

  when(_key: K): number {
    const now = this.#clock.now().getTime();
    // A clock stepping backwards refills nothing rather than draining the bucket.
    const elapsed = Math.max(0, now - this.#last);
    const tokens = Math.min(this.#burst, this.#tokens + (elapsed * this.#qps) / 1000) - 1;
    this.#tokens = tokens;
    this.#last = Math.max(now, this.#last);
    return tokens < 0 ? (-tokens * 1000) / this.#qps : 0;
  }

  forget(_key: K): void {}

  numRequeues(_key: K): number {
    return 0;
  }
}

/** The strictest of several limiters: every limiter records each attempt, the longest delay wins. */
export class MaxOfRateLimiter<K extends string = string> implements RateLimiter<K> {
  readonly #limiters: RateLimiter<K>[];

  constructor(...limiters: RateLimiter<K>[]) {
    this.#limiters = limiters;
  }

  when(key: K): number {
    let max = 0;
    for (const l of this.#limiters) max = Math.max(max, l.when(key));
    return max;
  }

  forget(key: K): void {
    for (const l of this.#limiters) l.forget(key);
  }

  numRequeues(key: K): number {
    let max = 0;
    for (const l of this.#limiters) max = Math.max(max, l.numRequeues(key));
    return max;
  }
}

/** client-go's DefaultTypedControllerRateLimiter: 5 ms..1000 s per-key backoff, 10 qps / 100 burst overall. */
export function DefaultControllerRateLimiter<K extends string = string>(opts: { clock?: Clock } = {}): RateLimiter<K> {
  return new MaxOfRateLimiter<K>(
    new ItemExponentialFailureRateLimiter<K>({ baseDelayMs: 5, maxDelayMs: 1000_000 }),
    new BucketRateLimiter<K>({ qps: 10, burst: 100, ...(opts.clock ? { clock: opts.clock } : {}) }),
  );
}
