// A slot's runs after its own, of the rows whose runs are never a slot's own (no slotRank: a retry's attempts), as
// `why` reads them: by the row's own reading where it has one (retry.ts: the attempts, their failures, the next
// one's start), else as lines of evidence, each of the row's runs of the slot still pending (api/v1 pendingRuns) in its
// row's words: a trigger added as a row is read without an edit here.
import { type Job, pendingRuns, type RecentRun, TRIGGER_ROWS } from "../../../../api/v1/index.ts";
import { pendingLine } from "../retries.ts";
import { retryVerdict } from "./retry.ts";
import type { SlotContext, Verdict } from "./verdict.ts";

/** A row's reading of a slot from its first run (its Job, its entry): undefined when the row has nothing to say. */
type Reading = (
  c: SlotContext,
  first: { job?: Readonly<Job> | undefined; entry?: RecentRun | undefined },
) => Verdict | undefined;

/** The rows with a reading of their own, by name. */
const READINGS: Readonly<Record<string, Reading>> = { retry: retryVerdict };

const laterRows = () => TRIGGER_ROWS.filter((r) => r.slotRank === undefined);

/** The verdict of the first row with a reading of its own that has one for the slot. */
export function laterRunsVerdict(
  c: SlotContext,
  first: { job?: Readonly<Job> | undefined; entry?: RecentRun | undefined },
): Verdict | undefined {
  for (const row of laterRows()) {
    const verdict = READINGS[row.name]?.(c, first);
    if (verdict) return verdict;
  }
  return undefined;
}

/** The slot's pending runs of the rows with no reading of their own, a line each. */
export function laterRunsEvidence(c: SlotContext): string[] {
  const rows = laterRows().filter((r) => READINGS[r.name] === undefined);
  return pendingRuns(c.cronJob, rows)
    .filter((p) => p.slot.getTime() === c.slot.getTime())
    .map((p) => pendingLine(p, c.zone, c.f.now));
}
