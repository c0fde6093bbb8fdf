// The event recorder against a real kube-apiserver: dedupe via JSON merge patch, namespaces, and
// failure paths (RBAC-forbidden writes, an unreachable server, an apiserver restart) that must stay
// inside the recorder.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { CoreV1Api, KubeConfig, type CoreV1Event, type V1ConfigMap } from "@kubernetes/client-node";
import { TestEnv } from "../../../envtest/index.ts";
import { Client } from "../../../runtime/client.ts";
import { EventRecorder } from "../../../runtime/events/recorder.ts";
import { APIError } from "../../../runtime/errors.ts";
import { metricsRegistry } from "../../../runtime/metrics/registry.ts";
import { CapturingLogger } from "../../capturing-logger.ts";

async function dropped(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const m = metricsRegistry.getSingleMetric("events_dropped_total");
  for (const v of m ? (await m.get()).values : []) out[String(v.labels.reason)] = v.value;
  return out;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Starts at the real time (the server compares nothing, but readers expect plausible dates) and only moves when told. */
class SteppedClock {
  ms = Date.now();
  now(): Date {
    return new Date(this.ms);
  }
}

let env: TestEnv;
let core: CoreV1Api;
/** The recorders' client (as the manager's): closed after the suite. */
let client: Client;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => void unhandled.push(reason);

async function makeConfigMap(namespace: string, name: string): Promise<V1ConfigMap> {
  const cm = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name }, data: { k: "v" } } });
  // Objects read back from client-node may lack apiVersion/kind; a recorder caller supplies them.
  return { ...cm, apiVersion: "v1", kind: "ConfigMap" };
}

