// Retry: a slot whose run failed runs again later as a new Job ("try the 02:00 export again at 02:30, twice at
// most"), unlike backoffLimit, which retries Pods inside one Job within minutes. Each attempt's Job is named from
// the slot's first Job and the attempt, so a crash or a leader change finds the attempt it made and never makes a
// second one; the attempt in flight is derived from the Jobs, so none is skipped. The trigger's row is
// controllers/triggers.ts `retry`.
import { createHash } from "node:crypto";
import { z } from "zod";
import { GROUP } from "./groupversion_info.ts";
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

/** A Job's retry attempt: k of n; undefined for a slot's first Job (or a value that is not ours). */
export function retryAttemptOf(job: {
  metadata?: { annotations?: Record<string, string> };
}): { k: number; n: number; of: string } | undefined {
  const a = job.metadata?.annotations;
  const m = /^(\d{1,2})\/(\d{1,2})$/.exec(a?.[RETRY_ATTEMPT_ANNOTATION] ?? "");
  const of = a?.[RETRY_OF_ANNOTATION];
  if (!m || !of) return undefined;
  const k = Number(m[1]);
  return k >= 1 ? { k, n: Number(m[2]), of } : undefined;
}

/**
 * Attempt k's Job name: `<cronjob>-r<8 hex>` from the first Job's name and k, at most 52 + 10 = 62 characters (a
 * slot's Job is `<cronjob>-<digits>`, a run-now's `<cronjob>-m<hex>`: the three never collide).
 */
export function retryJobName(cronJobName: string, firstJob: string, k: number): string {
  const digest = createHash("sha256").update(`${firstJob}/${k}`).digest("hex").slice(0, 8);
  return `${cronJobName}-r${digest}`;
}
