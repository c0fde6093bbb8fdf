// A metric whose series are computed at each scrape and kept nowhere (client_golang's Collector, what
// kube-state-metrics is built on). For series that mirror objects in a cache, whose number grows with the
// cluster: prom-client's Gauge and Counter keep every series between scrapes (a label object, a value
// object and a label-hash string built by concatenation each), which at 20,000 objects with a dozen
// series each was ~80 MB of the heap: more than the objects themselves.
import type { Metric, Registry } from "prom-client";

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
  /** The series now; called once per scrape. */
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
