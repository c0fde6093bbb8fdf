// What the page draws of one CronJob and one group, from what the plugin's readers compute: the runs as `history`
// reads its Jobs (historyRows), the decisions as the record holds them (status.recentRuns), the slots to come as
// `next` computes them (nextRuns, with what excludes them), the pending retries as `next` lists them, and a group's
// places from its members' Jobs. Pure: the cluster state comes in, the page's data goes out.
import {
  type CalendarRead,
  type CronJob,
  cronJobSchedules,
  endTimeEnd,
  exclusionsOf,
  finishedAt,
  hasExclusions,
  type Job,
  type RecentRun,
  RecordDecision,
  maxRunsEnd,
  RecordReason,
  scheduleEntriesOf,
  upstreamsOf,
} from "../../../api/v1/index.ts";
import { NO_SLOT, ZoneRules } from "../../../api/v1/schedule/index.ts";
import { SHAPING } from "../answer/causes.ts";
import { fieldErrorString } from "../../../runtime/field.ts";
import { excludingSchedules } from "../model/exclusions.ts";
import type { GroupFacts } from "../model/groupfacts.ts";
import { historyRows, triggerWords } from "../answer/history.ts";
import { iso } from "../model/time.ts";
import { type FireTime, fireTimes } from "../model/slots.ts";
import { pendingRunsOf, waitsFor } from "../answer/retries.ts";
import {
  MARK_WORDS,
  PAGE_WORDS,
  type GroupLane,
  type Mark,
  type MarkKind,
  type Row,
  type RowMarks,
  type RowShaping,
  type Shade,
} from "./view.ts";

/**
 * The slots one row draws one by one at most; past that, slots closer than 1/MAX_SLOT_MARKS of the window (on a
 * 1,000 px track, 8 px: two 4 px ticks barely apart) merge into bands (mergeSlots).
 */
const MAX_SLOT_MARKS = 120;
/** A run started this long after its slot or later waited (for its group's place, or for the operator). */
const LATE_MS = 60_000;
/** The slots computed for one row's window at most (a schedule of every second over a week stops here). */
const MAX_SLOTS = 5_000;

