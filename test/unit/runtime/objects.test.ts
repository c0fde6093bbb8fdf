import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { canonical, jsonEqual } from "../../../runtime/objects.ts";

/** The same value with every object's keys in reverse order. */
function reversedKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reversedKeys);
  if (v === null || typeof v !== "object" || v instanceof Date) return v;
  return Object.fromEntries(
    Object.entries(v)
      .reverse()
      .map(([k, x]) => [k, reversedKeys(x)]),
  );
}

const leaf = fc.oneof(
  fc.string({ maxLength: 4 }),
  fc.constantFrom("", "a", "b"),
  fc.double(),
  fc.integer({ min: -2, max: 2 }),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.date({ noInvalidDate: true }),
);
const value = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: "small" }, leaf, tie("arr"), tie("obj")),
  arr: fc.array(tie("v"), { maxLength: 4 }),
  obj: fc.dictionary(fc.constantFrom("a", "b", "c", "10", "2", ""), tie("v"), { maxKeys: 4 }),
}));

describe("jsonEqual", () => {
  it("answers as comparing canonical JSON does, for any two JSON-like values", () => {
    fc.assert(
      fc.property(value.v, value.v, (a, b) => {
        assert.equal(jsonEqual(a, b), canonical(a) === canonical(b), `${canonical(a)} vs ${canonical(b)}`);
        assert.equal(jsonEqual(a, reversedKeys(a)), true);
        assert.equal(jsonEqual(a, structuredClone(a)), true);
      }),
      { numRuns: 5000 },
    );
  });

  it("an undefined member is absent; an undefined array item is null; order of keys does not count", () => {
    assert.equal(jsonEqual({ a: 1, b: undefined }, { a: 1 }), true);
    assert.equal(jsonEqual([undefined], [null]), true);
    assert.equal(jsonEqual({ a: 1, b: 2 }, { b: 2, a: 1 }), true);
    assert.equal(jsonEqual({ a: 1 }, { a: 1, b: 2 }), false);
    assert.equal(jsonEqual({ a: [1, 2] }, { a: [2, 1] }), false);
    assert.equal(jsonEqual(new Date(0), "1970-01-01T00:00:00.000Z"), true);
    // NaN and the infinities are written as null (a counterexample the property found: [-Infinity, null]).
    assert.equal(jsonEqual(Number.NEGATIVE_INFINITY, null), true);
    assert.equal(jsonEqual({ a: NaN }, { a: null }), true);
    assert.equal(jsonEqual([Infinity], [null]), true);
    assert.equal(jsonEqual(Infinity, 0), false);
  });
});
