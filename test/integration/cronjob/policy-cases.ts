// The scheduling policies of issue 22 in the reconciler, with a fake clock: what happens to missed slots
// (spec.missedRunPolicy Skip and RunAll, with maxCatchUpRuns), and stopping after repeated failures
// (spec.stopAfterConsecutiveFailures, resumed by the resume annotation or a spec change). Restarts and leader
// changes are a new reconciler (nothing remembered) on the same objects. One table, two drivers: policy.test.ts
// runs it against envtest, test/unit/cronjob-reconciler-table.test.ts against the in-memory FakeClient.
// Most cases are rows of data (rows.ts: times are offsets from the CronJob's first slot h1, half an hour after
// one pass saw it); those whose story the rows cannot tell are hand-written after them.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import {
  CronJobResource as CronJobKind,
  type CronJob,
  BACKFILL_ANNOTATION,
  BACKFILL_REQUEST_ANNOTATION,
  backfillAnnotationValue,
  RESUME_ANNOTATION,
  RUN_NOW_ANNOTATION,
  SCHEDULED_AT_ANNOTATION,
} from "../../../api/v1/index.ts";
import { CronJobReconciler } from "../../../controllers/cronjob_controller.ts";
import type { ObjectClient } from "../../../runtime/interfaces.ts";
import { discardLogger } from "../../../runtime/log.ts";
import type { ReconcileHarness, ReconcilerDriver } from "./harness.ts";
import { HOUR, hourRange, hours, MIN, minutely, type Offset, type Row, rowTable, runRows, type Step } from "./rows.ts";

const iso = (t: number) => new Date(t).toISOString().replace(/\.\d{3}Z$/, "Z");
const jobName = (cj: string, slot: number) => `${cj}-${slot / 1000}`;

/** One failed run: the slot's Job created at the slot, failed a minute later, the failure seen at +2m. */
const failSlot = (slot: Offset): Step[] => [
  { at: slot, reconcile: "pass" },
  { finish: slot, as: "Failed" },
  { at: slot + 2 * MIN, reconcile: "pass" },
];

/** A CronJob that ran its slots for 6 hours (h1 … h1+5h, Jobs finished), now at h1+6h+30m: spec and steps. */
const HISTORY_SPEC = { successfulJobsHistoryLimit: 20 };
const HISTORY: Step[] = [
  // The schedule ran only the newest (h1+5h): h1 … h1+4h are the "broken days" to backfill.
  { at: 5 * HOUR + 30 * MIN, reconcile: "pass" },
  { finish: 5 * HOUR, as: "Complete" },
  { at: 5 * HOUR + 40 * MIN, reconcile: "pass" },
  "forget events",
];

