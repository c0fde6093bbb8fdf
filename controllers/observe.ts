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
import { type CronJobView, type Trigger, triggerOfJob } from "./triggers.ts";

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
}

/**
 * Step 4: status from the children and from what status already remembers. `cached`: the CronJob's Jobs in the
 * cache; `live`: the Jobs stored status.active lists that the cache lacks, as the API server answered (absent: gone).
 */
export function observeChildren(o: {
  triggers: readonly Trigger[];
  cronJob: CronJobView & { spec?: { maxRuns?: number | undefined } };
  cached: readonly Readonly<Job>[];
  live: ReadonlyMap<string, Readonly<Job> | undefined>;
  reported: ReadonlySet<string>;
  replaced: ReadonlySet<string>;
}): Observation {
  const { cronJob, triggers } = o;
  const prev = cronJob.status ?? {};
  const prevActive = prev.active ?? [];
  const byUID = new Map(o.cached.map((j) => [j.metadata?.uid ?? "", j]));
  const events: EventDecision[] = [];
  const counts: RunOutcome[] = [];
  const reported = new Set(o.reported);
  const newlyEnded: Readonly<Job>[] = [];
  const reportCompleted = (job: Readonly<Job>) => {
    newlyEnded.push(job);
    const uid = job.metadata?.uid ?? "";
    if (reported.has(uid)) return;
    reported.add(uid);
    const kind = classifyJob(job);
    counts.push(kind === "successful" ? "succeeded" : "failed");
    const condition = kind === "successful" ? "Complete" : kind === "failed" ? "Failed" : "Running";
    events.push({
      reason: EventReason.SawCompletedJob,
      message: `Saw completed job: ${job.metadata?.name}, condition: ${condition}`,
      // A failed run is news, whatever the record keeps: its Event is written every time.
      routine: kind === "successful",
    });
  };

  // Active references whose Job is not in the cache: the API server's answer decides. A Job found there counts
  // like a child (it ran its run, and may have finished).
  const active = new Map<string, ObjectReference>();
  const jobs: Readonly<Job>[] = [...o.cached];
  for (const ref of prevActive) {
    if (ref.uid && byUID.has(ref.uid)) continue; // re-added below from the child itself
    const live = o.live.get(ref.name ?? "");
    if (live && live.metadata?.uid === ref.uid) {
      jobs.push(live);
      if (classifyJob(live) === "active") active.set(ref.name ?? "", ref);
      else reportCompleted(live);
    } else if (!o.replaced.has(ref.uid ?? "")) {
      // Gone, or its name now belongs to another Job (a different UID): not the run we started.
      events.push({ reason: EventReason.MissingJob, message: `Active job went missing: ${ref.name}` });
    }
  }

  const prevUIDs = new Set(prevActive.map((r) => r.uid));
  // A finished Job is reported when status listed it as active, as in the built-in, and also when status never
  // booked its run at all (creation first can leave the status write after a create to a later pass, and a Job
  // that finishes before it was never in status.active). Both are facts of the stored status, so a restart does
  // not report a Job again once status is written.
  const toReport = new Set<string>();
  const byClass = (k: ReturnType<typeof classifyJob>) => o.cached.filter((j) => classifyJob(j) === k);
  for (const job of byClass("active")) {
    const name = job.metadata?.name ?? "";
    if (!prevUIDs.has(job.metadata?.uid) && !isOurCreation(triggers, cronJob, job)) {
      events.push({
        reason: EventReason.UnexpectedJob,
        message: `Saw a job that the controller did not create or forgot: ${name}`,
      });
    }
    active.set(name, jobRef(job));
  }
  for (const job of [...byClass("successful"), ...byClass("failed")]) {
    if (prevUIDs.has(job.metadata?.uid) || isUnbookedRun(triggers, cronJob, job)) {
      toReport.add(job.metadata?.uid ?? "");
      reportCompleted(job);
    }
  }
  for (const uid of reported) if (!prevUIDs.has(uid) && !toReport.has(uid)) reported.delete(uid);
  const replaced = new Set([...o.replaced].filter((uid) => prevUIDs.has(uid)));

  // Each trigger's books (docs/architecture.md): lastScheduleTime is the schedule's, so only the Jobs of a trigger
  // that moves it (the schedule) do; a backfill or run-now Job never becomes the base missed slots are counted from. Every run's end
  // moves lastSuccessfulTime / lastFailedTime. None of them moves backward (newestTimes).
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
  // Each trigger's own books from the children (a run-now request whose Job exists was run).
  let books = status;
  for (const t of triggers) books = t.observe?.(books, cronJob, jobs) ?? books;
  // The record (status.recentRuns): a run of ours it lacks, and the outcome of one that ended.
  const ours = jobs
    .map((job) => ({ job, row: triggerOfJob(triggers, job) }))
    .filter(({ job, row }) => row.ours(cronJob, job))
    // How the record names a Job is asked only for one it lacks (the rest only get their outcome): a getter, as every
    // pass walks every Job of the CronJob.
    .map(({ job, row }) => ({
      job,
      get subject() {
        return row.recorded(job);
      },
    }));
  books = recordFromChildren(books, ours);
  if (cronJob.metadata.generation !== undefined) books.observedGeneration = cronJob.metadata.generation;
  return { status: books, jobs, newlyEnded, events, counts, reported, replaced };
}
