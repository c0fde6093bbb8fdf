// The one table of why a CronJob did not run (or ran and did nothing): each cause, how `kubectl cron why` detects
// it, and what to do. The command's verdicts name a row, and their fixes are the row's `fix` said with the names
// the diagnosis found, as what it says keeps the next slot from running is a row's `next`; docs/troubleshooting.md's
// list of causes and the runbooks' lists are generated from this table, each fix said with PLACEHOLDERS
// (test/unit/troubleshooting.test.ts and causes-words.test.ts check both).
import {
  API_VERSION,
  CALENDAR_KIND,
  CALENDAR_PLURAL,
  CALENDAR_SINGULAR,
  CONCURRENCY_GROUP_LABEL,
  ENDED_MESSAGE_ANNOTATION,
  ENDED_PODS_ANNOTATION,
  ENDED_REASON_ANNOTATION,
  EndedReason,
  GROUP_KIND,
  KUEUE_QUEUE_NAME_KEY,
  RecordReason,
  RefusedReason,
  RETRY_CAUSES,
  RUN_NOW_CAUSES,
  type AfterWhen,
  offsetText,
  type ScheduleEnd,
  scheduleEndText,
} from "../../../api/v1/index.ts";

/**
 * What a cause's verdict and fix are said with: the facts the diagnosis found (the docs: PLACEHOLDERS), and which
 * of a row's conditional words the facts call for (the docs show one choice of them, every fix line).
 */
interface CauseParams {
  /** The CronJob and its namespace. */
  name: string;
  namespace: string;
  /** A Job of the CronJob (several: separated by spaces; in forbid-held's `next`, by commas). */
  job: string;
  /** A Pod of a Job. */
  pod: string;
  /** The slot, RFC 3339 in UTC. */
  slot: string;
  /**
   * The slot in words, as the verdict names it ("did not run at SLOT: …"); absent, the words are a finding besides
   * the verdict (`also`), about no slot.
   */
  when?: string;
  /** The slot is still to come: "will not run at SLOT: …". */
  toCome: boolean;
  /** Where the operator was looked for, and its Pods' label selector. */
  operatorNamespace: string;
  operatorSelector: string;
  /** forbid-held, group-full: the Job it waits behind still runs. */
  running: boolean;
  /** forbid-held: that Job has no activeDeadlineSeconds (or it is not known to have one). */
  noActiveDeadline: boolean;
  /**
   * forbid-held, group-full, group-not-found: the record says the slot was missed while it waited
   * (startingDeadlineSeconds passed).
   */
  pastDeadline: boolean;
  /**
   * group-full, group-queue, group-not-found: the verdict is about a run-now or backfill request waiting for a place in
   * its group, not a slot: `when` names the request (REQUESTED's words), which "has not run" yet.
   */
  asked: boolean;
  /** It ran: seconds from the slot to its Job's creation, and how long the Job took (when known). */
  createdAfter?: string;
  took?: string;
  /** How long: a running Job's age, a Job without Pods, a slot not decided about, a Lease not renewed. */
  age: string;
  /** forbid-held: what bounds the running Job (activeDeadlineSeconds, backoffLimit, its Pods' restarts). */
  bounds: string;
  /** job-failed: a container was OOMKilled. */
  oomKilled: boolean;
  /** job-failed: the Job failed with DeadlineExceeded. */
  deadlineExceeded: boolean;
  /** clock-skew: this machine's clock is the one off (else the leader's). */
  localClock: boolean;
  /** clock-skew: the clock is behind (else ahead), and by how much. */
  behind: boolean;
  skew: string;
  /** A reason (a condition's, a record entry's, a container's waiting or a Job's failure). */
  reason: string;
  /** A message (a condition's, the API server's, a Job's failure), when there is one. */
  message?: string;
  /** suspended: who set spec.suspend, and when (managedFields), when known. */
  suspendedBy?: string;
  /** stopped-after-failures: when, after how many failures, and the spec's limit. */
  stoppedAt: string;
  failures: string;
  limit: string;
  /** before-creation: metadata.creationTimestamp. */
  created: string;
  /** not-a-slot: the schedule's slots before (if any) and after the asked time. */
  previousSlot?: string;
  nextSlot: string;
  /** startingDeadlineSeconds. */
  deadline: string;
  /** How late the operator reached the slot (deadline-missed in words, deadline-shorter-than-lag in seconds). */
  late: string;
  /** The lags (seconds) of recent runs, and the largest. */
  lags?: string;
  worstLag: string;
  /** deadline-missed: why the operator was late (a leader change, a restart), when on record. */
  because?: string;
  /** deadline-missed: only status.lastMissedTime says the slot was missed; the record no longer holds why. */
  recordLost: boolean;
  /** policy-skipped: what the policy's reason means; run-now-waiting: the concurrencyPolicy. */
  policy: string;
  /** crash-looping: the container's restarts, and its last exit code when known. */
  restarts: string;
  exitCode?: string;
  /** run-now-waiting: the run-now request. */
  request: string;
  /** operator-no-leader: there is no Lease (or none renewed); its namespace/name, and its last holder. */
  noLease: boolean;
  lease: string;
  holder?: string;
  /**
   * instance-down: the install that claims the namespace (`<its namespace>/<its leader-election id>`), its namespace,
   * and the instance holding the claim (the claim's spec.holderIdentity).
   */
  install: string;
  installNamespace: string;
  instance: string;
  /** operator-unclear: the signs that say it is down, and those that say it works. */
  downSigns: string;
  upSigns: string;
  /** operator-webhook-failing: the webhook, and its Service. */
  webhook: string;
  service: string;
  /** group-*: the concurrency group spec.concurrencyGroup names. */
  group: string;
  /** group-full, group-queue: how many of its places are taken now, its limit, and a limit one higher. */
  inUse: string;
  groupLimit: string;
  newLimit: string;
  /** group-full: the CronJob of the Job it waits behind (a Job of the group, maybe another CronJob's). */
  owner: string;
  /** group-queue: the CronJobs whose older runs wait first, when they still wait. */
  waitingFirst?: string;
  /** start-timeout: spec.startTimeoutSeconds when the run was ended, in seconds ("300s"). */
  timeout: string;
  /** start-timeout: what its Pods showed: an image that could not be pulled, no node that fits, no Pod at all. */
  imagePull: boolean;
  unschedulable: boolean;
  noPod: boolean;
  /** job-queued: who suspended the Job (Kueue and its queue, spec.managedBy, …), and since when. */
  queuedBy: string;
  since?: string;
  /** job-queued: Kueue holds it. */
  kueue: boolean;
  /** excluded: what holds the slot, as the record names it ("calendar holidays-de", "spec.exclusions"), and the window. */
  source: string;
  window: string;
  /** excluded, calendar-not-found: the ExclusionCalendar (spec.exclusions.calendars). */
  calendar: string;
  /** excluded: a window of that calendar holds it; a window of the CronJob's own (spec.exclusions.windows) does. */
  byCalendar: boolean;
  ownWindow: boolean;
  /** calendar-not-found: it does not exist; its windows do not parse (`message` says where). */
  calendarMissing: boolean;
  calendarInvalid: boolean;
  /**
   * A run of spec.retry: attempt ATTEMPT (1 is the first retry) of the ATTEMPTS spec.retry.limit allows, after Job
   * FAILED_JOB (the attempt before it) failed.
   */
  attempt?: string;
  attempts: string;
  failedJob: string;
  /** retry-pending: when the attempt starts (the failure plus spec.retry.delaySeconds), and that it is late. */
  startsAt: string;
  overdue: boolean;
  /** retry-pending: it waits besides its delay (`waiting`), and for what (concurrencyPolicy Forbid, its group). */
  waiting: boolean;
  waits: string;
  /** retry-superseded: the newer slot's run that started first. */
  newerRun: string;
  /**
   * Scheduling ended: by spec.maxRuns (`byMaxRuns`: MADE of MAX_RUNS runs made), else by spec.endTime (END_TIME,
   * RFC 3339 in UTC). As api/v1/limits.ts scheduleEndText says it (the Available condition's message).
   */
  byMaxRuns: boolean;
  made: string;
  maxRuns: string;
  endTime: string;
  /** Before spec.startTime: it (RFC 3339 in UTC). */
  startTime: string;
  /** A slot of spec.jitter: its offset ("37s"). */
  offset: string;
  /**
   * spec.after: the upstream CronJob, its run (its slot in words), that run's Job, since when it runs, whether it
   * failed (else succeeded), and what spec.after[].when waits for, in words (AFTER_WHEN_WORDS).
   */
  upstream: string;
  upstreamRun: string;
  upstreamJob: string;
  runningSince: string;
  upstreamFailed: boolean;
  upstreamWhen: string;
  /** after-cycle: the path ("load runs after extract runs after load"). */
  cycle: string;
}

