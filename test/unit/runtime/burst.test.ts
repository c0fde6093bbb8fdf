// The burst window that puts urgent writes (Job creates) first: when it holds, when it lets go, and the
// two writers that wait for it (the event recorder, and controller passes parked with requeueWhenQuiet).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { CoreV1Event } from "@kubernetes/client-node";
import { BurstWindow } from "../../../runtime/burst.ts";
import { Controller, type Request, type Result } from "../../../runtime/controller.ts";
import { EventRecorder } from "../../../runtime/events/recorder.ts";
import type { EventSink } from "../../../runtime/events/sink.ts";
import { discardLogger } from "../../../runtime/log.ts";

class ManualClock {
  ms = Date.UTC(2026, 10, 23, 12, 0, 0);
  now(): Date {
    return new Date(this.ms);
  }
}

const bounded = { timeout: 20_000 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("BurstWindow", bounded, () => {
  it("is active from an urgent write until quietMs passed without one", () => {
    const clock = new ManualClock();
    const w = new BurstWindow({ quietMs: 500, maxHoldMs: 30_000, clock });
    assert.equal(w.active(), false, "no urgent write yet");
    w.note();
    assert.equal(w.active(), true);
    clock.ms += 499;
    assert.equal(w.active(), true);
    w.note(); // the burst goes on
    clock.ms += 499;
    assert.equal(w.active(), true);
    clock.ms += 1;
    assert.equal(w.active(), false, "500 ms without an urgent write end it");
  });

  it("holds at most maxHoldMs, then lets writes flow until a quiet gap starts a new burst", () => {
    const clock = new ManualClock();
    const w = new BurstWindow({ quietMs: 500, maxHoldMs: 2_000, clock });
    for (let t = 0; t < 1_900; t += 100) {
      w.note();
      clock.ms += 100;
    }
    assert.equal(w.active(), true, "1.9 s into the burst");
    for (let t = 0; t < 1_000; t += 100) {
      w.note();
      clock.ms += 100;
      assert.equal(w.active(), false, "past maxHoldMs a burst that goes on holds nothing");
    }
    clock.ms += 600; // a quiet gap
    w.note();
    assert.equal(w.active(), true, "a new burst holds again");
  });

  it("whenQuiet resolves at once when quiet, and once the burst is over otherwise", async () => {
    const w = new BurstWindow({ quietMs: 100, maxHoldMs: 10_000 });
    await w.whenQuiet();
    w.note();
    const started = Date.now();
    let resolved = false;
    const quiet = w.whenQuiet().then(() => (resolved = true));
    const keepBusy = setInterval(() => w.note(), 20);
    await sleep(300);
    assert.equal(resolved, false, "still bursting");
    clearInterval(keepBusy);
    await quiet;
    assert.ok(Date.now() - started >= 300 + 50, "not before the quiet gap");
  });

  it("whenQuiet resolves after maxHoldMs even if the burst never stops", async () => {
    const w = new BurstWindow({ quietMs: 100, maxHoldMs: 300 });
    w.note();
    const keepBusy = setInterval(() => w.note(), 20);
    const started = Date.now();
    try {
      await w.whenQuiet();
    } finally {
      clearInterval(keepBusy);
    }
    const waited = Date.now() - started;
    assert.ok(waited >= 250 && waited < 2_000, `waited ${waited} ms`);
  });
});

class CountingSink implements EventSink {
  readonly created: string[] = [];
  async create(event: CoreV1Event): Promise<CoreV1Event> {
    this.created.push(event.reason ?? "");
    return { ...event, metadata: { ...event.metadata, resourceVersion: "1" } };
  }
  async patch(event: CoreV1Event): Promise<CoreV1Event> {
    return event;
  }
}

function configMap(name: string) {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "ns1", uid: `uid-${name}` } };
}

