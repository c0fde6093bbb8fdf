// The diagnosis of one CronJob: which slot is asked about, and which module decides its verdict; or, asked about
// none, a run-now or backfill request of it waiting for a place in its group. What a trigger row has of its own to
// say (its problems, its answer asked about no slot, its reading of a slot's later runs) is its half's (halves.ts),
// looped over here and in later.ts without naming a row.
import {
  type CronJobSchedules,
  type Job,
  jobNameFor,
  type RecentRun,
  isExplicit,
  maxRunsEnd,
  notStartedUntil,
  rowOfEntry,
  rowOfJob,
  TRIGGER_ROWS,
  rfc3339InZone,
  scheduledTimeOf,
  waitingRunOf,
} from "../../../../api/v1/index.ts";
import { type CauseId, NO_CAUSE, requestedText } from "../causes.ts";
import { exclusionsOf, type ExclusionsView } from "../../../../api/v1/index.ts";
import { type Excluded, excludingSchedules, NO_SLOT_LEFT } from "../../model/exclusions.ts";
import { iso } from "../../model/time.ts";
import { nextRuns } from "../../model/slots.ts";
import type { WhyFacts } from "../../model/facts.ts";
import { runByOf } from "./claim.ts";
import { entryLine } from "./entry.ts";
import { excludedEntryFor, excludedVerdict } from "./excluded.ts";
import { groupHeldVerdict } from "./group.ts";
import type { NowAnswer, RowGround } from "./half.ts";
import { halvesOf } from "./halves.ts";
import { operatorFindings } from "./operator.ts";
import { ranVerdict } from "./ran.ts";
import { recordVerdict } from "./record.ts";
import { laterRunsEvidence, laterRunsVerdict } from "./later.ts";
import { nextBlocker, risks } from "./risks.ts";
import { anchorOf, notASlot, schedulesOf, type SlotSource, slotSource, slotText, zoneOf } from "./slot.ts";
import { endedVerdict, jitterDueVerdict, jitteredText, offsetEvidence, offsetOf, scheduleEndOf } from "./shaping.ts";
import { futureVerdict, JUST_DUE_MS, undecidedVerdict } from "./undecided.ts";
import {
  blockedText,
  type Diagnosis,
  type Finding,
  finding,
  found,
  type Found,
  SECOND,
  type SlotContext,
  type Verdict,
} from "./verdict.ts";

/**
 * What a run-now or backfill request waiting for a place in its group answers for, asked about no slot: the latest
 * slot's verdict when it says the CronJob is well (it has had none, or it ran), or that only requests run now
 * (suspended, stopped after failures). A problem of the slot's own stays the verdict (`--slot` asks about it anyway).
 */
const REQUEST_FIRST: ReadonlySet<CauseId> = new Set(["suspended", "stopped-after-failures"]);

/**
 * The diagnosis of one CronJob: about `slot` when given (the user's question), else the latest slot that should
 * have run (one just due and not yet decided about yields to the one before it), unless a run-now or backfill request
 * of it waits for a place in its group (api/v1 waitingRunOf, with its Jobs): that is said as a waiting slot is (the
 * group, the Jobs holding its places, its place in the queue), with the exit code of a waiting slot.
 */
export function diagnose(f: WhyFacts, o: { slot?: Date } = {}): Diagnosis {
  const operator = operatorFindings(f);
  const schedules = schedulesOf(f.cronJob);
  if (!schedules) return finish(f, operator, invalidSchedule(f.cronJob));
  const g = groundOf(f, operator, schedules);
  const rows = rowGroundOf(g);
  const whole: Whole = {
    g,
    next: nextRunOf(g),
    // The rows' problems (spec.after's: a cycle, an upstream missing), said whichever slot is asked about.
    problems: halvesOf().flatMap(({ half }) => half.problems?.(rows) ?? []),
    request: o.slot ? undefined : waitingRequest(f),
  };
  const now = o.slot ? undefined : nowOf(rows);
  const slot = o.slot ?? latestDue(g);
  // A slot at the creation instant is not the CronJob's: its runs are the slots after it (the controller's window).
  if (!slot || (!o.slot && g.created && slot <= g.created)) return noSlotAnswer(whole, now);
  return slotAnswer(whole, slot, o.slot !== undefined, now);
}

