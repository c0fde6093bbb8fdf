// The CronJob admission webhooks (the kubebuilder tutorial's CustomDefaulter and CustomValidator).
// Validation uses the controller's own schedule parser, so the webhook and the controller can never
// disagree about what is valid; with a client, the Job template is also checked by the API server's own
// Job validation (a dry-run create of the Job the controller would create, jobtemplate_dryrun.ts).
import { isDeepStrictEqual } from "node:util";
import {
  API_VERSION,
  CRONJOB_NAME_LABEL,
  CRONJOB_SPEC_DEFAULTS,
  GROUP,
  JobSourceSchema,
  KIND,
  MAX_CRONJOB_NAME_LENGTH,
  MAX_RUN_NOW_REQUEST_LENGTH,
  parseCronJob,
  PLURAL,
  stampsOf,
  VERSION,
  DEFAULT_MAX_CATCH_UP_RUNS,
  RESUME_ANNOTATION,
  MORE_SCHEDULES_ANNOTATION,
  cronJobSchedules,
  type CronJobSchedules,
  scheduleListSchedules,
  parseWithSchema,
  shortestInterval,
  retryBackoffWords,
  worstCaseRetrySeconds,
  TRIGGER_ROWS,
  type TriggerRow,
} from "../api/v1/index.ts";
import type { AdmissionCheck } from "./admission_check.ts";
import { validateExclusions } from "./exclusion_checks.ts";
import { API_VERSION as V2_API_VERSION, convertCronJob, CronJobV2Schema, VERSION as V2 } from "../api/v2/index.ts";
import { log, type Logger } from "../runtime/log.ts";
import { isObj } from "../runtime/objects.ts";
import {
  type AdmissionHandler,
  type AdmissionRequest,
  type AdmissionResult,
  allowed,
  conversionHandler,
  type ConversionHandler,
  denied,
  escapeJSONPointer,
  type FieldError,
  invalid,
  requestObjectName,
  invalidField,
  type JSONPatchOperation,
  patched,
  requiredField,
} from "../runtime/webhook/index.ts";
import { DRY_RUN_TIMEOUT_MS, type DryRunClient, dryRunJobTemplate, type DryRunOutcome } from "./jobtemplate_dryrun.ts";

export const MUTATE_PATH = `/mutate-${GROUP.replaceAll(".", "-")}-${VERSION}-${KIND.toLowerCase()}`;
export const VALIDATE_PATH = `/validate-${GROUP.replaceAll(".", "-")}-${VERSION}-${KIND.toLowerCase()}`;

/** A starting deadline this short may never be met: the controller wakes about once per slot. */
const MIN_SAFE_STARTING_DEADLINE_SECONDS = 10;

/**
 * The defaulting webhook: fills the fields of CRONJOB_SPEC_DEFAULTS (concurrencyPolicy, suspend and the
 * history limits) where unset, in the table's order.
 */
export function defaultCronJob(obj: unknown): JSONPatchOperation[] {
  if (!isObj(obj) || !isObj(obj.spec)) return [];
  const spec = obj.spec;
  const ops: JSONPatchOperation[] = [];
  for (const [field, value] of Object.entries(CRONJOB_SPEC_DEFAULTS)) {
    // "" counts as unset for the policy, as in the Go defaulter (`if ConcurrencyPolicy == ""`); the CRD's
    // enum would otherwise reject an object kubebuilder's webhook accepts.
    const unset =
      spec[field] === undefined || spec[field] === null || (field === "concurrencyPolicy" && spec[field] === "");
    if (unset) ops.push({ op: "add", path: `/spec/${field}`, value });
  }
  // Only where the policy that uses it is chosen: a CronJob without it is left as it was.
  if (spec.missedRunPolicy === "RunAll" && (spec.maxCatchUpRuns === undefined || spec.maxCatchUpRuns === null)) {
    ops.push({ op: "add", path: "/spec/maxCatchUpRuns", value: DEFAULT_MAX_CATCH_UP_RUNS });
  }
  return ops;
}