/** The names and words the docs say a cause with: every placeholder, every fix line, the verdict's usual words. */
export const PLACEHOLDERS: Required<CauseParams> = {
  name: "NAME",
  namespace: "NAMESPACE",
  job: "JOB",
  pod: "POD",
  slot: "SLOT",
  when: "SLOT",
  toCome: false,
  operatorNamespace: "OPERATOR_NAMESPACE",
  operatorSelector: "SELECTOR",
  running: true,
  noActiveDeadline: true,
  pastDeadline: false,
  asked: false,
  createdAfter: "CREATED_AFTER",
  took: "DURATION",
  age: "AGE",
  bounds: "BOUNDS",
  oomKilled: true,
  deadlineExceeded: true,
  localClock: true,
  behind: false,
  skew: "SKEW",
  reason: "REASON",
  message: "MESSAGE",
  suspendedBy: "MANAGER",
  stoppedAt: "STOPPED_AT",
  failures: "FAILURES",
  limit: "LIMIT",
  created: "CREATED",
  previousSlot: "PREVIOUS_SLOT",
  nextSlot: "NEXT_SLOT",
  deadline: "DEADLINE",
  late: "LATE",
  lags: "LAGS",
  worstLag: "LAG",
  because: "BECAUSE",
  recordLost: false,
  policy: "POLICY",
  restarts: "RESTARTS",
  exitCode: "EXIT_CODE",
  request: "REQUEST",
  noLease: false,
  lease: "LEASE",
  holder: "HOLDER",
  install: "INSTALL",
  installNamespace: "INSTALL_NAMESPACE",
  instance: "INSTANCE",
  downSigns: "DOWN_SIGNS",
  upSigns: "UP_SIGNS",
  webhook: "WEBHOOK",
  service: "SERVICE",
  group: "GROUP",
  inUse: "IN_USE",
  groupLimit: "GROUP_LIMIT",
  newLimit: "NEW_LIMIT",
  owner: "OWNER",
  waitingFirst: "WAITING",
  timeout: "TIMEOUT",
  imagePull: true,
  unschedulable: true,
  noPod: true,
  queuedBy: "QUEUED_BY",
  since: "SINCE",
  kueue: true,
  source: "SOURCE",
  window: "WINDOW",
  calendar: "CALENDAR",
  byCalendar: true,
  ownWindow: true,
  calendarMissing: true,
  calendarInvalid: true,
  attempt: "ATTEMPT",
  attempts: "ATTEMPTS",
  failedJob: "FAILED_JOB",
  startsAt: "STARTS_AT",
  overdue: false,
  waiting: false,
  waits: "WAITS",
  newerRun: "NEWER_RUN",
  byMaxRuns: true,
  made: "MADE",
  maxRuns: "MAX_RUNS",
  endTime: "END_TIME",
  startTime: "START_TIME",
  offset: "OFFSET",
  upstream: "UPSTREAM",
  upstreamRun: "UPSTREAM_RUN",
  upstreamJob: "UPSTREAM_JOB",
  runningSince: "RUNNING_SINCE",
  upstreamFailed: true,
  upstreamWhen: "UPSTREAM_WHEN",
  cycle: "CYCLE",
};

