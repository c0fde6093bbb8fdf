// The retry row of the triggers' table (controllers/triggers.ts): the next attempt of a failed run while spec.retry
// has attempts left, after its delay; its books are the Jobs themselves. Pure.
import {
  classifyJob,
  type CronJobWire,
  type CronJobWireStatus,
  ENDED_REASON_ANNOTATION,
  EventReason,
  finishedAt,
  isRetryJob,
  type Job,
  jobForSlot,
  type JobSource,
  nextAttemptOwed,
  RecordDecision,
  RecordReason,
  RecordTrigger,
  retriable,
  RETRY_ATTEMPT_ANNOTATION,
  RETRY_OF_ANNOTATION,
  RETRY_ROW,
  retryAttemptOf,
  retryAttemptValue,
  retryJobName,
  retryOf,
  retrySubject,
  runFactsOf,
  scheduledTimeOf,
  type ScheduleSource,
  withScheduleSources,
} from "../api/v1/index.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import type { TimedDecision } from "./record.ts";
import {
  type CronJobView,
  type StateEvent,
  type RanView,
  type TriggerRun,
  type Trigger,
  type RunParts,
  bindRun,
  holdsAfterName,
  holdsSlot,
  jobNamed,
} from "./trigger.ts";

interface RetryRequest {
  slot: Date;
  /** The slot's first Job: its name, with k, names every attempt. */
  first: string;
  /** The attempt (1 is the first retry) and the limit when it was decided. */
  k: number;
  n: number;
  /** The attempt that failed, and how. */
  failed: string;
  why: string;
  sources?: readonly ScheduleSource[] | undefined;
}

/** The attempts of each retriable slot, by its first Job's name. */
interface Chain {
  slot: Date;
  first: string;
  /** The newest attempt known (0: the first Job). */
  latest: { k: number; job: Readonly<Job> };
}

/**
 * The slots a retry may be owed for, from the Jobs: a slot's first Job made while spec.retry was set (withRetryMark),
 * and the attempts that name it. A first Job deleted by history cleanup after its retry started is known from the
 * retry's annotations.
 */
function chainsOf(cronJob: CronJobView, jobs: readonly Readonly<Job>[]): Chain[] {
  const chains = new Map<string, Chain>();
  for (const job of jobs) {
    const slot = scheduledTimeOf(job);
    const name = job.metadata?.name ?? "";
    if (!slot) continue;
    const attempt = retryAttemptOf(job);
    const k = attempt ? attempt.k : 0;
    const first = attempt ? attempt.of : name;
    // A slot's own Job, or a run after an upstream's (spec.after): both runs spec.retry may run again.
    const ownRun = holdsSlot(cronJob, job) || holdsAfterName(cronJob, job);
    if (attempt ? !retry.ours(cronJob, job) : !(ownRun && retriable(job))) continue;
    const known = chains.get(first);
    if (!known || k > known.latest.k) chains.set(first, { slot, first, latest: { k, job } });
  }
  return [...chains.values()].sort((a, b) => a.slot.getTime() - b.slot.getTime() || a.first.localeCompare(b.first));
}

/** The next attempt a slot is owed, and whether a newer slot's run superseded it (Forbid, Replace). */
interface Owed {
  k: number;
  /** The attempt that failed, and how. */
  failed: string;
  why: string;
  /** The newer slot's run that started first under Forbid or Replace: the retry is not run. */
  newer?: Date;
}

/**
 * Whether a slot is owed its next attempt: its newest attempt failed with attempts left, and the next was never made.
 * An attempt is made once: a Job gone (Replace deleted it, or a user did) is still known from the books (the status
 * lists it active, or the record names it) or from the Job that replaced it (its run facts), so it is not made again.
 * With Forbid or Replace a newer slot's run supersedes it (the stored lastScheduleTime past its slot).
 */
function attemptOwed(
  cronJob: CronJobView & Pick<CronJobWire, "spec">,
  chain: Chain,
  jobs: readonly Readonly<Job>[],
  status: Readonly<CronJobWireStatus> | undefined,
): Owed | undefined {
  const { job, k: tried } = chain.latest;
  if (classifyJob(job) !== "failed") return undefined;
  const next = nextAttemptOwed(cronJob.spec, chain.slot, tried, status?.lastScheduleTime);
  if (!next) return undefined;
  const { k } = next;
  const nextName = retryJobName(cronJob.metadata.name ?? "", chain.first, k);
  const made =
    (status?.active ?? []).some((r) => r.name === nextName) ||
    (status?.recentRuns ?? []).some((e) => e.job === nextName || e.replaced?.includes(nextName)) ||
    jobs.some((j) => runFactsOf(j).replaced.includes(nextName));
  if (made) return undefined;
  const owed: Owed = { k, failed: job.metadata?.name ?? "", why: failureOf(job) };
  return next.newer ? { ...owed, newer: next.newer } : owed;
}

/** How a Job failed, in the record's words: its Failed condition's reason, or the operator's own (starts.ts). */
function failureOf(job: Readonly<Job>): string {
  const ended = job.metadata?.annotations?.[ENDED_REASON_ANNOTATION];
  const failed = job.status?.conditions?.find((c) => c.type === "Failed" && c.status === "True");
  return ended ?? failed?.reason ?? "Failed";
}

