// End to end, `kubectl cron why` (issue 38) on a real node: each CronJob below stages one cause with Pods that
// really run (or really cannot), the plugin is asked as a user asks it, and its verdict, evidence and exit code are
// checked. The CronJobs run side by side on one cluster; the operator is stopped last. The record
// (status.recentRuns) answers after the Events are deleted, as it must hours later. Needs root; `make test-e2e`.
import assert from "node:assert/strict";
import { it } from "node:test";
import { causeOf, PLACEHOLDERS } from "../../cmd/kubectl-cron/answer/causes.ts";
import { eventually } from "../eventually.ts";
import { MANAGER, conditionTrue, type K8sObject } from "./cluster-tools.ts";
import { type Suite, e2eDescribe, e2eSuite, SCHEDULED_AT, SYSTEM_NS } from "./suite.ts";

const NS = "why";
/** A namespace of its own for the quota, which would refuse every other CronJob's Jobs. */
const QUOTA_NS = "why-quota";
const POLL_MS = 1000;
/** Our CronJobs read as v1, which needs no conversion webhook (the operator is stopped in the last case). */
const V1_CRONJOBS = "cronjobs.v1.batch.tutorial.kubebuilder.io";

/** The manifest with its container's image replaced, pulled if not present (from loopback: nothing answers). */
function withImage(m: K8sObject, image: string): K8sObject {
  const spec = m.spec as { jobTemplate: { spec: { template: { spec: { containers: Record<string, unknown>[] } } } } };
  const [container] = spec.jobTemplate.spec.template.spec.containers;
  Object.assign(container!, { image, imagePullPolicy: "IfNotPresent" });
  return m;
}

interface WhyJSON {
  slot?: { utc: string };
  status: string;
  verdict: string;
  cause?: string;
  evidence: string[];
  fix: string[];
  next?: { utc: string; blocked?: string };
  also: { cause: string; summary: string }[];
  exitCode: number;
}

/** `kubectl cron why` until its answer satisfies `ok` (the staged cause takes a slot or two to show). */
function whyUntilOf(suite: Suite) {
  return (name: string, ok: (d: WhyJSON) => boolean, ns = NS, timeoutMs = 120_000, args: string[] = []) => {
    let last = "";
    return eventually(
      `kubectl cron why ${name} ${args.join(" ")} to answer as expected`,
      async () => {
        const r = await suite.kubectlCron(["why", name, "-n", ns, "-o", "json", ...args]);
        last = `exit ${r.code}: ${r.stdout}${r.stderr}`;
        const d = JSON.parse(r.stdout) as WhyJSON;
        assert.equal(r.code, d.exitCode, "the exit code is the diagnosis'");
        return ok(d) ? d : undefined;
      },
      timeoutMs,
      () => `; last answer: ${last}`,
      2000,
    );
  };
}

