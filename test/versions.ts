// The Kubernetes version a test talks to, as the apiserver itself reports it (GET /version), and the
// apiserver wording and metric labels that changed between the releases the tests run against (1.20 here,
// current releases elsewhere). Each helper gives the one form the server's release writes, and says where
// in the Kubernetes source each form comes from, so an assertion still fails on any other message.
import { type KubeConfig, VersionApi } from "@kubernetes/client-node";

export interface ServerVersion {
  major: number;
  minor: number;
  /** As the server reports it, e.g. "v1.20.2". */
  gitVersion: string;
}

/** The apiserver's binary version (GET /version; a managed cluster's minor may read "28+"). */
export async function serverVersion(kc: KubeConfig): Promise<ServerVersion> {
  const v = await kc.makeApiClient(VersionApi).getCode();
  const major = parseInt(v.major, 10);
  const minor = parseInt(v.minor, 10);
  if (Number.isNaN(major) || Number.isNaN(minor)) throw new Error(`unparseable server version ${JSON.stringify(v)}`);
  return { major, minor, gitVersion: v.gitVersion };
}

/** Whether `v` is at least 1.`minor`. */
function atLeast(v: ServerVersion, minor: number): boolean {
  return v.major > 1 || (v.major === 1 && v.minor >= minor);
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The refusal of a string longer than a CRD schema's `maxLength` (the whole field error, from the field
 * path on). apiextensions-apiserver's kubeOpenAPIResultToFieldErrors (pkg/apiserver/validation/validation.go):
 * - 1.20–1.23: field.Invalid with kube-openapi's text (validation/errors/schema.go tooLongMessage):
 *   `<field>: Invalid value: "<value>": <field> in body should be at most <max> chars long`
 * - 1.24–1.31: field.TooLongMaxLength (apimachinery field/errors.go): `<field>: Too long: may not be longer than <max>`
 * - 1.32 on: field.TooLong, reworded in apimachinery 1.32: `<field>: Too long: may not be more than <max> bytes`
 *   (1.34 on: "byte" when max is 1)
 */
export function crdMaxLengthError(v: ServerVersion, field: string, max: number): RegExp {
  const f = escape(field);
  if (!atLeast(v, 24)) return new RegExp(`${f}: Invalid value: ".*": ${f} in body should be at most ${max} chars long`);
  if (!atLeast(v, 32)) return new RegExp(`${f}: Too long: may not be longer than ${max}(?!\\d)`);
  return new RegExp(`${f}: Too long: may not be more than ${max} ${max === 1 && atLeast(v, 34) ? "byte" : "bytes"}`);
}

/**
 * The refusal of a list longer than a CRD schema's `maxItems`, as crdMaxLengthError's source maps it:
 * - 1.20–1.23: field.Invalid with kube-openapi's text (tooManyItemsMessage):
 *   `<field>: Invalid value: <n>: <field> in body should have at most <max> items`
 * - 1.24 on: field.TooMany: `<field>: Too many: <n>: must have at most <max> items`
 */
export function crdMaxItemsError(v: ServerVersion, field: string, actual: number, max: number): RegExp {
  const f = escape(field);
  if (!atLeast(v, 24))
    return new RegExp(`${f}: Invalid value: ${actual}: ${f} in body should have at most ${max} items`);
  return new RegExp(`${f}: Too many: ${actual}: must have at most ${max} items`);
}

/**
 * The detail of a label value longer than 63 (ValidateLabels → IsValidLabelValue → MaxLenError):
 * apimachinery pkg/util/validation/validation.go says "characters" through 1.34; from 1.35 the check lives
 * in pkg/api/validate/content, whose MaxLenError says "bytes".
 */
export function labelValueTooLong(v: ServerVersion): string {
  return `must be no more than 63 ${atLeast(v, 35) ? "bytes" : "characters"}`;
}

/**
 * `rejection_code` of apiserver_admission_webhook_rejection_count when the apiserver cannot call a webhook
 * at all (connection refused: error_type="calling_webhook_error"). k8s.io/apiserver
 * pkg/admission/plugin/webhook/{mutating,validating}/dispatcher.go:
 * - 1.20–1.22: always 0
 * - 1.23–1.33: the ErrCallingWebhook's status code, for a transport error apierrors.NewBadRequest: 400
 * - 1.34 on: apierrors.NewServiceUnavailable instead ("Fix misleading response codes in admission control
 *   metrics", kubernetes 601065a7): 503
 */
export function callingWebhookRejectionCode(v: ServerVersion): string {
  if (!atLeast(v, 23)) return "0";
  return atLeast(v, 34) ? "503" : "400";
}

/**
 * The version of the built-in CronJob a cluster prefers: batch/v1 from 1.21 (GA; batch/v1beta1 removed in
 * 1.25), batch/v1beta1 only before.
 */
export function builtinCronJobVersion(v: ServerVersion): "v1" | "v1beta1" {
  return atLeast(v, 21) ? "v1" : "v1beta1";
}
