// kubectl cron's read commands against a real kube-apiserver print no warning the user did not cause: on 1.33 a read
// of core/v1 Endpoints (deprecated from 1.33) made every `why` print "Warning: v1 Endpoints is deprecated in v1.33+"
// on stderr, five times. The operator's webhooks are what `why` checks the endpoints of, so the cluster here has one
// whose Service it must look up.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { GROUP } from "../../api/v1/index.ts";
import { runPlugin } from "../plugin-cluster.ts";
import { TestEnv } from "../../envtest/index.ts";

const NS = "warnings";
const OPERATOR_NS = "cronjob-operator-system";

describe("kubectl cron against kube-apiserver: no warning the user did not cause", { timeout: 180_000 }, () => {
  let env: TestEnv;

  before(async () => {
    env = await TestEnv.start();
    const objects = [
      { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } },
      { apiVersion: "v1", kind: "Namespace", metadata: { name: OPERATOR_NS } },
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "cronjob-operator-webhook-service", namespace: OPERATOR_NS },
        spec: { ports: [{ port: 443, targetPort: 9443 }], selector: { "control-plane": "controller-manager" } },
      },
      {
        // Asked of no request (a namespace selector nothing matches), so nothing else in the cluster depends on it.
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "ValidatingWebhookConfiguration",
        metadata: { name: "cronjob-operator-validating-webhook-configuration" },
        webhooks: [
          {
            name: "vcronjob-v1.kb.io",
            admissionReviewVersions: ["v1"],
            sideEffects: "None",
            failurePolicy: "Ignore",
            namespaceSelector: { matchLabels: { "no-such-label": "x" } },
            clientConfig: {
              service: { namespace: OPERATOR_NS, name: "cronjob-operator-webhook-service", path: "/validate" },
            },
            rules: [
              { apiGroups: [GROUP], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["cronjobs"] },
            ],
          },
        ],
      },
      {
        apiVersion: `${GROUP}/v1`,
        kind: "CronJob",
        metadata: { name: "nightly", namespace: NS },
        spec: {
          schedule: "0 3 * * *",
          jobTemplate: {
            spec: {
              template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox:1.36" }] } },
            },
          },
        },
      },
    ];
    const applied = await env.kubectl(
      ["apply", "-f", "-"],
      JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }),
    );
    assert.equal(applied.code, 0, applied.stderr);
  });
  after(async () => {
    await env?.stop();
  });

  const cron = (...argv: string[]) => runPlugin(env, argv);

  for (const argv of [
    ["why", "nightly", "-n", NS],
    ["why", "nightly", "-n", NS, "-o", "json"],
    ["why", "-A"],
    ["why", "-A", "-o", "json"],
    ["list", "-A"],
    ["next", "nightly", "-n", NS],
    ["history", "nightly", "-n", NS],
    ["groups", "-A"],
  ]) {
    it(`kubectl cron ${argv.join(" ")}`, async () => {
      const r = await cron(...argv);
      assert.doesNotMatch(r.err, /^Warning:/m, `stderr:\n${r.err}`);
      // It answered (why exits 1 when something needs attention; groups says on stderr, as kubectl does, that
      // there are none).
      assert.ok(r.out.length > 0 || r.code === 0, `no output (exit ${r.code}); stderr:\n${r.err}`);
    });
  }
});
