// Exclusions (spec.exclusions): an exclusion window held the slot (excluded), from the record's Skipped entry, one
// standing for a run of slots the same window held, or from the windows as read now; or spec.exclusions cannot be
// read, a calendar missing or bad, so the operator holds every slot (calendar-not-found).
import {
  CALENDAR_KIND,
  CalendarProblem,
  calendarNamesOf,
  exclusionBy,
  type RecentRun,
  RecordReason,
} from "../../../../api/v1/index.ts";
import type { CalendarHold } from "../../../../api/v1/index.ts";
import type { Excluded } from "../../model/exclusions.ts";
import { iso } from "../../model/time.ts";
import { entryLine } from "./entry.ts";
import { fact, type Found, found, type SlotContext, type Verdict } from "./verdict.ts";

/** What the facts of a hold are read from: the CronJob, its calendars as read, and its exclusions. */
type HoldContext = Pick<SlotContext, "f" | "cronJob" | "namespace" | "exclusions">;

/** An ExcludedByCalendar entry, read from its fields: what held the slot, and from when its run of slots goes. */
function excludedEntry(e: RecentRun): (Excluded & { from: number; to: number }) | undefined {
  const x = e.exclusion;
  if (x?.window === undefined || !e.scheduledTime) return undefined;
  const to = Date.parse(e.scheduledTime);
  const from = x.firstSlot ? Date.parse(x.firstSlot) : to;
  return {
    by: exclusionBy(x.calendar),
    ...(x.calendar ? { calendar: x.calendar } : {}),
    window: x.window,
    from: Number.isNaN(from) ? to : from,
    to,
  };
}

/** The record's entry for an excluded slot: its own, or the one standing for the run of slots it belongs to. */
export function excludedEntryFor(c: SlotContext): RecentRun | undefined {
  const t = c.slot.getTime();
  return (c.cronJob.status?.recentRuns ?? []).find((e) => {
    if (e.reason !== RecordReason.ExcludedByCalendar) return false;
    const x = excludedEntry(e);
    return x ? x.from <= t && t <= x.to : e.scheduledTime !== undefined && Date.parse(e.scheduledTime) === t;
  });
}

/** Where a window lives: its calendar, or the CronJob's own windows. */
function sourceOf(hit: Pick<Excluded, "calendar">): { calendar?: string; where: string } {
  const calendar = hit.calendar;
  return calendar ? { calendar, where: `${CALENDAR_KIND} ${calendar}` } : { where: "spec.exclusions.windows" };
}

/**
 * excluded: the slot an exclusion window holds, by the record's entry (its own or its run's) and the windows read
 * now; `toCome`: a slot still to come.
 */
export function excludedVerdict(c: SlotContext, e: RecentRun | undefined, toCome = false): Verdict | undefined {
  const recorded = e ? excludedEntry(e) : undefined;
  const live = c.excludedBy(c.slot);
  // An entry without the fields (an earlier version's, or written by hand): its reason still says a window held the
  // slot; its message, for people, is quoted as it is.
  const hit = recorded ?? live ?? (e ? { by: "a window", window: e.message ?? "(the record names none)" } : undefined);
  if (!hit) return undefined;
  const { calendar, where } = sourceOf(hit);
  const evidence = e ? [entryLine(e)] : [];
  if (recorded && recorded.from < recorded.to)
    evidence.push(
      `the entry stands for the slots from ${iso(new Date(recorded.from))} to ${iso(new Date(recorded.to))} the same window held`,
    );
  if (live) {
    const at = sourceOf(live);
    evidence.push(`${at.where}: the window ${JSON.stringify(live.window)} holds ${c.slotText}, read in ${c.zone}`);
  } else if (recorded && !c.exclusions.hold && !c.exclusions.unreadable.length) {
    evidence.push(`${where} no longer holds it: the window was changed or removed since`);
  }
  return found(
    "excluded",
    {
      when: c.slotText,
      toCome,
      source: hit.by,
      window: hit.window,
      name: c.name,
      namespace: c.namespace,
      slot: iso(c.slot),
      calendar: calendar ?? "",
      byCalendar: calendar !== undefined,
      ownWindow: calendar === undefined,
    },
    evidence,
  );
}

