// Where a CronJob status write's cost goes on kube-apiserver: one controlled experiment per factor. Each variant
// changes one thing against the baseline (the generated CRD with both versions, one watcher on CronJobs as our
// informer is, the status ours writes for a run with a full record, a PUT of the whole object), on its own fresh
// control plane: N CronJobs, then rounds of N status writes (each round a different status, so every write is
// stored and sent to the watchers), kube-apiserver and etcd CPU ms per write. Not part of `make bench`:
//
//   node_modules/.bin/node bench/status-cost.ts [--n=2000] [--rounds=3] [--variants=baseline,watchers-0,...]
//
// The report (a markdown table, one row per variant) goes to stdout; bench/results/*-status-cost.md quote it.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { parse, stringify } from "yaml";
import { CronJobResource } from "../api/v1/index.ts";
import { PROJECT_ROOT, TestEnv } from "../envtest/index.ts";
import { Client } from "../runtime/client.ts";
import type { KubeObject } from "../runtime/kinds.ts";
import { forEachLimit, sleep } from "./lib/pool.ts";
import { cpuSeconds, findChild } from "./lib/proc.ts";
import { createNamespaces, ourCronJob, placement } from "./lib/workload.ts";

const { values } = parseArgs({
  options: {
    n: { type: "string" },
    rounds: { type: "string" },
    variants: { type: "string" },
    /** Also take a CPU profile of kube-apiserver during the second round, into this directory. */
    profile: { type: "string" },
    "profile-seconds": { type: "string" },
  },
});
const n = Number(values.n ?? 2000);
const rounds = Number(values.rounds ?? 3);
const OPEN = { type: "object", "x-kubernetes-preserve-unknown-fields": true };

type Schema = { properties: Record<string, Schema & Record<string, unknown>> } & Record<string, unknown>;
interface CRD {
  spec: { versions: Array<{ name: string; storage: boolean; schema: { openAPIV3Schema: Schema } }> };
}
type StatusShape = "run" | "run-no-record" | "compact-record";
interface Variant {
  /** What it changes against the baseline, as the report's row says it. */
  factor: string;
  crd?: (crd: CRD) => void;
  apiServerArgs?: string[];
  watchers?: number;
  status?: StatusShape;
  write?: "put" | "merge-patch" | "put-status-only";
}

const jobTemplateOf = (root: Schema) => root.properties.spec!.properties.jobTemplate!;
const VARIANTS: Record<string, Variant> = {
  baseline: {
    factor: "the generated CRD (v1 and v2), 1 CronJob watcher, the run's status with 10 record entries, PUT",
  },
  "watchers-0": { factor: "no watcher: the watch fan-out to one informer", watchers: 0 },
  "watchers-3": { factor: "3 watchers: each further watcher", watchers: 3 },
  "no-record": { factor: "the same status without status.recentRuns: the record's bytes", status: "run-no-record" },
  "one-version": {
    factor: "v1 only (v2 not served): a second version's schema and conversion",
    crd: (crd) => {
      crd.spec.versions = crd.spec.versions.filter((v) => v.storage);
    },
  },
  "template-open": {
    factor: "jobTemplate.spec.template x-kubernetes-preserve-unknown-fields: the Pod template's schema",
    crd: (crd) => {
      for (const v of crd.spec.versions) {
        const jt = jobTemplateOf(v.schema.openAPIV3Schema);
        jt.properties.spec!.properties.template = OPEN as never;
      }
    },
  },
  "jobtemplate-open": {
    factor: "jobTemplate x-kubernetes-preserve-unknown-fields: the whole Job template's schema",
    crd: (crd) => {
      for (const v of crd.spec.versions)
        v.schema.openAPIV3Schema.properties.spec!.properties.jobTemplate = OPEN as never;
    },
  },
  "schema-open": {
    factor: "spec and status x-kubernetes-preserve-unknown-fields: the whole schema (pruning, defaulting, validation)",
    crd: (crd) => {
      for (const v of crd.spec.versions) {
        v.schema.openAPIV3Schema.properties.spec = OPEN as never;
        v.schema.openAPIV3Schema.properties.status = OPEN as never;
      }
    },
  },
  "no-managedfields": {
    factor: "--feature-gates=ServerSideApply=false: managedFields not tracked",
    apiServerArgs: ["--feature-gates=ServerSideApply=false"],
  },
  "record-open": {
    factor: "status.recentRuns' entries x-kubernetes-preserve-unknown-fields: the record's schema (not its bytes)",
    crd: (crd) => {
      for (const v of crd.spec.versions) {
        const runs = v.schema.openAPIV3Schema.properties.status!.properties.recentRuns!;
        runs.items = OPEN as never;
      }
    },
  },
  "record-loose": {
    factor: "status.recentRuns' entries without format, enum, maxLength and pattern: the record's checks",
    crd: (crd) => {
      const loosen = (s: Record<string, unknown>) => {
        for (const k of ["format", "enum", "maxLength", "pattern", "maxItems"]) delete s[k];
        for (const p of Object.values((s.properties ?? {}) as Record<string, Record<string, unknown>>)) loosen(p);
        if (s.items) loosen(s.items as Record<string, unknown>);
      };
      for (const v of crd.spec.versions) loosen(v.schema.openAPIV3Schema.properties.status!.properties.recentRuns!);
    },
  },
  "merge-patch": { factor: "the same status as a JSON merge patch of status", write: "merge-patch" },
  "all-removed": {
    factor: "schema-open, no-managedfields, no-record and watchers-0 together: what is left (decode, admission, etcd)",
    crd: (crd) => VARIANTS["schema-open"]!.crd!(crd),
    apiServerArgs: ["--feature-gates=ServerSideApply=false"],
    status: "run-no-record",
    watchers: 0,
  },
};

