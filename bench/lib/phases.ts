// The phases of one N, each on a fresh control plane: calibration (raw Job creates: the floor), ours
// (the operator as a child process, in a cgroup with the Deployment's limits) and the built-in
// (kube-controller-manager's cronjob controller v2) in two configurations: its defaults (client-side
// rate limit 20 qps / burst 30, 5 workers) and fully tuned (--kube-api-qps=500 --kube-api-burst=1000
// --concurrent-cron-job-syncs=50 where the version has that flag), the fair comparison.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { envValue, localManagerFlags, readManagerDeployment } from "../../envtest/manager-deployment.ts";
import { Client } from "../../runtime/client.ts";
import { canonical } from "../../runtime/objects.ts";
import { Kinds, type KubeObject, type ResourceKind } from "../../runtime/kinds.ts";
import { CronJobResource } from "../../api/v1/index.ts";
import { jobNameFor } from "../../api/v1/jobnames.ts";
import { assetsDir, PROJECT_ROOT, TestEnv } from "../../envtest/index.ts";
import { freePort } from "../../envtest/ports.ts";
import { atLeast, binaryVersion, cronJobControllerV2Args, type KubeVersion } from "../../envtest/versions.ts";
import { ManagedProcess } from "../../envtest/processes.ts";
import { analyze, type Analysis, percentiles, rfc3339 } from "./analyze.ts";
import { Cgroup, type CgroupInfo, type CgroupStats, type CgroupSupport, type Limits, formatLimits } from "./cgroup.ts";
import {
  builtinSlotOf,
  completionConditions,
  completionPatch,
  JobFinisher,
  JobRecorder,
  ourSlotOf,
  serverVersion,
  type SlotOf,
} from "./jobs.ts";
import { forEachLimit, sleep } from "./pool.ts";
import { apiserverProfile, type ProfileResult } from "./pprof.ts";
import { encodeProtobuf, protobufMismatch } from "./protobuf.ts";
import { ProtobufPoster } from "./protobuf-poster.ts";
import { cpuSeconds, findChild, ioBytes, loadavg, memory } from "./proc.ts";
import { groupBy, has, type Sample, scrape, sumOf } from "./prom.ts";
import {
  claimHolders,
  joinFigures,
  killFigures,
  settled,
  type ShardFaults,
  type ShardResult,
  shardReplica,
  waitSettled,
} from "./shards.ts";
import {
  builtinCronJobKind,
  builtinCronJob,
  benchWindows,
  createCalendars,
  createMany,
  createGroups,
  createNamespaces,
  benchEvent,
  ourCronJob,
  type OursExtras,
  oursExtras,
  placement,
  rawJob,
} from "./workload.ts";

export const NODE = join(PROJECT_ROOT, "node_modules", ".bin", "node");
/** The built-in's v2 controller: a feature gate before 1.21, the only controller since (envtest/versions.ts). */
export const builtinControllerArgs = (kubeControllerManager: string): string[] =>
  cronJobControllerV2Args(binaryVersion(kubeControllerManager));
/**
 * The fully tuned built-in, as a platform team tunes it: a client-side rate limit that does not bound it on this
 * control plane, and 10 times its CronJob workers (ConcurrentCronJobSyncs, 5 as it ships), so that neither its
 * client nor its queue is what ours is compared with. --concurrent-cron-job-syncs only reaches binaries that
 * have it (servedBuiltinArgs).
 */
export const BUILTIN_TUNED_ARGS = ["--kube-api-qps=500", "--kube-api-burst=1000", "--concurrent-cron-job-syncs=50"];
/** kube-controller-manager's CronJob workers when --concurrent-cron-job-syncs is not given (or not served). */
const BUILTIN_DEFAULT_WORKERS = 5;
/**
 * kube-controller-manager flags younger than the oldest release the bench runs, with the minor that added each:
 * an older binary refuses to start on an unknown flag, so there the flag is dropped and the report says so.
 */
const BUILTIN_FLAGS_SINCE: Record<string, { minor: number; origin: string }> = {
  // The CronJob controller's workers on the command line: kubernetes#117550, 1.28.
  "--concurrent-cron-job-syncs": { minor: 28, origin: "kubernetes#117550" },
};

/** The flags of `args` kube-controller-manager `v` serves, and those it lacks (both as given). */
function servedBuiltinArgs(args: readonly string[], v: KubeVersion): { args: string[]; dropped: string[] } {
  const served: string[] = [];
  const dropped: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const name = arg.split("=")[0]!;
    const since = BUILTIN_FLAGS_SINCE[name];
    // "--flag value" is two words: the value goes with its flag.
    const words = !arg.includes("=") && since && i + 1 < args.length && !args[i + 1]!.startsWith("-") ? 2 : 1;
    const flag = args.slice(i, i + words);
    i += words - 1;
    (since && !atLeast(v, since.minor) ? dropped : served).push(...flag);
  }
  return { args: served, dropped };
}

/** Why a dropped flag was dropped, for the report: "--concurrent-cron-job-syncs needs 1.28+ (kubernetes#117550)". */
export function droppedArgsReason(dropped: readonly string[]): string {
  const names = [...new Set(dropped.filter((a) => a.startsWith("--")).map((a) => a.split("=")[0]!))];
  return names
    .map((n) => {
      const since = BUILTIN_FLAGS_SINCE[n];
      return since ? `${n} needs 1.${since.minor}+ (${since.origin})` : n;
    })
    .join(", ");
}

/** The built-in's CronJob workers with `args`: the last --concurrent-cron-job-syncs (pflag keeps the last), else 5. */
export function builtinWorkers(args: readonly string[]): number {
  let workers = BUILTIN_DEFAULT_WORKERS;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const value = arg.startsWith("--concurrent-cron-job-syncs=")
      ? arg.slice(arg.indexOf("=") + 1)
      : arg === "--concurrent-cron-job-syncs"
        ? args[i + 1]
        : undefined;
    if (value !== undefined && /^\d+$/.test(value)) workers = Number(value);
  }
  return workers;
}
/** The measurement (writes, CPU) ends this long after the last measured slot. */
export const END_AFTER_LAST_SLOT_MS = 50_000;
/** The steady state's window: the last measured minutes, each CronJob past the fold's 5-minute bound by then. */
const TAIL_MINUTES = 5;
/**
 * Then, while the last slot still lacks Jobs and they keep coming at a rate that completes it in time,
 * the Job watch goes on for up to this long, so that a late last slot counts as skew, as the earlier
 * slots' late Jobs do, and not as missed.
 */
export const DRAIN_MAX_MS = 120_000;
/**
 * A controller that cannot drain its queue (the built-in at N=1000 with its 20 qps client limit) never
 * finishes a "cold start": after this long the measurement starts anyway and the cold start is reported
 * as not reached. 120 s, or 20 ms per CronJob for large N (200 s at N = 10,000).
 */
export function coldStartTimeoutMs(n: number): number {
  return Math.max(120_000, 20 * n);
}
/** Leftover groups of a SIGKILLed run can be recognised by this prefix. */
export const CGROUP_PREFIX = "cronjob-bench-";

export interface Settings {
  minutes: number;
  namespaces: number;
  /** --groups: ours' CronJobs, every fifth one, in this many concurrency groups (0: none). */
  groups: number;
  /**
   * --calendars: ours' CronJobs, every fifth one (not the groups' fifth), name one of this many ExclusionCalendars
   * and have a window of their own, none of which holds a slot during the run (0: none).
   */
  calendars: number;
  /** JITTER: ours' CronJobs' spec.jitter (none: unset). */
  jitter?: string;
  /**
   * --max-concurrent-reconciles of ours (its default, 16; the built-in runs ConcurrentCronJobSyncs workers: 5 as it
   * ships, 50 fully tuned).
   */
  workers: number;
  /** Requests in flight in the calibration phase. */
  inFlight: number;
  /** The finisher marks a Job Complete this long after it appears. */
  finishAfterMs: number;
  /** Extra kube-controller-manager flags for both built-in configurations. */
  builtinArgs: string[];
  /** The tuned built-in's flags (BUILTIN_TUNED_ARGS by default), before builtinArgs. */
  builtinTunedArgs: string[];
  /** ours runs in a cgroup with these limits (when cgroups are available). */
  operatorLimits: Limits;
  cgroups: CgroupSupport;
  /** Extra node flags for the operator (e.g. --cpu-prof). */
  operatorNodeArgs: string[];
  /** Logs of the controllers go here. */
  workDir: string;
  /**
   * --apiserver-profile: a CPU profile of kube-apiserver from the first measured slot (ours and the fully tuned
   * built-in), to `<base>.apiserver-<phase>.pprof` (`<base>.apiserver-<phase>-N<n>.pprof` when several N run).
   */
  apiserverProfile?: { base: string; perN: boolean; seconds: number };
  log: (msg: string) => void;
}

export interface CalibrationResult {
  n: number;
  inFlight: number;
  seconds: number;
  perSecond: number;
  /** What a bare Job create costs kube-apiserver and etcd (CPU ms per create, the creates alone). */
  apiserverCpuMsPerCreate?: number;
  etcdCpuMsPerCreate?: number;
  /** What each kind of write of a run costs, and the protobuf lever (measureWriteCosts). */
  writeCosts?: WriteCost[];
  writeCostsError?: string;
  /** kube-apiserver's gitVersion (GET /version), which decides the Job completions' conditions. */
  serverVersion?: string;
  error?: string;
  loadavgBefore?: string;
  loadavgAfter?: string;
}