interface ValidationResult {
  errors: FieldError[];
  warnings: string[];
}

/** What the admission request says besides the object: the namespace (the object may not carry it). */
interface ValidationContext {
  namespace?: string;
  /** The stored object's annotations (UPDATE): an unchanged request is not checked again (a trigger row's validate). */
  oldAnnotations?: Readonly<Record<string, unknown>>;
  /** The admission time: a backfill range must be in the past. */
  now?: Date;
  /** The checks of what the CronJob names of other objects, over the manager's cache (controllers/input.ts). */
  inputs?: readonly AdmissionCheck[];
}

/**
 * The validating webhook's checks; every message names the field and the value and says what is allowed.
 * A schedule with H is resolved with the CronJob's namespace/name (metadata.namespace, else the request's)
 * and validated as resolved, with a warning saying what it runs as.
 */
export function validateCronJob(obj: unknown, context: ValidationContext = {}): ValidationResult {
  const errors: FieldError[] = [];
  const warnings: string[] = [];
  if (!isObj(obj)) return { errors: [invalidField("<root>", obj, "must be a CronJob object")], warnings };
  const meta = isObj(obj.metadata) ? obj.metadata : {};
  const name = typeof meta.name === "string" ? meta.name : "";
  if (name.length > MAX_CRONJOB_NAME_LENGTH) {
    errors.push(invalidField("metadata.name", name, `must be no more than ${MAX_CRONJOB_NAME_LENGTH} characters`));
  }
  const annotations = isObj(meta.annotations) ? meta.annotations : {};
  const resume = annotations[RESUME_ANNOTATION];
  if (typeof resume === "string" && resume.trim().length > MAX_RUN_NOW_REQUEST_LENGTH) {
    errors.push(
      invalidField(
        `metadata.annotations[${RESUME_ANNOTATION}]`,
        resume,
        `must be no more than ${MAX_RUN_NOW_REQUEST_LENGTH} characters (any new value resumes a CronJob stopped after failures)`,
      ),
    );
  }
  const spec = isObj(obj.spec) ? obj.spec : undefined;
  if (!spec) return { errors: [...errors, requiredField("spec", "the CronJob needs a spec")], warnings };

  // The schedules: v2's spec.schedules, or v1's spec.schedule and spec.timeZone with the schedules a v2 writer
  // put after the first (api/v1/schedules.ts); each error at the field the request's own version has.
  const isV2 = obj.apiVersion === V2_API_VERSION;
  const namespace = (typeof meta.namespace === "string" ? meta.namespace : "") || (context.namespace ?? "");
  const key = { namespace, name };
  if (isV2 && annotations[MORE_SCHEDULES_ANNOTATION] !== undefined) {
    errors.push(
      invalidField(
        `metadata.annotations[${MORE_SCHEDULES_ANNOTATION}]`,
        annotations[MORE_SCHEDULES_ANNOTATION],
        "is where v1 keeps a v2 object's schedules after the first; in v2 they are spec.schedules: remove it",
      ),
    );
  }
  const parsed = isV2 ? scheduleListSchedules(spec.schedules, key, spec) : cronJobSchedules(obj, key);
  warnings.push(...parsed.warnings);
  if (!parsed.ok) errors.push(...parsed.errors);
  const schedules = parsed.ok ? parsed.schedules : undefined;

  const podSpec = dig(spec, ["jobTemplate", "spec", "template", "spec"]);
  const restartPolicy = isObj(podSpec) ? podSpec.restartPolicy : undefined;
  const rpField = "spec.jobTemplate.spec.template.spec.restartPolicy";
  if (restartPolicy === undefined) {
    errors.push(requiredField(rpField, 'must be "OnFailure" or "Never" (a Job cannot use "Always")'));
  } else if (restartPolicy !== "OnFailure" && restartPolicy !== "Never") {
    errors.push(invalidField(rpField, restartPolicy, 'must be "OnFailure" or "Never" (a Job cannot use "Always")'));
  }

  // Not an error: a template copied from elsewhere may carry it, and refusing would also block every update
  // of a CronJob stored before the label existed. The Jobs get the CronJob's name all the same (jobLabels).
  const templateLabels = dig(spec, ["jobTemplate", "metadata", "labels"]);
  const nameLabel = isObj(templateLabels) ? templateLabels[CRONJOB_NAME_LABEL] : undefined;
  if (nameLabel !== undefined && nameLabel !== name) {
    warnings.push(
      `spec.jobTemplate.metadata.labels[${CRONJOB_NAME_LABEL}]: ${JSON.stringify(nameLabel)} is ignored: the controller labels every Job with its CronJob's name (${JSON.stringify(name)})`,
    );
  }

  const sds = spec.startingDeadlineSeconds;
  // Only for a value the schema accepts (a non-negative integer): a rejected value gets its error alone.
  if (typeof sds === "number" && Number.isSafeInteger(sds) && sds >= 0 && sds < MIN_SAFE_STARTING_DEADLINE_SECONDS) {
    warnings.push(
      `spec.startingDeadlineSeconds: ${sds} is less than ${MIN_SAFE_STARTING_DEADLINE_SECONDS}: the controller may never start a Job, since it only starts runs that are at most this late and wakes about once per slot`,
    );
  }

  // Each trigger checks its own request (its annotation) and settings: its row (api/v1/triggers.ts).
  for (const row of TRIGGER_ROWS as readonly TriggerRow[]) {
    const checked = row.validate?.({
      name,
      annotations,
      spec,
      schedules,
      creationTimestamp: typeof meta.creationTimestamp === "string" ? meta.creationTimestamp : undefined,
      now: context.now ?? new Date(),
      oldAnnotations: context.oldAnnotations,
    });
    errors.push(...(checked?.errors ?? []));
    warnings.push(...(checked?.warnings ?? []));
  }
  const excluded = validateExclusions(spec.exclusions, schedules, context.now ?? new Date());
  errors.push(...excluded.errors);
  warnings.push(...excluded.warnings);
  // What it names of other objects (a calendar, an upstream), each input's check over the manager's cache.
  for (const check of context.inputs ?? []) {
    const checked = check({
      name,
      namespace,
      spec,
      schedules,
      now: context.now ?? new Date(),
      exclusionsValid: !excluded.errors.length,
    });
    errors.push(...(checked.errors ?? []));
    warnings.push(...(checked.warnings ?? []));
  }
  if (spec.maxCatchUpRuns !== undefined && spec.maxCatchUpRuns !== null && spec.missedRunPolicy !== "RunAll") {
    errors.push(
      invalidField(
        "spec.maxCatchUpRuns",
        spec.maxCatchUpRuns,
        `is only used with spec.missedRunPolicy "RunAll" (the policy is ${JSON.stringify(spec.missedRunPolicy ?? "RunLatest")}): remove it or set the policy`,
      ),
    );
  }
  if (spec.missedRunPolicy === "RunAll" && spec.concurrencyPolicy === "Replace") {
    warnings.push(
      'spec.missedRunPolicy: "RunAll" with concurrencyPolicy "Replace" runs only the newest missed time (each run would replace the one before); the older ones are reported missed',
    );
  }
  warnings.push(...runLengthWarnings(spec, schedules, meta.creationTimestamp, context.now));

  // Everything else the schema says (types, enums, minimums), with the same field paths.
  const schema = isV2
    ? parseWithSchema(CronJobV2Schema, { ...obj, kind: KIND })
    : parseCronJob({ ...obj, apiVersion: API_VERSION, kind: KIND });
  if (!schema.ok) {
    const seen = new Set(errors.map((e) => e.field));
    for (const e of schema.errors) {
      if (seen.has(e.field) || e.field.startsWith("metadata")) continue;
      errors.push(e);
      seen.add(e.field);
    }
  }
  return { errors, warnings };
}

