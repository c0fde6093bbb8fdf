// The slot: `--slot` read in the CronJob's zone, a slot in words, the schedule it came from (API v2), and the
// verdict on a time that is no slot of the schedule (not-a-slot).
import { type CronJob, cronJobSchedules, type CronJobSchedules, rfc3339InZone } from "../../../../api/v1/index.ts";
import { utcOffsetAt } from "../../../../api/v1/schedule/index.ts";
import { iso } from "../../model/time.ts";
import { nextRuns } from "../../model/slots.ts";
import { found, SECOND, type SlotContext, type Verdict } from "./verdict.ts";

/** "2026-11-25 03:00 Europe/Berlin (2026-11-25T02:00:00Z)", or "2026-11-25 02:00 UTC". */
export function slotText(t: Date, timeZone: string): string {
  const local = rfc3339InZone(t, timeZone);
  const wall = `${local.slice(0, 10)} ${local.slice(11, local.slice(17, 19) === "00" ? 16 : 19)}`;
  if (timeZone === "UTC" || timeZone === "Etc/UTC") return `${wall} UTC`;
  return `${wall} ${timeZone} (${iso(t)})`;
}

/**
 * `--slot`: an RFC 3339 time, or a wall-clock time without an offset ("2026-11-25T03:00", "2026-11-25 03:00") read
 * in the CronJob's zone. Undefined when it is neither.
 */
export function parseSlot(text: string, timeZone: string): Date | undefined {
  const t = text.trim();
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(t)) {
    const d = new Date(t);
    return Number.isNaN(d.getTime()) ? undefined : d;
  }
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$/.exec(t);
  if (!m) return undefined;
  const wall = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +(m[6] ?? 0));
  // Date.UTC rolls a month 13 or a day 45 over into a later date: refuse what is not a calendar time.
  const back = new Date(wall).toISOString();
  if (
    Number.isNaN(wall) ||
    back.slice(0, 10) !== `${m[1]}-${m[2]}-${m[3]}` ||
    back.slice(11, 19) !== `${m[4]}:${m[5]}:${m[6] ?? "00"}`
  )
    return undefined;
  // The offsets in force around that wall time (the same two unless a transition is near); an instant is the wall
  // time's if its own offset is the one it was read with. Twice (clocks go back): the first, as a schedule runs it.
  // Never (a DST gap): read with the offset before the gap, which is where the schedule runs the skipped time.
  const before = utcOffsetAt(timeZone, new Date(wall - 12 * 3600 * SECOND));
  const after = utcOffsetAt(timeZone, new Date(wall + 12 * 3600 * SECOND));
  const fits = [wall - before, wall - after].filter((t) => utcOffsetAt(timeZone, new Date(t)) === wall - t);
  return new Date(fits.length ? Math.min(...fits) : wall - before);
}

/** Where a slot came from: with several schedules (API v2), the ones it is a slot of, and the zone to show it in. */
export interface SlotSource {
  zone: string;
  /** ' from schedule "0 9 * * 1-5" (Europe/Berlin)', or "" with one schedule. */
  words: string;
  schedules?: { schedule: string; timeZone: string }[];
}

export function slotSource(
  schedules: CronJobSchedules,
  slot: Date,
  anchor: Date | undefined,
  zone: string,
): SlotSource {
  const sources = schedules.sourcesAt(slot, anchor);
  if (!sources?.length) return { zone, words: "" };
  const list = sources.map((x) => ({ schedule: x.schedule, timeZone: x.timeZone ?? "UTC" }));
  return {
    zone: list[0]!.timeZone,
    words: ` from schedule ${list.map((x) => `${JSON.stringify(x.schedule)} (${x.timeZone})`).join(" and ")}`,
    schedules: list,
  };
}

/** The zone the CronJob's first schedule runs in. */
export function zoneOf(cronJob: CronJob): string {
  return cronJob.spec?.timeZone || "UTC";
}

export function schedulesOf(cronJob: CronJob): CronJobSchedules | undefined {
  const r = cronJobSchedules(cronJob, {
    namespace: cronJob.metadata?.namespace ?? "",
    name: cronJob.metadata?.name ?? "",
  });
  return r.ok ? r.schedules : undefined;
}

export function anchorOf(cronJob: CronJob, schedules: CronJobSchedules): Date | undefined {
  return schedules.everyAnchor({
    lastScheduleTime: cronJob.status?.lastScheduleTime,
    creationTimestamp: cronJob.metadata?.creationTimestamp,
  });
}

/** The asked time is not a slot: the slots around it, in the zone and UTC, with DST and H spelled out. */
export function notASlot(c: SlotContext, schedules: CronJobSchedules, anchor: Date | undefined): Verdict {
  const before = schedules.schedule.mostRecent(c.slot, anchor);
  const after = schedules.schedule.next(c.slot, anchor);
  const around = nextRuns(schedules, anchor, new Date((before ?? c.slot).getTime() - 1), before ? 2 : 1);
  const lines = around.map((t) => `slot ${t.time} (${t.utc})${t.note ? `: ${t.note}` : ""}`);
  const resolved = schedules.entries.map(
    (e) =>
      `${e.schedule}${e.resolvedSchedule !== e.schedule ? ` → ${e.resolvedSchedule} (H resolved)` : ""} in ${e.timeZone ?? "UTC"}`,
  );
  return found(
    "not-a-slot",
    {
      when: c.slotText,
      ...(before ? { previousSlot: slotText(before, c.zone) } : {}),
      nextSlot: slotText(after, c.zone),
      name: c.name,
      namespace: c.namespace,
    },
    [`schedule: ${resolved.join("; ")}`, ...lines],
  );
}
