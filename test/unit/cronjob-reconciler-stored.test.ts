// The reconciler reading stored values the CRD schema would refuse (only possible with the schema bypassed,
// which the in-memory fake allows): never a hot loop, never a crash.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ReconcileHarness } from "../integration/cronjob/harness.ts";

const HOUR = 3600_000;

describe("the reconciler with stored values outside the schema", () => {
  for (const maxCatchUpRuns of [0, -3, 2.5, 1e9]) {
    it(`RunAll with maxCatchUpRuns ${maxCatchUpRuns} catches up with a sane cap and waits for the next slot`, async () => {
      const h = await ReconcileHarness.fake("stored", new Date().toISOString());
      const created = await h.createCronJob("cj", { missedRunPolicy: "RunAll", maxCatchUpRuns });
      const h1 = Math.floor(new Date(created.metadata.creationTimestamp!).getTime() / HOUR) * HOUR + HOUR;
      h.clock.set(new Date(h1 + 2 * HOUR + 60_000));
      const r = await h.reconcile("cj");
      assert.equal((await h.jobs("cj")).length, 3, "the three missed slots ran");
      assert.equal(r.requeueAfterMs, h1 + 3 * HOUR - h.clock.now().getTime() + 10, "then the next slot: no hot loop");
    });
  }
});
