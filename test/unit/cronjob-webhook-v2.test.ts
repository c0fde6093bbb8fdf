// The admission webhooks for API v2 (spec.schedules) and for the schedules v1 keeps of a v2 object: one
// webhook of each kind serves both versions, every error at the field the request's own version has, with v1's
// messages; the conversion webhook on its path.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  API_VERSION as V1,
  BACKFILL_ANNOTATION,
  KIND,
  MORE_SCHEDULES_ANNOTATION,
  moreSchedulesValue,
} from "../../api/v1/index.ts";
import { API_VERSION as V2, convertCronJob } from "../../api/v2/index.ts";
import { fieldErrorString, type JSONPatchOperation } from "../../runtime/webhook/index.ts";
import {
  CONVERT_PATH,
  cronJobConversion,
  mutateCronJob,
  validateCronJob,
  validateCronJobRequest,
  webhookMarkers,
} from "../../webhooks/cronjob_webhook.ts";
import { webhookConfigurations } from "../../hack/crdgen/webhook.ts";
import { admissionRequest } from "../admission.ts";
import { minimalCronJob } from "../fixtures.ts";

type Obj = Record<string, any>;

/** minimalCronJob as v2: its schedule is the list's only entry. */
function v2CronJob(name: string, schedules: unknown, edit: (o: Obj) => void = () => undefined): Obj {
  const v1 = minimalCronJob(name) as Obj;
  const { schedule: _s, timeZone: _t, ...spec } = v1.spec;
  const out: Obj = { ...v1, apiVersion: V2, spec: { schedules, ...spec } };
  edit(out);
  return out;
}

const messages = (o: unknown) => validateCronJob(o, { namespace: "default" }).errors.map(fieldErrorString);

/** The request to create `object`, or to update `oldObject` to it, in the version it is written in. */
const request = (object: Obj, oldObject?: Obj) =>
  admissionRequest({
    resource: "cronjobs",
    kind: KIND,
    version: String(object.apiVersion).split("/")[1]!,
    operation: oldObject ? "UPDATE" : "CREATE",
    object,
    oldObject,
  });

