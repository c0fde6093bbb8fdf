// Issue 45's rules in the reconciler, with a fake clock and several CronJobs of one namespace passing through one
// reconciler (a process) or a new one (a restart, a leader change): a concurrency group's shared limit
// (spec.concurrencyGroup), a run whose Pods never start (spec.startTimeoutSeconds) and Jobs queued by another
// controller. One table, two drivers: fleet.test.ts runs it against envtest, test/unit/cronjob-reconciler-table.test.ts
// against the in-memory fake. Each case is a story over hourly slots (h1: the first full hour after the CronJobs'
// creation), told with the harness's steps; every hold, run and end is checked in the stored record (the exact
// entries), the Jobs the apiserver holds, and the Events.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  ConcurrencyGroupResource,
  CONCURRENCY_GROUP_LABEL,
  type CronJob,
  type CronJobInput,
  CronJobResource as CronJobKind,
  ENDED_MESSAGE_ANNOTATION,
  ENDED_PODS_ANNOTATION,
  ENDED_REASON_ANNOTATION,
  type Job,
  RUN_NOW_ANNOTATION,
} from "../../../api/v1/index.ts";
import { CronJobReconciler } from "../../../controllers/cronjob_controller.ts";
import type { Result } from "../../../runtime/controller.ts";
import type { ObjectClient } from "../../../runtime/interfaces.ts";
import { Kinds } from "../../../runtime/kinds.ts";
import { discardLogger } from "../../../runtime/log.ts";
import type { ReconcileHarness, ReconcilerDriver } from "./harness.ts";

const MIN = 60_000;
const HOUR = 60 * MIN;
const iso = (t: number) => new Date(t).toISOString().replace(/\.\d{3}Z$/, "Z");
type Spec = Partial<CronJobInput["spec"]>;

