// The CronJob benchmark: ours vs the built-in controller, per N, on fresh control planes.
//
//   make bench                        # N=1000, MINUTES=3, NAMESPACES=4, all four phases
//   make bench N=1000,5000,10000 MINUTES=3
//   node_modules/.bin/node bench/run.ts --n=50 --minutes=1 --out=/tmp/bench-smoke/smoke.md
//
// See bench/README.md. Never part of `make test`.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmdirSync } from "node:fs";
import { availableParallelism, cpus, release, totalmem } from "node:os";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { assetsDir, PROJECT_ROOT } from "../envtest/index.ts";
import { cgroupSupport, formatLimits, leftoverGroups, resolveLimits } from "./lib/cgroup.ts";
import {
  BUILTIN_TUNED_ARGS,
  builtinDefaultsDriver,
  builtinTunedDriver,
  calibrate,
  CGROUP_PREFIX,
  coldStartTimeoutMs,
  DRAIN_MAX_MS,
  deploymentNodeOptions,
  type Driver,
  END_AFTER_LAST_SLOT_MS,
  oursDriver,
  runControllerPhase,
  type Settings,
  v8HeapLimitMB,
} from "./lib/phases.ts";
import { loadavg } from "./lib/proc.ts";
import { type Machine, type NResult, type Report, writeReport } from "./lib/report.ts";
import { HISTORY_LIMIT } from "./lib/workload.ts";

const PHASES = ["calibration", "ours", "builtin", "builtin-tuned"] as const;
type Phase = (typeof PHASES)[number];
const DRIVERS: Record<Exclude<Phase, "calibration">, { driver: Driver; key: "ours" | "builtin" | "builtinTuned" }> = {
  ours: { driver: oursDriver, key: "ours" },
  builtin: { driver: builtinDefaultsDriver, key: "builtin" },
  "builtin-tuned": { driver: builtinTunedDriver, key: "builtinTuned" },
};

