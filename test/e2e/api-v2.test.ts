// End to end, API v2 on the real node: the operator deployed from its image (config/default: both versions
// served, the conversion webhook on both replicas, its caBundle injected by the manager), a v2 CronJob with two
// schedules, each in its own time zone, runs exactly the union of their slots, once each, with real Pods, across
// the leader's death; each Job names the schedule(s) its slot came from; kubectl reads it in both versions and
// `kubectl cron` shows the union. The CronJob is made with the concurrent suites; its slots are checked with the
// disruptive ones, after the HA suite's kills and rollout (run.ts), or, in a file run alone, after a leader kill of
// its own. Needs root (the node); `make test-e2e`.
import assert from "node:assert/strict";
import { after, it } from "node:test";
import { eventually } from "../eventually.ts";
import { type K8sObject, conditionTrue, sleep } from "./cluster-tools.ts";
import { API_V2, SCHEDULED_AT, e2eDescribe, e2eSuite } from "./suite.ts";

const NS = "api-v2";
const V1 = "cronjobs.v1.batch.tutorial.kubebuilder.io";
const V2 = "cronjobs.v2.batch.tutorial.kubebuilder.io";
const SOURCES = "batch.tutorial.kubebuilder.io/schedule-sources";
const MORE = "batch.tutorial.kubebuilder.io/more-schedules";
const POLL_MS = 1000;

// Asia/Kathmandu is UTC+05:45 all year: its even local minutes are the odd UTC minutes. "*/3" in UTC fires at
// the multiples of 3. So the union is every UTC minute that is odd or a multiple of 3, and a minute that is
// both (3, 9, 15, … mod 60, i.e. ≡ 3 mod 6) is one slot from both schedules. Computed here by arithmetic, not
// by the operator's schedule code.
const SCHEDULES = [
  { schedule: "*/2 * * * *", timeZone: "Asia/Kathmandu" },
  { schedule: "*/3 * * * *", timeZone: "UTC" },
];
function expectedSources(slot: Date): number[] {
  const m = slot.getUTCMinutes();
  return [...(m % 2 === 1 ? [0] : []), ...(m % 3 === 0 ? [1] : [])];
}

/**
 * What the first part leaves the second: when the union was made, who led then (the Lease's holder), and each
 * change of holder seen since (polled): the first is the death its slots are checked across.
 */
const made = {
  at: 0,
  leader: "",
  changes: [] as { at: number; holder: string }[],
  watch: undefined as NodeJS.Timeout | undefined,
};

e2eDescribe("end to end: API v2, several schedules on a real node", { timeout: 1_500_000 }, () => {
  const suite = e2eSuite({
    namespace: NS,
    pollMs: POLL_MS,
    logLines: 60,
    keepNamespace: true,
    tearDown: async () => {
      made.watch?.unref();
    },
  });
  const { getJSON, cronJob, admit, jobsOf, leaseHolder } = suite;

  it("serves v2 through the conversion webhook, its caBundle injected by the manager", async () => {
    const crd = await getJSON(["get", "crd", "cronjobs.batch.tutorial.kubebuilder.io"]);
    const conversion = (
      crd.spec as { conversion: { strategy: string; webhook: { clientConfig: Record<string, any> } } }
    ).conversion;
    assert.equal(conversion.strategy, "Webhook");
    assert.ok(conversion.webhook.clientConfig.caBundle, "the manager injected the caBundle");
    assert.equal(conversion.webhook.clientConfig.service.path, "/convert");
  });

  it("admits a v2 CronJob with two schedules in two zones, reads it in both versions, and runs its first slot", async () => {
    const spec = { schedules: SCHEDULES, successfulJobsHistoryLimit: 20, startingDeadlineSeconds: 120 };
    await admit(cronJob("union", spec, "echo union", API_V2), 60_000);
    made.at = Date.now();
    made.leader = await leaseHolder();
    let holder = made.leader;
    made.watch = setInterval(() => {
      leaseHolder().then(
        (h) => {
          if (h && h !== holder) made.changes.push({ at: Date.now(), holder: (holder = h) });
        },
        () => undefined, // no Lease for a moment (a failover): the next poll reads it
      );
    }, 3000);
    // Both versions read it: v1 keeps the second schedule in its annotation.
    const v1 = await getJSON([`get`, V1, "union", "-n", NS]);
    assert.deepEqual([(v1.spec as any).schedule, (v1.spec as any).timeZone], ["*/2 * * * *", "Asia/Kathmandu"]);
    assert.deepEqual(JSON.parse(v1.metadata.annotations![MORE]!), SCHEDULES.slice(1));
    assert.deepEqual((await getJSON([`get`, V2, "union", "-n", NS])).spec!.schedules, SCHEDULES);

    const jobs = () => jobsOf("union", V2);
    const first = await eventually(
      "the first Job",
      async () => ((await jobs()).length > 0 ? true : undefined),
      150_000,
      undefined,
      POLL_MS,
    );
    assert.ok(first);
  });
});

