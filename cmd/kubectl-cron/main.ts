// kubectl-cron: the project's kubectl plugin (`kubectl cron ...`). See USAGE in model/args.ts. main() answers a command
// line; cli.ts, the plugin's one entry point, imports it for every command that needs more than the arguments.
import { stringify } from "yaml";
import { Client } from "../../runtime/client.ts";
import { APIError } from "../../runtime/errors.ts";
import { ContextNotFoundError, type LoadedKubeConfig, loadKubeConfig } from "../../runtime/kubeconfig.ts";
import { clientAPI } from "./write/handoverapi.ts";
import { parseCommandLine, UsageError, USAGE, type Args } from "./model/args.ts";
import { completion } from "./commands/completecommand.ts";
import { FIELD_MANAGER, history, list, next, runNow, setSuspend, backfill, WaitTimeout } from "./commands/commands.ts";
import type { Context, Output } from "./model/context.ts";
import { groups } from "./commands/groups.ts";
import { instances } from "./commands/instances.ts";
import { REFUSED_EXIT, runMigrate } from "./commands/migrate.ts";
import { why } from "./commands/whycommand.ts";

export const EXIT = { ok: 0, failed: 1, usage: 2, timeout: 3, refused: REFUSED_EXIT } as const;

interface IO {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  env: NodeJS.ProcessEnv;
}

/** The kubeconfig, loaded as the manager loads it (runtime/kubeconfig.ts), with kubectl's --kubeconfig and --context. */
function loadConfig(args: Pick<Args, "kubeconfig" | "context">, env: NodeJS.ProcessEnv): LoadedKubeConfig {
  try {
    return loadKubeConfig(args.kubeconfig, env, args.context);
  } catch (e) {
    if (e instanceof ContextNotFoundError) throw new UsageError(e.message);
    const source = args.kubeconfig ? `--kubeconfig ${args.kubeconfig}` : `KUBECONFIG=${env.KUBECONFIG ?? "(unset)"}`;
    throw new Error(`cannot read the kubeconfig (${source}): ${e instanceof Error ? e.message : String(e)}`, {
      cause: e,
    });
  }
}

function namespaceOf(args: Pick<Args, "namespace">, kc: LoadedKubeConfig): string {
  return args.namespace ?? kc.getNamespace() ?? "default";
}

async function dispatch(ctx: Context, args: Args): Promise<Output & { refused?: boolean; exitCode?: number }> {
  switch (args.command) {
    case "list":
      return list(ctx, args);
    case "migrate":
    case "unmigrate":
      return runMigrate(
        {
          client: ctx.client,
          api: clientAPI(ctx.client, FIELD_MANAGER),
          namespace: ctx.namespace,
          sleep: ctx.sleep,
          progress: ctx.progress ?? (() => undefined),
        },
        args,
      );
    case "run":
      return runNow(ctx, args);
    case "suspend":
      return setSuspend(ctx, args, true);
    case "resume":
      return setSuspend(ctx, args, false);
    case "next":
      return next(ctx, args);
    case "history":
      return history(ctx, args);
    case "backfill":
      return backfill(ctx, args);
    case "why":
      return why(ctx, args);
    case "groups":
      return groups(ctx, args);
    case "instances":
      return instances(ctx, args);
    case "dashboard":
      // Its server, watches and page load only for this command.
      return (await import("./dashboard/command.ts")).dashboard(ctx, args);
  }
}

function explain(e: unknown, kc: LoadedKubeConfig | undefined): string {
  if (e instanceof APIError) {
    if (e.reason === "Forbidden")
      return `forbidden: ${e.message} (ask for get/list/patch on cronjobs of both kinds, create/delete on ${"cronjobs.batch.tutorial.kubebuilder.io"}, patch on their cronjobs/status, list on jobs)`;
    if (e.reason === "Unauthorized") return `unauthorized: your credentials were refused (check the context's user)`;
    if (e.code === 404) return `${e.message} (is the CRD installed? make install)`;
    return e.message;
  }
  const server = kc?.getCurrentCluster()?.server;
  const msg = e instanceof Error ? e.message : String(e);
  if (/ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|socket hang up/.test(msg)) {
    return `cannot reach the cluster at ${server ?? "?"}: ${msg} (check --context / KUBECONFIG)`;
  }
  return msg;
}

function printed(args: Args, out: Output): string {
  if (args.output === "json") return `${JSON.stringify(out.json, null, 2)}\n`;
  if (args.output === "yaml") return stringify(out.json);
  return out.text;
}

export async function main(argv: readonly string[], io: IO): Promise<number> {
  let args: Args | "help";
  let kc: LoadedKubeConfig | undefined;
  if (argv[0] === "__complete") return completion(argv.slice(1), io);
  try {
    args = parseCommandLine(argv);
    if (args === "help") {
      io.stdout(USAGE);
      return EXIT.ok;
    }
    kc = loadConfig(args, io.env);
    const client = new Client(kc, {
      userAgent: FIELD_MANAGER,
      fieldManager: FIELD_MANAGER,
      // 0: no client-side limit (kubectl's meaning); the API server still ends the request at its own.
      timeoutMs: args.requestTimeoutMs,
      // As kubectl prints them: the API server's warnings (and the webhook's) reach the user.
      onWarning: (w) => io.stderr(`Warning: ${w}\n`),
    });
    const ctx: Context = {
      client,
      namespace: namespaceOf(args, kc),
      now: () => new Date(),
      sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
      progress: (s) => io.stderr(`${s}\n`),
      stdout: (s) => io.stdout(`${s}\n`),
    };
    const out = await dispatch(ctx, args);
    for (const n of out.notes ?? []) io.stderr(`${n}\n`);
    io.stdout(printed(args, out));
    if (out.refused) {
      io.stderr(`error: some CronJobs were refused (see each one's reason above); nothing was changed for them\n`);
      return EXIT.refused;
    }
    return out.exitCode ?? EXIT.ok;
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`error: ${e.message}\nRun 'kubectl cron --help' for usage.\n`);
      return EXIT.usage;
    }
    io.stderr(`error: ${explain(e, kc)}\n`);
    return e instanceof WaitTimeout ? EXIT.timeout : EXIT.failed;
  }
}

// Not an entry point: it cannot start cli.ts, which imports it (that circle left a direct run's top-level await
// unsettled: exit 13, nothing done). Run directly, it names the entry point rather than exit 0 having done nothing.
if (import.meta.main) {
  process.stderr.write("error: cmd/kubectl-cron/main.ts is not an entry point: run cmd/kubectl-cron/cli.ts\n");
  process.exitCode = EXIT.usage;
}
