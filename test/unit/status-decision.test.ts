// When a pass's status write goes (controllers/statusdecision.ts): one row per reason code, in the order of
// docs/architecture.md's table, and one per override of the books. The reconciler's rows over the same rules, with
// a real apiserver, are in test/integration/cronjob/status-delay-cases.ts and reconciler-cases.ts.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  BooksLate,
  decideStatusWrite,
  type StatusWriteDecision,
  type StatusWriteFacts,
  StatusWriteReason,
} from "../../controllers/statusdecision.ts";
import { StatusNews, StatusWriteBudget } from "../../controllers/statusfold.ts";
import { holdForRun } from "../../controllers/statuswait.ts";

const T0 = Date.parse("2026-11-28T10:00:00Z");
const BOUND = 300_000;

/** A pass with a change to write and nothing else: no fold, no burst, no queue, no delay. */
function facts(o: Partial<StatusWriteFacts> = {}): StatusWriteFacts {
  return {
    nowMs: T0,
    failed: false,
    jobsGone: false,
    excludedSlot: false,
    burst: false,
    created: false,
    queued: false,
    announcesOnly: false,
    announceWaited: false,
    runHold: () => undefined,
    changed: () => true,
    runBehind: () => false,
    ...o,
  };
}

/** The fold's facts: a budget of `qps` (0: never room), the oldest change status lacks `behindMs` ago. */
function fold(qps: number, behindMs = 0, news?: StatusNews): NonNullable<StatusWriteFacts["fold"]> {
  return {
    budget: new StatusWriteBudget({ qps, maxDelayMs: BOUND }, T0),
    since: T0 - behindMs,
    spread: 0,
    news: () => news,
  };
}

const ROWS: { row: string; facts: StatusWriteFacts; want: StatusWriteDecision }[] = [
  {
    row: "failed: a failed create, write or a problem is reported at once, whatever waits",
    facts: facts({ failed: true, burst: true, queued: true, created: true, runHold: () => 5000, fold: fold(0) }),
    want: { write: "now", reason: "failed" },
  },
  {
    row: "failed with nothing to write: unchanged",
    facts: facts({ failed: true, changed: () => false }),
    want: { write: "never", reason: "unchanged" },
  },
  {
    row: "burst: waits for a pass once the burst is quiet",
    facts: facts({ burst: true, created: true, queued: true }),
    want: { write: "later", reason: "burst", when: "quiet" },
  },
  {
    row: "created: a pass that created a Job while others wait in the queue leaves its write to the next",
    facts: facts({ created: true, queued: true }),
    want: { write: "later", reason: "created", when: "requeue" },
  },
  {
    row: "created, with nothing queued: written now",
    facts: facts({ created: true }),
    want: { write: "now", reason: "changed" },
  },
  {
    row: "announce: a new CronJob's first status that only announces waits once while others are queued",
    facts: facts({ announcesOnly: true, queued: true }),
    want: { write: "later", reason: "announce", when: "idle" },
  },
  {
    row: "announce, once waited: written now",
    facts: facts({ announcesOnly: true, announceWaited: true, queued: true }),
    want: { write: "now", reason: "changed" },
  },
  {
    row: "announce, with nothing queued: written now",
    facts: facts({ announcesOnly: true }),
    want: { write: "now", reason: "changed" },
  },
  {
    row: "runDelay: the runs this process just created hold the write for the delay left",
    facts: facts({ runHold: () => 4000, fold: fold(10) }),
    want: { write: "later", reason: "runDelay", afterMs: 4000 },
  },
  {
    row: "unchanged: nothing to write",
    facts: facts({ changed: () => false, fold: fold(10) }),
    want: { write: "never", reason: "unchanged" },
  },
  {
    row: "changed: without the fold, a change is written at once",
    facts: facts(),
    want: { write: "now", reason: "changed" },
  },
  {
    row: "news: with the fold, a change no Job tells goes at once, with its code",
    facts: facts({ fold: fold(0, 0, StatusNews.condition) }),
    want: { write: "now", reason: "news", news: "condition" },
  },
  {
    row: "room: with the fold, a change the Jobs tell goes when the budget has a token",
    facts: facts({ fold: fold(10) }),
    want: { write: "now", reason: "room" },
  },
  {
    row: "bound: with the fold and no room, a change the Jobs tell goes once it has waited the bound",
    facts: facts({ fold: fold(0, BOUND) }),
    want: { write: "now", reason: "bound" },
  },
  {
    row: "folded: with the fold and no room, before the bound: waits for it",
    facts: facts({ fold: fold(0, 60_000) }),
    want: { write: "later", reason: "folded", afterMs: BOUND - 60_000 },
  },
  // The books' overrides: a burst's or a queue's deferral does not apply.
  {
    row: "jobGone: a run the fold left unbooked lost its Job: written at once as news, in a burst too",
    facts: facts({ jobsGone: true, burst: true, fold: fold(0) }),
    want: { write: "now", reason: "news", news: "jobLeaves", override: BooksLate.jobGone },
  },
  {
    row: "excludedSlot: an excluded slot decided this pass is written at once, in a burst too",
    facts: facts({ excludedSlot: true, burst: true, fold: fold(0, 0, StatusNews.field) }),
    want: { write: "now", reason: "news", news: "field", override: BooksLate.excludedSlot },
  },
  {
    row: "behind, with the fold: the bound reached in a burst",
    facts: facts({ burst: true, fold: fold(0, BOUND) }),
    want: { write: "now", reason: "bound", override: BooksLate.behind },
  },
  {
    row: "behind, without the fold: the stored status a run behind, while a Job was just created and others wait",
    facts: facts({ created: true, queued: true, runBehind: () => true }),
    want: { write: "now", reason: "changed", override: BooksLate.behind },
  },
  {
    row: "excludedSlot: not held by the delay of a run just created either",
    facts: facts({ excludedSlot: true, runHold: () => 2000 }),
    want: { write: "now", reason: "changed" },
  },
  {
    row: "behind does not override the delay of a run just created",
    facts: facts({ created: true, queued: true, runBehind: () => true, runHold: () => 2000 }),
    want: { write: "later", reason: "runDelay", afterMs: 2000 },
  },
];

