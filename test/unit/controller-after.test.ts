// spec.after through the reconciler's one run path, against the fake API server: a CronJob with no schedule of its
// own runs once after each run of its upstream that ends as `when` asks, its Job named from the upstream's Job (the
// lock: no second run after a restart or a lost status write), its book (status.upstreams) starting when it first
// names the upstream; runs that ended while the operator was away are decided by missedRunPolicy; a missing upstream
// and a cycle are Degraded reasons, never an error loop; Forbid holds a run after an upstream as any run.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AFTER_ANNOTATION, afterJobName, retryJobName, CronJobResource as CronJobKind } from "../../api/v1/index.ts";
import { joinJobName } from "../../api/v1/join.ts";
import { withUpstreamBooks } from "../../controllers/upstreambooks.ts";
import { Kinds } from "../../runtime/kinds.ts";
import { APIError } from "../../runtime/errors.ts";
import { batchJob, jobStatus } from "../fixtures.ts";
import { harnessCronJob, reconcilerHarness } from "../reconciler-harness.ts";

const T0 = Date.parse("2026-11-25T10:00:00Z");
const at = (s: number) => new Date(T0 + s * 1000);
const iso = (s: number) => at(s).toISOString().replace(".000Z", "Z");

async function setUp(b: Record<string, unknown>, more: Record<string, Record<string, unknown>> = {}) {
  const h = await reconcilerHarness(at(0));
  const { client, clock, restart } = h;
  const seed = (name: string, spec: Record<string, unknown>) =>
    h.seed(harnessCronJob(name, spec, { uid: `uid-${name}`, creationTimestamp: iso(-3600) }));
  seed("a", { schedule: "0 * * * *" });
  seed("b", b);
  for (const [name, spec] of Object.entries(more)) seed(name, spec);
  const reconcile = (s: number, name = "b") => h.reconcile(name, at(s));
  /** A run of `a` (its Job), ended at `end` seconds as it says. */
  const upstreamRun = (name: string, state: "complete" | "failed", end: number, owner = "a") =>
    client.seed(
      Kinds.Job,
      batchJob({
        name,
        namespace: "ns",
        uid: `uid-${name}`,
        owner: { name: owner, uid: `uid-${owner}` },
        state,
        start: at(end - 30),
        end: at(end),
      }),
    );
  const jobs = async (owner = "b") => (await h.jobs()).filter((j) => j.metadata?.ownerReferences?.[0]?.name === owner);
  const stored = (name = "b") => h.stored(name);
  const condition = async (type: string, name = "b") =>
    (await stored(name)).status?.conditions?.find((c) => c.type === type);
  return { client, clock, reconcile, restart, upstreamRun, jobs, stored, condition };
}

