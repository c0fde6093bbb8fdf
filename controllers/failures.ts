// Step 5, stop after repeated failures (spec.stopAfterConsecutiveFailures) and resume. Pure.
import {
  classifyJob,
  type CronJobWireStatus,
  EventReason,
  finishedAt,
  RecordDecision,
  RecordReason,
  RecordTrigger,
  type Job,
  resumeRequestOf,
  runAgain,
  type TriggerRow,
} from "../api/v1/index.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import type { EventDecision } from "./events.ts";
import type { TimedDecision } from "./record.ts";

/** Step 5's decision: the status fields of the failure stop, and an Event when it stops or resumes. */
interface FailureStopDecision {
  status: CronJobWireStatus;
  event?: EventDecision;
}

/**
 * Step 5, stop after repeated failures: counts the runs whose end this pass reports (`newlyEnded`, in the order
 * they ended: a failure adds one, a success sets 0; a failure a trigger's row runs again is not counted, the last
 * run's end is: its row's runsAgain, spec.retry's attempts), stops at spec.stopAfterConsecutiveFailures, and resumes on a new resume request or a spec
 * change since the stop. Every input is stored state, so a pass repeated after a crash decides the same. Without
 * the spec field nothing is counted and the fields go.
 */
export function failureStop(o: {
  stopAfter: number | undefined;
  generation: number | undefined;
  status: Readonly<CronJobWireStatus>;
  newlyEnded: readonly Readonly<Job>[];
  resumeRequest: string | undefined;
  now: Date;
  /** Every Job of the CronJob and its spec (retry, concurrencyPolicy): which failures a row runs again. */
  jobs?: readonly Readonly<Job>[];
  spec?: object;
  /** The triggers' rows (api/v1 TRIGGER_ROWS by default): their runsAgain. */
  rows?: readonly Pick<TriggerRow, "runsAgain">[];
}): FailureStopDecision {
  const { consecutiveFailures: _count, stopped: _stopped, resumed: _resumed, ...rest } = o.status;
  const generation = o.generation ?? 0;
  const status: CronJobWireStatus = { ...rest };
  let event: EventDecision | undefined;
  let stopped = o.status.stopped;
  let count = o.status.consecutiveFailures ?? 0;
  // A request is consumed whether or not the CronJob is stopped, so an old annotation cannot resume a later stop.
  const newRequest = o.resumeRequest !== undefined && o.resumeRequest !== o.status.lastResumeRequest;
  if (newRequest) status.lastResumeRequest = o.resumeRequest;
  if (o.stopAfter === undefined) return { status };
  const resuming = !!stopped && (newRequest || stopped.generation !== generation);
  if (stopped && resuming) {
    event = {
      reason: EventReason.Resumed,
      message: newRequest
        ? `Scheduling resumed by the resume request "${o.resumeRequest}" after ${stopped.failures} failed runs in a row`
        : `Scheduling resumed: the spec changed (generation ${generation}) after ${stopped.failures} failed runs in a row`,
    };
    stopped = undefined;
    count = 0;
  }
  const byEnd = [...o.newlyEnded].sort(
    (a, b) =>
      (finishedAt(a)?.getTime() ?? 0) - (finishedAt(b)?.getTime() ?? 0) ||
      (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""),
  );
  const again = { jobs: o.jobs ?? o.newlyEnded, spec: o.spec, lastScheduleTime: o.status.lastScheduleTime };
  // A resume starts the count at 0 with the runs started after it. The runs that ended by the resuming pass, and
  // those still running then (kept by name in status.resumed.running until they end), belong to the stopped streak:
  // counted, a run already failing when the user resumed (Allow, or a Pod slow to fail on a loaded node) would stop
  // the CronJob again before one run of the fixed spec (seen on a loaded 1.33 node). Names, not times: the Jobs'
  // times are the API server's clock, the resume the controller's.
  const streak = new Set(resuming ? [] : (o.status.resumed?.running ?? []));
  for (const job of byEnd) {
    if (resuming || streak.has(job.metadata?.name ?? "")) continue;
    if (classifyJob(job) !== "failed") count = 0;
    else if (!runAgain(job, again, o.rows)) count++;
  }
  const running = (o.status.active ?? []).map((ref) => ref.name ?? "").filter((name) => name !== "");
  const resumed = resuming ? { time: rfc3339(o.now), running } : o.status.resumed;
  if (resumed) {
    const still = resuming ? running : (resumed.running ?? []).filter((name) => running.includes(name));
    status.resumed = { time: resumed.time, ...(still.length ? { running: still } : {}) };
  }
  status.consecutiveFailures = count;
  if (!stopped && count >= o.stopAfter) {
    stopped = { time: rfc3339(o.now), failures: count, generation };
    event = {
      reason: EventReason.StoppedAfterFailures,
      message: `Stopped scheduling after ${count} failed runs in a row (spec.stopAfterConsecutiveFailures ${o.stopAfter}); running Jobs are not touched. Resume with kubectl cron resume, or change the spec.`,
    };
  }
  if (stopped) status.stopped = stopped;
  return { status, ...(event ? { event } : {}) };
}

/**
 * Step 5's decision for the record: the stop this pass decided, a Stopped entry at the time it stopped (undefined: the
 * pass did not stop the CronJob).
 */
function stoppedDecision(stop: FailureStopDecision): TimedDecision | undefined {
  if (stop.event?.reason !== EventReason.StoppedAfterFailures || !stop.status.stopped) return undefined;
  const decision = {
    trigger: RecordTrigger.Schedule,
    decision: RecordDecision.Stopped,
    reason: RecordReason.StoppedAfterFailures,
    message: stop.event.message,
  } as const;
  return { decision, at: new Date(stop.status.stopped.time) };
}

/**
 * Step 5 for a CronJob and what step 4 saw of its children: the failure stop, with the stop it decides as a decision
 * for the record (`stoppedAfter`: the failed runs in a row that stopped it, for the log line).
 */
export function failureStep(
  cronJob: {
    metadata: { generation?: number | undefined; annotations?: Record<string, string> | undefined };
    spec: { stopAfterConsecutiveFailures?: number | undefined };
  },
  seen: { status: Readonly<CronJobWireStatus>; newlyEnded: readonly Readonly<Job>[]; jobs: readonly Readonly<Job>[] },
  now: Date,
  rows?: readonly Pick<TriggerRow, "runsAgain">[],
): FailureStopDecision & { decisions?: TimedDecision[]; stoppedAfter?: number } {
  const stop = failureStop({
    stopAfter: cronJob.spec.stopAfterConsecutiveFailures,
    generation: cronJob.metadata.generation,
    status: seen.status,
    newlyEnded: seen.newlyEnded,
    resumeRequest: resumeRequestOf(cronJob),
    now,
    jobs: seen.jobs,
    spec: cronJob.spec,
    ...(rows ? { rows } : {}),
  });
  const stopped = stoppedDecision(stop);
  return stopped ? { ...stop, decisions: [stopped], stoppedAfter: stop.status.stopped!.failures } : stop;
}
