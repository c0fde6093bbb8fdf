// The CronJob admission webhooks without a server: defaulting as JSON patches, validation with
// apimachinery-shaped denials (the kubebuilder tutorial's cases and more), and a property test that
// whatever the validating webhook admits, the controller's parser and scheduler can schedule.
import assert from "node:assert/strict";
import { jitterSecondsOf, worstCaseRetrySeconds } from "../../api/v1/index.ts";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  CRONJOB_NAME_LABEL,
  GROUP,
  jobForSlot,
  type JobSource,
  KIND,
  MAX_CRONJOB_NAME_LENGTH,
  parseCronJob,
  BACKFILL_ANNOTATION,
  RESUME_ANNOTATION,
  RUN_NOW_ANNOTATION,
  RUN_NOW_REQUESTED_BY_ANNOTATION,
  runNowRequestedByValue,
  runNowRequesterOf,
} from "../../api/v1/index.ts";
import {
  parseHashedSchedule,
  parseSchedule,
  resolveHashedSchedule,
  scheduleWindow,
} from "../../api/v1/schedule/index.ts";
import {
  fieldErrorString,
  type AdmissionRequest,
  type AdmissionResult,
  type JSONPatchOperation,
} from "../../runtime/webhook/index.ts";
import { type Operation } from "../../runtime/webhook/admission.ts";
import {
  cronJobWebhookHandlers,
  defaultCronJob,
  MUTATE_PATH,
  mutateCronJob,
  VALIDATE_PATH,
  validateCronJob,
  validateCronJobRequest,
  webhookMarkers,
} from "../../webhooks/cronjob_webhook.ts";
import { minimalCronJob, variant } from "../fixtures.ts";
import { APIError } from "../../runtime/errors.ts";
import { discardLogger } from "../../runtime/log.ts";
import {
  DRY_RUN_TIMEOUT_MS,
  type DryRunClient,
  dryRunJobTemplate,
  jobErrorsToCronJob,
  parseErrorBody,
  PLACEHOLDER_UID,
  strictDecodingFields,
  UNKNOWN_JOB_FIELD,
  unquoteGo,
} from "../../webhooks/jobtemplate_dryrun.ts";

const RP_FIELD = "spec.jobTemplate.spec.template.spec.restartPolicy";
const LONG_NAME = "test-cronjob-name-that-is-way-too-long-for-kubernetes-jobs-to-be-created-from-it";

function request(operation: Operation, object: unknown, oldObject?: unknown): AdmissionRequest {
  const meta = (object ?? oldObject) as { metadata?: { name?: string; namespace?: string } } | undefined;
  return {
    uid: "00000000-0000-0000-0000-000000000001",
    kind: { group: GROUP, version: "v1", kind: KIND },
    resource: { group: GROUP, version: "v1", resource: "cronjobs" },
    name: meta?.metadata?.name ?? "",
    namespace: meta?.metadata?.namespace ?? "default",
    operation,
    userInfo: { username: "admin" },
    ...(object === undefined ? {} : { object }),
    ...(oldObject === undefined ? {} : { oldObject }),
  };
}

/** The handlers are synchronous, but the type allows a promise. */
async function call(
  handler: (r: AdmissionRequest) => AdmissionResult | Promise<AdmissionResult>,
  r: AdmissionRequest,
): Promise<AdmissionResult> {
  return await handler(r);
}

function decodePatch(r: AdmissionResult): JSONPatchOperation[] {
  assert.equal(r.patchType, "JSONPatch");
  assert.equal(typeof r.patch, "string");
  return JSON.parse(Buffer.from(r.patch ?? "", "base64").toString("utf8")) as JSONPatchOperation[];
}

