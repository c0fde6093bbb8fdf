// spec.retry as the plugin reads it: which attempt of a slot a Job is (its annotations, api/v1/retry.ts), and what
// the record (status.recentRuns) says of the attempts the operator decided about: one waiting for its delay (Held,
// RetryDelay), one not run because a newer slot's run started first (Skipped, RetrySuperseded), one made (Created,
// RetryAfterFailure). Its fields say which attempt, after which Job failed how, when it starts and what superseded it
// (api/v1/recentruns.ts); its message is for people and never read here.
import {
  attemptEntryOf,
  type AttemptEntry,
  type PendingRun,
  pendingRuns,
  RECORD_REASONS,
  type RecentRun,
  RecordReason,
} from "../../api/v1/index.ts";

/** An attempt the record decided about: its slot, k of n, and its facts (api/v1/triggers.ts). */
export type RetryEntry = AttemptEntry<RecentRun>;

/** A record entry about a retry, read from its fields (the retry row's reader); undefined: it is none. */
export const retryEntryOf = (e: RecentRun): RetryEntry | undefined => attemptEntryOf(e);

/**
 * The runs waiting, oldest slot first, of every trigger's row (a retry's attempts: for their delay, RetryDelay, or
 * behind a running Job or for their group, as the reason says), each with its row's word.
 */
export const pendingRunsOf = (cronJob: {
  spec?: { retry?: unknown };
  status?: { recentRuns?: RecentRun[] };
}): PendingRun<RecentRun>[] => pendingRuns(cronJob);

/** What a held entry (a retry, a run-now request) waits for besides a retry's delay, in the record's words (undefined: the delay only). */
export function waitsFor(e: RecentRun): string | undefined {
  if (e.reason === RecordReason.RetryDelay) return undefined;
  const words = (RECORD_REASONS as Record<string, { description: string } | undefined>)[e.reason]?.description;
  return `${words ?? e.reason}${e.blockedBy ? ` (Job ${e.blockedBy})` : ""}`;
}

/** "attempt 2 of 3": how the record and the Events say an attempt. */
export const attemptText = (k: number, n: number) => `attempt ${k} of ${n}`;
