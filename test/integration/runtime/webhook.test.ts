// Admission webhooks called by a real kube-apiserver: the server's AdmissionReview answers, denials
// with apimachinery-shaped Invalid statuses, JSON patches and warnings have to survive the apiserver's
// own handling to reach clients (client-node and kubectl) intact.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  ApiException,
  CoreV1Api,
  type V1ConfigMap,
  type V1MutatingWebhookConfiguration,
  type V1Status,
  type V1ValidatingWebhookConfiguration,
} from "@kubernetes/client-node";
import { stringify } from "yaml";
import {
  allowed,
  denied,
  escapeJSONPointer,
  invalid,
  invalidField,
  patched,
  type AdmissionHandler,
  type AdmissionRequest,
  type JSONPatchOperation,
} from "../../../runtime/webhook/index.ts";
import { TestEnv } from "../../../envtest/index.ts";
import {
  installWebhooks,
  uninstallWebhooks,
  waitForWebhookReady,
  type InstalledWebhooks,
} from "../../../envtest/webhook.ts";
import { withWebhookServer } from "../../servers.ts";

const NAMESPACE = "webhook-test";
const SCOPE_LABEL = "webhook-test.example.com/enabled";
const MUTATED_LABEL = "webhook-test.example.com/mutated";

// The shape kubebuilder generates into config/webhook/manifests.yaml: an in-cluster service reference
// that installWebhooks rewrites to the local server.
const service = (path: string) => ({ service: { name: "webhook-service", namespace: "system", path } });
const scope = { namespaceSelector: { matchLabels: { [SCOPE_LABEL]: "true" } } };

const mutating: V1MutatingWebhookConfiguration = {
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "MutatingWebhookConfiguration",
  metadata: { name: "webhook-test-mutating" },
  webhooks: [
    {
      name: "mconfigmap.webhook-test.example.com",
      admissionReviewVersions: ["v1"],
      clientConfig: service("/mutate-v1-configmap"),
      failurePolicy: "Fail",
      sideEffects: "None",
      rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] }],
      ...scope,
    },
  ],
};

const validating: V1ValidatingWebhookConfiguration = {
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "ValidatingWebhookConfiguration",
  metadata: { name: "webhook-test-validating" },
  webhooks: [
    {
      name: "vconfigmap.webhook-test.example.com",
      admissionReviewVersions: ["v1"],
      clientConfig: service("/validate-v1-configmap"),
      failurePolicy: "Fail",
      sideEffects: "None",
      rules: [
        {
          apiGroups: [""],
          apiVersions: ["v1"],
          operations: ["CREATE", "UPDATE", "DELETE"],
          resources: ["configmaps"],
        },
      ],
      ...scope,
    },
  ],
};