/** What every answer about the CronJob works from, whichever slot it is about. */
interface Ground {
  f: WhyFacts;
  operator: Found[];
  name: string;
  namespace: string;
  zone: string;
  schedules: CronJobSchedules;
  anchor: Date | undefined;
  /**
   * spec.exclusions as read: the slots stay the schedules' as written (an excluded one is asked about as such), the
   * next run is the first no window holds.
   */
  exclusions: ExclusionsView;
  excluding: ReturnType<typeof excludingSchedules>;
  excludedBy: (slot: Date) => Excluded | undefined;
  jobsByName: Map<string, Readonly<Job>>;
  created: Date | undefined;
  /** status.lastScheduleTime: `@every` counts from it, and spec.maxRuns ends on it. */
  lastRun: Date | undefined;
  /**
   * Only an `@every` member counts from the last run; a cron schedule's last run may be another schedule's slot (the
   * spec changed since).
   */
  everyMember: boolean;
}

/** The answer's parts that are the CronJob's, not its slot's: they join whichever verdict is said. */
interface Whole {
  g: Ground;
  next: NextRun;
  /** The rows' problems (their halves'), said whichever slot is asked about. */
  problems: Found[];
  /** A request of it waiting for a place in its group, asked about no slot. */
  request: RecentRun | undefined;
}

/** The next run: the first slot no window holds (while one is left). */
interface NextRun {
  at: Date;
  /** False past spec.endTime, once spec.maxRuns is made, or with no schedule of its own (spec.after only). */
  has: boolean;
  from: SlotSource;
  /** The Diagnosis's `next`, spread into each answer (none without a next run). */
  view: Pick<Diagnosis, "next">;
}

function groundOf(f: WhyFacts, operator: Found[], schedules: CronJobSchedules): Ground {
  const cronJob = f.cronJob;
  const anchor = anchorOf(cronJob, schedules);
  const exclusions = exclusionsOf(cronJob, f.calendars ?? []);
  const excluding = excludingSchedules(schedules, exclusions.exclusions);
  return {
    f,
    operator,
    name: cronJob.metadata?.name ?? "",
    namespace: cronJob.metadata?.namespace ?? "",
    zone: zoneOf(cronJob),
    schedules,
    anchor,
    exclusions,
    excluding,
    excludedBy: (slot: Date) => excluding.excludedBy(slot, anchor),
    jobsByName: new Map(f.jobs.map((j) => [j.metadata?.name ?? "", j])),
    created: cronJob.metadata?.creationTimestamp ? new Date(cronJob.metadata.creationTimestamp) : undefined,
    lastRun: cronJob.status?.lastScheduleTime ? new Date(cronJob.status.lastScheduleTime) : undefined,
    everyMember: schedules.schedule.set.members.some((m) => m.schedule.isEvery),
  };
}

/**
 * The answer as printed: which install runs its namespace, the operator's findings and `extra` besides the verdict,
 * and the exit code of them all.
 */
function finish(
  f: WhyFacts,
  operator: Found[],
  d: Omit<Diagnosis, "exitCode" | "also" | "unreadable" | "cronJob">,
  extra: Finding[] = [],
): Diagnosis {
  const namespace = f.cronJob.metadata?.namespace ?? "";
  const runBy = runByOf(f.operator, namespace, f.now);
  const base = {
    cronJob: { namespace, name: f.cronJob.metadata?.name ?? "" },
    ...(runBy ? { runBy } : {}),
    unreadable: f.unreadable,
  };
  const also = [...operator.map(finding), ...extra].filter((x) => x.cause !== d.cause);
  const exitCode =
    d.status === "cause" || also.some((x) => !x.unsure) ? 1 : d.status === "unknown" || also.length ? 2 : 0;
  return { ...base, ...d, also, exitCode };
}

/** The risks of the verdict's cause and the rows' problems, said besides any verdict. */
function extras(w: Whole, cause: CauseId | undefined): Finding[] {
  return [...risks(w.g.f, cause, w.g.exclusions), ...w.problems.map(finding)];
}

function invalidSchedule(cronJob: WhyFacts["cronJob"]): Verdict {
  const cond = cronJob.status?.conditions?.find((x) => x.type === "Available" && x.status === "False");
  return found("invalid-schedule", cond?.message ? { message: cond.message } : {}, [
    `spec.schedule: ${JSON.stringify(cronJob.spec?.schedule)}; spec.timeZone: ${JSON.stringify(cronJob.spec?.timeZone ?? "UTC")}`,
    ...(cond ? [`condition Available=False ${cond.reason ?? "?"}: ${cond.message ?? ""}`] : []),
  ]);
}

function entriesAt(cronJob: WhyFacts["cronJob"], slot: Date): RecentRun[] {
  return (cronJob.status?.recentRuns ?? []).filter(
    (e) => e.scheduledTime !== undefined && Date.parse(e.scheduledTime) === slot.getTime(),
  );
}

