import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CRONJOB_NAME_LABEL, INSTANTIATE_ANNOTATION } from "../../api/v1/index.ts";
import { utcOffsetAt } from "../../api/v1/schedule/index.ts";
import {
  classifyJob,
  jobForRunNow,
  jobForSlot,
  type JobSource,
  jobNameFor,
  KUEUE_QUEUE_NAME_KEY,
  queuedBy,
  readJob,
  rfc3339InZone,
  runningSince,
  scheduledTimeOf,
} from "../../api/v1/index.ts";
import { trimJobForCache } from "../../controllers/jobs.ts";
import { batchJob, jobStatus } from "../fixtures.ts";

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

  it("a Job whose end is only decided (1.31+ FailureTarget, SuccessCriteriaMet) still runs: its Pods terminate", () => {
    const at = "2026-11-22T05:54:00Z";
    assert.equal(classifyJob({ status: jobStatus({ state: "failing", start: at, end: at }) }), "active");
    const met = { status: { conditions: [{ type: "SuccessCriteriaMet", status: "True", lastTransitionTime: at }] } };
    assert.equal(classifyJob(met), "active");
  });

  it("a Job resumed from a queue (Kueue) has run since its resume, not since an older startTime", () => {
    // The 1.33 Job controller resets startTime in the update that turns Suspended False (job_controller.go, "Resumed
    // jobs will always reset StartTime"), so the two agree once it has written; a Job whose status another controller
    // writes (spec.managedBy) need not, and the start limit must not count its time in the queue.
    const resumed = {
      status: {
        startTime: "2026-11-22T05:00:00Z",
        conditions: [{ type: "Suspended", status: "False", lastTransitionTime: "2026-11-22T05:40:00Z" }],
      },
    };
    assert.equal(runningSince(resumed)?.toISOString(), "2026-11-22T05:40:00.000Z");
    const queued = { spec: { suspend: false }, status: { conditions: [{ type: "Suspended", status: "True" }] } };
    assert.equal(runningSince(queued), undefined, "resumed in spec, not yet by the Job controller: not running");
    const readmitted = { ...queued, status: { ...queued.status, startTime: "2026-11-22T05:00:00Z" } };
    assert.equal(
      runningSince(readmitted),
      undefined,
      "preempted after a first run: its old startTime is not its start",
    );
  });

  it("a queued Job is a suspended one that has not finished, named by whoever holds it", () => {
    const kueue = { [KUEUE_QUEUE_NAME_KEY]: "team-a" };
    const suspendedSince = { type: "Suspended", status: "True", lastTransitionTime: "2026-11-22T05:00:00Z" };
    assert.equal(queuedBy({ metadata: { labels: kueue }, spec: { suspend: true } })?.by, "Kueue (queue team-a)");
    // Where the spec does not say (a Job read without it), its Suspended condition does.
    assert.deepEqual(queuedBy({ metadata: { labels: kueue }, status: { conditions: [suspendedSince] } }), {
      by: "Kueue (queue team-a)",
      since: "2026-11-22T05:00:00Z",
    });
    assert.equal(
      queuedBy({ spec: { suspend: false }, status: { conditions: [suspendedSince] } }),
      undefined,
      "spec.suspend cleared: resumed, whatever the condition still says",
    );
    assert.equal(
      queuedBy({ spec: { suspend: true, managedBy: "kueue.x-k8s.io/multikueue" } })?.by,
      "kueue.x-k8s.io/multikueue",
    );
    const ended = batchJob({ name: "j", state: "failed", end: "2026-11-22T05:10:00Z", spec: { suspend: true } });
    assert.equal(queuedBy(ended), undefined, "a finished Job is not queued");
  });
});

describe("the tests' Job fixture (batchJob)", () => {
  it("writes a slot's annotations and the owner reference as jobForSlot does", () => {
    const slot = new Date("2026-07-15T06:30:00Z");
    const cj: JobSource = {
      metadata: { name: "nightly", namespace: "ns", uid: "cj-uid" },
      spec: { timeZone: "America/New_York", jobTemplate: { spec: {} } },
    };
    const real = jobForSlot(cj, slot);
    const fixture = batchJob({
      name: jobNameFor("nightly", slot),
      owner: { name: "nightly", uid: "cj-uid" },
      slot,
      timeZone: "America/New_York",
    });
    assert.deepEqual(fixture.metadata!.annotations, real.metadata!.annotations);
    assert.deepEqual(fixture.metadata!.ownerReferences, real.metadata!.ownerReferences);
    assert.equal(fixture.metadata!.name, real.metadata!.name);
  });
});

