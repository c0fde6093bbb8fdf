// The backfill row of the triggers' table (controllers/triggers.ts): a backfill request's slots, oldest first, at its
// parallelism; status.backfill books its progress. Pure.
import {
  BACKFILL_ROW,
  backfillRequestOf,
  backfillSubject,
  type CronJobWireStatus,
  EventReason,
  type Job,
  jobForBackfill,
  jobNameFor,
  type JobSource,
  MAX_BACKFILL_SLOTS,
  requestIdOf,
  scheduledTimeOf,
  withScheduleSources,
} from "../api/v1/index.ts";
import { slotsInRange } from "../api/v1/schedule/index.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import { backfillDecision } from "./backfill.ts";
import {
  type Handled,
  type RanView,
  type Trigger,
  type RunParts,
  bindRun,
  holdsSlot,
  jobNamed,
  type SlotRequest,
} from "./trigger.ts";

interface BackfillSlot extends SlotRequest {
  id: string;
  parallelism: number;
}

type BackfillStatus = NonNullable<CronJobWireStatus["backfill"]>;

/** status with `backfill` set (or removed). */
function withBackfill(status: Readonly<CronJobWireStatus>, bf: BackfillStatus | undefined): CronJobWireStatus {
  const { backfill: _old, ...rest } = status;
  return bf ? { ...rest, backfill: bf } : rest;
}

export const backfill: Trigger<"backfill"> = {
  ...BACKFILL_ROW,
  // A backfill never replaces a run: with Forbid or Replace it runs one Job at a time, when nothing runs.
  onReplace: "wait",
  // A foreign Job holding a slot's name is counted skipped, and the walk goes on.
  onConflict: "next",
  // Step 9, the backfill row: a request (backfill.ts decides whether it starts, is refused or cancelled), worked
  // through oldest slot first after status.backfill.lastSlot. A slot whose Job exists (scheduled, run by an earlier
  // request, or by this one before a crash) is not run again; admission holds the rest to the request's
  // parallelism.
  plan: (input) => {
    const { cronJob, now } = input;
    const request = backfillRequestOf(cronJob);
    // A backfill skips the slots spec.exclusions holds, as the schedule did, unless the request includes them.
    const schedules = request?.ok && request.request.includeExcluded ? input.written : input.schedules;
    if (!schedules || (!request && !input.status.backfill)) return undefined;
    const anchor = new Date(cronJob.metadata.creationTimestamp ?? now);
    const decision = backfillDecision({ request, stored: input.status.backfill, schedules, anchor, now });
    const bf = decision.backfill;
    const status = withBackfill(input.status, bf);
    const events = decision.event ? [decision.event] : [];
    if (!bf || bf.phase !== "Running" || !request?.ok) return { requests: [], status, events };
    const { id, parallelism, from, to } = request.request;
    const pending = slotsInRange(schedules.schedule, from, to, {
      ...(bf.lastSlot ? { after: new Date(bf.lastSlot) } : {}),
      max: MAX_BACKFILL_SLOTS,
      anchor,
    });
    return {
      status,
      events,
      requests: pending.map((slot) =>
        bindRun(backfill, { slot, id, parallelism, sources: schedules.sourcesAt(slot, anchor) }, backfillParts),
      ),
      finish: (after, complete) => {
        const done = after.backfill;
        if (!complete || !done || done.phase !== "Running") return { status: { ...after }, events: [] };
        return {
          status: withBackfill(after, { ...done, phase: "Complete" }),
          events: [
            {
              reason: EventReason.BackfillComplete,
              message: `Backfill "${id}" complete: ${done.created} slots run, ${done.skipped} already had their Job`,
            },
          ],
        };
      },
    };
  },
  ours: holdsSlot,
  unbooked: (cronJob, job) => {
    if (!holdsSlot(cronJob, job)) return false;
    const id = requestIdOf(backfill, job);
    const current = backfillRequestOf(cronJob);
    if (!current?.ok || current.request.id !== id) return false;
    const bf = cronJob.status?.backfill;
    if (!bf || bf.id !== id) return true;
    const slot = scheduledTimeOf(job);
    return bf.phase === "Running" && !!slot && (!bf.lastSlot || slot.getTime() > Date.parse(bf.lastSlot));
  },
};

const backfillParts: RunParts<BackfillSlot> = {
  job: (cronJob: JobSource, r: BackfillSlot) =>
    withScheduleSources(jobForBackfill(cronJob, r.slot, r.id), r.slot, r.sources),
  ran: (view: RanView, r: BackfillSlot) => jobNamed(view, jobNameFor(view.cronJobName, r.slot)),
  room: (r: BackfillSlot, active: readonly Readonly<Job>[]) =>
    r.parallelism - active.filter((j) => requestIdOf(backfill, j) === r.id).length,
  book: backfillBook,
  created: (r: BackfillSlot, name: string) => ({
    event: { reason: EventReason.SuccessfulCreate, message: `Created job ${name} (backfill "${r.id}")` },
    count: "created",
    log: `created Job for backfill "${r.id}" slot ${rfc3339(r.slot)}`,
  }),
  subject: (r: BackfillSlot) => backfillSubject(r.slot, r.id),
};

/**
 * The backfill's book, status.backfill: a handled slot is `created` when this request's Job runs it (created now,
 * or found: created by this request before a crash lost the status write), `skipped` when another Job holds it
 * (scheduled, an earlier request's, a foreign Job); either way its progress moves past the slot.
 */
export function backfillBook(
  status: Readonly<CronJobWireStatus>,
  r: { slot: Date; id: string },
  rec: Handled,
): CronJobWireStatus {
  const bf = status.backfill;
  if (!bf) return { ...status };
  const ours =
    rec.result === "created" || (rec.result !== "conflict" && !!rec.job && requestIdOf(backfill, rec.job) === r.id);
  const counted = ours ? { ...bf, created: bf.created + 1 } : { ...bf, skipped: bf.skipped + 1 };
  return withBackfill(status, { ...counted, lastSlot: rfc3339(r.slot) });
}
