// The Job status transitions the fake refuses as a Kubernetes 1.33+ apiserver does (runtime/fake/jobstatus.ts),
// rule by rule, and the 1.31+ Job controller's own transitions, which it accepts.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Job } from "../../api/v1/index.ts";
import { APIError, isAlreadyExists } from "../../runtime/errors.ts";
import { FakeClient } from "../../runtime/fake/client.ts";
import { jobStatusErrors } from "../../runtime/fake/jobstatus.ts";
import { Kinds } from "../../runtime/kinds.ts";
import { batchJob, createJob, jobStatus } from "../fixtures.ts";

/** The apiserver refused a write as Invalid (422). */
const isInvalid = (e: unknown): boolean => e instanceof APIError && e.reason === "Invalid";

type Status = NonNullable<Job["status"]>;

const START = "2030-01-01T00:00:00Z";
const END = "2030-01-01T00:05:00Z";
const cond = (...types: string[]) => types.map((type) => ({ type, status: "True", lastTransitionTime: END }));

const running: Status = { startTime: START, active: 1 };
const complete: Status = jobStatus({ state: "complete", start: START, end: END });
const failed: Status = jobStatus({ state: "failed", start: START, end: END });

interface Case {
  name: string;
  from: Status;
  to: Status;
  spec?: Record<string, unknown>;
  /** "<field>: <message>" of each cause, in the apiserver's order. */
  want: string[];
}

const conditions = (detail: string) => `status.conditions: Invalid value: ${detail}`;

const REFUSED: Case[] = [
  {
    name: "Complete=True without SuccessCriteriaMet=True",
    from: running,
    to: { startTime: START, completionTime: END, succeeded: 1, conditions: cond("Complete") },
    want: [conditions("cannot set Complete=True condition without the SuccessCriteriaMet=true condition")],
  },
  {
    name: "Failed=True without FailureTarget=True",
    from: running,
    to: { startTime: START, failed: 1, conditions: cond("Failed") },
    want: [conditions("cannot set Failed=True condition without the FailureTarget=true condition")],
  },
  {
    name: "Complete=True and Failed=True",
    from: { ...running, conditions: cond("FailureTarget") },
    to: { startTime: START, completionTime: END, conditions: cond("FailureTarget", "Failed", "Complete") },
    want: [
      conditions("cannot set Complete=True and Failed=true conditions"),
      conditions("cannot set Complete=True and FailureTarget=true conditions"),
      conditions("cannot set Complete=True condition without the SuccessCriteriaMet=true condition"),
    ],
  },
  {
    name: "Complete=True and FailureTarget=True",
    from: { ...running, conditions: cond("FailureTarget") },
    to: { startTime: START, completionTime: END, conditions: cond("FailureTarget", "SuccessCriteriaMet", "Complete") },
    want: [
      conditions("cannot set Complete=True and FailureTarget=true conditions"),
      conditions("cannot set SuccessCriteriaMet=True and FailureTarget=true conditions"),
    ],
  },
  {
    name: "SuccessCriteriaMet=True and Failed=True",
    from: failed,
    to: { ...failed, conditions: cond("FailureTarget", "Failed", "SuccessCriteriaMet") },
    want: [
      conditions("cannot set SuccessCriteriaMet=True and Failed=true conditions"),
      conditions("cannot set SuccessCriteriaMet=True and FailureTarget=true conditions"),
    ],
  },
  {
    name: "SuccessCriteriaMet=True and FailureTarget=True",
    from: { ...running, conditions: cond("FailureTarget") },
    to: { ...running, conditions: cond("FailureTarget", "SuccessCriteriaMet") },
    want: [conditions("cannot set SuccessCriteriaMet=True and FailureTarget=true conditions")],
  },
  {
    name: "Failed=True taken back",
    from: failed,
    to: { ...failed, conditions: cond("FailureTarget") },
    want: [conditions("cannot disable the terminal Failed=True condition")],
  },
  {
    name: "Complete=True taken back (with its completionTime)",
    from: complete,
    to: { startTime: START, succeeded: 1, conditions: cond("SuccessCriteriaMet") },
    want: [conditions("cannot disable the terminal Complete=True condition")],
  },
  {
    name: "FailureTarget=True taken back",
    from: { ...running, conditions: cond("FailureTarget") },
    to: running,
    want: [conditions("cannot disable the terminal FailureTarget=True condition")],
  },
  {
    name: "SuccessCriteriaMet=True taken back",
    from: { ...running, conditions: cond("SuccessCriteriaMet") },
    to: running,
    want: [conditions("cannot disable the SuccessCriteriaMet=True condition")],
  },
  {
    name: "a finished Job with active Pods",
    from: running,
    to: { ...failed, active: 1 },
    want: ["status.active: Invalid value: 1: active>0 is invalid for finished job"],
  },
  {
    name: "a finished Job without startTime",
    from: { active: 1 },
    to: { failed: 1, conditions: cond("FailureTarget", "Failed") },
    want: ["status.startTime: Required value: startTime is required for finished job"],
  },
  {
    name: "startTime removed from an unsuspended Job",
    from: running,
    to: { active: 1 },
    want: ["status.startTime: Required value: startTime cannot be removed for unsuspended job"],
  },
  {
    name: "startTime changed on an unsuspended Job",
    from: running,
    to: { ...running, startTime: "2030-01-01T00:01:00Z" },
    spec: { suspend: false },
    want: ["status.startTime: Required value: startTime cannot be removed for unsuspended job"],
  },
  {
    name: "Complete=True without completionTime",
    from: running,
    to: { startTime: START, succeeded: 1, conditions: cond("SuccessCriteriaMet", "Complete") },
    want: ["status.completionTime: Required value: completionTime is required for Complete jobs"],
  },
  {
    name: "completionTime without Complete=True",
    from: running,
    to: { ...running, completionTime: END, conditions: cond("SuccessCriteriaMet") },
    want: [
      'status.completionTime: Invalid value: "2030-01-01 00:05:00 +0000 UTC": ' +
        "cannot set completionTime when there is no Complete=True condition",
    ],
  },
  {
    name: "completionTime changed",
    from: complete,
    to: { ...complete, completionTime: "2030-01-01T00:06:00Z" },
    want: ['status.completionTime: Invalid value: "2030-01-01 00:06:00 +0000 UTC": completionTime cannot be mutated'],
  },
  {
    name: "completionTime before startTime",
    from: running,
    to: { ...complete, completionTime: "2029-12-31T23:59:59Z" },
    want: [
      'status.completionTime: Invalid value: "2029-12-31 23:59:59 +0000 UTC": completionTime cannot be set before startTime',
    ],
  },
  {
    name: "the failed counter going down",
    from: { ...running, failed: 2 },
    to: { ...running, failed: 1 },
    want: ["status.failed: Invalid value: 1: cannot decrease the failed counter"],
  },
  {
    name: "the succeeded counter going down (a non-indexed Job)",
    from: { ...running, succeeded: 2 },
    to: { ...running, succeeded: 1 },
    want: ["status.succeeded: Invalid value: 1: cannot decrease the succeeded counter"],
  },
  {
    name: "a finished Job with uncounted terminated Pods",
    from: { ...running, uncountedTerminatedPods: { failed: ["u1"] } },
    to: { ...failed, uncountedTerminatedPods: { failed: ["u1"] } },
    want: [
      'status.uncountedTerminatedPods: Invalid value: batch.UncountedTerminatedPods{Succeeded:[]types.UID(nil), Failed:[]types.UID{"u1"}}: ' +
        "uncountedTerminatedPods needs to be empty for finished job",
    ],
  },
  {
    // Cannot exist on 1.31+ (Complete=True without SuccessCriteriaMet=True), tested on the rules only.
    name: "SuccessCriteriaMet=True after Complete=True",
    from: { startTime: START, completionTime: END, succeeded: 1, conditions: cond("Complete") },
    to: { startTime: START, completionTime: END, succeeded: 1, conditions: cond("Complete", "SuccessCriteriaMet") },
    want: [conditions("cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions")],
  },
];

