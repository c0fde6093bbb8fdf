// What a Kubernetes 1.31+ apiserver refuses on a write of a batch/v1 Job's status, for the fake: the rules of
// pkg/apis/batch/validation ValidateJobStatusUpdate under the options pkg/registry/batch/job/strategy.go
// (getStatusValidationOptions) sets with the Job feature gates a current apiserver has on by default
// (JobSuccessPolicy: beta 1.31, GA 1.33; JobManagedBy: alpha 1.30, beta 1.32, GA 1.35). Most
// rules are checked only when a field they read changes, so a Job whose stored status already breaks one
// (written by an older apiserver) can still be updated in its other fields. The checks of an apiserver of any
// version (non-negative counters, indexed Jobs' completedIndexes and failedIndexes, metadata) are not here.
import { APIError, type StatusCause } from "../errors.ts";

interface JobCondition {
  type?: string;
  status?: string;
}

interface JobStatus {
  active?: number;
  succeeded?: number;
  failed?: number;
  startTime?: string;
  completionTime?: string;
  conditions?: JobCondition[];
  uncountedTerminatedPods?: { succeeded?: string[]; failed?: string[] };
}

interface JobLike {
  spec?: { suspend?: boolean; completionMode?: string; completions?: number; parallelism?: number };
  status?: JobStatus;
}

/** One side of the update (the stored Job, or the one written), as the rules read it. */
interface Side {
  status: JobStatus;
  complete: boolean;
  failed: boolean;
  failureTarget: boolean;
  successCriteriaMet: boolean;
  /** Complete=True or Failed=True (IsJobFinished). */
  finished: boolean;
}

/** Which of the fields the strategy watches differ between the stored Job and the written one. */
type Changed = Record<
  "complete" | "failed" | "failureTarget" | "finished" | "active" | "startTime" | "completionTime" | "uncounted",
  boolean
>;

interface Rule {
  /** Under `status.`. */
  field: string;
  detail: string;
  /**
   * field.Required ("Required value: <detail>"); otherwise field.Invalid, printing `value` as Go does
   * ("Invalid value: <value>: <detail>"), or no value where the apiserver omits it (field.OmitValueType).
   */
  required?: true;
  value?: (s: JobStatus) => string;
  /** Whether writing `next` over `old` breaks the rule. */
  refuses: (next: Side, old: Side, changed: Changed, spec: NonNullable<JobLike["spec"]>) => boolean;
}

const TERMINAL = { Failed: "failed", Complete: "complete", FailureTarget: "failureTarget" } as const;
const terminal = (type: keyof typeof TERMINAL): Rule => ({
  field: "conditions",
  detail: `cannot disable the terminal ${type}=True condition`,
  refuses: (n, o) => o[TERMINAL[type]] && !n[TERMINAL[type]],
});

