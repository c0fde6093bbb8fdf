// The after row of the triggers' table (controllers/triggers.ts): a run after each run of an upstream that ended as
// spec.after's `when` says; status.upstreams books them. Pure.
import {
  AFTER_ANNOTATION,
  AFTER_ROW,
  afterJobName,
  afterRequest,
  afterSubject,
  type CronJobWireStatus,
  endedRuns,
  EventReason,
  type Job,
  jobForSlot,
  type JobSource,
  parseAfterRequest,
  RecordDecision,
  RecordReason,
  requestIdOf,
  scheduledTimeOf,
  withRetryMark,
} from "../api/v1/index.ts";
import { afterPolicyOf } from "../api/v1/join.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import { bookOf, withUpstreamBooks } from "./upstreambooks.ts";
import { joinPlan, joinUnbooked } from "./trigger-join.ts";
import type { TimedDecision } from "./record.ts";
import {
  type StateEvent,
  type RanView,
  type TriggerRun,
  type Trigger,
  type RunParts,
  bindRun,
  holdsAfterName,
  holdsJoinName,
  jobNamed,
} from "./trigger.ts";

interface AfterRequest {
  upstream: string;
  /** The upstream's Job whose end this run follows, and when it ended (the run's slot). */
  job: string;
  ended: Date;
  when: string;
}

/** How long after an upstream run's end a pass may first see it and still count it on time (missedRunPolicy Skip). */
const AFTER_ON_TIME_MS = 60_000;

/** The after row's book after a decided upstream run: it and every older one are decided. */
const decided = (status: Readonly<CronJobWireStatus>, upstream: string, job: string, ended: Date) =>
  withUpstreamBooks(status, [{ cronJob: upstream, lastEnded: rfc3339(ended), lastJob: job }]);

/**
 * Which of an upstream's unanswered runs a pass runs after, by spec.missedRunPolicy (as for missed slots): RunAll
 * every one, oldest first; RunLatest (the default) the newest, the older ones Skipped; Skip those whose end the
 * operator saw within a minute (a run that ended while it was down is Skipped). A run whose end is older than
 * startingDeadlineSeconds is Missed, whatever the policy.
 */
function afterDecisions(
  pending: readonly { job: Readonly<Job>; ended: Date }[],
  policy: string | undefined,
  deadline: number | undefined,
  clockNow: Date,
): { run: typeof pending; skipped: { r: (typeof pending)[number]; reason: RecordReason; message: string }[] } {
  const skipped: { r: (typeof pending)[number]; reason: RecordReason; message: string }[] = [];
  let run = [...pending];
  if (deadline !== undefined) {
    const cutoff = clockNow.getTime() - deadline * 1000;
    for (const r of run.filter((p) => p.ended.getTime() < cutoff))
      skipped.push({
        r,
        reason: RecordReason.StartingDeadlineExceeded,
        message: `not run: its upstream run ended at ${rfc3339(r.ended)}, more than startingDeadlineSeconds ${deadline} ago`,
      });
    run = run.filter((p) => p.ended.getTime() >= cutoff);
  }
  if (policy === "Skip") {
    const late = run.filter((p) => clockNow.getTime() - p.ended.getTime() > AFTER_ON_TIME_MS);
    for (const r of late)
      skipped.push({
        r,
        reason: RecordReason.MissedRunPolicySkip,
        message: `not run: its upstream run ended at ${rfc3339(r.ended)}, while the operator was not running (missedRunPolicy Skip)`,
      });
    run = run.filter((p) => !late.includes(p));
  } else if (policy !== "RunAll" && run.length > 1) {
    const newest = run[run.length - 1]!;
    for (const r of run.slice(0, -1))
      skipped.push({
        r,
        reason: RecordReason.UpstreamNewerRun,
        message: `not run: a newer run of the upstream (${newest.job.metadata?.name ?? ""}) ended too, and missedRunPolicy RunLatest runs after the newest only`,
      });
    run = [newest];
  }
  return { run, skipped };
}

