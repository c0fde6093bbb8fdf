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

/**
 * The label sets each histogram was initialised with, keyed by their canonical text. prom-client's zero()
 * overwrites a series, and its public API has no synchronous "does this series exist": a series is zeroed only
 * the first time its labels are initialised, which in this runtime is when its owner (a queue, a controller, a
 * webhook path) is created, before anything observes into it. A second owner with the same labels (a queue
 * created again) finds it initialised and keeps what it holds.
 */
const initialisedHistograms = new WeakMap<Histogram<string>, Set<string>>();

function labelKey(labels: Readonly<Record<string, string | number | undefined>>): string {
  return JSON.stringify(
    Object.entries(labels)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, String(v)])
      .sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0)),
  );
}

/** Makes the histogram series `labels` exist with empty buckets, unless this process initialised it already. */
export function initHistogram<L extends string>(h: Histogram<L>, labels: LabelValues<L>): void {
  let seen = initialisedHistograms.get(h);
  if (!seen) {
    seen = new Set();
    initialisedHistograms.set(h, seen);
  }
  const key = labelKey(labels);
  if (seen.has(key)) return;
  seen.add(key);
  h.zero(labels);
}
