// What `kubectl cron why` reads: live state only, with read access only. Everything is gathered into plain data
// (WhyFacts) first, so the diagnosis (why.ts) is a pure function of it and its tests need no cluster. A read the
// user may not make (403) or that fails is noted, not fatal: the diagnosis says what it could not see.
import {
  ConcurrencyGroupResource,
  CronJobResource,
  ExclusionCalendarResource,
  type CronJob,
  GROUP,
  groupLimitOf,
  type Job,
  runJobName,
  RefusedReason,
} from "../../../api/v1/index.ts";
import type { Client } from "../../../runtime/client.ts";
import { APIError, isNotFound } from "../../../runtime/errors.ts";
import { type KubeObject, Kinds, type ResourceKind } from "../../../runtime/kinds.ts";
import { getCronJob, listAll, listMapped } from "./api.ts";
import type { Context } from "../model/context.ts";
import { type CalendarRead, calendarNamesOf } from "../../../api/v1/index.ts";
import { calendarsFromList } from "../model/exclusions.ts";
import { type GroupFacts, type GroupMember, groupsOf, memberOf } from "../model/groupfacts.ts";

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

/** A Pod, the fields the diagnosis reads. */
export interface PodFacts {
  name: string;
  /** The Job it belongs to (its job-name label). */
  job: string | undefined;
  phase: string | undefined;
  created: string | undefined;
  conditions: { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string }[];
  containers: {
    name: string;
    ready: boolean;
    restartCount: number;
    waiting?: { reason?: string; message?: string };
    terminated?: { reason?: string; exitCode?: number; message?: string; finishedAt?: string };
    lastTerminated?: { reason?: string; exitCode?: number; finishedAt?: string };
  }[];
}

interface EventFacts {
  /** The object it is about: `Kind/name`. */
  object: string;
  type: string | undefined;
  reason: string | undefined;
  message: string | undefined;
  count: number;
  last: string | undefined;
}

interface WebhookFacts {
  /** `validating/NAME/webhook` or `mutating/…` or `conversion/CRD`. */
  name: string;
  /** `namespace/service`, or the URL. */
  target: string;
  /** Ready endpoint addresses of the Service; undefined for a URL, or when they could not be read. */
  readyEndpoints: number | undefined;
}

export interface WhyFacts {
  /** The API server's clock (its Date header), else this machine's. */
  now: Date;
  /** This machine's clock when the API server answered. */
  localNow: Date;
  serverClock: boolean;
  cronJob: CronJob;
  /** The CronJob's Jobs (controller owner reference to it). */
  jobs: Job[];
  /** The Pods of those Jobs. */
  pods: PodFacts[];
  /** Events about the CronJob, its Jobs and their Pods (the API server keeps them about an hour). */
  events: EventFacts[];
  /** A Job in the namespace holding a name the record says was refused as taken (not ours). */
  foreignJobs: Job[];
  quotas: { name: string; hard: Record<string, string>; used: Record<string, string> }[];
  limitRanges: string[];
  /** The concurrency group spec.concurrencyGroup names (absent: it names none). */
  group?: GroupFacts;
  /** The ExclusionCalendars spec.exclusions.calendars names, as read (absent: it names none). */
  calendars?: CalendarRead[];
  operator: OperatorFacts;
  /** What could not be read, and why (e.g. "pods in cronjob-operator-system: forbidden"). */
  unreadable: string[];
}

/** A condition's state and since when (its lastTransitionTime). */
interface Since {
  status: boolean;
  since?: string;
}

/**
 * Where the operator runs and what it shows of its health: its Lease where it holds one, its Pods and Deployment
 * where it is deployed, its webhooks, and the newest decision it wrote in the record of the CronJobs read. Under
 * `make run` it has no Pod and no Lease: only the record shows it at work.
 */
