// Issue 46's rules as rows of the reconciler's table (rows.ts): a failed run retried as new runs (spec.retry, the
// fifth trigger) and slots an exclusion window holds (spec.exclusions, ExclusionCalendar), each with the exact
// record entries the passes store. The unit suite runs the table against the fake (test/unit/cronjob-reconciler-
// table.test.ts), the integration suite against a real apiserver (triggers.test.ts).
import { describe } from "node:test";
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

const NAMESPACE = "triggers";
const BACKOFF = { reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit" };
const failed = (finishedAt: Offset) => ({ result: "Failed" as const, ...BACKOFF, finishedAt });

/** Attempt k of n of slot 0's run: its Created entry. */
const attempt = (k: number, n: number, more: Partial<RunEntry> = {}): RunEntry => ({
  trigger: "Retry",
  scheduledTime: 0,
  request: `${k}/${n}`,
  decision: "Created",
  reason: "RetryAfterFailure",
  message: (c) => `attempt ${k} of ${n}: Job ${k === 1 ? c.job(0) : c.job({ retry: 0, k: k - 1 })} failed`,
  decidedAt: "created",
  job: { retry: 0, k },
  attempt: { number: k, of: n, after: k === 1 ? 0 : { retry: 0, k: k - 1 } },
  ...more,
});

/** Attempt k of n of slot 0 waiting for its delay, decided at `at`, due at `due`, after `after` failed. */
const waiting = (k: number, n: number, at: Offset, due: Offset, delay: number): RunEntry => ({
  trigger: "Retry",
  scheduledTime: 0,
  request: `${k}/${n}`,
  decision: "Held",
  reason: "RetryDelay",
  message: (c) =>
    `attempt ${k} of ${n} starts at ${c.time(due)}: Job ${k === 1 ? c.job(0) : c.job({ retry: 0, k: k - 1 })} failed (BackoffLimitExceeded); spec.retry.delaySeconds ${delay}`,
  decidedAt: at,
  attempt: { number: k, of: n, after: k === 1 ? 0 : { retry: 0, k: k - 1 }, failure: "BackoffLimitExceeded" },
  startsAt: due,
});

const retryRows: Row[] = [
  {
    title:
      "retry: a failed slot runs again after delaySeconds, at most limit times, each attempt its own Job and entry",
    spec: { retry: { limit: 2, delaySeconds: 600 } },
    steps: [
      { at: 1000, reconcile: "pass" },
      { finish: 0, as: "Failed", end: 5 * MIN, failure: BACKOFF },
      { at: 5 * MIN + 1000, reconcile: "pass", requeue: 15 * MIN },
      {
        expect: {
          jobNames: [0],
          recentRuns: [waiting(1, 2, 5 * MIN + 1000, 15 * MIN, 600), scheduled(0, { outcome: failed(5 * MIN) })],
        },
        why: "not before the delay: a Held entry says when",
      },
      { at: 15 * MIN - 1000, reconcile: "pass" },
      { expect: { jobNames: [0] }, why: "a second early: nothing yet" },
      { at: 15 * MIN, reconcile: "pass" },
      {
        expect: {
          jobNames: [0, { retry: 0, k: 1 }],
          recentRuns: [attempt(1, 2), scheduled(0, { outcome: failed(5 * MIN) })],
        },
      },
      { finish: { retry: 0, k: 1 }, as: "Failed", start: 15 * MIN, end: 20 * MIN, failure: BACKOFF },
      { at: 20 * MIN + 1000, reconcile: "pass", requeue: 30 * MIN },
      {
        expect: { jobNames: [{ retry: 0, k: 1 }] },
        why: "history counts attempts (failedJobsHistoryLimit 1): the first Job goes, the one a retry is owed for stays",
      },
      { at: 30 * MIN, reconcile: "pass" },
      { finish: { retry: 0, k: 2 }, as: "Failed", start: 30 * MIN, end: 35 * MIN, failure: BACKOFF },
      { at: 35 * MIN + 1000, reconcile: "pass", requeue: HOUR },
      {
        expect: {
          jobNames: [{ retry: 0, k: 2 }],
          recentRuns: [
            attempt(2, 2, { outcome: failed(35 * MIN) }),
            attempt(1, 2, { outcome: failed(20 * MIN) }),
            scheduled(0, { outcome: failed(5 * MIN) }),
          ],
        },
        why: "no third attempt",
      },
      { at: 40 * MIN, reconcile: "restart" },
      { expect: { jobCount: 1 }, why: "a restart derives the attempts from the Jobs: none owed" },
    ],
  },
  {
    title: "retry: the attempt created before a lost status write is found by its name, not made twice",
    only: "fake",
    spec: { retry: { limit: 1, delaySeconds: 0 } },
    steps: [
      { at: 1000, reconcile: "pass" },
      { finish: 0, as: "Failed", end: 5 * MIN, failure: BACKOFF },
      "fake loses the next status write",
      { at: 5 * MIN + 1000, reconcile: "pass", rejects: /status write lost/ },
      { at: 5 * MIN + 2000, reconcile: "restart" },
      {
        expect: {
          jobNames: [0, { retry: 0, k: 1 }],
          recentRuns: [attempt(1, 1), scheduled(0, { outcome: failed(5 * MIN) })],
        },
      },
    ],
  },
  {
    title: "retry: with Forbid, a newer slot's run that started first supersedes the retry, and the record says so",
    spec: { concurrencyPolicy: "Forbid", retry: { limit: 1, delaySeconds: 3600 } },
    steps: [
      { at: 1000, reconcile: "pass" },
      { finish: 0, as: "Failed", end: 5 * MIN, failure: BACKOFF },
      { at: 5 * MIN + 1000, reconcile: "pass" },
      { at: HOUR + 1000, reconcile: "pass" },
      {
        expect: {
          jobNames: [0, HOUR],
          recentRuns: [
            scheduled(HOUR),
            {
              trigger: "Retry",
              scheduledTime: 0,
              request: "1/1",
              decision: "Skipped",
              reason: "RetrySuperseded",
              message: (c) =>
                `attempt 1 of 1 not run: Job ${c.job(0)} failed (BackoffLimitExceeded), and the run of ${c.time(HOUR)} started first (concurrencyPolicy Forbid)`,
              decidedAt: HOUR + 1000,
              attempt: { number: 1, of: 1, after: 0, failure: "BackoffLimitExceeded" },
              supersededBy: HOUR,
            },
            scheduled(0, { outcome: failed(5 * MIN) }),
          ],
        },
      },
    ],
  },
  {
    title: "retry: suspended meanwhile, the failed Job is kept (failedJobsHistoryLimit 0) and retried after the resume",
    spec: { retry: { limit: 1, delaySeconds: 300 }, failedJobsHistoryLimit: 0 },
    steps: [
      { at: 1000, reconcile: "pass" },
      { finish: 0, as: "Failed", end: MIN, failure: BACKOFF },
      { patch: { suspend: true } },
      { at: 2 * MIN, reconcile: "pass" },
      { expect: { jobNames: [0] }, why: "kept while suspended: the retry is still owed" },
      { patch: { suspend: false } },
      { at: 6 * MIN + 1000, reconcile: "pass" },
      { expect: { jobNames: [0, { retry: 0, k: 1 }] }, why: "retried after the resume" },
      { at: 6 * MIN + 2000, reconcile: "pass" },
      { expect: { jobNames: [{ retry: 0, k: 1 }] }, why: "no retry owed any more: the first Job goes (history 0)" },
    ],
  },
  {
    title: "retry: spec.retry set after a failure does not retry that failure",
    spec: {},
    steps: [
      { at: 1000, reconcile: "pass" },
      { finish: 0, as: "Failed", end: 5 * MIN, failure: BACKOFF },
      { patch: { retry: { limit: 3, delaySeconds: 0 } } },
      { at: 6 * MIN, reconcile: "pass" },
      { expect: { jobNames: [0] } },
    ],
  },
];

/** The Skipped entry of slots an exclusion window held. */
const excluded = (
  slot: Offset,
  message: string | ((c: { time(at: Offset): string }) => string),
  at: Offset,
  exclusion: NonNullable<RunEntry["exclusion"]>,
): RunEntry => ({
  trigger: "Schedule",
  scheduledTime: slot,
  decision: "Skipped",
  reason: "ExcludedByCalendar",
  message,
  decidedAt: at,
  exclusion,
});

const exclusionRows: Row[] = [
  {
    title: "exclusions: a slot inside an inline window is not run; one Skipped entry per run of excluded slots",
    // h1 is a whole hour; the window covers h1 and h1+1h, read in UTC (no spec.timeZone).
    steps: [
      { at: -30 * MIN, reconcile: "pass" },
      "forget events",
      { exclude: { from: 0, to: 2 * HOUR, name: "freeze" } },
      { at: 1000, reconcile: "pass" },
      { at: HOUR + 1000, reconcile: "pass" },
      { at: 2 * HOUR + 1000, reconcile: "pass" },
      {
        expect: {
          jobNames: [2 * HOUR],
          recentRuns: [
            scheduled(2 * HOUR),
            excluded(HOUR, (c) => `excluded by spec.exclusions: freeze (2 slots from ${c.time(0)})`, HOUR + 1000, {
              window: "freeze",
              firstSlot: 0,
              slots: 2,
            }),
          ],
          events: { startingWith: "Warning", count: 0 },
        },
      },
    ],
  },
  {
    title:
      "exclusions: a missing calendar holds the slot (Held, Degraded, one Warning); once it exists its windows apply",
    spec: { exclusions: { calendars: ["freeze-cal"] } },
    steps: [
      { at: 1000, reconcile: "pass" },
      { at: 2000, reconcile: "pass" },
      {
        expect: {
          jobCount: 0,
          conditions: { Degraded: "CalendarNotFound" },
          recentRuns: [
            {
              trigger: "Schedule",
              scheduledTime: 0,
              decision: "Held",
              reason: "CalendarNotFound",
              message: `held: spec.exclusions.calendars names freeze-cal, which is not an ExclusionCalendar of namespace ${NAMESPACE}: slots are held until it exists`,
              decidedAt: 1000,
              exclusion: { calendar: "freeze-cal", problem: "NotFound" },
            },
          ],
          events: { startingWith: "Warning CalendarNotFound", count: 1 },
        },
      },
      { calendar: { name: "freeze-cal", windows: [{ name: "y2k", start: "2000-01-01" }] } },
      { at: 3000, reconcile: "pass" },
      { expect: { jobNames: [0] }, why: "the calendar read: its window does not hold the slot, which runs" },
    ],
  },
];

export function triggerCases(driver: ReconcilerDriver): void {
  describe(`retries and exclusions, the fifth trigger and calendars (fake clock, ${driver.name})`, () => {
    const table = rowTable(driver, { namespace: NAMESPACE, prefix: "trg", firstPass: false });
    const rows = [...retryRows, ...exclusionRows];
    runRows(table, driver.backend === "fake" ? rows : withoutRecordOrder(rows));
  });
}
