// Concurrency groups (spec.concurrencyGroup, the ConcurrencyGroup kind): what admission needs to know of a group —
// its limit, the Jobs of its CronJobs that run, and the runs of its other CronJobs that wait ahead — and the places
// this process keeps of it between the cache's updates. Design, and the alternatives: docs/architecture.md
// "Concurrency groups". Each read is O(the group's members): the Jobs come from one index by the group's label, the
// waiting runs from this process's places or, for a member this process has not reconciled yet (after a restart or
// a leader change), from that member's stored record.
import {
  classifyJob,
  CONCURRENCY_GROUP_LABEL,
  ConcurrencyGroupResource,
  cronJobOwnerOf,
  CronJobResource,
  type CronJobWire,
  groupLabelValue,
  groupLimitOf,
  type Job,
  waitingRunOf,
} from "../api/v1/index.ts";
import type { MapFunc, Request } from "../runtime/controller.ts";
import type { CacheIndexer, CacheReader } from "../runtime/interfaces.ts";
import { ScrapeTimeMetric } from "../runtime/metrics/collector.ts";
import { type KubeObject, Kinds } from "../runtime/kinds.ts";
import type { Input, InputCronJob, InputRead, InputReader, InputWatch } from "./input.ts";

/**
 * A group's place frees when one of its Jobs ends or goes: only those events wake its waiting runs (a Job's other
 * updates, its Pods' progress, do not).
 */
const groupPlaceFreed = {
  create: () => false,
  update: (a: Readonly<KubeObject>, b: Readonly<KubeObject>) =>
    classifyJob(a as Readonly<Job>) !== classifyJob(b as Readonly<Job>),
  delete: () => true,
};

/** Field index: Jobs by `<namespace>/<CONCURRENCY_GROUP_LABEL's value>`. */
const JOB_GROUP_INDEX = "jobConcurrencyGroup";
/** Field index: CronJobs by `<namespace>/<spec.concurrencyGroup>`. */
const CRONJOB_GROUP_INDEX = "cronJobConcurrencyGroup";

/**
 * A place this process took stays counted this long at most without the cache showing its Job (a Job deleted before
 * the watch delivered it would otherwise hold its place for ever). Far beyond any watch's lag.
 */
const TAKEN_TTL_MS = 120_000;

/** A group as admission reads it (runs.ts admit): pure data. */
export interface GroupView {
  readonly name: string;
  /** spec.limit; undefined: no such group in the CronJob's namespace (or one without a valid limit). */
  readonly limit: number | undefined;
  /** The group's running Jobs, by name, sorted: the cache's, and the ones this process created the cache lacks. */
  readonly running: readonly string[];
  /** Runs of the group's other CronJobs waiting since before this one: they take the next free places first. */
  readonly ahead: readonly string[];
}

/** A run waiting for a place: since when (its slot, or when it first waited), and until when it may still start. */
interface Waiter {
  since: number;
  until?: number | undefined;
}

const key = (namespace: string, group: string) => `${namespace}/${groupLabelValue(group)}`;

/** The indexes group reads go through, registered before the cache starts. */
function setupGroupCache(cache: CacheIndexer): void {
  cache.indexField(Kinds.Job, JOB_GROUP_INDEX, (job) => {
    const v = job.metadata?.labels?.[CONCURRENCY_GROUP_LABEL];
    return v ? [`${job.metadata?.namespace ?? ""}/${v}`] : [];
  });
  cache.indexField(CronJobResource, CRONJOB_GROUP_INDEX, (cj) => {
    const g = (cj as { spec?: { concurrencyGroup?: unknown } }).spec?.concurrencyGroup;
    return typeof g === "string" && g ? [key(cj.metadata?.namespace ?? "", g)] : [];
  });
}

/**
 * The groups' places in this process: the places taken by Jobs the cache has not shown yet (controller-runtime's
 * "expectations"), and the runs waiting for a place, by group. Taking a place is synchronous with the decision
 * (no await between them), so two workers can never both take a group's last place.
 */
export class GroupPlaces implements InputReader<string | undefined> {
  private readonly taken = new Map<string, Map<string, number>>();
  private readonly waiting = new Map<string, Map<string, Waiter>>();
  /** The members this process reconciled: their own places and waiting runs are here, not in their stored record. */
  private readonly seen = new Map<string, Set<string>>();
  /** Each member's group (by `<namespace>/<name>`): the group to leave when it names another or none. */
  private readonly groupOf = new Map<string, string>();

  private readonly cache: CacheReader;

  constructor(cache: CacheReader) {
    this.cache = cache;
  }

