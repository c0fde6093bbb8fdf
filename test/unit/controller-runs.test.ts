// The run path's pure parts: the one admission rule (controllers/runs.ts) over the triggers' rows
// (controllers/triggers.ts), and each trigger's books as step 4 reads them (controllers/observe.ts): which Jobs move
// lastScheduleTime, and which runs are unbooked.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  BACKFILL_ANNOTATION,
  backfillAnnotationValue,
  cronJobSchedules,
  type CronJobWire,
  BACKFILL_REQUEST_ANNOTATION,
  type Job,
  jobNameFor,
  manualJobName,
  RUN_NOW_ANNOTATION,
  RUN_NOW_REQUEST_ANNOTATION,
  SCHEDULED_AT_ANNOTATION,
} from "../../api/v1/index.ts";
import { isUnbookedRun, mayDelete, mayReplace, observeChildren } from "../../controllers/observe.ts";
import { admit } from "../../controllers/runs.ts";
import type { Trigger, TriggerRun } from "../../controllers/trigger.ts";
import { backfillBook } from "../../controllers/trigger-backfill.ts";
import { TRIGGERS } from "../../controllers/triggers.ts";

const CJ = "cj";
const slot = (iso: string) => new Date(iso);
const running = (name: string, annotations: Record<string, string> = {}): Job => ({
  metadata: { name, uid: `uid-${name}`, annotations },
  status: { active: 1, startTime: "2026-11-24T10:00:00Z" },
});
const backfillJob = (id: string, at: string): Job =>
  running(jobNameFor(CJ, slot(at)), { [SCHEDULED_AT_ANNOTATION]: at, [BACKFILL_REQUEST_ANNOTATION]: id });

/** The requests a trigger's source plans for a CronJob (its row bound to each), as step 9 gets them. */
function plans(
  trigger: Trigger,
  annotations: Record<string, string>,
  status: CronJobWire["status"] = {},
  due: Date[] = [],
) {
  const cronJob = {
    apiVersion: "batch.tutorial.kubebuilder.io/v1",
    kind: "CronJob",
    metadata: { name: CJ, namespace: "ns", uid: "cj-uid", creationTimestamp: "2026-11-20T00:00:00Z", annotations },
    spec: { schedule: "0 * * * *", jobTemplate: { spec: { template: { spec: { containers: [] } } } } },
    status,
  } as CronJobWire;
  const parsed = cronJobSchedules(cronJob, { namespace: "ns", name: CJ });
  assert.ok(parsed.ok);
  const input = {
    cronJob,
    status,
    schedules: parsed.schedules,
    written: parsed.schedules,
    due,
    anchor: undefined,
    now: slot("2026-11-24T12:00:00Z"),
    jobs: [],
  };
  return [...(trigger.plan(input)?.requests ?? [])];
}

/** The first request a trigger's source plans for a CronJob (its row bound to it), as step 9 gets it. */
function planned(...args: Parameters<typeof plans>) {
  const [first] = plans(...args);
  assert.ok(first, `${args[0].name} planned a request`);
  return first;
}

describe("run-now's source: a request runs once", () => {
  it("a request status already holds (lastRunNowRequest) is planned no more, even with its Job and record gone", () => {
    const runNowRow = TRIGGERS.find((t) => t.name === "runNow")!;
    assert.equal(plans(runNowRow, { [RUN_NOW_ANNOTATION]: "r1" }).length, 1);
    assert.deepEqual(plans(runNowRow, { [RUN_NOW_ANNOTATION]: "r1" }, { lastRunNowRequest: "r1" }), []);
    assert.equal(plans(runNowRow, { [RUN_NOW_ANNOTATION]: "r2" }, { lastRunNowRequest: "r1" }).length, 1);
  });
});

