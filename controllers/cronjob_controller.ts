// The CronJob reconciler. reconcile() reads top-down like the kubebuilder book's numbered steps:
//    1 load → 2 children → 3 confirm active → 4 observe → 5 failure stop → 6 guards → 7 schedule → 8 missed slots →
//    9 triggers → 10 commit (memory and the group's places, Job ends, Events, counts, metrics, history cleanup,
//    status write, requeue)
// Step 6 reads what the CronJob names of other objects through the inputs' list (inputs.ts: its group, calendars,
// upstreams). Step 9 runs the triggers of the table (triggers.ts, a file per row: trigger-schedule.ts the due slots,
// trigger-runnow.ts, trigger-backfill.ts, trigger-retry.ts, trigger-after.ts with its join, trigger-join.ts), each
// request through one path (runpath.ts, behind RunPath: admit, create or adopt); the trigger's own part is its row.
// Steps 1–9 decide; step 10 (commit.ts) is the only place with effects beyond the Jobs' creates and deletes: it ends
// the Jobs whose Pods never started, writes status (now, later or not at all: statusdecision.ts), memory, Events and
// metrics. This file is the steps in order and what they read; what a step decides is in its module. Semantics are
// the Kubernetes batch/v1 CronJob controller (v2) without its known failures; see docs/using-cronjobs.md "Behaviour
// compared with the built-in CronJob" and docs/architecture.md.
import {
  classifyJob,
  type CronJobSchedules,
  CronJobResource as CronJobKind,
  EventReason,
  type Job,
} from "../api/v1/index.ts";
import { type Clock, realClock } from "../runtime/clock.ts";
import type { ReconcileContext, Reconciler, Request, Result } from "../runtime/controller.ts";
import type { Recorder } from "../runtime/events/types.ts";
import type { CacheIndexer, CacheReader, ObjectClient } from "../runtime/interfaces.ts";
import { Kinds } from "../runtime/kinds.ts";
import type { Manager } from "../runtime/manager.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import { deepFreeze } from "../runtime/objects.ts";
import { keptJobs } from "./books.ts";
import { Commit, type StatusWriteSettings } from "./commit.ts";
import { passConditions } from "./conditions.ts";
import { dueWindow, missedSlots } from "./due.ts";
import { exclusionStep } from "./exclusionstep.ts";
import { failureStep } from "./failures.ts";
import { cachedParse, guardEvents, type GuardDecision, guards, statusAfterGuards } from "./guards.ts";
import { endStep } from "./limits.ts";
import { cachedChildren, ChildJobs, setupJobCache } from "./jobs.ts";
import {
  forgetInputs,
  inputReaders,
  type InputReaders,
  type InputValues,
  inputWatches,
  readInputs,
  setupInputCaches,
} from "./inputs.ts";
import { goneJobs, ReconcilerMemory, type Remembered } from "./memory.ts";
import { type CronJobRunMetrics, noCronJobMetrics } from "./metrics.ts";
import { observeChildren } from "./observe.ts";
import { keyOf, type LoadedCronJob, loadedFrom, newPass, type Pass, type StoredCronJob, take } from "./pass.ts";
import { enterDecisions, runDecision } from "./record.ts";
import { requeueAfter } from "./requeue.ts";
import { JobRunPath, type RunPath } from "./runpath.ts";
import { readStarts, startLimit } from "./starts.ts";
import { type SourceInput, type Trigger, TRIGGERS } from "./triggers.ts";

/**
 * What the reconciler reads from the cache, registered before it starts: the Jobs trimmed and indexed by owner
 * (jobs.ts), and every input's indexes (inputs.ts: what a CronJob reads of other objects).
 */
export function setupCache(cache: CacheIndexer): void {
  setupJobCache(cache);
  setupInputCaches(cache);
}

/** What the reconciler reads and writes through, and how its commit writes status (commit.ts). */
interface CronJobReconcilerDeps extends Partial<StatusWriteSettings> {
  /** Live reads (a Job the cache may not have seen yet) and the writes: Jobs, and CronJob status. */
  client: ObjectClient;
  /** CronJobs by name, Jobs by their owner (job.ts), and the inputs' objects by their indexes (setupCache). */
  cache: CacheReader;
  recorder: Recorder;
  clock?: Clock;
  /** Per-CronJob run counters (cronjob_runs_total); none by default. */
  metrics?: CronJobRunMetrics;
  /** The triggers (triggers.ts TRIGGERS by default): a row each, run in this order in step 9. */
  triggers?: readonly Trigger[];
}

