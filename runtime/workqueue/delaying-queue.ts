// client-go's delaying queue: keys wait in a min-heap by ready time behind one timer armed for the
// earliest, so thousands of pending delays cost one timer. A key waits at most once; a new delay
// can only move it earlier.
import type { TimerHandle } from "../clock.ts";
import { MinHeap } from "./heap.ts";
import { Queue } from "./queue.ts";

interface Waiting<K> {
  key: K;
  readyAt: number;
  /** Insertion order, so keys ready at the same time come out first-in first-out. */
  seq: number;
  index: number;
}

// setTimeout treats anything above 2^31-1 ms (~24.8 days) as 1 ms; longer waits re-arm on wake-up.
const MAX_TIMER_MS = 2 ** 31 - 1;

export class DelayingQueue<K extends string = string> extends Queue<K> {
  readonly #waiting = new Map<K, Waiting<K>>();
  readonly #heap = new MinHeap<Waiting<K>>(
    (a, b) => a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq),
  );
  #seq = 0;
  #timer: TimerHandle | undefined;
  #timerFor = Infinity;
  // Pending delays alone must not keep the process alive, but a worker blocked in get() is waiting
  // for them, so the timer is ref'd exactly while someone waits.
  #getterWaiting = false;

  /** Adds `key` once `delayMs` has passed; delayMs <= 0 adds it now. */
  addAfter(key: K, delayMs: number): void {
    if (this.shuttingDown()) return;
    this.metrics.retry();
    if (!(delayMs > 0)) {
      this.add(key);
      return;
    }
    const readyAt = this.clock.now().getTime() + delayMs;
    const entry = this.#waiting.get(key);
    if (entry === undefined) {
      const created: Waiting<K> = { key, readyAt, seq: this.#seq++, index: -1 };
      this.#waiting.set(key, created);
      this.#heap.push(created);
    } else if (readyAt < entry.readyAt) {
      entry.readyAt = readyAt;
      this.#heap.fix(entry);
    }
    this.#arm();
  }

  /** Keys waiting for their delay to pass. */
  waitingLen(): number {
    return this.#waiting.size;
  }

  protected override onShutDown(): void {
    this.#cancelTimer();
    this.#heap.clear();
    this.#waiting.clear();
    super.onShutDown();
  }

  protected override onGettersWaiting(waiting: boolean): void {
    this.#getterWaiting = waiting;
    if (waiting) this.#timer?.ref();
    else this.#timer?.unref();
    super.onGettersWaiting(waiting);
  }

  #arm(): void {
    const next = this.#heap.peek();
    if (next === undefined) {
      this.#cancelTimer();
      return;
    }
    if (this.#timer !== undefined && this.#timerFor <= next.readyAt) return;
    this.#cancelTimer();
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, next.readyAt - this.clock.now().getTime()));
    this.#timer = this.clock.setTimer(() => this.#fire(), delay);
    this.#timerFor = next.readyAt;
    if (!this.#getterWaiting) this.#timer.unref();
  }

  #fire(): void {
    this.#timer = undefined;
    this.#timerFor = Infinity;
    const now = this.clock.now().getTime();
    for (let next = this.#heap.peek(); next !== undefined && next.readyAt <= now; next = this.#heap.peek()) {
      this.#heap.pop();
      this.#waiting.delete(next.key);
      this.add(next.key);
    }
    this.#arm();
  }

  #cancelTimer(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#timerFor = Infinity;
  }
}
