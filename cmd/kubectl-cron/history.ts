// `kubectl cron history`: a CronJob's Jobs, oldest first, with the slot each ran for, its result and duration. A
// retry's Job (spec.retry) says which attempt it is and which Job's failure it follows.
import {
  classifyJob,
  rowOfJob,
  RUN_NOW_ROW,
  TRIGGER_ROWS,
  finishedAt,
  isManualJob,
  scheduledTimeOf,
  scheduleSourcesOf,
  scheduleSourceText,
  type Job,
  retryAttemptOf,
} from "../../api/v1/index.ts";

interface HistoryRow {
  name: string;
  /**
   * Its trigger's word (api/v1/triggers.ts): "scheduled", "manual" (a run-now request or `kubectl create job
   * --from`), "backfill" (kubectl cron backfill) or "retry" (spec.retry: a new Job for a slot whose run failed).
   */
  trigger: string;
  /** A retry: its attempt, "k/N" (attempt k of the N spec.retry.limit allowed), and the slot's first Job. */
  attempt?: string;
  retryOf?: string;
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

/** RFC 3339 in UTC, whole seconds: how the plugin prints an instant. */
export const iso = (d: Date) => `${d.toISOString().slice(0, 19)}Z`;

export function historyRows(jobs: readonly Job[], ownerUID: string, now: Date): HistoryRow[] {
  const owned = jobs.filter((j) => (j.metadata?.ownerReferences ?? []).some((r) => r.controller && r.uid === ownerUID));
  const rows = owned.map((job) => rowOf(job, now));
  const key = (r: HistoryRow) => r.scheduledTime ?? r.startTime ?? "";
  // A slot's attempts in their order (retry names are hashes): the first Job, then attempt 1, 2, …
  const attempt = (r: HistoryRow) => Number(r.attempt?.split("/")[0] ?? 0);
  return rows.sort((a, b) => key(a).localeCompare(key(b)) || attempt(a) - attempt(b) || a.name.localeCompare(b.name));
}

function rowOf(job: Job, now: Date): HistoryRow {
  const cls = classifyJob(job);
  const result = cls === "successful" ? "Complete" : cls === "failed" ? "Failed" : "Running";
  const slot = scheduledTimeOf(job);
  const started = job.status?.startTime ?? job.metadata?.creationTimestamp;
  const finished = cls === "active" ? undefined : finishedAt(job);
  const end = finished ?? (cls === "active" ? now : undefined);
  const retry = retryAttemptOf(job);
  const row: HistoryRow = {
    name: job.metadata?.name ?? "",
    // A run-now Job, or one made by `kubectl create job --from` (which no row made): "manual".
    trigger: isManualJob(job) ? RUN_NOW_ROW.word : rowOfJob(TRIGGER_ROWS, job).word,
    ...(retry ? { attempt: `${retry.k}/${retry.n}`, retryOf: retry.of } : {}),
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

/** kubectl's duration style: 45s, 3m12s, 2h5m, 3d4h. */
export function humanDuration(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${seconds % 60 ? `${seconds % 60}s` : ""}`;
  if (seconds < 86400) {
    const m = Math.floor((seconds % 3600) / 60);
    return `${Math.floor(seconds / 3600)}h${m ? `${m}m` : ""}`;
  }
  const h = Math.floor((seconds % 86400) / 3600);
  return `${Math.floor(seconds / 86400)}d${h ? `${h}h` : ""}`;
}
