// The report: Markdown with where we stand (ours against the fully tuned built-in), the targets, a sizing table
// and a table per N, an SVG chart of skew percentiles against N converted to PNG (rsvg-convert, from
// Debian's librsvg2-bin), and the raw numbers as JSON.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname } from "node:path";
import { format, resolveConfig } from "prettier";
import {
  builtinWorkers,
  type CalibrationResult,
  coldStartTimeoutMs,
  droppedArgsReason,
  NOT_COUNTED,
  type PhaseResult,
  type WriteCost,
} from "./phases.ts";
import { SHARD_TARGETS, shardsTable } from "./report-shards.ts";

export interface NResult {
  n: number;
  calibration?: CalibrationResult;
  ours?: PhaseResult;
  /** The built-in as it ships (client QPS 20, burst 30). */
  builtin?: PhaseResult;
  /** The fully tuned built-in (BUILTIN_TUNED_ARGS): the anchor, the fair comparison. */
  builtinTuned?: PhaseResult;
  /** Ours as K > 1 active shards (SHARDS), each against `ours` (one instance) of the same N. */
  oursShards?: PhaseResult[];
}

export interface Machine {
  nproc: number;
  cpuModel: string;
  memGiB: number;
  kernel: string;
  node: string;
  kubeApiserver: string;
  etcd: string;
  /** `kube-controller-manager --version` (absent in reports from before it was recorded). */
  kubeControllerManager?: string;
}

export interface OperatorLimitsSetting {
  /** As given: "deployment", "none", "cpu=1,memory=512Mi". */
  spec: string;
  source: string;
  /** What the cgroup enforced ("none" without cgroups). */
  applied: string;
  cpu?: number;
  memoryBytes?: number;
  /** The Deployment's limits, what "within the Deployment limit" compares with. */
  deployment: string;
  deploymentMemoryBytes?: number;
  /** V8's heap limit of a node with the Deployment's NODE_OPTIONS inside such a group. */
  v8HeapLimitMB?: number;
}

export interface Report {
  date: string;
  startedAt: string;
  finishedAt?: string;
  command: string;
  settings: {
    ns: number[];
    minutes: number;
    namespaces: number;
    /** --groups (ours only); absent: 0, or a report from before it was kept here (its command says). */
    groups?: number;
    /** --calendars (ours only); absent: 0. */
    calendars?: number;
    /** JITTER: ours' CronJobs' spec.jitter (skew counted from each run's start); absent: none. */
    jitter?: string;
    workers: number;
    inFlight: number;
    finishAfterS: number;
    historyLimit: number;
    builtinArgs: string[];
    builtinTunedArgs?: string[];
    operatorNodeArgs: string[];
    nodeOptions?: string;
    operatorLimits?: OperatorLimitsSetting;
    /** "cgroup v1: <cpu parent>, <memory parent>" or "not available: <why>". */
    cgroups?: string;
  };
  machine: Machine;
  commands: { ours?: string; builtin?: string; builtinTuned?: string };
  results: NResult[];
  loadavgAtStart?: string;
  loadavgAtEnd?: string;
}

type SystemKey = "ours" | "builtinTuned" | "builtin";
/** Column order everywhere: ours, the anchor, the built-in as it ships. */
export const SYSTEMS: Array<{ key: SystemKey; label: string; color: string }> = [
  { key: "ours", label: "ours", color: "#1f6fb4" },
  { key: "builtinTuned", label: "built-in (fully tuned)", color: "#e08a00" },
  { key: "builtin", label: "built-in (defaults)", color: "#c0302b" },
];

const MB = 2 ** 20;

const num = (x: number | undefined, digits = 2): string =>
  x === undefined || !Number.isFinite(x) ? "n/a" : x.toFixed(digits);

const pct = (x: number): string => `${Math.abs(x * 100).toFixed(0)} %`;

function floorOf(r: NResult): number | undefined {
  const c = r.calibration;
  return c && Number.isFinite(c.perSecond) && c.perSecond > 0 ? r.n / c.perSecond : undefined;
}

const okPhase = (p: PhaseResult | undefined): PhaseResult | undefined => (p?.ok ? p : undefined);

function cell(p: PhaseResult | undefined, f: (p: PhaseResult) => string): string {
  if (!p) return "not run";
  if (!p.ok) return "failed (see below)";
  return f(p);
}

function coldStartText(p: PhaseResult): string {
  // Every CronJob decided once (N items processed) before the queue emptied: the first statuses wait (ours).
  if (p.coldStartS !== undefined && p.firstNProcessedS !== undefined && p.coldStartS - p.firstNProcessedS >= 0.5)
    return `${num(p.firstNProcessedS, 1)} decided, ${num(p.coldStartS, 1)} settled`;
  if (p.coldStartS !== undefined) return num(p.coldStartS, 1);
  const timeout = p.coldStartTimeoutS ?? coldStartTimeoutMs(p.n) / 1000;
  return `> ${timeout} (queue never empty${p.firstNProcessedS !== undefined ? `; N items done at ${num(p.firstNProcessedS, 1)}` : ""})`;
}

function throttledText(p: PhaseResult): string {
  const c = p.cgroup;
  if (!c?.applied || !c.atEnd) return "n/a";
  if (c.info && c.info.cfsQuotaUs < 0) return "no quota";
  const a = c.atReady ?? { nrPeriods: 0, nrThrottled: 0, throttledS: 0 };
  const periods = c.atEnd.nrPeriods - a.nrPeriods;
  const throttled = c.atEnd.nrThrottled - a.nrThrottled;
  if (periods <= 0) return "0";
  return `${pct(throttled / periods)} of periods (${num(c.atEnd.throttledS - a.throttledS, 1)} s)`;
}

function table(r: NResult): string {
  const floor = floorOf(r);
  const tuned = okPhase(r.builtinTuned)?.analysis?.skew.p99;
  const rows: Array<[string, (p: PhaseResult) => string]> = [
    ["skew p50 (s)", (p) => num(p.analysis?.skew.p50)],
    ["skew p90 (s)", (p) => num(p.analysis?.skew.p90)],
    ["skew p99 (s)", (p) => num(p.analysis?.skew.p99)],
    ["skew max (s)", (p) => num(p.analysis?.skew.max)],
    [
      `skew p99 / floor (floor = N / throughput = ${num(floor)} s)`,
      (p) => (floor && p.analysis ? num(p.analysis.skew.p99 / floor) : "n/a"),
    ],
    ["skew p99 / the fully tuned built-in's", (p) => (tuned && p.analysis ? num(p.analysis.skew.p99 / tuned) : "n/a")],
    ["missed runs", (p) => (p.analysis ? `${p.analysis.missed} of ${p.analysis.expected}` : "n/a")],
    ["duplicate runs", (p) => String(p.analysis?.duplicates ?? "n/a")],
    ["apiserver writes per run asked, after the cold start", (p) => num(p.writesPerRun)],
    ["CPU ms per run asked, after the cold start", (p) => num(p.cpuMsPerRunSteady)],
    ["CPU s per minute after the cold start", (p) => num(p.cpuPerMinuteSteady)],
    ["CPU s (whole run)", (p) => num(p.cpuSeconds, 1)],
    ["busiest second (cores)", (p) => num(p.cpuPeakCores)],
    ["kube-apiserver's busiest second, measured slots (cores)", (p) => num(p.apiserverPeakCores)],
    ["CPU throttled after the cold start", throttledText],
    ["peak RSS (MB)", (p) => num(p.peakRssMB, 0)],
    ["cgroup memory peak (MB)", (p) => (p.cgroup?.atEnd ? num(p.cgroup.atEnd.memoryMaxUsageBytes / MB, 0) : "n/a")],
    ["OOM kills", (p) => (p.cgroup?.atEnd ? String(p.cgroup.atEnd.oomKills) : "n/a")],
    ["Events dropped", (p) => (p.eventsDropped !== undefined ? String(p.eventsDropped) : "n/a")],
    ["cold start (s)", coldStartText],
  ];
  const lines = [`| | ${SYSTEMS.map((s) => s.label).join(" | ")} |`, `|---|${SYSTEMS.map(() => "--:").join("|")}|`];
  for (const [label, f] of rows) lines.push(`| ${label} | ${SYSTEMS.map((s) => cell(r[s.key], f)).join(" | ")} |`);
  return lines.join("\n");
}

