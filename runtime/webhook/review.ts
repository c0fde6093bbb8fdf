// AdmissionReview in and out (the decoding half of controller-runtime's admission http.go): only the
// envelope is checked here, since the handler owns the meaning of the request, and only a well-formed
// answer leaves. The envelope checks are shared with the ConversionReview (conversion.ts).
import {
  ADMISSION_API_VERSION,
  type AdmissionRequest,
  type AdmissionResponse,
  type AdmissionResult,
  type AdmissionReview,
} from "./admission.ts";
import { isObj } from "../objects.ts";

/** A request the server answers itself, with this HTTP status and a review (of the kind asked for) saying why. */
export class HTTPError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function isJSONContentType(value: string | undefined): boolean {
  return (value ?? "").split(";")[0]?.trim().toLowerCase() === "application/json";
}

/** What a review body must be: its kind and apiVersion, and where to set the version the apiserver sends. */
export interface ReviewEnvelope {
  kind: string;
  apiVersion: string;
  /** How to make the apiserver send `apiVersion`, appended to the refusal of another one. */
  versionHint: string;
}

/**
 * The request of a review body, with a non-empty uid (the one field the server itself needs, to answer);
 * throws HTTPError(400) naming what is wrong with it. The rest of the request is the handler's to
 * interpret, and handlers read it as untrusted input.
 */
export function decodeEnvelope(body: Buffer, e: ReviewEnvelope): Record<string, unknown> & { uid: string } {
  if (body.length === 0) throw new HTTPError(400, "request body is empty");
  let v: unknown;
  try {
    v = JSON.parse(body.toString("utf8"));
  } catch (err) {
    throw new HTTPError(400, `cannot decode the ${e.kind}: ${messageOf(err)}`);
  }
  if (!isObj(v)) throw new HTTPError(400, "the request body is not a JSON object");
  if (v.kind !== e.kind) {
    throw new HTTPError(400, `expected kind ${JSON.stringify(e.kind)}, got ${JSON.stringify(v.kind ?? null)}`);
  }
  if (v.apiVersion !== e.apiVersion) {
    throw new HTTPError(
      400,
      `unsupported ${e.kind} apiVersion ${JSON.stringify(v.apiVersion ?? null)}: this server accepts ` +
        `${e.apiVersion} only (${e.versionHint})`,
    );
  }
  const req = v.request;
  if (!isObj(req)) throw new HTTPError(400, `the ${e.kind} has no request`);
  if (!hasUid(req)) throw new HTTPError(400, `the ${e.kind} request has no uid`);
  return req;
}

const ADMISSION_ENVELOPE: ReviewEnvelope = {
  kind: "AdmissionReview",
  apiVersion: ADMISSION_API_VERSION,
  versionHint: 'set admissionReviewVersions: ["v1"] in the webhook configuration',
};

/** The request of an AdmissionReview body; throws HTTPError(400) naming what is wrong with it. */
export function decodeReview(body: Buffer): AdmissionRequest {
  // Only the uid is checked: the handler owns the meaning of the rest.
  return decodeEnvelope(body, ADMISSION_ENVELOPE) as Record<string, unknown> & AdmissionRequest;
}

function hasUid(req: Record<string, unknown>): req is Record<string, unknown> & { uid: string } {
  return typeof req.uid === "string" && req.uid !== "";
}

/** A decision: the one field every answer has (the optional ones are checked by checkResult). */
function hasDecision(result: Record<string, unknown>): result is Record<string, unknown> & AdmissionResult {
  return typeof result.allowed === "boolean";
}

/** A handler may return anything at runtime; this throws unless it is a well-formed decision. */
export function checkResult(result: unknown): AdmissionResult {
  if (!isObj(result) || !hasDecision(result)) {
    throw new Error(`the webhook handler returned no decision (want an object with a boolean "allowed")`);
  }
  if (
    result.warnings !== undefined &&
    !(Array.isArray(result.warnings) && result.warnings.every((w) => typeof w === "string"))
  ) {
    throw new Error("the webhook handler returned warnings that are not a list of strings");
  }
  if (result.patch !== undefined && typeof result.patch !== "string") {
    throw new Error("the webhook handler returned a patch that is not a base64 string");
  }
  return result;
}

/** The response to `request`: its uid, a patch type when there is a patch, no empty warning list. */
export function responseFor(request: AdmissionRequest, result: AdmissionResult): AdmissionResponse {
  const response: AdmissionResponse = { ...result, uid: request.uid };
  if (response.patch !== undefined) response.patchType ??= "JSONPatch";
  if (response.warnings?.length === 0) delete response.warnings;
  return response;
}

/** The answer to a request that never reached a handler (there is no request uid to echo). */
export function failureResponse(code: number, message: string): AdmissionResponse {
  return { uid: "", allowed: false, status: { status: "Failure", code, message } };
}

export function encodeReview(response: AdmissionResponse): string {
  const review: AdmissionReview = { apiVersion: ADMISSION_API_VERSION, kind: "AdmissionReview", response };
  return JSON.stringify(review);
}
