// The schedule's row of the triggers' table (controllers/triggers.ts): the due slots a pass runs, their Jobs, and
// lastScheduleTime (and status.scheduledRuns) as its books. Pure.
import {
  type CronJobWireStatus,
  DEFAULT_MAX_CATCH_UP_RUNS,
  EventReason,
  jitterOffsetSeconds,
  jitterSecondsOf,
  jobForSlot,
  jobNameFor,
  type JobSource,
  MAX_CATCH_UP_SLOTS,
  maxRunsOf,
  runsLeft,
  SCHEDULE_ROW,
  scheduledTimeOf,
  slotSubject,
  withJitterOffset,
  withRetryMark,
  withRunFacts,
  withScheduleSources,
} from "../api/v1/index.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import {
  type StateEvent,
  type Handled,
  type RanView,
  type Trigger,
  type RunParts,
  bindRun,
  holdsSlot,
  jobNamed,
  type SlotRequest,
} from "./trigger.ts";

/** spec.maxCatchUpRuns as stored, bounded: the CRD bounds it to 1–100, a value outside must not stop every pass. */
function catchUpCap(stored: unknown): number {
  return typeof stored === "number" && Number.isInteger(stored) && stored >= 1
    ? Math.min(stored, MAX_CATCH_UP_SLOTS)
    : DEFAULT_MAX_CATCH_UP_RUNS;
}

const slotJob = (cronJob: JobSource, r: SlotRequest) =>
  withScheduleSources(jobForSlot(cronJob, r.slot), r.slot, r.sources);

export const schedule: Trigger<"schedule"> = {
  ...SCHEDULE_ROW,
  onReplace: "replace",
  // A foreign Job holding a due slot's name is refused (the record says so) and the walk goes on: with RunAll the
  // newer missed slots run, and lastScheduleTime passes the refused one. Stopping there held every later slot
  // back until RunAll's cap dropped the refused one, a hundred slots later.
  onConflict: "next",
  // Step 9, the schedule's row: the due slots (one, unless missedRunPolicy RunAll catches up), oldest first, at most
  // spec.maxCatchUpRuns per pass.
  // spec.maxRuns: no more start than it has left (the guards stop scheduling once none is).
  plan: (input) => {
    const left = runsLeft(input.cronJob.spec, input.status);
    const counted = left !== undefined;
    const jitter = jitterSecondsOf(input.cronJob.spec);
    const { namespace = "", name = "" } = input.cronJob.metadata;
    return {
      max: Math.min(catchUpCap(input.cronJob.spec.maxCatchUpRuns), left ?? Infinity),
      requests: input.due.map((slot, i) =>
        bindRun(
          schedule,
          {
            slot,
            sources: input.schedules?.sourcesAt(slot, input.anchor),
            catchUp: i < input.due.length - 1,
            counted,
            // Jittered: every slot has an offset, 0 included (its Job says so); none without spec.jitter.
            ...(jitter > 0 ? { offset: jitterOffsetSeconds({ namespace, name }, slot, jitter) } : {}),
          },
          scheduleParts,
        ),
      ),
    };
  },
  ours: holdsSlot,
  unbooked: (cronJob, job) => {
    const slot = scheduledTimeOf(job);
    const last = cronJob.status?.lastScheduleTime;
    return holdsSlot(cronJob, job) && !!slot && (!last || slot.getTime() > Date.parse(last));
  },
  // status.scheduledRuns, counted while spec.maxRuns is set: the stored count and every Job of a slot the stored
  // status has not booked (created before a crash, or in a pass whose write is still to come), so a repeated pass
  // counts a run once; gone when spec.maxRuns is unset.
  observe: (status, cronJob, jobs) => {
    const { scheduledRuns: _counted, ...rest } = status;
    if (maxRunsOf(cronJob.spec) === undefined) return rest;
    const unbooked = jobs.filter((j) => schedule.unbooked(cronJob, j)).length;
    return { ...rest, scheduledRuns: (cronJob.status?.scheduledRuns ?? 0) + unbooked };
  },
};

const scheduleParts: RunParts<SlotRequest> = {
  // A catch-up slot's Job says so, for the record rebuilt from it (api/v1/recentruns.ts); one made with spec.retry
  // set may be retried (retry's row).
  job: (cronJob: JobSource, r: SlotRequest) =>
    withJitterOffset(withRetryMark(withRunFacts(slotJob(cronJob, r), { catchUp: r.catchUp }), cronJob.spec), r.offset),
  // The slot ran if status says so, or a Job of ours holds its name: in the cache, or listed in status.active
  // (confirmed by the API server in step 3: a Job the cache has not seen yet).
  ran: (view: RanView, r: SlotRequest) => {
    const last = view.status.lastScheduleTime;
    if (last && new Date(last) >= r.slot) return { ran: true };
    const name = jobNameFor(view.cronJobName, r.slot);
    const held = jobNamed(view, name);
    if (held.ran) return held;
    return view.status.active?.some((a) => a.name === name) ? { ran: true } : { ran: false };
  },
  held: (r: SlotRequest): StateEvent => ({
    reason: EventReason.JobAlreadyActive,
    message: `Not starting job for ${rfc3339(r.slot)} because a previous job is still running (concurrencyPolicy Forbid)`,
    once: { topic: EventReason.JobAlreadyActive, key: rfc3339(r.slot) },
    count: "skipped_forbid",
  }),
  // lastScheduleTime is the schedule's alone: the base the next missed slots are counted from. A slot that ran
  // already changes nothing.
  book: (status: Readonly<CronJobWireStatus>, r: SlotRequest, rec: Handled): CronJobWireStatus =>
    rec.result === "created" || rec.result === "adopted"
      ? {
          ...status,
          lastScheduleTime: rfc3339(r.slot),
          ...(r.counted ? { scheduledRuns: (status.scheduledRuns ?? 0) + 1 } : {}),
        }
      : { ...status },
  // A jittered slot's run was due at its start: the creation skew counts from it.
  dueAt: (r: SlotRequest) => startOf(r),
  created: (r: SlotRequest, name: string) => ({
    event: { reason: EventReason.SuccessfulCreate, message: `Created job ${name}` },
    count: "created",
    log: `created Job for scheduled time ${rfc3339(r.slot)}`,
  }),
  subject: (r: SlotRequest) => slotSubject(r.slot, r.catchUp, startOf(r)),
};

/** When a slot's run was due: the slot plus its jitter offset. */
const startOf = (r: SlotRequest) => new Date(r.slot.getTime() + (r.offset ?? 0) * 1000);
