// Shell completion as kubectl plugins provide it (kubectl 1.26+): `kubectl cron <TAB>` runs
// kubectl_complete-cron with the words after `cron`, the last being the word being completed, and reads
// Cobra's format: one candidate a line (`value<TAB>description`), then `:<directive>`.
import { COMMANDS, OPTIONS, SINGLE_OBJECT_COMMANDS, type Command } from "../model/args.ts";

/** Cobra's ShellCompDirective values. */
const DIRECTIVE = { default: 0, noFileComp: 4 } as const;

export interface CompletionSources {
  /** Names of CronJobs in a namespace (undefined: the context's): ours, or the built-in kind's for migrate. */
  cronJobNames(kind: "ours" | "builtin", namespace: string | undefined): Promise<string[]>;
  /** Names of the ConcurrencyGroups of a namespace (undefined: the context's). */
  groupNames(namespace: string | undefined): Promise<string[]>;
  namespaces(): Promise<string[]>;
  contexts(): string[];
}

interface Completion {
  candidates: string[];
  directive: number;
}

const COMMAND_HELP: Record<Command, string> = {
  run: "request one run now and wait for its Job",
  suspend: "stop scheduling",
  resume: "schedule again",
  next: "the next fire times",
  history: "its Jobs: slot, result, duration",
  list: "the CronJobs of the namespace (-A: all)",
  why: "why it did not run, with the evidence and the fix (no NAME: those that need attention)",
  groups: "the concurrency groups: limit, running, waiting (NAME: its Jobs and waiting runs)",
  instances: "which install and instance runs each claimed namespace, and whether it is live",
  backfill: "run every slot of a past range (or show its progress)",
  migrate: "take over built-in CronJobs",
  unmigrate: "give migrated CronJobs back to the built-in kind",
  dashboard: "the fleet on a page on 127.0.0.1: runs, slots, groups, why (live)",
};

const FLAG_HELP: Record<keyof typeof OPTIONS, string> = {
  namespace: "the namespace",
  "all-namespaces": "every namespace",
  selector: "a label selector",
  context: "the kubeconfig context",
  kubeconfig: "the kubeconfig file",
  "request-timeout": "how long one request may go unanswered (0: no limit)",
  output: "json or yaml",
  count: "how many fire times",
  "no-wait": "do not wait for the Job",
  timeout: "how long to wait for the Job",
  "dry-run": "print what would change; change nothing",
  settle: "how long the other controller gets to finish",
  delete: "delete ours instead of leaving it suspended",
  from: "the range's first instant (RFC 3339)",
  to: "the range's last instant (RFC 3339)",
  parallelism: "how many of its Jobs at a time",
  cancel: "cancel the running backfill",
  "include-excluded": "also run the slots spec.exclusions holds",
  slot: "why: the slot to explain (RFC 3339, or a wall-clock time in the CronJob's zone)",
  "operator-namespace": "why: the namespace the operator runs in",
  port: "the port on 127.0.0.1 (0: a free one)",
  "read-only": "no run now, suspend or resume on the page",
  open: "open the page in the browser",
  help: "usage",
};

const FLAGS_OF: Record<Command, readonly (keyof typeof OPTIONS)[]> = {
  run: ["no-wait", "timeout"],
  suspend: [],
  resume: [],
  next: ["count"],
  history: [],
  list: ["all-namespaces", "selector"],
  why: ["all-namespaces", "selector", "slot", "operator-namespace"],
  groups: ["all-namespaces"],
  instances: ["all-namespaces"],
  backfill: ["from", "to", "parallelism", "include-excluded", "dry-run", "cancel"],
  migrate: ["all-namespaces", "selector", "dry-run", "settle"],
  unmigrate: ["all-namespaces", "selector", "dry-run", "settle", "delete"],
  dashboard: ["all-namespaces", "operator-namespace", "port", "read-only", "open"],
};
const COMMON_FLAGS = ["namespace", "context", "kubeconfig", "request-timeout", "output", "help"] as const;

