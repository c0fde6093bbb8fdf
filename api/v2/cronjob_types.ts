// The CronJob API v2: v1 with a list of schedules instead of one. Built from v1's zod schemas (the single
// source of truth): every other spec field, the status and the metadata are v1's own schema objects, so the
// two versions cannot drift apart field by field.
//
// A schedule is a string, as in v1 (not the kubebuilder tutorial's v2 structure of five optional cron
// fields): a string also takes the descriptors (@daily, `@every 1h30m`) and hashed `H` fields, which a
// structure of five fields cannot, and it is what users already write in v1 and in the built-in CronJob.
import { z } from "zod";
import { CronJobSchema, CronJobSpecSchema, printerColumns as v1PrinterColumns } from "../v1/index.ts";
import { MAX_SCHEDULES } from "../v1/schedule/index.ts";
import { API_VERSION } from "./groupversion_info.ts";

const { schedule, timeZone, ...common } = CronJobSpecSchema.shape;

const ScheduleEntrySchema = z
  .object({
    schedule: schedule.unwrap().meta({
      description:
        'A schedule in Cron format: five fields "minute hour day-of-month month day-of-week" (H hashes a field), ' +
        'or a descriptor such as @hourly, @daily or "@every 1h30m". Evaluated in this entry\'s timeZone.',
    }),
    timeZone: timeZone.meta({
      description: 'The IANA time zone name this schedule is evaluated in, for example "Europe/Berlin". If unset, UTC.',
    }),
  })
  .meta({ description: "One schedule of the CronJob, with its own time zone." });

const CronJobSpecV2Schema = z
  .object({
    schedules: z
      .array(ScheduleEntrySchema)
      .max(MAX_SCHEDULES)
      .meta({
        description:
          "The schedules the CronJob runs on: its scheduled times are the union of theirs (a time two schedules " +
          `share is one run). At least 1 (none when spec.after names the CronJobs it runs after), at most ${MAX_SCHEDULES}.`,
      }),
    ...common,
  })
  .meta({
    description: "CronJobSpec defines the desired state of CronJob.",
    // At least one schedule, unless it runs only after other CronJobs (v1's rule, for the v2 list; no CEL rule, as v1).
    anyOf: [{ properties: { schedules: { minItems: 1 } } }, { required: ["after"] }],
  });

export const CronJobV2Schema = z
  .object({
    ...CronJobSchema.shape,
    apiVersion: z.literal(API_VERSION).meta(CronJobSchema.shape.apiVersion.meta() ?? {}),
    spec: CronJobSpecV2Schema,
  })
  .meta({ description: "CronJob is the Schema for the cronjobs API." });

/**
 * kubectl get's columns for v2: v1's, with the schedules as the controller runs them (status.resolvedSchedule:
 * every schedule, H resolved) in place of spec.schedule and spec.timeZone, which v2 does not have. A printer
 * column takes one value of its JSON path, so `.spec.schedules[*]` would show the first schedule alone.
 */
export const printerColumns = [
  { name: "Schedules", type: "string", jsonPath: ".status.resolvedSchedule" },
  ...v1PrinterColumns.filter((c) => !["Schedule", "Resolved", "TimeZone"].includes(c.name)),
] as const;