describe("the event recorder during a burst", bounded, () => {
  it("writes nothing while the burst is on, everything once it is over", async () => {
    const w = new BurstWindow({ quietMs: 150, maxHoldMs: 10_000 });
    const sink = new CountingSink();
    const rec = new EventRecorder({ component: "c", host: "h", sink, holdWhile: w });
    w.note();
    const keepBusy = setInterval(() => w.note(), 20);
    for (let i = 0; i < 20; i++) rec.event(configMap(`cm-${i}`), "Normal", "SuccessfulCreate", `created ${i}`);
    await sleep(300);
    assert.equal(sink.created.length, 0, "held while the burst is on");
    clearInterval(keepBusy);
    await rec.flush();
    assert.equal(sink.created.length, 20, "all written after it, none dropped");
  });

  it("stops holding once a tenth of maxPending wait: what a burst defers leaves the queue room", async () => {
    const w = new BurstWindow({ quietMs: 10_000, maxHoldMs: 60_000 });
    const sink = new CountingSink();
    const rec = new EventRecorder({ component: "c", host: "h", sink, holdWhile: w, maxPending: 100 });
    w.note();
    for (let i = 0; i < 5; i++) rec.event(configMap(`cm-${i}`), "Normal", "SuccessfulCreate", `created ${i}`);
    await sleep(50);
    assert.equal(sink.created.length, 0, "below a tenth: held");
    for (let i = 5; i < 40; i++) rec.event(configMap(`cm-${i}`), "Normal", "SuccessfulCreate", `created ${i}`);
    await sleep(100);
    assert.ok(sink.created.length >= 30, `written while the burst goes on: ${sink.created.length}`);
    assert.ok(rec.pending <= 10, `at most a tenth held: ${rec.pending}`);
  });

  it("without a burst, writes at once", async () => {
    const w = new BurstWindow({ quietMs: 150 });
    const sink = new CountingSink();
    const rec = new EventRecorder({ component: "c", host: "h", sink, holdWhile: w });
    rec.event(configMap("a"), "Normal", "SuccessfulCreate", "created");
    await sleep(20);
    assert.deepEqual(sink.created, ["SuccessfulCreate"]);
  });
});

describe("a controller's parked keys (requeueWhenQuiet)", bounded, () => {
  it("without a burst window, come back at once", async () => {
    const seen: string[] = [];
    const reconciler = {
      reconcile: async (req: Request): Promise<Result> => {
        seen.push(req.name);
        return seen.length === 1 ? { requeueWhenQuiet: true } : {};
      },
    };
    const ctl = new Controller("park-no-burst", reconciler, { logger: discardLogger });
    const stop = new AbortController();
    const run = ctl.start(stop.signal, 1000);
    ctl.enqueue({ name: "a" });
    await until(() => seen.length >= 2, 5000, "the parked key's second pass");
    assert.deepEqual(seen, ["a", "a"]);
    stop.abort();
    await run;
  });

  it("come back once, together, when the burst is over", async () => {
    const w = new BurstWindow({ quietMs: 150, maxHoldMs: 10_000 });
    const seen: Array<{ name: string; active: boolean }> = [];
    const reconciler = {
      reconcile: async (req: Request, ctx: { burst?: { active(): boolean } }): Promise<Result> => {
        const active = ctx.burst?.active() ?? false;
        seen.push({ name: req.name, active });
        return active ? { requeueWhenQuiet: true } : {};
      },
    };
    const ctl = new Controller("burst-park", reconciler, {
      logger: discardLogger,
      burst: w,
      maxConcurrentReconciles: 2,
    });
    const stop = new AbortController();
    const run = ctl.start(stop.signal, 1000);
    w.note();
    const keepBusy = setInterval(() => w.note(), 20);
    for (const name of ["a", "b", "c"]) ctl.enqueue({ name });
    await sleep(300);
    assert.deepEqual(seen.map((s) => s.name).sort(), ["a", "b", "c"], "each passed once during the burst, then waited");
    clearInterval(keepBusy);
    const deadline = Date.now() + 3000;
    while (seen.length < 6 && Date.now() < deadline) await sleep(20);
    assert.deepEqual(
      seen
        .slice(3)
        .map((s) => `${s.name}:${s.active}`)
        .sort(),
      ["a:false", "b:false", "c:false"],
      "each came back once after the burst",
    );
    await sleep(300);
    assert.equal(seen.length, 6, "and not again");
    stop.abort();
    await run;
  });
});

/** Polls `pred` until it holds; fails after `ms` instead of hanging. */
async function until(pred: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!pred()) {
    assert.ok(Date.now() < deadline, `${what}: not within ${ms} ms`);
    await sleep(1);
  }
}

