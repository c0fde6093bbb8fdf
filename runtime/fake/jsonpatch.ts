// An RFC 6902 JSON Patch applier for the fake client (its patchStatus) and for tests: every operation (add,
// remove, replace, move, copy, test), RFC 6901 pointers, as strict as kube-apiserver's (evanphx/json-patch): a
// replace or remove of a member that does not exist, an index past the end, a failed test, a path through
// something that is not there all fail the whole patch, and the document is left as it was.
import type { JSONPatchOperation } from "../jsonpatch.ts";
import { canonical, isObj } from "../objects.ts";

/** Why a patch could not be applied (kube-apiserver answers 422 with this message). */
export class JSONPatchError extends Error {}

type Container = Record<string, unknown> | unknown[];

/** `doc` with `ops` applied, in order, to a copy (the argument is not changed). */
export function applyJSONPatch(doc: unknown, ops: readonly JSONPatchOperation[]): unknown {
  if (!Array.isArray(ops)) throw new JSONPatchError("the patch is not a JSON array of operations");
  let root = structuredClone(doc);
  for (const [n, op] of (ops as readonly unknown[]).entries()) {
    if (!isOperation(op)) throw new JSONPatchError(`operation ${n}: not an object with a path`);
    root = applyOne(root, op);
  }
  return root;
}

function isOperation(op: unknown): op is JSONPatchOperation {
  return isObj(op) && typeof op.path === "string";
}

function applyOne(root: unknown, op: JSONPatchOperation): unknown {
  switch (op.op) {
    case "add":
      return add(root, op.path, valueOf(op));
    case "remove":
      return remove(root, op.path).root;
    case "replace": {
      get(root, op.path); // must exist
      return add(remove(root, op.path).root, op.path, valueOf(op));
    }
    case "move": {
      const from = fromOf(op);
      if (op.path !== from && op.path.startsWith(`${from}/`))
        throw new JSONPatchError(`move: ${from} cannot be moved into its own child ${op.path}`);
      const taken = remove(root, from);
      return add(taken.root, op.path, taken.value);
    }
    case "copy":
      return add(root, op.path, structuredClone(get(root, fromOf(op))));
    case "test":
      if (canonical(get(root, op.path)) !== canonical(valueOf(op)))
        throw new JSONPatchError(`test: the value at ${op.path} is not the one given`);
      return root;
    default:
      throw new JSONPatchError(`unknown operation ${JSON.stringify((op as { op?: unknown }).op)}`);
  }
}

function valueOf(op: JSONPatchOperation): unknown {
  if (!("value" in op) || op.value === undefined) throw new JSONPatchError(`${op.op} ${op.path}: no value`);
  return structuredClone(op.value);
}

function fromOf(op: JSONPatchOperation): string {
  if (typeof op.from !== "string") throw new JSONPatchError(`${op.op} ${op.path}: no from`);
  return op.from;
}

/** The reference tokens of a pointer ("" is the whole document). */
function tokens(pointer: string): string[] {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) throw new JSONPatchError(`${pointer}: a JSON pointer starts with "/"`);
  return pointer
    .slice(1)
    .split("/")
    .map((t) => t.replaceAll("~1", "/").replaceAll("~0", "~"));
}

/** The container the pointer's last token is in, and that token. */
function parentOf(root: unknown, pointer: string): { parent: Container; key: string } {
  const keys = tokens(pointer);
  const key = keys.pop()!;
  let at: unknown = root;
  for (const k of keys) at = child(at, k, pointer);
  if (!isObj(at) && !Array.isArray(at)) throw new JSONPatchError(`${pointer}: its parent is not an object or array`);
  return { parent: at, key };
}

function child(at: unknown, key: string, pointer: string): unknown {
  if (Array.isArray(at)) return at[index(at, key, pointer, false)];
  if (isObj(at) && Object.hasOwn(at, key)) return at[key];
  throw new JSONPatchError(`${pointer}: no such path`);
}

/** An array index token: digits without a leading zero, below the length (up to it where `end` may be written). */
function index(arr: readonly unknown[], key: string, pointer: string, orEnd: boolean): number {
  if (!/^(0|[1-9][0-9]*)$/.test(key)) throw new JSONPatchError(`${pointer}: ${key} is not an array index`);
  const i = Number(key);
  if (i > arr.length || (i === arr.length && !orEnd)) throw new JSONPatchError(`${pointer}: index ${i} out of range`);
  return i;
}

function get(root: unknown, pointer: string): unknown {
  let at = root;
  for (const k of tokens(pointer)) at = child(at, k, pointer);
  return at;
}

function add(root: unknown, pointer: string, value: unknown): unknown {
  if (pointer === "") return value;
  const { parent, key } = parentOf(root, pointer);
  if (Array.isArray(parent)) parent.splice(key === "-" ? parent.length : index(parent, key, pointer, true), 0, value);
  else parent[key] = value;
  return root;
}

function remove(root: unknown, pointer: string): { root: unknown; value: unknown } {
  if (pointer === "") return { root: undefined, value: root };
  const { parent, key } = parentOf(root, pointer);
  if (Array.isArray(parent)) {
    const [value] = parent.splice(index(parent, key, pointer, false), 1);
    return { root, value };
  }
  if (!Object.hasOwn(parent, key)) throw new JSONPatchError(`${pointer}: no such member to remove`);
  const value = parent[key];
  delete parent[key];
  return { root, value };
}
