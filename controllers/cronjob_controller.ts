// The CronJob reconciler. reconcile() reads top-down like the kubebuilder book's numbered steps:
//    1 load → 2 children → 3 confirm active → 4 observe → 5 failure stop → 6 guards → 7 schedule → 8 missed slots →
//    9 triggers → 10 commit (Job ends, memory, Events, counts, metrics, history cleanup, status write, requeue)
// Step 9 runs the triggers of the table (triggers.ts: the schedule's due slots, run-now, backfill), each request
// through one path (run(): admit, create or adopt); the trigger's own part is its row. Steps 1–9 decide; step 10
// is the only place with effects beyond the Jobs' creates and deletes: it ends the Jobs whose Pods never started,
// writes status, memory, Events and metrics, and consults the burst window and the books rules. Semantics are the
// Kubernetes batch/v1 CronJob controller (v2) without its known failures; see docs/using-cronjobs.md "Behaviour
// compared with the built-in CronJob" and docs/architecture.md.
import {
  classifyJob,
  ConcurrencyGroupResource,
  CronJobResource as CronJobKind,
  EventReason,
  ExclusionCalendarResource,
  type Job,
  MORE_SCHEDULES_ANNOTATION,
  readJob,
  runFactsOf,
  upstreamsOf,
  withRunFacts,
} from "../api/v1/index.ts";
import { type Clock, realClock } from "../runtime/clock.ts";
import {
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
  RetryNoLaterThan,
} from "../runtime/controller.ts";
import { routineLeftOut } from "../runtime/events/recorder.ts";
import type { Recorder } from "../runtime/events/types.ts";
import type { CacheIndexer, CacheReader, ObjectClient } from "../runtime/interfaces.ts";
import { Kinds } from "../runtime/kinds.ts";
import type { Manager } from "../runtime/manager.ts";
import { isSlot } from "../api/v1/schedule/index.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import { deepFreeze } from "../runtime/objects.ts";
import { historyBehind, historyToDelete, keptJobs, statusBehind } from "./books.ts";
import { progressingCondition, scheduledConditions } from "./conditions.ts";
import { dueWindow, missedSlots } from "./due.ts";
import { emitEvent, type EventDecision, isRoutine } from "./events.ts";
import { failureStep } from "./failures.ts";
import { endedGuard, guards, type ParsedSchedules, parsedSchedules, statusAfterGuards } from "./guards.ts";
import { scheduleEndAfterRuns, scheduleEndStep } from "./limits.ts";
import { JOB_OWNER_INDEX, setupJobCache } from "./job.ts";
import { ChildJobs } from "./jobs.ts";
import { ReconcilerMemory, type Remembered } from "./memory.ts";
import { type CronJobRunMetrics, jobCreationSkew, noCronJobMetrics, type RunOutcome, statusWrites } from "./metrics.ts";
import { isUnbookedRun, jobRef, mayReplace, observeChildren } from "./observe.ts";
import { admit } from "./runs.ts";
import { GroupPlaces, groupPlaceFreed, setupGroupCache } from "./groups.ts";
import { CalendarReader, setupCalendarCache } from "./calendars.ts";
import { exclusionStep } from "./exclusionstep.ts";
import { setupAfterCache, UpstreamReader } from "./after.ts";
import {
  keyOf,
  type LoadedCronJob,
  loadedFrom,
  newPass,
  type Outcome,
  type Pass,
  type RunResult,
  type StoredCronJob,
  take,
} from "./pass.ts";
import { REQUEUE_SLACK_MS, requeueAfter } from "./requeue.ts";
import { announcesOnly, freshRuns, holdForRun } from "./statuswait.ts";
import { endJobs, readStarts, startLimit } from "./starts.ts";
import { enterDecisions, recordEnded, runDecision } from "./record.ts";
import {
  behindSince,
  boundSpreadMs,
  type FoldJobs,
  foldStatus,
  StatusNews,
  statusNews,
  type StatusFoldOptions,
  StatusWriteBudget,
  unbookedSlots,
  vanishedSlot,
} from "./statusfold.ts";
import { statusToWrite, writeStatus } from "./statuswriter.ts";
import {
  type SourceInput,
  type StateEvent,
  type Trigger,
  TRIGGERS,
  triggerOfJob,
  type TriggerRun,
} from "./triggers.ts";

/**
 * What the reconciler reads from the cache, registered before it starts: the Jobs trimmed and indexed by owner
 * (job.ts), the concurrency groups' indexes (groups.ts) and the exclusion calendars' (calendars.ts).
 */
export function setupCache(cache: CacheIndexer): void {
  setupJobCache(cache);
  setupGroupCache(cache);
  setupCalendarCache(cache);
  setupAfterCache(cache);
}

