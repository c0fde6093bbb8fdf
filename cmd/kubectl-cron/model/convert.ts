// Built-in CronJob (batch/v1 or batch/v1beta1) → a CronJob of this kind, or the reason it cannot be carried over.
// Pure: the same checks the validating webhook makes (validateCronJob), so a schedule this kind refuses is
// reported here, per object, before anything is written.
import { z } from "zod";
import {
  API_VERSION,
  type CronJobWire,
  CronJobWireSchema,
  GROUP,
  KIND,
  MAX_CRONJOB_NAME_LENGTH,
} from "../../../api/v1/index.ts";
import { isObj } from "../../../runtime/objects.ts";
import { fieldErrorString } from "../../../runtime/webhook/index.ts";
import { validateCronJob } from "../../../webhooks/cronjob_webhook.ts";
import type { BuiltinCronJob } from "./builtin.ts";

/** On ours: where it came from and the original's spec.suspend before the handover (JSON, MigratedFrom). */
export const MIGRATED_FROM_ANNOTATION = `${GROUP}/migrated-from`;
/** On ours while a handover is unfinished: "migrating", "returning"; "returned" once given back (kept suspended). */
export const HANDOVER_ANNOTATION = `${GROUP}/handover`;
export type HandoverState = "migrating" | "returning" | "returned";

export interface MigratedFrom {
  apiVersion: string;
  namespace: string;
  name: string;
  uid: string;
  /** The original's spec.suspend before it was taken over: restored by unmigrate, and ours starts suspended if it was. */
  suspend: boolean;
}

/** The CronJob to create, as sent (the API server applies the defaults). */
type Conversion = { ok: true; cronJob: CronJobWire; warnings: string[] } | { ok: false; reason: string };

/**
 * Metadata of the original that belongs to the built-in kind or to a tool, not to the user: kubectl's copy of
 * the applied object (it describes the other kind), keys of the built-in's own domains, and this group's keys
 * (a run-now request copied onto ours would run once at creation; handover state is written by migrate itself).
 */
function isCarriedKey(key: string): boolean {
  if (key === "kubectl.kubernetes.io/last-applied-configuration") return false;
  const prefix = key.includes("/") ? key.slice(0, key.indexOf("/")) : "";
  return !["batch.kubernetes.io", "cronjob.kubernetes.io", GROUP].includes(prefix);
}

function carried(m: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!m) return undefined;
  const out = Object.fromEntries(Object.entries(m).filter(([k]) => isCarriedKey(k)));
  return Object.keys(out).length > 0 ? out : undefined;
}

type Obj = Record<string, unknown>;

/** A template's metadata as the API server returns it carries `creationTimestamp: null`; a template has none. */
function templateMeta(meta: unknown): Obj | undefined {
  if (!isObj(meta)) return undefined;
  const out: Obj = {};
  for (const [k, v] of Object.entries(meta)) if (v !== null && k !== "creationTimestamp") out[k] = v;
  return Object.keys(out).length > 0 ? out : undefined;
}

function jobTemplateOf(original: BuiltinCronJob): Obj {
  const tmpl = structuredClone(original.spec.jobTemplate ?? {}) as Obj;
  const out: Obj = {};
  const meta = templateMeta(tmpl.metadata);
  if (meta) out.metadata = meta;
  const spec = isObj(tmpl.spec) ? tmpl.spec : {};
  if (isObj(spec.template)) {
    const podMeta = templateMeta(spec.template.metadata);
    if (podMeta) spec.template.metadata = podMeta;
    else delete spec.template.metadata;
  }
  out.spec = spec;
  return out;
}

export function migratedFromOf(original: BuiltinCronJob, apiVersion: string): MigratedFrom {
  return {
    apiVersion,
    namespace: original.metadata.namespace ?? "",
    name: original.metadata.name ?? "",
    uid: original.metadata.uid ?? "",
    suspend: original.spec.suspend === true,
  };
}

/** The MigratedFrom record of ours, or undefined when it has none (or not one this plugin wrote). */
export function readMigratedFrom(annotations: Record<string, string> | undefined): MigratedFrom | undefined {
  const raw = annotations?.[MIGRATED_FROM_ANNOTATION];
  if (!raw) return undefined;
  try {
    const v = JSON.parse(raw) as Partial<MigratedFrom>;
    if (
      typeof v.apiVersion === "string" &&
      typeof v.namespace === "string" &&
      typeof v.name === "string" &&
      typeof v.uid === "string" &&
      typeof v.suspend === "boolean"
    ) {
      return v as MigratedFrom;
    }
  } catch {
    // Not JSON: not ours to interpret.
  }
  return undefined;
}

/**
 * Ours for a built-in CronJob: the same name and namespace, schedule, timeZone, every policy and limit, the
 * whole jobTemplate, the user's labels and annotations, plus the handover record. It is created suspended
 * (`spec.suspend: true`): the handover unsuspends it once the original is suspended and its last slot is
 * known (unless the original was suspended to begin with).
 */
export function convertBuiltin(original: BuiltinCronJob, apiVersion: string): Conversion {
  const name = original.metadata.name ?? "";
  const namespace = original.metadata.namespace ?? "";
  if (name.length > MAX_CRONJOB_NAME_LENGTH) {
    return {
      ok: false,
      reason:
        `metadata.name: ${JSON.stringify(name)} has ${name.length} characters; this kind allows at most ` +
        `${MAX_CRONJOB_NAME_LENGTH} (its Jobs are named <name>-<Unix seconds>, which must fit in 63)`,
    };
  }
  const s = original.spec;
  const spec: Obj = { schedule: s.schedule };
  if (s.timeZone !== undefined && s.timeZone !== null) spec.timeZone = s.timeZone;
  if (s.startingDeadlineSeconds !== undefined && s.startingDeadlineSeconds !== null) {
    spec.startingDeadlineSeconds = s.startingDeadlineSeconds;
  }
  if (s.concurrencyPolicy !== undefined && s.concurrencyPolicy !== null) spec.concurrencyPolicy = s.concurrencyPolicy;
  spec.suspend = true;
  if (s.successfulJobsHistoryLimit !== undefined && s.successfulJobsHistoryLimit !== null) {
    spec.successfulJobsHistoryLimit = s.successfulJobsHistoryLimit;
  }
  if (s.failedJobsHistoryLimit !== undefined && s.failedJobsHistoryLimit !== null) {
    spec.failedJobsHistoryLimit = s.failedJobsHistoryLimit;
  }
  spec.jobTemplate = jobTemplateOf(original);

  const labels = carried(original.metadata.labels);
  const annotations: Record<string, string> = {
    ...carried(original.metadata.annotations),
    [MIGRATED_FROM_ANNOTATION]: JSON.stringify(migratedFromOf(original, apiVersion)),
    [HANDOVER_ANNOTATION]: "migrating" satisfies HandoverState,
  };
  const obj = {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name, namespace, ...(labels ? { labels } : {}), annotations },
    spec,
  };
  const { errors, warnings } = validateCronJob(obj, { namespace });
  if (errors.length > 0) return { ok: false, reason: errors.map(fieldErrorString).join("; ") };
  // The webhook's checks include the schema's, so the wire types hold; the parse only types the object.
  const parsed = CronJobWireSchema.safeParse(obj);
  if (!parsed.success) return { ok: false, reason: z.prettifyError(parsed.error).replaceAll("\n", "; ") };
  return { ok: true, cronJob: parsed.data, warnings };
}
