// The controller and the informer without an apiserver: their metrics exist (at 0) from the moment
// they are created, and a key's backoff starts again at the base delay after a successful reconcile.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type EventHandler, Informer, type SharedInformer } from "../../../runtime/cache/informer.ts";
import type { Client } from "../../../runtime/client.ts";
import { Controller, type Request, type Result, RetryNoLaterThan } from "../../../runtime/controller.ts";
import type { KubeObject, ResourceKind } from "../../../runtime/kinds.ts";
import { discardLogger } from "../../../runtime/log.ts";
import { metricsRegistry } from "../../../runtime/metrics/registry.ts";
import { type RateLimiter } from "../../../runtime/workqueue/index.ts";
import { ItemExponentialFailureRateLimiter } from "../../../runtime/workqueue/rate-limiters.ts";

/** The /metrics text: what the metrics server serves. */
const scrape = () => metricsRegistry.metrics();

function hasLine(text: string, line: string): boolean {
  return text.split("\n").includes(line);
}

function assertLines(text: string, lines: string[]): void {
  const missing = lines.filter((l) => !hasLine(text, l));
  assert.deepEqual(missing, [], `/metrics lacks:\n${missing.join("\n")}`);
}

/** Rejects after `ms` so a regression fails the test instead of hanging it. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Bounds every test here, also when this file runs without the test:unit script's --test-timeout. */
const bounded = { timeout: 30_000 };

const noop = { reconcile: async () => undefined };

describe("metrics exist from the start", bounded, () => {
  it("a new controller exports all its counters at 0 before anything happens", async () => {
    const name = "metrics-init-ctl";
    const ctl = new Controller(name, noop, { logger: discardLogger, maxConcurrentReconciles: 3 });
    const text = await scrape();
    assertLines(text, [
      `controller_runtime_reconcile_errors_total{controller="${name}"} 0`,
      `controller_runtime_reconcile_panics_total{controller="${name}"} 0`,
      ...["error", "requeue", "requeue_after", "success"].map(
        (result) => `controller_runtime_reconcile_total{controller="${name}",result="${result}"} 0`,
      ),
      `controller_runtime_reconcile_time_seconds_count{controller="${name}"} 0`,
      `controller_runtime_max_concurrent_reconciles{controller="${name}"} 3`,
      `controller_runtime_active_workers{controller="${name}"} 0`,
      `controller_runtime_deferred_reconciles{controller="${name}"} 0`,
      // Its work queue's series too.
      `workqueue_depth{controller="${name}",name="${name}"} 0`,
      `workqueue_adds_total{controller="${name}",name="${name}"} 0`,
      `workqueue_retries_total{controller="${name}",name="${name}"} 0`,
      `workqueue_queue_duration_seconds_count{controller="${name}",name="${name}"} 0`,
      `workqueue_work_duration_seconds_count{controller="${name}",name="${name}"} 0`,
      `workqueue_unfinished_work_seconds{controller="${name}",name="${name}"} 0`,
      `workqueue_longest_running_processor_seconds{controller="${name}",name="${name}"} 0`,
    ]);
    ctl.queue.shutDown();
  });

  it("initialising again leaves counts alone", async () => {
    const name = "metrics-init-twice";
    const first = new Controller(
      name,
      { reconcile: () => Promise.reject(new Error("boom")) },
      { logger: discardLogger },
    );
    const stop = new AbortController();
    const run = first.start(stop.signal, 1000);
    first.enqueue({ name: "a" });
    const errors = `controller_runtime_reconcile_errors_total{controller="${name}"}`;
    const deadline = Date.now() + 5000;
    while (!hasLine(await scrape(), `${errors} 1`)) {
      assert.ok(Date.now() < deadline, "the failing reconcile was not counted");
      await new Promise((r) => setTimeout(r, 2));
    }
    stop.abort();
    await within(run, 5000, "controller stops");
    const value = (text: string, series: string) =>
      text
        .split("\n")
        .find((l) => l.startsWith(`${series} `))
        ?.slice(series.length + 1);
    const time = `controller_runtime_reconcile_time_seconds_count{controller="${name}"}`;
    const before = await scrape();
    new Controller(name, noop, { logger: discardLogger }).queue.shutDown();
    const after = await scrape();
    assert.ok(Number(value(before, errors)) >= 1);
    assert.equal(value(after, errors), value(before, errors), "a second controller reset the error count");
    assert.equal(value(after, time), value(before, time), "a second controller reset the reconcile time");
  });

  it("a new informer exports its list, watch and watch-error counters at 0, before and after it starts", async () => {
    const kind: ResourceKind = {
      group: "metrics-init.example.com",
      version: "v1",
      kind: "Widget",
      plural: "widgets",
      namespaced: true,
    };
    const resource = "widgets.metrics-init.example.com";
    // A client with an empty list and a watch that stays open, silent, until the informer stops.
    const client = {
      list: async () => ({ metadata: { resourceVersion: "7" }, items: [] }),
      watch: async (_k: ResourceKind, o: { signal?: AbortSignal }): Promise<AsyncIterable<never>> => ({
        [Symbol.asyncIterator]: () => ({
          next: () =>
            new Promise<IteratorResult<never>>((resolve) => {
              const end = () => resolve({ done: true, value: undefined });
              if (o.signal?.aborted) end();
              else o.signal?.addEventListener("abort", end, { once: true });
            }),
        }),
      }),
    } as unknown as Client;
    const informer = new Informer<KubeObject>(client, kind, { backoff: { initialMs: 1, maxMs: 1 } });
    const zero = [
      ...["Gone", "Stalled", "Error", "Unknown", "Timeout", "Forbidden"].map(
        (reason) => `informer_watch_errors_total{resource="${resource}",reason="${reason}"} 0`,
      ),
      `informer_lists_total{resource="${resource}",reason="gone"} 0`,
      `informer_lists_total{resource="${resource}",reason="retry"} 0`,
    ];
    assertLines(await scrape(), [
      ...zero,
      `informer_lists_total{resource="${resource}",reason="initial"} 0`,
      `informer_watches_total{resource="${resource}"} 0`,
    ]);

    informer.start();
    try {
      assert.equal(await within(informer.waitForSync(), 5000, "sync"), true);
      const deadline = Date.now() + 5000;
      while (!hasLine(await scrape(), `informer_watches_total{resource="${resource}"} 1`)) {
        assert.ok(Date.now() < deadline, "the watch did not start");
        await new Promise((r) => setTimeout(r, 2));
      }
      assertLines(await scrape(), [...zero, `informer_lists_total{resource="${resource}",reason="initial"} 1`]);
    } finally {
      await within(informer.stop(), 5000, "informer stops");
    }
  });
});

