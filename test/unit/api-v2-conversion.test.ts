// API v2 (api/v2): its schema is v1's with a list of schedules, and v1 ↔ v2 conversion is lossless both ways
// (property-tested on random objects of both versions), never fails on a stored object, and leaves anything it
// cannot interpret as it is.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { API_VERSION as V1, CronJobSchema, CronJobSpecSchema } from "../../api/v1/index.ts";
import { MAX_SCHEDULES } from "../../api/v1/schedule/index.ts";
import { MORE_SCHEDULES_ANNOTATION } from "../../api/v1/index.ts";
import { API_VERSION as V2, convertCronJob, CronJobV2Schema } from "../../api/v2/index.ts";
import { minimalCronJob } from "../fixtures.ts";

const RUNS = Number(process.env.PROPERTY_RUNS ?? 300);

const schedule = fc.constantFrom("*/5 * * * *", "0 9 * * 1-5", "@daily", "@every 1h30m", "H H * * *", "0 12 * * 6");
const zone = fc.option(fc.constantFrom("Europe/Berlin", "America/New_York", "UTC", "Asia/Kolkata"), {
  nil: undefined,
});
const entry = fc.record({ schedule, timeZone: zone }, { requiredKeys: ["schedule"] });
const annotations = fc.option(fc.dictionary(fc.constantFrom("a", "team", "example.com/x"), fc.string()), {
  nil: undefined,
});
const labels = fc.option(fc.dictionary(fc.constantFrom("app", "tier"), fc.string({ maxLength: 5 })), {
  nil: undefined,
});
const common = fc.record(
  {
    startingDeadlineSeconds: fc.nat(),
    concurrencyPolicy: fc.constantFrom("Allow", "Forbid", "Replace"),
    suspend: fc.boolean(),
    missedRunPolicy: fc.constantFrom("RunLatest", "Skip", "RunAll"),
    successfulJobsHistoryLimit: fc.nat(10),
    failedJobsHistoryLimit: fc.nat(10),
    concurrencyGroup: fc.constantFrom("backups", "db-1.eu"),
    startTimeoutSeconds: fc.integer({ min: 1, max: 3600 }),
  },
  { requiredKeys: [] },
);
const status = fc.option(
  fc.record(
    { lastScheduleTime: fc.constant("2026-11-25T01:00:00Z"), activeCount: fc.nat(3), resolvedSchedule: schedule },
    { requiredKeys: [] },
  ),
  { nil: undefined },
);
// As the API server stores metadata: an empty annotations or labels map is left out (omitempty).
const metadata = fc.record({ annotations, labels }).map(({ annotations, labels }) => ({
  name: "cj",
  namespace: "default",
  uid: "u-1",
  resourceVersion: "7",
  ...(annotations && Object.keys(annotations).length > 0 ? { annotations } : {}),
  ...(labels && Object.keys(labels).length > 0 ? { labels } : {}),
}));
const jobTemplate = minimalCronJob("cj").spec.jobTemplate;

const withoutUndefined = <T>(o: T): T => JSON.parse(JSON.stringify(o)) as T;

/** A v2 object as the API server stores one (no annotation of the conversion's own). */
const v2Object = fc
  .record({ metadata, schedules: fc.array(entry, { minLength: 1, maxLength: MAX_SCHEDULES }), common, status })
  .map(({ metadata, schedules, common, status }) =>
    withoutUndefined({
      apiVersion: V2,
      kind: "CronJob",
      metadata,
      spec: { schedules, ...common, jobTemplate },
      ...(status ? { status } : {}),
    }),
  );

/** A v1 object, with or without the annotation: well-formed (as the conversion writes it) or anything else. */
const v1Object = fc
  .record({
    metadata,
    first: entry,
    more: fc.oneof(
      fc.constant(undefined),
      fc.array(entry, { minLength: 1, maxLength: 4 }).map((m) => JSON.stringify(m.map(withoutUndefined))),
      fc.constantFrom(
        "not json",
        "[]",
        '{"schedule":"@daily"}',
        '[{"timeZone":"UTC"}]',
        '[{"timeZone":"UTC","schedule":"@daily"}]',
      ),
    ),
    common,
    status,
  })
  .map(({ metadata, first, more, common, status }) =>
    withoutUndefined({
      apiVersion: V1,
      kind: "CronJob",
      metadata:
        more === undefined
          ? metadata
          : { ...metadata, annotations: { ...(metadata.annotations ?? {}), [MORE_SCHEDULES_ANNOTATION]: more } },
      spec: { ...first, ...common, jobTemplate },
      ...(status ? { status } : {}),
    }),
  );

describe("API v2: the schema", () => {
  it("is v1's but for spec.schedules (every other field is v1's own schema object)", () => {
    const v1Fields = Object.keys(CronJobSpecSchema.shape).filter((k) => k !== "schedule" && k !== "timeZone");
    const v2Spec = CronJobV2Schema.shape.spec.shape;
    assert.deepEqual(Object.keys(v2Spec), ["schedules", ...v1Fields]);
    for (const k of v1Fields) {
      assert.equal(
        v2Spec[k as keyof typeof v2Spec],
        CronJobSpecSchema.shape[k as keyof typeof CronJobSpecSchema.shape],
        k,
      );
    }
    assert.equal(CronJobV2Schema.shape.status, CronJobSchema.shape.status);
    assert.equal(CronJobV2Schema.shape.metadata, CronJobSchema.shape.metadata);
  });

  it("takes 0 to MAX_SCHEDULES schedules, each with its own time zone (none only with spec.after: the webhook's check)", () => {
    const at = (schedules: unknown) =>
      CronJobV2Schema.safeParse({
        apiVersion: V2,
        kind: "CronJob",
        metadata: { name: "cj" },
        spec: { schedules, jobTemplate },
      });
    assert.equal(
      at([{ schedule: "0 9 * * 1-5", timeZone: "Europe/Berlin" }, { schedule: "0 12 * * 6" }]).success,
      true,
    );
    assert.equal(at([]).success, true, "the schema's; the webhook refuses it without spec.after");
    assert.equal(at(Array.from({ length: MAX_SCHEDULES }, () => ({ schedule: "@daily" }))).success, true);
    const over = at(Array.from({ length: MAX_SCHEDULES + 1 }, () => ({ schedule: "@daily" })));
    assert.equal(over.success, false);
    assert.deepEqual(over.error?.issues[0]?.path, ["spec", "schedules"]);
    assert.equal(at([{ schedule: "" }]).success, false);
  });
});

