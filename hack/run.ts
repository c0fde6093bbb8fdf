// `make run`: run the operator from source.
//   - With a reachable cluster (current kubeconfig context) and without LOCAL=1: run against it, with
//     webhooks off (their certificates live in the cluster), as kubebuilder's `make run` does.
//   - Otherwise (or LOCAL=1): a local cluster kept in ~/.cache/cronjob-operator/local (etcd data, keys,
//     certificates and the kubeconfig survive a restart, and so do your CronJobs):
//       as root, with a real node (envtest/node-cluster.ts: kube-controller-manager, kube-scheduler,
//       containerd and a kubelet): the sample's Jobs run Pods, `kubectl logs` shows their output, and
//       deleting a CronJob garbage-collects its Jobs and Pods. The node's local busybox is tagged as
//       the sample's image, so nothing is pulled;
//       without root, or if the node cannot be provisioned or started: etcd + kube-apiserver only (said
//       in one line, with the reason): Jobs are created on schedule but run no Pods.
//     Either way it installs the CRD (server-side apply) and the webhook configurations pointing at a
//     webhook server on this host, applies the sample, and runs the operator from source on this host
//     with webhooks and metrics on. Ctrl-C stops the operator, then the cluster, and puts the machine
//     back as it was (the node's sysctls, cgroups, bridge, mounts and processes).
// Extra operator flags: make run ARGS="--log-level=debug".
import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { freePort } from "../envtest/ports.ts";
import { generateWebhookCertificates } from "../envtest/certs.ts";
import { PROJECT_ROOT, TestEnv } from "../envtest/index.ts";
import { NodeCluster, nodeAssetsDir } from "../envtest/node-cluster.ts";
import { handleSignalsYourself } from "../envtest/processes.ts";
import { installConversionWebhook, installWebhooks } from "../envtest/webhook.ts";
import { RESOURCE } from "../api/v1/index.ts";
import { Client } from "../runtime/client.ts";
import { exitProcess, quiesceBackgroundCompilers } from "../runtime/exit.ts";
import { loadKubeConfig } from "../runtime/kubeconfig.ts";

export const SAMPLE_PATH = join(PROJECT_ROOT, "config", "samples", "batch_v1_cronjob.yaml");
const CRD_DIR = join(PROJECT_ROOT, "config", "crd", "bases");
/** How long a local node waits for another one on this machine (`make cluster-up`, a test) to stop. */
const NODE_LOCK_TIMEOUT_MS = 10 * 60_000;

const say = (msg: string) => process.stderr.write(`make run: ${msg}\n`);

// ---- decisions (pure; test/unit/make-run.test.ts) ---------------------------------------------------

/**
 * A container image reference as the container runtime names it: `busybox:1.36` is
 * `docker.io/library/busybox:1.36`, `foo/bar` is `docker.io/foo/bar:latest`.
 */
export function normalizeImage(ref: string): string {
  const slash = ref.indexOf("/");
  const first = slash < 0 ? "" : ref.slice(0, slash);
  const hasRegistry = slash >= 0 && (first.includes(".") || first.includes(":") || first === "localhost");
  let name = hasRegistry ? ref : `docker.io/${slash < 0 ? "library/" : ""}${ref}`;
  const lastPart = name.slice(name.lastIndexOf("/") + 1);
  if (!lastPart.includes(":") && !lastPart.includes("@")) name += ":latest";
  return name;
}

/**
 * The names the sample's busybox containers use (normalized, by tag; a digest cannot be faked), under
 * which the local node gets its own busybox so that no Pod pulls from a registry.
 */
export function busyboxAliases(sampleYAML: string): string[] {
  const names = new Set<string>();
  for (const doc of parseAllDocuments(sampleYAML)) {
    const obj = doc.toJS() as { spec?: { jobTemplate?: { spec?: { template?: { spec?: PodSpecImages } } } } } | null;
    const pod = obj?.spec?.jobTemplate?.spec?.template?.spec;
    for (const c of [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])]) {
      if (typeof c.image !== "string" || c.image.includes("@")) continue;
      const name = normalizeImage(c.image);
      if (name.startsWith("docker.io/library/busybox:")) names.add(name);
    }
  }
  return [...names];
}

interface PodSpecImages {
  containers?: { image?: unknown }[];
  initContainers?: { image?: unknown }[];
}

/** The local cluster `make run` brings up: a node, or why not. */
export type LocalChoice<C> = { node: C; reason?: undefined } | { node?: undefined; reason: string };

export interface LocalNodeDeps<C> {
  isRoot: boolean;
  /** The node assets directory (hack/setup-envtest --node); throws when they cannot be provisioned. */
  provision: () => string;
  /** Start the node cluster from those assets. */
  start: (assets: string) => Promise<C>;
}

