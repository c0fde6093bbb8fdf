import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { MAX_CONDITION_MESSAGE, setConditions } from "../../controllers/conditions.ts";
import { bounded, emitEvent, isRoutine, MAX_EVENT_MESSAGE } from "../../controllers/events.ts";
import { observeChildren } from "../../controllers/observe.ts";
import { TRIGGERS } from "../../controllers/triggers.ts";
import { EVENT_REASONS, type Job } from "../../api/v1/index.ts";
import { parseSchedule, validateTimeZone } from "../../api/v1/schedule/index.ts";
import { FakeRecorder } from "../../runtime/events/fake.ts";

// The Events list lives in docs/using-cronjobs.md (it was the README's).
const eventsDoc = readFileSync(join(import.meta.dirname, "..", "..", "docs", "using-cronjobs.md"), "utf8");

describe("controller Events", () => {
  it("the docs list exactly the reasons the controller emits", () => {
    const line = eventsDoc.split("\n\n").find((p) => p.startsWith("Events: "));
    assert.ok(line, "docs/using-cronjobs.md has an `Events: ...` paragraph");
    const listed = [...line.matchAll(/`(\w+)`/g)].map((m) => m[1]).sort();
    assert.deepEqual(listed, Object.keys(EVENT_REASONS).sort());
  });

  it("emits with the declared type and a bounded message", () => {
    const r = new FakeRecorder();
    emitEvent(r, { metadata: { name: "x" } }, "FailedCreate", "e".repeat(5000));
    emitEvent(r, { metadata: { name: "x" } }, "SuccessfulCreate", "Created job x-1");
    const [long, short] = r.take();
    assert.ok(long!.startsWith("Warning FailedCreate eee"));
    assert.equal(long!.length, "Warning FailedCreate ".length + MAX_EVENT_MESSAGE);
    assert.match(long!, /… \(\d+ more characters\)$/);
    assert.equal(short, "Normal SuccessfulCreate Created job x-1");
  });

  it("bounded() keeps short strings and cuts long ones to the limit, saying how much is left out", () => {
    assert.equal(bounded("abc", 10), "abc");
    const cut = bounded("x".repeat(100), 40);
    assert.equal(cut.length, 40);
    assert.match(cut, /\(\d+ more characters\)$/);
  });

  it("schedule and time zone errors quote a huge value bounded", () => {
    const sched = parseSchedule("0 * * * * " + "x".repeat(200_000), undefined);
    assert.equal(sched.ok, false);
    if (!sched.ok) assert.ok(sched.error.message.length < 1200, String(sched.error.message.length));
    const tz = validateTimeZone("Europe/" + "y".repeat(100_000));
    assert.ok(tz && tz.message.length < 1200, String(tz?.message.length));
  });

  it("condition messages are bounded", () => {
    const [c] = setConditions(
      [],
      [{ type: "Degraded", status: "True", reason: "X", message: "m".repeat(100_000) }],
      new Date(0),
      1,
    );
    assert.equal(c!.message.length, MAX_CONDITION_MESSAGE);
  });

  it("marks routine only what reports nothing wrong: a run created, a success, history cleanup", () => {
    const routine = Object.entries(EVENT_REASONS)
      .filter(([, row]) => "routine" in row && row.routine)
      .map(([reason]) => reason)
      .sort();
    assert.deepEqual(routine, ["SawCompletedJob", "SuccessfulCreate", "SuccessfulDelete"]);
    for (const [reason, row] of Object.entries(EVENT_REASONS)) {
      if (row.type === "Warning") assert.ok(!("routine" in row), `${reason}: a Warning is never routine`);
    }
    const r = new FakeRecorder();
    emitEvent(r, { metadata: { name: "x" } }, "SuccessfulCreate", "Created job x-1");
    emitEvent(r, { metadata: { name: "x" } }, "SuccessfulDelete", "Deleted job x-0", false);
    emitEvent(r, { metadata: { name: "x" } }, "FailedCreate", "Error creating job x-2: quota");
    assert.deepEqual(r.routine, ["Normal SuccessfulCreate Created job x-1"]);
    assert.equal(isRoutine({ reason: "SawCompletedJob", message: "m" }), true);
    assert.equal(isRoutine({ reason: "SawCompletedJob", message: "m", routine: false }), false);
  });

  it("a failed Job's SawCompletedJob is not routine; a successful one's is", () => {
    const ended = (name: string, type: "Complete" | "Failed"): Job => ({
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: {
        name,
        namespace: "ns",
        uid: `uid-${name}`,
        annotations: { "batch.tutorial.kubebuilder.io/scheduled-at": "2026-11-24T10:00:00Z" },
        ownerReferences: [
          {
            apiVersion: "batch.tutorial.kubebuilder.io/v1",
            kind: "CronJob",
            name: "cj",
            uid: "cj-uid",
            controller: true,
          },
        ],
      },
      status: {
        ...(type === "Complete" ? { succeeded: 1 } : { failed: 1 }),
        completionTime: "2026-11-24T10:00:30Z",
        conditions: [{ type, status: "True", lastTransitionTime: "2026-11-24T10:00:30Z" }],
      },
    });
    for (const [type, routine] of [
      ["Complete", true],
      ["Failed", false],
    ] as const) {
      const job = ended(`cj-${type.toLowerCase()}`, type);
      const seen = observeChildren({
        triggers: TRIGGERS,
        cronJob: {
          metadata: { name: "cj", namespace: "ns", uid: "cj-uid" },
          status: { active: [{ name: job.metadata!.name, namespace: "ns", uid: job.metadata!.uid }] },
        },
        cached: [job],
        live: new Map(),
        reported: new Set(),
        replaced: new Set(),
      });
      const saw = seen.events.filter((e) => e.reason === "SawCompletedJob");
      assert.equal(saw.length, 1, type);
      assert.equal(isRoutine(saw[0]!), routine, type);
    }
  });
});
