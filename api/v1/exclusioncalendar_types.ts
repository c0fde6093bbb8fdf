// The ExclusionCalendar API: times a schedule must skip (public holidays, a change freeze, a maintenance window),
// kept in one object several CronJobs of a namespace name in spec.exclusions.calendars. A CronJob may also give
// windows of its own (spec.exclusions.windows). Windows are wall-clock spans read in the CronJob's time zone (each
// schedule's own in v2), so one calendar serves CronJobs in several zones; the math is
// api/v1/schedule/exclusionwindows.ts.
// The calendar holds no status: what it excluded is in each CronJob's record (status.recentRuns).
import { z } from "zod";
import { GROUP, VERSION } from "./groupversion_info.ts";
import { ObjectMetaSchema, WireObjectMetaSchema } from "./meta.ts";
import { MAX_EXCLUSION_WINDOWS } from "./schedule/exclusionwindows.ts";

export const CALENDAR_KIND = "ExclusionCalendar";
export const CALENDAR_LIST_KIND = "ExclusionCalendarList";
export const CALENDAR_PLURAL = "exclusioncalendars";
export const CALENDAR_SINGULAR = "exclusioncalendar";
export const CALENDAR_SHORT_NAMES = ["xcal", "xcals"] as const;
export const CALENDAR_RESOURCE = `${CALENDAR_PLURAL}.${GROUP}`;

/** How clients address ExclusionCalendars (the runtime's ResourceKind shape). */
export const ExclusionCalendarResource = {
  group: GROUP,
  version: VERSION,
  kind: CALENDAR_KIND,
  plural: CALENDAR_PLURAL,
  namespaced: true,
} as const;

/** The most calendars one CronJob names. */
export const MAX_CALENDARS = 8;
/** A calendar's name as spec.exclusions.calendars names it: a DNS-1123 subdomain's characters. */
export const MAX_CALENDAR_NAME_LENGTH = 253;
export const CALENDAR_NAME_PATTERN = /^[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/;

const text = z.string().max(64);

/**
 * A window: absolute (start, end) or recurring (daysOfMonth, months, daysOfWeek, from, to; all must hold). The CRD
 * checks the JSON shape; the webhook and the controller check the values (api/v1/schedule/exclusionwindows.ts), in
 * one place and in its words. No format is a CRD pattern: the API server checks the schema before any webhook, so a
 * pattern would answer with a regular expression instead of the field, the value and what it should be, and (before
 * CRD validation ratcheting, Kubernetes 1.30) would refuse every write, status ones included, of an object stored
 * before the rule.
 */
export const ExclusionWindowSchema = z
  .object({
    name: text.optional().meta({ description: "How messages name it." }),
    start: text.optional().meta({ description: "YYYY-MM-DD (that whole day) or YYYY-MM-DDTHH:MM." }),
    end: text.optional().meta({ description: "As start; a date is included." }),
    daysOfMonth: text.optional().meta({ description: "Cron day of month, e.g. 1-7." }),
    months: text.optional().meta({ description: "Cron month, e.g. DEC." }),
    daysOfWeek: text.optional().meta({ description: "Cron day of week, e.g. MON." }),
    from: text.optional().meta({ description: "HH:MM, default 00:00." }),
    to: text.optional().meta({ description: "HH:MM, default 24:00." }),
  })
  .meta({ description: "A wall-clock span: start (and end), or the recurring fields (all must match)." });

export const ExclusionWindowsSchema = z.array(ExclusionWindowSchema).max(MAX_EXCLUSION_WINDOWS);

export const ExclusionCalendarSpecSchema = z
  .object({
    windows: ExclusionWindowsSchema.meta({
      "x-kubernetes-list-type": "atomic",
      description:
        "The times CronJobs naming this calendar skip, read in each CronJob's time zone. A skipped time is a " +
        "record entry (Skipped, ExcludedByCalendar), not a missed run.",
    }),
  })
  .meta({ description: "ExclusionCalendarSpec: the windows of time the calendar excludes." });

export const ExclusionCalendarSchema = z
  .object({
    apiVersion: z.literal(`${GROUP}/${VERSION}`).optional(),
    kind: z.literal(CALENDAR_KIND).optional(),
    metadata: ObjectMetaSchema,
    spec: ExclusionCalendarSpecSchema,
  })
  .meta({
    description:
      "ExclusionCalendar is a set of times CronJobs of its namespace skip (holidays, a freeze, a maintenance " +
      "window). A CronJob names it in spec.exclusions.calendars.",
  });
export type ExclusionCalendar = z.infer<typeof ExclusionCalendarSchema>;

/** A stored calendar as the controller reads it (the CRD guarantees the JSON types only). */
export const ExclusionCalendarWireSchema = z.looseObject({
  metadata: WireObjectMetaSchema,
  spec: z.looseObject({ windows: z.unknown().optional() }).optional(),
});

export const calendarPrinterColumns = [{ name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" }] as const;

/** spec.exclusions: the CronJob's own windows and the calendars it names. */
export const CronJobExclusionsSchema = z
  .object({
    calendars: z
      .array(
        z
          .string()
          .max(MAX_CALENDAR_NAME_LENGTH)
          .regex(CALENDAR_NAME_PATTERN, { message: "must be an ExclusionCalendar's name (a DNS-1123 subdomain)" }),
      )
      .max(MAX_CALENDARS)
      .optional()
      .meta({ "x-kubernetes-list-type": "atomic", description: "ExclusionCalendars of this namespace." }),
    windows: ExclusionWindowsSchema.optional().meta({
      "x-kubernetes-list-type": "atomic",
      description: "This CronJob's own windows.",
    }),
  })
  .meta({ description: "Times the schedule skips; run-now ignores them." });
export type CronJobExclusions = z.infer<typeof CronJobExclusionsSchema>;