describe("after: a CronJob runs once after each run of another", () => {
  it("with no schedule of its own: its book starts when it names the upstream, then one run per success", async () => {
    const t = await setUp({ after: [{ cronJob: "a" }] });
    t.upstreamRun("a-old", "complete", -60);
    await t.reconcile(0);
    assert.deepEqual(await t.jobs(), [], "a run of the upstream that ended before: not this CronJob's");
    assert.deepEqual((await t.stored()).status?.upstreams, [{ cronJob: "a", lastEnded: iso(0) }]);
    assert.equal((await t.condition("Available"))?.reason, "AfterUpstreams");
    assert.equal((await t.stored()).status?.nextScheduleTime, undefined);
    t.upstreamRun("a-1", "complete", 120);
    await t.reconcile(121);
    const [job] = await t.jobs();
    assert.equal(job?.metadata?.name, afterJobName("b", "a", "a-1"));
    assert.equal(job?.metadata?.annotations?.[AFTER_ANNOTATION], "a/a-1");
    const [entry] = (await t.stored()).status?.recentRuns ?? [];
    assert.deepEqual(
      { trigger: entry?.trigger, decision: entry?.decision, reason: entry?.reason, request: entry?.request },
      { trigger: "After", decision: "Created", reason: "UpstreamEnded", request: "a/a-1" },
    );
    assert.equal(entry?.scheduledTime, iso(120), "its slot: the upstream run's end");
    assert.deepEqual((await t.stored()).status?.upstreams, [{ cronJob: "a", lastEnded: iso(120), lastJob: "a-1" }]);
    await t.reconcile(122);
    t.restart();
    await t.reconcile(123);
    assert.equal((await t.jobs()).length, 1, "once, also after a restart");
    t.upstreamRun("a-2", "failed", 180);
    await t.reconcile(181);
    assert.equal((await t.jobs()).length, 1, "a failed run: not after a success only");
  });

  it("when Failed or Finished: after the runs that ended so", async () => {
    const t = await setUp({ schedule: "0 0 1 1 *", after: [{ cronJob: "a", when: "Failed" }] });
    await t.reconcile(0);
    t.upstreamRun("a-1", "complete", 60);
    t.upstreamRun("a-2", "failed", 120);
    await t.reconcile(121);
    assert.deepEqual(
      (await t.jobs()).map((j) => j.metadata?.annotations?.[AFTER_ANNOTATION]),
      ["a/a-2"],
    );
  });

  it("a run made before a lost status write is found by its name, not made twice", async () => {
    const t = await setUp({ after: [{ cronJob: "a" }] });
    await t.reconcile(0);
    t.upstreamRun("a-1", "complete", 60);
    t.client.injectError(
      { verb: "updateStatus", kind: CronJobKind, name: "b", times: 1 },
      () => new APIError(500, "InternalError", "status write lost"),
    );
    await assert.rejects(t.reconcile(61), /status write lost/);
    assert.equal((await t.jobs()).length, 1, "the Job was made before the write was lost");
    t.restart();
    await t.reconcile(62);
    await t.reconcile(63);
    assert.equal((await t.jobs()).length, 1);
    assert.equal((await t.stored()).status?.upstreams?.[0]?.lastJob, "a-1");
  });

  it("runs that ended while it was away: RunLatest runs after the newest only, the others are Skipped; RunAll all", async () => {
    for (const [policy, expected] of [
      [undefined, ["a/a-3"]],
      ["RunAll", ["a/a-1", "a/a-2", "a/a-3"]],
    ] as const) {
      const t = await setUp({ after: [{ cronJob: "a" }], ...(policy ? { missedRunPolicy: policy } : {}) });
      await t.reconcile(0);
      for (const [i, end] of [60, 120, 180].entries()) t.upstreamRun(`a-${i + 1}`, "complete", end);
      await t.reconcile(600);
      await t.reconcile(601);
      await t.reconcile(602);
      const made = (await t.jobs()).map((j) => j.metadata?.annotations?.[AFTER_ANNOTATION]).sort();
      assert.deepEqual(made, expected, String(policy));
      if (!policy) {
        const skipped = ((await t.stored()).status?.recentRuns ?? []).filter((e) => e.decision === "Skipped");
        assert.deepEqual(skipped.map((e) => [e.request, e.reason]).sort(), [
          ["a/a-1", "UpstreamNewerRun"],
          ["a/a-2", "UpstreamNewerRun"],
        ]);
      }
    }
  });

  it("two runs of the upstream that end in the same second: one run after each, the book at the later name", async () => {
    const t = await setUp({ after: [{ cronJob: "a" }], missedRunPolicy: "RunAll" });
    await t.reconcile(0);
    t.upstreamRun("a-1", "complete", 60);
    t.upstreamRun("a-2", "complete", 60);
    for (const s of [61, 62, 63, 64]) await t.reconcile(s);
    assert.deepEqual((await t.jobs()).map((j) => j.metadata?.annotations?.[AFTER_ANNOTATION]).sort(), [
      "a/a-1",
      "a/a-2",
    ]);
    assert.deepEqual((await t.stored()).status?.upstreams, [{ cronJob: "a", lastEnded: iso(60), lastJob: "a-2" }]);
  });

  it("an upstream that does not exist, and a cycle, are Degraded reasons; nothing runs in a cycle", async () => {
    const missing = await setUp({ after: [{ cronJob: "ghost" }] });
    await missing.reconcile(0);
    assert.equal((await missing.condition("Degraded"))?.reason, "UpstreamNotFound");
    assert.match((await missing.condition("Degraded"))?.message ?? "", /ghost/);
    const cyclic = await setUp(
      { after: [{ cronJob: "c" }] },
      { c: { schedule: "0 * * * *", after: [{ cronJob: "b" }] } },
    );
    await cyclic.reconcile(0);
    assert.equal((await cyclic.condition("Degraded"))?.reason, "AfterCycle");
    assert.match((await cyclic.condition("Degraded"))?.message ?? "", /b runs after c runs after b/);
    cyclic.upstreamRun("c-1", "complete", 60, "c");
    await cyclic.reconcile(61);
    assert.deepEqual(await cyclic.jobs(), []);
  });

  it("spec.retry runs a failed run after an upstream again, as any run", async () => {
    const t = await setUp({ after: [{ cronJob: "a" }], retry: { limit: 1, delaySeconds: 0 } });
    await t.reconcile(0);
    t.upstreamRun("a-1", "complete", 60);
    await t.reconcile(61);
    const first = afterJobName("b", "a", "a-1");
    const job = (await t.jobs()).find((j) => j.metadata?.name === first);
    assert.ok(job, "the run after a-1");
    await t.client.updateStatus(Kinds.Job, {
      ...job,
      status: jobStatus({ state: "failed", start: at(62), end: at(70) }),
    });
    await t.reconcile(71);
    await t.reconcile(72);
    assert.deepEqual(
      (await t.jobs()).map((j) => j.metadata?.name).sort(),
      [first, retryJobName("b", first, 1)].sort(),
      "attempt 1 of the run after a-1",
    );
  });

  it("Forbid holds a run after an upstream behind a running Job, as any run", async () => {
    const t = await setUp({ concurrencyPolicy: "Forbid", after: [{ cronJob: "a" }] });
    await t.reconcile(0);
    t.client.seed(
      Kinds.Job,
      batchJob({
        name: "b-manual",
        namespace: "ns",
        uid: "uid-bm",
        owner: { name: "b", uid: "uid-b" },
        state: "active",
        start: at(10),
      }),
    );
    t.upstreamRun("a-1", "complete", 60);
    await t.reconcile(61);
    assert.deepEqual(
      (await t.jobs()).map((j) => j.metadata?.name),
      ["b-manual"],
    );
  });
});

