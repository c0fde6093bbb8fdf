// The test side of a run: a watch that records every Job ever created (history cleanup deletes them,
// so listing at the end is not enough), and a "job finisher" that plays the Job controller by marking
// each Job Complete through the status subresource a few seconds after it appears (with SuccessCriteriaMet
// where the API server requires it: completionConditions).
import { atLeast, type KubeVersion, parseVersion } from "../../envtest/versions.ts";
import type { Client } from "../../runtime/client.ts";
import { watchErrorToAPIError } from "../../runtime/client.ts";
import { isGone, isNotFound } from "../../runtime/errors.ts";
import { Kinds, type KubeObject } from "../../runtime/kinds.ts";
import { Limiter, sleep } from "./pool.ts";
import { jitterOffsetOf } from "../../api/v1/jitter.ts";

export interface Job extends KubeObject {
  status?: { conditions?: Array<{ type: string; status: string }>; startTime?: string; completionTime?: string };
}

export interface JobRecord {
  uid: string;
  namespace: string;
  name: string;
  /** "namespace/name" of the controlling CronJob ("" for none). */
  owner: string;
  /** metadata.creationTimestamp, ms (the apiserver stores whole seconds). */
  createdAt: number;
  /** When this watch first saw the Job, ms; undefined for Jobs found by a (re)list. */
  seenAt?: number;
  /** The schedule slot it was created for, ms. */
  slot?: number;
  /** Ours with spec.jitter: how long after its slot its run was due (the Job's jitter-offset annotation), ms. */
  offset?: number;
  deletedAt?: number;
}

export type SlotOf = (job: Job) => number | undefined;

/** Ours: the scheduled-at annotation, else the name suffix in Unix seconds. */
export const ourSlotOf: SlotOf = (job) => {
  const a = job.metadata?.annotations?.["batch.tutorial.kubebuilder.io/scheduled-at"];
  if (a) {
    const t = Date.parse(a);
    if (!Number.isNaN(t)) return t;
  }
  const m = /-(\d+)$/.exec(job.metadata?.name ?? "");
  return m ? Number(m[1]) * 1000 : undefined;
};

/**
 * The built-in controller v2: `<cronjob>-<unix minutes>` (1.20 has no scheduled-time annotation; later releases
 * add one, and keep the name).
 */
export const builtinSlotOf: SlotOf = (job) => {
  const m = /-(\d+)$/.exec(job.metadata?.name ?? "");
  return m ? Number(m[1]) * 60_000 : undefined;
};

