// The one table of why a CronJob did not run (or ran and did nothing): each cause, how `kubectl cron why` detects
// it, and what to do. The command's verdicts name a row, and their fixes are the row's `fix` said with the names
// the diagnosis found; docs/troubleshooting.md's list of causes and the runbooks' lists are generated from this table,
// each fix said with PLACEHOLDERS (test/unit/troubleshooting.test.ts and causes-words.test.ts check both).
import { RecordReason, RefusedReason } from "../../api/v1/index.ts";

/**
 * What a fix is said with: the names the diagnosis found (the docs: PLACEHOLDERS), and which of a row's
 * conditional lines the facts call for (the docs show every line).
 */
interface FixParams {
  /** The CronJob and its namespace. */
  name: string;
  namespace: string;
  /** A Job of the CronJob (several: separated by spaces). */
  job: string;
  /** A Pod of a Job. */
  pod: string;
  /** The slot, RFC 3339 in UTC. */
  slot: string;
  /** Where the operator was looked for, and its Pods' label selector. */
  operatorNamespace: string;
  operatorSelector: string;
  /** forbid-held: the Job it waits behind still runs. */
  running: boolean;
  /** forbid-held: that Job has no activeDeadlineSeconds (or it is not known to have one). */
  noActiveDeadline: boolean;
  /** job-failed: a container was OOMKilled. */
  oomKilled: boolean;
  /** job-failed: the Job failed with DeadlineExceeded. */
  deadlineExceeded: boolean;
  /** clock-skew: this machine's clock is the one off. */
  localClock: boolean;
}

/** The names and lines the docs say a fix with: every placeholder, every conditional line. */
export const PLACEHOLDERS: FixParams = {
  name: "NAME",
  namespace: "NAMESPACE",
  job: "JOB",
  pod: "POD",
  slot: "SLOT",
  operatorNamespace: "OPERATOR_NAMESPACE",
  operatorSelector: "SELECTOR",
  running: true,
  noActiveDeadline: true,
  oomKilled: true,
  deadlineExceeded: true,
  localClock: true,
};

interface Cause {
  /** Stable id: the JSON output's `cause`, and the anchor of its section in docs/troubleshooting.md. */
  readonly id: string;
  /** One line: what happened. */
  readonly title: string;
  /** How `kubectl cron why` finds it, from which live state. */
  readonly detect: string;
  /** What to do, one line each: the command's fix lines, and (with PLACEHOLDERS) the docs'. */
  readonly fix: (p: FixParams) => string[];
  /** The alert whose runbook covers it, when one does. */
  readonly alert?: string;
}

type Names = Pick<FixParams, "name" | "namespace">;
/** A fix that names nothing. */
const fixed =
  (...lines: string[]) =>
  (): string[] =>
    lines;
/** `kubectl cron VERB NAME -n NAMESPACE`. */
const cron = (verb: string, p: Names) => `\`kubectl cron ${verb} ${p.name} -n ${p.namespace}\``;
/** The backfill of one slot. */
const backfill = (p: Names & Pick<FixParams, "slot">) =>
  `\`kubectl cron backfill ${p.name} -n ${p.namespace} --from=${p.slot} --to=${p.slot}\``;
const when = (yes: boolean, line: string) => (yes ? [line] : []);

