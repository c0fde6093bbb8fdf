// The CronJob reconciler. It reads top-down like the kubebuilder book's numbered steps:
//   1 load → 2 list children → 3 classify → 4 status → 5 history → 6 guards → 7 schedule →
//   8 missed deadline → 9 due? → 10 concurrency → 11 create → 12 status write → 13 requeue
// Semantics are the Kubernetes batch/v1 CronJob controller (v2) without its known failures; see
// README "Behaviour compared with the built-in CronJob".
import { Histogram } from "prom-client";
import {
  type Condition,
  type CronJob,
  type CronJobStatus,
  CronJobSchema,
  GROUP,
  KIND,
  PLURAL,
  VERSION,
  type ObjectReference,
} from "../api/v1/index.ts";
import type { Cache } from "../runtime/cache/cache.ts";
import type { Client } from "../runtime/client.ts";
import type { ReconcileContext, Reconciler, Request, Result } from "../runtime/controller.ts";
import { hasStatusCause, isAlreadyExists, isConflict, isNotFound } from "../runtime/errors.ts";
import type { Recorder } from "../runtime/events/types.ts";
import { Kinds, type ResourceKind } from "../runtime/kinds.ts";
import type { Manager } from "../runtime/manager.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import { getOrCreate, metricsRegistry } from "../runtime/metrics/registry.ts";
import { type Clock, realClock } from "./clock.ts";
import { type ConditionInput, setConditions } from "./conditions.ts";
import { type EventReason, recordEvent } from "./events.ts";
import { classifyJob, cronJobOwnerOf, finishedAt, type Job, jobForSlot, jobNameFor, scheduledTimeOf } from "./job.ts";
import {
  parseSchedule,
  type Schedule,
  scheduleWindow,
  TOO_MANY_MISSED,
  validateTimeZone,
} from "../api/v1/schedule/index.ts";

export const CronJobKind: ResourceKind = {
  group: GROUP,
  version: VERSION,
  kind: KIND,
  plural: PLURAL,
  namespaced: true,
};

/** Field index: Jobs by the UID of their controlling CronJob. */
export const JOB_OWNER_INDEX = "jobOwnerUID";

export { TOO_MANY_MISSED };

/** Distinct (schedule, zone) pairs kept parsed; insertion-ordered eviction. */
const PARSE_CACHE_SIZE = 10_000;

/** Requeue slightly after the slot so the reconcile sees it as due. */
const REQUEUE_SLACK_MS = 100;

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

type StoredCronJob = Readonly<Omit<CronJob, "spec">> & { spec: Readonly<CronJob["spec"]> };

/** What step 7 decides. */
interface ScheduleDecision {
  /** The slot to run now, if any. */
  due?: Date;
  /** The next slot after now (the requeue time). */
  next: Date;
  /** The newest slot, when startingDeadlineSeconds put it out of reach unstarted. */
  tooLate?: { slot: Date; deadline: number };
}

interface Children {
  all: Readonly<Job>[];
  active: Readonly<Job>[];
  successful: Readonly<Job>[];
  failed: Readonly<Job>[];
}

/** What one reconcile works out, written back in step 12. */
interface Plan {
  status: CronJobStatus;
  conditions: ConditionInput[];
  /** Thrown after the status write, so the work queue retries this CronJob with backoff. */
  retry?: string;
  /** A create failed (Degraded=True/JobCreationFailed). */
  createFailed?: string;
  /** Replace could not delete the running Job (Degraded=True/JobDeletionFailed); the due slot waits. */
  deleteFailed?: string;
  /** A foreign Job holds this slot's name: reported, not retried in a loop. */
  createConflict?: string;
  /** This pass created a Job. */
  created?: boolean;
}

export interface CronJobReconcilerDeps {
  client: Client;
  cache: Cache;
  recorder: Recorder;
  clock?: Clock;
}

