// `make run`: run the operator from source.
//   - With a reachable cluster (current kubeconfig context) and without LOCAL=1: run against it, with
//     webhooks off (their certificates live in the cluster), as kubebuilder's `make run` does.
//   - Otherwise (or LOCAL=1): start a local control plane (etcd + kube-apiserver from setup-envtest, data
//     kept in ~/.cache/cronjob-operator/local so CronJobs survive a restart), install the CRD and the
//     webhook configuration for a local webhook server, apply the sample, and run the operator with
//     webhooks and metrics on. Ctrl-C stops everything.
// Extra operator flags: make run ARGS="--log-level=debug".
import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { freePort } from "../test/envtest/ports.ts";
import { generateWebhookCertificates } from "../test/envtest/certs.ts";
import { PROJECT_ROOT, TestEnv } from "../test/envtest/index.ts";
import { handleSignalsYourself } from "../test/envtest/processes.ts";
import { installWebhooks } from "../test/envtest/webhook.ts";
import { Client } from "../runtime/client.ts";
import { loadKubeConfig } from "../runtime/kubeconfig.ts";

const args = process.argv.slice(2).filter((a) => a !== "--local");
const forceLocal =
  process.argv.includes("--local") || ["1", "true", "yes"].includes((process.env.LOCAL ?? "").toLowerCase());
const say = (msg: string) => process.stderr.write(`make run: ${msg}\n`);

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

function runOperator(extraArgs: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [join(PROJECT_ROOT, "cmd", "main.ts"), ...extraArgs, ...args], {
    stdio: "inherit",
    env: { ...process.env, ...env },
  });
}

function waitExit(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => child.once("exit", (code, sig) => resolve(code ?? (sig ? 0 : 1))));
}

handleSignalsYourself();
// The terminal sends Ctrl-C to the operator as well; it shuts down gracefully and we follow.
let stopping = false;
const onSignal = () => {
  stopping = true;
};
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);

if (!forceLocal && (await clusterReachable())) {
  say("running against the current kubeconfig context (webhooks off; LOCAL=1 for a local control plane)");
  const child = runOperator(["--metrics-bind-address=127.0.0.1:8080", "--metrics-secure=false"], {
    ENABLE_WEBHOOKS: "false",
  });
  process.on("SIGTERM", () => child.kill("SIGTERM"));
  process.exitCode = await waitExit(child);
} else {
  const base = join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "cronjob-operator", "local");
  mkdirSync(base, { recursive: true });
  say(forceLocal ? "LOCAL=1: starting a local control plane" : "no cluster reachable: starting a local control plane");
  const env = await TestEnv.start({ etcdDataDir: join(base, "etcd") });
  let code = 1;
  try {
    const kubeconfig = join(base, "kubeconfig");
    copyFileSync(env.kubeconfigPath, kubeconfig);
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
      {},
    );
    process.on("SIGTERM", () => operator.kill("SIGTERM"));
    // The webhooks must answer before the sample can be admitted.
    let applied = false;
    for (let i = 0; i < 60 && !applied && !stopping && operator.exitCode === null; i++) {
      const r = await env.kubectl(["apply", "-f", join(PROJECT_ROOT, "config", "samples", "batch_v1_cronjob.yaml")]);
      applied = r.code === 0;
      if (!applied) await new Promise((res) => setTimeout(res, 500));
      else process.stderr.write(r.stdout);
    }
    if (!applied && !stopping) say("could not apply the sample (see the operator log above)");
    process.stderr.write(
      [
        "",
        "────────────────────────────────────────────────────────────────────────────",
        " cronjob-operator is running against a local control plane.",
        ` Use it from another terminal:`,
        `   KUBECONFIG=${kubeconfig} kubectl get cronjobs.batch.tutorial.kubebuilder.io`,
        `   KUBECONFIG=${kubeconfig} kubectl get jobs`,
        ` Metrics: http://127.0.0.1:${metricsPort}/metrics   Probes: http://127.0.0.1:${probePort}/readyz`,
        " There is no kubelet here: Jobs are created on schedule but run no pods.",
        ` Data is kept in ${base}. Ctrl-C stops everything.`,
        "────────────────────────────────────────────────────────────────────────────",
        "",
      ].join("\n"),
    );
    code = await waitExit(operator);
  } finally {
    await env.stop();
  }
  say("stopped");
  process.exitCode = code;
}
