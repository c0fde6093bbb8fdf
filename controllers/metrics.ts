// Per-CronJob metrics ("see every CronJob"): kube-state-metrics' kube_cronjob_* family, exported by the
// controller itself.
//
// Every series is computed at scrape time (runtime/metrics/collector.ts), the gauges from the CronJobs in
// the informer cache: a deleted CronJob's series disappear by construction and no series is kept between
// scrapes (prom-client's own metrics keep each one: most of the heap at scale, docs/operating.md "The figures
// behind the code's rules"). The run counts
// are the one thing kept, a small array per CronJob that has run; the reconciler counts through countRun()
// and drops a deleted CronJob's counts with forget() (also called by the CronJob informer's delete handler,
// see cmd/run.ts).
//
// Cardinality: per CronJob at most 9 gauge series (a timestamp absent from status has no series) and 6
// counter series (one per outcome). --per-cronjob-metrics=false registers none of these metrics.
//
// Only the leader exports them (isLeader): every replica caches the same CronJobs, and two replicas
// exporting the same series would double every dashboard line and alert.
import { Counter, Histogram, type Registry } from "prom-client";
import { RecordDecision } from "../api/v1/index.ts";
import { type Sample, ScrapeTimeMetric } from "../runtime/metrics/collector.ts";
import { getOrCreate, metricsRegistry } from "../runtime/metrics/registry.ts";

/** The `outcome` values of cronjob_runs_total. */
export const RUN_OUTCOMES = [
  /** A Job was created for a scheduled slot. */
  "created",
  /** A Job of the CronJob finished successfully. */
  "succeeded",
  /** A Job of the CronJob failed. */
  "failed",
  /** A slot was not started because startingDeadlineSeconds had passed (MissSchedule). */
  "missed_deadline",
  /** A slot was not started because of concurrencyPolicy Forbid and a running Job (JobAlreadyActive). */
  "skipped_forbid",
  /** A Job was started by hand (kubectl cron run). */
  "manual",
] as const;
/**
 * Outcomes only a CronJob that uses the feature can have: their series exist (from 0) for those CronJobs alone,
 * so a CronJob without the feature keeps exactly its series.
 */
const FEATURE_OUTCOMES = {
  /** A missed slot the missedRunPolicy does not run (Skip; RunAll beyond its newest 100, or with Replace). */
  missed_policy: (cj: Readonly<CronJobView>) =>
    cj.spec?.missedRunPolicy === "Skip" || cj.spec?.missedRunPolicy === "RunAll",
} as const;
export type RunOutcome = (typeof RUN_OUTCOMES)[number] | keyof typeof FEATURE_OUTCOMES;
const ALL_OUTCOMES: readonly RunOutcome[] = [...RUN_OUTCOMES, ...(Object.keys(FEATURE_OUTCOMES) as RunOutcome[])];

/** Label values taken from the spec (schedule, time zone, policy) are cut to this many characters. */
export const MAX_LABEL_VALUE_LENGTH = 128;

/** What the reconciler calls. */
export interface CronJobRunMetrics {
  /**
   * One more run of namespace/name with this outcome. `uid`: the CronJob's; a CronJob re-created under the same
   * name (another UID) counts from zero, even when no forget() came between.
   */
  countRun(namespace: string, name: string, outcome: RunOutcome, uid?: string): void;
  /** The CronJob is gone: drop all its series. */
  forget(namespace: string, name: string): void;
}

/** --per-cronjob-metrics=false: counts nothing, registers nothing. */
export const noCronJobMetrics: CronJobRunMetrics = {
  countRun() {},
  forget() {},
};