export interface OperatorFacts {
  /** Where its Lease, Pods and Deployment were looked for. */
  namespace: string;
  /** How that namespace was found. */
  foundBy: "flag" | "webhook" | "label" | "default";
  /** Its Pods' and Deployment's label selector. */
  selector: string;
  leaseName: string;
  lease?: {
    holder?: string;
    renewTime?: string;
    acquireTime?: string;
    leaseDurationSeconds?: number;
    transitions?: number;
  };
  /** undefined: could not be read. */
  pods?: {
    name: string;
    ready: boolean;
    /** Its Ready condition's last transition. */
    readySince?: string;
    phase?: string;
    restarts: number;
    created?: string;
    /** Whether its manager runs with --leader-elect (undefined: its spec does not say). */
    leaderElect?: boolean;
  }[];
  /** undefined: could not be read. */
  deployments?: { name: string; replicas: number; readyReplicas: number; available?: Since }[];
  webhooks: WebhookFacts[];
  /** The newest decision in the record of the CronJobs read (decidedAt), and which CronJob's. */
  newestDecision?: { at: string; cronJob: string };
}

type Reader = Pick<Client, "get" | "list" | "request">;

/** A read that may fail: its result, or undefined with the failure noted. */
type Attempt = <T>(what: string, read: () => Promise<T>) => Promise<T | undefined>;

/** The API server's clock and this machine's, read together, with the reads that failed noted in `unreadable`. */
export async function readClocks(
  client: Reader,
  unreadable: string[],
  localClock: () => Date = () => new Date(),
): Promise<{ now: Date; localNow: Date; serverClock: boolean; attempt: Attempt }> {
  const attempt: Attempt = async (what, read) => {
    try {
      return await read();
    } catch (e) {
      const why = e instanceof APIError && e.reason === "Forbidden" ? "forbidden" : (e as Error).message;
      unreadable.push(`${what}: ${why}`);
      return undefined;
    }
  };
  let serverNow: Date | undefined;
  let localNow = localClock();
  await attempt("the API server's clock", () =>
    client.request("GET", "/version", {
      onDate: (d) => {
        serverNow = d;
        localNow = localClock();
      },
    }),
  );
  return { now: serverNow ?? localNow, localNow, serverClock: serverNow !== undefined, attempt };
}

/** What the diagnosis reads of a namespace besides its CronJobs, each list trimmed to what it reads. */
interface NamespaceReads {
  /** Every Job of the namespace (jobFacts). */
  jobs: readonly Job[];
  /** The Pods of Jobs (job-name label), read only when a Job of the CronJobs exists. */
  pods: readonly PodFacts[];
  /** The Events about a CronJob, a Job or a Pod. */
  events: readonly EventFacts[];
  quotas: WhyFacts["quotas"];
  limitRanges: string[];
  /** Each calendar's windows as stored, by name; undefined: none named, or they could not be read. */
  calendars: ReadonlyMap<string, unknown> | undefined;
  /** The groups the CronJobs name (groupsOf). */
  groups: ReadonlyMap<string, GroupFacts>;
}

/**
 * What a reader already holds of a namespace (the dashboard's informers): read from it instead of listed again. Each
 * is every object of its kind in the namespace, trimmed as the lists here trim them.
 */
interface KnownReads {
  jobs: readonly Job[];
  /** Every calendar's windows by name; undefined: they cannot be read. */
  calendars: ReadonlyMap<string, unknown> | undefined;
  /** Every group's limit by name; undefined: they cannot be read. */
  groupLimits: ReadonlyMap<string, number | undefined> | undefined;
}

/**
 * One CronJob's facts, read once: it (by name, in the context's namespace), its namespace's Jobs, Pods, Events and
 * what else the diagnosis reads, the operator's state and the clocks. `why NAME` answers from them, and the
 * dashboard's panel answers `why`, `history` and `next` from this one read (answers.ts).
 */
export async function readOne(
  ctx: Pick<Context, "client" | "namespace" | "now">,
  name: string,
  o: { operatorNamespace?: string | undefined } = {},
): Promise<WhyFacts> {
  const unreadable: string[] = [];
  const [clocks, cronJob] = await Promise.all([readClocks(ctx.client, unreadable, ctx.now), getCronJob(ctx, name)]);
  const operator = await gatherOperator(ctx.client, clocks.attempt, {
    operatorNamespace: o.operatorNamespace,
    cronJobs: [cronJob],
  });
  const ns = cronJob.metadata?.namespace ?? ctx.namespace;
  const [f] = await gatherFacts(ctx.client, ns, [cronJob], operator, clocks, unreadable);
  return f!;
}

