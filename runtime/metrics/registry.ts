// The one Prometheus registry of the process (controller-runtime's metrics.Registry). Every runtime
// part registers its collectors here; the metrics server serves it.
import { Registry } from "prom-client";

export const metricsRegistry = new Registry();

/** Get-or-create, so modules loaded twice (tests) do not throw "already registered". */
export function getOrCreate<T>(name: string, create: () => T): T {
  const existing = metricsRegistry.getSingleMetric(name);
  return (existing as T | undefined) ?? create();
}
