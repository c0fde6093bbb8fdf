// The kubectl plugin's benchmark (make bench-plugin): how fast `kubectl cron` starts and answers (why, next, list),
// built ahead of time or not, beside kubectl itself on the same objects. Never part of `make test`.
//
//   make bench-plugin                              # N=1000,5000, 5 runs each
//   node_modules/.bin/node bench/plugin.ts --n=1000 --runs=3 --out=/tmp/plugin.md
//   node_modules/.bin/node bench/plugin.ts --n=1000,5000 --only='why -A.*launcher'   # only some rows
//   make bench-plugin N=5000 SHAPE=incident ONLY=launcher   # why/list -A in issue 79's incident (bench/lib/fleet.ts)
//
// Each command runs `runs` times after one untimed run (which fills Node's compile cache for the split bundle),
// under /usr/bin/time: the median wall time, CPU time (user + sys, children included) and maximum RSS. The
// cluster is a real kube-apiserver (envtest/, 1.20) with the CRDs, no controller: N CronJobs of ours spread
// over 4 namespaces, as bench/run.ts creates them, never run (`why` reads them, their Jobs, Events and the
// operator's Pods and Lease, and explains each). What runs:
//   before      node --import cmd/kubectl-cron/main.ts cmd/kubectl-cron/cli.ts: the launcher as it was
//               (TypeScript, every module loaded at start; main.ts is no entry point of its own)
//   ts          node cmd/kubectl-cron/cli.ts: the launcher's fallback now (TypeScript, modules on demand)
//   launcher    cmd/kubectl-cron/kubectl-cron with a fresh bin/plugin/ (make plugin): the split bundle
//   one-file    node bin/kubectl-cron.mjs (make plugin)
//   sea         bin/kubectl-cron (make plugin-sea): the single executable
//   kubectl     the same question put to kubectl: `kubectl version --client`, `kubectl __complete ""`,
//               `kubectl get cronjobs.batch.tutorial.kubebuilder.io NAME` and `... -A`
//   baseline    with --baseline=DIR: DIR/cmd/kubectl-cron/kubectl-cron, another commit's checkout with its plugin
//               built there (make plugin, its own node_modules); the -A rows then run every variant in turn, run
//               by run (an A/B in one run: both meet the same machine)
// The manager's start (`--help`) is measured too: cmd/main.ts (TypeScript), dist/cmd/main.js (make build) and
// an esbuild bundle of cmd/main.ts. The report gives the median and every run.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { CronJobResource } from "../api/v1/index.ts";
import { PROJECT_ROOT, TestEnv } from "../envtest/index.ts";
import { Client } from "../runtime/client.ts";
import { forEachLimit } from "./lib/pool.ts";
import { createFleet, describeFleet, fleetShape } from "./lib/fleet.ts";
import { createNamespaces, ourCronJob, placement } from "./lib/workload.ts";

const { values } = parseArgs({
  options: {
    n: { type: "string", default: process.env.N ?? "1000,5000" },
    runs: { type: "string", default: process.env.RUNS ?? "5" },
    out: { type: "string", default: process.env.OUT },
    /** Only the rows whose `command variant` matches this regular expression (e.g. `why -A.*launcher`). */
    only: { type: "string", default: process.env.ONLY },
    /** Another commit's checkout, its plugin built: the `baseline` variant. */
    baseline: { type: "string", default: process.env.BASELINE },
    /**
     * The cluster's CronJobs: plain (N every-minute CronJobs over 4 namespaces, never run, no operator), or
     * incident (bench/lib/fleet.ts: the dashboard's fleet, its history and groups, the operator installed and stopped).
     */
    shape: { type: "string", default: process.env.SHAPE || "plain" },
  },
});
// A relative BASELINE is the caller's (the runs start from other directories).
if (values.baseline) values.baseline = resolve(values.baseline);
const only = values.only ? new RegExp(values.only) : undefined;
const wanted = (what: string, variant: string) => !only || only.test(`${what} ${variant}`);
const NS = values.n.split(",").map((s) => Number(s.trim()));
const SHAPE = values.shape === "plain" ? "plain" : fleetShape(values.shape);
const RUNS = Number(values.runs);
const NAMESPACES = 4;
const NODE = process.execPath;
const CRD = "cronjobs.batch.tutorial.kubebuilder.io";
const root = (p: string) => join(PROJECT_ROOT, p);

