// The retry trigger (spec.retry, the `retry` row of controllers/triggers.ts) through the reconciler's one run path,
// against the fake API server: a failed slot runs again as a new Job once delaySeconds have passed since the
// failure (held until then, and woken at that time), each attempt named from the slot's first Job and its number,
// at most spec.retry.limit of them, never twice after a lost status write, held by Forbid like any run and skipped
// once a newer slot ran; history cleanup keeps a failed Job whose retry is owed; only a slot whose first Job was made
// with spec.retry set is retried; and stopAfterConsecutiveFailures counts a slot once, after its last attempt
// (controllers/failures.ts).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  CronJobResource as CronJobKind,
  type Job,
  type RecentRunWire,
  RETRY_ATTEMPT_ANNOTATION,
  RETRY_OF_ANNOTATION,
  retryJobName,
  RUN_NOW_ANNOTATION,
  SCHEDULED_AT_ANNOTATION,
  retriedLater,
} from "../../api/v1/index.ts";
import { failureStop } from "../../controllers/failures.ts";
import { Kinds } from "../../runtime/kinds.ts";
import { batchJob, jobStatus } from "../fixtures.ts";
import { harnessCronJob, reconcilerHarness } from "../reconciler-harness.ts";

/** The 10:00 slot's first Job, and the 11:00 slot's. */
const FIRST = "cj-1795600800";
const ELEVEN = "cj-1795604400";
const SLOT = "2026-11-25T10:00:00Z";
/** Attempt k of the 10:00 slot. */
const attempt = (k: number, first = FIRST) => retryJobName("cj", first, k);
/** The slack the reconciler adds to a wake-up (requeue.ts REQUEUE_SLACK_MS). */
const SLACK = 10;

interface SetUp {
  spec?: Record<string, unknown>;
  annotations?: Record<string, string>;
}

async function setUp(o: SetUp = {}) {
  const h = await reconcilerHarness("2026-11-25T09:59:00Z");
  const { client, clock, recorder, restart, jobs } = h;
  const metadata = {
    creationTimestamp: "2026-11-25T09:30:00Z",
    ...(o.annotations ? { annotations: o.annotations } : {}),
  };
  h.seed(harnessCronJob("cj", { schedule: "0 * * * *", ...o.spec }, metadata));
  /** A reconcile at `at` (RFC 3339), as the work queue runs it. */
  const reconcile = (at?: string) => h.reconcile("cj", at ? new Date(at) : undefined);
  const names = async () => (await jobs()).map((j) => j.metadata?.name ?? "").sort();
  const job = (name: string) => client.get<Job>(Kinds.Job, "ns", name);
  const stored = () => h.stored("cj");
  const record = async () => (await stored()).status?.recentRuns ?? [];
  /** The Events so far, less their type; `take` forgets them. */
  const events = (take = false) =>
    (take ? recorder.take() : [...recorder.events]).map((e) => e.replace(/^(Normal|Warning) /, ""));
  /** Ends a running Job as the Job controller would, at `at`. */
  const finish = async (name: string, state: "complete" | "failed", at: string) => {
    clock.set(new Date(at));
    const end = Date.parse(at);
    const failure = state === "failed" ? { failure: { reason: "BackoffLimitExceeded" } } : {};
    await client.updateStatus(Kinds.Job, {
      ...(await job(name)),
      status: jobStatus({ state, start: end - 1000, end, ...failure }),
    });
  };
  return { client, clock, reconcile, restart, jobs, names, job, stored, record, events, finish };
}

/** The first Job's entry, failed at `end`. */
const firstEntry = (end: string): RecentRunWire => ({
  trigger: "Schedule",
  scheduledTime: SLOT,
  decision: "Created",
  reason: "Scheduled",
  decidedAt: "2026-11-25T10:00:01Z",
  job: FIRST,
  outcome: { result: "Failed", reason: "BackoffLimitExceeded", finishedAt: end },
});

/** Attempt k of n's Created entry, decided at `at`, after `failed` failed. */
const retryEntry = (k: number, n: number, at: string, failed: string): RecentRunWire => ({
  trigger: "Retry",
  scheduledTime: SLOT,
  request: `${k}/${n}`,
  decision: "Created",
  reason: "RetryAfterFailure",
  message: `attempt ${k} of ${n}: Job ${failed} failed`,
  decidedAt: at,
  job: attempt(k),
  // How `failed` failed is its own entry's outcome: a Created entry names the attempt and the Job it follows.
  attempt: { number: k, of: n, after: failed },
});

