// Retries (spec.retry): a slot whose Job failed runs again as new Jobs, each attempt's named from the slot's first Job
// (api/v1/retry.ts). The verdict on such a slot is its newest attempt's: the next one waiting for its delay or behind
// a running Job (retry-pending), not run because a newer slot's run started first (retry-superseded), or the newest
// retry's Job judged as any run (ran.ts), saying which attempt it is. The retry row's half (RETRY_HALF).
import {
  classifyJob,
  finishedAt,
  type Job,
  type RecentRun,
  RecordDecision,
  RecordReason,
  retryAttemptOf,
  retryOf,
  scheduledTimeOf,
} from "../../../../api/v1/index.ts";
import { iso } from "../../model/time.ts";
import { type RetryEntry, retryEntryOf, waitsFor } from "../retries.ts";
import { entryLine } from "./entry.ts";
import { failureEvidence } from "./jobs.ts";
import type { FirstRun, TriggerHalf } from "./half.ts";
import { ranVerdict } from "./ran.ts";
import { slotText } from "./slot.ts";
import { JUST_DUE_MS } from "./undecided.ts";
import { found, SECOND, type SlotContext, type Verdict } from "./verdict.ts";

/** One attempt at the slot: 0 is its first Job; its Job as read, or the record's entry of it once the Job is gone. */
interface Attempt {
  k: number;
  name: string;
  job?: Readonly<Job> | undefined;
  entry?: RecentRun | undefined;
}

const ran = (e: RecentRun) => e.decision === RecordDecision.Created || e.decision === RecordDecision.Adopted;

/** The attempts at the slot known from its Jobs and the record, by k; and the limit they were made under. */
function attemptsOf(
  c: SlotContext,
  first: FirstRun,
  entries: readonly RetryEntry[],
): { attempts: Map<number, Attempt>; limit: number | undefined } {
  const t = c.slot.getTime();
  const attempts = new Map<number, Attempt>();
  let limit = retryOf(c.cronJob.spec)?.limit;
  const firstName = first.job?.metadata?.name ?? (first.entry && ran(first.entry) ? first.entry.job : undefined);
  if (firstName) attempts.set(0, { k: 0, name: firstName, job: first.job, entry: first.entry });
  for (const j of c.f.jobs) {
    const a = retryAttemptOf(j);
    if (!a || scheduledTimeOf(j)?.getTime() !== t) continue;
    const entry = entries.find((r) => r.k === a.k && ran(r.entry))?.entry;
    attempts.set(a.k, { k: a.k, name: j.metadata?.name ?? "", job: j, entry });
    if (!attempts.has(0)) attempts.set(0, { k: 0, name: a.of, job: c.jobNamed(a.of) });
    limit ??= a.n;
  }
  for (const r of entries) {
    limit ??= r.n;
    if (ran(r.entry) && r.entry.job && !attempts.has(r.k))
      attempts.set(r.k, { k: r.k, name: r.entry.job, job: c.jobNamed(r.entry.job), entry: r.entry });
    // The entry names the attempt whose failure it follows, which may be known from it alone.
    if (r.failedJob && !attempts.has(r.k - 1))
      attempts.set(r.k - 1, { k: r.k - 1, name: r.failedJob, job: c.jobNamed(r.failedJob) });
  }
  return { attempts, limit };
}

/** An attempt in one line of evidence: its Job, which attempt, and how it stands. */
function attemptLine(a: Attempt, limit: string): string {
  const which = a.k === 0 ? "the slot's first Job" : `attempt ${a.k}/${limit}`;
  const kind = a.job ? classifyJob(a.job) : undefined;
  const failed = a.job?.status?.conditions?.find((x) => x.type === "Failed" && x.status === "True");
  const state = a.job
    ? kind === "successful"
      ? "Complete"
      : kind === "failed"
        ? `Failed${failed?.reason ? ` (${failed.reason})` : ""}`
        : "running"
    : a.entry?.outcome
      ? `${a.entry.outcome.result}${a.entry.outcome.reason ? ` (${a.entry.outcome.reason})` : ""}, its Job gone`
      : "its Job gone";
  return `Job ${a.name} (${which}): ${state}`;
}

/**
 * The verdict on a slot with retries (its Jobs annotated as attempts, or the record's Retry entries), undefined when
 * it has none: the slot's first Job is then judged alone.
 */
