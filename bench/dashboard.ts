// The dashboard's benchmark (make bench-dashboard): `kubectl cron dashboard -A` over N CronJobs in a real
// kube-apiserver, the page driven by a real browser (Debian's headless Chromium through puppeteer-core, as the
// dashboard's integration test drives it). Never part of `make test`.
//
//   make bench-dashboard                                  # N=5000, 3 runs
//   node_modules/.bin/node bench/dashboard.ts --n=1000 --runs=1 --out=/tmp/dashboard.md
//
// The cluster: envtest's etcd and kube-apiserver with the CRDs, no operator, no controller. N CronJobs of ours over
// 5 namespaces with several schedules (hourly, every 15 minutes, every 6 hours, daily), every tenth in one of two
// ConcurrencyGroups of its namespace, and every third with the last day's record (status.recentRuns: a Created
// entry per run) and 1–3 Jobs with the Job controller's status (complete, failed, or the newest running), as
// test/dashboard-fleet.ts stages them. Each run starts the plugin as a user runs it (the launcher, which runs the
// bundle `make plugin` built: its Node flags included) and a fresh Chromium, and measures:
//   URL printed    command start → the URL on stdout (wall clock here): Node's start, the modules, the first
//                  screen's read (issue 72: the informers' lists go on behind it) and the server listening
//   first row      navigation start → the first `[data-id]` row in the DOM, and the frame after it (in the page:
//                  performance.now(), whose origin is the navigation's start; "the frame" = a requestAnimationFrame
//                  callback then a task: the rows have been laid out and painted)
//   first paint    navigation start → the first 20 rows with their marks loaded (`[data-id] svg[data-marks=loaded]`)
//                  and the frame after it, and the same from the command's start (the target: every load, not the
//                  median); every row in view is loaded then (one /api/marks request asks for them all)
//   whole fleet    command start → the page counts every CronJob (the first screen may come alone before it)
//   filter         in the page: the name filter's value set and an `input` event dispatched → `[data-count]` changed
//                  (MutationObserver) and the frame after it; several substrings per run, each cleared back to N
//                  rows (measured the same way); median and max over every run
//   verdicts       command start → the page holds why -A's verdicts (`[data-verdicts]` set; the page's clock mapped to the wall clock by
//                  performance.timeOrigin): why -A's verdicts, read by the dashboard after its initial lists
//   a change       a CronJob in view (the name filter) patched to name a calendar that does not exist → its row's
//                  calendar-not-found badge (wall clock): the verdict of a change, not of the start
//   peak RSS       VmHWM of the dashboard's process (/proc/PID/status) after the first paint and after the verdicts
//                  (and the filters); `kubectl cron why -A` (the launcher, under /usr/bin/time) on the same fleet
// With --baseline=DIR (a git worktree of another commit, its plugin built there with its own node_modules), each run
// starts that commit's launcher and this one's in turn, so both meet the same machine; the report has a section each.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { execFileSync } from "node:child_process";
import type { Browser, Page } from "puppeteer-core";
import { CronJobResource } from "../api/v1/index.ts";
import { PROJECT_ROOT, TestEnv } from "../envtest/index.ts";
import { Client } from "../runtime/client.ts";
import { startBrowser } from "../envtest/browser.ts";
import { LAUNCHER, type RunningDashboard, startDashboard } from "../envtest/dashboard-process.ts";
import { changedIn, createFleet, describeFleet, fleetShape, IN_FLIGHT } from "./lib/fleet.ts";
import { sleep } from "./lib/pool.ts";
import { cpuSeconds, memory } from "./lib/proc.ts";

