// End to end, as a user runs it: a local cluster with a real node (kubelet + containerd), the operator's
// image built without a Docker engine and loaded into the node, `make deploy`, and CronJobs whose Jobs run
// real Pods. Every assertion reads the cluster's real state. Needs root (the node); `make test-e2e`.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { request } from "node:https";
import { join } from "node:path";
import { it } from "node:test";
import { eventually } from "../eventually.ts";
import { IMG, type K8sObject, conditionTrue, exitCodeOf, killedBy, ready, recordOf } from "./cluster-tools.ts";
import { CRONJOBS, SCHEDULED_AT, SYSTEM_NS, e2eDescribe, e2eSuite } from "./suite.ts";

const NS = "e2e";
/** How often eventually() polls: each poll is a kubectl process or two. */
const POLL_MS = 1000;

e2eDescribe(
  "end to end: the operator deployed from its image on a cluster with a real node",
  { timeout: 1_500_000 },
  () => {
    const suite = e2eSuite({ namespace: NS, pollMs: POLL_MS });
    const { kubectl, getJSON, list, make, admit, jobsOf, waitForEvent, managerPods, readyManagerPods } = suite;

    /** Our CronJob in v1 whose Pod runs `command` (sh -c); concurrencyPolicy Allow unless `spec` says otherwise. */
    const cronJob = (name: string, spec: Record<string, unknown>, command: string) =>
      suite.cronJob(name, { concurrencyPolicy: "Allow", ...spec }, command);
    /** The CronJob's only Job, once its Pod really runs. */
    function firstJobRunning(name: string): Promise<K8sObject> {
      return eventually(
        `the first Job of ${name} with its Pod running`,
        async () => {
          const jobs = await jobsOf(name);
          if (jobs.length !== 1) return undefined;
          const pods = await list("pods", NS, `job-name=${jobs[0]!.metadata.name}`);
          return pods[0]?.status?.phase === "Running" ? jobs[0] : undefined;
        },
        90_000,
        undefined,
        POLL_MS,
      );
    }
    async function suspend(name: string): Promise<void> {
      await kubectl(["patch", CRONJOBS, name, "-n", NS, "--type=merge", "-p", '{"spec":{"suspend":true}}']);
    }

    it("runs the manager from its image, Ready, under its own ServiceAccount, with the restricted securityContext", async () => {
      // Two: the default deploy is highly available.
      const pods = await readyManagerPods(2, 60_000, POLL_MS);
      assert.notEqual(pods[0]!.status!.podIP, pods[1]!.status!.podIP, "each replica has its own pod IP");
      const pod = pods[0]!;
      assert.notEqual(pod.spec!.hostNetwork, true);
      const spec = pod.spec!;
      assert.equal(spec.serviceAccountName, "cronjob-operator-controller-manager");
      assert.equal(spec.securityContext.runAsNonRoot, true);
      assert.equal(spec.securityContext.seccompProfile.type, "RuntimeDefault");
      // The manager and the Pod's second webhook server: one image, the restricted profile, both Ready.
      assert.deepEqual(
        spec.containers.map((c: { name: string }) => c.name),
        ["manager", "webhooks"],
      );
      for (const c of spec.containers) {
        assert.equal(c.image, IMG, c.name);
        const sc = c.securityContext;
        assert.equal(sc.readOnlyRootFilesystem, true, c.name);
        assert.equal(sc.allowPrivilegeEscalation, false, c.name);
        assert.deepEqual(sc.capabilities.drop, ["ALL"], c.name);
      }
      assert.ok(
        (pod.status!.containerStatuses as { ready: boolean }[]).every((c) => c.ready),
        "every container of the replica is Ready",
      );
      // The process really runs as 65532: read its status through the node.
      const status = await suite.cluster.kubectl([
        "-n",
        SYSTEM_NS,
        "exec",
        pod.metadata.name,
        "-c",
        "manager",
        "--",
        "node",
        "-e",
        "console.log(process.getuid(), process.getgid())",
      ]);
      assert.equal(status.stdout.trim(), "65532 65532", status.stderr);
    });

    it("serves metrics to an authorised scraper over HTTPS and refuses an anonymous one", async () => {
      await kubectl(["-n", NS, "create", "serviceaccount", "scraper"]);
      await kubectl([
        "create",
        "clusterrolebinding",
        "e2e-scraper",
        "--clusterrole=cronjob-operator-metrics-reader",
        `--serviceaccount=${NS}:scraper`,
      ]);
      // TokenRequest (kubectl create token): since 1.24 no token Secret is created for a ServiceAccount.
      const token = await suite.cluster.env.serviceAccountToken(NS, "scraper", 600);
      const endpoints = await suite.serviceEndpointIPs("cronjob-operator-controller-manager-metrics-service");
      const ip = endpoints[0];
      assert.ok(ip, `the metrics Service has an endpoint: ${JSON.stringify(endpoints)}`);
      const scrape = (auth?: string) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = request(
            {
              host: ip,
              port: 8443,
              path: "/metrics",
              rejectUnauthorized: false,
              headers: auth ? { authorization: `Bearer ${auth}` } : {},
            },
            (res) => {
              let body = "";
              res.on("data", (d: Buffer) => (body += d.toString()));
              res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
            },
          );
          req.on("error", reject);
          req.end();
        });
      const ok = await eventually(
        "an authorised scrape",
        async () => {
          const r = await scrape(token);
          return r.status === 200 ? r : undefined;
        },
        30_000,
        undefined,
        POLL_MS,
      );
      assert.match(ok.body, /^controller_runtime_reconcile_total\{controller="cronjob",result="success"\} \d+/m);
      assert.match(ok.body, /^workqueue_depth\{/m);
      const anonymous = await scrape();
      assert.ok([401, 403].includes(anonymous.status), `anonymous scrape answered ${anonymous.status}`);
      const wrong = await scrape("not-a-token");
      assert.ok([401, 403].includes(wrong.status), `bad token answered ${wrong.status}`);
    });

    it("refuses a bad CronJob through the webhook reached by its Service, and defaults a good one", async () => {
      const bad = JSON.stringify(cronJob("never-fires", { schedule: "0 0 30 2 *" }, "true"));
      const res = await eventually(
        "the webhook to answer",
        async () => {
          const r = await suite.cluster.kubectl(["apply", "-f", "-"], bad);
          // Only the validating webhook knows a schedule never fires (the CRD schema cannot), and it
          // answers with a 422 Status that kubectl prints as is.
          return /never fires/.test(r.stderr) ? r : undefined;
        },
        60_000,
        undefined,
        POLL_MS,
      );
      assert.notEqual(res.code, 0);
      assert.match(res.stderr, /spec\.schedule: Invalid value: "0 0 30 2 \*": never fires/);
      await assert.rejects(kubectl(["get", CRONJOBS, "never-fires", "-n", NS]), /NotFound|not found/);
      // The Service really routes to the manager: its endpoints hold both replicas' addresses (every replica
      // serves the webhooks, not only the leader).
      const pods = await managerPods();
      assert.deepEqual(
        await suite.serviceEndpointIPs("cronjob-operator-webhook-service"),
        pods.map((p) => p.status!.podIP).sort(),
      );
    });

    it("runs a CronJob's Job Pod to Complete, records lastSuccessfulTime, and shows the output in kubectl logs", async () => {
      await admit(cronJob("hello", { schedule: "@every 10s" }, "echo hello from e2e"));
      const defaulted = await getJSON(["get", CRONJOBS, "hello", "-n", NS]);
      assert.equal(defaulted.spec!.successfulJobsHistoryLimit, 3, "the mutating webhook defaulted it");
      // One run is enough, and the Event budget needs it: a CronJob's routine Events (SuccessfulCreate, SawCompletedJob)
      // are written three at once, then one per 5 minutes. Left at @every 10s on a node slower to start Pods than the
      // schedule, three creates come before the first end and its SawCompletedJob is over budget, as designed.
      await eventually("hello's first Job", async () => (await jobsOf("hello"))[0], 90_000, undefined, POLL_MS);
      await suspend("hello");
      const done = await eventually(
        "a completed Job",
        async () => (await jobsOf("hello")).find((j) => conditionTrue(j, "Complete")),
        // The concurrent suites' first Pods start together: a CI machine slower than ours took over 90 s for them.
        240_000,
        () => suite.podsSay(NS, "hello-"),
        POLL_MS,
      );
      const pods = await list("pods", NS, `job-name=${done.metadata.name}`);
      assert.equal(pods[0]?.status?.phase, "Succeeded");
      assert.match(await kubectl(["logs", "-n", NS, `job/${done.metadata.name}`]), /hello from e2e/);
      const cj = await eventually(
        "status.lastSuccessfulTime",
        async () => {
          const c = await getJSON(["get", CRONJOBS, "hello", "-n", NS]);
          return c.status?.lastSuccessfulTime ? c : undefined;
        },
        60_000,
        undefined,
        POLL_MS,
      );
      assert.ok(new Date(cj.status!.lastSuccessfulTime).getTime() >= new Date(done.status!.startTime).getTime());
      await waitForEvent(NS, "hello", /^SuccessfulCreate: /);
      await waitForEvent(NS, "hello", /^SawCompletedJob: /);
    });

    it("sets Degraded=LastJobFailed when the Job's Pod fails", async () => {
      await admit(cronJob("fails", { schedule: "@every 10s" }, "echo failing; exit 3"));
      await eventually(
        "a failed Job",
        async () => (await jobsOf("fails")).find((j) => conditionTrue(j, "Failed")),
        90_000,
        undefined,
        POLL_MS,
      );
      const cj = await eventually(
        "Degraded=LastJobFailed",
        async () => {
          const c = await getJSON(["get", CRONJOBS, "fails", "-n", NS]);
          const d = (c.status?.conditions as { type: string; status: string; reason: string }[] | undefined)?.find(
            (x) => x.type === "Degraded",
          );
          return d?.status === "True" && d.reason === "LastJobFailed" ? c : undefined;
        },
        60_000,
        undefined,
        POLL_MS,
      );
      assert.ok(cj);
      await suspend("fails");
    });

    it("Forbid: no second Job while the first one's Pod is really still running", async () => {
      await admit(cronJob("forbid", { schedule: "@every 5s", concurrencyPolicy: "Forbid" }, "sleep 30"));
      const first = await firstJobRunning("forbid");
      // Two more slots decided while the Pod runs: the record holds the second one after the first Job's (each held
      // slot's entry names the Job it waits behind).
      const firstSlot = Date.parse(first.metadata.annotations![SCHEDULED_AT]!);
      await eventually(
        "a slot 10 s after the first Job's held behind it (Forbid)",
        async () =>
          recordOf(await getJSON(["get", CRONJOBS, "forbid", "-n", NS])).some(
            (e) =>
              e.decision === "Held" &&
              e.reason === "ConcurrencyPolicyForbid" &&
              e.blockedBy === first.metadata.name &&
              Date.parse(e.scheduledTime ?? "") >= firstSlot + 10_000,
          ),
        60_000,
        undefined,
        POLL_MS,
      );
      const jobs = await jobsOf("forbid");
      assert.deepEqual(
        jobs.map((j) => j.metadata.name),
        [first.metadata.name],
      );
      await waitForEvent(NS, "forbid", /^JobAlreadyActive: /);
      await kubectl(["delete", CRONJOBS, "forbid", "-n", NS, "--wait=false"]);
    });

    it("Replace: the running Job and its Pod are deleted, and the new slot's Job runs", async () => {
      // 30 s apart: the first Job's Pod must run before the next slot replaces it, and on a node shared with the
      // other suites a Pod can take more than 10 s to start.
      await admit(cronJob("replace", { schedule: "@every 30s", concurrencyPolicy: "Replace" }, "sleep 300"));
      // A Job whose Pod runs, whichever slot's: a Pod that took longer than a slot to start was replaced before it
      // ran (CI's loaded node once took over 30 s for every one within 90 s), and the next slot's Pod may run.
      const slotOf = (j: K8sObject) => Date.parse(j.metadata.annotations![SCHEDULED_AT]!);
      const first = await eventually(
        "a Job of replace with its Pod running",
        async () => {
          for (const j of (await jobsOf("replace")).filter((x) => !x.metadata.deletionTimestamp)) {
            const pods = await list("pods", NS, `job-name=${j.metadata.name}`);
            if (pods.some((p) => p.status?.phase === "Running" && !p.metadata.deletionTimestamp)) return j;
          }
          return undefined;
        },
        180_000,
        undefined,
        POLL_MS,
      );
      const second = await eventually(
        "the next slot's Job",
        async () => (await jobsOf("replace")).find((j) => slotOf(j) > slotOf(first) && !j.metadata.deletionTimestamp),
        60_000,
        undefined,
        POLL_MS,
      );
      // The operator's part: the replaced Job deleted, and its Pod with it (Background propagation: the garbage
      // collector marks the Pod deleted). The kubelet then stops the container on its own time, which on a node
      // shared with the other suites can take longer: a separate, wider wait.
      await eventually(
        "the replaced Job gone and its Pod deleted",
        async () => {
          const jobs = await list("jobs", NS);
          const pods = await list("pods", NS, `job-name=${first.metadata.name}`);
          return !jobs.some((j) => j.metadata.name === first.metadata.name) &&
            pods.every((p) => p.metadata.deletionTimestamp)
            ? true
            : undefined;
        },
        60_000,
        async () => {
          const named = (o: { metadata: { name: string; deletionTimestamp?: string } }) =>
            `${o.metadata.name}${o.metadata.deletionTimestamp ? " (deleting)" : ""}`;
          const jobs = (await list("jobs", NS)).map(named);
          const pods = (await list("pods", NS, `job-name=${first.metadata.name}`)).map(named);
          return `\nJobs: ${jobs.join(", ")}\nits Pods: ${pods.join(", ")}`;
        },
        POLL_MS,
      );
      await eventually(
        "the replaced Job's Pod gone from the node",
        async () => ((await list("pods", NS, `job-name=${first.metadata.name}`)).length === 0 ? true : undefined),
        180_000,
        undefined,
        POLL_MS,
      );
      const cj = await getJSON(["get", CRONJOBS, "replace", "-n", NS]);
      const active = (cj.status?.active as { name: string }[] | undefined)?.map((a) => a.name) ?? [];
      assert.ok(active.length <= 1, `at most one active Job: ${active.join(", ")}`);
      assert.ok(slotOf(second) > slotOf(first));
      await kubectl(["delete", CRONJOBS, "replace", "-n", NS, "--wait=false"]);
    });

    it("kubectl cron: run now (its Pod runs to Complete), history, next, suspend and resume", async () => {
      // A schedule that will not fire during the test: every Job seen here is the manual one.
      await admit(cronJob("manual", { schedule: "0 0 1 1 *" }, "echo manual run"));
      const pluginDir = join(suite.cluster.dir, "plugin-bin");
      const installed = await make(["install-plugin", `PLUGIN_DIR=${pluginDir}`]);
      assert.equal(installed.code, 0, installed.out);
      process.env.PATH = `${pluginDir}:${process.env.PATH ?? ""}`;
      // As a user types it: kubectl finds the plugin on PATH (no flags may come before a plugin's name).
      const cron = (args: string[]) =>
        new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
          execFile(
            "kubectl",
            ["cron", ...args, "-n", NS],
            // SIGKILL: a process hung in its exit ignores SIGTERM (its handler never runs).
            {
              env: { ...process.env, KUBECONFIG: suite.cluster.kubeconfigPath },
              timeout: 120_000,
              killSignal: "SIGKILL",
            },
            (err, stdout, stderr) => resolve({ code: exitCodeOf(err), stdout, stderr: stderr + killedBy(err) }),
          );
        });

      const run = await cron(["run", "manual", "--timeout=90s"]);
      assert.equal(run.code, 0, run.stderr);
      const created = /^job\.batch\/(manual-m[0-9a-f]{8}) created$/m.exec(run.stdout);
      assert.ok(created, run.stdout);
      const jobName = created[1]!;
      const job = await eventually(
        "the manual Job to complete",
        async () => (await jobsOf("manual")).find((j) => j.metadata.name === jobName && conditionTrue(j, "Complete")),
        90_000,
        undefined,
        POLL_MS,
      );
      assert.equal(job.metadata.annotations?.["cronjob.kubernetes.io/instantiate"], "manual");
      assert.match(await kubectl(["logs", "-n", NS, `job/${jobName}`]), /manual run/);
      await waitForEvent(
        NS,
        "manual",
        new RegExp(`^RunNow: Created job ${jobName} for run-now request ".+", requested by admin`),
      );

      const history = await cron(["history", "manual", "-o", "json"]);
      assert.equal(history.code, 0, history.stderr);
      const items = (JSON.parse(history.stdout) as { items: { name: string; trigger: string; result: string }[] })
        .items;
      assert.deepEqual(
        items.map((i) => [i.name, i.trigger, i.result]),
        [[jobName, "manual", "Complete"]],
      );
      const st = await getJSON(["get", CRONJOBS, "manual", "-n", NS]);
      assert.equal(st.status?.lastScheduleTime, undefined, "a manual run has no slot");
      assert.ok(st.status?.lastRunNowRequest);

      const next = await cron(["next", "manual", "--count", "2", "-o", "json"]);
      assert.equal(next.code, 0, next.stderr);
      const times = (JSON.parse(next.stdout) as { times: { utc: string }[] }).times;
      assert.equal(times.length, 2);
      assert.match(times[0]!.utc, /^\d{4}-01-01T00:00:00Z$/);

      assert.equal((await cron(["suspend", "manual"])).code, 0);
      assert.equal((await getJSON(["get", CRONJOBS, "manual", "-n", NS])).spec!.suspend, true);
      assert.match((await cron(["suspend", "manual"])).stdout, /already suspended/);
      assert.equal((await cron(["resume", "manual"])).code, 0);
      const missing = await cron(["run", "no-such-cronjob"]);
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /not found in namespace "e2e"/);
    });

    it("deleting a CronJob garbage-collects its Jobs and their Pods", async () => {
      const jobs = await jobsOf("hello");
      assert.ok(jobs.length > 0);
      const names = new Set(jobs.map((j) => j.metadata.name));
      await kubectl(["delete", CRONJOBS, "hello", "-n", NS]);
      await eventually(
        "the Jobs and Pods gone",
        async () => {
          const left = (await list("jobs", NS)).filter((j) => names.has(j.metadata.name));
          const pods = (await list("pods", NS)).filter((p) => names.has(p.metadata.labels?.["job-name"] ?? ""));
          return left.length === 0 && pods.length === 0;
        },
        90_000,
        undefined,
        POLL_MS,
      );
    });
  },
);

