// Run now (the run-now annotation), lastFailedTime and H schedules in the reconciler, with a fake clock. One
// table, two drivers: run-now.test.ts runs it against envtest, test/unit/cronjob-reconciler-table.test.ts
// against the in-memory FakeClient.
// A processed request never runs twice: not on a repeat reconcile, not after a crash between create and
// status write, not after history cleanup deleted its Job.
// Most cases are rows of data (rows.ts: times are offsets from the CronJob's first slot h1; no pass has seen
// the CronJob, the clock at h1 - 30m); those whose story the rows cannot tell are hand-written after them.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import {
  CRONJOB_NAME_LABEL,
  type CronJob,
  INSTANTIATE_ANNOTATION,
  manualJobName,
  RUN_NOW_ANNOTATION,
  RUN_NOW_REQUEST_ANNOTATION,
  RUN_NOW_REQUESTED_BY_ANNOTATION,
  runNowRequestedByValue,
} from "../../../api/v1/index.ts";
import { resolveHashedSchedule } from "../../../api/v1/schedule/index.ts";
import { CronJobResource as CronJobKind } from "../../../api/v1/index.ts";
import type { ObjectClient } from "../../../runtime/interfaces.ts";
import { discardLogger } from "../../../runtime/log.ts";
import type { ReconcileHarness, ReconcilerDriver } from "./harness.ts";
import { HOUR, MIN, minutely, type Row, rowTable, runRows } from "./rows.ts";
import { batchJob } from "../../fixtures.ts";

const iso = (t: number) => new Date(t).toISOString().replace(/\.\d{3}Z$/, "Z");

const runNow = (request: string) => ({ annotate: { [RUN_NOW_ANNOTATION]: request } });

