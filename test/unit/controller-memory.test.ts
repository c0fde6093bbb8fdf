// The reconciler's memory (controllers/memory.ts): one object, one key, one forget. These tests fail when a
// remembered fact is added that forget() does not clear, or when the reconciler grows a store of its own.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseHashedSchedule } from "../../api/v1/schedule/index.ts";
import { CronJobReconciler } from "../../controllers/cronjob_controller.ts";
import { Commit } from "../../controllers/commit.ts";
import { type CronJobKey, goneJobs, ReconcilerMemory, type Remembered } from "../../controllers/memory.ts";
import { JobRunPath } from "../../controllers/runpath.ts";

const key: CronJobKey = { namespace: "team-a", name: "backup", uid: "uid-1" };

/** Every fact, set: adding a field to Remembered fails to compile here until the test sets it too. */
function everything(): Required<Remembered> {
  return {
    reported: new Map([["forbid", "2026-11-24T10:00:00Z"]]),
    lastWritten: { basedOn: "42", status: "{}" },
    sawCompleted: new Set(["job-uid"]),
    replaced: new Set(["other-uid"]),
    announceDeferred: true,
    fresh: new Map([["job-1", 1]]),
    folded: new Map([["job-2", 2]]),
    reservedAt: 3,
    started: new Set(["job-uid-2"]),
    gone: new Set(["job-uid-3"]),
  };
}

describe("ReconcilerMemory", () => {
  it("forget clears every fact of a CronJob, and its own H schedule, and nothing of the others", () => {
    const m = new ReconcilerMemory();
    Object.assign(m.recall(key), everything());
    const other = { namespace: "team-a", name: "report" };
    Object.assign(m.recall(other), everything());
    const parse = (s: string) => () => parseHashedSchedule(s, key);
    m.parsedSchedule(key, "H * * * *", undefined, parse("H * * * *"));
    m.parsedSchedule(key, "0 * * * *", undefined, parse("0 * * * *"));
    m.parsedSchedule(other, "H * * * *", undefined, parse("H * * * *"));
    assert.equal(m.remembers(key), true);

    m.forget(key);
    assert.equal(m.remembers(key), false);
    assert.deepEqual(m.recall(key), { uid: "uid-1" }, "a fact survived forget");
    assert.equal(m.remembers(other), true);
    assert.deepEqual(m.recall(other), everything());
    // The shared (non-H) entry stays: it is nobody's.
    assert.deepEqual(m.sizes(), { cronJobs: 2, schedules: 2 });
  });

  it("keeps a gone Job's UID while the cache or status.active still has it, and no longer", () => {
    const gone = new Set(["in-cache", "in-status", "forgotten"]);
    const kept = goneJobs(gone, [{ metadata: { uid: "in-cache" } }], [{ uid: "in-status" }]);
    assert.deepEqual([...(kept ?? [])].sort(), ["in-cache", "in-status"]);
    assert.equal(goneJobs(gone, [], []), undefined);
    assert.equal(goneJobs(undefined, [{ metadata: { uid: "x" } }], undefined), undefined);
  });

  it("a CronJob re-created under the same name (another UID) starts with nothing remembered", () => {
    const m = new ReconcilerMemory();
    Object.assign(m.recall(key), everything());
    assert.deepEqual(m.recall({ ...key, uid: "uid-2" }), { uid: "uid-2" });
    // Without a UID (not known yet) the record is the name's.
    Object.assign(m.recall({ ...key, uid: "uid-2" }), { lastWritten: { basedOn: "7", status: "" } });
    assert.equal(m.recall({ namespace: key.namespace, name: key.name }).lastWritten?.basedOn, "7");
  });

  it("an H schedule is parsed per CronJob, any other schedule once per zone", () => {
    const m = new ReconcilerMemory();
    let parses = 0;
    const parse = (k: CronJobKey, s: string, tz?: string) => () => (parses++, parseHashedSchedule(s, k, tz));
    const a = { namespace: "ns", name: "a" };
    const b = { namespace: "ns", name: "b" };
    const ra = m.parsedSchedule(a, "H H * * *", undefined, parse(a, "H H * * *"));
    const rb = m.parsedSchedule(b, "H H * * *", undefined, parse(b, "H H * * *"));
    assert.equal(parses, 2);
    const [wantA, wantB] = [parseHashedSchedule("H H * * *", a), parseHashedSchedule("H H * * *", b)];
    assert.ok(ra.ok && rb.ok && wantA.ok && wantB.ok);
    assert.deepEqual([ra.resolved, rb.resolved], [wantA.resolved, wantB.resolved], "each CronJob's own hash");
    m.parsedSchedule(a, "0 9 * * *", "UTC", parse(a, "0 9 * * *", "UTC"));
    m.parsedSchedule(b, "0 9 * * *", "UTC", parse(b, "0 9 * * *", "UTC"));
    assert.equal(parses, 3, "a plain schedule is shared");
    m.parsedSchedule(b, "0 9 * * *", "Asia/Tokyo", parse(b, "0 9 * * *", "Asia/Tokyo"));
    assert.equal(parses, 4, "another zone is another entry");
  });

  it("caches step 1's parse per cached object", () => {
    const m = new ReconcilerMemory<{ n: number }>();
    const raw = {};
    let n = 0;
    const first = m.loaded(raw, () => ({ n: ++n }));
    assert.equal(
      m.loaded(raw, () => ({ n: ++n })),
      first,
    );
    assert.notEqual(
      m.loaded({}, () => ({ n: ++n })),
      first,
    );
  });
});

describe("CronJobReconciler keeps nothing outside its memory", () => {
  it("has no Map, Set or WeakMap of its own, nor do its run path and commit: every remembered fact goes through ReconcilerMemory", () => {
    const r = new CronJobReconciler({
      client: {} as never,
      cache: {} as never,
      recorder: {} as never,
    });
    const isStore = (v: unknown) =>
      v instanceof Map || v instanceof Set || v instanceof WeakMap || v instanceof WeakSet;
    // The parts reconcile() hands a step to (runpath.ts, commit.ts) are its own too: their stores would escape forget().
    const parts = Object.entries(r).filter(([, v]) => v instanceof JobRunPath || v instanceof Commit);
    assert.equal(parts.length, 2, "the reconciler's run path and commit");
    const stores = [
      ...Object.entries(r).filter(([, v]) => isStore(v)),
      ...parts.flatMap(([part, o]) => Object.entries(o as object).map(([k, v]) => [`${part}.${k}`, v] as const)),
    ].filter(([, v]) => isStore(v));
    assert.deepEqual(
      stores.map(([k]) => k),
      [],
      "a store outside ReconcilerMemory is not cleared by forget()",
    );
    assert.ok(Object.values(r).some((v) => v instanceof ReconcilerMemory));
    const memory = Object.values(r).find((v) => v instanceof ReconcilerMemory);
    assert.equal(
      Object.entries(parts.find(([k]) => k === "commit")![1] as object).find(([k]) => k === "memory")?.[1],
      memory,
      "the commit remembers in the reconciler's memory",
    );
  });
});