  /** The group `group` of `namespace` as the CronJob `member`, waiting since `since`, sees it now. */
  view(namespace: string, group: string, member: string, since: number, now: number): GroupView {
    const k = key(namespace, group);
    const stored = this.cache.get(ConcurrencyGroupResource, namespace, group);
    const limit = stored ? groupLimitOf(stored) : undefined;
    const jobs = this.cache.byIndex<Job & KubeObject>(Kinds.Job, JOB_GROUP_INDEX, k);
    const running = new Set(jobs.filter((j) => classifyJob(j) === "active").map((j) => j.metadata?.name ?? ""));
    const known = new Set(jobs.map((j) => j.metadata?.name ?? ""));
    const taken = this.taken.get(k);
    for (const [name, at] of taken ?? []) {
      if (known.has(name) || now - at > TAKEN_TTL_MS) taken!.delete(name);
      else running.add(name);
    }
    const ahead = this.waitersOf(namespace, group, now)
      .filter((w) => w.member !== member && w.since < since)
      .map((w) => w.member);
    return { name: group, limit, running: [...running].sort(), ahead };
  }

  /** Counts a Job this process is about to create (before any await): released if the create fails. */
  take(namespace: string, group: string, job: string, now: number): void {
    const k = key(namespace, group);
    let m = this.taken.get(k);
    if (!m) this.taken.set(k, (m = new Map()));
    m.set(job, now);
  }

  release(namespace: string, group: string, job: string): void {
    this.taken.get(key(namespace, group))?.delete(job);
  }

  /** Whether the group exists (in the cache) with a limit a run can be admitted by. */
  exists(namespace: string, group: string): boolean {
    const stored = this.cache.get(ConcurrencyGroupResource, namespace, group);
    return !!stored && groupLimitOf(stored) !== undefined;
  }

  /**
   * The group a CronJob names (spec.concurrencyGroup), and its problem for Degraded: none (it names none, or one that
   * exists), or its runs wait until it exists. Admission reads the group itself, when a run asks (view).
   */
  read(cronJob: InputCronJob): InputRead<string | undefined> {
    const named = (cronJob.spec as { concurrencyGroup?: unknown } | undefined)?.concurrencyGroup;
    const name = typeof named === "string" && named ? named : undefined;
    const ns = cronJob.metadata.namespace ?? "";
    if (!name || this.exists(ns, name)) return { value: name };
    return {
      value: name,
      problem: {
        reason: "ConcurrencyGroupNotFound",
        message: `spec.concurrencyGroup names ${name}, which is not a ConcurrencyGroup of namespace ${ns}: runs wait until it exists`,
      },
    };
  }

  /**
   * A place frees when a Job of a group ends or goes: the group's waiting runs are woken, oldest first. A group
   * created, deleted or changed: its CronJobs decide again.
   */
  watches(now: () => number): InputWatch[] {
    return [
      { kind: Kinds.Job, map: this.jobEvents(now), predicates: [groupPlaceFreed] },
      { kind: ConcurrencyGroupResource, map: this.groupEvents() },
    ];
  }

  /** The groups' gauges (groupMetrics), from this process's places. */
  metrics(o: { now: () => number; isLeader: () => boolean }): ScrapeTimeMetric[] {
    return groupMetrics({ cache: this.cache, places: this, ...o });
  }

  /** This pass of `member` decided: waiting for a place (since, until), or not waiting (undefined). */
  decided(namespace: string, group: string | undefined, member: string, waiter: Waiter | undefined): void {
    const id = `${namespace}/${member}`;
    const before = this.groupOf.get(id);
    if (!group) {
      // Not in a group (any more): out of the places of the one it was in.
      if (before !== undefined) this.leave(id, member);
      return;
    }
    const k = key(namespace, group);
    if (before !== undefined && before !== k) this.leave(id, member);
    this.groupOf.set(id, k);
    let seen = this.seen.get(k);
    if (!seen) this.seen.set(k, (seen = new Set()));
    seen.add(member);
    let m = this.waiting.get(k);
    if (waiter) {
      if (!m) this.waiting.set(k, (m = new Map()));
      m.set(member, waiter);
    } else m?.delete(member);
  }

  /** A deleted CronJob waits nowhere. */
  forget(namespace: string, member: string): void {
    const id = `${namespace}/${member}`;
    if (this.groupOf.has(id)) this.leave(id, member);
  }

  private leave(id: string, member: string): void {
    const k = this.groupOf.get(id)!;
    this.waiting.get(k)?.delete(member);
    this.seen.get(k)?.delete(member);
    this.groupOf.delete(id);
  }

  /**
   * The runs waiting for a place in the group, oldest first: this process's places, and for a member it has not
   * reconciled yet, its stored record's newest Held entry the group decided (still within its deadline, its Job not
   * created yet; while suspended, an explicit request only: api/v1 waitingRunOf).
   */
  waitersOf(namespace: string, group: string, now: number): { member: string; since: number }[] {
    const k = key(namespace, group);
    const out: { member: string; since: number }[] = [];
    for (const [member, w] of this.waiting.get(k) ?? []) {
      if (w.until === undefined || w.until > now) out.push({ member, since: w.since });
    }
    const seen = this.seen.get(k);
    // The group's Jobs by their CronJob (its UID), read once: a held run whose Job exists has started.
    let jobsOf: Map<string, Job[]> | undefined;
    const ownJobs = (cj: Readonly<KubeObject>) => {
      if (!jobsOf) {
        jobsOf = new Map();
        for (const j of this.cache.byIndex<Job & KubeObject>(Kinds.Job, JOB_GROUP_INDEX, k)) {
          const uid = cronJobOwnerOf(j)?.uid;
          if (!uid) continue;
          const own = jobsOf.get(uid);
          if (own) own.push(j);
          else jobsOf.set(uid, [j]);
        }
      }
      return jobsOf.get(cj.metadata?.uid ?? "") ?? [];
    };
    for (const cj of this.cache.byIndex<CronJobWire & KubeObject>(CronJobResource, CRONJOB_GROUP_INDEX, k)) {
      const member = cj.metadata?.name ?? "";
      if (seen?.has(member)) continue;
      const w = waitingRunOf(cj, now, ownJobs(cj));
      if (w) out.push({ member, since: w.since });
    }
    return out.sort((a, b) => a.since - b.since || a.member.localeCompare(b.member));
  }

