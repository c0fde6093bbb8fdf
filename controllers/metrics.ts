// Per-CronJob metrics ("see every CronJob"): kube-state-metrics' kube_cronjob_* family, exported by the
// controller itself.
//
// The gauges are computed at scrape time from the CronJobs in the informer cache (a prom-client collect()
// that resets the gauge and sets one series per cached CronJob): a deleted CronJob's series disappear by
// construction and nothing is kept per CronJob between scrapes. The run counter is the one thing kept in
// memory; the reconciler counts through countRun() and drops a deleted CronJob's series with forget() (also
// called by the CronJob informer's delete handler, see cmd/run.ts).
//
// Cardinality: per CronJob at most 8 gauge series (a timestamp absent from status has no series) and 6
// counter series (one per outcome). --per-cronjob-metrics=false registers none of these metrics.
//
// Only the leader exports them (isLeader): every replica caches the same CronJobs, and two replicas
// exporting the same series would double every dashboard line and alert.
import { Counter, Gauge, type Registry } from "prom-client";
import { metricsRegistry } from "../runtime/metrics/registry.ts";

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
  /** One more run of namespace/name with this outcome. */
  countRun(namespace: string, name: string, outcome: RunOutcome): void;
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
  metadata?: { namespace?: string; name?: string };
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

type IDLabel = "namespace" | "cronjob";
const ID_LABELS: IDLabel[] = ["namespace", "cronjob"];
type InfoLabel = IDLabel | "schedule" | "time_zone" | "concurrency_policy";

export class CronJobMetrics implements CronJobRunMetrics {
  private readonly list: () => readonly Readonly<CronJobView>[];
  private readonly registry: Registry;
  private readonly isLeader: () => boolean;
  private readonly runs: Counter<IDLabel | "outcome">;
  private readonly metrics: Array<Gauge<string> | Counter<string>>;
  /** CronJobs whose counter series exist, by namespace/name. */
  private readonly counted = new Map<string, { namespace: string; cronjob: string }>();