describe("API v2: conversion to and from the hub (v1)", () => {
  it("v2 → v1 → v2 gives back the same object", () => {
    fc.assert(
      fc.property(v2Object, (v2) => {
        const v1 = convertCronJob(structuredClone(v2), V1);
        assert.equal(v1.apiVersion, V1);
        assert.deepEqual(convertCronJob(v1, V2), v2);
      }),
      { numRuns: RUNS },
    );
  });

  it("v1 → v2 → v1 gives back the same object, whatever its annotation holds", () => {
    fc.assert(
      fc.property(v1Object, (v1) => {
        const v2 = convertCronJob(structuredClone(v1), V2);
        assert.equal(v2.apiVersion, V2);
        assert.deepEqual(convertCronJob(v2, V1), v1);
      }),
      { numRuns: RUNS },
    );
  });

  it("a v1 client that updates an object written as v2 keeps its other schedules", () => {
    fc.assert(
      fc.property(v2Object, fc.constantFrom("0 6 * * *", "@hourly"), (v2, changed) => {
        const v1 = convertCronJob(structuredClone(v2), V1) as any;
        v1.spec.schedule = changed; // what a v1 client changes; it sends the rest back as it read it
        v1.metadata.labels = { ...(v1.metadata.labels ?? {}), edited: "yes" };
        const after = convertCronJob(v1, V2) as any;
        assert.equal(after.spec.schedules[0].schedule, changed);
        assert.deepEqual(after.spec.schedules.slice(1), (v2 as any).spec.schedules.slice(1));
      }),
      { numRuns: RUNS },
    );
  });

  it("keeps the first schedule in v1's fields and the others in the annotation; none with one schedule", () => {
    const two = convertCronJob(
      {
        apiVersion: V2,
        kind: "CronJob",
        metadata: { name: "cj" },
        spec: {
          schedules: [
            { schedule: "0 9 * * 1-5", timeZone: "Europe/Berlin" },
            { timeZone: "Europe/Berlin", schedule: "0 12 * * 6" },
          ],
        },
      },
      V1,
    ) as any;
    assert.deepEqual(two.spec, { schedule: "0 9 * * 1-5", timeZone: "Europe/Berlin" });
    assert.equal(
      two.metadata.annotations[MORE_SCHEDULES_ANNOTATION],
      '[{"schedule":"0 12 * * 6","timeZone":"Europe/Berlin"}]',
    );
    const one = convertCronJob(
      { apiVersion: V2, kind: "CronJob", metadata: { name: "cj" }, spec: { schedules: [{ schedule: "@daily" }] } },
      V1,
    ) as any;
    assert.deepEqual(one, { apiVersion: V1, kind: "CronJob", metadata: { name: "cj" }, spec: { schedule: "@daily" } });
  });

  it("keeps a time zone without a schedule (spec.after only), and adds no spec to an object without one", () => {
    const v1 = {
      apiVersion: V1,
      kind: "CronJob",
      metadata: { name: "cj" },
      spec: { timeZone: "Europe/Berlin", after: [{ cronJob: "extract" }] },
    };
    const v2 = convertCronJob(structuredClone(v1), V2) as any;
    assert.deepEqual(withoutUndefined(v2.spec.schedules), [{ timeZone: "Europe/Berlin" }]);
    assert.deepEqual(convertCronJob(v2, V1), v1);
    for (const [from, to] of [
      [V1, V2],
      [V2, V1],
    ] as const) {
      const specless = { apiVersion: from, kind: "CronJob", metadata: { name: "cj" } };
      assert.deepEqual(
        convertCronJob(structuredClone(specless), to),
        { ...specless, apiVersion: to },
        `${from} → ${to}`,
      );
    }
  });

  it("leaves an annotation it did not write where it is, in both versions", () => {
    for (const text of ["not json", "[]", '[{"timeZone":"UTC","schedule":"@daily"}]']) {
      const v1 = {
        apiVersion: V1,
        kind: "CronJob",
        metadata: { name: "cj", annotations: { [MORE_SCHEDULES_ANNOTATION]: text } },
        spec: { schedule: "@hourly" },
      };
      const v2 = convertCronJob(structuredClone(v1), V2) as any;
      assert.deepEqual(v2.spec.schedules, [{ schedule: "@hourly" }], text);
      assert.equal(v2.metadata.annotations[MORE_SCHEDULES_ANNOTATION], text);
    }
  });

  it("returns an object already in the version asked for as it is, and names what it cannot convert", () => {
    const v1 = { apiVersion: V1, kind: "CronJob", metadata: {}, spec: {} };
    assert.equal(convertCronJob(v1, V1), v1);
    assert.throws(
      () => convertCronJob({ apiVersion: "batch.tutorial.kubebuilder.io/v3", kind: "CronJob" }, V1),
      /cannot convert a CronJob from batch\.tutorial\.kubebuilder\.io\/v3 to batch\.tutorial\.kubebuilder\.io\/v1/,
    );
  });
});
