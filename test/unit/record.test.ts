// The record (controllers/record.ts), status.recentRuns, as pure functions: recordDecision (an entry per slot or
// request, replaced when the decision changes, left alone when it holds, newest first, at most MAX_RECENT_RUNS,
// blockedBy and outcome carried over), recordFromChildren (step 4: a Job of ours the record lacks entered as
// Created at its creation, the outcome of one that ended, nothing else touched) and runDecision (the run path's
// result as a decision, at the Job's creation or now). The reconciler writing it is tested through the behaviour
// table (test/integration/cronjob/record-cases.ts).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  BACKFILL_REQUEST_ANNOTATION,
  CATCH_UP_ANNOTATION,
  CRONJOB_NAME_LABEL,
  type CronJobWireStatus,
  type Job,
  MAX_RECENT_RUNS,
  MAX_RECORD_MESSAGE_LENGTH,
  type RecentRunWire,
  type RecordTrigger,
  RETRY_ATTEMPT_ANNOTATION,
  RETRY_OF_ANNOTATION,
  retryJobName,
  RUN_NOW_REQUEST_ANNOTATION,
} from "../../api/v1/index.ts";
import { recordDecision, recordFromChildren, type RunSubject, runDecision } from "../../controllers/record.ts";
import { triggerOfJob } from "../../controllers/trigger.ts";
import { TRIGGERS } from "../../controllers/triggers.ts";
import { rfc3339 } from "../../runtime/metatime.ts";
import { deepFreeze } from "../../runtime/objects.ts";
import { batchJob } from "../fixtures.ts";

const HOUR = 3600_000;
const MIN = 60_000;
const T0 = Date.UTC(2026, 10, 24, 10);
/** The instant T0 + ms. */
const at = (ms: number) => new Date(T0 + ms);
/** The instant T0 + ms as status writes it. */
const t = (ms: number) => rfc3339(at(ms));
const jobOf = (ms: number) => `cj-${(T0 + ms) / 1000}`;

type Decision = Parameters<typeof recordDecision>[1];

/** A status holding these entries (frozen: no function may change its input). */
const withRuns = (...runs: RecentRunWire[]): CronJobWireStatus =>
  deepFreeze(runs.length ? { lastScheduleTime: t(0), recentRuns: runs } : { lastScheduleTime: t(0) });

/** recordDecision over the decisions in turn, each at its own instant. */
function decide(status: CronJobWireStatus, ...ds: Array<[Decision, number]>): CronJobWireStatus {
  for (const [d, when] of ds) status = deepFreeze(recordDecision(status, d, at(when)));
  return status;
}

const created = (slot: number, trigger: RecordTrigger = "Schedule"): Decision => ({
  trigger,
  scheduledTime: at(slot),
  decision: "Created",
  reason: "Scheduled",
  job: jobOf(slot),
});
const createdEntry = (slot: number, decidedAt = slot): RecentRunWire => ({
  trigger: "Schedule",
  scheduledTime: t(slot),
  decision: "Created",
  reason: "Scheduled",
  decidedAt: t(decidedAt),
  job: jobOf(slot),
});
const held = (slot: number, blockedBy: string): Decision => ({
  trigger: "Schedule",
  scheduledTime: at(slot),
  decision: "Held",
  reason: "ConcurrencyPolicyForbid",
  message: `not started: concurrencyPolicy Forbid and Job ${blockedBy} still running`,
  blockedBy,
});
const missed = (slot: number): Decision => ({
  trigger: "Schedule",
  scheduledTime: at(slot),
  decision: "Missed",
  reason: "StartingDeadlineExceeded",
  message: "Missed scheduled time to start a job",
});

