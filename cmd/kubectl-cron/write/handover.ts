// migrate / unmigrate: hand a schedule from the built-in CronJob to ours and back, so that no slot runs twice
// and none is lost. Every step is safe to repeat after a crash: the state lives on OUR object (annotations
// MIGRATED_FROM_ANNOTATION and HANDOVER_ANNOTATION), and each step checks it before writing.
//
// migrate, per object: (1) create ours suspended, recording the original's UID and spec.suspend; (2) suspend the
// original (only now: ours was admitted); (3) once for the whole batch, wait --settle, so that the built-in
// controller finishes a Job it decided on from a copy read before the suspension; (4) the original's last slot
// (status.lastScheduleTime or the newest of its Jobs) becomes ours' status.lastScheduleTime, the anchor our
// controller schedules from; (5) unsuspend ours (unless the original was suspended before) and drop the marker.
// A slot that passed during the handover is then the newest missed slot, which our controller runs once.
// unmigrate is the mirror image: suspend ours, settle, carry our last slot into the original's status,
// restore the original's spec.suspend, then delete ours (--delete, its Jobs kept) or mark it given back.
import {
  CronJobResource,
  RESOURCE,
  scheduledTimeOf,
  type CronJob,
  type CronJobWire,
  type Job,
} from "../../../api/v1/index.ts";
import { APIError, isAlreadyExists } from "../../../runtime/errors.ts";
import { rfc3339 } from "../../../runtime/metatime.ts";
import type { HandoverAPI } from "./handoverapi.ts";
import {
  builtinCronJobKind,
  builtinJobSlot,
  isControlledBy,
  type BuiltinCronJob,
  type BuiltinVersion,
} from "../model/builtin.ts";
import {
  convertBuiltin,
  HANDOVER_ANNOTATION,
  MIGRATED_FROM_ANNOTATION,
  migratedFromOf,
  readMigratedFrom,
  type HandoverState,
  type MigratedFrom,
} from "../model/convert.ts";

type Outcome =
  | "migrated"
  | "already migrated"
  | "would migrate"
  | "given back"
  | "already given back"
  | "would give back"
  | "refused";

export interface ObjectReport {
  namespace: string;
  name: string;
  outcome: Outcome;
  /** Why it was refused. */
  reason?: string;
  /** What was (or, with --dry-run, would be) changed, in order. */
  changes: string[];
  warnings: string[];
  /** --dry-run of migrate: the CronJob it would create. */
  object?: CronJobWire;
}

export interface HandoverOptions {
  builtinVersion: BuiltinVersion;
  dryRun: boolean;
  settleSeconds: number;
  sleep: (ms: number) => Promise<void>;
  /** Progress on stderr (the settle wait). */
  note?: (s: string) => void;
}

const newer = (a: Date | undefined, b: Date | undefined) => (a && (!b || a > b) ? a : b);
const parseTime = (s: string | undefined) => (s ? new Date(s) : undefined);
const handoverOf = (obj: { metadata?: { annotations?: Record<string, string> } }) =>
  obj.metadata?.annotations?.[HANDOVER_ANNOTATION] as HandoverState | undefined;

function refused(namespace: string, name: string, reason: string): ObjectReport {
  return { namespace, name, outcome: "refused", reason, changes: [], warnings: [] };
}

/** The API server's answer to a write, as a per-object reason (the webhook's message names the field). */
function refusalOf(e: unknown): string | undefined {
  if (e instanceof APIError && [400, 403, 409, 422].includes(e.code)) return e.message;
  return undefined;
}

async function jobsByNamespace(api: HandoverAPI, namespaces: Iterable<string>): Promise<Map<string, Job[]>> {
  const out = new Map<string, Job[]>();
  for (const ns of new Set(namespaces)) out.set(ns, await api.listJobs(ns));
  return out;
}

async function settle(opts: HandoverOptions, what: string): Promise<void> {
  if (opts.settleSeconds <= 0) return;
  opts.note?.(`waiting ${opts.settleSeconds}s for ${what} to finish any Job it was creating (--settle)`);
  await opts.sleep(opts.settleSeconds * 1000);
}

