// The reconcile steps that are plain functions (controllers/conditions.ts, failures.ts, books.ts, guards.ts,
// due.ts, and the schedule's row in triggers.ts): what each decides from plain data.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseHashedSchedule } from "../../api/v1/schedule/index.ts";
import {
  type CronJobWireStatus,
  ENDED_PODS_ANNOTATION,
  ENDED_REASON_ANNOTATION,
  type Job,
  KUEUE_QUEUE_NAME_KEY,
} from "../../api/v1/index.ts";
import {
  degradedCondition,
  newestFinished,
  progressingCondition,
  scheduledConditions,
  setConditions,
} from "../../controllers/conditions.ts";
import { failureStop } from "../../controllers/failures.ts";
import { historyBehind, historyToDelete, statusBehind } from "../../controllers/books.ts";
import { readStarts, startLimit } from "../../controllers/starts.ts";
import type { ObjectClient } from "../../runtime/interfaces.ts";
import { discardLogger } from "../../runtime/log.ts";
import { guards, parsedSchedules, statusAfterGuards } from "../../controllers/guards.ts";
import { missedByPolicy, missedDeadline, missedSlots, scheduleDecision } from "../../controllers/due.ts";
import { TRIGGERS } from "../../controllers/triggers.ts";
import { batchJob } from "../fixtures.ts";

const key = { namespace: "ns", name: "cj" };
const parsed = (schedule: string, tz?: string) =>
  parsedSchedules({ metadata: key, spec: { schedule, ...(tz !== undefined ? { timeZone: tz } : {}) } }, key);
