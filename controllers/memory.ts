// What the CronJob reconciler remembers between passes: one object, one typed key, one forget.
//
// Nothing here decides whether a Job runs: that comes from the cluster (the Job's deterministic name,
// status.lastScheduleTime, status.active). What is remembered per CronJob only keeps Events and writes from
// repeating while the cache lags behind the reconciler's own writes, so a restart or a leader change, which
// starts with nothing, at most repeats an Event or a write (docs/architecture.md lists each fact). The parse
// caches are pure: parsed again on a miss.

/** A CronJob's identity for memory: namespace/name, plus its UID (a CronJob re-created under the same name is a
 * new CronJob and starts with nothing remembered). */
export interface CronJobKey {
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string;
}

/** The facts remembered per CronJob. A new fact is a new field here: forget() drops them whole. */
export interface Remembered {
  /**
   * Events that describe a state rather than an action (JobAlreadyActive for a slot, RunNowDeferred and
   * RunNowRefused for a request, TooManyMissedTimes for a window, a guard's reason), by topic: the state last
   * reported. Such an Event comes once per state, not on every pass while the state holds.
   */
  reported?: Map<string, string>;
  /** The status last written (the SHA-256 of its canonical JSON) and the resourceVersion it was based on. */
  lastWritten?: { basedOn: string; status: string };
  /**
   * Job UIDs already reported by SawCompletedJob, kept while the cached status still lists them as active or
   * has not booked their run: a cache that has not caught up with our status write must not repeat it.
   */
  sawCompleted?: Set<string>;
  /** UIDs of active Jobs Replace deleted, kept while status still lists them: they did not "go missing". */
  replaced?: Set<string>;
  /** The first status of a new CronJob was held back once behind other CronJobs' passes (announcesOnly). */
  announceDeferred?: boolean;
  /** Jobs this process created whose runs status does not show yet, and when (ms): statusDelayMs's clock. */
  fresh?: Map<string, number>;
  /**
   * The runs the last folded status write left unbooked (statusfold.ts), by Job name: their slot (ms). A pass that
   * no longer finds one of them counts its slot as run and writes at once.
   */
  folded?: Map<string, number>;
  /** The status-write token a folded pass reserved (statusfold.ts): when it is due (ms); the pass then writes. */
  reservedAt?: number;
  /** With spec.startTimeoutSeconds: UIDs of running Jobs whose Pods were seen started (never read again). */
  started?: Set<string>;
  /**
   * UIDs of Jobs this process deleted (history) or found gone (a live read answered 404), kept while the cache or
   * the stored status.active still has them (goneJobs): deleting or reading one again would only be answered 404.
   */
  gone?: Set<string>;
}

/**
 * The `gone` UIDs still worth keeping: those the cache still holds or the stored status.active still lists (either
 * would lead a pass to delete or read the Job again); undefined when none is left.
 */
export function goneJobs(
  gone: ReadonlySet<string> | undefined,
  cached: readonly { metadata?: { uid?: string } }[],
  active: readonly { uid?: string }[] | undefined,
): Set<string> | undefined {
  if (!gone?.size) return undefined;
  const listed = new Set([...cached.map((j) => j.metadata?.uid), ...(active ?? []).map((r) => r.uid)]);
  const kept = new Set([...gone].filter((uid) => listed.has(uid)));
  return kept.size ? kept : undefined;
}

/** Distinct (zone, schedule[, H owner]) entries kept parsed; insertion-ordered eviction. */
const PARSE_CACHE_SIZE = 10_000;

export class ReconcilerMemory<Loaded = unknown> {
  readonly #byCronJob = new Map<string, Remembered & { uid?: string }>();
  /**
   * Step 1's parse by cached object: the cache hands out the same frozen object until the CronJob changes, and
   * one run reconciles a CronJob several times. Gone with the object (a WeakMap: nothing to forget).
   */
  readonly #loaded = new WeakMap<object, Loaded>();
  /** Parsed (zone, schedule[, more schedules]) entries; an H schedule's entry is its CronJob's own (H is hashed per CronJob). */
  readonly #schedules = new Map<string, unknown>();

  /** What is remembered of a CronJob, created empty; a different UID under the same name starts a new one. */
  recall(key: CronJobKey): Remembered {
    const k = keyString(key);
    let r = this.#byCronJob.get(k);
    if (!r || (key.uid !== undefined && r.uid !== undefined && r.uid !== key.uid)) {
      r = key.uid !== undefined ? { uid: key.uid } : {};
      this.#byCronJob.set(k, r);
    } else if (r.uid === undefined && key.uid !== undefined) {
      r.uid = key.uid;
    }
    return r;
  }

  /** Everything remembered of a CronJob that is gone (or was re-created: see recall). */
  forget(key: Pick<CronJobKey, "namespace" | "name">): void {
    const k = keyString(key);
    this.#byCronJob.delete(k);
    for (const entry of this.#schedules.keys()) if (entry.endsWith(`\u0000${k}`)) this.#schedules.delete(entry);
  }

  /**
   * The parsed schedule, cached: a parse (cron-parser and zone rules) costs far more than a lookup, and a
   * schedule rarely changes. Keyed by zone and schedule, and for a schedule with H by the CronJob too: the same H schedule
   * resolves to another time for each CronJob. `moreSchedules`: the CronJob's other schedules as stored (the
   * more-schedules annotation's value), which the parse depends on too.
   */
  parsedSchedule<P>(
    key: CronJobKey,
    schedule: string,
    timeZone: string | undefined,
    parse: () => P,
    moreSchedules?: string,
  ): P {
    const hashed = schedule.includes("H") || !!moreSchedules?.includes("H");
    const owner = hashed ? keyString(key) : "";
    // Without other schedules the key is what it always was; with them, their text is part of it.
    const more = moreSchedules === undefined ? "" : `${moreSchedules}\u0000`;
    const k = `${timeZone ?? ""}\u0000${schedule}\u0000${more}${owner}`;
    let r = this.#schedules.get(k) as P | undefined;
    if (!r) {
      r = parse();
      if (this.#schedules.size >= PARSE_CACHE_SIZE) this.#schedules.delete(this.#schedules.keys().next().value!);
      this.#schedules.set(k, r);
    }
    return r;
  }

  /** Step 1's parse of a cached object, cached for as long as the cache holds that object. */
  loaded(raw: object, parse: () => Loaded): Loaded {
    let r = this.#loaded.get(raw);
    if (r === undefined) {
      r = parse();
      this.#loaded.set(raw, r);
    }
    return r;
  }

  /** How many CronJobs have something remembered, and how many schedules are cached (tests, and a gauge if ever needed). */
  sizes(): { cronJobs: number; schedules: number } {
    return { cronJobs: this.#byCronJob.size, schedules: this.#schedules.size };
  }

  /** Whether anything is remembered of a CronJob (its facts, or an H schedule of its own). */
  remembers(key: Pick<CronJobKey, "namespace" | "name">): boolean {
    const k = keyString(key);
    if (this.#byCronJob.has(k)) return true;
    for (const entry of this.#schedules.keys()) if (entry.endsWith(`\u0000${k}`)) return true;
    return false;
  }
}

function keyString(key: Pick<CronJobKey, "namespace" | "name">): string {
  return `${key.namespace}/${key.name}`;
}
