// The causes of a slot the operator decided not to run: missedRunPolicy chose not to, an exclusion window holds it,
// or the API server refused its Job. Rows of the one table (../causes.ts).
import { CALENDAR_KIND, CALENDAR_SINGULAR, RecordReason, RefusedReason } from "../../../../api/v1/index.ts";
import type { CauseParams } from "./params.ts";
import {
  type At,
  backfill,
  type Cause,
  cron,
  didNotRun,
  didNotRunAt,
  fixed,
  type Names,
  type Slot,
  when,
} from "./say.ts";

export const SKIPPED_CAUSES = [
  {
    id: "policy-skipped",
    title: "Not run: missedRunPolicy chose not to",
    detect:
      `A \`Skipped\` entry in \`status.recentRuns\`: ${RecordReason.MissedRunPolicySkip} (Skip runs only the announced time), ${RecordReason.RunAllLimit} ` +
      `(RunAll runs at most the newest 100), ${RecordReason.RunAllReplace} (RunAll with Replace runs only the newest).`,
    verdict: (p: Slot & Pick<CauseParams, "reason"> & Partial<Pick<CauseParams, "policy">>) =>
      didNotRunAt(p, `${p.policy ?? "missedRunPolicy chose not to run it"} (${p.reason})`),
    fix: (p: Names & Pick<CauseParams, "slot">) => [
      "Change `spec.missedRunPolicy` if the slot should have run.",
      `${backfill(p)} runs it now.`,
    ],
    alert: "CronJobMissedSchedule",
  },
  {
    id: "excluded",
    title: "Skipped: an exclusion window holds the slot",
    detect:
      `A \`Skipped\` entry with reason ${RecordReason.ExcludedByCalendar} in \`status.recentRuns\`: its \`exclusion\` ` +
      `names the calendar (none: \`spec.exclusions\`) and the window, one entry standing for a run of slots the same ` +
      `window held (\`firstSlot\`, \`slots\`); or, once the record no longer holds it, the slot inside a window of ` +
      `\`spec.exclusions.windows\` or of an ${CALENDAR_KIND} named in \`spec.exclusions.calendars\`, read in the ` +
      "schedule's zone. An excluded slot is not a missed run.",
    verdict: (p: At & Pick<CauseParams, "source" | "window">) => didNotRun(p, `excluded by ${p.source}: ${p.window}`),
    fix: (p: Names & Pick<CauseParams, "slot" | "calendar" | "byCalendar" | "ownWindow">) => [
      ...when(
        p.byCalendar,
        `If it should have run, change the window in ${CALENDAR_KIND} ${p.calendar} (every CronJob naming it skips ` +
          `it): \`kubectl edit ${CALENDAR_SINGULAR} ${p.calendar} -n ${p.namespace}\`.`,
      ),
      ...when(p.ownWindow, "If it should have run, change the window in the CronJob's `spec.exclusions.windows`."),
      `\`kubectl cron backfill ${p.name} -n ${p.namespace} --from=${p.slot} --to=${p.slot} --include-excluded\` runs ` +
        "the slot after all.",
    ],
  },
  {
    id: "create-refused-quota",
    title: "The Job's create was refused: a ResourceQuota is exhausted",
    detect:
      "A `Refused` entry with the API server's message (`exceeded quota`), and the namespace's ResourceQuotas with " +
      "their used and hard values.",
    verdict: (p: Slot & Required<Pick<CauseParams, "message">>) =>
      didNotRunAt(p, `the API server refused its Job: ${p.message}`),
    fix: fixed("Raise the quota, or free what it counts (old Jobs: lower `successfulJobsHistoryLimit`)."),
  },
  {
    id: "create-refused-admission",
    title: "The Job's create was refused by an admission webhook or policy",
    detect:
      "A `Refused` entry whose message names the webhook or policy that denied the Job (`admission webhook … denied`).",
    verdict: (p: Slot & Required<Pick<CauseParams, "message">>) =>
      didNotRunAt(p, `the API server refused its Job: ${p.message}`),
    fix: fixed("Change the Job template to satisfy the policy, or ask its owners for an exception."),
  },
  {
    id: "create-refused-name-taken",
    title: "A Job that is not this CronJob's holds the slot's name",
    detect: `A \`Refused\` entry with reason ${RefusedReason.AlreadyExists}; the Job with that name has no owner reference to this CronJob.`,
    verdict: (p: Slot & Pick<CauseParams, "message">) =>
      didNotRunAt(p, p.message || "a Job that is not this CronJob's holds the slot's name"),
    fix: fixed("Delete or rename the foreign Job; the slot runs at the next pass if it is still within its deadline."),
  },
  {
    id: "create-refused",
    title: "The Job's create was refused by the API server",
    detect: "A `Refused` entry with the API server's reason and message (Invalid, Forbidden, …).",
    verdict: (p: Slot & Pick<CauseParams, "reason" | "message">) =>
      didNotRunAt(p, `the API server refused its Job (${p.reason}): ${p.message ?? ""}`),
    fix: (p: Names) => [
      `Fix what the message names (usually the Job template); ${cron("run", p)} tries a run at once.`,
    ],
  },
] as const satisfies readonly Cause[];
