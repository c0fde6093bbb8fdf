// What `kubectl cron why` reads of the operator itself, wherever and however it runs: its webhooks (which also say
// where it runs), its Lease, its Pods and its Deployment. One small read each, so a reader sees what is asked of the
// cluster and in which order a failure is said; what each object says of its health is the model's (model/trims.ts).
import { type CronJob, CronJobResource, GROUP } from "../../../api/v1/index.ts";
import { isNotFound } from "../../../runtime/errors.ts";
import { type KubeObject, Kinds, type ResourceKind } from "../../../runtime/kinds.ts";
import { type ClaimRead, splitRef } from "../model/claims.ts";
import { newestDecision, type OperatorFacts } from "../model/facts.ts";
import {
  admissionWebhooks,
  conversionWebhook,
  deploymentFacts,
  leaseFacts,
  operatorPodFacts,
  type ServedWebhook,
} from "../model/trims.ts";
import { listAll, listMapped } from "./api.ts";
import { type Attempt, early, type Reader, settled } from "./clocks.ts";

/**
 * The operator's own objects as every install names them (kustomize's config/default and the chart, whatever the
 * release name): its Lease (--leader-election-id) and its Pods' and Deployment's labels. Where they live is found,
 * not assumed: the webhooks' Service, else the Pods by label in any namespace, else the default install's namespace.
 */
const OPERATOR = {
  namespace: "cronjob-operator-system",
  leaseName: "80807133.tutorial.kubebuilder.io",
  selector: "app.kubernetes.io/name=cronjob-operator,control-plane=controller-manager",
} as const;

// A Service's endpoints are read as discovery.k8s.io/v1 EndpointSlices (served from 1.21, the whole supported range):
// core/v1 Endpoints is deprecated from 1.33, where each read of it prints a deprecation warning.
/** The label an EndpointSlice names its Service by. */
const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

interface EndpointSliceLike {
  endpoints?: { conditions?: { ready?: boolean | null } }[];
}

/** The ready addresses of a Service's core/v1 Endpoints (0 when it has none), for a server without EndpointSlices. */
async function readyAddresses(client: Reader, service: { namespace: string; name: string }): Promise<number> {
  try {
    const ep = await client.get<KubeObject>(ENDPOINTS, service.namespace, service.name);
    const subsets = (ep.subsets ?? []) as { addresses?: unknown[] }[];
    return subsets.reduce((n, s) => n + (s.addresses?.length ?? 0), 0);
  } catch (e) {
    if (isNotFound(e)) return 0;
    throw e;
  }
}
const ENDPOINTS: ResourceKind = { group: "", version: "v1", kind: "Endpoints", plural: "endpoints", namespaced: true };

/** A slice's ready endpoints: `conditions.ready` unset counts as ready, as the API defines it. */
function readyIn(slice: EndpointSliceLike): number {
  return (slice.endpoints ?? []).filter((e) => e.conditions?.ready !== false).length;
}
const DEPLOYMENT: ResourceKind = {
  group: "apps",
  version: "v1",
  kind: "Deployment",
  plural: "deployments",
  namespaced: true,
};

/**
 * The operator's health: its webhooks (which also say where it runs), its Lease, its Pods and its Deployment. With the
 * namespace's claim (`claim`), the install it names is the one looked at (unless --operator-namespace says where).
 */
export async function gatherOperator(
  client: Reader,
  attempt: Attempt,
  o: {
    operatorNamespace?: string | undefined;
    leaseName?: string | undefined;
    /** The CronJobs read (the record's newest decision); a promise: their list may still be on its way. */
    cronJobs?: readonly CronJob[] | Promise<readonly CronJob[]>;
    /** The claim of the namespace diagnosed, when one namespace is. */
    claim?: ClaimRead;
  } = {},
): Promise<OperatorFacts> {
  const webhooks = await readWebhooks(client, attempt);
  await readReadyEndpoints(client, attempt, webhooks);
  const install = claimedInstall(o.claim);
  const where = await findOperator(client, attempt, webhooks, o.operatorNamespace, install?.namespace);
  const leaseName =
    o.leaseName ?? (install && install.namespace === where.namespace ? install.name : OPERATOR.leaseName);
  const objects = await readOperatorObjects(client, attempt, where, leaseName);
  const newest = newestDecision((await o.cronJobs) ?? []);
  return {
    namespace: where.namespace,
    foundBy: where.foundBy,
    selector: OPERATOR.selector,
    leaseName,
    ...objects,
    webhooks: webhooks.map(({ service: _s, ...w }) => w),
    ...(newest ? { newestDecision: newest } : {}),
    ...(o.claim ? { claim: o.claim } : {}),
  };
}