const ACCEPTED: Omit<Case, "want">[] = [
  { name: "a new Job starting", from: {}, to: running },
  { name: "running → SuccessCriteriaMet with Complete (completionTime, startTime kept)", from: running, to: complete },
  {
    name: "running → SuccessCriteriaMet → Complete",
    from: { ...running, conditions: cond("SuccessCriteriaMet") },
    to: complete,
  },
  { name: "running → FailureTarget with Failed", from: running, to: failed },
  { name: "running → FailureTarget → Failed", from: { ...running, conditions: cond("FailureTarget") }, to: failed },
  { name: "a Job created finished, as createJob writes it", from: {}, to: complete },
  { name: "a finished Job written again", from: complete, to: structuredClone(complete) },
  { name: "startTime removed from a suspended Job", from: running, to: { active: 0 }, spec: { suspend: true } },
  {
    name: "the succeeded counter going down on an Indexed Job with completions = parallelism (scaled down)",
    from: { ...running, succeeded: 2 },
    to: { ...running, succeeded: 1 },
    spec: { completionMode: "Indexed", completions: 3, parallelism: 3 },
  },
  {
    // Cannot exist on 1.31+, tested on the rules only: a rule is checked only when a field it reads changes.
    name: "a Job an older apiserver let finish without FailureTarget or startTime, its counter updated",
    from: { conditions: cond("Failed") },
    to: { failed: 1, conditions: cond("Failed") },
  },
];

const job = (status: Status, spec: Record<string, unknown> = {}) => ({ spec, status });

describe("Job status validation (Kubernetes 1.33+)", () => {
  for (const c of REFUSED) {
    it(`refuses ${c.name}`, () => {
      const causes = jobStatusErrors(job(c.from, c.spec), job(c.to, c.spec));
      assert.deepEqual(
        causes.map((e) => `${e.field}: ${e.message}`),
        c.want,
      );
      for (const e of causes) {
        assert.equal(e.reason, e.message!.startsWith("Required") ? "FieldValueRequired" : "FieldValueInvalid");
      }
    });
  }

  for (const c of ACCEPTED) {
    it(`accepts ${c.name}`, () => {
      assert.deepEqual(jobStatusErrors(job(c.from, c.spec), job(c.to, c.spec)), []);
    });
  }
});

