// Command-line parsing for kubectl-cron. Flags follow kubectl: -n/--namespace, -A/--all-namespaces,
// -l/--selector, --context, --kubeconfig, -o/--output; `next` takes its count as --count (-n is the namespace,
// as in every kubectl command).
import { parseArgs } from "node:util";

export const COMMANDS = [
  "run",
  "suspend",
  "resume",
  "next",
  "history",
  "list",
  "why",
  "groups",
  "instances",
  "backfill",
  "migrate",
  "unmigrate",
  "dashboard",
] as const;
export type Command = (typeof COMMANDS)[number];
/** Commands acting on one CronJob, named on the command line. */
export const SINGLE_OBJECT_COMMANDS: ReadonlySet<Command> = new Set([
  "run",
  "suspend",
  "resume",
  "next",
  "history",
  "backfill",
]);
const OUTPUTS = ["table", "json", "yaml"] as const;
type OutputFormat = (typeof OUTPUTS)[number];

export interface Args {
  command: Command;
  /**
   * The CronJob's name (groups: the ConcurrencyGroup's); optional (and then the whole selection) for list, why,
   * groups, migrate and unmigrate.
   */
  name: string;
  namespace?: string;
  allNamespaces: boolean;
  selector?: string;
  context?: string;
  kubeconfig?: string;
  /** How long one request to the API server may go unanswered (--request-timeout); 0: as long as the server takes. */
  requestTimeoutMs: number;
  output: OutputFormat;
  /** next: how many slots (--count; absent: answer/answers.ts's NEXT_COUNT). */
  count?: number;
  wait: boolean;
  timeoutSeconds: number;
  dryRun: boolean;
  /** migrate/unmigrate: how long the other controller gets to finish a Job it was creating. */
  settleSeconds: number;
  /** unmigrate: delete ours instead of leaving it suspended. */
  delete: boolean;
  /** backfill: the range (RFC 3339), how many of its Jobs at a time, or cancel the running request. */
  from?: Date;
  to?: Date;
  parallelism: number;
  cancel: boolean;
  /** backfill: also run the slots spec.exclusions holds (by default a backfill skips them, as the schedule did). */
  includeExcluded: boolean;
  /** why: the slot asked about, as given (read in the CronJob's zone when it has no offset). */
  slot?: string;
  /** why: where the operator runs (default: found from its webhooks, else cronjob-operator-system). */
  operatorNamespace?: string;
  /** dashboard: the loopback port to listen on (0: a free one). */
  port: number;
  /** dashboard: no actions (run now, suspend, resume) on the page. */
  readOnly: boolean;
  /** dashboard: open the page in the user's browser. */
  open: boolean;
}

/** A mistake in how the plugin was called: exit code 2, with usage. */
export class UsageError extends Error {}

const DEFAULT_MIGRATE_SETTLE_SECONDS = 15;
const DEFAULT_UNMIGRATE_SETTLE_SECONDS = 5;

