// The fleet the dashboard's and the plugin's benchmarks read (bench/dashboard.ts, bench/plugin.ts): N CronJobs of ours
// over 5 namespaces with several schedules (hourly, every 15 minutes, every 6 hours, daily), every tenth in one of two
// ConcurrencyGroups of its namespace, every 50th suspended, and every third with the last day's record
// (status.recentRuns: a Created entry per run) and 1–3 Jobs with the Job controller's status (complete, failed, or
// the newest running), as test/dashboard-fleet.ts stages them. Two shapes:
//   fleet     no operator at all (envtest runs no controller)
//   incident  issue 79's: every 20th suspended (5 %), and the operator installed and stopped (bench/lib/stopped.ts),
//             which is when users reach for `kubectl cron why -A`
import {
  API_VERSION,
  CONCURRENCY_GROUP_LABEL,
  CRONJOB_NAME_LABEL,
  type CronJob,
  CronJobResource,
  KIND,
} from "../../api/v1/index.ts";
import { batchJob, createJob, type JobState } from "../../envtest/jobs.ts";
import { smallJobSpec } from "../../envtest/small-job.ts";
import type { Client } from "../../runtime/client.ts";
import type { KubeObject } from "../../runtime/kinds.ts";
import { forEachLimit } from "./pool.ts";
import { stopOperator } from "./stopped.ts";
import { createGroups, createNamespaces, groupName, placement } from "./workload.ts";

export const FLEET_SHAPES = ["fleet", "incident"] as const;
export type FleetShape = (typeof FLEET_SHAPES)[number];

export const NAMESPACES = 5;
export const GROUPS_PER_NAMESPACE = 2;
export const IN_FLIGHT = 32;
const HOUR = 3_600_000;
const MIN = 60_000;
/** How long before the benchmark the incident's operator stopped (its Lease's last renewal). */
const STOPPED_MS = 20 * MIN;

const iso = (t: number) => new Date(t).toISOString().replace(/\.\d{3}Z$/, "Z");

/** A fleet shape named on the command line (SHAPE), or an error that lists the shapes. */
export function fleetShape(name: string): FleetShape {
  if ((FLEET_SHAPES as readonly string[]).includes(name)) return name as FleetShape;
  throw new Error(`unknown SHAPE "${name}": one of ${FLEET_SHAPES.join(", ")}`);
}

/** What the fleet is, for a report. */
export function describeFleet(shape: FleetShape, n: number, jobs: number): string {
  return (
    `${n} CronJobs over ${NAMESPACES} namespaces, schedules in turn hourly, every 15 minutes, every 6 ` +
    `hours and daily; every tenth in one of ${GROUPS_PER_NAMESPACE} ConcurrencyGroups of its namespace; every ` +
    `${shape === "incident" ? "20th" : "50th"} suspended; every third with its last day's record (status.recentRuns) and ` +
    `1–3 Jobs with the Job controller's status (${jobs} Jobs: complete, a newest failed or running now and then)` +
    (shape === "incident"
      ? `; then the operator installed and stopped (issue 79's incident shape: dist/install.yaml applied, no Pod runs, ` +
        `its leader Lease last renewed ${STOPPED_MS / MIN} minutes before, its webhooks without an endpoint)`
      : `; no operator`)
  );
}

interface Schedule {
  schedule: string;
  period: number;
  /** The newest slot at or before t. */
  last(t: number): number;
}

const SCHEDULES: Schedule[] = [
  { schedule: "0 * * * *", period: HOUR, last: (t) => Math.floor(t / HOUR) * HOUR },
  { schedule: "*/15 * * * *", period: 15 * MIN, last: (t) => Math.floor(t / (15 * MIN)) * 15 * MIN },
  { schedule: "0 */6 * * *", period: 6 * HOUR, last: (t) => Math.floor(t / (6 * HOUR)) * 6 * HOUR },
  {
    schedule: "30 2 * * *",
    period: 24 * HOUR,
    last: (t) => {
      const d = Math.floor(t / (24 * HOUR)) * 24 * HOUR + 2.5 * HOUR;
      return d <= t ? d : d - 24 * HOUR;
    },
  },
];

