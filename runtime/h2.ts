// HTTP/2 to the API server, as client-go talks to it: one TLS connection, every request a stream on it
// (compressed headers, no connection per concurrent request). Protocol choice is TLS's: the handshake offers
// h2 and http/1.1 (ALPN) and a server that picks http/1.1 is spoken to over keep-alive HTTP/1.1 instead.
//
// Health: a connection that stops answering (a silently dropped TCP flow, a frozen server) would hang every
// stream on it, watches included. As client-go's transport does (ReadIdleTimeout 30 s, PingTimeout 15 s), a
// connection is pinged every 30 s and closed when a ping goes unanswered for 15 s; its streams fail, watches
// restart on the next connection. A GOAWAY (the server shutting down or rebalancing) lets streams in flight
// finish while new ones go to a new connection.
import { connect as http2Connect, type ClientHttp2Session, type ClientHttp2Stream, constants } from "node:http2";
import type { Readable } from "node:stream";
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from "node:tls";

const PING_INTERVAL_MS = 30_000;
const PING_TIMEOUT_MS = 15_000;

/** A response whose body is read as a stream (readBody, watchEvents). */
export interface StreamedResponse {
  statusCode: number;
  body: Readable;
}

export interface H2RequestOptions {
  method: string;
  /** Path and query. */
  path: string;
  headers: Record<string, string>;
  payload?: string;
  signal?: AbortSignal;
  /** No data on the stream for this long fails it (http.ClientRequest.setTimeout's meaning). */
  timeoutMs?: number;
  onTimeout: () => Error;
}

/** A request that never reached the server (a closing connection): safe to send again, writes too. */
export class NotSentError extends Error {
  constructor(cause: unknown) {
    super(`not sent: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = "NotSentError";
  }
}

export type Negotiated = { protocol: "h2"; session: ClientHttp2Session } | { protocol: "http/1.1" };

/**
 * Opens a TLS connection offering h2 and http/1.1. With h2 the session runs on it; with http/1.1 the
 * socket is closed again and the caller uses its HTTP/1.1 agent from then on.
 */
export function negotiate(origin: URL, tls: ConnectionOptions): Promise<Negotiated> {
  return new Promise((resolve, reject) => {
    const socket: TLSSocket = tlsConnect({
      ...tls,
      host: origin.hostname.replace(/^\[|\]$/g, ""),
      port: Number(origin.port || 443),
      servername: tls.servername ?? (isIP(origin.hostname) ? undefined : origin.hostname),
      ALPNProtocols: ["h2", "http/1.1"],
    });
    socket.once("error", reject);
    socket.once("secureConnect", () => {
      socket.off("error", reject);
      if (socket.alpnProtocol !== "h2") {
        socket.destroy();
        resolve({ protocol: "http/1.1" });
        return;
      }
      const session = http2Connect(origin, { createConnection: () => socket });
      resolve({ protocol: "h2", session });
    });
  });
}

function isIP(host: string): boolean {
  return /^[\d.]+$/.test(host) || host.includes(":") || host.startsWith("[");
}

/** One HTTP/2 connection at a time to an origin, re-opened when it closes, goes away or stops answering. */
export class H2Pool {
  private current: ClientHttp2Session | undefined;
  private opening: Promise<ClientHttp2Session | undefined> | undefined;
  private closed = false;
  private readonly origin: URL;
  private readonly tls: () => ConnectionOptions;
  private readonly onHTTP1: () => void;

  /** `onHTTP1`: called when the server turns out to speak only HTTP/1.1 (the caller switches for good). */
  constructor(origin: URL, tls: () => ConnectionOptions, onHTTP1: () => void) {
    this.origin = origin;
    this.tls = tls;
    this.onHTTP1 = onHTTP1;
  }

  /** The live session, opening one if needed; undefined if the server chose HTTP/1.1. */
  session(): Promise<ClientHttp2Session | undefined> {
    const s = this.current;
    if (s && !s.closed && !s.destroyed) return Promise.resolve(s);
    this.opening ??= this.open().finally(() => (this.opening = undefined));
    return this.opening;
  }

  private async open(): Promise<ClientHttp2Session | undefined> {
    if (this.closed) throw new Error("client closed");
    const n = await negotiate(this.origin, this.tls());
    if (n.protocol !== "h2") {
      this.onHTTP1();
      return undefined;
    }
    const session = n.session;
    this.current = session;
    const forget = () => {
      if (this.current === session) this.current = undefined;
      clearInterval(pinger);
    };
    // New streams go elsewhere at once; streams in flight finish (or fail) on their own.
    session.once("goaway", forget);
    session.once("close", forget);
    session.on("error", () => {
      forget();
      session.destroy();
    });
    const pinger = setInterval(() => {
      let answered = false;
      const deadline = setTimeout(() => {
        if (!answered) session.destroy(new Error(`HTTP/2 ping unanswered for ${PING_TIMEOUT_MS} ms`));
      }, PING_TIMEOUT_MS);
      deadline.unref();
      try {
        session.ping((err) => {
          answered = true;
          clearTimeout(deadline);
          if (err && !session.destroyed) session.destroy(err);
        });
      } catch {
        clearTimeout(deadline);
      }
    }, PING_INTERVAL_MS);
    pinger.unref();
    // An idle connection does not keep the process alive (a CLI exits when done); streams in flight do
    // (request refs it). HTTP/1.1 keep-alive agents treat their idle sockets the same way.
    session.unref();
    return session;
  }

  /** Streams open per session: the session is ref'ed while there is one. */
  private readonly streams = new WeakMap<ClientHttp2Session, number>();

  /** Sends one request on `session` (from session()). */
  request(session: ClientHttp2Session, o: H2RequestOptions): Promise<StreamedResponse> {
    return new Promise((resolve, reject) => {
      let stream: ClientHttp2Stream;
      try {
        stream = session.request(
          {
            [constants.HTTP2_HEADER_METHOD]: o.method,
            [constants.HTTP2_HEADER_PATH]: o.path,
            ...o.headers,
          },
          { endStream: o.payload === undefined, ...(o.signal ? { signal: o.signal } : {}) },
        );
      } catch (err) {
        // The session closed or went away between session() and here: nothing was sent.
        reject(new NotSentError(err));
        return;
      }
      const open = this.streams.get(session) ?? 0;
      if (open === 0) session.ref();
      this.streams.set(session, open + 1);
      if (o.timeoutMs !== undefined) {
        stream.setTimeout(o.timeoutMs, () => stream.destroy(o.onTimeout()));
      }
      stream.once("response", (headers) => {
        resolve({ statusCode: Number(headers[constants.HTTP2_HEADER_STATUS] ?? 0), body: stream });
      });
      stream.once("error", (err) =>
        // REFUSED_STREAM: the server did not process it (a GOAWAY raced it), so it may go again.
        reject(stream.rstCode === constants.NGHTTP2_REFUSED_STREAM ? new NotSentError(err) : err),
      );
      stream.once("close", () => {
        const left = (this.streams.get(session) ?? 1) - 1;
        this.streams.set(session, left);
        if (left === 0 && !session.destroyed) session.unref();
      });
      if (o.payload !== undefined) stream.end(o.payload);
    });
  }

  close(): void {
    this.closed = true;
    this.current?.close();
    this.current = undefined;
  }
}
