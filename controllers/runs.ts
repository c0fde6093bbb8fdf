// The one admission rule of the run path: every run — a due slot, a caught-up slot, a run-now request, a backfill
// slot — is admitted by the concurrency policy and its trigger's own limit, both read from the trigger's row
// (triggers.ts). Pure.
import type { Job } from "../api/v1/index.ts";
import type { StateEvent, TriggerRun } from "./triggers.ts";

/** Admission's answer: run (after deleting `replace`, Replace's running Jobs), or wait. */
type Admission = { run: true; replace: readonly Readonly<Job>[] } | { run: false; held?: StateEvent };

/**
 * The one admission rule. `active`: every Job of the CronJob known to run this pass — the cache's, the ones the
 * cache has not caught up with (confirmed by a live read, or created or adopted earlier in this pass) — so a
 * limit can never be exceeded by a lagging cache.
 */
export function admit(
  concurrencyPolicy: string | undefined,
  r: TriggerRun,
  active: readonly Readonly<Job>[],
  /**
   * Whether Replace may delete a running Job (observe.ts mayReplace): its run is in the stored status's books. Until
   * then the Job (its name) is the run's only trace, and a pass reading a status from before it would run the slot
   * again.
   */
  replaceable: (job: Readonly<Job>) => boolean = () => true,
): Admission {
  if (active.length > 0) {
    const running = active.map((j) => j.metadata?.name ?? "");
    if (concurrencyPolicy === "Forbid" || (concurrencyPolicy === "Replace" && r.row.onReplace === "wait")) {
      const held = r.held?.(running);
      return held ? { run: false, held } : { run: false };
    }
    // Replace waits for the books: a run this pass (or a pass whose status write is not stored yet) started is
    // replaced by a later pass.
    if (concurrencyPolicy === "Replace")
      return active.every(replaceable) ? { run: true, replace: active } : { run: false };
  }
  const room = r.room?.(active);
  if (room !== undefined && room <= 0) return { run: false };
  return { run: true, replace: [] };
}
