// Drives the CronJob reconciler directly, with a fake clock and a FakeRecorder, against one of two
// backends: a real apiserver (the informer cache; `settle()` waits until it has caught up, so each
// reconcile sees what the previous one wrote), or the in-memory FakeClient (runtime/fake/client.ts),
// whose cache is always caught up. The behaviour tables (*-cases.ts) run on both: apiserverDriver() in
// the integration suite, fakeDriver() in the unit suite.
import assert from "node:assert/strict";
import { API_VERSION, KIND, type CronJob, type CronJobInput } from "../../../api/v1/index.ts";
import { FakeClock } from "../../../runtime/fake-clock.ts";
import { CronJobReconciler, setupCache } from "../../../controllers/cronjob_controller.ts";
import {
  ConcurrencyGroupResource,
  ExclusionCalendarResource,
  cronJobOwnerOf,
  CronJobResource as CronJobKind,
  type Job,
} from "../../../api/v1/index.ts";
import { Cache } from "../../../runtime/cache/cache.ts";
import { Client } from "../../../runtime/client.ts";
import type { Result } from "../../../runtime/controller.ts";
import { FakeClient } from "../../../runtime/fake/client.ts";
import type { CacheReader, ObjectClient } from "../../../runtime/interfaces.ts";
import { FakeRecorder } from "../../../runtime/events/fake.ts";
import { type KubeObject, Kinds, type ResourceKind, resourceName } from "../../../runtime/kinds.ts";
import { discardLogger } from "../../../runtime/log.ts";
import { TestEnv } from "../../../envtest/index.ts";
import { createJob, jobStatus } from "../../fixtures.ts";

/** Where the objects live: the apiserver (with its informer cache), or the fake. */
type Backend =
  | { kind: "apiserver"; env: TestEnv; client: Client; cache: Cache }
  | { kind: "fake"; client: FakeClient; cache: CacheReader };

export class ReconcileHarness<C extends ObjectClient = Client> {
  readonly env: TestEnv | undefined;
  readonly client: C;
  /** Replaceable per method: a test makes it stale by wrapping `get`. */
  readonly cache: CacheReader;
  /** The fake, when the backend is one (to inject errors); undefined against a real apiserver. */
  readonly fake: FakeClient | undefined;
  private readonly backend: Backend;
  readonly clock: FakeClock;
  readonly recorder: FakeRecorder;
  readonly reconciler: CronJobReconciler;
  readonly namespace: string;
  reconciles = 0;

  private constructor(backend: Backend, namespace: string, start: string) {
    this.backend = backend;
    this.env = backend.kind === "apiserver" ? backend.env : undefined;
    this.fake = backend.kind === "fake" ? backend.client : undefined;
    this.namespace = namespace;
    this.client = backend.client as unknown as C;
    this.cache = backend.cache;
    this.clock = new FakeClock(start);
    this.recorder = new FakeRecorder({ capacity: 10_000 });
    this.reconciler = new CronJobReconciler({
      client: this.client,
      cache: this.cache,
      recorder: this.recorder,
      clock: this.clock,
    });
  }

