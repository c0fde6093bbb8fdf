// client-go's event recorder + broadcaster, collapsed into one object. event() builds the Event,
// correlates it (dedupe, aggregation, spam filter) and queues the write; writers in the background
// apply it with the sink.
//
// Writes run in parallel (maxInFlight, default 16: a single in-order writer falls behind a large cluster's
// Events, docs/operating.md), but in one lane per involved object: a lane has at most one write in flight and
// writes in the order recorded, so a dedupe patch always follows the create of the Event it updates
// and sees the name it got (as client-go's single watcher goroutine guarantees for everything).
// A repeat whose Event still has a write waiting in its lane is folded into that write (count,
// lastTimestamp, message) instead of queueing another, so it is written at that write's place: an
// outage or a hot loop adds counts, not writes, and needs neither queue space nor spam budget.
//
// Failures: transport errors (connection refused/reset, timeouts), 429 and 5xx are retried with
// backoff, 1 s doubling to 10 s, 12 tries (client-go: 12 tries 10 s apart): about 85 s, longer than
// an apiserver restart. A write being retried keeps its writer slot, so during an outage at most
// maxInFlight writes probe the server and the rest wait in the bounded queue. Other API errors (400,
// 403, 404 namespace gone, 422, ...) are final. Every event not written is counted in
// events_dropped_total{reason} and logged with its own reason and object.
import { hostname } from "node:os";
import type { CoreV1Event, V1ObjectReference } from "@kubernetes/client-node";
import { Counter } from "prom-client";
import type { Client } from "../client.ts";
import { APIError, isAlreadyExists, isNotFound } from "../errors.ts";
import { discardLogger, type Logger } from "../log.ts";
import { getOrCreate, metricsRegistry } from "../metrics/registry.ts";
import type { BurstGate } from "../burst.ts";
import type { Clock, TimerClock } from "../clock.ts";
import {
  EventCorrelator,
  eventName,
  metaTime,
  objectKey,
  type CorrelationResult,
  type CorrelatorOptions,
} from "./correlator.ts";
import { sprintf } from "./format.ts";
import { ClientEventSink, type EventSink } from "./sink.ts";
import type { EventOptions, EventSubject, EventType, Recorder } from "./types.ts";

const DEFAULT_MAX_PENDING = 10_000;
/** A burst holds Events until maxPending / HOLD_SHARE are waiting (holdWhile). */
const HOLD_SHARE = 10;
export const DEFAULT_MAX_IN_FLIGHT = 16;
const DEFAULT_MAX_TRIES = 12;
const DEFAULT_BACKOFF_INITIAL_MS = 1_000;
const DEFAULT_BACKOFF_MAX_MS = 10_000;

/** Why an event was not written: the values of events_dropped_total's `reason` label. */
export const DROP_REASONS = [
  /** More than maxPending events waiting: the server (or the writers) could not keep up. */
  "queue_full",
  /** Over the spam filter's budget (new Events per object+reason, updates per Event). */
  "spam_filter",
  /**
   * A routine event (EventOptions.routine) over its object's budget (three, then one per 5 minutes), or one its
   * controller left out (routineLeftOut: its API server has no room): left out by design, its fact kept by the
   * controller elsewhere; counted apart so that spam_filter still means a noisy one.
   */
  "routine",
  /** The API server refused the write for good (400, 403, 404 namespace gone, 422, ...). */
  "rejected",
  /** Transient failures (connection refused, timeouts, 429, 5xx) on every try. */
  "retries_exhausted",
  /** Queued, being retried or recorded when the recorder was shut down. */
  "shutdown",
  /** Could not be built: unsupported type, an object without a name, an internal error. */
  "invalid",
] as const;
type DropReason = (typeof DROP_REASONS)[number];

const eventsDropped = getOrCreate(
  "events_dropped_total",
  () =>
    new Counter({
      name: "events_dropped_total",
      help:
        "Events not written, by why: queue_full, spam_filter, routine (a routine event over its object's budget, " +
        "by design), rejected (by the API server), " +
        "retries_exhausted, shutdown, invalid.",
      labelNames: ["reason"],
      registers: [metricsRegistry],
    }),
);

