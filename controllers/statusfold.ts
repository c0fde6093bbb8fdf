// Which status writes may be folded into a later one, and for how long (docs/architecture.md, "Status writes: what
// waits"). A scheduled run's start and end are its Job's own: the Job carries its slot (its name, its scheduled-at
// annotation) from its create, and its conditions say how it ended, so a status change that only says so is
// "told by the Jobs" and may wait while the API server has no room, up to a bound. Anything no Job shows (a skip, a
// hold, a miss, an exclusion, a refused create, a condition that is not a run's start or end, a stop, an explicit
// request's run, a new spec) is news and is written at once. Pure, but the budget (a token bucket: the room).
import { createHash } from "node:crypto";
import {
  type Condition,
  type CronJobWireStatus,
  finishedAt,
  type Job,
  RECORD_DECISIONS,
  type RecentRun,
  scheduledTimeOf,
} from "../api/v1/index.ts";
import { TokenBucket } from "../runtime/tokenbucket.ts";
import { jsonEqual } from "../runtime/objects.ts";
import { conditionChangeIsRoutine } from "./conditions.ts";

/** Why a status write cannot wait: a reason code (metrics, logs); the first one found. */
export const StatusNews = {
  /** The status was never written, or the spec changed (observedGeneration): a user waits to see it observed. */
  observed: "observed",
  /** A condition changed other than by a run's start or end (Degraded, Available going False, ...). */
  condition: "condition",
  /** A record entry no Job tells (Held, Skipped, Missed, Refused, Stopped, an excluded slot), or a run of a
   * trigger whose Jobs do not move lastScheduleTime (run now, backfill, retry: their books are status fields). */
  record: "record",
  /** A status field no Job tells: lastMissedTime, lastExcludedTime, stopped, lastRunNowRequest, backfill, ... */
  field: "field",
  /** A run status has not booked whose Job will not stay: it ended with ttlSecondsAfterFinished, or is gone. */
  jobLeaves: "jobLeaves",
} as const;
export type StatusNews = (typeof StatusNews)[keyof typeof StatusNews];

/** The status fields a scheduled run's Job tells by itself; every other field's change is news. */
const TOLD_BY_JOBS: ReadonlySet<string> = new Set([
  "active",
  "activeCount",
  "lastScheduleTime",
  "nextScheduleTime",
  "lastSuccessfulTime",
  "lastFailedTime",
  "consecutiveFailures",
  "recentRuns",
  "conditions",
]);

/** What the fold reads of the pass: the CronJob's Jobs, and which of them each row's books have not booked. */
export interface FoldJobs {
  /** Every Job of the CronJob this pass knows. */
  readonly jobs: readonly Readonly<Job>[];
  /** Whether the stored status has booked the Job's run (observe.ts isUnbookedRun). */
  unbooked(job: Readonly<Job>): boolean;
  /** Whether the Job's row moves lastScheduleTime (the schedule's runs: a Job of its own tells them). */
  scheduled(job: Readonly<Job>): boolean;
}

/**
 * The first thing in `next` (the status about to be written, its conditions set) that no Job tells, or undefined
 * when every change from `stored` is a scheduled run's start or end.
 */
export function statusNews(
  stored: Readonly<CronJobWireStatus> | undefined,
  next: Readonly<CronJobWireStatus>,
  children: FoldJobs,
): StatusNews | undefined {
  if (!stored || stored.observedGeneration !== next.observedGeneration) return StatusNews.observed;
  const keys = new Set([...Object.keys(stored), ...Object.keys(next)]);
  for (const k of keys) {
    const [a, b] = [(stored as Record<string, unknown>)[k], (next as Record<string, unknown>)[k]];
    if (!TOLD_BY_JOBS.has(k) && !jsonEqual(a ?? null, b ?? null)) return StatusNews.field;
  }
  if (!conditionsRoutine(stored.conditions ?? [], next.conditions ?? [])) return StatusNews.condition;
  const byName = new Map(children.jobs.map((j) => [j.metadata?.name ?? "", j]));
  const before = stored.recentRuns ?? [];
  for (const entry of next.recentRuns ?? []) {
    if (before.some((e) => jsonEqual(e, entry))) continue;
    if (!toldByItsJob(entry, byName, children)) return StatusNews.record;
  }
  for (const job of children.jobs) {
    if (!children.unbooked(job)) continue;
    if (!children.scheduled(job)) return StatusNews.record;
    if (finishedAt(job) && job.spec?.ttlSecondsAfterFinished !== undefined) return StatusNews.jobLeaves;
  }
  const listed = new Set(children.jobs.map((j) => j.metadata?.name));
  for (const ref of stored.active ?? []) if (ref.name && !listed.has(ref.name)) return StatusNews.jobLeaves;
  return undefined;
}

