// client-go's EventCorrelator (tools/record/events_cache.go): aggregation of similar events, dedupe
// of identical ones into a count, and a per-object spam filter. Kept free of I/O so it can be tested
// on its own; the recorder applies the result with the sink and reports back via updateState.
import type { CoreV1Event } from "@kubernetes/client-node";
import type { Clock } from "../workqueue/clock.ts";

export const DEFAULT_LRU_CACHE_SIZE = 4096;
export const DEFAULT_SPAM_BURST = 25;
/** One token per five minutes, client-go's defaultSpamQPS. */
export const DEFAULT_SPAM_QPS = 1 / 300;
export const DEFAULT_AGGREGATE_MAX_EVENTS = 10;
export const DEFAULT_AGGREGATE_INTERVAL_MS = 600_000;
export const AGGREGATE_MESSAGE_PREFIX = "(combined from similar events): ";

export interface CorrelatorOptions {
  clock?: Clock;
  lruCacheSize?: number;
  spamBurst?: number;
  spamQPS?: number;
  /** Distinct messages (same source/object/type/reason) within the interval that switch to one aggregate event. */
  aggregateMaxEvents?: number;
  aggregateIntervalMs?: number;
}

/** The fields a dedupe update changes, sent as a JSON merge patch. */
export interface EventPatch {
  count: number;
  /** RFC 3339, seconds: a metav1.Time. */
  lastTimestamp: string;
  message: string;
}

export interface CorrelationResult {
  event: CoreV1Event;
  /** Set when the event updates one written before (count > 1). */
  patch: EventPatch | undefined;
  /** The dedupe key the write's outcome must be reported under (updateState). */
  key: string;
  skip: boolean;
}

/** A Map used as an LRU: get() refreshes, set() evicts the least recently used entry beyond the size. */
export class LRU<V> {
  readonly #max: number;
  readonly #map = new Map<string, V>();

  constructor(max: number) {
    this.#max = Math.max(1, max);
  }

  get size(): number {
    return this.#map.size;
  }

  get(key: string): V | undefined {
    const v = this.#map.get(key);
    if (v !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, v);
    }
    return v;
  }

  set(key: string, v: V): void {
    this.#map.delete(key);
    this.#map.set(key, v);
    if (this.#map.size > this.#max) {
      const oldest = this.#map.keys().next();
      if (!oldest.done) this.#map.delete(oldest.value);
    }
  }
}

/** Token bucket (golang.org/x/time/rate semantics): starts full, refills continuously. */
export class TokenBucket {
  readonly #qps: number;
  readonly #burst: number;
  #tokens: number;
  #last: number;

  constructor(qps: number, burst: number, nowMs: number) {
    this.#qps = qps;
    this.#burst = burst;
    this.#tokens = burst;
    this.#last = nowMs;
  }

  tryAccept(nowMs: number): boolean {
    // A clock stepping backwards must not mint tokens.
    const elapsed = Math.max(0, nowMs - this.#last);
    this.#last = Math.max(this.#last, nowMs);
    this.#tokens = Math.min(this.#burst, this.#tokens + (elapsed / 1000) * this.#qps);
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}

// JSON arrays rather than plain concatenation: client-go joins with "", so "ab"+"c" and "a"+"bc" collide.
function key(parts: (string | undefined)[]): string {
  return JSON.stringify(parts.map((p) => p ?? ""));
}

function objectParts(e: CoreV1Event): (string | undefined)[] {
  const o = e.involvedObject;
  return [e.source?.component, e.source?.host, o.kind, o.namespace, o.name, o.uid, o.apiVersion];
}

/** The dedupe key: everything that makes two events "the same event" (client-go getEventKey). */
export function eventKey(e: CoreV1Event): string {
  const o = e.involvedObject;
  return key([
    e.source?.component,
    e.source?.host,
    o.kind,
    o.namespace,
    o.name,
    o.fieldPath,
    o.uid,
    o.apiVersion,
    e.type,
    e.reason,
    e.message,
  ]);
}

/** The aggregation key: the dedupe key without the message (EventAggregatorByReasonFunc). */
export function aggregateKey(e: CoreV1Event): string {
  return key([...objectParts(e), e.type, e.reason]);
}

/** The spam-filter key: source and involved object. */
export function spamKey(e: CoreV1Event): string {
  return key(objectParts(e));
}

/** metav1.Time's wire form: RFC 3339 in UTC with whole seconds. */
export function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d+Z$/, "Z");
}

/**
 * A Date at metav1.Time precision. client-node would send milliseconds (toISOString) and the server
 * would drop them; truncating here keeps what is cached equal to what is stored.
 */
export function metaTime(ms: number): Date {
  return new Date(Math.floor(ms / 1000) * 1000);
}

const systemClock: Clock = { now: () => Date.now() };

let lastNanos = 0n;

/**
 * `<name>.<hex nanoseconds>`, like client-go; the clock only has milliseconds, so the nanosecond part
 * is made strictly increasing within the process to keep names of events from the same instant apart.
 */