describe("admit: the one admission rule", () => {
  const [scheduleRow, runNowRow, backfillRow] = TRIGGERS;
  const scheduled = planned(scheduleRow, {}, {}, [slot("2026-11-24T11:00:00Z")]);
  const runNow = planned(runNowRow, { [RUN_NOW_ANNOTATION]: "r1" });
  const from = slot("2026-11-24T00:00:00Z");
  const to = slot("2026-11-24T06:00:00Z");
  const backfill = (parallelism: number): TriggerRun =>
    planned(
      backfillRow,
      { [BACKFILL_ANNOTATION]: backfillAnnotationValue({ id: "bf", from, to, parallelism }) },
      {
        backfill: {
          id: "bf",
          from: "2026-11-24T00:00:00Z",
          to: "2026-11-24T06:00:00Z",
          phase: "Running",
          total: 7,
          created: 0,
          skipped: 0,
        },
      },
    );
  const other = running("cj-1");

  it("runs anything when nothing runs, whatever the policy", () => {
    const requests: TriggerRun[] = [scheduled, runNow, backfill(1)];
    for (const policy of ["Allow", "Forbid", "Replace", undefined])
      for (const request of requests) assert.deepEqual(admit(policy, request, []), { run: true, replace: [] });
  });

  it("Allow runs beside a running Job; Forbid holds every trigger, with the trigger's own state Event", () => {
    assert.equal(admit("Allow", scheduled, [other]).run, true);
    const held = admit("Forbid", scheduled, [other]);
    assert.equal(held.run, false);
    assert.equal(!held.run && held.held?.reason, "JobAlreadyActive");
    assert.equal(!held.run && held.held?.count, "skipped_forbid");
    assert.deepEqual(!held.run && held.held?.once, { topic: "JobAlreadyActive", key: "2026-11-24T11:00:00Z" });
    const deferred = admit("Forbid", runNow, [other]);
    assert.equal(!deferred.run && deferred.held?.reason, "RunNowDeferred");
    assert.deepEqual(admit("Forbid", backfill(5), [other]), { run: false });
  });

  it("Replace deletes the running Jobs for a slot or a run-now request, never for a backfill (it waits)", () => {
    assert.deepEqual(admit("Replace", scheduled, [other]), { run: true, replace: [other] });
    assert.deepEqual(admit("Replace", runNow, [other]), { run: true, replace: [other] });
    assert.deepEqual(admit("Replace", backfill(5), [other]), { run: false });
  });

  it("Replace waits while the stored status has not booked a running Job's run (its name is the run's only trace)", () => {
    const unbooked = running("cj-2");
    const replaceable = (j: Job) => j !== unbooked;
    assert.deepEqual(admit("Replace", runNow, [other, unbooked], replaceable), { run: false });
    assert.deepEqual(admit("Replace", runNow, [other], replaceable), { run: true, replace: [other] });
  });

  it("a backfill's parallelism counts only its own running Jobs, whoever else runs", () => {
    const mine = [backfillJob("bf", "2026-11-24T03:00:00Z"), backfillJob("bf", "2026-11-24T04:00:00Z")];
    const theirs = [backfillJob("older", "2026-11-24T01:00:00Z"), other];
    assert.equal(admit("Allow", backfill(2), [...mine, ...theirs]).run, false);
    assert.equal(admit("Allow", backfill(3), [...mine, ...theirs]).run, true);
    assert.equal(admit("Allow", backfill(1), theirs).run, true);
  });

  it("the group: full at its limit (the Jobs holding it named), or its free place left to older runs", () => {
    const group = (running: string[], ahead: string[] = [], limit: number | null = 2) => ({
      view: { name: "g", limit: limit ?? undefined, running, ahead },
      key: "run for 2026-11-24T11:00:00Z",
    });
    const full = admit("Allow", scheduled, [], undefined, group(["a-1", "b-1"]));
    assert.deepEqual(!full.run && full.group, {
      reason: "ConcurrencyGroupFull",
      message: "held: group g is at 2/2: Jobs a-1, b-1",
      blockedBy: "a-1",
    });
    assert.equal(!full.run && full.held?.reason, "ConcurrencyGroupFull");
    const queue = admit("Allow", scheduled, [], undefined, group(["a-1"], ["b"]));
    assert.deepEqual(!queue.run && queue.group, {
      reason: "ConcurrencyGroupQueue",
      message: "held: group g is at 1/2 and older runs of b wait for the next place first",
    });
    assert.deepEqual(admit("Allow", scheduled, [], undefined, group(["a-1"])), { run: true, replace: [] });
    // Replace's running Job does not count: its place goes to the new run.
    assert.deepEqual(admit("Replace", scheduled, [other], undefined, group(["cj-1", "b-1"])), {
      run: true,
      replace: [other],
    });
    const missing = admit("Allow", scheduled, [], undefined, group([], [], null));
    assert.equal(!missing.run && missing.group?.reason, "ConcurrencyGroupNotFound");
    assert.equal(!missing.run && missing.held?.reason, "ConcurrencyGroupNotFound");
  });
});

