// Steps 7–8, the schedule's decision: which slots are due, when the next one is, and which missed slots are
// reported (a deadline passed, or the missed-run policy does not run them). Pure: slot math comes from
// api/v1/schedule.
import {
  type CronJobWireStatus,
  EventReason,
  jitterOffsetSeconds,
  jitterSecondsOf,
  MAX_CATCH_UP_SLOTS,
  type MissedRunPolicy,
  RecordDecision,
  RecordReason,
  RecordTrigger,
  type SKIPPED_REASONS,
} from "../api/v1/index.ts";
import {
  countSlots,
  isSlot,
  newestSlots,
  type Schedule,
  scheduleWindow,
  TOO_MANY_MISSED,
} from "../api/v1/schedule/index.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import type { EventDecision } from "./events.ts";
import type { RunOutcome } from "./metrics.ts";
import type { TimedDecision } from "./record.ts";

/** What step 7 decides. */
interface ScheduleDecision {
  /** The slots to run now, oldest first (at most one unless missedRunPolicy is RunAll). */
  due: Date[];
  /** The next slot after now, or the newest one while its run's start (spec.jitter) has not come. */
  next: Date;
  /** When the next slot's run starts: the requeue time (the slot plus its jitter offset). */
  nextStart: Date;
  /** The newest slot, when startingDeadlineSeconds put it out of reach unstarted. */
  tooLate?: { slot: Date; deadline: number };
  /**
   * The newest slot the missed-run policy does not run, and why: Skip; RunAll beyond its newest 100 (`cap`); RunAll
   * with Replace, which runs only the newest (`replace`). `notRun()`: how many it does not run, counted exactly
   * (up to SLOT_COUNT_LIMIT) only when reported.
   */
  notRun?: { slot: Date; why: "skip" | "cap" | "replace"; notRun?: () => { count: number; exact: boolean } };
  /** More slots were missed than TOO_MANY_MISSED: reported, and only the newest run. */
  tooManyMissed?: EventDecision;
}

/** What step 7 reads: the schedule, the stored times it counts from, the policies, and the time. */
interface ScheduleInput {
  schedule: Schedule;
  lastScheduleTime: string | undefined;
  /**
   * The newest slot the exclusions skipped (status.lastExcludedTime): decided, like a run, so no slot at or before it
   * is due or missed later, whatever a calendar change says of it now.
   */
  lastExcludedTime?: string | undefined;
  creationTimestamp: string | undefined;
  startingDeadlineSeconds: number | undefined;
  missedRunPolicy?: string | undefined;
  concurrencyPolicy?: string | undefined;
  /**
   * The stored status.nextScheduleTime (Skip runs only the announced slot). A CronJob no pass has seen yet
   * (`neverReconciled`) is owed the first slot after its creation.
   */
  announced?: string | undefined;
  neverReconciled?: boolean;
  /**
   * What `@every` counts from; lastScheduleTime ?? creationTimestamp when unset. A CronJob with several schedules
   * passes its creation time, so one member's run does not re-phase an `@every` member (api/v1/schedules.ts CronJobSchedules.everyAnchor).
   */
  everyAnchor?: Date;
  /** spec.jitter: a slot's offset in ms (its run starts then) and the jitter's length; none: every run at its slot. */
  offsetMs?: (slot: Date) => number;
  jitterMs?: number;
  now: Date;
  clockNow: Date;
}

/** What every part of step 7 reads, worked out once from its input. */
interface ScheduleFrame {
  readonly input: ScheduleInput;
  readonly policy: MissedRunPolicy;
  /** What `@every` counts from. */
  readonly anchor: Date;
  /** The newest slot decided already: the last run (else the creation), or the newest excluded slot when later. */
  readonly base: Date;
  /** The window's end: now, or just before the newest slot while its run's start (spec.jitter) has not come. */
  readonly now: Date;
  /** The window's start (exclusive): base, or just before the deadline's cut-off when that is later. */
  readonly earliest: Date;
  /** The first instant a slot's run may start and still run; undefined without startingDeadlineSeconds. */
  readonly cutoff: number | undefined;
}

