// The local cluster with a real node (envtest/node-cluster.ts): Jobs run Pods to completion or
// failure, `kubectl logs` works, owner references are garbage-collected, a Service in front of a
// hostNetwork pod has the node's address as its endpoint and the apiserver reaches the pod through it
// (what a webhook behind a Service needs), and stopping it leaves the
// machine as it was — also when the process that started it is killed (the reaper cleans up), and when
// the reaper dies too (the next start, or cleanupStaleNodeCluster(), cleans up). Needs root: without it
// the suite fails with the reason (CI runs as root). The Jobs, Pods and Services live in a namespace of their own:
// in CI's node lane (node-lane-run.ts) the node is the lane's, shared with sharding-faults' shards, and the
// suite that stops it runs after them (node-lane.ts).
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { before, it } from "node:test";
import {
  BUSYBOX_IMAGE,
  cleanupStaleNodeCluster,
  NodeCluster,
  type NodeClusterTimings,
  nodeJobSpec,
} from "../../envtest/node-cluster.ts";
import { CNI_BRIDGE, HOST_DIRS, HOST_SYSCTLS, NODE_IP, NODE_LINK, readHostRecord } from "../../envtest/node-host.ts";
import { freePort } from "../../envtest/ports.ts";
import { beforeNodeStarts, laneCluster, nodeLaneDescribe } from "./node-lane.ts";

const CHILD_ENV = "NODE_CLUSTER_TEST_CHILD";
/** The namespace of the tests' objects on the node (a child's cluster is its own: it uses "default"). */
const NS = "node-cluster";

// ---- an independent look at the machine ---------------------------------------------------------------

function sysctls(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of HOST_SYSCTLS) {
    try {
      out[n] = readFileSync(join("/proc/sys", ...n.split(".")), "utf8").trim();
    } catch {
      // not on this kernel
    }
  }
  return out;
}

function kubepodsCgroups(): string[] {
  const roots = readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .filter((l) => / - cgroup2? /.test(l))
    .map((l) => l.split(" ")[4] ?? "");
  return roots.map((r) => join(r, "kubepods")).filter((p) => existsSync(p));
}

function mountsUnder(prefixes: string[]): string[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((l) => l.split(" ")[4] ?? "")
    .filter((mp) => mp && prefixes.some((p) => mp === p || mp.startsWith(`${p}/`)));
}

function bridgeExists(): boolean {
  return existsSync(join("/sys/class/net", CNI_BRIDGE));
}

function nodeLinkExists(): boolean {
  return existsSync(join("/sys/class/net", NODE_LINK));
}

/** Interfaces that carry the node's address. */
function nodeIPHolders(): string[] {
  return execFileSync("ip", ["-o", "-4", "addr", "show", "to", `${NODE_IP}/32`], { encoding: "utf8" })
    .split("\n")
    .filter(Boolean)
    .map((l) => l.split(/\s+/)[1] ?? "");
}

interface Proc {
  pid: number;
  start: string;
  comm: string;
}

function procInfo(pid: number): Proc | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[0] === "Z") return undefined;
    return { pid, start: fields[19] ?? "", comm: readFileSync(`/proc/${pid}/comm`, "utf8").trim() };
  } catch {
    return undefined;
  }
}

