import { ScheduleError } from "./errors.ts";
import { parseScheduleSpec, type CronFields } from "./grammar.ts";
import { CronSlots } from "./slots.ts";
import { validateTimeZone, ZoneRules } from "./timezone.ts";

export interface Schedule {
  /** Normalised text: the five fields separated by single spaces, the descriptor, or `@every <Go duration>`. */
  readonly description: string;
  /** The zone slots are computed in: spec.timeZone, or "UTC" when unset. */
  readonly timeZone: string;
  readonly isEvery: boolean;
  /** The `@every` interval in whole seconds; undefined for cron schedules. */
  readonly everySeconds: number | undefined;
  /**
   * True when DST changes are followed in real time (hour field `*`, `?` or a step; always for `@every`);
   * false when each local slot fires exactly once (a skipped slot shifted by the gap, a repeated one at its
   * first occurrence).
   */
  readonly followsRealTime: boolean;
  /**
   * The first slot strictly after `after`. `anchor` (lastScheduleTime ?? creationTimestamp) is what `@every`
   * counts from; cron schedules ignore it. Without an anchor `@every` counts from `after`, as robfig does.
   */
  next(after: Date, anchor?: Date): Date;
  /**
   * The latest slot at or before `notAfter`; for `@every`, the latest anchor + k·interval with k ≥ 1, and
   * undefined when there is none yet or no anchor is given.
   */
  mostRecent(notAfter: Date, anchor?: Date): Date | undefined;
}

/**
 * What next() returns when no slot is left (a window's end passed, exclusions hold every slot): the last instant a
 * Date can hold, a fixed point of every schedule's next().
 */
export const NO_SLOT = 8.64e15;

/** Whether a slot next() gave is a real one (not NO_SLOT). */
export const isSlot = (d: Date | undefined): d is Date => d !== undefined && d.getTime() < NO_SLOT;

type ParseScheduleResult = { ok: true; schedule: Schedule } | { ok: false; error: ScheduleError };

function millis(d: Date, what: string): number {
  const ms = d instanceof Date ? d.getTime() : NaN;
  if (!Number.isFinite(ms)) throw new RangeError(`schedule: ${what} is not a valid Date`);
  return ms;
}

/**
 * A schedule that answers next/mostRecent from another's (exclusions, a window): it is that schedule in every other
 * respect — its text, zone, `@every` and DST policy.
 */
export abstract class WrappedSchedule implements Schedule {
  readonly inner: Schedule;

  constructor(inner: Schedule) {
    this.inner = inner;
  }

  get description(): string {
    return this.inner.description;
  }
  get timeZone(): string {
    return this.inner.timeZone;
  }
  get isEvery(): boolean {
    return this.inner.isEvery;
  }
  get everySeconds(): number | undefined {
    return this.inner.everySeconds;
  }
  get followsRealTime(): boolean {
    return this.inner.followsRealTime;
  }

  abstract next(after: Date, anchor?: Date): Date;
  abstract mostRecent(notAfter: Date, anchor?: Date): Date | undefined;
}

/**
 * The last few answers of a pure function of one instant. A parsed schedule is shared by every CronJob with the
 * same schedule and zone (the controller's parse cache), and the passes of a burst ask it about the same second
 * thousands of times: the cron walk (cron-parser, zone rules) then runs once per second, not once per pass.
 */
class InstantMemo<V> {
  readonly #keys: number[] = [];
  readonly #values: V[] = [];
  #at = 0;

  get(key: number, compute: (key: number) => V): V {
    const i = this.#keys.indexOf(key);
    if (i >= 0) return this.#values[i]!;
    const v = compute(key);
    this.#keys[this.#at] = key;
    this.#values[this.#at] = v;
    this.#at = (this.#at + 1) % MEMO_SIZE;
    return v;
  }
}
const MEMO_SIZE = 4;

class CronSchedule implements Schedule {
  readonly description: string;
  readonly timeZone: string;
  readonly isEvery = false;
  readonly everySeconds = undefined;
  readonly followsRealTime: boolean;
  readonly #slots: CronSlots;
  readonly #next = new InstantMemo<number>();
  readonly #mostRecent = new InstantMemo<number | undefined>();

  constructor(fields: CronFields, description: string, zone: ZoneRules) {
    this.description = description;
    this.timeZone = zone.name;
    this.followsRealTime = fields.hourFollowsRealTime;
    this.#slots = new CronSlots(fields, zone);
  }

