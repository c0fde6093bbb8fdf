// Stopped: scheduling stopped after failed runs in a row (stopped-after-failures).
import { OutcomeResult } from "../../../../api/v1/index.ts";
import { found, type SlotContext, type Verdict } from "./verdict.ts";

/** Scheduling stopped after failed runs in a row (status.stopped), about a slot past or (`toCome`) still to come. */
export function stoppedVerdict(c: SlotContext, toCome = false): Verdict {
  const st = c.cronJob.status?.stopped;
  const failed = (c.cronJob.status?.recentRuns ?? []).filter((e) => e.outcome?.result === OutcomeResult.Failed);
  return found(
    "stopped-after-failures",
    {
      when: c.slotText,
      toCome,
      stoppedAt: st?.time ?? "?",
      failures: String(st?.failures ?? "?"),
      limit: String(c.cronJob.spec?.stopAfterConsecutiveFailures ?? "?"),
      name: c.name,
      namespace: c.namespace,
    },
    [
      `status.stopped: ${JSON.stringify(st ?? {})}`,
      ...failed
        .slice(0, 3)
        .map(
          (e) =>
            `Job ${e.job ?? "?"} failed: ${e.outcome?.reason ?? "?"}${e.outcome?.message ? ` (${e.outcome.message})` : ""}`,
        ),
    ],
  );
}