interface Cause {
  /** Stable id: the JSON output's `cause`, and the anchor of its section in docs/troubleshooting.md. */
  readonly id: string;
  /** One line: what happened. */
  readonly title: string;
  /** How `kubectl cron why` finds it, from which live state. */
  readonly detect: string;
  /**
   * What `kubectl cron why` says, one line: its verdict on the slot (`when` given: "did not run at SLOT: …"), or
   * a finding besides it (no `when`); with PLACEHOLDERS, the docs'.
   */
  readonly verdict: (p: Required<CauseParams>) => string;
  /** What to do, one line each: the command's fix lines, and (with PLACEHOLDERS) the docs'. */
  readonly fix: (p: CauseParams) => string[];
  /**
   * What `kubectl cron why` says after the next slot's time (`Next: TIME; WORDS`) when the cause holds now and will
   * keep that slot from running: which cause it is, said with the facts found (nextOf).
   */
  readonly next?: (p: Required<CauseParams>) => string;
  /** The alert whose runbook covers it, when one does. */
  readonly alert?: string;
}

type Names = Pick<CauseParams, "name" | "namespace">;
/** A fix that names nothing. */
const fixed =
  (...lines: string[]) =>
  (): string[] =>
    lines;
/** `kubectl cron VERB NAME -n NAMESPACE`. */
const cron = (verb: string, p: Names) => `\`kubectl cron ${verb} ${p.name} -n ${p.namespace}\``;
/** The backfill of one slot. */
const backfill = (p: Names & Pick<CauseParams, "slot">) =>
  `\`kubectl cron backfill ${p.name} -n ${p.namespace} --from=${p.slot} --to=${p.slot}\``;
const when = (yes: boolean, line: string) => (yes ? [line] : []);
/** The slot a verdict is about, in words (absent: a finding besides the verdict), and whether it is still to come. */
type At = Partial<Pick<CauseParams, "when" | "toCome">>;
/** A retry's Job (spec.retry): which attempt, after which Job failed; none for a slot's first Job. */
type Retried = Partial<Pick<CauseParams, "attempt" | "attempts" | "failedJob">>;
/** A verdict always about a slot. */
type Slot = Required<Pick<CauseParams, "when">>;
/**
 * The verdict's words on a slot that did not run: "did not run at SLOT: WORDS" (of a slot to come, "will not run
 * at …"); without a slot (a finding besides the verdict), the words alone.
 */
const didNotRun = (p: At, words: string) =>
  p.when === undefined ? words : `${p.toCome ? "will not run" : "did not run"} at ${p.when}: ${words}`;
/** The same, of a cause that is only ever a verdict on a slot. */
const didNotRunAt = (p: Slot, words: string) => `did not run at ${p.when}: ${words}`;
/**
 * A run that waits for a place in its group: a slot "did not run at SLOT: WORDS"; a run-now or backfill request
 * (`asked`, `when` its words) "has not run: WORDS". Without `when` (a finding besides the verdict), the words alone.
 */
const waitsInGroup = (p: At & Partial<Pick<CauseParams, "asked">>, words: string) =>
  p.asked && p.when !== undefined ? `${p.when} has not run: ${words}` : didNotRun(p, words);
/** A Job that started but whose Pods never worked: "started at SLOT but never got to work: WORDS". */
const neverWorked = (p: Slot, words: string) => `started at ${p.when} but never got to work: ${words}`;
/** The operator down (a finding's words), as what keeps the next slot from running. */
const untilBack = (words: string) => `${words}: nothing runs until it is back`;
/** operator-down's words on its own (no slot). */
const noReadyReplica = (p: Pick<CauseParams, "operatorNamespace">) =>
  `the operator has no ready replica in namespace ${p.operatorNamespace}`;
/** operator-no-leader's words on its own (no slot). */
const noLeader = (p: Pick<CauseParams, "noLease" | "holder"> & Partial<Pick<CauseParams, "lease" | "age">>) =>
  "no replica leads: " +
  (p.noLease
    ? `there is no Lease ${p.lease}`
    : p.holder
      ? `the Lease was last renewed ${p.age} ago by ${p.holder}`
      : `the last leader released the Lease ${p.age} ago and none took it`);
/** instance-down's words on their own (no slot). */
const instanceDown = (p: Pick<CauseParams, "namespace" | "instance" | "install" | "age">) =>
  `namespace ${p.namespace} is held by instance ${p.instance} of install ${p.install}, whose Lease was last renewed ` +
  `${p.age} ago, and no other instance took it`;