const { values } = parseArgs({
  options: {
    n: { type: "string", default: process.env.N ?? "5000" },
    runs: { type: "string", default: process.env.RUNS ?? "3" },
    // The fleet's shape (bench/lib/fleet.ts): fleet (no operator), or incident (the operator installed and stopped).
    shape: { type: "string", default: process.env.SHAPE || "fleet" },
    out: { type: "string", default: process.env.OUT },
    // Create the fleet, print the kubeconfig and wait (Ctrl-C): to profile the plugin by hand against it.
    hold: { type: "boolean", default: false },
    // Another commit's checkout with its plugin built (make plugin there): measured in turn with this one.
    baseline: { type: "string", default: process.env.BASELINE },
  },
});
// A relative BASELINE is the caller's (the runs start from other directories).
if (values.baseline) values.baseline = resolve(values.baseline);
const N = Number(values.n);
const RUNS = Number(values.runs);
const SHAPE = fleetShape(values.shape);
const MB = 2 ** 20;
/** Every bounded wait of a run. */
const PAINT_TIMEOUT_MS = 60_000;
const VERDICT_TIMEOUT_MS = 90_000;
const FILTER_TIMEOUT_MS = 10_000;
/** Substrings typed into the name filter: from one match to a fifth of the fleet (names are cj-00000 … cj-0NNNN). */
const FILTERS = ["cj-00421", "cj-012", "cj-03", "7", "bench-2/", "cj-1"];
/** Rows that must have their marks for the first paint (issue 72: "the first 20 rows painted with their marks"). */
const FIRST_ROWS = 20;
/** Issue 63's and 72's: at 5,000 CronJobs, on an idle 2-core machine; first paint and memory in every load. */
const TARGETS = {
  firstPaintS: 1,
  filterMs: 50,
  rssMB: 100,
  urlS: 1.5,
  verdictsAfterUrlS: 2,
  changeVerdictS: 5,
  screenMarksMs: 100,
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const max = (xs: number[]) => Math.max(...xs);
const min = (xs: number[]) => Math.min(...xs);

// ---------- in the page ----------

/** Installed before the page's own script: when the first row, the first loaded marks and the first badge appear. */
const INSTRUMENT = `(() => {
  const b = (window.__bench = {});
  const firstRows = ${Math.min(FIRST_ROWS, N)};
  const frame = (k) => requestAnimationFrame(() => setTimeout(() => { b[k] = performance.now(); }, 0));
  const mo = new MutationObserver(() => {
    const t = performance.now();
    if (b.firstRow === undefined && document.querySelector("[data-id]")) { b.firstRow = t; frame("firstRowFrame"); }
    if (b.firstMarks === undefined && document.querySelectorAll("[data-id] svg[data-marks=loaded]").length >= firstRows) {
      b.firstMarks = t;
      b.rowsInView = document.querySelectorAll("[data-id]").length;
      b.pendingAtFirstMarks = document.querySelectorAll("[data-id] svg[data-marks=pending]").length;
      frame("firstMarksFrame");
    }
    // The verdicts reached the page: the attention filter says when why -A read the fleet (its badges show only on
    // the rows in view that need attention, which may be none of them).
    if (b.attention === undefined && document.querySelector("[data-verdicts]:not([data-verdicts=''])")) b.attention = t;
    // Every CronJob counted: the whole fleet, not only the first screen.
    if (b.whole === undefined && document.querySelector('.count[data-count="${N}"]')) b.whole = t;
    if (b.firstRow !== undefined && b.firstMarks !== undefined && b.attention !== undefined && b.whole !== undefined) mo.disconnect();
  });
  mo.observe(document, { childList: true, subtree: true, attributes: true, attributeFilter: ["data-marks", "data-verdicts", "data-count"] });
})();`;

/** In the page: sets the name filter to `value` and resolves when [data-count] changed, and after the next frame. */
const filterIn = (value: string) => `new Promise((resolve) => {
  const input = document.querySelector("input[name=name]");
  const count = document.querySelector("[data-count]");
  const before = count.getAttribute("data-count");
  let t0 = 0;
  const timer = setTimeout(() => { mo.disconnect(); resolve({ timeout: true }); }, ${FILTER_TIMEOUT_MS});
  const mo = new MutationObserver(() => {
    const now = count.getAttribute("data-count");
    if (now === before) return;
    const dom = performance.now() - t0;
    mo.disconnect();
    clearTimeout(timer);
    requestAnimationFrame(() => setTimeout(() => resolve({ dom, frame: performance.now() - t0, count: Number(now), rows: document.querySelectorAll("[data-id]").length }), 0));
  });
  mo.observe(count, { attributes: true, attributeFilter: ["data-count"] });
  t0 = performance.now();
  input.value = ${JSON.stringify(value)};
  input.dispatchEvent(new Event("input", { bubbles: true }));
})`;

/**
 * In the page: the list scrolled down by one screen → every row in view has its marks (none pending) and the frame
 * after it: from the scroll (`ms`: the page's own 100 ms wait after scrolling stops included) and from the page's
 * /api/marks request (`fromRequest`: the server's marks and their drawing).
 */
const SCROLL_SCREEN = `new Promise((resolve) => {
  const list = document.querySelector(".rows");
  const t0 = performance.now();
  const timer = setTimeout(() => { clearInterval(poll); resolve({ timeout: true }); }, ${FILTER_TIMEOUT_MS});
  let moved = false;
  list.addEventListener("scroll", () => (moved = true), { once: true });
  list.scrollTop += list.clientHeight;
  const asked = () => performance
    .getEntriesByType("resource")
    .filter((e) => e.name.includes("/api/marks") && e.startTime >= t0)
    .map((e) => e.startTime);
  const poll = setInterval(() => {
    // The new screen's marks were asked for and answered (an entry is there once the response is), and no row in
    // view waits for its marks.
    if (!moved || !asked().length || document.querySelector("[data-id] svg[data-marks=pending]")) return;
    clearInterval(poll);
    clearTimeout(timer);
    requestAnimationFrame(() =>
      setTimeout(() => {
        const end = performance.now();
        resolve({ ms: end - t0, fromRequest: end - Math.min(...asked()) });
      }, 0),
    );
  }, 5);
})`;

/** In the page: no row in view waits for its marks (the marks of rows a filter brought into view have come). */
const MARKS_SETTLED = `document.querySelector("[data-id] svg[data-marks=pending]") === null`;

interface Marks {
  firstRow: number;
  firstRowFrame: number;
  firstMarks: number;
  firstMarksFrame: number;
  rowsInView: number;
  pendingAtFirstMarks: number;
  attention?: number;
  whole?: number;
}

interface ResourceTiming {
  name: string;
  start: number;
  end: number;
  bytes: number;
}

const RESOURCES = `performance.getEntriesByType("resource").map((e) => ({ name: new URL(e.name).pathname, start: e.startTime, end: e.responseEnd, bytes: e.encodedBodySize }))`;

// ---------- one run ----------

interface FilterSample {
  value: string;
  count: number;
  dom: number;
  frame: number;
}

interface Run {
  urlS: number;
  firstRowMs: number;
  firstRowFrameMs: number;
  firstPaintMs: number;
  firstPaintFrameMs: number;
  /** Command start → first paint's frame, wall clock. */
  firstPaintFromStartS: number;
  /** Command start → every CronJob counted on the page, wall clock. */
  wholeFromStartS: number;
  rowsInView: number;
  pendingAtFirstMarks: number;
  filters: FilterSample[];
  clears: FilterSample[];
  verdictsS: number;
  /** The list scrolled by one screen → its rows' marks drawn (ms), each run's screens: from the scroll, and from the request. */
  screens: { ms: number; fromRequest: number }[];
  /** A CronJob changed to name a calendar that does not exist → its row's verdict on the page (s; NaN: never). */
  changeVerdictS: number;
  /** When no verdicts came: what the fleet says it could not read. */
  unreadable: string[];
  rssPaintMB: number;
  rssVerdictsMB: number;
  rssEndMB: number;
  cpuUrlS: number;
  cpuPaintS: number;
  cpuVerdictsS: number;
  fleetFetch?: ResourceTiming;
  marksFetch?: ResourceTiming;
  scriptFetch?: ResourceTiming;
}

const mb = (pid: number) => (memory(pid)?.peakRss ?? NaN) / MB;

async function oneRun(
  kubeconfig: string,
  k: number,
  client: Client,
  launcher: readonly string[],
  /** Which CronJob this run changes (changedIn): one of its own, never one an earlier run changed. */
  change: number,
): Promise<Run> {
  let browser: Browser | undefined;
  let dashboard: RunningDashboard | undefined;
  try {
    browser = await startBrowser();
    const page: Page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e instanceof Error ? e.message : String(e)));
    await page.evaluateOnNewDocument(INSTRUMENT);
    const startEpoch = Date.now();
    const started = performance.now();
    dashboard = await startDashboard(kubeconfig, ["-A"], 120_000, launcher);
    const urlS = (performance.now() - started) / 1000;
    const pid = dashboard.pid;
    const cpuUrlS = cpuSeconds(pid) ?? NaN;
    await page.goto(dashboard.url, { waitUntil: "domcontentloaded", timeout: PAINT_TIMEOUT_MS });
    await page.waitForFunction("window.__bench && window.__bench.firstMarksFrame !== undefined", {
      timeout: PAINT_TIMEOUT_MS,
    });
    const rssPaintMB = mb(pid);
    const cpuPaintS = cpuSeconds(pid) ?? NaN;
    const paint = (await page.evaluate("window.__bench")) as Marks;
    const origin = (await page.evaluate("performance.timeOrigin")) as number;
    // The rest of the fleet: the scrolls and the filters below need every row.
    await page.waitForFunction("window.__bench.whole !== undefined", { timeout: PAINT_TIMEOUT_MS });
    const whole = (await page.evaluate("window.__bench.whole")) as number;
    const resources = (await page.evaluate(RESOURCES)) as ResourceTiming[];
    await page.waitForFunction(MARKS_SETTLED, { timeout: PAINT_TIMEOUT_MS });

    // The marks of a screen of rows: scrolled a screen down, 3 times.
    const screens: Run["screens"] = [];
    for (let i = 0; i < 3; i++) {
      const r = (await page.evaluate(SCROLL_SCREEN)) as { timeout?: boolean; ms: number; fromRequest: number };
      if (r.timeout) throw new Error(`a screen scrolled into view had no marks within ${FILTER_TIMEOUT_MS} ms`);
      screens.push({ ms: r.ms, fromRequest: r.fromRequest });
    }
    await page.evaluate(`document.querySelector(".rows").scrollTop = 0`);
    await page.waitForFunction(MARKS_SETTLED, { timeout: PAINT_TIMEOUT_MS });

    const filters: FilterSample[] = [];
    const clears: FilterSample[] = [];
    for (const value of FILTERS) {
      for (const [to, into] of [
        [value, filters],
        ["", clears],
      ] as const) {
        const r = (await page.evaluate(filterIn(to))) as { timeout?: boolean } & Omit<FilterSample, "value">;
        if (r.timeout)
          throw new Error(`the filter ${JSON.stringify(to)} changed no count within ${FILTER_TIMEOUT_MS} ms`);
        if (to === "" && r.count !== N) throw new Error(`cleared, the count is ${r.count}, not ${N}`);
        into.push({ value: to === "" ? `(clear ${value})` : to, count: r.count, dom: r.dom, frame: r.frame });
        // The marks of the rows it brought into view: asked for and drawn before the next sample.
        await page.waitForFunction(MARKS_SETTLED, { timeout: PAINT_TIMEOUT_MS });
      }
    }

    // The verdicts, or what the dashboard says instead (a `why -A` that failed is in the fleet's unreadable).
    const came = await page
      .waitForFunction("window.__bench.attention !== undefined", { timeout: VERDICT_TIMEOUT_MS })
      .then(() => true)
      .catch(() => false);
    const rssVerdictsMB = mb(pid);
    const cpuVerdictsS = cpuSeconds(pid) ?? NaN;
    const attention = came ? ((await page.evaluate("window.__bench.attention")) as number) : NaN;
    const served = came
      ? undefined
      : ((await (await fetch(dashboard.url.replace("/?", "/api/fleet?"))).json()) as {
          unreadable: string[];
          verdictsAt?: string;
          rows: { attention?: unknown }[];
        });
    const said = served?.unreadable ?? [];
    if (served) {
      // Whether the server read them and the page did not draw them, or the server never finished.
      const marked = served.rows.filter((r) => r.attention).length;
      console.log(
        `run ${k}: no verdicts on the page within ${VERDICT_TIMEOUT_MS / 1000} s; the server's verdictsAt: ` +
          `${served.verdictsAt ?? "none"}, rows needing attention: ${marked}; unreadable: ${said.join("; ")}`,
      );
    }
    // A change's verdict: a CronJob in view (the name filter) made to name a calendar that does not exist; its row
    // says calendar-not-found once the dashboard read its verdict again.
    // Not in the incident: the stopped operator's webhook refuses the write, as it would any user's.
    let changeVerdictS = NaN;
    if (SHAPE !== "incident") {
      const changed = changedIn(change);
      const id = `${changed.namespace}/${changed.name}`;
      await page.evaluate(filterIn(id));
      await page.waitForSelector(`[data-id="${id}"]`, { timeout: FILTER_TIMEOUT_MS });
      const t0 = Date.now();
      await client.patch(
        CronJobResource,
        changed.namespace,
        changed.name,
        { spec: { exclusions: { calendars: ["bench-no-such-calendar"] } } },
        "merge",
      );
      changeVerdictS = await page
        .waitForSelector(`[data-id="${id}"] [data-attention="calendar-not-found"]`, { timeout: VERDICT_TIMEOUT_MS })
        .then(() => (Date.now() - t0) / 1000)
        .catch(() => NaN);
      await page.evaluate(filterIn(""));
    }
    // Settle: what the verdicts' push and a quiet minute leave (V8 may collect later).
    await sleep(2_000);
    const rssEndMB = mb(pid);
    if (errors.length) throw new Error(`the page threw: ${errors.join("; ")}`);
    const run: Run = {
      urlS,
      firstRowMs: paint.firstRow,
      firstRowFrameMs: paint.firstRowFrame,
      firstPaintMs: paint.firstMarks,
      firstPaintFrameMs: paint.firstMarksFrame,
      firstPaintFromStartS: (origin + paint.firstMarksFrame - startEpoch) / 1000,
      wholeFromStartS: (origin + whole - startEpoch) / 1000,
      rowsInView: paint.rowsInView,
      pendingAtFirstMarks: paint.pendingAtFirstMarks,
      filters,
      clears,
      verdictsS: (origin + attention - startEpoch) / 1000,
      screens,
      changeVerdictS,
      unreadable: said,
      rssPaintMB,
      rssVerdictsMB,
      rssEndMB,
      cpuUrlS,
      cpuPaintS,
      cpuVerdictsS,
      fleetFetch: resources.find((r) => r.name === "/api/fleet"),
      marksFetch: resources.find((r) => r.name === "/api/marks"),
      scriptFetch: resources.find((r) => r.name === "/app.js"),
    };
    console.log(
      `run ${k} (${launcher[0]}): URL ${run.urlS.toFixed(2)} s; first row ${run.firstRowFrameMs.toFixed(0)} ms; first paint ${run.firstPaintFrameMs.toFixed(0)} ms, ` +
        `${run.firstPaintFromStartS.toFixed(2)} s from the start; whole fleet ${run.wholeFromStartS.toFixed(2)} s ` +
        `(${run.rowsInView} rows in view); filter median ${median(filters.map((f) => f.frame)).toFixed(0)} ms max ${max(filters.map((f) => f.frame)).toFixed(0)} ms; ` +
        `clear median ${median(clears.map((f) => f.frame)).toFixed(0)} ms; verdicts ${run.verdictsS.toFixed(1)} s; ` +
        `a change's verdict ${run.changeVerdictS.toFixed(1)} s; ` +
        `VmHWM ${rssPaintMB.toFixed(0)} / ${rssVerdictsMB.toFixed(0)} MB`,
    );
    return run;
  } finally {
    await browser?.close().catch(() => undefined);
    await dashboard?.stop();
  }
}

