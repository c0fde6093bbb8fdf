// A binary min-heap whose items remember their slot, so a waiting entry can be moved earlier in
// O(log n) instead of being searched for (client-go's waitForPriorityQueue does the same).

interface HeapItem {
  /** Slot in the heap, maintained by the heap; -1 once removed. */
  index: number;
}

export class MinHeap<T extends HeapItem> {
  readonly #items: T[] = [];
  readonly #less: (a: T, b: T) => boolean;

  constructor(less: (a: T, b: T) => boolean) {
    this.#less = less;
  }

  get size(): number {
    return this.#items.length;
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  push(item: T): void {
    item.index = this.#items.length;
    this.#items.push(item);
    this.#up(item.index);
  }

  pop(): T | undefined {
    const items = this.#items;
    const top = items[0];
    if (top === undefined) return undefined;
    const last = items.pop() as T;
    if (items.length > 0) {
      items[0] = last;
      last.index = 0;
      this.#down(0);
    }
    top.index = -1;
    return top;
  }

  /** Restores order after `item`'s priority changed in place. */
  fix(item: T): void {
    if (this.#items[item.index] !== item) return;
    if (!this.#down(item.index)) this.#up(item.index);
  }

  clear(): void {
    for (const item of this.#items) item.index = -1;
    this.#items.length = 0;
  }

  #at(i: number): T {
    return this.#items[i] as T;
  }

  #swap(i: number, j: number): void {
    const a = this.#at(i);
    const b = this.#at(j);
    this.#items[i] = b;
    this.#items[j] = a;
    b.index = i;
    a.index = j;
  }

  #up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(this.#at(i), this.#at(parent))) break;
      this.#swap(i, parent);
      i = parent;
    }
  }

  /** Returns whether the item moved, so fix() knows to try the other direction. */
  #down(start: number): boolean {
    const n = this.#items.length;
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && this.#less(this.#at(right), this.#at(left)) ? right : left;
      if (!this.#less(this.#at(child), this.#at(i))) break;
      this.#swap(i, child);
      i = child;
    }
    return i > start;
  }
}
