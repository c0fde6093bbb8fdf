// `kubectl cron groups [-A]`: each ConcurrencyGroup with its limit, the Jobs of its CronJobs running now, the runs
// waiting for a place and the oldest wait, and how many CronJobs name it. `kubectl cron groups NAME`: that group's
// running Jobs and waiting runs, each with its CronJob, in the order the operator gives them places. Three reads,
// each one list (paged) of the namespace or of the cluster, whatever the number of CronJobs: the groups, the
// CronJobs (trimmed as each page arrives to the group they name and their record), the Jobs labelled with a group;
// a member's waiting run is decided with its Jobs (model/groupfacts.ts).
import {
  CONCURRENCY_GROUP_LABEL,
  ConcurrencyGroupResource,
  type CronJob,
  CronJobResource,
  groupLabelValue,
  groupLimitOf,
  GROUP_SINGULAR,
  type Job,
  queuedBy,
  scheduledTimeOf,
} from "../../../api/v1/index.ts";
import { isNotFound } from "../../../runtime/errors.ts";
import { Kinds, type KubeObject } from "../../../runtime/kinds.ts";
import { listMapped } from "../read/api.ts";
import type { Args } from "../model/args.ts";
import { FLEET } from "../answer/causes.ts";
import type { Context, Output } from "../model/context.ts";
import {
  cronJobOfJob,
  type GroupFacts,
  type GroupMember,
  groupJobFacts,
  groupsOf,
  memberOf,
} from "../model/groupfacts.ts";
import { humanDuration, iso } from "../model/time.ts";
import { table } from "../model/table.ts";

/** A group's row, as the table and the JSON show it. */
interface GroupRow {
  namespace: string;
  name: string;
  limit: number | undefined;
  running: number;
  waiting: number;
  /** How long its oldest waiting run has waited (seconds); 0 when none waits. */
  oldestWaitSeconds: number;
  members: number;
}

export type Member = GroupMember & { namespace: string };

const seconds = (since: string, now: Date) => Math.max(0, Math.round((now.getTime() - Date.parse(since)) / 1000));

/** The groups of each namespace read, from the three lists, as they are `now`. */
export function byNamespace(
  limits: readonly { namespace: string; name: string; limit: number | undefined }[],
  members: readonly Member[],
  jobs: readonly Job[],
  now: Date,
): GroupFacts[] {
  const of = <T>(list: readonly T[], ns: (x: T) => string) => {
    const m = new Map<string, T[]>();
    for (const x of list) {
      const k = ns(x);
      const bucket = m.get(k);
      if (bucket) bucket.push(x);
      else m.set(k, [x]);
    }
    return m;
  };
  const limitsIn = of(limits, (g) => g.namespace);
  const membersIn = of(members, (m) => m.namespace);
  const jobsIn = of(jobs, (j) => j.metadata?.namespace ?? "");
  const out: GroupFacts[] = [];
  for (const ns of [...new Set([...limitsIn.keys(), ...membersIn.keys()])].sort()) {
    const own = new Map((limitsIn.get(ns) ?? []).map((g) => [g.name, g.limit]));
    out.push(...groupsOf(ns, own, jobsIn.get(ns) ?? [], membersIn.get(ns) ?? [], now).values());
  }
  return out;
}

