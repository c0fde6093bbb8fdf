// End to end, issue 45's fleets on a real node: (1) a ConcurrencyGroup of limit 1 shared by three every-minute
// CronJobs whose Jobs each run 70 s, for four minutes with the leader SIGKILLed once: sampled every second, never
// more than one of their Jobs unfinished and never more than one of their Pods Running; every slot ran once (its
// slot-named Job) or is recorded Held or Missed; (2) spec.startTimeoutSeconds ending a run whose image cannot be
// pulled, so the next slot of a Forbid CronJob runs. Needs root (the node); `make test-e2e`.
//
// Not shown here: a Job suspended by someone else (Kueue, or a test's own mutating webhook setting spec.suspend)
// being queued and never unsuspended. The local cluster is Kubernetes 1.20.2, which has no Job spec.suspend (it
// came in 1.21, beta and on by default): the API server drops the field, so no such Job can exist on this cluster.
// The reconciler's table (test/integration/cronjob/fleet-cases.ts, on the in-memory fake) has that case.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { it } from "node:test";
import { PROJECT_ROOT } from "../../envtest/index.ts";
import { Client } from "../../runtime/client.ts";
import { eventually } from "../eventually.ts";
import { type K8sObject, conditionTrue, finished, recordOf, sleep } from "./cluster-tools.ts";
import { LEADER_KILLED } from "./disruptions.ts";
import { leaderDeath, settled, successorOf } from "./leader-death.ts";
import { API_V1, CRONJOBS, SCHEDULED_AT, e2eDescribe, e2eSuite } from "./suite.ts";

const NS = "fleets";
const POLL_MS = 1000;
const GROUP_LABEL = "batch.tutorial.kubebuilder.io/concurrency-group";
const ENDED_REASON = "batch.tutorial.kubebuilder.io/ended-reason";
const ENDED_MESSAGE = "batch.tutorial.kubebuilder.io/ended-message";
const ENDED_PODS = "batch.tutorial.kubebuilder.io/ended-pods";
/** An image nothing serves: the kubelet's pull from loopback fails (ErrImagePull, then ImagePullBackOff). */
const NO_SUCH_IMAGE = "localhost/fleets-no-such-image:1";

const slotOf = (j: K8sObject) => Date.parse(j.metadata.annotations?.[SCHEDULED_AT] ?? "");
const utc = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");

/** The manifest with its container's image replaced, pulled if not present (from loopback: nothing answers). */
function withImage(m: K8sObject, image: string): K8sObject {
  const spec = m.spec as { jobTemplate: { spec: { template: { spec: { containers: Record<string, unknown>[] } } } } };
  const [container] = spec.jobTemplate.spec.template.spec.containers;
  Object.assign(container!, { image, imagePullPolicy: "IfNotPresent" });
  return m;
}