/**
 * Step 7: which slots run now, and when the next one is.
 *
 * RunLatest (the default, the built-in's rule): the due slot is the newest one after the last run (else
 * creation) that is not later than startingDeadlineSeconds: a slot exactly that late still starts, as in the
 * built-in controller (`scheduledTime + deadline` before now is too late). Only slots that could still run count
 * toward "too many missed". `now` is truncated to the second, `clockNow` is not (a slot half a second past its
 * deadline is too late).
 *
 * Skip: the same slot, only if it is the one the stored status announced as nextScheduleTime (reached late
 * under load, it still runs; a slot that passed while the operator was down, the CronJob suspended or stopped, or
 * a Forbid run active was never announced).
 *
 * RunAll: every slot in that window, oldest first, at most the newest MAX_CATCH_UP_SLOTS; with Replace only
 * the newest (each would replace the one before).
 */
export function scheduleDecision(o: ScheduleInput): ScheduleDecision {
  const f = frameOf(o);
  const w = windowOf(f);
  const nextStart = isSlot(w.next) ? new Date(runStart(o, w.next)) : w.next;
  const decision: ScheduleDecision = { due: [], next: w.next, nextStart };
  if (w.missedCount > TOO_MANY_MISSED && f.policy === "RunLatest") {
    // The built-in controller and the tutorial stop scheduling here; we report and run the newest.
    decision.tooManyMissed = {
      reason: EventReason.TooManyMissedTimes,
      message: `too many missed start times: more than ${TOO_MANY_MISSED} since ${rfc3339(f.earliest)}; starting only the most recent one`,
    };
  }
  if (w.missed) Object.assign(decision, missedSlotDecision(f, w.missed));
  if (f.cutoff !== undefined) Object.assign(decision, lateSlotDecision(f, f.cutoff, w.missed));
  return decision;
}

function frameOf(o: ScheduleInput): ScheduleFrame {
  const policy: MissedRunPolicy =
    o.missedRunPolicy === "Skip" || o.missedRunPolicy === "RunAll" ? o.missedRunPolicy : "RunLatest";
  const ran = new Date(o.lastScheduleTime || o.creationTimestamp || o.now);
  const anchor = o.everyAnchor ?? ran;
  const excluded = o.lastExcludedTime ? Date.parse(o.lastExcludedTime) : NaN;
  const base = excluded > ran.getTime() ? new Date(excluded) : ran;
  const now = windowEnd(o, base, anchor);
  // The first instant a slot's run may start and still run: startingDeadlineSeconds counts from the run's start.
  const deadline = o.startingDeadlineSeconds;
  const cutoff = deadline === undefined ? undefined : o.clockNow.getTime() - deadline * 1000;
  return { input: o, policy, anchor, base, now, earliest: windowStart(cutoff, o.jitterMs ?? 0, base), cutoff };
}

// With spec.jitter a slot is due at its run's start: the newest slot, while its start has not come, is the next
// one, and the window ends before it. Jitter is shorter than the gap between two slots, so no other can be.
function windowEnd(o: ScheduleInput, base: Date, anchor: Date): Date {
  const newestSlot = (o.jitterMs ?? 0) > 0 ? o.schedule.mostRecent(o.now, anchor) : undefined;
  return newestSlot && newestSlot > base && runStart(o, newestSlot) > o.now.getTime()
    ? new Date(newestSlot.getTime() - 1)
    : o.now;
}

// scheduleWindow's lower bound is exclusive; one millisecond before the cut-off keeps it inclusive (and a slot up to
// the jitter before it may start after it).
function windowStart(cutoff: number | undefined, jitterMs: number, base: Date): Date {
  const lowest = cutoff === undefined ? undefined : cutoff - jitterMs - 1;
  return lowest !== undefined && lowest > base.getTime() ? new Date(lowest) : base;
}

/** The slots in the window; a newest slot whose run would start past its deadline is not due (step 8 reports it). */
function windowOf(f: ScheduleFrame): ReturnType<typeof scheduleWindow> {
  const { schedule } = f.input;
  const found = scheduleWindow({ schedule, earliest: f.earliest, now: f.now, anchor: f.anchor });
  return found.missed && !inTime(f, found.missed) ? { ...found, missed: undefined } : found;
}