/** An entry its Job tells: a decision its row marks so, about a Job of the schedule that is still there. */
function toldByItsJob(
  entry: Readonly<Pick<RecentRun, "job">> & { readonly decision: string },
  byName: ReadonlyMap<string, Readonly<Job>>,
  children: FoldJobs,
): boolean {
  const decisions: Readonly<Record<string, { readonly description: string; readonly toldByItsJob?: boolean }>> =
    RECORD_DECISIONS;
  if (!decisions[entry.decision]?.toldByItsJob || !entry.job) return false;
  const job = byName.get(entry.job);
  return job !== undefined && children.scheduled(job);
}

type WireCondition = Pick<Condition, "type"> & { readonly status: string };

function conditionsRoutine(before: readonly WireCondition[], after: readonly WireCondition[]): boolean {
  if (before.length !== after.length) return false;
  return after.every((c) => {
    const old = before.find((p) => p.type === c.type);
    return old !== undefined && (jsonEqual(old, c) || conditionChangeIsRoutine(old, c));
  });
}

/**
 * Since when (ms) the stored status has not described the Jobs: the oldest change it lacks (a run it does not list,
 * from its slot, or its creation for a Job with none; a run it lists that ended; a next run that has passed). From
 * stored state and the Jobs, so a restart keeps the bound; a run's slot is on the controller's clock, so a skew
 * between it and the API server's cannot stretch the bound. `now` when the change has no time of its own.
 */
export function behindSince(
  stored: Readonly<CronJobWireStatus> | undefined,
  next: Readonly<CronJobWireStatus>,
  children: FoldJobs,
  nowMs: number,
): number {
  let since = nowMs;
  const at = (t: string | undefined) => {
    const ms = t ? Date.parse(t) : NaN;
    if (Number.isFinite(ms)) since = Math.min(since, ms);
  };
  const listed = new Set((stored?.active ?? []).map((r) => r.name));
  for (const job of children.jobs) {
    const name = job.metadata?.name;
    const ended = finishedAt(job);
    if (listed.has(name)) {
      if (ended) since = Math.min(since, ended.getTime());
    } else if (children.unbooked(job) || (!ended && next.active?.some((r) => r.name === name))) {
      const slot = scheduledTimeOf(job);
      if (slot) since = Math.min(since, slot.getTime());
      else at(job.metadata?.creationTimestamp);
    }
  }
  if (stored?.nextScheduleTime && stored.nextScheduleTime !== next.nextScheduleTime) at(stored.nextScheduleTime);
  return since;
}

/** How a routine (foldable) status write is let through: a budget of writes a second, and the bound. */
export interface StatusFoldOptions {
  /** Status writes a second the fold lets through at once (--status-write-qps); the bucket holds twice that. */
  readonly qps: number;
  /** The most a routine change waits (ms, --status-write-max-delay): past it, written whatever the budget. */
  readonly maxDelayMs: number;
}

/**
 * The room: one token bucket of status writes for the whole controller (client-go's qps and burst). Every status
 * write takes a token if one is there; only a routine one waits for one, in line: a pass that finds none reserves the
 * next one free (rate.Limiter's Reserve) if it comes before its bound, and is woken then to write, so a burst's
 * folded writes drain at the budget's rate, oldest first, and a small burst is written within seconds. A small fleet
 * never empties it (every write goes at once, as without the fold); a burst of thousands of runs does, and its
 * routine writes fold (qps 0: every routine one waits the bound).
 */
export class StatusWriteBudget {
  readonly #bucket: TokenBucket;
  readonly maxDelayMs: number;

