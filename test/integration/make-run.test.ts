// `make run LOCAL=1`: the main job. It brings up the local control plane and the operator, applies
// the sample (every minute), a Job appears on schedule, and Ctrl-C stops everything cleanly.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { KubeConfig } from "@kubernetes/client-node";
import { Client } from "../../runtime/client.ts";
import { Kinds } from "../../runtime/kinds.ts";
import { assetsDir, PROJECT_ROOT } from "../envtest/index.ts";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("make run LOCAL=1", () => {
  it("runs the operator on a local control plane: the sample gets a Job on schedule; Ctrl-C stops it all", async () => {
    const cache = mkdtempSync(join(tmpdir(), "make-run-"));
    const assets = assetsDir();
    const child = spawn("make", ["--no-print-directory", "run", "LOCAL=1"], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, XDG_CACHE_HOME: cache, KUBEBUILDER_ASSETS: assets },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true, // its own process group, like a terminal's foreground job
    });
    let out = "";
    child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    try {
      const deadline = Date.now() + 120_000;
      let kubeconfig: string | undefined;
      while (!kubeconfig && Date.now() < deadline) {
        kubeconfig = /KUBECONFIG=(\S+) kubectl get cronjobs\.batch\.tutorial\.kubebuilder\.io/.exec(out)?.[1];
        await new Promise((r) => setTimeout(r, 250));
      }
      assert.ok(kubeconfig, `no KUBECONFIG line printed:\n${out.slice(-3000)}`);
      assert.match(out, /cronjob\.batch\.tutorial\.kubebuilder\.io\/cronjob-sample (created|unchanged|configured)/);
      assert.match(out, /no kubelet here/);

      const kc = new KubeConfig();
      kc.loadFromFile(kubeconfig);
      const client = new Client(kc);
      try {
        // The sample runs every minute: a Job within ~70 s.
        let jobs: string[] = [];
        while (Date.now() < deadline + 30_000) {
          jobs = (await client.list(Kinds.Job, { namespace: "default" })).items.map((j) => j.metadata!.name!);
          if (jobs.some((n) => n.startsWith("cronjob-sample-"))) break;
          await new Promise((r) => setTimeout(r, 1000));
        }
        assert.ok(
          jobs.some((n) => n.startsWith("cronjob-sample-")),
          `no Job for the sample: ${jobs.join(", ")}\n${out.slice(-3000)}`,
        );
        // The printer columns show real values once the status is written.
        const columns = /cronjob-sample\s+\*\/1 \* \* \* \*\s+false\s+\d+\s+\d+s\s+\d{4}-\d\d-\d\dT\d\d:\d\d:00Z\s+\S+/;
        let table = "";
        for (let i = 0; i < 20; i++) {
          table = spawnSync("kubectl", ["get", "cronjobs.batch.tutorial.kubebuilder.io", "cronjob-sample"], {
            env: { ...process.env, KUBECONFIG: kubeconfig },
            encoding: "utf8",
          }).stdout;
          if (columns.test(table)) break;
          await new Promise((r) => setTimeout(r, 500));
        }
        assert.match(table, /NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+NEXT SCHEDULE\s+AGE/);
        assert.match(table, columns, table);
      } finally {
        client.close();
      }

      const pids = [...out.matchAll(/started .* at https?:\/\/127\.0\.0\.1:(\d+)/g)].length;
      assert.ok(pids >= 2, "etcd and kube-apiserver were started");
      process.kill(-child.pid!, "SIGINT"); // Ctrl-C reaches the whole foreground group
      const code = await Promise.race([exited, new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 40_000))]);
      // make itself reports the interrupt (exit 2 or 130); what matters is that everything stopped cleanly.
      assert.notEqual(code, "timeout", out.slice(-2000));
      assert.match(out, /make run: stopped/);
      assert.match(out, /Manager stopped/);
      const leftovers = await new Promise<string>((r) => {
        const p = spawn("pgrep", ["-af", cache], { stdio: ["ignore", "pipe", "ignore"] });
        let s = "";
        p.stdout.on("data", (d: Buffer) => (s += d.toString()));
        p.once("exit", () => r(s.trim()));
      });
      assert.equal(leftovers, "", "no process of this run is left");
    } finally {
      if (child.exitCode === null && child.pid && alive(child.pid)) process.kill(-child.pid, "SIGKILL");
      rmSync(cache, { recursive: true, force: true });
    }
  });
});
