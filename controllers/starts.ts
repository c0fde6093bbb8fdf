// A run that never starts is ended (spec.startTimeoutSeconds): a Job whose Pods have not started once the limit has
// passed (an image that cannot be pulled, no node that fits, Pods an admission webhook refuses) would otherwise hold
// concurrencyPolicy Forbid and its group's place until someone deletes it. The operator ends it the Job API's own
// way — spec.activeDeadlineSeconds lowered to what has passed, so the Job controller fails it (DeadlineExceeded) and
// removes its Pods — in the same update that writes why on the Job (ENDED_*_ANNOTATION: the reason, and what the
// Pods showed as a code and in words), so the record rebuilt from the Job says why after any crash. A queued Job
// (suspended by Kueue or another controller) is never ended here. Three parts: step 4 reads (readStarts: the Pods,
// the Job live), decides (startLimit, pure: the update, the Event), and the commit (step 10) writes (endJobs).
import {
  ENDED_MESSAGE_ANNOTATION,
  ENDED_PODS_ANNOTATION,
  ENDED_REASON_ANNOTATION,
  EndedReason,
  EventReason,
  type Job,
  MAX_RECORD_MESSAGE_LENGTH,
  PodsShowed,
  queuedBy,
  runningSince,
} from "../api/v1/index.ts";
import type { ReconcileContext } from "../runtime/controller.ts";
import { isNotFound } from "../runtime/errors.ts";
import type { ObjectClient } from "../runtime/interfaces.ts";
import { type KubeObject, Kinds } from "../runtime/kinds.ts";
import type { EventDecision } from "./events.ts";

/** A running Job past its start limit whose Pods did not start, as step 4 read it: its Pods, and the Job read live. */
interface Unstarted {
  job: Readonly<Job>;
  pods: PodView[];
  live: Job & KubeObject;
}

/** What step 4 read for the start limit: the Jobs past it whose Pods did not start, and when to look again (ms). */
interface StartReads {
  limitSeconds: number;
  unstarted: Unstarted[];
  /** The earliest instant (ms) an active Job's start limit passes, for the requeue. */
  nextCheckAt?: number;
}

/** A Job the start limit ends: the update the commit writes (best effort), its Event and its log line's fields. */
export interface JobEnd {
  name: string;
  update: Job & KubeObject;
  event: EventDecision;
  limitSeconds: number;
  why: string;
}

/** What the start limit decided: the Jobs to end (the commit ends them), their Events, and when to look again. */
interface StartLimitDecision {
  ends: JobEnd[];
  events: EventDecision[];
  nextCheckAt?: number;
}

/** A Pod as this step reads it. */
interface PodView {
  metadata?: { name?: string };
  status?: {
    phase?: string;
    conditions?: { type?: string; status?: string; reason?: string; message?: string }[];
    containerStatuses?: PodContainerStatus[];
    initContainerStatuses?: PodContainerStatus[];
  };
}
interface PodContainerStatus {
  name?: string;
  state?: { waiting?: { reason?: string; message?: string }; running?: object; terminated?: object };
}

/**
 * A Job's Pods, by the label the Job controller puts on them: `batch.kubernetes.io/controller-uid` from Kubernetes
 * 1.27, `controller-uid` before (and beside it since): the second is read only when the first finds none.
 */
async function podsOf(client: ObjectClient, namespace: string | undefined, uid: string): Promise<PodView[]> {
  for (const label of ["batch.kubernetes.io/controller-uid", "controller-uid"]) {
    const pods = (await client.list<PodView & KubeObject>(Kinds.Pod, { namespace, labelSelector: `${label}=${uid}` }))
      .items;
    if (pods.length) return pods;
  }
  return [];
}

/** A Job whose spec.managedBy names a controller other than the built-in Job controller. */
function managedElsewhere(job: Readonly<Job>): boolean {
  const by = job.spec?.managedBy;
  return typeof by === "string" && by !== "" && by !== "kubernetes.io/job-controller";
}

