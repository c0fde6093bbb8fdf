// A token bucket (golang.org/x/time/rate semantics), shared by the event recorder's spam filter and the
// controller's status-write budget.

/** Token bucket (golang.org/x/time/rate semantics): starts full, refills continuously. */
export class TokenBucket {
  readonly #qps: number;
  readonly #burst: number;
  #tokens: number;
  #last: number;

  constructor(qps: number, burst: number, nowMs: number) {
    this.#qps = qps;
    this.#burst = burst;
    this.#tokens = burst;
    this.#last = nowMs;
  }

  /** Whether the bucket has refilled by `nowMs` (as if it were new). */
  fullAt(nowMs: number): boolean {
    const elapsed = Math.max(0, nowMs - this.#last);
    return this.#tokens + (elapsed / 1000) * this.#qps >= this.#burst;
  }

  /** Whether a token is there at `nowMs` (none taken). */
  available(nowMs: number): boolean {
    this.#refill(nowMs);
    return this.#tokens >= 1;
  }

  /**
   * A token at `nowMs` plus the returned wait (ms), reserved now (rate.Limiter's ReserveN): the bucket may go below
   * zero, so later callers wait behind it. Undefined, and nothing reserved, when the wait would exceed `maxWaitMs`.
   */
  reserve(nowMs: number, maxWaitMs: number): number | undefined {
    this.#refill(nowMs);
    const wait = this.#tokens >= 1 ? 0 : ((1 - this.#tokens) / this.#qps) * 1000;
    if (!(wait <= maxWaitMs)) return undefined; // also a qps of 0: never
    this.#tokens -= 1;
    return wait;
  }

  #refill(nowMs: number): void {
    const elapsed = Math.max(0, nowMs - this.#last);
    this.#last = Math.max(this.#last, nowMs);
    this.#tokens = Math.min(this.#burst, this.#tokens + (elapsed / 1000) * this.#qps);
  }

  /** Takes a token if one is there, and `leaving` more after it (a lower priority than tryAccept's callers). */
  tryAccept(nowMs: number, leaving = 0): boolean {
    // A clock stepping backwards must not mint tokens.
    this.#refill(nowMs);
    if (this.#tokens < 1 + leaving) return false;
    this.#tokens -= 1;
    return true;
  }
}
