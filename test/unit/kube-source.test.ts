// Which Kubernetes the tests bring up (hack/setup-envtest, hack/kube-source): a release's source tarball given as
// KUBE_SOURCE selects its version's cache directories, and a clone with no download (test/unit/kube-download.test.ts)
// selects Debian's 1.20, each saying which and why. Fake cached binaries stand in for the builds (minutes), which CI runs for real.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";

const root = resolve(import.meta.dirname, "..", "..");
const hack = (name: string) => join(root, "hack", name);

describe("hack/kube-source and hack/setup-envtest: the version brought up", () => {
  let dir = "";
  let tarball = "";
  let unnamed = "";
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "kube-source-"));
    for (const [top, file] of [
      ["kubernetes-1.33.3", "kubernetes-1.33.3-src.tar.gz"],
      ["src", "unnamed.tar.gz"],
    ] as const) {
      mkdirSync(join(dir, "t", top), { recursive: true });
      writeFileSync(join(dir, "t", top, "go.mod"), "module k8s.io/kubernetes\n\ngo 1.24.0\n");
      execFileSync("tar", ["-czf", join(dir, file), "-C", join(dir, "t"), top]);
    }
    tarball = join(dir, "kubernetes-1.33.3-src.tar.gz");
    unnamed = join(dir, "unnamed.tar.gz");
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const run = (cmd: string, args: string[], env: Record<string, string | undefined>) => {
    const base = { ...process.env };
    delete base.KUBEBUILDER_ASSETS;
    delete base.NODE_CLUSTER_ASSETS;
    delete base.KUBE_SOURCE;
    delete base.KUBE_VERSION;
    delete base.KUBE_DOWNLOAD_URL;
    return spawnSync(cmd, args, { encoding: "utf8", env: { ...base, ...env } });
  };
  /** A cache with fake binaries of `version` in k8s-<version>/, as a finished build leaves it. */
  const cached = (version: string): string => {
    const cache = mkdtempSync(join(dir, "cache-"));
    const assets = join(cache, `k8s-${version}`);
    mkdirSync(assets);
    for (const b of ["etcd", "kube-apiserver", "kube-controller-manager", "kubectl"]) {
      writeFileSync(join(assets, b), `#!/bin/sh\necho "Kubernetes v${version}"\n`);
      chmodSync(join(assets, b), 0o755);
    }
    return cache;
  };

  it("reads the release from the tarball's top directory, or KUBE_VERSION when it names none", () => {
    assert.equal(run(hack("kube-source"), ["version", tarball], {}).stdout.trim(), "1.33.3");
    const none = run(hack("kube-source"), ["version", unnamed], {});
    assert.equal(none.status, 1);
    assert.match(
      none.stderr,
      /KUBE_SOURCE=.*unnamed\.tar\.gz: its top directory 'src\/' names no release .*set KUBE_VERSION=1\.33\.3/,
    );
    assert.equal(run(hack("kube-source"), ["version", unnamed], { KUBE_VERSION: "v1.34.1" }).stdout.trim(), "1.34.1");
    const bad = run(hack("kube-source"), ["version", unnamed], { KUBE_VERSION: "latest" });
    assert.match(bad.stderr, /KUBE_VERSION=latest is not a release/);
    const missing = run(hack("kube-source"), ["version", join(dir, "nope.tar.gz")], {});
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /KUBE_SOURCE=.*nope\.tar\.gz is not a file/);
  });

  it("KUBE_SOURCE selects that release's cached binaries and says where they came from", () => {
    const cache = cached("1.33.3");
    const r = run(hack("setup-envtest"), [], { ENVTEST_CACHE_DIR: cache, KUBE_SOURCE: tarball });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), join(cache, "k8s-1.33.3"));
    assert.match(r.stderr, /Kubernetes v1\.33\.3 \(built from KUBE_SOURCE=.*kubernetes-1\.33\.3-src\.tar\.gz\)/);
  });

  it("build: the four binaries from the tree with the Go its go.mod names, etcd linked, exit 0, nothing left behind", () => {
    // A cache whose trixie Go and etcd are already unpacked (.done), the Go a fake that writes what it would build:
    // the whole script runs, without a download or a compiler.
    const cache = mkdtempSync(join(dir, "build-"));
    const goBin = join(cache, "go-1.24-trixie", "usr", "lib", "go-1.24", "bin");
    mkdirSync(goBin, { recursive: true });
    writeFileSync(join(cache, "go-1.24-trixie", ".done"), "");
    writeFileSync(
      join(goBin, "go"),
      [
        "#!/bin/sh",
        'if [ "$1" = version ]; then echo "go version go1.24.4 linux/amd64"; exit 0; fi',
        'out=""; prev=""; for a in "$@"; do [ "$prev" = -o ] && out="$a"; prev="$a"; done',
        '[ "$GOFLAGS" = -mod=vendor ] && [ "$GOTOOLCHAIN" = local ] || { echo "bad env" >&2; exit 1; }',
        'mkdir -p "$(dirname "$out")"; printf \'#!/bin/sh\\necho "Kubernetes v1.33.3"\\n\' > "$out"; chmod +x "$out"',
      ].join("\n"),
    );
    chmodSync(join(goBin, "go"), 0o755);
    mkdirSync(join(cache, "etcd-trixie", "usr", "bin"), { recursive: true });
    writeFileSync(join(cache, "etcd-trixie", ".done"), "");
    // The source tarball needs its vendor/.
    mkdirSync(join(dir, "v", "kubernetes-1.33.3", "vendor"), { recursive: true });
    writeFileSync(join(dir, "v", "kubernetes-1.33.3", "go.mod"), "module k8s.io/kubernetes\n\ngo 1.24.0\n");
    const src = join(dir, "vendored.tar.gz");
    execFileSync("tar", ["-czf", src, "-C", join(dir, "v"), "kubernetes-1.33.3"]);
    const cp = join(cache, "k8s-1.33.3");
    const node = join(cache, "node-1.33.3");
    const r = run(hack("kube-source"), ["build", src, cp, node], { ENVTEST_CACHE_DIR: cache });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /building Kubernetes v1\.33\.3 with go version go1\.24\.4/);
    assert.match(r.stderr, /built Kubernetes v1\.33\.3 from /);
    for (const b of ["kube-apiserver", "kube-controller-manager"]) assert.ok(existsSync(join(cp, b)), b);
    for (const b of ["kube-scheduler", "kubelet"]) assert.ok(existsSync(join(node, b)), b);
    assert.equal(readlinkSync(join(cp, "etcd")), join(cache, "etcd-trixie", "usr", "bin", "etcd"));
    assert.ok(!existsSync(join(cache, "build-1.33.3")), "the unpacked tree and the Go cache are removed");
  });

  it("a clone with no download brings up Debian's 1.20 and says why", () => {
    const cache = cached("1.20.2");
    const r = run(hack("setup-envtest"), [], { ENVTEST_CACHE_DIR: cache, KUBE_DOWNLOAD_URL: "none" });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), join(cache, "k8s-1.20.2"));
    assert.match(
      r.stderr,
      /Kubernetes v1\.33\.3 not downloaded \(KUBE_DOWNLOAD_URL=none\): Debian's v1\.20\.2 instead, as before; KUBE_SOURCE=FILE builds a current release/,
    );
    assert.match(
      r.stderr,
      /Kubernetes v1\.20\.2 \(Debian bookworm's kubernetes source, the newest Debian has; v1\.33\.3 not downloaded\)/,
    );
  });
});
