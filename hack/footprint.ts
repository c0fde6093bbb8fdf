// A small, reproducible memory / CPU / cold-start measurement of the operator (issue 16), lighter than
// `make bench`: one envtest control plane, N CronJobs with a realistic Job template and, for each, one
// finished Job of the current minute's slot (so the cold start has a full Job cache but no run due), then
// the operator as a child process, its RSS and CPU read from /proc and its /metrics polled.
//
//   node hack/footprint.ts --n=1000 [--minutes=2] [--namespaces=4] [--main=dist/cmd/main.js] [--json=out.json]
//                          [--workers=16] [--template=realistic|small] [--node-options="--max-semi-space-size=16"]
//
// Reports: RSS once /metrics answers (the baseline: modules loaded, caches not yet listed); the cold start
// (time from spawn until every CronJob has its first status, seen on a watch of our own so the operator is
// not polled; its CPU, the apiserver's CPU and RSS by then); the steady state over `minutes` schedule slots
// (`* * * * *`; a finisher marks every Job Complete 5 s after it appears; CPU per Job run = CPU over the
// slots / Jobs created); peak RSS (VmHWM); the live heap (after a forced full GC, through a preloaded probe
// answering SIGUSR2) after the cold start and at the end.
// --main picks the entrypoint (a built dist/cmd/main.js or cmd/main.ts; another checkout's works too).
import { spawn } from "node:child_process";
import { createWriteStream, readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { CronJobResource as CronJobKind } from "../api/v1/index.ts";
import { TestEnv } from "../envtest/index.ts";
import { smallJobSpec } from "../envtest/small-job.ts";
import { localManagerFlags } from "../envtest/manager-deployment.ts";
import { freePort } from "../envtest/ports.ts";
import { Client, watchErrorToAPIError } from "../runtime/client.ts";
import { isAlreadyExists } from "../runtime/errors.ts";
import { Kinds, type KubeObject } from "../runtime/kinds.ts";

const { values: args } = parseArgs({
  options: {
    n: { type: "string", default: "1000" },
    minutes: { type: "string", default: "2" },
    namespaces: { type: "string", default: "4" },
    main: { type: "string", default: "cmd/main.ts" },
    "node-options": { type: "string", default: "--max-semi-space-size=16" },
    workers: { type: "string", default: "16" },
    /** realistic (below) or small (one busybox container, as `make bench` uses). */
    template: { type: "string", default: "realistic" },
    json: { type: "string" },
  },
});
const N = Number(args.n);
const MINUTES = Number(args.minutes);
const NAMESPACES = Number(args.namespaces);

const say = (m: string) => process.stderr.write(`footprint: ${m}\n`);

function jobSpec(name: string): Record<string, unknown> {
  if (args.template === "small") return smallJobSpec();
  return realisticJobSpec(name);
}

/** A Job template as real ones look: init container, sidecar, env, resources, volumes, scheduling. */
function realisticJobSpec(name: string): Record<string, unknown> {
  const env = [
    ...Array.from({ length: 10 }, (_, i) => ({ name: `SETTING_${i}`, value: `value-${i}-${name}` })),
    { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
    { name: "DB_PASSWORD", valueFrom: { secretKeyRef: { name: "db", key: "password", optional: true } } },
  ];
  const resources = { requests: { cpu: "100m", memory: "128Mi" }, limits: { cpu: "1", memory: "512Mi" } };
  const securityContext = {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    capabilities: { drop: ["ALL"] },
  };
  return {
    backoffLimit: 2,
    activeDeadlineSeconds: 3600,
    ttlSecondsAfterFinished: 86400,
    template: {
      metadata: {
        labels: { app: "report", component: "batch", team: "data", cronjob: name },
        annotations: { "prometheus.io/scrape": "false", "example.com/owner": "data-team@example.com" },
      },
      spec: {
        restartPolicy: "Never",
        serviceAccountName: "default",
        nodeSelector: { "kubernetes.io/os": "linux" },
        tolerations: [
          { key: "dedicated", operator: "Equal", value: "batch", effect: "NoSchedule" },
          { key: "spot", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
        ],
        affinity: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 50, preference: { matchExpressions: [{ key: "pool", operator: "In", values: ["batch"] }] } },
            ],
          },
        },
        securityContext: { runAsUser: 10001, runAsGroup: 10001, fsGroup: 10001 },
        initContainers: [
          {
            name: "fetch",
            image: "registry.example.com/tools/fetch:1.4.2",
            args: ["--source=s3://bucket/input", "--dest=/work/input"],
            volumeMounts: [{ name: "work", mountPath: "/work" }],
            resources,
            securityContext,
          },
        ],
        containers: [
          {
            name: "main",
            image: "registry.example.com/data/report:2026.11.1",
            command: ["/bin/report"],
            args: ["--input=/work/input", "--output=/work/out", "--config=/etc/report/config.yaml", "--verbose"],
            env,
            resources,
            securityContext,
            volumeMounts: [
              { name: "work", mountPath: "/work" },
              { name: "config", mountPath: "/etc/report", readOnly: true },
              { name: "tmp", mountPath: "/tmp" },
            ],
          },
          {
            name: "log-shipper",
            image: "registry.example.com/infra/shipper:0.9.3",
            args: ["--path=/work/out/*.log"],
            resources: { requests: { cpu: "10m", memory: "32Mi" }, limits: { memory: "64Mi" } },
            securityContext,
            volumeMounts: [{ name: "work", mountPath: "/work", readOnly: true }],
          },
        ],
        volumes: [
          { name: "work", emptyDir: { sizeLimit: "1Gi" } },
          { name: "config", configMap: { name: "report-config" } },
          { name: "tmp", emptyDir: { medium: "Memory" } },
        ],
      },
    },
  };
}