/** Processes of the cluster in `dir`: named by it (command line or environment) or in /kubepods. */
function clusterProcesses(dir: string): Proc[] {
  const out: Proc[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    const pid = Number(d);
    try {
      const mine =
        readFileSync(`/proc/${pid}/cmdline`, "latin1").includes(dir) ||
        readFileSync(`/proc/${pid}/environ`, "latin1").includes(`=${dir}\0`) ||
        /:\/kubepods(\/|$)/m.test(readFileSync(`/proc/${pid}/cgroup`, "utf8"));
      const p = mine ? procInfo(pid) : undefined;
      if (p) out.push(p);
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

function stillRunning(procs: Proc[]): Proc[] {
  return procs.filter((p) => procInfo(p.pid)?.start === p.start);
}

interface HostView {
  sysctls: Record<string, string>;
  dirs: Record<string, boolean>;
  kubepods: string[];
  bridge: boolean;
  nodeLink: boolean;
}

function hostView(): HostView {
  return {
    sysctls: sysctls(),
    dirs: Object.fromEntries(HOST_DIRS.map((d) => [d, existsSync(d)])),
    kubepods: kubepodsCgroups(),
    bridge: bridgeExists(),
    nodeLink: nodeLinkExists(),
  };
}

/**
 * The host as the cluster in `dir` found it. A start waits for another node on this machine (a parallel
 * test file's) to stop, so a view taken before it may show that one's changes; the cluster recorded the
 * machine once it held the node lock.
 */
function asFound(view: HostView, dir: string): HostView {
  const rec = readHostRecord();
  assert.equal(rec?.dir, dir, "the host record is this cluster's");
  return {
    ...view,
    sysctls: { ...view.sysctls, ...rec!.sysctls },
    dirs: Object.fromEntries(HOST_DIRS.map((d) => [d, !rec!.createdDirs.includes(d)])),
  };
}

/** Everything the cluster in `dir` touched is back as `before` had it; `seen` are its processes. */
function assertRestored(before: HostView, dir: string, seen: Proc[]): void {
  assert.deepEqual(
    stillRunning(seen).map((p) => `${p.pid} ${p.comm}`),
    [],
    "processes of the cluster still running",
  );
  assert.deepEqual(clusterProcesses(dir), [], "processes of the cluster still running");
  assert.deepEqual(mountsUnder([dir, ...HOST_DIRS]), [], "mounts left");
  assert.equal(bridgeExists(), false, `bridge ${CNI_BRIDGE} left`);
  assert.equal(nodeLinkExists(), false, `interface ${NODE_LINK} left`);
  assert.deepEqual(nodeIPHolders(), [], `the node's address ${NODE_IP} is still assigned`);
  assert.deepEqual(kubepodsCgroups(), [], "/kubepods cgroups left");
  assert.deepEqual(sysctls(), before.sysctls, "sysctls not restored");
  assert.deepEqual(hostView().dirs, before.dirs, "host directories not as before");
  assert.equal(existsSync(dir), false, `cluster directory ${dir} left`);
}

async function waitFor<T>(
  what: string,
  fn: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function job(name: string, script: string, extra: Record<string, unknown> = {}, namespace = NS): string {
  return JSON.stringify({
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name, namespace, ...extra },
    spec: nodeJobSpec(script),
  });
}

async function ok(cluster: NodeCluster, args: string[], stdin?: string): Promise<string> {
  const r = await cluster.kubectl(args, stdin);
  assert.equal(r.code, 0, `kubectl ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

// ---- child mode: a process that starts a cluster, runs a Pod, reports, and waits to be killed ----------

async function childMain(): Promise<void> {
  const cluster = await NodeCluster.start({ verbose: false });
  await ok(cluster, ["apply", "-f", "-"], job("sleeper", "sleep 300", {}, "default"));
  await waitFor(
    "the sleeper pod to run",
    async () =>
      (await cluster.kubectl(["get", "pods", "-l", "job-name=sleeper", "-o", "jsonpath={.items[*].status.phase}"]))
        .stdout === "Running",
    120_000,
  );
  process.stdout.write(JSON.stringify({ dir: cluster.dir, reaperPid: cluster.reaperPid }) + "\n");
  setInterval(() => undefined, 1000);
}

function startChild(): Promise<{ dir: string; reaperPid: number; kill: () => Promise<void> }> {
  const child = spawn(process.execPath, [import.meta.filename], {
    env: { ...process.env, [CHILD_ENV]: "1" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return new Promise((resolveP, reject) => {
    let buf = "";
    child.stdout.on("data", (d: Buffer) => {
      buf += d.toString();
      const line = buf.split("\n")[0];
      if (buf.includes("\n") && line) {
        const info = JSON.parse(line) as { dir: string; reaperPid: number };
        resolveP({
          ...info,
          kill: async () => {
            child.kill("SIGKILL");
            await exited;
          },
        });
      }
    });
    child.once("exit", (code) => reject(new Error(`child exited (${code}) before reporting`)));
  });
}

// ---- the tests ----------------------------------------------------------------------------------------

if (process.env[CHILD_ENV] === "1") {
  await childMain();
} else {
  let cluster: NodeCluster;
  let before_: HostView;
  let timings: NodeClusterTimings;
  const seen: Proc[] = [];
  const remember = () => {
    for (const p of clusterProcesses(cluster.dir)) if (!seen.some((s) => s.pid === p.pid)) seen.push(p);
  };
  /** kubectl in the tests' namespace. */
  const k = (args: string[], stdin?: string) => ok(cluster, ["-n", NS, ...args], stdin);
  // The machine before the node starts (it fails there, plainly, when not root: the message says what it needs
  // and why).
  beforeNodeStarts(() => {
    before_ = hostView();
  });
  let found = false;
  /** The node, once it is up (each suite's before()). */
  const useNode = () => {
    if (found) return;
    found = true;
    cluster = laneCluster();
    timings = cluster.timings;
    remember();
    // start() waits for another node on this machine (a parallel test file's) to stop, so the view taken
    // before it may show that one's changes. What counts is the machine as this cluster found it, which it
    // recorded once it held the node lock.
    before_ = asFound(before_, cluster.dir);
  };

  nodeLaneDescribe("NodeCluster: a local cluster with a real node", "node", { concurrency: false }, () => {
    before(async () => {
      useNode();
      await ok(cluster, ["create", "namespace", NS]);
      // Pods are admitted once their namespace's default ServiceAccount exists.
      await waitFor(
        `the ServiceAccount default in ${NS}`,
        async () => (await cluster.kubectl(["-n", NS, "get", "serviceaccount", "default"])).code === 0,
        60_000,
      );
    });

    it("starts: the node is Ready and the control plane's controllers run", async (t) => {
      t.diagnostic(
        `provision ${timings.provisionMs} ms; start → node Ready ${timings.startMs} ms (control plane ${timings.controlPlaneMs} ms, containerd + images ${timings.runtimeMs} ms, kubelet → Ready ${timings.nodeReadyMs} ms)`,
      );
      const node = JSON.parse(await ok(cluster, ["get", "node", cluster.nodeName, "-o", "json"])) as {
        status: { conditions: { type: string; status: string }[]; addresses: { type: string; address: string }[] };
      };
      assert.ok(node.status.conditions.some((c) => c.type === "Ready" && c.status === "True"));
      assert.deepEqual(
        node.status.addresses.find((a) => a.type === "InternalIP"),
        { type: "InternalIP", address: NODE_IP },
      );
      assert.equal(cluster.nodeIP, NODE_IP);
      assert.doesNotMatch(NODE_IP, /^127\./, "the node's address is not loopback (Endpoints refuse loopback)");
      assert.deepEqual(nodeIPHolders(), [NODE_LINK], `${NODE_IP} is on ${NODE_LINK}, and only there`);
      assert.ok(kubepodsCgroups().length > 0, "the kubelet made its /kubepods cgroups");
      // The kubelet's kernel tunables (restored by stop()).
      assert.equal(sysctls()["vm.overcommit_memory"], "1");
      assert.equal(sysctls()["kernel.panic_on_oops"], "1");
    });

    it("runs a Job to completion; kubectl logs shows its output", async (t) => {
      const t0 = Date.now();
      await k(["apply", "-f", "-"], job("hello", "echo hello; sleep 1"));
      await k(["wait", "--for=condition=complete", "job/hello", "--timeout=120s"]);
      const ms = Date.now() - t0;
      t.diagnostic(`Job (sh -c 'echo hello; sleep 1') created → Complete in ${ms} ms`);
      remember();
      const logs = await k(["logs", "job/hello"]);
      assert.equal(logs.trim(), "hello");
      assert.equal(bridgeExists(), true, "pods are on the CNI bridge");
    });

    it("a Service in front of a hostNetwork pod has the node's address as endpoint; the apiserver reaches it", async (t) => {
      const port = await freePort();
      const body = `hello from ${NODE_IP}:${port}`;
      const labels = { app: "hostnet-web" };
      const pod = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "hostnet-web", namespace: NS, labels },
        spec: {
          hostNetwork: true,
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: "httpd",
              image: BUSYBOX_IMAGE,
              imagePullPolicy: "Never",
              // Listens on the pod IP only (the node's address), not on 127.0.0.1 or every address.
              command: [
                "sh",
                "-c",
                `mkdir -p /www && echo "${body}" > /www/index.html && exec httpd -f -p "$POD_IP:${port}" -h /www`,
              ],
              env: [{ name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } }],
              ports: [{ name: "http", containerPort: port }],
              readinessProbe: { tcpSocket: { port }, periodSeconds: 1 },
            },
          ],
        },
      };
      const svc = {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "hostnet-web", namespace: NS },
        spec: { selector: labels, ports: [{ name: "http", port, targetPort: port }] },
      };
      const t0 = Date.now();
      await k(["apply", "-f", "-"], JSON.stringify({ apiVersion: "v1", kind: "List", items: [pod, svc] }));
      await k(["wait", "--for=condition=ready", "pod/hostnet-web", "--timeout=120s"]);
      remember();
      assert.equal(await k(["get", "pod", "hostnet-web", "-o", "jsonpath={.status.podIP}"]), NODE_IP);
      const endpoints = await waitFor(
        "the Service's Endpoints",
        async () => {
          const r = await cluster.kubectl([
            "-n",
            NS,
            "get",
            "endpoints",
            "hostnet-web",
            "-o",
            "jsonpath={.subsets[*].addresses[*].ip} {.subsets[*].ports[*].port}",
          ]);
          return r.code === 0 && r.stdout.trim() !== "" && !r.stdout.startsWith(" ") ? r.stdout : undefined;
        },
        60_000,
      );
      assert.equal(endpoints, `${NODE_IP} ${port}`);
      // The apiserver dials the endpoint address (as it does for a webhook's or an aggregated API's
      // Service with --enable-aggregator-routing).
      const got = await ok(cluster, [
        "get",
        "--raw",
        `/api/v1/namespaces/${NS}/services/http:hostnet-web:${port}/proxy/`,
      ]);
      t.diagnostic(
        `hostNetwork pod + Service → endpoint ${endpoints}, served through the apiserver in ${Date.now() - t0} ms`,
      );
      assert.equal(got.trim(), body);
      // The pod's logs (the apiserver → kubelet on 127.0.0.1 by its Hostname address) still work.
      const logs = await cluster.kubectl(["-n", NS, "logs", "hostnet-web"]);
      assert.equal(logs.code, 0, logs.stderr);
      await k(["delete", "pod,service", "hostnet-web", "--wait=false"]);
    });

    it("a Job whose container exits 3 fails, with the exit code on its Pod", async () => {
      await k(["apply", "-f", "-"], job("exit3", "exit 3"));
      await k(["wait", "--for=condition=failed", "job/exit3", "--timeout=120s"]);
      const code = await k([
        "get",
        "pods",
        "-l",
        "job-name=exit3",
        "-o",
        "jsonpath={.items[0].status.containerStatuses[0].state.terminated.exitCode}",
      ]);
      assert.equal(code, "3");
    });

    it("importImage() loads an OCI archive under any name, for Pods with imagePullPolicy Never", async () => {
      await cluster.importImage(join(cluster.assets, "images", "busybox.oci.tar"), "localhost/imported:v1");
      const images = await cluster.ctr(["images", "ls", "-q"]);
      assert.ok(images.stdout.split("\n").includes("localhost/imported:v1"), images.stdout);
      assert.ok(
        !images.stdout.includes("cronjob-operator.invalid"),
        `the archive's own tags are not left behind:\n${images.stdout}`,
      );
      const spec = JSON.parse(job("imported", "echo imported")) as {
        spec: { template: { spec: { containers: { image: string }[] } } };
      };
      spec.spec.template.spec.containers[0]!.image = "localhost/imported:v1";
      await k(["apply", "-f", "-"], JSON.stringify(spec));
      await k(["wait", "--for=condition=complete", "job/imported", "--timeout=120s"]);
      assert.equal((await k(["logs", "job/imported"])).trim(), "imported");
    });

    it("deleting an owner garbage-collects its Job and the Job's Pods", async () => {
      const cm = JSON.parse(await k(["create", "configmap", "owner", "-o", "json"])) as {
        metadata: { uid: string };
      };
      await k(
        ["apply", "-f", "-"],
        job("owned", "sleep 300", {
          ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: cm.metadata.uid }],
        }),
      );
      await waitFor(
        "the owned Job's pod to run",
        async () =>
          (await k(["get", "pods", "-l", "job-name=owned", "-o", "jsonpath={.items[*].status.phase}"])) === "Running",
        120_000,
      );
      remember();
      await k(["delete", "configmap", "owner"]);
      await waitFor(
        "the Job and its Pods to be collected",
        async () => {
          const jobs = await cluster.kubectl(["-n", NS, "get", "job", "owned", "--ignore-not-found", "-o", "name"]);
          const pods = await cluster.kubectl(["-n", NS, "get", "pods", "-l", "job-name=owned", "-o", "name"]);
          return jobs.code === 0 && pods.code === 0 && jobs.stdout.trim() === "" && pods.stdout.trim() === "";
        },
        120_000,
      );
    });
  });

  const stopping = "NodeCluster: stopping it, or its owner's or reaper's death, restores the machine";
  nodeLaneDescribe(stopping, "stops-node", { concurrency: false }, () => {
    before(() => useNode());

    it("stop() leaves the machine as it was: processes, mounts, bridge, node interface, cgroups, sysctls, directories", async (t) => {
      remember();
      const kinds = new Set(seen.map((p) => p.comm));
      for (const c of ["containerd", "kubelet", "pause"]) assert.ok(kinds.has(c), `saw no ${c} process`);
      assert.ok(
        [...kinds].some((c) => c.startsWith("containerd-shim")),
        "saw no containerd shim",
      );
      const t0 = Date.now();
      await cluster.stop();
      t.diagnostic(`stop() in ${Date.now() - t0} ms: ${cluster.lastCleanup?.actions.join("; ")}`);
      assertRestored(before_, cluster.dir, seen);
      assert.equal(readHostRecord(), undefined, "the host record is removed");
    });

    it("when the owning process is killed (SIGKILL), the reaper restores the machine", async () => {
      const child = await startChild();
      const host = asFound(hostView(), child.dir);
      const procs = clusterProcesses(child.dir);
      assert.ok(
        procs.some((p) => p.comm === "pause"),
        "the child's pod runs",
      );
      await child.kill();
      // The reaper polls every 0.5 s; the cleanup itself takes a second or two. It removes the host record
      // as its last act and then exits, and its flock exits after it: finished is both gone.
      await waitFor(
        "the reaper to finish",
        () => readHostRecord() === undefined && procInfo(child.reaperPid) === undefined,
        60_000,
      );
      assertRestored(host, child.dir, procs);
    });

    it("when the reaper dies too, cleanupStaleNodeCluster() restores the machine (and is idempotent)", async () => {
      const child = await startChild();
      const host = asFound(hostView(), child.dir);
      const procs = clusterProcesses(child.dir);
      process.kill(-child.reaperPid, "SIGKILL"); // flock and node-reaper.ts
      await child.kill();
      // Nobody cleans up now: containerd's shims and the pod survive their parents.
      await new Promise((r) => setTimeout(r, 5000));
      assert.ok(stillRunning(procs).length > 0, "leftovers exist before the cleanup");
      assert.equal(readHostRecord()?.dir, child.dir, "the record of the dead cluster is still there");
      const r = await cleanupStaleNodeCluster({ waitMs: 60_000 });
      assert.deepEqual(r, { status: "cleaned", problems: [] });
      assertRestored(host, child.dir, procs);
      assert.deepEqual(await cleanupStaleNodeCluster(), { status: "clean", problems: [] });
    });
  });
}