const cj = (o: { deleting?: boolean; timeZone?: string; suspend?: boolean } = {}) => ({
  metadata: o.deleting ? { deletionTimestamp: "2026-11-23T10:00:00Z" } : {},
  spec: { ...(o.timeZone !== undefined ? { timeZone: o.timeZone } : {}), ...(o.suspend ? { suspend: true } : {}) },
});
const reasons = (d: ReturnType<typeof guards>) =>
  d.stop ? d.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`) : [];

describe("step 6: guards", () => {
  it("a valid, running CronJob goes on with its schedule, resolved", () => {
    const d = guards(cj(), parsed("H 3 * * *"), 0);
    assert.equal(d.stop, false);
    assert.ok(!d.stop && /^\d+ 3 \* \* \*$/.test(d.resolvedSchedule));
  });

  it("a CronJob being deleted stops, not degraded, its resolvedSchedule unchanged, no Event", () => {
    const d = guards(cj({ deleting: true, suspend: true }), parsed("not a schedule"), 2);
    assert.deepEqual(reasons(d), [
      "Available=False/Deleting",
      "Progressing=True/JobsActive",
      "Degraded=False/AsExpected",
    ]);
    assert.ok(d.stop && d.event === undefined && d.resolvedSchedule === undefined && !d.requestsRun);
  });

  it("an unknown time zone stops with an UnknownTimeZone Event and Degraded", () => {
    const d = guards(cj({ timeZone: "Mars/Olympus" }), parsed("0 * * * *", "Mars/Olympus"), 0);
    assert.deepEqual(reasons(d), [
      "Available=False/UnknownTimeZone",
      "Progressing=False/NoJobsActive",
      "Degraded=True/UnknownTimeZone",
    ]);
    assert.ok(d.stop && d.event?.reason === "UnknownTimeZone" && /Mars\/Olympus/.test(d.event.message));
  });

  it("an unparseable schedule stops with UnparseableSchedule, Degraded, and its resolvedSchedule removed", () => {
    const d = guards(cj(), parsed("0 0 30 2 *"), 0);
    assert.deepEqual(reasons(d), [
      "Available=False/InvalidSchedule",
      "Progressing=False/NoJobsActive",
      "Degraded=True/InvalidSchedule",
    ]);
    assert.ok(d.stop && d.event?.reason === "UnparseableSchedule" && d.resolvedSchedule === null);
  });

  it("a suspended CronJob stops (run-now still allowed), with its resolved schedule kept", () => {
    const d = guards(cj({ suspend: true }), parsed("*/5 * * * *"), 1);
    assert.deepEqual(reasons(d), [
      "Available=False/Suspended",
      "Progressing=True/JobsActive",
      "Degraded=False/AsExpected",
    ]);
    assert.ok(d.stop && d.requestsRun && d.resolvedSchedule === "*/5 * * * *" && d.event === undefined);
  });

  it("Progressing counts the running Jobs", () => {
    assert.equal(progressingCondition(3).message, "3 Job(s) running");
    assert.equal(progressingCondition(0).status, "False");
  });
});

describe("step 6: the status the guards leave", () => {
  const status = { resolvedSchedule: "0 * * * *", nextScheduleTime: "2026-11-23T11:00:00Z", lastScheduleTime: "x" };

  it("drops nextScheduleTime (step 7's next slot sets it again) and keeps the rest, the input untouched", () => {
    const d = guards(cj({ deleting: true }), parsed("0 * * * *"), 0);
    assert.deepEqual(statusAfterGuards(status, d), { resolvedSchedule: "0 * * * *", lastScheduleTime: "x" });
    assert.equal(status.nextScheduleTime, "2026-11-23T11:00:00Z");
  });

  it("writes the resolved schedule, or removes it for an unparseable schedule", () => {
    const ok = guards(cj(), parsed("H 3 * * *"), 0);
    assert.ok(!ok.stop);
    assert.equal(statusAfterGuards(status, ok).resolvedSchedule, ok.resolvedSchedule);
    assert.ok(!("resolvedSchedule" in statusAfterGuards(status, guards(cj(), parsed("0 0 30 2 *"), 0))));
  });
});

describe("step 7: scheduleDecision", () => {
  const hourly = parseHashedSchedule("0 * * * *", key);
  assert.ok(hourly.ok);
  const at = (t: string) => new Date(t);
  const iso = (ds: Date[]) => ds.map((d) => d.toISOString().replace(".000Z", "Z"));
  const decide = (o: {
    last?: string;
    created?: string;
    deadline?: number;
    now: string;
    clockNow?: string;
    policy?: "RunLatest" | "Skip" | "RunAll";
    concurrency?: string;
    announced?: string;
  }) =>
    scheduleDecision({
      schedule: hourly.schedule,
      lastScheduleTime: o.last,
      creationTimestamp: o.created ?? "2026-11-23T00:30:00Z",
      startingDeadlineSeconds: o.deadline,
      missedRunPolicy: o.policy,
      concurrencyPolicy: o.concurrency,
      announced: o.announced,
      now: at(o.now),
      clockNow: at(o.clockNow ?? o.now),
    });

  it("the newest slot after the last run is due; the next slot is the requeue time", () => {
    const d = decide({ last: "2026-11-23T08:00:00Z", now: "2026-11-23T10:20:00Z" });
    assert.deepEqual(d, {
      due: [at("2026-11-23T10:00:00Z")],
      next: at("2026-11-23T11:00:00Z"),
      nextStart: at("2026-11-23T11:00:00Z"),
    });
  });

  it("without a last run, slots count from creation; none yet means nothing due", () => {
    const next = at("2026-11-23T01:00:00Z");
    assert.deepEqual(decide({ now: "2026-11-23T00:50:00Z" }), { due: [], next, nextStart: next });
    assert.deepEqual(iso(decide({ now: "2026-11-23T01:00:00Z" }).due), ["2026-11-23T01:00:00Z"]);
  });

  it("a slot exactly startingDeadlineSeconds late still runs; a millisecond later it is too late", () => {
    const onTime = decide({ last: "2026-11-23T09:00:00Z", deadline: 60, now: "2026-11-23T10:01:00Z" });
    assert.deepEqual(iso(onTime.due), ["2026-11-23T10:00:00Z"]);
    const late = decide({
      last: "2026-11-23T09:00:00Z",
      deadline: 60,
      now: "2026-11-23T10:01:00Z",
      clockNow: "2026-11-23T10:01:00.001Z",
    });
    assert.deepEqual(late.due, []);
    assert.deepEqual(late.tooLate, { slot: at("2026-11-23T10:00:00Z"), deadline: 60 });
  });

  it("more than 100 missed slots are reported, and only the newest is due", () => {
    const d = decide({ last: "2026-11-01T00:00:00Z", now: "2026-11-23T10:20:00Z" });
    assert.deepEqual(iso(d.due), ["2026-11-23T10:00:00Z"]);
    assert.equal(d.tooManyMissed?.reason, "TooManyMissedTimes");
    assert.equal(decide({ last: "2026-11-23T08:00:00Z", now: "2026-11-23T10:20:00Z" }).tooManyMissed, undefined);
  });

  describe("missedRunPolicy Skip", () => {
    it("runs the slot status announced, however late it is reached", () => {
      const d = decide({
        policy: "Skip",
        last: "2026-11-23T09:00:00Z",
        announced: "2026-11-23T10:00:00Z",
        now: "2026-11-23T10:40:00Z",
      });
      assert.deepEqual(iso(d.due), ["2026-11-23T10:00:00Z"]);
      assert.equal(d.notRun, undefined);
    });

    it("does not run a slot that was never announced (down, suspended, stopped, Forbid), and reports it", () => {
      // Unsuspended at 10:20: while suspended, status had no nextScheduleTime.
      const d = decide({ policy: "Skip", last: "2026-11-23T07:00:00Z", now: "2026-11-23T10:20:00Z" });
      assert.deepEqual(d.due, []);
      assert.deepEqual(d.notRun, { slot: at("2026-11-23T10:00:00Z"), why: "skip" });
      assert.deepEqual(d.next, at("2026-11-23T11:00:00Z"));
      // Down across 09:00 and 10:00: 09:00 was announced, but it is not the newest any more.
      const down = decide({
        policy: "Skip",
        last: "2026-11-23T08:00:00Z",
        announced: "2026-11-23T09:00:00Z",
        now: "2026-11-23T10:20:00Z",
      });
      assert.deepEqual(down.due, []);
      assert.equal(down.notRun?.slot.toISOString(), "2026-11-23T10:00:00.000Z");
    });

    it("a CronJob no pass has seen yet is owed the first slot after its creation, not a later one", () => {
      const first = decide({ policy: "Skip", now: "2026-11-23T01:00:20Z" });
      assert.deepEqual(first.due, [], "no status, but not marked as never reconciled: not announced");
      const owed = scheduleDecision({
        schedule: hourly.schedule,
        lastScheduleTime: undefined,
        creationTimestamp: "2026-11-23T00:30:00Z",
        startingDeadlineSeconds: undefined,
        missedRunPolicy: "Skip",
        neverReconciled: true,
        now: at("2026-11-23T01:00:20Z"),
        clockNow: at("2026-11-23T01:00:20Z"),
      });
      assert.deepEqual(iso(owed.due), ["2026-11-23T01:00:00Z"]);
      const late = scheduleDecision({
        schedule: hourly.schedule,
        lastScheduleTime: undefined,
        creationTimestamp: "2026-11-23T00:30:00Z",
        startingDeadlineSeconds: undefined,
        missedRunPolicy: "Skip",
        neverReconciled: true,
        now: at("2026-11-23T02:10:00Z"),
        clockNow: at("2026-11-23T02:10:00Z"),
      });
      assert.deepEqual(late.due, [], "two slots passed before any pass: the newest was never owed");
    });

    it("never reports TooManyMissedTimes (nothing old is started)", () => {
      assert.equal(
        decide({ policy: "Skip", last: "2026-11-01T00:00:00Z", now: "2026-11-23T10:20:00Z" }).tooManyMissed,
        undefined,
      );
    });
  });

  describe("missedRunPolicy RunAll", () => {
    it("runs every missed slot, oldest first", () => {
      const d = decide({ policy: "RunAll", last: "2026-11-23T06:00:00Z", now: "2026-11-23T10:20:00Z" });
      assert.deepEqual(iso(d.due), [
        "2026-11-23T07:00:00Z",
        "2026-11-23T08:00:00Z",
        "2026-11-23T09:00:00Z",
        "2026-11-23T10:00:00Z",
      ]);
      assert.equal(d.notRun, undefined);
    });

    it("only inside startingDeadlineSeconds; the newest expired slot is reported", () => {
      const d = decide({
        policy: "RunAll",
        last: "2026-11-23T06:00:00Z",
        deadline: 2 * 3600,
        now: "2026-11-23T10:20:00Z",
      });
      assert.deepEqual(iso(d.due), ["2026-11-23T09:00:00Z", "2026-11-23T10:00:00Z"]);
      assert.deepEqual(d.tooLate, { slot: at("2026-11-23T08:00:00Z"), deadline: 7200 });
    });

    it("at most the newest 100; the older ones are reported, with TooManyMissedTimes", () => {
      const d = decide({ policy: "RunAll", last: "2026-11-01T00:00:00Z", now: "2026-11-23T10:20:00Z" });
      assert.equal(d.due.length, 100);
      assert.equal(d.due[99]!.toISOString(), "2026-11-23T10:00:00.000Z");
      assert.equal(d.due[0]!.toISOString(), "2026-11-19T07:00:00.000Z");
      assert.equal(d.notRun?.slot.toISOString(), "2026-11-19T06:00:00.000Z");
      assert.equal(d.notRun?.why, "cap");
      // Counted exactly, not from a window capped at 101: 2026-11-01T01:00 … 2026-11-19T06:00 hourly.
      assert.deepEqual(d.notRun?.notRun?.(), { count: 18 * 24 + 6, exact: true });
      assert.match(missedByPolicy(undefined, d.notRun!)!.event.message, /: 438 older missed times are not run/);
      assert.doesNotMatch(missedByPolicy(undefined, d.notRun!)!.event.message, /Replace/);
      assert.equal(d.tooManyMissed?.reason, "TooManyMissedTimes");
    });

    it("with Replace, only the newest (each would replace the one before); the older ones are reported", () => {
      const d = decide({
        policy: "RunAll",
        concurrency: "Replace",
        last: "2026-11-23T06:00:00Z",
        now: "2026-11-23T10:20:00Z",
      });
      assert.deepEqual(iso(d.due), ["2026-11-23T10:00:00Z"]);
      assert.equal(d.notRun?.slot.toISOString(), "2026-11-23T09:00:00.000Z");
      assert.equal(d.notRun?.why, "replace");
      assert.deepEqual(d.notRun?.notRun?.(), { count: 3, exact: true });
    });

    it("with Replace, on time: the slot before, the last one run, is not reported", () => {
      const d = decide({
        policy: "RunAll",
        concurrency: "Replace",
        last: "2026-11-23T09:00:00Z",
        now: "2026-11-23T10:00:01Z",
      });
      assert.deepEqual(iso(d.due), ["2026-11-23T10:00:00Z"]);
      assert.equal(d.notRun, undefined);
    });
  });
});

describe("step 8: missedSlots", () => {
  it("a deadline missed and a slot the policy did not run in one pass: lastMissedTime is the newer of them", () => {
    const tooLate = { slot: new Date("2026-11-23T10:00:00Z"), deadline: 60 };
    const notRun = { slot: new Date("2026-11-23T09:00:00Z"), why: "replace" as const };
    const out = missedSlots({}, { tooLate, notRun }, new Date("2026-11-23T10:20:00Z"));
    assert.equal(out.status.lastMissedTime, "2026-11-23T10:00:00Z");
    assert.deepEqual(
      out.decisions.map((d) => [d.decision.decision, d.decision.scheduledTime?.toISOString()]),
      [
        ["Missed", "2026-11-23T10:00:00.000Z"],
        ["Skipped", "2026-11-23T09:00:00.000Z"],
      ],
    );
  });
});

describe("step 8: missedByPolicy", () => {
  const notRun = { slot: new Date("2026-11-23T10:00:00Z"), why: "skip" as const };
  it("reports the slot once, never older than what status holds", () => {
    const d = missedByPolicy(undefined, notRun);
    assert.equal(d?.lastMissedTime, "2026-11-23T10:00:00Z");
    assert.match(d!.event.message, /missedRunPolicy Skip/);
    assert.equal(missedByPolicy("2026-11-23T10:00:00Z", notRun), undefined);
    assert.equal(missedByPolicy("2026-11-23T11:00:00Z", notRun), undefined);
  });
});

describe("step 5: failureStop", () => {
  const failed = (name: string, at: string) => batchJob({ name, state: "failed", end: at });
  const ok = (name: string, at: string) => batchJob({ name, state: "complete", end: at });
  const now = new Date("2026-11-23T12:00:00Z");
  const run = (o: Partial<Parameters<typeof failureStop>[0]>) =>
    failureStop({ stopAfter: 3, generation: 1, status: {}, newlyEnded: [], resumeRequest: undefined, now, ...o });

  it("counts failed runs in the order they ended; a success sets 0", () => {
    const d = run({ newlyEnded: [failed("b", "2026-11-23T11:00:00Z"), ok("a", "2026-11-23T10:00:00Z")] });
    assert.equal(d.status.consecutiveFailures, 1);
    assert.equal(
      run({ newlyEnded: [ok("b", "2026-11-23T11:00:00Z"), failed("a", "2026-11-23T10:00:00Z")] }).status
        .consecutiveFailures,
      0,
    );
  });

  it("stops at the limit, with the count, the time and the generation, and says so once", () => {
    const d = run({ status: { consecutiveFailures: 2 }, newlyEnded: [failed("c", "2026-11-23T11:00:00Z")] });
    assert.deepEqual(d.status.stopped, { time: "2026-11-23T12:00:00Z", failures: 3, generation: 1 });
    assert.equal(d.event?.reason, "StoppedAfterFailures");
    const again = run({ status: d.status });
    assert.deepEqual(again.status.stopped, d.status.stopped);
    assert.equal(again.event, undefined);
  });

  it("resumes on a new resume request, or a spec change since the stop; the count starts at 0", () => {
    const stopped = { consecutiveFailures: 3, stopped: { time: "2026-11-23T11:00:00Z", failures: 3, generation: 1 } };
    const byRequest = run({ status: stopped, resumeRequest: "r1" });
    assert.equal(byRequest.status.stopped, undefined);
    assert.equal(byRequest.status.consecutiveFailures, 0);
    assert.equal(byRequest.status.lastResumeRequest, "r1");
    assert.equal(byRequest.event?.reason, "Resumed");
    assert.equal(
      run({ status: { ...stopped, lastResumeRequest: "r1" }, resumeRequest: "r1" }).status.stopped?.failures,
      3,
    );
    const bySpec = run({ status: stopped, generation: 2 });
    assert.equal(bySpec.status.stopped, undefined);
    assert.equal(bySpec.event?.reason, "Resumed");
  });

  it("after a resume, the runs that ended by it or still ran at it do not count; the runs started after it do", () => {
    const stopped = {
      consecutiveFailures: 3,
      stopped: { time: "2026-11-23T11:00:00Z", failures: 3, generation: 1 },
      active: [{ name: "slow-1" }, { name: "slow-2" }],
    };
    // The resuming pass also reports a run that ended while it was stopped: not counted.
    const resumed = run({
      status: stopped,
      resumeRequest: "r1",
      newlyEnded: [failed("old", "2026-11-23T11:10:00Z")],
    });
    assert.equal(resumed.status.stopped, undefined);
    assert.equal(resumed.status.consecutiveFailures, 0);
    assert.deepEqual(resumed.status.resumed, { time: "2026-11-23T12:00:00Z", running: ["slow-1", "slow-2"] });
    // The next pass: one of the runs that ran at the resume failed (its end reported after the resume, whatever
    // its time), and a run started after the resume is still running. Not counted; the name goes.
    const later = run({
      status: { ...resumed.status, active: [{ name: "slow-2" }, { name: "new" }] },
      resumeRequest: "r1",
      newlyEnded: [failed("slow-1", "2026-11-23T12:01:00Z")],
    });
    assert.equal(later.status.consecutiveFailures, 0);
    assert.deepEqual(later.status.resumed, { time: "2026-11-23T12:00:00Z", running: ["slow-2"] });
    // Both end failed: only the run started after the resume counts; the list goes, the time stays.
    const after = run({
      status: { ...later.status, active: [] },
      resumeRequest: "r1",
      newlyEnded: [failed("slow-2", "2026-11-23T12:02:00Z"), failed("new", "2026-11-23T12:03:00Z")],
    });
    assert.equal(after.status.consecutiveFailures, 1);
    assert.deepEqual(after.status.resumed, { time: "2026-11-23T12:00:00Z" });
    // A spec change resumes the same way.
    const bySpec = run({ status: stopped, generation: 2 });
    assert.deepEqual(bySpec.status.resumed?.running, ["slow-1", "slow-2"]);
    // Without the spec field the resume's memory goes with the other fields.
    assert.equal(run({ stopAfter: undefined, status: after.status }).status.resumed, undefined);
  });

  it("an old resume request cannot resume a later stop: it is consumed while running", () => {
    const d = run({ status: { consecutiveFailures: 1 }, resumeRequest: "r1" });
    assert.equal(d.status.lastResumeRequest, "r1");
    assert.equal(d.event, undefined);
  });

  it("without the spec field nothing is counted and the fields go", () => {
    const d = run({
      stopAfter: undefined,
      status: { consecutiveFailures: 2 },
      newlyEnded: [failed("x", "2026-11-23T11:00:00Z")],
    });
    assert.deepEqual(d.status, {});
  });

  it("a stopped CronJob's guards stop it like a suspended one (run-now still allowed)", () => {
    const g = guards(
      { ...cj(), status: { stopped: { time: "t", failures: 3, generation: 1 } } },
      parsed("0 * * * *"),
      0,
    );
    assert.ok(g.stop && g.requestsRun);
    assert.deepEqual(reasons(g), [
      "Available=False/StoppedAfterFailures",
      "Progressing=False/NoJobsActive",
      "Degraded=True/StoppedAfterFailures",
    ]);
  });
});

describe("step 9: the schedule's row says whether a due slot already ran", () => {
  const due = new Date("2026-11-23T10:00:00Z");
  const jobName = "cj-1795428000"; // jobNameFor("cj", due): seconds since the epoch
  const [scheduleRow] = TRIGGERS;
  const cronJob = {
    metadata: { name: "cj", namespace: "ns" },
    spec: { schedule: "0 * * * *", jobTemplate: { spec: { template: { spec: { containers: [] } } } } },
  };
  const [request] = [
    ...(scheduleRow.plan({
      cronJob,
      status: {},
      schedules: undefined,
      written: undefined,
      due: [due],
      anchor: undefined,
      now: due,
      jobs: [],
    })?.requests ?? []),
  ];
  assert.ok(request);
  const ran = (jobs: { metadata: { name: string } }[], status: CronJobWireStatus) =>
    request.ran({ cronJobName: "cj", jobs: new Map(jobs.map((j) => [j.metadata.name, j])), status }).ran;

  it("status recording the slot (or a newer one) says it ran", () => {
    assert.equal(ran([], { lastScheduleTime: "2026-11-23T10:00:00Z" }), true);
    assert.equal(ran([], { lastScheduleTime: "2026-11-23T11:00:00Z" }), true);
    assert.equal(ran([], { lastScheduleTime: "2026-11-23T09:00:00Z" }), false);
  });

  it("a Job holding the slot's name, in the cache or only in status.active, says it ran", () => {
    assert.equal(ran([{ metadata: { name: jobName } }], {}), true);
    assert.equal(ran([], { active: [{ name: jobName }] }), true);
    assert.equal(ran([{ metadata: { name: "cj-1" } }], { active: [{ name: "other" }] }), false);
  });
});

describe("step 8: missedDeadline", () => {
  const tooLate = { slot: new Date("2026-11-23T10:00:00Z"), deadline: 30 };

  it("records the slot and says when its deadline passed", () => {
    assert.deepEqual(missedDeadline(undefined, tooLate), {
      lastMissedTime: "2026-11-23T10:00:00Z",
      event: {
        reason: "MissSchedule",
        message:
          "Missed scheduled time to start a job: 2026-11-23T10:00:00Z (startingDeadlineSeconds 30 passed at 2026-11-23T10:00:30Z)",
      },
    });
  });

  it("reports a slot once: status already holding it decides nothing", () => {
    assert.equal(missedDeadline("2026-11-23T10:00:00Z", tooLate), undefined);
    assert.ok(missedDeadline("2026-11-23T09:00:00Z", tooLate));
  });
});

/** A Job of `slot` that ended at its slot. */
function finished(name: string, slot: string, state: "complete" | "failed"): Job {
  return batchJob({ name, slot, state, end: slot });
}

describe("step 9: the conditions once the triggers ran (step 10 writes them)", () => {
  const older = finished("cj-1", "2026-11-23T09:00:00Z", "failed");
  const newer = finished("cj-2", "2026-11-23T10:00:00Z", "complete");

  it("the newest finished Job is the newest slot's, in any listing order", () => {
    assert.equal(newestFinished([older, newer])?.metadata?.name, "cj-2");
    assert.equal(newestFinished([newer, older])?.metadata?.name, "cj-2");
    const tie = finished("cj-3", "2026-11-23T10:00:00Z", "failed");
    assert.equal(newestFinished([tie, newer])?.metadata?.name, newestFinished([newer, tie])?.metadata?.name);
    assert.equal(newestFinished([]), undefined);
  });

  it("Degraded: this pass's failed writes first, then whether the newest finished Job failed", () => {
    assert.equal(degradedCondition({}, [older, newer]).reason, "AsExpected");
    assert.equal(
      degradedCondition({}, [newer, older, finished("cj-4", "2026-11-23T11:00:00Z", "failed")]).reason,
      "LastJobFailed",
    );
    assert.equal(degradedCondition({ deleteFailed: "x" }, []).reason, "JobDeletionFailed");
    assert.deepEqual(degradedCondition({ createFailed: "refused", deleteFailed: "x" }, []), {
      type: "Degraded",
      status: "True",
      reason: "JobCreationFailed",
      message: "refused",
    });
    assert.equal(
      degradedCondition({ createConflict: "another Job holds the name" }, []).reason,
      "JobCreationFailed",
      "a create refused by a name conflict is a failed create",
    );
  });

  it("a condition's lastTransitionTime moves when its status changes, and only then", () => {
    const before = [{ type: "Degraded", status: "False", lastTransitionTime: "2026-11-23T09:00:00Z" }];
    const failed = { type: "Degraded", status: "True", reason: "LastJobFailed", message: "m" } as const;
    const [changed] = setConditions(before, [failed], new Date("2026-11-23T10:00:00Z"), 3);
    assert.equal(changed!.lastTransitionTime, "2026-11-23T10:00:00Z", "False to True: now");
    assert.equal(changed!.observedGeneration, 3);
    const [kept] = setConditions([changed!], [{ ...failed, message: "m2" }], new Date("2026-11-23T11:00:00Z"), 3);
    assert.equal(kept!.lastTransitionTime, "2026-11-23T10:00:00Z", "still True: unchanged");
  });

  it("Available says the next run, and how many Jobs run", () => {
    const [available, progressing] = scheduledConditions(2, "2026-11-23T11:00:00Z", {}, []);
    assert.equal(available!.message, "2 active Job(s); next run at 2026-11-23T11:00:00Z");
    assert.equal(progressing!.reason, "JobsActive");
    assert.equal(scheduledConditions(0, "2026-11-23T11:00:00Z", {}, [])[0]!.reason, "Scheduled");
  });
});

describe("step 10: the books wait one pass at most", () => {
  it("status is behind when the children hold a run newer than the stored lastScheduleTime", () => {
    const at = (t?: string) => (t === undefined ? {} : { lastScheduleTime: t });
    assert.equal(statusBehind(at("2026-11-24T10:00:00Z"), at("2026-11-24T10:00:00Z")), false, "up to date");
    assert.equal(statusBehind(at("2026-11-24T10:00:00Z"), at("2026-11-24T10:01:00Z")), true, "a run not recorded");
    assert.equal(statusBehind(undefined, at("2026-11-24T10:01:00Z")), true, "no status yet, a run exists");
    assert.equal(statusBehind(at(), at("2026-11-24T10:01:00Z")), true);
    assert.equal(statusBehind(undefined, at()), false, "no run at all: nothing to record");
    // The same instant written differently is not a difference; a stored time ahead of the children is not either.
    assert.equal(statusBehind(at("2026-11-24T11:00:00+01:00"), at("2026-11-24T10:00:00Z")), false);
    assert.equal(statusBehind(at("2026-11-24T10:05:00Z"), at("2026-11-24T10:01:00Z")), false);
  });

  it("status is behind when a run it lists as active ended 30 s ago or more, or its Job is gone", () => {
    const ref = (name: string) => ({ apiVersion: "batch/v1", kind: "Job", name, namespace: "ns" });
    const done = (name: string, at: string) => batchJob({ name, state: "complete", end: at });
    const stored = { lastScheduleTime: "2026-11-24T10:00:00Z", active: [ref("cj-1")] };
    const observed = { lastScheduleTime: "2026-11-24T10:00:00Z", active: [] };
    const finished = [done("cj-1", "2026-11-24T10:00:10Z")];
    const at = (t: string) => new Date(t);
    assert.equal(
      statusBehind(stored, observed, finished, at("2026-11-24T10:00:20Z")),
      false,
      "ended 10 s ago: may wait",
    );
    assert.equal(statusBehind(stored, observed, finished, at("2026-11-24T10:00:40Z")), true, "ended 30 s ago");
    assert.equal(statusBehind(stored, observed, [], at("2026-11-24T10:00:20Z")), true, "its Job is gone");
    assert.equal(
      statusBehind(stored, { ...observed, active: [ref("cj-1")] }, [], at("2026-11-24T11:00:00Z")),
      false,
      "still running",
    );
    assert.equal(statusBehind(stored, observed, finished), false, "without a clock only the runs count");
  });

  it("history is behind when a limit is exceeded by more than one run", () => {
    assert.equal(
      historyBehind({ successful: 2, failed: 0 }, { successful: 1, failed: 1 }),
      false,
      "one over: may wait",
    );
    assert.equal(historyBehind({ successful: 3, failed: 0 }, { successful: 1, failed: 1 }), true);
    assert.equal(
      historyBehind({ successful: 0, failed: 3 }, { successful: 3, failed: 1 }),
      true,
      "failed counts alike",
    );
    assert.equal(historyBehind({ successful: 2, failed: 0 }, { successful: 0 }), true, "limit 0");
    assert.equal(historyBehind({ successful: 1, failed: 0 }, { successful: 0 }), false);
    assert.equal(historyBehind({ successful: 50, failed: 50 }, {}), false, "no limit: no cleanup at all");
  });
});

describe("step 10: history cleanup deletes the oldest finished Jobs beyond each limit", () => {
  const cronJob = {
    metadata: { name: "cj", namespace: "ns", creationTimestamp: "2026-11-23T00:00:00Z" },
    status: { lastScheduleTime: "2026-11-23T12:00:00Z" },
    spec: { successfulJobsHistoryLimit: 1, failedJobsHistoryLimit: 1 },
  } as never;
  const job = (name: string, slot: string, state: "complete" | "failed", start?: string) =>
    batchJob({ name, slot, state, end: slot, ...(start ? { start } : {}) });
  const names = (jobs: readonly Job[]) => jobs.map((j) => j.metadata?.name);

  it("a Job without a start time sorts as the newest (as the built-in controller's byJobStartTime)", () => {
    const a = job("cj-a", "2026-11-23T09:00:00Z", "complete", "2026-11-23T09:00:00Z");
    const b = job("cj-b", "2026-11-23T10:00:00Z", "complete", "2026-11-23T10:00:00Z");
    const c = job("cj-c", "2026-11-23T11:00:00Z", "complete");
    const out = historyToDelete(TRIGGERS, cronJob, { successful: [c, b, a], failed: [] });
    assert.deepEqual(names(out), ["cj-a", "cj-b"]);
  });

  it("a Job kept for a trigger counts toward the limit: the others beyond it go", () => {
    const x = job("cj-x", "2026-11-23T09:00:00Z", "failed", "2026-11-23T09:00:00Z");
    const y = job("cj-y", "2026-11-23T10:00:00Z", "failed", "2026-11-23T10:00:00Z");
    const out = historyToDelete(TRIGGERS, cronJob, { successful: [], failed: [x, y] }, new Set(["cj-y"]));
    assert.deepEqual(names(out), ["cj-x"], "2 failed Jobs, limit 1: one goes, and not the kept one");
  });
});

describe("step 4: the start limit (spec.startTimeoutSeconds)", () => {
  const NOW = Date.parse("2026-11-26T02:10:00Z");
  const LIMIT = 300;
  const ctx = { log: discardLogger, reconcileID: "t", signal: new AbortController().signal };
  interface Pod {
    metadata: { name: string };
    status: object;
  }
  /** A running Job of uid `uid-<name>`; `o` merged into its metadata, spec and status. */
  const running = (
    name: string,
    o: { created?: string; labels?: Record<string, string>; spec?: object; status?: object } = {},
  ): Job =>
    ({
      metadata: {
        name,
        namespace: "ns",
        uid: `uid-${name}`,
        creationTimestamp: o.created ?? "2026-11-26T02:00:00Z",
        ...(o.labels ? { labels: o.labels } : {}),
      },
      spec: { ...o.spec },
      status: { active: 1, ...o.status },
    }) as Job;
  /** A client whose Pods are `pods` by Job uid and whose live Jobs are `live` (else the Job itself); counts reads. */
  const client = (jobs: Job[], pods: Record<string, Pod[]>, live: Record<string, Job> = {}) => {
    const reads: string[] = [];
    const c = {
      list: async (_kind: unknown, o: { labelSelector: string }) => {
        reads.push(`pods ${o.labelSelector}`);
        return { items: pods[o.labelSelector.split("=")[1]!] ?? [] };
      },
      get: async (_kind: unknown, _ns: string, name: string) => {
        reads.push(`job ${name}`);
        return live[name] ?? jobs.find((j) => j.metadata?.name === name);
      },
    } as unknown as ObjectClient;
    return { c, reads };
  };
  const pending = (name: string, containerState: object): Pod => ({
    metadata: { name },
    status: { phase: "Pending", containerStatuses: [{ name: "app", state: containerState }] },
  });
  const pullBackOff = { waiting: { reason: "ImagePullBackOff", message: "Back-off pulling image" } };

  it("a Job whose Pods did not start is ended: its deadline lowered to the seconds since its start", async () => {
    const stuck = running("stuck", {
      spec: { managedBy: "kubernetes.io/job-controller" },
      status: { startTime: "2026-11-26T02:01:00Z" },
    });
    // A Job another controller manages (MultiKueue) has no Pods here to start: left alone, not even read.
    const elsewhere = running("elsewhere", {
      spec: { managedBy: "kueue.x-k8s.io/multikueue" },
      status: { startTime: "2026-11-26T02:01:00Z" },
    });
    const { c, reads: calls } = client([stuck, elsewhere], { "uid-stuck": [pending("stuck-p", pullBackOff)] });
    const reads = await readStarts(c, [stuck, elsewhere], LIMIT, {}, NOW, ctx);
    assert.deepEqual(calls, ["pods batch.kubernetes.io/controller-uid=uid-stuck", "job stuck"]);
    assert.deepEqual(
      reads.unstarted.map((u) => u.job.metadata?.name),
      ["stuck"],
    );
    const { ends } = startLimit(reads, NOW);
    assert.equal(ends.length, 1);
    assert.equal(ends[0]!.update.spec?.activeDeadlineSeconds, 540, "02:01 to 02:10");
    assert.equal(ends[0]!.update.metadata?.annotations?.[ENDED_REASON_ANNOTATION], "StartTimeout");
    assert.equal(ends[0]!.update.metadata?.annotations?.[ENDED_PODS_ANNOTATION], "ImagePull");
    assert.equal(ends[0]!.why, "container app: ImagePullBackOff (Back-off pulling image)");
  });

  it("a Job whose status counts a failed Pod, or whose Pod has a container that ended, has started", async () => {
    const start = { startTime: "2026-11-26T02:01:00Z" };
    const failedPod = running("failed-pod", { status: { ...start, failed: 1 } });
    const restarting = running("restarting", { status: start });
    const { c, reads } = client([failedPod, restarting], {
      "uid-restarting": [pending("restarting-p", { terminated: { exitCode: 1 } })],
    });
    const memory = {};
    const out = await readStarts(c, [failedPod, restarting], LIMIT, memory, NOW, ctx);
    assert.deepEqual(out.unstarted, []);
    assert.deepEqual(reads, ["pods batch.kubernetes.io/controller-uid=uid-restarting"], "no Pod read of failed-pod");
    assert.deepEqual(startLimit(out, NOW).ends, []);
  });

  it("a queued Job (Kueue) is never ended, nor its Pods read; a resumed one counts from its admission", async () => {
    const queued = running("queued", {
      created: "2026-11-26T01:00:00Z",
      labels: { [KUEUE_QUEUE_NAME_KEY]: "team-a" },
      spec: { suspend: true },
      status: { active: 0 },
    });
    const resumed = running("resumed", {
      created: "2026-11-26T01:00:00Z",
      labels: { [KUEUE_QUEUE_NAME_KEY]: "team-a" },
      spec: { suspend: false },
      status: {
        startTime: "2026-11-26T02:08:00Z",
        conditions: [{ type: "Suspended", status: "False", lastTransitionTime: "2026-11-26T02:08:00Z" }],
      },
    });
    const { c, reads } = client([queued, resumed], {});
    const out = await readStarts(c, [queued, resumed], LIMIT, {}, NOW, ctx);
    assert.deepEqual(out.unstarted, []);
    assert.deepEqual(reads, [], "nothing read");
    assert.equal(out.nextCheckAt, Date.parse("2026-11-26T02:13:00Z"), "02:08 (its admission) plus 300 s");
  });

  it("a Job Kueue suspended again since the cache saw it (the live read says so) is not ended", async () => {
    const job = running("preempted", { status: { startTime: "2026-11-26T02:01:00Z" } });
    const live = running("preempted", {
      labels: { [KUEUE_QUEUE_NAME_KEY]: "team-a" },
      spec: { suspend: true },
      status: { startTime: "2026-11-26T02:01:00Z" },
    });
    const { c } = client([job], { "uid-preempted": [pending("p", pullBackOff)] }, { preempted: live });
    const out = await readStarts(c, [job], LIMIT, {}, NOW, ctx);
    assert.equal(out.unstarted.length, 1, "the cache's Job looked stuck");
    assert.deepEqual(startLimit(out, NOW).ends, []);
  });
});
