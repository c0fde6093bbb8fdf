// The reconcile steps that are plain functions (controllers/steps.ts): what each decides from plain data.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseHashedSchedule } from "../../api/v1/schedule/index.ts";
import { type Job, SCHEDULED_AT_ANNOTATION } from "../../api/v1/index.ts";
import {
  degradedCondition,
  guards,
  missedDeadline,
  newestFinished,
  progressingCondition,
  scheduledConditions,
} from "../../controllers/steps.ts";

const key = { namespace: "ns", name: "cj" };
const parsed = (schedule: string, tz?: string) => parseHashedSchedule(schedule, key, tz);
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
    assert.ok(d.stop && d.event === undefined && d.resolvedSchedule === undefined && !d.suspended);
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
    assert.ok(d.stop && d.suspended && d.resolvedSchedule === "*/5 * * * *" && d.event === undefined);
  });

  it("Progressing counts the running Jobs", () => {
    assert.equal(progressingCondition(3).message, "3 Job(s) running");
    assert.equal(progressingCondition(0).status, "False");
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

function finished(name: string, slot: string, outcome: "Complete" | "Failed"): Job {
  return {
    metadata: { name, annotations: { [SCHEDULED_AT_ANNOTATION]: slot } },
    status: { conditions: [{ type: outcome, status: "True", lastTransitionTime: slot }] },
  };
}

describe("step 12: conditions", () => {
  const older = finished("cj-1", "2026-11-23T09:00:00Z", "Failed");
  const newer = finished("cj-2", "2026-11-23T10:00:00Z", "Complete");

  it("the newest finished Job is the newest slot's, in any listing order", () => {
    assert.equal(newestFinished([older, newer])?.metadata?.name, "cj-2");
    assert.equal(newestFinished([newer, older])?.metadata?.name, "cj-2");
    const tie = finished("cj-3", "2026-11-23T10:00:00Z", "Failed");
    assert.equal(newestFinished([tie, newer])?.metadata?.name, newestFinished([newer, tie])?.metadata?.name);
    assert.equal(newestFinished([]), undefined);
  });

  it("Degraded: this pass's failed writes first, then whether the newest finished Job failed", () => {
    assert.equal(degradedCondition({}, [older, newer]).reason, "AsExpected");
    assert.equal(
      degradedCondition({}, [newer, older, finished("cj-4", "2026-11-23T11:00:00Z", "Failed")]).reason,
      "LastJobFailed",
    );
    assert.equal(degradedCondition({ deleteFailed: "x" }, []).reason, "JobDeletionFailed");
    assert.deepEqual(degradedCondition({ createFailed: "refused", deleteFailed: "x" }, []), {
      type: "Degraded",
      status: "True",
      reason: "JobCreationFailed",
      message: "refused",
    });
  });

  it("Available says the next run, and how many Jobs run", () => {
    const [available, progressing] = scheduledConditions(2, "2026-11-23T11:00:00Z", {}, []);
    assert.equal(available!.message, "2 active Job(s); next run at 2026-11-23T11:00:00Z");
    assert.equal(progressing!.reason, "JobsActive");
    assert.equal(scheduledConditions(0, "2026-11-23T11:00:00Z", {}, [])[0]!.reason, "Scheduled");
  });
});
