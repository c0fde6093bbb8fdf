// What the plugin knows of a concurrency group (the ConcurrencyGroup kind, spec.concurrencyGroup): its limit, the
// Jobs of its CronJobs that hold its places (labelled CONCURRENCY_GROUP_LABEL, whichever CronJob made them), and the
// runs of its CronJobs waiting for a place, read from their record (status.recentRuns) and their Jobs as the operator
// reads a member it has not reconciled yet (controllers/groups.ts; api/v1 waitingRunOf: a held run whose Job exists
// has started), so `kubectl cron groups` counts what the group's metrics count. Plain data from three lists (groups,
// CronJobs, Jobs), each read once per namespace or cluster-wide.
import {
  classifyJob,
  CONCURRENCY_GROUP_LABEL,
  CRONJOB_NAME_LABEL,
  type CronJob,
  groupLabelValue,
  type Job,
  KUEUE_QUEUE_NAME_KEY,
  type WaitingFacts,
  waitingFactsOf,
  waitingRunOf,
} from "../../../api/v1/index.ts";

/** A run of a member waiting for a place in its group: since when (its slot, or when it was first held). */
interface WaitingRun {
  cronJob: string;
  since: string;
  /** The slot (a scheduled run), or the run-now request or backfill id. */
  slot?: string;
  request?: string;
  /** The record's reason: ConcurrencyGroupFull, ConcurrencyGroupQueue or ConcurrencyGroupNotFound. */
  reason: string;
}

/**
 * A CronJob as a group sees it: the group it names, and what tells whether a run of it waits (its record: api/v1
 * waitingFactsOf), decided once its Jobs are read (groupsOf).
 */
export interface GroupMember {
  name: string;
  group: string;
  facts: WaitingFacts;
}

/** A group of one namespace, as the plugin read it. */
export interface GroupFacts {
  namespace: string;
  name: string;
  /** Whether the ConcurrencyGroup exists; undefined: the groups could not be read. */
  exists: boolean | undefined;
  /** Its spec.limit (undefined: it does not exist, or holds no valid limit: every run of it waits). */
  limit: number | undefined;
  /** Its Jobs that have not finished, oldest first: each holds a place (a queued one too). */
  running: Job[];
  /** Its members' runs waiting for a place, oldest first (the order the operator gives them places in). */
  waiting: WaitingRun[];
  /** The CronJobs of the namespace that name it. */
  members: string[];
}

/**
 * A member's run waiting for a place in its group, given its Jobs (api/v1 waitingRunOf: the operator reads it the
 * same way).
 */
function waitingRunFor(m: GroupMember, jobs: readonly Job[], now: Date): WaitingRun | undefined {
  const w = waitingRunOf(m.facts, now.getTime(), jobs);
  if (!w) return undefined;
  const { held } = w;
  return {
    cronJob: m.name,
    since: new Date(w.since).toISOString().replace(/\.\d{3}Z$/, "Z"),
    ...(held.scheduledTime ? { slot: held.scheduledTime } : {}),
    ...(held.request ? { request: held.request } : {}),
    reason: held.reason,
  };
}

/** A CronJob as its group sees it; undefined when it names none. */
export function memberOf(cronJob: CronJob): GroupMember | undefined {
  const group = cronJob.spec?.concurrencyGroup;
  if (!group) return undefined;
  return { name: cronJob.metadata?.name ?? "", group, facts: waitingFactsOf(cronJob) };
}

/**
 * A Job of a group, with only what a group's view reads: its names, the labels that say its group, CronJob and
 * Kueue queue, its creation and scheduled time, whether it is suspended, and its status.
 */
export function groupJobFacts(j: Job): Job {
  const m = j.metadata ?? {};
  const keep = [CONCURRENCY_GROUP_LABEL, CRONJOB_NAME_LABEL, KUEUE_QUEUE_NAME_KEY];
  const labels = Object.fromEntries(Object.entries(m.labels ?? {}).filter(([k]) => keep.includes(k)));
  const spec = (j.spec ?? {}) as { suspend?: boolean; managedBy?: string };
  return {
    metadata: {
      ...(m.name !== undefined ? { name: m.name } : {}),
      ...(m.namespace !== undefined ? { namespace: m.namespace } : {}),
      ...(m.creationTimestamp !== undefined ? { creationTimestamp: m.creationTimestamp } : {}),
      labels,
      ...(m.annotations ? { annotations: m.annotations } : {}),
    },
    spec: {
      ...(spec.suspend !== undefined ? { suspend: spec.suspend } : {}),
      ...(spec.managedBy !== undefined ? { managedBy: spec.managedBy } : {}),
    },
    ...(j.status ? { status: j.status } : {}),
  } as Job;
}

/** The CronJob a Job of a group belongs to (its CRONJOB_NAME_LABEL). */
export const cronJobOfJob = (j: Readonly<Job>): string => j.metadata?.labels?.[CRONJOB_NAME_LABEL] ?? "?";

const bySince = (a: WaitingRun, b: WaitingRun) =>
  Date.parse(a.since) - Date.parse(b.since) || a.cronJob.localeCompare(b.cronJob);
const byCreation = (a: Readonly<Job>, b: Readonly<Job>) =>
  (a.metadata?.creationTimestamp ?? "").localeCompare(b.metadata?.creationTimestamp ?? "") ||
  (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? "");

/**
 * The groups of one namespace: every ConcurrencyGroup of it (`limits`: by name, their limit; undefined: the groups
 * could not be read) and every group a member names, with its running Jobs (from `jobs`, any Jobs of the namespace
 * that include the groups') and its members' runs waiting `now` (a run whose Job is among `jobs` does not wait).
 */
export function groupsOf(
  namespace: string,
  limits: ReadonlyMap<string, number | undefined> | undefined,
  jobs: readonly Job[],
  members: readonly GroupMember[],
  now: Date,
): Map<string, GroupFacts> {
  const out = new Map<string, GroupFacts>();
  const names = new Set([...(limits?.keys() ?? []), ...members.map((m) => m.group)]);
  const byLabel = new Map<string, GroupFacts>();
  for (const name of [...names].sort()) {
    const g: GroupFacts = {
      namespace,
      name,
      exists: limits ? limits.has(name) : undefined,
      limit: limits?.get(name),
      running: [],
      waiting: [],
      members: [],
    };
    out.set(name, g);
    byLabel.set(groupLabelValue(name), g);
  }
  for (const j of jobs) {
    const label = j.metadata?.labels?.[CONCURRENCY_GROUP_LABEL];
    const g = label === undefined ? undefined : byLabel.get(label);
    if (g && classifyJob(j) === "active") g.running.push(j);
  }
  // Each member's Jobs, by the CronJob label the operator gives every Job it makes.
  const jobsOf = new Map<string, Job[]>();
  for (const j of jobs) {
    const owner = j.metadata?.labels?.[CRONJOB_NAME_LABEL];
    if (owner === undefined) continue;
    const own = jobsOf.get(owner);
    if (own) own.push(j);
    else jobsOf.set(owner, [j]);
  }
  for (const m of members) {
    const g = out.get(m.group)!;
    g.members.push(m.name);
    const waiting = waitingRunFor(m, jobsOf.get(m.name) ?? [], now);
    if (waiting) g.waiting.push(waiting);
  }
  for (const g of out.values()) {
    g.running.sort(byCreation);
    g.waiting.sort(bySince);
    g.members.sort();
  }
  return out;
}
