// kubectl-cron: the project's kubectl plugin (`kubectl cron ...`). See USAGE in args.ts.
import { existsSync } from "node:fs";
import { delimiter } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { Client } from "../../runtime/client.ts";
import { APIError } from "../../runtime/errors.ts";
import { parseCommandLine, UsageError, USAGE, type Args } from "./args.ts";
import {
  FIELD_MANAGER,
  history,
  next,
  runNow,
  setSuspend,
  WaitTimeout,
  type Context,
  type Output,
} from "./commands.ts";

export const EXIT = { ok: 0, failed: 1, usage: 2, timeout: 3 } as const;

interface IO {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  env: NodeJS.ProcessEnv;
}

function loadConfig(args: Args, env: NodeJS.ProcessEnv): KubeConfig {
  const kc = new KubeConfig();
  const source = args.kubeconfig ? `--kubeconfig ${args.kubeconfig}` : `KUBECONFIG=${env.KUBECONFIG ?? "(unset)"}`;
  try {
    const paths = (env.KUBECONFIG ?? "").split(delimiter).filter(Boolean);
    if (!args.kubeconfig && paths.length > 0 && !paths.some((p) => existsSync(p))) {
      throw new Error(`no such file: ${paths.join(", ")}`);
    }
    if (args.kubeconfig) kc.loadFromFile(args.kubeconfig);
    else kc.loadFromDefault({}, false);
  } catch (e) {
    throw new Error(`cannot read the kubeconfig (${source}): ${e instanceof Error ? e.message : String(e)}`, {
      cause: e,
    });
  }
  if (args.context) {
    if (!kc.getContextObject(args.context))
      throw new UsageError(`--context: no context ${JSON.stringify(args.context)} in the kubeconfig`);
    kc.setCurrentContext(args.context);
  }
  if (!kc.getCurrentCluster()) {
    throw new UsageError(
      `no cluster configured (KUBECONFIG=${env.KUBECONFIG ?? "unset"}): pass --kubeconfig or --context, or set KUBECONFIG`,
    );
  }
  return kc;
}

function namespaceOf(args: Args, kc: KubeConfig): string {
  return args.namespace ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? "default";
}

async function dispatch(ctx: Context, args: Args): Promise<Output> {
  switch (args.command) {
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
  }
}

function explain(e: unknown, kc: KubeConfig | undefined): string {
  if (e instanceof APIError) {
    if (e.reason === "Forbidden")
      return `forbidden: ${e.message} (ask for patch/get on ${"cronjobs"} and list on jobs)`;
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

export async function main(argv: readonly string[], io: IO): Promise<number> {
  let args: Args | "help";
  let kc: KubeConfig | undefined;
  try {
    args = parseCommandLine(argv);
    if (args === "help") {
      io.stdout(USAGE);
      return EXIT.ok;
    }
    kc = loadConfig(args, io.env);
    const client = new Client(kc, { userAgent: FIELD_MANAGER, fieldManager: FIELD_MANAGER, timeoutMs: 15_000 });
    const ctx: Context = {
      client,
      namespace: namespaceOf(args, kc),
      now: () => new Date(),
      sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    };
    const out = await dispatch(ctx, args);
    for (const n of out.notes ?? []) io.stderr(`${n}\n`);
    io.stdout(args.output === "json" ? `${JSON.stringify(out.json, null, 2)}\n` : out.text);
    return EXIT.ok;
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`error: ${e.message}\nRun 'kubectl cron --help' for usage.\n`);
      return EXIT.usage;
    }
    io.stderr(`error: ${explain(e, kc)}\n`);
    return e instanceof WaitTimeout ? EXIT.timeout : EXIT.failed;
  }
}

if (import.meta.main) {
  const code = await main(process.argv.slice(2), {
    stdout: (s) => process.stdout.write(s),
    stderr: (s) => process.stderr.write(s),
    env: process.env,
  });
  // The client's keep-alive sockets would hold the process open; exit once the output is flushed.
  await new Promise<void>((r) => process.stdout.write("", () => r()));
  process.exit(code);
}
