// status.recentRuns, the record of the operator's decisions (api/v1/recentruns.ts): each slot or request decided
// about, once, newest first, at most MAX_RECENT_RUNS. Pure: step 4 brings it up to date with the children (a Job
// of ours it lacks, an outcome), the run path and step 8 add their decisions, and the commit writes it in the one
// status write. Every function gives the same record for the same input, so a pass repeated after a crash writes
// nothing new, and a decision that holds on every pass (a slot held behind a running Job) is one entry, not a
// write per pass.
import {
  classifyJob,
  type CronJobWireStatus,
  ENDED_MESSAGE_ANNOTATION,
  ENDED_PODS_ANNOTATION,
  ENDED_REASON_ANNOTATION,
  finishedAt,
  type Job,
  MAX_RECENT_RUNS,
  MAX_RECORD_MESSAGE_LENGTH,
  OutcomeResult,
  runIndexOf,
  PODS_SHOWED,
  type RecentRunWire,
  RecordDecision,
  RecordReason,
  RecordTrigger,
  runFactsOf,
  type RunSubject,
} from "../api/v1/index.ts";
import { rfc3339 } from "../runtime/metatime.ts";

// What the run path hands the record, defined with the record rather than where it is made (triggers.ts, runs.ts):
// the triggers' rows return their decisions (Decision) and the run path enters them here (recordDecision), so this
// module must not import the table back.

export type { RunSubject };

/** Why the group holds a run: the record's reason, its words, and the Job it waits behind. */
export interface GroupHold {
  reason:
    | typeof RecordReason.ConcurrencyGroupFull
    | typeof RecordReason.ConcurrencyGroupQueue
    | typeof RecordReason.ConcurrencyGroupNotFound;
  message: string;
  blockedBy?: string | undefined;
}

/** A decision about one slot or request, as the steps hand it to the record. */
export interface Decision {
  trigger: RecordTrigger;
  scheduledTime?: Date | undefined;
  request?: string | undefined;
  decision: RecordDecision;
  reason: string;
  message?: string | undefined;
  job?: string | undefined;
  blockedBy?: string | undefined;
  replaced?: readonly string[] | undefined;
  /** The entry's facts beside its words (api/v1/recentruns.ts): a retry's, an exclusion's. */
  attempt?: RecentRunWire["attempt"];
  startsAt?: Date | undefined;
  supersededBy?: Date | undefined;
  exclusion?: RecentRunWire["exclusion"];
}

/** What an entry is about: its slot and its request; an entry with neither (a stop) is its own decision. */
function entryKey(e: Pick<RecentRunWire, "scheduledTime" | "request" | "decision" | "decidedAt">): string {
  if (e.scheduledTime === undefined && e.request === undefined) return `\u0000${e.decision}\u0000${e.decidedAt}`;
  const slot = e.scheduledTime === undefined ? "" : String(Date.parse(e.scheduledTime));
  return `${slot}\u0000${e.request ?? ""}`;
}

function bounded(s: string | undefined): string | undefined {
  if (s === undefined || s.length <= MAX_RECORD_MESSAGE_LENGTH) return s;
  return `${s.slice(0, MAX_RECORD_MESSAGE_LENGTH - 1)}…`;
}

/**
 * Newest decision first. decidedAt has whole seconds, so a slot's run and the retry after its failure can tie: a tie
 * goes to the newer slot, then to the later run of it (its row's runIndex: a retry's attempt, decided after the one
 * before failed), then by key, so the order never
 * depends on the input's.
 */
function newestFirst(a: RecentRunWire, b: RecentRunWire): number {
  return (
    Date.parse(b.decidedAt) - Date.parse(a.decidedAt) ||
    Date.parse(b.scheduledTime ?? "0") - Date.parse(a.scheduledTime ?? "0") ||
    runIndexOf(b) - runIndexOf(a) ||
    entryKey(a).localeCompare(entryKey(b))
  );
}

function withRecord(status: Readonly<CronJobWireStatus>, record: RecentRunWire[]): CronJobWireStatus {
  const sorted = [...record].sort(newestFirst).slice(0, MAX_RECENT_RUNS);
  const { recentRuns: _old, ...rest } = status;
  return sorted.length ? { ...rest, recentRuns: sorted } : rest;
}

