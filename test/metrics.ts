// The operator's metrics as a test reads them: one sample of its registry.
import { metricsRegistry } from "../runtime/metrics/registry.ts";

/** The value of the sample of metric `name` whose labels include `labels`; undefined when there is none. */
export async function metricValue(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const metric = metricsRegistry.getSingleMetric(name);
  if (!metric) return undefined;
  const data = await metric.get();
  const match = data.values.find((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want));
  return match?.value;
}
