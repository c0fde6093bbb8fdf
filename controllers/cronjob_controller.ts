// The CronJob reconciler. reconcile() reads top-down like the kubebuilder book's numbered steps:
//    1 load → 2 children → 3 confirm active → 4 observe → 5 failure stop → 6 guards → 7 schedule → 8 missed slots →
//    9 triggers → 10 commit (memory, Events, counts, metrics, history cleanup, status write, requeue)
// Step 9 runs the triggers of the table (triggers.ts: the schedule's due slots, run-now, backfill), each request
// through one path (run(): admit, create or adopt); the trigger's own part is its row. Steps 1–9 decide; step 10
// is the only place with effects beyond the Jobs' creates and deletes: it writes status, memory, Events and
// metrics, and consults the burst window and the books rules. Semantics are the Kubernetes batch/v1 CronJob
// controller (v2) without its known failures; see docs/using-cronjobs.md "Behaviour compared with the built-in
// CronJob" and docs/architecture.md.
import {
  classifyJob,
  ConcurrencyGroupResource,
  CronJobResource as CronJobKind,
  CronJobSchema,
  type CronJobWire,
  CronJobWireSchema,
  type CronJobWireStatus,
  type CronJobSchedules,
  EventReason,
  ExclusionCalendarResource,
  type Job,
  MORE_SCHEDULES_ANNOTATION,
  readJob,
  RecordDecision,
  RecordReason,
  RecordTrigger,
  resumeRequestOf,
  runFactsOf,
  type SKIPPED_REASONS,
  withRunFacts,
  type ExclusionHit,
  CalendarProblem,
} from "../api/v1/index.ts";
import { type Clock, realClock } from "../runtime/clock.ts";
import {
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
  RetryNoLaterThan,
} from "../runtime/controller.ts";
import type { Recorder } from "../runtime/events/types.ts";
import type { CacheIndexer, CacheReader, ObjectClient } from "../runtime/interfaces.ts";
import { type KubeObject, Kinds } from "../runtime/kinds.ts";
import type { Manager } from "../runtime/manager.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import { deepFreeze } from "../runtime/objects.ts";
import { historyBehind, historyToDelete, statusBehind } from "./books.ts";
import { type ConditionInput, scheduledConditions, type WriteProblems } from "./conditions.ts";
import { missedByPolicy, missedDeadline, scheduleDecision } from "./due.ts";
import { emitEvent, type EventDecision } from "./events.ts";
import { failureStop } from "./failures.ts";
import { guards, type ParsedSchedules, parsedSchedules, statusAfterGuards } from "./guards.ts";
import { JOB_OWNER_INDEX, setupJobCache } from "./job.ts";
import { ChildJobs } from "./jobs.ts";
import { type CronJobKey, ReconcilerMemory, type Remembered } from "./memory.ts";
import { type CronJobRunMetrics, jobCreationSkew, noCronJobMetrics, type RunOutcome } from "./metrics.ts";
import { jobRef, mayReplace, observeChildren } from "./observe.ts";
import { admit } from "./runs.ts";
import { GroupBooks, setupGroupCache } from "./groups.ts";
import { CalendarBooks, type CronJobExclusions, setupCalendarCache } from "./calendars.ts";
import { endUnstarted } from "./starts.ts";
import { type GroupHold, recordDecision, recordExclusions, runDecision } from "./record.ts";
import { writeStatus } from "./statuswriter.ts";
import { type SourceInput, type StateEvent, type Trigger, TRIGGERS, type TriggerRun } from "./triggers.ts";

/**
 * What the reconciler reads from the cache, registered before it starts: the Jobs trimmed and indexed by owner
 * (job.ts), and the concurrency groups' indexes (groups.ts).
 */
export function setupCache(cache: CacheIndexer): void {
  setupJobCache(cache);
  setupGroupCache(cache);
  setupCalendarCache(cache);
}

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
 * adopted), and the effects for the commit to apply. Only run() and step 9 change it.
 */