/**
 * The calendar at fault, by the hold read now, else by the record's CalendarNotFound entry (its `exclusion`; its
 * message is quoted in the evidence, never read).
 */
function holdOf(c: HoldContext, e: RecentRun | undefined): CalendarHold & { calendar: string } {
  const live = c.exclusions.hold;
  if (live?.calendar) return { ...live, calendar: live.calendar };
  const x = e?.exclusion;
  if (x?.problem) return { calendar: x.calendar ?? "?", missing: x.problem === CalendarProblem.NotFound, problem: "" };
  // An earlier version's entry (its facts in its words only): the calendar when the CronJob names one, and "cannot be
  // read", true whether it was missing or invalid.
  const named = calendarNamesOf(c.cronJob.spec);
  return {
    calendar: named.length === 1 ? named[0]! : "?",
    missing: live?.missing ?? false,
    problem: live?.problem ?? "",
  };
}

/** What is known of the calendars now, and the condition that says the operator holds the slots. */
function holdEvidence(c: HoldContext, calendar: string): string[] {
  const out: string[] = [];
  const read = c.f.calendars?.find((x) => x.name === calendar);
  if (read?.state === "missing") out.push(`no ${CALENDAR_KIND} ${calendar} in namespace ${c.namespace}`);
  else if (read?.state === "found" && !c.exclusions.hold)
    out.push(`${CALENDAR_KIND} ${calendar} can be read now: the operator runs the held slot at its next pass`);
  const degraded = c.cronJob.status?.conditions?.find((x) => x.type === "Degraded" && x.status === "True");
  if (degraded?.reason === RecordReason.CalendarNotFound)
    out.push(`condition Degraded=True ${degraded.reason}: ${degraded.message ?? ""}`);
  return out;
}

/** The facts of a hold, as calendar-not-found takes them. */
function holdParams(c: HoldContext, hold: CalendarHold & { calendar: string }, pastDeadline: boolean) {
  const message = hold.missing ? undefined : (hold.detail ?? hold.problem);
  return {
    calendar: hold.calendar,
    namespace: c.namespace,
    calendarMissing: hold.missing,
    calendarInvalid: !hold.missing,
    pastDeadline,
    ...(message ? { message } : {}),
  };
}

/** A Held entry with reason CalendarNotFound: the slot waits until the calendar can be read. */
export function calendarHeldVerdict(c: SlotContext, e: RecentRun, evidence: string[]): Verdict {
  const hold = holdOf(c, e);
  return found("calendar-not-found", { when: c.slotText, ...holdParams(c, hold, false) }, [
    ...evidence,
    ...holdEvidence(c, hold.calendar),
  ]);
}

/**
 * A Missed entry of a CronJob whose calendar cannot be read (now, or by its Degraded condition): it was held until its
 * deadline passed. Undefined: no calendar is why.
 */
export function calendarMissedVerdict(c: SlotContext, evidence: string[]): Verdict | undefined {
  const degraded = c.cronJob.status?.conditions?.find(
    (x) => x.type === "Degraded" && x.status === "True" && x.reason === RecordReason.CalendarNotFound,
  );
  if (!c.exclusions.hold && !degraded) return undefined;
  const held = (c.cronJob.status?.recentRuns ?? []).find((x) => x.reason === RecordReason.CalendarNotFound);
  const hold = holdOf(c, held);
  return found("calendar-not-found", { when: c.slotText, ...holdParams(c, hold, true) }, [
    ...evidence,
    ...holdEvidence(c, hold.calendar),
  ]);
}

/** A calendar that cannot be read, besides a verdict on a slot it did not hold (yet): the next slots wait. */
export function calendarFinding(c: HoldContext): Found | undefined {
  const hold = c.exclusions.hold;
  if (!hold?.calendar) return undefined;
  const calendar = hold.calendar;
  return fact("calendar-not-found", holdParams(c, { ...hold, calendar }, false), [
    `spec.exclusions.calendars: ${JSON.stringify(c.cronJob.spec?.exclusions?.calendars ?? [])}`,
    ...holdEvidence(c, calendar),
  ]);
}
