// One CronJob as the plugin reads and acts on it: its read (by name, with the error that says how to list them), the
// run-now request and suspend/resume (the plugin's writes), and what `next` and `history` print of it. The commands
// (commands.ts) and the dashboard's panel and actions call these: the page shows what the commands print.
import {
  calendarNamesOf,
  exclusionsOf,
  hasExclusions,
  CRONJOB_NAME_LABEL,
  CronJobResource,
  manualJobName,
  newRunNowRequest,
  RESOURCE,
  RESUME_ANNOTATION,
  RUN_NOW_ANNOTATION,
  type CronJob,
  cronJobSchedules,
  scheduleSourceText,
} from "../../api/v1/index.ts";
import type { HashKey } from "../../api/v1/schedule/index.ts";
import { fieldErrorString } from "../../runtime/field.ts";
import { isNotFound } from "../../runtime/errors.ts";
import { Kinds } from "../../runtime/kinds.ts";
import type { Job } from "../../api/v1/index.ts";
import type { Args } from "./args.ts";
import type { Context, Output } from "./context.ts";
import { listAll } from "./api.ts";
import { historyRows, humanDuration, iso } from "./history.ts";
import { excludingSchedules, getCalendars, NO_SLOT_LEFT } from "./exclusionfacts.ts";
import { type FireTime, nextRuns } from "./next.ts";
import { pendingLine, pendingRunsOf, waitsFor } from "./retries.ts";
import { table } from "./table.ts";

export const FIELD_MANAGER = "kubectl-cron";

/** How many slots `next` lists without --count. */
const NEXT_COUNT = 5;

/** The request was made, but its Job did not appear in time: exit code 3. */
export class WaitTimeout extends Error {}

export async function getCronJob(ctx: Context, name: string): Promise<CronJob> {
  try {
    return await ctx.client.get<CronJob>(CronJobResource, ctx.namespace, name);
  } catch (e) {
    if (isNotFound(e)) {
      throw new Error(
        `cronjob ${JSON.stringify(name)} not found in namespace ${JSON.stringify(ctx.namespace)} ` +
          `(list them: kubectl get ${RESOURCE} -n ${ctx.namespace}; another namespace: -n NS)`,
        { cause: e },
      );
    }
    throw e;
  }
}

