// The batch/v1 Jobs of a CronJob: the Job for a slot or a run-now request (what the controller creates and
// the admission webhook dry-runs), their names and annotations, and how a Job is read back (its class,
// its slot, its owner). The controller, the webhooks and `kubectl cron` share these facts.
import { z } from "zod";
import type { KubeObject, OwnerReference } from "../../runtime/kinds.ts";
import { controllerOf } from "../../runtime/kinds.ts";
import { rfc3339 } from "../../runtime/metatime.ts";
import { isObj } from "../../runtime/objects.ts";
import { CronJobWireSchema } from "./cronjob_types.ts";
import { API_VERSION, CRONJOB_NAME_LABEL, GROUP, KIND } from "./groupversion_info.ts";
import { jobNameFor } from "./jobnames.ts";
import { WireObjectMetaSchema } from "./meta.ts";
import {
  INSTANTIATE_ANNOTATION,
  INSTANTIATE_MANUAL,
  manualJobName,
  RUN_NOW_REQUEST_ANNOTATION,
  RUN_NOW_REQUESTED_BY_ANNOTATION,
} from "./runnow.ts";
import { PODS_SHOWED } from "./reasons.ts";
import { utcOffsetAt } from "./schedule/index.ts";
import { documentedKey } from "./metadata.ts";

export const SCHEDULED_AT_ANNOTATION = documentedKey("batch.tutorial.kubebuilder.io/scheduled-at", () => ({
  on: "Job (scheduled, backfill)",
  setBy: "the controller",
  format: "RFC 3339, UTC, e.g. `2026-03-08T07:30:00Z`",
  meaning: "The slot (scheduled time) the Job was created for. A run-now Job has none.",
}));
export const K8S_SCHEDULED_TIMESTAMP_ANNOTATION = documentedKey(
  "batch.kubernetes.io/cronjob-scheduled-timestamp",
  () => ({
    on: "Job (scheduled, backfill)",
    setBy: "the controller",
    format:
      "RFC 3339 with the offset of `spec.timeZone` at that time, e.g. `2026-03-08T03:30:00-04:00` " +
      "(with several schedules: of the zone of the first schedule the slot came from)",
    meaning: "The same slot, as the built-in CronJob controller writes it (Kubernetes 1.28 and later).",
  }),
);
/**
 * On a Job of a CronJob with more than one schedule: the schedules its slot came from, as JSON
 * `[{"index":0,"schedule":"0 9 * * 1-5","timeZone":"Europe/Berlin"}, …]` (index: the position in spec.schedules;
 * schedule and timeZone as written there, timeZone left out when unset). A one-schedule CronJob's Jobs have none.
 */
export const SCHEDULE_SOURCES_ANNOTATION = documentedKey(`${GROUP}/schedule-sources`, () => ({
  on: "Job (scheduled, backfill) of a CronJob with more than one schedule",
  setBy: "the controller",
  format:
    'JSON: `[{"index":0,"schedule":"<cron>","timeZone":"<IANA zone>"}, …]`, the schedules that fire at the ' +
    "Job's slot (index: the position in `spec.schedules`; schedule and timeZone as written there, timeZone left " +
    "out when unset)",
  meaning:
    "Which of the CronJob's schedules the Job ran for; a second two schedules share is one Job naming both " +
    "(`kubectl cron history` shows them). The upstream scheduled-timestamp annotation is in the first one's " +
    "zone. A one-schedule CronJob's Jobs and run-now Jobs have none.",
}));

const JobConditionSchema = z.looseObject({
  type: z.string(),
  status: z.string(),
  lastTransitionTime: z.string().optional(),
  reason: z.string().optional(),
  message: z.string().optional(),
});

/**
 * A batch/v1 Job as the controller reads it: the fields it uses, with the wire's JSON types (timestamps are
 * RFC 3339 strings); everything else passes through untouched. Jobs from the cache and the API server are
 * parsed with it (readJob).
 */
export const JobSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: WireObjectMetaSchema.optional(),
  spec: z.record(z.string(), z.unknown()).optional(),
  status: z
    .looseObject({
      conditions: z.array(JobConditionSchema).optional(),
      startTime: z.string().optional(),
      completionTime: z.string().optional(),
      active: z.number().optional(),
      succeeded: z.number().optional(),
      failed: z.number().optional(),
    })
    .optional(),
});
export type Job = z.infer<typeof JobSchema>;

/**
 * A Job read from the cache or the API server, as the controller's type. The API server's own Job
 * validation guarantees the shape, so a refusal is a bug somewhere else: thrown, like any failed read.
 */
