// Builds the kubectl plugin ahead of time (make plugin, make plugin-sea): no TypeScript to strip at start, and
// only what a command needs is evaluated (docs/run-now-and-the-plugin.md, "Installing the plugin").
//
//   bundle  bin/kubectl-cron.mjs: one ESM file with every dependency, `#!/usr/bin/env node`. Each import() of
//           cmd/kubectl-cron/cli.ts and commands/completecommand.ts stays lazy (esbuild wraps the module, evaluated on
//           first import), so --help, usage errors and __complete evaluate model/args.ts and commands/completion.ts only.
//           bin/plugin/ holds the same split into chunks, the fastest start, with `inputs`: what it was built
//           from. The launcher (cmd/kubectl-cron/kubectl-cron) runs it while none of those is newer.
//   sea     bin/kubectl-cron: a single executable (Node's single-executable applications): this project's
//           Node 24 with the same bundle (as CommonJS, which SEA's main script must be in Node 24) and its
//           V8 code cache injected by postject. Runs with no Node and no clone.
//
// Usage: node hack/build-plugin.ts [bundle|sea]... [--out-dir DIR]
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { build, type Plugin } from "esbuild";
import { bundlePage } from "../cmd/kubectl-cron/dashboard/assets.ts";

const ROOT = resolve(import.meta.dirname, "..");
const ENTRY = "hack/plugin-entry.ts";

/**
 * Modules loaded on first use with createRequire(import.meta.url), which a bundler cannot follow (and which would look
 * for node_modules beside the bundle): a plain require() is bundled, and stays lazy. runtime/kubeconfig.ts loads
 * `yaml` so; api/v1/schedule/timezone.ts loads `date-fns-tz` so (at load it pages in ICU's date data).
 */
const LAZY_REQUIRES: readonly { file: RegExp; module: string }[] = [
  { file: /runtime[\\/]kubeconfig\.ts$/, module: "yaml" },
  { file: /api[\\/]v1[\\/]schedule[\\/]timezone\.ts$/, module: "date-fns-tz/toZonedTime" },
];
const bundleLazyRequires: Plugin = {
  name: "lazy-requires",
  setup(b) {
    for (const { file, module } of LAZY_REQUIRES) {
      b.onLoad({ filter: file }, (args) => {
        const source = readFileSync(args.path, "utf8");
        const from = `createRequire(import.meta.url)(${JSON.stringify(module)})`;
        if (!source.includes(from))
          throw new Error(`${args.path} no longer contains ${from}: update hack/build-plugin.ts`);
        return { contents: source.replace(from, `require(${JSON.stringify(module)})`), loader: "ts" };
      });
    }
  },
};

/**
 * luxon's patches, each a replacement of its source (the build fails when one no longer applies):
 * - its system zone reads its name with a new Intl.DateTimeFormat at every call, and cron-parser asks for it at every
 *   date it makes: a third of `why -A`'s CPU at 5,000 CronJobs (issue 72's profile: 355 ms of 2.8 s). A command's
 *   process keeps its time zone, so the plugin reads it once.
 * - it reads the process's locale with an Intl.DateTimeFormat at the first date cron-parser makes, which pages in ICU's
 *   date data (~8 MB of RSS, issue 72). cron-parser never formats with it (it reads fields, does arithmetic and writes
 *   ISO strings); the plugin reads the same default locale (ICU's, from the environment) from Intl.PluralRules, whose
 *   data is small.
 */
const LUXON_PATCHES: readonly { what: string; from: string; to: string }[] = [
  {
    what: "its zone",
    from: "get name() {\n    return new Intl.DateTimeFormat().resolvedOptions().timeZone;\n  }",
    to: "get name() {\n    return (this.systemZoneName ??= new Intl.DateTimeFormat().resolvedOptions().timeZone);\n  }",
  },
  {
    what: "its locale",
    from: "sysLocaleCache = new Intl.DateTimeFormat().resolvedOptions().locale;",
    to: "sysLocaleCache = new Intl.PluralRules().resolvedOptions().locale;",
  },
];
const luxonPatches: Plugin = {
  name: "luxon-patches",
  setup(b) {
    b.onLoad({ filter: /luxon[\\/]build[\\/](node[\\/]luxon\.js|es6[\\/]luxon\.mjs)$/ }, (args) => {
      let source = readFileSync(args.path, "utf8");
      for (const { what, from, to } of LUXON_PATCHES) {
        if (!source.includes(from))
          throw new Error(`${args.path} no longer reads ${what} as expected: update hack/build-plugin.ts`);
        source = source.replace(from, to);
      }
      return { contents: source, loader: "js" };
    });
  },
};

