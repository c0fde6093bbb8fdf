// CRD conversion webhooks (controller-runtime's pkg/webhook/conversion): apiextensions.k8s.io/v1
// ConversionReview in and out, served by the webhook server beside the admission webhooks. Generic: the
// user's Converter turns one object of any kind it knows into the desired version. Every answer is checked
// against what the apiserver enforces on a conversion response (apiextensions-apiserver's
// pkg/apiserver/conversion/webhook_converter.go: getConvertedObjectsFromResponse, validateConvertedObject,
// restoreObjectMeta), so a converter bug reads as a Failure naming the object and the rule rather than
// the apiserver's "conversion webhook for ... returned invalid object at index N".
//
// As the apiserver does, the metadata of a converted object is the original's, with the converter's labels
// and annotations: other metadata changes are not refused but undone (and logged once per field), so the
// response is exactly what the apiserver would make of it.
import { fieldErrorString, type FieldError } from "../field.ts";
import { objectKey, type KubeObject } from "../kinds.ts";
import { log as defaultLog, type Logger } from "../log.ts";
import { canonical } from "../objects.ts";
import { annotationErrors, labelErrors } from "./metavalidation.ts";
import { isObj } from "../objects.ts";
import { decodeEnvelope, HTTPError, type ReviewEnvelope } from "./review.ts";

const CONVERSION_API_VERSION = "apiextensions.k8s.io/v1";

export interface ConversionRequest {
  uid: string;
  /** "<group>/<version>" the objects are to be converted to. */
  desiredAPIVersion: string;
  /** The apiserver sends only objects at another version; any at this one are answered unchanged. */
  objects: KubeObject[];
}

/** metav1.Status as carried in ConversionResponse.result; the apiserver reads status and message. */
interface ConversionResult {
  status: "Success" | "Failure";
  code?: number;
  message?: string;
}

interface ConversionResponse {
  uid: string;
  /** One per request object, in the same order; empty on Failure. */
  convertedObjects: KubeObject[];
  result: ConversionResult;
}

export interface ConversionReview {
  apiVersion: typeof CONVERSION_API_VERSION;
  kind: "ConversionReview";
  request?: ConversionRequest;
  response?: ConversionResponse;
}

/**
 * Converts one object to `desiredAPIVersion` and returns the result; throws when it cannot. It is handed a
 * copy, which it may change and return. Only an object at another version than the desired one is passed.
 */
export type Converter = (obj: KubeObject, desiredAPIVersion: string) => object | Promise<object>;

/** What the webhook server serves ConversionReviews with on a path (conventionally "/convert"). */
export interface ConversionHandler {
  readonly type: "conversion";
  /**
   * The response to a request: Success with every object converted, or Failure naming the first object
   * that could not be. Never rejects.
   */
  review(request: ConversionRequest, logger?: Logger): Promise<ConversionResponse>;
}

/** A conversion webhook around `convert`; register it on the webhook server's handlers by path. */
export function conversionHandler(convert: Converter): ConversionHandler {
  const restoredLogged = new Set<string>();
  return {
    type: "conversion",
    review: (request, logger = defaultLog.withName("controller-runtime").withName("webhook")) =>
      convertAll(request, convert, logger, restoredLogged),
  };
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** "CronJob default/my-job" (or "objects[2]" for an object without a name). */
function describe(obj: KubeObject, index: number): string {
  const key = objectKey(obj);
  const kind = typeof obj.kind === "string" && obj.kind ? obj.kind : "object";
  return key ? `${kind} ${key}` : `${kind} objects[${index}]`;
}

function failure(uid: string, message: string, code?: number): ConversionResponse {
  return { uid, convertedObjects: [], result: { status: "Failure", ...(code !== undefined ? { code } : {}), message } };
}

async function convertAll(
  request: ConversionRequest,
  convert: Converter,
  log: Logger,
  restoredLogged: Set<string>,
): Promise<ConversionResponse> {
  const { uid, desiredAPIVersion: desired } = request;
  const convertedObjects: KubeObject[] = [];
  for (const [i, original] of request.objects.entries()) {
    if (original.apiVersion === desired) {
      convertedObjects.push(original);
      continue;
    }
    const what = describe(original, i);
    let out: unknown;
    try {
      // A copy, so what the converter changes in place is not what the checks compare against.
      out = await convert(structuredClone(original), desired);
    } catch (err) {
      log.error("Conversion failed", err, { object: what, desiredAPIVersion: desired });
      return failure(uid, `cannot convert ${what} to ${desired}: ${messageOf(err)}`);
    }
    const checked = checkConverted(original, out, desired);
    if (typeof checked === "string") {
      log.error("The converter returned an invalid object", undefined, {
        object: what,
        desiredAPIVersion: desired,
        reason: checked,
      });
      return failure(uid, `the converter returned an invalid ${what} for ${desired}: ${checked}`);
    }
    const unlogged = checked.restored.filter((f) => !restoredLogged.has(f));
    if (unlogged.length > 0) {
      for (const f of unlogged) restoredLogged.add(f);
      log.info(
        "The converter changed metadata other than labels and annotations; kept the original, as the apiserver does",
        {
          object: what,
          fields: unlogged,
        },
      );
    }
    convertedObjects.push(checked.object);
  }
  return { uid, convertedObjects, result: { status: "Success" } };
}

function typeName(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "an array" : typeof v;
}

/** A labels or annotations map, as the converter left it: undefined when it has none. */
function stringMap(v: unknown, field: string): Record<string, string> | undefined | string {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) return `${field} must be a map of strings, not ${typeName(v)}`;
  for (const [k, val] of Object.entries(v)) {
    if (typeof val !== "string") return `${field}[${JSON.stringify(k)}] must be a string, not ${typeName(val)}`;
  }
  return v as Record<string, string>;
}

