// A slot's runs after its own, of the rows whose runs are never a slot's own (no slotRank: a retry's attempts), as
// `why` reads them: by the reading of the row's half where it has one (halves.ts; the retry's: the attempts, their
// failures, the next one's start), else as lines of evidence, each of the row's runs of the slot still pending (api/v1
// pendingRuns) in its row's words: a trigger added as a row is read without an edit here.
import { pendingRuns } from "../../../../api/v1/index.ts";
import { pendingLine } from "../retries.ts";
import type { FirstRun } from "./half.ts";
import { halvesOf } from "./halves.ts";
import type { SlotContext, Verdict } from "./verdict.ts";

const laterRows = () => halvesOf().filter(({ row }) => row.slotRank === undefined);

/** The verdict of the first row whose half reads the slot's later runs and has one for the slot. */
export function laterRunsVerdict(c: SlotContext, first: FirstRun): Verdict | undefined {
  for (const { half } of laterRows()) {
    const verdict = half.later?.(c, first);
    if (verdict) return verdict;
  }
  return undefined;
}

/** The slot's pending runs of the rows whose half has no reading of them, a line each. */
export function laterRunsEvidence(c: SlotContext): string[] {
  const rows = laterRows()
    .filter(({ half }) => half.later === undefined)
    .map(({ row }) => row);
  return pendingRuns(c.cronJob, rows)
    .filter((p) => p.slot.getTime() === c.slot.getTime())
    .map((p) => pendingLine(p, c.zone, c.f.now));
}