const skipRows: Row[] = [
  {
    title: "unsuspending after a slot passed starts nothing; the next slot runs; the skipped one is reported once",
    spec: { missedRunPolicy: "Skip", suspend: true },
    steps: [
      { at: 20 * MIN, reconcile: "pass" },
      { patch: { suspend: false } },
      "pass",
      "pass",
      { expect: { jobs: [] }, why: "unsuspending starts no Job" },
      {
        expect: {
          status: { lastMissedTime: 0, nextScheduleTime: HOUR },
          events: {
            containing: "MissSchedule",
            are: [
              (c) =>
                `Warning MissSchedule Missed scheduled time to start a job: ${c.time(0)} (missedRunPolicy Skip runs only the time status.nextScheduleTime announced (the operator was down, or the CronJob suspended, stopped or blocked by a Forbid run))`,
            ],
          },
        },
      },
      { at: HOUR + 100, reconcile: "pass" },
      { expect: { jobs: [HOUR] } },
    ],
  },
  {
    title: "a CronJob no pass saw before its first slot still gets that slot (a busy controller at creation)",
    spec: { missedRunPolicy: "Skip" },
    firstPass: false,
    steps: [{ at: 20_000, reconcile: "pass" }, { expect: { jobs: [0] } }],
  },
  {
    title: "the slot status announced runs however late it is reached (a busy controller skips nothing)",
    spec: { missedRunPolicy: "Skip" },
    steps: [
      { expect: { status: { nextScheduleTime: 0 } } },
      { at: 40 * MIN, reconcile: "pass" },
      { expect: { jobs: [0] } },
    ],
  },
  {
    title: "slots that passed while no controller ran do not run, also after a restart",
    spec: { missedRunPolicy: "Skip" },
    steps: [
      { at: 2 * HOUR + 5 * MIN, reconcile: "restart" },
      "restart",
      { expect: { jobs: [], status: { lastMissedTime: 2 * HOUR } } },
      { at: 3 * HOUR, reconcile: "restart" },
      { expect: { jobs: [3 * HOUR] } },
    ],
  },
  {
    title: "with Forbid, a slot blocked by a running Job does not run when it finishes",
    spec: { missedRunPolicy: "Skip", concurrencyPolicy: "Forbid" },
    steps: [
      { at: 0, reconcile: "pass" },
      { startJob: 0, since: 0 },
      { at: HOUR, reconcile: "pass" }, // blocked: JobAlreadyActive
      { finish: 0, as: "Complete" },
      { at: HOUR + 10 * MIN, reconcile: "pass" },
      { expect: { jobs: [0], status: { lastMissedTime: HOUR } } },
    ],
  },
  {
    title:
      "an outage over 4 slots, the first of them announced: none runs, the next slot does, the newest is reported once",
    spec: { missedRunPolicy: "Skip" },
    steps: [
      { expect: { status: { nextScheduleTime: 0 } }, why: "announced before the outage" },
      // Down from h1 - 30m to h1 + 3h + 5m: h1, h1+1h, h1+2h and h1+3h passed with no controller.
      { at: 3 * HOUR + 5 * MIN, reconcile: "restart" },
      "restart",
      { at: 3 * HOUR + 20 * MIN, reconcile: "restart" },
      "pass",
      { expect: { jobs: [] }, why: "no slot of the outage runs, the announced one neither" },
      {
        expect: {
          status: { lastMissedTime: 3 * HOUR, lastScheduleTime: null, nextScheduleTime: 4 * HOUR },
          events: { containing: "MissSchedule", count: 1, firstHas: [(c) => c.time(3 * HOUR)] },
        },
      },
      { at: 4 * HOUR + 100, reconcile: "restart" },
      "pass",
      { expect: { jobs: [4 * HOUR], events: { containing: "MissSchedule", are: [] } } },
    ],
  },
];

