// A small REST client for the Kubernetes API: typed errors, optimistic concurrency, every patch type,
// status subresource writes and streaming watches, over one keep-alive HTTPS agent. It speaks plain
// JSON objects (no model classes) so cached objects and wire objects have one shape.
import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from "node:https";
import { Counter, Histogram } from "prom-client";
import { APIError } from "./errors.ts";
import { collectionPath, type KubeObject, objectPath, type ResourceKind } from "./kinds.ts";
import type { RESTConfig } from "./kubeconfig.ts";
import { getOrCreate, metricsRegistry } from "./metrics/registry.ts";
import { headerValues, parseWarningHeaders } from "./warnings.ts";

const requestsTotal = getOrCreate(
  "rest_client_requests_total",
  () =>
    new Counter({
      name: "rest_client_requests_total",
      help: "Number of HTTP requests, partitioned by status code, method, and host.",
      labelNames: ["code", "method", "host"],
      registers: [metricsRegistry],
    }),
);
const requestLatency = getOrCreate(
  "rest_client_request_duration_seconds",
  () =>
    new Histogram({
      name: "rest_client_request_duration_seconds",
      help: "Request latency in seconds. Broken down by verb and host.",
      labelNames: ["verb", "host"],
      buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60],
      registers: [metricsRegistry],
    }),
);

type PatchType = "merge" | "json" | "strategic" | "apply";
const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
  strategic: "application/strategic-merge-patch+json",
  apply: "application/apply-patch+yaml",
};

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  /** How resourceVersion applies (metav1.ResourceVersionMatch): Exact lists the collection as it was then. */
  resourceVersionMatch?: "Exact" | "NotOlderThan";
}

export interface ListResult<T> {
  items: T[];
  metadata: { resourceVersion?: string; continue?: string };
}

interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  timeoutSeconds?: number;
  signal?: AbortSignal;
}

interface WatchEvent<T> {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: T;
}

/** Called with each API warning of a request (runtime/warnings.ts). */
type WarningHandler = (warning: string) => void;

export interface WriteOptions {
  fieldManager?: string;
  dryRun?: boolean;
  /**
   * How the API server treats fields its schema does not have (1.25+; older servers ignore it): Strict
   * refuses the write (400), Warn (the server's default) drops them with a warning, Ignore drops them.
   */
  fieldValidation?: "Strict" | "Warn" | "Ignore";
  /** This request's API warnings (the client's own handler sees them too). */
  onWarning?: WarningHandler;
  /** Aborts the request (it then rejects with an APIError). */
  signal?: AbortSignal;
}

export interface DeleteOptions {
  propagationPolicy?: "Background" | "Foreground" | "Orphan";
  /** Only delete if the object still has this UID / resourceVersion (metav1.Preconditions). */
  preconditions?: { uid?: string; resourceVersion?: string };
  gracePeriodSeconds?: number;
}

interface ClientOptions {
  userAgent?: string;
  /** Default field manager for writes. */
  fieldManager?: string;
  /** Per-request timeout for non-watch requests (default 30 s; 0: none, as Node's socket timeout reads it). */
  timeoutMs?: number;
  /** Upper bound of concurrent connections (default 64). */
  maxSockets?: number;
  /** Every API warning the server sends, with the request it came with (default: none; the manager logs them). */
  onWarning?: (warning: string, request: string) => void;
}

interface Transport {
  base: URL;
  agent: HttpsAgent | HttpAgent;
  headers: Record<string, string | string[]>;
  fetchedAt: number;
}

/** The user agent and field manager of a client whose user names neither. */
const DEFAULT_USER_AGENT = "controller-runtime-node";

/** Header re-read interval: exec/OIDC/in-cluster tokens rotate; kubeconfig applies the fresh one. */
const HEADER_TTL_MS = 60_000;

/**
 * Asked before every write (not a dry run) to a namespace: an error refuses it (the request is not sent). Sharding's
 * fence (runtime/sharding): a replica writes only in the namespaces it holds, and only while its Lease is renewed.
 */
export type WriteGuard = (namespace: string, resource: string) => Error | undefined;

export class Client {
  private readonly kc: RESTConfig;
  private writeGuard: WriteGuard | undefined;
  /** Writes sent and not yet answered, by namespace: what a namespace's release waits for (writesSettled). */
  private readonly inFlight = new Map<string, { count: number; waiters: Array<() => void> }>();
  private readonly opts: Required<Omit<ClientOptions, "onWarning">>;
  private readonly onWarning: ClientOptions["onWarning"];
  private transport: Transport | undefined;
  private transportPending: Promise<Transport> | undefined;

