// The admission webhook server (controller-runtime's webhook.DefaultServer): HTTPS on :9443 with the
// serving certificate from a directory that cert-manager or a mounted Secret keeps up to date, one
// AdmissionHandler per path, and admission.k8s.io/v1 AdmissionReview in and out.
import { createPrivateKey, X509Certificate } from "node:crypto";
import { readFileSync, watch, type FSWatcher } from "node:fs";
import type http from "node:http";
import http2 from "node:http2";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { join } from "node:path";
import type { Readable } from "node:stream";
import tls from "node:tls";
import { formatBindAddress } from "../httpserver.ts";
import { log, type Logger } from "../log.ts";
import type { Checker } from "../probes.ts";
import {
  ADMISSION_API_VERSION,
  errored,
  type AdmissionHandler,
  type AdmissionRequest,
  type AdmissionResponse,
  type AdmissionResult,
  type AdmissionReview,
} from "./admission.ts";
import { initCounter, initGauge, initHistogram } from "../metrics/registry.ts";
import { requestInFlight, requestLatency, requestTotal } from "./metrics.ts";

export const DEFAULT_CERT_DIR = "/tmp/k8s-webhook-server/serving-certs";
/** The apiserver refuses to send more than 3 MiB of request body to a webhook. */
export const DEFAULT_MAX_BODY_BYTES = 3 * 1024 * 1024;

export interface WebhookServerOptions {
  /** Default 9443; 0 picks a free port. */
  port?: number;
  /** "" (default) listens on every interface. */
  host?: string;
  certDir?: string;
  certName?: string;
  keyName?: string;
  /**
   * Off by default, as in kubebuilder: HTTP/2 exposes the server to stream-multiplexing attacks such as
   * Rapid Reset (CVE-2023-44487) and the apiserver talks HTTP/1.1 just as well.
   */
  enableHTTP2?: boolean;
  maxBodyBytes?: number;
  logger?: Logger;
  /**
   * Handlers by exact request path. The map is consulted on every request, so paths added after start
   * are served (controller-runtime's Register after Start).
   */
  handlers: ReadonlyMap<string, AdmissionHandler>;
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
  /** Stops accepting, lets in-flight requests finish (up to shutdownGraceMs), and closes every connection. */
  close(): Promise<void>;
}

interface KeyPair {
  cert: Buffer;
  key: Buffer;
  serialNumber: string;
  validTo: string;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Reads and checks the pair; the error names the file at fault, since that is what an operator fixes. */
function loadKeyPair(certPath: string, keyPath: string): KeyPair {
  const read = (path: string, what: string) => {
    try {
      return readFileSync(path);
    } catch (err) {
      throw new Error(`cannot read the webhook serving ${what} ${path}: ${messageOf(err)}`, { cause: err });
    }
  };
  const cert = read(certPath, "certificate");
  const key = read(keyPath, "key");
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (err) {
    throw new Error(`webhook serving certificate ${certPath} is not a PEM certificate: ${messageOf(err)}`, {
      cause: err,
    });
  }
  try {
    if (!x509.checkPrivateKey(createPrivateKey(key))) {
      throw new Error(`webhook serving key ${keyPath} does not belong to the certificate ${certPath}`);
    }
    // Catches what the checks above do not, e.g. a broken intermediate later in the certificate file.
    tls.createSecureContext({ cert, key });
  } catch (err) {
    const msg = messageOf(err);
    throw new Error(msg.includes(keyPath) ? msg : `webhook serving key ${keyPath} is unusable: ${msg}`, { cause: err });
  }
  return { cert, key, serialNumber: x509.serialNumber, validTo: x509.validTo };
}

// ---------------------------------------------------------------------------------------------------
// Request handling

/** The parts of http.IncomingMessage and http2.Http2ServerRequest (compatibility API) used here. */
type Incoming = Readable & {
  readonly method?: string;
  readonly url?: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly httpVersionMajor: number;
};

interface Outgoing {
  readonly headersSent: boolean;
  writeHead(statusCode: number, headers?: http.OutgoingHttpHeaders): unknown;
  end(chunk: string): unknown;
  once(event: "close", listener: () => void): unknown;
}

class HTTPError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Resolves with the body, or undefined when it grew past `limit` (reading stops there). */
function readBody(req: Incoming, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
      fn();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.pause();
        settle(() => resolve(undefined));
      } else {
        chunks.push(chunk);
      }
    };
    const onEnd = () => settle(() => resolve(Buffer.concat(chunks, size)));
    const onError = (err: Error) => settle(() => reject(err));
    const onClose = () => settle(() => reject(new Error("the client closed the request before sending its body")));
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
  });
}