const runAllRows: Row[] = [
  {
    title: "after an outage, every missed slot runs once, oldest first; repeats start nothing",
    spec: { missedRunPolicy: "RunAll", maxCatchUpRuns: 10 },
    steps: [
      { at: 3 * HOUR + 5 * MIN, reconcile: "pass" },
      {
        expect: {
          jobs: hours(0, 1, 2, 3),
          status: { lastScheduleTime: 3 * HOUR },
          events: {
            containing: "SuccessfulCreate",
            are: hours(0, 1, 2, 3).map((slot) => (c) => `Normal SuccessfulCreate Created job ${c.job(slot)}`),
          },
        },
      },
      "pass",
      "restart",
      { expect: { jobs: hours(0, 1, 2, 3) } },
    ],
  },
  {
    title: "maxCatchUpRuns per pass: the rest follow at once, across a restart and a leader change, none twice",
    spec: { missedRunPolicy: "RunAll", maxCatchUpRuns: 2 },
    steps: [
      { at: 4 * HOUR + 5 * MIN, reconcile: "pass", requeue: "now" },
      { expect: { jobs: hours(0, 1) } },
      "restart",
      { expect: { jobs: hours(0, 1, 2, 3) } },
      { reconcile: "restart", requeue: 5 * HOUR }, // then the next slot
      { expect: { jobs: hours(0, 1, 2, 3, 4) } },
    ],
  },
  {
    title: "a foreign Job holding a missed slot's name: that slot is refused, the newer ones run, none waits on it",
    spec: { missedRunPolicy: "RunAll", maxCatchUpRuns: 10 },
    steps: [
      { createJob: 0, owner: "none" },
      { at: 2 * HOUR + 5 * MIN, reconcile: "pass", requeue: 3 * HOUR },
      {
        expect: {
          scheduledJobs: hours(1, 2),
          status: { lastScheduleTime: 2 * HOUR },
          events: { containing: "FailedCreate", count: 1 },
        },
      },
      { at: 3 * HOUR + 5 * MIN, reconcile: "pass" },
      "restart",
      {
        expect: { scheduledJobs: hours(1, 2, 3), events: { containing: "FailedCreate", count: 0 } },
        why: "the refused slot is behind lastScheduleTime: not tried again",
      },
    ],
  },
  {
    title: "with Forbid, the missed slots run one after the other, each when the one before finished",
    spec: { missedRunPolicy: "RunAll", concurrencyPolicy: "Forbid" },
    steps: [
      { at: 2 * HOUR + 5 * MIN, reconcile: "pass" },
      { expect: { jobs: [0] } },
      { startJob: 0, since: 2 * HOUR },
      "pass",
      { expect: { jobs: [0] }, why: "waits while it runs" },
      // It ends after it started (2h): a 1.31+ apiserver refuses a completionTime before the startTime.
      { finish: 0, as: "Complete", start: 2 * HOUR, end: 2 * HOUR + 4 * MIN },
      "restart",
      { expect: { jobs: hours(0, 1) } },
      { finish: HOUR, as: "Complete" },
      "pass",
      { expect: { jobs: hours(0, 1, 2) } },
    ],
  },
  {
    title: "only slots within startingDeadlineSeconds; the newest expired one is reported",
    spec: { missedRunPolicy: "RunAll", startingDeadlineSeconds: 2 * 3600 + 600 },
    steps: [
      { at: 4 * HOUR + 5 * MIN, reconcile: "pass" },
      { expect: { jobs: hours(2, 3, 4), status: { lastMissedTime: HOUR } } },
    ],
  },
  {
    title: "with Replace, only the newest runs; the older ones are reported",
    spec: { missedRunPolicy: "RunAll", concurrencyPolicy: "Replace" },
    steps: [
      { at: 2 * HOUR + 5 * MIN, reconcile: "pass" },
      { expect: { jobs: [2 * HOUR], status: { lastMissedTime: HOUR } } },
    ],
  },
  {
    title: "500 missed slots with Allow: the newest 100 run, maxCatchUpRuns per pass; the Event counts the 400 not run",
    spec: { missedRunPolicy: "RunAll", maxCatchUpRuns: 25 },
    steps: [
      // Down for 500 slots: h1 … h1+499h.
      { at: 499 * HOUR + 5 * MIN, reconcile: "pass" },
      { expect: { jobs: hourRange(400, 25) }, why: "the oldest of the newest 100 first, 25 in a pass" },
      // 100 Jobs in passes of 25: two more at once, the fourth done, then the next slot.
      { reconcile: "restart", requeue: "now" },
      { reconcile: "restart", requeue: "now" },
      { reconcile: "restart", requeue: "later" },
      "pass",
      { expect: { jobs: hourRange(400, 100), status: { lastMissedTime: 399 * HOUR } } },
      {
        expect: { events: { containing: "MissSchedule", count: 1, firstHas: [/\b400\b/], firstLacks: [/Replace/] } },
        why: "the exact count of missed times not run, concurrencyPolicy Allow",
      },
    ],
  },
  {
    title: "500 missed slots with Replace: only the newest runs; the Event counts the 499 not run",
    spec: { missedRunPolicy: "RunAll", concurrencyPolicy: "Replace" },
    steps: [
      { at: 499 * HOUR + 5 * MIN, reconcile: "pass" },
      "restart",
      { expect: { jobs: [499 * HOUR], status: { lastMissedTime: 498 * HOUR } } },
      { expect: { events: { containing: "MissSchedule", count: 1, firstHas: [/\b499\b/, /Replace/] } } },
    ],
  },
];

