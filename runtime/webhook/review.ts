// AdmissionReview in and out (the decoding half of controller-runtime's admission http.go): only the
// envelope is checked here, since the handler owns the meaning of the request, and only a well-formed
// answer leaves.
import {
  ADMISSION_API_VERSION,
  type AdmissionRequest,
  type AdmissionResponse,
  type AdmissionResult,
  type AdmissionReview,
} from "./admission.ts";

/** A request the server answers itself, with this HTTP status and an AdmissionReview saying why. */
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

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function isJSONContentType(value: string | undefined): boolean {
  return (value ?? "").split(";")[0]?.trim().toLowerCase() === "application/json";
}

function checkEnvelope(v: unknown): Record<string, unknown> {
  if (!isObject(v)) throw new HTTPError(400, "the request body is not a JSON object");
  if (v.kind !== "AdmissionReview") {
    throw new HTTPError(400, `expected kind "AdmissionReview", got ${JSON.stringify(v.kind ?? null)}`);
  }
  if (v.apiVersion !== ADMISSION_API_VERSION) {
    throw new HTTPError(
      400,
      `unsupported AdmissionReview apiVersion ${JSON.stringify(v.apiVersion ?? null)}: this server accepts ` +
        `${ADMISSION_API_VERSION} only (set admissionReviewVersions: ["v1"] in the webhook configuration)`,
    );
  }
  return v;
}

/** The request of an AdmissionReview body; throws HTTPError(400) naming what is wrong with it. */
export function decodeReview(body: Buffer): AdmissionRequest {
  if (body.length === 0) throw new HTTPError(400, "request body is empty");
  let v: unknown;
  try {
    v = JSON.parse(body.toString("utf8"));
  } catch (err) {
    throw new HTTPError(400, `cannot decode the AdmissionReview: ${messageOf(err)}`);
  }
  const req = checkEnvelope(v).request;
  if (!isObject(req)) throw new HTTPError(400, "the AdmissionReview has no request");
  if (!hasUid(req)) throw new HTTPError(400, "the AdmissionReview request has no uid");
  return req;
}

/**
 * The one field the server itself needs (to answer); the rest of the request is the handler's to
 * interpret, and handlers read it as untrusted input.
 */
function hasUid(req: Record<string, unknown>): req is Record<string, unknown> & AdmissionRequest {
  return typeof req.uid === "string" && req.uid !== "";
}

/** A decision: the one field every answer has (the optional ones are checked by checkResult). */
function hasDecision(result: Record<string, unknown>): result is Record<string, unknown> & AdmissionResult {
  return typeof result.allowed === "boolean";
}

/** A handler may return anything at runtime; this throws unless it is a well-formed decision. */
export function checkResult(result: unknown): AdmissionResult {
  if (!isObject(result) || !hasDecision(result)) {
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
