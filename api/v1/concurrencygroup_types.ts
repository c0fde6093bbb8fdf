// The ConcurrencyGroup API: a limit several CronJobs of a namespace share ("at most 2 backups at once"). A CronJob
// names its group in spec.concurrencyGroup; the operator never runs more than spec.limit Jobs of the group's
// members at once, and a slot that finds the group full waits, oldest first across the group, within its own
// startingDeadlineSeconds (docs/fleets.md, docs/architecture.md "Concurrency groups"). The group holds no status:
// its use is the running Jobs of its members (labelled CONCURRENCY_GROUP_LABEL), which `kubectl cron groups` and
// the metrics read, so a run costs no write here.
import { z } from "zod";
import { GROUP, VERSION } from "./groupversion_info.ts";
import { ObjectMetaSchema, WireObjectMetaSchema } from "./meta.ts";
import type { CronJobWire, CronJobWireStatus } from "./cronjob_types.ts";
import type { Job } from "./job.ts";
import { isExplicit, rowOfEntry, runJobName, TRIGGER_ROWS } from "./triggers.ts";
import type { RecentRunWire } from "./recentruns.ts";
import { HELD_BY_GROUP_REASONS, RecordDecision } from "./reasons.ts";

export const GROUP_KIND = "ConcurrencyGroup";
export const GROUP_LIST_KIND = "ConcurrencyGroupList";
export const GROUP_PLURAL = "concurrencygroups";
export const GROUP_SINGULAR = "concurrencygroup";
export const GROUP_SHORT_NAMES = ["cgroup", "cgroups"] as const;
export const GROUP_RESOURCE = `${GROUP_PLURAL}.${GROUP}`;

/** How clients address ConcurrencyGroups (the runtime's ResourceKind shape). */
export const ConcurrencyGroupResource = {
  group: GROUP,
  version: VERSION,
  kind: GROUP_KIND,
  plural: GROUP_PLURAL,
  namespaced: true,
} as const;

/** The most a group's limit may be (an int32, as Kubernetes' own counts). */
export const MAX_GROUP_LIMIT = 2 ** 31 - 1;

export const ConcurrencyGroupSpecSchema = z
  .object({
    limit: z
      .int()
      .min(0)
      .max(MAX_GROUP_LIMIT)
      .meta({
        format: "int32",
        description:
          "The most Jobs of the group's CronJobs that run at once, counting every trigger (the schedule, run-now, " +
          "backfill). A run that finds the group full waits, oldest scheduled time first across the group, within " +
          "its CronJob's startingDeadlineSeconds. Lowering it below what runs ends nothing: new runs wait. 0 holds " +
          "every new run of the group.",
      }),
  })
  .meta({ description: "ConcurrencyGroupSpec: the limit the group's CronJobs share." });

export const ConcurrencyGroupSchema = z
  .object({
    apiVersion: z.literal(`${GROUP}/${VERSION}`).optional(),
    kind: z.literal(GROUP_KIND).optional(),
    metadata: ObjectMetaSchema,
    spec: ConcurrencyGroupSpecSchema,
  })
  .meta({
    description:
      "ConcurrencyGroup is a limit several CronJobs of its namespace share: at most spec.limit of their Jobs run at " +
      "once. A CronJob joins it with spec.concurrencyGroup.",
  });
export type ConcurrencyGroup = z.infer<typeof ConcurrencyGroupSchema>;

/** A stored group as the controller reads it (the CRD guarantees the JSON types only). */
export const ConcurrencyGroupWireSchema = z.looseObject({
  metadata: WireObjectMetaSchema,
  spec: z.looseObject({ limit: z.number().optional() }).optional(),
});
export type ConcurrencyGroupWire = z.infer<typeof ConcurrencyGroupWireSchema>;

/** A stored group's limit, or undefined when it holds none a run can be admitted by (a bad object holds every run). */
export function groupLimitOf(group: unknown): number | undefined {
  const r = ConcurrencyGroupWireSchema.safeParse(group);
  const limit = r.success ? r.data.spec?.limit : undefined;
  return typeof limit === "number" && Number.isInteger(limit) && limit >= 0 ? limit : undefined;
}

