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

type ParseScheduleResult = { ok: true; schedule: Schedule } | { ok: false; error: ScheduleError };

function millis(d: Date, what: string): number {
  const ms = d instanceof Date ? d.getTime() : NaN;
  if (!Number.isFinite(ms)) throw new RangeError(`schedule: ${what} is not a valid Date`);
  return ms;
}

class CronSchedule implements Schedule {
  readonly description: string;
  readonly timeZone: string;
  readonly isEvery = false;
  readonly everySeconds = undefined;
  readonly followsRealTime: boolean;
  readonly #slots: CronSlots;

  constructor(fields: CronFields, description: string, zone: ZoneRules) {
    this.description = description;
    this.timeZone = zone.name;
    this.followsRealTime = fields.hourFollowsRealTime;
    this.#slots = new CronSlots(fields, zone);
  }

  next(after: Date, _anchor?: Date): Date {
    return new Date(this.#slots.next(millis(after, "after")));
  }

  mostRecent(notAfter: Date, _anchor?: Date): Date | undefined {
    const t = this.#slots.mostRecent(millis(notAfter, "notAfter"));
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
 * Parses spec.schedule (and spec.timeZone, when set) with Kubernetes' grammar. Never throws: anything that
 * is not a valid schedule yields an error naming the field, the value and what is allowed.
 */
export function parseSchedule(schedule: string, timeZone?: string): ParseScheduleResult {
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