/**
 * Warnings about a run that outlasts the time between two runs (issue 38, "why didn't it run?"): with
 * concurrencyPolicy Forbid a hung Job holds back every later run, and a Job retrying a failing Pod up to its
 * backoffLimit runs past the next scheduled time. Measured against the schedule's shortest interval between runs
 * from the creation time (the admission time on a create the API server has not stamped), so the same object
 * always gets the same warnings.
 */
function runLengthWarnings(
  spec: Record<string, unknown>,
  schedules: CronJobSchedules | undefined,
  creationTimestamp: unknown,
  now: Date | undefined,
): string[] {
  const warnings: string[] = [];
  const jobSpec = dig(spec, ["jobTemplate", "spec"]);
  const deadline = isObj(jobSpec) ? jobSpec.activeDeadlineSeconds : undefined;
  const backoffLimit = isObj(jobSpec) ? jobSpec.backoffLimit : undefined;
  const restartPolicy = isObj(jobSpec) ? dig(jobSpec, ["template", "spec", "restartPolicy"]) : undefined;
  const policy =
    typeof spec.concurrencyPolicy === "string" && spec.concurrencyPolicy ? spec.concurrencyPolicy : "Allow";
  const forbidWithoutDeadline = policy === "Forbid" && (deadline === undefined || deadline === null);
  // Only a value the schema accepts (a non-negative integer); the API server's own default (6) is not warned of.
  const retries = typeof backoffLimit === "number" && Number.isSafeInteger(backoffLimit) && backoffLimit > 0;
  if (!forbidWithoutDeadline && !retries) return warnings;

  let interval: number | undefined;
  if (schedules) {
    const created = typeof creationTimestamp === "string" ? new Date(creationTimestamp) : undefined;
    const from = created && Number.isFinite(created.getTime()) ? created : (now ?? new Date());
    interval = shortestInterval(schedules, from);
  }
  const intervalText = interval === undefined ? "" : ` (${durationText(interval)}, ${interval} s)`;

  if (forbidWithoutDeadline) {
    warnings.push(
      `spec.concurrencyPolicy: "Forbid" without spec.jobTemplate.spec.activeDeadlineSeconds: a Job that hangs holds back every later run until someone deletes it; set activeDeadlineSeconds below the schedule's shortest interval between runs${intervalText}`,
    );
  }
  if (retries && interval !== undefined) {
    const retrySeconds = worstCaseRetrySeconds(backoffLimit, restartPolicy);
    const bounded = typeof deadline === "number" && deadline <= interval;
    if (retrySeconds > interval && !bounded) {
      const next =
        policy === "Forbid"
          ? "the next runs are held back until it ends"
          : policy === "Replace"
            ? "the next run kills it"
            : "the next runs start beside it and pile up";
      warnings.push(
        `spec.jobTemplate.spec.backoffLimit: ${backoffLimit} retries of a failing Pod take at least ${durationText(retrySeconds)} (${retrySeconds} s: ${retryBackoffWords(restartPolicy)}, and the Pods' own run time comes on top), longer than the schedule's shortest interval between runs${intervalText}: a failing run retries past the next scheduled time, and with concurrencyPolicy ${JSON.stringify(policy)} ${next}; set spec.jobTemplate.spec.activeDeadlineSeconds to at most ${interval} or a smaller backoffLimit`,
      );
    }
  }
  return warnings;
}

