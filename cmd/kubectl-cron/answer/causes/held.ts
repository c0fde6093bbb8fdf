// The causes of a slot held: behind a running Job (concurrencyPolicy Forbid), for a place in its concurrency group
// (full, older runs first, no such group), or for a calendar the operator cannot read. Rows of the one table
// (../causes.ts).
import {
  API_VERSION,
  CALENDAR_KIND,
  CALENDAR_PLURAL,
  CALENDAR_SINGULAR,
  CONCURRENCY_GROUP_LABEL,
  GROUP_KIND,
  RecordReason,
} from "../../../../api/v1/index.ts";
import type { CauseParams } from "./params.ts";
import { type At, type Cause, didNotRun, didNotRunAt, type Slot, waitsInGroup, when } from "./say.ts";

export const HELD_CAUSES = [
  {
    id: "forbid-held",
    title: "Held: concurrencyPolicy Forbid and the previous Job is still running",
    detect:
      "A `Held` entry in `status.recentRuns` names the Job it waits behind (blockedBy); that Job's age, its " +
      "`activeDeadlineSeconds` and `backoffLimit`, and its Pods (CrashLoopBackOff, restarts, Pending).",
    verdict: (
      p: Slot &
        Pick<CauseParams, "job" | "running" | "pastDeadline"> &
        Partial<Pick<CauseParams, "age" | "bounds" | "deadline">>,
    ) =>
      didNotRunAt(
        p,
        p.pastDeadline
          ? `held by concurrencyPolicy Forbid behind Job ${p.job} until startingDeadlineSeconds (${p.deadline}) passed` +
              (p.running ? `; that Job has been running for ${p.age} (${p.bounds})` : "")
          : `concurrencyPolicy Forbid and Job ${p.job} ` +
              (p.running
                ? `has been running for ${p.age} (${p.bounds}); it will not run until that Job ends`
                : "was still running"),
      ),
    fix: (p: Pick<CauseParams, "namespace" | "job" | "running" | "noActiveDeadline">) => [
      ...when(p.running, `Delete the hung Job: \`kubectl delete job ${p.job} -n ${p.namespace}\`.`),
      ...when(
        p.noActiveDeadline,
        "Set `spec.jobTemplate.spec.activeDeadlineSeconds` below the schedule's interval, and a small " +
          "`backoffLimit`, so a run cannot hold the next ones.",
      ),
    ],
    /** Its Jobs running now (`job`, by commas). */
    next: (p: Pick<CauseParams, "job">) => `concurrencyPolicy Forbid: it will not run while ${p.job} runs`,
    alert: "CronJobBlockedByRunningJob",
  },
  {
    id: "group-full",
    alert: "CronJobConcurrencyGroupWaiting",
    title: "Held: its concurrency group is full",
    detect:
      `A \`Held\` entry with reason ${RecordReason.ConcurrencyGroupFull} in \`status.recentRuns\` (a \`Missed\` one when ` +
      "`startingDeadlineSeconds` passed meanwhile, its blockedBy a Job of the group); the group's `spec.limit` (its " +
      `ConcurrencyGroup) and the Jobs holding its places: the namespace's unfinished Jobs labelled ` +
      `\`${CONCURRENCY_GROUP_LABEL}\`, whichever CronJob made them (a queued, suspended one too), and the runs waiting ` +
      "for a place, oldest first, with the CronJob's place among them. A run-now or backfill request held so (the " +
      "CronJob's newest `Held` entry has trigger RunNow or Backfill, and the request has no Job yet) is said the same " +
      'way, the request in place of the slot (`run-now request "REQUEST" has not run: it waits for a place in group ' +
      "GROUP, …`), when no `--slot` is asked and the latest slot has no problem of its own (a suspended CronJob's " +
      "requests still run).",
    verdict: (
      p: Slot &
        Pick<CauseParams, "group" | "inUse" | "groupLimit" | "pastDeadline"> &
        Partial<Pick<CauseParams, "deadline" | "asked">>,
    ) =>
      waitsInGroup(
        p,
        p.pastDeadline
          ? `it waited for a place in group ${p.group} (now at ${p.inUse}/${p.groupLimit}) until startingDeadlineSeconds (${p.deadline}) passed`
          : `it waits for a place in group ${p.group}, which is at ${p.inUse}/${p.groupLimit}`,
      ),
    fix: (
      p: Pick<CauseParams, "namespace" | "group" | "newLimit" | "job" | "owner" | "running" | "pastDeadline"> &
        Partial<Pick<CauseParams, "asked">>,
    ) => [
      ...when(
        !p.pastDeadline,
        "Wait: it starts when a Job of the group ends (the group's oldest waiting run first), a slot within its " +
          "`startingDeadlineSeconds`.",
      ),
      `The group's running Jobs and waiting runs: \`kubectl cron groups ${p.group} -n ${p.namespace}\`.`,
      `Let more run at once: \`kubectl patch concurrencygroup ${p.group} -n ${p.namespace} --type merge -p '{"spec":{"limit":${p.newLimit}}}'\`.`,
      ...when(
        p.running,
        `Look at the Job holding a place, ${p.job} of CronJob ${p.owner}: \`kubectl cron why ${p.owner} -n ${p.namespace}\`; ` +
          `if it hangs, \`kubectl delete job ${p.job} -n ${p.namespace}\`.`,
      ),
      ...when(!p.asked, "Give runs longer to wait for a place: raise `startingDeadlineSeconds` (or remove it)."),
    ],
    /** The group full now. */
    next: (p: Pick<CauseParams, "group" | "inUse" | "groupLimit">) =>
      `group ${p.group} is at ${p.inUse}/${p.groupLimit}: it waits for a place`,
  },
  {
    id: "group-queue",
    alert: "CronJobConcurrencyGroupWaiting",
    title: "Held: older runs of its concurrency group wait first",
    detect:
      `A \`Held\` entry with reason ${RecordReason.ConcurrencyGroupQueue} in \`status.recentRuns\`: the group has a ` +
      "place, but runs of its other CronJobs held since before this one take the next places first (oldest first); " +
      "they are the members whose newest `Held` entry the group decided and that have not run since (no Job of it " +
      "yet). A run-now or backfill request held so is said the same way, as the run that has not run yet.",
    verdict: (
      p: Slot &
        Pick<CauseParams, "group" | "inUse" | "groupLimit" | "waitingFirst"> &
        Partial<Pick<CauseParams, "asked">>,
    ) =>
      waitsInGroup(
        p,
        `group ${p.group} is at ${p.inUse}/${p.groupLimit} and older runs ` +
          `${p.waitingFirst ? `of ${p.waitingFirst} ` : "of its other CronJobs "}wait for its next place first`,
      ),
    fix: (p: Pick<CauseParams, "namespace" | "group" | "newLimit">) => [
      "Wait: the group's runs take its places oldest first, each within its `startingDeadlineSeconds`.",
      `The group's running Jobs and waiting runs: \`kubectl cron groups ${p.group} -n ${p.namespace}\`.`,
      `Let more run at once: \`kubectl patch concurrencygroup ${p.group} -n ${p.namespace} --type merge -p '{"spec":{"limit":${p.newLimit}}}'\`.`,
    ],
  },
  {
    id: "group-not-found",
    title: "Held: spec.concurrencyGroup names a group that does not exist",
    detect:
      `A \`Held\` entry with reason ${RecordReason.ConcurrencyGroupNotFound} (and the condition Degraded=True, reason ` +
      `${RecordReason.ConcurrencyGroupNotFound}), or \`spec.concurrencyGroup\` naming no ${GROUP_KIND} of the CronJob's ` +
      "namespace: its runs wait until the group exists.",
    verdict: (
      p: At & Pick<CauseParams, "group" | "namespace" | "pastDeadline"> & Partial<Pick<CauseParams, "asked">>,
    ) =>
      waitsInGroup(
        p,
        `spec.concurrencyGroup names ${p.group}, which is not a ${GROUP_KIND} of namespace ${p.namespace}: ` +
          (p.pastDeadline ? "it waited until startingDeadlineSeconds passed" : "its runs wait until it exists"),
      ),
    fix: (p: Pick<CauseParams, "namespace" | "group">) => [
      `Create it: \`echo '{"apiVersion":"${API_VERSION}","kind":"${GROUP_KIND}","metadata":{"name":"${p.group}","namespace":"${p.namespace}"},"spec":{"limit":1}}' | kubectl apply -f -\` (its limit: how many Jobs of its CronJobs run at once).`,
      `Or name a group that exists in \`spec.concurrencyGroup\` (\`kubectl get concurrencygroups -n ${p.namespace}\`), or remove it.`,
    ],
    next: (p: Pick<CauseParams, "group">) => `${GROUP_KIND} ${p.group} does not exist: it will not run until it does`,
  },
  {
    id: "calendar-not-found",
    title: "Held: spec.exclusions.calendars names a calendar that does not exist or does not parse",
    detect:
      `A \`Held\` entry with reason ${RecordReason.CalendarNotFound} (and the condition Degraded=True, reason ` +
      `${RecordReason.CalendarNotFound}), or a name in \`spec.exclusions.calendars\` that is no ${CALENDAR_KIND} of ` +
      "the CronJob's namespace, or one whose windows do not parse: the operator holds every slot until it can read " +
      "them, rather than run through a freeze it cannot see.",
    verdict: (p: At & Pick<CauseParams, "calendar" | "namespace" | "calendarMissing" | "pastDeadline" | "message">) =>
      didNotRun(
        p,
        (p.calendarMissing
          ? `spec.exclusions.calendars names ${p.calendar}, which is not an ${CALENDAR_KIND} of namespace ${p.namespace}`
          : `${CALENDAR_KIND} ${p.calendar} cannot be read${p.message ? ` (${p.message})` : ""}`) +
          (p.pastDeadline
            ? ": the slot was held until startingDeadlineSeconds passed"
            : `: its slots are held until it ${p.calendarMissing ? "exists" : "is fixed"}`),
      ),
    fix: (p: Pick<CauseParams, "namespace" | "calendar" | "calendarMissing" | "calendarInvalid">) => [
      ...when(
        p.calendarMissing,
        `Create it, or correct the name (\`kubectl get ${CALENDAR_PLURAL} -n ${p.namespace}\` lists those that exist), ` +
          "or remove it from `spec.exclusions.calendars`.",
      ),
      ...when(
        p.calendarInvalid,
        `Correct its windows (the message names the field): \`kubectl edit ${CALENDAR_SINGULAR} ${p.calendar} -n ${p.namespace}\`.`,
      ),
      "Once it can be read, the held slot runs within its `startingDeadlineSeconds`, as `spec.missedRunPolicy` runs " +
        "missed slots.",
    ],
    /** No `calendar`: the CronJob's own windows, or a name that is no calendar's, do not parse. */
    next: (p: Pick<CauseParams, "calendarMissing"> & Partial<Pick<CauseParams, "calendar">>) =>
      `${p.calendar === undefined ? "spec.exclusions" : `${CALENDAR_KIND} ${p.calendar}`} ` +
      (p.calendarMissing
        ? "does not exist: it will not run until it does"
        : "cannot be read: it will not run until it is fixed"),
  },
] as const satisfies readonly Cause[];
