// statusPatch (runtime/jsonpatch.ts), the JSON patch a CronJob's status write sends: applied (RFC 6902, by the fake
// client's applier, runtime/fake/jsonpatch.ts) to the object as read, it gives exactly the new status and leaves the
// rest of the object as it was; its first operation sets the resourceVersion read; a field that did not change is
// not in it; a record edited the way the controller edits it (entries put in front, changed in place, the oldest
// dropped) is sent as those edits, never larger than the whole list. A version that replaced an entry it only
// moved, removed tail entries lowest index first, forgot to escape a key, or sent an unchanged field fails here.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { applyJSONPatch, JSONPatchError } from "../../runtime/fake/jsonpatch.ts";
import { type JSONPatchOperation, statusPatch } from "../../runtime/jsonpatch.ts";
import { canonical } from "../../runtime/objects.ts";

type Obj = Record<string, unknown>;
const LISTS = { newestFirstLists: ["recentRuns"] };
const RV = "4711";

/** The object as read: what is not status must come through a status patch unchanged. */
function objectWith(status: unknown): Obj {
  return {
    apiVersion: "batch.tutorial.kubebuilder.io/v1",
    kind: "CronJob",
    metadata: { name: "cj", namespace: "ns", resourceVersion: RV, managedFields: [{ manager: "kubectl" }] },
    spec: { schedule: "*/5 * * * *" },
    ...(status === undefined ? {} : { status }),
  };
}

const asJSON = (v: unknown): unknown => JSON.parse(JSON.stringify(v));
const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

/** Applies the patch as the server would, checking what must hold of every patch statusPatch makes. */
function applied(old: unknown, next: Obj, ops: JSONPatchOperation[]): Obj {
  assert.deepEqual(ops[0], { op: "replace", path: "/metadata/resourceVersion", value: RV });
  for (const op of ops.slice(1)) assert.ok(op.path.startsWith("/status"), `${op.path}: outside status`);
  const before = objectWith(old);
  const after = applyJSONPatch(before, ops) as Obj;
  assert.deepEqual(after.status, asJSON(next));
  const { status: _a, ...rest } = after;
  const { status: _b, ...was } = before;
  assert.deepEqual(rest, was);
  return after;
}

// Keys a status might have, and some that need escaping in a JSON pointer.
const key = fc.constantFrom("active", "lastScheduleTime", "conditions", "recentRuns", "a/b", "c~d", "~1", "e~0/f");
const leaf = fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.boolean(), fc.constant(null));
const json: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.array(tie("v"), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 3 }), tie("v"), { maxKeys: 3 }),
  ),
})).v;
const status = fc.dictionary(key, json, { maxKeys: 6 });

/** A record entry; `n` makes entries told apart, `outcome` is what a pass adds in place. */
const entry = (n: number, outcome?: string): Obj => ({
  scheduledTime: new Date(Date.UTC(2026, 10, 25, 0, n)).toISOString().replace(".000", ""),
  trigger: "Schedule",
  decision: "Created",
  job: `cj-${n}`,
  ...(outcome ? { outcome } : {}),
});

/**
 * A record as the controller changes one: `added` entries put in front, some of the old changed in place, the oldest
 * dropped beyond `max`; with the edits that make the change (the patch statusPatch should not be larger than).
 */
const recordChange = fc
  .record({
    length: fc.integer({ min: 0, max: 10 }),
    added: fc.integer({ min: 0, max: 4 }),
    edits: fc.uniqueArray(fc.integer({ min: 0, max: 9 }), { maxLength: 3 }),
    max: fc.integer({ min: 1, max: 10 }),
  })
  .map(({ length, added, edits, max }) => {
    const was = Array.from({ length }, (_, i) => entry(100 - i));
    const changed = was.map((e, i) => (edits.includes(i) ? { ...e, outcome: `Edited${i}` } : e));
    const now = [...Array.from({ length: added }, (_, i) => entry(200 - i)), ...changed].slice(0, max);
    const front = Math.min(added, now.length);
    const kept = now.length - front;
    const edits_: JSONPatchOperation[] = [];
    for (let i = length - 1; i >= kept; i--) edits_.push({ op: "remove", path: `/status/recentRuns/${i}` });
    for (let i = 0; i < kept; i++)
      if (edits.includes(i)) edits_.push({ op: "replace", path: `/status/recentRuns/${i}`, value: now[front + i] });
    for (let j = 0; j < front; j++) edits_.push({ op: "add", path: `/status/recentRuns/${j}`, value: now[j] });
    return { was, now, edits: edits_ };
  });

