// A CronJob's schedules as the hub (v1, the storage version) keeps them: spec.schedule with spec.timeZone is
// the first, and the schedules a v2 object has after its first are kept in MORE_SCHEDULES_ANNOTATION. The
// conversion (api/v2/conversion.ts) writes and takes back that annotation; the controller, the webhooks and
// `kubectl cron` read a CronJob's whole list through scheduleEntriesOf, so a v1 reader never sees one schedule
// where a v2 writer put several.
import { type FieldError, invalidField } from "../../runtime/field.ts";
import { isObj } from "../../runtime/objects.ts";
import { MAX_BACKFILL_SLOTS } from "./backfill.ts";
import { GROUP } from "./groupversion_info.ts";
import type { ScheduleSource } from "./job.ts";
import {
  ExcludingSchedule,
  type ExclusionHit,
  type Exclusions,
  type HashKey,
  MAX_SCHEDULE_LENGTH,
  parseScheduleList,
  resolveHashedSchedule,
  ScheduleSet,
  unionCountSlots,
  UnionSchedule,
  isSlot,
  NoSchedule,
  type SlotWindow,
  WindowedSchedule,
} from "./schedule/index.ts";
import { documentedKey } from "./metadata.ts";
import { slotWindowOf } from "./limits.ts";
import { upstreamsOf } from "./after.ts";

export type { ExclusionHit };

/**
 * On a v1 CronJob: its schedules after the first, as JSON `[{"schedule":"…","timeZone":"…"}, …]` (timeZone
 * left out when unset), written by the v1 ↔ v2 conversion.
 */
export const MORE_SCHEDULES_ANNOTATION = documentedKey(`${GROUP}/more-schedules`, () => ({
  on: "CronJob (as v1 reads it)",
  setBy: "the v1 ↔ v2 conversion",
  format: 'JSON: `[{"schedule":"<cron>","timeZone":"<IANA zone>"}, …]` (timeZone left out when unset)',
  meaning:
    "A v2 CronJob's schedules after its first, kept on the v1 object (the first is `spec.schedule` and " +
    "`spec.timeZone`), so a v1 client that reads and writes it loses none; the controller runs the union of all. " +
    "Not to be written by hand: set `spec.schedules` through the v2 API.",
}));

/** One schedule of a CronJob's list: a cron expression and the zone it is evaluated in (UTC when unset). */
export interface ScheduleEntry {
  schedule: unknown;
  timeZone?: unknown;
}

/** An entry with its fields in a fixed order: what the annotation holds, so a round trip is byte for byte. */
export function scheduleEntry(v: unknown): ScheduleEntry {
  const e = isObj(v) ? v : {};
  return { schedule: e.schedule, ...(e.timeZone !== undefined ? { timeZone: e.timeZone } : {}) };
}

/** The annotation's value for `more` (the schedules after the first). */
export function moreSchedulesValue(more: readonly unknown[]): string {
  return JSON.stringify(more.map(scheduleEntry));
}

/**
 * The annotation's schedules, or undefined when `text` is not what moreSchedulesValue writes (not JSON, not a
 * non-empty list of entries with a string schedule, or not in its canonical form).
 */
export function parseMoreSchedules(text: string | undefined): ScheduleEntry[] | undefined {
  if (text === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(v) || v.length === 0 || !v.every((e) => isObj(e) && typeof e.schedule === "string")) {
    return undefined;
  }
  if (moreSchedulesValue(v) !== text) return undefined;
  return v.map(scheduleEntry);
}

const ANNOTATION_FIELD = `metadata.annotations[${MORE_SCHEDULES_ANNOTATION}]`;

type EntriesResult = { ok: true; entries: ScheduleEntry[] } | { ok: false; error: FieldError };

/**
 * A v1 CronJob's schedules, first spec.schedule (with spec.timeZone), then the annotation's. An annotation
 * that is not the conversion's own writing is an error naming it: the CronJob's schedules are then unknown,
 * and guessing would run a schedule nobody asked for, or miss one.
 */
