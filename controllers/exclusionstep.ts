// Step 7's exclusions (spec.exclusions and the ExclusionCalendars it names, read by calendars.ts): the schedule's
// slots a window held go into the record as Skipped (its books, lastExcludedTime, move with them), and while the
// exclusions cannot be read (a calendar missing or bad) the due slots are held, never run over a freeze nobody can
// read. Pure: what the step decided is returned, for the pass to take.
import {
  CalendarProblem,
  type CronJobSchedules,
  type CronJobWire,
  type CronJobWireStatus,
  EventReason,
  type ExclusionHit,
  RecordDecision,
  RecordReason,
  RecordTrigger,
} from "../api/v1/index.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import type { CronJobExclusions } from "./calendars.ts";
import type { StateEvent } from "./trigger.ts";
import type { Decision, TimedDecision } from "./record.ts";

/** How far back one pass looks for excluded slots to record (more are one entry anyway). */
const MAX_EXCLUDED_PER_PASS = 1000;

/** What the exclusions step decided. */
interface ExclusionStep {
  /** The slots that still run (none while the exclusions cannot be read). */
  due: readonly Date[];
  /** The next slot of the schedules as written (an excluded one wakes the CronJob too). */
  excludedNext?: Date;
  /** The status with the excluded slots' books (lastExcludedTime) moved. */
  status: CronJobWireStatus;
  /** The excluded or held slots, for the record. */
  decisions: TimedDecision[];
  events: StateEvent[];
}

/**
 * The exclusions' part of step 7, after the schedule's decision: `schedules` are the ones skipping excluded slots
 * when the exclusions are known (`exclusions.kind` "ok"), as written otherwise.
 */
export function exclusionStep(o: {
  cronJob: Readonly<CronJobWire>;
  status: CronJobWireStatus;
  exclusions: CronJobExclusions;
  schedules: CronJobSchedules | undefined;
  anchor: Date | undefined;
  due: readonly Date[];
  now: Date;
}): ExclusionStep {
  const { exclusions, schedules, anchor, now } = o;
  if (exclusions.kind === "ok" && schedules) {
    return {
      due: o.due,
      ...excludedSlots(o.cronJob, o.status, schedules, anchor, now),
      // Woken at an excluded slot too, not only at the next slot that runs: the slot is decided (recorded, its books
      // moved) when it comes, by the calendar as it is then, so a later change of the calendar cannot run it.
      excludedNext: schedules.written.next(now, anchor),
      events: [],
    };
  }
  if (exclusions.kind === "unknown") return holdForCalendar(o.status, o.due, exclusions, now);
  return { due: o.due, status: o.status, decisions: [], events: [] };
}

/**
 * The excluded slots for the record: the slots of the schedules as written that an exclusion window held, since
 * the stored status's last run or the newest excluded slot recorded, each a Skipped decision (no Event, no count: an
 * excluded slot is not a missed run; the record makes each window's run of them one entry); and their books.
 */
function excludedSlots(
  cronJob: Readonly<CronJobWire>,
  status: CronJobWireStatus,
  schedules: CronJobSchedules,
  anchor: Date | undefined,
  now: Date,
): { status: CronJobWireStatus; decisions: TimedDecision[] } {
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
  const decisions: TimedDecision[] = [];
  for (let i = 0; i < MAX_EXCLUDED_PER_PASS; i++) {
    const slot = raw.next(after, anchor);
    if (!(slot <= now)) break;
    const hit = schedules.excludedBy(slot, anchor);
    if (hit) decisions.push({ decision: excludedDecision(slot, hit), at: now });
    after = slot;
  }
  if (!decisions.length) return { status, decisions };
  // The books of the excluded slots: never moves backward (a later pass may start from an older stored status).
  const newest = decisions.at(-1)!.decision.scheduledTime!;
  const prev = Date.parse(status.lastExcludedTime ?? "");
  const books = Number.isNaN(prev) || newest.getTime() > prev ? { lastExcludedTime: rfc3339(newest) } : {};
  return { status: { ...status, ...books }, decisions };
}

/** A slot a window held: Skipped, in the window's words (the record counts a window's run of slots). */
function excludedDecision(slot: Date, { calendar, by, window }: ExclusionHit): Decision {
  return {
    trigger: RecordTrigger.Schedule,
    scheduledTime: slot,
    decision: RecordDecision.Skipped,
    reason: RecordReason.ExcludedByCalendar,
    message: `excluded by ${by}: ${window}`,
    exclusion: { ...(calendar ? { calendar } : {}), window },
  };
}

/**
 * The due slots while spec.exclusions cannot be read: none runs; each is a Held decision and one Warning Event per
 * slot, and Degraded says why. The schedule's books do not move, so the slot runs once the calendar can be read
 * (within its starting deadline), or is reported missed.
 */
function holdForCalendar(
  status: CronJobWireStatus,
  due: readonly Date[],
  exclusions: Extract<CronJobExclusions, { kind: "unknown" }>,
  now: Date,
): ExclusionStep {
  const events: StateEvent[] = [];
  const decisions: TimedDecision[] = [];
  for (const slot of due) {
    decisions.push({
      decision: {
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
      at: now,
    });
    events.push({
      reason: EventReason.CalendarNotFound,
      message: `Not starting job for ${rfc3339(slot)}: ${exclusions.problem}`,
      once: { topic: EventReason.CalendarNotFound, key: rfc3339(slot) },
    });
  }
  // Degraded says why (CalendarNotFound): the calendars' input's problem (calendars.ts).
  return { due: [], status, decisions, events };
}
