// prom-client as the built plugin has it (hack/build-plugin.ts): the runtime's clients and informers count their
// requests and lists into Prometheus metrics that the operator serves; `kubectl cron` serves none, and loading
// prom-client (and @opentelemetry/api under it) cost the plugin ~10 MB of RSS and ~50 ms at every start
// (bench/results/2026-11-28-issue72.analysis.md). Every metric here accepts what the runtime does with one and keeps
// nothing. The TypeScript run (cli.ts, the tests) has the real prom-client.

type Labels = Record<string, string | number>;

interface MetricConfig {
  name: string;
  help?: string;
  labelNames?: readonly string[];
  registers?: Registry[];
  collect?: () => unknown;
}

class Metric {
  readonly name: string;
  constructor(config: MetricConfig) {
    this.name = config.name;
    for (const r of config.registers ?? [registry]) r.registerMetric(this);
  }
  labels(..._labels: unknown[]): this {
    return this;
  }
  inc(_labels?: Labels | number, _value?: number): void {}
  dec(_labels?: Labels | number, _value?: number): void {}
  set(_labels?: Labels | number, _value?: number): void {}
  observe(_labels?: Labels | number, _value?: number): void {}
  zero(_labels?: Labels): void {}
  reset(): void {}
  remove(..._labels: unknown[]): void {}
  startTimer(_labels?: Labels): (_labels?: Labels) => number {
    return () => 0;
  }
  async get(): Promise<{ name: string; type: string; help: string; values: never[]; aggregator: string }> {
    return { name: this.name, type: "untyped", help: "", values: [], aggregator: "sum" };
  }
}

export class Counter extends Metric {}
export class Gauge extends Metric {}
export class Histogram extends Metric {}
export class Summary extends Metric {}

export class Registry {
  private readonly byName = new Map<string, Metric>();
  static readonly PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
  readonly contentType = Registry.PROMETHEUS_CONTENT_TYPE;
  registerMetric(m: Metric): void {
    this.byName.set(m.name, m);
  }
  getSingleMetric(name: string): Metric | undefined {
    return this.byName.get(name);
  }
  removeSingleMetric(name: string): void {
    this.byName.delete(name);
  }
  clear(): void {
    this.byName.clear();
  }
  resetMetrics(): void {}
  async metrics(): Promise<string> {
    return "";
  }
  async getMetricsAsJSON(): Promise<unknown[]> {
    return [];
  }
  setDefaultLabels(_labels: Labels): void {}
}

const registry = new Registry();
export const register = registry;
export function collectDefaultMetrics(_o?: unknown): void {}
export default { Counter, Gauge, Histogram, Summary, Registry, register, collectDefaultMetrics };
