// Skipped: missedRunPolicy chose not to run the slot (policy-skipped), or an exclusion window held it (excluded.ts).
import { type RecentRun, RECORD_REASONS, RecordReason, SKIPPED_REASONS } from "../../../../api/v1/index.ts";
import { iso } from "../../model/time.ts";
import { excludedVerdict } from "./excluded.ts";
import { found, type SlotContext, type Verdict } from "./verdict.ts";

/** What each reason of a Skipped entry means (api/v1 SKIPPED_REASONS, as the reconciler writes them). */
const SKIP_REASONS: Record<string, string> = Object.fromEntries(
  SKIPPED_REASONS.map((r) => [r, RECORD_REASONS[r].description]),
);

/** A Skipped entry: missedRunPolicy chose not to run the slot. */
export function skippedVerdict(c: SlotContext, e: RecentRun, evidence: string[]): Verdict {
  const excluded = e.reason === RecordReason.ExcludedByCalendar ? excludedVerdict(c, e, c.slot > c.f.now) : undefined;
  if (excluded) return excluded;
  const { cronJob, slotText: when } = c;
  const now = cronJob.spec?.missedRunPolicy ?? "RunLatest";
  return found(
    "policy-skipped",
    {
      when,
      reason: e.reason,
      ...(SKIP_REASONS[e.reason] ? { policy: SKIP_REASONS[e.reason] } : {}),
      name: c.name,
      namespace: c.namespace,
      slot: iso(c.slot),
    },
    [
      ...evidence,
      ...(SKIP_REASONS[e.reason] && !SKIP_REASONS[e.reason]!.includes(`missedRunPolicy ${now} `)
        ? [`spec.missedRunPolicy is ${now} now (changed since the decision)`]
        : []),
    ],
  );
}
