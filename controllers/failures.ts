// Step 5, stop after repeated failures (spec.stopAfterConsecutiveFailures) and resume. Pure.
import { classifyJob, type CronJobWireStatus, EventReason, finishedAt, type Job } from "../api/v1/index.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import type { EventDecision } from "./events.ts";

/** Step 5's decision: the status fields of the failure stop, and an Event when it stops or resumes. */
interface FailureStopDecision {
  status: CronJobWireStatus;
  event?: EventDecision;
}

/**
 * Step 5, stop after repeated failures: counts the runs whose end this pass reports (`newlyEnded`, in the order
 * they ended: a failure adds one, a success sets 0), stops at spec.stopAfterConsecutiveFailures, and resumes on
 * a new resume request or a spec change since the stop. Every input is stored state, so a pass repeated after a
 * crash decides the same. Without the spec field nothing is counted and the fields go.
 */
export function failureStop(o: {
  stopAfter: number | undefined;
  generation: number | undefined;
  status: Readonly<CronJobWireStatus>;
  newlyEnded: readonly Readonly<Job>[];
  resumeRequest: string | undefined;
  now: Date;
}): FailureStopDecision {
  const { consecutiveFailures: _count, stopped: _stopped, ...rest } = o.status;
  const generation = o.generation ?? 0;
  const status: CronJobWireStatus = { ...rest };
  let event: EventDecision | undefined;
  let stopped = o.status.stopped;
  let count = o.status.consecutiveFailures ?? 0;
  // A request is consumed whether or not the CronJob is stopped, so an old annotation cannot resume a later stop.
  const newRequest = o.resumeRequest !== undefined && o.resumeRequest !== o.status.lastResumeRequest;
  if (newRequest) status.lastResumeRequest = o.resumeRequest;
  if (o.stopAfter === undefined) return { status };
  if (stopped && (newRequest || stopped.generation !== generation)) {
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
  for (const job of byEnd) count = classifyJob(job) === "failed" ? count + 1 : 0;
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
