// What `kubectl cron why` reads of a namespace: live state only, with read access only, every list asked for at once
// and trimmed page by page (model/trims.ts), then handed to factsOf (model/facts.ts): the diagnosis is a pure
// function of what was read, and the dashboard, whose informers hold the Jobs, calendars and groups, reads only the rest.
import {
  ConcurrencyGroupResource,
  CronJobResource,
  ExclusionCalendarResource,
  type CronJob,
  groupLimitOf,
  type Job,
  calendarNamesOf,
  upstreamsOf,
} from "../../../api/v1/index.ts";
import { isNotFound } from "../../../runtime/errors.ts";
import { type KubeObject, Kinds } from "../../../runtime/kinds.ts";
import type { Context } from "../model/context.ts";
import { calendarsRead, factsOf, type KnownReads, type NamespaceReads, type WhyFacts } from "../model/facts.ts";
import { type GroupFacts, type GroupMember, groupsOf, memberOf } from "../model/groupfacts.ts";
import { eventFacts, jobFacts, podFacts, trimCronJob } from "../model/trims.ts";
import { getCronJob, listMapped } from "./api.ts";
import { type Clocks, early, readClocks, type Reader, settled } from "./clocks.ts";
import { claimReader } from "./claims.ts";
import { gatherOperator } from "./operator.ts";

/**
 * One CronJob's facts, read once: it (by name, in the context's namespace), its namespace's Jobs, Pods, Events and
 * what else the diagnosis reads, its namespace's claim, the operator's state (the install the claim names) and the
 * clocks. `why NAME` answers from them, and the dashboard's panel answers `why`, `history` and `next` from this one
 * read (answer/answers.ts).
 */
export async function readOne(
  ctx: Pick<Context, "client" | "namespace" | "now">,
  name: string,
  o: { operatorNamespace?: string | undefined } = {},
): Promise<WhyFacts> {
  const unreadable: string[] = [];
  const [clocks, cronJob] = await Promise.all([readClocks(ctx.client, unreadable, ctx.now), getCronJob(ctx, name)]);
  const ns = cronJob.metadata?.namespace ?? ctx.namespace;
  // The namespace's claim first: the install it names is the operator looked at.
  const claim = await claimReader(ctx.client, clocks.attempt).claimOf(ns);
  const operator = await gatherOperator(ctx.client, clocks.attempt, {
    operatorNamespace: o.operatorNamespace,
    cronJobs: [cronJob],
    claim,
  });
  const [f] = await gatherFacts(ctx.client, ns, [cronJob], operator, clocks, unreadable);
  return f!;
}

/**
 * The facts of each of `cronJobs` (all in `namespace`): the namespace's Jobs, Pods, Events, quotas and limit ranges
 * are read once for all of them. `operator`: gatherOperator's answer, read once per command. `all`: `cronJobs` are
 * every CronJob of the namespace (else, when one of them names a concurrency group, the namespace's CronJobs are read
 * for the group's other members).
 */
async function gatherFacts(
  client: Reader,
  namespace: string,
  cronJobs: readonly CronJob[],
  operator: WhyFacts["operator"],
  clocks: Clocks,
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
  clocks: Clocks,
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
  const upstreams = await readUpstreams(client, namespace, cronJobs, all || known !== undefined, attempt);
  return { jobs: allJobs, pods, events, quotas, limitRanges, calendars, groups, upstreams };
}

/**
 * The CronJobs spec.after of `cronJobs` names, by name (null: not in the namespace): from `cronJobs` when they are
 * every CronJob of the namespace (`all`), else each read by name (at most 5 a CronJob); one that could not be read is
 * noted and left out.
 */
async function readUpstreams(
  client: Reader,
  namespace: string,
  cronJobs: readonly CronJob[],
  all: boolean,
  attempt: Clocks["attempt"],
): Promise<Map<string, CronJob | null>> {
  const byName = new Map<string, CronJob | null>(cronJobs.map((c) => [c.metadata?.name ?? "", c]));
  const named = [...new Set(cronJobs.flatMap((c) => upstreamsOf(c.spec).map((u) => u.cronJob)))];
  const out = new Map<string, CronJob | null>();
  await Promise.all(
    named.map(async (name) => {
      const known = byName.get(name) ?? (all ? null : undefined);
      const read =
        known !== undefined
          ? known
          : await attempt(`${CronJobResource.plural} ${name} in ${namespace}`, async () => {
              try {
                return await client.get<CronJob>(CronJobResource, namespace, name);
              } catch (e) {
                if (isNotFound(e)) return null;
                throw e;
              }
            });
      if (read !== undefined) out.set(name, read === null ? null : trimCronJob(read));
    }),
  );
  return out;
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
  clocks: Clocks,
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