function crdFile(change: Variant["crd"]): string {
  const crd = parse(
    readFileSync(join(PROJECT_ROOT, "config/crd/bases/batch.tutorial.kubebuilder.io_cronjobs.yaml"), "utf8"),
  ) as CRD;
  change?.(crd);
  const dir = mkdtempSync(join(tmpdir(), "crd-status-cost-"));
  writeFileSync(join(dir, "crd.yaml"), stringify(crd));
  return dir;
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");

/** The status ours writes when round r's run was created: its Job active, the record with ten entries. */
export function runStatus(cronJob: KubeObject, round: number, shape: StatusShape): Record<string, unknown> {
  const name = cronJob.metadata?.name ?? "";
  const base = Date.parse("2026-11-26T03:00:00Z") + round * 60_000;
  const condition = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    reason,
    message,
    lastTransitionTime: iso(base),
    observedGeneration: 1,
  });
  const slot = (k: number) => iso(base - k * 60_000);
  const job = (k: number) => `${name}-${Math.floor((base - k * 60_000) / 60_000)}`;
  const recentRuns = Array.from({ length: 10 }, (_, k) => ({
    trigger: "Schedule",
    scheduledTime: slot(k),
    decision: "Created",
    reason: "Scheduled",
    decidedAt: iso(base - k * 60_000 + 1000),
    job: job(k),
    ...(k === 0 ? {} : { outcome: { result: "Complete", finishedAt: iso(base - k * 60_000 + 6000) } }),
  }));
  return {
    active: [{ apiVersion: "batch/v1", kind: "Job", name: job(0), namespace: cronJob.metadata?.namespace }],
    activeCount: 1,
    lastScheduleTime: slot(0),
    lastSuccessfulTime: iso(base - 60_000 + 6000),
    nextScheduleTime: iso(base + 60_000),
    conditions: [
      condition("Available", "True", "Scheduled", `next run at ${iso(base + 60_000)}`),
      condition("Degraded", "False", "AsExpected", "the last run was created as scheduled"),
    ],
    observedGeneration: 1,
    ...(shape === "run-no-record" ? {} : { recentRuns }),
  };
}

interface Row {
  variant: string;
  factor: string;
  bodyBytes: number;
  apiserverMs: number[];
  etcdMs: number[];
  seconds: number[];
}

