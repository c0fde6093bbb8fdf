// `kubectl cron next`, `history`, `list`, `why -A` and the dashboard's rows on what issue 71 adds to a CronJob: its
// window (spec.startTime, spec.endTime), its run limit (spec.maxRuns), its jitter (spec.jitter) and its upstreams
// (spec.after, with or without a schedule of its own). The answers on facts built by hand; the commands through the
// plugin's entry point against the fake API server, a CronJob with no schedule of its own among them.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  AFTER_ANNOTATION,
  afterJobName,
  API_VERSION,
  type CronJob,
  JITTER_OFFSET_ANNOTATION,
  type Job,
  jitterOffsetSeconds,
  KIND,
  offsetText,
  type RecentRun,
} from "../../api/v1/index.ts";
import { joinJobName } from "../../api/v1/join.ts";
import { historyAnswer, nextAnswer, nextNeedsJobs } from "../../cmd/kubectl-cron/answer/answers.ts";
import { historyRows } from "../../cmd/kubectl-cron/answer/history.ts";
import { marksOf, rowOf } from "../../cmd/kubectl-cron/dashboard/marks.ts";
import type { KubeObject } from "../../runtime/kinds.ts";
import { batchJob } from "../fixtures.ts";
import { pluginCluster } from "../plugin-cluster.ts";

/** Wednesday 2026-11-25, 11:12 UTC. */
const NOW = new Date("2026-11-25T11:12:00Z");
const NS = "prod";

function cronJob(name: string, spec: Record<string, unknown>, status: Record<string, unknown> = {}): CronJob {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name, namespace: NS, uid: `uid-${name}`, creationTimestamp: "2026-11-01T00:00:00Z" },
    spec: {
      jobTemplate: {
        spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "c" }] } } },
      },
      ...spec,
    },
    status,
  } as unknown as CronJob;
}

const next = (cj: CronJob, count?: number) => nextAnswer({ cronJob: cj, namespace: NS, now: NOW }, count);
const lines = (text: string) => text.split("\n").filter((l) => l !== "");

describe("kubectl cron next: @every counts from the last run the controller sees", () => {
  // status.lastScheduleTime lags (a burst's writes wait up to 5 minutes); the controller also reads the Jobs.
  const every = cronJob("every", { schedule: "@every 7m" }, { lastScheduleTime: "2026-11-25T10:00:00Z" });
  const slotJob = (slot: string, uid = "uid-every") =>
    batchJob({ name: `every-${Date.parse(slot) / 1000}`, namespace: NS, owner: { name: "every", uid }, slot });
  const utc = (out: ReturnType<typeof next>) => (out.json as { times: { utc: string }[] }).times.map((t) => t.utc);

  it("from the newest slot of its Jobs when status is behind, as the controller counts", () => {
    const out = nextAnswer({ cronJob: every, namespace: NS, now: NOW, jobs: [slotJob("2026-11-25T11:06:00Z")] }, 2);
    assert.deepEqual(utc(out), ["2026-11-25T11:13:00Z", "2026-11-25T11:20:00Z"]);
    // With no status.lastScheduleTime at all, the Jobs still count (not the creation time, which gives 11:18).
    const fresh = cronJob("every", { schedule: "@every 7m" });
    const first = nextAnswer({ cronJob: fresh, namespace: NS, now: NOW, jobs: [slotJob("2026-11-25T11:06:00Z")] }, 1);
    assert.deepEqual(utc(first), ["2026-11-25T11:13:00Z"]);
  });

  it("from status when it is newer, or when the Jobs are another CronJob's of the same name", () => {
    assert.deepEqual(utc(next(every, 2)), ["2026-11-25T11:17:00Z", "2026-11-25T11:24:00Z"]);
    const older = nextAnswer({ cronJob: every, namespace: NS, now: NOW, jobs: [slotJob("2026-11-25T09:53:00Z")] }, 1);
    assert.deepEqual(utc(older), ["2026-11-25T11:17:00Z"]);
    const foreign = nextAnswer(
      { cronJob: every, namespace: NS, now: NOW, jobs: [slotJob("2026-11-25T11:06:00Z", "uid-deleted")] },
      1,
    );
    assert.deepEqual(utc(foreign), ["2026-11-25T11:17:00Z"]);
  });

  it("reads the Jobs only for one @every schedule", () => {
    assert.equal(nextNeedsJobs(every, NS), true);
    assert.equal(nextNeedsJobs(cronJob("cron", { schedule: "*/7 * * * *" }), NS), false);
  });
});