export const USAGE = `kubectl cron: run, pause, inspect and take over CronJobs of batch.tutorial.kubebuilder.io

Usage:
  kubectl cron run NAME      [--no-wait] [--timeout=60s]   request one run now, wait for its Job
  kubectl cron suspend NAME                               stop scheduling (running Jobs continue)
  kubectl cron resume NAME                                schedule again
  kubectl cron next NAME     [--count=5]                  the next fire times in the CronJob's zone
  kubectl cron history NAME                               its Jobs: slot, result, duration
  kubectl cron list [-A] [-l SELECTOR]                    the CronJobs: schedule, zone, last and next run
  kubectl cron why NAME      [--slot=TIME]                why it did not run (or ran and did nothing) at its
                                                          latest slot, or at TIME: the verdict, the evidence,
                                                          the fix, and the next run
  kubectl cron why [-A] [-l SELECTOR]                     the CronJobs that need attention, one line each (a
                                                          problem many share, the operator's or a group's, once)
  kubectl cron groups [-A]                                the concurrency groups: limit, running Jobs, waiting
                                                          runs, the oldest wait, how many CronJobs name each
  kubectl cron groups NAME                                a group's running Jobs and waiting runs, with their
                                                          CronJob, in the order they get places
  kubectl cron instances [-A]                             which install and instance runs each claimed namespace
                                                          (--watch-namespaces, --sharding): since when, and
                                                          whether that instance is live; the instance Leases
  kubectl cron backfill NAME --from=T1 --to=T2 [--parallelism=1] [--include-excluded] [--dry-run]
                                                          run every slot in [T1, T2] (RFC 3339) once, oldest
                                                          first; slots that have their Job are skipped, and
                                                          those spec.exclusions holds unless --include-excluded
  kubectl cron backfill NAME [--cancel]                   the backfill's progress (or cancel it)
  kubectl cron dashboard [-A] [--port=0] [--read-only] [--open]
                                                          the fleet on a page served on 127.0.0.1: each
                                                          CronJob's runs and slots over time, its groups,
                                                          why for any slot, live (docs/dashboard.md)
  kubectl cron migrate (NAME | -l SELECTOR | -A) [--dry-run] [--settle=15s]
                                                          take over built-in CronJobs: create ours, suspend
                                                          theirs, carry lastScheduleTime across
  kubectl cron unmigrate (NAME | -l SELECTOR | -A) [--delete] [--dry-run] [--settle=5s]
                                                          give them back: suspend ours, resume the original
                                                          (--delete: remove ours, keeping its Jobs)
  Without NAME, -l or -A, list/migrate/unmigrate take every CronJob of the namespace.

Flags:
  -n, --namespace NS         the namespace (default: the context's, else "default")
  -A, --all-namespaces       list/why/groups/instances/migrate/unmigrate/dashboard: every namespace
  -l, --selector SELECTOR    list/why/migrate/unmigrate: CronJobs with these labels (e.g. team=data,tier!=dev)
      --slot TIME            why: the slot to explain: RFC 3339 (2026-11-25T02:00:00Z), or a wall-clock time in
                             the CronJob's zone (2026-11-25T03:00 or "2026-11-25 03:00")
      --operator-namespace NS  why, dashboard: where the operator runs (default: the install the namespace's claim
                             names, else found from its webhooks)
      --port N               dashboard: the port on 127.0.0.1 (default 0: a free one)
      --read-only            dashboard: no run now, suspend or resume on the page
      --open                 dashboard: open the page in the browser (xdg-open)
      --context NAME         the kubeconfig context to use
      --kubeconfig FILE      the kubeconfig (default: $KUBECONFIG, else ~/.kube/config)
      --request-timeout D    how long one request may go unanswered, as kubectl's (1s, 2m, 3h; 0: no limit;
                             default 60s, the API server's own limit: a write waits for the admission webhooks)
  -o, --output json|yaml     JSON or YAML instead of a table
      --dry-run              migrate/unmigrate/backfill: print what would be created and changed; change nothing
  -h, --help

Shell completion: kubectl 1.26+ completes \`kubectl cron <TAB>\` with kubectl_complete-cron on PATH
(make install-plugin installs both).

Exit codes: 0 done; 1 the cluster refused or could not be reached (the message says why); 2 wrong usage; 3 run:
the request was made but no Job appeared before --timeout; 4 migrate/unmigrate refused some objects (each is
reported with the reason; the others were done). why: 0 healthy, 1 a cause found (or the cluster could not be
read), 2 cannot tell (or wrong usage).
`;

function parseDuration(flag: string, v: string): number {
  const m = /^(\d+)(s|m)?$/.exec(v.trim());
  if (!m) throw new UsageError(`${flag}: want seconds or minutes like 90s or 2m; got ${JSON.stringify(v)}`);
  return Number(m[1]) * (m[2] === "m" ? 60 : 1);
}

/**
 * The API server ends a request it has not answered in 60 s (kube-apiserver --request-timeout); a write
 * goes through admission webhooks first (up to 10 s each by default, longer when one is unreachable), so a
 * shorter client limit would report a failure for a write the server may still make.
 */
const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/** kubectl's --request-timeout: a bare whole number of seconds, or Go durations in h, m, s, ms; 0 means none. */
function parseRequestTimeout(v: string): number {
  const t = v.trim();
  if (/^\d+$/.test(t)) return Number(t) * 1000;
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  let ms = 0;
  let rest = t;
  while (rest !== "") {
    const m = /^(\d+(?:\.\d+)?)(ms|h|m|s)/.exec(rest);
    if (!m) {
      throw new UsageError(
        `--request-timeout: want a duration such as 30s, 2m or 1h (0 for no limit); got ${JSON.stringify(v)}`,
      );
    }
    ms += Number(m[1]) * unit[m[2]!]!;
    rest = rest.slice(m[0].length);
  }
  if (t === "") throw new UsageError(`--request-timeout: want a duration such as 30s; got ""`);
  return Math.round(ms);
}