/** Whole seconds as 1d, 23h, 1h30m, 45s: what a schedule's interval reads as. */
function durationText(seconds: number): string {
  const parts: string[] = [];
  let rest = Math.round(seconds);
  for (const [unit, size] of [
    ["d", 86_400],
    ["h", 3600],
    ["m", 60],
    ["s", 1],
  ] as const) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0) parts.push(`${n}${unit}`);
  }
  return parts.join("") || "0s";
}

function dig(o: unknown, path: string[]): unknown {
  let cur = o;
  for (const p of path) cur = isObj(cur) ? cur[p] : undefined;
  return cur;
}

export const mutateCronJob: AdmissionHandler = (req): AdmissionResult => {
  if (req.operation !== "CREATE" && req.operation !== "UPDATE") return allowed();
  return patched([...defaultCronJob(req.object), ...stampRequests(req)]);
};

/**
 * What each trigger's row adds to a request of it (api/v1/triggers.ts `stamp`: run-now records who asked, which only
 * the webhook can know: the user the API server authenticated).
 */
function stampRequests(req: AdmissionRequest): JSONPatchOperation[] {
  const annotationsOf = (o: unknown) =>
    isObj(o) && isObj(o.metadata) && isObj(o.metadata.annotations) ? o.metadata.annotations : undefined;
  const stamps = stampsOf({
    annotations: annotationsOf(req.object) ?? {},
    oldAnnotations: annotationsOf(req.oldObject),
    username: req.userInfo?.username || "system:anonymous",
  });
  return Object.entries(stamps).map(([key, value]) => ({
    op: "add",
    path: `/metadata/annotations/${escapeJSONPointer(key)}`,
    value,
  }));
}