export const after: Trigger<"after"> = {
  ...AFTER_ROW,
  onReplace: "replace",
  onConflict: "next",
  // Step 9, the after row: for each upstream of spec.after, its runs that ended as `when` asks since the book
  // (status.upstreams), oldest first, decided by the missed-run policy; the first pass after spec.after names an
  // upstream starts its book at that pass (the upstream's earlier runs are not this CronJob's). Nothing while
  // spec.after makes a cycle.
  plan: (input) => {
    const read = input.upstreams;
    if (!read?.upstreams.length || read.cycle) return undefined;
    const { cronJob, now } = input;
    const clockNow = input.clockNow ?? now;
    let status: CronJobWireStatus = { ...input.status };
    // The books of upstreams no longer named go.
    const named = new Set(read.upstreams.map((u) => u.cronJob));
    if (status.upstreams?.some((b) => !named.has(b.cronJob))) {
      const kept = status.upstreams.filter((b) => named.has(b.cronJob));
      const { upstreams: _old, ...rest } = status;
      status = kept.length ? { ...rest, upstreams: kept } : rest;
    }
    // An upstream named for the first time: its book starts now (its earlier runs are not this CronJob's).
    for (const up of read.upstreams)
      if (up.found && !bookOf(status, up.cronJob))
        status = withUpstreamBooks(status, [{ cronJob: up.cronJob, lastEnded: rfc3339(now) }]);
    const deadline = cronJob.spec.startingDeadlineSeconds;
    // spec.afterPolicy All: one run once every upstream ended a run (trigger-join.ts).
    if (afterPolicyOf(cronJob.spec) === "All") return joinPlan(after, read, { status, now, clockNow, deadline });
    const decisions: TimedDecision[] = [];
    const requests: TriggerRun[] = [];
    for (const up of read.upstreams) {
      const book = bookOf(status, up.cronJob);
      if (!up.found || !book) continue;
      const pending = endedRuns(up.jobs, up.when, { ended: new Date(book.lastEnded), job: book.lastJob });
      const { run, skipped } = afterDecisions(pending, cronJob.spec.missedRunPolicy, deadline, clockNow);
      for (const { r, reason, message } of skipped) {
        const name = r.job.metadata?.name ?? "";
        decisions.push({
          decision: {
            ...afterSubject(r.ended, afterRequest(up.cronJob, name)),
            decision: reason === RecordReason.StartingDeadlineExceeded ? RecordDecision.Missed : RecordDecision.Skipped,
            reason,
            message,
          },
          at: now,
        });
        status = decided(status, up.cronJob, name, r.ended);
      }
      for (const r of run)
        requests.push(
          bindRun(
            after,
            { upstream: up.cronJob, job: r.job.metadata?.name ?? "", ended: r.ended, when: up.when },
            afterParts,
          ),
        );
    }
    requests.sort((a, b) => (a.dueAt?.().getTime() ?? 0) - (b.dueAt?.().getTime() ?? 0));
    return { requests, decisions, status };
  },
  // Its Jobs by their names, a join's included (trigger.ts: the retry reads them too).
  ours: holdsAfterName,
  // A run the book has not passed: its Job is the only sign it ran (history cleanup keeps it, its end is reported).
  unbooked: (cronJob, job) => {
    if (holdsJoinName(cronJob, job)) return joinUnbooked(cronJob, job);
    if (!after.ours(cronJob, job)) return false;
    const up = parseAfterRequest(requestIdOf(after, job))!;
    const ended = scheduledTimeOf(job);
    const book = bookOf(cronJob.status, up.cronJob);
    if (!book || !ended) return true;
    const at = Date.parse(book.lastEnded);
    return ended.getTime() > at || (ended.getTime() === at && up.job > (book.lastJob ?? ""));
  },
};

const afterParts: RunParts<AfterRequest> = {
  job: (cronJob: JobSource, r: AfterRequest) => {
    const job = withRetryMark(jobForSlot(cronJob, r.ended), cronJob.spec);
    const annotations = { ...job.metadata?.annotations, [AFTER_ANNOTATION]: afterRequest(r.upstream, r.job) };
    return {
      ...job,
      metadata: { ...job.metadata, name: afterJobName(cronJob.metadata.name ?? "", r.upstream, r.job), annotations },
    };
  },
  ran: (view: RanView, r: AfterRequest) => jobNamed(view, afterJobName(view.cronJobName, r.upstream, r.job)),
  held: (r: AfterRequest, running: string[]): StateEvent => ({
    reason: EventReason.JobAlreadyActive,
    message: `Not starting the run after ${r.upstream}'s Job ${r.job} because ${running.join(", ")} still running (concurrencyPolicy Forbid)`,
    once: { topic: EventReason.JobAlreadyActive, key: afterRequest(r.upstream, r.job) },
    count: "skipped_forbid",
  }),
  // Decided, whatever happened to it: a run after an upstream's run is made once.
  book: (status: Readonly<CronJobWireStatus>, r: AfterRequest) => decided(status, r.upstream, r.job, r.ended),
  dueAt: (r: AfterRequest) => r.ended,
  created: (r: AfterRequest, name: string) => ({
    event: {
      reason: EventReason.SuccessfulCreate,
      message: `Created job ${name} after ${r.upstream}'s Job ${r.job} ended (spec.after: ${r.when})`,
    },
    count: "created",
    log: `created Job after ${r.upstream}'s Job ${r.job}`,
  }),
  subject: (r: AfterRequest) => afterSubject(r.ended, afterRequest(r.upstream, r.job)),
};
