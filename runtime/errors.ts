// Typed Kubernetes API errors, parsed from the apiserver's Status body (apimachinery's StatusReason).

type StatusReason =
  | "NotFound"
  | "AlreadyExists"
  | "Conflict"
  | "Invalid"
  | "Forbidden"
  | "Unauthorized"
  | "Gone"
  | "Expired"
  | "TooManyRequests"
  | "Timeout"
  | "ServerTimeout"
  | "BadRequest"
  | "MethodNotAllowed"
  | "InternalError"
  | "ServiceUnavailable"
  | "Unknown";

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** An error answered by the apiserver (or the transport) with a code and, usually, a metav1.Status. */
export class APIError extends Error {
  readonly code: number;
  readonly reason: StatusReason;
  readonly causes: StatusCause[];
  readonly details: Record<string, unknown> | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(
    code: number,
    reason: StatusReason,
    message: string,
    opts: { causes?: StatusCause[]; details?: Record<string, unknown>; retryAfterSeconds?: number } = {},
  ) {
    super(message);
    this.name = "APIError";
    this.code = code;
    this.reason = reason;
    this.causes = opts.causes ?? [];
    this.details = opts.details;
    this.retryAfterSeconds = opts.retryAfterSeconds;
  }

  /** Build from an HTTP status code and a response body (a metav1.Status, or anything else). */
  static fromResponse(code: number, body: unknown, context = ""): APIError {
    let status: Record<string, unknown> | undefined;
    if (typeof body === "string") {
      try {
        status = JSON.parse(body) as Record<string, unknown>;
      } catch {
        status = undefined;
      }
    } else if (body && typeof body === "object") {
      status = body as Record<string, unknown>;
    }
    const isStatus = status?.kind === "Status";
    const reason = (
      isStatus && typeof status?.reason === "string" ? status.reason : reasonForCode(code)
    ) as StatusReason;
    const details = isStatus ? (status?.details as Record<string, unknown> | undefined) : undefined;
    const message =
      isStatus && typeof status?.message === "string"
        ? status.message
        : `${context ? context + ": " : ""}HTTP ${code}${typeof body === "string" && body ? ": " + body.slice(0, 500) : ""}`;
    const opts: { causes?: StatusCause[]; details?: Record<string, unknown>; retryAfterSeconds?: number } = {
      causes: (details?.causes as StatusCause[] | undefined) ?? [],
    };
    if (details) opts.details = details;
    if (typeof details?.retryAfterSeconds === "number") opts.retryAfterSeconds = details.retryAfterSeconds;
    return new APIError(code, reason || reasonForCode(code), message, opts);
  }
}

function reasonForCode(code: number): StatusReason {
  switch (code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return "Unknown";
  }
}

function reasonOf(err: unknown): StatusReason | undefined {
  return err instanceof APIError ? err.reason : undefined;
}

export const isNotFound = (err: unknown): boolean => reasonOf(err) === "NotFound";
export const isAlreadyExists = (err: unknown): boolean => reasonOf(err) === "AlreadyExists";
/** 409 Conflict: an optimistic-concurrency failure (stale resourceVersion); re-read and retry. */
export const isConflict = (err: unknown): boolean => reasonOf(err) === "Conflict";
/** 410 Gone / Expired: a watch or list resourceVersion is too old. */
export const isGone = (err: unknown): boolean => reasonOf(err) === "Gone" || reasonOf(err) === "Expired";

/** apimachinery's HasStatusCause: the error carries a StatusCause of this type (e.g. NamespaceTerminating). */
export function hasStatusCause(err: unknown, type: string): boolean {
  return err instanceof APIError && err.causes.some((c) => c.reason === type);
}
