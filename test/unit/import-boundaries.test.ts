// Who may import whom. The admission webhooks and `kubectl cron` build on the API package (api/v1) and the
// runtime, never on the controller: what they share with it is an API fact and lives in api/v1 (the triggers' rows
// too: api/v1/triggers.ts). The controllers work on the stored version only and never import api/v2 (the conversion
// webhook's). The development tools (hack/) and the benchmark (bench/) share code through envtest/, not each other,
// and nothing outside test/ imports the tests' code.
// And no module imports one that imports it back: a circle leaves no lower module to read or test alone, and one through a
// dynamic import can leave a top-level await unsettled (issue 55: `node cmd/kubectl-cron/main.ts` exited 13).
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, it } from "node:test";

const root = resolve(import.meta.dirname, "..", "..");

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (name === "node_modules" || name === "results") return [];
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/** The relative module specifiers a file imports or re-exports (static and dynamic), resolved from the root. */
function importsOf(file: string, text: string): string[] {
  const specifiers = [
    ...text.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+["']([^"']+)["']/gms),
    ...text.matchAll(/^\s*import\s+["']([^"']+)["']/gm),
    ...text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g),
  ].map((m) => m[1]!);
  return specifiers.filter((s) => s.startsWith(".")).map((s) => relative(root, resolve(dirname(file), s)));
}

/** The import graph of `files`, by path from the root: each file's imports among them (of anything else: no edge). */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const graph = new Map(files.map((f) => [relative(root, f), [] as string[]]));
  for (const f of files) {
    graph.set(
      relative(root, f),
      importsOf(f, readFileSync(f, "utf8")).filter((t) => graph.has(t)),
    );
  }
  return graph;
}

/**
 * The import circles of `graph`: for each file on one, the shortest way back to it, each circle written once (from
 * its first file by name). Every file on a circle shows in one; breaking them shows the longer ones that remain.
 */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const found = new Set<string>();
  for (const start of graph.keys()) {
    // Breadth first: the first import that leads back to `start` closes a shortest circle through it.
    const cameFrom = new Map<string, string>();
    const queue = [start];
    let last: string | undefined;
    for (let i = 0; i < queue.length && last === undefined; i++) {
      for (const next of graph.get(queue[i]!) ?? []) {
        if (next === start) {
          last = queue[i]!;
          break;
        }
        if (!cameFrom.has(next)) {
          cameFrom.set(next, queue[i]!);
          queue.push(next);
        }
      }
    }
    if (last === undefined) continue;
    const circle: string[] = [];
    for (let at = last; at !== start; at = cameFrom.get(at)!) circle.unshift(at);
    circle.unshift(start);
    const first = circle.indexOf([...circle].sort()[0]!);
    const from = [...circle.slice(first), ...circle.slice(0, first)];
    found.add([...from, from[0]].join(" → "));
  }
  return [...found].sort();
}

function offenders(fromDirs: string[], forbidden: string[]): string[] {
  const out: string[] = [];
  for (const file of fromDirs.flatMap((d) => tsFiles(join(root, d)))) {
    for (const target of importsOf(file, readFileSync(file, "utf8"))) {
      if (forbidden.some((f) => target === f || target.startsWith(`${f}/`))) {
        out.push(`${relative(root, file)} imports ${target}`);
      }
    }
  }
  return out;
}

