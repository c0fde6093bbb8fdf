// Run now (the run-now annotation), lastFailedTime and H schedules in the reconciler, with a fake clock. One
// table, two drivers: run-now.test.ts runs it against envtest, test/unit/cronjob-reconciler-table.test.ts
// against the in-memory FakeClient.
// A processed request never runs twice: not on a repeat reconcile, not after a crash between create and
// status write, not after history cleanup deleted its Job.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
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
import { CronJobReconciler } from "../../../controllers/cronjob_controller.ts";
import { CronJobResource as CronJobKind, jobForRunNow } from "../../../api/v1/index.ts";
import type { RunOutcome } from "../../../controllers/metrics.ts";
import type { ObjectClient } from "../../../runtime/interfaces.ts";
import { Kinds } from "../../../runtime/kinds.ts";
import { discardLogger } from "../../../runtime/log.ts";
import type { ReconcileHarness, ReconcilerDriver } from "./harness.ts";

const HOUR = 3600_000;
const iso = (t: number) => new Date(t).toISOString().replace(/\.\d{3}Z$/, "Z");
const nextHour = (t: number) => Math.floor(t / HOUR) * HOUR + HOUR;

export function runNowCases(driver: ReconcilerDriver): void {
  describe(`run now, lastFailedTime and H schedules in the reconciler (fake clock, ${driver.name})`, () => {
    let h: ReconcileHarness<ObjectClient>;
    let n = 0;
    const counted: string[] = [];
    let reconciler: CronJobReconciler;

    async function fresh(spec: Parameters<ReconcileHarness["createCronJob"]>[1] = {}) {
      const name = `rn-${++n}`;
      const created = await h.createCronJob(name, spec);
      const c = new Date(created.metadata.creationTimestamp!).getTime();
      // Half an hour before the first slot: nothing is due on schedule.
      h.clock.set(new Date(nextHour(c) - HOUR / 2));
      h.takeEvents();
      counted.length = 0;
      return { name, created: c, h1: nextHour(c), cj: created };
    }
    async function reconcile(name: string) {
      const r = await reconciler.reconcile(
        { namespace: h.namespace, name },
        { log: discardLogger, reconcileID: "run-now", signal: new AbortController().signal },
      );
      await h.settle(name);
      return r;
    }
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

    before(async () => {
      await driver.setup();
      h = await driver.harness("run-now", new Date().toISOString());
      reconciler = new CronJobReconciler({
        client: h.client,
        cache: h.cache,
        recorder: h.recorder,
        clock: h.clock,
        metrics: {
          countRun: (ns: string, name: string, outcome: RunOutcome) => counted.push(`${ns}/${name} ${outcome}`),
          forget: () => {},
        },
      });
    });
    after(async () => {
      await h?.stop();
      await driver.teardown();
    });

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

    it("after a crash between create and status write, the request is recorded, not run again", async () => {
      const { name, cj } = await fresh();
      await request(name, "crash");
      // The Job the crashed process created; its status write never happened.
      await h.client.create(Kinds.Job, jobForRunNow(cj, "crash", undefined));
      await h.settle(name);
      await reconcile(name);
      assert.equal((await manualJobs(name)).length, 1);
      assert.equal((await h.get(name)).status?.lastRunNowRequest, "crash");
      assert.deepEqual(h.takeEvents(), []);
      assert.deepEqual(counted, []);
    });

    it("history cleanup keeps an unrecorded request's Job until status holds the request", async () => {
      const { name, cj, h1 } = await fresh({ successfulJobsHistoryLimit: 0 });
      await request(name, "cleanup");
      const jobName = manualJobName(name, "cleanup");
      await h.client.create(Kinds.Job, jobForRunNow(cj, "cleanup", undefined));
      await h.finishJob(jobName, "Complete", iso(h1 - HOUR), iso(h1 - HOUR + 60_000));
      await h.settle(name);
      await reconcile(name);
      assert.deepEqual(
        (await h.jobs(name)).map((j) => j.metadata!.name),
        [jobName],
        "not deleted before the request was recorded",
      );
      assert.equal((await h.get(name)).status?.lastRunNowRequest, "cleanup");
      await reconcile(name);
      assert.deepEqual(await h.jobs(name), [], "deleted once recorded");
      await reconcile(name);
      assert.deepEqual(await h.jobs(name), [], "and the request does not run again");
      assert.equal((await h.get(name)).status?.lastSuccessfulTime, iso(h1 - HOUR + 60_000));
    });

    it("Forbid: the request waits for the running Job, then runs", async () => {
      const { name, h1 } = await fresh({ concurrencyPolicy: "Forbid" });
      h.clock.set(new Date(h1));
      await reconcile(name); // the scheduled run
      const scheduled = `${name}-${h1 / 1000}`;
      h.takeEvents();
      await request(name, "wait");
      await reconcile(name);
      assert.deepEqual(await manualJobs(name), []);
      assert.deepEqual(h.takeEvents(), [
        `Normal RunNowDeferred run-now request "wait" waits: concurrencyPolicy is Forbid and ${scheduled} still running`,
      ]);
      assert.equal((await h.get(name)).status?.lastRunNowRequest, undefined);
      await h.finishJob(scheduled, "Complete", iso(h1), iso(h1 + 60_000));
      await h.settle(name);
      await reconcile(name);
      assert.equal((await manualJobs(name)).length, 1);
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

    it("suspend stops the schedule, not an explicit request", async () => {
      const { name } = await fresh({ suspend: true });
      await request(name, "while-suspended");
      await reconcile(name);
      assert.equal((await manualJobs(name)).length, 1);
      const st = (await h.get(name)).status!;
      assert.equal(st.nextScheduleTime, undefined);
      assert.equal(st.lastRunNowRequest, "while-suspended");
    });

    it("refuses a request longer than 253 characters with a Warning, and runs nothing", async () => {
      const { name } = await fresh();
      await request(name, "x".repeat(300));
      await reconcile(name);
      assert.deepEqual(await manualJobs(name), []);
      assert.match(h.takeEvents()[0]!, /^Warning RunNowRefused .*300 characters, at most 253/);
    });

    it("a run-now Job never moves lastScheduleTime, before the first slot or after it; the schedule keeps its slots", async () => {
      const { name, h1 } = await fresh({ successfulJobsHistoryLimit: 5 });
      await request(name, "before-first");
      await reconcile(name);
      const first = manualJobName(name, "before-first");
      await h.finishJob(first, "Complete", iso(h1 - HOUR / 2), iso(h1 - HOUR / 2 + 60_000));
      await h.settle(name);
      await reconcile(name);
      await reconcile(name);
      let st = (await h.get(name)).status!;
      assert.equal(st.lastScheduleTime, undefined, "a manual run has no slot");
      assert.equal(st.nextScheduleTime, iso(h1));
      h.clock.set(new Date(h1 + 1000));
      await reconcile(name);
      const slot1 = `${name}-${h1 / 1000}`;
      assert.ok(
        (await h.jobs(name)).some((j) => j.metadata?.name === slot1),
        "the first slot runs",
      );
      assert.equal((await h.get(name)).status?.lastScheduleTime, iso(h1));
      h.clock.set(new Date(h1 + HOUR / 2));
      await request(name, "after-first");
      await reconcile(name);
      await h.finishJob(manualJobName(name, "after-first"), "Failed", iso(h1 + HOUR / 2), iso(h1 + HOUR / 2 + 60_000));
      await h.settle(name);
      await reconcile(name);
      await reconcile(name);
      st = (await h.get(name)).status!;
      assert.equal(st.lastRunNowRequest, "after-first");
      assert.equal(st.lastScheduleTime, iso(h1), "a manual run has no slot");
      assert.equal(st.nextScheduleTime, iso(h1 + HOUR));
      h.clock.set(new Date(h1 + HOUR + 1000));
      await reconcile(name);
      assert.ok((await h.jobs(name)).some((j) => j.metadata?.name === `${name}-${(h1 + HOUR) / 1000}`));
      assert.equal((await h.get(name)).status?.lastScheduleTime, iso(h1 + HOUR));
    });

    it("a refused request is reported once, not on every pass", async () => {
      const { name } = await fresh();
      await request(name, "x".repeat(300));
      for (let i = 0; i < 5; i++) {
        h.clock.set(new Date(h.clock.now().getTime() + 60_000));
        await reconcile(name);
      }
      assert.deepEqual(await manualJobs(name), []);
      const refused = h.takeEvents().filter((e) => e.startsWith("Warning RunNowRefused"));
      assert.equal(refused.length, 1, refused.join("\n"));
    });

    it("Forbid: a waiting request is reported once per request, not on every pass", async () => {
      const { name, h1 } = await fresh({ concurrencyPolicy: "Forbid" });
      h.clock.set(new Date(h1));
      await reconcile(name); // the scheduled run
      const scheduled = `${name}-${h1 / 1000}`;
      h.takeEvents();
      const deferred = () => h.takeEvents().filter((e) => e.includes("RunNowDeferred"));
      await request(name, "wait-1");
      for (let i = 0; i < 5; i++) {
        h.clock.set(new Date(h.clock.now().getTime() + 60_000));
        await reconcile(name);
      }
      let events = deferred();
      assert.equal(events.length, 1, events.join("\n"));
      assert.ok(events[0]!.includes('"wait-1"'), events[0]);
      await request(name, "wait-2");
      for (let i = 0; i < 3; i++) {
        h.clock.set(new Date(h.clock.now().getTime() + 60_000));
        await reconcile(name);
      }
      events = deferred();
      assert.equal(events.length, 1, `a new request is reported once: ${events.join("\n")}`);
      assert.ok(events[0]!.includes('"wait-2"'), events[0]);
      assert.deepEqual(await manualJobs(name), []);
      await h.finishJob(scheduled, "Complete", iso(h1), iso(h1 + 60_000));
      await h.settle(name);
      await reconcile(name);
      assert.deepEqual(
        (await manualJobs(name)).map((j) => j.metadata!.name),
        [manualJobName(name, "wait-2")],
      );
    });

    it("lastFailedTime: the newest failure, never moving backward; outcomes counted", async () => {
      const { name, h1 } = await fresh({ failedJobsHistoryLimit: 5 });
      h.clock.set(new Date(h1));
      await reconcile(name);
      const j1 = `${name}-${h1 / 1000}`;
      await h.finishJob(j1, "Failed", iso(h1), iso(h1 + 120_000));
      h.clock.set(new Date(h1 + HOUR));
      await h.settle(name);
      await reconcile(name);
      const j2 = `${name}-${(h1 + HOUR) / 1000}`;
      assert.equal((await h.get(name)).status?.lastFailedTime, iso(h1 + 120_000));
      await h.finishJob(j2, "Complete", iso(h1 + HOUR), iso(h1 + HOUR + 60_000));
      await h.settle(name);
      await reconcile(name);
      const st = (await h.get(name)).status!;
      assert.equal(st.lastFailedTime, iso(h1 + 120_000), "a success does not clear it");
      assert.equal(st.lastSuccessfulTime, iso(h1 + HOUR + 60_000));
      assert.deepEqual(counted, [
        `run-now/${name} created`,
        `run-now/${name} failed`,
        `run-now/${name} created`,
        `run-now/${name} succeeded`,
      ]);
    });

    it("a Job that finishes before status ever listed it (creation first) is reported and counted once", async () => {
      const { name, h1 } = await fresh({ successfulJobsHistoryLimit: 3 });
      const busy = (id: string) =>
        reconciler.reconcile(
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