/**
 * The facts of each of `cronJobs` (all in `namespace`): the namespace's Jobs, Pods, Events, quotas and limit ranges
 * are read once for all of them. `operator`: gatherOperator's answer, read once per command. `all`: `cronJobs` are
 * every CronJob of the namespace (else, when one of them names a concurrency group, the namespace's CronJobs are read
 * for the group's other members).
 */
export async function gatherFacts(
  client: Reader,
  namespace: string,
  cronJobs: readonly CronJob[],
  operator: WhyFacts["operator"],
  clocks: Awaited<ReturnType<typeof readClocks>>,
  unreadable: string[],
  all = false,
): Promise<WhyFacts[]> {
  const reads = await readNamespace(client, namespace, cronJobs, clocks, all);
  return factsOf(namespace, cronJobs, reads, operator, clocks, unreadable);
}

/**
 * What the diagnosis of `cronJobs` (all in `namespace`) reads of their namespace; `known`: what the caller holds
 * already (its Jobs, calendars and groups are not listed again, and `cronJobs` are every CronJob of the namespace).
 */
export async function readNamespace(
  client: Reader,
  namespace: string,
  cronJobs: readonly CronJob[],
  clocks: Awaited<ReturnType<typeof readClocks>>,
  all = false,
  known?: KnownReads,
): Promise<NamespaceReads> {
  const { attempt } = clocks;
  // The lists that need nothing read before them are asked for at once (one round trip's wait, not one each); what
  // could not be read is said in the order below, as if read one after another. Each list is trimmed page by page
  // to what the diagnosis reads: only that outlives its page.
  const jobsRead = known?.jobs ? undefined : early(() => listMapped(client, Kinds.Job, { namespace }, jobFacts));
  // Only Events about a CronJob, a Job or a Pod can be about one of ours (their facts' `about`).
  const eventsRead = early(() =>
    listMapped(client, Kinds.Event, { namespace }, (e: KubeObject) => {
      const kind = (e as { involvedObject?: { kind?: string } }).involvedObject?.kind;
      return kind === "CronJob" || kind === "Job" || kind === "Pod" ? eventFacts(e) : undefined;
    }),
  );
  const quotasRead = early(() =>
    listMapped(client, Kinds.ResourceQuota, { namespace }, (q: KubeObject) => {
      const st = (q.status ?? {}) as { hard?: Record<string, string>; used?: Record<string, string> };
      return { name: q.metadata?.name ?? "", hard: st.hard ?? {}, used: st.used ?? {} };
    }),
  );
  const limitRangesRead = early(() =>
    listMapped(client, Kinds.LimitRange, { namespace }, (l: KubeObject) => l.metadata?.name ?? ""),
  );
  const allJobs = known?.jobs ?? (await attempt(`jobs in ${namespace}`, () => settled(jobsRead!))) ?? [];
  const groups = known
    ? groupsOf(
        namespace,
        known.groupLimits,
        allJobs,
        cronJobs.map(memberOf).filter((m): m is GroupMember => m !== undefined),
        clocks.now,
      )
    : await gatherGroups(client, namespace, cronJobs, allJobs, clocks, all);
  const owned = new Set(cronJobs.map((c) => c.metadata?.uid));
  const anyJobs = allJobs.some((j) => (j.metadata?.ownerReferences ?? []).some((r) => owned.has(r.uid)));
  const pods = anyJobs
    ? ((await attempt(`pods in ${namespace}`, () =>
        listMapped(client, Kinds.Pod, { namespace, labelSelector: "job-name" }, podFacts),
      )) ?? [])
    : [];
  const events = (await attempt(`events in ${namespace}`, () => settled(eventsRead))) ?? [];
  const quotas = (await attempt(`resourcequotas in ${namespace}`, () => settled(quotasRead))) ?? [];
  const limitRanges = (await attempt(`limitranges in ${namespace}`, () => settled(limitRangesRead))) ?? [];
  // The namespace's calendars, once, only when one of them names any: each its windows as stored.
  const calendars = !cronJobs.some((c) => calendarNamesOf(c.spec).length)
    ? undefined
    : known
      ? known.calendars
      : await attempt(calendarsRead(namespace), async () => {
          const read = await listMapped(client, ExclusionCalendarResource, { namespace }, (c: KubeObject) => [
            c.metadata?.name ?? "",
            (c.spec as { windows?: unknown } | undefined)?.windows ?? [],
          ]);
          return new Map(read as [string, unknown][]);
        });
  return { jobs: allJobs, pods, events, quotas, limitRanges, calendars, groups };
}

