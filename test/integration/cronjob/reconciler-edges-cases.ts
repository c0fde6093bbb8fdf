// The reconciler at its edges, each found by independent tests or by seeded bugs: deadline boundaries,
// exact requeue delays, Replace under API failures, Jobs the cache has not seen, a terminating
// namespace, out-of-order completions, a foreign Job taking a remembered name, huge user values.
// Fake clock; faults are injected into the client, never into the server. One table, two drivers:
// reconciler-edges.test.ts runs it against envtest, test/unit/cronjob-reconciler-table.test.ts against the
// in-memory FakeClient.
// The cases whose story is a plain sequence of passes are rows of data (rows.ts: times are offsets from the
// CronJob's first slot h1; no pass has seen the CronJob, the clock at h1 - 30m); those that need faults, a
// lagging cache, odd stored objects or their own namespace are hand-written beside them.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type { CronJob } from "../../../api/v1/index.ts";
import { MAX_CONDITION_MESSAGE } from "../../../controllers/conditions.ts";
import { CronJobReconciler } from "../../../controllers/cronjob_controller.ts";
import { MAX_EVENT_MESSAGE } from "../../../controllers/events.ts";
import { CronJobResource as CronJobKind, type Job } from "../../../api/v1/index.ts";
import type { CacheReader, ObjectClient } from "../../../runtime/interfaces.ts";
import type { Result } from "../../../runtime/controller.ts";
import { APIError } from "../../../runtime/errors.ts";
import { Kinds, type ResourceKind } from "../../../runtime/kinds.ts";
import { discardLogger } from "../../../runtime/log.ts";
import { batchJob, variant } from "../../fixtures.ts";
import { condition, type ReconcileHarness, type ReconcilerDriver } from "./harness.ts";
import { HOUR, MIN, type Row, rowTable, runRows } from "./rows.ts";

const iso = (t: number) => new Date(t).toISOString().replace(/\.\d{3}Z$/, "Z");
const nextHour = (t: number) => Math.floor(t / HOUR) * HOUR + HOUR;
const jobName = (cj: string, slot: number) => `${cj}-${slot / 1000}`;

