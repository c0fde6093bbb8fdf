// Step 4, what the children say: the status they imply (active Jobs, the newest-of times, requests whose Job
// exists), the runs whose end the stored status has not booked, and the Events that go with them. Pure: the
// live reads of active Jobs the cache lacks are the reconciler's, done before; what was reported before is
// passed in and what to remember handed back.
import {
  classifyJob,
  type CronJobWireStatus,
  EventReason,
  type Job,
  type ObjectReference,
  scheduledTimeOf,
} from "../api/v1/index.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import { stripUndefined } from "../runtime/objects.ts";
import type { EventDecision } from "./events.ts";
import type { RunOutcome } from "./metrics.ts";
import { recordFromChildren } from "./record.ts";
import { newestTimes } from "./status.ts";
import { type CronJobView, type Trigger, triggerOfJob } from "./trigger.ts";

/** A Job with the name its trigger gives its run was created by us (maybe before a crash). */
function isOurCreation(triggers: readonly Trigger[], cronJob: CronJobView, job: Readonly<Job>): boolean {
  return triggerOfJob(triggers, job).ours(cronJob, job);
}

/**
 * A Job of ours whose run the stored status has not booked, by the books of the trigger that made it (its row's
 * `unbooked`). It is that run's only trace, so history cleanup keeps it, and its end is reported. Each
 * trigger's books are written in the same status write as status.active.
 */
export function isUnbookedRun(triggers: readonly Trigger[], cronJob: CronJobView, job: Readonly<Job>): boolean {
  return triggerOfJob(triggers, job).unbooked(cronJob, job);
}

/**
 * Whether the Job may be deleted (history cleanup, Replace): only once no book needs it. A run the stored status
 * has not booked needs it (isUnbookedRun); so does a Job that takes a schedule slot's name without moving
 * lastScheduleTime (a backfill's) for a slot the schedule has not passed yet (newer than lastScheduleTime, or than
 * the creation when the schedule never ran): for the schedule that Job is the only sign its slot ran, and without
 * it the schedule would start the slot again.
 */
export function mayDelete(triggers: readonly Trigger[], cronJob: CronJobView, job: Readonly<Job>): boolean {
  const row = triggerOfJob(triggers, job);
  if (row.unbooked(cronJob, job)) return false;
  if (!row.takesScheduleSlots || !row.ours(cronJob, job)) return true;
  const slot = scheduledTimeOf(job);
  const base = cronJob.status?.lastScheduleTime ?? cronJob.metadata.creationTimestamp;
  return !slot || (base !== undefined && slot.getTime() <= Date.parse(base));
}

/**
 * Whether Replace may delete the running Job to start a run. As mayDelete, except that a run due at `slot` (the
 * schedule's) may replace a Job of an older slot that does not move lastScheduleTime (a backfill's): with Replace
 * the schedule only ever runs its newest slot, so it never comes back to the older one, even if the process dies
 * between the delete and the create.
 */
export function mayReplace(
  triggers: readonly Trigger[],
  cronJob: CronJobView,
  job: Readonly<Job>,
  slot: Date | undefined,
): boolean {
  if (mayDelete(triggers, cronJob, job)) return true;
  const row = triggerOfJob(triggers, job);
  const at = scheduledTimeOf(job);
  return !!slot && !!at && row.takesScheduleSlots && !row.unbooked(cronJob, job) && at < slot;
}

/** An active Job as status.active lists it. */
export function jobRef(job: Readonly<Job>): ObjectReference {
  const m = job.metadata ?? {};
  // No resourceVersion: it changes with every Job status update and would turn each into a CronJob
  // status write. Empty strings are left out: an optional field is absent, not "".
  return stripUndefined({
    apiVersion: "batch/v1",
    kind: "Job",
    name: m.name || undefined,
    namespace: m.namespace || undefined,
    uid: m.uid || undefined,
  });
}

interface Observation {
  /** The stored status brought up to date with the children (not yet the failure stop or the guards). */
  status: CronJobWireStatus;
  /** Every Job of this CronJob known this pass (the cache's, and the live reads of Jobs it lacks). */
  jobs: Readonly<Job>[];
  /** The runs whose end the stored status has not booked (what the failure stop counts). */
  newlyEnded: Readonly<Job>[];
  events: EventDecision[];
  counts: RunOutcome[];
  /** The Job UIDs reported finished, kept while status has not booked them (memory's sawCompleted). */
  reported: Set<string>;
  /** Replace's deleted UIDs still listed by status (memory's replaced). */
  replaced: Set<string>;
  /**
   * The slot (ms) of a run a folded status write left unbooked whose Job is gone (someone deleted it): it ran, and
   * `status.lastScheduleTime` says so; the status is written at once (Outcome.jobsGone).
   */
  vanished?: number;
}

