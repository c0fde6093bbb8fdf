// `kubectl cron why [NAME] [--slot=TIME]`: reads (read/whyfacts.ts; each namespace's claim, read/claims.ts), diagnoses
// (answer/why.ts), prints. With NAME: the whole diagnosis. Without: every CronJob of the namespace (or -A, or -l), one
// line for each that needs attention for a cause of its own, and once each the problems many share (the operator's, a
// group's, a calendar's: answer/why/fleet.ts) with how many CronJobs they affect. Exit code: 0 healthy, 1 a cause
// found, 2 cannot tell.
import { CronJobResource, type CronJob, RESOURCE } from "../../../api/v1/index.ts";
import type { Args } from "../model/args.ts";
import { listMapped } from "../read/api.ts";
import type { Context, Output } from "../model/context.ts";
import { verdictOf } from "../answer/verdicts.ts";
import { allHealthyText, type Diagnosis, Fleet } from "../answer/why.ts";
import { slotOf } from "../answer/answers.ts";
import { whyOf } from "./whyone.ts";
import { readNamespace } from "../read/whyfacts.ts";
import { gatherOperator, operatorsByClaim } from "../read/operator.ts";
import { type Attempt, readClocks } from "../read/clocks.ts";
import { type ClaimReader, claimReader } from "../read/claims.ts";
import { factsOf } from "../model/facts.ts";
import { trimCronJob } from "../model/trims.ts";

export async function why(ctx: Context, args: Args): Promise<Output & { exitCode: number }> {
  if (args.name) return whyOf(ctx, args);
  const unreadable: string[] = [];
  const clocks = await readClocks(ctx.client, unreadable, ctx.now);
  // Trimmed page by page to what the diagnosis reads: `why -A` holds every CronJob of the cluster.
  const listed = listMapped(
    ctx.client,
    CronJobResource,
    {
      ...(args.allNamespaces ? {} : { namespace: ctx.namespace }),
      ...(args.selector ? { labelSelector: args.selector } : {}),
    },
    trimCronJob,
  );
  // The operator is read while the CronJobs' pages come (it needs them only for the record's newest decision); in one
  // namespace, the install its claim names. Each namespace's operator is the install its claim names (operatorOf).
  const claims = claimReader(ctx.client, clocks.attempt);
  const [read, operatorOf] = await Promise.all([listed, operatorsOf(ctx, args, clocks.attempt, claims, listed)]);
  let cronJobs = read;
  const byNamespace = new Map<string, CronJob[]>();
  for (const c of cronJobs) {
    const ns = c.metadata?.namespace ?? ctx.namespace;
    const list = byNamespace.get(ns);
    if (list) list.push(c);
    else byNamespace.set(ns, [c]);
  }
  cronJobs = [];
  // A list keeps of each diagnosis only what it prints, as it goes: with a table, the line of one needing attention
  // for a cause of its own (in order); with -o json|yaml, the diagnosis of one needing attention; of the others, a
  // count; of the problems many share, the CronJobs they affect (fleet).
  const table = args.output === "table";
  const fleet = new Fleet(args.allNamespaces);
  const lines: string[] = [];
  const items: Diagnosis[] = [];
  let checked = 0;
  let worst = 0;
  // One namespace at a time, in the order of the list, the next one's reads under way while this one is diagnosed
  // (the API server answers while the CPU works: issue 79's incident fleet, 5 namespaces); a namespace's Jobs, Pods
  // and Events are released once it is diagnosed.
  const order = [...byNamespace.keys()].sort((a, b) => a.localeCompare(b));
  // Without -l, the list is the whole namespace: a group's members are among it.
  const startReading = (ns: string) =>
    readingOf(ns, byNamespace, (list) => [
      readNamespace(ctx.client, ns, list, clocks, !args.selector),
      claims.claimOf(ns).then((claim) => operatorOf(claim, list)),
    ]);
  let next = order.length ? startReading(order[0]!) : undefined;
  for (let i = 0; next; i++) {
    const { ns, list, read } = next;
    const [reads, operator] = await read;
    next = i + 1 < order.length ? startReading(order[i + 1]!) : undefined;
    for (const f of factsOf(ns, list, reads, operator, clocks, unreadable)) {
      const v = verdictOf(f, slotOf(args.slot, f.cronJob));
      const d = v.diagnosis;
      checked++;
      if (d.exitCode === 1 || (d.exitCode === 2 && worst === 0)) worst = d.exitCode;
      if (d.exitCode === 0) continue;
      const own = fleet.add(d, v.view, v.group, v.hold);
      if (!table) items.push(d);
      else if (own) lines.push(`${own}\n`);
    }
  }
  const shared = fleet.problems();
  const where = args.allNamespaces ? "any namespace" : `namespace ${ctx.namespace}`;
  const text =
    lines.length || shared.length ? fleet.lines().join("") + lines.join("") : checked ? allHealthyText(checked) : "";
  return {
    text,
    json: { items, checked, ...(shared.length ? { shared } : {}) },
    notes: checked === 0 ? [`no ${RESOURCE} in ${where}`] : [],
    exitCode: worst,
  };
}

/**
 * Namespace `ns`'s CronJobs, taken out of `byNamespace` in the order of the list (by name: each diagnosis is reduced
 * to what is printed as soon as it is made), and its reads started.
 */
function readingOf<A, B>(
  ns: string,
  byNamespace: Map<string, CronJob[]>,
  start: (list: CronJob[]) => [Promise<A>, Promise<B>],
): { ns: string; list: CronJob[]; read: Promise<[A, B]> } {
  const list = byNamespace.get(ns)!.sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""));
  byNamespace.delete(ns);
  const read = Promise.all(start(list));
  // Awaited in its turn; a failure meanwhile is that turn's to throw, not an unhandled rejection.
  read.catch(() => undefined);
  return { ns, list, read };
}

/**
 * The operator of each namespace (read/operator.ts operatorsByClaim): the one found once (in one namespace, the install
 * its claim names), else the install a namespace's claim names.
 */
async function operatorsOf(
  ctx: Context,
  args: Pick<Args, "allNamespaces" | "operatorNamespace">,
  attempt: Attempt,
  claims: ClaimReader,
  listed: Promise<readonly CronJob[]>,
) {
  const claim = args.allNamespaces ? undefined : await claims.claimOf(ctx.namespace);
  const base = await gatherOperator(ctx.client, attempt, {
    operatorNamespace: args.operatorNamespace,
    cronJobs: listed,
    ...(claim ? { claim } : {}),
  });
  return operatorsByClaim(ctx.client, attempt, base, args.operatorNamespace);
}
