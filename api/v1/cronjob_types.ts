// The CronJob API: zod schemas are the single source of truth. The TypeScript types are inferred from
// them, the controller and webhooks validate with them, and `make manifests` turns them into the CRD.
import { z } from "zod";
import { API_VERSION, KIND, MAX_CRONJOB_NAME_LENGTH } from "./groupversion_info.ts";
import { type FieldError, fieldErrorString, invalidField, requiredField } from "../../runtime/field.ts";
import { MAX_RUN_NOW_REQUEST_LENGTH } from "./runnow.ts";
import { CronJobExclusionsSchema } from "./exclusioncalendar_types.ts";
import { RetrySpecSchema } from "./retry.ts";
import { MAX_JITTER_LENGTH } from "./jitter.ts";
import { AfterSpecSchema, MAX_UPSTREAMS, UpstreamBookSchema } from "./after_types.ts";
import { AfterPolicySchema } from "./join.ts";
import { RecentRunsSchema, RecentRunWireSchema } from "./recentruns.ts";
import { MAX_SCHEDULE_LENGTH, MAX_TIME_ZONE_LENGTH } from "./schedule/list.ts";
import {
  ConditionSchema,
  K8S_OPENAPI,
  ObjectMetaSchema,
  ObjectReferenceSchema,
  TimeSchema,
  WireObjectMetaSchema,
} from "./meta.ts";

const ConcurrencyPolicyValues = ["Allow", "Forbid", "Replace"] as const;
const ConcurrencyPolicySchema = z.enum(ConcurrencyPolicyValues).meta({
  description:
    "Specifies how to treat concurrent executions of a Job. Valid values are: " +
    '"Allow" (default): allows CronJobs to run concurrently; ' +
    '"Forbid": forbids concurrent runs, skipping the next run if the previous run has not finished yet; ' +
    '"Replace": cancels the currently running Job and replaces it with a new one.',
});
type ConcurrencyPolicy = z.infer<typeof ConcurrencyPolicySchema>;

const MissedRunPolicyValues = ["RunLatest", "Skip", "RunAll"] as const;
const MissedRunPolicySchema = z.enum(MissedRunPolicyValues).meta({
  description:
    "What happens to scheduled times that were missed (the operator or the cluster down, the CronJob suspended " +
    "or stopped, a Forbid run still active). Valid values are: " +
    '"RunLatest" (unset means this): the newest missed time within startingDeadlineSeconds runs, as the ' +
    "built-in CronJob does; " +
    '"Skip": a missed time never runs, the next run is the next scheduled time (resuming never starts a Job at ' +
    "once); only the time status.nextScheduleTime announced runs, however late the controller reaches it; " +
    '"RunAll": every missed time within startingDeadlineSeconds (at most the newest 100) runs, oldest first, each ' +
    "once, under the concurrency policy (with Replace only the newest). Times not run are reported " +
    "(MissSchedule, status.lastMissedTime).",
});
export type MissedRunPolicy = z.infer<typeof MissedRunPolicySchema>;

/** With missedRunPolicy RunAll: how many missed times one reconcile may start, unless set. */
export const DEFAULT_MAX_CATCH_UP_RUNS = 10;
/** The most missed times RunAll runs (the newest ones); the built-in's "too many missed" limit. */
export const MAX_CATCH_UP_SLOTS = 100;
/** Bound of spec.stopAfterConsecutiveFailures. */
const MAX_STOP_AFTER_FAILURES = 1000;

/**
 * The spec's defaults, the one place they are written. The schema's `.default()`s take theirs from here
 * (so do the CRD's `default:`s, and the controller's parse), and the defaulting webhook's patch is this
 * table. `suspend` alone is not a schema default: as in kubebuilder's CronJob, only the webhook writes it,
 * and an unset `suspend` means the same to the controller.
 */