  /** The group's members waiting for a place, oldest first, as reconcile requests (woken when a place frees). */
  waitingRequests(namespace: string, group: string, now: number): Request[] {
    return this.waitersOf(namespace, group, now).map((w) => ({ namespace, name: w.member }));
  }

  /**
   * Wake-ups: a Job of a group changed (it ended, was deleted) — its group's waiting runs; a group changed (created,
   * its limit raised) — all its members, which also learn of a group created or deleted.
   */
  jobEvents(now: () => number): MapFunc {
    return (obj) => {
      const v = obj.metadata?.labels?.[CONCURRENCY_GROUP_LABEL];
      const ns = obj.metadata?.namespace ?? "";
      if (!v) return [];
      const m = this.waiting.get(`${ns}/${v}`);
      const requests: Request[] = [];
      for (const [member, w] of m ?? [])
        if (w.until === undefined || w.until > now()) requests.push({ namespace: ns, name: member });
      return requests;
    };
  }

  groupEvents(): MapFunc {
    return (obj) => {
      const ns = obj.metadata?.namespace ?? "";
      return this.cache
        .byIndex(CronJobResource, CRONJOB_GROUP_INDEX, key(ns, obj.metadata?.name ?? ""))
        .map((cj) => ({ namespace: ns, name: cj.metadata?.name ?? "" }));
    };
  }
}

/** One group's use, as the metrics and `kubectl cron groups` show it. */
interface GroupUse {
  namespace: string;
  group: string;
  limit: number | undefined;
  running: number;
  waiting: number;
  /** How long the oldest waiting run has waited (seconds); 0 when none waits. */
  oldestWaitSeconds: number;
}

/** Every cached group's use now. O(groups + their members). */
function groupUses(cache: CacheReader, places: GroupPlaces, now: number): GroupUse[] {
  const out: GroupUse[] = [];
  for (const g of cache.list<KubeObject>(ConcurrencyGroupResource)) {
    const namespace = g.metadata?.namespace ?? "";
    const group = g.metadata?.name ?? "";
    const view = places.view(namespace, group, "", Infinity, now);
    const waiting = places.waitersOf(namespace, group, now);
    out.push({
      namespace,
      group,
      limit: view.limit,
      running: view.running.length,
      waiting: waiting.length,
      oldestWaitSeconds: waiting.length ? Math.max(0, (now - waiting[0]!.since) / 1000) : 0,
    });
  }
  return out;
}

/**
 * The groups' gauges, computed at the scrape from the cache and the places (exported by the leader only, as the
 * per-CronJob ones: controllers/metrics.ts).
 */
export function groupMetrics(o: {
  cache: CacheReader;
  places: GroupPlaces;
  now: () => number;
  isLeader: () => boolean;
}): ScrapeTimeMetric[] {
  const gauge = (name: string, help: string, value: (u: GroupUse) => number | undefined) =>
    new ScrapeTimeMetric({
      name,
      help,
      type: "gauge",
      collect: function* () {
        if (!o.isLeader()) return;
        for (const u of groupUses(o.cache, o.places, o.now())) {
          const v = value(u);
          if (v !== undefined) yield { labels: { namespace: u.namespace, group: u.group }, value: v };
        }
      },
    });
  return [
    gauge("cronjob_concurrency_group_limit", "The ConcurrencyGroup's spec.limit.", (u) => u.limit),
    gauge(
      "cronjob_concurrency_group_running_jobs",
      "Jobs of the group's CronJobs running now (a queued, suspended Job counts: it holds its place).",
      (u) => u.running,
    ),
    gauge(
      "cronjob_concurrency_group_waiting_runs",
      "Runs of the group's CronJobs waiting for a place (held: the group is full, or older runs wait first).",
      (u) => u.waiting,
    ),
    gauge(
      "cronjob_concurrency_group_oldest_waiting_seconds",
      "How long the group's oldest waiting run has waited, from its scheduled time (or its request); 0 when none waits.",
      (u) => u.oldestWaitSeconds,
    ),
  ];
}

/** The concurrency group a CronJob names, as an input (input.ts): its indexes, its places, its gauges. */
export const GROUP_INPUT: Input<string | undefined, GroupPlaces> = {
  field: "spec.concurrencyGroup",
  setupCache: setupGroupCache,
  reader: (cache) => new GroupPlaces(cache),
};