const firstLine = (err: unknown) => {
  const line = (err instanceof Error ? err.message : String(err)).trim().split("\n")[0] ?? "";
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
};

/** A real node when this process is root and the node can be provisioned and started. */
export async function chooseLocalCluster<C>(deps: LocalNodeDeps<C>): Promise<LocalChoice<C>> {
  if (!deps.isRoot) {
    return { reason: "not root, which the kubelet and containerd need: `sudo -E make run`" };
  }
  let assets: string;
  try {
    assets = deps.provision();
  } catch (err) {
    return { reason: `provisioning the node failed: ${firstLine(err)}` };
  }
  try {
    return { node: await deps.start(assets) };
  } catch (err) {
    return { reason: `the node did not start: ${firstLine(err)}` };
  }
}

/** The one line `make run` prints when it falls back to the control plane alone. */
export function fallbackLine(reason: string): string {
  return `no local node (${reason}): control plane only — Jobs are created on schedule but run no Pods`;
}

// ---- make run ---------------------------------------------------------------------------------------

async function clusterReachable(): Promise<boolean> {
  try {
    const kc = loadKubeConfig(undefined);
    const client = new Client(kc, { timeoutMs: 3000 });
    try {
      await client.request("GET", "/version");
      return true;
    } finally {
      client.close();
    }
  } catch {
    return false;
  }
}

async function portOr(preferred: number): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => void freePort().then(resolve));
    srv.listen(preferred, "127.0.0.1", () => srv.close(() => resolve(preferred)));
  });
}

function runOperator(extraArgs: string[], args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [join(PROJECT_ROOT, "cmd", "main.ts"), ...extraArgs, ...args], {
    stdio: "inherit",
    env: { ...process.env, ...env },
  });
}

function waitExit(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => child.once("exit", (code, sig) => resolve(code ?? (sig ? 0 : 1))));
}

function banner(lines: string[]): void {
  const rule = "─".repeat(100);
  process.stderr.write(["", rule, ...lines.map((l) => ` ${l}`), rule, ""].join("\n") + "\n");
}

