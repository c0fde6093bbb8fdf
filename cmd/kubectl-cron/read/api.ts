// The plugin's reads: one CronJob by name (with the error that says how to list them), every object of a selection
// page by page; and the few API calls migrate/unmigrate make, behind one small interface (the real one wraps the
// runtime's Client, unit tests use an in-memory fake of it).
import type { Client } from "../../../runtime/client.ts";
import { isNotFound } from "../../../runtime/errors.ts";
import { Kinds, type KubeObject, type ResourceKind } from "../../../runtime/kinds.ts";
import { type CronJob, CronJobResource, type Job, RESOURCE } from "../../../api/v1/index.ts";
import type { Context } from "../model/context.ts";

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

/** Every object the selection holds, read in pages of 500 (a large namespace is never one huge response). */
export async function listAll<T extends KubeObject>(
  client: Pick<Client, "list">,
  rk: ResourceKind,
  o: { namespace?: string; labelSelector?: string },
): Promise<T[]> {
  return listMapped<T, T>(client, rk, o, (x) => x);
}

/**
 * Every object the selection holds, read in pages of 500 and each mapped as its page arrives (`undefined`: left
 * out): only what `map` keeps outlives its page, not the whole objects.
 */
export async function listMapped<T extends KubeObject, U>(
  client: Pick<Client, "list">,
  rk: ResourceKind,
  o: { namespace?: string; labelSelector?: string },
  map: (item: T) => U | undefined,
): Promise<U[]> {
  const out: U[] = [];
  let cont: string | undefined;
  do {
    const page = await client.list<T>(rk, { ...o, limit: 500, continue: cont });
    for (const item of page.items) {
      const u = map(item);
      if (u !== undefined) out.push(u);
    }
    cont = page.metadata.continue || undefined;
  } while (cont);
  return out;
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

/** A CronJob of the context's namespace by name; not found: an error saying how to list them. */
export async function getCronJob(ctx: Pick<Context, "client" | "namespace">, name: string): Promise<CronJob> {
  try {
    return await ctx.client.get<CronJob>(CronJobResource, ctx.namespace, name);
  } catch (e) {
    if (isNotFound(e)) {
      throw new Error(
        `cronjob ${JSON.stringify(name)} not found in namespace ${JSON.stringify(ctx.namespace)} ` +
          `(list them: kubectl get ${RESOURCE} -n ${ctx.namespace}; another namespace: -n NS)`,
        { cause: e },
      );
    }
    throw e;
  }
}
