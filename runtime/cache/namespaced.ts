// An informer over a set of namespaces that changes while it runs (controller-runtime's multi-namespace cache,
// made dynamic): one Informer per namespace, so the API server sends this process the events of its namespaces
// and no other (a namespace-scoped watch is indexed by namespace in the API server's watch cache). Namespaces are
// added and removed by the Cache as a whole (Cache.addNamespace): a namespace's objects reach the handlers only once
// every kind of it has synced, as at a manager's start, and leave them, as deletes, when it is removed.
import type { Client } from "../client.ts";
import { type KubeObject, resourceName, type ResourceKind } from "../kinds.ts";
import { type EventHandler, type IndexFunc, Informer, type InformerOptions } from "./informer.ts";
import type { LabelSelector } from "./selector.ts";

export class NamespacedInformer<T extends KubeObject = KubeObject> {
  readonly kind: ResourceKind;
  private readonly client: Client;
  private readonly o: InformerOptions;
  private readonly resource: string;
  private readonly subs = new Map<string, Informer<T>>();
  /** The namespaces whose objects the handlers have been told about (Cache.addNamespace's last step). */
  private readonly attached = new Set<string>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  private readonly handlers: EventHandler<T>[] = [];
  private transformFn: ((obj: T) => T) | undefined;
  private started = false;

  constructor(client: Client, kind: ResourceKind, o: InformerOptions = {}) {
    this.client = client;
    this.kind = kind;
    this.o = o;
    this.resource = resourceName(kind);
    this.transformFn = o.transform;
  }

  addIndex(name: string, fn: IndexFunc<T>): void {
    if (this.started) throw new Error(`index "${name}" on ${this.resource} must be added before the informer starts`);
    if (this.indexers.has(name)) throw new Error(`index "${name}" on ${this.resource} already exists`);
    this.indexers.set(name, fn);
  }

  setTransform(fn: ((obj: T) => T) | undefined): void {
    if (this.started) throw new Error(`the transform of ${this.resource} must be set before the informer starts`);
    this.transformFn = fn;
  }

  /** Told about the objects of every attached namespace (at once, as adds, for those attached already). */
  addEventHandler(h: EventHandler<T>): void {
    this.handlers.push(h);
    for (const ns of this.attached) this.subs.get(ns)?.addEventHandler(h);
  }

  start(): void {
    this.started = true;
    for (const sub of this.subs.values()) sub.start();
  }

  async stop(): Promise<void> {
    this.started = false;
    await Promise.all([...this.subs.values()].map((s) => s.stop()));
  }

  /** Synced when every namespace's informer is (no namespace yet: synced, there is nothing to wait for). */
  hasSynced(): boolean {
    return [...this.subs.values()].every((s) => s.hasSynced());
  }

  async waitForSync(signal?: AbortSignal): Promise<boolean> {
    const results = await Promise.all([...this.subs.values()].map((s) => s.waitForSync(signal)));
    return results.every(Boolean);
  }

  /** Starts watching `namespace` (its handlers wait for attach). */
  watchNamespace(namespace: string): Informer<T> {
    let sub = this.subs.get(namespace);
    if (sub) return sub;
    sub = new Informer<T>(this.client, this.kind, {
      ...this.o,
      namespace,
      ...(this.transformFn ? { transform: this.transformFn as InformerOptions["transform"] } : {}),
    });
    for (const [name, fn] of this.indexers) sub.addIndex(name, fn);
    this.subs.set(namespace, sub);
    if (this.started) sub.start();
    return sub;
  }

  /** The handlers hear of `namespace`'s objects from now on (each cached one as an add). */
  attach(namespace: string): void {
    const sub = this.subs.get(namespace);
    if (!sub || this.attached.has(namespace)) return;
    this.attached.add(namespace);
    for (const h of this.handlers) sub.addEventHandler(h);
  }

  /** Stops watching `namespace`; the handlers are told each of its objects is gone. */
  async forgetNamespace(namespace: string): Promise<void> {
    const sub = this.subs.get(namespace);
    if (!sub) return;
    this.subs.delete(namespace);
    const wasAttached = this.attached.delete(namespace);
    await sub.stop();
    if (!wasAttached) return;
    for (const obj of sub.list()) for (const h of this.handlers) callDelete(h, obj);
  }

  namespaces(): string[] {
    return [...this.subs.keys()];
  }

  get(namespace: string | undefined, name: string): Readonly<T> | undefined {
    return namespace ? this.subs.get(namespace)?.get(namespace, name) : undefined;
  }

  getByKey(key: string): Readonly<T> | undefined {
    const slash = key.indexOf("/");
    return slash < 0 ? undefined : this.subs.get(key.slice(0, slash))?.getByKey(key);
  }

  list(namespace?: string, selector?: string | LabelSelector): Readonly<T>[] {
    if (namespace) return this.subs.get(namespace)?.list(namespace, selector) ?? [];
    return [...this.subs.values()].flatMap((s) => s.list(undefined, selector));
  }

  byIndex(name: string, value: string): Readonly<T>[] {
    if (!this.indexers.has(name)) throw new Error(`no index "${name}" on ${this.resource}`);
    const out: Readonly<T>[] = [];
    for (const s of this.subs.values()) for (const o of s.byIndex(name, value)) out.push(o);
    return out;
  }

  keys(): string[] {
    return [...this.subs.values()].flatMap((s) => s.keys());
  }

  get size(): number {
    let n = 0;
    for (const s of this.subs.values()) n += s.size;
    return n;
  }
}

function callDelete<T extends KubeObject>(h: EventHandler<T>, obj: Readonly<T>): void {
  try {
    h.onDelete?.(obj);
  } catch {
    // A throwing handler must not keep the other handlers from hearing of the namespace's end.
  }
}
