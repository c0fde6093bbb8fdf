// The plugin's commands against the cluster. Each returns what to print; main.ts prints it and picks the exit code.
// Those about one CronJob: `run`, `next` and `history` are onecronjob.ts's (a read, then answer/answers.ts), `suspend` and
// `resume` write/writes.ts's (the dashboard's actions make the same writes).
import {
  calendarNamesOf,
  exclusionsOf,
  hasExclusions,
  CRONJOB_NAME_LABEL,
  CronJobResource,
  newRunNowRequest,
  RESOURCE,
  type CronJob,
  BACKFILL_ANNOTATION,
  backfillAnnotationValue,
  jobNameFor,
  MAX_BACKFILL_SLOTS,
  scheduleEntriesOf,
  type ScheduleEntry,
  scheduleSourceText,
  upstreamsOf,
} from "../../../api/v1/index.ts";
import { countText, slotsInRange } from "../../../api/v1/schedule/index.ts";
import { fieldErrorString } from "../../../runtime/field.ts";
import { Kinds } from "../../../runtime/kinds.ts";
import type { CronJobSchedules, Job } from "../../../api/v1/index.ts";
import type { Args } from "../model/args.ts";
import type { Context, Output } from "../model/context.ts";
import { getCronJob, listAll } from "../read/api.ts";
import { HANDOVER_ANNOTATION, readMigratedFrom } from "../model/convert.ts";
import { excludingSchedules } from "../model/exclusions.ts";
import { getCalendars } from "../read/calendars.ts";
import { schedulesOf } from "../answer/answers.ts";
import { SHAPING } from "../answer/causes.ts";
import { FIELD_MANAGER } from "../write/writes.ts";
import { sharedProblems } from "./shared.ts";
import { table } from "../model/table.ts";

/**
 * `kubectl cron list`: ours in the namespace (or every namespace), with where a migrated one came from; and once each,
 * the problems they share (the operator's, their groups'), with how many they affect.
 */
export async function list(ctx: Context, args: Args): Promise<Output> {
  const listed = listAll<CronJob>(ctx.client, CronJobResource, {
    ...(args.allNamespaces ? {} : { namespace: ctx.namespace }),
    ...(args.selector ? { labelSelector: args.selector } : {}),
  });
  const sharing = sharedProblems(ctx, listed, args.allNamespaces ? undefined : ctx.namespace);
  // The list's own error first (a shared problem's reads never throw: what cannot be read is skipped).
  const items = await listed;
  const shared = await sharing;
  items.sort(
    (a, b) =>
      (a.metadata.namespace ?? "").localeCompare(b.metadata.namespace ?? "") ||
      (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""),
  );
  // Only when a listed CronJob can stop after failures, or names a group: the table is unchanged for everyone else.
  const stopColumn = items.some((c) => c.spec.stopAfterConsecutiveFailures !== undefined || c.status?.stopped);
  const groupColumn = items.some((c) => c.spec.concurrencyGroup);
  const headers = [
    ...(args.allNamespaces ? ["NAMESPACE"] : []),
    "NAME",
    "SCHEDULE",
    "TIMEZONE",
    "SUSPEND",
    ...(stopColumn ? ["STOPPED"] : []),
    ...(groupColumn ? ["GROUP"] : []),
    "ACTIVE",
    "LAST SCHEDULE",
    "NEXT SCHEDULE",
    "MIGRATED FROM",
  ];
  const rows = items.map((c) => [
    ...(args.allNamespaces ? [c.metadata.namespace ?? ""] : []),
    c.metadata.name ?? "",
    ...scheduleColumns(c),
    String(c.spec.suspend === true),
    ...(stopColumn ? [c.status?.stopped ? `after ${c.status.stopped.failures} failures` : "-"] : []),
    ...(groupColumn ? [c.spec.concurrencyGroup ?? "-"] : []),
    String(c.status?.activeCount ?? c.status?.active?.length ?? 0),
    c.status?.lastScheduleTime ?? "-",
    c.status?.nextScheduleTime ?? "-",
    migratedFromColumn(c),
  ]);
  const where = args.allNamespaces ? "any namespace" : `namespace ${ctx.namespace}`;
  const notes = items.length === 0 ? [`no ${RESOURCE} in ${where}`] : shared.map((p) => p.text);
  return {
    text: items.length ? table(headers, rows) : "",
    json: { items, ...(shared.length ? { shared } : {}) },
    notes,
  };
}

/**
 * SCHEDULE and TIMEZONE: the schedules as written, joined by "; ", and their zone; when they are in different zones
 * (API v2) each in SCHEDULE with its zone and TIMEZONE "-", since one column cannot say which zone goes with which.
 */
