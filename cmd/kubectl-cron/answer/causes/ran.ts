// The causes of a run whose Job was made but did not do its work: no Pods, Pods that cannot be scheduled, pull their
// image or keep crashing, a Job queued by Kueue or another controller, ended by its start timeout, or failed. Rows of
// the one table (../causes.ts).
import {
  ENDED_MESSAGE_ANNOTATION,
  ENDED_PODS_ANNOTATION,
  ENDED_REASON_ANNOTATION,
  EndedReason,
  KUEUE_QUEUE_NAME_KEY,
} from "../../../../api/v1/index.ts";
import type { CauseParams } from "./params.ts";
import { type Cause, fixed, neverWorked, type Retried, type Slot, when } from "./say.ts";

export const RAN_CAUSES = [
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
] as const satisfies readonly Cause[];