  /** `kc`: runtime/kubeconfig.ts's loadKubeConfig, or a @kubernetes/client-node KubeConfig (tests, tools). */
  constructor(kc: RESTConfig, opts: ClientOptions = {}) {
    this.kc = kc;
    this.opts = {
      // Generic defaults: the product names itself (cmd/run.ts passes its own).
      userAgent: opts.userAgent ?? DEFAULT_USER_AGENT,
      fieldManager: opts.fieldManager ?? DEFAULT_USER_AGENT,
      timeoutMs: opts.timeoutMs ?? 30_000,
      maxSockets: opts.maxSockets ?? 64,
    };
    this.onWarning = opts.onWarning;
  }

  get fieldManager(): string {
    return this.opts.fieldManager;
  }

  /** Every later write to a namespace asks `guard` first (one guard a client; undefined removes it). */
  setWriteGuard(guard: WriteGuard | undefined): void {
    this.writeGuard = guard;
  }

  /**
   * Resolves once no write to `namespace` is waiting for its answer (counted while a write guard is set: with the
   * namespace closed by it, no new one starts).
   */
  writesSettled(namespace: string): Promise<void> {
    const f = this.inFlight.get(namespace);
    if (!f) return Promise.resolve();
    return new Promise((resolve) => f.waiters.push(resolve));
  }

  /** The guard's answer for a write to `path` (undefined: send it), and the namespace it counts under. */
  private guarded(method: string, path: string, dryRun: boolean): { namespace?: string; refusal?: Error } {
    if (method === "GET" || dryRun) return {};
    const m = /^\/apis?\/(?:[^/]+\/)?[^/]+\/namespaces\/([^/]+)\/([^/?]+)/.exec(path);
    if (!m) return {};
    const namespace = m[1]!;
    const refusal = this.writeGuard?.(namespace, m[2]!);
    return refusal ? { namespace, refusal } : { namespace };
  }

  private begin(namespace: string | undefined): () => void {
    // Counted only where a guard fences writes: writesSettled is what a namespace's release waits for.
    if (namespace === undefined || !this.writeGuard) return () => {};
    let f = this.inFlight.get(namespace);
    if (!f) this.inFlight.set(namespace, (f = { count: 0, waiters: [] }));
    f.count++;
    const entry = f;
    return () => {
      if (--entry.count > 0) return;
      this.inFlight.delete(namespace);
      for (const w of entry.waiters.splice(0)) w();
    };
  }

  private async getTransport(): Promise<Transport> {
    const t = this.transport;
    if (t && Date.now() - t.fetchedAt < HEADER_TTL_MS) return t;
    this.transportPending ??= this.buildTransport().finally(() => (this.transportPending = undefined));
    return this.transportPending;
  }

