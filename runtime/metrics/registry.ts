// The one Prometheus registry of the process (controller-runtime's metrics.Registry). Every runtime
// part registers its collectors here; the metrics server serves it.
import { type Counter, type Gauge, type Histogram, Registry } from "prom-client";

type LabelValues<L extends string> = Partial<Record<L, string | number>>;

export const metricsRegistry = new Registry();

/** Get-or-create, so modules loaded twice (tests) do not throw "already registered". */
export function getOrCreate<T>(name: string, create: () => T): T {
  const existing = metricsRegistry.getSingleMetric(name);
  return (existing as T | undefined) ?? create();
}

// A labelled series only appears in /metrics once something touches it, so a counter that has not
// counted yet would show only HELP/TYPE: dashboards see "no data" instead of 0, and rate()/increase()
// miss the first increment (a series' first sample has nothing to compare with). controller-runtime
// therefore creates its series when a controller (or, here, a queue or an informer) is created. These
// helpers make a series exist at 0 and never disturb one that already holds data (the same label set
// may be initialised again, e.g. by a second informer for the same resource).

/** Makes the counter series `labels` exist (adds 0). */
export function initCounter<L extends string>(c: Counter<L>, labels: LabelValues<L>): void {
  c.inc(labels, 0);
}

/** Makes the gauge series `labels` exist (adds 0, so a value already there stays). */
export function initGauge<L extends string>(g: Gauge<L>, labels: LabelValues<L>): void {
  g.inc(labels, 0);
}

/** Makes the histogram series `labels` exist with empty buckets, unless it already exists. */
export function initHistogram<L extends string>(h: Histogram<L>, labels: LabelValues<L>): void {
  // prom-client's zero() overwrites: look for the series first (its values are kept in hashMap).
  const series = "hashMap" in h ? h.hashMap : undefined;
  if (!isRecord(series)) return; // an unknown prom-client layout: leave the series to appear on first use
  const want = Object.entries(labels) as Array<[L, string | number]>;
  const same = (have: unknown) =>
    isRecord(have) && Object.keys(have).length === want.length && want.every(([k, v]) => String(have[k]) === String(v));
  const exists = Object.values(series).some((s) => isRecord(s) && same(s.labels ?? {}));
  if (!exists) h.zero(labels);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