export function eventName(objectName: string, nowMs: number): string {
  let n = BigInt(Math.trunc(nowMs)) * 1_000_000n;
  if (n <= lastNanos) n = lastNanos + 1n;
  lastNanos = n;
  return `${objectName}.${n.toString(16)}`;
}

interface AggregateRecord {
  localKeys: Set<string>;
  lastMs: number;
}

interface Observation {
  count: number;
  firstTimestamp: Date | undefined;
  name: string;
  resourceVersion: string | undefined;
}

export class EventCorrelator {
  readonly #clock: Clock;
  readonly #spamQPS: number;
  readonly #spamBurst: number;
  readonly #maxEvents: number;
  readonly #intervalMs: number;
  readonly #spam: LRU<TokenBucket>;
  readonly #aggregates: LRU<AggregateRecord>;
  readonly #observed: LRU<Observation>;

  constructor(opts: CorrelatorOptions = {}) {
    const size = opts.lruCacheSize ?? DEFAULT_LRU_CACHE_SIZE;
    this.#clock = opts.clock ?? systemClock;
    this.#spamQPS = opts.spamQPS ?? DEFAULT_SPAM_QPS;
    this.#spamBurst = opts.spamBurst ?? DEFAULT_SPAM_BURST;
    this.#maxEvents = opts.aggregateMaxEvents ?? DEFAULT_AGGREGATE_MAX_EVENTS;
    this.#intervalMs = opts.aggregateIntervalMs ?? DEFAULT_AGGREGATE_INTERVAL_MS;
    this.#spam = new LRU(size);
    this.#aggregates = new LRU(size);
    this.#observed = new LRU(size);
  }

  /**
   * Decide what to write for a new event. As in client-go, the dedupe cache is updated before the
   * spam filter runs, so occurrences dropped as spam are still counted by the next write that passes.
   * `now` is when the event happened, which for a queued event is earlier than when it is correlated.
   */
  correlate(newEvent: CoreV1Event, now: number = this.#clock.now()): CorrelationResult {
    const { event: aggregated, key: k } = this.#aggregate(structuredClone(newEvent), now);
    const { event, patch } = this.#observe(aggregated, k, now);
    const skip = !this.#allow(event, now);
    return { event, patch, key: k, skip };
  }

  /** Record what the server answered, so later patches target the Event that really exists. */
  updateState(key: string, written: CoreV1Event): void {
    const prev = this.#observed.get(key);
    const name = written.metadata?.name ?? prev?.name;
    if (!name) return;
    this.#observed.set(key, {
      count: Math.max(written.count ?? 1, prev?.count ?? 0),
      firstTimestamp: written.firstTimestamp ?? prev?.firstTimestamp,
      name,
      resourceVersion: written.metadata?.resourceVersion,
    });
  }

  #aggregate(event: CoreV1Event, now: number): { event: CoreV1Event; key: string } {
    const aggKey = aggregateKey(event);
    let rec = this.#aggregates.get(aggKey);
    if (!rec || rec.lastMs + this.#intervalMs < now) rec = { localKeys: new Set(), lastMs: now };
    rec.localKeys.add(event.message ?? "");
    rec.lastMs = now;
    this.#aggregates.set(aggKey, rec);
    if (rec.localKeys.size < this.#maxEvents) return { event, key: eventKey(event) };

    // Bound the set; client-go pops an arbitrary member, the oldest is as good and deterministic.
    const oldest = rec.localKeys.values().next();
    if (!oldest.done) rec.localKeys.delete(oldest.value);
    const at = metaTime(now);
    const combined: CoreV1Event = {
      ...event,
      metadata: { ...event.metadata, name: eventName(event.involvedObject.name ?? "", now) },
      message: AGGREGATE_MESSAGE_PREFIX + (event.message ?? ""),
      count: 1,
      firstTimestamp: at,
      lastTimestamp: at,
    };
    return { event: combined, key: aggKey };
  }

  #observe(event: CoreV1Event, k: string, now: number): { event: CoreV1Event; patch: EventPatch | undefined } {
    const last = this.#observed.get(k);
    let patch: EventPatch | undefined;
    if (last && last.count > 0) {
      event.metadata = { ...event.metadata, name: last.name, resourceVersion: last.resourceVersion };
      if (last.firstTimestamp) event.firstTimestamp = last.firstTimestamp;
      event.count = last.count + 1;
      patch = {
        count: event.count,
        lastTimestamp: rfc3339(event.lastTimestamp ?? metaTime(now)),
        message: event.message ?? "",
      };
    }
    this.#observed.set(k, {
      count: event.count ?? 1,
      firstTimestamp: event.firstTimestamp,
      name: event.metadata?.name ?? "",
      resourceVersion: event.metadata?.resourceVersion,
    });
    return { event, patch };
  }

  #allow(event: CoreV1Event, now: number): boolean {
    const k = spamKey(event);
    let bucket = this.#spam.get(k);
    if (!bucket) {
      bucket = new TokenBucket(this.#spamQPS, this.#spamBurst, now);
      this.#spam.set(k, bucket);
    }
    return bucket.tryAccept(now);
  }
}
