// spec.exclusions as the plugin reads it: the ExclusionCalendars a CronJob names, from its namespace's list (`why`;
// read/calendars.ts GETs them for `next`), compiled by the API's rule (api/v1/exclusionsview.ts exclusionsOf, the
// operator's own), and which slots the exclusions skip.
import { type CalendarRead, calendarNamesOf, type CronJobSchedules } from "../../../api/v1/index.ts";
import type { ExclusionHit, Exclusions } from "../../../api/v1/schedule/index.ts";

/** The calendars a CronJob names, from its namespace's as listed (`why`); undefined `listed`: the list failed. */
export function calendarsFromList(
  spec: unknown,
  listed: ReadonlyMap<string, unknown> | undefined,
  why: string,
): CalendarRead[] {
  return calendarNamesOf(spec).map((name): CalendarRead => {
    if (!listed) return { name, state: "unreadable", why };
    return listed.has(name) ? { name, state: "found", windows: listed.get(name) ?? [] } : { name, state: "missing" };
  });
}

/** What excludes a slot of the schedules as written: by which source (its calendar) and window (undefined: it runs). */
export type Excluded = ExclusionHit;

/**
 * The schedules with the exclusions applied, and what excludes a slot: a slot counts as excluded only when the
 * excluding schedules skip it (with several schedules a slot runs when one of them is not excluded).
 */
export function excludingSchedules(
  schedules: CronJobSchedules,
  exclusions: Exclusions | undefined,
): { schedules: CronJobSchedules; excludedBy(slot: Date, anchor: Date | undefined): Excluded | undefined } {
  if (!exclusions) return { schedules, excludedBy: () => undefined };
  const excluding = schedules.excluding(exclusions);
  return {
    schedules: excluding,
    excludedBy(slot, anchor) {
      const runs = excluding.schedule.next(new Date(slot.getTime() - 1), anchor).getTime() === slot.getTime();
      return runs ? undefined : excluding.excludedBy(slot, anchor);
    },
  };
}

/** The last instant a Date holds: what an excluding schedule answers when no slot is left. */
export const NO_SLOT_LEFT = 8.64e15;
