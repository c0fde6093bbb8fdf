// hack/setup-envtest's download of the release CI tests (issue 62): with no KUBE_SOURCE and no binaries of the user's,
// the official binaries come from KUBE_DOWNLOAD_URL, each checked against its .sha256 before it is cached; a
// mismatch is refused and nothing is cached; with nothing reachable a clone brings up Debian's 1.20 as before and
// says why. The mirror is a loopback HTTP server laid out like dl.k8s.io, serving small fake binaries (the real
// ones: test/integration/kube-download.test.ts); etcd comes from hack/kube-source's cache, unpacked beforehand as a
// finished fetch leaves it. Only loopback is reached: every run names KUBE_DOWNLOAD_URL.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { arch, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";

const root = resolve(import.meta.dirname, "..", "..");
const setupEnvtest = join(root, "hack", "setup-envtest");
const CURRENT = /^K8S_CURRENT=(\S+)$/m.exec(readFileSync(setupEnvtest, "utf8"))?.[1] ?? "";
const ARCH = arch() === "arm64" ? "arm64" : "amd64";
const sha256 = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");

/** A loopback server answering from `files` (path -> body; 404 otherwise), recording every request's path. */
async function mirror(
  files: Map<string, Buffer | string>,
): Promise<{ url: string; requests: string[]; server: Server }> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? "");
    const body = files.get(req.url ?? "");
    if (body === undefined) {
      res.writeHead(404).end("not found\n");
      return;
    }
    res.writeHead(200, { "content-type": "application/octet-stream" }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, server };
}