export const validateCronJobRequest: AdmissionHandler = (req): AdmissionResult => validateRequest(req);

/** An UPDATE of a CronJob being deleted (its finalizers must be able to go, whatever it holds), as the fleet's. */
function updatesDeleted(req: AdmissionRequest): boolean {
  const meta = isObj(req.object) && isObj(req.object.metadata) ? req.object.metadata : {};
  return req.operation === "UPDATE" && meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null;
}

function validateRequest(req: AdmissionRequest, inputs: readonly AdmissionCheck[] = []): AdmissionResult {
  // Deletes are never blocked, nor an update of an object being deleted (a CronJob stored invalid, before a rule
  // existed, must still lose its finalizers); any other update of an already-invalid object is validated like a
  // create.
  if (req.operation !== "CREATE" && req.operation !== "UPDATE") return allowed();
  if (updatesDeleted(req)) return allowed();
  const old = isObj(req.oldObject) && isObj(req.oldObject.metadata) ? req.oldObject.metadata : {};
  const { errors, warnings } = validateCronJob(req.object, {
    namespace: req.namespace,
    ...(isObj(old.annotations) ? { oldAnnotations: old.annotations } : {}),
    inputs,
  });
  if (errors.length === 0) return allowed(warnings);
  return denied(invalid({ group: GROUP, kind: KIND }, requestObjectName(req), errors), warnings);
}

interface CronJobWebhookOptions {
  /**
   * The client for the dry-run create of the Job template (the manager's). Without one, validation is
   * the static checks alone.
   */
  client?: DryRunClient;
  /** The dry-run's deadline (default DRY_RUN_TIMEOUT_MS). */
  dryRunTimeoutMs?: number;
  /** The checks of what a CronJob names of other objects, over the manager's cache (controllers/input.ts). */
  inputs?: readonly AdmissionCheck[];
  logger?: Logger;
}

/**
 * The validating webhook with the dry-run: once the static checks pass, the Job the CronJob would create
 * is dry-run created in the request's namespace, and the API server's errors for it deny the request at
 * the CronJob's spec.jobTemplate paths. An UPDATE that leaves spec.jobTemplate as it was is not dry-run:
 * the answer depends on the cluster (admission policies, quota), and a metadata-only change (a label, a
 * finalizer the garbage collector removes) must not be refused for what it did not change. When the
 * dry-run cannot be made (timeout, connection error, 5xx, 403) the request is admitted with a warning:
 * the static checks passed, and an unreachable check must not block every apply.
 */