/** When a slot's run starts: the slot, plus its offset with spec.jitter. */
function runStart(o: Pick<ScheduleInput, "offsetMs">, slot: Date): number {
  return slot.getTime() + (o.offsetMs?.(slot) ?? 0);
}

/** Whether a slot's run starts before its deadline passes (always, without startingDeadlineSeconds). */
function inTime(f: ScheduleFrame, slot: Date): boolean {
  return f.cutoff === undefined || runStart(f.input, slot) >= f.cutoff;
}

/**
 * Whether the stored status announced the slot (Skip runs only that one): status.nextScheduleTime announces a run's
 * start, its slot's, or with jitter its slot plus its offset.
 */
function announces(f: ScheduleFrame, slot: Date): boolean {
  const announced = announcedSlot(f.input, f.input.schedule, f.base, f.anchor);
  return !!announced && (announced.getTime() === slot.getTime() || announced.getTime() === runStart(f.input, slot));
}

/** What the missed-run policy does with the newest slot in the window, `missed`: which slots are due, which not. */
function missedSlotDecision(f: ScheduleFrame, missed: Date): Partial<ScheduleDecision> {
  if (f.policy === "RunLatest") return { due: [missed] };
  if (f.policy === "Skip") return announces(f, missed) ? { due: [missed] } : { notRun: { slot: missed, why: "skip" } };
  return f.input.concurrencyPolicy === "Replace" ? replaceNewest(f, missed) : catchUp(f);
}

/** RunAll with Replace: only the newest slot runs (each would replace the one before); the one before is not run. */
function replaceNewest(f: ScheduleFrame, missed: Date): Partial<ScheduleDecision> {
  const { schedule } = f.input;
  const older = schedule.mostRecent(new Date(missed.getTime() - 1), f.anchor);
  if (!(older && older > f.earliest)) return { due: [missed] };
  const notRun = () => countSlots(schedule, f.earliest, older, f.anchor);
  return { due: [missed], notRun: { slot: older, why: "replace", notRun } };
}

/** RunAll: every slot in the window still in time, oldest first, at most the newest MAX_CATCH_UP_SLOTS. */
function catchUp(f: ScheduleFrame): Partial<ScheduleDecision> {
  const { schedule } = f.input;
  const slots = newestSlots(schedule, f.earliest, f.now, f.anchor, MAX_CATCH_UP_SLOTS + 1).filter((s) => inTime(f, s));
  if (slots.length <= MAX_CATCH_UP_SLOTS) return { due: slots.reverse() };
  const dropped = slots.pop()!;
  return {
    notRun: { slot: dropped, why: "cap", notRun: () => countSlots(schedule, f.earliest, dropped, f.anchor) },
    tooManyMissed: {
      reason: EventReason.TooManyMissedTimes,
      message: `too many missed start times: more than ${MAX_CATCH_UP_SLOTS} since ${rfc3339(f.earliest)}; running the newest ${MAX_CATCH_UP_SLOTS}, oldest first (missedRunPolicy RunAll)`,
    },
    due: slots.reverse(),
  };
}

/**
 * The newest slot before the cut-off that never ran: reported when nothing is due (RunLatest, Skip), and with RunAll
 * whatever runs (older slots it would have run expired).
 */
function lateSlotDecision(f: ScheduleFrame, cutoff: number, missed: Date | undefined): Partial<ScheduleDecision> {
  const { schedule, startingDeadlineSeconds: deadline } = f.input;
  const newest = newestLate(schedule, f.policy === "RunAll" ? new Date(cutoff - 1) : f.now, f.anchor, (slot) =>
    inTime(f, slot),
  );
  if (!((f.policy === "RunAll" || !missed) && newest && newest > f.base && !inTime(f, newest))) return {};
  // With Skip, a slot no status announced (it passed while the operator was down, the CronJob suspended,
  // stopped or blocked by Forbid) is one the policy does not run, whatever its deadline: the policy's.
  if (f.policy === "Skip" && !announces(f, newest)) return { notRun: { slot: newest, why: "skip" } };
  return { tooLate: { slot: newest, deadline: deadline! } };
}

