// The CronJob reconciler. reconcile() reads top-down like the kubebuilder book's numbered steps:
//    1 load → 2 children → 3 confirm active → 4 observe → 5 failure stop → 6 guards → 7 schedule →
//    8 missed slots → 9 due slots → 10 run-now → 11 backfill → 12 commit (Events, counts, history cleanup,
//    status write, requeue)
// Steps 9–11 are the three triggers; each run goes through one path (run(): admit, create or adopt, record;
// the trigger's own part is a row of runs.ts). Step 12 is the only place that writes status and consults the
// burst window and the books rules. Semantics are the Kubernetes batch/v1 CronJob controller (v2) without its
// known failures; see docs/using-cronjobs.md "Behaviour compared with the built-in CronJob" and docs/architecture.md.
import {
  BACKFILL_REQUEST_ANNOTATION,
  backfillRequestOf,
  classifyJob,
  CronJobResource as CronJobKind,
  CronJobSchema,
  type CronJobWire,
  CronJobWireSchema,
  type CronJobWireStatus,
  DEFAULT_MAX_CATCH_UP_RUNS,
  type Job,
  jobNameFor,
  MAX_BACKFILL_SLOTS,
  MAX_CATCH_UP_SLOTS,
  MAX_RUN_NOW_REQUEST_LENGTH,
  MORE_SCHEDULES_ANNOTATION,
  readJob,
  resumeRequestOf,
  runNowRequesterOf,
  runNowRequestOf,
} from "../api/v1/index.ts";
import { type Schedule, slotsInRange } from "../api/v1/schedule/index.ts";
import { type Clock, realClock } from "../runtime/clock.ts";
import type { ReconcileContext, Reconciler, Request, Result } from "../runtime/controller.ts";
import type { Recorder } from "../runtime/events/types.ts";
import type { CacheReader, ObjectReader, ObjectWriter, StatusWriter } from "../runtime/interfaces.ts";
import { type KubeObject, Kinds } from "../runtime/kinds.ts";
import type { Manager } from "../runtime/manager.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import { deepFreeze, digest } from "../runtime/objects.ts";
import { backfillDecision } from "./backfill.ts";
import { type ConditionInput, scheduledConditions, type WriteProblems } from "./conditions.ts";
import { type EventDecision, recordEvent } from "./events.ts";
import { failureStop } from "./failures.ts";
import { historyBehind, historyToDelete, statusBehind } from "./flow.ts";
import { guards, statusAfterGuards } from "./guards.ts";
import { JOB_OWNER_INDEX, setupJobCache } from "./job.ts";
import { ChildJobs } from "./jobs.ts";
import { writeStatus } from "./statuswriter.ts";
import { type CronJobKey, ReconcilerMemory } from "./memory.ts";
import { type CronJobRunMetrics, jobCreationSkew, noCronJobMetrics, type RunOutcome } from "./metrics.ts";
import { jobRef, mayReplace, observeChildren } from "./observe.ts";
import { admit, jobFor, rowOf, type RunRequest, type StateEvent } from "./runs.ts";
import { missedByPolicy, missedDeadline, scheduleDecision, slotAlreadyRan } from "./schedule.ts";
import { everyAnchor, type ParsedSchedules, parseSchedules, slotSources } from "./schedules.ts";

export { setupJobCache };

/**
 * Requeue slightly after the slot so the reconcile sees it as due. Every Job starts this much late, so it is
 * small: a timer that fires early only costs one more pass (the slot is not due yet; requeued for it again).
 */
const REQUEUE_SLACK_MS = 10;

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

/**
 * One pass's working state, threaded through the steps that run Jobs and handed to the commit: the status
 * being built, the Jobs known to exist and to run (the cache's, the live reads, the ones this pass created or
 * adopted), and the effects to commit. Only run() and the trigger steps change it.
 */
