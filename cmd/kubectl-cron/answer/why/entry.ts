// A record entry (status.recentRuns) as the verdicts quote it in their evidence. Its own module, below record.ts:
// record.ts picks the verdict module for an entry's decision, and those modules (ran.ts, excluded.ts, ...) quote the
// entry too, so the line cannot live in record.ts without each of them importing it back.
import type { RecentRun } from "../../../../api/v1/index.ts";
import { stamp } from "./verdict.ts";

/** The entry in one line: its slot or request, trigger, decision and reason, when it was decided, its Job, its end. */
export function entryLine(e: RecentRun): string {
  const parts = [
    `status.recentRuns: ${e.scheduledTime ? stamp(e.scheduledTime) : (e.request ?? "")} ${e.trigger} ${e.decision} (${e.reason})`,
  ];
  parts.push(`decided ${stamp(e.decidedAt)}`);
  if (e.job) parts.push(`Job ${e.job}`);
  if (e.blockedBy) parts.push(`behind Job ${e.blockedBy}`);
  if (e.outcome)
    parts.push(
      `ended ${e.outcome.result}${e.outcome.reason ? ` (${e.outcome.reason})` : ""}${e.outcome.finishedAt ? ` at ${stamp(e.outcome.finishedAt)}` : ""}`,
    );
  if (e.message) parts.push(e.message);
  return parts.join(", ");
}