describe("controller backoff", bounded, () => {
  /** Records every delay the controller's rate limiter hands out. */
  class Recording implements RateLimiter<string> {
    readonly delays: number[] = [];
    readonly inner = new ItemExponentialFailureRateLimiter<string>({ baseDelayMs: 5, maxDelayMs: 1000 });
    when(key: string): number {
      const d = this.inner.when(key);
      this.delays.push(d);
      return d;
    }
    forget(key: string): void {
      this.inner.forget(key);
    }
    numRequeues(key: string): number {
      return this.inner.numRequeues(key);
    }
  }

  /** Polls `pred` until it holds; fails after `ms` instead of hanging. */
  async function until(pred: () => boolean, ms: number, what: string): Promise<void> {
    const deadline = Date.now() + ms;
    while (!pred()) {
      assert.ok(Date.now() < deadline, `${what}: not within ${ms} ms`);
      await new Promise((r) => setTimeout(r, 1));
    }
  }

  /**
   * Runs a controller whose reconciler plays `steps` for one key ("fail" throws). After an "ok" the
   * key is enqueued again, as the next watch event would; every other outcome brings it back itself.
   * Returns once the last step's outcome reached the queue, with the delays the rate limiter gave.
   */
  async function script(
    name: string,
    steps: Array<"fail" | "ok" | "requeue" | "requeueAfter" | "failNoLaterThan">,
  ): Promise<{ delays: number[]; numRequeues: number; caps: Array<number | undefined> }> {
    const limiter = new Recording();
    let calls = 0;
    const ctl = new Controller(
      name,
      {
        async reconcile(_req: Request): Promise<Result | void> {
          const step = steps[calls++];
          if (step === "fail") throw new Error(`failure ${calls}`);
          if (step === "failNoLaterThan") throw new RetryNoLaterThan(`failure ${calls}`, 7);
          if (step === "requeue") return { requeue: true };
          if (step === "requeueAfter") return { requeueAfterMs: 1 };
          return {};
        },
      },
      { logger: discardLogger, rateLimiter: limiter },
    );
    // The cap each rate-limited retry was added with (undefined: none).
    const caps: Array<number | undefined> = [];
    const addRateLimited = ctl.queue.addRateLimited.bind(ctl.queue);
    ctl.queue.addRateLimited = (k: string, cap?: number) => {
      caps.push(cap);
      addRateLimited(k, cap);
    };
    const stop = new AbortController();
    const run = ctl.start(stop.signal, 1000);
    const key = "ns/k";
    try {
      ctl.enqueue({ namespace: "ns", name: "k" });
      for (let i = 0; i < steps.length; i++) {
        await until(() => calls > i, 5000, `reconcile #${i + 1}`);
        // After a success a new event brings the key back. Added while the key is still being
        // processed, it is handed out again once the success has been dealt with (forget, done).
        if (steps[i] === "ok") ctl.enqueue({ namespace: "ns", name: "k" });
      }
      const rateLimited = steps.filter((s) => s === "fail" || s === "requeue" || s === "failNoLaterThan").length;
      await until(() => limiter.delays.length === rateLimited, 5000, "last outcome processed");
      return { delays: limiter.delays, numRequeues: ctl.queue.numRequeues(key), caps };
    } finally {
      stop.abort();
      await within(run, 5000, "controller stops");
    }
  }

  it("starts again at the base delay after a successful reconcile (fail, fail, succeed, fail)", async () => {
    const { delays, numRequeues } = await script("backoff-reset-ok", ["fail", "fail", "ok", "fail"]);
    assert.deepEqual(delays, [5, 10, 5], "the failure after a success must back off from the base delay");
    assert.equal(numRequeues, 1);
  });

  it("a RetryNoLaterThan error backs off like any error, its retry capped: the backoff keeps growing behind it", async () => {
    const { delays, caps } = await script("backoff-no-later-than", ["fail", "fail", "failNoLaterThan", "fail"]);
    // The limiter is asked every time (the failures count); the cap bounds only that retry's delay.
    assert.deepEqual(delays, [5, 10, 20, 40]);
    assert.deepEqual(caps, [undefined, undefined, 7, undefined]);
  });

  it("a requeueAfterMs of 0 is a success: the key is not queued again", async () => {
    const seen: string[] = [];
    const ctl: Controller = new Controller(
      "requeue-after-zero",
      {
        async reconcile(req, ctx): Promise<Result> {
          // What else is queued while this key is reconciled.
          seen.push(`${req.name}:${ctx.queueLength?.()}`);
          if (req.name !== "a" || seen.length > 1) return {};
          ctl.enqueue({ name: "b" });
          return { requeueAfterMs: 0 };
        },
      },
      { logger: discardLogger },
    );
    const stop = new AbortController();
    const run = ctl.start(stop.signal, 1000);
    try {
      ctl.enqueue({ name: "a" });
      await until(() => seen.length >= 2, 5000, "a and b reconciled");
      // Had "a" been queued again, it would wait behind "b".
      assert.deepEqual(seen, ["a:0", "b:0"]);
    } finally {
      stop.abort();
      await within(run, 5000, "controller stops");
    }
  });

  it("starts again at the base delay after requeueAfter, and keeps growing across requeue: true", async () => {
    const { delays } = await script("backoff-reset-requeue", [
      "fail",
      "fail",
      "requeueAfter",
      "fail",
      "requeue",
      "fail",
    ]);
    // requeueAfter forgets the key; requeue: true is a rate-limited retry (controller-runtime), not a success.
    assert.deepEqual(delays, [5, 10, 5, 10, 20]);
  });
});

describe("controller watches", bounded, () => {
  it("an update that moves an object to another owner enqueues the new owner and the old one", async () => {
    let handler: EventHandler<KubeObject> | undefined;
    const informer = { addEventHandler: (h: EventHandler<KubeObject>) => (handler = h) };
    const ctl = new Controller("watch-owner-moved", noop, { logger: discardLogger });
    const ownerOf = (o: Readonly<KubeObject>): Request[] => [
      { namespace: "ns", name: o.metadata?.labels?.owner ?? "" },
    ];
    ctl.watch(informer as unknown as SharedInformer<KubeObject>, ownerOf);
    assert.ok(handler?.onUpdate);
    handler.onUpdate(
      { metadata: { name: "x", namespace: "ns", labels: { owner: "old" } } },
      { metadata: { name: "x", namespace: "ns", labels: { owner: "new" } } },
    );
    assert.equal(ctl.queue.len(), 2);
    const keys = [await ctl.queue.get(), await ctl.queue.get()].map((r) => r.key);
    assert.deepEqual(keys, ["ns/new", "ns/old"]);
    ctl.queue.shutDown();
  });
});
