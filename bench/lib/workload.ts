// The workload: N CronJobs `* * * * *` spread over a few namespaces, each with the same small Job
// template, in our kind (batch.tutorial.kubebuilder.io/v1) or the built-in one (batch/v1beta1 on
// Kubernetes 1.20), plus the raw Jobs of the calibration phase.
import { API_VERSION, KIND } from "../../api/v1/groupversion_info.ts";
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

function cronJobSpec(name: string): Record<string, unknown> {
  return {
    schedule: SCHEDULE,
    concurrencyPolicy: "Allow",
    successfulJobsHistoryLimit: HISTORY_LIMIT,
    failedJobsHistoryLimit: HISTORY_LIMIT,
    jobTemplate: { metadata: { labels: { app: "bench", cronjob: name } }, spec: smallJobSpec() },
  };
}

export function ourCronJob(namespace: string, name: string): KubeObject {
  return { apiVersion: API_VERSION, kind: KIND, metadata: { name, namespace }, spec: cronJobSpec(name) };
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
