// --status-write-delay (the reconciler's statusDelayMs): a run this process created may wait that long to be
// written to status, so that a Job that ends within it costs one status write (its creation and its end
// together) instead of two. Only the process's own fresh runs wait; anything else that is news is written at
// once, and the record a later pass writes is the one the run path would have written (docs/architecture.md,
// "Status writes"). Rows of the one runner (rows.ts: offsets from the CronJob's first slot h1).
import { describe } from "node:test";
import type { ReconcilerDriver } from "./harness.ts";
import { MIN, type Row, rowTable, runRows, scheduled } from "./rows.ts";

const DELAY = 10_000;

const rows: Row[] = [
  {
    title: "a Job that ends within the delay: one status write holds its creation and its end",
    steps: [
      // Woken when the delay is over (10 ms slack) unless the Job's end wakes it first.
      { at: 1000, reconcile: "pass", requeue: 1000 + DELAY },
      { expect: { statusWrites: 0, jobNames: [0], status: { lastScheduleTime: null } } },
      { finish: 0, as: "Complete", start: 1000, end: 6000 },
      { at: 6000, reconcile: "pass" },
      {
        expect: {
          statusWrites: 1,
          status: { lastScheduleTime: 0, lastSuccessfulTime: 6000, active: [] },
          recentRuns: [scheduled(0, { outcome: { result: "Complete", finishedAt: 6000 } })],
        },
        why: "the creation and the end in one write",
      },
    ],
  },
  {
    title: "a Job still running when the delay is over: written then, and again at its end",
    steps: [
      { at: 1000, reconcile: "pass" },
      { at: 5000, reconcile: "pass" },
      { expect: { statusWrites: 0 }, why: "a pass within the delay writes nothing while the Job runs" },
      { at: 1000 + DELAY, reconcile: "pass" },
      { expect: { statusWrites: 1, status: { lastScheduleTime: 0, active: [0] }, recentRuns: [scheduled(0)] } },
      { finish: 0, as: "Complete", start: 1000, end: MIN },
      { at: MIN, reconcile: "pass" },
      { expect: { statusWrites: 1, status: { lastSuccessfulTime: MIN, active: [] } } },
    ],
  },
  {
    title: "another process (a restart, a new leader) writes the run at once: it did not create it",
    steps: [
      { at: 1000, reconcile: "pass" },
      { expect: { statusWrites: 0 } },
      { at: 2000, reconcile: "restart" },
      { expect: { statusWrites: 1, status: { lastScheduleTime: 0, active: [0] }, recentRuns: [scheduled(0)] } },
    ],
  },
  {
    title: "a Job someone else created for a slot is written at once",
    steps: [
      { createJob: 0 },
      { at: 1000, reconcile: "pass" },
      { expect: { statusWrites: 1, status: { lastScheduleTime: 0, active: [0] } } },
    ],
  },
];

/**
 * A new CronJob's first status when it decides nothing: held back while other CronJobs wait in the queue (the
 * table's "queued" load: others always wait), written by the pass it comes back to.
 */
const firstStatusRows: Row[] = [
  {
    title: "a new CronJob's first status waits once behind other CronJobs' passes, then is written",
    firstPass: false,
    steps: [
      { reconcile: "pass", load: "queued", requeue: { whenIdle: true } },
      { expect: { statusWrites: 0, status: { nextScheduleTime: null } }, why: "nothing decided: the write waits" },
      { reconcile: "pass", load: "queued" },
      {
        expect: { statusWrites: 1, status: { nextScheduleTime: 0, observedCurrent: true } },
        why: "the pass it came back to writes, however busy the controller still is",
      },
    ],
  },
  {
    title: "with nothing else queued, a new CronJob's first status is written at once",
    firstPass: false,
    steps: [{ reconcile: "pass" }, { expect: { statusWrites: 1, status: { nextScheduleTime: 0 } } }],
  },
  {
    title: "a first status that reports a problem (a time zone that does not exist) is written at once, others queued",
    firstPass: false,
    spec: { timeZone: "Mars/Olympus_Mons" },
    steps: [
      { reconcile: "pass", load: "queued" },
      { expect: { statusWrites: 1, conditions: { Available: { status: "False" } } } },
    ],
  },
];

/** The fold's bound in these rows, and a budget that never has room (qps 0): every routine change waits for it. */
const BOUND = 5 * MIN;

/**
 * --status-write-qps and --status-write-max-delay (the reconciler's statusFold, controllers/statusfold.ts): with no
 * room in the budget, a change its Jobs tell (a scheduled run's start or end) waits up to the bound and several go in
 * one write; anything a Job does not tell is written at once; a restart or a lost Job keeps the books right.
 */