export function readJob(obj: Readonly<KubeObject>): Job {
  const r = JobSchema.safeParse(obj);
  if (r.success) return r.data;
  const name = `${obj.metadata?.namespace ?? ""}/${obj.metadata?.name ?? ""}`;
  throw new Error(`Job ${name} is not a batch/v1 Job: ${z.prettifyError(r.error).replaceAll("\n", "; ")}`);
}

type JobClass = "successful" | "failed" | "active";

/** Complete=True → successful, Failed=True → failed, anything else is still running. */
export function classifyJob(job: Readonly<Job>): JobClass {
  const conds = job.status?.conditions ?? [];
  if (conds.some((c) => c.type === "Complete" && c.status === "True")) return "successful";
  if (conds.some((c) => c.type === "Failed" && c.status === "True")) return "failed";
  return "active";
}

/**
 * When a Job began to run, for the start limit and how long it has run: status.startTime, which the Job controller
 * sets when it starts the Job and again when it resumes a suspended one. A Job that was suspended (queued by Kueue
 * or another controller) counts from its resume, its Suspended condition turning False, also before the Job
 * controller has set startTime again; while a resume is not seen yet (spec.suspend cleared, the condition still
 * True), undefined: the time it spent queued is not time its Pods took to start.
 */
export function runningSince(job: Readonly<Job>): Date | undefined {
  const suspended = job.status?.conditions?.find((c) => c.type === "Suspended");
  if (suspended?.status === "True") return undefined;
  const times = [job.status?.startTime, suspended?.lastTransitionTime]
    .filter((t): t is string => typeof t === "string")
    .map((t) => Date.parse(t))
    .filter((t) => !Number.isNaN(t));
  if (times.length > 0) return new Date(Math.max(...times));
  const created = job.metadata?.creationTimestamp ? Date.parse(job.metadata.creationTimestamp) : NaN;
  return Number.isNaN(created) ? undefined : new Date(created);
}

/** The time the Job finished: completionTime, else when its final condition turned true. */
export function finishedAt(job: Readonly<Job>): Date | undefined {
  if (job.status?.completionTime) return new Date(job.status.completionTime);
  const c = job.status?.conditions?.find((x) => (x.type === "Complete" || x.type === "Failed") && x.status === "True");
  return c?.lastTransitionTime ? new Date(c.lastTransitionTime) : undefined;
}

/** The slot a Job was created for, from our annotation or the upstream controller's. */
export function scheduledTimeOf(job: Readonly<Job>): Date | undefined {
  const a = job.metadata?.annotations ?? {};
  for (const key of [SCHEDULED_AT_ANNOTATION, K8S_SCHEDULED_TIMESTAMP_ANNOTATION]) {
    const v = a[key];
    if (v) {
      const d = new Date(v);
      if (!Number.isNaN(d.getTime())) return d;
    }
  }
  return undefined;
}

/**
 * On a Job of a CronJob in a concurrency group: the group's name, so the group's running Jobs are found by one
 * index (controllers/groups.ts) whichever CronJob made them. A name longer than a label value (63) is kept as its
 * first 54 characters and a hash, still unique.
 */
export const CONCURRENCY_GROUP_LABEL: string = documentedKey(`${GROUP}/concurrency-group`, () => ({
  on: "Job of a CronJob with `spec.concurrencyGroup`",
  setBy: "the controller (a template label of the same key is replaced)",
  format: "the group's name (a name longer than 63 characters: its first 54 and a hash)",
  meaning:
    "The group whose place the Job takes: the operator counts a group's running Jobs by it, whichever CronJob " +
    `made them (\`kubectl get jobs -l ${CONCURRENCY_GROUP_LABEL}=NAME\`).`,
}));

/** CONCURRENCY_GROUP_LABEL's value for a group name. */
export function groupLabelValue(group: string): string {
  if (group.length <= 63) return group;
  let h = 0x811c9dc5;
  for (let i = 0; i < group.length; i++) h = Math.imul(h ^ group.charCodeAt(i), 0x01000193) >>> 0;
  return `${group.slice(0, 54).replace(/[.-]+$/, "")}-${h.toString(16).padStart(8, "0")}`;
}

/**
 * On a Job the operator ended because its Pods did not start within spec.startTimeoutSeconds: the reason
 * (ENDED_REASONS) and what its Pods showed. Written with the end itself (one update), so the record rebuilt from the
 * Job says why after any crash.
 */