/** What step 4 reads. */
interface ObserveInput {
  triggers: readonly Trigger[];
  cronJob: CronJobView & { spec?: { maxRuns?: number | undefined } };
  /** The CronJob's Jobs in the cache. */
  cached: readonly Readonly<Job>[];
  /** The Jobs stored status.active lists that the cache lacks, as the API server answered (absent: gone). */
  live: ReadonlyMap<string, Readonly<Job> | undefined>;
  /** The Job UIDs reported finished in earlier passes (memory's sawCompleted). */
  reported: ReadonlySet<string>;
  /** Replace's deleted UIDs (memory's replaced). */
  replaced: ReadonlySet<string>;
  /** The runs a folded status write left unbooked, by Job name: their slot (memory's folded). */
  folded?: ReadonlyMap<string, number> | undefined;
}

/** What step 4 says of the children as it walks them, in the order it finds it. */
interface ChildReports {
  events: EventDecision[];
  counts: RunOutcome[];
  /** The runs whose end the stored status has not booked. */
  newlyEnded: Readonly<Job>[];
  /** The Job UIDs reported finished (this pass or before). */
  reported: Set<string>;
}

/**
 * Step 4: status from the children (the cached Jobs, and the live reads of those it lacks) and from what status
 * already remembers.
 */
export function observeChildren(o: ObserveInput): Observation {
  const { cronJob, triggers } = o;
  const prev = cronJob.status ?? {};
  const said: ChildReports = { events: [], counts: [], newlyEnded: [], reported: new Set(o.reported) };
  const { active, jobs } = followStoredActive(o, said);
  const prevUIDs = new Set((prev.active ?? []).map((r) => r.uid));
  addActiveChildren(o, prevUIDs, active, said.events);
  const toReport = reportEndedChildren(o, prevUIDs, said);
  forgetBooked(said.reported, prevUIDs, toReport);
  const replaced = new Set([...o.replaced].filter((uid) => prevUIDs.has(uid)));

  let books = statusFromChildren(prev, active, jobs, triggers);
  // Each trigger's own books from the children (a run-now request whose Job exists was run).
  for (const t of triggers) books = t.observe?.(books, cronJob, jobs) ?? books;
  // The record (status.recentRuns): a run of ours it lacks, and the outcome of one that ended.
  books = recordFromChildren(books, ourRuns(triggers, cronJob, jobs));
  if (cronJob.metadata.generation !== undefined) books.observedGeneration = cronJob.metadata.generation;
  // A run a folded write left unbooked lost its Job: its slot ran, as its Job would have said. Only ever forward: a
  // newer slot's Job still here has already said more.
  const vanished = vanishedSlot(o.folded, jobs, books.lastScheduleTime);
  if (vanished !== undefined) books.lastScheduleTime = rfc3339(new Date(vanished));
  const { events, counts, newlyEnded, reported } = said;
  return {
    status: books,
    jobs,
    newlyEnded,
    events,
    counts,
    reported,
    replaced,
    ...(vanished !== undefined ? { vanished } : {}),
  };
}

/** A run's end: newly ended; counted and told (SawCompletedJob) once per Job UID, across passes. */
function reportEnded(said: ChildReports, job: Readonly<Job>): void {
  said.newlyEnded.push(job);
  const uid = job.metadata?.uid ?? "";
  if (said.reported.has(uid)) return;
  said.reported.add(uid);
  const kind = classifyJob(job);
  said.counts.push(kind === "successful" ? "succeeded" : "failed");
  const condition = kind === "successful" ? "Complete" : kind === "failed" ? "Failed" : "Running";
  said.events.push({
    reason: EventReason.SawCompletedJob,
    message: `Saw completed job: ${job.metadata?.name}, condition: ${condition}`,
    // A failed run is news, whatever the record keeps: its Event is written every time.
    routine: kind === "successful",
  });
}

/**
 * Active references whose Job is not in the cache: the API server's answer decides. A Job found there counts like a
 * child (it ran its run, and may have finished). Returns the references still active, by name, and every Job known.
 */
function followStoredActive(
  o: ObserveInput,
  said: ChildReports,
): { active: Map<string, ObjectReference>; jobs: Readonly<Job>[] } {
  const byUID = new Map(o.cached.map((j) => [j.metadata?.uid ?? "", j]));
  const active = new Map<string, ObjectReference>();
  const jobs: Readonly<Job>[] = [...o.cached];
  for (const ref of o.cronJob.status?.active ?? []) {
    if (ref.uid && byUID.has(ref.uid)) continue; // re-added from the child itself (addActiveChildren)
    const live = o.live.get(ref.name ?? "");
    if (live && live.metadata?.uid === ref.uid) {
      jobs.push(live);
      if (classifyJob(live) === "active") active.set(ref.name ?? "", ref);
      else reportEnded(said, live);
    } else if (!o.replaced.has(ref.uid ?? "")) {
      // Gone, or its name now belongs to another Job (a different UID): not the run we started.
      said.events.push({ reason: EventReason.MissingJob, message: `Active job went missing: ${ref.name}` });
    }
  }
  return { active, jobs };
}

function childrenOf(o: ObserveInput, kind: ReturnType<typeof classifyJob>): Readonly<Job>[] {
  return o.cached.filter((j) => classifyJob(j) === kind);
}