const rows: Row[] = [
  {
    title: "after a crash between create and status write, the request is recorded, not run again",
    steps: [
      runNow("crash"),
      // The Job the crashed process created; its status write never happened.
      { createRunNowJob: "crash" },
      "pass",
      { expect: { runNowJobs: 1, status: { lastRunNowRequest: "crash" }, events: { are: [] }, counted: [] } },
    ],
  },
  {
    title: "history cleanup keeps an unrecorded request's Job until status holds the request",
    spec: { successfulJobsHistoryLimit: 0 },
    steps: [
      runNow("cleanup"),
      { createRunNowJob: "cleanup" },
      { finish: { runNow: "cleanup" }, as: "Complete", start: -HOUR },
      "pass",
      { expect: { jobNames: [{ runNow: "cleanup" }] }, why: "not deleted before the request was recorded" },
      { expect: { status: { lastRunNowRequest: "cleanup" } } },
      "pass",
      { expect: { jobNames: [] }, why: "deleted once recorded" },
      "pass",
      { expect: { jobNames: [] }, why: "and the request does not run again" },
      { expect: { status: { lastSuccessfulTime: -HOUR + MIN } } },
    ],
  },
  {
    title: "Forbid: the request waits for the running Job, then runs",
    spec: { concurrencyPolicy: "Forbid" },
    steps: [
      { at: 0, reconcile: "pass" }, // the scheduled run
      "forget events",
      runNow("wait"),
      "pass",
      {
        expect: {
          runNowJobs: [],
          events: {
            are: [
              (c) =>
                `Normal RunNowDeferred run-now request "wait" waits: concurrencyPolicy is Forbid and ${c.job(0)} still running`,
            ],
          },
          status: { lastRunNowRequest: null },
        },
      },
      { finish: 0, as: "Complete" },
      "pass",
      { expect: { runNowJobs: 1 } },
    ],
  },
  {
    title: "suspend stops the schedule, not an explicit request",
    spec: { suspend: true },
    steps: [
      runNow("while-suspended"),
      "pass",
      { expect: { runNowJobs: 1, status: { nextScheduleTime: null, lastRunNowRequest: "while-suspended" } } },
    ],
  },
  {
    title: "refuses a request longer than 253 characters with a Warning, and runs nothing",
    steps: [
      runNow("x".repeat(300)),
      "pass",
      { expect: { runNowJobs: [], events: { firstHas: [/^Warning RunNowRefused .*300 characters, at most 253/] } } },
    ],
  },
  {
    title:
      "a run-now Job never moves lastScheduleTime, before the first slot or after it; the schedule keeps its slots",
    spec: { successfulJobsHistoryLimit: 5 },
    steps: [
      runNow("before-first"),
      "pass",
      { finish: { runNow: "before-first" }, as: "Complete", start: -HOUR / 2 },
      "pass",
      "pass",
      { expect: { status: { lastScheduleTime: null } }, why: "a manual run has no slot" },
      { expect: { status: { nextScheduleTime: 0 } } },
      { at: 1000, reconcile: "pass" },
      { expect: { exist: [0] }, why: "the first slot runs" },
      { expect: { status: { lastScheduleTime: 0 } } },
      { at: HOUR / 2 },
      runNow("after-first"),
      "pass",
      { finish: { runNow: "after-first" }, as: "Failed", start: HOUR / 2 },
      "pass",
      "pass",
      { expect: { status: { lastRunNowRequest: "after-first", nextScheduleTime: HOUR } } },
      { expect: { status: { lastScheduleTime: 0 } }, why: "a manual run has no slot" },
      { at: HOUR + 1000, reconcile: "pass" },
      { expect: { exist: [HOUR], status: { lastScheduleTime: HOUR } } },
    ],
  },
  {
    title: "a refused request is reported once, not on every pass",
    steps: [
      runNow("x".repeat(300)),
      ...minutely(-HOUR / 2, 5),
      { expect: { runNowJobs: [], events: { startingWith: "Warning RunNowRefused", count: 1 } } },
    ],
  },
  {
    title: "Forbid: a waiting request is reported once per request, not on every pass",
    spec: { concurrencyPolicy: "Forbid" },
    steps: [
      { at: 0, reconcile: "pass" }, // the scheduled run
      "forget events",
      runNow("wait-1"),
      ...minutely(0, 5),
      { expect: { events: { containing: "RunNowDeferred", count: 1, firstHas: ['"wait-1"'] } } },
      runNow("wait-2"),
      ...minutely(5 * MIN, 3),
      {
        expect: { events: { containing: "RunNowDeferred", count: 1, firstHas: ['"wait-2"'] } },
        why: "a new request is reported once",
      },
      { expect: { runNowJobs: [] } },
      { finish: 0, as: "Complete" },
      "pass",
      { expect: { runNowJobs: ["wait-2"] } },
    ],
  },
  {
    title:
      "a foreign Job holding the request's name: the request waits, without a retry loop; a backfill and the schedule run meanwhile; it runs once the name is free",
    steps: [
      { createJob: { runNow: "taken" }, owner: "none" },
      runNow("taken"),
      { backfill: { from: -HOUR, to: -HOUR } },
      { reconcile: "pass", requeue: 0 },
      {
        expect: {
          runNowJobs: [],
          backfillJobs: [-HOUR],
          status: { lastRunNowRequest: null },
          conditions: { Degraded: { reason: "JobCreationFailed", status: "True" } },
          events: { containing: "FailedCreate", count: 1, firstHas: [(c) => c.job({ runNow: "taken" })] },
        },
      },
      { at: 1000, reconcile: "pass", requeue: HOUR },
      { expect: { exist: [0], status: { lastScheduleTime: 0, lastRunNowRequest: null } }, why: "the slot runs" },
      { deleteJob: { runNow: "taken" } },
      "pass",
      { expect: { runNowJobs: ["taken"], status: { lastRunNowRequest: "taken" } } },
    ],
  },
  {
    title: "lastFailedTime: the newest failure, never moving backward; outcomes counted",
    spec: { failedJobsHistoryLimit: 5 },
    steps: [
      { at: 0, reconcile: "pass" },
      { finish: 0, as: "Failed", end: 2 * MIN },
      { at: HOUR, reconcile: "pass" },
      { expect: { status: { lastFailedTime: 2 * MIN } } },
      { finish: HOUR, as: "Complete" },
      "pass",
      { expect: { status: { lastFailedTime: 2 * MIN } }, why: "a success does not clear it" },
      {
        expect: {
          status: { lastSuccessfulTime: HOUR + MIN },
          counted: ["created", "failed", "created", "succeeded"],
        },
      },
    ],
  },
];

