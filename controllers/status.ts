// The status fields that hold "the newest of" something the Jobs show. Pure: the reconciler's step 4 and the
// property tests call the same function.
import type { Job } from "../api/v1/index.ts";
import { classifyJob, finishedAt, scheduledTimeOf } from "../api/v1/index.ts";

export interface NewestTimes {
  /** The newest slot the schedule ran (a scheduled Job's scheduled time). */
  lastScheduleTime?: Date;
  /** The newest finish of a successful Job. */
  lastSuccessfulTime?: Date;
  /** The newest finish of a failed Job. */
  lastFailedTime?: Date;
}

const newer = (a: Date | undefined, b: Date | undefined): Date | undefined => (a && (!b || a > b) ? a : b);

/**
 * Each field is the newest of what status already held and what the listed Jobs show. Never older than
 * `prev`: the times survive history cleanup (the Jobs that set them may be gone), a lost status is rebuilt from
 * the Jobs, and the order the Jobs are listed or finish in cannot lower them.
 */
export function newestTimes(
  prev: Readonly<NewestTimes>,
  jobs: readonly Readonly<Job>[],
  /** The Jobs whose slot lastScheduleTime holds (the schedule's own: not a backfill's or a run-now's). */
  isScheduled: (job: Readonly<Job>) => boolean = () => true,
): NewestTimes {
  let { lastScheduleTime, lastSuccessfulTime, lastFailedTime } = prev;
  for (const job of jobs) {
    if (isScheduled(job)) lastScheduleTime = newer(scheduledTimeOf(job), lastScheduleTime);
    const kind = classifyJob(job);
    if (kind === "active") continue;
    const done = finishedAt(job);
    if (kind === "successful") lastSuccessfulTime = newer(done, lastSuccessfulTime);
    else lastFailedTime = newer(done, lastFailedTime);
  }
  return {
    ...(lastScheduleTime ? { lastScheduleTime } : {}),
    ...(lastSuccessfulTime ? { lastSuccessfulTime } : {}),
    ...(lastFailedTime ? { lastFailedTime } : {}),
  };
}
