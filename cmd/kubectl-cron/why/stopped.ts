// Stopped: scheduling stopped after failed runs in a row (stopped-after-failures).
import { OutcomeResult } from "../../../api/v1/index.ts";
import { found, type SlotContext, type Verdict } from "./verdict.ts";

/** Scheduling stopped after failed runs in a row (status.stopped). `verb`: "did not run", or of a slot to come "will not run". */
export function stoppedVerdict(c: SlotContext, verb = "did not run"): Verdict {
  const st = c.cronJob.status?.stopped;
  const failed = (c.cronJob.status?.recentRuns ?? []).filter((e) => e.outcome?.result === OutcomeResult.Failed);
  return found(
    "stopped-after-failures",
    `${verb} at ${c.slotText}: scheduling stopped at ${st?.time ?? "?"} after ${st?.failures ?? "?"} failed runs in a row (spec.stopAfterConsecutiveFailures ${c.cronJob.spec?.stopAfterConsecutiveFailures ?? "?"})`,
    [
      `status.stopped: ${JSON.stringify(st ?? {})}`,
      ...failed
        .slice(0, 3)
        .map(
          (e) =>
            `Job ${e.job ?? "?"} failed: ${e.outcome?.reason ?? "?"}${e.outcome?.message ? ` (${e.outcome.message})` : ""}`,
        ),
    ],
    { name: c.name, namespace: c.namespace },
  );
}