/** One case's world: a namespace, its CronJobs, h1, and a reconciler that can be replaced (a restart). */
class Fleet {
  readonly h: ReconcileHarness<ObjectClient>;
  h1 = 0;
  reconciler: CronJobReconciler;
  constructor(h: ReconcileHarness<ObjectClient>) {
    this.h = h;
    this.reconciler = h.reconciler;
  }
  get ns(): string {
    return this.h.namespace;
  }
  /** Creates the CronJobs (hourly at :00 unless their spec says otherwise); h1 is the first hour after them all. */
  async cronJobs(specs: Record<string, Spec>): Promise<void> {
    let last = 0;
    for (const [name, spec] of Object.entries(specs)) {
      const cj = await this.h.createCronJob(name, spec);
      last = Math.max(last, Date.parse(cj.metadata.creationTimestamp!));
    }
    this.h1 = Math.floor(last / HOUR) * HOUR + HOUR;
  }
  async group(name: string, limit: number): Promise<void> {
    const obj = {
      apiVersion: "batch.tutorial.kubebuilder.io/v1",
      kind: "ConcurrencyGroup",
      metadata: { name, namespace: this.ns },
      spec: { limit },
    };
    await this.h.client.create(ConcurrencyGroupResource, obj);
    await this.settleGroup(name, limit);
  }
  async setLimit(name: string, limit: number): Promise<void> {
    const g = await this.h.client.get(ConcurrencyGroupResource, this.ns, name);
    await this.h.client.update(ConcurrencyGroupResource, { ...g, spec: { limit } });
    await this.settleGroup(name, limit);
  }
  private async settleGroup(name: string, limit: number): Promise<void> {
    for (let i = 0; i < 1500; i++) {
      const g = this.h.cache.get<{ spec?: { limit?: number } } & object>(ConcurrencyGroupResource, this.ns, name);
      if (g?.spec?.limit === limit) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.fail(`the cache never showed group ${name} at ${limit}`);
  }
  /** A pass over `name` at h1 + `at`. */
  async pass(name: string, at: number, o: { unseenJobs?: string[] } = {}): Promise<Result> {
    this.h.clock.set(new Date(this.h1 + at));
    const run = () =>
      this.reconciler.reconcile(
        { namespace: this.ns, name },
        { log: discardLogger, reconcileID: `fleet-${name}-${at}`, signal: new AbortController().signal },
      );
    const result = (o.unseenJobs ? await this.h.withJobsUnseen(o.unseenJobs, run) : await run()) ?? {};
    await this.h.settle(name);
    return result;
  }
  /** A new process: nothing remembered, the same cluster. */
  restart(): void {
    this.reconciler = new CronJobReconciler({
      client: this.h.client,
      cache: this.h.cache,
      recorder: this.h.recorder,
      clock: this.h.clock,
    });
  }
  job(name: string, at: number): string {
    return `${name}-${(this.h1 + at) / 1000}`;
  }
  async jobNames(): Promise<string[]> {
    return (await this.h.jobs()).map((j) => j.metadata!.name!).sort();
  }
  async get(name: string): Promise<CronJob> {
    return this.h.get(name);
  }
  /** The stored record's entries, without decidedAt unless asked. */
  async record(name: string): Promise<Record<string, unknown>[]> {
    return ((await this.get(name)).status?.recentRuns ?? []).map((e) => {
      const { decidedAt: _d, ...rest } = e as Record<string, unknown>;
      return rest;
    });
  }
  async start(job: string, at: number): Promise<void> {
    await this.h.startJob(job, iso(this.h1 + at));
    await this.settleAll();
  }
  async finish(job: string, as: "Complete" | "Failed", start: number, end: number, failure?: { reason: string }) {
    await this.h.finishJob(job, as, iso(this.h1 + start), iso(this.h1 + end), failure);
    await this.settleAll();
  }
  async settleAll(): Promise<void> {
    const cjs = (await this.h.client.list<CronJob>(CronJobKind, { namespace: this.ns })).items;
    for (const cj of cjs) await this.h.settle(cj.metadata.name!);
  }
  events(): string[] {
    return this.h.takeEvents();
  }
}

const held = (slot: number, reason: string, message: string, blockedBy?: string) => ({
  trigger: "Schedule",
  scheduledTime: iso(slot),
  decision: "Held",
  reason,
  message,
  ...(blockedBy ? { blockedBy } : {}),
});
const created = (slot: number, job: string) => ({
  trigger: "Schedule",
  scheduledTime: iso(slot),
  decision: "Created",
  reason: "Scheduled",
  job,
});

export function fleetCases(driver: ReconcilerDriver): void {
  describe(`fleets: concurrency groups, the start limit, queued Jobs (${driver.name})`, () => {
    let n = 0;
    const harnesses: ReconcileHarness<ObjectClient>[] = [];
    before(() => driver.setup());
    after(async () => {
      // Each case's cache watches its namespace: stopped, or the process never exits.
      for (const h of harnesses) await h.stop();
      await driver.teardown();
    });
    const fleet = async (): Promise<Fleet> => {
      const h = await driver.harness(`fleet-${++n}-${driver.backend}`, new Date().toISOString());
      harnesses.push(h);
      return new Fleet(h);
    };

    it("a group of limit 1: the second CronJob's slot waits, recorded with the Job it waits behind; runs once a place frees", async () => {
      const f = await fleet();
      await f.group("backups", 1);
      await f.cronJobs({ a: { concurrencyGroup: "backups" }, b: { concurrencyGroup: "backups" } });
      const h1 = f.h1;
      await f.pass("a", 1000);
      await f.pass("b", 2000);
      assert.deepEqual(await f.jobNames(), [f.job("a", 0)]);
      assert.deepEqual(await f.record("b"), [
        held(h1, "ConcurrencyGroupFull", `held: group backups is at 1/1: Jobs ${f.job("a", 0)}`, f.job("a", 0)),
      ]);
      assert.ok(
        f
          .events()
          .some(
            (e) =>
              e ===
              `Normal ConcurrencyGroupFull run for ${iso(h1)}: held: group backups is at 1/1: Jobs ${f.job("a", 0)}`,
          ),
      );
      // A pass while it still runs writes nothing new (the entry keeps its first decision).
      const before = (await f.get("b")).metadata.resourceVersion;
      await f.pass("b", 3000);
      assert.equal((await f.get("b")).metadata.resourceVersion, before, "a hold that holds writes nothing");
      await f.finish(f.job("a", 0), "Complete", 1000, 5 * MIN);
      await f.pass("b", 5 * MIN + 1000);
      assert.deepEqual(await f.jobNames(), [f.job("a", 0), f.job("b", 0)]);
      assert.deepEqual((await f.record("b"))[0], created(h1, f.job("b", 0)));
      const job = (await f.h.jobs("b"))[0]!;
      assert.equal(job.metadata?.labels?.[CONCURRENCY_GROUP_LABEL], "backups", "the Job carries its group");
    });

    it("a Job this process just created counts before the cache shows it (no second run in the group)", async () => {
      const f = await fleet();
      await f.group("backups", 1);
      await f.cronJobs({ a: { concurrencyGroup: "backups" }, b: { concurrencyGroup: "backups" } });
      await f.pass("a", 1000);
      await f.pass("b", 1500, { unseenJobs: [f.job("a", 0)] });
      assert.deepEqual(await f.jobNames(), [f.job("a", 0)]);
      assert.equal((await f.record("b"))[0]?.reason, "ConcurrencyGroupFull");
    });

    it("oldest first across the group: a younger slot waits behind an older one of another CronJob, also after a restart", async () => {
      const f = await fleet();
      await f.group("backups", 1);
      await f.cronJobs({
        a: { concurrencyGroup: "backups" },
        b: { concurrencyGroup: "backups" },
        c: { concurrencyGroup: "backups", schedule: "30 * * * *" },
      });
      const h1 = f.h1;
      await f.pass("a", 1000);
      await f.pass("b", 2000);
      await f.pass("c", 30 * MIN + 1000);
      assert.equal((await f.record("c"))[0]?.reason, "ConcurrencyGroupFull");
      await f.finish(f.job("a", 0), "Complete", 1000, 40 * MIN);
      // A new leader, nothing remembered: c's pass comes first, but b's stored hold is older.
      f.restart();
      await f.pass("c", 40 * MIN + 1000);
      assert.deepEqual(await f.record("c"), [
        held(
          h1 + 30 * MIN,
          "ConcurrencyGroupQueue",
          "held: group backups is at 0/1 and older runs of b wait for the next place first",
        ),
      ]);
      await f.pass("b", 40 * MIN + 2000);
      assert.deepEqual((await f.record("b"))[0], created(h1, f.job("b", 0)));
      await f.finish(f.job("b", 0), "Complete", 40 * MIN + 2000, 45 * MIN);
      await f.pass("c", 45 * MIN + 1000);
      assert.deepEqual((await f.record("c"))[0], created(h1 + 30 * MIN, f.job("c", 30 * MIN)));
      assert.deepEqual(await f.jobNames(), [f.job("a", 0), f.job("b", 0), f.job("c", 30 * MIN)].sort());
    });

    it("a slot held past its startingDeadlineSeconds is recorded Missed, as with Forbid", async () => {
      const f = await fleet();
      await f.group("backups", 1);
      await f.cronJobs({
        a: { concurrencyGroup: "backups" },
        b: { concurrencyGroup: "backups", startingDeadlineSeconds: 600 },
      });
      await f.pass("a", 1000);
      await f.pass("b", 2000);
      await f.pass("b", 11 * MIN);
      const [entry] = await f.record("b");
      assert.equal(entry?.decision, "Missed");
      assert.equal(entry?.reason, "StartingDeadlineExceeded");
      assert.equal(entry?.blockedBy, f.job("a", 0), "the Job it waited behind is kept");
      assert.deepEqual(await f.jobNames(), [f.job("a", 0)]);
    });

    it("a group that does not exist: the run waits, Degraded says why, no hot loop; created, the run starts", async () => {
      const f = await fleet();
      await f.cronJobs({ a: { concurrencyGroup: "nope" } });
      const result = await f.pass("a", 1000);
      assert.ok(
        (result.requeueAfterMs ?? 0) > 30 * MIN,
        `requeued for the next slot, not at once: ${JSON.stringify(result)}`,
      );
      assert.deepEqual(await f.jobNames(), []);
      const cj = await f.get("a");
      assert.deepEqual(await f.record("a"), [
        {
          ...held(
            f.h1,
            "ConcurrencyGroupNotFound",
            "held: spec.concurrencyGroup names nope, which is not a ConcurrencyGroup of this namespace; runs wait until it exists",
          ),
        },
      ]);
      const degraded = cj.status?.conditions?.find((c) => c.type === "Degraded");
      assert.equal(degraded?.status, "True");
      assert.equal(degraded?.reason, "ConcurrencyGroupNotFound");
      assert.ok(f.events().some((e) => e.startsWith("Warning ConcurrencyGroupNotFound ")));
      await f.group("nope", 1);
      await f.pass("a", 2000);
      assert.deepEqual(await f.jobNames(), [f.job("a", 0)]);
      assert.notEqual(
        (await f.get("a")).status?.conditions?.find((c) => c.type === "Degraded")?.reason,
        "ConcurrencyGroupNotFound",
      );
    });

    it("a limit lowered below what runs ends nothing; new runs wait until the group is under it", async () => {
      const f = await fleet();
      await f.group("backups", 2);
      await f.cronJobs({
        a: { concurrencyGroup: "backups" },
        b: { concurrencyGroup: "backups" },
        c: { concurrencyGroup: "backups", schedule: "30 * * * *" },
      });
      await f.pass("a", 1000);
      await f.pass("b", 2000);
      assert.equal((await f.jobNames()).length, 2);
      await f.setLimit("backups", 1);
      await f.pass("a", 3000);
      await f.pass("c", 30 * MIN + 1000);
      assert.deepEqual(await f.jobNames(), [f.job("a", 0), f.job("b", 0)], "nothing deleted, nothing new");
      assert.match(String((await f.record("c"))[0]?.message), /^held: group backups is at 2\/1: Jobs /);
      await f.finish(f.job("a", 0), "Complete", 1000, 31 * MIN);
      await f.pass("c", 31 * MIN + 1000);
      assert.equal((await f.record("c"))[0]?.reason, "ConcurrencyGroupFull", "still 1 running of 1");
      await f.finish(f.job("b", 0), "Complete", 2000, 32 * MIN);
      await f.pass("c", 32 * MIN + 1000);
      assert.equal((await f.record("c"))[0]?.decision, "Created");
    });

    it("Forbid acts first, within the CronJob; Replace's own running Job does not count against the group", async () => {
      const f = await fleet();
      await f.group("backups", 1);
      await f.cronJobs({
        forbid: { concurrencyGroup: "backups", concurrencyPolicy: "Forbid", schedule: "0 */2 * * *" },
        replace: { concurrencyGroup: "backups", concurrencyPolicy: "Replace", schedule: "30 * * * *" },
      });
      // replace runs at h1+30m (the group's one place); at h1+90m its next slot replaces it, in the same place.
      await f.pass("replace", 30 * MIN + 1000);
      assert.deepEqual(await f.jobNames(), [f.job("replace", 30 * MIN)]);
      await f.pass("replace", 90 * MIN + 1000);
      await f.pass("replace", 90 * MIN + 2000);
      assert.deepEqual(await f.jobNames(), [f.job("replace", 90 * MIN)]);
      assert.equal((await f.record("replace"))[0]?.decision, "Created");
    });

    it("a run-now request takes a place too: it waits while the group is full", async () => {
      const f = await fleet();
      await f.group("backups", 1);
      await f.cronJobs({ a: { concurrencyGroup: "backups" }, b: { concurrencyGroup: "backups", suspend: true } });
      await f.pass("a", 1000);
      const b = await f.get("b");
      await f.h.client.update(CronJobKind, {
        ...b,
        metadata: { ...b.metadata, annotations: { ...b.metadata.annotations, [RUN_NOW_ANNOTATION]: "now-1" } },
      });
      await f.h.settle("b");
      await f.pass("b", 2000);
      assert.deepEqual(await f.jobNames(), [f.job("a", 0)]);
      const [entry] = await f.record("b");
      assert.equal(entry?.trigger, "RunNow");
      assert.equal(entry?.decision, "Held");
      assert.equal(entry?.reason, "ConcurrencyGroupFull");
      await f.finish(f.job("a", 0), "Complete", 1000, 2 * MIN);
      await f.pass("b", 2 * MIN + 1000);
      assert.equal((await f.record("b"))[0]?.decision, "Created");
    });

    it("a run whose Pods never start is ended after spec.startTimeoutSeconds, and the record says why; the next Forbid slot runs", async () => {
      const f = await fleet();
      await f.cronJobs({ a: { concurrencyPolicy: "Forbid", startTimeoutSeconds: 120 } });
      await f.pass("a", 1000);
      const name = f.job("a", 0);
      await f.start(name, 2000);
      const early = await f.pass("a", 60_000);
      assert.ok(
        early.requeueAfterMs !== undefined && early.requeueAfterMs <= 62_000 + 10,
        `woken when the limit passes: ${JSON.stringify(early)}`,
      );
      let job = (await f.h.client.get<Job>(Kinds.Job, f.ns, name)) as Job & { spec?: Record<string, unknown> };
      assert.equal(job.metadata?.annotations?.[ENDED_REASON_ANNOTATION], undefined, "not before its limit");
      await f.pass("a", 123_000);
      job = (await f.h.client.get<Job>(Kinds.Job, f.ns, name)) as Job & { spec?: Record<string, unknown> };
      assert.equal(job.metadata?.annotations?.[ENDED_REASON_ANNOTATION], "StartTimeout");
      assert.equal(job.metadata?.annotations?.[ENDED_PODS_ANNOTATION], "NoPod");
      assert.equal(
        job.metadata?.annotations?.[ENDED_MESSAGE_ANNOTATION],
        "no Pod was created (a ResourceQuota, a LimitRange or an admission webhook may refuse them: kubectl describe job)",
      );
      assert.equal(job.spec?.activeDeadlineSeconds, 121, "the Job's own deadline, lowered to what has passed");
      assert.ok(f.events().some((e) => e.startsWith(`Warning StartTimeout Ended job ${name}: its Pods did not start`)));
      // The Job controller fails it (DeadlineExceeded); the record keeps the operator's reason.
      await f.finish(name, "Failed", 2000, 124_000, { reason: "DeadlineExceeded" });
      await f.pass("a", 125_000);
      const [entry] = (await f.get("a")).status?.recentRuns ?? [];
      assert.deepEqual(entry?.outcome, {
        result: "Failed",
        reason: "StartTimeout",
        message: job.metadata?.annotations?.[ENDED_MESSAGE_ANNOTATION],
        finishedAt: iso(f.h1 + 124_000),
        pods: "NoPod",
      });
      await f.pass("a", HOUR + 1000);
      assert.deepEqual(await f.jobNames(), [name, f.job("a", HOUR)], "the next slot is not held by the ended run");
    });

    it("a run past its start limit that Replace deletes in the same pass keeps why it ended: the record's outcome and the Event", async () => {
      const f = await fleet();
      await f.cronJobs({ a: { concurrencyPolicy: "Replace", startTimeoutSeconds: 120 } });
      await f.pass("a", 1000);
      const name = f.job("a", 0);
      await f.start(name, 2000);
      // The next slot's pass is the first after the limit: step 4 ends the run, step 9's Replace deletes it.
      await f.pass("a", HOUR + 1000);
      assert.deepEqual(await f.jobNames(), [f.job("a", HOUR)], "the unstarted run replaced");
      assert.ok(
        f.events().some((e) => e.startsWith(`Warning StartTimeout Ended job ${name}: its Pods did not start`)),
        f.events().join("\n"),
      );
      const entry = (await f.record("a")).find((e) => e.job === name);
      assert.deepEqual(entry?.outcome, {
        result: "Failed",
        reason: "StartTimeout",
        message:
          "no Pod was created (a ResourceQuota, a LimitRange or an admission webhook may refuse them: kubectl describe job)",
        finishedAt: iso(f.h1 + HOUR + 1000),
        pods: "NoPod",
      });
      const [newest] = await f.record("a");
      assert.deepEqual(newest?.replaced, [name], "the run that replaced it names it");
    });

    it("a Job whose Pod started is never ended by the start limit (its Pods read once, live)", async () => {
      const f = await fleet();
      await f.cronJobs({ a: { startTimeoutSeconds: 60 } });
      await f.pass("a", 1000);
      const name = f.job("a", 0);
      const job = await f.h.client.get<Job>(Kinds.Job, f.ns, name);
      await f.start(name, 1000);
      // A Pod of the Job that runs (Kubernetes 1.20's Job status has no `ready` count to say so).
      const pod = await f.h.client.create(Kinds.Pod, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: `${name}-x`, namespace: f.ns, labels: { "controller-uid": job.metadata!.uid! } },
        spec: { containers: [{ name: "c", image: "busybox" }] },
      });
      await f.h.client.updateStatus(Kinds.Pod, { ...pod, status: { phase: "Running" } });
      await f.pass("a", 5 * MIN);
      const after = await f.h.client.get<Job>(Kinds.Job, f.ns, name);
      assert.equal(after.metadata?.annotations?.[ENDED_REASON_ANNOTATION], undefined);
      await f.pass("a", 10 * MIN);
      assert.equal(
        (await f.h.client.get<Job>(Kinds.Job, f.ns, name)).metadata?.annotations?.[ENDED_REASON_ANNOTATION],
        undefined,
      );
    });

    it("what the Pods of an ended run showed is a code beside the words: ImagePull, Unschedulable", async () => {
      const f = await fleet();
      await f.cronJobs({ a: { startTimeoutSeconds: 60 }, b: { startTimeoutSeconds: 60 } });
      const cases = [
        {
          cronJob: "a",
          status: {
            phase: "Pending",
            containerStatuses: [
              {
                name: "c",
                image: "registry.example/none:1",
                imageID: "",
                ready: false,
                restartCount: 0,
                state: { waiting: { reason: "ImagePullBackOff", message: "Back-off pulling image" } },
              },
            ],
          },
          pods: "ImagePull",
          words: "container c: ImagePullBackOff (Back-off pulling image)",
        },
        {
          cronJob: "b",
          status: {
            phase: "Pending",
            conditions: [
              { type: "PodScheduled", status: "False", reason: "Unschedulable", message: "0/1 nodes are available" },
            ],
          },
          pods: "Unschedulable",
          words: "Unschedulable: 0/1 nodes are available",
        },
      ];
      for (const c of cases) {
        await f.pass(c.cronJob, 1000);
        const name = f.job(c.cronJob, 0);
        const job = await f.h.client.get<Job>(Kinds.Job, f.ns, name);
        await f.start(name, 1000);
        const p = await f.h.client.create(Kinds.Pod, {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: `${name}-x`, namespace: f.ns, labels: { "controller-uid": job.metadata!.uid! } },
          spec: { containers: [{ name: "c", image: "busybox" }] },
        });
        await f.h.client.updateStatus(Kinds.Pod, { ...p, status: c.status });
        await f.pass(c.cronJob, 2 * MIN);
        const ended = (await f.h.client.get<Job>(Kinds.Job, f.ns, name)).metadata?.annotations ?? {};
        assert.deepEqual(
          [ended[ENDED_REASON_ANNOTATION], ended[ENDED_PODS_ANNOTATION], ended[ENDED_MESSAGE_ANNOTATION]],
          ["StartTimeout", c.pods, c.words],
          c.cronJob,
        );
      }
    });

