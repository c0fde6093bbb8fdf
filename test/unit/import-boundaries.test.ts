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

/**
 * The plugin's rooms (docs/architecture.md, "The plugin's rooms"), a folder each, and the rooms each may import
 * besides its own. The model is pure and imports none; what reads imports the model only, so a read hands on plain
 * data; the answers are pure functions of that data, so they import no read; a write reads what it changes. Commands
 * and the dashboard each take the four below them and never each other: what a command prints is an answer both call.
 * The top (cli.ts, main.ts) may import any room; no room imports it.
 */
const PLUGIN = "cmd/kubectl-cron";
const ROOMS: Record<string, readonly string[]> = {
  model: [],
  read: ["model"],
  answer: ["model"],
  write: ["model", "read"],
  commands: ["model", "read", "answer", "write"],
  dashboard: ["model", "read", "answer", "write"],
};
/** The files the build and the launchers name, the only ones at the plugin's top. */
const PLUGIN_TOP = ["cli.ts", "kubectl-cron", "kubectl_complete-cron", "main.ts"];

/** A plugin file's room (its first folder), "the top" for a file at the top; undefined outside the plugin. */
function roomOf(path: string): string | undefined {
  if (!path.startsWith(`${PLUGIN}/`)) return undefined;
  const parts = path.slice(PLUGIN.length + 1).split("/");
  return parts.length === 1 ? "the top" : parts[0];
}

/** Each import of `graph` (file, its imports) from a room of a file of the plugin it may not import. */
function roomBreaches(graph: Iterable<readonly [string, readonly string[]]>): string[] {
  const out: string[] = [];
  for (const [file, imports] of graph) {
    const from = roomOf(file);
    if (from === undefined || from === "the top") continue;
    for (const target of imports) {
      const to = roomOf(target);
      if (to === undefined || to === from || (ROOMS[from] ?? []).includes(to)) continue;
      out.push(`${file} (${from}) imports ${target} (${to})`);
    }
  }
  return out;
}

/** Every file of the plugin with its imports. */
function pluginImports(): [string, string[]][] {
  return tsFiles(join(root, PLUGIN)).map((f) => [relative(root, f), importsOf(f, readFileSync(f, "utf8"))]);
}

/** A file at the plugin's top that is not an entry point, or a folder that is no room. */
function strayFiles(): string[] {
  return readdirSync(join(root, PLUGIN)).filter((name) =>
    statSync(join(root, PLUGIN, name)).isDirectory() ? !(name in ROOMS) : !PLUGIN_TOP.includes(name),
  );
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

  it("the plugin's rooms import only the rooms below them; its top holds only the entry points (issue 72)", () => {
    assert.deepEqual(roomBreaches(pluginImports()), []);
    assert.deepEqual(strayFiles(), []);
  });

  it("the plugin's room rule finds each kind of breach", () => {
    const breaches = roomBreaches([
      [
        "cmd/kubectl-cron/dashboard/marks.ts",
        ["cmd/kubectl-cron/commands/onecronjob.ts", "cmd/kubectl-cron/model/time.ts"],
      ],
      ["cmd/kubectl-cron/commands/why.ts", ["cmd/kubectl-cron/dashboard/view.ts", "cmd/kubectl-cron/commands/x.ts"]],
      ["cmd/kubectl-cron/model/facts.ts", ["cmd/kubectl-cron/read/api.ts", "runtime/client.ts"]],
      ["cmd/kubectl-cron/read/whyfacts.ts", ["cmd/kubectl-cron/answer/why.ts", "cmd/kubectl-cron/model/facts.ts"]],
      ["cmd/kubectl-cron/answer/answers.ts", ["cmd/kubectl-cron/read/whyfacts.ts", "cmd/kubectl-cron/write/writes.ts"]],
      ["cmd/kubectl-cron/write/writes.ts", ["cmd/kubectl-cron/answer/verdicts.ts", "cmd/kubectl-cron/read/api.ts"]],
      ["cmd/kubectl-cron/answer/why/ran.ts", ["cmd/kubectl-cron/main.ts", "cmd/kubectl-cron/answer/causes.ts"]],
      [
        "cmd/kubectl-cron/main.ts",
        ["cmd/kubectl-cron/commands/whycommand.ts", "cmd/kubectl-cron/dashboard/command.ts"],
      ],
    ]);
    assert.deepEqual(breaches, [
      "cmd/kubectl-cron/dashboard/marks.ts (dashboard) imports cmd/kubectl-cron/commands/onecronjob.ts (commands)",
      "cmd/kubectl-cron/commands/why.ts (commands) imports cmd/kubectl-cron/dashboard/view.ts (dashboard)",
      "cmd/kubectl-cron/model/facts.ts (model) imports cmd/kubectl-cron/read/api.ts (read)",
      "cmd/kubectl-cron/read/whyfacts.ts (read) imports cmd/kubectl-cron/answer/why.ts (answer)",
      "cmd/kubectl-cron/answer/answers.ts (answer) imports cmd/kubectl-cron/read/whyfacts.ts (read)",
      "cmd/kubectl-cron/answer/answers.ts (answer) imports cmd/kubectl-cron/write/writes.ts (write)",
      "cmd/kubectl-cron/write/writes.ts (write) imports cmd/kubectl-cron/answer/verdicts.ts (answer)",
      "cmd/kubectl-cron/answer/why/ran.ts (answer) imports cmd/kubectl-cron/main.ts (the top)",
    ]);
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