// Disruptive: the leader's Pod is deleted (run.ts runs it after the concurrent suites).
e2eDescribe(
  "end to end: a leader handover on a cluster with a real node",
  { timeout: 600_000, disruptive: "e2e: the leader's Pod deleted" },
  () => {
    const suite = e2eSuite({ namespace: `${NS}-handover`, pollMs: POLL_MS });
    const { kubectl, admit, jobsOf, managerPods, leaseHolder, leaderPod } = suite;
    const cronJob = (name: string, spec: Record<string, unknown>, command: string) =>
      suite.cronJob(name, { concurrencyPolicy: "Allow", ...spec }, command);
    // Retried as `admit` is: right after a handover the API server may still send an admission call to the replica
    // that went away (its endpoint not yet removed), which times out; a user's retry goes through.
    const suspend = (name: string) =>
      eventually(
        `${name} suspended`,
        () =>
          kubectl([
            "patch",
            CRONJOBS,
            name,
            "-n",
            suite.namespace,
            "--type=merge",
            "-p",
            '{"spec":{"suspend":true}}',
          ]).then(() => true),
        60_000,
        undefined,
        POLL_MS,
      );

    it("a leader handover (the leader's Pod deleted) creates no duplicate Job and keeps scheduling", async () => {
      await admit(cronJob("handover", { schedule: "@every 5s", successfulJobsHistoryLimit: 100 }, "true"));
      await eventually(
        "two runs before the handover",
        async () => (await jobsOf("handover")).length >= 2,
        60_000,
        undefined,
        POLL_MS,
      );
      const { pod: old, holder: before } = await leaderPod();
      await kubectl(["-n", SYSTEM_NS, "delete", "pod", old.metadata.name, "--wait=false"]);
      const successor = await eventually(
        "a new Ready manager pod",
        async () => {
          const pods = await managerPods();
          return pods.find((p) => p.metadata.name !== old.metadata.name && ready(p));
        },
        120_000,
        undefined,
        POLL_MS,
      );
      const leaderSince = Date.now();
      await eventually(
        "runs after the handover",
        async () => {
          const jobs = await jobsOf("handover");
          return jobs.some((j) => new Date(j.metadata.annotations![SCHEDULED_AT]!).getTime() > leaderSince)
            ? jobs
            : undefined;
        },
        60_000,
        undefined,
        POLL_MS,
      );
      const jobs = await jobsOf("handover");
      const slots = jobs.map((j) => j.metadata.annotations![SCHEDULED_AT]!);
      assert.equal(new Set(slots).size, slots.length, `one Job per scheduled time: ${slots.sort().join(", ")}`);
      assert.ok(successor);
      const after = await leaseHolder();
      assert.ok(after && after !== before, `a new leader holds the lease (before ${before}, after ${after})`);
      await suspend("handover");
    });
  },
);

