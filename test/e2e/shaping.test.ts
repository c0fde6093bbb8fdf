// End to end, issue 71 on a real node: (1) spec.maxRuns 3 on a CronJob every 20 s: three Jobs, then no more, the
// count and the end in status and the record; (2) spec.jitter on 50 CronJobs of the same minute over two slots: each
// slot's Job once per CronJob, created at its slot plus the offset hashed from the CronJob and the slot, the offsets
// spread over the jitter; (3) a chain A → B → C (spec.after) with the leader SIGKILLed between A's end and B's create
// (B held by Forbid behind its own scheduled run across the kill): B runs once after A's run, made by the successor,
// C once after each of B's runs; D, after all of A and B (spec.afterPolicy All), once, when both have ended a run.
// Needs root (the node); `make test-e2e`.
import assert from "node:assert/strict";
import { it } from "node:test";
import { AFTER_ANNOTATION, afterJobName, JITTER_OFFSET_ANNOTATION, jitterOffsetSeconds } from "../../api/v1/index.ts";
import { joinJobName } from "../../api/v1/join.ts";
import { eventually } from "../eventually.ts";
import { type K8sObject, conditionTrue, recordOf, sleep } from "./cluster-tools.ts";
import { LEADER_KILLED } from "./disruptions.ts";
import { leaderDeath, settled, successorOf } from "./leader-death.ts";
import { CRONJOBS, SCHEDULED_AT, e2eDescribe, e2eSuite } from "./suite.ts";

const NS = "shaping";
const POLL_MS = 1000;
const MINUTE = 60_000;
const utc = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");
const slotOf = (j: K8sObject) => Date.parse(j.metadata.annotations?.[SCHEDULED_AT] ?? "");
const createdAt = (j: K8sObject) => Date.parse(String(j.metadata.creationTimestamp));
/** A cron for one minute of the year: the slot at `ms`. */
const once = (ms: number) => {
  const d = new Date(ms);
  return `${d.getUTCMinutes()} ${d.getUTCHours()} ${d.getUTCDate()} ${d.getUTCMonth() + 1} *`;
};

e2eDescribe("end to end: maxRuns, on a real node", { timeout: 600_000 }, () => {
  const suite = e2eSuite({ namespace: NS, pollMs: POLL_MS, logLines: 80 });
  const { getJSON, cronJob, admit, jobsOf, plugin } = suite;
  const get = (name: string) => getJSON(["get", CRONJOBS, name, "-n", NS]);

  it(
    "maxRuns 3: three scheduled runs, then none; scheduledRuns, MaxRunsReached and the record say so",
    {
      timeout: 180_000,
    },
    async () => {
      // Every 20 s: three runs within a minute, so the concurrent phase is not longer for it.
      await admit(cronJob("thrice", { schedule: "@every 20s", maxRuns: 3, successfulJobsHistoryLimit: 5 }, "true"));
      const ended = await eventually(
        "thrice's Available condition MaxRunsReached",
        async () => {
          const cj = await get("thrice");
          const c = (cj.status?.conditions as { type: string; reason: string }[] | undefined)?.find(
            (x) => x.type === "Available",
          );
          return c?.reason === "MaxRunsReached" ? cj : undefined;
        },
        2 * MINUTE,
        undefined,
        POLL_MS,
      );
      assert.equal(ended.status?.scheduledRuns, 3);
      assert.equal(ended.status?.nextScheduleTime, undefined, "no next run is announced");
      const last = Date.parse(String(ended.status?.lastScheduleTime));
      // One more slot passes: nothing runs for it.
      await sleep(Math.max(0, last + 30_000 - Date.now()));
      const jobs = await jobsOf("thrice");
      assert.equal(jobs.length, 3, `three Jobs: ${jobs.map((j) => j.metadata.name).join(", ")}`);
      assert.equal(new Set(jobs.map(slotOf)).size, 3, "three slots, one Job each");
      const stop = recordOf(await get("thrice")).filter((e) => e.decision === "Stopped");
      assert.deepEqual(
        stop.map((e) => [e.reason, e.message]),
        [["MaxRunsReached", "ended: 3 of 3 runs made (spec.maxRuns); run-now and backfill requests still run"]],
      );
      const why = await plugin(["why", "thrice"]);
      assert.match(why.stdout, /ended: 3 of 3 runs made/, why.stdout + why.stderr);
    },
  );
});

