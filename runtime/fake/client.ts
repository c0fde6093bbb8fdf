// An in-memory API server for fast unit tests of reconcilers: one store behind both the client seams
// (ObjectReader, ObjectWriter, StatusWriter) and the cache seams (CacheReader, CacheIndexer) of
// runtime/interfaces.ts. It keeps the apiserver semantics reconcilers rely on: resourceVersions and
// Conflict on a stale write, AlreadyExists, NotFound, the status subresource, delete preconditions,
// finalizers, a terminating namespace refusing new content, garbage collection of dependents (or none,
// as envtest, which runs no GC), the Job status transitions a Kubernetes 1.33+ apiserver refuses
// (jobstatus.ts), errors injected per verb, kind and name (runtime/errors.ts's APIError, so isConflict & co.
// work), and injected API warnings. What it does not model, and tests that need it run against envtest:
// schemas and defaulting, admission webhooks, dry-run validation, a namespace that must exist, watches and
// a cache lagging behind writes, restarts.
import { randomUUID } from "node:crypto";
import type { DeleteOptions, ListOptions, ListResult, WriteOptions } from "../client.ts";
import { APIError } from "../errors.ts";
import type { IndexFunc } from "../cache/informer.ts";
import { type LabelSelector, matchesSelector, parseSelector } from "../cache/selector.ts";
import type { CacheIndexer, CacheReader, ObjectReader, ObjectWriter, StatusWriter } from "../interfaces.ts";
import { type KubeObject, objectPath, resourceName, type ResourceKind } from "../kinds.ts";
import { rfc3339 } from "../metatime.ts";
import { canonical, deepFreeze } from "../objects.ts";
import { invalidJob, jobStatusErrors } from "./jobstatus.ts";

type Verb = "get" | "list" | "create" | "update" | "updateStatus" | "delete";

/** Which calls an injected error answers; unset fields match anything. */
interface ErrorMatch {
  verb: Verb;
  kind?: ResourceKind;
  namespace?: string;
  name?: string;
  /** Answer this many matching calls, then stop (default: every one). */
  times?: number;
}

/** Which writes an injected warning comes with (the verbs that take WriteOptions). */
interface WarningMatch extends ErrorMatch {
  verb: "create" | "update" | "updateStatus";
}

interface FakeAction {
  verb: Verb;
  resource: string;
  namespace: string | undefined;
  name: string | undefined;
}

interface FakeClientOptions {
  /** creationTimestamp / deletionTimestamp source (a test's fake clock); default the real time. */
  now?: () => Date;
  /**
   * What deleting an owner does to its dependents: "none" as in envtest (no garbage collector runs), or
   * "background": dependents whose owners are all gone are deleted right away, as the collector would.
   */
  garbageCollection?: "none" | "background";
  /** Kinds without a status subresource (status is then part of an ordinary update). */
  withoutStatusSubresource?: ResourceKind[];
}

/** The apiserver's built-in kinds without a status subresource (beyond those a test names). */
const NO_STATUS = new Set(["configmaps", "secrets", "events", "leases.coordination.k8s.io", "serviceaccounts"]);

type Stored = Readonly<KubeObject> & Record<string, unknown>;

/**
 * The client seams on the object itself; the cache seams as `fake.cache` (both have a `get`, one live and
 * asynchronous, one from memory). The cache is always caught up: a test that needs it stale wraps it.
 */
export class FakeClient implements ObjectReader, ObjectWriter, StatusWriter, CacheIndexer {
  /** Every call, in order (reads included), for tests asserting what a reconcile did. */
  readonly actions: FakeAction[] = [];
  private readonly now: () => Date;
  private readonly gc: "none" | "background";
  private readonly noStatus: Set<string>;
  /** resource → "namespace/name" → the stored object, deep-frozen; replaced, never mutated. */
  private readonly store = new Map<string, Map<string, Stored>>();
  private readonly kinds = new Map<string, ResourceKind>();
  private readonly transforms = new Map<string, (obj: KubeObject) => KubeObject>();
  /** The cache hands out one transformed object per stored version, as an informer does. */
  private readonly transformed = new WeakMap<object, Readonly<KubeObject>>();
  private readonly indexes = new Map<string, Map<string, IndexFunc<KubeObject>>>();
  private readonly injected: Array<{ match: ErrorMatch; error: () => Error; left: number }> = [];
  private readonly warnings: Array<{ match: WarningMatch; warnings: readonly string[]; left: number }> = [];
  private revision = 0;

