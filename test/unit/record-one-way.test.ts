// Every decision enters status.recentRuns one way (controllers/record.ts enterDecisions): the steps that decide
// without running a Job (step 5's stop, step 8's missed slots, step 7's excluded and held slots) return their
// decisions, as the triggers' rows do, and the reconciler enters them; no step writes the record itself. A step that
// wrote its own entries would be a second writer of the record, free to differ from the first (its key, its merge,
// the message bound).
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { type CronJobWireStatus, type Job, RecordDecision, RecordReason } from "../../api/v1/index.ts";
import { missedSlots } from "../../controllers/due.ts";
import { exclusionStep } from "../../controllers/exclusionstep.ts";
import { failureStep } from "../../controllers/failures.ts";
import { enterDecisions } from "../../controllers/record.ts";
import { deepFreeze } from "../../runtime/objects.ts";

const root = new URL("../../", import.meta.url);

/** A record with one older entry, frozen: a step that wrote into it would throw or return a changed copy. */
const status: CronJobWireStatus = deepFreeze({
  lastScheduleTime: "2026-11-27T09:00:00Z",
  recentRuns: [
    {
      trigger: "Schedule",
      scheduledTime: "2026-11-27T09:00:00Z",
      decision: "Created",
      reason: "ScheduleDue",
      decidedAt: "2026-11-27T09:00:00Z",
      job: "cj-1",
    },
  ],
} as CronJobWireStatus);
const now = new Date("2026-11-27T10:00:30Z");

describe("the record is written one way: steps return decisions, the reconciler enters them", () => {
  it("step 8's missed slot is a returned decision; the status it returns holds the record as it was", () => {
    const slot = new Date("2026-11-27T10:00:00Z");
    const out = missedSlots(status, { tooLate: { slot, deadline: 10 } }, now);
    assert.deepEqual(out.status.recentRuns, status.recentRuns, "the step leaves the record alone");
    assert.equal(out.status.lastMissedTime, "2026-11-27T10:00:00Z", "its books move with it");
    assert.deepEqual(
      out.decisions.map((d) => [d.decision.decision, d.decision.reason, d.decision.scheduledTime?.toISOString()]),
      [[RecordDecision.Missed, RecordReason.StartingDeadlineExceeded, slot.toISOString()]],
    );
    const entered = enterDecisions(out.status, out.decisions).recentRuns ?? [];
    assert.deepEqual(
      entered.map((e) => [e.decision, e.scheduledTime]),
      [
        [RecordDecision.Missed, "2026-11-27T10:00:00Z"],
        [RecordDecision.Created, "2026-11-27T09:00:00Z"],
      ],
    );
  });

  it("step 7's slots held for a missing calendar are returned decisions", () => {
    const due = [new Date("2026-11-27T10:00:00Z")];
    const out = exclusionStep({
      cronJob: { metadata: { name: "cj", namespace: "ns" }, spec: {}, status } as never,
      status,
      exclusions: {
        kind: "unknown",
        problem: 'ExclusionCalendar "freeze" not found',
        calendar: "freeze",
        missing: true,
      },
      schedules: undefined,
      anchor: undefined,
      due,
      now,
    });
    assert.deepEqual(out.due, [], "nothing runs over a calendar nobody can read");
    assert.deepEqual(out.status.recentRuns, status.recentRuns, "the step leaves the record alone");
    assert.deepEqual(
      out.decisions.map((d) => [d.decision.decision, d.decision.reason, d.decision.exclusion?.calendar]),
      [[RecordDecision.Held, RecordReason.CalendarNotFound, "freeze"]],
    );
  });

  it("step 5's stop is a returned decision", () => {
    const failed = (name: string, end: string): Job =>
      ({
        metadata: { name, namespace: "ns" },
        status: {
          failed: 1,
          completionTime: end,
          conditions: [{ type: "Failed", status: "True", lastTransitionTime: end }],
        },
      }) as Job;
    const jobs = [failed("cj-2", "2026-11-27T10:00:10Z"), failed("cj-3", "2026-11-27T10:00:20Z")];
    const out = failureStep(
      { metadata: { generation: 1 }, spec: { stopAfterConsecutiveFailures: 2 } },
      { status, newlyEnded: jobs, jobs },
      now,
    );
    assert.equal(out.stoppedAfter, 2);
    assert.deepEqual(out.status.recentRuns, status.recentRuns, "the step leaves the record alone");
    assert.deepEqual(
      (out.decisions ?? []).map((d) => [d.decision.decision, d.decision.reason, d.at.toISOString()]),
      [[RecordDecision.Stopped, RecordReason.StoppedAfterFailures, now.toISOString()]],
    );
  });

  it("only the reconciler enters decisions: no other module of controllers/ calls a record writer", () => {
    const dir = new URL("controllers/", root);
    const writers = /\b(recordDecision|enterDecisions|recordExclusions)\s*\(/;
    const callers = readdirSync(dir)
      .filter((f) => f.endsWith(".ts") && f !== "record.ts")
      .filter((f) => writers.test(readFileSync(new URL(f, dir), "utf8")))
      .sort();
    assert.deepEqual(callers, ["cronjob_controller.ts", "pass.ts"]);
  });
});
