// spec.after's API types (the CronJob's schema imports them; the rest of spec.after is api/v1/after.ts, which reads
// Jobs). Pure.
import { z } from "zod";
import { MAX_CRONJOB_NAME_LENGTH } from "./groupversion_info.ts";
import { TimeSchema } from "./meta.ts";

/** The most upstreams one CronJob may name. */
export const MAX_UPSTREAMS = 5;
/** How long an upstream's chain may be, at most, when admission walks it for a cycle. */
export const MAX_AFTER_DEPTH = 50;

const NAME_PATTERN = /^[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/;

/** What end of an upstream's run a downstream runs after. */
export const AFTER_WHEN = {
  Succeeded: "its run succeeded (the Job completed)",
  Failed: "its run failed",
  Finished: "its run ended, either way",
} as const;
export type AfterWhen = keyof typeof AFTER_WHEN;

export const UpstreamSchema = z
  .object({
    cronJob: z
      .string()
      .min(1)
      .max(MAX_CRONJOB_NAME_LENGTH)
      .regex(NAME_PATTERN, { message: "must be the name of a CronJob of this namespace (no namespace/ prefix)" })
      .meta({ description: "The upstream: a CronJob of this namespace." }),
    when: z
      .enum(Object.keys(AFTER_WHEN) as [AfterWhen, ...AfterWhen[]])
      .optional()
      .meta({
        description: `Which of its runs: ${Object.entries(AFTER_WHEN)
          .map(([k, v]) => `${k} (${v})`)
          .join(", ")}. Unset: Succeeded.`,
      }),
  })
  .meta({ description: "A CronJob whose ended runs this one runs after." });

export const AfterSpecSchema = z
  .array(UpstreamSchema)
  .min(1)
  .max(MAX_UPSTREAMS)
  .meta({
    "x-kubernetes-list-type": "atomic",
    description:
      "Run once after each run of these CronJobs (of this namespace) that ends as `when` says, with or without a " +
      `schedule of its own; at most ${MAX_UPSTREAMS}. The concurrency policy, suspend, startingDeadlineSeconds ` +
      "(counted from the upstream run's end), groups, calendars and retries apply to these runs as to any. A cycle " +
      "is refused.",
  });

export const UpstreamBookSchema = z
  .object({
    cronJob: z.string().max(MAX_CRONJOB_NAME_LENGTH).meta({ description: "The upstream (spec.after[].cronJob)." }),
    lastEnded: TimeSchema.meta({ description: "The end of its newest run decided about (run, skipped or missed)." }),
    lastJob: z.string().max(253).optional().meta({ description: "That run's Job." }),
  })
  .meta({ description: "How far this CronJob has decided about an upstream's runs." });
