import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { applyMergePatch, createMergePatch } from "../../runtime/mergepatch.ts";

describe("createMergePatch", () => {
  it("carries only what changed, removes what went with null, replaces arrays whole", () => {
    const from = {
      lastScheduleTime: "2026-11-23T10:00:00Z",
      active: [{ name: "a" }, { name: "b" }],
      stopped: { time: "t", failures: 3, generation: 2 },
      activeCount: 2,
      keep: { x: 1, y: [1, 2] },
    };
    const to = {
      lastScheduleTime: "2026-11-23T10:01:00Z",
      active: [{ name: "b" }],
      activeCount: 1,
      keep: { x: 1, y: [1, 2] },
    };
    assert.deepEqual(createMergePatch(from, to), {
      lastScheduleTime: "2026-11-23T10:01:00Z",
      active: [{ name: "b" }],
      activeCount: 1,
      stopped: null,
    });
  });

  it("descends into objects: a changed nested field travels alone", () => {
    assert.deepEqual(
      createMergePatch(
        { backfill: { id: "x", created: 1, total: 5 } },
        { backfill: { id: "x", created: 2, total: 5 } },
      ),
      { backfill: { created: 2 } },
    );
  });

  it("is undefined when nothing changed (key order and undefined values do not count)", () => {
    assert.equal(createMergePatch({ a: 1, b: { c: [1] }, u: undefined }, { b: { c: [1] }, a: 1 }), undefined);
  });

  it("applied to `from` gives `to`, for any JSON objects without nulls", () => {
    const leaf = fc.oneof(fc.integer(), fc.string(), fc.boolean());
    const { tree } = fc.letrec((tie) => ({
      tree: fc.oneof(
        { depthSize: "small" },
        leaf,
        fc.array(tie("tree"), { maxLength: 3 }),
        fc.dictionary(fc.constantFrom("a", "b", "c", "d"), tie("tree"), { maxKeys: 4 }),
      ),
    }));
    // Through JSON: plain objects, as they come off the wire.
    const obj = fc
      .dictionary(fc.constantFrom("a", "b", "c", "d", "e"), tree, { maxKeys: 5 })
      .map((o) => JSON.parse(JSON.stringify(o)) as Record<string, unknown>);
    fc.assert(
      fc.property(obj, obj, (from, to) => {
        const patch = createMergePatch(from, to);
        assert.deepEqual(patch === undefined ? from : applyMergePatch(from, patch), to);
      }),
      { numRuns: 500 },
    );
  });
});

describe("applyMergePatch", () => {
  it("follows RFC 7386's examples", () => {
    // RFC 7386 section 3's example.
    const target = { title: "Goodbye!", author: { givenName: "John", familyName: "Doe" }, tags: ["example"] };
    const patch = { title: "Hello!", author: { familyName: null }, tags: ["x"], phone: "+01" };
    assert.deepEqual(applyMergePatch(target, patch), {
      title: "Hello!",
      author: { givenName: "John" },
      tags: ["x"],
      phone: "+01",
    });
    assert.deepEqual(target.author, { givenName: "John", familyName: "Doe" }, "the target is not modified");
    assert.deepEqual(applyMergePatch(undefined, { a: { b: 1 } }), { a: { b: 1 } });
    assert.deepEqual(applyMergePatch({ a: 1 }, ["x"]), ["x"]);
  });
});