const stopRows: Row[] = [
  {
    title: "stops after N failures in a row: condition, Event, no more slots; run-now still works",
    spec: { stopAfterConsecutiveFailures: 2, failedJobsHistoryLimit: 5 },
    steps: [
      ...failSlot(0),
      { expect: { status: { consecutiveFailures: 1, stopped: null } } },
      ...failSlot(HOUR),
      {
        expect: {
          status: { stopped: { time: HOUR + 2 * MIN, failures: 2, generation: 1 }, nextScheduleTime: null },
          conditions: { Available: "StoppedAfterFailures", Degraded: "StoppedAfterFailures" },
          events: { someStartWith: ["Warning StoppedAfterFailures Stopped scheduling after 2"] },
        },
      },
      { at: 3 * HOUR + MIN, reconcile: "restart" },
      { expect: { jobs: hours(0, 1) }, why: "no slot runs while stopped, after a restart too" },
      { expect: { status: { stopped: "set" } }, why: "the stop survives a restart" },
      { annotate: { [RUN_NOW_ANNOTATION]: "try-fix" } },
      "pass",
      { expect: { exist: [{ runNow: "try-fix" }] } },
    ],
  },
  {
    title: "the resume annotation resumes it once and counts from 0; an old annotation does not resume a later stop",
    spec: { stopAfterConsecutiveFailures: 1, failedJobsHistoryLimit: 5 },
    steps: [
      ...failSlot(0),
      { expect: { status: { stopped: "set" } } },
      { annotate: { [RESUME_ANNOTATION]: "r1" } },
      "pass",
      {
        expect: {
          status: { stopped: null, consecutiveFailures: 0, lastResumeRequest: "r1", nextScheduleTime: HOUR },
          events: { someStartWith: ['Normal Resumed Scheduling resumed by the resume request "r1"'] },
        },
      },
      ...failSlot(HOUR),
      { expect: { status: { stopped: { failures: 1 } } }, why: "stopped again: the old request does not resume it" },
    ],
  },
  {
    title: "a spec change resumes it",
    spec: { stopAfterConsecutiveFailures: 1, failedJobsHistoryLimit: 5 },
    steps: [
      ...failSlot(0),
      { patch: { stopAfterConsecutiveFailures: 3 } },
      "pass",
      { expect: { status: { stopped: null, consecutiveFailures: 0 } } },
      { at: HOUR, reconcile: "pass" },
      { expect: { jobs: hours(0, 1) } },
    ],
  },
  {
    title: "a success sets the count to 0; running Jobs are not touched by a stop",
    spec: { stopAfterConsecutiveFailures: 2, concurrencyPolicy: "Allow" },
    steps: [
      ...failSlot(0),
      { at: HOUR, reconcile: "pass" },
      { finish: HOUR, as: "Complete" },
      "pass",
      { expect: { status: { consecutiveFailures: 0 } } },
      // Two failures while a third Job runs: stopped, the running Job stays.
      { at: 2 * HOUR, reconcile: "pass" },
      { at: 3 * HOUR, reconcile: "pass" },
      { at: 4 * HOUR, reconcile: "pass" },
      { finish: 2 * HOUR, as: "Failed" },
      { finish: 3 * HOUR, as: "Failed" },
      "pass",
      { expect: { status: { stopped: { failures: 2 }, active: [4 * HOUR] } } },
    ],
  },
  {
    title: "a run still running at the resume belongs to the stopped streak: its failure does not stop it again",
    spec: { stopAfterConsecutiveFailures: 1, concurrencyPolicy: "Allow", failedJobsHistoryLimit: 5 },
    steps: [
      { at: 0, reconcile: "pass" },
      { at: HOUR, reconcile: "pass" },
      { finish: 0, as: "Failed" },
      "pass",
      { expect: { status: { stopped: { failures: 1 }, active: [HOUR] } } },
      { annotate: { [RESUME_ANNOTATION]: "r1" } },
      { at: HOUR + 10 * MIN, reconcile: "pass" },
      { expect: { status: { stopped: null, resumed: { time: HOUR + 10 * MIN, running: [HOUR] } } } },
      { finish: HOUR, as: "Failed" },
      { at: HOUR + 20 * MIN, reconcile: "pass" },
      {
        expect: { status: { stopped: null, consecutiveFailures: 0, resumed: { time: HOUR + 10 * MIN } } },
        why: "the run that was failing when the user resumed is not counted",
      },
      ...failSlot(2 * HOUR),
      { expect: { status: { stopped: { failures: 1 } } }, why: "a run started after the resume counts" },
    ],
  },
  {
    title: "without the field nothing is counted: a CronJob that does not use it keeps its status",
    steps: [...failSlot(0), { expect: { status: { consecutiveFailures: null, stopped: null } } }],
  },
];

