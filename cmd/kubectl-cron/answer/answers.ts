// One CronJob's answers: pure functions over what was read of it (the CronJob, its Jobs, the calendars it names, and
// for `why` the rest of its facts, model/facts.ts). `kubectl cron next`, `history` and `why NAME` read, then print one of
// these; the dashboard's panel reads a CronJob once (read/whyfacts.ts readOne) and shows all three from that one read.
import {
  type CalendarRead,
  type CronJob,
  cronJobSchedules,
  type CronJobSchedules,
  exclusionsOf,
  type ExclusionsView,
  hasExclusions,
  type Job,
  jitterSecondsOf,
  maxRunsEnd,
  notStartedUntil,
  RESOURCE,
  rfc3339InZone,
  rowOfJob,
  scheduledTimeOf,
  TRIGGER_ROWS,
  runsLeft,
  runStartOf,
  scheduleSourceText,
  upstreamsOf,
} from "../../../api/v1/index.ts";
import { fieldErrorString } from "../../../runtime/field.ts";
import { UsageError } from "../model/args.ts";
import type { Output } from "../model/context.ts";
import { excludingSchedules, NO_SLOT_LEFT } from "../model/exclusions.ts";
import { SHAPING } from "./causes.ts";
import { historyRows, triggerWords } from "./history.ts";
import { humanDuration, iso } from "../model/time.ts";
import { type FireTime, nextRuns } from "../model/slots.ts";
import { pendingLine, pendingRunsOf, waitsFor } from "./retries.ts";
import { table } from "../model/table.ts";
import { verdictOf } from "./verdicts.ts";
import { parseSlot, whyText, zoneOf } from "./why.ts";
import type { WhyFacts } from "../model/facts.ts";

/** How many slots `next` lists without --count. */
export const NEXT_COUNT = 5;

/** What was read of one CronJob: it, the calendars spec.exclusions names (as read), and when. */
interface CronJobRead {
  cronJob: CronJob;
  /** Its Jobs (by its label), read when `@every` counts from its last run (nextNeedsJobs). */
  jobs?: readonly Job[];
  /** Its namespace (the CronJob's own, else the one it was read in): H is hashed with it. */
  namespace: string;
  calendars?: readonly CalendarRead[] | undefined;
  now: Date;
}

/** A CronJob's schedules as the controller reads them (api/v1/schedules.ts), H hashed with its namespace/name. */
export function schedulesOf(cronJob: CronJob, namespace: string): ReturnType<typeof cronJobSchedules> {
  return cronJobSchedules(cronJob, {
    namespace: cronJob.metadata.namespace ?? namespace,
    name: cronJob.metadata.name ?? "",
  });
}

/**
 * Whether `next` must read the CronJob's Jobs: one `@every` schedule counts from the last run, which the controller
 * takes from its Jobs as well as from status.lastScheduleTime (a burst's status writes may lag minutes behind).
 */
export function nextNeedsJobs(cronJob: CronJob, namespace: string): boolean {
  const parsed = schedulesOf(cronJob, namespace);
  return parsed.ok && !parsed.schedules.several && parsed.schedules.schedule.isEvery;
}

/**
 * status.lastScheduleTime as the controller observes it: the stored one, or the slot of the newest Job it controls
 * that the schedule made (the triggers whose runs move it), whichever is later.
 */
function lastScheduleTimeOf(cronJob: CronJob, jobs: readonly Job[]): string | undefined {
  let newest = cronJob.status?.lastScheduleTime ? Date.parse(cronJob.status.lastScheduleTime) : NaN;
  const uid = cronJob.metadata.uid;
  for (const job of jobs) {
    if (!(job.metadata?.ownerReferences ?? []).some((r) => r.controller && r.uid === uid)) continue;
    if (!rowOfJob(TRIGGER_ROWS, job).movesLastScheduleTime) continue;
    const slot = scheduledTimeOf(job)?.getTime();
    if (slot !== undefined && !(slot <= newest)) newest = slot;
  }
  return Number.isNaN(newest) ? undefined : new Date(newest).toISOString().replace(/\.000Z$/, "Z");
}