function validateCronJobWithDryRun(opts: CronJobWebhookOptions & { client: DryRunClient }): AdmissionHandler {
  const logger = opts.logger ?? log.withName("webhook").withName("cronjob");
  return async (req): Promise<AdmissionResult> => {
    const result = validateRequest(req, opts.inputs);
    if (!result.allowed || (req.operation !== "CREATE" && req.operation !== "UPDATE") || updatesDeleted(req))
      return result;
    if (req.operation === "UPDATE" && isDeepStrictEqual(jobTemplateOf(req.object), jobTemplateOf(req.oldObject))) {
      return result;
    }
    // The static checks passed: spec.jobTemplate has the schema's shape, so the Job can be built, from the
    // object as v1 (the hub) has it, since the controller builds it from that.
    const obj = isObj(req.object) ? convertCronJob(req.object, API_VERSION) : {};
    const source = JobSourceSchema.safeParse({ metadata: isObj(obj.metadata) ? obj.metadata : {}, spec: obj.spec });
    const namespace = req.namespace || (source.success ? source.data.metadata.namespace : undefined) || "";
    const outcome: DryRunOutcome = source.success
      ? await dryRunJobTemplate(opts.client, source.data, namespace, {
          timeoutMs: opts.dryRunTimeoutMs ?? DRY_RUN_TIMEOUT_MS,
        })
      : {
          kind: "unchecked",
          reason: `the Job could not be built: ${source.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
        };
    // The API server's own warnings about the Job (a deprecated field, a value it will not honour) reach
    // the user beside ours.
    const warnings = [...(result.warnings ?? []), ...(outcome.warnings ?? [])];
    switch (outcome.kind) {
      case "valid":
        return allowed(warnings);
      case "invalid":
        return denied(invalid({ group: GROUP, kind: KIND }, requestObjectName(req), outcome.errors), warnings);
      case "unchecked":
        logger.info("Job template not checked against the API server; admitting", {
          namespace,
          name: requestObjectName(req),
          operation: req.operation,
          reason: outcome.reason,
        });
        return allowed([
          ...warnings,
          `spec.jobTemplate: could not be checked against the API server (${outcome.reason}); if the API server refuses the Job, every run fails with FailedCreate`,
        ]);
    }
  };
}

function jobTemplateOf(obj: unknown): unknown {
  return isObj(obj) && isObj(obj.spec) ? obj.spec.jobTemplate : undefined;
}

/**
 * Path → handler, for the webhook server. With a client the validating webhook also dry-runs the Job
 * template (validateCronJobWithDryRun); without one it is validateCronJobRequest.
 */
export function cronJobWebhookHandlers(opts: CronJobWebhookOptions = {}): Map<string, AdmissionHandler> {
  const { client } = opts;
  return new Map([
    [MUTATE_PATH, mutateCronJob],
    [
      VALIDATE_PATH,
      client
        ? validateCronJobWithDryRun({ ...opts, client })
        : opts.inputs?.length
          ? (req: AdmissionRequest) => validateRequest(req, opts.inputs)
          : validateCronJobRequest,
    ],
  ]);
}

/** Where the API server sends ConversionReviews for the CRD (config/crd/patches/webhook_in_cronjobs.yaml). */
export const CONVERT_PATH = "/convert";

/**
 * The v1 ↔ v2 conversion webhook (api/v2/conversion.ts; v1 the hub). Lossless and total: it never fails
 * an object, since one it failed could then not be read in the other version.
 */
export const cronJobConversion: ConversionHandler = conversionHandler((obj, desiredAPIVersion) =>
  convertCronJob(obj as Record<string, unknown>, desiredAPIVersion),
);

/**
 * What `make manifests` renders into config/webhook/manifests.yaml (kubebuilder's webhook markers). One
 * webhook of each kind serves both versions: a request is sent in its own version (listed in the rules, so
 * the API server does not convert it), and each error names the field that version has.
 */
export const webhookMarkers = {
  mutating: { name: "mcronjob-v1.kb.io", path: MUTATE_PATH, operations: ["CREATE", "UPDATE"] },
  validating: { name: "vcronjob-v1.kb.io", path: VALIDATE_PATH, operations: ["CREATE", "UPDATE"] },
  group: GROUP,
  versions: [VERSION, V2],
  resource: PLURAL,
} as const;
