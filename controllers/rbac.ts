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

export const CRONJOB_CONTROLLER_RBAC: readonly RBACMarker[] = [
  // +kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=cronjobs,verbs=get;list;watch
  { groups: [GROUP], resources: [PLURAL], verbs: ["get", "list", "watch"] },
  // +kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=cronjobs/status,verbs=get;update;patch
  { groups: [GROUP], resources: [`${PLURAL}/status`], verbs: ["get", "update", "patch"] },
  // The Jobs' ownerReferences set blockOwnerDeletion, which the OwnerReferencesPermissionEnforcement
  // admission plugin (on in OpenShift, for one) allows only to who may update the owner's finalizers.
  // +kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=cronjobs/finalizers,verbs=update
  { groups: [GROUP], resources: [`${PLURAL}/finalizers`], verbs: ["update"] },
  // +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
  { groups: ["batch"], resources: ["jobs"], verbs: ["get", "list", "watch", "create", "delete"] },
  // +kubebuilder:rbac:groups=core,resources=events,verbs=create;patch
  { groups: [""], resources: ["events"], verbs: ["create", "patch"] },
  // +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
  { groups: ["events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] },
];
