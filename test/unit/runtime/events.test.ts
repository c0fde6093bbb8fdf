import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { CoreV1Event } from "@kubernetes/client-node";
import { APIError } from "../../../runtime/errors.ts";
import {
  AGGREGATE_MESSAGE_PREFIX,
  EventCorrelator,
  EventRecorder,
  FakeRecorder,
  LRU,
  TokenBucket,
  aggregateKey,
  eventKey,
  sprintf,
  type EventLogger,
  type EventPatch,
  type EventSink,
  type Recorder,
} from "../../../runtime/events.ts";
import type { Logger } from "../../../runtime/log.ts";

class TestClock {
  ms: number;
  constructor(ms = Date.UTC(2024, 0, 1, 12, 0, 0)) {
    this.ms = ms;
  }
  now(): number {
    return this.ms;
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
    if (!cur) throw new APIError(404, "NotFound", `events "${event.metadata.name}" not found`);
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

class CapturingLogger implements EventLogger {
  readonly lines: { level: string; msg: string; meta?: Record<string, unknown> }[] = [];
  info(msg: string, meta?: Record<string, unknown>): void {
    this.lines.push({ level: "info", msg, meta });
  }
  debug(msg: string, meta?: Record<string, unknown>): void {
    this.lines.push({ level: "debug", msg, meta });
  }
  error(msg: string, meta?: Record<string, unknown>): void {
    this.lines.push({ level: "error", msg, meta });
  }
  at(level: string): string[] {
    return this.lines.filter((l) => l.level === level).map((l) => l.msg);
  }
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
    clock.advance(2000);
    rec.event(configMap(), "Normal", "Synced", "same");
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
    clock.advance(1000);
    rec.event(configMap(), "Warning", "Failed", "attempt 11");
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

  it("drops events beyond the per-object burst of 25 and refills one per 5 minutes", async () => {
    const { sink, rec, clock, logger } = setup();
    for (let i = 0; i < 30; i++) rec.event(configMap(), "Normal", "Tick", "same");
    await rec.flush();
    assert.equal(sink.calls.length, 25);
    assert.equal(logger.at("debug").filter((m) => m.includes("spam")).length, 5);
    // Another object has its own bucket.
    rec.event(configMap("other", "ns1", "uid-9"), "Normal", "Tick", "same");
    await rec.flush();
    assert.equal(sink.calls.length, 26);

    clock.advance(299_000);
    rec.event(configMap(), "Normal", "Tick", "same");
    await rec.flush();
    assert.equal(sink.calls.length, 26);
    clock.advance(1000);
    rec.event(configMap(), "Normal", "Tick", "same");
    await rec.flush();
    assert.equal(sink.calls.length, 27);
    // Occurrences dropped as spam are still counted, as in client-go.
    assert.equal(sink.calls.at(-1)!.patch?.count, 32);
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
    await f;
    rec.event(configMap(), "Normal", "R", "after");
    await rec.flush();
    assert.equal(sink.calls.length, 1);
  });

  it("accepts the project's logger (type-level)", () => {
    // Compiles only while runtime/log.ts's Logger satisfies EventLogger.
    const accepts = (l: Logger): EventLogger => l;
    assert.equal(typeof accepts, "function");
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
