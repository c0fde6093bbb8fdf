// What `kubectl cron list` says once besides its table: the problems the listed CronJobs share, each with how many
// it affects (why/fleet.ts): the operator's own (read as `kubectl cron why` reads it: its webhooks, Lease, Pods and
// Deployment, a constant number of reads), their concurrency groups' (a group missing, runs waiting: one list of the
// groups and one of their Jobs, only when a listed CronJob names a group) and their ExclusionCalendars' (one missing
// or whose windows do not parse: one list of the calendars, only when a listed CronJob names one). A read the user
// may not make is skipped: nothing is said of what could not be read.
import {
  calendarNamesOf,
  CONCURRENCY_GROUP_LABEL,
  ConcurrencyGroupResource,
  type CronJob,
  ExclusionCalendarResource,
  exclusionsOf,
  groupLimitOf,
} from "../../../api/v1/index.ts";
import { Kinds, type KubeObject } from "../../../runtime/kinds.ts";
import { listMapped } from "../read/api.ts";
import type { Context } from "../model/context.ts";
import { calendarsFromList } from "../model/exclusions.ts";
import { groupJobFacts, memberOf } from "../model/groupfacts.ts";
import { byNamespace, type Member } from "./groups.ts";
import { Fleet, type SharedProblem } from "../answer/why/fleet.ts";
import { gatherOperator } from "../read/operator.ts";
import { readClocks } from "../read/clocks.ts";

/** The problems the CronJobs `listed` (in `namespace`, or every namespace) share, once each. */
export async function sharedProblems(
  ctx: Context,
  listed: Promise<readonly CronJob[]>,
  namespace: string | undefined,
): Promise<SharedProblem[]> {
  const unreadable: string[] = [];
  // The operator's reads go beside the CronJobs' list (they need it only at their end): `list` waits for the longer.
  const clocks = await readClocks(ctx.client, unreadable, ctx.now);
  const operator = await gatherOperator(ctx.client, clocks.attempt, { cronJobs: listed });
  const items = await listed;
  if (!items.length) return [];
  const fleet = new Fleet(namespace === undefined);
  // The operator runs none of them while it is down; a suspended one it would not run anyway.
  const scheduled = items
    .filter((c) => !c.spec?.suspend)
    .map((c) => ({ namespace: c.metadata?.namespace ?? "", name: c.metadata?.name ?? "" }));
  if (scheduled.length) fleet.operatorAffects({ ...clocks, operator }, scheduled);
  const members: Member[] = [];
  for (const c of items) {
    const m = memberOf(c);
    if (m) members.push({ ...m, namespace: c.metadata?.namespace ?? "" });
  }
  const scope = namespace === undefined ? {} : { namespace };
  const where = namespace === undefined ? "any namespace" : namespace;
  const groups = async () => {
    const [limits, jobs] = await Promise.all([
      clocks.attempt(`concurrencygroups in ${where}`, () =>
        listMapped(ctx.client, ConcurrencyGroupResource, scope, (g: KubeObject) => ({
          namespace: g.metadata?.namespace ?? "",
          name: g.metadata?.name ?? "",
          limit: groupLimitOf(g),
        })),
      ),
      clocks.attempt(`jobs in ${where}`, () =>
        listMapped(ctx.client, Kinds.Job, { ...scope, labelSelector: CONCURRENCY_GROUP_LABEL }, groupJobFacts),
      ),
    ]);
    if (limits && jobs) for (const g of byNamespace(limits, members, jobs, clocks.now)) fleet.groupAffects(g);
  };
  // The calendars, one list (of the namespace, or of every namespace), each with its windows as stored; each CronJob
  // naming one compiled by the operator's rule (exclusionsOf), so the calendar that holds its slots is the one the
  // operator holds them by.
  const naming = items
    .filter((c) => calendarNamesOf(c.spec).length)
    .sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""));
  const calendars = async () => {
    const read = await clocks.attempt(`${ExclusionCalendarResource.plural} in ${where}`, () =>
      listMapped(ctx.client, ExclusionCalendarResource, scope, (c: KubeObject) => ({
        namespace: c.metadata?.namespace ?? "",
        name: c.metadata?.name ?? "",
        windows: (c.spec as { windows?: unknown } | undefined)?.windows ?? [],
      })),
    );
    if (!read) return;
    const inNamespace = new Map<string, Map<string, unknown>>();
    for (const c of read) {
      const own = inNamespace.get(c.namespace) ?? new Map<string, unknown>();
      inNamespace.set(c.namespace, own.set(c.name, c.windows));
    }
    for (const c of naming) {
      const ns = c.metadata?.namespace ?? "";
      const { hold } = exclusionsOf(c, calendarsFromList(c.spec, inNamespace.get(ns) ?? new Map(), ""));
      fleet.calendarAffects(ns, c.metadata?.name ?? "", hold);
    }
  };
  await Promise.all([members.length ? groups() : undefined, naming.length ? calendars() : undefined]);
  return fleet.problems();
}