/** A read started ahead of the one awaited first: its outcome kept (no rejection left unhandled meanwhile). */
type Early<T> = Promise<{ ok: true; value: T } | { ok: false; error: unknown }>;
const early = <T>(read: () => Promise<T>): Early<T> =>
  (async () => read())().then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
/** An early read's value, or its error thrown (where it is awaited, so `attempt` says it in its place). */
async function settled<T>(read: Early<T>): Promise<T> {
  const r = await read;
  if (!r.ok) throw r.error;
  return r.value;
}

const calendarsRead = (namespace: string) => `${ExclusionCalendarResource.plural} in ${namespace}`;

/** The facts of each of `cronJobs` (all in `namespace`) from what was read of their namespace: pure. */
export function factsOf(
  namespace: string,
  cronJobs: readonly CronJob[],
  reads: NamespaceReads,
  operator: WhyFacts["operator"],
  clocks: Pick<Awaited<ReturnType<typeof readClocks>>, "now" | "localNow" | "serverClock">,
  unreadable: string[],
): WhyFacts[] {
  const { jobs: allJobs, pods: allPods, events: allEvents, quotas, limitRanges, calendars, groups } = reads;
  return cronJobs.map((cronJob) => {
    const uid = cronJob.metadata?.uid;
    const jobs = allJobs.filter((j) => (j.metadata?.ownerReferences ?? []).some((r) => r.controller && r.uid === uid));
    const jobNames = new Set(jobs.map((j) => j.metadata?.name ?? ""));
    // The names a refused create asked for: its run's Job name, as its trigger's row gives it.
    const name = cronJob.metadata?.name ?? "";
    const refusedNames = new Set(
      (cronJob.status?.recentRuns ?? [])
        .filter((e) => e.reason === RefusedReason.AlreadyExists)
        .map((e) => runJobName(name, e) ?? ""),
    );
    const foreignJobs = allJobs.filter(
      (j) => !jobNames.has(j.metadata?.name ?? "") && refusedNames.has(j.metadata?.name ?? ""),
    );
    const pods = allPods.filter((p) => p.job !== undefined && jobNames.has(p.job));
    const about = new Set([
      `CronJob/${cronJob.metadata?.name}`,
      ...[...jobNames].map((n) => `Job/${n}`),
      ...pods.map((p) => `Pod/${p.name}`),
    ]);
    return {
      now: clocks.now,
      localNow: clocks.localNow,
      serverClock: clocks.serverClock,
      cronJob,
      jobs,
      pods,
      events: allEvents.filter((e) => about.has(e.object)),
      foreignJobs,
      quotas,
      limitRanges,
      ...(cronJob.spec?.concurrencyGroup ? { group: groups.get(cronJob.spec.concurrencyGroup) } : {}),
      ...(calendarNamesOf(cronJob.spec).length
        ? {
            calendars: calendarsFromList(
              cronJob.spec,
              calendars as Map<string, unknown> | undefined,
              `${calendarsRead(namespace)} could not be read`,
            ),
          }
        : {}),
      operator,
      unreadable,
    };
  });
}

/**
 * The concurrency groups `cronJobs` name, in `namespace` (none named: nothing is read): the namespace's groups (one
 * list), their Jobs among `jobs`, and their members' waiting runs (the namespace's CronJobs: `cronJobs` when `all`,
 * else one list).
 */