/**
 * prom-client and winston, replaced by the shims of hack/plugin-shims/: the runtime's metrics (which the plugin does
 * not serve) and its logger's formats (a logger the plugin never creates) cost every command ~17 MB of RSS and ~90 ms
 * to load (issue 72, bench/results/2026-11-28-issue72.analysis.md).
 */
const SHIMS: Record<string, string> = {
  "prom-client": join(ROOT, "hack/plugin-shims/prom-client.ts"),
  winston: join(ROOT, "hack/plugin-shims/winston.ts"),
};
const pluginShims: Plugin = {
  name: "plugin-shims",
  setup(b) {
    b.onResolve({ filter: /^(prom-client|winston)$/ }, (args) => ({ path: SHIMS[args.path]! }));
  },
};

/**
 * Node's builtins, required rather than imported in the ES module bundle: an `import` of a builtin builds its ES
 * module facade, which reads every export, and the lazy ones load what they hide (node:http's load undici, 745 KB of
 * source: ~7 MB of RSS and ~20 ms at every start, issue 72). The bundle's banner gives it `require`.
 */
const builtinsByRequire: Plugin = {
  name: "builtins-by-require",
  setup(b) {
    b.onResolve({ filter: /^node:/ }, (args) =>
      args.kind === "import-statement" && b.initialOptions.format === "esm"
        ? { path: args.path, namespace: "builtin-by-require" }
        : { path: args.path, external: true },
    );
    b.onLoad({ filter: /.*/, namespace: "builtin-by-require" }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: "js",
    }));
  },
};

type Layout = { format: "esm"; outdir: string } | { format: "esm" | "cjs"; outfile: string };

/**
 * No compile job off the main thread: Node 24's process.exit can deadlock while one waits for a collection only the
 * exiting main thread could make (nodejs/node#54918, #64274). The one-file bundle's `#!` line and the
 * executable's execArgv carry them; the launcher passes the same (cmd/kubectl-cron/kubectl-cron).
 */
const EXIT_SAFE_FLAGS = ["--no-maglev", "--no-concurrent-sparkplug"] as const;

async function bundle(layout: Layout): Promise<string[]> {
  const esm = layout.format === "esm";
  // The dashboard's page, bundled for the browser, rides inside the plugin (cmd/kubectl-cron/dashboard/assets.ts).
  const { inputs: pageInputs, ...page } = await bundlePage();
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { "kubectl-cron": ENTRY },
    ...("outdir" in layout ? { outdir: layout.outdir, splitting: true, outExtension: { ".js": ".mjs" } } : {}),
    ...("outfile" in layout ? { outfile: layout.outfile } : {}),
    bundle: true,
    platform: "node",
    target: "node24",
    format: layout.format,
    // Strings, which esbuild inlines where they are used (the dashboard's own chunk): an object would become a module
    // of the chunk every command loads.
    define: {
      "import.meta.main": "false",
      DASHBOARD_SCRIPT: JSON.stringify(page.script),
      DASHBOARD_STYLE: JSON.stringify(page.style),
    },
    // Only the TypeScript run bundles the page on start; the built plugin carries it.
    external: ["esbuild"],
    // Node's builtins for the CommonJS packages bundled into an ES module (yaml, winston's dependencies, ...).
    banner: {
      js: esm
        ? `#!/usr/bin/env -S node ${EXIT_SAFE_FLAGS.join(" ")}\nimport { createRequire as __createRequire } from "node:module";\nconst require = __createRequire(import.meta.url);`
        : "",
    },
    plugins: [bundleLazyRequires, pluginShims, builtinsByRequire, luxonPatches],
    metafile: true,
    legalComments: "none",
    minifySyntax: true,
    minifyWhitespace: true,
    logLevel: "warning",
  });
  return [...Object.keys(result.metafile.inputs), ...pageInputs];
}