/**
 * The newest slot at or before `notAfter` whose run would start past the deadline: that slot, or with jitter the one
 * before it (a slot just before the cut-off may start after it; the one before cannot).
 */
function newestLate(
  schedule: Schedule,
  notAfter: Date,
  anchor: Date,
  inTime: (slot: Date) => boolean,
): Date | undefined {
  const newest = schedule.mostRecent(notAfter, anchor);
  return newest && inTime(newest) ? schedule.mostRecent(new Date(newest.getTime() - 1), anchor) : newest;
}

/** The slot Skip runs: the stored status.nextScheduleTime, or for a CronJob no pass has seen yet its first slot. */
function announcedSlot(
  o: { announced?: string | undefined; neverReconciled?: boolean; lastScheduleTime: string | undefined },
  schedule: Schedule,
  base: Date,
  anchor: Date,
): Date | undefined {
  if (o.announced) return new Date(o.announced);
  return o.neverReconciled && !o.lastScheduleTime ? schedule.next(base, anchor) : undefined;
}

/** Step 8's decision: the slot to write as status.lastMissedTime, with its Event; none if reported already. */
interface MissedDeadlineDecision {
  lastMissedTime: string;
  event: EventDecision;
}

/**
 * Step 8: a slot that passed its starting deadline unstarted is made visible, once per slot (status remembers
 * it, so a restart does not report it again).
 */
export function missedDeadline(
  lastMissedTime: string | undefined,
  tooLate: { slot: Date; deadline: number },
): MissedDeadlineDecision | undefined {
  const slot = rfc3339(tooLate.slot);
  // Reported once: a slot at or before the one status holds was reported already, by this rule or as not run by the
  // missed-run policy (a slot the policy chose not to run is the policy's, also once it is past its deadline).
  if (lastMissedTime && Date.parse(lastMissedTime) >= tooLate.slot.getTime()) return undefined;
  const passed = rfc3339(new Date(tooLate.slot.getTime() + tooLate.deadline * 1000));
  return {
    lastMissedTime: slot,
    event: {
      reason: EventReason.MissSchedule,
      message: `Missed scheduled time to start a job: ${slot} (startingDeadlineSeconds ${tooLate.deadline} passed at ${passed})`,
    },
  };
}

/**
 * Step 8 for a slot the missed-run policy does not run: reported once (status.lastMissedTime), like a missed
 * deadline.
 */
export function missedByPolicy(
  lastMissedTime: string | undefined,
  notRun: NonNullable<ScheduleDecision["notRun"]>,
): MissedDeadlineDecision | undefined {
  const slot = rfc3339(notRun.slot);
  if (lastMissedTime && new Date(lastMissedTime).getTime() >= notRun.slot.getTime()) return undefined;
  const counted = notRun.notRun?.();
  const older = counted ? `${counted.exact ? "" : "more than "}${counted.count} older missed times are not run` : "";
  const why =
    notRun.why === "skip"
      ? "missedRunPolicy Skip runs only the time status.nextScheduleTime announced (the operator was down, or the CronJob suspended, stopped or blocked by a Forbid run)"
      : notRun.why === "replace"
        ? `missedRunPolicy RunAll with concurrencyPolicy Replace runs only the newest missed time: ${older}`
        : `missedRunPolicy RunAll runs at most the newest ${MAX_CATCH_UP_SLOTS} missed times: ${older}`;
  return {
    lastMissedTime: slot,
    event: { reason: EventReason.MissSchedule, message: `Missed scheduled time to start a job: ${slot} (${why})` },
  };
}

/** The record's reason for a missed slot the missed-run policy does not run (notRun.why). */
const MISSED_POLICY_REASON = {
  skip: RecordReason.MissedRunPolicySkip,
  cap: RecordReason.RunAllLimit,
  replace: RecordReason.RunAllReplace,
} as const satisfies Record<string, (typeof SKIPPED_REASONS)[number]>;

