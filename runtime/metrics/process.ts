// Process and Node runtime metrics (process_cpu_seconds_total, process_resident_memory_bytes,
// nodejs_eventloop_lag_seconds, nodejs_heap_*, ...), the counterpart of the process and Go collectors
// that controller-runtime's registry carries.
import { collectDefaultMetrics, type Registry } from "prom-client";
import { metricsRegistry } from "./registry.ts";

const registered = new WeakSet<Registry>();

/** Idempotent: prom-client throws "already registered" on a second collectDefaultMetrics. */
export function registerProcessMetrics(registry: Registry = metricsRegistry): void {
  if (registered.has(registry)) return;
  // A registry shared across module instances (tests loading this file twice) may already have them.
  if (!registry.getSingleMetric("process_cpu_seconds_total")) collectDefaultMetrics({ register: registry });
  registered.add(registry);
}