describe("statusPatch: the JSON patch of a status write", () => {
  it("applied to the object as read, gives exactly the new status and changes nothing else", () => {
    fc.assert(
      fc.property(fc.option(status, { nil: undefined }), status, (old, next) => {
        const ops = statusPatch(old, next, RV, LISTS);
        applied(old, next, ops);
      }),
      { numRuns: 2000 },
    );
  });

  it("holds for any two statuses that share fields (each field kept, changed, dropped or new)", () => {
    const pair = fc
      .tuple(status, fc.array(fc.constantFrom("keep", "change", "drop"), { minLength: 8, maxLength: 8 }), status)
      .map(([old, fates, extra]) => {
        const next: Obj = { ...extra };
        Object.keys(old).forEach((k, i) => {
          const fate = fates[i % fates.length];
          if (fate === "keep") next[k] = old[k];
          else if (fate === "drop") delete next[k];
          else next[k] = Array.isArray(old[k]) ? [...(old[k] as unknown[]), "more"] : { was: old[k] };
        });
        return { old, next };
      });
    fc.assert(
      fc.property(pair, ({ old, next }) => {
        const ops = statusPatch(old, next, RV, LISTS);
        applied(old, next, ops);
        // Only what changed is sent.
        for (const [k, v] of Object.entries(next)) {
          if (k in old && canonical(old[k]) === canonical(v)) {
            assert.ok(
              !ops.some((op) => op.path.startsWith(`/status/${k.replaceAll("~", "~0").replaceAll("/", "~1")}`)),
            );
          }
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("sends a record's edits (drop, change in place, put in front) and never more than the whole list", () => {
    fc.assert(
      fc.property(recordChange, fc.boolean(), ({ was, now, edits }, withOther) => {
        const old: Obj = { recentRuns: was, lastScheduleTime: "2026-11-25T00:00:00Z" };
        const next: Obj = {
          ...old,
          recentRuns: now,
          ...(withOther ? { lastScheduleTime: "2026-11-25T01:00:00Z" } : {}),
        };
        const ops = statusPatch(old, next, RV, LISTS);
        applied(old, next, ops);
        const record = ops.filter((op) => op.path.startsWith("/status/recentRuns"));
        if (canonical(was) === canonical(now)) return assert.deepEqual(record, []);
        const whole = { op: "replace", path: "/status/recentRuns", value: now };
        assert.ok(bytes(record) <= bytes([whole]), "never more bytes than a replace of the whole list");
        assert.ok(bytes(record) <= bytes(edits), "never more bytes than the edits that made the change");
        if (bytes(edits) < bytes([whole])) assert.deepEqual(record, edits);
        else assert.deepEqual(record, [whole]);
      }),
      { numRuns: 2000 },
    );
  });

  it("a new run (entry in front of a full record, the oldest dropped): two record operations, not the list", () => {
    const was = Array.from({ length: 10 }, (_, i) => entry(100 - i, "Succeeded"));
    const old = { lastScheduleTime: "2026-11-25T01:35:00Z", recentRuns: was, activeCount: 0 };
    const created = entry(101);
    const next = {
      ...old,
      active: [{ name: "cj-101", namespace: "ns" }],
      activeCount: 1,
      lastScheduleTime: "2026-11-25T01:40:00Z",
      recentRuns: [created, ...was.slice(0, 9)],
    };
    const ops = statusPatch(old, next, RV, LISTS);
    assert.deepEqual(ops, [
      { op: "replace", path: "/metadata/resourceVersion", value: RV },
      { op: "replace", path: "/status/lastScheduleTime", value: "2026-11-25T01:40:00Z" },
      { op: "remove", path: "/status/recentRuns/9" },
      { op: "add", path: "/status/recentRuns/0", value: created },
      { op: "replace", path: "/status/activeCount", value: 1 },
      { op: "add", path: "/status/active", value: [{ name: "cj-101", namespace: "ns" }] },
    ]);
    applied(old, next, ops);
    // The run's end: its entry gets its outcome in place.
    const ended = {
      ...next,
      active: undefined,
      activeCount: 0,
      recentRuns: [{ ...created, outcome: "Succeeded" }, ...was.slice(0, 9)],
    };
    assert.deepEqual(statusPatch(next, ended, RV, LISTS), [
      { op: "replace", path: "/metadata/resourceVersion", value: RV },
      { op: "remove", path: "/status/active" },
      { op: "replace", path: "/status/recentRuns/0", value: { ...created, outcome: "Succeeded" } },
      { op: "replace", path: "/status/activeCount", value: 0 },
    ]);
  });

  it("a status the object lacks entirely is one add; escapes keys; without a resourceVersion no precondition", () => {
    assert.deepEqual(statusPatch(undefined, { a: 1 }, RV), [
      { op: "replace", path: "/metadata/resourceVersion", value: RV },
      { op: "add", path: "/status", value: { a: 1 } },
    ]);
    assert.deepEqual(statusPatch({ "x/y": 1, "m~n": 2 }, { "x/y": 2 }, ""), [
      { op: "remove", path: "/status/m~0n" },
      { op: "replace", path: "/status/x~1y", value: 2 },
    ]);
    // Lists not named as newest first, and conditions: replaced whole.
    const cond = (s: string) => [
      { type: "Available", status: s },
      { type: "Degraded", status: "False" },
    ];
    assert.deepEqual(
      statusPatch({ conditions: cond("True"), recentRuns: [1] }, { conditions: cond("False"), recentRuns: [1] }, RV),
      [
        { op: "replace", path: "/metadata/resourceVersion", value: RV },
        { op: "replace", path: "/status/conditions", value: cond("False") },
      ],
    );
  });
});

describe("applyJSONPatch (the fake client's RFC 6902)", () => {
  it("applies every operation as RFC 6902's examples do", () => {
    const doc = { foo: ["bar", "baz"], q: { a: 1 }, "a/b": 1, "m~n": 8 };
    assert.deepEqual(
      applyJSONPatch(doc, [
        { op: "add", path: "/foo/1", value: "qux" },
        { op: "add", path: "/foo/-", value: "end" },
        { op: "remove", path: "/q/a" },
        { op: "replace", path: "/a~1b", value: 2 },
        { op: "test", path: "/m~0n", value: 8 },
        { op: "move", from: "/foo/0", path: "/first" },
        { op: "copy", from: "/first", path: "/q/copied" },
      ]),
      { foo: ["qux", "baz", "end"], q: { copied: "bar" }, "a/b": 2, "m~n": 8, first: "bar" },
    );
    assert.deepEqual(doc.foo, ["bar", "baz"], "the document given is not changed");
  });

  it("refuses what kube-apiserver's applier refuses, all or nothing", () => {
    const doc = { a: [1], o: {} };
    for (const op of [
      { op: "replace", path: "/missing", value: 1 },
      { op: "remove", path: "/o/missing" },
      { op: "remove", path: "/a/1" },
      { op: "add", path: "/a/2", value: 1 },
      { op: "add", path: "/a/01", value: 1 },
      { op: "add", path: "/x/y", value: 1 },
      { op: "test", path: "/a", value: [2] },
      { op: "add", path: "/a/0" },
      { op: "move", from: "/o", path: "/o/in" },
      { op: "frobnicate", path: "/a" },
    ] as JSONPatchOperation[]) {
      assert.throws(
        () => applyJSONPatch(doc, [{ op: "add", path: "/ok", value: 1 }, op]),
        JSONPatchError,
        JSON.stringify(op),
      );
    }
    assert.deepEqual(doc, { a: [1], o: {} });
  });
});