export function scheduleEntriesOf(obj: unknown): EntriesResult {
  const o = isObj(obj) ? obj : {};
  const spec = isObj(o.spec) ? o.spec : {};
  const meta = isObj(o.metadata) ? o.metadata : {};
  const annotations = isObj(meta.annotations) ? meta.annotations : {};
  const first: ScheduleEntry = {
    schedule: spec.schedule,
    ...(spec.timeZone !== undefined ? { timeZone: spec.timeZone } : {}),
  };
  const raw = annotations[MORE_SCHEDULES_ANNOTATION];
  if (raw === undefined) return { ok: true, entries: [first] };
  const more = typeof raw === "string" ? parseMoreSchedules(raw) : undefined;
  if (!more) {
    return {
      ok: false,
      error: invalidField(
        ANNOTATION_FIELD,
        raw,
        'must be a JSON list of {"schedule": "<cron>", "timeZone": "<IANA zone>"} as the v2 API writes it ' +
          "(set spec.schedules through batch.tutorial.kubebuilder.io/v2 instead), or be removed",
      ),
    };
  }
  return { ok: true, entries: [first, ...more] };
}

/** Where a schedule list error of a v1 object points: entry 0 is spec.schedule/spec.timeZone, the rest the annotation. */
export function v1ScheduleField(field: string): string {
  const m = /^spec\.schedules(?:\[(\d+)\])?(.*)$/.exec(field);
  if (!m) return field;
  if (m[1] === undefined) return ANNOTATION_FIELD;
  const index = Number(m[1]);
  if (index === 0) return m[2] === ".timeZone" ? "spec.timeZone" : m[2] === ".schedule" ? "spec.schedule" : "spec";
  return `${ANNOTATION_FIELD}[${index - 1}]${m[2]}`;
}

/**
 * A CronJob's schedules, parsed once: what the controller computes slots with, the webhook validates and counts a
 * backfill range with, and `kubectl cron` shows. One schedule is a union of one, which gives exactly that
 * schedule's answers (property-tested), so no caller needs a case of its own for it; the few places where one
 * schedule and several differ on purpose (what `@every` counts from, whether a Job names its sources) are
 * decided here.
 */
export class CronJobSchedules {
  /** The union as one Schedule; with one schedule, exactly that schedule's slots. */
  readonly schedule: UnionSchedule;
  /** Each schedule as written, with its zone and its text with H resolved, in the list's order. */
  readonly entries: readonly (ScheduleSource & { resolvedSchedule: string })[];
  /**
   * status.resolvedSchedule: each schedule with H resolved, joined by "; ", cut to the CRD's maxLength with "…" (a
   * status the API server refuses would stop every status write of the CronJob).
   */
  readonly resolved: string;

  readonly #entries: readonly ScheduleEntry[];
  readonly #key: HashKey;
  /** The exclusions applied (excluding()); none for the schedules as written. */
  readonly exclusions: Exclusions | undefined;
  /** The union of the schedules as written, no slot excluded (the same as `schedule` without exclusions). */
  readonly written: UnionSchedule;

  constructor(
    set: ScheduleSet,
    entries: readonly ScheduleEntry[],
    key: HashKey,
    exclusions?: { exclusions: Exclusions; written: UnionSchedule },
  ) {
    this.schedule = new UnionSchedule(set);
    this.written = exclusions?.written ?? this.schedule;
    this.#entries = entries;
    this.#key = key;
    this.exclusions = exclusions?.exclusions;
    this.entries = set.members.map((m) => {
      const tz = entries[m.index]?.timeZone;
      const resolved = resolveHashedSchedule(m.text, key);
      return {
        index: m.index,
        schedule: m.text,
        ...(typeof tz === "string" ? { timeZone: tz } : {}),
        // Every member parsed, so it resolves.
        resolvedSchedule: resolved.ok ? resolved.resolved : m.text,
      };
    });
    // Once per parse (the reconciler caches the parse), not on every pass that reads it.
    const joined = this.entries.map((e) => e.resolvedSchedule).join("; ");
    this.resolved = joined.length <= MAX_SCHEDULE_LENGTH ? joined : `${joined.slice(0, MAX_SCHEDULE_LENGTH - 1)}…`;
  }