function statsLine(p: PhaseResult): string | undefined {
  const c = p.cgroup;
  if (!c) return undefined;
  if (!c.applied) return `- cgroup: not applied (${c.reason ?? "?"}); ran unbounded`;
  const i = c.info;
  const e = c.atEnd;
  const parts = [
    `- cgroup: ${c.limits === "none" ? "no limits" : (c.limits ?? "?")}` +
      (i
        ? ` (cpu.cfs_quota_us ${i.cfsQuotaUs} / cpu.cfs_period_us ${i.cfsPeriodUs}, memory.limit_in_bytes ` +
          `${i.memoryLimitBytes ?? "unlimited"}; ${i.cpuDir}, ${i.memoryDir})`
        : ""),
  ];
  if (e) {
    const a = c.atReady;
    parts.push(
      `; cpu.stat over the whole run: nr_periods ${e.nrPeriods}, nr_throttled ${e.nrThrottled}, ` +
        `throttled_time ${num(e.throttledS, 1)} s` +
        (a ? ` (during the cold start: ${a.nrThrottled} of ${a.nrPeriods} periods, ${num(a.throttledS, 1)} s)` : "") +
        `; memory.max_usage_in_bytes ${num(e.memoryMaxUsageBytes / MB, 0)} MB` +
        (e.memoryRssBytes !== undefined
          ? ` (at the end: anonymous ${num(e.memoryRssBytes / MB, 0)} MB` +
            (e.memoryCacheBytes !== undefined ? `, page cache ${num(e.memoryCacheBytes / MB, 0)} MB` : "") +
            ")"
          : "") +
        `, memory.failcnt ${e.memoryFailcnt}, OOM kills ${e.oomKills}`,
    );
  }
  return parts.join("");
}

/** The conditions the finisher wrote (as the phases recorded them; Complete=True in reports from before). */
function finisherConditionsText(r: Report): string {
  const conditions = r.results.flatMap((x) => [x.ours, x.builtinTuned, x.builtin]).find((p) => p?.finisherConditions)
    ?.finisherConditions ?? ["Complete"];
  return (
    conditions.map((c) => `${c}=True`).join(" and ") +
    (conditions.includes("SuccessCriteriaMet")
      ? " (kube-apiserver refuses Complete=True without SuccessCriteriaMet=True from 1.32; the Job controller writes both from 1.31)"
      : "")
  );
}

function details(label: string, p: PhaseResult | undefined, r: NResult): string {
  if (!p) return `**${label}**: not run.\n`;
  const how = [
    ...(p.extraArgs?.length ? [`\`${p.extraArgs.join(" ")}\``] : []),
    ...(p.workers !== undefined ? [`${p.workers} workers`] : []),
  ];
  const out: string[] = [`**${label}**${how.length ? ` (${how.join("; ")})` : ""}`, ""];
  if (p.droppedArgs?.length) {
    out.push(
      `- not passed: \`${p.droppedArgs.join(" ")}\`: ${p.controllerVersion ?? "its kube-controller-manager"} lacks it ` +
        `(${droppedArgsReason(p.droppedArgs)})`,
    );
  }
  if (p.controllerVersion || p.serverVersion) {
    out.push(
      `- versions: ${[p.controllerVersion ? `kube-controller-manager ${p.controllerVersion}` : "", p.serverVersion ? `kube-apiserver ${p.serverVersion} (GET /version)` : ""].filter(Boolean).join(", ")}`,
    );
  }
  if (p.loadavgBefore) out.push(`- load average before → after: ${p.loadavgBefore} → ${p.loadavgAfter ?? "?"}`);
  if (!p.ok) {
    out.push(`- failed: ${p.error ?? "unknown error"}`);
    const cg = statsLine(p);
    if (cg) out.push(cg);
    out.push("");
    if (p.logFile) out.push(`Log: \`${p.logFile}\` (last lines):`, "", "```", p.logTail ?? "", "```", "");
    return out.join("\n");
  }
  const a = p.analysis;
  if (a) {
    out.push(
      `- window: ${a.window.length} slot${a.window.length === 1 ? "" : "s"}, ${a.window[0]} … ${a.window.at(-1)}; ` +
        `${a.jobsInWindow} Jobs in the window ` +
        `(${p.runsAsked ?? r.n * a.window.length} asked), ` +
        `${a.catchUpJobs} catch-up Jobs for slots before it, ${a.jobsTotal} Jobs created in all; ` +
        `${a.deleted} deleted by history cleanup during the run`,
      `- skew from creationTimestamp alone (1 s resolution): p50 ${num(a.skewCreationTimestamp.p50)}, ` +
        `p99 ${num(a.skewCreationTimestamp.p99)}, max ${num(a.skewCreationTimestamp.max)} s`,
      `- per slot: ${a.perSlot.map((s) => `${s.slot.slice(11, 16)} ${s.jobs} Jobs (p99 ${num(s.p99)} s, max ${num(s.max)} s)`).join("; ")}`,
    );
  }
  out.push(
    `- setup: ${num(p.setupSeconds, 1)} s to create the CronJobs; workers started ${num(p.workersStartedS, 1)} s after ` +
      `process start, ${p.firstNProcessedS !== undefined ? `N work items processed at ${num(p.firstNProcessedS, 1)} s, ` : ""}` +
      (p.coldStartNote ?? `first pass done (queue empty) at ${num(p.coldStartS, 1)} s`) +
      ` (${num(p.cpuColdStartSeconds, 1)} CPU s by then` +
      (p.coldStartScrapes !== undefined
        ? `; ${p.coldStartScrapes} metrics scrapes, the slowest ${num(p.coldStartScrapeMaxMs, 0)} ms`
        : "") +
      `); run ${num(p.runSeconds, 0)} s` +
      (p.drainSeconds && p.drainSeconds > 1
        ? `, then ${num(p.drainSeconds, 0)} s more watching for late Jobs of the last slot`
        : ""),
  );
  if (p.slotsInColdStart?.length) {
    out.push(
      `- slots that passed during the cold start (their Jobs are part of it): ` +
        p.slotsInColdStart.map((s) => `${s.slot.slice(11, 16)} (${s.jobs} Jobs by its end)`).join(", "),
    );
  }
  if (p.exitedAtS !== undefined) {
    out.push(
      `- **the controller exited ${num(p.exitedAtS, 0)} s after start** (exit code ${String(p.exitCode)}` +
        `${p.cgroup?.atEnd?.oomKills ? `, OOM kills in its cgroup: ${p.cgroup.atEnd.oomKills}` : ""}); later runs are missed`,
    );
  }
  const cg = statsLine(p);
  if (cg) out.push(cg);
  out.push(
    `- apiserver writes by the controller: ${p.writes ?? "n/a"}` +
      (p.writesColdStart !== undefined
        ? ` (cold start ${p.writesColdStart}, after it ${p.writesSteady ?? "n/a"}; ${num(p.writesPerJob)} per Job created)`
        : "") +
      " — " +
      Object.entries(p.writesByResource ?? {})
        .sort(([, x], [, y]) => y - x)
        .map(([k, v]) => `${k} ${v}`)
        .join(", "),
  );
  const failed = Object.entries(p.failedWritesByResource ?? {});
  if (failed.length) out.push(`- of which failed (4xx/5xx): ${failed.map(([k, v]) => `${k} ${v}`).join(", ")}`);
  out.push(
    `- finisher: ${p.finisherPatches ?? 0} jobs/status patches (${p.finisherErrors ?? 0} errors)` +
      (p.finisherCompleted !== undefined
        ? `, ${p.finisherCompleted} Jobs completed with ${(p.finisherConditions ?? ["Complete"]).map((c) => `${c}=True`).join(" + ")}`
        : "") +
      ", not counted above" +
      (p.finisherLagMaxS !== undefined
        ? `; ${p.finisherInFlight ?? 8} in flight, landed p99 ${num(p.finisherLagP99S)} s / max ${num(p.finisherLagMaxS)} s after due`
        : "") +
      (p.watchRestarts !== undefined ? `; Job watch restarts ${p.watchRestarts}, relists ${p.watchRelists ?? 0}` : ""),
  );
  if (p.controllerRequests) {
    out.push(
      `- the controller's own client (rest_client_requests_total, method code): ` +
        Object.entries(p.controllerRequests)
          .map(([k, v]) => `${k}: ${v}`)
          .join(", "),
    );
    // A request answered 404 asked what the controller could have known (a Job it deleted, or saw go).
    const notFound = Object.entries(p.controllerRequests).filter(([k]) => k.endsWith(" 404"));
    out.push(
      `- answered 404 (Not Found), by verb: ${notFound.length ? notFound.map(([k, v]) => `${k.split(" ")[0]} ${v}`).join(", ") : "none"}`,
    );
  }
  if (p.reconcilesByResult) {
    out.push(
      `- reconciles by result: ${Object.entries(p.reconcilesByResult)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")}; errors ${p.reconcileErrors ?? 0}`,
    );
  }
  if (p.eventsDropped !== undefined) {
    const by = Object.entries(p.eventsDroppedByReason ?? {});
    out.push(
      `- events_dropped_total at the end: ${p.eventsDropped}${by.length ? ` (${by.map(([k, v]) => `${k} ${v}`).join(", ")})` : ""}`,
    );
  }
  if (p.queueRetries !== undefined) {
    out.push(
      `- work-queue delayed adds (workqueue_retries_total: scheduled requeues and error retries): ${p.queueRetries}`,
    );
  }
  if (p.heapUsedMB !== undefined) {
    out.push(
      `- V8 heap at the end: ${num(p.heapUsedMB, 0)} MB used of ${num(p.heapTotalMB, 0)} MB allocated ` +
        `(peak RSS ${num(p.peakRssMB, 0)} MB: the rest is code, buffers and garbage not yet collected)`,
    );
  }
  if (p.apiserverCpuSeconds !== undefined)
    out.push(
      `- kube-apiserver CPU during the run: ${num(p.apiserverCpuSeconds, 1)} s` +
        (p.apiserverCpuColdStartSeconds !== undefined
          ? ` (${num(p.apiserverCpuColdStartSeconds, 1)} s of it in the cold start; etcd ${num(p.etcdCpuColdStartSeconds, 1)} s there)`
          : ""),
    );
  if (p.apiserverProfile) out.push(profileLine(p.apiserverProfile));
  if (p.apiserverCpuMsPerRun !== undefined)
    out.push(
      `- after the cold start, per run asked: kube-apiserver ${num(p.apiserverCpuMsPerRun)} ms CPU` +
        (p.apiserverCpuMsPerRunTail !== undefined
          ? ` (${num(p.apiserverCpuMsPerRunTail)} ms over the last 5 measured minutes)`
          : "") +
        `, etcd ` +
        `${num(p.etcdCpuMsPerRun)} ms; the controller sent ${num(kb(p.bytesSentPerRun), 1)} KB and read ` +
        `${num(kb(p.bytesReceivedPerRun), 1)} KB (socket bytes incl. TLS, /proc/<pid>/io less its log)`,
    );
  out.push("");
  return out.join("\n");
}