describe("recordDecision", () => {
  it("enters a decision as one entry, with only the fields it has", () => {
    const got = decide(withRuns(), [created(0), 1000]);
    assert.deepEqual(got, { lastScheduleTime: t(0), recentRuns: [createdEntry(0, 1000)] });
  });

  it("a decision that holds on every pass is one entry, with its first time and message: the status is unchanged", () => {
    const once = decide(withRuns(), [held(HOUR, jobOf(0)), HOUR + 1000]);
    const again = decide(
      once,
      [held(HOUR, jobOf(0)), HOUR + 2000],
      [{ ...held(HOUR, jobOf(0)), message: "worded otherwise" }, HOUR + 30 * MIN],
    );
    assert.deepEqual(again, once);
    assert.equal(again.recentRuns?.[0]?.decidedAt, t(HOUR + 1000));
  });

  it("a new decision about the same slot replaces its entry (held, then created)", () => {
    const got = decide(withRuns(), [held(HOUR, jobOf(0)), HOUR + 1000], [created(HOUR), HOUR + 5 * MIN]);
    assert.deepEqual(got.recentRuns, [createdEntry(HOUR, HOUR + 5 * MIN)]);
  });

  it("a Held slot later missed keeps the Job it waited behind", () => {
    const got = decide(withRuns(), [held(HOUR, jobOf(0)), HOUR + 1000], [missed(HOUR), HOUR + 10 * MIN]);
    assert.deepEqual(got.recentRuns, [
      {
        trigger: "Schedule",
        scheduledTime: t(HOUR),
        decision: "Missed",
        reason: "StartingDeadlineExceeded",
        message: "Missed scheduled time to start a job",
        decidedAt: t(HOUR + 10 * MIN),
        blockedBy: jobOf(0),
      },
    ]);
  });

  it("a Held slot then created does not keep blockedBy (its Job runs it)", () => {
    const got = decide(withRuns(), [held(HOUR, jobOf(0)), HOUR + 1000], [created(HOUR), HOUR + 2000]);
    assert.equal(got.recentRuns?.[0]?.blockedBy, undefined);
  });

  it("keeps the outcome of the same Job when its decision is restated, not another Job's", () => {
    const outcome = { result: "Failed", reason: "BackoffLimitExceeded", finishedAt: t(MIN) };
    const before = withRuns({ ...createdEntry(0), outcome });
    const adopted = decide(before, [{ ...created(0), decision: "Adopted" }, 0]);
    assert.deepEqual(adopted.recentRuns, [{ ...createdEntry(0), decision: "Adopted", outcome }]);
    const other = decide(before, [{ ...created(0), job: "cj-other" }, 0]);
    assert.deepEqual(other.recentRuns, [{ ...createdEntry(0), job: "cj-other" }]);
  });

  it(`keeps the ${MAX_RECENT_RUNS} newest decisions, newest first, whatever order they came in`, () => {
    const slots = [3, 0, 11, 5, 1, 7, 2, 10, 4, 9, 6, 8].map((n) => n * HOUR);
    const got = decide(withRuns(), ...slots.map((s): [Decision, number] => [created(s), s + 1000]));
    assert.deepEqual(
      got.recentRuns,
      [11, 10, 9, 8, 7, 6, 5, 4, 3, 2].map((n) => createdEntry(n * HOUR, n * HOUR + 1000)),
    );
  });

  it("a tie in decidedAt puts the newer slot first, in any input order", () => {
    const a = decide(withRuns(), [created(0), HOUR], [created(HOUR), HOUR]);
    const b = decide(withRuns(), [created(HOUR), HOUR], [created(0), HOUR]);
    assert.deepEqual(a, b);
    assert.deepEqual(
      a.recentRuns?.map((e) => e.scheduledTime),
      [t(HOUR), t(0)],
    );
  });

  it("a tie in decidedAt on one slot puts the later attempt first: a slot's run that failed within its second, then its retries (1/N < 10/N)", () => {
    const attempt = (k: number, decision: "Held" | "Created"): Decision => ({
      trigger: "Retry",
      scheduledTime: at(0),
      request: `${k}/10`,
      decision,
      reason: decision === "Held" ? "RetryDelay" : "RetryAfterFailure",
      ...(decision === "Created" ? { job: `cj-r${k}` } : {}),
    });
    const decisions: Array<[Decision, number]> = [
      [created(0), 0],
      [attempt(1, "Created"), 0],
      [attempt(2, "Created"), 0],
      [attempt(9, "Created"), 0],
      [attempt(10, "Held"), 0],
    ];
    const forward = decide(withRuns(), ...decisions);
    assert.deepEqual(decide(withRuns(), ...[...decisions].reverse()), forward, "in any input order");
    assert.deepEqual(
      forward.recentRuns?.map((e) => `${e.trigger} ${e.request ?? ""} ${e.decision}`),
      ["Retry 10/10 Held", "Retry 9/10 Created", "Retry 2/10 Created", "Retry 1/10 Created", "Schedule  Created"],
    );
  });

  it("a run-now request, a backfill slot and a schedule slot are entries of their own; a stop is one per time", () => {
    const runNow: Decision = {
      trigger: "RunNow",
      request: "r1",
      decision: "Created",
      reason: "RunNowRequested",
      job: "cj-r1",
    };
    const backfill: Decision = { ...created(0, "Backfill"), request: "bf-1", reason: "BackfillRequested" };
    const stopped: Decision = { trigger: "Schedule", decision: "Stopped", reason: "StoppedAfterFailures" };
    const got = decide(
      withRuns(),
      [created(0), 1000],
      [backfill, 2000],
      [runNow, 3000],
      [stopped, 4000],
      [stopped, 4000],
      [stopped, 5000],
    );
    assert.deepEqual(
      got.recentRuns?.map((e) => [e.trigger, e.decision, e.scheduledTime, e.request, e.decidedAt]),
      [
        ["Schedule", "Stopped", undefined, undefined, t(5000)],
        ["Schedule", "Stopped", undefined, undefined, t(4000)],
        ["RunNow", "Created", undefined, "r1", t(3000)],
        ["Backfill", "Created", t(0), "bf-1", t(2000)],
        ["Schedule", "Created", t(0), undefined, t(1000)],
      ],
    );
  });

  it(`bounds a message to ${MAX_RECORD_MESSAGE_LENGTH} characters`, () => {
    const long = "x".repeat(MAX_RECORD_MESSAGE_LENGTH + 100);
    const got = decide(withRuns(), [{ ...missed(0), message: long }, 1000]);
    const message = got.recentRuns?.[0]?.message ?? "";
    assert.equal(message.length, MAX_RECORD_MESSAGE_LENGTH);
    assert.ok(message.endsWith("…"));
  });

  it("lists the Jobs a Replace deleted", () => {
    const got = decide(withRuns(), [{ ...created(HOUR), replaced: [jobOf(0)] }, HOUR]);
    assert.deepEqual(got.recentRuns, [{ ...createdEntry(HOUR), replaced: [jobOf(0)] }]);
  });
});

