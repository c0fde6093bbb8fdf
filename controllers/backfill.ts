// The backfill request's decision (step 9): start, refuse or cancel a request, from the annotation and the
// stored progress. Pure; the run path (runs.ts) creates the slots' Jobs.
import {
  BACKFILL_ANNOTATION,
  type backfillRequestOf,
  type CronJobSchedules,
  type CronJobWireStatus,
  EventReason,
  MAX_BACKFILL_SLOTS,
} from "../api/v1/index.ts";
import { countText } from "../api/v1/schedule/index.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import type { EventDecision } from "./events.ts";

type BackfillStatus = NonNullable<CronJobWireStatus["backfill"]>;

/** Step 9's decision on the request: the status.backfill to work with, and an Event when it changes phase. */
interface BackfillDecision {
  backfill: BackfillStatus | undefined;
  event?: EventDecision;
}

/**
 * Step 9, the backfill request: a new request (a new id) starts — or is refused, with the reason (a range
 * in the future, more than MAX_BACKFILL_SLOTS slots, with the count) — replacing the one before; a running one
 * whose annotation went away (or changed) is cancelled. Otherwise the stored progress, unchanged.
 */
export function backfillDecision(o: {
  request: ReturnType<typeof backfillRequestOf>;
  stored: Readonly<BackfillStatus> | undefined;
  schedules: CronJobSchedules;
  anchor: Date;
  now: Date;
}): BackfillDecision {
  const { request, stored } = o;
  const cancel = (): BackfillDecision =>
    stored?.phase === "Running"
      ? {
          backfill: { ...stored, phase: "Cancelled" },
          event: {
            reason: EventReason.BackfillCancelled,
            message: `Backfill "${stored.id}" cancelled after ${stored.created} of ${stored.total} slots (the request was removed or replaced); Jobs already started keep running`,
          },
        }
      : { backfill: stored };
  if (!request) return cancel();
  if (!request.ok) {
    // A value that does not parse has no id or range: the refusal is written under none (never under the previous
    // request's), and reported once — the stored refusal says it was.
    const message = `${BACKFILL_ANNOTATION}: ${request.reason}`;
    if (stored?.phase === "Refused" && stored.id === undefined && stored.message === message)
      return { backfill: stored };
    const refused: BackfillStatus = { phase: "Refused", total: 0, created: 0, skipped: 0, message };
    const cancelled = stored?.phase === "Running" ? ` (replaces "${stored.id}", cancelled)` : "";
    return { backfill: refused, event: { reason: EventReason.BackfillRefused, message: message + cancelled } };
  }
  const r = request.request;
  if (stored?.id === r.id) return { backfill: stored };
  const base: BackfillStatus = {
    id: r.id,
    from: rfc3339(r.from),
    to: rfc3339(r.to),
    phase: "Running",
    total: 0,
    created: 0,
    skipped: 0,
  };
  const refuse = (message: string): BackfillDecision => ({
    backfill: { ...base, phase: "Refused", message },
    event: { reason: EventReason.BackfillRefused, message: `Backfill "${r.id}" refused: ${message}` },
  });
  if (r.to.getTime() > o.now.getTime())
    return refuse(`to (${base.to}) is in the future; a backfill runs past slots only`);
  const slots = o.schedules.backfillSlotCount(r.from, r.to, o.anchor);
  if (!slots.exact || slots.count > MAX_BACKFILL_SLOTS) {
    return refuse(
      `the range holds ${countText(slots)} slots; at most ${MAX_BACKFILL_SLOTS} may be backfilled in one request`,
    );
  }
  const started: BackfillDecision = {
    backfill: { ...base, total: slots.count },
    event: {
      reason: EventReason.BackfillStarted,
      message: `Backfill "${r.id}": ${slots.count} slots from ${base.from} to ${base.to}, at most ${r.parallelism} at a time`,
    },
  };
  // A request replacing a running one says so.
  if (stored?.phase === "Running") started.event!.message += ` (replaces "${stored.id}", cancelled)`;
  return started;
}
