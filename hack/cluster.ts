// `make cluster-up` / `make cluster-down`: a persistent local cluster with a real node (kubelet +
// containerd; envtest/node-cluster.ts) in ~/.cache/cronjob-operator/cluster. Needs root.
//
//   node hack/cluster.ts up [--detach] [--dir DIR]   start; prints `export KUBECONFIG=…` on stdout.
//                                                    Runs until Ctrl-C, or in the background with --detach
//                                                    (pid in DIR/cluster.pid, output in DIR/cluster.log).
//   node hack/cluster.ts down [--purge] [--dir DIR]  stop it and restore the machine; --purge also
//                                                    deletes its data (etcd, keys, kubeconfig).
//   node hack/cluster.ts status [--dir DIR]
//
// The cluster's data (etcd, service-account key, certificates, tokens) survives down/up, so the
// kubeconfig stays valid and Pods come back as after a node reboot; the node's own state (containers,
// kubelet, CNI) is wiped at every stop.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { cleanupStaleNodeCluster, NodeCluster, requireRoot } from "../envtest/node-cluster.ts";
import { mountsUnder, POD_GATEWAY_IP, processAlive, processRef, type ProcessRef } from "../envtest/node-host.ts";
import { handleSignalsYourself } from "../envtest/processes.ts";

const argv = process.argv.slice(2);
const command = argv[0] ?? "";
const flag = (name: string) => argv.includes(name);
const dirArg = argv[argv.indexOf("--dir") + 1];
const dir = resolve(
  argv.includes("--dir") && dirArg
    ? dirArg
    : join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "cronjob-operator", "cluster"),
);
const pidFile = join(dir, "cluster.pid");
const logFile = join(dir, "cluster.log");
const kubeconfig = join(dir, "kubeconfig");
const say = (msg: string) => process.stderr.write(`cluster: ${msg}\n`);

interface PidFile extends ProcessRef {
  ready: boolean;
  kubeconfig: string;
  server?: string;
  containerdSocket?: string;
}

function readPidFile(): PidFile | undefined {
  try {
    return JSON.parse(readFileSync(pidFile, "utf8")) as PidFile;
  } catch {
    return undefined;
  }
}