describe("import boundaries", () => {
  it("finds imports the way the checks below need (multi-line, type-only, re-exports, dynamic)", () => {
    const f = join(root, "webhooks", "x.ts");
    const text = [
      'import {\n  a,\n  b,\n} from "../controllers/job.ts";',
      'import type { C } from "../api/v1/index.ts";',
      'export { d } from "./local.ts";',
      'const m = await import("../controllers/metrics.ts");',
      'import "node:fs";',
    ].join("\n");
    assert.deepEqual(importsOf(f, text).sort(), [
      "api/v1/index.ts",
      "controllers/job.ts",
      "controllers/metrics.ts",
      "webhooks/local.ts",
    ]);
  });

  it("kubectl cron and the webhooks import nothing from controllers/", () => {
    assert.deepEqual(offenders(["cmd/kubectl-cron"], ["controllers"]), []);
    // A trigger's admission check is its row's in api/v1/triggers.ts (validate): the validating webhook loops over
    // the rows, so a new trigger brings its check with it instead of an edit here.
    assert.deepEqual(offenders(["webhooks"], ["controllers"]), []);
  });

  it("the API package imports nothing from the webhook server or the controllers (field errors are runtime/field.ts)", () => {
    assert.deepEqual(offenders(["api"], ["runtime/webhook", "controllers", "webhooks"]), []);
  });

  it("the runtime knows nothing of CronJobs: it imports neither the API package nor the controllers", () => {
    assert.deepEqual(offenders(["runtime"], ["api", "controllers", "webhooks"]), []);
  });

  it("the controllers reconcile the stored version: they import nothing from api/v2 (only the conversion webhook does)", () => {
    assert.deepEqual(offenders(["controllers"], ["api/v2"]), []);
  });

  it("hack/ and bench/ do not import each other", () => {
    assert.deepEqual(offenders(["hack"], ["bench"]), []);
    assert.deepEqual(offenders(["bench"], ["hack"]), []);
  });

  it("the dashboard imports the plugin's readers and its own parts, no command module (issue 63)", () => {
    // The readers: the one-shot reads, the pure functions the commands print from (answers.ts: one CronJob's
    // answers) and the writes. A command module (commands.ts, onecronjob.ts, whyone.ts, whycommand.ts, groups.ts,
    // main.ts, …) reads for its command and prints; the dashboard reads for itself and calls what they call.
    const readers = new Set(
      [
        "read/whyfacts.ts",
        "answer/verdicts.ts",
        "answer/why.ts",
        "answer/answers.ts",
        "write/writes.ts",
        "model/groupfacts.ts",
        "model/exclusions.ts",
        "answer/history.ts",
        "model/slots.ts",
        "model/time.ts",
        "answer/retries.ts",
      ].map((f) => `cmd/kubectl-cron/${f}`),
    );
    // Its own signature's types: what main.ts hands every command.
    const typesOnly = new Set(["cmd/kubectl-cron/model/args.ts", "cmd/kubectl-cron/model/context.ts"]);
    const bad: string[] = [];
    for (const f of tsFiles(join(root, "cmd", "kubectl-cron", "dashboard"))) {
      const text = readFileSync(f, "utf8");
      for (const target of importsOf(f, text)) {
        if (!target.startsWith("cmd/kubectl-cron/") || target.startsWith("cmd/kubectl-cron/dashboard/")) continue;
        if (readers.has(target)) continue;
        const spec = relative(dirname(f), join(root, target)).replace(/^(?!\.)/, "./");
        const typeOnly = new RegExp(`^import type [^;]*from ["']${spec.replace(/[.]/g, "\\.")}["']`, "m").test(text);
        if (typesOnly.has(target) && typeOnly) continue;
        bad.push(`${relative(root, f)} imports ${target}`);
      }
    }
    assert.deepEqual(bad, []);
  });

  it("the tooling and the product import nothing from test/: what a tool shares with the tests is envtest/'s", () => {
    const product = ["api", "controllers", "webhooks", "runtime", "cmd", "hack", "envtest", "bench"];
    assert.deepEqual(offenders(product, ["test"]), []);
  });
});

describe("no import circles", () => {
  it("finds the shortest circle through each file on one, each circle once, however it is entered", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c", "a"]],
      ["c", ["a"]],
      ["d", ["d"]],
      ["e", ["a", "f"]],
      ["f", []],
    ]);
    assert.deepEqual(circles(graph), ["a → b → a", "a → b → c → a", "d → d"]);
  });

  it("no product module imports one that imports it back (type-only, re-exports and dynamic imports count)", () => {
    const product = ["api", "controllers", "webhooks", "runtime", "cmd", "hack", "envtest", "bench"];
    const graph = importGraph(product.flatMap((d) => tsFiles(join(root, d))));
    assert.ok(graph.size > 100 && graph.has("cmd/kubectl-cron/cli.ts"), "the product's files were found");
    assert.deepEqual(circles(graph), []);
  });
});

// The type system's escape hatch and third-party internals: issue 32 took both out of the product, and a cast
// through unknown or a library's private field would hide the next library upgrade's breaking change.
describe("product code uses public, typed APIs", () => {
  const PRODUCT = ["api", "controllers", "runtime", "webhooks", "cmd", "hack"];
  const lines = (pattern: RegExp) =>
    PRODUCT.flatMap((d) => tsFiles(join(root, d))).flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((line, i) => (pattern.test(line) ? [`${relative(root, file)}:${i + 1}: ${line.trim()}`] : [])),
    );

  it("no cast through unknown", () => {
    assert.deepEqual(lines(/\bas unknown as\b/), []);
  });

  it("no private prom-client field (hashMap, _defaultLabels, …)", () => {
    assert.deepEqual(lines(/\.(hashMap|_defaultLabels|_metrics|_collectors)\b|"hashMap" in/), []);
  });
});