/**
 * `kubectl cron next NAME`: the next slots of its schedules as written, each in the zone of the (first) schedule it
 * came from, with the DST cases spelled out; with several schedules, the ones each slot came from. `@every` counts
 * from what the controller counts it from. With spec.exclusions, each slot an exclusion window holds says which
 * (its own windows, and the ExclusionCalendars it names, as read), and the next run is the first slot none holds;
 * a calendar missing holds them all, as the operator does. A retry waiting for its delay (the record's) is said too.
 */
export function nextAnswer(x: CronJobRead, count = NEXT_COUNT): Output {
  const { cronJob, now } = x;
  const name = cronJob.metadata.name ?? "";
  const parsed = schedulesOf(cronJob, x.namespace);
  if (!parsed.ok) {
    throw new Error(`${RESOURCE}/${name} has no next run: ${parsed.errors.map(fieldErrorString).join("; ")}`);
  }
  const { schedules } = parsed;
  const anchor = schedules.everyAnchor({
    lastScheduleTime: lastScheduleTimeOf(cronJob, x.jobs ?? []),
    creationTimestamp: cronJob.metadata.creationTimestamp,
  });
  // Only a CronJob that has exclusions gets the column.
  const view = hasExclusions(cronJob.spec) ? exclusionsOf(cronJob, x.calendars ?? []) : undefined;
  const excluding = excludingSchedules(schedules, view?.exclusions);
  // spec.maxRuns: no more slots than runs are left (none once ended).
  const left = runsLeft(cronJob.spec, cronJob.status);
  // spec.jitter: when each slot's run really starts (its slot plus its offset), beside the slot.
  const jitter = jitterSecondsOf(cronJob.spec);
  const key = { namespace: cronJob.metadata.namespace ?? x.namespace, name };
  const times = nextRuns(schedules, anchor, now, Math.min(count, left ?? count), excluding.excludedBy);
  const n: NextRead = {
    cronJob,
    now,
    name,
    schedules,
    view,
    times,
    zone: schedules.schedule.timeZone,
    jitter,
    startOf: (t: FireTime) => runStartOf(key, new Date(t.utc), jitter),
    limits: limitLines(cronJob, now, times.length, count),
    // The next run: the first slot no window holds (computed only with exclusions: else it is the first row).
    nextRun:
      view && excluding.schedules.schedule.next(now, anchor).getTime() < NO_SLOT_LEFT
        ? nextRuns(excluding.schedules, anchor, now, 1)[0]
        : undefined,
  };
  const suspended = cronJob.spec.suspend === true;
  const notes = suspended ? [`suspended: these are the times it would run (kubectl cron resume ${name})`] : [];
  for (const u of view?.unreadable ?? [])
    notes.push(`could not read ${u}: the slots it excludes are not marked (the operator reads it)`);
  return {
    text:
      nextLines(n)
        .map((l) => `${l}\n`)
        .join("") + nextTable(n),
    json: nextJson(n, suspended),
    notes,
  };
}

/** What `next` says of one CronJob, read and listed once: its slots, their zone, windows and jitter. */
interface NextRead {
  cronJob: CronJob;
  now: Date;
  name: string;
  schedules: CronJobSchedules;
  /** spec.exclusions as read (undefined: the CronJob has none). */
  view: ExclusionsView | undefined;
  times: ReturnType<typeof nextRuns>;
  /** The zone of the first schedule: the heading's, and the pending runs' and the STARTS column's. */
  zone: string;
  jitter: number;
  startOf: (t: FireTime) => Date;
  limits: string[];
  nextRun: FireTime | undefined;
}