/** In the apiserver's order (validateJobStatus, then ValidateJobStatusUpdate), which its message keeps. */
const RULES: readonly Rule[] = [
  {
    field: "conditions",
    detail: "cannot set Complete=True and Failed=true conditions",
    refuses: (n, _o, c) => (c.complete || c.failed) && n.complete && n.failed,
  },
  {
    field: "conditions",
    detail: "cannot set Complete=True and FailureTarget=true conditions",
    refuses: (n, _o, c) => (c.complete || c.failureTarget) && n.complete && n.failureTarget,
  },
  {
    field: "completionTime",
    detail: "cannot set completionTime when there is no Complete=True condition",
    value: (s) => goTime(s.completionTime),
    refuses: (n, _o, c) => (c.complete || c.completionTime) && !!n.status.completionTime && !n.complete,
  },
  {
    field: "completionTime",
    detail: "completionTime is required for Complete jobs",
    required: true,
    refuses: (n, _o, c) => (c.complete || c.completionTime) && !n.status.completionTime && n.complete,
  },
  {
    field: "completionTime",
    detail: "completionTime cannot be set before startTime",
    value: (s) => goTime(s.completionTime),
    refuses: (n, _o, c) =>
      (c.startTime || c.completionTime) && instant(n.status.completionTime) < instant(n.status.startTime),
  },
  {
    field: "conditions",
    detail: "cannot set Failed=True condition without the FailureTarget=true condition",
    refuses: (n, _o, c) => c.failed && n.failed && !n.failureTarget,
  },
  {
    field: "conditions",
    detail: "cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
    refuses: (n, _o, c) => c.complete && n.complete && !n.successCriteriaMet,
  },
  {
    field: "active",
    detail: "active>0 is invalid for finished job",
    value: (s) => String(s.active ?? 0),
    refuses: (n, _o, c) => (c.finished || c.active) && (n.status.active ?? 0) > 0 && n.finished,
  },
  {
    field: "startTime",
    detail: "startTime is required for finished job",
    required: true,
    refuses: (n, _o, c) => (c.finished || c.startTime) && !n.status.startTime && n.finished,
  },
  {
    field: "uncountedTerminatedPods",
    detail: "uncountedTerminatedPods needs to be empty for finished job",
    value: (s) => goUncounted(s.uncountedTerminatedPods),
    refuses: (n, _o, c) => (c.finished || c.uncounted) && n.finished && uncounted(n.status) > 0,
  },
  {
    field: "conditions",
    detail: "cannot set SuccessCriteriaMet=True and Failed=true conditions",
    refuses: (n) => n.successCriteriaMet && n.failed,
  },
  {
    field: "conditions",
    detail: "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions",
    refuses: (n) => n.successCriteriaMet && n.failureTarget,
  },
  terminal("Failed"),
  terminal("Complete"),
  terminal("FailureTarget"),
  {
    field: "failed",
    detail: "cannot decrease the failed counter",
    value: (s) => String(s.failed ?? 0),
    refuses: (n, o) => (n.status.failed ?? 0) < (o.status.failed ?? 0),
  },
  {
    field: "succeeded",
    detail: "cannot decrease the succeeded counter",
    value: (s) => String(s.succeeded ?? 0),
    // An Indexed Job with completions = parallelism may be scaled down: its counter may then go down.
    refuses: (n, o, _c, spec) =>
      (spec.completionMode !== "Indexed" || spec.completions !== (spec.parallelism ?? 1)) &&
      (n.status.succeeded ?? 0) < (o.status.succeeded ?? 0),
  },
  {
    field: "completionTime",
    detail: "completionTime cannot be mutated",
    value: (s) => goTime(s.completionTime),
    refuses: (n, o) =>
      !!n.status.completionTime &&
      !!o.status.completionTime &&
      !sameTime(n.status.completionTime, o.status.completionTime),
  },
  {
    field: "startTime",
    detail: "startTime cannot be removed for unsuspended job",
    required: true,
    refuses: (_n, o, c, spec) => c.startTime && !!o.status.startTime && spec.suspend !== true,
  },
  {
    field: "conditions",
    detail: "cannot disable the SuccessCriteriaMet=True condition",
    refuses: (n, o) => o.successCriteriaMet && !n.successCriteriaMet,
  },
  {
    field: "conditions",
    detail: "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions",
    refuses: (n, o) => o.complete && !o.successCriteriaMet && n.successCriteriaMet,
  },
];

/**
 * What the apiserver refuses in writing `next`'s status over `old`'s (two batch/v1 Jobs, as JSON): one
 * StatusCause per broken rule, as apierrors.NewInvalid lists them (reason, "status.<field>", the field.Error
 * body); none when it accepts.
 */