describe("retry: a failed slot runs again as a new Job", () => {
  it("after delaySeconds exactly: held and woken at the due time, then attempt 1 named from the first Job", async () => {
    const t = await setUp({ spec: { retry: { limit: 2, delaySeconds: 300 } } });
    await t.reconcile("2026-11-25T10:00:01Z");
    const first = await t.job(FIRST);
    assert.equal(first.metadata?.annotations?.[RETRY_ATTEMPT_ANNOTATION], "0/2", "made while spec.retry is set");
    await t.finish(FIRST, "failed", "2026-11-25T10:01:00Z");

    const held = await t.reconcile("2026-11-25T10:01:00Z");
    assert.equal(held.requeueAfterMs, 300_000 + SLACK, "woken when the delay is over");
    const heldEntry: RecentRunWire = {
      trigger: "Retry",
      scheduledTime: SLOT,
      request: "1/2",
      decision: "Held",
      reason: "RetryDelay",
      message: `attempt 1 of 2 starts at 2026-11-25T10:06:00Z: Job ${FIRST} failed (BackoffLimitExceeded); spec.retry.delaySeconds 300`,
      decidedAt: "2026-11-25T10:01:00Z",
      attempt: { number: 1, of: 2, after: FIRST, failure: "BackoffLimitExceeded" },
      startsAt: "2026-11-25T10:06:00Z",
    };
    assert.deepEqual(await t.record(), [heldEntry, firstEntry("2026-11-25T10:01:00Z")]);

    const before = await t.reconcile("2026-11-25T10:05:59Z");
    assert.deepEqual(await t.names(), [FIRST], "not a second early");
    assert.equal(before.requeueAfterMs, 1000 + SLACK);
    assert.deepEqual(await t.record(), [heldEntry, firstEntry("2026-11-25T10:01:00Z")], "the held entry once");

    t.events(true);
    const due = await t.reconcile("2026-11-25T10:06:00Z");
    assert.deepEqual(await t.names(), [FIRST, attempt(1)].sort());
    const retry = await t.job(attempt(1));
    assert.equal(retry.metadata?.annotations?.[RETRY_OF_ANNOTATION], FIRST);
    assert.equal(retry.metadata?.annotations?.[RETRY_ATTEMPT_ANNOTATION], "1/2");
    assert.equal(retry.metadata?.annotations?.[SCHEDULED_AT_ANNOTATION], SLOT, "the slot it runs again");
    assert.equal(retry.metadata?.ownerReferences?.[0]?.name, "cj");
    assert.deepEqual(t.events(), [
      `RetryCreated Created job ${attempt(1)}: attempt 1 of 2 for ${SLOT}, after ${FIRST} failed (BackoffLimitExceeded)`,
    ]);
    assert.deepEqual(await t.record(), [
      retryEntry(1, 2, "2026-11-25T10:06:00Z", FIRST),
      firstEntry("2026-11-25T10:01:00Z"),
    ]);
    // The retry does not move the schedule's books: the next wake-up is the 11:00 slot.
    assert.equal((await t.stored()).status?.lastScheduleTime, SLOT);
    assert.equal(due.requeueAfterMs, Date.parse("2026-11-25T11:00:00Z") - Date.parse("2026-11-25T10:06:00Z") + SLACK);
  });

  it("two slots' attempts held for their delays: woken at the earlier one, whichever slot is older", async () => {
    const t = await setUp({ spec: { retry: { limit: 1, delaySeconds: 1800 } } });
    await t.reconcile("2026-11-25T10:00:01Z");
    await t.reconcile("2026-11-25T11:00:01Z");
    assert.deepEqual(await t.names(), [FIRST, ELEVEN]);
    // 11:00's run fails first, 10:00's (a long one, Allow) after it: 11:00's attempt is due first.
    await t.finish(ELEVEN, "failed", "2026-11-25T11:01:00Z");
    await t.finish(FIRST, "failed", "2026-11-25T11:10:00Z");
    const held = await t.reconcile("2026-11-25T11:10:00Z");
    assert.deepEqual(await t.names(), [FIRST, ELEVEN]);
    assert.equal(held.requeueAfterMs, 21 * 60_000 + SLACK, "11:31, 11:00's attempt, before 10:00's at 11:40");
  });

  it("at most spec.retry.limit attempts, each named from the first Job and its number", async () => {
    const t = await setUp({ spec: { failedJobsHistoryLimit: 5, retry: { limit: 2 } } });
    await t.reconcile("2026-11-25T10:00:01Z");
    await t.finish(FIRST, "failed", "2026-11-25T10:01:00Z");
    await t.reconcile();
    assert.deepEqual(await t.names(), [FIRST, attempt(1)].sort(), "delaySeconds 0: at once");
    await t.finish(attempt(1), "failed", "2026-11-25T10:02:00Z");
    await t.reconcile();
    assert.deepEqual(await t.names(), [FIRST, attempt(1), attempt(2)].sort());
    assert.equal((await t.job(attempt(2))).metadata?.annotations?.[RETRY_OF_ANNOTATION], FIRST, "named from the first");
    await t.finish(attempt(2), "failed", "2026-11-25T10:03:00Z");
    for (const at of ["2026-11-25T10:03:00Z", "2026-11-25T10:10:00Z", "2026-11-25T10:59:59Z"]) await t.reconcile(at);
    assert.deepEqual(await t.names(), [FIRST, attempt(1), attempt(2)].sort(), "no third attempt");
    for (const n of [attempt(1), attempt(2)]) assert.match(n, /^cj-r[0-9a-f]{8}$/);
    assert.notEqual(attempt(1), attempt(2));
    const record = await t.record();
    assert.deepEqual(record.slice(0, 2), [
      {
        ...retryEntry(2, 2, "2026-11-25T10:02:00Z", attempt(1)),
        outcome: { result: "Failed", reason: "BackoffLimitExceeded", finishedAt: "2026-11-25T10:03:00Z" },
      },
      {
        ...retryEntry(1, 2, "2026-11-25T10:01:00Z", FIRST),
        outcome: { result: "Failed", reason: "BackoffLimitExceeded", finishedAt: "2026-11-25T10:02:00Z" },
      },
    ]);
    assert.equal(t.events().filter((e) => e.startsWith("RetryCreated")).length, 2, "two RetryCreated Events in all");
    // The next slot is a slot of its own: its first Job, and its own attempts.
    await t.reconcile("2026-11-25T11:00:01Z");
    await t.finish(ELEVEN, "failed", "2026-11-25T11:01:00Z");
    await t.reconcile();
    assert.ok((await t.names()).includes(attempt(1, ELEVEN)));
  });

  it("a reconcile repeated after a lost status write makes no second Job for the attempt; the record is rebuilt from it", async () => {
    const t = await setUp({ spec: { retry: { limit: 1 } } });
    await t.reconcile("2026-11-25T10:00:01Z");
    await t.finish(FIRST, "failed", "2026-11-25T10:01:00Z");
    // Killed between the create and the status write: the write never lands.
    t.client.injectError({ verb: "updateStatus", kind: CronJobKind, times: 1 }, new Error("killed"));
    await assert.rejects(t.reconcile("2026-11-25T10:01:00Z"), /killed/);
    assert.deepEqual(await t.names(), [FIRST, attempt(1)].sort(), "the attempt's Job was created");
    const { outcome: _outcome, ...running } = firstEntry("2026-11-25T10:01:00Z");
    assert.deepEqual(await t.record(), [running], "the stored status is from before the failure");

    // The same process again, and a new one: the attempt is found by its name.
    await t.reconcile("2026-11-25T10:01:30Z");
    t.restart();
    await t.reconcile("2026-11-25T10:02:00Z");
    assert.deepEqual(await t.names(), [FIRST, attempt(1)].sort(), "no second Job");
    assert.equal(t.events().filter((e) => e.startsWith("RetryCreated")).length, 1, t.events().join("\n"));
    assert.deepEqual(await t.record(), [
      retryEntry(1, 1, "2026-11-25T10:01:00Z", FIRST),
      firstEntry("2026-11-25T10:01:00Z"),
    ]);
  });

  it("the record rebuilt from the Jobs alone gives every attempt its Retry trigger and RetryAfterFailure reason", async () => {
    const t = await setUp({ spec: { failedJobsHistoryLimit: 5, retry: { limit: 2 } } });
    await t.reconcile("2026-11-25T10:00:01Z");
    await t.finish(FIRST, "failed", "2026-11-25T10:01:00Z");
    await t.reconcile();
    await t.finish(attempt(1), "failed", "2026-11-25T10:02:00Z");
    await t.reconcile();
    const want = await t.record();
    // Status lost (a restore from a backup without status): step 4 enters each Job from the Job itself.
    const cj = await t.stored();
    await t.client.updateStatus(CronJobKind, { ...cj, status: { lastScheduleTime: SLOT } });
    t.restart();
    await t.reconcile("2026-11-25T10:02:30Z");
    const rebuilt = await t.record();
    assert.deepEqual(
      rebuilt.map((e) => [e.trigger, e.reason, e.request, e.job, e.message, e.attempt]),
      want.map((e) => [e.trigger, e.reason, e.request, e.job, e.message, e.attempt]),
    );
    assert.deepEqual(
      rebuilt.filter((e) => e.trigger === "Retry").map((e) => [e.reason, e.request]),
      [
        ["RetryAfterFailure", "2/2"],
        ["RetryAfterFailure", "1/2"],
      ],
    );
    assert.deepEqual(await t.names(), [FIRST, attempt(1), attempt(2)].sort(), "no attempt made again");
  });

  it("Forbid: held behind a running Job (trigger Retry), then skipped once lastScheduleTime passed its slot", async () => {
    const t = await setUp({
      spec: { concurrencyPolicy: "Forbid", retry: { limit: 1 } },
      annotations: { [RUN_NOW_ANNOTATION]: "r1" },
    });
    await t.reconcile("2026-11-25T10:00:01Z");
    assert.deepEqual(await t.names(), [FIRST], "the slot first; run-now waits");
    await t.finish(FIRST, "failed", "2026-11-25T10:01:00Z");
    t.events(true);
    await t.reconcile("2026-11-25T10:01:00Z");
    const manual = (await t.names()).find((n) => n !== FIRST)!;
    assert.ok(manual && !manual.startsWith("cj-r"), "run-now's Job runs");
    const heldEntry: RecentRunWire = {
      trigger: "Retry",
      scheduledTime: SLOT,
      request: "1/1",
      decision: "Held",
      reason: "ConcurrencyPolicyForbid",
      message: `not started: concurrencyPolicy Forbid and Job ${manual} still running`,
      decidedAt: "2026-11-25T10:01:00Z",
      blockedBy: manual,
      attempt: { number: 1, of: 1, after: FIRST },
    };
    assert.deepEqual(
      (await t.record()).find((e) => e.trigger === "Retry"),
      heldEntry,
    );
    assert.ok(
      t
        .events()
        .includes(
          `JobAlreadyActive Not starting attempt 1 of 1 for ${SLOT} because ${manual} still running (a retry waits for the running Jobs under concurrencyPolicy Forbid or Replace)`,
        ),
      t.events().join("\n"),
    );
    await t.reconcile("2026-11-25T10:30:00Z");
    assert.deepEqual((await t.names()).length, 2, "still held");

    // The 11:00 slot waits behind run-now's Job too; once it ends, the 11:00 slot runs and the retry of 10:00 is
    // skipped: with Forbid it never runs after a newer slot's run.
    await t.reconcile("2026-11-25T11:00:01Z");
    await t.finish(manual, "complete", "2026-11-25T11:05:00Z");
    await t.reconcile("2026-11-25T11:05:00Z");
    await t.reconcile("2026-11-25T11:05:30Z");
    assert.deepEqual(await t.names(), [FIRST, ELEVEN, manual].sort(), "no attempt of 10:00");
    assert.equal((await t.stored()).status?.lastScheduleTime, "2026-11-25T11:00:00Z");
    assert.deepEqual(
      (await t.record()).find((e) => e.trigger === "Retry"),
      {
        trigger: "Retry",
        scheduledTime: SLOT,
        request: "1/1",
        decision: "Skipped",
        reason: "RetrySuperseded",
        message: `attempt 1 of 1 not run: Job ${FIRST} failed (BackoffLimitExceeded), and the run of 2026-11-25T11:00:00Z started first (concurrencyPolicy Forbid)`,
        decidedAt: "2026-11-25T11:05:00Z",
        // As a held slot later missed: the Job it waited behind.
        blockedBy: manual,
        attempt: { number: 1, of: 1, after: FIRST, failure: "BackoffLimitExceeded" },
        supersededBy: "2026-11-25T11:00:00Z",
      },
    );
    assert.ok(!t.events().some((e) => e.startsWith("RetryCreated")));
  });

  it("Replace: a retry never replaces a running Job; it waits behind it", async () => {
    const t = await setUp({ spec: { concurrencyPolicy: "Replace", retry: { limit: 1 } } });
    await t.reconcile("2026-11-25T10:00:01Z");
    await t.finish(FIRST, "failed", "2026-11-25T10:01:00Z");
    const cj = await t.stored();
    await t.client.update(CronJobKind, {
      ...cj,
      metadata: { ...cj.metadata, annotations: { [RUN_NOW_ANNOTATION]: "r1" } },
    });
    await t.reconcile("2026-11-25T10:01:00Z");
    const manual = (await t.names()).find((n) => n !== FIRST)!;
    await t.reconcile("2026-11-25T10:02:00Z");
    assert.deepEqual(await t.names(), [FIRST, manual].sort(), "run-now's Job not deleted, no attempt yet");
    assert.ok(!t.events().some((e) => e.startsWith("SuccessfulDelete")));
    const entry = (await t.record()).find((e) => e.trigger === "Retry");
    assert.deepEqual(
      [entry?.decision, entry?.reason, entry?.request, entry?.blockedBy, entry?.message],
      [
        "Held",
        "ConcurrencyPolicyForbid",
        "1/1",
        manual,
        `not started: Job ${manual} still running, and with concurrencyPolicy Replace this trigger waits instead of replacing it`,
      ],
    );
    await t.finish(manual, "complete", "2026-11-25T10:03:00Z");
    await t.reconcile();
    assert.ok((await t.names()).includes(attempt(1)), "runs once nothing runs, before the next slot");
  });

  it("Replace: a run-now that replaces a running attempt ends it for good: never made again, by this process or a new one, after the record forgot it", async () => {
    const t = await setUp({ spec: { concurrencyPolicy: "Replace", retry: { limit: 2, delaySeconds: 60 } } });
    await t.reconcile("2026-11-25T10:00:01Z");
    await t.finish(FIRST, "failed", "2026-11-25T10:01:00Z");
    await t.reconcile("2026-11-25T10:01:00Z");
    await t.reconcile("2026-11-25T10:02:00Z");
    await t.reconcile("2026-11-25T10:02:30Z");
    assert.deepEqual(await t.names(), [FIRST, attempt(1)].sort());
    const cj = await t.stored();
    await t.client.update(CronJobKind, {
      ...cj,
      metadata: { ...cj.metadata, annotations: { [RUN_NOW_ANNOTATION]: "r1" } },
    });
    await t.reconcile("2026-11-25T10:03:00Z");
    const manual = (await t.names()).find((n) => n !== FIRST && n !== attempt(1))!;
    assert.deepEqual(await t.names(), [FIRST, manual].sort(), "run-now replaced the running attempt");
    const made = () => t.events().filter((e) => e.startsWith("RetryCreated")).length;
    await t.reconcile("2026-11-25T10:03:30Z");
    await t.finish(manual, "complete", "2026-11-25T10:04:00Z");
    await t.reconcile("2026-11-25T10:04:00Z");
    t.restart();
    await t.reconcile("2026-11-25T10:05:00Z");
    assert.deepEqual(await t.names(), [FIRST, manual].sort(), "attempt 1 not made again; attempt 2 not owed");
    // The record forgot the attempt (ten newer entries): the Job that replaced it still names it.
    const now = await t.stored();
    await t.client.updateStatus(CronJobKind, { ...now, status: { ...now.status, recentRuns: [], active: [] } });
    t.restart();
    await t.reconcile("2026-11-25T10:06:00Z");
    assert.deepEqual(await t.names(), [FIRST, manual].sort(), "nor after the record forgot it");
    assert.equal(made(), 1);
  });

  it("Allow: an attempt a user deleted is not made again (the record names it)", async () => {
    const t = await setUp({ spec: { retry: { limit: 2, delaySeconds: 60 } } });
    await t.reconcile("2026-11-25T10:00:01Z");
    await t.finish(FIRST, "failed", "2026-11-25T10:01:00Z");
    await t.reconcile("2026-11-25T10:01:00Z");
    await t.reconcile("2026-11-25T10:02:00Z");
    await t.reconcile("2026-11-25T10:02:30Z");
    await t.client.delete(Kinds.Job, "ns", attempt(1));
    t.restart();
    for (const at of ["2026-11-25T10:03:00Z", "2026-11-25T10:10:00Z"]) await t.reconcile(at);
    assert.deepEqual(await t.names(), [FIRST]);
    assert.equal(t.events().filter((e) => e.startsWith("RetryCreated")).length, 1);
  });

  it("failedJobsHistoryLimit 0 keeps the failed Job until its retry is created, then cleans up as usual", async () => {
    const t = await setUp({ spec: { failedJobsHistoryLimit: 0, retry: { limit: 1, delaySeconds: 300 } } });
    await t.reconcile("2026-11-25T10:00:01Z");
    await t.finish(FIRST, "failed", "2026-11-25T10:01:00Z");
    for (const at of ["2026-11-25T10:01:00Z", "2026-11-25T10:03:00Z", "2026-11-25T10:05:59Z"]) {
      await t.reconcile(at);
      assert.deepEqual(await t.names(), [FIRST], `kept at ${at}: its retry is owed`);
    }
    await t.reconcile("2026-11-25T10:06:00Z");
    assert.ok((await t.names()).includes(attempt(1)), "the retry was created");
    await t.reconcile("2026-11-25T10:06:30Z");
    assert.deepEqual(await t.names(), [attempt(1)], "the failed first Job goes once nothing needs it");
    // The slot is known from its attempt's annotations: the last attempt failed, no further one, and it goes too.
    await t.finish(attempt(1), "failed", "2026-11-25T10:07:00Z");
    await t.reconcile("2026-11-25T10:07:00Z");
    await t.reconcile("2026-11-25T10:20:00Z");
    assert.deepEqual(await t.names(), []);
    assert.equal(t.events().filter((e) => e.startsWith("RetryCreated")).length, 1);
  });

  it("spec.retry set after a failure does not retry that old failure; the next slot's Job is marked", async () => {
    const t = await setUp();
    await t.reconcile("2026-11-25T10:00:01Z");
    assert.equal((await t.job(FIRST)).metadata?.annotations?.[RETRY_ATTEMPT_ANNOTATION], undefined, "no 0/N mark");
    await t.finish(FIRST, "failed", "2026-11-25T10:01:00Z");
    await t.reconcile("2026-11-25T10:01:00Z");
    const cj = await t.stored();
    await t.client.update(CronJobKind, { ...cj, spec: { ...cj.spec, retry: { limit: 3 } } });
    for (const at of ["2026-11-25T10:02:00Z", "2026-11-25T10:30:00Z"]) await t.reconcile(at);
    assert.deepEqual(await t.names(), [FIRST], "not retried");
    assert.ok(!(await t.record()).some((e) => e.trigger === "Retry"));
    await t.reconcile("2026-11-25T11:00:01Z");
    assert.equal((await t.job(ELEVEN)).metadata?.annotations?.[RETRY_ATTEMPT_ANNOTATION], "0/3");
  });
});

