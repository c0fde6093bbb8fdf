// `kubectl cron why NAME [--slot=TIME]`: one CronJob read (its namespace's Jobs, Pods and Events, the operator),
// diagnosed and printed whole. The command and the dashboard's panel call it: the page shows what the command prints.
import type { CronJob } from "../../api/v1/index.ts";
import { type Args, UsageError } from "./args.ts";
import type { Context, Output } from "./context.ts";
import { getCronJob } from "./onecronjob.ts";
import { verdictOf } from "./verdicts.ts";
import { parseSlot, whyText, zoneOf } from "./why.ts";
import { gatherFacts, gatherOperator, readClocks } from "./whyfacts.ts";

/** `why NAME [--slot=TIME]`: one CronJob's whole diagnosis, as printed (the dashboard's panel shows it too). */
export async function whyOf(
  ctx: Context,
  o: Pick<Args, "name" | "slot" | "operatorNamespace">,
): Promise<Output & { exitCode: number }> {
  const unreadable: string[] = [];
  const clocks = await readClocks(ctx.client, unreadable, ctx.now);
  const cronJob = await getCronJob(ctx, o.name);
  const operator = await gatherOperator(ctx.client, clocks.attempt, {
    operatorNamespace: o.operatorNamespace,
    cronJobs: [cronJob],
  });
  const ns = cronJob.metadata?.namespace ?? ctx.namespace;
  const [f] = await gatherFacts(ctx.client, ns, [cronJob], operator, clocks, unreadable);
  const d = verdictOf(f!, slotOf(o.slot, cronJob)).diagnosis;
  return { text: whyText(d), json: d, exitCode: d.exitCode };
}

/** --slot, in the CronJob's zone where it names no offset; undefined without it. */
export function slotOf(given: string | undefined, cronJob: CronJob): Date | undefined {
  if (given === undefined) return undefined;
  const slot = parseSlot(given, zoneOf(cronJob));
  if (!slot) {
    throw new UsageError(
      `--slot: want an RFC 3339 time (2026-11-25T02:00:00Z) or a wall-clock time in the CronJob's zone (2026-11-25T03:00); got ${JSON.stringify(given)}`,
    );
  }
  return slot;
}
