export {
  allowed,
  denied,
  escapeJSONPointer,
  fieldErrorString,
  invalid,
  invalidField,
  patched,
  requestObjectName,
  requiredField,
  type AdmissionHandler,
  type AdmissionRequest,
  type AdmissionResult,
  type FieldError,
  type FieldErrorType,
  type JSONPatchOperation,
} from "./admission.ts";
export { conversionHandler, type ConversionHandler } from "./conversion.ts";
export { type WebhookHandler } from "./server.ts";