  constructor(o: StatusFoldOptions, nowMs: number) {
    this.#bucket = new TokenBucket(o.qps, 2 * o.qps, nowMs);
    this.maxDelayMs = o.maxDelayMs;
  }

  /**
   * Takes a token for a routine Event, whose fact the record keeps, if one is left for a status write after it: an
   * Event is a write the Jobs tell too, so a burst spends kube-apiserver on Jobs and on what no Job tells, and a
   * status write comes before an Event.
   */
  takeSpare(nowMs: number): boolean {
    return this.#bucket.tryAccept(nowMs, 1);
  }

  /** Takes a token if there is one. */
  take(nowMs: number): boolean {
    return this.#bucket.tryAccept(nowMs);
  }

  /** Reserves the next token free if it comes within `maxWaitMs`: when (ms), or undefined (nothing reserved). */
  reserve(nowMs: number, maxWaitMs: number): number | undefined {
    const wait = this.#bucket.reserve(nowMs, maxWaitMs);
    return wait === undefined ? undefined : nowMs + wait;
  }
}

/**
 * How much earlier than the bound a CronJob's folded write is due (ms): a share of the last minute before it, hashed
 * from the CronJob (its UID), the same on every replica and after a restart. A slot's folded runs all count from that
 * slot, and a slot plus the bound is a slot again for an every-minute CronJob: without it, every CronJob the budget
 * could not serve would be written in the second its next Jobs are created.
 */
export function boundSpreadMs(key: string, maxDelayMs: number): number {
  const window = Math.min(SPREAD_WINDOW_MS, Math.floor(maxDelayMs / 5));
  if (window <= 0) return 0;
  return Number.parseInt(createHash("sha256").update(key).digest("hex").slice(0, 8), 16) % window;
}

/** The spread's window: the minute before the bound (a fifth of the bound when that is shorter). */
const SPREAD_WINDOW_MS = 60_000;

/**
 * How long a routine change may still wait (ms): the bound, less its spread, from the oldest change status lacks;
 * 0 or less once it is reached. The one arithmetic of the bound: the `bound` row and the books' `behind`.
 */
export function boundLeftMs(behindSinceMs: number, maxDelayMs: number, spreadMs: number, nowMs: number): number {
  return behindSinceMs + maxDelayMs - spreadMs - nowMs;
}

/** The fold's decision for one pass's status write. */
type FoldDecision =
  | { write: true; why: "news" | "room" | "bound"; news?: StatusNews }
  | { write: false; waitMs: number; reservedAt?: number };

/**
 * Write now, or fold into a later pass (waitMs: until its reserved token, else the bound). News is written at once; a
 * routine change when the budget has a token for it (one this CronJob reserved and is due, or one there now), or once
 * it has waited the bound. `reservedAt`: the token this CronJob reserved (memory), already paid for.
 */
export function foldStatus(
  news: StatusNews | undefined,
  behindSinceMs: number,
  budget: StatusWriteBudget,
  nowMs: number,
  reservedAt?: number,
  spreadMs = 0,
): FoldDecision {
  const room = reservedAt !== undefined ? nowMs >= reservedAt : budget.take(nowMs);
  if (news !== undefined) return { write: true, why: "news", news };
  if (room) return { write: true, why: "room" };
  const left = boundLeftMs(behindSinceMs, budget.maxDelayMs, spreadMs, nowMs);
  if (left <= 0) return { write: true, why: "bound" };
  const at = reservedAt ?? budget.reserve(nowMs, left);
  return at === undefined ? { write: false, waitMs: left } : { write: false, waitMs: at - nowMs, reservedAt: at };
}

/**
 * The runs a folded write left unbooked, by Job name: their slot (ms). A Job someone deletes before the status books
 * it (kubectl delete, a TTL) would otherwise take its slot with it, and the schedule would run that slot again.
 */
export function unbookedSlots(children: FoldJobs): Map<string, number> | undefined {
  const out = new Map<string, number>();
  for (const job of children.jobs) {
    const slot = scheduledTimeOf(job);
    if (slot && children.unbooked(job) && children.scheduled(job)) out.set(job.metadata?.name ?? "", slot.getTime());
  }
  return out.size ? out : undefined;
}
