// An informer for one kind: list, then watch from the list's resourceVersion, keeping a local store
// with secondary indexes and telling handlers about adds, updates and deletes. It is built to keep
// going: every failure is retried with jittered backoff, a 410 Gone relists (with backoff, never in a
// hot loop), a server-closed watch resumes from the last resourceVersion without a relist, and a
// stream that goes silent is abandoned by a watchdog.
import { Counter } from "prom-client";
import { type Client, watchErrorToAPIError } from "../client.ts";
import { isGone } from "../errors.ts";
import { type KubeObject, objectKey, resourceName, type ResourceKind } from "../kinds.ts";
import { discardLogger, type Logger } from "../log.ts";
import { getOrCreate, initCounter, metricsRegistry } from "../metrics/registry.ts";
import { Backoff, sleep } from "./backoff.ts";
import { type LabelSelector, matchesSelector, parseSelector } from "./selector.ts";
import { deepFreeze } from "../objects.ts";

export type IndexFunc<T> = (obj: Readonly<T>) => string[];

export interface EventHandler<T> {
  onAdd?(obj: Readonly<T>): void;
  onUpdate?(oldObj: Readonly<T>, newObj: Readonly<T>): void;
  /** The last state the cache knew (a relist may find an object gone without seeing its final state). */
  onDelete?(obj: Readonly<T>): void;
}

/** What a cache's readers and event sources use of an informer, one namespace set or all (NamespacedInformer). */
export interface SharedInformer<T extends KubeObject = KubeObject> {
  readonly kind: ResourceKind;
  addIndex(name: string, fn: IndexFunc<T>): void;
  setTransform(fn: ((obj: T) => T) | undefined): void;
  addEventHandler(h: EventHandler<T>): void;
  start(): void;
  stop(): Promise<void>;
  hasSynced(): boolean;
  waitForSync(signal?: AbortSignal): Promise<boolean>;
  get(namespace: string | undefined, name: string): Readonly<T> | undefined;
  getByKey(key: string): Readonly<T> | undefined;
  list(namespace?: string, selector?: string | LabelSelector): Readonly<T>[];
  byIndex(name: string, value: string): Readonly<T>[];
  keys(): string[];
  readonly size: number;
}

export interface InformerOptions {
  /** Restrict to one namespace (default: all). */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Periodic resync: every object is handed to onUpdate(obj, obj). 0 = off (default). */
  resyncPeriodMs?: number;
  /** Server-side watch timeout is drawn uniformly from this range (seconds). Default [300, 600]. */
  watchTimeoutSeconds?: [number, number];
  /** Abandon a watch that delivered nothing (not even a bookmark) for this long. Default timeout + 60 s. */
  inactivityTimeoutMs?: number;
  /** Page size of the initial list / relists. */
  pageSize?: number;
  /**
   * Cluster-wide only: the namespaces to list side by side (at most LIST_CONCURRENCY at once), each paginated, all at
   * one resourceVersion, instead of one list whose pages come one after another, each the API server's time (a fleet's
   * 5,000 custom resources: 1.3 s in one list, 0.75 s as 5 namespaces two at a time). Called after that resourceVersion
   * is read, so every namespace that held an object then is among those it returns; undefined (the namespaces cannot
   * be read) lists as one.
   */
  listNamespaces?: () => Promise<readonly string[] | undefined>;
  backoff?: { initialMs: number; maxMs: number };
  logger?: Logger;
  /**
   * Applied to every object before it is stored (controller-runtime's TransformFunc), e.g.
   * stripManagedFields to keep the cache small. It may modify and return its argument.
   */
  transform?: <O extends KubeObject>(obj: O) => O;
}

/**
 * Drops metadata.managedFields: they are often a third of an object and controllers rarely read them.
 * Updates built from such an object stay safe: the apiserver keeps the stored managedFields when an
 * update leaves them out.
 */
