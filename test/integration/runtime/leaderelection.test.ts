// Leader election against a real apiserver: candidates in separate processes hand over on crash and
// on graceful stop; the Lease object looks like client-go's; a leader that cannot renew stops acting
// before its lease can be taken over.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type Server, type Socket, connect } from "node:net";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { after, afterEach, before, describe, it } from "node:test";
import { CoordinationV1Api, KubeConfig, V1MicroTime } from "@kubernetes/client-node";
import { PROJECT_ROOT, TestEnv } from "../../../envtest/index.ts";
import { Informer } from "../../../runtime/cache/informer.ts";
import { Client } from "../../../runtime/client.ts";
import { APIError } from "../../../runtime/errors.ts";
import { type KubeObject, Kinds } from "../../../runtime/kinds.ts";
import { LeaderElector } from "../../../runtime/leaderelection.ts";
import { metricsRegistry } from "../../../runtime/metrics/registry.ts";
import { CapturingLogger } from "../../capturing-logger.ts";

const NODE = join(PROJECT_ROOT, "node_modules", ".bin", "node");
const FIXTURE = join(import.meta.dirname, "fixtures", "elector.ts");
const LEASE_MS = 4000;
const RENEW_MS = 3000;
const RETRY_MS = 500;
const SLACK_MS = 3000;
const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

/** A Lease as the apiserver sends it (raw JSON: timestamps are strings). */
interface LeaseObject extends KubeObject {
  spec?: { holderIdentity?: string; renewTime?: string; leaseDurationSeconds?: number };
}

interface ElectorEvent {
  event: string;
  identity: string;
  leader?: string;
  /** performance.now() in this process when the line arrived. */
  at: number;
}

const children = new Set<ChildProcess>();
const electors = new Set<LeaderElector>();

/** In-process electors are stopped after each test, so a failed one does not keep the process alive. */
function newElector(opts: ConstructorParameters<typeof LeaderElector>[0]): LeaderElector {
  const e = new LeaderElector(opts);
  electors.add(e);
  return e;
}

async function cleanUp(): Promise<void> {
  for (const c of children) c.kill("SIGKILL");
  children.clear();
  await Promise.all([...electors].map((e) => e.stop()));
  electors.clear();
}

class Candidate {
  readonly identity: string;
  readonly child: ChildProcess;
  readonly events: ElectorEvent[] = [];
  private stderr = "";
  private readonly waiters = new Set<() => void>();
  readonly exited: Promise<number | null>;

  constructor(env: TestEnv, identity: string, lease: string) {
    this.identity = identity;
    this.child = spawn(
      NODE,
      [FIXTURE, env.kubeconfigPath, identity, lease, String(LEASE_MS), String(RENEW_MS), String(RETRY_MS)],
      { cwd: PROJECT_ROOT, stdio: ["pipe", "pipe", "pipe"] },
    );
    children.add(this.child);
    this.exited = new Promise((resolve) =>
      this.child.once("exit", (code) => {
        children.delete(this.child);
        resolve(code);
        this.notify();
      }),
    );
    createInterface({ input: this.child.stdout! }).on("line", (line) => {
      try {
        const parsed = JSON.parse(line) as Omit<ElectorEvent, "at">;
        this.events.push({ ...parsed, at: performance.now() });
      } catch {
        this.stderr += `(stdout) ${line}\n`;
      }
      this.notify();
    });
    this.child.stderr!.on("data", (d: Buffer) => {
      this.stderr = (this.stderr + d.toString()).slice(-8000);
    });
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }

  has(event: string): boolean {
    return this.events.some((e) => e.event === event);
  }

  /** The first event matching, waiting up to timeoutMs for it. */
  waitFor(event: string, timeoutMs: number, pred: (e: ElectorEvent) => boolean = () => true): Promise<ElectorEvent> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.events.find((e) => e.event === event && pred(e));
        if (found) {
          finish();
          resolve(found);
        } else if (this.child.exitCode !== null || this.child.signalCode !== null) {
          finish();
          reject(new Error(`${this.identity} exited before "${event}"; stderr:\n${this.stderr}`));
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`${this.identity}: no "${event}" within ${timeoutMs} ms; stderr:\n${this.stderr}`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }
}

