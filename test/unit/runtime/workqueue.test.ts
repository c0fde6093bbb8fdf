import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FakeClock } from "../../../runtime/fake-clock.ts";
import { metricsRegistry } from "../../../runtime/metrics/registry.ts";
import { RateLimitingQueue, type RateLimiter } from "../../../runtime/workqueue/index.ts";
import {
  BucketRateLimiter,
  DefaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
} from "../../../runtime/workqueue/rate-limiters.ts";
import { DelayingQueue } from "../../../runtime/workqueue/delaying-queue.ts";
import { MinHeap } from "../../../runtime/workqueue/heap.ts";
import { Queue, type GetResult } from "../../../runtime/workqueue/queue.ts";

/** Whether `p` settles once pending microtasks have run; queue state changes are synchronous. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((r) => setImmediate(r));
  return done;
}

async function getKey<K extends string>(q: Queue<K>): Promise<K> {
  const r = await q.get();
  assert.equal(r.shutdown, false);
  return r.key as K;
}

/**
 * Every suite is bounded, so a regression that leaves a get() or a timer pending fails the test
 * instead of stalling the run (also when this file is run on its own, without the test:unit script's
 * --test-timeout).
 */
const bounded = { timeout: 30_000 };

function seededRandom(seed: number): () => number {
  // mulberry32: deterministic delays, so a failure reproduces.
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("MinHeap", bounded, () => {
  it("pops in order, including after fix() moves items", () => {
    type Item = { v: number; index: number };
    const heap = new MinHeap<Item>((a, b) => a.v < b.v);
    const rand = seededRandom(7);
    const items: Item[] = Array.from({ length: 500 }, () => ({ v: Math.floor(rand() * 1000), index: -1 }));
    for (const item of items) heap.push(item);
    for (const item of items.filter((_, i) => i % 3 === 0)) {
      item.v = Math.floor(rand() * 1000);
      heap.fix(item);
    }
    const out: number[] = [];
    for (let item = heap.pop(); item; item = heap.pop()) out.push(item.v);
    assert.deepEqual(
      out,
      items.map((i) => i.v).sort((a, b) => a - b),
    );
  });
});

describe("Queue", bounded, () => {
  it("stores a key once however often it is added", async () => {
    const q = new Queue();
    q.add("a");
    q.add("b");
    q.add("a");
    q.add("a");
    assert.equal(q.len(), 2);
    assert.equal(await getKey(q), "a");
    assert.equal(await getKey(q), "b");
    assert.equal(q.len(), 0);
  });

  it("never hands out a key being processed; a re-add is processed exactly once more after done", async () => {
    const q = new Queue();
    q.add("a");
    assert.equal(await getKey(q), "a");
    q.add("a");
    q.add("a");
    assert.equal(q.len(), 0, "a re-added key waits for done()");
    const second = q.get();
    assert.equal(await settled(second), false, "a processing key must not be handed out again");
    q.done("a");
    assert.deepEqual(await second, { key: "a", shutdown: false });
    q.done("a");
    assert.equal(q.len(), 0);
    const third = q.get();
    assert.equal(await settled(third), false, "the key was queued once more, not twice");
    q.shutDown();
    assert.deepEqual(await third, { key: undefined, shutdown: true });
  });

  it("hands out each of 3,000 keys once, in order, across the compaction of its backing array", async () => {
    const q = new Queue();
    const keys = Array.from({ length: 3000 }, (_, i) => `k${i}`);
    for (const k of keys) q.add(k);
    const out: string[] = [];
    while (q.len() > 0) out.push(await getKey(q));
    assert.deepEqual(out, keys);
  });

  it("hands keys to waiting getters in FIFO order", async () => {
    const q = new Queue();
    const g1 = q.get();
    const g2 = q.get();
    q.add("x");
    q.add("y");
    assert.equal((await g1).key, "x");
    assert.equal((await g2).key, "y");
  });

  it("ignores done() for a key that is not being processed", async () => {
    const q = new Queue();
    q.add("a");
    q.done("a");
    assert.equal(q.len(), 1);
    assert.equal(await getKey(q), "a");
    assert.equal(q.len(), 0);
  });

  it("shutDown wakes all waiting getters and rejects further adds", async () => {
    const q = new Queue();
    const getters = [q.get(), q.get(), q.get()];
    assert.equal(q.shuttingDown(), false);
    q.shutDown();
    assert.equal(q.shuttingDown(), true);
    for (const r of await Promise.all(getters)) assert.deepEqual(r, { key: undefined, shutdown: true });
    q.add("late");
    assert.equal(q.len(), 0);
    assert.equal((await q.get()).shutdown, true);
  });

  it("still hands out keys queued before shutdown, then reports shutdown", async () => {
    const q = new Queue();
    q.add("a");
    q.add("b");
    q.shutDown();
    const results: GetResult<string>[] = [await q.get(), await q.get(), await q.get()];
    assert.deepEqual(
      results.map((r) => r.key),
      ["a", "b", undefined],
    );
  });

  it("shutDownWithDrain resolves only after in-flight keys are done", async () => {
    const q = new Queue();
    q.add("a");
    q.add("b");
    await getKey(q);
    await getKey(q);
    const drained = q.shutDownWithDrain();
    assert.equal(q.shuttingDown(), true);
    q.done("a");
    assert.equal(await settled(drained), false, "b is still in flight");
    q.done("b");
    assert.equal(await settled(drained), true);
  });

  it("shutDownWithDrain on an idle queue resolves at once; shutDown() cuts a drain short", async () => {
    assert.equal(await settled(new Queue().shutDownWithDrain()), true);
    const q = new Queue();
    q.add("a");
    await getKey(q);
    const drained = q.shutDownWithDrain();
    assert.equal(await settled(drained), false);
    q.shutDown();
    assert.equal(await settled(drained), true);
  });
});

describe("DelayingQueue", bounded, () => {
  it("releases 1,000 delayed keys in delay order behind a single timer", async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    const rand = seededRandom(42);
    const delays = new Map<string, number>();
    for (let i = 0; i < 1000; i++) {
      const key = `k${i}`;
      const delay = 1 + Math.floor(rand() * 10_000);
      delays.set(key, delay);
      q.addAfter(key, delay);
      assert.equal(clock.pendingTimers(), 1);
    }
    assert.equal(q.len(), 0);
    assert.equal(q.waitingLen(), 1000);

    clock.advance(5000);
    const due = [...delays.values()].filter((d) => d <= 5000).length;
    assert.equal(q.len(), due, "exactly the keys whose delay passed are queued");
    clock.advance(5000);
    assert.equal(q.len(), 1000);
    assert.equal(clock.pendingTimers(), 0);

    const order: string[] = [];
    while (q.len() > 0) order.push(await getKey(q));
    const expected = [...delays.keys()].sort(
      (a, b) => (delays.get(a) as number) - (delays.get(b) as number) || Number(a.slice(1)) - Number(b.slice(1)),
    );
    assert.deepEqual(order, expected);
  });

  it("keeps the earliest ready time for a key added twice", () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    q.addAfter("a", 1000);
    q.addAfter("a", 100);
    q.addAfter("b", 100);
    q.addAfter("b", 1000);
    assert.equal(q.waitingLen(), 2);
    clock.advance(100);
    assert.equal(q.len(), 2);
    assert.equal(q.waitingLen(), 0);
    assert.equal(clock.pendingTimers(), 0, "the later duplicates left nothing behind");
  });

  it("adds immediately for delays <= 0", () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    q.addAfter("a", 0);
    q.addAfter("b", -5);
    assert.equal(q.len(), 2);
    assert.equal(clock.pendingTimers(), 0);
  });

  it("re-arms for delays beyond setTimeout's 24.8-day limit", () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    const days40 = 40 * 24 * 3600 * 1000;
    q.addAfter("monthly", days40);
    clock.advance(days40 - 1);
    assert.equal(q.len(), 0);
    assert.equal(clock.pendingTimers(), 1);
    clock.advance(1);
    assert.equal(q.len(), 1);
  });

  it("refs its timer only while a getter waits, and clears it on shutdown", async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    q.addAfter("a", 50);
    assert.equal(clock.refedTimers(), 0, "pending delays alone must not keep the process alive");
    const got = q.get();
    assert.equal(clock.refedTimers(), 1);
    clock.advance(50);
    assert.equal((await got).key, "a");
    q.addAfter("b", 50);
    assert.equal(clock.refedTimers(), 0);
    q.shutDown();
    assert.equal(clock.pendingTimers(), 0);
    q.addAfter("c", 10);
    assert.equal(clock.pendingTimers(), 0, "no timers after shutdown");
  });

  it("a timer that keeps re-arming makes FakeClock.advance throw instead of spinning forever", () => {
    const clock = new FakeClock();
    let fired = 0;
    const rearm = () => {
      fired++;
      clock.setTimer(rearm, 0);
    };
    clock.setTimer(rearm, 0);
    assert.throws(() => clock.advance(1), /re-arming/);
    assert.ok(fired > 1000);
  });

  it("works on the real clock", async () => {
    const q = new DelayingQueue();
    q.addAfter("a", 1);
    assert.deepEqual(await q.get(), { key: "a", shutdown: false });
    q.shutDown();
  });
});