export class CronJobReconciler implements Reconciler {
  /** The Jobs' live reads and writes (jobs.ts): step 3's reads here; the run path and the commit write through it. */
  private readonly jobs: ChildJobs;
  private readonly cache: CacheReader;
  readonly clock: Clock;
  private readonly metrics: CronJobRunMetrics;
  private readonly triggers: readonly Trigger[];
  /**
   * What a CronJob reads of other objects (inputs.ts): a reader of each input over the cache. The group's keeps the
   * places this process took, which the run path's admission and the commit use.
   */
  readonly inputs: InputReaders;
  /** Everything remembered between passes (controllers/memory.ts): one object, one forget. */
  private readonly memory = new ReconcilerMemory<LoadedCronJob>();
  /** Step 4's start-limit reads (the Pods of a running Job whose limit passed). */
  private readonly client: ObjectClient;
  /** Step 9's one way from a request to a Job (runpath.ts). */
  private readonly runPath: RunPath;
  /** Step 10 (commit.ts): the pass's effects and the status write. */
  private readonly commit: Commit;

  constructor(d: CronJobReconcilerDeps) {
    this.client = d.client;
    this.jobs = new ChildJobs(d.client);
    this.cache = d.cache;
    this.clock = d.clock ?? realClock;
    this.metrics = d.metrics ?? noCronJobMetrics;
    this.triggers = d.triggers ?? TRIGGERS;
    this.inputs = inputReaders(d.cache);
    const { client, jobs, clock, triggers, inputs } = this;
    this.runPath = new JobRunPath({ client, jobs, inputs, triggers, clock });
    this.commit = new Commit({
      client,
      jobs,
      clock,
      triggers,
      inputs,
      recorder: d.recorder,
      metrics: this.metrics,
      memory: this.memory,
      statusDelayMs: d.statusDelayMs ?? 0,
      statusFold: d.statusFold,
    });
  }

  /**
   * Register what it reads from the cache (setupCache) and the controller with its watches (kubebuilder's
   * SetupWithManager).
   */
  static setupWithManager(
    mgr: Manager,
    o: Pick<CronJobReconcilerDeps, "clock" | "metrics" | "statusDelayMs" | "statusFold"> & {
      maxConcurrentReconciles?: number;
    } = {},
  ): CronJobReconciler {
    setupCache(mgr.cache);
    const { maxConcurrentReconciles = 1, ...deps } = o;
    const r = new CronJobReconciler({
      client: mgr.client,
      cache: mgr.cache,
      recorder: mgr.getEventRecorder(),
      ...deps,
    });
    const builder = mgr.newControllerManagedBy().named("cronjob").for(CronJobKind).owns(Kinds.Job);
    // What the CronJobs read of other objects changed (a group's place freed, a calendar or an upstream changed):
    // the CronJobs reading it decide again.
    for (const w of inputWatches(r.inputs, () => r.clock.now().getTime()))
      builder.watches(w.kind, w.map, w.predicates ? { predicates: w.predicates } : {});
    builder.withOptions({ maxConcurrentReconciles }).complete(r);
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
    const cached = cachedChildren(this.cache, cronJob);

    // 3. Active Jobs status lists that the cache has not seen: the API server decides (live reads), but not again
    // for one already found gone or deleted by this process (memory's `gone`, kept while the cache or status lists it).
    const key = keyOf(cronJob);
    const remembered = this.memory.recall(key);
    remembered.gone = goneJobs(remembered.gone, cached, cronJob.status?.active);
    const live = await this.jobs.confirmActive(cronJob, cached, ctx, (remembered.gone ??= new Set()));

    // 4. What the children say: status, the runs whose end status has not booked, their Events and counts; and a run
    // whose Pods never started, ended.
    const { seen, starts, jobsGone } = await this.observe(cronJob, cached, live, remembered, clockNow, ctx);

    // 5. Stop after repeated failures (spec.stopAfterConsecutiveFailures), or resume; a stop is a record entry.
    const stop = failureStep(cronJob, seen, now, this.triggers);
    const stopped = enterDecisions(stop.status, stop.decisions);
    if (stop.stoppedAfter !== undefined)
      ctx.log.info("stopped scheduling after failed runs in a row", { failures: stop.stoppedAfter });

    // 6. Guards: deleting, bad time zone, bad schedule, suspended, stopped. And what it reads of other objects (its
    // group, calendars, upstreams: inputs.ts), whose problems are Degraded's while it schedules.
    const parsed = cachedParse(this.memory, cronJob, key);
    const guard = guards({ ...cronJob, status: stopped }, parsed, stopped.active?.length ?? 0);
    const events = [...seen.events, ...(stop.event ? [stop.event] : []), ...guardEvents(guard)];
    const pass = newPass(cronJob, statusAfterGuards(stopped, guard), seen, events, starts.ends);
    const history = { successful: cached.filter(inState("successful")), failed: cached.filter(inState("failed")) };
    const written = parsed.ok ? parsed.schedules : undefined;
    const inputs = readInputs(this.inputs, cronJob);
    if (!guard.stop && inputs.problems.length) pass.problems = { ...pass.problems, inputs: inputs.problems };

    // 7. Which slots are due, and when the next one is: the union of the CronJob's schedules, skipping the times
    // spec.exclusions names. While the exclusions cannot be read (a calendar missing or bad), the due slots are held,
    // never run over a freeze nobody can read.
    const { exclusions, schedules, anchor, window } = schedule(pass, guard, written, inputs.values, clockNow);

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
    const input = { cronJob, schedules, written, due, anchor, now, clockNow, ...inputs.values };
    for (const n of keptJobs(this.triggers, cronJob, [...pass.jobs.values()], pass.status)) pass.kept.add(n);
    let more = false;
    for (const trigger of runs) more = (await runTrigger(this.runPath, pass, trigger, input, ctx)) || more;

    // Scheduling ended (maxRuns, endTime): the record says so once, no next run is announced (limits.ts).
    const { end, nextStart } = endStep(pass, guard, window, due, now);
    if (nextStart) pass.status.nextScheduleTime = rfc3339(nextStart);
    const wakes = { excludedNext: excluded?.excludedNext, wakeAt: pass.wakeAt, nextCheckAt: starts.nextCheckAt };
    const requeueAfterMs = requeueAfter({ next: nextStart, more, ...wakes, clockNow });
    // The conditions after every trigger ran: a failed create of any of them is Degraded.
    const conditions = passConditions(guard, end, pass, [...history.successful, ...history.failed]);

    // 10. Commit: memory, Events, counts, metrics, history cleanup, one status write, the requeue.
    const unbookedEnds = seen.newlyEnded.length;
    const outcome = { pass, observed: stopped, history, conditions, unbookedEnds, requeueAfterMs, jobsGone };
    return this.commit.apply(outcome, now, ctx);
  }

