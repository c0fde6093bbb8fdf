// Workqueue metrics under controller-runtime's names and labels, so existing dashboards and alerts
// work unchanged. Collectors are created on first use: a process with only unnamed queues exports none.
// A named queue's series all exist from its creation, at 0, as with controller-runtime's provider.
import { Counter, Gauge, Histogram } from "prom-client";
import { getOrCreate, initCounter, initGauge, initHistogram, metricsRegistry } from "../metrics/registry.ts";
import type { Clock } from "../clock.ts";

type Label = "controller" | "name";
const labelNames: Label[] = ["controller", "name"];

// controller-runtime's ExponentialBuckets(10e-9, 10, 12): 1e-8 s .. 1e3 s; written as decimal
// literals so the bucket labels print exactly.
const buckets = Array.from({ length: 12 }, (_, i) => Number(`1e${i - 8}`));

/** What a queue reports; mirrors client-go's queueMetrics. */
export interface QueueMetrics<K extends string = string> {
  add(key: K): void;
  get(key: K): void;
  done(key: K): void;
  retry(): void;
  /** The queue is shut down and idle; stop reporting in-flight work. */
  close(): void;
}

export const noopMetrics: QueueMetrics<never> = {
  add() {},
  get() {},
  done() {},
  retry() {},
  close() {},
};

// The in-flight gauges are computed at scrape time from the live queues. The set lives on globalThis
// because getOrCreate may hand back a gauge whose collect() was defined by another copy of this module.
const liveKey = Symbol.for("controller-runtime-node.workqueue.liveMetrics");
function live(): Set<PrometheusQueueMetrics<string>> {
  const g = globalThis as { [liveKey]?: Set<PrometheusQueueMetrics<string>> };
  return (g[liveKey] ??= new Set());
}

function collectors() {
  const registers = [metricsRegistry];
  return {
    depth: getOrCreate(
      "workqueue_depth",
      () => new Gauge({ name: "workqueue_depth", help: "Current depth of workqueue", labelNames, registers }),
    ),
    adds: getOrCreate(
      "workqueue_adds_total",
      () =>
        new Counter({
          name: "workqueue_adds_total",
          help: "Total number of adds handled by workqueue",
          labelNames,
          registers,
        }),
    ),
    latency: getOrCreate(
      "workqueue_queue_duration_seconds",
      () =>
        new Histogram({
          name: "workqueue_queue_duration_seconds",
          help: "How long in seconds an item stays in workqueue before being requested",
          labelNames,
          buckets,
          registers,
        }),
    ),
    workDuration: getOrCreate(
      "workqueue_work_duration_seconds",
      () =>
        new Histogram({
          name: "workqueue_work_duration_seconds",
          help: "How long in seconds processing an item from workqueue takes.",
          labelNames,
          buckets,
          registers,
        }),
    ),
    unfinished: getOrCreate(
      "workqueue_unfinished_work_seconds",
      () =>
        new Gauge({
          name: "workqueue_unfinished_work_seconds",
          help:
            "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
            "Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate " +
            "at which this increases.",
          labelNames,
          registers,
          collect() {
            for (const m of live()) m.collectUnfinished();
          },
        }),
    ),
    longest: getOrCreate(
      "workqueue_longest_running_processor_seconds",
      () =>
        new Gauge({
          name: "workqueue_longest_running_processor_seconds",
          help: "How many seconds has the longest running processor for workqueue been running.",
          labelNames,
          registers,
          collect() {
            for (const m of live()) m.collectLongest();
          },
        }),
    ),
    retries: getOrCreate(
      "workqueue_retries_total",
      () =>
        new Counter({
          name: "workqueue_retries_total",
          help: "Total number of retries handled by workqueue",
          labelNames,
          registers,
        }),
    ),
  };
}

export class PrometheusQueueMetrics<K extends string> implements QueueMetrics<K> {
  readonly #clock: Clock;
  readonly #addTimes = new Map<K, number>();
  readonly #processingStarts = new Map<K, number>();
  readonly #depth: Gauge.Internal<Label>;
  readonly #adds: Counter.Internal;
  readonly #latency: Histogram.Internal<Label>;
  readonly #workDuration: Histogram.Internal<Label>;
  readonly #unfinished: Gauge.Internal<Label>;
  readonly #longest: Gauge.Internal<Label>;
  readonly #retries: Counter.Internal;

  constructor(name: string, clock: Clock) {
    this.#clock = clock;
    const c = collectors();
    const labels = { controller: name, name };
    // Present (at 0) before the first add, retry or get: "no data" would hide an idle queue.
    initGauge(c.depth, labels);
    initCounter(c.adds, labels);
    initHistogram(c.latency, labels);
    initHistogram(c.workDuration, labels);
    initGauge(c.unfinished, labels);
    initGauge(c.longest, labels);
    initCounter(c.retries, labels);
    this.#depth = c.depth.labels(labels);
    this.#adds = c.adds.labels(labels);
    this.#latency = c.latency.labels(labels);
    this.#workDuration = c.workDuration.labels(labels);
    this.#unfinished = c.unfinished.labels(labels);
    this.#longest = c.longest.labels(labels);
    this.#retries = c.retries.labels(labels);
    live().add(this as PrometheusQueueMetrics<string>);
  }

  add(key: K): void {
    this.#adds.inc();
    this.#depth.inc();
    if (!this.#addTimes.has(key)) this.#addTimes.set(key, this.#clock.now().getTime());
  }

  get(key: K): void {
    const now = this.#clock.now().getTime();
    this.#depth.dec();
    this.#processingStarts.set(key, now);
    const added = this.#addTimes.get(key);
    if (added !== undefined) {
      this.#latency.observe((now - added) / 1000);
      this.#addTimes.delete(key);
    }
  }

  done(key: K): void {
    const started = this.#processingStarts.get(key);
    if (started === undefined) return;
    this.#workDuration.observe((this.#clock.now().getTime() - started) / 1000);
    this.#processingStarts.delete(key);
  }

  retry(): void {
    this.#retries.inc();
  }

  close(): void {
    live().delete(this as PrometheusQueueMetrics<string>);
    this.#processingStarts.clear();
    this.#unfinished.set(0);
    this.#longest.set(0);
  }

  collectUnfinished(): void {
    const now = this.#clock.now().getTime();
    let total = 0;
    for (const started of this.#processingStarts.values()) total += now - started;
    this.#unfinished.set(total / 1000);
  }

  collectLongest(): void {
    const now = this.#clock.now().getTime();
    let longest = 0;
    for (const started of this.#processingStarts.values()) longest = Math.max(longest, now - started);
    this.#longest.set(longest / 1000);
  }
}
