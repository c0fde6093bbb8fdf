// Health probes (controller-runtime's pkg/healthz): /healthz for liveness and /readyz for readiness on
// --health-probe-bind-address, each aggregating named checks in the Kubernetes apiserver's format so
// `kubectl get --raw`-style tooling and humans read them the same way.
import type { IncomingMessage, ServerResponse } from "node:http";
import { log, type Logger } from "./log.ts";
import {
  disabledServer,
  formatBindAddress,
  parseBindAddress,
  requestPath,
  sendText,
  serve,
  type ServerHandle,
} from "./httpserver.ts";

/** Passes by returning; fails by throwing or rejecting, with the error's message as the reason. */
export type Checker = () => void | Promise<void>;

/** healthz.Ping: always healthy; proves the process can serve HTTP. */
export const ping: Checker = () => {};

type ProbeEndpoint = "healthz" | "readyz";

interface HealthChecksOptions {
  logger?: Logger;
  /** A check still pending after this long fails, so a hung dependency cannot hang the probe. */
  checkTimeoutMs?: number;
}

interface CheckStatus {
  name: string;
  ok: boolean;
  excluded?: boolean;
  reason?: string;
}

const ROUTE = /^\/(healthz|readyz)(?:\/([^/]*))?\/?$/;

function oneLine(s: string): string {
  return s.replace(/\s*[\r\n]+\s*/g, " ").trim();
}

function reasonOf(err: unknown): string {
  const text = err instanceof Error ? err.message : typeof err === "string" ? err : String(err);
  return oneLine(text) || "unknown error";
}

/** The named checks behind /healthz and /readyz, and the request handler that evaluates them. */
class HealthChecks {
  readonly #checks: Record<ProbeEndpoint, Map<string, Checker>> = { healthz: new Map(), readyz: new Map() };
  readonly #logger: Logger;
  readonly #timeoutMs: number;

  constructor(opts: HealthChecksOptions = {}) {
    this.#logger = opts.logger ?? log.withName("controller-runtime.healthz");
    this.#timeoutMs = opts.checkTimeoutMs ?? 10_000;
  }

  addHealthzCheck(name: string, check: Checker): void {
    this.#add("healthz", name, check);
  }

  addReadyzCheck(name: string, check: Checker): void {
    this.#add("readyz", name, check);
  }

  #add(endpoint: ProbeEndpoint, name: string, check: Checker): void {
    // The name becomes a URL path segment (/healthz/<name>) and a line of the report.
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) {
      throw new Error(`invalid ${endpoint} check name ${JSON.stringify(name)}: use letters, digits, ".", "_", "-"`);
    }
    const checks = this.#checks[endpoint];
    if (checks.has(name)) throw new Error(`${endpoint} checker ${JSON.stringify(name)} already exists`);
    checks.set(name, check);
  }

  async #run(endpoint: ProbeEndpoint, name: string, check: Checker): Promise<CheckStatus> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${this.#timeoutMs}ms`)), this.#timeoutMs);
      timer.unref();
    });
    try {
      await Promise.race([Promise.resolve().then(check), timeout]);
      return { name, ok: true };
    } catch (err) {
      const reason = reasonOf(err);
      this.#logger.debug(`${endpoint} check failed`, { checker: name, error: reason });
      return { name, ok: false, reason };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Serves /healthz[/<name>] and /readyz[/<name>]; returns false (untouched) for any other path. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const m = ROUTE.exec(requestPath(req));
    if (!m) return false;
    const endpoint = m[1] as ProbeEndpoint;
    if (req.method !== "GET" && req.method !== "HEAD") {
      sendText(res, 405, "method not allowed\n", { allow: "GET, HEAD" });
      return true;
    }
    let name: string;
    try {
      name = decodeURIComponent(m[2] ?? "");
    } catch {
      sendText(res, 400, "bad check name\n");
      return true;
    }
    const query = new URL(req.url ?? "/", "http://probe").searchParams;
    if (name) await this.#serveOne(endpoint, name, res);
    else await this.#serveAll(endpoint, query, res);
    return true;
  }

  #registered(endpoint: ProbeEndpoint): Map<string, Checker> {
    const checks = this.#checks[endpoint];
    // Like controller-runtime, an endpoint without checks still answers, reporting a ping.
    return checks.size > 0 ? checks : new Map([["ping", ping]]);
  }

  async #serveOne(endpoint: ProbeEndpoint, name: string, res: ServerResponse): Promise<void> {
    const check = this.#registered(endpoint).get(name);
    if (!check) return sendText(res, 404, `no ${endpoint} check named ${JSON.stringify(name)}\n`);
    const status = await this.#run(endpoint, name, check);
    if (status.ok) sendText(res, 200, "ok");
    else sendText(res, 500, `internal server error: ${status.reason}\n`);
  }

  async #serveAll(endpoint: ProbeEndpoint, query: URLSearchParams, res: ServerResponse): Promise<void> {
    const excluded = new Set(
      query
        .getAll("exclude")
        .flatMap((e) => e.split(","))
        .map((e) => e.trim()),
    );
    const checks = this.#registered(endpoint);
    const statuses = await Promise.all(
      [...checks].map(([name, check]): CheckStatus | Promise<CheckStatus> => {
        if (excluded.delete(name)) return { name, ok: true, excluded: true };
        return this.#run(endpoint, name, check);
      }),
    );
    for (const name of excluded) {
      this.#logger.debug(`cannot exclude ${endpoint} check, no matches for it`, { checker: name });
    }
    statuses.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const report = statuses
      .map((s) =>
        s.excluded ? `[+]${s.name} excluded: ok\n` : s.ok ? `[+]${s.name} ok\n` : `[-]${s.name} failed: ${s.reason}\n`,
      )
      .join("");
    if (statuses.some((s) => !s.ok)) {
      this.#logger.debug(`${endpoint} check failed`, { statuses: report });
      return sendText(res, 500, `${report}${endpoint} check failed\n`);
    }
    if (!query.has("verbose")) return sendText(res, 200, "ok");
    sendText(res, 200, `${report}${endpoint} check passed\n`);
  }
}