e2eDescribe("end to end: fleets, a start limit on a real node", { timeout: 600_000 }, () => {
  const suite = e2eSuite({ namespace: NS, pollMs: POLL_MS, logLines: 80 });
  const { getJSON, cronJob, admit, jobsOf, waitForEvent } = suite;
  const get = (name: string) => getJSON(["get", CRONJOBS, name, "-n", NS]);

  it(
    "ends a Forbid run whose image cannot be pulled after startTimeoutSeconds (30 s), says why, and runs the next slot",
    { timeout: 180_000 },
    async () => {
      await admit(
        withImage(
          cronJob(
            "nopull",
            {
              schedule: "* * * * *",
              concurrencyPolicy: "Forbid",
              startTimeoutSeconds: 30,
              failedJobsHistoryLimit: 5,
            },
            "echo never",
          ),
          NO_SUCH_IMAGE,
        ),
      );
      const first = await eventually(
        "the first slot's Job",
        async () => (await jobsOf("nopull")).sort((a, b) => slotOf(a) - slotOf(b))[0],
        75_000,
        undefined,
        POLL_MS,
      );
      const name = first.metadata.name;
      const slot = slotOf(first);
      assert.equal(name, `nopull-${slot / 1000}`, "the Job is named after its slot");

      // Ended by the operator: the reason on the Job, its deadline lowered, and the Job controller fails it.
      const ended = await eventually(
        `${name} ended for its start limit and Failed`,
        async () => {
          const j = await getJSON(["get", "job", name, "-n", NS]);
          return j.metadata.annotations?.[ENDED_REASON] && conditionTrue(j, "Failed") ? j : undefined;
        },
        90_000,
        undefined,
        POLL_MS,
      );
      assert.equal(ended.metadata.annotations![ENDED_REASON], "StartTimeout");
      // What its Pods showed: as a code, and in the kubelet's words.
      assert.equal(ended.metadata.annotations![ENDED_PODS], "ImagePull");
      const endedMessage = ended.metadata.annotations![ENDED_MESSAGE] ?? "";
      assert.match(endedMessage, /^container \S+: (ErrImagePull|ImagePullBackOff)/, "it names the pull failure");
      assert.ok(endedMessage.includes(NO_SUCH_IMAGE), `it names the image: ${endedMessage}`);
      const started = Date.parse(String(ended.status!.startTime ?? ended.metadata.creationTimestamp));
      const deadline = Number(ended.spec!.activeDeadlineSeconds);
      assert.ok(deadline >= 30, `activeDeadlineSeconds lowered to what had passed (>= 30 s), not below: ${deadline}`);
      const failedCondition = (
        ended.status!.conditions as { type: string; status: string; lastTransitionTime: string }[]
      ).find((c) => c.type === "Failed" && c.status === "True")!;
      const failedAt = Date.parse(failedCondition.lastTransitionTime);
      assert.ok(
        failedAt - started >= 30_000,
        `ended no sooner than its start limit: ${(failedAt - started) / 1000} s after its start`,
      );
      // Ended before the next slot: so Forbid has nothing to hold it behind.
      assert.ok(failedAt < slot + 60_000, `${name} ended at ${utc(failedAt)}, before the next slot`);

      // The record says why, in the operator's words (the outcome reason is StartTimeout, not DeadlineExceeded).
      const entry = await eventually(
        `the record's entry for ${name} with its outcome`,
        async () => recordOf(await get("nopull")).find((e) => e.job === name && e.outcome),
        60_000,
        undefined,
        POLL_MS,
      );
      assert.equal(entry.outcome!.result, "Failed");
      assert.equal(entry.outcome!.reason, "StartTimeout");
      assert.equal(entry.outcome!.pods, "ImagePull");
      assert.equal(entry.outcome!.message, endedMessage);
      await waitForEvent(
        NS,
        "nopull",
        new RegExp(
          `^StartTimeout: Ended job ${name}: its Pods did not start within spec\\.startTimeoutSeconds \\(30s\\): `,
        ),
      );

      // The next slot runs: its Job is created, and the record says Created, not Held.
      const nextName = `nopull-${slot / 1000 + 60}`;
      const next = await eventually(
        `the next slot's Job ${nextName}`,
        async () => (await jobsOf("nopull")).find((j) => j.metadata.name === nextName),
        Math.max(slot + 60_000 + 30_000 - Date.now(), 1000),
        undefined,
        POLL_MS,
      );
      assert.equal(slotOf(next), slot + 60_000);
      const nextEntry = await eventually(
        `the record's entry for ${utc(slot + 60_000)}`,
        async () =>
          recordOf(await get("nopull")).find((e) => Date.parse(e.scheduledTime ?? "") === slot + 60_000 && e.job),
        30_000,
        undefined,
        POLL_MS,
      );
      assert.equal(nextEntry.decision, "Created", JSON.stringify(nextEntry));
      assert.equal(nextEntry.job, nextName);
      const held = recordOf(await get("nopull")).filter((e) => e.decision === "Held");
      assert.deepEqual(held, [], "no slot held by Forbid behind a run that never started");
    },
  );
});

/** The shared group, and its CronJobs: every minute, each Job 70 s, all in one group of limit 1. */
const GROUP = "db";
const MEMBERS = ["a", "b", "c"];
/** How long the slots are counted, from the first full minute after the CronJobs exist. */
const RUN_MINUTES = 4;

/** One sample of the group's Jobs and Pods. */
interface Sample {
  at: number;
  /** The group's Jobs without a Complete or Failed condition. */
  unfinished: string[];
  /** The namespace's Pods in phase Running. */
  running: string[];
}

