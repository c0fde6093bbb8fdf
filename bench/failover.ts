// What a new leader does in its first seconds, at N CronJobs: three starts of ours on one control plane, each
// replica in the Deployment's cgroup (cpu and memory limits), leader election on as the Deployment runs it.
//
//   1. fresh: N new CronJobs (no status yet), one replica started: its cold start (every CronJob processed once,
//      the queue empty) and when the last CronJob's first status was written.
//   2. failover: a second replica (the follower, caches synced, waiting on the Lease); after a slot's Jobs ran,
//      the leader is killed with SIGKILL 10 s before the next slot. The follower's lease acquisition, its
//      first pass over the CronJobs, and that slot's Jobs (first, p50, p99, last) from the kill and from the
//      lease's expiry (the kill + the lease duration, 15 s).
//   3. restart: the leader is killed and a new process started alone over CronJobs that have a status (a
//      rollout, or one replica): its cold start and the status writes it made in it.
//
//   node_modules/.bin/node bench/failover.ts [--n=5000] [--namespaces=4] [--out=bench/results/<file>.md]
//
// A finisher marks each Job Complete 5 s after it appears (no Job controller runs), as `make bench` does.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { CronJobResource } from "../api/v1/index.ts";
import { PROJECT_ROOT, TestEnv } from "../envtest/index.ts";
import { localManagerFlags } from "../envtest/manager-deployment.ts";
import { freePort } from "../envtest/ports.ts";
import { ManagedProcess } from "../envtest/processes.ts";
import { Client } from "../runtime/client.ts";
import type { KubeObject } from "../runtime/kinds.ts";
import { Cgroup, cgroupSupport, deploymentLimits, formatLimits } from "./lib/cgroup.ts";
import { completionConditions, JobFinisher, JobRecorder, ourSlotOf, serverVersion } from "./lib/jobs.ts";
import { deploymentNodeOptions, loggedAt } from "./lib/phases.ts";
import { sleep } from "./lib/pool.ts";
import { findChild } from "./lib/proc.ts";
import { scrape, sumOf } from "./lib/prom.ts";
import { createMany, createNamespaces, ourCronJob, placement } from "./lib/workload.ts";

const { values } = parseArgs({
  options: { n: { type: "string" }, namespaces: { type: "string" }, out: { type: "string" } },
});
const n = Number(values.n ?? 5000);
const namespaces = Number(values.namespaces ?? 4);
const LEASE_MS = 15_000; // the operator's default lease duration (runtime/leaderelection.ts)
const QUEUE = { name: "cronjob" };
const workDir = join(PROJECT_ROOT, "bench", "work", `failover-${Date.now()}`);
const support = cgroupSupport();
const limits = deploymentLimits(PROJECT_ROOT);
const lines: string[] = [];
const say = (s: string) => {
  lines.push(s);
  console.error(s);
};

interface Replica {
  name: string;
  proc: ManagedProcess;
  port: number;
  spawnedAt: number;
  logFile: string;
  cg?: Cgroup;
}

async function launch(env: TestEnv, name: string): Promise<Replica> {
  const port = await freePort();
  const logFile = join(workDir, `${name}.log`);
  const args = [
    join(process.env.OPERATOR_DIST ?? join(PROJECT_ROOT, "dist"), "cmd", "main.js"),
    ...localManagerFlags(env.kubeconfigPath, port),
    "--leader-elect",
    "--leader-election-namespace",
    "default",
  ];
  let cg: Cgroup | undefined;
  if (support.ok) cg = Cgroup.create(support, `cronjob-bench-${process.pid}-failover-${name}`, limits);
  const node = join(PROJECT_ROOT, "node_modules", ".bin", "node");
  const cmd = cg ? cg.wrap(node, args) : { bin: node, args };
  const spawnedAt = Date.now();
  const proc = new ManagedProcess(name, cmd.bin, cmd.args, logFile, {
    ...process.env,
    ENABLE_WEBHOOKS: "false",
    NODE_OPTIONS: deploymentNodeOptions(),
    POD_NAME: name,
  });
  if (proc.pid !== undefined) await findChild(proc.pid, "node");
  return { name, proc, port, spawnedAt, logFile, ...(cg ? { cg } : {}) };
}

const metricsOf = (r: Replica) => scrape(`http://127.0.0.1:${r.port}/metrics`, { timeoutMs: 10_000 });

