// The REST client against a real apiserver: typed errors parsed from Status bodies, optimistic
// concurrency on update and status writes, every patch type, background deletes, and the configurations
// runtime/kubeconfig.ts loads (a kubeconfig file, the in-cluster service account).
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Client } from "../../../runtime/client.ts";
import { APIError, isAlreadyExists, isConflict, isNotFound } from "../../../runtime/errors.ts";
import { type KubeObject, Kinds } from "../../../runtime/kinds.ts";
import { inClusterConfig, loadKubeConfig } from "../../../runtime/kubeconfig.ts";
import { TestEnv } from "../../../envtest/index.ts";

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}
const NS = "client-test";

describe("REST client on a real apiserver", () => {
  let env: TestEnv;
  let client: Client;
  before(async () => {
    env = await TestEnv.start({ crdDirectoryPaths: [] });
    client = new Client(env.kubeConfig);
    await client.create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
  });
  after(async () => {
    client?.close();
    await env?.stop();
  });

  const cm = (name: string, data: Record<string, string> = {}): ConfigMap => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: NS },
    data,
  });

  it("parses NotFound, AlreadyExists, Invalid and Forbidden", async () => {
    const nf = await client.get(Kinds.ConfigMap, NS, "nope").catch((e: unknown) => e);
    assert.ok(nf instanceof APIError && isNotFound(nf) && nf.code === 404, String(nf));
    await client.create(Kinds.ConfigMap, cm("dup"));
    const ae = await client.create(Kinds.ConfigMap, cm("dup")).catch((e: unknown) => e);
    assert.ok(isAlreadyExists(ae), String(ae));
    const inv = await client.create(Kinds.ConfigMap, cm("Not_A_Valid_Name")).catch((e: unknown) => e);
    assert.ok(inv instanceof APIError && inv.reason === "Invalid", String(inv));
    assert.equal(inv.code, 422);
    assert.ok(
      inv.causes.some((c) => c.field === "metadata.name"),
      JSON.stringify(inv.causes),
    );

    // Creating in a terminating namespace is Forbidden (no namespace controller runs here to finish it).
    const ns = "client-test-terminating";
    await client.create(Kinds.Namespace, {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: ns, finalizers: [] } as never,
      spec: { finalizers: ["kubernetes"] },
    } as KubeObject);
    await client.delete(Kinds.Namespace, undefined, ns);
    const fb = await client
      .create(Kinds.ConfigMap, { ...cm("x"), metadata: { name: "x", namespace: ns } })
      .catch((e: unknown) => e);
    assert.ok(fb instanceof APIError && fb.reason === "Forbidden", String(fb));
  });

  it("makes updates and status writes conditional on resourceVersion (409 Conflict)", async () => {
    const created = await client.create(Kinds.ConfigMap, cm("occ", { v: "1" }));
    await client.update(Kinds.ConfigMap, { ...created, data: { v: "2" } });
    const stale = await client.update(Kinds.ConfigMap, { ...created, data: { v: "3" } }).catch((e: unknown) => e);
    assert.ok(isConflict(stale), String(stale));
    const ns = await client.get<KubeObject>(Kinds.Namespace, undefined, NS);
    const staleStatus = await client
      .updateStatus(Kinds.Namespace, { ...ns, metadata: { ...ns.metadata, resourceVersion: "1" } })
      .catch((e: unknown) => e);
    assert.ok(isConflict(staleStatus), String(staleStatus));
  });

  it("patches with merge, JSON, strategic merge and server-side apply", async () => {
    await client.create(Kinds.ConfigMap, cm("patched", { a: "1" }));
    await client.patch(Kinds.ConfigMap, NS, "patched", { data: { b: "2" } }, "merge");
    await client.patch(Kinds.ConfigMap, NS, "patched", [{ op: "add", path: "/data/c", value: "3" }], "json");
    await client.patch(Kinds.ConfigMap, NS, "patched", { data: { d: "4" } }, "strategic");
    const applied = await client.patch<ConfigMap>(
      Kinds.ConfigMap,
      NS,
      "patched",
      JSON.stringify({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "patched", namespace: NS },
        data: { e: "5" },
      }),
      "apply",
      { fieldManager: "client-test", force: true },
    );
    assert.deepEqual(applied.data, { a: "1", b: "2", c: "3", d: "4", e: "5" });
  });

  it("deletes Jobs in the background (propagationPolicy) and honours a UID precondition", async () => {
    const job = await client.create(Kinds.Job, {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: "bg", namespace: NS },
      spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] } } },
    } as KubeObject);
    const wrong = await client
      .delete(Kinds.Job, NS, "bg", {
        propagationPolicy: "Background",
        preconditions: { uid: "00000000-0000-0000-0000-000000000000" },
      })
      .catch((e: unknown) => e);
    assert.ok(isConflict(wrong), String(wrong));
    await client.delete(Kinds.Job, NS, "bg", {
      propagationPolicy: "Background",
      preconditions: { uid: job.metadata!.uid! },
    });
    const gone = await client.get(Kinds.Job, NS, "bg").catch((e: unknown) => e);
    assert.ok(isNotFound(gone), String(gone));
  });
  it("connects with runtime/kubeconfig.ts's loader: envtest's kubeconfig file and an in-cluster service account", async () => {
    const fromFile = new Client(loadKubeConfig(env.kubeconfigPath));
    const sa = mkdtempSync(join(tmpdir(), "client-test-sa-"));
    try {
      assert.equal((await fromFile.get(Kinds.Namespace, undefined, NS)).metadata?.name, NS);
      writeFileSync(join(sa, "token"), env.token);
      writeFileSync(join(sa, "ca.crt"), readFileSync(env.caFile));
      writeFileSync(join(sa, "namespace"), NS);
      const url = new URL(env.server);
      const kc = inClusterConfig({ KUBERNETES_SERVICE_HOST: url.hostname, KUBERNETES_SERVICE_PORT: url.port }, sa);
      const inCluster = new Client(kc);
      try {
        assert.equal((await inCluster.get(Kinds.Namespace, undefined, NS)).metadata?.name, NS);
      } finally {
        inCluster.close();
      }
      // A wrong token is refused (the header comes from the file).
      writeFileSync(join(sa, "token"), "not-a-token");
      const refused = new Client(
        inClusterConfig({ KUBERNETES_SERVICE_HOST: url.hostname, KUBERNETES_SERVICE_PORT: url.port }, sa),
      );
      try {
        const err = await refused.get(Kinds.Namespace, undefined, NS).catch((e: unknown) => e);
        assert.ok(err instanceof APIError && err.code === 401, String(err));
      } finally {
        refused.close();
      }
    } finally {
      fromFile.close();
      rmSync(sa, { recursive: true, force: true });
    }
  });
});
