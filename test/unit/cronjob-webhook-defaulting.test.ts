// The CronJob defaulting webhook without a server: its defaults as JSON patches that apply and agree with the
// schema's, and the requester of a run-now request it stamps (the validating webhook's limit on the request too).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  parseCronJob,
  RUN_NOW_ANNOTATION,
  RUN_NOW_REQUESTED_BY_ANNOTATION,
  runNowRequestedByValue,
  runNowRequesterOf,
} from "../../api/v1/index.ts";
import { fieldErrorString, type JSONPatchOperation } from "../../runtime/webhook/index.ts";
import { defaultCronJob, mutateCronJob, validateCronJob } from "../../webhooks/cronjob_webhook.ts";
import { minimalCronJob, variant } from "../fixtures.ts";
import { applyPatch, call, decodePatch, request, withSpec } from "../admission.ts";

describe("CronJob defaulting webhook", () => {
  const allDefaults: JSONPatchOperation[] = [
    { op: "add", path: "/spec/concurrencyPolicy", value: "Allow" },
    { op: "add", path: "/spec/suspend", value: false },
    { op: "add", path: "/spec/successfulJobsHistoryLimit", value: 3 },
    { op: "add", path: "/spec/failedJobsHistoryLimit", value: 1 },
  ];

  it("adds every default when nothing is set", async () => {
    const cj = minimalCronJob("defaults");
    assert.deepEqual(defaultCronJob(cj), allDefaults);
    const r = await call(mutateCronJob, request("CREATE", cj));
    assert.equal(r.allowed, true);
    assert.deepEqual(decodePatch(r), allDefaults);
    assert.equal(r.warnings, undefined);
  });

  it("keeps fields that are set, including zero, false and non-default values", () => {
    const set = withSpec((s) => {
      s.concurrencyPolicy = "Forbid";
      s.suspend = false;
      s.successfulJobsHistoryLimit = 0;
      s.failedJobsHistoryLimit = 0;
    });
    assert.deepEqual(defaultCronJob(set), []);
    const suspended = withSpec((s) => {
      s.suspend = true;
      s.failedJobsHistoryLimit = 7;
    });
    assert.deepEqual(defaultCronJob(suspended), [allDefaults[0], allDefaults[2]]);
  });

  it("answers an object with everything set without a patch", async () => {
    const set = withSpec((s) => {
      s.concurrencyPolicy = "Replace";
      s.suspend = true;
      s.successfulJobsHistoryLimit = 10;
      s.failedJobsHistoryLimit = 2;
    });
    for (const op of ["CREATE", "UPDATE"] as const) {
      const r = await call(mutateCronJob, request(op, set, op === "UPDATE" ? set : undefined));
      assert.equal(r.allowed, true);
      assert.equal("patch" in r, false, "patched([]) must not carry a patch");
      assert.equal("patchType" in r, false);
    }
  });

  it("treats explicit nulls, and an empty concurrencyPolicy, as unset", () => {
    const nulls = withSpec((s) => {
      s.suspend = null;
      s.concurrencyPolicy = null;
    });
    assert.deepEqual(defaultCronJob(nulls), allDefaults);
    // As in the Go defaulter (`if ConcurrencyPolicy == ""`); the CRD's enum would reject "" otherwise.
    const empty = withSpec((s) => (s.concurrencyPolicy = ""));
    assert.deepEqual(defaultCronJob(empty), allDefaults);
    assert.deepEqual(validateCronJob(applyPatch(empty, defaultCronJob(empty))).errors, []);
  });

  it("defaults updates too, and leaves deletes and connects alone", async () => {
    const cj = minimalCronJob("upd");
    assert.deepEqual(decodePatch(await call(mutateCronJob, request("UPDATE", cj, cj))), allDefaults);
    for (const op of ["DELETE", "CONNECT"] as const) {
      const r = await call(mutateCronJob, request(op, undefined, cj));
      assert.equal(r.allowed, true);
      assert.equal(r.patch, undefined);
    }
  });

  it("does not throw on objects without a spec (validation rejects those)", () => {
    for (const o of [undefined, null, 5, "x", [], {}, { spec: null }, { spec: [] }, { spec: "x" }]) {
      assert.deepEqual(defaultCronJob(o), []);
    }
  });

  it("produces a patch that applies, agrees with the schema defaults and validates", () => {
    const cj = minimalCronJob("applied");
    const patchedObj = applyPatch(cj, defaultCronJob(cj));
    assert.deepEqual(defaultCronJob(patchedObj), [], "defaulting is idempotent");
    const parsed = parseCronJob(patchedObj);
    assert.ok(parsed.ok);
    const schemaDefaults = parseCronJob(cj);
    assert.ok(schemaDefaults.ok);
    for (const f of ["concurrencyPolicy", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"] as const) {
      assert.equal(patchedObj.spec[f], schemaDefaults.value.spec[f], f);
    }
    assert.deepEqual(validateCronJob(patchedObj), { errors: [], warnings: [] });
  });
});

describe("run-now requests at admission", () => {
  const withRequest = (value: string | undefined) =>
    variant(minimalCronJob("rn"), (o) => {
      o.metadata.annotations = value === undefined ? {} : { [RUN_NOW_ANNOTATION]: value };
    });
  const stampOps = (ops: JSONPatchOperation[]) => ops.filter((op) => op.path.startsWith("/metadata/annotations/"));
  const path = "/metadata/annotations/batch.tutorial.kubebuilder.io~1run-now-requested-by";

  it("records the authenticated user when the request is new or changed, never otherwise", async () => {
    const created = decodePatch(await call(mutateCronJob, request("CREATE", withRequest("r1"))));
    assert.deepEqual(stampOps(created), [{ op: "add", path, value: runNowRequestedByValue("admin", "r1") }]);
    const changed = decodePatch(await call(mutateCronJob, request("UPDATE", withRequest("r2"), withRequest("r1"))));
    assert.deepEqual(stampOps(changed), [{ op: "add", path, value: runNowRequestedByValue("admin", "r2") }]);
    for (const [obj, old] of [
      [withRequest("r1"), withRequest("r1")],
      [withRequest(undefined), withRequest("r1")],
      [withRequest("  "), undefined],
    ] as const) {
      const r = await call(mutateCronJob, request(old ? "UPDATE" : "CREATE", obj, old));
      assert.deepEqual(stampOps(decodePatch(r)), []);
    }
  });

  it("the controller reads the stamp only for the request it was made for", () => {
    const cj = {
      metadata: { annotations: { [RUN_NOW_REQUESTED_BY_ANNOTATION]: runNowRequestedByValue("bob", "r1") } },
    };
    assert.equal(runNowRequesterOf(cj, "r1"), "bob");
    assert.equal(runNowRequesterOf(cj, "r2"), undefined);
    assert.equal(
      runNowRequesterOf({ metadata: { annotations: { [RUN_NOW_REQUESTED_BY_ANNOTATION]: "bob" } } }, "r1"),
      undefined,
    );
  });

  it("refuses a request longer than 253 characters, naming the annotation", () => {
    const { errors } = validateCronJob(withRequest("x".repeat(254)));
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.field, `metadata.annotations[${RUN_NOW_ANNOTATION}]`);
    assert.match(fieldErrorString(errors[0]!), /no more than 253/);
    assert.deepEqual(validateCronJob(withRequest("x".repeat(253))).errors, []);
  });
});
