// End to end, the scheduling policies of issue 22 with Pods that really run on the local node: stop after
// repeated failures (and resume: the cause fixed, then `kubectl cron resume`), and `kubectl cron backfill` of a past
// range (dry run, each slot once, across a leader's death, a repeated request skipping every slot). Needs root
// (the node); `make test-e2e`.
import assert from "node:assert/strict";
import { it } from "node:test";
import { eventually } from "../eventually.ts";
import { conditionTrue, sleep } from "./cluster-tools.ts";
import { LEADER_KILLED } from "./disruptions.ts";
import { leaderDeath, settled } from "./leader-death.ts";
import { CRONJOBS, SCHEDULED_AT, e2eDescribe, e2eSuite } from "./suite.ts";

const NS = "policies";
const POLL_MS = 1000;
/** The backfill is requested this long before the shared leader death (its five Jobs take 30 s or more). */
const BACKFILL_LEAD_MS = 10_000;

e2eDescribe("end to end: stop after failures, with Pods on a real node", { timeout: 1_500_000 }, () => {
  const suite = e2eSuite({ namespace: NS, pollMs: POLL_MS, logLines: 60 });
  const { kubectl, getJSON, cronJob, admit, jobsOf, plugin, waitForEvent } = suite;
  const get = (name: string) => getJSON(["get", CRONJOBS, name, "-n", NS]);

  it("stops after 2 failed runs in a row, says so, starts nothing more; the cause fixed, kubectl cron resume starts it again", async () => {
    // The Pods fail until the ConfigMap they read says ok: the cause is fixed without a spec change (which would
    // resume by itself), and before the resume, so no run of the failing kind starts after it. Forbid: no run is
    // still going when the second failure stops it (the reconciler's table has that case).
    await kubectl(["create", "configmap", "flaky-mode", "-n", NS, "--from-literal=mode=fail"]);
    const manifest = cronJob(
      "flaky",
      {
        schedule: "@every 15s",
        concurrencyPolicy: "Forbid",
        stopAfterConsecutiveFailures: 2,
        failedJobsHistoryLimit: 5,
      },
      'if [ "$MODE" = ok ]; then echo fixed; else echo failing; exit 1; fi',
    );
    const podSpec = (manifest.spec as any).jobTemplate.spec.template.spec;
    podSpec.containers[0].env = [{ name: "MODE", valueFrom: { configMapKeyRef: { name: "flaky-mode", key: "mode" } } }];
    await admit(manifest);
    const stopped = await eventually(
      "the CronJob stopped after 2 failures",
      async () => {
        const cj = await get("flaky");
        return cj.status?.stopped ? cj : undefined;
      },
      150_000,
      undefined,
      POLL_MS,
    );
    assert.equal(stopped.status!.stopped.failures, 2);
    assert.equal(stopped.status!.consecutiveFailures, 2);
    const available = (stopped.status!.conditions as { type: string; reason: string }[]).find(
      (c) => c.type === "Available",
    );
    assert.equal(available?.reason, "StoppedAfterFailures");
    const failedPods = (await jobsOf("flaky")).filter((j) => conditionTrue(j, "Failed"));
    assert.equal(failedPods.length, 2, "two Jobs whose Pods really failed");
    await waitForEvent(NS, "flaky", /^StoppedAfterFailures: Stopped scheduling after 2 failed runs/);
    // Nothing new for well over a period.
    const before = (await jobsOf("flaky")).length;
    await new Promise((r) => setTimeout(r, 35_000));
    assert.equal((await jobsOf("flaky")).length, before, "no Job while stopped");
    const listed = await plugin(["list"]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /flaky .*after 2 failures/);

    // The cause fixed, then kubectl cron resume: the operator clears the stop and counts from 0; the newest slot
    // missed while stopped runs at once (RunLatest), succeeds, and keeps the count at 0.
    await kubectl(["patch", "configmap", "flaky-mode", "-n", NS, "-p", JSON.stringify({ data: { mode: "ok" } })]);
    const resumed = await plugin(["resume", "flaky"]);
    assert.equal(resumed.code, 0, resumed.stderr);
    await eventually(
      "the stop cleared by the resume request",
      async () => {
        const cj = await get("flaky");
        return !cj.status?.stopped && cj.status?.lastResumeRequest && cj.status?.resumed?.time ? true : undefined;
      },
      60_000,
      undefined,
      POLL_MS,
    );
    await waitForEvent(NS, "flaky", /^Resumed: Scheduling resumed by the resume request/);
    const ok = await eventually(
      "a successful run after the fix",
      async () => {
        const cj = await get("flaky");
        return cj.status?.lastSuccessfulTime && !cj.status?.stopped ? cj : undefined;
      },
      120_000,
      undefined,
      POLL_MS,
    );
    assert.equal(ok.status!.consecutiveFailures, 0);
    await kubectl(["delete", CRONJOBS, "flaky", "-n", NS]);
  });
});