interface ConfigMapLike {
  metadata?: { name?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
}

const requests: AdmissionRequest[] = [];
const probed = new Set<string>();

const mutate: AdmissionHandler = (req) => {
  if (req.dryRun) probed.add("mutate");
  const cm = req.object as ConfigMapLike;
  const ops: JSONPatchOperation[] = [];
  if (!cm.metadata?.labels) ops.push({ op: "add", path: "/metadata/labels", value: {} });
  ops.push({ op: "add", path: `/metadata/labels/${escapeJSONPointer(MUTATED_LABEL)}`, value: "true" });
  return patched(ops);
};

const validate: AdmissionHandler = (req) => {
  requests.push(req);
  if (req.dryRun) probed.add("validate");
  if (req.operation === "DELETE") return allowed();
  const cm = req.object as ConfigMapLike;
  if (cm.data?.bad === "yes") {
    return denied(
      invalid({ group: "", kind: "ConfigMap" }, req.name ?? "", [
        invalidField("data.bad", "yes", "must not be yes"),
        invalidField("data.bad2", cm.data.bad2 ?? null, "must not be set either"),
      ]),
    );
  }
  if (cm.data?.warn !== undefined) return allowed(["data.warn is deprecated; use data.notice"]);
  return allowed();
};

describe("admission webhooks against kube-apiserver", () => {
  let env: TestEnv;
  let core: CoreV1Api;
  let installed: InstalledWebhooks | undefined;
  let manifestDir: string | undefined;

  const webhooks = withWebhookServer(
    new Map([
      ["/mutate-v1-configmap", mutate],
      ["/validate-v1-configmap", validate],
    ]),
  );

  before(async () => {
    env = await TestEnv.start({ crdDirectoryPaths: [] });
    core = env.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: NAMESPACE, labels: { [SCOPE_LABEL]: "true" } } } });
    // The validating configuration goes through a manifest file, as config/webhook would be installed.
    manifestDir = mkdtempSync(join(tmpdir(), "webhook-manifests-"));
    writeFileSync(join(manifestDir, "manifests.yaml"), `---\n${stringify(validating)}`);
    installed = await installWebhooks(env, {
      mutating: [mutating],
      paths: [manifestDir],
      port: webhooks.server.port,
      caPEM: webhooks.certs.caPEM,
    });
    await waitForWebhookReady(env, {
      probe: { apiVersion: "v1", kind: "ConfigMap", metadata: { generateName: "probe-", namespace: NAMESPACE } },
      seen: () => probed.has("mutate") && probed.has("validate"),
    });
  });

  after(async () => {
    if (installed && env) await uninstallWebhooks(env, installed);
    await env?.stop();
    if (manifestDir) rmSync(manifestDir, { recursive: true, force: true });
  });

  it("installs the configurations pointing at the local server and trusting the test CA", async () => {
    assert.deepEqual(
      [installed?.mutating.map((c) => c.metadata?.name), installed?.validating.map((c) => c.metadata?.name)],
      [["webhook-test-mutating"], ["webhook-test-validating"]],
    );
    const cc = installed?.validating[0]?.webhooks?.[0]?.clientConfig;
    assert.equal(cc?.url, `https://127.0.0.1:${webhooks.server.port}/validate-v1-configmap`);
    assert.equal(cc?.service, undefined);
    assert.equal(Buffer.from(cc?.caBundle ?? "", "base64").toString(), webhooks.certs.caPEM);
    assert.equal(mutating.webhooks?.[0]?.clientConfig.service?.path, "/mutate-v1-configmap", "input untouched");

    // Installing again replaces what is there.
    const relabelled = { ...mutating, metadata: { ...mutating.metadata, labels: { reinstalled: "true" } } };
    const again = await installWebhooks(env, {
      mutating: [relabelled],
      port: webhooks.server.port,
      caPEM: webhooks.certs.caPEM,
    });
    assert.equal(again.mutating[0]?.metadata?.labels?.reinstalled, "true");
    assert.equal(again.mutating[0]?.metadata?.uid, installed?.mutating[0]?.metadata?.uid);
    assert.equal(
      again.mutating[0]?.webhooks?.[0]?.clientConfig.url,
      `https://127.0.0.1:${webhooks.server.port}/mutate-v1-configmap`,
    );
  });

  it("denies with the 422 Invalid status and causes the handler built", async () => {
    const err = await core
      .createNamespacedConfigMap({ namespace: NAMESPACE, body: { metadata: { name: "bad" }, data: { bad: "yes" } } })
      .then(
        () => assert.fail("the webhook should have denied the ConfigMap"),
        (e: unknown) => e,
      );
    assert.ok(err instanceof ApiException, String(err));
    assert.equal(err.code, 422);
    const status = (typeof err.body === "string" ? JSON.parse(err.body) : err.body) as V1Status;
    assert.equal(status.reason, "Invalid");
    assert.equal(
      status.message,
      'admission webhook "vconfigmap.webhook-test.example.com" denied the request: ConfigMap "bad" is invalid: ' +
        '[data.bad: Invalid value: "yes": must not be yes, data.bad2: Invalid value: null: must not be set either]',
    );
    assert.deepEqual(status.details?.causes, [
      { reason: "FieldValueInvalid", message: 'Invalid value: "yes": must not be yes', field: "data.bad" },
      { reason: "FieldValueInvalid", message: "Invalid value: null: must not be set either", field: "data.bad2" },
    ]);
    assert.equal(status.details?.name, "bad");
    assert.equal(status.details?.kind, "ConfigMap");

    const cli = await env.kubectl(["create", "configmap", "bad2", "-n", NAMESPACE, "--from-literal=bad=yes"]);
    assert.notEqual(cli.code, 0);
    assert.ok(
      cli.stderr.includes(
        'admission webhook "vconfigmap.webhook-test.example.com" denied the request: ConfigMap "bad2" is invalid: ' +
          '[data.bad: Invalid value: "yes": must not be yes, data.bad2: Invalid value: null: must not be set either]',
      ),
      cli.stderr,
    );
  });

  it("denies updates too", async () => {
    await core.createNamespacedConfigMap({
      namespace: NAMESPACE,
      body: { metadata: { name: "to-update" }, data: { ok: "1" } },
    });
    const patch = await env.kubectl([
      "patch",
      "configmap",
      "to-update",
      "-n",
      NAMESPACE,
      "-p",
      '{"data":{"bad":"yes"}}',
    ]);
    assert.notEqual(patch.code, 0);
    assert.match(patch.stderr, /ConfigMap "to-update" is invalid/);
    assert.equal(requests.at(-1)?.operation, "UPDATE");
  });

  it("applies the mutating webhook's JSON patch", async () => {
    const created = await core.createNamespacedConfigMap({
      namespace: NAMESPACE,
      body: { metadata: { name: "mutated" }, data: { k: "v" } },
    });
    assert.equal(created.metadata?.labels?.[MUTATED_LABEL], "true");
    const withLabels: V1ConfigMap = await core.createNamespacedConfigMap({
      namespace: NAMESPACE,
      body: { metadata: { name: "mutated-2", labels: { keep: "me" } } },
    });
    assert.deepEqual(withLabels.metadata?.labels, { keep: "me", [MUTATED_LABEL]: "true" });
    const read = await core.readNamespacedConfigMap({ namespace: NAMESPACE, name: "mutated" });
    assert.equal(read.metadata?.labels?.[MUTATED_LABEL], "true");
  });

  it("passes warnings through to kubectl", async () => {
    const res = await env.kubectl(["create", "configmap", "warned", "-n", NAMESPACE, "--from-literal=warn=1"]);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /^Warning: data\.warn is deprecated; use data\.notice$/m);
  });

  it("lets DELETE through the validating webhook, with the old object", async () => {
    await core.createNamespacedConfigMap({ namespace: NAMESPACE, body: { metadata: { name: "to-delete" } } });
    const res = await env.kubectl(["delete", "configmap", "to-delete", "-n", NAMESPACE]);
    assert.equal(res.code, 0, res.stderr);
    const del = requests.find((r) => r.operation === "DELETE" && r.name === "to-delete");
    assert.ok(del, "the validating webhook saw the DELETE");
    assert.equal(del.object ?? null, null);
    assert.equal((del.oldObject as ConfigMapLike | undefined)?.metadata?.name, "to-delete");
    await assert.rejects(core.readNamespacedConfigMap({ namespace: NAMESPACE, name: "to-delete" }), (e: unknown) => {
      return e instanceof ApiException && e.code === 404;
    });
  });

  it("leaves namespaces outside the selector alone", async () => {
    const before = requests.length;
    const cm = await core.createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { name: "unscoped" }, data: { bad: "yes" } },
    });
    assert.equal(cm.metadata?.labels?.[MUTATED_LABEL], undefined);
    assert.equal(requests.length, before);
  });
});