function place(i: number): { namespace: string; name: string } {
  return { namespace: `fp-${i % NAMESPACES}`, name: `cj-${String(i).padStart(5, "0")}` };
}

async function forEachLimit(n: number, limit: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, n) }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, "Z");
}

// ---- /proc and /metrics -------------------------------------------------------------------------------

const CLK_TCK = 100;
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}
function memory(pid: number): { rss: number; hwm: number } {
  const s = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, "m").exec(s)?.[1] ?? NaN) / 1024;
  return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
}

/** The real process behind envtest's watchdog wrapper (a child named `name`). */
function childNamed(wrapper: number | undefined, name: string): number | undefined {
  if (wrapper === undefined) return undefined;
  try {
    const kids = readFileSync(`/proc/${wrapper}/task/${wrapper}/children`, "utf8").trim().split(/\s+/);
    for (const k of kids.filter(Boolean).map(Number)) {
      const argv0 = readFileSync(`/proc/${k}/cmdline`, "utf8").split("\0")[0] ?? "";
      if (argv0.endsWith(`/${name}`) || argv0 === name) return k;
    }
  } catch {
    // gone
  }
  return undefined;
}

/**
 * The operator's heap after two full GCs (its live data), and RSS then: the probe module, preloaded with
 * --expose-gc, answers SIGUSR2 by collecting and writing process.memoryUsage() to a file.
 */
async function probeLiveHeap(pid: number, out: string): Promise<{ heapUsed: number; rss: number }> {
  const asked = Date.now();
  process.kill(pid, "SIGUSR2");
  for (let i = 0; i < 200; i++) {
    await new Promise((res) => setTimeout(res, 25));
    try {
      const m = JSON.parse(readFileSync(out, "utf8")) as { at: number; heapUsed: number; rss: number };
      if (m.at >= asked) return { heapUsed: m.heapUsed / 2 ** 20, rss: m.rss / 2 ** 20 };
    } catch {
      // not written yet
    }
  }
  return { heapUsed: NaN, rss: NaN };
}

async function scrape(url: string): Promise<string | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
    return res.ok ? await res.text() : undefined;
  } catch {
    return undefined;
  }
}
/** Sum of a metric's samples whose labels contain every `match` pair. */
function metric(text: string, name: string, match: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels = m[2] ?? "";
    if (Object.entries(match).every(([k, v]) => labels.includes(`${k}="${v}"`))) sum += Number(m[3]);
  }
  return sum;
}

// ---- main ---------------------------------------------------------------------------------------------

