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
export function scheduleDecision(o: {
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
}): ScheduleDecision {
  const { schedule, clockNow, startingDeadlineSeconds: deadline } = o;
  const jitter = o.jitterMs ?? 0;
  const startOf = (slot: Date) => slot.getTime() + (o.offsetMs?.(slot) ?? 0);
  const policy: MissedRunPolicy =
    o.missedRunPolicy === "Skip" || o.missedRunPolicy === "RunAll" ? o.missedRunPolicy : "RunLatest";
  const ran = new Date(o.lastScheduleTime || o.creationTimestamp || o.now);
  const anchor = o.everyAnchor ?? ran;
  const excluded = o.lastExcludedTime ? Date.parse(o.lastExcludedTime) : NaN;
  const base = excluded > ran.getTime() ? new Date(excluded) : ran;
  // With spec.jitter a slot is due at its run's start: the newest slot, while its start has not come, is the next
  // one, and the window ends before it. Jitter is shorter than the gap between two slots, so no other can be.
  const newestSlot = jitter > 0 ? schedule.mostRecent(o.now, anchor) : undefined;
  const now =
    newestSlot && newestSlot > base && startOf(newestSlot) > o.now.getTime()
      ? new Date(newestSlot.getTime() - 1)
      : o.now;
  // The first instant a slot's run may start and still run: startingDeadlineSeconds counts from the run's start.
  const cutoff = deadline === undefined ? undefined : clockNow.getTime() - deadline * 1000;
  const inTime = (slot: Date) => cutoff === undefined || startOf(slot) >= cutoff;
  // status.nextScheduleTime announces a run's start: its slot's, or with jitter its slot plus its offset.
  const announces = (announced: Date | undefined, slot: Date) =>
    !!announced && (announced.getTime() === slot.getTime() || announced.getTime() === startOf(slot));
  // scheduleWindow's lower bound is exclusive; one millisecond before the cut-off keeps it inclusive (and a slot up to
  // the jitter before it may start after it).
  const lowest = cutoff === undefined ? undefined : cutoff - jitter - 1;
  const earliest = lowest !== undefined && lowest > base.getTime() ? new Date(lowest) : base;
  const found = scheduleWindow({ schedule, earliest, now, anchor });
  // A newest slot whose run would start past its deadline is not due: step 8 reports it.
  const w = found.missed && !inTime(found.missed) ? { ...found, missed: undefined } : found;
  const nextStart = isSlot(w.next) ? new Date(startOf(w.next)) : w.next;
  const decision: ScheduleDecision = { due: [], next: w.next, nextStart };
  const tooMany = w.missedCount > TOO_MANY_MISSED;
  if (tooMany && policy === "RunLatest") {
    // The built-in controller and the tutorial stop scheduling here; we report and run the newest.
    decision.tooManyMissed = {
      reason: EventReason.TooManyMissedTimes,
      message: `too many missed start times: more than ${TOO_MANY_MISSED} since ${rfc3339(earliest)}; starting only the most recent one`,
    };
  }
  if (w.missed) {
    if (policy === "RunLatest") decision.due = [w.missed];
    else if (policy === "Skip") {
      if (announces(announcedSlot(o, schedule, base, anchor), w.missed)) decision.due = [w.missed];
      else decision.notRun = { slot: w.missed, why: "skip" };
    } else if (o.concurrencyPolicy === "Replace") {
      decision.due = [w.missed];
      const older = schedule.mostRecent(new Date(w.missed.getTime() - 1), anchor);
      if (older && older > earliest)
        decision.notRun = { slot: older, why: "replace", notRun: () => countSlots(schedule, earliest, older, anchor) };
    } else {
      const slots = newestSlots(schedule, earliest, now, anchor, MAX_CATCH_UP_SLOTS + 1).filter(inTime);
      if (slots.length > MAX_CATCH_UP_SLOTS) {
        const dropped = slots.pop()!;
        decision.notRun = { slot: dropped, why: "cap", notRun: () => countSlots(schedule, earliest, dropped, anchor) };
        decision.tooManyMissed = {
          reason: EventReason.TooManyMissedTimes,
          message: `too many missed start times: more than ${MAX_CATCH_UP_SLOTS} since ${rfc3339(earliest)}; running the newest ${MAX_CATCH_UP_SLOTS}, oldest first (missedRunPolicy RunAll)`,
        };
      }
      decision.due = slots.reverse();
    }
  }
  if (cutoff !== undefined) {
    // The newest slot before the cut-off that never ran: reported when nothing is due (RunLatest, Skip), and
    // with RunAll whatever runs (older slots it would have run expired).
    const newest = newestLate(schedule, policy === "RunAll" ? new Date(cutoff - 1) : now, anchor, inTime);
    if ((policy === "RunAll" || !w.missed) && newest && newest > base && !inTime(newest)) {
      // With Skip, a slot no status announced (it passed while the operator was down, the CronJob suspended,
      // stopped or blocked by Forbid) is one the policy does not run, whatever its deadline: the policy's.
      if (policy === "Skip" && !announces(announcedSlot(o, schedule, base, anchor), newest))
        decision.notRun = { slot: newest, why: "skip" };
      else decision.tooLate = { slot: newest, deadline: deadline! };
    }
  }
  return decision;
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