/** A routine event its controller did not hand to the recorder (left out by design): counted as one over budget. */
export function routineLeftOut(): void {
  eventsDropped.inc({ reason: "routine" });
}

/** Every label value exists from the start (at 0), so rate() and alerts see a series before the first drop. */
function initDropCounters(): void {
  for (const reason of DROP_REASONS) eventsDropped.inc({ reason }, 0);
}
initDropCounters();

interface EventRecorderOptions {
  /** source.component and reportingComponent, e.g. "cronjob-controller". */
  component: string;
  /** Write through the runtime's Client (shared keep-alive connections); one of client and sink is required. */
  client?: Client;
  /** Where Events go instead of `client` (unit tests use an in-memory one). */
  sink?: EventSink;
  /** source.host and reportingInstance; defaults to the machine's hostname (the pod name in a cluster). */
  host?: string;
  /**
   * Milliseconds since the epoch; drives timestamps, aggregation windows and the spam filter. A
   * TimerClock (with setTimer) also drives the retry backoff; otherwise real timers do.
   */
  clock?: Clock | TimerClock;
  logger?: Logger;
  /** Events waiting to be written (queued or being retried) beyond this are dropped. */
  maxPending?: number;
  /**
   * While this is active (a burst of urgent writes, runtime/burst.ts), queued Events wait instead of
   * competing with it — until a tenth of maxPending are waiting. Held Events are written together when the
   * burst ends, when the writes it deferred (completions, deletes) make Events of their own, and the queue must
   * have room for those: a tenth leaves it (holding half dropped Events; bench/results has the measurement).
   */
  holdWhile?: BurstGate;
  /** Writes in flight at once, each for a different involved object. */
  maxInFlight?: number;
  /** Attempts per event for transient failures (client-go: 12). */
  maxTries?: number;
  /** Backoff between attempts: exponential from initialMs, capped at maxMs, the first one jittered. */
  backoff?: { initialMs?: number; maxMs?: number };
  correlator?: Omit<CorrelatorOptions, "clock">;
}

interface Waiter {
  resolve: () => void;
}

type Outcome = "done" | "retry" | "dropped";

/** One write: a new Event or an update of one. Mutated in place while it waits (folded repeats). */
interface Item {
  result: CorrelationResult;
}

/** The writes of one involved object, in order; at most one of them in flight. */
interface Lane {
  key: string;
  items: Item[];
  /** The waiting (never attempted) write of each Event in this lane, for folding repeats into. */
  waiting: Map<string, Item>;
  writing: boolean;
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

/** The log fields of an event: `reason` is always the Event's own reason. */
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

/** The log fields of an API error's status; its reason is `statusReason`, never `reason` (the Event's). */
function statusMeta(err: unknown): Record<string, unknown> {
  return err instanceof APIError ? { code: err.code, statusReason: err.reason } : {};
}

/** A write error as log fields, for records below error level (where it is a detail, not the subject). */
function errorMeta(err: unknown): Record<string, unknown> {
  return { error: err instanceof Error ? err.message : String(err), ...statusMeta(err) };
}

/**
 * Worth another attempt: the server may answer differently later. That is anything that is not an
 * API answer (connection refused or reset, DNS, TLS; the Client reports those as APIError code 0),
 * a timeout, 429 and 5xx. Every other API answer (4xx) is final.
 */
function isTransient(err: unknown): boolean {
  if (!(err instanceof APIError)) return true;
  return err.code < 400 || err.code === 408 || err.code === 429 || err.code >= 500;
}

function isNamespaceTerminating(err: unknown): boolean {
  return err instanceof APIError && err.causes.some((c) => c.reason === "NamespaceTerminating");
}

function hasTimers(clock: Clock): clock is TimerClock {
  return typeof (clock as Partial<TimerClock>).setTimer === "function";
}

export class EventRecorder implements Recorder {
  readonly component: string;
  readonly host: string;
  readonly #sink: EventSink;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #correlator: EventCorrelator;
  readonly #maxPending: number;
  readonly #hold: BurstGate | undefined;
  #holding = false;
  readonly #maxInFlight: number;
  readonly #maxTries: number;
  readonly #initialBackoffMs: number;
  readonly #maxBackoffMs: number;
  readonly #lanes = new Map<string, Lane>();
  /** Lanes with a write waiting and none in flight, oldest first (a Set keeps insertion order). */
  readonly #ready = new Set<Lane>();
  readonly #waiters: Waiter[] = [];
  readonly #sleeps = new Set<() => void>();
  /** Writes accepted and not yet started. */
  #queued = 0;
  /** Writes started and not finished (including their retry waits). */
  #inFlight = 0;
  #pumpScheduled = false;
  #closed = false;

