// spec.exclusions as the plugin reads it: the CronJob's own windows and the ExclusionCalendars it names, compiled
// by the API's exclusion math (api/v1/schedule/exclusions.ts) the way the operator compiles them
// (controllers/calendars.ts): each source named as the record names it ("calendar holidays-de", "spec.exclusions"),
// a calendar missing or whose windows do not parse holding every slot. `next` GETs the calendars, `why` lists its
// namespace's once (whyfacts.ts); both answer from plain data (CalendarRead), so the math here is pure.
import {
  CALENDAR_KIND,
  CALENDAR_NAME_PATTERN,
  type CronJobSchedules,
  ExclusionCalendarResource,
  MAX_CALENDARS,
} from "../../api/v1/index.ts";
import {
  type CompiledWindow,
  type ExclusionSource,
  Exclusions,
  parseExclusionWindows,
} from "../../api/v1/schedule/index.ts";
import type { Client } from "../../runtime/client.ts";
import { APIError, isNotFound } from "../../runtime/errors.ts";

/** A calendar the CronJob names, as read: its windows as stored, that it does not exist, or why it was not read. */
export type CalendarRead =
  | { name: string; state: "found"; windows: unknown }
  | { name: string; state: "missing" }
  | { name: string; state: "unreadable"; why: string };

/** What holds every slot while spec.exclusions cannot be read (the operator's rule: a Held entry per due slot). */
export interface CalendarHold {
  /** The calendar at fault; undefined: the CronJob's own windows, or a name that is no calendar's. */
  calendar?: string;
  /** It does not exist (else its windows, or the name, do not parse). */
  missing: boolean;
  /** As the operator says it (the record's message after "held: ", the Degraded condition's). */
  problem: string;
  /** Windows that do not parse: the first error, at its field of the calendar ("spec.windows[0].start: …"). */
  detail?: string;
}

/** The CronJob's exclusions, as far as they could be read. */
export interface ExclusionsView {
  /** The windows of the sources read (undefined: none). */
  exclusions?: Exclusions;
  /** A calendar missing or bad: the operator holds every slot until it can read it. */
  hold?: CalendarHold;
  /** Calendars this user could not read (403, …): the operator may; their windows are unknown here. */
  unreadable: string[];
}

type Spec = { exclusions?: { calendars?: unknown; windows?: unknown } } | undefined;

/** The calendars spec.exclusions names, as stored (bounded as the operator bounds them). */
export function calendarNamesOf(spec: unknown): string[] {
  const names = (spec as Spec)?.exclusions?.calendars;
  return Array.isArray(names)
    ? names.slice(0, MAX_CALENDARS + 1).filter((n): n is string => typeof n === "string" && n !== "")
    : [];
}

/** Whether spec.exclusions gives the CronJob anything to skip (its own windows, or a calendar). */
export function hasExclusions(spec: unknown): boolean {
  const windows = (spec as Spec)?.exclusions?.windows;
  return calendarNamesOf(spec).length > 0 || (Array.isArray(windows) && windows.length > 0);
}

/** GETs each calendar named (`next`): one missing is said, not thrown; nor is one the user may not read. */
export async function getCalendars(
  client: Pick<Client, "get">,
  namespace: string,
  names: readonly string[],
): Promise<CalendarRead[]> {
  return Promise.all(
    names.map(async (name): Promise<CalendarRead> => {
      if (!CALENDAR_NAME_PATTERN.test(name)) return { name, state: "missing" };
      try {
        const c = await client.get<{ spec?: { windows?: unknown } }>(ExclusionCalendarResource, namespace, name);
        return { name, state: "found", windows: c.spec?.windows ?? [] };
      } catch (e) {
        if (isNotFound(e)) return { name, state: "missing" };
        const why = e instanceof APIError && e.reason === "Forbidden" ? "forbidden" : (e as Error).message;
        return { name, state: "unreadable", why };
      }
    }),
  );
}

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

/**
 * The CronJob's exclusions from its spec and the calendars read, compiled as the operator compiles them: its own
 * windows first, then each calendar in the order named. The first source that cannot be used (a calendar missing, a
 * window that does not parse) is the hold; the sources that can still mark the slots they exclude.
 */
export function exclusionsOf(
  cronJob: { metadata?: { namespace?: string }; spec?: unknown },
  calendars: readonly CalendarRead[],
): ExclusionsView {
  const spec = cronJob.spec as Spec;
  const namespace = cronJob.metadata?.namespace ?? "";
  const sources: ExclusionSource[] = [];
  const unreadable: string[] = [];
  let hold: CalendarHold | undefined;
  const add = (by: string, raw: unknown, path: string, calendar?: string) => {
    const r = parseExclusionWindows(raw, path);
    if (r.ok) {
      sources.push({ by, windows: r.windows as readonly CompiledWindow[] });
      return;
    }
    const message = r.errors[0]?.message ?? `${path}: invalid`;
    const own = calendar ? `${CALENDAR_KIND} ${calendar}: ` : "";
    hold ??= {
      ...(calendar ? { calendar } : {}),
      missing: false,
      problem: `${message}: slots are held until it is fixed`,
      detail: own && message.startsWith(own) ? message.slice(own.length) : message,
    };
  };
  if (spec?.exclusions?.windows !== undefined)
    add("spec.exclusions", spec.exclusions.windows, "spec.exclusions.windows");
  for (const name of calendarNamesOf(spec)) {
    const read = calendars.find((c) => c.name === name);
    if (!CALENDAR_NAME_PATTERN.test(name)) {
      hold ??= { missing: false, problem: `spec.exclusions.calendars: ${JSON.stringify(name)} is not a calendar name` };
    } else if (!read || read.state === "unreadable") {
      unreadable.push(`${CALENDAR_KIND} ${namespace}/${name}${read?.state === "unreadable" ? `: ${read.why}` : ""}`);
    } else if (read.state === "missing") {
      hold ??= {
        calendar: name,
        missing: true,
        problem: `spec.exclusions.calendars names ${name}, which is not an ${CALENDAR_KIND} of namespace ${namespace}: slots are held until it exists`,
      };
    } else {
      add(`calendar ${name}`, read.windows, `${CALENDAR_KIND} ${name}: spec.windows`, name);
    }
  }
  const exclusions = new Exclusions(sources);
  return { ...(exclusions.empty ? {} : { exclusions }), ...(hold ? { hold } : {}), unreadable };
}

/** What excludes a slot of the schedules as written: by which source and window (undefined: it runs). */
export interface Excluded {
  by: string;
  window: string;
}

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