/** The cached active Jobs into `active`; one status did not list and we did not create is told (UnexpectedJob). */
function addActiveChildren(
  o: ObserveInput,
  prevUIDs: ReadonlySet<string | undefined>,
  active: Map<string, ObjectReference>,
  events: EventDecision[],
): void {
  for (const job of childrenOf(o, "active")) {
    const name = job.metadata?.name ?? "";
    if (!prevUIDs.has(job.metadata?.uid) && !isOurCreation(o.triggers, o.cronJob, job)) {
      events.push({
        reason: EventReason.UnexpectedJob,
        message: `Saw a job that the controller did not create or forgot: ${name}`,
      });
    }
    active.set(name, jobRef(job));
  }
}

/**
 * Reports the cached finished Jobs whose end is news; returns their UIDs. A finished Job is reported when status
 * listed it as active, as in the built-in, and also when status never booked its run at all (creation first can
 * leave the status write after a create to a later pass, and a Job that finishes before it was never in
 * status.active). Both are facts of the stored status, so a restart does not report a Job again once status is
 * written.
 */
function reportEndedChildren(
  o: ObserveInput,
  prevUIDs: ReadonlySet<string | undefined>,
  said: ChildReports,
): Set<string> {
  const toReport = new Set<string>();
  for (const job of [...childrenOf(o, "successful"), ...childrenOf(o, "failed")]) {
    if (prevUIDs.has(job.metadata?.uid) || isUnbookedRun(o.triggers, o.cronJob, job)) {
      toReport.add(job.metadata?.uid ?? "");
      reportEnded(said, job);
    }
  }
  return toReport;
}

/** A UID reported before is forgotten once status no longer lists it and this pass did not report it. */
function forgetBooked(
  reported: Set<string>,
  prevUIDs: ReadonlySet<string | undefined>,
  toReport: ReadonlySet<string>,
): void {
  for (const uid of reported) if (!prevUIDs.has(uid) && !toReport.has(uid)) reported.delete(uid);
}

/**
 * The stored status with the active Jobs (sorted by name) and the newest-of times. Each trigger's books
 * (docs/architecture.md): lastScheduleTime is the schedule's, so only the Jobs of a trigger that moves it (the
 * schedule) do; a backfill or run-now Job never becomes the base missed slots are counted from. Every run's end
 * moves lastSuccessfulTime / lastFailedTime. None of them moves backward (newestTimes).
 */
function statusFromChildren(
  prev: CronJobWireStatus,
  active: ReadonlyMap<string, ObjectReference>,
  jobs: readonly Readonly<Job>[],
  triggers: readonly Trigger[],
): CronJobWireStatus {
  const parse = (t: string | undefined) => (t ? new Date(t) : undefined);
  const times = newestTimes(
    {
      lastScheduleTime: parse(prev.lastScheduleTime),
      lastSuccessfulTime: parse(prev.lastSuccessfulTime),
      lastFailedTime: parse(prev.lastFailedTime),
    },
    jobs,
    (job) => triggerOfJob(triggers, job).movesLastScheduleTime,
  );
  const refs = [...active.values()].sort((a, b) => (a.name ?? "").localeCompare(b.name ?? ""));
  const status: CronJobWireStatus = { ...stripUndefined(prev), active: refs, activeCount: refs.length };
  if (times.lastScheduleTime) status.lastScheduleTime = rfc3339(times.lastScheduleTime);
  if (times.lastSuccessfulTime) status.lastSuccessfulTime = rfc3339(times.lastSuccessfulTime);
  if (times.lastFailedTime) status.lastFailedTime = rfc3339(times.lastFailedTime);
  return status;
}

/** Our runs among the Jobs, as recordFromChildren reads them. */
function ourRuns(triggers: readonly Trigger[], cronJob: CronJobView, jobs: readonly Readonly<Job>[]) {
  return (
    jobs
      .map((job) => ({ job, row: triggerOfJob(triggers, job) }))
      .filter(({ job, row }) => row.ours(cronJob, job))
      // How the record names a Job is asked only for one it lacks (the rest only get their outcome): a getter, as
      // every pass walks every Job of the CronJob.
      .map(({ job, row }) => ({
        job,
        get subject() {
          return row.recorded(job);
        },
      }))
  );
}

/**
 * The newest slot of a run a folded write left unbooked (statusfold.ts unbookedSlots, kept in memory) whose Job is
 * gone, newer than the lastScheduleTime the stored status and the Jobs give: the pass counts it as run
 * (lastScheduleTime) and writes at once.
 */
function vanishedSlot(
  folded: ReadonlyMap<string, number> | undefined,
  jobs: readonly Readonly<Job>[],
  lastScheduleTime: string | undefined,
): number | undefined {
  if (!folded?.size) return undefined;
  const names = new Set(jobs.map((j) => j.metadata?.name));
  const base = lastScheduleTime ? Date.parse(lastScheduleTime) : -Infinity;
  let newest: number | undefined;
  for (const [name, slot] of folded) {
    if (!names.has(name) && slot > base) newest = Math.max(newest ?? slot, slot);
  }
  return newest;
}