  constructor(o: CronJobMetricsOptions) {
    this.list = o.list;
    this.registry = o.registry ?? metricsRegistry;
    this.isLeader = o.isLeader ?? (() => true);

    // Sets one series per cached CronJob (none for a value it does not have); all of them go at every scrape.
    const fill = <L extends string>(
      g: Gauge<L>,
      value: (cj: Readonly<CronJobView>) => number | undefined,
      extra: (cj: Readonly<CronJobView>) => Partial<Record<L, string>> = () => ({}),
    ): void => {
      g.reset();
      if (!this.isLeader()) return;
      for (const cj of this.list()) {
        const id = idLabels(cj);
        if (!id) continue;
        const v = value(cj);
        if (v !== undefined) g.set({ ...id, ...extra(cj) } as Partial<Record<L, string>>, v);
      }
    };

    // The status timestamps, one gauge each: [name, help, field of status].
    const timestamps: Array<[string, string, keyof NonNullable<CronJobView["status"]>]> = [
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
    const timestampGauges = timestamps.map(
      ([name, help, field]) =>
        new Gauge<IDLabel>({
          name,
          help,
          labelNames: ID_LABELS,
          registers: [],
          collect() {
            fill(this, (cj) => unixSeconds(cj.status?.[field] as string | null | undefined));
          },
        }),
    );
    const activeJobs = new Gauge<IDLabel>({
      name: "cronjob_active_jobs",
      help: "Jobs of the CronJob running now (status.active).",
      labelNames: ID_LABELS,
      registers: [],
      collect() {
        fill(this, (cj) => {
          const st = cj.status;
          if (Array.isArray(st?.active)) return st.active.length;
          return typeof st?.activeCount === "number" ? st.activeCount : undefined;
        });
      },
    });
    const suspended = new Gauge<IDLabel>({
      name: "cronjob_suspended",
      help: "1 if the CronJob is suspended (spec.suspend), else 0.",
      labelNames: ID_LABELS,
      registers: [],
      collect() {
        fill(this, (cj) => (cj.spec?.suspend === true ? 1 : 0));
      },
    });
    const consecutiveFailures = new Gauge<IDLabel>({
      name: "cronjob_consecutive_failures",
      help: "Runs of the CronJob in a row that failed (status.consecutiveFailures); only while spec.stopAfterConsecutiveFailures is set.",
      labelNames: ID_LABELS,
      registers: [],
      collect() {
        fill(this, (cj) =>
          typeof cj.status?.consecutiveFailures === "number" ? cj.status.consecutiveFailures : undefined,
        );
      },
    });
    const stopped = new Gauge<IDLabel>({
      name: "cronjob_stopped",
      help: "1 if the controller stopped scheduling the CronJob after repeated failures (status.stopped), else 0; only while spec.stopAfterConsecutiveFailures is set (or it is stopped).",
      labelNames: ID_LABELS,
      registers: [],
      collect() {
        fill(this, (cj) =>
          cj.status?.stopped ? 1 : typeof cj.spec?.stopAfterConsecutiveFailures === "number" ? 0 : undefined,
        );
      },
    });
    const info = new Gauge<InfoLabel>({
      name: "cronjob_info",
      help: `Always 1: the CronJob's schedule, time zone ("" = UTC) and concurrency policy as labels (values cut at ${MAX_LABEL_VALUE_LENGTH} characters).`,
      labelNames: [...ID_LABELS, "schedule", "time_zone", "concurrency_policy"],
      registers: [],
      collect() {
        fill(
          this,
          () => 1,
          (cj) => ({
            schedule: bounded(cj.spec?.schedule ?? ""),
            time_zone: bounded(cj.spec?.timeZone ?? ""),
            concurrency_policy: bounded(cj.spec?.concurrencyPolicy ?? "Allow"),
          }),
        );
      },
    });
    // Every outcome of every cached CronJob exists from the first scrape, at 0, so rate() and increase()
    // see the first run; series of CronJobs no longer cached are dropped (as forget does).
    const syncCounted = (): void => {
      if (!this.isLeader()) return;
      const cached = new Set<string>();
      for (const cj of this.list()) {
        const id = idLabels(cj);
        if (!id) continue;
        cached.add(key(id.namespace, id.cronjob));
        this.ensureCounted(id.namespace, id.cronjob);
        for (const [outcome, uses] of Object.entries(FEATURE_OUTCOMES))
          if (uses(cj)) this.runs.inc({ ...id, outcome }, 0);
      }
      for (const [k, id] of this.counted) if (!cached.has(k)) this.forget(id.namespace, id.cronjob);
    };
    this.runs = new Counter<IDLabel | "outcome">({
      name: "cronjob_runs_total",
      help: "Runs of the CronJob by outcome: created, succeeded, failed, missed_deadline, missed_policy, skipped_forbid, manual.",
      labelNames: [...ID_LABELS, "outcome"],
      registers: [],
      collect() {
        syncCounted();
      },
    });

    this.metrics = [...timestampGauges, activeJobs, suspended, consecutiveFailures, stopped, info, this.runs] as Array<
      Gauge<string> | Counter<string>
    >;
    for (const m of this.metrics) {
      const name = metricName(m);
      // A new instance replaces an earlier one's metrics (a second manager in one process, tests).
      if (this.registry.getSingleMetric(name)) this.registry.removeSingleMetric(name);
      this.registry.registerMetric(m);
    }
  }

  countRun(namespace: string, name: string, outcome: RunOutcome): void {
    if (!namespace || !name || !ALL_OUTCOMES.includes(outcome)) return;
    this.ensureCounted(namespace, name);
    this.runs.inc({ namespace, cronjob: name, outcome });
  }

  forget(namespace: string, name: string): void {
    if (!this.counted.delete(key(namespace, name))) return;
    for (const outcome of ALL_OUTCOMES) this.runs.remove({ namespace, cronjob: name, outcome });
  }

  /** Removes these metrics from the registry. */
  unregister(): void {
    for (const m of this.metrics) {
      const name = metricName(m);
      if (this.registry.getSingleMetric(name) === m) this.registry.removeSingleMetric(name);
    }
  }

  private ensureCounted(namespace: string, cronjob: string): void {
    const k = key(namespace, cronjob);
    if (this.counted.has(k)) return;
    this.counted.set(k, { namespace, cronjob });
    for (const outcome of RUN_OUTCOMES) this.runs.inc({ namespace, cronjob, outcome }, 0);
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

/** A metric's name: prom-client keeps it on the instance but does not declare it in its types. */
function metricName(m: object): string {
  if ("name" in m && typeof m.name === "string") return m.name;
  throw new Error("a prom-client metric without a name");
}