async function measure(name: string, v: Variant): Promise<Row> {
  const dir = crdFile(v.crd);
  // Created, not server-side applied as `make install` does: one variant turns server-side apply off.
  const env = await TestEnv.start({ verbose: false, crdDirectoryPaths: [], apiServerArgs: v.apiServerArgs ?? [] });
  const created = await env.kubectl(["create", "-f", dir]);
  if (created.code !== 0) throw new Error(`creating the CRD failed: ${created.stderr}`);
  await env.waitEstablished("cronjobs.batch.tutorial.kubebuilder.io");
  const client = new Client(env.kubeConfig, { userAgent: "bench", maxSockets: 64 });
  const watches = new AbortController();
  try {
    const apiserver =
      env.apiServer?.pid === undefined ? undefined : await findChild(env.apiServer.pid, "kube-apiserver");
    const etcd = env.etcd?.pid === undefined ? undefined : await findChild(env.etcd.pid, "etcd");
    if (apiserver === undefined || etcd === undefined) throw new Error("kube-apiserver's or etcd's pid not found");
    await createNamespaces(client, 4);
    const objs = new Array<KubeObject>(n);
    await forEachLimit(n, 48, async (i) => {
      const p = placement(i, 4);
      objs[i] = await client.create(CronJobResource, ourCronJob(p.namespace, p.name));
    });
    for (let w = 0; w < (v.watchers ?? 1); w++) {
      const events = await client.watch(CronJobResource, { signal: watches.signal, resourceVersion: "0" });
      void (async () => {
        try {
          for await (const _ of events) void _;
        } catch {
          // aborted at the end
        }
      })();
    }
    const shape = v.status ?? "run";
    const row: Row = {
      variant: name,
      factor: v.factor,
      bodyBytes: Buffer.byteLength(JSON.stringify({ ...objs[0], status: runStatus(objs[0]!, 0, shape) })),
      apiserverMs: [],
      etcdMs: [],
      seconds: [],
    };
    for (let round = 0; round < rounds; round++) {
      await settle(apiserver);
      const a0 = cpuSeconds(apiserver) ?? NaN;
      const e0 = cpuSeconds(etcd) ?? NaN;
      const t0 = performance.now();
      const profiled = values.profile && round === 1 ? profile(env, name) : undefined;
      await forEachLimit(n, 48, async (i) => {
        const o = objs[i]!;
        const status = runStatus(o, round, shape);
        if (v.write === "merge-patch") {
          objs[i] = await client.patchStatus(
            CronJobResource,
            o.metadata?.namespace,
            o.metadata?.name ?? "",
            { status },
            "merge",
          );
        } else {
          objs[i] = await client.updateStatus(CronJobResource, { ...o, status } as KubeObject);
        }
      });
      row.seconds.push((performance.now() - t0) / 1000);
      await profiled;
      row.apiserverMs.push((((cpuSeconds(apiserver) ?? NaN) - a0) * 1000) / n);
      row.etcdMs.push((((cpuSeconds(etcd) ?? NaN) - e0) * 1000) / n);
    }
    return row;
  } finally {
    watches.abort();
    client.close();
    await env.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** kube-apiserver's CPU profile (pprof, --profiling is on by default) for --profile-seconds, to <profile>/<variant>.pprof. */
async function profile(env: TestEnv, variant: string): Promise<void> {
  const { request } = await import("node:https");
  const seconds = Number(values["profile-seconds"] ?? 5);
  const file = join(values.profile!, `${variant}.pprof`);
  const body = await new Promise<Buffer>((resolve, reject) => {
    const req = request(
      `${env.server}/debug/pprof/profile?seconds=${seconds}`,
      { headers: { authorization: `Bearer ${env.token}` }, rejectUnauthorized: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve(Buffer.concat(chunks)));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end();
  });
  writeFileSync(file, body);
}

/** Wait until kube-apiserver is idle (a CRD's install keeps it busy for seconds). */
async function settle(pid: number): Promise<void> {
  const until = Date.now() + 30_000;
  await sleep(2000);
  while (Date.now() < until) {
    const a = cpuSeconds(pid) ?? 0;
    await sleep(1000);
    if ((cpuSeconds(pid) ?? 0) - a < 0.05) return;
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const names = values.variants ? values.variants.split(",") : Object.keys(VARIANTS);
const rows: Row[] = [];
for (const name of names) {
  const v = VARIANTS[name];
  if (!v) throw new Error(`unknown variant ${name}; known: ${Object.keys(VARIANTS).join(", ")}`);
  const row = await measure(name, v);
  rows.push(row);
  console.error(
    `${name}: kube-apiserver ${row.apiserverMs.map((x) => x.toFixed(2)).join(" / ")} ms, etcd ${row.etcdMs
      .map((x) => x.toFixed(2))
      .join(" / ")} ms per write`,
  );
}
const base = rows.find((r) => r.variant === "baseline");
console.log(`N = ${n} CronJobs, ${rounds} rounds of N status writes, 48 in flight; median of the rounds\n`);
console.log(
  "| variant | what it changes | body (bytes) | kube-apiserver CPU ms per write (rounds) | median | vs baseline | etcd CPU ms per write |",
);
console.log("|---|---|--:|--:|--:|--:|--:|");
for (const r of rows) {
  const m = median(r.apiserverMs);
  const d =
    base && r !== base
      ? `${m - median(base.apiserverMs) >= 0 ? "+" : ""}${(m - median(base.apiserverMs)).toFixed(2)}`
      : "";
  console.log(
    `| ${r.variant} | ${r.factor} | ${r.bodyBytes} | ${r.apiserverMs.map((x) => x.toFixed(2)).join(" / ")} | ${m.toFixed(2)} | ${d} | ${median(r.etcdMs).toFixed(2)} |`,
  );
}
