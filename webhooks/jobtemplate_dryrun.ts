// The CronJob's Job template checked with the API server's own Job validation: a server-side dry-run
// create (dryRun=All, nothing is stored) of exactly the Job the controller would create (jobForSlot),
// its 422 causes mapped back to the CronJob's spec.jobTemplate paths. Re-implementing Job and Pod
// validation by hand would drift from the cluster's; the dry-run also runs the admission chain Jobs
// really go through.
import { jobForSlot, jobNameFor, type JobSource } from "../api/v1/index.ts";
import type { Client } from "../runtime/client.ts";
import { APIError, type StatusCause } from "../runtime/errors.ts";
import { collectionPath, Kinds } from "../runtime/kinds.ts";
import { droppedFields } from "../runtime/objects.ts";
import type { FieldError, FieldErrorType } from "../runtime/webhook/index.ts";

/**
 * The dry-run's deadline. The webhook configurations leave timeoutSeconds at the API server's default,
 * 10 s, and failurePolicy Fail: an answer after 10 s would fail every apply. 4 s leaves room for the
 * round trip between the API server and the webhook.
 */
export const DRY_RUN_TIMEOUT_MS = 4_000;

/**
 * The owner reference's uid while the CronJob has none (CREATE): the API server requires a non-empty
 * uid but never resolves it, and nothing is stored.
 */
export const PLACEHOLDER_UID = "00000000-0000-0000-0000-000000000000";

/** What the dry-run needs of the client (tests pass a fake). */
export type DryRunClient = Pick<Client, "request">;

export type DryRunOutcome = (
  | /** The API server accepted the Job (or only found that a Job with the slot's name exists). */
    { kind: "valid" }
    /** The API server refused the Job, or would drop fields of it: errors at the CronJob's paths. */
  | { kind: "invalid"; errors: FieldError[] }
  /** No verdict on the template: why, for the admission warning and the log. */
  | { kind: "unchecked"; reason: string }
) & {
  /** The API server's warnings about the Job, for the admission response. */
  warnings?: string[];
};

/**
 * Why a field the API server does not know is refused: the CRD's Job template follows a recent Kubernetes,
 * and a cluster running an older one would create every Job without the field, silently.
 */
export const UNKNOWN_JOB_FIELD = "this cluster's Job API has no such field: its Jobs would be created without it";

interface DryRunOptions {
  timeoutMs?: number;
  /** The slot whose Job is dry-run (default now); only its name and annotations depend on it. */
  slot?: Date;
}

/** Dry-runs the Job `cronJob` would create now, in `namespace` (the admission request's). */
export async function dryRunJobTemplate(
  client: DryRunClient,
  cronJob: JobSource,
  namespace: string,
  opts: DryRunOptions = {},
): Promise<DryRunOutcome> {
  const timeoutMs = opts.timeoutMs ?? DRY_RUN_TIMEOUT_MS;
  const slot = opts.slot ?? new Date();
  const jobName = jobNameFor(cronJob.metadata.name ?? "", slot);
  const what = `dry-run create of Job "${jobName}" in namespace "${namespace}"`;
  let timer: NodeJS.Timeout | undefined;
  const warnings: string[] = [];
  try {
    const job = jobForSlot(
      { ...cronJob, metadata: { ...cronJob.metadata, namespace, uid: cronJob.metadata.uid || PLACEHOLDER_UID } },
      slot,
    );
    // The client's timeout is per socket inactivity; this bounds the whole call (credentials, connect, a
    // server that trickles bytes).
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new DeadlineError(`no answer to the ${what} within ${timeoutMs} ms`)), timeoutMs);
    });
    // Strict: a server that validates fields (1.25+) refuses those its Job schema lacks (400); an older one
    // ignores the parameter, and the comparison below finds what it dropped.
    const stored = await Promise.race([
      client.request<{ spec?: unknown }>("POST", collectionPath(Kinds.Job, namespace), {
        query: { dryRun: "All", fieldValidation: "Strict" },
        body: job,
        timeoutMs,
        onWarning: (w) => warnings.push(`spec.jobTemplate: the API server warns about the Job: ${w}`),
      }),
      deadline,
    ]);
    // An answer without the Job (nothing to compare) says nothing about dropped fields.
    const dropped = stored?.spec === undefined ? [] : droppedFields(job.spec, stored.spec, "spec");
    if (dropped.length > 0) {
      return { kind: "invalid", errors: unknownFieldErrors(dropped, cronJob, jobName), ...withWarnings(warnings) };
    }
    return { kind: "valid", ...withWarnings(warnings) };
  } catch (err) {
    const outcome = refusal(err, what, cronJob, jobName);
    return { ...outcome, ...withWarnings(warnings) };
  } finally {
    clearTimeout(timer);
  }
}

function withWarnings(warnings: string[]): { warnings?: string[] } {
  return warnings.length > 0 ? { warnings } : {};
}

