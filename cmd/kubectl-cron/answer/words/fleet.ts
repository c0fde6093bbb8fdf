// A problem many CronJobs share, said once with how many it affects (FLEET).

/** A count as the plugin says one: 4,812. */
const thousands = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
/** "1 CronJob", "4,812 CronJobs". */
const cronJobs = (n: number) => `${thousands(n)} ${n === 1 ? "CronJob" : "CronJobs"}`;
/** How many names a line of many says, at most. */
const SHOWN = 3;
/** The first few of many names, and how many more. */
const someOf = (names: readonly string[]) =>
  names.length > SHOWN
    ? `${names.slice(0, SHOWN).join(", ")} and ${thousands(names.length - SHOWN)} more`
    : names.join(", ");

/**
 * A problem many CronJobs share, said once with how many it affects (`kubectl cron why -A`, `kubectl cron list`,
 * `kubectl cron groups`): the operator's (its finding's words, `summary`), a concurrency group's, an
 * ExclusionCalendar's.
 */
export const FLEET = {
  /** A problem of the operator itself, or of a clock: its finding, and the CronJobs it affects. */
  operator: (p: { summary: string; names: readonly string[] }) =>
    `${p.summary}: affects ${cronJobs(p.names.length)} (${someOf(p.names)})`,
  /** A group whose runs wait for a place: its use now, and its CronJobs waiting. */
  groupWaiting: (p: { group: string; namespace: string; inUse: number; limit?: number; names: readonly string[] }) =>
    `group ${p.group} (${p.namespace}) ${p.limit !== undefined && p.inUse >= p.limit ? "full " : ""}at ` +
    `${p.inUse}/${p.limit ?? "?"}: ${cronJobs(p.names.length)} waiting (${someOf(p.names)})`,
  /** A group CronJobs name that does not exist: their runs wait until it does. */
  groupMissing: (p: { group: string; namespace: string; names: readonly string[] }) =>
    `group ${p.group} (${p.namespace}) does not exist: the runs of ${cronJobs(p.names.length)} naming it wait ` +
    `(${someOf(p.names)})`,
  /**
   * A calendar CronJobs name (spec.exclusions.calendars) that does not exist, or whose windows do not parse
   * (`message`: where): the operator holds their slots until it can read it (calendar-not-found).
   */
  calendarHeld: (p: {
    calendar: string;
    namespace: string;
    missing: boolean;
    message?: string;
    names: readonly string[];
  }) =>
    `calendar ${p.calendar} (${p.namespace}) ` +
    (p.missing ? "does not exist" : `cannot be read${p.message ? ` (${p.message})` : ""}`) +
    `: the slots of ${cronJobs(p.names.length)} naming it are held until it ${p.missing ? "exists" : "is fixed"} ` +
    `(${someOf(p.names)})`,
};
