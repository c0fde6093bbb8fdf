// The CronJob validating webhook without a server: apimachinery-shaped denials naming the field and the value (the
// kubebuilder tutorial's cases and more: name, schedule, time zone, H, restartPolicy), its warnings, and an object
// being deleted.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CRONJOB_NAME_LABEL, GROUP, KIND, MAX_CRONJOB_NAME_LENGTH } from "../../api/v1/index.ts";
import { parseSchedule, resolveHashedSchedule } from "../../api/v1/schedule/index.ts";
import { type AdmissionResult, fieldErrorString } from "../../runtime/webhook/index.ts";
import {
  cronJobWebhookHandlers,
  MUTATE_PATH,
  mutateCronJob,
  VALIDATE_PATH,
  validateCronJob,
  validateCronJobRequest,
  webhookMarkers,
} from "../../webhooks/cronjob_webhook.ts";
import { minimalCronJob, variant } from "../fixtures.ts";
import { call, LONG_NAME, request, RP_FIELD, withSpec } from "../admission.ts";

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
    // 0 is the shortest deadline of all: the value the schema accepts that is most likely never met.
    for (const sds of [0, 9]) {
      const { errors, warnings } = validateCronJob(withSpec((s) => (s.startingDeadlineSeconds = sds)));
      assert.deepEqual(errors, []);
      assert.equal(warnings.length, 1, String(sds));
      assert.ok(warnings[0]!.startsWith(`spec.startingDeadlineSeconds: ${sds} is less than 10`), warnings[0]);
    }

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

  it("leaves metadata to the API server: a manifest's creationTimestamp: null is admitted", () => {
    // What `kubectl create --dry-run=client -o yaml` writes; the schema's metadata (a date-time) does not take it.
    const o = variant(minimalCronJob("cj"), (x) => ((x.metadata as Record<string, unknown>).creationTimestamp = null));
    assert.deepEqual(validateCronJob(o), { errors: [], warnings: [] });
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