  constructor(opts: EventRecorderOptions) {
    if (!opts.sink && !opts.client) throw new Error("EventRecorder needs a client or a sink");
    this.component = opts.component;
    this.host = opts.host ?? hostname();
    this.#sink = opts.sink ?? new ClientEventSink(opts.client as Client);
    this.#clock = opts.clock ?? { now: () => new Date() };
    this.#log = opts.logger ?? discardLogger;
    this.#correlator = new EventCorrelator({ ...opts.correlator, clock: this.#clock });
    this.#maxPending = opts.maxPending ?? DEFAULT_MAX_PENDING;
    this.#hold = opts.holdWhile;
    this.#maxInFlight = Math.max(1, opts.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT);
    this.#maxTries = Math.max(1, opts.maxTries ?? DEFAULT_MAX_TRIES);
    this.#initialBackoffMs = opts.backoff?.initialMs ?? DEFAULT_BACKOFF_INITIAL_MS;
    this.#maxBackoffMs = opts.backoff?.maxMs ?? DEFAULT_BACKOFF_MAX_MS;
    initDropCounters();
  }

  /** Writes accepted and not yet started. */
  get pending(): number {
    return this.#queued;
  }

  event(obj: EventSubject, type: EventType, reason: string, message: string, o: EventOptions = {}): void {
    // A recorder is called from reconcilers' error paths: whatever goes wrong here must stay here.
    try {
      this.#enqueue(obj, type, reason, message, o.routine === true);
    } catch (err) {
      this.#drop("invalid", "could not record event", { type, reason, message }, "error", err);
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

  /**
   * Resolves once every event recorded so far has been written, dropped or given up on, or once
   * timeoutMs has passed (a graceful stop should not wait out the retries of an unreachable server).
   */
  flush(timeoutMs?: number): Promise<void> {
    if (this.#idle()) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter: Waiter = { resolve };
      this.#waiters.push(waiter);
      if (timeoutMs !== undefined) {
        setTimeout(() => {
          const i = this.#waiters.indexOf(waiter);
          if (i >= 0) this.#waiters.splice(i, 1);
          resolve();
        }, timeoutMs).unref();
      }
    });
  }

  /**
   * Stop: later events are dropped, queued ones are discarded and retry waits end now. A write already
   * in flight completes; `await flush()` first for a graceful stop that writes what is queued.
   */
  shutdown(): void {
    this.#closed = true;
    const reasons: Record<string, number> = {};
    let dropped = 0;
    for (const lane of this.#lanes.values()) {
      for (const { result } of lane.items) {
        dropped++;
        const r = result.event.reason ?? "";
        reasons[r] = (reasons[r] ?? 0) + 1;
      }
      lane.items = [];
      lane.waiting.clear();
      if (!lane.writing) this.#lanes.delete(lane.key);
    }
    this.#ready.clear();
    this.#queued = 0;
    if (dropped > 0) {
      eventsDropped.inc({ reason: "shutdown" }, dropped);
      this.#log.debug("event recorder shut down; dropping queued events", { dropped, reasons });
    }
    for (const wake of this.#sleeps) wake();
    this.#sleeps.clear();
    this.#settle();
  }

  #enqueue(obj: EventSubject, type: EventType, reason: string, message: string, routine: boolean): void {
    if (type !== "Normal" && type !== "Warning") {
      this.#drop("invalid", "unsupported event type; not recording", { type, reason, message }, "error");
      return;
    }
    const ref = referenceOf(obj);
    if (!ref) {
      this.#drop("invalid", "event object has no name; not recording", { type, reason, message }, "error");
      return;
    }
    if (this.#closed) {
      this.#drop("shutdown", "event recorder is shut down; dropping event", {
        object: `${ref.kind ?? ""} ${ref.namespace ? ref.namespace + "/" : ""}${ref.name ?? ""}`,
        type,
        reason,
        message,
      });
      return;
    }
    const now = this.#clock.now().getTime();
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
    const result = this.#correlator.correlate(event, now);
    const laneKey = objectKey(result.event);
    let lane = this.#lanes.get(laneKey);

