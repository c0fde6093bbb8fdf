// Command-line parsing for kubectl-cron. Flags follow kubectl: -n/--namespace, --context, --kubeconfig,
// -o/--output; `next` takes its count as --count (-n is the namespace, as in every kubectl command).
import { parseArgs } from "node:util";

export const COMMANDS = ["run", "suspend", "resume", "next", "history"] as const;
export type Command = (typeof COMMANDS)[number];

export interface Args {
  command: Command;
  name: string;
  namespace?: string;
  context?: string;
  kubeconfig?: string;
  output: "table" | "json";
  count: number;
  wait: boolean;
  timeoutSeconds: number;
}

/** A mistake in how the plugin was called: exit code 2, with usage. */
export class UsageError extends Error {}

export const USAGE = `kubectl cron: run, pause and inspect CronJobs of batch.tutorial.kubebuilder.io

Usage:
  kubectl cron run NAME      [--no-wait] [--timeout=60s]   request one run now, wait for its Job
  kubectl cron suspend NAME                               stop scheduling (running Jobs continue)
  kubectl cron resume NAME                                schedule again
  kubectl cron next NAME     [--count=5]                  the next fire times in the CronJob's zone
  kubectl cron history NAME                               its Jobs: slot, result, duration

Flags (all commands):
  -n, --namespace NS      the namespace (default: the context's, else "default")
      --context NAME      the kubeconfig context to use
      --kubeconfig FILE   the kubeconfig (default: $KUBECONFIG, else ~/.kube/config)
  -o, --output json       JSON instead of a table
  -h, --help

Exit codes: 0 done; 1 the cluster refused or could not be reached (the message says why);
2 wrong usage; 3 run: the request was made but no Job appeared before --timeout.
`;

function parseTimeout(v: string): number {
  const m = /^(\d+)(s|m)?$/.exec(v.trim());
  if (!m) throw new UsageError(`--timeout: want seconds or minutes like 90s or 2m; got ${JSON.stringify(v)}`);
  return Number(m[1]) * (m[2] === "m" ? 60 : 1);
}

function parseCount(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v.trim()) || n < 1 || n > 1000) {
    throw new UsageError(`--count: want a whole number from 1 to 1000; got ${JSON.stringify(v)}`);
  }
  return n;
}

export function parseCommandLine(argv: readonly string[]): Args | "help" {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        namespace: { type: "string", short: "n" },
        context: { type: "string" },
        kubeconfig: { type: "string" },
        output: { type: "string", short: "o" },
        count: { type: "string", short: "c" },
        "no-wait": { type: "boolean" },
        timeout: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0) return "help";
  const [command, name, ...rest] = positionals;
  if (!(COMMANDS as readonly string[]).includes(command ?? "")) {
    throw new UsageError(`unknown command ${JSON.stringify(command)}; want one of ${COMMANDS.join(", ")}`);
  }
  if (!name) throw new UsageError(`${command} needs the CronJob's name: kubectl cron ${command} NAME`);
  if (rest.length > 0) throw new UsageError(`unexpected arguments: ${rest.join(" ")}`);
  const output = values.output ?? "table";
  if (output !== "json" && output !== "table") {
    throw new UsageError(`--output: want json (or leave it out for a table); got ${JSON.stringify(output)}`);
  }
  return {
    command: command as Command,
    name,
    ...(values.namespace !== undefined ? { namespace: values.namespace } : {}),
    ...(values.context !== undefined ? { context: values.context } : {}),
    ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}),
    output,
    count: values.count !== undefined ? parseCount(values.count) : 5,
    wait: !values["no-wait"],
    timeoutSeconds: values.timeout !== undefined ? parseTimeout(values.timeout) : 60,
  };
}
