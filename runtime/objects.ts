// Generic helpers over plain JSON objects, shared by the cache, the fake client and the reconciler.
import { createHash } from "node:crypto";

/** Whether `v` is a plain object record (a JSON object): not null, not an array. */
export function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

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

/**
 * Whether two JSON values are equal as JSON: `canonical(a) === canonical(b)` without writing either (a member
 * that is undefined counts as absent, a Date as its ISO string). The reconciler asks it of a status on every pass;
 * writing both as canonical JSON cost ~35 µs each for a status with a full record.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  // NaN and the infinities are written as null, as JSON.stringify does.
  [a, b] = [asWritten(a), asWritten(b)];
  if (a === b) return true;
  if (a instanceof Date || b instanceof Date) return canonical(a) === canonical(b);
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bs = b as unknown[];
    if (a.length !== bs.length) return false;
    for (let i = 0; i < a.length; i++) {
      // In an array, undefined (and a function) is written as null.
      const [x, y] = [asArrayItem(a[i]), asArrayItem(bs[i])];
      if (!jsonEqual(x, y)) return false;
    }
    return true;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  let n = 0;
  for (const k of Object.keys(ao)) {
    if (!present(ao[k])) continue;
    n++;
    if (!Object.hasOwn(bo, k) || !jsonEqual(ao[k], bo[k])) return false;
  }
  for (const k of Object.keys(bo)) if (present(bo[k])) n--;
  return n === 0;
}

const asWritten = (v: unknown): unknown => (typeof v === "number" && !Number.isFinite(v) ? null : v);
const present = (v: unknown): boolean => v !== undefined && typeof v !== "function" && typeof v !== "symbol";
const asArrayItem = (v: unknown): unknown => (present(v) ? v : null);

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

/** Whether `v` is a value an API server may leave out of what it returns (Go's omitempty zero values). */
function isEmptyValue(v: unknown): boolean {
  if (v === null || v === undefined || v === "" || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.every(isEmptyValue);
  if (typeof v === "object") return Object.values(v as object).every(isEmptyValue);
  return false;
}

/** The paths of the values `v` sets (itself when it is no object). */
function setFields(v: unknown, path: string): string[] {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return [path];
  return Object.entries(v as Record<string, unknown>).flatMap(([k, x]) =>
    isEmptyValue(x) ? [] : setFields(x, childPath(path, k)),
  );
}

function childPath(path: string, key: string): string {
  // field.Path's form: a map key that is no identifier in brackets, unquoted.
  return /^[A-Za-z_$][\w$-]*$/.test(key) ? `${path}.${key}` : `${path}[${key}]`;
}

/**
 * The paths of fields that `sent` sets and the API server's answer (`stored`) does not have: fields the
 * server's schema lacks (an older Kubernetes, a feature gate that is off), which it drops with at most a
 * warning. Values the server normalises (a quantity, a default) still count as present; zero values are
 * not compared, since Go's omitempty leaves them out of any answer. A dropped object is named by the
 * values set in it: a server that drops a gated field also drops its parent once it is empty (1.33 drops
 * `lifecycle` with `lifecycle.stopSignal`), and the parent is a field that server has.
 */
export function droppedFields(sent: unknown, stored: unknown, path: string): string[] {
  if (isEmptyValue(sent)) return [];
  if (stored === undefined || stored === null) return setFields(sent, path);
  if (Array.isArray(sent)) {
    // An element-wise comparison only means something when the server kept every element.
    if (!Array.isArray(stored) || stored.length !== sent.length) return [];
    return sent.flatMap((v, i) => droppedFields(v, stored[i], `${path}[${i}]`));
  }
  if (typeof sent !== "object" || typeof stored !== "object" || Array.isArray(stored)) return [];
  const got = stored as Record<string, unknown>;
  return Object.entries(sent as Record<string, unknown>).flatMap(([k, v]) =>
    droppedFields(v, got[k], childPath(path, k)),
  );
}
