// admission.k8s.io/v1 wire types and the response builders webhook handlers return (controller-runtime's
// admission.Allowed/Denied/Patched/Errored, plus apierrors.NewInvalid and the field.Error formats), so a
// denial reads exactly as it would from a Go operator: `kubectl` users and tests matching on apiserver
// messages see the same text.

import { type FieldError, fieldErrorBody, fieldErrorString } from "../field.ts";
export { type FieldError, type FieldErrorType, fieldErrorString, invalidField, requiredField } from "../field.ts";

export const ADMISSION_API_VERSION = "admission.k8s.io/v1";

export type Operation = "CREATE" | "UPDATE" | "DELETE" | "CONNECT";

interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

interface GroupKind {
  /** "" for the core group. */
  group: string;
  kind: string;
}

interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  requestKind?: GroupVersionKind;
  requestResource?: GroupVersionResource;
  requestSubResource?: string;
  /** Empty on CREATE when the object uses metadata.generateName. */
  name?: string;
  namespace?: string;
  operation: Operation;
  userInfo: UserInfo;
  /** The new object; absent on DELETE. */
  object?: unknown;
  /** The existing object on UPDATE and DELETE. */
  oldObject?: unknown;
  /** Handlers with side effects must not act on dry-run requests. */
  dryRun?: boolean;
  /** CreateOptions, UpdateOptions or DeleteOptions. */
  options?: unknown;
}

interface StatusCause {
  /**
   * metav1.CauseType (field errors use their FieldErrorType). Go's StatusCause.Type is serialized as
   * "reason", so that is its name on the wire and in what clients read back.
   */
  reason?: string;
  message?: string;
  field?: string;
}

interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** metav1.Status as carried in AdmissionResponse.status. */
interface Status {
  status?: "Success" | "Failure";
  code?: number;
  reason?: string;
  message?: string;
  details?: StatusDetails;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: Status;
  patchType?: "JSONPatch";
  /** Base64 of a JSON Patch (RFC 6902) document. */
  patch?: string;
  auditAnnotations?: Record<string, string>;
  warnings?: string[];
}

export interface AdmissionReview {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: "AdmissionReview";
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

/** What a handler returns; the server fills in the uid from the request. */
export type AdmissionResult = Omit<AdmissionResponse, "uid"> & { uid?: string };

export type AdmissionHandler = (req: AdmissionRequest) => AdmissionResult | Promise<AdmissionResult>;

export interface JSONPatchOperation {
  op: "add" | "remove" | "replace" | "move" | "copy" | "test";
  /** A JSON Pointer; escape keys with escapeJSONPointer (label keys contain "/"). */
  path: string;
  value?: unknown;
  from?: string;
}

function withWarnings<T extends AdmissionResult>(r: T, warnings: readonly string[] | undefined): T {
  if (warnings && warnings.length > 0) r.warnings = [...warnings];
  return r;
}

/** admission.Allowed: lets the request through; warnings are shown by kubectl as "Warning: ...". */
export function allowed(warnings?: readonly string[]): AdmissionResult {
  return withWarnings({ allowed: true, status: { code: 200 } }, warnings);
}

/**
 * admission.Denied. A string becomes a 403 Forbidden with that message, as in controller-runtime; pass a
 * Status (e.g. from invalid()) to control the code, reason and causes the client sees.
 */
export function denied(status: Status | string, warnings?: readonly string[]): AdmissionResult {
  const s: Status =
    typeof status === "string"
      ? { status: "Failure", code: 403, reason: "Forbidden", ...(status ? { message: status } : {}) }
      : { status: "Failure", ...status };
  return withWarnings({ allowed: false, status: s }, warnings);
}

/** admission.Errored: the webhook could not decide (the server uses it for handler failures). */
export function errored(code: number, err: unknown): AdmissionResult {
  const message = err instanceof Error ? err.message : String(err);
  return { allowed: false, status: { status: "Failure", code, message } };
}

/** Allows the request with a JSON Patch; with no operations the response carries no patch at all. */
export function patched(ops: readonly JSONPatchOperation[], warnings?: readonly string[]): AdmissionResult {
  const r = allowed(warnings);
  if (ops.length > 0) {
    r.patchType = "JSONPatch";
    r.patch = Buffer.from(JSON.stringify(ops), "utf8").toString("base64");
  }
  return r;
}

/** One JSON Pointer reference token (RFC 6901): "app.kubernetes.io/name" → "app.kubernetes.io~1name". */
export function escapeJSONPointer(token: string): string {
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}

/**
 * The name an admission request's object goes by in a refusal: the request's name, else the object's metadata.name,
 * else its generateName (a create with generateName has no name yet).
 */
export function requestObjectName(req: AdmissionRequest): string {
  const obj = req.object as { metadata?: unknown } | null | undefined;
  const meta = (typeof obj === "object" && obj !== null && typeof obj.metadata === "object" && obj.metadata) || {};
  const { name, generateName } = meta as { name?: unknown; generateName?: unknown };
  return req.name || (typeof name === "string" ? name : "") || (typeof generateName === "string" ? generateName : "");
}

// ---------------------------------------------------------------------------------------------------
// apierrors.NewInvalid

/**
 * apierrors.NewInvalid: 422 Invalid, one cause per error, and the message
 * `<Kind>[.<group>] "<name>" is invalid: <errors>` where several distinct errors are listed in
 * brackets, comma-separated (ErrorList.ToAggregate drops repeated messages). Wrap it with denied().
 */
export function invalid(kind: GroupKind, name: string, errors: readonly FieldError[]): Status {
  const qualified = kind.group ? `${kind.kind}.${kind.group}` : kind.kind;
  const messages = [...new Set(errors.map(fieldErrorString))];
  // Go prints a nil aggregate (no errors) as "<nil>".
  const aggregate = messages.length === 0 ? "<nil>" : messages.length === 1 ? messages[0] : `[${messages.join(", ")}]`;
  return {
    status: "Failure",
    code: 422,
    reason: "Invalid",
    message: `${qualified} ${JSON.stringify(name)} is invalid: ${aggregate}`,
    details: {
      name,
      // Go's omitempty: the core group is left out rather than sent as "".
      ...(kind.group ? { group: kind.group } : {}),
      kind: kind.kind,
      causes: errors.map((e) => ({
        reason: e.type ?? "FieldValueInvalid",
        message: fieldErrorBody(e),
        field: e.field,
      })),
    },
  };
}
