// The wire types at the controller's boundaries: what a stored CronJob and a Job are whatever their values.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  CronJobSchema,
  CronJobSpecSchema,
  CronJobStatusSchema,
  type CronJobWire,
  CronJobWireSchema,
  parseCronJob,
} from "../../api/v1/index.ts";
import { type Job, JobSchema, jobForSlot, JobSourceSchema, readJob } from "../../api/v1/index.ts";
import { minimalCronJob, SCHEDULED_CONDITION, variant } from "../fixtures.ts";

const keys = (o: object) => Object.keys(o).sort();

describe("CronJobWireSchema: a stored CronJob whatever its values", () => {
  it("describes the same fields as the schema", () => {
    assert.deepEqual(keys(CronJobWireSchema.shape), keys(CronJobSchema.shape));
    assert.deepEqual(keys(CronJobWireSchema.shape.spec.shape), keys(CronJobSpecSchema.shape));
    assert.deepEqual(keys(CronJobWireSchema.shape.status.unwrap().shape), keys(CronJobStatusSchema.shape));
  });

  it("accepts every CronJob the schema accepts, unchanged (a CronJob is a CronJobWire)", () => {
    const withStatus = variant(minimalCronJob("w"), (o) => {
      o.metadata.uid = "u-1";
      o.metadata.creationTimestamp = "2026-01-01T00:00:00Z";
      o.spec.timeZone = "Asia/Kathmandu";
      o.spec.jobTemplate.spec.backoffLimit = 2;
      o.status = {
        active: [{ kind: "Job", name: "w-1", namespace: "default", uid: "j-1" }],
        activeCount: 1,
        lastScheduleTime: "2026-01-01T00:00:00Z",
        conditions: [SCHEDULED_CONDITION],
      };
    });
    for (const obj of [minimalCronJob("w"), withStatus]) {
      const r = parseCronJob(obj);
      assert.ok(r.ok);
      const wire: CronJobWire = r.value; // the compiler's half of the claim
      assert.deepEqual(CronJobWireSchema.parse(wire), wire);
    }
  });

  it("reads what the schema refuses but the CRD may hold as stored: no checks, no defaults", () => {
    const stored = variant(minimalCronJob("w"), (o) => {
      o.spec.schedule = "0 * * * * " + "x".repeat(2000);
      o.spec.startingDeadlineSeconds = 2 ** 60;
      o.spec.concurrencyPolicy = "Sometimes";
    });
    assert.equal(parseCronJob(stored).ok, false);
    const r = CronJobWireSchema.safeParse(stored);
    assert.ok(r.success);
    assert.deepEqual(r.data, stored);
    assert.equal(r.data.spec.successfulJobsHistoryLimit, undefined);
  });

  it("refuses what no stored object can be (the JSON types are the CRD's)", () => {
    assert.equal(
      CronJobWireSchema.safeParse(variant(minimalCronJob("w"), (o) => (o.spec.schedule = 5))).success,
      false,
    );
    assert.equal(CronJobWireSchema.safeParse({ metadata: {} }).success, false);
  });
});

describe("JobSchema: the Job the controller reads", () => {
  const job = {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: "j", namespace: "ns", uid: "u", creationTimestamp: "2026-01-01T00:00:00Z", generation: 1 },
    spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "c" }] } } },
    status: {
      startTime: "2026-01-01T00:00:01Z",
      completionTime: "2026-01-01T00:00:09Z",
      succeeded: 1,
      conditions: [{ type: "Complete", status: "True", lastTransitionTime: "2026-01-01T00:00:09Z" }],
      ready: 0,
    },
  };

  it("keeps a Job as it is, timestamps as strings and unknown fields included", () => {
    const got: Job = readJob(job);
    assert.deepEqual(got, job);
    assert.equal(typeof got.status?.startTime, "string");
  });

  it("refuses a Job whose read fields have the wrong types, naming it", () => {
    const bad = { ...job, status: { conditions: { type: "Complete" } } };
    assert.equal(JobSchema.safeParse(bad).success, false);
    assert.throws(() => readJob(bad), /^Error: Job ns\/j is not a batch\/v1 Job: /);
  });

  it("builds the Job for a slot from a parsed admission object", () => {
    const cj = parseCronJob(minimalCronJob("src"));
    assert.ok(cj.ok);
    const source = JobSourceSchema.parse({ metadata: cj.value.metadata, spec: cj.value.spec });
    const slot = new Date("2026-01-01T00:00:00Z");
    assert.deepEqual(jobForSlot(source, slot), jobForSlot(cj.value, slot));
  });
});