export const CAUSES = [
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
    detect: "The slot is before `metadata.creationTimestamp`.",
    verdict: (p: Slot & Pick<CauseParams, "created">) =>
      didNotRunAt(p, `the CronJob was created later, at ${p.created}`),
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
  // The run-now trigger's cause, written with its other words in its spec module (api/v1/runnow.ts).
  ...RUN_NOW_CAUSES,
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
  {
    id: "pods-not-created",
    title: "The Job ran but its Pods were never created",
    detect:
      "The Job is active with no Pods; the Job's FailedCreate Events say why (a Pod quota, PodSecurity, a LimitRange).",
    verdict: (p: Slot & Pick<CauseParams, "job" | "age">) =>
      neverWorked(p, `its Job ${p.job} has no Pod ${p.age} after its creation`),
    fix: fixed("Fix what the Event names (quota, the Pod's securityContext, resource requests)."),
  },
  {
    id: "pods-unschedulable",
    title: "The Job's Pod is Pending: it cannot be scheduled",
    detect: "A Pod with condition PodScheduled=False, reason Unschedulable, and the scheduler's message.",
    verdict: (p: Slot & Pick<CauseParams, "pod"> & Partial<Pick<CauseParams, "reason">>) =>
      neverWorked(p, `its Pod ${p.pod} is Pending: ${p.reason ?? "not scheduled"}`),
    fix: fixed("Free or add capacity, or change the template's requests, nodeSelector, affinity or tolerations."),
  },
  {
    id: "image-pull",
    title: "The Job's Pod cannot pull its image",
    detect: "A container waiting with ErrImagePull, ImagePullBackOff or InvalidImageName, and the kubelet's message.",
    verdict: (p: Slot & Pick<CauseParams, "pod" | "reason">) =>
      neverWorked(p, `its Pod ${p.pod} cannot pull its image (${p.reason})`),
    fix: fixed(
      "Correct the image name or tag, or the pull secret (`imagePullSecrets`) and the registry's reachability.",
    ),
  },
  {
    id: "job-queued",
    title: "Queued: its Job is suspended by Kueue or another controller",
    detect:
      "The Job has not finished and is suspended (`spec.suspend`, its Suspended condition since when): Kueue's " +
      `\`${KUEUE_QUEUE_NAME_KEY}\` label names its queue, else \`spec.managedBy\` the controller. The operator counts ` +
      "it as running (concurrencyPolicy Forbid, its group's places) and never unsuspends it.",
    verdict: (p: Slot & Pick<CauseParams, "job" | "queuedBy" | "since">) =>
      `ran at ${p.when}: Job ${p.job} is queued (suspended by ${p.queuedBy}${p.since ? `, since ${p.since}` : ""}), not running`,
    fix: (p: Pick<CauseParams, "namespace" | "job" | "kueue">) => [
      ...when(
        p.kueue,
        `Kueue starts it when its ClusterQueue has quota: its Workload (\`kubectl get workloads -n ${p.namespace}\`, ` +
          "its conditions) and the ClusterQueue's use (`kubectl describe clusterqueue`).",
      ),
      `Whoever suspended it starts it: \`kubectl get job ${p.job} -n ${p.namespace} -o yaml\` (\`spec.suspend\`, ` +
        "`spec.managedBy`, its Suspended condition).",
    ],
  },
  {
    id: "crash-looping",
    title: "The Job's Pod keeps crashing",
    detect: "A container in CrashLoopBackOff, with its restarts and last exit code.",
    verdict: (p: Slot & Pick<CauseParams, "pod" | "restarts" | "exitCode"> & Partial<Pick<CauseParams, "reason">>) =>
      neverWorked(
        p,
        `its Pod ${p.pod} keeps crashing (CrashLoopBackOff, ${p.restarts} restarts` +
          `${p.exitCode ? `, last exit code ${p.exitCode}${p.reason ? ` ${p.reason}` : ""}` : ""})`,
      ),
    fix: (p: Pick<CauseParams, "namespace" | "pod">) => [
      `Read its logs: \`kubectl logs ${p.pod} -n ${p.namespace} --previous\`.`,
      "Set `backoffLimit` and `activeDeadlineSeconds` to bound retries.",
    ],
    alert: "CronJobLastRunFailed",
  },
  {
    id: "start-timeout",
    title: "Ended: its Pods did not start within startTimeoutSeconds",
    detect:
      `The Job carries \`${ENDED_REASON_ANNOTATION}: ${EndedReason.StartTimeout}\`, \`${ENDED_PODS_ANNOTATION}\` (what ` +
      `its Pods showed, as a code) and \`${ENDED_MESSAGE_ANNOTATION}\` (in words), or the record's outcome says ` +
      `Failed, reason ${EndedReason.StartTimeout} (with \`pods\`), once the Job ` +
      "is gone: the operator ended the run (its activeDeadlineSeconds lowered) so it holds neither Forbid nor its " +
      "group's place.",
    verdict: (p: Slot & Pick<CauseParams, "timeout" | "message">) =>
      `ran at ${p.when} but its Pods never started within ${p.timeout}` +
      `${p.message ? `: ${p.message}` : ""}; the operator ended it`,
    fix: (p: Pick<CauseParams, "namespace" | "job" | "imagePull" | "unschedulable" | "noPod">) => [
      ...when(
        p.imagePull,
        "Its image could not be pulled: check the image name and tag, the registry's credentials " +
          "(`imagePullSecrets`) and that the nodes reach the registry.",
      ),
      ...when(
        p.unschedulable,
        "No node fits its Pods: lower the template's resource requests, correct its nodeSelector, affinity or " +
          "tolerations, or add capacity.",
      ),
      ...when(
        p.noPod,
        `No Pod was created: the Job's FailedCreate Events say why (\`kubectl describe job ${p.job} -n ${p.namespace}\`): ` +
          "a ResourceQuota, a LimitRange or an admission webhook.",
      ),
      "If its Pods only need longer to start (a large image, a slow node pool), raise `spec.startTimeoutSeconds`.",
    ],
    alert: "CronJobLastRunFailed",
  },
  {
    id: "job-failed",
    title: "The Job ran and failed",
    detect:
      "The Job's Failed condition (BackoffLimitExceeded, DeadlineExceeded) from the Job or the record's outcome, and " +
      "its Pods' terminations (OOMKilled, exit codes) while they exist.",
    verdict: (p: Slot & Pick<CauseParams, "job" | "reason" | "message"> & Retried) =>
      `ran at ${p.when} and failed: Job ${p.job} ${p.reason}${p.message ? ` (${p.message})` : ""}` +
      (p.attempt === undefined ? "" : `, attempt ${p.attempt} of ${p.attempts} after Job ${p.failedJob} failed`),
    fix: (p: Pick<CauseParams, "namespace" | "job" | "oomKilled" | "deadlineExceeded">) => [
      `Read its Pods' logs while the Job is kept (\`failedJobsHistoryLimit\`): \`kubectl logs job/${p.job} -n ${p.namespace}\`.`,
      ...when(
        p.oomKilled,
        "OOMKilled: raise the container's memory limit " +
          "(`spec.jobTemplate.spec.template.spec.containers[].resources.limits.memory`).",
      ),
      ...when(p.deadlineExceeded, "DeadlineExceeded: raise `spec.jobTemplate.spec.activeDeadlineSeconds`."),
    ],
    alert: "CronJobLastRunFailed",
  },
  // The retry trigger's causes, written with its other words in its spec module (api/v1/retry.ts).
  ...RETRY_CAUSES,
  {
    id: "operator-down",
    title: "The operator is not running",
    detect:
      "Its Deployment (found by the install the namespace's claim names, else by its webhooks' Service, else by its " +
      "labels in any namespace, whatever the Helm release or kustomize namespace) has no ready replica, and neither " +
      "its Lease nor the record shows it at work since.",
    verdict: (p: At & Pick<CauseParams, "operatorNamespace">) => didNotRun(p, noReadyReplica(p)),
    fix: (p: Pick<CauseParams, "operatorNamespace" | "operatorSelector">) => [
      `\`kubectl -n ${p.operatorNamespace} get deployment,pods -l ${p.operatorSelector}\` and ` +
        `\`kubectl -n ${p.operatorNamespace} get events\`: why its Pods are not ready; the missed slots run when ` +
        "it is back if their deadline allows.",
    ],
    next: (p: Pick<CauseParams, "operatorNamespace">) => untilBack(noReadyReplica(p)),
    alert: "CronJobOperatorDown",
  },
  {
    id: "operator-no-leader",
    title: "No replica leads: the leader Lease is stale or missing",
    detect:
      "Its replicas run with --leader-elect and the Lease's renewTime is older than its leaseDurationSeconds (by the " +
      "API server's clock), or there is none, and the record shows no decision since.",
    verdict: (p: At & Pick<CauseParams, "noLease" | "holder"> & Partial<Pick<CauseParams, "lease" | "age">>) =>
      didNotRun(p, noLeader(p)),
    fix: fixed("Check the replicas' logs for leader election errors; RBAC on leases; the API server's reachability."),
    next: (p: Pick<CauseParams, "noLease" | "holder"> & Partial<Pick<CauseParams, "lease" | "age">>) =>
      untilBack(noLeader(p)),
    alert: "CronJobOperatorDown",
  },
  {
    id: "operator-unclear",
    title: "Cannot tell whether the operator runs: its signs disagree",
    detect:
      "One sign says it is down (no ready replica, a stale Lease) and another says it works: the Lease renewed, or a " +
      "decision in `status.recentRuns` after the time it went down. A copy may run elsewhere (`make run` on a host " +
      "beside a Deployment scaled to zero), or it went down a moment ago. Exit code 2.",
    verdict: (p: At & Pick<CauseParams, "downSigns" | "upSigns">) =>
      `${p.when === undefined ? "" : `did not run at ${p.when}, and `}cannot tell whether the operator runs: ` +
      `${p.downSigns}, but ${p.upSigns}`,
    fix: fixed(
      "Find where it runs: a copy outside the cluster (`make run`), another install; if the Deployment should be it, " +
        "see operator-down.",
    ),
  },
  {
    id: "instance-down",
    title: "The instance that holds its namespace is down, and no other instance took it",
    detect:
      "The namespace's claim (the Lease `cronjob-operator` in it, labelled " +
      "`cronjob-operator.tutorial.kubebuilder.io/claim`, that an install with --watch-namespaces or --sharding keeps) " +
      "names the instance acting in it (spec.holderIdentity) and the Lease whose renewal keeps the claim alive " +
      "(annotation `cronjob-operator.tutorial.kubebuilder.io/instance-lease`). That Lease has not been renewed " +
      "within its leaseDurationSeconds, and the claim's leaseDurationSeconds and a few seconds have passed since its " +
      "renewTime with no other instance taking the namespace. Said when the install's Pods and leader Lease do not " +
      "show it down as a whole (that is operator-down or operator-no-leader).",
    verdict: (p: At & Pick<CauseParams, "namespace" | "instance" | "install" | "age">) => didNotRun(p, instanceDown(p)),
    fix: (p: Pick<CauseParams, "namespace" | "installNamespace">) => [
      `\`kubectl cron instances -n ${p.namespace}\` and \`kubectl -n ${p.installNamespace} get pods,leases\`: ` +
        "whether the instance's Pod runs and renews its Lease, and which instances are live; a live instance takes " +
        "the namespace once it sees the Lease lapse, and the missed slots run then if their deadline allows.",
    ],
    next: (p: Pick<CauseParams, "namespace" | "instance" | "install" | "age">) =>
      `${instanceDown(p)}: nothing runs in it until an instance takes it`,
  },
  {
    id: "operator-webhook-failing",
    title: "The operator's webhooks have no ready endpoint",
    detect:
      "A webhook configuration of the operator whose Service has no ready endpoint: `kubectl apply` of a CronJob and " +
      "every API v2 request fail with `failed calling webhook` / `conversion webhook … failed`.",
    verdict: (p: Pick<CauseParams, "webhook" | "service">) =>
      `webhook ${p.webhook} has no ready endpoint (Service ${p.service})`,
    fix: fixed("Bring a replica up (see operator-down); check the webhook Service's selector and the certificate."),
    alert: "CronJobWebhookFailing",
  },
  {
    id: "clock-skew",
    title: "A clock is far from the API server's",
    detect:
      "The leader's Lease renewTime is ahead of the API server's clock, or this machine's clock differs from the " +
      "API server's Date by more than a few seconds.",
    verdict: (p: Pick<CauseParams, "localClock" | "behind" | "skew">) =>
      p.localClock
        ? `this machine's clock is ${p.skew} ${p.behind ? "behind" : "ahead of"} the API server's`
        : `the leader's clock is ${p.skew} ahead of the API server's`,
    fix: (p: Pick<CauseParams, "localClock">) => [
      "Fix NTP on the node or machine whose clock is off; slots are computed on the operator's clock.",
      ...when(p.localClock, "The times `kubectl cron why` shows are the API server's."),
    ],
  },
  {
    id: "upstream-not-found",
    title: "spec.after names a CronJob that does not exist",
    detect:
      "A CronJob `spec.after` names is not in the namespace (read with the CronJob), or its `Degraded` condition says " +
      "`UpstreamNotFound`.",
    verdict: (p: At & Pick<CauseParams, "upstream" | "namespace">) =>
      didNotRun(
        p,
        `spec.after names ${p.upstream}, which is not a CronJob of namespace ${p.namespace}: nothing runs after it ` +
          "until it exists",
      ),
    fix: (p: Names & Pick<CauseParams, "upstream">) => [
      `Create the CronJob ${p.upstream} in namespace ${p.namespace}, or correct \`spec.after\` ` +
        `(\`kubectl cron list -n ${p.namespace}\` lists its CronJobs).`,
    ],
  },
  {
    id: "after-cycle",
    title: "spec.after makes a cycle",
    detect:
      "The `Degraded` condition says `AfterCycle` (two CronJobs applied at once, each after the other: admission " +
      "saw neither); its message names the path.",
    verdict: (p: At & Pick<CauseParams, "cycle">) =>
      didNotRun(p, `spec.after makes a cycle (${p.cycle}): nothing runs after an upstream until it is broken`),
    fix: (p: Pick<CauseParams, "cycle">) => [
      `Remove one CronJob of the cycle from the other's \`spec.after\` (${p.cycle}).`,
    ],
  },
  {
    id: "not-yet-decided",
    title: "The operator has not decided about the slot",
    detect:
      "No entry for the slot in `status.recentRuns` and no Job for it, while the operator looks healthy (it may be " +
      "overloaded: see `workqueue_depth`).",
    verdict: (p: Slot & Pick<CauseParams, "age">) =>
      didNotRunAt(p, `the operator has not decided about it (${p.age} ago) and looks healthy`),
    fix: fixed(
      "Check the operator's logs and `workqueue_depth`; with startingDeadlineSeconds unset the slot still runs when reached.",
    ),
  },
] as const satisfies readonly Cause[];

