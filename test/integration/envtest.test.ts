// The harness leaves no orphan etcd/kube-apiserver, even when the test process fails or is killed.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";

interface Started {
  dir: string;
  groups: number[];
}

function startChild(mode: "throw" | "hang"): Promise<{ started: Started; child: ReturnType<typeof spawn> }> {
  const child = spawn(process.execPath, [join(import.meta.dirname, "fixtures", "envtest-child.ts"), mode], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let buf = "";
    child.stdout.on("data", (d: Buffer) => {
      buf += d.toString();
      const line = buf.split("\n")[0];
      if (buf.includes("\n") && line) resolve({ started: JSON.parse(line) as Started, child });
    });
    child.once("exit", (code) => reject(new Error(`child exited (${code}) before reporting`)));
  });
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitGone(groups: number[], timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!groups.some(groupAlive)) return [];
    await new Promise((r) => setTimeout(r, 200));
  }
  return groups.filter(groupAlive);
}

describe("envtest process hygiene", () => {
  it("stops etcd and kube-apiserver and removes its directory when the test process fails", async () => {
    const { started, child } = await startChild("throw").catch(async (e) => {
      throw e;
    });
    assert.equal(started.groups.length, 2);
    const code = await new Promise<number | null>((r) =>
      child.exitCode !== null ? r(child.exitCode) : child.once("exit", r),
    );
    assert.notEqual(code, 0);
    assert.deepEqual(await waitGone(started.groups, 5000), []);
    assert.equal(existsSync(started.dir), false, "temp dir removed");
  });

  it("takes the control plane down when the test process is killed with SIGKILL", async () => {
    const { started, child } = await startChild("hang");
    try {
      assert.ok(started.groups.every(groupAlive));
      child.kill("SIGKILL");
      // The watchdog polls its parent every second, then gives the binary 3 s to stop.
      assert.deepEqual(await waitGone(started.groups, 15_000), []);
    } finally {
      for (const g of started.groups) if (groupAlive(g)) process.kill(-g, "SIGKILL");
      rmSync(started.dir, { recursive: true, force: true });
    }
  });
});
