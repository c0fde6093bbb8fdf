// JSON merge patches (RFC 7386): the smallest patch that turns one JSON object into another, so a write can
// carry only what changed instead of the whole object, and applying one (what the apiserver does with it,
// for the fake client). Arrays are replaced whole and a key set to null is removed: RFC 7386's rules.

type JsonObject = Record<string, unknown>;

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => sameJson(a[k], b[k]));
  }
  return false;
}

/**
 * The merge patch from `from` to `to`, or undefined when they are the same. A key absent (or undefined) in
 * `to` is removed with null; a null value in `to` cannot be written by a merge patch (null means remove), so
 * callers keep nulls out of what they write.
 */
export function createMergePatch(from: JsonObject, to: JsonObject): JsonObject | undefined {
  const patch: JsonObject = {};
  for (const [k, v] of Object.entries(to)) {
    if (v === undefined) continue;
    const old = from[k];
    if (sameJson(old, v)) continue;
    if (isObject(old) && isObject(v)) {
      const sub = createMergePatch(old, v);
      if (sub) patch[k] = sub;
    } else {
      patch[k] = structuredClone(v);
    }
  }
  for (const [k, v] of Object.entries(from)) if (v !== undefined && to[k] === undefined) patch[k] = null;
  return Object.keys(patch).length ? patch : undefined;
}

/** `target` with `patch` applied (RFC 7386 MergePatch); neither argument is modified. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const out: JsonObject = isObject(target) ? structuredClone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}
