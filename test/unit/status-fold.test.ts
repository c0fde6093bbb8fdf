// The fold's rules (controllers/statusfold.ts): which status changes its Jobs tell (may wait), which are news (written
// at once), since when the stored status is behind, and the budget's decision. The reconciler's rows over them are in
// test/integration/cronjob/status-delay-cases.ts.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type CronJobWireStatus, type Job, SCHEDULED_AT_ANNOTATION } from "../../api/v1/index.ts";
import {
  behindSince,
  boundSpreadMs,
  type FoldJobs,
  foldStatus,
  StatusNews,
  statusNews,
  StatusWriteBudget,
} from "../../controllers/statusfold.ts";

const SLOT = "2026-11-28T10:00:00Z";
const T0 = Date.parse(SLOT);

function job(name: string, o: { slot?: string; ended?: string; ttl?: number } = {}): Job {
  return {
    metadata: {
      name,
      creationTimestamp: "2026-11-28T10:00:02Z",
      annotations: o.slot ? { [SCHEDULED_AT_ANNOTATION]: o.slot } : {},
    },
    ...(o.ttl !== undefined ? { spec: { ttlSecondsAfterFinished: o.ttl, template: {} } } : {}),
    status: o.ended
      ? {
          completionTime: o.ended,
          conditions: [
            { type: "SuccessCriteriaMet", status: "True", lastTransitionTime: o.ended },
            { type: "Complete", status: "True", lastTransitionTime: o.ended },
          ],
        }
      : { active: 1, startTime: "2026-11-28T10:00:03Z" },
  } as Job;
}

const cond = (type: string, status: string, reason: string, message: string) => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: "2026-11-28T09:00:00Z",
});

const stored: CronJobWireStatus = {
  observedGeneration: 1,
  lastScheduleTime: "2026-11-28T09:00:00Z",
  nextScheduleTime: SLOT,
  active: [],
  activeCount: 0,
  conditions: [
    cond("Available", "True", "Scheduled", `Next run at ${SLOT}`),
    cond("Progressing", "False", "NoJobsActive", "No Jobs running"),
    cond("Degraded", "False", "AsExpected", "No problems detected"),
  ],
  recentRuns: [],
};

/** The status once the slot's Job `j` runs: what a pass would write. */
function started(j: Job, extra: Partial<CronJobWireStatus> = {}): CronJobWireStatus {
  return {
    ...stored,
    lastScheduleTime: SLOT,
    nextScheduleTime: "2026-11-28T11:00:00Z",
    active: [{ name: j.metadata?.name ?? "" }],
    activeCount: 1,
    conditions: [
      cond("Available", "True", "JobsActive", "1 active Job(s); next run at 2026-11-28T11:00:00Z"),
      cond("Progressing", "True", "JobsActive", "1 Job(s) running"),
      cond("Degraded", "False", "AsExpected", "No problems detected"),
    ],
    recentRuns: [
      {
        trigger: "Schedule",
        scheduledTime: SLOT,
        decision: "Created",
        reason: "Scheduled",
        decidedAt: "2026-11-28T10:00:02Z",
        job: j.metadata?.name ?? "",
      },
    ],
    ...extra,
  };
}

function children(jobs: Job[], o: { unbooked?: boolean; scheduled?: boolean } = {}): FoldJobs {
  return { jobs, unbooked: () => o.unbooked ?? true, scheduled: () => o.scheduled ?? true };
}

