// Each object read, trimmed to what the diagnosis reads as its page arrives: only that outlives the page (`why -A`
// holds thousands of CronJobs and their Jobs, the dashboard's informers keep them for as long as it runs). Pure, so
// the command's lists and the dashboard's informers trim alike.
import { type CronJob, GROUP, type Job } from "../../../api/v1/index.ts";
import type { KubeObject } from "../../../runtime/kinds.ts";
import type { EventFacts, OperatorFacts, PodFacts, WebhookFacts } from "./facts.ts";

/** kubectl apply's copy of the whole object: nothing the diagnosis reads, often the largest annotation. */
const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

function trimAnnotations(a: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!a || !(LAST_APPLIED in a)) return a;
  const { [LAST_APPLIED]: _applied, ...rest } = a;
  return rest;
}

/**
 * A CronJob of a list, with only what the diagnosis reads: not its Job template, nor its managedFields but the
 * entries that own spec.suspend (who suspended it), nor kubectl apply's copy of it. `why -A` holds thousands.
 */
export function trimCronJob(c: CronJob): CronJob {
  const { managedFields, annotations, ...metadata } = c.metadata ?? {};
  const suspendOwners = ((managedFields ?? []) as ManagedFieldsEntry[])
    .filter((m) => m.fieldsV1?.["f:spec"]?.["f:suspend"] !== undefined)
    .map((m) => ({
      manager: m.manager,
      operation: m.operation,
      time: m.time,
      fieldsV1: { "f:spec": { "f:suspend": {} } },
    }));
  const trimmedAnnotations = trimAnnotations(annotations);
  const { jobTemplate: _template, ...spec } = c.spec ?? {};
  return {
    ...c,
    metadata: {
      ...metadata,
      ...(trimmedAnnotations ? { annotations: trimmedAnnotations } : {}),
      ...(suspendOwners.length ? { managedFields: suspendOwners } : {}),
    },
    ...(c.spec ? { spec } : {}),
  } as CronJob;
}

interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  time?: string;
  fieldsV1?: { "f:spec"?: Record<string, unknown> };
}

/** A Job of the namespace, with only what the diagnosis reads: its metadata's, spec's limits and suspension, status. */
export function jobFacts(j: Job): Job {
  const m = j.metadata ?? {};
  const spec = (j.spec ?? {}) as {
    activeDeadlineSeconds?: number;
    backoffLimit?: number;
    suspend?: boolean;
    managedBy?: string;
    template?: { spec?: { restartPolicy?: string } };
  };
  const restartPolicy = spec.template?.spec?.restartPolicy;
  const annotations = trimAnnotations(m.annotations);
  return {
    ...(j.apiVersion ? { apiVersion: j.apiVersion } : {}),
    ...(j.kind ? { kind: j.kind } : {}),
    metadata: {
      ...(m.name !== undefined ? { name: m.name } : {}),
      ...(m.namespace !== undefined ? { namespace: m.namespace } : {}),
      ...(m.uid !== undefined ? { uid: m.uid } : {}),
      ...(m.creationTimestamp !== undefined ? { creationTimestamp: m.creationTimestamp } : {}),
      ...(m.labels ? { labels: m.labels } : {}),
      ...(annotations ? { annotations } : {}),
      ...(m.ownerReferences ? { ownerReferences: m.ownerReferences } : {}),
    },
    spec: {
      ...(spec.activeDeadlineSeconds !== undefined ? { activeDeadlineSeconds: spec.activeDeadlineSeconds } : {}),
      ...(spec.backoffLimit !== undefined ? { backoffLimit: spec.backoffLimit } : {}),
      // What says it is queued (api/v1/job.ts queuedBy).
      ...(spec.suspend !== undefined ? { suspend: spec.suspend } : {}),
      ...(spec.managedBy !== undefined ? { managedBy: spec.managedBy } : {}),
      ...(restartPolicy ? { template: { spec: { restartPolicy } } } : {}),
    },
    ...(j.status ? { status: j.status } : {}),
  } as Job;
}

export function podFacts(p: KubeObject): PodFacts {
  const status = (p.status ?? {}) as {
    phase?: string;
    conditions?: PodFacts["conditions"];
    containerStatuses?: {
      name: string;
      ready?: boolean;
      restartCount?: number;
      state?: {
        waiting?: { reason?: string; message?: string };
        terminated?: PodFacts["containers"][number]["terminated"];
      };
      lastState?: { terminated?: PodFacts["containers"][number]["lastTerminated"] };
    }[];
  };
  const statuses = [
    ...((status as { initContainerStatuses?: typeof status.containerStatuses }).initContainerStatuses ?? []),
    ...(status.containerStatuses ?? []),
  ];
  return {
    name: p.metadata?.name ?? "",
    job: p.metadata?.labels?.["job-name"],
    phase: status.phase,
    created: typeof p.metadata?.creationTimestamp === "string" ? p.metadata.creationTimestamp : undefined,
    conditions: (status.conditions ?? []).map((c) => ({
      type: c.type,
      status: c.status,
      ...(c.reason ? { reason: c.reason } : {}),
      ...(c.message ? { message: c.message } : {}),
      ...(c.lastTransitionTime ? { lastTransitionTime: c.lastTransitionTime } : {}),
    })),
    containers: statuses.map((c) => ({
      name: c.name,
      ready: c.ready === true,
      restartCount: c.restartCount ?? 0,
      ...(c.state?.waiting ? { waiting: c.state.waiting } : {}),
      ...(c.state?.terminated ? { terminated: c.state.terminated } : {}),
      ...(c.lastState?.terminated ? { lastTerminated: c.lastState.terminated } : {}),
    })),
  };
}