/** The --apiserver-profile line of a phase's details: its files (next to the report) or why there are none. */
function profileLine(pr: NonNullable<PhaseResult["apiserverProfile"]>): string {
  const from = pr.startedAt ? ` from ${pr.startedAt.slice(11, 19)} (the first measured slot)` : "";
  if (!pr.file) return `- kube-apiserver CPU profile (${pr.seconds} s${from}): none, ${pr.error ?? "?"}`;
  return (
    `- kube-apiserver CPU profile, ${pr.seconds} s${from}: \`${basename(pr.file)}\`` +
    (pr.topFile ? `, its \`go tool pprof -top -cum\` in \`${basename(pr.topFile)}\`` : `; no top: ${pr.topNote ?? "?"}`)
  );
}

// --- targets -----------------------------------------------------------------------------------------

export interface Verdict {
  status: "met" | "missed" | "n/a";
  text: string;
}

const NA = (why: string): Verdict => ({ status: "n/a", text: why });

/** actual ≤ limit, with the margin either way. */
function atMost(actual: number | undefined, limit: number | undefined, unit: string, digits = 2): Verdict {
  if (actual === undefined || limit === undefined || !Number.isFinite(actual) || !Number.isFinite(limit))
    return NA("n/a");
  const a = `${actual.toFixed(digits)}${unit}`;
  const l = `${limit.toFixed(digits)}${unit}`;
  if (actual <= limit)
    return { status: "met", text: `met: ${a} ≤ ${l} (${pct(limit ? (limit - actual) / limit : 0)} margin)` };
  return {
    status: "missed",
    text: `**missed** by ${(actual - limit).toFixed(digits)}${unit} (+${pct(limit ? (actual - limit) / limit : Infinity)}): ${a} > ${l}`,
  };
}

export interface Target {
  label: string;
  /** The verdict at one N; undefined where the target does not apply to that N. */
  at(r: NResult, report: Report): Verdict | undefined;
}

export const TARGET_CPU_MS_PER_RUN = 1.5;

export const TARGETS: Target[] = [
  {
    label: "skew p99 ≤ 1.25 × floor at N = 1,000, ≤ 2 × floor at N = 5,000",
    at(r) {
      const factor = r.n === 1000 ? 1.25 : r.n === 5000 ? 2 : undefined;
      if (factor === undefined) return undefined;
      const f = floorOf(r);
      const p = okPhase(r.ours)?.analysis;
      if (!p || !f) return NA(!p ? (r.ours ? "ours failed" : "ours not measured") : "no calibration");
      return atMost(p.skew.p99, factor * f, " s");
    },
  },
  {
    label: "skew p99 ≤ 0.6 × the fully tuned built-in's p99 at N = 5,000, ≤ 0.5 × at N ≥ 10,000",
    at(r) {
      const factor = r.n === 5000 ? 0.6 : r.n >= 10_000 ? 0.5 : undefined;
      if (factor === undefined) return undefined;
      const p = okPhase(r.ours)?.analysis;
      const t = okPhase(r.builtinTuned)?.analysis;
      if (!p || !t)
        return NA(!p ? (r.ours ? "ours failed" : "ours not measured") : "fully tuned built-in not measured");
      const v = atMost(p.skew.p99, factor * t.skew.p99, " s");
      return t.missed ? { ...v, text: `${v.text} (the fully tuned built-in missed ${t.missed} runs)` } : v;
    },
  },
  {
    label: "apiserver writes per run (Events included) ≤ the fully tuned built-in's (after the cold start)",
    at(r) {
      const o = okPhase(r.ours);
      const t = okPhase(r.builtinTuned);
      if (!o || !t)
        return NA(!o ? (r.ours ? "ours failed" : "ours not measured") : "fully tuned built-in not measured");
      if (o.writesPerRun === undefined || t.writesPerRun === undefined) return NA("not measured");
      return atMost(o.writesPerRun, t.writesPerRun, "");
    },
  },
  {
    label: "KB sent per run ≤ 1.5 (after the cold start)",
    at(r) {
      const o = okPhase(r.ours);
      if (!o) return NA(r.ours ? "ours failed" : "ours not measured");
      if (o.bytesSentPerRun === undefined) return NA("not measured");
      return atMost(o.bytesSentPerRun / 1024, 1.5, " KB", 1);
    },
  },
  {
    label: "0 missed, 0 duplicate runs",
    at(r) {
      const p = okPhase(r.ours);
      const a = p?.analysis;
      if (!a) return NA(r.ours ? "ours failed" : "ours not measured");
      if (a.missed === 0 && a.duplicates === 0)
        return { status: "met", text: `met: 0 of ${a.expected} missed, 0 duplicates` };
      return {
        status: "missed",
        text:
          `**missed**: ${a.missed} of ${a.expected} missed, ${a.duplicates} duplicates` +
          (p?.exitedAtS !== undefined ? ` (the operator exited at ${num(p.exitedAtS, 0)} s)` : ""),
      };
    },
  },
  {
    label: `controller CPU per Job run ≤ ${TARGET_CPU_MS_PER_RUN} ms (after the cold start)`,
    at(r) {
      const p = okPhase(r.ours);
      if (!p) return NA(r.ours ? "ours failed" : "ours not measured");
      return atMost(p.cpuMsPerRunSteady, TARGET_CPU_MS_PER_RUN, " ms");
    },
  },
  {
    label: "kube-apiserver CPU per run ≤ 0.7 × the fully tuned built-in's (after the cold start)",
    at(r) {
      const o = okPhase(r.ours);
      const t = okPhase(r.builtinTuned);
      if (!o || !t)
        return NA(!o ? (r.ours ? "ours failed" : "ours not measured") : "fully tuned built-in not measured");
      if (o.apiserverCpuMsPerRun === undefined || t.apiserverCpuMsPerRun === undefined) return NA("not measured");
      return atMost(o.apiserverCpuMsPerRun, 0.7 * t.apiserverCpuMsPerRun, " ms");
    },
  },
  {
    label:
      "kube-apiserver CPU per run ≤ 0.7 × the fully tuned built-in's, over the last 5 measured minutes (the steady state)",
    at(r) {
      const o = okPhase(r.ours);
      const t = okPhase(r.builtinTuned);
      if (!o || !t) return undefined;
      if (o.apiserverCpuMsPerRunTail === undefined || t.apiserverCpuMsPerRunTail === undefined)
        return NA("a window of 6 minutes or more measures it");
      return atMost(o.apiserverCpuMsPerRunTail, 0.7 * t.apiserverCpuMsPerRunTail, " ms");
    },
  },
  {
    label: "peak RSS ≤ 150 MB at N = 1,000, ≤ 250 MB at N = 10,000",
    at(r) {
      const limit = r.n === 1000 ? 150 : r.n === 10_000 ? 250 : undefined;
      if (limit === undefined) return undefined;
      const p = okPhase(r.ours);
      if (!p) return NA(r.ours ? "ours failed" : "ours not measured");
      return atMost(p.peakRssMB, limit, " MB", 0);
    },
  },
  {
    label: "within the Deployment's memory limit (peak RSS, no OOM kill)",
    at(r, report) {
      const p = okPhase(r.ours);
      const failedOoms = r.ours?.ok === false ? (r.ours.cgroup?.atEnd?.oomKills ?? 0) : 0;
      const under = report.settings.operatorLimits?.applied ?? "?";
      if (failedOoms > 0)
        return { status: "missed", text: `**missed**: OOM-killed (${failedOoms}) under ${under}, the run failed` };
      if (!p) return NA(r.ours ? "ours failed" : "ours not measured");
      if (!report.settings.operatorLimits) return NA("n/a (limits not recorded)");
      const bytes = report.settings.operatorLimits.deploymentMemoryBytes;
      if (bytes === undefined) return NA("the Deployment sets no memory limit");
      const v = atMost(p.peakRssMB, bytes / MB, " MB", 0);
      const ooms = p.cgroup?.atEnd?.oomKills ?? 0;
      if (ooms > 0) {
        return {
          status: "missed",
          text: `**missed**: ${ooms} OOM kill${ooms === 1 ? "" : "s"} under ${under} (peak RSS ${num(p.peakRssMB, 0)} MB)`,
        };
      }
      return v;
    },
  },
  {
    label: "cold start (every CronJob decided once) ≤ 5 s at N = 5,000, ≤ 10 s at N = 10,000",
    at(r) {
      const limit = r.n === 5000 ? 5 : r.n === 10_000 ? 10 : undefined;
      if (limit === undefined) return undefined;
      const p = okPhase(r.ours);
      if (!p) return NA(r.ours ? "ours failed" : "ours not measured");
      // Decided: every CronJob processed once (a new leader decides every due slot by then); settled: the queue
      // empty, the first statuses of new CronJobs written too (they wait behind the decisions).
      const decided = p.firstNProcessedS ?? p.coldStartS;
      if (decided === undefined)
        return { status: "missed", text: `**missed**: ${coldStartText(p)} s, limit ${limit} s` };
      const v = atMost(decided, limit, " s", 1);
      return p.coldStartS !== undefined && p.coldStartS !== decided
        ? { ...v, text: `${v.text} (every CronJob decided; settled at ${num(p.coldStartS, 1)} s)` }
        : v;
    },
  },
  {
    label: "0 Events dropped (events_dropped_total; routine ones, left out by design, apart)",
    at(r) {
      const p = okPhase(r.ours);
      if (!p) return NA(r.ours ? "ours failed" : "ours not measured");
      if (p.eventsDropped === undefined) return NA("no events_dropped_total");
      const routine = p.eventsDroppedByReason?.routine ?? 0;
      const lost = p.eventsDropped - routine;
      const note = routine ? ` (${routine} routine left out by design)` : "";
      if (lost === 0) return { status: "met", text: `met: 0${note}` };
      const by = Object.entries(p.eventsDroppedByReason ?? {})
        .filter(([k]) => k !== "routine")
        .map(([k, v]) => `${k} ${v}`)
        .join(", ");
      return { status: "missed", text: `**missed**: ${lost} dropped${by ? ` (${by})` : ""}${note}` };
    },
  },
];

