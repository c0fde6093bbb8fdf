// `kubectl cron instances [-n NS | -A]`: which install and instance runs each claimed namespace, and each install's
// instance Leases. Reads once (read/claims.ts: the namespace's claim by name, or every claim by its label; the instance
// Leases), then answers (answer/instances.ts). A read the user may not make is said, not thrown.
import type { Args } from "../model/args.ts";
import type { Context, Output } from "../model/context.ts";
import { instancesAnswer } from "../answer/instances.ts";
import { readInstances } from "../read/claims.ts";
import { readClocks } from "../read/clocks.ts";

export async function instances(
  ctx: Context,
  args: Pick<Args, "allNamespaces">,
): Promise<Output & { exitCode: number }> {
  const unreadable: string[] = [];
  const clocks = await readClocks(ctx.client, unreadable, ctx.now);
  const namespace = args.allNamespaces ? undefined : ctx.namespace;
  const read = await readInstances(ctx.client, clocks.attempt, namespace);
  return instancesAnswer({ ...read, namespace, unreadable, now: clocks.now });
}
