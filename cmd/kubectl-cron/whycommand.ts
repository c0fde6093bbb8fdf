// `kubectl cron why [NAME] [--slot=TIME]`: reads (whyfacts.ts), diagnoses (why.ts), prints. With NAME: the whole
// diagnosis. Without: every CronJob of the namespace (or -A, or -l), one line for each that needs attention.
// Exit code: 0 healthy, 1 a cause found, 2 cannot tell.
import { CronJobResource, type CronJob, RESOURCE } from "../../api/v1/index.ts";
import { isNotFound } from "../../runtime/errors.ts";
import type { Args } from "./args.ts";
import { UsageError } from "./args.ts";
import { listMapped } from "./api.ts";
import type { Context, Output } from "./commands.ts";
import { type Diagnosis, diagnose, parseSlot, whyListText, whyText, zoneOf } from "./why.ts";
import { gatherFacts, gatherOperator, readClocks, trimCronJob } from "./whyfacts.ts";

export async function why(ctx: Context, args: Args): Promise<Output & { exitCode: number }> {
  const unreadable: string[] = [];
  const clocks = await readClocks(ctx.client, unreadable, ctx.now);
  let cronJobs: CronJob[];
  if (args.name) {
    try {
      cronJobs = [await ctx.client.get<CronJob>(CronJobResource, ctx.namespace, args.name)];
    } catch (e) {
      if (!isNotFound(e)) throw e;
      throw new Error(
        `cronjob ${JSON.stringify(args.name)} not found in namespace ${JSON.stringify(ctx.namespace)} ` +
          `(list them: kubectl get ${RESOURCE} -n ${ctx.namespace}; another namespace: -n NS)`,
        { cause: e },
      );
    }
  } else {
    // Trimmed page by page to what the diagnosis reads: `why -A` holds every CronJob of the cluster.
    cronJobs = await listMapped(
      ctx.client,
      CronJobResource,
      {
        ...(args.allNamespaces ? {} : { namespace: ctx.namespace }),
        ...(args.selector ? { labelSelector: args.selector } : {}),
      },
      trimCronJob,
    );
  }
  const operator = await gatherOperator(ctx.client, clocks.attempt, {
    operatorNamespace: args.operatorNamespace,
    cronJobs,
  });
  const byNamespace = new Map<string, CronJob[]>();
  for (const c of cronJobs) {
    const ns = c.metadata?.namespace ?? ctx.namespace;
    const list = byNamespace.get(ns);
    if (list) list.push(c);
    else byNamespace.set(ns, [c]);
  }
  const diagnoses: Diagnosis[] = [];
  cronJobs = [];
  // One namespace at a time: its Jobs, Pods and Events are released before the next is read.
  for (const ns of [...byNamespace.keys()].sort((a, b) => a.localeCompare(b))) {
    const list = byNamespace.get(ns)!;
    byNamespace.delete(ns);
    for (const f of await gatherFacts(ctx.client, ns, list, operator, clocks, unreadable)) {
      let slot: Date | undefined;
      if (args.slot !== undefined) {
        slot = parseSlot(args.slot, zoneOf(f.cronJob));
        if (!slot) {
          throw new UsageError(
            `--slot: want an RFC 3339 time (2026-11-25T02:00:00Z) or a wall-clock time in the CronJob's zone (2026-11-25T03:00); got ${JSON.stringify(args.slot)}`,
          );
        }
      }
      diagnoses.push(diagnose(f, slot ? { slot } : {}));
    }
  }
  diagnoses.sort(
    (a, b) => a.cronJob.namespace.localeCompare(b.cronJob.namespace) || a.cronJob.name.localeCompare(b.cronJob.name),
  );
  if (args.name) {
    const d = diagnoses[0]!;
    return { text: whyText(d), json: d, exitCode: d.exitCode };
  }
  const worst = diagnoses.some((d) => d.exitCode === 1) ? 1 : diagnoses.some((d) => d.exitCode === 2) ? 2 : 0;
  const where = args.allNamespaces ? "any namespace" : `namespace ${ctx.namespace}`;
  return {
    text: diagnoses.length ? whyListText(diagnoses, args.allNamespaces) : "",
    json: { items: diagnoses.filter((d) => d.exitCode !== 0), checked: diagnoses.length },
    notes: diagnoses.length === 0 ? [`no ${RESOURCE} in ${where}`] : [],
    exitCode: worst,
  };
}
