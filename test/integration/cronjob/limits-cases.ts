// Issue 71's limits as rows of the reconciler's table (rows.ts): a CronJob that makes at most spec.maxRuns scheduled
// runs (status.scheduledRuns counts them, once each, across a lost status write), and one whose slots lie between
// spec.startTime and spec.endTime; run-now requests run either way and are not counted. The unit suite runs the table
// against the fake (test/unit/cronjob-reconciler-table.test.ts), the integration suite against a real apiserver
// (triggers.test.ts).
import { describe } from "node:test";
import { RUN_NOW_ANNOTATION } from "../../../api/v1/index.ts";
import type { ReconcilerDriver } from "./harness.ts";
import {
  HOUR,
  MIN,
  type Offset,
  type Row,
  rowTable,
  withoutRecordOrder,
  type RunEntry,
  runRows,
  scheduled,
} from "./rows.ts";

const NAMESPACE = "limits";
const MAX_RUNS_ENDED = "ended: 2 of 2 runs made (spec.maxRuns); run-now and backfill requests still run";

/** The record's entry of the end of scheduling, decided at `at`. */
const ended = (reason: "MaxRunsReached" | "EndTimeReached", at: Offset, message: RunEntry["message"]): RunEntry => ({
  trigger: "Schedule",
  decision: "Stopped",
  reason,
  message,
  decidedAt: at,
});

