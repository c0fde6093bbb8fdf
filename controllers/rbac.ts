// The RBAC the manager needs: the TypeScript equivalent of kubebuilder's
// `// +kubebuilder:rbac:groups=...,resources=...,verbs=...` markers. `make manifests`
// (hack/generate-manifests.ts) merges and sorts these like controller-gen and writes the ClusterRole
// `manager-role` to config/rbac/role.yaml, plus, as controller-gen does for markers with `namespace=`, a
// Role `manager-role` in that namespace (bound by config/rbac/role_binding.yaml). Least privilege: add a rule
// here when the code starts using a new verb or resource, then run `make manifests`.
//
// The leader-election Role (leases, events in the manager's namespace) is static, in
// config/rbac/leader_election_role.yaml; the metrics-auth ClusterRole is in config/rbac/metrics_auth_role.yaml.
import { CALENDAR_PLURAL, GROUP, GROUP_PLURAL, PLURAL, RESOURCE } from "../api/v1/index.ts";

/**
 * One +kubebuilder:rbac marker: `groups` uses "" (or "core") for the core API group; with `namespace` the rule
 * goes to the Role in that namespace instead of the ClusterRole.
 */
export interface RBACMarker {
  groups: readonly string[];
  namespace?: string;
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
  // get: ChildJobs.get (controllers/jobs.ts: a live GET of an active Job the cache does not show yet).
  // create: CronJobReconciler creating a run (client.create(Kinds.Job)), and the validating webhook's
  //   dry-run create of the Job template (webhooks/jobtemplate_dryrun.ts, POST ...?dryRun=All).
  // delete: CronJobReconciler.deleteJob (history cleanup, concurrencyPolicy Replace).
  // update: endJobs (controllers/starts.ts: the commit ends a run whose Pods never started, PUT of step 4's live GET).
  // +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;update;delete
  { groups: ["batch"], resources: ["jobs"], verbs: ["get", "list", "watch", "create", "update", "delete"] },
  // list, watch: the ConcurrencyGroup informer (.watches(ConcurrencyGroupResource)); admission reads a group's
  // limit from the cache (controllers/groups.ts).
  // +kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=concurrencygroups,verbs=list;watch
  { groups: [GROUP], resources: [GROUP_PLURAL], verbs: ["list", "watch"] },
  // list, watch: the ExclusionCalendar informer (.watches(ExclusionCalendarResource)); a CronJob's exclusions read
  // the calendars it names from the cache (controllers/calendars.ts).
  // +kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=exclusioncalendars,verbs=list;watch
  { groups: [GROUP], resources: [CALENDAR_PLURAL], verbs: ["list", "watch"] },
  // list: readStarts (controllers/starts.ts) reads a run's Pods once its start limit has passed.
  // +kubebuilder:rbac:groups=core,resources=pods,verbs=list
  { groups: [""], resources: ["pods"], verbs: ["list"] },
  // create, patch: the event recorder's sink (runtime/events/sink.ts: a new core/v1 Event, or a patch
  // of the count of a repeated one).
  // +kubebuilder:rbac:groups=core,resources=events,verbs=create;patch
  { groups: [""], resources: ["events"], verbs: ["create", "patch"] },
];

/** The names the webhook certificate rules are limited to (kustomize prefixes the configurations'). */
export const WEBHOOK_CERT_SECRET = "webhook-server-cert";
export const MUTATING_WEBHOOK_CONFIGURATION = "mutating-webhook-configuration";
export const VALIDATING_WEBHOOK_CONFIGURATION = "validating-webhook-configuration";

/**
 * What the webhook certificate provisioner calls (runtime/webhook/certprovisioner.ts, on with
 * --webhook-cert-provision=self as in config/default): its own Secret in the manager's namespace ("system",
 * which kustomize replaces) and its own two webhook configurations, by name. The configuration names in
 * resourceNames get the kustomize name prefix through config/rbac/kustomizeconfig.yaml.
 */
