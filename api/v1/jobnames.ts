// The name of a slot's Job, `<cronjob>-<unix seconds>`: the lock that keeps the slot's run from being made twice. A
// run-now request's is `<cronjob>-m<8 hex>` (runnow.ts), a retry's `<cronjob>-r<8 hex>` (retry.ts); the Job a record
// entry's run has is its trigger's row's (triggers.ts runJobName).

/** Deterministic Job name for a slot: the idempotency lock against duplicate runs. */
export function jobNameFor(cronJobName: string, slot: Date): string {
  return `${cronJobName}-${Math.floor(slot.getTime() / 1000)}`;
}