/** One batch of N writes of one kind in the calibration: CPU per write (ms) and the request body's size. */
export interface WriteCost {
  /** As apiserver_request_total counts it (verb, resource/subresource): the key of ours' writes per run. */
  write:
    "POST jobs" | "POST events" | "PUT cronjobs/status" | "PATCH cronjobs/status" | "PATCH jobs/status" | "DELETE jobs";
  encoding: "json" | "protobuf";
  /** PATCH: merge (RFC 7386, application/merge-patch+json) or json (RFC 6902, application/json-patch+json). */
  patch?: "merge" | "json";
  /** PATCH jobs/status: the conditions the completion wrote (completionConditions of the control plane). */
  conditions?: string[];
  count: number;
  seconds: number;
  apiserverCpuMs?: number;
  etcdCpuMs?: number;
  bodyBytes?: number;
}

export type ControllerPhase = "ours" | "builtin" | "builtin-tuned";

export interface CgroupResult {
  /** Whether the controller ran inside the group. */
  applied: boolean;
  /** Why not, when !applied. */
  reason?: string;
  /** The limits written ("none" = a group without limits, for the same accounting). */
  limits?: string;
  info?: CgroupInfo;
  /** At the end of the cold start, at the end of the run (before the controller stops). */
  atReady?: CgroupStats;
  atEnd?: CgroupStats;
}

export interface PhaseResult {
  phase: ControllerPhase;
  /** "ours", "built-in (defaults)", "built-in (tuned)". */
  label?: string;
  /** Extra flags of this configuration (built-in), as passed. */
  extraArgs?: string[];
  /** Flags of the configuration its kube-controller-manager does not have (older than the flag), not passed. */
  droppedArgs?: string[];
  /** CronJob workers: ours' --max-concurrent-reconciles, the built-in's ConcurrentCronJobSyncs. */
  workers?: number;
  /** `--version` of the controller's binary (built-in: kube-controller-manager's). */
  controllerVersion?: string;
  /** kube-apiserver's gitVersion (GET /version): it decides the finisher's conditions. */
  serverVersion?: string;
  n: number;
  ok: boolean;
  loadavgBefore?: string;
  loadavgAfter?: string;
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
  coldStartTimeoutS?: number;
  /** Minute slots that passed during the cold start, and the Jobs created for them by its end. */
  slotsInColdStart?: Array<{ slot: string; jobs: number }>;
  /** Cold-start polling of the controller's metrics: scrapes and the slowest one (ms). */
  coldStartScrapes?: number;
  coldStartScrapeMaxMs?: number;
  runSeconds?: number;
  /** Seconds the Job watch went on after the measurement for late Jobs of the last slot. */
  drainSeconds?: number;
  /** The controller exited before the end of the run (an OOM kill, a crash), this long after start. */
  exitedAtS?: number;
  exitCode?: number | null;
  analysis?: Analysis;
  /** N × measured slots: the runs the controller was asked to make in the window. */
  runsAsked?: number;
  /** apiserver writes of the controller during the run (the finisher's jobs/status patches excluded). */
  writes?: number;
  /** …during the cold start, and after it (the measured slots and 50 s). */
  writesColdStart?: number;
  writesSteady?: number;
  /** writesSteady / runsAsked: the headline. */
  writesPerRun?: number;
  /** writes (whole run) / Jobs created. */
  writesPerJob?: number;
  writesByResource?: Record<string, number>;
  /** The same after the cold start (the writes per run are these over runsAsked). */
  writesSteadyByResource?: Record<string, number>;
  failedWritesByResource?: Record<string, number>;
  finisherPatches?: number;
  finisherErrors?: number;
  /** Jobs the finisher completed (each with one jobs/status patch), and the conditions it wrote. */
  finisherCompleted?: number;
  finisherConditions?: string[];
  /** --apiserver-profile: kube-apiserver's CPU profile from the first measured slot. */
  apiserverProfile?: ProfileResult;
  cpuSeconds?: number;
  cpuColdStartSeconds?: number;
  cpuPerMinuteSteady?: number;
  /** CPU after the cold start / runsAsked, ms. */
  cpuMsPerRunSteady?: number;
  /** The busiest second (1 s samples), cores. */
  cpuPeakCores?: number;
  peakRssMB?: number;
  cgroup?: CgroupResult;
  /** events_dropped_total at the end (ours), by reason. */
  eventsDropped?: number;
  eventsDroppedByReason?: Record<string, number>;
  finisherInFlight?: number;
  finisherLagP99S?: number;
  finisherLagMaxS?: number;
  watchRestarts?: number;
  watchRelists?: number;
  /** The controller's V8 heap at the end of the run (ours: prom-client's nodejs_heap_size_*), in MB. */
  heapUsedMB?: number;
  heapTotalMB?: number;
  apiserverCpuSeconds?: number;
  /** kube-apiserver's CPU in its busiest second of the measured slots, in cores. */
  apiserverPeakCores?: number;
  /** kube-apiserver's and etcd's CPU after the controller's cold start, per run asked (ms). */
  apiserverCpuMsPerRun?: number;
  /**
   * The same over the last TAIL_MINUTES measured slots only (a window of at least TAIL_MINUTES + 1 minutes): the steady
   * state, every CronJob past the fold's 5-minute bound (issue 79), which the whole window's figure averages with its
   * first minutes.
   */
  apiserverCpuMsPerRunTail?: number;
  etcdCpuMsPerRun?: number;
  /** kube-apiserver's and etcd's CPU during the controller's cold start (s). */
  apiserverCpuColdStartSeconds?: number;
  etcdCpuColdStartSeconds?: number;
  /**
   * Bytes the controller sent to / read from its sockets after the cold start, per run asked: /proc/<pid>/io
   * wchar / rchar less what it wrote to its log (the log file's growth).
   */
  bytesSentPerRun?: number;
  bytesReceivedPerRun?: number;
  controllerRequests?: Record<string, number>;
  queueRetries?: number;
  reconcileErrors?: number;
  /** controller_runtime_reconcile_total by result (ours only). */
  reconcilesByResult?: Record<string, number>;
  /** Ours sharded (SHARDS): the replicas measured, each one's figures, and the faults after the window. */
  shardCount?: number;
  shards?: ShardResult[];
  faults?: ShardFaults;
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
 * kube-controller-manager cause them), kube-apiserver itself maintains the `kubernetes` Service's
 * endpoints every 10 s, and from 1.26 (APIServerIdentity beta) renews its own identity Lease
 * (kube-system/apiserver-<id>) every 10 s: neither controller runs leader election here (ours without
 * --leader-elect, kube-controller-manager with --leader-elect=false), so no Lease write is theirs.
 */