const takesValue = (flag: keyof typeof OPTIONS) => OPTIONS[flag].type === "string";

/** The option a word names (`--namespace`, `-n`), if any. */
function optionOf(word: string): keyof typeof OPTIONS | undefined {
  if (word.startsWith("--")) {
    const name = word.slice(2).split("=")[0] as keyof typeof OPTIONS;
    return name in OPTIONS ? name : undefined;
  }
  if (/^-[a-zA-Z]$/.test(word)) {
    const short = word.slice(1);
    return (Object.keys(OPTIONS) as (keyof typeof OPTIONS)[]).find(
      (k) => (OPTIONS[k] as { short?: string }).short === short,
    );
  }
  return undefined;
}

export async function complete(words: readonly string[], sources: CompletionSources): Promise<Completion> {
  const toComplete = words.at(-1) ?? "";
  const before = words.slice(0, -1);
  const positionals: string[] = [];
  const values: Partial<Record<keyof typeof OPTIONS, string>> = {};
  for (let i = 0; i < before.length; i++) {
    const w = before[i]!;
    const opt = optionOf(w);
    if (opt) {
      if (takesValue(opt) && !w.includes("=")) values[opt] = before[++i] ?? "";
      else values[opt] = w.includes("=") ? w.slice(w.indexOf("=") + 1) : "true";
    } else if (!w.startsWith("-")) positionals.push(w);
  }
  const previous = optionOf(before.at(-1) ?? "");
  const match = (xs: string[]) => xs.filter((x) => x.startsWith(toComplete.split("\t")[0] ?? ""));

  // The value of a flag.
  if (previous && takesValue(previous) && !(before.at(-1) ?? "").includes("=")) {
    switch (previous) {
      case "namespace":
        return { candidates: match(await sources.namespaces().catch(() => [])), directive: DIRECTIVE.noFileComp };
      case "context":
        return { candidates: match(sources.contexts()), directive: DIRECTIVE.noFileComp };
      case "output":
        return { candidates: match(["json", "yaml"]), directive: DIRECTIVE.noFileComp };
      case "kubeconfig":
        return { candidates: [], directive: DIRECTIVE.default }; // the shell's file names
      default:
        return { candidates: [], directive: DIRECTIVE.noFileComp };
    }
  }
  const command = COMMANDS.find((c) => c === positionals[0]);
  if (toComplete.startsWith("-")) {
    const flags = [...(command ? FLAGS_OF[command] : []), ...COMMON_FLAGS].filter((f) => values[f] === undefined);
    const candidates = flags.map((f) => `--${f}\t${FLAG_HELP[f]}`).filter((c) => c.startsWith(toComplete));
    return { candidates, directive: DIRECTIVE.noFileComp };
  }
  if (positionals.length === 0) {
    return {
      candidates: COMMANDS.filter((c) => c.startsWith(toComplete)).map((c) => `${c}\t${COMMAND_HELP[c]}`),
      directive: DIRECTIVE.noFileComp,
    };
  }
  // The NAME: one, after the command; none with -A or -l.
  if (command && positionals.length === 1 && values["all-namespaces"] === undefined && values.selector === undefined) {
    if (command === "groups") {
      const names = await sources.groupNames(values.namespace).catch(() => []);
      return { candidates: match(names), directive: DIRECTIVE.noFileComp };
    }
    if (SINGLE_OBJECT_COMMANDS.has(command) || ["migrate", "unmigrate", "why"].includes(command)) {
      const kind = command === "migrate" ? "builtin" : "ours";
      const names = await sources.cronJobNames(kind, values.namespace).catch(() => []);
      return { candidates: match(names), directive: DIRECTIVE.noFileComp };
    }
  }
  return { candidates: [], directive: DIRECTIVE.noFileComp };
}

export function formatCompletion(c: Completion): string {
  return [...c.candidates, `:${c.directive}`].join("\n") + "\n";
}
