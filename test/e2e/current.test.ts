// End to end, what only a current Kubernetes shows (issue 54), on the real node: (1) Jobs queued by others, a
// mutating webhook of this test standing in for Kueue (suspended Jobs with Kueue's queue label) and for MultiKueue
// (spec.managedBy): never unsuspended by the operator, holding Forbid and their group's place, never ended by the
// start limit, explained by `why`, and run when the test admits one; (2) the 1.31+ terminal conditions: a Job whose
// success criteria are met (SuccessCriteriaMet) while a Pod still terminates holds Forbid and its group's place until
// Complete, and no two runs' Pods overlap; (3) the Job fields of a current template reach the created Job unchanged,
// and a field this cluster does not serve is refused at `kubectl apply`, named. Needs a 1.32+ cluster
// (spec.managedBy on by default; success policies and the SuccessCriteriaMet condition since 1.31).
import assert from "node:assert/strict";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, it } from "node:test";
import { createCertificateAuthority, issueServingCertificate } from "../../envtest/certs.ts";
import { nodeAssetsDir } from "../../envtest/node-cluster.ts";
import { atLeast, binaryVersion } from "../../envtest/versions.ts";
import { Client } from "../../runtime/client.ts";
import { eventually } from "../eventually.ts";
import { conditionTrue, finished, type K8sObject, recordOf, sleep } from "./cluster-tools.ts";
import { API_V1, CRONJOBS, e2eDescribe, e2eSuite, SCHEDULED_AT, type Suite } from "./suite.ts";

const POLL_MS = 1000;
const GROUP_LABEL = "batch.tutorial.kubebuilder.io/concurrency-group";
const KUEUE_QUEUE = "kueue.x-k8s.io/queue-name";
const MULTIKUEUE = "kueue.x-k8s.io/multikueue";
/** A schedule that never comes during a run: these CronJobs run only when asked (`kubectl cron run`). */
const NEVER = "0 0 1 1 *";

interface WhyJSON {
  verdict: string;
  cause?: string;
  evidence: string[];
  exitCode: number;
}

const ownerName = (o: K8sObject) => o.metadata.ownerReferences?.find((r) => r.kind === "CronJob")?.name;
const conditionSince = (o: K8sObject, type: string): number | undefined => {
  const c = (o.status?.conditions as { type: string; status: string; lastTransitionTime?: string }[] | undefined)?.find(
    (x) => x.type === type && x.status === "True",
  );
  return c?.lastTransitionTime ? Date.parse(c.lastTransitionTime) : undefined;
};

const version = binaryVersion(join(nodeAssetsDir(), "kube-apiserver"));
/** The release these cases need: spec.managedBy on by default (beta, 1.32), SuccessCriteriaMet (1.31). */
const NEEDS_MINOR = 32;
const tooOld = !atLeast(version, NEEDS_MINOR);

/** The template's container, replaced by `container` fields. */
function podSpecOf(m: K8sObject): Record<string, unknown> & { containers: Record<string, unknown>[] } {
  return (m.spec as { jobTemplate: { spec: { template: { spec: never } } } }).jobTemplate.spec.template.spec;
}
function jobSpecOf(m: K8sObject): Record<string, unknown> {
  return (m.spec as { jobTemplate: { spec: Record<string, unknown> } }).jobTemplate.spec;
}

/**
 * The test's stand-in for Kueue: a mutating admission webhook on this host for the Jobs of one namespace. A Job
 * of a CronJob named kueue-* is created suspended with Kueue's queue label (Kueue's own webhook does this for a
 * Job that names a queue); one of multikueue-* suspended with spec.managedBy MultiKueue's (the built-in Job
 * controller then leaves it to MultiKueue entirely). Everything else passes unchanged.
 */
