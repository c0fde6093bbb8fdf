// The built-in CronJob (batch/v1 from Kubernetes 1.21, batch/v1beta1 before): its shape, and the scheduled time of a
// Job the built-in controller created. Which version the cluster serves is read (read/builtin.ts).
import type { ResourceKind } from "../../../runtime/kinds.ts";
import {
  INSTANTIATE_ANNOTATION,
  INSTANTIATE_MANUAL,
  K8S_SCHEDULED_TIMESTAMP_ANNOTATION,
  type Job,
} from "../../../api/v1/index.ts";

export const BUILTIN_VERSIONS = ["v1", "v1beta1"] as const;
export type BuiltinVersion = (typeof BUILTIN_VERSIONS)[number];

export function builtinCronJobKind(version: BuiltinVersion): ResourceKind {
  return { group: "batch", version, kind: "CronJob", plural: "cronjobs", namespaced: true };
}

/** The built-in CronJob's fields this plugin reads (batch/v1 and batch/v1beta1 have the same shape). */
export interface BuiltinCronJob {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [k: string]: unknown;
  };
  spec: {
    schedule?: string;
    timeZone?: string;
    startingDeadlineSeconds?: number;
    concurrencyPolicy?: string;
    suspend?: boolean;
    successfulJobsHistoryLimit?: number;
    failedJobsHistoryLimit?: number;
    jobTemplate?: { metadata?: Record<string, unknown>; spec?: Record<string, unknown> };
    [k: string]: unknown;
  };
  status?: { lastScheduleTime?: string; active?: { name?: string }[]; [k: string]: unknown };
  [k: string]: unknown;
}

/**
 * The slot a Job of the built-in controller ran for: the annotation the v2 controller writes from 1.28
 * (batch.kubernetes.io/cronjob-scheduled-timestamp, RFC 3339), else the name. The old controller (1.20, and
 * before CronJobControllerV2) names a Job `<cronjob>-<scheduled time in Unix seconds>`, the v2 controller
 * `<cronjob>-<Unix minutes>`: seconds have 10 digits from 2001 to 2286, minutes at most 8 until 2160.
 * A manual run (`kubectl create job --from=cronjob/…`, annotated cronjob.kubernetes.io/instantiate: manual)
 * ran for no slot, whatever it is called: `<cronjob>-2026112410`, named after the hour it was made in, would
 * read as a slot in 2034, and no slot would run until then.
 */
export function builtinJobSlot(job: Readonly<Job>, cronJobName: string): Date | undefined {
  if (job.metadata?.annotations?.[INSTANTIATE_ANNOTATION] === INSTANTIATE_MANUAL) return undefined;
  const annotated = job.metadata?.annotations?.[K8S_SCHEDULED_TIMESTAMP_ANNOTATION];
  if (annotated) {
    const d = new Date(annotated);
    if (!Number.isNaN(d.getTime())) return d;
  }
  const name = job.metadata?.name ?? "";
  const prefix = `${cronJobName}-`;
  if (!name.startsWith(prefix)) return undefined;
  const suffix = name.slice(prefix.length);
  // A manual `kubectl create job --from` name has other text.
  if (!/^\d{1,10}$/.test(suffix)) return undefined;
  return new Date(Number(suffix) * (suffix.length === 10 ? 1000 : 60_000));
}

/** A Job's controller is this CronJob (by UID: a Job of a deleted CronJob of the same name is not its own). */
export function isControlledBy(job: Readonly<Job>, uid: string | undefined): boolean {
  return !!uid && (job.metadata?.ownerReferences ?? []).some((r) => r.controller === true && r.uid === uid);
}