function entryOf(d: Decision, decidedAt: string): RecentRunWire {
  const e: RecentRunWire = { trigger: d.trigger, decision: d.decision, reason: d.reason, decidedAt };
  if (d.scheduledTime) e.scheduledTime = rfc3339(d.scheduledTime);
  if (d.request !== undefined) e.request = d.request;
  const message = bounded(d.message);
  if (message !== undefined) e.message = message;
  if (d.job !== undefined) e.job = d.job;
  if (d.blockedBy !== undefined) e.blockedBy = d.blockedBy;
  if (d.replaced?.length) e.replaced = [...d.replaced].slice(0, MAX_RECENT_RUNS);
  if (d.attempt) e.attempt = { ...d.attempt };
  if (d.startsAt) e.startsAt = rfc3339(d.startsAt);
  if (d.supersededBy) e.supersededBy = rfc3339(d.supersededBy);
  if (d.exclusion) e.exclusion = { ...d.exclusion };
  return e;
}

/** A decision and the instant it was made: what every step and row returns for the record, and enterDecisions enters. */
export interface TimedDecision {
  readonly decision: Decision;
  readonly at: Date;
}

/**
 * The one way decisions enter the record: each in turn, through recordDecision. The steps (a stop, missed and excluded
 * slots, slots held for a calendar) and the triggers' rows return their decisions; the reconciler enters them here.
 */
export function enterDecisions(
  status: Readonly<CronJobWireStatus>,
  decisions: readonly TimedDecision[] | undefined,
): CronJobWireStatus {
  return (decisions ?? []).reduce((s, d) => recordDecision(s, d.decision, d.at), { ...status });
}

/**
 * Records a decision at `at` (for a created Job: its creation time). An entry about the same slot or request is
 * replaced, unless it already holds this decision for this reason (a decision that holds on every pass keeps its
 * first time and message, so it is written once). A Held slot that is later missed keeps the Job it waited behind.
 * An excluded slot continues its window's run of slots (excludedSlot).
 */
export function recordDecision(status: Readonly<CronJobWireStatus>, d: Decision, at: Date): CronJobWireStatus {
  const entry = entryOf(d, rfc3339(at));
  const key = entryKey(entry);
  const record = status.recentRuns ?? [];
  const prev = record.find((e) => entryKey(e) === key);
  if (prev && prev.decision === entry.decision && prev.reason === entry.reason && prev.job === entry.job) {
    return { ...status };
  }
  if (entry.reason === RecordReason.ExcludedByCalendar && entry.exclusion?.window !== undefined) {
    return excludedSlot(status, entry);
  }
  // A hold that changed (the group's queue, not a Job) names its own blocker or none; a miss keeps the last one.
  if (
    prev?.blockedBy &&
    entry.blockedBy === undefined &&
    entry.job === undefined &&
    entry.decision !== RecordDecision.Held
  )
    entry.blockedBy = prev.blockedBy;
  if (prev?.outcome && prev.job === entry.job) entry.outcome = prev.outcome;
  return withRecord(status, [...record.filter((e) => entryKey(e) !== key), entry]);
}

/**
 * A slot an exclusion window held: one Skipped entry per window's run of slots, so a freeze over an hourly schedule
 * is one entry that moves to its newest slot and counts them (`exclusion.slots`, from `exclusion.firstSlot`), not the
 * record's whole length. Its message is the window's; the count is added here.
 */
