// Retry: a slot whose run failed runs again later as a new Job ("try the 02:00 export again at 02:30, twice at
// most"), unlike backoffLimit, which retries Pods inside one Job within minutes. Each attempt's Job is named from
// the slot's first Job and the attempt, so a crash or a leader change finds the attempt it made and never makes a
// second one; the attempt in flight is derived from the Jobs, so none is skipped. The trigger's row is
// controllers/triggers.ts `retry`.
import { createHash } from "node:crypto";
import { z } from "zod";
import { GROUP } from "./groupversion_info.ts";
import { RecordReason, RecordTrigger } from "./reasons.ts";
import type { WhyCause } from "./metadata.ts";
import { documentedKey } from "./metadata.ts";

/** On a retry's Job: "k/N", attempt k (1 is the first retry) of the N spec.retry.limit allowed when it was made. */
export const RETRY_ATTEMPT_ANNOTATION = documentedKey(`${GROUP}/retry-attempt`, () => ({
  on: "Job (retry) of a CronJob with `spec.retry`",
  setBy: "the controller",
  format: `\`k/N\`: attempt k (1 is the first retry) of the N \`spec.retry.limit\` allowed when it was made (N at most ${MAX_RETRY_LIMIT})`,
  meaning:
    "The Job runs a failed slot again: `status.recentRuns` names its trigger Retry. Its name is " +
    "`<cronjob>-r<8 hex digits>`, from the first Job's name and k, so an attempt is made once.",
}));
/** On a retry's Job: the name of the slot's first Job, whose failure started the retries. */
export const RETRY_OF_ANNOTATION = documentedKey(`${GROUP}/retry-of`, () => ({
  on: "Job (retry)",
  setBy: "the controller, with the attempt",
  format: "the name of the slot's first Job",
  meaning: "The Job whose failure started the retries: every attempt of a slot names the same one.",
}));

export const MAX_RETRY_LIMIT = 10;
export const MAX_RETRY_DELAY_SECONDS = 7 * 24 * 3600;

export const RetrySpecSchema = z
  .object({
    limit: z.int().min(1).max(MAX_RETRY_LIMIT).meta({ format: "int32", description: "New Jobs at most per slot." }),
    delaySeconds: z
      .int()
      .min(0)
      .max(MAX_RETRY_DELAY_SECONDS)
      .optional()
      .meta({ format: "int32", description: "Seconds after a failure to wait (default 0)." }),
  })
  .meta({ description: "Runs a failed slot again, as a new Job." });
export type RetrySpec = z.infer<typeof RetrySpecSchema>;

/** spec.retry as stored, bounded (a value the CRD would refuse reads as no retry, never as a loop). */
export function retryOf(spec: { retry?: unknown } | undefined): { limit: number; delaySeconds: number } | undefined {
  const r = spec?.retry as { limit?: unknown; delaySeconds?: unknown } | undefined;
  if (!r || typeof r !== "object") return undefined;
  const { limit, delaySeconds } = r;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1) return undefined;
  const delay =
    typeof delaySeconds === "number" && Number.isInteger(delaySeconds) && delaySeconds >= 0
      ? Math.min(delaySeconds, MAX_RETRY_DELAY_SECONDS)
      : 0;
  return { limit: Math.min(limit, MAX_RETRY_LIMIT), delaySeconds: delay };
}

/**
 * A slot's first Job made while spec.retry is set carries attempt "0/N": only such a slot is retried, so setting
 * spec.retry never retries a failure that happened before (a Job kept in history for a week).
 */
export function withRetryMark<J extends { metadata?: { annotations?: Record<string, string> } }>(
  job: J,
  spec: { retry?: unknown } | undefined,
): J {
  const r = retryOf(spec);
  if (!r) return job;
  const annotations = { ...job.metadata?.annotations, [RETRY_ATTEMPT_ANNOTATION]: retryAttemptValue(0, r.limit) };
  return { ...job, metadata: { ...job.metadata, annotations } };
}

/** Whether a slot's first Job was made with spec.retry set (withRetryMark). */
export function retriable(job: { metadata?: { annotations?: Record<string, string> } }): boolean {
  return /^0\/\d{1,2}$/.test(job.metadata?.annotations?.[RETRY_ATTEMPT_ANNOTATION] ?? "");
}

/** The annotation's value for attempt k of n. */
export function retryAttemptValue(k: number, n: number): string {
  return `${k}/${n}`;
}

/** "k/N" read back (the annotation's value, a record entry's request); undefined: not an attempt's. */
export function parseRetryAttempt(value: string | undefined): { k: number; n: number } | undefined {
  const m = /^(\d{1,2})\/(\d{1,2})$/.exec(value ?? "");
  return m ? { k: Number(m[1]), n: Number(m[2]) } : undefined;
}

