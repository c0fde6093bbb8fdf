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
  DELAY_REASONS,
  RECORD_REASONS,
  type RecentRun,
  rfc3339InZone,
} from "../../../api/v1/index.ts";
import { iso } from "../model/time.ts";

/** An attempt the record decided about: its slot, k of n, and its facts (api/v1/triggers.ts). */
export type RetryEntry = AttemptEntry<RecentRun>;

/** A record entry about a retry, read from its fields (the retry row's reader); undefined: it is none. */
export const retryEntryOf = (e: RecentRun): RetryEntry | undefined => attemptEntryOf(e);

/**
 * The runs waiting, oldest slot first, of every trigger's row (a retry's attempts: for their delay, RetryDelay, or
 * behind a running Job or for their group, as the reason says), each with its row's word.
 */
export const pendingRunsOf = (cronJob: {
  spec?: object | undefined;
  status?: { recentRuns?: RecentRun[] | undefined } | undefined;
}): PendingRun<RecentRun>[] => pendingRuns(cronJob);

/**
 * A pending run in one line (`kubectl cron next`, `why`): its row's word, which run it is (the row's words) of which
 * slot, when it starts or what it waits for, and the failure it follows.
 */
export function pendingLine(r: PendingRun<RecentRun>, zone: string, now: Date): string {
  const waits = waitsFor(r.entry);
  const when = waits
    ? `waits: ${waits}`
    : r.startsAt
      ? `${r.startsAt > now ? "starts at" : "was due at"} ${rfc3339InZone(r.startsAt, zone)} (${iso(r.startsAt)})`
      : "waits for its delay";
  const failed = r.failedJob ? `: Job ${r.failedJob} failed${r.failure ? ` (${r.failure})` : ""}` : "";
  const slot = rfc3339InZone(r.slot, zone);
  return `${r.word}: ${r.what ? `${r.what} of ${slot}` : slot} ${when}${failed}`;
}

/**
 * What a held entry (a retry, a run-now request) waits for besides its delay, in the record's words (undefined: its
 * delay only: the entry says when it starts, or its reason is a delay's).
 */
export function waitsFor(e: RecentRun): string | undefined {
  if (e.startsAt !== undefined || (DELAY_REASONS as readonly string[]).includes(e.reason)) return undefined;
  const words = (RECORD_REASONS as Record<string, { description: string } | undefined>)[e.reason]?.description;
  return `${words ?? e.reason}${e.blockedBy ? ` (Job ${e.blockedBy})` : ""}`;
}