// ---------- why -A beside it ----------

interface WhySample {
  wall: number;
  rssMB: number;
  code: number | null;
}

async function whyAll(kubeconfig: string, work: string, launcher: readonly string[]): Promise<WhySample> {
  const timeFile = join(work, "time");
  const started = performance.now();
  const child = spawn("/usr/bin/time", ["-q", "-f", "%M", "-o", timeFile, ...launcher, "why", "-A"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: work, KUBECONFIG: kubeconfig },
    stdio: ["ignore", "ignore", "ignore"],
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
  const code = await new Promise<number | null>((r) => child.on("close", (c) => r(c)));
  clearTimeout(timer);
  const wall = (performance.now() - started) / 1000;
  const rss = Number(readFileSync(timeFile, "utf8").trim().split("\n").at(-1));
  return { wall, rssMB: rss / 1024, code };
}

// ---------- the report ----------

/** The commit of checkout `dir`, whose launcher must run its fresh bundle (not the TypeScript). */
function checkBuilt(dir = PROJECT_ROOT): string {
  const bundle = join(dir, "bin/plugin/kubectl-cron.mjs");
  if (!existsSync(bundle)) throw new Error(`${dir}: bin/plugin/ is missing: make plugin`);
  const stale = execFileSync(
    "sh",
    ["-c", "find $(cat bin/plugin/inputs) -newer bin/plugin/kubectl-cron.mjs -print -quit"],
    { cwd: dir, encoding: "utf8" },
  ).trim();
  if (stale)
    throw new Error(`${dir}: bin/plugin/ is older than ${stale}: make plugin (the launcher would run the TypeScript)`);
  return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: dir, encoding: "utf8" }).trim();
}