function targetsTable(r: Report): string {
  const lines = [
    `| target | ${r.results.map((x) => `N = ${x.n}`).join(" | ")} |`,
    `|---|${r.results.map(() => "---").join("|")}|`,
  ];
  for (const t of TARGETS) {
    lines.push(`| ${t.label} | ${r.results.map((x) => t.at(x, r)?.text ?? "—").join(" | ")} |`);
  }
  return lines.join("\n");
}

// --- the built-in's configurations -----------------------------------------------------------------

type BuiltinKey = "builtin" | "builtinTuned";

/** How a built-in configuration ran: its flags as passed, those its binary lacked (not passed), its workers. */
interface BuiltinFlags {
  args: string[];
  dropped: string[];
  workers: number;
}

/**
 * The flags of a built-in configuration as its phases ran it (the first N that ran it; every N runs the same
 * binary), else as the settings asked (a phase not run, or a report from before the phases kept them).
 */
function builtinFlags(r: Report, key: BuiltinKey): BuiltinFlags {
  const p = r.results.map((x) => x[key]).find((x) => x?.extraArgs !== undefined);
  const args =
    p?.extraArgs ??
    (key === "builtin" ? r.settings.builtinArgs : [...(r.settings.builtinTunedArgs ?? []), ...r.settings.builtinArgs]);
  return { args, dropped: p?.droppedArgs ?? [], workers: p?.workers ?? builtinWorkers(args) };
}

/** What kube-controller-manager's version lacked of a configuration's flags, for the report ("" for nothing). */
function droppedText(f: BuiltinFlags, version: string): string {
  return f.dropped.length
    ? ` (\`${f.dropped.join(" ")}\` not passed: ${version} lacks it; ${droppedArgsReason(f.dropped)})`
    : "";
}

/** The fully tuned built-in's flags as it ran them, its workers, and what its version lacked (Markdown). */
function tunedFlagsText(r: Report): string {
  const f = builtinFlags(r, "builtinTuned");
  return `\`${f.args.join(" ") || "n/a"}\`, ${f.workers} workers${droppedText(f, controllerVersion(r))}`;
}

/** What the fully tuned configuration raised: the workers only where its flag was passed (1.28+). */
function tunedRaised(r: Report): string {
  return builtinFlags(r, "builtinTuned").workers > builtinFlags(r, "builtin").workers
    ? "client-side rate limit and workers raised"
    : "client-side rate limit raised";
}

/** "kube-controller-manager v1.33.3": its `--version`, or the control plane's for reports from before it was kept. */
function controllerVersion(r: Report): string {
  return (
    r.machine.kubeControllerManager ?? r.machine.kubeApiserver.replace(/^kube-apiserver/, "kube-controller-manager")
  );
}

// --- where we stand --------------------------------------------------------------------------------

function limitsText(r: Report): string {
  const l = r.settings.operatorLimits;
  if (!l) return "ours ran without limits (no cgroup: this report predates them)";
  if (r.settings.cgroups?.startsWith("not available")) {
    return `cgroups were ${r.settings.cgroups}: ours ran **unbounded**, not under the Deployment's limits (${l.deployment})`;
  }
  const notApplied = r.results
    .filter((x) => x.ours?.cgroup && !x.ours.cgroup.applied)
    .map((x) => `N = ${x.n}: ${x.ours?.cgroup?.reason ?? "?"}`);
  return (
    (l.applied === "none"
      ? `ours ran in a cgroup without limits (${l.source})`
      : `ours ran in a cgroup with ${l.applied} (${l.source})`) +
    (notApplied.length ? ` — **except** ${notApplied.join("; ")}, where it ran unbounded` : "")
  );
}