/** Checks the envelope only: the handler owns the meaning of the request. */
function parseReview(body: Buffer): AdmissionRequest {
  if (body.length === 0) throw new HTTPError(400, "request body is empty");
  let v: unknown;
  try {
    v = JSON.parse(body.toString("utf8"));
  } catch (err) {
    throw new HTTPError(400, `cannot decode the AdmissionReview: ${messageOf(err)}`);
  }
  if (!isObject(v)) throw new HTTPError(400, "the request body is not a JSON object");
  if (v.kind !== "AdmissionReview") {
    throw new HTTPError(400, `expected kind "AdmissionReview", got ${JSON.stringify(v.kind ?? null)}`);
  }
  if (v.apiVersion !== ADMISSION_API_VERSION) {
    throw new HTTPError(
      400,
      `unsupported AdmissionReview apiVersion ${JSON.stringify(v.apiVersion ?? null)}: this server accepts ` +
        `${ADMISSION_API_VERSION} only (set admissionReviewVersions: ["v1"] in the webhook configuration)`,
    );
  }
  const req = v.request;
  if (!isObject(req)) throw new HTTPError(400, "the AdmissionReview has no request");
  if (typeof req.uid !== "string" || req.uid === "") throw new HTTPError(400, "the AdmissionReview request has no uid");
  return req as unknown as AdmissionRequest;
}

function isJSONContentType(value: string | undefined): boolean {
  return (value ?? "").split(";")[0]?.trim().toLowerCase() === "application/json";
}

/** A handler may return anything at runtime; only a well-formed answer reaches the apiserver. */
function checkResult(result: unknown): AdmissionResult {
  if (!isObject(result) || typeof result.allowed !== "boolean") {
    throw new Error(`the webhook handler returned no decision (want an object with a boolean "allowed")`);
  }
  if (
    result.warnings !== undefined &&
    !(Array.isArray(result.warnings) && result.warnings.every((w) => typeof w === "string"))
  ) {
    throw new Error("the webhook handler returned warnings that are not a list of strings");
  }
  if (result.patch !== undefined && typeof result.patch !== "string") {
    throw new Error("the webhook handler returned a patch that is not a base64 string");
  }
  return result as unknown as AdmissionResult;
}

function reviewJSON(response: AdmissionResponse): string {
  const review: AdmissionReview = { apiVersion: ADMISSION_API_VERSION, kind: "AdmissionReview", response };
  return JSON.stringify(review);
}

// ---------------------------------------------------------------------------------------------------