export function stripManagedFields<T extends KubeObject>(obj: T): T {
  if (!obj.metadata || !("managedFields" in obj.metadata)) return obj;
  // A copy without the key, not `delete`: V8 turns an object that loses a property into a hash table,
  // several times its size, for every cached object (docs/operating.md, "The figures behind the code's rules").
  const { managedFields: _dropped, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

const listsTotal = getOrCreate(
  "informer_lists_total",
  () =>
    new Counter({
      name: "informer_lists_total",
      help: "Full lists performed by informers (initial list and relists), by resource and reason.",
      labelNames: ["resource", "reason"],
      registers: [metricsRegistry],
    }),
);
const watchesTotal = getOrCreate(
  "informer_watches_total",
  () =>
    new Counter({
      name: "informer_watches_total",
      help: "Watches started by informers (each reconnect is one), by resource.",
      labelNames: ["resource"],
      registers: [metricsRegistry],
    }),
);
const watchErrorsTotal = getOrCreate(
  "informer_watch_errors_total",
  () =>
    new Counter({
      name: "informer_watch_errors_total",
      help: "Informer list/watch failures, by resource and reason.",
      labelNames: ["resource", "reason"],
      registers: [metricsRegistry],
    }),
);

/** The `reason` values of informer_lists_total. */
/** Namespaces listed at once by listByNamespace: the API server's work, two cores' worth (more gained nothing). */
const LIST_CONCURRENCY = 2;

const LIST_REASONS = ["initial", "gone", "retry"] as const;
/**
 * The `reason` values of informer_watch_errors_total that exist (at 0) from the start: the informer's
 * own (Gone: 410/Expired, relist; Stalled: the inactivity watchdog; Error: not an API error), the
 * transport's (Unknown: connection refused/reset, Timeout) and the apiserver answers worth alerting
 * on. Any other Status reason still counts, as a series of its own that appears when it first occurs.
 */
const WATCH_ERROR_REASONS = [
  "Gone",
  "Stalled",
  "Error",
  "Unknown",
  "Timeout",
  "Unauthorized",
  "Forbidden",
  "TooManyRequests",
  "InternalError",
  "ServiceUnavailable",
] as const;

function rvOf(o: KubeObject): string {
  return o.metadata?.resourceVersion ?? "";
}

export class Informer<T extends KubeObject = KubeObject> implements SharedInformer<T> {
  readonly kind: ResourceKind;
  private readonly client: Client;
  private readonly o: InformerOptions;
  private readonly log: Logger;
  private readonly resource: string;
  private readonly store = new Map<string, Readonly<T>>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  private readonly indices = new Map<string, Map<string, Set<string>>>();
  private readonly handlers: EventHandler<T>[] = [];
  private readonly backoff: Backoff;
  private resourceVersion = "";
  private synced = false;
  private started = false;
  private readonly syncWaiters: Array<() => void> = [];
  private abort = new AbortController();
  private running: Promise<void> | undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  private transformFn: ((obj: T) => T) | undefined;

  constructor(client: Client, kind: ResourceKind, o: InformerOptions = {}) {
    this.client = client;
    this.kind = kind;
    this.o = o;
    this.transformFn = o.transform;
    this.log = o.logger ?? discardLogger;
    this.resource = resourceName(kind);
    this.backoff = new Backoff({ initialMs: o.backoff?.initialMs ?? 800, maxMs: o.backoff?.maxMs ?? 30_000 });
    // This resource's series exist from the start, at 0, so "no errors yet" reads as 0, not "no data".
    const resource = this.resource;
    for (const reason of LIST_REASONS) initCounter(listsTotal, { resource, reason });
    initCounter(watchesTotal, { resource });
    for (const reason of WATCH_ERROR_REASONS) initCounter(watchErrorsTotal, { resource, reason });
  }

  /** Register a secondary index (controller-runtime's IndexField). Must happen before start. */
  addIndex(name: string, fn: IndexFunc<T>): void {
    if (this.started) throw new Error(`index "${name}" on ${this.resource} must be added before the informer starts`);
    if (this.indexers.has(name)) throw new Error(`index "${name}" on ${this.resource} already exists`);
    this.indexers.set(name, fn);
    this.indices.set(name, new Map());
  }

  /**
   * Replace the transform (InformerOptions.transform) before the informer starts, e.g. to trim one kind
   * further than the cache-wide transform does.
   */
  setTransform(fn: ((obj: T) => T) | undefined): void {
    if (this.started) throw new Error(`the transform of ${this.resource} must be set before the informer starts`);
    this.transformFn = fn;
  }

  /** Handlers added after sync are told about every object already cached, as adds. */
  addEventHandler(h: EventHandler<T>): void {
    this.handlers.push(h);
    if (this.synced) for (const obj of this.store.values()) this.call(h, "onAdd", obj);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.running = this.run(this.abort.signal);
    if (this.o.resyncPeriodMs) {
      this.resyncTimer = setInterval(() => this.resync(), this.o.resyncPeriodMs);
      this.resyncTimer.unref();
    }
  }

  async stop(): Promise<void> {
    this.abort.abort();
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    await this.running;
    for (const w of this.syncWaiters.splice(0)) w();
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves true once the initial list is in the store, false if the informer stops first. */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    return new Promise((resolve) => {
      if (signal?.aborted || this.abort.signal.aborted) return resolve(false);
      const done = () => resolve(this.synced);
      this.syncWaiters.push(done);
      signal?.addEventListener("abort", () => resolve(false), { once: true });
      this.abort.signal.addEventListener("abort", () => resolve(false), { once: true });
    });
  }

  get(namespace: string | undefined, name: string): Readonly<T> | undefined {
    return this.store.get(namespace ? `${namespace}/${name}` : name);
  }

  getByKey(key: string): Readonly<T> | undefined {
    return this.store.get(key);
  }

  list(namespace?: string, selector?: string | LabelSelector): Readonly<T>[] {
    const sel = typeof selector === "string" ? parseSelector(selector) : selector;
    const out: Readonly<T>[] = [];
    for (const obj of this.store.values()) {
      if (namespace && obj.metadata?.namespace !== namespace) continue;
      if (sel && !matchesSelector(sel, obj.metadata?.labels ?? {})) continue;
      out.push(obj);
    }
    return out;
  }

  /** Objects whose index `name` produced `value`. */
  byIndex(name: string, value: string): Readonly<T>[] {
    const idx = this.indices.get(name);
    if (!idx) throw new Error(`no index "${name}" on ${this.resource}`);
    const keys = idx.get(value);
    if (!keys) return [];
    const out: Readonly<T>[] = [];
    for (const k of keys) {
      const o = this.store.get(k);
      if (o) out.push(o);
    }
    return out;
  }

  keys(): string[] {
    return [...this.store.keys()];
  }

  get size(): number {
    return this.store.size;
  }

  /** The resourceVersion the informer would resume from. */
  lastSyncResourceVersion(): string {
    return this.resourceVersion;
  }

  private async run(signal: AbortSignal): Promise<void> {
    let needList = true;
    let listReason = "initial";
    while (!signal.aborted) {
      try {
        if (needList) {
          await this.listAndReplace(signal, listReason);
          needList = false;
        }
        await this.watchOnce(signal);
        // The server ended the watch (its timeout): resume from the last resourceVersion, no relist.
        this.backoff.reset();
      } catch (err) {
        if (signal.aborted) break;
        const gone = isGone(err);
        watchErrorsTotal.inc({
          resource: this.resource,
          reason: gone ? "Gone" : ((err as { reason?: string }).reason ?? "Error"),
        });
        if (gone) {
          needList = true;
          listReason = "gone";
          this.log.info("resourceVersion too old; relisting", {
            resource: this.resource,
            resourceVersion: this.resourceVersion,
          });
        } else {
          this.log.error("list/watch failed; retrying", err, { resource: this.resource });
          if (!this.synced) listReason = "retry";
        }
        await sleep(this.backoff.next(), signal);
      }
    }
  }

  private async listAndReplace(signal: AbortSignal, reason: string): Promise<void> {
    listsTotal.inc({ resource: this.resource, reason });
    const listed =
      (this.o.listNamespaces && this.o.namespace === undefined && (await this.listByNamespace(signal))) ||
      (await this.listPages(signal, this.o.namespace));
    if (!listed || signal.aborted) return;
    const { items, rv } = listed;
    this.replace(items);
    this.resourceVersion = rv;
    if (!this.synced) {
      this.synced = true;
      for (const w of this.syncWaiters.splice(0)) w();
    }
  }

  /**
   * One list, paginated: each page is completed and transformed as it arrives, so a large list holds only what the
   * cache keeps (no managedFields, no trimmed-away parts), not every full object until the last page. At
   * `resourceVersion` exactly when given (a namespace's part of listByNamespace).
   */
  private async listPages(
    signal: AbortSignal,
    namespace: string | undefined,
    resourceVersion?: string,
  ): Promise<{ items: T[]; rv: string } | undefined> {
    const items: T[] = [];
    let cont: string | undefined;
    let rv = resourceVersion ?? "";
    do {
      const page = await this.client.list<T>(this.kind, {
        namespace,
        labelSelector: this.o.labelSelector,
        fieldSelector: this.o.fieldSelector,
        limit: this.o.pageSize ?? 500,
        continue: cont,
        // Exact on the first page only: a continue token carries its resourceVersion.
        ...(resourceVersion && !cont ? { resourceVersion, resourceVersionMatch: "Exact" as const } : {}),
      });
      if (signal.aborted) return undefined;
      for (const raw of page.items) items.push(this.transform(this.complete(raw)));
      cont = page.metadata.continue || undefined;
      rv = resourceVersion ?? page.metadata.resourceVersion ?? rv;
    } while (cont);
    return { items, rv };
  }

  /**
   * The cluster-wide list as namespaces listed side by side at one resourceVersion (InformerOptions.listNamespaces),
   * in the namespaces' order (a cluster-wide list's order); undefined to list as one.
   */
  private async listByNamespace(signal: AbortSignal): Promise<{ items: T[]; rv: string } | undefined> {
    // The resourceVersion first, then the namespaces: every namespace with an object at that version is listed.
    const probe = await this.client.list<T>(this.kind, {
      labelSelector: this.o.labelSelector,
      fieldSelector: this.o.fieldSelector,
      limit: 1,
    });
    const rv = probe.metadata.resourceVersion;
    if (!rv || signal.aborted) return undefined;
    // A cluster with less than one page lists as one.
    if (!probe.metadata.continue) return undefined;
    const namespaces = await this.o.listNamespaces!().catch(() => undefined);
    if (!namespaces?.length || signal.aborted) return undefined;
    const sorted = [...namespaces].sort();
    const parts: T[][] = new Array<T[]>(sorted.length);
    let next = 0;
    const worker = async () => {
      while (next < sorted.length && !signal.aborted) {
        const i = next++;
        const part = await this.listPages(signal, sorted[i], rv);
        if (!part) return;
        parts[i] = part.items;
      }
    };
    await Promise.all(Array.from({ length: Math.min(LIST_CONCURRENCY, sorted.length) }, worker));
    if (signal.aborted) return undefined;
    return { items: parts.flat(), rv };
  }

  /** Lists omit kind/apiVersion on items; restore them so handlers see complete objects. */
  private complete(raw: T): T {
    return { apiVersion: raw.apiVersion ?? this.apiVersion(), kind: raw.kind ?? this.kind.kind, ...raw } as T;
  }

  /** Replace the store with a full list (completed and transformed), emitting the deltas against what we had. */
  private replace(items: T[]): void {
    const seen = new Set<string>();
    for (const obj of items) {
      const key = objectKey(obj);
      seen.add(key);
      const old = this.store.get(key);
      if (!old) this.put(key, obj, undefined);
      else if (rvOf(old) !== rvOf(obj)) this.put(key, obj, old);
    }
    for (const [key, old] of [...this.store]) {
      if (!seen.has(key)) this.remove(key, old);
    }
  }

  private apiVersion(): string {
    return this.kind.group ? `${this.kind.group}/${this.kind.version}` : this.kind.version;
  }

  private async watchOnce(signal: AbortSignal): Promise<void> {
    const [lo, hi] = this.o.watchTimeoutSeconds ?? [300, 600];
    const timeoutSeconds = Math.round(lo + Math.random() * (hi - lo));
    const inactivityMs = this.o.inactivityTimeoutMs ?? (timeoutSeconds + 60) * 1000;
    // stop() may already have fired (e.g. right after the initial list): an abort listener added now
    // would never run and the watch would live until the server's timeout.
    if (signal.aborted) return;
    const ac = new AbortController();
    const onStop = () => ac.abort();
    signal.addEventListener("abort", onStop, { once: true });
    let lastActivity = performance.now();
    let stalled = false;
    const watchdog = setInterval(
      () => {
        if (performance.now() - lastActivity > inactivityMs) {
          stalled = true;
          ac.abort();
        }
      },
      Math.min(inactivityMs, 5000),
    );
    watchdog.unref();
    try {
      watchesTotal.inc({ resource: this.resource });
      const events = await this.client.watch<T>(this.kind, {
        namespace: this.o.namespace,
        labelSelector: this.o.labelSelector,
        fieldSelector: this.o.fieldSelector,
        resourceVersion: this.resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds,
        signal: ac.signal,
      });
      this.backoff.reset();
      for await (const ev of events) {
        lastActivity = performance.now();
        this.handleEvent(ev.type, ev.object);
      }
      if (stalled)
        throw Object.assign(new Error(`watch of ${this.resource} silent for ${inactivityMs} ms`), {
          reason: "Stalled",
        });
    } finally {
      clearInterval(watchdog);
      signal.removeEventListener("abort", onStop);
    }
  }

  private handleEvent(type: string, obj: T): void {
    if (type === "ERROR") throw watchErrorToAPIError(obj); // 410 Gone here means "relist"
    const rv = rvOf(obj);
    if (type === "BOOKMARK") {
      if (rv) this.resourceVersion = rv;
      return;
    }
    const key = objectKey(obj);
    const old = this.store.get(key);
    if (type === "DELETED") {
      if (old) this.remove(key, old, obj);
    } else if (type === "ADDED" || type === "MODIFIED") {
      this.upsert(key, obj, old);
    }
    if (rv) this.resourceVersion = rv;
  }

  private upsert(key: string, obj: T, old: Readonly<T> | undefined): void {
    this.put(key, this.transform(obj), old);
  }

  /** Stores an object already transformed, and tells the handlers. */
  private put(key: string, transformed: T, old: Readonly<T> | undefined): void {
    const frozen = deepFreeze(transformed) as Readonly<T>;
    if (old) this.unindex(key, old);
    this.store.set(key, frozen);
    this.index(key, frozen);
    for (const h of this.handlers) {
      if (old) this.call(h, "onUpdate", old, frozen);
      else this.call(h, "onAdd", frozen);
    }
  }

  private remove(key: string, old: Readonly<T>, final?: T): void {
    this.unindex(key, old);
    this.store.delete(key);
    const last = final ? (deepFreeze(this.transform(final)) as Readonly<T>) : old;
    for (const h of this.handlers) this.call(h, "onDelete", last);
  }

  private transform(obj: T): T {
    if (!this.transformFn) return obj;
    try {
      return this.transformFn(obj);
    } catch (err) {
      // A broken transform must not lose the object: store it as it came.
      this.log.error("cache transform failed; storing the object unchanged", err, { resource: this.resource });
      return obj;
    }
  }

  private index(key: string, obj: Readonly<T>): void {
    for (const [name, fn] of this.indexers) {
      const idx = this.indices.get(name)!;
      for (const v of this.safeIndex(name, fn, obj)) {
        let set = idx.get(v);
        if (!set) idx.set(v, (set = new Set()));
        set.add(key);
      }
    }
  }

  private unindex(key: string, obj: Readonly<T>): void {
    for (const [name, fn] of this.indexers) {
      const idx = this.indices.get(name)!;
      for (const v of this.safeIndex(name, fn, obj)) {
        const set = idx.get(v);
        set?.delete(key);
        if (set?.size === 0) idx.delete(v);
      }
    }
  }

  private safeIndex(name: string, fn: IndexFunc<T>, obj: Readonly<T>): string[] {
    try {
      return fn(obj);
    } catch (err) {
      this.log.error("index function threw; object not indexed", err, { index: name, key: objectKey(obj) });
      return [];
    }
  }

  private resync(): void {
    if (!this.synced) return;
    for (const obj of this.store.values()) for (const h of this.handlers) this.call(h, "onUpdate", obj, obj);
  }

  private call(h: EventHandler<T>, fn: "onAdd" | "onDelete", obj: Readonly<T>): void;
  private call(h: EventHandler<T>, fn: "onUpdate", old: Readonly<T>, obj: Readonly<T>): void;
  private call(h: EventHandler<T>, fn: keyof EventHandler<T>, a: Readonly<T>, b?: Readonly<T>): void {
    // A throwing handler must not break the informer loop or other handlers.
    try {
      if (fn === "onUpdate") h.onUpdate?.(a, b!);
      else h[fn]?.(a);
    } catch (err) {
      this.log.error("event handler threw", err, { resource: this.resource, handler: fn });
    }
  }
}