interface Sample {
  wall: number;
  cpu: number;
  rssMB: number;
  code: number | null;
  bytes: number;
  stderr: string;
}

async function once(cmd: string[], env: NodeJS.ProcessEnv): Promise<Sample> {
  const timeFile = join(work, "time");
  const started = performance.now();
  const child = spawn("/usr/bin/time", ["-q", "-f", "%U %S %M", "-o", timeFile, ...cmd], {
    cwd: work,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let bytes = 0;
  let stderr = "";
  child.stdout.on("data", (b: Buffer) => (bytes += b.length));
  child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
  const code = await new Promise<number | null>((r) => child.on("close", (c) => r(c)));
  const wall = (performance.now() - started) / 1000;
  const [user, sys, rss] = readFileSync(timeFile, "utf8").trim().split("\n").at(-1)!.split(" ").map(Number);
  return { wall, cpu: user! + sys!, rssMB: rss! / 1024, code, bytes, stderr };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Row {
  what: string;
  variant: string;
  wall: number;
  cpu: number;
  rssMB: number;
  code: number | null;
  bytes: number;
  /** Every timed run's wall time (s) and max RSS (MB), in order. */
  walls: number[];
  rsses: number[];
}

/** A row of `samples` (the median of each figure, and every run's wall time and RSS). */
function rowOf(what: string, variant: string, samples: Sample[]): Row {
  const row = {
    what,
    variant,
    wall: median(samples.map((s) => s.wall)),
    cpu: median(samples.map((s) => s.cpu)),
    rssMB: median(samples.map((s) => s.rssMB)),
    code: samples[0]!.code,
    bytes: samples[0]!.bytes,
    walls: samples.map((s) => s.wall),
    rsses: samples.map((s) => s.rssMB),
  };
  console.log(
    `${what.padEnd(28)} ${variant.padEnd(9)} wall ${row.wall.toFixed(3)} s  cpu ${row.cpu.toFixed(2)} s  rss ${row.rssMB.toFixed(0)} MB  exit ${row.code}  ${row.bytes} B` +
      `  (every run: ${row.walls.map((w) => w.toFixed(2)).join(" ")} s; ${row.rsses.map((r) => r.toFixed(0)).join(" ")} MB)`,
  );
  return row;
}

/** `what` for every variant of `cmds`, one run of each in turn (after one untimed run each). */
async function alternated(what: string, cmds: [string, string[]][], env: NodeJS.ProcessEnv): Promise<Row[]> {
  const chosen = cmds.filter(([variant]) => wanted(what, variant));
  for (const [variant, cmd] of chosen) {
    const warm = await once(cmd, env);
    if (/^error: /m.test(warm.stderr) && variant !== "kubectl")
      throw new Error(`${variant} ${what}: ${warm.stderr.slice(0, 500)}`);
  }
  const samples = new Map<string, Sample[]>(chosen.map(([v]) => [v, []]));
  for (let i = 0; i < RUNS; i++) for (const [variant, cmd] of chosen) samples.get(variant)!.push(await once(cmd, env));
  return chosen.map(([variant]) => rowOf(what, variant, samples.get(variant)!));
}

async function measure(what: string, variant: string, cmd: string[], env: NodeJS.ProcessEnv): Promise<Row[]> {
  if (!wanted(what, variant)) return [];
  const warm = await once(cmd, env);
  if (/^error: /m.test(warm.stderr) && variant !== "kubectl" && what !== "usage error") {
    throw new Error(`${variant} ${what}: ${warm.stderr.slice(0, 500)}`);
  }
  const samples: Sample[] = [];
  for (let i = 0; i < RUNS; i++) samples.push(await once(cmd, env));
  return [rowOf(what, variant, samples)];
}

const PLUGIN: Record<string, string[]> = {
  before: [
    NODE,
    "--no-warnings=ExperimentalWarning",
    "--import",
    root("cmd/kubectl-cron/main.ts"),
    root("cmd/kubectl-cron/cli.ts"),
  ],
  ts: [NODE, "--no-warnings=ExperimentalWarning", root("cmd/kubectl-cron/cli.ts")],
  launcher: [root("cmd/kubectl-cron/kubectl-cron")],
  "one-file": [NODE, root("bin/kubectl-cron.mjs")],
  sea: [root("bin/kubectl-cron")],
  ...(values.baseline ? { baseline: [join(values.baseline, "cmd/kubectl-cron/kubectl-cron")] } : {}),
};

function checkBuilt(): void {
  const files = [
    "bin/plugin/kubectl-cron.mjs",
    "bin/kubectl-cron.mjs",
    ...(!only || only.test("sea") ? ["bin/kubectl-cron"] : []),
  ];
  for (const f of files) {
    if (!existsSync(root(f))) throw new Error(`${f} is missing: make plugin plugin-sea`);
  }
  // The launcher runs the bundle only while it is fresh: say so rather than measure the TypeScript twice.
  const stale = execFileSync(
    "sh",
    ["-c", "find $(cat bin/plugin/inputs) -newer bin/plugin/kubectl-cron.mjs -print -quit"],
    { cwd: PROJECT_ROOT, encoding: "utf8" },
  ).trim();
  if (stale) throw new Error(`bin/plugin/ is older than ${stale}: make plugin`);
  if (values.baseline) {
    const old = execFileSync(
      "sh",
      ["-c", "find $(cat bin/plugin/inputs) -newer bin/plugin/kubectl-cron.mjs -print -quit"],
      { cwd: values.baseline, encoding: "utf8" },
    ).trim();
    if (old) throw new Error(`${values.baseline}: bin/plugin/ is older than ${old}: make plugin there`);
  }
}

const commitOf = (dir: string) =>
  execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: dir, encoding: "utf8" }).trim();

const work = mkdtempSync(join(tmpdir(), "bench-plugin-"));
const loadStart = loadavg()
  .map((l) => l.toFixed(2))
  .join(" ");
const rows: Row[] = [];
const add = (r: Row[]) => rows.push(...r);
const baseEnv = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: work, KUBECONFIG: join(work, "none") };