export async function startWebhookServer(opts: WebhookServerOptions): Promise<WebhookServer> {
  const logger = opts.logger ?? log.withName("controller-runtime").withName("webhook");
  const host = opts.host ?? "";
  const port = opts.port ?? 9443;
  const certDir = opts.certDir ?? DEFAULT_CERT_DIR;
  const certPath = join(certDir, opts.certName ?? "tls.crt");
  const keyPath = join(certDir, opts.keyName ?? "tls.key");
  const maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const enableHTTP2 = opts.enableHTTP2 ?? false;
  const { handlers } = opts;
  for (const path of handlers.keys()) {
    if (!path.startsWith("/")) throw new Error(`webhook path ${JSON.stringify(path)} must start with "/"`);
  }
  // Series exist from registration, as controller-runtime's do: "no errors yet" reads 0, not "no data".
  for (const path of handlers.keys()) {
    for (const code of ["200", "500"]) initCounter(requestTotal, { webhook: path, code });
    initGauge(requestInFlight, { webhook: path });
    initHistogram(requestLatency, { webhook: path });
  }

  let current = loadKeyPair(certPath, keyPath);

  let inFlight = 0;
  let onIdle: (() => void) | undefined;

  const send = (res: Outgoing, code: number, body: string, headers: http.OutgoingHttpHeaders) => {
    try {
      res.writeHead(code, { "content-length": Buffer.byteLength(body), ...headers });
      res.end(body);
    } catch (err) {
      // The client went away (an HTTP/2 stream reset, a destroyed socket); nobody is left to answer.
      logger.debug("cannot write the webhook response", { error: messageOf(err) });
    }
  };
  const sendJSON = (res: Outgoing, code: number, response: AdmissionResponse, headers: http.OutgoingHttpHeaders = {}) =>
    send(res, code, reviewJSON(response), { "content-type": "application/json", ...headers });

  const serveAdmission = async (
    path: string,
    handler: AdmissionHandler,
    req: Incoming,
    res: Outgoing,
  ): Promise<number | undefined> => {
    const fail = (code: number, message: string, headers: http.OutgoingHttpHeaders = {}) => {
      logger.error("bad webhook request", undefined, { webhook: path, code, reason: message });
      sendJSON(res, code, { uid: "", allowed: false, status: { status: "Failure", code, message } }, headers);
      return code;
    };
    if (req.method !== "POST") return fail(405, `method ${req.method ?? ""} not allowed; use POST`, { allow: "POST" });
    if (!isJSONContentType(req.headers["content-type"])) {
      return fail(400, `contentType=${req.headers["content-type"] ?? ""}, expected application/json`);
    }
    const tooLarge = () => {
      const code = fail(413, `request entity is too large; limit is ${maxBodyBytes} bytes`, closeAfter(req));
      stopReading(req, res);
      return code;
    };
    const declared = Number(req.headers["content-length"] ?? NaN);
    if (declared > maxBodyBytes) return tooLarge();

    let body: Buffer | undefined;
    try {
      body = await readBody(req, maxBodyBytes);
    } catch (err) {
      logger.debug("webhook request aborted", { webhook: path, error: messageOf(err) });
      return undefined; // no response was sent, so there is no code to count
    }
    if (body === undefined) return tooLarge();

    let request: AdmissionRequest;
    try {
      request = parseReview(body);
    } catch (err) {
      if (err instanceof HTTPError) return fail(err.code, err.message);
      throw err;
    }
    const reqLog = logger.withValues({ webhook: path, UID: request.uid });
    if (reqLog.enabled("debug")) {
      reqLog.debug("received request", {
        kind: request.kind,
        resource: request.resource,
        operation: request.operation,
        namespace: request.namespace,
        name: request.name,
      });
    }
    let result: AdmissionResult;
    try {
      result = checkResult(await handler(request));
    } catch (err) {
      reqLog.error("webhook handler failed", err);
      result = errored(500, err);
    }
    const response: AdmissionResponse = { ...result, uid: request.uid };
    if (response.patch !== undefined) response.patchType ??= "JSONPatch";
    if (response.warnings?.length === 0) delete response.warnings;
    sendJSON(res, 200, response);
    if (reqLog.enabled("debug")) {
      reqLog.debug("wrote response", {
        allowed: response.allowed,
        code: response.status?.code,
        reason: response.status?.reason,
        message: response.status?.message,
      });
    }
    return 200;
  };

  const onRequest = (req: Incoming, res: Outgoing) => {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    const handler = handlers.get(path);
    if (!handler) {
      send(res, 404, "404 page not found\n", { "content-type": "text/plain; charset=utf-8" });
      return;
    }
    inFlight++;
    requestInFlight.inc({ webhook: path });
    const endTimer = requestLatency.startTimer({ webhook: path });
    let counted = false;
    res.once("close", () => {
      if (counted) return;
      counted = true;
      requestInFlight.dec({ webhook: path });
      if (--inFlight === 0) onIdle?.();
    });
    serveAdmission(path, handler, req, res)
      .catch((err: unknown) => {
        logger.error("webhook request failed", err, { webhook: path });
        if (!res.headersSent)
          sendJSON(res, 500, { uid: "", allowed: false, status: { code: 500, message: messageOf(err) } });
        return 500;
      })
      .then(
        (code) => {
          endTimer();
          if (code !== undefined) requestTotal.inc({ webhook: path, code: String(code) });
        },
        () => undefined,
      );
  };

  const sockets = new Set<Socket>();
  const tlsOptions = { cert: current.cert, key: current.key, minVersion: "TLSv1.2" as const };
  const server: https.Server | http2.Http2SecureServer = enableHTTP2
    ? http2.createSecureServer({ ...tlsOptions, allowHTTP1: true }, onRequest)
    : // Advertising only http/1.1 makes the handshake fail for clients that insist on h2, as in Go.
      https.createServer({ ...tlsOptions, ALPNProtocols: ["http/1.1"] }, onRequest);
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  });
  // Failed handshakes (scanners, clients that do not trust the CA) are routine; keep them out of the error log.
  server.on("tlsClientError", (err: Error) => logger.debug("TLS handshake failed", { error: err.message }));

  const where = formatBindAddress({ host, port });
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error) =>
      reject(new Error(`webhook server cannot listen on ${JSON.stringify(where)}: ${err.message}`, { cause: err }));
    server.once("error", onError);
    server.listen({ host: host || undefined, port }, () => {
      server.off("error", onError);
      resolve();
    });
  });
  server.on("error", (err) => logger.error("webhook server error", err));

  const address = server.address() as AddressInfo;
  const wildcard = address.address === "::" || address.address === "0.0.0.0";
  // Like httpserver.ts: a wildcard bind is reached over IPv4 loopback, which dual-stack sockets accept
  // and which serving certificates for local testing name.
  const dialHost = wildcard ? "127.0.0.1" : address.address;
  const url = `https://${dialHost.includes(":") ? `[${dialHost}]` : dialHost}:${address.port}`;
  logger.info("Serving webhook server", {
    host,
    port: address.port,
    http2: enableHTTP2,
    certPath,
    keyPath,
    serialNumber: current.serialNumber,
  });

  // --- certificate reloading (controller-runtime's certwatcher)
  let reloading: Promise<boolean> = Promise.resolve(false);
  const reloadCertificate = (): Promise<boolean> => {
    reloading = reloading.then(
      () => reloadNow(),
      () => reloadNow(),
    );
    return reloading;
  };
  const reloadNow = (): boolean => {
    const next = loadKeyPair(certPath, keyPath);
    if (next.cert.equals(current.cert) && next.key.equals(current.key)) return false;
    server.setSecureContext({ ...tlsOptions, cert: next.cert, key: next.key });
    current = next;
    logger.info("Updated the webhook serving certificate", {
      certPath,
      serialNumber: next.serialNumber,
      validTo: next.validTo,
    });
    return true;
  };
  let lastFailure: string | undefined;
  const reloadQuietly = () => {
    reloadCertificate().then(
      () => (lastFailure = undefined),
      (err: unknown) => {
        // Writers replace the two files one after the other, so a mismatched pair is often transient;
        // the next event or poll picks up the completed pair. Repeats of one failure are logged once.
        const msg = messageOf(err);
        if (msg !== lastFailure)
          logger.error("Cannot load the new webhook serving certificate; keeping the current one", err);
        lastFailure = msg;
      },
    );
  };
  let debounce: NodeJS.Timeout | undefined;
  const onDirChange = () => {
    clearTimeout(debounce);
    debounce = setTimeout(reloadQuietly, 100);
    debounce.unref();
  };
  let watcher: FSWatcher | undefined;
  try {
    // The directory rather than the files: Secret volumes replace a "..data" symlink, and editors and
    // cert-manager rename files into place, neither of which a watch on the old file would see.
    watcher = watch(certDir, { persistent: false }, onDirChange);
    watcher.on("error", (err) => {
      logger.error("Watching the webhook certificate directory failed; relying on polling", err, { certDir });
      watcher?.close();
      watcher = undefined;
    });
  } catch (err) {
    logger.error("Cannot watch the webhook certificate directory; relying on polling", err, { certDir });
  }
  // fs.watch misses changes on some filesystems (network, overlay) and after the directory is replaced.
  const poll = setInterval(reloadQuietly, opts.certPollIntervalMs ?? 10_000);
  poll.unref();

  let closing: Promise<void> | undefined;
  let listening = true;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      listening = false;
      clearInterval(poll);
      clearTimeout(debounce);
      watcher?.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Idle keep-alive connections (and HTTP/2 sessions) would hold close() open; requests being served
      // get the grace period to finish first.
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, opts.shutdownGraceMs ?? 5_000);
          timer.unref();
          onIdle = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      for (const s of sockets) s.destroy();
      await closed;
      await reloading.catch(() => undefined);
    })();
    return closing;
  };

  const checker = (): Checker => () =>
    new Promise<void>((resolve, reject) => {
      if (!listening) {
        reject(new Error("webhook server is not running"));
        return;
      }
      // Only the handshake matters: it proves the listener is up and has a usable certificate.
      const socket = tls.connect({ host: dialHost, port: address.port, rejectUnauthorized: false }, () => {
        socket.end();
        resolve();
      });
      socket.setTimeout(10_000, () => socket.destroy(new Error("TLS handshake timed out")));
      socket.on("error", (err) => reject(new Error(`webhook server is not reachable: ${err.message}`)));
    });

  return { url, port: address.port, reloadCertificate, checker, close };
}

/** Headers that end an HTTP/1 connection after this response; HTTP/2 forbids the header. */
function closeAfter(req: Incoming): http.OutgoingHttpHeaders {
  return req.httpVersionMajor === 1 ? { connection: "close" } : {};
}

/** After an early answer (413), refuse the rest of an oversized upload rather than buffering it. */
function stopReading(req: Incoming, res: Outgoing): void {
  req.pause();
  res.once("close", () => {
    // HTTP/1: the connection closes after the response (connection: close). HTTP/2: reset just this stream.
    const stream = (req as { stream?: http2.ServerHttp2Stream }).stream;
    if (stream && !stream.closed) stream.close(http2.constants.NGHTTP2_NO_ERROR);
  });
}
