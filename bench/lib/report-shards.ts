// The report's part on shards (SHARDS=1,2,4): one instance against K active shards at each N, with the targets
// of issue 77 (each shard's CPU and peak memory ≤ 0.35 × one instance's at 4 shards, kube-apiserver's CPU per run
// ≤ 1.1 × one instance's, 0 missed where one instance misses), then the two faults measured after the window.
import type { CgroupStats } from "./cgroup.ts";
import type { PhaseResult } from "./phases.ts";

/** The targets' bounds, as issue 77 states them. */
export const SHARD_TARGETS = { perShardRatio: 0.35, apiserverRatio: 1.1 } as const;

const num = (x: number | undefined, digits = 2): string =>
  x === undefined || !Number.isFinite(x) ? "n/a" : x.toFixed(digits);
const MB = 2 ** 20;

function throttled(atReady: CgroupStats | undefined, atEnd: CgroupStats | undefined): number | undefined {
  if (!atEnd) return undefined;
  const periods = atEnd.nrPeriods - (atReady?.nrPeriods ?? 0);
  return periods > 0 ? (atEnd.nrThrottled - (atReady?.nrThrottled ?? 0)) / periods : 0;
}

/** Per shard (one instance: itself): steady CPU (s/min), memory peak (MB, the cgroup's), throttled share. */
interface PerShard {
  cpu: number | undefined;
  /** Peak RSS (VmHWM): the process's own memory; its cgroup's peak also counts the page cache of its log. */
  rssMB: number | undefined;
  cgroupMB: number | undefined;
  throttled: number | undefined;
}

function perShard(p: PhaseResult): PerShard[] {
  if (!p.shards?.length) {
    const atEnd = p.cgroup?.atEnd;
    return [
      {
        cpu: p.cpuPerMinuteSteady,
        rssMB: p.peakRssMB,
        cgroupMB: atEnd ? atEnd.memoryMaxUsageBytes / MB : undefined,
        throttled: throttled(p.cgroup?.atReady, atEnd),
      },
    ];
  }
  return p.shards.map((s) => ({
    cpu: s.cpuPerMinuteSteady,
    rssMB: s.peakRssMB,
    cgroupMB: s.cgroupAtEnd ? s.cgroupAtEnd.memoryMaxUsageBytes / MB : undefined,
    // The shard's cgroup at ready is not kept: its throttled share is over the whole run.
    throttled: throttled(undefined, s.cgroupAtEnd),
  }));
}

const maxOf = (xs: Array<number | undefined>): number | undefined =>
  xs.some((x) => x === undefined) ? undefined : Math.max(...(xs as number[]));

function verdict(ok: boolean | undefined): string {
  return ok === undefined ? "" : ok ? " ✅" : " ❌";
}

