// client-go's event recorder + broadcaster, collapsed into one object: event() builds the Event and
// queues it; one background loop correlates and writes, strictly in order (as client-go's single
// watcher goroutine does), so a dedupe patch always sees the name the previous write got.
import { hostname } from "node:os";
import type { CoreV1Event, KubeConfig, V1ObjectReference } from "@kubernetes/client-node";
import { APIError, isAlreadyExists, isNotFound } from "../errors.ts";
import type { Clock } from "../workqueue/clock.ts";
import { EventCorrelator, eventName, metaTime, type CorrelationResult, type CorrelatorOptions } from "./correlator.ts";
import { sprintf } from "./format.ts";
import { Counter } from "prom-client";
import type { Client } from "../client.ts";
import { getOrCreate, metricsRegistry } from "../metrics/registry.ts";
import { ClientEventSink, CoreV1EventSink, toAPIError, type EventSink } from "./sink.ts";
import { noopLogger, type EventLogger, type EventSubject, type EventType, type Recorder } from "./types.ts";

export const DEFAULT_MAX_PENDING = 10_000;

const eventsDropped = getOrCreate(
  "events_dropped_total",
  () =>
    new Counter({
      name: "events_dropped_total",
      help: "Events not written because the recorder's queue was full (the API server could not keep up).",
      labelNames: ["reason"],
      registers: [metricsRegistry],
    }),
);
export const DEFAULT_MAX_TRIES = 6;

export interface EventRecorderOptions {
  /** source.component and reportingComponent, e.g. "cronjob-controller". */
  component: string;
  /** Preferred: write through the runtime's Client (shared keep-alive connections). */
  client?: Client;
  /** Used to build a CoreV1Api sink unless `sink` or `client` is given. */
  kubeConfig?: KubeConfig;
  sink?: EventSink;
  /** source.host and reportingInstance; defaults to the machine's hostname (the pod name in a cluster). */
  host?: string;
  /** Milliseconds since the epoch; drives timestamps, aggregation windows and the spam filter. */
  clock?: Clock;
  logger?: EventLogger;
  /** Events waiting to be written beyond this are dropped. */
  maxPending?: number;
  /** Attempts per event for transient failures (client-go: 12). */
  maxTries?: number;
  /** Backoff between attempts: exponential from initialMs, capped at maxMs, the first one jittered. */
  backoff?: { initialMs?: number; maxMs?: number };
  correlator?: Omit<CorrelatorOptions, "clock">;
}

interface Waiter {
  resolve: () => void;
}

type Outcome = "done" | "retry";

interface Queued {
  event: CoreV1Event;
  /** When event() was called: correlation windows and the spam filter count from then, not from the write. */
  at: number;
}

function isReference(obj: EventSubject): obj is V1ObjectReference {
  return !("metadata" in obj && obj.metadata) && "name" in obj && typeof obj.name === "string";
}

function referenceOf(obj: EventSubject): V1ObjectReference | undefined {
  if (isReference(obj)) return { ...obj };
  const m = "metadata" in obj ? obj.metadata : undefined;
  if (!m?.name) return undefined;
  const ref: V1ObjectReference = { name: m.name };
  if (obj.apiVersion) ref.apiVersion = obj.apiVersion;
  if (obj.kind) ref.kind = obj.kind;
  if (m.namespace) ref.namespace = m.namespace;
  if (m.uid) ref.uid = m.uid;
  if (m.resourceVersion) ref.resourceVersion = m.resourceVersion;
  return ref;
}

function describe(e: CoreV1Event): Record<string, unknown> {
  const o = e.involvedObject;
  return {
    event: `${e.metadata.namespace ?? ""}/${e.metadata.name ?? ""}`,
    object: `${o.kind ?? ""} ${o.namespace ? o.namespace + "/" : ""}${o.name ?? ""}`,
    type: e.type,
    reason: e.reason,
    message: e.message,
    count: e.count,
  };
}