describe("a controller's deferred keys (requeueWhenIdle)", bounded, () => {
  it("come back behind the keys that decide, a worker's worth at a time, and each once", async () => {
    const order: string[] = [];
    const passed = new Set<string>();
    let deferring = true;
    const reconciler = {
      reconcile: async (req: Request, ctx: { queueLength?: () => number }): Promise<Result> => {
        order.push(req.name);
        const first = !passed.has(req.name);
        passed.add(req.name);
        await sleep(2);
        // The first pass of each "new" key defers while others wait; its second pass does the work.
        if (req.name.startsWith("new") && deferring && first && (ctx.queueLength?.() ?? 0) > 0)
          return { requeueWhenIdle: true };
        return {};
      },
    };
    const ctl = new Controller("idle-defer", reconciler, { logger: discardLogger, maxConcurrentReconciles: 2 });
    const stop = new AbortController();
    const run = ctl.start(stop.signal, 1000);
    const news = Array.from({ length: 10 }, (_, i) => `new-${i}`);
    for (const name of news) ctl.enqueue({ name });
    // Keys that decide, enqueued while the deferred ones wait: they must not queue behind all of them.
    await sleep(5);
    for (const name of ["due-a", "due-b"]) ctl.enqueue({ name });
    const deadline = Date.now() + 3000;
    while (order.length < 22 && Date.now() < deadline) await sleep(10);
    deferring = false;
    await sleep(100);
    const firstPasses = new Set<string>();
    const second = order.filter((n) => {
      if (!n.startsWith("new")) return false;
      if (firstPasses.has(n)) return true;
      firstPasses.add(n);
      return false;
    });
    assert.deepEqual([...firstPasses].sort(), [...news].sort(), "every new key had its first pass");
    // The last new key found nothing else queued (the due keys came later or were taken): it did not defer.
    assert.ok(second.length >= 8 && second.length <= 10, `each deferred key came back once: ${order.join(" ")}`);
    assert.equal(new Set(second).size, second.length, `no key came back twice: ${order.join(" ")}`);
    const lastDue = Math.max(order.indexOf("due-a"), order.indexOf("due-b"));
    const secondPassesBeforeDue = order.slice(0, lastDue).filter((n, i) => n.startsWith("new") && order.indexOf(n) < i);
    assert.ok(
      secondPassesBeforeDue.length <= 2,
      `the keys that decide waited behind at most a worker's worth of deferred keys: ${order.join(" ")}`,
    );
    stop.abort();
    await run;
  });

  /**
   * One worker; each key defers its first pass. Returns "<key>:<keys queued behind it>" for each pass, once there
   * were `passes`. `reenqueue`: a key whose first pass sees an event for itself arrive (queued again, as dirty).
   */
  async function deferring(name: string, keys: string[], passes: number, reenqueue?: string): Promise<string[]> {
    const seen: string[] = [];
    const passed = new Set<string>();
    const ctl: Controller = new Controller(
      name,
      {
        reconcile: async (req: Request, ctx: { queueLength?: () => number }): Promise<Result> => {
          seen.push(`${req.name}:${ctx.queueLength?.()}`);
          if (passed.has(req.name)) return {};
          passed.add(req.name);
          if (req.name === reenqueue) {
            ctl.enqueue(req);
            return {};
          }
          return { requeueWhenIdle: true };
        },
      },
      { logger: discardLogger },
    );
    for (const k of keys) ctl.enqueue({ name: k });
    const stop = new AbortController();
    const run = ctl.start(stop.signal, 1000);
    try {
      await until(() => seen.length >= passes, 5000, `${passes} passes`);
    } finally {
      stop.abort();
      await run;
    }
    return seen;
  }

  it("are handed back only while fewer keys than workers are queued", async () => {
    // a, b and c defer while others are queued; c leaves the queue empty, so one comes back at a time.
    assert.deepEqual(await deferring("idle-room", ["a", "b", "c"], 6), ["a:2", "b:1", "c:0", "a:0", "b:0", "c:0"]);
  });

  it("stay behind a key queued again while it was being reconciled", async () => {
    // k's event, which came during its pass, is queued before the deferred key is handed back.
    assert.deepEqual(await deferring("idle-behind-dirty", ["i", "k"], 4, "k"), ["i:1", "k:0", "k:0", "i:0"]);
  });
});