  /** Against envtest's apiserver. */
  static async create(env: TestEnv, namespace: string, start: string): Promise<ReconcileHarness<Client>> {
    const client = new Client(env.kubeConfig);
    const cache = new Cache(client, { namespace });
    // The Job cache as the manager's (setupWithManager): trimmed to metadata and status, owner-indexed.
    setupCache(cache);
    cache.informerFor(CronJobKind);
    cache.informerFor(ConcurrencyGroupResource);
    cache.informerFor(ExclusionCalendarResource);
    const h = new ReconcileHarness<Client>({ kind: "apiserver", env, client, cache }, namespace, start);
    await client
      .create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } })
      .catch(() => undefined);
    cache.start();
    await cache.waitForSync();
    return h;
  }

  /**
   * Against the in-memory fake (no garbage collector, as in envtest); `client` shares one store between
   * harnesses, set up with setupCache.
   */
  static async fake(namespace: string, start: string, client?: FakeClient): Promise<ReconcileHarness<FakeClient>> {
    if (!client) {
      client = new FakeClient();
      setupCache(client);
    }
    const h = new ReconcileHarness<FakeClient>({ kind: "fake", client, cache: client.cache }, namespace, start);
    await client
      .create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } })
      .catch(() => undefined);
    return h;
  }

  async stop(): Promise<void> {
    if (this.backend.kind === "fake") return;
    await this.backend.cache.stop();
    this.backend.client.close();
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
    if (this.backend.kind === "fake") return; // the fake's cache is its store
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

  /** Wait until the cache holds the ExclusionCalendar as the apiserver does. */
  async settleCalendar(name: string): Promise<void> {
    if (this.backend.kind === "fake") return;
    const stored = await this.client.get<KubeObject>(ExclusionCalendarResource, this.namespace, name);
    const deadline = Date.now() + 15_000;
    while (
      this.cache.get(ExclusionCalendarResource, this.namespace, name)?.metadata?.resourceVersion !==
      stored.metadata?.resourceVersion
    ) {
      if (Date.now() > deadline) assert.fail(`cache did not settle for ExclusionCalendar ${name}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /**
   * One reconcile at the fake clock's time, then wait for the cache to catch up. `unseenJobs`: Jobs that pass's
   * cache does not show yet (withJobsUnseen).
   */
  async reconcile(name: string, o: { unseenJobs?: readonly string[] } = {}): Promise<Result> {
    this.reconciles++;
    const pass = () =>
      this.reconciler.reconcile(
        { namespace: this.namespace, name },
        { log: discardLogger, reconcileID: `test-${this.reconciles}`, signal: new AbortController().signal },
      );
    const result = o.unseenJobs ? await this.withJobsUnseen(o.unseenJobs, pass) : await pass();
    await this.settle(name);
    return result;
  }

  /**
   * A Job informer that lags behind the apiserver: while `f` runs, the cache does not show these Jobs (by name,
   * in a list, or through an index), as before their creation reached it. The apiserver has them (live reads
   * find them). Not around settle(), which waits for the cache to show every Job.
   */
  async withJobsUnseen<T>(jobNames: readonly string[], f: () => Promise<T>): Promise<T> {
    const cache = this.cache;
    const { get, list, byIndex } = cache;
    const hidden = new Set(jobNames);
    const isJob = (kind: ResourceKind) => resourceName(kind) === resourceName(Kinds.Job);
    const seen = (o: Readonly<KubeObject>) => !hidden.has(o.metadata?.name ?? "");
    cache.get = ((kind, ns, n) =>
      isJob(kind) && hidden.has(n) ? undefined : get.call(cache, kind, ns, n)) as typeof cache.get;
    cache.list = ((kind, o) => {
      const all = list.call(cache, kind, o);
      return isJob(kind) ? all.filter(seen) : all;
    }) as typeof cache.list;
    cache.byIndex = ((kind, index, value) => {
      const all = byIndex.call(cache, kind, index, value);
      return isJob(kind) ? all.filter(seen) : all;
    }) as typeof cache.byIndex;
    try {
      return await f();
    } finally {
      Object.assign(cache, { get, list, byIndex });
    }
  }

  /**
   * Play the Job controller: set a Job's status through the status subresource, as a Kubernetes 1.31+ Job
   * controller ends a Job (fixtures' jobStatus): SuccessCriteriaMet=True with Complete=True, FailureTarget=True
   * with Failed=True, and the startTime it already had (`startTime` only for a Job that never started); `failure`:
   * the failed conditions' reason and message (BackoffLimitExceeded, DeadlineExceeded, ...).
   */
  async finishJob(
    jobName: string,
    outcome: "Complete" | "Failed" | "FailureTarget",
    startTime: string,
    finishTime: string,
    failure?: { reason: string; message?: string },
  ): Promise<void> {
    const job = await this.client.get<Job>(Kinds.Job, this.namespace, jobName);
    job.status = jobStatus({
      state: outcome === "Complete" ? "complete" : outcome === "Failed" ? "failed" : "failing",
      start: job.status?.startTime ?? startTime,
      end: finishTime,
      ...(failure ? { failure } : {}),
    });
    await this.client.updateStatus(Kinds.Job, job);
  }

  async startJob(jobName: string, startTime: string): Promise<void> {
    const job = await this.client.get<Job>(Kinds.Job, this.namespace, jobName);
    job.status = jobStatus({ state: "active", start: startTime });
    await this.client.updateStatus(Kinds.Job, job);
  }

  /** Create a Job (fixtures' batchJob) in this namespace, its status written as the Job controller would. */
  async createJob(job: Job): Promise<Job> {
    return createJob(this.client, job, this.namespace);
  }

  events(): string[] {
    return [...this.recorder.events];
  }

  takeEvents(): string[] {
    return this.recorder.take();
  }
}

/**
 * Where a behaviour table runs. One driver per test file: setup before the table, a harness per namespace
 * (a case may open a second one), teardown after.
 */
export interface ReconcilerDriver {
  /** Shown in the suite's name. */
  readonly name: string;
  /** A case for a state a current apiserver refuses to hold is registered for the fake only. */
  readonly backend: "apiserver" | "fake";
  setup(): Promise<void>;
  harness(namespace: string, now: string): Promise<ReconcileHarness<ObjectClient>>;
  teardown(): Promise<void>;
}

/** Against envtest's kube-apiserver and etcd: one control plane for the table. */
export function apiserverDriver(): ReconcilerDriver {
  let env: TestEnv | undefined;
  return {
    name: "real apiserver",
    backend: "apiserver",
    async setup() {
      env = await TestEnv.start();
    },
    async harness(namespace, now) {
      if (!env) throw new Error("apiserverDriver: harness() before setup()");
      return ReconcileHarness.create(env, namespace, now);
    },
    async teardown() {
      await env?.stop();
    },
  };
}

/**
 * Against the in-memory FakeClient: one store for the table, as one apiserver. `clockStamps`: it stamps
 * creationTimestamp with the harness's fake clock (the time the reconciler reads) instead of the real one, as an
 * apiserver stamps the time the create reaches it: what a pass creates is then ordered in time against what it
 * decides (the record's decidedAt), whatever the real time.
 */
export function fakeDriver(o: { clockStamps?: boolean } = {}): ReconcilerDriver {
  let clock: FakeClock | undefined;
  const client = new FakeClient(o.clockStamps ? { now: () => clock?.now() ?? new Date() } : {});
  setupCache(client);
  return {
    name: o.clockStamps ? "in-memory fake, creations stamped by the fake clock" : "in-memory fake",
    backend: "fake",
    async setup() {},
    async harness(namespace, now) {
      const h = await ReconcileHarness.fake(namespace, now, client);
      clock = h.clock;
      return h;
    },
    async teardown() {},
  };
}

export function condition(
  cj: CronJob,
  type: string,
): { status: string; reason: string; lastTransitionTime: string } | undefined {
  return cj.status?.conditions?.find((c) => c.type === type);
}