describe("rate limiters", bounded, () => {
  it("ItemExponentialFailureRateLimiter doubles from 5 ms up to 1000 s per key; forget resets", () => {
    const rl = new ItemExponentialFailureRateLimiter();
    const seen = Array.from({ length: 5 }, () => rl.when("a"));
    assert.deepEqual(seen, [5, 10, 20, 40, 80]);
    assert.equal(rl.numRequeues("a"), 5);
    assert.equal(rl.when("b"), 5, "keys back off independently");
    for (let i = 0; i < 100; i++) rl.when("a");
    assert.equal(rl.when("a"), 1_000_000);
    rl.forget("a");
    assert.equal(rl.numRequeues("a"), 0);
    assert.equal(rl.when("a"), 5);
  });

  it("a key's backoff starts again at the base delay after a success: fail, fail, succeed (forget), fail", () => {
    const now = 0;
    const limiters: Array<[string, () => RateLimiter<string>]> = [
      ["ItemExponentialFailureRateLimiter", () => new ItemExponentialFailureRateLimiter()],
      ["DefaultControllerRateLimiter", () => DefaultControllerRateLimiter({ clock: { now: () => new Date(now) } })],
      [
        "MaxOfRateLimiter",
        () =>
          new MaxOfRateLimiter(
            new ItemExponentialFailureRateLimiter({ baseDelayMs: 5 }),
            new ItemExponentialFailureRateLimiter({ baseDelayMs: 3 }),
          ),
      ],
    ];
    for (const [what, make] of limiters) {
      const rl = make();
      const first = rl.when("k");
      const second = rl.when("k");
      assert.deepEqual([first, second], [5, 10], `${what}: the delay grows while failures repeat`);
      rl.forget("k"); // the reconcile succeeded
      assert.equal(rl.numRequeues("k"), 0, what);
      assert.equal(rl.when("k"), 5, `${what}: the next failure starts again at the base delay`);
      assert.equal(rl.numRequeues("k"), 1, what);
      assert.equal(rl.when("k"), 10, `${what}: and grows from there`);
    }
  });

  it("ItemExponentialFailureRateLimiter honours its own base delay and cap", () => {
    const rl = new ItemExponentialFailureRateLimiter({ baseDelayMs: 1, maxDelayMs: 10 });
    assert.deepEqual(
      Array.from({ length: 6 }, () => rl.when("a")),
      [1, 2, 4, 8, 10, 10],
    );
  });

  it("BucketRateLimiter: a clock stepping backwards neither refills nor drains the bucket", () => {
    let now = 10_000;
    const rl = new BucketRateLimiter({ qps: 1, burst: 2, clock: { now: () => new Date(now) } });
    assert.equal(rl.when("x"), 0, "one of two tokens");
    now = 5_000;
    assert.equal(rl.when("x"), 0, "the second token is still there");
    assert.equal(rl.when("x"), 1000, "and then the bucket is empty");
    now = 10_000;
    assert.equal(rl.when("x"), 2000, "stepping forward to where it was refilled nothing");
  });

  it("BucketRateLimiter allows a burst of 100, then spaces by 100 ms and refills at 10 qps", () => {
    let now = 0;
    const rl = new BucketRateLimiter({ clock: { now: () => new Date(now) } });
    for (let i = 0; i < 100; i++) assert.equal(rl.when("x"), 0, `burst token ${i}`);
    assert.deepEqual([rl.when("x"), rl.when("x"), rl.when("x")], [100, 200, 300]);
    now += 100;
    assert.equal(rl.when("x"), 300, "100 ms refilled one token");
    now += 3_600_000;
    for (let i = 0; i < 100; i++) assert.equal(rl.when("x"), 0, "refill is capped at the burst");
    assert.equal(rl.when("x"), 100);
  });

  it("MaxOfRateLimiter and DefaultControllerRateLimiter take the longest delay", () => {
    const now = 0;
    const rl = DefaultControllerRateLimiter({ clock: { now: () => new Date(now) } });
    for (let i = 0; i < 100; i++) assert.equal(rl.when(`k${i}`), 5);
    assert.equal(rl.when("k100"), 100, "the bucket is empty, so it dominates first failures");
    assert.equal(rl.numRequeues("k1"), 1);
    rl.forget("k1");
    assert.equal(rl.numRequeues("k1"), 0);

    const max = new MaxOfRateLimiter(
      new ItemExponentialFailureRateLimiter({ baseDelayMs: 1 }),
      new ItemExponentialFailureRateLimiter({ baseDelayMs: 3 }),
    );
    assert.deepEqual([max.when("a"), max.when("a")], [3, 6]);
  });
});