interface Pending {
  report: ObjectReport;
  original: BuiltinCronJob;
  record: MigratedFrom;
}

/** migrate: the built-in CronJobs given (already selected), each handed over to ours. */
export async function migrate(
  api: HandoverAPI,
  originals: readonly BuiltinCronJob[],
  opts: HandoverOptions,
): Promise<ObjectReport[]> {
  const reports: ObjectReport[] = [];
  const pending: Pending[] = [];
  for (const original of originals) {
    const step = await takeOver(api, original, opts);
    if ("done" in step) reports.push(step.done);
    else pending.push(step);
  }
  if (pending.length > 0 && !opts.dryRun) await settle(opts, "the built-in CronJob controller");
  const jobs = opts.dryRun
    ? new Map<string, Job[]>()
    : await jobsByNamespace(
        api,
        pending.map((p) => p.report.namespace),
      );
  for (const p of pending) reports.push(await handOver(api, p, jobs, opts));
  return order(
    reports,
    originals.map((o) => `${o.metadata.namespace}/${o.metadata.name}`),
  );
}

/** An object whose handover ended before the settle wait (refused, or nothing to do). */
interface Done {
  done: ObjectReport;
}

/** Steps (1) and (2) of one object: ours created (or found) suspended, then the original suspended. */
async function takeOver(api: HandoverAPI, original: BuiltinCronJob, opts: HandoverOptions): Promise<Done | Pending> {
  const apiVersion = `batch/${opts.builtinVersion}`;
  const namespace = original.metadata.namespace ?? "";
  const name = original.metadata.name ?? "";
  const conversion = convertBuiltin(original, apiVersion);
  if (!conversion.ok) return { done: refused(namespace, name, conversion.reason) };
  const report: ObjectReport = {
    namespace,
    name,
    outcome: opts.dryRun ? "would migrate" : "migrated",
    changes: [],
    warnings: [...conversion.warnings, ...deadlineWarning(original.spec.startingDeadlineSeconds, opts)],
  };
  const made = await createOurs(api, conversion.cronJob, report, opts);
  if (made.refusal !== undefined) return { done: refused(namespace, name, made.refusal) };
  let record = migratedFromOf(original, apiVersion);
  if (made.existing) {
    const found = await existingOurs(api, original, made.existing, conversion.cronJob, report, opts);
    if ("done" in found) return found;
    record = found.record ?? record;
  }
  if (original.spec.suspend !== true) {
    if (!opts.dryRun)
      await api.mergePatch(builtinCronJobKind(opts.builtinVersion), namespace, name, { spec: { suspend: true } });
    report.changes.push(`suspend ${apiVersion} CronJob ${namespace}/${name}`);
  }
  return { report, original, record };
}

/**
 * Ours created suspended unless it exists: what is there now (none when a dry run would create it), or why the API
 * server refused it.
 */
async function createOurs(
  api: HandoverAPI,
  converted: CronJobWire,
  report: ObjectReport,
  opts: HandoverOptions,
): Promise<{ existing?: CronJobWire | undefined; refusal?: string }> {
  const { namespace, name } = report;
  const existing = await api.get<CronJob>(CronJobResource, namespace, name);
  if (existing) return { existing };
  try {
    const created = await api.create(CronJobResource, converted, { dryRun: opts.dryRun });
    report.changes.push(`create ${RESOURCE} ${namespace}/${name}, suspended until the handover ends`);
    if (opts.dryRun) report.object = converted;
    return { existing: opts.dryRun ? undefined : created };
  } catch (e) {
    if (!isAlreadyExists(e)) {
      const reason = refusalOf(e);
      if (reason === undefined) throw e;
      return { refusal: reason };
    }
    // Created meanwhile (another run of migrate): decide on what is there.
    return { existing: await api.get<CronJob>(CronJobResource, namespace, name) };
  }
}

/**
 * Ours already there: another object (refused), migrated already, a give-back unfinished (refused), given back
 * earlier (taken over again), or an earlier migrate stopped part-way, whose record holds the original's suspend from
 * before (`record`).
 */
