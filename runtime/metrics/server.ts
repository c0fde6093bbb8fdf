// The metrics endpoint (controller-runtime's metricsserver): GET /metrics in the Prometheus text
// format on --metrics-bind-address, "0" to disable. TLS and an authn/authz filter (the
// WithAuthenticationAndAuthorization of kubebuilder's secure metrics) plug in through options.
import type { IncomingMessage } from "node:http";
import type { Writable } from "node:stream";
import type { Registry } from "prom-client";
import { log, type Logger } from "../log.ts";
import {
  disabledServer,
  formatBindAddress,
  parseBindAddress,
  requestPath,
  sendText,
  serve,
  type ServerHandle,
  type TLSOptions,
} from "../httpserver.ts";
import { writeMetrics } from "./collector.ts";
import { registerProcessMetrics } from "./process.ts";
import { metricsRegistry } from "./registry.ts";

export { parseBindAddress } from "../httpserver.ts";

export interface FilterResult {
  allowed: boolean;
  /** Response status when not allowed; 403 by default (401 suits a failed authentication). */
  code?: number;
  reason?: string;
}

/** Decides per request whether /metrics may be served, e.g. via TokenReview + SubjectAccessReview. */
export type RequestFilter = (req: IncomingMessage) => FilterResult | Promise<FilterResult>;

export interface MetricsServerOptions {
  /** "0" disables, ":8080" every interface, "127.0.0.1:8080" one; port 0 picks a free port. */
  bindAddress: string;
  registry?: Registry;
  logger?: Logger;
  tls?: TLSOptions;
  filter?: RequestFilter;
  /** Register process/Node metrics on the served registry (default true). */
  processMetrics?: boolean;
}

type MetricsServer = ServerHandle;

const METRICS_PATH = "/metrics";

export async function startMetricsServer(opts: MetricsServerOptions): Promise<MetricsServer> {
  const logger = opts.logger ?? log.withName("controller-runtime.metrics");
  const bind = parseBindAddress(opts.bindAddress, "metrics bind address");
  if (!bind) {
    logger.info("Metrics server is disabled", { bindAddress: opts.bindAddress });
    return disabledServer;
  }
  const registry = opts.registry ?? metricsRegistry;
  if (opts.processMetrics ?? true) registerProcessMetrics(registry);

  const server = await serve({
    address: bind,
    logger,
    ...(opts.tls ? { tls: opts.tls } : {}),
    handler: async (req, res) => {
      if (requestPath(req) !== METRICS_PATH) return sendText(res, 404, "404 page not found\n");
      if (req.method !== "GET" && req.method !== "HEAD") {
        return sendText(res, 405, "method not allowed\n", { allow: "GET, HEAD" });
      }
      if (opts.filter) {
        let verdict: FilterResult;
        try {
          verdict = await opts.filter(req);
        } catch (err) {
          logger.error("metrics request filter failed", err);
          return sendText(res, 500, "internal server error\n");
        }
        if (!verdict.allowed) {
          const code = verdict.code ?? 403;
          return sendText(res, code, `${verdict.reason ?? (code === 401 ? "Unauthorized" : "Forbidden")}\n`);
        }
      }
      res.writeHead(200, { "content-type": registry.contentType });
      if (req.method === "HEAD") return void res.end();
      // Written as rendered, with the socket's backpressure: a scrape of tens of thousands of series is
      // never in memory whole (runtime/metrics/collector.ts).
      try {
        await writeMetrics(registry, (chunk) => (res.write(chunk) ? undefined : drained(res)));
        res.end();
      } catch (err) {
        logger.debug("metrics response not completed", { error: err instanceof Error ? err.message : String(err) });
        res.destroy();
      }
    },
  });
  logger.info("Serving metrics server", {
    bindAddress: opts.bindAddress,
    address: formatBindAddress({ host: server.address?.address ?? "", port: server.address?.port ?? 0 }),
    secure: opts.tls !== undefined,
  });
  return server;
}

/** Resolves when `res` can take more, rejects if the scraper goes away first. */
function drained(res: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    const onDrain = () => {
      res.off("close", onClose);
      resolve();
    };
    const onClose = () => {
      res.off("drain", onDrain);
      reject(new Error("the scraper closed the connection"));
    };
    res.once("drain", onDrain);
    res.once("close", onClose);
  });
}
