// Step 10 of the CronJob reconciler, the commit: the one place that applies what a pass decided (docs/architecture.md,
// "One commit") — the start limit's Job ends, the group's places, memory, the Events, run counts and creation skews,
// history cleanup and the one status write — and the only one that consults the burst window and the books rules
// (books.ts). Whether the status is written now, later or not at all is one decision over the pass's facts
// (statusdecision.ts), which the commit gathers, counts, and carries out: the requeue that brings a waiting write
// back, and the fold's memory (the runs a folded pass left unbooked, its reserved token); then the write
// (statuswriter.ts). Creation first: while a burst of Job creates is on, cleanup and the status write wait for a pass
// after it, and a pass that created a Job leaves its status write while other CronJobs wait in the queue; the books
// never fall more than one run (or, with the fold, one bound) behind. A later pass rebuilds both from the children,
// so nothing is lost if the process dies meanwhile.
import type { CronJobWireStatus } from "../api/v1/index.ts";
import type { Clock } from "../runtime/clock.ts";
import { type ReconcileContext, type Result, RetryNoLaterThan } from "../runtime/controller.ts";
import { routineLeftOut } from "../runtime/events/recorder.ts";
import type { Recorder } from "../runtime/events/types.ts";
import type { ObjectClient } from "../runtime/interfaces.ts";
import { historyBehind, historyToDelete, statusBehind } from "./books.ts";
import { emitEvent, type EventDecision, isRoutine } from "./events.ts";
import type { GroupPlaces } from "./groups.ts";
import type { ChildJobs } from "./jobs.ts";
import type { CronJobKey, Remembered } from "./memory.ts";
import { type CronJobRunMetrics, jobCreationSkew, type RunOutcome, statusWrites } from "./metrics.ts";
import { isUnbookedRun, jobRef } from "./observe.ts";
import { keyOf, type Outcome, type Pass, type StoredCronJob, unreported } from "./pass.ts";
import { REQUEUE_SLACK_MS } from "./requeue.ts";
import { endJobs } from "./starts.ts";
import { decideStatusWrite, type StatusWriteFacts } from "./statusdecision.ts";
import {
  behindSince,
  boundSpreadMs,
  type FoldJobs,
  statusNews,
  type StatusFoldOptions,
  StatusWriteBudget,
  unbookedSlots,
} from "./statusfold.ts";
import { announcesOnly, freshRuns, holdForRun } from "./statuswait.ts";
import { statusToWrite, writeStatus } from "./statuswriter.ts";
import { type StateEvent, type Trigger, triggerOfJob } from "./trigger.ts";

/**
 * How the commit writes status, as the reconciler is set up (cmd/run.ts's flags): the reconciler hands these to the
 * commit, which alone reads them.
 */
export interface StatusWriteSettings {
  /**
   * How long a run this process created may wait to be written to status (--status-write-delay; the reconciler's
   * default is 0: at once). A Job that ends within it is written once, its creation and its end together, instead
   * of twice.
   */
  statusDelayMs: number;
  /**
   * The fold of routine status writes (statusfold.ts): a budget of writes a second and the most a scheduled run's
   * start or end waits to be written (--status-write-qps, --status-write-max-delay). None: every change at once.
   */
  statusFold: StatusFoldOptions | undefined;
}

/** What the commit writes through and remembers in, shared with the rest of the reconciler. */
interface CommitDeps extends StatusWriteSettings {
  /** The start limit's Job ends and the status write. */
  client: ObjectClient;
  /** History cleanup's deletes. */
  jobs: ChildJobs;
  recorder: Recorder;
  clock: Clock;
  metrics: CronJobRunMetrics;
  triggers: readonly Trigger[];
  /** The reconciler's memory (memory.ts), of which the commit keeps each CronJob's facts. */
  memory: { recall(key: CronJobKey): Remembered };
  /** The inputs' readers (inputs.ts): the group's learns whether a run still waits for a place. */
  inputs: { readonly group: GroupPlaces };
}

export class Commit {
  private readonly client: ObjectClient;
  private readonly jobs: ChildJobs;
  private readonly recorder: Recorder;
  private readonly clock: Clock;
  private readonly metrics: CronJobRunMetrics;
  private readonly triggers: readonly Trigger[];
  private readonly memory: CommitDeps["memory"];
  private readonly groups: GroupPlaces;
  private readonly statusDelayMs: number;
  /** The status writes' room (statusfold.ts): one budget for the whole controller; none, no fold. */
  private readonly budget: StatusWriteBudget | undefined;

  constructor(d: CommitDeps) {
    this.client = d.client;
    this.jobs = d.jobs;
    this.recorder = d.recorder;
    this.clock = d.clock;
    this.metrics = d.metrics;
    this.triggers = d.triggers;
    this.memory = d.memory;
    this.groups = d.inputs.group;
    this.statusDelayMs = d.statusDelayMs;
    this.budget = d.statusFold ? new StatusWriteBudget(d.statusFold, d.clock.now().getTime()) : undefined;
  }