describe("RateLimitingQueue", bounded, () => {
  it("addRateLimited with notLaterThanMs: the delay capped, the failure still counted (the backoff grows behind it)", async () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue({ clock, rateLimiter: new ItemExponentialFailureRateLimiter() });
    for (let i = 0; i < 6; i++) q.rateLimiter.when("a"); // 5 … 160 ms so far; the next is 320 ms
    q.addRateLimited("a", 50);
    clock.advance(49);
    assert.equal(q.len(), 0);
    clock.advance(1);
    assert.equal(q.len(), 1, "added at the cap, not after the limiter's 320 ms");
    assert.equal(q.numRequeues("a"), 7);
    assert.equal(await getKey(q), "a");
    q.done("a");
    q.addRateLimited("a", 10_000);
    clock.advance(639);
    assert.equal(q.len(), 0, "under the cap, the limiter's own delay (640 ms)");
    clock.advance(1);
    assert.equal(q.len(), 1);
    q.shutDown();
  });

  it("addRateLimited delays by the limiter and counts requeues until forget", async () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue({ clock, rateLimiter: new ItemExponentialFailureRateLimiter() });
    q.addRateLimited("a");
    assert.equal(q.len(), 0);
    clock.advance(4);
    assert.equal(q.len(), 0);
    clock.advance(1);
    assert.equal(q.len(), 1);
    assert.equal(await getKey(q), "a");
    q.done("a");
    q.addRateLimited("a");
    assert.equal(q.numRequeues("a"), 2);
    clock.advance(9);
    assert.equal(q.len(), 0);
    clock.advance(1);
    assert.equal(q.len(), 1);
    q.forget("a");
    assert.equal(q.numRequeues("a"), 0);
    q.shutDown();
  });

  it("after forget, a failing key is back in the queue after the base delay again", async () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue({ clock });
    /** How long after addRateLimited the key becomes available, in 1 ms steps. */
    const failAndMeasure = async (): Promise<number> => {
      q.addRateLimited("k");
      let waited = 0;
      while (q.len() === 0) {
        assert.ok(waited < 10_000, "the key never came back");
        clock.advance(1);
        waited++;
      }
      assert.equal(await getKey(q), "k");
      q.done("k");
      return waited;
    };
    assert.equal(await failAndMeasure(), 5, "first failure: the base delay");
    assert.equal(await failAndMeasure(), 10, "second failure: doubled");
    q.forget("k"); // success
    assert.equal(await failAndMeasure(), 5, "a failure after a success: the base delay again");
    assert.equal(await failAndMeasure(), 10);
    q.shutDown();
  });

  it("defaults to the controller rate limiter on the queue's clock", () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue({ clock });
    for (let i = 0; i < 101; i++) q.addRateLimited(`k${i}`);
    clock.advance(5);
    assert.equal(q.len(), 100, "the 101st key waits for a bucket token");
    clock.advance(95);
    assert.equal(q.len(), 101);
  });
});