/** `kubectl cron groups [-A]`, or `kubectl cron groups NAME`. */
export async function groups(ctx: Context, args: Args): Promise<Output> {
  if (args.name) return oneGroup(ctx, args.name);
  const now = ctx.now();
  const scope = args.allNamespaces ? {} : { namespace: ctx.namespace };
  const [limits, members, jobs] = await Promise.all([
    listMapped(ctx.client, ConcurrencyGroupResource, scope, (g: KubeObject) => ({
      namespace: g.metadata?.namespace ?? "",
      name: g.metadata?.name ?? "",
      limit: groupLimitOf(g),
    })),
    listMapped(ctx.client, CronJobResource, scope, (c: CronJob) => {
      const m = memberOf(c);
      return m && { ...m, namespace: c.metadata?.namespace ?? "" };
    }),
    listMapped(ctx.client, Kinds.Job, { ...scope, labelSelector: CONCURRENCY_GROUP_LABEL }, groupJobFacts),
  ]);
  const all = byNamespace(limits, members, jobs, now);
  const rows: GroupRow[] = all
    .filter((g) => g.exists)
    .map((g) => ({
      namespace: g.namespace,
      name: g.name,
      limit: g.limit,
      running: g.running.length,
      waiting: g.waiting.length,
      oldestWaitSeconds: g.waiting[0] ? seconds(g.waiting[0].since, now) : 0,
      members: g.members.length,
    }));
  const missing = all.filter((g) => !g.exists);
  const text = rows.length
    ? table(
        [...(args.allNamespaces ? ["NAMESPACE"] : []), "NAME", "LIMIT", "RUNNING", "WAITING", "OLDEST WAIT", "MEMBERS"],
        rows.map((r) => [
          ...(args.allNamespaces ? [r.namespace] : []),
          r.name,
          r.limit === undefined ? "-" : String(r.limit),
          String(r.running),
          String(r.waiting),
          r.waiting ? humanDuration(r.oldestWaitSeconds) : "-",
          String(r.members),
        ]),
      )
    : "";
  const where = args.allNamespaces ? "any namespace" : `namespace ${ctx.namespace}`;
  const notes = [
    ...(rows.length || missing.length ? [] : [`no ${ConcurrencyGroupResource.plural} in ${where}`]),
    ...missing.map((g) => FLEET.groupMissing({ group: g.name, namespace: g.namespace, names: g.members })),
  ];
  return {
    text,
    json: {
      items: rows,
      missing: missing.map((g) => ({ namespace: g.namespace, name: g.name, members: g.members })),
    },
    notes,
  };
}

/** `kubectl cron groups NAME`: its running Jobs and its waiting runs, with their CronJob. */
async function oneGroup(ctx: Context, name: string): Promise<Output> {
  const now = ctx.now();
  const namespace = ctx.namespace;
  const [stored, members, jobs] = await Promise.all([
    ctx.client.get<KubeObject>(ConcurrencyGroupResource, namespace, name).catch((e: unknown) => {
      if (isNotFound(e)) return undefined;
      throw e;
    }),
    listMapped(ctx.client, CronJobResource, { namespace }, (c: CronJob) => {
      const m = memberOf(c);
      return m?.group === name ? m : undefined;
    }),
    listMapped(
      ctx.client,
      Kinds.Job,
      { namespace, labelSelector: `${CONCURRENCY_GROUP_LABEL}=${groupLabelValue(name)}` },
      groupJobFacts,
    ),
  ]);
  if (!stored) {
    const named = members.length
      ? `; ${FLEET.groupMissing({ group: name, namespace, names: members.map((m) => m.name) })}`
      : "";
    throw new Error(
      `${GROUP_SINGULAR} ${JSON.stringify(name)} not found in namespace ` +
        `${JSON.stringify(namespace)}${named} (list them: kubectl cron groups -n ${namespace})`,
    );
  }
  const g = groupsOf(namespace, new Map([[name, groupLimitOf(stored)]]), jobs, members, now).get(name)!;
  const running = g.running.map((j) => {
    const q = queuedBy(j);
    const slot = scheduledTimeOf(j);
    const since = j.metadata?.creationTimestamp ?? "";
    return {
      state: q ? "Queued" : "Running",
      cronJob: cronJobOfJob(j),
      job: j.metadata?.name ?? "",
      ...(slot ? { slot: iso(slot) } : {}),
      since,
      ...(q ? { queuedBy: q.by } : {}),
    };
  });
  const waiting = g.waiting.map((w) => ({ state: "Waiting", ...w, since: iso(new Date(w.since)) }));
  const header =
    `group ${name} (${namespace}): limit ${g.limit ?? "- (none valid: every run waits)"}, ` +
    `${g.running.length} running, ${g.waiting.length} waiting, ${g.members.length} CronJobs name it\n`;
  const rows = [
    ...running.map((r) => [
      r.state,
      r.cronJob,
      r.job,
      r.slot ?? "-",
      r.since,
      r.since ? humanDuration(seconds(r.since, now)) : "-",
      r.queuedBy ? `suspended by ${r.queuedBy}` : "",
    ]),
    ...waiting.map((w) => [
      w.state,
      w.cronJob,
      "-",
      w.slot ?? (w.request ? `request ${w.request}` : "-"),
      w.since,
      humanDuration(seconds(w.since, now)),
      w.reason,
    ]),
  ];
  return {
    text: header + (rows.length ? table(["STATE", "CRONJOB", "JOB", "SLOT", "SINCE", "FOR", "NOTE"], rows) : ""),
    json: { namespace, name, limit: g.limit, running, waiting, members: g.members },
  };
}