describe("CronJob validating webhook, v2", () => {
  it("admits several schedules with time zones, and warns at each one's path", () => {
    const cj = v2CronJob("cj", [
      { schedule: "0 9 * * 1-5", timeZone: "Europe/Berlin" },
      { schedule: "H 12 * * 6", timeZone: "America/New_York" },
      { schedule: "@every 30s" },
    ]);
    const { errors, warnings } = validateCronJob(cj, { namespace: "default" });
    assert.deepEqual(errors, []);
    assert.equal(warnings.length, 2, warnings.join("\n"));
    assert.match(warnings[0]!, /^spec\.schedules\[1\]\.schedule: "H 12 \* \* 6" runs as "\d+ 12 \* \* 6"/);
    assert.match(warnings[1]!, /^spec\.schedules\[2\]\.schedule: "@every 30s" runs more often than once a minute/);
  });

  it("warns of Forbid without activeDeadlineSeconds and of a long backoffLimit as for v1, over the union's interval", () => {
    // 09:00 and 09:30: the union's shortest interval is 30m (1800 s), though each schedule alone is daily.
    const schedules = [{ schedule: "0 9 * * *" }, { schedule: "30 9 * * *" }];
    const forbid = v2CronJob("cj", schedules, (o) => (o.spec.concurrencyPolicy = "Forbid"));
    assert.deepEqual(validateCronJob(forbid, { namespace: "default" }).warnings, [
      'spec.concurrencyPolicy: "Forbid" without spec.jobTemplate.spec.activeDeadlineSeconds: a Job that hangs holds back every later run until someone deletes it; set activeDeadlineSeconds below the schedule\'s shortest interval between runs (30m, 1800 s)',
    ]);
    // restartPolicy Never: 10 retries wait 2070 s; 9 wait 1710 s.
    const retries = (n: number) =>
      validateCronJob(
        v2CronJob("cj", schedules, (o) => {
          o.spec.jobTemplate.spec.backoffLimit = n;
          o.spec.jobTemplate.spec.template.spec.restartPolicy = "Never";
        }),
        { namespace: "default" },
      ).warnings;
    assert.deepEqual(retries(9), []);
    assert.equal(retries(10).length, 1);
    assert.match(
      retries(10)[0]!,
      /^spec\.jobTemplate\.spec\.backoffLimit: 10 retries of a failing Pod take at least 34m30s \(2070 s: .*\(30m, 1800 s\)/,
    );
  });

  it("names each bad entry at spec.schedules[i] with v1's message for the same mistake", () => {
    const v1Messages = (schedule: unknown, timeZone?: unknown) =>
      messages({
        ...minimalCronJob("cj"),
        spec: { ...(minimalCronJob("cj") as Obj).spec, schedule, ...(timeZone !== undefined ? { timeZone } : {}) },
      });
    const got = messages(
      v2CronJob("cj", [
        { schedule: "0 9 * * *" },
        { schedule: "61 * * * *" },
        { schedule: "0 8 * * *", timeZone: "Mars/Olympus" },
        { timeZone: "UTC" },
      ]),
    );
    const [badMinute] = v1Messages("61 * * * *");
    const [badZone] = v1Messages("0 8 * * *", "Mars/Olympus");
    const [missing] = v1Messages(undefined);
    assert.deepEqual(got, [
      badMinute!.replace(/^spec\.schedule:/, "spec.schedules[1].schedule:"),
      badZone!.replace(/^spec\.timeZone:/, "spec.schedules[2].timeZone:"),
      missing!.replace(/^spec\.schedule:/, "spec.schedules[3].schedule:"),
    ]);
  });

  it("refuses an empty list, more than 16 entries and a repeated schedule", () => {
    assert.deepEqual(messages(v2CronJob("cj", [])), [
      'spec.schedules: Required value: at least one schedule, each {schedule: "<cron>", timeZone: "<IANA zone>"} (timeZone optional, UTC when unset)',
    ]);
    const many = Array.from({ length: 17 }, (_, i) => ({ schedule: `${i} * * * *` }));
    assert.deepEqual(messages(v2CronJob("cj", many)), ["spec.schedules: Too many: 17: must have at most 16 items"]);
    const dup = messages(v2CronJob("cj", [{ schedule: "@hourly" }, { schedule: "0 * * * *", timeZone: "UTC" }]));
    assert.equal(dup.length, 1);
    assert.match(dup[0]!, /^spec\.schedules\[1\]: Duplicate value: .*the same schedule as spec\.schedules\[0\]/);
  });

  it("refuses the annotation v1 keeps the other schedules in, on a v2 object", () => {
    const cj = v2CronJob("cj", [{ schedule: "@daily" }], (o) => {
      o.metadata.annotations = { [MORE_SCHEDULES_ANNOTATION]: moreSchedulesValue([{ schedule: "@hourly" }]) };
    });
    const got = messages(cj);
    assert.equal(got.length, 1);
    assert.ok(got[0]!.startsWith(`metadata.annotations[${MORE_SCHEDULES_ANNOTATION}]: Invalid value: `), got[0]);
  });

  it("checks the rest of the spec with v2's schema, at the same paths as v1", () => {
    const cj = v2CronJob("cj", [{ schedule: "@daily" }], (o) => (o.spec.concurrencyPolicy = "Sometimes"));
    const v1 = convertCronJob(cj, V1);
    assert.deepEqual(messages(cj), messages(v1));
    assert.match(messages(cj).join("\n"), /^spec\.concurrencyPolicy: /m);
  });

  it("counts a backfill range over the union of the schedules", () => {
    const now = new Date("2026-11-25T12:00:00Z");
    const backfill = (from: string, to: string) => JSON.stringify({ id: "b1", from, to, parallelism: 1 });
    const cj = (from: string, to: string) =>
      v2CronJob("cj", [{ schedule: "*/2 * * * *" }, { schedule: "1-59/2 * * * *" }], (o) => {
        o.metadata.creationTimestamp = "2026-11-01T00:00:00Z";
        o.metadata.annotations = { [BACKFILL_ANNOTATION]: backfill(from, to) };
      });
    // 16 hours hold 960 slots of the union (every minute), 17 hours 1,020: over the 1,000 allowed. Each
    // schedule alone would hold half.
    const ok = validateCronJob(cj("2026-11-24T00:00:00Z", "2026-11-24T15:59:59Z"), { namespace: "default", now });
    assert.deepEqual(ok.errors, []);
    const over = validateCronJob(cj("2026-11-24T00:00:00Z", "2026-11-24T16:59:59Z"), { namespace: "default", now });
    assert.equal(over.errors.length, 1);
    assert.match(fieldErrorString(over.errors[0]!), /the range holds more than 1000 slots of the schedule/);
  });
});

describe("CronJob validating webhook, the schedules a v1 object keeps for v2", () => {
  const withMore = (more: string | unknown[]) => {
    const cj = minimalCronJob("cj") as Obj;
    cj.metadata.annotations = {
      [MORE_SCHEDULES_ANNOTATION]: typeof more === "string" ? more : moreSchedulesValue(more),
    };
    return cj;
  };
  const field = `metadata.annotations[${MORE_SCHEDULES_ANNOTATION}]`;

  it("admits what the conversion writes, and names a bad schedule in it by its place", () => {
    assert.deepEqual(messages(withMore([{ schedule: "0 12 * * 6", timeZone: "Asia/Tokyo" }])), []);
    const got = messages(withMore([{ schedule: "@daily" }, { schedule: "0 25 * * *" }]));
    assert.equal(got.length, 1);
    assert.ok(got[0]!.startsWith(`${field}[1].schedule: Invalid value: "0 25 * * *": `), got[0]);
  });

  it("refuses an annotation the conversion could not have written, naming it and its value", () => {
    for (const text of ["not json", "[]", '[{"timeZone":"UTC"}]', '[{"timeZone":"UTC","schedule":"@daily"}]']) {
      const got = messages(withMore(text));
      assert.equal(got.length, 1, text);
      assert.ok(got[0]!.startsWith(`${field}: Invalid value: ${JSON.stringify(text)}: `), got[0]);
    }
  });

  it("a v1 object with spec.schedule unchanged keeps v1's messages", () => {
    const cj = minimalCronJob("cj") as Obj;
    cj.spec.schedule = "every day";
    const got = messages(cj);
    assert.equal(got.length, 1);
    assert.ok(got[0]!.startsWith('spec.schedule: Invalid value: "every day": '), got[0]);
  });
});

describe("CronJob webhooks: one configuration for both versions, and the conversion", () => {
  it("lists v1 and v2 in every CronJob rule, so neither version's request is converted before it is checked", () => {
    assert.deepEqual(webhookMarkers.versions, ["v1", "v2"]);
    const cronJobs = webhookConfigurations().flatMap((cfg) =>
      (cfg.webhooks as Obj[]).filter((w) => w.rules[0].resources.includes("cronjobs")),
    );
    assert.equal(cronJobs.length, 2);
    for (const w of cronJobs) assert.deepEqual(w.rules[0].apiVersions, ["v1", "v2"]);
  });

  it("defaults a v2 object as a v1 object (the defaulted fields are the same in both)", async () => {
    const cj = v2CronJob("cj", [{ schedule: "@daily" }, { schedule: "@hourly", timeZone: "UTC" }]);
    const r = await mutateCronJob(request(cj));
    const ops = JSON.parse(Buffer.from(r.patch ?? "", "base64").toString("utf8")) as JSONPatchOperation[];
    assert.deepEqual(
      ops.map((o) => o.path),
      ["/spec/concurrencyPolicy", "/spec/suspend", "/spec/successfulJobsHistoryLimit", "/spec/failedJobsHistoryLimit"],
    );
  });

  it("denies a v2 request at v2's paths through the admission handler", async () => {
    const r = await validateCronJobRequest(request(v2CronJob("cj", [{ schedule: "@daily" }, { schedule: "x" }])));
    assert.equal(r.allowed, false);
    assert.match(r.status?.message ?? "", /spec\.schedules\[1\]\.schedule: Invalid value: "x"/);
  });

  it("converts on /convert: v2 with three schedules to v1 and back, unchanged", async () => {
    assert.equal(CONVERT_PATH, "/convert");
    const cj = v2CronJob("cj", [
      { schedule: "0 9 * * 1-5", timeZone: "Europe/Berlin" },
      { schedule: "0 12 * * 6" },
      { schedule: "30 18 * * *", timeZone: "Asia/Tokyo" },
    ]);
    cj.metadata.uid = "u1";
    const down = await cronJobConversion.review({ uid: "r1", desiredAPIVersion: V1, objects: [cj as never] });
    assert.equal(down.result.status, "Success", down.result.message);
    const v1 = down.convertedObjects[0] as Obj;
    assert.deepEqual([v1.apiVersion, v1.spec.schedule, v1.spec.timeZone], [V1, "0 9 * * 1-5", "Europe/Berlin"]);
    assert.equal(
      v1.metadata.annotations[MORE_SCHEDULES_ANNOTATION],
      '[{"schedule":"0 12 * * 6"},{"schedule":"30 18 * * *","timeZone":"Asia/Tokyo"}]',
    );
    const up = await cronJobConversion.review({ uid: "r2", desiredAPIVersion: V2, objects: [v1 as never] });
    assert.equal(up.result.status, "Success", up.result.message);
    assert.deepEqual(up.convertedObjects[0], cj);
  });
});