/** The fields a strict decoding error names (1.25+: `strict decoding error: unknown field "spec.x", …`). */
export function strictDecodingFields(message: string): string[] {
  if (!message.includes("strict decoding error")) return [];
  return [...message.matchAll(/unknown field "([^"]+)"/g)].map((m) => m[1] as string);
}

function unknownFieldErrors(fields: readonly string[], cronJob: JobSource, jobName: string): FieldError[] {
  const causes: StatusCause[] = fields.map((field) => ({
    field,
    reason: "FieldValueForbidden",
    message: `Forbidden: ${UNKNOWN_JOB_FIELD}`,
  }));
  return jobErrorsToCronJob(causes, {
    name: cronJob.metadata.name ?? "",
    jobName,
    templateHasLabels: Object.keys(cronJob.spec.jobTemplate.metadata?.labels ?? {}).length > 0,
  }).errors;
}

/** What a failed dry-run means for the template. */
function refusal(err: unknown, what: string, cronJob: JobSource, jobName: string): DryRunOutcome {
  if (err instanceof DeadlineError) return { kind: "unchecked", reason: err.message };
  if (!(err instanceof APIError)) return { kind: "unchecked", reason: `${what} failed: ${messageOf(err)}` };
  // Existence is checked after validation: the Job is valid, only its name is taken.
  if (err.reason === "AlreadyExists") return { kind: "valid" };
  if (err.code === 0) return { kind: "unchecked", reason: `${what} failed: ${err.message}` };
  const unknown = err.code === 400 ? strictDecodingFields(err.message) : [];
  if (unknown.length > 0) return { kind: "invalid", errors: unknownFieldErrors(unknown, cronJob, jobName) };
  if (err.code !== 422)
    return { kind: "unchecked", reason: `${what} failed: ${err.code} ${err.reason}: ${err.message}` };
  const mapped = jobErrorsToCronJob(err.causes, {
    name: cronJob.metadata.name ?? "",
    jobName,
    templateHasLabels: Object.keys(cronJob.spec.jobTemplate.metadata?.labels ?? {}).length > 0,
  });
  if (mapped.errors.length > 0) return { kind: "invalid", errors: mapped.errors };
  if (mapped.outside.length > 0) {
    return {
      kind: "unchecked",
      reason: `the API server refused the Job for fields the controller sets: ${mapped.outside.join(", ")}`,
    };
  }
  // 422 without causes (e.g. an admission plugin's refusal): the Job as a whole.
  return {
    kind: "invalid",
    errors: [{ field: "spec.jobTemplate", type: "FieldValueForbidden", detail: err.message }],
  };
}

class DeadlineError extends Error {}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

interface MappingContext {
  /** The CronJob's name. */
  name: string;
  /** The dry-run Job's name. */
  jobName: string;
  /**
   * Whether the template sets labels: without them the Job's labels default to the pod template's, and
   * an error at the Job's metadata.labels is one in spec.template.metadata.labels.
   */
  templateHasLabels: boolean;
}

/**
 * Maps the causes of the API server's 422 for the Job to the CronJob: `spec.X` → `spec.jobTemplate.spec.X`,
 * the Job's labels and annotations → the template's, the Job's name → the CronJob's metadata.name (it is
 * derived from it). Causes in what the controller alone sets (owner references, namespace) are no fault
 * of the CronJob: they come back in `outside`, as "<field>: <message>".
 */
export function jobErrorsToCronJob(
  causes: readonly StatusCause[],
  ctx: MappingContext,
): { errors: FieldError[]; outside: string[] } {
  const errors: FieldError[] = [];
  const outside: string[] = [];
  const seen = new Set<string>();
  const add = (e: FieldError) => {
    const key = JSON.stringify([e.field, e.type, e.value, e.detail]);
    if (seen.has(key)) return;
    seen.add(key);
    errors.push(e);
  };
  for (const cause of causes) {
    const field = cause.field ?? "";
    const message = cause.message ?? "";
    const body = parseErrorBody(cause.reason, message);
    if (field === "" || field === "<nil>") {
      add({ field: "spec.jobTemplate", ...body });
    } else if (field === "spec" || field.startsWith("spec.") || field.startsWith("spec[")) {
      add({ field: `spec.jobTemplate.${field}`, ...body });
    } else if (isUnder(field, "metadata.labels")) {
      const base = ctx.templateHasLabels
        ? "spec.jobTemplate.metadata.labels"
        : "spec.jobTemplate.spec.template.metadata.labels";
      add({ field: base + field.slice("metadata.labels".length), ...body });
    } else if (isUnder(field, "metadata.annotations")) {
      add({ field: `spec.jobTemplate.${field}`, ...body });
    } else if (field === "metadata.name") {
      add({
        field: "metadata.name",
        type: "FieldValueInvalid",
        value: ctx.name,
        detail: `the name of its Jobs ("${ctx.jobName}" now) is invalid: ${message}`,
      });
    } else {
      outside.push(`${field}: ${message}`);
    }
  }
  return { errors, outside };
}