    // A repeat of an Event whose write is still waiting: that write carries the new count, timestamp and
    // message. No queue space, no spam budget: it costs the server nothing more.
    const waiting = result.patch ? lane?.waiting.get(result.key) : undefined;
    if (waiting) {
      waiting.result = { ...result, patch: waiting.result.patch ? result.patch : undefined };
      return;
    }
    if (this.#queued >= this.#maxPending) {
      this.#drop("queue_full", "event queue full; dropping event", describe(result.event));
      return;
    }
    if (!this.#correlator.allow(result, now, routine)) {
      this.#correlator.dropped(result);
      if (routine)
        eventsDropped.inc({ reason: "routine" }); // thousands a minute in a fleet: not logged one by one
      else this.#drop("spam_filter", "event dropped by the spam filter", describe(result.event));
      return;
    }
    if (!lane) {
      lane = { key: laneKey, items: [], waiting: new Map(), writing: false };
      this.#lanes.set(laneKey, lane);
    }
    const item: Item = { result };
    lane.items.push(item);
    lane.waiting.set(result.key, item);
    this.#queued++;
    if (!lane.writing) this.#ready.add(lane);
    if (!this.#pumpScheduled) {
      this.#pumpScheduled = true;
      // On a microtask: event() must return before any sink code runs.
      queueMicrotask(() => {
        this.#pumpScheduled = false;
        this.#pump();
      });
    }
  }