describe("decideStatusWrite: now, later or never, the first row that applies (docs/architecture.md's table)", () => {
  for (const r of ROWS) it(r.row, () => assert.deepEqual(decideStatusWrite(r.facts), r.want));

  it("has a row for every reason code and every override", () => {
    const reasons = new Set(ROWS.map((r) => r.want.reason));
    assert.deepEqual([...reasons].sort(), Object.values(StatusWriteReason).sort());
    const overrides = new Set(ROWS.flatMap((r) => ("override" in r.want && r.want.override) || []));
    assert.deepEqual([...overrides].sort(), Object.values(BooksLate).sort());
  });

  it("reads a costly fact only when its row is reached", () => {
    const never = () => assert.fail("read, though an earlier row decided");
    assert.equal(
      decideStatusWrite(facts({ burst: true, changed: never, runHold: never, fold: { ...fold(0), news: never } }))
        .reason,
      "burst",
    );
    assert.equal(decideStatusWrite(facts({ runHold: () => 1, changed: never })).reason, "runDelay");
  });

  it("takes a token only when the decision reaches the fold, and a folded pass's reserved token when it is due", () => {
    const f = fold(1);
    decideStatusWrite(facts({ burst: true, fold: f }));
    decideStatusWrite(facts({ changed: () => false, fold: f }));
    // The bucket still holds both its tokens: these two did not reach the fold.
    assert.equal(decideStatusWrite(facts({ fold: f })).reason, "room");
    assert.equal(decideStatusWrite(facts({ fold: f })).reason, "room");
    const folded = decideStatusWrite(facts({ fold: f }));
    assert.deepEqual(folded, { write: "later", reason: "folded", afterMs: 1000, reservedAt: T0 + 1000 });
    const due = { ...f, reservedAt: T0 + 1000 };
    assert.equal(decideStatusWrite(facts({ nowMs: T0 + 1000, fold: due })).reason, "room");
  });
});

describe("holdForRun: the runDelay row's wait, for the runs this process just created (statuswait.ts)", () => {
  const DELAY = 10_000;
  const now = new Date(T0 + 4000);
  const ref = (name: string) => ({ name });
  /** A pass whose stored status lists `shown` as active, `unbookedEnds` runs ended that status has not booked. */
  const outcome = (shown: string[], unbookedEnds = 0) =>
    ({ pass: { cronJob: { status: { active: shown.map(ref) } } }, unbookedEnds }) as unknown as Parameters<
      typeof holdForRun
    >[0];
  const hold = (o: ReturnType<typeof outcome>, running: string[], fresh: Map<string, number>) =>
    holdForRun(o, { active: running.map(ref) }, fresh, now, DELAY);
  const mine = new Map([["a", T0]]);

  it("waits what is left of the delay for a run this process created 4 s ago", () => {
    assert.equal(hold(outcome([]), ["a"], mine), 6000);
  });

  it("holds two fresh runs no longer than the older one's delay: each run shows within the delay of its creation", () => {
    // a created at T0, b at T0+3 s: a's delay ends at T0+10 s, which is what is left (6 s), not b's T0+13 s.
    assert.equal(hold(outcome([]), ["a", "b"], new Map([...mine, ["b", T0 + 3000]])), 6000);
  });

  it("writes at once when a run status has not booked ended, beside the fresh one", () => {
    assert.equal(hold(outcome([], 1), ["a"], mine), undefined);
  });

  it("writes at once when a Job status lists as active no longer runs (ended or gone), beside the fresh one", () => {
    assert.equal(hold(outcome(["gone"]), ["a"], mine), undefined);
  });

  it("writes at once when a running Job status lacks is not this process's own (someone else created it)", () => {
    assert.equal(hold(outcome([]), ["a", "theirs"], mine), undefined);
  });
});