/** When `r` has processed `atLeast` items and its queue is empty: ms since the epoch. */
async function drained(r: Replica, atLeast: number, timeoutMs = 180_000): Promise<number | undefined> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const m = await metricsOf(r).catch(() => undefined);
    if (
      m &&
      sumOf(m, "workqueue_work_duration_seconds_count", QUEUE) >= atLeast &&
      sumOf(m, "workqueue_depth", QUEUE) === 0 &&
      sumOf(m, "controller_runtime_deferred_reconciles", { controller: "cronjob" }) === 0
    )
      return Date.now();
    await sleep(250);
  }
  return undefined;
}

/** When `r` has processed `atLeast` items (every CronJob's first pass, at a start): ms since the epoch. */
async function processed(r: Replica, atLeast: number, timeoutMs = 180_000): Promise<number | undefined> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const m = await metricsOf(r).catch(() => undefined);
    if (m && sumOf(m, "workqueue_work_duration_seconds_count", QUEUE) >= atLeast) return Date.now();
    await sleep(250);
  }
  return undefined;
}

/** The first log line of `r` containing `text`: its time, ms since the epoch. */
const logged = (r: Replica, text: string): number | undefined => loggedAt(r.logFile, text);

/** When every CronJob has a status (its first write landed). */
async function allHaveStatus(client: Client, timeoutMs = 180_000): Promise<number | undefined> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const list = await client.list<KubeObject & { status?: { observedGeneration?: number } }>(CronJobResource);
    if (list.items.filter((c) => c.status?.observedGeneration !== undefined).length >= n) return Date.now();
    await sleep(1000);
  }
  return undefined;
}

async function statusWrites(env: TestEnv): Promise<number> {
  const m = await scrape(`${env.server}/metrics`, { token: env.token, insecure: true, timeoutMs: 30_000 });
  return sumOf(
    m,
    "apiserver_request_total",
    (l) => l.verb === "PUT" && l.resource === "cronjobs" && l.subresource === "status",
  );
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! : NaN;
};
const sec = (ms: number | undefined) => (ms === undefined ? "n/a" : `${(ms / 1000).toFixed(1)} s`);

