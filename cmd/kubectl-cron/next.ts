// `kubectl cron next`: the next fire times of a CronJob in its own zone, computed by the schedule module the
// controller uses, with the DST cases spelled out (a skipped local time, a repeated hour, an offset change).
// A schedule with H is resolved with the CronJob's namespace/name first, as the controller does.
import { parseCronJobSchedules, type ScheduleSource } from "../../api/v1/index.ts";
import {
  parseHashedSchedule,
  parseScheduleSpec,
  resolveHashedSchedule,
  type Schedule,
  ZoneRules,
  type CronFields,
  type HashKey,
} from "../../api/v1/schedule/index.ts";
import { fieldErrorString } from "../../runtime/field.ts";

interface FireTime {
  /** RFC 3339 in the CronJob's zone, e.g. 2026-03-29T03:30:00+02:00. */
  time: string;
  /** The same instant in UTC. */
  utc: string;
  /** The zone's offset at that instant, e.g. "+02:00". */
  offset: string;
  /** What DST does to this slot, when it does something. */
  note?: string;
}

interface NextInput {
  schedule: string;
  timeZone?: string;
  /** The CronJob's namespace and name, which H is hashed from (a schedule with H is refused without them). */
  key?: HashKey;
  /** lastScheduleTime ?? creationTimestamp: what `@every` counts from. */
  anchor?: Date;
  now: Date;
  count: number;
}

type NextResult =
  | {
      ok: true;
      /** The schedule the times come from: spec.schedule with H resolved (unchanged without H). */
      resolvedSchedule: string;
      hashed: boolean;
      timeZone: string;
      times: FireTime[];
    }
  | { ok: false; error: string };

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

export function nextFireTimes(input: NextInput): NextResult {
  const parsed = parseHashedSchedule(input.schedule, input.key ?? { namespace: "", name: "" }, input.timeZone);
  if (!parsed.ok) return { ok: false, error: parsed.error.message };
  const schedule = parsed.schedule;
  const zone = new ZoneRules(schedule.timeZone);
  const spec = parseScheduleSpec(parsed.resolved);
  const fields = spec.ok && spec.spec.kind === "cron" ? spec.spec.fields : undefined;

  const times: FireTime[] = [];
  let prev = input.now.getTime();
  let prevOffset = zone.offsetAt(prev);
  for (let i = 0; i < input.count; i++) {
    const t = schedule.next(new Date(prev), input.anchor).getTime();
    times.push(fireTime({ zone, fields, followsRealTime: schedule.followsRealTime }, t, prevOffset));
    prev = t;
    prevOffset = zone.offsetAt(t);
  }
  return { ok: true, resolvedSchedule: parsed.resolved, hashed: parsed.hashed, timeZone: schedule.timeZone, times };
}

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

/** A slot of several schedules: its time in the zone of the first schedule it came from, and all of them. */
interface SourcedFireTime extends FireTime {
  sources: ScheduleSource[];
}

type UnionNextResult =
  | {
      ok: true;
      /** Each schedule with H resolved, in the list's order. */
      schedules: (ScheduleSource & { resolvedSchedule: string })[];
      times: SourcedFireTime[];
    }
  | { ok: false; error: string };

/**
 * The next slots of a CronJob with several schedules (spec.schedule and the more-schedules annotation, as the
 * controller reads them): the union, a second two schedules share shown once with both. `anchor`: the creation
 * time, which every `@every` schedule counts from (each on its own grid, as the controller runs them).
 */
export function nextUnionFireTimes(input: {
  cronJob: unknown;
  key: HashKey;
  anchor?: Date;
  now: Date;
  count: number;
}): UnionNextResult {
  const parsed = parseCronJobSchedules(input.cronJob, input.key);
  if (!parsed.ok) return { ok: false, error: parsed.errors.map(fieldErrorString).join("; ") };
  const schedules = parsed.set.members.map((m) => {
    const tz = parsed.entries[m.index]?.timeZone;
    const resolved = resolveHashedSchedule(m.text, input.key);
    return {
      index: m.index,
      schedule: m.text,
      ...(typeof tz === "string" ? { timeZone: tz } : {}),
      resolvedSchedule: resolved.ok ? resolved.resolved : m.text,
    };
  });
  const zones = new Map(parsed.set.members.map((m) => [m.index, slotZone(m.schedule, schedules, m.index)]));
  const prevOffsets = new Map([...zones].map(([i, z]) => [i, z.zone.offsetAt(input.now.getTime())]));
  const times: SourcedFireTime[] = [];
  const slots = parsed.set.slotsAfter(input.now, input.anchor);
  for (let n = 0; n < input.count; n++) {
    const slot = slots.next().value;
    const t = slot.at.getTime();
    const first = slot.sources[0]!;
    const time = fireTime(zones.get(first)!, t, prevOffsets.get(first)!);
    for (const i of slot.sources) prevOffsets.set(i, zones.get(i)!.zone.offsetAt(t));
    const sources = slot.sources.map((i) => {
      const { resolvedSchedule: _r, ...source } = schedules.find((s) => s.index === i)!;
      return source;
    });
    times.push({ ...time, sources });
  }
  return { ok: true, schedules, times };
}

function slotZone(
  schedule: Schedule,
  schedules: { index: number; resolvedSchedule: string }[],
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
