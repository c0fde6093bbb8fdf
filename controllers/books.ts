// The books: which finished Jobs history cleanup deletes, and how far the books (the status write, history
// cleanup) may fall behind the Job creates while a burst of creates is on. Pure, from stored state, so a restart
// keeps the bound.
import { type CronJobWire, type CronJobWireStatus, finishedAt, type Job } from "../api/v1/index.ts";
import { mayDelete } from "./observe.ts";
import type { Trigger } from "./trigger.ts";

/**
 * Creation first, but the books never fall more than one run behind. A pass during a burst of Job creates,
 * or with other CronJobs waiting in the queue, may leave its status write and history cleanup to a later
 * pass — once. Under load that never lets up (more every-minute CronJobs than the apiserver can take), every
 * pass has a slot to create, so "a later pass" would never come: the status would stay without the runs
 * (and history cleanup, which keeps any Job whose run the stored status has not booked, could delete
 * nothing), and Jobs would pile up in the cluster and in the controller's cache without bound. These decide
 * from stored state only, so a restart keeps the bound (bench/results/2026-11-24.analysis.md has the run that
 * showed it).
 */
export function statusBehind(
  stored: Readonly<CronJobWireStatus> | undefined,
  observed: Readonly<CronJobWireStatus>,
  finished: readonly Readonly<Job>[] = [],
  now?: Date,
): boolean {
  // The children hold a run the stored status does not: an earlier pass already left its write to later.
  const o = observed.lastScheduleTime ? Date.parse(observed.lastScheduleTime) : NaN;
  const s = stored?.lastScheduleTime ? Date.parse(stored.lastScheduleTime) : NaN;
  if (!Number.isNaN(o) && (Number.isNaN(s) || o > s)) return true;
  // A run the stored status still lists as active ended (or its Job is gone) longer ago than a burst may
  // hold the books: a CronJob with no slot due has no create of its own to count passes by.
  if (now === undefined) return false;
  const stillActive = new Set((observed.active ?? []).map((r) => r.name));
  for (const ref of stored?.active ?? []) {
    if (!ref.name || stillActive.has(ref.name)) continue;
    const job = finished.find((j) => j.metadata?.name === ref.name);
    const ended = job ? finishedAt(job) : undefined;
    if (!ended || now.getTime() - ended.getTime() >= BOOKS_MAX_LATE_MS) return true;
  }
  return false;
}

/** How long a finished run may stay listed as active while bursts hold the status write (the burst's own cap). */
const BOOKS_MAX_LATE_MS = 30_000;

/** More than one run over a history limit: cleanup already waited a pass, and goes now. */
export function historyBehind(
  finished: { successful: number; failed: number },
  limits: { successful?: number; failed?: number },
): boolean {
  const over = (count: number, limit: number | undefined) => limit !== undefined && count > limit + 1;
  return over(finished.successful, limits.successful) || over(finished.failed, limits.failed);
}

/**
 * History cleanup: the oldest finished Jobs (by start time) beyond each history limit. A Job some book still needs
 * (mayDelete: a run the stored status has not booked, a backfill slot the schedule has not passed) waits for a
 * later pass: deleting it would let a crash, or the schedule, run its slot again.
 */
export function historyToDelete(
  triggers: readonly Trigger[],
  cronJob: Pick<CronJobWire, "metadata" | "status" | "spec">,
  finished: { successful: readonly Readonly<Job>[]; failed: readonly Readonly<Job>[] },
  kept: ReadonlySet<string> = new Set(),
): Readonly<Job>[] {
  const out: Readonly<Job>[] = [];
  for (const [jobs, limit] of [
    [finished.successful, cronJob.spec.successfulJobsHistoryLimit],
    [finished.failed, cronJob.spec.failedJobsHistoryLimit],
  ] as const) {
    if (limit === undefined || jobs.length <= limit) continue;
    // A Job a trigger still needs (a failed run whose retry is owed) counts toward the limit but is not deleted.
    const oldestFirst = jobs
      .filter((j) => !kept.has(j.metadata?.name ?? "") && mayDelete(triggers, cronJob, j))
      .sort(byStartTime);
    out.push(...oldestFirst.slice(0, jobs.length - limit));
  }
  return out;
}

/** Oldest first by status.startTime; a missing start time sorts as newest; ties by name. */
function byStartTime(a: Readonly<Job>, b: Readonly<Job>): number {
  const ta = a.status?.startTime ? new Date(a.status.startTime).getTime() : Infinity;
  const tb = b.status?.startTime ? new Date(b.status.startTime).getTime() : Infinity;
  if (ta !== tb) return ta < tb ? -1 : 1;
  return (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? "");
}

/**
 * The finished Jobs the triggers will still need (each row's `keeps`: a failed run a retry may be owed for), whether
 * they run this pass or not: history cleanup passes them.
 */
export function keptJobs(
  triggers: readonly Trigger[],
  cronJob: Readonly<CronJobWire>,
  jobs: readonly Readonly<Job>[],
  status: Readonly<CronJobWireStatus>,
): string[] {
  return triggers.flatMap((t) => t.keeps?.(cronJob, jobs, status) ?? []);
}