/** CronJob i's group (every tenth), one of its namespace's GROUPS_PER_NAMESPACE (group j lives in namespace j mod K). */
function groupOfBench(i: number): string | undefined {
  if (i % 10 !== 3) return undefined;
  return groupName((i % NAMESPACES) + NAMESPACES * (Math.floor(i / 10) % GROUPS_PER_NAMESPACE));
}

function cronJobOf(i: number, shape: FleetShape): KubeObject {
  const { namespace, name } = placement(i, NAMESPACES);
  const group = groupOfBench(i);
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name, namespace },
    spec: {
      schedule: SCHEDULES[i % SCHEDULES.length]!.schedule,
      ...(group ? { concurrencyGroup: group } : {}),
      concurrencyPolicy: i % 2 === 0 ? "Forbid" : "Allow",
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 1,
      ...(i % (shape === "incident" ? 20 : 50) === 7 ? { suspend: true } : {}),
      jobTemplate: { metadata: { labels: { app: "bench-dashboard" } }, spec: smallJobSpec() },
    },
  };
}

/** Every third CronJob: its last 1–3 slots ran (a Job each, the newest perhaps running or failed), and it says so. */
async function history(client: Client, i: number, c: CronJob, now: number): Promise<number> {
  if (i % 3 !== 0) return 0;
  const { namespace, name } = placement(i, NAMESPACES);
  const shape = SCHEDULES[i % SCHEDULES.length]!;
  const runs = 1 + (Math.floor(i / 3) % 3);
  const group = groupOfBench(i);
  const slots = Array.from({ length: runs }, (_, k) => shape.last(now) - (runs - 1 - k) * shape.period);
  const jobName = (slot: number) => `${name}-${Math.floor(slot / MIN)}`;
  await client.patch<CronJob>(
    CronJobResource,
    namespace,
    name,
    {
      status: {
        lastScheduleTime: iso(slots.at(-1)!),
        recentRuns: slots.map((s) => ({
          trigger: "Schedule",
          scheduledTime: iso(s),
          decision: "Created",
          reason: "Scheduled",
          decidedAt: iso(s + 2_000),
          job: jobName(s),
        })),
      },
    },
    "merge",
    { subresource: "status" },
  );
  for (const [k, slot] of slots.entries()) {
    const newest = k === slots.length - 1;
    const start = slot + 3_000;
    const took = Math.min(shape.period / 3, 2 * MIN + (i % 7) * MIN);
    const state: JobState = newest && i % 21 === 0 ? "active" : newest && i % 7 === 0 ? "failed" : "complete";
    const end = Math.min(start + took, now - 1_000);
    await createJob(
      client,
      batchJob({
        name: jobName(slot),
        namespace,
        owner: { name, uid: c.metadata!.uid! },
        slot,
        labels: { [CRONJOB_NAME_LABEL]: name, ...(group ? { [CONCURRENCY_GROUP_LABEL]: group } : {}) },
        ...(state === "active"
          ? { state, start }
          : state === "failed"
            ? {
                state,
                start,
                end,
                failure: { reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit" },
              }
            : { state, start, end }),
      }),
    );
  }
  return runs;
}

/** The fleet of `shape`: N CronJobs and their history; the incident's operator installed and stopped last. */
export async function createFleet(
  client: Client,
  n: number,
  shape: FleetShape,
  kubeconfigPath: string,
): Promise<{ seconds: number; jobs: number }> {
  const started = performance.now();
  // The incident's history ends when its operator stopped: nothing was decided since.
  const now = Date.now() - (shape === "incident" ? STOPPED_MS : 0);
  await createNamespaces(client, NAMESPACES);
  await createGroups(client, NAMESPACES, NAMESPACES * GROUPS_PER_NAMESPACE);
  let jobs = 0;
  await forEachLimit(n, IN_FLIGHT, async (i) => {
    const c = await client.create<CronJob>(CronJobResource, cronJobOf(i, shape) as unknown as CronJob);
    const made = await history(client, i, c, now);
    jobs += made;
  });
  // Last: its webhooks, without an endpoint, refuse every CronJob write from then on.
  if (shape === "incident") await stopOperator(client, kubeconfigPath, STOPPED_MS);
  return { seconds: (performance.now() - started) / 1000, jobs };
}

/** A CronJob of the fleet that stays healthy until a run changes it: one per run (each run changes its own). */
export const changedIn = (k: number) => placement(6 + 40 * k, NAMESPACES);