// Disruptive: the leader is SIGKILLed midway (the leader death HA's and the fleets' suites share, leader-death.ts),
// so it runs after the concurrent suites, with them (run.ts).
e2eDescribe(
  "end to end: backfill across the leader's death, with Pods on a real node",
  { timeout: 1_500_000, disruptive: LEADER_KILLED },
  () => {
    const suite = e2eSuite({ namespace: `${NS}-backfill`, pollMs: POLL_MS, logLines: 60 });
    const { kubectl, getJSON, cronJob, admit, jobsOf, plugin } = suite;
    const NS_B = suite.namespace;
    const get = (name: string) => getJSON(["get", CRONJOBS, name, "-n", NS_B]);

    it("backfills a past range: dry run, each slot's Pod runs once (the leader killed midway), a repeat skips them all", async () => {
      await settled(suite);
      const death = leaderDeath(suite);
      // Suspended: only the backfill runs Jobs. Slots every minute; the range is the 5 minutes before now.
      await admit(
        cronJob(
          "report",
          { schedule: "* * * * *", suspend: true, successfulJobsHistoryLimit: 20 },
          "echo report; sleep 4",
        ),
      );
      const now = Date.now();
      const to = new Date(Math.floor(now / 60_000) * 60_000 - 1000); // just before the current minute
      const from = new Date(to.getTime() - 5 * 60_000 + 1000);
      const range = [`--from=${from.toISOString()}`, `--to=${to.toISOString()}`];
      const slots = Array.from({ length: 5 }, (_, i) => new Date(from.getTime() + i * 60_000)); // from is on a minute
      const want = slots.map((s) => s.toISOString().replace(".000Z", "Z"));

      const dry = await plugin(["backfill", "report", ...range, "--dry-run"]);
      assert.equal(dry.code, 0, dry.stderr);
      for (const s of want) assert.match(dry.stdout, new RegExp(`${s} +report-\\d+ +run`));
      assert.equal((await jobsOf("report")).length, 0, "a dry run changes nothing");

      // Requested shortly before the leader dies: one slot at a time, each Job about 6 s (its Pod sleeps 4 s), so the
      // leader dies with the backfill under way and the other replica takes over from status.backfill.
      await sleep(Math.max(0, death.killAt - BACKFILL_LEAD_MS - Date.now()));
      const req = await plugin(["backfill", "report", ...range, "--parallelism=1"]);
      assert.equal(req.code, 0, req.stderr);
      assert.match(req.stdout, /requested: 5 slots/);
      const kill = await death.kill;

      const done = await eventually(
        "the backfill complete and every Job finished",
        async () => {
          const cj = await get("report");
          const jobs = await jobsOf("report");
          return cj.status?.backfill?.phase === "Complete" &&
            jobs.length === 5 &&
            jobs.every((j) => conditionTrue(j, "Complete"))
            ? { cj, jobs }
            : undefined;
        },
        240_000,
        undefined,
        POLL_MS,
      );
      assert.deepEqual(
        done.jobs.map((j) => j.metadata.annotations?.[SCHEDULED_AT]).sort(),
        want,
        "each slot exactly once",
      );
      // Midway: the successor made the rest (creationTimestamp has whole seconds).
      const createdAt = done.jobs.map((j) => Date.parse(String(j.metadata.creationTimestamp))).sort((a, b) => a - b);
      assert.ok(
        createdAt.at(-1)! >= Math.floor(kill.at / 1000) * 1000,
        `the backfill was under way when the leader died at ${new Date(kill.at).toISOString()}: Jobs created at ${createdAt.map((t) => new Date(t).toISOString()).join(", ")}`,
      );
      assert.deepEqual(
        {
          created: done.cj.status!.backfill.created,
          skipped: done.cj.status!.backfill.skipped,
          total: done.cj.status!.backfill.total,
        },
        { created: 5, skipped: 0, total: 5 },
      );
      const history = await plugin(["history", "report"]);
      assert.equal(history.code, 0, history.stderr);
      assert.equal(
        history.stdout.split("\n").filter((l) => / backfill +\S+ +Complete /.test(l)).length,
        5,
        history.stdout,
      );
      const logs = await kubectl(["logs", "-n", NS_B, `job/${done.jobs[0]!.metadata.name}`]);
      assert.match(logs, /report/, "its Pod really ran");

      // The same range again: every slot has its Job, none runs twice.
      const again = await plugin(["backfill", "report", ...range]);
      assert.equal(again.code, 0, again.stderr);
      const repeat = await eventually(
        "the repeated backfill complete",
        async () => {
          const cj = await get("report");
          return cj.status?.backfill?.phase === "Complete" && cj.status.backfill.id !== done.cj.status!.backfill.id
            ? cj
            : undefined;
        },
        90_000,
        undefined,
        POLL_MS,
      );
      assert.deepEqual([repeat.status!.backfill.created, repeat.status!.backfill.skipped], [0, 5]);
      assert.equal((await jobsOf("report")).length, 5);
    });
  },
);
