// spec.exclusions compiled: a CronJob's own windows and the windows of the ExclusionCalendars it names, by the
// exclusion math (schedule/exclusionwindows.ts), each source named as the record names it ("calendar holidays-de",
// "spec.exclusions"). A calendar missing, a name that is no calendar's, or windows that do not parse make the
// exclusions unknown: the operator then holds every due slot (controllers/calendars.ts), and `kubectl cron` says so
// in the same words. Both read the calendars their own way (the operator's cache, the plugin's GETs or list) and
// hand them here as plain data. Pure.
import { CALENDAR_KIND, CALENDAR_NAME_PATTERN, MAX_CALENDARS } from "./exclusioncalendar_types.ts";
import { type CompiledWindow, type ExclusionSource, Exclusions, parseExclusionWindows } from "./schedule/index.ts";

/** A calendar the CronJob names, as read: its windows as stored, that it does not exist, or why it was not read. */
export type CalendarRead =
  | { name: string; state: "found"; windows: unknown; version?: string | undefined }
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

/** The calendars spec.exclusions names, as stored (bounded; an entry that is no string reads as ""). */
export function calendarNamesOf(spec: unknown): string[] {
  const names = (spec as Spec)?.exclusions?.calendars;
  return Array.isArray(names) ? names.slice(0, MAX_CALENDARS + 1).map((n) => (typeof n === "string" ? n : "")) : [];
}

/** Whether spec.exclusions gives the CronJob anything to skip (its own windows, or a calendar). */
export function hasExclusions(spec: unknown): boolean {
  const windows = (spec as Spec)?.exclusions?.windows;
  return calendarNamesOf(spec).length > 0 || (Array.isArray(windows) && windows.length > 0);
}

/** Where a window is, in the words an entry's message and `kubectl cron next` use: its calendar, or the CronJob's own. */
export function exclusionBy(calendar: string | undefined): string {
  return calendar ? `calendar ${calendar}` : "spec.exclusions";
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
      sources.push({ by, ...(calendar ? { calendar } : {}), windows: r.windows as readonly CompiledWindow[] });
      return;
    }
    // The error at its field of the calendar ("spec.windows[0].start: …"), said with the calendar's name.
    const detail = r.errors[0]?.message ?? `${path}: invalid`;
    const own = calendar ? `${CALENDAR_KIND} ${calendar}: ` : "";
    hold ??= {
      ...(calendar ? { calendar } : {}),
      missing: false,
      problem: `${own}${detail}: slots are held until it is fixed`,
      detail,
    };
  };
  if (spec?.exclusions?.windows !== undefined)
    add(exclusionBy(undefined), spec.exclusions.windows, "spec.exclusions.windows");
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
      add(exclusionBy(name), read.windows, "spec.windows", name);
    }
  }
  const exclusions = new Exclusions(sources);
  return { ...(exclusions.empty ? {} : { exclusions }), ...(hold ? { hold } : {}), unreadable };
}