export const WEBHOOK_CERT_RBAC: readonly RBACMarker[] = [
  // create: CertProvisioner.ensureSecret when the Secret does not exist (create cannot be limited to a name).
  // +kubebuilder:rbac:groups=core,namespace=system,resources=secrets,verbs=create
  { groups: [""], namespace: "system", resources: ["secrets"], verbs: ["create"] },
  // get, update: CertProvisioner.ensureSecret reading it and writing a renewed certificate (PUT at the
  //   resourceVersion read); list, watch: the watch on it (an Informer with fieldSelector metadata.name).
  // +kubebuilder:rbac:groups=core,namespace=system,resources=secrets,verbs=get;list;watch;update,resourceNames=webhook-server-cert
  {
    groups: [""],
    namespace: "system",
    resources: ["secrets"],
    resourceNames: [WEBHOOK_CERT_SECRET],
    verbs: ["get", "list", "watch", "update"],
  },
  // get, update: CertProvisioner.injectCABundle (PUT with the caBundle set in every webhook); list, watch: the
  //   watch on each configuration, so a re-applied one gets its caBundle back at once.
  // +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,verbs=get;list;watch;update,resourceNames=mutating-webhook-configuration
  {
    groups: ["admissionregistration.k8s.io"],
    resources: ["mutatingwebhookconfigurations"],
    resourceNames: [MUTATING_WEBHOOK_CONFIGURATION],
    verbs: ["get", "list", "watch", "update"],
  },
  // +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=get;list;watch;update,resourceNames=validating-webhook-configuration
  {
    groups: ["admissionregistration.k8s.io"],
    resources: ["validatingwebhookconfigurations"],
    resourceNames: [VALIDATING_WEBHOOK_CONFIGURATION],
    verbs: ["get", "list", "watch", "update"],
  },
  // get, update: CertProvisioner.injectCABundle into the CRD's conversion webhook (v1 ↔ v2); list, watch: the
  //   watch on it, so a re-applied CRD gets its caBundle back at once.
  // +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch;update,resourceNames=cronjobs.batch.tutorial.kubebuilder.io
  {
    groups: ["apiextensions.k8s.io"],
    resources: ["customresourcedefinitions"],
    resourceNames: [RESOURCE],
    verbs: ["get", "list", "watch", "update"],
  },
];

/** The webhook Service's name (kustomize prefixes it in resourceNames through config/rbac/kustomizeconfig.yaml). */
export const WEBHOOK_SERVICE = "webhook-service";

/**
 * What the webhook failure gate calls (runtime/webhook/failuregate.ts: the webhooks a release adds turn from Ignore
 * to Fail once their Service port has a ready endpoint), with certificates provisioned either way: the webhook
 * Service's EndpointSlices and the Service, in the manager's namespace, and the validating configuration it writes.
 */
const WEBHOOK_GATE_RBAC: readonly RBACMarker[] = [
  // list, watch: WebhookFailureGate's informer on the Service's EndpointSlices (label kubernetes.io/service-name).
  // +kubebuilder:rbac:groups=discovery.k8s.io,namespace=system,resources=endpointslices,verbs=list;watch
  { groups: ["discovery.k8s.io"], namespace: "system", resources: ["endpointslices"], verbs: ["list", "watch"] },
  // get: WebhookFailureGate.pass reading which port name a webhook's Service port is.
  // +kubebuilder:rbac:groups=core,namespace=system,resources=services,verbs=get,resourceNames=webhook-service
  { groups: [""], namespace: "system", resources: ["services"], resourceNames: [WEBHOOK_SERVICE], verbs: ["get"] },
  // get, update: WebhookFailureGate.pass (PUT with failurePolicy Fail); list, watch: its informer on it.
  // +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=get;list;watch;update,resourceNames=validating-webhook-configuration
  {
    groups: ["admissionregistration.k8s.io"],
    resources: ["validatingwebhookconfigurations"],
    resourceNames: [VALIDATING_WEBHOOK_CONFIGURATION],
    verbs: ["get", "list", "watch", "update"],
  },
];

/** Everything the manager's ServiceAccount is granted by config/rbac/role.yaml. */
export const MANAGER_RBAC: readonly RBACMarker[] = [
  ...CRONJOB_CONTROLLER_RBAC,
  ...WEBHOOK_CERT_RBAC,
  ...WEBHOOK_GATE_RBAC,
];

/**
 * What an install that claims its namespaces calls (runtime/sharding: --namespace-claims, on with
 * --watch-namespaces, --watch-namespace-selector and --sharding): the claim Lease in every namespace it acts in
 * (NamespaceClaims: its informer, a create where none is, a PUT to take or let go of one). Not in the default
 * ClusterRole, which claims nothing: config/rbac/claims/claims_role.yaml, bound by a RoleBinding in each namespace of a
 * tenant's install or a ClusterRoleBinding for a cluster-wide one (config/tenant, config/sharded, the chart).
 */
export const NAMESPACE_CLAIMS_RBAC: readonly RBACMarker[] = [
  // +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update
  { groups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "list", "watch", "create", "update"] },
];

/**
 * What a sharded install calls in its own namespace (runtime/sharding/members.ts): each replica's own Lease
 * (created, renewed, deleted when it stops) and the informer over the install's Leases, which tells the live
 * replicas. The leader-election Role (config/rbac/leader_election_role.yaml) grants the same (make manifests checks that it covers these).
 */
export const SHARDING_RBAC: readonly RBACMarker[] = [
  // +kubebuilder:rbac:groups=coordination.k8s.io,namespace=system,resources=leases,verbs=get;list;watch;create;update;delete
  {
    groups: ["coordination.k8s.io"],
    namespace: "system",
    resources: ["leases"],
    verbs: ["get", "list", "watch", "create", "update", "delete"],
  },
];

/** --watch-namespace-selector, and a cluster-wide sharded install: the namespaces it may act in, as they come and go. */
export const NAMESPACE_SELECTOR_RBAC: readonly RBACMarker[] = [
  // +kubebuilder:rbac:groups=core,resources=namespaces,verbs=list;watch
  { groups: [""], resources: ["namespaces"], verbs: ["list", "watch"] },
];