/** Enough of RFC 6902 for the defaulter's `add` operations on existing parents. */
function applyPatch(obj: unknown, ops: readonly JSONPatchOperation[]): Record<string, any> {
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

const withSpec = (mutate: (spec: Record<string, any>) => void) =>
  variant(minimalCronJob("cj"), (o) => mutate(o.spec as Record<string, any>));

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

describe("CronJob validating webhook", () => {
  const longName = LONG_NAME.slice(0, 79);
  const badReason = (schedule: string) => {
    const p = parseSchedule(schedule);
    assert.ok(!p.ok, `${schedule} should not parse`);
    return p.error.reason;
  };

  it("uses a 79-character name in these tests", () => assert.equal(longName.length, 79));

  it("denies a name longer than 52 characters", () => {
    const { errors } = validateCronJob(variant(minimalCronJob(longName), () => undefined));
    assert.deepEqual(errors, [
      {
        field: "metadata.name",
        type: "FieldValueInvalid",
        value: longName,
        detail: "must be no more than 52 characters",
      },
    ]);
    assert.equal(MAX_CRONJOB_NAME_LENGTH, 52);
    assert.deepEqual(validateCronJob(minimalCronJob("a".repeat(52))).errors, []);
    assert.equal(validateCronJob(minimalCronJob("a".repeat(53))).errors[0]?.field, "metadata.name");
  });

  it("denies an invalid schedule, naming the field and the value", () => {
    const { errors } = validateCronJob(withSpec((s) => (s.schedule = "invalid-cron-schedule")));
    assert.equal(errors.length, 1);
    const msg = fieldErrorString(errors[0]!);
    assert.ok(msg.startsWith('spec.schedule: Invalid value: "invalid-cron-schedule": '), msg);
  });

  it("denies a concurrency group that is no object name, and a start limit below 1, naming the field and the value", () => {
    const group = validateCronJob(withSpec((s) => (s.concurrencyGroup = "Backups_1"))).errors;
    assert.equal(group.length, 1);
    const msg = fieldErrorString(group[0]!);
    assert.ok(msg.startsWith('spec.concurrencyGroup: Invalid value: "Backups_1": '), msg);
    assert.match(msg, /a DNS-1123 subdomain/);
    const limit = validateCronJob(withSpec((s) => (s.startTimeoutSeconds = 0))).errors;
    assert.equal(fieldErrorString(limit[0]!).startsWith("spec.startTimeoutSeconds: Invalid value: 0: "), true);
    assert.deepEqual(
      validateCronJob(withSpec((s) => Object.assign(s, { concurrencyGroup: "db-1.eu", startTimeoutSeconds: 300 })))
        .errors,
      [],
    );
  });

  it("admits valid names and schedules", () => {
    const schedules = [
      "*/5 * * * *",
      "0 0 * * *",
      "@hourly",
      "@daily",
      "@midnight",
      "@weekly",
      "@monthly",
      "@yearly",
      "@annually",
      "@every 1h30m",
      "@every 1m",
      "0 9-17/2 * * mon-fri",
      "30 2 29 2 *",
      "0 0 1,15 jan,JUL ?",
      "0 12 * * SUN",
    ];
    for (const schedule of schedules) {
      const name = `ok-${schedule.length}`;
      const r = validateCronJob(variant(minimalCronJob(name), (o) => (o.spec.schedule = schedule)));
      assert.deepEqual(r.errors, [], schedule);
    }
    for (const name of ["a", "cronjob-sample", "x".repeat(52)]) {
      assert.deepEqual(validateCronJob(minimalCronJob(name)).errors, [], name);
    }
    for (const timeZone of ["Etc/UTC", "UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata"]) {
      assert.deepEqual(validateCronJob(withSpec((s) => (s.timeZone = timeZone))).errors, [], timeZone);
    }
  });

  it("renders the full apimachinery Invalid status for several errors", async () => {
    const cj = variant(minimalCronJob(longName), (o) => (o.spec.schedule = "invalid-cron-schedule"));
    const r = await call(validateCronJobRequest, request("CREATE", cj));
    const reason = badReason("invalid-cron-schedule");
    assert.equal(r.allowed, false);
    assert.deepEqual(r.status, {
      status: "Failure",
      code: 422,
      reason: "Invalid",
      message:
        `CronJob.batch.tutorial.kubebuilder.io "${longName}" is invalid: [` +
        `metadata.name: Invalid value: "${longName}": must be no more than 52 characters, ` +
        `spec.schedule: Invalid value: "invalid-cron-schedule": ${reason}]`,
      details: {
        name: longName,
        group: GROUP,
        kind: KIND,
        causes: [
          {
            reason: "FieldValueInvalid",
            message: `Invalid value: "${longName}": must be no more than 52 characters`,
            field: "metadata.name",
          },
          {
            reason: "FieldValueInvalid",
            message: `Invalid value: "invalid-cron-schedule": ${reason}`,
            field: "spec.schedule",
          },
        ],
      },
    });
  });

  it("renders a single error without brackets", async () => {
    const cj = withSpec((s) => (s.schedule = "61 * * * *"));
    const r = await call(validateCronJobRequest, request("CREATE", cj));
    assert.equal(
      r.status?.message,
      `CronJob.batch.tutorial.kubebuilder.io "cj" is invalid: spec.schedule: Invalid value: "61 * * * *": ${badReason("61 * * * *")}`,
    );
  });

  it("names a generateName object by its prefix", async () => {
    const cj = variant(minimalCronJob("x"), (o) => {
      delete o.metadata.name;
      o.metadata.generateName = "gen-";
      o.spec.schedule = "bad";
    });
    const r = await call(validateCronJobRequest, request("CREATE", cj));
    assert.match(r.status?.message ?? "", /^CronJob\.batch\.tutorial\.kubebuilder\.io "gen-" is invalid: /);
  });

  it("denies an update with an invalid name and schedule with both causes", async () => {
    const old = minimalCronJob(longName);
    const cj = variant(old, (o) => (o.spec.schedule = "invalid-cron-schedule"));
    const r = await call(validateCronJobRequest, request("UPDATE", cj, old));
    assert.equal(r.allowed, false);
    assert.equal(r.status?.code, 422);
    assert.deepEqual(
      r.status?.details?.causes?.map((c) => c.field),
      ["metadata.name", "spec.schedule"],
    );
  });

  it("validates an update of an already-invalid object like a create", async () => {
    const invalidOld = variant(minimalCronJob("was-bad"), (o) => (o.spec.schedule = "not a schedule"));
    const stillBad = variant(invalidOld, (o) => (o.spec.suspend = true));
    const update = await call(validateCronJobRequest, request("UPDATE", stillBad, invalidOld));
    const create = await call(validateCronJobRequest, request("CREATE", stillBad));
    assert.equal(update.allowed, false);
    assert.deepEqual(update, create);
    const fixed = variant(invalidOld, (o) => (o.spec.schedule = "@hourly"));
    assert.equal((await call(validateCronJobRequest, request("UPDATE", fixed, invalidOld))).allowed, true);
  });

  it("never blocks a delete, even of an invalid object", async () => {
    const bad = variant(minimalCronJob(longName), (o) => {
      o.spec.schedule = "invalid-cron-schedule";
      delete o.spec.jobTemplate.spec.template.spec.restartPolicy;
    });
    for (const r of [request("DELETE", undefined, bad), request("DELETE", bad, bad), request("CONNECT", bad)]) {
      const res = await call(validateCronJobRequest, r);
      assert.equal(res.allowed, true, r.operation);
      assert.equal(res.warnings, undefined);
    }
  });

  it("rejects TZ= and CRON_TZ= prefixes, pointing to spec.timeZone", () => {
    for (const schedule of ["TZ=Europe/Berlin 0 * * * *", "CRON_TZ=UTC 0 0 * * *", " TZ=UTC @hourly"]) {
      const { errors } = validateCronJob(withSpec((s) => (s.schedule = schedule)));
      assert.equal(errors.length, 1, schedule);
      assert.equal(errors[0]?.field, "spec.schedule");
      assert.equal(errors[0]?.value, schedule);
      assert.match(errors[0]?.detail ?? "", /spec\.timeZone/);
    }
  });

  it("rejects schedules that never fire", () => {
    for (const schedule of ["0 0 30 2 *", "0 0 31 4,6,9,11 *", "0 0 30,31 feb *"]) {
      const { errors } = validateCronJob(withSpec((s) => (s.schedule = schedule)));
      assert.equal(errors.length, 1, schedule);
      assert.equal(errors[0]?.field, "spec.schedule");
      assert.match(errors[0]?.detail ?? "", /never fires/);
    }
    // With a day-of-week restriction, day-of-month and day-of-week are OR-ed: Feb 30 or any Monday fires.
    assert.deepEqual(validateCronJob(withSpec((s) => (s.schedule = "0 0 30 2 1"))).errors, []);
  });

  it("rejects an unknown spec.timeZone, naming the field and the value", async () => {
    const cj = withSpec((s) => (s.timeZone = "Mars/Olympus_Mons"));
    const { errors } = validateCronJob(cj);
    assert.deepEqual(
      errors.map((e) => [e.field, e.value]),
      [["spec.timeZone", "Mars/Olympus_Mons"]],
      "one error: the schedule is not blamed for the zone",
    );
    const r = await call(validateCronJobRequest, request("CREATE", cj));
    assert.match(r.status?.message ?? "", /spec\.timeZone: Invalid value: "Mars\/Olympus_Mons": /);
  });

  it("rejects restartPolicy Always and a missing restartPolicy", () => {
    const always = validateCronJob(withSpec((s) => (s.jobTemplate.spec.template.spec.restartPolicy = "Always")));
    assert.deepEqual(
      always.errors.map((e) => [e.field, e.type, e.value]),
      [[RP_FIELD, "FieldValueInvalid", "Always"]],
    );
    assert.match(
      fieldErrorString(always.errors[0]!),
      /^spec\.jobTemplate\.spec\.template\.spec\.restartPolicy: Invalid value: "Always": /,
    );
    const missing = validateCronJob(withSpec((s) => delete s.jobTemplate.spec.template.spec.restartPolicy));
    assert.deepEqual(
      missing.errors.map((e) => [e.field, e.type]),
      [[RP_FIELD, "FieldValueRequired"]],
    );
    for (const rp of ["OnFailure", "Never"]) {
      assert.deepEqual(
        validateCronJob(withSpec((s) => (s.jobTemplate.spec.template.spec.restartPolicy = rp))).errors,
        [],
      );
    }
  });

  it("warns that a template's own CronJob name label is replaced on the Jobs, and admits the CronJob", async () => {
    const foreign = variant(minimalCronJob("nightly"), (o) => {
      o.spec.jobTemplate.metadata = { labels: { app: "x", [CRONJOB_NAME_LABEL]: "other" } };
    });
    const r = await call(validateCronJobRequest, request("CREATE", foreign));
    assert.equal(r.allowed, true);
    assert.deepEqual(r.warnings, [
      `spec.jobTemplate.metadata.labels[${CRONJOB_NAME_LABEL}]: "other" is ignored: the controller labels every Job with its CronJob's name ("nightly")`,
    ]);
    // The same value as the controller's, or the key only on the pod template: nothing to say.
    for (const quiet of [
      variant(minimalCronJob("nightly"), (o) => {
        o.spec.jobTemplate.metadata = { labels: { [CRONJOB_NAME_LABEL]: "nightly" } };
      }),
      variant(minimalCronJob("nightly"), (o) => {
        o.spec.jobTemplate.spec.template.metadata = { labels: { [CRONJOB_NAME_LABEL]: "other" } };
      }),
    ]) {
      assert.deepEqual(validateCronJob(quiet).warnings, [], JSON.stringify(quiet.spec.jobTemplate));
    }
  });

  it("warns about a short startingDeadlineSeconds and a sub-minute @every", async () => {
    const short = withSpec((s) => (s.startingDeadlineSeconds = 5));
    const r = await call(validateCronJobRequest, request("CREATE", short));
    assert.equal(r.allowed, true);
    assert.equal(r.warnings?.length, 1);
    assert.ok(r.warnings?.[0]?.startsWith("spec.startingDeadlineSeconds: 5 "), r.warnings?.[0]);

    const every = await call(
      validateCronJobRequest,
      request(
        "CREATE",
        withSpec((s) => (s.schedule = "@every 30s")),
      ),
    );
    assert.equal(every.allowed, true);
    assert.equal(every.warnings?.length, 1);
    assert.ok(every.warnings?.[0]?.startsWith('spec.schedule: "@every 30s" '), every.warnings?.[0]);

    for (const quiet of [
      withSpec((s) => (s.schedule = "@every 1m")),
      withSpec((s) => (s.schedule = "@every 60s")),
      withSpec((s) => (s.startingDeadlineSeconds = 10)),
      withSpec((s) => (s.startingDeadlineSeconds = 3600)),
    ]) {
      const q = await call(validateCronJobRequest, request("CREATE", quiet));
      assert.equal(q.allowed, true);
      assert.equal(q.warnings, undefined, JSON.stringify(quiet.spec));
    }
  });

  it("resolves H from namespace/name, validates the result and says what it runs as", async () => {
    const hashed = (schedule: string, name = "cj", namespace: string | null = "default") =>
      variant(minimalCronJob(name), (o) => {
        o.spec.schedule = schedule;
        if (namespace === null) delete o.metadata.namespace;
        else o.metadata.namespace = namespace;
      });
    const expect = (schedule: string, name = "cj", namespace = "default") => {
      const r = resolveHashedSchedule(schedule, { namespace, name });
      assert.ok(r.ok && r.hashed);
      return r.resolved;
    };
    const warning = (schedule: string, resolved: string) =>
      `spec.schedule: ${JSON.stringify(schedule)} runs as ${JSON.stringify(resolved)} for this CronJob (H is hashed from namespace/name; an extension the built-in CronJob does not accept)`;

    for (const schedule of ["H * * * *", "H/15 H(9-17) * * 1-5", "H(0-29)/10 * * * *", "0 0 H * *"]) {
      const r = await call(validateCronJobRequest, request("CREATE", hashed(schedule)));
      assert.equal(r.allowed, true, schedule);
      assert.deepEqual(r.warnings, [warning(schedule, expect(schedule))]);
    }
    // The same schedule on other CronJobs: hashed from each one's own namespace/name.
    assert.equal(expect("H * * * *", "cj"), "24 * * * *");
    assert.equal(expect("H * * * *", "backup"), "22 * * * *");
    assert.equal(expect("H * * * *", "backup", "prod"), "42 * * * *");
    assert.deepEqual(validateCronJob(hashed("H * * * *", "backup", "prod")).warnings, [
      warning("H * * * *", "42 * * * *"),
    ]);
    // An object without metadata.namespace: the request's namespace is the CronJob's.
    const noNs = hashed("H * * * *", "backup", null);
    const viaRequest = await call(validateCronJobRequest, { ...request("CREATE", noNs), namespace: "prod" });
    assert.deepEqual(viaRequest.warnings, [warning("H * * * *", "42 * * * *")]);
    // Warnings add up; a plain schedule gets none.
    const both = validateCronJob(variant(hashed("H * * * *"), (o) => (o.spec.startingDeadlineSeconds = 5)));
    assert.equal(both.warnings.length, 2);
    assert.deepEqual(validateCronJob(hashed("24 * * * *")).warnings, []);
  });

  it("denies H it cannot resolve, naming the field and the item", async () => {
    const denied = async (obj: Record<string, any>, detail: RegExp | string) => {
      const r = await call(validateCronJobRequest, request("CREATE", obj));
      assert.equal(r.allowed, false);
      const { errors } = validateCronJob(obj);
      assert.deepEqual(
        errors.map((e) => [e.field, e.value]),
        [["spec.schedule", obj.spec.schedule]],
      );
      if (typeof detail === "string") assert.equal(errors[0]?.detail, detail);
      else assert.match(errors[0]?.detail ?? "", detail);
      assert.match(r.status?.message ?? "", /spec\.schedule: Invalid value: /);
    };
    await denied(
      withSpec((s) => (s.schedule = "H(50-70) * * * *")),
      "minute H(50-70): range must lie within 0-59",
    );
    await denied(
      withSpec((s) => (s.schedule = "H/0 * * * *")),
      "minute H/0: step must be at least 1",
    );
    await denied(
      withSpec((s) => (s.schedule = "H(5-2) * * * *")),
      "minute H(5-2): range is reversed (5 > 2); write it as H(low-high)",
    );
    await denied(
      withSpec((s) => (s.schedule = "0 h * * *")),
      "hour h: write H in upper case (H)",
    );
    await denied(
      withSpec((s) => (s.schedule = "H,30 * * * *")),
      /^minute H,30: H cannot be part of a list/,
    );
    await denied(
      withSpec((s) => (s.schedule = "@hourly H")),
      /^H cannot be used in a descriptor/,
    );
    // With only generateName there is no name to hash from yet.
    const generated = variant(minimalCronJob("x"), (o) => {
      delete o.metadata.name;
      o.metadata.generateName = "report-";
      o.spec.schedule = "H 3 * * *";
    });
    await denied(
      generated,
      /^H needs a fixed metadata\.name: the value is hashed from the CronJob's namespace and name.*generateName/,
    );
    assert.deepEqual(validateCronJob(variant(generated, (o) => (o.spec.schedule = "7 3 * * *"))).errors, []);
  });

  it("keeps warnings on a denial", async () => {
    const r = await call(
      validateCronJobRequest,
      request(
        "CREATE",
        withSpec((s) => {
          s.startingDeadlineSeconds = 5;
          s.timeZone = "Nowhere/Land";
        }),
      ),
    );
    assert.equal(r.allowed, false);
    assert.equal(r.warnings?.length, 1);
  });

  it("does not warn about a value it rejects", () => {
    for (const sds of [1.5, -1, "5"]) {
      const r = validateCronJob(withSpec((s) => (s.startingDeadlineSeconds = sds)));
      assert.deepEqual(
        r.errors.map((e) => e.field),
        ["spec.startingDeadlineSeconds"],
        String(sds),
      );
      assert.deepEqual(r.warnings, [], `no warning for the rejected value ${JSON.stringify(sds)}`);
    }
  });

  // Each bad input with the fields it must be denied for.
  const badInputs: Array<[string, Record<string, any>, string[]]> = [
    ["long name", minimalCronJob(LONG_NAME), ["metadata.name"]],
    ...[
      "invalid-cron-schedule",
      "* * * * * *",
      "* * * *",
      "60 * * * *",
      "* 24 * * *",
      "* * 0 * *",
      "* * 32 * *",
      "* * * 13 *",
      "* * * * 7",
      "* * * foo *",
      "* * * * mon#2",
      "0 0 L * *",
      "0 0 15W * *",
      "h * * * *",
      "H,30 * * * *",
      "H(50-70) * * * *",
      "@every H",
      "5-1 * * * *",
      "*/0 * * * *",
      "1/2/3 * * * *",
      "1-2-3 * * * *",
      "@every",
      "@every 0s",
      "@every -1m",
      "@every 500ms",
      "@every 1d",
      "@every  1h",
      "@fortnightly",
      "@HOURLY",
      " @hourly",
      "TZ=UTC 0 * * * *",
      "CRON_TZ=Europe/Berlin 0 * * * *",
      "0 0 30 2 *",
      "   ",
      "",
      7,
      ["0 * * * *"],
    ].map((sched): [string, Record<string, any>, string[]] => [
      `schedule ${JSON.stringify(sched)}`,
      withSpec((s) => (s.schedule = sched)),
      ["spec.schedule"],
    ]),
    ...(
      [
        "",
        "Mars/Olympus",
        "Local",
        "+01:00",
        "europe/berlin",
        "Europe/berlin",
        "America/New York",
        "../etc",
        5,
      ] as const
    ).map((tz): [string, Record<string, any>, string[]] => [
      `timeZone ${JSON.stringify(tz)}`,
      withSpec((s) => (s.timeZone = tz)),
      ["spec.timeZone"],
    ]),
    ["restartPolicy Always", withSpec((s) => (s.jobTemplate.spec.template.spec.restartPolicy = "Always")), [RP_FIELD]],
    [
      "restartPolicy lower case",
      withSpec((s) => (s.jobTemplate.spec.template.spec.restartPolicy = "never")),
      [RP_FIELD],
    ],
    ["startingDeadlineSeconds -1", withSpec((s) => (s.startingDeadlineSeconds = -1)), ["spec.startingDeadlineSeconds"]],
    [
      "startingDeadlineSeconds 2.5",
      withSpec((s) => (s.startingDeadlineSeconds = 2.5)),
      ["spec.startingDeadlineSeconds"],
    ],
    ["concurrencyPolicy Never", withSpec((s) => (s.concurrencyPolicy = "Never")), ["spec.concurrencyPolicy"]],
    ["suspend yes", withSpec((s) => (s.suspend = "yes")), ["spec.suspend"]],
    ["successful limit -1", withSpec((s) => (s.successfulJobsHistoryLimit = -1)), ["spec.successfulJobsHistoryLimit"]],
    ["failed limit 1.5", withSpec((s) => (s.failedJobsHistoryLimit = 1.5)), ["spec.failedJobsHistoryLimit"]],
    [
      "no containers",
      withSpec((s) => (s.jobTemplate.spec.template.spec.containers = [])),
      ["spec.jobTemplate.spec.template.spec.containers"],
    ],
    [
      "everything at once",
      variant(minimalCronJob(LONG_NAME), (o) => {
        o.spec.schedule = "0 0 L * *";
        o.spec.timeZone = "Atlantis/Capital";
        o.spec.jobTemplate.spec.template.spec.restartPolicy = "Always";
        o.spec.successfulJobsHistoryLimit = -3;
      }),
      ["metadata.name", "spec.timeZone", "spec.schedule", RP_FIELD, "spec.successfulJobsHistoryLimit"],
    ],
  ];

  it("names the field and the value in every denial", async () => {
    for (const [what, obj, fields] of badInputs) {
      const { errors } = validateCronJob(obj);
      assert.deepEqual(errors.map((e) => e.field).sort(), [...fields].sort(), what);
      const r = await call(validateCronJobRequest, request("CREATE", obj));
      assert.equal(r.allowed, false, what);
      assert.equal(r.status?.code, 422, what);
      assert.equal(r.status?.reason, "Invalid", what);
      const message = r.status?.message ?? "";
      const causes = r.status?.details?.causes ?? [];
      assert.equal(causes.length, errors.length, `${what}: one cause per error`);
      for (const [i, e] of errors.entries()) {
        const rendered = fieldErrorString(e);
        assert.ok(message.includes(rendered), `${what}: message ${message} lacks ${rendered}`);
        assert.ok(rendered.startsWith(`${e.field}: `), `${what}: ${rendered} names ${e.field}`);
        assert.ok((e.detail ?? "").length > 0, `${what}: ${rendered} says what is allowed`);
        assert.equal(causes[i]?.field, e.field, what);
        const value = (() => {
          let cur: unknown = obj;
          for (const p of e.field.split(".")) cur = (cur as Record<string, unknown> | undefined)?.[p];
          return cur;
        })();
        if (e.type === "FieldValueRequired") {
          // "Required" (which prints no value) only for a field that is absent or empty.
          assert.ok(
            value === undefined || value === null || value === "",
            `${what}: ${rendered} hides ${String(value)}`,
          );
          assert.ok(rendered.startsWith(`${e.field}: Required value: `), `${what}: ${rendered}`);
          continue;
        }
        assert.deepEqual(e.value, value, `${what}: the error carries the offending value`);
        assert.ok(
          rendered.startsWith(`${e.field}: Invalid value: ${JSON.stringify(value)}: `),
          `${what}: ${rendered} shows ${JSON.stringify(value)}`,
        );
      }
    }
  });

  it("denies objects that are not CronJobs without throwing", async () => {
    for (const o of [null, 5, "x", [], {}, { metadata: { name: "x" } }, { spec: null }]) {
      const { errors } = validateCronJob(o);
      assert.ok(errors.length > 0, JSON.stringify(o));
      const r = await call(validateCronJobRequest, request("CREATE", o));
      assert.equal(r.allowed, false);
    }
    const { errors } = validateCronJob(withSpec((s) => delete s.schedule));
    assert.deepEqual(
      errors.map((e) => [e.field, e.type]),
      [["spec.schedule", "FieldValueRequired"]],
    );
  });

  it("serves both handlers on the paths the webhook configurations use", () => {
    const handlers = cronJobWebhookHandlers();
    assert.equal(MUTATE_PATH, "/mutate-batch-tutorial-kubebuilder-io-v1-cronjob");
    assert.equal(VALIDATE_PATH, "/validate-batch-tutorial-kubebuilder-io-v1-cronjob");
    assert.equal(handlers.get(MUTATE_PATH), mutateCronJob);
    assert.equal(handlers.get(VALIDATE_PATH), validateCronJobRequest);
    assert.equal(webhookMarkers.mutating.path, MUTATE_PATH);
    assert.equal(webhookMarkers.validating.path, VALIDATE_PATH);
    assert.equal(webhookMarkers.validating.name, "vcronjob-v1.kb.io");
  });
});

// ---------------------------------------------------------------------------------------------------
// Property: the webhook never throws, and the controller can schedule whatever it admits.

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

const atom: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 62 }).map(String) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 1_000_000 }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom(...MONTHS, ...DAYS, "JAN", "Mon", "+5", "07", "") },
  { weight: 3, arbitrary: fc.constantFrom("*", "?") },
  {
    weight: 1,
    arbitrary: fc.constantFrom("L", "5L", "LW", "15W", "H", "H(0-29)", "H/15", "H(0-29)/7", "h", "1#3", "mon#2", "-1"),
  },
);
const item: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: atom },
  { weight: 2, arbitrary: fc.tuple(atom, atom).map(([a, b]) => `${a}-${b}`) },
  { weight: 2, arbitrary: fc.tuple(atom, fc.integer({ min: 0, max: 70 })).map(([a, n]) => `${a}/${n}`) },
  {
    weight: 1,
    arbitrary: fc.tuple(atom, atom, fc.integer({ min: 0, max: 30 })).map(([a, b, n]) => `${a}-${b}/${n}`),
  },
);
const field: fc.Arbitrary<string> = fc.array(item, { minLength: 1, maxLength: 3 }).map((xs) => xs.join(","));
const separator = fc.constantFrom(" ", " ", " ", "  ", "\t", " \u00a0");
const cronText: fc.Arbitrary<string> = fc
  .tuple(fc.array(field, { minLength: 3, maxLength: 7 }), fc.array(separator, { minLength: 7, maxLength: 7 }))
  .map(([fields, seps]) => fields.map((f, i) => (i === 0 ? f : `${seps[i] ?? " "}${f}`)).join(""));