export const CRONJOB_SPEC_DEFAULTS = {
  concurrencyPolicy: "Allow",
  suspend: false,
  successfulJobsHistoryLimit: 3,
  failedJobsHistoryLimit: 1,
} as const satisfies {
  concurrencyPolicy: ConcurrencyPolicy;
  suspend: boolean;
  successfulJobsHistoryLimit: number;
  failedJobsHistoryLimit: number;
};
/** The fields of CRONJOB_SPEC_DEFAULTS the schema (and so the CRD) does not default. */
export const WEBHOOK_ONLY_DEFAULTS: ReadonlySet<keyof typeof CRONJOB_SPEC_DEFAULTS> = new Set(["suspend"]);

const INT32_MAX = 2 ** 31 - 1;

// The bounds of a schedule and a time zone live with the schedule validation, which applies them to every
// schedule of a list (v2's spec.schedules and v1's more-schedules annotation) as the schema does to spec.schedule.
export { MAX_SCHEDULE_LENGTH, MAX_TIME_ZONE_LENGTH } from "./schedule/list.ts";
/**
 * A group's name, as spec.concurrencyGroup names it: the characters of a DNS-1123 subdomain (the API server checks
 * the group's own name fully; a name no group can have is simply never found). The CronJob's rule, not the group's:
 * concurrencygroup_types.ts reads CronJobs (a member's waiting run), so the group's module sits above this one.
 */