function errorMeta(err: unknown): Record<string, unknown> {
  if (err instanceof APIError) return { error: err.message, code: err.code, reason: err.reason };
  return { error: err instanceof Error ? err.message : String(err) };
}

/** Worth another attempt: the server may answer differently later. Other API errors are final. */
function isTransient(err: unknown): boolean {
  if (!(err instanceof APIError)) return true;
  return err.code === 429 || err.code >= 500;
}

export class EventRecorder implements Recorder {
  readonly component: string;
  readonly host: string;
  readonly #sink: EventSink;
  readonly #clock: Clock;
  readonly #log: EventLogger;
  readonly #correlator: EventCorrelator;
  readonly #maxPending: number;
  readonly #maxTries: number;
  readonly #initialBackoffMs: number;
  readonly #maxBackoffMs: number;
  readonly #queue: Queued[] = [];
  readonly #waiters: Waiter[] = [];
  readonly #sleeps = new Set<() => void>();
  #draining = false;
  #closed = false;

  constructor(opts: EventRecorderOptions) {
    if (!opts.sink && !opts.kubeConfig && !opts.client)
      throw new Error("EventRecorder needs a client, a kubeConfig or a sink");
    this.component = opts.component;
    this.host = opts.host ?? hostname();
    this.#sink =
      opts.sink ??
      (opts.client ? new ClientEventSink(opts.client) : new CoreV1EventSink(opts.kubeConfig as KubeConfig));
    this.#clock = opts.clock ?? { now: () => Date.now() };
    this.#log = opts.logger ?? noopLogger;
    this.#correlator = new EventCorrelator({ ...opts.correlator, clock: this.#clock });
    this.#maxPending = opts.maxPending ?? DEFAULT_MAX_PENDING;
    this.#maxTries = Math.max(1, opts.maxTries ?? DEFAULT_MAX_TRIES);
    this.#initialBackoffMs = opts.backoff?.initialMs ?? 500;
    this.#maxBackoffMs = opts.backoff?.maxMs ?? 10_000;
  }

  /** Events queued and not yet handed to the writer loop. */
  get pending(): number {
    return this.#queue.length;
  }

  event(obj: EventSubject, type: EventType, reason: string, message: string): void {
    // A recorder is called from reconcilers' error paths: whatever goes wrong here must stay here.
    try {
      this.#enqueue(obj, type, reason, message);
    } catch (err) {
      this.#log.error("could not record event", { reason, message, ...errorMeta(err) });
    }
  }

  eventf(obj: EventSubject, type: EventType, reason: string, fmt: string, ...args: unknown[]): void {
    let message: string;
    try {
      message = sprintf(fmt, ...args);
    } catch {
      message = fmt;
    }
    this.event(obj, type, reason, message);
  }