// Plausible schedules: five fields whose values are mostly in range, so many are admitted.
const plausibleCron: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom("*", "0", "*/15", "5,35", "59", "0-30/7", "H", "H/15"),
    fc.constantFrom("*", "2", "0-23/3", "1,13", "23", "*/5", "9-17", "H(9-17)"),
    fc.constantFrom("*", "?", "1", "29", "30", "31", "15-31/2", "*/10", "1,31"),
    fc.constantFrom("*", "2", "feb", "2,4", "dec", "1-12/6", "4,6,9,11", "*/2"),
    fc.constantFrom("*", "?", "0", "mon-fri", "sat,sun", "*/2", "6"),
  )
  .map((f) => f.join(" "));
const duration: fc.Arbitrary<string> = fc
  .array(
    fc.tuple(
      fc.oneof(
        fc.integer({ min: 0, max: 200 }).map(String),
        fc.constantFrom("0.5", ".5", "1.", "1.25", "90", "100000", "9223372036854775807"),
      ),
      fc.constantFrom("h", "m", "s", "ms", "us", "µs", "ns", "", "d", "H"),
    ),
    { minLength: 1, maxLength: 3 },
  )
  .chain((parts) => fc.constantFrom("", "-", "+").map((sign) => sign + parts.map(([n, u]) => `${n}${u}`).join("")));
