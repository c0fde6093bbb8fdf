// Bounded concurrency for the benchmark's own API calls.

/** Runs at most `limit` tasks at a time, first come first served. */
export class Limiter {
  readonly #limit: number;
  #running = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(limit: number) {
    this.#limit = Math.max(1, limit);
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#limit) await new Promise<void>((r) => this.#waiting.push(r));
    this.#running++;
    try {
      return await fn();
    } finally {
      this.#running--;
      this.#waiting.shift()?.();
    }
  }

  get active(): number {
    return this.#running + this.#waiting.length;
  }
}

/** fn(i) for i in [0, count) with at most `limit` in flight; rejects with the first error. */
export async function forEachLimit(count: number, limit: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failed: unknown;
  const worker = async () => {
    while (failed === undefined && next < count) {
      const i = next++;
      try {
        await fn(i);
      } catch (err) {
        failed ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
  if (failed !== undefined) throw failed;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(resolve, Math.max(0, ms));
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });
}