async function existingOurs(
  api: HandoverAPI,
  original: BuiltinCronJob,
  existing: CronJobWire,
  converted: CronJobWire,
  report: ObjectReport,
  opts: HandoverOptions,
): Promise<Done | { record?: MigratedFrom }> {
  const apiVersion = `batch/${opts.builtinVersion}`;
  const { namespace, name } = report;
  const ours = `${RESOURCE} ${namespace}/${name}`;
  const theirRecord = readMigratedFrom(existing.metadata.annotations);
  if (!theirRecord || theirRecord.uid !== original.metadata.uid) {
    const reason =
      `${ours} already exists and was not migrated from this ${apiVersion} CronJob (uid ${original.metadata.uid}): ` +
      `nothing changed; rename or delete one of them`;
    return { done: refused(namespace, name, reason) };
  }
  const state = handoverOf(existing);
  if (state === undefined) {
    report.outcome = "already migrated";
    if (original.spec.suspend !== true) {
      report.warnings.push(
        `${apiVersion} CronJob ${namespace}/${name} was resumed after the migration: both run its schedule (kubectl cron unmigrate ${name} gives it back)`,
      );
    }
    return { done: report };
  }
  if (state === "returning") {
    const reason = `a give-back is unfinished: finish it first (kubectl cron unmigrate ${name})`;
    return { done: refused(namespace, name, reason) };
  }
  if (state !== "returned") return { record: theirRecord };
  // Given back earlier and kept suspended: take it over again with the original's current spec and metadata,
  // replaced whole (a merge would keep fields the original no longer has).
  if (!opts.dryRun) {
    try {
      await api.replaceMembers(CronJobResource, namespace, name, [
        { path: "/spec", value: converted.spec },
        { path: "/metadata/labels", value: converted.metadata.labels ?? {} },
        { path: "/metadata/annotations", value: converted.metadata.annotations ?? {} },
      ]);
    } catch (e) {
      const reason = refusalOf(e);
      if (reason === undefined) throw e;
      return { done: refused(namespace, name, reason) };
    }
  }
  report.changes.push(
    `update ${ours} (given back earlier) from ${apiVersion} CronJob ${namespace}/${name}, suspended until the handover ends`,
  );
  if (opts.dryRun) report.object = converted;
  return {};
}

/** Steps (4) and (5) of one object, after the settle wait: the original's last slot carried to ours, ours resumed. */
async function handOver(
  api: HandoverAPI,
  { report, original, record }: Pending,
  jobs: Map<string, Job[]>,
  opts: HandoverOptions,
): Promise<ObjectReport> {
  const { namespace, name } = report;
  const ours = `${RESOURCE} ${namespace}/${name}`;
  if (opts.dryRun) {
    const last = lastSlotOfBuiltin(original, [], name);
    report.changes.push(
      `wait ${opts.settleSeconds}s, then write the original's last scheduled time (now ${last ? rfc3339(last) : "none"}) into ${ours} status.lastScheduleTime`,
      record.suspend ? `leave ${ours} suspended (the original was suspended)` : `resume ${ours}`,
    );
    return report;
  }
  const now = (await api.get<BuiltinCronJob>(builtinCronJobKind(opts.builtinVersion), namespace, name)) ?? original;
  const last = lastSlotOfBuiltin(now, jobs.get(namespace) ?? [], name);
  const current = await api.get<CronJob>(CronJobResource, namespace, name);
  if (!current) return refused(namespace, name, `${ours} was deleted during the handover; nothing more changed`);
  const recorded = parseTime(current.status?.lastScheduleTime);
  if (last && (!recorded || last > recorded)) {
    await api.mergePatch(
      CronJobResource,
      namespace,
      name,
      { status: { lastScheduleTime: rfc3339(last) } },
      { status: true },
    );
    report.changes.push(`set ${ours} status.lastScheduleTime=${rfc3339(last)} (the original's last run)`);
  }
  await api.mergePatch(CronJobResource, namespace, name, {
    spec: { suspend: record.suspend },
    metadata: { annotations: { [HANDOVER_ANNOTATION]: null } },
  });
  report.changes.push(record.suspend ? `leave ${ours} suspended (the original was suspended)` : `resume ${ours}`);
  if (original.spec.concurrencyPolicy === "Forbid" && (now.status?.active?.length ?? 0) > 0) {
    report.warnings.push(
      `concurrencyPolicy Forbid: the original's running Job(s) ${(now.status?.active ?? []).map((a) => a.name).join(", ")} do not hold back ours`,
    );
  }
  return report;
}

