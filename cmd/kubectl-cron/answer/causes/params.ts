// What the causes of `kubectl cron why` are said with: CauseParams, the facts the diagnosis finds (a row's verdict,
// fix and `next` take the ones they name), and PLACEHOLDERS, the same said as the docs say them
// (docs/troubleshooting.md and the runbooks, generated from the table: ../causes.ts).

/**
 * What a cause's verdict and fix are said with: the facts the diagnosis found (the docs: PLACEHOLDERS), and which
 * of a row's conditional words the facts call for (the docs show one choice of them, every fix line).
 */
export interface CauseParams {
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