/** A Job of the CronJob `cj` for a slot, created a second after it, in `state`. */
function slotJob(
  slot: number,
  o: { state?: "complete" | "failed"; failure?: { reason: string; message?: string }; annotations?: object } = {},
): Job {
  const job = batchJob({
    name: jobOf(slot),
    owner: { name: "cj", uid: "cj-uid" },
    slot: T0 + slot,
    ...(o.state ? { state: o.state, start: T0 + slot + 1000, end: T0 + slot + MIN } : {}),
    ...(o.failure ? { failure: o.failure } : {}),
    ...(o.annotations ? { annotations: o.annotations as Record<string, string> } : {}),
  });
  job.metadata!.creationTimestamp = t(slot + 1000);
  return deepFreeze(job);
}

/** A Job as step 4 hands it to the record: named by the row that made it (its `recorded`). */
const rec = (job: Readonly<Job>) => ({ job, subject: triggerOfJob(TRIGGERS, job).recorded(job) });

describe("recordFromChildren", () => {
  it("enters a Job of ours the record lacks as Created at its creation, as the run path would", () => {
    const got = recordFromChildren(withRuns(), [rec(slotJob(0))]);
    const run = runDecision(
      { trigger: "Schedule", reason: "Scheduled", scheduledTime: at(0) },
      { result: "created", job: slotJob(0) },
      at(HOUR),
    );
    assert.ok(run);
    assert.deepEqual(got.recentRuns, [createdEntry(0, 1000)]);
    assert.deepEqual(got, recordDecision(withRuns(), run.decision, run.at), "the run path's entry");
  });

  it("enters a run-now Job by its request (no slot) and a backfill Job by its slot and request", () => {
    const runNow = deepFreeze({
      metadata: {
        name: "cj-manual-r1",
        creationTimestamp: t(2000),
        annotations: { [RUN_NOW_REQUEST_ANNOTATION]: "r1" },
      },
    });
    const backfill = slotJob(-HOUR, { annotations: { [BACKFILL_REQUEST_ANNOTATION]: "bf-1" } });
    const got = recordFromChildren(withRuns(), [rec(runNow), rec(backfill)]);
    assert.deepEqual(got.recentRuns, [
      {
        trigger: "RunNow",
        request: "r1",
        decision: "Created",
        reason: "RunNowRequested",
        decidedAt: t(2000),
        job: "cj-manual-r1",
      },
      {
        trigger: "Backfill",
        scheduledTime: t(-HOUR),
        request: "bf-1",
        decision: "Created",
        reason: "BackfillRequested",
        decidedAt: t(-HOUR + 1000),
        job: jobOf(-HOUR),
      },
    ]);
  });

  it("enters a RunAll catch-up Job as trigger Schedule, reason MissedRunPolicyRunAll (no CatchUp trigger)", () => {
    const catchUp = slotJob(0, { annotations: { [CATCH_UP_ANNOTATION]: "true" } });
    const got = recordFromChildren(withRuns(), [rec(catchUp)]);
    assert.deepEqual(got.recentRuns, [{ ...createdEntry(0, 1000), reason: "MissedRunPolicyRunAll" }]);
  });

  it("enters a retry's Job by its row: trigger Retry, reason RetryAfterFailure, its slot and attempt", () => {
    const name = retryJobName("cj", jobOf(0), 2);
    const marked = slotJob(0, { annotations: { [RETRY_OF_ANNOTATION]: jobOf(0), [RETRY_ATTEMPT_ANNOTATION]: "2/3" } });
    // Labelled with its CronJob, as every Job of ours is (jobForSlot).
    const labels = { [CRONJOB_NAME_LABEL]: "cj" };
    const attempt = deepFreeze({
      ...marked,
      metadata: { ...marked.metadata, name, labels, creationTimestamp: t(10 * MIN) },
    });
    const got = recordFromChildren(withRuns(), [rec(attempt)]);
    assert.deepEqual(got.recentRuns, [
      {
        trigger: "Retry",
        scheduledTime: t(0),
        request: "2/3",
        decision: "Created",
        reason: "RetryAfterFailure",
        message: `attempt 2 of 3: Job ${retryJobName("cj", jobOf(0), 1)} failed`,
        decidedAt: t(10 * MIN),
        job: name,
        attempt: { number: 2, of: 3, after: retryJobName("cj", jobOf(0), 1) },
      },
    ]);
  });

  const outcomes: Array<[string, Job, NonNullable<RecentRunWire["outcome"]>]> = [
    ["Complete", slotJob(0, { state: "complete" }), { result: "Complete", finishedAt: t(MIN) }],
    [
      "Failed, BackoffLimitExceeded",
      slotJob(0, {
        state: "failed",
        failure: { reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit" },
      }),
      {
        result: "Failed",
        reason: "BackoffLimitExceeded",
        message: "Job has reached the specified backoff limit",
        finishedAt: t(MIN),
      },
    ],
    [
      "Failed, DeadlineExceeded",
      slotJob(0, {
        state: "failed",
        failure: { reason: "DeadlineExceeded", message: "Job was active longer than specified deadline" },
      }),
      {
        result: "Failed",
        reason: "DeadlineExceeded",
        message: "Job was active longer than specified deadline",
        finishedAt: t(MIN),
      },
    ],
    ["Failed, no reason", slotJob(0, { state: "failed" }), { result: "Failed", finishedAt: t(MIN) }],
  ];
  for (const [title, job, outcome] of outcomes) {
    it(`adds the outcome of an entry whose Job ended: ${title}`, () => {
      const got = recordFromChildren(withRuns(createdEntry(0, 1000)), [rec(job)]);
      assert.deepEqual(got.recentRuns, [{ ...createdEntry(0, 1000), outcome }]);
    });
    it(`enters a Job it lacks with its outcome: ${title}`, () => {
      const got = recordFromChildren(withRuns(), [rec(job)]);
      assert.deepEqual(got.recentRuns, [{ ...createdEntry(0, 1000), outcome }]);
    });
  }

  it("changes nothing when nothing changed: a running Job recorded, an ended one with its outcome, a gone one", () => {
    const ended = slotJob(HOUR, { state: "failed", failure: { reason: "BackoffLimitExceeded" } });
    const input = withRuns(
      createdEntry(2 * HOUR, 2 * HOUR + 1000),
      { ...createdEntry(HOUR, HOUR + 1000), outcome: { result: "Failed", reason: "Other", finishedAt: t(HOUR) } },
      createdEntry(0, 1000),
    );
    const got = recordFromChildren(input, [rec(slotJob(2 * HOUR)), rec(ended)]);
    assert.deepEqual(got, input, "an outcome once recorded stays; the entry of a gone Job stays");
    assert.deepEqual(recordFromChildren(withRuns(), []), withRuns());
  });

  it("applied twice is applied once", () => {
    const jobs = [rec(slotJob(0, { state: "complete" })), rec(slotJob(HOUR))];
    const once = deepFreeze(recordFromChildren(withRuns(), jobs));
    assert.deepEqual(recordFromChildren(once, jobs), once);
  });

  it("a slot decided otherwise before (held, refused) is now the Created entry of its Job", () => {
    const before = decide(withRuns(), [held(0, "cj-older"), 500]);
    const got = recordFromChildren(before, [rec(slotJob(0))]);
    assert.deepEqual(got.recentRuns, [createdEntry(0, 1000)]);
  });

  it("an outcome goes to its own Job's entry, also after a Job took over a slot's entry (listed in any order)", () => {
    // Stored (newest first): slot h1+1h held behind cj-<h1>, then cj-<h1>'s entry. The held slot's Job was
    // created by a pass whose status write was lost, and cj-<h1> has ended since.
    const before = decide(withRuns(), [created(0), 1000], [held(HOUR, jobOf(0)), HOUR + 1000]);
    const ended = slotJob(0, { state: "failed", failure: { reason: "BackoffLimitExceeded" } });
    const outcome = { result: "Failed", reason: "BackoffLimitExceeded", finishedAt: t(MIN) };
    const want = [createdEntry(HOUR, HOUR + 1000), { ...createdEntry(0, 1000), outcome }];
    for (const jobs of [
      [slotJob(HOUR), ended],
      [ended, slotJob(HOUR)],
    ]) {
      const got = recordFromChildren(before, jobs.map(rec));
      assert.deepEqual(got.recentRuns, want, jobs.map((j) => j.metadata?.name).join(", "));
    }
  });

  it("skips a Job without a name or a creation time", () => {
    const unnamed = deepFreeze({ metadata: { creationTimestamp: t(0) } });
    const { creationTimestamp: _c, ...meta } = slotJob(0).metadata!;
    const uncreated = deepFreeze({ ...slotJob(0), metadata: meta });
    const got = recordFromChildren(withRuns(), [rec(unnamed), rec(uncreated)]);
    assert.deepEqual(got, withRuns());
  });
});

describe("runDecision", () => {
  const job = slotJob(HOUR);
  const now = at(HOUR + 5000);
  /** The schedule row's subject of a slot; an entry's key fields are those less the reason. */
  const slot: RunSubject = { trigger: "Schedule", reason: "Scheduled", scheduledTime: at(HOUR) };
  const key = { trigger: "Schedule" as const, scheduledTime: at(HOUR) };
  const cases: Array<[string, Parameters<typeof runDecision>, ReturnType<typeof runDecision>]> = [
    [
      "created: Created at the Job's creation",
      [slot, { result: "created", job }, now],
      { decision: { ...key, decision: "Created", reason: "Scheduled", job: jobOf(HOUR) }, at: at(HOUR + 1000) },
    ],
    [
      "adopted: Adopted at the Job's creation",
      [slot, { result: "adopted", job }, now],
      { decision: { ...key, decision: "Adopted", reason: "Scheduled", job: jobOf(HOUR) }, at: at(HOUR + 1000) },
    ],
    [
      "created with Replace: the deleted Jobs listed, and said",
      [slot, { result: "created", job, replaced: [jobOf(0)] }, now],
      {
        decision: {
          ...key,
          decision: "Created",
          reason: "Scheduled",
          job: jobOf(HOUR),
          replaced: [jobOf(0)],
          message: `replaced ${jobOf(0)} (concurrencyPolicy Replace)`,
        },
        at: at(HOUR + 1000),
      },
    ],
    [
      "created, nothing replaced: no replaced field",
      [slot, { result: "created", job, replaced: [] }, now],
      { decision: { ...key, decision: "Created", reason: "Scheduled", job: jobOf(HOUR) }, at: at(HOUR + 1000) },
    ],
    [
      "created, the Job without a creation time: now",
      [slot, { result: "created", job: { metadata: { name: "j" } } }, now],
      { decision: { ...key, decision: "Created", reason: "Scheduled", job: "j" }, at: now },
    ],
    [
      "a catch-up slot (missedRunPolicy RunAll): trigger Schedule, the row's reason MissedRunPolicyRunAll",
      [{ ...slot, reason: "MissedRunPolicyRunAll" }, { result: "created", job }, now],
      {
        decision: { ...key, decision: "Created", reason: "MissedRunPolicyRunAll", job: jobOf(HOUR) },
        at: at(HOUR + 1000),
      },
    ],
    [
      "a run-now request: RunNowRequested, no slot (the row gives none)",
      [{ trigger: "RunNow", reason: "RunNowRequested", request: "r1" }, { result: "created", job }, now],
      {
        decision: {
          trigger: "RunNow",
          request: "r1",
          decision: "Created",
          reason: "RunNowRequested",
          job: jobOf(HOUR),
        },
        at: at(HOUR + 1000),
      },
    ],
    [
      "a backfill slot: BackfillRequested, its slot and request",
      [{ ...slot, trigger: "Backfill", reason: "BackfillRequested", request: "bf-1" }, { result: "created", job }, now],
      {
        decision: {
          ...key,
          trigger: "Backfill",
          request: "bf-1",
          decision: "Created",
          reason: "BackfillRequested",
          job: jobOf(HOUR),
        },
        at: at(HOUR + 1000),
      },
    ],
    [
      "a reason the record has no switch for is the row's: the entry carries it as given",
      [{ ...key, reason: "RetryAfterFailure" }, { result: "adopted", job }, now],
      {
        decision: { ...key, decision: "Adopted", reason: "RetryAfterFailure", job: jobOf(HOUR) },
        at: at(HOUR + 1000),
      },
    ],
    [
      "a row's own message (a retry's attempt) is the created entry's message",
      [
        {
          trigger: "Retry",
          reason: "RetryAfterFailure",
          scheduledTime: at(HOUR),
          request: "1/2",
          message: "attempt 1 of 2",
        },
        { result: "created", job },
        now,
      ],
      {
        decision: {
          trigger: "Retry",
          scheduledTime: at(HOUR),
          request: "1/2",
          decision: "Created",
          reason: "RetryAfterFailure",
          job: jobOf(HOUR),
          message: "attempt 1 of 2",
        },
        at: at(HOUR + 1000),
      },
    ],
    [
      "a row's own message and a Replace: both said",
      [{ ...slot, message: "own words" }, { result: "created", job, replaced: [jobOf(0)] }, now],
      {
        decision: {
          ...key,
          decision: "Created",
          reason: "Scheduled",
          job: jobOf(HOUR),
          replaced: [jobOf(0)],
          message: `own words; replaced ${jobOf(0)} (concurrencyPolicy Replace)`,
        },
        at: at(HOUR + 1000),
      },
    ],
    [
      "held behind a running Job: Held now, blockedBy (the row's reason and message are not the hold's)",
      [{ ...slot, message: "own words" }, { result: "held", blockedBy: jobOf(0) }, now],
      {
        decision: {
          ...key,
          decision: "Held",
          reason: "ConcurrencyPolicyForbid",
          blockedBy: jobOf(0),
          message: `not started: concurrencyPolicy Forbid and Job ${jobOf(0)} still running`,
        },
        at: now,
      },
    ],
    ["held by no running Job (a limit of the request's own): nothing", [slot, { result: "held" }, now], undefined],
    [
      "a create refused: Refused now, the API server's reason and message",
      [slot, { result: "failed", refused: { reason: "Forbidden", message: "exceeded quota: q" } }, now],
      { decision: { ...key, decision: "Refused", reason: "Forbidden", message: "exceeded quota: q" }, at: now },
    ],
    [
      "a foreign Job holding the name: Refused, AlreadyExists",
      [slot, { result: "conflict", refused: { reason: "AlreadyExists", message: "taken" } }, now],
      { decision: { ...key, decision: "Refused", reason: "AlreadyExists", message: "taken" }, at: now },
    ],
    [
      "a refusal's reason is cut to 64 characters",
      [slot, { result: "failed", refused: { reason: "R".repeat(80), message: "m" } }, now],
      { decision: { ...key, decision: "Refused", reason: "R".repeat(64), message: "m" }, at: now },
    ],
    ["a failure with no refusal (a failed delete): nothing", [slot, { result: "failed" }, now], undefined],
  ];
  for (const [title, args, want] of cases) {
    it(title, () => assert.deepEqual(runDecision(...args), want));
  }
});