/** A Job's retry attempt: k of n; undefined for a slot's first Job (or a value that is not ours). */
export function retryAttemptOf(job: {
  metadata?: { annotations?: Record<string, string> };
}): { k: number; n: number; of: string } | undefined {
  const a = job.metadata?.annotations;
  const attempt = parseRetryAttempt(a?.[RETRY_ATTEMPT_ANNOTATION]);
  const of = a?.[RETRY_OF_ANNOTATION];
  if (!attempt || !of) return undefined;
  return attempt.k >= 1 ? { ...attempt, of } : undefined;
}

/**
 * Attempt k's Job name: `<cronjob>-r<8 hex>` from the first Job's name and k, at most 52 + 10 = 62 characters (a
 * slot's Job is `<cronjob>-<digits>`, a run-now's `<cronjob>-m<hex>`: the three never collide).
 */
export function retryJobName(cronJobName: string, firstJob: string, k: number): string {
  const digest = createHash("sha256").update(`${firstJob}/${k}`).digest("hex").slice(0, 8);
  return `${cronJobName}-r${digest}`;
}

/**
 * The facts `kubectl cron why` says the retry trigger's causes with (the plugin's CauseParams has each of them, under
 * the same name): the CronJob, the slot (`when`), the failed attempt's Job and reason, attempt k (`attempt`) of N
 * (`attempts`), when it starts and whether it is late or waits besides its delay (retry-pending), and the newer run
 * that started first under which concurrencyPolicy (retry-superseded).
 */
interface RetryFacts {
  name: string;
  namespace: string;
  when: string;
  job: string;
  reason: string;
  attempt: string;
  attempts: string;
  startsAt: string;
  overdue: boolean;
  waiting: boolean;
  waits: string;
  newerRun: string;
  policy: string;
}

/**
 * The retry trigger's causes of `kubectl cron why`: rows of the plugin's one table of causes (cmd/kubectl-cron/answer/causes.ts
 * CAUSES, which docs/troubleshooting.md is generated from), written here with the trigger's other words, as its
 * annotations' reference entries are.
 */
export const RETRY_CAUSES = [
  {
    id: "retry-pending",
    title: "Failed, and a retry waits for spec.retry.delaySeconds",
    detect:
      "The slot's Job failed (its Failed condition, or the record's outcome) and a `Held` entry with trigger " +
      `${RecordTrigger.Retry} in \`status.recentRuns\` says which attempt of \`spec.retry.limit\` is next: reason ` +
      `${RecordReason.RetryDelay} and when it starts, or the reason it waits besides (concurrencyPolicy Forbid, its ` +
      `group). The attempts are the Jobs annotated \`${RETRY_OF_ANNOTATION}\` (the slot's first Job) and ` +
      `\`${RETRY_ATTEMPT_ANNOTATION}\` (k/N).`,
    verdict: (
      p: Pick<
        RetryFacts,
        "when" | "job" | "reason" | "attempt" | "attempts" | "startsAt" | "overdue" | "waiting" | "waits"
      >,
    ) =>
      `ran at ${p.when} and failed (Job ${p.job}: ${p.reason}); attempt ${p.attempt} of ${p.attempts} ` +
      (p.waiting
        ? `waits: ${p.waits}`
        : p.overdue
          ? `was due at ${p.startsAt} and has not started`
          : `starts at ${p.startsAt}`),
    fix: (p: Pick<RetryFacts, "namespace" | "job">) => [
      `Read why it failed while the Job is kept: \`kubectl logs job/${p.job} -n ${p.namespace}\`.`,
      "Nothing else to do: the operator starts the attempt then; with concurrencyPolicy Forbid or Replace only if no " +
        "newer slot's run has started by then.",
    ],
  },
  {
    id: "retry-superseded",
    title: "Failed, and its retry was not run: a newer slot's run started first",
    detect:
      `A \`Skipped\` entry with trigger ${RecordTrigger.Retry} and reason ${RecordReason.RetrySuperseded} in ` +
      "`status.recentRuns`: the slot's Job failed, and with concurrencyPolicy Forbid or Replace a retry is not run " +
      "once a newer slot's run has started (`status.lastScheduleTime` past the slot).",
    verdict: (p: Pick<RetryFacts, "when" | "job" | "reason" | "attempt" | "attempts" | "newerRun" | "policy">) =>
      `ran at ${p.when} and failed (Job ${p.job}: ${p.reason}); attempt ${p.attempt} of ${p.attempts} was not run: ` +
      `the run of ${p.newerRun} started first (concurrencyPolicy ${p.policy})`,
    fix: (p: Pick<RetryFacts, "name" | "namespace" | "job">) => [
      `Read why it failed while the Job is kept: \`kubectl logs job/${p.job} -n ${p.namespace}\`.`,
      "To retry before the next slot, set `spec.retry.delaySeconds` below the schedule's interval (the webhook warns " +
        "when it is not), or concurrencyPolicy Allow.",
      `If the slot's work is still owed, \`kubectl cron run ${p.name} -n ${p.namespace}\` runs it once now.`,
    ],
  },
] as const satisfies readonly WhyCause[];
