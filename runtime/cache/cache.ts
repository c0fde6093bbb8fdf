// The manager's cache: one shared informer per kind, secondary indexes registered up front (like
// controller-runtime's FieldIndexer), reads served from memory.
import type { Client } from "../client.ts";
import { type KubeObject, resourceName, type ResourceKind } from "../kinds.ts";
import type { Logger } from "../log.ts";
import { type IndexFunc, Informer, type InformerOptions } from "./informer.ts";
import type { LabelSelector } from "./selector.ts";

interface CacheOptions {
  /** Watch only this namespace (default: all namespaces). */
  namespace?: string;
  resyncPeriodMs?: number;
  /** Applied to every object of every kind before it is cached (e.g. stripManagedFields). */
  transform?: <T extends KubeObject>(obj: T) => T;
  informerOptions?: Omit<InformerOptions, "namespace" | "resyncPeriodMs" | "logger">;
  logger?: Logger;
}

export class Cache {
  private readonly client: Client;
  private readonly o: CacheOptions;
  private readonly informers = new Map<string, Informer<KubeObject>>();
  private readonly kindTransforms = new Set<string>();
  private started = false;

  constructor(client: Client, o: CacheOptions = {}) {
    this.client = client;
    this.o = o;
  }

  /** The shared informer for a kind, created on first use (and started if the cache already runs). */
  informerFor<T extends KubeObject>(kind: ResourceKind): Informer<T> {
    const name = resourceName(kind);
    let inf = this.informers.get(name);
    if (!inf) {
      const opts: InformerOptions = { ...this.o.informerOptions };
      if (this.o.namespace) opts.namespace = this.o.namespace;
      if (this.o.resyncPeriodMs) opts.resyncPeriodMs = this.o.resyncPeriodMs;
      if (this.o.logger) opts.logger = this.o.logger;
      if (this.o.transform) opts.transform = this.o.transform;
      inf = new Informer(this.client, kind, opts);
      this.informers.set(name, inf);
      if (this.started) inf.start();
    }
    if (!holds<T>(inf)) throw new Error(`informer for ${name} is not an Informer`);
    return inf;
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
function holds<T extends KubeObject>(inf: Informer<KubeObject>): inf is Informer<KubeObject> & Informer<T> {
  return inf instanceof Informer;
}