const backfillRows: Row[] = [
  {
    title: "runs every slot of the range once, oldest first, parallelism at a time; a slot with its Job is skipped",
    spec: HISTORY_SPEC,
    steps: [
      ...HISTORY,
      { backfill: { from: -1, to: 5 * HOUR, parallelism: 2 } },
      "pass",
      {
        expect: {
          backfillJobs: hours(0, 1),
          status: { backfill: { phase: "Running", total: 6, created: 2, skipped: 0, lastSlot: HOUR } },
        },
      },
      "pass",
      { expect: { backfillJobs: 2 }, why: "two run: the third waits" },
      { finish: 0, as: "Complete" },
      "restart",
      { expect: { backfillJobs: hours(0, 1, 2) } },
      { finish: HOUR, as: "Complete" },
      { finish: 2 * HOUR, as: "Complete" },
      "pass",
      { finish: 3 * HOUR, as: "Complete" },
      "pass",
      { expect: { backfillJobs: hours(0, 1, 2, 3, 4) } },
      {
        expect: { status: { backfill: { phase: "Complete", created: 5, skipped: 1 } } },
        why: "h1+5h had its scheduled Job",
      },
      {
        expect: {
          events: {
            someStartWith: ['Normal BackfillStarted Backfill "bf-1": 6 slots'],
            include: ['Normal BackfillComplete Backfill "bf-1" complete: 5 slots run, 1 already had their Job'],
          },
        },
      },
      { expect: { status: { lastScheduleTime: 5 * HOUR } }, why: "lastScheduleTime unchanged" },
      "restart",
      "restart",
      "restart",
      { expect: { backfillJobs: 5 }, why: "a finished request runs nothing again" },
    ],
  },
  {
    title:
      "a foreign Job holding a slot's name stops nothing: that slot is skipped, the others run, the request completes, no retry loop",
    spec: HISTORY_SPEC,
    steps: [
      ...HISTORY,
      // Jobs that are not this CronJob's hold the names of the range's first and third slots (of four).
      { createJob: 0, owner: "none" },
      { createJob: 2 * HOUR, owner: "none" },
      { backfill: { from: 0, to: 3 * HOUR } },
      { reconcile: "pass", requeue: "later" },
      {
        expect: {
          backfillJobs: [HOUR],
          status: { backfill: { phase: "Running", created: 1, skipped: 1, lastSlot: HOUR } },
          events: { containing: "FailedCreate", count: 1 },
        },
        why: "the first slot's name is taken: skipped, and the next slot runs",
      },
      { finish: HOUR, as: "Complete" },
      { reconcile: "pass", requeue: "later" },
      {
        expect: {
          backfillJobs: hours(1, 3),
          status: { backfill: { phase: "Complete", total: 4, created: 2, skipped: 2, lastSlot: 3 * HOUR } },
          events: {
            include: ['Normal BackfillComplete Backfill "bf-1" complete: 2 slots run, 2 already had their Job'],
          },
        },
        why: "the third slot's name is taken too: skipped, and the fourth runs, the last",
      },
      { finish: 3 * HOUR, as: "Complete" },
      "pass",
      "restart",
      {
        expect: {
          backfillJobs: hours(1, 3),
          status: { backfill: { phase: "Complete", created: 2, skipped: 2 } },
          events: { containing: "FailedCreate", count: 0 },
        },
        why: "a skipped slot is not tried again",
      },
    ],
  },
  {
    title: "with Forbid, one Job at a time, also not alongside a scheduled run",
    spec: { ...HISTORY_SPEC, concurrencyPolicy: "Forbid" },
    steps: [
      ...HISTORY,
      { backfill: { from: 0, to: HOUR, parallelism: 5 } },
      "pass",
      "pass",
      { expect: { backfillJobs: [0] } },
      { finish: 0, as: "Complete" },
      "pass",
      { expect: { backfillJobs: hours(0, 1) } },
    ],
  },
  {
    title: "removing the annotation cancels it: no more Jobs, the started ones keep running",
    spec: HISTORY_SPEC,
    steps: [
      ...HISTORY,
      { backfill: { from: 0, to: 3 * HOUR } },
      "pass",
      { annotate: { [BACKFILL_ANNOTATION]: null } },
      "pass",
      { finish: 0, as: "Complete" },
      "pass",
      {
        expect: {
          backfillJobs: [0],
          status: { backfill: { phase: "Cancelled" } },
          events: { someStartWith: ['Normal BackfillCancelled Backfill "bf-1" cancelled after 1 of 4'] },
        },
      },
    ],
  },
  {
    title: "a range over 1000 slots, a range in the future and a malformed request are refused, saying why",
    spec: HISTORY_SPEC,
    steps: [
      ...HISTORY,
      { backfill: { from: -1001 * HOUR, to: 0 } },
      "pass",
      {
        expect: {
          status: { backfill: { phase: "Refused", message: /the range holds more than 1000 slots; at most 1000/ } },
        },
      },
      { backfill: { from: 0, to: 10 * HOUR, id: "bf-2" } },
      "pass",
      { expect: { status: { backfill: { id: "bf-2", phase: "Refused", message: /is in the future/ } } } },
      { annotate: { [BACKFILL_ANNOTATION]: "yesterday please" } },
      "pass",
      {
        expect: {
          status: { backfill: { message: /must be JSON/ } },
          backfillJobs: [],
          events: { startingWith: "Warning BackfillRefused", count: 3 },
        },
      },
    ],
  },
  {
    title: "runs while the CronJob is suspended (an explicit request, like run-now)",
    spec: HISTORY_SPEC,
    steps: [
      ...HISTORY,
      { patch: { suspend: true } },
      { backfill: { from: 0, to: HOUR, parallelism: 2 } },
      "pass",
      { expect: { backfillJobs: hours(0, 1) } },
    ],
  },
  {
    title: "on a CronJob that has not run yet, a backfill of a slot before its creation starts no scheduled run",
    // No Job yet; the clock at h1 - 30m; the backfilled slot hours before the CronJob existed.
    steps: [
      { backfill: { from: -3 * HOUR, to: -3 * HOUR } },
      "pass",
      "pass",
      "restart",
      {
        expect: { jobNames: [-3 * HOUR] },
        why: "the backfill's Job only: no scheduled run of a slot from before the CronJob existed",
      },
      { expect: { backfillJobs: [-3 * HOUR], status: { backfill: { phase: "Complete" }, nextScheduleTime: 0 } } },
      { expect: { status: { lastScheduleTime: null } }, why: "a backfill's Job is not a scheduled run" },
      { at: 100, reconcile: "pass" },
      { expect: { scheduledJobs: [0] }, why: "the first slot after creation runs" },
      { expect: { status: { lastScheduleTime: 0 } } },
    ],
  },
  {
    title:
      "on a CronJob that has not run yet, with RunAll: a backfill before its creation starts no catch-up of older slots",
    spec: { missedRunPolicy: "RunAll" },
    steps: [
      { backfill: { from: -3 * HOUR, to: -3 * HOUR } },
      "pass",
      "pass",
      "restart",
      {
        expect: { jobNames: [-3 * HOUR] },
        why: "the backfill's Job only: no scheduled run of a slot from before the CronJob existed",
      },
      { expect: { status: { lastScheduleTime: null } }, why: "a backfill's Job is not a scheduled run" },
      { at: 100, reconcile: "pass" },
      { expect: { scheduledJobs: [0] }, why: "the first slot after creation runs, alone" },
    ],
  },
  {
    title:
      "a backfill of a slot newer than lastScheduleTime (while suspended) does not move it; unsuspended, the newest missed slot runs",
    steps: [
      { at: 0, reconcile: "pass" },
      { finish: 0, as: "Complete" },
      { patch: { suspend: true } },
      { at: 10 * MIN, reconcile: "pass" },
      // Suspended over h1+1h and h1+2h; h1+1h is backfilled meanwhile (a suspended CronJob backfills).
      { at: 2 * HOUR + 30 * MIN },
      { backfill: { from: HOUR, to: HOUR } },
      "pass",
      "pass",
      { expect: { backfillJobs: [HOUR] } },
      { expect: { status: { lastScheduleTime: 0 } }, why: "a backfill's Job does not move lastScheduleTime" },
      // RunLatest owes the newest slot missed since h1: h1+2h (not the backfilled h1+1h).
      { patch: { suspend: false } },
      { at: 2 * HOUR + 40 * MIN, reconcile: "pass" },
      "pass",
      { expect: { scheduledJobs: hours(0, 2), backfillJobs: [HOUR], status: { lastScheduleTime: 2 * HOUR } } },
    ],
  },
  {
    title:
      "after an outage, a backfill of an older missed slot: it runs, and the schedule runs its own (the newest missed)",
    steps: [
      { at: 0, reconcile: "pass" },
      { finish: 0, as: "Complete" },
      // Down from h1 + 1m until h1 + 3h + 30m (h1+1h, h1+2h and h1+3h missed); h1+2h is backfilled.
      { at: 3 * HOUR + 30 * MIN },
      { backfill: { from: 2 * HOUR, to: 2 * HOUR } },
      "restart",
      "restart",
      "pass",
      { expect: { scheduledJobs: hours(0, 3) }, why: "RunLatest: the newest missed runs" },
      { expect: { backfillJobs: [2 * HOUR], status: { lastScheduleTime: 3 * HOUR } } },
    ],
  },
  {
    title: "parallelism 1 holds while the Job cache has not seen the request's running Job yet",
    spec: HISTORY_SPEC,
    steps: [
      ...HISTORY,
      { backfill: { from: 0, to: 2 * HOUR } },
      "pass",
      { expect: { backfillJobs: [0] } },
      // The next pass's Job cache lags: it does not show that Job yet (status.active and the apiserver do).
      { reconcile: "pass", unseen: [0] },
      { expect: { backfillJobs: [0] }, why: "no second Job while the first runs" },
      "pass",
      { expect: { backfillJobs: [0] } },
      { finish: 0, as: "Complete" },
      "pass",
      { expect: { backfillJobs: hours(0, 1) } },
    ],
  },
  {
    title: "without the webhook, BackfillRefused for a value that does not parse is emitted once, not on every pass",
    spec: HISTORY_SPEC,
    steps: [
      ...HISTORY,
      { backfill: { from: 0, to: 0, id: "bf-done" } },
      "pass",
      { finish: 0, as: "Complete" },
      "pass",
      { annotate: { [BACKFILL_ANNOTATION]: "not json" } },
      "forget events",
      ...minutely(5 * HOUR + 40 * MIN, 5),
      {
        expect: { events: { startingWith: "Warning BackfillRefused", count: 1, firstHas: [BACKFILL_ANNOTATION] } },
      },
    ],
  },
];

