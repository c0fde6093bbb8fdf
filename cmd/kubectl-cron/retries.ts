// spec.retry as the plugin reads it: which attempt of a slot a Job is (its annotations, api/v1/retry.ts), and what
// the record (status.recentRuns) says of the attempts the operator decided about: one waiting for its delay (Held,
// RetryDelay), one not run because a newer slot's run started first (Skipped, RetrySuperseded), one made (Created,
// RetryAfterFailure). Its fields say which attempt, after which Job failed how, when it starts and what superseded it
// (api/v1/recentruns.ts); its message is for people and never read here.
import {
  parseRetryAttempt,
  RECORD_REASONS,
  type RecentRun,
  RecordDecision,
  RecordReason,
  RecordTrigger,
  retryOf,
} from "../../api/v1/index.ts";

/** An attempt the record decided about: its slot, k of n, and its facts. */
export interface RetryEntry {
  entry: RecentRun;
  slot: Date;
  /** Attempt k (1 is the first retry) of the n spec.retry.limit allowed. */
  k: number;
  n: number;
  /** RetryDelay: when it starts. */
  startsAt?: Date;
  /** The attempt before it that failed, and how. */
  failedJob?: string;
  failure?: string;
  /** RetrySuperseded: the newer run that started first. */
  newerRun?: Date;
}

const time = (s: string | undefined) => (s === undefined || Number.isNaN(Date.parse(s)) ? undefined : new Date(s));

/**
 * A record entry about a retry (trigger Retry, a slot), read from its fields: the attempt (`attempt`, or an earlier
 * version's request "k/N"), when it starts (`startsAt`), the newer run that superseded it (`supersededBy`).
 * Undefined: it is none.
 */
export function retryEntryOf(e: RecentRun): RetryEntry | undefined {
  if (e.trigger !== RecordTrigger.Retry || !e.scheduledTime) return undefined;
  const parsed = parseRetryAttempt(e.request);
  const attempt = e.attempt ? { k: e.attempt.number, n: e.attempt.of } : parsed;
  if (!attempt) return undefined;
  const startsAt = time(e.startsAt);
  const newerRun = time(e.supersededBy);
  return {
    entry: e,
    slot: new Date(e.scheduledTime),
    k: attempt.k,
    n: attempt.n,
    ...(startsAt ? { startsAt } : {}),
    ...(e.attempt?.after ? { failedJob: e.attempt.after } : {}),
    ...(e.attempt?.failure ? { failure: e.attempt.failure } : {}),
    ...(newerRun ? { newerRun } : {}),
  };
}

/**
 * The attempts waiting, oldest slot first: for their delay (RetryDelay), or behind a running Job or for their group
 * (the reason says). None when spec.retry is unset: the operator retries none.
 */
export function pendingRetries(cronJob: {
  spec?: { retry?: unknown };
  status?: { recentRuns?: RecentRun[] };
}): RetryEntry[] {
  if (!retryOf(cronJob.spec)) return [];
  return (cronJob.status?.recentRuns ?? [])
    .filter((e) => e.decision === RecordDecision.Held)
    .map(retryEntryOf)
    .filter((r): r is RetryEntry => r !== undefined)
    .sort((a, b) => a.slot.getTime() - b.slot.getTime() || a.k - b.k);
}

/** What a held entry (a retry, a run-now request) waits for besides a retry's delay, in the record's words (undefined: the delay only). */
export function waitsFor(e: RecentRun): string | undefined {
  if (e.reason === RecordReason.RetryDelay) return undefined;
  const words = (RECORD_REASONS as Record<string, { description: string } | undefined>)[e.reason]?.description;
  return `${words ?? e.reason}${e.blockedBy ? ` (Job ${e.blockedBy})` : ""}`;
}

/** "attempt 2 of 3": how the record and the Events say an attempt. */
export const attemptText = (k: number, n: number) => `attempt ${k} of ${n}`;