async function startCommands(): Promise<void> {
  for (const [variant, cmd] of Object.entries(PLUGIN)) {
    add(await measure("--help", variant, [...cmd, "--help"], baseEnv));
    add(await measure("__complete (a command)", variant, [...cmd, "__complete", "w"], baseEnv));
    add(await measure("usage error", variant, [...cmd, "bogus"], baseEnv));
  }
  add(await measure("--help", "kubectl", ["kubectl", "version", "--client"], baseEnv));
  add(await measure("__complete (a command)", "kubectl", ["kubectl", "__complete", "g"], baseEnv));
}

/**
 * The manager: `--help` (flags only: cmd/main.ts imports run.ts after parsing them) and importing cmd/run.ts,
 * which loads everything the manager runs with; from TypeScript, from dist/ (make build) and from an esbuild
 * bundle split like the plugin's (written under bin/, where node_modules resolves: its createRequire("yaml")).
 */
async function managerStart(): Promise<void> {
  const out = root("bin/manager-bench");
  rmSync(out, { recursive: true, force: true });
  await build({
    absWorkingDir: PROJECT_ROOT,
    entryPoints: [root("cmd/main.ts"), root("cmd/run.ts")],
    bundle: true,
    splitting: true,
    platform: "node",
    target: "node24",
    format: "esm",
    outdir: out,
    outExtension: { ".js": ".mjs" },
    banner: { js: 'import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);' },
    logLevel: "error",
  });
  const importing = (file: string) => [NODE, "--input-type=module", "-e", `await import(${JSON.stringify(file)})`];
  const variants: [string, string, string][] = [
    ["ts", root("cmd/main.ts"), root("cmd/run.ts")],
    ["dist", root("dist/cmd/main.js"), root("dist/cmd/run.js")],
    ["bundle", join(out, "main.mjs"), join(out, "run.mjs")],
  ];
  try {
    for (const [variant, main, run] of variants) {
      if (!existsSync(main)) continue;
      add(await measure("manager --help", variant, [NODE, main, "--help"], baseEnv));
      add(await measure("manager: import cmd/run", variant, importing(run), baseEnv));
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** `why -A` and `list -A` in every variant (`label`: the fleet's), beside what kubectl answers with one LIST. */
async function everyCronJob(label: string, env: NodeJS.ProcessEnv): Promise<void> {
  for (const sub of ["why", "list"]) {
    const what = `${sub} -A (${label})`;
    const cmds = Object.entries(PLUGIN).map(([variant, cmd]): [string, string[]] => [variant, [...cmd, sub, "-A"]]);
    // With a baseline, the variants in turn, run by run; else each variant's runs together, as before.
    if (values.baseline) add(await alternated(what, cmds, env));
    else for (const [variant, cmd] of cmds) add(await measure(what, variant, cmd, env));
    add(await measure(what, "kubectl", ["kubectl", "get", CRD, "-A"], env));
  }
}

/** What the incident's fleets were, for the report. */
const fleets: string[] = [];

/**
 * The incident (SHAPE=incident), at each N on a control plane of its own: `why -A` and `list -A` over the
 * dashboard's fleet with the operator installed and stopped, beside kubectl's one LIST.
 */
async function incidentCommands(): Promise<void> {
  for (const n of NS) {
    const env = await TestEnv.start({ verbose: false });
    try {
      const client = new Client(env.kubeConfig, { userAgent: "bench", maxSockets: 64 });
      const made = await createFleet(client, n, "incident", env.kubeconfigPath);
      client.close();
      fleets.push(`N = ${n}: ${describeFleet("incident", n, made.jobs)}; made in ${made.seconds.toFixed(1)} s`);
      console.log(fleets.at(-1));
      await everyCronJob(`N=${n}, incident`, { ...baseEnv, KUBECONFIG: env.kubeconfigPath });
    } finally {
      await env.stop();
    }
  }
}

async function clusterCommands(): Promise<void> {
  const env = await TestEnv.start({ verbose: false });
  try {
    const client = new Client(env.kubeConfig, { userAgent: "bench", maxSockets: 64 });
    await createNamespaces(client, NAMESPACES);
    const clusterEnv = { ...baseEnv, KUBECONFIG: env.kubeconfigPath };
    let created = 0;
    for (const n of NS) {
      const started = performance.now();
      await forEachLimit(n - created, 48, async (j) => {
        const p = placement(created + j, NAMESPACES);
        await client.create(CronJobResource, ourCronJob(p.namespace, p.name));
      });
      created = n;
      console.log(`${n} CronJobs in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      const one = placement(0, NAMESPACES);
      const getOne = ["kubectl", "get", CRD, one.name, "-n", one.namespace];
      if (n === NS[0]) {
        // One CronJob: what kubectl answers with one GET.
        for (const sub of ["why", "next"]) {
          for (const [variant, cmd] of Object.entries(PLUGIN)) {
            add(await measure(`${sub} NAME`, variant, [...cmd, sub, one.name, "-n", one.namespace], clusterEnv));
          }
          add(await measure(`${sub} NAME`, "kubectl", getOne, clusterEnv));
        }
      }
      await everyCronJob(`N=${n}`, clusterEnv);
    }
  } finally {
    await env.stop();
  }
}

function report(): string {
  const lines = [
    `# kubectl cron: start and answers (bench/plugin.ts)`,
    ``,
    `${new Date().toISOString()} at ${commitOf(PROJECT_ROOT)}${values.baseline ? ` (baseline: ${commitOf(values.baseline)}, ${values.baseline})` : ""}; ` +
      `${cpus().length} × ${cpus()[0]?.model ?? "?"}; load average ${loadStart} at the start, ${loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")} at the end; Node ${process.version}; median of ${RUNS} runs after one untimed run, and every run` +
      `${values.baseline ? "; the -A rows run every variant in turn, run by run" : ""}.`,
    ``,
    ...(fleets.length ? [`The fleets (SHAPE=incident):`, ``, ...fleets.map((f) => `- ${f}`), ``] : []),
    `| command | variant | wall (s) | CPU user+sys (s) | max RSS (MB) | exit | stdout (bytes) | every run: wall (s) | every run: max RSS (MB) |`,
    `|---|---|--:|--:|--:|--:|--:|--:|--:|`,
    ...rows.map(
      (r) =>
        `| ${r.what} | ${r.variant} | ${r.wall.toFixed(3)} | ${r.cpu.toFixed(2)} | ${r.rssMB.toFixed(0)} | ${r.code} | ${r.bytes} | ` +
        `${r.walls.map((w) => w.toFixed(2)).join(", ")} | ${r.rsses.map((x) => x.toFixed(0)).join(", ")} |`,
    ),
  ];
  return lines.join("\n") + "\n";
}

try {
  checkBuilt();
  if (SHAPE === "incident") await incidentCommands();
  else {
    await startCommands();
    if (!only || only.test("manager")) await managerStart();
    await clusterCommands();
  }
  const text = report();
  process.stdout.write(`\n${text}`);
  if (values.out) {
    mkdirSync(join(values.out, ".."), { recursive: true });
    writeFileSync(values.out, text);
    console.log(`wrote ${relative(process.cwd(), values.out)}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
