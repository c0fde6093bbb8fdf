// controllers/metrics.ts: the per-CronJob gauges read a (fake) cache at scrape time, the run counter counts
// what the reconciler reports, and a deleted CronJob leaves no series behind.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Registry } from "prom-client";
import {
  type CronJobView,
  CronJobMetrics,
  MAX_LABEL_VALUE_LENGTH,
  noCronJobMetrics,
  RUN_OUTCOMES,
} from "../../controllers/metrics.ts";

const GAUGES = [
  "cronjob_next_schedule_time_seconds",
  "cronjob_last_schedule_time_seconds",
  "cronjob_last_successful_time_seconds",
  "cronjob_last_failed_time_seconds",
  "cronjob_last_missed_time_seconds",
  "cronjob_active_jobs",
  "cronjob_blocked_runs",
  "cronjob_suspended",
  "cronjob_consecutive_failures",
  "cronjob_stopped",
  "cronjob_info",
];

function setup(initial: CronJobView[] = []) {
  const cache: CronJobView[] = [...initial];
  let leader = true;
  const registry = new Registry();
  const metrics = new CronJobMetrics({ list: () => cache, registry, isLeader: () => leader });
  /** The series of one scrape, as `name{labels} value` lines (no HELP/TYPE). */
  const scrape = async (): Promise<string[]> =>
    (await registry.metrics()).split("\n").filter((l) => l !== "" && !l.startsWith("#"));
  return { cache, registry, metrics, scrape, setLeader: (v: boolean) => (leader = v) };
}

const full: CronJobView = {
  metadata: { namespace: "team-a", name: "nightly" },
  spec: { schedule: "0 3 * * *", timeZone: "Europe/Berlin", concurrencyPolicy: "Forbid", suspend: false },
  status: {
    nextScheduleTime: "2026-11-23T02:00:00Z",
    lastScheduleTime: "2026-11-22T02:00:00Z",
    lastSuccessfulTime: "2026-11-22T02:01:30Z",
    lastFailedTime: "2026-11-20T02:00:42Z",
    lastMissedTime: "2026-11-21T02:00:00Z",
    active: [{ name: "nightly-1795314000" }],
    activeCount: 1,
  },
};

const sec = (iso: string) => Date.parse(iso) / 1000;

