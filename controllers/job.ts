// What the CronJob controller reads and writes on batch/v1 Jobs.
import type { KubeObject, OwnerReference } from "../runtime/kinds.ts";
import { controllerOf } from "../runtime/kinds.ts";
import { API_VERSION, KIND } from "../api/v1/index.ts";
// The subpath keeps date-fns' barrel (hundreds of modules, ~300 MB of RSS) out of the process.
import { getTimezoneOffset } from "date-fns-tz/getTimezoneOffset";
import { rfc3339 } from "../runtime/metatime.ts";

export const SCHEDULED_AT_ANNOTATION = "batch.tutorial.kubebuilder.io/scheduled-at";
export const K8S_SCHEDULED_TIMESTAMP_ANNOTATION = "batch.kubernetes.io/cronjob-scheduled-timestamp";

export interface JobCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface Job extends KubeObject {
  spec?: Record<string, unknown>;
  status?: {
    conditions?: JobCondition[];
    startTime?: string;
    completionTime?: string;
    active?: number;
    succeeded?: number;
    failed?: number;
  };
}

export type JobClass = "successful" | "failed" | "active";

/** Complete=True → successful, Failed=True → failed, anything else is still running. */
export function classifyJob(job: Readonly<Job>): JobClass {
  const conds = job.status?.conditions ?? [];
  if (conds.some((c) => c.type === "Complete" && c.status === "True")) return "successful";
  if (conds.some((c) => c.type === "Failed" && c.status === "True")) return "failed";
  return "active";
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

/** Deterministic Job name for a slot: the idempotency lock against duplicate runs. */
export function jobNameFor(cronJobName: string, slot: Date): string {
  return `${cronJobName}-${Math.floor(slot.getTime() / 1000)}`;
}

/** The controller owner reference if it is a CronJob of our API group (any version). */
export function cronJobOwnerOf(job: Readonly<KubeObject>): OwnerReference | undefined {
  const ref = controllerOf(job as KubeObject);
  if (!ref || ref.kind !== KIND) return undefined;
  const group = ref.apiVersion.split("/")[0];
  return group === API_VERSION.split("/")[0] ? ref : undefined;
}

/** RFC 3339 with the zone's offset at that instant, e.g. 2026-03-08T03:30:00-04:00 (the upstream annotation's format). */
export function rfc3339InZone(t: Date, timeZone: string): string {
  const offsetMs = getTimezoneOffset(timeZone, t);
  const local = new Date(t.getTime() + offsetMs).toISOString().slice(0, 19);
  if (offsetMs === 0) return `${local}Z`;
  const sign = offsetMs < 0 ? "-" : "+";
  const abs = Math.abs(offsetMs) / 60_000;
  const hh = String(Math.floor(abs / 60)).padStart(2, "0");
  const mm = String(abs % 60).padStart(2, "0");
  return `${local}${sign}${hh}:${mm}`;
}

/** What jobForSlot needs of a CronJob (the stored object, or one under admission). */
export interface JobSource {
  metadata: { name?: string; namespace?: string; uid?: string };
  spec: {
    timeZone?: string;
    jobTemplate: {
      metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
      spec?: unknown;
    };
  };
}

/**
 * The Job the controller creates for a slot: the template's labels and annotations, the scheduled-time
 * annotations, a controller owner reference, the template's spec. The admission webhook dry-runs exactly
 * this object, so what it accepts is what the controller can create.
 */
export function jobForSlot(cronJob: JobSource, slot: Date): Job {
  const tmpl = cronJob.spec.jobTemplate;
  const tz = cronJob.spec.timeZone ?? "UTC";
  const annotations: Record<string, string> = {
    ...(tmpl.metadata?.annotations ?? {}),
    [SCHEDULED_AT_ANNOTATION]: rfc3339(slot),
    [K8S_SCHEDULED_TIMESTAMP_ANNOTATION]: rfc3339InZone(slot, tz),
  };
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: jobNameFor(cronJob.metadata.name ?? "", slot),
      namespace: cronJob.metadata.namespace,
      labels: { ...(tmpl.metadata?.labels ?? {}) },
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
    spec: structuredClone(tmpl.spec ?? {}) as Record<string, unknown>,
  };
}