/** The install a claim names (its namespace, its leader-election id), when it names one. */
const claimedInstall = (claim: ClaimRead | undefined) =>
  claim?.state === "claimed" ? splitRef(claim.claim.install) : undefined;

/**
 * The operator of each namespace, from `base` (gatherOperator's, read once for many namespaces): the install the
 * namespace's claim names when it is not the one `base` looked at (its Lease, Pods and Deployments read once per
 * install), else `base`; with the claim. --operator-namespace (`flag`) keeps `base`.
 */
export function operatorsByClaim(
  client: Reader,
  attempt: Attempt,
  base: OperatorFacts,
  flag: string | undefined,
): (claim: ClaimRead, cronJobs: readonly CronJob[]) => Promise<OperatorFacts> {
  const installs = new Map<string, ReturnType<typeof readOperatorObjects>>();
  return async (claim, cronJobs) => {
    const install = claimedInstall(claim);
    if (flag || !install || (install.namespace === base.namespace && install.name === base.leaseName))
      return { ...base, claim };
    const key = `${install.namespace}/${install.name}`;
    let objects = installs.get(key);
    if (!objects) {
      objects = readOperatorObjects(client, attempt, { namespace: install.namespace, foundBy: "claim" }, install.name);
      installs.set(key, objects);
    }
    const { lease: _l, leaseUnread: _u, pods: _p, deployments: _d, newestDecision: _n, ...rest } = base;
    const newest = newestDecision(cronJobs);
    return {
      ...rest,
      namespace: install.namespace,
      foundBy: "claim",
      leaseName: install.name,
      ...(await objects),
      ...(newest ? { newestDecision: newest } : {}),
      claim,
    };
  };
}

/** The object, or undefined when it does not exist. */
const getIfExists = (client: Reader, rk: ResourceKind, namespace: string | undefined, name: string) =>
  client.get<KubeObject>(rk, namespace, name).catch((e: unknown) => {
    if (isNotFound(e)) return undefined;
    throw e;
  });

/**
 * The webhooks that admit or convert the CronJob API group: the admission configurations' and the CRD's conversion.
 * The configurations and the CRD are asked for at once; what could not be read is said in this order.
 */
async function readWebhooks(client: Reader, attempt: Attempt): Promise<ServedWebhook[]> {
  const configsRead = (
    [
      ["validating", Kinds.ValidatingWebhookConfiguration],
      ["mutating", Kinds.MutatingWebhookConfiguration],
    ] as const
  ).map(([kind, rk]) => [kind, rk, early(() => listAll<KubeObject>(client, rk, {}))] as const);
  const crdName = `${CronJobResource.plural}.${GROUP}`;
  const crdRead = early(() => getIfExists(client, Kinds.CustomResourceDefinition, undefined, crdName));
  const webhooks: ServedWebhook[] = [];
  for (const [kind, rk, read] of configsRead) {
    webhooks.push(...admissionWebhooks(kind, (await attempt(`${rk.plural}`, () => settled(read))) ?? []));
  }
  const conversion = conversionWebhook(await attempt(`customresourcedefinition ${crdName}`, () => settled(crdRead)));
  if (conversion) webhooks.push(conversion);
  return webhooks;
}

/** Each webhook's ready endpoints, one read per Service (the CronJob's, the fleet kinds' and the conversion share it). */
async function readReadyEndpoints(client: Reader, attempt: Attempt, webhooks: ServedWebhook[]): Promise<void> {
  const readyOf = new Map<string, Promise<number | undefined>>();
  for (const w of webhooks) {
    if (!w.service) continue;
    const key = `${w.service.namespace}/${w.service.name}`;
    if (!readyOf.has(key)) readyOf.set(key, readyEndpointsOf(client, attempt, w.service));
    const ready = await readyOf.get(key)!;
    if (ready !== undefined) w.readyEndpoints = ready;
  }
}