/** The fields of a cached CronJob these metrics read; anything may be missing (or null) in a stored object. */
export interface CronJobView {
  metadata?: { namespace?: string; name?: string; uid?: string };
  spec?: {
    schedule?: string;
    timeZone?: string | null;
    concurrencyPolicy?: string;
    suspend?: boolean | null;
    missedRunPolicy?: string | null;
    stopAfterConsecutiveFailures?: number | null;
  };
  status?: {
    nextScheduleTime?: string | null;
    lastScheduleTime?: string | null;
    lastSuccessfulTime?: string | null;
    /** Read as optional: objects written before the field existed lack it. */
    lastFailedTime?: string | null;
    lastMissedTime?: string | null;
    active?: readonly unknown[] | null;
    activeCount?: number | null;
    consecutiveFailures?: number | null;
    stopped?: unknown;
    /** Newest first (api/v1/recentruns.ts). Read as optional: objects written before the field existed lack it. */
    recentRuns?: readonly { decision?: string; blockedBy?: string | null }[] | null;
  } | null;
}

interface CronJobMetricsOptions {
  /** The CronJobs to report, read at every scrape: the CronJob informer's cache (a fake in tests). */
  list: () => readonly Readonly<CronJobView>[];
  /** Default: the process registry that /metrics serves. */
  registry?: Registry;
  /** Export series only while this is true (the manager's isLeader). Default: always. */
  isLeader?: () => boolean;
}

type IDLabels = { namespace: string; cronjob: string };

/** A CronJob's run counts, by ALL_OUTCOMES index; a feature outcome's entry is absent until counted. */
interface RunCounts {
  id: IDLabels;
  /** The CronJob's UID, when the counter knew it. */
  uid?: string;
  counts: Array<number | undefined>;
}

/** The status timestamps, one gauge each: [name, help, field of status]. */
const STATUS_TIMESTAMPS: ReadonlyArray<[string, string, keyof NonNullable<CronJobView["status"]>]> = [
  [
    "cronjob_next_schedule_time_seconds",
    "Unix time of the CronJob's next scheduled run (status.nextScheduleTime); no series while suspended or invalid.",
    "nextScheduleTime",
  ],
  [
    "cronjob_last_schedule_time_seconds",
    "Unix time of the scheduled slot of the newest Job the controller started (status.lastScheduleTime).",
    "lastScheduleTime",
  ],
  [
    "cronjob_last_successful_time_seconds",
    "Unix time the newest successful Job of the CronJob finished (status.lastSuccessfulTime).",
    "lastSuccessfulTime",
  ],
  [
    "cronjob_last_failed_time_seconds",
    "Unix time the newest failed Job of the CronJob failed (status.lastFailedTime).",
    "lastFailedTime",
  ],
  [
    "cronjob_last_missed_time_seconds",
    "Unix time of the newest slot not started because startingDeadlineSeconds had passed (status.lastMissedTime).",
    "lastMissedTime",
  ],
];

export class CronJobMetrics implements CronJobRunMetrics {
  private readonly list: () => readonly Readonly<CronJobView>[];
  private readonly registry: Registry;
  private readonly isLeader: () => boolean;
  private readonly metrics: ScrapeTimeMetric[];
  /** Run counts of the CronJobs that have run, by namespace/name; every other cached CronJob's are all 0. */
  private readonly runs = new Map<string, RunCounts>();

