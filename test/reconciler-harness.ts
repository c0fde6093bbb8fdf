// The CronJob reconciler on the in-memory fake client and a fake clock, as the reconciler's unit tests drive it: one
// setup instead of a copy in each (controller-after, -jitter, -retry). A "restart" is a new reconciler over the same
// stored objects: nothing remembered, only what the API server stores. The integration tests' table
// (test/integration/cronjob/rows.ts) drives the same reconciler against a real apiserver.
import { type CronJob, CronJobResource as CronJobKind, type Job } from "../api/v1/index.ts";
import { CronJobReconciler, setupCache } from "../controllers/cronjob_controller.ts";
import { FakeRecorder } from "../runtime/events/fake.ts";
import { FakeClock } from "../runtime/fake-clock.ts";
import { FakeClient } from "../runtime/fake/client.ts";
import { Kinds } from "../runtime/kinds.ts";
import { discardLogger } from "../runtime/log.ts";

/** The namespace every CronJob of the harness lives in. */
export const HARNESS_NS = "ns";

/** A CronJob of the harness: a one-container Job template, and `spec` (a schedule, or spec.after, ...). */
export function harnessCronJob(
  name: string,
  spec: Record<string, unknown>,
  metadata: Record<string, unknown> = {},
): CronJob {
  return {
    apiVersion: "batch.tutorial.kubebuilder.io/v1",
    kind: "CronJob",
    metadata: { name, namespace: HARNESS_NS, ...metadata },
    spec: {
      jobTemplate: {
        spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] } } },
      },
      ...spec,
    },
  } as unknown as CronJob;
}

/** The reconciler at `now`, its namespace created; CronJobs are seeded by the caller. */
export async function reconcilerHarness(now: Date | string) {
  const clock = new FakeClock(now);
  const client = new FakeClient({ now: () => clock.now() });
  setupCache(client);
  const recorder = new FakeRecorder();
  const reconcilerOf = () => new CronJobReconciler({ client, cache: client.cache, recorder, clock });
  let reconciler = reconcilerOf();
  await client.create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: HARNESS_NS } });
  return {
    clock,
    client,
    recorder,
    /** Stores a CronJob (harnessCronJob) as the API server would hold it. */
    seed: (cronJob: CronJob) => client.seed(CronJobKind, cronJob),
    /** A reconcile of `name`, at `at` when given, as the work queue runs it. */
    reconcile: (name: string, at?: Date) => {
      if (at) clock.set(at);
      return reconciler.reconcile(
        { namespace: HARNESS_NS, name },
        { log: discardLogger, reconcileID: "t", signal: new AbortController().signal },
      );
    },
    /** A new process: nothing remembered, only what the API server stores. */
    restart: () => {
      reconciler = reconcilerOf();
    },
    /** The reconciler of now (a restart makes another). */
    reconciler: () => reconciler,
    /** Every Job of the namespace. */
    jobs: async () => (await client.list<Job>(Kinds.Job, { namespace: HARNESS_NS })).items,
    stored: (name: string) => client.get<CronJob>(CronJobKind, HARNESS_NS, name),
  };
}
