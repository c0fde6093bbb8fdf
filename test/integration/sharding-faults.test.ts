// Faults of a sharded install under load, on a local cluster with a real node (issue 77 item 4): --sharding managers
// (cmd/main.ts, each a process of its own, as `make run` runs one) run every-15s CronJobs in five namespaces (a
// concurrency group of limit 1 over two of them, a chain up → down by spec.after) whose Jobs run real Pods, finished by
// the real Job controller. One replica is SIGKILLed in the middle of a slot's burst, one joins and one leaves under
// load, one is SIGSTOPped longer than its Lease and then woken. Through all of it: every slot of every CronJob ran,
// none twice (missedRunPolicy RunAll: a slot missed while a namespace changed hands runs late, not never), every Job
// Complete, the group never had two Jobs unfinished at once (a Job counts from its creation until its Complete
// condition, so a Pod still terminating counts too), and every run of `up` that succeeded started `down` exactly once.
// Which replica holds which namespace is read from the claims. Needs root (a real node); one node a machine: in CI's
// node lane (node-lane-run.ts) the lane's node, shared with node-cluster's tests in a namespace of theirs.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import {
  afterJobName,
  CLAIM_LEASE_NAME,
  CONCURRENCY_GROUP_LABEL,
  ConcurrencyGroupResource,
  CronJobResource,
  type Job,
  scheduledTimeOf,
} from "../../api/v1/index.ts";
import { type NodeCluster, nodeJobSpec } from "../../envtest/node-cluster.ts";
import { freePort } from "../../envtest/ports.ts";
import { Informer } from "../../runtime/cache/informer.ts";
import { Client } from "../../runtime/client.ts";
import { Kinds, type KubeObject } from "../../runtime/kinds.ts";
import { ownerOf } from "../../runtime/sharding/rendezvous.ts";
import { eventually } from "../eventually.ts";
import { type ManagerProcess, managerProcess } from "../manager-process.ts";
import { laneCluster, nodeLaneDescribe } from "./node-lane.ts";

const NAMESPACES = Array.from({ length: 5 }, (_, i) => `faults-${i}`);
const SCHEDULED = ["g1", "g2", "up"] as const;
/** 20 Pods every 15 s on the two cores, beside the other integration files: the node keeps up. */
const EVERY_S = 15;
const EVERY_MS = EVERY_S * 1000;
/** The manager's replica Lease (its default), renewed every retry period. */
const LEASE_MS = 15_000;
const RETRY_MS = 2_000;
/** The manager's --leader-election-id (its default): each replica's Lease is `<it>-<POD_NAME>`. */
const ELECTION_ID = "80807133.tutorial.kubebuilder.io";
/** A slot's Jobs, made and their Pods started on the node: the next slot's are due within this. */
const SLOT_WAIT_MS = EVERY_MS + 30_000;
/** Into a slot's burst: its Jobs are being made (each replica makes its namespaces' within a second or two). */
const BURST_MS = 300;

