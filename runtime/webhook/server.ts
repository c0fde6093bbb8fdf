// The webhook server (controller-runtime's webhook.DefaultServer): HTTPS on :9443 with the serving
// certificate from a directory that cert-manager or a mounted Secret keeps up to date, and one handler per
// path: an AdmissionHandler (admission.k8s.io/v1 AdmissionReview in and out) or a ConversionHandler
// (apiextensions.k8s.io/v1 ConversionReview, for a CRD's conversion webhook).
import { log, type Logger } from "../log.ts";
import type { Checker } from "../probes.ts";
import type { AdmissionHandler } from "./admission.ts";
import { CertWatcher } from "./certwatcher.ts";
import type { ConversionHandler } from "./conversion.ts";
import { serveAdmission, serveConversion, type ReviewHTTPOptions } from "./http.ts";
import { initWebhookSeries, observeRequest } from "./metrics.ts";
import { checkPaths, newRouter, type Route } from "./router.ts";
import { InFlight, TLSServer } from "./tlsserver.ts";

const DEFAULT_CERT_DIR = "/tmp/k8s-webhook-server/serving-certs";
/** The apiserver refuses to send more than 3 MiB of request body to a webhook. */
const DEFAULT_MAX_BODY_BYTES = 3 * 1024 * 1024;

/** What a path serves: admission (a function) or CRD conversion (conversionHandler()). */
export type WebhookHandler = AdmissionHandler | ConversionHandler;

export interface WebhookServerOptions {
  /** Default 9443; 0 picks a free port. */
  port?: number;
  /** "" (default) listens on every interface. */
  host?: string;
  /**
   * Share the port with other servers of the same user that ask for it too (SO_REUSEPORT): the kernel spreads
   * new connections over every listener, and one listener's death leaves the others answering at once, where a
   * lone listener's port refuses connections until the Pod leaves the Service's endpoints. Off by default: a
   * second server on a taken port fails, as usual.
   */
  reusePort?: boolean;
  certDir?: string;
  certName?: string;
  keyName?: string;
  /**
   * Off by default, as in kubebuilder: HTTP/2 exposes the server to stream-multiplexing attacks such as
   * Rapid Reset (CVE-2023-44487) and the apiserver talks HTTP/1.1 just as well.
   */
  enableHTTP2?: boolean;
  /** The largest request body accepted, for every path (default 3 MiB). */
  maxBodyBytes?: number;
  logger?: Logger;
  /**
   * Handlers by exact request path, admission and conversion alike (conventionally "/convert" for a
   * conversion webhook). The map is consulted on every request, so paths added after start are served
   * (controller-runtime's Register after Start).
   */
  handlers: ReadonlyMap<string, WebhookHandler>;
  /**
   * What an admission request to a path no handler serves gets. None (the default, controller-runtime's): Go's
   * 404, which the API server takes as the webhook failing. A manager whose webhook configurations can be newer
   * than its code (an upgrade applies them beside the Deployment, before the new Pods run) answers them instead.
   */
  unservedAdmission?: (path: string) => AdmissionHandler;
  /** How often the certificate files are re-read in case a change was not reported by fs.watch. */
  certPollIntervalMs?: number;
  /** How long close() lets in-flight requests finish before cutting their connections. */
  shutdownGraceMs?: number;
}

export interface WebhookServer {
  /** A base URL reachable from this host (loopback for wildcard binds). */
  readonly url: string;
  readonly port: number;
  /**
   * Re-reads the certificate and key now. Resolves true when a new pair was installed, false when the
   * files are unchanged; rejects (keeping the current pair) when they are missing, invalid or mismatched.
   */
  reloadCertificate(): Promise<boolean>;
  /** controller-runtime's StartedChecker: passes once a TLS handshake with the server succeeds. */
  checker(): Checker;
  /**
   * The start of a graceful shutdown: keeps serving, but closes each connection after its request, so the API
   * server's next call dials the Service again and reaches another replica (the Pod is leaving the endpoints).
   */
  drain(): void;
  /** Stops accepting, lets in-flight requests finish (up to shutdownGraceMs), and closes every connection. */
  close(): Promise<void>;
}

/**
 * Starts serving. The parts: a CertWatcher keeps the key pair current, the router sends each registered
 * path to the admission or conversion HTTP handler (instrumented with controller-runtime's metrics), and a
 * TLSServer owns the listener and its graceful close.
 */
export async function startWebhookServer(opts: WebhookServerOptions): Promise<WebhookServer> {
  const logger = opts.logger ?? log.withName("controller-runtime").withName("webhook");
  const { handlers } = opts;
  checkPaths(handlers.keys());
  initWebhookSeries(handlers.keys());
  const certs = new CertWatcher({
    certDir: opts.certDir ?? DEFAULT_CERT_DIR,
    ...(opts.certName !== undefined ? { certName: opts.certName } : {}),
    ...(opts.keyName !== undefined ? { keyName: opts.keyName } : {}),
    ...(opts.certPollIntervalMs !== undefined ? { pollIntervalMs: opts.certPollIntervalMs } : {}),
    logger,
  });
  const inFlight = new InFlight();
  const route = reviewRoute(inFlight, { maxBodyBytes: opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES, logger });
  const enableHTTP2 = opts.enableHTTP2 ?? false;
  const server = new TLSServer({
    keyPair: certs.current,
    enableHTTP2,
    onRequest: newRouter<WebhookHandler>(handlers, route, logger, opts.unservedAdmission),
    inFlight,
    logger,
  });
  const host = opts.host ?? "";
  await server.listen(host, opts.port ?? 9443, opts.reusePort ?? false);
  logger.info("Serving webhook server", {
    host,
    port: server.port,
    reusePort: opts.reusePort ?? false,
    http2: enableHTTP2,
    certPath: certs.certPath,
    keyPath: certs.keyPath,
    serialNumber: certs.current.serialNumber,
  });
  certs.registerCallback((pair) => server.setKeyPair(pair));
  certs.start();
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      const reloads = certs.stop();
      await server.close(opts.shutdownGraceMs ?? 5_000);
      await reloads;
    })());
  return {
    url: server.url,
    port: server.port,
    reloadCertificate: () => certs.reload(),
    checker: () => server.checker(),
    drain: () => server.drain(),
    close,
  };
}

/**
 * Each request to a registered path: counted for close() and the metrics, then served as admission or
 * conversion, whichever the path's handler does.
 */
function reviewRoute(inFlight: InFlight, o: ReviewHTTPOptions): Route<WebhookHandler> {
  return (path, handler, req, res) => {
    inFlight.track(res);
    const observed = observeRequest(path, res);
    const served =
      typeof handler === "function"
        ? serveAdmission(path, handler, req, res, o)
        : serveConversion(path, handler, req, res, o);
    served.then(observed, () => undefined);
  };
}