interface CronJobReconcilerDeps {
  /** Live reads (a Job the cache may not have seen yet) and the writes: Jobs, and CronJob status. */
  client: ObjectClient;
  /** CronJobs by name, Jobs by JOB_OWNER_INDEX, and the groups and calendars by their indexes (setupCache). */
  cache: CacheReader;
  recorder: Recorder;
  clock?: Clock;
  /** Per-CronJob run counters (cronjob_runs_total); none by default. */
  metrics?: CronJobRunMetrics;
  /** The triggers (triggers.ts TRIGGERS by default): a row each, run in this order in step 9. */
  triggers?: readonly Trigger[];
  /**
   * How long a run this process created may wait to be written to status (default 0: at once). A Job that ends
   * within it is written once, its creation and its end together, instead of twice (--status-write-delay).
   */
  statusDelayMs?: number;
  /**
   * The fold of routine status writes (statusfold.ts): a budget of writes a second and the most a scheduled run's
   * start or end waits to be written (--status-write-qps, --status-write-max-delay). None: every change at once.
   */
  statusFold?: StatusFoldOptions;
  /** The concurrency groups' books (groups.ts); one over `cache` by default. */
  groups?: GroupPlaces;
}

export class CronJobReconciler implements Reconciler {
  private readonly client: CronJobReconcilerDeps["client"];
  private readonly jobs: ChildJobs;
  private readonly cache: CacheReader;
  private readonly recorder: Recorder;
  readonly clock: Clock;
  private readonly metrics: CronJobRunMetrics;
  private readonly triggers: readonly Trigger[];
  private readonly statusDelayMs: number;
  /** The status writes' room (statusfold.ts): one budget for the whole controller; none, no fold. */
  private readonly budget: StatusWriteBudget | undefined;
  /** The concurrency groups: what admission reads of a group, and the places this process took. */
  readonly groups: GroupPlaces;
  /** The exclusion calendars, as the CronJobs name them (calendars.ts). */
  readonly calendars: CalendarReader;
  /** spec.after's upstreams and their Jobs, from the cache. */
  readonly upstreams: UpstreamReader;
  /** Everything remembered between passes (controllers/memory.ts): one object, one forget. */
  private readonly memory = new ReconcilerMemory<LoadedCronJob>();

  constructor(d: CronJobReconcilerDeps) {
    this.client = d.client;
    this.jobs = new ChildJobs(d.client);
    this.cache = d.cache;
    this.recorder = d.recorder;
    this.clock = d.clock ?? realClock;
    this.metrics = d.metrics ?? noCronJobMetrics;
    this.triggers = d.triggers ?? TRIGGERS;
    this.statusDelayMs = d.statusDelayMs ?? 0;
    this.budget = d.statusFold ? new StatusWriteBudget(d.statusFold, this.clock.now().getTime()) : undefined;
    this.groups = d.groups ?? new GroupPlaces(d.cache);
    this.calendars = new CalendarReader(d.cache);
    this.upstreams = new UpstreamReader(d.cache);
  }

