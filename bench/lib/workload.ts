// The workload: N CronJobs `* * * * *` spread over a few namespaces, each with the same small Job
// template, in our kind (batch.tutorial.kubebuilder.io/v1) or the built-in one (batch/v1beta1 on
// Kubernetes 1.20), plus the raw Jobs of the calibration phase.
import { API_VERSION, KIND } from "../../api/v1/groupversion_info.ts";
import { ConcurrencyGroupResource, GROUP_KIND } from "../../api/v1/concurrencygroup_types.ts";
import { smallJobSpec } from "../../envtest/small-job.ts";
import type { Client } from "../../runtime/client.ts";
import { isAlreadyExists } from "../../runtime/errors.ts";
import { Kinds, type KubeObject, type ResourceKind } from "../../runtime/kinds.ts";
import { forEachLimit } from "./pool.ts";

export const SCHEDULE = "* * * * *";
/** Keep one finished Job per CronJob: with a Job a minute, history cleanup deletes one every minute. */
export const HISTORY_LIMIT = 1;

export const BuiltinCronJobKind: ResourceKind = {
  group: "batch",
  version: "v1beta1",
  kind: "CronJob",
  plural: "cronjobs",
  namespaced: true,
};

export function namespaceName(i: number): string {
  return `bench-${i}`;
}

export function cronJobName(i: number): string {
  return `cj-${String(i).padStart(5, "0")}`;
}

/** Where CronJob i lives: round-robin over the namespaces. */
export function placement(i: number, namespaces: number): { namespace: string; name: string } {
  return { namespace: namespaceName(i % namespaces), name: cronJobName(i) };
}

function cronJobSpec(name: string, group?: string): Record<string, unknown> {
  return {
    schedule: SCHEDULE,
    ...(group ? { concurrencyGroup: group } : {}),
    concurrencyPolicy: "Allow",
    successfulJobsHistoryLimit: HISTORY_LIMIT,
    failedJobsHistoryLimit: HISTORY_LIMIT,
    jobTemplate: { metadata: { labels: { app: "bench", cronjob: name } }, spec: smallJobSpec() },
  };
}

export function ourCronJob(namespace: string, name: string, group?: string): KubeObject {
  return { apiVersion: API_VERSION, kind: KIND, metadata: { name, namespace }, spec: cronJobSpec(name, group) };
}

/** With --groups G: a fifth of the CronJobs (every fifth) are in G concurrency groups, spread over the namespaces. */
export function groupName(j: number): string {
  return `group-${String(j).padStart(3, "0")}`;
}

/**
 * The group CronJob i names (undefined: none): every fifth CronJob, in one of the groups of its namespace (group j
 * lives in namespace j mod K), round-robin over them.
 */
export function groupOf(i: number, namespaces: number, groups: number): string | undefined {
  if (groups <= 0 || i % 5 !== 0) return undefined;
  const ns = i % namespaces;
  const here = Math.floor((groups - 1 - ns) / namespaces) + 1;
  if (here <= 0) return undefined;
  const t = Math.floor(i / 5 / namespaces) % here;
  return groupName(ns + namespaces * t);
}

/**
 * The limit of the bench's groups: higher than any group's members, so it never holds a run. The bench measures what
 * a group costs the runs that pass through it (the decision, the index reads), not waits the limit makes by design.
 */
export const BENCH_GROUP_LIMIT = 10_000;

/** The G groups, each in its namespace. */
export async function createGroups(client: Client, namespaces: number, groups: number): Promise<void> {
  for (let j = 0; j < groups; j++) {
    await client
      .create(ConcurrencyGroupResource, {
        apiVersion: API_VERSION,
        kind: GROUP_KIND,
        metadata: { name: groupName(j), namespace: namespaceName(j % namespaces) },
        spec: { limit: BENCH_GROUP_LIMIT },
      } as KubeObject)
      .catch((err: unknown) => {
        if (!isAlreadyExists(err)) throw err;
      });
  }
}

export function builtinCronJob(namespace: string, name: string): KubeObject {
  return { apiVersion: "batch/v1beta1", kind: "CronJob", metadata: { name, namespace }, spec: cronJobSpec(name) };
}

export function rawJob(namespace: string, name: string): KubeObject {
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name, namespace, labels: { app: "bench" } },
    spec: smallJobSpec(),
  };
}

export async function createNamespaces(client: Client, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await client
      .create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespaceName(i) } })
      .catch((err: unknown) => {
        if (!isAlreadyExists(err)) throw err;
      });
  }
}

/** Create N objects with `inFlight` requests in flight; returns the wall time in seconds. */
export async function createMany(
  client: Client,
  kind: ResourceKind,
  n: number,
  inFlight: number,
  make: (i: number) => KubeObject,
): Promise<number> {
  const started = performance.now();
  await forEachLimit(n, inFlight, async (i) => {
    await client.create(kind, make(i));
  });
  return (performance.now() - started) / 1000;
}

/** An Event like the SuccessfulCreate ours writes for a run (runtime/events/recorder.ts's fields). */
export function benchEvent(namespace: string, cronJob: string, at: string, seq: number): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: `${cronJob}.18${seq.toString(16).padStart(14, "0")}`, namespace },
    involvedObject: {
      kind: KIND,
      namespace,
      name: cronJob,
      uid: "5d1b3c8e-7f7a-4d0e-9a53-0c3f3f1b2a10",
      apiVersion: API_VERSION,
      resourceVersion: "123456",
    },
    reason: "SuccessfulCreate",
    message: `Created job ${cronJob}-29391840`,
    type: "Normal",
    source: { component: "cronjob-controller", host: "cronjob-operator-controller-manager-7d9c6b5f4-x2k8p" },
    reportingComponent: "cronjob-controller",
    reportingInstance: "cronjob-operator-controller-manager-7d9c6b5f4-x2k8p",
    firstTimestamp: at,
    lastTimestamp: at,
    count: 1,
  } as KubeObject;
}
