// The webhook server's HTTPS listener: TLS 1.2+, HTTP/1.1 unless HTTP/2 is asked for, a key pair that can
// be swapped while serving, a readiness check that proves a handshake works, and a graceful close that
// lets requests being served finish before cutting every connection.
import http2 from "node:http2";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import tls from "node:tls";
import { formatBindAddress } from "../httpserver.ts";
import type { Logger } from "../log.ts";
import type { Checker } from "../probes.ts";
import type { Incoming, Outgoing } from "./http.ts";

/** How long an idle keep-alive connection stays open (see the constructor). */
const KEEP_ALIVE_TIMEOUT_MS = 120_000;

/** Requests being served, so close() can give them time to finish. */
export class InFlight {
  private count = 0;
  private onIdle: (() => void) | undefined;

  get size(): number {
    return this.count;
  }

  /** Counts a request until its response closes. */
  track(res: { once(event: "close", listener: () => void): unknown }): void {
    this.count++;
    res.once("close", () => {
      if (--this.count === 0) this.onIdle?.();
    });
  }

  /** Resolves when no request is left, or after `timeoutMs`, whichever comes first. */
  idle(timeoutMs: number): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      timer.unref();
      this.onIdle = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

interface TLSServerOptions {
  keyPair: { cert: Buffer; key: Buffer };
  enableHTTP2: boolean;
  onRequest: (req: Incoming, res: Outgoing) => void;
  /** The requests close() waits for. */
  inFlight: InFlight;
  logger: Logger;
}

export class TLSServer {
  private readonly server: https.Server | http2.Http2SecureServer;
  private readonly sockets = new Set<Socket>();
  private readonly inFlight: InFlight;
  private readonly logger: Logger;
  private address: AddressInfo | undefined;
  private listening = false;
  private draining = false;
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  private closing: Promise<void> | undefined;

  constructor(o: TLSServerOptions) {
    this.inFlight = o.inFlight;
    this.logger = o.logger;
    const tlsOptions = { ...o.keyPair, minVersion: "TLSv1.2" as const };
    const onRequest = (req: Incoming, res: Outgoing) => {
      // Draining: the client is told not to reuse the connection, so its next request dials the Service again
      // and reaches a replica that is staying (HTTP/2 sessions get a GOAWAY instead).
      if (this.draining && req.httpVersionMajor === 1) res.setHeader?.("Connection", "close");
      o.onRequest(req, res);
    };
    this.server = o.enableHTTP2
      ? http2.createSecureServer({ ...tlsOptions, allowHTTP1: true }, onRequest)
      : // Advertising only http/1.1 makes the handshake fail for clients that insist on h2, as in Go.
        https.createServer({ ...tlsOptions, ALPNProtocols: ["http/1.1"] }, onRequest);
    if (this.server instanceof https.Server) {
      // Longer than a Go client keeps an idle connection (http.Transport's IdleConnTimeout, 90 s): the client
      // closes it first. With Node's 5 s, the server closed idle connections the API server was about to reuse,
      // and a POST on one is not retried: the admission or conversion call failed with EOF.
      this.server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    }
    this.server.on("connection", (s: Socket) => {
      this.sockets.add(s);
      s.once("close", () => this.sockets.delete(s));
    });
    this.server.on("session", (session: http2.ServerHttp2Session) => {
      this.sessions.add(session);
      session.once("close", () => this.sessions.delete(session));
      if (this.draining) session.close();
    });
    // Failed handshakes (scanners, clients that do not trust the CA) are routine; keep them out of the error log.
    this.server.on("tlsClientError", (err: Error) => this.logger.debug("TLS handshake failed", { error: err.message }));
  }

  /** host "" listens on every interface; port 0 picks a free port; reusePort shares it (SO_REUSEPORT). */
  async listen(host: string, port: number, reusePort = false): Promise<void> {
    const where = formatBindAddress({ host, port });
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error) =>
        reject(new Error(`webhook server cannot listen on ${JSON.stringify(where)}: ${err.message}`, { cause: err }));
      this.server.once("error", onError);
      this.server.listen({ host: host || undefined, port, ...(reusePort ? { reusePort } : {}) }, () => {
        this.server.off("error", onError);
        resolve();
      });
    });
    this.server.on("error", (err) => this.logger.error("webhook server error", err));
    this.address = this.server.address() as AddressInfo;
    this.listening = true;
  }

  get port(): number {
    return this.addressInfo().port;
  }

  /**
   * Where this host reaches the server. Like httpserver.ts, a wildcard bind is reached over IPv4
   * loopback, which dual-stack sockets accept and which serving certificates for local testing name.
   */
  get dialHost(): string {
    const { address } = this.addressInfo();
    return address === "::" || address === "0.0.0.0" ? "127.0.0.1" : address;
  }

  get url(): string {
    const host = this.dialHost;
    return `https://${host.includes(":") ? `[${host}]` : host}:${this.port}`;
  }

  /** New connections get this pair; established ones keep the one they shook hands with. */
  setKeyPair(pair: { cert: Buffer; key: Buffer }): void {
    this.server.setSecureContext({ cert: pair.cert, key: pair.key, minVersion: "TLSv1.2" });
  }

  /** controller-runtime's StartedChecker: passes once a TLS handshake with the server succeeds. */
  checker(): Checker {
    return () =>
      new Promise<void>((resolve, reject) => {
        if (!this.listening) {
          reject(new Error("webhook server is not running"));
          return;
        }
        // Only the handshake matters: it proves the listener is up and has a usable certificate.
        const socket = tls.connect({ host: this.dialHost, port: this.port, rejectUnauthorized: false }, () => {
          socket.end();
          resolve();
        });
        socket.setTimeout(10_000, () => socket.destroy(new Error("TLS handshake timed out")));
        socket.on("error", (err) => reject(new Error(`webhook server is not reachable: ${err.message}`)));
      });
  }

  /**
   * Keeps serving, but ends each connection after its current request (HTTP/2: a GOAWAY to every session), so
   * clients move to other replicas while this one is still an endpoint: the start of a graceful shutdown.
   */
  drain(): void {
    if (this.draining) return;
    this.draining = true;
    for (const session of this.sessions) session.close();
  }

  /** Stops accepting, lets in-flight requests finish (up to graceMs), and closes every connection. */
  close(graceMs: number): Promise<void> {
    this.closing ??= (async () => {
      this.listening = false;
      const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
      // Idle keep-alive connections (and HTTP/2 sessions) would hold close() open; requests being served
      // get the grace period to finish first.
      await this.inFlight.idle(graceMs);
      for (const s of this.sockets) s.destroy();
      await closed;
    })();
    return this.closing;
  }

  private addressInfo(): AddressInfo {
    if (!this.address) throw new Error("webhook server is not listening yet");
    return this.address;
  }
}
