// `kubectl cron next`: the next fire times of a CronJob in its own zone, computed by the schedule module the
// controller uses, with the DST cases spelled out (a skipped local time, a repeated hour, an offset change).
// A schedule with H is resolved with the CronJob's namespace/name first, as the controller does.
import {
  parseHashedSchedule,
  parseScheduleSpec,
  ZoneRules,
  type CronFields,
  type HashKey,
} from "../../api/v1/schedule/index.ts";

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
    const offset = zone.offsetAt(t);
    const wall = wallText(t, offset);
    const notes: string[] = [];
    if (offset !== prevOffset) notes.push(`offset changed ${formatOffset(prevOffset)} → ${formatOffset(offset)}`);
    const dst = dstNote(zone, t, wall, fields, schedule.followsRealTime);
    if (dst) notes.push(dst);
    times.push({
      time: `${wall}${offset === 0 && zone.isUTC ? "Z" : formatOffset(offset)}`,
      utc: `${new Date(t).toISOString().slice(0, 19)}Z`,
      offset: formatOffset(offset),
      ...(notes.length > 0 ? { note: notes.join("; ") } : {}),
    });
    prev = t;
    prevOffset = offset;
  }
  return { ok: true, resolvedSchedule: parsed.resolved, hashed: parsed.hashed, timeZone: schedule.timeZone, times };
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
