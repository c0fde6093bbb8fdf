// The scheduling policies of issue 22 in the reconciler, with a fake clock: what happens to missed slots
// (spec.missedRunPolicy Skip and RunAll, with maxCatchUpRuns), and stopping after repeated failures
// (spec.stopAfterConsecutiveFailures, resumed by the resume annotation or a spec change). Restarts and leader
// changes are a new reconciler (nothing remembered) on the same objects. One table, two drivers: policy.test.ts
// runs it against envtest, test/unit/cronjob-reconciler-table.test.ts against the in-memory FakeClient.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  type CronJob,
  CronJobResource as CronJobKind,
  manualJobName,
  BACKFILL_ANNOTATION,
  BACKFILL_REQUEST_ANNOTATION,
  backfillAnnotationValue,
  RESUME_ANNOTATION,
  RUN_NOW_ANNOTATION,
  SCHEDULED_AT_ANNOTATION,
} from "../../../api/v1/index.ts";
import { CronJobReconciler } from "../../../controllers/cronjob_controller.ts";
import type { Result } from "../../../runtime/controller.ts";
import type { ObjectClient } from "../../../runtime/interfaces.ts";
import { discardLogger } from "../../../runtime/log.ts";
import { condition, type ReconcileHarness, type ReconcilerDriver } from "./harness.ts";

const HOUR = 3600_000;
const MIN = 60_000;
const iso = (t: number) => new Date(t).toISOString().replace(/\.\d{3}Z$/, "Z");
const nextHour = (t: number) => Math.floor(t / HOUR) * HOUR + HOUR;
const jobName = (cj: string, slot: number) => `${cj}-${slot / 1000}`;