describe("statusNews: what no Job tells", () => {
  const j = job("backup-1795341600", { slot: SLOT });

  it("a scheduled run's start (active, times, Created entry, Progressing, Available's message) is routine", () => {
    assert.equal(statusNews(stored, started(j), children([j])), undefined);
  });

  it("a run of a trigger whose Jobs do not move lastScheduleTime (run now, backfill, retry) is news", () => {
    assert.equal(statusNews(stored, started(j), children([j], { scheduled: false })), StatusNews.record);
  });

  it("a record entry no Job tells (Held, Missed, Skipped, ...) is news", () => {
    const held = started(j);
    held.recentRuns = [
      { ...held.recentRuns![0]!, decision: "Held", reason: "ConcurrencyPolicyForbid", job: undefined },
    ];
    assert.equal(statusNews(stored, held, children([j])), StatusNews.record);
  });

  it("a condition that is not a run's start or end (Degraded, Available going False) is news", () => {
    const failed = started(j);
    failed.conditions = [...failed.conditions!.slice(0, 2), cond("Degraded", "True", "LastJobFailed", "failed")];
    assert.equal(statusNews(stored, failed, children([j])), StatusNews.condition);
    const unavailable = started(j);
    unavailable.conditions = [
      cond("Available", "False", "Suspended", "suspended"),
      ...unavailable.conditions!.slice(1),
    ];
    assert.equal(statusNews(stored, unavailable, children([j])), StatusNews.condition);
  });

  it("a field no Job tells (lastMissedTime, stopped, ...) and a new generation are news", () => {
    assert.equal(statusNews(stored, started(j, { lastMissedTime: SLOT }), children([j])), StatusNews.field);
    assert.equal(statusNews(stored, started(j, { observedGeneration: 2 }), children([j])), StatusNews.observed);
    assert.equal(statusNews(undefined, started(j), children([j])), StatusNews.observed);
  });

  it("an ended run whose Job has a TTL, or a listed Job that is gone, is news: the Job will not stay to tell it", () => {
    const ttl = job("backup-1795341600", { slot: SLOT, ended: "2026-11-28T10:00:30Z", ttl: 0 });
    const ended = started(ttl, { active: [], activeCount: 0 });
    assert.equal(statusNews(stored, ended, children([ttl])), StatusNews.jobLeaves);
    const plain = job("backup-1795341600", { slot: SLOT, ended: "2026-11-28T10:00:30Z" });
    assert.equal(statusNews(stored, started(plain, { active: [], activeCount: 0 }), children([plain])), undefined);
    const listed = { ...stored, active: [{ name: "backup-1" }], activeCount: 1 };
    assert.equal(statusNews(listed, started(j), children([j])), StatusNews.jobLeaves);
  });
});

describe("behindSince: the oldest change the stored status lacks", () => {
  it("an unbooked run counts from its slot, a listed run that ended from its end", () => {
    const j = job("backup-1795341600", { slot: SLOT });
    assert.equal(behindSince(stored, started(j), children([j]), T0 + 60_000), T0);
    const listed = { ...stored, nextScheduleTime: "2026-11-28T11:00:00Z", active: [{ name: "backup-1795341600" }] };
    const ended = job("backup-1795341600", { slot: SLOT, ended: "2026-11-28T10:00:30Z" });
    const next = started(ended, { active: [], activeCount: 0 });
    assert.equal(behindSince(listed, next, children([ended], { unbooked: false }), T0 + 60_000), T0 + 30_000);
  });
});