function excludedSlot(status: Readonly<CronJobWireStatus>, entry: RecentRunWire): CronJobWireStatus {
  const { calendar, window } = entry.exclusion!;
  const slot = Date.parse(entry.scheduledTime!);
  const newest = (status.recentRuns ?? [])
    .filter((e) => e.reason === RecordReason.ExcludedByCalendar && e.scheduledTime)
    .sort((a, b) => Date.parse(b.scheduledTime!) - Date.parse(a.scheduledTime!))[0];
  let count = 1;
  let from = entry.scheduledTime!;
  let record = status.recentRuns ?? [];
  // The same window's run goes on (an entry of an earlier version, without the fields, starts a new one).
  const run = newest?.exclusion;
  if (run && run.window === window && run.calendar === calendar && Date.parse(newest!.scheduledTime!) < slot) {
    count = (run.slots ?? 1) + 1;
    from = run.firstSlot ?? newest!.scheduledTime!;
    record = record.filter((e) => e !== newest);
  }
  const message = bounded(count > 1 ? `${entry.message ?? ""} (${count} slots from ${from})` : entry.message);
  const counted: RecentRunWire = {
    ...entry,
    ...(message !== undefined ? { message } : {}),
    exclusion: { ...(calendar ? { calendar } : {}), window, firstSlot: from, slots: count },
  };
  return withRecord(status, [...record.filter((e) => entryKey(e) !== entryKey(counted)), counted]);
}

/** How a Job ended, as the record keeps it; undefined while it runs. */
function outcomeOf(job: Readonly<Job>): RecentRunWire["outcome"] {
  const kind = classifyJob(job);
  if (kind === "active") return undefined;
  const done = finishedAt(job);
  const at = done ? { finishedAt: rfc3339(done) } : {};
  if (kind === "successful") return { result: OutcomeResult.Complete, ...at };
  const failed = job.status?.conditions?.find((c) => c.type === "Failed" && c.status === "True");
  const ended = endedOutcome(job, at);
  if (ended) return ended;
  const message = bounded(failed?.message);
  return {
    result: OutcomeResult.Failed,
    ...(failed?.reason ? { reason: failed.reason.slice(0, 64) } : {}),
    ...(message ? { message } : {}),
    ...at,
  };
}

/** A run the operator ended (controllers/starts.ts) says why in its own words, not the deadline it used. */
function endedOutcome(job: Readonly<Job>, at: { finishedAt?: string }): RecentRunWire["outcome"] {
  const ended = job.metadata?.annotations?.[ENDED_REASON_ANNOTATION];
  if (!ended) return undefined;
  const why = bounded(job.metadata?.annotations?.[ENDED_MESSAGE_ANNOTATION]);
  const pods = job.metadata?.annotations?.[ENDED_PODS_ANNOTATION];
  return {
    result: OutcomeResult.Failed,
    reason: ended.slice(0, 64),
    ...(why ? { message: why } : {}),
    ...at,
    ...(pods && pods in PODS_SHOWED ? { pods } : {}),
  };
}

/**
 * A run the operator ended and deleted in one pass (Replace deleting a Job the start limit ended): its entry gets the
 * end's outcome at `at`, as it would have once the Job failed, since no later pass sees the Job.
 */
export function recordEnded(status: Readonly<CronJobWireStatus>, job: Readonly<Job>, at: Date): CronJobWireStatus {
  const outcome = endedOutcome(job, { finishedAt: rfc3339(at) });
  const record = status.recentRuns ?? [];
  const i = record.findIndex((e) => e.job === job.metadata?.name);
  if (!outcome || i < 0 || record[i]!.outcome) return { ...status };
  return withRecord(
    status,
    record.map((e, k) => (k === i ? { ...e, outcome } : e)),
  );
}

/** A Job of ours as the record names it: its trigger, reason, slot and request (its row's `recorded`). */
interface RecordedJob {
  job: Readonly<Job>;
  subject: RunSubject;
}

/**
 * Step 4's part: the record brought up to date with the children. A Job of ours the record lacks (created by a
 * pass whose status write never happened, or before the record existed) is entered as Created at its creation;
 * an entry whose Job ended gets its outcome. Entries whose Job is gone keep what they say.
 */