/** The project's files the bundle was built from, and package-lock.json (its dependencies' versions). */
function projectInputs(inputs: readonly string[]): string[] {
  return ["package-lock.json", ...inputs.filter((i) => !i.startsWith("node_modules/") && !i.includes(":"))].sort();
}

/**
 * bin/plugin/: the split bundle the launcher runs (kubectl-cron.mjs and its chunks, and `inputs`); and
 * bin/kubectl-cron.mjs: the same in one file, for a Node 24 without the project.
 */
async function buildBundle(outDir: string): Promise<void> {
  const dir = join(outDir, "plugin");
  const tmp = `${dir}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  const inputs = await bundle({ format: "esm", outdir: tmp });
  chmodSync(join(tmp, "kubectl-cron.mjs"), 0o755);
  writeFileSync(join(tmp, "inputs"), projectInputs(inputs).join("\n") + "\n");
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  console.log(
    `${relative(process.cwd(), dir)}/kubectl-cron.mjs: ${size(join(dir, "kubectl-cron.mjs"))} (and its chunks)`,
  );
  const single = join(outDir, "kubectl-cron.mjs");
  await bundle({ format: "esm", outfile: single });
  chmodSync(single, 0o755);
  console.log(`${relative(process.cwd(), single)}: ${size(single)} (one file)`);
}

const size = (file: string) => `${(statSync(file).size / 1e6).toFixed(1)} MB`;

async function buildSEA(outDir: string): Promise<void> {
  const work = join(outDir, "sea");
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const main = join(work, "kubectl-cron.cjs");
  await bundle({ format: "cjs", outfile: main });
  const blob = join(work, "kubectl-cron.blob");
  const config = join(work, "sea-config.json");
  writeFileSync(
    config,
    JSON.stringify(
      { main, output: blob, disableExperimentalSEAWarning: true, useCodeCache: true, execArgv: [...EXIT_SAFE_FLAGS] },
      null,
      2,
    ),
  );
  // The code cache is made under the flags the executable runs with (V8 rejects, with a warning, one made under others).
  execFileSync(process.execPath, [...EXIT_SAFE_FLAGS, "--experimental-sea-config", config], { stdio: "pipe" });
  const exe = join(outDir, "kubectl-cron");
  const tmp = `${exe}.tmp`;
  copyFileSync(process.execPath, tmp);
  chmodSync(tmp, 0o755);
  // The npm package's node carries its symbol tables (about 18 MB), which running it does not need (the dynamic
  // symbols that native addons link against stay).
  try {
    execFileSync("strip", ["--strip-all", tmp], { stdio: "ignore" });
  } catch {
    console.warn("strip (binutils) failed or is missing: the executable keeps Node's symbol tables");
  }
  execFileSync(
    process.execPath,
    [
      join(ROOT, "node_modules", "postject", "dist", "cli.js"),
      tmp,
      "NODE_SEA_BLOB",
      blob,
      "--sentinel-fuse",
      "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2",
    ],
    // postject warns about the ELF notes of every build of node it injects into: its output shows on failure only.
    { stdio: "pipe" },
  );
  copyFileSync(tmp, exe);
  rmSync(tmp);
  chmodSync(exe, 0o755);
  rmSync(work, { recursive: true, force: true });
  console.log(`${relative(process.cwd(), exe)}: ${size(exe)} (single executable)`);
}

const { values, positionals } = parseArgs({
  options: { "out-dir": { type: "string", default: join(ROOT, "bin") } },
  allowPositionals: true,
});
const outDir = resolve(values["out-dir"]);
mkdirSync(outDir, { recursive: true });
const what = positionals.length > 0 ? positionals : ["bundle"];
for (const w of what) {
  if (w === "bundle") await buildBundle(outDir);
  else if (w === "sea") await buildSEA(outDir);
  else throw new Error(`unknown artifact ${w}: want bundle or sea`);
}