  // --- the steps' reads: 1 load, 4 observe ------------------------------------------------------------

  /** Step 1: the CronJob as cached, parsed once per cached object; gone, everything kept of it is forgotten. */
  private loadCronJob(req: Request, ctx: ReconcileContext): LoadedCronJob | undefined {
    const raw = this.cache.get(CronJobKind, req.namespace, req.name);
    if (!raw) {
      ctx.log.debug("CronJob not found; ignoring");
      this.memory.forget({ namespace: req.namespace ?? "", name: req.name });
      forgetInputs(this.inputs, req.namespace ?? "", req.name);
      this.metrics.forget(req.namespace ?? "", req.name);
      return undefined;
    }
    return this.memory.loaded(raw, () => deepFreeze(loadedFrom(req, raw)));
  }

  /** Step 4: what the children say, and the start limit's check of the running Jobs (starts.ts). */
  private async observe(
    cronJob: StoredCronJob,
    cached: readonly Readonly<Job>[],
    live: ReadonlyMap<string, Readonly<Job> | undefined>,
    remembered: Remembered,
    clockNow: Date,
    ctx: ReconcileContext,
  ) {
    const { sawCompleted: reported = new Set(), replaced = new Set(), folded } = remembered;
    const seen = observeChildren({ triggers: this.triggers, cronJob, cached, live, reported, replaced, folded });
    const jobsGone = seen.vanished !== undefined;
    if (jobsGone) {
      ctx.log.info("a Job the status had not booked yet is gone; its slot counts as run", {
        slot: seen.status.lastScheduleTime,
      });
    }
    // A run whose Pods did not start within spec.startTimeoutSeconds is ended (starts.ts): it no longer holds Forbid
    // or its group's place once the Job controller fails it. Its Pods and the Job are read here; the commit ends it.
    const [limit, now] = [cronJob.spec.startTimeoutSeconds, clockNow.getTime()];
    const active = seen.jobs.filter(inState("active"));
    const reads = limit ? await readStarts(this.client, active, limit, remembered, now, ctx) : undefined;
    const starts = reads ? startLimit(reads, now) : { ends: [], events: [] };
    seen.events.push(...starts.events);
    return { seen, starts, jobsGone };
  }
}

// --- helpers ---------------------------------------------------------------------------------------

/**
 * Step 7's schedules: the written ones skipping the times spec.exclusions names (none while a guard stops the
 * CronJob), what `@every` counts from, and the due window (none while stopped), with its TooManyMissedTimes Event.
 */
function schedule(
  pass: Pass,
  guard: GuardDecision,
  written: CronJobSchedules | undefined,
  inputs: Pick<InputValues, "exclusions">,
  clockNow: Date,
) {
  const { cronJob } = pass;
  const exclusions = written && !guard.stop ? inputs.exclusions.exclusions : ({ kind: "none" } as const);
  const schedules = written && exclusions.kind === "ok" ? inputs.exclusions.excluding(written) : written;
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
  return { exclusions, schedules, anchor, window };
}

/** A filter of the Jobs in this state. */
function inState(how: "active" | "successful" | "failed") {
  return (j: Readonly<Job>) => classifyJob(j) === how;
}

// --- 9: the triggers ------------------------------------------------------------------------------

/**
 * Step 9 for one trigger: its source's requests (triggers.ts), oldest first, each not already run, through
 * the run path; at most the plan's `max` start (true: requests are left, the pass requeues at once). The walk stops at
 * the first request that cannot run now (held, a failed write, or a conflict where the row says so), so no later
 * one overtakes it. Every handled request goes into the trigger's books (its row's `book`).
 */
async function runTrigger(
  runPath: RunPath,
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
    const done = await runPath.run(pass, r, ctx);
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
