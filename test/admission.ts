// Admission requests as the API server sends them to a webhook, and what the CronJob webhooks' tests
// (test/unit/cronjob-webhook-*.test.ts) share: the request and the handlers' answers without a server, the JSON
// patch a defaulter answers, and a minimal CronJob with its spec changed.
import assert from "node:assert/strict";
import { GROUP, KIND } from "../api/v1/index.ts";
import type { AdmissionReview, Operation } from "../runtime/webhook/admission.ts";
import type { AdmissionRequest, AdmissionResult, JSONPatchOperation } from "../runtime/webhook/index.ts";
import { minimalCronJob, variant } from "./fixtures.ts";

/**
 * The AdmissionRequest for `operation` on `object` (its old object `oldObject`) of `group`'s (ours, unless said)
 * `resource` and `kind`: named as the object (or the old object) is, in its namespace (else `namespace`), by admin.
 */
export function admissionRequest(o: {
  group?: string;
  version?: string;
  resource: string;
  kind: string;
  namespace?: string;
  operation: Operation;
  object: unknown;
  oldObject?: unknown;
  uid?: string;
}): AdmissionRequest {
  const group = o.group ?? GROUP;
  const version = o.version ?? "v1";
  const meta = (o.object ?? o.oldObject) as { metadata?: { name?: string; namespace?: string } } | undefined;
  return {
    uid: o.uid ?? "00000000-0000-0000-0000-000000000001",
    kind: { group, version, kind: o.kind },
    resource: { group, version, resource: o.resource },
    name: meta?.metadata?.name ?? "",
    namespace: meta?.metadata?.namespace ?? o.namespace ?? "default",
    operation: o.operation,
    userInfo: { username: "admin" },
    ...(o.object === undefined ? {} : { object: o.object }),
    ...(o.oldObject === undefined ? {} : { oldObject: o.oldObject }),
  };
}

/** The AdmissionReview (admission.k8s.io/v1) the API server sends a webhook with `request`. */
export const admissionReview = (request: AdmissionRequest): AdmissionReview => ({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request,
});

/** The AdmissionRequest for `operation` on a v1 CronJob. */
export const request = (operation: Operation, object: unknown, oldObject?: unknown): AdmissionRequest =>
  admissionRequest({ resource: "cronjobs", kind: KIND, operation, object, oldObject });

/** The handlers are synchronous, but the type allows a promise. */
export async function call(
  handler: (r: AdmissionRequest) => AdmissionResult | Promise<AdmissionResult>,
  r: AdmissionRequest,
): Promise<AdmissionResult> {
  return await handler(r);
}

export function decodePatch(r: AdmissionResult): JSONPatchOperation[] {
  assert.equal(r.patchType, "JSONPatch");
  assert.equal(typeof r.patch, "string");
  return JSON.parse(Buffer.from(r.patch ?? "", "base64").toString("utf8")) as JSONPatchOperation[];
}

/** Enough of RFC 6902 for the defaulter's `add` operations on existing parents. */
export function applyPatch(obj: unknown, ops: readonly JSONPatchOperation[]): Record<string, any> {
  const out = structuredClone(obj) as Record<string, any>;
  for (const op of ops) {
    assert.equal(op.op, "add");
    const parts = op.path.split("/").slice(1);
    const last = parts.pop() ?? "";
    let cur: Record<string, any> = out;
    for (const p of parts) {
      assert.ok(cur[p] !== null && typeof cur[p] === "object", `patch parent ${op.path} must exist`);
      cur = cur[p] as Record<string, any>;
    }
    cur[last] = op.value;
  }
  return out;
}

export const RP_FIELD = "spec.jobTemplate.spec.template.spec.restartPolicy";
export const LONG_NAME = "test-cronjob-name-that-is-way-too-long-for-kubernetes-jobs-to-be-created-from-it";

/** The minimal CronJob "cj" with `mutate` applied to its spec. */
export const withSpec = (mutate: (spec: Record<string, any>) => void) =>
  variant(minimalCronJob("cj"), (o) => mutate(o.spec as Record<string, any>));