/** One table per N: a column per shard count. */
export function shardsTable(n: number, one: PhaseResult | undefined, sharded: readonly PhaseResult[]): string {
  const cols = [...(one ? [one] : []), ...sharded].filter((p) => p.ok);
  if (!cols.length) return `N = ${n}: no sharded phase completed.`;
  const base = one?.ok ? one : undefined;
  const baseShard = base ? perShard(base)[0] : undefined;
  const head = cols.map((p) => (p.shardCount ? `${p.shardCount} shards` : "1 instance"));
  const rows: Array<[string, (p: PhaseResult) => string]> = [
    [
      "skew p50 / p99 / max (s)",
      (p) => `${num(p.analysis?.skew.p50)} / ${num(p.analysis?.skew.p99)} / ${num(p.analysis?.skew.max)}`,
    ],
    ["missed / duplicates", (p) => `${p.analysis?.missed ?? "n/a"} / ${p.analysis?.duplicates ?? "n/a"}`],
    [
      "each shard's CPU, steady (s/min): the busiest, and each",
      (p) => {
        const each = perShard(p).map((x) => x.cpu);
        const worst = maxOf(each);
        const ratio = worst !== undefined && baseShard?.cpu ? worst / baseShard.cpu : undefined;
        return (
          `${num(worst)}${p.shardCount && ratio !== undefined ? ` (**${num(ratio)}×**${p.shardCount === 4 ? verdict(ratio <= SHARD_TARGETS.perShardRatio) : ""})` : ""}` +
          (each.length > 1 ? `; ${each.map((x) => num(x)).join(", ")}` : "")
        );
      },
    ],
    [
      "each shard's peak RSS (MB): the largest",
      (p) => {
        const worst = maxOf(perShard(p).map((x) => x.rssMB));
        const ratio = worst !== undefined && baseShard?.rssMB ? worst / baseShard.rssMB : undefined;
        return `${num(worst, 0)}${p.shardCount && ratio !== undefined ? ` (**${num(ratio)}×**${p.shardCount === 4 ? verdict(ratio <= SHARD_TARGETS.perShardRatio) : ""})` : ""}`;
      },
    ],
    [
      "each shard's cgroup memory peak (MB, with its page cache): the largest",
      (p) => num(maxOf(perShard(p).map((x) => x.cgroupMB)), 0),
    ],
    [
      "throttled CPU periods: the most of a shard",
      (p) => {
        const worst = maxOf(perShard(p).map((x) => x.throttled));
        return worst === undefined ? "n/a" : `${(worst * 100).toFixed(0)} %`;
      },
    ],
    ["all shards' CPU per run (ms)", (p) => num(p.cpuMsPerRunSteady)],
    [
      "kube-apiserver CPU per run (ms)",
      (p) => {
        const ratio =
          p.apiserverCpuMsPerRun !== undefined && base?.apiserverCpuMsPerRun
            ? p.apiserverCpuMsPerRun / base.apiserverCpuMsPerRun
            : undefined;
        return `${num(p.apiserverCpuMsPerRun)}${p.shardCount && ratio !== undefined ? ` (**${num(ratio)}×**${verdict(ratio <= SHARD_TARGETS.apiserverRatio)})` : ""}`;
      },
    ],
    ["kube-apiserver's busiest second (cores)", (p) => num(p.apiserverPeakCores)],
    ["etcd CPU per run (ms)", (p) => num(p.etcdCpuMsPerRun)],
    ["writes per run", (p) => num(p.writesPerRun)],
    ["cold start (s)", (p) => num(p.coldStartS, 1)],
    [
      "namespaces each shard held",
      (p) => (p.shards ? p.shards.map((s) => String(s.namespacesHeld ?? "?")).join(", ") : "all"),
    ],
    [
      "a shard joins: namespaces moved (ideal) / settled in (s)",
      (p) => {
        const j = p.faults?.join;
        if (!j) return "—";
        const total = p.shards?.reduce((a, s) => a + (s.namespacesHeld ?? 0), 0) ?? 0;
        return `${j.moved} (${num(total / (j.before + 1), 0)}) / ${num(j.settledS, 1)}${j.error ? ` (${j.error})` : ""}`;
      },
    ],
    [
      "SIGKILL 3 s before a slot: its namespaces' first / last Job of the slot after it (s)",
      (p) => {
        const k = p.faults?.kill;
        if (!k) return "—";
        return `${num(k.firstJobS, 1)} / ${num(k.lastJobS, 1)} (${k.namespaces} namespaces, ${k.cronJobs} CronJobs)`;
      },
    ],
    [
      "that slot's skew p99 (s): its namespaces / the others'",
      (p) => (p.faults?.kill ? `${num(p.faults.kill.skewP99S)} / ${num(p.faults.kill.othersSkewP99S)}` : "—"),
    ],
    [
      "from the join to the kill's slot: missed / duplicates",
      (p) => {
        const a = p.faults?.analysis;
        return a ? `${a.missed} of ${a.expected} / ${a.duplicates}` : "—";
      },
    ],
  ];
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [
    line([`N = ${n}`, ...head]),
    line(["---", ...head.map(() => "--:")]),
    ...rows.map(([label, f]) => line([label, ...cols.map(f)])),
  ].join("\n");
}
