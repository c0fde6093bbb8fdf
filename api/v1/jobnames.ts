// The name of a run's Job, the lock that keeps the run from being made twice: a slot's `<cronjob>-<unix seconds>`
// (here), a run-now request's `<cronjob>-m<8 hex>` (runnow.ts), a retry's `<cronjob>-r<8 hex>` (retry.ts); and so the
// Job a record entry's run has once it started. Nothing here imports the CronJob's types (cronjob_types.ts imports
// concurrencygroup_types.ts), so the group's waiting rule there (waitingRunOf) names a held run's Job without a cycle.
import { RecordTrigger } from "./reasons.ts";
import type { RecentRunWire } from "./recentruns.ts";
import { parseRetryAttempt, retryJobName } from "./retry.ts";
import { manualJobName } from "./runnow.ts";

/** Deterministic Job name for a slot: the idempotency lock against duplicate runs. */
export function jobNameFor(cronJobName: string, slot: Date): string {
  return `${cronJobName}-${Math.floor(slot.getTime() / 1000)}`;
}

/**
 * The name of the Job that runs a record entry's run (its trigger, slot and request), as the controller gives it
 * (controllers/triggers.ts): a slot's (Schedule, CatchUp, Backfill: a backfill's Job is the slot's own), a run-now
 * request's, a retry's (named from the slot's first Job and the attempt). Undefined when the entry does not say.
 */
export function runJobName(
  cronJobName: string,
  e: Readonly<Pick<RecentRunWire, "trigger" | "scheduledTime" | "request">>,
): string | undefined {
  const slot = e.scheduledTime === undefined ? undefined : new Date(e.scheduledTime);
  const slotName = slot && !Number.isNaN(slot.getTime()) ? jobNameFor(cronJobName, slot) : undefined;
  switch (e.trigger) {
    case RecordTrigger.RunNow:
      return e.request === undefined ? undefined : manualJobName(cronJobName, e.request);
    case RecordTrigger.Retry: {
      const attempt = parseRetryAttempt(e.request);
      return slotName && attempt ? retryJobName(cronJobName, slotName, attempt.k) : undefined;
    }
    default:
      return slotName;
  }
}