const f0 = (x: number) => x.toFixed(0);
const f1 = (x: number) => x.toFixed(1);
const f2 = (x: number) => x.toFixed(2);
const spread = (xs: number[], f: (x: number) => string) =>
  xs.length > 1 ? `${f(median(xs))} (${f(min(xs))}–${f(max(xs))})` : f(xs[0]!);
const margin = (value: number, target: number, unit: string, f: (x: number) => string) =>
  Number.isNaN(value)
    ? "**missed**: it never came"
    : value <= target
      ? `met, ${f(target - value)} ${unit} to spare (${f0((value / target) * 100)} % of the target)`
      : `**missed** by ${f(value - target)} ${unit} (${f0((value / target) * 100)} % of the target)`;

/** One build's runs: this commit's, or --baseline's. */
interface Section {
  label: string;
  commit: string;
  runs: Run[];
  why: WhySample[];
}

/** A section's targets, figures, filters and requests. */
function section(o: Section): string[] {
  const { runs, why } = o;
  const all = <T>(f: (r: Run) => T[]) => runs.flatMap(f);
  const filterFrames = all((r) => r.filters.map((s) => s.frame));
  const filterDoms = all((r) => r.filters.map((s) => s.dom));
  const clearFrames = all((r) => r.clears.map((s) => s.frame));
  const clearDoms = all((r) => r.clears.map((s) => s.dom));
  const col = (f: (r: Run) => number, fmt: (x: number) => string) => runs.map((r) => fmt(f(r))).join(" | ");
  const paintWorst = max(runs.map((r) => r.firstPaintFromStartS));
  const every = (f: (r: Run) => number, fmt: (x: number) => string) => runs.map((r) => fmt(f(r))).join(", ");
  const filterWorst = max(filterFrames);
  const rssWorst = max(runs.map((r) => r.rssEndMB));
  const whyWorst = max(why.map((w) => w.rssMB));
  const urlWorst = max(runs.map((r) => r.urlS));
  const verdictsWorst = max(runs.map((r) => r.verdictsS - r.urlS));
  // NaN (no verdict came) is the worst of all.
  const screenWorst = max(runs.flatMap((r) => r.screens.map((x) => x.fromRequest)));
  const changeWorst = runs.some((r) => Number.isNaN(r.changeVerdictS)) ? NaN : max(runs.map((r) => r.changeVerdictS));
  const header = `| figure | ${runs.map((_, i) => `run ${i + 1}`).join(" | ")} | median (min–max) |`;
  const sep = `|---|${runs.map(() => "--:").join("|")}|--:|`;
  const line = (name: string, f: (r: Run) => number, fmt: (x: number) => string) =>
    `| ${name} | ${col(f, fmt)} | ${spread(runs.map(f), fmt)} |`;
  const filterRows = FILTERS.map((value, i) => {
    const s = runs.map((r) => r.filters[i]!);
    const c = runs.map((r) => r.clears[i]!);
    return `| \`${value}\` | ${s[0]!.count} | ${s.map((x) => f0(x.frame)).join(" / ")} | ${s.map((x) => f0(x.dom)).join(" / ")} | ${c.map((x) => f0(x.frame)).join(" / ")} |`;
  });
  const fetchLine = (name: string, f: (r: Run) => ResourceTiming | undefined) => {
    const xs = runs.map(f).filter((x): x is ResourceTiming => x !== undefined);
    if (!xs.length) return `| ${name} | – | – | – |`;
    return `| ${name} | ${spread(
      xs.map((x) => x.start),
      f0,
    )} | ${spread(
      xs.map((x) => x.end),
      f0,
    )} | ${f0(median(xs.map((x) => x.bytes)) / 1024)} KB |`;
  };
  return [
    `## ${o.label} (${o.commit})`,
    ``,
    `### Against the targets`,
    ``,
    `| target | worst of ${runs.length} runs | every run | |`,
    `|---|--:|--:|---|`,
    `| first paint (the first ${Math.min(FIRST_ROWS, N)} rows with their marks) under ${TARGETS.firstPaintS} s from the command's start, every load | ${f2(paintWorst)} s | ${every((r) => r.firstPaintFromStartS, f2)} | ${margin(paintWorst, TARGETS.firstPaintS, "s", f2)} |`,
    `| the dashboard's peak RSS under ${TARGETS.rssMB} MB, every load | ${f0(rssWorst)} MB | ${every((r) => r.rssEndMB, f0)} | ${margin(rssWorst, TARGETS.rssMB, "MB", f0)}; \`why -A\` alone: ${f0(whyWorst)} MB |`,
    `| a filter under ${TARGETS.filterMs} ms | ${f0(filterWorst)} ms (median ${f0(median(filterFrames))}) | ${every((r) => max(r.filters.map((x) => x.frame)), f0)} | ${margin(filterWorst, TARGETS.filterMs, "ms", f0)} |`,
    `| the URL printed under ${TARGETS.urlS} s from the command's start | ${f2(urlWorst)} s | ${every((r) => r.urlS, f2)} | ${margin(urlWorst, TARGETS.urlS, "s", f2)} |`,
    `| the verdicts on the page under ${TARGETS.verdictsAfterUrlS} s after the URL | ${f2(verdictsWorst)} s | ${every((r) => r.verdictsS - r.urlS, f2)} | ${margin(verdictsWorst, TARGETS.verdictsAfterUrlS, "s", f2)} |`,
    `| the marks of a screen of rows under ${TARGETS.screenMarksMs} ms (scrolled into view: the page's request → drawn) | ${f0(screenWorst)} ms | ${every((r) => max(r.screens.map((x) => x.fromRequest)), f0)} | ${margin(screenWorst, TARGETS.screenMarksMs, "ms", f0)} |`,
    SHAPE === "incident"
      ? `| a change's verdict on the page under ${TARGETS.changeVerdictS} s after the change | – | – | not measured: the stopped operator's webhook refuses the change |`
      : `| a change's verdict on the page under ${TARGETS.changeVerdictS} s after the change | ${f2(changeWorst)} s | ${every((r) => r.changeVerdictS, f2)} | ${margin(changeWorst, TARGETS.changeVerdictS, "s", f2)} |`,
    ``,
    `### Figures`,
    ``,
    header,
    sep,
    line("URL printed, from the command's start (s, wall clock)", (r) => r.urlS, f2),
    line("first row: navigation → row in the DOM (ms, page)", (r) => r.firstRowMs, f0),
    line("first row: navigation → its frame (ms, page)", (r) => r.firstRowFrameMs, f0),
    line("**first paint**: navigation → marks loaded (ms, page)", (r) => r.firstPaintMs, f0),
    line("**first paint**: navigation → its frame (ms, page)", (r) => r.firstPaintFrameMs, f0),
    line("**first paint from the command's start** (s, wall clock)", (r) => r.firstPaintFromStartS, f2),
    line(
      "the whole fleet on the page (every CronJob counted), from the command's start (s)",
      (r) => r.wholeFromStartS,
      f2,
    ),
    line("rows in view at first paint (drawn: view + overscan)", (r) => r.rowsInView, f0),
    line("**filter**: input → its frame, median (ms, page)", (r) => median(r.filters.map((s) => s.frame)), f0),
    line("**filter**: input → its frame, max (ms, page)", (r) => max(r.filters.map((s) => s.frame)), f0),
    line("filter: input → count changed, median (ms, page)", (r) => median(r.filters.map((s) => s.dom)), f0),
    line("clear back to N rows → its frame, median (ms, page)", (r) => median(r.clears.map((s) => s.frame)), f0),
    line("clear back to N rows → its frame, max (ms, page)", (r) => max(r.clears.map((s) => s.frame)), f0),
    line(
      "verdicts (why -A's, in the dashboard) from the command's start (s)",
      (r) => r.verdictsS,
      (x) => (Number.isNaN(x) ? `none in ${VERDICT_TIMEOUT_MS / 1000}` : f1(x)),
    ),
    line("the verdicts after the URL (s)", (r) => r.verdictsS - r.urlS, f1),
    line("a change's verdict on the page, from the change (s)", (r) => r.changeVerdictS, f1),
    line(
      "a screen scrolled → its rows' marks drawn, worst of 3 (ms, page)",
      (r) => max(r.screens.map((x) => x.ms)),
      f0,
    ),
    line(
      "… from the page's /api/marks request, worst of 3 (ms, page)",
      (r) => max(r.screens.map((x) => x.fromRequest)),
      f0,
    ),
    line("**peak RSS** (VmHWM) after the first paint (MB)", (r) => r.rssPaintMB, f0),
    line("**peak RSS** (VmHWM) after the verdicts and filters (MB)", (r) => r.rssVerdictsMB, f0),
    line("peak RSS (VmHWM) 2 s later, the end of the run (MB)", (r) => r.rssEndMB, f0),
    line("dashboard CPU at the URL (s, user+sys)", (r) => r.cpuUrlS, f2),
    line("dashboard CPU at the first paint (s)", (r) => r.cpuPaintS, f2),
    line("dashboard CPU at the verdicts (s)", (r) => r.cpuVerdictsS, f2),
    ``,
    `Over all ${filterFrames.length} filter samples: input → frame median ${f0(median(filterFrames))} ms, max ${f0(filterWorst)} ms ` +
      `(input → count changed: median ${f0(median(filterDoms))}, max ${f0(max(filterDoms))}); the ${clearFrames.length} clears back ` +
      `to ${N} rows: median ${f0(median(clearFrames))} ms, max ${f0(max(clearFrames))} ms (count changed: median ` +
      `${f0(median(clearDoms))}, max ${f0(max(clearDoms))}).`,
    ``,
    `\`kubectl cron why -A\` on the same fleet (the launcher, under /usr/bin/time, ${why.length} runs): max RSS ` +
      `${spread(
        why.map((w) => w.rssMB),
        f0,
      )} MB, wall ${spread(
        why.map((w) => w.wall),
        f2,
      )} s, exit ${why.map((w) => w.code).join(", ")} (${SHAPE === "incident" ? "the operator is stopped" : "no operator runs"}: it says so).`,
    ``,
    ...runs.flatMap((r, i) =>
      r.unreadable.length
        ? [`Run ${i + 1}: no verdicts; the dashboard's unreadable: ${r.unreadable.join("; ")}.`, ``]
        : [],
    ),
    `#### Each filter (input → frame, ms, run by run)`,
    ``,
    `| typed | rows after | input → frame | input → count | clear → frame |`,
    `|---|--:|--:|--:|--:|`,
    ...filterRows,
    ``,
    `#### The page's requests (Resource Timing, ms from navigation start; median (min–max))`,
    ``,
    `| request | start | response end | body |`,
    `|---|--:|--:|--:|`,
    fetchLine("/app.js", (r) => r.scriptFetch),
    fetchLine("/api/fleet", (r) => r.fleetFetch),
    fetchLine("first /api/marks", (r) => r.marksFetch),
    ``,
  ];
}