export const NOT_COUNTED = ["tokenreviews", "subjectaccessreviews", "endpoints", "endpointslices", "leases"];
const NOT_STORED = new Set([
  "endpoints",
  "endpointslices",
  "leases",
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
  const loadavgBefore = loadavg();
  const r = await calibrateOnce(n, s);
  return { ...r, loadavgBefore, loadavgAfter: loadavg() };
}

async function calibrateOnce(n: number, s: Settings): Promise<CalibrationResult> {
  const env = await TestEnv.start({ verbose: false, crdDirectoryPaths: [] });
  const client = new Client(env.kubeConfig, { userAgent: "bench", maxSockets: Math.max(64, s.inFlight) });
  try {
    await createNamespaces(client, s.namespaces);
    await client.list(Kinds.Job, { limit: 1 }); // connection and TLS warm-up
    const apiserverPid =
      env.apiServer?.pid === undefined ? undefined : await findChild(env.apiServer.pid, "kube-apiserver");
    const etcdPid = env.etcd?.pid === undefined ? undefined : await findChild(env.etcd.pid, "etcd");
    const before = serverCpu(apiserverPid, etcdPid);
    const floorJob = (i: number) => {
      const p = placement(i, s.namespaces);
      return rawJob(p.namespace, `calib-${p.name}`);
    };
    const seconds = await createMany(client, Kinds.Job, n, s.inFlight, floorJob);
    const after = serverCpu(apiserverPid, etcdPid);
    const msPerCreate = (a: number | undefined, b: number | undefined) =>
      a === undefined || b === undefined ? undefined : ((b - a) * 1000) / n;
    const api = msPerCreate(before.apiserver, after.apiserver);
    const etcd = msPerCreate(before.etcd, after.etcd);
    const version = await serverVersion(client);
    let writeCosts: WriteCost[] | undefined;
    let writeCostsError: string | undefined;
    try {
      writeCosts = await measureWriteCosts(
        client,
        env,
        n,
        s,
        () => serverCpu(apiserverPid, etcdPid),
        floorJob,
        version,
      );
    } catch (err) {
      writeCostsError = errorText(err);
    }
    return {
      n,
      inFlight: s.inFlight,
      seconds,
      perSecond: n / seconds,
      ...(api === undefined ? {} : { apiserverCpuMsPerCreate: api }),
      ...(etcd === undefined ? {} : { etcdCpuMsPerCreate: etcd }),
      ...(writeCosts ? { writeCosts } : {}),
      ...(writeCostsError ? { writeCostsError } : {}),
      serverVersion: version.text,
    };
  } catch (err) {
    return { n, inFlight: s.inFlight, seconds: NaN, perSecond: NaN, error: errorText(err) };
  } finally {
    client.close();
    await env.stop();
  }
}

/**
 * What each write of a run costs kube-apiserver and etcd, one kind of write at a time, and what protobuf
 * instead of JSON would save on the built-in kinds, on the floor's control plane after the floor:
 * - N creates of the same Job and N Events like ours' SuccessfulCreate, each half in JSON and half in
 *   protobuf (`application/vnd.kubernetes.protobuf` request and response, as kube-controller-manager
 *   sends), in the order JSON, protobuf, protobuf, JSON (N/2 each), so that a store growing batch by batch
 *   weighs on both encodings alike; three objects of each protobuf batch are read back and compared;
 * - then the CRD is installed and N of our CronJobs created, each with the status of a CronJob that has run every
 *   minute for a while (10 recentRuns; not measured), and three batches of N status writes of the same change,
 *   a run's Job created (its recentRuns entry added, the oldest dropped, active, lastScheduleTime,
 *   nextScheduleTime): the PUT of the whole object ours sends, a merge patch and a JSON patch (RFC 6902) of it,
 *   each conditional on the resourceVersion read (an unmeasured PUT of the run's end between batches, so that
 *   each starts from the same state);
 * - then N completions of the floor's Jobs (the finisher's status patch: the Job controller's write in a
 *   cluster, the same for both controllers; SuccessCriteriaMet and Complete from 1.31, completionConditions)
 *   and N deletes of them (propagationPolicy Background, as history cleanup sends).
 * Every batch starts once kube-apiserver is idle again (installing a CRD, for one, keeps it busy for seconds).
 */
async function measureWriteCosts(
  client: Client,
  env: TestEnv,
  n: number,
  s: Settings,
  cpu: () => { apiserver?: number; etcd?: number },
  floorJob: (i: number) => KubeObject,
  version: KubeVersion,
): Promise<WriteCost[]> {
  const pb = await ProtobufPoster.open(env.kubeConfig, Math.max(64, s.inFlight));
  const half = Math.max(1, Math.floor(n / 2));
  const total = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const at = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  const event = (i: number): KubeObject => {
    const p = placement(i, s.namespaces);
    return benchEvent(p.namespace, `calib-${p.name}`, at, i);
  };
  const job = (batch: number, i: number): KubeObject => {
    const p = placement(i, s.namespaces);
    return rawJob(p.namespace, `calib-${batch}-${p.name}`);
  };
  /** N writes (send(i) for i < count), 48 in flight, from an idle kube-apiserver: CPU ms per write. */
  const batch = async (count: number, send: (i: number) => Promise<unknown>) => {
    await settle(cpu);
    const before = cpu();
    const started = performance.now();
    await forEachLimit(count, s.inFlight, async (i) => {
      await send(i);
    });
    const seconds = (performance.now() - started) / 1000;
    const after = cpu();
    const per = (x?: number, y?: number) => (x === undefined || y === undefined ? undefined : ((y - x) * 1000) / count);
    return { count, seconds, api: per(before.apiserver, after.apiserver), etcd: per(before.etcd, after.etcd) };
  };
  type Measured = Awaited<ReturnType<typeof batch>>;
  const cost = (
    write: WriteCost["write"],
    encoding: WriteCost["encoding"],
    parts: Measured[],
    sample: unknown,
    more: Pick<WriteCost, "patch" | "conditions"> = {},
  ): WriteCost => {
    const count = total(parts.map((p) => p.count));
    const weighted = (k: "api" | "etcd") =>
      parts.every((p) => p[k] !== undefined) ? total(parts.map((p) => p[k]! * p.count)) / count : undefined;
    const api = weighted("api");
    const etcd = weighted("etcd");
    const bodyBytes =
      sample === undefined
        ? undefined
        : encoding === "json"
          ? Buffer.byteLength(JSON.stringify(sample))
          : encodeProtobuf(sample as KubeObject).length;
    return {
      write,
      encoding,
      ...more,
      count,
      seconds: total(parts.map((p) => p.seconds)),
      ...(api === undefined ? {} : { apiserverCpuMs: api }),
      ...(etcd === undefined ? {} : { etcdCpuMs: etcd }),
      ...(bodyBytes === undefined ? {} : { bodyBytes }),
    };
  };
  /** Read back a few protobuf-created objects (as JSON) and compare them with what was sent. */
  const verify = async (rk: ResourceKind, make: (i: number) => KubeObject) => {
    for (const i of [0, Math.floor(half / 2), half - 1]) {
      const sent = make(i);
      const stored = await client.get(rk, sent.metadata?.namespace, sent.metadata?.name ?? "");
      const d = protobufMismatch(sent, stored);
      if (d) throw new Error(`protobuf ${sent.kind} ${sent.metadata?.name}: stored ${d} differs from what was sent`);
    }
  };
  try {
    const out: WriteCost[] = [];
    // Jobs: JSON, protobuf, protobuf, JSON.
    const j1 = await batch(half, (i) => client.create(Kinds.Job, job(1, i)));
    const p1 = await batch(half, (i) => pb.create(Kinds.Job, job(2, i)));
    const p2 = await batch(half, (i) => pb.create(Kinds.Job, job(3, i)));
    const j2 = await batch(half, (i) => client.create(Kinds.Job, job(4, i)));
    await verify(Kinds.Job, (i) => job(2, i));
    out.push(cost("POST jobs", "json", [j1, j2], job(1, 0)), cost("POST jobs", "protobuf", [p1, p2], job(2, 0)));
    // Events: JSON, protobuf, protobuf, JSON.
    const e1 = await batch(half, (i) => client.create(Kinds.Event, event(i)));
    const q1 = await batch(half, (i) => pb.create(Kinds.Event, event(half + i)));
    const q2 = await batch(half, (i) => pb.create(Kinds.Event, event(2 * half + i)));
    const e2 = await batch(half, (i) => client.create(Kinds.Event, event(3 * half + i)));
    await verify(Kinds.Event, (i) => event(half + i));
    out.push(cost("POST events", "json", [e1, e2], event(0)), cost("POST events", "protobuf", [q1, q2], event(half)));
    // Our CronJob's status writes: the same change (a run's Job created) three ways, each from the same state.
    await env.installCRDs([join(PROJECT_ROOT, "config", "crd", "bases")]);
    const slot0 = Math.floor(Date.parse(at) / 60_000) * 60_000;
    const cronJobs = new Array<KubeObject>(n);
    await forEachLimit(n, s.inFlight, async (i) => {
      const p = placement(i, s.namespaces);
      const created = await client.create(CronJobResource, ourCronJob(p.namespace, `calib-${p.name}`));
      cronJobs[i] = await client.updateStatus(CronJobResource, { ...created, status: idleStatus(created, slot0) });
    });
    /** The next run of every CronJob: slot `k` minutes after slot0 (its Job created), from the idle state before. */
    const runOf = (i: number, k: number) => runStatus(cronJobs[i]!, slot0 + k * 60_000);
    /** Back to idle (the run of slot k ended), not measured: the next batch changes the same fields. */
    const endRuns = (k: number) =>
      forEachLimit(n, s.inFlight, async (i) => {
        const o = cronJobs[i]!;
        cronJobs[i] = await client.updateStatus(CronJobResource, { ...o, status: idleStatus(o, slot0 + k * 60_000) });
      });
    // The whole object as ours' cache holds it: without managedFields (runtime/manager.ts strips them; the
    // apiserver keeps the stored ones when a PUT omits them).
    const put = (i: number, k: number): KubeObject =>
      ({
        ...cronJobs[i]!,
        metadata: { ...cronJobs[i]!.metadata, managedFields: undefined },
        status: runOf(i, k),
      }) as KubeObject;
    const putSample = put(0, 1);
    const st = await batch(n, async (i) => {
      cronJobs[i] = await client.updateStatus(CronJobResource, put(i, 1));
    });
    out.push(cost("PUT cronjobs/status", "json", [st], putSample));
    await endRuns(1);
    const merge = (i: number, k: number) => statusMergePatch(cronJobs[i]!, runOf(i, k));
    const mergeSample = merge(0, 2);
    const mp = await batch(n, async (i) => {
      const o = cronJobs[i]!;
      cronJobs[i] = await client.patchStatus(
        CronJobResource,
        o.metadata?.namespace,
        o.metadata?.name ?? "",
        merge(i, 2),
        "merge",
      );
    });
    out.push(cost("PATCH cronjobs/status", "json", [mp], mergeSample, { patch: "merge" }));
    await endRuns(2);
    const json = (i: number, k: number) => statusJsonPatch(cronJobs[i]!, runOf(i, k));
    const jsonSample = json(0, 3);
    const jp = await batch(n, async (i) => {
      const o = cronJobs[i]!;
      cronJobs[i] = await client.patchStatus(
        CronJobResource,
        o.metadata?.namespace,
        o.metadata?.name ?? "",
        json(i, 3),
        "json",
      );
    });
    out.push(cost("PATCH cronjobs/status", "json", [jp], jsonSample, { patch: "json" }));
    // The finisher's completion of a Job (the Job controller's write; the same for both controllers), with the
    // conditions this control plane's version requires.
    const conditions = completionConditions(version);
    const completion = completionPatch(at, at, conditions);
    const done = await batch(n, (i) => {
      const o = floorJob(i);
      return client.patchStatus(Kinds.Job, o.metadata?.namespace, o.metadata?.name ?? "", completion, "merge");
    });
    out.push(cost("PATCH jobs/status", "json", [done], completion, { patch: "merge", conditions }));
    // History cleanup's delete.
    const del = await batch(n, (i) => {
      const o = floorJob(i);
      return client.delete(Kinds.Job, o.metadata?.namespace, o.metadata?.name ?? "", {
        propagationPolicy: "Background",
      });
    });
    // The body runtime/client.ts's delete sends with propagationPolicy.
    out.push(
      cost("DELETE jobs", "json", [del], { apiVersion: "v1", kind: "DeleteOptions", propagationPolicy: "Background" }),
    );
    return out;
  } finally {
    pb.close();
  }
}

/** Waits (at most 30 s) until kube-apiserver used under 5 % of a core for a second. */
async function settle(cpu: () => { apiserver?: number }): Promise<void> {
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    const a = cpu().apiserver;
    if (a === undefined) return;
    await sleep(1000);
    const b = cpu().apiserver;
    if (b === undefined || b - a < 0.05) return;
  }
}

