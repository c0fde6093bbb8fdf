// The CronJob benchmark: ours vs the built-in controller, per N, on fresh control planes.
//
//   make bench                        # N=1000, MINUTES=3, NAMESPACES=4
//   make bench N=100,1000 MINUTES=3
//   node_modules/.bin/node bench/run.ts --n=50 --minutes=2
//
// See bench/README.md. Never part of `make test`.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { availableParallelism, cpus, release, totalmem } from "node:os";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { assetsDir, PROJECT_ROOT } from "../envtest/index.ts";
import {
  builtinDriver,
  calibrate,
  END_AFTER_LAST_SLOT_MS,
  oursDriver,
  runControllerPhase,
  type Settings,
} from "./lib/phases.ts";
import { type Machine, type NResult, type Report, writeReport } from "./lib/report.ts";
import { HISTORY_LIMIT } from "./lib/workload.ts";

const PHASES = ["calibration", "ours", "builtin"] as const;
type Phase = (typeof PHASES)[number];

const USAGE = `Usage: node_modules/.bin/node bench/run.ts [flags]   (or: make bench N=... MINUTES=...)

Flags (environment variable in brackets; a flag wins over its variable):
  --n LIST            CronJob counts, comma-separated (N, default 1000)
  --minutes M         measured minute slots per run (MINUTES, default 3)
  --namespaces K      namespaces the CronJobs are spread over (NAMESPACES, default 4)
  --out FILE          report path (OUT, default bench/results/<YYYY-MM-DD>.md)
  --workers W         ours: --max-concurrent-reconciles (WORKERS, default 16 = the operator's default)
  --in-flight F       calibration: creates in flight (IN_FLIGHT, default 48)
  --finish-after S    the finisher marks Jobs Complete S seconds after they appear (FINISH_AFTER, default 5)
  --phases LIST       any of calibration,ours,builtin (PHASES, default all)
  --render            only re-render <out>.md, .svg and .png from <out>.json (after editing the report code)
  --update            keep the results already in <out>.json and replace only what this run measures
                      (UPDATE=1), e.g. to redo one phase: PHASES=builtin N=1000 UPDATE=1 make bench
Environment only:
  BUILTIN_ARGS        extra kube-controller-manager flags, space-separated (e.g. "--kube-api-qps=500 --kube-api-burst=1000")
  OPERATOR_NODE_ARGS  extra node flags for the operator, space-separated (e.g. "--cpu-prof --cpu-prof-dir=bench/work/prof")
`;

function positiveInt(name: string, v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v.trim()) || n < 1) throw new Error(`${name}: expected a positive integer, got "${v}"`);
  return n;
}

