// Webhook metrics under controller-runtime's names (pkg/webhook/internal/metrics), so dashboards and alerts
// written for Go operators work unchanged. The "webhook" label is the registered path, never a
// client-chosen one: unknown paths are not counted, which keeps the label set bounded.
import { Counter, Gauge, Histogram } from "prom-client";
import { getOrCreate, initCounter, initGauge, initHistogram, metricsRegistry } from "../metrics/registry.ts";

const registers = [metricsRegistry];

const requestLatency = getOrCreate(
  "controller_runtime_webhook_latency_seconds",
  () =>
    // prom-client's default buckets are Prometheus' DefBuckets, which controller-runtime uses.
    new Histogram({
      name: "controller_runtime_webhook_latency_seconds",
      help: "Histogram of the latency of processing admission requests",
      labelNames: ["webhook"],
      registers,
    }),
) as Histogram<"webhook">;

const requestTotal = getOrCreate(
  "controller_runtime_webhook_requests_total",
  () =>
    new Counter({
      name: "controller_runtime_webhook_requests_total",
      help: "Total number of admission requests by HTTP status code.",
      labelNames: ["webhook", "code"],
      registers,
    }),
) as Counter<"webhook" | "code">;

const requestInFlight = getOrCreate(
  "controller_runtime_webhook_requests_in_flight",
  () =>
    new Gauge({
      name: "controller_runtime_webhook_requests_in_flight",
      help: "Current number of admission requests being served.",
      labelNames: ["webhook"],
      registers,
    }),
) as Gauge<"webhook">;

/** Series exist from registration, as controller-runtime's do: "no errors yet" reads 0, not "no data". */
export function initWebhookSeries(paths: Iterable<string>): void {
  for (const path of paths) {
    for (const code of ["200", "500"]) initCounter(requestTotal, { webhook: path, code });
    initGauge(requestInFlight, { webhook: path });
    initHistogram(requestLatency, { webhook: path });
  }
}

/**
 * Counts one request to a registered path as in flight until its response closes; the returned function
 * records its latency and status code (none when nothing was answered).
 */
export function observeRequest(
  path: string,
  res: { once(event: "close", listener: () => void): unknown },
): (code: number | undefined) => void {
  requestInFlight.inc({ webhook: path });
  const endTimer = requestLatency.startTimer({ webhook: path });
  res.once("close", () => requestInFlight.dec({ webhook: path }));
  return (code) => {
    endTimer();
    if (code !== undefined) requestTotal.inc({ webhook: path, code: String(code) });
  };
}