// --- our CronJob's status, as a run changes it ----------------------------------------------------------

const rfc3339s = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");

/** The Job ours creates for `slot` (ms). */
const jobNameOf = (cronJob: string, slot: number) => jobNameFor(cronJob, new Date(slot));

/**
 * The recentRuns entry of the run of `slot`, as ours writes it: its Job created in the slot's second and, once
 * `ended`, complete 5 s later (the finisher's delay).
 */
function recentRun(cronJob: string, slot: number, ended: boolean): Record<string, unknown> {
  return {
    trigger: "Schedule",
    scheduledTime: rfc3339s(slot),
    decision: "Created",
    reason: "Scheduled",
    decidedAt: rfc3339s(slot),
    job: jobNameOf(cronJob, slot),
    ...(ended ? { outcome: { result: "Complete", finishedAt: rfc3339s(slot + 5000) } } : {}),
  };
}

/**
 * Conditions as controllers/conditions.ts words them for `active` running Jobs: Available and Degraded keep their
 * status (True, False) and so their lastTransitionTime (`since`); Progressing turns with every run, at `at`.
 */
function runConditions(
  active: number,
  next: number,
  at: number,
  since: number,
  generation: number,
): Array<Record<string, unknown>> {
  const c = (type: string, status: string, reason: string, message: string, changed: number) => ({
    type,
    status,
    reason,
    message,
    lastTransitionTime: rfc3339s(changed),
    observedGeneration: generation,
  });
  return [
    active
      ? c("Available", "True", "JobsActive", `${active} active Job(s); next run at ${rfc3339s(next)}`, since)
      : c("Available", "True", "Scheduled", `Next run at ${rfc3339s(next)}`, since),
    active
      ? c("Progressing", "True", "JobsActive", `${active} Job(s) running`, at)
      : c("Progressing", "False", "NoJobsActive", "No Jobs running", at),
    c("Degraded", "False", "AsExpected", "No problems detected", since),
  ];
}

/** When the bench's CronJob was created (its conditions' first transition), ms. */
const createdAt = (cronJob: KubeObject) => Date.parse(String(cronJob.metadata?.creationTimestamp ?? "")) || 0;

/**
 * The status of a CronJob running every minute once the run of `slot` (ms) ended: the 10 newest runs in
 * recentRuns (all Complete), no Job active, the next slot announced.
 */
function idleStatus(cronJob: KubeObject, slot: number): Record<string, unknown> {
  const name = cronJob.metadata?.name ?? "";
  const generation = cronJob.metadata?.generation ?? 1;
  return {
    active: [],
    activeCount: 0,
    lastScheduleTime: rfc3339s(slot),
    lastSuccessfulTime: rfc3339s(slot + 5000),
    nextScheduleTime: rfc3339s(slot + 60_000),
    resolvedSchedule: "* * * * *",
    conditions: runConditions(0, slot + 60_000, slot + 5000, createdAt(cronJob), generation),
    observedGeneration: generation,
    recentRuns: Array.from({ length: 10 }, (_, k) => recentRun(name, slot - k * 60_000, true)),
  };
}

/**
 * What ours writes when it created the Job of `slot` (ms) of `cronJob` (idle after the slot before): the run's
 * recentRuns entry added in front and the oldest dropped (10 kept), the Job in active, the slot in
 * lastScheduleTime, the next one in nextScheduleTime, the conditions saying a Job runs.
 */
function runStatus(cronJob: KubeObject, slot: number): Record<string, unknown> {
  const ns = cronJob.metadata?.namespace ?? "";
  const name = cronJob.metadata?.name ?? "";
  const generation = cronJob.metadata?.generation ?? 1;
  const before = idleStatus(cronJob, slot - 60_000);
  return {
    ...before,
    active: [
      {
        apiVersion: "batch/v1",
        kind: "Job",
        name: jobNameOf(name, slot),
        namespace: ns,
        uid: "0b6d2c1e-8d4f-4a51-9f0e-5a7c3e9b1d22",
        resourceVersion: "123457",
      },
    ],
    activeCount: 1,
    lastScheduleTime: rfc3339s(slot),
    nextScheduleTime: rfc3339s(slot + 60_000),
    conditions: runConditions(1, slot + 60_000, slot, createdAt(cronJob), generation),
    recentRuns: [recentRun(name, slot, false), ...(before.recentRuns as unknown[]).slice(0, 9)],
  };
}

/** The top-level status fields that differ between `a` and `b` (missing on either side included). */
function changedStatusFields(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => canonical(a[k]) !== canonical(b[k]));
}

/**
 * A merge patch (RFC 7386) of `cronJob`'s status to `next`: the changed fields (a list, recentRuns, is replaced
 * whole: merge patches have no list operations), null for those gone; conditional on the resourceVersion read,
 * like the PUT.
 */
function statusMergePatch(cronJob: KubeObject, next: Record<string, unknown>): object {
  const old = ((cronJob as { status?: Record<string, unknown> }).status ?? {}) as Record<string, unknown>;
  const status: Record<string, unknown> = {};
  for (const k of changedStatusFields(old, next)) status[k] = next[k] ?? null;
  return { metadata: { resourceVersion: cronJob.metadata?.resourceVersion }, status };
}

/**
 * A JSON patch (RFC 6902) of `cronJob`'s status to `next`, the body a small diff: a `test` of the resourceVersion
 * read (optimistic concurrency, like the PUT's), a new recentRuns entry added at /status/recentRuns/0 and the
 * ones beyond the 10 kept removed (the whole list replaced when the change is not that), the other changed
 * fields replaced, added or removed one by one, and of a list as long as before (conditions) only the entries
 * that changed.
 */
function statusJsonPatch(cronJob: KubeObject, next: Record<string, unknown>): object[] {
  const old = ((cronJob as { status?: Record<string, unknown> }).status ?? {}) as Record<string, unknown>;
  const ops: object[] = [{ op: "test", path: "/metadata/resourceVersion", value: cronJob.metadata?.resourceVersion }];
  for (const k of changedStatusFields(old, next)) {
    const path = `/status/${k}`;
    if (k === "recentRuns" && Array.isArray(old[k]) && Array.isArray(next[k])) {
      const before = old[k] as unknown[];
      const after = next[k] as unknown[];
      // One entry in front, the rest the old ones (the oldest dropped when over the limit)?
      const shifted = after.length >= 1 && after.slice(1).every((e, i) => canonical(e) === canonical(before[i]));
      if (shifted && before.length + 1 >= after.length) {
        ops.push({ op: "add", path: `${path}/0`, value: after[0] });
        for (let i = before.length; i >= after.length; i--) ops.push({ op: "remove", path: `${path}/${i}` });
        continue;
      }
    }
    if (
      Array.isArray(old[k]) &&
      Array.isArray(next[k]) &&
      (old[k] as unknown[]).length === (next[k] as unknown[]).length
    ) {
      const before = old[k] as unknown[];
      (next[k] as unknown[]).forEach((e, i) => {
        if (canonical(e) !== canonical(before[i])) ops.push({ op: "replace", path: `${path}/${i}`, value: e });
      });
      continue;
    }
    if (!(k in next)) ops.push({ op: "remove", path });
    else ops.push({ op: k in old ? "replace" : "add", path, value: next[k] });
  }
  return ops;
}

// --- the controllers ---------------------------------------------------------------------------------

interface Launched {
  proc: ManagedProcess;
  pid: number;
  commandLine: string;
  logFile: string;
  metrics(timeoutMs?: number): Promise<Sample[]>;
  /** When the controller's workers started (epoch ms), from its log; undefined if not found. */
  workersStartedAt(): number | undefined;
}

/** One replica of a sharded phase. */
export interface ShardLaunch {
  index: number;
  /** Its POD_NAME. */
  replica: string;
}

export interface Driver {
  phase: ControllerPhase;
  label: string;
  kind: ResourceKind;
  /** CronJob `name`; `extras`: its concurrency group and exclusions (--groups, --calendars; ours only). */
  make(namespace: string, name: string, extras?: OursExtras): KubeObject;
  slotOf: SlotOf;
  /** The limits of its cgroup (ours: the Deployment's; the built-in: none, a group for the same accounting). */
  limits(s: Settings): Limits;
  /** Extra flags of this configuration, as passed (those its binary has), for the report. */
  extraArgs(s: Settings): string[];
  /** Flags of this configuration its binary does not have (too old), not passed; the report says so. */
  droppedArgs(s: Settings): string[];
  /** Its CronJob workers with these flags. */
  workers(s: Settings): number;
  /** Its binary's version (`--version`), for the report. */
  version(): string | undefined;
  /** Starts the controller; through `cg.wrap` when a cgroup is given; `shard`: one replica of several (ours only). */
  launch(env: TestEnv, s: Settings, n: number, cg: Cgroup | undefined, shard?: ShardLaunch): Promise<Launched>;
}

export function shellQuote(args: string[]): string {
  return args.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(" ");
}

async function realPid(proc: ManagedProcess, name: string, logFile: string): Promise<number> {
  const wrapper = proc.pid;
  const pid = wrapper === undefined ? undefined : await findChild(wrapper, name);
  if (pid === undefined)
    throw new Error(`could not find the ${name} process (wrapper ${wrapper}); log:\n${tail(logFile)}`);
  return pid;
}

