// Backfill: the API of a request to run every slot of a CronJob's schedule in a past time range. Like run-now,
// a request is the value of one annotation on the CronJob (`kubectl cron backfill` writes it; nothing but
// `patch` on cronjobs is needed), so it is server-side: the operator works through it across restarts and
// leader changes, and its progress is in status.backfill. Each slot's Job is the slot's own Job (the same
// slot-derived name as a scheduled run), so a slot that already has its Job is skipped and none runs twice.
import { GROUP } from "./groupversion_info.ts";
import { MAX_RUN_NOW_REQUEST_LENGTH } from "./runnow.ts";
import { type Job, type JobSource, jobForSlot } from "./job.ts";
import { documentedKey } from "./metadata.ts";

/** Set it on a CronJob to request a backfill; remove it (or set another id) to cancel the running one. */
export const BACKFILL_ANNOTATION = documentedKey(`${GROUP}/backfill`, () => ({
  on: "CronJob",
  setBy: "the user (`kubectl cron backfill`)",
  format:
    'JSON: `{"id":"<string>","from":"<RFC 3339>","to":"<RFC 3339>","parallelism":<1-100>}`; ' +
    `\`id\` non-empty, at most ${MAX_RUN_NOW_REQUEST_LENGTH} characters; \`from\` not after \`to\`, in the past; ` +
    `\`parallelism\` optional (1); at most ${MAX_BACKFILL_SLOTS} slots of the schedule in the range`,
  meaning:
    "Requests one run of every slot of the schedule in `[from, to]` (a slot that already has its Job is skipped); " +
    "progress in `status.backfill`. Removing it, or a new `id`, cancels the running request.",
}));
/** On a backfill's Job: the id of the request it ran for. */
export const BACKFILL_REQUEST_ANNOTATION = documentedKey(`${GROUP}/backfill-request`, () => ({
  on: "Job (backfill)",
  setBy: "the controller",
  format: "the backfill request's `id`",
  meaning: "The backfill request the Job was created for (its name is the slot's, as a scheduled run's).",
}));
/** The most slots one request may run; a larger range is refused with the count it would have made. */
export const MAX_BACKFILL_SLOTS = 1000;
/** How many of a request's Jobs may run at a time, unless the request says. */
const DEFAULT_BACKFILL_PARALLELISM = 1;
const MAX_BACKFILL_PARALLELISM = 100;

interface BackfillRequest {
  /** The request's identity: a new id is a new request. */
  id: string;
  /** First instant of the range (inclusive). */
  from: Date;
  /** Last instant of the range (inclusive). */
  to: Date;
  /** At most this many of the request's Jobs run at a time. */
  parallelism: number;
  /** Also run the slots spec.exclusions holds (by default a backfill skips them, as the schedule did). */
  includeExcluded?: boolean;
}

/** A user value in a message: JSON, cut at 64 characters (the annotation may hold 256 KiB). */
function quoted(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 64 ? `${s.slice(0, 64)}… (${s.length - 64} more characters)` : s;
}

/** The annotation's value for a request. */
export function backfillAnnotationValue(r: BackfillRequest): string {
  return JSON.stringify({
    id: r.id,
    from: r.from.toISOString(),
    to: r.to.toISOString(),
    parallelism: r.parallelism,
    ...(r.includeExcluded ? { includeExcluded: true } : {}),
  });
}

type ParsedBackfill = { ok: true; request: BackfillRequest } | { ok: false; reason: string };

/**
 * The request on a CronJob: none (undefined), or parsed and checked: JSON {id, from, to, parallelism?}, RFC 3339
 * times, from not after to. Checks that need the schedule or the clock (the slot count, a range in the future)
 * are the caller's.
 */
export function backfillRequestOf(obj: {
  metadata?: { annotations?: Record<string, string> };
}): ParsedBackfill | undefined {
  const raw = obj.metadata?.annotations?.[BACKFILL_ANNOTATION]?.trim();
  if (!raw) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return {
      ok: false,
      reason: 'must be JSON: {"id": "...", "from": "<RFC 3339>", "to": "<RFC 3339>", "parallelism": 1}',
    };
  }
  if (!v || typeof v !== "object" || Array.isArray(v)) return { ok: false, reason: "must be a JSON object" };
  const o = v as Record<string, unknown>;
  if (typeof o.id !== "string" || !o.id.trim() || o.id.length > MAX_RUN_NOW_REQUEST_LENGTH)
    return { ok: false, reason: `id must be a non-empty string of at most ${MAX_RUN_NOW_REQUEST_LENGTH} characters` };
  const time = (k: "from" | "to"): Date | string => {
    const t = o[k];
    if (typeof t !== "string" || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(t))
      return `${k} must be an RFC 3339 time such as 2026-11-20T00:00:00Z, not ${quoted(t ?? null)}`;
    const d = new Date(t);
    return Number.isNaN(d.getTime()) ? `${k} is not a valid time: ${quoted(t)}` : d;
  };
  const from = time("from");
  if (typeof from === "string") return { ok: false, reason: from };
  const to = time("to");
  if (typeof to === "string") return { ok: false, reason: to };
  if (from.getTime() > to.getTime()) return { ok: false, reason: `from (${o.from}) is after to (${o.to})` };
  const p = o.parallelism ?? DEFAULT_BACKFILL_PARALLELISM;
  if (typeof p !== "number" || !Number.isInteger(p) || p < 1 || p > MAX_BACKFILL_PARALLELISM)
    return {
      ok: false,
      reason: `parallelism must be an integer from 1 to ${MAX_BACKFILL_PARALLELISM}, not ${quoted(p)}`,
    };
  const inc = o.includeExcluded;
  if (inc !== undefined && typeof inc !== "boolean")
    return { ok: false, reason: `includeExcluded must be true or false, not ${quoted(inc)}` };
  return { ok: true, request: { id: o.id, from, to, parallelism: p, ...(inc ? { includeExcluded: true } : {}) } };
}

/** The Job for a slot of a backfill: the slot's own Job (its name is the slot's), marked with the request. */
export function jobForBackfill(cronJob: JobSource, slot: Date, requestId: string): Job {
  const job = jobForSlot(cronJob, slot);
  job.metadata = {
    ...job.metadata,
    annotations: { ...job.metadata?.annotations, [BACKFILL_REQUEST_ANNOTATION]: requestId },
  };
  return job;
}