/** Whether a Job shows, in its own status, that a Pod of it started: one is ready, succeeded or failed. */
function startedByStatus(job: Readonly<Job>): boolean {
  const s = job.status as { ready?: number; succeeded?: number; failed?: number } | undefined;
  return (s?.ready ?? 0) > 0 || (s?.succeeded ?? 0) > 0 || (s?.failed ?? 0) > 0;
}

/** A Pod that started: running or ended, or one of its containers did. */
function podStarted(p: PodView): boolean {
  const phase = p.status?.phase;
  if (phase === "Running" || phase === "Succeeded" || phase === "Failed") return true;
  return [...(p.status?.containerStatuses ?? []), ...(p.status?.initContainerStatuses ?? [])].some(
    (c) => c.state?.running !== undefined || c.state?.terminated !== undefined,
  );
}

/** Waiting reasons that mean an image could not be pulled (the kubelet's words). */
const PULL_REASONS: ReadonlySet<string> = new Set([
  "ErrImagePull",
  "ImagePullBackOff",
  "InvalidImageName",
  "ErrImageNeverPull",
]);

/** What the Pods show: a code (the first Pod's that says something), and in one line each Pod's reason. */
function podsShowed(pods: readonly PodView[]): { showed: PodsShowed; words: string } {
  if (!pods.length) {
    return {
      showed: PodsShowed.NoPod,
      words:
        "no Pod was created (a ResourceQuota, a LimitRange or an admission webhook may refuse them: kubectl describe job)",
    };
  }
  const seen = new Set<string>();
  let showed: PodsShowed | undefined;
  for (const p of pods) {
    const waiting = [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])].find(
      (c) =>
        c.state?.waiting?.reason &&
        c.state.waiting.reason !== "ContainerCreating" &&
        c.state.waiting.reason !== "PodInitializing",
    );
    if (waiting) {
      const w = waiting.state!.waiting!;
      showed ??= PULL_REASONS.has(w.reason ?? "") ? PodsShowed.ImagePull : PodsShowed.Waiting;
      seen.add(`container ${waiting.name ?? "?"}: ${w.reason}${w.message ? ` (${w.message})` : ""}`);
      continue;
    }
    const unscheduled = p.status?.conditions?.find((c) => c.type === "PodScheduled" && c.status === "False");
    if (unscheduled) {
      showed ??= PodsShowed.Unschedulable;
      seen.add(`${unscheduled.reason ?? "Unschedulable"}${unscheduled.message ? `: ${unscheduled.message}` : ""}`);
      continue;
    }
    seen.add(`Pod ${p.metadata?.name ?? "?"} is ${p.status?.phase ?? "Pending"}`);
  }
  const text = [...seen].join("; ");
  return {
    showed: showed ?? PodsShowed.Pending,
    words: text.length > MAX_RECORD_MESSAGE_LENGTH ? `${text.slice(0, MAX_RECORD_MESSAGE_LENGTH - 1)}…` : text,
  };
}

/** When a Job's start limit passes (ms): from when it began to run (runningSince: a queued Job's resume). */
function limitPassesAt(job: Readonly<Job>, limitSeconds: number): number | undefined {
  const from = runningSince(job);
  return from === undefined ? undefined : from.getTime() + limitSeconds * 1000;
}

/**
 * The start limit's reads: the Pods of the CronJob's running Jobs whose limit (`limitSeconds`) has passed, and each
 * such Job read live when none of its Pods started. `memory.started`: the Jobs (by uid) seen started already, never
 * read again; the reads add to it. Best effort: a failed read is tried again on the next pass.
 */
