// A fleet staged for the dashboard's tests and pictures: the last day of five CronJobs as the operator would have
// left it (their records, status.recentRuns, and their Jobs with the Job controller's status), a concurrency group
// of limit 1 with a run waiting, an ExclusionCalendar over the next hours, a retry waiting for its delay, a Forbid
// stuck behind a Job running for hours, and a message that is HTML (names and messages are user input).
import {
  API_VERSION,
  ConcurrencyGroupResource,
  type CronJob,
  CronJobResource,
  CRONJOB_NAME_LABEL,
  CONCURRENCY_GROUP_LABEL,
  ExclusionCalendarResource,
  KIND,
} from "../api/v1/index.ts";
import type { Client } from "../runtime/client.ts";
import { Kinds } from "../runtime/kinds.ts";
import { batchJob, createJob } from "./fixtures.ts";

const HOUR = 3_600_000;
const iso = (t: number) => new Date(t).toISOString().replace(/\.\d{3}Z$/, "Z");

/** What a test looks for in the staged fleet. */
export interface StagedFleet {
  namespace: string;
  /** The names of its CronJobs. */
  names: string[];
  /** The slot "stuck" is held at (its newest). */
  stuckSlot: string;
  /** The HTML a record message holds: drawn as text, never run. */
  html: string;
}

const HTML = `<img src=x onerror="window.__dashboardXSS=1">`;

/**
 * A CronJob as the operator would have left it: created, then its record (status.recentRuns) and lastScheduleTime
 * written, as a staged fleet's rows are.
 */
export async function stagedCronJob(
  client: Client,
  o: { namespace: string; name: string; spec: Record<string, unknown>; recentRuns: unknown[]; lastRun: number },
): Promise<CronJob> {
  await client.create<CronJob>(CronJobResource, {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name: o.name, namespace: o.namespace },
    spec: {
      jobTemplate: {
        spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] } } },
      },
      ...o.spec,
    },
  } as unknown as CronJob);
  return client.patch<CronJob>(
    CronJobResource,
    o.namespace,
    o.name,
    { status: { recentRuns: o.recentRuns, lastScheduleTime: iso(o.lastRun) } },
    "merge",
    { subresource: "status" },
  );
}