    it("parallelism 2, one Pod started and one never did: the run is not ended (the limit ends only a run no Pod of which started)", async () => {
      const f = await fleet();
      await f.cronJobs({ a: { startTimeoutSeconds: 60 } });
      await f.pass("a", 1000);
      const name = f.job("a", 0);
      const job = await f.h.client.get<Job>(Kinds.Job, f.ns, name);
      await f.start(name, 1000);
      const pod = async (suffix: string, status: Record<string, unknown>) => {
        const p = await f.h.client.create(Kinds.Pod, {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: `${name}-${suffix}`, namespace: f.ns, labels: { "controller-uid": job.metadata!.uid! } },
          spec: { containers: [{ name: "c", image: "busybox" }] },
        });
        await f.h.client.updateStatus(Kinds.Pod, { ...p, status });
      };
      // The one that never started is listed first (names sort so): a rule reading only the first Pod, or asking
      // every Pod to have started, would end the run.
      await pod("a", {
        phase: "Pending",
        containerStatuses: [
          { name: "c", state: { waiting: { reason: "ImagePullBackOff", message: "Back-off pulling image" } } },
        ],
      });
      await pod("b", { phase: "Running", containerStatuses: [{ name: "c", state: { running: {} } }] });
      await f.pass("a", 5 * MIN);
      const after = await f.h.client.get<Job>(Kinds.Job, f.ns, name);
      assert.equal(after.metadata?.annotations?.[ENDED_REASON_ANNOTATION], undefined, "a Pod of it started");
      assert.equal((after.spec as { activeDeadlineSeconds?: number }).activeDeadlineSeconds, undefined);
      assert.ok(!f.events().some((e) => e.includes("StartTimeout")));
    });

    if (driver.backend === "fake") {
      // Kubernetes 1.20 (envtest here) has no Job spec.suspend: a queued Job exists from 1.21 on.
      it("a Job suspended by another controller (Kueue) is queued: never ended by the start limit, holds Forbid and its group place", async () => {
        const f = await fleet();
        await f.group("backups", 1);
        await f.cronJobs({
          a: {
            concurrencyGroup: "backups",
            concurrencyPolicy: "Forbid",
            startTimeoutSeconds: 60,
            jobTemplate: {
              metadata: { labels: { "kueue.x-k8s.io/queue-name": "batch" } },
              spec: {
                suspend: true,
                template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] } },
              },
            },
          },
          b: { concurrencyGroup: "backups" },
        });
        await f.pass("a", 1000);
        await f.pass("a", 10 * MIN);
        await f.pass("b", 10 * MIN + 1000);
        const job = await f.h.client.get<Job>(Kinds.Job, f.ns, f.job("a", 0));
        assert.equal((job.spec as { suspend?: boolean }).suspend, true, "never unsuspended");
        assert.equal(job.metadata?.annotations?.[ENDED_REASON_ANNOTATION], undefined, "never ended: it is queued");
        assert.equal((await f.record("b"))[0]?.reason, "ConcurrencyGroupFull", "its place is held");
        await f.pass("a", HOUR + 1000);
        assert.equal((await f.record("a"))[0]?.reason, "ConcurrencyPolicyForbid", "it holds Forbid");
      });

      // Found on a real 1.33 node (test/e2e/current.test.ts): the run was ended seconds after its admission, its
      // start limit counted from its creation, the time it spent queued.
      it("a queued Job admitted long after its creation gets the whole start limit from its resume", async () => {
        const f = await fleet();
        await f.cronJobs({
          a: {
            startTimeoutSeconds: 60,
            jobTemplate: {
              spec: {
                suspend: true,
                template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] } },
              },
            },
          },
        });
        await f.pass("a", 1000);
        const name = f.job("a", 0);
        const condition = (status: "True" | "False", at: number) => ({
          type: "Suspended",
          status,
          reason: status === "True" ? "JobSuspended" : "JobResumed",
          lastTransitionTime: iso(f.h1 + at),
        });
        const setStatus = async (status: Record<string, unknown>) => {
          const job = await f.h.client.get<Job>(Kinds.Job, f.ns, name);
          await f.h.client.updateStatus(Kinds.Job, { ...job, status: status as Job["status"] });
          await f.settleAll();
        };
        // The Job controller marks it suspended; Kueue admits it 10 minutes later.
        await setStatus({ conditions: [condition("True", 2000)] });
        await f.pass("a", 10 * MIN);
        const queued = await f.h.client.get<Job>(Kinds.Job, f.ns, name);
        await f.h.client.update(Kinds.Job, { ...queued, spec: { ...queued.spec, suspend: false } as Job["spec"] });
        await f.settleAll();
        const ended = async () =>
          (await f.h.client.get<Job>(Kinds.Job, f.ns, name)).metadata?.annotations?.[ENDED_REASON_ANNOTATION];
        // Resumed, before the Job controller has said so: not ended.
        await f.pass("a", 10 * MIN + 1000);
        assert.equal(await ended(), undefined, "ended at its admission: the queued time counted");
        // The Job controller resumes it (the condition turns False, startTime is set): the limit counts from there.
        await setStatus({ conditions: [condition("False", 10 * MIN + 2000)], startTime: iso(f.h1 + 10 * MIN + 2000) });
        await f.pass("a", 10 * MIN + 50_000);
        assert.equal(await ended(), undefined, "ended within 60 s of its resume");
        await f.pass("a", 11 * MIN + 3000);
        assert.equal(await ended(), "StartTimeout", "its Pods did not start within 60 s of its resume");
      });

      // spec.managedBy is GA in Kubernetes 1.35 (1.20 drops the field).
      it("a Job another controller manages (spec.managedBy: MultiKueue) is not ended by the start limit: its Pods run elsewhere", async () => {
        const f = await fleet();
        await f.cronJobs({
          a: {
            startTimeoutSeconds: 60,
            jobTemplate: {
              spec: {
                managedBy: "kueue.x-k8s.io/multikueue",
                template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] } },
              },
            },
          },
        });
        await f.pass("a", 1000);
        await f.start(f.job("a", 0), 1000);
        await f.pass("a", 10 * MIN);
        const job = await f.h.client.get<Job>(Kinds.Job, f.ns, f.job("a", 0));
        assert.equal(job.metadata?.annotations?.[ENDED_REASON_ANNOTATION], undefined);
        // Its outcome is its conditions' (mirrored from the worker cluster): the record reads them.
        await f.finish(f.job("a", 0), "Complete", 1000, 20 * MIN);
        await f.pass("a", 21 * MIN);
        assert.equal(
          ((await f.get("a")).status?.recentRuns?.[0] as { outcome?: { result?: string } }).outcome?.result,
          "Complete",
        );
      });
    }
  });
}
