// The controller machinery on a real apiserver: for/owns mapping, requeueAfter, error backoff, a
// throwing reconciler, metrics and probes, and a clean SIGTERM shutdown that releases the Lease.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { CoordinationV1Api, V1MicroTime } from "@kubernetes/client-node";
import { Client } from "../../../runtime/client.ts";
import type { Controller, Request } from "../../../runtime/controller.ts";
import { type KubeObject, Kinds, type ResourceKind } from "../../../runtime/kinds.ts";
import { discardLogger } from "../../../runtime/log.ts";
import { Manager } from "../../../runtime/manager.ts";
import { TestEnv } from "../../../envtest/index.ts";

const Secret: ResourceKind = { group: "", version: "v1", kind: "Secret", plural: "secrets", namespaced: true };
const NS = "ctl";

async function eventually(what: string, fn: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`timed out waiting for: ${what}`);
}

describe("manager and controller on a real apiserver", () => {
  let env: TestEnv;
  let client: Client;
  let mgr: Manager;
  let ctl: Controller;
  const stop = new AbortController();
  let running: Promise<void>;
  const calls = new Map<string, number[]>();
  let firstScrape = "";

  before(async () => {
    env = await TestEnv.start({ crdDirectoryPaths: [] });
    client = new Client(env.kubeConfig);
    await client.create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
    mgr = new Manager({
      kubeConfig: env.kubeConfig,
      logger: discardLogger,
      metricsBindAddress: "127.0.0.1:0",
      healthProbeBindAddress: "127.0.0.1:0",
      namespace: NS,
    });
    ctl = mgr
      .newControllerManagedBy()
      .named("cm")
      .for(Kinds.ConfigMap)
      .owns(Secret)
      .withOptions({ maxConcurrentReconciles: 2 })
      .complete({
        async reconcile(req: Request) {
          const key = `${req.namespace}/${req.name}`;
          calls.set(key, [...(calls.get(key) ?? []), performance.now()]);
          const obj = mgr.cache.get<KubeObject & { data?: Record<string, string> }>(
            Kinds.ConfigMap,
            req.namespace,
            req.name,
          );
          switch (obj?.data?.mode) {
            case "requeueAfter":
              return { requeueAfterMs: 300 };
            case "error":
              throw new Error("reconcile failed on purpose");
            case "throwString":
              throw "not even an Error";
            default:
              return {};
          }
        },
      });
    running = mgr.start(stop.signal);
    await mgr.elected();
    await mgr.cache.waitForSync();
    // What a scraper sees right after start, before any reconcile has failed.
    firstScrape = await (await fetch(`${mgr.metricsURL}/metrics`)).text();
  });
  after(async () => {
    stop.abort();
    await running;
    client?.close();
    await env?.stop();
  });

  const cm = (name: string, mode: string) =>
    client.create(Kinds.ConfigMap, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace: NS },
      data: { mode },
    });

  it("serves every controller and informer counter from the start, at 0 before the first error", () => {
    const lines = firstScrape.split("\n");
    for (const series of [
      'controller_runtime_reconcile_errors_total{controller="cm"} 0',
      'controller_runtime_reconcile_panics_total{controller="cm"} 0',
      'controller_runtime_reconcile_total{controller="cm",result="error"} 0',
      'controller_runtime_reconcile_total{controller="cm",result="requeue"} 0',
      'controller_runtime_reconcile_total{controller="cm",result="requeue_after"} 0',
      'workqueue_retries_total{controller="cm",name="cm"} 0',
      'informer_watch_errors_total{resource="configmaps",reason="Gone"} 0',
      'informer_watch_errors_total{resource="configmaps",reason="Unknown"} 0',
      'informer_watch_errors_total{resource="secrets",reason="Gone"} 0',
      'informer_watch_errors_total{resource="secrets",reason="Unknown"} 0',
      'informer_lists_total{resource="secrets",reason="gone"} 0',
    ]) {
      assert.ok(lines.includes(series), `the first scrape lacks ${series}`);
    }
  });

  it("reconciles the `for` object and the owner of an owned object", async () => {
    const parent = (await cm("parent", "ok")) as KubeObject;
    await eventually("parent reconciled", () => (calls.get(`${NS}/parent`)?.length ?? 0) >= 1);
    const before = calls.get(`${NS}/parent`)!.length;
    await client.create(Secret, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "child",
        namespace: NS,
        ownerReferences: [
          { apiVersion: "v1", kind: "ConfigMap", name: "parent", uid: parent.metadata!.uid!, controller: true },
        ],
      },
    });
    await eventually("owner reconciled for its child", () => calls.get(`${NS}/parent`)!.length > before);
    // A non-controller owner reference does not map.
    await client.create(Secret, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "not-controlled",
        namespace: NS,
        ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "ghost", uid: "x", controller: false }],
      },
    });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(calls.get(`${NS}/ghost`), undefined);
  });

  it("honours requeueAfter", async () => {
    await cm("periodic", "requeueAfter");
    await eventually("three reconciles", () => (calls.get(`${NS}/periodic`)?.length ?? 0) >= 3, 10_000);
    const t = calls.get(`${NS}/periodic`)!;
    for (let i = 1; i < t.length; i++)
      assert.ok(t[i]! - t[i - 1]! >= 250, `requeued after ${t[i]! - t[i - 1]!} ms, want ≥ 300`);
  });

  it("backs off a failing reconcile exponentially, without crashing or starving others", async () => {
    await cm("failing", "error");
    await cm("throwing", "throwString");
    await eventually("several retries", () => (calls.get(`${NS}/failing`)?.length ?? 0) >= 5);
    await new Promise((r) => setTimeout(r, 1000));
    const t = calls.get(`${NS}/failing`)!;
    const gaps = t.slice(1).map((x, i) => x - t[i]!);
    // 5 ms doubling: a hot loop would show thousands of calls and flat gaps.
    assert.ok(t.length < 20, `${t.length} reconciles in ~1 s is a hot loop`);
    // Against the shortest early gap: a stall of the machine only lengthens a gap (CI once saw 81,20,56,… ms, its
    // first retry late), while backoff never shortens one; flat gaps (a hot loop) still fail.
    const early = Math.min(...gaps.slice(0, 3));
    assert.ok(gaps.at(-1)! > early * 4, `gaps should grow: ${gaps.map((g) => g.toFixed(0)).join(",")}`);
    assert.ok(ctl.queue.numRequeues(`${NS}/failing`) >= 5);
    assert.ok((calls.get(`${NS}/throwing`)?.length ?? 0) >= 2, "a non-Error throw is retried too");
    await cm("after-failures", "ok");
    await eventually("others still reconciled", () => (calls.get(`${NS}/after-failures`)?.length ?? 0) >= 1);
  });

  it("serves controller-runtime metrics", async () => {
    const text = await (await fetch(`${mgr.metricsURL}/metrics`)).text();
    for (const name of [
      'controller_runtime_reconcile_total{controller="cm",result="success"}',
      'controller_runtime_reconcile_total{controller="cm",result="error"}',
      'controller_runtime_reconcile_total{controller="cm",result="requeue_after"}',
      'controller_runtime_reconcile_errors_total{controller="cm"}',
      "controller_runtime_reconcile_time_seconds_bucket",
      'controller_runtime_max_concurrent_reconciles{controller="cm"} 2',
      'controller_runtime_active_workers{controller="cm"}',
      'workqueue_depth{controller="cm",name="cm"}',
      "workqueue_adds_total",
      "workqueue_queue_duration_seconds_bucket",
      "workqueue_work_duration_seconds_bucket",
      "workqueue_retries_total",
      "workqueue_unfinished_work_seconds",
      "workqueue_longest_running_processor_seconds",
      "rest_client_requests_total{",
      "informer_lists_total{",
      "informer_watches_total{",
      "process_cpu_seconds_total",
      "process_resident_memory_bytes",
    ]) {
      assert.ok(text.includes(name), `metrics lack ${name}`);
    }
  });

  it("answers /healthz and /readyz", async () => {
    for (const path of ["/healthz", "/readyz"]) {
      const r = await fetch(`${mgr.probeURL}${path}`);
      assert.equal(r.status, 200, `${path}: ${await r.text()}`);
    }
    const v = await (await fetch(`${mgr.probeURL}/readyz?verbose`)).text();
    assert.match(v, /\[\+\]informers ok/);
  });
});