  private async buildTransport(): Promise<Transport> {
    const cluster = this.kc.getCurrentCluster();
    if (!cluster) throw new Error("kubeconfig has no current cluster");
    const o: RequestOptions = {};
    await this.kc.applyToHTTPSOptions(o);
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(o.headers ?? {})) {
      if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.map(String) : String(v);
    }
    if (o.auth) headers.authorization = `Basic ${Buffer.from(o.auth).toString("base64")}`;
    const base = new URL(cluster.server);
    let agent = this.transport?.agent;
    if (!agent) {
      agent =
        base.protocol === "http:"
          ? new HttpAgent({ keepAlive: true, maxSockets: this.opts.maxSockets })
          : new HttpsAgent({
              keepAlive: true,
              maxSockets: this.opts.maxSockets,
              ca: o.ca,
              cert: o.cert,
              key: o.key,
              ...(o.rejectUnauthorized !== undefined ? { rejectUnauthorized: o.rejectUnauthorized } : {}),
              ...(o.servername ? { servername: o.servername } : {}),
            });
    }
    this.transport = { base, agent, headers, fetchedAt: Date.now() };
    return this.transport;
  }

  /** Low-level request; resolves with the parsed JSON body or rejects with an APIError. */
  async request<T = unknown>(
    method: string,
    path: string,
    o: {
      query?: Record<string, string | number | boolean | undefined>;
      body?: unknown;
      contentType?: string;
      timeoutMs?: number;
      /** Aborts the request (e.g. a deadline: AbortSignal.timeout); it then rejects with an APIError. */
      signal?: AbortSignal;
      /** This request's API warnings, also those of a refused request. */
      onWarning?: WarningHandler;
      /** The server's clock: the response's Date header (whole seconds), when it has one. */
      onDate?: (serverTime: Date) => void;
    } = {},
  ): Promise<T> {
    const guard = this.guarded(method, path, o.query?.dryRun !== undefined);
    if (guard.refusal) throw guard.refusal;
    const end = this.begin(guard.namespace);
    try {
      return await this.exchange<T>(method, path, o);
    } finally {
      end();
    }
  }

  private async exchange<T>(method: string, path: string, o: Parameters<Client["request"]>[2] & object): Promise<T> {
    const res = await this.send(
      method,
      path,
      o.query,
      o.body,
      o.contentType,
      o.signal,
      o.timeoutMs ?? this.opts.timeoutMs,
    );
    const date = res.headers.date ? new Date(res.headers.date) : undefined;
    if (o.onDate && date && !Number.isNaN(date.getTime())) o.onDate(date);
    for (const w of parseWarningHeaders(headerValues(res.rawHeaders, "warning"))) {
      this.onWarning?.(w, `${method} ${path}`);
      o.onWarning?.(w);
    }
    const text = await readBody(res);
    const code = res.statusCode ?? 0;
    if (code < 200 || code >= 300) throw APIError.fromResponse(code, text, `${method} ${path}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  private async send(
    method: string,
    path: string,
    query: Record<string, string | number | boolean | undefined> | undefined,
    body: unknown,
    contentType: string | undefined,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
  ): Promise<IncomingMessage> {
    let t: Transport;
    try {
      t = await this.getTransport();
    } catch (err) {
      // A kubeconfig that cannot produce credentials (exec plugin, files) fails like the transport does.
      throw err instanceof APIError
        ? err
        : new APIError(0, "Unknown", `${method} ${path}: ${err instanceof Error ? err.message : String(err)}`);
    }
    const url = new URL(t.base.pathname.replace(/\/$/, "") + path, t.base);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const payload = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
    const headers: Record<string, string | string[]> = {
      ...t.headers,
      accept: "application/json",
      "user-agent": this.opts.userAgent,
    };
    if (payload !== undefined) {
      headers["content-type"] = contentType ?? "application/json";
      headers["content-length"] = String(Buffer.byteLength(payload));
    }
    const started = performance.now();
    const host = url.host;
    return new Promise<IncomingMessage>((resolve, reject) => {
      const req = (url.protocol === "http:" ? httpRequest : httpsRequest)(url, {
        method,
        headers,
        agent: t.agent,
        signal,
      });
      if (timeoutMs !== undefined) {
        req.setTimeout(timeoutMs, () =>
          req.destroy(new APIError(0, "Timeout", `${method} ${path}: no response within ${timeoutMs} ms`)),
        );
      }
      req.once("response", (res) => {
        requestsTotal.inc({ code: String(res.statusCode ?? 0), method, host });
        requestLatency.observe({ verb: method, host }, (performance.now() - started) / 1000);
        resolve(res);
      });
      req.once("error", (err) => {
        requestsTotal.inc({ code: "<error>", method, host });
        reject(err instanceof APIError ? err : new APIError(0, "Unknown", `${method} ${path}: ${err.message}`));
      });
      req.end(payload);
    });
  }

  get<T extends KubeObject>(
    rk: ResourceKind,
    namespace: string | undefined,
    name: string,
    o: { signal?: AbortSignal } = {},
  ): Promise<T> {
    return this.request<T>("GET", objectPath(rk, namespace, name), { signal: o.signal });
  }

  list<T extends KubeObject>(rk: ResourceKind, o: ListOptions = {}): Promise<ListResult<T>> {
    return this.request<ListResult<T>>("GET", collectionPath(rk, o.namespace), {
      query: {
        labelSelector: o.labelSelector,
        fieldSelector: o.fieldSelector,
        limit: o.limit,
        continue: o.continue,
        resourceVersion: o.resourceVersion,
        resourceVersionMatch: o.resourceVersionMatch,
      },
    });
  }

  create<T extends KubeObject>(rk: ResourceKind, obj: T, o: WriteOptions = {}): Promise<T> {
    return this.request<T>("POST", collectionPath(rk, obj.metadata?.namespace), {
      query: this.writeQuery(o),
      body: obj,
      signal: o.signal,
      onWarning: o.onWarning,
    });
  }

  /** PUT; the object's resourceVersion makes it conditional (409 Conflict if stale). */
  update<T extends KubeObject>(rk: ResourceKind, obj: T, o: WriteOptions = {}): Promise<T> {
    return this.request<T>("PUT", objectPath(rk, obj.metadata?.namespace, requireName(obj)), {
      query: this.writeQuery(o),
      body: obj,
      signal: o.signal,
      onWarning: o.onWarning,
    });
  }

  /** PUT to the status subresource; conditional on resourceVersion like update. */
  updateStatus<T extends KubeObject>(rk: ResourceKind, obj: T, o: WriteOptions = {}): Promise<T> {
    return this.request<T>("PUT", objectPath(rk, obj.metadata?.namespace, requireName(obj), "status"), {
      query: this.writeQuery(o),
      body: obj,
      onWarning: o.onWarning,
    });
  }

  patch<T extends KubeObject>(
    rk: ResourceKind,
    namespace: string | undefined,
    name: string,
    patch: unknown,
    type: PatchType,
    o: WriteOptions & { subresource?: string; force?: boolean } = {},
  ): Promise<T> {
    const query = { ...this.writeQuery(o), force: type === "apply" ? (o.force ?? undefined) : undefined };
    return this.request<T>("PATCH", objectPath(rk, namespace, name, o.subresource), {
      query,
      body: patch,
      contentType: PATCH_CONTENT_TYPES[type],
      onWarning: o.onWarning,
    });
  }

  patchStatus<T extends KubeObject>(
    rk: ResourceKind,
    namespace: string | undefined,
    name: string,
    patch: unknown,
    type: PatchType,
    o: WriteOptions & { force?: boolean } = {},
  ): Promise<T> {
    return this.patch<T>(rk, namespace, name, patch, type, { ...o, subresource: "status" });
  }

  /**
   * Delete. Jobs default to orphaning their pods, so callers deleting Jobs should pass
   * propagationPolicy "Background" (deleteJob does).
   */
  async delete(rk: ResourceKind, namespace: string | undefined, name: string, o: DeleteOptions = {}): Promise<void> {
    const body: Record<string, unknown> = { apiVersion: "v1", kind: "DeleteOptions" };
    if (o.propagationPolicy) body.propagationPolicy = o.propagationPolicy;
    if (o.preconditions) body.preconditions = o.preconditions;
    if (o.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = o.gracePeriodSeconds;
    await this.request("DELETE", objectPath(rk, namespace, name), { body });
  }

  /**
   * Start a watch. Resolves once the server has accepted it (a non-2xx answer, e.g. 410 Gone, rejects
   * with an APIError); the returned iterator yields events until the server ends the stream, the
   * signal aborts (the iterator then just ends), or the connection fails (the iterator throws).
   */
  async watch<T extends KubeObject>(rk: ResourceKind, o: WatchOptions = {}): Promise<AsyncIterable<WatchEvent<T>>> {
    const res = await this.send(
      "GET",
      collectionPath(rk, o.namespace),
      {
        watch: "true",
        resourceVersion: o.resourceVersion,
        allowWatchBookmarks: o.allowWatchBookmarks,
        timeoutSeconds: o.timeoutSeconds,
        labelSelector: o.labelSelector,
        fieldSelector: o.fieldSelector,
      },
      undefined,
      undefined,
      o.signal,
      undefined,
    );
    const code = res.statusCode ?? 0;
    if (code < 200 || code >= 300)
      throw APIError.fromResponse(code, await readBody(res), `watch ${collectionPath(rk, o.namespace)}`);
    return watchEvents<T>(res, o.signal);
  }

  private writeQuery(o: WriteOptions): Record<string, string | undefined> {
    return {
      fieldManager: o.fieldManager ?? this.opts.fieldManager,
      dryRun: o.dryRun ? "All" : undefined,
      fieldValidation: o.fieldValidation,
    };
  }

  /** Close idle connections (shutdown). */
  close(): void {
    this.transport?.agent.destroy();
    this.transport = undefined;
  }
}

function requireName(obj: KubeObject): string {
  const name = obj.metadata?.name;
  if (!name) throw new Error(`${obj.kind ?? "object"} has no metadata.name`);
  return name;
}

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on("data", (c: Buffer) => chunks.push(c));
    res.once("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    res.once("error", (err) =>
      reject(err instanceof APIError ? err : new APIError(0, "Unknown", `reading the response failed: ${err.message}`)),
    );
    res.once("aborted", () => reject(new APIError(0, "Unknown", "response aborted")));
  });
}

async function* watchEvents<T>(res: IncomingMessage, signal: AbortSignal | undefined): AsyncGenerator<WatchEvent<T>> {
  res.setEncoding("utf8");
  let buf = "";
  try {
    for await (const chunk of res as AsyncIterable<string>) {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) yield JSON.parse(line) as WatchEvent<T>;
      }
    }
  } catch (err) {
    if (signal?.aborted) return;
    throw err instanceof APIError ? err : new APIError(0, "Unknown", `watch stream failed: ${(err as Error).message}`);
  } finally {
    res.destroy();
  }
  if (buf.trim()) yield JSON.parse(buf) as WatchEvent<T>;
}

/** A watch ERROR event's Status as an APIError (410 Gone when the resourceVersion is too old). */
export function watchErrorToAPIError(status: unknown): APIError {
  const code = typeof (status as { code?: unknown })?.code === "number" ? (status as { code: number }).code : 500;
  return APIError.fromResponse(code, status, "watch");
}