const descriptor: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "@yearly",
    "@annually",
    "@monthly",
    "@weekly",
    "@daily",
    "@midnight",
    "@hourly",
    "@reboot",
    "@Hourly",
    "@every",
    "@",
  ),
  duration.map((d) => `@every ${d}`),
  duration.map((d) => `@every  ${d}`),
);
const schedule: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: cronText },
  { weight: 6, arbitrary: plausibleCron },
  { weight: 2, arbitrary: descriptor },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom("TZ=UTC ", "CRON_TZ=Europe/Berlin ", " TZ=", "tz=UTC "), plausibleCron)
      .map(([p, s]) => p + s),
  },
  { weight: 1, arbitrary: fc.string() },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 30 }) },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.constantFrom("*", "/", "-", ",", "?", " ", "1", "5", "L", "#", "@", "mon", "jan", "\t"), {
        maxLength: 20,
      })
      .map((xs) => xs.join("")),
  },
);

const timeZones = [
  undefined,
  "UTC",
  "Etc/UTC",
  "Europe/Berlin",
  "America/New_York",
  "Australia/Lord_Howe",
  "Asia/Kathmandu",
  "Pacific/Apia",
  "Pacific/Chatham",
  "America/St_Johns",
  "Africa/Casablanca",
  "Antarctica/Troll",
  "Etc/GMT-14",
  "Mars/Base",
  "",
  "Local",
  "utc",
  "+01:00",
  "Europe/berlin",
  "America/New York",
  5,
  null,
] as const;
// Valid zones (and none) more often than invalid ones.
const timeZoneArb = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...timeZones.slice(0, 13)) },
  { weight: 1, arbitrary: fc.constantFrom(...timeZones) },
);

// Mostly valid values (so a good share of objects is admitted and reaches the scheduler), some invalid.
const mostly = <T, U>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<U>): fc.Arbitrary<T | U> =>
  fc.oneof({ weight: 12, arbitrary: valid }, { weight: 1, arbitrary: invalid });

const specArb = fc.record({
  schedule: fc.oneof(
    { weight: 20, arbitrary: schedule },
    { weight: 1, arbitrary: fc.constantFrom(undefined, 7, null) },
  ),
  timeZone: timeZoneArb,
  startingDeadlineSeconds: mostly(
    fc.oneof(fc.constant(undefined), fc.integer({ min: 0, max: 100_000 })),
    fc.oneof(
      fc.integer({ min: -100, max: -1 }),
      fc.double({ min: -10, max: 100, noNaN: true }),
      fc.constantFrom("5", null),
    ),
  ),
  restartPolicy: mostly(
    fc.constantFrom("OnFailure", "Never"),
    fc.constantFrom(undefined, "Always", "", "onfailure", 1),
  ),
  concurrencyPolicy: mostly(fc.constantFrom(undefined, "Allow", "Forbid", "Replace"), fc.constantFrom("Never", "")),
  suspend: mostly(fc.constantFrom(undefined, true, false), fc.constantFrom("true", 0)),
  successfulJobsHistoryLimit: mostly(
    fc.oneof(fc.constant(undefined), fc.integer({ min: 0, max: 10 })),
    fc.oneof(fc.integer({ min: -5, max: -1 }), fc.double({ min: -1, max: 5, noNaN: true })),
  ),
  failedJobsHistoryLimit: mostly(
    fc.oneof(fc.constant(undefined), fc.integer({ min: 0, max: 10 })),
    fc.constantFrom(-1, 2 ** 31, 0.5),
  ),
  name: mostly(
    fc.constant("fuzz"),
    fc.integer({ min: 0, max: 80 }).map((n) => "n".repeat(n)),
  ),
});

type SpecInput = typeof specArb extends fc.Arbitrary<infer T> ? T : never;

function build(s: SpecInput): Record<string, any> {
  return variant(minimalCronJob(s.name), (o) => {
    const spec = o.spec as Record<string, any>;
    const set = (k: string, v: unknown) => {
      if (v === undefined) delete spec[k];
      else spec[k] = v;
    };
    set("schedule", s.schedule);
    set("timeZone", s.timeZone);
    set("startingDeadlineSeconds", s.startingDeadlineSeconds);
    set("concurrencyPolicy", s.concurrencyPolicy);
    set("suspend", s.suspend);
    set("successfulJobsHistoryLimit", s.successfulJobsHistoryLimit);
    set("failedJobsHistoryLimit", s.failedJobsHistoryLimit);
    const pod = spec.jobTemplate.spec.template.spec as Record<string, unknown>;
    if (s.restartPolicy === undefined) delete pod.restartPolicy;
    else pod.restartPolicy = s.restartPolicy;
  });
}

// 1971 to 2098: instants the controller may plausibly see, leap years and the non-leap 2100 boundary aside.
const instant = fc.integer({ min: Date.UTC(1971, 0, 1), max: Date.UTC(2098, 0, 1) });

describe("CronJob validating webhook: an object being deleted", () => {
  it("admits an update of a CronJob being deleted, however invalid it is stored; refuses it otherwise", () => {
    // Stored before a rule existed: a schedule the webhook refuses now, and a finalizer to remove.
    const stored = {
      apiVersion: `${GROUP}/v1`,
      kind: KIND,
      metadata: { name: "old", namespace: "default", finalizers: ["example.com/cleanup"] },
      spec: {
        schedule: "TZ=UTC 0 * * * *",
        jobTemplate: { spec: { template: { spec: { containers: [{ name: "c", image: "busybox" }] } } } },
      },
    };
    const deleting = { ...stored, metadata: { ...stored.metadata, deletionTimestamp: "2026-11-27T10:00:00Z" } };
    const released = { ...deleting, metadata: { ...deleting.metadata, finalizers: [] } };
    const r = validateCronJobRequest(request("UPDATE", released, deleting)) as AdmissionResult;
    assert.equal(r.allowed, true, JSON.stringify(r.status));
    // Not being deleted: the same update is refused, naming the field.
    const kept = { ...stored, metadata: { ...stored.metadata, finalizers: [] } };
    const refused = validateCronJobRequest(request("UPDATE", kept, stored)) as AdmissionResult;
    assert.equal(refused.allowed, false);
    assert.match(String(refused.status?.message), /spec\.schedule/);
  });
});

describe("CronJob validating webhook (properties)", () => {
  it("never throws, and whatever it admits the reconciler can schedule", () => {
    let admitted = 0;
    fc.assert(
      fc.property(
        specArb,
        fc.array(fc.tuple(instant, fc.nat(400 * 86_400), fc.nat(86_400)), { minLength: 1, maxLength: 3 }),
        (s, nows) => {
          const obj = build(s);
          const { errors, warnings } = validateCronJob(obj);
          assert.ok(Array.isArray(warnings));
          for (const e of errors) assert.ok(e.field.length > 0 && (e.detail ?? "").length > 0, JSON.stringify(e));
          for (const op of ["CREATE", "UPDATE"] as const) {
            const r = validateCronJobRequest(request(op, obj, op === "UPDATE" ? obj : undefined)) as AdmissionResult;
            assert.equal(r.allowed, errors.length === 0);
          }
          assert.equal((mutateCronJob(request("CREATE", obj)) as AdmissionResult).allowed, true);
          if (errors.length > 0) return;
          admitted++;

          assert.equal(typeof s.schedule, "string");
          const tz = typeof s.timeZone === "string" ? s.timeZone : undefined;
          // The controller resolves H with the CronJob's namespace/name before parsing.
          const parsed = parseHashedSchedule(s.schedule as string, { namespace: "default", name: s.name }, tz);
          assert.ok(parsed.ok, `admitted ${JSON.stringify(s.schedule)} in ${tz} but the controller cannot parse it`);
          const sched = parsed.schedule;
          if (parsed.hashed) {
            assert.ok(warnings.some((w) => w.includes(` runs as ${JSON.stringify(parsed.resolved)} for this CronJob`)));
          }
          if (sched.isEvery && (sched.everySeconds ?? 0) < 60) {
            assert.ok(
              warnings.some((w) => w.startsWith("spec.schedule: ")),
              "sub-minute @every warns",
            );
          }
          for (const [nowMs, sinceCreation, deadline] of nows) {
            const now = new Date(nowMs);
            const anchor = new Date(nowMs - sinceCreation * 1000);
            const earliest = new Date(Math.max(anchor.getTime(), nowMs - deadline * 1000));
            const w = scheduleWindow({ schedule: sched, earliest, now, anchor });
            assert.ok(
              w.next instanceof Date && w.next.getTime() > nowMs,
              `${JSON.stringify(s.schedule)} in ${tz ?? "UTC"}: next ${String(w.next)} is not after ${now.toISOString()}`,
            );
            if (w.missed) assert.ok(w.missed.getTime() <= nowMs && w.missed.getTime() > earliest.getTime());
          }
        },
      ),
      { numRuns: 600 },
    );
    assert.ok(admitted > 50, `only ${admitted} generated objects were admitted; the generator needs work`);
  });

  it("admits exactly what the controller's parser admits, for otherwise valid objects", () => {
    fc.assert(
      fc.property(schedule, fc.constantFrom(...timeZones.filter((t) => typeof t === "string")), (sched, tz) => {
        const obj = withSpec((s) => {
          s.schedule = sched;
          s.timeZone = tz;
        });
        const { errors } = validateCronJob(obj);
        const parsed =
          sched === "" ? { ok: false } : parseHashedSchedule(sched, { namespace: "default", name: "cj" }, tz);
        assert.equal(errors.length === 0, parsed.ok, `${JSON.stringify(sched)} in ${JSON.stringify(tz)}`);
        for (const e of errors) {
          assert.ok(["spec.schedule", "spec.timeZone"].includes(e.field), e.field);
          if (e.field === "spec.schedule" && e.type !== "FieldValueRequired") assert.equal(e.value, sched);
          if (e.field === "spec.timeZone") assert.equal(e.value, tz);
        }
      }),
      { numRuns: 500 },
    );
  });
});

// ---------------------------------------------------------------------------------------------------
// The Job template checked by the API server: a dry-run create of the Job the controller would create,
// its causes mapped back to the CronJob (a fake client here; test/integration/cronjob/webhook-dryrun.test.ts
// runs it against kube-apiserver).

const RFC1123_LABEL =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