interface ProbeServerOptions extends HealthChecksOptions {
  /** "0" disables, ":8081" every interface, "127.0.0.1:8081" one; port 0 picks a free port. */
  bindAddress: string;
  /** Pre-populated checks; a fresh set otherwise. */
  checks?: HealthChecks;
}

export interface ProbeServer extends ServerHandle {
  readonly checks: HealthChecks;
  addHealthzCheck(name: string, check: Checker): void;
  addReadyzCheck(name: string, check: Checker): void;
}

/** Even when disabled ("0") the handle accepts checks, so callers register them unconditionally. */
export async function startProbeServer(opts: ProbeServerOptions): Promise<ProbeServer> {
  const logger = opts.logger ?? log.withName("controller-runtime.healthz");
  const checks =
    opts.checks ??
    new HealthChecks({ logger, ...(opts.checkTimeoutMs !== undefined ? { checkTimeoutMs: opts.checkTimeoutMs } : {}) });
  const bind = parseBindAddress(opts.bindAddress, "health probe bind address");
  let server: ServerHandle = disabledServer;
  if (bind) {
    server = await serve({
      address: bind,
      logger,
      handler: async (req, res) => {
        if (!(await checks.handle(req, res))) sendText(res, 404, "404 page not found\n");
      },
    });
    logger.info("Starting server", {
      kind: "health probe",
      addr: formatBindAddress({ host: server.address?.address ?? "", port: server.address?.port ?? 0 }),
    });
  } else {
    logger.info("Health probe server is disabled", { bindAddress: opts.bindAddress });
  }
  return {
    address: server.address,
    url: server.url,
    close: () => server.close(),
    checks,
    addHealthzCheck: (name, check) => checks.addHealthzCheck(name, check),
    addReadyzCheck: (name, check) => checks.addReadyzCheck(name, check),
  };
}

interface EventLoopCheckOptions {
  /** Heartbeat period; defaults to min(1s, maxLagMs / 2). */
  intervalMs?: number;
  /** How long a detected stall keeps failing the check: about one kubelet probe period by default. */
  windowMs?: number;
  /** Monotonic milliseconds; injectable for tests. */
  now?: () => number;
}

interface EventLoopChecker extends Checker {
  /** Stops the heartbeat timer. */
  stop(): void;
}

/**
 * A /healthz check that fails when the event loop has been blocked for longer than maxLagMs.
 * The heartbeat's own age alone would miss most stalls: once the loop frees up, the timers phase
 * runs before the probe's I/O callback and refreshes it. So each beat also measures how late it
 * fired, and a late beat keeps the check failing for windowMs afterwards.
 */
export function eventLoopCheck(maxLagMs = 5000, opts: EventLoopCheckOptions = {}): EventLoopChecker {
  if (!(maxLagMs > 0) || !Number.isFinite(maxLagMs)) {
    throw new Error(`eventLoopCheck: maxLagMs must be a positive number; got ${maxLagMs}`);
  }
  const now = opts.now ?? (() => performance.now());
  const intervalMs = opts.intervalMs ?? Math.max(1, Math.min(1000, Math.floor(maxLagMs / 2)));
  const windowMs = opts.windowMs ?? 10_000;
  let lastBeat = now();
  let stalledAt = Number.NEGATIVE_INFINITY;
  let stalledFor = 0;

  const timer = setInterval(() => {
    const t = now();
    const late = t - lastBeat - intervalMs;
    if (late > maxLagMs) {
      stalledAt = t;
      stalledFor = late;
    }
    lastBeat = t;
  }, intervalMs);
  // A probe helper must never be what keeps the process alive.
  timer.unref();

  const check = () => {
    const t = now();
    const age = t - lastBeat;
    if (age > maxLagMs + intervalMs) {
      throw new Error(`event loop blocked: no heartbeat for ${Math.round(age)}ms (limit ${maxLagMs}ms)`);
    }
    if (t - stalledAt < windowMs) {
      throw new Error(
        `event loop was blocked for ${Math.round(stalledFor)}ms, ${Math.round(t - stalledAt)}ms ago (limit ${maxLagMs}ms)`,
      );
    }
  };
  return Object.assign(check, { stop: () => clearInterval(timer) });
}
