// The inputs' list (controllers/inputs.ts): what a CronJob reads of other objects, an entry each, and the parts that
// loop over it without naming any (the reconciler, Degraded, the webhook's checks, cmd/run.ts).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { ConcurrencyGroupResource, CronJobResource, ExclusionCalendarResource } from "../../api/v1/index.ts";
import { degradedCondition } from "../../controllers/conditions.ts";
import { setupCache } from "../../controllers/cronjob_controller.ts";
import { admissionChecks, admissionKinds, inputReaders, inputWatches, readInputs } from "../../controllers/inputs.ts";
import { FakeClient } from "../../runtime/fake/client.ts";
import { harnessCronJob, reconcilerHarness } from "../reconciler-harness.ts";

const NOW = new Date("2026-11-26T10:00:30Z");

function readersOver() {
  const client = new FakeClient({ now: () => NOW });
  setupCache(client);
  return { client, readers: inputReaders(client.cache) };
}

const named = {
  schedule: "* * * * *",
  concurrencyGroup: "g",
  exclusions: { calendars: ["freeze"] },
  after: [{ cronJob: "extract" }],
};

describe("the inputs' list", () => {
  it("reads every input of a CronJob: the values by name, the problems in the list's order", async () => {
    const { client, readers } = readersOver();
    const cj = harnessCronJob("report", named);
    await client.seed(CronJobResource, cj);
    const read = readInputs(readers, cj as never);
    assert.deepEqual(
      read.problems.map((p) => p.reason),
      ["ConcurrencyGroupNotFound", "CalendarNotFound", "UpstreamNotFound"],
    );
    assert.equal(read.values.group, "g");
    assert.equal(read.values.exclusions.exclusions.kind, "unknown");
    assert.deepEqual(
      read.values.upstreams.upstreams.map((u) => [u.cronJob, u.found]),
      [["extract", false]],
    );
    // Degraded says the first input's problem, in the list's order, with its reason code.
    const degraded = degradedCondition({ inputs: read.problems }, []);
    assert.equal(degraded.reason, "ConcurrencyGroupNotFound");
    assert.match(degraded.message, /spec\.concurrencyGroup names g/);
  });

  it("says nothing once what the CronJob names exists", async () => {
    const { client, readers } = readersOver();
    await client.seed(ConcurrencyGroupResource, {
      apiVersion: "batch.tutorial.kubebuilder.io/v1",
      kind: "ConcurrencyGroup",
      metadata: { name: "g", namespace: "ns" },
      spec: { limit: 1 },
    } as never);
    await client.seed(ExclusionCalendarResource, {
      apiVersion: "batch.tutorial.kubebuilder.io/v1",
      kind: "ExclusionCalendar",
      metadata: { name: "freeze", namespace: "ns" },
      spec: { windows: [{ name: "w", start: "2026-12-24", end: "2026-12-27" }] },
    } as never);
    await client.seed(CronJobResource, harnessCronJob("extract", { schedule: "0 * * * *" }));
    const cj = harnessCronJob("report", named);
    const read = readInputs(readers, cj as never);
    assert.deepEqual(read.problems, []);
    assert.equal(read.values.exclusions.exclusions.kind, "ok");
    assert.deepEqual(
      read.values.upstreams.upstreams.map((u) => [u.cronJob, u.found]),
      [["extract", true]],
    );
  });

  it("wakes the CronJobs reading an input: a group's Job ending, a group, a calendar, an upstream and its Jobs", () => {
    const { readers } = readersOver();
    const kinds = inputWatches(readers, () => NOW.getTime()).map((w) => w.kind.kind);
    assert.deepEqual(kinds, ["Job", "ConcurrencyGroup", "ExclusionCalendar", "Job", "CronJob"]);
    // The webhooks-only server's cache watches what the checks read, and nothing else.
    assert.deepEqual(
      admissionKinds().map((k) => k.kind),
      ["ExclusionCalendar"],
    );
  });

  it("checks at admission over the same cache: a missing calendar warned, a cycle refused, an uncovered namespace unknown", async () => {
    const { client, readers } = readersOver();
    await client.seed(CronJobResource, harnessCronJob("extract", { after: [{ cronJob: "report" }] }));
    const spec = { exclusions: { calendars: ["freeze"] }, after: [{ cronJob: "extract" }] };
    const run = (covers: boolean) =>
      admissionChecks(readers, () => covers).map((check) =>
        check({ name: "report", namespace: "ns", spec, schedules: undefined, now: NOW, exclusionsValid: true }),
      );
    const covered = run(true);
    assert.deepEqual(
      covered.flatMap((c) => c.warnings ?? []),
      [
        "spec.exclusions.calendars names freeze, which is not an ExclusionCalendar of namespace ns: slots are held until it exists",
      ],
    );
    assert.deepEqual(
      covered.flatMap((c) => (c.errors ?? []).map((e) => e.field)),
      ["spec.after"],
    );
    // A shard another replica holds: nothing is known of it here, so nothing is said.
    assert.deepEqual(run(false), [{ warnings: [] }, {}]);
  });

  it("a deleted CronJob's group place is forgotten through the list (the reconciler names no input)", async () => {
    const h = await reconcilerHarness(NOW);
    await h.seed(harnessCronJob("report", { schedule: "* * * * *", concurrencyGroup: "g" }));
    await h.reconcile("report");
    await h.reconcile("report", new Date("2026-11-26T10:01:00.100Z"));
    assert.deepEqual(
      h
        .reconciler()
        .inputs.group.waitersOf("ns", "g", NOW.getTime())
        .map((w) => w.member),
      ["report"],
      "its run waits for the group",
    );
    await h.client.delete(CronJobResource, "ns", "report");
    await h.reconcile("report");
    assert.deepEqual(h.reconciler().inputs.group.waitersOf("ns", "g", NOW.getTime()), []);
  });

  it("the reconciler, Degraded, the webhook and cmd/run.ts name no input", () => {
    const files = [
      "controllers/cronjob_controller.ts",
      "controllers/conditions.ts",
      "webhooks/cronjob_webhook.ts",
      "cmd/run.ts",
    ];
    for (const f of files) {
      const text = readFileSync(new URL(`../../${f}`, import.meta.url), "utf8");
      const code = text.replace(/\/\/.*$/gm, "").replace(/\/\*[\s\S]*?\*\//g, "");
      for (const m of ["./groups.ts", "./calendars.ts", "./after.ts", "controllers/groups", "controllers/calendars"])
        assert.ok(!code.includes(m), `${f} imports ${m}`);
      for (const name of ["GroupPlaces", "CalendarReader", "UpstreamReader", "calendarWarnings", "afterCycle"])
        assert.ok(!new RegExp(`\\b${name}\\b`).test(code), `${f} names ${name}`);
    }
  });
});