/** The 422 the API server answers for an invalid Job, as the client surfaces it. */
function invalidJob(name: string, causes: Array<{ field: string; reason: string; message: string }>): APIError {
  return APIError.fromResponse(422, {
    kind: "Status",
    apiVersion: "v1",
    status: "Failure",
    message: `Job.batch "${name}" is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join(", ")}`,
    reason: "Invalid",
    details: { name, group: "batch", kind: "Job", causes },
    code: 422,
  });
}

interface Recorded {
  method: string;
  path: string;
  query: Record<string, unknown> | undefined;
  body: any;
  timeoutMs: number | undefined;
}

/** A DryRunClient whose answer is `answer` (a value resolves, an Error rejects, "hang" never settles). */
function fakeClient(answer: unknown): DryRunClient & { calls: Recorded[] } {
  const calls: Recorded[] = [];
  return {
    calls,
    request: (<T>(method: string, path: string, o: Record<string, any> = {}): Promise<T> => {
      calls.push({ method, path, query: o.query, body: o.body, timeoutMs: o.timeoutMs });
      if (answer === "hang") return new Promise<T>(() => undefined);
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer as T);
    }) as DryRunClient["request"],
  };
}

describe("Job template dry-run: API server errors mapped to the CronJob", () => {
  const ctx = { name: "cj", jobName: "cj-1700000000", templateHasLabels: true };

  it("re-renders every cause at its spec.jobTemplate path, with the value, in the same format", () => {
    const causes = [
      {
        field: "spec.template.spec.containers[0].name",
        reason: "FieldValueInvalid",
        message: `Invalid value: "UPPER_case": ${RFC1123_LABEL}`,
      },
      {
        field: "spec.completions",
        reason: "FieldValueInvalid",
        message: "Invalid value: -5: must be greater than or equal to 0",
      },
      {
        field: "spec.backoffLimit",
        reason: "FieldValueInvalid",
        message: "Invalid value: -1: must be greater than or equal to 0",
      },
      {
        field: "spec.template.metadata.labels",
        reason: "FieldValueInvalid",
        message: `Invalid value: "${"v".repeat(64)}": must be no more than 63 characters`,
      },
      {
        field: "metadata.labels",
        reason: "FieldValueInvalid",
        message: `Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.'`,
      },
      {
        field: "spec.template.spec.restartPolicy",
        reason: "FieldValueNotSupported",
        message: `Unsupported value: "Always": supported values: "OnFailure", "Never"`,
      },
      { field: "spec.template.spec.containers[0].image", reason: "FieldValueRequired", message: "Required value" },
      {
        field: "metadata.annotations",
        reason: "FieldValueTooLong",
        message: "Too long: must have at most 262144 bytes",
      },
    ];
    const { errors, outside } = jobErrorsToCronJob(causes, ctx);
    assert.deepEqual(outside, []);
    assert.deepEqual(
      errors.map((e) => [e.field, e.type, e.value]),
      [
        ["spec.jobTemplate.spec.template.spec.containers[0].name", "FieldValueInvalid", "UPPER_case"],
        ["spec.jobTemplate.spec.completions", "FieldValueInvalid", -5],
        ["spec.jobTemplate.spec.backoffLimit", "FieldValueInvalid", -1],
        ["spec.jobTemplate.spec.template.metadata.labels", "FieldValueInvalid", "v".repeat(64)],
        ["spec.jobTemplate.metadata.labels", "FieldValueInvalid", "bad key!"],
        ["spec.jobTemplate.spec.template.spec.restartPolicy", "FieldValueNotSupported", "Always"],
        ["spec.jobTemplate.spec.template.spec.containers[0].image", "FieldValueRequired", undefined],
        ["spec.jobTemplate.metadata.annotations", "FieldValueTooLong", undefined],
      ],
    );
    // The API server's text, unchanged, after the CronJob's path.
    assert.deepEqual(
      errors.map(fieldErrorString),
      causes.map((c) => `spec.jobTemplate.${c.field}: ${c.message}`),
    );
  });

  it("blames the pod template for a Job label error when the template sets no labels (they are copied)", () => {
    const message = `Invalid value: "${"v".repeat(64)}": must be no more than 63 characters`;
    const causes = [
      { field: "metadata.labels", reason: "FieldValueInvalid", message },
      { field: "spec.template.metadata.labels", reason: "FieldValueInvalid", message },
    ];
    const { errors } = jobErrorsToCronJob(causes, { ...ctx, templateHasLabels: false });
    assert.deepEqual(errors.map(fieldErrorString), [`spec.jobTemplate.spec.template.metadata.labels: ${message}`]);
  });

  it("puts a Job name error on the CronJob's name and keeps controller-set fields out of jobTemplate", () => {
    const { errors, outside } = jobErrorsToCronJob(
      [
        {
          field: "metadata.name",
          reason: "FieldValueInvalid",
          message: `Invalid value: "cj-1700000000": must be no more than 63 characters`,
        },
        {
          field: "metadata.ownerReferences.uid",
          reason: "FieldValueInvalid",
          message: `Invalid value: "": uid must not be empty`,
        },
      ],
      ctx,
    );
    assert.deepEqual(errors, [
      {
        field: "metadata.name",
        type: "FieldValueInvalid",
        value: "cj",
        detail: `the name of its Jobs ("cj-1700000000" now) is invalid: Invalid value: "cj-1700000000": must be no more than 63 characters`,
      },
    ]);
    assert.deepEqual(outside, [`metadata.ownerReferences.uid: Invalid value: "": uid must not be empty`]);
  });

  it("parses Go-quoted values, numbers, booleans and nil, and keeps an unknown shape as the detail", () => {
    assert.deepEqual(parseErrorBody("FieldValueInvalid", `Invalid value: "a\\"b\\\\c: d\\x01é\\u00e9": bad: very`), {
      type: "FieldValueInvalid",
      value: 'a"b\\c: d\x01éé',
      detail: "bad: very",
    });
    assert.deepEqual(parseErrorBody("FieldValueInvalid", "Invalid value: true"), {
      type: "FieldValueInvalid",
      value: true,
    });
    assert.deepEqual(parseErrorBody("FieldValueInvalid", "Invalid value: null: x"), {
      type: "FieldValueInvalid",
      value: null,
      detail: "x",
    });
    assert.deepEqual(parseErrorBody("FieldValueTooMany", "Too many: 5: must have at most 4 items"), {
      type: "FieldValueTooMany",
      value: 5,
      detail: "must have at most 4 items",
    });
    // Newer apimachinery's types (1.34+): kept as theirs, not turned into Forbidden.
    assert.deepEqual(parseErrorBody("FieldValueTooFew", "Too few: 0: must have at least 1 item"), {
      type: "FieldValueTooFew",
      value: 0,
      detail: "must have at least 1 item",
    });
    assert.deepEqual(parseErrorBody("FieldValueTooShort", "Too short: must be at least 3 bytes"), {
      type: "FieldValueTooShort",
      detail: "must be at least 3 bytes",
    });
    assert.deepEqual(parseErrorBody("FieldValueForbidden", "Forbidden: may not be set: really"), {
      type: "FieldValueForbidden",
      detail: "may not be set: really",
    });
    // The reason is a hint; the text decides (an unknown reason still parses).
    assert.deepEqual(parseErrorBody("FieldValueTypeInvalid", `Invalid value: "x": y`), {
      type: "FieldValueInvalid",
      value: "x",
      detail: "y",
    });
    assert.deepEqual(parseErrorBody(undefined, "something else entirely"), {
      type: "FieldValueForbidden",
      detail: "something else entirely",
    });
    assert.deepEqual(unquoteGo(`"\\t\\101\\U0001F600"rest`), { value: "\tA😀", end: 18 });
    assert.equal(unquoteGo(`"unterminated`), undefined);
  });
});