export const retry: Trigger<"retry"> = {
  ...RETRY_ROW,
  // It never replaces a run: a newer slot's run supersedes it instead (below).
  onReplace: "wait",
  onConflict: "next",
  // Step 9, the retry row: for each retriable slot whose newest attempt failed with attempts left, the next attempt,
  // once spec.retry.delaySeconds have passed since the failure (until then a Held entry says when). With Forbid or
  // Replace a retry does not run after a newer slot's run started (lastScheduleTime passed its slot): a Skipped entry
  // says so. The attempts are derived from the Jobs on every pass, so a crash or a leader change neither repeats nor
  // skips one.
  plan: (input) => {
    const policy = retryOf(input.cronJob.spec);
    if (!policy) return undefined;
    const { now, cronJob } = input;
    const decisions: TimedDecision[] = [];
    let wakeAt: Date | undefined;
    const requests: TriggerRun[] = [];
    for (const chain of chainsOf(cronJob, input.jobs)) {
      const owed = attemptOwed(cronJob, chain, input.jobs, input.status);
      if (!owed) continue;
      const { k, failed, why } = owed;
      const subject = {
        trigger: RecordTrigger.Retry,
        scheduledTime: chain.slot,
        request: retryAttemptValue(k, policy.limit),
        attempt: { number: k, of: policy.limit, after: failed, failure: why.slice(0, 64) },
      };
      const attempt = `attempt ${k} of ${policy.limit}`;
      if (owed.newer) {
        const message = `${attempt} not run: Job ${failed} failed (${why}), and the run of ${rfc3339(owed.newer)} started first (concurrencyPolicy ${cronJob.spec.concurrencyPolicy})`;
        decisions.push({
          decision: {
            ...subject,
            decision: RecordDecision.Skipped,
            reason: RecordReason.RetrySuperseded,
            message,
            supersededBy: owed.newer,
          },
          at: now,
        });
        continue;
      }
      const at = new Date((finishedAt(chain.latest.job) ?? now).getTime() + policy.delaySeconds * 1000);
      if (at > now) {
        const message = `${attempt} starts at ${rfc3339(at)}: Job ${failed} failed (${why}); spec.retry.delaySeconds ${policy.delaySeconds}`;
        decisions.push({
          decision: {
            ...subject,
            decision: RecordDecision.Held,
            reason: RecordReason.RetryDelay,
            message,
            startsAt: at,
          },
          at: now,
        });
        if (!wakeAt || at < wakeAt) wakeAt = at;
        continue;
      }
      const sources = input.schedules?.sourcesAt(chain.slot, input.anchor);
      requests.push(
        bindRun(retry, { slot: chain.slot, first: chain.first, k, n: policy.limit, failed, why, sources }, retryParts),
      );
    }
    return { requests, decisions, ...(wakeAt ? { wakeAt } : {}) };
  },
  keeps: (cronJob, jobs, status) => {
    const policy = retryOf(cronJob.spec);
    if (!policy) return [];
    return chainsOf(cronJob, jobs)
      .filter((c) => {
        const owed = attemptOwed(cronJob, c, jobs, status);
        return owed && !owed.newer;
      })
      .map((c) => c.latest.job.metadata?.name ?? "");
  },
  ours: (cronJob, job) => isRetryJob(cronJob.metadata.name ?? "", job),
  // Its books are the Jobs themselves: nothing in status to catch up.
  unbooked: () => false,
};

const retryParts: RunParts<RetryRequest> = {
  job: (cronJob: JobSource, r: RetryRequest) => {
    const job = withScheduleSources(jobForSlot(cronJob, r.slot), r.slot, r.sources);
    const annotations = {
      ...job.metadata?.annotations,
      [RETRY_OF_ANNOTATION]: r.first,
      [RETRY_ATTEMPT_ANNOTATION]: retryAttemptValue(r.k, r.n),
    };
    return {
      ...job,
      metadata: { ...job.metadata, name: retryJobName(cronJob.metadata.name ?? "", r.first, r.k), annotations },
    };
  },
  ran: (view: RanView, r: RetryRequest) => jobNamed(view, retryJobName(view.cronJobName, r.first, r.k)),
  held: (r: RetryRequest, running: string[]): StateEvent => ({
    reason: EventReason.JobAlreadyActive,
    message: `Not starting attempt ${r.k} of ${r.n} for ${rfc3339(r.slot)} because ${running.join(", ")} still running (a retry waits for the running Jobs under concurrencyPolicy Forbid or Replace)`,
    once: { topic: EventReason.JobAlreadyActive, key: `${rfc3339(r.slot)}/${r.k}` },
    count: "skipped_forbid",
  }),
  book: (status: Readonly<CronJobWireStatus>) => ({ ...status }),
  created: (r: RetryRequest, name: string) => ({
    event: {
      reason: EventReason.RetryCreated,
      message: `Created job ${name}: attempt ${r.k} of ${r.n} for ${rfc3339(r.slot)}, after ${r.failed} failed (${r.why})`,
    },
    count: "created",
    log: `created Job for retry ${r.k} of ${r.n} of scheduled time ${rfc3339(r.slot)}`,
  }),
  // As recorded(job) rebuilds it: how the attempt before failed is that Job's entry's outcome.
  subject: (r: RetryRequest) => retrySubject(r.slot, r.k, r.n, r.failed),
};