type Row = (typeof CAUSES)[number];
export type CauseId = Row["id"];

/** What a row's verdict and fix are said with: the facts they take (a row that takes none: nothing). */
export type CauseParamsOf<I extends CauseId> = ParamOf<Extract<Row, { id: I }>["verdict"]> &
  ParamOf<Extract<Row, { id: I }>["fix"]>;
type ParamOf<F> = F extends (...a: infer A) => unknown ? (A extends [infer P, ...unknown[]] ? P : unknown) : never;

export function causeOf(id: CauseId): Cause {
  return CAUSES.find((c) => c.id === id)!;
}

/** A cause's verdict (with `when`) or finding (without), said with the facts the diagnosis found. */
export function verdictOf<I extends CauseId>(id: I, p: CauseParamsOf<I>): string {
  return causeOf(id).verdict(p as Required<CauseParams>);
}

/** A cause's fix, said with the names the diagnosis found: the only way `kubectl cron why` words one. */
export function fixOf<I extends CauseId>(id: I, p: CauseParamsOf<I>): string[] {
  return causeOf(id).fix(p as CauseParams);
}

/** The causes that can keep the next slot from running (a row with `next`), and the facts their words take. */
export type NextCauseId = Extract<Row, { next: unknown }>["id"];
export type NextParamsOf<I extends NextCauseId> = ParamOf<Extract<Row, { id: I }>["next"]>;

