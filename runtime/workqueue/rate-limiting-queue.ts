// client-go's rate-limiting queue: retries go through a rate limiter before re-entering the queue.
import { DelayingQueue } from "./delaying-queue.ts";
import type { QueueOptions } from "./queue.ts";
import { DefaultControllerRateLimiter, type RateLimiter } from "./rate-limiters.ts";

interface RateLimitingQueueOptions<K extends string> extends QueueOptions {
  /** Defaults to DefaultControllerRateLimiter on the queue's clock. */
  rateLimiter?: RateLimiter<K>;
}

export class RateLimitingQueue<K extends string = string> extends DelayingQueue<K> {
  readonly rateLimiter: RateLimiter<K>;

  constructor(opts: RateLimitingQueueOptions<K> = {}) {
    super(opts);
    this.rateLimiter = opts.rateLimiter ?? DefaultControllerRateLimiter<K>({ clock: this.clock });
  }

  /**
   * Adds `key` after the rate limiter's delay, recording a failure for it. `notLaterThanMs`: the delay is at most
   * this (the failure is still recorded, so the backoff keeps growing for the retries that come before it).
   */
  addRateLimited(key: K, notLaterThanMs?: number): void {
    const delay = this.rateLimiter.when(key);
    this.addAfter(key, notLaterThanMs === undefined ? delay : Math.max(0, Math.min(delay, notLaterThanMs)));
  }

  /** Resets the key's failure history; call it when the key was processed successfully. */
  forget(key: K): void {
    this.rateLimiter.forget(key);
  }

  numRequeues(key: K): number {
    return this.rateLimiter.numRequeues(key);
  }
}