const finished = (j: Job) =>
  (j.status?.conditions ?? []).some((c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True");

const SUITE =
  "sharding under faults: a replica SIGKILLed mid-burst, one joining and one leaving, one SIGSTOPped past its Lease";

nodeLaneDescribe(SUITE, "node", {}, () => {
  let cluster: NodeCluster;
  let admin: Client;
  let jobs: Informer<Job>;
  const replicas = new Map<string, ManagerProcess>();
  /** The most Jobs of the group running at once in a namespace, at any event. */
  const groupPeak = new Map<string, number>();
  /** A step reached, with the seconds since the story began (where a slow run's time went). */
  let reached: (what: string) => void = () => {};

  async function start(name: string): Promise<ManagerProcess> {
    const m = managerProcess({
      name,
      dir: cluster.dir,
      kubeconfigPath: cluster.kubeconfigPath,
      webhookPort: await freePort(),
      args: ["--sharding"],
      env: { ENABLE_WEBHOOKS: "false", POD_NAME: name },
    });
    replicas.set(name, m);
    return m;
  }

  /** Each namespace's claim holder, as its replica (POD_NAME). */
  async function holders(): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const ns of NAMESPACES) {
      const claim = await admin
        .get<KubeObject & { spec?: { holderIdentity?: string } }>(Kinds.Lease, ns, CLAIM_LEASE_NAME)
        .catch(() => undefined);
      const h = claim?.spec?.holderIdentity;
      if (h) out.set(ns, h.replace(/_[^_]*$/, ""));
    }
    return out;
  }

  /** Every namespace claimed by the one of `live` the hash names (each replica's key: its Lease's name). */
  async function heldBy(live: string[], timeoutMs: number, what: string): Promise<Map<string, string>> {
    const keys = live.map((r) => `${ELECTION_ID}-${r}`);
    return eventually(
      what,
      async () => {
        const h = await holders();
        return NAMESPACES.every((ns) => `${ELECTION_ID}-${h.get(ns)}` === ownerOf(ns, keys)) ? h : undefined;
      },
      timeoutMs,
      async () => `claims: ${JSON.stringify(Object.fromEntries(await holders()))}`,
    ).finally(() => reached(what));
  }

  /** A Job of each scheduled CronJob of `namespaces` for a slot after `t`. */
  async function ranAfter(namespaces: string[], t: number, timeoutMs: number, what: string): Promise<void> {
    await eventually(
      what,
      async () =>
        namespaces.every((ns) =>
          SCHEDULED.every((cj) =>
            jobs.list().some((j) => j.metadata?.namespace === ns && ownerName(j) === cj && slotOf(j) > t),
          ),
        ) || undefined,
      timeoutMs,
    ).finally(() => reached(what));
  }

  function countGroup(): void {
    for (const ns of NAMESPACES) {
      const running = jobs
        .list()
        .filter(
          (j) => j.metadata?.namespace === ns && j.metadata?.labels?.[CONCURRENCY_GROUP_LABEL] === "g" && !finished(j),
        ).length;
      groupPeak.set(ns, Math.max(groupPeak.get(ns) ?? 0, running));
    }
  }

  before(async () => {
    cluster = laneCluster();
    admin = new Client(cluster.kubeConfig);
    jobs = new Informer<Job>(admin, Kinds.Job);
    jobs.addEventHandler({
      onAdd: () => countGroup(),
      onUpdate: () => countGroup(),
      onDelete: () => countGroup(),
    });
    jobs.start();
    await jobs.waitForSync();
    // One Pod of the node's local image, a second long.
    const template = { spec: nodeJobSpec(["sleep", "1"]) };
    const cronJob = (ns: string, name: string, spec: Record<string, unknown>) =>
      admin.create(CronJobResource, {
        apiVersion: "batch.tutorial.kubebuilder.io/v1",
        kind: "CronJob",
        metadata: { name, namespace: ns },
        // History kept long enough to be read at the end.
        spec: { jobTemplate: template, successfulJobsHistoryLimit: 100, failedJobsHistoryLimit: 100, ...spec },
      } as KubeObject);
    for (const ns of NAMESPACES) {
      await admin.create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
      await admin.create(ConcurrencyGroupResource, {
        apiVersion: "batch.tutorial.kubebuilder.io/v1",
        kind: "ConcurrencyGroup",
        metadata: { name: "g", namespace: ns },
        spec: { limit: 1 },
      } as KubeObject);
      const every = { schedule: `@every ${EVERY_S}s`, missedRunPolicy: "RunAll" };
      await cronJob(ns, "g1", { ...every, concurrencyGroup: "g" });
      await cronJob(ns, "g2", { ...every, concurrencyGroup: "g" });
      await cronJob(ns, "up", every);
      // RunAll here too: with RunLatest (unset), two upstream runs ended while the namespace changed hands run down once,
      // for the newer, and the record says the older was skipped (that policy's promise, not a miss).
      await cronJob(ns, "down", { after: [{ cronJob: "up" }], missedRunPolicy: "RunAll" });
    }
  });

  after(async () => {
    await Promise.all([...replicas.values()].map((m) => m.proc.stop().catch(() => undefined)));
    await jobs?.stop();
    admin?.close();
  });

  it("no slot missed or run twice, the group's limit held, each upstream run followed once", async (t) => {
    const began = Date.now();
    reached = (what) => t.diagnostic(`${((Date.now() - began) / 1000).toFixed(1)} s: ${what}`);
    const first = await Promise.all(["r1", "r2", "r3"].map(start));
    await Promise.all(first.map((m) => m.ready(60_000)));
    await heldBy(["r1", "r2", "r3"], 30_000, "the three replicas claim every namespace");
    const from = Date.now();
    await ranAfter(NAMESPACES, from, SLOT_WAIT_MS, "every CronJob runs under the three");

    // SIGKILL the replica holding the most namespaces in the middle of a slot's burst (its CronJobs were made
    // together, so their @every slots fall together): they run again once its Lease has lapsed.
    let h = await holders();
    const count = (r: string) => [...h.values()].filter((x) => x === r).length;
    const victim = ["r1", "r2", "r3"].sort((a, b) => count(b) - count(a))[0]!;
    const itsNamespaces = NAMESPACES.filter((ns) => h.get(ns) === victim);
    const lastSlot = Math.max(...jobs.list().map(slotOf));
    const burst = lastSlot + Math.ceil((Date.now() - lastSlot) / EVERY_MS) * EVERY_MS;
    await sleepUntil(burst + BURST_MS);
    // The whole process group (the watchdog and the manager), as a node's OOM kill or a lost node ends a container.
    void replicas.get(victim)!.proc.kill();
    const killedAt = Date.now();
    const survivors = ["r1", "r2", "r3"].filter((r) => r !== victim);
    await heldBy(survivors, LEASE_MS + 20_000, `the survivors take ${victim}'s namespaces`);
    // Its last renewal was at most a retry period before the kill: its Lease could lapse no sooner than this.
    assert.ok(
      Date.now() - killedAt >= LEASE_MS - RETRY_MS - 1_000,
      "not taken before the dead replica's Lease could lapse",
    );
    // The slot the kill cut into runs in every one of them (late, made by the survivors where the victim had not).
    await ranAfter(itsNamespaces, burst - 1, SLOT_WAIT_MS, `${victim}'s namespaces run the slot it died in`);

    // A replica joins under load, then another leaves (SIGTERM): the namespaces move, none held twice.
    const r4 = await start("r4");
    await r4.ready(60_000);
    const [leaving, staying] = survivors as [string, string];
    await heldBy([...survivors, "r4"], 30_000, "the namespaces divided again with r4");
    // Its namespaces move as it lets them go on SIGTERM, before its process has ended.
    const left = replicas.get(leaving)!.proc.stop();
    // Sooner than its Lease could lapse: the graceful path (its claims and Lease let go), not the expiry.
    await heldBy([staying, "r4"], LEASE_MS - RETRY_MS, `${staying} and r4 hold every namespace after ${leaving} left`);
    await left;
    replicas.delete(leaving);

    // SIGSTOP a replica that holds namespaces for longer than its Lease: the other takes them; resumed, it writes
    // nothing where it no longer holds (its writes are fenced), so the group's limit and the slots still hold.
    h = await holders();
    const paused = [...h.values()].includes(staying) ? staying : "r4";
    const other = paused === staying ? "r4" : staying;
    // The process group: the manager, and its watchdog with it.
    const group = -replicas.get(paused)!.proc.pid!;
    process.kill(group, "SIGSTOP");
    const stoppedAt = Date.now();
    try {
      await heldBy([other], LEASE_MS + 20_000, `${other} takes the paused ${paused}'s namespaces`);
      await ranAfter(NAMESPACES, stoppedAt, SLOT_WAIT_MS, `${other} runs every namespace's slots since the stop`);
      await eventually(
        "past the Lease",
        async () => (Date.now() - stoppedAt > LEASE_MS + 3_000 ? true : undefined),
        30_000,
      );
    } finally {
      process.kill(group, "SIGCONT");
    }
    const resumedAt = Date.now();
    await ranAfter(NAMESPACES, resumedAt, SLOT_WAIT_MS, "every CronJob runs after the resume");
    const end = Date.now();
    // Each upstream run that succeeded started its downstream once (its name is the upstream Job's: once by design).
    const unfollowed = () =>
      jobs
        .list()
        .filter((up) => ownerName(up) === "up" && finished(up) && Date.parse(up.status?.completionTime ?? "") < end)
        .filter(
          (up) =>
            !jobs
              .list()
              .some(
                (j) =>
                  j.metadata?.namespace === up.metadata?.namespace &&
                  j.metadata?.name === afterJobName("down", "up", up.metadata!.name!),
              ),
        )
        .map((up) => `${up.metadata?.namespace}: no run of down after ${up.metadata?.name}`);
    await eventually(
      "every upstream run followed",
      async () => (unfollowed().length ? undefined : true),
      30_000,
      async () => unfollowed().join("\n"),
    );

    // Every slot from the first seen to the last one before `end`, once.
    const problems: string[] = [];
    for (const ns of NAMESPACES)
      for (const cj of SCHEDULED) {
        const slots = jobs
          .list()
          .filter((j) => j.metadata?.namespace === ns && ownerName(j) === cj)
          .map(slotOf)
          .sort((a, b) => a - b);
        const twice = slots.filter((s, i) => i > 0 && s === slots[i - 1]);
        if (twice.length) problems.push(`${ns}/${cj}: ${twice.length} slots run twice`);
        for (let i = 1; i < slots.length; i++)
          if (slots[i]! - slots[i - 1]! > EVERY_MS)
            problems.push(`${ns}/${cj}: no run between ${iso(slots[i - 1]!)} and ${iso(slots[i]!)}`);
        if (!slots.length || slots.at(-1)! < end - 3 * EVERY_MS) problems.push(`${ns}/${cj}: stopped running`);
      }
    for (const [ns, peak] of groupPeak) if (peak > 1) problems.push(`${ns}: ${peak} Jobs of group g (limit 1) at once`);
    // The real Job controller's verdict on every Pod the shards started: none failed (their namespaces': the node may
    // run other suites' Jobs, some made to fail).
    for (const j of jobs.list().filter((j) => NAMESPACES.includes(j.metadata?.namespace ?? "")))
      if ((j.status?.conditions ?? []).some((c) => c.type === "Failed" && c.status === "True"))
        problems.push(`${j.metadata?.namespace}/${j.metadata?.name}: Failed`);
    assert.deepEqual(problems, [], problems.join("\n"));
    assert.ok(from < killedAt && killedAt < stoppedAt && stoppedAt < resumedAt);
  });
});

const sleepUntil = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));

function ownerName(j: Job): string | undefined {
  return j.metadata?.ownerReferences?.find((o) => o.controller)?.name;
}

function slotOf(j: Job): number {
  return scheduledTimeOf(j)?.getTime() ?? 0;
}

const iso = (ms: number) => new Date(ms).toISOString();