e2eDescribe("end to end: kubectl cron why, each cause staged on a real node", { timeout: 1_200_000 }, () => {
  const suite = e2eSuite({
    namespace: NS,
    pollMs: POLL_MS,
    // The operator-stopped case (below, run with the disruptive suites) goes on with the CronJob "ok".
    keepNamespace: true,
    tearDown: async () => {
      await suite.kubectl(["delete", "namespace", QUOTA_NS, "--ignore-not-found", "--wait=false"]);
    },
    setUp: async () => {
      await suite.createNamespace(QUOTA_NS, POLL_MS);
      await suite.kubectl(["create", "quota", "no-jobs", "-n", QUOTA_NS, "--hard=count/jobs.batch=0"]);
      // Every cause at once: the CronJobs run side by side, each on its own @every schedule.
      const every = { schedule: "@every 15s" };
      await Promise.all([
        suite.admit(suite.cronJob("ok", every, "echo ok")),
        suite.admit(suite.cronJob("paused", { ...every, suspend: true }, "echo never")),
        suite.admit(suite.cronJob("hung", { ...every, concurrencyPolicy: "Forbid" }, "sleep 3600")),
        suite.admit(suite.cronJob("late", { ...every, startingDeadlineSeconds: 0 }, "echo never")),
        suite.admit(withImage(suite.cronJob("nopull", every, "echo never"), "localhost/does-not-exist:1")),
        suite.admit({
          ...suite.cronJob("quota", every, "echo never"),
          metadata: { name: "quota", namespace: QUOTA_NS },
        }),
      ]);
    },
  });
  const { kubectl, kubectlCron } = suite;

  const whyUntil = whyUntilOf(suite);

  it("a successful run: ran at …, Complete in …; exit 0", async () => {
    // Asked about a slot whose Job is Complete: on a loaded node a Pod can take longer than the schedule's 15 s, and
    // then the latest slot is always a newer run, still running.
    const done = await eventually(
      "a Complete Job of ok",
      async () => (await suite.jobsOf("ok")).find((j) => conditionTrue(j, "Complete")),
      240_000,
      () => suite.podsSay(NS, "ok-"),
      POLL_MS,
    );
    const slot = done.metadata.annotations?.[SCHEDULED_AT];
    assert.ok(slot, `Job ${done.metadata.name} has ${SCHEDULED_AT}`);
    const d = await whyUntil("ok", (x) => x.status === "healthy" && /Complete/.test(x.verdict), NS, 60_000, [
      `--slot=${slot}`,
    ]);
    assert.equal(d.exitCode, 0);
    assert.match(
      d.verdict,
      /^ran at \d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})? UTC: Job ok-\d+ \(created \d+ s after the slot\), Complete in \d+s/,
    );
    assert.ok(d.next?.utc, "the next run is given");
    // As text, about the same slot (by now the latest may be a newer one, still running on a loaded node, for longer
    // than the schedule's 15 s): the same verdict, with the record's line as evidence.
    assert.ok(d.slot?.utc, "the slot is given");
    const text = await kubectlCron(["why", "ok", "-n", NS, `--slot=${d.slot.utc}`]);
    assert.equal(text.code, 0, text.stderr);
    assert.ok(text.stdout.split("\n").includes(`why/ok: ${d.verdict}`), text.stdout);
    assert.match(text.stdout, /^why\/ok: ran at \d{4}-\d{2}-\d{2} [\d:]+ UTC: Job ok-\d+/m);
    assert.match(text.stdout, /^Next: /m);
    assert.match(text.stdout, /^Evidence:\n {2}- status\.recentRuns: /m);
  });

  it("suspended: says so, by whom (managedFields), and how to resume; exit 1", async () => {
    const d = await whyUntil("paused", (x) => x.cause === "suspended");
    assert.equal(d.exitCode, 1);
    assert.match(
      d.verdict,
      /the CronJob is suspended \(spec\.suspend set by kubectl[^ ]* \((Update|Apply)\) at \d{4}-/,
    );
    assert.deepEqual(d.fix, causeOf("suspended").fix({ ...PLACEHOLDERS, name: "paused", namespace: NS }));
    assert.match(d.next?.blocked ?? "", /suspended/);
  });

  it("Forbid behind a hung Job: names the Job, how long it has run and what keeps it alive", async () => {
    const d = await whyUntil("hung", (x) => x.cause === "forbid-held");
    assert.equal(d.exitCode, 1);
    const job = /Job (hung-\d+)/.exec(d.verdict)?.[1];
    assert.ok(job, d.verdict);
    assert.match(
      d.verdict,
      /did not run at .*: concurrencyPolicy Forbid and Job hung-\d+ has been running for \d+[sm].* \(activeDeadlineSeconds unset, backoffLimit 0\); it will not run until that Job ends/,
    );
    assert.deepEqual(d.fix, causeOf("forbid-held").fix({ ...PLACEHOLDERS, namespace: NS, job }));
    assert.ok(
      d.evidence.some((e) => /Held \(ConcurrencyPolicyForbid\).*behind Job hung-/.test(e)),
      d.evidence.join("\n"),
    );
    assert.ok(
      d.evidence.some((e) => /^Pod hung-\d+-\w+: Running/.test(e)),
      d.evidence.join("\n"),
    );
  });

  it("a deadline shorter than the operator's lag: missed, and said so with the figures", async () => {
    const d = await whyUntil("late", (x) => x.cause === "deadline-shorter-than-lag");
    assert.equal(d.exitCode, 1);
    assert.match(
      d.verdict,
      /startingDeadlineSeconds 0 is shorter than the operator's lag: it reached the slot \d+ s after it/,
    );
    assert.ok(
      d.evidence.some((e) => /Missed \(StartingDeadlineExceeded\)/.test(e)),
      d.evidence.join("\n"),
    );
  });

  it("an image that cannot be pulled: the Pod's waiting reason and the kubelet's message", async () => {
    const d = await whyUntil("nopull", (x) => x.cause === "image-pull");
    assert.equal(d.exitCode, 1);
    assert.match(
      d.verdict,
      /never got to work: its Pod nopull-\d+-\w+ cannot pull its image \((ErrImagePull|ImagePullBackOff|ErrImageNeverPull)\)/,
    );
    assert.ok(
      d.evidence.some((e) => /localhost\/does-not-exist:1/.test(e)),
      d.evidence.join("\n"),
    );
  });

  it("a create refused by a ResourceQuota: the API server's words and the quota's figures", async () => {
    const d = await whyUntil("quota", (x) => x.cause === "create-refused-quota", QUOTA_NS);
    assert.equal(d.exitCode, 1);
    assert.match(d.verdict, /the API server refused its Job: .*exceeded quota: no-jobs/);
    assert.ok(
      d.evidence.some((e) => /^ResourceQuota no-jobs: count\/jobs\.batch 0\/0/.test(e)),
      d.evidence.join("\n"),
    );
  });

  it("asked again after the API server's Events are gone: the record still answers", async () => {
    for (const ns of [NS, QUOTA_NS]) await kubectl(["delete", "events", "--all", "-n", ns]);
    const held = await whyUntil("hung", (x) => x.cause === "forbid-held", NS, 10_000);
    assert.match(held.verdict, /Job hung-\d+ has been running for/);
    const refused = await whyUntil("quota", (x) => x.cause === "create-refused-quota", QUOTA_NS, 10_000);
    assert.match(refused.verdict, /exceeded quota/);
    // The namespace at a glance: the CronJobs that need attention, and not the healthy one. Asked again for up to two
    // minutes until all four are listed: these CronJobs run every 15 s, and what each answer sees is live state.
    let list = await kubectlCron(["why", "-n", NS]);
    const listed = (out: string) =>
      ["paused", "hung", "late", "nopull"].every((n) => new RegExp(`^${n}\\t`, "m").test(out));
    for (let i = 0; i < 60 && !listed(list.stdout); i++) {
      await new Promise((r) => setTimeout(r, 2000));
      list = await kubectlCron(["why", "-n", NS]);
    }
    assert.equal(list.code, 1, list.stderr);
    for (const name of ["paused", "hung", "late", "nopull"]) assert.match(list.stdout, new RegExp(`^${name}\\t`, "m"));
    assert.doesNotMatch(list.stdout, /^ok\t/m);
  });
});