describe("kubectl cron next: limits, jitter, upstreams", () => {
  it("spec.jitter: each slot with the time its run really starts (slot + offset) beside it", () => {
    const cj = cronJob("spread", { schedule: "0 * * * *", jitter: "10m" });
    const out = next(cj, 3);
    const [head, ...rows] = lines(out.text);
    assert.match(head!, /^NEXT \(UTC\)\s+UTC\s+STARTS\s+NOTE/);
    const slots = ["2026-11-25T12:00:00Z", "2026-11-25T13:00:00Z", "2026-11-25T14:00:00Z"];
    rows.forEach((row, i) => {
      const offset = jitterOffsetSeconds({ namespace: NS, name: "spread" }, new Date(slots[i]!), 600);
      const start = new Date(Date.parse(slots[i]!) + offset * 1000).toISOString().replace(".000Z", "Z");
      assert.ok(row.startsWith(`${slots[i]}   ${slots[i]}   ${start} (+${offsetText(offset)})`), row);
    });
    const json = out.json as { times: { utc: string; startsAt: string }[] };
    assert.equal(json.times[0]!.utc, slots[0]);
    assert.notEqual(json.times[0]!.startsAt, undefined);
  });

  it("spec.endTime: the slots up to it, then 'no run after …'; past it, none", () => {
    const cj = cronJob("until", { schedule: "0 * * * *", endTime: "2026-11-25T13:00:00Z" });
    const out = next(cj);
    assert.deepEqual(lines(out.text)[0], "no run after 2026-11-25T13:00:00Z (spec.endTime)");
    assert.equal(lines(out.text).length, 4, out.text);
    const past = next(cronJob("until", { schedule: "0 * * * *", endTime: "2026-11-25T09:00:00Z" }));
    assert.deepEqual(lines(past.text), ["no run after 2026-11-25T09:00:00Z (spec.endTime)"]);
    assert.deepEqual((past.json as { times: unknown[] }).times, []);
  });

  it("spec.maxRuns: the runs left, and once made 'ended: 3 of 3 runs made'", () => {
    const left = next(cronJob("thrice", { schedule: "0 * * * *", maxRuns: 3 }, { scheduledRuns: 1 }));
    assert.equal(lines(left.text)[0], "2 of 3 runs left (spec.maxRuns): none after them");
    assert.equal((left.json as { times: unknown[] }).times.length, 2);
    // As many asked as are left: still said (none after them).
    const asked = next(cronJob("thrice", { schedule: "0 * * * *", maxRuns: 3 }, { scheduledRuns: 1 }), 2);
    assert.equal(lines(asked.text)[0], "2 of 3 runs left (spec.maxRuns): none after them");
    const done = next(cronJob("thrice", { schedule: "0 * * * *", maxRuns: 3 }, { scheduledRuns: 3 }));
    assert.deepEqual(lines(done.text), [
      "ended: 3 of 3 runs made (spec.maxRuns); run-now and backfill requests still run",
    ]);
  });

  it("before spec.startTime: 'not started', and the first slot is the window's first", () => {
    const out = next(cronJob("later", { schedule: "0 6 * * *", startTime: "2026-12-01T00:00:00Z" }), 2);
    const [note, , first] = lines(out.text);
    assert.equal(note, "not started: starts 2026-12-01T00:00:00Z (spec.startTime)");
    assert.ok(first!.startsWith("2026-12-01T06:00:00Z"), first);
  });

  it("spec.after: the edge, no schedule of its own, and a run after an upstream the record holds", () => {
    const held: RecentRun = {
      trigger: "After",
      scheduledTime: "2026-11-25T10:40:00Z",
      request: "extract/extract-1795600800",
      decision: "Held",
      reason: "ConcurrencyPolicyForbid",
      blockedBy: "load-a1",
      decidedAt: "2026-11-25T10:40:01Z",
    } as RecentRun;
    const out = next(cronJob("load", { after: [{ cronJob: "extract" }] }, { recentRuns: [held] }));
    const said = lines(out.text);
    assert.equal(said[0], "runs after extract's successful runs");
    assert.equal(said[1], "no schedule of its own: it runs only after its upstreams (spec.after)");
    assert.match(said[2]!, /^after: run after extract\/extract-1795600800 of 2026-11-25T10:40:00Z waits: /);
    assert.equal(said.length, 3, out.text);
    // With a schedule too: its slots, and the edge.
    const both = next(cronJob("load", { schedule: "0 * * * *", after: [{ cronJob: "extract", when: "Failed" }] }), 1);
    assert.equal(lines(both.text)[0], "runs after extract's failed runs");
    assert.equal(lines(both.text).length, 3, both.text);
  });
});