async function startKueueStandIn(s: Suite, namespace: string): Promise<{ stop: () => Promise<void> }> {
  const ca = await createCertificateAuthority("current-e2e-kueue-ca");
  const cert = await issueServingCertificate(ca);
  const server: Server = createServer({ cert: cert.certPEM, key: cert.keyPEM }, (req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      const review = JSON.parse(body) as { request: { uid: string; object: K8sObject } };
      const job = review.request.object;
      const owner = ownerName(job) ?? "";
      const patch: unknown[] = [];
      if (owner.startsWith("kueue-")) {
        patch.push({ op: "add", path: "/spec/suspend", value: true });
        patch.push({
          op: "add",
          path: "/metadata/labels",
          value: { ...(job.metadata.labels ?? {}), [KUEUE_QUEUE]: "e2e-queue" },
        });
      } else if (owner.startsWith("multikueue-")) {
        patch.push({ op: "add", path: "/spec/suspend", value: true });
        patch.push({ op: "add", path: "/spec/managedBy", value: MULTIKUEUE });
      }
      const response: Record<string, unknown> = { uid: review.request.uid, allowed: true };
      if (patch.length > 0) {
        response.patchType = "JSONPatch";
        response.patch = Buffer.from(JSON.stringify(patch)).toString("base64");
      }
      res.setHeader("Content-Type", "application/json");
      res.end(JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const name = `current-e2e-kueue-${namespace}`;
  const config = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    metadata: { name },
    webhooks: [
      {
        name: "kueue-stand-in.e2e.cronjob-operator.test",
        clientConfig: {
          url: `https://127.0.0.1:${port}/mutate`,
          caBundle: Buffer.from(ca.certPEM).toString("base64"),
        },
        rules: [{ operations: ["CREATE"], apiGroups: ["batch"], apiVersions: ["v1"], resources: ["jobs"] }],
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } },
        sideEffects: "None",
        admissionReviewVersions: ["v1"],
        failurePolicy: "Fail",
        timeoutSeconds: 5,
      },
    ],
  };
  await s.kubectl(["apply", "-f", "-"], JSON.stringify(config));
  return {
    stop: async () => {
      await s.cluster.kubectl(["delete", "mutatingwebhookconfiguration", name, "--ignore-not-found"]);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

if (tooOld) {
  describe(
    `end to end: what only a current cluster shows (Kubernetes 1.${NEEDS_MINOR}+)`,
    {
      skip: `the node runs Kubernetes ${version.text}: Kueue's spec.managedBy, success policies and SuccessCriteriaMet need 1.${NEEDS_MINOR}+ (KUBE_SOURCE=FILE builds one; docs/development.md)`,
    },
    () => {},
  );
} else {
  e2eDescribe("end to end: Jobs queued by Kueue and MultiKueue, on a real node", { timeout: 600_000 }, () => {
    let standIn: { stop: () => Promise<void> } | undefined;
    const suite = e2eSuite({
      namespace: "current-queued",
      pollMs: POLL_MS,
      logLines: 120,
      setUp: async () => {
        standIn = await startKueueStandIn(suite, suite.namespace);
      },
      tearDown: async () => {
        await standIn?.stop();
      },
    });
    const { getJSON, cronJob, admit, jobsOf, list } = suite;
    const NS = suite.namespace;
    const get = (name: string) => getJSON(["get", CRONJOBS, name, "-n", NS]);
    const why = async (name: string): Promise<WhyJSON> => {
      const r = await suite.plugin(["why", name, "-o", "json"]);
      const d = JSON.parse(r.stdout) as WhyJSON;
      assert.equal(r.code, d.exitCode, `kubectl cron why ${name}: the exit code is the diagnosis' (${r.stderr})`);
      return d;
    };

    it("never unsuspends a queued Job: it holds Forbid and its group's place past the start limit, why says queued by whom and since when; admitted, it runs and its outcome is recorded", async () => {
      await admit({
        apiVersion: API_V1,
        kind: "ConcurrencyGroup",
        metadata: { name: "queue", namespace: NS },
        spec: { limit: 1 },
      });
      // The limit is past while the Jobs are queued (the slot 120 s after the first is held), and leaves the
      // admitted Job's Pod time to start on a node shared with the other suites (it once took over 45 s). Counted
      // from the Job's creation, the limit would end the admitted run at once: it counts from the admission.
      const every = { schedule: "*/1 * * * *", concurrencyPolicy: "Forbid", startTimeoutSeconds: 90 };
      await admit(cronJob("kueue-a", { ...every, concurrencyGroup: "queue" }, "echo admitted"));
      await admit(cronJob("multikueue-b", every, "echo never-here"));
      await admit(cronJob("waiter", { schedule: NEVER, concurrencyGroup: "queue" }, "echo waited"));

      // The first slot's Jobs, as the stand-in left them.
      const queued = await eventually(
        "kueue-a's first Job",
        async () => (await jobsOf("kueue-a"))[0],
        90_000,
        undefined,
        POLL_MS,
      );
      assert.equal(queued.spec?.suspend, true, "created suspended (the stand-in's mutation)");
      assert.equal(queued.metadata.labels?.[KUEUE_QUEUE], "e2e-queue");
      assert.equal(queued.metadata.labels?.[GROUP_LABEL], "queue", "it holds the group's place");
      const managed = await eventually(
        "multikueue-b's first Job",
        async () => (await jobsOf("multikueue-b"))[0],
        90_000,
        undefined,
        POLL_MS,
      );
      assert.equal(managed.spec?.managedBy, MULTIKUEUE);

      // A run asked for meanwhile waits for the group's one place, which the queued Job holds.
      const run = await suite.plugin(["run", "waiter", "--no-wait"]);
      assert.equal(run.code, 0, run.stderr);

      // The slot after next comes while both are still queued, past startTimeoutSeconds.
      const firstSlot = Date.parse(queued.metadata.annotations?.[SCHEDULED_AT] ?? "");
      for (const name of ["kueue-a", "multikueue-b"]) {
        const held = await eventually(
          `${name}'s slot 120 s after the first to be held by Forbid`,
          async () =>
            recordOf(await get(name)).find(
              (e) => Date.parse(e.scheduledTime ?? "") >= firstSlot + 120_000 && e.decision === "Held",
            ),
          210_000,
          undefined,
          POLL_MS,
        );
        assert.equal(held.reason, "ConcurrencyPolicyForbid", JSON.stringify(held));
      }
      for (const [name, job] of [
        ["kueue-a", queued],
        ["multikueue-b", managed],
      ] as const) {
        const jobs = await jobsOf(name);
        assert.deepEqual(
          jobs.map((j) => j.metadata.name),
          [job.metadata.name],
          `${name}: one Job, still there`,
        );
        const [now] = jobs;
        assert.equal(now!.spec?.suspend, true, `${name}'s Job: the operator never unsuspends it`);
        assert.ok(!finished(now!), `${name}'s Job was not ended (the start limit never ends a queued Job)`);
        assert.equal(now!.metadata.deletionTimestamp, undefined);
      }
      const pods = await list("pods", NS);
      assert.deepEqual(
        pods.map((p) => p.metadata.name),
        [],
        "a queued Job has no Pods",
      );
      assert.deepEqual(await jobsOf("waiter"), [], "the waiting run did not take the queued Job's place");

      // The newest slot is the one Forbid held; its answer names the queued Job, who holds it and since when.
      const a = await why("kueue-a");
      assert.match(
        JSON.stringify(a),
        /queued[^"]*suspended by Kueue \(queue e2e-queue\),? since \d{4}-/,
        JSON.stringify(a),
      );
      assert.match(JSON.stringify(a), new RegExp(queued.metadata.name), JSON.stringify(a));
      const b = await why("multikueue-b");
      assert.match(
        JSON.stringify(b),
        new RegExp(`queued[^"]*suspended by ${MULTIKUEUE.replaceAll(".", "\\.")},? since \\d{4}-`),
        JSON.stringify(b),
      );
      const w = await why("waiter");
      assert.notEqual(w.exitCode, 0, JSON.stringify(w));
      assert.match(JSON.stringify(w), /queue/, "why waiter names the group it waits for");

      // Kueue admits it: the test unsuspends it. It runs, and the record takes its outcome from its conditions.
      await suite.kubectl([
        "patch",
        "job",
        queued.metadata.name,
        "-n",
        NS,
        "--type=merge",
        "-p",
        '{"spec":{"suspend":false}}',
      ]);
      const done = await eventually(
        "kueue-a's admitted run to be recorded Complete",
        async () => recordOf(await get("kueue-a")).find((e) => e.job === queued.metadata.name && e.outcome),
        120_000,
        undefined,
        POLL_MS,
      );
      assert.equal(done.outcome?.result, "Complete", JSON.stringify(done));
      // The group's place is free: the waiting run gets it, after the admitted Job ended.
      const waited = await eventually(
        "the waiting run's Job",
        async () => (await jobsOf("waiter"))[0],
        90_000,
        undefined,
        POLL_MS,
      );
      const endedAt = conditionSince(
        (await jobsOf("kueue-a")).find((j) => j.metadata.name === queued.metadata.name)!,
        "Complete",
      );
      assert.ok(
        endedAt !== undefined && Date.parse(waited.metadata.creationTimestamp!) >= endedAt - 1000,
        "the waiting run started before the queued Job ended",
      );
    });
  });

  e2eDescribe(
    "end to end: the 1.31+ terminal conditions hold Forbid and the group's place, on a real node",
    { timeout: 600_000 },
    () => {
      let api: Client | undefined;
      const suite = e2eSuite({
        namespace: "current-terminal",
        pollMs: POLL_MS,
        logLines: 120,
        setUp: async () => {
          api = new Client(suite.cluster.kubeConfig, { userAgent: "current-e2e" });
        },
        tearDown: async () => {
          api?.close();
        },
      });
      const { getJSON, cronJob, admit, jobsOf } = suite;
      const NS = suite.namespace;
      const get = (name: string) => getJSON(["get", CRONJOBS, name, "-n", NS]);

      it("a Job with SuccessCriteriaMet whose Pod still terminates is running: the next slot is held by Forbid, a waiting run starts after Complete, no two runs' Pods overlap", async () => {
        await admit({
          apiVersion: API_V1,
          kind: "ConcurrencyGroup",
          metadata: { name: "one", namespace: NS },
          spec: { limit: 1 },
        });
        // Index 0 succeeds at once, which meets the success policy; index 1 ignores SIGTERM, so the Job controller's
        // deletion of it takes the whole grace period: SuccessCriteriaMet for ~70 s before Complete, across a slot.
        const finishing = cronJob(
          "finishing",
          { schedule: "*/1 * * * *", concurrencyPolicy: "Forbid", concurrencyGroup: "one" },
          'if [ "$JOB_COMPLETION_INDEX" = 0 ]; then exit 0; fi; trap "" TERM; while true; do sleep 1; done',
        );
        Object.assign(jobSpecOf(finishing), {
          completionMode: "Indexed",
          completions: 2,
          parallelism: 2,
          successPolicy: { rules: [{ succeededIndexes: "0" }] },
        });
        podSpecOf(finishing).terminationGracePeriodSeconds = 70;
        await admit(finishing);
        await admit(cronJob("partner", { schedule: NEVER, concurrencyGroup: "one" }, "sleep 3"));

        // Every second: the group's unfinished Jobs and the Jobs whose Pods are Running.
        const samples: { at: number; unfinished: string[]; running: string[]; criteriaMet: string[] }[] = [];
        const errors: string[] = [];
        let stopped = false;
        const sampling = (async () => {
          while (!stopped) {
            const at = Date.now();
            try {
              const [jobs, pods] = await Promise.all([
                api!.request<{ items: K8sObject[] }>("GET", `/apis/batch/v1/namespaces/${NS}/jobs`, {
                  timeoutMs: 10_000,
                }),
                api!.request<{ items: K8sObject[] }>("GET", `/api/v1/namespaces/${NS}/pods`, { timeoutMs: 10_000 }),
              ]);
              samples.push({
                at,
                unfinished: jobs.items.filter((j) => !finished(j)).map((j) => j.metadata.name),
                running: [
                  ...new Set(
                    pods.items
                      .filter((p) => p.status?.phase === "Running")
                      .map((p) => p.metadata.labels?.["job-name"] ?? p.metadata.name),
                  ),
                ],
                criteriaMet: jobs.items
                  .filter((j) => conditionTrue(j, "SuccessCriteriaMet") && !finished(j))
                  .map((j) => j.metadata.name),
              });
            } catch (err) {
              errors.push(String(err));
            }
            await sleep(Math.max(0, at + 1000 - Date.now()));
          }
        })();
        try {
          // The first run meets its success criteria; then a run is asked for in the group.
          const first = await eventually(
            "finishing's first Job to meet its success criteria while a Pod terminates",
            async () => (await jobsOf("finishing")).find((j) => conditionTrue(j, "SuccessCriteriaMet") && !finished(j)),
            150_000,
            undefined,
            POLL_MS,
          );
          const run = await suite.plugin(["run", "partner", "--no-wait"]);
          assert.equal(run.code, 0, run.stderr);
          const slot = Date.parse(first.metadata.annotations?.[SCHEDULED_AT] ?? "");
          const held = await eventually(
            "finishing's next slot to be decided",
            async () =>
              recordOf(await get("finishing")).find((e) => Date.parse(e.scheduledTime ?? "") === slot + 60_000),
            150_000,
            undefined,
            POLL_MS,
          );
          const partnerJob = await eventually(
            "partner's Job",
            async () => (await jobsOf("partner"))[0],
            150_000,
            undefined,
            POLL_MS,
          );
          const firstDone = await eventually(
            "finishing's first Job to be Complete",
            async () =>
              conditionSince(
                (await jobsOf("finishing")).find((j) => j.metadata.name === first.metadata.name)!,
                "Complete",
              ),
            150_000,
            undefined,
            POLL_MS,
          );
          await eventually(
            "partner's Job to end",
            async () => finished((await jobsOf("partner"))[0]!),
            120_000,
            undefined,
            POLL_MS,
          );
          assert.equal(held.decision, "Held", JSON.stringify(held));
          assert.match(held.reason, /^(ConcurrencyPolicyForbid|ConcurrencyGroup(Full|Queue))$/, JSON.stringify(held));
          assert.ok(
            Date.parse(partnerJob.metadata.creationTimestamp!) >= firstDone - 1000,
            `the waiting run's Job (${partnerJob.metadata.creationTimestamp}) was created before the finishing Job was Complete (${new Date(firstDone).toISOString()})`,
          );
        } finally {
          stopped = true;
          await sampling;
        }
        assert.ok(
          samples.some((s) => s.criteriaMet.length > 0),
          "no sample saw a Job with SuccessCriteriaMet and not yet Complete",
        );
        const over = samples.filter((s) => s.unfinished.length > 1 || s.running.length > 1);
        assert.deepEqual(
          over.map(
            (s) =>
              `${new Date(s.at).toISOString()}: unfinished ${s.unfinished.join(",")}; Pods running for ${s.running.join(",")}`,
          ),
          [],
          "two runs of the group (limit 1) at once",
        );
        assert.ok(
          samples.length > 60 && errors.length < samples.length / 10,
          `sampling: ${samples.length} samples, errors: ${errors.slice(0, 3).join("; ")}`,
        );
      });
    },
  );

  e2eDescribe(
    "end to end: a current Job template reaches its Jobs unchanged, on a real node",
    { timeout: 300_000 },
    () => {
      const suite = e2eSuite({ namespace: "current-fields", pollMs: POLL_MS, logLines: 60 });
      const { cronJob, admit, jobsOf } = suite;
      const NS = suite.namespace;

      it("podFailurePolicy, successPolicy, backoffLimitPerIndex and podReplacementPolicy reach the created Job as written", async () => {
        const m = cronJob("fields", { schedule: NEVER }, 'exit "$JOB_COMPLETION_INDEX"');
        const fields = {
          completionMode: "Indexed",
          completions: 2,
          parallelism: 2,
          backoffLimitPerIndex: 1,
          maxFailedIndexes: 1,
          podReplacementPolicy: "Failed",
          podFailurePolicy: {
            rules: [
              { action: "FailIndex", onExitCodes: { containerName: "run", operator: "In", values: [42] } },
              { action: "Ignore", onPodConditions: [{ type: "DisruptionTarget", status: "True" }] },
            ],
          },
          successPolicy: { rules: [{ succeededIndexes: "0", succeededCount: 1 }] },
        };
        const spec = jobSpecOf(m);
        delete spec.backoffLimit; // with backoffLimitPerIndex, the limit is per index
        Object.assign(spec, fields);
        await admit(m);
        const run = await suite.plugin(["run", "fields"]);
        assert.equal(run.code, 0, run.stderr);
        const job = await eventually(
          "the run's Job",
          async () => (await jobsOf("fields"))[0],
          90_000,
          undefined,
          POLL_MS,
        );
        const got = job.spec as Record<string, unknown>;
        for (const [k, v] of Object.entries(fields))
          assert.deepEqual(got[k], v, `spec.${k} of Job ${job.metadata.name}`);
      });

      it("refuses at kubectl apply a Job field this cluster does not serve (lifecycle.stopSignal, gated off), naming it", async () => {
        const m = cronJob("stop-signal", { schedule: NEVER }, "true");
        podSpecOf(m).containers[0]!.lifecycle = { stopSignal: "SIGUSR1" };
        const r = await suite.cluster.kubectl(["apply", "-f", "-"], JSON.stringify(m));
        assert.notEqual(r.code, 0, r.stdout);
        assert.match(
          r.stderr,
          /spec\.jobTemplate\.spec\.template\.spec\.containers\[0\]\.lifecycle\.stopSignal: Forbidden: this cluster's Job API has no such field/,
        );
        const gone = await suite.cluster.kubectl(["get", CRONJOBS, "stop-signal", "-n", NS]);
        assert.notEqual(gone.code, 0, "the refused CronJob must not exist");
      });
    },
  );
}
