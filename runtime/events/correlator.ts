// client-go's EventCorrelator (tools/record/events_cache.go): aggregation of similar events, dedupe
// of identical ones into a count, and a spam filter. Kept free of I/O so it can be tested on its own;
// the recorder applies the result with the sink and reports back via updateState.
//
// One departure from client-go, in the spam filter. client-go charges every write, repeats included,
// to one bucket per source+object (25, then 1 per 5 min), so a noisy event (a FailedCreate repeated
// through an outage) uses up the object's budget and the distinct events that follow (the
// SuccessfulCreate after recovery) are dropped. Here the budget of new Events is per source + object +
// reason, and a repeat (a count++ update of an Event already recorded, identical or aggregated) draws
// on its own bucket per Event instead: repeats can never starve a distinct event.
import { rfc3339 } from "../metatime.ts";
import type { CoreV1Event } from "@kubernetes/client-node";
import type { Clock } from "../clock.ts";
import { TokenBucket } from "../tokenbucket.ts";

const DEFAULT_LRU_CACHE_SIZE = 4096;
const DEFAULT_SPAM_BURST = 25;
/** One token per five minutes, client-go's defaultSpamQPS. */
const DEFAULT_SPAM_QPS = 1 / 300;
/**
 * Updates (count++ patches) of one Event: the same burst, refilled every 10 s. Generous enough that a
 * periodic event (an every-minute CronJob's aggregated SuccessfulCreate) is never held back, tight
 * enough that a controller stuck in a hot loop patches one Event at most every 10 s.
 */
const DEFAULT_UPDATE_BURST = 25;
const DEFAULT_UPDATE_QPS = 1 / 10;
/**
 * Routine events (EventOptions.routine) of one object, whatever their reason: three (a CronJob run's create, end
 * and cleanup), then one per 5 minutes (client-go's spam rate, which client-go applies per object too), new Events
 * and updates alike. A controller keeps their facts elsewhere, so an object that does the same thing every minute
 * costs one Event write per 5 minutes, and one that acts hourly keeps all of them.
 */
const DEFAULT_ROUTINE_BURST = 3;
const DEFAULT_ROUTINE_QPS = 1 / 300;
const DEFAULT_AGGREGATE_MAX_EVENTS = 10;
const DEFAULT_AGGREGATE_INTERVAL_MS = 600_000;
export const AGGREGATE_MESSAGE_PREFIX = "(combined from similar events): ";

export interface CorrelatorOptions {
  clock?: Clock;
  lruCacheSize?: number;
  /** Budget of new Events per source + object + reason. */
  spamBurst?: number;
  spamQPS?: number;
  /** Budget of updates (count++ of an existing Event) per Event. */
  updateBurst?: number;
  updateQPS?: number;
  /** Budget of routine events (new Events and updates) per source + object. */
  routineBurst?: number;
  routineQPS?: number;
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
  /** Set when the event updates one recorded before (count > 1): a repeat, not a new Event. */
  patch: EventPatch | undefined;
  /** The dedupe key the write's outcome must be reported under (updateState); one key, one Event. */
  key: string;
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

/**
 * Token buckets by key with no size bound, each dropped once it has refilled (a full bucket is what a missing key
 * starts with, so forgetting it changes nothing). For budgets that must hold for every object of a fleet: an LRU
 * of 4,096 buckets forgets an every-minute CronJob's bucket among 5,000 within the minute, and a forgotten bucket is
 * a full one, so nothing would ever be held back. Memory is one bucket per key that spent a token recently.
 */
export class RefillingBuckets {
  readonly #qps: number;
  readonly #burst: number;
  readonly #buckets = new Map<string, TokenBucket>();
  #takesSinceSweep = 0;

  constructor(qps: number, burst: number) {
    this.#qps = qps;
    this.#burst = burst;
  }

  get size(): number {
    return this.#buckets.size;
  }

