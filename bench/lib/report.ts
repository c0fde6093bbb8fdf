// The report: Markdown with a table per N, an SVG chart of skew percentiles against N converted to PNG
// (rsvg-convert, from Debian's librsvg2-bin), and the raw numbers as JSON.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { basename, dirname } from "node:path";
import { format, resolveConfig } from "prettier";
import { type CalibrationResult, COLD_START_TIMEOUT_MS, NOT_COUNTED, type PhaseResult } from "./phases.ts";

export interface NResult {
  n: number;
  calibration?: CalibrationResult;
  ours?: PhaseResult;
  builtin?: PhaseResult;
}

export interface Machine {
  nproc: number;
  cpuModel: string;
  memGiB: number;
  kernel: string;
  node: string;
  kubeApiserver: string;
  etcd: string;
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
    workers: number;
    inFlight: number;
    finishAfterS: number;
    historyLimit: number;
    builtinArgs: string[];
    operatorNodeArgs: string[];
  };
  machine: Machine;
  commands: { ours?: string; builtin?: string };
  results: NResult[];
}

const num = (x: number | undefined, digits = 2): string =>
  x === undefined || !Number.isFinite(x) ? "n/a" : x.toFixed(digits);

function floorOf(r: NResult): number | undefined {
  const c = r.calibration;
  return c && Number.isFinite(c.perSecond) && c.perSecond > 0 ? r.n / c.perSecond : undefined;
}

function cell(p: PhaseResult | undefined, f: (p: PhaseResult) => string): string {
  if (!p) return "not run";
  if (!p.ok) return "failed (see below)";
  return f(p);
}

function table(r: NResult): string {
  const floor = floorOf(r);
  const rows: Array<[string, (p: PhaseResult) => string]> = [
    ["skew p50 (s)", (p) => num(p.analysis?.skew.p50)],
    ["skew p90 (s)", (p) => num(p.analysis?.skew.p90)],
    ["skew p99 (s)", (p) => num(p.analysis?.skew.p99)],
    ["skew max (s)", (p) => num(p.analysis?.skew.max)],
    [
      `skew p99 / floor (floor = N / throughput = ${num(floor)} s)`,
      (p) => (floor && p.analysis ? num(p.analysis.skew.p99 / floor) : "n/a"),
    ],
    ["missed slots", (p) => (p.analysis ? `${p.analysis.missed} of ${p.analysis.expected}` : "n/a")],
    ["duplicate runs", (p) => String(p.analysis?.duplicates ?? "n/a")],
    ["apiserver writes per Job run", (p) => num(p.writesPerJob)],
    ["CPU s (whole run)", (p) => num(p.cpuSeconds, 1)],
    ["CPU s per minute, steady state", (p) => num(p.cpuPerMinuteSteady)],
    ["peak RSS (MB)", (p) => num(p.peakRssMB, 0)],
    [
      "cold start (s)",
      (p) =>
        p.coldStartS !== undefined
          ? num(p.coldStartS, 1)
          : `> ${COLD_START_TIMEOUT_MS / 1000} (queue never empty${p.firstNProcessedS !== undefined ? `; N items done at ${num(p.firstNProcessedS, 1)}` : ""})`,
    ],
  ];
  const lines = ["| | ours | built-in |", "|---|--:|--:|"];
  for (const [label, f] of rows) lines.push(`| ${label} | ${cell(r.ours, f)} | ${cell(r.builtin, f)} |`);
  return lines.join("\n");
}

