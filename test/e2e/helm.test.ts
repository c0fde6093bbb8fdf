// End to end with the Helm chart (dist/chart) and a real helm (hack/setup-helm, or $HELM): `helm install` of
// the operator's image on a cluster with a real node, a CronJob whose Job runs, `helm upgrade` with a changed
// value rolled out while CronJobs are applied continuously (none may be refused), and `helm uninstall`, which
// removes everything the release made but the CRD (and so the CronJobs). Needs root (the node); `make test-e2e`.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { it } from "node:test";
import { parseAllDocuments } from "yaml";
import { PROJECT_ROOT } from "../../envtest/index.ts";
import { Client } from "../../runtime/client.ts";
import { eventually } from "../eventually.ts";
import { IMG, type Result, conditionTrue, ready, sleep } from "./cluster-tools.ts";
import { CRONJOBS, e2eDescribe, e2eSuite } from "./suite.ts";

const CHART = join(PROJECT_ROOT, "dist", "chart");
// A release name, fullnameOverride and namespace of a platform team's choosing, none the default install's: the
// plugin finds the operator where the release put it.
const RELEASE = "nightly-ops";
const RELEASE_NS = "platform-cron";
const NS = "helm-e2e";
const DEPLOYMENT = "nightly-ops-controller-manager";
const CRD = "customresourcedefinition.apiextensions.k8s.io/cronjobs.batch.tutorial.kubebuilder.io";
/** The CRDs the chart installs and keeps on uninstall (crd.keep), by `kubectl get -o name`. */
const CRDS = [
  CRD,
  "customresourcedefinition.apiextensions.k8s.io/concurrencygroups.batch.tutorial.kubebuilder.io",
  "customresourcedefinition.apiextensions.k8s.io/exclusioncalendars.batch.tutorial.kubebuilder.io",
];
/** The pace of applies during the upgrade the issue asks for, at least. */
const MIN_APPLIES_PER_SECOND = 5;

/** What helm prints as JSON, and the release's manifests. */
type Obj = Record<string, any>;

function helmPath(): string {
  if (process.env.HELM) return process.env.HELM;
  const out = execFileSync(join(PROJECT_ROOT, "hack", "setup-helm"), { encoding: "utf8" })
    .trim()
    .split("\n");
  return out.at(-1)!;
}