e2eDescribe(
  "end to end: a concurrency group of limit 1 across the leader's death, on a real node",
  { timeout: 900_000, disruptive: LEADER_KILLED },
  () => {
    let api: Client | undefined;
    let stopSampling: (() => Promise<void>) | undefined;
    const suite = e2eSuite({
      namespace: `${NS}-group`,
      pollMs: POLL_MS,
      logLines: 300,
      setUp: async () => {
        api = new Client(suite.cluster.kubeConfig, { userAgent: "fleets-e2e" });
      },
      tearDown: async () => {
        await stopSampling?.();
        api?.close();
      },
    });
    const { getJSON, cronJob, admit, list } = suite;
    const NS_G = suite.namespace;

    /** Samples the group's Jobs and the namespace's Pods every second, from this process (no kubectl each time). */
    function startSampling(samples: Sample[], errors: string[]): () => Promise<void> {
      let stopped = false;
      const jobsPath = `/apis/batch/v1/namespaces/${NS_G}/jobs`;
      const podsPath = `/api/v1/namespaces/${NS_G}/pods`;
      const loop = (async () => {
        let next = Date.now();
        while (!stopped) {
          const at = Date.now();
          try {
            const [jobs, pods] = await Promise.all([
              api!.request<{ items: K8sObject[] }>("GET", jobsPath, {
                query: { labelSelector: `${GROUP_LABEL}=${GROUP}` },
                timeoutMs: 10_000,
              }),
              api!.request<{ items: K8sObject[] }>("GET", podsPath, { timeoutMs: 10_000 }),
            ]);
            samples.push({
              at,
              unfinished: jobs.items.filter((j) => !finished(j)).map((j) => j.metadata.name),
              running: pods.items.filter((p) => p.status?.phase === "Running").map((p) => p.metadata.name),
            });
          } catch (err) {
            errors.push(`${utc(at)}: ${err instanceof Error ? err.message : String(err)}`);
          }
          next += 1000;
          await sleep(Math.max(0, next - Date.now()));
        }
      })();
      return async () => {
        stopped = true;
        await loop;
      };
    }

    it("never runs more than 1 of the group's Jobs at once over 4 minutes, the leader SIGKILLed once; every slot ran once or is recorded Held or Missed", async () => {
      await settled(suite);
      // The leader's death this suite shares with the retries' (leader-death.ts): the counted minutes start at its
      // first, and the kill comes KILL_AFTER_MS after it.
      const death = leaderDeath(suite);
      await admit({
        apiVersion: API_V1,
        kind: "ConcurrencyGroup",
        metadata: { name: GROUP, namespace: NS_G },
        spec: { limit: 1 },
      });
      for (const m of MEMBERS) {
        await admit(
          cronJob(
            m,
            {
              schedule: "* * * * *",
              concurrencyPolicy: "Allow",
              startingDeadlineSeconds: 200,
              concurrencyGroup: GROUP,
              successfulJobsHistoryLimit: 20,
              failedJobsHistoryLimit: 20,
            },
            "sleep 70",
          ),
        );
      }
      const samples: Sample[] = [];
      const errors: string[] = [];
      stopSampling = startSampling(samples, errors);
      const made = Date.now();
      // The counted slots: the plan's first minute (the CronJobs exist before it), and the RUN_MINUTES - 1 after it.
      const { first } = death;
      assert.ok(made < first - 1000, `the group's CronJobs made at ${utc(made)}, before the first counted slot`);
      const slots = Array.from({ length: RUN_MINUTES }, (_, i) => first + i * 60_000);
      const end = first + RUN_MINUTES * 60_000;

      const kill = await death.kill;
      const successor = await successorOf(suite, kill);
      const tookOver = Date.now();

      // Until the last counted slot has had its minute; then the samples stop and the books are read.
      await sleep(Math.max(0, end + 5_000 - Date.now()));
      await stopSampling();
      stopSampling = undefined;

      const jobs = await list("jobs", NS_G);
      const cronJobs = new Map<string, K8sObject>();
      for (const m of MEMBERS) cronJobs.set(m, await getJSON(["get", CRONJOBS, m, "-n", NS_G]));
      const ownerOf = (j: K8sObject) =>
        MEMBERS.find((m) => j.metadata.ownerReferences?.some((o) => o.uid === cronJobs.get(m)!.metadata.uid));

      // 1. Never more than the limit at once: the Jobs (as the operator counts them) and the Pods (what ran).
      const over = samples.filter((s) => s.unfinished.length > 1 || s.running.length > 1);
      const gaps = samples.slice(1).map((s, i) => s.at - samples[i]!.at);
      const maxGap = Math.max(0, ...gaps);

      // 2. Every slot: its Job (named after it, once), or the record's Held or Missed.
      const problems: string[] = [];
      const perSlot = new Map<string, K8sObject[]>();
      for (const j of jobs) {
        const owner = ownerOf(j);
        if (!owner) {
          problems.push(`Job ${j.metadata.name} is owned by none of the group's CronJobs`);
          continue;
        }
        if (j.metadata.labels?.[GROUP_LABEL] !== GROUP) problems.push(`Job ${j.metadata.name} lacks the group's label`);
        if (j.metadata.name !== `${owner}-${slotOf(j) / 1000}`) {
          problems.push(`Job ${j.metadata.name} is not named after its slot ${j.metadata.annotations?.[SCHEDULED_AT]}`);
        }
        const k = `${owner} ${slotOf(j)}`;
        perSlot.set(k, [...(perSlot.get(k) ?? []), j]);
      }
      for (const [k, js] of perSlot) {
        if (js.length > 1) problems.push(`${k}: ${js.length} Jobs (${js.map((j) => j.metadata.name).join(", ")})`);
      }
      const decisions: Record<string, number> = {};
      for (const m of MEMBERS) {
        const record = recordOf(cronJobs.get(m)!);
        for (const t of slots) {
          const ran = perSlot.get(`${m} ${t}`) ?? [];
          const entry = record.find((e) => e.trigger === "Schedule" && Date.parse(e.scheduledTime ?? "") === t);
          const what = ran.length ? "ran" : (entry?.decision ?? "no record");
          decisions[what] = (decisions[what] ?? 0) + 1;
          if (ran.length === 1) continue;
          if (ran.length === 0 && entry && (entry.decision === "Held" || entry.decision === "Missed")) continue;
          problems.push(`${m} ${utc(t)}: ${ran.length} Jobs, record ${entry ? JSON.stringify(entry) : "has no entry"}`);
        }
      }
      const heldByGroup = MEMBERS.flatMap((m) => recordOf(cronJobs.get(m)!)).filter(
        (e) => e.decision === "Held" && /^ConcurrencyGroup(Full|Queue)$/.test(e.reason),
      );
      const ranInWindow = jobs.filter((j) => slots.includes(slotOf(j)));

      const report = {
        group: GROUP,
        limit: 1,
        window: { first: utc(first), end: utc(end) },
        kill: { at: new Date(kill.at).toISOString(), leaderBefore: kill.holder, leaderAfter: successor },
        newLeaderSeenAfterS: Math.round((tookOver - kill.at) / 100) / 10,
        samples: samples.length,
        sampleErrors: errors,
        maxSampleGapMs: maxGap,
        overLimit: over.map((s) => ({ at: new Date(s.at).toISOString(), jobs: s.unfinished, pods: s.running })),
        slots: decisions,
        // How the group's places were shared: Jobs per CronJob for the counted slots.
        runsPerMember: Object.fromEntries(
          MEMBERS.map((m) => [m, ranInWindow.filter((j) => j.metadata.name.startsWith(`${m}-`)).length]),
        ),
        jobs: jobs
          .map((j) => ({
            name: j.metadata.name,
            created: j.metadata.creationTimestamp,
            startTime: j.status?.startTime,
            completionTime: j.status?.completionTime,
            finished: finished(j),
          }))
          .sort((a, b) => String(a.created).localeCompare(String(b.created))),
        records: Object.fromEntries(MEMBERS.map((m) => [m, recordOf(cronJobs.get(m)!)])),
        problems,
      };
      mkdirSync(join(PROJECT_ROOT, "bin"), { recursive: true });
      writeFileSync(join(PROJECT_ROOT, "bin", "fleets-e2e.json"), JSON.stringify(report, null, 2) + "\n");
      process.stderr.write(`fleets: ${JSON.stringify({ ...report, jobs: report.jobs.length, records: undefined })}\n`);

      assert.deepEqual(report.overLimit, [], "more than 1 of the group's Jobs (or Pods) running at once");
      assert.deepEqual(problems, [], "every slot ran once or is recorded Held or Missed, and no Job twice");
      // The samples really covered the run: about one a second, no long blind spot.
      const span = samples.at(-1)!.at - samples[0]!.at;
      assert.ok(samples.length >= span / 1000 / 2, `${samples.length} samples in ${Math.round(span / 1000)} s`);
      assert.ok(maxGap <= 10_000, `the longest time without a sample: ${maxGap} ms`);
      // And the group was really put to work: runs that waited for it, and Jobs one after the other.
      assert.ok(heldByGroup.length > 0, "no slot was ever held by the group");
      assert.ok(ranInWindow.length >= 3, `only ${ranInWindow.length} Jobs ran for the counted slots`);
      assert.ok(
        samples.some((s) => s.running.length === 1),
        "no sample saw a Pod of the group Running",
      );
      // The oldest waiting run takes the place (docs/fleets.md), also when a newer slot of its CronJob replaces a
      // held one: b and c wait from the first slot on, so each runs before a runs again, and none is starved by
      // the CronJob whose Job just ended (the first to be reconciled when a place frees).
      for (const m of MEMBERS) {
        assert.ok(
          report.runsPerMember[m]! >= 1,
          `${m} never ran in ${RUN_MINUTES} minutes though its runs waited throughout: ${JSON.stringify(report.runsPerMember)}`,
        );
      }
      // The suite leaves the operator as it found it: two Ready replicas.
      await settled(suite);
    });
  },
);