describe("the CronJob name label on every Job", () => {
  const slot = new Date("2026-11-22T05:53:00Z");
  const podSpec = { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] };
  const source = (jobTemplate: JobSource["spec"]["jobTemplate"]): JobSource => ({
    metadata: { name: "nightly", namespace: "ns", uid: "cj-uid" },
    spec: { jobTemplate },
  });

  it("labels scheduled and run-now Jobs with the CronJob's name, next to the template's labels", () => {
    const cj = source({ metadata: { labels: { app: "x", tier: "batch" } }, spec: { template: { spec: podSpec } } });
    const want = { app: "x", tier: "batch", [CRONJOB_NAME_LABEL]: "nightly" };
    assert.equal(CRONJOB_NAME_LABEL, "batch.tutorial.kubebuilder.io/cronjob-name");
    assert.deepEqual(jobForSlot(cj, slot).metadata!.labels, want);
    const manual = jobForRunNow(cj, "2026-11-23T08:49:10Z-9b5dad", "alice");
    assert.deepEqual(manual.metadata!.labels, want);
    assert.equal(manual.metadata!.annotations![INSTANTIATE_ANNOTATION], "manual");
    // The template is not modified: the next Job starts from it again.
    assert.deepEqual(cj.spec.jobTemplate.metadata!.labels, { app: "x", tier: "batch" });
  });

  it("wins over a template label of the same key, so a template cannot attribute its Jobs to another CronJob", () => {
    const cj = source({
      metadata: { labels: { app: "x", [CRONJOB_NAME_LABEL]: "someone-else" } },
      spec: { template: { spec: podSpec } },
    });
    assert.deepEqual(jobForSlot(cj, slot).metadata!.labels, { app: "x", [CRONJOB_NAME_LABEL]: "nightly" });
    assert.equal(jobForRunNow(cj, "r", undefined).metadata!.labels![CRONJOB_NAME_LABEL], "nightly");
  });

  it("a template without labels keeps the pod template's, as the API server defaults a Job without labels", () => {
    const cj = source({ spec: { template: { metadata: { labels: { app: "from-pod" } }, spec: podSpec } } });
    const job = jobForSlot(cj, slot);
    assert.deepEqual(job.metadata!.labels, { app: "from-pod", [CRONJOB_NAME_LABEL]: "nightly" });
    // The pod template itself is left as it is.
    assert.deepEqual((job.spec as { template: { metadata: unknown } }).template.metadata, {
      labels: { app: "from-pod" },
    });
    // With labels of its own the template's are the Job's, as the API server does it.
    const own = source({
      metadata: { labels: { team: "data" } },
      spec: { template: { metadata: { labels: { app: "from-pod" } }, spec: podSpec } },
    });
    assert.deepEqual(jobForSlot(own, slot).metadata!.labels, { team: "data", [CRONJOB_NAME_LABEL]: "nightly" });
    // Neither has labels: the label alone.
    assert.deepEqual(jobForSlot(source({ spec: { template: { spec: podSpec } } }), slot).metadata!.labels, {
      [CRONJOB_NAME_LABEL]: "nightly",
    });
  });
});

// The upstream annotation carries the zone's offset at the slot's instant (Go's `t.In(loc).Format(time.RFC3339)`).
// The offset comes from the schedule module, the one the slots are computed with; Intl's own offset names
// (a different ICU path) are the reference.
describe("the Job cache keeps what the controller reads", () => {
  it("drops the spec and kubectl's last-applied copy, keeps metadata and status", () => {
    const slot = new Date("2026-11-22T05:53:00Z");
    const job = jobForSlot(
      {
        metadata: { name: "nightly", namespace: "ns", uid: "cj-uid" },
        spec: {
          jobTemplate: {
            metadata: { labels: { app: "x" } },
            spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] } } },
          },
        },
      },
      slot,
    );
    job.metadata!.annotations!["kubectl.kubernetes.io/last-applied-configuration"] = JSON.stringify(job);
    Object.assign(job.metadata!, { uid: "job-uid", resourceVersion: "42", creationTimestamp: "2026-11-22T05:53:01Z" });
    job.status = jobStatus({ state: "complete", start: "2026-11-22T05:53:01Z", end: "2026-11-22T05:54:00Z" });
    const before = structuredClone(job);
    const trimmed = readJob(trimJobForCache(structuredClone(job)));
    assert.equal(trimmed.spec, undefined);
    const { "kubectl.kubernetes.io/last-applied-configuration": _, ...annotations } = before.metadata!.annotations!;
    assert.deepEqual(trimmed.metadata, { ...before.metadata, annotations });
    assert.deepEqual(trimmed.status, before.status);
    assert.equal(classifyJob(trimmed), "successful");
    assert.equal(scheduledTimeOf(trimmed)?.toISOString(), slot.toISOString());
  });

  it("keeps ttlSecondsAfterFinished: a run whose Job will be deleted once it ends is written before it goes", () => {
    const job = batchJob({ name: "nightly-1", spec: { ttlSecondsAfterFinished: 0, suspend: false, template: {} } });
    assert.deepEqual(trimJobForCache(job).spec, { suspend: false, ttlSecondsAfterFinished: 0 });
  });
});