/** The lines above the table: what H resolved to, the next run past the windows, the limits, the pending runs. */
function nextLines(n: NextRead): string[] {
  const { view, nextRun } = n;
  // H is resolved per CronJob: say what this one runs as.
  const lines = n.schedules.entries
    .filter((e) => e.resolvedSchedule !== e.schedule)
    .map(
      (e) =>
        `schedule ${JSON.stringify(e.schedule)} runs as ${JSON.stringify(e.resolvedSchedule)} (H is hashed from namespace/name)`,
    );
  if (view) {
    if (view.hold) lines.push(`held: ${view.hold.problem}`);
    else if (!nextRun) lines.push("next run: none: the exclusions hold every slot for 28 years");
    else if (n.times[0]?.excluded)
      lines.push(`next run: ${nextRun.time} (${nextRun.utc}); the slots before it are excluded`);
  }
  lines.push(...n.limits);
  for (const r of pendingRunsOf(n.cronJob)) lines.push(pendingLine(r, n.zone, n.now));
  return lines;
}

/**
 * The slots' table. A SCHEDULE column only when slots name their schedules; EXCLUDED BY only with exclusions; the
 * zone in the heading when there is one zone.
 */
function nextTable(n: NextRead): string {
  const { view, jitter, startOf, zone } = n;
  const named = n.times.some((t) => t.sources);
  const zones = new Set(n.schedules.entries.map((e) => e.timeZone ?? "UTC"));
  const heading = zones.size === 1 && !named ? `NEXT (${zone})` : "NEXT";
  const unsure = (view?.unreadable.length ?? 0) > 0;
  const excludedCell = (t: FireTime) =>
    t.excluded ? `${t.excluded.by}: ${t.excluded.window}` : view?.hold ? "held" : unsure ? "?" : "-";
  const rows = n.times.map((t) => [
    t.time,
    t.utc,
    ...(jitter > 0
      ? [`${rfc3339InZone(startOf(t), zone)} (${SHAPING.offset((startOf(t).getTime() - Date.parse(t.utc)) / 1000)})`]
      : []),
    ...(named ? [(t.sources ?? []).map(scheduleSourceText).join("; ")] : []),
    ...(view ? [excludedCell(t)] : []),
    t.note ?? "",
  ]);
  if (!rows.length) return "";
  return table(
    [
      heading,
      "UTC",
      ...(jitter > 0 ? ["STARTS"] : []),
      ...(named ? ["SCHEDULE"] : []),
      ...(view ? ["EXCLUDED BY"] : []),
      "NOTE",
    ],
    rows,
  );
}

function nextJson(n: NextRead, suspended: boolean): Output["json"] {
  const { view, times, jitter, startOf, limits } = n;
  const [first] = n.schedules.entries;
  // `retries`, the name the first pending runs had: every trigger's, each with its row's word.
  const retries = pendingRunsOf(n.cronJob).map((r) => ({
    trigger: r.word,
    scheduledTime: iso(r.slot),
    ...(r.attempt ? { attempt: r.attempt.number, limit: r.attempt.of } : {}),
    ...(r.startsAt ? { startsAt: iso(r.startsAt) } : {}),
    ...(waitsFor(r.entry) ? { waits: waitsFor(r.entry) } : {}),
    ...(r.failedJob ? { failedJob: r.failedJob } : {}),
    ...(r.failure ? { failure: r.failure } : {}),
  }));
  return {
    name: n.name,
    // spec.schedule's, as a v1 reader knows it; `schedules` has every one (none: spec.after only).
    ...(first ? { schedule: first.schedule, resolvedSchedule: first.resolvedSchedule } : {}),
    timeZone: n.zone,
    schedules: n.schedules.entries,
    suspended,
    times: jitter > 0 ? times.map((t) => ({ ...t, startsAt: iso(startOf(t)) })) : times,
    ...(limits.length ? { limits } : {}),
    ...(view
      ? {
          nextRun: view.hold ? null : (n.nextRun ?? null),
          ...(view.hold ? { held: view.hold } : {}),
          ...(view.unreadable.length ? { unreadable: view.unreadable } : {}),
        }
      : {}),
    ...(retries.length ? { retries } : {}),
  };
}

