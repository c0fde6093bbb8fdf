// The verdict on a slot the record (status.recentRuns) holds a decision about: one module per decision.
import { type RecentRun, RecordDecision } from "../../../../api/v1/index.ts";
import { entryLine } from "./entry.ts";
import { heldVerdict } from "./held.ts";
import { missedVerdict } from "./missed.ts";
import { ranVerdict } from "./ran.ts";
import { refusedVerdict } from "./refused.ts";
import { skippedVerdict } from "./skipped.ts";
import { stoppedVerdict } from "./stopped.ts";
import type { SlotContext, Verdict } from "./verdict.ts";

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
