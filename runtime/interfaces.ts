// The narrow seams a reconciler depends on (controller-runtime's client.Reader, client.Writer,
// client.StatusWriter and the cache's indexed reads), so it can be handed the real Client and Cache or
// the in-memory fake (runtime/fake/client.ts) without knowing which. The real classes satisfy them
// structurally; nothing here adds behaviour.
import type { DeleteOptions, ListOptions, ListResult, WriteOptions } from "./client.ts";
import type { IndexFunc } from "./cache/informer.ts";
import type { LabelSelector } from "./cache/selector.ts";
import type { KubeObject, ResourceKind } from "./kinds.ts";

/** Live reads from the API server (client.Reader). */
export interface ObjectReader {
  get<T extends KubeObject>(
    rk: ResourceKind,
    namespace: string | undefined,
    name: string,
    o?: { signal?: AbortSignal },
  ): Promise<T>;
  list<T extends KubeObject>(rk: ResourceKind, o?: ListOptions): Promise<ListResult<T>>;
}

/** Writes of whole objects (client.Writer, without patch: no reconciler here patches). */
export interface ObjectWriter {
  create<T extends KubeObject>(rk: ResourceKind, obj: T, o?: WriteOptions): Promise<T>;
  /** Conditional on the object's resourceVersion (Conflict if stale); ignores status where it is a subresource. */
  update<T extends KubeObject>(rk: ResourceKind, obj: T, o?: WriteOptions): Promise<T>;
  delete(rk: ResourceKind, namespace: string | undefined, name: string, o?: DeleteOptions): Promise<void>;
}

/** Writes to the status subresource: only status changes (client.StatusWriter). */
export interface StatusWriter {
  updateStatus<T extends KubeObject>(rk: ResourceKind, obj: T, o?: WriteOptions): Promise<T>;
}

export type ObjectClient = ObjectReader & ObjectWriter & StatusWriter;

/**
 * Reads served from memory (the informer cache): synchronous, possibly behind the API server, and the
 * same frozen object until it changes.
 */
export interface CacheReader {
  get<T extends KubeObject>(kind: ResourceKind, namespace: string | undefined, name: string): Readonly<T> | undefined;
  list<T extends KubeObject>(
    kind: ResourceKind,
    o?: { namespace?: string; labelSelector?: string | LabelSelector },
  ): Readonly<T>[];
  byIndex<T extends KubeObject>(kind: ResourceKind, index: string, value: string): Readonly<T>[];
}

/** What a controller registers on the cache before it starts (controller-runtime's FieldIndexer, ByObject transform). */
export interface CacheIndexer {
  setTransform<T extends KubeObject>(kind: ResourceKind, fn: (obj: T) => T): void;
  indexField<T extends KubeObject>(kind: ResourceKind, name: string, fn: IndexFunc<T>): void;
}