function whereWeStand(r: Report): string {
  const out: string[] = [];
  out.push(
    `${limitsText(r)}; the anchor is the fully tuned built-in, the fair comparison: its ${tunedRaised(r)} ` +
      `(${tunedFlagsText(r)}); the built-in as it ships is shown for reference. ` +
      "Skew p99: 99 % of the measured Jobs were created within this time of their slot.",
    "",
  );
  for (const res of r.results) {
    const o = okPhase(res.ours);
    const t = okPhase(res.builtinTuned);
    const d = okPhase(res.builtin);
    const floor = floorOf(res);
    const parts: string[] = [];
    const skew = (p: PhaseResult) => `${num(p.analysis?.skew.p99)} s`;
    const misses = (p: PhaseResult) =>
      p.analysis ? `${p.analysis.missed} missed, ${p.analysis.duplicates} duplicates of ${p.analysis.expected}` : "n/a";
    if (o) {
      parts.push(
        `ours ${skew(o)}${floor ? ` (${num((o.analysis?.skew.p99 ?? NaN) / floor, 1)} × the ${num(floor)} s floor)` : ""}` +
          (t
            ? ` against ${skew(t)} for the fully tuned built-in (ours / tuned = ${num((o.analysis?.skew.p99 ?? NaN) / (t.analysis?.skew.p99 ?? NaN))})`
            : "") +
          (d ? ` and ${skew(d)} for the built-in as it ships (${d.analysis?.missed ?? "?"} runs missed)` : "") +
          ".",
        `Runs: ours ${misses(o)}${t ? `; tuned ${misses(t)}` : ""}.`,
        `Writes per run asked: ${num(o.writesPerRun)}${t ? ` vs ${num(t.writesPerRun)}` : ""}; ` +
          `CPU per run: ${num(o.cpuMsPerRunSteady)} ms${t ? ` vs ${num(t.cpuMsPerRunSteady)} ms` : ""}; ` +
          `kube-apiserver CPU per run: ${num(o.apiserverCpuMsPerRun)} ms${t ? ` vs ${num(t.apiserverCpuMsPerRun)} ms` : ""} ` +
          `(etcd ${num(o.etcdCpuMsPerRun)} ms${t ? ` vs ${num(t.etcdCpuMsPerRun)} ms` : ""}); ` +
          `sent per run: ${num(kb(o.bytesSentPerRun), 1)} KB${t ? ` vs ${num(kb(t.bytesSentPerRun), 1)} KB` : ""}; ` +
          `peak RSS ${num(o.peakRssMB, 0)} MB${t ? ` vs ${num(t.peakRssMB, 0)} MB` : ""}; ` +
          `cold start ${coldStartText(o)} s${t ? ` vs ${coldStartText(t)} s` : ""}.`,
      );
      const cgLine = throttledText(o);
      if (cgLine !== "n/a") parts.push(`ours' CPU was throttled in ${cgLine} after the cold start.`);
    } else {
      parts.push(res.ours ? "ours failed (see below)." : "ours not run.");
    }
    const verdicts = TARGETS.map((tg) => [tg, tg.at(res, r)] as const).filter(
      (x): x is readonly [Target, Verdict] => !!x[1] && x[1].status !== "n/a",
    );
    const met = verdicts.filter(([, v]) => v.status === "met").length;
    const missed = verdicts.filter(([, v]) => v.status === "missed");
    if (verdicts.length) {
      parts.push(
        `Targets: ${met} of ${verdicts.length} met` +
          (missed.length
            ? `; missed: ${missed.map(([tg, v]) => `${tg.label} (${v.text.replace(/^\*\*missed\*\*:? ?/, "")})`).join("; ")}.`
            : "."),
      );
    }
    out.push(`- **N = ${res.n}.** ${parts.join(" ")}`);
  }
  return out.join("\n");
}

function summaryTable(r: Report): string {
  const both = (f: (p: PhaseResult) => string, res: NResult) => {
    const o = okPhase(res.ours);
    const t = okPhase(res.builtinTuned);
    return `${o ? f(o) : res.ours ? "failed" : "—"} / ${t ? f(t) : res.builtinTuned ? "failed" : "—"}`;
  };
  const lines = [
    "| N | floor (s) | skew p99 (s), ours / tuned | ours ÷ tuned | missed runs | writes per run | CPU ms per run | kube-apiserver CPU ms per run | etcd CPU ms per run | KB sent per run | peak RSS (MB) | cold start (s) |",
    "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
  ];
  for (const res of r.results) {
    const o = okPhase(res.ours)?.analysis?.skew.p99;
    const t = okPhase(res.builtinTuned)?.analysis?.skew.p99;
    lines.push(
      `| ${res.n} | ${num(floorOf(res))} | ${both((p) => num(p.analysis?.skew.p99), res)} | ${o !== undefined && t ? num(o / t) : "n/a"} | ` +
        `${both((p) => String(p.analysis?.missed ?? "n/a"), res)} | ${both((p) => num(p.writesPerRun), res)} | ` +
        `${both((p) => num(p.cpuMsPerRunSteady), res)} | ${both((p) => num(p.apiserverCpuMsPerRun), res)} | ` +
        `${both((p) => num(p.etcdCpuMsPerRun), res)} | ${both((p) => num(kb(p.bytesSentPerRun), 1), res)} | ` +
        `${both((p) => num(p.peakRssMB, 0), res)} | ` +
        `${both((p) => (p.coldStartS !== undefined ? num(p.coldStartS, 1) : `> ${p.coldStartTimeoutS ?? 120}`), res)} |`,
    );
  }
  return lines.join("\n");
}

/** Bytes as KB (undefined stays undefined: num prints it as n/a). */
function kb(bytes: number | undefined): number | undefined {
  return bytes === undefined ? undefined : bytes / 1024;
}

const cgroupsMissing = (r: Report): boolean => r.settings.cgroups?.startsWith("not available") ?? false;

function sizingTable(r: Report): string {
  const l = r.settings.operatorLimits;
  const lines = [
    "| N | peak RSS (MB) | cgroup memory peak (MB) | V8 heap used at the end (MB) | CPU after the cold start (cores, average) | busiest second (cores) | CPU throttled after the cold start | cold start (s, CPU s) | OOM kills |",
    "|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
  ];
  const rows: Array<{ n: number; rss?: number; cores?: number }> = [];
  for (const res of r.results) {
    const p = okPhase(res.ours);
    if (!p) {
      lines.push(`| ${res.n} | ${res.ours ? "failed" : "not run"} | | | | | | | |`);
      continue;
    }
    const cores = p.cpuPerMinuteSteady !== undefined ? p.cpuPerMinuteSteady / 60 : undefined;
    rows.push({ n: res.n, rss: p.peakRssMB, cores });
    lines.push(
      `| ${res.n} | ${num(p.peakRssMB, 0)} | ${p.cgroup?.atEnd ? num(p.cgroup.atEnd.memoryMaxUsageBytes / MB, 0) : "n/a"} | ` +
        `${num(p.heapUsedMB, 0)} | ${num(cores)} | ${num(p.cpuPeakCores)} | ${throttledText(p)} | ` +
        `${p.coldStartS !== undefined ? num(p.coldStartS, 1) : `> ${p.coldStartTimeoutS ?? 120}`}, ${num(p.cpuColdStartSeconds, 1)} | ` +
        `${p.cgroup?.atEnd ? p.cgroup.atEnd.oomKills : "n/a"} |`,
    );
  }
  const out = [
    `Ours under ${!l || l.applied === "none" ? `no limits${cgroupsMissing(r) ? " (cgroups not available)" : ""}` : l.applied}${l?.v8HeapLimitMB !== undefined ? ` (V8's heap limit under it, with the Deployment's NODE_OPTIONS: ${num(l.v8HeapLimitMB, 0)} MB)` : ""}. ` +
      "Under a CPU limit the CPU columns cannot exceed it: throttling is the demand above it, and shows up as skew.",
    "",
    lines.join("\n"),
  ];
  const first = rows[0];
  const last = rows.at(-1);
  if (first && last && last.n > first.n && first.rss !== undefined && last.rss !== undefined) {
    const per1000 = ((last.rss - first.rss) / (last.n - first.n)) * 1000;
    const coresPer1000 =
      first.cores !== undefined && last.cores !== undefined
        ? ((last.cores - first.cores) / (last.n - first.n)) * 1000
        : undefined;
    out.push(
      "",
      `From N = ${first.n} to N = ${last.n}: peak RSS ${num(first.rss, 0)} → ${num(last.rss, 0)} MB ` +
        `(${num(per1000, 1)} MB per 1,000 CronJobs)` +
        (coresPer1000 !== undefined
          ? `, CPU after the cold start ${num(first.cores)} → ${num(last.cores)} cores (${num(coresPer1000, 3)} cores per 1,000 CronJobs running every minute)`
          : "") +
        ".",
    );
  }
  return out.join("\n");
}

/** A row of the write-cost table: a write of a run, the calibration batch that priced it. */
interface CostRow {
  label: string;
  /** apiserver_request_total's key of ours' writes of this kind (their count per run). */
  key: WriteCost["write"];
  patch?: WriteCost["patch"];
  /** An alternative to ours' status PUT (the same change written another way): priced, not in ours' sum. */
  instead?: true;
  /** Counted per Job ours created (the finisher completes each), not from ours' own writes. */
  perJob?: true;
}

const COST_ROWS: CostRow[] = [
  { label: "POST jobs (create)", key: "POST jobs" },
  { label: "POST events (SuccessfulCreate)", key: "POST events" },
  { label: "PUT cronjobs/status (the whole object)", key: "PUT cronjobs/status" },
  {
    label: "PATCH cronjobs/status, merge patch of the same change",
    key: "PATCH cronjobs/status",
    patch: "merge",
    instead: true,
  },
  {
    label: "PATCH cronjobs/status, JSON patch (RFC 6902) of it",
    key: "PATCH cronjobs/status",
    patch: "json",
    instead: true,
  },
  { label: "PATCH jobs/status (the finisher's completion)", key: "PATCH jobs/status", perJob: true },
  { label: "DELETE jobs (Background)", key: "DELETE jobs" },
];

/**
 * From the calibration, per N: what each kind of write of a run costs kube-apiserver (and etcd), JSON and, for
 * the creates of built-in kinds, protobuf, and the body each sends; the writes ours made per run after its cold
 * start (plus the finisher's completion of each Job it created); their sum at these rates against the
 * kube-apiserver CPU per run measured with ours, the sum with ours' status writes as a merge or a JSON patch
 * instead, and what protobuf for Job and Event creates would save per run.
 */
