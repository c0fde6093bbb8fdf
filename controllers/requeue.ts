// When the pass that just decided reconciles again: the earliest of the next slot (or an excluded one before it, or
// at once while RunAll's per-pass cap left slots), a trigger's request not due yet (a retry's delay), and the next
// start limit to pass (spec.startTimeoutSeconds). Pure.

/**
 * Requeue slightly after the slot so the reconcile sees it as due. Every Job starts this much late, so it is
 * small: a timer that fires early only costs one more pass (the slot is not due yet; requeued for it again).
 */
export const REQUEUE_SLACK_MS = 10;

/** Reconcile again after this many milliseconds; undefined: nothing to wake for (not scheduling). */
export function requeueAfter(o: {
  /** The next slot that runs (step 7); none while not scheduling. */
  next: Date | undefined;
  /** Slots are left over by RunAll's per-pass cap (step 9). */
  more: boolean;
  /** The next slot of the schedules as written, an excluded one included (step 7's exclusions). */
  excludedNext: Date | undefined;
  /** The earliest request a trigger has that is not due yet (step 9). */
  wakeAt: Date | undefined;
  /** The earliest instant (ms) a running Job's start limit passes (step 4). */
  nextCheckAt: number | undefined;
  /** The clock's time, not truncated to the second. */
  clockNow: Date;
}): number | undefined {
  const { next, excludedNext, clockNow } = o;
  const after = (at: number) => Math.max(at - clockNow.getTime(), 0) + REQUEUE_SLACK_MS;
  let ms: number | undefined;
  if (next) {
    // Slots left over by RunAll's per-pass cap follow at once (the others' Jobs came first). Woken from the
    // untruncated time: waking up to a second late would add that to every Job's start.
    const wake = o.more ? clockNow : excludedNext && excludedNext < next ? excludedNext : next;
    ms = after(wake.getTime());
  }
  if (o.wakeAt) ms = Math.min(ms ?? Infinity, after(o.wakeAt.getTime()));
  if (o.nextCheckAt !== undefined) ms = Math.min(ms ?? Infinity, after(o.nextCheckAt));
  return ms;
}