/**
 * What limits the slots `next` lists, a line each: the runs after upstreams (spec.after; no schedule of its own),
 * not started yet (spec.startTime), ended (spec.maxRuns made) or ending (the runs left, spec.endTime's last slot:
 * `listed` of the `asked` slots were found).
 */
function limitLines(cronJob: CronJob, now: Date, listed: number, asked: number): string[] {
  const ups = upstreamsOf(cronJob.spec);
  const lines = SHAPING.afterEdges(cronJob.spec);
  if (ups.length && cronJob.spec.schedule === undefined) lines.push(SHAPING.noSchedule());
  const start = notStartedUntil(cronJob.spec, now);
  if (start) lines.push(SHAPING.notStarted(iso(start)));
  const ended = maxRunsEnd(cronJob.spec, cronJob.status);
  const left = runsLeft(cronJob.spec, cronJob.status);
  if (ended) lines.push(SHAPING.ended(ended));
  else if (left !== undefined && left <= asked) lines.push(SHAPING.runsLeft(left, cronJob.spec.maxRuns ?? left));
  const end = cronJob.spec.endTime;
  if (!ended && end !== undefined && listed < Math.min(asked, left ?? asked)) lines.push(SHAPING.noRunAfter(end));
  return lines;
}

/** `kubectl cron history NAME`: its Jobs (those it controls, of `jobs`), oldest slot first, a row each. */
export function historyAnswer(x: CronJobRead & { jobs: readonly Job[] }): Output {
  const { cronJob } = x;
  const name = cronJob.metadata.name ?? "";
  const rows = historyRows(x.jobs, cronJob.metadata.uid ?? "", x.now);
  // Only when a listed Job names its schedules (a CronJob with several): the table is unchanged for everyone else.
  const scheduleColumn = rows.some((r) => r.schedules !== undefined);
  const text = table(
    ["NAME", "TRIGGER", "SCHEDULED", ...(scheduleColumn ? ["SCHEDULE"] : []), "RESULT", "STARTED", "DURATION"],
    rows.map((r) => [
      r.name,
      triggerWords(r),
      // A jittered run's offset beside its slot: "2026-11-25T02:00:00Z +37s".
      r.scheduledTime
        ? `${r.scheduledTime}${r.jitterOffsetSeconds !== undefined ? ` ${SHAPING.offset(r.jitterOffsetSeconds)}` : ""}`
        : "-",
      ...(scheduleColumn ? [r.schedules ?? "-"] : []),
      r.result,
      r.startTime ?? "-",
      r.durationSeconds !== undefined ? humanDuration(r.durationSeconds) : "-",
    ]),
  );
  const notes = rows.length === 0 ? [`no Jobs of ${name} in ${x.namespace} (history limits keep only the newest)`] : [];
  return { text, json: { name, items: rows }, notes };
}

/** `kubectl cron why NAME [--slot]`: one CronJob's whole diagnosis from its facts, as printed; its exit code. */
export function whyAnswer(f: WhyFacts, slot: Date | undefined): Output & { exitCode: number } {
  const d = verdictOf(f, slot).diagnosis;
  return { text: whyText(d), json: d, exitCode: d.exitCode };
}

/** --slot, in the CronJob's zone where it names no offset; undefined without it. */
export function slotOf(given: string | undefined, cronJob: CronJob): Date | undefined {
  if (given === undefined) return undefined;
  const slot = parseSlot(given, zoneOf(cronJob));
  if (!slot) {
    throw new UsageError(
      `--slot: want an RFC 3339 time (2026-11-25T02:00:00Z) or a wall-clock time in the CronJob's zone (2026-11-25T03:00); got ${JSON.stringify(given)}`,
    );
  }
  return slot;
}