export const idOf = (o: { metadata?: { namespace?: string; name?: string } }) =>
  `${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;

const title = (kind: MarkKind, detail?: string) =>
  detail ? `${MARK_WORDS[kind].label}: ${detail}` : MARK_WORDS[kind].label;

/** A CronJob's line in the fleet's index. */
export function rowOf(cronJob: CronJob, jobs: readonly Job[], now: Date): Row {
  const runs = historyRows(jobs, cronJob.metadata?.uid ?? "", now);
  const last = runs.at(-1)?.result;
  const read = scheduleEntriesOf(cronJob);
  const upstreams = upstreamsOf(cronJob.spec);
  // spec.after only: no schedule of its own.
  const schedule =
    upstreams.length && cronJob.spec?.schedule === undefined
      ? SHAPING.noSchedule()
      : read.ok
        ? read.entries.map((s) => (s.timeZone ? `${s.schedule} (${s.timeZone})` : s.schedule)).join("; ")
        : fieldErrorString(read.error);
  const shaping = shapingOf(cronJob, now);
  return {
    id: idOf(cronJob),
    namespace: cronJob.metadata?.namespace ?? "",
    name: cronJob.metadata?.name ?? "",
    ...(cronJob.spec?.concurrencyGroup ? { group: cronJob.spec.concurrencyGroup } : {}),
    suspended: cronJob.spec?.suspend === true,
    schedule,
    ...(last ? { last } : {}),
    ...(shaping ? { shaping } : {}),
  };
}

/**
 * What shapes a CronJob's schedule, in `next`'s words (answer/causes.ts SHAPING): its window, its end (spec.maxRuns
 * made; spec.endTime passed, as the operator's Available condition says, or with no slot left), its upstreams.
 */
function shapingOf(cronJob: CronJob, now: Date): RowShaping | undefined {
  const spec = cronJob.spec ?? {};
  const start = typeof spec.startTime === "string" ? spec.startTime : undefined;
  const end = typeof spec.endTime === "string" ? spec.endTime : undefined;
  const stored = cronJob.status?.conditions?.find((c) => c.type === "Available" && c.status === "False")?.reason;
  // The next slot matters only once spec.endTime has passed (endTimeEnd says so without it): the schedules of a row
  // with no such end are not parsed and walked here (at 5,000 rows, a third of the dashboard's allocations, issue 72).
  const endPassed = endTimeEnd(spec, now, undefined, 0) !== undefined;
  const ended =
    maxRunsEnd(spec, cronJob.status) ??
    endTimeEnd(spec, now, endPassed && stored !== "EndTimeReached" ? nextSlotOf(cronJob, now) : undefined, 0);
  const after = SHAPING.afterEdges(spec);
  const shaping: RowShaping = {
    ...(start || end ? { window: SHAPING.window(start, end) } : {}),
    ...(ended ? { ended: SHAPING.ended(ended) } : {}),
    ...(after.length ? { after } : {}),
  };
  return Object.keys(shaping).length ? shaping : undefined;
}

/** The windowed schedules' next slot after `now` (undefined: none left, or they do not parse). */
function nextSlotOf(cronJob: CronJob, now: Date): Date | undefined {
  const parsed = cronJobSchedules(cronJob, {
    namespace: cronJob.metadata?.namespace ?? "",
    name: cronJob.metadata?.name ?? "",
  });
  if (!parsed.ok) return undefined;
  const next = parsed.schedules.schedule.next(now);
  return next.getTime() < NO_SLOT ? next : undefined;
}

/** What a decision that started no Job is drawn as (undefined: it started one, its Job is drawn). */
function decisionKind(e: RecentRun): MarkKind | undefined {
  switch (e.decision) {
    case RecordDecision.Created:
    case RecordDecision.Adopted:
      return undefined;
    case RecordDecision.Held:
      return "held";
    case RecordDecision.Missed:
      return "missed";
    case RecordDecision.Refused:
      return "refused";
    case RecordDecision.Stopped:
      return "stopped";
    case RecordDecision.Skipped:
      if (e.reason === RecordReason.ExcludedByCalendar) return "excluded";
      if (e.reason === RecordReason.RetrySuperseded) return "superseded";
      return "skipped";
  }
}

/** A decision of the record as a mark: at its slot (a request's: when it was decided), in the record's words. */
function decisionMark(e: RecentRun, kind: MarkKind): Mark {
  const slot = e.scheduledTime;
  const first = kind === "excluded" ? e.exclusion?.firstSlot : undefined;
  const detail = [e.reason, e.message ?? (kind === "held" ? waitsFor(e) : undefined)].filter(Boolean).join(": ");
  return {
    kind,
    at: first ?? slot ?? e.decidedAt,
    ...(first && slot && first !== slot ? { end: slot, count: e.exclusion?.slots } : {}),
    ...(kind === "held" && e.startsAt ? { end: e.startsAt } : {}),
    ...(slot ? { slot } : {}),
    trigger: e.trigger,
    title: title(kind, detail),
  };
}

interface MarksInput {
  cronJob: CronJob;
  /** Any Jobs; the ones it controls are drawn. */
  jobs: readonly Job[];
  /** Its namespace's ExclusionCalendars as read (only those it names are used). */
  calendars: readonly CalendarRead[];
  from: Date;
  to: Date;
  now: Date;
}

/** A CronJob's marks over [from, to]: its runs, the record's other decisions, its slots to come, its pending retries. */
export function marksOf(x: MarksInput): RowMarks {
  const { cronJob, from, to, now } = x;
  const inWindow = (at: string, end?: string) =>
    Date.parse(end ?? at) >= from.getTime() && Date.parse(at) <= to.getTime();
  const marks: Mark[] = [];
  for (const r of historyRows(x.jobs, cronJob.metadata?.uid ?? "", now)) {
    const at = r.startTime ?? r.scheduledTime;
    if (!at || !inWindow(at, r.completionTime ?? iso(now))) continue;
    const kind: MarkKind = r.result === "Complete" ? "succeeded" : r.result === "Failed" ? "failed" : "running";
    const trigger = triggerWords(r);
    marks.push({
      kind,
      at,
      ...(r.completionTime ? { end: r.completionTime } : {}),
      ...(r.scheduledTime ? { slot: r.scheduledTime } : {}),
      job: r.name,
      trigger,
      title: title(kind, PAGE_WORDS.run(r.name, trigger, r.scheduledTime)),
    });
  }
  for (const e of cronJob.status?.recentRuns ?? []) {
    const kind = decisionKind(e);
    if (!kind) continue;
    const m = decisionMark(e, kind);
    if (inWindow(m.at, m.end)) marks.push(m);
  }
  const shades = new Map<string, Shade>();
  if (to > now) marks.push(...slotMarks(x, shades));
  for (const r of pendingRunsOf(cronJob)) {
    if (!r.startsAt || !inWindow(iso(r.startsAt))) continue;
    marks.push({
      kind: "pending",
      at: iso(r.startsAt),
      slot: iso(r.slot),
      trigger: r.word,
      title: title("pending", PAGE_WORDS.pending(r.word, r.what, iso(r.slot), r.failedJob)),
    });
  }
  marks.sort((a, b) => a.at.localeCompare(b.at));
  return { id: idOf(cronJob), marks, shades: [...shades.values()] };
}

/** The slots to come within the window, as `next` computes them; the windows that hold some, as shades. */
function slotMarks(x: MarksInput, shades: Map<string, Shade>): Mark[] {
  const { cronJob, to, now } = x;
  const parsed = cronJobSchedules(cronJob, {
    namespace: cronJob.metadata?.namespace ?? "",
    name: cronJob.metadata?.name ?? "",
  });
  if (!parsed.ok) return [];
  const { schedules } = parsed;
  const anchor = schedules.everyAnchor({
    lastScheduleTime: cronJob.status?.lastScheduleTime,
    creationTimestamp: cronJob.metadata?.creationTimestamp,
  });
  const view = hasExclusions(cronJob.spec) ? exclusionsOf(cronJob, x.calendars) : undefined;
  const excluding = excludingSchedules(schedules, view?.exclusions);
  const start = x.from > now ? x.from : now;
  const times = [];
  // Computed one by one up to the window's end (each slot costs the schedule's math), and never more than MAX_SLOTS.
  for (const t of fireTimes(schedules, anchor, start, excluding.excludedBy)) {
    if (Date.parse(t.utc) > to.getTime() || times.length >= MAX_SLOTS) break;
    times.push(t);
  }
  const zone = new ZoneRules(schedules.schedule.timeZone);
  const suspended = cronJob.spec?.suspend === true;
  for (const t of times) {
    if (t.excluded && view?.exclusions) {
      const ms = Date.parse(t.utc);
      const offset = zone.offsetAt(ms);
      const wall = ms + offset;
      const a = view.exclusions.coveredFrom(wall);
      const b = view.exclusions.coveredUntil(wall);
      if (a !== undefined && b !== undefined) {
        const shade = {
          from: iso(new Date(a - offset)),
          to: iso(new Date(b - offset)),
          by: t.excluded.by,
          window: t.excluded.window,
        };
        shades.set(`${shade.from}/${shade.to}`, shade);
      }
    }
  }
  /** A slot drawn alone: held by a window or a hold, or one that runs (or would: its CronJob is suspended). */
  const slotMark = (t: FireTime): Mark => {
    const kind: MarkKind = t.excluded || view?.hold ? "slot-excluded" : "slot";
    const detail = t.excluded
      ? `${t.excluded.by}: ${t.excluded.window}`
      : view?.hold
        ? view.hold.problem
        : suspended
          ? PAGE_WORDS.wouldRun(t.time)
          : t.time;
    return { kind, at: t.utc, slot: t.utc, title: title(kind, detail) };
  };
  if (times.length <= MAX_SLOT_MARKS) return times.map(slotMark);
  return mergeSlots(times, (x.to.getTime() - x.from.getTime()) / MAX_SLOT_MARKS).map((run) => {
    if (run.length === 1) return slotMark(run[0]!);
    const count = run.length;
    const slots = PAGE_WORDS.slots(count);
    // A suspended CronJob's band says so as its lone slots do: they would run then, they will not.
    const detail = suspended ? PAGE_WORDS.wouldRun(slots, count) : slots;
    return { kind: "slots", at: run[0]!.utc, end: run.at(-1)!.utc, count, title: title("slots", detail) };
  });
}

/**
 * Slots in runs of those closer than `gap` to the one before: each run of two or more is drawn as one band with its
 * count, a run of one as the slot it is. Runs start more than `gap` apart, so a window of MAX_SLOT_MARKS gaps holds
 * MAX_SLOT_MARKS + 1 of them at most.
 */
function mergeSlots(times: readonly FireTime[], gap: number): FireTime[][] {
  const runs: FireTime[][] = [];
  for (const t of times) {
    const run = runs.at(-1);
    if (run && Date.parse(t.utc) - Date.parse(run.at(-1)!.utc) <= gap) run.push(t);
    else runs.push([t]);
  }
  return runs;
}

/** Every Job that is a group's run: from its start (or creation) to its end (or now). */
function intervalsOf(jobs: readonly Job[], now: Date): [number, number][] {
  return jobs.map((j) => {
    const start = Date.parse(j.status?.startTime ?? j.metadata?.creationTimestamp ?? iso(now));
    return [start, (finishedAt(j) ?? now).getTime()];
  });
}

interface LaneInput {
  group: GroupFacts;
  /** The group's Jobs (labelled with it), finished ones too. */
  jobs: readonly Job[];
  /** Its members. */
  cronJobs: readonly CronJob[];
  from: Date;
  to: Date;
  now: Date;
}

/** A group's lane: its limit, its places used over the window, the runs that waited (or wait) for a place. */
export function laneOf(x: LaneInput): GroupLane {
  const { group: g, from, now } = x;
  const edges: [number, number][] = [];
  for (const [a, b] of intervalsOf(x.jobs, now)) {
    if (b < from.getTime()) continue;
    edges.push([a, 1], [b, -1]);
  }
  edges.sort((p, q) => p[0] - q[0] || p[1] - q[1]);
  const usage: GroupLane["usage"] = [];
  let used = 0;
  for (const [t, d] of edges) {
    used += d;
    const at = iso(new Date(Math.max(t, from.getTime())));
    if (usage.at(-1)?.at === at) usage.at(-1)!.used = used;
    else usage.push({ at, used });
  }
  // From when it first waited (groupfacts' since: a newer slot that replaced a held one keeps the first one's place),
  // as `kubectl cron why` and `groups` say it.
  const waits: GroupLane["waits"] = g.waiting.map((w) => ({ cronJob: w.cronJob, from: w.since }));
  // Runs that started late: the record's Created entry, decided after its slot (how late the operator reached it,
  // held by the group or not: the record says what it knows).
  for (const c of x.cronJobs) {
    for (const e of c.status?.recentRuns ?? []) {
      if (e.decision !== RecordDecision.Created || !e.scheduledTime) continue;
      if (Date.parse(e.decidedAt) - Date.parse(e.scheduledTime) < LATE_MS) continue;
      if (Date.parse(e.decidedAt) < from.getTime()) continue;
      waits.push({
        cronJob: c.metadata?.name ?? "",
        from: e.scheduledTime,
        to: e.decidedAt,
        ...(e.job ? { job: e.job } : {}),
      });
    }
  }
  waits.sort((a, b) => a.from.localeCompare(b.from));
  return {
    id: `${g.namespace}/${g.name}`,
    namespace: g.namespace,
    name: g.name,
    ...(g.limit !== undefined ? { limit: g.limit } : {}),
    exists: g.exists === true,
    usage,
    waits,
  };
}