export async function runNow(ctx: Context, args: Pick<Args, "name" | "wait" | "timeoutSeconds">): Promise<Output> {
  const cronJob = await getCronJob(ctx, args.name);
  const request = newRunNowRequest(ctx.now());
  await ctx.client.patch(
    CronJobResource,
    ctx.namespace,
    args.name,
    { metadata: { annotations: { [RUN_NOW_ANNOTATION]: request } } },
    "merge",
    { fieldManager: FIELD_MANAGER },
  );
  const jobName = manualJobName(args.name, request);
  const notes = [`requested: ${RUN_NOW_ANNOTATION}=${request}`];
  const active = cronJob.status?.active?.length ?? 0;
  if (cronJob.spec.concurrencyPolicy === "Forbid" && active > 0) {
    notes.push(`concurrencyPolicy is Forbid and ${active} Job(s) are running: the run starts when they finish`);
  }
  if (cronJob.spec.concurrencyGroup) {
    notes.push(`in concurrency group ${cronJob.spec.concurrencyGroup}: the run starts when the group has a place`);
  }
  if (!args.wait) return { text: `job.batch/${jobName} requested\n`, json: { request, jobName }, notes };
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
 * suspend sets spec.suspend; resume clears it and, for a CronJob stopped after failed runs (status.stopped),
 * asks the operator to resume it with a new resume request (the operator resets the count; server-side, so it
 * holds across restarts).
 */
export async function setSuspend(ctx: Context, args: Pick<Args, "name">, suspend: boolean): Promise<Output> {
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

/** A CronJob's schedules as the controller reads them (api/v1/schedules.ts), H hashed with its namespace/name. */
export function schedulesOf(ctx: Context, cronJob: CronJob, name: string): ReturnType<typeof cronJobSchedules> {
  const key: HashKey = { namespace: cronJob.metadata.namespace ?? ctx.namespace, name: cronJob.metadata.name ?? name };
  return cronJobSchedules(cronJob, key);
}

/**
 * `kubectl cron next NAME`: the next slots of its schedules as written, each in the zone of the (first) schedule it
 * came from, with the DST cases spelled out; with several schedules, the ones each slot came from. `@every` counts
 * from what the controller counts it from. With spec.exclusions, each slot an exclusion window holds says which
 * (its own windows, and the ExclusionCalendars it names, read here), and the next run is the first slot none holds;
 * a calendar missing holds them all, as the operator does. A retry waiting for its delay (the record's) is said too.
 */
export async function next(ctx: Context, args: Pick<Args, "name" | "count">): Promise<Output> {
  const count = args.count ?? NEXT_COUNT;
  const cronJob = await getCronJob(ctx, args.name);
  const parsed = schedulesOf(ctx, cronJob, args.name);
  if (!parsed.ok) {
    throw new Error(`${RESOURCE}/${args.name} has no next run: ${parsed.errors.map(fieldErrorString).join("; ")}`);
  }
  const { schedules } = parsed;
  const anchor = schedules.everyAnchor({
    lastScheduleTime: cronJob.status?.lastScheduleTime,
    creationTimestamp: cronJob.metadata.creationTimestamp,
  });
  const now = ctx.now();
  const namespace = cronJob.metadata.namespace ?? ctx.namespace;
  // Only a CronJob that has exclusions reads calendars, and gets the column.
  const view = hasExclusions(cronJob.spec)
    ? exclusionsOf(cronJob, await getCalendars(ctx.client, namespace, calendarNamesOf(cronJob.spec)))
    : undefined;
  const excluding = excludingSchedules(schedules, view?.exclusions);
  const times = nextRuns(schedules, anchor, now, count, excluding.excludedBy);
  const suspended = cronJob.spec.suspend === true;
  const notes = suspended ? [`suspended: these are the times it would run (kubectl cron resume ${args.name})`] : [];
  for (const u of view?.unreadable ?? [])
    notes.push(`could not read ${u}: the slots it excludes are not marked (the operator reads it)`);
  // H is resolved per CronJob: say what this one runs as.
  const lines = schedules.entries
    .filter((e) => e.resolvedSchedule !== e.schedule)
    .map(
      (e) =>
        `schedule ${JSON.stringify(e.schedule)} runs as ${JSON.stringify(e.resolvedSchedule)} (H is hashed from namespace/name)`,
    );
  // The next run: the first slot no window holds, when the first listed is excluded (else it is the first row).
  let nextRun: FireTime | undefined;
  if (view) {
    const at = excluding.schedules.schedule.next(now, anchor);
    if (at.getTime() < NO_SLOT_LEFT) nextRun = nextRuns(excluding.schedules, anchor, now, 1)[0];
    if (view.hold) lines.push(`held: ${view.hold.problem}`);
    else if (!nextRun) lines.push("next run: none: the exclusions hold every slot for 28 years");
    else if (times[0]?.excluded)
      lines.push(`next run: ${nextRun.time} (${nextRun.utc}); the slots before it are excluded`);
  }
  const zone = schedules.schedule.timeZone;
  for (const r of pendingRunsOf(cronJob)) lines.push(pendingLine(r, zone, now));
  // A SCHEDULE column only when slots name their schedules; EXCLUDED BY only with exclusions; the zone in the
  // heading when there is one zone.
  const named = times.some((t) => t.sources);
  const zones = new Set(schedules.entries.map((e) => e.timeZone ?? "UTC"));
  const heading = zones.size === 1 && !named ? `NEXT (${zone})` : "NEXT";
  const unsure = (view?.unreadable.length ?? 0) > 0;
  const excludedCell = (t: FireTime) =>
    t.excluded ? `${t.excluded.by}: ${t.excluded.window}` : view?.hold ? "held" : unsure ? "?" : "-";
  const rows = times.map((t) => [
    t.time,
    t.utc,
    ...(named ? [(t.sources ?? []).map(scheduleSourceText).join("; ")] : []),
    ...(view ? [excludedCell(t)] : []),
    t.note ?? "",
  ]);
  const [first] = schedules.entries;
  // `retries`, the name the first pending runs had: every trigger's, each with its row's word.
  const retries = pendingRunsOf(cronJob).map((r) => ({
    trigger: r.word,
    scheduledTime: iso(r.slot),
    ...(r.attempt ? { attempt: r.attempt.number, limit: r.attempt.of } : {}),
    ...(r.startsAt ? { startsAt: iso(r.startsAt) } : {}),
    ...(waitsFor(r.entry) ? { waits: waitsFor(r.entry) } : {}),
    ...(r.failedJob ? { failedJob: r.failedJob } : {}),
    ...(r.failure ? { failure: r.failure } : {}),
  }));
  return {
    text:
      lines.map((l) => `${l}\n`).join("") +
      table([heading, "UTC", ...(named ? ["SCHEDULE"] : []), ...(view ? ["EXCLUDED BY"] : []), "NOTE"], rows),
    json: {
      name: args.name,
      // spec.schedule's, as a v1 reader knows it; `schedules` has every one.
      schedule: first!.schedule,
      resolvedSchedule: first!.resolvedSchedule,
      timeZone: zone,
      schedules: schedules.entries,
      suspended,
      times,
      ...(view
        ? {
            nextRun: view.hold ? null : (nextRun ?? null),
            ...(view.hold ? { held: view.hold } : {}),
            ...(view.unreadable.length ? { unreadable: view.unreadable } : {}),
          }
        : {}),
      ...(retries.length ? { retries } : {}),
    },
    notes,
  };
}

export async function history(ctx: Context, args: Pick<Args, "name">): Promise<Output> {
  const cronJob = await getCronJob(ctx, args.name);
  // By label, not the whole namespace; the owner UID below still decides (a Job of a deleted CronJob of the
  // same name carries the same label).
  const jobs = await listAll<Job>(ctx.client, Kinds.Job, {
    namespace: ctx.namespace,
    labelSelector: `${CRONJOB_NAME_LABEL}=${args.name}`,
  });
  const rows = historyRows(jobs, cronJob.metadata.uid ?? "", ctx.now());
  // Only when a listed Job names its schedules (a CronJob with several): the table is unchanged for everyone else.
  const scheduleColumn = rows.some((r) => r.schedules !== undefined);
  const text = table(
    ["NAME", "TRIGGER", "SCHEDULED", ...(scheduleColumn ? ["SCHEDULE"] : []), "RESULT", "STARTED", "DURATION"],
    rows.map((r) => [
      r.name,
      // A retry says which attempt: "retry 1/3".
      r.attempt ? `${r.trigger} ${r.attempt}` : r.trigger,
      r.scheduledTime ?? "-",
      ...(scheduleColumn ? [r.schedules ?? "-"] : []),
      r.result,
      r.startTime ?? "-",
      r.durationSeconds !== undefined ? humanDuration(r.durationSeconds) : "-",
    ]),
  );
  const notes =
    rows.length === 0 ? [`no Jobs of ${args.name} in ${ctx.namespace} (history limits keep only the newest)`] : [];
  return { text, json: { name: args.name, items: rows }, notes };
}
