// Faults of a sharded install under load, on a real kube-apiserver: --sharding managers (cmd/main.ts, each a process
// of its own) run every-10s CronJobs in six namespaces (a concurrency group of limit 1 over two of them, a chain
// up → down by spec.after) while the test plays the Job controller (each Job Complete 2 s after it appears). One
// replica is SIGKILLed mid-burst, one joins and one leaves under load, one is SIGSTOPped longer than its Lease. Through
// all of it: every slot of every CronJob ran, none twice (missedRunPolicy RunAll: a slot missed while a namespace
// changed hands runs late, not never), the group never had two Jobs running at once, and every run of `up` that
// succeeded started `down` exactly once. Which replica holds which namespace is read from the claims.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  afterJobName,
  CLAIM_LEASE_NAME,
  CONCURRENCY_GROUP_LABEL,
  ConcurrencyGroupResource,
  CronJobResource,
  type Job,
  scheduledTimeOf,
} from "../../api/v1/index.ts";
import { TestEnv } from "../../envtest/index.ts";
import { freePort } from "../../envtest/ports.ts";
import { Informer } from "../../runtime/cache/informer.ts";
import { Client } from "../../runtime/client.ts";
import { Kinds, type KubeObject } from "../../runtime/kinds.ts";
import { ownerOf } from "../../runtime/sharding/rendezvous.ts";
import { eventually } from "../eventually.ts";
import { jobStatus } from "../fixtures.ts";
import { type ManagerProcess, managerProcess } from "../manager-process.ts";

const NAMESPACES = Array.from({ length: 6 }, (_, i) => `faults-${i}`);
const SCHEDULED = ["g1", "g2", "up"] as const;
const EVERY_S = 10;
/** The Job controller's part: each Job Complete this long after it appears. */
const RUN_MS = 2_000;
/** The manager's replica Lease (its default), renewed every retry period. */
const LEASE_MS = 15_000;
const RETRY_MS = 2_000;
/** The manager's --leader-election-id (its default): each replica's Lease is `<it>-<POD_NAME>`. */
const ELECTION_ID = "80807133.tutorial.kubebuilder.io";

const finished = (j: Job) =>
  (j.status?.conditions ?? []).some((c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True");

describe("sharding under faults: a replica SIGKILLed mid-burst, one joining and one leaving, one SIGSTOPped past its Lease", () => {
  let env: TestEnv;
  let admin: Client;
  let jobs: Informer<Job>;
  const replicas = new Map<string, ManagerProcess>();
  /** The most Jobs of the group running at once in a namespace, at any event. */
  const groupPeak = new Map<string, number>();
  const finishing = new Set<string>();

  async function start(name: string): Promise<ManagerProcess> {
    const m = managerProcess({
      name,
      dir: env.dir,
      kubeconfigPath: env.kubeconfigPath,
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
    );
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
    );
  }

  /** Play the Job controller: Complete RUN_MS after the Job appears (once; a conflict is tried again). */
  function finishLater(j: Job): void {
    const key = `${j.metadata?.namespace}/${j.metadata?.name}`;
    if (finishing.has(key) || finished(j)) return;
    finishing.add(key);
    const complete = async () => {
      for (let attempt = 0; attempt < 5; attempt++) {
        try {
          const live = await admin.get<Job>(Kinds.Job, j.metadata!.namespace, j.metadata!.name!);
          const now = new Date();
          live.status = jobStatus({ state: "complete", start: live.status?.startTime ?? now, end: now });
          await admin.updateStatus(Kinds.Job, live);
          return;
        } catch {
          // deleted (history), or a conflict: read it again
        }
      }
    };
    setTimeout(() => void complete(), RUN_MS).unref();
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
    env = await TestEnv.start({ verbose: false });
    admin = new Client(env.kubeConfig);
    jobs = new Informer<Job>(admin, Kinds.Job);
    jobs.addEventHandler({
      onAdd: (j) => {
        finishLater(j);
        countGroup();
      },
      onUpdate: () => countGroup(),
      onDelete: () => countGroup(),
    });
    jobs.start();
    await jobs.waitForSync();
    const template = {
      spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] } } },
    };
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
    await env?.stop();
  });

  it("no slot missed or run twice, the group's limit held, each upstream run followed once", async () => {
    const first = await Promise.all(["r1", "r2", "r3"].map(start));
    await Promise.all(first.map((m) => m.ready(60_000)));
    await heldBy(["r1", "r2", "r3"], 30_000, "the three replicas claim every namespace");
    const from = Date.now();
    await ranAfter(NAMESPACES, from, 30_000, "every CronJob runs under the three");

    // SIGKILL the replica holding the most namespaces: they run again once its Lease has lapsed.
    let h = await holders();
    const count = (r: string) => [...h.values()].filter((x) => x === r).length;
    const victim = ["r1", "r2", "r3"].sort((a, b) => count(b) - count(a))[0]!;
    const itsNamespaces = NAMESPACES.filter((ns) => h.get(ns) === victim);
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
    await ranAfter(itsNamespaces, Date.now(), 30_000, `${victim}'s namespaces run again`);

    // A replica joins under load, then another leaves (SIGTERM): the namespaces move, none held twice.
    const r4 = await start("r4");
    await r4.ready(60_000);
    const [leaving, staying] = survivors as [string, string];
    await heldBy([...survivors, "r4"], 30_000, "the namespaces divided again with r4");
    await replicas.get(leaving)!.proc.stop();
    replicas.delete(leaving);
    await heldBy([staying, "r4"], 20_000, `${staying} and r4 hold every namespace after ${leaving} left`);

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
      await ranAfter(NAMESPACES, Date.now(), 30_000, `${other} runs every namespace`);
      await eventually(
        "past the Lease",
        async () => (Date.now() - stoppedAt > LEASE_MS + 3_000 ? true : undefined),
        30_000,
      );
    } finally {
      process.kill(group, "SIGCONT");
    }
    const resumedAt = Date.now();
    await ranAfter(NAMESPACES, resumedAt + EVERY_S * 1000, 60_000, "every CronJob runs after the resume");
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
          if (slots[i]! - slots[i - 1]! > EVERY_S * 1000)
            problems.push(`${ns}/${cj}: no run between ${iso(slots[i - 1]!)} and ${iso(slots[i]!)}`);
        if (!slots.length || slots.at(-1)! < end - 3 * EVERY_S * 1000) problems.push(`${ns}/${cj}: stopped running`);
      }
    for (const [ns, peak] of groupPeak) if (peak > 1) problems.push(`${ns}: ${peak} Jobs of group g (limit 1) at once`);
    assert.deepEqual(problems, [], problems.join("\n"));
    assert.ok(from < killedAt && killedAt < stoppedAt && stoppedAt < resumedAt);
  });
});

function ownerName(j: Job): string | undefined {
  return j.metadata?.ownerReferences?.find((o) => o.controller)?.name;
}

function slotOf(j: Job): number {
  return scheduledTimeOf(j)?.getTime() ?? 0;
}

const iso = (ms: number) => new Date(ms).toISOString();
