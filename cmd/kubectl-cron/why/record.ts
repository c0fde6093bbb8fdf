// The verdict on a slot the record (status.recentRuns) holds a decision about: one module per decision.
import { type RecentRun, RecordDecision } from "../../../api/v1/index.ts";
import { heldVerdict } from "./held.ts";
import { missedVerdict } from "./missed.ts";
import { ranVerdict } from "./ran.ts";
import { refusedVerdict } from "./refused.ts";
import { skippedVerdict } from "./skipped.ts";
import { stoppedVerdict } from "./stopped.ts";
import { type SlotContext, stamp, type Verdict } from "./verdict.ts";

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

/** The verdict on a slot the record holds a decision about: one module per decision. */
export function recordVerdict(c: SlotContext, e: RecentRun): Verdict {
  const evidence = [entryLine(e)];
  switch (e.decision) {
    case RecordDecision.Created:
    case RecordDecision.Adopted:
      return ranVerdict(c, e.job ? c.jobNamed(e.job) : undefined, e);
    case RecordDecision.Held:
      return heldVerdict(c, e, evidence);
    case RecordDecision.Missed:
      return missedVerdict(c, e, evidence);
    case RecordDecision.Skipped:
      return skippedVerdict(c, e, evidence);
    case RecordDecision.Refused:
      return refusedVerdict(c, e, evidence);
    case RecordDecision.Stopped:
      return stoppedVerdict(c);
  }
}
