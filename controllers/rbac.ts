// The RBAC the CronJob controller needs: the TypeScript equivalent of kubebuilder's
// `// +kubebuilder:rbac:groups=...,resources=...,verbs=...` markers. `make manifests`
// (hack/generate-manifests.ts) merges and sorts these like controller-gen and writes the ClusterRole
// `manager-role` to config/rbac/role.yaml. Least privilege: add a rule here when the controller starts
// using a new verb or resource, then run `make manifests`.
//
// The leader-election Role (leases, events in the manager's namespace) is static, in
// config/rbac/leader_election_role.yaml; the metrics-auth ClusterRole is in config/rbac/metrics_auth_role.yaml.
import { GROUP, PLURAL } from "../api/v1/index.ts";

/** One +kubebuilder:rbac marker: `groups` uses "" (or "core") for the core API group. */
export interface RBACMarker {
  groups: readonly string[];
  resources?: readonly string[];
  resourceNames?: readonly string[];
  urls?: readonly string[];
  verbs: readonly string[];
}

/**
 * Exactly the verbs the code calls, each with where it is called (test/unit/config.test.ts checks the
 * client calls in controllers/, webhooks/ and runtime/events/ against this list, both ways). Verbs the
 * code does not call are not granted: no `get` on cronjobs (the reconciler reads CronJobs from the
 * informer cache only), no `get`/`patch` on cronjobs/status (status is written with PUT), no
 * events.k8s.io (the recorder writes core/v1 Events).
 */
export const CRONJOB_CONTROLLER_RBAC: readonly RBACMarker[] = [
  // list, watch: the CronJob informer (CronJobReconciler.setupWithManager: .for(CronJobKind)); the
  // reconciler reads CronJobs from its cache (loadCronJob: cache.get), never from the API server.
  // +kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=cronjobs,verbs=list;watch
  { groups: [GROUP], resources: [PLURAL], verbs: ["list", "watch"] },
  // update: CronJobReconciler.writeStatus (client.updateStatus: PUT .../cronjobs/<name>/status).
  // +kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=cronjobs/status,verbs=update
  { groups: [GROUP], resources: [`${PLURAL}/status`], verbs: ["update"] },
  // No call: the Jobs' ownerReferences set blockOwnerDeletion (jobForSlot), which the
  // OwnerReferencesPermissionEnforcement admission plugin (on in OpenShift, for one) allows only to who
  // may update the owner's finalizers. test/integration/deploy.test.ts runs with that plugin on.
  // +kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=cronjobs/finalizers,verbs=update
  { groups: [GROUP], resources: [`${PLURAL}/finalizers`], verbs: ["update"] },
  // list, watch: the Job informer (.owns(Kinds.Job)), children read through its owner index.
  // get: CronJobReconciler.getJobDirect (a live GET of an active Job the cache does not show yet).
  // create: CronJobReconciler creating a run (client.create(Kinds.Job)), and the validating webhook's
  //   dry-run create of the Job template (webhooks/jobtemplate_dryrun.ts, POST ...?dryRun=All).
  // delete: CronJobReconciler.deleteJob (history cleanup, concurrencyPolicy Replace).
  // +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
  { groups: ["batch"], resources: ["jobs"], verbs: ["get", "list", "watch", "create", "delete"] },
  // create, patch: the event recorder's sink (runtime/events/sink.ts: a new core/v1 Event, or a patch
  // of the count of a repeated one).
  // +kubebuilder:rbac:groups=core,resources=events,verbs=create;patch
  { groups: [""], resources: ["events"], verbs: ["create", "patch"] },
];
