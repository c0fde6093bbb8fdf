// `kubectl cron history`: a CronJob's Jobs, oldest first, with the slot each ran for, its result and duration. A Job
// that is a later run of its slot (a retry's attempt: its row's runOfJob) says which run it is and the slot's first Job.
import {
  AFTER_ANNOTATION,
  AFTER_ROW,
  classifyJob,
  jitterOffsetOf,
  parseAfterRequest,
  rowOfJob,
  RUN_NOW_ROW,
  TRIGGER_ROWS,
  finishedAt,
  isManualJob,
  scheduledTimeOf,
  scheduleSourcesOf,
  scheduleSourceText,
  type Job,
} from "../../../api/v1/index.ts";
import { parseJoinRequest } from "../../../api/v1/join.ts";
import { iso } from "../model/time.ts";
import { SHAPING } from "./words/shaping.ts";

interface HistoryRow {
  name: string;
  /**
   * Its trigger's word (api/v1/triggers.ts): "scheduled", "manual" (a run-now request or `kubectl create job
   * --from`), "backfill" (kubectl cron backfill) or "retry" (spec.retry: a new Job for a slot whose run failed).
   */
  trigger: string;
  /**
   * A later run of its slot, in its row's words (a retry: "k/N", attempt k of the N spec.retry.limit allowed), and
   * the slot's first Job. The names are the retry's, the first trigger with later runs.
   */
  attempt?: string;
  retryOf?: string;
  /** A run after an upstream's run (spec.after): that run, its CronJob and Job (the Job's after annotation). */
  after?: { cronJob: string; job: string };
  /** A join's run (spec.afterPolicy All): every upstream run it joined, by upstream (the Job's after annotation). */
  afterAll?: { cronJob: string; job: string }[];
  /** A jittered slot's run (spec.jitter): how long after its slot it was due (the Job's annotation), in seconds. */
  jitterOffsetSeconds?: number;
  /** The slot it ran for (UTC, RFC 3339); undefined for manual runs. */
  scheduledTime?: string;
  result: "Running" | "Complete" | "Failed";
  startTime?: string;
  completionTime?: string;
  /** Seconds from start to finish, or to `now` while running. */
  durationSeconds?: number;
  /**
   * The schedules its slot came from (SCHEDULE_SOURCES_ANNOTATION, on the Jobs of a CronJob with several
   * schedules), as `0 9 * * 1-5 (Europe/Berlin)`, several joined by "; ".
   */
  schedules?: string;
}

export function historyRows(jobs: readonly Job[], ownerUID: string, now: Date): HistoryRow[] {
  const owned = jobs.filter((j) => (j.metadata?.ownerReferences ?? []).some((r) => r.controller && r.uid === ownerUID));
  const rows = owned.map((job) => ({ row: rowOf(job, now), order: runOfJob(job)?.order ?? 0 }));
  const key = (r: HistoryRow) => r.scheduledTime ?? r.startTime ?? "";
  // A slot's runs in their order (retry names are hashes): the first Job, then attempt 1, 2, …
  return rows
    .sort((a, b) => key(a.row).localeCompare(key(b.row)) || a.order - b.order || a.row.name.localeCompare(b.row.name))
    .map((r) => r.row);
}

function rowOf(job: Job, now: Date): HistoryRow {
  const cls = classifyJob(job);
  const result = cls === "successful" ? "Complete" : cls === "failed" ? "Failed" : "Running";
  const slot = scheduledTimeOf(job);
  const started = job.status?.startTime ?? job.metadata?.creationTimestamp;
  const finished = cls === "active" ? undefined : finishedAt(job);
  const end = finished ?? (cls === "active" ? now : undefined);
  const made = rowOfJob(TRIGGER_ROWS, job);
  const request = made === AFTER_ROW ? job.metadata?.annotations?.[AFTER_ANNOTATION] : undefined;
  const after = parseAfterRequest(request);
  const joined = parseJoinRequest(request)?.map((r) => ({ cronJob: r.upstream, job: r.job }));
  const run = runOfJob(job);
  const offset = jitterOffsetOf(job);
  const row: HistoryRow = {
    name: job.metadata?.name ?? "",
    // A run-now Job, or one made by `kubectl create job --from` (which no row made): "manual".
    trigger: isManualJob(job) ? RUN_NOW_ROW.word : made.word,
    ...(run ? { attempt: run.which, retryOf: run.first } : {}),
    ...(after ? { after } : {}),
    ...(joined ? { afterAll: joined } : {}),
    ...(offset !== undefined ? { jitterOffsetSeconds: offset } : {}),
    result,
  };
  if (slot && !isManualJob(job)) row.scheduledTime = iso(slot);
  if (started) row.startTime = started;
  if (finished) row.completionTime = iso(finished);
  const sources = scheduleSourcesOf(job);
  if (sources) row.schedules = sources.map(scheduleSourceText).join("; ");
  if (started && end) row.durationSeconds = Math.max(0, Math.round((end.getTime() - Date.parse(started)) / 1000));
  return row;
}

/**
 * How the history table and the dashboard say what made a run: a retry which attempt ("retry 1/3"), a run after an
 * upstream which run it followed, a join every run it joined.
 */
export function triggerWords(r: Readonly<HistoryRow>): string {
  if (r.after) return SHAPING.after(r.after.cronJob, r.after.job);
  if (r.afterAll) return SHAPING.afterAll(r.afterAll);
  return r.attempt ? `${r.trigger} ${r.attempt}` : r.trigger;
}

/** Which later run of its slot a Job is, by the row that made it (undefined: the slot's own, or a request's). */
const runOfJob = (job: Job) => rowOfJob(TRIGGER_ROWS, job).runOfJob?.(job);
