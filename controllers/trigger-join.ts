// The after row's join (spec.afterPolicy All, api/v1/join.ts): one run once every upstream has ended a run as its
// `when` says since the books (status.upstreams), the same books the after row keeps for each run. Which runs a
// join takes is decided from the books alone: each upstream's oldest run past its book, so a pass repeated after a
// crash or a leader change asks for the same Job (its name is the lock). Booking the join moves every upstream's
// book to the end that completed it: an upstream that ran twice meanwhile is not counted twice. Pure.
import {
  AFTER_ANNOTATION,
  afterSubject,
  type CronJobWireStatus,
  endedRuns,
  EventReason,
  type Job,
  jobForSlot,
  type JobSource,
  RecordDecision,
  RecordReason,
  scheduledTimeOf,
  withRetryMark,
} from "../api/v1/index.ts";
import { type JoinedRun, joinJobName, joinRequest, parseJoinRequest } from "../api/v1/join.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import { bookOf, type UpstreamBook, withUpstreamBooks } from "./upstreambooks.ts";
import type { UpstreamsRead } from "./upstreams.ts";
import type { TimedDecision } from "./record.ts";
import { bindRun, type CronJobView, jobNamed, type RunParts, type Trigger, type TriggerRun } from "./trigger.ts";

/** A join: the upstream runs it takes (by upstream), the end that completed it, each upstream's book after it. */
interface JoinRequest {
  runs: JoinedRun[];
  ended: Date;
  books: UpstreamBook[];
}

/**
 * The join's plan, for the after row (`row`) with spec.afterPolicy All: nothing until every upstream exists and has
 * a run past its book; then one request, or a Missed entry when the end that completed it is older than
 * startingDeadlineSeconds. `status` has every found upstream's book (the after row starts them).
 */
export function joinPlan(
  row: Trigger,
  read: UpstreamsRead,
  o: { status: CronJobWireStatus; now: Date; clockNow: Date; deadline: number | undefined },
): { requests: TriggerRun[]; decisions: TimedDecision[]; status: CronJobWireStatus } {
  const none = { requests: [], decisions: [], status: o.status };
  if (read.upstreams.some((u) => !u.found || !bookOf(o.status, u.cronJob))) return none;
  const firsts: { upstream: string; job: Readonly<Job>; ended: Date; all: { job: Readonly<Job>; ended: Date }[] }[] =
    [];
  for (const up of read.upstreams) {
    const book = bookOf(o.status, up.cronJob)!;
    const all = endedRuns(up.jobs, up.when, { ended: new Date(book.lastEnded), job: book.lastJob });
    if (!all.length) return none;
    firsts.push({ upstream: up.cronJob, job: all[0]!.job, ended: all[0]!.ended, all });
  }
  const ended = new Date(Math.max(...firsts.map((f) => f.ended.getTime())));
  const at = rfc3339(ended);
  // Each upstream's newest run up to the completing end is taken with the join.
  const books = firsts.map((f) => {
    const upTo = f.all.filter((r) => r.ended.getTime() <= ended.getTime()).at(-1)!;
    return { cronJob: f.upstream, lastEnded: at, lastJob: upTo.job.metadata?.name ?? "" };
  });
  const runs = firsts.map((f) => ({ upstream: f.upstream, job: f.job.metadata?.name ?? "" }));
  const request: JoinRequest = { runs, ended, books };
  if (o.deadline !== undefined && ended.getTime() < o.clockNow.getTime() - o.deadline * 1000) {
    const decision = {
      ...afterSubject(ended, joinRequest(runs)),
      decision: RecordDecision.Missed,
      reason: RecordReason.StartingDeadlineExceeded,
      message: `not run: every upstream had ended a run at ${at}, more than startingDeadlineSeconds ${o.deadline} ago`,
    };
    return { requests: [], decisions: [{ decision, at: o.now }], status: withUpstreamBooks(o.status, books) };
  }
  return { requests: [bindRun(row, request, joinParts)], decisions: [], status: o.status };
}

/** A join's Job whose books the stored status has not moved to its end. */
export function joinUnbooked(cronJob: CronJobView, job: Readonly<Job>): boolean {
  const runs = parseJoinRequest(job.metadata?.annotations?.[AFTER_ANNOTATION])!;
  const ended = scheduledTimeOf(job);
  if (!ended) return true;
  return runs.some((r) => {
    const book = bookOf(cronJob.status, r.upstream);
    return !book || Date.parse(book.lastEnded) < ended.getTime();
  });
}

const joinParts: RunParts<JoinRequest> = {
  job: (cronJob: JobSource, r: JoinRequest) => {
    const job = withRetryMark(jobForSlot(cronJob, r.ended), cronJob.spec);
    const annotations = { ...job.metadata?.annotations, [AFTER_ANNOTATION]: joinRequest(r.runs) };
    return {
      ...job,
      metadata: { ...job.metadata, name: joinJobName(cronJob.metadata.name ?? "", r.runs), annotations },
    };
  },
  ran: (view, r) => jobNamed(view, joinJobName(view.cronJobName, r.runs)),
  held: (r, running) => ({
    reason: EventReason.JobAlreadyActive,
    message: `Not starting the run after every upstream (${joinRequest(r.runs)}) because ${running.join(", ")} still running (concurrencyPolicy Forbid)`,
    once: { topic: EventReason.JobAlreadyActive, key: joinRequest(r.runs) },
    count: "skipped_forbid",
  }),
  // Decided, whatever happened to it: a join is made once.
  book: (status, r) => withUpstreamBooks(status, r.books),
  dueAt: (r) => r.ended,
  created: (r, name) => ({
    event: {
      reason: EventReason.SuccessfulCreate,
      message: `Created job ${name} after every upstream ended a run (${r.runs.map((x) => `${x.upstream}'s Job ${x.job}`).join(", ")}; spec.afterPolicy All)`,
    },
    count: "created",
    log: `created Job after every upstream: ${joinRequest(r.runs)}`,
  }),
  subject: (r) => afterSubject(r.ended, joinRequest(r.runs)),
};
