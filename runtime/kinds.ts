// How to address a kind on the API server. Generic: callers describe their own kinds.

export interface ResourceKind {
  /** API group; "" for the core group. */
  group: string;
  version: string;
  kind: string;
  /** Lower-case plural resource name, as in the URL. */
  plural: string;
  namespaced: boolean;
}

/** "jobs.batch" / "configmaps": the name metrics and logs use for a resource. */
export function resourceName(rk: ResourceKind): string {
  return rk.group ? `${rk.plural}.${rk.group}` : rk.plural;
}

/** The collection path, e.g. /apis/batch/v1/namespaces/ns/jobs (namespace omitted → all namespaces). */
export function collectionPath(rk: ResourceKind, namespace?: string): string {
  const base = rk.group ? `/apis/${rk.group}/${rk.version}` : `/api/${rk.version}`;
  if (rk.namespaced && namespace) return `${base}/namespaces/${encodeURIComponent(namespace)}/${rk.plural}`;
  return `${base}/${rk.plural}`;
}

export function objectPath(
  rk: ResourceKind,
  namespace: string | undefined,
  name: string,
  subresource?: string,
): string {
  if (rk.namespaced && !namespace) throw new Error(`${rk.kind} "${name}" is namespaced: a namespace is required`);
  const p = `${collectionPath(rk, namespace)}/${encodeURIComponent(name)}`;
  return subresource ? `${p}/${subresource}` : p;
}

/** A few built-in kinds the runtime itself uses. */
export const Kinds = {
  Job: { group: "batch", version: "v1", kind: "Job", plural: "jobs", namespaced: true },
  Lease: { group: "coordination.k8s.io", version: "v1", kind: "Lease", plural: "leases", namespaced: true },
  Event: { group: "", version: "v1", kind: "Event", plural: "events", namespaced: true },
  ConfigMap: { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true },
  Pod: { group: "", version: "v1", kind: "Pod", plural: "pods", namespaced: true },
  Namespace: { group: "", version: "v1", kind: "Namespace", plural: "namespaces", namespaced: false },
  Service: { group: "", version: "v1", kind: "Service", plural: "services", namespaced: true },
  EndpointSlice: {
    group: "discovery.k8s.io",
    version: "v1",
    kind: "EndpointSlice",
    plural: "endpointslices",
    namespaced: true,
  },
  Secret: { group: "", version: "v1", kind: "Secret", plural: "secrets", namespaced: true },
  ResourceQuota: { group: "", version: "v1", kind: "ResourceQuota", plural: "resourcequotas", namespaced: true },
  LimitRange: { group: "", version: "v1", kind: "LimitRange", plural: "limitranges", namespaced: true },
  MutatingWebhookConfiguration: {
    group: "admissionregistration.k8s.io",
    version: "v1",
    kind: "MutatingWebhookConfiguration",
    plural: "mutatingwebhookconfigurations",
    namespaced: false,
  },
  ValidatingWebhookConfiguration: {
    group: "admissionregistration.k8s.io",
    version: "v1",
    kind: "ValidatingWebhookConfiguration",
    plural: "validatingwebhookconfigurations",
    namespaced: false,
  },
  CustomResourceDefinition: {
    group: "apiextensions.k8s.io",
    version: "v1",
    kind: "CustomResourceDefinition",
    plural: "customresourcedefinitions",
    namespaced: false,
  },
} as const satisfies Record<string, ResourceKind>;

/** The parts of an object the runtime reads; everything else passes through untouched. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: OwnerReference[];
    managedFields?: unknown[];
    deletionTimestamp?: string | Date;
    creationTimestamp?: string | Date;
    [k: string]: unknown;
  };
  [k: string]: unknown;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** "namespace/name" (or "name" for cluster-scoped objects), client-go's MetaNamespaceKeyFunc. */
export function objectKey(obj: KubeObject): string {
  const ns = obj.metadata?.namespace;
  const name = obj.metadata?.name ?? "";
  return ns ? `${ns}/${name}` : name;
}

/** The controller ownerReference of an object, if any (metav1.GetControllerOf). */
export function controllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata?.ownerReferences?.find((r) => r.controller === true);
}
