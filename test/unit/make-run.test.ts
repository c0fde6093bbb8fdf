// hack/run.ts's decisions, without a cluster: which local cluster `make run` brings up (a real node
// as root; otherwise the control plane alone, said in one line with the reason), and the names under
// which the local node gets its busybox so that the sample's image is never pulled.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { busyboxAliases, chooseLocalCluster, fallbackLine, normalizeImage, SAMPLE_PATH } from "../../hack/run.ts";

describe("make run: the local cluster", () => {
  it("starts a node as root", async () => {
    const calls: string[] = [];
    const choice = await chooseLocalCluster({
      isRoot: true,
      provision: () => (calls.push("provision"), "/assets"),
      start: async (assets) => (calls.push(`start ${assets}`), "the cluster"),
    });
    assert.deepEqual(choice, { node: "the cluster" });
    assert.deepEqual(calls, ["provision", "start /assets"]);
  });

  it("falls back without root, in one line that says why, and touches nothing", async () => {
    const choice = await chooseLocalCluster({
      isRoot: false,
      provision: () => assert.fail("provisioned without root"),
      start: () => assert.fail("started without root"),
    });
    assert.equal(choice.node, undefined);
    const line = fallbackLine(choice.reason ?? "");
    assert.doesNotMatch(line, /\n/);
    assert.match(line, /^no local node \(not root, .*`sudo -E make run`\): control plane only/);
    assert.match(line, /Jobs are created on schedule but run no Pods$/);
  });

  it("falls back when the node cannot be provisioned or started, with the first line of the error", async () => {
    const noAssets = await chooseLocalCluster({
      isRoot: true,
      provision: () => {
        throw new Error("Command failed: hack/setup-envtest --node\nmore detail");
      },
      start: () => assert.fail("started without assets"),
    });
    assert.equal(noAssets.reason, "provisioning the node failed: Command failed: hack/setup-envtest --node");
    const noStart = await chooseLocalCluster({
      isRoot: true,
      provision: () => "/assets",
      start: () => Promise.reject(new Error(`containerd exited during start-up; see x.log:\n${"log ".repeat(100)}`)),
    });
    assert.equal(noStart.reason, "the node did not start: containerd exited during start-up; see x.log:");
    const long = await chooseLocalCluster({
      isRoot: true,
      provision: () => "/assets",
      start: () => Promise.reject(new Error("x".repeat(1000))),
    });
    assert.ok(fallbackLine(long.reason ?? "").length < 400);
  });
});

describe("make run: the sample's image on the local node", () => {
  it("normalizes image references as the container runtime does", () => {
    assert.equal(normalizeImage("busybox"), "docker.io/library/busybox:latest");
    assert.equal(normalizeImage("busybox:1.36"), "docker.io/library/busybox:1.36");
    assert.equal(normalizeImage("library/busybox:1.36"), "docker.io/library/busybox:1.36");
    assert.equal(normalizeImage("docker.io/library/busybox:1.36"), "docker.io/library/busybox:1.36");
    assert.equal(normalizeImage("me/tool"), "docker.io/me/tool:latest");
    assert.equal(normalizeImage("localhost/busybox:latest"), "localhost/busybox:latest");
    assert.equal(normalizeImage("registry.k8s.io/pause:3.9"), "registry.k8s.io/pause:3.9");
    assert.equal(normalizeImage("localhost:5000/x"), "localhost:5000/x:latest");
    assert.equal(normalizeImage("busybox@sha256:abc"), "docker.io/library/busybox@sha256:abc");
  });

  it("the sample runs a pinned busybox, pulled only if missing, which the local node gets under its name", () => {
    const yaml = readFileSync(SAMPLE_PATH, "utf8");
    assert.deepEqual(busyboxAliases(yaml), ["docker.io/library/busybox:1.36"]);
    assert.match(yaml, /imagePullPolicy: IfNotPresent/);
    assert.match(yaml, /echo Hello from the Kubernetes cluster/);
  });

  it("aliases only busybox images given by tag", () => {
    const yaml = (images: string[]) =>
      JSON.stringify({
        spec: {
          jobTemplate: {
            spec: {
              template: {
                spec: { initContainers: [{ image: images[0] }], containers: images.map((image) => ({ image })) },
              },
            },
          },
        },
      });
    assert.deepEqual(busyboxAliases(yaml(["busybox", "busybox@sha256:abc", "alpine:3", "busybox:1.36"])), [
      "docker.io/library/busybox:latest",
      "docker.io/library/busybox:1.36",
    ]);
    assert.deepEqual(busyboxAliases("kind: ConfigMap\n---\n"), []);
  });
});