/** The original's newest slot: its status, or the newest of its Jobs (a Job created just before the suspension). */
function lastSlotOfBuiltin(original: BuiltinCronJob, jobs: readonly Job[], name: string): Date | undefined {
  let last = parseTime(original.status?.lastScheduleTime);
  for (const job of jobs) if (isControlledBy(job, original.metadata.uid)) last = newer(builtinJobSlot(job, name), last);
  return last;
}

/** Ours' newest slot: its status, or the newest of its Jobs. */
function lastSlotOfOurs(cronJob: CronJob, jobs: readonly Job[]): Date | undefined {
  let last = parseTime(cronJob.status?.lastScheduleTime);
  for (const job of jobs) if (isControlledBy(job, cronJob.metadata.uid)) last = newer(scheduledTimeOf(job), last);
  return last;
}

/** The seconds a handover takes beyond --settle (the writes before and after it). */
const HANDOVER_MARGIN_SECONDS = 10;

/**
 * A slot due during the handover is run by the receiving side once it takes over, within the deadline; a
 * deadline shorter than the handover can leave such a slot to neither (ours reports it as MissSchedule).
 */
function deadlineWarning(deadline: number | null | undefined, opts: HandoverOptions): string[] {
  if (deadline == null || deadline >= opts.settleSeconds + HANDOVER_MARGIN_SECONDS) return [];
  return [
    `startingDeadlineSeconds ${deadline} is shorter than the handover (--settle ${opts.settleSeconds}s and a few ` +
      `seconds of writes): a slot due during it may run on neither side; run it when no slot is due, or with a shorter --settle`,
  ];
}

function order(reports: ObjectReport[], keys: string[]): ObjectReport[] {
  const index = new Map(keys.map((k, i) => [k, i]));
  return reports.sort(
    (a, b) => (index.get(`${a.namespace}/${a.name}`) ?? 0) - (index.get(`${b.namespace}/${b.name}`) ?? 0),
  );
}

interface PendingReturn {
  report: ObjectReport;
  record: MigratedFrom;
}

/** unmigrate: ours given (already selected; each must carry a migrate record) handed back to the original. */
export async function unmigrate(
  api: HandoverAPI,
  cronJobs: readonly CronJob[],
  opts: HandoverOptions & { delete: boolean },
): Promise<ObjectReport[]> {
  const reports: ObjectReport[] = [];
  const pending: PendingReturn[] = [];
  for (const cronJob of cronJobs) {
    const step = await suspendOurs(api, cronJob, opts);
    if ("done" in step) reports.push(step.done);
    else pending.push(step);
  }
  if (pending.length > 0 && !opts.dryRun) await settle(opts, "the operator");
  const jobs = opts.dryRun
    ? new Map<string, Job[]>()
    : await jobsByNamespace(
        api,
        pending.map((p) => p.report.namespace),
      );
  for (const p of pending) reports.push(await giveBack(api, p, jobs, opts));
  return order(
    reports,
    cronJobs.map((c) => `${c.metadata.namespace}/${c.metadata.name}`),
  );
}

