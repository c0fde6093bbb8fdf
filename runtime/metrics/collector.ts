// A metric whose series are computed at each scrape and kept nowhere (client_golang's Collector, what
// kube-state-metrics is built on). For series that mirror objects in a cache, whose number grows with the
// cluster: prom-client's Gauge and Counter keep every series between scrapes (a label object, a value
// object and a label-hash string built by concatenation each), which for a large cluster is more of the heap
// than the objects themselves (docs/operating.md, "The figures behind the code's rules").
//
// The scrape itself is written out as it is rendered (writeMetrics): prom-client's Registry.metrics() builds
// every sample, every line and then the whole text before the first byte goes out, all of it at once on top
// of everything the controller holds (the figure: docs/operating.md).
//
// Only prom-client's public, typed API is used. A scrape-time metric is a real Gauge or Counter whose get()
// asks `collect` instead of reading stored series. writeMetrics has the registry render every other metric
// (getSingleMetricAsString) and renders a scrape-time metric itself, as it goes, once the registry has shown
// at the scrape that it renders a few probe series the same way (it would not with default labels, which
// the registry does not tell); else the registry renders it too, a few hundred series at a time.
import { AsyncLocalStorage } from "node:async_hooks";
import { Counter, Gauge, type Metric, Registry } from "prom-client";

/** One series of a scrape. */
export interface Sample {
  labels: Readonly<Record<string, string | number>>;
  value: number;
}

type Collect = () => Iterable<Sample>;

interface ScrapeTimeMetricOptions {
  /** The full name, a counter's with its `_total`. */
  name: string;
  help: string;
  type: "gauge" | "counter";
  /** The series now; called once per scrape and iterated once (a generator renders as it goes). */
  collect: Collect;
}

/**
 * A metric computed at each scrape, nothing kept between scrapes. Register it with register(); it renders
 * as a prom-client metric of the same type holding the same series would.
 */
export class ScrapeTimeMetric {
  readonly name: string;
  readonly help: string;
  readonly type: "gauge" | "counter";
  /** What the registry holds: a prom-client metric whose get() returns what `collect` yields. */
  readonly #metric: Metric;