  /**
   * Applies what a pass decided, in order: memory, the start limit's ends, the Events and counts, history cleanup,
   * then the status write, now or later (the Result's requeue says when); a pass's retry is thrown after the write,
   * so the work queue backs off.
   */
  async apply(o: Outcome, now: Date, ctx: ReconcileContext): Promise<Result> {
    const { pass } = o;
    const remembered = this.remember(pass);
    // The runs whose Pods never started, ended (step 4's start limit): an Event only for an end the update wrote.
    unreported(pass, await endJobs(this.client, pass.ends.splice(0), ctx));
    // What this pass decided, before the Events and counts below are handed on.
    const decided = pass.created || pass.events.length > 0 || pass.counts.length > 0;
    this.report(pass, remembered);

    const burst = ctx.burst?.active() ?? false;
    const refs = [...pass.active.values()].map(jobRef).sort((a, b) => (a.name ?? "").localeCompare(b.name ?? ""));
    const status = { ...pass.status, active: refs, activeCount: refs.length };
    const children = foldJobs(this.triggers, pass);
    // The books and the fold are judged as the pass ends, before cleanup's deletes.
    const nowMs = this.clock.now().getTime();
    // History cleanup does not wait for a create that keeps failing: it runs before the retry is thrown.
    if (!burst || historyLate(o)) await this.cleanupHistory(pass.cronJob, o.history, pass.kept, remembered, ctx);

    const requeue: Result = o.requeueAfterMs !== undefined ? { requeueAfterMs: o.requeueAfterMs } : {};
    // The status to write, its conditions set (undefined: nothing to write): made once, when a row first asks.
    let wanted: CronJobWireStatus | undefined;
    const want = () => (wanted ??= statusToWrite(pass.cronJob, status, o.conditions, now, remembered));
    const decision = decideStatusWrite(
      this.writeFacts(o, { status, want }, children, { decided, burst, now, nowMs }, remembered, ctx),
    );
    statusWrites.inc({ decision: decision.reason });
    if (decision.reason === "announce") remembered.announceDeferred = true;
    else if (decision.write === "now") remembered.announceDeferred = undefined;
    if (decision.write === "later") {
      if (decision.reason === "burst") return { ...requeue, requeueWhenQuiet: true };
      if (decision.reason === "created") return requeue;
      if (decision.reason === "announce") return { ...requeue, requeueWhenIdle: true };
      if (decision.reason === "folded") {
        remembered.reservedAt = decision.reservedAt;
        remembered.folded = unbookedSlots(children);
      }
      // Woken by the Job's end, or when the wait is over: whichever comes first writes.
      return { requeueAfterMs: Math.min(requeue.requeueAfterMs ?? Infinity, decision.afterMs + REQUEUE_SLACK_MS) };
    }
    // A write the fold let through spent its token (a reserved one included), conflict or not.
    if (["news", "room", "bound"].includes(decision.reason)) remembered.reservedAt = undefined;
    const written =
      decision.write === "now" ? await writeStatus(this.client, pass.cronJob, want()!, { remembered, ctx }) : true;
    if (written) [remembered.folded, remembered.reservedAt] = [undefined, undefined];
    if (pass.retry !== undefined) throw retry(o, pass.retry);
    // A conflict means the object changed under us: read it again soon (a Job created meanwhile is found by its
    // deterministic name, so the retry cannot duplicate it).
    return written ? requeue : { requeue: true };
  }

  /**
   * The pass's facts the status write's decision reads (statusdecision.ts): the costly ones (the status to write, the
   * delay's hold, the books, the fold's news) as functions, read only by the row that needs them.
   */
  private writeFacts(
    o: Outcome,
    { status, want }: { status: CronJobWireStatus; want: () => CronJobWireStatus | undefined },
    children: FoldJobs,
    { decided, burst, now, nowMs }: { decided: boolean; burst: boolean; now: Date; nowMs: number },
    remembered: Remembered,
    ctx: ReconcileContext,
  ): StatusWriteFacts {
    const { pass } = o;
    const { cronJob } = pass;
    const { namespace = "", name = "", uid } = cronJob.metadata;
    return {
      nowMs,
      failed: pass.retry !== undefined || Object.keys(pass.problems).length > 0,
      jobsGone: o.jobsGone === true,
      excludedSlot: pass.status.lastExcludedTime !== cronJob.status?.lastExcludedTime,
      burst,
      created: pass.created,
      queued: queued(ctx),
      announcesOnly: !decided && announcesOnly(cronJob.status, status, o.conditions),
      announceWaited: remembered.announceDeferred === true,
      runHold: () => holdForRun(o, status, remembered.fresh, this.clock.now(), this.statusDelayMs),
      changed: () => want() !== undefined,
      runBehind: () => statusBehind(cronJob.status, o.observed, [...o.history.successful, ...o.history.failed], now),
      ...(this.budget && {
        fold: {
          budget: this.budget,
          since: behindSince(cronJob.status, status, children, nowMs),
          spread: boundSpreadMs(uid ?? `${namespace}/${name}`, this.budget.maxDelayMs),
          reservedAt: remembered.reservedAt,
          // Asked only of a status to write (the `unchanged` row comes first).
          news: () => statusNews(cronJob.status, want() ?? status, children),
        },
      }),
    };
  }