  constructor(o: FakeClientOptions = {}) {
    this.now = o.now ?? (() => new Date());
    this.gc = o.garbageCollection ?? "none";
    this.noStatus = new Set([...NO_STATUS, ...(o.withoutStatusSubresource ?? []).map(resourceName)]);
  }

  /** Answer matching calls with this error (before they touch the store). */
  injectError(match: ErrorMatch, error: Error | (() => Error)): void {
    this.injected.push({
      match,
      error: typeof error === "function" ? error : () => error,
      left: match.times ?? Infinity,
    });
  }

  /** Forget every injected error. */
  clearErrors(): void {
    this.injected.length = 0;
  }

  /**
   * Answer matching writes with these API warnings, as an apiserver sends them in `Warning: 299 - "..."`
   * headers: each is passed to the call's WriteOptions.onWarning, in order, whether the call then succeeds
   * or fails (an apiserver sends them with an error too).
   */
  injectWarnings(match: WarningMatch, warnings: readonly string[]): void {
    this.warnings.push({ match, warnings: [...warnings], left: match.times ?? Infinity });
  }

  /**
   * Put an object into the store as it is, status included, past every check of a write (not an API call,
   * so not in `actions`): for a state a current apiserver no longer lets anyone write but an older one left
   * behind, such as a finished Job without startTime. Fills in what create would (uid, creationTimestamp,
   * generation) where unset.
   */
  seed<T extends KubeObject>(rk: ResourceKind, obj: T): T {
    const meta = obj.metadata ?? {};
    if (!meta.name) throw new Error(`seed: ${obj.kind ?? "object"} has no metadata.name`);
    objectPath(rk, meta.namespace, meta.name);
    const key = keyOf(rk, meta.namespace, meta.name);
    if (this.bucket(rk).has(key)) throw alreadyExists(rk, meta.name);
    const next = structuredClone(obj) as Record<string, unknown> & KubeObject;
    next.metadata = {
      uid: randomUUID(),
      creationTimestamp: rfc3339(this.now()),
      generation: 1,
      ...structuredClone(meta),
      resourceVersion: "",
    };
    return structuredClone(this.commit(rk, key, next)) as T;
  }

  // --- ObjectReader --------------------------------------------------------------------------------

  async get<T extends KubeObject>(rk: ResourceKind, namespace: string | undefined, name: string): Promise<T> {
    this.enter("get", rk, namespace, name);
    const obj = this.bucket(rk).get(keyOf(rk, namespace, name));
    if (!obj) throw notFound(rk, name);
    return structuredClone(obj) as T;
  }

  async list<T extends KubeObject>(rk: ResourceKind, o: ListOptions = {}): Promise<ListResult<T>> {
    this.enter("list", rk, o.namespace, undefined);
    const labels = o.labelSelector ? parseSelector(o.labelSelector) : undefined;
    const fields = o.fieldSelector ? parseFieldSelector(o.fieldSelector) : undefined;
    const items = this.select(rk, o.namespace, labels)
      .filter((obj) => !fields || fields.every(([k, v]) => fieldOf(obj, k) === v))
      .map((obj) => structuredClone(obj) as T);
    return { items, metadata: { resourceVersion: String(this.revision) } };
  }

  // --- ObjectWriter --------------------------------------------------------------------------------

