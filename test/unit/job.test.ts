import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { classifyJob, jobNameFor, rfc3339InZone, scheduledTimeOf } from "../../controllers/job.ts";

describe("Job helpers", () => {
  it("formats the upstream scheduled-timestamp annotation in the CronJob's zone", () => {
    assert.equal(rfc3339InZone(new Date("2026-01-15T07:30:00Z"), "America/New_York"), "2026-01-15T02:30:00-05:00");
    assert.equal(rfc3339InZone(new Date("2026-07-15T06:30:00Z"), "America/New_York"), "2026-07-15T02:30:00-04:00");
    assert.equal(rfc3339InZone(new Date("2026-01-15T00:00:00Z"), "Australia/Lord_Howe"), "2026-01-15T11:00:00+11:00");
    assert.equal(rfc3339InZone(new Date("2026-07-15T00:00:00Z"), "Australia/Lord_Howe"), "2026-07-15T10:30:00+10:30");
    assert.equal(rfc3339InZone(new Date("2026-07-15T00:00:00Z"), "Asia/Kathmandu"), "2026-07-15T05:45:00+05:45");
    assert.equal(rfc3339InZone(new Date("2026-07-15T00:00:00Z"), "UTC"), "2026-07-15T00:00:00Z");
  });

  it("names Jobs by the slot in Unix seconds and reads the slot back", () => {
    const slot = new Date("2026-11-22T05:53:00Z");
    assert.equal(jobNameFor("nightly", slot), `nightly-${slot.getTime() / 1000}`);
    assert.equal(
      scheduledTimeOf({
        metadata: { annotations: { "batch.tutorial.kubebuilder.io/scheduled-at": "2026-11-22T05:53:00Z" } },
      })?.toISOString(),
      slot.toISOString(),
    );
    assert.equal(
      scheduledTimeOf({ metadata: { annotations: { "batch.tutorial.kubebuilder.io/scheduled-at": "garbage" } } }),
      undefined,
    );
  });

  it("classifies by the Complete and Failed conditions", () => {
    assert.equal(classifyJob({ status: { conditions: [{ type: "Complete", status: "True" }] } }), "successful");
    assert.equal(classifyJob({ status: { conditions: [{ type: "Failed", status: "True" }] } }), "failed");
    assert.equal(classifyJob({ status: { conditions: [{ type: "Complete", status: "False" }] } }), "active");
    assert.equal(classifyJob({}), "active");
  });
});
