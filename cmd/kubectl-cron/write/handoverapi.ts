// The few API calls migrate/unmigrate make, behind one small interface: the real one wraps the runtime's Client, unit
// tests use an in-memory fake of it. Its reads are the plugin's own (read/api.ts); what it adds is the writes.
import type { Client } from "../../../runtime/client.ts";
import { isNotFound } from "../../../runtime/errors.ts";
import { Kinds, type KubeObject, type ResourceKind } from "../../../runtime/kinds.ts";
import type { Job } from "../../../api/v1/index.ts";
import { listAll } from "../read/api.ts";

export interface HandoverAPI {
  /** The object, or undefined when it does not exist. */
  get<T extends KubeObject>(rk: ResourceKind, namespace: string, name: string): Promise<T | undefined>;
  list<T extends KubeObject>(rk: ResourceKind, o: { namespace?: string; labelSelector?: string }): Promise<T[]>;
  /** dryRun: admission runs (webhooks included), nothing is stored. */
  create<T extends KubeObject>(rk: ResourceKind, obj: T, o?: { dryRun?: boolean }): Promise<T>;
  /** A JSON merge patch (RFC 7386), of the object or of its status subresource. */
  mergePatch<T extends KubeObject>(
    rk: ResourceKind,
    namespace: string,
    name: string,
    patch: unknown,
    o?: { status?: boolean },
  ): Promise<T>;
  /** Replaces whole members (JSON patch `add`, which replaces an existing member): e.g. /spec. */
  replaceMembers<T extends KubeObject>(
    rk: ResourceKind,
    namespace: string,
    name: string,
    members: { path: string; value: unknown }[],
  ): Promise<T>;
  /** Deletes only the object with this UID; its dependents (Jobs) are orphaned, not deleted. */
  deleteOrphaning(rk: ResourceKind, namespace: string, name: string, uid: string): Promise<void>;
  listJobs(namespace: string): Promise<Job[]>;
}

export function clientAPI(client: Client, fieldManager: string): HandoverAPI {
  return {
    async get<T extends KubeObject>(rk: ResourceKind, namespace: string, name: string) {
      try {
        return await client.get<T>(rk, namespace, name);
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
    },
    list: (rk, o) => listAll(client, rk, o),
    create: (rk, obj, o = {}) => client.create(rk, obj, { fieldManager, dryRun: o.dryRun === true }),
    mergePatch: (rk, namespace, name, patch, o = {}) =>
      client.patch(rk, namespace, name, patch, "merge", {
        fieldManager,
        ...(o.status ? { subresource: "status" } : {}),
      }),
    replaceMembers: (rk, namespace, name, members) =>
      client.patch(
        rk,
        namespace,
        name,
        members.map((m) => ({ op: "add", path: m.path, value: m.value })),
        "json",
        { fieldManager },
      ),
    deleteOrphaning: (rk, namespace, name, uid) =>
      client.delete(rk, namespace, name, { propagationPolicy: "Orphan", preconditions: { uid } }),
    async listJobs(namespace: string) {
      return this.list<Job>(Kinds.Job, { namespace });
    },
  };
}