export async function stageFleet(client: Client, namespace: string, now = Date.now()): Promise<StagedFleet> {
  const hour = Math.floor(now / HOUR) * HOUR;
  await client
    .create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } })
    .catch(() => undefined);
  await client.create(ConcurrencyGroupResource, {
    apiVersion: API_VERSION,
    kind: "ConcurrencyGroup",
    metadata: { name: "db", namespace },
    spec: { limit: 1 },
  });
  await client.create(ExclusionCalendarResource, {
    apiVersion: API_VERSION,
    kind: "ExclusionCalendar",
    metadata: { name: "freeze", namespace },
    spec: {
      windows: [
        { name: "release freeze", start: iso(hour + 3 * HOUR).slice(0, 19), end: iso(hour + 9 * HOUR).slice(0, 19) },
      ],
    },
  });

  const cronJob = (name: string, spec: Record<string, unknown>, recentRuns: unknown[]) =>
    stagedCronJob(client, { namespace, name, spec: { schedule: "0 * * * *", ...spec }, recentRuns, lastRun: hour });

  async function runs(
    c: CronJob,
    slots: { slot: number; took: number; failed?: boolean; running?: boolean }[],
    labels: Record<string, string> = {},
  ) {
    const name = c.metadata!.name!;
    for (const r of slots) {
      const start = r.slot + 5_000;
      await createJob(
        client,
        batchJob({
          name: `${name}-${Math.floor(r.slot / 60_000)}`,
          namespace,
          owner: { name, uid: c.metadata!.uid! },
          slot: r.slot,
          labels: { [CRONJOB_NAME_LABEL]: name, ...labels },
          ...(r.running
            ? { state: "active" as const, start }
            : r.failed
              ? {
                  state: "failed" as const,
                  start,
                  end: start + r.took,
                  failure: { reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit" },
                }
              : { state: "complete" as const, start, end: start + r.took }),
        }),
        namespace,
      );
    }
  }

  const created = (slot: number, job: string, late = 5_000) => ({
    trigger: "Schedule",
    scheduledTime: iso(slot),
    decision: "Created",
    reason: "Scheduled",
    decidedAt: iso(slot + late),
    job,
  });

  // backup: hourly, in group db; one failure in the night.
  // Within the last 22 hours: the page's first window (the last 24) holds them all, whatever the minute.
  const backupSlots = Array.from({ length: 11 }, (_, i) => hour - (11 - i) * 2 * HOUR);
  const backup = await cronJob(
    "backup",
    { schedule: "0 */2 * * *", concurrencyGroup: "db" },
    backupSlots.slice(-5).map((s) => created(s, `backup-${Math.floor(s / 60_000)}`)),
  );
  await runs(
    backup,
    backupSlots.map((slot, i) => ({ slot, took: 20 * 60_000, failed: i === 7 })),
    { [CONCURRENCY_GROUP_LABEL]: "db" },
  );

  // report: every 3 hours, in group db: its newest slot waits for the group's place.
  const reportSlots = Array.from({ length: 7 }, (_, i) => hour - (7 - i) * 3 * HOUR + 30 * 60_000);
  const waiting = hour - HOUR + 30 * 60_000;
  await cronJob("report", { schedule: "30 */3 * * *", concurrencyGroup: "db" }, [
    ...reportSlots
      .slice(-3)
      .map((s, i) => created(s, `report-${Math.floor(s / 60_000)}`, i === 2 ? 25 * 60_000 : 5_000)),
    {
      trigger: "Schedule",
      scheduledTime: iso(waiting),
      decision: "Held",
      reason: "ConcurrencyGroupFull",
      decidedAt: iso(waiting + 1_000),
      message: "group db is full: 1 of 1 places used",
    },
  ]).then((c) =>
    runs(
      c,
      reportSlots.map((slot) => ({ slot, took: 40 * 60_000 })),
      { [CONCURRENCY_GROUP_LABEL]: "db" },
    ),
  );
  // The group's place is taken now by a backup run.
  await runs(backup, [{ slot: hour, took: 0, running: true }], { [CONCURRENCY_GROUP_LABEL]: "db" });

  // sync: every 30 minutes, not during the release freeze (the calendar).
  const syncSlots = Array.from({ length: 12 }, (_, i) => hour - (12 - i) * 30 * 60_000);
  const sync = await cronJob(
    "sync",
    { schedule: "*/30 * * * *", exclusions: { calendars: ["freeze"] } },
    syncSlots.slice(-4).map((s) => created(s, `sync-${Math.floor(s / 60_000)}`)),
  );
  await runs(
    sync,
    syncSlots.map((slot) => ({ slot, took: 3 * 60_000 })),
  );

  // flaky: its last run failed, and its retry waits for its delay.
  const flakySlot = hour - 2 * HOUR;
  const flaky = await cronJob("flaky", { schedule: "0 */4 * * *", retry: { limit: 2, delaySeconds: 1800 } }, [
    created(flakySlot, `flaky-${Math.floor(flakySlot / 60_000)}`),
    {
      trigger: "Retry",
      scheduledTime: iso(flakySlot),
      decision: "Held",
      reason: "RetryDelay",
      decidedAt: iso(now - 60_000),
      startsAt: iso(now + 20 * 60_000),
      attempt: { number: 1, of: 2, after: `flaky-${Math.floor(flakySlot / 60_000)}`, failure: "BackoffLimitExceeded" },
      message: `attempt 1 of 2 after Job flaky-${Math.floor(flakySlot / 60_000)} failed; ${HTML}`,
    },
  ]);
  await runs(flaky, [{ slot: flakySlot, took: 10 * 60_000, failed: true }]);

  // stuck: Forbid, behind a Job that has run for five hours; every slot since is held.
  const stuckStart = hour - 5 * HOUR;
  const held = [1, 2, 3, 4, 5].map((k) => hour - (5 - k) * HOUR);
  const stuck = await cronJob("stuck", { concurrencyPolicy: "Forbid" }, [
    created(stuckStart, `stuck-${Math.floor(stuckStart / 60_000)}`),
    ...held.map((s) => ({
      trigger: "Schedule",
      scheduledTime: iso(s),
      decision: "Held",
      reason: "ConcurrencyPolicyForbid",
      decidedAt: iso(s + 1_000),
      blockedBy: `stuck-${Math.floor(stuckStart / 60_000)}`,
    })),
  ]);
  await runs(stuck, [{ slot: stuckStart, took: 0, running: true }]);

  // audit: names a calendar that does not exist: the operator holds its slots (why -A: a problem many share).
  await cronJob("audit", { schedule: "15 * * * *", exclusions: { calendars: ["gone"] } }, []);

  return {
    namespace,
    names: ["audit", "backup", "flaky", "report", "stuck", "sync"],
    stuckSlot: iso(held.at(-1)!),
    html: HTML,
  };
}