interface Pass {
  readonly cronJob: StoredCronJob;
  /** Its schedules (step 6): what a slot's Job names as its sources. */
  readonly schedules: ParsedSchedules;
  status: CronJobWireStatus;
  /** Every Job of this CronJob known this pass, by name. */
  readonly jobs: Map<string, Readonly<Job>>;
  /** The ones that run (status.active is written from it). */
  readonly active: Map<string, Readonly<Job>>;
  readonly events: Array<EventDecision | StateEvent>;
  readonly counts: RunOutcome[];
  /** Reported in Degraded. */
  problems: WriteProblems;
  /** Thrown after the status write, so the work queue retries this CronJob with backoff. */
  retry?: string;
  /** This pass created (or adopted) a Job. */
  created: boolean;
}

/** What run() did with a request. */
type RunResult = "created" | "adopted" | "held" | "failed" | "conflict";

/** What reconcile() decided, for the commit (step 12). */
interface Outcome {
  pass: Pass;
  /** The status as observed before any trigger ran (what the books rules compare the stored status with). */
  observed: CronJobWireStatus;
  /** The Jobs the cache listed, by class (history cleanup's input). */
  finished: { successful: Readonly<Job>[]; failed: Readonly<Job>[] };
  conditions: ConditionInput[];
  /** Reconcile again after this many milliseconds; none while not scheduling. */
  requeueAfterMs?: number;
}

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
  private readonly jobs: ChildJobs;
  private readonly cache: CacheReader;
  private readonly recorder: Recorder;
  private readonly clock: Clock;
  private readonly metrics: CronJobRunMetrics;
  /** Everything remembered between passes (controllers/memory.ts): one object, one forget. */
  private readonly memory = new ReconcilerMemory<LoadedCronJob>();

  constructor(d: CronJobReconcilerDeps) {
    this.client = d.client;
    this.jobs = new ChildJobs(d.client);
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
    const now = new Date(Math.floor(clockNow.getTime() / 1000) * 1000);

    // 1. Load the CronJob; gone → nothing to do (its Jobs are garbage-collected through ownerReferences).
    const loaded = this.loadCronJob(req, ctx);
    if (!loaded) return {};
    if (!loaded.valid) {
      // Reconciled as stored, like a valid one: what makes it unschedulable (zone, schedule) is reported by the
      // guards (step 6), and a field without its default is read as unset (no history cleanup, Allow).
      ctx.log.debug("the stored CronJob does not pass the schema; reconciling it as stored", { issues: loaded.issues });
    }
    const cronJob = loaded.cronJob;

    // 2. Our child Jobs, through the owner index.
    const cached = this.listChildren(cronJob);

    // 3. Active Jobs status lists that the cache has not seen: the API server decides (live reads).
    const live = await this.confirmActive(cronJob, cached, ctx);

    // 4. What the children say: status, the runs whose end status has not recorded, their Events and counts.
    const remembered = this.memory.recall(keyOf(cronJob));
    const seen = observeChildren({
      cronJob,
      cached,
      live,
      reported: remembered.sawCompleted ?? new Set(),
      replaced: remembered.replaced ?? new Set(),
    });
    remembered.sawCompleted = seen.reported.size ? seen.reported : undefined;
    remembered.replaced = seen.replaced.size ? seen.replaced : undefined;

    // 5. Stop after repeated failures (spec.stopAfterConsecutiveFailures), or resume.
    const stop = failureStop({
      stopAfter: cronJob.spec.stopAfterConsecutiveFailures,
      generation: cronJob.metadata.generation,
      status: seen.status,
      finished: seen.finished,
      resumeRequest: resumeRequestOf(cronJob),
      now,
    });

    // 6. Guards: deleting, bad time zone, bad schedule, suspended, stopped.
    const parsed = this.parseCached(cronJob);
    const guard = guards({ ...cronJob, status: stop.status }, parsed, stop.status.active?.length ?? 0);
    const pass = newPass(cronJob, parsed, statusAfterGuards(stop.status, guard), seen.jobs, [
      ...seen.events,
      ...(stop.event ? [stop.event] : []),
      ...(guard.stop && guard.event ? [guardEvent(guard.event)] : []),
    ]);
    pass.counts.push(...seen.counts);
    const finished = {
      successful: cached.filter((j) => classifyJob(j) === "successful"),
      failed: cached.filter((j) => classifyJob(j) === "failed"),
    };
    const outcome: Outcome = { pass, observed: stop.status, finished, conditions: [] };

    let more = false;
    if (!guard.stop) {
      // 7. Which slots are due, and when the next one is: the union of the CronJob's schedules.
      const anchor = everyAnchor(parsed, cronJob.metadata.creationTimestamp);
      const window = scheduleDecision({
        schedule: guard.schedule,
        lastScheduleTime: pass.status.lastScheduleTime,
        creationTimestamp: cronJob.metadata.creationTimestamp,
        startingDeadlineSeconds: cronJob.spec.startingDeadlineSeconds,
        missedRunPolicy: cronJob.spec.missedRunPolicy,
        concurrencyPolicy: cronJob.spec.concurrencyPolicy,
        announced: cronJob.status?.nextScheduleTime,
        neverReconciled: cronJob.status?.observedGeneration === undefined && !cronJob.status?.conditions?.length,
        ...(anchor ? { everyAnchor: anchor } : {}),
        now,
        clockNow,
      });
      if (window.tooManyMissed) {
        const key = rfc3339(window.due.at(-1) ?? window.next);
        pass.events.push({ ...window.tooManyMissed, once: { topic: "TooManyMissedTimes", key } });
      }

      // 8. A slot past its starting deadline unstarted, or one the missed-run policy does not run: reported once.
      this.reportMissed(pass, window);

      // 9. The due slots (one, unless missedRunPolicy RunAll catches up), oldest first, not already run.
      more = await this.runDueSlots(pass, window.due, anchor, ctx);

      pass.status.nextScheduleTime = rfc3339(window.next);
      // Slots left over by RunAll's per-pass cap follow at once (the others' Jobs came first). Woken from the
      // untruncated time: waking up to a second late would add that to every Job's start.
      const wake = more ? clockNow : window.next;
      outcome.requeueAfterMs = Math.max(wake.getTime() - clockNow.getTime(), 0) + REQUEUE_SLACK_MS;
    }

    // 10–11. The explicit requests run while scheduling is suspended or stopped too (as `kubectl create job
    // --from` does for the built-in kind), not while the CronJob is being deleted or is invalid.
    if (!guard.stop || guard.suspended) {
      await this.runNowIfRequested(pass, ctx);
      if (parsed.ok) await this.runBackfill(pass, parsed.schedule, now, ctx);
    }
    // The conditions after every trigger ran: a failed create of any of them is Degraded.
    outcome.conditions = guard.stop
      ? guard.conditions
      : scheduledConditions(pass.active.size, pass.status.nextScheduleTime, pass.problems, [
          ...finished.successful,
          ...finished.failed,
        ]);

    // 12. Commit: Events, counts, history cleanup, one status write, the requeue.
    return this.commit(outcome, now, ctx);
  }

  // --- 1, 2, 3 -------------------------------------------------------------------------------------

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

  private listChildren(cronJob: StoredCronJob): Readonly<Job>[] {
    return this.cache
      .byIndex(Kinds.Job, JOB_OWNER_INDEX, cronJob.metadata.uid ?? "")
      .filter((j) => j.metadata?.namespace === cronJob.metadata.namespace)
      .map(readJob);
  }

  /** The stored status.active Jobs the cache lacks, read live (undefined: gone). */
  private async confirmActive(
    cronJob: StoredCronJob,
    cached: readonly Readonly<Job>[],
    ctx: ReconcileContext,
  ): Promise<Map<string, Readonly<Job> | undefined>> {
    const uids = new Set(cached.map((j) => j.metadata?.uid));
    const live = new Map<string, Readonly<Job> | undefined>();
    for (const ref of cronJob.status?.active ?? []) {
      if (!ref.name || (ref.uid && uids.has(ref.uid))) continue;
      live.set(ref.name, await this.jobs.get(cronJob, ref.name, ctx));
    }
    return live;
  }

  /**
   * The parsed schedules, from memory's cache (per CronJob for an H schedule, shared otherwise), keyed by all they
   * are parsed from: spec.schedule, spec.timeZone and the other schedules' annotation.
   */
  private parseCached(cronJob: StoredCronJob): ParsedSchedules {
    const { schedule, timeZone: tz } = cronJob.spec;
    const key = keyOf(cronJob);
    const more = cronJob.metadata.annotations?.[MORE_SCHEDULES_ANNOTATION];
    return this.memory.parsedSchedule(key, schedule, tz, () => parseSchedules(cronJob, key), more);
  }

  // --- 8 -------------------------------------------------------------------------------------------

  /** The schedule's missed slots, each reported once (status.lastMissedTime is the schedule's record of them). */
  private reportMissed(pass: Pass, window: ReturnType<typeof scheduleDecision>): void {
    const before = pass.status.lastMissedTime;
    const late = window.tooLate && missedDeadline(before, window.tooLate);
    const notRun = window.notRun && missedByPolicy(before, window.notRun);
    for (const [missed, outcome] of [
      [late, "missed_deadline"],
      [notRun, "missed_policy"],
    ] as const) {
      if (!missed) continue;
      pass.counts.push(outcome);
      pass.events.push(missed.event);
      const t = pass.status.lastMissedTime;
      if (!t || Date.parse(missed.lastMissedTime) > Date.parse(t)) pass.status.lastMissedTime = missed.lastMissedTime;
    }
  }

  // --- 9, 10, 11: the triggers ---------------------------------------------------------------------

  /**
   * Step 9: the due slots, oldest first, each not already run. At most spec.maxCatchUpRuns per pass (true: slots
   * are left); stops at the first slot that cannot run now (Forbid, a failed write), so no later one overtakes it.
   */
  private async runDueSlots(
    pass: Pass,
    due: readonly Date[],
    anchor: Date | undefined,
    ctx: ReconcileContext,
  ): Promise<boolean> {
    // The CRD bounds it to 1–100; a stored value outside (never expected) must not stop every pass at 0 Jobs
    // with "more to come", which would requeue at once forever.
    const stored = pass.cronJob.spec.maxCatchUpRuns;
    const cap =
      typeof stored === "number" && Number.isInteger(stored) && stored >= 1
        ? Math.min(stored, MAX_CATCH_UP_SLOTS)
        : DEFAULT_MAX_CATCH_UP_RUNS;
    let started = 0;
    for (const slot of due) {
      if (slotAlreadyRan(pass.cronJob.metadata.name ?? "", [...pass.jobs.values()], pass.status, slot)) continue;
      if (started >= cap) return true;
      const sources = slotSources(pass.schedules, slot, anchor);
      const result = await this.run(pass, { trigger: "schedule", slot, ...(sources ? { sources } : {}) }, ctx);
      if (result !== "created" && result !== "adopted") break;
      started++;
    }
    return false;
  }

  /**
   * Step 10: a new run-now request runs once. The Job's name comes from the request, so a repeat after a crash
   * finds it; status.lastRunNowRequest records it (history cleanup keeps the Job until then).
   */
  private async runNowIfRequested(pass: Pass, ctx: ReconcileContext): Promise<void> {
    const request = runNowRequestOf(pass.cronJob);
    if (!request || pass.status.lastRunNowRequest === request) return;
    if (request.length > MAX_RUN_NOW_REQUEST_LENGTH) {
      pass.events.push({
        reason: "RunNowRefused",
        message: `run-now request refused: the annotation's value is ${request.length} characters, at most ${MAX_RUN_NOW_REQUEST_LENGTH} are allowed`,
        once: { topic: "RunNowRefused", key: digest(request) },
      });
      return;
    }
    const requestedBy = runNowRequesterOf(pass.cronJob, request);
    await this.run(pass, { trigger: "runNow", request, requestedBy }, ctx);
  }

  /**
   * Step 11: a backfill request (backfill.ts decides whether it starts, is refused or cancelled), worked through
   * oldest slot first after status.backfill.lastSlot. A slot whose Job exists (scheduled, run by an earlier
   * request, or by this one before a crash) is not run again; run() holds the rest to the request's parallelism.
   */
  private async runBackfill(pass: Pass, schedule: Schedule, now: Date, ctx: ReconcileContext): Promise<void> {
    const { cronJob } = pass;
    const request = backfillRequestOf(cronJob);
    if (!request && !pass.status.backfill) return;
    const anchor = new Date(cronJob.metadata.creationTimestamp ?? now);
    const decision = backfillDecision({ request, stored: pass.status.backfill, schedule, anchor, now });
    if (decision.event) pass.events.push(decision.event);
    let bf = decision.backfill;
    const done = () => {
      const { backfill: _old, ...rest } = pass.status;
      pass.status = bf ? { ...rest, backfill: bf } : rest;
    };
    if (!bf || bf.phase !== "Running" || !request?.ok) return done();
    const { id, parallelism } = request.request;
    const pending = slotsInRange(schedule, request.request.from, request.request.to, {
      ...(bf.lastSlot ? { after: new Date(bf.lastSlot) } : {}),
      max: MAX_BACKFILL_SLOTS,
      anchor,
    });
    let handled = 0;
    for (const slot of pending) {
      const existing = pass.jobs.get(jobNameFor(cronJob.metadata.name ?? "", slot));
      let ours: boolean;
      if (existing) {
        // This request's own Job (created before a crash lost the status write), or the slot ran already.
        ours = triggerRequestId(existing) === id;
      } else {
        const sources = slotSources(pass.schedules, slot, anchor);
        const slotRun = { trigger: "backfill", slot, id, parallelism, ...(sources ? { sources } : {}) } as const;
        const result = await this.run(pass, slotRun, ctx);
        if (result === "held" || result === "failed") break;
        // A foreign Job holding the slot's name (conflict) is reported, not run; an adopted Job may be another's.
        const job = pass.jobs.get(jobNameFor(cronJob.metadata.name ?? "", slot));
        ours = result === "created" || (result === "adopted" && !!job && triggerRequestId(job) === id);
      }
      bf = ours ? { ...bf, created: bf.created + 1 } : { ...bf, skipped: bf.skipped + 1 };
      bf = { ...bf, lastSlot: rfc3339(slot) };
      handled++;
    }
    if (handled === pending.length) {
      bf = { ...bf, phase: "Complete" };
      pass.events.push({
        reason: "BackfillComplete",
        message: `Backfill "${id}" complete: ${bf.created} slots run, ${bf.skipped} already had their Job`,
      });
    }
    done();
  }

  // --- the run path: admit, create or adopt, record ------------------------------------------------

  /** One run, whatever its trigger: the one admission rule, the one create, the one record step. */
  private async run(pass: Pass, request: RunRequest, ctx: ReconcileContext): Promise<RunResult> {
    const { cronJob } = pass;
    const row = rowOf(request);
    const due = row.dueAt?.();
    const recorded = (job: Readonly<Job>) => mayReplace(cronJob, job, due);
    const admission = admit(cronJob.spec.concurrencyPolicy, request, [...pass.active.values()], recorded);
    if (!admission.run) {
      if (admission.held) pass.events.push(admission.held);
      ctx.log.debug("run held back by the concurrency policy or the request's limit", { trigger: request.trigger });
      return "held";
    }
    if (admission.replace.length && !(await this.replaceActive(pass, admission.replace, ctx))) return "failed";

    const job = jobFor(cronJob, request);
    const name = job.metadata!.name!;
    const outcome = await this.jobs.createOrAdopt(cronJob, job, ctx);
    if (!outcome.ok) {
      if (outcome.event) pass.events.push(outcome.event);
      pass.problems = { ...pass.problems, ...outcome.problems };
      if (outcome.retry !== undefined) pass.retry = outcome.retry;
      return outcome.problems.createConflict ? "conflict" : "failed";
    }

    pass.jobs.set(name, outcome.job);
    if (classifyJob(outcome.job) === "active") pass.active.set(name, outcome.job);
    pass.status = row.record(pass.status);
    pass.created = true;
    if (!outcome.created) return "adopted";
    const made = row.created(name);
    pass.events.push(made.event);
    if (outcome.warnings) {
      pass.events.push({ reason: "JobWarning", message: `Job ${name}: ${outcome.warnings.join("; ")}` });
    }
    pass.counts.push(made.count);
    if (due) jobCreationSkew.observe(Math.max(0, (this.clock.now().getTime() - due.getTime()) / 1000));
    ctx.log.info(made.log, { job: name, trigger: request.trigger });
    return "created";
  }

  /**
   * Replace: deletes every running Job. As the built-in controller: a failed delete fails the reconcile, and the
   * work queue retries it with backoff; the run happens once the running Job is gone.
   */
  private async replaceActive(pass: Pass, running: readonly Readonly<Job>[], ctx: ReconcileContext): Promise<boolean> {
    const remembered = this.memory.recall(keyOf(pass.cronJob));
    for (const job of running) {
      const deleted = await this.jobs.delete(pass.cronJob, job, ctx, "replace");
      pass.events.push(deleted.event);
      if (deleted.failed) {
        pass.problems = { ...pass.problems, deleteFailed: deleted.failed };
        pass.retry = `replacing the active Job: ${deleted.failed}`;
        return false;
      }
      const uid = job.metadata?.uid;
      if (uid) (remembered.replaced ??= new Set()).add(uid);
      pass.active.delete(job.metadata?.name ?? "");
    }
    return true;
  }

  // --- 12: the commit --------------------------------------------------------------------------------

  /**
   * The one place that writes what a pass decided: its Events and counts, history cleanup, and the status; and the
   * only one that consults the burst window and the books rules. Creation first: while a burst of Job creates is on
   * (this pass's own create starts or extends one), cleanup and the status write wait for a pass after it
   * (requeueWhenQuiet), and a pass that created a Job leaves its status write while other CronJobs wait in the
   * queue; the books never fall more than one run behind (flow.ts), whatever the load. A later pass rebuilds both
   * from the children, so nothing is lost if the process dies meanwhile.
   */
  private async commit(o: Outcome, now: Date, ctx: ReconcileContext): Promise<Result> {
    const { pass } = o;
    const { cronJob } = pass;
    const count = (c: RunOutcome) =>
      this.metrics.countRun(cronJob.metadata.namespace ?? "", cronJob.metadata.name ?? "", c, cronJob.metadata.uid);
    for (const e of pass.events) {
      if (!this.firstReport(cronJob, e)) continue;
      this.event(cronJob, e);
      // A held-back run's count goes with its state Event: once per state.
      if ("once" in e && e.count) count(e.count);
    }
    for (const c of pass.counts) count(c);
    pass.events.length = 0;
    pass.counts.length = 0;

    const { successful, failed } = o.finished;
    const burst = ctx.burst?.active() ?? false;
    const booksLate = statusBehind(cronJob.status, o.observed, [...successful, ...failed], now);
    const historyLate = historyBehind(
      { successful: successful.length, failed: failed.length },
      { successful: cronJob.spec.successfulJobsHistoryLimit, failed: cronJob.spec.failedJobsHistoryLimit },
    );
    // History cleanup does not wait for a create that keeps failing: it runs before the retry is thrown.
    if (!burst || historyLate) await this.cleanupHistory(cronJob, o.finished, ctx);

    const requeue: Result = o.requeueAfterMs !== undefined ? { requeueAfterMs: o.requeueAfterMs } : {};
    const deferred = !booksLate && (burst || (pass.created && (ctx.queueLength?.() ?? 0) > 0));
    if (deferred) {
      if (pass.retry !== undefined) throw new Error(pass.retry);
      return burst ? { ...requeue, requeueWhenQuiet: true } : requeue;
    }
    const refs = [...pass.active.values()].map(jobRef).sort((a, b) => (a.name ?? "").localeCompare(b.name ?? ""));
    const status = { ...pass.status, active: refs, activeCount: refs.length };
    const remembered = this.memory.recall(keyOf(cronJob));
    const written = await writeStatus(this.client, cronJob, status, o.conditions, { now, remembered, ctx });
    if (pass.retry !== undefined) throw new Error(pass.retry);
    // A conflict means the object changed under us: read it again soon (a Job created meanwhile is found by its
    // deterministic name, so the retry cannot duplicate it).
    return written ? requeue : { requeue: true };
  }

  /** A state Event is reported once per state (memory); any other Event every time it is decided. */
  private firstReport(cronJob: StoredCronJob, e: EventDecision | StateEvent): boolean {
    if (!("once" in e)) return true;
    const remembered = this.memory.recall(keyOf(cronJob));
    const reported = (remembered.reported ??= new Map());
    if (reported.get(e.once.topic) === e.once.key) return false;
    reported.set(e.once.topic, e.once.key);
    return true;
  }

  private event(cronJob: StoredCronJob, e: EventDecision): void {
    recordEvent(this.recorder, cronJob, e.reason, e.message);
  }

  /** Deletes the oldest finished Jobs beyond each history limit (best effort: a later pass tries again). */
  private async cleanupHistory(cronJob: StoredCronJob, finished: Outcome["finished"], ctx: ReconcileContext) {
    for (const job of historyToDelete(cronJob, finished)) {
      this.event(cronJob, (await this.jobs.delete(cronJob, job, ctx, "history")).event);
    }
  }
}

