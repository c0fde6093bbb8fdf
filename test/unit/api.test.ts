import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  CronJobSchema,
  formatFieldErrors,
  MAX_CRONJOB_NAME_LENGTH,
  MAX_SCHEDULE_LENGTH,
  MAX_TIME_ZONE_LENGTH,
  parseCronJob,
  RestartPolicyValues,
  type CronJob,
} from "../../api/v1/index.ts";
import { validateCronJob } from "../../webhooks/cronjob_webhook.ts";
import { minimalCronJob, SCHEDULED_CONDITION, variant } from "../fixtures.ts";

describe("CronJob schema ↔ TypeScript types", () => {
  it("parses a minimal CronJob and applies the defaults", () => {
    const r = parseCronJob(minimalCronJob("a"));
    assert.ok(r.ok, JSON.stringify(r));
    const cj: CronJob = r.value;
    assert.equal(cj.spec.concurrencyPolicy, "Allow");
    assert.equal(cj.spec.successfulJobsHistoryLimit, 3);
    assert.equal(cj.spec.failedJobsHistoryLimit, 1);
    assert.equal(cj.spec.suspend, undefined);
    assert.equal(cj.spec.jobTemplate.spec?.template.spec?.containers[0]?.image, "busybox:1.36");
  });

  it("keeps explicit zero history limits and false suspend", () => {
    const r = parseCronJob(
      variant(minimalCronJob("a"), (o) => {
        o.spec.successfulJobsHistoryLimit = 0;
        o.spec.failedJobsHistoryLimit = 0;
        o.spec.suspend = false;
        o.spec.concurrencyPolicy = "Forbid";
      }),
    );
    assert.ok(r.ok);
    assert.equal(r.value.spec.successfulJobsHistoryLimit, 0);
    assert.equal(r.value.spec.failedJobsHistoryLimit, 0);
    assert.equal(r.value.spec.suspend, false);
    assert.equal(r.value.spec.concurrencyPolicy, "Forbid");
  });

  it("keeps unknown jobTemplate fields (the template is the full upstream JobTemplateSpec)", () => {
    const r = parseCronJob(
      variant(minimalCronJob("a"), (o) => {
        o.spec.jobTemplate.spec.backoffLimit = 2;
        o.spec.jobTemplate.spec.template.spec.nodeSelector = { disk: "ssd" };
      }),
    );
    assert.ok(r.ok);
    assert.equal(r.value.spec.jobTemplate.spec?.backoffLimit, 2);
    assert.deepEqual(r.value.spec.jobTemplate.spec?.template.spec?.nodeSelector, { disk: "ssd" });
  });

  it("parses a status with conditions and many active references", () => {
    const status = {
      active: Array.from({ length: 12 }, (_, i) => ({ kind: "Job", name: `j-${i}`, namespace: "default" })),
      lastScheduleTime: "2026-01-01T00:00:00Z",
      conditions: [SCHEDULED_CONDITION],
      observedGeneration: 3,
    };
    const r = CronJobSchema.safeParse({ ...minimalCronJob("a"), status });
    assert.ok(r.success, r.error?.message);
    assert.equal(r.data.status?.active?.length, 12);
  });

  const bad: Array<[string, (o: Record<string, any>) => void, string, RegExp]> = [
    ["unknown concurrencyPolicy", (o) => (o.spec.concurrencyPolicy = "Sometimes"), "spec.concurrencyPolicy", /Allow/],
    [
      "negative startingDeadlineSeconds",
      (o) => (o.spec.startingDeadlineSeconds = -1),
      "spec.startingDeadlineSeconds",
      />=\s*0/,
    ],
    [
      "negative successfulJobsHistoryLimit",
      (o) => (o.spec.successfulJobsHistoryLimit = -2),
      "spec.successfulJobsHistoryLimit",
      />=\s*0/,
    ],
    [
      "negative failedJobsHistoryLimit",
      (o) => (o.spec.failedJobsHistoryLimit = -1),
      "spec.failedJobsHistoryLimit",
      />=\s*0/,
    ],
    ["fractional history limit", (o) => (o.spec.failedJobsHistoryLimit = 1.5), "spec.failedJobsHistoryLimit", /int/],
    ["missing schedule", (o) => delete o.spec.schedule, "spec.schedule", /string.*spec\.after/],
    ["missing jobTemplate", (o) => delete o.spec.jobTemplate, "spec.jobTemplate", /object/],
    [
      "pod template without containers",
      (o) => (o.spec.jobTemplate.spec.template.spec.containers = []),
      "spec.jobTemplate.spec.template.spec.containers",
      /at least 1|>=1/,
    ],
    ["wrong apiVersion", (o) => (o.apiVersion = "batch/v1"), "apiVersion", /batch\.tutorial\.kubebuilder\.io\/v1/],
    ["a 53-character name", (o) => (o.metadata.name = "n".repeat(53)), "metadata.name", /<=\s*52/],
    [
      "restartPolicy Always",
      (o) => (o.spec.jobTemplate.spec.template.spec.restartPolicy = "Always"),
      "spec.jobTemplate.spec.template.spec.restartPolicy",
      /OnFailure.*Never/,
    ],
    [
      "a missing restartPolicy",
      (o) => delete o.spec.jobTemplate.spec.template.spec.restartPolicy,
      "spec.jobTemplate.spec.template.spec.restartPolicy",
      /OnFailure.*Never/,
    ],
    ["a 1025-character schedule", (o) => (o.spec.schedule = "*".repeat(1025)), "spec.schedule", /<=\s*1024/],
    ["a 256-character timeZone", (o) => (o.spec.timeZone = "Z".repeat(256)), "spec.timeZone", /<=\s*255/],
  ];
  for (const [what, mutate, field, message] of bad) {
    it(`rejects ${what} with an error naming ${field}`, () => {
      const r = parseCronJob(variant(minimalCronJob("a"), mutate));
      assert.equal(r.ok, false);
      if (r.ok) return;
      const e = r.errors.find((x) => x.field === field);
      assert.ok(e, `no error for ${field} in ${JSON.stringify(r.errors)}`);
      assert.match(e.detail ?? "", message);
      assert.ok(formatFieldErrors(r.errors).includes(`${field}: `));
    });
  }

  it("names the offending value in the formatted message", () => {
    const r = parseCronJob(variant(minimalCronJob("a"), (o) => (o.spec.concurrencyPolicy = "Sometimes")));
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.match(formatFieldErrors(r.errors), /^spec\.concurrencyPolicy: Invalid value: "Sometimes": /);
  });
});

