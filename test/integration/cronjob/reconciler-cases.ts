// The behaviour table of the CronJob reconciler: every numbered rule, driven with a fake clock. One table,
// two drivers: reconciler.test.ts runs it against envtest's apiserver (integration), and
// test/unit/cronjob-reconciler-table.test.ts against the in-memory FakeClient (unit, seconds). What only
// a real apiserver proves (the schema, real conflicts, dry-run, the cache lagging behind writes,
// restarts) stays in the other integration tests, not here.
// The cases whose story is a plain sequence of passes are rows of data (rows.ts: times are offsets from the
// CronJob's first slot h1; no pass has seen the CronJob, the clock at h1 - 30m); those that look at a Job's
// make-up, need stored objects the rows cannot make, faults, a lagging cache, bursts, several CronJobs, or time
// counted from the creation instant are hand-written beside them.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { CRONJOB_NAME_LABEL, type CronJob } from "../../../api/v1/index.ts";
import { CronJobResource as CronJobKind } from "../../../api/v1/index.ts";
import { K8S_SCHEDULED_TIMESTAMP_ANNOTATION, SCHEDULED_AT_ANNOTATION, type Job } from "../../../api/v1/index.ts";
import { CronJobReconciler } from "../../../controllers/cronjob_controller.ts";
import { APIError } from "../../../runtime/errors.ts";
import type { ObjectClient } from "../../../runtime/interfaces.ts";
import { Kinds } from "../../../runtime/kinds.ts";
import { discardLogger } from "../../../runtime/log.ts";
import { batchJob } from "../../fixtures.ts";
import { condition, type ReconcileHarness, type ReconcilerDriver } from "./harness.ts";
import { HOUR, MIN, type Row, rowTable, runRows } from "./rows.ts";

const iso = (t: number) => new Date(t).toISOString().replace(/\.\d{3}Z$/, "Z");
const jobName = (cj: string, slot: number) => `${cj}-${slot / 1000}`;

const suspendRows: Row[] = [
  {
    title: "suspend: no Jobs, no nextScheduleTime, Available=False/Suspended, no event; unsuspend runs the latest slot",
    spec: { suspend: true },
    steps: [
      { at: 2 * HOUR + 1000, reconcile: "pass", requeue: "none" },
      {
        expect: {
          jobCount: 0,
          status: { nextScheduleTime: null },
          conditions: { Available: "Suspended" },
          events: { are: [] },
        },
      },
      { patch: { suspend: false } },
      "pass",
      { expect: { jobNames: [2 * HOUR] } },
    ],
  },
];

const concurrencyRows: Row[] = [
  {
    title: "Forbid: reports JobAlreadyActive once per slot, keeps the slot due, runs it when the active Job finishes",
    spec: { concurrencyPolicy: "Forbid" },
    steps: [
      { at: 1000, reconcile: "pass" },
      "forget events",
      { at: HOUR + 1000, reconcile: "pass" },
      "pass",
      { expect: { jobCount: 1, events: { startingWith: "Normal JobAlreadyActive", count: 1 } } },
      { finish: 0, as: "Complete", start: 1000, end: HOUR + 5000 },
      { at: HOUR + 10_000, reconcile: "pass" },
      { expect: { jobNames: [0, HOUR] } },
    ],
  },
  {
    title: "Replace: deletes the active Job and creates the new one",
    spec: { concurrencyPolicy: "Replace" },
    steps: [
      { at: 1000, reconcile: "pass" },
      "forget events",
      { at: HOUR + 1000, reconcile: "pass" },
      {
        expect: {
          jobNames: [HOUR],
          events: {
            are: [
              (c) => `Normal SuccessfulDelete Deleted job ${c.job(0)}`,
              (c) => `Normal SuccessfulCreate Created job ${c.job(HOUR)}`,
            ],
          },
          status: { active: [HOUR] },
        },
      },
    ],
  },
  {
    title: "Allow: runs concurrently",
    steps: [
      { at: 1000, reconcile: "pass" },
      { at: HOUR + 1000, reconcile: "pass" },
      { expect: { status: { active: 2 } } },
    ],
  },
  {
    title: "skips a slot past startingDeadlineSeconds, reports MissSchedule once and sets lastMissedTime",
    spec: { startingDeadlineSeconds: 60 },
    steps: [
      { at: 5 * MIN, reconcile: "pass" },
      "pass",
      {
        expect: {
          jobCount: 0,
          status: { lastMissedTime: 0 },
          events: { count: 1, firstHas: [/^Warning MissSchedule Missed scheduled time to start a job: /] },
        },
      },
      // Within the deadline the next slot runs.
      { at: HOUR + 30_000, reconcile: "pass" },
      { expect: { jobNames: [HOUR] } },
    ],
  },
];