function report(o: {
  fleet: { seconds: number; jobs: number };
  sections: Section[];
  load: string;
  loadBefore: string;
}): string {
  const ab = o.sections.length > 1 ? ` --baseline=…` : "";
  return [
    `# kubectl cron dashboard at N = ${N.toLocaleString("en")}, the ${SHAPE} shape (bench/dashboard.ts)`,
    ``,
    `${new Date().toISOString()} at ${o.sections.map((x) => `${x.commit} (${x.label})`).join(" and ")}; ${cpus().length} × ${cpus()[0]?.model ?? "?"}, ${f0(totalmem() / 2 ** 30)} GiB; ` +
      `Node ${process.version}; load average ${o.loadBefore} at the start, ${o.load} at the end. \`node bench/dashboard.ts --n=${N} --runs=${RUNS} --shape=${SHAPE}${ab}\` ` +
      `(\`make bench-dashboard N=${N} RUNS=${RUNS} SHAPE=${SHAPE}\`)${o.sections.length > 1 ? "; the builds' runs alternated, one of each in turn" : ""}.`,
    ``,
    `The cluster: envtest's kube-apiserver with the CRDs (\`KUBEBUILDER_ASSETS\`=${process.env.KUBEBUILDER_ASSETS ?? "envtest's default"}), no ` +
      `controller. The fleet's shape \`${SHAPE}\` (SHAPE): ${describeFleet(SHAPE, N, o.fleet.jobs)}. Created in ${f1(o.fleet.seconds)} s, ` +
      `${IN_FLIGHT} in flight. Each run starts the built plugin as users run it (\`cmd/kubectl-cron/kubectl-cron dashboard -A\`: ` +
      `the launcher, \`make plugin\`'s bundle, its Node flags) and a fresh headless Chromium (Debian's ` +
      `chromium-headless-shell, puppeteer-core, a 1400×900 viewport); the browser, the dashboard, kube-apiserver and etcd ` +
      `share the 2 cores.`,
    ``,
    ...o.sections.flatMap(section),
    `## How it is measured`,
    ``,
    `- **URL printed**: wall clock in the benchmark, from spawning the launcher to the URL on its stdout: Node's start, ` +
      `the modules, the first screen's read (since issue 72; before it, the informers' whole lists) and the server listening.`,
    `- **first paint from the command's start** (the target, every load): the launcher spawned → the frame after the ` +
      `first ${Math.min(FIRST_ROWS, N)} rows have their marks (the page's clock mapped to the wall clock through ` +
      `\`performance.timeOrigin\`); the browser is started before the command, and opens the URL the moment it is printed.`,
    `- **the whole fleet**: the page counts all ${N} CronJobs (\`.count[data-count=${N}]\`); since issue 72 the first screen may ` +
      `come alone before it (the server sends it while its informers list the rest).`,
    `- **first row / first paint**: in the page, \`performance.now()\` (its origin is the navigation's start), from a ` +
      `MutationObserver installed before the page's script (\`evaluateOnNewDocument\`): the first \`[data-id]\` row, and the ` +
      `time ${Math.min(FIRST_ROWS, N)} rows have \`svg[data-marks=loaded]\`; "its frame" is a requestAnimationFrame callback then a task after it, ` +
      `i.e. once that frame was laid out and painted. The page asks /api/fleet, draws the rows in view, then ` +
      `one /api/marks for them (at once for the first screen since issue 72; 100 ms after the rows settle when scrolled).`,
    `- **filter**: in the page, the value of \`input[name=name]\` set and an \`input\` event dispatched (what a keystroke ` +
      `does) → \`[data-count]\` changed (MutationObserver) → the next frame. ${FILTERS.length} substrings a run, each ` +
      `cleared back to ${N} rows the same way; between samples the benchmark waits until the rows in view have their marks.`,
    `- **verdicts**: the page holds \`why -A\`'s verdicts (its \`[data-verdicts]\` set), the page's clock mapped to the wall clock through ` +
      `\`performance.timeOrigin\`, from the command's start (with no operator, \`why -A\` finds the slots missed since ` +
      `the CronJobs were created: a few of them need attention).`,
    `- **peak RSS**: \`VmHWM\` of the dashboard's process from /proc/PID/status (the launcher execs node: one process), ` +
      `after the first paint, after the verdicts (the filters came between) and 2 s later. MB = 2^20 bytes.`,
  ].join("\n");
}