function sameMap(a: Readonly<Record<string, unknown>> | undefined, b: Readonly<Record<string, string>> | undefined) {
  const x = Object.entries(a ?? {});
  return x.length === Object.keys(b ?? {}).length && x.every(([k, v]) => b?.[k] === v);
}

/**
 * The converted object as the apiserver would take it (the original's metadata with the converter's labels
 * and annotations) and the metadata fields that were undone; or what is wrong with it, as a rule.
 */
function checkConverted(
  original: KubeObject,
  returned: unknown,
  desired: string,
): { object: KubeObject; restored: string[] } | string {
  if (!isObj(returned)) return `the converter returned ${typeName(returned)}, not an object`;
  // Checked as it goes on the wire (no undefined fields), and what cannot go there is the converter's error.
  let out: Record<string, unknown>;
  try {
    out = JSON.parse(JSON.stringify(returned)) as Record<string, unknown>;
  } catch (err) {
    return `the converted object cannot be written as JSON: ${messageOf(err)}`;
  }
  if (out.apiVersion !== desired) {
    return `apiVersion must be the desired ${JSON.stringify(desired)}, not ${JSON.stringify(out.apiVersion ?? null)}`;
  }
  if (out.kind !== original.kind) {
    return `kind must stay ${JSON.stringify(original.kind ?? "")}, not ${JSON.stringify(out.kind ?? null)}`;
  }
  const meta = out.metadata;
  if (meta === undefined || meta === null) return "metadata is missing";
  if (!isObj(meta)) return `metadata must be an object, not ${typeName(meta)}`;
  const before = original.metadata ?? {};
  for (const f of ["name", "namespace", "uid"] as const) {
    // Go's accessors read a missing field as "".
    const want = before[f] ?? "";
    if ((meta[f] ?? "") !== want) {
      return `metadata.${f} must stay ${JSON.stringify(want)}, not ${JSON.stringify(meta[f] ?? "")}`;
    }
  }

  const restoredMeta: Record<string, unknown> = structuredClone(before);
  delete restoredMeta.labels;
  delete restoredMeta.annotations;
  const validate: Record<"labels" | "annotations", (m: Record<string, string>, f: string) => FieldError[]> = {
    labels: labelErrors,
    annotations: annotationErrors,
  };
  for (const f of ["labels", "annotations"] as const) {
    const m = stringMap(meta[f], `metadata.${f}`);
    if (typeof m === "string") return m;
    if (m === undefined) continue;
    // As restoreObjectMeta: only changed maps are validated, so a label the object already had stays valid.
    if (!sameMap(before[f], m)) {
      const errs = validate[f](m, `metadata.${f}`);
      if (errs.length > 0) return errs.map(fieldErrorString).join("; ");
    }
    restoredMeta[f] = m;
  }

  const restored = [...new Set([...Object.keys(before), ...Object.keys(meta)])]
    .filter((k) => k !== "labels" && k !== "annotations" && canonical(before[k]) !== canonical(meta[k]))
    .sort()
    .map((k) => `metadata.${k}`);
  return { object: { ...out, metadata: restoredMeta }, restored };
}

const CONVERSION_ENVELOPE: ReviewEnvelope = {
  kind: "ConversionReview",
  apiVersion: CONVERSION_API_VERSION,
  versionHint: `set conversionReviewVersions: ["v1"] in the CustomResourceDefinition's spec.conversion.webhook`,
};

/** The request of a ConversionReview body; throws HTTPError(400) naming what is wrong with it. */
export function decodeConversionReview(body: Buffer): ConversionRequest {
  const req = decodeEnvelope(body, CONVERSION_ENVELOPE);
  const desired = req.desiredAPIVersion;
  if (typeof desired !== "string" || desired === "") {
    throw new HTTPError(400, "the ConversionReview request has no desiredAPIVersion");
  }
  // Go decodes a missing list as an empty one.
  const objects = req.objects ?? [];
  if (!Array.isArray(objects)) throw new HTTPError(400, "the ConversionReview request's objects is not a list");
  for (const [i, o] of objects.entries()) {
    if (!isObj(o)) throw new HTTPError(400, `the ConversionReview request's objects[${i}] is not a JSON object`);
    // The apiserver sends whole objects; a converter and the metadata checks may rely on a metadata map.
    if (o.metadata !== undefined && !isObj(o.metadata)) {
      throw new HTTPError(400, `the ConversionReview request's objects[${i}].metadata is not a JSON object`);
    }
  }
  return { uid: req.uid, desiredAPIVersion: desired, objects: objects as KubeObject[] };
}

/** The answer to a request that never reached the converter (there is no request uid to echo). */
export function conversionFailureResponse(code: number, message: string): ConversionResponse {
  return failure("", message, code);
}

export function encodeConversionReview(response: ConversionResponse): string {
  const review: ConversionReview = { apiVersion: CONVERSION_API_VERSION, kind: "ConversionReview", response };
  return JSON.stringify(review);
}