const foldRows: Row[] = [
  {
    title: "no room: a run's start and end wait for the bound and go in one write",
    steps: [
      // Woken before the bound: the slot plus BOUND, less the CronJob's spread (at most a minute).
      { at: 1000, reconcile: "pass", requeue: { atLeastMs: BOUND - MIN - 1000 } },
      {
        expect: {
          statusWrites: 0,
          jobNames: [0],
          status: { lastScheduleTime: null },
          events: { containing: "SuccessfulCreate", count: 0 },
        },
        why: "the start is folded, and its routine Event left out: no room",
      },
      { finish: 0, as: "Complete", start: 1000, end: 30_000 },
      { at: 30_000, reconcile: "pass" },
      { expect: { statusWrites: 0 }, why: "a success is its Job's to tell: folded too" },
      { at: BOUND, reconcile: "pass" },
      {
        expect: {
          statusWrites: 1,
          status: { lastScheduleTime: 0, lastSuccessfulTime: 30_000, active: [] },
          recentRuns: [scheduled(0, { outcome: { result: "Complete", finishedAt: 30_000 } })],
        },
        why: "at the bound, the run's start and end in one write",
      },
    ],
  },
  {
    title: "no room: a failed run is news (Degraded), written at once",
    steps: [
      { at: 1000, reconcile: "pass" },
      { expect: { statusWrites: 0 } },
      { finish: 0, as: "Failed", start: 1000, end: 30_000 },
      { at: 30_000, reconcile: "pass" },
      {
        expect: {
          statusWrites: 1,
          status: { lastScheduleTime: 0, lastFailedTime: 30_000 },
          conditions: { Degraded: { status: "True", reason: "LastJobFailed" } },
          events: { containing: "SawCompletedJob", count: 1 },
        },
      },
    ],
  },
  {
    title: "a restart before the folded write rebuilds the run from its Job and keeps the bound",
    steps: [
      { at: 1000, reconcile: "pass" },
      { at: 2 * MIN, reconcile: "restart" },
      { expect: { statusWrites: 0, jobNames: [0] }, why: "the new process folds too: the bound counts from the slot" },
      { at: BOUND, reconcile: "restart" },
      {
        expect: {
          statusWrites: 1,
          jobNames: [0],
          status: { lastScheduleTime: 0, active: [0] },
          recentRuns: [scheduled(0)],
        },
        why: "the record entry rebuilt from the Job is the run path's own",
      },
    ],
  },
  {
    title: "a Job deleted before the folded write books it: its slot counts as run, written at once, not run again",
    steps: [
      { at: 1000, reconcile: "pass" },
      { expect: { statusWrites: 0, jobNames: [0] } },
      { deleteJob: 0 },
      { at: 2000, reconcile: "pass" },
      { expect: { statusWrites: 1, jobNames: [], status: { lastScheduleTime: 0 } } },
    ],
  },
  {
    title: "the write at the bound refused: the next pass writes it, the run still booked once",
    only: "fake",
    steps: [
      { at: 1000, reconcile: "pass" },
      { finish: 0, as: "Complete", start: 1000, end: 30_000 },
      "fake loses the next status write",
      { at: BOUND, reconcile: "pass", rejects: /status write lost/ },
      { expect: { statusWrites: 1, status: { lastScheduleTime: null } }, why: "the lost attempt, nothing stored" },
      { at: BOUND + 1000, reconcile: "pass" },
      {
        expect: {
          statusWrites: 1,
          jobNames: [0],
          status: { lastScheduleTime: 0, lastSuccessfulTime: 30_000 },
          recentRuns: [scheduled(0, { outcome: { result: "Complete", finishedAt: 30_000 } })],
        },
      },
    ],
  },
];

/** A budget with room (a small fleet): every change is written as without the fold. */
const roomyRows: Row[] = [
  {
    title: "room in the budget: a run's start is written at once",
    steps: [
      { at: 1000, reconcile: "pass" },
      {
        expect: {
          statusWrites: 1,
          status: { lastScheduleTime: 0, active: [0] },
          recentRuns: [scheduled(0)],
          events: { containing: "SuccessfulCreate", count: 1 },
        },
      },
    ],
  },
];

export function statusDelayCases(driver: ReconcilerDriver): void {
  describe(`--status-write-delay: a new run's status write waits for its end (fake clock, ${driver.name})`, () => {
    runRows(rowTable(driver, { namespace: "status-delay", prefix: "sd", firstPass: true, statusDelayMs: DELAY }), rows);
  });
  describe(`a new CronJob's first status waits behind the passes that decide (fake clock, ${driver.name})`, () => {
    runRows(rowTable(driver, { namespace: "first-status", prefix: "fs", firstPass: false }), firstStatusRows);
  });
  describe(`--status-write-qps with no room: routine writes fold up to --status-write-max-delay (fake clock, ${driver.name})`, () => {
    const statusFold = { qps: 0, maxDelayMs: BOUND };
    runRows(rowTable(driver, { namespace: "status-fold", prefix: "sf", firstPass: true, statusFold }), foldRows);
  });
  describe(`--status-write-qps with room: written at once (fake clock, ${driver.name})`, () => {
    const statusFold = { qps: 100, maxDelayMs: BOUND };
    runRows(rowTable(driver, { namespace: "status-roomy", prefix: "sr", firstPass: true, statusFold }), roomyRows);
  });
}