export function jobStatusErrors(old: object, next: object): StatusCause[] {
  const o = side(old as JobLike);
  const n = side(next as JobLike);
  const changed: Changed = {
    complete: o.complete !== n.complete,
    failed: o.failed !== n.failed,
    failureTarget: o.failureTarget !== n.failureTarget,
    finished: o.finished !== n.finished,
    active: (o.status.active ?? 0) !== (n.status.active ?? 0),
    startTime: !sameTime(o.status.startTime, n.status.startTime),
    completionTime: !sameTime(o.status.completionTime, n.status.completionTime),
    uncounted: uncountedKey(o.status) !== uncountedKey(n.status),
  };
  // The status subresource writes status only: the spec the rules read is the stored one.
  const spec = (next as JobLike).spec ?? {};
  return RULES.filter((r) => r.refuses(n, o, changed, spec)).map((r) => ({
    reason: r.required ? "FieldValueRequired" : "FieldValueInvalid",
    message: r.required
      ? `Required value: ${r.detail}`
      : `Invalid value: ${r.value ? `${r.value(n.status)}: ` : ""}${r.detail}`,
    field: `status.${r.field}`,
  }));
}

/** apierrors.NewInvalid for a Job: `Job.batch "<name>" is invalid: <errors>`, several in brackets, repeats dropped. */
export function invalidJob(name: string, causes: readonly StatusCause[]): APIError {
  const messages = [...new Set(causes.map((c) => `${c.field}: ${c.message}`))];
  const aggregate = messages.length === 1 ? messages[0] : `[${messages.join(", ")}]`;
  const details = { name, group: "batch", kind: "Job", causes: [...causes] };
  return new APIError(422, "Invalid", `Job.batch ${JSON.stringify(name)} is invalid: ${aggregate}`, {
    causes: [...causes],
    details,
  });
}

// --- helpers ---------------------------------------------------------------------------------------

function side(job: Readonly<JobLike>): Side {
  const status = job.status ?? {};
  const complete = isTrue(status, "Complete");
  const failed = isTrue(status, "Failed");
  return {
    status,
    complete,
    failed,
    failureTarget: isTrue(status, "FailureTarget"),
    successCriteriaMet: isTrue(status, "SuccessCriteriaMet"),
    finished: complete || failed,
  };
}

function isTrue(status: JobStatus, type: string): boolean {
  return (status.conditions ?? []).some((c) => c.type === type && c.status === "True");
}

/** A time's instant in ms (NaN when absent, so any comparison with it is false, as Go's nil checks). */
function instant(t: string | undefined): number {
  return t === undefined ? NaN : Date.parse(t);
}

/** Two metav1.Times equal (ptr.Equal): both absent, or the same instant. */
function sameTime(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const x = Date.parse(a);
  const y = Date.parse(b);
  return Number.isNaN(x) || Number.isNaN(y) ? a === b : x === y;
}

function uncounted(s: JobStatus): number {
  return (s.uncountedTerminatedPods?.succeeded?.length ?? 0) + (s.uncountedTerminatedPods?.failed?.length ?? 0);
}

/** Semantic.DeepEqual's view of uncountedTerminatedPods: absent differs from empty, nil slices equal empty ones. */
function uncountedKey(s: JobStatus): string {
  const u = s.uncountedTerminatedPods;
  return u === undefined ? "" : JSON.stringify([u.succeeded ?? [], u.failed ?? []]);
}

/** A metav1.Time as field.Error prints it: its time.Time String(), quoted (UTC, whole seconds on the wire). */
function goTime(t: string | undefined): string {
  const ms = instant(t);
  if (Number.isNaN(ms)) return "null";
  const iso = new Date(ms).toISOString();
  return JSON.stringify(`${iso.slice(0, 10)} ${iso.slice(11, 19)} +0000 UTC`);
}

/** batch.UncountedTerminatedPods as Go's %#v prints it. */
function goUncounted(u: JobStatus["uncountedTerminatedPods"]): string {
  if (!u) return "null";
  const uids = (l: string[] | undefined) =>
    l === undefined ? "[]types.UID(nil)" : `[]types.UID{${l.map((x) => JSON.stringify(x)).join(", ")}}`;
  return `batch.UncountedTerminatedPods{Succeeded:${uids(u.succeeded)}, Failed:${uids(u.failed)}}`;
}
