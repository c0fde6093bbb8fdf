// `make run LOCAL=1`, the main job, as root (CI is root): it brings up a local cluster with a real node
// and runs the operator from source. The sample's Job runs a real Pod to completion, `kubectl logs`
// shows its output, the CronJob records lastSuccessfulTime and a SawCompletedJob event, history cleanup
// deletes a finished Job (and the garbage collector its Pod), deleting the CronJob garbage-collects its
// Jobs and Pods, and Ctrl-C stops everything and leaves the machine clean. The sample runs every minute,
// so its first run comes within 60 s of start-up.
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { it } from "node:test";
import { assetsDir, PROJECT_ROOT } from "../../envtest/index.ts";
import { cleanupStaleNodeCluster, NODE_NAME, nodeAssetsDir, requireRoot } from "../../envtest/node-cluster.ts";
import { readHostRecord } from "../../envtest/node-host.ts";
import { nodeLaneDescribe } from "./node-lane.ts";

const CRONJOBS = "cronjobs.batch.tutorial.kubebuilder.io";
const HELLO = "Hello from the Kubernetes cluster";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A timeout that does not keep the test process alive once the test is done. */
const timeout = (ms: number) => new Promise<"timeout">((r) => setTimeout(() => r("timeout"), ms).unref());

interface Obj {
  metadata: { name: string; ownerReferences?: { uid: string }[]; uid?: string };
  spec?: Record<string, any>;
  status?: Record<string, any>;
  [k: string]: any;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Processes whose command line or environment names `dir` (the cluster's marker variable does). */
function processesOf(dir: string): string[] {
  const out: string[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${d}/cmdline`, "latin1");
      if (cmdline.includes(dir) || readFileSync(`/proc/${d}/environ`, "latin1").includes(`=${dir}\0`)) {
        out.push(`${d} ${cmdline.replaceAll("\0", " ").slice(0, 120)}`);
      }
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

// Its own node, as a user's `make run` starts one: the machine to itself (in CI's node lane, node-lane-run.ts, after
// the suites on the lane's node).
nodeLaneDescribe("make run LOCAL=1", "machine", {}, () => {
  it("runs the operator on a local cluster with a real node: Jobs run Pods, logs, status, cleanup, GC; Ctrl-C restores the machine", async (t) => {
    requireRoot(); // the node needs root; CI runs as root (no skipping)
    const cache = mkdtempSync(join(tmpdir(), "make-run-"));
    const base = join(cache, "cronjob-operator", "local");
    // Provisioned outside the timed part (cached: milliseconds); XDG_CACHE_HOME would otherwise move
    // setup-envtest's cache too.
    const assets = assetsDir();
    const nodeAssets = nodeAssetsDir();
    const t0 = Date.now();
    const child = spawn("make", ["--no-print-directory", "run", "LOCAL=1"], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, XDG_CACHE_HOME: cache, KUBEBUILDER_ASSETS: assets, NODE_CLUSTER_ASSETS: nodeAssets },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true, // its own process group, like a terminal's foreground job
    });
    let out = "";
    child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    const tail = () => out.slice(-4000);
    let kubeconfig = "";

    function kubectl(
      args: string[],
      stdin?: string,
      command = "kubectl",
    ): Promise<{ code: number; stdout: string; stderr: string }> {
      return new Promise((resolve) => {
        const p = execFile(
          command,
          args,
          { env: { ...process.env, KUBECONFIG: kubeconfig }, maxBuffer: 64 << 20 },
          (err, stdout, stderr) =>
            resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
        );
        if (stdin !== undefined) p.stdin!.end(stdin);
      });
    }
    async function list(resource: string, ...flags: string[]): Promise<Obj[]> {
      const r = await kubectl(["get", resource, "-n", "default", "-o", "json", ...flags]);
      assert.equal(r.code, 0, `kubectl get ${resource}: ${r.stderr}`);
      return (JSON.parse(r.stdout) as { items: Obj[] }).items;
    }
    async function eventually<T>(
      what: string,
      fn: () => Promise<T | undefined | false>,
      timeoutMs: number,
    ): Promise<T> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const v = await fn();
        if (v) return v;
        if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}\n${tail()}`);
        if (child.exitCode !== null)
          assert.fail(`make run exited (${child.exitCode}) while waiting for ${what}\n${tail()}`);
        await sleep(1000);
      }
    }
    const since = (t: number) => `${((Date.now() - t) / 1000).toFixed(1)} s`;