function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** rest_client_requests_total{code, method, host}: what runtime/client.ts counted so far. */
async function requests(code: string, method: string, host: string): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric("rest_client_requests_total")?.get();
  const v = metric?.values.find((x) => x.labels.code === code && x.labels.method === method && x.labels.host === host);
  return v?.value ?? 0;
}

async function gaugeValue(name: string): Promise<number | undefined> {
  const metric = await metricsRegistry.getSingleMetric("leader_election_master_status")?.get();
  return metric?.values.find((v) => v.labels.name === name)?.value;
}

/**
 * A TCP relay in front of the apiserver that can "partition": existing connections stop forwarding
 * and new ones are accepted but never answered, so requests hang rather than fail fast.
 */
class Partition {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private blackhole = false;
  port = 0;

  constructor(upstreamPort: number) {
    this.server = createServer((client) => {
      this.sockets.add(client);
      client.on("close", () => this.sockets.delete(client));
      client.on("error", () => undefined);
      if (this.blackhole) return;
      const upstream = connect(upstreamPort, "127.0.0.1");
      this.sockets.add(upstream);
      upstream.on("close", () => this.sockets.delete(upstream));
      upstream.on("error", () => client.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    const addr = this.server.address();
    this.port = typeof addr === "object" && addr ? addr.port : 0;
  }

  cut(): void {
    this.blackhole = true;
    for (const s of this.sockets) {
      s.unpipe();
      s.pause();
    }
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

function kubeConfigVia(env: TestEnv, port: number): KubeConfig {
  const src = env.kubeConfig;
  const cluster = src.getCurrentCluster();
  assert.ok(cluster);
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ ...cluster, server: `https://127.0.0.1:${port}` }],
    users: src.getUsers(),
    contexts: src.getContexts(),
    currentContext: src.getCurrentContext(),
  });
  return kc;
}

describe("leader election", { timeout: 240_000 }, () => {
  let env: TestEnv;
  let leases: CoordinationV1Api;
  /** The in-process electors' client (runtime/client.ts, as the manager's). */
  let apiClient: Client;

  before(async () => {
    env = await TestEnv.start({ crdDirectoryPaths: [], verbose: false });
    leases = env.kubeConfig.makeApiClient(CoordinationV1Api);
    apiClient = new Client(env.kubeConfig);
  });

  afterEach(cleanUp);

  after(async () => {
    await cleanUp();
    apiClient?.close();
    await env?.stop();
  });

  it("rejects inconsistent timings", () => {
    const base = { client: new Client(new KubeConfig()), namespace: "default", name: "x", callbacks: cb() };
    assert.throws(() => new LeaderElector({ ...base, leaseDurationMs: 10_000, renewDeadlineMs: 10_000 }), /greater/);
    assert.throws(() => new LeaderElector({ ...base, renewDeadlineMs: 2400, retryPeriodMs: 2000 }), /greater/);
    assert.throws(() => new LeaderElector({ ...base, retryPeriodMs: 0 }), /positive/);
  });

  it("elects exactly one of two processes, and the other takes over after the leader is killed", async (t) => {
    const a = new Candidate(env, "proc-a", "le-kill");
    const b = new Candidate(env, "proc-b", "le-kill");
    const first = await Promise.any([a.waitFor("started", 20_000), b.waitFor("started", 20_000)]);
    const [leader, follower] = first.identity === a.identity ? [a, b] : [b, a];

    // Several retry periods later the follower still follows, and knows who leads.
    await follower.waitFor("leader", 5000, (e) => e.leader === leader.identity);
    await new Promise((r) => setTimeout(r, 4 * RETRY_MS));
    assert.equal(follower.has("started"), false, "only one candidate leads");
    const lease = await leases.readNamespacedLease({ name: "le-kill", namespace: "default" });
    assert.equal(lease.spec?.holderIdentity, leader.identity);

    leader.child.kill("SIGKILL");
    await leader.exited;
    const killedAt = performance.now();
    const limit = LEASE_MS + RETRY_MS * (1 + 1.2) + SLACK_MS;
    const took = await follower.waitFor("started", limit);
    t.diagnostic(`takeover ${Math.round(took.at - killedAt)} ms after SIGKILL`);
    assert.ok(took.at - killedAt < limit, `took over after ${Math.round(took.at - killedAt)} ms`);
    const later = await leases.readNamespacedLease({ name: "le-kill", namespace: "default" });
    assert.equal(later.spec?.holderIdentity, follower.identity);
    assert.equal(later.spec?.leaseTransitions, (lease.spec?.leaseTransitions ?? 0) + 1);
  });

  it("hands over well within the lease duration when the leader stops gracefully", async (t) => {
    const a = new Candidate(env, "grace-a", "le-release");
    await a.waitFor("started", 20_000);
    const b = new Candidate(env, "grace-b", "le-release");
    await b.waitFor("leader", 10_000, (e) => e.leader === a.identity);
    assert.equal(b.has("started"), false);

    a.child.kill("SIGTERM");
    const stoppedAt = performance.now();
    await a.waitFor("stopped", 5000);
    assert.equal(await a.exited, 0);
    const took = await b.waitFor("started", LEASE_MS);
    t.diagnostic(`takeover ${Math.round(took.at - stoppedAt)} ms after SIGTERM`);
    assert.ok(took.at - stoppedAt < LEASE_MS, `took over after ${Math.round(took.at - stoppedAt)} ms`);
  });

  it("writes a client-go compatible Lease, releases it on stop, and counts transitions", async () => {
    const name = "le-inproc";
    const startedA = deferred<AbortSignal>();
    const a = newElector({
      client: apiClient,
      namespace: "default",
      name,
      identity: "inproc-a",
      leaseDurationMs: LEASE_MS,
      renewDeadlineMs: RENEW_MS,
      retryPeriodMs: RETRY_MS,
      callbacks: cb({ onStartedLeading: (s) => startedA.resolve(s) }),
    });
    assert.equal(await gaugeValue(name), 0);
    const runA = a.run();
    const signalA = await withTimeout(startedA.promise, 10_000, "a leads");
    assert.equal(a.isLeader(), true);
    assert.equal(a.getLeader(), "inproc-a");
    assert.equal(await gaugeValue(name), 1);

    // Raw JSON, as the apiserver stores it (client-node would turn the timestamps into Dates).
    const raw = async () => {
      const r = await env.kubectl(["get", "lease", name, "-n", "default", "-o", "json"]);
      assert.equal(r.code, 0, r.stderr);
      return (JSON.parse(r.stdout) as { spec: Record<string, unknown> }).spec;
    };
    let spec = await raw();
    assert.equal(spec.holderIdentity, "inproc-a");
    assert.equal(spec.leaseDurationSeconds, LEASE_MS / 1000);
    assert.equal(spec.leaseTransitions, 0);
    assert.match(String(spec.renewTime), MICRO_TIME);
    assert.match(String(spec.acquireTime), MICRO_TIME);
    const firstRenew = String(spec.renewTime);

    // Renewals keep acquireTime and move renewTime.
    await new Promise((r) => setTimeout(r, 3 * RETRY_MS));
    const renewed = await raw();
    assert.equal(renewed.acquireTime, spec.acquireTime);
    assert.notEqual(renewed.renewTime, firstRenew);

    await a.stop();
    await runA;
    assert.equal(signalA.aborted, true);
    assert.equal(a.isLeader(), false);
    assert.equal(await gaugeValue(name), 0);
    spec = await raw();
    assert.ok(!spec.holderIdentity, `released: holderIdentity is ${JSON.stringify(spec.holderIdentity)}`);
    assert.equal(spec.leaseDurationSeconds, 1);
    assert.match(String(spec.renewTime), MICRO_TIME);

    const startedB = deferred();
    const newLeaders: string[] = [];
    const b = newElector({
      client: apiClient,
      namespace: "default",
      name,
      identity: "inproc-b",
      leaseDurationMs: LEASE_MS,
      renewDeadlineMs: RENEW_MS,
      retryPeriodMs: RETRY_MS,
      callbacks: cb({ onStartedLeading: () => startedB.resolve(), onNewLeader: (id) => void newLeaders.push(id) }),
    });
    const t0 = performance.now();
    const runB = b.run();
    await withTimeout(startedB.promise, LEASE_MS, "b takes over a released lease");
    assert.ok(performance.now() - t0 < LEASE_MS);
    spec = await raw();
    assert.equal(spec.holderIdentity, "inproc-b");
    assert.equal(spec.leaseTransitions, 1);
    assert.equal(spec.leaseDurationSeconds, LEASE_MS / 1000);
    assert.deepEqual(newLeaders, ["inproc-b"]);
    await b.stop();
    await runB;
  });

  it("gives up leadership when another client takes the lease over", async () => {
    const name = "le-stolen";
    const started = deferred<AbortSignal>();
    const stopped = deferred();
    const elector = newElector({
      client: apiClient,
      namespace: "default",
      name,
      identity: "victim",
      leaseDurationMs: LEASE_MS,
      renewDeadlineMs: RENEW_MS,
      retryPeriodMs: RETRY_MS,
      callbacks: cb({ onStartedLeading: (s) => started.resolve(s), onStoppedLeading: () => stopped.resolve() }),
    });
    const run = elector.run();
    const signal = await withTimeout(started.promise, 10_000, "leads");

    const lease = await leases.readNamespacedLease({ name, namespace: "default" });
    const farFuture = new V1MicroTime(Date.now() + 3600_000);
    await leases.replaceNamespacedLease({
      name,
      namespace: "default",
      body: {
        ...lease,
        spec: { ...lease.spec, holderIdentity: "intruder", renewTime: farFuture, leaseDurationSeconds: 3600 },
      },
    });
    const stolenAt = performance.now();

    await withTimeout(stopped.promise, RENEW_MS + SLACK_MS, "onStoppedLeading");
    assert.ok(performance.now() - stolenAt < RENEW_MS + SLACK_MS);
    await withTimeout(run, 2000, "run() returns");
    assert.equal(signal.aborted, true);
    assert.equal(elector.isLeader(), false);
    assert.equal(elector.getLeader(), "intruder");
    assert.equal(await gaugeValue(name), 0);
    // A loss is not a release: the intruder's record stays.
    const later = await leases.readNamespacedLease({ name, namespace: "default" });
    assert.equal(later.spec?.holderIdentity, "intruder");
  });

  it("goes through the runtime's client: every lease request is counted in rest_client_requests_total", async () => {
    const name = "le-counted";
    const host = new URL(env.server).host;
    const logger = new CapturingLogger();
    const started = deferred();
    const elector = newElector({
      client: apiClient,
      namespace: "default",
      name,
      identity: "counted",
      leaseDurationMs: LEASE_MS,
      renewDeadlineMs: RENEW_MS,
      retryPeriodMs: RETRY_MS,
      logger,
      callbacks: cb({ onStartedLeading: () => started.resolve() }),
    });
    // Nothing else in this process talks to the apiserver through runtime/client.ts meanwhile.
    const before = {
      get404: await requests("404", "GET", host),
      post201: await requests("201", "POST", host),
      put200: await requests("200", "PUT", host),
    };
    const run = elector.run();
    await withTimeout(started.promise, 10_000, "leads");
    const renewed = () => logger.at("debug").filter((m) => m === "successfully renewed lease").length;
    await withTimeout(
      (async () => {
        while (renewed() < 3) await new Promise((r) => setTimeout(r, 50));
      })(),
      10 * RETRY_MS + SLACK_MS,
      "three renewals",
    );
    await elector.stop();
    await run;

    // Acquired on a fresh Lease: a GET (404) and a create; then one PUT per renewal, and the release.
    assert.equal((await requests("404", "GET", host)) - before.get404, 1);
    assert.equal((await requests("201", "POST", host)) - before.post201, 1);
    assert.equal((await requests("200", "PUT", host)) - before.put200, renewed() + 1, "renewals and the release");
    assert.deepEqual(logger.at("error"), []);
    assert.ok(logger.lines.every((l) => l.kv.lease === `default/${name}` && l.kv.identity === "counted"));
  });

  it("reports the client's APIError when the apiserver refuses or cannot be reached", async () => {
    const cluster = env.kubeConfig.getCurrentCluster();
    assert.ok(cluster);
    // A user without RBAC bindings (every request answers 403), and a server that refuses connections.
    const forbidden = new KubeConfig();
    forbidden.loadFromOptions({
      clusters: [cluster],
      users: [{ name: "nobody", token: env.token, impersonateUser: "nobody" }],
      contexts: [{ name: "nobody", cluster: cluster.name, user: "nobody" }],
      currentContext: "nobody",
    });
    const unreachable = new KubeConfig();
    unreachable.loadFromOptions({
      clusters: [{ name: "dead", server: "https://127.0.0.1:1", skipTLSVerify: true }],
      users: [{ name: "u", token: "x" }],
      contexts: [{ name: "dead", cluster: "dead", user: "u" }],
      currentContext: "dead",
    });
    for (const [what, kc, code, reason] of [
      ["forbidden", forbidden, 403, "Forbidden"],
      ["unreachable", unreachable, 0, "Unknown"],
    ] as const) {
      const client = new Client(kc);
      const logger = new CapturingLogger();
      const elector = newElector({
        client,
        namespace: "default",
        name: `le-${what}`,
        identity: what,
        leaseDurationMs: LEASE_MS,
        renewDeadlineMs: RENEW_MS,
        retryPeriodMs: RETRY_MS,
        logger,
        callbacks: cb(),
      });
      const host = new URL(kc.getCurrentCluster()!.server).host;
      const counted = await requests(code === 0 ? "<error>" : String(code), "GET", host);
      const run = elector.run();
      try {
        await withTimeout(
          (async () => {
            while (!logger.lines.some((l) => l.level === "error")) await new Promise((r) => setTimeout(r, 20));
          })(),
          5000,
          `${what}: an error is logged`,
        );
      } finally {
        await elector.stop();
        await run;
        client.close();
      }
      assert.equal(elector.isLeader(), false);
      const line = logger.lines.find((l) => l.level === "error");
      assert.equal(line?.msg, "error retrieving lease", what);
      assert.ok(line.err instanceof APIError, `${what}: ${String(line.err)}`);
      assert.equal(line.err.code, code, what);
      assert.equal(line.err.reason, reason, what);
      assert.ok((await requests(code === 0 ? "<error>" : String(code), "GET", host)) > counted, `${what}: counted`);
    }
  });

  for (const mode of ["hangs", "refuses connections"] as const) {
    it(`a leader cut off from the apiserver (it ${mode}) stops acting before its lease can be taken over`, async (t) => {
      // The safety property: a leader that cannot renew must give up (abort its leading signal) no
      // later than renewDeadline after its last successful renewal, which is before leaseDuration after
      // it, the earliest moment anyone else may take the lease over. A leader that kept acting until
      // the lease ran out would overlap with its successor. These timings leave a wide gap between the
      // two moments, so scheduling jitter cannot blur "renew deadline" into "lease expiry".
      const lease = 8000;
      const renew = 4000;
      const retry = 500;
      const apiPort = Number(new URL(env.server).port);
      const relay = new Partition(apiPort);
      await relay.listen();
      const tag = mode === "hangs" ? "hang" : "refuse";
      const name = `le-partition-${tag}`;
      const identity = `partitioned-${tag}`;
      const successorIdentity = `successor-${tag}`;

      // Every record the apiserver committed, watched over the direct connection: the leader's last
      // renewal there, plus leaseDuration, is the earliest moment the lease can be taken over.
      const client = new Client(env.kubeConfig);
      const records: Array<{ holder: string; renewTime: number; durationMs: number }> = [];
      const informer = new Informer<LeaseObject>(client, Kinds.Lease, {
        namespace: "default",
        fieldSelector: `metadata.name=${name}`,
      });
      const record = (l: Readonly<LeaseObject>) =>
        records.push({
          holder: l.spec?.holderIdentity ?? "",
          renewTime: Date.parse(l.spec?.renewTime ?? ""),
          durationMs: (l.spec?.leaseDurationSeconds ?? 0) * 1000,
        });
      informer.addEventHandler({ onAdd: record, onUpdate: (_, l) => record(l) });

      const timings = { leaseDurationMs: lease, renewDeadlineMs: renew, retryPeriodMs: retry };
      const started = deferred();
      const stopped = deferred();
      let relinquishedAt = NaN;
      const viaRelay = new Client(kubeConfigVia(env, relay.port));
      const leader = newElector({
        client: viaRelay,
        namespace: "default",
        name,
        identity,
        ...timings,
        callbacks: cb({
          onStartedLeading: (signal) => {
            // The moment it stops acting: the leading signal aborts.
            signal.addEventListener("abort", () => (relinquishedAt = Date.now()), { once: true });
            started.resolve();
          },
          onStoppedLeading: () => stopped.resolve(),
        }),
      });
      const takenOver = deferred<number>();
      const successor = newElector({
        client: apiClient,
        namespace: "default",
        name,
        identity: successorIdentity,
        ...timings,
        callbacks: cb({ onStartedLeading: () => takenOver.resolve(Date.now()) }),
      });
      try {
        informer.start();
        assert.equal(await withTimeout(informer.waitForSync(), 10_000, "lease informer syncs"), true);
        const run = leader.run();
        await withTimeout(started.promise, 10_000, "leads");
        void successor.run();
        // A few renewals go through the relay first; the successor sees them and waits.
        await new Promise((r) => setTimeout(r, 4 * retry));
        assert.equal(successor.getLeader(), identity);
        if (mode === "hangs") relay.cut();
        else await relay.close();
        const cutAt = Date.now();

        // Generous on purpose: the assertions below, not this wait, judge when it gave up.
        await withTimeout(stopped.promise, lease + SLACK_MS, "onStoppedLeading");
        assert.ok(Number.isFinite(relinquishedAt), "the leading signal was aborted");
        assert.equal(leader.isLeader(), false);
        assert.equal(await gaugeValue(name), 0);
        await withTimeout(run, 2000, "run() returns");
        const takenOverAt = await withTimeout(takenOver.promise, lease + 2.2 * retry + SLACK_MS, "successor leads");
        await withTimeout(
          (async () => {
            while (!records.some((r) => r.holder === successorIdentity)) await new Promise((r) => setTimeout(r, 20));
          })(),
          5000,
          "the informer sees the takeover",
        );

        const renewals = records.filter((r) => r.holder === identity);
        assert.ok(renewals.length >= 3, `only ${renewals.length} records of the leader were seen`);
        const last = renewals.reduce((a, b) => (b.renewTime > a.renewTime ? b : a));
        assert.equal(last.durationMs, lease);
        const takeoverPossibleAt = last.renewTime + last.durationMs;
        t.diagnostic(
          `cut ${cutAt - last.renewTime} ms, relinquished ${relinquishedAt - last.renewTime} ms, ` +
            `taken over ${takenOverAt - last.renewTime} ms after the last committed renewal; ` +
            `takeover possible from ${last.durationMs} ms`,
        );
        assert.ok(
          relinquishedAt < takeoverPossibleAt,
          `still leading ${relinquishedAt - takeoverPossibleAt} ms after the lease could be taken over`,
        );
        // Not at the last moment either: at the renew deadline (half the gap allowed for scheduling).
        assert.ok(
          relinquishedAt - last.renewTime <= renew + (lease - renew) / 2,
          `gave up ${relinquishedAt - last.renewTime} ms after its last renewal; the renew deadline is ${renew} ms`,
        );
        // End to end: the successor took over only after the leader had stopped, and not before the
        // lease ran out (so takeoverPossibleAt is a true lower bound).
        assert.ok(takenOverAt > relinquishedAt, "the successor led while the old leader was still acting");
        assert.ok(takenOverAt >= takeoverPossibleAt, "the successor took over a lease that had not run out");
      } finally {
        await informer.stop();
        client.close();
        await leader.stop();
        await successor.stop();
        viaRelay.close();
        await relay.close().catch(() => undefined);
      }
    });
  }
});

function cb(over: Partial<ConstructorParameters<typeof LeaderElector>[0]["callbacks"]> = {}) {
  return { onStartedLeading: () => undefined, onStoppedLeading: () => undefined, ...over };
}