function writeCostTable(r: Report): string | undefined {
  const rows = r.results.filter((x) => x.calibration?.writeCosts?.length || x.calibration?.writeCostsError);
  if (!rows.length) return undefined;
  const out: string[] = [];
  for (const x of rows) {
    const c = x.calibration!;
    out.push(`N = ${x.n}${c.serverVersion ? ` (kube-apiserver ${c.serverVersion})` : ""}:`, "");
    if (c.writeCostsError || !c.writeCosts) {
      out.push(`**failed**: ${c.writeCostsError ?? "?"}`, "");
      continue;
    }
    const costs = c.writeCosts;
    const find = (row: CostRow, enc: WriteCost["encoding"]) =>
      costs.find(
        (e) => e.write === row.key && e.encoding === enc && (row.patch === undefined || e.patch === row.patch),
      );
    const o = okPhase(x.ours);
    const runs = o?.runsAsked;
    const byResource = o?.writesSteadyByResource;
    const ours = (key: string) => (runs && byResource ? (byResource[key] ?? 0) / runs : undefined);
    // Ours' status writes per run, whichever verb it used: what the alternatives would replace.
    const statusPerRun =
      runs && byResource
        ? ((byResource["PUT cronjobs/status"] ?? 0) + (byResource["PATCH cronjobs/status"] ?? 0)) / runs
        : undefined;
    const perRun = (row: CostRow) =>
      row.perJob ? ours("POST jobs") : row.key.startsWith("PUT cronjobs") || row.instead ? statusPerRun : ours(row.key);
    const lines = [
      "| write | body (bytes) | kube-apiserver (etcd) CPU ms per write, JSON | protobuf | ours per run after its cold start | kube-apiserver ms per run at this rate |",
      "|---|--:|--:|--:|--:|--:|",
    ];
    for (const row of COST_ROWS) {
      const j = find(row, "json");
      const p = row.key.startsWith("POST") ? find(row, "protobuf") : undefined;
      const k = perRun(row);
      const conditions = row.perJob && j?.conditions ? ` (${j.conditions.map((t) => `${t}=True`).join(" + ")})` : "";
      lines.push(
        `| ${row.label}${conditions} | ${j?.bodyBytes ?? "n/a"}${p?.bodyBytes !== undefined ? ` (protobuf ${p.bodyBytes})` : ""} | ` +
          `${num(j?.apiserverCpuMs)} (${num(j?.etcdCpuMs)}) | ${p ? `${num(p.apiserverCpuMs)} (${num(p.etcdCpuMs)})` : ""} | ` +
          `${row.instead ? `(${num(k)}, instead of the status writes)` : num(k)} | ${num(k !== undefined && j?.apiserverCpuMs !== undefined ? k * j.apiserverCpuMs : undefined)} |`,
      );
    }
    out.push(lines.join("\n"), "");
    // The sums: ours' writes as measured (status writes as a PUT), and with the status written as each patch.
    const rate = (row: CostRow) => find(row, "json")?.apiserverCpuMs;
    const sumWith = (status: CostRow) => {
      let sum: number | undefined = 0;
      for (const row of COST_ROWS) {
        if (row.instead || row.key === "PUT cronjobs/status") continue;
        const k = perRun(row);
        const v = rate(row);
        sum = sum === undefined || k === undefined || v === undefined ? undefined : sum + k * v;
      }
      const v = rate(status);
      return sum === undefined || statusPerRun === undefined || v === undefined ? undefined : sum + statusPerRun * v;
    };
    const [put, merge, json] = [COST_ROWS[2]!, COST_ROWS[3]!, COST_ROWS[4]!];
    let save: number | undefined = 0;
    for (const row of COST_ROWS.filter((w) => w.key.startsWith("POST"))) {
      const k = perRun(row);
      const j = rate(row);
      const p = find(row, "protobuf")?.apiserverCpuMs;
      save =
        save === undefined || k === undefined || j === undefined || p === undefined ? undefined : save + k * (j - p);
    }
    const patched = ours("PATCH cronjobs/status") ?? 0;
    out.push(
      (o
        ? `Ours' writes per run at these rates: **${num(sumWith(put))} ms** of kube-apiserver CPU with its status writes as ` +
          `PUTs, ${num(sumWith(merge))} ms as merge patches, ${num(sumWith(json))} ms as JSON patches; measured with ours: ` +
          `${num(o.apiserverCpuMsPerRun)} ms per run.` +
          (patched
            ? ` Ours sent ${num(patched)} of its ${num(statusPerRun)} status writes per run as a PATCH (which patch type the ` +
              "apiserver's counters do not say: the merge and the JSON patch sums bound it)."
            : "")
        : "Ours did not run at this N: no writes per run to price.") +
        (save !== undefined && o ? ` Protobuf for Job and Event creates would save ${num(save)} ms per run.` : ""),
      "",
    );
  }
  return out.join("\n").trimEnd();
}

/**
 * The report with `analysis`: what the profiles show is in the way of a missed target. Measurements are
 * generated; their reading is written by a person, in `<report>.analysis.md` beside the report, and
 * included as it is (so `--render` and `--update` keep it).
 */