// Disruptive: the operator is scaled to 0, then brought back (run.ts runs it after the concurrent suites).
e2eDescribe(
  "end to end: kubectl cron why when the operator is stopped, on a real node",
  { timeout: 1_200_000, disruptive: "why: the operator scaled to 0" },
  () => {
    const suite = e2eSuite({
      namespace: NS,
      pollMs: POLL_MS,
      tearDown: async () => {
        await suite.kubectl(["-n", SYSTEM_NS, "scale", "deployment", MANAGER, `--replicas=${replicas}`]);
        await suite.kubectl(["-n", SYSTEM_NS, "rollout", "status", `deployment/${MANAGER}`, "--timeout=180s"]);
      },
    });
    const { kubectl, getJSON } = suite;
    const whyUntil = whyUntilOf(suite);
    /** The manager's replicas before it is stopped, restored at the end. */
    let replicas = 2;

    it("the operator stopped: no ready replica, and nothing decided since; exit 1", async () => {
      const ok = await getJSON(["get", V1_CRONJOBS, "ok", "-n", NS]);
      assert.ok(ok.status?.lastScheduleTime);
      replicas = Number((await getJSON(["-n", SYSTEM_NS, "get", "deployment", MANAGER])).spec!.replicas ?? 1);
      await kubectl(["-n", SYSTEM_NS, "scale", "deployment", MANAGER, "--replicas=0"]);
      await eventually(
        "the manager's Pods gone",
        async () => ((await suite.managerPods()).length === 0 ? true : undefined),
        120_000,
        undefined,
        POLL_MS,
      );
      const d = await whyUntil("ok", (x) => x.cause === "operator-down", NS, 60_000);
      assert.equal(d.exitCode, 1);
      assert.match(
        d.verdict,
        /did not run at .*: the operator has no ready replica in namespace cronjob-operator-system/,
      );
      // What a user would meet at kubectl apply, and with API v2: the webhooks have no endpoint.
      assert.ok(
        d.also.some((a) => a.cause === "operator-webhook-failing" && /no ready endpoint/.test(a.summary)),
        JSON.stringify(d.also),
      );
      // The Jobs it ran before still ran (read as v1: v2 needs the conversion webhook, which is down now).
      const jobs = await suite.jobsOf("ok", "cronjobs.v1.batch.tutorial.kubebuilder.io");
      assert.ok(jobs.some((j) => conditionTrue(j, "Complete")));
    });
  },
);