describe("CronJob validating webhook with the Job template dry-run", () => {
  const NOW = new Date("2026-11-22T05:53:00Z");
  const sec = Math.floor(NOW.getTime() / 1000);
  const bad = invalidJob(`cj-${sec}`, [
    {
      field: "spec.completions",
      reason: "FieldValueInvalid",
      message: "Invalid value: -5: must be greater than or equal to 0",
    },
  ]);

  it("dry-runs exactly the Job the controller would create, in the request's namespace", async () => {
    const client = fakeClient({});
    const cj = variant(minimalCronJob("cj", "team-a"), (o) => {
      o.spec.timeZone = "Europe/Berlin";
      o.spec.jobTemplate.metadata = { labels: { app: "x" }, annotations: { a: "b" } };
    });
    assert.deepEqual(await dryRunJobTemplate(client, cj as JobSource, "team-a", { slot: NOW }), { kind: "valid" });
    assert.equal(client.calls.length, 1);
    const sent = client.calls[0]!;
    assert.equal(sent.method, "POST");
    assert.equal(sent.path, "/apis/batch/v1/namespaces/team-a/jobs");
    // Strict: a 1.25+ server refuses fields its Job schema lacks instead of dropping them.
    assert.deepEqual(sent.query, { dryRun: "All", fieldValidation: "Strict" });
    assert.equal(sent.timeoutMs, DRY_RUN_TIMEOUT_MS);
    assert.equal(sent.body.metadata.name, `cj-${sec}`);
    assert.equal(sent.body.metadata.ownerReferences[0].uid, PLACEHOLDER_UID);
    const expected = jobForSlot(
      { ...(cj as JobSource), metadata: { name: "cj", namespace: "team-a", uid: PLACEHOLDER_UID } },
      NOW,
    );
    assert.deepEqual(sent.body, expected);
  });

  it("denies with the API server's errors at the CronJob's paths, on CREATE", async () => {
    const client = fakeClient(bad);
    const handler = cronJobWebhookHandlers({ client }).get(VALIDATE_PATH)!;
    const cj = variant(minimalCronJob("cj"), (o) => (o.spec.jobTemplate.spec.completions = -5));
    const r = await call(handler, request("CREATE", cj));
    assert.equal(r.allowed, false);
    assert.equal(r.status?.code, 422);
    assert.equal(
      r.status?.message,
      `CronJob.${GROUP} "cj" is invalid: spec.jobTemplate.spec.completions: Invalid value: -5: must be greater than or equal to 0`,
    );
    assert.deepEqual(r.status?.details?.causes, [
      {
        reason: "FieldValueInvalid",
        message: "Invalid value: -5: must be greater than or equal to 0",
        field: "spec.jobTemplate.spec.completions",
      },
    ]);
    assert.equal(client.calls[0]?.path, "/apis/batch/v1/namespaces/default/jobs");
  });

  it("validates an UPDATE that changes the template (with the CronJob's uid), not one that keeps it", async () => {
    const old = variant(minimalCronJob("cj"), (o) => (o.metadata.uid = "1234-uid"));
    const changed = variant(old, (o) => (o.spec.jobTemplate.spec.backoffLimit = -1));
    const client = fakeClient(bad);
    const handler = cronJobWebhookHandlers({ client }).get(VALIDATE_PATH)!;
    assert.equal((await call(handler, request("UPDATE", changed, old))).allowed, false);
    assert.equal(client.calls[0]?.body.metadata.ownerReferences[0].uid, "1234-uid");

    const relabelled = variant(changed, (o) => (o.metadata.labels = { a: "b" }));
    const r = await call(handler, request("UPDATE", relabelled, changed));
    assert.equal(r.allowed, true);
    assert.equal(client.calls.length, 1, "an unchanged template is not dry-run again");
  });

  it("does not dry-run on DELETE or when the static checks already deny", async () => {
    const client = fakeClient(bad);
    const handler = cronJobWebhookHandlers({ client }).get(VALIDATE_PATH)!;
    assert.equal((await call(handler, request("DELETE", undefined, minimalCronJob("cj")))).allowed, true);
    const staticBad = variant(minimalCronJob("cj"), (o) => (o.spec.schedule = "nope"));
    const r = await call(handler, request("CREATE", staticBad));
    assert.equal(r.allowed, false);
    assert.deepEqual(
      r.status?.details?.causes?.map((c) => c.field),
      ["spec.schedule"],
    );
    assert.equal(client.calls.length, 0);
  });

  it("admits a valid template, and a Job name that is taken (AlreadyExists comes after validation)", async () => {
    for (const answer of [
      {},
      APIError.fromResponse(409, { kind: "Status", code: 409, reason: "AlreadyExists", message: "exists" }),
    ]) {
      const handler = cronJobWebhookHandlers({ client: fakeClient(answer) }).get(VALIDATE_PATH)!;
      const r = await call(handler, request("CREATE", minimalCronJob("cj")));
      assert.equal(r.allowed, true);
      assert.equal(r.warnings, undefined);
    }
  });

  it("admits with a warning, promptly, when the dry-run cannot be made", async () => {
    const cases: Array<[unknown, RegExp]> = [
      [
        new APIError(0, "Unknown", "POST /apis/batch/v1/namespaces/default/jobs: connect ECONNREFUSED 127.0.0.1:1"),
        /ECONNREFUSED/,
      ],
      [
        APIError.fromResponse(403, {
          kind: "Status",
          code: 403,
          reason: "Forbidden",
          message: 'jobs.batch is forbidden: User "x" cannot create resource "jobs"',
        }),
        /403 Forbidden: jobs\.batch is forbidden/,
      ],
      [APIError.fromResponse(503, "upstream down"), /503 ServiceUnavailable/],
      ["hang", /no answer to the dry-run create of Job "cj-\d+" in namespace "default" within 50 ms/],
      [
        invalidJob("cj-1", [
          { field: "metadata.ownerReferences.uid", reason: "FieldValueInvalid", message: `Invalid value: ""` },
        ]),
        /refused the Job for fields the controller sets: metadata\.ownerReferences\.uid/,
      ],
    ];
    for (const [answer, reason] of cases) {
      const handler = cronJobWebhookHandlers({
        client: fakeClient(answer),
        dryRunTimeoutMs: 50,
        logger: discardLogger,
      }).get(VALIDATE_PATH)!;
      const short = variant(minimalCronJob("cj"), (o) => (o.spec.startingDeadlineSeconds = 5));
      const started = Date.now();
      const r = await call(handler, request("CREATE", short));
      assert.ok(Date.now() - started < 2000, "the webhook answers within the dry-run deadline");
      assert.equal(r.allowed, true, String(answer));
      assert.equal(r.warnings?.length, 2, JSON.stringify(r.warnings));
      assert.match(r.warnings?.[0] ?? "", /^spec\.startingDeadlineSeconds: 5/);
      assert.match(r.warnings?.[1] ?? "", /^spec\.jobTemplate: could not be checked against the API server \(/);
      assert.match(r.warnings?.[1] ?? "", reason);
    }
  });
});

describe("missed-run policy and stop after failures at admission", () => {
  it("defaults maxCatchUpRuns to 10 only with missedRunPolicy RunAll; a CronJob without the fields gets no new default", () => {
    const runAll = variant(minimalCronJob("a"), (o) => (o.spec.missedRunPolicy = "RunAll"));
    assert.ok(defaultCronJob(runAll).some((op) => op.path === "/spec/maxCatchUpRuns" && op.value === 10));
    const set = variant(runAll, (o) => (o.spec.maxCatchUpRuns = 3));
    assert.ok(!defaultCronJob(set).some((op) => op.path === "/spec/maxCatchUpRuns"));
    for (const policy of [undefined, "RunLatest", "Skip"]) {
      const o = variant(minimalCronJob("a"), (x) => (x.spec.missedRunPolicy = policy));
      assert.ok(!defaultCronJob(o).some((op) => op.path === "/spec/maxCatchUpRuns"), String(policy));
    }
  });

  it("refuses an unknown policy and out-of-range values, naming the field and the value", () => {
    const cases: Array<[(s: Record<string, unknown>) => void, string, RegExp]> = [
      [(s) => (s.missedRunPolicy = "Sometimes"), "spec.missedRunPolicy", /Sometimes/],
      [(s) => ((s.missedRunPolicy = "RunAll"), (s.maxCatchUpRuns = 0)), "spec.maxCatchUpRuns", /0/],
      [(s) => ((s.missedRunPolicy = "RunAll"), (s.maxCatchUpRuns = 101)), "spec.maxCatchUpRuns", /101/],
      [(s) => (s.stopAfterConsecutiveFailures = 0), "spec.stopAfterConsecutiveFailures", /0/],
      [(s) => (s.stopAfterConsecutiveFailures = 1001), "spec.stopAfterConsecutiveFailures", /1001/],
      [(s) => (s.stopAfterConsecutiveFailures = 2.5), "spec.stopAfterConsecutiveFailures", /2\.5/],
    ];
    for (const [change, field, value] of cases) {
      const { errors } = validateCronJob(withSpec(change));
      assert.equal(errors.length, 1, `${field}: ${JSON.stringify(errors)}`);
      assert.equal(errors[0]!.field, field);
      assert.match(fieldErrorString(errors[0]!), value);
    }
  });

  it("refuses maxCatchUpRuns without RunAll, saying which policy is set", () => {
    const { errors } = validateCronJob(withSpec((s) => ((s.missedRunPolicy = "Skip"), (s.maxCatchUpRuns = 5))));
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.field, "spec.maxCatchUpRuns");
    assert.match(fieldErrorString(errors[0]!), /only used with spec.missedRunPolicy "RunAll" \(the policy is "Skip"\)/);
  });

  it("admits every policy, and RunAll with Replace with a warning", () => {
    for (const p of ["RunLatest", "Skip", "RunAll"]) {
      assert.deepEqual(validateCronJob(withSpec((s) => (s.missedRunPolicy = p))).errors, [], p);
    }
    const r = validateCronJob(withSpec((s) => ((s.missedRunPolicy = "RunAll"), (s.concurrencyPolicy = "Replace"))));
    assert.deepEqual(r.errors, []);
    assert.match(r.warnings.join("\n"), /runs only the newest missed time/);
    assert.deepEqual(validateCronJob(withSpec((s) => (s.stopAfterConsecutiveFailures = 3))).errors, []);
  });

  it("refuses a resume request longer than 253 characters, naming the annotation", () => {
    const o = variant(minimalCronJob("a"), (x) => (x.metadata.annotations = { [RESUME_ANNOTATION]: "x".repeat(254) }));
    const { errors } = validateCronJob(o);
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.field, `metadata.annotations[${RESUME_ANNOTATION}]`);
  });
});