export function policyCases(driver: ReconcilerDriver): void {
  describe(`missed-run policies and stop after failures in the reconciler (fake clock, ${driver.name})`, () => {
    let h: ReconcileHarness<ObjectClient>;
    let n = 0;

    /** A CronJob on `0 * * * *`, the clock half an hour before its first slot, after one reconcile. */
    async function fresh(spec: Parameters<ReconcileHarness["createCronJob"]>[1] = {}) {
      const name = `pol-${++n}`;
      const created = await h.createCronJob(name, spec);
      const h1 = nextHour(new Date(created.metadata.creationTimestamp!).getTime());
      h.clock.set(new Date(h1 - HOUR / 2));
      await h.reconcile(name);
      h.takeEvents();
      return { name, h1 };
    }
    /** A reconcile by another reconciler: a restart, or another replica after a leader change. */
    async function reconcileAfterRestart(name: string): Promise<Result> {
      const other = new CronJobReconciler({ client: h.client, cache: h.cache, recorder: h.recorder, clock: h.clock });
      const r = await other.reconcile(
        { namespace: h.namespace, name },
        { log: discardLogger, reconcileID: "restarted", signal: new AbortController().signal },
      );
      await h.settle(name);
      return r;
    }
    async function slots(name: string): Promise<string[]> {
      return (await h.jobs(name))
        .map((j) => j.metadata?.annotations?.[SCHEDULED_AT_ANNOTATION])
        .filter((s): s is string => s !== undefined)
        .sort();
    }
    async function patch(name: string, change: (cj: CronJob) => void) {
      const cj = await h.get(name);
      change(cj);
      await h.client.update(CronJobKind, cj);
      await h.settle(name);
    }
    async function finish(name: string, slot: number, outcome: "Complete" | "Failed") {
      await h.finishJob(jobName(name, slot), outcome, iso(slot), iso(slot + MIN));
      await h.settle(name);
    }

    before(async () => {
      await driver.setup();
      h = await driver.harness("policies", new Date().toISOString());
    });
    after(async () => {
      await h?.stop();
      await driver.teardown();
    });

    describe("missedRunPolicy Skip", () => {
      it("unsuspending after a slot passed starts nothing; the next slot runs; the skipped one is reported once", async () => {
        const { name, h1 } = await fresh({ missedRunPolicy: "Skip", suspend: true });
        h.clock.set(new Date(h1 + 20 * MIN));
        await h.reconcile(name);
        await patch(name, (cj) => (cj.spec.suspend = false));
        await h.reconcile(name);
        await h.reconcile(name);
        assert.deepEqual(await slots(name), [], "unsuspending starts no Job");
        const st = (await h.get(name)).status!;
        assert.equal(st.lastMissedTime, iso(h1));
        assert.equal(st.nextScheduleTime, iso(h1 + HOUR));
        assert.deepEqual(
          h.takeEvents().filter((e) => e.includes("MissSchedule")),
          [
            `Warning MissSchedule Missed scheduled time to start a job: ${iso(h1)} (missedRunPolicy Skip runs only the time status.nextScheduleTime announced (the operator was down, or the CronJob suspended, stopped or blocked by a Forbid run))`,
          ],
        );
        h.clock.set(new Date(h1 + HOUR + 100));
        await h.reconcile(name);
        assert.deepEqual(await slots(name), [iso(h1 + HOUR)]);
      });

      it("a CronJob no pass saw before its first slot still gets that slot (a busy controller at creation)", async () => {
        const name = `pol-${++n}`;
        const created = await h.createCronJob(name, { missedRunPolicy: "Skip" });
        const h1 = nextHour(new Date(created.metadata.creationTimestamp!).getTime());
        h.clock.set(new Date(h1 + 20_000));
        await h.reconcile(name);
        assert.deepEqual(await slots(name), [iso(h1)]);
      });

      it("the slot status announced runs however late it is reached (a busy controller skips nothing)", async () => {
        const { name, h1 } = await fresh({ missedRunPolicy: "Skip" });
        assert.equal((await h.get(name)).status?.nextScheduleTime, iso(h1));
        h.clock.set(new Date(h1 + 40 * MIN));
        await h.reconcile(name);
        assert.deepEqual(await slots(name), [iso(h1)]);
      });

      it("slots that passed while no controller ran do not run, also after a restart", async () => {
        const { name, h1 } = await fresh({ missedRunPolicy: "Skip" });
        h.clock.set(new Date(h1 + 2 * HOUR + 5 * MIN));
        await reconcileAfterRestart(name);
        await reconcileAfterRestart(name);
        assert.deepEqual(await slots(name), []);
        assert.equal((await h.get(name)).status?.lastMissedTime, iso(h1 + 2 * HOUR));
        h.clock.set(new Date(h1 + 3 * HOUR));
        await reconcileAfterRestart(name);
        assert.deepEqual(await slots(name), [iso(h1 + 3 * HOUR)]);
      });

      it("with Forbid, a slot blocked by a running Job does not run when it finishes", async () => {
        const { name, h1 } = await fresh({ missedRunPolicy: "Skip", concurrencyPolicy: "Forbid" });
        h.clock.set(new Date(h1));
        await h.reconcile(name);
        await h.startJob(jobName(name, h1), iso(h1));
        h.clock.set(new Date(h1 + HOUR));
        await h.reconcile(name); // blocked: JobAlreadyActive
        await finish(name, h1, "Complete");
        h.clock.set(new Date(h1 + HOUR + 10 * MIN));
        await h.reconcile(name);
        assert.deepEqual(await slots(name), [iso(h1)]);
        assert.equal((await h.get(name)).status?.lastMissedTime, iso(h1 + HOUR));
      });

      it("an outage over 4 slots, the first of them announced: none runs, the next slot does, the newest is reported once", async () => {
        const { name, h1 } = await fresh({ missedRunPolicy: "Skip" });
        assert.equal((await h.get(name)).status?.nextScheduleTime, iso(h1), "announced before the outage");
        // Down from h1 - 30m to h1 + 3h + 5m: h1, h1+1h, h1+2h and h1+3h passed with no controller.
        h.clock.set(new Date(h1 + 3 * HOUR + 5 * MIN));
        await reconcileAfterRestart(name);
        await reconcileAfterRestart(name);
        h.clock.set(new Date(h1 + 3 * HOUR + 20 * MIN));
        await reconcileAfterRestart(name);
        await h.reconcile(name);
        assert.deepEqual(await slots(name), [], "no slot of the outage runs, the announced one neither");
        const st = (await h.get(name)).status!;
        assert.equal(st.lastMissedTime, iso(h1 + 3 * HOUR));
        assert.equal(st.lastScheduleTime, undefined);
        assert.equal(st.nextScheduleTime, iso(h1 + 4 * HOUR));
        const missed = h.takeEvents().filter((e) => e.includes("MissSchedule"));
        assert.equal(missed.length, 1, missed.join("\n"));
        assert.ok(missed[0]!.includes(iso(h1 + 3 * HOUR)), missed[0]);
        h.clock.set(new Date(h1 + 4 * HOUR + 100));
        await reconcileAfterRestart(name);
        await h.reconcile(name);
        assert.deepEqual(await slots(name), [iso(h1 + 4 * HOUR)]);
        assert.deepEqual(
          h.takeEvents().filter((e) => e.includes("MissSchedule")),
          [],
        );
      });
    });

    describe("missedRunPolicy RunAll", () => {
      it("after an outage, every missed slot runs once, oldest first; repeats start nothing", async () => {
        const { name, h1 } = await fresh({ missedRunPolicy: "RunAll", maxCatchUpRuns: 10 });
        h.clock.set(new Date(h1 + 3 * HOUR + 5 * MIN));
        await h.reconcile(name);
        const want = [0, 1, 2, 3].map((i) => iso(h1 + i * HOUR));
        assert.deepEqual(await slots(name), want);
        assert.equal((await h.get(name)).status?.lastScheduleTime, want[3]);
        assert.deepEqual(
          h.takeEvents().filter((e) => e.includes("SuccessfulCreate")),
          [0, 1, 2, 3].map((i) => `Normal SuccessfulCreate Created job ${jobName(name, h1 + i * HOUR)}`),
        );
        await h.reconcile(name);
        await reconcileAfterRestart(name);
        assert.deepEqual(await slots(name), want);
      });

      it("maxCatchUpRuns per pass: the rest follow at once, across a restart and a leader change, none twice", async () => {
        const { name, h1 } = await fresh({ missedRunPolicy: "RunAll", maxCatchUpRuns: 2 });
        h.clock.set(new Date(h1 + 4 * HOUR + 5 * MIN));
        const r1 = await h.reconcile(name);
        assert.deepEqual(await slots(name), [iso(h1), iso(h1 + HOUR)]);
        assert.ok((r1.requeueAfterMs ?? Infinity) <= 1000, `requeued at once: ${JSON.stringify(r1)}`);
        await reconcileAfterRestart(name);
        assert.deepEqual(
          await slots(name),
          [0, 1, 2, 3].map((i) => iso(h1 + i * HOUR)),
        );
        const r3 = await reconcileAfterRestart(name);
        assert.deepEqual(
          await slots(name),
          [0, 1, 2, 3, 4].map((i) => iso(h1 + i * HOUR)),
        );
        assert.equal(r3.requeueAfterMs, h1 + 5 * HOUR - h.clock.now().getTime() + 10, "then the next slot");
      });

      it("a status write lost after the creates (a crash): the Jobs are found, none is created again", async () => {
        const { name, h1 } = await fresh({ missedRunPolicy: "RunAll" });
        const before = (await h.get(name)).status;
        h.clock.set(new Date(h1 + 2 * HOUR + MIN));
        await h.reconcile(name);
        // Put status back as it was before the pass, as if the process died before its status write.
        const cj = await h.get(name);
        cj.status = before;
        await h.client.updateStatus(CronJobKind, cj);
        await h.settle(name);
        await reconcileAfterRestart(name);
        assert.deepEqual(
          await slots(name),
          [0, 1, 2].map((i) => iso(h1 + i * HOUR)),
        );
        assert.equal((await h.get(name)).status?.lastScheduleTime, iso(h1 + 2 * HOUR));
      });

      it("with Forbid, the missed slots run one after the other, each when the one before finished", async () => {
        const { name, h1 } = await fresh({ missedRunPolicy: "RunAll", concurrencyPolicy: "Forbid" });
        h.clock.set(new Date(h1 + 2 * HOUR + 5 * MIN));
        await h.reconcile(name);
        assert.deepEqual(await slots(name), [iso(h1)]);
        await h.startJob(jobName(name, h1), iso(h1 + 2 * HOUR));
        await h.reconcile(name);
        assert.deepEqual(await slots(name), [iso(h1)], "waits while it runs");
        await finish(name, h1, "Complete");
        await reconcileAfterRestart(name);
        assert.deepEqual(await slots(name), [iso(h1), iso(h1 + HOUR)]);
        await finish(name, h1 + HOUR, "Complete");
        await h.reconcile(name);
        assert.deepEqual(
          await slots(name),
          [0, 1, 2].map((i) => iso(h1 + i * HOUR)),
        );
      });

      it("only slots within startingDeadlineSeconds; the newest expired one is reported", async () => {
        const { name, h1 } = await fresh({ missedRunPolicy: "RunAll", startingDeadlineSeconds: 2 * 3600 + 600 });
        h.clock.set(new Date(h1 + 4 * HOUR + 5 * MIN));
        await h.reconcile(name);
        assert.deepEqual(
          await slots(name),
          [2, 3, 4].map((i) => iso(h1 + i * HOUR)),
        );
        assert.equal((await h.get(name)).status?.lastMissedTime, iso(h1 + HOUR));
      });

      it("with Replace, only the newest runs; the older ones are reported", async () => {
        const { name, h1 } = await fresh({ missedRunPolicy: "RunAll", concurrencyPolicy: "Replace" });
        h.clock.set(new Date(h1 + 2 * HOUR + 5 * MIN));
        await h.reconcile(name);
        assert.deepEqual(await slots(name), [iso(h1 + 2 * HOUR)]);
        assert.equal((await h.get(name)).status?.lastMissedTime, iso(h1 + HOUR));
      });

      it("500 missed slots with Allow: the newest 100 run, maxCatchUpRuns per pass; the Event counts the 400 not run", async () => {
        const { name, h1 } = await fresh({ missedRunPolicy: "RunAll", maxCatchUpRuns: 25 });
        // Down for 500 slots: h1 … h1+499h.
        h.clock.set(new Date(h1 + 499 * HOUR + 5 * MIN));
        await h.reconcile(name);
        assert.deepEqual(
          await slots(name),
          Array.from({ length: 25 }, (_, i) => iso(h1 + (400 + i) * HOUR)),
          "the oldest of the newest 100 first, 25 in a pass",
        );
        let passes = 1;
        while (passes < 10) {
          passes++;
          const r = await reconcileAfterRestart(name);
          if ((r.requeueAfterMs ?? Infinity) > 1000) break; // then the next slot
        }
        assert.equal(passes, 4, "100 Jobs in passes of 25");
        await h.reconcile(name);
        assert.deepEqual(
          await slots(name),
          Array.from({ length: 100 }, (_, i) => iso(h1 + (400 + i) * HOUR)),
        );
        assert.equal((await h.get(name)).status?.lastMissedTime, iso(h1 + 399 * HOUR));
        const missed = h.takeEvents().filter((e) => e.includes("MissSchedule"));
        assert.equal(missed.length, 1, missed.join("\n"));
        assert.match(missed[0]!, /\b400\b/, `the exact count of missed times not run: ${missed[0]}`);
        assert.doesNotMatch(missed[0]!, /Replace/, `concurrencyPolicy is Allow: ${missed[0]}`);
      });

      it("500 missed slots with Replace: only the newest runs; the Event counts the 499 not run", async () => {
        const { name, h1 } = await fresh({ missedRunPolicy: "RunAll", concurrencyPolicy: "Replace" });
        h.clock.set(new Date(h1 + 499 * HOUR + 5 * MIN));
        await h.reconcile(name);
        await reconcileAfterRestart(name);
        assert.deepEqual(await slots(name), [iso(h1 + 499 * HOUR)]);
        assert.equal((await h.get(name)).status?.lastMissedTime, iso(h1 + 498 * HOUR));
        const missed = h.takeEvents().filter((e) => e.includes("MissSchedule"));
        assert.equal(missed.length, 1, missed.join("\n"));
        assert.match(missed[0]!, /\b499\b/, `the exact count of missed times not run: ${missed[0]}`);
        assert.match(missed[0]!, /Replace/, missed[0]);
      });
    });

    describe("stopAfterConsecutiveFailures", () => {
      async function failSlot(name: string, slot: number) {
        h.clock.set(new Date(slot));
        await h.reconcile(name);
        await finish(name, slot, "Failed");
        h.clock.set(new Date(slot + 2 * MIN));
        await h.reconcile(name);
      }

      it("stops after N failures in a row: condition, Event, no more slots; run-now still works", async () => {
        const { name, h1 } = await fresh({ stopAfterConsecutiveFailures: 2, failedJobsHistoryLimit: 5 });
        await failSlot(name, h1);
        assert.equal((await h.get(name)).status?.consecutiveFailures, 1);
        assert.equal((await h.get(name)).status?.stopped, undefined);
        await failSlot(name, h1 + HOUR);
        const st = (await h.get(name)).status!;
        assert.deepEqual(st.stopped, { time: iso(h1 + HOUR + 2 * MIN), failures: 2, generation: 1 });
        assert.equal(st.nextScheduleTime, undefined);
        assert.equal(condition(await h.get(name), "Available")?.reason, "StoppedAfterFailures");
        assert.equal(condition(await h.get(name), "Degraded")?.reason, "StoppedAfterFailures");
        assert.ok(h.takeEvents().some((e) => e.startsWith("Warning StoppedAfterFailures Stopped scheduling after 2")));
        h.clock.set(new Date(h1 + 3 * HOUR + MIN));
        await reconcileAfterRestart(name);
        assert.deepEqual(
          await slots(name),
          [iso(h1), iso(h1 + HOUR)],
          "no slot runs while stopped, after a restart too",
        );
        assert.ok((await h.get(name)).status?.stopped, "the stop survives a restart");
        await patch(name, (cj) => (cj.metadata.annotations = { [RUN_NOW_ANNOTATION]: "try-fix" }));
        await h.reconcile(name);
        assert.ok((await h.jobs(name)).some((j) => j.metadata?.name === manualJobName(name, "try-fix")));
      });

      it("the resume annotation resumes it once and counts from 0; an old annotation does not resume a later stop", async () => {
        const { name, h1 } = await fresh({ stopAfterConsecutiveFailures: 1, failedJobsHistoryLimit: 5 });
        await failSlot(name, h1);
        assert.ok((await h.get(name)).status?.stopped);
        await patch(name, (cj) => (cj.metadata.annotations = { [RESUME_ANNOTATION]: "r1" }));
        await h.reconcile(name);
        let st = (await h.get(name)).status!;
        assert.equal(st.stopped, undefined);
        assert.equal(st.consecutiveFailures, 0);
        assert.equal(st.lastResumeRequest, "r1");
        assert.ok(
          h.takeEvents().some((e) => e.startsWith('Normal Resumed Scheduling resumed by the resume request "r1"')),
        );
        assert.equal(st.nextScheduleTime, iso(h1 + HOUR));
        await failSlot(name, h1 + HOUR);
        st = (await h.get(name)).status!;
        assert.equal(st.stopped?.failures, 1, "stopped again: the old request does not resume it");
      });

      it("a spec change resumes it", async () => {
        const { name, h1 } = await fresh({ stopAfterConsecutiveFailures: 1, failedJobsHistoryLimit: 5 });
        await failSlot(name, h1);
        await patch(name, (cj) => (cj.spec.stopAfterConsecutiveFailures = 3));
        await h.reconcile(name);
        const st = (await h.get(name)).status!;
        assert.equal(st.stopped, undefined);
        assert.equal(st.consecutiveFailures, 0);
        h.clock.set(new Date(h1 + HOUR));
        await h.reconcile(name);
        assert.deepEqual(await slots(name), [iso(h1), iso(h1 + HOUR)]);
      });

      it("a success sets the count to 0; running Jobs are not touched by a stop", async () => {
        const { name, h1 } = await fresh({ stopAfterConsecutiveFailures: 2, concurrencyPolicy: "Allow" });
        await failSlot(name, h1);
        h.clock.set(new Date(h1 + HOUR));
        await h.reconcile(name);
        await finish(name, h1 + HOUR, "Complete");
        await h.reconcile(name);
        assert.equal((await h.get(name)).status?.consecutiveFailures, 0);
        // Two failures while a third Job runs: stopped, the running Job stays.
        h.clock.set(new Date(h1 + 2 * HOUR));
        await h.reconcile(name);
        h.clock.set(new Date(h1 + 3 * HOUR));
        await h.reconcile(name);
        h.clock.set(new Date(h1 + 4 * HOUR));
        await h.reconcile(name);
        await finish(name, h1 + 2 * HOUR, "Failed");
        await finish(name, h1 + 3 * HOUR, "Failed");
        await h.reconcile(name);
        const st = (await h.get(name)).status!;
        assert.equal(st.stopped?.failures, 2);
        assert.deepEqual(
          st.active?.map((r) => r.name),
          [jobName(name, h1 + 4 * HOUR)],
        );
      });

      it("without the field nothing is counted: a CronJob that does not use it keeps its status", async () => {
        const { name, h1 } = await fresh({});
        await failSlot(name, h1);
        const st = (await h.get(name)).status!;
        assert.equal(st.consecutiveFailures, undefined);
        assert.equal(st.stopped, undefined);
      });
    });

    describe("backfill", () => {
      async function request(name: string, from: number, to: number, parallelism = 1, id = "bf-1") {
        await patch(name, (cj) => {
          cj.metadata.annotations = {
            ...cj.metadata.annotations,
            [BACKFILL_ANNOTATION]: backfillAnnotationValue({ id, from: new Date(from), to: new Date(to), parallelism }),
          };
        });
      }
      const backfillJobs = async (name: string) =>
        (await h.jobs(name))
          .filter((j) => j.metadata?.annotations?.[BACKFILL_REQUEST_ANNOTATION] !== undefined)
          .map((j) => j.metadata!.annotations![SCHEDULED_AT_ANNOTATION]!)
          .sort();
      /** The slots of the scheduled runs (Jobs not of a backfill). */
      const scheduledSlots = async (name: string) =>
        (await h.jobs(name))
          .filter((j) => j.metadata?.annotations?.[BACKFILL_REQUEST_ANNOTATION] === undefined)
          .map((j) => j.metadata!.annotations![SCHEDULED_AT_ANNOTATION]!)
          .sort();
      const jobNames = async (name: string) => (await h.jobs(name)).map((j) => j.metadata!.name!);
      const running = async (name: string) =>
        (await h.jobs(name))
          .filter((j) => j.metadata?.annotations?.[BACKFILL_REQUEST_ANNOTATION] !== undefined)
          .filter(
            (j) => !j.status?.conditions?.some((c) => ["Complete", "Failed"].includes(c.type) && c.status === "True"),
          )
          .map((j) => j.metadata!.name!);

      /** A CronJob that ran its slots for 6 hours (h1 … h1+5h, Jobs finished), now at h1+6h+30m. */
      async function withHistory(spec: Parameters<ReconcileHarness["createCronJob"]>[1] = {}) {
        const { name, h1 } = await fresh({ successfulJobsHistoryLimit: 20, ...spec });
        h.clock.set(new Date(h1 + 5 * HOUR + 30 * MIN));
        // The schedule ran only the newest (h1+5h): h1 … h1+4h are the "broken days" to backfill.
        await h.reconcile(name);
        await finish(name, h1 + 5 * HOUR, "Complete");
        h.clock.set(new Date(h1 + 5 * HOUR + 40 * MIN));
        await h.reconcile(name);
        h.takeEvents();
        return { name, h1 };
      }

      it("runs every slot of the range once, oldest first, parallelism at a time; a slot with its Job is skipped", async () => {
        const { name, h1 } = await withHistory();
        await request(name, h1 - 1, h1 + 5 * HOUR, 2);
        await h.reconcile(name);
        assert.deepEqual(await backfillJobs(name), [iso(h1), iso(h1 + HOUR)]);
        let bf = (await h.get(name)).status!.backfill!;
        assert.deepEqual(
          { phase: bf.phase, total: bf.total, created: bf.created, skipped: bf.skipped, lastSlot: bf.lastSlot },
          { phase: "Running", total: 6, created: 2, skipped: 0, lastSlot: iso(h1 + HOUR) },
        );
        await h.reconcile(name);
        assert.equal((await backfillJobs(name)).length, 2, "two run: the third waits");
        await finish(name, h1, "Complete");
        await reconcileAfterRestart(name);
        assert.deepEqual(await backfillJobs(name), [iso(h1), iso(h1 + HOUR), iso(h1 + 2 * HOUR)]);
        await finish(name, h1 + HOUR, "Complete");
        await finish(name, h1 + 2 * HOUR, "Complete");
        await h.reconcile(name);
        await finish(name, h1 + 3 * HOUR, "Complete");
        await h.reconcile(name);
        assert.deepEqual(
          await backfillJobs(name),
          [0, 1, 2, 3, 4].map((i) => iso(h1 + i * HOUR)),
        );
        bf = (await h.get(name)).status!.backfill!;
        assert.deepEqual(
          { phase: bf.phase, created: bf.created, skipped: bf.skipped },
          { phase: "Complete", created: 5, skipped: 1 },
          "h1+5h had its scheduled Job",
        );
        const events = h.takeEvents();
        assert.ok(events.some((e) => e.startsWith('Normal BackfillStarted Backfill "bf-1": 6 slots')));
        assert.ok(
          events.includes('Normal BackfillComplete Backfill "bf-1" complete: 5 slots run, 1 already had their Job'),
        );
        assert.equal((await h.get(name)).status?.lastScheduleTime, iso(h1 + 5 * HOUR), "lastScheduleTime unchanged");
        for (let i = 0; i < 3; i++) await reconcileAfterRestart(name);
        assert.equal((await backfillJobs(name)).length, 5, "a finished request runs nothing again");
      });

      it("a status write lost after a create (a crash): the Job is found and counted, never created twice", async () => {
        const { name, h1 } = await withHistory({ successfulJobsHistoryLimit: 0 });
        await request(name, h1, h1 + 2 * HOUR, 3);
        const before = (await h.get(name)).status;
        await h.reconcile(name);
        assert.equal((await backfillJobs(name)).length, 3);
        for (const i of [0, 1, 2]) await finish(name, h1 + i * HOUR, "Complete");
        const cj = await h.get(name);
        cj.status = before;
        await h.client.updateStatus(CronJobKind, cj);
        await h.settle(name);
        await reconcileAfterRestart(name);
        await reconcileAfterRestart(name);
        const bf = (await h.get(name)).status!.backfill!;
        assert.deepEqual({ phase: bf.phase, created: bf.created }, { phase: "Complete", created: 3 });
        await reconcileAfterRestart(name);
        assert.equal((await backfillJobs(name)).length, 0, "history limit 0: deleted once recorded");
        assert.deepEqual(
          h.takeEvents().filter((e) => e.startsWith("Normal SuccessfulCreate")).length,
          3,
          "three creates in all",
        );
      });

      it("a crash after history cleanup, before the status write, never runs a slot twice (history limit 0)", async () => {
        const { name, h1 } = await withHistory({ successfulJobsHistoryLimit: 0 });
        const crashing = new CronJobReconciler({
          client: new Proxy(h.client, {
            get(target, prop, receiver) {
              if (prop === "updateStatus") return async () => Promise.reject(new Error("the process died"));
              const v = Reflect.get(target, prop, receiver) as unknown;
              return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
            },
          }),
          cache: h.cache,
          recorder: h.recorder,
          clock: h.clock,
        });
        const crash = async () => {
          await crashing
            .reconcile(
              { namespace: h.namespace, name },
              { log: discardLogger, reconcileID: "crash", signal: new AbortController().signal },
            )
            .then(
              () => assert.fail("the status write should have failed"),
              () => undefined,
            );
          await h.settle(name);
        };
        await request(name, h1, h1 + HOUR, 2);
        await crash(); // both created, status never written
        await finish(name, h1, "Complete");
        await finish(name, h1 + HOUR, "Complete");
        await crash(); // history cleanup (limit 0) must not delete them: status has not recorded them
        await reconcileAfterRestart(name);
        await reconcileAfterRestart(name);
        const creates = h.takeEvents().filter((e) => e.startsWith("Normal SuccessfulCreate"));
        assert.equal(creates.length, 2, creates.join("\n"));
        assert.deepEqual((await h.get(name)).status?.backfill?.phase, "Complete");
      });

      it("with Forbid, one Job at a time, also not alongside a scheduled run", async () => {
        const { name, h1 } = await withHistory({ concurrencyPolicy: "Forbid" });
        await request(name, h1, h1 + HOUR, 5);
        await h.reconcile(name);
        await h.reconcile(name);
        assert.deepEqual(await backfillJobs(name), [iso(h1)]);
        await finish(name, h1, "Complete");
        await h.reconcile(name);
        assert.deepEqual(await backfillJobs(name), [iso(h1), iso(h1 + HOUR)]);
      });

      it("removing the annotation cancels it: no more Jobs, the started ones keep running", async () => {
        const { name, h1 } = await withHistory();
        await request(name, h1, h1 + 3 * HOUR);
        await h.reconcile(name);
        await patch(name, (cj) => delete cj.metadata.annotations![BACKFILL_ANNOTATION]);
        await h.reconcile(name);
        await finish(name, h1, "Complete");
        await h.reconcile(name);
        assert.deepEqual(await backfillJobs(name), [iso(h1)]);
        assert.equal((await h.get(name)).status?.backfill?.phase, "Cancelled");
        assert.ok(
          h.takeEvents().some((e) => e.startsWith('Normal BackfillCancelled Backfill "bf-1" cancelled after 1 of 4')),
        );
      });

      it("a range over 1000 slots, a range in the future and a malformed request are refused, saying why", async () => {
        const { name, h1 } = await withHistory();
        await request(name, h1 - 1001 * HOUR, h1);
        await h.reconcile(name);
        let bf = (await h.get(name)).status!.backfill!;
        assert.equal(bf.phase, "Refused");
        assert.match(bf.message!, /the range holds 1002 slots; at most 1000/);
        await request(name, h1, h1 + 10 * HOUR, 1, "bf-2");
        await h.reconcile(name);
        bf = (await h.get(name)).status!.backfill!;
        assert.deepEqual([bf.id, bf.phase], ["bf-2", "Refused"]);
        assert.match(bf.message!, /is in the future/);
        await patch(name, (cj) => (cj.metadata.annotations![BACKFILL_ANNOTATION] = "yesterday please"));
        await h.reconcile(name);
        assert.match((await h.get(name)).status!.backfill!.message!, /must be JSON/);
        assert.deepEqual(await backfillJobs(name), []);
        assert.equal(h.takeEvents().filter((e) => e.startsWith("Warning BackfillRefused")).length, 3);
      });

      it("runs while the CronJob is suspended (an explicit request, like run-now)", async () => {
        const { name, h1 } = await withHistory();
        await patch(name, (cj) => (cj.spec.suspend = true));
        await request(name, h1, h1 + HOUR, 2);
        await h.reconcile(name);
        assert.deepEqual(await backfillJobs(name), [iso(h1), iso(h1 + HOUR)]);
      });

      it("on a CronJob that has not run yet, a backfill of a slot before its creation starts no scheduled run", async () => {
        const { name, h1 } = await fresh(); // no Job yet; the clock at h1 - 30m
        const before = h1 - 3 * HOUR; // hours before the CronJob existed
        await request(name, before, before);
        await h.reconcile(name);
        await h.reconcile(name);
        await reconcileAfterRestart(name);
        assert.deepEqual(
          await jobNames(name),
          [jobName(name, before)],
          "the backfill's Job only: no scheduled run of a slot from before the CronJob existed",
        );
        assert.deepEqual(await backfillJobs(name), [iso(before)]);
        const st = (await h.get(name)).status!;
        assert.equal(st.backfill?.phase, "Complete");
        assert.equal(st.lastScheduleTime, undefined, "a backfill's Job is not a scheduled run");
        assert.equal(st.nextScheduleTime, iso(h1));
        h.clock.set(new Date(h1 + 100));
        await h.reconcile(name);
        assert.deepEqual(await scheduledSlots(name), [iso(h1)], "the first slot after creation runs");
        assert.equal((await h.get(name)).status?.lastScheduleTime, iso(h1));
      });

      it("on a CronJob that has not run yet, with RunAll: a backfill before its creation starts no catch-up of older slots", async () => {
        const { name, h1 } = await fresh({ missedRunPolicy: "RunAll" });
        const before = h1 - 3 * HOUR;
        await request(name, before, before);
        await h.reconcile(name);
        await h.reconcile(name);
        await reconcileAfterRestart(name);
        assert.deepEqual(
          await jobNames(name),
          [jobName(name, before)],
          "the backfill's Job only: no scheduled run of a slot from before the CronJob existed",
        );
        assert.equal(
          (await h.get(name)).status?.lastScheduleTime,
          undefined,
          "a backfill's Job is not a scheduled run",
        );
        h.clock.set(new Date(h1 + 100));
        await h.reconcile(name);
        assert.deepEqual(await scheduledSlots(name), [iso(h1)], "the first slot after creation runs, alone");
      });

      it("a backfill of a slot newer than lastScheduleTime (while suspended) does not move it; unsuspended, the newest missed slot runs", async () => {
        const { name, h1 } = await fresh();
        h.clock.set(new Date(h1));
        await h.reconcile(name);
        await finish(name, h1, "Complete");
        await patch(name, (cj) => (cj.spec.suspend = true));
        h.clock.set(new Date(h1 + 10 * MIN));
        await h.reconcile(name);
        // Suspended over h1+1h and h1+2h; h1+1h is backfilled meanwhile (a suspended CronJob backfills).
        h.clock.set(new Date(h1 + 2 * HOUR + 30 * MIN));
        await request(name, h1 + HOUR, h1 + HOUR);
        await h.reconcile(name);
        await h.reconcile(name);
        assert.deepEqual(await backfillJobs(name), [iso(h1 + HOUR)]);
        assert.equal(
          (await h.get(name)).status?.lastScheduleTime,
          iso(h1),
          "a backfill's Job does not move lastScheduleTime",
        );
        // RunLatest owes the newest slot missed since h1: h1+2h (not the backfilled h1+1h).
        await patch(name, (cj) => (cj.spec.suspend = false));
        h.clock.set(new Date(h1 + 2 * HOUR + 40 * MIN));
        await h.reconcile(name);
        await h.reconcile(name);
        assert.deepEqual(await scheduledSlots(name), [iso(h1), iso(h1 + 2 * HOUR)]);
        assert.deepEqual(await backfillJobs(name), [iso(h1 + HOUR)]);
        assert.equal((await h.get(name)).status?.lastScheduleTime, iso(h1 + 2 * HOUR));
      });

      it("after an outage, a backfill of an older missed slot: it runs, and the schedule runs its own (the newest missed)", async () => {
        const { name, h1 } = await fresh();
        h.clock.set(new Date(h1));
        await h.reconcile(name);
        await finish(name, h1, "Complete");
        // Down from h1 + 1m until h1 + 3h + 30m (h1+1h, h1+2h and h1+3h missed); h1+2h is backfilled.
        h.clock.set(new Date(h1 + 3 * HOUR + 30 * MIN));
        await request(name, h1 + 2 * HOUR, h1 + 2 * HOUR);
        await reconcileAfterRestart(name);
        await reconcileAfterRestart(name);
        await h.reconcile(name);
        assert.deepEqual(
          await scheduledSlots(name),
          [iso(h1), iso(h1 + 3 * HOUR)],
          "RunLatest: the newest missed runs",
        );
        assert.deepEqual(await backfillJobs(name), [iso(h1 + 2 * HOUR)]);
        assert.equal((await h.get(name)).status?.lastScheduleTime, iso(h1 + 3 * HOUR));
      });

      it("after an outage, a backfill of the newest missed slot: that slot runs once, no older one, the next slot on time", async () => {
        const { name, h1 } = await fresh();
        h.clock.set(new Date(h1));
        await h.reconcile(name);
        await finish(name, h1, "Complete");
        // h1+3h is both the slot RunLatest owes after the outage and the backfilled one: one Job for it.
        h.clock.set(new Date(h1 + 3 * HOUR + 30 * MIN));
        await request(name, h1 + 3 * HOUR, h1 + 3 * HOUR);
        await reconcileAfterRestart(name);
        await reconcileAfterRestart(name);
        await h.reconcile(name);
        assert.deepEqual(await jobNames(name), [jobName(name, h1), jobName(name, h1 + 3 * HOUR)]);
        const bf = (await h.get(name)).status!.backfill!;
        assert.deepEqual([bf.phase, bf.created + bf.skipped], ["Complete", 1]);
        h.clock.set(new Date(h1 + 4 * HOUR + 100));
        await h.reconcile(name);
        await h.reconcile(name);
        assert.deepEqual(
          await jobNames(name),
          [0, 3, 4].map((i) => jobName(name, h1 + i * HOUR)),
        );
        assert.equal((await h.get(name)).status?.lastScheduleTime, iso(h1 + 4 * HOUR));
      });

      it("RunAll after an outage: a backfill of the newest missed slot does not make the catch-up skip the older ones", async () => {
        const { name, h1 } = await fresh({ missedRunPolicy: "RunAll", maxCatchUpRuns: 1 });
        h.clock.set(new Date(h1));
        await h.reconcile(name);
        await finish(name, h1, "Complete");
        // h1+1h, h1+2h and h1+3h missed; one catch-up run per pass; h1+3h is backfilled.
        h.clock.set(new Date(h1 + 3 * HOUR + 30 * MIN));
        await request(name, h1 + 3 * HOUR, h1 + 3 * HOUR);
        for (let i = 0; i < 5; i++) await reconcileAfterRestart(name);
        assert.deepEqual(
          await slots(name),
          [0, 1, 2, 3].map((i) => iso(h1 + i * HOUR)),
          "every missed slot once",
        );
        for (const i of [1, 2]) assert.ok((await scheduledSlots(name)).includes(iso(h1 + i * HOUR)), `h1+${i}h`);
        h.clock.set(new Date(h1 + 4 * HOUR + 100));
        await h.reconcile(name);
        assert.deepEqual(
          await slots(name),
          [0, 1, 2, 3, 4].map((i) => iso(h1 + i * HOUR)),
        );
      });

      it("parallelism 1 holds while the Job cache has not seen the request's running Job yet", async () => {
        const { name, h1 } = await withHistory();
        await request(name, h1, h1 + 2 * HOUR, 1);
        await h.reconcile(name);
        assert.deepEqual(await backfillJobs(name), [iso(h1)]);
        // The next pass's Job cache lags: it does not show that Job yet (status.active and the apiserver do).
        await h.reconcile(name, { unseenJobs: [jobName(name, h1)] });
        assert.deepEqual(await backfillJobs(name), [iso(h1)], "no second Job while the first runs");
        await h.reconcile(name);
        assert.deepEqual(await backfillJobs(name), [iso(h1)]);
        await finish(name, h1, "Complete");
        await h.reconcile(name);
        assert.deepEqual(await backfillJobs(name), [iso(h1), iso(h1 + HOUR)]);
      });

      it("parallelism 2 holds while the Job cache has not seen the newest of the request's Jobs: never 3 running", async () => {
        const { name, h1 } = await withHistory();
        await request(name, h1, h1 + 4 * HOUR, 2);
        await h.reconcile(name);
        assert.deepEqual(await backfillJobs(name), [iso(h1), iso(h1 + HOUR)]);
        await finish(name, h1, "Complete");
        await h.reconcile(name);
        assert.deepEqual(await running(name), [jobName(name, h1 + HOUR), jobName(name, h1 + 2 * HOUR)]);
        await h.reconcile(name, { unseenJobs: [jobName(name, h1 + 2 * HOUR)] });
        assert.deepEqual(
          await running(name),
          [jobName(name, h1 + HOUR), jobName(name, h1 + 2 * HOUR)],
          "at most 2 of the request's Jobs run",
        );
        await h.reconcile(name);
        assert.deepEqual(
          await backfillJobs(name),
          [0, 1, 2].map((i) => iso(h1 + i * HOUR)),
        );
      });

      it("without the webhook, a value that does not parse is refused: status does not keep the previous request's id, from, to", async () => {
        const { name, h1 } = await withHistory();
        await request(name, h1, h1, 1, "bf-done");
        await h.reconcile(name);
        await finish(name, h1, "Complete");
        await h.reconcile(name);
        const done = (await h.get(name)).status!.backfill!;
        assert.deepEqual([done.id, done.phase], ["bf-done", "Complete"]);
        await patch(name, (cj) => (cj.metadata.annotations![BACKFILL_ANNOTATION] = "not json"));
        h.clock.set(new Date(h1 + 5 * HOUR + 45 * MIN));
        await h.reconcile(name);
        const bf = (await h.get(name)).status!.backfill!;
        assert.equal(bf.phase, "Refused");
        assert.ok(bf.message?.includes(BACKFILL_ANNOTATION), `the message names the annotation: ${bf.message}`);
        assert.notEqual(bf.id, done.id, "the refused value is not the previous request");
        assert.notEqual(bf.from, done.from, "the refused value is not the previous request");
        assert.notEqual(bf.to, done.to, "the refused value is not the previous request");
        assert.deepEqual(await backfillJobs(name), [iso(h1)]);
      });

      it("without the webhook, BackfillRefused for a value that does not parse is emitted once, not on every pass", async () => {
        const { name, h1 } = await withHistory();
        await request(name, h1, h1, 1, "bf-done");
        await h.reconcile(name);
        await finish(name, h1, "Complete");
        await h.reconcile(name);
        await patch(name, (cj) => (cj.metadata.annotations![BACKFILL_ANNOTATION] = "not json"));
        h.takeEvents();
        for (let i = 0; i < 5; i++) {
          h.clock.set(new Date(h.clock.now().getTime() + MIN));
          await h.reconcile(name);
        }
        const refused = h.takeEvents().filter((e) => e.startsWith("Warning BackfillRefused"));
        assert.equal(refused.length, 1, refused.join("\n"));
        assert.ok(refused[0]!.includes(BACKFILL_ANNOTATION), refused[0]);
      });
    });
  });
}