/** The client with some calls failing, as an API server in trouble would answer them. */
function faultyClient<C extends ObjectClient>(client: C, fail: { deletes: number; error: () => Error }): C {
  return new Proxy(client, {
    get(target, prop, receiver) {
      if (prop === "delete" && fail.deletes > 0) {
        return async () => {
          fail.deletes--;
          throw fail.error();
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** The cache with some Jobs not yet seen, and optionally a CronJob rewritten on the way out. */
function laggingCache(
  cache: CacheReader,
  o: { hiddenJobs?: Set<string>; rewrite?: (cj: CronJob) => CronJob },
): CacheReader {
  const visible = (j: Job) => !o.hiddenJobs?.has(j.metadata?.name ?? "");
  return new Proxy(cache, {
    get(target, prop, receiver) {
      if (prop === "byIndex") {
        return (kind: ResourceKind, index: string, value: string) =>
          target.byIndex<Job>(kind, index, value).filter(visible);
      }
      if (prop === "get" && o.rewrite) {
        return (kind: ResourceKind, ns: string | undefined, name: string) => {
          const got = target.get<CronJob>(kind, ns, name);
          return got && kind === CronJobKind ? o.rewrite!(structuredClone(got) as CronJob) : got;
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

const deadlineRows: Row[] = (
  [
    [29_000, true],
    [30_000, true],
    [30_500, false],
    [31_000, false],
  ] as const
).map(([late, runs]): Row => ({
  title: `a slot ${late / 1000}s late with a 30s deadline ${runs ? "runs" : "is missed and reported"}`,
  spec: { startingDeadlineSeconds: 30 },
  steps: [
    { at: late, reconcile: "pass" },
    runs
      ? {
          expect: {
            jobNames: [0],
            status: { lastScheduleTime: 0, lastMissedTime: null },
            events: { are: [(c) => `Normal SuccessfulCreate Created job ${c.job(0)}`] },
          },
        }
      : {
          expect: {
            jobNames: [],
            status: { lastMissedTime: 0 },
            events: {
              count: 1,
              firstHas: [
                (c) => new RegExp(`^Warning MissSchedule Missed scheduled time to start a job: ${c.time(0)} `),
              ],
            },
          },
        },
  ],
}));

const requeueRows: Row[] = [
  {
    title: "requeues for the next slot from the exact clock, milliseconds included",
    steps: [
      // 1.25 s before the slot.
      { at: -1500 + 250, reconcile: "pass", requeue: 0 },
      { at: 5250, reconcile: "pass", requeue: HOUR },
      { expect: { jobCount: 1 } },
    ],
  },
];

const outOfOrderRows: Row[] = [
  {
    title: "lastSuccessfulTime never moves backward when Jobs finish out of order",
    steps: [
      { at: 1000, reconcile: "pass" },
      { at: HOUR + 1000, reconcile: "pass" },
      { finish: HOUR, as: "Complete", start: HOUR + 1000, end: HOUR + 600_000 },
      { at: HOUR + 600_000 + 1000, reconcile: "pass" },
      { expect: { status: { lastSuccessfulTime: HOUR + 600_000 } } },
      // The older run reports an earlier completion afterwards.
      { finish: 0, as: "Complete", start: 1000, end: HOUR + 600_000 - 300_000 },
      { at: HOUR + 600_000 + 2000, reconcile: "pass" },
      { expect: { status: { lastSuccessfulTime: HOUR + 600_000 } } },
    ],
  },
  {
    title: "lastFailedTime never moves backward when failed Jobs finish out of order, and is listed in any order",
    spec: { failedJobsHistoryLimit: 10 },
    steps: [
      { at: 1000, reconcile: "pass" },
      { at: HOUR + 1000, reconcile: "pass" },
      { at: 2 * HOUR + 1000, reconcile: "pass" },
      // The newest slot's Job fails first and last of all in time; the older ones report earlier failures later.
      { finish: 2 * HOUR, as: "Failed", start: 2 * HOUR + 1000, end: 2 * HOUR + 900_000 },
      { at: 2 * HOUR + 900_000 + 1000, reconcile: "pass" },
      { expect: { status: { lastFailedTime: 2 * HOUR + 900_000 } } },
      { finish: 0, as: "Failed", start: 1000, end: 2 * HOUR + 900_000 - 600_000 },
      { finish: HOUR, as: "Failed", start: HOUR + 1000, end: 2 * HOUR + 900_000 - 300_000 },
      { at: 2 * HOUR + 900_000 + 2000, reconcile: "pass" },
      { expect: { status: { lastFailedTime: 2 * HOUR + 900_000 } } },
    ],
  },
];

/**
 * A Job the Job controller has decided fails (1.31+: FailureTarget=True) still runs until Failed=True: its Pods are
 * terminating. Whatever reads a run's end (Forbid, the retry, the failure count) must wait for Failed, or a second
 * run would start beside Pods that still run.
 */
const failingRows: Row[] = [
  {
    title: "with Forbid, a Job with FailureTarget but not yet Failed still holds the next slot",
    spec: { concurrencyPolicy: "Forbid" },
    steps: [
      { at: 1000, reconcile: "pass" },
      { finish: 0, as: "FailureTarget", start: 1000, end: 30 * MIN },
      { at: HOUR + 1000, reconcile: "pass" },
      {
        expect: { jobs: [0], status: { active: [0], lastFailedTime: null, consecutiveFailures: null } },
        why: "its Pods still terminate: the run has not ended",
      },
      { finish: 0, as: "Failed", start: 1000, end: HOUR + 2000 },
      { at: HOUR + 3000, reconcile: "pass" },
      { expect: { jobs: [0, HOUR], status: { lastFailedTime: HOUR + 2000 } }, why: "Failed: the held slot runs" },
    ],
  },
  {
    title: "with spec.retry, no attempt starts while the failing Job's Pods still terminate",
    spec: { retry: { limit: 1, delaySeconds: 0 } },
    steps: [
      { at: 1000, reconcile: "pass" },
      { finish: 0, as: "FailureTarget", start: 1000, end: 5 * MIN },
      { at: 5 * MIN + 1000, reconcile: "pass" },
      { expect: { jobNames: [0], status: { active: [0] } }, why: "not failed yet: nothing to retry" },
      { finish: 0, as: "Failed", start: 1000, end: 6 * MIN },
      { at: 6 * MIN + 1000, reconcile: "pass" },
      { expect: { jobNames: [0, { retry: 0, k: 1 }] }, why: "Failed: the attempt starts" },
    ],
  },
];

export function reconcilerEdgeCases(driver: ReconcilerDriver): void {
  describe(`CronJob reconciler edges (fake clock, ${driver.name})`, () => {
    const table = rowTable(driver, { namespace: "edges", prefix: "edge", firstPass: false });
    let h: ReconcileHarness<ObjectClient>;
    before(() => {
      h = table.h;
    });
    async function fresh(spec: Parameters<ReconcileHarness["createCronJob"]>[1] = {}) {
      const c = await table.fresh(spec);
      return {
        name: c.name,
        created: new Date(c.created.metadata.creationTimestamp!).getTime(),
        h1: c.h1,
        cj: c.created,
      };
    }
    function reconcilerWith(o: { client?: ObjectClient; cache?: CacheReader }): CronJobReconciler {
      return new CronJobReconciler({
        client: o.client ?? h.client,
        cache: o.cache ?? h.cache,
        recorder: h.recorder,
        clock: h.clock,
      });
    }
    async function reconcileWith(r: CronJobReconciler, name: string): Promise<Result> {
      try {
        return await r.reconcile(
          { namespace: h.namespace, name },
          { log: discardLogger, reconcileID: "edge", signal: new AbortController().signal },
        );
      } finally {
        await h.settle(name);
      }
    }

    describe("startingDeadlineSeconds boundary (a slot exactly that late still starts, as upstream)", () => {
      runRows(table, deadlineRows);
    });

    runRows(table, requeueRows);

    it("counts only slots inside the deadline window toward TooManyMissedTimes", async () => {
      const { name, created } = await fresh({ schedule: "* * * * *", startingDeadlineSeconds: 300 });
      const now = Math.floor(created / MIN) * MIN + 3 * HOUR + 7000;
      h.clock.set(new Date(now));
      await h.reconcile(name);
      assert.deepEqual(
        (await h.jobs(name)).map((j) => j.metadata!.name),
        [jobName(name, Math.floor(now / MIN) * MIN)],
      );
      const ev = h.takeEvents();
      assert.ok(!ev.some((e) => e.includes("TooManyMissedTimes")), ev.join("\n"));
    });

    it("still reports TooManyMissedTimes when more than 100 slots fall inside the deadline", async () => {
      const { name, created } = await fresh({ schedule: "* * * * *", startingDeadlineSeconds: 7200 });
      h.clock.set(new Date(Math.floor(created / MIN) * MIN + 3 * HOUR + 7000));
      await h.reconcile(name);
      assert.ok(h.takeEvents().some((e) => e.startsWith("Warning TooManyMissedTimes")));
    });

    describe("Replace never loses a run", () => {
      for (const [what, error] of [
        ["a 500", () => new APIError(500, "InternalError", "etcdserver: request timed out")],
        ["a 400", () => new APIError(400, "BadRequest", "bad request")],
        [
          "a connection error",
          () => Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6443"), { code: "ECONNREFUSED" }),
        ],
      ] as const) {
        it(`a failed delete (${what}) fails the reconcile for a retry, and the due slot then runs exactly once`, async () => {
          const { name, h1 } = await fresh({ concurrencyPolicy: "Replace" });
          h.clock.set(new Date(h1 + 1000));
          await h.reconcile(name);
          h.takeEvents();

          const fail = { deletes: 2, error };
          const r = reconcilerWith({ client: faultyClient(h.client, fail) });
          h.clock.set(new Date(h1 + HOUR + 1000));
          await assert.rejects(reconcileWith(r, name), /replacing the active Job/);
          assert.deepEqual(
            (await h.jobs(name)).map((j) => j.metadata!.name),
            [jobName(name, h1)],
            "the running Job stays and nothing new is created",
          );
          const ev = h.takeEvents();
          assert.equal(ev.length, 1, ev.join("\n"));
          assert.match(ev[0]!, new RegExp(`^Warning FailedDelete Deleted job ${jobName(name, h1)} failed: `));
          const degraded = condition(await h.get(name), "Degraded");
          assert.equal(degraded?.status, "True");
          assert.equal(degraded?.reason, "JobDeletionFailed");

          h.clock.set(new Date(h1 + HOUR + 3000));
          await assert.rejects(reconcileWith(r, name));
          h.takeEvents();

          // The API recovers: the retry deletes the old Job and runs the due slot, once.
          h.clock.set(new Date(h1 + HOUR + 7000));
          await reconcileWith(r, name);
          await reconcileWith(r, name);
          assert.deepEqual(
            (await h.jobs(name)).map((j) => j.metadata!.name),
            [jobName(name, h1 + HOUR)],
          );
          assert.deepEqual(h.takeEvents(), [
            `Normal SuccessfulDelete Deleted job ${jobName(name, h1)}`,
            `Normal SuccessfulCreate Created job ${jobName(name, h1 + HOUR)}`,
          ]);
          const st = await h.get(name);
          assert.equal(condition(st, "Degraded")?.reason, "AsExpected");
          assert.deepEqual(
            st.status?.active?.map((a) => a.name),
            [jobName(name, h1 + HOUR)],
          );
        });
      }

      it("a retry after the starting deadline does not start the slot, and reports it missed", async () => {
        const { name, h1 } = await fresh({ concurrencyPolicy: "Replace", startingDeadlineSeconds: 60 });
        h.clock.set(new Date(h1 + 1000));
        await h.reconcile(name);
        h.takeEvents();
        const fail = { deletes: 1, error: () => new APIError(503, "ServiceUnavailable", "unavailable") };
        const r = reconcilerWith({ client: faultyClient(h.client, fail) });
        h.clock.set(new Date(h1 + HOUR + 1000));
        await assert.rejects(reconcileWith(r, name));
        h.takeEvents();
        h.clock.set(new Date(h1 + HOUR + 90_000));
        await reconcileWith(r, name);
        assert.deepEqual(
          (await h.jobs(name)).map((j) => j.metadata!.name),
          [jobName(name, h1)],
        );
        const ev = h.takeEvents();
        assert.ok(
          ev.some((e) => e.startsWith("Warning MissSchedule")),
          ev.join("\n"),
        );
        assert.equal((await h.get(name)).status?.lastMissedTime, iso(h1 + HOUR));
      });

      it("a delete whose UID precondition fails (the name is another Job's now) counts as done: no FailedDelete, the slot runs", async () => {
        const { name, h1 } = await fresh({ concurrencyPolicy: "Replace" });
        h.clock.set(new Date(h1 + 1000));
        await h.reconcile(name);
        h.takeEvents();
        // What kube-apiserver answers when the UID precondition does not match: 409 Conflict.
        const fail = {
          deletes: 1,
          error: () =>
            new APIError(
              409,
              "Conflict",
              `Operation cannot be fulfilled on jobs.batch "${jobName(name, h1)}": Precondition failed: UID in precondition: x, UID in object meta: y`,
            ),
        };
        const r = reconcilerWith({ client: faultyClient(h.client, fail) });
        h.clock.set(new Date(h1 + HOUR + 1000));
        await reconcileWith(r, name);
        const ev = h.takeEvents();
        assert.ok(!ev.some((e) => e.includes("FailedDelete")), ev.join("\n"));
        assert.ok(ev.includes(`Normal SuccessfulCreate Created job ${jobName(name, h1 + HOUR)}`), ev.join("\n"));
        assert.notEqual(condition(await h.get(name), "Degraded")?.reason, "JobDeletionFailed");
      });

      it("the Job it replaced is not reported as missing", async () => {
        const { name, h1 } = await fresh({ concurrencyPolicy: "Replace" });
        h.clock.set(new Date(h1 + 1000));
        await h.reconcile(name);
        h.clock.set(new Date(h1 + HOUR + 1000));
        // Many CronJobs due at once: the status write after the create is deferred to the next pass.
        await h.reconciler.reconcile(
          { namespace: h.namespace, name },
          { log: discardLogger, reconcileID: "busy", signal: new AbortController().signal, queueLength: () => 5 },
        );
        await h.settle(name);
        h.takeEvents();
        await h.reconcile(name);
        const ev = h.takeEvents();
        assert.ok(!ev.some((e) => e.includes("MissingJob")), ev.join("\n"));
        assert.deepEqual(
          (await h.get(name)).status?.active?.map((a) => a.name),
          [jobName(name, h1 + HOUR)],
        );
      });
    });

    it("a Job listed in status.active for the due slot, not yet in the cache, counts as run (Replace does not kill it)", async () => {
      const { name, h1, cj } = await fresh({ concurrencyPolicy: "Replace" });
      const job = await h.createJob(
        batchJob({ name: jobName(name, h1), owner: { name, uid: cj.metadata.uid! }, slot: h1 }),
      );
      // Status knows the Job (written by an earlier pass or another replica) but not lastScheduleTime.
      const cur = await h.get(name);
      cur.status = {
        active: [
          {
            apiVersion: "batch/v1",
            kind: "Job",
            name: job.metadata!.name!,
            namespace: h.namespace,
            uid: job.metadata!.uid!,
          },
        ],
      };
      await h.client.updateStatus(CronJobKind, cur);
      await h.settle(name);
      const r = reconcilerWith({ cache: laggingCache(h.cache, { hiddenJobs: new Set([job.metadata!.name!]) }) });
      h.clock.set(new Date(h1 + 2000));
      await reconcileWith(r, name);
      assert.deepEqual(h.takeEvents(), []);
      const jobs = await h.jobs(name);
      assert.equal(jobs.length, 1);
      assert.equal(jobs[0]!.metadata!.uid, job.metadata!.uid, "the same Job, not a new one with its name");
      assert.equal((await h.get(name)).status?.lastScheduleTime, iso(h1));
    });

    it("a create refused because the namespace is terminating is retried quietly: no FailedCreate, not Degraded", async () => {
      const ns = "edges-terminating";
      const t = await driver.harness(ns, new Date().toISOString());
      try {
        const created = await t.createCronJob("doomed", {});
        const h1 = nextHour(new Date(created.metadata.creationTimestamp!).getTime());
        t.takeEvents();
        // No namespace controller runs in this control plane: the namespace stays Terminating.
        await t.client.delete(Kinds.Namespace, undefined, ns);
        for (let i = 0; ; i++) {
          const got = await t.client.get<{ status?: { phase?: string } } & Job>(Kinds.Namespace, undefined, ns);
          if (got.status?.phase === "Terminating") break;
          assert.ok(i < 100, "namespace never became Terminating");
          await new Promise((r) => setTimeout(r, 50));
        }
        t.clock.set(new Date(h1 + 1000));
        await assert.rejects(t.reconcile("doomed"), /being terminated/);
        assert.deepEqual(t.takeEvents(), []);
        const got = await t.get("doomed");
        assert.notEqual(condition(got, "Degraded")?.reason, "JobCreationFailed");
        assert.equal(condition(got, "Degraded")?.status, "False");
        assert.deepEqual(await t.jobs("doomed"), []);
      } finally {
        await t.stop();
      }
    });

    runRows(table, outOfOrderRows);
    describe("a failing Job (FailureTarget, not yet Failed) still runs", () => {
      runRows(table, failingRows);
    });

    it("a foreign Job that takes a remembered active Job's name (another UID) is not taken for ours", async () => {
      const { name, h1 } = await fresh({ concurrencyPolicy: "Replace" });
      h.clock.set(new Date(h1 + 1000));
      await h.reconcile(name);
      const ours = jobName(name, h1);
      await h.client.delete(Kinds.Job, h.namespace, ours, { propagationPolicy: "Background" });
      const foreign = await h.createJob(batchJob({ name: ours })); // no owner
      await h.settle(name);
      h.takeEvents();
      h.clock.set(new Date(h1 + 2000));
      await h.reconcile(name);
      assert.deepEqual(h.takeEvents(), [`Normal MissingJob Active job went missing: ${ours}`]);
      assert.deepEqual((await h.get(name)).status?.active ?? [], []);
      // Replace at the next slot must not delete a Job that is not ours.
      h.clock.set(new Date(h1 + HOUR + 1000));
      await h.reconcile(name);
      const still = await h.client.get<Job>(Kinds.Job, h.namespace, ours);
      assert.equal(still.metadata!.uid, foreign.metadata!.uid);
      assert.ok(!h.takeEvents().some((e) => e.includes("SuccessfulDelete")));
    });

    it("bounds every user value it quotes: a 200 KB schedule stored with admission bypassed", async () => {
      const { name } = await fresh();
      const huge = "0 * * * * " + "x".repeat(200_000);
      const r = reconcilerWith({
        cache: laggingCache(h.cache, { rewrite: (cj) => ({ ...cj, spec: { ...cj.spec, schedule: huge } }) }),
      });
      await reconcileWith(r, name);
      const got = await h.get(name);
      assert.equal(condition(got, "Degraded")?.reason, "InvalidSchedule");
      for (const c of got.status?.conditions ?? []) assert.ok(c.message.length <= MAX_CONDITION_MESSAGE, c.type);
      assert.ok(JSON.stringify(got.status).length < 16_384, "status stays small");
      const ev = h.takeEvents();
      assert.equal(ev.length, 1);
      assert.ok(ev[0]!.length <= MAX_EVENT_MESSAGE + 40, String(ev[0]!.length));
      // As `kubectl apply` says it (the schedule's length bound): the field, not the value.
      assert.match(ev[0]!, /spec\.schedule: Too long: must have at most 1024 bytes/);
    });

    it("reconciles a stored CronJob the schema refuses as stored: its slots run, an unknown policy is Allow", async () => {
      const { name, h1 } = await fresh();
      const r = reconcilerWith({
        cache: laggingCache(h.cache, {
          rewrite: (cj) =>
            variant(cj, (o) => {
              o.spec.concurrencyPolicy = "Sometimes";
              delete o.spec.successfulJobsHistoryLimit;
            }) as CronJob,
        }),
      });
      h.clock.set(new Date(h1 + 1000));
      await reconcileWith(r, name);
      h.clock.set(new Date(h1 + HOUR + 1000));
      await reconcileWith(r, name);
      assert.deepEqual(
        (await h.jobs(name)).map((j) => j.metadata!.name),
        [jobName(name, h1), jobName(name, h1 + HOUR)],
        "the second slot runs beside the first, still active",
      );
      const got = await h.get(name);
      assert.equal(got.status?.activeCount, 2);
      assert.equal(condition(got, "Available")?.reason, "JobsActive");
      assert.equal(condition(got, "Degraded")?.reason, "AsExpected");
    });
  });
}