export function runNowCases(driver: ReconcilerDriver): void {
  describe(`run now, lastFailedTime and H schedules in the reconciler (fake clock, ${driver.name})`, () => {
    const table = rowTable(driver, { namespace: "run-now", prefix: "rn", firstPass: false, countRuns: true });
    let h: ReconcileHarness<ObjectClient>;
    before(() => {
      h = table.h;
    });
    const counted = table.counted;

    runRows(table, rows);

    // The hand-written cases' words for what the rows say as steps.
    async function fresh(spec: Parameters<ReconcileHarness["createCronJob"]>[1] = {}) {
      const c = await table.fresh(spec);
      return {
        name: c.name,
        created: new Date(c.created.metadata.creationTimestamp!).getTime(),
        h1: c.h1,
        cj: c.created,
      };
    }
    const reconcile = (name: string) => table.reconcile(name);
    async function request(name: string, value: string, requestedBy?: string) {
      // Read, change, write: what `kubectl annotate` does with a merge patch, on both drivers.
      const cj = await h.get(name);
      cj.metadata.annotations = {
        ...cj.metadata.annotations,
        [RUN_NOW_ANNOTATION]: value,
        ...(requestedBy ? { [RUN_NOW_REQUESTED_BY_ANNOTATION]: runNowRequestedByValue(requestedBy, value) } : {}),
      };
      await h.client.update(CronJobKind, cj);
      await h.settle(name);
    }
    const manualJobs = async (name: string) =>
      (await h.jobs(name)).filter((j) => j.metadata?.annotations?.[RUN_NOW_REQUEST_ANNOTATION] !== undefined);

    it("a new annotation value runs one Job now, marked manual; repeats do nothing; a new value runs again", async () => {
      const { name } = await fresh();
      await request(name, "r1", "alice");
      await reconcile(name);
      const jobs = await manualJobs(name);
      assert.deepEqual(
        jobs.map((j) => j.metadata!.name),
        [manualJobName(name, "r1")],
      );
      const a = jobs[0]!.metadata!.annotations!;
      assert.equal(a[INSTANTIATE_ANNOTATION], "manual");
      assert.equal(a[RUN_NOW_REQUEST_ANNOTATION], "r1");
      assert.equal(a[RUN_NOW_REQUESTED_BY_ANNOTATION], "alice");
      assert.equal(a["example.com/team"], "data", "the template's annotations are kept");
      assert.deepEqual(jobs[0]!.metadata!.labels, { app: name, [CRONJOB_NAME_LABEL]: name });
      const st = (await h.get(name)).status!;
      assert.equal(st.lastRunNowRequest, "r1");
      assert.equal(st.lastScheduleTime, undefined, "a manual run has no slot");
      assert.deepEqual(
        st.active?.map((r) => r.name),
        [manualJobName(name, "r1")],
      );
      assert.deepEqual(h.takeEvents(), [
        `Normal RunNow Created job ${manualJobName(name, "r1")} for run-now request "r1", requested by alice`,
      ]);
      assert.deepEqual(counted, [`run-now/${name} manual`]);

      for (let i = 0; i < 3; i++) await reconcile(name);
      assert.equal((await manualJobs(name)).length, 1);
      assert.deepEqual(h.takeEvents(), [], "its own Job is not an UnexpectedJob");

      await request(name, "r2");
      await reconcile(name);
      assert.deepEqual(
        (await manualJobs(name)).map((j) => j.metadata!.name).sort(),
        [manualJobName(name, "r1"), manualJobName(name, "r2")].sort(),
      );
      assert.match(h.takeEvents()[0]!, /requested by an unknown user/);
    });

    it("Replace: the running Job is deleted first", async () => {
      const { name, h1 } = await fresh({ concurrencyPolicy: "Replace" });
      h.clock.set(new Date(h1));
      await reconcile(name);
      const scheduled = `${name}-${h1 / 1000}`;
      await request(name, "replace");
      await reconcile(name);
      const names = (await h.jobs(name)).filter((j) => !j.metadata?.deletionTimestamp).map((j) => j.metadata!.name);
      assert.ok(!names.includes(scheduled), names.join(","));
      assert.ok(names.includes(manualJobName(name, "replace")), names.join(","));
    });

    it("a run-now create that fails is Degraded (JobCreationFailed), on a schedule as while suspended", async () => {
      for (const suspend of [false, true]) {
        const { name, h1 } = await fresh({ suspend });
        h.clock.set(new Date(h1 - 10 * MIN));
        // A foreign Job (no owner) holds the request's name: the create cannot succeed.
        await h.createJob(batchJob({ name: manualJobName(name, "taken") }));
        await request(name, "taken");
        await reconcile(name);
        const got = await h.get(name);
        const degraded = got.status?.conditions?.find((c) => c.type === "Degraded");
        if (suspend) {
          // A suspended CronJob's conditions are the guard's; the failure is still reported.
          assert.equal(degraded?.reason, "AsExpected");
        } else {
          assert.equal(degraded?.status, "True", `suspend ${suspend}: ${JSON.stringify(degraded)}`);
          assert.equal(degraded?.reason, "JobCreationFailed");
        }
        assert.ok(
          h.takeEvents().some((e) => e.startsWith("Warning FailedCreate") && e.includes(manualJobName(name, "taken"))),
        );
        assert.equal(got.status?.lastRunNowRequest, undefined, "the request did not run");
      }
    });

    it("a Job that finishes before status ever listed it (creation first) is reported and counted once", async () => {
      const { name, h1 } = await fresh({ successfulJobsHistoryLimit: 3 });
      const busy = (id: string) =>
        table.reconciler.reconcile(
          { namespace: h.namespace, name },
          // Many CronJobs due at once: the status write after the create is left to the next pass.
          { log: discardLogger, reconcileID: id, signal: new AbortController().signal, queueLength: () => 5 },
        );
      h.clock.set(new Date(h1 + 1000));
      await busy("slot");
      await h.settle(name);
      const j1 = `${name}-${h1 / 1000}`;
      assert.equal((await h.get(name)).status?.lastScheduleTime, undefined, "the status write was deferred");
      await h.finishJob(j1, "Complete", iso(h1 + 1000), iso(h1 + 5000));
      await h.settle(name);
      const before = h.cache.get<CronJob>(CronJobKind, h.namespace, name)!;
      h.takeEvents();
      await reconcile(name);
      const st = (await h.get(name)).status!;
      assert.equal(st.lastScheduleTime, iso(h1));
      assert.equal(st.lastSuccessfulTime, iso(h1 + 5000));
      assert.deepEqual(st.active, []);
      // With a cache that has not caught up with that status write, and again: no second report.
      const cacheGet = h.cache.get.bind(h.cache);
      h.cache.get = ((kind, ns, n) =>
        kind === CronJobKind && n === name ? before : cacheGet(kind, ns, n)) as typeof h.cache.get;
      try {
        await busy("lagging-cache");
      } finally {
        h.cache.get = cacheGet;
      }
      await h.settle(name);
      await reconcile(name);
      assert.deepEqual(h.takeEvents(), [`Normal SawCompletedJob Saw completed job: ${j1}, condition: Complete`]);
      assert.deepEqual(counted, [`run-now/${name} created`, `run-now/${name} succeeded`]);

      // A manual run the same way; a later request does not report the earlier request's Job again.
      counted.length = 0;
      await request(name, "m1");
      await busy("m1");
      await h.settle(name);
      const m1 = manualJobName(name, "m1");
      await h.finishJob(m1, "Failed", iso(h1 + 60_000), iso(h1 + 70_000));
      await h.settle(name);
      h.takeEvents();
      await reconcile(name);
      assert.equal((await h.get(name)).status?.lastRunNowRequest, "m1");
      await request(name, "m2");
      await reconcile(name);
      await reconcile(name);
      const events = h.takeEvents();
      assert.deepEqual(
        events.filter((e) => e.includes("SawCompletedJob")),
        [`Normal SawCompletedJob Saw completed job: ${m1}, condition: Failed`],
        events.join("\n"),
      );
      assert.deepEqual(counted, [`run-now/${name} manual`, `run-now/${name} failed`, `run-now/${name} manual`]);
    });

    it("CronJobs with the same H schedule, reconciled by one reconciler, each run at their own hashed minute", async () => {
      // Two names whose "H * * * *" resolve to different minutes: a parse cache shared across owners would put
      // the second on the first's minute (and nothing else would fail).
      const minuteOf = (name: string) => {
        const r = resolveHashedSchedule("H H * * *", { namespace: h.namespace, name });
        assert.ok(r.ok && r.hashed);
        return r.resolved;
      };
      const names = ["hashed-a"];
      for (let i = 0; names.length < 2; i++)
        if (minuteOf(`hashed-${i}`) !== minuteOf(names[0]!)) names.push(`hashed-${i}`);
      const created: number[] = [];
      for (const name of names) {
        const cj = await h.createCronJob(name, { schedule: "H H * * *" });
        created.push(new Date(cj.metadata.creationTimestamp!).getTime());
      }
      h.clock.set(new Date(Math.max(...created) + 1000));
      // Interleaved, and the first one again after the second: the order must not matter.
      for (const name of [...names, names[0]!]) await reconcile(name);
      const seen = new Set<string>();
      for (const name of names) {
        const st = (await h.get(name)).status!;
        const [minute, hour] = minuteOf(name).split(" ").map(Number);
        assert.equal(st.resolvedSchedule, minuteOf(name), name);
        const next = new Date(st.nextScheduleTime!);
        assert.deepEqual([next.getUTCMinutes(), next.getUTCHours()], [minute, hour], `${name} runs at its own time`);
        seen.add(st.nextScheduleTime!);
      }
      assert.equal(seen.size, 2, "both CronJobs were given the same next run");
    });

    it("CronJobs with the same schedule in different time zones, reconciled by one reconciler, keep their zones", async () => {
      const zones = ["UTC", "Asia/Tokyo", "America/Los_Angeles"];
      const created: number[] = [];
      for (const [i, tz] of zones.entries()) {
        const cj = await h.createCronJob(`zoned-${i}`, { schedule: "0 9 * * *", timeZone: tz });
        created.push(new Date(cj.metadata.creationTimestamp!).getTime());
      }
      h.clock.set(new Date(Math.max(...created) + 1000));
      for (const i of [0, 1, 2, 0, 1]) await reconcile(`zoned-${i}`);
      for (const [i, tz] of zones.entries()) {
        const next = new Date((await h.get(`zoned-${i}`)).status!.nextScheduleTime!);
        const local = new Intl.DateTimeFormat("en-GB", { timeZone: tz, hour: "2-digit", minute: "2-digit" }).format(
          next,
        );
        assert.equal(local, "09:00", `zoned-${i} (${tz}) runs at 09:00 in its zone, got ${next.toISOString()}`);
      }
    });

    it("an H schedule runs at its hashed minute, shown resolved in status", async () => {
      const { name, created } = await fresh({ schedule: "H * * * *" });
      const r = resolveHashedSchedule("H * * * *", { namespace: h.namespace, name });
      assert.ok(r.ok && r.hashed);
      const resolved = r.resolved;
      const minute = Number(resolved.split(" ")[0]);
      // fresh() puts the clock at half past the creation's hour, before the creation itself after :30.
      h.clock.set(new Date(created));
      await reconcile(name);
      const st = (await h.get(name)).status!;
      assert.equal(st.resolvedSchedule, resolved);
      const next = new Date(st.nextScheduleTime!);
      assert.equal(next.getUTCMinutes(), minute);
      assert.ok(next.getTime() > created);
      const plain = await fresh({ schedule: "*/5 * * * *" });
      await reconcile(plain.name);
      assert.equal((await h.get(plain.name)).status?.resolvedSchedule, "*/5 * * * *");
    });
  });
}
