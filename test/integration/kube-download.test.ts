// hack/setup-envtest downloads the release CI tests and brings it up (issue 62): a loopback mirror laid out like
// dl.k8s.io serves the 1.33.3 binaries this machine has (the control plane the integration run uses, built from
// the release's source by CI), each with its .sha256; setup-envtest, with a fresh cache and KUBE_DOWNLOAD_URL at the
// mirror, downloads and checks them, and a control plane started from what it cached answers /version with
// v1.33.3. As root with the node's binaries at hand, --node downloads kubelet and kube-scheduler too. The small
// cases (a mismatch refused, the fallback to 1.20, the cache) are test/unit/kube-download.test.ts's.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  createReadStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { arch, tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { after, before, describe, it } from "node:test";
import { assetsDir, PROJECT_ROOT, TestEnv } from "../../envtest/index.ts";
import { nodeAssetsDir, requireRoot } from "../../envtest/node-cluster.ts";
import { binaryVersion } from "../../envtest/versions.ts";

const ARCH = arch() === "arm64" ? "arm64" : "amd64";
const CP = ["kube-apiserver", "kube-controller-manager", "kubectl"];
const NODE = ["kubelet", "kube-scheduler"];

async function sha256(path: string): Promise<string> {
  const h = createHash("sha256");
  await pipeline(createReadStream(path), h);
  return h.digest("hex");
}

function setupEnvtest(
  env: Record<string, string>,
  args: string[] = [],
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const base = { ...process.env };
  for (const k of ["KUBEBUILDER_ASSETS", "NODE_CLUSTER_ASSETS", "KUBE_SOURCE", "KUBE_VERSION"]) delete base[k];
  return new Promise((resolveRun) => {
    const child = spawn(join(PROJECT_ROOT, "hack", "setup-envtest"), args, {
      env: { ...base, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.once("close", (status) => resolveRun({ status, stdout, stderr }));
  });
}

describe("hack/setup-envtest downloads Kubernetes 1.33.3 from a mirror", () => {
  let dir = "";
  let url = "";
  let served: Record<string, string> = {};
  let server: ReturnType<typeof createServer> | undefined;
  const requests: string[] = [];
  let etcd = "";
  let nodeAssets = "";

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "kube-download-"));
    const assets = assetsDir();
    etcd = realpathSync(join(assets, "etcd"));
    served = Object.fromEntries(CP.map((b) => [b, realpathSync(join(assets, b))]));
    // The node's binaries as the node tests take them (root, as they need: without it this fails with the reason).
    requireRoot();
    nodeAssets = nodeAssetsDir();
    for (const b of NODE) served[b] = realpathSync(join(nodeAssets, b));
    const digests: Record<string, string> = {};
    for (const [b, path] of Object.entries(served)) digests[b] = await sha256(path);
    const prefix = `/release/v1.33.3/bin/linux/${ARCH}/`;
    server = createServer((req, res) => {
      requests.push(req.url ?? "");
      const name = (req.url ?? "").startsWith(prefix) ? (req.url ?? "").slice(prefix.length) : "";
      const b = name.replace(/\.sha256$/, "");
      if (!served[b]) {
        res.writeHead(404).end();
      } else if (name.endsWith(".sha256")) {
        res.writeHead(200).end(digests[b]);
      } else {
        res.writeHead(200, { "content-type": "application/octet-stream" });
        createReadStream(served[b]!).pipe(res);
      }
    });
    await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/release`;
  });
  after(async () => {
    await new Promise((r) => server?.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it("a fresh cache: the binaries downloaded and checked, and the control plane from them is v1.33.3", async () => {
    // What the mirror serves as v1.33.3: this run's own binaries (CI's are 1.33.3, built from the release's source).
    const version = binaryVersion(served["kube-apiserver"]!).text;
    // etcd 3.5 as hack/kube-source leaves it once fetched from Debian trixie.
    const cache = join(dir, "cache");
    mkdirSync(join(cache, "etcd-trixie", "usr", "bin"), { recursive: true });
    symlinkSync(etcd, join(cache, "etcd-trixie", "usr", "bin", "etcd"));
    writeFileSync(join(cache, "etcd-trixie", ".done"), "");

    const r = await setupEnvtest({ ENVTEST_CACHE_DIR: cache, KUBE_DOWNLOAD_URL: url });
    assert.equal(r.status, 0, r.stderr);
    const downloaded = join(cache, "k8s-1.33.3");
    assert.equal(r.stdout.trim().split("\n").at(-1), downloaded);
    assert.match(
      r.stderr,
      /downloading Kubernetes v1\.33\.3 \(the release CI tests\) from http:\/\/127\.0\.0\.1:\d+\/release\/v1\.33\.3\/bin\/linux\/\w+: kube-apiserver kube-controller-manager kubectl/,
    );
    assert.match(
      r.stderr,
      /assets ready: Kubernetes v1\.33\.3 \(the release CI tests, downloaded from .*, sha256 verified\)/,
    );
    for (const b of CP)
      assert.ok(
        requests.some((p) => p.endsWith(`/${b}`)),
        `${b} downloaded`,
      );
    assert.equal(
      execFileSync(join(downloaded, "kube-apiserver"), ["--version"], { encoding: "utf8" }).trim(),
      `Kubernetes ${version}`,
    );

    const env = await TestEnv.start({ assets: downloaded, crdDirectoryPaths: [], verbose: false });
    try {
      const v = await env.kubectl(["get", "--raw", "/version"]);
      assert.equal(v.code, 0, v.stderr);
      assert.equal((JSON.parse(v.stdout) as { gitVersion: string }).gitVersion, version);
    } finally {
      await env.stop();
    }
  });

  it("--node (root): kubelet and kube-scheduler downloaded beside it, the node directory v1.33.3", async () => {
    const cache = join(dir, "cache");
    assert.ok(existsSync(join(cache, "k8s-1.33.3")), "the control plane's case (before this one) cached the release");
    const before = requests.length;
    const r = await setupEnvtest({ ENVTEST_CACHE_DIR: cache, KUBE_DOWNLOAD_URL: url }, ["--node"]);
    assert.equal(r.status, 0, r.stderr);
    const node = join(cache, "node-1.33.3");
    assert.equal(r.stdout.trim().split("\n").at(-1), node);
    assert.match(
      r.stderr,
      /downloading Kubernetes v1\.33\.3 \(the release CI tests\) from .*: kubelet kube-scheduler\n/,
    );
    assert.match(
      r.stderr,
      /node assets ready: Kubernetes v1\.33\.3 \(the release CI tests, downloaded from .*, sha256 verified\)/,
    );
    assert.deepEqual(
      requests.slice(before).map((p) => p.split("/").at(-1)),
      ["kubelet.sha256", "kube-scheduler.sha256", "kubelet", "kube-scheduler"],
      "the control plane came from the cache",
    );
    for (const b of ["kubelet", "kube-scheduler", "kube-apiserver"]) {
      assert.equal(binaryVersion(join(node, b)).text, binaryVersion(served[b]!).text, b);
    }
  });
});