export function policyCases(driver: ReconcilerDriver): void {
  describe(`missed-run policies and stop after failures in the reconciler (fake clock, ${driver.name})`, () => {
    const table = rowTable(driver, { namespace: "policies", prefix: "pol", firstPass: true });
    let h: ReconcileHarness<ObjectClient>;
    before(() => {
      h = table.h;
    });

    // The hand-written cases' words for what the rows say as steps.
    /** A CronJob on `0 * * * *`, the clock half an hour before its first slot, after one reconcile. */
    const fresh = (spec: Parameters<ReconcileHarness["createCronJob"]>[1] = {}) => table.fresh(spec);
    /** A reconcile by another reconciler: a restart, or another replica after a leader change. */
    const reconcileAfterRestart = (name: string) => table.restart(name);
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

    describe("missedRunPolicy Skip", () => {
      runRows(table, skipRows);
    });

    describe("missedRunPolicy RunAll", () => {
      runRows(table, runAllRows);

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
    });

    describe("stopAfterConsecutiveFailures", () => {
      runRows(table, stopRows);
    });

    describe("backfill", () => {
      runRows(table, backfillRows);

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
        const c = await table.fresh({ ...HISTORY_SPEC, ...spec });
        await table.play(c, HISTORY);
        return c;
      }

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
    });
  });
}