describe("per-CronJob metrics (controllers/metrics.ts)", () => {
  it("exports every gauge of a CronJob from its status and spec, in Unix seconds", async () => {
    const { scrape } = setup([full]);
    const lines = await scrape();
    const id = 'namespace="team-a",cronjob="nightly"';
    for (const want of [
      `cronjob_next_schedule_time_seconds{${id}} ${sec("2026-11-23T02:00:00Z")}`,
      `cronjob_last_schedule_time_seconds{${id}} ${sec("2026-11-22T02:00:00Z")}`,
      `cronjob_last_successful_time_seconds{${id}} ${sec("2026-11-22T02:01:30Z")}`,
      `cronjob_last_failed_time_seconds{${id}} ${sec("2026-11-20T02:00:42Z")}`,
      `cronjob_last_missed_time_seconds{${id}} ${sec("2026-11-21T02:00:00Z")}`,
      `cronjob_active_jobs{${id}} 1`,
      `cronjob_blocked_runs{${id}} 0`,
      `cronjob_suspended{${id}} 0`,
      `cronjob_info{${id},schedule="0 3 * * *",time_zone="Europe/Berlin",concurrency_policy="Forbid"} 1`,
      ...RUN_OUTCOMES.map((o) => `cronjob_runs_total{${id},outcome="${o}"} 0`),
    ]) {
      assert.ok(lines.includes(want), `missing ${want} in:\n${lines.join("\n")}`);
    }
    // At most 9 gauge series and 6 counter series per CronJob (the cardinality in docs/operating.md).
    assert.equal(lines.filter((l) => l.includes(id)).length, 9 + 6);
    assert.equal(RUN_OUTCOMES.length, 6);
  });

  it("exports no series for a status field that is absent (or null, or unparseable)", async () => {
    const { scrape } = setup([
      {
        metadata: { namespace: "ns", name: "fresh" },
        spec: { schedule: "@hourly", suspend: true },
      },
      {
        metadata: { namespace: "ns", name: "odd" },
        spec: { schedule: "@daily", timeZone: null },
        status: { nextScheduleTime: null, lastScheduleTime: "not a time", activeCount: 2 },
      },
    ]);
    const lines = await scrape();
    const fresh = lines.filter((l) => l.includes('cronjob="fresh"'));
    assert.deepEqual(
      fresh.filter((l) => !l.startsWith("cronjob_runs_total")),
      [
        'cronjob_blocked_runs{namespace="ns",cronjob="fresh"} 0',
        'cronjob_suspended{namespace="ns",cronjob="fresh"} 1',
        'cronjob_info{namespace="ns",cronjob="fresh",schedule="@hourly",time_zone="",concurrency_policy="Allow"} 1',
      ],
    );
    const odd = lines.filter((l) => l.includes('cronjob="odd"') && !l.startsWith("cronjob_runs_total"));
    assert.deepEqual(odd, [
      'cronjob_active_jobs{namespace="ns",cronjob="odd"} 2',
      'cronjob_blocked_runs{namespace="ns",cronjob="odd"} 0',
      'cronjob_suspended{namespace="ns",cronjob="odd"} 0',
      'cronjob_info{namespace="ns",cronjob="odd",schedule="@daily",time_zone="",concurrency_policy="Allow"} 1',
    ]);
  });

  it("cronjob_blocked_runs: the newest scheduled times in a row held behind one Job, while that Job runs", async () => {
    const HUNG = "nightly-1795000000";
    const held = (slot: string, blockedBy = HUNG) => ({
      trigger: "Schedule",
      scheduledTime: slot,
      decision: "Held",
      reason: "ConcurrencyPolicyForbid",
      decidedAt: slot,
      blockedBy,
    });
    const missed = (slot: string) => ({ ...held(slot), decision: "Missed", reason: "StartingDeadlineExceeded" });
    const created = (slot: string, job: string) => ({
      trigger: "Schedule",
      scheduledTime: slot,
      decision: "Created",
      reason: "Scheduled",
      decidedAt: slot,
      job,
    });
    const blocked = async (status: NonNullable<CronJobView["status"]>) => {
      const { scrape } = setup([{ ...full, status }]);
      const line = (await scrape()).find((l) => l.startsWith("cronjob_blocked_runs{"));
      assert.ok(line, "a series for every CronJob");
      return Number(line.split(" ").pop());
    };
    const active = [{ name: HUNG }];
    const history = [
      held("2026-11-23T04:00:00Z"),
      missed("2026-11-23T03:00:00Z"),
      held("2026-11-23T02:00:00Z"),
      created("2026-11-23T01:00:00Z", HUNG),
      created("2026-11-23T00:00:00Z", "nightly-1794996400"),
    ];
    // Held, or Missed after it was held behind the same Job: 3 in a row; the run that created the Job ends it.
    assert.equal(await blocked({ active, recentRuns: history }), 3);
    assert.equal(await blocked({ active, recentRuns: history.slice(1) }), 2);
    assert.equal(await blocked({ active, recentRuns: history.slice(3) }), 0);
    // The Job ended (no longer active), or another one is the one running: nothing holds the runs now.
    assert.equal(await blocked({ active: [], recentRuns: history }), 0);
    assert.equal(await blocked({ active: [{ name: "other" }], recentRuns: history }), 0);
    assert.equal(await blocked({ recentRuns: history }), 0);
    // Behind another Job before: not the same block.
    assert.equal(
      await blocked({
        active,
        recentRuns: [held("2026-11-23T04:00:00Z"), held("2026-11-23T03:00:00Z", "nightly-1794000000")],
      }),
      1,
    );
    // A Missed slot that was never held is not blocked, and stops the count.
    const { blockedBy: _b, ...plainMiss } = missed("2026-11-23T03:00:00Z");
    assert.equal(await blocked({ active, recentRuns: [held("2026-11-23T04:00:00Z"), plainMiss, ...history] }), 1);
    assert.equal(await blocked({ active, recentRuns: [plainMiss, ...history] }), 0);
    // No record (an object written before the field existed), or null: 0.
    assert.equal(await blocked({ active }), 0);
    assert.equal(await blocked({ active, recentRuns: null }), 0);
  });

  it("reads the cache at every scrape: a deleted CronJob's gauge series disappear, a changed value follows", async () => {
    const other: CronJobView = { metadata: { namespace: "team-b", name: "hourly" }, spec: { schedule: "@hourly" } };
    const { cache, scrape } = setup([full, other]);
    assert.ok((await scrape()).some((l) => l.includes('cronjob="nightly"')));
    cache.splice(0, 1, {
      ...full,
      spec: { ...full.spec, suspend: true },
      status: { ...full.status, active: [], nextScheduleTime: undefined },
    });
    let lines = await scrape();
    assert.ok(lines.includes('cronjob_suspended{namespace="team-a",cronjob="nightly"} 1'));
    assert.ok(lines.includes('cronjob_active_jobs{namespace="team-a",cronjob="nightly"} 0'));
    assert.ok(!lines.some((l) => l.startsWith("cronjob_next_schedule_time_seconds")));
    cache.splice(0, 1);
    lines = await scrape();
    assert.deepEqual(
      lines.filter((l) => l.includes('cronjob="nightly"')),
      [],
      "series of the deleted CronJob remain",
    );
    assert.ok(lines.includes('cronjob_suspended{namespace="team-b",cronjob="hourly"} 0'));
  });

  it("counts runs by outcome; forget() drops every series of the CronJob", async () => {
    const { cache, metrics, scrape } = setup([full]);
    metrics.countRun("team-a", "nightly", "created");
    metrics.countRun("team-a", "nightly", "created");
    metrics.countRun("team-a", "nightly", "missed_deadline");
    let lines = await scrape();
    assert.ok(lines.includes('cronjob_runs_total{namespace="team-a",cronjob="nightly",outcome="created"} 2'));
    assert.ok(lines.includes('cronjob_runs_total{namespace="team-a",cronjob="nightly",outcome="missed_deadline"} 1'));
    assert.ok(lines.includes('cronjob_runs_total{namespace="team-a",cronjob="nightly",outcome="failed"} 0'));

    // The reconciler forgets a CronJob it finds deleted.
    cache.splice(0, 1);
    metrics.forget("team-a", "nightly");
    metrics.forget("team-a", "nightly"); // twice is harmless
    lines = await scrape();
    assert.deepEqual(
      lines.filter((l) => l.includes("nightly")),
      [],
    );
    // Recreated with the same name: its counters start again from 0.
    cache.push(full);
    metrics.countRun("team-a", "nightly", "succeeded");
    lines = await scrape();
    assert.ok(lines.includes('cronjob_runs_total{namespace="team-a",cronjob="nightly",outcome="succeeded"} 1'));
    assert.ok(lines.includes('cronjob_runs_total{namespace="team-a",cronjob="nightly",outcome="created"} 0'));
  });

  it("drops the counter series of a CronJob that left the cache without a forget()", async () => {
    const { cache, metrics, scrape } = setup([full]);
    metrics.countRun("team-a", "nightly", "failed");
    cache.splice(0, 1);
    assert.deepEqual(
      (await scrape()).filter((l) => l.includes("nightly")),
      [],
    );
  });

  it("a CronJob re-created under its name between two scrapes, with no forget(): its own runs count, the old ones not", async () => {
    const { cache, metrics, scrape } = setup([{ ...full, metadata: { ...full.metadata, uid: "uid-1" } }]);
    metrics.countRun("team-a", "nightly", "created", "uid-1");
    metrics.countRun("team-a", "nightly", "created", "uid-1");
    cache.splice(0, 1, { ...full, metadata: { ...full.metadata, uid: "uid-2" } });
    metrics.countRun("team-a", "nightly", "created", "uid-2");
    const lines = await scrape();
    assert.ok(lines.includes('cronjob_runs_total{namespace="team-a",cronjob="nightly",outcome="created"} 1'));
  });

  it("bounds spec values used as labels to 128 characters", async () => {
    const long = `0 0 1 ${"1,".repeat(200)}2 *`;
    const { scrape } = setup([{ metadata: { namespace: "ns", name: "long" }, spec: { schedule: long } }]);
    const line = (await scrape()).find((l) => l.startsWith("cronjob_info{"))!;
    const schedule = /schedule="([^"]*)"/.exec(line)![1]!;
    assert.equal(schedule.length, MAX_LABEL_VALUE_LENGTH);
    assert.ok(long.startsWith(schedule));
  });

  it("exports nothing per CronJob while not the leader", async () => {
    const { scrape, setLeader } = setup([full]);
    setLeader(false);
    assert.deepEqual(await scrape(), []);
    setLeader(true);
    assert.ok((await scrape()).length > 0);
  });

  it("registers exactly the documented metric names; a second instance replaces the first", async () => {
    const { registry, metrics } = setup();
    const names = () =>
      registry
        .getMetricsAsArray()
        .map((m) => (m as unknown as { name: string }).name)
        .sort();
    assert.deepEqual(names(), [...GAUGES, "cronjob_runs_total"].sort());
    const again = new CronJobMetrics({ list: () => [full], registry });
    assert.deepEqual(names(), [...GAUGES, "cronjob_runs_total"].sort());
    metrics.unregister(); // no longer registered: leaves the second instance's metrics alone
    assert.equal(names().length, GAUGES.length + 1);
    again.unregister();
    assert.deepEqual(names(), []);
  });

  it("the stop-after-failures and missed-run-policy series exist only for CronJobs that use them", async () => {
    const uses: CronJobView = {
      metadata: { namespace: "ns", name: "uses" },
      spec: { schedule: "@hourly", missedRunPolicy: "Skip", stopAfterConsecutiveFailures: 3 },
      status: { consecutiveFailures: 2 },
    };
    const stopped: CronJobView = {
      metadata: { namespace: "ns", name: "stopped" },
      spec: { schedule: "@hourly", stopAfterConsecutiveFailures: 1 },
      status: { consecutiveFailures: 1, stopped: { time: "2026-11-23T10:00:00Z", failures: 1, generation: 1 } },
    };
    const plain: CronJobView = { metadata: { namespace: "ns", name: "plain" }, spec: { schedule: "@hourly" } };
    const { scrape } = setup([uses, stopped, plain]);
    const lines = await scrape();
    for (const want of [
      'cronjob_consecutive_failures{namespace="ns",cronjob="uses"} 2',
      'cronjob_stopped{namespace="ns",cronjob="uses"} 0',
      'cronjob_stopped{namespace="ns",cronjob="stopped"} 1',
      'cronjob_runs_total{namespace="ns",cronjob="uses",outcome="missed_policy"} 0',
    ]) {
      assert.ok(lines.includes(want), `missing ${want} in:\n${lines.join("\n")}`);
    }
    assert.deepEqual(
      lines.filter((l) => /cronjob="plain"/.test(l) && /consecutive|stopped|missed_policy/.test(l)),
      [],
    );
    assert.ok(!lines.some((l) => /cronjob="stopped".*missed_policy/.test(l)));
  });

  it("--per-cronjob-metrics=false: the no-op counts nothing", () => {
    noCronJobMetrics.countRun("ns", "x", "created");
    noCronJobMetrics.forget("ns", "x");
  });
});
