// The validating webhooks of the two kinds CronJobs share (docs/fleets.md): an ExclusionCalendar's windows, checked
// by the controller's own window parser in the words a CronJob's own windows get (windowErrors: the field, the value,
// the reason), and a ConcurrencyGroup's limit. The CRDs carry the shape, the lengths and the limit's type and minimum
// (no window format: the API server would answer it first, with a regular expression); these say the rest, and never crash on a malformed object: each error names the
// field and the value. No defaulting: neither kind has a default to set.
import {
  CALENDAR_KIND,
  CALENDAR_PLURAL,
  ConcurrencyGroupSchema,
  ExclusionCalendarSchema,
  GROUP,
  GROUP_KIND,
  GROUP_PLURAL,
  MAX_GROUP_LIMIT,
  parseWithSchema,
  VERSION,
} from "../api/v1/index.ts";
import { type FieldError, invalidField, requiredField } from "../runtime/field.ts";
import { isObj } from "../runtime/objects.ts";
import {
  type AdmissionHandler,
  type AdmissionResult,
  allowed,
  denied,
  invalid,
  requestObjectName,
} from "../runtime/webhook/index.ts";
import { windowErrors } from "./exclusion_checks.ts";
import type { z } from "zod";

const validatePath = (kind: string) => `/validate-${GROUP.replaceAll(".", "-")}-${VERSION}-${kind.toLowerCase()}`;
export const CALENDAR_VALIDATE_PATH = validatePath(CALENDAR_KIND);
export const GROUP_VALIDATE_PATH = validatePath(GROUP_KIND);

/** An ExclusionCalendar's errors: its windows as the controller parses them, then the rest of the schema. */
export function validateExclusionCalendar(obj: unknown): FieldError[] {
  const r = specOf(obj, "an ExclusionCalendar needs spec.windows, its windows");
  if ("errors" in r) return r.errors;
  const errors =
    r.spec.windows === undefined
      ? [requiredField("spec.windows", "the calendar's windows (a list; [] excludes nothing)")]
      : windowErrors(r.spec.windows, "spec.windows");
  return [...errors, ...schemaErrors(ExclusionCalendarSchema, obj, errors)];
}

/** A ConcurrencyGroup's errors: its limit, then the rest of the schema. */
export function validateConcurrencyGroup(obj: unknown): FieldError[] {
  const r = specOf(obj, "a ConcurrencyGroup needs spec.limit, the most Jobs of its CronJobs that run at once");
  if ("errors" in r) return r.errors;
  const limit = r.spec.limit;
  const rule = `a whole number from 0 to ${MAX_GROUP_LIMIT}: the most Jobs of the group's CronJobs that run at once (0 holds every new run)`;
  const errors: FieldError[] = [];
  if (limit === undefined || limit === null) errors.push(requiredField("spec.limit", `must be ${rule}`));
  else if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 0 || limit > MAX_GROUP_LIMIT)
    errors.push(invalidField("spec.limit", limit, `must be ${rule}`));
  return [...errors, ...schemaErrors(ConcurrencyGroupSchema, obj, errors)];
}

/** The object's spec, or the error that says it has none to check (`needs`: what the kind's spec must hold). */
function specOf(obj: unknown, needs: string): { spec: Record<string, unknown> } | { errors: FieldError[] } {
  if (!isObj(obj)) return { errors: [invalidField("<root>", obj, `must be an object: ${needs}`)] };
  if (obj.spec === undefined || obj.spec === null) return { errors: [requiredField("spec", needs)] };
  if (!isObj(obj.spec)) return { errors: [invalidField("spec", obj.spec, `must be an object: ${needs}`)] };
  return { spec: obj.spec };
}

/**
 * What else the schema says (types, lengths), at the fields the checks above did not already name (nor a field
 * inside one). Not metadata: the API server checks it itself.
 */
function schemaErrors(schema: z.ZodType, obj: unknown, found: readonly FieldError[]): FieldError[] {
  const parsed = parseWithSchema(schema, obj);
  if (parsed.ok) return [];
  const named = found.map((e) => e.field);
  const under = (f: string) => named.some((n) => f === n || f.startsWith(`${n}.`) || f.startsWith(`${n}[`));
  const seen = new Set<string>();
  return parsed.errors.filter((e) => {
    if (e.field.startsWith("metadata") || under(e.field) || seen.has(e.field)) return false;
    seen.add(e.field);
    return true;
  });
}

/**
 * The admission handler of a kind checked by `validate`. A DELETE is never blocked, nor an UPDATE of an object being
 * deleted (its finalizers must be able to go); any other update is validated like a create, as a CronJob's is: an
 * object stored before this webhook checked it can be deleted, and must be fixed to be changed.
 */
function validatingHandler(kind: string, validate: (obj: unknown) => FieldError[]): AdmissionHandler {
  return (req): AdmissionResult => {
    if (req.operation !== "CREATE" && req.operation !== "UPDATE") return allowed();
    const meta = isObj(req.object) && isObj(req.object.metadata) ? req.object.metadata : {};
    if (req.operation === "UPDATE" && meta.deletionTimestamp) return allowed();
    const errors = validate(req.object);
    return errors.length === 0 ? allowed() : denied(invalid({ group: GROUP, kind }, requestObjectName(req), errors));
  };
}

export const validateExclusionCalendarRequest = validatingHandler(CALENDAR_KIND, validateExclusionCalendar);
export const validateConcurrencyGroupRequest = validatingHandler(GROUP_KIND, validateConcurrencyGroup);

/** Path → handler, for the webhook server (cmd/run.ts). */
export function fleetWebhookHandlers(): Map<string, AdmissionHandler> {
  return new Map([
    [CALENDAR_VALIDATE_PATH, validateExclusionCalendarRequest],
    [GROUP_VALIDATE_PATH, validateConcurrencyGroupRequest],
  ]);
}

/**
 * The webhook Service's port (config/webhook/service.yaml) the fleet kinds' webhooks are called through: its
 * targetPort is the container port name `webhook-fleet`, which only Pods serving these webhooks declare, so a
 * replica of a release before them (whose 9443 port had another name) is never sent one.
 */
export const FLEET_WEBHOOK_SERVICE_PORT = 9443;

/**
 * What `make manifests` renders into config/webhook/manifests.yaml beside the CronJob's webhooks (kubebuilder's
 * webhook markers): a validating webhook for each kind, on create and update. `servedBy` (added after a release):
 * called through FLEET_WEBHOOK_SERVICE_PORT, shipped Ignore, and twinned by the manager with a copy that fails closed
 * once that port has a ready endpoint (webhooks/unserved.ts FAIL_ONCE_SERVED_ANNOTATION).
 */
export const fleetWebhookMarkers = [
  {
    validating: { name: "vexclusioncalendar-v1.kb.io", path: CALENDAR_VALIDATE_PATH, operations: ["CREATE", "UPDATE"] },
    group: GROUP,
    versions: [VERSION],
    resource: CALENDAR_PLURAL,
    servedBy: FLEET_WEBHOOK_SERVICE_PORT,
  },
  {
    validating: { name: "vconcurrencygroup-v1.kb.io", path: GROUP_VALIDATE_PATH, operations: ["CREATE", "UPDATE"] },
    group: GROUP,
    versions: [VERSION],
    resource: GROUP_PLURAL,
    servedBy: FLEET_WEBHOOK_SERVICE_PORT,
  },
] as const;