    try {
      // Another local node on this machine (a concurrent test) holds the node lock until it stops.
      await eventually(
        "the local node to start (its control plane)",
        async () => /envtest: started etcd/.test(out),
        300_000,
      );
      const tLock = Date.now();
      kubeconfig = await eventually(
        "the KUBECONFIG line",
        async () => /export KUBECONFIG=(\S+)/.exec(out)?.[1],
        120_000,
      );
      t.diagnostic(`make run → operator running: ${since(t0)} (${since(tLock)} after the node lock)`);
      assert.equal(kubeconfig, join(base, "kubeconfig"));
      assert.match(out, /cronjob\.batch\.tutorial\.kubebuilder\.io\/cronjob-sample (created|unchanged|configured)/);
      assert.match(out, /running on a local cluster with a real node/);
      assert.match(out, /kubectl logs job\/<job name>/);
      assert.doesNotMatch(out, /no local node/);
      const nodes = await list("nodes");
      assert.deepEqual(
        nodes.map((n) => n.metadata.name),
        [NODE_NAME],
      );

      // History cleanup for real: a CronJob that keeps no successful Job.
      const history = readFileSync(join(PROJECT_ROOT, "config", "samples", "batch_v1_cronjob.yaml"), "utf8")
        .replace("name: cronjob-sample", "name: cronjob-keep-none")
        .replace("concurrencyPolicy: Allow", "successfulJobsHistoryLimit: 0\n  concurrencyPolicy: Allow");
      const applied = await kubectl(["apply", "-f", "-"], history);
      assert.equal(applied.code, 0, applied.stderr);

      // The sample's first run: a real Pod on the node, run to completion.
      const job = await eventually(
        "a completed Job of the sample",
        async () =>
          (await list("jobs")).find((j) => j.metadata.name.startsWith("cronjob-sample-") && j.status?.succeeded >= 1),
        150_000,
      );
      t.diagnostic(`make run → first completed Job (${job.metadata.name}): ${since(t0)}`);
      const pods = await list("pods", "-l", `job-name=${job.metadata.name}`);
      assert.equal(pods.length, 1, JSON.stringify(pods.map((p) => p.status?.phase)));
      assert.equal(pods[0]!.status?.phase, "Succeeded");
      assert.equal(pods[0]!.spec?.nodeName, NODE_NAME);
      assert.equal(pods[0]!.status?.containerStatuses?.[0]?.image, "docker.io/library/busybox:1.36");

      // What the banner tells the user to run.
      const logs = await kubectl(["logs", `job/${job.metadata.name}`]);
      assert.equal(logs.code, 0, logs.stderr);
      assert.match(logs.stdout, new RegExp(HELLO));
      // Every Job's Pods: another CronJob's Pod may still be starting (kubectl logs then fails), so wait for it.
      const line = new RegExp(`\\[pod/${job.metadata.name}-\\w+/hello\\] ${HELLO}`);
      await eventually(
        "kubectl logs -l job-name --prefix to show the Job's output",
        async () => {
          const all = await kubectl(["logs", "-l", "job-name", "--prefix"]);
          return all.code === 0 && line.test(all.stdout);
        },
        30_000,
      );

      // The operator saw it complete.
      const sample = await eventually(
        "the sample's status.lastSuccessfulTime",
        async () => {
          const r = await kubectl(["get", CRONJOBS, "cronjob-sample", "-o", "json"]);
          const cj = JSON.parse(r.stdout) as Obj;
          return cj.status?.lastSuccessfulTime ? cj : undefined;
        },
        30_000,
      );
      assert.ok(Date.parse(sample.status!.lastSuccessfulTime) >= Date.parse(job.status!.startTime) - 1000);
      const events = (name: string) =>
        list("events", "--field-selector", `involvedObject.name=${name}`).then((evs) => evs.map((e) => e.reason));
      await eventually(
        "a SawCompletedJob event",
        async () => (await events("cronjob-sample")).includes("SawCompletedJob"),
        30_000,
      );
      // kubectl cron why, as a new user asks it here: the operator runs on this host, with no Pod, no Deployment and
      // no Lease, and a CronJob it runs is healthy (exit 0), not "operator down"; so is every CronJob (-A).
      const plugin = join(PROJECT_ROOT, "cmd", "kubectl-cron", "kubectl-cron");
      let lastWhy = "";
      await eventually(
        "kubectl cron why cronjob-sample: healthy, exit 0",
        async () => {
          const one = await kubectl(["why", "cronjob-sample", "-o", "json"], undefined, plugin);
          const all = await kubectl(["why", "-A"], undefined, plugin);
          lastWhy = `why: exit ${one.code} ${one.stdout}${one.stderr}\nwhy -A: exit ${all.code} ${all.stdout}${all.stderr}`;
          const d = JSON.parse(one.stdout || "{}") as { status?: string; also?: unknown[] };
          return one.code === 0 && d.status === "healthy" && d.also?.length === 0 && all.code === 0 ? true : undefined;
        },
        60_000,
      ).catch((e: Error) => assert.fail(`${e.message}\n${lastWhy}`));

      // The printer columns show real values. make run serves API v2 as a deploy does (docs/several-schedules.md),
      // so the preferred version, and plain `kubectl get`, is v2: its SCHEDULES column is status.resolvedSchedule.
      const table = await kubectl(["get", CRONJOBS, "cronjob-sample"]);
      assert.match(table.stdout, /NAME\s+SCHEDULES\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+NEXT SCHEDULE\s+AGE/);
      assert.match(
        table.stdout,
        /cronjob-sample\s+\*\/1 \* \* \* \*\s+false\s+\d+\s+\d+s\s+\d{4}-\d\d-\d\dT\d\d:\d\d:00Z\s+\S+/,
        table.stdout,
      );
      const v1 = await kubectl(["get", `cronjobs.v1.${CRONJOBS.slice("cronjobs.".length)}`, "cronjob-sample"]);
      assert.match(v1.stdout, /NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+NEXT SCHEDULE\s+AGE/);

      // History cleanup: the other CronJob's Job ran, was recorded, then deleted, and its Pod with it.
      await eventually(
        "cronjob-keep-none to record a success and delete the Job",
        async () => {
          const r = await kubectl(["get", CRONJOBS, "cronjob-keep-none", "-o", "json"]);
          const cj = JSON.parse(r.stdout) as Obj;
          if (!cj.status?.lastSuccessfulTime) return false;
          const left = (await list("jobs")).filter((j) => j.metadata.name.startsWith("cronjob-keep-none-"));
          const reasons = await events("cronjob-keep-none");
          return left.length === 0 && reasons.includes("SuccessfulDelete") && reasons.includes("SawCompletedJob");
        },
        150_000,
      );
      await eventually(
        "the deleted Job's Pod to be garbage-collected",
        async () => (await list("pods")).every((p) => !p.metadata.name.startsWith("cronjob-keep-none-")),
        60_000,
      );

      // Deleting the CronJob garbage-collects its Jobs and their Pods.
      const del = await kubectl(["delete", CRONJOBS, "cronjob-sample", "--wait=true"]);
      assert.equal(del.code, 0, del.stderr);
      const tDel = Date.now();
      await eventually(
        "the sample's Jobs and Pods to be garbage-collected",
        async () => {
          const jobs = (await list("jobs")).filter((j) => j.metadata.name.startsWith("cronjob-sample-"));
          const pods = (await list("pods")).filter((p) => p.metadata.name.startsWith("cronjob-sample-"));
          return jobs.length === 0 && pods.length === 0;
        },
        60_000,
      );
      t.diagnostic(`CronJob deleted → its Jobs and Pods gone: ${since(tDel)}`);

      // Ctrl-C reaches the whole foreground group (make, hack/run.ts, the operator).
      const tStop = Date.now();
      process.kill(-child.pid!, "SIGINT");
      const code = await Promise.race([exited, timeout(90_000)]);
      // make itself reports the interrupt (exit 2 or 130); what matters is that everything stopped cleanly.
      assert.notEqual(code, "timeout", tail());
      t.diagnostic(`Ctrl-C → make run exited (machine restored): ${since(tStop)}`);
      assert.match(out, /Manager stopped/);
      assert.match(out, /make run: stopped; the machine is as it was/);
      assert.deepEqual(processesOf(cache), [], "no process of this run is left (kubelet, containerd, shims, ...)");
      const stale = await cleanupStaleNodeCluster();
      if (stale.status === "busy") {
        // Another test's node took the lock meanwhile: ours is not the one it holds.
        assert.notEqual(readHostRecord()?.dir, base);
      } else {
        assert.equal(stale.status, "clean", `left behind: ${stale.problems.join("; ")}`);
      }
      // The cluster's data stays for the next `make run`; the node's own state is gone.
      assert.ok(existsSync(join(base, "control-plane", "etcd")), "etcd data kept");
      assert.ok(!existsSync(join(base, "containerd")) && !existsSync(join(base, "node")), "node state wiped");
    } finally {
      if (child.exitCode === null && child.pid && alive(child.pid)) {
        // Never throws: an error here would hide the test's own failure (the group may be gone already).
        const signal = (sig: NodeJS.Signals) => {
          try {
            process.kill(-child.pid!, sig);
          } catch {
            // the process group has no members left
          }
        };
        signal("SIGINT");
        await Promise.race([exited, timeout(60_000)]);
        if (child.exitCode === null) signal("SIGKILL"); // the node reaper restores the machine
      }
      const mounted = readFileSync("/proc/self/mountinfo", "utf8").includes(` ${cache}/`);
      if (!mounted) rmSync(cache, { recursive: true, force: true });
    }
  });
});
