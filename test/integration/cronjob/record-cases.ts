// The record, status.recentRuns (api/v1/recentruns.ts, controllers/record.ts), as the reconciler writes it: for
// each decision, the exact entries stored after the pass, and how many status writes it took. A decision that
// holds on every pass is one entry and no further write; an outcome comes in the status write that records the
// Job's end; a Job whose status write never happened (a crash, a write deferred under load) is entered by a later
// pass from the Job exactly as the run path would have entered it. Rows of the one runner (rows.ts: times are
// offsets from the CronJob's first slot h1; no pass has seen the CronJob, the clock at h1 - 30m); a Created
// entry's decidedAt is its Job's creationTimestamp, as the apiserver stamped it ("created"). The pure functions
// are tested in test/unit/record.test.ts. The unit suite runs this table against the in-memory FakeClient
// (test/unit/cronjob-reconciler-table.test.ts), which stamps creations with the fake clock: what a pass creates
// and what it decides are then ordered as in a cluster, where the apiserver's clock is the reconciler's.
import { describe } from "node:test";
import { MAX_RECENT_RUNS, RUN_NOW_ANNOTATION } from "../../../api/v1/index.ts";
import type { ReconcilerDriver } from "./harness.ts";
import {
  HOUR,
  hourRange,
  hours,
  MIN,
  type Offset,
  type Row,
  rowTable,
  type RunEntry,
  runRows,
  scheduled,
  type Step,
} from "./rows.ts";

/** The Created entry of an older missed slot run by missedRunPolicy RunAll. */
const caughtUp = (slot: Offset): RunEntry => ({
  ...scheduled(slot),
  trigger: "Schedule",
  reason: "MissedRunPolicyRunAll",
});
/** The Held entry of a slot behind the running Job of `blocker` (concurrencyPolicy Forbid). */
const held = (slot: Offset, blocker: Offset, decidedAt: Offset): RunEntry => ({
  trigger: "Schedule",
  scheduledTime: slot,
  decision: "Held",
  reason: "ConcurrencyPolicyForbid",
  message: (c) => `not started: concurrencyPolicy Forbid and Job ${c.job(blocker)} still running`,
  decidedAt,
  blockedBy: blocker,
});

/** The Refused entry of slot 0, whose name a Job this CronJob does not control holds, decided at 1 s. */
const foreignNameRefused: RunEntry = {
  trigger: "Schedule",
  scheduledTime: 0,
  decision: "Refused",
  reason: "AlreadyExists",
  message: (c) => `a Job named ${c.job(0)} already exists and is not controlled by this CronJob`,
  decidedAt: 1000,
};