const MAX_GROUP_NAME_LENGTH = 253;
const GROUP_NAME_PATTERN = /^[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/;
/** The pod restart policies a Job accepts (upstream Job validation refuses "Always"). */
export const RestartPolicyValues = ["OnFailure", "Never"] as const;

/**
 * The Job template. Its CRD schema is the full upstream batch/v1 JobTemplateSpec (converted by the
 * generator), tightened by the checks below (the generator overlays them: enums, bounds, required
 * fields); zod checks only what the controller relies on, and the type says just that: the checked
 * fields, and `unknown` for the rest of the wire JSON.
 */
const JobTemplateSpecSchema = z
  .looseObject({
    metadata: z
      .looseObject({
        labels: z.record(z.string(), z.string()).optional(),
        annotations: z.record(z.string(), z.string()).optional(),
      })
      .optional(),
    spec: z.looseObject({
      template: z.looseObject({
        metadata: z
          .looseObject({
            labels: z.record(z.string(), z.string()).optional(),
            annotations: z.record(z.string(), z.string()).optional(),
          })
          .optional(),
        spec: z.looseObject({
          containers: z.array(z.looseObject({ name: z.string().min(1) })).min(1),
          // Required: Job defaulting would turn an unset policy into "Always", which Job validation refuses.
          restartPolicy: z.enum(RestartPolicyValues),
        }),
      }),
    }),
  })
  .meta({
    [K8S_OPENAPI]: "io.k8s.api.batch.v1.JobTemplateSpec",
    description: "Specifies the Job that will be created when executing a CronJob.",
  });

/**
 * A CronJob's metadata. Only `name` (and `generateName`) may carry checks in a CRD's schema, and the
 * generator keeps only those.
 */
const CronJobMetaSchema = ObjectMetaSchema.extend({
  name: z.string().max(MAX_CRONJOB_NAME_LENGTH).optional(),
});

export const CronJobSpecSchema = z
  .object({
    schedule: z
      .string()
      .min(1)
      .max(MAX_SCHEDULE_LENGTH)
      .optional()
      .meta({
        description:
          'The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron: five fields "minute hour ' +
          'day-of-month month day-of-week", or a descriptor such as @hourly, @daily or "@every 1h30m". ' +
          `Evaluated in spec.timeZone. At most ${MAX_SCHEDULE_LENGTH} characters. Required, unless spec.after ` +
          "names the CronJobs this one runs after (it then has no schedule of its own).",
      }),
    timeZone: z
      .string()
      .min(1)
      .max(MAX_TIME_ZONE_LENGTH)
      .optional()
      .meta({
        description:
          'The IANA time zone name the schedule is evaluated in, for example "Europe/Berlin". ' +
          `If unset, the schedule is evaluated in UTC. At most ${MAX_TIME_ZONE_LENGTH} characters.`,
      }),
    startingDeadlineSeconds: z
      .int()
      .min(0)
      .optional()
      .meta({
        format: "int64",
        description:
          "Optional deadline in seconds for starting the Job if it misses its scheduled time for any reason. " +
          "A missed run older than the deadline is not started; it is reported as a MissSchedule event and " +
          "in status.lastMissedTime.",
      }),
    concurrencyPolicy: ConcurrencyPolicySchema.default(CRONJOB_SPEC_DEFAULTS.concurrencyPolicy),
    suspend: z
      .boolean()
      .optional()
      .meta({
        description:
          "Tells the controller to suspend subsequent executions; it does not apply to already started " +
          `executions. Defaults to ${CRONJOB_SPEC_DEFAULTS.suspend}.`,
      }),
    missedRunPolicy: MissedRunPolicySchema.optional(),
    maxCatchUpRuns: z
      .int()
      .min(1)
      .max(MAX_CATCH_UP_SLOTS)
      .optional()
      .meta({
        format: "int32",
        description:
          "With missedRunPolicy RunAll: how many missed scheduled times one reconcile may start (the rest follow " +
          `at once, in the next passes). 1 to ${MAX_CATCH_UP_SLOTS}; the defaulting webhook sets ` +
          `${DEFAULT_MAX_CATCH_UP_RUNS} when the policy is RunAll. Not allowed with another policy.`,
      }),
    stopAfterConsecutiveFailures: z
      .int()
      .min(1)
      .max(MAX_STOP_AFTER_FAILURES)
      .optional()
      .meta({
        format: "int32",
        description:
          "Stop scheduling after this many runs in a row failed (status.consecutiveFailures; a successful run " +
          "resets it). The stop is in status.stopped and the Available condition; running Jobs are not touched. " +
          "`kubectl cron resume`, or any change to the spec, starts it again. Unset: never stop.",
      }),
    concurrencyGroup: z
      .string()
      .max(MAX_GROUP_NAME_LENGTH)
      .regex(GROUP_NAME_PATTERN, {
        message: "must be a ConcurrencyGroup's name: lowercase letters, digits, '-' and '.' (a DNS-1123 subdomain)",
      })
      .optional()
      .meta({
        description: "The ConcurrencyGroup of this namespace whose limit the runs share.",
      }),
    startTimeoutSeconds: z.int().min(1).max(INT32_MAX).optional().meta({
      format: "int32",
      description: "How long a run's Pods may take to start before the operator ends the run.",
    }),
    exclusions: CronJobExclusionsSchema.optional(),
    retry: RetrySpecSchema.optional(),
    startTime: TimeSchema.optional().meta({
      description:
        "No scheduled time before this instant runs (RFC 3339, for example 2026-12-01T00:00:00Z); a slot at it does. " +
        "Run-now and backfill requests are not limited by it. Unset: the schedule runs from the CronJob's creation.",
    }),
    endTime: TimeSchema.optional().meta({
      description:
        "No scheduled time after this instant runs (a slot at it does); once it has passed and every slot is " +
        "decided, the Available condition is False with reason EndTimeReached and status.nextScheduleTime is empty. " +
        "Run-now requests still run. Must be after spec.startTime.",
    }),
    jitter: z
      .string()
      .max(MAX_JITTER_LENGTH)
      .optional()
      .meta({
        description:
          'Each slot\'s run starts at its slot plus an offset in [0, jitter): a Go duration in whole seconds ("30s", ' +
          '"5m"), shorter than the shortest time between two slots. The offset is hashed from the namespace, the ' +
          "name and the slot, the same on every replica and after every restart, so a fleet of CronJobs on the " +
          "same minute spreads over the jitter and each run still happens once. startingDeadlineSeconds counts from " +
          "the run's start. Unset: every run starts at its slot.",
      }),
    after: AfterSpecSchema.optional(),
    afterPolicy: AfterPolicySchema.optional(),
    maxRuns: z
      .int()
      .min(1)
      .max(INT32_MAX)
      .optional()
      .meta({
        format: "int32",
        description:
          "After this many scheduled runs the CronJob stops scheduling: status.scheduledRuns counts them (from when " +
          "this field is set), the Available condition is False with reason MaxRunsReached. Run-now and backfill " +
          "requests still run and are not counted, nor are retries (the same run again). Raise it to schedule " +
          "more; remove it and the count goes.",
      }),
    jobTemplate: JobTemplateSpecSchema,
    successfulJobsHistoryLimit: z
      .int()
      .min(0)
      .max(INT32_MAX)
      .default(CRONJOB_SPEC_DEFAULTS.successfulJobsHistoryLimit)
      .meta({
        format: "int32",
        description:
          "The number of successful finished Jobs to retain. Value must be a non-negative integer. " +
          `Defaults to ${CRONJOB_SPEC_DEFAULTS.successfulJobsHistoryLimit}.`,
      }),
    failedJobsHistoryLimit: z
      .int()
      .min(0)
      .max(INT32_MAX)
      .default(CRONJOB_SPEC_DEFAULTS.failedJobsHistoryLimit)
      .meta({
        format: "int32",
        description:
          "The number of failed finished Jobs to retain. Value must be a non-negative integer. " +
          `Defaults to ${CRONJOB_SPEC_DEFAULTS.failedJobsHistoryLimit}.`,
      }),
  })
  // The same rule for the webhook and the controller (zod's output).
  .superRefine((spec, ctx) => {
    if (spec.schedule === undefined && !spec.after?.length)
      ctx.addIssue({
        code: "custom",
        path: ["schedule"],
        message: "Required: a string (it may be left out only when spec.after names the CronJobs this one runs after)",
      });
  })
  .meta({
    description: "CronJobSpec defines the desired state of CronJob.",
    // A schedule of its own, unless it runs only after other CronJobs: the schema itself refuses one that can never
    // run, with admission bypassed too (the superRefine's rule above, for the API server). Not a CEL rule: with one
    // in the schema, every refusal for another field also carried a line the user did not cause ("<nil>: … some
    // validation rules were not checked because the object was invalid", kube-apiserver's hasBlockingErr).
    anyOf: [{ required: ["schedule"] }, { required: ["after"] }],
  });

export const CronJobStatusSchema = z
  .object({
    active: z.array(ObjectReferenceSchema).optional().meta({
      "x-kubernetes-list-type": "atomic",
      description: "A list of pointers to currently running Jobs, sorted by name.",
    }),
    activeCount: z
      .int()
      .min(0)
      .max(INT32_MAX)
      .optional()
      .meta({ format: "int32", description: "The number of entries in active (shown by kubectl as Active)." }),
    lastScheduleTime: TimeSchema.optional().meta({
      description: "The scheduled time of the newest Job the controller started. It never moves backward.",
    }),
    lastSuccessfulTime: TimeSchema.optional().meta({
      description: "The completion time of the newest Job that finished successfully.",
    }),
    nextScheduleTime: TimeSchema.optional().meta({
      description: "When the next Job will be started; empty while the CronJob is suspended or invalid.",
    }),
    lastMissedTime: TimeSchema.optional().meta({
      description: "The newest scheduled time that was not started because it was older than startingDeadlineSeconds.",
    }),
    lastFailedTime: TimeSchema.optional().meta({
      description: "The time the newest failed Job failed. Like lastSuccessfulTime, it never moves backward.",
    }),
    lastExcludedTime: TimeSchema.optional().meta({
      description: "The newest slot spec.exclusions skipped. It and older slots never run later.",
    }),
    resolvedSchedule: z
      .string()
      .max(MAX_SCHEDULE_LENGTH)
      .optional()
      .meta({
        description:
          "spec.schedule as this CronJob runs it: each H field resolved to the value hashed from its namespace " +
          "and name (the schedule as written when it has no H; shown by kubectl get -o wide). With several " +
          'schedules (API v2), each one so, separated by "; ". Empty while the schedule is invalid.',
      }),
    upstreams: z.array(UpstreamBookSchema).max(MAX_UPSTREAMS).optional().meta({
      "x-kubernetes-list-type": "atomic",
      description: "For each CronJob of spec.after: the newest of its runs decided about (each is decided once).",
    }),
    scheduledRuns: z
      .int()
      .min(0)
      .max(INT32_MAX)
      .optional()
      .meta({
        format: "int32",
        description:
          "The schedule's runs started while spec.maxRuns is set (run-now, backfill and retries are not counted); " +
          "absent while it is unset.",
      }),
    lastRunNowRequest: z
      .string()
      .max(MAX_RUN_NOW_REQUEST_LENGTH)
      .optional()
      .meta({
        description:
          "The newest run-now request (the value of the annotation batch.tutorial.kubebuilder.io/run-now) " +
          "whose Job was created. A request equal to it is never run again.",
      }),
    conditions: z
      .array(ConditionSchema)
      .optional()
      .meta({
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["type"],
        description:
          "The current state of the CronJob: Available (it will schedule), Progressing (Jobs are running) " +
          "and Degraded (something is wrong now).",
      }),
    observedGeneration: z
      .int()
      .min(0)
      .optional()
      .meta({ format: "int64", description: "The metadata.generation this status was computed from." }),
    consecutiveFailures: z
      .int()
      .min(0)
      .max(INT32_MAX)
      .optional()
      .meta({
        format: "int32",
        description:
          "Runs in a row that failed, counted while spec.stopAfterConsecutiveFailures is set; a successful run " +
          "and a resume set it to 0.",
      }),
    stopped: z
      .object({
        time: TimeSchema.meta({ description: "When the controller stopped scheduling." }),
        failures: z.int().min(0).max(INT32_MAX).meta({ format: "int32", description: "The failed runs in a row." }),
        generation: z
          .int()
          .min(0)
          .meta({ format: "int64", description: "The metadata.generation at the stop: a spec change resumes." }),
      })
      .optional()
      .meta({
        description:
          "Set while scheduling is stopped after spec.stopAfterConsecutiveFailures failed runs in a row; removed " +
          "by a resume (the resume annotation, or a change to the spec).",
      }),
    backfill: z
      .object({
        id: z.string().optional().meta({
          description: "The request's id (the backfill annotation's id; absent when its value did not parse).",
        }),
        from: TimeSchema.optional().meta({
          description: "The range's first instant (absent when the annotation's value did not parse).",
        }),
        to: TimeSchema.optional().meta({
          description: "The range's last instant (absent when the annotation's value did not parse).",
        }),
        phase: z.enum(["Running", "Complete", "Cancelled", "Refused"]).meta({
          description:
            "Running (slots are being started), Complete (every slot has its Job), Cancelled (the annotation was " +
            "removed or replaced), Refused (the request is invalid: see message).",
        }),
        total: z.int().min(0).meta({ format: "int32", description: "The slots in the range." }),
        created: z.int().min(0).meta({ format: "int32", description: "Slots whose Job this request created." }),
        skipped: z
          .int()
          .min(0)
          .meta({ format: "int32", description: "Slots that already had their Job (not run again)." }),
        lastSlot: TimeSchema.optional().meta({ description: "The newest slot handled: the next starts after it." }),
        message: z.string().optional().meta({ description: "Why the request was refused." }),
      })
      .optional()
      .meta({ description: "The newest backfill request (kubectl cron backfill) and its progress." }),
    lastResumeRequest: z.string().max(MAX_RUN_NOW_REQUEST_LENGTH).optional().meta({
      description:
        "The newest resume request (the annotation batch.tutorial.kubebuilder.io/resume) the controller handled.",
    }),
    resumed: z
      .object({
        time: TimeSchema.meta({ description: "When the controller resumed scheduling." }),
        running: z
          .array(z.string().max(253))
          .optional()
          .meta({
            description:
              "The Jobs still running at the resume, while they run: they belong to the stopped streak, so their " +
              "failures are not counted.",
          }),
      })
      .optional()
      .meta({
        description:
          "The last resume after a stop (status.stopped removed by a resume request or a spec change); the count " +
          "of failed runs starts at 0 with the runs started after it.",
      }),
    recentRuns: RecentRunsSchema.optional(),
  })
  .meta({ description: "CronJobStatus defines the observed state of CronJob." });

export const CronJobSchema = z
  .object({
    apiVersion: z.literal(API_VERSION).meta({
      description:
        "APIVersion defines the versioned schema of this representation of an object. Servers should convert " +
        "recognized schemas to the latest internal value, and may reject unrecognized values. More info: " +
        "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources",
    }),
    kind: z.literal(KIND).meta({
      description:
        "Kind is a string value representing the REST resource this object represents. Servers may infer this " +
        "from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: " +
        "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
    }),
    metadata: CronJobMetaSchema,
    spec: CronJobSpecSchema,
    status: CronJobStatusSchema.optional(),
  })
  .meta({ description: "CronJob is the Schema for the cronjobs API." });
export type CronJob = z.infer<typeof CronJobSchema>;
export type CronJobInput = z.input<typeof CronJobSchema>;

/**
 * What every stored CronJob is, whatever its values: the JSON types the CRD's structural schema guarantees
 * (timestamps are strings), without the checks above (bounds, enums, formats) or their defaults. Unknown
 * fields pass through. A CronJob (the schema's output) is one; the controller reads a stored object the
 * schema refuses (written with admission bypassed, or before a check existed) as one of these.
 */
export const CronJobWireSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: WireObjectMetaSchema,
  spec: z.looseObject({
    schedule: z.string().optional(),
    timeZone: z.string().optional(),
    startingDeadlineSeconds: z.number().optional(),
    concurrencyPolicy: z.string().optional(),
    suspend: z.boolean().optional(),
    missedRunPolicy: z.string().optional(),
    maxCatchUpRuns: z.number().optional(),
    stopAfterConsecutiveFailures: z.number().optional(),
    concurrencyGroup: z.string().optional(),
    startTimeoutSeconds: z.number().optional(),
    exclusions: z.unknown().optional(),
    retry: z.unknown().optional(),
    startTime: z.string().optional(),
    endTime: z.string().optional(),
    jitter: z.string().optional(),
    maxRuns: z.number().optional(),
    after: z.unknown().optional(),
    afterPolicy: z.unknown().optional(),
    jobTemplate: z.looseObject({
      metadata: z
        .looseObject({
          labels: z.record(z.string(), z.string()).optional(),
          annotations: z.record(z.string(), z.string()).optional(),
        })
        .optional(),
      spec: z.record(z.string(), z.unknown()).optional(),
    }),
    successfulJobsHistoryLimit: z.number().optional(),
    failedJobsHistoryLimit: z.number().optional(),
  }),
  status: z
    .looseObject({
      active: z.array(ObjectReferenceSchema).optional(),
      activeCount: z.number().optional(),
      lastScheduleTime: z.string().optional(),
      lastSuccessfulTime: z.string().optional(),
      nextScheduleTime: z.string().optional(),
      lastMissedTime: z.string().optional(),
      lastFailedTime: z.string().optional(),
      lastExcludedTime: z.string().optional(),
      resolvedSchedule: z.string().optional(),
      lastRunNowRequest: z.string().optional(),
      scheduledRuns: z.number().optional(),
      upstreams: z
        .array(z.looseObject({ cronJob: z.string(), lastEnded: z.string(), lastJob: z.string().optional() }))
        .optional(),
      conditions: z
        .array(
          z.looseObject({
            type: z.string(),
            status: z.string(),
            observedGeneration: z.number().optional(),
            lastTransitionTime: z.string(),
            reason: z.string(),
            message: z.string(),
          }),
        )
        .optional(),
      observedGeneration: z.number().optional(),
      consecutiveFailures: z.number().optional(),
      stopped: z.looseObject({ time: z.string(), failures: z.number(), generation: z.number() }).optional(),
      lastResumeRequest: z.string().optional(),
      resumed: z.looseObject({ time: z.string(), running: z.array(z.string()).optional() }).optional(),
      recentRuns: z.array(RecentRunWireSchema).optional(),
      backfill: z
        .looseObject({
          id: z.string().optional(),
          from: z.string().optional(),
          to: z.string().optional(),
          phase: z.string(),
          total: z.number(),
          created: z.number(),
          skipped: z.number(),
          lastSlot: z.string().optional(),
          message: z.string().optional(),
        })
        .optional(),
    })
    .optional(),
});
export type CronJobWire = z.infer<typeof CronJobWireSchema>;
export type CronJobWireStatus = NonNullable<CronJobWire["status"]>;

