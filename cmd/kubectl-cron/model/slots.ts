// `kubectl cron next`: the next fire times of a CronJob in its own zone, computed by the schedule module the
// controller uses, with the DST cases spelled out (a skipped local time, a repeated hour, an offset change).
// A schedule with H is resolved with the CronJob's namespace/name first, as the controller does. The slots are the
// schedules' as written; one an exclusion window holds (spec.exclusions) says which (model/exclusions.ts).
import type { CronJobSchedules, ScheduleSource } from "../../../api/v1/index.ts";
import {
  NO_SLOT,
  parseScheduleSpec,
  type Schedule,
  ZoneRules,
  type CronFields,
} from "../../../api/v1/schedule/index.ts";
import type { Excluded } from "./exclusions.ts";

export interface FireTime {
  /** RFC 3339 in the CronJob's zone, e.g. 2026-03-29T03:30:00+02:00. */
  time: string;
  /** The same instant in UTC. */
  utc: string;
  /** The zone's offset at that instant, e.g. "+02:00". */
  offset: string;
  /** What DST does to this slot, when it does something. */
  note?: string;
  /** The exclusion window that holds it (spec.exclusions): it is skipped, not run. */
  excluded?: Excluded;
}

const MINUTE = 60_000;

function formatOffset(offsetMs: number): string {
  const sign = offsetMs < 0 ? "-" : "+";
  const abs = Math.abs(offsetMs) / MINUTE;
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
}

/** Wall-clock text of an instant at an offset: "2026-03-29T03:30:00". */
function wallText(ms: number, offsetMs: number): string {
  return new Date(ms + offsetMs).toISOString().slice(0, 19);
}

const hhmm = (wall: string) => wall.slice(11, 16);

/** What a slot's time is read in: a schedule's zone, and its fields (a cron schedule's) for the DST notes. */
interface SlotZone {
  zone: ZoneRules;
  fields: CronFields | undefined;
  followsRealTime: boolean;
}

/** A slot at `t` in `z`, with what DST does to it; `prevOffset`: the zone's offset at the time before it. */
function fireTime(z: SlotZone, t: number, prevOffset: number): FireTime {
  const { zone } = z;
  const offset = zone.offsetAt(t);
  const wall = wallText(t, offset);
  const notes: string[] = [];
  if (offset !== prevOffset) notes.push(`offset changed ${formatOffset(prevOffset)} → ${formatOffset(offset)}`);
  const dst = dstNote(zone, t, wall, z.fields, z.followsRealTime);
  if (dst) notes.push(dst);
  return {
    time: `${wall}${offset === 0 && zone.isUTC ? "Z" : formatOffset(offset)}`,
    utc: `${new Date(t).toISOString().slice(0, 19)}Z`,
    offset: formatOffset(offset),
    ...(notes.length > 0 ? { note: notes.join("; ") } : {}),
  };
}

/** A fire time with the schedules it came from, when the CronJob has several. */
interface SourcedFireTime extends FireTime {
  sources?: ScheduleSource[];
}

/**
 * The next `count` slots of a CronJob's schedules after `now` (the union, a second two schedules share shown once),
 * each in the zone of the first schedule it came from, with the schedules it came from when there are several.
 * `anchor`: what `@every` counts from (CronJobSchedules.everyAnchor), as the controller runs them. `excludedBy`: what
 * holds a slot (model/exclusions.ts excludingSchedules), marked on it.
 */
export function nextRuns(
  schedules: CronJobSchedules,
  anchor: Date | undefined,
  now: Date,
  count: number,
  excludedBy?: (slot: Date, anchor: Date | undefined) => Excluded | undefined,
): SourcedFireTime[] {
  const times: SourcedFireTime[] = [];
  if (count <= 0) return times;
  for (const t of fireTimes(schedules, anchor, now, excludedBy)) {
    times.push(t);
    if (times.length >= count) break;
  }
  return times;
}

/**
 * The slots after `now` as nextRuns gives them, one at a time, computed only as they are asked for: a caller that
 * wants the slots up to a time stops there (the dashboard's marks: a window of a day holds 96 slots of a quarter-hour
 * schedule, not the thousands a bound on the count would compute). It ends where the schedules have no slot left
 * (past spec.endTime; a CronJob with no schedule of its own, spec.after only, has none at all).
 */
export function* fireTimes(
  schedules: CronJobSchedules,
  anchor: Date | undefined,
  now: Date,
  excludedBy?: (slot: Date, anchor: Date | undefined) => Excluded | undefined,
): Generator<SourcedFireTime, void, undefined> {
  const members = schedules.schedule.set.members;
  const zones = new Map(members.map((m) => [m.index, slotZone(m.schedule, schedules.entries, m.index)]));
  const slots = schedules.schedule.set.slotsAfter(now, anchor);
  // Read once a slot is found: a `now` past every slot may lie beyond what a zone's rules can say.
  let prevOffsets: Map<number, number> | undefined;
  for (;;) {
    const slot = slots.next().value;
    const t = slot.at.getTime();
    if (t >= NO_SLOT) return;
    prevOffsets ??= new Map([...zones].map(([i, z]) => [i, z.zone.offsetAt(now.getTime())]));
    const first = slot.sources[0]!;
    const time = fireTime(zones.get(first)!, t, prevOffsets.get(first)!);
    for (const i of slot.sources) prevOffsets.set(i, zones.get(i)!.zone.offsetAt(t));
    const sources = schedules.sourcesAt(slot.at, anchor);
    const excluded = excludedBy?.(slot.at, anchor);
    yield { ...time, ...(sources ? { sources } : {}), ...(excluded ? { excluded } : {}) };
  }
}

function slotZone(
  schedule: Schedule,
  schedules: readonly { index: number; resolvedSchedule: string }[],
  index: number,
): SlotZone {
  const resolved = schedules.find((s) => s.index === index)!.resolvedSchedule;
  const spec = parseScheduleSpec(resolved);
  return {
    zone: new ZoneRules(schedule.timeZone),
    fields: spec.ok && spec.spec.kind === "cron" ? spec.spec.fields : undefined,
    followsRealTime: schedule.followsRealTime,
  };
}

function dstNote(
  zone: ZoneRules,
  t: number,
  wall: string,
  fields: CronFields | undefined,
  followsRealTime: boolean,
): string | undefined {
  // A fixed-hour slot whose local time does not match the fields was moved out of a DST gap.
  if (fields && !followsRealTime && !matchesTime(fields, wall)) {
    return `shifted: the local time it names does not exist on ${wall.slice(0, 10)} (clocks go forward), so it runs at ${hhmm(wall)}`;
  }
  // Around a fall-back transition one wall-clock hour happens twice.
  const around = zone.firstTransitionIn(t - 3 * 60 * MINUTE, t + 3 * 60 * MINUTE);
  if (!around || around.before <= around.after) return undefined;
  const delta = around.before - around.after;
  if (t >= around.at - delta && t < around.at) {
    return followsRealTime
      ? `${hhmm(wall)} happens twice today (clocks go back): this is the first`
      : `${hhmm(wall)} happens twice today (clocks go back): it runs once, at the first`;
  }
  if (t >= around.at && t < around.at + delta) return `${hhmm(wall)} again (clocks went back)`;
  return undefined;
}

function matchesTime(fields: CronFields, wall: string): boolean {
  const hour = Number(wall.slice(11, 13));
  const minute = Number(wall.slice(14, 16));
  return fields.hour.includes(hour) && fields.minute.includes(minute);
}
