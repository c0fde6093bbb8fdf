// Properties of the "newest of" status fields (controllers/status.ts): whatever order the Jobs are listed in,
// whatever status already held, lastScheduleTime, lastSuccessfulTime and lastFailedTime are the newest time
// there is, and never older than before. A version that let the last listed Job win, or forgot the previous
// value, fails here.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { Job } from "../../api/v1/index.ts";
import { newestTimes, type NewestTimes } from "../../controllers/status.ts";
import { batchJob } from "../fixtures.ts";

const T0 = Date.UTC(2026, 0, 1);
const time = fc.integer({ min: 0, max: 30 * 86_400 }).map((s) => new Date(T0 + s * 1000));

interface JobSpec {
  outcome: "Complete" | "Failed" | "active";
  slot: Date;
  /** How long after its slot it finished. */
  tookS: number;
  /** completionTime set (a successful Job) or only the condition's lastTransitionTime (any finished Job). */
  viaCompletionTime: boolean;
}

const jobSpec: fc.Arbitrary<JobSpec> = fc.record({
  outcome: fc.constantFrom("Complete" as const, "Failed" as const, "active" as const),
  slot: time,
  tookS: fc.integer({ min: 0, max: 86_400 }),
  viaCompletionTime: fc.boolean(),
});

const STATE = { Complete: "complete", Failed: "failed", active: "active" } as const;

function job(spec: JobSpec, i: number): Job {
  const done = new Date(spec.slot.getTime() + spec.tookS * 1000);
  const j = batchJob({ name: `j-${i}`, uid: `uid-${i}`, slot: spec.slot, state: STATE[spec.outcome], end: done });
  // Without completionTime only the final condition's lastTransitionTime says when it ended.
  if (!spec.viaCompletionTime) delete j.status!.completionTime;
  return j;
}

const finishOf = (s: JobSpec) => new Date(s.slot.getTime() + s.tookS * 1000);
const max = (ds: (Date | undefined)[]): Date | undefined =>
  ds.reduce<Date | undefined>((m, d) => (d && (!m || d > m) ? d : m), undefined);

const prevStatus: fc.Arbitrary<NewestTimes> = fc.record(
  { lastScheduleTime: time, lastSuccessfulTime: time, lastFailedTime: time },
  { requiredKeys: [] },
);

describe("newestTimes: the status fields that hold the newest of the Jobs' times", () => {
  it("each field is the newest of the previous value and the listed Jobs, in any listing order", () => {
    fc.assert(
      fc.property(
        prevStatus,
        fc
          .array(jobSpec, { maxLength: 12 })
          .chain((specs) => fc.tuple(fc.constant(specs), fc.shuffledSubarray(specs, { minLength: specs.length }))),
        (prev, [specs, shuffled]) => {
          const jobs = specs.map(job);
          const byName = new Map(specs.map((s, i) => [s, jobs[i]!]));
          const got = newestTimes(prev, jobs);
          const again = newestTimes(
            prev,
            shuffled.map((s) => byName.get(s)!),
          );
          assert.deepEqual(again, got, "the listing order changed the result");
          const want: NewestTimes = {};
          const sched = max([prev.lastScheduleTime, ...specs.map((s) => s.slot)]);
          const success = max([
            prev.lastSuccessfulTime,
            ...specs.filter((s) => s.outcome === "Complete").map(finishOf),
          ]);
          const failure = max([prev.lastFailedTime, ...specs.filter((s) => s.outcome === "Failed").map(finishOf)]);
          if (sched) want.lastScheduleTime = sched;
          if (success) want.lastSuccessfulTime = success;
          if (failure) want.lastFailedTime = failure;
          assert.deepEqual(got, want);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("never moves a field backward, however many failed Jobs finish out of order", () => {
    fc.assert(
      fc.property(
        prevStatus,
        fc.array(
          jobSpec.map((s) => ({ ...s, outcome: "Failed" as const })),
          { minLength: 2, maxLength: 10 },
        ),
        (prev, specs) => {
          // Status written pass by pass, one more Job listed (in the generated, unsorted order) each time.
          let status: NewestTimes = prev;
          const jobs = specs.map(job);
          for (let n = 1; n <= jobs.length; n++) {
            const next = newestTimes(status, jobs.slice(0, n));
            for (const k of ["lastScheduleTime", "lastSuccessfulTime", "lastFailedTime"] as const) {
              if (status[k]) assert.ok(next[k] && next[k] >= status[k]!, `${k} moved backward`);
            }
            status = next;
          }
          assert.deepEqual(status.lastFailedTime, max([prev.lastFailedTime, ...specs.map(finishOf)]));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("an active Job sets only lastScheduleTime; no Jobs and no status give an empty result", () => {
    const slot = new Date(T0 + 60_000);
    assert.deepEqual(newestTimes({}, [job({ outcome: "active", slot, tookS: 5, viaCompletionTime: true }, 0)]), {
      lastScheduleTime: slot,
    });
    assert.deepEqual(newestTimes({}, []), {});
  });
});
