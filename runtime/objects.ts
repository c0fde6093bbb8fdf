// Generic helpers over plain JSON objects, shared by the cache, the fake client and the reconciler.
import { createHash } from "node:crypto";

/** JSON with object keys sorted, so two equal objects give the same string whatever their key order. */
export function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, val: unknown) =>
    val && typeof val === "object" && !Array.isArray(val)
      ? Object.fromEntries(
          Object.entries(val as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)),
        )
      : val,
  );
}

/** The SHA-256 of a string, base64: a fingerprint kept instead of the string itself. */
export function digest(s: string): string {
  return createHash("sha256").update(s).digest("base64");
}

/** Freezes an object and everything it holds, so a shared object cannot be changed by one of its readers. */
export function deepFreeze<T>(o: T): T {
  if (o && typeof o === "object" && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

/** A shallow copy without the keys whose value is undefined: an optional field is absent, not undefined. */
export function stripUndefined<T extends object>(o: T): T {
  const out = {} as T;
  for (const [k, v] of Object.entries(o)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}