describe("each trigger's books", () => {
  const base = {
    metadata: {
      name: CJ,
      uid: "cj-uid",
      annotations: {
        [RUN_NOW_ANNOTATION]: "r2",
        [BACKFILL_ANNOTATION]: JSON.stringify({
          id: "bf",
          from: "2026-11-24T00:00:00Z",
          to: "2026-11-24T06:00:00Z",
        }),
      },
    },
    status: {
      lastScheduleTime: "2026-11-24T10:00:00Z",
      lastRunNowRequest: "r1",
      backfill: {
        id: "bf",
        from: "2026-11-24T00:00:00Z",
        to: "2026-11-24T06:00:00Z",
        phase: "Running",
        total: 7,
        created: 3,
        skipped: 0,
        lastSlot: "2026-11-24T02:00:00Z",
      },
    },
  };
  const scheduledJob = (at: string) => running(jobNameFor(CJ, slot(at)), { [SCHEDULED_AT_ANNOTATION]: at });
  const manual = (request: string) => running(manualJobName(CJ, request), { [RUN_NOW_REQUEST_ANNOTATION]: request });

  it("lastScheduleTime is moved by the schedule's Jobs only, never by a backfill's or a run-now's", () => {
    const cronJob = { metadata: base.metadata, status: {} };
    const seen = observeChildren({
      triggers: TRIGGERS,
      cronJob,
      cached: [backfillJob("bf", "2026-11-23T05:00:00Z"), manual("r2")],
      live: new Map(),
      reported: new Set(),
      replaced: new Set(),
    });
    assert.equal(seen.status.lastScheduleTime, undefined);
    assert.equal(seen.status.lastRunNowRequest, "r2", "run-now's own book");
    const withSlot = observeChildren({
      triggers: TRIGGERS,
      cronJob,
      cached: [backfillJob("bf", "2026-11-24T05:00:00Z"), scheduledJob("2026-11-24T04:00:00Z")],
      live: new Map(),
      reported: new Set(),
      replaced: new Set(),
    });
    assert.equal(withSlot.status.lastScheduleTime, "2026-11-24T04:00:00Z");
  });

  it("a folded run whose Job is gone moves lastScheduleTime to the newest such slot, never to one already booked", () => {
    const cronJob = { metadata: base.metadata, status: { lastScheduleTime: "2026-11-24T10:00:00Z" } };
    const folded = (...ats: string[]) => new Map(ats.map((at) => [jobNameFor(CJ, slot(at)), slot(at).getTime()]));
    const observe = (f: Map<string, number>) =>
      observeChildren({
        triggers: TRIGGERS,
        cronJob,
        cached: [],
        live: new Map(),
        reported: new Set(),
        replaced: new Set(),
        folded: f,
      });
    // Two folded runs, both deleted before a write booked them: both ran, so the base is the newer slot.
    const both = observe(folded("2026-11-24T12:00:00Z", "2026-11-24T11:00:00Z"));
    assert.equal(both.status.lastScheduleTime, "2026-11-24T12:00:00Z");
    assert.equal(both.vanished, slot("2026-11-24T12:00:00Z").getTime());
    // One folded run gone, a newer one still running: lastScheduleTime is the newer, never moved back to the gone one.
    const newer = observeChildren({
      triggers: TRIGGERS,
      cronJob,
      cached: [scheduledJob("2026-11-24T12:00:00Z")],
      live: new Map(),
      reported: new Set(),
      replaced: new Set(),
      folded: folded("2026-11-24T12:00:00Z", "2026-11-24T11:00:00Z"),
    });
    assert.equal(newer.status.lastScheduleTime, "2026-11-24T12:00:00Z");
    assert.deepEqual(
      newer.status.active?.map((r) => r.name),
      [jobNameFor(CJ, slot("2026-11-24T12:00:00Z"))],
    );
    // A folded run of the slot the stored status already booked is no news: nothing vanished, nothing moves.
    const booked = observe(folded("2026-11-24T10:00:00Z", "2026-11-24T09:00:00Z"));
    assert.equal(booked.vanished, undefined);
    assert.equal(booked.status.lastScheduleTime, "2026-11-24T10:00:00Z");
  });

  it("a Job status.active lists that the live read finds finished is reported ended, not kept active", () => {
    const done: Job = {
      ...scheduledJob("2026-11-24T10:00:00Z"),
      status: {
        succeeded: 1,
        startTime: "2026-11-24T10:00:00Z",
        completionTime: "2026-11-24T10:00:30Z",
        conditions: [{ type: "Complete", status: "True", lastTransitionTime: "2026-11-24T10:00:30Z" }],
      },
    };
    const name = done.metadata!.name!;
    const seen = observeChildren({
      triggers: TRIGGERS,
      cronJob: {
        metadata: base.metadata,
        status: {
          lastScheduleTime: "2026-11-24T10:00:00Z",
          active: [{ name, namespace: "ns", uid: done.metadata!.uid }],
        },
      },
      cached: [],
      live: new Map([[name, done]]),
      reported: new Set(),
      replaced: new Set(),
    });
    assert.deepEqual(seen.status.active, []);
    assert.equal(seen.status.activeCount, 0);
    assert.equal(seen.status.lastSuccessfulTime, "2026-11-24T10:00:30Z");
    assert.deepEqual(
      seen.newlyEnded.map((j) => j.metadata?.name),
      [name],
    );
  });

  it("a run is unbooked by its own trigger's books only", () => {
    // The schedule: a slot newer than lastScheduleTime.
    assert.equal(isUnbookedRun(TRIGGERS, base, scheduledJob("2026-11-24T11:00:00Z")), true);
    assert.equal(isUnbookedRun(TRIGGERS, base, scheduledJob("2026-11-24T10:00:00Z")), false);
    // A backfill Job newer than lastScheduleTime is not the schedule's to book: its request's progress decides.
    assert.equal(isUnbookedRun(TRIGGERS, base, backfillJob("bf", "2026-11-24T03:00:00Z")), true, "past lastSlot");
    assert.equal(isUnbookedRun(TRIGGERS, base, backfillJob("bf", "2026-11-24T02:00:00Z")), false, "at lastSlot");
    assert.equal(isUnbookedRun(TRIGGERS, base, backfillJob("old", "2026-11-24T23:00:00Z")), false, "another request's");
    // Run-now: the current request before lastRunNowRequest holds it.
    assert.equal(isUnbookedRun(TRIGGERS, base, manual("r2")), true);
    assert.equal(isUnbookedRun(TRIGGERS, base, manual("r1")), false);
  });

  it("a backfill Job of a slot the schedule has not passed is kept: for the schedule it is the only sign the slot ran", () => {
    // A suspended CronJob backfilled its newest slot, which then finished: unsuspended, the schedule would run that
    // slot (lastScheduleTime is the schedule's alone) if history cleanup had deleted the Job.
    const done = { ...backfillJob("old", "2026-11-24T11:00:00Z"), status: { succeeded: 1 } };
    const cronJob = { metadata: { ...base.metadata, creationTimestamp: "2026-11-20T00:00:00Z" }, status: base.status };
    assert.equal(isUnbookedRun(TRIGGERS, cronJob, done), false, "booked by its request's books");
    assert.equal(mayDelete(TRIGGERS, cronJob, done), false, "newer than lastScheduleTime 10:00");
    assert.equal(mayDelete(TRIGGERS, cronJob, { ...done, ...backfillJob("old", "2026-11-24T09:00:00Z") }), true);
    // Before the CronJob existed the schedule never runs a slot: such a Job may go.
    const fresh = { metadata: { ...base.metadata, creationTimestamp: "2026-11-24T12:00:00Z" }, status: {} };
    assert.equal(mayDelete(TRIGGERS, fresh, backfillJob("old", "2026-11-24T11:00:00Z")), true);
    assert.equal(mayDelete(TRIGGERS, fresh, backfillJob("old", "2026-11-24T13:00:00Z")), false);
  });

  it("a scheduled run may replace a backfill Job of an older slot (Replace runs only the newest slot: never back)", () => {
    const cronJob = { metadata: { ...base.metadata, creationTimestamp: "2026-11-20T00:00:00Z" }, status: base.status };
    const backfilled = backfillJob("old", "2026-11-24T11:00:00Z");
    assert.equal(mayDelete(TRIGGERS, cronJob, backfilled), false, "the schedule has not passed 11:00");
    assert.equal(
      mayReplace(TRIGGERS, cronJob, backfilled, slot("2026-11-24T12:00:00Z")),
      true,
      "the 12:00 slot passes it",
    );
    assert.equal(mayReplace(TRIGGERS, cronJob, backfilled, slot("2026-11-24T11:00:00Z")), false);
    assert.equal(mayReplace(TRIGGERS, cronJob, backfilled, undefined), false, "a run-now request waits");
    // A backfill Job its request's books have not taken (past lastSlot) is that run's only trace: kept even from a
    // newer slot, until the books take it.
    const unbooked = backfillJob("bf", "2026-11-24T03:00:00Z");
    assert.equal(isUnbookedRun(TRIGGERS, cronJob, unbooked), true);
    assert.equal(mayReplace(TRIGGERS, cronJob, unbooked, slot("2026-11-24T12:00:00Z")), false);
  });
});