/** Printer columns for `kubectl get` (kubebuilder's +kubebuilder:printcolumn markers). */
export const printerColumns = [
  { name: "Schedule", type: "string", jsonPath: ".spec.schedule" },
  // -o wide: the schedule with its H fields resolved (the same as Schedule when it has none).
  { name: "Resolved", type: "string", jsonPath: ".status.resolvedSchedule", priority: 1 },
  { name: "TimeZone", type: "string", jsonPath: ".spec.timeZone" },
  { name: "Suspend", type: "boolean", jsonPath: ".spec.suspend" },
  { name: "Active", type: "integer", jsonPath: ".status.activeCount" },
  { name: "Last Schedule", type: "date", jsonPath: ".status.lastScheduleTime" },
  { name: "Next Schedule", type: "string", jsonPath: ".status.nextScheduleTime" },
  { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
] as const;

/** Parse an object as a CronJob: defaults applied, or a field-named error list. Never throws. */
export function parseCronJob(obj: unknown): { ok: true; value: CronJob } | { ok: false; errors: FieldError[] } {
  return parseWithSchema(CronJobSchema, obj);
}

/** Parse an object with one version's schema: its output, or the issues as field errors at its paths. */
export function parseWithSchema<S extends z.ZodType>(
  schema: S,
  obj: unknown,
): { ok: true; value: z.output<S> } | { ok: false; errors: FieldError[] } {
  const r = schema.safeParse(obj);
  if (r.success) return { ok: true, value: r.data };
  return { ok: false, errors: r.error.issues.map((i) => toFieldError(i, obj)) };
}

function toFieldError(issue: z.core.$ZodIssue, root: unknown): FieldError {
  const path = issue.path.map((p) => (typeof p === "number" ? `[${p}]` : String(p)));
  const field = path.join(".").replace(/\.\[/g, "[") || "<root>";
  let value: unknown = root;
  for (const p of issue.path) {
    value = value !== null && typeof value === "object" ? (value as Record<PropertyKey, unknown>)[p] : undefined;
  }
  return value === undefined ? requiredField(field, issue.message) : invalidField(field, value, issue.message);
}

/** Render field errors the way apimachinery does: `spec.x: Invalid value: 5: must be ...`. */
export function formatFieldErrors(errors: readonly FieldError[]): string {
  return errors.map(fieldErrorString).join(", ");
}