// ---------- main ----------

const work = mkdtempSync(join(tmpdir(), "bench-dashboard-"));
let env: TestEnv | undefined;
try {
  const commit = checkBuilt();
  const baselineCommit = values.baseline ? checkBuilt(values.baseline) : undefined;
  const loadBefore = loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
  env = await TestEnv.start({ verbose: false });
  const client = new Client(env.kubeConfig, { userAgent: "bench", maxSockets: 64 });
  const fleet = await createFleet(client, N, SHAPE, env.kubeconfigPath);
  console.log(`${N} CronJobs, ${fleet.jobs} Jobs in ${fleet.seconds.toFixed(1)} s`);
  client.close();
  if (values.hold) {
    console.log(`holding: KUBECONFIG=${env.kubeconfigPath} (Ctrl-C stops the control plane)`);
    await new Promise<void>((r) => {
      process.once("SIGINT", r);
      process.once("SIGTERM", r);
    });
  }
  // This commit's launcher and, with --baseline, the other's, each run in turn.
  const sections: (Section & { launcher: readonly string[] })[] = [
    { label: "this commit", commit, runs: [], why: [], launcher: LAUNCHER },
    ...(values.baseline
      ? [
          {
            label: "baseline",
            commit: baselineCommit!,
            runs: [],
            why: [],
            launcher: [join(values.baseline, "cmd/kubectl-cron/kubectl-cron")],
          },
        ]
      : []),
  ];
  const turns = [...sections].reverse();
  for (let i = 0; i < RUNS; i++) for (const x of turns) x.why.push(await whyAll(env.kubeconfigPath, work, x.launcher));
  for (const x of sections)
    console.log(
      `why -A (${x.label}): ${x.why.map((w) => `${w.rssMB.toFixed(0)} MB ${w.wall.toFixed(2)} s`).join(", ")}`,
    );
  let change = 0;
  for (let k = 1; k <= RUNS; k++) {
    for (const x of turns) x.runs.push(await oneRun(env.kubeconfigPath, k, client, x.launcher, ++change));
  }
  const text = report({
    loadBefore,
    fleet,
    sections,
    load: loadavg()
      .map((l) => l.toFixed(2))
      .join(" "),
  });
  process.stdout.write(`\n${text}\n`);
  if (values.out) {
    mkdirSync(join(values.out, ".."), { recursive: true });
    writeFileSync(values.out, `${text}\n`);
    console.log(`wrote ${relative(process.cwd(), values.out)}`);
  }
} finally {
  await env?.stop();
  rmSync(work, { recursive: true, force: true });
}