function isFinished(job: Job): boolean {
  return (job.status?.conditions ?? []).some(
    (c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True",
  );
}

export class JobRecorder {
  readonly jobs = new Map<string, JobRecord>();
  /** Jobs seen per slot (ms), for "has every CronJob run for this slot yet". */
  readonly perSlot = new Map<number, number>();
  watchRestarts = 0;
  relists = 0;
  private readonly client: Client;
  private readonly slotOf: SlotOf;
  private readonly onNew: (job: Job) => void;
  private readonly abort = new AbortController();
  private rv = "";
  private loop: Promise<void> | undefined;

  constructor(client: Client, slotOf: SlotOf, onNew: (job: Job) => void = () => {}) {
    this.client = client;
    this.slotOf = slotOf;
    this.onNew = onNew;
  }

  /** Resolves after the initial list; the watch then runs until stop(). */
  async start(): Promise<void> {
    await this.list();
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  private async list(): Promise<void> {
    let cont: string | undefined;
    do {
      const page = await this.client.list<Job>(Kinds.Job, { limit: 500, continue: cont });
      for (const j of page.items) this.record(j, undefined);
      cont = page.metadata.continue || undefined;
      this.rv = page.metadata.resourceVersion ?? this.rv;
    } while (cont);
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      try {
        const events = await this.client.watch<Job>(Kinds.Job, {
          resourceVersion: this.rv,
          allowWatchBookmarks: true,
          timeoutSeconds: 1800,
          signal,
        });
        for await (const ev of events) {
          if (ev.type === "ERROR") throw watchErrorToAPIError(ev.object);
          const now = Date.now();
          // Only ADDED is a first sighting: a MODIFIED/DELETED of an unknown Job means one was missed.
          if (ev.type === "ADDED") this.record(ev.object, now);
          else if (ev.type === "MODIFIED") this.record(ev.object, undefined);
          else if (ev.type === "DELETED") {
            this.record(ev.object, undefined);
            const r = this.jobs.get(ev.object.metadata?.uid ?? "");
            if (r && r.deletedAt === undefined) r.deletedAt = now;
          }
          const rv = ev.object.metadata?.resourceVersion;
          if (rv) this.rv = rv;
        }
        if (!signal.aborted) this.watchRestarts++;
      } catch (err) {
        if (signal.aborted) break;
        this.watchRestarts++;
        if (isGone(err)) {
          this.relists++;
          await this.list().catch(() => undefined);
        } else {
          await sleep(500, signal);
        }
      }
    }
  }

  private record(job: Job, seenAt: number | undefined): void {
    const uid = job.metadata?.uid;
    if (!uid || this.jobs.has(uid)) return;
    const ref = job.metadata?.ownerReferences?.find((r) => r.controller);
    const slot = this.slotOf(job);
    const offset = jitterOffsetOf(job);
    const r: JobRecord = {
      uid,
      namespace: job.metadata?.namespace ?? "",
      name: job.metadata?.name ?? "",
      owner: ref ? `${job.metadata?.namespace ?? ""}/${ref.name}` : "",
      createdAt: Date.parse(String(job.metadata?.creationTimestamp ?? "")) || (seenAt ?? Date.now()),
      ...(seenAt !== undefined ? { seenAt } : {}),
      ...(slot !== undefined ? { slot } : {}),
      ...(offset ? { offset: offset * 1000 } : {}),
    };
    this.jobs.set(uid, r);
    if (slot !== undefined) this.perSlot.set(slot, (this.perSlot.get(slot) ?? 0) + 1);
    if (!isFinished(job)) this.onNew(job);
  }
}

/** The control plane's Kubernetes version, from kube-apiserver's GET /version (its gitVersion, e.g. "v1.33.3"). */
export async function serverVersion(client: Client): Promise<KubeVersion> {
  const info = await client.request<{ gitVersion?: string }>("GET", "/version");
  return parseVersion(info?.gitVersion ?? "");
}

/**
 * The conditions a Job's completion writes, the Job controller's own, which the API server of `v` accepts.
 * From 1.32 (JobManagedBy beta, on by default) kube-apiserver refuses Complete=True without SuccessCriteriaMet=True
 * ("cannot set Complete=True condition without the SuccessCriteriaMet=true condition": pkg/apis/batch/validation
 * ValidateJobStatusUpdate, RejectCompleteJobWithoutSuccessCriteriaMet); from 1.31 the Job controller writes
 * SuccessCriteriaMet before Complete for every Job (its delayTerminalCondition, with JobPodReplacementPolicy on since
 * 1.29) and kube-apiserver accepts it on any Job. Older ones get Complete only (SuccessCriteriaMet came with 1.30's
 * JobSuccessPolicy, off there). Decided from the version, not by retrying on an error, so that every completion
 * of a phase is the same write.
 */
export function completionConditions(v: KubeVersion): string[] {
  return atLeast(v, 31) ? ["SuccessCriteriaMet", "Complete"] : ["Complete"];
}

/**
 * The status a Job's completion writes (a merge patch of jobs/status): started at `startTime`, one Pod
 * succeeded, finished `now`, with `conditions` (completionConditions). One patch with both conditions is what
 * kube-apiserver 1.33 accepts (the rules hold on the written status as a whole: SuccessCriteriaMet and Complete
 * set together is a valid transition, like the Job controller's).
 */
export function completionPatch(startTime: string, now: string, conditions: readonly string[]): object {
  return {
    status: {
      startTime,
      completionTime: now,
      succeeded: 1,
      conditions: conditions.map((type) => ({ type, status: "True", lastProbeTime: now, lastTransitionTime: now })),
    },
  };
}

/** Tries of one completion when the API server does not answer, or answers 429 or 5xx. */
const FINISH_TRIES = 4;

function isTransient(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code !== "number" || code === 0 || code === 429 || code >= 500;
}

/**
 * Marks Jobs Complete `delayMs` after they appear, with at most `inFlight` status patches at a time, writing
 * `conditions` (completionConditions of the control plane's version). A refused patch is counted and its
 * message kept: failure() turns them into the phase's error, since a controller whose Jobs never finish is
 * not measured at all (no status at the end of a run, no history cleanup).
 */
export class JobFinisher {
  /** Jobs completed. */
  patched = 0;
  errors = 0;
  firstError = "";
  /** Per patched Job: how late the patch landed after it was due (ms), to see that the finisher keeps up. */
  readonly lagsMs: number[] = [];
  readonly conditions: readonly string[];
  private readonly client: Client;
  private readonly delayMs: number;
  private readonly limiter: Limiter;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inflight = new Set<Promise<void>>();
  private stopped = false;

  constructor(client: Client, delayMs: number, conditions: readonly string[], inFlight = 8) {
    this.client = client;
    this.delayMs = delayMs;
    this.conditions = conditions;
    this.limiter = new Limiter(inFlight);
  }

  schedule(job: Job): void {
    if (this.stopped) return;
    const ns = job.metadata?.namespace ?? "";
    const name = job.metadata?.name ?? "";
    const created = String(job.metadata?.creationTimestamp ?? new Date().toISOString());
    const due = Date.now() + this.delayMs;
    const t = setTimeout(() => {
      this.timers.delete(t);
      const p = this.limiter.run(() => this.finish(ns, name, created, due)).finally(() => this.inflight.delete(p));
      this.inflight.add(p);
    }, this.delayMs);
    this.timers.add(t);
  }

  /** Undefined while every patch was accepted; else an error naming how many failed and the first one's message. */
  failure(): Error | undefined {
    if (!this.errors) return undefined;
    return new Error(
      `the finisher's Job completions failed: ${this.errors} jobs/status patch${this.errors === 1 ? "" : "es"} ` +
        `refused (${this.patched} accepted), the first: ${this.firstError}`,
    );
  }

  private async finish(namespace: string, name: string, startTime: string, due: number): Promise<void> {
    if (this.stopped) return;
    // A transient failure (no answer, 429, 5xx: a loaded machine, as in CI's smoke run beside the end-to-end tests)
    // is tried again, a few times; what the API server refuses is an error at once.
    for (let attempt = 1; ; attempt++) {
      const now = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
      try {
        await this.client.patchStatus(
          Kinds.Job,
          namespace,
          name,
          completionPatch(startTime, now, this.conditions),
          "merge",
        );
        this.patched++;
        this.lagsMs.push(Date.now() - due);
        return;
      } catch (err) {
        if (isNotFound(err)) return;
        if (isTransient(err) && attempt < FINISH_TRIES && !this.stopped) {
          await new Promise((r) => setTimeout(r, 250 * attempt));
          continue;
        }
        if (!this.errors++) this.firstError = (err as Error).message;
        return;
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await Promise.all([...this.inflight]);
  }
}
