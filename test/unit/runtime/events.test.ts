import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { CoreV1Event } from "@kubernetes/client-node";
import { APIError } from "../../../runtime/errors.ts";
import {
  AGGREGATE_MESSAGE_PREFIX,
  EventCorrelator,
  LRU,
  RefillingBuckets,
  aggregateKey,
  eventKey,
  type EventPatch,
} from "../../../runtime/events/correlator.ts";
import { FakeRecorder } from "../../../runtime/events/fake.ts";
import { TokenBucket } from "../../../runtime/tokenbucket.ts";
import { sprintf } from "../../../runtime/events/format.ts";
import { DEFAULT_MAX_IN_FLIGHT, DROP_REASONS, EventRecorder } from "../../../runtime/events/recorder.ts";
import type { EventSink } from "../../../runtime/events/sink.ts";
import type { Recorder } from "../../../runtime/events/types.ts";
import { metricsRegistry } from "../../../runtime/metrics/registry.ts";
import type { TimerClock, TimerHandle } from "../../../runtime/clock.ts";
import { CapturingLogger } from "../../capturing-logger.ts";

class TestClock {
  ms: number;
  constructor(ms = Date.UTC(2024, 0, 1, 12, 0, 0)) {
    this.ms = ms;
  }
  now(): Date {
    return new Date(this.ms);
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

interface Call {
  op: "create" | "patch";
  event: CoreV1Event;
  patch?: EventPatch;
}

/** An in-memory apiserver for Events: names are unique, patches of unknown names answer 404. */
class MemorySink implements EventSink {
  readonly calls: Call[] = [];
  readonly stored = new Map<string, CoreV1Event>();
  fail: ((op: "create" | "patch", event: CoreV1Event) => unknown) | undefined;
  /** Patches that found no Event (a patch overtaking its create would show here). */
  notFound = 0;
  #rv = 0;

  async create(event: CoreV1Event): Promise<CoreV1Event> {
    this.calls.push({ op: "create", event: structuredClone(event) });
    const f = this.fail?.("create", event);
    if (f) throw f;
    const k = `${event.metadata.namespace}/${event.metadata.name}`;
    if (this.stored.has(k)) throw new APIError(409, "AlreadyExists", `${k} already exists`);
    const saved = { ...structuredClone(event), metadata: { ...event.metadata, resourceVersion: String(++this.#rv) } };
    this.stored.set(k, saved);
    return structuredClone(saved);
  }

  async patch(event: CoreV1Event, patch: EventPatch): Promise<CoreV1Event> {
    this.calls.push({ op: "patch", event: structuredClone(event), patch: { ...patch } });
    const f = this.fail?.("patch", event);
    if (f) throw f;
    const k = `${event.metadata.namespace}/${event.metadata.name}`;
    const cur = this.stored.get(k);
    if (!cur) {
      this.notFound++;
      throw new APIError(404, "NotFound", `events "${event.metadata.name}" not found`);
    }
    const saved = {
      ...cur,
      count: patch.count,
      message: patch.message,
      lastTimestamp: new Date(patch.lastTimestamp),
      metadata: { ...cur.metadata, resourceVersion: String(++this.#rv) },
    };
    this.stored.set(k, saved);
    return structuredClone(saved);
  }

  creates(): Call[] {
    return this.calls.filter((c) => c.op === "create");
  }
  patches(): Call[] {
    return this.calls.filter((c) => c.op === "patch");
  }
}

/** A TimerClock whose timers fire only when the test advances it. */
class FakeTimerClock extends TestClock implements TimerClock {
  readonly #timers = new Set<{ at: number; fn: () => void }>();

  setTimer(fn: () => void, delayMs: number): TimerHandle {
    const t = { at: this.ms + delayMs, fn };
    this.#timers.add(t);
    return { cancel: () => void this.#timers.delete(t), ref() {}, unref() {} };
  }

  get timers(): number {
    return this.#timers.size;
  }

  /** Move to the earliest timer and fire it; false when there is none. */
  fireNext(): boolean {
    let next: { at: number; fn: () => void } | undefined;
    for (const t of this.#timers) if (!next || t.at < next.at) next = t;
    if (!next) return false;
    this.#timers.delete(next);
    this.ms = Math.max(this.ms, next.at);
    next.fn();
    return true;
  }
}

/** Let pending promise callbacks and I/O-free async steps run. */
async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((r) => setImmediate(r));
}

/** Drive a recorder on a FakeTimerClock until flush() resolves, firing retry timers as they come. */
async function flushWithTimers(rec: EventRecorder, clock: FakeTimerClock): Promise<void> {
  let done = false;
  const f = rec.flush().then(() => (done = true));
  for (let i = 0; i < 10_000 && !done; i++) {
    await settle(2);
    if (!done && !clock.fireNext()) await settle(2);
  }
  await f;
}

/** events_dropped_total by reason label. */
async function dropped(): Promise<Record<string, number>> {
  const m = metricsRegistry.getSingleMetric("events_dropped_total");
  assert.ok(m, "events_dropped_total is registered");
  const out: Record<string, number> = {};
  for (const v of (await m.get()).values) out[String(v.labels.reason)] = v.value;
  return out;
}

async function droppedSince(before: Record<string, number>): Promise<Record<string, number>> {
  const now = await dropped();
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(now)) if (v - (before[k] ?? 0) !== 0) out[k] = v - (before[k] ?? 0);
  return out;
}

/**
 * Holds every sink call until open() (or until its own release), recording how many were in flight at
 * once, overall and per involved object.
 */
function gateSink(sink: MemorySink) {
  let inFlight = 0;
  let maxInFlight = 0;
  const perObject = new Map<string, number>();
  let maxPerObject = 0;
  let isOpen = false;
  const held: (() => void)[] = [];
  const startedWaiters: { n: number; resolve: () => void }[] = [];
  let started = 0;
  const wrap =
    <A extends unknown[]>(fn: (e: CoreV1Event, ...a: A) => Promise<CoreV1Event>) =>
    async (e: CoreV1Event, ...a: A): Promise<CoreV1Event> => {
      const obj = e.involvedObject.name ?? "";
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      perObject.set(obj, (perObject.get(obj) ?? 0) + 1);
      maxPerObject = Math.max(maxPerObject, perObject.get(obj)!);
      started++;
      for (const w of startedWaiters.filter((w) => started >= w.n)) {
        startedWaiters.splice(startedWaiters.indexOf(w), 1);
        w.resolve();
      }
      try {
        if (!isOpen) await new Promise<void>((r) => held.push(r));
        // A random delay so writes finish out of order.
        await new Promise((r) => setTimeout(r, Math.random() * 3));
        return await fn(e, ...a);
      } finally {
        inFlight--;
        perObject.set(obj, perObject.get(obj)! - 1);
      }
    };
  sink.create = wrap(sink.create.bind(sink));
  sink.patch = wrap(sink.patch.bind(sink));
  return {
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    get maxPerObject() {
      return maxPerObject;
    },
    started(n: number): Promise<void> {
      if (started >= n) return Promise.resolve();
      return new Promise((resolve) => startedWaiters.push({ n, resolve }));
    },
    open(): void {
      isOpen = true;
      for (const r of held.splice(0)) r();
    },
  };
}

function configMap(name = "cm", namespace: string | undefined = "ns1", uid = "uid-1") {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace, uid, resourceVersion: "7" } };
}

function setup(extra: Partial<ConstructorParameters<typeof EventRecorder>[0]> = {}) {
  const clock = new TestClock();
  const sink = new MemorySink();
  const logger = new CapturingLogger();
  const rec = new EventRecorder({
    component: "cronjob-controller",
    host: "node-a",
    sink,
    clock,
    logger,
    backoff: { initialMs: 1, maxMs: 2 },
    ...extra,
  });
  return { clock, sink, logger, rec };
}

// Every test also asserts that nothing escaped as an unhandled rejection.
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
before(() => process.on("unhandledRejection", onUnhandled));
after(() => {
  process.off("unhandledRejection", onUnhandled);
  assert.deepEqual(unhandled, []);
});

describe("sprintf", () => {
  it("formats the Go verbs recorders use", () => {
    assert.equal(
      sprintf("job %s ran %d times (%v) %q 100%%", "a", 3.7, { x: 1 }, "b"),
      'job a ran 3 times ({"x":1}) "b" 100%',
    );
    assert.equal(sprintf("%v and %v", new Error("boom"), null), "boom and <nil>");
    assert.equal(sprintf("%s %s", "only"), "only %!s(MISSING)");
    assert.equal(sprintf("no verbs", 1, "x"), "no verbs %!(EXTRA 1, x)");
    assert.equal(sprintf("%.2f %t", 1.234, true), "1.23 true");
  });
});

describe("correlator keys", () => {
  const base = (): CoreV1Event => ({
    metadata: { name: "x", namespace: "ns1" },
    involvedObject: { apiVersion: "v1", kind: "ConfigMap", name: "cm", namespace: "ns1", uid: "u1" },
    source: { component: "c", host: "h" },
    type: "Normal",
    reason: "Synced",
    message: "ok",
  });

  it("dedupe key covers source, object, type, reason and message", () => {
    const a = base();
    assert.equal(eventKey(a), eventKey(base()));
    for (const change of [
      (e: CoreV1Event) => (e.message = "other"),
      (e: CoreV1Event) => (e.reason = "Other"),
      (e: CoreV1Event) => (e.type = "Warning"),
      (e: CoreV1Event) => (e.involvedObject.uid = "u2"),
      (e: CoreV1Event) => (e.involvedObject.apiVersion = "v2"),
      (e: CoreV1Event) => (e.source = { component: "c2", host: "h" }),
    ]) {
      const b = base();
      change(b);
      assert.notEqual(eventKey(b), eventKey(a));
    }
    // Timestamps, names and counts are not part of what makes events the same.
    const c = { ...base(), count: 4, metadata: { name: "y" }, lastTimestamp: new Date() };
    assert.equal(eventKey(c), eventKey(a));
  });

  it("aggregate key ignores the message only", () => {
    const a = base();
    const b = { ...base(), message: "different" };
    assert.equal(aggregateKey(a), aggregateKey(b));
    assert.notEqual(aggregateKey(a), aggregateKey({ ...base(), reason: "Other" }));
  });

  it("keys do not collide when fields are concatenated differently", () => {
    const a = base();
    a.involvedObject.name = "ab";
    a.involvedObject.namespace = "c";
    const b = base();
    b.involvedObject.name = "a";
    b.involvedObject.namespace = "bc";
    assert.notEqual(eventKey(a), eventKey(b));
  });

  it("LRU evicts the least recently used", () => {
    const l = new LRU<number>(2);
    l.set("a", 1);
    l.set("b", 2);
    l.get("a");
    l.set("c", 3);
    assert.equal(l.get("b"), undefined);
    assert.equal(l.get("a"), 1);
    assert.equal(l.size, 2);
  });

  it("token bucket starts full and refills at qps", () => {
    const b = new TokenBucket(1 / 300, 2, 0);
    assert.equal(b.tryAccept(0), true);
    assert.equal(b.tryAccept(0), true);
    assert.equal(b.tryAccept(0), false);
    assert.equal(b.tryAccept(299_999), false);
    assert.equal(b.tryAccept(300_000), true);
    assert.equal(b.tryAccept(300_000), false);
  });

  it("token bucket: tryAccept(now, leaving) takes a token only while `leaving` more remain", () => {
    const b = new TokenBucket(1 / 300, 3, 0);
    assert.equal(b.tryAccept(0, 1), true);
    assert.equal(b.tryAccept(0, 1), true);
    assert.equal(b.tryAccept(0, 1), false, "the last token is left for callers that leave none");
    assert.equal(b.tryAccept(0), true);
    assert.equal(b.tryAccept(0), false);
  });

  it("token bucket: a clock stepping backwards neither drains nor mints tokens", () => {
    const b = new TokenBucket(1, 1, 10_000);
    assert.equal(b.tryAccept(5_000), true, "the full bucket still has its token");
    assert.equal(b.tryAccept(10_000), false, "and stepping back to 10 s refilled nothing");
    assert.equal(b.tryAccept(11_000), true, "a second after the last reading, one token");
  });

  it("aggregation window: each occurrence extends it, only more than 10 quiet minutes end it", () => {
    const clock = new TestClock();
    const c = new EventCorrelator({ clock });
    const t0 = clock.ms;
    // Nine distinct messages 100 s apart: 800 s from the first to the last, more than the 10-minute window.
    for (let i = 1; i <= 9; i++) {
      assert.equal(c.correlate({ ...base(), message: `m${i}` }, t0 + (i - 1) * 100_000).event.message, `m${i}`);
    }
    // The tenth exactly 10 minutes after the ninth is still in the window: the combined event.
    const tenth = c.correlate({ ...base(), message: "m10" }, t0 + 800_000 + 600_000);
    assert.equal(tenth.event.message, AGGREGATE_MESSAGE_PREFIX + "m10");
  });

  it("correlator does not mutate the caller's event", () => {
    const c = new EventCorrelator({ clock: new TestClock() });
    const e = { ...base(), count: 1 };
    c.correlate(structuredClone(e));
    const copy = structuredClone(e);
    c.correlate(e);
    assert.deepEqual(e, copy);
  });
});

describe("EventRecorder", () => {
  it("writes a core/v1 Event describing the object", async () => {
    const { sink, rec, clock } = setup();
    const result = rec.event(configMap(), "Normal", "Synced", "all good");
    assert.equal(result, undefined, "event() is synchronous");
    assert.equal(sink.calls.length, 0, "nothing is written before event() returns");
    await rec.flush();
    assert.equal(sink.calls.length, 1);
    const e = sink.calls[0]!.event;
    assert.match(e.metadata.name ?? "", /^cm\.[0-9a-f]+$/);
    assert.equal(e.metadata.namespace, "ns1");
    assert.deepEqual(e.involvedObject, {
      apiVersion: "v1",
      kind: "ConfigMap",
      name: "cm",
      namespace: "ns1",
      uid: "uid-1",
      resourceVersion: "7",
    });
    assert.equal(e.type, "Normal");
    assert.equal(e.reason, "Synced");
    assert.equal(e.message, "all good");
    assert.deepEqual(e.source, { component: "cronjob-controller", host: "node-a" });
    assert.equal(e.reportingComponent, "cronjob-controller");
    assert.equal(e.reportingInstance, "node-a");
    assert.equal(e.count, 1);
    // metav1.Time has whole seconds.
    assert.equal(e.firstTimestamp?.getTime(), Math.floor(clock.ms / 1000) * 1000);
    assert.deepEqual(e.lastTimestamp, e.firstTimestamp);
  });

  it("gives events of the same instant distinct names", async () => {
    const { sink, rec } = setup();
    rec.event(configMap(), "Normal", "A", "1");
    rec.event(configMap(), "Normal", "B", "2");
    await rec.flush();
    const [a, b] = sink.creates().map((c) => c.event.metadata.name);
    assert.notEqual(a, b);
  });

  it("puts events about cluster-scoped objects in the default namespace", async () => {
    const { sink, rec } = setup();
    rec.event({ apiVersion: "v1", kind: "Node", metadata: { name: "n1", uid: "u" } }, "Warning", "NotReady", "down");
    await rec.flush();
    const e = sink.calls[0]!.event;
    assert.equal(e.metadata.namespace, "default");
    assert.equal(e.involvedObject.namespace, undefined);
  });

  it("accepts an object reference", async () => {
    const { sink, rec } = setup();
    rec.event({ kind: "Pod", name: "p", namespace: "ns2", uid: "u" }, "Normal", "R", "m");
    await rec.flush();
    assert.equal(sink.calls[0]!.event.metadata.namespace, "ns2");
    assert.equal(sink.calls[0]!.event.involvedObject.name, "p");
  });

  it("dedupes identical events into one Event with a count", async () => {
    const { sink, rec, clock } = setup();
    rec.event(configMap(), "Normal", "Synced", "same");
    await rec.flush();
    clock.advance(2000);
    rec.event(configMap(), "Normal", "Synced", "same");
    await rec.flush();
    clock.advance(3000);
    rec.eventf(configMap(), "Normal", "Synced", "%s", "same");
    await rec.flush();
    assert.equal(sink.creates().length, 1);
    const patches = sink.patches();
    assert.deepEqual(
      patches.map((p) => p.patch?.count),
      [2, 3],
    );
    const name = sink.creates()[0]!.event.metadata.name;
    assert.ok(patches.every((p) => p.event.metadata.name === name));
    assert.equal(
      patches[1]!.patch?.lastTimestamp,
      new Date(Math.floor(clock.ms / 1000) * 1000).toISOString().replace(".000", ""),
    );
    const stored = [...sink.stored.values()];
    assert.equal(stored.length, 1);
    assert.equal(stored[0]!.count, 3);
    assert.ok(stored[0]!.lastTimestamp! > stored[0]!.firstTimestamp!);
  });

  it("writes separate Events for different messages, reasons, types and objects", async () => {
    const { sink, rec } = setup();
    rec.event(configMap(), "Normal", "Synced", "one");
    rec.event(configMap(), "Normal", "Synced", "two");
    rec.event(configMap(), "Normal", "Other", "one");
    rec.event(configMap(), "Warning", "Synced", "one");
    rec.event(configMap("cm2", "ns1", "uid-2"), "Normal", "Synced", "one");
    await rec.flush();
    assert.equal(sink.creates().length, 5);
    assert.equal(sink.patches().length, 0);
  });

  it("aggregates the 10th distinct message within 10 minutes into a combined event", async () => {
    const { sink, rec, clock } = setup();
    for (let i = 1; i <= 9; i++) {
      rec.event(configMap(), "Warning", "Failed", `attempt ${i}`);
      clock.advance(1000);
    }
    await rec.flush();
    assert.equal(sink.creates().length, 9);
    assert.ok(sink.calls.every((c) => !c.event.message?.startsWith(AGGREGATE_MESSAGE_PREFIX)));

    rec.event(configMap(), "Warning", "Failed", "attempt 10");
    await rec.flush();
    clock.advance(1000);
    rec.event(configMap(), "Warning", "Failed", "attempt 11");
    await rec.flush();
    clock.advance(1000);
    rec.event(configMap(), "Warning", "Failed", "attempt 12");
    await rec.flush();
    const aggregate = sink.creates()[9]!;
    assert.equal(aggregate.event.message, AGGREGATE_MESSAGE_PREFIX + "attempt 10");
    assert.equal(aggregate.event.count, 1);
    assert.equal(sink.creates().length, 10, "later distinct messages update the aggregate");
    assert.deepEqual(
      sink.patches().map((p) => [p.event.metadata.name, p.patch?.count, p.patch?.message]),
      [
        [aggregate.event.metadata.name, 2, AGGREGATE_MESSAGE_PREFIX + "attempt 11"],
        [aggregate.event.metadata.name, 3, AGGREGATE_MESSAGE_PREFIX + "attempt 12"],
      ],
    );
    // Different reason: its own aggregation record.
    rec.event(configMap(), "Warning", "OtherReason", "attempt 13");
    await rec.flush();
    assert.equal(sink.creates().at(-1)!.event.message, "attempt 13");
  });

  it("starts aggregation afresh after 10 quiet minutes", async () => {
    const { sink, rec, clock } = setup();
    for (let i = 1; i <= 9; i++) rec.event(configMap(), "Warning", "Failed", `m${i}`);
    clock.advance(600_001);
    rec.event(configMap(), "Warning", "Failed", "m10");
    await rec.flush();
    assert.equal(sink.creates().at(-1)!.event.message, "m10");
  });

  it("drops new Events beyond a burst of 25 per object and reason, refilling one per 5 minutes", async () => {
    const { sink, rec, clock, logger } = setup({ correlator: { aggregateMaxEvents: 1000 } });
    const before = await dropped();
    // Aggregation off: 30 distinct messages, all new Events of one object and reason.
    for (let i = 0; i < 30; i++) rec.event(configMap(), "Warning", "Tick", `distinct ${i}`);
    await rec.flush();
    assert.equal(sink.calls.length, 25);
    const spam = logger.lines.filter((l) => l.msg.includes("spam"));
    assert.equal(spam.length, 5);
    assert.ok(spam.every((l) => l.kv.reason === "Tick" && l.kv.object === "ConfigMap ns1/cm"));
    assert.deepEqual(await droppedSince(before), { spam_filter: 5 });
    // Another object, or another reason of the same object, has its own bucket.
    rec.event(configMap("other", "ns1", "uid-9"), "Warning", "Tick", "distinct 0");
    rec.event(configMap(), "Normal", "Other", "distinct 0");
    await rec.flush();
    assert.equal(sink.calls.length, 27);

    clock.advance(299_000);
    rec.event(configMap(), "Warning", "Tick", "distinct 31");
    await rec.flush();
    assert.equal(sink.calls.length, 27);
    clock.advance(1000);
    rec.event(configMap(), "Warning", "Tick", "distinct 32");
    await rec.flush();
    assert.equal(sink.calls.length, 28);
  });

  it("writes an object's routine events three at once, then one every 5 minutes, new Events and updates alike", async () => {
    const { sink, rec, clock } = setup();
    const before = await dropped();
    const routine = { routine: true };
    // An every-minute CronJob's runs: each a created, an ended and a cleaned-up Event, each message distinct.
    for (let i = 0; i < 12; i++) {
      rec.event(configMap(), "Normal", "SuccessfulCreate", `Created job cm-${i}`, routine);
      rec.event(configMap(), "Normal", "SawCompletedJob", `Saw completed job: cm-${i}`, routine);
      rec.event(configMap(), "Normal", "SuccessfulDelete", `Deleted job cm-${i - 1}`, routine);
      await rec.flush();
      clock.advance(60_000);
    }
    // The first run's three, then the first routine event once a token refilled (minutes 5 and 10).
    assert.deepEqual(
      sink.calls.map((c) => `${c.event.reason} ${c.op}`),
      [
        "SuccessfulCreate create",
        "SawCompletedJob create",
        "SuccessfulDelete create",
        "SuccessfulCreate create",
        "SuccessfulCreate create",
      ],
    );
    assert.deepEqual(await droppedSince(before), { routine: 36 - 5 });
    // A routine event spends no budget of the others: a Warning and a non-routine event of the same reason pass.
    rec.event(configMap(), "Warning", "FailedCreate", "Error creating job cm-13: quota");
    rec.event(configMap(), "Normal", "SawCompletedJob", "Saw completed job: cm-12, condition: Failed");
    await rec.flush();
    assert.equal(sink.calls.length, 7);
    // Another object has its own budget.
    rec.event(configMap("other", "ns1", "uid-9"), "Normal", "SuccessfulCreate", "Created job other-1", routine);
    await rec.flush();
    assert.equal(sink.calls.length, 8);
  });

  it("holds the routine budget for a fleet larger than the correlator's caches, and forgets refilled buckets", async () => {
    const { sink, rec, clock } = setup({ correlator: { lruCacheSize: 100 } });
    const cm = (i: number) => configMap(`cm-${i}`, "ns1", `uid-${i}`);
    for (let minute = 0; minute < 6; minute++) {
      for (let i = 0; i < 500; i++)
        rec.event(cm(i), "Normal", "SuccessfulCreate", `Created job ${minute}`, { routine: true });
      await rec.flush();
      clock.advance(60_000);
    }
    // Minutes 0, 1, 2 (the burst) and 5 (a token refilled) of each CronJob, not all six: 500 buckets are kept
    // although the caches hold 100.
    assert.equal(sink.calls.length, 500 * 4);
    const buckets = new RefillingBuckets(1 / 300, 1);
    for (let i = 0; i < 50; i++) assert.equal(buckets.tryAccept(`k${i}`, 0), true);
    assert.equal(buckets.tryAccept("k0", 1000), false);
    for (let i = 0; i < 60; i++) buckets.tryAccept(`later${i}`, 400_000);
    assert.ok(buckets.size <= 61, `refilled buckets are forgotten (${buckets.size} kept)`);
    assert.equal(buckets.tryAccept("k0", 400_000), true);
  });

  it("keeps every routine event of an object that acts every 15 minutes or less often", async () => {
    const { sink, rec, clock } = setup();
    // A run every 15 minutes, each its three routine events.
    for (let i = 0; i < 6; i++) {
      for (const reason of ["SuccessfulCreate", "SawCompletedJob", "SuccessfulDelete"])
        rec.event(configMap(), "Normal", reason, `${reason} cm-${i}`, { routine: true });
      await rec.flush();
      clock.advance(900_000);
    }
    assert.equal(sink.calls.length, 18);
  });

  it("the fake recorder keeps routine events apart, so a controller test can see which it marked", () => {
    const r = new FakeRecorder();
    r.event(configMap(), "Normal", "SuccessfulCreate", "Created job cm-1", { routine: true });
    r.event(configMap(), "Normal", "SawCompletedJob", "Saw completed job: cm-1, condition: Failed");
    assert.deepEqual(r.routine, ["Normal SuccessfulCreate Created job cm-1"]);
    assert.equal(r.take().length, 2);
    assert.deepEqual(r.routine, []);
  });

  it("a flood of identical events cannot starve a later distinct event (issue 12)", async () => {
    const { sink, rec, clock } = setup();
    const before = await dropped();
    const cronJob = {
      apiVersion: "batch.tutorial.kubebuilder.io/v1",
      kind: "CronJob",
      metadata: { name: "cj", namespace: "ns1", uid: "u-cj" },
    };
    // Each FailedCreate written on its own (a retrying reconcile through a one-minute outage).
    for (let i = 0; i < 40; i++) {
      rec.event(cronJob, "Warning", "FailedCreate", "Error creating job: connect ECONNREFUSED 10.0.0.1:443");
      await rec.flush();
      clock.advance(1500);
    }
    rec.event(cronJob, "Normal", "SuccessfulCreate", "Created job cj-1700000000");
    rec.event(cronJob, "Warning", "MissSchedule", "Missed scheduled time to start a job: 2024-01-01T12:00:00Z");
    await rec.flush();
    const stored = [...sink.stored.values()];
    assert.deepEqual(stored.map((e) => e.reason).sort(), ["FailedCreate", "MissSchedule", "SuccessfulCreate"]);
    const failed = stored.find((e) => e.reason === "FailedCreate")!;
    // Repeats are updates of one Event, with a budget of their own (25, then one per 10 s): the ones
    // over it are counted as spam drops, their occurrences carried by the next update written.
    const writes = sink.calls.filter((c) => c.event.reason === "FailedCreate");
    assert.equal(writes.filter((c) => c.op === "create").length, 1);
    assert.ok(writes.length >= 30, `${writes.length} FailedCreate writes`);
    assert.equal(failed.count, writes.at(-1)!.patch?.count);
    assert.deepEqual(await droppedSince(before), { spam_filter: 40 - writes.length });
  });

  it("limits updates of one Event to its own budget and carries skipped repeats in the next count", async () => {
    const { sink, rec, clock } = setup();
    for (let i = 0; i < 30; i++) {
      rec.event(configMap(), "Normal", "Tick", "same");
      await rec.flush();
    }
    // 1 create + 25 updates; 4 repeats over the budget are not written...
    assert.equal(sink.calls.length, 26);
    assert.equal(sink.calls.at(-1)!.patch?.count, 26);
    clock.advance(10_000);
    rec.event(configMap(), "Normal", "Tick", "same");
    await rec.flush();
    // ...but counted by the next update that passes (one token per 10 s).
    assert.equal(sink.calls.length, 27);
    assert.equal(sink.calls.at(-1)!.patch?.count, 31);
  });

  it("folds repeats into a write still waiting in the queue", async () => {
    const { sink, rec, clock } = setup();
    const gate = gateSink(sink);
    rec.event(configMap(), "Warning", "Failed", "first");
    await gate.started(1);
    // While the create is in flight, 30 repeats of another event fold into one waiting write.
    for (let i = 0; i < 30; i++) {
      rec.event(configMap(), "Warning", "Again", "same");
      clock.advance(1000);
    }
    assert.equal(rec.pending, 1);
    gate.open();
    await rec.flush();
    assert.deepEqual(
      sink.calls.map((c) => [c.op, c.event.reason, c.event.count]),
      [
        ["create", "Failed", 1],
        ["create", "Again", 30],
      ],
    );
    const again = [...sink.stored.values()].find((e) => e.reason === "Again")!;
    assert.equal(again.count, 30);
    assert.equal(again.lastTimestamp!.getTime() - again.firstTimestamp!.getTime(), 29_000);
    // The next repeat patches the Event the folded create wrote.
    rec.event(configMap(), "Warning", "Again", "same");
    await rec.flush();
    assert.equal(sink.calls.at(-1)!.op, "patch");
    assert.equal(sink.calls.at(-1)!.patch?.count, 31);
    assert.equal(sink.calls.at(-1)!.event.metadata.name, again.metadata.name);
  });

  it("creates the Event again when the patch answers 404", async () => {
    const { sink, rec } = setup();
    rec.event(configMap(), "Normal", "Synced", "same");
    await rec.flush();
    const name = sink.creates()[0]!.event.metadata.name;
    sink.stored.clear(); // expired or deleted
    rec.event(configMap(), "Normal", "Synced", "same");
    await rec.flush();
    assert.deepEqual(
      sink.calls.map((c) => c.op),
      ["create", "patch", "create"],
    );
    const recreated = sink.calls[2]!.event;
    assert.equal(recreated.metadata.name, name);
    assert.equal(recreated.count, 2);
    assert.equal(recreated.metadata.resourceVersion, undefined);
    rec.event(configMap(), "Normal", "Synced", "same");
    await rec.flush();
    assert.equal(sink.calls.at(-1)!.op, "patch");
    assert.equal(sink.calls.at(-1)!.patch?.count, 3);
  });

  it("never throws and leaves no rejection when the sink throws synchronously or rejects", async () => {
    for (const failure of [
      () => {
        throw new TypeError("sync boom");
      },
      () => new APIError(403, "Forbidden", "events is forbidden"),
      () => new Error("ECONNREFUSED"),
      () => new APIError(500, "InternalError", "etcd down"),
    ]) {
      const { sink, rec, logger } = setup({ maxTries: 3 });
      sink.fail = () => failure();
      // A synchronous throw from the sink: wrap create so it throws instead of rejecting.
      const origCreate = sink.create.bind(sink);
      sink.create = (e: CoreV1Event) => {
        const f = sink.fail?.("create", e);
        if (f instanceof TypeError) throw f;
        return origCreate(e);
      };
      assert.doesNotThrow(() => rec.event(configMap(), "Warning", "Failed", "x"));
      await rec.flush();
      assert.ok(logger.at("error").length > 0, "the failure is logged");
    }
  });

  it("retries transient failures up to maxTries and final API errors not at all", async () => {
    const transient = setup({ maxTries: 4 });
    transient.sink.fail = () => new Error("socket hang up");
    transient.rec.event(configMap(), "Normal", "R", "m");
    await transient.rec.flush();
    assert.equal(transient.sink.calls.length, 4);
    assert.ok(transient.logger.at("error").some((m) => m.includes("retry limit exceeded")));

    const forbidden = setup({ maxTries: 4 });
    forbidden.sink.fail = () => new APIError(403, "Forbidden", "nope");
    forbidden.rec.event(configMap(), "Normal", "R", "m");
    await forbidden.rec.flush();
    assert.equal(forbidden.sink.calls.length, 1);

    const flaky = setup({ maxTries: 4 });
    let n = 0;
    flaky.sink.fail = () => (++n < 3 ? new APIError(503, "ServiceUnavailable", "later") : undefined);
    flaky.rec.event(configMap(), "Normal", "R", "m");
    await flaky.rec.flush();
    assert.equal(flaky.sink.stored.size, 1);
  });

  it("treats AlreadyExists as written", async () => {
    const { sink, rec, logger } = setup({ maxTries: 4 });
    sink.fail = () => new APIError(409, "AlreadyExists", "exists");
    rec.event(configMap(), "Normal", "R", "m");
    await rec.flush();
    assert.equal(sink.calls.length, 1);
    assert.deepEqual(logger.at("error"), []);
  });

  it("flush waits for writes in flight and queued", async () => {
    const { sink, rec } = setup();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const origCreate = sink.create.bind(sink);
    sink.create = async (e) => {
      await gate;
      return origCreate(e);
    };
    rec.event(configMap(), "Normal", "A", "1");
    rec.event(configMap(), "Normal", "B", "2");
    let flushed = false;
    const f = rec.flush().then(() => (flushed = true));
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    assert.equal(flushed, false);
    assert.equal(sink.stored.size, 0);
    release();
    await f;
    assert.equal(sink.stored.size, 2);
    // Idle: resolves at once.
    await rec.flush();
  });

  it("drops events beyond maxPending instead of growing without bound", async () => {
    const { sink, rec, logger } = setup({ maxPending: 5 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const origCreate = sink.create.bind(sink);
    sink.create = async (e) => {
      await gate;
      return origCreate(e);
    };
    for (let i = 0; i < 20; i++) rec.event(configMap(`o${i}`, "ns1", `u${i}`), "Normal", "R", "m");
    assert.equal(rec.pending, 5);
    assert.equal(logger.at("debug").filter((m) => m.includes("queue full")).length, 15);
    release();
    await rec.flush();
    assert.equal(sink.stored.size, 5);
  });

  it("ignores unsupported types and nameless objects without throwing", async () => {
    const { sink, rec, logger } = setup();
    rec.event(configMap(), "Bogus" as never, "R", "m");
    rec.event({ kind: "ConfigMap", metadata: {} }, "Normal", "R", "m");
    await rec.flush();
    assert.equal(sink.calls.length, 0);
    assert.equal(logger.at("error").length, 2);
  });

  it("shutdown drops later events and ends retry waits", async () => {
    const { sink, rec } = setup({ maxTries: 50, backoff: { initialMs: 60_000, maxMs: 60_000 } });
    sink.fail = () => new Error("down");
    rec.event(configMap(), "Normal", "R", "m");
    rec.event(configMap(), "Normal", "R", "queued");
    while (sink.calls.length === 0) await new Promise((r) => setImmediate(r));
    const f = rec.flush();
    rec.shutdown();
    // The flush ends although each failed write waits a minute before its retry: shutdown ended the waits.
    await f;
    // Writes run in parallel: "queued" may have been tried beside "m" before the shutdown, never after it.
    const tried = sink.calls.map((c) => c.event.message);
    assert.ok(tried.length >= 1 && tried.length <= 2, JSON.stringify(tried));
    rec.event(configMap(), "Normal", "R", "after");
    await rec.flush();
    assert.deepEqual(
      sink.calls.map((c) => c.event.message),
      tried,
      "no retry and no later event after the shutdown",
    );
  });
});

describe("EventRecorder: outages, drops and parallel writes (issue 12)", () => {
  const cronJob = (name = "cj", uid = `u-${name}`) => ({
    apiVersion: "batch.tutorial.kubebuilder.io/v1",
    kind: "CronJob",
    metadata: { name, namespace: "ns1", uid },
  });
  // What runtime/client.ts throws when the apiserver is restarting.
  const refused = () =>
    new APIError(0, "Unknown", "POST /api/v1/namespaces/ns1/events: connect ECONNREFUSED 127.0.0.1:6443");

  it("every drop reason has a series from the start", async () => {
    const now = await dropped();
    for (const r of DROP_REASONS) assert.ok(r in now, `events_dropped_total{reason="${r}"} exists`);
    assert.deepEqual([...DROP_REASONS].sort(), [
      "invalid",
      "queue_full",
      "rejected",
      "retries_exhausted",
      "routine",
      "shutdown",
      "spam_filter",
    ]);
  });

  it("retries a write refused with ECONNREFUSED through a 70 s apiserver restart", async () => {
    const clock = new FakeTimerClock();
    const { sink, rec, logger } = setup({ clock, backoff: {} });
    const before = await dropped();
    const downUntil = clock.ms + 70_000;
    sink.fail = () => (clock.ms < downUntil ? refused() : undefined);
    rec.event(cronJob(), "Warning", "FailedCreate", "Error creating job: connect ECONNREFUSED");
    await flushWithTimers(rec, clock);
    assert.equal(sink.stored.size, 1);
    assert.equal([...sink.stored.values()][0]!.reason, "FailedCreate");
    assert.ok(sink.calls.length <= 12, `${sink.calls.length} tries`);
    assert.deepEqual(logger.at("error"), []);
    const retries = logger.lines.filter((l) => l.msg.includes("will retry"));
    assert.equal(retries.length, sink.calls.length - 1);
    for (const l of retries) {
      assert.equal(l.kv.reason, "FailedCreate", "the Event's reason, not the API's");
      assert.equal(l.kv.statusReason, "Unknown");
      assert.equal(l.kv.object, "CronJob ns1/cj");
    }
    assert.deepEqual(await droppedSince(before), {});
  });

  it("gives up after 12 tries over about 85 s, counted and logged with the Event's reason", async () => {
    const clock = new FakeTimerClock();
    const { sink, rec, logger } = setup({ clock, backoff: {} });
    const before = await dropped();
    const start = clock.ms;
    sink.fail = () => refused();
    rec.event(cronJob(), "Warning", "FailedCreate", "x");
    await flushWithTimers(rec, clock);
    assert.equal(sink.calls.length, 12);
    const waited = clock.ms - start;
    assert.ok(waited >= 84_000 && waited <= 85_000, `waited ${waited} ms`);
    const [line] = logger.lines.filter((l) => l.level === "error");
    assert.ok(line);
    assert.match(line.msg, /retry limit exceeded/);
    assert.equal(line.kv.reason, "FailedCreate");
    assert.equal(line.kv.object, "CronJob ns1/cj");
    assert.equal(line.kv.dropped, "retries_exhausted");
    assert.ok(line.err instanceof APIError, "the last error is the record's error");
    assert.deepEqual(await droppedSince(before), { retries_exhausted: 1 });
  });

  it("honours Retry-After on 429", async () => {
    const clock = new FakeTimerClock();
    const { sink, rec } = setup({ clock, backoff: {} });
    const at: number[] = [];
    sink.fail = () => {
      at.push(clock.ms);
      return at.length === 1 ? new APIError(429, "TooManyRequests", "slow down", { retryAfterSeconds: 7 }) : undefined;
    };
    rec.event(cronJob(), "Normal", "SuccessfulCreate", "Created job cj-1");
    await flushWithTimers(rec, clock);
    assert.equal(sink.stored.size, 1);
    assert.equal(at[1]! - at[0]!, 7000);
  });

  it("retries transport errors, timeouts, 429 and 5xx; 4xx are final, logged with the Event's reason", async () => {
    const transient: [string, () => unknown][] = [
      ["socket error", () => new Error("read ECONNRESET")],
      ["Client transport error", refused],
      [
        "Client timeout",
        () => new APIError(0, "Timeout", "POST /api/v1/namespaces/ns1/events: no response within 30000 ms"),
      ],
      ["408", () => new APIError(408, "Timeout", "request timeout")],
      ["429", () => new APIError(429, "TooManyRequests", "slow down")],
      ["500", () => new APIError(500, "InternalError", "etcd leader changed")],
      ["503", () => new APIError(503, "ServiceUnavailable", "apiserver shutting down")],
      ["504", () => new APIError(504, "Timeout", "gateway timeout")],
    ];
    for (const [name, err] of transient) {
      const { sink, rec } = setup();
      let n = 0;
      sink.fail = () => (++n <= 2 ? err() : undefined);
      rec.event(cronJob(), "Warning", "FailedCreate", "x");
      await rec.flush();
      assert.equal(sink.calls.length, 3, name);
      assert.equal(sink.stored.size, 1, name);
    }
    const permanent: [string, APIError][] = [
      ["400", new APIError(400, "BadRequest", "bad")],
      ["403", new APIError(403, "Forbidden", 'events is forbidden: User "x" cannot create resource "events"')],
      ["404 namespace gone", new APIError(404, "NotFound", 'namespaces "ns1" not found')],
      ["422", new APIError(422, "Invalid", 'Event.core "x" is invalid')],
    ];
    for (const [name, err] of permanent) {
      const { sink, rec, logger } = setup();
      const before = await dropped();
      sink.fail = () => err;
      rec.event(cronJob(), "Warning", "FailedCreate", "x");
      await rec.flush();
      assert.equal(sink.calls.length, 1, name);
      const errors = logger.lines.filter((l) => l.level === "error");
      assert.equal(errors.length, 1, name);
      assert.match(errors[0]!.msg, /rejected/);
      assert.equal(errors[0]!.kv.reason, "FailedCreate", `${name}: the Event's reason`);
      assert.equal(errors[0]!.kv.statusReason, err.reason, name);
      assert.equal(errors[0]!.kv.code, err.code, name);
      assert.equal(errors[0]!.kv.object, "CronJob ns1/cj", name);
      assert.equal(errors[0]!.err, err, `${name}: the API error is the record's error`);
      assert.deepEqual(await droppedSince(before), { rejected: 1 }, name);
    }
  });

  it("counts every drop by why", async () => {
    const before = await dropped();
    {
      // queue_full
      const { sink, rec } = setup({ maxPending: 1, maxInFlight: 1 });
      const gate = gateSink(sink);
      rec.event(cronJob("a"), "Normal", "R", "1");
      await gate.started(1);
      rec.event(cronJob("b"), "Normal", "R", "2");
      rec.event(cronJob("c"), "Normal", "R", "3");
      gate.open();
      await rec.flush();
    }
    {
      // spam_filter
      const { rec } = setup({ correlator: { spamBurst: 1 } });
      rec.event(cronJob(), "Normal", "R", "1");
      rec.event(cronJob(), "Normal", "R", "2");
      await rec.flush();
    }
    {
      // rejected, also when the namespace is terminating (logged at debug, as client-go)
      const { sink, rec, logger } = setup();
      let n = 0;
      sink.fail = () =>
        ++n === 1
          ? new APIError(403, "Forbidden", "no")
          : new APIError(403, "Forbidden", "terminating", { causes: [{ reason: "NamespaceTerminating" }] });
      rec.event(cronJob(), "Normal", "R", "1");
      rec.event(cronJob(), "Normal", "R", "2");
      await rec.flush();
      assert.equal(logger.at("error").length, 1);
    }
    {
      // retries_exhausted
      const { sink, rec } = setup({ maxTries: 2 });
      sink.fail = refused;
      rec.event(cronJob(), "Normal", "R", "1");
      await rec.flush();
    }
    {
      // shutdown: one being retried, one queued behind it, one recorded after
      const { sink, rec } = setup({ backoff: { initialMs: 60_000, maxMs: 60_000 } });
      sink.fail = refused;
      rec.event(cronJob(), "Normal", "R", "1");
      rec.event(cronJob(), "Normal", "R", "2");
      while (sink.calls.length === 0) await settle(1);
      rec.shutdown();
      rec.event(cronJob(), "Normal", "R", "3");
      await rec.flush();
    }
    {
      // invalid
      const { rec } = setup();
      rec.event(cronJob(), "Bogus" as never, "R", "m");
      rec.event({ kind: "CronJob", metadata: {} }, "Normal", "R", "m");
    }
    assert.deepEqual(await droppedSince(before), {
      queue_full: 1,
      spam_filter: 1,
      rejected: 2,
      retries_exhausted: 1,
      shutdown: 3,
      invalid: 2,
    });
  });

  it("writes for different objects in parallel, up to maxInFlight", async () => {
    const { sink, rec } = setup();
    const gate = gateSink(sink);
    for (let i = 0; i < 40; i++) rec.event(cronJob(`cj${i}`), "Normal", "SuccessfulCreate", `Created job cj${i}-1`);
    await Promise.race([gate.started(DEFAULT_MAX_IN_FLIGHT), settle(50)]);
    await settle();
    assert.equal(DEFAULT_MAX_IN_FLIGHT, 16);
    assert.equal(gate.inFlight, 16, "16 writes in flight");
    assert.equal(rec.pending, 24, "no more: memory and server load stay bounded");
    gate.open();
    await rec.flush();
    assert.equal(sink.stored.size, 40);
    assert.equal(gate.maxInFlight, 16);
  });

  it("keeps the writes of one object in order, one at a time, while objects run in parallel", async () => {
    const { sink, rec } = setup({ maxInFlight: 8 });
    const gate = gateSink(sink);
    gate.open();
    const objects = Array.from({ length: 12 }, (_, i) => cronJob(`cj${i}`));
    const rounds = 10;
    for (let r = 0; r < rounds; r++) {
      for (const o of objects) {
        rec.event(o, "Normal", "Sync", "same"); // a create, then count++ patches of it
        rec.event(o, "Normal", `Step${r}`, "x"); // distinct: its own create
      }
      // Let some writes start and finish, so repeats meet a create still in flight.
      await new Promise((res) => setTimeout(res, Math.random() * 4));
    }
    await rec.flush();
    assert.ok(gate.maxInFlight > 1, `concurrency ${gate.maxInFlight}`);
    assert.equal(gate.maxPerObject, 1, "never two writes of one object at once");
    assert.equal(sink.notFound, 0, "no patch overtook the create of its Event");
    for (const o of objects) {
      const calls = sink.calls.filter((c) => c.event.involvedObject.name === o.metadata.name);
      const steps = calls.filter((c) => c.event.reason !== "Sync").map((c) => Number(c.event.reason!.slice(4)));
      assert.deepEqual(steps, [...Array(rounds).keys()], `${o.metadata.name}: written in the order recorded`);
      const sync = calls.filter((c) => c.event.reason === "Sync");
      assert.equal(sync[0]!.op, "create");
      assert.ok(sync.slice(1).every((c) => c.op === "patch"));
      const counts = sync.map((c) => c.event.count!);
      assert.deepEqual(
        counts,
        [...counts].sort((a, b) => a - b),
      );
      const stored = [...sink.stored.values()].filter(
        (e) => e.involvedObject.name === o.metadata.name && e.reason === "Sync",
      );
      assert.equal(stored.length, 1);
      assert.equal(stored[0]!.count, rounds, "every occurrence counted");
    }
  });

  it("flush(timeoutMs) does not wait out the retries of an unreachable server", { timeout: 5000 }, async () => {
    const { sink, rec } = setup({ backoff: {} });
    const before = await dropped();
    sink.fail = refused;
    rec.event(cronJob(), "Normal", "R", "m");
    const t0 = performance.now();
    await rec.flush(50);
    assert.ok(performance.now() - t0 < 1000);
    rec.shutdown();
    await rec.flush();
    assert.deepEqual(await droppedSince(before), { shutdown: 1 });
  });
});

describe("FakeRecorder", () => {
  it("records '<type> <reason> <message>' strings", () => {
    const fake = new FakeRecorder();
    const r: Recorder = fake;
    r.event(configMap(), "Normal", "Created", "created job j1");
    r.eventf(configMap(), "Warning", "Failed", "job %s failed %d times", "j2", 3);
    assert.deepEqual(fake.events, ["Normal Created created job j1", "Warning Failed job j2 failed 3 times"]);
    assert.deepEqual(fake.take(), ["Normal Created created job j1", "Warning Failed job j2 failed 3 times"]);
    assert.deepEqual(fake.events, []);
  });

  it("can include the object and bound its buffer", () => {
    const fake = new FakeRecorder({ includeObject: true, capacity: 1 });
    fake.event(configMap(), "Normal", "A", "1");
    fake.event(configMap(), "Normal", "B", "2");
    assert.deepEqual(fake.events, ["Normal B 2 involvedObject{kind=ConfigMap,apiVersion=v1}"]);
  });
});
