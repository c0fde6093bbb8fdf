// RFC 6902 JSON Patch: the operation type, RFC 6901 pointer escaping, and statusPatch, the patch a status write
// sends instead of the whole object (controllers/statuswriter.ts): only the status fields that changed, against
// the object as read, conditional on the resourceVersion read. Pure: no I/O, nothing kept between calls.
import { canonical, isObj } from "./objects.ts";

export interface JSONPatchOperation {
  op: "add" | "remove" | "replace" | "move" | "copy" | "test";
  /** A JSON Pointer; escape keys with escapeJSONPointer (label keys contain "/"). */
  path: string;
  value?: unknown;
  from?: string;
}

/** One JSON Pointer reference token (RFC 6901): "app.kubernetes.io/name" → "app.kubernetes.io~1name". */
export function escapeJSONPointer(token: string): string {
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}

interface StatusPatchOptions {
  /**
   * Top-level status fields holding a list kept newest first: entries are put in front, changed in place, and the
   * oldest dropped from the end. A change to one is sent as those edits (remove the dropped tail, from the highest
   * index down; replace the entries changed in place; add the new ones at the front) when they are smaller than
   * the whole list, else as a replace of the whole list.
   */
  newestFirstLists?: readonly string[];
}

/**
 * The JSON patch that turns the status `old` (undefined: the object has none) into `next`, for the object as read
 * at `resourceVersion`. Its first operation sets metadata.resourceVersion to that version: kube-apiserver takes a
 * patched resourceVersion as a precondition, so the patch fails with 409 Conflict, and is not retried by the
 * server, when the object has changed since (an empty `resourceVersion`: no such operation, the patch applies to
 * whatever is stored). Then, per top-level field of status that changed, the whole value: `add` where `old` lacks
 * it, `replace` where it has it, `remove` where `next` lacks it; a status `old` lacks entirely is one `add /status`.
 * Fields are compared as JSON (key order aside; an undefined value is an absent field). Applied to an object whose
 * status is `old`, the patch gives exactly `next` (as JSON).
 */
export function statusPatch(
  old: unknown,
  next: Readonly<Record<string, unknown>>,
  resourceVersion: string | undefined,
  o: StatusPatchOptions = {},
): JSONPatchOperation[] {
  const ops: JSONPatchOperation[] = [];
  if (resourceVersion) ops.push({ op: "replace", path: "/metadata/resourceVersion", value: resourceVersion });
  if (old === undefined) {
    ops.push({ op: "add", path: "/status", value: next });
    return ops;
  }
  if (!isObj(old)) {
    ops.push({ op: "replace", path: "/status", value: next });
    return ops;
  }
  const lists = new Set(o.newestFirstLists ?? []);
  for (const [key, was] of Object.entries(old)) {
    if (was !== undefined && next[key] === undefined) ops.push({ op: "remove", path: fieldPath(key) });
  }
  for (const [key, value] of Object.entries(next)) {
    if (value === undefined) continue;
    const was = old[key];
    const path = fieldPath(key);
    if (was === undefined) ops.push({ op: "add", path, value });
    else if (canonical(was) === canonical(value)) continue;
    else if (lists.has(key) && Array.isArray(was) && Array.isArray(value))
      ops.push(...newestFirstOps(path, was, value));
    else ops.push({ op: "replace", path, value });
  }
  return ops;
}

function fieldPath(key: string): string {
  return `/status/${escapeJSONPointer(key)}`;
}

/**
 * The smallest edits (in bytes of JSON) that turn `was` into `now` when `now` is `k` new entries followed by the
 * first `m` entries of `was`, some changed in place: for each possible `k`, the removes of the dropped tail, the
 * replaces of changed entries and the adds at the front; the whole list instead when that is no larger.
 */
function newestFirstOps(path: string, was: readonly unknown[], now: readonly unknown[]): JSONPatchOperation[] {
  // As JSON.stringify writes an array: an undefined entry is null.
  const before = was.map((v) => canonical(v) ?? "null");
  const after = now.map((v) => canonical(v) ?? "null");
  const bytes = (s: string) => Buffer.byteLength(s);
  const afterBytes = after.map(bytes);
  // An operation's bytes besides its value: {"op":"remove","path":"…"} and a separating comma.
  const overhead = (op: JSONPatchOperation["op"], at: string) => bytes(JSON.stringify({ op, path: at })) + 1;
  const valueOverhead = bytes(',"value":');
  const whole = overhead("replace", path) + valueOverhead + afterBytes.reduce((n, b) => n + b + 1, 1);
  let best: { k: number; size: number } | undefined;
  for (let k = 0; k <= now.length; k++) {
    const m = now.length - k;
    if (m > was.length) continue;
    let size = 0;
    for (let i = m; i < was.length; i++) size += overhead("remove", `${path}/${i}`);
    for (let i = 0; i < m; i++) {
      if (before[i] !== after[k + i]) size += overhead("replace", `${path}/${i}`) + valueOverhead + afterBytes[k + i]!;
    }
    for (let j = 0; j < k; j++) size += overhead("add", `${path}/${j}`) + valueOverhead + afterBytes[j]!;
    if (!best || size < best.size) best = { k, size };
  }
  if (!best || best.size >= whole) return [{ op: "replace", path, value: now }];
  const { k } = best;
  const m = now.length - k;
  const ops: JSONPatchOperation[] = [];
  // Highest index first: each remove leaves the indexes below it where they were.
  for (let i = was.length - 1; i >= m; i--) ops.push({ op: "remove", path: `${path}/${i}` });
  // Before the adds, so an entry is still at its old index.
  for (let i = 0; i < m; i++)
    if (before[i] !== after[k + i]) ops.push({ op: "replace", path: `${path}/${i}`, value: now[k + i] });
  for (let j = 0; j < k; j++) ops.push({ op: "add", path: `${path}/${j}`, value: now[j] });
  return ops;
}