export function renderMarkdown(r: Report, chartFile: string | undefined, analysis?: string): string {
  const s = r.settings;
  const m = r.machine;
  const defaults = builtinFlags(r, "builtin");
  const tuned = builtinFlags(r, "builtinTuned");
  const kcm = controllerVersion(r);
  const cgroups = s.cgroups !== undefined && !s.cgroups.startsWith("not available");
  const out: string[] = [
    `# CronJob benchmark — ${r.date}`,
    "",
    "ours (cronjob-operator, `dist/cmd/main.js` as the image runs it, " +
      (cgroups ? `in a cgroup with ${s.operatorLimits?.applied ?? "?"}) ` : "without limits: no cgroups) ") +
      `against the built-in CronJob controller (${kcm}, controller v2) in two configurations: ` +
      `**fully tuned** (${tunedRaised(r)}, \`${tuned.args.join(" ") || "n/a"}\`: ` +
      `${tuned.workers} workers${droppedText(tuned, kcm)}; the fair comparison) and **defaults** (as it ships: 20 qps, ` +
      `burst 30, ${defaults.workers} workers): the same workload on the same machine, each phase on a fresh ` +
      `${m.etcd} + ${m.kubeApiserver}. ` +
      "See [bench/README.md](../README.md) for what is measured and how to read it.",
    "",
  ];
  if (chartFile)
    out.push(
      `![Job creation skew percentiles against N, ours and the built-in, fully tuned and defaults](${chartFile})`,
      "",
    );
  out.push(
    "## Where we stand",
    "",
    whereWeStand(r),
    "",
    "### Ours against the fully tuned built-in (the fair comparison)",
    "",
    summaryTable(r),
    "",
    "Writes and CPU per run: after the cold start, divided by the runs each controller was asked to make (N × measured slots), " +
      "not by the Jobs it managed to create.",
    "",
    "### Targets",
    "",
    targetsTable(r),
    "",
    ...(analysis?.trim() ? ["### What is in the way", "", analysis.trim(), ""] : []),
    ...((pb) =>
      pb
        ? [
            "### What each write costs kube-apiserver, and the protobuf lever",
            "",
            "Measured in the calibration, after the floor, on the same control plane, one kind of write at a time, 48 in " +
              "flight, each batch from an idle kube-apiserver: N creates of the same Job and N Events like ours' SuccessfulCreate, " +
              "half in JSON and half in protobuf (`application/vnd.kubernetes.protobuf` request and response, as " +
              "kube-controller-manager sends; in the order JSON, protobuf, protobuf, JSON, so that the growing store weighs on " +
              "both alike; three objects of each protobuf batch read back and compared with what was sent), three batches of N " +
              "status writes of our CronJob, each the same change from the same state (a CronJob that has run every minute for " +
              "a while, 10 recentRuns, gets its next run's Job: the entry added, the oldest dropped, active, lastScheduleTime, " +
              "nextScheduleTime, the conditions), written as a PUT of the whole object (as ours' cache holds it, without " +
              "managedFields), as a merge patch of the " +
              "changed fields and as a JSON patch (RFC 6902: a `test` of the resourceVersion, the entry added at " +
              "/status/recentRuns/0, the 11th removed, the other changed fields replaced), all three conditional on the " +
              "resourceVersion read; N Job completions (the finisher's status patch) and N Job deletes (Background). " +
              "CPU per write is the batch's kube-apiserver (etcd) CPU over its writes; the body is what one write sends " +
              "(JSON; protobuf where given). The sum prices ours' writes per run (and the " +
              "finisher's completion of each Job) at these rates; what the measured figure holds beyond it is the rest of a " +
              "run's cost: the watch events every write sends to each watcher (ours', the finisher's and the benchmark's " +
              "Job watches), writes competing with each other, kube-apiserver's background work.",
            "",
            pb,
            "",
          ]
        : [])(writeCostTable(r)),
    "### Sizing the Deployment",
    "",
    sizingTable(r),
    "",
    ...(r.results.some((res) => res.oursShards?.length)
      ? [
          "### Shards: one instance against several active ones",
          "",
          "Ours with `--sharding`: K replicas, all active, each in a cgroup of its own with the limits one instance has " +
            "(the same column's), the namespaces divided between them. Each shard's CPU is its own after the cold start; " +
            "its memory its process's peak RSS (its cgroup's peak, which also counts the page cache of its log, beside " +
            "it). The namespaces are the cluster's, the four system ones included. Targets at 4 shards: each shard's CPU " +
            "and peak RSS at most " +
            `${SHARD_TARGETS.perShardRatio} × one instance's, kube-apiserver's CPU per run at most ` +
            `${SHARD_TARGETS.apiserverRatio} × one instance's. After the measured window, in the same run: a shard ` +
            "joins (the namespaces whose claim changed holder; ideal: namespaces / (K + 1)), then the shard holding the " +
            "most namespaces is SIGKILLed 3 s before a minute slot (its Lease lasts 15 s: its namespaces are taken once " +
            "it has been quiet that long), and the slots from the join to the kill's are checked for missed runs and " +
            "duplicates.",
          "",
          ...r.results.flatMap((res) => [
            shardsTable(res.n, res.ours, res.oursShards ?? []),
            "",
            ...(res.oursShards ?? [])
              .filter((p) => !p.ok)
              .map((p) => `${p.shardCount ?? "?"} shards at N = ${res.n} failed: ${p.error ?? "?"}\n`),
          ]),
        ]
      : []),
    "## Setup",
    "",
    `- Machine: ${m.nproc} CPUs (${m.cpuModel}), ${m.memGiB.toFixed(1)} GiB RAM, Linux ${m.kernel}, Node ${m.node}; ` +
      `load average (1, 5, 15 min) ${r.loadavgAtStart ?? "?"} at the start, ${r.loadavgAtEnd ?? "?"} at the end ` +
      "(per phase in the details).",
    `- Control plane: ${m.etcd}, ${m.kubeApiserver}${m.kubeControllerManager ? `, ${m.kubeControllerManager}` : ""} ` +
      "(hack/setup-envtest), TLS + token auth on loopback.",
    `- Workload: N CronJobs \`* * * * *\` spread over ${s.namespaces} namespaces, one-container Job template, ` +
      `successfulJobsHistoryLimit = failedJobsHistoryLimit = ${s.historyLimit} (so every minute each CronJob also ` +
      `deletes a Job), concurrencyPolicy Allow. No Job controller runs: a test-side finisher marks every Job ` +
      `Complete (a merge patch of the status subresource: startTime, completionTime, succeeded 1, ` +
      `${finisherConditionsText(r)}) ${s.finishAfterS} s after it appears.` +
      (s.groups
        ? ` Ours only (the built-in has no concurrency groups): every fifth CronJob (i mod 5 = 0) is in one of ` +
          `${s.groups} ConcurrencyGroups of its namespace, whose limit never holds a run.`
        : "") +
      (s.calendars
        ? ` Ours only (the built-in has no calendars): every fifth CronJob (i mod 5 = 1) names one of ` +
          `${s.calendars} ExclusionCalendars of its namespace (10 whole days in the past year and the 1st of a month ` +
          "six months away) and has a window of its own (a week a year ago): no window holds a slot during the run, " +
          "so the runs are the same and what differs is reading and applying exclusions."
        : ""),
    `- Measured: the ${s.minutes} minute slots that follow the controller's cold start; the measurement ends 50 s after the ` +
      "last one (late Jobs of the last slot are watched for up to 2 min more). Writes are kube-apiserver's " +
      "`apiserver_request_total` deltas (POST/PUT/PATCH/DELETE) minus the finisher's `jobs/status` patches and what " +
      `is not the controller's (${NOT_COUNTED.join(", ")}).`,
    `- ours: \`--max-concurrent-reconciles ${s.workers}\`${s.nodeOptions ? `, NODE_OPTIONS=${s.nodeOptions}` : ""}` +
      `${s.operatorNodeArgs.length ? `, node ${s.operatorNodeArgs.join(" ")}` : ""}; ${limitsText(r)}` +
      (s.operatorLimits ? `; the Deployment's limits are ${s.operatorLimits.deployment}` : "") +
      (s.operatorLimits?.v8HeapLimitMB !== undefined
        ? `; V8 heap limit inside: ${num(s.operatorLimits.v8HeapLimitMB, 0)} MB`
        : "") +
      ".",
    `- built-in: ${kcm}, \`--controllers=cronjob\` (and \`--feature-gates=CronJobControllerV2=true\` before 1.21); ` +
      `**defaults**: client-side rate limit as it ships (--kube-api-qps 20, --kube-api-burst 30), ` +
      `${defaults.workers} workers (ConcurrentCronJobSyncs)` +
      `${defaults.args.length ? `, with \`${defaults.args.join(" ")}\` (BUILTIN_ARGS)` : ""}${droppedText(defaults, kcm)}; ` +
      `**fully tuned** (the fair comparison, as a platform team tunes it: ${tunedRaised(r)}): ` +
      `\`${tuned.args.join(" ") || "n/a"}\`, ${tuned.workers} workers${droppedText(tuned, kcm)}` +
      `${s.builtinArgs.length ? ` (BUILTIN_ARGS \`${s.builtinArgs.join(" ")}\` included)` : ""}. ` +
      (cgroups
        ? "Each runs in a cgroup without limits (the same accounting and CPU scheduling as ours; " +
          "kube-controller-manager's static pod sets no limits)."
        : "Unbounded, as is ours here."),
    `- cgroups: ${s.cgroups ?? "not used (this report predates them)"}.`,
    `- Calibration: N raw Job creates with ${s.inFlight} requests in flight through runtime/client.ts.`,
    "",
    "## Commands",
    "",
    "```sh",
    r.command,
    "# ours, per N (ports and paths vary; started through a wrapper that joins the cgroup first):",
    r.commands.ours ?? "(not run)",
    "# built-in (fully tuned), per N:",
    r.commands.builtinTuned ?? "(not run)",
    "# built-in (defaults), per N:",
    r.commands.builtin ?? "(not run)",
    "```",
    "",
    "## Results",
    "",
  );
  for (const res of r.results) {
    const c = res.calibration;
    out.push(`### N = ${res.n}`, "");
    if (c) {
      out.push(
        c.error
          ? `Calibration failed: ${c.error}`
          : `Calibration: ${c.n} raw Job creates, ${c.inFlight} in flight, in ${num(c.seconds)} s → ` +
              `**${num(c.perSecond, 0)} creates/s**; the floor (N / throughput) is ${num(floorOf(res))} s` +
              (c.loadavgBefore ? ` (load average ${c.loadavgBefore} → ${c.loadavgAfter ?? "?"})` : "") +
              "." +
              (c.apiserverCpuMsPerCreate !== undefined
                ? ` A bare create cost kube-apiserver ${num(c.apiserverCpuMsPerCreate)} ms and etcd ` +
                  `${num(c.etcdCpuMsPerCreate)} ms of CPU.`
                : ""),
        "",
      );
    }
    out.push(table(res), "");
    for (const sys of SYSTEMS) out.push(details(sys.label, res[sys.key], res));
  }
  out.push(`Started ${r.startedAt}, finished ${r.finishedAt ?? "(in progress)"}.`, "");
  return out.join("\n");
}

// --- chart -----------------------------------------------------------------------------------------

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

type Pct = "p50" | "p90" | "p99" | "max";
const PCTS: Array<{ key: Pct; dash: string; marker: "circle" | "square" | "triangle" | "diamond" }> = [
  { key: "p50", dash: "", marker: "circle" },
  { key: "p90", dash: "8 4", marker: "square" },
  { key: "p99", dash: "3 3", marker: "triangle" },
  { key: "max", dash: "1 4", marker: "diamond" },
];

function marker(kind: string, x: number, y: number, color: string): string {
  const r = 5;
  switch (kind) {
    case "square":
      return `<rect x="${x - r}" y="${y - r}" width="${2 * r}" height="${2 * r}" fill="${color}"/>`;
    case "triangle":
      return `<polygon points="${x},${y - r - 1} ${x - r - 1},${y + r} ${x + r + 1},${y + r}" fill="${color}"/>`;
    case "diamond":
      return `<polygon points="${x},${y - r - 1} ${x + r + 1},${y} ${x},${y + r + 1} ${x - r - 1},${y}" fill="${color}"/>`;
    default:
      return `<circle cx="${x}" cy="${y}" r="${r}" fill="${color}"/>`;
  }
}

