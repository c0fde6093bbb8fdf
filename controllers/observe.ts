// Step 4, what the children say: the status they imply (active Jobs, the newest-of times, requests whose Job
// exists), the runs whose end the stored status has not recorded, and the Events that go with them. Pure: the
// live reads of active Jobs the cache lacks are the reconciler's, done before; what was reported before is
// passed in and the new record handed back.
import {
  BACKFILL_REQUEST_ANNOTATION,
  backfillRequestOf,
  classifyJob,
  type CronJobWire,
  type CronJobWireStatus,
  type Job,
  jobNameFor,
  manualJobName,
  type ObjectReference,
  RUN_NOW_REQUEST_ANNOTATION,
  runNowRequestOf,
  scheduledTimeOf,
} from "../api/v1/index.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import { stripUndefined } from "../runtime/objects.ts";
import type { EventDecision } from "./events.ts";
import type { RunOutcome } from "./metrics.ts";
import { newestTimes } from "./status.ts";

/** What made a Job: its slot in the schedule, a run-now request, or a backfill request. */
export type Trigger = "schedule" | "runNow" | "backfill";

type CronJobView = Pick<CronJobWire, "metadata" | "status">;

function triggerOf(job: Readonly<Job>): Trigger {
  const a = job.metadata?.annotations ?? {};
  if (a[RUN_NOW_REQUEST_ANNOTATION] !== undefined) return "runNow";
  if (a[BACKFILL_REQUEST_ANNOTATION] !== undefined) return "backfill";
  return "schedule";
}

/** A Job with our deterministic name and scheduled-at annotation was created by us (maybe before a crash). */
function isOurCreation(cronJob: CronJobView, job: Readonly<Job>): boolean {
  const name = cronJob.metadata.name ?? "";
  const request = job.metadata?.annotations?.[RUN_NOW_REQUEST_ANNOTATION];
  if (request !== undefined) return job.metadata?.name === manualJobName(name, request);
  const slot = scheduledTimeOf(job);
  return !!slot && job.metadata?.name === jobNameFor(name, slot);
}

/**
 * A Job of ours whose run the stored status has not recorded, by the books of the trigger that made it: a slot
 * newer than lastScheduleTime, the current run-now request before lastRunNowRequest holds it, the current backfill
 * request's slot past its recorded progress. It is that run's only record, so history cleanup keeps it, and its
 * end is reported. Each trigger's books are written in the same status write as status.active.
 */
export function isUnrecordedRun(cronJob: CronJobView, job: Readonly<Job>): boolean {
  if (!isOurCreation(cronJob, job)) return false;
  const slot = scheduledTimeOf(job);
  switch (triggerOf(job)) {
    case "runNow": {
      const request = job.metadata?.annotations?.[RUN_NOW_REQUEST_ANNOTATION];
      return request === runNowRequestOf(cronJob) && request !== cronJob.status?.lastRunNowRequest;
    }
    case "backfill": {
      const id = job.metadata?.annotations?.[BACKFILL_REQUEST_ANNOTATION];
      const current = backfillRequestOf(cronJob);
      if (!current?.ok || current.request.id !== id) return false;
      const bf = cronJob.status?.backfill;
      if (!bf || bf.id !== id) return true;
      return bf.phase === "Running" && !!slot && (!bf.lastSlot || slot.getTime() > Date.parse(bf.lastSlot));
    }
    case "schedule": {
      const last = cronJob.status?.lastScheduleTime;
      return !!slot && (!last || slot.getTime() > Date.parse(last));
    }
  }
}

/**
 * Whether the Job may be deleted (history cleanup, Replace): only once no book needs it. A run the stored status
 * has not recorded needs it (isUnrecordedRun); so does a backfill Job of a slot the schedule has not passed yet
 * (newer than lastScheduleTime, or than the creation when the schedule never ran): lastScheduleTime is the
 * schedule's alone, so for the schedule that Job is the only sign its slot ran, and without it the schedule would
 * start the slot again.
 */
export function mayDelete(cronJob: CronJobView, job: Readonly<Job>): boolean {
  if (isUnrecordedRun(cronJob, job)) return false;
  if (!isOurCreation(cronJob, job) || triggerOf(job) !== "backfill") return true;
  const slot = scheduledTimeOf(job);
  const base = cronJob.status?.lastScheduleTime ?? cronJob.metadata.creationTimestamp;
  return !slot || (base !== undefined && slot.getTime() <= Date.parse(base));
}

/**
 * Whether Replace may delete the running Job to start a run. As mayDelete, except that a scheduled run of slot
 * `slot` may replace a backfill Job of an older slot: with Replace the schedule only ever runs its newest slot, so it
 * never comes back to the older one, even if the process dies between the delete and the create.
 */