export function eventFacts(e: KubeObject): EventFacts {
  const ev = e as KubeObject & {
    involvedObject?: { kind?: string; name?: string };
    type?: string;
    reason?: string;
    message?: string;
    count?: number;
    lastTimestamp?: string;
    eventTime?: string;
    series?: { count?: number; lastObservedTime?: string };
  };
  return {
    object: `${ev.involvedObject?.kind}/${ev.involvedObject?.name}`,
    type: ev.type,
    reason: ev.reason,
    message: ev.message,
    count: ev.series?.count ?? ev.count ?? 1,
    last: ev.series?.lastObservedTime ?? ev.lastTimestamp ?? ev.eventTime,
  };
}

/** The operator's Lease, with what says who leads and since when. */
export function leaseFacts(lease: KubeObject): NonNullable<OperatorFacts["lease"]> {
  const spec = (lease.spec ?? {}) as {
    holderIdentity?: string;
    renewTime?: string;
    acquireTime?: string;
    leaseDurationSeconds?: number;
    leaseTransitions?: number;
  };
  return {
    ...(spec.holderIdentity ? { holder: spec.holderIdentity } : {}),
    ...(spec.renewTime ? { renewTime: spec.renewTime } : {}),
    ...(spec.acquireTime ? { acquireTime: spec.acquireTime } : {}),
    ...(spec.leaseDurationSeconds !== undefined ? { leaseDurationSeconds: spec.leaseDurationSeconds } : {}),
    ...(spec.leaseTransitions !== undefined ? { transitions: spec.leaseTransitions } : {}),
  };
}

/** One of the operator's Pods: whether it is ready and since when, its restarts, whether it runs with --leader-elect. */
export function operatorPodFacts(p: KubeObject): NonNullable<OperatorFacts["pods"]>[number] {
  const f = podFacts(p);
  const readyCondition = f.conditions.find((c) => c.type === "Ready");
  const leaderElect = leaderElectOf(p);
  return {
    name: f.name,
    ready: readyCondition?.status === "True",
    ...(readyCondition?.lastTransitionTime ? { readySince: readyCondition.lastTransitionTime } : {}),
    ...(f.phase ? { phase: f.phase } : {}),
    restarts: f.containers.reduce((n, c) => n + c.restartCount, 0),
    ...(f.created ? { created: f.created } : {}),
    ...(leaderElect !== undefined ? { leaderElect } : {}),
  };
}

/** The operator's Deployment: its replicas, the ready ones, and its Available condition. */
export function deploymentFacts(d: KubeObject): NonNullable<OperatorFacts["deployments"]>[number] {
  const st = (d.status ?? {}) as {
    readyReplicas?: number;
    conditions?: { type: string; status: string; lastTransitionTime?: string }[];
  };
  const available = st.conditions?.find((c) => c.type === "Available");
  return {
    name: d.metadata?.name ?? "",
    replicas: ((d.spec ?? {}) as { replicas?: number }).replicas ?? 1,
    readyReplicas: st.readyReplicas ?? 0,
    ...(available
      ? {
          available: {
            status: available.status === "True",
            ...(available.lastTransitionTime ? { since: available.lastTransitionTime } : {}),
          },
        }
      : {}),
  };
}

/** Whether a Pod's manager runs with --leader-elect (the flag's default is off), from its containers' command lines. */
function leaderElectOf(p: KubeObject): boolean | undefined {
  const containers = ((p.spec ?? {}) as { containers?: { command?: string[]; args?: string[] }[] }).containers;
  if (!containers) return undefined;
  for (const c of containers) {
    for (const a of [...(c.command ?? []), ...(c.args ?? [])]) {
      if (a === "--leader-elect" || a === "--leader-elect=true") return true;
      if (a === "--leader-elect=false") return false;
    }
  }
  return false;
}

interface ClientConfig {
  url?: string;
  service?: { namespace?: string; name?: string; path?: string };
}
interface WebhookSpec {
  name?: string;
  clientConfig?: ClientConfig;
  rules?: { apiGroups?: string[] }[];
}

function webhookFacts(
  name: string,
  cc: ClientConfig | undefined,
): WebhookFacts & { service?: { namespace: string; name: string } } {
  const svc = cc?.service;
  if (svc?.name && svc.namespace) {
    return {
      name,
      target: `${svc.namespace}/${svc.name}`,
      readyEndpoints: undefined,
      service: { namespace: svc.namespace, name: svc.name },
    };
  }
  return { name, target: cc?.url ?? "(no clientConfig)", readyEndpoints: undefined };
}

/** A webhook of the CronJob API group, with the Service it calls (read for its ready endpoints, then dropped). */
export type ServedWebhook = WebhookFacts & { service?: { namespace: string; name: string } };

/** The webhooks of a kind of admission configuration (validating, mutating) that admit the CronJob API group. */
export function admissionWebhooks(kind: string, configs: readonly KubeObject[]): ServedWebhook[] {
  const webhooks: ServedWebhook[] = [];
  for (const c of configs) {
    for (const w of (c.webhooks ?? []) as WebhookSpec[]) {
      if (!(w.rules ?? []).some((r) => (r.apiGroups ?? []).includes(GROUP))) continue;
      webhooks.push(webhookFacts(`${kind}/${c.metadata?.name}/${w.name}`, w.clientConfig));
    }
  }
  return webhooks;
}

/** The CRD's conversion webhook, when it converts by one. */
export function conversionWebhook(crd: KubeObject | undefined): ServedWebhook | undefined {
  const conversion = (crd?.spec as { conversion?: { strategy?: string; webhook?: { clientConfig?: ClientConfig } } })
    ?.conversion;
  if (conversion?.strategy !== "Webhook" || !conversion.webhook?.clientConfig) return undefined;
  return webhookFacts(`conversion/${crd?.metadata?.name}`, conversion.webhook.clientConfig);
}