/** The running cluster's owner process, if any. */
function running(): PidFile | undefined {
  const p = readPidFile();
  return p && processAlive(p) ? p : undefined;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function usage(code: number): never {
  process.stderr.write(
    [
      "usage: node hack/cluster.ts up [--detach] [--dir DIR]",
      "       node hack/cluster.ts down [--purge] [--dir DIR]",
      "       node hack/cluster.ts status [--dir DIR]",
      `DIR defaults to ${join("~", ".cache", "cronjob-operator", "cluster")}.`,
      "",
    ].join("\n"),
  );
  process.exit(code);
}

function banner(p: PidFile): void {
  process.stderr.write(
    [
      "",
      "────────────────────────────────────────────────────────────────────────────",
      ` A local cluster with a real node is running (pid ${p.pid}${p.server ? `, apiserver ${p.server}` : ""}).`,
      " Use it from any terminal:",
      `   export KUBECONFIG=${p.kubeconfig}`,
      "   kubectl get nodes",
      " Images for pods: localhost/busybox:latest, and your own (imagePullPolicy Never), loaded with",
      `   ctr --address ${p.containerdSocket ?? join(dir, "containerd", "containerd.sock")} -n k8s.io \\`,
      "     images import --index-name localhost/NAME:TAG IMAGE.oci.tar",
      ` No kube-proxy, no cluster DNS; pods reach the apiserver at KUBERNETES_SERVICE_HOST=${POD_GATEWAY_IP} and`,
      " KUBERNETES_SERVICE_PORT=<the kubeconfig's port> (set them in the pod; make deploy OVERLAY=config/local does).",
      ` Stop it with ${p.pid === process.pid ? "Ctrl-C or " : ""}\`make cluster-down\` (restores the machine).`,
      "────────────────────────────────────────────────────────────────────────────",
      "",
    ].join("\n"),
  );
}

async function up(): Promise<void> {
  requireRoot();
  const live = running();
  if (live) {
    say(`already running (pid ${live.pid})`);
    banner(live);
    process.stdout.write(`export KUBECONFIG=${live.kubeconfig}\n`);
    return;
  }
  mkdirSync(dir, { recursive: true });
  if (flag("--detach")) return detach();

  handleSignalsYourself();
  let stopRequested = false;
  let wake: () => void = () => undefined;
  const onSignal = (sig: NodeJS.Signals) => {
    if (stopRequested) {
      say(`${sig} again: exiting now (the node reaper restores the machine)`);
      process.exit(130);
    }
    stopRequested = true;
    say(`${sig}: stopping`);
    wake();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  process.on("SIGHUP", onSignal);

  const self = processRef(process.pid);
  writeFileSync(pidFile, JSON.stringify({ ...self, ready: false, kubeconfig }));
  let cluster: NodeCluster | undefined;
  try {
    cluster = await NodeCluster.start({ dir });
    const info: PidFile = {
      ...self,
      ready: true,
      kubeconfig: cluster.kubeconfigPath,
      server: cluster.server,
      containerdSocket: cluster.containerdSocket,
    };
    writeFileSync(pidFile, JSON.stringify(info));
    banner(info);
    process.stdout.write(`export KUBECONFIG=${cluster.kubeconfigPath}\n`);
    if (!stopRequested) await new Promise<void>((r) => (wake = r));
  } finally {
    try {
      await cluster?.stop();
      say("stopped; the machine is as it was");
    } finally {
      if (readPidFile()?.pid === process.pid) rmSync(pidFile, { force: true });
    }
  }
}

/** Run `up` in the background (its own session, output to cluster.log) and wait until it is ready. */
async function detach(): Promise<void> {
  const out = openSync(logFile, "w");
  const child = spawn(process.execPath, [process.argv[1] ?? "hack/cluster.ts", "up", "--dir", dir], {
    detached: true,
    stdio: ["ignore", out, out],
  });
  child.unref();
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  let code: number | null | undefined;
  void exited.then((c) => (code = c));
  say(`starting in the background (pid ${child.pid}; output in ${logFile})`);
  const deadline = Date.now() + 45 * 60_000; // a first run provisions (builds kubelet)
  while (Date.now() < deadline) {
    const p = readPidFile();
    if (p?.ready && p.pid === child.pid) {
      banner(p);
      process.stdout.write(`export KUBECONFIG=${p.kubeconfig}\n`);
      return;
    }
    if (code !== undefined) {
      process.stderr.write(readFileSync(logFile, "utf8").split("\n").slice(-30).join("\n") + "\n");
      throw new Error(`the cluster exited during start-up (code ${code}); see ${logFile}`);
    }
    await sleep(250);
  }
  throw new Error(`the cluster was not ready in time; see ${logFile}`);
}

async function down(): Promise<void> {
  requireRoot();
  const live = running();
  if (live) {
    say(`stopping pid ${live.pid}`);
    process.kill(live.pid, "SIGTERM");
    const deadline = Date.now() + 90_000;
    while (processAlive(live) && Date.now() < deadline) await sleep(200);
    if (processAlive(live)) {
      say(`pid ${live.pid} did not stop in 90 s; killing it (the node reaper restores the machine)`);
      process.kill(live.pid, "SIGKILL");
    }
  } else {
    say("no cluster running from this directory");
  }
  // Whatever a crashed or killed cluster left: waits for the reaper if it is still cleaning.
  const r = await cleanupStaleNodeCluster({ waitMs: 120_000 });
  if (r.status === "busy") {
    say("another local node cluster (a test run?) holds the machine's node lock; left it alone");
  } else if (r.status === "cleaned") {
    say(r.problems.length ? `cleanup problems: ${r.problems.join("; ")}` : "removed a stopped cluster's leftovers");
  }
  rmSync(pidFile, { force: true });
  if (flag("--purge") && existsSync(dir)) {
    if (mountsUnder([dir]).length > 0) throw new Error(`not purging ${dir}: something is still mounted under it`);
    rmSync(dir, { recursive: true, force: true });
    say(`deleted ${dir}`);
  }
  if (r.problems.length) process.exitCode = 1;
  else say("down; the machine is as it was");
}

function status(): void {
  const live = running();
  if (!live) {
    say("not running");
    process.exitCode = 3;
    return;
  }
  say(`${live.ready ? "running" : "starting"} (pid ${live.pid})`);
  process.stdout.write(`export KUBECONFIG=${live.kubeconfig}\n`);
}

try {
  if (command === "up") await up();
  else if (command === "down") await down();
  else if (command === "status") status();
  else usage(command === "-h" || command === "--help" ? 0 : 2);
} catch (err) {
  say((err as Error).message);
  process.exitCode = 1;
}