  tryAccept(key: string, nowMs: number): boolean {
    // Sweep once per as many takes as there are buckets: amortized O(1) per take.
    if (++this.#takesSinceSweep > this.#buckets.size) {
      this.#takesSinceSweep = 0;
      for (const [k, b] of this.#buckets) if (b.fullAt(nowMs)) this.#buckets.delete(k);
    }
    let bucket = this.#buckets.get(key);
    if (!bucket) {
      bucket = new TokenBucket(this.#qps, this.#burst, nowMs);
      this.#buckets.set(key, bucket);
    }
    return bucket.tryAccept(nowMs);
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

/** The involved object (and source): what the recorder keeps writes in order for. */
export function objectKey(e: CoreV1Event): string {
  return key(objectParts(e));
}

/**
 * The spam-filter key of new Events: source, involved object and reason (client-go: without the reason,
 * its SpamKeyFunc hook allows adding it), so one noisy reason cannot use up the budget of the others.
 */
function spamKey(e: CoreV1Event): string {
  return key([...objectParts(e), e.reason]);
}

/**
 * A Date at metav1.Time precision. client-node would send milliseconds (toISOString) and the server
 * would drop them; truncating here keeps what is cached equal to what is stored.
 */
export function metaTime(ms: number): Date {
  return new Date(Math.floor(ms / 1000) * 1000);
}

const systemClock: Clock = { now: () => new Date() };

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
  readonly #updateQPS: number;
  readonly #updateBurst: number;
  readonly #maxEvents: number;
  readonly #intervalMs: number;
  readonly #spam: LRU<TokenBucket>;
  readonly #updates: LRU<TokenBucket>;
  readonly #routine: RefillingBuckets;
  readonly #aggregates: LRU<AggregateRecord>;
  readonly #observed: LRU<Observation>;

  constructor(opts: CorrelatorOptions = {}) {
    const size = opts.lruCacheSize ?? DEFAULT_LRU_CACHE_SIZE;
    this.#clock = opts.clock ?? systemClock;
    this.#spamQPS = opts.spamQPS ?? DEFAULT_SPAM_QPS;
    this.#spamBurst = opts.spamBurst ?? DEFAULT_SPAM_BURST;
    this.#updateQPS = opts.updateQPS ?? DEFAULT_UPDATE_QPS;
    this.#updateBurst = opts.updateBurst ?? DEFAULT_UPDATE_BURST;
    this.#maxEvents = opts.aggregateMaxEvents ?? DEFAULT_AGGREGATE_MAX_EVENTS;
    this.#intervalMs = opts.aggregateIntervalMs ?? DEFAULT_AGGREGATE_INTERVAL_MS;
    this.#spam = new LRU(size);
    this.#updates = new LRU(size);
    this.#routine = new RefillingBuckets(
      opts.routineQPS ?? DEFAULT_ROUTINE_QPS,
      opts.routineBurst ?? DEFAULT_ROUTINE_BURST,
    );
    this.#aggregates = new LRU(size);
    this.#observed = new LRU(size);
  }

  /**
   * Decide what to write for a new event: a new Event, or an update (count++) of one recorded before.
   * The spam filter is a separate step (allow) because a repeat the recorder folds into a write still
   * waiting in its queue costs no write and so no budget. As in client-go, the dedupe cache is updated
   * before the spam filter runs, so occurrences dropped as spam are still counted by the next write.
   */
  correlate(newEvent: CoreV1Event, now: number = this.#clock.now().getTime()): CorrelationResult {
    // A copy of the top level is enough: the correlator only assigns the event's own fields (metadata is replaced
    // whole, never changed in place). structuredClone of every Event cost the recorder more than the rest of it.
    const { event: aggregated, key: k } = this.#aggregate({ ...newEvent }, now);
    const { event, patch } = this.#observe(aggregated, k, now);
    return { event, patch, key: k };
  }

  /**
   * The spam filter (token buckets, golang.org/x/time/rate semantics). A new Event draws on the bucket
   * of its source + object + reason (client-go's 25, then 1 per 5 min); an update draws on the bucket
   * of its own Event, so neither a flood of repeats nor one noisy reason can starve a distinct event. A routine
   * event, new or update, draws on the routine bucket of its source + object, apart from both: routine events can
   * never use up the budget of the others.
   */
  allow(result: CorrelationResult, now: number = this.#clock.now().getTime(), routine = false): boolean {
    if (routine) return this.#routine.tryAccept(objectKey(result.event), now);
    if (result.patch) return this.#take(this.#updates, result.key, this.#updateQPS, this.#updateBurst, now);
    return this.#take(this.#spam, spamKey(result.event), this.#spamQPS, this.#spamBurst, now);
  }

  /**
   * A new Event the spam filter dropped was never written: the next occurrence creates it (with the count) instead
   * of patching a name the server never had (a 404, then a create: two requests for one Event).
   */
  dropped(result: CorrelationResult): void {
    if (result.patch) return;
    const prev = this.#observed.get(result.key);
    if (prev && prev.name === result.event.metadata?.name) this.#observed.set(result.key, { ...prev, name: "" });
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
    if (last && last.count > 0 && !last.name) {
      // Its Event was never written (dropped by the spam filter): a new Event, carrying the occurrences.
      if (last.firstTimestamp) event.firstTimestamp = last.firstTimestamp;
      event.count = last.count + 1;
    } else if (last && last.count > 0) {
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

  #take(buckets: LRU<TokenBucket>, k: string, qps: number, burst: number, now: number): boolean {
    let bucket = buckets.get(k);
    if (!bucket) {
      bucket = new TokenBucket(qps, burst, now);
      buckets.set(k, bucket);
    }
    return bucket.tryAccept(now);
  }
}