export class CronJobReconciler implements Reconciler {
  private readonly client: Client;
  private readonly cache: Cache;
  private readonly recorder: Recorder;
  private readonly clock: Clock;
  /** The slot JobAlreadyActive was last reported for, by CronJob key (the event comes once per slot). */
  private readonly forbidReported = new Map<string, number>();
  private readonly parsedSchedules = new Map<string, ReturnType<typeof parseSchedule>>();
  /** The last status this reconciler wrote per CronJob, and the resourceVersion it was based on. */
  private readonly lastWritten = new Map<string, { basedOn: string; status: string }>();
  /**
   * Job UIDs already reported by SawCompletedJob, by CronJob key, kept while the cached status still
   * lists them as active: a cache that has not caught up with our status write must not repeat the event.
   */
  private readonly sawCompleted = new Map<string, Set<string>>();
  /**
   * UIDs of active Jobs this reconciler deleted for Replace, by CronJob key, kept while status still lists
   * them: a Job we deleted ourselves did not "go missing".
   */
  private readonly replaced = new Map<string, Set<string>>();

  constructor(d: CronJobReconcilerDeps) {
    this.client = d.client;
    this.cache = d.cache;
    this.recorder = d.recorder;
    this.clock = d.clock ?? realClock;
  }

  /** Register the owner index and the controller (kubebuilder's SetupWithManager). */
  static setupWithManager(
    mgr: Manager,
    o: { clock?: Clock; maxConcurrentReconciles?: number } = {},
  ): CronJobReconciler {
    mgr.cache.indexField<Job>(Kinds.Job, JOB_OWNER_INDEX, (job) => {
      const ref = cronJobOwnerOf(job);
      return ref ? [ref.uid] : [];
    });
    const r = new CronJobReconciler({
      client: mgr.client,
      cache: mgr.cache,
      recorder: mgr.getEventRecorder(),
      ...(o.clock ? { clock: o.clock } : {}),
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
    const cronJob = this.loadCronJob(req, ctx);
    if (!cronJob) return {};

    // 2–3. List our child Jobs through the owner index and classify them.
    const children = this.listChildren(cronJob);

    // 4. Status from the children and from what status already remembers.
    const plan = await this.statusFromChildren(cronJob, children, ctx);

    // 5. History cleanup comes before scheduling, so a create that keeps failing cannot block it.
    await this.cleanupHistory(cronJob, children, ctx);

    // 6. Guards: deleting, bad time zone, bad schedule, suspended.
    const guard = this.checkGuards(cronJob, plan);
    if (guard.stop) {
      return (await this.writeStatus(cronJob, plan, now, ctx)) ? {} : { requeue: true };
    }
    const schedule = guard.schedule;

    // 7. Which slot is due, and when is the next one.
    const window = this.computeSchedule(cronJob, schedule, plan, now, clockNow);

    // 8. A slot that passed its starting deadline unstarted is made visible.
    if (window.tooLate) this.reportMissedDeadline(cronJob, plan, window.tooLate);

    // 9–11. Run the due slot, if any and not already run.
    const due = window.due;
    if (due && !this.alreadyRan(cronJob, children, plan, due)) {
      const proceed = await this.applyConcurrencyPolicy(cronJob, children, plan, due, ctx);
      if (proceed) await this.createJob(cronJob, plan, due, ctx);
    }

    // 12. One status write, only if something changed. Creation first: when other CronJobs are waiting
    // (many slots fall on the same second), a Job just created is not followed by its status write
    // here. The Job's watch event queues this CronJob again behind the others, and that pass writes
    // the status, rebuilt from the children (the Job's scheduled-at annotation), so nothing is lost.
    plan.status.nextScheduleTime = rfc3339(window.next);
    plan.conditions = this.conditionsFor(cronJob, plan, children);
    const requeue = { requeueAfterMs: Math.max(window.next.getTime() - clockNow.getTime(), 0) + REQUEUE_SLACK_MS };
    if (plan.created && (ctx.queueLength?.() ?? 0) > 0) return requeue;
    const written = await this.writeStatus(cronJob, plan, now, ctx);
    if (plan.retry) throw new Error(plan.retry);
    // A conflict means the object changed under us: read it again soon (the Job, if one was created,
    // is found by its deterministic name, so the retry cannot duplicate it).
    if (!written) return { requeue: true };

    // 13. Wake up for the next slot (from the untruncated time: waking up to a second late would add
    // that to every Job's start).
    return requeue;
  }

  // --- 1 -------------------------------------------------------------------------------------------

  private loadCronJob(req: Request, ctx: ReconcileContext): StoredCronJob | undefined {
    const raw = this.cache.get(CronJobKind, req.namespace, req.name);
    if (!raw) {
      ctx.log.debug("CronJob not found; ignoring");
      this.forbidReported.delete(`${req.namespace}/${req.name}`);
      this.lastWritten.delete(`${req.namespace}/${req.name}`);
      this.sawCompleted.delete(`${req.namespace}/${req.name}`);
      this.replaced.delete(`${req.namespace}/${req.name}`);
      return undefined;
    }
    // The CRD schema already validated and defaulted it; parsing fills defaults for objects written
    // before a default existed. A parse failure of the template must not stop the controller from
    // reporting (the guards below report schedule problems with their own messages).
    const parsed = CronJobSchema.safeParse(raw);
    if (parsed.success) return parsed.data as StoredCronJob;
    return raw as unknown as StoredCronJob;
  }

  // --- 2, 3 ----------------------------------------------------------------------------------------

  private listChildren(cronJob: StoredCronJob): Children {
    const uid = cronJob.metadata.uid ?? "";
    const all = this.cache
      .byIndex<Job>(Kinds.Job, JOB_OWNER_INDEX, uid)
      .filter((j) => j.metadata?.namespace === cronJob.metadata.namespace);
    const c: Children = { all, active: [], successful: [], failed: [] };
    for (const j of all) c[classifyJob(j)].push(j);
    return c;
  }

  // --- 4 -------------------------------------------------------------------------------------------

  private async statusFromChildren(cronJob: StoredCronJob, children: Children, ctx: ReconcileContext): Promise<Plan> {
    const prev = cronJob.status ?? {};
    const prevActive = prev.active ?? [];
    const childByUID = new Map(children.all.map((j) => [j.metadata?.uid ?? "", j]));
    const key = `${cronJob.metadata.namespace}/${cronJob.metadata.name}`;
    const reported = this.sawCompleted.get(key) ?? new Set<string>();
    const reportCompleted = (job: Readonly<Job>) => {
      const uid = job.metadata?.uid ?? "";
      if (reported.has(uid)) return;
      reported.add(uid);
      this.event(
        cronJob,
        "SawCompletedJob",
        `Saw completed job: ${job.metadata?.name}, condition: ${finishedCondition(job)}`,
      );
    };
    const replaced = this.replaced.get(key);

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
    for (const job of [...children.successful, ...children.failed]) {
      if (prevUIDs.has(job.metadata?.uid)) reportCompleted(job);
    }
    for (const uid of reported) if (!prevUIDs.has(uid)) reported.delete(uid);
    if (reported.size) this.sawCompleted.set(key, reported);
    else this.sawCompleted.delete(key);
    if (replaced) {
      for (const uid of replaced) if (!prevUIDs.has(uid)) replaced.delete(uid);
      if (!replaced.size) this.replaced.delete(key);
    }

    // lastScheduleTime and lastSuccessfulTime never move backward: they survive history cleanup, are
    // rebuilt from the Jobs if status was lost, and Jobs finishing out of order cannot lower them.
    let lastSchedule = prev.lastScheduleTime ? new Date(prev.lastScheduleTime) : undefined;
    let lastSuccess = prev.lastSuccessfulTime ? new Date(prev.lastSuccessfulTime) : undefined;
    for (const job of known) {
      const t = scheduledTimeOf(job);
      if (t && (!lastSchedule || t > lastSchedule)) lastSchedule = t;
      if (classifyJob(job) !== "successful") continue;
      const done = finishedAt(job);
      if (done && (!lastSuccess || done > lastSuccess)) lastSuccess = done;
    }

    const refs = [...active.values()].sort((a, b) => (a.name ?? "").localeCompare(b.name ?? ""));
    const status: CronJobStatus = { ...stripUndefined(prev) };
    status.active = refs;
    status.activeCount = refs.length;
    if (lastSchedule) status.lastScheduleTime = rfc3339(lastSchedule);
    if (lastSuccess) status.lastSuccessfulTime = rfc3339(lastSuccess);
    if (cronJob.metadata.generation !== undefined) status.observedGeneration = cronJob.metadata.generation;
    return { status, conditions: [] };
  }

  /** A Job with our deterministic name and scheduled-at annotation was created by us (maybe before a crash). */
  private isOurCreation(cronJob: StoredCronJob, job: Readonly<Job>): boolean {
    const slot = scheduledTimeOf(job);
    return !!slot && job.metadata?.name === jobNameFor(cronJob.metadata.name ?? "", slot);
  }

  private async getJobDirect(cronJob: StoredCronJob, name: string, ctx: ReconcileContext): Promise<Job | undefined> {
    if (!name) return undefined;
    try {
      return await this.client.get<Job>(Kinds.Job, cronJob.metadata.namespace, name);
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
      const oldestFirst = [...jobs].sort(byStartTime);
      // Best effort: a failure is reported, and the next reconcile tries again.
      for (const job of oldestFirst.slice(0, jobs.length - limit)) await this.deleteJob(cronJob, job, ctx, "history");
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

  // --- 6 -------------------------------------------------------------------------------------------

  private checkGuards(cronJob: StoredCronJob, plan: Plan): { stop: true } | { stop: false; schedule: Schedule } {
    delete plan.status.nextScheduleTime;
    if (cronJob.metadata.deletionTimestamp) {
      plan.conditions = [
        { type: "Available", status: "False", reason: "Deleting", message: "The CronJob is being deleted." },
        ...this.progressing(plan),
        { type: "Degraded", status: "False", reason: "AsExpected", message: "No problems detected" },
      ];
      return { stop: true };
    }
    const tz = cronJob.spec.timeZone;
    if (tz !== undefined) {
      const tzErr = validateTimeZone(tz);
      if (tzErr) {
        this.event(cronJob, "UnknownTimeZone", tzErr.message);
        plan.conditions = this.invalid(plan, "UnknownTimeZone", tzErr.message);
        return { stop: true };
      }
    }
    const parsed = this.parseCached(cronJob.spec.schedule, tz);
    if (!parsed.ok) {
      this.event(cronJob, "UnparseableSchedule", parsed.error.message);
      plan.conditions = this.invalid(
        plan,
        parsed.error.field === "spec.timeZone" ? "UnknownTimeZone" : "InvalidSchedule",
        parsed.error.message,
      );
      return { stop: true };
    }
    if (cronJob.spec.suspend) {
      plan.conditions = [
        {
          type: "Available",
          status: "False",
          reason: "Suspended",
          message: "spec.suspend is true: no new Jobs are started.",
        },
        ...this.progressing(plan),
        this.degraded(plan, undefined),
      ];
      return { stop: true };
    }
    return { stop: false, schedule: parsed.schedule };
  }

  /** Parsing costs ~0.3 ms (cron-parser + zone rules); a CronJob's schedule rarely changes. */
  private parseCached(schedule: string, tz: string | undefined): ReturnType<typeof parseSchedule> {
    const key = `${tz ?? ""}\u0000${schedule}`;
    let r = this.parsedSchedules.get(key);
    if (!r) {
      r = parseSchedule(schedule, tz);
      if (this.parsedSchedules.size >= PARSE_CACHE_SIZE)
        this.parsedSchedules.delete(this.parsedSchedules.keys().next().value!);
      this.parsedSchedules.set(key, r);
    }
    return r;
  }

  private invalid(plan: Plan, reason: "UnknownTimeZone" | "InvalidSchedule", message: string): ConditionInput[] {
    return [
      { type: "Available", status: "False", reason, message },
      ...this.progressing(plan),
      { type: "Degraded", status: "True", reason, message },
    ];
  }

  // --- 7 -------------------------------------------------------------------------------------------

  /**
   * The due slot is the newest one after the last run (else creation) that is not later than
   * startingDeadlineSeconds: a slot exactly that late still starts, as in the built-in controller
   * (`scheduledTime + deadline` before now is too late). Only slots that could still run count toward
   * "too many missed".
   */
  private computeSchedule(
    cronJob: StoredCronJob,
    schedule: Schedule,
    plan: Plan,
    now: Date,
    clockNow: Date,
  ): ScheduleDecision {
    const base = plan.status.lastScheduleTime
      ? new Date(plan.status.lastScheduleTime)
      : new Date(cronJob.metadata.creationTimestamp ?? now);
    const deadline = cronJob.spec.startingDeadlineSeconds;
    // The first instant a slot may have and still start (from the untruncated clock: a slot half a
    // second past its deadline is too late).
    const cutoff = deadline === undefined ? undefined : clockNow.getTime() - deadline * 1000;
    // scheduleWindow's lower bound is exclusive; one millisecond before the cut-off keeps it inclusive.
    const earliest = cutoff !== undefined && cutoff - 1 > base.getTime() ? new Date(cutoff - 1) : base;
    const w = scheduleWindow({ schedule, earliest, now, anchor: base });
    if (w.missedCount > TOO_MANY_MISSED) {
      // The built-in controller and the tutorial stop scheduling here; we report and run the newest.
      this.event(
        cronJob,
        "TooManyMissedTimes",
        `too many missed start times: more than ${TOO_MANY_MISSED} since ${rfc3339(earliest)}; starting only the most recent one`,
      );
    }
    const decision: ScheduleDecision = { next: w.next };
    if (w.missed) decision.due = w.missed;
    else if (cutoff !== undefined) {
      const newest = schedule.mostRecent(now, base);
      if (newest && newest > base && newest.getTime() < cutoff)
        decision.tooLate = { slot: newest, deadline: deadline! };
    }
    return decision;
  }

  // --- 8 -------------------------------------------------------------------------------------------

  private reportMissedDeadline(cronJob: StoredCronJob, plan: Plan, tooLate: { slot: Date; deadline: number }): void {
    const slot = rfc3339(tooLate.slot);
    if (plan.status.lastMissedTime === slot) return; // reported once per slot
    plan.status.lastMissedTime = slot;
    this.event(
      cronJob,
      "MissSchedule",
      `Missed scheduled time to start a job: ${slot} (startingDeadlineSeconds ${tooLate.deadline} passed at ${rfc3339(new Date(tooLate.slot.getTime() + tooLate.deadline * 1000))})`,
    );
  }

  // --- 9 -------------------------------------------------------------------------------------------

  /**
   * The slot ran if status says so, or a Job of ours holds its name: in the cache, or listed in
   * status.active and confirmed by the API server in step 4 (a Job the cache has not seen yet).
   */
  private alreadyRan(cronJob: StoredCronJob, children: Children, plan: Plan, due: Date): boolean {
    const last = plan.status.lastScheduleTime;
    if (last && new Date(last) >= due) return true;
    const name = jobNameFor(cronJob.metadata.name ?? "", due);
    return children.all.some((j) => j.metadata?.name === name) || !!plan.status.active?.some((r) => r.name === name);
  }

  // --- 10 ------------------------------------------------------------------------------------------

  private async applyConcurrencyPolicy(
    cronJob: StoredCronJob,
    children: Children,
    plan: Plan,
    due: Date,
    ctx: ReconcileContext,
  ): Promise<boolean> {
    const running = plan.status.active ?? [];
    if (running.length === 0) return true;
    switch (cronJob.spec.concurrencyPolicy) {
      case "Forbid": {
        const key = `${cronJob.metadata.namespace}/${cronJob.metadata.name}`;
        if (this.forbidReported.get(key) !== due.getTime()) {
          this.forbidReported.set(key, due.getTime());
          this.event(
            cronJob,
            "JobAlreadyActive",
            `Not starting job for ${rfc3339(due)} because a previous job is still running (concurrencyPolicy Forbid)`,
          );
        }
        ctx.log.debug("not starting: concurrencyPolicy Forbid and a Job is active", { slot: rfc3339(due) });
        return false;
      }
      case "Replace": {
        // As the built-in controller: a failed delete fails the reconcile, and the work queue retries it
        // with backoff; the due slot runs once the running Job is gone (if still within the deadline).
        const key = `${cronJob.metadata.namespace}/${cronJob.metadata.name}`;
        for (const ref of running) {
          const job =
            children.active.find((j) => j.metadata?.uid === ref.uid) ??
            ({ metadata: { name: ref.name, namespace: ref.namespace, uid: ref.uid } } as Job);
          const failed = await this.deleteJob(cronJob, job, ctx, "replace");
          if (failed) {
            plan.deleteFailed = failed;
            plan.retry = `replacing the active Job: ${failed}`;
            return false;
          }
          if (ref.uid) this.replaced.set(key, (this.replaced.get(key) ?? new Set()).add(ref.uid));
          plan.status.active = (plan.status.active ?? []).filter((r) => r !== ref);
          plan.status.activeCount = plan.status.active.length;
        }
        return true;
      }
      default:
        return true;
    }
  }

  // --- 11 ------------------------------------------------------------------------------------------

  private async createJob(cronJob: StoredCronJob, plan: Plan, slot: Date, ctx: ReconcileContext): Promise<void> {
    const job = jobForSlot(cronJob, slot);
    const name = job.metadata!.name!;
    let created: Job;
    try {
      created = await this.client.create(Kinds.Job, job);
      this.event(cronJob, "SuccessfulCreate", `Created job ${name}`);
      jobCreationSkew.observe(Math.max(0, (this.clock.now().getTime() - slot.getTime()) / 1000));
      ctx.log.info("created Job for scheduled time", { job: name, scheduledTime: rfc3339(slot) });
    } catch (err) {
      if (hasStatusCause(err, "NamespaceTerminating")) {
        // The namespace is going away with this CronJob in it: retry quietly, as the built-in does; it is
        // not a failure to report.
        ctx.log.info("not creating Job: the namespace is being terminated", { job: name });
        plan.retry = `creating Job ${name}: ${(err as Error).message}`;
        return;
      }
      if (!isAlreadyExists(err)) {
        this.event(cronJob, "FailedCreate", `Error creating job ${name}: ${(err as Error).message}`);
        plan.createFailed = `creating Job ${name}: ${(err as Error).message}`;
        plan.retry = plan.createFailed;
        return;
      }
      // The name is the lock: a Job for this slot exists. Ours (a crash between create and status
      // write) → treat as created; anyone else's → report, do not retry in a loop.
      const existing = await this.getJobDirect(cronJob, name, ctx);
      if (!existing || cronJobOwnerOf(existing)?.uid !== cronJob.metadata.uid) {
        const msg = `Error creating job ${name}: a Job with that name already exists and is not controlled by this CronJob`;
        // Not thrown: retrying cannot help until the other Job goes away (the Job watch brings us back).
        this.event(cronJob, "FailedCreate", msg);
        plan.createConflict = msg;
        return;
      }
      created = existing;
    }
    if (classifyJob(created) === "active") {
      const refs = (plan.status.active ?? []).filter((r) => r.name !== name);
      refs.push(jobRef(created));
      refs.sort((a, b) => (a.name ?? "").localeCompare(b.name ?? ""));
      plan.status.active = refs;
      plan.status.activeCount = refs.length;
    }
    plan.status.lastScheduleTime = rfc3339(slot);
    plan.created = true;
  }

  // --- 12 ------------------------------------------------------------------------------------------

  private event(cronJob: StoredCronJob, reason: EventReason, message: string): void {
    recordEvent(this.recorder, cronJob, reason, message);
  }

  private conditionsFor(cronJob: StoredCronJob, plan: Plan, children: Children): ConditionInput[] {
    const active = plan.status.active?.length ?? 0;
    return [
      active > 0
        ? {
            type: "Available",
            status: "True",
            reason: "JobsActive",
            message: `${active} active Job(s); next run at ${plan.status.nextScheduleTime}`,
          }
        : {
            type: "Available",
            status: "True",
            reason: "Scheduled",
            message: `Next run at ${plan.status.nextScheduleTime}`,
          },
      ...this.progressing(plan),
      this.degraded(plan, children),
    ];
  }

  private progressing(plan: Plan): ConditionInput[] {
    const n = plan.status.active?.length ?? 0;
    return [
      n > 0
        ? { type: "Progressing", status: "True", reason: "JobsActive", message: `${n} Job(s) running` }
        : { type: "Progressing", status: "False", reason: "NoJobsActive", message: "No Jobs running" },
    ];
  }

  private degraded(plan: Plan, children: Children | undefined): ConditionInput {
    if (plan.createFailed)
      return { type: "Degraded", status: "True", reason: "JobCreationFailed", message: plan.createFailed };
    if (plan.createConflict)
      return { type: "Degraded", status: "True", reason: "JobCreationFailed", message: plan.createConflict };
    if (plan.deleteFailed)
      return { type: "Degraded", status: "True", reason: "JobDeletionFailed", message: plan.deleteFailed };
    const newest = children ? newestFinished(children) : undefined;
    if (newest && classifyJob(newest) === "failed") {
      return {
        type: "Degraded",
        status: "True",
        reason: "LastJobFailed",
        message: `The newest finished Job ${newest.metadata?.name} failed`,
      };
    }
    return { type: "Degraded", status: "False", reason: "AsExpected", message: "No problems detected" };
  }

  /** False when the write lost an optimistic-concurrency race (409) and should be retried. */
  private async writeStatus(cronJob: StoredCronJob, plan: Plan, now: Date, ctx: ReconcileContext): Promise<boolean> {
    const status: CronJobStatus = { ...plan.status };
    status.conditions = setConditions(cronJob.status?.conditions, plan.conditions, now, cronJob.metadata.generation);
    const cleaned = stripUndefined(status);
    if (sameStatus(cronJob.status, cleaned)) return true;
    // Our own write may not have reached the cache yet (the reconcile triggered by the Job we just
    // created sees the CronJob from before it): writing the same status again would only conflict.
    const key = `${cronJob.metadata.namespace}/${cronJob.metadata.name}`;
    const last = this.lastWritten.get(key);
    const wanted = canonical(cleaned);
    if (last && last.basedOn === cronJob.metadata.resourceVersion && last.status === wanted) return true;
    const body = { ...structuredClone(cronJob), status: cleaned } as unknown as CronJob;
    try {
      await this.client.updateStatus(CronJobKind, body);
      this.lastWritten.set(key, { basedOn: cronJob.metadata.resourceVersion ?? "", status: wanted });
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

function newestFinished(c: Children): Readonly<Job> | undefined {
  let best: Readonly<Job> | undefined;
  let bestT = -Infinity;
  for (const j of [...c.successful, ...c.failed]) {
    const t = (scheduledTimeOf(j) ?? finishedAt(j))?.getTime() ?? -Infinity;
    if (t > bestT || (t === bestT && (j.metadata?.name ?? "") > (best?.metadata?.name ?? ""))) {
      best = j;
      bestT = t;
    }
  }
  return best;
}

export { rfc3339 };

function truncateToSecond(d: Date): Date {
  return new Date(Math.floor(d.getTime() / 1000) * 1000);
}

function stripUndefined<T extends object>(o: T): T {
  const out = {} as T;
  for (const [k, v] of Object.entries(o)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

function sameStatus(a: Readonly<CronJobStatus> | undefined, b: CronJobStatus): boolean {
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

export type { Condition };