async function eventsFor(namespace: string, name: string): Promise<CoreV1Event[]> {
  const list = await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${name}` });
  return list.items;
}

describe("EventRecorder (envtest)", { timeout: 300_000 }, () => {
  before(async () => {
    process.on("unhandledRejection", onUnhandled);
    env = await TestEnv.start({ crdDirectoryPaths: [] });
    core = env.kubeConfig.makeApiClient(CoreV1Api);
    client = new Client(env.kubeConfig);
    for (const name of ["events-a", "events-b"]) await core.createNamespace({ body: { metadata: { name } } });
  });

  after(async () => {
    client?.close();
    await env?.stop();
    process.off("unhandledRejection", onUnhandled);
    assert.deepEqual(unhandled, [], "no unhandled rejections");
  });

  it("dedupes the same reason and message into one Event with count 3", async () => {
    const clock = new SteppedClock();
    const rec = new EventRecorder({
      client,
      component: "cronjob-controller",
      host: "test-host",
      clock,
    });
    const cm = await makeConfigMap("events-a", "dedupe");
    for (let i = 0; i < 3; i++) {
      rec.event(cm, "Normal", "Synced", "configmap synced");
      clock.ms += 2000;
    }
    await rec.flush();
    const events = await eventsFor("events-a", "dedupe");
    assert.equal(events.length, 1, JSON.stringify(events.map((e) => e.metadata.name)));
    const e = events[0]!;
    assert.equal(e.count, 3);
    assert.equal(e.type, "Normal");
    assert.equal(e.reason, "Synced");
    assert.equal(e.message, "configmap synced");
    assert.equal(e.source?.component, "cronjob-controller");
    assert.equal(e.source?.host, "test-host");
    assert.equal(e.reportingComponent, "cronjob-controller");
    assert.equal(e.reportingInstance, "test-host");
    assert.match(e.metadata.name ?? "", /^dedupe\.[0-9a-f]+$/);
    assert.equal(e.involvedObject.kind, "ConfigMap");
    assert.equal(e.involvedObject.apiVersion, "v1");
    assert.equal(e.involvedObject.namespace, "events-a");
    assert.equal(e.involvedObject.uid, cm.metadata?.uid);
    assert.equal(e.involvedObject.resourceVersion, cm.metadata?.resourceVersion);
    assert.ok(e.firstTimestamp && e.lastTimestamp);
    assert.ok(e.lastTimestamp.getTime() >= e.firstTimestamp.getTime());
    assert.equal(e.lastTimestamp.getTime() - e.firstTimestamp.getTime(), 4000);
    rec.shutdown();
  });

  it("writes separate Events for different messages", async () => {
    const rec = new EventRecorder({ client, component: "cronjob-controller" });
    const cm = await makeConfigMap("events-a", "distinct");
    rec.event(cm, "Normal", "Synced", "first");
    rec.eventf(cm, "Warning", "Failed", "attempt %d: %s", 2, "boom");
    rec.event(cm, "Normal", "Synced", "first");
    await rec.flush();
    const events = await eventsFor("events-a", "distinct");
    assert.deepEqual(events.map((e) => [e.type, e.message, e.count]).sort(), [
      ["Normal", "first", 2],
      ["Warning", "attempt 2: boom", 1],
    ]);
    rec.shutdown();
  });

  it("puts the Event in the object's namespace, or default for cluster-scoped objects", async () => {
    const rec = new EventRecorder({ client, component: "cronjob-controller" });
    const cm = await makeConfigMap("events-b", "elsewhere");
    rec.event(cm, "Normal", "Moved", "in b");
    const ns = await core.readNamespace({ name: "events-b" });
    rec.event({ ...ns, apiVersion: "v1", kind: "Namespace" }, "Normal", "Seen", "cluster-scoped");
    await rec.flush();
    const inB = await eventsFor("events-b", "elsewhere");
    assert.equal(inB.length, 1);
    assert.equal(inB[0]!.metadata.namespace, "events-b");
    assert.equal((await eventsFor("events-a", "elsewhere")).length, 0);
    const inDefault = await eventsFor("default", "events-b");
    assert.equal(inDefault.length, 1);
    assert.equal(inDefault[0]!.involvedObject.kind, "Namespace");
    assert.ok(!inDefault[0]!.involvedObject.namespace);
    rec.shutdown();
  });

  it("creates the Event again when it was deleted between occurrences", async () => {
    const rec = new EventRecorder({ client, component: "cronjob-controller" });
    const cm = await makeConfigMap("events-a", "recreated");
    rec.event(cm, "Warning", "Lost", "again");
    await rec.flush();
    const [first] = await eventsFor("events-a", "recreated");
    assert.ok(first?.metadata.name);
    await core.deleteNamespacedEvent({ name: first.metadata.name, namespace: "events-a" });
    rec.event(cm, "Warning", "Lost", "again");
    await rec.flush();
    const events = await eventsFor("events-a", "recreated");
    assert.equal(events.length, 1);
    assert.equal(events[0]!.metadata.name, first.metadata.name);
    assert.equal(events[0]!.count, 2);
    rec.shutdown();
  });

  it("does not throw or leak rejections when writes are forbidden", async () => {
    // Impersonating a user with no RBAC bindings: every write answers 403.
    const kc = new KubeConfig();
    const cluster = env.kubeConfig.getCurrentCluster();
    assert.ok(cluster);
    kc.loadFromOptions({
      clusters: [cluster],
      users: [{ name: "nobody", token: env.token, impersonateUser: "nobody" }],
      contexts: [{ name: "nobody", cluster: cluster.name, user: "nobody" }],
      currentContext: "nobody",
    });
    const logger = new CapturingLogger();
    const nobody = new Client(kc);
    const rec = new EventRecorder({ client: nobody, component: "cronjob-controller", logger, maxTries: 3 });
    const cm = await makeConfigMap("events-a", "forbidden");
    assert.doesNotThrow(() => {
      for (let i = 0; i < 3; i++) rec.event(cm, "Warning", "Denied", `try ${i}`);
    });
    await rec.flush();
    assert.equal((await eventsFor("events-a", "forbidden")).length, 0);
    const errors = logger.errors();
    assert.equal(errors.length, 3, errors.join("\n"));
    assert.match(errors[0]!, /forbidden/i);
    // The log says which Event was lost: its own reason, not the API's.
    assert.match(errors[0]!, /"reason":"Denied"/);
    assert.match(errors[0]!, /"statusReason":"Forbidden"/);
    assert.match(errors[0]!, /"object":"ConfigMap events-a\/forbidden"/);
    // The error is the client's own type.
    const err = logger.lines.find((l) => l.level === "error")?.err;
    assert.ok(err instanceof APIError && err.code === 403, String(err));
    rec.shutdown();
    nobody.close();
  });

  it("gives up quietly when the server is unreachable", async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      // Port 1 on loopback: connection refused at once.
      clusters: [{ name: "dead", server: "https://127.0.0.1:1", skipTLSVerify: true }],
      users: [{ name: "u", token: "x" }],
      contexts: [{ name: "dead", cluster: "dead", user: "u" }],
      currentContext: "dead",
    });
    const logger = new CapturingLogger();
    const dead = new Client(kc);
    const rec = new EventRecorder({
      client: dead,
      component: "cronjob-controller",
      logger,
      maxTries: 3,
      backoff: { initialMs: 10, maxMs: 20 },
    });
    assert.doesNotThrow(() => rec.event({ kind: "Pod", metadata: { name: "p", namespace: "x" } }, "Normal", "R", "m"));
    await rec.flush();
    assert.ok(
      logger.errors().some((l) => l.includes("retry limit exceeded")),
      logger.errors().join("\n"),
    );
    const err = logger.lines.find((l) => l.msg.includes("retry limit exceeded"))?.err;
    assert.ok(err instanceof APIError && err.code === 0, String(err));
    rec.shutdown();
    dead.close();
  });

  it("writes the Events recorded while the apiserver restarts (connection refused), through the runtime's Client", async () => {
    // The manager's path: ClientEventSink over runtime/client.ts, whose transport errors are APIError
    // code 0 ("Unknown"); the default retry policy (1 s doubling to 10 s, 12 tries, about 85 s). A
    // client of its own: the restart must not leave the suite's client with dead connections.
    const client = new Client(env.kubeConfig);
    const logger = new CapturingLogger();
    const rec = new EventRecorder({ client, component: "cronjob-controller", logger });
    const cm = await makeConfigMap("events-a", "outage");
    rec.event(cm, "Normal", "Synced", "before the outage"); // leaves a keep-alive connection behind
    await rec.flush();
    const before = await dropped();

    const restarted = env.restartAPIServer(3000);
    while (env.apiServer?.running) await sleep(20);
    // A retrying reconcile: the same FailedCreate again and again, and a distinct event, all refused.
    for (let i = 0; i < 5; i++) {
      rec.event(cm, "Warning", "FailedCreate", "Error creating job: connect ECONNREFUSED");
      await sleep(300);
    }
    rec.event(cm, "Warning", "MissSchedule", "Missed scheduled time to start a job");
    await restarted;
    rec.event(cm, "Normal", "SuccessfulCreate", "Created job outage-1");
    await rec.flush();

    const events = await eventsFor("events-a", "outage");
    assert.deepEqual(events.map((e) => [e.reason, e.count]).sort(), [
      ["FailedCreate", 5],
      ["MissSchedule", 1],
      ["SuccessfulCreate", 1],
      ["Synced", 1],
    ]);
    assert.deepEqual(logger.errors(), [], "nothing dropped");
    const retries = logger.lines.filter((l) => l.level === "info" && l.msg.includes("will retry"));
    assert.ok(retries.length > 0, "the outage was seen");
    assert.ok(retries.some((l) => l.kv.reason === "FailedCreate" && l.kv.statusReason === "Unknown"));
    const after = await dropped();
    for (const [reason, n] of Object.entries(after))
      assert.equal(n, before[reason] ?? 0, `events_dropped_total{${reason}}`);
    rec.shutdown();
    client.close();
  });
});
