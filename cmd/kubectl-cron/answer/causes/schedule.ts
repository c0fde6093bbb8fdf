// The causes of the CronJob's own settings and its schedule: suspended, stopped after failures, a schedule that cannot
// be used or does not fire then, a slot before the CronJob was, a slot missed past startingDeadlineSeconds or a
// deadline shorter than the operator's lag. Rows of the one table (../causes.ts).
import { RecordReason } from "../../../../api/v1/index.ts";
import type { CauseParams } from "./params.ts";
import { type At, backfill, type Cause, cron, didNotRun, didNotRunAt, fixed, type Names, type Slot } from "./say.ts";

export const SCHEDULE_CAUSES = [
  {
    id: "suspended",
    title: "The CronJob is suspended",
    detect:
      "`spec.suspend` is true. Since when and by whom: the managedFields entry that owns `spec.suspend` (its manager " +
      "and time).",
    verdict: (p: At & Pick<CauseParams, "suspendedBy">) =>
      didNotRun(p, `the CronJob is suspended${p.suspendedBy ? ` (spec.suspend set by ${p.suspendedBy})` : ""}`),
    fix: (p: Names) => [
      `${cron("resume", p)} (a slot missed while suspended runs only if \`missedRunPolicy\` and ` +
        "`startingDeadlineSeconds` allow it).",
    ],
    next: () => "suspended: it will not run until resumed",
  },
  {
    id: "stopped-after-failures",
    title: "Scheduling stopped after failed runs in a row",
    detect:
      "`status.stopped` (when, after how many failures) with `spec.stopAfterConsecutiveFailures`; the failed Jobs " +
      "in `status.recentRuns` with their reasons.",
    verdict: (p: At & Pick<CauseParams, "stoppedAt" | "failures" | "limit">) =>
      didNotRun(
        p,
        `scheduling stopped at ${p.stoppedAt} after ${p.failures} failed runs in a row ` +
          `(spec.stopAfterConsecutiveFailures ${p.limit})`,
      ),
    fix: (p: Names) => [
      `Fix what makes the Jobs fail (see their outcome), then ${cron("resume", p)}, or change the spec.`,
    ],
    next: () => "stopped after failures: it will not run until resumed",
    alert: "CronJobStoppedAfterFailures",
  },
  {
    id: "invalid-schedule",
    title: "The schedule or time zone cannot be used",
    detect:
      "The Available condition is False with reason InvalidSchedule or UnknownTimeZone (its message names the field).",
    verdict: (p: At & Pick<CauseParams, "message">) =>
      p.when === undefined
        ? `never runs: its schedule cannot be used${p.message ? ` (${p.message})` : ""}`
        : didNotRun(p, p.message ?? "its schedule cannot be used"),
    fix: fixed(
      "Correct `spec.schedule` or `spec.timeZone`; `kubectl apply` shows the same error when the webhook is on.",
    ),
  },
  {
    id: "not-a-slot",
    title: "The schedule does not fire at that time",
    detect:
      "The asked time is not one of the schedule's slots: the slots around it are shown in the CronJob's zone and in " +
      "UTC, with what DST does that day (a skipped or repeated hour) and each `H` field resolved.",
    verdict: (p: Slot & Pick<CauseParams, "previousSlot" | "nextSlot">) =>
      `${p.when} is not a time this CronJob runs: the nearest slots are ` +
      `${p.previousSlot ? `${p.previousSlot} and ` : ""}${p.nextSlot}`,
    fix: (p: Names) => [
      `Check \`spec.timeZone\` (unset means UTC) and the resolved schedule (${cron("next", p)}); change the ` +
        "schedule if it is not what you meant.",
    ],
  },
  {
    id: "before-creation",
    title: "The CronJob did not exist yet at that time",
    detect:
      "The slot is at or before `metadata.creationTimestamp`: a CronJob runs the slots after its creation, as the " +
      "built-in does.",
    verdict: (p: Slot & Pick<CauseParams, "created" | "slot">) =>
      didNotRunAt(
        p,
        p.created === p.slot
          ? "the CronJob was created at that very second, and it runs the slots after its creation"
          : `the CronJob was created later, at ${p.created}`,
      ),
    fix: (p: Names & Pick<CauseParams, "slot">) => [`Nothing to fix; ${backfill(p)} runs the slot if you need it.`],
  },
  {
    id: "deadline-missed",
    title: "Missed: the operator reached the slot after startingDeadlineSeconds",
    detect:
      `A \`Missed\` entry with reason ${RecordReason.StartingDeadlineExceeded} in \`status.recentRuns\`: how late the operator decided ` +
      "(decidedAt minus the slot) against `startingDeadlineSeconds`, and why it was late: a leader change or no " +
      "leader (the Lease's acquireTime and renewTime), the operator down (no ready Pod), or a Job it was held behind.",
    verdict: (p: At & Pick<CauseParams, "recordLost" | "because"> & Partial<Pick<CauseParams, "late" | "deadline">>) =>
      didNotRun(
        p,
        p.recordLost
          ? "the operator reported it missed (status.lastMissedTime); the record no longer holds why"
          : `the operator reached it ${p.late} late, past startingDeadlineSeconds ${p.deadline}` +
              (p.because
                ? `, because ${p.because}`
                : " (no leader change or restart is on record: it was overloaded, or down without a trace left)"),
      ),
    fix: (p: Names & Pick<CauseParams, "slot">) => [
      "Raise `startingDeadlineSeconds` well above the operator's lag (or remove it); keep the operator running " +
        "with two replicas.",
      `${backfill(p)} runs the missed slot.`,
    ],
    alert: "CronJobMissedSchedule",
  },
  {
    id: "deadline-shorter-than-lag",
    title: "startingDeadlineSeconds is shorter than the operator's observed lag",
    detect:
      "The latest starts in `status.recentRuns` (decidedAt minus the slot) came close to or beyond " +
      "`startingDeadlineSeconds`.",
    verdict: (p: At & Pick<CauseParams, "deadline" | "lags"> & Partial<Pick<CauseParams, "late" | "worstLag">>) =>
      p.when === undefined
        ? `startingDeadlineSeconds ${p.deadline} leaves little room: recent runs started up to ${p.worstLag} s after their slot`
        : didNotRun(
            p,
            `startingDeadlineSeconds ${p.deadline} is shorter than the operator's lag: it reached the slot ${p.late} s ` +
              `after it${p.lags ? ` (recent runs started ${p.lags} s after their slot)` : ""}`,
          ),
    fix: fixed("Raise `startingDeadlineSeconds` (at least a few minutes), or remove it."),
  },
] as const satisfies readonly Cause[];