export const CAUSES = [
  {
    id: "suspended",
    title: "The CronJob is suspended",
    detect:
      "`spec.suspend` is true. Since when and by whom: the managedFields entry that owns `spec.suspend` (its manager " +
      "and time).",
    fix: (p: Names) => [
      `${cron("resume", p)} (a slot missed while suspended runs only if \`missedRunPolicy\` and ` +
        "`startingDeadlineSeconds` allow it).",
    ],
  },
  {
    id: "stopped-after-failures",
    title: "Scheduling stopped after failed runs in a row",
    detect:
      "`status.stopped` (when, after how many failures) with `spec.stopAfterConsecutiveFailures`; the failed Jobs " +
      "in `status.recentRuns` with their reasons.",
    fix: (p: Names) => [
      `Fix what makes the Jobs fail (see their outcome), then ${cron("resume", p)}, or change the spec.`,
    ],
    alert: "CronJobStoppedAfterFailures",
  },
  {
    id: "invalid-schedule",
    title: "The schedule or time zone cannot be used",
    detect:
      "The Available condition is False with reason InvalidSchedule or UnknownTimeZone (its message names the field).",
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
    fix: (p: Names) => [
      `Check \`spec.timeZone\` (unset means UTC) and the resolved schedule (${cron("next", p)}); change the ` +
        "schedule if it is not what you meant.",
    ],
  },
  {
    id: "before-creation",
    title: "The CronJob did not exist yet at that time",
    detect: "The slot is before `metadata.creationTimestamp`.",
    fix: (p: Names & Pick<FixParams, "slot">) => [`Nothing to fix; ${backfill(p)} runs the slot if you need it.`],
  },
  {
    id: "deadline-missed",
    title: "Missed: the operator reached the slot after startingDeadlineSeconds",
    detect:
      `A \`Missed\` entry with reason ${RecordReason.StartingDeadlineExceeded} in \`status.recentRuns\`: how late the operator decided ` +
      "(decidedAt minus the slot) against `startingDeadlineSeconds`, and why it was late: a leader change or no " +
      "leader (the Lease's acquireTime and renewTime), the operator down (no ready Pod), or a Job it was held behind.",
    fix: (p: Names & Pick<FixParams, "slot">) => [
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
    fix: fixed("Raise `startingDeadlineSeconds` (at least a few minutes), or remove it."),
  },
  {
    id: "forbid-held",
    title: "Held: concurrencyPolicy Forbid and the previous Job is still running",
    detect:
      "A `Held` entry in `status.recentRuns` names the Job it waits behind (blockedBy); that Job's age, its " +
      "`activeDeadlineSeconds` and `backoffLimit`, and its Pods (CrashLoopBackOff, restarts, Pending).",
    fix: (p: Pick<FixParams, "namespace" | "job" | "running" | "noActiveDeadline">) => [
      ...when(p.running, `Delete the hung Job: \`kubectl delete job ${p.job} -n ${p.namespace}\`.`),
      ...when(
        p.noActiveDeadline,
        "Set `spec.jobTemplate.spec.activeDeadlineSeconds` below the schedule's interval, and a small " +
          "`backoffLimit`, so a run cannot hold the next ones.",
      ),
    ],
    alert: "CronJobBlockedByRunningJob",
  },
  {
    id: "run-now-waiting",
    title: "A run-now request waits behind a running Job",
    detect:
      "The run-now annotation differs from `status.lastRunNowRequest` and a Job is running with concurrencyPolicy " +
      "Forbid.",
    fix: (p: Pick<FixParams, "namespace" | "job">) => [
      `Wait for the running Job, or delete it: \`kubectl delete job ${p.job} -n ${p.namespace}\`.`,
    ],
  },
  {
    id: "policy-skipped",
    title: "Not run: missedRunPolicy chose not to",
    detect:
      `A \`Skipped\` entry in \`status.recentRuns\`: ${RecordReason.MissedRunPolicySkip} (Skip runs only the announced time), ${RecordReason.RunAllLimit} ` +
      `(RunAll runs at most the newest 100), ${RecordReason.RunAllReplace} (RunAll with Replace runs only the newest).`,
    fix: (p: Names & Pick<FixParams, "slot">) => [
      "Change `spec.missedRunPolicy` if the slot should have run.",
      `${backfill(p)} runs it now.`,
    ],
    alert: "CronJobMissedSchedule",
  },
  {
    id: "create-refused-quota",
    title: "The Job's create was refused: a ResourceQuota is exhausted",
    detect:
      "A `Refused` entry with the API server's message (`exceeded quota`), and the namespace's ResourceQuotas with " +
      "their used and hard values.",
    fix: fixed("Raise the quota, or free what it counts (old Jobs: lower `successfulJobsHistoryLimit`)."),
  },
  {
    id: "create-refused-admission",
    title: "The Job's create was refused by an admission webhook or policy",
    detect:
      "A `Refused` entry whose message names the webhook or policy that denied the Job (`admission webhook … denied`).",
    fix: fixed("Change the Job template to satisfy the policy, or ask its owners for an exception."),
  },
  {
    id: "create-refused-name-taken",
    title: "A Job that is not this CronJob's holds the slot's name",
    detect: `A \`Refused\` entry with reason ${RefusedReason.AlreadyExists}; the Job with that name has no owner reference to this CronJob.`,
    fix: fixed("Delete or rename the foreign Job; the slot runs at the next pass if it is still within its deadline."),
  },
  {
    id: "create-refused",
    title: "The Job's create was refused by the API server",
    detect: "A `Refused` entry with the API server's reason and message (Invalid, Forbidden, …).",
    fix: (p: Names) => [
      `Fix what the message names (usually the Job template); ${cron("run", p)} tries a run at once.`,
    ],
  },
  {
    id: "pods-not-created",
    title: "The Job ran but its Pods were never created",
    detect:
      "The Job is active with no Pods; the Job's FailedCreate Events say why (a Pod quota, PodSecurity, a LimitRange).",
    fix: fixed("Fix what the Event names (quota, the Pod's securityContext, resource requests)."),
  },
  {
    id: "pods-unschedulable",
    title: "The Job's Pod is Pending: it cannot be scheduled",
    detect: "A Pod with condition PodScheduled=False, reason Unschedulable, and the scheduler's message.",
    fix: fixed("Free or add capacity, or change the template's requests, nodeSelector, affinity or tolerations."),
  },
  {
    id: "image-pull",
    title: "The Job's Pod cannot pull its image",
    detect: "A container waiting with ErrImagePull, ImagePullBackOff or InvalidImageName, and the kubelet's message.",
    fix: fixed(
      "Correct the image name or tag, or the pull secret (`imagePullSecrets`) and the registry's reachability.",
    ),
  },
  {
    id: "crash-looping",
    title: "The Job's Pod keeps crashing",
    detect: "A container in CrashLoopBackOff, with its restarts and last exit code.",
    fix: (p: Pick<FixParams, "namespace" | "pod">) => [
      `Read its logs: \`kubectl logs ${p.pod} -n ${p.namespace} --previous\`.`,
      "Set `backoffLimit` and `activeDeadlineSeconds` to bound retries.",
    ],
    alert: "CronJobLastRunFailed",
  },
  {
    id: "job-failed",
    title: "The Job ran and failed",
    detect:
      "The Job's Failed condition (BackoffLimitExceeded, DeadlineExceeded) from the Job or the record's outcome, and " +
      "its Pods' terminations (OOMKilled, exit codes) while they exist.",
    fix: (p: Pick<FixParams, "namespace" | "job" | "oomKilled" | "deadlineExceeded">) => [
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
  {
    id: "operator-down",
    title: "The operator is not running",
    detect:
      "Its Deployment (found by its webhooks' Service, else by its labels in any namespace, whatever the Helm release " +
      "or kustomize namespace) has no ready replica, and neither its Lease nor the record shows it at work since.",
    fix: (p: Pick<FixParams, "operatorNamespace" | "operatorSelector">) => [
      `\`kubectl -n ${p.operatorNamespace} get deployment,pods -l ${p.operatorSelector}\` and ` +
        `\`kubectl -n ${p.operatorNamespace} get events\`: why its Pods are not ready; the missed slots run when ` +
        "it is back if their deadline allows.",
    ],
    alert: "CronJobOperatorDown",
  },
  {
    id: "operator-no-leader",
    title: "No replica leads: the leader Lease is stale or missing",
    detect:
      "Its replicas run with --leader-elect and the Lease's renewTime is older than its leaseDurationSeconds (by the " +
      "API server's clock), or there is none, and the record shows no decision since.",
    fix: fixed("Check the replicas' logs for leader election errors; RBAC on leases; the API server's reachability."),
    alert: "CronJobOperatorDown",
  },
  {
    id: "operator-unclear",
    title: "Cannot tell whether the operator runs: its signs disagree",
    detect:
      "One sign says it is down (no ready replica, a stale Lease) and another says it works: the Lease renewed, or a " +
      "decision in `status.recentRuns` after the time it went down. A copy may run elsewhere (`make run` on a host " +
      "beside a Deployment scaled to zero), or it went down a moment ago. Exit code 2.",
    fix: fixed(
      "Find where it runs: a copy outside the cluster (`make run`), another install; if the Deployment should be it, " +
        "see operator-down.",
    ),
  },
  {
    id: "operator-webhook-failing",
    title: "The operator's webhooks have no ready endpoint",
    detect:
      "A webhook configuration of the operator whose Service has no ready endpoint: `kubectl apply` of a CronJob and " +
      "every API v2 request fail with `failed calling webhook` / `conversion webhook … failed`.",
    fix: fixed("Bring a replica up (see operator-down); check the webhook Service's selector and the certificate."),
    alert: "CronJobWebhookFailing",
  },
  {
    id: "clock-skew",
    title: "A clock is far from the API server's",
    detect:
      "The leader's Lease renewTime is ahead of the API server's clock, or this machine's clock differs from the " +
      "API server's Date by more than a few seconds.",
    fix: (p: Pick<FixParams, "localClock">) => [
      "Fix NTP on the node or machine whose clock is off; slots are computed on the operator's clock.",
      ...when(p.localClock, "The times `kubectl cron why` shows are the API server's."),
    ],
  },
  {
    id: "not-yet-decided",
    title: "The operator has not decided about the slot",
    detect:
      "No entry for the slot in `status.recentRuns` and no Job for it, while the operator looks healthy (it may be " +
      "overloaded: see `workqueue_depth`).",
    fix: fixed(
      "Check the operator's logs and `workqueue_depth`; with startingDeadlineSeconds unset the slot still runs when reached.",
    ),
  },
] as const satisfies readonly Cause[];

type Row = (typeof CAUSES)[number];
export type CauseId = Row["id"];

/** What a row's fix is said with: the names and conditional lines it takes. */
export type FixParamsOf<I extends CauseId> =
  Parameters<Extract<Row, { id: I }>["fix"]> extends [infer P, ...unknown[]] ? P : Record<string, never>;

export function causeOf(id: CauseId): Cause {
  return CAUSES.find((c) => c.id === id)!;
}

/** A cause's fix, said with the names the diagnosis found: the only way `kubectl cron why` words one. */
export function fixOf<I extends CauseId>(id: I, p: FixParamsOf<I>): string[] {
  return causeOf(id).fix(p as FixParams);
}