describe("kubectl cron history: the upstream run each run followed, a jittered run's offset", () => {
  it("names 'after extract/<job>' and the slot with its offset", () => {
    const load = cronJob("load", { schedule: "0 * * * *", jitter: "5m", after: [{ cronJob: "extract" }] });
    /** A Job of load for `slot`, with `annotations`, Complete from `start` to `end`. */
    const complete = (name: string, slot: string, annotations: Record<string, string>, start: string, end: string) =>
      batchJob({
        name,
        namespace: NS,
        owner: { name: "load", uid: "uid-load" },
        slot,
        annotations,
        state: "complete",
        start,
        end,
      });
    const after = complete(
      afterJobName("load", "extract", "extract-1795600800"),
      "2026-11-25T10:40:00Z",
      { [AFTER_ANNOTATION]: "extract/extract-1795600800" },
      "2026-11-25T10:40:02Z",
      "2026-11-25T10:41:00Z",
    );
    const jittered = complete(
      "load-1795604400",
      "2026-11-25T11:00:00Z",
      { [JITTER_OFFSET_ANNOTATION]: "1m5s" },
      "2026-11-25T11:01:06Z",
      "2026-11-25T11:02:00Z",
    );
    const out = historyAnswer({ cronJob: load, namespace: NS, now: NOW, jobs: [after, jittered] });
    const [, first, second] = lines(out.text);
    assert.match(first!, /^load-a\w{8}\s+after extract\/extract-1795600800\s+2026-11-25T10:40:00Z\s+Complete/);
    assert.match(second!, /^load-1795604400\s+scheduled\s+2026-11-25T11:00:00Z \+1m5s\s+Complete/);
    const items = (out.json as { items: { after?: unknown; jitterOffsetSeconds?: number; attempt?: string }[] }).items;
    assert.deepEqual(items[0]!.after, { cronJob: "extract", job: "extract-1795600800" });
    assert.equal(items[0]!.attempt, undefined, "not said as a retry's attempt");
    assert.equal(items[1]!.jitterOffsetSeconds, 65);
  });
});

describe("the dashboard's rows: window, end and upstreams", () => {
  it("says the window, the end and the edge on the row; a CronJob with no schedule draws no slot", () => {
    const windowed = rowOf(
      cronJob("dec", { schedule: "0 6 * * *", startTime: "2026-12-01T00:00:00Z", endTime: "2026-12-31T00:00:00Z" }),
      [],
      NOW,
    );
    assert.deepEqual(windowed.shaping, {
      window: "runs from 2026-12-01T00:00:00Z to 2026-12-31T00:00:00Z (spec.startTime, spec.endTime)",
    });
    const ended = rowOf(cronJob("m", { schedule: "0 * * * *", maxRuns: 2 }, { scheduledRuns: 2 }), [], NOW);
    assert.equal(
      ended.shaping?.ended,
      "ended: 2 of 2 runs made (spec.maxRuns); run-now and backfill requests still run",
    );
    const load = cronJob("load", { after: [{ cronJob: "extract" }] });
    const row = rowOf(load, [], NOW);
    assert.deepEqual(row.shaping, { after: ["runs after extract's successful runs"] });
    assert.equal(row.schedule, "no schedule of its own: it runs only after its upstreams (spec.after)");
    const marks = marksOf({
      cronJob: load,
      jobs: [],
      calendars: [],
      from: NOW,
      to: new Date(NOW.getTime() + 86_400_000),
      now: NOW,
    });
    assert.deepEqual(marks.marks, []);
    // Past spec.endTime: no slot drawn after it.
    const until = cronJob("until", { schedule: "0 * * * *", endTime: "2026-11-25T13:00:00Z" });
    const m = marksOf({
      cronJob: until,
      jobs: [],
      calendars: [],
      from: NOW,
      to: new Date("2026-11-26T00:00:00Z"),
      now: NOW,
    });
    const slots = m.marks.filter((x) => x.kind === "slot").map((x) => x.at);
    assert.deepEqual(slots, ["2026-11-25T12:00:00Z", "2026-11-25T13:00:00Z"]);
  });
});

