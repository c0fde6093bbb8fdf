// The end of scheduling (spec.maxRuns, spec.endTime: api/v1/limits.ts decides when): a Stopped entry in the record,
// once per end, and its Event. Pure.
import {
  type CronJobWireStatus,
  endTimeEnd,
  EventReason,
  maxRunsEnd,
  RecordDecision,
  RecordTrigger,
  type ScheduleEnd,
  scheduleEndText,
} from "../api/v1/index.ts";
import type { EventDecision } from "./events.ts";
import type { TimedDecision } from "./record.ts";
import { isSlot } from "../api/v1/schedule/index.ts";
import { type Pass, take } from "./pass.ts";

/**
 * Whether this pass ended scheduling, once the triggers ran: its runs reached spec.maxRuns, or spec.endTime passed
 * with no slot left (`next`: the next slot, none when the window has none; `due`: slots still due).
 */
function scheduleEndAfterRuns(
  spec: { maxRuns?: number | undefined; endTime?: string | undefined },
  status: Readonly<CronJobWireStatus>,
  now: Date,
  next: Date | undefined,
  due: number,
): ScheduleEnd | undefined {
  return maxRunsEnd(spec, status) ?? endTimeEnd(spec, now, next, due);
}

/**
 * The instant an end belongs to, from stored state: the maxRuns-th run's slot (status.lastScheduleTime), or the end
 * time. The record holds one entry of the end at or after it, so a pass repeated after a crash adds none.
 */
function endsAfter(end: ScheduleEnd, status: Readonly<CronJobWireStatus>): number {
  if (end.reason === "EndTimeReached") return end.endTime.getTime();
  return status.lastScheduleTime ? Date.parse(status.lastScheduleTime) : 0;
}

/** The record's Stopped entry for an end it does not hold yet, with its Event; none when it holds one. */
function scheduleEndStep(
  status: Readonly<CronJobWireStatus>,
  end: ScheduleEnd | undefined,
  now: Date,
): { status: CronJobWireStatus; decisions: TimedDecision[]; events: EventDecision[] } | undefined {
  if (!end) return undefined;
  const since = endsAfter(end, status);
  const recorded = (status.recentRuns ?? []).some(
    (e) => e.decision === RecordDecision.Stopped && e.reason === end.reason && Date.parse(e.decidedAt) >= since,
  );
  if (recorded) return undefined;
  const message = scheduleEndText(end);
  const decision = { trigger: RecordTrigger.Schedule, decision: RecordDecision.Stopped, reason: end.reason, message };
  return {
    status: { ...status },
    decisions: [{ decision, at: now }],
    events: [{ reason: EventReason.ScheduleEnded, message: `Scheduling ${message}` }],
  };
}

/**
 * After step 9: whether scheduling ended this pass (the guards' end, or one the triggers' runs reached), with its
 * Stopped entry once; and when the next run starts (none once ended, or with no slot left): the slot plus its jitter.
 */
export function endStep(
  pass: Pass,
  guard: { stop: boolean; ended?: ScheduleEnd | undefined },
  window: { next: Date; nextStart: Date } | undefined,
  due: readonly Date[],
  now: Date,
): { end?: ScheduleEnd; nextStart?: Date } {
  const slot = isSlot(window?.next) ? window.next : undefined;
  const ranUpTo = Date.parse(pass.status.lastScheduleTime ?? "") || 0;
  const left = due.filter((d) => d.getTime() > ranUpTo).length;
  const end = guard.stop ? guard.ended : scheduleEndAfterRuns(pass.cronJob.spec, pass.status, now, slot, left);
  take(pass, scheduleEndStep(pass.status, end, now));
  if (end) return { end };
  return slot && window ? { nextStart: window.nextStart } : {};
}