/** The node options the Deployment sets (config/manager), so memory and GC behave as in the pod. */
export function deploymentNodeOptions(): string {
  return envValue(readManagerDeployment(PROJECT_ROOT)?.container, "NODE_OPTIONS");
}

/**
 * V8's heap limit (MB) of a node started with the Deployment's NODE_OPTIONS inside a throwaway group with
 * `limits`: what the operator's old + young generation may grow to under the limit. Undefined without cgroups.
 */
export function v8HeapLimitMB(support: CgroupSupport, limits: Limits, nodeOptions: string): number | undefined {
  const code = "process.stdout.write(String(require('v8').getHeapStatistics().heap_size_limit))";
  let cg: Cgroup | undefined;
  try {
    if (support.ok) cg = Cgroup.create(support, `${CGROUP_PREFIX}${process.pid}-probe`, limits);
    const cmd = cg ? cg.wrap(NODE, ["-e", code]) : { bin: NODE, args: ["-e", code] };
    const out = execFileSync(cmd.bin, cmd.args, {
      encoding: "utf8",
      env: { ...process.env, NODE_OPTIONS: nodeOptions },
      timeout: 30_000,
    });
    const v = Number(out.trim());
    return Number.isFinite(v) ? v / 2 ** 20 : undefined;
  } catch {
    return undefined;
  } finally {
    cg?.remove();
  }
}

export const oursDriver: Driver = {
  phase: "ours",
  label: "ours",
  kind: CronJobResource,
  make: ourCronJob,
  slotOf: ourSlotOf,
  limits: (s) => s.operatorLimits,
  extraArgs: () => [],
  droppedArgs: () => [],
  workers: (s) => s.workers,
  version: () => undefined,
  async launch(env, s, n, cg, shard) {
    const port = await freePort();
    const logFile = join(s.workDir, shard ? `ours-N${n}-shard${shard.index}.log` : `ours-N${n}.log`);
    const args = [
      ...s.operatorNodeArgs,
      // The compiled entrypoint, as the image runs it (make bench builds it first). OPERATOR_DIST points at
      // another build's dist/ (another commit's, to measure one change at a time).
      join(process.env.OPERATOR_DIST ?? join(PROJECT_ROOT, "dist"), "cmd", "main.js"),
      ...localManagerFlags(env.kubeconfigPath, port),
      "--max-concurrent-reconciles",
      String(s.workers),
      // Every replica active, each with its own Lease (named after POD_NAME) and its share of the namespaces.
      ...(shard ? ["--sharding"] : []),
    ];
    const nodeOptions = deploymentNodeOptions();
    const cmd = cg ? cg.wrap(NODE, args) : { bin: NODE, args };
    const proc = new ManagedProcess("cronjob-operator", cmd.bin, cmd.args, logFile, {
      ...process.env,
      ENABLE_WEBHOOKS: "false",
      NODE_OPTIONS: nodeOptions,
      ...(shard ? { POD_NAME: shard.replica } : {}),
    });
    const pid = await realPid(proc, "node", logFile);
    return {
      proc,
      pid,
      logFile,
      commandLine: `ENABLE_WEBHOOKS=false ${shard ? `POD_NAME=${shard.replica} ` : ""}${nodeOptions ? `NODE_OPTIONS=${shellQuote([nodeOptions])} ` : ""}${shellQuote(["node_modules/.bin/node", ...args]).replaceAll(`${PROJECT_ROOT}/`, "")}`,
      metrics: (timeoutMs = 5000) => scrape(`http://127.0.0.1:${port}/metrics`, { timeoutMs }),
      workersStartedAt: () => loggedAt(logFile, "Starting workers"),
    };
  },
};

