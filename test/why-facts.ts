// What `kubectl cron why` is given to diagnose, built by hand for the tests that call diagnose(): the operator as it
// is when all is well (its names as `make deploy` installs it), and a CronJob's facts with nothing else wrong.
import type { CronJob } from "../api/v1/index.ts";
import type { WhyFacts } from "../cmd/kubectl-cron/model/facts.ts";
import type { KubeObject } from "../runtime/kinds.ts";
import { recorded } from "./fixtures/builtin-v1/index.ts";

export const OPERATOR_NS = "cronjob-operator-system";
export const LEASE = "80807133.tutorial.kubebuilder.io";
export const WEBHOOK_SERVICE = "cronjob-operator-webhook-service";
export const DEPLOYMENT = "cronjob-operator-controller-manager";
export const OPERATOR_SELECTOR = "app.kubernetes.io/name=cronjob-operator,control-plane=controller-manager";

/** The operator's facts, healthy: one ready replica that leads, its webhook served. */
export function healthyOperator(now: Date): WhyFacts["operator"] {
  return {
    namespace: OPERATOR_NS,
    foundBy: "webhook",
    selector: OPERATOR_SELECTOR,
    leaseName: LEASE,
    lease: {
      holder: "cronjob-operator-controller-manager-7d9f-abcde_0c1d",
      acquireTime: "2026-01-01T00:00:10.000000Z",
      renewTime: new Date(now.getTime() - 3000).toISOString(),
      leaseDurationSeconds: 15,
      transitions: 1,
    },
    pods: [
      {
        name: "cronjob-operator-controller-manager-7d9f-abcde",
        ready: true,
        phase: "Running",
        restarts: 0,
        created: "2026-01-01T00:00:00Z",
        leaderElect: true,
      },
    ],
    deployments: [{ name: DEPLOYMENT, replicas: 1, readyReplicas: 1, available: { status: true } }],
    webhooks: [
      {
        name: "validating/cronjob-operator/vcronjob-v1.kb.io",
        target: `${OPERATOR_NS}/${WEBHOOK_SERVICE}`,
        readyEndpoints: 1,
      },
    ],
  };
}

/** WhyFacts for `cj` at `now`, everything else empty and healthy unless `o` says otherwise. */
export function whyFacts(cj: KubeObject, now: Date, o: Partial<WhyFacts> = {}): WhyFacts {
  return {
    now,
    localNow: now,
    serverClock: true,
    cronJob: cj as CronJob,
    jobs: [],
    pods: [],
    events: [],
    foreignJobs: [],
    quotas: [],
    limitRanges: [],
    operator: healthyOperator(now),
    unreadable: [],
    ...o,
  };
}

const resources = (groupVersion: string, list: [string, string, boolean][]) => ({
  kind: "APIResourceList",
  apiVersion: "v1",
  groupVersion,
  resources: list.map(([name, kind, namespaced]) => ({
    name,
    singularName: "",
    namespaced,
    kind,
    verbs: ["get", "list"],
  })),
});

/** What the API server serves that `why` reads, besides batch/v1 (recorded) and our CRD (the fake's own). */
export const WHY_DISCOVERY = {
  ...recorded().discovery,
  "/api/v1": resources("v1", [
    ["pods", "Pod", true],
    ["events", "Event", true],
    ["resourcequotas", "ResourceQuota", true],
    ["limitranges", "LimitRange", true],
  ]),
  "/apis/discovery.k8s.io/v1": resources("discovery.k8s.io/v1", [["endpointslices", "EndpointSlice", true]]),
  "/apis/coordination.k8s.io/v1": resources("coordination.k8s.io/v1", [["leases", "Lease", true]]),
  "/apis/apps/v1": resources("apps/v1", [["deployments", "Deployment", true]]),
  "/apis/admissionregistration.k8s.io/v1": resources("admissionregistration.k8s.io/v1", [
    ["validatingwebhookconfigurations", "ValidatingWebhookConfiguration", false],
    ["mutatingwebhookconfigurations", "MutatingWebhookConfiguration", false],
  ]),
  "/apis/apiextensions.k8s.io/v1": resources("apiextensions.k8s.io/v1", [
    ["customresourcedefinitions", "CustomResourceDefinition", false],
  ]),
};
