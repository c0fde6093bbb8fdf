// client-go's workqueue.Type: a de-duplicating FIFO that never hands one key to two workers at once.
// A key re-added while it is being processed is parked in `dirty` and queued again on done().
import { realClock, type TimerClock } from "../clock.ts";
import { noopMetrics, PrometheusQueueMetrics, type QueueMetrics } from "./metrics.ts";

export type GetResult<K extends string> = { key: K; shutdown: false } | { key: undefined; shutdown: true };

export interface QueueOptions {
  /** Names the queue in metrics (labels controller and name); without it no metrics are recorded. */
  name?: string;
  clock?: TimerClock;
}

const SHUTDOWN = Object.freeze({ key: undefined, shutdown: true as const });

export class Queue<K extends string = string> {
  readonly name: string | undefined;
  protected readonly clock: TimerClock;
  protected readonly metrics: QueueMetrics<K>;

  // Array plus head index: shift() is O(n) and queues can hold thousands of keys.
  #queue: K[] = [];
  #head = 0;
  /** Keys that need processing: queued ones, plus processing ones that were re-added. */
  readonly #dirty = new Set<K>();
  readonly #processing = new Set<K>();
  readonly #getters: Array<(r: GetResult<K>) => void> = [];
  #drainers: Array<() => void> = [];
  #shuttingDown = false;
  #draining = false;

  constructor(opts: QueueOptions = {}) {
    this.name = opts.name;
    this.clock = opts.clock ?? realClock;
    this.metrics = opts.name ? new PrometheusQueueMetrics<K>(opts.name, this.clock) : noopMetrics;
  }

  add(key: K): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.metrics.add(key);
    this.#dirty.add(key);
    if (this.#processing.has(key)) return;
    this.#queue.push(key);
    this.#dispatch();
  }

  /** Keys waiting to be handed out (not counting re-added keys still being processed). */
  len(): number {
    return this.#queue.length - this.#head;
  }

  /**
   * Waits for a key. The caller owns it until done(key). After shutdown, keys still queued are
   * handed out; once the queue is empty every get resolves with shutdown: true.
   */
  get(): Promise<GetResult<K>> {
    if (this.len() > 0) return Promise.resolve({ key: this.#take(), shutdown: false });
    if (this.#shuttingDown) return Promise.resolve(SHUTDOWN);
    return new Promise((resolve) => {
      this.#getters.push(resolve);
      if (this.#getters.length === 1) this.onGettersWaiting(true);
    });
  }

  done(key: K): void {
    if (!this.#processing.delete(key)) return;
    this.metrics.done(key);
    if (this.#dirty.has(key)) {
      this.#queue.push(key);
      this.#dispatch();
    }
    // As in client-go, a drain waits for in-flight keys only, not for re-queued ones.
    if (this.#processing.size === 0 && this.#shuttingDown) this.#idle();
  }

  /** Stops accepting adds and releases every waiting get; in-flight keys are not waited for. */
  shutDown(): void {
    this.#draining = false;
    this.#shutdown();
  }

  /** Like shutDown, but resolves once every in-flight key is done. A later shutDown() stops the wait. */
  shutDownWithDrain(): Promise<void> {
    this.#draining = true;
    const drained = this.#processing.size === 0 ? Promise.resolve() : new Promise<void>((r) => this.#drainers.push(r));
    this.#shutdown();
    return drained;
  }

  shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** Hook for subclasses: called once on shutdown, before getters are released. */
  protected onShutDown(): void {}

  /** Hook for subclasses: whether some get() is blocked waiting for a key. */
  protected onGettersWaiting(_waiting: boolean): void {}

  #shutdown(): void {
    const first = !this.#shuttingDown;
    this.#shuttingDown = true;
    if (first) this.onShutDown();
    if (this.#getters.length > 0) {
      // Waiting getters imply an empty queue, so every one of them is told to stop.
      for (const resolve of this.#getters.splice(0)) resolve(SHUTDOWN);
      this.onGettersWaiting(false);
    }
    if (!this.#draining) this.#releaseDrainers();
    if (this.#processing.size === 0) this.#idle();
  }

  #idle(): void {
    this.#releaseDrainers();
    this.metrics.close();
  }

  #releaseDrainers(): void {
    const drainers = this.#drainers;
    this.#drainers = [];
    for (const resolve of drainers) resolve();
  }

  #dispatch(): void {
    if (this.#getters.length === 0) return;
    while (this.#getters.length > 0 && this.len() > 0) {
      const resolve = this.#getters.shift() as (r: GetResult<K>) => void;
      resolve({ key: this.#take(), shutdown: false });
    }
    if (this.#getters.length === 0) this.onGettersWaiting(false);
  }

  /** Caller guarantees len() > 0. */
  #take(): K {
    const key = this.#queue[this.#head] as K;
    this.#head++;
    if (this.#head === this.#queue.length) {
      this.#queue = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    this.#processing.add(key);
    this.#dirty.delete(key);
    this.metrics.get(key);
    return key;
  }
}