  /** The group's places and what memory keeps of the pass; returns the CronJob's memory, for the rest of the commit. */
  private remember(pass: Pass): Remembered {
    const { cronJob } = pass;
    const { namespace = "", name = "" } = cronJob.metadata;
    // The group's places: this pass's run waits for one, or none does (before any await, as the places are taken).
    this.groups.decided(namespace, cronJob.spec.concurrencyGroup, name, pass.groupWait);
    const remembered = this.memory.recall(keyOf(cronJob));
    remembered.sawCompleted = pass.remember.sawCompleted.size ? pass.remember.sawCompleted : undefined;
    remembered.replaced = pass.remember.replaced.size ? pass.remember.replaced : undefined;
    if (this.statusDelayMs > 0)
      remembered.fresh = freshRuns(remembered.fresh, pass, this.clock.now(), this.statusDelayMs);
    return remembered;
  }

  /** The pass's Events (a state Event once per state), its run counts and creation skews: handed on, then cleared. */
  private report(pass: Pass, remembered: Remembered): void {
    const { cronJob } = pass;
    const count = (c: RunOutcome) =>
      this.metrics.countRun(cronJob.metadata.namespace ?? "", cronJob.metadata.name ?? "", c, cronJob.metadata.uid);
    for (const e of pass.events) {
      if (!firstReport(remembered, e)) continue;
      this.event(cronJob, e);
      // A held-back run's count goes with its state Event: once per state.
      if ("once" in e && e.count) count(e.count);
    }
    for (const c of pass.counts) count(c);
    for (const seconds of pass.skews) jobCreationSkew.observe(seconds);
    pass.events.length = 0;
    pass.counts.length = 0;
    pass.skews.length = 0;
  }

  /** An Event; a routine one (its fact is in the record) only with a token of the status-write budget to spare. */
  private event(cronJob: StoredCronJob, e: EventDecision): void {
    if (this.budget && isRoutine(e) && !this.budget.takeSpare(this.clock.now().getTime())) return routineLeftOut();
    emitEvent(this.recorder, cronJob, e.reason, e.message, e.routine);
  }

  /** Deletes the oldest finished Jobs beyond each history limit (best effort: a later pass tries again). */
  private async cleanupHistory(
    cronJob: StoredCronJob,
    history: Outcome["history"],
    kept: ReadonlySet<string>,
    remembered: Remembered,
    ctx: ReconcileContext,
  ) {
    // A Job this process already deleted, which the cache still has: deleting it again would be answered 404.
    const gone = (remembered.gone ??= new Set());
    for (const job of historyToDelete(this.triggers, cronJob, history, kept)) {
      const uid = job.metadata?.uid;
      if (uid && gone.has(uid)) continue;
      const deleted = await this.jobs.delete(cronJob, job, ctx, "history");
      if (uid && !deleted.failed) gone.add(uid);
      this.event(cronJob, deleted.event);
    }
  }
}

/** What the fold reads of a pass's Jobs: each by its row (statusfold.ts FoldJobs). */
function foldJobs(triggers: readonly Trigger[], pass: Pass): FoldJobs {
  const { cronJob } = pass;
  return {
    jobs: [...pass.jobs.values()],
    unbooked: (job) => isUnbookedRun(triggers, cronJob, job),
    scheduled: (job) => triggerOfJob(triggers, job).movesLastScheduleTime,
  };
}

/** A state Event is reported once per state (memory); any other Event every time it is decided. */
function firstReport(remembered: Remembered, e: EventDecision | StateEvent): boolean {
  if (!("once" in e)) return true;
  const reported = (remembered.reported ??= new Map());
  if (reported.get(e.once.topic) === e.once.key) return false;
  reported.set(e.once.topic, e.once.key);
  return true;
}

/** Whether a finished-Jobs history limit is exceeded by more than one run (books.ts): cleanup waits for no burst. */
function historyLate(o: Outcome): boolean {
  const { successful, failed } = o.history;
  const { spec } = o.pass.cronJob;
  return historyBehind(
    { successful: successful.length, failed: failed.length },
    { successful: spec.successfulJobsHistoryLimit, failed: spec.failedJobsHistoryLimit },
  );
}

/** Other CronJobs' passes wait in the work queue. */
function queued(ctx: ReconcileContext): boolean {
  return (ctx.queueLength?.() ?? 0) > 0;
}

/**
 * A failed write is retried with backoff, but never later than the next slot's wake-up: a create that keeps failing
 * (a quota, a webhook) must not make the next slot late once it succeeds.
 */
function retry(o: Outcome, message: string): Error {
  return o.requeueAfterMs !== undefined ? new RetryNoLaterThan(message, o.requeueAfterMs) : new Error(message);
}
