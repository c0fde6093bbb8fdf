// The causes of the operator itself: down, without a leader, its signs disagreeing, the instance holding the
// namespace down, its webhooks failing, a clock off; and a slot it has not decided about while it looks healthy.
// Rows of the one table (../causes.ts).
import type { CauseParams } from "./params.ts";
import { type At, type Cause, didNotRun, didNotRunAt, fixed, type Slot, when } from "./say.ts";

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

export const OPERATOR_CAUSES = [
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