function isUnder(field: string, prefix: string): boolean {
  return field === prefix || field.startsWith(`${prefix}.`) || field.startsWith(`${prefix}[`);
}

// field.ErrorType.String() for each type; "valued" types print the bad value after the type.
const ERROR_TYPES: ReadonlyArray<{ type: FieldErrorType; text: string; valued: boolean }> = [
  { type: "FieldValueNotFound", text: "Not found", valued: true },
  { type: "FieldValueRequired", text: "Required value", valued: false },
  { type: "FieldValueDuplicate", text: "Duplicate value", valued: true },
  { type: "FieldValueInvalid", text: "Invalid value", valued: true },
  { type: "FieldValueNotSupported", text: "Unsupported value", valued: true },
  { type: "FieldValueForbidden", text: "Forbidden", valued: false },
  { type: "FieldValueTooLong", text: "Too long", valued: false },
  { type: "FieldValueTooShort", text: "Too short", valued: false },
  { type: "FieldValueTooMany", text: "Too many", valued: true },
  { type: "FieldValueTooFew", text: "Too few", valued: true },
  { type: "InternalError", text: "Internal error", valued: false },
];

/**
 * A StatusCause message (field.Error.ErrorBody: `<type>[: <value>][: <detail>]`) back to its parts, so
 * the webhook re-renders it at the CronJob's path in its own apimachinery format. Go-quoted strings,
 * numbers, booleans and null come back as values; any other value (Go's %#v of a struct) is kept as its
 * text. A message in no known shape becomes the detail of a Forbidden error, so nothing is lost.
 */
export function parseErrorBody(reason: string | undefined, message: string): Omit<FieldError, "field"> {
  const byReason = ERROR_TYPES.find((t) => t.type === reason && hasPrefix(message, t.text));
  const et = byReason ?? ERROR_TYPES.find((t) => hasPrefix(message, t.text));
  if (!et) return { type: "FieldValueForbidden", detail: message };
  const rest = message.slice(et.text.length + 2); // after "<text>: " ("" when the message is the text)
  if (!et.valued) return { type: et.type, ...(rest ? { detail: rest } : {}) };
  let value: unknown;
  let after: string;
  if (rest.startsWith('"')) {
    const q = unquoteGo(rest);
    if (!q) return { type: et.type, value: rest };
    value = q.value;
    after = rest.slice(q.end);
  } else {
    const sep = rest.indexOf(": ");
    const token = sep < 0 ? rest : rest.slice(0, sep);
    after = sep < 0 ? "" : rest.slice(sep);
    value = scalar(token);
  }
  const detail = after.startsWith(": ") ? after.slice(2) : after;
  return { type: et.type, value, ...(detail ? { detail } : {}) };
}

function hasPrefix(message: string, text: string): boolean {
  return message === text || message.startsWith(`${text}: `);
}

function scalar(token: string): unknown {
  if (token === "null" || token === "<nil>") return null;
  if (token === "true") return true;
  if (token === "false") return false;
  if (/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(token)) {
    const n = Number(token);
    if (Number.isSafeInteger(n) || !/^-?\d+$/.test(token)) return n;
  }
  return token;
}

const SIMPLE_ESCAPES: Record<string, string> = {
  a: "\x07",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  '"': '"',
  "'": "'",
};

/** A Go double-quoted literal (strconv.Quote, %q) at the start of `s`: its value and where it ends. */
export function unquoteGo(s: string): { value: string; end: number } | undefined {
  if (!s.startsWith('"')) return undefined;
  let out = "";
  for (let i = 1; i < s.length;) {
    const c = s[i] as string;
    if (c === '"') return { value: out, end: i + 1 };
    if (c !== "\\") {
      const cp = s.codePointAt(i) as number;
      out += String.fromCodePoint(cp);
      i += cp > 0xffff ? 2 : 1;
      continue;
    }
    const e = s[i + 1];
    if (e === undefined) return undefined;
    const simple = SIMPLE_ESCAPES[e];
    if (simple !== undefined) {
      out += simple;
      i += 2;
      continue;
    }
    const width = e === "x" ? 2 : e === "u" ? 4 : e === "U" ? 8 : /[0-7]/.test(e) ? 3 : 0;
    const digits = e === "x" || e === "u" || e === "U" ? s.slice(i + 2, i + 2 + width) : s.slice(i + 1, i + 1 + width);
    const n = Number.parseInt(digits, /[0-7]/.test(e) ? 8 : 16);
    if (width === 0 || digits.length !== width || Number.isNaN(n) || n > 0x10ffff) return undefined;
    // \x and octal escapes are bytes; those above ASCII are pieces of invalid UTF-8.
    out += (e === "x" || /[0-7]/.test(e)) && n > 0x7f ? "\ufffd" : String.fromCodePoint(n);
    i += e === "x" || e === "u" || e === "U" ? 2 + width : 1 + width;
  }
  return undefined;
}
