// The plugin's reads: one CronJob by name (with the error that says how to list them), every object of a selection
// page by page.
import type { Client } from "../../../runtime/client.ts";
import { isNotFound } from "../../../runtime/errors.ts";
import { Kinds, type KubeObject, type ResourceKind } from "../../../runtime/kinds.ts";
import { type CronJob, CronJobResource, RESOURCE } from "../../../api/v1/index.ts";
import type { Context } from "../model/context.ts";

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

/**
 * The cluster's namespaces by name, or undefined when this user may not list them (a reader across namespaces lists
 * them one by one only where it can: runtime/cache/informer.ts listNamespaces).
 */
export function namespaceNames(client: Pick<Client, "list">): Promise<string[] | undefined> {
  return listMapped<KubeObject, string>(client, Kinds.Namespace, {}, (n) => n.metadata?.name).catch(() => undefined);
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
