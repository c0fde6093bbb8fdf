// Run now: the API of a manual run request. A request is the value of one annotation on the CronJob, so
// it works from `kubectl annotate`, `kubectl patch`, GitOps and the kubectl plugin with nothing but `patch`
// on cronjobs. The Job a request creates is named from the request, which is what makes processing it
// idempotent: a second attempt (after a crash, a restart, a leader change) finds the name taken.
import { createHash, randomBytes } from "node:crypto";
import { GROUP } from "./groupversion_info.ts";
import { documentedKey, type WhyCause } from "./metadata.ts";

/** Set or change it on a CronJob to request one run now; the value is the request's identity. */
export const RUN_NOW_ANNOTATION = documentedKey(`${GROUP}/run-now`, () => ({
  on: "CronJob",
  setBy: "the user (`kubectl annotate`, `kubectl cron run`)",
  format: `any string (trimmed), at most ${MAX_RUN_NOW_REQUEST_LENGTH} characters; a new value is a new request, e.g. \`2026-11-23T08:49:10Z-9b5dad\``,
  meaning:
    "Requests one run now from `spec.jobTemplate`. The Job is named `<cronjob>-m<8 hex digits of sha256(value)>`, " +
    "so a request runs once; `status.lastRunNowRequest` records the newest one handled.",
}));
/** On a manual Job: the request it ran for (the CronJob's run-now value at the time). */
export const RUN_NOW_REQUEST_ANNOTATION = documentedKey(`${GROUP}/run-now-request`, () => ({
  on: "Job (run-now)",
  setBy: "the controller",
  format: "the run-now annotation's value",
  meaning: "The run-now request the Job was created for.",
}));
/**
 * Who asked: `{"user":…,"request":…}`, the user name the API server authenticated for that request, set on
 * the CronJob by the defaulting webhook whenever the request changes (without the webhook nobody sets it;
 * naming the request keeps an old stamp from being taken for a new request's), and copied onto the Job.
 */
export const RUN_NOW_REQUESTED_BY_ANNOTATION = documentedKey(`${GROUP}/run-now-requested-by`, () => ({
  on: "CronJob; copied onto the run-now Job",
  setBy: "the defaulting webhook, whenever the run-now request changes",
  format: 'JSON: `{"user":"<user name>","request":"<run-now value>"}`',
  meaning:
    "The user the API server authenticated for the request; a stamp for another request value is ignored. " +
    "Without the webhook nobody sets it.",
}));

export function runNowRequestedByValue(user: string, request: string): string {
  return JSON.stringify({ user, request });
}

/** The user recorded for this request, or undefined (no stamp, a stamp for another request, or not ours). */
export function runNowRequesterOf(
  obj: { metadata?: { annotations?: Record<string, string> } },
  request: string,
): string | undefined {
  const raw = obj.metadata?.annotations?.[RUN_NOW_REQUESTED_BY_ANNOTATION];
  if (!raw) return undefined;
  try {
    const v = JSON.parse(raw) as unknown;
    if (
      v &&
      typeof v === "object" &&
      "user" in v &&
      "request" in v &&
      v.request === request &&
      typeof v.user === "string"
    ) {
      return v.user;
    }
  } catch {
    // not a stamp of ours
  }
  return undefined;
}
/**
 * Set or change it on a CronJob stopped after failed runs (status.stopped) to resume it; the value is the
 * request's identity (status.lastResumeRequest holds the newest handled), like run-now's.
 */
export const RESUME_ANNOTATION = documentedKey(`${GROUP}/resume`, () => ({
  on: "CronJob",
  setBy: "the user (`kubectl cron resume`)",
  format: `any string (trimmed), at most ${MAX_RUN_NOW_REQUEST_LENGTH} characters; a new value is a new request`,
  meaning:
    "Resumes a CronJob stopped after `spec.stopAfterConsecutiveFailures` failed runs (`status.stopped`); " +
    "`status.lastResumeRequest` records the newest one handled.",
}));

/** The resume request on a CronJob, trimmed; undefined when there is none. */
export function resumeRequestOf(obj: { metadata?: { annotations?: Record<string, string> } }): string | undefined {
  const v = obj.metadata?.annotations?.[RESUME_ANNOTATION]?.trim();
  return v ? v : undefined;
}

/** On a manual Job, as `kubectl create job --from=cronjob/NAME` marks the Jobs it creates. */
export const INSTANTIATE_ANNOTATION = documentedKey("cronjob.kubernetes.io/instantiate", () => ({
  on: "Job (run-now)",
  setBy: "the controller",
  format: `\`${INSTANTIATE_MANUAL}\``,
  meaning:
    "Marks a manual run, as `kubectl create job --from=cronjob/NAME` marks the Jobs it creates. A Job with it " +
    "(or with the run-now request annotation) is a manual run.",
}));
export const INSTANTIATE_MANUAL = "manual";

/** Longer values are refused by the controller with an Event (annotations may hold 256 KiB). */
export const MAX_RUN_NOW_REQUEST_LENGTH = 253;

/** The request on a CronJob, trimmed; undefined when there is none. */
export function runNowRequestOf(obj: { metadata?: { annotations?: Record<string, string> } }): string | undefined {
  const v = obj.metadata?.annotations?.[RUN_NOW_ANNOTATION]?.trim();
  return v ? v : undefined;
}

/**
 * The Job name for a request: `<cronjob>-m<8 hex>`, at most 52 + 10 = 62 characters (a Job name must fit a
 * label value, 63). Scheduled Jobs are `<cronjob>-<unix seconds>`, all digits, so the two never collide.
 */
export function manualJobName(cronJobName: string, request: string): string {
  const digest = createHash("sha256").update(request).digest("hex").slice(0, 8);
  return `${cronJobName}-m${digest}`;
}

/** True for a Job created for a run-now request (ours, or `kubectl create job --from`'s mark). */
export function isManualJob(job: { metadata?: { annotations?: Record<string, string> } }): boolean {
  const a = job.metadata?.annotations ?? {};
  return a[RUN_NOW_REQUEST_ANNOTATION] !== undefined || a[INSTANTIATE_ANNOTATION] === INSTANTIATE_MANUAL;
}

/** A fresh request value: when, plus randomness so two requests in the same second differ. */
export function newRunNowRequest(now: Date = new Date()): string {
  return `${now.toISOString().slice(0, 19)}Z-${randomBytes(3).toString("hex")}`;
}

/**
 * The run-now trigger's cause of `kubectl cron why`: a row of the plugin's one table of causes
 * (cmd/kubectl-cron/answer/causes.ts CAUSES), written here with the trigger's other words (api/v1/retry.ts RETRY_CAUSES).
 */
export const RUN_NOW_CAUSES = [
  {
    id: "run-now-waiting",
    title: "A run-now request waits behind a running Job",
    detect:
      "The run-now annotation differs from `status.lastRunNowRequest` and a Job is running with concurrencyPolicy " +
      "Forbid.",
    verdict: (p: { request: string; job: string; policy: string }) =>
      `run-now request "${p.request}" waits: ${p.job.split(" ").join(", ")} still running (concurrencyPolicy ${p.policy})`,
    fix: (p: { namespace: string; job: string }) => [
      `Wait for the running Job, or delete it: \`kubectl delete job ${p.job} -n ${p.namespace}\`.`,
    ],
  },
] as const satisfies readonly WhyCause[];
