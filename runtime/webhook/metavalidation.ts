// The checks the apiserver applies to the labels and annotations a conversion webhook returns
// (apimachinery's metav1validation.ValidateLabels and apivalidation.ValidateAnnotations, which
// apiextensions-apiserver's restoreObjectMeta runs when a converter changed them), so a converter that
// sets a bad one is answered with a clear Failure rather than the apiserver's refusal.
import { type FieldError, invalidField, tooLongField } from "../field.ts";

const QUALIFIED_NAME_MAX_LENGTH = 63;
const LABEL_VALUE_MAX_LENGTH = 63;
const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
/** apimachinery's TotalAnnotationSizeLimitB: keys and values together. */
const TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * 1024;

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const NAME_CHARS =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** validation.IsQualifiedName: what is wrong with a label or annotation key (none when it is fine). */
function qualifiedNameErrors(value: string): string[] {
  const parts = value.split("/");
  let name: string;
  const errs: string[] = [];
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push("prefix part must be non-empty");
    else if (prefix.length > DNS1123_SUBDOMAIN_MAX_LENGTH) {
      errs.push(`prefix part must be no more than ${DNS1123_SUBDOMAIN_MAX_LENGTH} characters`);
    } else if (!DNS1123_SUBDOMAIN.test(prefix)) {
      errs.push(
        "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', " +
          "and must start and end with an alphanumeric character",
      );
    }
  } else {
    return [
      `a qualified name ${NAME_CHARS}, with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push("name part must be non-empty");
  else if (name.length > QUALIFIED_NAME_MAX_LENGTH) {
    errs.push(`name part must be no more than ${QUALIFIED_NAME_MAX_LENGTH} characters`);
  }
  if (name.length > 0 && !QUALIFIED_NAME.test(name)) errs.push(`name part ${NAME_CHARS}`);
  return errs;
}

/** metav1validation.ValidateLabels. */
export function labelErrors(labels: Readonly<Record<string, string>>, field: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(labels)) {
    for (const msg of qualifiedNameErrors(k)) errs.push(invalidField(field, k, msg));
    if (v.length > LABEL_VALUE_MAX_LENGTH) {
      errs.push(invalidField(field, v, `must be no more than ${LABEL_VALUE_MAX_LENGTH} characters`));
    }
    if (!LABEL_VALUE.test(v)) {
      errs.push(invalidField(field, v, `a valid label ${NAME_CHARS} (or be empty)`));
    }
  }
  return errs;
}

/** apivalidation.ValidateAnnotations: qualified keys (compared in lower case), 256 KiB in all. */
export function annotationErrors(annotations: Readonly<Record<string, string>>, field: string): FieldError[] {
  const errs: FieldError[] = [];
  let size = 0;
  for (const [k, v] of Object.entries(annotations)) {
    for (const msg of qualifiedNameErrors(k.toLowerCase())) errs.push(invalidField(field, k, msg));
    size += Buffer.byteLength(k) + Buffer.byteLength(v);
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT_B) errs.push(tooLongField(field, "", TOTAL_ANNOTATION_SIZE_LIMIT_B));
  return errs;
}
