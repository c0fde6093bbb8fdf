// The small HTTP plumbing shared by the metrics and health-probe servers: controller-runtime's
// bind-address convention, listen/close that report errors instead of crashing, and a handle that
// looks the same whether the server is running or disabled with "0".
import http from "node:http";
import https from "node:https";
import net, { type AddressInfo } from "node:net";
import type { Logger } from "./log.ts";

/** host "" means every interface (Go's ":8080"). */
interface BindAddress {
  readonly host: string;
  readonly port: number;
}

const HOSTNAME = /^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/;

/**
 * Parses a controller-runtime bind address: "0" disables (undefined), ":8080" is every interface,
 * "127.0.0.1:8080" / "[::1]:8080" / "localhost:8080" a specific one; port 0 picks a free port.
 * `what` names the flag in the error, e.g. "--metrics-bind-address".
 */
export function parseBindAddress(value: string, what = "bind address"): BindAddress | undefined {
  if (value === "0") return undefined;
  const bad = (why: string) =>
    new Error(
      `invalid ${what} ${JSON.stringify(value)}: ${why}; want [host]:port such as ":8080" or "127.0.0.1:8080", or "0" to disable`,
    );
  let host: string;
  let portText: string;
  if (value.startsWith("[")) {
    const end = value.indexOf("]");
    if (end < 0 || value[end + 1] !== ":") throw bad("missing port after bracketed host");
    host = value.slice(1, end);
    portText = value.slice(end + 2);
    if (!net.isIPv6(host)) throw bad("bracketed host is not an IPv6 address");
  } else {
    const i = value.lastIndexOf(":");
    if (i < 0) throw bad("missing port");
    host = value.slice(0, i);
    portText = value.slice(i + 1);
    if (host.includes(":")) throw bad("an IPv6 host must be in brackets");
    if (host !== "" && !net.isIPv4(host) && !HOSTNAME.test(host)) throw bad("host is not an IP address or hostname");
  }
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) throw bad("port must be a number from 0 to 65535");
  return { host, port: Number(portText) };
}

export function formatBindAddress(a: BindAddress): string {
  return `${a.host.includes(":") ? `[${a.host}]` : a.host}:${a.port}`;
}

export interface TLSOptions {
  cert: string | Buffer;
  key: string | Buffer;
}

type RequestHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>;

export interface ServerHandle {
  /** Where the server listens; undefined when disabled with "0". */
  readonly address: AddressInfo | undefined;
  /** A base URL reachable from this host (loopback for wildcard binds); undefined when disabled. */
  readonly url: string | undefined;
  /** Stops accepting, drops idle keep-alive sockets, and resolves once the server has closed. */
  close(): Promise<void>;
}

export const disabledServer: ServerHandle = Object.freeze({
  address: undefined,
  url: undefined,
  close: () => Promise.resolve(),
});

interface ServeOptions {
  address: BindAddress;
  handler: RequestHandler;
  logger: Logger;
  tls?: TLSOptions;
  /** How long in-flight requests may finish after close() before their sockets are cut. */
  shutdownGraceMs?: number;
}

export function sendText(res: http.ServerResponse, code: number, body: string, headers: http.OutgoingHttpHeaders = {}) {
  res.writeHead(code, {
    "content-type": "text/plain; charset=utf-8",
    "x-content-type-options": "nosniff",
    ...headers,
  });
  res.end(res.req.method === "HEAD" ? undefined : body);
}

/** The request path without its query string. */
export function requestPath(req: http.IncomingMessage): string {
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  return q < 0 ? url : url.slice(0, q);
}

export async function serve(opts: ServeOptions): Promise<ServerHandle> {
  const { logger } = opts;
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    Promise.resolve()
      .then(() => opts.handler(req, res))
      .catch((err: unknown) => {
        logger.error("HTTP handler failed", err, { path: requestPath(req) });
        if (!res.headersSent) sendText(res, 500, "internal server error\n");
        else res.destroy();
      });
  };
  const server: http.Server | https.Server = opts.tls
    ? https.createServer({ cert: opts.tls.cert, key: opts.tls.key }, onRequest)
    : http.createServer(onRequest);

  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error) =>
      reject(
        new Error(`cannot listen on ${JSON.stringify(formatBindAddress(opts.address))}: ${err.message}`, {
          cause: err,
        }),
      );
    server.once("error", onError);
    server.listen({ host: opts.address.host || undefined, port: opts.address.port }, () => {
      server.off("error", onError);
      resolve();
    });
  });
  // Without a listener a later socket-level error would be an uncaught 'error' event.
  server.on("error", (err) => logger.error("HTTP server error", err));

  const address = server.address() as AddressInfo;
  const wildcard = address.address === "::" || address.address === "0.0.0.0";
  const host = wildcard ? "127.0.0.1" : address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `${opts.tls ? "https" : "http"}://${host}:${address.port}`;

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= new Promise<void>((resolve, reject) => {
      const cutoff = setTimeout(() => server.closeAllConnections(), opts.shutdownGraceMs ?? 5_000);
      cutoff.unref();
      server.close((err) => {
        clearTimeout(cutoff);
        if (err) reject(err);
        else resolve();
      });
      server.closeIdleConnections();
    });
    return closing;
  };
  return { address, url, close };
}