export function recordFromChildren(
  status: Readonly<CronJobWireStatus>,
  jobs: readonly RecordedJob[],
): CronJobWireStatus {
  const record = [...(status.recentRuns ?? [])];
  let changed = false;
  for (const { job, subject } of jobs) {
    const name = job.metadata?.name;
    if (!name) continue;
    const outcome = outcomeOf(job);
    // Looked up in the record as it is now: an entry taken over below moves the ones after it.
    const i = record.findIndex((e) => e.job === name);
    if (i >= 0) {
      const e = record[i]!;
      if (outcome && !e.outcome) {
        record[i] = { ...e, outcome };
        changed = true;
      }
      continue;
    }
    const created = job.metadata?.creationTimestamp;
    if (!created) continue;
    // What the run path knew when it created the Job, written on the Job then (api/v1/recentruns.ts).
    const facts = runFactsOf(job);
    const entry = entryOf(
      {
        ...subject,
        decision: RecordDecision.Created,
        job: name,
        ...replacedFacts(facts.replaced, subject.message),
      },
      rfc3339(new Date(created)),
    );
    // The same slot or request decided otherwise before (held, refused): its Job now runs it.
    const same = record.findIndex((e) => entryKey(e) === entryKey(entry));
    if (same >= 0) record.splice(same, 1);
    record.push(outcome ? { ...entry, outcome } : entry);
    changed = true;
  }
  return changed ? withRecord(status, record) : { ...status };
}

/**
 * An entry's `replaced` and its message: the trigger's own (a retry's attempt), and for a run that deleted Jobs to
 * start (concurrencyPolicy Replace) which ones.
 */
function replacedFacts(
  replaced: readonly string[] | undefined,
  own: string | undefined,
): Pick<Decision, "replaced" | "message"> {
  const message = own === undefined ? {} : { message: own };
  if (!replaced?.length) return message;
  const also = `replaced ${replaced.join(", ")} (concurrencyPolicy Replace)`;
  return { replaced, message: own === undefined ? also : `${own}; ${also}` };
}

/** What the run path did with a request, as the record needs it. */
interface RunReport {
  result: "created" | "adopted" | "held" | "failed" | "conflict";
  job?: Readonly<Job> | undefined;
  replaced?: readonly string[] | undefined;
  blockedBy?: string | undefined;
  /** The concurrency policy that held it (Forbid, or Replace for a trigger that waits instead of replacing). */
  policy?: string | undefined;
  refused?: { reason: string; message: string } | undefined;
  /** Held by the CronJob's concurrency group (runs.ts groupHold). */
  group?: GroupHold | undefined;
}

/**
 * The run path's decision about a request (its subject: trigger, slot, request), and when it was made: a created
 * or adopted Job at its creation (the same entry step 4 makes from the Job), anything else now. Undefined: nothing
 * to record (a wait that is no decision of the request's own: a backfill's parallelism, Replace waiting for the
 * books, a failed delete).
 */
export function runDecision(subject: RunSubject, run: RunReport, now: Date): TimedDecision | undefined {
  const { reason: ranFor, message: own, ...base } = subject;
  switch (run.result) {
    case "created":
    case "adopted": {
      const name = run.job?.metadata?.name;
      const created = run.job?.metadata?.creationTimestamp;
      return {
        decision: {
          ...base,
          decision: run.result === "created" ? RecordDecision.Created : RecordDecision.Adopted,
          reason: ranFor,
          job: name,
          ...replacedFacts(run.replaced, own),
        },
        at: created ? new Date(created) : now,
      };
    }
    case "held":
      if (run.group) {
        const { reason, message, blockedBy } = run.group;
        return { decision: { ...base, decision: RecordDecision.Held, reason, message, blockedBy }, at: now };
      }
      if (!run.blockedBy) return undefined;
      return {
        decision: {
          ...base,
          decision: RecordDecision.Held,
          reason: RecordReason.ConcurrencyPolicyForbid,
          blockedBy: run.blockedBy,
          message:
            run.policy === "Replace"
              ? `not started: Job ${run.blockedBy} still running, and with concurrencyPolicy Replace this trigger waits instead of replacing it`
              : `not started: concurrencyPolicy Forbid and Job ${run.blockedBy} still running`,
        },
        at: now,
      };
    case "failed":
    case "conflict":
      if (!run.refused) return undefined;
      return {
        decision: {
          ...base,
          decision: RecordDecision.Refused,
          reason: run.refused.reason.slice(0, 64),
          message: run.refused.message,
        },
        at: now,
      };
  }
}
