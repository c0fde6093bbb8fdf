// The plugin's writes to a CronJob: a run-now request (its annotation) and suspend/resume (spec.suspend, and a resume
// request for one stopped after failures), each a merge patch under the plugin's field manager. The commands (`run`,
// `suspend`, `resume`) and the dashboard's actions make them through here.
import {
  type CronJob,
  CronJobResource,
  manualJobName,
  newRunNowRequest,
  RESOURCE,
  RESUME_ANNOTATION,
  RUN_NOW_ANNOTATION,
} from "../../../api/v1/index.ts";
import { getCronJob } from "../read/api.ts";
import type { Context, Output } from "../model/context.ts";

export const FIELD_MANAGER = "kubectl-cron";

/**
 * Asks the operator for one run now (a new run-now request): the request, the Job it will run as, and what may hold
 * it (concurrencyPolicy Forbid with Jobs running, its concurrency group).
 */
export async function requestRun(
  ctx: Pick<Context, "client" | "namespace" | "now">,
  name: string,
): Promise<{ request: string; jobName: string; text: string; notes: string[] }> {
  const cronJob = await getCronJob(ctx, name);
  const request = newRunNowRequest(ctx.now());
  await ctx.client.patch(
    CronJobResource,
    ctx.namespace,
    name,
    { metadata: { annotations: { [RUN_NOW_ANNOTATION]: request } } },
    "merge",
    { fieldManager: FIELD_MANAGER },
  );
  const notes = [`requested: ${RUN_NOW_ANNOTATION}=${request}`];
  const active = cronJob.status?.active?.length ?? 0;
  if (cronJob.spec.concurrencyPolicy === "Forbid" && active > 0) {
    notes.push(`concurrencyPolicy is Forbid and ${active} Job(s) are running: the run starts when they finish`);
  }
  if (cronJob.spec.concurrencyGroup) {
    notes.push(`in concurrency group ${cronJob.spec.concurrencyGroup}: the run starts when the group has a place`);
  }
  const jobName = manualJobName(name, request);
  return { request, jobName, text: `job.batch/${jobName} requested\n`, notes };
}

/**
 * suspend sets spec.suspend; resume clears it and, for a CronJob stopped after failed runs (status.stopped),
 * asks the operator to resume it with a new resume request (the operator resets the count; server-side, so it
 * holds across restarts).
 */
export async function setSuspend(
  ctx: Pick<Context, "client" | "namespace" | "now">,
  args: { name: string },
  suspend: boolean,
): Promise<Output> {
  const before = await getCronJob(ctx, args.name);
  const verb = suspend ? "suspended" : "resumed";
  const stopped = !suspend ? before.status?.stopped : undefined;
  if ((before.spec.suspend ?? false) === suspend && !stopped) {
    return { text: `${RESOURCE}/${args.name} already ${verb}\n`, json: before };
  }
  const patch: Record<string, unknown> = {};
  if ((before.spec.suspend ?? false) !== suspend) patch.spec = { suspend };
  if (stopped) patch.metadata = { annotations: { [RESUME_ANNOTATION]: ctx.now().toISOString() } };
  const after = await ctx.client.patch<CronJob>(CronJobResource, ctx.namespace, args.name, patch, "merge", {
    fieldManager: FIELD_MANAGER,
  });
  const notes = stopped
    ? [
        `it was stopped after ${stopped.failures} failed runs in a row (since ${stopped.time}); the operator resumes it and counts from 0`,
      ]
    : [];
  return { text: `${RESOURCE}/${args.name} ${verb}\n`, json: after, notes };
}