describe("retry: no attempt runs while the CronJob is suspended or stopped", () => {
  it("suspended before the delay ends and past it: no attempt while suspended, however often it is reconciled; resumed, attempt 1 runs", async () => {
    const t = await setUp({ spec: { retry: { limit: 2, delaySeconds: 300 } } });
    await t.reconcile("2026-11-25T10:00:01Z");
    await t.finish(FIRST, "failed", "2026-11-25T10:01:00Z");
    await t.reconcile("2026-11-25T10:01:00Z");
    const cj = await t.stored();
    await t.client.update(CronJobKind, { ...cj, spec: { ...cj.spec, suspend: true } });
    for (const at of [
      "2026-11-25T10:03:00Z",
      "2026-11-25T10:06:00Z",
      "2026-11-25T10:06:00.010Z",
      "2026-11-25T10:30:00Z",
    ]) {
      const r = await t.reconcile(at);
      assert.deepEqual(await t.names(), [FIRST], `no attempt while suspended (${at})`);
      assert.equal(r.requeueAfterMs, undefined, `not woken for the attempt while suspended (${at})`);
    }
    // A new process reads only what is stored: still none.
    t.restart();
    await t.reconcile("2026-11-25T10:31:00Z");
    assert.deepEqual(await t.names(), [FIRST]);
    const suspended = await t.stored();
    await t.client.update(CronJobKind, { ...suspended, spec: { ...suspended.spec, suspend: false } });
    await t.reconcile("2026-11-25T10:40:00Z");
    assert.deepEqual(await t.names(), [FIRST, attempt(1)].sort(), "resumed: the attempt owed runs");
  });

  it("stopped after failures, with the delay passing meanwhile: no attempt until resumed", async () => {
    const t = await setUp({ spec: { stopAfterConsecutiveFailures: 5, retry: { limit: 2, delaySeconds: 300 } } });
    await t.reconcile("2026-11-25T10:00:01Z");
    await t.finish(FIRST, "failed", "2026-11-25T10:01:00Z");
    await t.reconcile("2026-11-25T10:01:00Z");
    // Stopped (as by an earlier slot's failures), for the CronJob's generation.
    const cj = await t.stored();
    const generation = cj.metadata.generation ?? 1;
    await t.client.updateStatus(CronJobKind, {
      ...cj,
      status: {
        ...cj.status,
        consecutiveFailures: 5,
        stopped: { time: "2026-11-25T10:02:00Z", failures: 5, generation },
      },
    });
    for (const at of ["2026-11-25T10:06:00Z", "2026-11-25T10:20:00Z"]) {
      await t.reconcile(at);
      assert.deepEqual(await t.names(), [FIRST], `no attempt while stopped (${at})`);
      assert.ok((await t.stored()).status?.stopped, "still stopped");
    }
  });
});