describe("the scheduled-timestamp annotation across DST transitions", () => {
  const ZONES = ["America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Kathmandu"];

  it("shows the wall clock and offset in force at the instant, on both sides of each transition", () => {
    const cases: Array<[string, string, string]> = [
      // New York: 02:00 EST → 03:00 EDT, then 02:00 EDT → 01:00 EST.
      ["America/New_York", "2026-03-08T06:59:59Z", "2026-03-08T01:59:59-05:00"],
      ["America/New_York", "2026-03-08T07:00:00Z", "2026-03-08T03:00:00-04:00"],
      ["America/New_York", "2026-11-01T04:00:00Z", "2026-11-01T00:00:00-04:00"],
      ["America/New_York", "2026-11-01T05:59:59Z", "2026-11-01T01:59:59-04:00"],
      ["America/New_York", "2026-11-01T06:00:00Z", "2026-11-01T01:00:00-05:00"],
      // London: GMT (offset 0, written "Z") ↔ BST.
      ["Europe/London", "2026-03-29T00:59:59Z", "2026-03-29T00:59:59Z"],
      ["Europe/London", "2026-03-29T01:00:00Z", "2026-03-29T02:00:00+01:00"],
      ["Europe/London", "2026-10-25T00:59:59Z", "2026-10-25T01:59:59+01:00"],
      ["Europe/London", "2026-10-25T01:00:00Z", "2026-10-25T01:00:00Z"],
      // Lord Howe: a 30-minute DST, +11:00 ↔ +10:30.
      ["Australia/Lord_Howe", "2026-04-04T14:59:59Z", "2026-04-05T01:59:59+11:00"],
      ["Australia/Lord_Howe", "2026-04-04T15:00:00Z", "2026-04-05T01:30:00+10:30"],
      ["Australia/Lord_Howe", "2026-10-03T15:29:59Z", "2026-10-04T01:59:59+10:30"],
      ["Australia/Lord_Howe", "2026-10-03T15:30:00Z", "2026-10-04T02:30:00+11:00"],
      // Kathmandu: +05:45 all year.
      ["Asia/Kathmandu", "2026-03-08T07:00:00Z", "2026-03-08T12:45:00+05:45"],
      ["Asia/Kathmandu", "2026-11-01T06:00:00Z", "2026-11-01T11:45:00+05:45"],
    ];
    for (const [zone, instant, want] of cases) {
      assert.equal(rfc3339InZone(new Date(instant), zone), want, `${zone} at ${instant}`);
    }
  });

  it("agrees with Intl's offset and wall clock every 15 minutes of a year, in each zone", () => {
    for (const timeZone of ZONES) {
      const offsetName = new Intl.DateTimeFormat("en-US", { timeZone, timeZoneName: "longOffset" });
      const wall = new Intl.DateTimeFormat("en-CA", {
        timeZone,
        hourCycle: "h23",
        year: "numeric",
        month: "2-digit",
        day: "2-digit",
        hour: "2-digit",
        minute: "2-digit",
        second: "2-digit",
      });
      for (let t = Date.UTC(2026, 0, 1); t < Date.UTC(2027, 0, 1); t += 15 * 60_000) {
        const at = new Date(t);
        // "GMT-04:00", "GMT+05:45"; a zero offset is written "Z", as the implementation always has.
        const name = offsetName.formatToParts(at).find((p) => p.type === "timeZoneName")!.value;
        const offset = name === "GMT" || name === "GMT+00:00" ? "Z" : name.slice(3);
        const p = Object.fromEntries(wall.formatToParts(at).map((x) => [x.type, x.value]));
        const want = `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}${offset}`;
        const got = rfc3339InZone(at, timeZone);
        if (got !== want) assert.fail(`${timeZone} at ${at.toISOString()}: ${got}, want ${want}`);
        assert.equal(Date.parse(got), t);
        const ms =
          offset === "Z" ? 0 : (offset[0] === "-" ? -1 : 1) * (+offset.slice(1, 3) * 60 + +offset.slice(4)) * 60_000;
        if (utcOffsetAt(timeZone, at) !== ms) assert.fail(`${timeZone} at ${at.toISOString()}: offset`);
      }
    }
  });
});