// --- helpers ---------------------------------------------------------------------------------------

function newPass(
  cronJob: StoredCronJob,
  schedules: ParsedSchedules,
  status: CronJobWireStatus,
  jobs: readonly Readonly<Job>[],
  events: Array<EventDecision | StateEvent>,
): Pass {
  const byName = new Map(jobs.map((j) => [j.metadata?.name ?? "", j]));
  const listed = new Set((status.active ?? []).map((r) => r.name));
  const active = new Map([...byName].filter(([name, j]) => listed.has(name) && classifyJob(j) === "active"));
  return { cronJob, schedules, status, jobs: byName, active, events, counts: [], problems: {}, created: false };
}

/** A guard's Event describes the CronJob's state: once per reason and message. */
function guardEvent(e: EventDecision): StateEvent {
  return { ...e, once: { topic: "guard", key: `${e.reason}\u0000${e.message}` } };
}

/** The backfill request a Job ran for, if any. */
function triggerRequestId(job: Readonly<Job>): string | undefined {
  return job.metadata?.annotations?.[BACKFILL_REQUEST_ANNOTATION];
}

/** Step 1's parse of a cached CronJob. */
function loadedFrom(req: Request, raw: Readonly<KubeObject>): LoadedCronJob {
  // The CRD schema already validated and defaulted it; parsing fills defaults for objects written before a
  // default existed. A parse failure of the template must not stop the controller from reporting (the guards
  // report schedule problems with their own messages).
  const parsed = CronJobSchema.safeParse(raw);
  if (parsed.success) return { valid: true, cronJob: parsed.data };
  const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "<root>"}: ${i.message}`);
  // The CRD's structural schema guarantees the JSON types of every stored object.
  const stored = CronJobWireSchema.safeParse(raw);
  if (!stored.success) throw new Error(`CronJob ${req.namespace}/${req.name} cannot be read: ${issues.join("; ")}`);
  return { valid: false, cronJob: stored.data, issues };
}

/** A CronJob's key in the reconciler's memory. */
function keyOf(cronJob: StoredCronJob): CronJobKey {
  const { namespace, name, uid } = cronJob.metadata;
  return { namespace: namespace ?? "", name: name ?? "", ...(uid ? { uid } : {}) };
}
