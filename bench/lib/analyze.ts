// From the record of every Job a run created to the numbers of the report: per-slot creation skew,
// missed slots and duplicate runs.
import type { JobRecord } from "./jobs.ts";

export interface Percentiles {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentiles (seconds in, seconds out); zeros for an empty sample. */
export function percentiles(values: number[]): Percentiles {
  const v = [...values].sort((a, b) => a - b);
  const at = (p: number) => (v.length ? (v[Math.min(v.length - 1, Math.max(0, Math.ceil(p * v.length) - 1))] ?? 0) : 0);
  return { count: v.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: v.length ? (v[v.length - 1] ?? 0) : 0 };
}

export interface SlotSummary {
  slot: string;
  jobs: number;
  p99: number;
  max: number;
}

export interface Analysis {
  /** The measured minute slots (RFC 3339). */
  window: string[];
  expected: number;
  /** (CronJob, slot) pairs in the window with no Job. */
  missed: number;
  /** Extra Jobs for a (CronJob, slot) pair that already had one, over the whole run. */
  duplicates: number;
  /**
   * Creation skew, seconds: when the Job was created minus its slot. The creation instant is the
   * moment our watch saw the Job (ms resolution) clamped into its creationTimestamp's second (the
   * apiserver stores whole seconds), so it is never more than 1 s off creationTimestamp − slot.
   */
  skew: Percentiles;
  /** creationTimestamp − slot exactly as stored (1 s resolution). */
  skewCreationTimestamp: Percentiles;
  /** Jobs created during the run (all slots, including catch-up runs before the window). */
  jobsTotal: number;
  jobsInWindow: number;
  /** Jobs for slots before the window: runs missed while the controller was down, started late. */
  catchUpJobs: number;
  /** Jobs deleted during the run (history cleanup). */
  deleted: number;
  perSlot: SlotSummary[];
}

export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function creationInstant(r: JobRecord): number {
  const seen = r.seenAt ?? r.createdAt;
  return Math.min(Math.max(seen, r.createdAt), r.createdAt + 999);
}

export function analyze(records: JobRecord[], cronJobs: string[], windowSlots: number[]): Analysis {
  const inWindow = new Set(windowSlots);
  const pairs = new Map<string, number>();
  const skews: number[] = [];
  const ctSkews: number[] = [];
  const bySlot = new Map<number, number[]>();
  let catchUp = 0;
  let deleted = 0;
  const first = Math.min(...windowSlots);
  for (const r of records) {
    if (r.deletedAt !== undefined) deleted++;
    if (r.slot === undefined || !r.owner) continue;
    const key = `${r.owner}@${r.slot}`;
    pairs.set(key, (pairs.get(key) ?? 0) + 1);
    if (r.slot < first) catchUp++;
    if (!inWindow.has(r.slot)) continue;
    // From the run's own start: its slot, plus its offset under spec.jitter.
    const due = r.slot + (r.offset ?? 0);
    const s = (creationInstant(r) - due) / 1000;
    skews.push(s);
    ctSkews.push((r.createdAt - due) / 1000);
    let list = bySlot.get(r.slot);
    if (!list) bySlot.set(r.slot, (list = []));
    list.push(s);
  }
  let missed = 0;
  for (const cj of cronJobs) for (const slot of windowSlots) if (!pairs.has(`${cj}@${slot}`)) missed++;
  let duplicates = 0;
  for (const c of pairs.values()) duplicates += Math.max(0, c - 1);
  return {
    window: windowSlots.map(rfc3339),
    expected: cronJobs.length * windowSlots.length,
    missed,
    duplicates,
    skew: percentiles(skews),
    skewCreationTimestamp: percentiles(ctSkews),
    jobsTotal: records.length,
    jobsInWindow: skews.length,
    catchUpJobs: catchUp,
    deleted,
    perSlot: windowSlots.map((slot) => {
      const p = percentiles(bySlot.get(slot) ?? []);
      return { slot: rfc3339(slot), jobs: p.count, p99: p.p99, max: p.max };
    }),
  };
}
