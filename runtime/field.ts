// Field errors (k8s.io/apimachinery/pkg/util/validation/field): where a value is wrong and why, in the words
// the API server uses. Generic: the API package validates with them, the admission webhooks answer with them.

export type FieldErrorType =
  | "FieldValueNotFound"
  | "FieldValueRequired"
  | "FieldValueDuplicate"
  | "FieldValueInvalid"
  | "FieldValueNotSupported"
  | "FieldValueForbidden"
  | "FieldValueTooLong"
  | "FieldValueTooShort"
  | "FieldValueTooMany"
  | "FieldValueTooFew"
  | "InternalError";

const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueNotFound: "Not found",
  FieldValueRequired: "Required value",
  FieldValueDuplicate: "Duplicate value",
  FieldValueInvalid: "Invalid value",
  FieldValueNotSupported: "Unsupported value",
  FieldValueForbidden: "Forbidden",
  FieldValueTooLong: "Too long",
  // Newer apimachinery's (declarative validation, Kubernetes 1.34+): an API server's errors may carry them.
  FieldValueTooShort: "Too short",
  FieldValueTooMany: "Too many",
  FieldValueTooFew: "Too few",
  InternalError: "Internal error",
};

// field.Error.ErrorBody prints no value for these types.
const VALUELESS = new Set<FieldErrorType>([
  "FieldValueRequired",
  "FieldValueForbidden",
  "FieldValueTooLong",
  "FieldValueTooShort",
  "InternalError",
]);

/** A field.Error: type defaults to FieldValueInvalid, the type validators use most. */
export interface FieldError {
  /** The path as field.Path.String() prints it, e.g. "spec.jobTemplate.spec.template" or "spec.ports[0]". */
  field: string;
  type?: FieldErrorType;
  /** The offending value (ignored by Required, Forbidden, TooLong and InternalError). */
  value?: unknown;
  detail?: string;
}

/** field.Required: "<field>: Required value[: <detail>]". */
export function requiredField(field: string, detail = ""): FieldError {
  return { field, type: "FieldValueRequired", detail };
}

/**
 * field.TooLong, in the apimachinery wording up to v0.30 (the Kubernetes 1.20–1.30 apiservers):
 * "<field>: Too long: must have at most <max> bytes". apimachinery v0.31 changed the detail to
 * "may not be more than <max> bytes"; the older text is kept so messages match the clusters this
 * project targets.
 */
export function tooLongField(field: string, value: unknown, maxLength: number): FieldError {
  return { field, type: "FieldValueTooLong", value, detail: `must have at most ${maxLength} bytes` };
}

/** field.Invalid: "<field>: Invalid value: <value>: <detail>". */
export function invalidField(field: string, value: unknown, detail: string): FieldError {
  return { field, type: "FieldValueInvalid", value, detail };
}

/**
 * Go's rendering of a bad value in field.Error.ErrorBody: %v for numbers and booleans, %q for strings
 * (JSON quoting here, identical for printable text), "null" for nil. Go prints other values with %#v,
 * which has no JavaScript counterpart; JSON is the readable stand-in.
 */
function formatValue(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** field.Error.ErrorBody: the message of a StatusCause, without the field. */
export function fieldErrorBody(e: FieldError): string {
  const type = e.type ?? "FieldValueInvalid";
  let s = TYPE_TEXT[type];
  if (!VALUELESS.has(type)) s += `: ${formatValue(e.value)}`;
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

/** field.Error.Error(): "<field>: <body>". */
export function fieldErrorString(e: FieldError): string {
  return `${e.field}: ${fieldErrorBody(e)}`;
}