  /**
   * The same schedules skipping the slots `exclusions` hold: each schedule reads the windows in its own zone, and a
   * slot of several schedules runs when one of them is not excluded.
   */
  excluding(exclusions: Exclusions): CronJobSchedules {
    const set = new ScheduleSet(
      this.written.set.members.map((m) => ({ ...m, schedule: new ExcludingSchedule(m.schedule, exclusions) })),
    );
    return new CronJobSchedules(set, this.#entries, this.#key, { exclusions, written: this.written });
  }

  /**
   * What excludes a slot of the schedules as written: undefined unless every schedule the slot is one of holds it
   * excluded in its own zone (a slot one of them keeps runs), else the first one's window.
   */
  excludedBy(slot: Date, anchor: Date | undefined): ExclusionHit | undefined {
    if (!this.exclusions) return undefined;
    const members = this.written.set.members;
    let first: ExclusionHit | undefined;
    for (const i of this.written.sourcesAt(slot, anchor)) {
      const zone = members.find((x) => x.index === i)?.schedule.timeZone;
      const hit = zone !== undefined ? this.exclusions.excludedBy(slot, zone) : undefined;
      if (!hit) return undefined;
      first ??= hit;
    }
    return first;
  }

  /** More than one schedule (API v2's list): its slots' Jobs name the schedules they came from. */
  get several(): boolean {
    return this.entries.length > 1;
  }

  /**
   * What `@every` counts from. One schedule: the last run, else the creation (the built-in controller's rule, so a
   * changed interval starts from the last run). Several: the creation, each `@every` member on its own grid, so
   * another member's run (which moves lastScheduleTime) does not re-phase it.
   */
  everyAnchor(times: {
    lastScheduleTime?: string | undefined;
    creationTimestamp?: string | undefined;
  }): Date | undefined {
    const from = this.several ? times.creationTimestamp : (times.lastScheduleTime ?? times.creationTimestamp);
    return from ? new Date(from) : undefined;
  }

  /**
   * The schedules a slot's Job names as its sources (`anchor`: what `@every` counted from when the slot was found).
   * None for one schedule: its Jobs are as they always were.
   */
  sourcesAt(slot: Date, anchor: Date | undefined): ScheduleSource[] | undefined {
    if (!this.several) return undefined;
    const at = this.schedule.sourcesAt(slot, anchor);
    const sources = at.map((i) => {
      const { resolvedSchedule: _r, ...source } = this.entries.find((e) => e.index === i)!;
      return source;
    });
    return sources.length ? sources : undefined;
  }

  /**
   * How many slots a backfill range [from, to] holds, counted to just past MAX_BACKFILL_SLOTS (`exact: false`
   * beyond it): the answer is only ever "within the limit, this many" or "too many". The controller, the webhook
   * and `kubectl cron backfill` all count with it. `anchor`: the creation time, which a backfill's `@every` slots
   * count from.
   */
  backfillSlotCount(from: Date, to: Date, anchor: Date): { count: number; exact: boolean } {
    return unionCountSlots(this.schedule.set, new Date(from.getTime() - 1), to, anchor, MAX_BACKFILL_SLOTS);
  }
}

type CronJobSchedulesResult =
  | { ok: true; schedules: CronJobSchedules; warnings: string[] }
  | { ok: false; errors: FieldError[]; warnings: string[] };

/**
 * A v1 CronJob's schedules (spec.schedule with spec.timeZone, then the more-schedules annotation's) validated and
 * parsed, H hashed with `key`; errors at the v1 object's own fields. Never throws.
 */
export function cronJobSchedules(obj: unknown, key: HashKey): CronJobSchedulesResult {
  const spec = isObj(obj) && isObj(obj.spec) ? obj.spec : {};
  const meta = isObj(obj) && isObj(obj.metadata) ? obj.metadata : {};
  const more = isObj(meta.annotations) ? meta.annotations[MORE_SCHEDULES_ANNOTATION] : undefined;
  if (spec.schedule === undefined && more === undefined && upstreamsOf(spec).length > 0)
    return { ok: true, schedules: afterOnly(key), warnings: [] };
  const entries = scheduleEntriesOf(obj);
  if (!entries.ok) return { ok: false, errors: [entries.error], warnings: [] };
  const list = parseScheduleList(entries.entries, key);
  const warnings = list.warnings.map((w) => w.replace(/^(\S+):/, (_, f: string) => `${v1ScheduleField(f)}:`));
  const window = slotWindowOf(isObj(obj) ? obj.spec : undefined);
  const errors = [
    ...(list.ok ? [] : list.errors.map((e) => ({ ...e, field: v1ScheduleField(e.field) }))),
    ...(window.ok ? [] : window.errors),
  ];
  if (!list.ok || !window.ok) return { ok: false, errors, warnings };
  return { ok: true, schedules: new CronJobSchedules(within(list.set, window.window), entries.entries, key), warnings };
}

/**
 * API v2's spec.schedules validated and parsed, errors at spec.schedules[i]; `spec`: the rest of the spec (its
 * startTime and endTime window the slots). Never throws.
 */
export function scheduleListSchedules(list: unknown, key: HashKey, spec?: unknown): CronJobSchedulesResult {
  const empty = list === undefined || (Array.isArray(list) && list.length === 0);
  if (empty && upstreamsOf(isObj(spec) ? spec : {}).length > 0)
    return { ok: true, schedules: afterOnly(key), warnings: [] };
  const parsed = parseScheduleList(list, key);
  const window = slotWindowOf(spec);
  if (!parsed.ok) return window.ok ? parsed : { ...parsed, errors: [...parsed.errors, ...window.errors] };
  if (!window.ok) return { ok: false, errors: window.errors, warnings: parsed.warnings };
  const entries = Array.isArray(list) ? list.map(scheduleEntry) : [];
  return {
    ok: true,
    schedules: new CronJobSchedules(within(parsed.set, window.window), entries, key),
    warnings: parsed.warnings,
  };
}

/** The schedules of a CronJob that has none of its own (spec.after only): one that never has a slot. */
function afterOnly(key: HashKey): CronJobSchedules {
  return new CronJobSchedules(new ScheduleSet([{ index: 0, text: "", schedule: new NoSchedule() }]), [], key);
}

/** Each schedule of a set with no slot outside the window (spec.startTime, spec.endTime). */
function within(set: ScheduleSet, window: SlotWindow | undefined): ScheduleSet {
  if (!window) return set;
  return new ScheduleSet(set.members.map((m) => ({ ...m, schedule: new WindowedSchedule(m.schedule, window) })));
}

/** How many slots shortestInterval compares: enough to meet a weekly or monthly pattern's shortest gap. */
const INTERVAL_SLOTS = 50;

/**
 * The shortest time between two runs of a CronJob's schedules, in seconds: what a run must fit in to be over
 * before the next one is due. An `@every` schedule's is its period; otherwise it is the smallest gap among the
 * union's first 50 slots after `from` (each `@every` member counted from `from`), so its cost is bounded and the
 * same `from` (the creation time, say) always gives the same answer. A DST change in that span counts: a daily
 * schedule in a zone with DST has 23h between its runs around the day the clocks go forward.
 */
export function shortestInterval(schedules: CronJobSchedules, from: Date): number {
  const { schedule } = schedules;
  if (schedule.isEvery && schedule.everySeconds !== undefined) return schedule.everySeconds;
  let shortest = Infinity;
  let previous: number | undefined;
  let seen = 0;
  for (const slot of schedule.set.slotsAfter(from, from)) {
    const at = slot.at.getTime();
    // Past a window's end (spec.endTime) there is no slot, and no gap.
    if (!isSlot(slot.at)) break;
    if (previous !== undefined) shortest = Math.min(shortest, at - previous);
    previous = at;
    if (++seen === INTERVAL_SLOTS) break;
  }
  return shortest / 1000;
}
