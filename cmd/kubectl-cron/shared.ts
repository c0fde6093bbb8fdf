// What `kubectl cron list` says once besides its table: the problems the listed CronJobs share, each with how many
// it affects (why/fleet.ts): the operator's own (read as `kubectl cron why` reads it: its webhooks, Lease, Pods and
// Deployment, a constant number of reads) and their concurrency groups' (a group missing, runs waiting: one list of
// the groups and one of their Jobs, only when a listed CronJob names a group). A read the user may not make is
// skipped: nothing is said of what could not be read.
import { CONCURRENCY_GROUP_LABEL, ConcurrencyGroupResource, type CronJob, groupLimitOf } from "../../api/v1/index.ts";
import { Kinds, type KubeObject } from "../../runtime/kinds.ts";
import { listMapped } from "./api.ts";
import type { Context } from "./commands.ts";
import { groupJobFacts, memberOf } from "./groupfacts.ts";
import { byNamespace, type Member } from "./groups.ts";
import { Fleet, type SharedProblem } from "./why/fleet.ts";
import { gatherOperator, readClocks } from "./whyfacts.ts";

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
    const m = memberOf(c, clocks.now);
    if (m) members.push({ ...m, namespace: c.metadata?.namespace ?? "" });
  }
  if (members.length) {
    const scope = namespace === undefined ? {} : { namespace };
    const where = namespace === undefined ? "any namespace" : namespace;
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
    if (limits && jobs) for (const g of byNamespace(limits, members, jobs)) fleet.groupAffects(g);
  }
  return fleet.problems();
}
