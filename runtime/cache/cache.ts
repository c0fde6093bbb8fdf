// The manager's cache: one shared informer per kind, secondary indexes registered up front (like
// controller-runtime's FieldIndexer), reads served from memory.
import type { Client } from "../client.ts";
import { type KubeObject, resourceName, type ResourceKind } from "../kinds.ts";
import type { Logger } from "../log.ts";
import { type IndexFunc, Informer, type InformerOptions, type SharedInformer } from "./informer.ts";
import { NamespacedInformer } from "./namespaced.ts";
import type { LabelSelector } from "./selector.ts";

interface CacheOptions {
  /** Watch only this namespace (default: all namespaces). */
  namespace?: string;
  /**
   * Watch the namespaces addNamespace gives, none at first (runtime/sharding decides which): every kind's informer
   * is then a NamespacedInformer, one watch per namespace.
   */
  scoped?: boolean;
  resyncPeriodMs?: number;
  /** Applied to every object of every kind before it is cached (e.g. stripManagedFields). */
  transform?: <T extends KubeObject>(obj: T) => T;
  informerOptions?: Omit<InformerOptions, "namespace" | "resyncPeriodMs" | "logger">;
  logger?: Logger;
}

export class Cache {
  private readonly client: Client;
  private readonly o: CacheOptions;
  private readonly informers = new Map<string, SharedInformer<KubeObject>>();
  /** Scoped: the namespaces added, each its sync (resolved true once every kind of it has synced and is attached). */
  private readonly namespaceSyncs = new Map<string, Promise<boolean>>();
  /** Scoped: the namespaces whose every kind has synced (addNamespace resolved true), until removed. */
  private readonly syncedNamespaces = new Set<string>();
  private readonly kindTransforms = new Set<string>();
  private started = false;

  constructor(client: Client, o: CacheOptions = {}) {
    this.client = client;
    this.o = o;
  }

  /** The shared informer for a kind, created on first use (and started if the cache already runs). */
  informerFor<T extends KubeObject>(kind: ResourceKind): SharedInformer<T> {
    const name = resourceName(kind);
    let inf = this.informers.get(name);
    if (!inf) {
      const opts: InformerOptions = { ...this.o.informerOptions };
      if (this.o.namespace) opts.namespace = this.o.namespace;
      if (this.o.resyncPeriodMs) opts.resyncPeriodMs = this.o.resyncPeriodMs;
      if (this.o.logger) opts.logger = this.o.logger;
      if (this.o.transform) opts.transform = this.o.transform;
      if (this.o.scoped) {
        if (this.namespaceSyncs.size > 0)
          throw new Error(`informer for ${name} asked for after the cache's first namespace: register kinds up front`);
        inf = new NamespacedInformer(this.client, kind, opts);
      } else inf = new Informer(this.client, kind, opts);
      this.informers.set(name, inf);
      if (this.started) inf.start();
    }
    if (!holds<T>(inf)) throw new Error(`informer for ${name} is not an informer`);
    return inf;
  }

  /** Whether the cache watches the namespaces addNamespace gives rather than one or all. */
  get scoped(): boolean {
    return this.o.scoped === true;
  }

  /**
   * Scoped: watch `namespace` in every kind. Resolves true once every kind of it has synced and its objects have
   * reached the event handlers (as adds), as at a manager's start: no handler hears of a namespace's CronJob before
   * its Jobs are cached. False if it was removed or the signal aborted first.
   */
  addNamespace(namespace: string, signal?: AbortSignal): Promise<boolean> {
    if (!this.o.scoped) throw new Error("addNamespace: the cache is not scoped");
    let sync = this.namespaceSyncs.get(namespace);
    if (sync) return sync;
    const subs = this.namespacedInformers().map((inf) => ({ inf, sub: inf.watchNamespace(namespace) }));
    sync = (async () => {
      const synced = await Promise.all(subs.map(({ sub }) => sub.waitForSync(signal)));
      if (!synced.every(Boolean) || this.namespaceSyncs.get(namespace) !== sync) return false;
      for (const { inf } of subs) inf.attach(namespace);
      this.syncedNamespaces.add(namespace);
      return true;
    })();
    this.namespaceSyncs.set(namespace, sync);
    return sync;
  }

