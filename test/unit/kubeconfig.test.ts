import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { loadKubeConfig } from "../../runtime/kubeconfig.ts";

const dir = mkdtempSync(join(tmpdir(), "kubeconfig-test-"));
function kubeconfig(name: string, server: string): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "c", cluster: { server } }],
      users: [{ name: "u", user: { token: "t" } }],
      contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
      "current-context": "x",
    }),
  );
  return file;
}

describe("kubeconfig loading order (--kubeconfig, KUBECONFIG, in-cluster, ~/.kube/config)", () => {
  after(() => rmSync(dir, { recursive: true, force: true }));
  const flag = kubeconfig("flag", "https://flag.example:6443");
  const envFile = kubeconfig("env", "https://env.example:6443");

  it("prefers --kubeconfig", () => {
    const prev = process.env.KUBECONFIG;
    process.env.KUBECONFIG = envFile;
    try {
      assert.equal(loadKubeConfig(flag).getCurrentCluster()?.server, "https://flag.example:6443");
      assert.equal(loadKubeConfig(undefined).getCurrentCluster()?.server, "https://env.example:6443");
    } finally {
      if (prev === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = prev;
    }
  });

  it("falls back to ~/.kube/config, and explains what is missing", () => {
    const home = mkdtempSync(join(dir, "home-"));
    assert.throws(
      () => loadKubeConfig(undefined, { HOME: home }),
      /no Kubernetes configuration: pass --kubeconfig, set KUBECONFIG/,
    );
    assert.throws(() => loadKubeConfig(join(dir, "missing")), /--kubeconfig .*missing: file does not exist/);
  });
});