e2eDescribe("end to end: jitter over a fleet of one minute, on a real node", { timeout: 600_000 }, () => {
  const suite = e2eSuite({ namespace: `${NS}-jitter`, pollMs: POLL_MS, logLines: 80 });
  const { cronJob, admit, kubectl } = suite;
  const NS_J = suite.namespace;

  it(
    "jitter 50s on 50 CronJobs of one minute, two slots: one Job each per slot, each at its slot plus its own offset",
    {
      timeout: 330_000,
    },
    async () => {
      const N = 50;
      const names = Array.from({ length: N }, (_, i) => `spread-${i}`);
      const manifests = names.map((n) =>
        cronJob(
          n,
          { schedule: "* * * * *", jitter: "50s", successfulJobsHistoryLimit: 2, failedJobsHistoryLimit: 2 },
          "true",
        ),
      );
      await admit(manifests[0]!);
      await kubectl(
        ["apply", "-f", "-"],
        JSON.stringify({ apiVersion: "v1", kind: "List", items: manifests.slice(1) }),
      );
      // The two whole minutes after every CronJob exists.
      const s1 = Math.ceil((Date.now() + 5_000) / MINUTE) * MINUTE;
      const slots = [s1, s1 + MINUTE];
      const offsetOf = (name: string, slot: number) =>
        jitterOffsetSeconds({ namespace: NS_J, name }, new Date(slot), 50);
      // The Jobs as listed once every CronJob has its Job of both slots.
      const jobs = await eventually(
        "every CronJob's Job of both slots",
        async () => {
          const spread = (await suite.list("jobs", NS_J)).filter((j) => j.metadata.name.startsWith("spread-"));
          return slots.every((s) => spread.filter((j) => slotOf(j) === s).length >= N) ? spread : undefined;
        },
        Math.max(slots[1]! + 50_000 + 45_000 - Date.now(), 1000),
        undefined,
        2 * POLL_MS,
      );
      await kubectl(["delete", CRONJOBS, ...names, "-n", NS_J, "--wait=false"]);
      const late: string[] = [];
      for (const s of slots)
        for (const name of names) {
          const own = jobs.filter((j) => slotOf(j) === s && j.metadata.ownerReferences?.[0]?.name === name);
          assert.equal(own.length, 1, `${name}: one Job for ${utc(s)}: ${own.map((j) => j.metadata.name).join(", ")}`);
          const job = own[0]!;
          const offset = offsetOf(name, s);
          assert.equal(job.metadata.name, `${name}-${s / 1000}`, "the slot's name: its lock");
          // Every jittered slot's Job says its offset, 0 included.
          assert.equal(job.metadata.annotations?.[JITTER_OFFSET_ANNOTATION], `${offset}s`);
          const start = s + offset * 1000;
          assert.ok(
            createdAt(job) >= start,
            `${job.metadata.name} created ${utc(createdAt(job))}, before its start ${utc(start)}`,
          );
          if (createdAt(job) - start > 10_000) late.push(`${job.metadata.name} +${(createdAt(job) - start) / 1000}s`);
        }
      assert.ok(late.length <= 2, `created within 10 s of their start, but: ${late.join(", ")}`);
      const offsets = new Set(names.map((n) => Math.floor(offsetOf(n, s1) / 10)));
      assert.equal(offsets.size, 5, "the offsets spread over every tenth of the jitter");
    },
  );
});