  /** Scoped: stop watching `namespace`; the handlers hear each of its objects as deleted. */
  async removeNamespace(namespace: string): Promise<void> {
    if (!this.namespaceSyncs.delete(namespace)) return;
    this.syncedNamespaces.delete(namespace);
    await Promise.all(this.namespacedInformers().map((inf) => inf.forgetNamespace(namespace)));
  }

  /**
   * Whether a read of `namespace` answers for the cluster: every kind synced, and, scoped, the namespace watched and
   * synced. A reader that gets false knows nothing of the namespace (an empty answer would be a wrong one).
   */
  covers(namespace: string): boolean {
    return this.o.scoped ? this.syncedNamespaces.has(namespace) : this.hasSynced();
  }

  /** Scoped: the namespaces added (synced or not). */
  namespaces(): string[] {
    return [...this.namespaceSyncs.keys()];
  }

  private namespacedInformers(): NamespacedInformer<KubeObject>[] {
    return [...this.informers.values()].filter(
      (i): i is NamespacedInformer<KubeObject> => i instanceof NamespacedInformer,
    );
  }

  /**
   * A transform for one kind, applied after the cache-wide one (controller-runtime's ByObject transform),
   * e.g. to drop the large parts of a kind that no reader needs. Before the kind's informer starts, once
   * per kind. Every reader of this kind's cache then sees the trimmed objects: whoever sets it must know
   * them all, and nothing may write back an object read from it (a trimmed object is not the object).
   */
  setTransform<T extends KubeObject>(kind: ResourceKind, fn: (obj: T) => T): void {
    const name = resourceName(kind);
    if (this.kindTransforms.has(name)) throw new Error(`${name} already has a cache transform`);
    const all = this.o.transform;
    this.informerFor<T>(kind).setTransform(all ? (obj) => fn(all(obj)) : fn);
    this.kindTransforms.add(name);
  }

  /** Register a field index, e.g. Jobs by controller owner. Before start. */
  indexField<T extends KubeObject>(kind: ResourceKind, name: string, fn: IndexFunc<T>): void {
    this.informerFor<T>(kind).addIndex(name, fn);
  }

  start(): void {
    this.started = true;
    for (const inf of this.informers.values()) inf.start();
  }

  async waitForSync(signal?: AbortSignal): Promise<boolean> {
    const results = await Promise.all([...this.informers.values()].map((i) => i.waitForSync(signal)));
    return results.every(Boolean);
  }

  hasSynced(): boolean {
    return [...this.informers.values()].every((i) => i.hasSynced());
  }

  async stop(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
  }

  get<T extends KubeObject>(kind: ResourceKind, namespace: string | undefined, name: string): Readonly<T> | undefined {
    return this.informerFor<T>(kind).get(namespace, name);
  }

  list<T extends KubeObject>(
    kind: ResourceKind,
    o: { namespace?: string; labelSelector?: string | LabelSelector } = {},
  ): Readonly<T>[] {
    return this.informerFor<T>(kind).list(o.namespace, o.labelSelector);
  }

  byIndex<T extends KubeObject>(kind: ResourceKind, index: string, value: string): Readonly<T>[] {
    return this.informerFor<T>(kind).byIndex(index, value);
  }
}

/**
 * The caller's T names the type of the kind's objects; the informer was made for that kind, so its store
 * holds exactly those. What is checked is that it is an informer; the element type is the kind's contract.
 */
function holds<T extends KubeObject>(
  inf: SharedInformer<KubeObject>,
): inf is SharedInformer<KubeObject> & SharedInformer<T> {
  return inf instanceof Informer || inf instanceof NamespacedInformer;
}
