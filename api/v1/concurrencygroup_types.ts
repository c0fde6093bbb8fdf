// The ConcurrencyGroup API: a limit several CronJobs of a namespace share ("at most 2 backups at once"). A CronJob
// names its group in spec.concurrencyGroup; the operator never runs more than spec.limit Jobs of the group's
// members at once, and a slot that finds the group full waits, oldest first across the group, within its own
// startingDeadlineSeconds (docs/fleets.md, docs/architecture.md "Concurrency groups"). The group holds no status:
// its use is the running Jobs of its members (labelled CONCURRENCY_GROUP_LABEL), which `kubectl cron groups` and
// the metrics read, so a run costs no write here.
import { z } from "zod";
import { GROUP, VERSION } from "./groupversion_info.ts";
import { ObjectMetaSchema, WireObjectMetaSchema } from "./meta.ts";

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
const MAX_GROUP_LIMIT = 2 ** 31 - 1;
/**
 * A group's name, as spec.concurrencyGroup names it: the characters of a DNS-1123 subdomain (the API server checks
 * the group's own name fully; a name no group can have is simply never found).
 */
export const MAX_GROUP_NAME_LENGTH = 253;
export const GROUP_NAME_PATTERN = /^[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/;

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