  async create<T extends KubeObject>(rk: ResourceKind, obj: T, o: WriteOptions = {}): Promise<T> {
    const meta = obj.metadata ?? {};
    let name = meta.name;
    if (!name && meta.generateName) name = meta.generateName + randomSuffix();
    this.enter("create", rk, meta.namespace, name, o);
    if (!name) throw invalid(rk, "", "metadata.name: Required value: name or generateName is required");
    objectPath(rk, meta.namespace, name); // a namespaced kind without a namespace: the real client's error
    if (meta.resourceVersion) {
      throw invalid(rk, name, "metadata.resourceVersion: Invalid value: must be unset for create");
    }
    if (rk.namespaced && this.terminating(meta.namespace)) throw namespaceTerminating(rk, name, meta.namespace!);
    const bucket = this.bucket(rk);
    const key = keyOf(rk, meta.namespace, name);
    if (bucket.has(key)) throw alreadyExists(rk, name);
    const next = structuredClone(obj) as Record<string, unknown> & KubeObject;
    if (this.hasStatusSubresource(rk)) delete next.status;
    next.metadata = {
      ...structuredClone(meta),
      name,
      uid: randomUUID(),
      creationTimestamp: rfc3339(this.now()),
      generation: 1,
      resourceVersion: "",
    };
    if (!rk.namespaced) delete next.metadata.namespace;
    delete next.metadata.deletionTimestamp;
    if (o.dryRun) return structuredClone(next) as T;
    return structuredClone(this.commit(rk, key, next)) as T;
  }

  async update<T extends KubeObject>(rk: ResourceKind, obj: T, o: WriteOptions = {}): Promise<T> {
    return this.write("update", rk, obj, o);
  }

  async delete(rk: ResourceKind, namespace: string | undefined, name: string, o: DeleteOptions = {}): Promise<void> {
    this.enter("delete", rk, namespace, name);
    const key = keyOf(rk, namespace, name);
    const cur = this.bucket(rk).get(key);
    if (!cur) throw notFound(rk, name);
    const pre = o.preconditions ?? {};
    if (pre.uid !== undefined && pre.uid !== cur.metadata?.uid) {
      throw conflict(
        rk,
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${cur.metadata?.uid}`,
      );
    }
    if (pre.resourceVersion !== undefined && pre.resourceVersion !== cur.metadata?.resourceVersion) {
      throw conflict(
        rk,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${cur.metadata?.resourceVersion}`,
      );
    }
    if (resourceName(rk) === "namespaces") {
      // The "kubernetes" finalizer holds every namespace until the namespace controller has emptied it;
      // none runs here (nor in envtest), so it stays Terminating and refuses new content.
      if (this.terminating(name)) return;
      const next = structuredClone(cur) as Stored & { metadata: Record<string, unknown> };
      next.metadata.deletionTimestamp = rfc3339(this.now());
      next.status = { ...(next.status as object | undefined), phase: "Terminating" };
      this.commit(rk, key, next);
      return;
    }
    if ((cur.metadata as { finalizers?: string[] }).finalizers?.length) {
      // A finalizer holds the object: it is only marked, and goes when the last finalizer is removed.
      if ((cur.metadata as { deletionTimestamp?: string }).deletionTimestamp) return;
      const next = structuredClone(cur) as Stored & { metadata: Record<string, unknown> };
      next.metadata.deletionTimestamp = rfc3339(this.now());
      next.metadata.deletionGracePeriodSeconds = 0;
      this.commit(rk, key, next);
      return;
    }
    this.remove(rk, key);
    // batch/v1 Jobs default to orphaning their dependents; everything else to background deletion.
    const policy = o.propagationPolicy ?? (resourceName(rk) === "jobs.batch" ? "Orphan" : "Background");
    if (this.gc === "background" && policy !== "Orphan") this.collectGarbage();
  }

  // --- StatusWriter --------------------------------------------------------------------------------

  async updateStatus<T extends KubeObject>(rk: ResourceKind, obj: T, o: WriteOptions = {}): Promise<T> {
    return this.write("updateStatus", rk, obj, o);
  }

  // --- CacheReader, CacheIndexer -------------------------------------------------------------------

  setTransform<T extends KubeObject>(kind: ResourceKind, fn: (obj: T) => T): void {
    const name = resourceName(kind);
    if (this.transforms.has(name)) throw new Error(`${name} already has a cache transform`);
    // The transform is registered for `kind`, and only objects of that kind are passed to it.
    this.transforms.set(name, (o: KubeObject) => fn(o as T));
  }