function localDate(d = new Date()): string {
  const p = (x: number) => String(x).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

function firstLine(bin: string, args: string[]): string {
  try {
    return execFileSync(bin, args, { encoding: "utf8" }).split("\n")[0]?.trim() ?? "?";
  } catch {
    return "?";
  }
}

function machine(): Machine {
  const assets = assetsDir();
  return {
    nproc: availableParallelism(),
    cpuModel: cpus()[0]?.model.trim() ?? "?",
    memGiB: totalmem() / 2 ** 30,
    kernel: release(),
    node: process.version,
    kubeApiserver: firstLine(join(assets, "kube-apiserver"), ["--version"]).replace(/^Kubernetes/, "kube-apiserver"),
    etcd: firstLine(join(assets, "etcd"), ["--version"]).replace(/Version: /, ""),
  };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      n: { type: "string" },
      minutes: { type: "string" },
      namespaces: { type: "string" },
      out: { type: "string" },
      workers: { type: "string" },
      "in-flight": { type: "string" },
      "finish-after": { type: "string" },
      phases: { type: "string" },
      update: { type: "boolean" },
      render: { type: "boolean" },
      help: { type: "boolean" },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const env = process.env;
  const pick = (flag: string | undefined, name: string, def: string) => (flag ?? env[name] ?? "").trim() || def;
  const ns = pick(values.n, "N", "1000")
    .split(",")
    .map((x) => positiveInt("N", x));
  const minutes = positiveInt("MINUTES", pick(values.minutes, "MINUTES", "3"));
  const namespaces = positiveInt("NAMESPACES", pick(values.namespaces, "NAMESPACES", "4"));
  const workers = positiveInt("WORKERS", pick(values.workers, "WORKERS", "16"));
  const inFlight = positiveInt("IN_FLIGHT", pick(values["in-flight"], "IN_FLIGHT", "48"));
  const finishAfterS = positiveInt("FINISH_AFTER", pick(values["finish-after"], "FINISH_AFTER", "5"));
  const phaseList = pick(values.phases, "PHASES", PHASES.join(",")).split(",");
  for (const p of phaseList) if (!(PHASES as readonly string[]).includes(p)) throw new Error(`unknown phase "${p}"`);
  const phases = new Set(phaseList as Phase[]);
  const date = localDate();
  const out = resolve(pick(values.out, "OUT", join(PROJECT_ROOT, "bench", "results", `${date}.md`)));
  const log = (msg: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} bench: ${msg}\n`);
  const jsonFile = out.replace(/\.md$/, "") + ".json";
  if (values.render) {
    const files = await writeReport(JSON.parse(readFileSync(jsonFile, "utf8")) as Report, out);
    log(`wrote ${files.map((f) => relative(process.cwd(), f)).join(", ")}`);
    return 0;
  }
  const split = (v: string | undefined) => (v ?? "").split(/\s+/).filter(Boolean);
  const builtinArgs = split(env.BUILTIN_ARGS);
  const operatorNodeArgs = split(env.OPERATOR_NODE_ARGS);

  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const workDir = join(PROJECT_ROOT, "bench", "work", stamp);
  mkdirSync(workDir, { recursive: true });
  const settings: Settings = {
    minutes,
    namespaces,
    workers,
    inFlight,
    finishAfterMs: finishAfterS * 1000,
    builtinArgs,
    operatorNodeArgs,
    workDir,
    log,
  };

  // Rough duration per controller phase: ~30 s to the next minute boundary, ~1 min from the cold start to
  // the first measured slot, M − 1 more minutes, 50 s of tail, ~15 s of control plane start and stop.
  const perPhaseMin = 0.5 + minutes + END_AFTER_LAST_SLOT_MS / 60_000 + 0.25;
  const controllerPhases = (phases.has("ours") ? 1 : 0) + (phases.has("builtin") ? 1 : 0);
  log(
    `N=${ns.join(",")} MINUTES=${minutes} NAMESPACES=${namespaces}: about ${Math.ceil(ns.length * controllerPhases * perPhaseMin)} min; ` +
      `logs in ${relative(process.cwd(), workDir)}, report ${relative(process.cwd(), out)}`,
  );

  const cmdArgs = [`--n=${ns.join(",")}`, `--minutes=${minutes}`, `--namespaces=${namespaces}`];
  if (workers !== 16) cmdArgs.push(`--workers=${workers}`);
  if (phases.size !== PHASES.length) cmdArgs.push(`--phases=${[...phases].join(",")}`);
  if (values.update ?? ["1", "true"].includes(env.UPDATE ?? "")) cmdArgs.push("--update");
  const envPrefix = [
    builtinArgs.length ? `BUILTIN_ARGS='${builtinArgs.join(" ")}'` : "",
    operatorNodeArgs.length ? `OPERATOR_NODE_ARGS='${operatorNodeArgs.join(" ")}'` : "",
    phases.size !== PHASES.length ? `PHASES=${[...phases].join(",")}` : "",
    cmdArgs.includes("--update") ? "UPDATE=1" : "",
  ]
    .filter(Boolean)
    .join(" ");
  const update = values.update ?? ["1", "true"].includes(env.UPDATE ?? "");
  const report: Report = {
    date,
    startedAt: new Date().toISOString(),
    command:
      `${envPrefix ? `${envPrefix} ` : ""}make bench N=${ns.join(",")} MINUTES=${minutes} NAMESPACES=${namespaces}` +
      `   # = node_modules/.bin/node bench/run.ts ${cmdArgs.join(" ")}`,
    settings: {
      ns,
      minutes,
      namespaces,
      workers,
      inFlight,
      finishAfterS,
      historyLimit: HISTORY_LIMIT,
      builtinArgs,
      operatorNodeArgs,
    },
    machine: machine(),
    commands: {},
    results: [],
  };

  if (update && existsSync(jsonFile)) {
    const prev = JSON.parse(readFileSync(jsonFile, "utf8")) as Report;
    if (prev.settings.minutes !== minutes || prev.settings.namespaces !== namespaces) {
      throw new Error(`--update: ${jsonFile} was measured with other MINUTES/NAMESPACES`);
    }
    report.startedAt = prev.startedAt;
    report.command = `${prev.command}\n${report.command}`;
    report.commands = prev.commands;
    report.results = prev.results;
    report.settings.ns = [...new Set([...prev.settings.ns, ...ns])].sort((a, b) => a - b);
    log(`--update: keeping the results in ${relative(process.cwd(), jsonFile)}`);
  }

  // Phases measured now replace their earlier command lines; the first N of this run names them.
  if (phases.has("ours")) delete report.commands.ours;
  if (phases.has("builtin")) delete report.commands.builtin;
  let failures = 0;
  const save = async () => {
    const files = await writeReport(report, out);
    log(`wrote ${files.map((f) => relative(process.cwd(), f)).join(", ")}`);
  };
  for (const n of ns) {
    let res: NResult | undefined = report.results.find((r) => r.n === n);
    if (!res) {
      res = { n };
      report.results.push(res);
      report.results.sort((a, b) => a.n - b.n);
    }
    if (phases.has("calibration")) {
      log(`[N=${n} calibration] ${n} raw Job creates, ${inFlight} in flight`);
      res.calibration = await calibrate(n, settings);
      if (res.calibration.error) failures++;
      log(
        `[N=${n} calibration] ${res.calibration.error ?? `${res.calibration.perSecond.toFixed(0)} creates/s (${res.calibration.seconds.toFixed(2)} s)`}`,
      );
    }
    if (phases.has("ours")) {
      res.ours = await runControllerPhase(n, oursDriver, settings);
      report.commands.ours ??= res.ours.commandLine;
      if (!res.ours.ok) failures++;
      await save();
    }
    if (phases.has("builtin")) {
      res.builtin = await runControllerPhase(n, builtinDriver, settings);
      report.commands.builtin ??= res.builtin.commandLine;
      if (!res.builtin.ok) failures++;
      if (n !== ns.at(-1)) await save();
    }
  }
  report.finishedAt = new Date().toISOString();
  await save();
  return failures ? 1 : 0;
}

process.exitCode = await main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  return 2;
});
