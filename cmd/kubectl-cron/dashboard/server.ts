// The dashboard's HTTP server: on 127.0.0.1 only, for the user who started it. A request is answered only with the
// random token the command printed (?token=), only under the Host it was printed with (a page of another site that
// rebinds its name to 127.0.0.1 sends its own Host), and an action only from the page's own Origin with a JSON body
// (a cross-site form cannot send one). Every answer forbids framing, sniffing, caching and referrers (the token is in
// the URL), and the page may load nothing but its own script and style.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type Action,
  type ActionResult,
  type Detail,
  type Fleet,
  MAX_MARK_IDS,
  PATHS,
  type Push,
  type RowMarks,
} from "./view.ts";

/** What the server answers with: the page's data and actions (FleetSource and the plugin's commands). */
export interface Handlers {
  page(): { html: string; script: string; style: string };
  /** `whole`: wait for every row (else the first screen may come alone, `partial`). */
  fleet(whole: boolean): Fleet | Promise<Fleet>;
  marks(ids: readonly string[], from: Date, to: Date): RowMarks[] | Promise<RowMarks[]>;
  detail(id: string, slot: string | undefined): Promise<Detail>;
  /** undefined: actions are off (--read-only). */
  action?: (action: Action, id: string) => Promise<ActionResult>;
  subscribe(fn: (p: Push) => void): () => void;
}

const ACTIONS: readonly Action[] = ["run", "suspend", "resume"];
/** The longest window /api/marks draws (a year): the schedule math is bounded by it. */
const MAX_WINDOW_MS = 366 * 86_400_000;
const MAX_BODY_BYTES = 4096;
/** A comment on the event stream this often keeps proxies and the browser from closing it. */
const HEARTBEAT_MS = 15_000;

const SECURITY_HEADERS = {
  "Content-Security-Policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
  "Cross-Origin-Resource-Policy": "same-origin",
  "Cross-Origin-Opener-Policy": "same-origin",
} as const;

/** A request refused or malformed: its status and what is said (naming the parameter and its value). */
class Refusal extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export interface DashboardServer {
  /** The URL to open: with the token. */
  url: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

interface ServeOptions {
  /** 0: a free port. */
  port: number;
  handlers: Handlers;
  /** The token; a new random one by default (tests pass their own). */
  token?: string;
}

/** What every request is checked and answered against. */
interface Served {
  handlers: Handlers;
  token: Buffer;
  /** The Hosts the URL may be given with: known once the port is. */
  hosts: ReadonlySet<string>;
  streams: Set<ServerResponse>;
}

export async function serve(o: ServeOptions): Promise<DashboardServer> {
  const token = o.token ?? randomBytes(32).toString("base64url");
  const served: Served = { handlers: o.handlers, token: Buffer.from(token), hosts: new Set(), streams: new Set() };
  const server = createServer((req, res) => {
    void answer(served, req, res).catch((e: unknown) => answerFailure(res, e));
  });
  const port = await listenOnLoopback(server, o.port);
  served.hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    port,
    token,
    close: () => closeServer(server, served.streams),
  };
}

