// A metric whose series are computed at each scrape and kept nowhere (client_golang's Collector, what
// kube-state-metrics is built on). For series that mirror objects in a cache, whose number grows with the
// cluster: prom-client's Gauge and Counter keep every series between scrapes (a label object, a value
// object and a label-hash string built by concatenation each), which at 20,000 objects with a dozen
// series each was ~80 MB of the heap: more than the objects themselves.
//
// The scrape itself is written out as it is rendered (writeMetrics): prom-client's Registry.metrics() builds
// every sample, every line and then the whole text before the first byte goes out, ~70 MB at once at 20,000
// CronJobs (a heap snapshot of the scrape), on top of everything the controller holds.
import { type Metric, Registry } from "prom-client";

/** One series of a scrape. */
export interface Sample {
  labels: Readonly<Record<string, string | number>>;
  value: number;
}

interface ScrapeTimeMetricOptions {
  /** The full name, a counter's with its `_total`. */
  name: string;
  help: string;
  type: "gauge" | "counter";
  /** The series now; called once per scrape and iterated once (a generator renders as it goes). */
  collect: () => Iterable<Sample>;
}

/**
 * What prom-client's Registry reads of a metric (name, help, type, get, reset), nothing kept between scrapes.
 * Register it with register(); it renders like a prom-client metric of the same type.
 */
export class ScrapeTimeMetric {
  readonly name: string;
  readonly help: string;
  readonly type: "gauge" | "counter";
  readonly aggregator = "sum";
  readonly #collect: () => Iterable<Sample>;

  constructor(o: ScrapeTimeMetricOptions) {
    this.name = o.name;
    this.help = o.help;
    this.type = o.type;
    this.#collect = o.collect;
  }

  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: Array.from(this.#collect()),
    });
  }

  /**
   * Renders the metric as Registry.metrics() does (HELP, TYPE, one line per series), handing `write` pieces
   * of about 64 KB as the series come: one piece in memory at a time, not the whole scrape.
   */
  async writeText(write: (chunk: string) => void | Promise<void>): Promise<void> {
    const name = escapeText(this.name);
    let chunk = `# HELP ${name} ${escapeText(this.help)}\n# TYPE ${name} ${this.type}`;
    for (const { labels, value } of this.#collect()) {
      let labelText = "";
      for (const [k, v] of Object.entries(labels)) {
        labelText += `${labelText ? "," : ""}${k}="${typeof v === "string" ? escapeText(v).replace(/"/g, '\\"') : v}"`;
      }
      chunk += `\n${this.name}${labelText ? `{${labelText}}` : ""} ${valueText(value)}`;
      if (chunk.length >= CHUNK_CHARS) {
        await write(chunk);
        chunk = "";
      }
    }
    await write(chunk);
  }

  /** Registry.resetMetrics(): nothing is kept to reset. */
  reset(): void {}

  /** Adds it to `registry`, replacing a metric of the same name (a second instance in one process). */
  register(registry: Registry): void {
    if (registry.getSingleMetric(this.name)) registry.removeSingleMetric(this.name);
    // prom-client types registerMetric for its own classes; the Registry reads only what this class has.
    registry.registerMetric(this as unknown as Metric);
  }

  /** Removes it from `registry` if it is the one registered under its name. */
  unregister(registry: Registry): void {
    if ((registry.getSingleMetric(this.name) as unknown) === this) registry.removeSingleMetric(this.name);
  }
}

const CHUNK_CHARS = 64 * 1024;

/** prom-client's escaping of HELP text and label values (a label value also escapes `"`). */
function escapeText(s: string): string {
  return s.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

/** prom-client's rendering of a sample value. */
function valueText(v: number): string {
  if (Number.isNaN(v)) return "Nan";
  if (!Number.isFinite(v)) return v < 0 ? "-Inf" : "+Inf";
  return `${v}`;
}

interface RendersOne {
  getMetricsAsString(metric: unknown): Promise<string>;
}

/**
 * Writes what `registry.metrics()` returns, metric by metric, a ScrapeTimeMetric piece by piece as it renders
 * (the /metrics handler; a large scrape never sits in memory whole). A registry that renders differently
 * (OpenMetrics, default labels) is written as registry.metrics() renders it.
 */
export async function writeMetrics(registry: Registry, write: (chunk: string) => void | Promise<void>): Promise<void> {
  const defaults = (registry as unknown as { _defaultLabels?: object })._defaultLabels ?? {};
  if (registry.contentType !== Registry.PROMETHEUS_CONTENT_TYPE || Object.keys(defaults).length > 0) {
    await write(await registry.metrics());
    return;
  }
  let first = true;
  for (const m of registry.getMetricsAsArray() as unknown[]) {
    if (!first) await write("\n\n");
    first = false;
    if (m instanceof ScrapeTimeMetric) await m.writeText(write);
    // Registry.getMetricsAsString renders one metric; prom-client's types leave it out.
    else await write(await (registry as unknown as RendersOne).getMetricsAsString(m));
  }
  await write("\n");
}