  /**
   * Register what it reads from the cache (setupCache) and the controller with its watches (kubebuilder's
   * SetupWithManager).
   */
  static setupWithManager(
    mgr: Manager,
    o: {
      clock?: Clock;
      maxConcurrentReconciles?: number;
      metrics?: CronJobRunMetrics;
      statusDelayMs?: number;
      statusFold?: StatusFoldOptions;
    } = {},
  ): CronJobReconciler {
    setupCache(mgr.cache);
    const r = new CronJobReconciler({
      client: mgr.client,
      cache: mgr.cache,
      recorder: mgr.getEventRecorder(),
      ...(o.clock ? { clock: o.clock } : {}),
      ...(o.metrics ? { metrics: o.metrics } : {}),
      ...(o.statusDelayMs !== undefined ? { statusDelayMs: o.statusDelayMs } : {}),
      ...(o.statusFold ? { statusFold: o.statusFold } : {}),
    });
    mgr
      .newControllerManagedBy()
      .named("cronjob")
      .for(CronJobKind)
      .owns(Kinds.Job)
      // A place in a group frees when a Job of it ends or goes: the group's waiting runs are woken, oldest first.
      .watches(
        Kinds.Job,
        r.groups.jobEvents(() => r.clock.now().getTime()),
        { predicates: [groupPlaceFreed] },
      )
      // A group created, deleted or changed: its CronJobs decide again.
      .watches(ConcurrencyGroupResource, r.groups.groupEvents())
      // A calendar created, deleted or changed: the CronJobs naming it decide again.
      .watches(ExclusionCalendarResource, r.calendars.calendarEvents())
      // An upstream's Job changed (it ended), or the upstream came or went: the CronJobs running after it decide again.
      .watches(Kinds.Job, r.upstreams.jobEvents())
      .watches(CronJobKind, r.upstreams.cronJobEvents())
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

    // 4. What the children say: status, the runs whose end status has not booked, their Events and counts; and a run
    // whose Pods never started, ended.
    const { seen, starts, jobsGone } = await this.observe(cronJob, cached, live, clockNow, ctx);

    // 5. Stop after repeated failures (spec.stopAfterConsecutiveFailures), or resume; a stop is a record entry.
    const stop = failureStep(cronJob, seen, now, this.triggers);
    const stopped = enterDecisions(stop.status, stop.decisions);
    if (stop.stoppedAfter !== undefined)
      ctx.log.info("stopped scheduling after failed runs in a row", { failures: stop.stoppedAfter });

    // 6. Guards: deleting, bad time zone, bad schedule, suspended, stopped.
    const parsed = this.parseCached(cronJob);
    const guard = guards({ ...cronJob, status: stopped }, parsed, stopped.active?.length ?? 0);
    const pass = newPass(
      cronJob,
      statusAfterGuards(stopped, guard),
      seen,
      [
        ...seen.events,
        ...(stop.event ? [stop.event] : []),
        ...(guard.stop && guard.event ? [guardEvent(guard.event)] : []),
      ],
      starts.ends,
    );
    const history = { successful: cached.filter(inState("successful")), failed: cached.filter(inState("failed")) };
    const written = parsed.ok ? parsed.schedules : undefined;

    // 7. Which slots are due, and when the next one is: the union of the CronJob's schedules, skipping the times
    // spec.exclusions names. While the exclusions cannot be read (a calendar missing or bad), the due slots are held,
    // never run over a freeze nobody can read.
    const exclusions = written && !guard.stop ? this.calendars.exclusionsOf(cronJob) : ({ kind: "none" } as const);
    const schedules = written && exclusions.kind === "ok" ? this.calendars.excluding(written, exclusions) : written;
    // What `@every` counts from (the schedules decide: api/v1/schedules.ts everyAnchor).
    const anchor = schedules?.everyAnchor({
      lastScheduleTime: pass.status.lastScheduleTime,
      creationTimestamp: cronJob.metadata.creationTimestamp,
    });
    const window = guard.stop
      ? undefined
      : dueWindow(cronJob, pass.status, schedules?.schedule ?? guard.schedule, anchor, clockNow);
    if (window?.tooManyMissed) {
      const key = rfc3339(window.due.at(-1) ?? window.next);
      pass.events.push({ ...window.tooManyMissed, once: { topic: EventReason.TooManyMissedTimes, key } });
    }

    // 8. A slot past its starting deadline unstarted, or one the missed-run policy does not run: reported once.
    take(pass, window && missedSlots(pass.status, window, now));
    // The exclusions' part of step 7: the excluded slots into the record, or the due slots held.
    const excluded =
      window && exclusionStep({ cronJob, status: pass.status, exclusions, schedules, anchor, now, due: window.due });
    take(pass, excluded);
    const due = excluded?.due ?? [];

    // 9. The triggers, in the table's order: the due slots (oldest first, not already run), a run-now request,
    // a backfill request. While scheduling is suspended or stopped only the explicit requests run (as `kubectl
    // create job --from` does for the built-in kind); nothing runs while the CronJob is being deleted or invalid.
    const runs = guard.stop ? (guard.requestsRun ? this.triggers.filter((t) => t.explicit) : []) : this.triggers;
    const upstreams = this.upstreams.read(cronJob);
    const input = { cronJob, schedules, written, due, anchor, now, clockNow, upstreams };
    if (!guard.stop) pass.problems = { ...pass.problems, ...this.groups.problemOf(cronJob) };
    if (!guard.stop && upstreams.problem) pass.problems = { ...pass.problems, upstream: upstreams.problem };
    for (const n of keptJobs(this.triggers, cronJob, [...pass.jobs.values()], pass.status)) pass.kept.add(n);
    let more = false;
    for (const trigger of runs) more = (await this.runTrigger(pass, trigger, input, ctx)) || more;

    // Scheduling ended (spec.maxRuns, spec.endTime): the record says so once, and no next run is announced.
    const slot = isSlot(window?.next) ? window.next : undefined;
    const ranUpTo = Date.parse(pass.status.lastScheduleTime ?? "") || 0;
    const left = due.filter((d) => d.getTime() > ranUpTo).length;
    const end = guard.stop ? guard.ended : scheduleEndAfterRuns(cronJob.spec, pass.status, now, slot, left);
    take(pass, scheduleEndStep(pass.status, end, now));
    const next = end ? undefined : slot;
    // When the next Job will be started: its slot, or with spec.jitter the slot plus its offset.
    if (next && window) pass.status.nextScheduleTime = rfc3339(window.nextStart);
    const { wakeAt } = pass;
    const { nextCheckAt } = starts;
    const requeueAfterMs = requeueAfter({
      // A jittered slot's run is woken for at its start.
      next: next && window?.nextStart,
      more,
      excludedNext: excluded?.excludedNext,
      wakeAt,
      nextCheckAt,
      clockNow,
    });
    // The conditions after every trigger ran: a failed create of any of them is Degraded.
    const conditions = guard.stop
      ? guard.conditions
      : end
        ? endedGuard(end, progressingCondition(pass.active.size), pass.status.resolvedSchedule ?? "").conditions
        : scheduledConditions(pass.active.size, pass.status.nextScheduleTime, pass.problems, [
            ...history.successful,
            ...history.failed,
          ]);
    const unbookedEnds = seen.newlyEnded.length;

    // 10. Commit: memory, Events, counts, metrics, history cleanup, one status write, the requeue.
    return this.commit(
      { pass, observed: stopped, history, conditions, unbookedEnds, requeueAfterMs, jobsGone },
      now,
      ctx,
    );
  }