// The union's slots checked across the leader's death: with the disruptive suites, after HA's (run.ts).
e2eDescribe(
  "end to end: API v2, the union's slots across the leader's death",
  { timeout: 1_500_000, disruptive: "api-v2: the union's slots across the leader's death" },
  () => {
    const suite = e2eSuite({ namespace: NS, pollMs: POLL_MS, logLines: 60 });
    const { getJSON, jobsOf, plugin, killLeaderPod, leaseHolder } = suite;
    after(() => clearInterval(made.watch));

    it("runs the union of two schedules in two zones, each slot once, across the leader's death", async () => {
      assert.ok(made.at, "the union was made (the first part ran)");
      const created = made.at;
      const jobs = () => jobsOf("union", V2);
      // The leader's death: the first change of leader seen since the union was made (the HA suite's SIGKILL, in
      // the shared run), else a kill here.
      clearInterval(made.watch);
      let died: number;
      if (made.changes.length) died = made.changes[0]!.at;
      else {
        await killLeaderPod();
        died = Date.now();
      }
      // The union's first slot after the death (the new leader's), and at least 3 since the union was made, each
      // given 30 s to have its Job.
      let after = Math.ceil((died + 1000) / 60_000) * 60_000;
      while (!expectedSources(new Date(after)).length) after += 60_000;
      let third = Math.ceil((created + 1000) / 60_000) * 60_000;
      for (let n = 0; ; third += 60_000) if (expectedSources(new Date(third)).length && ++n === 3) break;
      await sleep(Math.max(0, Math.max(after, third) + 30_000 - Date.now()));
      assert.notEqual(await leaseHolder(), made.leader, "another replica leads since the union was made");

      // Every minute from the first after creation up to the last full one: the union's slots, each once.
      const all = await jobs();
      const bySlot = new Map<number, K8sObject[]>();
      for (const j of all) {
        const t = new Date(j.metadata.annotations![SCHEDULED_AT]!).getTime();
        bySlot.set(t, [...(bySlot.get(t) ?? []), j]);
      }
      const from = Math.ceil((created + 1000) / 60_000) * 60_000;
      const to = Math.floor((Date.now() - 30_000) / 60_000) * 60_000;
      const problems: string[] = [];
      let slots = 0;
      let shared = 0;
      for (let t = from; t <= to; t += 60_000) {
        const want = expectedSources(new Date(t));
        const got = bySlot.get(t) ?? [];
        const at = new Date(t).toISOString();
        if (want.length === 0) {
          if (got.length) problems.push(`${at}: not a slot of either schedule, ${got.length} Job(s)`);
          continue;
        }
        slots++;
        if (want.length === 2) shared++;
        if (got.length !== 1) {
          problems.push(`${at}: ${got.length} Jobs`);
          continue;
        }
        const sources = JSON.parse(got[0]!.metadata.annotations![SOURCES] ?? "[]") as { index: number }[];
        if (JSON.stringify(sources.map((s) => s.index)) !== JSON.stringify(want)) {
          problems.push(
            `${at}: sources ${got[0]!.metadata.annotations![SOURCES]}, want indexes ${JSON.stringify(want)}`,
          );
        }
      }
      assert.deepEqual(problems, [], "each slot of the union exactly once, naming its schedules");
      assert.ok(slots >= 3, `at least 3 slots checked (${slots})`);
      process.stderr.write(`api-v2: ${slots} slots checked from ${new Date(from).toISOString()}, ${shared} shared\n`);

      // nextScheduleTime: the earliest next slot of either schedule.
      const cj = await getJSON(["get", V2, "union", "-n", NS]);
      // nextScheduleTime is the union's first slot after lastScheduleTime, whatever the status's age.
      const next = new Date(String((cj.status as any).nextScheduleTime));
      const last = new Date(String((cj.status as any).lastScheduleTime));
      assert.ok(expectedSources(next).length > 0, `nextScheduleTime ${next.toISOString()} is a slot of the union`);
      assert.ok(next > last, `nextScheduleTime ${next.toISOString()} after lastScheduleTime ${last.toISOString()}`);
      for (let t = last.getTime() + 60_000; t < next.getTime(); t += 60_000) {
        assert.equal(
          expectedSources(new Date(t)).length,
          0,
          `an earlier slot ${new Date(t).toISOString()} was skipped`,
        );
      }
      const done = all.filter((j) => conditionTrue(j, "Complete"));
      assert.ok(done.length >= 2, "the Pods really ran");
    });

    it("kubectl cron next and history show which schedule each slot comes from", async () => {
      const next = await plugin(["next", "union", "--count=6"]);
      assert.equal(next.code, 0, next.stderr);
      assert.match(next.stdout, /\*\/2 \* \* \* \* \(Asia\/Kathmandu\)/);
      assert.match(next.stdout, /\*\/3 \* \* \* \* \(UTC\)/);
      const history = await plugin(["history", "union"]);
      assert.equal(history.code, 0, history.stderr);
      assert.match(history.stdout.split("\n")[0]!, /SCHEDULE/);
      assert.match(history.stdout, /Asia\/Kathmandu/);
    });
  },
);
