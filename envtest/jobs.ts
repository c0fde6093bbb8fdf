// Batch Jobs as the Job controller leaves them (running, Complete, Failed, with the 1.31+ terminal conditions),
// created through an ObjectClient: the tests' fixtures and the dashboard benchmark's staged fleet share them.
import type { Job } from "../api/v1/index.ts";
import {
  API_VERSION,
  K8S_SCHEDULED_TIMESTAMP_ANNOTATION,
  KIND,
  rfc3339InZone,
  SCHEDULED_AT_ANNOTATION,
} from "../api/v1/index.ts";
import type { ObjectClient } from "../runtime/interfaces.ts";
import { Kinds } from "../runtime/kinds.ts";
import { rfc3339 } from "../runtime/metatime.ts";

/** A time as a test writes it: an RFC 3339 string as it is, an instant (epoch ms or Date) in whole seconds. */
type Time = string | number | Date;
const wireTime = (t: Time): string => (typeof t === "string" ? t : rfc3339(new Date(t)));

/**
 * Where a Job is: running, failing (1.31+: FailureTarget=True, its Pods still terminating, Failed not yet True), or
 * finished as the Job controller ends it.
 */
export type JobState = "active" | "failing" | "complete" | "failed";

/**
 * A Job's status as a Kubernetes 1.31+ Job controller writes it: a running Job with `active`; a finished one
 * with its interim condition beside the final one, both True at `end` (SuccessCriteriaMet with Complete, and
 * completionTime and succeeded; FailureTarget with Failed, and failed). `start` is startTime; a Job that
 * never started has none. `failure`: a failed Job's reason and message on both conditions, as the Job controller
 * writes them (BackoffLimitExceeded, DeadlineExceeded, ...).
 */
export function jobStatus(o: {
  state: JobState;
  start?: Time;
  end?: Time;
  failure?: { reason: string; message?: string };
}): NonNullable<Job["status"]> {
  const startTime = o.start === undefined ? {} : { startTime: wireTime(o.start) };
  if (o.state === "active") return { ...startTime, active: 1 };
  if (o.end === undefined) throw new Error(`jobStatus: a ${o.state} Job needs its end time`);
  const end = wireTime(o.end);
  if (o.state === "failing") {
    // The Job controller has decided the Job fails (a limit passed) and is terminating its Pods: not ended yet.
    const why = o.failure ? { reason: o.failure.reason, message: o.failure.message ?? "" } : {};
    return {
      ...startTime,
      failed: 1,
      terminating: 1,
      conditions: [{ type: "FailureTarget", status: "True", lastTransitionTime: end, ...why }],
    };
  }
  const [interim, final] = o.state === "complete" ? ["SuccessCriteriaMet", "Complete"] : ["FailureTarget", "Failed"];
  const f = o.state === "failed" ? o.failure : undefined;
  const why = f ? { reason: f.reason, ...(f.message !== undefined ? { message: f.message } : {}) } : {};
  return {
    ...startTime,
    ...(o.state === "complete" ? { completionTime: end, succeeded: 1 } : { failed: 1 }),
    conditions: [
      { type: interim, status: "True", lastTransitionTime: end, ...why },
      { type: final, status: "True", lastTransitionTime: end, ...why },
    ],
  };
}

/** What batchJob builds a Job from; all but the name optional. */
export interface JobFixture {
  name: string;
  namespace?: string;
  uid?: string;
  /** The CronJob that controls it: a controller owner reference as the controller writes it (jobForSlot). */
  owner?: { name: string; uid: string };
  /** The slot it runs for: both scheduled-time annotations, as jobForSlot writes them (the upstream one in timeZone). */
  slot?: Time;
  timeZone?: string;
  /** More annotations; a key the slot also sets wins over it (a malformed annotation, say). */
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  /** Without one, no status: a Job just created, before the Job controller has seen it. */
  state?: JobState;
  start?: Time;
  /** When a finished Job ended. */
  end?: Time;
  /** A failed Job's condition reason and message. */
  failure?: { reason: string; message?: string };
  /** The Job's spec; a one-container busybox Pod that is never restarted by default. */
  spec?: Record<string, unknown>;
}

/**
 * A batch/v1 Job for a test, from what it is about: its name, the CronJob that owns it, its slot, and where it
 * is (jobStatus). Against an API server, create it with createJob (status goes through the status subresource).
 */
export function batchJob(o: JobFixture): Job {
  const slotAnnotations: Record<string, string> =
    o.slot === undefined
      ? {}
      : {
          [SCHEDULED_AT_ANNOTATION]: wireTime(o.slot),
          [K8S_SCHEDULED_TIMESTAMP_ANNOTATION]: rfc3339InZone(new Date(o.slot), o.timeZone ?? "UTC"),
        };
  const annotations = { ...slotAnnotations, ...o.annotations };
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: o.name,
      ...(o.namespace !== undefined ? { namespace: o.namespace } : {}),
      ...(o.uid !== undefined ? { uid: o.uid } : {}),
      ...(o.labels ? { labels: o.labels } : {}),
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
      ...(o.owner
        ? {
            ownerReferences: [
              {
                apiVersion: API_VERSION,
                kind: KIND,
                name: o.owner.name,
                uid: o.owner.uid,
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          }
        : {}),
    },
    spec: o.spec ?? { template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] } } },
    ...(o.state ? { status: jobStatus({ state: o.state, start: o.start, end: o.end, failure: o.failure }) } : {}),
  };
}

/**
 * Create a Job (batchJob) as the API server takes it: the object without its status (a create drops it), then
 * the status through the status subresource. Returns the Job as stored; `namespace` when the Job names none.
 */
export async function createJob(client: ObjectClient, job: Job, namespace?: string): Promise<Job> {
  const { status, ...object } = job;
  const metadata = { ...(namespace !== undefined ? { namespace } : {}), ...object.metadata };
  const created = await client.create<Job>(Kinds.Job, { ...object, metadata });
  return status ? client.updateStatus<Job>(Kinds.Job, { ...created, status }) : created;
}