  constructor(o: CronJobMetricsOptions) {
    this.list = o.list;
    this.registry = o.registry ?? metricsRegistry;
    this.isLeader = o.isLeader ?? (() => true);

    // One series per cached CronJob (none for a value it does not have), computed at the scrape.
    const gauge = (
      name: string,
      help: string,
      value: (cj: Readonly<CronJobView>) => number | undefined,
      extra?: (cj: Readonly<CronJobView>) => Record<string, string>,
    ): ScrapeTimeMetric =>
      new ScrapeTimeMetric({
        name,
        help,
        type: "gauge",
        collect: () =>
          this.eachCached((cj, id) => {
            const v = value(cj);
            return v === undefined ? [] : [{ labels: extra ? { ...id, ...extra(cj) } : id, value: v }];
          }),
      });

    this.metrics = [
      ...STATUS_TIMESTAMPS.map(([name, help, field]) =>
        gauge(name, help, (cj) => unixSeconds(cj.status?.[field] as string | null | undefined)),
      ),
      gauge("cronjob_active_jobs", "Jobs of the CronJob running now (status.active).", (cj) => {
        const st = cj.status;
        if (Array.isArray(st?.active)) return st.active.length;
        return typeof st?.activeCount === "number" ? st.activeCount : undefined;
      }),
      gauge(
        "cronjob_blocked_runs",
        "Scheduled times of the CronJob in a row (newest first in status.recentRuns) not started because the same Job, still running (status.active), held them (concurrencyPolicy Forbid); else 0.",
        blockedRuns,
      ),
      gauge("cronjob_suspended", "1 if the CronJob is suspended (spec.suspend), else 0.", (cj) =>
        cj.spec?.suspend === true ? 1 : 0,
      ),
      gauge(
        "cronjob_consecutive_failures",
        "Runs of the CronJob in a row that failed (status.consecutiveFailures); only while spec.stopAfterConsecutiveFailures is set.",
        (cj) => (typeof cj.status?.consecutiveFailures === "number" ? cj.status.consecutiveFailures : undefined),
      ),
      gauge(
        "cronjob_stopped",
        "1 if the controller stopped scheduling the CronJob after repeated failures (status.stopped), else 0; only while spec.stopAfterConsecutiveFailures is set (or it is stopped).",
        (cj) => (cj.status?.stopped ? 1 : typeof cj.spec?.stopAfterConsecutiveFailures === "number" ? 0 : undefined),
      ),
      gauge(
        "cronjob_info",
        `Always 1: the CronJob's schedule, time zone ("" = UTC) and concurrency policy as labels (values cut at ${MAX_LABEL_VALUE_LENGTH} characters).`,
        () => 1,
        (cj) => ({
          schedule: bounded(cj.spec?.schedule ?? ""),
          time_zone: bounded(cj.spec?.timeZone ?? ""),
          concurrency_policy: bounded(cj.spec?.concurrencyPolicy ?? "Allow"),
        }),
      ),
      new ScrapeTimeMetric({
        name: "cronjob_runs_total",
        help: "Runs of the CronJob by outcome: created, succeeded, failed, missed_deadline, missed_policy, skipped_forbid, manual.",
        type: "counter",
        collect: () => this.runSeries(),
      }),
    ];
    for (const m of this.metrics) m.register(this.registry);
  }

  countRun(namespace: string, name: string, outcome: RunOutcome, uid?: string): void {
    const i = ALL_OUTCOMES.indexOf(outcome);
    if (!namespace || !name || i < 0) return;
    const k = key(namespace, name);
    let r = this.runs.get(k);
    if (!r || (uid !== undefined && r.uid !== undefined && r.uid !== uid)) {
      r = { id: { namespace, cronjob: name }, counts: [], ...(uid !== undefined ? { uid } : {}) };
      this.runs.set(k, r);
    }
    r.counts[i] = (r.counts[i] ?? 0) + 1;
  }

  forget(namespace: string, name: string): void {
    this.runs.delete(key(namespace, name));
  }

  /** Removes these metrics from the registry. */
  unregister(): void {
    for (const m of this.metrics) m.unregister(this.registry);
  }

  /** The samples `f` makes of each cached CronJob (none while not the leader), as the scrape renders them. */
  private *eachCached(f: (cj: Readonly<CronJobView>, id: IDLabels) => Iterable<Sample>): Generator<Sample> {
    if (!this.isLeader()) return;
    for (const cj of this.list()) {
      const id = idLabels(cj);
      if (id) yield* f(cj, id);
    }
  }

