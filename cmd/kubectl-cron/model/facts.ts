// What `kubectl cron why` knows of a CronJob, as plain data (WhyFacts): the diagnosis (answer/why.ts) is a pure
// function of it, so its tests need no cluster, and the command's one-shot lists (read/whyfacts.ts) and the
// dashboard's informers hand it the same facts. A read the user may not make (403) or that fails is noted in it
// (unreadable), not fatal: the diagnosis says what it could not see.
import {
  type CalendarRead,
  calendarNamesOf,
  type CronJob,
  ExclusionCalendarResource,
  type Job,
  RefusedReason,
  runJobName,
  type Upstream,
  upstreamsOf,
} from "../../../api/v1/index.ts";
import type { ClaimRead } from "./claims.ts";
import { calendarsFromList } from "./exclusions.ts";
import type { GroupFacts } from "./groupfacts.ts";

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

export interface EventFacts {
  /** The object it is about: `Kind/name`. */
  object: string;
  type: string | undefined;
  reason: string | undefined;
  message: string | undefined;
  count: number;
  last: string | undefined;
}

export interface WebhookFacts {
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
  /** The CronJobs spec.after names, each with its Jobs (absent: it names none). */
  upstreams?: UpstreamFacts[];
  operator: OperatorFacts;
  /** What could not be read, and why (e.g. "pods in cronjob-operator-system: forbidden"). */
  unreadable: string[];
}

/**
 * A CronJob spec.after names (`cronJob`, its name), as read (`object`): none when it is not in the namespace, or
 * (`unread`) could not be read.
 */
export interface UpstreamFacts extends Upstream {
  object?: CronJob;
  unread?: true;
  /** Its Jobs (controller owner reference to it). */
  jobs: Job[];
}

/** A condition's state and since when (its lastTransitionTime). */
interface Since {
  status: boolean;
  since?: string;
}

/**
 * Where the operator runs and what it shows of its health: its Lease where it holds one, its Pods and Deployment
 * where it is deployed, its webhooks, and the newest decision it wrote in the record of the CronJobs read; with the
 * namespace's claim, the install that claims it (and its instance). Under
 * `make run` it has no Pod and no Lease: only the record shows it at work.
 */
export interface OperatorFacts {
  /** Where its Lease, Pods and Deployment were looked for. */
  namespace: string;
  /** How that namespace was found (`claim`: the install the namespace's claim names). */
  foundBy: "flag" | "claim" | "webhook" | "label" | "default";
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
  /** The Lease could not be read (absent, with `lease`: there is none). */
  leaseUnread?: true;
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
  /**
   * The claim of the namespace diagnosed (model/claims.ts): which install and instance runs it. Absent: not read (a
   * reader that asks nothing of it).
   */
  claim?: ClaimRead;
}

/** What the diagnosis reads of a namespace besides its CronJobs, each list trimmed to what it reads. */
export interface NamespaceReads {
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
  /**
   * The CronJobs spec.after names, by name, besides those diagnosed (looked up among them first): null when it is not
   * in the namespace; absent when it could not be read.
   */
  upstreams?: ReadonlyMap<string, CronJob | null>;
}

/**
 * What a reader already holds of a namespace (the dashboard's informers): read from it instead of listed again. Each
 * is every object of its kind in the namespace, trimmed as the lists here trim them.
 */
export interface KnownReads {
  jobs: readonly Job[];
  /** Every calendar's windows by name; undefined: they cannot be read. */
  calendars: ReadonlyMap<string, unknown> | undefined;
  /** Every group's limit by name; undefined: they cannot be read. */
  groupLimits: ReadonlyMap<string, number | undefined> | undefined;
}

/** What a failed list of a namespace's calendars is called, where it is noted and where the facts say it. */
export const calendarsRead = (namespace: string) => `${ExclusionCalendarResource.plural} in ${namespace}`;

/** The facts of each of `cronJobs` (all in `namespace`) from what was read of their namespace: pure. */
export function factsOf(
  namespace: string,
  cronJobs: readonly CronJob[],
  reads: NamespaceReads,
  operator: WhyFacts["operator"],
  clocks: Pick<WhyFacts, "now" | "localNow" | "serverClock">,
  unreadable: string[],
): WhyFacts[] {
  const { jobs: allJobs, pods: allPods, events: allEvents, quotas, limitRanges, calendars, groups } = reads;
  // The namespace's Jobs by their controller's uid and its Events by object, each in the lists' order: one pass each,
  // not one per CronJob (why -A at 5,000 CronJobs spent 0.36 s of its 2.6 s filtering them, issue 72).
  const owned = indexed(allJobs, (j) =>
    (j.metadata?.ownerReferences ?? []).filter((r) => r.controller).map((r) => r.uid),
  );
  const eventsOf = indexed(allEvents, (e) => [e.object]);
  const jobsOf = (uid: string | undefined) => (uid === undefined ? [] : (owned.get(uid) ?? []).map(([, j]) => j));
  const byName = new Map(cronJobs.map((c) => [c.metadata?.name ?? "", c]));
  const upstreamsOfOne = (cronJob: CronJob): UpstreamFacts[] =>
    upstreamsOf(cronJob.spec).map((u) => {
      const up = byName.get(u.cronJob) ?? reads.upstreams?.get(u.cronJob);
      if (up === undefined) return { ...u, unread: true as const, jobs: [] };
      return { ...u, ...(up ? { object: up } : {}), jobs: up ? jobsOf(up.metadata?.uid) : [] };
    });
  return cronJobs.map((cronJob) => {
    const jobs = jobsOf(cronJob.metadata?.uid);
    const upstreams = upstreamsOfOne(cronJob);
    const jobNames = new Set(jobs.map((j) => j.metadata?.name ?? ""));
    // The names a refused create asked for: its run's Job name, as its trigger's row gives it.
    const name = cronJob.metadata?.name ?? "";
    const refusedNames = new Set(
      (cronJob.status?.recentRuns ?? [])
        .filter((e) => e.reason === RefusedReason.AlreadyExists)
        .map((e) => runJobName(name, e) ?? ""),
    );
    const foreignJobs = refusedNames.size
      ? allJobs.filter((j) => !jobNames.has(j.metadata?.name ?? "") && refusedNames.has(j.metadata?.name ?? ""))
      : [];
    const pods = jobNames.size ? allPods.filter((p) => p.job !== undefined && jobNames.has(p.job)) : [];
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
      events: [...about]
        .flatMap((o) => eventsOf.get(o) ?? [])
        .sort(([a], [b]) => a - b)
        .map(([, e]) => e),
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
      ...(upstreams.length ? { upstreams } : {}),
      operator,
      unreadable,
    };
  });
}

/** `items` by each key `keys` gives it (once per distinct key), each with its index in `items`, in their order. */
function indexed<T>(items: readonly T[], keys: (t: T) => (string | undefined)[]): Map<string, [number, T][]> {
  const out = new Map<string, [number, T][]>();
  items.forEach((t, i) => {
    for (const k of new Set(keys(t))) {
      if (k === undefined) continue;
      const list = out.get(k);
      if (list) list.push([i, t]);
      else out.set(k, [[i, t]]);
    }
  });
  return out;
}

/** The newest decision the record of `cronJobs` holds: the operator at work, wherever it runs. */
export function newestDecision(cronJobs: readonly CronJob[]): OperatorFacts["newestDecision"] {
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
