// Ours as several active shards (SHARDS=2,4: `--sharding`, each replica in a cgroup of its own with the same
// limits): who holds which namespace (the claims), when the split has settled, and the two faults the report
// measures after the measured window: a shard that joins (how many namespaces move, how long until settled) and
// a shard SIGKILLed just before a slot (how long until its namespaces' Jobs of that slot exist, and how late).
import { CLAIM_LEASE_NAME } from "../../api/v1/claims.ts";
import type { Client } from "../../runtime/client.ts";
import { type Analysis, percentiles } from "./analyze.ts";
import type { CgroupStats } from "./cgroup.ts";
import type { JobRecord } from "./jobs.ts";
import { sleep } from "./pool.ts";
import { type Sample, sumOf } from "./prom.ts";

/** One shard of a sharded phase: its own process and cgroup. */
export interface ShardResult {
  index: number;
  /** Its POD_NAME, the replica part of its identity and of its Lease's name. */
  replica: string;
  cpuSeconds?: number;
  /** CPU after the cold start, per minute (s/min): what its limit must carry. */
  cpuPerMinuteSteady?: number;
  cpuPeakCores?: number;
  peakRssMB?: number;
  /** Its cgroup at the end of the measured window (throttled periods, memory peak, OOM kills). */
  cgroupAtEnd?: CgroupStats;
  /** Namespaces it held at the end of the measured window (sharding_namespaces{state="held"}). */
  namespacesHeld?: number;
  exitedAtS?: number;
}

export interface JoinResult {
  /** Shards before the join. */
  before: number;
  /** Namespaces whose claim changed holder; the ideal is namespaces / (before + 1). */
  moved: number;
  /** Namespaces the new shard holds once settled. */
  newcomerHeld: number;
  /** From the new shard's start to every namespace held once, none moving. */
  settledS?: number;
  error?: string;
}

export interface KillResult {
  /** SIGKILL this long before the next minute slot. */
  beforeSlotS: number;
  /** The namespaces it held, and their CronJobs. */
  namespaces: number;
  cronJobs: number;
  /** From the SIGKILL to the first and the last of the slot's Jobs in its namespaces (undefined: none came). */
  firstJobS?: number;
  lastJobS?: number;
  /** Its namespaces' CronJobs with no Job for the slot within the wait. */
  missed: number;
  /** Creation skew of the slot's Jobs in its namespaces, and in the other shards' (the same slot). */
  skewP99S?: number;
  othersSkewP99S?: number;
  error?: string;
}

export interface ShardFaults {
  join?: JoinResult;
  kill?: KillResult;
  /** The slots from the join to the end (after the measured window): missed and duplicates across both faults. */
  analysis?: Analysis;
}

/** The replica name of shard i: POD_NAME, and so its Lease `<leader-election-id>-<replica>`. */
export const shardReplica = (i: number): string => `bench-shard-${i}`;

/** Each namespace's claim holder, as its replica (the identity is `<replica>_<uuid>`). */
export async function claimHolders(client: Client): Promise<Map<string, string>> {
  const list = await client.request<{
    items: Array<{ metadata: { namespace: string; name: string }; spec?: { holderIdentity?: string } }>;
  }>("GET", "/apis/coordination.k8s.io/v1/leases", { query: { fieldSelector: `metadata.name=${CLAIM_LEASE_NAME}` } });
  const out = new Map<string, string>();
  for (const l of list.items) {
    const holder = l.spec?.holderIdentity;
    if (holder) out.set(l.metadata.namespace, holder.replace(/_[^_]*$/, ""));
  }
  return out;
}

/**
 * The split has settled: the shards together hold every namespace once (each candidate: every namespace of the
 * cluster, the benchmark's and the system's), none is being taken or let go, and each shard counts every live member.
 * `perShard`: each live shard's /metrics.
 */
export function settled(perShard: Sample[][]): boolean {
  let held = 0;
  const candidates = perShard[0] ? sumOf(perShard[0], "sharding_namespaces", { state: "candidate" }) : 0;
  for (const m of perShard) {
    if (sumOf(m, "sharding_namespaces", { state: "candidate" }) !== candidates) return false;
    held += sumOf(m, "sharding_namespaces", { state: "held" });
    if (sumOf(m, "sharding_namespaces", { state: "acquiring" }) > 0) return false;
    if (sumOf(m, "sharding_namespaces", { state: "releasing" }) > 0) return false;
    if (sumOf(m, "sharding_members") !== perShard.length) return false;
  }
  return candidates > 0 && held === candidates;
}

/** Waits (bounded) until `settled`; the time it took, or undefined. */
export async function waitSettled(
  scrapeAll: () => Promise<Sample[][] | undefined>,
  timeoutMs: number,
): Promise<number | undefined> {
  const t0 = Date.now();
  while (Date.now() - t0 < timeoutMs) {
    const m = await scrapeAll();
    if (m && settled(m)) return (Date.now() - t0) / 1000;
    await sleep(500);
  }
  return undefined;
}

/** The join's figures from the claims before and after. */
export function joinFigures(before: Map<string, string>, after: Map<string, string>, newcomer: string) {
  let moved = 0;
  let newcomerHeld = 0;
  for (const [ns, holder] of after) {
    if (before.get(ns) !== holder) moved++;
    if (holder === newcomer) newcomerHeld++;
  }
  return { moved, newcomerHeld };
}

/**
 * The kill's figures: the Jobs of `slot` in the killed shard's namespaces against every CronJob there
 * (`keys`: "namespace/name"), and the same slot's skew in the other namespaces.
 */
export function killFigures(
  jobs: Iterable<JobRecord>,
  keys: readonly string[],
  namespaces: ReadonlySet<string>,
  slot: number,
  killAt: number,
): Omit<KillResult, "beforeSlotS"> {
  const mine = keys.filter((k) => namespaces.has(k.slice(0, k.indexOf("/"))));
  const seen = new Map<string, number>();
  const skewMine: number[] = [];
  const skewOthers: number[] = [];
  for (const j of jobs) {
    if (j.slot !== slot) continue;
    const at = j.seenAt ?? j.createdAt;
    if (namespaces.has(j.namespace)) {
      if (!seen.has(j.owner)) seen.set(j.owner, at);
      skewMine.push((at - slot) / 1000);
    } else skewOthers.push((at - slot) / 1000);
  }
  const times = [...seen.values()];
  return {
    namespaces: namespaces.size,
    cronJobs: mine.length,
    ...(times.length
      ? { firstJobS: (Math.min(...times) - killAt) / 1000, lastJobS: (Math.max(...times) - killAt) / 1000 }
      : {}),
    missed: mine.filter((k) => !seen.has(k)).length,
    ...(skewMine.length ? { skewP99S: percentiles(skewMine).p99 } : {}),
    ...(skewOthers.length ? { othersSkewP99S: percentiles(skewOthers).p99 } : {}),
  };
}
