// Namespace claims as an install that claims its namespaces writes them (--watch-namespaces, --sharding): the claim
// Lease in each namespace it acts in, and the instance Lease whose renewal keeps it alive, for the plugin's tests.
import type { KubeObject } from "../runtime/kinds.ts";

/** A tenant's sharded install: its namespace and leader-election id, as its claims name it. */
export const TENANT_NS = "team-a-system";
export const TENANT_ID = "80807133.tutorial.kubebuilder.io";
export const TENANT_INSTALL = `${TENANT_NS}/${TENANT_ID}`;

/** A MicroTime `seconds` from `now` (negative: before), as the API server writes it. */
export const microTime = (now: Date, seconds: number) =>
  new Date(now.getTime() + seconds * 1000).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");

/** The claim of `namespace`: held by `holder` ("" once released), kept alive by `instanceLease`. */
export function claimLease(o: {
  namespace: string;
  holder: string;
  instanceLease: string;
  install?: string;
  acquireTime?: string;
  leaseDurationSeconds?: number;
  transitions?: number;
}): KubeObject {
  return {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: {
      name: "cronjob-operator",
      namespace: o.namespace,
      labels: { "cronjob-operator.tutorial.kubebuilder.io/claim": "true" },
      annotations: {
        "cronjob-operator.tutorial.kubebuilder.io/install": o.install ?? TENANT_INSTALL,
        "cronjob-operator.tutorial.kubebuilder.io/instance-lease": o.instanceLease,
      },
      creationTimestamp: "2026-11-01T00:00:00Z",
    },
    spec: {
      holderIdentity: o.holder,
      leaseDurationSeconds: o.leaseDurationSeconds ?? 15,
      ...(o.acquireTime ? { acquireTime: o.acquireTime } : {}),
      leaseTransitions: o.transitions ?? 1,
    },
  };
}

/** An instance's own Lease in its install's namespace (a shard's: `<id>-<pod>`), last renewed at `renewTime`. */
export function instanceLease(o: {
  pod: string;
  renewTime: string;
  namespace?: string;
  id?: string;
  holder?: string;
  leaseDurationSeconds?: number;
}): KubeObject {
  const id = o.id ?? TENANT_ID;
  return {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: {
      name: `${id}-${o.pod}`,
      namespace: o.namespace ?? TENANT_NS,
      labels: { "cronjob-operator.tutorial.kubebuilder.io/instance-of": id },
      creationTimestamp: "2026-11-01T00:00:00Z",
    },
    spec: {
      holderIdentity: o.holder ?? o.pod,
      renewTime: o.renewTime,
      acquireTime: "2026-11-01T00:00:05.000000Z",
      leaseDurationSeconds: o.leaseDurationSeconds ?? 15,
    },
  };
}

/** `<namespace>/<name>` of an instance Lease built by instanceLease(). */
export const leaseRef = (l: KubeObject) => `${l.metadata?.namespace}/${l.metadata?.name}`;
