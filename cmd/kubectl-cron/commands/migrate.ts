// `kubectl cron migrate` / `unmigrate`: which objects (NAME, -l, the namespace, -A), the handover itself
// (write/handover.ts), and how its per-object reports are printed.
import { stringify } from "yaml";
import { CronJobResource, RESOURCE, type CronJob } from "../../../api/v1/index.ts";
import type { HandoverAPI } from "../write/handoverapi.ts";
import type { Args } from "../model/args.ts";
import { builtinCronJobKind, type BuiltinCronJob, type BuiltinVersion } from "../model/builtin.ts";
import { discoverBuiltinVersion } from "../read/builtin.ts";
import { MIGRATED_FROM_ANNOTATION } from "../model/convert.ts";
import { migrate, unmigrate, type ObjectReport } from "../write/handover.ts";
import type { Client } from "../../../runtime/client.ts";

/** Some objects were refused (each is reported with its reason); the others were handled: exit code 4. */
export const REFUSED_EXIT = 4;

interface MigrateContext {
  client: Client;
  api: HandoverAPI;
  namespace: string;
  sleep: (ms: number) => Promise<void>;
  progress: (s: string) => void;
}

interface MigrateOutput {
  text: string;
  json: unknown;
  refused: boolean;
}

/** The objects a set command acts on: NAME in the namespace, or a list (-l; the namespace, or -A). */
async function select<T extends { metadata: { name?: string } }>(
  api: HandoverAPI,
  rk: Parameters<HandoverAPI["list"]>[0],
  args: Args,
  namespace: string,
): Promise<{ items: T[]; missing?: string }> {
  if (args.name) {
    const one = await api.get<T & { metadata: Record<string, unknown> }>(rk, namespace, args.name);
    return one ? { items: [one] } : { items: [], missing: args.name };
  }
  const items = await api.list<T & { metadata: Record<string, unknown> }>(rk, {
    ...(args.allNamespaces ? {} : { namespace }),
    ...(args.selector ? { labelSelector: args.selector } : {}),
  });
  return { items };
}

export async function runMigrate(ctx: MigrateContext, args: Args): Promise<MigrateOutput> {
  const version = await discoverBuiltinVersion(ctx.client);
  const builtin = builtinCronJobKind(version);
  const opts = {
    builtinVersion: version,
    dryRun: args.dryRun,
    settleSeconds: args.settleSeconds,
    sleep: ctx.sleep,
    note: ctx.progress,
  };
  if (args.command === "migrate") {
    const { items, missing } = await select<BuiltinCronJob>(ctx.api, builtin, args, ctx.namespace);
    if (missing) {
      throw new Error(
        `no batch/${version} CronJob ${JSON.stringify(missing)} in namespace ${JSON.stringify(ctx.namespace)} ` +
          `(list them: kubectl get cronjobs.batch -n ${ctx.namespace}; another namespace: -n NS)`,
      );
    }
    const reports = await migrate(ctx.api, items, opts);
    return render(reports, args, version, scopeOf(args, ctx.namespace, `batch/${version} CronJobs`));
  }
  const { items, missing } = await select<CronJob>(ctx.api, CronJobResource, args, ctx.namespace);
  if (missing) {
    throw new Error(
      `cronjob ${JSON.stringify(missing)} not found in namespace ${JSON.stringify(ctx.namespace)} ` +
        `(list them: kubectl cron list -n ${ctx.namespace}; another namespace: -n NS)`,
    );
  }
  // Without a NAME, only those migrate created: the others were never the built-in's.
  const migrated = args.name ? items : items.filter((c) => c.metadata.annotations?.[MIGRATED_FROM_ANNOTATION]);
  const reports = await unmigrate(ctx.api, migrated, { ...opts, delete: args.delete });
  return render(reports, args, version, scopeOf(args, ctx.namespace, `migrated ${RESOURCE}`));
}

function scopeOf(args: Args, namespace: string, what: string): string {
  const where = args.allNamespaces ? "in any namespace" : `in namespace ${namespace}`;
  return `no ${what} ${where}${args.selector ? ` matching ${args.selector}` : ""}`;
}

export function render(reports: ObjectReport[], args: Args, version: BuiltinVersion, empty: string): MigrateOutput {
  const refused = reports.some((r) => r.outcome === "refused");
  const json = { kind: "MigrationReport", builtinAPIVersion: `batch/${version}`, dryRun: args.dryRun, items: reports };
  if (reports.length === 0) return { text: `${empty}: nothing to do\n`, json, refused };
  const verb = args.command === "migrate" ? `from batch/${version}` : `to batch/${version}`;
  const parts: string[] = [];
  for (const r of reports) {
    const head = `${r.namespace}/${r.name}: ${r.outcome}${r.outcome === "refused" ? `: ${r.reason}` : ` ${verb}`}`;
    const lines = [head, ...r.changes.map((c) => `  ${c}`), ...r.warnings.map((w) => `  warning: ${w}`)];
    if (args.dryRun) {
      // A YAML stream: the plan as comments, then what would be created.
      parts.push(lines.map((l) => `# ${l}`).join("\n") + "\n" + (r.object ? `---\n${stringify(r.object)}` : ""));
    } else {
      parts.push(lines.join("\n") + "\n");
    }
  }
  return { text: parts.join(""), json, refused };
}
