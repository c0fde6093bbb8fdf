// status.recentRuns: the operator's record of its recent decisions, one entry per slot or request it decided
// about, newest first. It is what `kubectl cron why` answers from once the Events are gone (the API server keeps
// them an hour), so every entry says what was decided and why in stored state. Written by the reconciler in the
// status write a pass already makes (controllers/record.ts); its shape is here, with the API.
import { z } from "zod";
import { GROUP } from "./groupversion_info.ts";
import { TimeSchema } from "./meta.ts";
import {
  CALENDAR_PROBLEMS,
  CalendarProblem,
  ENDED_REASONS,
  EndedReason,
  listed,
  PODS_SHOWED,
  PodsShowed,
  OUTCOME_RESULTS,
  OutcomeResult,
  RECORD_DECISIONS,
  RECORD_REASONS,
  RECORD_TRIGGERS,
  RecordDecision,
  RecordTrigger,
  RefusedReason,
} from "./reasons.ts";
import { documentedKey } from "./metadata.ts";
import { MAX_RETRY_LIMIT } from "./retry.ts";

/**
 * On a Job: what the record says of its run that the Job's name and slot do not. Written when the Job is created,
 * so the record's entry rebuilt from the Job (a status write lost to a crash, or deferred under load) is the one
 * the run path wrote. CATCH_UP_ANNOTATION: "true" on an older missed slot's Job run by missedRunPolicy RunAll;
 * REPLACED_ANNOTATION: the Jobs deleted to run it (concurrencyPolicy Replace), comma-separated.
 */
export const CATCH_UP_ANNOTATION = documentedKey(`${GROUP}/catch-up`, () => ({
  on: "Job of an older missed slot run by `missedRunPolicy: RunAll`",
  setBy: "the controller",
  format: '`"true"`',
  meaning:
    "The run caught up a missed slot (a newer one was due too): its `status.recentRuns` entry has trigger Schedule " +
    "and reason MissedRunPolicyRunAll, also when it is rebuilt from the Job after a lost status write.",
}));
export const REPLACED_ANNOTATION = documentedKey(`${GROUP}/replaced`, () => ({
  on: "Job that replaced running Jobs (`concurrencyPolicy: Replace`)",
  setBy: "the controller",
  format: "the deleted Jobs' names, comma-separated",
  meaning:
    "The Jobs deleted to run this one: `status.recentRuns` lists them in its entry's `replaced`, also when the entry " +
    "is rebuilt from the Job.",
}));

/** The job with the record's facts of its run as annotations (none when it has none). */
export function withRunFacts<J extends { metadata?: { annotations?: Record<string, string> } }>(
  job: J,
  facts: { catchUp?: boolean | undefined; replaced?: readonly string[] | undefined },
): J {
  const add: Record<string, string> = {};
  if (facts.catchUp) add[CATCH_UP_ANNOTATION] = "true";
  if (facts.replaced?.length) add[REPLACED_ANNOTATION] = facts.replaced.join(",");
  if (!Object.keys(add).length) return job;
  return { ...job, metadata: { ...job.metadata, annotations: { ...job.metadata?.annotations, ...add } } };
}

/** The facts withRunFacts wrote on a Job. */
export function runFactsOf(job: { metadata?: { annotations?: Record<string, string> } }): {
  catchUp: boolean;
  replaced: string[];
} {
  const a = job.metadata?.annotations ?? {};
  const replaced = a[REPLACED_ANNOTATION]?.split(",").filter((n) => n) ?? [];
  return { catchUp: a[CATCH_UP_ANNOTATION] === "true", replaced };
}

const INT32_MAX = 2 ** 31 - 1;

/** The most entries status.recentRuns keeps. */
export const MAX_RECENT_RUNS = 10;
/** The longest message an entry keeps (an API server's refusal can be long). */
export const MAX_RECORD_MESSAGE_LENGTH = 512;