describe("FakeClient on a Job's status subresource", () => {
  async function runningJob(f: FakeClient, name = "j"): Promise<Job> {
    return createJob(f, batchJob({ name, namespace: "ns", state: "active", start: START }));
  }

  it("refuses with the apiserver's 422 Invalid, one cause per rule, and keeps the stored Job", async () => {
    const f = new FakeClient();
    const j = await runningJob(f);
    const bad = { ...j, status: { startTime: START, completionTime: END, conditions: cond("Complete") } };
    const check = (e: unknown) => {
      assert.ok(e instanceof APIError && isInvalid(e), String(e));
      assert.equal(e.code, 422);
      assert.equal(
        e.message,
        'Job.batch "j" is invalid: status.conditions: Invalid value: ' +
          "cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
      );
      const cause = {
        reason: "FieldValueInvalid",
        message: "Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
        field: "status.conditions",
      };
      assert.deepEqual(e.causes, [cause]);
      assert.deepEqual(e.details, { name: "j", group: "batch", kind: "Job", causes: [cause] });
      return true;
    };
    await assert.rejects(f.updateStatus(Kinds.Job, bad), check);
    await assert.rejects(f.updateStatus(Kinds.Job, bad, { dryRun: true }), check);
    const stored = await f.get<Job>(Kinds.Job, "ns", "j");
    assert.equal(stored.metadata!.resourceVersion, j.metadata!.resourceVersion);
    assert.deepEqual(stored.status, j.status);
  });

  it("lists several broken rules in brackets, as an aggregate", async () => {
    const f = new FakeClient();
    const j = await runningJob(f);
    await assert.rejects(
      f.updateStatus(Kinds.Job, { ...j, status: { active: 1, failed: 1, conditions: cond("Failed") } }),
      {
        message:
          'Job.batch "j" is invalid: [status.conditions: Invalid value: cannot set Failed=True condition without the ' +
          "FailureTarget=true condition, status.active: Invalid value: 1: active>0 is invalid for finished job, " +
          "status.startTime: Required value: startTime is required for finished job, " +
          "status.startTime: Required value: startTime cannot be removed for unsuspended job]",
      },
    );
  });

  it("accepts the 1.31+ Job controller's transitions (fixtures' jobStatus)", async () => {
    const f = new FakeClient();
    for (const state of ["complete", "failed"] as const) {
      const j = await runningJob(f, state);
      const done = await f.updateStatus(Kinds.Job, { ...j, status: jobStatus({ state, start: START, end: END }) });
      assert.deepEqual(done.status, jobStatus({ state, start: START, end: END }));
      // And a Job created already finished, as createJob writes it.
      await createJob(f, batchJob({ name: `${state}-2`, namespace: "ns", state, start: START, end: END }));
    }
  });

  it("seeds a Job as an older apiserver left it; a write is then checked only in what it changes", async () => {
    const f = new FakeClient();
    // Cannot exist on 1.31+ (Failed=True without FailureTarget=True or startTime): seeded, not written.
    const legacy = f.seed<Job>(Kinds.Job, {
      ...batchJob({ name: "old", namespace: "ns" }),
      status: { failed: 1, conditions: cond("Failed") },
    });
    assert.ok(legacy.metadata!.uid && legacy.metadata!.creationTimestamp && legacy.metadata!.resourceVersion);
    assert.deepEqual((await f.get<Job>(Kinds.Job, "ns", "old")).status, legacy.status);
    assert.deepEqual(
      f.actions.map((a) => a.verb),
      ["get"],
      "a seed is no API call",
    );
    assert.throws(() => f.seed(Kinds.Job, legacy), isAlreadyExists);
    const counted = await f.updateStatus(Kinds.Job, { ...legacy, status: { ...legacy.status, failed: 2 } });
    await assert.rejects(f.updateStatus(Kinds.Job, { ...counted, status: { ...counted.status, active: 1 } }), {
      message: 'Job.batch "old" is invalid: status.active: Invalid value: 1: active>0 is invalid for finished job',
    });
  });

  it("checks a Job's status in an update only where Jobs lack the status subresource", async () => {
    const f = new FakeClient({ withoutStatusSubresource: [Kinds.Job] });
    const j = await f.create<Job>(Kinds.Job, batchJob({ name: "j", namespace: "ns", state: "active", start: START }));
    await assert.rejects(f.update(Kinds.Job, { ...j, status: { active: 1 } }), isInvalid);
    await f.update(Kinds.Job, { ...j, metadata: { ...j.metadata, labels: { a: "b" } } });
    // With the subresource (always, on an apiserver), an update leaves status alone: nothing to check.
    const g = new FakeClient();
    const k = await runningJob(g);
    await g.update(Kinds.Job, { ...k, status: { active: 1 } });
  });
});