describe("status.upstreams' books (withUpstreamBooks): a book only moves forward", () => {
  const status = { upstreams: [{ cronJob: "a", lastEnded: iso(60), lastJob: "a-2" }] };
  it("a later end, or the same end and a later Job's name, moves it; an earlier one does not", () => {
    const move = (lastEnded: string, lastJob: string) =>
      withUpstreamBooks(status, [{ cronJob: "a", lastEnded, lastJob }]).upstreams?.[0];
    assert.deepEqual(move(iso(61), "a-1"), { cronJob: "a", lastEnded: iso(61), lastJob: "a-1" });
    assert.deepEqual(move(iso(60), "a-3"), { cronJob: "a", lastEnded: iso(60), lastJob: "a-3" });
    assert.deepEqual(move(iso(60), "a-1"), status.upstreams[0], "same end, an earlier name: stays");
    assert.deepEqual(move(iso(59), "a-9"), status.upstreams[0], "an earlier end: stays");
    assert.deepEqual(withUpstreamBooks(status, [{ cronJob: "c", lastEnded: iso(1) }]).upstreams, [
      ...status.upstreams,
      { cronJob: "c", lastEnded: iso(1) },
    ]);
  });
});

describe("after all (spec.afterPolicy All): one run once every upstream has ended a run", () => {
  const join = { after: [{ cronJob: "a" }, { cronJob: "c" }], afterPolicy: "All" };
  const more = { c: { schedule: "30 * * * *" } };

  it("waits for every upstream, runs once, and waits for every upstream again", async () => {
    const t = await setUp(join, more);
    await t.reconcile(0);
    t.upstreamRun("a-1", "complete", 60);
    await t.reconcile(61);
    assert.deepEqual(await t.jobs(), [], "one upstream of two: it waits");
    t.upstreamRun("a-2", "complete", 90);
    t.upstreamRun("c-1", "complete", 120, "c");
    await t.reconcile(121);
    const made = await t.jobs();
    assert.deepEqual(
      made.map((j) => [j.metadata?.name, j.metadata?.annotations?.[AFTER_ANNOTATION]]),
      [
        [
          joinJobName("b", [
            { upstream: "a", job: "a-1" },
            { upstream: "c", job: "c-1" },
          ]),
          "all:a/a-1+c/c-1",
        ],
      ],
    );
    const [entry] = (await t.stored()).status?.recentRuns ?? [];
    assert.deepEqual(
      [entry?.trigger, entry?.decision, entry?.request, entry?.scheduledTime],
      ["After", "Created", "all:a/a-1+c/c-1", iso(120)],
      "its slot: the end that completed the join",
    );
    // Both books at the join's end: a's second run (before it) was taken with the join.
    assert.deepEqual((await t.stored()).status?.upstreams, [
      { cronJob: "a", lastEnded: iso(120), lastJob: "a-2" },
      { cronJob: "c", lastEnded: iso(120), lastJob: "c-1" },
    ]);
    t.upstreamRun("c-2", "complete", 180, "c");
    await t.reconcile(181);
    assert.equal((await t.jobs()).length, 1, "c again, a not since the join: it waits");
    t.upstreamRun("a-3", "failed", 200);
    await t.reconcile(201);
    assert.equal((await t.jobs()).length, 1, "a failed: not as `when` asks");
    t.upstreamRun("a-4", "complete", 240);
    await t.reconcile(241);
    assert.deepEqual((await t.jobs()).map((j) => j.metadata?.annotations?.[AFTER_ANNOTATION]).sort(), [
      "all:a/a-1+c/c-1",
      "all:a/a-4+c/c-2",
    ]);
  });

  it("a join made before a lost status write is found by its name after a restart, not made twice", async () => {
    const t = await setUp(join, more);
    await t.reconcile(0);
    t.upstreamRun("a-1", "complete", 60);
    t.upstreamRun("c-1", "complete", 70, "c");
    t.client.injectError(
      { verb: "updateStatus", kind: CronJobKind, name: "b", times: 1 },
      () => new APIError(500, "InternalError", "status write lost"),
    );
    await assert.rejects(t.reconcile(71), /status write lost/);
    assert.equal((await t.jobs()).length, 1, "the Job was made before the write was lost");
    // An upstream runs again before the new process's first pass: the join it asks for is still the first one.
    t.upstreamRun("a-2", "complete", 72);
    t.restart();
    await t.reconcile(73);
    await t.reconcile(74);
    assert.equal((await t.jobs()).length, 1);
    assert.deepEqual(
      (await t.stored()).status?.upstreams?.map((b) => [b.cronJob, b.lastEnded]),
      [
        ["a", iso(70)],
        ["c", iso(70)],
      ],
    );
  });

  it("an upstream missing holds the join (Degraded says which); a join past startingDeadlineSeconds is Missed", async () => {
    const t = await setUp({ ...join, after: [{ cronJob: "a" }, { cronJob: "gone" }] });
    await t.reconcile(0);
    t.upstreamRun("a-1", "complete", 60);
    await t.reconcile(61);
    assert.deepEqual(await t.jobs(), []);
    assert.equal((await t.condition("Degraded"))?.reason, "UpstreamNotFound");

    const late = await setUp({ ...join, startingDeadlineSeconds: 30 }, more);
    await late.reconcile(0);
    late.upstreamRun("a-1", "complete", 60);
    late.upstreamRun("c-1", "complete", 70, "c");
    await late.reconcile(200);
    assert.deepEqual(await late.jobs(), []);
    const [entry] = (await late.stored()).status?.recentRuns ?? [];
    assert.deepEqual([entry?.decision, entry?.reason], ["Missed", "StartingDeadlineExceeded"]);
    await late.reconcile(201);
    assert.equal((await late.stored()).status?.recentRuns?.length, 1, "decided once");
    // The Missed join moved the books: the next runs of both make the next join, in time.
    assert.deepEqual(
      (await late.stored()).status?.upstreams?.map((b) => [b.cronJob, b.lastEnded, b.lastJob]),
      [
        ["a", iso(70), "a-1"],
        ["c", iso(70), "c-1"],
      ],
    );
    late.upstreamRun("a-2", "complete", 250);
    late.upstreamRun("c-2", "complete", 260, "c");
    await late.reconcile(261);
    assert.deepEqual(
      (await late.jobs()).map((j) => j.metadata?.annotations?.[AFTER_ANNOTATION]),
      ["all:a/a-2+c/c-2"],
    );
  });

  it("a finished join the stored books have not taken yet is kept from history cleanup: never made twice", async () => {
    const t = await setUp({ ...join, successfulJobsHistoryLimit: 0 }, more);
    await t.reconcile(0);
    t.upstreamRun("a-1", "complete", 60);
    t.upstreamRun("c-1", "complete", 70, "c");
    const lose = () =>
      t.client.injectError(
        { verb: "updateStatus", kind: CronJobKind, name: "b", times: 1 },
        () => new APIError(500, "InternalError", "status write lost"),
      );
    lose();
    await assert.rejects(t.reconcile(71), /status write lost/);
    const [made] = await t.jobs();
    assert.ok(made, "the join's Job was made before the write was lost");
    await t.client.updateStatus(Kinds.Job, {
      ...made,
      status: jobStatus({ state: "complete", start: at(72), end: at(80) }),
    });
    // A new process; its first status write is lost too. The stored books still stand before the join, so its
    // finished Job is the only record that the join ran: cleanup must leave it.
    t.restart();
    lose();
    await assert.rejects(t.reconcile(81), /status write lost/);
    assert.equal((await t.jobs()).length, 1, "kept while the stored books have not taken it");
    await t.reconcile(82);
    await t.reconcile(83);
    assert.deepEqual(
      (await t.stored()).status?.upstreams?.map((b) => [b.cronJob, b.lastEnded]),
      [
        ["a", iso(70)],
        ["c", iso(70)],
      ],
    );
    const entries = ((await t.stored()).status?.recentRuns ?? []).filter((e) => e.trigger === "After");
    assert.deepEqual(
      entries.map((e) => [e.request, e.decision]),
      [["all:a/a-1+c/c-1", "Created"]],
      "one join, recorded once",
    );
    assert.ok((await t.jobs()).length <= 1, "no second Job for the same join");
  });
});