// Its words (trigger, decision, reason, outcome) and what they mean: api/v1/reasons.ts.
export const RecentRunSchema = z
  .object({
    trigger: z.enum(RecordTrigger).meta({ description: `What asked for the run: ${listed(RECORD_TRIGGERS)}.` }),
    scheduledTime: TimeSchema.optional().meta({
      description: "The slot decided about (Schedule, CatchUp, Backfill); absent for a run-now request.",
    }),
    request: z.string().max(256).optional().meta({
      description: "The run-now request, or the backfill request's id.",
    }),
    decision: z.enum(RecordDecision).meta({ description: `${listed(RECORD_DECISIONS)}.` }),
    reason: z
      .string()
      .max(64)
      .meta({
        description:
          `Why, in one CamelCase word: ${Object.keys(RECORD_REASONS).join(", ")}; for Refused, the API server's ` +
          `reason (Forbidden, Invalid, ${RefusedReason.AlreadyExists}: a Job this CronJob does not control holds ` +
          "the name, ...).",
      }),
    message: z.string().max(MAX_RECORD_MESSAGE_LENGTH).optional().meta({
      description: "The decision in words, with the values it was made on (a refusal: the API server's message).",
    }),
    decidedAt: TimeSchema.meta({
      description:
        "When the operator made the decision (for Created: the Job's creation). decidedAt minus scheduledTime is " +
        "how late the operator reached the slot.",
    }),
    job: z.string().max(253).optional().meta({ description: "The Job that runs it (Created, Adopted)." }),
    blockedBy: z.string().max(253).optional().meta({
      description: "Held: the running Job it waits behind.",
    }),
    replaced: z
      .array(z.string().max(253))
      .max(MAX_RECENT_RUNS)
      .optional()
      .meta({ "x-kubernetes-list-type": "atomic", description: "Jobs deleted to run it (concurrencyPolicy Replace)." }),
    attempt: z
      .object({
        number: z
          .int()
          .min(1)
          .max(MAX_RETRY_LIMIT)
          .meta({ format: "int32", description: "Which retry of its slot (1: the first)." }),
        of: z
          .int()
          .min(1)
          .max(MAX_RETRY_LIMIT)
          .meta({ format: "int32", description: "The retries allowed (spec.retry.limit)." }),
        after: z.string().max(253).meta({ description: "The Job whose failure it follows." }),
        failure: z
          .string()
          .max(64)
          .optional()
          .meta({
            description: `How that Job failed: its Failed condition's reason, or ${Object.keys(ENDED_REASONS).join(", ")}.`,
          }),
      })
      .optional()
      .meta({ description: "Trigger Retry: which attempt it is, and the failed run it follows." }),
    startsAt: TimeSchema.optional().meta({
      description: "Held (RetryDelay): when the attempt starts (the failure plus spec.retry.delaySeconds).",
    }),
    supersededBy: TimeSchema.optional().meta({
      description: "Skipped (RetrySuperseded): the newer slot whose run started first.",
    }),
    exclusion: z
      .object({
        calendar: z.string().max(253).optional().meta({
          description: "The ExclusionCalendar; absent: the CronJob's own spec.exclusions.windows.",
        }),
        window: z.string().max(MAX_RECORD_MESSAGE_LENGTH).optional().meta({
          description: "ExcludedByCalendar: the window that held the slot, as written.",
        }),
        firstSlot: TimeSchema.optional().meta({
          description: "ExcludedByCalendar: the first of the slots in a row the window held (scheduledTime: the last).",
        }),
        slots: z.int().min(1).max(INT32_MAX).optional().meta({
          format: "int32",
          description: "ExcludedByCalendar: how many slots in a row the window held.",
        }),
        problem: z
          .enum(CalendarProblem)
          .optional()
          .meta({
            description: `CalendarNotFound: ${listed(CALENDAR_PROBLEMS)}.`,
          }),
      })
      .optional()
      .meta({ description: "ExcludedByCalendar, CalendarNotFound: the exclusion that held the slot." }),
    outcome: z
      .object({
        result: z.enum(OutcomeResult).meta({ description: `How the Job ended: ${listed(OUTCOME_RESULTS)}.` }),
        reason: z
          .string()
          .max(64)
          .optional()
          .meta({
            description: `The Job's Failed condition reason, or ${Object.keys(ENDED_REASONS).join(", ")}.`,
          }),
        message: z.string().max(MAX_RECORD_MESSAGE_LENGTH).optional().meta({
          description: "The Job's Failed condition message.",
        }),
        finishedAt: TimeSchema.optional().meta({ description: "When the Job ended." }),
        pods: z
          .enum(PodsShowed)
          .optional()
          .meta({
            description: `${EndedReason.StartTimeout}: what its Pods showed: ${listed(PODS_SHOWED)}.`,
          }),
      })
      .optional()
      .meta({ description: "How its Job ended, once it has (absent while it runs, or for a run not started)." }),
  })
  .meta({ description: "One decision the operator made about a slot or a request." });
export type RecentRun = z.infer<typeof RecentRunSchema>;

/** The field as the CRD declares it. */
export const RecentRunsSchema = z
  .array(RecentRunSchema)
  .max(MAX_RECENT_RUNS)
  .meta({
    "x-kubernetes-list-type": "atomic",
    description:
      `The operator's ${MAX_RECENT_RUNS} newest decisions (newest first): for each slot or request it decided ` +
      "about, its trigger, what it decided and why, the Job and, once it ended, how. It outlives the Events " +
      "(kept an hour by the API server); `kubectl cron why` reads it.",
  });

/** A stored entry as the reconciler reads it (the CRD guarantees the JSON types only). */
export const RecentRunWireSchema = z.looseObject({
  trigger: z.string(),
  scheduledTime: z.string().optional(),
  request: z.string().optional(),
  decision: z.string(),
  reason: z.string(),
  message: z.string().optional(),
  decidedAt: z.string(),
  job: z.string().optional(),
  blockedBy: z.string().optional(),
  replaced: z.array(z.string()).optional(),
  attempt: z
    .looseObject({ number: z.number(), of: z.number(), after: z.string(), failure: z.string().optional() })
    .optional(),
  startsAt: z.string().optional(),
  supersededBy: z.string().optional(),
  exclusion: z
    .looseObject({
      calendar: z.string().optional(),
      window: z.string().optional(),
      firstSlot: z.string().optional(),
      slots: z.number().optional(),
      problem: z.string().optional(),
    })
    .optional(),
  outcome: z
    .looseObject({
      result: z.string(),
      reason: z.string().optional(),
      message: z.string().optional(),
      finishedAt: z.string().optional(),
      pods: z.string().optional(),
    })
    .optional(),
});
export type RecentRunWire = z.infer<typeof RecentRunWireSchema>;