interface Pass {
  readonly cronJob: StoredCronJob;
  status: CronJobWireStatus;
  /** Every Job of this CronJob known this pass, by name. */
  readonly jobs: Map<string, Readonly<Job>>;
  /** The ones that run (status.active is written from it). */
  readonly active: Map<string, Readonly<Job>>;
  readonly events: Array<EventDecision | StateEvent>;
  readonly counts: RunOutcome[];
  /** How late each Job this pass created for a due slot started, in seconds (the creation-skew histogram). */
  readonly skews: number[];
  /** What memory keeps of this pass (step 4's reports, Replace's deletes). */
  readonly remember: { sawCompleted: Set<string>; replaced: Set<string> };
  /** Reported in Degraded. */
  problems: WriteProblems;
  /** Thrown after the status write, so the work queue retries this CronJob with backoff. */
  retry?: string;
  /** This pass created (or adopted) a Job. */
  created: boolean;
  /** The Jobs this pass created (not adopted): their runs may wait statusDelayMs to be written. */
  readonly fresh: string[];
  /** A run its concurrency group holds: waiting since, and until when it may still start (ms). */
  groupWait?: { since: number; until?: number | undefined };
  /** Finished Jobs a trigger still needs (a failed run whose retry is owed): history cleanup passes them. */
  readonly kept: Set<string>;
  /** The earliest time a trigger's request that is not due yet is (a retry's delay). */
  wakeAt?: Date;
}

/** What run() did with a request, and the Job that now runs it (created or adopted). */
type RunResult =
  | { result: "created" | "adopted"; job: Readonly<Job>; replaced?: string[] }
  | {
      result: "held" | "failed" | "conflict";
      job?: undefined;
      /** Held behind this running Job (the concurrency policy, named). */
      blockedBy?: string;
      policy?: string | undefined;
      /** The API server refused the create. */
      refused?: { reason: string; message: string };
      /** Held by the concurrency group. */
      group?: GroupHold;
    };

/** What reconcile() decided, for the commit (step 10). */
interface Outcome {
  pass: Pass;
  /** The status as observed before any trigger ran (what the books rules compare the stored status with). */
  observed: CronJobWireStatus;
  /** The Jobs the cache listed that ended, by class (history cleanup's input). */
  history: { successful: Readonly<Job>[]; failed: Readonly<Job>[] };
  conditions: ConditionInput[];
  /** Runs whose end the stored status has not booked (step 4). */
  unbookedEnds: number;
  /** Reconcile again after this many milliseconds; none while not scheduling. */
  requeueAfterMs?: number;
}