  /** Resolves once every event queued so far has been written, dropped or given up on. */
  flush(): Promise<void> {
    if (!this.#draining && this.#queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ resolve }));
  }

  /**
   * Stop: later events are dropped, queued ones are discarded and retry waits end now. A write already
   * in flight completes; `await flush()` first for a graceful stop that writes what is queued.
   */
  shutdown(): void {
    this.#closed = true;
    const dropped = this.#queue.splice(0, this.#queue.length).length;
    if (dropped > 0) this.#log.debug("event recorder shut down; dropping queued events", { dropped });
    for (const wake of this.#sleeps) wake();
    this.#sleeps.clear();
    if (!this.#draining) this.#settle();
  }

  #enqueue(obj: EventSubject, type: EventType, reason: string, message: string): void {
    if (type !== "Normal" && type !== "Warning") {
      this.#log.error("unsupported event type; not recording", { type, reason, message });
      return;
    }
    const ref = referenceOf(obj);
    if (!ref) {
      this.#log.error("event object has no name; not recording", { type, reason, message });
      return;
    }
    if (this.#closed) {
      this.#log.debug("event recorder is shut down; dropping event", { type, reason, message });
      return;
    }
    if (this.#queue.length >= this.#maxPending) {
      eventsDropped.inc({ reason: "queue_full" });
      this.#log.debug("event queue full; dropping event", { type, reason, message, object: ref.name });
      return;
    }
    const now = this.#clock.now();
    const at = metaTime(now);
    const event: CoreV1Event = {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: eventName(ref.name ?? "", now), namespace: ref.namespace || "default" },
      involvedObject: ref,
      reason,
      message,
      type,
      source: { component: this.component, host: this.host },
      reportingComponent: this.component,
      reportingInstance: this.host,
      firstTimestamp: at,
      lastTimestamp: at,
      count: 1,
    };
    this.#queue.push({ event, at: now });
    if (!this.#draining) {
      this.#draining = true;
      // Start on a microtask: event() must return before any sink code runs.
      void Promise.resolve()
        .then(() => this.#drain())
        .catch((err: unknown) => this.#log.error("event writer failed", errorMeta(err)))
        .finally(() => {
          this.#draining = false;
          this.#settle();
        });
    }
  }

  #settle(): void {
    if (this.#draining || this.#queue.length > 0) return;
    for (const w of this.#waiters.splice(0, this.#waiters.length)) w.resolve();
  }

  async #drain(): Promise<void> {
    for (let q = this.#queue.shift(); q; q = this.#queue.shift()) {
      try {
        await this.#record(q);
      } catch (err) {
        this.#log.error("could not write event", { ...describe(q.event), ...errorMeta(err) });
      }
    }
  }

  async #record(q: Queued): Promise<void> {
    const result = this.#correlator.correlate(q.event, q.at);
    if (result.skip) {
      this.#log.debug("event dropped by the spam filter", describe(result.event));
      return;
    }
    for (let tries = 1; ; tries++) {
      if ((await this.#write(result)) === "done") return;
      if (tries >= this.#maxTries) {
        this.#log.error("unable to write event (retry limit exceeded)", { ...describe(result.event), tries });
        return;
      }
      if (this.#closed) return;
      await this.#sleep(this.#backoff(tries));
      if (this.#closed) return;
    }
  }

  async #write(result: CorrelationResult): Promise<Outcome> {
    const { event, patch } = result;
    let written: CoreV1Event | undefined;
    let err: unknown;
    const update = patch !== undefined && (event.count ?? 1) > 1;
    if (update) {
      try {
        written = await this.#sink.patch(event, patch);
      } catch (e) {
        err = toAPIError(e);
      }
    }
    // The Event may have expired (1 h TTL) or been deleted since: write it anew under the same name.
    if (!update || isNotFound(err)) {
      err = undefined;
      event.metadata = { ...event.metadata, resourceVersion: undefined };
      try {
        written = await this.#sink.create(event);
      } catch (e) {
        err = toAPIError(e);
      }
    }
    if (err === undefined) {
      this.#correlator.updateState(result.key, written ?? event);
      return "done";
    }
    if (isAlreadyExists(err) || isNamespaceTerminating(err)) {
      this.#log.debug("server rejected event (will not retry)", { ...describe(event), ...errorMeta(err) });
      return "done";
    }
    if (!isTransient(err)) {
      this.#log.error("server rejected event (will not retry)", { ...describe(event), ...errorMeta(err) });
      return "done";
    }
    this.#log.error("unable to write event (may retry after sleeping)", { ...describe(event), ...errorMeta(err) });
    return "retry";
  }

  #backoff(tries: number): number {
    const ms = Math.min(this.#maxBackoffMs, this.#initialBackoffMs * 2 ** (tries - 1));
    // Jitter the first wait so recorders that lost the server together do not come back in step.
    return tries === 1 ? ms * Math.random() : ms;
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.#sleeps.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.#sleeps.add(wake);
    });
  }
}

function isNamespaceTerminating(err: unknown): boolean {
  return err instanceof APIError && err.causes.some((c) => c.reason === "NamespaceTerminating");
}