describe("the backfill's book: its row's record", () => {
  const status = {
    lastScheduleTime: "2026-11-24T10:00:00Z",
    backfill: {
      id: "bf",
      phase: "Running" as const,
      total: 4,
      created: 1,
      skipped: 1,
      lastSlot: "2026-11-24T01:00:00Z",
    },
  };
  const at = slot("2026-11-24T02:00:00Z");
  const book = (rec: Parameters<typeof backfillBook>[2]) => backfillBook(status, { slot: at, id: "bf" }, rec).backfill;

  it("a slot this request's Job runs is created, one another Job holds is skipped; either way progress moves past it", () => {
    assert.deepEqual(book({ result: "created", job: backfillJob("bf", "2026-11-24T02:00:00Z") }), {
      ...status.backfill,
      created: 2,
      lastSlot: "2026-11-24T02:00:00Z",
    });
    // Found: created by this request before a crash lost the status write (adopted, or seen by name).
    for (const result of ["adopted", "ran"] as const)
      assert.equal(book({ result, job: backfillJob("bf", "2026-11-24T02:00:00Z") })?.created, 2, result);
    // Another request's, the schedule's, or a foreign Job holding the name.
    assert.equal(book({ result: "ran", job: backfillJob("older", "2026-11-24T02:00:00Z") })?.skipped, 2);
    assert.equal(book({ result: "ran", job: running(jobNameFor(CJ, at)) })?.skipped, 2);
    assert.equal(book({ result: "ran" })?.skipped, 2, "status.active only");
    assert.equal(book({ result: "conflict", job: backfillJob("bf", "2026-11-24T02:00:00Z") })?.skipped, 2);
  });

  it("leaves every other field, and a status without a backfill, as they were", () => {
    const after = backfillBook(status, { slot: at, id: "bf" }, { result: "created" });
    assert.equal(after.lastScheduleTime, status.lastScheduleTime);
    assert.deepEqual(backfillBook({ lastScheduleTime: "x" }, { slot: at, id: "bf" }, { result: "created" }), {
      lastScheduleTime: "x",
    });
    assert.equal(status.backfill.created, 1, "the input untouched");
  });
});