  indexField<T extends KubeObject>(kind: ResourceKind, name: string, fn: IndexFunc<T>): void {
    const resource = resourceName(kind);
    const idx = this.indexes.get(resource) ?? new Map<string, IndexFunc<KubeObject>>();
    if (idx.has(name)) throw new Error(`index "${name}" on ${resource} already exists`);
    idx.set(name, fn as IndexFunc<KubeObject>);
    this.indexes.set(resource, idx);
  }

  private cached<T extends KubeObject>(
    kind: ResourceKind,
    namespace: string | undefined,
    name: string,
  ): Readonly<T> | undefined {
    const obj = this.bucket(kind).get(keyOf(kind, namespace, name));
    return obj ? (this.view(kind, obj) as Readonly<T>) : undefined;
  }

  readonly cache: CacheReader = {
    get: <T extends KubeObject>(kind: ResourceKind, namespace: string | undefined, name: string) =>
      this.cached<T>(kind, namespace, name),
    list: <T extends KubeObject>(
      kind: ResourceKind,
      o: { namespace?: string; labelSelector?: string | LabelSelector } = {},
    ) => this.cachedList<T>(kind, o),
    byIndex: <T extends KubeObject>(kind: ResourceKind, index: string, value: string) =>
      this.byIndex<T>(kind, index, value),
  };

  private cachedList<T extends KubeObject>(
    kind: ResourceKind,
    o: { namespace?: string; labelSelector?: string | LabelSelector } = {},
  ): Readonly<T>[] {
    const sel = typeof o.labelSelector === "string" ? parseSelector(o.labelSelector) : o.labelSelector;
    return this.select(kind, o.namespace, sel).map((obj) => this.view(kind, obj) as Readonly<T>);
  }

  private byIndex<T extends KubeObject>(kind: ResourceKind, index: string, value: string): Readonly<T>[] {
    const fn = this.indexes.get(resourceName(kind))?.get(index);
    if (!fn) throw new Error(`no index "${index}" on ${resourceName(kind)}`);
    const out: Readonly<T>[] = [];
    for (const obj of this.bucket(kind).values()) {
      const view = this.view(kind, obj);
      if (fn(view).includes(value)) out.push(view as Readonly<T>);
    }
    return out;
  }

  // --- internals -----------------------------------------------------------------------------------

  private async write<T extends KubeObject>(
    verb: "update" | "updateStatus",
    rk: ResourceKind,
    obj: T,
    o: WriteOptions,
  ): Promise<T> {
    const meta = obj.metadata ?? {};
    const name = meta.name;
    this.enter(verb, rk, meta.namespace, name, o);
    if (!name) throw new Error(`${obj.kind ?? "object"} has no metadata.name`);
    const key = keyOf(rk, meta.namespace, name);
    const cur = this.bucket(rk).get(key);
    if (!cur) throw notFound(rk, name);
    if (meta.resourceVersion && meta.resourceVersion !== cur.metadata?.resourceVersion) {
      throw conflict(
        rk,
        name,
        "the object has been modified; please apply your changes to the latest version and try again",
      );
    }
    if (meta.uid && meta.uid !== cur.metadata?.uid) {
      throw conflict(
        rk,
        name,
        `Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${cur.metadata?.uid}`,
      );
    }
    const subresource = this.hasStatusSubresource(rk);
    let next: Stored & { metadata: Record<string, unknown> };
    if (verb === "updateStatus") {
      if (!subresource) throw notFound(rk, name);
      // The status subresource takes status only: metadata and spec stay as stored.
      next = structuredClone(cur) as typeof next;
      const status = (obj as { status?: unknown }).status;
      if (status === undefined) delete next.status;
      else next.status = structuredClone(status);
    } else {
      const copy: Record<string, unknown> = { ...structuredClone(obj) };
      next = { ...copy, metadata: { ...(copy.metadata as Record<string, unknown> | undefined) } };
      // What the server owns: identity, creation, deletion; and status where it is a subresource.
      for (const f of ["uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"]) {
        const v = (cur.metadata as Record<string, unknown>)[f];
        if (v === undefined) delete next.metadata[f];
        else next.metadata[f] = v;
      }
      if (!rk.namespaced) delete next.metadata.namespace;
      if (subresource) {
        if (cur.status === undefined) delete next.status;
        else next.status = structuredClone(cur.status);
      }
      if (canonical(specOf(next)) !== canonical(specOf(cur))) {
        next.metadata.generation = ((cur.metadata as { generation?: number }).generation ?? 0) + 1;
      }
    }
    next.metadata.resourceVersion = cur.metadata?.resourceVersion;
    // A Job's status as a 1.33+ apiserver validates it (with dry-run too; an unchanged one passes).
    if (resourceName(rk) === "jobs.batch" && (verb === "updateStatus" || !subresource)) {
      const causes = jobStatusErrors(cur, next);
      if (causes.length > 0) throw invalidJob(name, causes);
    }
    // An update that changes nothing is not a write: the resourceVersion stays (as the apiserver does).
    if (canonical(next) === canonical(cur)) return structuredClone(cur) as T;
    if (o.dryRun) return structuredClone(next) as T;
    const finalizers = next.metadata.finalizers as string[] | undefined;
    if (next.metadata.deletionTimestamp && !finalizers?.length) {
      // The last finalizer is gone from an object being deleted: the deletion completes.
      this.remove(rk, key);
      if (this.gc === "background") this.collectGarbage();
      return structuredClone(next) as T;
    }
    return structuredClone(this.commit(rk, key, next)) as T;
  }