export const groupPrinterColumns = [
  { name: "Limit", type: "integer", jsonPath: ".spec.limit" },
  { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
] as const;

/**
 * What waitingRunOf reads of a CronJob, and all it reads (its type says so): what `kubectl cron` keeps of each of the
 * thousands of CronJobs it lists until their Jobs are read (waitingFactsOf).
 */
export interface WaitingFacts {
  metadata?: Pick<CronJobWire["metadata"], "name">;
  spec?: Pick<CronJobWire["spec"], "suspend" | "startingDeadlineSeconds">;
  status?: Pick<CronJobWireStatus, "recentRuns" | "lastScheduleTime" | "lastExcludedTime" | "stopped">;
}

/**
 * What waitingRunOf reads of `cj`, and no more: the record up to its newest run that started (waitingRunOf reads no
 * entry past it).
 */
export function waitingFactsOf(cj: Readonly<WaitingFacts>): WaitingFacts {
  const record = cj.status?.recentRuns ?? [];
  const ran = record.findIndex((e) => e.decision === RecordDecision.Created || e.decision === RecordDecision.Adopted);
  const s = cj.status;
  return {
    metadata: { name: cj.metadata?.name ?? "" },
    spec: {
      ...(cj.spec?.suspend !== undefined ? { suspend: cj.spec.suspend } : {}),
      ...(cj.spec?.startingDeadlineSeconds !== undefined
        ? { startingDeadlineSeconds: cj.spec.startingDeadlineSeconds }
        : {}),
    },
    status: {
      recentRuns: ran < 0 ? [...record] : record.slice(0, ran),
      ...(s?.lastScheduleTime !== undefined ? { lastScheduleTime: s.lastScheduleTime } : {}),
      ...(s?.lastExcludedTime !== undefined ? { lastExcludedTime: s.lastExcludedTime } : {}),
      ...(s?.stopped !== undefined ? { stopped: s.stopped } : {}),
    },
  };
}

/**
 * A CronJob's run waiting for a place in its group, from its stored record: its newest Held entry its group decided,
 * not run since (for a slot: lastScheduleTime has not reached it), within its startingDeadlineSeconds, and without
 * its Job among `jobs`, the CronJob's Jobs (the Job's name is the run's: a run whose Job exists has started, however
 * late the record says so: --status-write-delay, a deferred or lost status write). While its scheduling is suspended
 * or stopped, only an explicit request waits (its row is `explicit`): its slots do not run, its requests do. It waits
 * since the oldest of the group's holds in a row up to it (a held slot that a newer one replaced keeps the CronJob's
 * place in the queue). The operator reads it for a member it has not reconciled since it started
 * (controllers/groups.ts), `kubectl cron` (groups, why, list) for every member.
 */
export function waitingRunOf(
  cj: Readonly<WaitingFacts>,
  now: number,
  jobs: readonly Readonly<Pick<Job, "metadata">>[] = [],
): { since: number; held: Readonly<RecentRunWire> } | undefined {
  const record = cj.status?.recentRuns ?? [];
  const byGroup = (e: Readonly<RecentRunWire>) =>
    e.decision === RecordDecision.Held && (HELD_BY_GROUP_REASONS as readonly string[]).includes(e.reason);
  const held = record.find((e) => e.decision === RecordDecision.Held);
  if (!held || !byGroup(held)) return undefined;
  if ((cj.spec?.suspend || cj.status?.stopped) && !isExplicit(held)) return undefined;
  const job = runJobName(cj.metadata?.name ?? "", held);
  if (job !== undefined && jobs.some((j) => j.metadata?.name === job)) return undefined;
  const slot = held.scheduledTime ? Date.parse(held.scheduledTime) : undefined;
  const last = cj.status?.lastScheduleTime ? Date.parse(cj.status.lastScheduleTime) : undefined;
  // A slot of the schedule's own: lastScheduleTime, the exclusions and the deadline pass it.
  const scheduled = rowOfEntry(TRIGGER_ROWS, held)?.movesLastScheduleTime ?? false;
  if (scheduled && slot !== undefined && last !== undefined && last >= slot) return undefined;
  // An excluded slot at or after it was decided when it came: the older slot no longer runs (the schedule's base).
  const excluded = cj.status?.lastExcludedTime ? Date.parse(cj.status.lastExcludedTime) : undefined;
  if (scheduled && slot !== undefined && excluded !== undefined && excluded >= slot) return undefined;
  const deadline = cj.spec?.startingDeadlineSeconds;
  if (scheduled && slot !== undefined && typeof deadline === "number" && slot + deadline * 1000 <= now)
    return undefined;
  let since = Infinity;
  for (const e of record) {
    if (e.decision === RecordDecision.Created || e.decision === RecordDecision.Adopted) break;
    if (!byGroup(e)) continue;
    // An explicit request waits since it was asked; a slot's run (a retry's too) since its slot.
    const slotted = e.scheduledTime !== undefined && !isExplicit(e);
    const t = slotted ? Date.parse(e.scheduledTime!) : Date.parse(e.decidedAt);
    if (!Number.isNaN(t)) since = Math.min(since, t);
  }
  return Number.isFinite(since) ? { since, held } : undefined;
}