// Disruptive: everything the operator installed is removed (run.ts runs it last but Helm, which installs its own).
e2eDescribe(
  "end to end: make undeploy on a cluster with a real node",
  { timeout: 600_000, disruptive: "e2e: make undeploy" },
  () => {
    const suite = e2eSuite({ namespace: `${NS}-undeploy`, pollMs: POLL_MS });
    const { kubectl, make } = suite;

    it("make undeploy removes everything and exits 0", async () => {
      await kubectl(["delete", CRONJOBS, "--all", "-A", "--wait=true"]);
      const res = await make(["undeploy", "OVERLAY=config/local", `IMG=${IMG}`]);
      assert.equal(res.code, 0, res.out);
      await eventually(
        "the operator's namespace gone",
        async () => {
          const r = await suite.cluster.kubectl(["get", "namespace", SYSTEM_NS]);
          return r.code !== 0 && /NotFound|not found/.test(r.stderr);
        },
        120_000,
        undefined,
        POLL_MS,
      );
      assert.equal((await suite.cluster.kubectl(["get", "crd", CRONJOBS])).code, 1);
      const leftovers = await kubectl([
        "get",
        "clusterroles,clusterrolebindings,mutatingwebhookconfigurations,validatingwebhookconfigurations",
        "-o",
        "name",
      ]);
      assert.deepEqual(
        leftovers.split("\n").filter((l) => l.includes("cronjob-operator")),
        [],
      );
      // A second undeploy (nothing left) is fine too.
      const again = await make(["undeploy", "OVERLAY=config/local", `IMG=${IMG}`]);
      assert.equal(again.code, 0, again.out);
    });
  },
);