/** The slot's own entry: the schedule's decision (a Backfill's, or a retry's, only when the record has no other). */
function entryFor(cronJob: WhyFacts["cronJob"], slot: Date): RecentRun | undefined {
  const ranked = entriesAt(cronJob, slot).flatMap((e) => {
    const rank = rowOfEntry(TRIGGER_ROWS, e)?.slotRank;
    return rank === undefined ? [] : [{ e, rank }];
  });
  return ranked.sort((a, b) => a.rank - b.rank)[0]?.e;
}

/** The slot's first Job: one of a row whose runs are a slot's own (slotRank; a retry's Job names its slot too). */
function jobFor(g: Ground, slot: Date): Readonly<Job> | undefined {
  return (
    g.jobsByName.get(jobNameFor(g.name, slot)) ??
    g.f.jobs.find(
      (j) => scheduledTimeOf(j)?.getTime() === slot.getTime() && rowOfJob(TRIGGER_ROWS, j).slotRank !== undefined,
    )
  );
}

/**
 * The newest slot at or before t. `@every` counts from its anchor (the last run), which mostRecent does not look
 * behind: the last run is a slot too.
 */
function latest(g: Ground, t: Date): Date | undefined {
  const recent = g.schedules.schedule.mostRecent(t, g.anchor);
  const ran = g.lastRun && g.lastRun <= t && g.everyMember ? g.lastRun : undefined;
  return recent && (!ran || recent > ran) ? recent : ran;
}

function isSlot(g: Ground, t: Date): boolean {
  return (
    latest(g, t)?.getTime() === t.getTime() ||
    entriesAt(g.f.cronJob, t).length > 0 ||
    jobFor(g, t) !== undefined ||
    (g.created !== undefined && g.schedules.schedule.mostRecent(t, g.created)?.getTime() === t.getTime())
  );
}

/**
 * A slot's run starts at the slot plus its jitter offset (spec.jitter): just due counts from then, and a run whose
 * start has not come is due, not missed.
 */
function offsetAt(g: Ground, t: Date): number | undefined {
  return offsetOf(g.f.cronJob, t, jobFor(g, t), entryFor(g.f.cronJob, t));
}

function startOf(g: Ground, t: Date): number {
  return t.getTime() + (offsetAt(g, t) ?? 0) * SECOND;
}

/**
 * The slot asked about when none is named: the latest that should have run, one just due that no one has decided
 * about yielding to the one before it. Ended by spec.maxRuns, its last run: the newest slot it owes (the schedule's
 * later slots are none of its).
 */
function latestDue(g: Ground): Date | undefined {
  const { f } = g;
  if (maxRunsEnd(f.cronJob.spec, f.cronJob.status) !== undefined) return g.lastRun;
  const slot = latest(g, f.now);
  if (!slot || entryFor(f.cronJob, slot) || jobFor(g, slot)) return slot;
  const start = startOf(g, slot);
  if (start <= f.now.getTime() && f.now.getTime() - start < JUST_DUE_MS)
    return latest(g, new Date(slot.getTime() - 1)) ?? slot;
  return slot;
}

function nextRunOf(g: Ground): NextRun {
  const { f, schedules, anchor, zone } = g;
  const unexcluded = g.excluding.schedules.schedule.next(f.now, anchor);
  const at = unexcluded.getTime() < NO_SLOT_LEFT ? unexcluded : schedules.schedule.next(f.now, anchor);
  const note = nextRuns(schedules, anchor, new Date(at.getTime() - 1), 1)[0]?.note;
  const blocker = nextBlocker(f, g.operator, g.exclusions);
  const blocked = blocker && blockedText(blocker);
  const has = at.getTime() < NO_SLOT_LEFT && !scheduleEndOf(f.cronJob, f.now, at);
  const from = has ? slotSource(schedules, at, anchor, zone) : { zone, words: "" };
  const next = has
    ? {
        utc: iso(at),
        local: rfc3339InZone(at, from.zone),
        text: `${slotText(at, from.zone)}${from.words}`,
        ...(note ? { note } : {}),
        ...(blocked ? { blocked } : {}),
      }
    : undefined;
  return { at, has, from, view: next ? { next } : {} };
}

/** What the rows' halves read of the CronJob: its ground, and the context of a slot at a time, said in `words`. */
function rowGroundOf(g: Ground): RowGround {
  return { ...g, slotAt: (at, words) => ({ ...ctxOf(g, { zone: g.zone, words: "" }, at), slotText: words }) };
}

/**
 * What the rows' halves say asked about no slot (spec.after's: what the CronJob waits for of its upstreams): the
 * answer about the newest time, the first row's of equals.
 */