  next(after: Date, _anchor?: Date): Date {
    return new Date(this.#next.get(millis(after, "after"), (t) => this.#slots.next(t)));
  }

  mostRecent(notAfter: Date, _anchor?: Date): Date | undefined {
    const t = this.#mostRecent.get(millis(notAfter, "notAfter"), (n) => this.#slots.mostRecent(n));
    return t === undefined ? undefined : new Date(t);
  }
}

class EverySchedule implements Schedule {
  readonly description: string;
  readonly timeZone: string;
  readonly isEvery = true;
  readonly everySeconds: number;
  readonly followsRealTime = true;
  readonly #interval: number;

  constructor(seconds: number, description: string, timeZone: string) {
    this.description = description;
    this.timeZone = timeZone;
    this.everySeconds = seconds;
    this.#interval = seconds * 1000;
  }

  next(after: Date, anchor?: Date): Date {
    const t = millis(after, "after");
    // Slots keep second precision: robfig drops the anchor's sub-second part too.
    const base = Math.floor(millis(anchor ?? after, "anchor") / 1000) * 1000;
    const k = Math.max(1, Math.floor((t - base) / this.#interval) + 1);
    return new Date(base + k * this.#interval);
  }

  mostRecent(notAfter: Date, anchor?: Date): Date | undefined {
    if (anchor === undefined) return undefined;
    const t = millis(notAfter, "notAfter");
    const base = Math.floor(millis(anchor, "anchor") / 1000) * 1000;
    const k = Math.floor((t - base) / this.#interval);
    return k >= 1 ? new Date(base + k * this.#interval) : undefined;
  }
}

/**
 * The schedules parsed, by zone and text: a fleet repeats a few schedules (`why -A` over 5,000 CronJobs of 4
 * schedules parsed each CronJob's, 0.5 s of its 2.4 s of CPU), and a Schedule is a value: what it answers depends on
 * its text, its zone and the instant asked, so one object serves every CronJob that has them (its memos too).
 * Bounded: past PARSED_MAX the oldest goes first.
 */
const PARSED = new Map<string, Schedule>();
const PARSED_MAX = 4096;

/**
 * Parses spec.schedule (and spec.timeZone, when set) with Kubernetes' grammar. Never throws: anything that
 * is not a valid schedule yields an error naming the field, the value and what is allowed.
 */
export function parseSchedule(schedule: string, timeZone?: string): ParseScheduleResult {
  // No zone and an empty one are two keys: "" is refused, no zone is UTC.
  const zoneKey = timeZone === undefined ? "-" : `+${timeZone}`;
  const key = typeof schedule === "string" ? `${zoneKey}\u0000${schedule}` : undefined;
  const known = key === undefined ? undefined : PARSED.get(key);
  if (known) return { ok: true, schedule: known };
  const parsed = parseAnew(schedule, timeZone);
  if (parsed.ok && key !== undefined) {
    if (PARSED.size >= PARSED_MAX) PARSED.delete(PARSED.keys().next().value!);
    PARSED.set(key, parsed.schedule);
  }
  return parsed;
}

function parseAnew(schedule: string, timeZone?: string): ParseScheduleResult {
  try {
    if (typeof schedule !== "string") {
      return { ok: false, error: new ScheduleError("spec.schedule", String(schedule), "must be a string") };
    }
    const spec = parseScheduleSpec(schedule);
    if (!spec.ok) return { ok: false, error: new ScheduleError("spec.schedule", schedule, spec.reason) };
    if (timeZone !== undefined) {
      const tzError = validateTimeZone(timeZone);
      if (tzError) return { ok: false, error: tzError };
    }
    const zoneName = timeZone ?? "UTC";
    const s = spec.spec;
    if (s.kind === "every") return { ok: true, schedule: new EverySchedule(s.seconds, s.description, zoneName) };
    return { ok: true, schedule: new CronSchedule(s.fields, s.description, new ZoneRules(zoneName)) };
  } catch (e) {
    // Only reachable through a bug or a runtime without ICU; still a result, as promised.
    const reason = `could not be parsed: ${e instanceof Error ? e.message : String(e)}`;
    return { ok: false, error: new ScheduleError("spec.schedule", String(schedule), reason) };
  }
}
