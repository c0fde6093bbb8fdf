// The three phases of one N, each on a fresh control plane: calibration (raw Job creates: the floor),
// ours (the operator as a child process) and built-in (kube-controller-manager's cronjob controller v2).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { envValue, readManagerDeployment } from "../../hack/manager-deployment.ts";
import { Client } from "../../runtime/client.ts";
import { Kinds, type KubeObject, type ResourceKind } from "../../runtime/kinds.ts";
import { PROJECT_ROOT, TestEnv } from "../../envtest/index.ts";
import { freePort } from "../../envtest/ports.ts";
import { ManagedProcess } from "../../envtest/processes.ts";
import { analyze, type Analysis } from "./analyze.ts";
import { builtinSlotOf, JobFinisher, JobRecorder, ourSlotOf, type SlotOf } from "./jobs.ts";
import { sleep } from "./pool.ts";
import { cpuSeconds, findChild, memory } from "./proc.ts";
import { groupBy, has, type Sample, scrape, sumOf } from "./prom.ts";
import {
  BuiltinCronJobKind,
  builtinCronJob,
  createMany,
  createNamespaces,
  OurCronJobKind,
  ourCronJob,
  placement,
  rawJob,
} from "./workload.ts";

export const NODE = join(PROJECT_ROOT, "node_modules", ".bin", "node");
/** The built-in controller's flags on 1.20: v2 is alpha there. */
export const BUILTIN_FEATURE_GATES = "--feature-gates=CronJobControllerV2=true";
/** The run ends this long after the last measured slot, so late Jobs of that slot still count. */
export const END_AFTER_LAST_SLOT_MS = 50_000;
/**
 * A controller that cannot drain its queue (the built-in at N=1000 with its 20 qps client limit) never
 * finishes a "cold start": after this long the measurement starts anyway and the cold start is reported
 * as not reached.
 */
export const COLD_START_TIMEOUT_MS = 120_000;

export interface Settings {
  minutes: number;
  namespaces: number;
  /** --max-concurrent-reconciles of ours (its default, 16; the built-in runs ConcurrentCronJobSyncs = 5 workers). */
  workers: number;
  /** Requests in flight in the calibration phase. */
  inFlight: number;
  /** The finisher marks a Job Complete this long after it appears. */
  finishAfterMs: number;
  /** Extra kube-controller-manager flags (e.g. --kube-api-qps=...). */
  builtinArgs: string[];
  /** Extra node flags for the operator (e.g. --cpu-prof). */
  operatorNodeArgs: string[];
  /** Logs of the controllers go here. */
  workDir: string;
  log: (msg: string) => void;
}

export interface CalibrationResult {
  n: number;
  inFlight: number;
  seconds: number;
  perSecond: number;
  error?: string;
}