async function gatherGroups(
  client: Reader,
  namespace: string,
  cronJobs: readonly CronJob[],
  jobs: readonly Job[],
  clocks: Awaited<ReturnType<typeof readClocks>>,
  all: boolean,
): Promise<Map<string, GroupFacts>> {
  if (!cronJobs.some((c) => c.spec?.concurrencyGroup)) return new Map();
  const { attempt, now } = clocks;
  const limits = await attempt(`concurrencygroups in ${namespace}`, async () => {
    const read = await listMapped(client, ConcurrencyGroupResource, { namespace }, (g: KubeObject) => [
      g.metadata?.name ?? "",
      groupLimitOf(g),
    ]);
    return new Map(read as [string, number | undefined][]);
  });
  const member = memberOf;
  const members = all
    ? cronJobs.map(member).filter((m): m is GroupMember => m !== undefined)
    : ((await attempt(`cronjobs in ${namespace}`, () => listMapped(client, CronJobResource, { namespace }, member))) ??
      cronJobs.map(member).filter((m): m is GroupMember => m !== undefined));
  return groupsOf(namespace, limits, jobs, members, now);
}

/** The newest decision the record of `cronJobs` holds: the operator at work, wherever it runs. */
function newestDecision(cronJobs: readonly CronJob[]): OperatorFacts["newestDecision"] {
  let newest: OperatorFacts["newestDecision"];
  for (const c of cronJobs) {
    for (const e of c.status?.recentRuns ?? []) {
      if (!newest || Date.parse(e.decidedAt) > Date.parse(newest.at)) {
        newest = { at: e.decidedAt, cronJob: `${c.metadata?.namespace}/${c.metadata?.name}` };
      }
    }
  }
  return newest;
}