/** What keeps the next slot from running, in its cause's words said with the facts found (`Next: TIME; WORDS`). */
export function nextOf<I extends NextCauseId>(id: I, p: NextParamsOf<I>): string {
  return causeOf(id).next!(p as Required<CauseParams>);
}

/**
 * The verdicts that name no cause: the slot ran (or runs) as it should, is not due yet, or the state cannot tell.
 * Their words, as functions of the facts like a cause's (the command's modules write none of their own).
 */
export const NO_CAUSE = {
  /**
   * It ran and completed (`createdAfter`: seconds from the slot to the Job's creation; `took`: how long); a retry
   * (spec.retry) says which attempt, after which Job failed.
   */
  completed: (p: Slot & Pick<CauseParams, "job" | "createdAfter" | "took"> & Retried) =>
    `ran at ${p.when}: Job ${p.job}${retried(p)}${createdAfter(p)}, Complete${p.took ? ` in ${p.took}` : ""}`,
  /** It runs, and nothing keeps its Pods from working (a retry: which attempt). */
  running: (p: Slot & Pick<CauseParams, "job" | "createdAfter" | "age" | "bounds"> & Retried) =>
    `ran at ${p.when}: Job ${p.job}${retried(p)}${createdAfter(p)} has been running for ${p.age} (${p.bounds})`,
  /** Its Job is gone and the record has no outcome. */
  outcomeLost: (p: Slot & Pick<CauseParams, "job">) =>
    `ran at ${p.when} (Job ${p.job}), but the Job is gone and the record has no outcome for it`,
  /** Older than the record and no Job left. */
  beyondRecord: (p: Slot) =>
    `cannot tell about ${p.when}: it is older than the 10 decisions the record keeps, and no Job for it is left`,
  /** Just due (`late`: seconds since the slot). */
  dueNow: (p: Slot & Pick<CauseParams, "late">) =>
    `${p.when} is due now: the operator has not started it yet (${p.late} s ago)`,
  /** A slot still to come (`age`: how long until it). */
  toCome: (p: Slot & Pick<CauseParams, "age">) => `${p.when} has not come yet (in ${p.age})`,
  /** No slot since the CronJob's creation (`nextSlot`: the first). */
  noSlotYet: (p: Pick<CauseParams, "nextSlot">) => `has had no slot since its creation; the first is ${p.nextSlot}`,
  /** Scheduling ended (spec.maxRuns, spec.endTime): api/v1/limits.ts's words, the Available condition's message. */
  ended: (p: Pick<CauseParams, "byMaxRuns" | "made" | "maxRuns" | "endTime">) =>
    p.byMaxRuns
      ? `ended: ${p.made} of ${p.maxRuns} runs made (spec.maxRuns); run-now and backfill requests still run`
      : `ended: spec.endTime ${p.endTime} has passed; run-now requests still run`,
  /** Before spec.startTime (`nextSlot`: the first slot in the window). */
  notStarted: (p: Pick<CauseParams, "startTime" | "nextSlot">) =>
    `not started: starts ${p.startTime}; the first slot is ${p.nextSlot}`,
  /** A slot of spec.jitter whose run starts later than the slot: not due yet. */
  jitterDue: (p: Slot & Pick<CauseParams, "startsAt" | "offset">) =>
    `${p.when} is due at ${p.startsAt} (jitter offset ${p.offset})`,
  /** spec.after: the upstream's newest run still runs. */
  upstreamRunning: (p: Pick<CauseParams, "upstream" | "upstreamRun" | "runningSince">) =>
    `waiting for ${p.upstream}'s ${p.upstreamRun} run (running since ${p.runningSince})`,
  /** spec.after: the upstream's newest run ended not as spec.after[].when asks. */
  upstreamEndedOther: (p: Pick<CauseParams, "upstream" | "upstreamRun" | "upstreamFailed" | "name" | "upstreamWhen">) =>
    `${p.upstream}'s ${p.upstreamRun} run ${p.upstreamFailed ? "failed" : "succeeded"}; ${p.name} runs after ` +
    p.upstreamWhen,
  /** spec.after: no run of the upstream has ended since the CronJob named it. */
  noUpstreamRun: (p: Pick<CauseParams, "upstream" | "name" | "upstreamWhen">) =>
    `waiting for a run of ${p.upstream}: ${p.name} runs after ${p.upstreamWhen}, and none has ended since it named ` +
    p.upstream,
} satisfies Record<string, (p: Required<CauseParams>) => string>;
/** What spec.after[].when waits for, in the words NO_CAUSE says it with (`upstreamWhen`). */
export const AFTER_WHEN_WORDS: Readonly<Record<AfterWhen, string>> = {
  Succeeded: "a success",
  Failed: "a failure",
  Finished: "any end",
};