function retryVerdict(c: SlotContext, first: FirstRun): Verdict | undefined {
  const t = c.slot.getTime();
  const entries = (c.cronJob.status?.recentRuns ?? [])
    .map(retryEntryOf)
    .filter((r): r is RetryEntry => r !== undefined && r.slot.getTime() === t);
  const { attempts, limit } = attemptsOf(c, first, entries);
  const retried = [...attempts.keys()].some((k) => k > 0);
  if (!entries.length && !retried) return undefined;
  const latestK = Math.max(-1, ...attempts.keys());
  const latest = attempts.get(latestK);
  if (!latest) return undefined;
  const attemptsText = String(limit ?? "?");
  const policy = retryOf(c.cronJob.spec);
  const evidence = [
    `spec.retry: ${policy ? `limit ${policy.limit}, delaySeconds ${policy.delaySeconds}` : "(unset now)"}`,
    ...[...attempts.values()].sort((a, b) => a.k - b.k).map((a) => attemptLine(a, attemptsText)),
  ];
  const next = entries.find((r) => r.k === latestK + 1 && !ran(r.entry));
  if (next && (next.entry.decision === RecordDecision.Held || next.entry.reason === RecordReason.RetrySuperseded))
    return nextAttemptVerdict(c, latest, next, evidence);
  if (latestK < 1) return undefined;
  const before = attempts.get(latestK - 1);
  const verdict = ranVerdict(c, latest.job, latest.entry, {
    attempt: String(latestK),
    attempts: attemptsText,
    failedJob: before?.name ?? "?",
  });
  return { ...verdict, evidence: [...evidence, ...verdict.evidence] };
}

/** The retry row's half (halves.ts): a slot's later runs are its attempts, read by retryVerdict. */
export const RETRY_HALF: TriggerHalf = { later: retryVerdict };

/** The next attempt, not run: held for its delay or behind a running Job (retry-pending), or superseded. */
function nextAttemptVerdict(c: SlotContext, latest: Attempt, next: RetryEntry, evidence: string[]): Verdict {
  const why =
    latest.job && classifyJob(latest.job) === "failed"
      ? failureEvidence(latest.job, c.podsOf(latest.name))
      : { reason: latest.entry?.outcome?.reason ?? next.failure ?? "Failed", evidence: [] };
  const failed: FailedAttempt = {
    when: c.slotText,
    job: latest.name,
    reason: why.reason,
    attempt: String(next.k),
    attempts: String(next.n),
    namespace: c.namespace,
  };
  const shown = [...evidence, entryLine(next.entry), ...why.evidence];
  if (next.entry.reason === RecordReason.RetrySuperseded) {
    const last = c.cronJob.status?.lastScheduleTime;
    const newer = next.newerRun ?? (last ? new Date(last) : undefined);
    return found(
      "retry-superseded",
      {
        ...failed,
        newerRun: newer ? slotText(newer, c.zone) : "?",
        policy: String(c.cronJob.spec?.concurrencyPolicy ?? "Forbid"),
        name: c.name,
      },
      shown,
    );
  }
  return pendingVerdict(c, latest, next, failed, shown);
}

/** The failed attempt the next one follows, as its verdict's words name it. */
interface FailedAttempt {
  when: string;
  job: string;
  reason: string;
  attempt: string;
  attempts: string;
  namespace: string;
}

function pendingVerdict(
  c: SlotContext,
  latest: Attempt,
  next: RetryEntry,
  failed: FailedAttempt,
  shown: string[],
): Verdict {
  const policy = retryOf(c.cronJob.spec);
  // The failure's end: its Job's, or, once history cleanup deleted it, what the record kept of its outcome (an
  // entry of an earlier version has no startsAt to read instead).
  const recordedEnd = latest.entry?.outcome?.finishedAt;
  const ended = latest.job ? finishedAt(latest.job) : recordedEnd ? new Date(recordedEnd) : undefined;
  const at = next.startsAt ?? (ended && policy ? new Date(ended.getTime() + policy.delaySeconds * SECOND) : undefined);
  const waits = waitsFor(next.entry);
  return found(
    "retry-pending",
    {
      ...failed,
      startsAt: at ? slotText(at, c.zone) : "?",
      overdue: at !== undefined && c.f.now.getTime() - at.getTime() >= JUST_DUE_MS,
      waiting: waits !== undefined,
      waits: waits ?? "",
    },
    [
      ...shown,
      ...(at && !next.startsAt
        ? [`the failure ended at ${iso(ended!)}; spec.retry.delaySeconds ${policy!.delaySeconds}`]
        : []),
    ],
  );
}