e2eDescribe(
  "end to end: a chain A → B → C (spec.after) across the leader's death, on a real node",
  { timeout: 600_000, disruptive: LEADER_KILLED },
  () => {
    const suite = e2eSuite({ namespace: `${NS}-chain`, pollMs: POLL_MS, logLines: 200 });
    const { getJSON, cronJob, admit, jobsOf } = suite;
    const NS_C = suite.namespace;
    const get = (name: string) => getJSON(["get", CRONJOBS, name, "-n", NS_C]);

    it("B runs once after A's run, made by the successor of a leader killed between A's end and B's create; C once after each of B's runs; D once after all of A and B", async () => {
      await settled(suite);
      const death = leaderDeath(suite);
      // B's own scheduled run at `first` holds B (Forbid) until after the kill; A runs at first + 1 min and ends
      // before the kill, so B's run after A waits across it and is the successor's to make.
      const aSlot = death.first + MINUTE;
      const blockerEnds = death.killAt + 15_000;
      assert.ok(death.first >= Date.now() + 5_000, "the objects exist before the first slot");
      await admit(cronJob("a", { schedule: once(aSlot) }, "sleep 15"));
      await admit(
        cronJob(
          "b",
          { schedule: once(death.first), concurrencyPolicy: "Forbid", after: [{ cronJob: "a" }] },
          // One template for all of B's runs: its scheduled run (the blocker) sleeps across the kill, its run after A
          // (a Job, so a Pod, named b-a<hash>) ends at once.
          `case "$HOSTNAME" in b-a*) true ;; *) sleep ${Math.round((blockerEnds - death.first) / 1000)} ;; esac`,
        ),
      );
      await admit(cronJob("c", { after: [{ cronJob: "b", when: "Finished" }] }, "true"));
      await admit(cronJob("d", { after: [{ cronJob: "a" }, { cronJob: "b" }], afterPolicy: "All" }, "true"));

      const aJob = await eventually(
        "A's run Complete",
        async () => (await jobsOf("a")).find((j) => conditionTrue(j, "Complete")),
        Math.max(aSlot + 60_000 - Date.now(), 1000),
        undefined,
        POLL_MS,
      );
      const aEnded = Date.parse(
        String(
          (aJob.status?.conditions as { type: string; lastTransitionTime: string }[]).find((c) => c.type === "Complete")
            ?.lastTransitionTime,
        ),
      );
      const kill = await death.kill;
      assert.ok(aEnded < kill.at, `A ended ${utc(aEnded)}, before the kill ${utc(kill.at)}`);
      const bAfter = afterJobName("b", "a", aJob.metadata.name);
      const successor = await successorOf(suite, kill);
      const bJob = await eventually(
        `B's run after A (${bAfter}) Complete`,
        async () => (await jobsOf("b")).find((j) => j.metadata.name === bAfter && conditionTrue(j, "Complete")),
        Math.max(blockerEnds + 90_000 - Date.now(), 1000),
        undefined,
        POLL_MS,
      );
      assert.ok(createdAt(bJob) >= kill.at - 1000, `B's run was made after the kill (${utc(createdAt(bJob))})`);
      assert.equal(bJob.metadata.annotations?.[AFTER_ANNOTATION], `a/${aJob.metadata.name}`);
      const cAfter = afterJobName("c", "b", bAfter);
      await eventually(
        `C's run after B's (${cAfter})`,
        async () => (await jobsOf("c")).some((j) => j.metadata.name === cAfter),
        60_000,
        undefined,
        POLL_MS,
      );
      // Both have decided up to the runs they followed (their books, status.upstreams), so no other run after them can
      // come: the counts below are final.
      const decided = (cj: K8sObject, upstream: string, job: string) =>
        ((cj.status?.upstreams as { cronJob: string; lastJob?: string }[] | undefined) ?? []).some(
          (u) => u.cronJob === upstream && u.lastJob === job,
        );
      await eventually(
        `B's book at A's run ${aJob.metadata.name}, C's at B's run ${bAfter}`,
        async () => decided(await get("b"), "a", aJob.metadata.name) && decided(await get("c"), "b", bAfter),
        60_000,
        undefined,
        POLL_MS,
      );
      // D joins A's run and B's first run to end (its scheduled run, the blocker, which ends after the kill): once.
      const blocker = (await jobsOf("b")).find((j) => !j.metadata.annotations?.[AFTER_ANNOTATION]);
      assert.ok(blocker, "B's scheduled run");
      const runs = [
        { upstream: "a", job: aJob.metadata.name },
        { upstream: "b", job: blocker.metadata.name },
      ];
      const dJoin = joinJobName("d", runs);
      await eventually(
        `D's run after all of A's and B's runs (${dJoin}), and its books at that join`,
        async () =>
          (await jobsOf("d")).some((j) => j.metadata.name === dJoin) &&
          decided(await get("d"), "a", aJob.metadata.name) &&
          decided(await get("d"), "b", blocker.metadata.name),
        60_000,
        undefined,
        POLL_MS,
      );
      assert.deepEqual(
        (await jobsOf("d")).map((j) => j.metadata.annotations?.[AFTER_ANNOTATION]),
        [`all:a/${aJob.metadata.name}+b/${blocker.metadata.name}`],
        "exactly one run of D: A has not run again since the join",
      );
      const bJobs = await jobsOf("b");
      assert.deepEqual(
        bJobs.filter((j) => j.metadata.annotations?.[AFTER_ANNOTATION]).map((j) => j.metadata.name),
        [bAfter],
        "exactly one run of B after A's run",
      );
      const cJobs = (await jobsOf("c")).map((j) => j.metadata.annotations?.[AFTER_ANNOTATION]).sort();
      const bRuns = bJobs.map((j) => `b/${j.metadata.name}`).sort();
      assert.deepEqual(cJobs, bRuns, "one run of C after each of B's runs");
      const entry = recordOf(await get("b")).find((e) => e.trigger === "After");
      assert.equal(entry?.request, `a/${aJob.metadata.name}`);
      process.stderr.write(
        `shaping chain: ${JSON.stringify({ kill: { at: utc(kill.at), before: kill.holder, after: successor }, aEnded: utc(aEnded), b: utc(createdAt(bJob)) })}\n`,
      );
    });
  },
);