describe("runs that outlast the schedule's interval: warnings at admission", () => {
  const FORBID_HOURLY =
    'spec.concurrencyPolicy: "Forbid" without spec.jobTemplate.spec.activeDeadlineSeconds: a Job that hangs holds back every later run until someone deletes it; set activeDeadlineSeconds below the schedule\'s shortest interval between runs (1h, 3600 s)';
  const job = (s: Record<string, any>) => s.jobTemplate.spec as Record<string, any>;
  const hourly = (mutate: (spec: Record<string, any>) => void) =>
    withSpec((s) => {
      s.schedule = "0 * * * *";
      mutate(s);
    });

  it("warns of concurrencyPolicy Forbid without activeDeadlineSeconds, naming the schedule's interval", async () => {
    const r = await call(
      validateCronJobRequest,
      request(
        "CREATE",
        hourly((s) => (s.concurrencyPolicy = "Forbid")),
      ),
    );
    assert.equal(r.allowed, true);
    assert.deepEqual(r.warnings, [FORBID_HOURLY]);
    // The minimal CronJob's */5: 5m.
    assert.deepEqual(validateCronJob(withSpec((s) => (s.concurrencyPolicy = "Forbid"))).warnings, [
      FORBID_HOURLY.replace("(1h, 3600 s)", "(5m, 300 s)"),
    ]);
    // Any deadline bounds a hung Job; the other policies never hold a run back.
    for (const quiet of [
      hourly((s) => ((s.concurrencyPolicy = "Forbid"), (job(s).activeDeadlineSeconds = 1))),
      hourly((s) => ((s.concurrencyPolicy = "Forbid"), (job(s).activeDeadlineSeconds = 86_400))),
      hourly((s) => (s.concurrencyPolicy = "Allow")),
      hourly((s) => (s.concurrencyPolicy = "Replace")),
      hourly(() => undefined),
    ]) {
      assert.deepEqual(validateCronJob(quiet).warnings, [], JSON.stringify(quiet.spec));
    }
  });

  it("a Forbid CronJob whose schedule does not parse is still told, without an interval", () => {
    const r = validateCronJob(withSpec((s) => ((s.concurrencyPolicy = "Forbid"), (s.schedule = "61 * * * *"))));
    assert.deepEqual(
      r.errors.map((e) => e.field),
      ["spec.schedule"],
    );
    assert.deepEqual(r.warnings, [FORBID_HOURLY.replace(" (1h, 3600 s)", "")]);
  });

  it("the worst case of backoffLimit retries: 10 s doubling, at most 6 minutes each, without the Pods' run time", () => {
    for (const [limit, seconds] of [
      [0, 0],
      [1, 10],
      [2, 30],
      [5, 310],
      [6, 630],
      [7, 990],
      [15, 3870],
    ] as const) {
      let sum = 0;
      for (let i = 1; i <= limit; i++) sum += Math.min(10 * 2 ** (i - 1), 360);
      assert.equal(sum, seconds, `the sum for ${limit}`);
      assert.equal(worstCaseRetrySeconds(limit), seconds, String(limit));
    }
    // The largest value the API server takes, at once.
    assert.equal(worstCaseRetrySeconds(2 ** 31 - 1), 630 + (2 ** 31 - 1 - 6) * 360);
    assert.equal(worstCaseRetrySeconds(6, "Never"), 630);
  });

  it("with restartPolicy OnFailure, the kubelet's container restarts: 10 s doubling, at most 5 minutes each", () => {
    for (const limit of [0, 1, 2, 5, 6, 7, 15, 100]) {
      let sum = 0;
      for (let i = 1; i <= limit; i++) sum += Math.min(10 * 2 ** (i - 1), 300);
      assert.equal(worstCaseRetrySeconds(limit, "OnFailure"), sum, String(limit));
    }
    assert.equal(worstCaseRetrySeconds(6, "OnFailure"), 610);
    assert.equal(worstCaseRetrySeconds(2 ** 31 - 1, "OnFailure"), 310 + (2 ** 31 - 1 - 5) * 300);
  });

  it("warns of a backoffLimit whose retries outlast the interval, just over it and not just under", () => {
    // */5 (300 s): 4 retries wait 150 s, 5 wait 310 s.
    const limit = (n: number, mutate: (s: Record<string, any>) => void = () => undefined) =>
      validateCronJob(
        withSpec((s) => {
          job(s).backoffLimit = n;
          job(s).template.spec.restartPolicy = "Never";
          mutate(s);
        }),
      ).warnings;
    assert.deepEqual(limit(4), []);
    assert.deepEqual(limit(5), [
      "spec.jobTemplate.spec.backoffLimit: 5 retries of a failing Pod take at least 5m10s (310 s: the Job controller waits 10 s before the first retry, doubling up to 6m, and the Pods' own run time comes on top), longer than the schedule's shortest interval between runs (5m, 300 s): a failing run retries past the next scheduled time, and with concurrencyPolicy \"Allow\" the next runs start beside it and pile up; set spec.jobTemplate.spec.activeDeadlineSeconds to at most 300 or a smaller backoffLimit",
    ]);
    // Hourly (3600 s): 14 retries wait 3510 s, 15 wait 3870 s.
    const hourlyLimit = (n: number, restartPolicy = "Never") =>
      validateCronJob(
        hourly((s) => {
          job(s).backoffLimit = n;
          job(s).template.spec.restartPolicy = restartPolicy;
        }),
      ).warnings;
    assert.deepEqual(hourlyLimit(14), []);
    assert.equal(hourlyLimit(15).length, 1);
    assert.match(
      hourlyLimit(15)[0]!,
      /^spec\.jobTemplate\.spec\.backoffLimit: 15 retries of a failing Pod take at least 1h4m30s \(3870 s: /,
    );
    assert.match(hourlyLimit(15)[0]!, /\(1h, 3600 s\)/);
    // OnFailure: the kubelet restarts the container, capped at 5 minutes: 15 restarts wait 3310 s, 16 wait 3610 s.
    assert.deepEqual(hourlyLimit(15, "OnFailure"), []);
    assert.deepEqual(hourlyLimit(16, "OnFailure"), [
      "spec.jobTemplate.spec.backoffLimit: 16 retries of a failing Pod take at least 1h10s (3610 s: with restartPolicy OnFailure the kubelet restarts the container in its Pod, waiting 10 s before the first restart, doubling up to 5m, and the Pods' own run time comes on top), longer than the schedule's shortest interval between runs (1h, 3600 s): a failing run retries past the next scheduled time, and with concurrencyPolicy \"Allow\" the next runs start beside it and pile up; set spec.jobTemplate.spec.activeDeadlineSeconds to at most 3600 or a smaller backoffLimit",
    ]);
    // activeDeadlineSeconds at most the interval ends the retries in time; one second more does not.
    assert.deepEqual(
      limit(5, (s) => (job(s).activeDeadlineSeconds = 300)),
      [],
    );
    assert.deepEqual(
      limit(5, (s) => (job(s).activeDeadlineSeconds = 60)),
      [],
    );
    assert.equal(limit(5, (s) => (job(s).activeDeadlineSeconds = 301)).length, 1);
    // The API server's default (6, when unset) and 0 are not warned of.
    assert.deepEqual(validateCronJob(withSpec((s) => (s.schedule = "* * * * *"))).warnings, []);
    assert.deepEqual(
      limit(0, (s) => (s.schedule = "* * * * *")),
      [],
    );
  });

  it("says what the concurrency policy does with the runs the retries overlap", () => {
    const with_ = (policy: string) =>
      validateCronJob(
        withSpec((s) => {
          s.concurrencyPolicy = policy;
          job(s).backoffLimit = 5;
          job(s).activeDeadlineSeconds = 301;
        }),
      ).warnings;
    assert.match(
      with_("Forbid").join("\n"),
      /with concurrencyPolicy "Forbid" the next runs are held back until it ends;/,
    );
    assert.match(with_("Replace").join("\n"), /with concurrencyPolicy "Replace" the next run kills it;/);
    assert.match(
      with_("Allow").join("\n"),
      /with concurrencyPolicy "Allow" the next runs start beside it and pile up;/,
    );
    // Forbid without a deadline: both warnings, the hang first.
    const both = validateCronJob(
      hourly((s) => ((s.concurrencyPolicy = "Forbid"), (job(s).backoffLimit = 16))),
    ).warnings;
    assert.equal(both.length, 2);
    assert.equal(both[0], FORBID_HOURLY);
    assert.match(both[1]!, /^spec\.jobTemplate\.spec\.backoffLimit: 16 /);
  });

  it("measures the interval from the creation time, else the admission time: the same object, the same warning", () => {
    // A daily 09:00 in Berlin has 23h between its runs around the day the clocks go forward.
    const daily = (created?: string) =>
      variant(minimalCronJob("cj"), (o) => {
        o.spec.schedule = "0 9 * * *";
        o.spec.timeZone = "Europe/Berlin";
        o.spec.concurrencyPolicy = "Forbid";
        if (created) o.metadata.creationTimestamp = created;
      });
    const now = new Date("2026-06-01T00:00:00Z");
    assert.match(validateCronJob(daily("2026-03-20T00:00:00Z"), { now }).warnings[0]!, /\(23h, 82800 s\)$/);
    assert.match(validateCronJob(daily("2026-04-10T00:00:00Z"), { now }).warnings[0]!, /\(1d, 86400 s\)$/);
    assert.match(validateCronJob(daily(), { now: new Date("2026-03-20T00:00:00Z") }).warnings[0]!, /\(23h, 82800 s\)$/);
  });
});

describe("backfill requests at admission", () => {
  const now = new Date("2026-11-23T12:00:00Z");
  const withBackfill = (value: string, schedule = "0 * * * *") =>
    variant(minimalCronJob("a"), (o) => {
      o.metadata.annotations = { [BACKFILL_ANNOTATION]: value };
      o.spec.schedule = schedule;
    });
  const req = (from: string, to: string, extra: object = {}) => JSON.stringify({ id: "b1", from, to, ...extra });
  const field = `metadata.annotations[${BACKFILL_ANNOTATION}]`;

  it("admits a range of past slots", () => {
    assert.deepEqual(
      validateCronJob(withBackfill(req("2026-11-20T00:00:00Z", "2026-11-21T00:00:00Z")), { now }).errors,
      [],
    );
  });

  it("refuses a malformed request, a reversed or future range, and more than 1000 slots", () => {
    const cases: Array<[string, RegExp]> = [
      ["tomorrow", /must be JSON/],
      [req("yesterday", "2026-11-21T00:00:00Z"), /from must be an RFC 3339 time/],
      [req("2026-11-21T00:00:00Z", "2026-11-20T00:00:00Z"), /is after to/],
      [req("2026-11-20T00:00:00Z", "2026-11-24T00:00:00Z"), /is in the future/],
      [
        req("2026-11-20T00:00:00Z", "2026-11-21T00:00:00Z", { parallelism: 0 }),
        /parallelism must be an integer from 1 to 100/,
      ],
      [req("2026-09-01T00:00:00Z", "2026-11-21T00:00:00Z"), /holds more than 1000 slots of the schedule; at most 1000/],
    ];
    for (const [value, message] of cases) {
      const { errors } = validateCronJob(withBackfill(value), { now });
      assert.equal(errors.length, 1, value);
      assert.equal(errors[0]!.field, field);
      assert.match(fieldErrorString(errors[0]!), message);
    }
  });

  it("the admission handler passes the stored request: an update that keeps it is not refused for it", async () => {
    // A past range (the handler checks against the real time).
    const value = req("2025-11-20T00:00:00Z", "2025-11-21T00:00:00Z");
    const everyMinute = withBackfill(value, "* * * * *");
    const stored = withBackfill(value);
    assert.equal((await call(validateCronJobRequest, request("UPDATE", everyMinute, stored))).allowed, true);
    assert.equal((await call(validateCronJobRequest, request("CREATE", everyMinute))).allowed, false);
  });

  it("quotes at most 64 characters of a value in its message (the annotation may hold 256 KiB)", () => {
    const { errors } = validateCronJob(withBackfill(req("x".repeat(100_000), "2026-11-21T00:00:00Z")), { now });
    assert.equal(errors.length, 1);
    assert.ok(errors[0]!.detail!.length < 300, errors[0]!.detail);
    assert.match(errors[0]!.detail!, /more characters/);
  });

  it("does not check an unchanged request again (its range may hold more slots after a schedule change)", () => {
    const value = req("2026-11-20T00:00:00Z", "2026-11-21T00:00:00Z");
    const o = withBackfill(value, "* * * * *");
    assert.equal(validateCronJob(o, { now }).errors.length, 1);
    assert.deepEqual(validateCronJob(o, { now, oldAnnotations: { [BACKFILL_ANNOTATION]: value } }).errors, []);
  });
});

// Version skew: the CRD's Job template is a recent Kubernetes', the cluster may be older. What such a cluster
// does with a field it lacks: 1.25+ with fieldValidation=Strict answers 400 "strict decoding error"; any
// version without it stores the Job without the field (with a 299 warning from 1.25 on).
describe("Job template dry-run: fields the cluster's Job API does not have", () => {
  const STOP_SIGNAL = "spec.jobTemplate.spec.template.spec.containers[0].lifecycle.stopSignal";
  const withStopSignal = () =>
    variant(
      minimalCronJob("cj"),
      (o) => (o.spec.jobTemplate.spec.template.spec.containers[0].lifecycle = { stopSignal: "SIGUSR1" }),
    );

  /** A client answering like a kube-apiserver: a body (or an error) and 299 warnings. */
  function server(answer: (body: any) => unknown, warnings: string[] = []): DryRunClient {
    return {
      request: (<T>(_m: string, _p: string, o: Record<string, any> = {}): Promise<T> => {
        for (const w of warnings) o.onWarning?.(w);
        const a = answer(o.body);
        return a instanceof Error ? Promise.reject(a) : Promise.resolve(a as T);
      }) as DryRunClient["request"],
    };
  }
  /** What an older server stores: the Job without the containers' lifecycle fields it does not know. */
  const dropsStopSignal = (body: any) => {
    const stored = structuredClone(body);
    for (const c of stored.spec.template.spec.containers) if (c.lifecycle) c.lifecycle = {};
    return stored;
  };

  it("refuses a field a server without strict validation drops (compares the Job it would store)", async () => {
    const outcome = await dryRunJobTemplate(server(dropsStopSignal), withStopSignal() as JobSource, "default");
    assert.deepEqual(outcome, {
      kind: "invalid",
      errors: [{ field: STOP_SIGNAL, type: "FieldValueForbidden", detail: UNKNOWN_JOB_FIELD }],
    });
  });

  it("refuses the fields a strict decoding error names (1.25+)", async () => {
    const strict = APIError.fromResponse(400, {
      kind: "Status",
      code: 400,
      reason: "BadRequest",
      message:
        'Job in version "v1" cannot be handled as a Job: strict decoding error: unknown field "spec.template.spec.containers[0].lifecycle.stopSignal", unknown field "spec.managedByX"',
    });
    const outcome = await dryRunJobTemplate(
      server(() => strict),
      withStopSignal() as JobSource,
      "default",
    );
    assert.deepEqual(outcome, {
      kind: "invalid",
      errors: [
        { field: STOP_SIGNAL, type: "FieldValueForbidden", detail: UNKNOWN_JOB_FIELD },
        { field: "spec.jobTemplate.spec.managedByX", type: "FieldValueForbidden", detail: UNKNOWN_JOB_FIELD },
      ],
    });
    assert.deepEqual(strictDecodingFields("some other bad request"), []);
  });

  it("does not take normalised values, defaults or empty values for dropped fields", async () => {
    const cj = variant(minimalCronJob("cj"), (o) => {
      const c = o.spec.jobTemplate.spec.template.spec.containers[0];
      c.resources = { limits: { cpu: "1000m" } };
      c.args = [];
      c.stdin = false;
      o.spec.jobTemplate.spec.template.spec.nodeSelector = { "kubernetes.io/os": "linux" };
    });
    const normalises = (body: any) => {
      const stored = structuredClone(body);
      const c = stored.spec.template.spec.containers[0];
      c.resources.limits.cpu = "1"; // a quantity in its canonical form
      delete c.args; // omitempty
      delete c.stdin;
      c.terminationMessagePath = "/dev/termination-log"; // a default
      return stored;
    };
    assert.deepEqual(await dryRunJobTemplate(server(normalises), cj as JobSource, "default"), { kind: "valid" });
  });

  it("passes the API server's warnings on to the admission response, and refuses with them too", async () => {
    const warning = 'spec.template.spec.containers[0].ports[0]: duplicate port definition with ID "80/TCP"';
    const ok = cronJobWebhookHandlers({ client: server((b) => b, [warning]) }).get(VALIDATE_PATH)!;
    const r = await call(ok, request("CREATE", minimalCronJob("cj")));
    assert.equal(r.allowed, true);
    assert.deepEqual(r.warnings, [`spec.jobTemplate: the API server warns about the Job: ${warning}`]);

    const dropped = 'unknown field "spec.template.spec.containers[0].lifecycle.stopSignal"';
    const old = cronJobWebhookHandlers({ client: server(dropsStopSignal, [dropped]) }).get(VALIDATE_PATH)!;
    const denied = await call(old, request("CREATE", withStopSignal()));
    assert.equal(denied.allowed, false);
    assert.equal(denied.status?.code, 422);
    assert.deepEqual(
      denied.status?.details?.causes?.map((c) => c.field),
      [STOP_SIGNAL],
    );
    assert.match(
      denied.status?.message ?? "",
      /lifecycle\.stopSignal: Forbidden: this cluster's Job API has no such field/,
    );
    assert.deepEqual(denied.warnings, [`spec.jobTemplate: the API server warns about the Job: ${dropped}`]);
  });
});

describe("limits at admission: maxRuns, startTime, endTime", () => {
  it("refuses a bad time, an end not after the start and maxRuns below 1, naming the field and the value", () => {
    const cases: Array<[(s: Record<string, unknown>) => void, string, RegExp]> = [
      [(s) => (s.startTime = "tomorrow"), "spec.startTime", /tomorrow/],
      [(s) => (s.endTime = "2026-13-01T00:00:00Z"), "spec.endTime", /2026-13-01/],
      [
        (s) => ((s.startTime = "2026-12-01T00:00:00Z"), (s.endTime = "2026-12-01T00:00:00Z")),
        "spec.endTime",
        /must be after spec.startTime \(2026-12-01T00:00:00Z\)/,
      ],
      [(s) => (s.maxRuns = 0), "spec.maxRuns", /0/],
      [(s) => (s.maxRuns = 1.5), "spec.maxRuns", /1\.5/],
    ];
    for (const [change, field, value] of cases) {
      const { errors } = validateCronJob(withSpec(change));
      assert.ok(errors.length >= 1, `${field}: no error`);
      assert.ok(
        errors.every((e) => e.field === field),
        `${field}: ${JSON.stringify(errors)}`,
      );
      assert.match(fieldErrorString(errors[0]!), value);
    }
  });

  it("admits a window and maxRuns", () => {
    const limits = (s: Record<string, unknown>) => {
      s.startTime = "2026-12-01T00:00:00Z";
      s.endTime = "2026-12-02T00:00:00+01:00";
      s.maxRuns = 5;
    };
    assert.deepEqual(validateCronJob(withSpec(limits)).errors, []);
  });
});

describe("jitter at admission", () => {
  it("refuses a jitter that is no duration, not whole seconds, below 1s, or not shorter than the schedule's closest slots", () => {
    const cases: Array<[(s: Record<string, unknown>) => void, RegExp]> = [
      [(s) => (s.jitter = "soon"), /"soon".*Go duration/],
      [(s) => (s.jitter = "500ms"), /whole seconds/],
      [(s) => (s.jitter = "1.5s"), /"1\.5s".*whole seconds/],
      [(s) => (s.jitter = "1m0.25s"), /"1m0\.25s".*whole seconds/],
      [
        (s) => ((s.schedule = "*/5 * * * *"), (s.jitter = "5m")),
        /shorter than the 5m0s between the schedule's closest slots/,
      ],
      [(s) => ((s.schedule = "@every 90s"), (s.jitter = "2m")), /shorter than the 1m30s/],
    ];
    for (const [change, message] of cases) {
      const { errors } = validateCronJob(withSpec(change));
      assert.equal(errors.length, 1, JSON.stringify(errors));
      assert.equal(errors[0]!.field, "spec.jitter");
      assert.match(fieldErrorString(errors[0]!), message);
    }
  });

  it("a jitter stored before fractions were refused keeps its whole seconds", () => {
    assert.equal(jitterSecondsOf({ jitter: "1.5s" }), 1);
    assert.equal(jitterSecondsOf({ jitter: "2m30.9s" }), 150);
  });

  it("admits a jitter shorter than the gap, and warns of an end time already past", () => {
    assert.deepEqual(validateCronJob(withSpec((s) => ((s.schedule = "*/5 * * * *"), (s.jitter = "4m59s")))).errors, []);
    const past = validateCronJob(withSpec((s) => (s.endTime = "2020-01-01T00:00:00Z")));
    assert.deepEqual(past.errors, []);
    assert.match(past.warnings.join("\n"), /spec.endTime: 2020-01-01T00:00:00Z has passed/);
  });
});

describe("spec.after at admission", () => {
  const after = (...names: string[]) => names.map((cronJob) => ({ cronJob }));
  it("refuses another namespace, itself, a name twice, more than 5, naming the field and the value", () => {
    const cases: Array<[(s: Record<string, unknown>) => void, string, RegExp]> = [
      [(s) => (s.after = after("other/extract")), "spec.after[0].cronJob", /other\/extract.*this namespace/],
      [(s) => (s.after = after("cj")), "spec.after[0].cronJob", /cannot run after itself/],
      [(s) => (s.after = after("x", "x")), "spec.after[1].cronJob", /named twice/],
      [(s) => (s.after = after("p", "q", "r", "s", "t", "u")), "spec.after", /5/],
      [(s) => (s.after = [{ cronJob: "x", when: "Sometimes" }]), "spec.after[0].when", /Sometimes/],
    ];
    for (const [change, field, value] of cases) {
      const { errors } = validateCronJob(withSpec(change));
      assert.ok(errors.length >= 1, `${field}: no error`);
      assert.equal(errors[0]!.field, field, JSON.stringify(errors));
      assert.match(fieldErrorString(errors[0]!), value);
    }
  });

  it("needs a schedule unless spec.after names upstreams; admits one without", () => {
    const none = validateCronJob(withSpec((s) => delete s.schedule));
    assert.ok(
      none.errors.some((e) => e.field === "spec.schedule"),
      JSON.stringify(none.errors),
    );
    const afterOnly = validateCronJob(withSpec((s) => ((s.after = after("extract")), delete s.schedule)));
    assert.deepEqual(afterOnly.errors, []);
  });

  it("refuses a cycle through the cluster's CronJobs, naming the path", () => {
    const cluster: Record<string, string[]> = { extract: ["load"], load: ["cj"] };
    const { errors } = validateCronJob(
      withSpec((s) => (s.after = after("extract"))),
      { upstreams: (_ns, name) => cluster[name] },
    );
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.field, "spec.after");
    assert.match(fieldErrorString(errors[0]!), /makes a cycle: cj runs after extract runs after load runs after cj/);
    const chain = validateCronJob(
      withSpec((s) => (s.after = after("extract"))),
      {
        upstreams: (_ns, name) => ({ extract: ["load"] })[name],
      },
    );
    assert.deepEqual(chain.errors, [], "a chain without a cycle is fine");
  });
});