/**
 * A slot in words with what the verdict must say of it besides (`when`): a jittered slot's offset; a run after an
 * upstream's run (its "slot" is that run's end), which run it followed.
 */
export const SLOT_WORDS = {
  jittered: (p: Slot & Pick<CauseParams, "offset">) => `${p.when} (jitter offset ${p.offset})`,
  afterRun: (p: Slot & Pick<CauseParams, "upstream" | "upstreamRun" | "upstreamJob">) =>
    `${p.when}, after ${p.upstream}'s ${p.upstreamRun} run (Job ${p.upstreamJob})`,
};

/**
 * What `kubectl cron next`, `history` and the dashboard say of a CronJob's limits (api/v1/limits.ts), jitter and
 * upstreams (spec.after): the end in limits.ts's own words, the rest here.
 */
export const SHAPING = {
  ended: (end: ScheduleEnd) => scheduleEndText(end),
  noRunAfter: (endTime: string) => `no run after ${endTime} (spec.endTime)`,
  runsLeft: (left: number, of: number) => `${left} of ${of} runs left (spec.maxRuns): none after them`,
  notStarted: (startTime: string) => `not started: starts ${startTime} (spec.startTime)`,
  runsAfter: (upstream: string, when: AfterWhen) =>
    `runs after ${upstream}'s ${{ Succeeded: "successful", Failed: "failed", Finished: "finished" }[when]} runs`,
  noSchedule: () => "no schedule of its own: it runs only after its upstreams (spec.after)",
  /** A list's SCHEDULE cell of a CronJob with no schedule of its own: its upstreams. */
  afterOnly: (upstreams: readonly string[]) => `after ${upstreams.join(", ")}`,
  /** The window its slots lie in (spec.startTime, spec.endTime; either may be open). */
  window: (start: string | undefined, end: string | undefined) =>
    start && end
      ? `runs from ${start} to ${end} (spec.startTime, spec.endTime)`
      : start
        ? `runs from ${start} (spec.startTime)`
        : `runs until ${end ?? "?"} (spec.endTime)`,
  jitter: (seconds: number) => `jitter ${offsetText(seconds)}: each run starts at its slot plus its offset (STARTS)`,
  /** A jittered run's offset, beside its slot ("+37s"). */
  offset: (seconds: number) => `+${offsetText(seconds)}`,
  /** The upstream run a run after an upstream followed ("after extract/extract-1795572000"). */
  after: (upstream: string, job: string) => `after ${upstream}/${job}`,
};