export interface PhaseResult {
  phase: "ours" | "builtin";
  n: number;
  ok: boolean;
  error?: string;
  logFile?: string;
  logTail?: string;
  commandLine?: string;
  /** Seconds to create the N CronJobs (setup, not measured). */
  setupSeconds?: number;
  /** Process start → workers started (caches synced), from the controller's log. */
  workersStartedS?: number;
  /** Process start → every CronJob processed once and the queue empty. */
  coldStartS?: number;
  /** Process start → N work items processed (a lower bound of the first pass). */
  firstNProcessedS?: number;
  /** Set when the queue never drained within the cold-start timeout. */
  coldStartNote?: string;
  runSeconds?: number;
  analysis?: Analysis;
  /** apiserver writes of the controller during the run (the finisher's jobs/status patches excluded). */
  writes?: number;
  writesPerJob?: number;
  writesByResource?: Record<string, number>;
  failedWritesByResource?: Record<string, number>;
  finisherPatches?: number;
  finisherErrors?: number;
  cpuSeconds?: number;
  cpuColdStartSeconds?: number;
  cpuPerMinuteSteady?: number;
  peakRssMB?: number;
  /** The controller's V8 heap at the end of the run (ours: prom-client's nodejs_heap_size_*), in MB. */
  heapUsedMB?: number;
  heapTotalMB?: number;
  apiserverCpuSeconds?: number;
  controllerRequests?: Record<string, number>;
  queueRetries?: number;
  reconcileErrors?: number;
  /** controller_runtime_reconcile_total by result (ours only). */
  reconcilesByResult?: Record<string, number>;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function tail(file: string, lines = 40): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

// --- apiserver metrics -------------------------------------------------------------------------------

const WRITE_VERBS = new Set(["POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "APPLY", "CREATE", "UPDATE"]);
/**
 * Not the controller's: reviews are POSTs that store nothing (our metrics scrapes of
 * kube-controller-manager cause them), and kube-apiserver itself maintains the `kubernetes` Service's
 * endpoints every 10 s.
 */
export const NOT_COUNTED = ["tokenreviews", "subjectaccessreviews", "endpoints", "endpointslices"];
const NOT_STORED = new Set([
  "endpoints",
  "endpointslices",
  "tokenreviews",
  "subjectaccessreviews",
  "selfsubjectaccessreviews",
  "localsubjectaccessreviews",
  "selfsubjectrulesreviews",
]);

function writeKey(l: Record<string, string>): string | undefined {
  if (!WRITE_VERBS.has(l.verb ?? "") || NOT_STORED.has(l.resource ?? "")) return undefined;
  return `${l.verb} ${l.resource}${l.subresource ? `/${l.subresource}` : ""}`;
}

const FINISHER_KEYS = new Set(["PATCH jobs/status"]);

async function apiserverMetrics(env: TestEnv): Promise<Sample[]> {
  const caData = env.kubeConfig.getCurrentCluster()?.caData;
  return scrape(`${env.server}/metrics`, {
    token: env.token,
    ...(caData ? { ca: Buffer.from(caData, "base64") } : { insecure: true }),
  });
}

function writesOf(samples: Sample[], failedOnly: boolean): Map<string, number> {
  return groupBy(samples, "apiserver_request_total", (l) =>
    failedOnly && /^[23]/.test(l.code ?? "") ? undefined : writeKey(l),
  );
}

function diff(a: Map<string, number>, b: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of b) {
    const d = v - (a.get(k) ?? 0);
    if (d > 0) out[k] = d;
  }
  return out;
}

// --- calibration -------------------------------------------------------------------------------------

export async function calibrate(n: number, s: Settings): Promise<CalibrationResult> {
  const env = await TestEnv.start({ verbose: false, crdDirectoryPaths: [] });
  const client = new Client(env.kubeConfig, { userAgent: "bench", maxSockets: Math.max(64, s.inFlight) });
  try {
    await createNamespaces(client, s.namespaces);
    await client.list(Kinds.Job, { limit: 1 }); // connection and TLS warm-up
    const seconds = await createMany(client, Kinds.Job, n, s.inFlight, (i) => {
      const p = placement(i, s.namespaces);
      return rawJob(p.namespace, `calib-${p.name}`);
    });
    return { n, inFlight: s.inFlight, seconds, perSecond: n / seconds };
  } catch (err) {
    return { n, inFlight: s.inFlight, seconds: NaN, perSecond: NaN, error: errorText(err) };
  } finally {
    client.close();
    await env.stop();
  }
}

// --- the controllers ---------------------------------------------------------------------------------

interface Launched {
  proc: ManagedProcess;
  pid: number;
  commandLine: string;
  logFile: string;
  metrics(): Promise<Sample[]>;
  /** When the controller's workers started (epoch ms), from its log; undefined if not found. */
  workersStartedAt(): number | undefined;
}

interface Driver {
  phase: "ours" | "builtin";
  label: string;
  kind: ResourceKind;
  make(namespace: string, name: string): KubeObject;
  slotOf: SlotOf;
  launch(env: TestEnv, s: Settings, n: number): Promise<Launched>;
}

function shellQuote(args: string[]): string {
  return args.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(" ");
}

async function realPid(proc: ManagedProcess, name: string, logFile: string): Promise<number> {
  const wrapper = proc.pid;
  const pid = wrapper === undefined ? undefined : await findChild(wrapper, name);
  if (pid === undefined)
    throw new Error(`could not find the ${name} process (wrapper ${wrapper}); log:\n${tail(logFile)}`);
  return pid;
}

export const oursDriver: Driver = {
  phase: "ours",
  label: "ours",
  kind: OurCronJobKind,
  make: ourCronJob,
  slotOf: ourSlotOf,
  async launch(env, s, n) {
    const port = await freePort();
    const logFile = join(s.workDir, `ours-N${n}.log`);
    const args = [
      ...s.operatorNodeArgs,
      // The compiled entrypoint, as the image runs it (make bench builds it first).
      join(PROJECT_ROOT, "dist", "cmd", "main.js"),
      "--kubeconfig",
      env.kubeconfigPath,
      "--metrics-bind-address",
      `127.0.0.1:${port}`,
      "--metrics-secure=false",
      "--health-probe-bind-address",
      "127.0.0.1:0",
      "--max-concurrent-reconciles",
      String(s.workers),
    ];
    // The node options the Deployment sets (config/manager), so memory and GC behave as in the pod.
    const nodeOptions = envValue(readManagerDeployment(PROJECT_ROOT)?.container, "NODE_OPTIONS");
    const proc = new ManagedProcess("cronjob-operator", NODE, args, logFile, {
      ...process.env,
      ENABLE_WEBHOOKS: "false",
      NODE_OPTIONS: nodeOptions,
    });
    const pid = await realPid(proc, "node", logFile);
    return {
      proc,
      pid,
      logFile,
      commandLine: `ENABLE_WEBHOOKS=false ${nodeOptions ? `NODE_OPTIONS=${shellQuote([nodeOptions])} ` : ""}${shellQuote(["node_modules/.bin/node", ...args]).replaceAll(`${PROJECT_ROOT}/`, "")}`,
      metrics: () => scrape(`http://127.0.0.1:${port}/metrics`, { timeoutMs: 5000 }),
      workersStartedAt: () => {
        for (const line of readLines(logFile)) {
          if (!line.includes("Starting workers")) continue;
          try {
            const ts = (JSON.parse(line) as { ts?: unknown }).ts;
            const t = typeof ts === "number" ? ts * 1000 : Date.parse(String(ts));
            if (Number.isFinite(t)) return t;
          } catch {
            // not JSON
          }
        }
        return undefined;
      },
    };
  },
};

export const builtinDriver: Driver = {
  phase: "builtin",
  label: "built-in",
  kind: BuiltinCronJobKind,
  make: builtinCronJob,
  slotOf: builtinSlotOf,
  async launch(env, s, n) {
    // The flags envtest's TestEnv.start({ controllerManager: { controllers: ["cronjob"], extraArgs } })
    // uses, started here only once the CronJobs exist so that its cold start can be measured.
    const port = await freePort();
    const logFile = join(s.workDir, `builtin-N${n}.log`);
    const bin = join(env.assets, "kube-controller-manager");
    const args = [
      `--kubeconfig=${env.kubeconfigPath}`,
      `--authentication-kubeconfig=${env.kubeconfigPath}`,
      `--authorization-kubeconfig=${env.kubeconfigPath}`,
      `--secure-port=${port}`,
      "--bind-address=127.0.0.1",
      "--leader-elect=false",
      "--controllers=cronjob",
      `--service-account-private-key-file=${join(env.dir, "sa.key")}`,
      "--use-service-account-credentials=false",
      BUILTIN_FEATURE_GATES,
      ...s.builtinArgs,
    ];
    const proc = new ManagedProcess("kube-controller-manager", bin, args, logFile);
    const pid = await realPid(proc, "kube-controller-manager", logFile);
    return {
      proc,
      pid,
      logFile,
      commandLine: shellQuote(["kube-controller-manager", ...args]),
      // Delegated authn/authz: the admin token (system:masters) may read /metrics.
      metrics: () => scrape(`https://127.0.0.1:${port}/metrics`, { token: env.token, insecure: true, timeoutMs: 5000 }),
      workersStartedAt: () => {
        // klog: "I1122 05:49:59.886331   12345 shared_informer.go:247] Caches are synced for cronjob"
        for (const line of readLines(logFile)) {
          const m = /^[IWE](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d+).*Caches are synced for cronjob/.exec(line);
          if (!m) continue;
          const [mo, d, h, mi, se, frac] = m.slice(1).map((x) => x ?? "0");
          const year = new Date().getFullYear();
          return new Date(
            year,
            Number(mo) - 1,
            Number(d),
            Number(h),
            Number(mi),
            Number(se),
            Number((frac ?? "0").slice(0, 3)),
          ).getTime();
        }
        return undefined;
      },
    };
  },
};

function readLines(file: string): string[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8").split("\n");
}

const QUEUE = { name: "cronjob" };

/** One controller phase: fresh control plane, N CronJobs, the controller, M measured minutes. */
export async function runControllerPhase(n: number, driver: Driver, s: Settings): Promise<PhaseResult> {
  const result: PhaseResult = { phase: driver.phase, n, ok: false };
  const log = (msg: string) => s.log(`[N=${n} ${driver.label}] ${msg}`);
  const env = await TestEnv.start({ verbose: false });
  const client = new Client(env.kubeConfig, { userAgent: "bench", maxSockets: 64 });
  const finisher = new JobFinisher(client, s.finishAfterMs);
  const recorder = new JobRecorder(client, driver.slotOf, (job) => finisher.schedule(job));
  let launched: Launched | undefined;
  let progress: NodeJS.Timeout | undefined;
  try {
    await createNamespaces(client, s.namespaces);
    // Start right after a minute boundary, so that neither a slot nor a catch-up run for CronJobs
    // created before a boundary lands inside the cold start (it has ~55 s before the next slot).
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 5_000) {
      const wait = 60_000 - intoMinute + 200;
      log(`waiting ${(wait / 1000).toFixed(0)} s for the next minute boundary`);
      await sleep(wait);
    }
    const keys: string[] = [];
    result.setupSeconds = await createMany(client, driver.kind, n, 32, (i) => {
      const p = placement(i, s.namespaces);
      keys.push(`${p.namespace}/${p.name}`);
      return driver.make(p.namespace, p.name);
    });
    log(`created ${n} CronJobs in ${result.setupSeconds.toFixed(1)} s`);
    await recorder.start();

    const apiserverPid =
      env.apiServer?.pid === undefined ? undefined : await findChild(env.apiServer.pid, "kube-apiserver");
    const apiBefore = await apiserverMetrics(env);
    const apiCpuBefore = apiserverPid === undefined ? undefined : cpuSeconds(apiserverPid);

    const spawnedAt = Date.now();
    launched = await driver.launch(env, s, n);
    const proc = launched;
    result.commandLine = launched.commandLine;
    result.logFile = launched.logFile;

    // Cold start: every CronJob processed once and nothing left in the queue.
    let readyAt: number | undefined;
    let processed = 0;
    let depth = NaN;
    let scraped = false;
    let lastScrapeError = "";
    while (Date.now() - spawnedAt < COLD_START_TIMEOUT_MS) {
      if (!proc.proc.running) throw new Error(`${driver.label} exited during start-up`);
      const m = await proc.metrics().catch((err: unknown) => {
        lastScrapeError = errorText(err);
        return undefined;
      });
      if (m) {
        scraped = true;
        processed = sumOf(m, "workqueue_work_duration_seconds_count", QUEUE);
        depth = sumOf(m, "workqueue_depth", QUEUE);
        if (processed >= n && result.firstNProcessedS === undefined)
          result.firstNProcessedS = (Date.now() - spawnedAt) / 1000;
        if (processed >= n && depth === 0) {
          readyAt = Date.now();
          break;
        }
      }
      await sleep(250);
    }
    if (readyAt === undefined) {
      if (!scraped) throw new Error(`could not read the controller's metrics: ${lastScrapeError}`);
      readyAt = Date.now();
      result.coldStartNote =
        `the work queue was never empty within ${COLD_START_TIMEOUT_MS / 1000} s ` +
        `(${processed} items processed, ${depth} queued at the end); measured from there`;
      log(`cold start not reached: ${result.coldStartNote}`);
    } else {
      result.coldStartS = (readyAt - spawnedAt) / 1000;
    }
    const started = launched.workersStartedAt();
    if (started !== undefined) result.workersStartedS = (started - spawnedAt) / 1000;
    const cpuAtReady = cpuSeconds(launched.pid);
    result.cpuColdStartSeconds = cpuAtReady;

    const firstSlot = Math.floor(readyAt / 60_000) * 60_000 + 60_000;
    const slots = Array.from({ length: s.minutes }, (_, k) => firstSlot + k * 60_000);
    const endAt = firstSlot + (s.minutes - 1) * 60_000 + END_AFTER_LAST_SLOT_MS;
    log(
      `cold start ${result.coldStartS?.toFixed(1) ?? "n/a"} s; measuring slots ${new Date(firstSlot).toISOString()} … ` +
        `(+${s.minutes - 1} min), until ${new Date(endAt).toISOString()}`,
    );
    progress = setInterval(() => {
      const now = Date.now();
      const slot = Math.floor(now / 60_000) * 60_000;
      log(`${recorder.jobs.size} Jobs seen; ${recorder.perSlot.get(slot) ?? 0}/${n} for the current slot`);
    }, 30_000);
    await sleep(endAt - Date.now());
    clearInterval(progress);
    progress = undefined;

    // Final snapshot, before anything stops.
    const apiAfter = await apiserverMetrics(env);
    const apiCpuAfter = apiserverPid === undefined ? undefined : cpuSeconds(apiserverPid);
    const cpuEnd = cpuSeconds(launched.pid);
    const mem = memory(launched.pid);
    const ctrl = await launched.metrics().catch(() => undefined);
    const endedAt = Date.now();

    await finisher.stop();
    await recorder.stop();
    await launched.proc.stop();

    result.runSeconds = (endedAt - spawnedAt) / 1000;
    result.analysis = analyze([...recorder.jobs.values()], keys, slots);
    const writes = diff(writesOf(apiBefore, false), writesOf(apiAfter, false));
    result.finisherPatches = 0;
    for (const k of FINISHER_KEYS) {
      result.finisherPatches += writes[k] ?? 0;
      delete writes[k];
    }
    const failed = diff(writesOf(apiBefore, true), writesOf(apiAfter, true));
    for (const k of FINISHER_KEYS) delete failed[k];
    result.writesByResource = writes;
    result.failedWritesByResource = failed;
    result.writes = Object.values(writes).reduce((a, b) => a + b, 0);
    result.writesPerJob = result.analysis.jobsTotal ? result.writes / result.analysis.jobsTotal : NaN;
    result.finisherErrors = finisher.errors;
    if (cpuEnd !== undefined) {
      result.cpuSeconds = cpuEnd;
      if (cpuAtReady !== undefined) result.cpuPerMinuteSteady = (cpuEnd - cpuAtReady) / ((endedAt - readyAt) / 60_000);
    }
    if (mem) result.peakRssMB = mem.peakRss / 2 ** 20;
    if (apiCpuBefore !== undefined && apiCpuAfter !== undefined)
      result.apiserverCpuSeconds = apiCpuAfter - apiCpuBefore;
    if (ctrl) {
      const reqs = groupBy(ctrl, "rest_client_requests_total", (l) => `${l.method ?? "?"} ${l.code ?? "?"}`);
      result.controllerRequests = Object.fromEntries([...reqs].sort(([a], [b]) => a.localeCompare(b)));
      result.queueRetries = sumOf(ctrl, "workqueue_retries_total", QUEUE);
      if (has(ctrl, "nodejs_heap_size_used_bytes")) {
        result.heapUsedMB = sumOf(ctrl, "nodejs_heap_size_used_bytes") / 2 ** 20;
        result.heapTotalMB = sumOf(ctrl, "nodejs_heap_size_total_bytes") / 2 ** 20;
      }
      if (has(ctrl, "controller_runtime_reconcile_total")) {
        const byResult = groupBy(ctrl, "controller_runtime_reconcile_total", (l) => l.result ?? "?");
        result.reconcilesByResult = Object.fromEntries(byResult);
        result.reconcileErrors = sumOf(ctrl, "controller_runtime_reconcile_errors_total");
      }
    }
    result.ok = true;
    const a = result.analysis;
    log(
      `done: ${a.jobsTotal} Jobs, skew p99 ${a.skew.p99.toFixed(2)} s, missed ${a.missed}, duplicates ${a.duplicates}, ` +
        `${result.writesPerJob.toFixed(2)} writes/Job`,
    );
  } catch (err) {
    result.error = errorText(err);
    log(`FAILED: ${result.error}`);
  } finally {
    if (progress) clearInterval(progress);
    await finisher.stop().catch(() => undefined);
    await recorder.stop().catch(() => undefined);
    if (launched) {
      await launched.proc.stop().catch(() => undefined);
      if (!result.ok) result.logTail = tail(launched.logFile);
    }
    client.close();
    await env.stop();
  }
  return result;
}