export function mayReplace(cronJob: CronJobView, job: Readonly<Job>, slot: Date | undefined): boolean {
  if (mayDelete(cronJob, job)) return true;
  const at = scheduledTimeOf(job);
  return !!slot && !!at && triggerOf(job) === "backfill" && !isUnrecordedRun(cronJob, job) && at < slot;
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
  /** The runs whose end the stored status has not recorded (what the failure stop counts). */
  finished: Readonly<Job>[];
  events: EventDecision[];
  counts: RunOutcome[];
  /** The Job UIDs reported finished, kept while status has not recorded them (memory's sawCompleted). */
  reported: Set<string>;
  /** Replace's deleted UIDs still listed by status (memory's replaced). */
  replaced: Set<string>;
}

/**
 * Step 4: status from the children and from what status already remembers. `cached`: the CronJob's Jobs in the
 * cache; `live`: the Jobs stored status.active lists that the cache lacks, as the API server answered (absent: gone).
 */
export function observeChildren(o: {
  cronJob: CronJobView;
  cached: readonly Readonly<Job>[];
  live: ReadonlyMap<string, Readonly<Job> | undefined>;
  reported: ReadonlySet<string>;
  replaced: ReadonlySet<string>;
}): Observation {
  const { cronJob } = o;
  const prev = cronJob.status ?? {};
  const prevActive = prev.active ?? [];
  const byUID = new Map(o.cached.map((j) => [j.metadata?.uid ?? "", j]));
  const events: EventDecision[] = [];
  const counts: RunOutcome[] = [];
  const reported = new Set(o.reported);
  const finished: Readonly<Job>[] = [];
  const reportCompleted = (job: Readonly<Job>) => {
    finished.push(job);
    const uid = job.metadata?.uid ?? "";
    if (reported.has(uid)) return;
    reported.add(uid);
    const kind = classifyJob(job);
    counts.push(kind === "successful" ? "succeeded" : "failed");
    const condition = kind === "successful" ? "Complete" : kind === "failed" ? "Failed" : "Running";
    events.push({
      reason: "SawCompletedJob",
      message: `Saw completed job: ${job.metadata?.name}, condition: ${condition}`,
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
      events.push({ reason: "MissingJob", message: `Active job went missing: ${ref.name}` });
    }
  }

  const prevUIDs = new Set(prevActive.map((r) => r.uid));
  // A finished Job is reported when status listed it as active, as in the built-in, and also when status never
  // recorded its run at all (creation first can leave the status write after a create to a later pass, and a Job
  // that finishes before it was never in status.active). Both are facts of the stored status, so a restart does
  // not report a Job again once status is written.
  const toReport = new Set<string>();
  const byClass = (k: ReturnType<typeof classifyJob>) => o.cached.filter((j) => classifyJob(j) === k);
  for (const job of byClass("active")) {
    const name = job.metadata?.name ?? "";
    if (!prevUIDs.has(job.metadata?.uid) && !isOurCreation(cronJob, job)) {
      events.push({
        reason: "UnexpectedJob",
        message: `Saw a job that the controller did not create or forgot: ${name}`,
      });
    }
    active.set(name, jobRef(job));
  }
  for (const job of [...byClass("successful"), ...byClass("failed")]) {
    if (prevUIDs.has(job.metadata?.uid) || isUnrecordedRun(cronJob, job)) {
      toReport.add(job.metadata?.uid ?? "");
      reportCompleted(job);
    }
  }
  for (const uid of reported) if (!prevUIDs.has(uid) && !toReport.has(uid)) reported.delete(uid);
  const replaced = new Set([...o.replaced].filter((uid) => prevUIDs.has(uid)));

  // Each trigger's books (docs/architecture.md): lastScheduleTime is the schedule's, so only the schedule's Jobs
  // move it; a backfill or run-now Job never becomes the base missed slots are counted from. Every run's end
  // moves lastSuccessfulTime / lastFailedTime. None of them moves backward (newestTimes).
  const parse = (t: string | undefined) => (t ? new Date(t) : undefined);
  const times = newestTimes(
    {
      lastScheduleTime: parse(prev.lastScheduleTime),
      lastSuccessfulTime: parse(prev.lastSuccessfulTime),
      lastFailedTime: parse(prev.lastFailedTime),
    },
    jobs,
    (job) => triggerOf(job) === "schedule",
  );
  const refs = [...active.values()].sort((a, b) => (a.name ?? "").localeCompare(b.name ?? ""));
  const status: CronJobWireStatus = { ...stripUndefined(prev), active: refs, activeCount: refs.length };
  if (times.lastScheduleTime) status.lastScheduleTime = rfc3339(times.lastScheduleTime);
  if (times.lastSuccessfulTime) status.lastSuccessfulTime = rfc3339(times.lastSuccessfulTime);
  if (times.lastFailedTime) status.lastFailedTime = rfc3339(times.lastFailedTime);
  // A run-now request whose Job exists was run (maybe before a crash, before its status write).
  const request = runNowRequestOf(cronJob);
  const manualName = request ? manualJobName(cronJob.metadata.name ?? "", request) : undefined;
  if (request && jobs.some((j) => j.metadata?.name === manualName)) status.lastRunNowRequest = request;
  if (cronJob.metadata.generation !== undefined) status.observedGeneration = cronJob.metadata.generation;
  return { status, jobs, finished, events, counts, reported, replaced };
}
