// The commands about one CronJob that read it and print an answer (`next`, `history`: answer/answers.ts) or write to it
// (`run`: write/writes.ts's request, then a wait for its Job). Each reads what its answer needs, once.
import { calendarNamesOf, CRONJOB_NAME_LABEL, hasExclusions, type Job, RESOURCE } from "../../../api/v1/index.ts";
import { isNotFound } from "../../../runtime/errors.ts";
import { Kinds } from "../../../runtime/kinds.ts";
import { historyAnswer, nextAnswer, NEXT_COUNT, nextNeedsJobs } from "../answer/answers.ts";
import { getCronJob, listAll } from "../read/api.ts";
import type { Args } from "../model/args.ts";
import type { Context, Output } from "../model/context.ts";
import { getCalendars } from "../read/calendars.ts";
import { waitsFor } from "../answer/retries.ts";
import { requestRun } from "../write/writes.ts";

/** The request was made, but its Job did not appear in time: exit code 3. */
export class WaitTimeout extends Error {}

/** `kubectl cron run NAME`: a run-now request, and (--wait) its Job, or what holds it. */
export async function runNow(ctx: Context, args: Pick<Args, "name" | "wait" | "timeoutSeconds">): Promise<Output> {
  const { request, jobName, text, notes } = await requestRun(ctx, args.name);
  if (!args.wait) return { text, json: { request, jobName }, notes };
  const job = await waitForJob(ctx, jobName, args.timeoutSeconds);
  if (!job) {
    // The operator may have decided to hold it (Forbid, its group full): the record says so, not a guess.
    const decided = (await getCronJob(ctx, args.name)).status?.recentRuns?.find((e) => e.request === request);
    const held = decided?.decision === "Held" ? waitsFor(decided) : undefined;
    throw new WaitTimeout(
      held
        ? `the request ${request} was recorded and is held: ${held}. The request stays; the operator runs it ` +
            `once the hold ends (kubectl cron why ${args.name} -n ${ctx.namespace}).`
        : `the request ${request} was recorded, but no Job ${jobName} appeared within ${args.timeoutSeconds}s. ` +
            `Is the operator running? See: kubectl describe ${RESOURCE} ${args.name} -n ${ctx.namespace} ` +
            `(Events, conditions). The request stays; the operator runs it once when it gets to it.`,
    );
  }
  return { text: `job.batch/${jobName} created\n`, json: job, notes };
}

async function waitForJob(ctx: Context, name: string, timeoutSeconds: number): Promise<Job | undefined> {
  const deadline = ctx.now().getTime() + timeoutSeconds * 1000;
  for (;;) {
    try {
      return await ctx.client.get<Job>(Kinds.Job, ctx.namespace, name);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    if (ctx.now().getTime() >= deadline) return undefined;
    await ctx.sleep(500);
  }
}

/**
 * `kubectl cron next NAME`: the CronJob and, when it has exclusions, the calendars it names; answered by nextAnswer.
 */
export async function next(ctx: Context, args: Pick<Args, "name" | "count">): Promise<Output> {
  const cronJob = await getCronJob(ctx, args.name);
  const namespace = cronJob.metadata.namespace ?? ctx.namespace;
  const calendars = hasExclusions(cronJob.spec)
    ? await getCalendars(ctx.client, namespace, calendarNamesOf(cronJob.spec))
    : undefined;
  // `@every` counts from the last run, as the controller sees it: its Jobs too, not only the status.
  const jobs = nextNeedsJobs(cronJob, namespace)
    ? await listAll<Job>(ctx.client, Kinds.Job, {
        namespace,
        labelSelector: `${CRONJOB_NAME_LABEL}=${args.name}`,
      })
    : undefined;
  return nextAnswer({ cronJob, namespace, calendars, jobs, now: ctx.now() }, args.count ?? NEXT_COUNT);
}

/** `kubectl cron history NAME`: the CronJob and its Jobs (by its label); answered by historyAnswer. */
export async function history(ctx: Context, args: Pick<Args, "name">): Promise<Output> {
  const cronJob = await getCronJob(ctx, args.name);
  // By label, not the whole namespace; the owner UID still decides (a Job of a deleted CronJob of the same name
  // carries the same label).
  const jobs = await listAll<Job>(ctx.client, Kinds.Job, {
    namespace: ctx.namespace,
    labelSelector: `${CRONJOB_NAME_LABEL}=${args.name}`,
  });
  return historyAnswer({ cronJob, namespace: ctx.namespace, jobs, now: ctx.now() });
}