describe("a CronJob with no schedule of its own (spec.after only): every command answers", () => {
  const { cluster, run } = pluginCluster(NS, NOW);
  const load = () => cronJob("load", { after: [{ cronJob: "extract" }] }) as unknown as KubeObject;
  const extract = () => cronJob("extract", { schedule: "0 10 * * *" }) as unknown as KubeObject;
  const extractJob = (): Job => {
    const j = batchJob({
      name: "extract-1795600800",
      namespace: NS,
      uid: "uid-extract-job",
      owner: { name: "extract", uid: "uid-extract" },
      slot: "2026-11-25T10:00:00Z",
      state: "failed",
      start: "2026-11-25T10:00:04Z",
      end: "2026-11-25T10:30:00Z",
      failure: { reason: "BackoffLimitExceeded" },
    });
    return j;
  };

  it("next, history, list, why NAME and why -A", async () => {
    const server = await cluster([load(), extract(), extractJob() as unknown as KubeObject]);
    const n = await run(server, ["next", "load"]);
    assert.equal(n.code, 0, n.err);
    assert.equal(
      n.out,
      "runs after extract's successful runs\nno schedule of its own: it runs only after its upstreams (spec.after)\n",
    );
    const nj = await run(server, ["next", "load", "-o", "json"]);
    assert.equal(nj.code, 0, nj.err);
    assert.deepEqual(JSON.parse(nj.out).times, []);
    const h = await run(server, ["history", "load"]);
    assert.equal(h.code, 0, h.err);
    const l = await run(server, ["list"]);
    assert.equal(l.code, 0, l.err);
    assert.match(l.out, /\bload\s+after extract\s+-\s/, l.out);
    assert.doesNotMatch(l.out, /undefined/);
    const w = await run(server, ["why", "load"]);
    assert.equal(w.code, 0, w.err + w.out);
    assert.match(w.out, /^prod\/load: extract's 2026-11-25 10:00 UTC run failed; load runs after a success\n/);
    assert.doesNotMatch(w.out, /275760|Next:/, "no slot of the far future");
    const all = await run(server, ["why", "-A"]);
    // extract's failed run needs attention; load, waiting for a success, does not.
    assert.equal(all.code, 1, all.err + all.out);
    assert.match(all.out, /prod\/extract\tjob-failed/);
    assert.doesNotMatch(all.out, /prod\/load|275760/);
  });
});

describe("after all (spec.afterPolicy All): next, history, the dashboard and why say the join", () => {
  const { cluster, run } = pluginCluster(NS, NOW);
  const report = (status: Record<string, unknown> = {}) =>
    cronJob(
      "report",
      { after: [{ cronJob: "eu" }, { cronJob: "us" }], afterPolicy: "All" },
      {
        upstreams: [
          { cronJob: "eu", lastEnded: "2026-11-25T09:00:00Z" },
          { cronJob: "us", lastEnded: "2026-11-25T09:00:00Z" },
        ],
        ...status,
      },
    ) as unknown as KubeObject;
  const upstream = (name: string) => cronJob(name, { schedule: "0 10 * * *" }) as unknown as KubeObject;
  const ran = (owner: string, end: string, state: "complete" | "active" = "complete") =>
    batchJob({
      name: `${owner}-1795600800`,
      namespace: NS,
      uid: `uid-${owner}-job`,
      owner: { name: owner, uid: `uid-${owner}` },
      slot: "2026-11-25T10:00:00Z",
      state,
      start: "2026-11-25T10:00:04Z",
      ...(state === "complete" ? { end } : {}),
    }) as unknown as KubeObject;

  it("next and the dashboard say one edge, the join; list and history answer", async () => {
    const out = next(report() as unknown as CronJob);
    assert.equal(
      lines(out.text)[0],
      "runs once all of eu (a success), us (a success) have ended a run since its last such run (spec.afterPolicy All)",
    );
    assert.deepEqual(rowOf(report() as unknown as CronJob, [], NOW).shaping, {
      after: [
        "runs once all of eu (a success), us (a success) have ended a run since its last such run (spec.afterPolicy All)",
      ],
    });
    const runs = [
      { upstream: "eu", job: "eu-1795600800" },
      { upstream: "us", job: "us-1795600800" },
    ];
    const joinJob = batchJob({
      name: joinJobName("report", runs),
      namespace: NS,
      owner: { name: "report", uid: "uid-report" },
      slot: "2026-11-25T10:50:00Z",
      annotations: { [AFTER_ANNOTATION]: "all:eu/eu-1795600800+us/us-1795600800" },
      state: "complete",
      start: "2026-11-25T10:50:02Z",
      end: "2026-11-25T10:51:00Z",
    });
    const h = historyAnswer({ cronJob: report() as unknown as CronJob, namespace: NS, now: NOW, jobs: [joinJob] });
    assert.match(
      lines(h.text)[1]!,
      /^report-j\w{8}\s+after all of eu\/eu-1795600800, us\/us-1795600800\s+2026-11-25T10:50:00Z\s+Complete/,
    );
    // -o json says the joined runs in a field of their own, not in a retry's attempt fields.
    const [row] = historyRows([joinJob], "uid-report", NOW);
    assert.deepEqual(row!.afterAll, [
      { cronJob: "eu", job: "eu-1795600800" },
      { cronJob: "us", job: "us-1795600800" },
    ]);
    assert.equal(row!.attempt, undefined);
    assert.equal(row!.retryOf, undefined);
    assert.equal(row!.after, undefined);
  });

  it("why: waiting for the upstream that has not ended a run, then the join's run", async () => {
    const waiting = await cluster([
      report(),
      upstream("eu"),
      upstream("us"),
      ran("eu", "2026-11-25T10:40:00Z"),
      ran("us", "", "active"),
    ]);
    const w = await run(waiting, ["why", "report"]);
    assert.equal(w.code, 0, w.err + w.out);
    assert.match(
      w.out,
      /^prod\/report: waiting for us's 2026-11-25 10:00 UTC run \(running since 2026-11-25T10:00:04Z\)\n/,
    );
    assert.match(w.out, /eu: a run ended as spec\.after asks, not joined yet \(Job eu-1795600800\)/);
    const complete = await cluster([
      report(),
      upstream("eu"),
      upstream("us"),
      ran("eu", "2026-11-25T10:40:00Z"),
      ran("us", "2026-11-25T10:50:00Z"),
    ]);
    const c = await run(complete, ["why", "report"]);
    // Complete, its Job not made yet: the join's slot is the end that completed it.
    assert.match(
      c.out,
      /^prod\/report: .*2026-11-25 10:50 UTC, after us's 2026-11-25 10:00 UTC run \(Job us-1795600800\)/,
    );
    assert.match(c.out, /spec\.afterPolicy: All: joins eu's Job eu-1795600800, us's Job us-1795600800/);
    // The Job it waits for is the join's, named from the runs it joins, not a schedule's Job of its slot.
    const joinJob = joinJobName("report", [
      { upstream: "eu", job: "eu-1795600800" },
      { upstream: "us", job: "us-1795600800" },
    ]);
    assert.match(c.out, new RegExp(`no Job ${joinJob}\\b`), c.out);
    assert.doesNotMatch(c.out, /no Job report-\d/, c.out);
  });
});