export const ENDED_REASON_ANNOTATION = documentedKey(`${GROUP}/ended-reason`, () => ({
  on: "Job the operator ended because its Pods did not start within `spec.startTimeoutSeconds`",
  setBy: "the controller, in the same update that lowers the Job's `spec.activeDeadlineSeconds`",
  format: "`StartTimeout`",
  meaning:
    "Why the run ended: `status.recentRuns` gives its outcome this reason (not the Job's DeadlineExceeded), also " +
    "when the entry is rebuilt from the Job.",
}));
export const ENDED_MESSAGE_ANNOTATION = documentedKey(`${GROUP}/ended-message`, () => ({
  on: "Job the operator ended because its Pods did not start",
  setBy: "the controller, with the reason",
  format:
    "text for people: what the Pods showed (`container main: ImagePullBackOff (...)`, the scheduler's message, ...); " +
    "earlier versions began it with the start limit",
  meaning: "The outcome's message in `status.recentRuns`, and what `kubectl cron why` quotes.",
}));
export const ENDED_PODS_ANNOTATION = documentedKey(`${GROUP}/ended-pods`, () => ({
  on: "Job the operator ended because its Pods did not start",
  setBy: "the controller, with the reason",
  format: `one of ${Object.keys(PODS_SHOWED).join(", ")}`,
  meaning:
    "What its Pods showed, as a code: the outcome's `pods` in `status.recentRuns`; `kubectl cron why` picks its fix by it.",
}));

/** Who holds a queued Job: the controller or webhook that suspended it, and since when. */
export interface Queued {
  by: string;
  since?: string | undefined;
}

/** Kueue's label naming the LocalQueue a Job is submitted to. */
export const KUEUE_QUEUE_NAME_KEY = "kueue.x-k8s.io/queue-name";

/**
 * Whether a Job is queued: suspended (spec.suspend, or its Suspended condition) and not finished. Kueue suspends
 * the Jobs it has not admitted; such a Job is waiting for a place, not stuck, and the operator never unsuspends it.
 * `by` says who, from what the Job carries: Kueue's queue label, spec.managedBy, or else another controller.
 */
export function queuedBy(job: Readonly<Job>): Queued | undefined {
  if (classifyJob(job) !== "active") return undefined;
  const spec = job.spec ?? {};
  const cond = job.status?.conditions?.find((c) => c.type === "Suspended");
  // spec.suspend is what holds the Job; the condition follows it (the cache keeps both, controllers/job.ts).
  const suspended = typeof spec.suspend === "boolean" ? spec.suspend : cond?.status === "True";
  if (!suspended) return undefined;
  const queue = job.metadata?.labels?.[KUEUE_QUEUE_NAME_KEY];
  const managedBy = typeof spec.managedBy === "string" ? spec.managedBy : undefined;
  const by = queue
    ? `Kueue (queue ${queue})`
    : managedBy && managedBy !== "kubernetes.io/job-controller"
      ? managedBy
      : "spec.suspend (set by the Job template, an admission webhook or another controller)";
  return { by, since: cond?.lastTransitionTime ?? job.metadata?.creationTimestamp };
}

// A slot's Job name (the idempotency lock against duplicate runs) lives with the other runs' names.
export { jobNameFor } from "./jobnames.ts";

/** The controller owner reference if it is a CronJob of our API group (any version). */
export function cronJobOwnerOf(job: Readonly<KubeObject>): OwnerReference | undefined {
  const ref = controllerOf(job as KubeObject);
  if (!ref || ref.kind !== KIND) return undefined;
  const group = ref.apiVersion.split("/")[0];
  return group === API_VERSION.split("/")[0] ? ref : undefined;
}

/**
 * RFC 3339 with the zone's offset at that instant, e.g. 2026-03-08T03:30:00-04:00 (the upstream annotation's format).
 * Not date-fns-tz's formatInTimeZone: it formats through a Date in the process's own zone, so a wall time that zone
 * skips comes out an hour off (with TZ=America/New_York, 2026-03-08T02:30:00Z formats as 03:30:00Z). The offset
 * comes from date-fns-tz (utcOffsetAt), guarded against exactly that; the text is assembled here.
 */
export function rfc3339InZone(t: Date, timeZone: string): string {
  const offsetMs = utcOffsetAt(timeZone, t);
  const local = new Date(t.getTime() + offsetMs).toISOString().slice(0, 19);
  if (offsetMs === 0) return `${local}Z`;
  const sign = offsetMs < 0 ? "-" : "+";
  const abs = Math.abs(offsetMs) / 60_000;
  const hh = String(Math.floor(abs / 60)).padStart(2, "0");
  const mm = String(abs % 60).padStart(2, "0");
  return `${local}${sign}${hh}:${mm}`;
}