const requeueRows: Row[] = [
  {
    title: "never requeues with a non-positive delay",
    // Just before the next slot: the delay is still > 0.
    steps: [{ at: HOUR - 1, reconcile: "pass", requeue: { atLeastMs: 10 } }],
  },
];

export function reconcilerCases(driver: ReconcilerDriver): void {
  describe(`CronJob reconciler (fake clock, ${driver.name})`, () => {
    const table = rowTable(driver, { namespace: "reconcile", prefix: "cj", firstPass: false });
    let h: ReconcileHarness<ObjectClient>;
    before(() => {
      h = table.h;
    });
    /** A fresh CronJob; returns its name and the first hourly slot after its creation. */
    async function fresh(spec: Parameters<ReconcileHarness["createCronJob"]>[1] = {}) {
      const c = await table.fresh(spec);
      const created = new Date(c.created.metadata.creationTimestamp!).getTime();
      return { name: c.name, created, h1: c.h1, cj: c.created };
    }

    it("does nothing before the first slot and requeues for it", async () => {
      const { name, h1, created } = await fresh();
      h.clock.set(new Date(created + 1000));
      const r = await h.reconcile(name);
      assert.equal((await h.jobs(name)).length, 0);
      assert.equal(r.requeueAfterMs, h1 - Math.floor((created + 1000) / 1000) * 1000 + 10);
      const cj = await h.get(name);
      assert.equal(cj.status?.nextScheduleTime, iso(h1));
      assert.equal(condition(cj, "Available")?.reason, "Scheduled");
      assert.equal(condition(cj, "Progressing")?.status, "False");
      assert.equal(condition(cj, "Degraded")?.reason, "AsExpected");
    });

    it("creates the Job for a due slot with the template, annotations and owner, then never twice", async () => {
      const { name, h1, cj } = await fresh({ timeZone: "America/New_York" });
      h.clock.set(new Date(h1 + 5000));
      const r = await h.reconcile(name);
      const jobs = await h.jobs(name);
      assert.equal(jobs.length, 1);
      const job = jobs[0]!;
      assert.equal(job.metadata!.name, jobName(name, h1));
      assert.deepEqual(job.metadata!.labels, { app: name, [CRONJOB_NAME_LABEL]: name });
      assert.equal(job.metadata!.annotations!["example.com/team"], "data");
      // `kubectl get jobs -l batch.tutorial.kubebuilder.io/cronjob-name=NAME` finds it, and only its CronJob's.
      const selected = await h.client.list<Job>(Kinds.Job, {
        namespace: h.namespace,
        labelSelector: `${CRONJOB_NAME_LABEL}=${name}`,
      });
      assert.deepEqual(
        selected.items.map((j) => j.metadata!.name),
        [job.metadata!.name],
      );
      assert.equal(job.metadata!.annotations![SCHEDULED_AT_ANNOTATION], iso(h1));
      assert.match(
        job.metadata!.annotations![K8S_SCHEDULED_TIMESTAMP_ANNOTATION]!,
        /^\d{4}-\d\d-\d\dT\d\d:00:00-0[45]:00$/,
      );
      assert.deepEqual(job.metadata!.ownerReferences, [
        {
          apiVersion: "batch.tutorial.kubebuilder.io/v1",
          kind: "CronJob",
          name,
          uid: cj.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      assert.equal(
        (job.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]!.image,
        "busybox",
      );
      assert.deepEqual(h.takeEvents(), [`Normal SuccessfulCreate Created job ${job.metadata!.name}`]);

      const st = (await h.get(name)).status!;
      assert.equal(st.lastScheduleTime, iso(h1));
      assert.equal(st.nextScheduleTime, iso(h1 + HOUR));
      assert.deepEqual(
        st.active!.map((a) => a.name),
        [job.metadata!.name],
      );
      assert.equal(st.activeCount, 1);
      assert.equal(r.requeueAfterMs, HOUR - 5000 + 10);
      const got = await h.get(name);
      assert.equal(condition(got, "Available")?.reason, "JobsActive");
      assert.equal(condition(got, "Progressing")?.status, "True");
      assert.equal(got.status?.observedGeneration, got.metadata.generation);

      // Idempotent: same time, same state → no Job, no status write.
      const rv = got.metadata.resourceVersion;
      await h.reconcile(name);
      h.clock.advance(30 * MIN);
      await h.reconcile(name);
      assert.equal((await h.jobs(name)).length, 1);
      assert.equal((await h.get(name)).metadata.resourceVersion, rv);
      assert.deepEqual(h.takeEvents(), []);
    });

    it("after a crash between create and status write, adopts its own Job instead of creating another", async () => {
      const { name, h1, cj } = await fresh();
      await h.createJob(batchJob({ name: jobName(name, h1), owner: { name, uid: cj.metadata.uid! }, slot: h1 }));
      await h.settle(name);
      h.clock.set(new Date(h1 + 2000));
      await h.reconcile(name);
      assert.equal((await h.jobs(name)).length, 1);
      const st = (await h.get(name)).status!;
      assert.equal(st.lastScheduleTime, iso(h1));
      assert.deepEqual(
        st.active!.map((a) => a.name),
        [jobName(name, h1)],
      );
      assert.deepEqual(h.takeEvents(), [], "no UnexpectedJob for our own Job");
    });

    it("reports a foreign Job holding the slot's name, without throwing or looping", async () => {
      const { name, h1 } = await fresh();
      await h.createJob(batchJob({ name: jobName(name, h1) })); // no owner
      h.clock.set(new Date(h1 + 1000));
      const r = await h.reconcile(name);
      assert.ok(r.requeueAfterMs! > 0);
      const ev = h.takeEvents();
      assert.equal(ev.length, 1);
      assert.match(
        ev[0]!,
        /^Warning FailedCreate Error creating job .* already exists and is not controlled by this CronJob/,
      );
      const got = await h.get(name);
      assert.equal(condition(got, "Degraded")?.reason, "JobCreationFailed");
      assert.equal(condition(got, "Degraded")?.status, "True");
      assert.equal(got.status?.lastScheduleTime, undefined, "the slot did not run");
    });

    it("classifies finished Jobs, reports SawCompletedJob, records lastSuccessfulTime, and clears Degraded", async () => {
      const { name, h1 } = await fresh();
      h.clock.set(new Date(h1 + 1000));
      await h.reconcile(name);
      h.takeEvents();
      await h.finishJob(jobName(name, h1), "Failed", iso(h1 + 1000), iso(h1 + 60_000));
      await h.settle(name);
      h.clock.set(new Date(h1 + 2 * MIN));
      await h.reconcile(name);
      let got = await h.get(name);
      assert.deepEqual(got.status?.active, []);
      assert.equal(condition(got, "Degraded")?.reason, "LastJobFailed");
      assert.equal(condition(got, "Progressing")?.reason, "NoJobsActive");
      assert.deepEqual(h.takeEvents(), [
        `Normal SawCompletedJob Saw completed job: ${jobName(name, h1)}, condition: Failed`,
      ]);
      const degradedSince = condition(got, "Degraded")!.lastTransitionTime;

      h.clock.set(new Date(h1 + HOUR + 1000));
      await h.reconcile(name);
      await h.finishJob(jobName(name, h1 + HOUR), "Complete", iso(h1 + HOUR + 1000), iso(h1 + HOUR + 30_000));
      await h.settle(name);
      h.clock.set(new Date(h1 + HOUR + 2 * MIN));
      await h.reconcile(name);
      got = await h.get(name);
      assert.equal(got.status?.lastSuccessfulTime, iso(h1 + HOUR + 30_000));
      assert.equal(condition(got, "Degraded")?.status, "False");
      assert.equal(condition(got, "Degraded")?.reason, "AsExpected");
      assert.notEqual(condition(got, "Degraded")!.lastTransitionTime, degradedSince);
    });

    it("reports SawCompletedJob once even when the cache has not caught up with the status write", async () => {
      const { name, h1 } = await fresh();
      h.clock.set(new Date(h1 + 1000));
      await h.reconcile(name);
      await h.finishJob(jobName(name, h1), "Complete", iso(h1 + 1000), iso(h1 + 30_000));
      await h.settle(name);
      // The CronJob as the cache holds it now: status still lists the finished Job as active.
      const stale = h.cache.get<CronJob>(CronJobKind, h.namespace, name)!;
      assert.equal(stale.status?.active?.length, 1);
      h.takeEvents();
      h.clock.set(new Date(h1 + 2 * MIN));
      await h.reconcile(name);
      assert.deepEqual((await h.get(name)).status?.active, []);
      // A lagging cache hands the next reconcile the old object again.
      const cacheGet = h.cache.get.bind(h.cache);
      h.cache.get = ((kind, ns, n) =>
        kind === CronJobKind && n === name ? stale : cacheGet(kind, ns, n)) as typeof h.cache.get;
      h.clock.set(new Date(h1 + 3 * MIN));
      try {
        await h.reconciler.reconcile(
          { namespace: h.namespace, name },
          { log: discardLogger, reconcileID: "lagging-cache", signal: new AbortController().signal },
        );
      } finally {
        h.cache.get = cacheGet;
      }
      await h.settle(name);
      assert.deepEqual(h.takeEvents(), [
        `Normal SawCompletedJob Saw completed job: ${jobName(name, h1)}, condition: Complete`,
      ]);
    });

    it("a status write computed from a stale read is refused (409), never merged over a newer status", async () => {
      const { name, h1 } = await fresh();
      h.clock.set(new Date(h1 + 1000));
      await h.reconcile(name);
      await h.settle(name);
      const stale = h.cache.get<CronJob>(CronJobKind, h.namespace, name)!;
      // Someone else writes status meanwhile (another replica's last pass, a user's tool).
      const cur = await h.get(name);
      await h.client.updateStatus(CronJobKind, { ...cur, status: { ...cur.status, lastMissedTime: iso(h1 - HOUR) } });
      const newer = (await h.get(name)).status;
      // The next pass still reads the old object, and has a status change of its own (the next slot's run).
      const cacheGet = h.cache.get.bind(h.cache);
      h.cache.get = ((kind, ns, n) =>
        kind === CronJobKind && n === name ? stale : cacheGet(kind, ns, n)) as typeof h.cache.get;
      h.clock.set(new Date(h1 + HOUR + 1000));
      let result;
      try {
        result = await h.reconciler.reconcile(
          { namespace: h.namespace, name },
          { log: discardLogger, reconcileID: "stale-read", signal: new AbortController().signal },
        );
      } finally {
        h.cache.get = cacheGet;
      }
      assert.equal(result.requeue, true, "the conflict asks for a retry with the newer object");
      assert.deepEqual((await h.get(name)).status, newer, "the stored status is the other writer's, untouched");
      // The retry, from the current object, records the run and keeps the other writer's field.
      await h.settle(name);
      await h.reconcile(name);
      const got = (await h.get(name)).status!;
      assert.equal(got.lastScheduleTime, iso(h1 + HOUR));
      assert.equal(got.lastMissedTime, iso(h1 - HOUR));
    });

    it("drops an active reference whose Job is gone (MissingJob) and adopts an unexpected child once (UnexpectedJob)", async () => {
      const { name, h1, cj } = await fresh();
      h.clock.set(new Date(h1 + 1000));
      await h.reconcile(name);
      await h.client.delete(Kinds.Job, h.namespace, jobName(name, h1), { propagationPolicy: "Background" });
      await h.createJob(batchJob({ name: `${name}-manual`, owner: { name, uid: cj.metadata.uid! } }));
      await h.settle(name);
      h.takeEvents();
      h.clock.set(new Date(h1 + 2000));
      await h.reconcile(name);
      assert.deepEqual(h.takeEvents().sort(), [
        `Normal MissingJob Active job went missing: ${jobName(name, h1)}`,
        `Warning UnexpectedJob Saw a job that the controller did not create or forgot: ${name}-manual`,
      ]);
      assert.deepEqual(
        (await h.get(name)).status?.active?.map((a) => a.name),
        [`${name}-manual`],
      );
      await h.reconcile(name);
      assert.deepEqual(h.takeEvents(), [], "reported once");
    });

    it("keeps lastScheduleTime across history cleanup (no re-run) and rebuilds it when status is lost", async () => {
      const { name, h1 } = await fresh({ successfulJobsHistoryLimit: 0 });
      h.clock.set(new Date(h1 + 1000));
      await h.reconcile(name);
      await h.finishJob(jobName(name, h1), "Complete", iso(h1 + 1000), iso(h1 + 10_000));
      await h.settle(name);
      h.clock.set(new Date(h1 + 20 * MIN));
      await h.reconcile(name);
      assert.equal((await h.jobs(name)).length, 0, "cleanup deleted the successful Job (limit 0)");
      let got = await h.get(name);
      assert.equal(got.status?.lastScheduleTime, iso(h1));
      assert.equal(got.status?.lastSuccessfulTime, iso(h1 + 10_000), "lastSuccessfulTime also with limit 0");
      h.clock.set(new Date(h1 + 40 * MIN));
      await h.reconcile(name);
      assert.equal((await h.jobs(name)).length, 0, "the old slot is not run again");

      // Status lost (e.g. restored from a backup without status): rebuilt from the children.
      h.clock.set(new Date(h1 + HOUR + 1000));
      await h.reconcile(name);
      got = await h.get(name);
      await h.client.updateStatus(CronJobKind, { ...got, status: {} } as CronJob);
      await h.settle(name);
      h.clock.set(new Date(h1 + HOUR + 5 * MIN));
      await h.reconcile(name);
      got = await h.get(name);
      assert.equal(got.status?.lastScheduleTime, iso(h1 + HOUR));
      assert.equal((await h.jobs(name)).length, 1, "no duplicate after status loss");
    });

    it("during a burst of creates a pass only creates; cleanup and status follow after it, also after a crash", async () => {
      const { name, h1 } = await fresh({ successfulJobsHistoryLimit: 0 });
      h.clock.set(new Date(h1 + 1000));
      await h.reconcile(name);
      // It ends 6 s before the next slot, unrecorded yet: a burst may hold that for up to 30 s (a run that
      // ended longer ago is written at once: "…a run that ended leaves status.active within 30 s").
      await h.finishJob(jobName(name, h1), "Complete", iso(h1 + 1000), iso(h1 + HOUR - 5000));
      await h.settle(name);
      const before = (await h.get(name)).status;
      h.takeEvents();
      // The next slot, while other CronJobs' creates keep the burst on (the manager's BurstWindow).
      h.clock.set(new Date(h1 + HOUR + 1000));
      const noted: string[] = [];
      const result = await h.reconciler.reconcile(
        { namespace: h.namespace, name },
        {
          log: discardLogger,
          reconcileID: "burst",
          signal: new AbortController().signal,
          burst: { active: () => true, note: () => void noted.push("create") },
        },
      );
      await h.settle(name);
      assert.deepEqual(noted, ["create"], "the create is noted as urgent");
      assert.equal(result.requeueWhenQuiet, true, "a pass after the burst owes the rest");
      assert.ok((result.requeueAfterMs ?? 0) > 0, "and the next slot's wake-up stays");
      assert.deepEqual(
        (await h.jobs(name)).map((j) => j.metadata!.name),
        [jobName(name, h1), jobName(name, h1 + HOUR)],
        "the new Job is created; the finished one is not deleted yet (limit 0)",
      );
      assert.deepEqual((await h.get(name)).status, before, "no status write during the burst");
      // The process dies here; the next process's first pass (no burst) does what was held back, once.
      const reconcileAfterRestart = async (n: string) => {
        const other = new CronJobReconciler({ client: h.client, cache: h.cache, recorder: h.recorder, clock: h.clock });
        await other.reconcile(
          { namespace: h.namespace, name: n },
          { log: discardLogger, reconcileID: "restarted", signal: new AbortController().signal },
        );
        await h.settle(n);
      };
      await reconcileAfterRestart(name);
      const got = (await h.get(name)).status!;
      assert.equal(got.lastScheduleTime, iso(h1 + HOUR));
      assert.deepEqual(
        got.active?.map((r) => r.name),
        [jobName(name, h1 + HOUR)],
      );
      assert.deepEqual(
        (await h.jobs(name)).map((j) => j.metadata!.name),
        [jobName(name, h1 + HOUR)],
        "history cleaned up after the burst",
      );
      const events = h.takeEvents();
      assert.equal(events.filter((e) => e.includes("SuccessfulCreate")).length, 1);
      assert.equal(events.filter((e) => e.includes("SuccessfulDelete")).length, 1);
      await reconcileAfterRestart(name);
      assert.equal((await h.jobs(name)).length, 1, "no slot runs twice");
    });

    /** A pass at `at` under load that never lets up: the burst stays on and other CronJobs always wait. */
    async function reconcileOverloaded(name: string, at: number) {
      h.clock.set(new Date(at));
      const result = await h.reconciler.reconcile(
        { namespace: h.namespace, name },
        {
          log: discardLogger,
          reconcileID: `overloaded-${at}`,
          signal: new AbortController().signal,
          burst: { active: () => true, note: () => {} },
          queueLength: () => 5,
        },
      );
      await h.settle(name);
      return result;
    }

    it("under a burst that never ends the books fall one run behind at most; each slot runs once", async () => {
      // More every-minute CronJobs than the apiserver can take: every pass has a slot to create, other
      // CronJobs always wait and the burst never ends. Cleanup and the status write may wait one pass, not more.
      const { name, h1 } = await fresh({ successfulJobsHistoryLimit: 1 });
      const slots = 6;
      for (let k = 0; k < slots; k++) {
        const slot = h1 + k * HOUR;
        await reconcileOverloaded(name, slot + 1000);
        await h.finishJob(jobName(name, slot), "Complete", iso(slot + 1000), iso(slot + 10_000));
        await h.settle(name);
        const status = (await h.get(name)).status;
        if (k > 0) {
          assert.ok(
            Date.parse(status?.lastScheduleTime ?? "") >= slot - HOUR,
            `after slot ${k}: status.lastScheduleTime ${status?.lastScheduleTime} is more than one run behind`,
          );
        }
        const kept = (await h.jobs(name)).map((j) => j.metadata!.name);
        assert.ok(
          kept.length <= 3,
          `after slot ${k}: ${kept.length} Jobs kept with a history limit of 1: ${kept.join(", ")}`,
        );
        assert.ok(kept.includes(jobName(name, slot)), `after slot ${k}: its Job was created`);
      }
      const events = h.takeEvents();
      assert.equal(events.filter((e) => e.includes("SuccessfulCreate")).length, slots, "each slot once");
      assert.ok(
        events.some((e) => e.includes("SuccessfulDelete")),
        "history cleanup ran",
      );
    });

    it("under a burst that never ends a run that ended leaves status.active within 30 s", async () => {
      // A CronJob with no slot due has no create of its own: its completion may wait for a burst, not forever.
      const { name, h1 } = await fresh();
      h.clock.set(new Date(h1 + 1000));
      await h.reconcile(name);
      assert.deepEqual(
        (await h.get(name)).status?.active?.map((r) => r.name),
        [jobName(name, h1)],
      );
      await h.finishJob(jobName(name, h1), "Complete", iso(h1 + 1000), iso(h1 + 10_000));
      await h.settle(name);
      const early = await reconcileOverloaded(name, h1 + 20_000);
      assert.equal(early.requeueWhenQuiet, true, "10 s after it ended the write may wait for the burst");
      assert.deepEqual(
        (await h.get(name)).status?.active?.map((r) => r.name),
        [jobName(name, h1)],
      );
      await reconcileOverloaded(name, h1 + 41_000);
      const status = (await h.get(name)).status;
      assert.deepEqual(status?.active ?? [], [], "31 s after it ended the run is written as finished");
      assert.equal(status?.lastSuccessfulTime, iso(h1 + 10_000));
    });

    it("cleans up history by start time (ties by name) with default limits 3 and 1", async () => {
      const { name, cj } = await fresh();
      const owner = { name, uid: cj.metadata.uid! };
      const base = new Date(cj.metadata.creationTimestamp!).getTime() - 10 * HOUR;
      const mk = async (suffix: string, state: "complete" | "failed", start: number) => {
        await h.createJob(batchJob({ name: `${name}-${suffix}`, owner, state, start, end: base + HOUR }));
      };
      await mk("s1", "complete", base + 1 * MIN);
      await mk("s2", "complete", base + 2 * MIN);
      await mk("s3b", "complete", base + 3 * MIN);
      await mk("s3a", "complete", base + 3 * MIN);
      await mk("s4", "complete", base + 4 * MIN);
      await mk("f1", "failed", base + 1 * MIN);
      await mk("f2", "failed", base + 2 * MIN);
      await h.settle(name);
      h.clock.set(new Date(new Date(cj.metadata.creationTimestamp!).getTime() + 1000));
      await h.reconcile(name);
      assert.deepEqual(
        (await h.jobs(name)).map((j) => j.metadata!.name).sort(),
        [`${name}-f2`, `${name}-s3a`, `${name}-s3b`, `${name}-s4`].sort(),
      );
      assert.deepEqual(
        h
          .takeEvents()
          .filter((e) => e.includes("SuccessfulDelete"))
          .sort(),
        [
          `Normal SuccessfulDelete Deleted job ${name}-f1`,
          `Normal SuccessfulDelete Deleted job ${name}-s1`,
          `Normal SuccessfulDelete Deleted job ${name}-s2`,
        ],
      );
    });

    // A finished Job without startTime (s0): cannot exist on 1.31+, tested on the fake only. A 1.31+ apiserver
    // refuses that status, so the fake holds it as an older cluster left it: seeded into its store.
    const fakeOnly = driver.backend === "fake" ? it : undefined;
    fakeOnly?.(
      "cleans up history by start time (missing start = newest, ties by name) with default limits 3 and 1",
      async () => {
        const fake = h.fake;
        assert.ok(fake, "the fake driver's harness holds its FakeClient");
        const { name, cj } = await fresh();
        const owner = { name, uid: cj.metadata.uid! };
        const base = new Date(cj.metadata.creationTimestamp!).getTime() - 10 * HOUR;
        const mk = async (suffix: string, state: "complete" | "failed", start: number | undefined) => {
          const job = batchJob({
            name: `${name}-${suffix}`,
            namespace: h.namespace,
            owner,
            state,
            start,
            end: base + HOUR,
          });
          if (start === undefined) fake.seed(Kinds.Job, job);
          else await h.createJob(job);
        };
        await mk("s1", "complete", base + 1 * MIN);
        await mk("s2", "complete", base + 2 * MIN);
        await mk("s3b", "complete", base + 3 * MIN);
        await mk("s3a", "complete", base + 3 * MIN);
        await mk("s0", "complete", undefined); // never started: no startTime
        await mk("f1", "failed", base + 1 * MIN);
        await mk("f2", "failed", base + 2 * MIN);
        await h.settle(name);
        h.clock.set(new Date(new Date(cj.metadata.creationTimestamp!).getTime() + 1000));
        await h.reconcile(name);
        assert.deepEqual(
          (await h.jobs(name)).map((j) => j.metadata!.name).sort(),
          [`${name}-f2`, `${name}-s0`, `${name}-s3a`, `${name}-s3b`].sort(),
        );
        assert.deepEqual(
          h
            .takeEvents()
            .filter((e) => e.includes("SuccessfulDelete"))
            .sort(),
          [
            `Normal SuccessfulDelete Deleted job ${name}-f1`,
            `Normal SuccessfulDelete Deleted job ${name}-s1`,
            `Normal SuccessfulDelete Deleted job ${name}-s2`,
          ],
        );
      },
    );

    it("cleans history even when every create fails, then reports FailedCreate and retries (throws)", async () => {
      // backoffLimit -1 passes the CRD schema but not the Job API: creates fail (webhooks off).
      const { name, h1, cj } = await fresh({
        failedJobsHistoryLimit: 0,
        jobTemplate: {
          spec: {
            backoffLimit: -1,
            template: { spec: { restartPolicy: "OnFailure", containers: [{ name: "c", image: "busybox" }] } },
          },
        },
      });
      // The Job API's validation refuses it; the fake validates nothing, so it is told to refuse the same.
      const refused = jobName(name, h1);
      h.fake?.injectError(
        { verb: "create", kind: Kinds.Job, name: refused },
        () =>
          new APIError(
            422,
            "Invalid",
            `Job.batch "${refused}" is invalid: spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0`,
          ),
      );
      await h.createJob(
        batchJob({
          name: `${name}-old`,
          owner: { name, uid: cj.metadata.uid! },
          state: "failed",
          start: h1 - HOUR,
          end: h1 - HOUR + 1000,
        }),
      );
      await h.settle(name);
      h.clock.set(new Date(h1 + 1000));
      await assert.rejects(h.reconcile(name), /creating Job/);
      await h.settle(name);
      assert.deepEqual(await h.jobs(name), [], "history cleaned although the create failed");
      const ev = h.takeEvents();
      assert.ok(ev.includes(`Normal SuccessfulDelete Deleted job ${name}-old`), ev.join("\n"));
      assert.ok(
        ev.some((e) => e.startsWith(`Warning FailedCreate Error creating job ${jobName(name, h1)}`)),
        ev.join("\n"),
      );
      const got = await h.get(name);
      assert.equal(condition(got, "Degraded")?.reason, "JobCreationFailed");
    });

    runRows(table, suspendRows);

    it("webhooks off: an invalid time zone or schedule sets conditions and an event, and does not requeue; fixing it clears them", async () => {
      const tz = await fresh({ timeZone: "Mars/Olympus" });
      h.clock.set(new Date(tz.h1 + 1000));
      assert.deepEqual(await h.reconcile(tz.name), {});
      let got = await h.get(tz.name);
      assert.equal(condition(got, "Available")?.reason, "UnknownTimeZone");
      assert.equal(condition(got, "Degraded")?.reason, "UnknownTimeZone");
      assert.equal(got.status?.nextScheduleTime, undefined);
      assert.match(h.takeEvents().join("\n"), /^Warning UnknownTimeZone .*Mars\/Olympus/);

      const bad = await fresh({ schedule: "61 * * * *" });
      h.clock.set(new Date(bad.h1 + 1000));
      assert.deepEqual(await h.reconcile(bad.name), {});
      got = await h.get(bad.name);
      assert.equal(condition(got, "Available")?.reason, "InvalidSchedule");
      assert.equal(condition(got, "Degraded")?.status, "True");
      assert.match(
        h.takeEvents().join("\n"),
        /^Warning UnparseableSchedule spec\.schedule: Invalid value: "61 \* \* \* \*"/,
      );
      assert.equal((await h.jobs(bad.name)).length, 0);

      got.spec.schedule = "0 * * * *";
      await h.client.update(CronJobKind, got);
      await h.settle(bad.name);
      const r = await h.reconcile(bad.name);
      assert.ok(r.requeueAfterMs! > 0);
      got = await h.get(bad.name);
      assert.equal(condition(got, "Degraded")?.reason, "AsExpected");
      assert.equal(condition(got, "Available")?.status, "True");
    });

    it("being deleted: no scheduling, nextScheduleTime empty", async () => {
      const { name, h1 } = await fresh();
      const got = await h.get(name);
      got.metadata.finalizers = ["example.com/hold"];
      await h.client.update(CronJobKind, got);
      await h.client.delete(CronJobKind, h.namespace, name);
      await h.settle(name);
      h.clock.set(new Date(h1 + 1000));
      assert.deepEqual(await h.reconcile(name), {});
      const after = await h.get(name);
      assert.equal((await h.jobs(name)).length, 0);
      assert.equal(after.status?.nextScheduleTime, undefined);
      assert.equal(condition(after, "Available")?.reason, "Deleting");
      after.metadata.finalizers = [];
      await h.client.update(CronJobKind, after);
    });

    runRows(table, concurrencyRows);

    it("more than 100 missed slots: TooManyMissedTimes, and the newest still runs", async () => {
      const { name, created } = await fresh({ schedule: "* * * * *" });
      const now = Math.floor(created / MIN) * MIN + 3 * HOUR + 7000;
      h.clock.set(new Date(now));
      await h.reconcile(name);
      const slot = Math.floor(now / MIN) * MIN;
      assert.deepEqual(
        (await h.jobs(name)).map((j) => j.metadata!.name),
        [jobName(name, slot)],
      );
      const ev = h.takeEvents();
      assert.ok(
        ev.some((e) => e.startsWith("Warning TooManyMissedTimes")),
        ev.join("\n"),
      );
    });

    runRows(table, requeueRows);
  });
}