  private enter(
    verb: Verb,
    rk: ResourceKind,
    namespace: string | undefined,
    name: string | undefined,
    o?: WriteOptions,
  ): void {
    const resource = resourceName(rk);
    this.actions.push({ verb, resource, namespace, name });
    const matches = (m: ErrorMatch) =>
      m.verb === verb &&
      (!m.kind || resourceName(m.kind) === resource) &&
      (m.namespace === undefined || m.namespace === namespace) &&
      (m.name === undefined || m.name === name);
    for (const w of this.warnings) {
      if (w.left <= 0 || !matches(w.match)) continue;
      w.left--;
      for (const warning of w.warnings) o?.onWarning?.(warning);
    }
    for (const inj of this.injected) {
      if (inj.left <= 0 || !matches(inj.match)) continue;
      inj.left--;
      throw inj.error();
    }
  }

  private commit(rk: ResourceKind, key: string, obj: KubeObject & Record<string, unknown>): Stored {
    obj.metadata = { ...obj.metadata, resourceVersion: String(++this.revision) };
    const frozen = deepFreeze(obj) as Stored;
    this.bucket(rk).set(key, frozen);
    return frozen;
  }

  private remove(rk: ResourceKind, key: string): void {
    this.bucket(rk).delete(key);
    this.revision++;
  }

  /** Deletes every object all of whose owners are gone, until none is left (dependents of dependents). */
  private collectGarbage(): void {
    for (;;) {
      const live = new Set<string>();
      for (const bucket of this.store.values()) for (const o of bucket.values()) live.add(o.metadata?.uid ?? "");
      let removed = false;
      for (const [resource, bucket] of this.store) {
        for (const [key, o] of bucket) {
          const owners = (o.metadata as { ownerReferences?: { uid: string }[] }).ownerReferences ?? [];
          if (owners.length && owners.every((r) => !live.has(r.uid))) {
            this.remove(this.kinds.get(resource)!, key);
            removed = true;
          }
        }
      }
      if (!removed) return;
    }
  }

  private bucket(rk: ResourceKind): Map<string, Stored> {
    const resource = resourceName(rk);
    let b = this.store.get(resource);
    if (!b) {
      b = new Map();
      this.store.set(resource, b);
      this.kinds.set(resource, rk);
    }
    return b;
  }