describe("manager process shutdown", () => {
  let env: TestEnv;
  const children: ChildProcess[] = [];
  before(async () => {
    env = await TestEnv.start({ crdDirectoryPaths: [] });
  });
  after(async () => {
    for (const c of children) c.kill("SIGKILL");
    await env?.stop();
  });

  function startManager(identity: string, slowMs = 0, shutdownDelayMs = 0) {
    const child = spawn(
      process.execPath,
      [
        join(import.meta.dirname, "fixtures", "manager.ts"),
        env.kubeconfigPath,
        "shutdown-test",
        identity,
        String(slowMs),
        String(shutdownDelayMs),
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    children.push(child);
    const lines: Array<Record<string, unknown>> = [];
    let buf = "";
    child.stdout!.on("data", (d: Buffer) => {
      buf += d.toString();
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        lines.push(JSON.parse(buf.slice(0, i)) as Record<string, unknown>);
        buf = buf.slice(i + 1);
      }
    });
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    return { child, lines, exited, stderr: () => stderr };
  }

  it("on SIGTERM finishes in-flight work, releases the Lease and exits 0", async () => {
    const m = startManager("first", 1500);
    await eventually("elected", () => m.lines.some((l) => l.event === "ready"), 30_000);
    const client = new Client(env.kubeConfig);
    await client.create(Kinds.ConfigMap, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "slow-1", namespace: "default" },
    });
    await eventually("slow reconcile started", () =>
      m.lines.some((l) => l.event === "reconcile" && l.name === "slow-1"),
    );
    m.child.kill("SIGTERM");
    const code = await m.exited;
    assert.equal(code, 0, m.stderr());
    assert.ok(
      m.lines.some((l) => l.event === "reconciled" && l.name === "slow-1"),
      "in-flight reconcile finished",
    );
    assert.ok(m.lines.some((l) => l.event === "stopped"));
    const lease = await env.kubeConfig
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: "shutdown-test", namespace: "default" });
    assert.ok(!lease.spec?.holderIdentity, `lease released, holder ${lease.spec?.holderIdentity}`);
    // A successor takes over at once rather than after the 15 s lease duration: timed by its own clock from its
    // manager's start, not from its spawn (a Node process starting on a loaded machine is not the property).
    const next = startManager("second");
    await eventually("successor elected", () => next.lines.some((l) => l.event === "ready"), 30_000);
    const at = (event: string) => Number(next.lines.find((l) => l.event === event)?.at);
    const waited = at("ready") - at("starting");
    assert.ok(waited < 12_000, `successor elected ${waited} ms after its start: it waited for the old lease to expire`);
    next.child.kill("SIGTERM");
    assert.equal(await next.exited, 0, next.stderr());
    client.close();
  });

  it("with a shutdown delay: on SIGTERM /readyz fails and the lease is released at once, the every-replica servers answer on for the delay", async () => {
    const m = startManager("draining", 0, 3_000);
    await eventually("elected", () => m.lines.some((l) => l.event === "ready"), 30_000);
    const ready = m.lines.find((l) => l.event === "ready")!;
    const probes = String(ready.probes);
    const server = String(ready.server);
    assert.equal((await fetch(`${probes}/readyz`)).status, 200);
    const leases = env.kubeConfig.makeApiClient(CoordinationV1Api);
    const holder = async () =>
      (await leases.readNamespacedLease({ name: "shutdown-test", namespace: "default" })).spec?.holderIdentity;
    // Elected: it is the only candidate, so the lease names it (<hostname>_<uuid>).
    assert.ok(await holder(), "the lease has a holder once elected");
    const t0 = performance.now();
    m.child.kill("SIGTERM");
    await eventually("/readyz failing", async () => {
      const r = await fetch(`${probes}/readyz?verbose`);
      const body = await r.text();
      return r.status !== 200 && /shutting down/.test(body);
    });
    await eventually("the lease released", async () => !(await holder()));
    const released = performance.now() - t0;
    assert.ok(released < 2_500, `lease released ${Math.round(released)} ms after SIGTERM, not after the delay`);
    // Still serving after the lease is gone, until the delay has passed.
    assert.equal(await (await fetch(server)).text(), "ok");
    assert.ok(!m.lines.some((l) => l.event === "server-stopping"), "the server stopped before the delay ended");
    assert.equal(await m.exited, 0, m.stderr());
    const total = performance.now() - t0;
    assert.ok(total >= 3_000, `exited ${Math.round(total)} ms after SIGTERM, before the 3 s delay`);
    assert.ok(m.lines.some((l) => l.event === "server-stopping"));
    await assert.rejects(fetch(server), "the server is closed once the manager exits");
  });

  it("on a lost lease stops at once: no grace period for a reconcile that ignores its signal", async () => {
    const m = startManager("victim", 25_000);
    await eventually("elected", () => m.lines.some((l) => l.event === "ready"), 30_000);
    const client = new Client(env.kubeConfig);
    await client.create(Kinds.ConfigMap, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "slow-lost", namespace: "default" },
    });
    await eventually("slow reconcile started", () =>
      // (slow-1 of the test before may come first: any slow reconcile in flight will do)
      m.lines.some((l) => l.event === "reconcile" && String(l.name).startsWith("slow")),
    );
    // Another holder takes the lease: the victim's renewals fail from now on.
    const leases = env.kubeConfig.makeApiClient(CoordinationV1Api);
    const lease = await leases.readNamespacedLease({ name: "shutdown-test", namespace: "default" });
    lease.spec = {
      ...lease.spec,
      holderIdentity: "thief",
      leaseDurationSeconds: 60,
      renewTime: new V1MicroTime(),
      acquireTime: new V1MicroTime(),
    };
    const stolenAt = performance.now();
    await leases.replaceNamespacedLease({ name: "shutdown-test", namespace: "default", body: lease });
    const code = await m.exited;
    const after = performance.now() - stolenAt;
    assert.equal(code, 1, m.stderr());
    assert.match(m.stderr(), /leader election lost/);
    // The victim sees the other holder at its next renewal (retry period 0.5 s); the graceful-shutdown
    // timeout (10 s) must not be added on top.
    assert.ok(after < 6_000, `exited ${Math.round(after)} ms after the lease was taken`);
    assert.ok(!m.lines.some((l) => l.event === "reconciled"), "the reconcile did not run on after the lease was lost");
    client.close();
  });
});