async function main(): Promise<void> {
  const args = process.argv.slice(2).filter((a) => a !== "--local");
  const forceLocal =
    process.argv.includes("--local") || ["1", "true", "yes"].includes((process.env.LOCAL ?? "").toLowerCase());

  handleSignalsYourself();
  // The terminal sends Ctrl-C to the operator as well; it shuts down gracefully and we follow. While
  // the local cluster starts, a first Ctrl-C stops it once started; a second one exits at once (the
  // control plane's watchdogs and the node reaper then clean up).
  let stopping = false;
  let starting = false;
  const onSignal = (sig: NodeJS.Signals) => {
    // This process ends too, and never by deadlock: runtime/exit.ts.
    quiesceBackgroundCompilers();
    if (stopping && starting) {
      say(`${sig} again: exiting now (the node reaper restores the machine)`);
      exitProcess(130);
    }
    if (starting && !stopping) say(`${sig}: stopping once the local cluster has started (again to exit now)`);
    stopping = true;
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  if (!forceLocal && (await clusterReachable())) {
    say("running against the current kubeconfig context (webhooks off; LOCAL=1 for a local cluster)");
    const child = runOperator(["--metrics-bind-address=127.0.0.1:8080", "--metrics-secure=false"], args, {
      ENABLE_WEBHOOKS: "false",
    });
    process.on("SIGTERM", () => child.kill("SIGTERM"));
    process.exitCode = await waitExit(child);
    return;
  }

  const t0 = performance.now();
  const base = join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "cronjob-operator", "local");
  mkdirSync(base, { recursive: true });
  // Both kinds of local cluster keep the control plane in base/control-plane (the layout NodeCluster
  // uses); earlier versions kept etcd's data in base/etcd.
  const controlPlane = join(base, "control-plane");
  if (existsSync(join(base, "etcd")) && !existsSync(join(controlPlane, "etcd"))) {
    mkdirSync(controlPlane, { recursive: true });
    renameSync(join(base, "etcd"), join(controlPlane, "etcd"));
  }
  const kubeconfig = join(base, "kubeconfig");
  say(forceLocal ? "LOCAL=1: starting a local cluster" : "no cluster reachable: starting a local cluster");

  starting = true;
  const aliases = busyboxAliases(readFileSync(SAMPLE_PATH, "utf8"));
  const choice = await chooseLocalCluster({
    isRoot: process.getuid?.() === 0,
    provision: nodeAssetsDir,
    start: (assets) =>
      NodeCluster.start({
        dir: base,
        crdDirectoryPaths: [CRD_DIR],
        images: aliases.map((name) => ({ path: join(assets, "images", "busybox.oci.tar"), name })),
        lockTimeoutMs: NODE_LOCK_TIMEOUT_MS,
      }),
  });
  const cluster = choice.node;
  // A Ctrl-C that interrupted provisioning or the start is handled only now: no fallback then.
  if (!cluster) await new Promise((r) => setTimeout(r, 100));
  let env: TestEnv | undefined = cluster?.env;
  if (!cluster && !stopping) {
    say(fallbackLine(choice.reason ?? "unknown"));
    env = await TestEnv.start({ dir: controlPlane }).catch((err: unknown) => {
      if (!stopping) throw err;
      return undefined;
    });
    if (env) copyFileSync(env.kubeconfigPath, kubeconfig);
  }
  starting = false;

  let code = 0;
  try {
    if (!env || stopping) return;
    const certs = await generateWebhookCertificates(join(base, "webhook-certs"));
    const webhookPort = await freePort();
    await installWebhooks(env, {
      paths: [join(PROJECT_ROOT, "config", "webhook", "manifests.yaml")],
      port: webhookPort,
      caPEM: certs.caPEM,
    });
    const metricsPort = await portOr(8080);
    const probePort = await portOr(8081);
    const operator = runOperator(
      [
        `--kubeconfig=${kubeconfig}`,
        `--webhook-port=${webhookPort}`,
        `--webhook-cert-path=${certs.dir}`,
        `--metrics-bind-address=127.0.0.1:${metricsPort}`,
        "--metrics-secure=false",
        `--health-probe-bind-address=127.0.0.1:${probePort}`,
      ],
      args,
      {},
    );
    process.on("SIGTERM", () => operator.kill("SIGTERM"));
    // API v2, through the operator's conversion webhook as config/default wires it (waits for it to answer).
    await installConversionWebhook(env, {
      crdName: RESOURCE,
      patchPath: join(PROJECT_ROOT, "config", "crd", "patches", "webhook_in_cronjobs.yaml"),
      port: webhookPort,
      caPEM: certs.caPEM,
      timeoutMs: 60_000,
    }).catch((err: unknown) => say(`API v2 not served: ${err instanceof Error ? err.message : String(err)}`));
    // The webhooks must answer before the sample can be admitted.
    let applied = false;
    for (let i = 0; i < 60 && !applied && !stopping && operator.exitCode === null; i++) {
      const r = await env.kubectl(["apply", "-f", SAMPLE_PATH]);
      applied = r.code === 0;
      if (!applied) await new Promise((res) => setTimeout(res, 500));
      else process.stderr.write(r.stdout);
    }
    if (!applied && !stopping) say("could not apply the sample (see the operator log above)");
    const seconds = ((performance.now() - t0) / 1000).toFixed(1);
    const use = [
      "Use it from another terminal:",
      `  export KUBECONFIG=${kubeconfig}`,
      "  kubectl get cronjobs.batch.tutorial.kubebuilder.io",
    ];
    banner(
      cluster
        ? [
            `cronjob-operator is running on a local cluster with a real node (ready in ${seconds} s).`,
            ...use,
            "  kubectl get jobs,pods                 # cronjob-sample-<scheduled Unix time>: a Job and its Pod each minute",
            "  kubectl logs job/<job name>           # a run's output",
            "  kubectl logs -l job-name --prefix     # the output of every run still kept",
            `Metrics: http://127.0.0.1:${metricsPort}/metrics   Probes: http://127.0.0.1:${probePort}/readyz`,
            `Data is kept in ${base}. Ctrl-C stops the operator and the cluster and restores the machine.`,
          ]
        : [
            `cronjob-operator is running against a local control plane (ready in ${seconds} s).`,
            ...use,
            "  kubectl get jobs",
            `Metrics: http://127.0.0.1:${metricsPort}/metrics   Probes: http://127.0.0.1:${probePort}/readyz`,
            "There is no kubelet here: Jobs are created on schedule but run no pods (root gives a real node).",
            `Data is kept in ${base}. Ctrl-C stops everything.`,
          ],
    );
    code = await waitExit(operator);
  } catch (err) {
    say(`${(err as Error).message}`);
    code = 1;
  } finally {
    try {
      if (cluster) await cluster.stop();
      else await env?.stop();
      say(cluster ? "stopped; the machine is as it was" : "stopped");
    } catch (err) {
      say(`stopped, but: ${(err as Error).message}`);
      code = 1;
    }
    process.exitCode = code;
  }
}

if (import.meta.main) {
  try {
    await main();
  } catch (err) {
    say((err as Error).message);
    process.exitCode = 1;
  }
}