function nowOf(rows: RowGround): NowAnswer | undefined {
  const time = (a: NowAnswer) => a.at?.getTime() ?? -Infinity;
  return halvesOf()
    .flatMap(({ half }) => half.now?.(rows) ?? [])
    .reduce<NowAnswer | undefined>((a, b) => (a && time(a) >= time(b) ? a : b), undefined);
}

/**
 * A request of it waiting for a place in its group answers instead of `slotVerdict` when that says the CronJob is
 * well, or that only requests run now (REQUEST_FIRST).
 */
function requestAnswer(w: Whole, slotVerdict: Verdict): Diagnosis | undefined {
  const { g, next, request } = w;
  if (!request) return undefined;
  if (slotVerdict.status !== "healthy" && !(slotVerdict.cause && REQUEST_FIRST.has(slotVerdict.cause)))
    return undefined;
  // A request's run is a slot when its entry names one (a backfill's); a run-now request's has none.
  const at = request.scheduledTime ? new Date(request.scheduledTime) : undefined;
  const from = at ? slotSource(g.schedules, at, g.anchor, g.zone) : next.from;
  const c = ctxOf(g, from, at ?? g.f.now);
  const id = request.request ?? "?";
  const row = rowOfEntry(TRIGGER_ROWS, request);
  const words = requestedText(row ?? { name: "other", word: request.trigger }, {
    request: id,
    ...(at ? { when: c.slotText } : {}),
  });
  const verdict = groupHeldVerdict({ ...c, slotText: words }, request, [entryLine(request)], true);
  const slotView = at ? { slot: { utc: iso(at), local: rfc3339InZone(at, from.zone), timeZone: from.zone } } : {};
  return finish(
    g.f,
    g.operator,
    { ...verdict, ...slotView, request: { trigger: request.trigger, id }, ...next.view },
    extras(w, verdict.cause),
  );
}

/** No slot to ask about yet (none due since it was created): suspended, a row's problem or answer, ended, or not yet. */
function noSlotAnswer(w: Whole, now: NowAnswer | undefined): Diagnosis {
  const { g, next } = w;
  const cronJob = g.f.cronJob;
  const end = scheduleEndOf(cronJob, g.f.now, next.has ? next.at : undefined);
  const problem = w.problems[0];
  const verdict: Verdict = cronJob.spec?.suspend
    ? undecidedVerdict(ctxOf(g, next.from, next.at), g.operator)
    : problem
      ? found(problem.cause, problem.params, problem.evidence)
      : (now?.verdict ?? (end ? endedVerdict(cronJob, end, undefined) : notYetVerdict(g, next)));
  return requestAnswer(w, verdict) ?? finish(g.f, g.operator, { ...verdict, ...next.view }, extras(w, verdict.cause));
}

function notYetVerdict(g: Ground, next: NextRun): Verdict {
  const cronJob = g.f.cronJob;
  const startTime = notStartedUntil(cronJob.spec, g.f.now);
  return {
    status: "healthy" as const,
    verdict:
      startTime && next.view.next
        ? NO_CAUSE.notStarted({ startTime: iso(startTime), nextSlot: next.view.next.text })
        : NO_CAUSE.noSlotYet({ nextSlot: next.view.next?.text ?? "?" }),
    evidence: startTime ? [`spec.startTime: ${String(cronJob.spec?.startTime)}`] : [],
    fix: [],
  };
}

/** The answer about a slot: `asked` when the user named it (--slot), else the latest due. */
function slotAnswer(w: Whole, slot: Date, asked: boolean, now: NowAnswer | undefined): Diagnosis {
  const { g, next } = w;
  const from = slotSource(g.schedules, slot, g.anchor, g.zone);
  const plain = ctxOf(g, from, slot);
  const offset = offsetAt(g, slot);
  const c = offset === undefined ? plain : { ...plain, slotText: jitteredText(plain.slotText, offset) };
  let verdict = slotVerdict(g, c, plain.slotText, offset, asked);
  // Asked about no slot: a row's newer answer (a run after an upstream's) answers, and an ended schedule says so (its
  // last slot well).
  if (now?.at && now.at > slot) verdict = now.verdict;
  const end = asked ? undefined : scheduleEndOf(g.f.cronJob, g.f.now, next.has ? next.at : undefined);
  if (end) verdict = endedVerdict(g.f.cronJob, end, verdict);
  const request = requestAnswer(w, verdict);
  if (request) return request;
  return finish(
    g.f,
    g.operator,
    { ...verdict, evidence: slotEvidence(g, c, verdict), slot: slotViewOf(g, from, slot), ...next.view },
    extras(w, verdict.cause),
  );
}

