// `kubectl cron why NAME [--slot=TIME]`: one CronJob read once (read/whyfacts.ts readOne: its namespace's Jobs, Pods and
// Events, the operator), diagnosed and printed whole (answer/answers.ts whyAnswer).
import { slotOf, whyAnswer } from "../answer/answers.ts";
import type { Args } from "../model/args.ts";
import type { Context, Output } from "../model/context.ts";
import { readOne } from "../read/whyfacts.ts";

/** `why NAME [--slot=TIME]`: one CronJob's whole diagnosis, as printed. */
export async function whyOf(
  ctx: Context,
  o: Pick<Args, "name" | "slot" | "operatorNamespace">,
): Promise<Output & { exitCode: number }> {
  const f = await readOne(ctx, o.name, { operatorNamespace: o.operatorNamespace });
  return whyAnswer(f, slotOf(o.slot, f.cronJob));
}