/** A port nothing listens on: one just released. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

const fakeBinary = (version: string, name: string) => `#!/bin/sh\necho "Kubernetes v${version}" # ${name}\n`;

/** dl.k8s.io's layout of the control plane's binaries, each with its .sha256 (the hex digest alone). */
function releaseFiles(version: string): Map<string, Buffer | string> {
  const files = new Map<string, Buffer | string>();
  for (const b of ["kube-apiserver", "kube-controller-manager", "kubectl", "kubelet", "kube-scheduler"]) {
    const body = fakeBinary(version, b);
    files.set(`/release/v${version}/bin/linux/${ARCH}/${b}`, body);
    files.set(`/release/v${version}/bin/linux/${ARCH}/${b}.sha256`, sha256(body));
  }
  return files;
}

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** hack/setup-envtest, asynchronously: the mirror answers from this process. */
function run(env: Record<string, string>, args: string[] = []): Promise<Run> {
  const base = { ...process.env };
  for (const k of ["KUBEBUILDER_ASSETS", "NODE_CLUSTER_ASSETS", "KUBE_SOURCE", "KUBE_VERSION", "KUBE_DOWNLOAD_URL"]) {
    delete base[k];
  }
  return new Promise((resolveRun) => {
    const child = spawn(setupEnvtest, args, { env: { ...base, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.once("close", (status) => resolveRun({ status, stdout, stderr }));
  });
}

describe("hack/setup-envtest: the release CI tests, downloaded", () => {
  let dir = "";
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "kube-download-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** A cache as a clone's first run finds it, but for etcd 3.5 already fetched from Debian trixie by hack/kube-source
   * (and, with `debian`, Debian's 1.20 already built: the fallback is then seen without a 14-minute build). */
  const freshCache = (opts: { debian?: boolean } = {}): string => {
    const cache = mkdtempSync(join(dir, "cache-"));
    const etcdBin = join(cache, "etcd-trixie", "usr", "bin");
    mkdirSync(etcdBin, { recursive: true });
    writeFileSync(join(etcdBin, "etcd"), '#!/bin/sh\necho "etcd Version: 3.5.16"\n');
    chmodSync(join(etcdBin, "etcd"), 0o755);
    writeFileSync(join(cache, "etcd-trixie", ".done"), "");
    if (opts.debian) {
      mkdirSync(join(cache, "k8s-1.20.2"));
      for (const b of ["etcd", "kube-apiserver", "kube-controller-manager", "kubectl"]) {
        writeFileSync(join(cache, "k8s-1.20.2", b), fakeBinary("1.20.2", b));
        chmodSync(join(cache, "k8s-1.20.2", b), 0o755);
      }
    }
    return cache;
  };

  it("downloads the version CI tests: the one constant names the source .ci/run builds", () => {
    assert.equal(CURRENT, "1.33.3");
    const ciSource = /kubernetes-(\d+\.\d+\.\d+)-src\.tar\.gz/.exec(readFileSync(join(root, ".ci", "run"), "utf8"));
    assert.equal(ciSource?.[1], CURRENT, "hack/setup-envtest's K8S_CURRENT is the release .ci/run tests");
  });

  it("with a mirror: each binary checked against its .sha256, cached, said; a second run takes the cache and asks nothing", async () => {
    const files = releaseFiles(CURRENT);
    const m = await mirror(files);
    try {
      const cache = freshCache({ debian: true });
      const env = { ENVTEST_CACHE_DIR: cache, KUBE_DOWNLOAD_URL: `${m.url}/release` };
      const r = await run(env);
      assert.equal(r.status, 0, r.stderr);
      const assets = join(cache, `k8s-${CURRENT}`);
      assert.equal(r.stdout.trim(), assets, "the release CI tests, over a cached 1.20");
      const binUrl = `${m.url}/release/v${CURRENT}/bin/linux/${ARCH}`;
      for (const b of ["kube-apiserver", "kube-controller-manager", "kubectl"]) {
        assert.equal(readFileSync(join(assets, b), "utf8"), files.get(`/release/v${CURRENT}/bin/linux/${ARCH}/${b}`));
      }
      assert.equal(
        execFileSync(join(assets, "kube-apiserver"), ["--version"], { encoding: "utf8" }).trim(),
        "Kubernetes v1.33.3",
      );
      assert.equal(
        execFileSync(join(assets, "etcd"), ["--version"], { encoding: "utf8" }).trim(),
        "etcd Version: 3.5.16",
      );
      assert.match(
        r.stderr,
        new RegExp(
          `downloading Kubernetes v1\\.33\\.3 \\(the release CI tests\\) from ${binUrl}: kube-apiserver kube-controller-manager kubectl\\n`,
        ),
      );
      assert.match(
        r.stderr,
        new RegExp(
          `assets ready: Kubernetes v1\\.33\\.3 \\(the release CI tests, downloaded from ${binUrl}, sha256 verified\\)`,
        ),
      );
      // The digests first (small: an unreachable or wrong URL is found before anything large), then the binaries.
      assert.deepEqual(
        m.requests.map((p) => p.replace(`/release/v${CURRENT}/bin/linux/${ARCH}/`, "")),
        [
          "kube-apiserver.sha256",
          "kube-controller-manager.sha256",
          "kubectl.sha256",
          "kube-apiserver",
          "kube-controller-manager",
          "kubectl",
        ],
      );
      assert.deepEqual(
        readdirSync(cache).sort(),
        [".lock", "etcd-trixie", "k8s-1.20.2", `k8s-${CURRENT}`],
        "no stage left",
      );

      const again = await run(env);
      assert.equal(again.status, 0, again.stderr);
      assert.equal(again.stdout.trim(), assets);
      assert.equal(m.requests.length, 6, "the cached release asks the mirror nothing");
      assert.match(
        again.stderr,
        new RegExp(
          `cached assets in ${assets}: Kubernetes v1\\.33\\.3 \\(the release CI tests; downloaded from ${binUrl}, sha256 verified\\)`,
        ),
      );
    } finally {
      m.server.close();
    }
  });

  it("a checksum mismatch is refused, naming the file and both digests; nothing is cached and 1.20 is not taken instead", async () => {
    const files = releaseFiles(CURRENT);
    const kcm = `/release/v${CURRENT}/bin/linux/${ARCH}/kube-controller-manager`;
    const wrong = sha256("another file");
    files.set(`${kcm}.sha256`, wrong);
    const m = await mirror(files);
    try {
      const cache = freshCache({ debian: true });
      const r = await run({ ENVTEST_CACHE_DIR: cache, KUBE_DOWNLOAD_URL: `${m.url}/release` });
      assert.equal(r.status, 1, r.stderr);
      assert.equal(r.stdout, "", "no assets directory");
      const actual = sha256(files.get(kcm)!);
      assert.match(
        r.stderr,
        new RegExp(
          `refused ${m.url}${kcm}: sha256 mismatch, expected ${wrong} \\(kube-controller-manager\\.sha256\\), actual ${actual}`,
        ),
      );
      assert.match(
        r.stderr,
        /not using Kubernetes v1\.33\.3 from .*KUBE_DOWNLOAD_URL=none \(Debian's 1\.20\.2\) go without it/,
      );
      assert.doesNotMatch(r.stderr, /Debian's v1\.20\.2 instead/);
      assert.ok(m.requests.includes(kcm), "it was downloaded, then refused");
      // Not the mismatched file, nor the ones that matched before it, nor the stage: the cache is as it was.
      assert.deepEqual(readdirSync(cache).sort(), [".lock", "etcd-trixie", "k8s-1.20.2"]);
    } finally {
      m.server.close();
    }
  });

  it("nothing to download from (a closed port, a mirror without the release, no digest, KUBE_DOWNLOAD_URL=none): Debian's 1.20 as before, saying why", async () => {
    const html = new Map<string, string>();
    for (const b of ["kube-apiserver", "kube-controller-manager", "kubectl"]) {
      html.set(
        `/release/v${CURRENT}/bin/linux/${ARCH}/${b}.sha256`,
        "<html><body>Sign in to the network</body></html>",
      );
    }
    const empty = await mirror(new Map());
    const portal = await mirror(html);
    const closed = `http://127.0.0.1:${await closedPort()}/release`;
    try {
      const cases: [string, RegExp][] = [
        [
          closed,
          new RegExp(
            `${closed}/v1\\.33\\.3/bin/linux/${ARCH}/kube-apiserver\\.sha256: curl: \\(7\\) Failed to connect`,
          ),
        ],
        [`${empty.url}/release`, /kube-apiserver\.sha256: curl: \(22\) The requested URL returned error: 404/],
        [`${portal.url}/release`, /kube-apiserver\.sha256 holds no sha256 digest \(it starts: <html><body>Sign in/],
        ["none", /\(KUBE_DOWNLOAD_URL=none\)/],
      ];
      for (const [url, why] of cases) {
        const cache = freshCache({ debian: true });
        const started = Date.now();
        const r = await run({ ENVTEST_CACHE_DIR: cache, KUBE_DOWNLOAD_URL: url });
        assert.equal(r.status, 0, r.stderr);
        assert.ok(Date.now() - started < 15_000, `${url}: decided in seconds`);
        assert.equal(r.stdout.trim(), join(cache, "k8s-1.20.2"), url);
        assert.match(
          r.stderr,
          /Kubernetes v1\.33\.3 not downloaded \(.*\): Debian's v1\.20\.2 instead, as before; KUBE_SOURCE=FILE builds a current release/,
        );
        assert.match(r.stderr, why);
        assert.match(
          r.stderr,
          /cached assets in .*k8s-1\.20\.2: Kubernetes v1\.20\.2 \(Debian bookworm's kubernetes source, the newest Debian has; v1\.33\.3 not downloaded\)/,
        );
        assert.deepEqual(
          readdirSync(cache).sort(),
          [".lock", "etcd-trixie", "k8s-1.20.2"],
          `${url}: nothing else cached`,
        );
      }
      assert.equal(empty.requests.length, 1, "the first digest's 404 decides: nothing large is asked for");
    } finally {
      empty.server.close();
      portal.server.close();
    }
  });

  it("the user's binaries and KUBE_SOURCE win over the download: the mirror is not asked", async () => {
    const m = await mirror(releaseFiles(CURRENT));
    try {
      const cache = freshCache();
      const mine = join(dir, "mine");
      mkdirSync(mine);
      for (const b of ["etcd", "kube-apiserver"]) {
        writeFileSync(join(mine, b), fakeBinary("1.34.1", b));
        chmodSync(join(mine, b), 0o755);
      }
      const url = `${m.url}/release`;
      const user = await run({ ENVTEST_CACHE_DIR: cache, KUBE_DOWNLOAD_URL: url, KUBEBUILDER_ASSETS: mine });
      assert.equal(user.status, 0, user.stderr);
      assert.equal(user.stdout.trim(), mine);
      assert.match(
        user.stderr,
        /using existing KUBEBUILDER_ASSETS=.*\(Kubernetes v1\.34\.1\): your binaries, nothing provisioned/,
      );

      // A source tarball of another release, built before (fake binaries in its cache directory).
      mkdirSync(join(dir, "src", "kubernetes-1.32.7"), { recursive: true });
      const tarball = join(dir, "kubernetes-1.32.7-src.tar.gz");
      execFileSync("tar", ["-czf", tarball, "-C", join(dir, "src"), "kubernetes-1.32.7"]);
      mkdirSync(join(cache, "k8s-1.32.7"));
      for (const b of ["etcd", "kube-apiserver", "kube-controller-manager", "kubectl"]) {
        writeFileSync(join(cache, "k8s-1.32.7", b), fakeBinary("1.32.7", b));
        chmodSync(join(cache, "k8s-1.32.7", b), 0o755);
      }
      const source = await run({ ENVTEST_CACHE_DIR: cache, KUBE_DOWNLOAD_URL: url, KUBE_SOURCE: tarball });
      assert.equal(source.status, 0, source.stderr);
      assert.equal(source.stdout.trim(), join(cache, "k8s-1.32.7"));
      assert.match(source.stderr, /Kubernetes v1\.32\.7 \(built from KUBE_SOURCE=.*kubernetes-1\.32\.7-src\.tar\.gz\)/);
      assert.deepEqual(m.requests, []);
      assert.ok(!existsSync(join(cache, `k8s-${CURRENT}`)));
    } finally {
      m.server.close();
    }
  });
});