describe("stopAfterConsecutiveFailures counts a slot once, after its last attempt", () => {
  it("a failed attempt with a retry owed is not counted; the last one is, once; a retry that succeeds sets 0", async () => {
    const t = await setUp({ spec: { stopAfterConsecutiveFailures: 2, retry: { limit: 1 } } });
    const failures = async () => (await t.stored()).status?.consecutiveFailures;
    await t.reconcile("2026-11-25T10:00:01Z");
    await t.finish(FIRST, "failed", "2026-11-25T10:01:00Z");
    await t.reconcile();
    assert.equal(await failures(), 0, "10:00's first Job failed: its retry is owed");
    await t.finish(attempt(1), "failed", "2026-11-25T10:02:00Z");
    await t.reconcile();
    await t.reconcile("2026-11-25T10:03:00Z");
    assert.equal(await failures(), 1, "10:00's last attempt failed: the slot counts once");

    await t.reconcile("2026-11-25T11:00:01Z");
    await t.finish(ELEVEN, "failed", "2026-11-25T11:01:00Z");
    await t.reconcile();
    assert.equal(await failures(), 1, "11:00's first Job failed: its retry is owed");
    assert.equal((await t.stored()).status?.stopped, undefined);
    await t.finish(attempt(1, ELEVEN), "failed", "2026-11-25T11:02:00Z");
    await t.reconcile();
    const stored = await t.stored();
    assert.equal(stored.status?.consecutiveFailures, 2);
    assert.deepEqual(stored.status?.stopped, { time: "2026-11-25T11:02:00Z", failures: 2, generation: 1 });
    assert.ok(
      t
        .events()
        .includes(
          "StoppedAfterFailures Stopped scheduling after 2 failed runs in a row (spec.stopAfterConsecutiveFailures 2); running Jobs are not touched. Resume with kubectl cron resume, or change the spec.",
        ),
    );
  });

  it("a retry that succeeds sets the count to 0", async () => {
    const t = await setUp({ spec: { stopAfterConsecutiveFailures: 3, retry: { limit: 1 } } });
    await t.reconcile("2026-11-25T10:00:01Z");
    await t.finish(FIRST, "failed", "2026-11-25T10:01:00Z");
    await t.reconcile();
    await t.finish(attempt(1), "failed", "2026-11-25T10:02:00Z");
    await t.reconcile();
    assert.equal((await t.stored()).status?.consecutiveFailures, 1);
    await t.reconcile("2026-11-25T11:00:01Z");
    await t.finish(ELEVEN, "failed", "2026-11-25T11:01:00Z");
    await t.reconcile();
    assert.equal((await t.stored()).status?.consecutiveFailures, 1);
    await t.finish(attempt(1, ELEVEN), "complete", "2026-11-25T11:02:00Z");
    await t.reconcile();
    assert.equal((await t.stored()).status?.consecutiveFailures, 0, "11:00 succeeded on its retry");
  });

  describe("failureStop and retriedLater (pure)", () => {
    const slot = Date.parse(SLOT);
    const marked = (name: string, annotations: Record<string, string>, state?: "failed" | "complete", end = slot) =>
      batchJob({
        name,
        slot,
        annotations,
        ...(state ? { state, start: end - 1000, end } : {}),
      });
    const first = marked(FIRST, { [RETRY_ATTEMPT_ANNOTATION]: "0/2" }, "failed", slot + 60_000);
    const a1 = marked(
      attempt(1),
      { [RETRY_OF_ANNOTATION]: FIRST, [RETRY_ATTEMPT_ANNOTATION]: "1/2" },
      "failed",
      slot + 120_000,
    );
    const a2 = marked(
      attempt(2),
      { [RETRY_OF_ANNOTATION]: FIRST, [RETRY_ATTEMPT_ANNOTATION]: "2/2" },
      "failed",
      slot + 180_000,
    );
    const plain = marked(FIRST, {}, "failed", slot + 60_000);
    const retry = { retry: { limit: 2 } };
    const cases: Array<[string, Job, Parameters<typeof retriedLater>[1], boolean]> = [
      [
        "a Job not made with spec.retry: its failure is the slot's",
        plain,
        { jobs: [plain], spec: retry, lastScheduleTime: SLOT },
        false,
      ],
      [
        "the first Job, attempts left: a retry is owed",
        first,
        { jobs: [first], spec: retry, lastScheduleTime: SLOT },
        true,
      ],
      ["attempt 1 of 2: one more is owed", a1, { jobs: [a1], spec: retry, lastScheduleTime: SLOT }, true],
      ["attempt 2 of 2: the last", a2, { jobs: [first, a1, a2], spec: retry, lastScheduleTime: SLOT }, false],
      [
        "a newer attempt exists, whatever spec.retry says now",
        first,
        { jobs: [first, a1], spec: {}, lastScheduleTime: SLOT },
        true,
      ],
      ["spec.retry removed: nothing is owed", first, { jobs: [first], spec: {}, lastScheduleTime: SLOT }, false],
      [
        "the limit lowered below the attempt: the last",
        a1,
        { jobs: [a1], spec: { retry: { limit: 1 } }, lastScheduleTime: SLOT },
        false,
      ],
      [
        "Forbid, a newer slot ran: the retry is skipped, this is the last",
        first,
        { jobs: [first], spec: { ...retry, concurrencyPolicy: "Forbid" }, lastScheduleTime: "2026-11-25T11:00:00Z" },
        false,
      ],
      [
        "Allow, a newer slot ran: the retry still runs",
        first,
        { jobs: [first], spec: { ...retry, concurrencyPolicy: "Allow" }, lastScheduleTime: "2026-11-25T11:00:00Z" },
        true,
      ],
    ];
    for (const [title, job, o, want] of cases)
      it(`retriedLater: ${title}`, () => assert.equal(retriedLater(job, o), want));

    it("failureStop counts only the slots' last attempts, in the order they ended", () => {
      const now = new Date("2026-11-25T12:00:00Z");
      const d = failureStop({
        stopAfter: 5,
        generation: 1,
        status: { consecutiveFailures: 1, lastScheduleTime: SLOT },
        newlyEnded: [a2, first, a1],
        jobs: [first, a1, a2],
        spec: retry,
        resumeRequest: undefined,
        now,
      });
      assert.equal(d.status.consecutiveFailures, 2, "one slot, counted once");
      const without = failureStop({
        stopAfter: 5,
        generation: 1,
        status: { consecutiveFailures: 1, lastScheduleTime: SLOT },
        newlyEnded: [first],
        resumeRequest: undefined,
        now,
      });
      assert.equal(without.status.consecutiveFailures, 2, "without spec.retry nothing is owed: every failure counts");
    });
  });
});