describe("foldStatus: news now, routine with room, else in line for a token, else at the bound", () => {
  it("takes a token for every write; a routine one without one reserves the next, or waits the bound", () => {
    const budget = new StatusWriteBudget({ qps: 1, maxDelayMs: 60_000 }, T0);
    // The bucket holds two tokens (twice the qps).
    assert.deepEqual(foldStatus(undefined, T0, budget, T0), { write: true, why: "room" });
    assert.deepEqual(foldStatus(StatusNews.record, T0, budget, T0), { write: true, why: "news", news: "record" });
    // None left: the next token comes in a second; reserved, the pass is woken then and writes without taking another.
    const first = foldStatus(undefined, T0, budget, T0);
    assert.deepEqual(first, { write: false, waitMs: 1000, reservedAt: T0 + 1000 });
    const second = foldStatus(undefined, T0, budget, T0);
    assert.deepEqual(second, { write: false, waitMs: 2000, reservedAt: T0 + 2000 }, "in line behind the first");
    assert.deepEqual(foldStatus(undefined, T0, budget, T0 + 500, T0 + 1000), {
      write: false,
      waitMs: 500,
      reservedAt: T0 + 1000,
    });
    assert.deepEqual(foldStatus(undefined, T0, budget, T0 + 1000, T0 + 1000), { write: true, why: "room" });
    // News is written whatever the budget.
    assert.deepEqual(foldStatus(StatusNews.field, T0, budget, T0), { write: true, why: "news", news: "field" });
    // A token further than the bound is not reserved: the pass waits the bound, and then writes.
    const late = foldStatus(undefined, T0 - 58_000, budget, T0);
    assert.deepEqual(late, { write: false, waitMs: 2000 });
    assert.deepEqual(foldStatus(undefined, T0 - 60_000, budget, T0), { write: true, why: "bound" });
  });

  it("a routine Event takes a token only with one left after it: a status write comes first", () => {
    const budget = new StatusWriteBudget({ qps: 1, maxDelayMs: 60_000 }, T0);
    // Two tokens: the Event takes one and leaves the other, which the pass's status write then takes.
    assert.equal(budget.takeSpare(T0), true);
    assert.equal(budget.takeSpare(T0), false, "the last token is left for a status write");
    assert.deepEqual(foldStatus(undefined, T0, budget, T0), { write: true, why: "room" });
    assert.equal(budget.takeSpare(T0), false, "none left");
    // Refilled, the spare goes to an Event again; a reserved token (the bucket below zero) is nobody's spare.
    assert.equal(budget.takeSpare(T0 + 2000), true);
    assert.deepEqual(foldStatus(undefined, T0, budget, T0 + 2000), { write: true, why: "room" });
    assert.deepEqual(foldStatus(undefined, T0, budget, T0 + 2000), {
      write: false,
      waitMs: 1000,
      reservedAt: T0 + 3000,
    });
    assert.equal(budget.takeSpare(T0 + 3500), false, "the refilled token was reserved");
    assert.equal(budget.takeSpare(T0 + 5000), true);
  });

  it("qps 0: never room, every routine change waits the bound", () => {
    const budget = new StatusWriteBudget({ qps: 0, maxDelayMs: 60_000 }, T0);
    assert.deepEqual(foldStatus(undefined, T0, budget, T0), { write: false, waitMs: 60_000 });
    assert.deepEqual(foldStatus(undefined, T0, budget, T0 + 60_000), { write: true, why: "bound" });
  });
});

describe("boundSpreadMs: the bound's writes spread over the minute before it", () => {
  it("is the same for a CronJob every time, within the last minute (a fifth of a short bound), and differs between CronJobs", () => {
    const uids = Array.from({ length: 200 }, (_, i) => `uid-${i}`);
    const spreads = uids.map((u) => boundSpreadMs(u, 300_000));
    assert.deepEqual(
      uids.map((u) => boundSpreadMs(u, 300_000)),
      spreads,
      "decided from the CronJob, not drawn",
    );
    for (const s of spreads) assert.ok(s >= 0 && s < 60_000, `${s} within the minute`);
    // Spread out, not bunched: each of the minute's six 10 s slices holds some of 200 CronJobs.
    for (let slice = 0; slice < 6; slice++) {
      assert.ok(
        spreads.some((s) => Math.floor(s / 10_000) === slice),
        `a spread in slice ${slice}`,
      );
    }
    for (const u of uids) assert.ok(boundSpreadMs(u, 100_000) < 20_000, "a fifth of a 100 s bound");
    assert.equal(boundSpreadMs("uid-1", 0), 0);
  });

  it("a folded write is due its spread before the bound, never after it", () => {
    const budget = new StatusWriteBudget({ qps: 0, maxDelayMs: 300_000 }, T0);
    assert.deepEqual(foldStatus(undefined, T0, budget, T0, undefined, 20_000), { write: false, waitMs: 280_000 });
    assert.deepEqual(foldStatus(undefined, T0, budget, T0 + 280_000, undefined, 20_000), {
      write: true,
      why: "bound",
    });
  });
});