function builtinDriver(phase: "builtin" | "builtin-tuned", label: string, extra: (s: Settings) => string[]): Driver {
  // The assets are the bench's (KUBEBUILDER_ASSETS): the version decides which flags the binary has.
  const kcm = () => join(assetsDir(), "kube-controller-manager");
  const served = (s: Settings) => servedBuiltinArgs(extra(s), binaryVersion(kcm()));
  return {
    phase,
    label,
    // The control plane's version decides the built-in's API version (the assets are the bench's, KUBEBUILDER_ASSETS).
    get kind() {
      return builtinCronJobKind(binaryVersion(join(assetsDir(), "kube-apiserver")).minor);
    },
    make(namespace, name) {
      return builtinCronJob(this.kind, namespace, name);
    },
    slotOf: builtinSlotOf,
    limits: () => ({}),
    extraArgs: (s) => served(s).args,
    droppedArgs: (s) => served(s).dropped,
    workers: (s) => builtinWorkers(served(s).args),
    version: () => binaryVersion(kcm()).text,
    async launch(env, s, n, cg) {
      // The flags envtest's TestEnv.start({ controllerManager: { controllers: ["cronjob"], extraArgs } })
      // uses, started here only once the CronJobs exist so that its cold start can be measured.
      const port = await freePort();
      const logFile = join(s.workDir, `${phase}-N${n}.log`);
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
        ...builtinControllerArgs(bin),
        ...served(s).args,
      ];
      const cmd = cg ? cg.wrap(bin, args) : { bin, args };
      const proc = new ManagedProcess("kube-controller-manager", cmd.bin, cmd.args, logFile);
      const pid = await realPid(proc, "kube-controller-manager", logFile);
      return {
        proc,
        pid,
        logFile,
        commandLine: shellQuote(["kube-controller-manager", ...args]),
        // Delegated authn/authz: the admin token (system:masters) may read /metrics.
        metrics: (timeoutMs = 5000) =>
          scrape(`https://127.0.0.1:${port}/metrics`, { token: env.token, insecure: true, timeoutMs }),
        workersStartedAt: () => {
          // klog: "I1122 05:49:59.886331   12345 shared_informer.go:247] Caches are synced for cronjob" (1.20);
          // structured from 1.27: `... shared_informer.go:320] "Caches are synced" controller="cronjob"`.
          for (const line of readLines(logFile)) {
            const m =
              /^[IWE](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d+).*(?:Caches are synced for cronjob\b|"Caches are synced" controller="cronjob")/.exec(
                line,
              );
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
}

/** kube-controller-manager as it ships: client-side rate limit 20 qps, burst 30; 5 workers. */
export const builtinDefaultsDriver = builtinDriver("builtin", "built-in (defaults)", (s) => s.builtinArgs);
/**
 * kube-controller-manager fully tuned (BUILTIN_TUNED_ARGS): a client-side rate limit that does not bound it here
 * and 50 workers, the fair comparison.
 */
export const builtinTunedDriver = builtinDriver("builtin-tuned", "built-in (fully tuned)", (s) => [
  ...s.builtinTunedArgs,
  ...s.builtinArgs,
]);

/** kube-apiserver's and etcd's CPU seconds now (undefined for a process not found or gone). */
function serverCpu(apiserverPid: number | undefined, etcdPid: number | undefined) {
  return {
    apiserver: apiserverPid === undefined ? undefined : cpuSeconds(apiserverPid),
    etcd: etcdPid === undefined ? undefined : cpuSeconds(etcdPid),
  };
}

/** The controller's socket and log bytes so far: /proc/<pid>/io and the size of the log it writes. */
function controllerIO(launched: Launched): { read: number; written: number; log: number } | undefined {
  const io = ioBytes(launched.pid);
  if (!io) return undefined;
  let log = 0;
  try {
    log = statSync(launched.logFile).size;
  } catch {
    return undefined;
  }
  return { ...io, log };
}

/** The time (epoch ms) of the first line of the operator's JSON log `file` that contains `text`. */
export function loggedAt(file: string, text: string): number | undefined {
  for (const line of readLines(file)) {
    if (!line.includes(text)) continue;
    try {
      const ts = (JSON.parse(line) as { ts?: unknown }).ts;
      const t = typeof ts === "number" ? ts * 1000 : Date.parse(String(ts));
      if (Number.isFinite(t)) return t;
    } catch {
      // not JSON
    }
  }
  return undefined;
}

function readLines(file: string): string[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8").split("\n");
}

const QUEUE = { name: "cronjob" };
const QUEUE_CONTROLLER = { controller: "cronjob" };

function sumWrites(w: Record<string, number>): number {
  return Object.values(w).reduce((a, b) => a + b, 0);
}

function controllerWrites(before: Sample[], after: Sample[]): { writes: Record<string, number>; finisher: number } {
  const writes = diff(writesOf(before, false), writesOf(after, false));
  let finisher = 0;
  for (const k of FINISHER_KEYS) {
    finisher += writes[k] ?? 0;
    delete writes[k];
  }
  return { writes, finisher };
}

/** The phases --apiserver-profile profiles: ours and the fair comparison. */
const PROFILED_PHASES = new Set<ControllerPhase>(["ours", "builtin-tuned"]);

/** `<base>.apiserver-<phase>.pprof`, with `-N<n>` when several N run (each its own profile). */
function profileFile(o: NonNullable<Settings["apiserverProfile"]>, phase: ControllerPhase, n: number): string {
  return `${o.base}.apiserver-${phase}${o.perN ? `-N${n}` : ""}.pprof`;
}

/** Sleeps until `until` (epoch ms), checking `failed` every second; throws what it returns. */
async function sleepUnlessFailed(until: number, failed: () => Error | undefined): Promise<void> {
  for (;;) {
    const err = failed();
    if (err) throw err;
    const left = until - Date.now();
    if (left <= 0) return;
    await sleep(Math.min(1000, left));
  }
}

/** One controller phase: fresh control plane, N CronJobs, the controller, M measured minutes. */
export async function runControllerPhase(n: number, driver: Driver, s: Settings, shards = 1): Promise<PhaseResult> {
  const loadavgBefore = loadavg();
  const result = await runPhase(n, driver, s, shards);
  return { ...result, loadavgBefore, loadavgAfter: loadavg() };
}

/** `shards` > 1 (ours only): that many replicas with --sharding, each in a cgroup of its own with the same limits. */
async function runPhase(n: number, driver: Driver, s: Settings, shards: number): Promise<PhaseResult> {
  const result: PhaseResult = {
    phase: driver.phase,
    label: shards > 1 ? `${driver.label}, ${shards} shards` : driver.label,
    extraArgs: driver.extraArgs(s),
    n,
    ok: false,
    runsAsked: n * s.minutes,
    workers: driver.workers(s),
  };
  const dropped = driver.droppedArgs(s);
  if (dropped.length) result.droppedArgs = dropped;
  const controllerVersion = driver.version();
  if (controllerVersion) result.controllerVersion = controllerVersion;
  const label = shards > 1 ? `${driver.label}, ${shards} shards` : driver.label;
  const log = (msg: string) => s.log(`[N=${n} ${label}] ${msg}`);
  const env = await TestEnv.start({ verbose: false });
  const client = new Client(env.kubeConfig, { userAgent: "bench", maxSockets: 64 });
  // 8 status patches in flight keep up with 5,000 Jobs a minute; more for more.
  const finisherInFlight = Math.min(32, Math.max(8, Math.ceil(n / 625)));
  result.finisherInFlight = finisherInFlight;
  // Created once the control plane's version is known (it decides the conditions a completion writes).
  let finisher: JobFinisher | undefined;
  const recorder = new JobRecorder(client, driver.slotOf, (job) => finisher?.schedule(job));
  let profiled: Promise<ProfileResult> | undefined;
  // Every controller process of the phase (ours sharded: each shard), in start order.
  const members: Member[] = [];
  let progress: NodeJS.Timeout | undefined;
  let sampler: NodeJS.Timeout | undefined;
  try {
    const version = await serverVersion(client);
    result.serverVersion = version.text;
    finisher = new JobFinisher(client, s.finishAfterMs, completionConditions(version), finisherInFlight);
    result.finisherConditions = [...finisher.conditions];
    if (dropped.length) log(`not passing ${dropped.join(" ")}: kube-controller-manager ${controllerVersion} lacks it`);
    await createNamespaces(client, s.namespaces);
    // Groups and calendars (ours only: the built-in has neither) exist before the CronJobs that name them.
    const ours = driver.phase === "ours";
    if (ours && s.groups > 0) await createGroups(client, s.namespaces, s.groups);
    const windows = ours && s.calendars > 0 ? benchWindows(new Date()) : undefined;
    if (windows) await createCalendars(client, s.namespaces, s.calendars, windows.calendar);
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
      return driver.make(
        p.namespace,
        p.name,
        ours ? { ...oursExtras(i, s.namespaces, s.groups, s.calendars, windows?.inline), jitter: s.jitter } : undefined,
      );
    });
    log(`created ${n} CronJobs in ${result.setupSeconds.toFixed(1)} s`);
    await recorder.start();

    const apiserverPid =
      env.apiServer?.pid === undefined ? undefined : await findChild(env.apiServer.pid, "kube-apiserver");
    const etcdPid = env.etcd?.pid === undefined ? undefined : await findChild(env.etcd.pid, "etcd");
    const apiBefore = await apiserverMetrics(env);
    const apiCpuBefore = apiserverPid === undefined ? undefined : cpuSeconds(apiserverPid);
    const etcdCpuBefore = etcdPid === undefined ? undefined : cpuSeconds(etcdPid);

    // Each controller process in a cgroup of its own: ours with its limits (each shard with the same), the built-in
    // without (the same accounting).
    const limits = driver.limits(s);
    const startMember = async (index: number): Promise<Member> => {
      let cg: Cgroup | undefined;
      let cgroup: CgroupResult;
      const suffix = shards > 1 || index > 0 ? `-shard${index}` : "";
      if (s.cgroups.ok) {
        try {
          cg = Cgroup.create(s.cgroups, `${CGROUP_PREFIX}${process.pid}-${driver.phase}-N${n}${suffix}`, limits);
          cgroup = { applied: true, limits: formatLimits(limits), info: cg.info };
        } catch (err) {
          cgroup = { applied: false, reason: `could not create the cgroup: ${errorText(err)}` };
        }
      } else {
        cgroup = { applied: false, reason: s.cgroups.reason ?? "cgroups not available" };
      }
      const launched = await driver.launch(
        env,
        s,
        n,
        cg,
        shards > 1 ? { index, replica: shardReplica(index) } : undefined,
      );
      if (cg && !cg.contains(launched.pid))
        cgroup = { applied: false, reason: `pid ${launched.pid} is not in ${cg.info.cpuDir}` };
      if (!cgroup.applied) log(`${suffix ? `shard ${index}: ` : ""}running unbounded: ${cgroup.reason}`);
      const m: Member = {
        index,
        launched,
        cg,
        cgroup,
        startedAt: Date.now(),
        lastCpu: cpuSeconds(launched.pid) ?? 0,
        lastCpuAt: Date.now(),
        peakCores: 0,
        peakRss: 0,
      };
      void launched.proc.wait().then((code) => {
        m.exitedAt = Date.now();
        m.exitCode = code;
      });
      members.push(m);
      return m;
    };

    const spawnedAt = Date.now();
    for (let i = 0; i < shards; i++) await startMember(i);
    const first = members[0]!;
    result.commandLine = first.launched.commandLine;
    result.logFile = first.launched.logFile;
    result.cgroup = first.cgroup;
    if (shards > 1) result.shardCount = shards;
    // The measured shards: a shard that joins later (the faults) is not one of them.
    const measured = [...members];
    const live = () => members.filter((m) => m.exitedAt === undefined && m.launched.proc.running);
    const scrapeAll = async (of: Member[], timeoutMs: number): Promise<Sample[][] | undefined> => {
      const all = await Promise.all(of.map((m) => m.launched.metrics(timeoutMs).catch(() => undefined)));
      return all.every((x) => x !== undefined) ? (all as Sample[][]) : undefined;
    };
    // CPU every second: the busiest second, and the last value should the process go away early.
    // kube-apiserver's busiest second once the measured slots begin (measuring, below): what a burst waits for.
    let measureFrom = Infinity;
    let apiPeakCores = 0;
    let lastApi = apiserverPid === undefined ? undefined : cpuSeconds(apiserverPid);
    let lastApiAt = Date.now();
    const sampleMember = (m: Member, now: number) => {
      const c = cpuSeconds(m.launched.pid);
      if (c !== undefined) {
        if (now - m.lastCpuAt >= 500)
          m.peakCores = Math.max(m.peakCores, (c - m.lastCpu) / ((now - m.lastCpuAt) / 1000));
        m.lastCpu = c;
        m.lastCpuAt = now;
      }
      const mem = memory(m.launched.pid);
      if (mem && Number.isFinite(mem.peakRss)) m.peakRss = Math.max(m.peakRss, mem.peakRss);
    };
    const sample = () => {
      const now = Date.now();
      const a = apiserverPid === undefined ? undefined : cpuSeconds(apiserverPid);
      if (a !== undefined && lastApi !== undefined && now >= measureFrom && now - lastApiAt >= 500)
        apiPeakCores = Math.max(apiPeakCores, (a - lastApi) / ((now - lastApiAt) / 1000));
      if (a !== undefined) [lastApi, lastApiAt] = [a, now];
      for (const m of members) sampleMember(m, now);
    };
    sampler = setInterval(sample, 1000);

    // Cold start: every CronJob processed once and nothing left in the queue (sharded: in all shards together, and
    // the namespaces split, each held once). The scrape interval follows the scrape's own cost (per-CronJob metrics
    // make /metrics large at N = 10,000): at most ~5 % of the controller's time goes into being polled.
    const timeoutMs = coldStartTimeoutMs(n);
    result.coldStartTimeoutS = timeoutMs / 1000;
    let readyAt: number | undefined;
    let processed = 0;
    let depth = NaN;
    let scraped = false;
    let lastScrapeError = "";
    let scrapes = 0;
    let scrapeMaxMs = 0;
    while (Date.now() - spawnedAt < timeoutMs) {
      if (measured.some((m) => !m.launched.proc.running)) throw new Error(`${driver.label} exited during start-up`);
      const t0 = performance.now();
      const per = await Promise.all(
        measured.map((m) =>
          m.launched.metrics(10_000).catch((err: unknown) => {
            lastScrapeError = errorText(err);
            return undefined;
          }),
        ),
      );
      const took = performance.now() - t0;
      if (per.every((x) => x !== undefined)) {
        const all = per as Sample[][];
        const m = all.flat();
        scraped = true;
        scrapes++;
        scrapeMaxMs = Math.max(scrapeMaxMs, took);
        processed = sumOf(m, "workqueue_work_duration_seconds_count", QUEUE);
        // Ours' passes that wait for spare capacity (a new CronJob's first status) are work left too.
        depth =
          sumOf(m, "workqueue_depth", QUEUE) + sumOf(m, "controller_runtime_deferred_reconciles", QUEUE_CONTROLLER);
        if (processed >= n && result.firstNProcessedS === undefined)
          result.firstNProcessedS = (Date.now() - spawnedAt) / 1000;
        if (processed >= n && depth === 0 && (shards === 1 || settled(all))) {
          readyAt = Date.now();
          break;
        }
      }
      await sleep(Math.min(5000, Math.max(250, 20 * took)));
    }
    result.coldStartScrapes = scrapes;
    result.coldStartScrapeMaxMs = scrapeMaxMs;
    if (readyAt === undefined) {
      if (!scraped) throw new Error(`could not read the controller's metrics: ${lastScrapeError}`);
      readyAt = Date.now();
      result.coldStartNote =
        `the work queue was never empty within ${timeoutMs / 1000} s ` +
        `(${processed} items processed, ${depth} queued at the end); measured from there`;
      log(`cold start not reached: ${result.coldStartNote}`);
    } else {
      result.coldStartS = (readyAt - spawnedAt) / 1000;
    }
    const started = first.launched.workersStartedAt();
    if (started !== undefined) result.workersStartedS = (started - spawnedAt) / 1000;
    for (const m of measured) m.cpuAtReady = cpuSeconds(m.launched.pid);
    const cpuAtReady = sumDefined(measured.map((m) => m.cpuAtReady));
    result.cpuColdStartSeconds = cpuAtReady;
    const serversAtReady = serverCpu(apiserverPid, etcdPid);
    const ioAtReady = sumIO(measured.map((m) => controllerIO(m.launched)));
    if (apiCpuBefore !== undefined && serversAtReady.apiserver !== undefined)
      result.apiserverCpuColdStartSeconds = serversAtReady.apiserver - apiCpuBefore;
    if (etcdCpuBefore !== undefined && serversAtReady.etcd !== undefined)
      result.etcdCpuColdStartSeconds = serversAtReady.etcd - etcdCpuBefore;
    const apiReady = await apiserverMetrics(env);
    for (const m of measured) if (m.cg && m.cgroup.applied) m.cgroup.atReady = m.cg.stats();
    // A slot that passed during the cold start (slow setup + cold start > ~55 s, e.g. N = 10,000 under a
    // CPU limit): its Jobs are part of the cold start's work; the report says so.
    const inColdStart: Array<{ slot: string; jobs: number }> = [];
    for (let b = Math.floor(spawnedAt / 60_000) * 60_000 + 60_000; b <= readyAt; b += 60_000)
      inColdStart.push({ slot: rfc3339(b), jobs: recorder.perSlot.get(b) ?? 0 });
    if (inColdStart.length) result.slotsInColdStart = inColdStart;

    const firstSlot = Math.floor(readyAt / 60_000) * 60_000 + 60_000;
    const slots = Array.from({ length: s.minutes }, (_, k) => firstSlot + k * 60_000);
    const lastSlot = firstSlot + (s.minutes - 1) * 60_000;
    measureFrom = firstSlot;
    const endAt = lastSlot + END_AFTER_LAST_SLOT_MS;
    log(
      `cold start ${result.coldStartS?.toFixed(1) ?? "n/a"} s; measuring slots ${new Date(firstSlot).toISOString()} … ` +
        `(+${s.minutes - 1} min), until ${new Date(endAt).toISOString()}`,
    );
    progress = setInterval(() => {
      const now = Date.now();
      const slot = Math.floor(now / 60_000) * 60_000;
      log(`${recorder.jobs.size} Jobs seen; ${recorder.perSlot.get(slot) ?? 0}/${n} for the current slot`);
    }, 30_000);
    if (s.apiserverProfile && PROFILED_PHASES.has(driver.phase)) {
      const file = profileFile(s.apiserverProfile, driver.phase, n);
      profiled = apiserverProfile(env, { at: firstSlot, seconds: s.apiserverProfile.seconds, file, log });
    }
    // A refused completion fails the phase at once: without finished Jobs nothing after it is the run measured.
    // With a window longer than the tail, the servers' CPU is read again where the last TAIL_MINUTES slots begin.
    const tailFrom = s.minutes > TAIL_MINUTES ? lastSlot - (TAIL_MINUTES - 1) * 60_000 : undefined;
    let serversAtTail: ReturnType<typeof serverCpu> | undefined;
    if (tailFrom !== undefined) {
      await sleepUnlessFailed(tailFrom, () => finisher?.failure());
      serversAtTail = serverCpu(apiserverPid, etcdPid);
    }
    await sleepUnlessFailed(endAt, () => finisher?.failure());
    clearInterval(progress);
    progress = undefined;
    if (profiled) result.apiserverProfile = await profiled;

    // Final snapshot, before anything stops.
    sample();
    const apiAfter = await apiserverMetrics(env);
    const apiCpuAfter = apiserverPid === undefined ? undefined : cpuSeconds(apiserverPid);
    const serversAtEnd = serverCpu(apiserverPid, etcdPid);
    const ioAtEnd = sumIO(measured.map((m) => controllerIO(m.launched)));
    for (const m of measured)
      m.cpuEnd = cpuSeconds(m.launched.pid) ?? (m.exitedAt !== undefined ? m.lastCpu : undefined);
    const cpuEnd = sumDefined(measured.map((m) => m.cpuEnd));
    const perShard = await Promise.all(measured.map((m) => m.launched.metrics(30_000).catch(() => undefined)));
    const ctrl = perShard.every((x) => x !== undefined) ? (perShard as Sample[][]).flat() : undefined;
    const endedAt = Date.now();

    // Late Jobs of the last slot: keep watching while they come fast enough to complete it in time.
    const drainFrom = Date.now();
    let have = recorder.perSlot.get(lastSlot) ?? 0;
    while (have < n && live().length > 0 && Date.now() - drainFrom < DRAIN_MAX_MS) {
      await sleep(5000);
      const now = recorder.perSlot.get(lastSlot) ?? 0;
      const rate = (now - have) / 5;
      have = now;
      if (have >= n || rate <= 0 || ((n - have) / rate) * 1000 > DRAIN_MAX_MS - (Date.now() - drainFrom)) break;
    }
    result.drainSeconds = (Date.now() - drainFrom) / 1000;
    if (result.drainSeconds > 1) log(`watched ${result.drainSeconds.toFixed(0)} s more for late Jobs of the last slot`);
    for (const m of measured) if (m.cg && m.cgroup.applied) m.cgroup.atEnd = m.cg.stats();

    if (shards > 1) {
      result.shards = measured.map((m, i) => shardResult(m, perShard[i], readyAt, endedAt, spawnedAt));
      result.faults = await shardFaults({
        client,
        recorder,
        keys,
        members,
        startMember,
        scrapeAll,
        live,
        log,
      });
    }

    clearInterval(sampler);
    sampler = undefined;
    await finisher.stop();
    await recorder.stop();
    await Promise.all(members.map((m) => m.launched.proc.stop()));
    const refused = finisher.failure();
    if (refused) throw refused;
    for (const m of measured) {
      // An OOM kill while stopping is still one.
      if (m.cg && m.cgroup.applied && m.cgroup.atEnd)
        m.cgroup.atEnd.oomKills = Math.max(m.cgroup.atEnd.oomKills, m.cg.stats().oomKills);
    }

    result.runSeconds = (endedAt - spawnedAt) / 1000;
    const exited = measured.filter((m) => m.exitedAt !== undefined && m.exitedAt < endedAt);
    if (exited.length) {
      const m = exited[0]!;
      result.exitedAtS = (m.exitedAt! - spawnedAt) / 1000;
      result.exitCode = m.exitCode;
      log(`the controller exited ${result.exitedAtS.toFixed(0)} s after start (code ${result.exitCode})`);
    }
    result.analysis = analyze([...recorder.jobs.values()], keys, slots);
    const whole = controllerWrites(apiBefore, apiAfter);
    result.finisherPatches = whole.finisher;
    const failed = diff(writesOf(apiBefore, true), writesOf(apiAfter, true));
    for (const k of FINISHER_KEYS) delete failed[k];
    result.writesByResource = whole.writes;
    result.failedWritesByResource = failed;
    result.writes = sumWrites(whole.writes);
    result.writesColdStart = sumWrites(controllerWrites(apiBefore, apiReady).writes);
    const steady = controllerWrites(apiReady, apiAfter).writes;
    result.writesSteady = sumWrites(steady);
    result.writesSteadyByResource = steady;
    result.writesPerRun = result.writesSteady / (n * s.minutes);
    result.writesPerJob = result.analysis.jobsTotal ? result.writes / result.analysis.jobsTotal : NaN;
    result.finisherErrors = finisher.errors;
    result.finisherCompleted = finisher.patched;
    if (finisher.lagsMs.length) {
      const lag = percentiles(finisher.lagsMs.map((x) => x / 1000));
      result.finisherLagP99S = lag.p99;
      result.finisherLagMaxS = lag.max;
    }
    result.watchRestarts = recorder.watchRestarts;
    result.watchRelists = recorder.relists;
    if (cpuEnd !== undefined) {
      result.cpuSeconds = cpuEnd;
      if (cpuAtReady !== undefined) {
        result.cpuPerMinuteSteady = (cpuEnd - cpuAtReady) / ((endedAt - readyAt) / 60_000);
        result.cpuMsPerRunSteady = ((cpuEnd - cpuAtReady) * 1000) / (n * s.minutes);
      }
    }
    // Sharded: the busiest shard's second and peak (each shard has the limits one instance has).
    result.cpuPeakCores = Math.max(...measured.map((m) => m.peakCores));
    result.apiserverPeakCores = apiPeakCores;
    for (const m of measured) {
      const mem = memory(m.launched.pid);
      if (mem && Number.isFinite(mem.peakRss)) m.peakRss = Math.max(m.peakRss, mem.peakRss);
    }
    const peakRss = Math.max(...measured.map((m) => m.peakRss));
    if (peakRss > 0) result.peakRssMB = peakRss / 2 ** 20;
    if (apiCpuBefore !== undefined && apiCpuAfter !== undefined)
      result.apiserverCpuSeconds = apiCpuAfter - apiCpuBefore;
    const runs = n * s.minutes;
    if (serversAtReady.apiserver !== undefined && serversAtEnd.apiserver !== undefined)
      result.apiserverCpuMsPerRun = ((serversAtEnd.apiserver - serversAtReady.apiserver) * 1000) / runs;
    if (serversAtTail?.apiserver !== undefined && serversAtEnd.apiserver !== undefined)
      result.apiserverCpuMsPerRunTail =
        ((serversAtEnd.apiserver - serversAtTail.apiserver) * 1000) / (n * TAIL_MINUTES);
    if (serversAtReady.etcd !== undefined && serversAtEnd.etcd !== undefined)
      result.etcdCpuMsPerRun = ((serversAtEnd.etcd - serversAtReady.etcd) * 1000) / runs;
    if (ioAtReady && ioAtEnd) {
      result.bytesSentPerRun = (ioAtEnd.written - ioAtReady.written - (ioAtEnd.log - ioAtReady.log)) / runs;
      result.bytesReceivedPerRun = (ioAtEnd.read - ioAtReady.read) / runs;
    }
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
      if (has(ctrl, "events_dropped_total")) {
        const byReason = groupBy(ctrl, "events_dropped_total", (l) => l.reason ?? "?");
        result.eventsDropped = sumOf(ctrl, "events_dropped_total");
        result.eventsDroppedByReason = Object.fromEntries([...byReason].filter(([, v]) => v > 0));
      }
    }
    result.ok = true;
    const a = result.analysis;
    const atEnd = first.cgroup.atEnd;
    log(
      `done: ${a.jobsTotal} Jobs, skew p99 ${a.skew.p99.toFixed(2)} s, missed ${a.missed}, duplicates ${a.duplicates}, ` +
        `${result.writesPerRun.toFixed(2)} writes/run, ${result.cpuMsPerRunSteady?.toFixed(2) ?? "n/a"} CPU ms/run` +
        (atEnd
          ? `; cgroup${shards > 1 ? " (shard 0)" : ""}: throttled ${atEnd.nrThrottled}/${atEnd.nrPeriods} periods, ` +
            `memory peak ${(atEnd.memoryMaxUsageBytes / 2 ** 20).toFixed(0)} MB, OOM kills ${atEnd.oomKills}`
          : ""),
    );
  } catch (err) {
    result.error = errorText(err);
    log(`FAILED: ${result.error}`);
  } finally {
    if (progress) clearInterval(progress);
    if (sampler) clearInterval(sampler);
    await finisher?.stop().catch(() => undefined);
    await recorder.stop().catch(() => undefined);
    // A profile under way when the phase failed: its result is no longer reported, but it ends before the control plane.
    await profiled?.catch(() => undefined);
    if (finisher?.errors) result.finisherErrors = finisher.errors;
    await Promise.all(members.map((m) => m.launched.proc.stop().catch(() => undefined)));
    if (!result.ok && members[0]) result.logTail = tail(members[0].launched.logFile);
    for (const m of members) {
      if (!m.cg) continue;
      if (!result.ok && m.cgroup.applied) {
        // Why it failed may be here (an OOM kill during the cold start).
        try {
          m.cgroup.atEnd = m.cg.stats();
          const ooms = m.cgroup.atEnd.oomKills;
          if (ooms > 0)
            result.error = `${result.error ?? "failed"} (OOM-killed: oom_kill ${ooms} in its memory cgroup)`;
        } catch {
          // gone
        }
      }
      m.cg.remove();
    }
    client.close();
    await env.stop();
  }
  return result;
}

/** One controller process of a phase (sharded: one shard), with its cgroup and what was sampled of it. */
interface Member {
  index: number;
  launched: Launched;
  cg: Cgroup | undefined;
  cgroup: CgroupResult;
  startedAt: number;
  lastCpu: number;
  lastCpuAt: number;
  peakCores: number;
  peakRss: number;
  cpuAtReady?: number;
  cpuEnd?: number;
  exitedAt?: number;
  exitCode?: number | null;
}

function sumDefined(xs: Array<number | undefined>): number | undefined {
  return xs.some((x) => x === undefined) ? undefined : xs.reduce<number>((a, x) => a + x!, 0);
}

function sumIO(xs: Array<ReturnType<typeof controllerIO>>): { read: number; written: number; log: number } | undefined {
  const sum = { read: 0, written: 0, log: 0 };
  for (const x of xs) {
    if (!x) return undefined;
    sum.read += x.read;
    sum.written += x.written;
    sum.log += x.log;
  }
  return sum;
}

function shardResult(m: Member, metrics: Sample[] | undefined, readyAt: number, endedAt: number, spawnedAt: number) {
  const r: ShardResult = { index: m.index, replica: shardReplica(m.index) };
  if (m.cpuEnd !== undefined) {
    r.cpuSeconds = m.cpuEnd;
    if (m.cpuAtReady !== undefined) r.cpuPerMinuteSteady = (m.cpuEnd - m.cpuAtReady) / ((endedAt - readyAt) / 60_000);
  }
  r.cpuPeakCores = m.peakCores;
  if (m.peakRss > 0) r.peakRssMB = m.peakRss / 2 ** 20;
  if (m.cgroup.atEnd) r.cgroupAtEnd = m.cgroup.atEnd;
  if (metrics) r.namespacesHeld = sumOf(metrics, "sharding_namespaces", { state: "held" });
  if (m.exitedAt !== undefined && m.exitedAt < endedAt) r.exitedAtS = (m.exitedAt - spawnedAt) / 1000;
  return r;
}

/** Past the whole run's kill wait: the lease's duration and a slot's burst. */
const FAULT_WAIT_MS = 150_000;
/** The SIGKILL this long before a minute slot: the slot's Jobs in its namespaces wait for the takeover. */
const KILL_BEFORE_SLOT_MS = 3_000;

/**
 * After the measured window: a shard joins (the namespaces that move, the time to settle), then the busiest shard is
 * SIGKILLed just before a slot (how long until its namespaces' Jobs of that slot exist). Missed runs and duplicates
 * over both come from the same record of Jobs.
 */
async function shardFaults(o: {
  client: Client;
  recorder: JobRecorder;
  keys: readonly string[];
  members: Member[];
  startMember: (index: number) => Promise<Member>;
  scrapeAll: (of: Member[], timeoutMs: number) => Promise<Sample[][] | undefined>;
  live: () => Member[];
  log: (msg: string) => void;
}): Promise<ShardFaults> {
  const faults: ShardFaults = {};
  const from = Math.floor(Date.now() / 60_000) * 60_000 + 60_000;
  // The join.
  const before = await claimHolders(o.client);
  const k = o.live().length;
  const joinAt = Date.now();
  const newcomer = await o.startMember(o.members.length);
  const settledS = await waitSettled(() => o.scrapeAll(o.live(), 10_000), FAULT_WAIT_MS);
  const after = await claimHolders(o.client);
  faults.join = {
    before: k,
    ...joinFigures(before, after, shardReplica(newcomer.index)),
    ...(settledS !== undefined ? { settledS: (Date.now() - joinAt) / 1000 } : { error: "not settled in time" }),
  };
  o.log(`join: ${faults.join.moved} namespaces moved, the new shard holds ${faults.join.newcomerHeld}`);

  // The kill: the live shard holding the most namespaces, just before the next slot with room for it.
  const holders = await claimHolders(o.client);
  const count = (replica: string) => [...holders.values()].filter((h) => h === replica).length;
  const victim = o
    .live()
    .sort((a, b) => count(shardReplica(b.index)) - count(shardReplica(a.index)))
    .at(0);
  if (!victim) return faults;
  const owned = new Set([...holders].filter(([, h]) => h === shardReplica(victim.index)).map(([ns]) => ns));
  let slot = Math.floor(Date.now() / 60_000) * 60_000 + 60_000;
  if (slot - Date.now() < KILL_BEFORE_SLOT_MS + 5_000) slot += 60_000;
  await sleep(slot - KILL_BEFORE_SLOT_MS - Date.now());
  process.kill(victim.launched.pid, "SIGKILL");
  const killAt = Date.now();
  o.log(`SIGKILLed shard ${victim.index} (${owned.size} namespaces) ${KILL_BEFORE_SLOT_MS / 1000} s before the slot`);
  const mine = o.keys.filter((key) => owned.has(key.slice(0, key.indexOf("/"))));
  const deadline = killAt + FAULT_WAIT_MS;
  for (;;) {
    const have = new Set<string>();
    for (const j of o.recorder.jobs.values()) if (j.slot === slot && owned.has(j.namespace)) have.add(j.owner);
    if (have.size >= mine.length || Date.now() > deadline) break;
    await sleep(1000);
  }
  faults.kill = {
    beforeSlotS: KILL_BEFORE_SLOT_MS / 1000,
    ...killFigures(o.recorder.jobs.values(), o.keys, owned, slot, killAt),
  };
  o.log(
    `kill: its namespaces' first Job ${faults.kill.firstJobS?.toFixed(1) ?? "n/a"} s after, the last ` +
      `${faults.kill.lastJobS?.toFixed(1) ?? "n/a"} s; missed ${faults.kill.missed}`,
  );
  // The slots from the first after the join to the kill's: every CronJob's run, none twice.
  const slots: number[] = [];
  for (let t = from; t <= slot; t += 60_000) slots.push(t);
  faults.analysis = analyze([...o.recorder.jobs.values()], [...o.keys], slots);
  return faults;
}