e2eDescribe(
  "end to end: the Helm chart installed, upgraded and uninstalled on a cluster with a real node",
  { timeout: 1_500_000, disruptive: "helm: the chart's own install" },
  () => {
    let helmBin: string;
    let helmHome: string;
    // The chart installs the operator (the first test): the fixture loads its image only.
    const suite = e2eSuite({
      namespace: NS,
      // eventually()'s default.
      pollMs: 250,
      install: "image",
      managerNamespace: RELEASE_NS,
      alsoNamespaces: [RELEASE_NS],
      setUp: async () => {
        helmBin = helmPath();
        helmHome = mkdtempSync(join(tmpdir(), "helm-e2e-"));
      },
      tearDown: async () => {
        if (helmHome) rmSync(helmHome, { recursive: true, force: true });
      },
    });
    const { kubectl, getJSON, list, cronJob, admit, jobsOf, createNamespace, managerPods, readyManagerPods } = suite;

    function helm(args: string[]): Promise<Result> {
      return new Promise((resolve) => {
        const child = spawn(helmBin, args, {
          env: {
            ...process.env,
            KUBECONFIG: suite.cluster.kubeconfigPath,
            // helm's own config, cache and data stay out of the user's home.
            HELM_CONFIG_HOME: join(helmHome, "config"),
            HELM_CACHE_HOME: join(helmHome, "cache"),
            HELM_DATA_HOME: join(helmHome, "data"),
          },
          stdio: ["ignore", "pipe", "pipe"],
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        child.once("exit", (code) => resolve({ code: code ?? 1, stdout, stderr }));
      });
    }
    async function mustHelm(args: string[]): Promise<string> {
      const r = await helm(args);
      assert.equal(r.code, 0, `helm ${args.join(" ")}:\n${r.stderr || r.stdout}`);
      return r.stdout;
    }
    async function rollout(): Promise<void> {
      await kubectl(["-n", RELEASE_NS, "rollout", "status", `deploy/${DEPLOYMENT}`, "--timeout=240s"]);
    }
    /** A CronJob firing every minute, for the release's webhooks to admit. */
    const everyMinute = (name: string, o: { suspend: boolean; annotations?: Record<string, string> }) =>
      cronJob(
        { name, ...(o.annotations ? { annotations: o.annotations } : {}) },
        { schedule: "*/1 * * * *", suspend: o.suspend, successfulJobsHistoryLimit: 1 },
        "echo hello from helm",
      );
    /**
     * The CronJob whose Job the install runs: its first slot 15 s after it is made, not at the next whole minute (30 s
     * later on average, on the run's critical path); history keeps 3, so the Complete Job read is not the one cleaned
     * up before its log is.
     */
    const HELLO = "hello";
    const hello = cronJob(HELLO, { schedule: "@every 15s", successfulJobsHistoryLimit: 3 }, "echo hello from helm");

    it("helm install: the manager runs from its image, and a CronJob's Job runs", async () => {
      const colon = IMG.lastIndexOf(":");
      const api = suite.cluster.apiServerForPods();
      // No kube-proxy on this node: the manager reaches the API server where the cluster forwards it for pods.
      await mustHelm([
        "install",
        RELEASE,
        CHART,
        "--namespace",
        RELEASE_NS,
        "--create-namespace",
        "--set",
        `fullnameOverride=${RELEASE}`,
        "--set",
        `image.repository=${IMG.slice(0, colon)}`,
        "--set-string",
        `image.tag=${IMG.slice(colon + 1)}`,
        "--set",
        "image.pullPolicy=Never",
        "--set",
        "env[0].name=KUBERNETES_SERVICE_HOST",
        "--set-string",
        `env[0].value=${api.host}`,
        "--set",
        "env[1].name=KUBERNETES_SERVICE_PORT",
        "--set-string",
        `env[1].value=${api.port}`,
      ]);
      await rollout();
      const pods = await readyManagerPods(2, 180_000, suite.pollMs);
      assert.equal(pods[0]!.spec!.containers[0].image, IMG);
      const release = JSON.parse(await mustHelm(["list", "-n", RELEASE_NS, "-o", "json"])) as Obj[];
      assert.deepEqual(
        release.map((r) => [r.name, r.status]),
        [[RELEASE, "deployed"]],
      );
      const dep = await getJSON(["-n", RELEASE_NS, "get", "deploy", DEPLOYMENT]);
      assert.equal(dep.metadata.labels?.["app.kubernetes.io/managed-by"], "Helm");

      await createNamespace(NS, suite.pollMs, 30_000);
      await admit(hello, 60_000);
      const cj = await getJSON(["get", CRONJOBS, HELLO, "-n", NS]);
      // Defaulted by the mutating webhook the chart installed.
      assert.equal(cj.spec!.concurrencyPolicy, "Allow");
      const job = await eventually(
        "a Job of the CronJob that completed",
        async () => (await jobsOf(HELLO)).find((j) => conditionTrue(j, "Complete")),
        180_000,
      );
      const log = await kubectl(["-n", NS, "logs", `job/${job.metadata.name}`]);
      assert.match(log, /hello from helm/);
      // kubectl cron why finds the operator under the release's names and namespace: healthy, exit 0.
      const why = await suite.kubectlCron(["why", HELLO, "-n", NS, "-o", "json"]);
      const d = JSON.parse(why.stdout) as { status: string; exitCode: number; also: unknown[] };
      assert.deepEqual([why.code, d.status, d.also], [0, "healthy", []], why.stdout + why.stderr);
      const all = await suite.kubectlCron(["why", "-A"]);
      assert.equal(all.code, 0, all.stdout + all.stderr);
    });

    it("helm upgrade: a changed value rolls out while CronJobs are applied continuously, none refused", async (t) => {
      const before = await getJSON(["-n", RELEASE_NS, "get", "deploy", DEPLOYMENT]);
      let stop = false;
      let applies = 0;
      const failures: string[] = [];
      // Server-side applies from this process (one PATCH each, as `kubectl apply --server-side` sends it, through
      // the same webhooks), eight at a time, each worker at most one a second: a kubectl process per apply takes
      // most of a core on 2 cores and did not reach the pace. The CronJobs are suspended: the webhooks admit
      // them all the same, and the node does not run their Jobs.
      const api = new Client(suite.cluster.kubeConfig, { userAgent: "helm-e2e" });
      const worker = async (w: number) => {
        for (let n = 0; !stop; n++) {
          const started = Date.now();
          const name = `churn-${w}-${n % 5}`;
          const error = await api
            .request("PATCH", `/apis/batch.tutorial.kubebuilder.io/v1/namespaces/${NS}/cronjobs/${name}`, {
              query: { fieldManager: "helm-e2e", force: true },
              body: JSON.stringify(everyMinute(name, { suspend: true, annotations: { round: String(n) } })),
              contentType: "application/apply-patch+yaml",
              timeoutMs: 20_000,
            })
            .then(
              () => undefined,
              (err: unknown) => (err instanceof Error ? err.message : String(err)),
            );
          applies++;
          if (error !== undefined) failures.push(`${new Date().toISOString()} ${name}: ${error}`);
          await sleep(Math.max(0, started + 1000 - Date.now()));
        }
      };
      const t0 = Date.now();
      const workers = Array.from({ length: 8 }, (_, w) => worker(w));
      /** Until the workers have had `n` more applies answered: the load is on the webhooks, whatever the pace. */
      const answered = (n: number) => {
        const from = applies;
        return eventually(`${n} more applies answered`, async () => applies >= from + n, 60_000);
      };
      try {
        // Each worker's first rounds through the release's webhooks before the upgrade starts.
        await answered(3 * 8);
        await mustHelm([
          "upgrade",
          RELEASE,
          CHART,
          "--namespace",
          RELEASE_NS,
          "--reuse-values",
          "--set",
          "logging.level=debug",
        ]);
        await rollout();
        // Until the old replicas are gone, not only until the new ones are ready.
        await eventually(
          "only the upgraded manager pods",
          async () => {
            // Terminating ones too: the old replicas count until they are gone.
            const items = await list("pods", RELEASE_NS, "control-plane=controller-manager");
            return (
              items.length === 2 &&
              items.every((p) => p.spec!.containers[0].args.includes("--log-level=debug") && ready(p))
            );
          },
          180_000,
        );
        // And through the upgraded replicas' webhooks alone.
        await answered(3 * 8);
      } finally {
        stop = true;
        await Promise.all(workers);
        api.close();
      }
      const seconds = (Date.now() - t0) / 1000;
      t.diagnostic(`${applies} applies in ${seconds.toFixed(0)} s, ${failures.length} refused`);
      const after = await getJSON(["-n", RELEASE_NS, "get", "deploy", DEPLOYMENT]);
      assert.ok(after.metadata.generation! > before.metadata.generation!, "the upgrade did not change the Deployment");
      assert.ok(
        applies / seconds >= MIN_APPLIES_PER_SECOND,
        `only ${applies} applies in ${seconds.toFixed(0)} s (${(applies / seconds).toFixed(1)}/s): the test did not load the webhooks as asked`,
      );
      assert.deepEqual(failures, [], `${failures.length} of ${applies} applies were refused during the upgrade`);
      const history = JSON.parse(await mustHelm(["history", RELEASE, "-n", RELEASE_NS, "-o", "json"])) as Obj[];
      assert.equal(history.at(-1)?.status, "deployed");
      assert.equal(history.length, 2);
    });

    it("helm uninstall: everything the release made is gone but the CRD, and the CronJobs with it", async () => {
      const manifest = await mustHelm(["get", "manifest", RELEASE, "-n", RELEASE_NS]);
      const objects = parseAllDocuments(manifest)
        .map((d) => d.toJS() as Obj | null)
        .filter((o): o is Obj => o !== null);
      assert.ok(objects.length > 10, `the release holds only ${objects.length} objects`);
      await mustHelm(["uninstall", RELEASE, "-n", RELEASE_NS]);
      for (const o of objects) {
        const ref = `${o.kind.toLowerCase()}.${o.apiVersion.includes("/") ? o.apiVersion.split("/")[0] : ""}`.replace(
          /\.$/,
          "",
        );
        const args = ["get", `${ref}/${o.metadata.name}`, "--ignore-not-found", "-o", "name"];
        if (o.metadata.namespace) args.push("-n", o.metadata.namespace);
        if (o.kind === "CustomResourceDefinition") {
          const kept = (await kubectl(args)).trim();
          assert.ok(CRDS.includes(kept), `the CRD ${o.metadata.name} went with the release (${kept || "gone"})`);
          continue;
        }
        await eventually(
          `${o.kind} ${o.metadata.name} to be deleted`,
          async () => (await kubectl(args)).trim() === "",
          120_000,
        );
      }
      assert.deepEqual(JSON.parse(await mustHelm(["list", "-n", RELEASE_NS, "-o", "json"])), []);
      assert.equal((await managerPods()).length, 0);
      // The CRD is kept (helm.sh/resource-policy: keep), so the CronJobs are too. Read in v1, the storage version:
      // v2 (kubectl's default) needs the conversion webhook, which left with the release. A v2 write shows it on
      // every version; a v2 read does not from 1.31: consistent lists come from the API server's watch cache
      // (ConsistentListFromCache), which holds the objects it converted while the webhook was there.
      const cronjobs = await list(`cronjobs.v1.${CRONJOBS.slice("cronjobs.".length)}`, NS);
      const v2 = await eventually(
        "a v2 write to fail without the conversion webhook",
        async () => {
          const r = await suite.cluster.kubectl([
            "annotate",
            CRONJOBS,
            HELLO,
            "-n",
            NS,
            "e2e/touched=1",
            "--overwrite",
          ]);
          return r.code !== 0 && r;
        },
        60_000,
        async () => {
          const crd = await suite.cluster.kubectl([
            "get",
            "crd",
            CRONJOBS,
            "-o",
            "jsonpath={.spec.conversion.webhook.clientConfig.service}",
          ]);
          const around = await suite.cluster.kubectl(["get", "services,endpointslices,pods", "-A", "-o", "wide"]);
          return `; the CRD's conversion service: ${crd.stdout}; ${around.stdout}`;
        },
      );
      assert.match(
        v2.stderr,
        /conversion webhook for batch\.tutorial\.kubebuilder\.io\/v[12], Kind=CronJob failed: .*nightly-ops-webhook-service/,
      );
      assert.ok(
        cronjobs.some((c) => c.metadata.name === HELLO),
        "the CronJobs went with the release",
      );
    });
  },
);