const env = await TestEnv.start({ verbose: false });
const client = new Client(env.kubeConfig, { userAgent: "footprint", maxSockets: 64 });
let child: ReturnType<typeof spawn> | undefined;
const finisherAbort = new AbortController();
try {
  for (let i = 0; i < NAMESPACES; i++) {
    await client
      .create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: `fp-${i}` } })
      .catch((e: unknown) => {
        if (!isAlreadyExists(e)) throw e;
      });
  }
  const uids: string[] = [];
  let t = performance.now();
  await forEachLimit(N, 48, async (i) => {
    const { namespace, name } = place(i);
    const cj = await client.create<KubeObject>(CronJobKind, {
      apiVersion: "batch.tutorial.kubebuilder.io/v1",
      kind: "CronJob",
      metadata: { name, namespace },
      spec: {
        schedule: "* * * * *",
        concurrencyPolicy: "Allow",
        successfulJobsHistoryLimit: 1,
        failedJobsHistoryLimit: 1,
        jobTemplate: { metadata: { labels: { app: "report", cronjob: name } }, spec: jobSpec(name) },
      },
    });
    uids[i] = cj.metadata!.uid!;
  });
  say(`${N} CronJobs created in ${((performance.now() - t) / 1000).toFixed(1)} s`);

  // The Jobs of the current minute's slot: wait for a fresh minute so the operator's first pass (at most
  // ~20 s at N=5000) finishes before the next slot is due.
  const msIntoMinute = Date.now() % 60_000;
  if (N > 0 && msIntoMinute > 3_000) {
    say(`waiting ${((60_000 - msIntoMinute) / 1000).toFixed(0)} s for the next minute`);
    await new Promise((r) => setTimeout(r, 60_000 - msIntoMinute + 500));
  }
  const slot = new Date(Math.floor(Date.now() / 60_000) * 60_000);
  t = performance.now();
  await forEachLimit(N, 48, async (i) => {
    const { namespace, name } = place(i);
    const jobName = `${name}-${slot.getTime() / 1000}`;
    await client.create(Kinds.Job, {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: {
        name: jobName,
        namespace,
        labels: { app: "report", cronjob: name },
        annotations: {
          "batch.tutorial.kubebuilder.io/scheduled-at": rfc3339(slot),
          "batch.kubernetes.io/cronjob-scheduled-timestamp": rfc3339(slot),
        },
        ownerReferences: [
          {
            apiVersion: "batch.tutorial.kubebuilder.io/v1",
            kind: "CronJob",
            name,
            uid: uids[i]!,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: jobSpec(name),
    });
    await finish(namespace, jobName, slot);
  });
  say(`${N} finished Jobs (slot ${rfc3339(slot)}) created in ${((performance.now() - t) / 1000).toFixed(1)} s`);

  const cronJobsRV = (await client.list(CronJobKind, { limit: 1 })).metadata.resourceVersion ?? "";
  // The finisher: every Job the operator creates is marked Complete 5 s after it appears.
  const jobsRV = (await client.list(Kinds.Job, { limit: 1 })).metadata.resourceVersion;
  const finisher = runFinisher(jobsRV ?? "", finisherAbort.signal);

  // The operator.
  const port = await freePort();
  const metricsURL = `http://127.0.0.1:${port}/metrics`;
  const log = createWriteStream(`${env.dir}/operator.log`);
  const probeModule = `${env.dir}/gc-probe.mjs`;
  const probeOut = `${env.dir}/gc-probe.json`;
  writeFileSync(
    probeModule,
    `import { writeFileSync } from "node:fs";
process.on("SIGUSR2", () => {
  globalThis.gc(); globalThis.gc();
  writeFileSync(${JSON.stringify(probeOut)}, JSON.stringify({ at: Date.now(), ...process.memoryUsage() }));
});
`,
  );
  const started = performance.now();
  const startedAt = Date.now();
  child = spawn(
    process.execPath,
    [
      ...(args["node-options"] ? args["node-options"].split(" ") : []),
      // The live heap (after a full GC) on SIGUSR2: see probeLiveHeap.
      "--expose-gc",
      `--import=${probeModule}`,
      args.main,
      ...localManagerFlags(env.kubeconfigPath, port),
      "--max-concurrent-reconciles",
      args.workers,
    ],
    { env: { ...process.env, ENABLE_WEBHOOKS: "false" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  const pid = child.pid!;
  const apiPid = childNamed(env.apiServer?.pid, "kube-apiserver");
  const apiCpu = () => (apiPid ? cpuSeconds(apiPid) : NaN);
  const apiCpuAtSpawn = apiCpu();
  const firstPassDone = watchFirstStatuses(cronJobsRV, started, pid, apiCpu, finisherAbort.signal);
  const exited = new Promise<number | null>((r) => child!.once("exit", (code) => r(code)));

  const r: Record<string, number | string> = { n: N, main: args.main };
  let maxRss = 0;
  const sampler = setInterval(() => {
    try {
      maxRss = Math.max(maxRss, memory(pid).rss);
    } catch {
      // gone
    }
  }, 100);

  // Metrics up: the baseline (modules loaded, servers listening, caches not listed yet).
  for (;;) {
    if (await scrape(metricsURL)) break;
    if (child.exitCode !== null) throw new Error(`operator exited (${child.exitCode}); see ${env.dir}/operator.log`);
    await new Promise((res) => setTimeout(res, 20));
  }
  r.metricsUpS = (performance.now() - started) / 1000;
  r.rssAtMetricsUpMB = memory(pid).rss;
  r.cpuAtMetricsUpS = cpuSeconds(pid);

  // Cold start: every CronJob has its first status (seen on our own watch, so the operator is not polled:
  // rendering /metrics with per-CronJob series costs it tens of ms at these N).
  const coldStart = await firstPassDone;
  r.coldStartS = coldStart.s;
  r.coldStartCpuS = coldStart.cpu;
  r.coldStartApiserverCpuS = coldStart.apiCpu - apiCpuAtSpawn;
  r.rssAtColdStartMB = coldStart.rss;
  const liveCold = await probeLiveHeap(pid, probeOut);
  r.liveHeapAtColdStartMB = liveCold.heapUsed;
  await new Promise((res) => setTimeout(res, 1000));
  const mc = (await scrape(metricsURL)) ?? "";
  r.coldStartReconciles = metric(mc, "controller_runtime_reconcile_total", { controller: "cronjob" });
  r.coldStartStatusPuts = metric(mc, "rest_client_requests_total", { method: "PUT" });
  r.coldStartPosts = metric(mc, "rest_client_requests_total", { method: "POST" });
  say(`cold start ${Number(r.coldStartS).toFixed(1)} s`);
  if (Date.now() >= slot.getTime() + 60_000) say("warning: the cold start ran into the next slot");

  // Steady state: `minutes` slots after the cold start's minute.
  const windowStart = slot.getTime() + 60_000 - 1_000;
  if (MINUTES > 0) {
    await new Promise((res) => setTimeout(res, Math.max(0, windowStart - Date.now())));
    const m0 = (await scrape(metricsURL)) ?? "";
    const cpu0 = cpuSeconds(pid);
    const apiCpu0 = apiCpu();
    const created0 = metric(m0, "cronjob_controller_job_creation_skew_duration_seconds_count");
    const end = windowStart + MINUTES * 60_000 + 1_000 + 30_000; // the last slot plus 30 s of aftermath
    await new Promise((res) => setTimeout(res, Math.max(0, end - Date.now())));
    const m1 = (await scrape(metricsURL)) ?? "";
    const cpu1 = cpuSeconds(pid);
    const created = metric(m1, "cronjob_controller_job_creation_skew_duration_seconds_count") - created0;
    r.steadyJobsCreated = created;
    r.steadyCpuS = cpu1 - cpu0;
    r.cpuMsPerJobRun = created ? ((cpu1 - cpu0) / created) * 1000 : NaN;
    r.apiserverCpuMsPerJobRun = created ? ((apiCpu() - apiCpu0) / created) * 1000 : NaN;
    r.heapUsedEndMB = metric(m1, "nodejs_heap_size_used_bytes") / 2 ** 20;
    r.heapTotalEndMB = metric(m1, "nodejs_heap_size_total_bytes") / 2 ** 20;
    r.rssEndMB = memory(pid).rss;
    const liveEnd = await probeLiveHeap(pid, probeOut);
    r.liveHeapEndMB = liveEnd.heapUsed;
    r.rssAfterGcEndMB = liveEnd.rss;
    r.writes = ["POST", "PUT", "DELETE", "PATCH"]
      .map((v) => `${v} ${metric(m1, "rest_client_requests_total", { method: v })}`)
      .join(", ");
    r.reconcileErrors = metric(m1, "controller_runtime_reconcile_errors_total", { controller: "cronjob" });
  }
  r.peakRssMB = memory(pid).hwm;
  r.maxSampledRssMB = maxRss;
  r.totalCpuS = cpuSeconds(pid);
  r.runS = (Date.now() - startedAt) / 1000;
  clearInterval(sampler);
  child.kill("SIGTERM");
  await exited;
  finisherAbort.abort();
  await finisher.catch(() => undefined);

  const fmt = (v: number | string) => (typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toFixed(2)) : v);
  for (const [k, v] of Object.entries(r)) process.stdout.write(`${k.padEnd(22)} ${fmt(v)}\n`);
  if (args.json) writeFileSync(args.json, JSON.stringify(r, null, 2) + "\n");
} finally {
  finisherAbort.abort();
  if (child && child.exitCode === null) child.kill("SIGKILL");
  await env.stop();
}

async function finish(namespace: string, name: string, at: Date): Promise<void> {
  const now = rfc3339(new Date(Math.max(Date.now(), at.getTime())));
  await client.patchStatus(
    Kinds.Job,
    namespace,
    name,
    {
      status: {
        startTime: rfc3339(at),
        completionTime: now,
        succeeded: 1,
        conditions: [{ type: "Complete", status: "True", lastProbeTime: now, lastTransitionTime: now }],
      },
    },
    "merge",
  );
}

/** Resolves when every CronJob has a status with conditions: the time since `started`, CPU and RSS then. */
async function watchFirstStatuses(
  resourceVersion: string,
  started: number,
  pid: number,
  apiCpu: () => number,
  signal: AbortSignal,
): Promise<{ s: number; cpu: number; rss: number; apiCpu: number }> {
  const done = new Set<string>();
  const at = () => ({
    s: (performance.now() - started) / 1000,
    cpu: cpuSeconds(pid),
    rss: memory(pid).rss,
    apiCpu: apiCpu(),
  });
  if (N === 0) return at();
  let rv = resourceVersion;
  while (!signal.aborted) {
    const events = await client.watch<KubeObject>(CronJobKind, {
      resourceVersion: rv,
      allowWatchBookmarks: true,
      signal,
    });
    for await (const ev of events) {
      if (ev.type === "ERROR") throw watchErrorToAPIError(ev.object);
      rv = ev.object.metadata?.resourceVersion ?? rv;
      const st = ev.object.status as { conditions?: unknown[] } | undefined;
      if (!st?.conditions?.length) continue;
      done.add(`${ev.object.metadata?.namespace}/${ev.object.metadata?.name}`);
      if (done.size >= N) return at();
    }
  }
  throw new Error("aborted");
}

async function runFinisher(resourceVersion: string, signal: AbortSignal): Promise<void> {
  const seen = new Set<string>();
  let rv = resourceVersion;
  while (!signal.aborted) {
    try {
      const events = await client.watch<KubeObject>(Kinds.Job, {
        resourceVersion: rv,
        allowWatchBookmarks: true,
        timeoutSeconds: 300,
        signal,
      });
      for await (const ev of events) {
        if (ev.type === "ERROR") throw watchErrorToAPIError(ev.object);
        rv = ev.object.metadata?.resourceVersion ?? rv;
        if (ev.type !== "ADDED") continue;
        const { namespace, name } = ev.object.metadata ?? {};
        const key = `${namespace}/${name}`;
        const st = ev.object.status as { conditions?: unknown[] } | undefined;
        if (seen.has(key) || st?.conditions?.length) continue;
        seen.add(key);
        const created = new Date(String(ev.object.metadata?.creationTimestamp ?? Date.now()));
        setTimeout(() => void finish(namespace!, name!, created).catch(() => undefined), 5_000).unref();
      }
    } catch (err) {
      if (signal.aborted) return;
      say(`finisher watch: ${(err as Error).message}`);
      await new Promise((res) => setTimeout(res, 1000));
    }
  }
}