const BACKOFF = { reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit" };
const DEADLINE = { reason: "DeadlineExceeded", message: "Job was active longer than specified deadline" };

const runRows_: Row[] = [
  {
    title: "a scheduled slot: Created, its Job, at the Job's creation, in the pass's one status write",
    steps: [
      { at: 1000, reconcile: "pass" },
      { expect: { recentRuns: [scheduled(0)], statusWrites: 1 } },
      "pass",
      { expect: { statusWrites: 0 }, why: "a repeated pass writes nothing new" },
    ],
  },
  {
    title: "its Job failing (BackoffLimitExceeded): the outcome in the status write that records lastFailedTime",
    steps: [
      { at: 1000, reconcile: "pass" },
      { finish: 0, as: "Failed", start: 1000, end: MIN, failure: BACKOFF },
      { expect: { status: { lastFailedTime: null }, recentRuns: [scheduled(0)], statusWrites: 1 } },
      { at: 2 * MIN, reconcile: "pass" },
      {
        expect: {
          status: { lastFailedTime: MIN },
          recentRuns: [scheduled(0, { outcome: { result: "Failed", ...BACKOFF, finishedAt: MIN } })],
          statusWrites: 1,
        },
        why: "one write holds both the Job's end and its outcome",
      },
      { at: 3 * MIN, reconcile: "pass" },
      { expect: { statusWrites: 0 }, why: "the outcome is recorded once" },
    ],
  },
  {
    title: "Jobs ending Complete and Failed (DeadlineExceeded): each entry its own outcome",
    steps: [
      { at: 1000, reconcile: "pass" },
      { at: HOUR + 1000, reconcile: "pass" },
      { finish: 0, as: "Complete", start: 1000, end: 30_000 },
      { finish: HOUR, as: "Failed", start: HOUR + 1000, end: HOUR + 10 * MIN, failure: DEADLINE },
      { at: HOUR + 11 * MIN, reconcile: "pass" },
      {
        expect: {
          recentRuns: [
            scheduled(HOUR, { outcome: { result: "Failed", ...DEADLINE, finishedAt: HOUR + 10 * MIN } }),
            scheduled(0, { outcome: { result: "Complete", finishedAt: 30_000 } }),
          ],
          status: { lastSuccessfulTime: 30_000, lastFailedTime: HOUR + 10 * MIN },
        },
      },
    ],
  },
];

const forbidRows: Row[] = [
  {
    title: "Forbid: a slot held behind a running Job is one Held entry (blockedBy) and no further status write",
    spec: { concurrencyPolicy: "Forbid" },
    steps: [
      { at: 1000, reconcile: "pass" },
      { at: HOUR + 1000, reconcile: "pass" },
      { expect: { recentRuns: [held(HOUR, 0, HOUR + 1000), scheduled(0)] } },
      "forget events",
      { expect: { statusWrites: 2 } },
      "pass",
      { expect: { statusWrites: 0 }, why: "a second pass at the same time writes nothing" },
      { at: HOUR + 20 * MIN, reconcile: "pass" },
      { expect: { statusWrites: 0 }, why: "nor a later one while the slot is held" },
      { expect: { recentRuns: [held(HOUR, 0, HOUR + 1000), scheduled(0)] } },
      // The running Job ends: the held slot runs, and its entry is the Created one.
      { finish: 0, as: "Complete", start: 1000, end: HOUR + 25 * MIN },
      { at: HOUR + 26 * MIN, reconcile: "pass" },
      {
        expect: {
          recentRuns: [scheduled(HOUR), scheduled(0, { outcome: { result: "Complete", finishedAt: HOUR + 25 * MIN } })],
        },
      },
    ],
  },
  {
    title: "Forbid: a held slot then missed past startingDeadlineSeconds is Missed and keeps blockedBy",
    spec: { concurrencyPolicy: "Forbid", startingDeadlineSeconds: 600 },
    steps: [
      { at: 1000, reconcile: "pass" },
      { at: HOUR + 1000, reconcile: "pass" },
      { expect: { recentRuns: [held(HOUR, 0, HOUR + 1000), scheduled(0)] } },
      { at: HOUR + 11 * MIN, reconcile: "pass" },
      {
        expect: {
          recentRuns: [
            {
              trigger: "Schedule",
              scheduledTime: HOUR,
              decision: "Missed",
              reason: "StartingDeadlineExceeded",
              message: (c) =>
                `Missed scheduled time to start a job: ${c.time(HOUR)} (startingDeadlineSeconds 600 passed at ${c.time(HOUR + 10 * MIN)})`,
              decidedAt: HOUR + 11 * MIN,
              blockedBy: 0,
            },
            scheduled(0),
          ],
          status: { lastMissedTime: HOUR },
          statusWrites: 3,
        },
      },
      { at: HOUR + 12 * MIN, reconcile: "pass" },
      { expect: { statusWrites: 0 }, why: "reported once" },
    ],
  },
  {
    title: "Forbid: a run-now request held behind a running Job is Held with its request, then Created",
    spec: { concurrencyPolicy: "Forbid" },
    steps: [
      { at: 1000, reconcile: "pass" },
      { annotate: { [RUN_NOW_ANNOTATION]: "r1" } },
      { at: 2000, reconcile: "pass" },
      {
        expect: {
          recentRuns: [
            {
              trigger: "RunNow",
              request: "r1",
              decision: "Held",
              reason: "ConcurrencyPolicyForbid",
              message: (c) => `not started: concurrencyPolicy Forbid and Job ${c.job(0)} still running`,
              decidedAt: 2000,
              blockedBy: 0,
            },
            scheduled(0),
          ],
        },
      },
      { finish: 0, as: "Complete", start: 1000, end: 5 * MIN },
      { at: 6 * MIN, reconcile: "pass" },
      {
        expect: {
          recentRuns: [
            {
              trigger: "RunNow",
              request: "r1",
              decision: "Created",
              reason: "RunNowRequested",
              decidedAt: "created",
              job: { runNow: "r1" },
            },
            scheduled(0, { outcome: { result: "Complete", finishedAt: 5 * MIN } }),
          ],
        },
      },
    ],
  },
];

const missedRows: Row[] = [
  {
    title: "Skip: a slot passed while no controller ran is Skipped (MissedRunPolicySkip), once",
    spec: { missedRunPolicy: "Skip" },
    steps: [
      { at: 2 * HOUR + 5 * MIN, reconcile: "restart" },
      "restart",
      {
        expect: {
          jobs: [],
          recentRuns: [
            {
              trigger: "Schedule",
              scheduledTime: 2 * HOUR,
              decision: "Skipped",
              reason: "MissedRunPolicySkip",
              message: (c) =>
                `Missed scheduled time to start a job: ${c.time(2 * HOUR)} (missedRunPolicy Skip runs only the time status.nextScheduleTime announced (the operator was down, or the CronJob suspended, stopped or blocked by a Forbid run))`,
              decidedAt: 2 * HOUR + 5 * MIN,
            },
          ],
          statusWrites: 1,
        },
      },
    ],
  },
  {
    title: "RunAll after an outage: the older slots CatchUp, the newest Schedule",
    spec: { missedRunPolicy: "RunAll", maxCatchUpRuns: 10 },
    steps: [
      { at: 3 * HOUR + 5 * MIN, reconcile: "pass" },
      {
        expect: {
          jobs: hours(0, 1, 2, 3),
          recentRuns: [scheduled(3 * HOUR), caughtUp(2 * HOUR), caughtUp(HOUR), caughtUp(0)],
          statusWrites: 1,
        },
      },
      "restart",
      { expect: { statusWrites: 0 }, why: "a restart rebuilds nothing different" },
    ],
  },
  {
    title: "RunAll with Replace: the newest runs, the older missed one is Skipped (RunAllReplace)",
    spec: { missedRunPolicy: "RunAll", concurrencyPolicy: "Replace" },
    steps: [
      { at: 2 * HOUR + 5 * MIN, reconcile: "pass" },
      {
        expect: {
          jobs: [2 * HOUR],
          // Decided in the same second: the newer slot first.
          recentRuns: [
            scheduled(2 * HOUR),
            {
              trigger: "Schedule",
              scheduledTime: HOUR,
              decision: "Skipped",
              reason: "RunAllReplace",
              message: (c) =>
                `Missed scheduled time to start a job: ${c.time(HOUR)} (missedRunPolicy RunAll with concurrencyPolicy Replace runs only the newest missed time: 2 older missed times are not run)`,
              decidedAt: 2 * HOUR + 5 * MIN,
            },
          ],
        },
      },
    ],
  },
];

const refusedRows: Row[] = [
  {
    title: "Replace: the new slot's entry lists the Job it deleted",
    spec: { concurrencyPolicy: "Replace" },
    steps: [
      { at: 1000, reconcile: "pass" },
      { at: HOUR + 1000, reconcile: "pass" },
      {
        expect: {
          jobNames: [HOUR],
          recentRuns: [
            scheduled(HOUR, {
              replaced: [0],
              message: (c) => `replaced ${c.job(0)} (concurrencyPolicy Replace)`,
            }),
            scheduled(0),
          ],
        },
      },
    ],
  },
  {
    title: "a create the API server refuses (a ResourceQuota): Refused with its reason and message, written once",
    steps: [
      {
        fakeRefusesCreate: 0,
        code: 403,
        reason: "Forbidden",
        message: (c) => `jobs.batch "${c.job(0)}" is forbidden: ${QUOTA}`,
      },
      { at: 1000, reconcile: "pass", rejects: /creating Job/ },
      {
        expect: {
          jobCount: 0,
          recentRuns: [
            {
              trigger: "Schedule",
              scheduledTime: 0,
              decision: "Refused",
              reason: "Forbidden",
              message: (c) => `jobs.batch "${c.job(0)}" is forbidden: ${QUOTA}`,
              decidedAt: 1000,
            },
          ],
          statusWrites: 1,
        },
      },
      { at: 2 * MIN, reconcile: "pass", rejects: /creating Job/ },
      { expect: { statusWrites: 0 }, why: "the retry's same refusal writes nothing" },
    ],
  },
  {
    title: "a foreign Job holding the slot's name: Refused, AlreadyExists, written once",
    steps: [
      { createJob: 0, owner: "none" },
      { at: 1000, reconcile: "pass" },
      {
        expect: {
          recentRuns: [foreignNameRefused],
          statusWrites: 1,
        },
      },
      { at: 2 * MIN, reconcile: "pass" },
      { expect: { statusWrites: 0 } },
    ],
  },
  {
    // A refusal is news no Job tells: the burst the create noted must not hold it back (a create conflict is
    // not retried, so no later pass of its own would write it).
    title: "a foreign Job holding the slot's name during a burst: Refused, AlreadyExists, written at once",
    steps: [
      { createJob: 0, owner: "none" },
      { at: 1000, reconcile: "pass", load: "burst", urgentWrites: 1 },
      {
        expect: {
          recentRuns: [foreignNameRefused],
          statusWrites: 1,
        },
      },
    ],
  },
  {
    title: "a Job of ours that ended before the cache saw it: Adopted, and never listed as active",
    steps: [
      { createJob: 0, state: "complete", start: 500, end: 800 },
      { at: 2000, reconcile: "pass", unseen: [0] },
      {
        expect: {
          recentRuns: [scheduled(0, { decision: "Adopted" })],
          status: { lastScheduleTime: 0, active: [] },
          statusWrites: 1,
        },
      },
    ],
  },
];

const requestRows: Row[] = [
  {
    title: "run-now: Created for the request, with no slot",
    steps: [
      { annotate: { [RUN_NOW_ANNOTATION]: "now-1" } },
      "pass",
      {
        expect: {
          recentRuns: [
            {
              trigger: "RunNow",
              request: "now-1",
              decision: "Created",
              reason: "RunNowRequested",
              decidedAt: "created",
              job: { runNow: "now-1" },
            },
          ],
          statusWrites: 1,
        },
      },
    ],
  },
  {
    title: "backfill: each slot run is Created for the request, with its slot; a slot with its Job is not entered",
    spec: { successfulJobsHistoryLimit: 20 },
    steps: [
      { at: 2 * HOUR + 30 * MIN, reconcile: "pass" },
      { finish: 2 * HOUR, as: "Complete", start: 2 * HOUR + 30 * MIN, end: 2 * HOUR + 31 * MIN },
      { backfill: { from: -1, to: 2 * HOUR, parallelism: 2 } },
      { at: 2 * HOUR + 40 * MIN, reconcile: "pass" },
      {
        expect: {
          backfillJobs: hours(0, 1),
          recentRuns: [
            { ...scheduled(HOUR), trigger: "Backfill", request: "bf-1", reason: "BackfillRequested" },
            { ...scheduled(0), trigger: "Backfill", request: "bf-1", reason: "BackfillRequested" },
            scheduled(2 * HOUR, { outcome: { result: "Complete", finishedAt: 2 * HOUR + 31 * MIN } }),
          ],
        },
      },
    ],
  },
  {
    title: "backfill: a slot a foreign Job holds is Refused, AlreadyExists, for the request; the next slot runs",
    spec: { successfulJobsHistoryLimit: 20 },
    steps: [
      { at: 2 * HOUR + 30 * MIN, reconcile: "pass" },
      { finish: 2 * HOUR, as: "Complete", start: 2 * HOUR + 30 * MIN, end: 2 * HOUR + 31 * MIN },
      { createJob: 0, owner: "none" },
      { backfill: { from: -1, to: 2 * HOUR } },
      { at: 2 * HOUR + 40 * MIN, reconcile: "pass" },
      {
        expect: {
          backfillJobs: [HOUR],
          recentRuns: [
            { ...scheduled(HOUR), trigger: "Backfill", request: "bf-1", reason: "BackfillRequested" },
            {
              trigger: "Backfill",
              scheduledTime: 0,
              request: "bf-1",
              decision: "Refused",
              reason: "AlreadyExists",
              message: (c) => `a Job named ${c.job(0)} already exists and is not controlled by this CronJob`,
              decidedAt: 2 * HOUR + 40 * MIN,
            },
            scheduled(2 * HOUR, { outcome: { result: "Complete", finishedAt: 2 * HOUR + 31 * MIN } }),
          ],
        },
      },
    ],
  },
];

/** One failed run: the slot's Job created at the slot, failed a minute later, the failure seen at +2m. */
const failSlot = (slot: Offset): Step[] => [
  { at: slot, reconcile: "pass" },
  { finish: slot, as: "Failed", failure: BACKOFF },
  { at: slot + 2 * MIN, reconcile: "pass" },
];
const failed = (slot: Offset) => scheduled(slot, { outcome: { result: "Failed", ...BACKOFF, finishedAt: slot + MIN } });

const stopRows: Row[] = [
  {
    title: "stop after N failures: Stopped (StoppedAfterFailures) at the stop, in the write that stops, once",
    spec: { stopAfterConsecutiveFailures: 2, failedJobsHistoryLimit: 5 },
    steps: [
      ...failSlot(0),
      ...failSlot(HOUR),
      {
        expect: {
          status: { stopped: { time: HOUR + 2 * MIN, failures: 2, generation: 1 } },
          recentRuns: [
            {
              trigger: "Schedule",
              decision: "Stopped",
              reason: "StoppedAfterFailures",
              message:
                "Stopped scheduling after 2 failed runs in a row (spec.stopAfterConsecutiveFailures 2); running Jobs are not touched. Resume with kubectl cron resume, or change the spec.",
              decidedAt: HOUR + 2 * MIN,
            },
            failed(HOUR),
            failed(0),
          ],
          statusWrites: 4,
        },
      },
      { at: 3 * HOUR + MIN, reconcile: "restart" },
      { expect: { statusWrites: 0 }, why: "the stop is entered once, also after a restart" },
    ],
  },
];

const boundRows: Row[] = [
  {
    title: `after 12 slots the record keeps the ${MAX_RECENT_RUNS} newest, and a pass after writes nothing`,
    steps: [
      ...hourRange(0, 12).map((slot): Step => ({ at: slot + 1000, reconcile: "pass" })),
      {
        expect: {
          recentRuns: hourRange(2, MAX_RECENT_RUNS)
            .reverse()
            .map((slot) => scheduled(slot)),
        },
      },
      "forget events",
      { expect: { statusWrites: 12 } },
      { at: 11 * HOUR + 2 * MIN, reconcile: "pass" },
      { expect: { statusWrites: 0 }, why: "the Jobs of the dropped entries are not entered again" },
      // A dropped entry's Job ends: the record stays as it is (the end is in status, the entry is gone).
      { finish: 0, as: "Complete", start: 1000, end: 11 * HOUR + 3 * MIN },
      { at: 11 * HOUR + 4 * MIN, reconcile: "pass" },
      {
        expect: {
          recentRuns: hourRange(2, MAX_RECENT_RUNS)
            .reverse()
            .map((slot) => scheduled(slot)),
          status: { lastSuccessfulTime: 11 * HOUR + 3 * MIN },
        },
      },
    ],
  },
];

/**
 * A created Job whose status write never happened is entered by a later pass from the Job (step 4) exactly as the
 * run path enters it: the stored status is that of a pass whose write was lost.
 */
const crashRows: Row[] = [
  {
    title: "a crash between the Job create and the status write: the next pass enters the run path's entry",
    steps: [
      // The pass creates the Job and leaves its status write for later (a burst); the process then dies.
      { at: 1000, reconcile: "pass", load: "burst" },
      { expect: { jobs: [0], recentRuns: [], statusWrites: 0 } },
      { at: 2000, reconcile: "restart" },
      { expect: { recentRuns: [scheduled(0)], statusWrites: 1 } },
    ],
  },
  {
    title: "a Job a dead process created for a slot: entered as Created at its creation",
    steps: [
      { createJob: 0 },
      { at: 2000, reconcile: "pass" },
      { expect: { recentRuns: [scheduled(0)], statusWrites: 1 } },
      "pass",
      { expect: { statusWrites: 0 } },
    ],
  },
  {
    title: "a held slot whose Job's status write was lost: the next pass makes the Held entry the Created one",
    spec: { concurrencyPolicy: "Forbid" },
    only: "fake",
    steps: [
      { at: 1000, reconcile: "pass" },
      { at: HOUR + 1000, reconcile: "pass" },
      { finish: 0, as: "Failed", start: 1000, end: HOUR + 5 * MIN, failure: BACKOFF },
      "fake loses the next status write",
      { at: HOUR + 6 * MIN, reconcile: "pass", rejects: /status write lost/ },
      {
        expect: { jobs: hours(0, 1), recentRuns: [held(HOUR, 0, HOUR + 1000), scheduled(0)], statusWrites: 3 },
        why: "the two passes' writes and the lost one",
      },
      { at: HOUR + 7 * MIN, reconcile: "restart" },
      {
        expect: {
          recentRuns: [
            scheduled(HOUR),
            scheduled(0, { outcome: { result: "Failed", ...BACKOFF, finishedAt: HOUR + 5 * MIN } }),
          ],
          statusWrites: 1,
        },
      },
    ],
  },
  {
    title: "a Job of ours the cache has not seen yet: Adopted, then left as it is",
    steps: [
      { createJob: 0 },
      { at: 2000, reconcile: "pass", unseen: [0] },
      { expect: { recentRuns: [scheduled(0, { decision: "Adopted" })], statusWrites: 1 } },
      "pass",
      { expect: { recentRuns: [scheduled(0, { decision: "Adopted" })], statusWrites: 0 } },
    ],
  },
  {
    title: "RunAll's catch-up Jobs whose status write was lost: entered as CatchUp, as the run path would",
    spec: { missedRunPolicy: "RunAll" },
    steps: [
      { at: 2 * HOUR + 5 * MIN, reconcile: "pass", load: "burst" },
      { expect: { jobs: hours(0, 1, 2), statusWrites: 0 } },
      "restart",
      { expect: { recentRuns: [scheduled(2 * HOUR), caughtUp(HOUR), caughtUp(0)] } },
    ],
  },
  {
    title: "Replace's Job whose status write was lost: entered with the Job it replaced, as the run path would",
    spec: { concurrencyPolicy: "Replace" },
    only: "fake",
    steps: [
      { at: 1000, reconcile: "pass" },
      // The pass deletes the running Job and creates the new one; its status write is lost.
      "fake loses the next status write",
      { at: HOUR + 1000, reconcile: "pass", rejects: /status write lost/ },
      { expect: { jobNames: [HOUR], recentRuns: [scheduled(0)] } },
      { at: HOUR + 2000, reconcile: "restart" },
      {
        expect: {
          recentRuns: [
            scheduled(HOUR, { replaced: [0], message: (c) => `replaced ${c.job(0)} (concurrencyPolicy Replace)` }),
            scheduled(0),
          ],
        },
      },
    ],
  },
];

const QUOTA =
  "exceeded quota: batch-jobs, requested: count/jobs.batch=1, used: count/jobs.batch=10, limited: count/jobs.batch=10";

export function recordCases(driver: ReconcilerDriver): void {
  describe(`status.recentRuns, the record (fake clock, ${driver.name})`, () => {
    const table = rowTable(driver, { namespace: "record", prefix: "rec", firstPass: false });
    runRows(table, runRows_);
    runRows(table, forbidRows);
    runRows(table, missedRows);
    runRows(table, refusedRows);
    runRows(table, requestRows);
    runRows(table, stopRows);
    runRows(table, boundRows);
    runRows(table, crashRows);
  });
}