/**
 * Step 8: the schedule's missed slots (a deadline passed, or the policy does not run them), each reported once:
 * status.lastMissedTime is the schedule's book of them; a decision for the record, an Event and a count each.
 */
export function missedSlots(
  before: Readonly<CronJobWireStatus>,
  window: Pick<ScheduleDecision, "tooLate" | "notRun">,
  now: Date,
): { status: CronJobWireStatus; decisions: TimedDecision[]; counts: RunOutcome[]; events: EventDecision[] } {
  const status: CronJobWireStatus = { ...before };
  const out = { decisions: [] as TimedDecision[], counts: [] as RunOutcome[], events: [] as EventDecision[] };
  const reported = before.lastMissedTime;
  const late = window.tooLate && missedDeadline(reported, window.tooLate);
  const notRun = window.notRun && missedByPolicy(reported, window.notRun);
  for (const [missed, outcome, slot, reason] of [
    [late, "missed_deadline", window.tooLate?.slot, RecordReason.StartingDeadlineExceeded],
    [notRun, "missed_policy", window.notRun?.slot, MISSED_POLICY_REASON[window.notRun?.why ?? "skip"]],
  ] as const) {
    if (!missed) continue;
    out.counts.push(outcome);
    out.events.push(missed.event);
    const decision = outcome === "missed_deadline" ? RecordDecision.Missed : RecordDecision.Skipped;
    const message = missed.event.message;
    out.decisions.push({
      decision: { trigger: RecordTrigger.Schedule, scheduledTime: slot, decision, reason, message },
      at: now,
    });
    const t = status.lastMissedTime;
    if (!t || Date.parse(missed.lastMissedTime) > Date.parse(t)) status.lastMissedTime = missed.lastMissedTime;
  }
  return { status, ...out };
}

/** Step 7's decision for a CronJob: which slots of `schedule` are due now, and when the next one is. */
export function dueWindow(
  cronJob: {
    metadata: {
      creationTimestamp?: string | undefined;
      name?: string | undefined;
      namespace?: string | undefined;
    };
    spec: {
      jitter?: string | undefined;
      startingDeadlineSeconds?: number | undefined;
      missedRunPolicy?: string | undefined;
      concurrencyPolicy?: string | undefined;
    };
    status?:
      | {
          nextScheduleTime?: string | undefined;
          observedGeneration?: number | undefined;
          conditions?: unknown[] | undefined;
        }
      | undefined;
  },
  status: Readonly<CronJobWireStatus>,
  schedule: Schedule,
  anchor: Date | undefined,
  clockNow: Date,
): ScheduleDecision {
  return scheduleDecision({
    schedule,
    lastScheduleTime: status.lastScheduleTime,
    lastExcludedTime: status.lastExcludedTime,
    creationTimestamp: cronJob.metadata.creationTimestamp,
    startingDeadlineSeconds: cronJob.spec.startingDeadlineSeconds,
    missedRunPolicy: cronJob.spec.missedRunPolicy,
    concurrencyPolicy: cronJob.spec.concurrencyPolicy,
    announced: cronJob.status?.nextScheduleTime,
    neverReconciled: cronJob.status?.observedGeneration === undefined && !cronJob.status?.conditions?.length,
    everyAnchor: anchor,
    ...jitterOf(cronJob),
    now: new Date(Math.floor(clockNow.getTime() / 1000) * 1000),
    clockNow,
  });
}

/** spec.jitter as scheduleDecision reads it: each slot's offset (api/v1/jitter.ts), none without it. */
function jitterOf(cronJob: {
  metadata: { name?: string | undefined; namespace?: string | undefined };
  spec: { jitter?: string | undefined };
}): { offsetMs?: (slot: Date) => number; jitterMs?: number } {
  const seconds = jitterSecondsOf(cronJob.spec);
  if (seconds === 0) return {};
  const key = { namespace: cronJob.metadata.namespace ?? "", name: cronJob.metadata.name ?? "" };
  return { offsetMs: (slot) => jitterOffsetSeconds(key, slot, seconds) * 1000, jitterMs: seconds * 1000 };
}