/** A Service's ready endpoints, from its EndpointSlices. */
function readyEndpointsOf(
  client: Reader,
  attempt: Attempt,
  service: { namespace: string; name: string },
): Promise<number | undefined> {
  return attempt(`endpointslices of service ${service.namespace}/${service.name}`, async () => {
    try {
      const slices = await listMapped(
        client,
        Kinds.EndpointSlice,
        { namespace: service.namespace, labelSelector: `${SERVICE_NAME_LABEL}=${service.name}` },
        (slice: KubeObject) => readyIn(slice as EndpointSliceLike),
      );
      return slices.reduce((n, k) => n + k, 0);
    } catch (e) {
      // discovery.k8s.io/v1 not served (before 1.21): the Service's Endpoints, not yet deprecated there.
      if (isNotFound(e)) return readyAddresses(client, service);
      throw e;
    }
  });
}

/** Where the operator runs, how that was found, and its Pods when finding it listed them. */
interface Where {
  namespace: string;
  foundBy: OperatorFacts["foundBy"];
  pods?: KubeObject[];
}

/**
 * Where it runs: the flag, else the install the namespace's claim names (`claimed`), else its webhooks' Service (a
 * Helm release's namespace too), else its Pods found by label in any namespace (webhooks off, or served from a URL as
 * under `make run`), else the default install's.
 */
async function findOperator(
  client: Reader,
  attempt: Attempt,
  webhooks: readonly ServedWebhook[],
  flag: string | undefined,
  claimed: string | undefined,
): Promise<Where> {
  if (flag) return { namespace: flag, foundBy: "flag" };
  if (claimed) return { namespace: claimed, foundBy: "claim" };
  const served = webhooks.find((w) => w.service)?.service?.namespace;
  if (served) return { namespace: served, foundBy: "webhook" };
  const selector = OPERATOR.selector;
  // A cluster-wide list the user may not make: then the default namespace is read instead.
  const anywhere = await attempt(`pods labelled ${selector} in any namespace`, () =>
    listAll<KubeObject>(client, Kinds.Pod, { labelSelector: selector }),
  );
  const found = anywhere?.find((p) => p.metadata?.namespace)?.metadata?.namespace;
  if (found)
    return { namespace: found, foundBy: "label", pods: anywhere!.filter((p) => p.metadata?.namespace === found) };
  return { namespace: OPERATOR.namespace, foundBy: "default" };
}

/** Its Lease, Pods and Deployments, asked for at once; what could not be read is said in this order. */
async function readOperatorObjects(
  client: Reader,
  attempt: Attempt,
  where: Where,
  leaseName: string,
): Promise<Pick<OperatorFacts, "lease" | "leaseUnread" | "pods" | "deployments">> {
  const { namespace } = where;
  const selector = OPERATOR.selector;
  const leaseRead = early(() => getIfExists(client, Kinds.Lease, namespace, leaseName));
  const podsRead = where.pods
    ? undefined
    : early(() => listAll<KubeObject>(client, Kinds.Pod, { namespace, labelSelector: selector }));
  const deploymentsRead = early(() => listAll<KubeObject>(client, DEPLOYMENT, { namespace, labelSelector: selector }));
  // null: there is none; undefined: it could not be read (a role without leases, such as the built-in view).
  const lease = await attempt(`lease ${namespace}/${leaseName}`, async () => (await settled(leaseRead)) ?? null);
  const pods = where.pods ?? (await attempt(`pods in ${namespace}`, () => settled(podsRead!)));
  const deployments = await attempt(`deployments in ${namespace}`, () => settled(deploymentsRead));
  return {
    ...(lease ? { lease: leaseFacts(lease) } : lease === undefined ? { leaseUnread: true as const } : {}),
    ...(pods ? { pods: pods.map(operatorPodFacts) } : {}),
    ...(deployments ? { deployments: deployments.map(deploymentFacts) } : {}),
  };
}