  /** Count and log a drop; `err` is the record's error at error level, a detail (errorMeta) at debug. */
  #drop(
    why: DropReason,
    msg: string,
    meta: Record<string, unknown>,
    level: "debug" | "error" = "debug",
    err?: unknown,
  ): void {
    eventsDropped.inc({ reason: why });
    if (level === "error") this.#log.error(msg, err, { ...meta, ...statusMeta(err), dropped: why });
    else this.#log.debug(msg, { ...meta, ...(err === undefined ? {} : errorMeta(err)), dropped: why });
  }

  /** Start writes while there are free slots and lanes with a write waiting (and no burst holds them). */
  #pump(): void {
    if (this.#held()) return;
    while (this.#inFlight < this.#maxInFlight && this.#ready.size > 0) {
      const lane = this.#ready.values().next().value as Lane;
      this.#ready.delete(lane);
      const item = lane.items.shift();
      if (!item) continue;
      if (lane.waiting.get(item.result.key) === item) lane.waiting.delete(item.result.key);
      this.#queued--;
      this.#inFlight++;
      lane.writing = true;
      void this.#run(lane, item);
    }
  }

  async #run(lane: Lane, item: Item): Promise<void> {
    try {
      await this.#record(item);
    } catch (err) {
      this.#drop("invalid", "could not write event", describe(item.result.event), "error", err);
    } finally {
      this.#inFlight--;
      lane.writing = false;
      if (lane.items.length > 0) this.#ready.add(lane);
      else this.#lanes.delete(lane.key);
      this.#pump();
      this.#settle();
    }
  }

  /** Whether a burst holds the queue now; if so, pumps again once it is over. */
  #held(): boolean {
    const hold = this.#hold;
    if (!hold || this.#closed || this.#queued >= this.#maxPending / HOLD_SHARE || !hold.active()) return false;
    if (!this.#holding) {
      this.#holding = true;
      void hold.whenQuiet().then(() => {
        this.#holding = false;
        this.#pump();
      });
    }
    return true;
  }

  #idle(): boolean {
    return this.#queued === 0 && this.#inFlight === 0;
  }

  #settle(): void {
    if (!this.#idle()) return;
    for (const w of this.#waiters.splice(0, this.#waiters.length)) w.resolve();
  }

  async #record(item: Item): Promise<void> {
    for (let tries = 1; ; tries++) {
      const { outcome, err } = await this.#write(item.result);
      if (outcome !== "retry") return;
      const event = item.result.event;
      if (tries >= this.#maxTries) {
        this.#drop(
          "retries_exhausted",
          "unable to write event (retry limit exceeded)",
          { ...describe(event), tries },
          "error",
          err,
        );
        return;
      }
      if (!this.#closed) await this.#sleep(this.#backoff(tries, err));
      if (this.#closed) {
        this.#drop("shutdown", "event recorder shut down while retrying; dropping event", describe(event));
        return;
      }
    }
  }

  async #write(result: CorrelationResult): Promise<{ outcome: Outcome; err?: unknown }> {
    const { event, patch } = result;
    let written: CoreV1Event | undefined;
    let err: unknown;
    const update = patch !== undefined && (event.count ?? 1) > 1;
    if (update) {
      try {
        written = await this.#sink.patch(event, patch);
      } catch (e) {
        err = e;
      }
    }
    // The Event may have expired (1 h TTL), been deleted, or its create dropped: write it anew under
    // the same name.
    if (!update || isNotFound(err)) {
      err = undefined;
      event.metadata = { ...event.metadata, resourceVersion: undefined };
      try {
        written = await this.#sink.create(event);
      } catch (e) {
        err = e;
      }
    }
    if (err === undefined) {
      this.#correlator.updateState(result.key, written ?? event);
      return { outcome: "done" };
    }
    // Our names are unique: AlreadyExists means an earlier try got through and only its answer was lost.
    if (isAlreadyExists(err)) {
      this.#log.debug("event already written", { ...describe(event), ...errorMeta(err) });
      return { outcome: "done" };
    }
    if (isNamespaceTerminating(err)) {
      // Expected while a namespace goes away; client-go logs it at V(5).
      this.#drop("rejected", "server rejected event (will not retry)", describe(event), "debug", err);
      return { outcome: "dropped" };
    }
    if (!isTransient(err)) {
      this.#drop("rejected", "server rejected event (will not retry)", describe(event), "error", err);
      return { outcome: "dropped" };
    }
    this.#log.info("unable to write event (will retry)", { ...describe(event), ...errorMeta(err) });
    return { outcome: "retry", err };
  }

  #backoff(tries: number, err: unknown): number {
    let ms = Math.min(this.#maxBackoffMs, this.#initialBackoffMs * 2 ** (tries - 1));
    // Jitter the first wait so recorders that lost the server together do not come back in step.
    if (tries === 1) ms *= Math.random();
    // A 429/503 may say when to come back; honoured up to the cap.
    const retryAfter = err instanceof APIError ? err.retryAfterSeconds : undefined;
    if (retryAfter !== undefined && retryAfter > 0) ms = Math.max(ms, Math.min(this.#maxBackoffMs, retryAfter * 1000));
    return ms;
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      let cancel = (): void => {};
      const wake = (): void => {
        cancel();
        this.#sleeps.delete(wake);
        resolve();
      };
      this.#sleeps.add(wake);
      const clock = this.#clock;
      if (hasTimers(clock)) {
        const t = clock.setTimer(wake, ms);
        cancel = () => t.cancel();
      } else {
        const t = setTimeout(wake, ms);
        cancel = () => clearTimeout(t);
      }
    });
  }
}
