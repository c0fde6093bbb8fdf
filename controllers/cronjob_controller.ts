// The CronJob reconciler. It reads top-down like the kubebuilder book's numbered steps:
//   1 load → 2 list children → 3 classify → 4 status → 5 history → 6 guards → 7 schedule →
//   8 missed deadline → 9 due? → 10 concurrency → 11 create → 12 status write → 13 requeue
// Semantics are the Kubernetes batch/v1 CronJob controller (v2) without its known failures; see
// README "Behaviour compared with the built-in CronJob".
import { createHash } from "node:crypto";
import { Histogram } from "prom-client";
import {
  classifyJob,
  cronJobOwnerOf,
  CronJobResource as CronJobKind,
  CronJobSchema,
  type CronJobWire,
  CronJobWireSchema,
  BACKFILL_REQUEST_ANNOTATION,
  backfillRequestOf,
  DEFAULT_MAX_CATCH_UP_RUNS,
  jobForBackfill,
  MAX_BACKFILL_SLOTS,
  MAX_CATCH_UP_SLOTS,
  slotsInRange,
  resumeRequestOf,
  type CronJobWireStatus,
  type Job,
  jobForRunNow,
  jobForSlot,
  jobNameFor,
  manualJobName,
  MAX_RUN_NOW_REQUEST_LENGTH,
  readJob,
  RUN_NOW_REQUEST_ANNOTATION,
  runNowRequesterOf,
  runNowRequestOf,
  scheduledTimeOf,
  type ObjectReference,
} from "../api/v1/index.ts";
import type { CacheIndexer, CacheReader, ObjectReader, ObjectWriter, StatusWriter } from "../runtime/interfaces.ts";
import type { ReconcileContext, Reconciler, Request, Result } from "../runtime/controller.ts";
import { hasStatusCause, isAlreadyExists, isConflict, isNotFound } from "../runtime/errors.ts";
import type { Recorder } from "../runtime/events/types.ts";
import { type KubeObject, Kinds } from "../runtime/kinds.ts";
import type { Manager } from "../runtime/manager.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import { getOrCreate, metricsRegistry } from "../runtime/metrics/registry.ts";
import { type Clock, realClock } from "../runtime/clock.ts";
import { type ConditionInput, setConditions } from "./conditions.ts";
import { type EventReason, recordEvent } from "./events.ts";
import { type CronJobRunMetrics, noCronJobMetrics, type RunOutcome } from "./metrics.ts";
import { type CronJobKey, ReconcilerMemory } from "./memory.ts";
import { newestTimes } from "./status.ts";
import {
  backfillDecision,
  failureStop,
  guards,
  historyBehind,
  missedByPolicy,
  missedDeadline,
  scheduleDecision,
  scheduledConditions,
  slotAlreadyRan,
  statusAfterGuards,
  statusBehind,
  type WriteProblems,
} from "./steps.ts";
import { trimJobForCache } from "./job.ts";
import { parseHashedSchedule } from "../api/v1/schedule/index.ts";

/** Field index: Jobs by the UID of their controlling CronJob. */
const JOB_OWNER_INDEX = "jobOwnerUID";

/**
 * The Job cache the reconciler reads, before the cache starts: Jobs trimmed to metadata and status
 * (trimJobForCache) and indexed by the UID of their controlling CronJob.
 */
export function setupJobCache(cache: CacheIndexer): void {
  cache.setTransform(Kinds.Job, trimJobForCache);
  cache.indexField(Kinds.Job, JOB_OWNER_INDEX, (job) => {
    const ref = cronJobOwnerOf(job);
    return ref ? [ref.uid] : [];
  });
}

/**
 * Requeue slightly after the slot so the reconcile sees it as due. Every Job starts this much late, so it is
 * small: a timer that fires early only costs one more pass (the slot is not due yet; requeued for it again).
 */
const REQUEUE_SLACK_MS = 10;