  /**
   * Every outcome of every cached CronJob from the first scrape, at 0, so rate() and increase() see the first
   * run; a feature outcome for the CronJobs that use the feature (or counted one). Counts of CronJobs no longer
   * cached are dropped once the scrape has seen them all (as forget does): one that left the cache without a
   * forget leaves nothing behind.
   */
  private *runSeries(): Generator<Sample> {
    if (!this.isLeader()) return;
    const cached = new Set<string>();
    yield* this.eachCached((cj, id) => {
      const k = key(id.namespace, id.cronjob);
      cached.add(k);
      const runs = this.runs.get(k);
      // Counts of another CronJob that had this name (deleted and re-created between two scrapes) are not its.
      const counts = runs && (runs.uid === undefined || runs.uid === cj.metadata?.uid) ? runs.counts : undefined;
      if (runs && !counts) this.runs.delete(k);
      const out: Sample[] = [];
      ALL_OUTCOMES.forEach((outcome, i) => {
        const v = counts?.[i];
        const feature = (FEATURE_OUTCOMES as Record<string, (cj: Readonly<CronJobView>) => boolean>)[outcome];
        if (v !== undefined || !feature || feature(cj)) out.push({ labels: { ...id, outcome }, value: v ?? 0 });
      });
      return out;
    });
    for (const k of this.runs.keys()) if (!cached.has(k)) this.runs.delete(k);
  }
}

function key(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

function idLabels(cj: Readonly<CronJobView>): { namespace: string; cronjob: string } | undefined {
  const namespace = cj.metadata?.namespace;
  const cronjob = cj.metadata?.name;
  return namespace && cronjob ? { namespace, cronjob } : undefined;
}

/**
 * How many scheduled times in a row one running Job has held back: the newest entries of status.recentRuns that
 * waited behind the newest entry's blockedBy (Held, or Missed after it was held), counted while that Job is still
 * in status.active. A hung Job under concurrencyPolicy Forbid shows as a count that grows by one a slot; it falls
 * to 0 when the Job ends or a run starts. At most MAX_RECENT_RUNS, what the record keeps.
 */
function blockedRuns(cj: Readonly<CronJobView>): number {
  const runs = Array.isArray(cj.status?.recentRuns) ? cj.status.recentRuns : [];
  const blocker = runs[0]?.blockedBy;
  if (typeof blocker !== "string" || blocker === "") return 0;
  const active = Array.isArray(cj.status?.active) ? cj.status.active : [];
  const running = active.some(
    (ref) => typeof ref === "object" && ref !== null && "name" in ref && ref.name === blocker,
  );
  if (!running) return 0;
  let count = 0;
  for (const r of runs) {
    const held = r?.decision === RecordDecision.Held || r?.decision === RecordDecision.Missed;
    if (!held || r.blockedBy !== blocker) break;
    count++;
  }
  return count;
}

/** An RFC 3339 time as Unix seconds; undefined when absent or unparseable. */
function unixSeconds(t: string | null | undefined): number | undefined {
  if (typeof t !== "string" || t === "") return undefined;
  const ms = Date.parse(t);
  return Number.isFinite(ms) ? ms / 1000 : undefined;
}

/** At most MAX_LABEL_VALUE_LENGTH characters (code points: a cut never splits a surrogate pair). */
function bounded(s: string): string {
  if (s.length <= MAX_LABEL_VALUE_LENGTH) return s;
  return Array.from(s).slice(0, MAX_LABEL_VALUE_LENGTH).join("");
}

/** Time between a slot and its Job's create: the schedule's own lateness (backfill and run-now have no slot due). */
export const jobCreationSkew = getOrCreate(
  "cronjob_controller_job_creation_skew_duration_seconds",
  () =>
    new Histogram({
      name: "cronjob_controller_job_creation_skew_duration_seconds",
      help: "Time between when a Job was scheduled to run and when it was created",
      buckets: [0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
      registers: [metricsRegistry],
    }),
);

/**
 * Every pass's status-write decision, by its reason code (controllers/statusdecision.ts StatusWriteReason): written now
 * (failed, changed, news, room, bound), left to a later pass (burst, created, announce, runDelay, folded), or nothing
 * to write (unchanged).
 */
export const statusWrites = getOrCreate(
  "cronjob_controller_status_writes_total",
  () =>
    new Counter({
      name: "cronjob_controller_status_writes_total",
      help:
        "CronJob status-write decisions by reason: failed, changed, news, room, bound (written now); burst, created, " +
        "announce, runDelay, folded (left to a later pass); unchanged (nothing to write)",
      labelNames: ["decision"] as const,
      registers: [metricsRegistry],
    }),
);