const createdAfter = (p: Pick<CauseParams, "createdAfter">) =>
  p.createdAfter === undefined ? "" : ` (created ${p.createdAfter} s after the slot)`;
/** A retry's Job: " (attempt 1 of 3, after Job X failed)". */
const retried = (p: Retried) =>
  p.attempt === undefined ? "" : ` (attempt ${p.attempt} of ${p.attempts}, after Job ${p.failedJob} failed)`;

/**
 * A request a verdict is about instead of a slot (`asked`: a run-now or backfill request waiting for a place in its
 * group), in the words that stand where a slot's do (`when`), by its trigger's row name; `other` for a row with no
 * words here (its word and request).
 */
export const REQUESTED = {
  runNow: (p: Pick<CauseParams, "request">) => `run-now request "${p.request}"`,
  /** A slot of a backfill request: the slot in words (`when`). */
  backfill: (p: Pick<CauseParams, "request"> & Slot) => `backfill "${p.request}" for ${p.when}`,
  other: (p: Pick<CauseParams, "request"> & { word?: string; when?: string }) =>
    `${p.word ?? "WORD"} request "${p.request}"${p.when ? ` for ${p.when}` : ""}`,
};

/** A request of a trigger's row in REQUESTED's words: its own, else `other`'s with the row's word. */
export function requestedText(row: { name: string; word: string }, p: { request: string; when?: string }): string {
  const own = (REQUESTED as Record<string, ((p: { request: string; when: string }) => string) | undefined>)[row.name];
  return own && row.name !== "other"
    ? own({ request: p.request, when: p.when ?? "" })
    : REQUESTED.other({ ...p, word: row.word });
}

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

/** What the words of a namespace's claim are said with (model/claims.ts). */
interface ClaimParams {
  /** The claimed namespace. */
  namespace: string;
  /** The install holding it (`<its namespace>/<its leader-election id>`), and the instance acting in it. */
  install: string;
  instance: string;
  /** The instance Lease that keeps the claim alive (`<namespace>/<name>`), or the claim itself (unreadable). */
  lease: string;
  /** How long ago the instance Lease lapsed. */
  downFor: string;
  /** How long until another instance takes the namespace; how long ago one should have. */
  takenIn: string;
  late: string;
  /** instances: where the claims were looked for ("namespace prod", "any namespace"). */
  where: string;
}

/**
 * Which install and instance runs a namespace, from its claim (model/claims.ts): what `kubectl cron why` says on its
 * "Run by:" line, and `kubectl cron instances` in its STATE column and notes.
 */
export const CLAIMS = {
  active: (p: Pick<ClaimParams, "install" | "instance">) => `install ${p.install} (instance ${p.instance})`,
  unknown: (p: Pick<ClaimParams, "install" | "instance" | "lease">) =>
    `install ${p.install} (instance ${p.instance}); whether the instance is live is not known: its Lease ` +
    `${p.lease} could not be read`,
  down: (p: Pick<ClaimParams, "install" | "instance" | "lease" | "downFor" | "takenIn" | "namespace">) =>
    `install ${p.install} (instance ${p.instance}), which is down: its Lease ${p.lease} lapsed ${p.downFor} ago; ` +
    `another instance takes namespace ${p.namespace} within ${p.takenIn}`,
  overdue: (p: Pick<ClaimParams, "install" | "instance" | "lease" | "downFor" | "late" | "namespace">) =>
    `install ${p.install} (instance ${p.instance}), which is down: its Lease ${p.lease} lapsed ${p.downFor} ago; ` +
    `another instance should have taken namespace ${p.namespace} ${p.late} ago`,
  gone: (p: Pick<ClaimParams, "install" | "instance" | "lease" | "namespace">) =>
    `install ${p.install} (instance ${p.instance}), which stopped: its Lease ${p.lease} is gone; another instance ` +
    `takes namespace ${p.namespace}`,
  released: (p: Pick<ClaimParams, "install" | "namespace">) =>
    `moving: install ${p.install} let namespace ${p.namespace} go; the next instance to claim it runs it`,
  unclaimed: (p: Pick<ClaimParams, "namespace">) =>
    `no install claims namespace ${p.namespace}: a cluster-wide install that claims none runs it, or no install ` +
    "watches it",
  unreadable: (p: Pick<ClaimParams, "namespace" | "lease">) =>
    `not known: the claim of namespace ${p.namespace} (Lease ${p.lease}) could not be read`,
  /** `instances`: a claim's STATE. */
  stateActive: () => "active",
  stateReleased: () => "released (moving)",
  stateDown: (p: Pick<ClaimParams, "downFor" | "takenIn">) => `instance down ${p.downFor}: taken within ${p.takenIn}`,
  stateOverdue: (p: Pick<ClaimParams, "downFor" | "late">) =>
    `instance down ${p.downFor}: should have been taken ${p.late} ago`,
  stateGone: () => "instance Lease gone",
  stateUnknown: () => "unknown: instance Lease unreadable",
  /** `instances`: an instance Lease's STATE. */
  instanceLive: () => "live",
  instanceExpired: (p: Pick<ClaimParams, "downFor">) => `expired ${p.downFor} ago`,
  instanceReleased: () => "released",
  /** `instances`: a read that failed (its name and why). */
  notRead: (p: { what: string }) => `could not read ${p.what}`,
  /** `instances -A` found no claim. */
  noneClaimed: () =>
    "no namespace is claimed: a cluster-wide install that claims none runs them, or no install watches them",
  /** `instances` could not read the claims. */
  claimsUnreadable: (p: Pick<ClaimParams, "where">) =>
    `the claims in ${p.where} could not be read: instances needs get on leases (coordination.k8s.io) in the ` +
    "namespace, and list on them in every namespace with -A",
};