function details(label: string, p: PhaseResult | undefined): string {
  if (!p) return `**${label}**: not run.\n`;
  const out: string[] = [`**${label}**`, ""];
  if (!p.ok) {
    out.push(`Failed: ${p.error ?? "unknown error"}`, "");
    if (p.logFile) out.push(`Log: \`${p.logFile}\` (last lines):`, "", "```", p.logTail ?? "", "```", "");
    return out.join("\n");
  }
  const a = p.analysis;
  if (a) {
    out.push(
      `- window: ${a.window.length} slots, ${a.window[0]} … ${a.window.at(-1)}; ${a.jobsInWindow} Jobs in the window, ` +
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
      ` (${num(p.cpuColdStartSeconds, 1)} CPU s by then); run ${num(p.runSeconds, 0)} s`,
    `- apiserver writes by the controller: ${p.writes ?? "n/a"} — ` +
      Object.entries(p.writesByResource ?? {})
        .sort(([, x], [, y]) => y - x)
        .map(([k, v]) => `${k} ${v}`)
        .join(", "),
  );
  const failed = Object.entries(p.failedWritesByResource ?? {});
  if (failed.length) out.push(`- of which failed (4xx/5xx): ${failed.map(([k, v]) => `${k} ${v}`).join(", ")}`);
  out.push(
    `- finisher: ${p.finisherPatches ?? 0} jobs/status patches (${p.finisherErrors ?? 0} errors), not counted above`,
  );
  if (p.controllerRequests) {
    out.push(
      `- the controller's own client (rest_client_requests_total, method code): ` +
        Object.entries(p.controllerRequests)
          .map(([k, v]) => `${k}: ${v}`)
          .join(", "),
    );
  }
  if (p.reconcilesByResult) {
    out.push(
      `- reconciles by result: ${Object.entries(p.reconcilesByResult)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")}; errors ${p.reconcileErrors ?? 0}`,
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
    out.push(`- kube-apiserver CPU during the run: ${num(p.apiserverCpuSeconds, 1)} s`);
  out.push("");
  return out.join("\n");
}

export function renderMarkdown(r: Report, chartFile: string | undefined): string {
  const s = r.settings;
  const m = r.machine;
  const out: string[] = [
    `# CronJob benchmark — ${r.date}`,
    "",
    "ours (cronjob-operator, `dist/cmd/main.js` as the image runs it) against the built-in CronJob controller (kube-controller-manager " +
      "v1.20.2, controller v2), the same workload on the same machine, each phase on a fresh etcd + kube-apiserver. " +
      "See [bench/README.md](../README.md) for what is measured and how to read it.",
    "",
  ];
  if (chartFile) out.push(`![Job creation skew percentiles against N, ours and built-in](${chartFile})`, "");
  out.push(
    "## Setup",
    "",
    `- Machine: ${m.nproc} CPUs (${m.cpuModel}), ${m.memGiB.toFixed(1)} GiB RAM, Linux ${m.kernel}, Node ${m.node}.`,
    `- Control plane: ${m.etcd}, ${m.kubeApiserver} (hack/setup-envtest), TLS + token auth on loopback.`,
    `- Workload: N CronJobs \`* * * * *\` spread over ${s.namespaces} namespaces, one-container Job template, ` +
      `successfulJobsHistoryLimit = failedJobsHistoryLimit = ${s.historyLimit} (so every minute each CronJob also ` +
      `deletes a Job), concurrencyPolicy Allow. No Job controller runs: a test-side finisher marks every Job ` +
      `Complete (status subresource) ${s.finishAfterS} s after it appears.`,
    `- Measured: the ${s.minutes} minute slots that follow the controller's cold start; the run ends 50 s after the ` +
      "last one. Writes, CPU and memory cover the whole run, cold start included. Writes are kube-apiserver's " +
      "`apiserver_request_total` deltas (POST/PUT/PATCH/DELETE) minus the finisher's `jobs/status` patches and what " +
      `is not the controller's (${NOT_COUNTED.join(", ")}), divided by the Jobs created.`,
    `- ours: \`--max-concurrent-reconciles ${s.workers}\`${s.operatorNodeArgs.length ? `, node ${s.operatorNodeArgs.join(" ")}` : ""}. ` +
      "built-in: `--controllers=cronjob --feature-gates=CronJobControllerV2=true`, 5 workers (ConcurrentCronJobSyncs " +
      `default), ${s.builtinArgs.length ? `extra flags \`${s.builtinArgs.join(" ")}\`` : "client-side rate limit at its defaults (--kube-api-qps 20, --kube-api-burst 30)"}.`,
    `- Calibration: N raw Job creates with ${s.inFlight} requests in flight through runtime/client.ts.`,
    "",
    "## Commands",
    "",
    "```sh",
    r.command,
    "# ours, per N (ports and paths vary):",
    r.commands.ours ?? "(not run)",
    "# built-in, per N:",
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
              `**${num(c.perSecond, 0)} creates/s**; the floor (N / throughput) is ${num(floorOf(res))} s.`,
        "",
      );
    }
    out.push(table(res), "", details("ours", res.ours), details("built-in", res.builtin));
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
const SYSTEMS: Array<{ key: "ours" | "builtin"; label: string; color: string }> = [
  { key: "ours", label: "ours", color: "#1f6fb4" },
  { key: "builtin", label: "built-in", color: "#d0402b" },
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
  const W = 980;
  const H = 560;
  const L = 80;
  const R = 250;
  const T = 70;
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
      `Job created − scheduled time, seconds, log scale, lower is better. ${r.settings.minutes} min per run, ${r.settings.namespaces} namespaces, ${r.machine.nproc} CPUs, ${r.date}.`,
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
    const offset = (si - 0.5) * 10; // keep the two controllers' markers apart at the same N
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
  writeFileSync(outPath, renderMarkdown(r, chart));
  written.push(outPath);
  // The raw numbers, formatted the way `prettier --check .` (make lint) expects.
  const jsonFile = `${base}.json`;
  const cfg = (await resolveConfig(jsonFile)) ?? {};
  writeFileSync(jsonFile, await format(JSON.stringify(r), { ...cfg, parser: "json" }));
  written.push(jsonFile);
  return written;
}