/** The give-back's first step, per object: ours suspended and marked returning (or, given back already, deleted). */
async function suspendOurs(
  api: HandoverAPI,
  cronJob: CronJob,
  opts: HandoverOptions & { delete: boolean },
): Promise<Done | PendingReturn> {
  const namespace = cronJob.metadata.namespace ?? "";
  const name = cronJob.metadata.name ?? "";
  const ours = `${RESOURCE} ${namespace}/${name}`;
  const record = readMigratedFrom(cronJob.metadata.annotations);
  if (!record) {
    const reason = `${ours} was not created by kubectl cron migrate (no ${MIGRATED_FROM_ANNOTATION}): nothing to give back`;
    return { done: refused(namespace, name, reason) };
  }
  const report: ObjectReport = {
    namespace,
    name,
    outcome: opts.dryRun ? "would give back" : "given back",
    changes: [],
    warnings: deadlineWarning(cronJob.spec.startingDeadlineSeconds, opts),
  };
  const state = handoverOf(cronJob);
  if (state === "returned") {
    report.outcome = "already given back";
    if (opts.delete) {
      if (!opts.dryRun) await api.deleteOrphaning(CronJobResource, namespace, name, cronJob.metadata.uid ?? "");
      report.changes.push(`delete ${ours} (its Jobs are kept)`);
    }
    return { done: report };
  }
  const original = await api.get<BuiltinCronJob>(
    builtinCronJobKind(opts.builtinVersion),
    record.namespace,
    record.name,
  );
  if (!original || original.metadata.uid !== record.uid) {
    const reason = `the original batch/${opts.builtinVersion} CronJob ${namespace}/${name} (uid ${record.uid}) no longer exists: nothing to give back to; ${ours} is left as it is`;
    return { done: refused(namespace, name, reason) };
  }
  if (state !== "returning" || cronJob.spec.suspend !== true) {
    if (!opts.dryRun) {
      await api.mergePatch(CronJobResource, namespace, name, {
        spec: { suspend: true },
        metadata: { annotations: { [HANDOVER_ANNOTATION]: "returning" satisfies HandoverState } },
      });
    }
    report.changes.push(`suspend ${ours}`);
  }
  return { report, record };
}

/**
 * After the settle wait, per object: our last slot carried into the original's status, its spec.suspend restored,
 * then ours deleted (--delete, its Jobs kept) or marked given back.
 */
async function giveBack(
  api: HandoverAPI,
  { report, record }: PendingReturn,
  jobs: Map<string, Job[]>,
  opts: HandoverOptions & { delete: boolean },
): Promise<ObjectReport> {
  const builtin = builtinCronJobKind(opts.builtinVersion);
  const { namespace, name } = report;
  const ours = `${RESOURCE} ${namespace}/${name}`;
  const theirs = `batch/${opts.builtinVersion} CronJob ${namespace}/${name}`;
  const current = await api.get<CronJob>(CronJobResource, namespace, name);
  const original = await api.get<BuiltinCronJob>(builtin, record.namespace, record.name);
  if (!current || !original || original.metadata.uid !== record.uid)
    return refused(
      namespace,
      name,
      `${current ? theirs : ours} was deleted during the give-back; nothing more changed`,
    );
  const last = lastSlotOfOurs(current, jobs.get(namespace) ?? []);
  const theirLast = parseTime(original.status?.lastScheduleTime);
  if (opts.dryRun) {
    report.changes.push(
      `wait ${opts.settleSeconds}s, then write ours' last scheduled time (now ${last ? rfc3339(last) : "none"}) into ${theirs} status.lastScheduleTime`,
    );
  } else if (last && (!theirLast || last > theirLast)) {
    await api.mergePatch(
      builtin,
      record.namespace,
      record.name,
      { status: { lastScheduleTime: rfc3339(last) } },
      { status: true },
    );
    report.changes.push(`set ${theirs} status.lastScheduleTime=${rfc3339(last)} (ours' last run)`);
  }
  if ((original.spec.suspend === true) !== record.suspend) {
    if (!opts.dryRun)
      await api.mergePatch(builtin, record.namespace, record.name, { spec: { suspend: record.suspend } });
    report.changes.push(record.suspend ? `suspend ${theirs} (as it was before the migration)` : `resume ${theirs}`);
  }
  if (opts.delete) {
    if (!opts.dryRun) await api.deleteOrphaning(CronJobResource, namespace, name, current.metadata.uid ?? "");
    report.changes.push(`delete ${ours} (its Jobs are kept)`);
  } else {
    if (!opts.dryRun) {
      await api.mergePatch(CronJobResource, namespace, name, {
        metadata: { annotations: { [HANDOVER_ANNOTATION]: "returned" satisfies HandoverState } },
      });
    }
    report.changes.push(`leave ${ours} suspended, marked given back`);
  }
  return report;
}