async function main(): Promise<void> {
  mkdirSync(workDir, { recursive: true });
  const env = await TestEnv.start({ verbose: false });
  const client = new Client(env.kubeConfig, { userAgent: "bench", maxSockets: 64 });
  // The conditions a completion writes depend on the control plane's version (SuccessCriteriaMet from 1.31).
  const conditions = completionConditions(await serverVersion(client));
  const finisher = new JobFinisher(client, 5000, conditions, Math.min(32, Math.max(8, Math.ceil(n / 625))));
  const recorder = new JobRecorder(client, ourSlotOf, (job) => finisher.schedule(job));
  const replicas: Replica[] = [];
  try {
    say(`# A new leader's first seconds at N = ${n} (${new Date().toISOString()})\n`);
    say(
      `Each replica in a cgroup with the Deployment's limits (${support.ok ? formatLimits(limits) : `none: ${support.reason}`}), ` +
        `--leader-elect (lease ${LEASE_MS / 1000} s), the operator built in ${process.env.OPERATOR_DIST ?? "dist"}.\n`,
    );
    await createNamespaces(client, namespaces);
    const into = Date.now() % 60_000;
    if (into > 5_000) await sleep(60_000 - into + 200);
    const setup = await createMany(client, CronJobResource, n, 32, (i) => {
      const p = placement(i, namespaces);
      return ourCronJob(p.namespace, p.name);
    });
    await recorder.start();

    // 1. fresh
    const writes0 = await statusWrites(env);
    const a = await launch(env, "replica-a");
    replicas.push(a);
    const aDecided = await processed(a, n);
    const aReady = await drained(a, n);
    const aWrites = (await statusWrites(env)) - writes0;
    const aStatus = await allHaveStatus(client);
    say("## 1. fresh: N new CronJobs, one replica\n");
    say(`- CronJobs created in ${setup.toFixed(1)} s, then the replica started.`);
    say(
      `- every CronJob processed once: **${sec(aDecided && aDecided - a.spawnedAt)}**; ` +
        `the queue empty (the first statuses written): ${sec(aReady && aReady - a.spawnedAt)}` +
        ` (lease acquired at ${sec(logged(a, "successfully acquired lease") && logged(a, "successfully acquired lease")! - a.spawnedAt)}); ` +
        `status writes in it: ${aWrites}`,
    );
    say(`- every CronJob's first status written: ${sec(aStatus && aStatus - a.spawnedAt)} after the start\n`);

    // 2. failover
    const b = await launch(env, "replica-b");
    replicas.push(b);
    // The follower's caches: synced once it logs that it is trying for the lease.
    for (let i = 0; i < 240 && logged(b, "attempting to acquire leader lease") === undefined; i++) await sleep(250);
    const bWaiting = logged(b, "attempting to acquire leader lease");
    // A slot of the leader's, all its Jobs done, then the kill 10 s before the next slot.
    let slot = Math.floor(Date.now() / 60_000) * 60_000 + 60_000;
    if (slot - Date.now() < 15_000) slot += 60_000;
    while ((recorder.perSlot.get(slot) ?? 0) < n && Date.now() < slot + 50_000) await sleep(500);
    const next = slot + 60_000;
    await sleep(Math.max(0, next - 10_000 - Date.now()));
    const killedAt = Date.now();
    await a.proc.kill();
    let acquired: number | undefined;
    let bReady: number | undefined;
    while (Date.now() < next + 90_000) {
      const m = await metricsOf(b).catch(() => undefined);
      if (m && acquired === undefined && sumOf(m, "leader_election_master_status") > 0)
        acquired = logged(b, "successfully acquired lease") ?? Date.now();
      if (m && bReady === undefined && sumOf(m, "workqueue_work_duration_seconds_count", QUEUE) >= n)
        bReady = Date.now();
      if ((recorder.perSlot.get(next) ?? 0) >= n && bReady !== undefined) break;
      await sleep(250);
    }
    const created = [...recorder.jobs.values()].filter((j) => j.slot === next).map((j) => j.seenAt ?? j.createdAt);
    const expiry = killedAt + LEASE_MS;
    say("## 2. failover: SIGKILL to the leader 10 s before a slot, a follower with warm caches\n");
    say(
      `- the follower's caches synced and it waited on the Lease ${sec(bWaiting && bWaiting - b.spawnedAt)} after its start`,
    );
    say(`- kill at slot − 10 s; the lease expires at kill + ${LEASE_MS / 1000} s (slot + 5 s)`);
    say(
      `- lease acquired: kill + ${sec(acquired && acquired - killedAt)} (expiry + ${sec(acquired && acquired - expiry)})`,
    );
    say(`- its first pass over the N CronJobs done (N processed): kill + ${sec(bReady && bReady - killedAt)}`);
    say(
      `- the slot's Jobs: ${created.length} of ${n}; first at kill + ${sec(pct(created, 0.0001) - killedAt)}, ` +
        `p50 kill + ${sec(pct(created, 50) - killedAt)}, p99 kill + ${sec(pct(created, 99) - killedAt)}, ` +
        `last kill + ${sec(pct(created, 100) - killedAt)}; from the lease's expiry: first + ${sec(pct(created, 0.0001) - expiry)}, ` +
        `p99 + ${sec(pct(created, 99) - expiry)}\n`,
    );

    // 3. restart: right after the slot's Jobs exist, so that the new process (which first waits a whole lease
    // duration from when it sees the killed one's Lease, as client-go's elector does) leads with no slot due.
    await b.proc.kill();
    const writes3 = await statusWrites(env);
    const c = await launch(env, "replica-c");
    replicas.push(c);
    const cDecided = await processed(c, n);
    const cLease = logged(c, "successfully acquired lease");
    const cWrites = (await statusWrites(env)) - writes3;
    const cReady = await drained(c, n, 60_000);
    say("## 3. restart: one replica killed, a new process alone over CronJobs with a status\n");
    say(
      `- the lease acquired ${sec(cLease && cLease - c.spawnedAt)} after the process start (a whole lease duration after ` +
        `it first saw the killed one's Lease); every CronJob processed once: **${sec(cDecided && cLease && cDecided - cLease)}** ` +
        `after that, the queue empty: ${sec(cReady && cLease && cReady - cLease)}; status writes until every CronJob was processed once: ${cWrites}`,
    );
    const dup = [...recorder.jobs.values()].reduce((m, j) => {
      const k = `${j.owner}@${j.slot}`;
      m.set(k, (m.get(k) ?? 0) + 1);
      return m;
    }, new Map<string, number>());
    say(`- duplicate runs over the whole run: ${[...dup.values()].filter((x) => x > 1).length}`);
    // Refused completions: no Job finished, so neither did what the runs measure after them.
    const refused = finisher.failure();
    if (refused) throw refused;
  } finally {
    await recorder.stop();
    await finisher.stop();
    for (const r of replicas) {
      await r.proc.stop(1000).catch(() => {});
      r.cg?.remove();
    }
    client.close();
    await env.stop();
  }
  if (values.out) writeFileSync(values.out, `${lines.join("\n")}\n`);
}

await main();