export async function readStarts(
  client: ObjectClient,
  active: readonly Readonly<Job>[],
  limitSeconds: number,
  memory: { started?: Set<string> | undefined },
  now: number,
  ctx: ReconcileContext,
): Promise<StartReads> {
  const started = (memory.started ??= new Set());
  const out: StartReads = { limitSeconds, unstarted: [] };
  if (limitSeconds <= 0) return out;
  const running = new Set(active.map((j) => j.metadata?.uid));
  for (const uid of started) if (!running.has(uid)) started.delete(uid);
  for (const job of active) {
    const uid = job.metadata?.uid ?? "";
    const name = job.metadata?.name ?? "";
    const ns = job.metadata?.namespace;
    if (!uid || started.has(uid) || job.metadata?.annotations?.[ENDED_REASON_ANNOTATION] || queuedBy(job)) continue;
    // A Job another controller manages (spec.managedBy: MultiKueue runs its Pods in another cluster) has no Pods
    // here to start: its outcome comes from its conditions alone.
    if (managedElsewhere(job)) continue;
    if (startedByStatus(job)) {
      started.add(uid);
      continue;
    }
    const at = limitPassesAt(job, limitSeconds);
    if (at === undefined) continue;
    if (at > now) {
      out.nextCheckAt = Math.min(out.nextCheckAt ?? Infinity, at);
      continue;
    }
    try {
      const pods = await podsOf(client, ns, uid);
      if (pods.some(podStarted)) {
        started.add(uid);
        continue;
      }
      out.unstarted.push({ job, pods, live: await client.get<Job & KubeObject>(Kinds.Job, ns, name) });
    } catch (err) {
      couldNotEnd(err, name, ctx);
    }
  }
  return out;
}

/**
 * The start limit's decision over what step 4 read: each Job whose Pods did not start is ended the Job API's way
 * (its activeDeadlineSeconds lowered to what has passed, why written on it), unless the live read shows another Job
 * by that name, or one queued or managed elsewhere. Pure.
 */
export function startLimit(reads: StartReads, now: number): StartLimitDecision {
  const out: StartLimitDecision = { ends: [], events: [] };
  if (reads.nextCheckAt !== undefined) out.nextCheckAt = reads.nextCheckAt;
  const { limitSeconds } = reads;
  for (const { job, pods, live } of reads.unstarted) {
    const name = job.metadata?.name ?? "";
    const { showed, words: why } = podsShowed(pods);
    if (live.metadata?.uid !== job.metadata?.uid || queuedBy(live) || managedElsewhere(live)) continue;
    const startTime = live.status?.startTime ? Date.parse(live.status.startTime) : now;
    const elapsed = Math.max(1, Math.floor((now - startTime) / 1000));
    const update = {
      ...live,
      metadata: {
        ...live.metadata,
        annotations: {
          ...live.metadata?.annotations,
          [ENDED_REASON_ANNOTATION]: EndedReason.StartTimeout,
          [ENDED_PODS_ANNOTATION]: showed,
          [ENDED_MESSAGE_ANNOTATION]: why,
        },
      },
      spec: { ...live.spec, activeDeadlineSeconds: elapsed },
    };
    const event = {
      reason: EventReason.StartTimeout,
      message: `Ended job ${name}: its Pods did not start within spec.startTimeoutSeconds (${limitSeconds}s): ${why}`,
    };
    out.ends.push({ name, update, event, limitSeconds, why });
    out.events.push(event);
  }
  return out;
}

/**
 * The commit's part of the start limit: each Job ended by one update, best effort (a failed update is tried again on
 * the next pass; a Job gone meanwhile is not ended). Returns the Events of the ends that failed, which are not
 * reported.
 */
export async function endJobs(client: ObjectClient, ends: readonly JobEnd[], ctx: ReconcileContext) {
  const failed: EventDecision[] = [];
  for (const { name, update, event, limitSeconds, why } of ends) {
    try {
      await client.update(Kinds.Job, update);
      ctx.log.info("ended a run whose Pods did not start", { job: name, limitSeconds, why });
    } catch (err) {
      failed.push(event);
      couldNotEnd(err, name, ctx);
    }
  }
  return failed;
}

function couldNotEnd(err: unknown, job: string, ctx: ReconcileContext): void {
  if (!isNotFound(err))
    ctx.log.info("could not end a run whose Pods did not start", {
      job,
      err: err instanceof Error ? err.message : String(err),
    });
}