const jobCreationSkew = getOrCreate(
  "cronjob_controller_job_creation_skew_duration_seconds",
  () =>
    new Histogram({
      name: "cronjob_controller_job_creation_skew_duration_seconds",
      help: "Time between when a Job was scheduled to run and when it was created",
      buckets: [0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
      registers: [metricsRegistry],
    }),
);

/**
 * A stored CronJob as the reconciler reads it: the wire type, which a CronJob (the schema's output) also is.
 * Every step is written for it: defaulted fields may be unset on an object the schema refuses.
 */
type StoredCronJob = Readonly<CronJobWire> & { readonly spec: Readonly<CronJobWire["spec"]> };

/** Step 1's answer for a CronJob in the cache. */
type LoadedCronJob =
  /** The schema accepts it: its defaults applied. */
  | { valid: true; cronJob: StoredCronJob }
  /**
   * The schema refuses it (admission bypassed, or stored before a check existed): the stored values as
   * they are, without defaults, and the schema's issues (field: message, no values).
   */
  | { valid: false; cronJob: StoredCronJob; issues: string[] };

interface Children {
  all: Readonly<Job>[];
  active: Readonly<Job>[];
  successful: Readonly<Job>[];
  failed: Readonly<Job>[];
}

/**
 * What a step that writes Jobs (10, 11, 11b) did: the status it leaves for the next step, and what went
 * wrong. Each such step takes the status the previous one left, so their order is the order of the data.
 */
interface JobWrites {
  status: Readonly<CronJobWireStatus>;
  /** This pass created (or adopted) a Job. */
  created: boolean;
  /** Reported in Degraded (step 12). */
  problems: WriteProblems;
  /** Thrown after the status write, so the work queue retries this CronJob with backoff. */
  retry?: string;
}

/** Nothing written: the status as it was. */
const noWrites = (status: Readonly<CronJobWireStatus>): JobWrites => ({ status, created: false, problems: {} });

/** Two steps' writes, `b` after `a`: b's status, and b's problems over a's. */
function thenWrites(a: JobWrites, b: JobWrites): JobWrites {
  const retry = b.retry ?? a.retry;
  return {
    status: b.status,
    created: a.created || b.created,
    problems: { ...a.problems, ...b.problems },
    ...(retry !== undefined ? { retry } : {}),
  };
}

/** A failed create's writes: the status unchanged. */
function failedWrites(
  status: Readonly<CronJobWireStatus>,
  failed: { problems: WriteProblems; retry?: string },
): JobWrites {
  return {
    ...noWrites(status),
    problems: failed.problems,
    ...(failed.retry !== undefined ? { retry: failed.retry } : {}),
  };
}

/** A create's answer (createOrAdopt): the Job (made now, or by us before), or what went wrong. */
type CreateOutcome = { ok: true; job: Job; created: boolean } | { ok: false; problems: WriteProblems; retry?: string };

interface CronJobReconcilerDeps {
  /** Live reads (a Job the cache may not have seen yet) and the writes: Jobs, and CronJob status. */
  client: ObjectReader & ObjectWriter & StatusWriter;
  /** CronJobs by name and Jobs by JOB_OWNER_INDEX. */
  cache: CacheReader;
  recorder: Recorder;
  clock?: Clock;
  /** Per-CronJob run counters (cronjob_runs_total); none by default. */
  metrics?: CronJobRunMetrics;
}

export class CronJobReconciler implements Reconciler {
  private readonly client: CronJobReconcilerDeps["client"];
  private readonly cache: CacheReader;
  private readonly recorder: Recorder;
  private readonly clock: Clock;
  private readonly metrics: CronJobRunMetrics;
  /** Everything remembered between passes (controllers/memory.ts): one object, one forget. */
  private readonly memory = new ReconcilerMemory<LoadedCronJob>();

  constructor(d: CronJobReconcilerDeps) {
    this.client = d.client;
    this.cache = d.cache;
    this.recorder = d.recorder;
    this.clock = d.clock ?? realClock;
    this.metrics = d.metrics ?? noCronJobMetrics;
  }

  /** Register the Job cache, the owner index and the controller (kubebuilder's SetupWithManager). */
  static setupWithManager(
    mgr: Manager,
    o: { clock?: Clock; maxConcurrentReconciles?: number; metrics?: CronJobRunMetrics } = {},
  ): CronJobReconciler {
    setupJobCache(mgr.cache);
    const r = new CronJobReconciler({
      client: mgr.client,
      cache: mgr.cache,
      recorder: mgr.getEventRecorder(),
      ...(o.clock ? { clock: o.clock } : {}),
      ...(o.metrics ? { metrics: o.metrics } : {}),
    });
    mgr
      .newControllerManagedBy()
      .named("cronjob")
      .for(CronJobKind)
      .owns(Kinds.Job)
      .withOptions({ maxConcurrentReconciles: o.maxConcurrentReconciles ?? 1 })
      .complete(r);
    return r;
  }

  async reconcile(req: Request, ctx: ReconcileContext): Promise<Result> {
    const clockNow = this.clock.now();
    const now = truncateToSecond(clockNow);

    // 1. Load the CronJob; gone → nothing to do (its Jobs are garbage-collected through ownerReferences).
    const loaded = this.loadCronJob(req, ctx);
    if (!loaded) return {};
    if (!loaded.valid) {
      // Reconciled as stored, like a valid one: what makes it unschedulable (zone, schedule) is reported
      // by the guards in step 6 with their own messages, and a field without its default is read as unset
      // (no history cleanup without a limit, concurrency Allow).
      ctx.log.debug("the stored CronJob does not pass the schema; reconciling it as stored", {
        issues: loaded.issues,
      });
    }
    const cronJob = loaded.cronJob;

    // 2–3. List our child Jobs through the owner index and classify them.
    const children = this.listChildren(cronJob);

    // 4. Status from the children and from what status already remembers.
    const fromChildren = await this.statusFromChildren(cronJob, children, ctx);

    // 4b. Stop after repeated failures (spec.stopAfterConsecutiveFailures), or resume.
    const stop = failureStop({
      stopAfter: cronJob.spec.stopAfterConsecutiveFailures,
      generation: cronJob.metadata.generation,
      status: fromChildren.status,
      finished: fromChildren.finished,
      resumeRequest: resumeRequestOf(cronJob),
      now,
    });
    if (stop.event) this.event(cronJob, stop.event.reason, stop.event.message);
    const observed = stop.status;

    // 5. History cleanup comes before scheduling, so a create that keeps failing cannot block it. While a
    // burst of Job creates is on (many slots on the same second), it waits for a pass after the burst: its
    // deletes and their Events would queue in the apiserver with the creates. Nothing is lost meanwhile:
    // cleanup is computed from the children each pass. It waits one pass at most (historyBehind), and so
    // does the status write (statusBehind, step 12): under load that never lets up there is no "after".
    const historyLate = historyBehind(
      { successful: children.successful.length, failed: children.failed.length },
      { successful: cronJob.spec.successfulJobsHistoryLimit, failed: cronJob.spec.failedJobsHistoryLimit },
    );
    const booksLate = statusBehind(cronJob.status, observed, [...children.successful, ...children.failed], now);
    const holdBack = (ctx.burst?.active() ?? false) && !booksLate;
    if (!holdBack || historyLate) await this.cleanupHistory(cronJob, children, ctx);

    // 6. Guards: deleting, bad time zone, bad schedule, suspended.
    const guard = guards({ ...cronJob, status: observed }, this.parseCached(cronJob), observed.active?.length ?? 0);
    const guarded = statusAfterGuards(observed, guard);
    if (guard.stop) {
      if (guard.event) this.event(cronJob, guard.event.reason, guard.event.message);
      // A run-now request is an explicit ask: it runs while the schedule is suspended (not while deleting
      // or invalid), as `kubectl create job --from` does for the built-in kind.
      // A backfill is as explicit: it runs too (suspended or stopped), and is recorded in the other cases.
      const runNow = guard.suspended
        ? await this.runNowIfRequested(cronJob, children, guarded, ctx)
        : noWrites(guarded);
      const writes = guard.suspended
        ? thenWrites(runNow, await this.runBackfill(cronJob, children, runNow.status, now, ctx))
        : runNow;
      if (!booksLate && (holdBack || ctx.burst?.active())) {
        if (writes.retry) throw new Error(writes.retry);
        return { requeueWhenQuiet: true };
      }
      const written = await this.writeStatus(cronJob, writes.status, guard.conditions, now, ctx);
      if (writes.retry) throw new Error(writes.retry);
      return written ? {} : { requeue: true };
    }

    // 7. Which slot is due, and when is the next one.
    const window = scheduleDecision({
      schedule: guard.schedule,
      lastScheduleTime: guarded.lastScheduleTime,
      creationTimestamp: cronJob.metadata.creationTimestamp,
      startingDeadlineSeconds: cronJob.spec.startingDeadlineSeconds,
      missedRunPolicy: cronJob.spec.missedRunPolicy,
      concurrencyPolicy: cronJob.spec.concurrencyPolicy,
      announced: cronJob.status?.nextScheduleTime,
      neverReconciled: cronJob.status?.observedGeneration === undefined && !cronJob.status?.conditions?.length,
      now,
      clockNow,
    });
    if (window.tooManyMissed) this.event(cronJob, window.tooManyMissed.reason, window.tooManyMissed.message);

    // 8. A slot that passed its starting deadline unstarted, or that the missed-run policy does not run, is
    // made visible.
    const missed = window.tooLate && missedDeadline(guarded.lastMissedTime, window.tooLate);
    if (missed) {
      this.countRun(cronJob, "missed_deadline");
      this.event(cronJob, missed.event.reason, missed.event.message);
    }
    const notRun = window.notRun && missedByPolicy(guarded.lastMissedTime, window.notRun);
    if (notRun) {
      this.countRun(cronJob, "missed_policy");
      this.event(cronJob, notRun.event.reason, notRun.event.message);
    }
    const lastMissedTime = [guarded.lastMissedTime, missed?.lastMissedTime, notRun?.lastMissedTime]
      .filter((t) => t !== undefined)
      .sort((a, b) => new Date(a).getTime() - new Date(b).getTime())
      .pop();
    const scheduled = lastMissedTime ? { ...guarded, lastMissedTime } : guarded;

    // 9–11. Run the due slots (one, unless missedRunPolicy RunAll catches up), oldest first, not already run.
    const catchUp = await this.runDueSlots(cronJob, children, scheduled, window.due, ctx);
    const slotWrites = catchUp.writes;

    // 11b. A run-now request (the run-now annotation changed): one Job, under the concurrency policy.
    const runNow = thenWrites(slotWrites, await this.runNowIfRequested(cronJob, children, slotWrites.status, ctx));

    // 11c. A backfill request: the slots of a past range, oldest first, under the concurrency policy.
    const writes = thenWrites(runNow, await this.runBackfill(cronJob, children, runNow.status, now, ctx));

    // 12. One status write, only if something changed. Creation first: while a burst of Job creates is on
    // (this pass's own create starts or extends one), the status write waits for a pass after the burst
    // (requeueWhenQuiet); without the manager's burst window, a Job just created is not followed by its
    // status write while other CronJobs wait in the queue: the Job's watch event queues this CronJob again
    // behind them. Either later pass rebuilds the status from the children (the Job's scheduled-at
    // annotation), so nothing is lost, even if the process dies meanwhile.
    const status = { ...writes.status, nextScheduleTime: rfc3339(window.next) };
    const conditions = scheduledConditions(status.active?.length ?? 0, status.nextScheduleTime, writes.problems, [
      ...children.successful,
      ...children.failed,
    ]);
    // Slots left over by RunAll's per-pass cap follow at once (the others' Jobs came first).
    const wake = catchUp.more ? clockNow : window.next;
    const requeue = { requeueAfterMs: Math.max(wake.getTime() - clockNow.getTime(), 0) + REQUEUE_SLACK_MS };
    if (!booksLate && (holdBack || ctx.burst?.active())) {
      if (writes.retry) throw new Error(writes.retry);
      return { ...requeue, requeueWhenQuiet: true };
    }
    if (!booksLate && writes.created && (ctx.queueLength?.() ?? 0) > 0) return requeue;
    const written = await this.writeStatus(cronJob, status, conditions, now, ctx);
    if (writes.retry) throw new Error(writes.retry);
    // A conflict means the object changed under us: read it again soon (the Job, if one was created,
    // is found by its deterministic name, so the retry cannot duplicate it).
    if (!written) return { requeue: true };

    // 13. Wake up for the next slot (from the untruncated time: waking up to a second late would add
    // that to every Job's start).
    return requeue;
  }

  // --- 1 -------------------------------------------------------------------------------------------

  private loadCronJob(req: Request, ctx: ReconcileContext): LoadedCronJob | undefined {
    const raw = this.cache.get(CronJobKind, req.namespace, req.name);
    if (!raw) {
      ctx.log.debug("CronJob not found; ignoring");
      this.memory.forget({ namespace: req.namespace ?? "", name: req.name });
      this.metrics.forget(req.namespace ?? "", req.name);
      return undefined;
    }
    return this.memory.loaded(raw, () => deepFreeze(loadedFrom(req, raw)));
  }

  // --- 2, 3 ----------------------------------------------------------------------------------------

  private listChildren(cronJob: StoredCronJob): Children {
    const uid = cronJob.metadata.uid ?? "";
    const all = this.cache
      .byIndex(Kinds.Job, JOB_OWNER_INDEX, uid)
      .filter((j) => j.metadata?.namespace === cronJob.metadata.namespace)
      .map(readJob);
    const c: Children = { all, active: [], successful: [], failed: [] };
    for (const j of all) c[classifyJob(j)].push(j);
    return c;
  }

  // --- 4 -------------------------------------------------------------------------------------------

  private async statusFromChildren(
    cronJob: StoredCronJob,
    children: Children,
    ctx: ReconcileContext,
  ): Promise<{ status: CronJobWireStatus; finished: Readonly<Job>[] }> {
    const prev = cronJob.status ?? {};
    const prevActive = prev.active ?? [];
    const childByUID = new Map(children.all.map((j) => [j.metadata?.uid ?? "", j]));
    const remembered = this.memory.recall(keyOf(cronJob));
    const reported = remembered.sawCompleted ?? new Set<string>();
    // The runs whose end the stored status has not recorded: what step 4b counts (from stored state only, so a
    // repeated pass counts the same), and what is reported (once per process: memory).
    const finished: Readonly<Job>[] = [];
    const reportCompleted = (job: Readonly<Job>) => {
      finished.push(job);
      const uid = job.metadata?.uid ?? "";
      if (reported.has(uid)) return;
      reported.add(uid);
      this.countRun(cronJob, classifyJob(job) === "successful" ? "succeeded" : "failed");
      this.event(
        cronJob,
        "SawCompletedJob",
        `Saw completed job: ${job.metadata?.name}, condition: ${finishedCondition(job)}`,
      );
    };
    const replaced = remembered.replaced;

    // Active references whose Job is not in the cache. The cache may simply not have seen a just-created
    // Job yet, so ask the API server before declaring it missing; a Job found there counts like a child
    // (it ran its slot, and may have finished).
    const active = new Map<string, ObjectReference>();
    const known: Readonly<Job>[] = [...children.all];
    for (const ref of prevActive) {
      const child = ref.uid ? childByUID.get(ref.uid) : undefined;
      if (child) continue; // re-added below from the child itself
      const live = await this.getJobDirect(cronJob, ref.name ?? "", ctx);
      if (live && live.metadata?.uid === ref.uid) {
        known.push(live);
        if (classifyJob(live) === "active") active.set(ref.name ?? "", ref);
        else reportCompleted(live);
      } else if (!replaced?.has(ref.uid ?? "")) {
        // Gone, or its name now belongs to another Job (a different UID): not the run we started.
        this.event(cronJob, "MissingJob", `Active job went missing: ${ref.name}`);
      }
    }

    const prevUIDs = new Set(prevActive.map((r) => r.uid));
    for (const job of children.active) {
      const name = job.metadata?.name ?? "";
      if (!prevUIDs.has(job.metadata?.uid) && !this.isOurCreation(cronJob, job)) {
        this.event(cronJob, "UnexpectedJob", `Saw a job that the controller did not create or forgot: ${name}`);
      }
      active.set(name, jobRef(job));
    }
    // A finished Job is reported when status listed it as active, as in the built-in, and also when status
    // never recorded its run at all: creation first (step 12) skips the status write after a create while
    // other CronJobs wait, and a Job that finishes before the next pass was never in status.active. Both
    // are facts of the stored status, so a restart does not report a Job again once status is written.
    const unrecorded = (job: Readonly<Job>) => this.isUnrecordedRun(cronJob, job);
    const toReport = new Set<string>();
    for (const job of [...children.successful, ...children.failed]) {
      if (prevUIDs.has(job.metadata?.uid) || unrecorded(job)) {
        toReport.add(job.metadata?.uid ?? "");
        reportCompleted(job);
      }
    }
    for (const uid of reported) if (!prevUIDs.has(uid) && !toReport.has(uid)) reported.delete(uid);
    remembered.sawCompleted = reported.size ? reported : undefined;
    if (replaced) {
      for (const uid of replaced) if (!prevUIDs.has(uid)) replaced.delete(uid);
      if (!replaced.size) remembered.replaced = undefined;
    }

    // lastScheduleTime, lastSuccessfulTime and lastFailedTime never move backward (newestTimes).
    const parse = (t: string | undefined) => (t ? new Date(t) : undefined);
    const newest = newestTimes(
      {
        lastScheduleTime: parse(prev.lastScheduleTime),
        lastSuccessfulTime: parse(prev.lastSuccessfulTime),
        lastFailedTime: parse(prev.lastFailedTime),
      },
      known,
    );

    const refs = [...active.values()].sort((a, b) => (a.name ?? "").localeCompare(b.name ?? ""));
    const status: CronJobWireStatus = { ...stripUndefined(prev) };
    status.active = refs;
    status.activeCount = refs.length;
    if (newest.lastScheduleTime) status.lastScheduleTime = rfc3339(newest.lastScheduleTime);
    if (newest.lastSuccessfulTime) status.lastSuccessfulTime = rfc3339(newest.lastSuccessfulTime);
    if (newest.lastFailedTime) status.lastFailedTime = rfc3339(newest.lastFailedTime);
    // A run-now request whose Job exists was processed (maybe before a crash, before its status write).
    const request = runNowRequestOf(cronJob);
    const manualName = request ? manualJobName(cronJob.metadata.name ?? "", request) : undefined;
    if (request && known.some((j) => j.metadata?.name === manualName)) status.lastRunNowRequest = request;
    if (cronJob.metadata.generation !== undefined) status.observedGeneration = cronJob.metadata.generation;
    return { status, finished };
  }

  /**
   * A Job of ours whose run the stored status has not recorded: its slot is newer than lastScheduleTime (a
   * manual run: it is the current request's, and status does not hold that request yet). Both are written
   * in the same status write as status.active and never move back.
   */
  private isUnrecordedRun(cronJob: StoredCronJob, job: Readonly<Job>): boolean {
    if (!this.isOurCreation(cronJob, job)) return false;
    // A Job of the current backfill request past its recorded progress (or before status knew the request):
    // created before a crash lost the status write.
    const slot = scheduledTimeOf(job);
    const backfillId = job.metadata?.annotations?.[BACKFILL_REQUEST_ANNOTATION];
    const current = backfillRequestOf(cronJob);
    if (backfillId !== undefined && current?.ok && current.request.id === backfillId) {
      const bf = cronJob.status?.backfill;
      if (!bf || bf.id !== backfillId) return true;
      if (bf.phase === "Running" && slot && (!bf.lastSlot || slot.getTime() > new Date(bf.lastSlot).getTime()))
        return true;
    }
    const request = job.metadata?.annotations?.[RUN_NOW_REQUEST_ANNOTATION];
    if (request !== undefined)
      return request === runNowRequestOf(cronJob) && request !== cronJob.status?.lastRunNowRequest;
    const last = cronJob.status?.lastScheduleTime;
    return !!slot && (!last || slot.getTime() > new Date(last).getTime());
  }

  /** A Job with our deterministic name and scheduled-at annotation was created by us (maybe before a crash). */
  private isOurCreation(cronJob: StoredCronJob, job: Readonly<Job>): boolean {
    const name = cronJob.metadata.name ?? "";
    const request = job.metadata?.annotations?.[RUN_NOW_REQUEST_ANNOTATION];
    if (request !== undefined) return job.metadata?.name === manualJobName(name, request);
    const slot = scheduledTimeOf(job);
    return !!slot && job.metadata?.name === jobNameFor(name, slot);
  }

  private async getJobDirect(cronJob: StoredCronJob, name: string, ctx: ReconcileContext): Promise<Job | undefined> {
    if (!name) return undefined;
    try {
      return readJob(await this.client.get(Kinds.Job, cronJob.metadata.namespace, name));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      ctx.log.error("reading an active Job failed", err, { job: name });
      throw err;
    }
  }

  // --- 5 -------------------------------------------------------------------------------------------

  private async cleanupHistory(cronJob: StoredCronJob, children: Children, ctx: ReconcileContext): Promise<void> {
    const limits: Array<[Readonly<Job>[], number | undefined]> = [
      [children.successful, cronJob.spec.successfulJobsHistoryLimit],
      [children.failed, cronJob.spec.failedJobsHistoryLimit],
    ];
    for (const [jobs, limit] of limits) {
      if (limit === undefined || jobs.length <= limit) continue;
      // A Job whose run the stored status has not recorded (a run-now request, a slot newer than
      // lastScheduleTime, a backfill slot past its progress) is that run's only record: deleting it before the
      // status write would let a crash run it again. It goes in a later pass.
      const oldestFirst = [...jobs].filter((j) => !this.isUnrecordedRun(cronJob, j)).sort(byStartTime);
      // Best effort: a failure is reported, and the next reconcile tries again.
      const excess = Math.max(0, jobs.length - limit);
      for (const job of oldestFirst.slice(0, excess)) await this.deleteJob(cronJob, job, ctx, "history");
    }
  }

  /**
   * Deletes one Job (only the one with this UID). A failure is reported and returned as a message: history
   * cleanup leaves it to a later reconcile, Replace makes the reconcile fail so the work queue retries.
   */
  private async deleteJob(
    cronJob: StoredCronJob,
    job: Readonly<Job>,
    ctx: ReconcileContext,
    why: "history" | "replace",
  ): Promise<string | undefined> {
    const name = job.metadata?.name ?? "";
    try {
      await this.client.delete(Kinds.Job, job.metadata?.namespace, name, {
        propagationPolicy: "Background",
        ...(job.metadata?.uid ? { preconditions: { uid: job.metadata.uid } } : {}),
      });
      this.event(cronJob, "SuccessfulDelete", `Deleted job ${name}`);
      ctx.log.debug("deleted Job", { job: name, why });
      return undefined;
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return undefined; // already gone (or replaced: not ours to delete)
      const message = `Deleted job ${name} failed: ${(err as Error).message}`;
      this.event(cronJob, "FailedDelete", message);
      ctx.log.error("deleting Job failed", err, { job: name, why });
      return message;
    }
  }

  // --- 6 (the decision: steps.ts guards) ----------------------------------------------------------

  /** The parsed schedule, from memory's cache (per CronJob for an H schedule, shared otherwise). */
  private parseCached(cronJob: StoredCronJob): ReturnType<typeof parseHashedSchedule> {
    const { schedule, timeZone: tz } = cronJob.spec;
    const key = keyOf(cronJob);
    return this.memory.parsedSchedule(key, schedule, tz, () => parseHashedSchedule(schedule, key, tz));
  }

  // --- 7: steps.ts scheduleDecision, 8: steps.ts missedDeadline, 9: steps.ts slotAlreadyRan ----------

  // --- 10, 11 --------------------------------------------------------------------------------------

  /**
   * Runs the due slots, oldest first: each one not already run (9) goes through the concurrency policy (10),
   * then gets its Job (11). At most spec.maxCatchUpRuns Jobs per pass (`more`: slots are left); stops at the
   * first slot that cannot run now (Forbid, a failed write), so no later slot overtakes it.
   */
  private async runDueSlots(
    cronJob: StoredCronJob,
    children: Children,
    status: Readonly<CronJobWireStatus>,
    due: readonly Date[],
    ctx: ReconcileContext,
  ): Promise<{ writes: JobWrites; more: boolean }> {
    // The CRD bounds it to 1–100; a stored value outside (never expected) must not stop every pass at 0 Jobs
    // with "more to come", which would requeue at once forever.
    const stored = cronJob.spec.maxCatchUpRuns;
    const cap =
      typeof stored === "number" && Number.isInteger(stored) && stored >= 1
        ? Math.min(stored, MAX_CATCH_UP_SLOTS)
        : DEFAULT_MAX_CATCH_UP_RUNS;
    let writes = noWrites(status);
    let started = 0;
    for (const slot of due) {
      if (slotAlreadyRan(cronJob.metadata.name ?? "", children.all, writes.status, slot)) continue;
      if (started >= cap) return { writes, more: true };
      const run = await this.runSlot(cronJob, children, writes.status, slot, ctx);
      writes = thenWrites(writes, run);
      if (!run.created) break;
      started++;
    }
    return { writes, more: false };
  }

  /** Runs the due slot under the concurrency policy (10), then creates its Job (11). */
  private async runSlot(
    cronJob: StoredCronJob,
    children: Children,
    status: Readonly<CronJobWireStatus>,
    due: Date,
    ctx: ReconcileContext,
  ): Promise<JobWrites> {
    const allowed = await this.applyConcurrencyPolicy(cronJob, children, status, due, ctx);
    if (!allowed.proceed) return allowed.writes;
    return this.createJob(cronJob, allowed.writes.status, due, ctx);
  }

  /** `proceed`: the slot may run, with the status Replace left (its running Jobs gone from status.active). */
  private async applyConcurrencyPolicy(
    cronJob: StoredCronJob,
    children: Children,
    status: Readonly<CronJobWireStatus>,
    due: Date,
    ctx: ReconcileContext,
  ): Promise<{ proceed: boolean; writes: JobWrites }> {
    const running = status.active ?? [];
    if (running.length === 0) return { proceed: true, writes: noWrites(status) };
    switch (cronJob.spec.concurrencyPolicy) {
      case "Forbid": {
        const remembered = this.memory.recall(keyOf(cronJob));
        if (remembered.forbidReportedSlot !== due.getTime()) {
          remembered.forbidReportedSlot = due.getTime();
          this.countRun(cronJob, "skipped_forbid");
          this.event(
            cronJob,
            "JobAlreadyActive",
            `Not starting job for ${rfc3339(due)} because a previous job is still running (concurrencyPolicy Forbid)`,
          );
        }
        ctx.log.debug("not starting: concurrencyPolicy Forbid and a Job is active", { slot: rfc3339(due) });
        return { proceed: false, writes: noWrites(status) };
      }
      case "Replace": {
        const writes = await this.replaceActive(cronJob, children, status, ctx);
        return { proceed: writes.retry === undefined, writes };
      }
      default:
        return { proceed: true, writes: noWrites(status) };
    }
  }

  /**
   * Replace: deletes every running Job. As the built-in controller: a failed delete fails the reconcile, and
   * the work queue retries it with backoff; the run happens once the running Job is gone (a slot only if
   * still within its deadline).
   */
  private async replaceActive(
    cronJob: StoredCronJob,
    children: Children,
    status: Readonly<CronJobWireStatus>,
    ctx: ReconcileContext,
  ): Promise<JobWrites> {
    const remembered = this.memory.recall(keyOf(cronJob));
    let active = status.active ?? [];
    for (const ref of status.active ?? []) {
      const job: Readonly<Job> = children.active.find((j) => j.metadata?.uid === ref.uid) ?? {
        metadata: { name: ref.name, namespace: ref.namespace, uid: ref.uid },
      };
      const failed = await this.deleteJob(cronJob, job, ctx, "replace");
      if (failed) {
        return {
          ...noWrites(withActive(status, active)),
          problems: { deleteFailed: failed },
          retry: `replacing the active Job: ${failed}`,
        };
      }
      if (ref.uid) (remembered.replaced ??= new Set()).add(ref.uid);
      active = active.filter((r) => r !== ref);
    }
    return noWrites(withActive(status, active));
  }

  private async createJob(
    cronJob: StoredCronJob,
    status: Readonly<CronJobWireStatus>,
    slot: Date,
    ctx: ReconcileContext,
  ): Promise<JobWrites> {
    const outcome = await this.createOrAdopt(cronJob, jobForSlot(cronJob, slot), ctx);
    if (!outcome.ok) return failedWrites(status, outcome);
    if (outcome.created) {
      const name = outcome.job.metadata?.name;
      this.event(cronJob, "SuccessfulCreate", `Created job ${name}`);
      jobCreationSkew.observe(Math.max(0, (this.clock.now().getTime() - slot.getTime()) / 1000));
      this.countRun(cronJob, "created");
      ctx.log.info("created Job for scheduled time", { job: name, scheduledTime: rfc3339(slot) });
    }
    return { ...noWrites({ ...withJob(status, outcome.job), lastScheduleTime: rfc3339(slot) }), created: true };
  }

  /**
   * Creates a Job whose name is its lock. The name already taken by a Job of ours (a crash between create
   * and status write) counts as created earlier (`created: false`); by anyone else's, it is reported and
   * not retried in a loop. Other failures are reported and retried with backoff.
   */
  private async createOrAdopt(cronJob: StoredCronJob, job: Job, ctx: ReconcileContext): Promise<CreateOutcome> {
    const name = job.metadata!.name!;
    // An urgent write: writes that can wait hold back until the burst of creates is over.
    ctx.burst?.note();
    try {
      return { ok: true, job: readJob(await this.client.create<KubeObject>(Kinds.Job, job)), created: true };
    } catch (err) {
      const message = (err as Error).message;
      if (hasStatusCause(err, "NamespaceTerminating")) {
        // The namespace is going away with this CronJob in it: retry quietly, as the built-in does; it is
        // not a failure to report.
        ctx.log.info("not creating Job: the namespace is being terminated", { job: name });
        return { ok: false, problems: {}, retry: `creating Job ${name}: ${message}` };
      }
      if (!isAlreadyExists(err)) {
        this.event(cronJob, "FailedCreate", `Error creating job ${name}: ${message}`);
        const failed = `creating Job ${name}: ${message}`;
        return { ok: false, problems: { createFailed: failed }, retry: failed };
      }
    }
    const existing = await this.getJobDirect(cronJob, name, ctx);
    if (!existing || cronJobOwnerOf(existing)?.uid !== cronJob.metadata.uid) {
      const msg = `Error creating job ${name}: a Job with that name already exists and is not controlled by this CronJob`;
      // Not retried: retrying cannot help until the other Job goes away (the Job watch brings us back).
      this.event(cronJob, "FailedCreate", msg);
      return { ok: false, problems: { createConflict: msg } };
    }
    return { ok: true, job: existing, created: false };
  }

  // --- 11b -----------------------------------------------------------------------------------------

  /**
   * Runs a new run-now request once. The Job's name comes from the request, so a repeat after a crash finds
   * it; status.lastRunNowRequest records it for good (history cleanup keeps the Job until then). Forbid
   * defers the request while Jobs run (it runs when they finish); Replace deletes them first; Allow runs it
   * alongside. A manual run has no slot: lastScheduleTime and the schedule are not touched.
   */
  private async runNowIfRequested(
    cronJob: StoredCronJob,
    children: Children,
    status: Readonly<CronJobWireStatus>,
    ctx: ReconcileContext,
  ): Promise<JobWrites> {
    const request = runNowRequestOf(cronJob);
    const none = noWrites(status);
    if (!request || status.lastRunNowRequest === request || cronJob.metadata.deletionTimestamp) return none;
    if (request.length > MAX_RUN_NOW_REQUEST_LENGTH) {
      this.event(
        cronJob,
        "RunNowRefused",
        `run-now request refused: the annotation's value is ${request.length} characters, at most ${MAX_RUN_NOW_REQUEST_LENGTH} are allowed`,
      );
      return none;
    }
    const running = status.active ?? [];
    if (running.length > 0 && cronJob.spec.concurrencyPolicy === "Forbid") {
      const names = running.map((r) => r.name).join(", ");
      this.event(
        cronJob,
        "RunNowDeferred",
        `run-now request "${request}" waits: concurrencyPolicy is Forbid and ${names} still running`,
      );
      return none;
    }
    const replaced =
      running.length > 0 && cronJob.spec.concurrencyPolicy === "Replace"
        ? await this.replaceActive(cronJob, children, status, ctx)
        : none;
    if (replaced.retry !== undefined) return replaced;
    const requestedBy = runNowRequesterOf(cronJob, request);
    const outcome = await this.createOrAdopt(cronJob, jobForRunNow(cronJob, request, requestedBy), ctx);
    if (!outcome.ok) return failedWrites(replaced.status, outcome);
    const writes: JobWrites = {
      ...noWrites({ ...withJob(replaced.status, outcome.job), lastRunNowRequest: request }),
      created: true,
    };
    if (!outcome.created) return writes;
    const name = outcome.job.metadata?.name;
    const who = requestedBy ?? "an unknown user (no admission webhook recorded who)";
    this.event(cronJob, "RunNow", `Created job ${name} for run-now request "${request}", requested by ${who}`);
    this.countRun(cronJob, "manual");
    ctx.log.info("created Job for run-now request", { job: name, request, requestedBy: who });
    return writes;
  }

  // --- 11c ----------------------------------------------------------------------------------------

  /**
   * Works through a backfill request (steps.ts backfillDecision starts, refuses or cancels it): the next slots
   * after status.backfill.lastSlot, oldest first. A slot whose Job exists (scheduled, run by an earlier request,
   * or created by this one before a crash) is not run again. At most `parallelism` of the request's Jobs run at
   * a time (Allow); with Forbid or Replace one Job at a time overall, and a backfill never replaces a run.
   */
  private async runBackfill(
    cronJob: StoredCronJob,
    children: Children,
    status: Readonly<CronJobWireStatus>,
    now: Date,
    ctx: ReconcileContext,
  ): Promise<JobWrites> {
    const request = backfillRequestOf(cronJob);
    if ((!request && !status.backfill) || cronJob.metadata.deletionTimestamp) return noWrites(status);
    const parsed = this.parseCached(cronJob);
    if (!parsed.ok) return noWrites(status);
    const anchor = new Date(cronJob.metadata.creationTimestamp ?? now);
    const decision = backfillDecision({ request, stored: status.backfill, schedule: parsed.schedule, anchor, now });
    if (decision.event) this.event(cronJob, decision.event.reason, decision.event.message);
    let bf = decision.backfill;
    const withBackfill = (st: Readonly<CronJobWireStatus>): CronJobWireStatus => {
      const { backfill: _old, ...rest } = st;
      return bf ? { ...rest, backfill: bf } : rest;
    };
    if (!bf || bf.phase !== "Running" || !request?.ok) return noWrites(withBackfill(status));
    const r = request.request;
    const ofRequest = (j: Readonly<Job>) => j.metadata?.annotations?.[BACKFILL_REQUEST_ANNOTATION] === r.id;
    const exclusive = cronJob.spec.concurrencyPolicy === "Forbid" || cronJob.spec.concurrencyPolicy === "Replace";
    let writes = noWrites(status);
    let room = exclusive
      ? (status.active?.length ?? 0) === 0
        ? 1
        : 0
      : r.parallelism - children.active.filter(ofRequest).length;
    const after = bf.lastSlot ? new Date(bf.lastSlot) : undefined;
    const pending = slotsInRange(parsed.schedule, r.from, r.to, {
      ...(after ? { after } : {}),
      max: MAX_BACKFILL_SLOTS,
      anchor,
    });
    let handled = 0;
    for (const slot of pending) {
      const existing = children.all.find((j) => j.metadata?.name === jobNameFor(cronJob.metadata.name ?? "", slot));
      if (existing) {
        // This request's own Job (created before a crash lost the status write), or the slot ran already.
        bf = ofRequest(existing) ? { ...bf, created: bf.created + 1 } : { ...bf, skipped: bf.skipped + 1 };
      } else {
        if (room <= 0) break;
        const outcome = await this.createOrAdopt(cronJob, jobForBackfill(cronJob, slot, r.id), ctx);
        if (!outcome.ok) {
          if (!outcome.problems.createConflict) return failedWrites(withBackfill(writes.status), outcome);
          bf = { ...bf, skipped: bf.skipped + 1 }; // a foreign Job holds the slot's name: reported, not run
        } else {
          const ours = outcome.created || ofRequest(outcome.job);
          bf = ours ? { ...bf, created: bf.created + 1 } : { ...bf, skipped: bf.skipped + 1 };
          writes = thenWrites(writes, { ...noWrites(withJob(writes.status, outcome.job)), created: true });
          if (outcome.created) {
            room--;
            this.countRun(cronJob, "created");
            this.event(cronJob, "SuccessfulCreate", `Created job ${outcome.job.metadata?.name} (backfill "${r.id}")`);
          }
        }
      }
      bf = { ...bf, lastSlot: rfc3339(slot) };
      handled++;
    }
    if (handled === pending.length) {
      bf = { ...bf, phase: "Complete" };
      this.event(
        cronJob,
        "BackfillComplete",
        `Backfill "${r.id}" complete: ${bf.created} slots run, ${bf.skipped} already had their Job`,
      );
    }
    return { ...writes, status: withBackfill(writes.status) };
  }

  // --- 12 ------------------------------------------------------------------------------------------

  private event(cronJob: StoredCronJob, reason: EventReason, message: string): void {
    recordEvent(this.recorder, cronJob, reason, message);
  }

  private countRun(cronJob: StoredCronJob, outcome: RunOutcome): void {
    this.metrics.countRun(cronJob.metadata.namespace ?? "", cronJob.metadata.name ?? "", outcome);
  }

  /** False when the write lost an optimistic-concurrency race (409) and should be retried. */
  private async writeStatus(
    cronJob: StoredCronJob,
    computed: Readonly<CronJobWireStatus>,
    conditions: ConditionInput[],
    now: Date,
    ctx: ReconcileContext,
  ): Promise<boolean> {
    const status: CronJobWireStatus = {
      ...computed,
      conditions: setConditions(cronJob.status?.conditions, conditions, now, cronJob.metadata.generation),
    };
    const cleaned = stripUndefined(status);
    if (sameStatus(cronJob.status, cleaned)) return true;
    // Our own write may not have reached the cache yet (the reconcile triggered by the Job we just
    // created sees the CronJob from before it): writing the same status again would only conflict.
    const remembered = this.memory.recall(keyOf(cronJob));
    const last = remembered.lastWritten;
    const wanted = digest(canonical(cleaned));
    if (last && last.basedOn === cronJob.metadata.resourceVersion && last.status === wanted) return true;
    // The whole object, as read: the status subresource keeps everything but status from the stored
    // object, but a body without the rest would drop other field managers' managedFields entries (seen on
    // kube-apiserver 1.20). Not cloned: the client only serialises it. Not a merge patch of status: for a
    // custom resource kube-apiserver applies one by encoding the stored object to JSON, merging and decoding
    // it again before the same validation, which cost it ~15 % more CPU per run than this PUT (bench, issue
    // 23), for a smaller request only.
    const body: CronJobWire = { ...cronJob, status: cleaned };
    try {
      await this.client.updateStatus(CronJobKind, body);
      remembered.lastWritten = { basedOn: cronJob.metadata.resourceVersion ?? "", status: wanted };
      return true;
    } catch (err) {
      if (isNotFound(err)) return true; // deleted meanwhile: nothing to record
      if (isConflict(err)) {
        ctx.log.debug("status update conflicted; retrying with the newer object", {
          resourceVersion: cronJob.metadata.resourceVersion,
        });
        return false;
      }
      throw err;
    }
  }
}

// --- helpers ---------------------------------------------------------------------------------------

/** Step 1's parse of a cached CronJob. */
function loadedFrom(req: Request, raw: Readonly<KubeObject>): LoadedCronJob {
  // The CRD schema already validated and defaulted it; parsing fills defaults for objects written
  // before a default existed. A parse failure of the template must not stop the controller from
  // reporting (the guards below report schedule problems with their own messages).
  const parsed = CronJobSchema.safeParse(raw);
  if (parsed.success) return { valid: true, cronJob: parsed.data };
  const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "<root>"}: ${i.message}`);
  // The CRD's structural schema guarantees the JSON types of every stored object.
  const stored = CronJobWireSchema.safeParse(raw);
  if (!stored.success) throw new Error(`CronJob ${req.namespace}/${req.name} cannot be read: ${issues.join("; ")}`);
  return { valid: false, cronJob: stored.data, issues };
}

/** A status remembered by its digest: the canonical JSON itself was ~600 bytes per CronJob kept for good. */
function digest(canonicalStatus: string): string {
  return createHash("sha256").update(canonicalStatus).digest("base64");
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === "object" && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

function jobRef(job: Readonly<Job>): ObjectReference {
  const m = job.metadata ?? {};
  // No resourceVersion: it changes with every Job status update and would turn each into a CronJob
  // status write. Empty strings are left out: an optional field is absent, not "".
  return stripUndefined({
    apiVersion: "batch/v1",
    kind: "Job",
    name: m.name || undefined,
    namespace: m.namespace || undefined,
    uid: m.uid || undefined,
  });
}

/** The status with these active Jobs. */
function withActive(status: Readonly<CronJobWireStatus>, active: ObjectReference[]): CronJobWireStatus {
  return { ...status, active, activeCount: active.length };
}

/** The status with this Job in status.active if it runs (sorted by name, as step 4 writes it). */
function withJob(status: Readonly<CronJobWireStatus>, job: Readonly<Job>): CronJobWireStatus {
  if (classifyJob(job) !== "active") return { ...status };
  const name = job.metadata?.name;
  const refs = (status.active ?? []).filter((r) => r.name !== name);
  refs.push(jobRef(job));
  refs.sort((a, b) => (a.name ?? "").localeCompare(b.name ?? ""));
  return withActive(status, refs);
}

function finishedCondition(job: Readonly<Job>): string {
  const k = classifyJob(job);
  return k === "successful" ? "Complete" : k === "failed" ? "Failed" : "Running";
}

/** Oldest first by status.startTime; a missing start time sorts as newest; ties by name. */
function byStartTime(a: Readonly<Job>, b: Readonly<Job>): number {
  const ta = a.status?.startTime ? new Date(a.status.startTime).getTime() : Infinity;
  const tb = b.status?.startTime ? new Date(b.status.startTime).getTime() : Infinity;
  if (ta !== tb) return ta < tb ? -1 : 1;
  return (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? "");
}

function truncateToSecond(d: Date): Date {
  return new Date(Math.floor(d.getTime() / 1000) * 1000);
}

function stripUndefined<T extends object>(o: T): T {
  const out = {} as T;
  for (const [k, v] of Object.entries(o)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

function sameStatus(a: Readonly<CronJobWireStatus> | undefined, b: CronJobWireStatus): boolean {
  return canonical(a ?? {}) === canonical(b);
}

function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, val: unknown) =>
    val && typeof val === "object" && !Array.isArray(val)
      ? Object.fromEntries(
          Object.entries(val as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)),
        )
      : val,
  );
}

/** A CronJob's key in the reconciler's memory. */
function keyOf(cronJob: StoredCronJob): CronJobKey {
  const { namespace, name, uid } = cronJob.metadata;
  return { namespace: namespace ?? "", name: name ?? "", ...(uid ? { uid } : {}) };
}