/** Listens on 127.0.0.1 only; the port it got. */
async function listenOnLoopback(server: Server, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

function closeServer(server: Server, streams: ReadonlySet<ServerResponse>): Promise<void> {
  return new Promise<void>((resolve) => {
    for (const s of streams) s.end();
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** A Refusal's status and words, else 500 (an event stream's headers are sent already: its words alone). */
function answerFailure(res: ServerResponse, e: unknown): void {
  const status = e instanceof Refusal ? e.status : 500;
  const message = e instanceof Error ? e.message : String(e);
  if (!res.headersSent) {
    res.writeHead(status, { ...SECURITY_HEADERS, "Content-Type": "text/plain; charset=utf-8" });
  }
  res.end(`${message}\n`);
}

async function answer(served: Served, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const host = checkHost(served.hosts, req);
  const url = new URL(req.url ?? "/", `http://${host}`);
  checkToken(served.token, url);
  const path = url.pathname;
  if (path === PATHS.action) {
    if (req.method !== "POST") throw new Refusal(405, `refused: ${path} takes POST, not ${req.method}`);
    return act(served.handlers, req, res, host);
  }
  if (req.method !== "GET" && req.method !== "HEAD") {
    throw new Refusal(405, `refused: ${path} takes GET, not ${req.method}`);
  }
  return get(served, path, url.searchParams, req, res);
}

/** The request's Host, if it is one of `hosts`. */
function checkHost(hosts: ReadonlySet<string>, req: IncomingMessage): string {
  // DNS rebinding: a name of another site resolving to 127.0.0.1 still sends that name.
  const host = req.headers.host ?? "";
  if (!hosts.has(host)) throw new Refusal(403, `refused: Host ${JSON.stringify(host)} is not this server's`);
  return host;
}

function checkToken(token: Buffer, url: URL): void {
  const given = Buffer.from(url.searchParams.get("token") ?? "");
  if (given.length !== token.length || !timingSafeEqual(given, token)) {
    throw new Refusal(401, "refused: the token is missing or wrong (use the URL kubectl cron dashboard printed)");
  }
}

async function get(
  served: Served,
  path: string,
  q: URLSearchParams,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const handlers = served.handlers;
  switch (path) {
    case PATHS.page:
      return send(res, 200, "text/html; charset=utf-8", handlers.page().html);
    case PATHS.script:
      return send(res, 200, "text/javascript; charset=utf-8", handlers.page().script);
    case PATHS.style:
      return send(res, 200, "text/css; charset=utf-8", handlers.page().style);
    case PATHS.fleet:
      return json(res, await handlers.fleet(q.get("whole") === "1"));
    case PATHS.marks: {
      const { ids, from, to } = marksQuery(q);
      return json(res, await handlers.marks(ids, from, to));
    }
    case PATHS.detail: {
      const { id, slot } = detailQuery(q);
      return json(res, await handlers.detail(id, slot));
    }
    case PATHS.events:
      return stream(served, req, res);
    default:
      throw new Refusal(404, `not found: ${JSON.stringify(path)}`);
  }
}

function marksQuery(q: URLSearchParams): { ids: string[]; from: Date; to: Date } {
  const from = timeParam(q, "from");
  const to = timeParam(q, "to");
  if (to <= from || to.getTime() - from.getTime() > MAX_WINDOW_MS) {
    throw new Refusal(400, `to must be after from and at most 366 days later; got from=${iso(from)} to=${iso(to)}`);
  }
  const ids = (q.get("ids") ?? "").split(",").filter(Boolean);
  if (ids.length > MAX_MARK_IDS) throw new Refusal(400, `ids: at most ${MAX_MARK_IDS} CronJobs; got ${ids.length}`);
  return { ids, from, to };
}

function detailQuery(q: URLSearchParams): { id: string; slot: string | undefined } {
  const id = q.get("id") ?? "";
  if (!/^[^/]+\/[^/]+$/.test(id)) throw new Refusal(400, `id: want NAMESPACE/NAME; got ${JSON.stringify(id)}`);
  const slot = q.get("slot") ?? undefined;
  if (slot !== undefined) timeParam(q, "slot");
  return { id, slot };
}

async function act(handlers: Handlers, req: IncomingMessage, res: ServerResponse, host: string): Promise<void> {
  checkActionRequest(req, host);
  if (!handlers.action) throw new Refusal(403, "refused: the dashboard was started with --read-only");
  const { action, id } = parseAction(await readBody(req));
  json(res, await handlers.action(action, id));
}

function checkActionRequest(req: IncomingMessage, host: string): void {
  // A page of another site may send a request here, but its Origin says so; a form cannot send JSON.
  const origin = req.headers.origin;
  if (origin !== `http://${host}`) {
    throw new Refusal(403, `refused: an action must come from this page (Origin ${JSON.stringify(origin ?? "")})`);
  }
  const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim();
  if (type !== "application/json")
    throw new Refusal(415, `refused: an action is JSON; got Content-Type ${JSON.stringify(type)}`);
}

function parseAction(body: string): { action: Action; id: string } {
  let parsed: { action?: unknown; id?: unknown };
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    throw new Refusal(400, `the body is not JSON: ${JSON.stringify(body.slice(0, 100))}`);
  }
  const action = parsed?.action;
  if (typeof action !== "string" || !(ACTIONS as readonly string[]).includes(action)) {
    throw new Refusal(400, `action: want one of ${ACTIONS.join(", ")}; got ${JSON.stringify(action)}`);
  }
  const id = parsed.id;
  if (typeof id !== "string" || !/^[^/]+\/[^/]+$/.test(id)) {
    throw new Refusal(400, `id: want NAMESPACE/NAME; got ${JSON.stringify(id)}`);
  }
  return { action: action as Action, id };
}

function stream(served: Served, req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    "Content-Type": "text/event-stream; charset=utf-8",
    Connection: "keep-alive",
  });
  res.write(": connected\n\n");
  served.streams.add(res);
  const unsubscribe = served.handlers.subscribe((p) => res.write(`data: ${JSON.stringify(p)}\n\n`));
  const beat = setInterval(() => res.write(": beat\n\n"), HEARTBEAT_MS);
  req.on("close", () => {
    clearInterval(beat);
    unsubscribe();
    served.streams.delete(res);
  });
}

const iso = (d: Date) => d.toISOString();

function timeParam(q: URLSearchParams, name: string): Date {
  const v = q.get(name);
  const t = v === null ? NaN : Date.parse(v);
  if (v === null || !/^\d{4}-\d{2}-\d{2}T/.test(v) || Number.isNaN(t)) {
    throw new Refusal(400, `${name}: want an RFC 3339 time (2026-11-25T02:00:00Z); got ${JSON.stringify(v ?? "")}`);
  }
  return new Date(t);
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { ...SECURITY_HEADERS, "Content-Type": type });
  res.end(body);
}

function json(res: ServerResponse, value: unknown): void {
  send(res, 200, "application/json; charset=utf-8", JSON.stringify(value));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Refusal(413, `refused: an action's body is at most ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}
