// The run-now row of the triggers' table (controllers/triggers.ts): a request in the run-now annotation runs once;
// status.lastRunNowRequest books it. Pure.
import {
  type CronJobWireStatus,
  EventReason,
  jobForRunNow,
  type JobSource,
  manualJobName,
  MAX_RUN_NOW_REQUEST_LENGTH,
  requestIdOf,
  RUN_NOW_ROW,
  runNowRequesterOf,
  runNowRequestOf,
  runNowSubject,
} from "../api/v1/index.ts";
import { digest } from "../runtime/objects.ts";
import { type StateEvent, type Handled, type RanView, type Trigger, type RunParts, bindRun } from "./trigger.ts";

interface RunNowRequest {
  request: string;
  requestedBy: string | undefined;
}

export const runNow: Trigger<"runNow"> = {
  ...RUN_NOW_ROW,
  onReplace: "replace",
  onConflict: "stop",
  // Step 9, the run-now row: a new request runs once. The Job's name comes from the request, so a repeat after a crash
  // finds it; status.lastRunNowRequest books it (history cleanup keeps the Job until then).
  plan: (input) => {
    const request = runNowRequestOf(input.cronJob);
    if (!request || input.status.lastRunNowRequest === request) return undefined;
    if (request.length > MAX_RUN_NOW_REQUEST_LENGTH) {
      return {
        requests: [],
        events: [
          {
            reason: EventReason.RunNowRefused,
            message: `run-now request refused: the annotation's value is ${request.length} characters, at most ${MAX_RUN_NOW_REQUEST_LENGTH} are allowed`,
            once: { topic: EventReason.RunNowRefused, key: digest(request) },
          },
        ],
      };
    }
    const requestedBy = runNowRequesterOf(input.cronJob, request);
    return { requests: [bindRun(runNow, { request, requestedBy }, runNowParts)] };
  },
  ours: (cronJob, job) =>
    job.metadata?.name === manualJobName(cronJob.metadata.name ?? "", requestIdOf(runNow, job) ?? ""),
  unbooked: (cronJob, job) => {
    const request = requestIdOf(runNow, job);
    return (
      runNow.ours(cronJob, job) && request === runNowRequestOf(cronJob) && request !== cronJob.status?.lastRunNowRequest
    );
  },
  // A run-now request whose Job exists was run (maybe before a crash, before its status write).
  observe: (status, cronJob, jobs) => {
    const request = runNowRequestOf(cronJob);
    const name = request ? manualJobName(cronJob.metadata.name ?? "", request) : undefined;
    return request && jobs.some((j) => j.metadata?.name === name) ? { ...status, lastRunNowRequest: request } : status;
  },
};

const runNowParts: RunParts<RunNowRequest> = {
  job: (cronJob: JobSource, r: RunNowRequest) => jobForRunNow(cronJob, r.request, r.requestedBy),
  ran: (view: RanView, r: RunNowRequest) =>
    view.status.lastRunNowRequest === r.request ? { ran: true } : { ran: false },
  held: (r: RunNowRequest, running: string[]): StateEvent => ({
    reason: EventReason.RunNowDeferred,
    message: `run-now request "${r.request}" waits: concurrencyPolicy is Forbid and ${running.join(", ")} still running`,
    once: { topic: EventReason.RunNowDeferred, key: r.request },
  }),
  book: (status: Readonly<CronJobWireStatus>, r: RunNowRequest, rec: Handled): CronJobWireStatus =>
    rec.result === "created" || rec.result === "adopted" ? { ...status, lastRunNowRequest: r.request } : { ...status },
  created: (r: RunNowRequest, name: string) => ({
    event: {
      reason: EventReason.RunNow,
      message: `Created job ${name} for run-now request "${r.request}", requested by ${r.requestedBy ?? "an unknown user (no admission webhook recorded who)"}`,
    },
    count: "manual",
    log: `created Job for run-now request "${r.request}"`,
  }),
  subject: (r: RunNowRequest) => runNowSubject(r.request),
};