function scheduleColumns(c: CronJob): [string, string] {
  // spec.after only: no schedule of its own, its upstreams instead.
  const upstreams = upstreamsOf(c.spec).map((u) => u.cronJob);
  if (upstreams.length && c.spec.schedule === undefined) return [SHAPING.afterOnly(upstreams), "-"];
  const entries = scheduleEntriesOf(c);
  if (!entries.ok) return [c.spec.schedule ?? "", c.spec.timeZone ?? ""];
  const zoneOf = (e: ScheduleEntry) => (typeof e.timeZone === "string" ? e.timeZone : undefined);
  const zones = new Set(entries.entries.map(zoneOf));
  if (zones.size === 1)
    return [entries.entries.map((e) => String(e.schedule)).join("; "), zoneOf(entries.entries[0]!) ?? ""];
  const text = entries.entries.map((e) => {
    const tz = zoneOf(e);
    return scheduleSourceText({ index: 0, schedule: String(e.schedule), ...(tz ? { timeZone: tz } : {}) });
  });
  return [text.join("; "), "-"];
}

function migratedFromColumn(c: CronJob): string {
  const from = readMigratedFrom(c.metadata.annotations);
  if (!from) return "-";
  const state = c.metadata.annotations?.[HANDOVER_ANNOTATION];
  return `${from.apiVersion}${state ? ` (${state})` : ""}`;
}

/**
 * `kubectl cron backfill NAME --from T1 --to T2`: asks the operator (the backfill annotation, like run-now) to
 * run every slot of the schedule in that range, oldest first; --dry-run lists them, with the ones that already
 * have their Job; without a range it shows the progress; --cancel removes the request.
 */
export async function backfill(ctx: Context, args: Args): Promise<Output> {
  const cronJob = await getCronJob(ctx, args.name);
  if (args.cancel) return cancelBackfill(ctx, args, cronJob);
  if (!args.from || !args.to) return backfillProgress(args, cronJob);
  const plan = await backfillPlan(ctx, args, cronJob, args.from, args.to);
  return args.dryRun ? backfillDryRun(ctx, args, plan) : requestBackfill(ctx, args, cronJob, plan);
}

async function cancelBackfill(ctx: Context, args: Args, cronJob: CronJob): Promise<Output> {
  const ref = `${RESOURCE}/${args.name}`;
  if (cronJob.metadata.annotations?.[BACKFILL_ANNOTATION] === undefined)
    return { text: `${ref}: no backfill requested\n`, json: cronJob.status?.backfill ?? {} };
  const after = await ctx.client.patch<CronJob>(
    CronJobResource,
    ctx.namespace,
    args.name,
    { metadata: { annotations: { [BACKFILL_ANNOTATION]: null } } },
    "merge",
    { fieldManager: FIELD_MANAGER },
  );
  return { text: `${ref}: backfill cancel requested (Jobs already started keep running)\n`, json: after };
}

function backfillProgress(args: Args, cronJob: CronJob): Output {
  const bf = cronJob.status?.backfill;
  if (!bf) return { text: "", json: {}, notes: [`no backfill of ${args.name} yet`] };
  const rows = [
    [
      bf.id ?? "-",
      bf.from ?? "-",
      bf.to ?? "-",
      bf.phase,
      `${bf.created + bf.skipped}/${bf.total}`,
      String(bf.created),
      String(bf.skipped),
      bf.lastSlot ?? "-",
    ],
  ];
  return {
    text: table(["ID", "FROM", "TO", "PHASE", "DONE", "RUN", "SKIPPED", "LAST SLOT"], rows),
    json: bf,
    notes: bf.message ? [bf.message] : [],
  };
}

/** The slots a backfill of the range runs, and what spec.exclusions holds of them. */
interface BackfillPlan {
  from: Date;
  to: Date;
  schedules: CronJobSchedules;
  anchor: Date;
  slots: Date[];
  excluding: ReturnType<typeof excludingSchedules>;
  exclusionNotes: string[];
  excludedSlots: number;
}