/** What jobForSlot needs of a CronJob (the stored object, or one under admission). */
export const JobSourceSchema = z.object({
  metadata: z.looseObject({
    name: z.string().optional(),
    namespace: z.string().optional(),
    uid: z.string().optional(),
  }),
  spec: CronJobWireSchema.shape.spec.pick({ timeZone: true, jobTemplate: true, concurrencyGroup: true, retry: true }),
});
export type JobSource = z.infer<typeof JobSourceSchema>;

/**
 * The Job the controller creates for a slot: the template's labels (jobLabels) and annotations, the
 * scheduled-time annotations, a controller owner reference, the template's spec. The admission webhook dry-runs exactly
 * this object, so what it accepts is what the controller can create.
 */
export function jobForSlot(cronJob: JobSource, slot: Date): Job {
  const tz = cronJob.spec.timeZone ?? "UTC";
  return jobFromTemplate(cronJob, jobNameFor(cronJob.metadata.name ?? "", slot), {
    [SCHEDULED_AT_ANNOTATION]: rfc3339(slot),
    [K8S_SCHEDULED_TIMESTAMP_ANNOTATION]: rfc3339InZone(slot, tz),
  });
}

/** A schedule a slot came from: its position in the CronJob's list, and the schedule and zone as written there. */
export interface ScheduleSource {
  index: number;
  schedule: string;
  timeZone?: string;
}

/** SCHEDULE_SOURCES_ANNOTATION's value. */
export function scheduleSourcesValue(sources: readonly ScheduleSource[]): string {
  return JSON.stringify(
    sources.map((s) => ({
      index: s.index,
      schedule: s.schedule,
      ...(s.timeZone !== undefined ? { timeZone: s.timeZone } : {}),
    })),
  );
}

/** The sources a Job's annotation names; undefined without one, or when it is not what scheduleSourcesValue writes. */
export function scheduleSourcesOf(job: Readonly<Job>): ScheduleSource[] | undefined {
  const text = job.metadata?.annotations?.[SCHEDULE_SOURCES_ANNOTATION];
  if (text === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  const isSource = (e: unknown): e is ScheduleSource =>
    isObj(e) &&
    Number.isSafeInteger(e.index) &&
    typeof e.schedule === "string" &&
    (e.timeZone === undefined || typeof e.timeZone === "string");
  return Array.isArray(v) && v.length > 0 && v.every(isSource) ? v.map((s) => ({ ...s })) : undefined;
}

/** A source as a person reads it: `0 9 * * 1-5 (Europe/Berlin)`, the zone left out when unset. */
export function scheduleSourceText(s: ScheduleSource): string {
  return s.timeZone === undefined ? s.schedule : `${s.schedule} (${s.timeZone})`;
}

/**
 * A slot's Job (jobForSlot's, or a backfill's) of a CronJob with several schedules: marked with the schedules the
 * slot came from, and its upstream timestamp in the first one's zone (each source may have its own; the first is
 * the one spec.schedules lists first). No sources: the Job as it is, as for a one-schedule CronJob.
 */
export function withScheduleSources(job: Job, slot: Date, sources: readonly ScheduleSource[] | undefined): Job {
  if (!sources?.length) return job;
  const zone = sources[0]!.timeZone ?? "UTC";
  job.metadata = {
    ...job.metadata,
    annotations: {
      ...job.metadata?.annotations,
      [K8S_SCHEDULED_TIMESTAMP_ANNOTATION]: rfc3339InZone(slot, zone),
      [SCHEDULE_SOURCES_ANNOTATION]: scheduleSourcesValue(sources),
    },
  };
  return job;
}

/**
 * The Job for a run-now request: the same template, named after the request (so a second attempt finds the
 * name taken), marked manual as `kubectl create job --from=cronjob/…` marks its Jobs, and without the
 * scheduled-time annotations: a manual run has no slot and does not move lastScheduleTime.
 */
export function jobForRunNow(cronJob: JobSource, request: string, requestedBy: string | undefined): Job {
  return jobFromTemplate(cronJob, manualJobName(cronJob.metadata.name ?? "", request), {
    [INSTANTIATE_ANNOTATION]: INSTANTIATE_MANUAL,
    [RUN_NOW_REQUEST_ANNOTATION]: request,
    ...(requestedBy ? { [RUN_NOW_REQUESTED_BY_ANNOTATION]: requestedBy } : {}),
  });
}

/**
 * The Job's labels: the template's, and CRONJOB_NAME_LABEL with the CronJob's name, which wins over a
 * template label of the same key (it says which CronJob a Job belongs to, and `kubectl cron history` selects
 * by it, so a template must not be able to point it at another CronJob; the validating webhook warns).
 * A template without labels gets the pod template's first, as the API server would have defaulted them for
 * a Job without labels: our label must not take away the labels such Jobs always had.
 */
function jobLabels(cronJob: JobSource): Record<string, string> {
  const tmpl = cronJob.spec.jobTemplate;
  const own = tmpl.metadata?.labels ?? {};
  const base = Object.keys(own).length > 0 ? own : podTemplateLabels(tmpl.spec);
  const group = cronJob.spec.concurrencyGroup;
  return {
    ...base,
    [CRONJOB_NAME_LABEL]: cronJob.metadata.name ?? "",
    ...(group ? { [CONCURRENCY_GROUP_LABEL]: groupLabelValue(group) } : {}),
  };
}

/** spec.template.metadata.labels of a Job spec read as wire JSON (the CRD schema makes them strings). */
function podTemplateLabels(spec: Record<string, unknown> | undefined): Record<string, string> {
  const template = spec?.template;
  const metadata = isObj(template) ? template.metadata : undefined;
  const labels = isObj(metadata) ? metadata.labels : undefined;
  return isObj(labels) ? (labels as Record<string, string>) : {};
}

function jobFromTemplate(cronJob: JobSource, name: string, extraAnnotations: Record<string, string>): Job {
  const tmpl = cronJob.spec.jobTemplate;
  const annotations: Record<string, string> = { ...(tmpl.metadata?.annotations ?? {}), ...extraAnnotations };
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name,
      namespace: cronJob.metadata.namespace,
      labels: jobLabels(cronJob),
      annotations,
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: KIND,
          name: cronJob.metadata.name ?? "",
          uid: cronJob.metadata.uid ?? "",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: structuredClone(tmpl.spec ?? {}),
  };
}

