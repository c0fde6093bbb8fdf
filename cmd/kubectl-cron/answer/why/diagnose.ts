// The diagnosis of one CronJob: which slot is asked about, and which module decides its verdict; or, asked about
// none, a run-now or backfill request of it waiting for a place in its group.
import {
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
import { afterAnswer, afterProblems } from "./after.ts";
import { entryLine } from "./entry.ts";
import { excludedEntryFor, excludedVerdict } from "./excluded.ts";
import { groupHeldVerdict } from "./group.ts";
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
  const cronJob = f.cronJob;
  const name = cronJob.metadata?.name ?? "";
  const namespace = cronJob.metadata?.namespace ?? "";
  const zone = zoneOf(cronJob);
  const operator = operatorFindings(f);
  const base = { cronJob: { namespace, name }, unreadable: f.unreadable };
  const jobsByName = new Map(f.jobs.map((j) => [j.metadata?.name ?? "", j]));
  const schedules = schedulesOf(cronJob);
  const finish = (
    d: Omit<Diagnosis, "exitCode" | "also" | "unreadable" | "cronJob">,
    extra: Finding[] = [],
  ): Diagnosis => {
    const also = [...operator.map(finding), ...extra].filter((x) => x.cause !== d.cause);
    const exitCode =
      d.status === "cause" || also.some((x) => !x.unsure) ? 1 : d.status === "unknown" || also.length ? 2 : 0;
    return { ...base, ...d, also, exitCode };
  };
  if (!schedules) {
    const cond = cronJob.status?.conditions?.find((x) => x.type === "Available" && x.status === "False");
    return finish(
      found("invalid-schedule", cond?.message ? { message: cond.message } : {}, [
        `spec.schedule: ${JSON.stringify(cronJob.spec?.schedule)}; spec.timeZone: ${JSON.stringify(cronJob.spec?.timeZone ?? "UTC")}`,
        ...(cond ? [`condition Available=False ${cond.reason ?? "?"}: ${cond.message ?? ""}`] : []),
      ]),
    );
  }
  const anchor = anchorOf(cronJob, schedules);
  // spec.exclusions as read: the slots stay the schedules' as written (an excluded one is asked about as such), the
  // next run is the first no window holds.
  const exclusions = exclusionsOf(cronJob, f.calendars ?? []);
  const excluding = excludingSchedules(schedules, exclusions.exclusions);
  const excludedBy = (slot: Date) => excluding.excludedBy(slot, anchor);
  // The slot's own entry: the schedule's decision (a Backfill's, or a retry's, only when the record has no other).
  const entriesAt = (slot: Date) =>
    (cronJob.status?.recentRuns ?? []).filter(
      (e) => e.scheduledTime !== undefined && Date.parse(e.scheduledTime) === slot.getTime(),
    );
  const entryFor = (slot: Date) => {
    const at = entriesAt(slot);
    const ranked = at.flatMap((e) => {
      const rank = rowOfEntry(TRIGGER_ROWS, e)?.slotRank;
      return rank === undefined ? [] : [{ e, rank }];
    });
    return ranked.sort((a, b) => a.rank - b.rank)[0]?.e;
  };
  // The slot's first Job: one of a row whose runs are a slot's own (slotRank; a retry's Job names its slot too).
  const jobFor = (slot: Date) =>
    jobsByName.get(jobNameFor(name, slot)) ??
    f.jobs.find(
      (j) => scheduledTimeOf(j)?.getTime() === slot.getTime() && rowOfJob(TRIGGER_ROWS, j).slotRank !== undefined,
    );

  // The newest slot at or before t. `@every` counts from its anchor (the last run), which mostRecent does not look
  // behind: the last run is a slot too.
  const lastRun = cronJob.status?.lastScheduleTime ? new Date(cronJob.status.lastScheduleTime) : undefined;
  // Only an `@every` member counts from the last run; a cron schedule's last run may be another schedule's slot
  // (the spec changed since).
  const everyMember = schedules.schedule.set.members.some((m) => m.schedule.isEvery);
  const latest = (t: Date): Date | undefined => {
    const recent = schedules.schedule.mostRecent(t, anchor);
    const ran = lastRun && lastRun <= t && everyMember ? lastRun : undefined;
    return recent && (!ran || recent > ran) ? recent : ran;
  };
  const isSlot = (t: Date) =>
    latest(t)?.getTime() === t.getTime() ||
    entriesAt(t).length > 0 ||
    jobFor(t) !== undefined ||
    (created !== undefined && schedules.schedule.mostRecent(t, created)?.getTime() === t.getTime());
  const created = cronJob.metadata?.creationTimestamp ? new Date(cronJob.metadata.creationTimestamp) : undefined;
  // A slot's run starts at the slot plus its jitter offset (spec.jitter): just due counts from then, and a run whose
  // start has not come is due, not missed.
  const offsetAt = (t: Date) => offsetOf(cronJob, t, jobFor(t), entryFor(t));
  const startOf = (t: Date) => t.getTime() + (offsetAt(t) ?? 0) * SECOND;
  // Ended by spec.maxRuns: its last run is the newest slot it owes (the schedule's later slots are none of its).
  const endedByCount = !o.slot && maxRunsEnd(cronJob.spec, cronJob.status) !== undefined;
  let slot = o.slot ?? (endedByCount ? lastRun : latest(f.now));
  if (!o.slot && !endedByCount && slot && !entryFor(slot) && !jobFor(slot)) {
    const start = startOf(slot);
    if (start <= f.now.getTime() && f.now.getTime() - start < JUST_DUE_MS)
      slot = latest(new Date(slot.getTime() - 1)) ?? slot;
  }
  // The next run: the first slot no window holds (while one is left).
  const unexcluded = excluding.schedules.schedule.next(f.now, anchor);
  const nextAt = unexcluded.getTime() < NO_SLOT_LEFT ? unexcluded : schedules.schedule.next(f.now, anchor);
  const nextNote = nextRuns(schedules, anchor, new Date(nextAt.getTime() - 1), 1)[0]?.note;
  const blocker = nextBlocker(f, operator, exclusions);
  const blocked = blocker && blockedText(blocker);
  // No next slot: past spec.endTime, spec.maxRuns made, or no schedule of its own (spec.after only).
  const hasNext = nextAt.getTime() < NO_SLOT_LEFT && !scheduleEndOf(cronJob, f.now, nextAt);
  const nextFrom = hasNext ? slotSource(schedules, nextAt, anchor, zone) : { zone, words: "" };
  const next = hasNext
    ? {
        utc: iso(nextAt),
        local: rfc3339InZone(nextAt, nextFrom.zone),
        text: `${slotText(nextAt, nextFrom.zone)}${nextFrom.words}`,
        ...(nextNote ? { note: nextNote } : {}),
        ...(blocked ? { blocked } : {}),
      }
    : undefined;
  const withNext = next ? { next } : {};
  // spec.after: its problems (a cycle, an upstream missing) and what it waits for, asked about no slot.
  const named = { f, name, namespace };
  const problems = afterProblems(named);
  const afterNow = o.slot
    ? undefined
    : afterAnswer(named, operator, (at, words) => ({
        ...ctx(f, name, namespace, { zone, words: "" }, at, jobsByName, exclusions, excludedBy),
        slotText: words,
      }));
  const extras = (cause: CauseId | undefined) => [...risks(f, cause, exclusions), ...problems.map(finding)];
  // A request of it waiting for a place in its group, asked about no slot.
  const request = o.slot ? undefined : waitingRequest(f);
  const requestAnswer = (slotVerdict: Verdict): Diagnosis | undefined => {
    if (!request) return undefined;
    if (slotVerdict.status !== "healthy" && !(slotVerdict.cause && REQUEST_FIRST.has(slotVerdict.cause)))
      return undefined;
    // A request's run is a slot when its entry names one (a backfill's); a run-now request's has none.
    const at = request.scheduledTime ? new Date(request.scheduledTime) : undefined;
    const from = at ? slotSource(schedules, at, anchor, zone) : nextFrom;
    const c = ctx(f, name, namespace, from, at ?? f.now, jobsByName, exclusions, excludedBy);
    const id = request.request ?? "?";
    const row = rowOfEntry(TRIGGER_ROWS, request);
    const words = requestedText(row ?? { name: "other", word: request.trigger }, {
      request: id,
      ...(at ? { when: c.slotText } : {}),
    });
    const verdict = groupHeldVerdict({ ...c, slotText: words }, request, [entryLine(request)], true);
    const slotView = at ? { slot: { utc: iso(at), local: rfc3339InZone(at, from.zone), timeZone: from.zone } } : {};
    return finish(
      { ...verdict, ...slotView, request: { trigger: request.trigger, id }, ...withNext },
      extras(verdict.cause),
    );
  };
  if (!slot || (!o.slot && created && slot < created)) {
    const end = scheduleEndOf(cronJob, f.now, hasNext ? nextAt : undefined);
    const startTime = notStartedUntil(cronJob.spec, f.now);
    const problem = problems[0];
    const verdict: Verdict = cronJob.spec?.suspend
      ? undecidedVerdict(ctx(f, name, namespace, nextFrom, nextAt, jobsByName, exclusions, excludedBy), operator)
      : problem
        ? found(problem.cause, problem.params, problem.evidence)
        : (afterNow?.verdict ??
          (end
            ? endedVerdict(cronJob, end, undefined)
            : {
                status: "healthy" as const,
                verdict:
                  startTime && next
                    ? NO_CAUSE.notStarted({ startTime: iso(startTime), nextSlot: next.text })
                    : NO_CAUSE.noSlotYet({ nextSlot: next?.text ?? "?" }),
                evidence: startTime ? [`spec.startTime: ${String(cronJob.spec?.startTime)}`] : [],
                fix: [],
              }));
    return requestAnswer(verdict) ?? finish({ ...verdict, ...withNext }, extras(verdict.cause));
  }
  const from = slotSource(schedules, slot, anchor, zone);
  const plain = ctx(f, name, namespace, from, slot, jobsByName, exclusions, excludedBy);
  const offset = offsetAt(slot);
  const c = offset === undefined ? plain : { ...plain, slotText: jitteredText(plain.slotText, offset) };
  const slotNote = nextRuns(schedules, anchor, new Date(slot.getTime() - 1), 1)[0];
  const slotView = {
    utc: iso(slot),
    local: rfc3339InZone(slot, from.zone),
    timeZone: from.zone,
    ...(from.schedules ? { schedules: from.schedules } : {}),
    ...(slotNote?.note && slotNote.utc === iso(slot) ? { note: slotNote.note } : {}),
  };
  let verdict: Verdict;
  if (o.slot && !isSlot(o.slot)) {
    verdict = notASlot(c, schedules, anchor);
  } else if (created && slot < created) {
    verdict = found("before-creation", { when: c.slotText, created: iso(created), name, namespace, slot: iso(slot) }, [
      `metadata.creationTimestamp: ${iso(created)}`,
    ]);
  } else {
    const entry = entryFor(slot);
    const job = jobFor(slot);
    // A slot no one decided about that a window holds: excluded, unless nothing would run it anyway.
    const excluded = () =>
      cronJob.spec?.suspend || cronJob.status?.stopped
        ? undefined
        : excludedVerdict(c, excludedEntryFor(c), slot > f.now);
    // The slot's later runs (a retry's attempts) first: the newest run of the slot is its verdict.
    // A jittered slot whose run's start has not come: due then, not missed.
    const jitterDue =
      offset !== undefined && startOf(slot) > f.now.getTime() && !cronJob.spec?.suspend && !cronJob.status?.stopped
        ? jitterDueVerdict(plain.slotText, slot, offset)
        : undefined;
    verdict =
      laterRunsVerdict(c, { job, entry }) ??
      (job
        ? ranVerdict(c, job, entry)
        : entry
          ? recordVerdict(c, entry)
          : (jitterDue ?? excluded() ?? (slot > f.now ? futureVerdict(c, operator) : undecidedVerdict(c, operator))));
    if (offset !== undefined && !jitterDue) {
      verdict = { ...verdict, evidence: [offsetEvidence(slot, offset, job), ...verdict.evidence] };
    }
  }
  // Asked about no slot: a newer run after an upstream answers, and an ended schedule says so (its last slot well).
  if (afterNow?.at && afterNow.at > slot) verdict = afterNow.verdict;
  const end = o.slot ? undefined : scheduleEndOf(cronJob, f.now, hasNext ? nextAt : undefined);
  if (end) verdict = endedVerdict(cronJob, end, verdict);
  const asked = requestAnswer(verdict);
  if (asked) return asked;
  // An H field runs at a minute the user may not expect: say which.
  const hashed =
    verdict.cause === "not-a-slot" ? [] : schedules.entries.filter((e) => e.resolvedSchedule !== e.schedule);
  const evidence = [
    ...verdict.evidence,
    ...(verdict.cause === "not-a-slot" ? [] : laterRunsEvidence(c)),
    ...hashed.map(
      (e) =>
        `schedule ${JSON.stringify(e.schedule)} runs as ${JSON.stringify(e.resolvedSchedule)} (H hashed from ${namespace}/${name})`,
    ),
  ];
  return finish({ ...verdict, evidence, slot: slotView, ...withNext }, extras(verdict.cause));
}

/**
 * The CronJob's run waiting for a place in its group, when it is a run-now or backfill request's (its Held entry):
 * the operator's rule, with its Jobs (a request whose Job exists has started).
 */
function waitingRequest(f: WhyFacts): RecentRun | undefined {
  const w = waitingRunOf(f.cronJob, f.now.getTime(), f.jobs);
  return w && isExplicit(w.held) ? (w.held as RecentRun) : undefined;
}

function ctx(
  f: WhyFacts,
  name: string,
  namespace: string,
  from: SlotSource,
  slot: Date,
  jobsByName: Map<string, Readonly<Job>>,
  exclusions: ExclusionsView,
  excludedBy: (slot: Date) => Excluded | undefined,
): SlotContext {
  return {
    exclusions,
    excludedBy,
    f,
    cronJob: f.cronJob,
    name,
    namespace,
    zone: from.zone,
    slot,
    slotText: `${slotText(slot, from.zone)}${from.words}`,
    podsOf: (job) => f.pods.filter((p) => p.job === job),
    jobNamed: (job) => jobsByName.get(job),
  };
}