function parseCount(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v.trim()) || n < 1 || n > 1000) {
    throw new UsageError(`--count: want a whole number from 1 to 1000; got ${JSON.stringify(v)}`);
  }
  return n;
}

export const OPTIONS = {
  namespace: { type: "string", short: "n" },
  "all-namespaces": { type: "boolean", short: "A" },
  selector: { type: "string", short: "l" },
  context: { type: "string" },
  kubeconfig: { type: "string" },
  "request-timeout": { type: "string" },
  output: { type: "string", short: "o" },
  count: { type: "string", short: "c" },
  "no-wait": { type: "boolean" },
  timeout: { type: "string" },
  "dry-run": { type: "boolean" },
  settle: { type: "string" },
  delete: { type: "boolean" },
  from: { type: "string" },
  to: { type: "string" },
  parallelism: { type: "string" },
  cancel: { type: "boolean" },
  "include-excluded": { type: "boolean" },
  slot: { type: "string" },
  "operator-namespace": { type: "string" },
  port: { type: "string" },
  "read-only": { type: "boolean" },
  open: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** Which commands a flag means something to (a flag given to another command is a usage error). */
const FLAG_COMMANDS: Partial<Record<keyof typeof OPTIONS, readonly Command[]>> = {
  "all-namespaces": ["list", "why", "groups", "instances", "migrate", "unmigrate", "dashboard"],
  selector: ["list", "why", "migrate", "unmigrate"],
  slot: ["why"],
  "operator-namespace": ["why", "dashboard"],
  port: ["dashboard"],
  "read-only": ["dashboard"],
  open: ["dashboard"],
  count: ["next"],
  "no-wait": ["run"],
  timeout: ["run"],
  "dry-run": ["migrate", "unmigrate", "backfill"],
  from: ["backfill"],
  to: ["backfill"],
  parallelism: ["backfill"],
  cancel: ["backfill"],
  "include-excluded": ["backfill"],
  settle: ["migrate", "unmigrate"],
  delete: ["unmigrate"],
};

export function parseCommandLine(argv: readonly string[]): Args | "help" {
  const { values, positionals } = parseOptions(argv);
  if (values.help || positionals.length === 0) return "help";
  const [command, name, ...rest] = positionals;
  if (!(COMMANDS as readonly string[]).includes(command ?? "")) {
    throw new UsageError(`unknown command ${JSON.stringify(command)}; want one of ${COMMANDS.join(", ")}`);
  }
  const cmd = command as Command;
  checkCombination(cmd, name, rest, values);
  const output = values.output ?? "table";
  if (!(OUTPUTS as readonly string[]).includes(output)) {
    throw new UsageError(`--output: want json or yaml (or leave it out for a table); got ${JSON.stringify(output)}`);
  }
  return argsOf(cmd, name, values, output as OutputFormat, backfillRange(cmd, values));
}

function parseOptions(argv: readonly string[]) {
  try {
    return parseArgs({ args: [...argv], allowPositionals: true, options: OPTIONS });
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
}

type Values = ReturnType<typeof parseOptions>["values"];

/** The usage error of the first flag or NAME that does not go with the command or with another. */
function checkCombination(cmd: Command, name: string | undefined, rest: string[], values: Values): void {
  for (const [flag, commands] of Object.entries(FLAG_COMMANDS)) {
    if (values[flag as keyof typeof values] !== undefined && !commands.includes(cmd)) {
      throw new UsageError(`--${flag} does not apply to ${cmd} (only to ${commands.join(", ")})`);
    }
  }
  if (SINGLE_OBJECT_COMMANDS.has(cmd) && !name) {
    throw new UsageError(`${cmd} needs the CronJob's name: kubectl cron ${cmd} NAME`);
  }
  if (rest.length > 0) throw new UsageError(`unexpected arguments: ${rest.join(" ")}`);
  if (cmd === "dashboard" && name) throw new UsageError(`dashboard takes no NAME: it shows the namespace (or -A)`);
  if (cmd === "instances" && name) throw new UsageError(`instances takes no NAME: it shows the namespace (or -A)`);
  const allNamespaces = values["all-namespaces"] === true;
  if (name && allNamespaces) throw new UsageError(`a NAME and -A/--all-namespaces do not go together: pick one`);
  if (name && values.selector !== undefined) throw new UsageError(`a NAME and -l/--selector do not go together`);
  if (allNamespaces && values.namespace !== undefined) {
    throw new UsageError(`-n/--namespace and -A/--all-namespaces do not go together`);
  }
  if (values.slot !== undefined && !name)
    throw new UsageError(`--slot needs the CronJob's name: kubectl cron why NAME --slot=TIME`);
  if (values.selector !== undefined && values.selector.trim() === "") {
    throw new UsageError(`--selector: want a label selector such as app=backup; got ""`);
  }
}

/** --from and --to, read; for backfill, checked to make a range (or none, the progress) with the flags it needs. */
function backfillRange(cmd: Command, values: Values): { from: Date | undefined; to: Date | undefined } {
  const from = values.from !== undefined ? parseTime("--from", values.from) : undefined;
  const to = values.to !== undefined ? parseTime("--to", values.to) : undefined;
  if (cmd === "backfill") {
    if ((from === undefined) !== (to === undefined))
      throw new UsageError("backfill: give both --from and --to (or neither, to see the progress)");
    if (values.cancel && from) throw new UsageError("backfill: --cancel does not go with --from/--to");
    if (from && to && from > to) throw new UsageError(`backfill: --from (${values.from}) is after --to (${values.to})`);
    if (values["dry-run"] && !from) throw new UsageError("backfill: --dry-run needs --from and --to");
    if (values["include-excluded"] && !from) throw new UsageError("backfill: --include-excluded needs --from and --to");
  }
  return { from, to };
}

/** The Args of a command line whose words go together; a flag's value that does not parse is its usage error. */
function argsOf(
  cmd: Command,
  name: string | undefined,
  values: Values,
  output: OutputFormat,
  { from, to }: { from: Date | undefined; to: Date | undefined },
): Args {
  const defaultSettle = cmd === "unmigrate" ? DEFAULT_UNMIGRATE_SETTLE_SECONDS : DEFAULT_MIGRATE_SETTLE_SECONDS;
  return {
    command: cmd,
    name: name ?? "",
    ...(values.namespace !== undefined ? { namespace: values.namespace } : {}),
    allNamespaces: values["all-namespaces"] === true,
    ...(values.selector !== undefined ? { selector: values.selector } : {}),
    ...(values.context !== undefined ? { context: values.context } : {}),
    ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}),
    requestTimeoutMs:
      values["request-timeout"] !== undefined
        ? parseRequestTimeout(values["request-timeout"])
        : DEFAULT_REQUEST_TIMEOUT_MS,
    output,
    ...(values.count !== undefined ? { count: parseCount(values.count) } : {}),
    wait: !values["no-wait"],
    timeoutSeconds: values.timeout !== undefined ? parseDuration("--timeout", values.timeout) : 60,
    dryRun: values["dry-run"] === true,
    settleSeconds: values.settle !== undefined ? parseDuration("--settle", values.settle) : defaultSettle,
    delete: values.delete === true,
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
    parallelism: values.parallelism !== undefined ? parseParallelism(values.parallelism) : 1,
    cancel: values.cancel === true,
    includeExcluded: values["include-excluded"] === true,
    ...(values.slot !== undefined ? { slot: values.slot } : {}),
    ...(values["operator-namespace"] !== undefined ? { operatorNamespace: values["operator-namespace"] } : {}),
    port: values.port !== undefined ? parsePort(values.port) : 0,
    readOnly: values["read-only"] === true,
    open: values.open === true,
  };
}

function parseTime(flag: string, v: string): Date {
  const d = new Date(v);
  if (
    !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(v.trim()) ||
    Number.isNaN(d.getTime())
  )
    throw new UsageError(`${flag}: want an RFC 3339 time such as 2026-11-20T00:00:00Z; got ${JSON.stringify(v)}`);
  return d;
}

function parseParallelism(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v.trim()) || n < 1 || n > 100)
    throw new UsageError(`--parallelism: want a whole number from 1 to 100; got ${JSON.stringify(v)}`);
  return n;
}

function parsePort(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v.trim()) || n > 65535)
    throw new UsageError(`--port: want a port from 0 (a free one) to 65535; got ${JSON.stringify(v)}`);
  return n;
}