/**
 * Who retries a failing run, and how long it waits before each retry, by the Pod template's restartPolicy. Never:
 * the Job controller recreates the Pod after 10 s, doubling with each failure, at most 6 minutes (the Job
 * documentation's "Pod backoff failure policy"). OnFailure: the Pod stays and the kubelet restarts its container
 * after 10 s, doubling, at most 5 minutes (CrashLoopBackOff); the Job controller counts those restarts against
 * backoffLimit. A figure computed from it is a lower bound: the run time of each try comes on top.
 */
const RETRY_BACKOFF = {
  Never: {
    initialSeconds: 10,
    maxSeconds: 360,
    words: "the Job controller waits 10 s before the first retry, doubling up to 6m",
  },
  OnFailure: {
    initialSeconds: 10,
    maxSeconds: 300,
    words:
      "with restartPolicy OnFailure the kubelet restarts the container in its Pod, waiting 10 s before the first restart, doubling up to 5m",
  },
} as const;

/** The retry backoff of a Pod template's restartPolicy (Never, the Job's usual one, unless it is OnFailure). */
function retryBackoff(restartPolicy: unknown): (typeof RETRY_BACKOFF)[keyof typeof RETRY_BACKOFF] {
  return restartPolicy === "OnFailure" ? RETRY_BACKOFF.OnFailure : RETRY_BACKOFF.Never;
}

/** How the retries of a failing run are spaced, in words, for `restartPolicy` (the admission warning and `why`). */
export function retryBackoffWords(restartPolicy: unknown): string {
  return retryBackoff(restartPolicy).words;
}

/**
 * The least time a Job spends waiting between retries to use up `backoffLimit`, for its Pods' `restartPolicy`: the
 * sum of the backoffs (10 s, 20 s, … capped at 6 minutes for Never, 5 minutes for OnFailure). A lower bound: the
 * Pods' own run time comes on top. In closed form, since backoffLimit may be as large as an int32.
 */
export function worstCaseRetrySeconds(backoffLimit: number, restartPolicy?: unknown): number {
  const { initialSeconds, maxSeconds } = retryBackoff(restartPolicy);
  let doubling = 0;
  let wait = initialSeconds;
  while (doubling < backoffLimit && wait < maxSeconds) {
    doubling++;
    wait *= 2;
  }
  // The doubled waits below the cap, then the cap for each retry after them; the last doubling may cross the cap.
  let uncapped = 0;
  for (let i = 0; i < doubling; i++) uncapped += Math.min(initialSeconds * 2 ** i, maxSeconds);
  return uncapped + (backoffLimit - doubling) * maxSeconds;
}