const limitRows: Row[] = [
  {
    title: "maxRuns: two scheduled runs, then no slot runs; the count, the condition and the record say so",
    spec: { maxRuns: 2 },
    steps: [
      { at: 1000, reconcile: "pass" },
      { expect: { scheduledJobs: [0], status: { scheduledRuns: 1, nextScheduleTime: HOUR } } },
      { at: HOUR + 1000, reconcile: "pass", requeue: "none" },
      {
        expect: {
          scheduledJobs: [0, HOUR],
          status: { scheduledRuns: 2, nextScheduleTime: null },
          conditions: { Available: { status: "False", reason: "MaxRunsReached" } },
          recentRuns: [scheduled(HOUR), ended("MaxRunsReached", HOUR + 1000, MAX_RUNS_ENDED), scheduled(0)],
          events: { containing: `ScheduleEnded Scheduling ${MAX_RUNS_ENDED}`, count: 1 },
        },
        why: "the second run ends scheduling in the pass that made it: no next run is announced",
      },
      { at: 2 * HOUR + 1000, reconcile: "pass" },
      { at: 2 * HOUR + 2000, reconcile: "restart" },
      {
        expect: { scheduledJobs: [0, HOUR], status: { scheduledRuns: 2 }, events: { count: 0 } },
        why: "no third run, and the end is recorded once",
      },
      { annotate: { [RUN_NOW_ANNOTATION]: "once-more" } },
      { at: 2 * HOUR + 3000, reconcile: "pass" },
      {
        expect: { runNowJobs: ["once-more"], status: { scheduledRuns: 2 } },
        why: "a run-now request still runs, and is not counted",
      },
      { patch: { maxRuns: 3 } },
      { at: 3 * HOUR + 1000, reconcile: "pass" },
      {
        expect: {
          scheduledJobs: [0, HOUR, 3 * HOUR],
          status: { scheduledRuns: 3, nextScheduleTime: null },
          conditions: { Available: "MaxRunsReached" },
        },
        why: "raised, it makes one more run",
      },
      { patch: { maxRuns: undefined } },
      { at: 3 * HOUR + 2000, reconcile: "pass" },
      {
        expect: {
          status: { scheduledRuns: null, nextScheduleTime: 4 * HOUR },
          conditions: { Available: { status: "True" } },
        },
        why: "unset, the count goes and the schedule runs on",
      },
    ],
  },
  {
    title: "maxRuns: a run whose status write was lost is counted once, and the last run is not made twice",
    only: "fake",
    spec: { maxRuns: 1 },
    steps: [
      "fake loses the next status write",
      { at: 1000, reconcile: "pass", rejects: /status write lost/ },
      { at: 2000, reconcile: "restart" },
      {
        expect: {
          scheduledJobs: [0],
          status: { scheduledRuns: 1 },
          conditions: { Available: "MaxRunsReached" },
        },
      },
      { at: HOUR + 1000, reconcile: "restart" },
      { expect: { scheduledJobs: [0], status: { scheduledRuns: 1 } } },
    ],
  },
  {
    title: "maxRuns with RunAll: a catch-up runs no more slots than are left",
    spec: { maxRuns: 2, missedRunPolicy: "RunAll", maxCatchUpRuns: 10 },
    steps: [
      { at: 3 * HOUR + 1000, reconcile: "pass" },
      { at: 3 * HOUR + 2000, reconcile: "pass" },
      {
        expect: { scheduledJobs: [0, HOUR], status: { scheduledRuns: 2 }, conditions: { Available: "MaxRunsReached" } },
      },
    ],
  },
  {
    title: "startTime: no slot before it runs or is missed; the first slot at it is announced and runs",
    steps: [
      { window: { start: 2 * HOUR } },
      { at: 1000, reconcile: "pass", requeue: 2 * HOUR },
      { expect: { jobCount: 0, status: { nextScheduleTime: 2 * HOUR, lastMissedTime: null } } },
      { at: 2 * HOUR + 1000, reconcile: "pass" },
      { expect: { scheduledJobs: [2 * HOUR], status: { nextScheduleTime: 3 * HOUR } } },
    ],
  },
  {
    title: "endTime: the last slot at or before it runs, then scheduling ends; a run-now request still runs",
    steps: [
      { window: { end: HOUR } },
      { at: 1000, reconcile: "pass" },
      { expect: { scheduledJobs: [0], status: { nextScheduleTime: HOUR } } },
      { at: HOUR + 1000, reconcile: "pass", requeue: "none" },
      {
        expect: {
          scheduledJobs: [0, HOUR],
          status: { nextScheduleTime: null },
          conditions: { Available: { status: "False", reason: "EndTimeReached" } },
          recentRuns: [
            scheduled(HOUR),
            ended(
              "EndTimeReached",
              HOUR + 1000,
              (c) => `ended: spec.endTime ${c.time(HOUR)} has passed; run-now requests still run`,
            ),
            scheduled(0),
          ],
        },
      },
      "forget events",
      { at: 5 * HOUR, reconcile: "restart" },
      { expect: { scheduledJobs: [0, HOUR], events: { containing: "ScheduleEnded", count: 0 } } },
      { annotate: { [RUN_NOW_ANNOTATION]: "after-the-end" } },
      { at: 5 * HOUR + 1000, reconcile: "pass" },
      { expect: { runNowJobs: ["after-the-end"] } },
      { window: { end: null } },
      { at: 5 * HOUR + 2000, reconcile: "pass" },
      {
        expect: { status: { nextScheduleTime: 6 * HOUR }, conditions: { Available: { status: "True" } } },
        why: "unset, the schedule runs on",
      },
    ],
  },
  {
    title: "endTime passed while the operator was down: the missed last slot runs late (RunLatest), then it ends",
    steps: [
      { window: { end: HOUR + 30 * MIN } },
      { at: 2 * HOUR + 5 * MIN, reconcile: "pass" },
      { expect: { scheduledJobs: [HOUR] }, why: "RunLatest runs the newest missed slot within the window" },
      { at: 2 * HOUR + 5 * MIN + 1000, reconcile: "pass" },
      { expect: { scheduledJobs: [HOUR], conditions: { Available: "EndTimeReached" } } },
    ],
  },
  {
    title: "endTime: the last slot held behind a running Job (Forbid) runs once that Job ends, then scheduling ends",
    spec: { concurrencyPolicy: "Forbid" },
    steps: [
      { window: { end: HOUR + 30 * MIN } },
      { at: 1000, reconcile: "pass" },
      { expect: { scheduledJobs: [0] } },
      { at: HOUR + 1000, reconcile: "pass" },
      {
        expect: { scheduledJobs: [0], conditions: { Available: { status: "True" } } },
        why: "the HOUR slot waits behind 0's Job; endTime has not passed",
      },
      { at: HOUR + 45 * MIN, reconcile: "pass" },
      {
        expect: { scheduledJobs: [0], conditions: { Available: { status: "True" } } },
        why: "endTime passed, but its last slot is still due (held): scheduling has not ended",
      },
      { finish: 0, as: "Complete", end: HOUR + 46 * MIN },
      { at: HOUR + 47 * MIN, reconcile: "pass" },
      { at: HOUR + 47 * MIN + 1000, reconcile: "pass" },
      {
        expect: { scheduledJobs: [0, HOUR], conditions: { Available: { status: "False", reason: "EndTimeReached" } } },
        why: "the held slot ran, then scheduling ended",
      },
    ],
  },
];

export function limitsCases(driver: ReconcilerDriver): void {
  describe(`limits: maxRuns, startTime, endTime (fake clock, ${driver.name})`, () => {
    const table = rowTable(driver, { namespace: NAMESPACE, prefix: "lim", firstPass: false });
    runRows(table, driver.backend === "fake" ? limitRows : withoutRecordOrder(limitRows));
  });
}