interface CronJobReconcilerDeps {
  /** Live reads (a Job the cache may not have seen yet) and the writes: Jobs, and CronJob status. */
  client: ObjectClient;
  /** CronJobs by name and Jobs by JOB_OWNER_INDEX. */
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
  /** The concurrency groups' books (groups.ts); one over `cache` by default. */
  groups?: GroupBooks;
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
  /** The concurrency groups: what admission reads of a group, and the places this process took. */
  readonly groups: GroupBooks;
  /** The exclusion calendars, as the CronJobs name them (calendars.ts). */
  readonly calendars: CalendarBooks;
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
    this.groups = d.groups ?? new GroupBooks(d.cache);
    this.calendars = new CalendarBooks(d.cache);
  }

  /** Register the Job cache, the owner index and the controller (kubebuilder's SetupWithManager). */
  static setupWithManager(
    mgr: Manager,
    o: { clock?: Clock; maxConcurrentReconciles?: number; metrics?: CronJobRunMetrics; statusDelayMs?: number } = {},
  ): CronJobReconciler {
    setupCache(mgr.cache);
    const r = new CronJobReconciler({
      client: mgr.client,
      cache: mgr.cache,
      recorder: mgr.getEventRecorder(),
      ...(o.clock ? { clock: o.clock } : {}),
      ...(o.metrics ? { metrics: o.metrics } : {}),
      ...(o.statusDelayMs !== undefined ? { statusDelayMs: o.statusDelayMs } : {}),
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
    const remembered = this.memory.recall(keyOf(cronJob));
    const seen = observeChildren({
      triggers: this.triggers,
      cronJob,
      cached,
      live,
      reported: remembered.sawCompleted ?? new Set(),
      replaced: remembered.replaced ?? new Set(),
    });

    // A run whose Pods did not start within spec.startTimeoutSeconds is ended (starts.ts): it no longer holds Forbid
    // or its group's place once the Job controller fails it.
    const limit = cronJob.spec.startTimeoutSeconds;
    const starts = limit
      ? await endUnstarted(
          this.client,
          seen.jobs.filter((j) => classifyJob(j) === "active"),
          limit,
          (remembered.started ??= new Set()),
          clockNow.getTime(),
          ctx,
        )
      : { events: [] };
    seen.events.push(...starts.events);

    // 5. Stop after repeated failures (spec.stopAfterConsecutiveFailures), or resume.
    const stop = failureStop({
      stopAfter: cronJob.spec.stopAfterConsecutiveFailures,
      generation: cronJob.metadata.generation,
      status: seen.status,
      newlyEnded: seen.newlyEnded,
      resumeRequest: resumeRequestOf(cronJob),
      now,
      jobs: seen.jobs,
      spec: cronJob.spec,
    });

    // 6. Guards: deleting, bad time zone, bad schedule, suspended, stopped.
    const parsed = this.parseCached(cronJob);
    if (stop.event?.reason === EventReason.StoppedAfterFailures && stop.status.stopped) {
      const { time, failures } = stop.status.stopped;
      const stopped = {
        trigger: RecordTrigger.Schedule,
        decision: RecordDecision.Stopped,
        reason: RecordReason.StoppedAfterFailures,
      } as const;
      stop.status = recordDecision(stop.status, { ...stopped, message: stop.event.message }, new Date(time));
      ctx.log.info("stopped scheduling after failed runs in a row", { failures });
    }
    const guard = guards({ ...cronJob, status: stop.status }, parsed, stop.status.active?.length ?? 0);
    const pass = newPass(cronJob, statusAfterGuards(stop.status, guard), seen, [
      ...seen.events,
      ...(stop.event ? [stop.event] : []),
      ...(guard.stop && guard.event ? [guardEvent(guard.event)] : []),
    ]);
    const history = {
      successful: cached.filter((j) => classifyJob(j) === "successful"),
      failed: cached.filter((j) => classifyJob(j) === "failed"),
    };
    const outcome: Outcome = {
      pass,
      observed: stop.status,
      history,
      conditions: [],
      unbookedEnds: seen.newlyEnded.length,
    };
    const written = parsed.ok ? parsed.schedules : undefined;
    // 6b. Exclusions (spec.exclusions): the times the schedules skip. While they cannot be read (a calendar missing or
    // bad), the schedule's slots are held, never run over a freeze nobody can read.
    const exclusions = written && !guard.stop ? this.calendars.exclusionsOf(cronJob) : ({ kind: "none" } as const);
    const schedules = written && exclusions.kind === "ok" ? this.calendars.excluding(written, exclusions) : written;

    // What `@every` counts from (the schedules decide: api/v1/schedules.ts everyAnchor).
    const anchor = schedules?.everyAnchor({
      lastScheduleTime: pass.status.lastScheduleTime,
      creationTimestamp: cronJob.metadata.creationTimestamp,
    });
    let due: readonly Date[] = [];
    let next: Date | undefined;
    /** The next slot of the schedules as written (an excluded one when it comes before `next`). */
    let excludedNext: Date | undefined;
    if (!guard.stop) {
      // 7. Which slots are due, and when the next one is: the union of the CronJob's schedules.
      const window = scheduleDecision({
        schedule: schedules?.schedule ?? guard.schedule,
        lastScheduleTime: pass.status.lastScheduleTime,
        lastExcludedTime: pass.status.lastExcludedTime,
        creationTimestamp: cronJob.metadata.creationTimestamp,
        startingDeadlineSeconds: cronJob.spec.startingDeadlineSeconds,
        missedRunPolicy: cronJob.spec.missedRunPolicy,
        concurrencyPolicy: cronJob.spec.concurrencyPolicy,
        announced: cronJob.status?.nextScheduleTime,
        neverReconciled: cronJob.status?.observedGeneration === undefined && !cronJob.status?.conditions?.length,
        everyAnchor: anchor,
        now,
        clockNow,
      });
      if (window.tooManyMissed) {
        const key = rfc3339(window.due.at(-1) ?? window.next);
        pass.events.push({ ...window.tooManyMissed, once: { topic: EventReason.TooManyMissedTimes, key } });
      }

      // 8. A slot past its starting deadline unstarted, or one the missed-run policy does not run: reported once.
      this.reportMissed(pass, window, now);
      due = window.due;
      next = window.next;
      if (exclusions.kind === "ok" && schedules) {
        recordExcluded(pass, schedules, anchor, now);
        // Woken at an excluded slot too, not only at the next slot that runs: the slot is decided (recorded, its books
        // moved) when it comes, by the calendar as it is then, so a later change of the calendar cannot run it.
        excludedNext = schedules.written.next(now, anchor);
      }
      if (exclusions.kind === "unknown") due = holdForCalendar(pass, due, exclusions, now);
    }

    // 9. The triggers, in the table's order: the due slots (oldest first, not already run), a run-now request,
    // a backfill request. While scheduling is suspended or stopped only the explicit requests run (as `kubectl
    // create job --from` does for the built-in kind); nothing runs while the CronJob is being deleted or invalid.
    const runs = guard.stop
      ? guard.requestsRun
        ? this.triggers.filter((t) => t.runsWhileSuspended)
        : []
      : this.triggers;
    const input = { cronJob, schedules, written, due, anchor, now };
    const groupName = cronJob.spec.concurrencyGroup;
    if (groupName && !guard.stop && !this.groups.exists(cronJob.metadata.namespace ?? "", groupName)) {
      pass.problems = {
        ...pass.problems,
        groupMissing: `spec.concurrencyGroup names ${groupName}, which is not a ConcurrencyGroup of namespace ${cronJob.metadata.namespace ?? ""}: runs wait until it exists`,
      };
    }
    // What the rows will still need is kept from history cleanup, whether they run this pass or not.
    for (const trigger of this.triggers)
      for (const name of trigger.keeps?.(cronJob, [...pass.jobs.values()], pass.status) ?? []) pass.kept.add(name);
    let more = false;
    for (const trigger of runs) more = (await this.runTrigger(pass, trigger, input, ctx)) || more;
    const { namespace = "", name = "" } = cronJob.metadata;
    this.groups.decided(namespace, cronJob.spec.concurrencyGroup, name, pass.groupWait);

    if (next) {
      pass.status.nextScheduleTime = rfc3339(next);
      // Slots left over by RunAll's per-pass cap follow at once (the others' Jobs came first). Woken from the
      // untruncated time: waking up to a second late would add that to every Job's start.
      const wake = more ? clockNow : excludedNext && excludedNext < next ? excludedNext : next;
      outcome.requeueAfterMs = Math.max(wake.getTime() - clockNow.getTime(), 0) + REQUEUE_SLACK_MS;
    }
    if (pass.wakeAt) {
      const wake = Math.max(pass.wakeAt.getTime() - clockNow.getTime(), 0) + REQUEUE_SLACK_MS;
      outcome.requeueAfterMs = Math.min(outcome.requeueAfterMs ?? Infinity, wake);
    }
    if (starts.nextCheckAt !== undefined) {
      const check = Math.max(starts.nextCheckAt - clockNow.getTime(), 0) + REQUEUE_SLACK_MS;
      outcome.requeueAfterMs = Math.min(outcome.requeueAfterMs ?? Infinity, check);
    }
    // The conditions after every trigger ran: a failed create of any of them is Degraded.
    outcome.conditions = guard.stop
      ? guard.conditions
      : scheduledConditions(pass.active.size, pass.status.nextScheduleTime, pass.problems, [
          ...history.successful,
          ...history.failed,
        ]);

    // 10. Commit: memory, Events, counts, metrics, history cleanup, one status write, the requeue.
    return this.commit(outcome, now, ctx);
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

  /**
   * The parsed schedules, from memory's cache (per CronJob for an H schedule, shared otherwise), keyed by all they
   * are parsed from: spec.schedule, spec.timeZone and the other schedules' annotation.
   */
  private parseCached(cronJob: StoredCronJob): ParsedSchedules {
    const { schedule, timeZone: tz } = cronJob.spec;
    const key = keyOf(cronJob);
    const more = cronJob.metadata.annotations?.[MORE_SCHEDULES_ANNOTATION];
    return this.memory.parsedSchedule(key, schedule, tz, () => parsedSchedules(cronJob, key), more);
  }

  // --- 8 -------------------------------------------------------------------------------------------

  /** The schedule's missed slots, each reported once (status.lastMissedTime is the schedule's book of them). */
  private reportMissed(pass: Pass, window: ReturnType<typeof scheduleDecision>, now: Date): void {
    const before = pass.status.lastMissedTime;
    const late = window.tooLate && missedDeadline(before, window.tooLate);
    const notRun = window.notRun && missedByPolicy(before, window.notRun);
    for (const [missed, outcome, slot, reason] of [
      [late, "missed_deadline", window.tooLate?.slot, RecordReason.StartingDeadlineExceeded],
      [notRun, "missed_policy", window.notRun?.slot, MISSED_POLICY_REASON[window.notRun?.why ?? "skip"]],
    ] as const) {
      if (!missed) continue;
      pass.counts.push(outcome);
      pass.events.push(missed.event);
      const decision = outcome === "missed_deadline" ? RecordDecision.Missed : RecordDecision.Skipped;
      const message = missed.event.message;
      pass.status = recordDecision(
        pass.status,
        { trigger: RecordTrigger.Schedule, scheduledTime: slot, decision, reason, message },
        now,
      );
      const t = pass.status.lastMissedTime;
      if (!t || Date.parse(missed.lastMissedTime) > Date.parse(t)) pass.status.lastMissedTime = missed.lastMissedTime;
    }
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
      if (decided) pass.status = recordDecision(pass.status, decided.decision, decided.at);
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
    ctx.log.info(made.log, { job: name, trigger: r.trigger });
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
    const remembered = this.memory.recall(keyOf(cronJob));
    remembered.sawCompleted = pass.remember.sawCompleted.size ? pass.remember.sawCompleted : undefined;
    remembered.replaced = pass.remember.replaced.size ? pass.remember.replaced : undefined;
    if (this.statusDelayMs > 0)
      remembered.fresh = freshRuns(remembered.fresh, pass, this.clock.now(), this.statusDelayMs);
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
    // An excluded slot this pass decided is written now, never left to a later pass: that pass would judge the slot
    // by the calendar as it is then.
    const booksLate =
      statusBehind(cronJob.status, o.observed, [...successful, ...failed], now) ||
      pass.status.lastExcludedTime !== cronJob.status?.lastExcludedTime;
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
    const refs = [...pass.active.values()].map(jobRef).sort((a, b) => (a.name ?? "").localeCompare(b.name ?? ""));
    const status = { ...pass.status, active: refs, activeCount: refs.length };
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
    const written = await writeStatus(this.client, cronJob, status, o.conditions, { now, remembered, ctx });
    if (pass.retry !== undefined) throw retry(pass.retry);
    // A conflict means the object changed under us: read it again soon (a Job created meanwhile is found by its
    // deterministic name, so the retry cannot duplicate it).
    return written ? requeue : { requeue: true };
  }

  /** A state Event is reported once per state (memory); any other Event every time it is decided. */
  private firstReport(remembered: Remembered, e: EventDecision | StateEvent): boolean {
    if (!("once" in e)) return true;
    const reported = (remembered.reported ??= new Map());
    if (reported.get(e.once.topic) === e.once.key) return false;
    reported.set(e.once.topic, e.once.key);
    return true;
  }

  private event(cronJob: StoredCronJob, e: EventDecision): void {
    emitEvent(this.recorder, cronJob, e.reason, e.message);
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

/** How far back one pass looks for excluded slots to record (more are one entry anyway). */
const MAX_EXCLUDED_PER_PASS = 1000;

/**
 * Step 7's exclusions into the record: the slots of the schedules as written that an exclusion window held, since
 * the stored status's last run or the newest excluded slot recorded, each window's run of them one Skipped entry (no Event, no
 * count: an excluded slot is not a missed run).
 */
function recordExcluded(pass: Pass, schedules: CronJobSchedules, anchor: Date | undefined, now: Date): void {
  const { status, cronJob } = pass;
  const recorded = (status.recentRuns ?? [])
    .filter((e) => e.reason === RecordReason.ExcludedByCalendar && e.scheduledTime)
    .map((e) => Date.parse(e.scheduledTime!));
  // From the last run the stored status knows of, not the one the children just showed: a pass whose status write
  // waited (--status-write-delay, a burst) recorded excluded slots that a later pass, which already sees the next
  // slot's Job, must record again.
  const stored = cronJob.status?.lastScheduleTime ?? cronJob.metadata.creationTimestamp ?? rfc3339(now);
  const decided = Date.parse(cronJob.status?.lastExcludedTime ?? "");
  const base = Date.parse(stored);
  let after = new Date(Math.max(base, Number.isNaN(decided) ? base : decided, ...recorded));
  const raw = schedules.written;
  const excluded: ({ slot: Date } & ExclusionHit)[] = [];
  for (let i = 0; i < MAX_EXCLUDED_PER_PASS; i++) {
    const slot = raw.next(after, anchor);
    if (!(slot <= now)) break;
    const hit = schedules.excludedBy(slot, anchor);
    if (hit) excluded.push({ slot, ...hit });
    after = slot;
  }
  if (!excluded.length) return;
  pass.status = recordExclusions(pass.status, excluded, now);
  // The books of the excluded slots: never moves backward (a later pass may start from an older stored status).
  const newest = excluded.at(-1)!.slot;
  const prev = Date.parse(pass.status.lastExcludedTime ?? "");
  if (Number.isNaN(prev) || newest.getTime() > prev) pass.status.lastExcludedTime = rfc3339(newest);
}

/**
 * The due slots while spec.exclusions cannot be read: none runs; each is a Held entry and one Warning Event per slot,
 * and Degraded says why. The schedule's books do not move, so the slot runs once the calendar can be read (within
 * its starting deadline), or is reported missed.
 */
function holdForCalendar(
  pass: Pass,
  due: readonly Date[],
  exclusions: Extract<CronJobExclusions, { kind: "unknown" }>,
  now: Date,
): Date[] {
  pass.problems = { ...pass.problems, calendarMissing: exclusions.problem };
  for (const slot of due) {
    pass.status = recordDecision(
      pass.status,
      {
        trigger: RecordTrigger.Schedule,
        scheduledTime: slot,
        decision: RecordDecision.Held,
        reason: RecordReason.CalendarNotFound,
        message: `held: ${exclusions.problem}`,
        exclusion: {
          ...(exclusions.calendar ? { calendar: exclusions.calendar } : {}),
          problem: exclusions.missing ? CalendarProblem.NotFound : CalendarProblem.Invalid,
        },
      },
      now,
    );
    pass.events.push({
      reason: EventReason.CalendarNotFound,
      message: `Not starting job for ${rfc3339(slot)}: ${exclusions.problem}`,
      once: { topic: EventReason.CalendarNotFound, key: rfc3339(slot) },
    });
  }
  return [];
}

function newPass(
  cronJob: StoredCronJob,
  status: CronJobWireStatus,
  seen: { jobs: readonly Readonly<Job>[]; counts: readonly RunOutcome[]; reported: Set<string>; replaced: Set<string> },
  events: Array<EventDecision | StateEvent>,
): Pass {
  const byName = new Map(seen.jobs.map((j) => [j.metadata?.name ?? "", j]));
  const listed = new Set((status.active ?? []).map((r) => r.name));
  const active = new Map([...byName].filter(([name, j]) => listed.has(name) && classifyJob(j) === "active"));
  return {
    cronJob,
    status,
    jobs: byName,
    active,
    events,
    counts: [...seen.counts],
    skews: [],
    remember: { sawCompleted: seen.reported, replaced: seen.replaced },
    problems: {},
    created: false,
    fresh: [],
    kept: new Set(),
  };
}

/** A guard's Event describes the CronJob's state: once per reason and message. */
/** The Jobs this process created and status has not shown yet, by name: when each was created (ms). */
function freshRuns(
  before: ReadonlyMap<string, number> | undefined,
  pass: Readonly<Pass>,
  now: Date,
  delayMs: number,
): Map<string, number> | undefined {
  const out = new Map<string, number>();
  for (const [name, at] of before ?? []) if (pass.active.has(name) && now.getTime() - at < delayMs) out.set(name, at);
  for (const name of pass.fresh) out.set(name, now.getTime());
  return out.size ? out : undefined;
}

/**
 * How long the status write may wait for the runs this process just created (ms), or undefined to write now
 * (docs/architecture.md, "Status writes"). It waits only while the runs status does not show yet are all this
 * process's own, younger than the delay and running, and nothing else is news: no run ended that status has not
 * booked, every Job status lists as active still runs, the pass met no problem. A restart, or a Job someone else
 * created, is written at once.
 */
function holdForRun(
  o: Pick<Outcome, "pass" | "unbookedEnds">,
  next: Readonly<CronJobWireStatus>,
  fresh: ReadonlyMap<string, number> | undefined,
  now: Date,
  delayMs: number,
): number | undefined {
  if (delayMs <= 0 || !fresh?.size || o.unbookedEnds > 0 || Object.keys(o.pass.problems).length) return undefined;
  // An excluded slot decided this pass is written at once: until it is stored, a calendar change could still run it.
  if (next.lastExcludedTime !== o.pass.cronJob.status?.lastExcludedTime) return undefined;
  const shown = new Set((o.pass.cronJob.status?.active ?? []).map((r) => r.name));
  const running = new Set((next.active ?? []).map((r) => r.name));
  for (const name of shown) if (!running.has(name)) return undefined;
  let wait: number | undefined;
  for (const name of running) {
    if (shown.has(name)) continue;
    const at = fresh.get(name ?? "");
    const left = at === undefined ? 0 : at + delayMs - now.getTime();
    if (left <= 0) return undefined;
    wait = Math.max(wait ?? 0, left);
  }
  return wait;
}

/**
 * Whether writing `next` would only announce what a never-written status lacks (the next run, conditions saying all
 * is well): no record entry, no active Job, no condition reporting a problem.
 */
function announcesOnly(
  stored: Readonly<CronJobWireStatus> | undefined,
  next: Readonly<CronJobWireStatus>,
  conditions: readonly ConditionInput[],
): boolean {
  const neverWritten = stored?.observedGeneration === undefined && !stored?.conditions?.length;
  if (!neverWritten || next.recentRuns?.length || next.active?.length) return false;
  return conditions.every(
    (c) => !(c.type === "Degraded" && c.status === "True") && !(c.type === "Available" && c.status !== "True"),
  );
}

function guardEvent(e: EventDecision): StateEvent {
  return { ...e, once: { topic: "guard", key: `${e.reason}\u0000${e.message}` } };
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

/** The record's reason for a missed slot the missed-run policy does not run (due.ts notRun.why). */
const MISSED_POLICY_REASON = {
  skip: RecordReason.MissedRunPolicySkip,
  cap: RecordReason.RunAllLimit,
  replace: RecordReason.RunAllReplace,
} as const satisfies Record<string, (typeof SKIPPED_REASONS)[number]>;

/** A run as its Events name it: its slot, or its trigger and request. */
function runKey(r: TriggerRun): string {
  const s = r.subject();
  if (s.scheduledTime) return `run for ${rfc3339(s.scheduledTime)}`;
  return s.request !== undefined ? `${s.trigger} request "${s.request}"` : `${s.trigger} run`;
}

/**
 * A group's place frees when one of its Jobs ends or goes: only those events wake its waiting runs (a Job's other
 * updates, its Pods' progress, do not).
 */
const groupPlaceFreed = {
  create: () => false,
  update: (a: Readonly<KubeObject>, b: Readonly<KubeObject>) =>
    classifyJob(a as Readonly<Job>) !== classifyJob(b as Readonly<Job>),
  delete: () => true,
};

/** A CronJob's key in the reconciler's memory. */
function keyOf(cronJob: StoredCronJob): CronJobKey {
  const { namespace, name, uid } = cronJob.metadata;
  return { namespace: namespace ?? "", name: name ?? "", ...(uid ? { uid } : {}) };
}