  private select(rk: ResourceKind, namespace: string | undefined, sel: LabelSelector | undefined): Stored[] {
    const out: Stored[] = [];
    for (const obj of this.bucket(rk).values()) {
      if (namespace && rk.namespaced && obj.metadata?.namespace !== namespace) continue;
      const labels = (obj.metadata as { labels?: Record<string, string> }).labels ?? {};
      if (sel && !matchesSelector(sel, labels)) continue;
      out.push(obj);
    }
    return out.sort((a, b) =>
      keyOf(rk, a.metadata?.namespace, a.metadata?.name ?? "").localeCompare(
        keyOf(rk, b.metadata?.namespace, b.metadata?.name ?? ""),
      ),
    );
  }

  private view(rk: ResourceKind, obj: Stored): Readonly<KubeObject> {
    const fn = this.transforms.get(resourceName(rk));
    if (!fn) return obj;
    let v = this.transformed.get(obj);
    if (!v) {
      v = deepFreeze(fn(structuredClone(obj)));
      this.transformed.set(obj, v);
    }
    return v;
  }

  private terminating(namespace: string | undefined): boolean {
    const ns = this.store.get("namespaces")?.get(namespace ?? "");
    return (ns?.status as { phase?: string } | undefined)?.phase === "Terminating";
  }

  private hasStatusSubresource(rk: ResourceKind): boolean {
    return !this.noStatus.has(resourceName(rk));
  }
}

// --- errors as the apiserver words them ------------------------------------------------------------

function qualified(rk: ResourceKind): string {
  return resourceName(rk);
}

function notFound(rk: ResourceKind, name: string): APIError {
  return new APIError(404, "NotFound", `${qualified(rk)} "${name}" not found`, {
    details: { name, group: rk.group, kind: rk.plural },
  });
}

function alreadyExists(rk: ResourceKind, name: string): APIError {
  return new APIError(409, "AlreadyExists", `${qualified(rk)} "${name}" already exists`, {
    details: { name, group: rk.group, kind: rk.plural },
  });
}

function conflict(rk: ResourceKind, name: string, why: string): APIError {
  return new APIError(409, "Conflict", `Operation cannot be fulfilled on ${qualified(rk)} "${name}": ${why}`, {
    details: { name, group: rk.group, kind: rk.plural },
  });
}

/** The NamespaceLifecycle admission plugin's answer. */
function namespaceTerminating(rk: ResourceKind, name: string, namespace: string): APIError {
  const message = `unable to create new content in namespace ${namespace} because it is being terminated`;
  return new APIError(403, "Forbidden", `${qualified(rk)} "${name}" is forbidden: ${message}`, {
    causes: [{ reason: "NamespaceTerminating", message, field: "metadata.namespace" }],
    details: { name, group: rk.group, kind: rk.plural },
  });
}

function invalid(rk: ResourceKind, name: string, why: string): APIError {
  return new APIError(422, "Invalid", `${rk.kind} "${name}" is invalid: ${why}`, {
    details: { name, group: rk.group, kind: rk.kind },
  });
}

// --- helpers ---------------------------------------------------------------------------------------

function keyOf(rk: ResourceKind, namespace: string | undefined, name: string): string {
  return rk.namespaced ? `${namespace ?? ""}/${name}` : name;
}

function randomSuffix(): string {
  const alphabet = "bcdfghjklmnpqrstvwxz2456789";
  let s = "";
  for (let i = 0; i < 5; i++) s += alphabet[Math.floor(Math.random() * alphabet.length)];
  return s;
}

/** Everything the generation counts: all but metadata and status. */
function specOf(obj: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (k !== "metadata" && k !== "status") rest[k] = v;
  return rest;
}

function parseFieldSelector(s: string): Array<[string, string]> {
  return s.split(",").map((part) => {
    const m = /^\s*(metadata\.name|metadata\.namespace)\s*==?\s*(\S*)\s*$/.exec(part);
    if (!m) {
      throw new APIError(
        400,
        "BadRequest",
        `field selector "${s}": only metadata.name and metadata.namespace are supported by the fake`,
      );
    }
    return [m[1]!, m[2]!];
  });
}

function fieldOf(obj: Readonly<KubeObject>, path: string): string | undefined {
  return path === "metadata.name" ? obj.metadata?.name : obj.metadata?.namespace;
}