async function backfillPlan(ctx: Context, args: Args, cronJob: CronJob, from: Date, to: Date): Promise<BackfillPlan> {
  const parsed = schedulesOf(cronJob, ctx.namespace);
  if (!parsed.ok)
    throw new Error(`${RESOURCE}/${args.name} cannot be backfilled: ${parsed.errors.map(fieldErrorString).join("; ")}`);
  const { schedules } = parsed;
  if (to.getTime() > ctx.now().getTime())
    throw new Error(`--to ${to.toISOString()} is in the future: a backfill runs past slots only`);
  const anchor = new Date(cronJob.metadata.creationTimestamp ?? ctx.now());
  const count = schedules.backfillSlotCount(from, to, anchor);
  if (!count.exact || count.count > MAX_BACKFILL_SLOTS) {
    const all = countText(count);
    throw new Error(
      `the range holds ${all} slots; at most ${MAX_BACKFILL_SLOTS} may be backfilled in one request: split the range`,
    );
  }
  const slots = slotsInRange(schedules.schedule, from, to, { max: MAX_BACKFILL_SLOTS, anchor });
  // The slots spec.exclusions holds are skipped, as the schedule skipped them, unless --include-excluded; a calendar
  // that cannot be read is said (the operator holds the request's slots until it can).
  const namespace = cronJob.metadata.namespace ?? ctx.namespace;
  const view =
    !args.includeExcluded && hasExclusions(cronJob.spec)
      ? exclusionsOf(cronJob, await getCalendars(ctx.client, namespace, calendarNamesOf(cronJob.spec)))
      : undefined;
  const excluding = excludingSchedules(schedules, view?.exclusions);
  const exclusionNotes = [
    ...(view?.hold ? [`held: ${view.hold.problem}`] : []),
    ...(view?.unreadable ?? []).map((u) => `could not read ${u}: the slots it excludes are not marked`),
  ];
  const excludedSlots = slots.filter((s) => excluding.excludedBy(s, anchor)).length;
  return { from, to, schedules, anchor, slots, excluding, exclusionNotes, excludedSlots };
}

/** --dry-run: each slot with what the backfill would do with it (a slot whose Job exists, or excluded, is skipped). */
async function backfillDryRun(ctx: Context, args: Args, plan: BackfillPlan): Promise<Output> {
  const { schedules, anchor, slots, excluding, excludedSlots } = plan;
  const jobs = await listAll<Job>(ctx.client, Kinds.Job, {
    namespace: ctx.namespace,
    labelSelector: `${CRONJOB_NAME_LABEL}=${args.name}`,
  });
  const existing = new Set(jobs.map((j) => j.metadata?.name ?? ""));
  const planned = slots.map((s) => {
    const job = jobNameFor(args.name, s);
    const sources = schedules.sourcesAt(s, anchor)?.map(scheduleSourceText).join("; ");
    const excluded = excluding.excludedBy(s, anchor);
    return {
      slot: s.toISOString().replace(".000Z", "Z"),
      job,
      action: existing.has(job)
        ? "skip: its Job exists"
        : excluded
          ? `skip: excluded by ${excluded.by}: ${excluded.window}`
          : "run",
      ...(sources ? { schedule: sources } : {}),
    };
  });
  const toRun = planned.filter((p) => p.action === "run").length;
  const several = planned.some((p) => p.schedule !== undefined);
  const rows = planned.map((p) => [p.slot, p.job, ...(several ? [p.schedule ?? ""] : []), p.action]);
  return {
    text: table(["SLOT (UTC)", "JOB", ...(several ? ["SCHEDULE"] : []), "ACTION"], rows),
    json: { slots: planned },
    notes: [
      ...plan.exclusionNotes,
      `dry run: ${toRun} of ${slots.length} slots would run${excludedSlots ? ` (${excludedSlots} excluded: --include-excluded runs them)` : ""}; nothing was changed`,
    ],
  };
}

async function requestBackfill(ctx: Context, args: Args, cronJob: CronJob, plan: BackfillPlan): Promise<Output> {
  const { from, to, slots, excludedSlots } = plan;
  const id = newRunNowRequest(ctx.now());
  const value = backfillAnnotationValue({
    id,
    from,
    to,
    parallelism: args.parallelism,
    ...(args.includeExcluded ? { includeExcluded: true } : {}),
  });
  await ctx.client.patch(
    CronJobResource,
    ctx.namespace,
    args.name,
    { metadata: { annotations: { [BACKFILL_ANNOTATION]: value } } },
    "merge",
    { fieldManager: FIELD_MANAGER },
  );
  const notes = [
    ...plan.exclusionNotes,
    `progress: kubectl cron backfill ${args.name}; cancel: kubectl cron backfill ${args.name} --cancel`,
  ];
  if (cronJob.status?.backfill?.phase === "Running")
    notes.push(`it replaces the running backfill "${cronJob.status.backfill.id}"`);
  return {
    text: `${RESOURCE}/${args.name}: backfill "${id}" requested: ${slots.length - excludedSlots} slots${excludedSlots ? ` (${excludedSlots} more excluded: skipped)` : ""} from ${from.toISOString()} to ${to.toISOString()}, at most ${args.parallelism} at a time\n`,
    json: { id, slots: slots.length - excludedSlots, ...(excludedSlots ? { excluded: excludedSlots } : {}) },
    notes,
  };
}

export { history, next, runNow, WaitTimeout } from "./onecronjob.ts";
export { FIELD_MANAGER, setSuspend } from "../write/writes.ts";