/** The operator's health: its webhooks (which also say where it runs), its Lease, its Pods and its Deployment. */
export async function gatherOperator(
  client: Reader,
  attempt: Attempt,
  o: {
    operatorNamespace?: string | undefined;
    leaseName?: string | undefined;
    /** The CronJobs read (the record's newest decision); a promise: their list may still be on its way. */
    cronJobs?: readonly CronJob[] | Promise<readonly CronJob[]>;
  } = {},
): Promise<OperatorFacts> {
  const webhooks: (WebhookFacts & { service?: { namespace: string; name: string } })[] = [];
  // The configurations and the CRD are asked for at once; what could not be read is said in this order.
  const configsRead = (
    [
      ["validating", Kinds.ValidatingWebhookConfiguration],
      ["mutating", Kinds.MutatingWebhookConfiguration],
    ] as const
  ).map(([kind, rk]) => [kind, rk, early(() => listAll<KubeObject>(client, rk, {}))] as const);
  const crdName = `${CronJobResource.plural}.${GROUP}`;
  const crdRead = early(() =>
    client.get<KubeObject>(Kinds.CustomResourceDefinition, undefined, crdName).catch((e: unknown) => {
      if (isNotFound(e)) return undefined;
      throw e;
    }),
  );
  for (const [kind, rk, read] of configsRead) {
    const configs = (await attempt(`${rk.plural}`, () => settled(read))) ?? [];
    for (const c of configs) {
      for (const w of (c.webhooks ?? []) as WebhookSpec[]) {
        if (!(w.rules ?? []).some((r) => (r.apiGroups ?? []).includes(GROUP))) continue;
        webhooks.push(webhookFacts(`${kind}/${c.metadata?.name}/${w.name}`, w.clientConfig));
      }
    }
  }
  const crd = await attempt(`customresourcedefinition ${crdName}`, () => settled(crdRead));
  const conversion = (crd?.spec as { conversion?: { strategy?: string; webhook?: { clientConfig?: ClientConfig } } })
    ?.conversion;
  if (conversion?.strategy === "Webhook" && conversion.webhook?.clientConfig) {
    webhooks.push(webhookFacts(`conversion/${crd?.metadata?.name}`, conversion.webhook.clientConfig));
  }
  // One read per Service: its webhooks (the CronJob's, the fleet kinds' and their twins, the conversion) share it.
  const readyOf = new Map<string, Promise<number | undefined>>();
  for (const w of webhooks) {
    if (!w.service) continue;
    const service = w.service;
    const key = `${service.namespace}/${service.name}`;
    if (!readyOf.has(key)) readyOf.set(key, readyEndpointsOf(service));
    const ready = await readyOf.get(key)!;
    if (ready !== undefined) w.readyEndpoints = ready;
  }
  async function readyEndpointsOf(service: { namespace: string; name: string }): Promise<number | undefined> {
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
  // Where it runs: the flag, else its webhooks' Service (a Helm release's namespace too), else its Pods found by
  // label in any namespace (webhooks off, or served from a URL as under `make run`), else the default install's.
  const selector = OPERATOR.selector;
  let namespace: string | undefined = o.operatorNamespace;
  let foundBy: OperatorFacts["foundBy"] = "flag";
  let rawPods: KubeObject[] | undefined;
  if (!namespace) {
    namespace = webhooks.find((w) => w.service)?.service?.namespace;
    foundBy = "webhook";
  }
  if (!namespace) {
    // A cluster-wide list the user may not make: then the default namespace is read instead.
    const anywhere = await attempt(`pods labelled ${selector} in any namespace`, () =>
      listAll<KubeObject>(client, Kinds.Pod, { labelSelector: selector }),
    );
    const found = anywhere?.find((p) => p.metadata?.namespace)?.metadata?.namespace;
    if (found) {
      namespace = found;
      foundBy = "label";
      rawPods = anywhere!.filter((p) => p.metadata?.namespace === found);
    }
  }
  if (!namespace) {
    namespace = OPERATOR.namespace;
    foundBy = "default";
  }
  const leaseName = o.leaseName ?? OPERATOR.leaseName;
  // Its Lease, Pods and Deployments are asked for at once; what could not be read is said in this order.
  const leaseRead = early(() =>
    client.get<KubeObject>(Kinds.Lease, namespace, leaseName).catch((e: unknown) => {
      if (isNotFound(e)) return undefined;
      throw e;
    }),
  );
  const podsRead = rawPods
    ? undefined
    : early(() => listAll<KubeObject>(client, Kinds.Pod, { namespace, labelSelector: selector }));
  const deploymentsRead = early(() => listAll<KubeObject>(client, DEPLOYMENT, { namespace, labelSelector: selector }));
  const lease = await attempt(`lease ${namespace}/${leaseName}`, () => settled(leaseRead));
  const spec = (lease?.spec ?? {}) as {
    holderIdentity?: string;
    renewTime?: string;
    acquireTime?: string;
    leaseDurationSeconds?: number;
    leaseTransitions?: number;
  };
  rawPods ??= await attempt(`pods in ${namespace}`, () => settled(podsRead!));
  const pods = rawPods?.map((p) => {
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
  });
  const rawDeployments = await attempt(`deployments in ${namespace}`, () => settled(deploymentsRead));
  const deployments = rawDeployments?.map((d) => {
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
  });
  const newest = newestDecision((await o.cronJobs) ?? []);
  return {
    namespace,
    foundBy,
    selector,
    leaseName,
    ...(lease
      ? {
          lease: {
            ...(spec.holderIdentity ? { holder: spec.holderIdentity } : {}),
            ...(spec.renewTime ? { renewTime: spec.renewTime } : {}),
            ...(spec.acquireTime ? { acquireTime: spec.acquireTime } : {}),
            ...(spec.leaseDurationSeconds !== undefined ? { leaseDurationSeconds: spec.leaseDurationSeconds } : {}),
            ...(spec.leaseTransitions !== undefined ? { transitions: spec.leaseTransitions } : {}),
          },
        }
      : {}),
    ...(pods ? { pods } : {}),
    ...(deployments ? { deployments } : {}),
    webhooks: webhooks.map(({ service: _s, ...w }) => w),
    ...(newest ? { newestDecision: newest } : {}),
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

function podFacts(p: KubeObject): PodFacts {
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

function eventFacts(e: KubeObject): EventFacts {
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
