// The harness's version-dependent choices (envtest/versions.ts): each flag and wait is chosen by the
// binaries' version, so binaries of 1.20 (built here) and of the releases users run (1.28–1.35) start.
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  atLeast,
  binaryVersion,
  containerRuntimeArgs,
  insecurePortArgs,
  kubeletConfigFields,
  parseVersion,
  podsNeedTokenSecret,
} from "../../envtest/versions.ts";

describe("envtest versions", () => {
  it("parses what the binaries print", () => {
    assert.deepEqual(parseVersion("Kubernetes v1.20.2\n"), { major: 1, minor: 20, patch: 2, text: "v1.20.2" });
    assert.deepEqual(parseVersion("Kubernetes v1.35.0-rc.1"), { major: 1, minor: 35, patch: 0, text: "v1.35.0" });
    assert.equal(parseVersion("Kubernetes v1.32.3+k3s1").minor, 32);
    assert.throws(() => parseVersion("no version here"), /no version in "no version here"/);
  });

  it("orders versions by minor", () => {
    const v = parseVersion("v1.24.0");
    assert.equal(atLeast(v, 24), true);
    assert.equal(atLeast(v, 25), false);
    assert.equal(atLeast(parseVersion("v2.0.0"), 40), true);
  });

  // Each row: the version, then whether it gets --port=0 (kcm, scheduler), --container-runtime=remote
  // (kubelet), and whether the node waits for the default ServiceAccount's token Secret.
  const rows: Array<[string, boolean, boolean, boolean]> = [
    ["v1.20.2", true, true, true],
    ["v1.21.14", true, true, false],
    ["v1.22.0", false, true, false],
    ["v1.23.17", false, true, false],
    ["v1.24.0", false, false, false],
    ["v1.27.1", false, false, false],
    ["v1.28.15", false, false, false],
    ["v1.32.3", false, false, false],
    ["v1.35.0", false, false, false],
  ];
  for (const [text, port, runtime, secret] of rows) {
    it(`chooses the flags of ${text}`, () => {
      const v = parseVersion(text);
      assert.deepEqual(insecurePortArgs(v), port ? ["--port=0"] : []);
      assert.deepEqual(containerRuntimeArgs(v), runtime ? ["--container-runtime=remote"] : []);
      assert.equal(podsNeedTokenSecret(v), secret);
    });
  }

  it("keeps a 1.31+ kubelet running on a cgroup v1 host (1.35 refuses v1 by default), and tells no older one", () => {
    assert.deepEqual(kubeletConfigFields(parseVersion("v1.35.0"), true), { failCgroupV1: false });
    assert.deepEqual(kubeletConfigFields(parseVersion("v1.31.0"), true), { failCgroupV1: false });
    assert.deepEqual(kubeletConfigFields(parseVersion("v1.30.9"), true), {});
    assert.deepEqual(kubeletConfigFields(parseVersion("v1.20.2"), true), {});
    assert.deepEqual(kubeletConfigFields(parseVersion("v1.35.0"), false), {});
  });

  it("asks a binary for its version once", () => {
    const dir = mkdtempSync(join(tmpdir(), "versions-"));
    try {
      const bin = join(dir, "kube-scheduler");
      const counter = join(dir, "calls");
      writeFileSync(bin, `#!/bin/sh\necho x >> '${counter}'\necho "Kubernetes v1.33.1"\n`);
      chmodSync(bin, 0o755);
      assert.equal(binaryVersion(bin).text, "v1.33.1");
      assert.equal(binaryVersion(bin).minor, 33);
      assert.deepEqual(insecurePortArgs(binaryVersion(bin)), []);
      assert.equal(readFileSync(counter, "utf8"), "x\n");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