// The CRD schema (generated from these zod schemas) and the validating webhook must refuse the same
// objects for the checks both make; otherwise a CronJob admitted with webhooks off could never be
// updated with them on, or the reverse.
describe("the schema's limits agree with the validating webhook", () => {
  const RP = "spec.jobTemplate.spec.template.spec.restartPolicy";
  const cases: Array<[string, (o: Record<string, any>) => void, string | undefined]> = [
    ["a 52-character name", (o) => (o.metadata.name = "n".repeat(MAX_CRONJOB_NAME_LENGTH)), undefined],
    ["a 53-character name", (o) => (o.metadata.name = "n".repeat(MAX_CRONJOB_NAME_LENGTH + 1)), "metadata.name"],
    ...RestartPolicyValues.map((rp): [string, (o: Record<string, any>) => void, undefined] => [
      `restartPolicy ${rp}`,
      (o) => (o.spec.jobTemplate.spec.template.spec.restartPolicy = rp),
      undefined,
    ]),
    ...["Always", "never", ""].map((rp): [string, (o: Record<string, any>) => void, string] => [
      `restartPolicy ${JSON.stringify(rp)}`,
      (o) => (o.spec.jobTemplate.spec.template.spec.restartPolicy = rp),
      RP,
    ]),
    ["no restartPolicy", (o) => delete o.spec.jobTemplate.spec.template.spec.restartPolicy, RP],
    // The longest schedule the schema allows still parses; one more character is refused by both.
    ["a schedule of the maximum length", (o) => (o.spec.schedule = `00 0 * * ${"1,".repeat(507)}1`), undefined],
    ["a schedule one character too long", (o) => (o.spec.schedule = `000 0 * * ${"1,".repeat(507)}1`), "spec.schedule"],
    ["a timeZone one character too long", (o) => (o.spec.timeZone = `Europe/${"B".repeat(249)}`), "spec.timeZone"],
  ];
  for (const [what, mutate, field] of cases) {
    it(`${field ? "both refuse" : "both accept"} ${what}`, () => {
      const obj = variant(minimalCronJob("a"), mutate);
      const schema = parseCronJob(obj);
      const webhook = validateCronJob(obj).errors;
      if (field === undefined) {
        assert.ok(schema.ok, schema.ok ? "" : formatFieldErrors(schema.errors));
        assert.deepEqual(webhook, []);
        return;
      }
      assert.equal(schema.ok, false, "the schema accepted it");
      if (!schema.ok)
        assert.ok(
          schema.errors.some((e) => e.field === field),
          JSON.stringify(schema.errors),
        );
      assert.ok(
        webhook.some((e) => e.field === field),
        `the webhook did not refuse ${field}: ${JSON.stringify(webhook)}`,
      );
    });
  }

  it("checks the lengths of the test values", () => {
    assert.equal(`00 0 * * ${"1,".repeat(507)}1`.length, MAX_SCHEDULE_LENGTH);
    assert.equal(`Europe/${"B".repeat(249)}`.length, MAX_TIME_ZONE_LENGTH + 1);
  });
});