describe("workqueue metrics", bounded, () => {
  function sample(text: string, metric: string, queue: string): number | undefined {
    for (const line of text.split("\n")) {
      if (!line.startsWith(`${metric}{`)) continue;
      if (!line.includes(`controller="${queue}"`) || !line.includes(`name="${queue}"`)) continue;
      return Number(line.slice(line.lastIndexOf(" ") + 1));
    }
    return undefined;
  }

  it("reports depth, adds, durations, retries and in-flight work under the queue's name", async () => {
    const clock = new FakeClock(1_000_000);
    const name = "test-metrics-queue";
    const q = new RateLimitingQueue({ name, clock });
    q.add("a");
    q.add("b");
    q.add("c");
    q.add("a");
    clock.advance(2000);
    assert.equal(await getKey(q), "a");
    clock.advance(500);
    q.done("a");
    assert.equal(await getKey(q), "b");
    clock.advance(3000);
    q.addRateLimited("z");

    const text = await metricsRegistry.metrics();
    assert.equal(sample(text, "workqueue_depth", name), 1);
    assert.equal(sample(text, "workqueue_adds_total", name), 3);
    assert.equal(sample(text, "workqueue_retries_total", name), 1);
    assert.equal(sample(text, "workqueue_queue_duration_seconds_count", name), 2);
    assert.equal(sample(text, "workqueue_queue_duration_seconds_sum", name), 4.5);
    assert.equal(sample(text, "workqueue_work_duration_seconds_count", name), 1);
    assert.equal(sample(text, "workqueue_work_duration_seconds_sum", name), 0.5);
    assert.equal(sample(text, "workqueue_unfinished_work_seconds", name), 3);
    assert.equal(sample(text, "workqueue_longest_running_processor_seconds", name), 3);

    q.done("b");
    q.shutDown();
    const after = await metricsRegistry.metrics();
    assert.equal(sample(after, "workqueue_unfinished_work_seconds", name), 0);
  });

  it("exports every series of a named queue at 0 as soon as the queue exists", async () => {
    const name = "test-metrics-fresh-queue";
    const q = new RateLimitingQueue({ name, clock: new FakeClock() });
    const text = await metricsRegistry.metrics();
    for (const metric of [
      "workqueue_depth",
      "workqueue_adds_total",
      "workqueue_retries_total",
      "workqueue_queue_duration_seconds_count",
      "workqueue_work_duration_seconds_count",
      "workqueue_unfinished_work_seconds",
      "workqueue_longest_running_processor_seconds",
    ]) {
      assert.equal(sample(text, metric, name), 0, `${metric} for a new queue`);
    }
    assert.ok(text.includes(`workqueue_adds_total{controller="${name}",name="${name}"} 0\n`));
    q.shutDown();
  });

  it("records nothing for an unnamed queue", async () => {
    const q = new Queue();
    q.add("a");
    const text = await metricsRegistry.metrics();
    assert.ok(!/workqueue_adds_total\{[^}]*name=""/.test(text));
  });
});