function slotViewOf(g: Ground, from: SlotSource, slot: Date): NonNullable<Diagnosis["slot"]> {
  const slotNote = nextRuns(g.schedules, g.anchor, new Date(slot.getTime() - 1), 1)[0];
  return {
    utc: iso(slot),
    local: rfc3339InZone(slot, from.zone),
    timeZone: from.zone,
    ...(from.schedules ? { schedules: from.schedules } : {}),
    ...(slotNote?.note && slotNote.utc === iso(slot) ? { note: slotNote.note } : {}),
  };
}

/** The verdict's evidence, with the slot's later runs and, as an H field runs at a minute the user may not expect, which. */
function slotEvidence(g: Ground, c: SlotContext, verdict: Verdict): string[] {
  if (verdict.cause === "not-a-slot") return verdict.evidence;
  const hashed = g.schedules.entries.filter((e) => e.resolvedSchedule !== e.schedule);
  return [
    ...verdict.evidence,
    ...laterRunsEvidence(c),
    ...hashed.map(
      (e) =>
        `schedule ${JSON.stringify(e.schedule)} runs as ${JSON.stringify(e.resolvedSchedule)} (H hashed from ${g.namespace}/${g.name})`,
    ),
  ];
}

/** The slot's own verdict: no slot of the schedule (when asked about), before the CronJob was, or what became of it. */
function slotVerdict(
  g: Ground,
  c: SlotContext,
  plainText: string,
  offset: number | undefined,
  asked: boolean,
): Verdict {
  const slot = c.slot;
  if (asked && !isSlot(g, slot)) return notASlot(c, g.schedules, g.anchor);
  if (g.created && slot <= g.created) {
    const created = iso(g.created);
    return found(
      "before-creation",
      { when: c.slotText, created, name: g.name, namespace: g.namespace, slot: iso(slot) },
      [`metadata.creationTimestamp: ${created}`],
    );
  }
  return runVerdict(g, c, plainText, offset);
}

/**
 * What became of the slot's run: its later runs (a retry's attempts) first, as the newest run of the slot is its
 * verdict; then its Job, its record entry, or, with neither, why none is there yet.
 */
function runVerdict(g: Ground, c: SlotContext, plainText: string, offset: number | undefined): Verdict {
  const { f } = g;
  const slot = c.slot;
  const entry = entryFor(f.cronJob, slot);
  const job = jobFor(g, slot);
  // A jittered slot whose run's start has not come: due then, not missed.
  const jitterDue =
    offset !== undefined && startOf(g, slot) > f.now.getTime() && !f.cronJob.spec?.suspend && !f.cronJob.status?.stopped
      ? jitterDueVerdict(plainText, slot, offset)
      : undefined;
  const verdict =
    laterRunsVerdict(c, { job, entry }) ??
    (job ? ranVerdict(c, job, entry) : entry ? recordVerdict(c, entry) : (jitterDue ?? unrunVerdict(g, c)));
  return offset !== undefined && !jitterDue
    ? { ...verdict, evidence: [offsetEvidence(slot, offset, job), ...verdict.evidence] }
    : verdict;
}

/**
 * A slot no one decided about: excluded when a window holds it (unless nothing would run it anyway), else due or
 * undecided.
 */
function unrunVerdict(g: Ground, c: SlotContext): Verdict {
  const { f } = g;
  const slot = c.slot;
  const excluded =
    f.cronJob.spec?.suspend || f.cronJob.status?.stopped
      ? undefined
      : excludedVerdict(c, excludedEntryFor(c), slot > f.now);
  return excluded ?? (slot > f.now ? futureVerdict(c, g.operator) : undecidedVerdict(c, g.operator));
}

/**
 * The CronJob's run waiting for a place in its group, when it is a run-now or backfill request's (its Held entry):
 * the operator's rule, with its Jobs (a request whose Job exists has started).
 */
function waitingRequest(f: WhyFacts): RecentRun | undefined {
  const w = waitingRunOf(f.cronJob, f.now.getTime(), f.jobs);
  return w && isExplicit(w.held) ? (w.held as RecentRun) : undefined;
}

function ctxOf(g: Ground, from: SlotSource, slot: Date): SlotContext {
  const { f } = g;
  return {
    exclusions: g.exclusions,
    excludedBy: g.excludedBy,
    f,
    cronJob: f.cronJob,
    name: g.name,
    namespace: g.namespace,
    zone: from.zone,
    slot,
    slotText: `${slotText(slot, from.zone)}${from.words}`,
    podsOf: (job) => f.pods.filter((p) => p.job === job),
    jobNamed: (job) => g.jobsByName.get(job),
  };
}