  constructor(o: ScrapeTimeMetricOptions) {
    this.name = o.name;
    this.help = o.help;
    this.type = o.type;
    this.#metric = o.type === "counter" ? new ScrapeTimeCounter(o) : new ScrapeTimeGauge(o);
    scrapeTime.set(this.#metric, o);
  }

  /** Adds it to `registry`, replacing a metric of the same name (a second instance in one process). */
  register(registry: Registry): void {
    if (registry.getSingleMetric(this.name)) registry.removeSingleMetric(this.name);
    registry.registerMetric(this.#metric);
  }

  /** Removes it from `registry` if it is the one registered under its name. */
  unregister(registry: Registry): void {
    if (registry.getSingleMetric(this.name) === this.#metric) registry.removeSingleMetric(this.name);
  }
}

/** What each metric a ScrapeTimeMetric registers is made of (how writeMetrics knows one to write as it goes). */
const scrapeTime = new WeakMap<Metric, ScrapeTimeMetricOptions>();

/** The series one rendering by writeMetrics is to show of `metric`, instead of what its collect yields. */
const part = new AsyncLocalStorage<{ metric: Metric; samples: Sample[] }>();

/** What `metric`'s get() returns: the series writeMetrics has it render, else everything `collect` yields now. */
function valuesOf(metric: Metric, collect: Collect): Sample[] {
  const p = part.getStore();
  return p?.metric === metric ? p.samples : Array.from(collect());
}

// The series map of these Gauges and Counters holds one series, the label-less one prom-client makes at 0,
// and get() replaces it with the series of the moment. inc() or set() on one would change nothing that
// renders: nothing outside this module gets hold of one but through the registry.

class ScrapeTimeGauge extends Gauge {
  readonly #collect: Collect;

  constructor(o: ScrapeTimeMetricOptions) {
    super({ name: o.name, help: o.help, registers: [] });
    this.#collect = o.collect;
  }

  override async get(): ReturnType<Gauge["get"]> {
    const values = valuesOf(this, this.#collect);
    return { ...(await super.get()), values };
  }
}

class ScrapeTimeCounter extends Counter {
  readonly #collect: Collect;

  constructor(o: ScrapeTimeMetricOptions) {
    super({ name: o.name, help: o.help, registers: [] });
    this.#collect = o.collect;
  }

  override async get(): ReturnType<Counter["get"]> {
    const values = valuesOf(this, this.#collect);
    return { ...(await super.get()), values };
  }
}

type Write = (chunk: string) => void | Promise<void>;

/**
 * Writes what `registry.metrics()` returns, metric by metric, a ScrapeTimeMetric piece by piece as its
 * collect yields the series (the /metrics handler; a large scrape never sits in memory whole). An OpenMetrics
 * registry is written as registry.metrics() renders it, in one piece.
 */
export async function writeMetrics(registry: Registry, write: Write): Promise<void> {
  if (registry.contentType !== Registry.PROMETHEUS_CONTENT_TYPE) {
    await write(await registry.metrics());
    return;
  }
  let separator = "";
  // Whether the registry renders a scrape-time metric as render() does; asked at the first one.
  let rendersAsHere: boolean | undefined;
  for (const { name } of registry.getMetricsAsArray()) {
    // Looked up and rendered with no await between: a metric removed while earlier ones were written is left out.
    const metric = registry.getSingleMetric(name);
    if (metric === undefined) continue;
    const o = scrapeTime.get(metric);
    if (!o) {
      await write(separator + (await registry.getSingleMetricAsString(name)));
    } else {
      rendersAsHere ??= await probe(registry, name, metric, o);
      if (rendersAsHere) await writeAsItRenders(o, separator, write);
      else if (!(await writeInParts(registry, name, metric, o.collect, separator, write))) continue;
    }
    separator = "\n\n";
  }
  await write("\n");
}

/** Series whose rendering covers the escaping of label values and the odd sample values. */
const PROBE: Sample[] = [
  { labels: {}, value: 0 },
  { labels: { a: 'quote " backslash \\ newline \n end', b: 1.5 }, value: -0.25 },
  { labels: { a: "" }, value: NaN },
  { labels: {}, value: Infinity },
  { labels: {}, value: -Infinity },
];

/**
 * Whether `registry` renders the scrape-time `metric`, registered under `name` (looked up with no await
 * since), exactly as render() does: true unless the registry has default labels (or prom-client renders
 * otherwise than it did).
 */
async function probe(registry: Registry, name: string, metric: Metric, o: ScrapeTimeMetricOptions): Promise<boolean> {
  const text = await part.run({ metric, samples: PROBE }, () => registry.getSingleMetricAsString(name));
  return text === render(o, PROBE);
}

/** The metric's HELP and TYPE lines and one line per series of `samples`, as prom-client renders them. */
function render(o: ScrapeTimeMetricOptions, samples: Iterable<Sample>): string {
  const name = escapeText(o.name);
  let text = headerLines(name, o);
  for (const s of samples) text += seriesLine(name, s);
  return text;
}

function headerLines(name: string, o: ScrapeTimeMetricOptions): string {
  return `# HELP ${name} ${escapeText(o.help)}\n# TYPE ${name} ${o.type}`;
}

/** "\n" and the series' line; `name` escaped. */
function seriesLine(name: string, { labels, value }: Sample): string {
  let labelText = "";
  for (const [k, v] of Object.entries(labels)) {
    labelText += `${labelText ? "," : ""}${k}="${typeof v === "string" ? escapeText(v).replace(/"/g, '\\"') : v}"`;
  }
  return `\n${name}${labelText ? `{${labelText}}` : ""} ${valueText(value)}`;
}

/** prom-client's escaping of names, HELP text and label values (a label value also escapes `"`). */
function escapeText(s: string): string {
  return s.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

/** prom-client's rendering of a sample value. */
function valueText(v: number): string {
  if (Number.isNaN(v)) return "Nan";
  if (!Number.isFinite(v)) return v < 0 ? "-Inf" : "+Inf";
  return `${v}`;
}

/** Characters per piece written of a metric rendered here: one piece in memory at a time. */
const CHUNK_CHARS = 64 * 1024;

/** Writes the metric as render() would, in pieces of about CHUNK_CHARS as the series come. */
async function writeAsItRenders(o: ScrapeTimeMetricOptions, separator: string, write: Write): Promise<void> {
  const name = escapeText(o.name);
  let chunk = separator + headerLines(name, o);
  for (const s of o.collect()) {
    chunk += seriesLine(name, s);
    if (chunk.length >= CHUNK_CHARS) {
      await write(chunk);
      chunk = "";
    }
  }
  await write(chunk);
}

/** Series per rendering by the registry of a part of a scrape-time metric: some 50 KB of text. */
const PART_SERIES = 512;

/**
 * Writes the scrape-time `metric` (registered under `name`) as the registry renders it, the registry
 * rendering PART_SERIES series at a time; the HELP and TYPE lines that start every rendering are written once.
 * A metric replaced or removed while it is written ends where it was; false if it was before the first part.
 */
async function writeInParts(
  registry: Registry,
  name: string,
  metric: Metric,
  collect: Collect,
  separator: string,
  write: Write,
): Promise<boolean> {
  let samples: Sample[] = [];
  let first = true;
  const renderPart = async (): Promise<boolean> => {
    if (registry.getSingleMetric(name) !== metric) return false;
    const text = await part.run({ metric, samples }, () => registry.getSingleMetricAsString(name));
    samples = [];
    // "# HELP <name> <help>\n# TYPE <name> <type>\n<series>..." (the HELP text's newlines escaped): after
    // the first part, only the "\n<series>..." from the end of the TYPE line on.
    await write(first ? separator + text : text.slice(text.indexOf("\n", text.indexOf("\n") + 1)));
    first = false;
    return true;
  };
  for (const s of collect()) {
    samples.push(s);
    if (samples.length >= PART_SERIES && !(await renderPart())) return !first;
  }
  if (first || samples.length > 0) await renderPart();
  return !first;
}
