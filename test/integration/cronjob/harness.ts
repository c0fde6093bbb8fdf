// Drives the CronJob reconciler directly against a real apiserver, with a fake clock: the cache is
// the real informer cache, the recorder a FakeRecorder, and `settle()` waits until the cache has
// caught up with the apiserver so each reconcile sees what the previous one wrote.
import assert from "node:assert/strict";
import { API_VERSION, KIND, type CronJob, type CronJobInput } from "../../../api/v1/index.ts";
import { FakeClock } from "../../../controllers/clock.ts";
import { CronJobKind, CronJobReconciler, setupJobCache } from "../../../controllers/cronjob_controller.ts";
import { cronJobOwnerOf, type Job } from "../../../controllers/job.ts";
import { Cache } from "../../../runtime/cache/cache.ts";
import { Client } from "../../../runtime/client.ts";
import type { Result } from "../../../runtime/controller.ts";
import { FakeRecorder } from "../../../runtime/events/fake.ts";
import { Kinds } from "../../../runtime/kinds.ts";
import { discardLogger } from "../../../runtime/log.ts";
import type { TestEnv } from "../../../envtest/index.ts";

export class ReconcileHarness {
  readonly env: TestEnv;
  readonly client: Client;
  readonly cache: Cache;
  readonly clock: FakeClock;
  readonly recorder: FakeRecorder;
  readonly reconciler: CronJobReconciler;
  readonly namespace: string;
  reconciles = 0;

  private constructor(env: TestEnv, namespace: string, start: string) {
    this.env = env;
    this.namespace = namespace;
    this.client = new Client(env.kubeConfig);
    this.cache = new Cache(this.client, { namespace });
    // The Job cache as the manager's (setupWithManager): trimmed to metadata and status, owner-indexed.
    setupJobCache(this.cache);
    this.cache.informerFor(CronJobKind);
    this.clock = new FakeClock(start);
    this.recorder = new FakeRecorder({ capacity: 10_000 });
    this.reconciler = new CronJobReconciler({
      client: this.client,
      cache: this.cache,
      recorder: this.recorder,
      clock: this.clock,
    });
  }

  static async create(env: TestEnv, namespace: string, start: string): Promise<ReconcileHarness> {
    const h = new ReconcileHarness(env, namespace, start);
    await h.client
      .create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } })
      .catch(() => undefined);
    h.cache.start();
    await h.cache.waitForSync();
    return h;
  }

  async stop(): Promise<void> {
    await this.cache.stop();
    this.client.close();
  }

  cronJob(name: string, spec: Partial<CronJobInput["spec"]>): CronJobInput {
    return {
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: { name, namespace: this.namespace },
      spec: {
        schedule: "0 * * * *",
        jobTemplate: {
          metadata: { labels: { app: name }, annotations: { "example.com/team": "data" } },
          spec: { template: { spec: { restartPolicy: "OnFailure", containers: [{ name: "c", image: "busybox" }] } } },
        },
        ...spec,
      },
    };
  }

  /** Create a CronJob whose creationTimestamp we cannot set: callers base their fake clock on it. */
  async createCronJob(name: string, spec: Partial<CronJobInput["spec"]>): Promise<CronJob> {
    const created = await this.client.create<CronJob>(CronJobKind, this.cronJob(name, spec) as CronJob);
    await this.settle(name);
    return created;
  }

  async get(name: string): Promise<CronJob> {
    return this.client.get<CronJob>(CronJobKind, this.namespace, name);
  }

  async jobs(name?: string): Promise<Job[]> {
    const all = (await this.client.list<Job>(Kinds.Job, { namespace: this.namespace })).items;
    if (!name) return all;
    const cj = await this.get(name);
    return all
      .filter((j) => cronJobOwnerOf(j)?.uid === cj.metadata.uid)
      .sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));
  }

  /** Wait until the cache holds exactly what the apiserver holds for this CronJob and all Jobs. */
  async settle(name: string): Promise<void> {
    const want = new Map<string, string>();
    const cj = await this.client.get<CronJob>(CronJobKind, this.namespace, name).catch(() => undefined);
    const jobs = (await this.client.list<Job>(Kinds.Job, { namespace: this.namespace })).items;
    for (const j of jobs) want.set(j.metadata!.name!, j.metadata!.resourceVersion!);
    const deadline = Date.now() + 15_000;
    for (;;) {
      const cached = this.cache.get<CronJob>(CronJobKind, this.namespace, name);
      const cjOK = cj ? cached?.metadata.resourceVersion === cj.metadata.resourceVersion : !cached;
      const cachedJobs = this.cache.list<Job>(Kinds.Job, { namespace: this.namespace });
      const jobsOK =
        cachedJobs.length === want.size &&
        cachedJobs.every((j) => want.get(j.metadata!.name!) === j.metadata!.resourceVersion);
      if (cjOK && jobsOK) return;
      if (Date.now() > deadline) assert.fail(`cache did not settle for ${name}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** One reconcile at the fake clock's time, then wait for the cache to catch up. */
  async reconcile(name: string): Promise<Result> {
    this.reconciles++;
    const result = await this.reconciler.reconcile(
      { namespace: this.namespace, name },
      { log: discardLogger, reconcileID: `test-${this.reconciles}`, signal: new AbortController().signal },
    );
    await this.settle(name);
    return result;
  }

  /** Play the Job controller: set a Job's status through the status subresource. */
  async finishJob(
    jobName: string,
    outcome: "Complete" | "Failed",
    startTime: string,
    finishTime: string,
  ): Promise<void> {
    const job = await this.client.get<Job>(Kinds.Job, this.namespace, jobName);
    job.status = {
      startTime,
      ...(outcome === "Complete" ? { completionTime: finishTime, succeeded: 1 } : { failed: 1 }),
      conditions: [{ type: outcome, status: "True", lastTransitionTime: finishTime }],
    };
    await this.client.updateStatus(Kinds.Job, job);
  }

  async startJob(jobName: string, startTime: string): Promise<void> {
    const job = await this.client.get<Job>(Kinds.Job, this.namespace, jobName);
    job.status = { startTime, active: 1 };
    await this.client.updateStatus(Kinds.Job, job);
  }

  events(): string[] {
    return [...this.recorder.events];
  }

  takeEvents(): string[] {
    return this.recorder.take();
  }
}

export function condition(
  cj: CronJob,
  type: string,
): { status: string; reason: string; lastTransitionTime: string } | undefined {
  return cj.status?.conditions?.find((c) => c.type === type);
}