/** Skew percentiles (log scale) against N, one colour per controller, one dash/marker per percentile. */
export function renderSvg(r: Report): string {
  const W = 1040;
  const H = 700;
  const L = 80;
  const R = 330;
  const T = 90;
  const B = 70;
  const pw = W - L - R;
  const ph = H - T - B;
  const ns = r.results.map((x) => x.n);
  const values: number[] = [];
  for (const res of r.results) {
    for (const sys of SYSTEMS) {
      const a = res[sys.key]?.ok ? res[sys.key]?.analysis : undefined;
      if (a) for (const p of PCTS) values.push(a.skew[p.key]);
    }
    const f = floorOf(res);
    if (f) values.push(f);
  }
  const positive = values.filter((v) => v > 0);
  const lo = Math.pow(10, Math.floor(Math.log10(Math.max(0.01, Math.min(...positive, 1)))));
  const hi = Math.pow(10, Math.ceil(Math.log10(Math.max(...positive, 1) * 1.05)));
  const y = (v: number) =>
    T + ph - ((Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * ph;
  const x = (i: number) => (ns.length === 1 ? L + pw / 2 : L + 40 + (i * (pw - 80)) / (ns.length - 1));
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="DejaVu Sans, sans-serif">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${L}" y="30" font-size="20" font-weight="bold">Job creation skew vs N: ours vs the built-in CronJob controller</text>`,
    `<text x="${L}" y="52" font-size="13" fill="#555">${esc(
      `Job created − scheduled time, seconds, log scale, lower is better. ${r.settings.minutes} min per run, ` +
        `${r.settings.namespaces} namespaces, ${r.machine.nproc} CPUs, ${r.date}.`,
    )}</text>`,
    `<text x="${L}" y="70" font-size="13" fill="#555">${esc(
      `ours under ${r.settings.operatorLimits?.applied ?? "no limits"}` +
        (r.settings.operatorLimits && r.settings.cgroups?.startsWith("not available")
          ? " (not applied: no cgroups)"
          : "") +
        `; built-in fully tuned: ${tunedFlagsText(r).replaceAll("`", "")}; defaults: client QPS 20, burst 30, 5 workers.`,
    )}</text>`,
  ];
  // grid and y labels
  for (let d = Math.log10(lo); d <= Math.log10(hi) + 1e-9; d++) {
    const v = Math.pow(10, d);
    const yy = y(v);
    parts.push(`<line x1="${L}" y1="${yy}" x2="${L + pw}" y2="${yy}" stroke="#ccc"/>`);
    parts.push(
      `<text x="${L - 8}" y="${yy + 4}" font-size="12" text-anchor="end">${v >= 1 ? v.toFixed(0) : String(+v.toPrecision(1))} s</text>`,
    );
    if (v * 10 <= hi * 1.0001) {
      for (const k of [2, 5]) {
        const ym = y(v * k);
        parts.push(`<line x1="${L}" y1="${ym}" x2="${L + pw}" y2="${ym}" stroke="#eee"/>`);
      }
    }
  }
  parts.push(`<rect x="${L}" y="${T}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>`);
  ns.forEach((n, i) => {
    parts.push(`<text x="${x(i)}" y="${T + ph + 20}" font-size="13" text-anchor="middle">${n}</text>`);
  });
  parts.push(
    `<text x="${L + pw / 2}" y="${H - 22}" font-size="13" text-anchor="middle">N (CronJobs, each running every minute)</text>`,
  );
  parts.push(
    `<text x="20" y="${T + ph / 2}" font-size="13" text-anchor="middle" transform="rotate(-90 20 ${T + ph / 2})">skew (s)</text>`,
  );
  // floor
  const floorPts = r.results.map((res, i) => [i, floorOf(res)] as const).filter((p): p is [number, number] => !!p[1]);
  if (floorPts.length) {
    if (floorPts.length > 1) {
      parts.push(
        `<polyline fill="none" stroke="#777" stroke-width="2" stroke-dasharray="6 4" points="${floorPts.map(([i, v]) => `${x(i)},${y(v)}`).join(" ")}"/>`,
      );
    }
    for (const [i, v] of floorPts)
      parts.push(
        `<line x1="${x(i) - 14}" y1="${y(v)}" x2="${x(i) + 14}" y2="${y(v)}" stroke="#777" stroke-width="3"/>`,
      );
  }
  // series
  SYSTEMS.forEach((sys, si) => {
    const offset = (si - (SYSTEMS.length - 1) / 2) * 10; // keep the controllers' markers apart at the same N
    for (const p of PCTS) {
      const pts: Array<[number, number]> = [];
      r.results.forEach((res, i) => {
        const ph_ = res[sys.key];
        if (ph_?.ok && ph_.analysis) pts.push([x(i) + offset, y(ph_.analysis.skew[p.key])]);
      });
      if (pts.length > 1) {
        parts.push(
          `<polyline fill="none" stroke="${sys.color}" stroke-width="2" ${p.dash ? `stroke-dasharray="${p.dash}"` : ""} points="${pts.map(([a, b]) => `${a},${b}`).join(" ")}"/>`,
        );
      }
      for (const [a, b] of pts) parts.push(marker(p.marker, a, b, sys.color));
    }
  });
  // legend
  let ly = T + 10;
  const lx = L + pw + 20;
  for (const sys of SYSTEMS) {
    parts.push(
      `<text x="${lx}" y="${ly + 4}" font-size="13" font-weight="bold" fill="${sys.color}">${sys.label}</text>`,
    );
    ly += 20;
    for (const p of PCTS) {
      parts.push(
        `<line x1="${lx}" y1="${ly}" x2="${lx + 36}" y2="${ly}" stroke="${sys.color}" stroke-width="2" ${p.dash ? `stroke-dasharray="${p.dash}"` : ""}/>`,
      );
      parts.push(marker(p.marker, lx + 18, ly, sys.color));
      parts.push(`<text x="${lx + 46}" y="${ly + 4}" font-size="12">${p.key}</text>`);
      ly += 20;
    }
    ly += 10;
  }
  parts.push(
    `<line x1="${lx}" y1="${ly}" x2="${lx + 36}" y2="${ly}" stroke="#777" stroke-width="2" stroke-dasharray="6 4"/>`,
  );
  parts.push(`<text x="${lx + 46}" y="${ly + 4}" font-size="12">floor: N / raw create rate</text>`);
  ly += 30;
  for (const res of r.results) {
    for (const sys of SYSTEMS) {
      const p = res[sys.key];
      if (!p) continue;
      const text = !p.ok ? "failed" : `missed ${p.analysis?.missed ?? "?"}, dup ${p.analysis?.duplicates ?? "?"}`;
      if (ly > H - 10) break;
      parts.push(
        `<text x="${lx}" y="${ly}" font-size="11" fill="${sys.color}">N=${res.n} ${sys.label}: ${esc(text)}</text>`,
      );
      ly += 16;
    }
  }
  parts.push("</svg>");
  return parts.join("\n") + "\n";
}

function hasRsvg(): boolean {
  try {
    execFileSync("rsvg-convert", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Write <out>.md, .svg, .png (if rsvg-convert is installed) and .json. Returns the files written. */
export async function writeReport(r: Report, outPath: string): Promise<string[]> {
  mkdirSync(dirname(outPath), { recursive: true });
  const base = outPath.replace(/\.md$/, "");
  const svgFile = `${base}.svg`;
  const pngFile = `${base}.png`;
  const written: string[] = [];
  writeFileSync(svgFile, renderSvg(r));
  written.push(svgFile);
  let chart: string | undefined = basename(svgFile);
  if (hasRsvg()) {
    try {
      execFileSync("rsvg-convert", ["-o", pngFile, svgFile]);
      chart = basename(pngFile);
      written.push(pngFile);
    } catch (err) {
      process.stderr.write(`bench: rsvg-convert failed (${(err as Error).message}); the report links the SVG\n`);
    }
  } else {
    process.stderr.write("bench: rsvg-convert not found (apt-get install -y librsvg2-bin); the report links the SVG\n");
  }
  const analysisFile = `${base}.analysis.md`;
  const analysis = existsSync(analysisFile) ? readFileSync(analysisFile, "utf8") : undefined;
  writeFileSync(outPath, renderMarkdown(r, chart, analysis));
  written.push(outPath);
  // The raw numbers, formatted the way `prettier --check .` (make lint) expects.
  const jsonFile = `${base}.json`;
  const cfg = (await resolveConfig(jsonFile)) ?? {};
  writeFileSync(jsonFile, await format(JSON.stringify(r), { ...cfg, parser: "json" }));
  written.push(jsonFile);
  return written;
}