const USAGE = `Usage: node_modules/.bin/node bench/run.ts [flags]   (or: make bench N=... MINUTES=...)

Flags (environment variable in brackets; a flag wins over its variable):
  --n LIST            CronJob counts, comma-separated (N, default 1000)
  --minutes M         measured minute slots per run (MINUTES, default 3)
  --namespaces K      namespaces the CronJobs are spread over (NAMESPACES, default 4)
  --groups G          ours only: every fifth CronJob in one of G ConcurrencyGroups (GROUPS, default 0), whose limit
                      never holds a run: what a group costs each run
  --calendars C       ours only: another fifth of the CronJobs each name one of C ExclusionCalendars of their namespace
                      and have a window of their own (CALENDARS, default 0); no window holds a slot during the run
                      (whole days in the past year, the 1st of a month six months away): what exclusions cost each run
  --out FILE          report path (OUT, default bench/results/<YYYY-MM-DD>.md)
  --workers W         ours: --max-concurrent-reconciles (WORKERS, default 16 = the operator's default)
  --in-flight F       calibration: creates in flight (IN_FLIGHT, default 48)
  --finish-after S    the finisher marks Jobs Complete S seconds after they appear (FINISH_AFTER, default 30: as long as
                      real Jobs run, so a run's start and end are two moments, as they are in a cluster)
  --phases LIST       any of calibration,ours,builtin,builtin-tuned (PHASES, default all four):
                      builtin = kube-controller-manager as it ships (client QPS 20, burst 30, 5 workers),
                      builtin-tuned = the fully tuned built-in, with BUILTIN_TUNED_ARGS (the fair comparison,
                      the anchor the report compares ours with)
  --operator-limits L ours runs in a cgroup with these limits (OPERATOR_LIMITS): "deployment" (default: the
                      resources.limits of config/manager/manager.yaml), "none", or e.g. "cpu=1,memory=512Mi"
                      (keys not given keep the Deployment's; "cpu=none" lifts one)
  --apiserver-profile a 10 s CPU profile of kube-apiserver from the first measured slot of ours and of the fully
                      tuned built-in (APISERVER_PROFILE=1): <out>.apiserver-<phase>.pprof, and its
                      \`go tool pprof -top -cum\` in <out>.apiserver-<phase>.top.txt when a Go toolchain is found
  --shards LIST       ours as K active replicas (--sharding), each in a cgroup of its own with the same limits, per
                      K in the list (SHARDS, e.g. 1,2,4; default 1); K = 1 is the ours phase. After the measured
                      window a sharded phase adds a shard, then SIGKILLs one just before a slot (bench/lib/shards.ts)
  --render            only re-render <out>.md, .svg and .png from <out>.json (after editing the report code)
  --update            keep the results already in <out>.json and replace only what this run measures
                      (UPDATE=1), e.g. to redo one phase: PHASES=builtin N=1000 UPDATE=1 make bench
Environment only:
  BUILTIN_ARGS        extra kube-controller-manager flags for both built-in configurations, space-separated
  BUILTIN_TUNED_ARGS  the fully tuned built-in's flags (default "${BUILTIN_TUNED_ARGS.join(" ")}"; a flag
                      its kube-controller-manager lacks, --concurrent-cron-job-syncs before 1.28, is not passed)
  OPERATOR_NODE_ARGS  extra node flags for the operator, space-separated (e.g. "--cpu-prof --cpu-prof-dir=bench/work/prof")
  OPERATOR_DIST       ours runs <OPERATOR_DIST>/cmd/main.js instead of dist/cmd/main.js (another commit's build)
  JITTER              ours only: every CronJob gets spec.jitter (a Go duration shorter than a minute, e.g. 59s); the
                      skew is then counted from each run's own start (its slot plus its offset)
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
  const kcm = join(assets, "kube-controller-manager");
  return {
    nproc: availableParallelism(),
    cpuModel: cpus()[0]?.model.trim() ?? "?",
    memGiB: totalmem() / 2 ** 30,
    kernel: release(),
    node: process.version,
    kubeApiserver: firstLine(join(assets, "kube-apiserver"), ["--version"]).replace(/^Kubernetes/, "kube-apiserver"),
    etcd: firstLine(join(assets, "etcd"), ["--version"]).replace(/Version: /, ""),
    ...(existsSync(kcm)
      ? { kubeControllerManager: firstLine(kcm, ["--version"]).replace(/^Kubernetes/, "kube-controller-manager") }
      : {}),
  };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      n: { type: "string" },
      minutes: { type: "string" },
      namespaces: { type: "string" },
      groups: { type: "string" },
      calendars: { type: "string" },
      out: { type: "string" },
      workers: { type: "string" },
      "in-flight": { type: "string" },
      "finish-after": { type: "string" },
      phases: { type: "string" },
      "operator-limits": { type: "string" },
      shards: { type: "string" },
      update: { type: "boolean" },
      "apiserver-profile": { type: "boolean" },
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
  const groups = Number(pick(values.groups, "GROUPS", "0"));
  if (!Number.isInteger(groups) || groups < 0) throw new Error(`GROUPS must be a whole number ≥ 0, not ${groups}`);
  const calendars = Number(pick(values.calendars, "CALENDARS", "0"));
  if (!Number.isInteger(calendars) || calendars < 0)
    throw new Error(`CALENDARS must be a whole number ≥ 0, not ${calendars}`);
  const workers = positiveInt("WORKERS", pick(values.workers, "WORKERS", "16"));
  const inFlight = positiveInt("IN_FLIGHT", pick(values["in-flight"], "IN_FLIGHT", "48"));
  const finishAfterS = positiveInt("FINISH_AFTER", pick(values["finish-after"], "FINISH_AFTER", "30"));
  const phaseList = pick(values.phases, "PHASES", PHASES.join(",")).split(",");
  for (const p of phaseList) if (!(PHASES as readonly string[]).includes(p)) throw new Error(`unknown phase "${p}"`);
  const phases = new Set(phaseList as Phase[]);
  const shardCounts = pick(values.shards, "SHARDS", "1")
    .split(",")
    .map((x) => positiveInt("SHARDS", x));
  // K = 1 is the ours phase itself; without 1 in the list, ours runs only sharded.
  if (!shardCounts.includes(1)) phases.delete("ours");
  const sharded = shardCounts.filter((k) => k > 1);
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
  const builtinTunedArgs = env.BUILTIN_TUNED_ARGS?.trim() ? split(env.BUILTIN_TUNED_ARGS) : [...BUILTIN_TUNED_ARGS];
  const operatorNodeArgs = split(env.OPERATOR_NODE_ARGS);
  const jitter = env.JITTER?.trim() || undefined;
  const profile = values["apiserver-profile"] ?? ["1", "true"].includes(env.APISERVER_PROFILE ?? "");
  const limitsSpec = pick(values["operator-limits"], "OPERATOR_LIMITS", "deployment");
  const limits = resolveLimits(limitsSpec, PROJECT_ROOT);
  const cgroups = cgroupSupport();
  if (cgroups.ok) {
    // Groups a SIGKILLed earlier run left behind (empty by now: their processes died with it).
    for (const dir of leftoverGroups(cgroups, CGROUP_PREFIX)) {
      // cronjob-bench-<pid>-…: only those of benchmarks no longer running.
      const owner = Number(/-(\d+)-/.exec(dir.slice(dir.lastIndexOf("/")))?.[1]);
      if (Number.isFinite(owner) && existsSync(`/proc/${owner}`)) continue;
      try {
        rmdirSync(dir);
        log(`removed the leftover cgroup ${dir}`);
      } catch {
        // still in use (another benchmark running?): leave it
      }
    }
  }
  log(
    cgroups.ok
      ? `ours runs in a cgroup with ${formatLimits(limits.limits)} (${limits.source})`
      : `cgroups not available (${cgroups.reason}): every controller runs unbounded`,
  );
  const nodeOptions = deploymentNodeOptions();
  const heapLimitMB = v8HeapLimitMB(cgroups, limits.limits, nodeOptions);

  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const workDir = join(PROJECT_ROOT, "bench", "work", stamp);
  mkdirSync(workDir, { recursive: true });
  const settings: Settings = {
    minutes,
    namespaces,
    groups,
    calendars,
    workers,
    inFlight,
    finishAfterMs: finishAfterS * 1000,
    builtinArgs,
    builtinTunedArgs,
    operatorLimits: limits.limits,
    cgroups,
    operatorNodeArgs,
    ...(jitter ? { jitter } : {}),
    workDir,
    ...(profile ? { apiserverProfile: { base: out.replace(/\.md$/, ""), perN: ns.length > 1, seconds: 10 } } : {}),
    log,
  };

  // Rough duration per controller phase: ~30 s to the next minute boundary, the setup (~1.5 s per 1,000
  // CronJobs), ~1 min from the cold start to the first measured slot, M − 1 more minutes, 50 s of tail,
  // ~15 s of control plane start and stop. The built-in with its default rate limit never finishes its
  // cold start (it waits the timeout) and keeps creating late Jobs of the last slot for up to 2 min.
  let estimateMin = 0;
  for (const n of ns) {
    const base = 0.5 + (1.5 * n) / 1000 / 60 + 0.5 + minutes + END_AFTER_LAST_SLOT_MS / 60_000 + 0.25;
    // The floor and the write costs: 3.5 min at 20,000 when one kind of status write was priced; the three
    // priced now add about 4 N status writes.
    if (phases.has("calibration")) estimateMin += 0.3 + (0.25 * n) / 1000;
    if (phases.has("ours")) estimateMin += base + 0.25;
    // Each sharded phase: its window, then a join (up to 2.5 min) and a kill before a slot (up to 2.5 min).
    estimateMin += sharded.length * (base + 0.25 + 3);
    if (phases.has("builtin-tuned")) estimateMin += base + 0.25;
    if (phases.has("builtin")) estimateMin += base + coldStartTimeoutMs(n) / 60_000 + DRAIN_MAX_MS / 60_000;
  }
  // GROUPS and CALENDARS shape ours' CronJobs only: the built-in has neither concurrency groups nor calendars.
  const oursOnly =
    groups || calendars
      ? `${groups ? ` GROUPS=${groups}` : ""}${calendars ? ` CALENDARS=${calendars}` : ""} (ours only)`
      : "";
  log(
    `N=${ns.join(",")} MINUTES=${minutes} NAMESPACES=${namespaces}${oursOnly} phases ${[...phases].join(",")}: up to about ` +
      `${Math.ceil(estimateMin)} min; logs in ${relative(process.cwd(), workDir)}, report ${relative(process.cwd(), out)}`,
  );

  const cmdArgs = [`--n=${ns.join(",")}`, `--minutes=${minutes}`, `--namespaces=${namespaces}`];
  if (groups) cmdArgs.push(`--groups=${groups}`);
  if (calendars) cmdArgs.push(`--calendars=${calendars}`);
  if (workers !== 16) cmdArgs.push(`--workers=${workers}`);
  if (phases.size !== PHASES.length) cmdArgs.push(`--phases=${[...phases].join(",")}`);
  if (limitsSpec !== "deployment") cmdArgs.push(`--operator-limits=${limitsSpec}`);
  if (sharded.length) cmdArgs.push(`--shards=${shardCounts.join(",")}`);
  if (values.update ?? ["1", "true"].includes(env.UPDATE ?? "")) cmdArgs.push("--update");
  if (profile) cmdArgs.push("--apiserver-profile");
  const envPrefix = [
    builtinArgs.length ? `BUILTIN_ARGS='${builtinArgs.join(" ")}'` : "",
    env.BUILTIN_TUNED_ARGS?.trim() ? `BUILTIN_TUNED_ARGS='${builtinTunedArgs.join(" ")}'` : "",
    limitsSpec !== "deployment" ? `OPERATOR_LIMITS=${limitsSpec}` : "",
    sharded.length ? `SHARDS=${shardCounts.join(",")}` : "",
    operatorNodeArgs.length ? `OPERATOR_NODE_ARGS='${operatorNodeArgs.join(" ")}'` : "",
    env.OPERATOR_DIST ? `OPERATOR_DIST=${env.OPERATOR_DIST}` : "",
    phases.size !== PHASES.length ? `PHASES=${[...phases].join(",")}` : "",
    cmdArgs.includes("--update") ? "UPDATE=1" : "",
    profile ? "APISERVER_PROFILE=1" : "",
    jitter ? `JITTER=${jitter}` : "",
  ]
    .filter(Boolean)
    .join(" ");
  const update = values.update ?? ["1", "true"].includes(env.UPDATE ?? "");
  const report: Report = {
    date,
    startedAt: new Date().toISOString(),
    command:
      `${envPrefix ? `${envPrefix} ` : ""}make bench N=${ns.join(",")} MINUTES=${minutes} NAMESPACES=${namespaces}` +
      (groups ? ` GROUPS=${groups}` : "") +
      (calendars ? ` CALENDARS=${calendars}` : "") +
      `   # = node_modules/.bin/node bench/run.ts ${cmdArgs.join(" ")}` +
      (groups || calendars
        ? `   (${[groups ? "GROUPS" : "", calendars ? "CALENDARS" : ""].filter(Boolean).join(", ")}: ours only)`
        : ""),
    settings: {
      ns,
      minutes,
      namespaces,
      ...(groups ? { groups } : {}),
      ...(calendars ? { calendars } : {}),
      ...(jitter ? { jitter } : {}),
      workers,
      inFlight,
      finishAfterS,
      historyLimit: HISTORY_LIMIT,
      builtinArgs,
      builtinTunedArgs,
      operatorNodeArgs,
      nodeOptions,
      operatorLimits: {
        spec: limitsSpec,
        source: limits.source,
        applied: cgroups.ok ? formatLimits(limits.limits) : "none",
        ...(limits.limits.cpu !== undefined ? { cpu: limits.limits.cpu } : {}),
        ...(limits.limits.memoryBytes !== undefined ? { memoryBytes: limits.limits.memoryBytes } : {}),
        deployment: formatLimits(limits.deployment),
        ...(limits.deployment.memoryBytes !== undefined
          ? { deploymentMemoryBytes: limits.deployment.memoryBytes }
          : {}),
        ...(heapLimitMB !== undefined ? { v8HeapLimitMB: heapLimitMB } : {}),
      },
      cgroups: cgroups.ok
        ? `cgroup v1: ${cgroups.cpuParent}, ${cgroups.memoryParent}`
        : `not available: ${cgroups.reason ?? "?"}`,
    },
    machine: machine(),
    commands: {},
    results: [],
    loadavgAtStart: loadavg(),
  };

  if (update && existsSync(jsonFile)) {
    const prev = JSON.parse(readFileSync(jsonFile, "utf8")) as Report;
    if (prev.settings.minutes !== minutes || prev.settings.namespaces !== namespaces) {
      throw new Error(`--update: ${jsonFile} was measured with other MINUTES/NAMESPACES`);
    }
    // Ours' CronJobs there had these groups and calendars (reports before settings kept them: their command says).
    const prevCount = (v: number | undefined, name: string) =>
      v ?? Number(new RegExp(` ${name}=(\\d+)`).exec(prev.command)?.[1] ?? 0);
    const prevGroups = prevCount(prev.settings.groups, "GROUPS");
    const prevCalendars = prevCount(prev.settings.calendars, "CALENDARS");
    if (phases.has("ours")) {
      if (prev.results.some((r) => r.ours) && (prevGroups !== groups || prevCalendars !== calendars))
        throw new Error(`--update: ${jsonFile} measured ours with other GROUPS/CALENDARS`);
    } else {
      // The ours results kept are still those of the earlier workload.
      delete report.settings.groups;
      delete report.settings.calendars;
      if (prevGroups) report.settings.groups = prevGroups;
      if (prevCalendars) report.settings.calendars = prevCalendars;
    }
    report.startedAt = prev.startedAt;
    report.command = `${prev.command}\n${report.command}`;
    report.commands = prev.commands;
    report.results = prev.results;
    report.settings.ns = [...new Set([...prev.settings.ns, ...ns])].sort((a, b) => a - b);
    log(`--update: keeping the results in ${relative(process.cwd(), jsonFile)}`);
  }

  // Phases measured now replace their earlier command lines; the first N of this run names them.
  for (const p of phases) if (p !== "calibration") delete report.commands[DRIVERS[p].key];
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
      // A write that cannot be priced (one the API server refuses) fails the calibration too, not just its table.
      if (res.calibration.error || res.calibration.writeCostsError) failures++;
      log(
        `[N=${n} calibration] ${res.calibration.error ?? `${res.calibration.perSecond.toFixed(0)} creates/s (${res.calibration.seconds.toFixed(2)} s)`}` +
          (res.calibration.writeCostsError ? `; FAILED to price the writes: ${res.calibration.writeCostsError}` : ""),
      );
    }
    // The order of PHASES: ours, then the built-in as it ships, then tuned.
    for (const p of PHASES) {
      if (p === "calibration" || !phases.has(p)) continue;
      const { driver, key } = DRIVERS[p];
      const r = await runControllerPhase(n, driver, settings);
      res[key] = r;
      report.commands[key] ??= r.commandLine;
      if (!r.ok) failures++;
      await save();
    }
    // Ours sharded, after the one instance of the same N, on the same machine in the same run.
    for (const k of sharded) {
      const rk = await runControllerPhase(n, oursDriver, settings, k);
      res.oursShards = [...(res.oursShards ?? []).filter((x) => x.shardCount !== k), rk].sort(
        (a, b) => (a.shardCount ?? 0) - (b.shardCount ?? 0),
      );
      if (!rk.ok) failures++;
      await save();
    }
  }
  report.finishedAt = new Date().toISOString();
  report.loadavgAtEnd = loadavg();
  await save();
  return failures ? 1 : 0;
}

process.exitCode = await main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  return 2;
});