  // --- 1, 2, 3 -------------------------------------------------------------------------------------

  private loadCronJob(req: Request, ctx: ReconcileContext): LoadedCronJob | undefined {
    const raw = this.cache.get(CronJobKind, req.namespace, req.name);
    if (!raw) {
      ctx.log.debug("CronJob not found; ignoring");
      this.memory.forget({ namespace: req.namespace ?? "", name: req.name });
      this.groups.forget(req.namespace ?? "", req.name);
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

  // --- 4 -------------------------------------------------------------------------------------------

  /** Step 4: what the children say, and the start limit's check of the running Jobs (starts.ts). */
  private async observe(
    cronJob: StoredCronJob,
    cached: readonly Readonly<Job>[],
    live: ReadonlyMap<string, Readonly<Job> | undefined>,
    clockNow: Date,
    ctx: ReconcileContext,
  ) {
    const remembered = this.memory.recall(keyOf(cronJob));
    const { sawCompleted: reported = new Set(), replaced = new Set() } = remembered;
    const seen = observeChildren({ triggers: this.triggers, cronJob, cached, live, reported, replaced });
    // A run a folded status write left unbooked whose Job someone deleted: its slot ran (statusfold.ts).
    const gone = vanishedSlot(remembered.folded, seen.jobs, cronJob.status);
    if (gone !== undefined) {
      ctx.log.info("a Job the status had not booked yet is gone; its slot counts as run", {
        slot: rfc3339(new Date(gone)),
      });
      seen.status.lastScheduleTime = rfc3339(new Date(gone));
    }
    // A run whose Pods did not start within spec.startTimeoutSeconds is ended (starts.ts): it no longer holds Forbid
    // or its group's place once the Job controller fails it. Its Pods and the Job are read here; the commit ends it.
    const [limit, now] = [cronJob.spec.startTimeoutSeconds, clockNow.getTime()];
    const active = seen.jobs.filter(inState("active"));
    const reads = limit ? await readStarts(this.client, active, limit, remembered, now, ctx) : undefined;
    const starts = reads ? startLimit(reads, now) : { ends: [], events: [] };
    seen.events.push(...starts.events);
    return { seen, starts, jobsGone: gone !== undefined };
  }

  /**
   * Step 6's parse: the parsed schedules, from memory's cache (per CronJob for an H schedule, shared otherwise), keyed by all they
   * are parsed from: spec.schedule, spec.timeZone and the other schedules' annotation.
   */
  private parseCached(cronJob: StoredCronJob): ParsedSchedules {
    const { schedule, timeZone: tz } = cronJob.spec;
    const key = keyOf(cronJob);
    const more = cronJob.metadata.annotations?.[MORE_SCHEDULES_ANNOTATION];
    // The window (spec.startTime, spec.endTime) is applied by the parse, so it is part of what the parse is keyed by.
    const { startTime, endTime } = cronJob.spec;
    const window =
      startTime === undefined && endTime === undefined ? "" : `\u0001${startTime ?? ""}\u0001${endTime ?? ""}`;
    const parse = () => parsedSchedules(cronJob, key);
    // No schedule of its own: what it parses to depends on whether spec.after names an upstream.
    const own = schedule ?? (upstreamsOf(cronJob.spec).length ? "\u0002after" : "\u0002none");
    return this.memory.parsedSchedule(
      key,
      own,
      tz,
      parse,
      more === undefined && !window ? undefined : `${more ?? ""}${window}`,
    );
  }

  // --- 9: the triggers ------------------------------------------------------------------------------

  /**
   * Step 9 for one trigger: its source's requests (triggers.ts), oldest first, each not already run, through
   * run(); at most the plan's `max` start (true: requests are left, the pass requeues at once). The walk stops at
   * the first request that cannot run now (held, a failed write, or a conflict where the row says so), so no later
   * one overtakes it. Every handled request goes into the trigger's books (its row's `book`).
   */
  private async runTrigger(
    pass: Pass,
    trigger: Trigger,
    input: Omit<SourceInput, "status" | "jobs">,
    ctx: ReconcileContext,
  ) {
    const plan = trigger.plan({ ...input, status: pass.status, jobs: [...pass.jobs.values()] });
    if (!plan) return false;
    if (plan.status) pass.status = plan.status;
    // The plan's decisions for the record, entered the one way every step's are (enterDecisions).
    if (plan.decisions) pass.status = enterDecisions(pass.status, plan.decisions);
    if (plan.wakeAt && (!pass.wakeAt || plan.wakeAt < pass.wakeAt)) pass.wakeAt = plan.wakeAt;
    pass.events.push(...(plan.events ?? []));
    let started = 0;
    let complete = true;
    for (const r of plan.requests) {
      const ran = r.ran({ cronJobName: pass.cronJob.metadata.name ?? "", jobs: pass.jobs, status: pass.status });
      if (ran.ran) {
        pass.status = r.book(pass.status, { result: "ran", job: ran.job });
        continue;
      }
      if (plan.max !== undefined && started >= plan.max) {
        if (!plan.finish) return true;
        complete = false;
        break;
      }
      const done = await this.run(pass, r, ctx);
      const { result, job } = done;
      const decided = runDecision(r.subject(), done, input.now);
      if (decided) pass.status = enterDecisions(pass.status, [decided]);
      if (result === "held" || result === "failed" || (result === "conflict" && trigger.onConflict === "stop")) {
        complete = false;
        break;
      }
      pass.status = r.book(pass.status, { result, job });
      // Only a create starts a run: an adopted Job (created by an earlier pass the cache has not caught up with)
      // or a conflict takes none of the plan's `max`.
      if (result === "created") started++;
    }
    if (plan.finish) {
      const done = plan.finish(pass.status, complete);
      pass.status = done.status;
      pass.events.push(...done.events);
    }
    return false;
  }

  // --- the run path: admit, create or adopt ---------------------------------------------------------

  /** One run, whatever its trigger: the one admission rule, the one create. The trigger's books are step 9's. */
  private async run(pass: Pass, r: TriggerRun, ctx: ReconcileContext): Promise<RunResult> {
    const { cronJob } = pass;
    const due = r.dueAt?.();
    const replaceable = (job: Readonly<Job>) => mayReplace(this.triggers, cronJob, job, due);
    const group = this.groupOf(pass, r, due);
    const admission = admit(cronJob.spec.concurrencyPolicy, r, [...pass.active.values()], replaceable, group);
    if (!admission.run) {
      if (admission.held) pass.events.push(admission.held);
      ctx.log.debug("run held back by the concurrency policy, the request's limit or the group", {
        trigger: r.trigger,
      });
      if (admission.group && group) {
        pass.groupWait = { since: group.since, until: group.until };
        return { result: "held", group: admission.group };
      }
      const blocking = admission.held ? [...pass.active.keys()].sort()[0] : undefined;
      const policy = cronJob.spec.concurrencyPolicy;
      return blocking ? { result: "held", blockedBy: blocking, policy } : { result: "held" };
    }
    // The Jobs it replaces are written on it, for the record rebuilt from it (api/v1/recentruns.ts).
    const replacing = admission.replace.map((j) => j.metadata?.name ?? "").filter((n) => n);
    const job = withRunFacts(r.job(cronJob), { replaced: replacing });
    const name = job.metadata!.name!;
    // The group's place is taken with the decision, before any await: no other worker can take it meanwhile.
    const ns = cronJob.metadata.namespace ?? "";
    if (group) this.groups.take(ns, group.view.name, name, this.clock.now().getTime());
    const release = () => group && this.groups.release(ns, group.view.name, name);
    if (admission.replace.length && !(await this.replaceActive(pass, admission.replace, ctx))) {
      release();
      return { result: "failed" };
    }

    const outcome = await this.jobs.createOrAdopt(cronJob, job, ctx);
    if (!outcome.ok) {
      release();
      if (outcome.event) pass.events.push(outcome.event);
      pass.problems = { ...pass.problems, ...outcome.problems };
      if (outcome.retry !== undefined) pass.retry = outcome.retry;
      const result = outcome.problems.createConflict ? "conflict" : "failed";
      return outcome.refused ? { result, refused: outcome.refused } : { result };
    }

    pass.jobs.set(name, outcome.job);
    if (classifyJob(outcome.job) === "active") pass.active.set(name, outcome.job);
    pass.created = true;
    // Adopted: the Jobs it replaced are those its creator wrote on it.
    if (!outcome.created) return { result: "adopted", job: outcome.job, replaced: runFactsOf(outcome.job).replaced };
    const made = r.created(name);
    pass.events.push(made.event);
    if (outcome.warnings) {
      pass.events.push({ reason: EventReason.JobWarning, message: `Job ${name}: ${outcome.warnings.join("; ")}` });
    }
    pass.counts.push(made.count);
    pass.fresh.push(name);
    if (due) pass.skews.push(Math.max(0, (this.clock.now().getTime() - due.getTime()) / 1000));
    // Debug, as kube-controller-manager logs its "Created Job" (V(4)): one line per run at info cost the operator a
    // tenth of its CPU per run at 5,000 every-minute CronJobs (a profile, bench/results/2026-11-27-issue61.analysis.md),
    // for a fact the record (status.recentRuns) keeps.
    ctx.log.debug(made.log, { job: name, trigger: r.trigger });
    return { result: "created", job: outcome.job, replaced: replacing };
  }

  /**
   * The CronJob's concurrency group as this request sees it (undefined: it names none). The CronJob waits since the
   * first run of it the group held, while it keeps waiting: a scheduled slot's time, or for a request without a slot
   * (run-now, a backfill slot: old times) when it first waited, so it queues behind the runs already waiting. A
   * scheduled slot may start until its starting deadline.
   */
  private groupOf(pass: Pass, r: TriggerRun, due: Date | undefined) {
    const { cronJob } = pass;
    const name = cronJob.spec.concurrencyGroup;
    if (!name) return undefined;
    const ns = cronJob.metadata.namespace ?? "";
    const now = this.clock.now().getTime();
    const mine = this.groups.waitersOf(ns, name, now).find((w) => w.member === cronJob.metadata.name);
    // Waiting since its slot, or since it first waited if that is earlier: a CronJob whose held slot a newer one
    // replaces (RunLatest) keeps its place in the queue, or a less frequent CronJob would always be older than it.
    const asked = r.row.movesLastScheduleTime && due ? due.getTime() : now;
    const since = Math.min(mine?.since ?? asked, asked);
    const deadline = cronJob.spec.startingDeadlineSeconds;
    const until =
      r.row.movesLastScheduleTime && due && typeof deadline === "number" ? due.getTime() + deadline * 1000 : undefined;
    const view = this.groups.view(ns, name, cronJob.metadata.name ?? "", since, now);
    return { view, key: runKey(r), since, until };
  }

  /**
   * Replace: deletes every running Job. As the built-in controller: a failed delete fails the reconcile, and the
   * work queue retries it with backoff; the run happens once the running Job is gone.
   */
  private async replaceActive(pass: Pass, running: readonly Readonly<Job>[], ctx: ReconcileContext): Promise<boolean> {
    for (const job of running) {
      // A run the start limit ends this pass is ended first, and its end booked, as if it had lived to fail: deleted
      // unended, its reason (the annotation the record is rebuilt from) would go with it.
      const i = pass.ends.findIndex((e) => e.name === job.metadata?.name);
      if (i >= 0) {
        const [end] = pass.ends.splice(i, 1);
        const failed = await endJobs(this.client, [end!], ctx);
        this.unreported(pass, failed);
        if (!failed.length) pass.status = recordEnded(pass.status, end!.update, this.clock.now());
      }
      const deleted = await this.jobs.delete(pass.cronJob, job, ctx, "replace");
      pass.events.push(deleted.event);
      if (deleted.failed) {
        pass.problems = { ...pass.problems, deleteFailed: deleted.failed };
        pass.retry = `replacing the active Job: ${deleted.failed}`;
        return false;
      }
      const uid = job.metadata?.uid;
      if (uid) pass.remember.replaced.add(uid);
      pass.active.delete(job.metadata?.name ?? "");
    }
    return true;
  }

  /** The Events of the ends that failed (the Job gone, a conflict): not reported; a later pass tries again. */
  private unreported(pass: Pass, failed: readonly EventDecision[]): void {
    for (const e of failed) {
      const i = pass.events.indexOf(e);
      if (i >= 0) pass.events.splice(i, 1);
    }
  }

  // --- 10: the commit --------------------------------------------------------------------------------

  /**
   * The one place that applies what a pass decided: memory, its Events, counts and metrics, history cleanup, and
   * the status; and the only one that consults the burst window and the books rules. Creation first: while a burst
   * of Job creates is on (this pass's own create starts or extends one), cleanup and the status write wait for a
   * pass after it (requeueWhenQuiet), and a pass that created a Job leaves its status write while other CronJobs
   * wait in the queue; the books never fall more than one run behind (books.ts), whatever the load. A later pass
   * rebuilds both from the children, so nothing is lost if the process dies meanwhile.
   */
  private async commit(o: Outcome, now: Date, ctx: ReconcileContext): Promise<Result> {
    const { pass } = o;
    const { cronJob } = pass;
    const { namespace = "", name = "" } = cronJob.metadata;
    // The group's places: this pass's run waits for one, or none does (before any await, as the places are taken).
    this.groups.decided(namespace, cronJob.spec.concurrencyGroup, name, pass.groupWait);
    const remembered = this.memory.recall(keyOf(cronJob));
    remembered.sawCompleted = pass.remember.sawCompleted.size ? pass.remember.sawCompleted : undefined;
    remembered.replaced = pass.remember.replaced.size ? pass.remember.replaced : undefined;
    if (this.statusDelayMs > 0)
      remembered.fresh = freshRuns(remembered.fresh, pass, this.clock.now(), this.statusDelayMs);
    // The runs whose Pods never started, ended (step 4's start limit): an Event only for an end the update wrote.
    this.unreported(pass, await endJobs(this.client, pass.ends.splice(0), ctx));
    // What this pass decided, before the Events and counts below are handed on.
    const decided = pass.created || pass.events.length > 0 || pass.counts.length > 0;
    const count = (c: RunOutcome) =>
      this.metrics.countRun(cronJob.metadata.namespace ?? "", cronJob.metadata.name ?? "", c, cronJob.metadata.uid);
    for (const e of pass.events) {
      if (!this.firstReport(remembered, e)) continue;
      this.event(cronJob, e);
      // A held-back run's count goes with its state Event: once per state.
      if ("once" in e && e.count) count(e.count);
    }
    for (const c of pass.counts) count(c);
    for (const seconds of pass.skews) jobCreationSkew.observe(seconds);
    pass.events.length = 0;
    pass.counts.length = 0;
    pass.skews.length = 0;

    const { successful, failed } = o.history;
    const burst = ctx.burst?.active() ?? false;
    const refs = [...pass.active.values()].map(jobRef).sort((a, b) => (a.name ?? "").localeCompare(b.name ?? ""));
    const status = { ...pass.status, active: refs, activeCount: refs.length };
    const children = this.foldJobs(pass);
    const nowMs = this.clock.now().getTime();
    // With the fold: since when status has lacked a change the Jobs show, and how much before the bound it is due.
    const since = this.budget ? behindSince(cronJob.status, status, children, nowMs) : nowMs;
    const spread = this.budget
      ? boundSpreadMs(cronJob.metadata.uid ?? `${namespace}/${name}`, this.budget.maxDelayMs)
      : 0;
    // An excluded slot this pass decided is written now, never left to a later pass: that pass would judge the slot
    // by the calendar as it is then. With the fold, the books are late once the bound is reached (statusfold.ts);
    // without it, once they are a run behind (books.ts).
    const booksLate =
      o.jobsGone === true ||
      pass.status.lastExcludedTime !== cronJob.status?.lastExcludedTime ||
      (this.budget
        ? nowMs - since >= this.budget.maxDelayMs - spread
        : statusBehind(cronJob.status, o.observed, [...successful, ...failed], now));
    const historyLate = historyBehind(
      { successful: successful.length, failed: failed.length },
      { successful: cronJob.spec.successfulJobsHistoryLimit, failed: cronJob.spec.failedJobsHistoryLimit },
    );
    // History cleanup does not wait for a create that keeps failing: it runs before the retry is thrown.
    if (!burst || historyLate) await this.cleanupHistory(cronJob, o.history, pass.kept, ctx);

    const requeue: Result = o.requeueAfterMs !== undefined ? { requeueAfterMs: o.requeueAfterMs } : {};
    // A pass whose write failed reports it (Degraded, the record) whatever the burst: a failed create notes the burst
    // too, so a create that keeps failing would otherwise hold its own report back for as long as it fails.
    const writeFailed = pass.retry !== undefined || Object.keys(pass.problems).length > 0;
    const deferred = !booksLate && !writeFailed && (burst || (pass.created && (ctx.queueLength?.() ?? 0) > 0));
    // A failed write is retried with backoff, but never later than the next slot's wake-up: a create that keeps
    // failing (a quota, a webhook) must not make the next slot late once it succeeds.
    const retry = (message: string) =>
      o.requeueAfterMs !== undefined ? new RetryNoLaterThan(message, o.requeueAfterMs) : new Error(message);
    if (deferred) {
      if (pass.retry !== undefined) throw retry(pass.retry);
      return burst ? { ...requeue, requeueWhenQuiet: true } : requeue;
    }
    if (!decided && !writeFailed && announcesOnly(cronJob.status, status, o.conditions)) {
      // A new CronJob's first status that decides nothing (no run, no record entry, no problem) waits while other
      // CronJobs are queued: a cold start over thousands of new CronJobs decides all of them first, then writes
      // what they announce (docs/architecture.md, "Cold start"). Deferred once: the pass it comes back to writes.
      if (remembered.announceDeferred) remembered.announceDeferred = undefined;
      else if ((ctx.queueLength?.() ?? 0) > 0) {
        remembered.announceDeferred = true;
        return { ...requeue, requeueWhenIdle: true };
      }
    }
    const hold = writeFailed
      ? undefined
      : holdForRun(o, status, remembered.fresh, this.clock.now(), this.statusDelayMs);
    if (hold !== undefined) {
      // Woken by the Job's end, or when the delay is over: whichever comes first writes.
      return { requeueAfterMs: Math.min(requeue.requeueAfterMs ?? Infinity, hold + REQUEUE_SLACK_MS) };
    }
    const wanted = statusToWrite(cronJob, status, o.conditions, now, remembered);
    if (wanted && this.budget && !writeFailed) {
      // A change the Jobs tell waits while the budget has no room, up to the bound (statusfold.ts); news goes now.
      const fold = o.jobsGone
        ? ({ write: true, why: "news", news: StatusNews.jobLeaves } as const)
        : foldStatus(
            statusNews(cronJob.status, wanted, children),
            since,
            this.budget,
            nowMs,
            remembered.reservedAt,
            spread,
          );
      statusWrites.inc({ decision: fold.write ? fold.why : "folded" });
      remembered.reservedAt = fold.write ? undefined : fold.reservedAt;
      if (!fold.write) {
        remembered.folded = unbookedSlots(children);
        return { requeueAfterMs: Math.min(requeue.requeueAfterMs ?? Infinity, fold.waitMs + REQUEUE_SLACK_MS) };
      }
    }
    const written = wanted ? await writeStatus(this.client, cronJob, wanted, { remembered, ctx }) : true;
    if (written) [remembered.folded, remembered.reservedAt] = [undefined, undefined];
    if (pass.retry !== undefined) throw retry(pass.retry);
    // A conflict means the object changed under us: read it again soon (a Job created meanwhile is found by its
    // deterministic name, so the retry cannot duplicate it).
    return written ? requeue : { requeue: true };
  }

  /** What the fold reads of a pass's Jobs: each by its row (statusfold.ts FoldJobs). */
  private foldJobs(pass: Pass): FoldJobs {
    const { cronJob } = pass;
    return {
      jobs: [...pass.jobs.values()],
      unbooked: (job) => isUnbookedRun(this.triggers, cronJob, job),
      scheduled: (job) => triggerOfJob(this.triggers, job).movesLastScheduleTime,
    };
  }

  /** A state Event is reported once per state (memory); any other Event every time it is decided. */
  private firstReport(remembered: Remembered, e: EventDecision | StateEvent): boolean {
    if (!("once" in e)) return true;
    const reported = (remembered.reported ??= new Map());
    if (reported.get(e.once.topic) === e.once.key) return false;
    reported.set(e.once.topic, e.once.key);
    return true;
  }

  /** An Event; a routine one (its fact is in the record) only while the status-write budget has room. */
  private event(cronJob: StoredCronJob, e: EventDecision): void {
    if (this.budget && isRoutine(e) && !this.budget.hasRoom(this.clock.now().getTime())) return routineLeftOut();
    emitEvent(this.recorder, cronJob, e.reason, e.message, e.routine);
  }

  /** Deletes the oldest finished Jobs beyond each history limit (best effort: a later pass tries again). */
  private async cleanupHistory(
    cronJob: StoredCronJob,
    history: Outcome["history"],
    kept: ReadonlySet<string>,
    ctx: ReconcileContext,
  ) {
    for (const job of historyToDelete(this.triggers, cronJob, history, kept)) {
      this.event(cronJob, (await this.jobs.delete(cronJob, job, ctx, "history")).event);
    }
  }
}

// --- helpers ---------------------------------------------------------------------------------------

/** A filter of the Jobs in this state. */
function inState(how: "active" | "successful" | "failed") {
  return (j: Readonly<Job>) => classifyJob(j) === how;
}

/** A guard's Event describes the CronJob's state: once per reason and message. */
function guardEvent(e: EventDecision): StateEvent {
  return { ...e, once: { topic: "guard", key: `${e.reason}\u0000${e.message}` } };
}

/** A run as its Events name it: its slot, or its trigger and request. */
function runKey(r: TriggerRun): string {
  const s = r.subject();
  if (s.scheduledTime) return `run for ${rfc3339(s.scheduledTime)}`;
  return s.request !== undefined ? `${s.trigger} request "${s.request}"` : `${s.trigger} run`;
}
