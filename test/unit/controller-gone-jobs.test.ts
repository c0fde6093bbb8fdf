// Requests whose answer is already known: history cleanup sends no second delete for a Job it deleted while the
// cache still holds it, and a Job status.active lists that a live read found gone is not read again. Against the
// fake API server, with a cache that lags behind the deletes as an informer does (its delete event not come yet).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type CronJob, CronJobResource as CronJobKind, type Job } from "../../api/v1/index.ts";
import { CronJobReconciler, setupCache } from "../../controllers/cronjob_controller.ts";
import { ChildJobs } from "../../controllers/jobs.ts";
import { FakeRecorder } from "../../runtime/events/fake.ts";
import { FakeClock } from "../../runtime/fake-clock.ts";
import { FakeClient } from "../../runtime/fake/client.ts";
import { Kinds, type KubeObject } from "../../runtime/kinds.ts";
import { discardLogger } from "../../runtime/log.ts";
import { batchJob, createJob } from "../fixtures.ts";

const NS = "ns";
const ctx = { log: discardLogger, reconcileID: "t", signal: new AbortController().signal };

/**
 * A fake API server with the reconciler's cache, the namespace and CronJob cj (a yearly schedule, one successful Job
 * kept, `limits` beside it), at 10:00:30 by its clock.
 */
async function scene(limits: Record<string, number> = {}): Promise<{ clock: FakeClock; client: FakeClient }> {
  const clock = new FakeClock("2026-11-25T10:00:30Z");
  const client = new FakeClient({ now: () => clock.now() });
  setupCache(client);
  await client.create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
  client.seed(CronJobKind, {
    apiVersion: "batch.tutorial.kubebuilder.io/v1",
    kind: "CronJob",
    metadata: { name: "cj", namespace: NS, uid: "uid-cj", creationTimestamp: "2026-11-25T09:00:00Z" },
    spec: {
      schedule: "0 0 1 1 *",
      successfulJobsHistoryLimit: 1,
      ...limits,
      jobTemplate: {
        spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] } } },
      },
    },
  } as unknown as CronJob);
  return { clock, client };
}

describe("no request whose answer is known: a Job deleted or found gone", () => {
  it("history cleanup deletes a Job once, though the cache still holds it on the next passes", async () => {
    const { clock, client } = await scene();
    for (const [i, end] of ["2026-11-25T09:10:00Z", "2026-11-25T09:20:00Z", "2026-11-25T09:30:00Z"].entries())
      await createJob(
        client,
        batchJob({
          name: `manual-${i}`,
          namespace: NS,
          uid: `uid-${i}`,
          owner: { name: "cj", uid: "uid-cj" },
          annotations: { "cronjob.kubernetes.io/instantiate": "manual" },
          state: "complete",
          start: end,
          end,
        }),
      );
    // The cache as it was before any delete: the informer has not seen the deletes yet.
    const before = client.cache.list<Job>(Kinds.Job, { namespace: NS });
    const list = client.cache.list.bind(client.cache);
    const byIndex = client.cache.byIndex.bind(client.cache);
    const isJob = (kind: { plural: string }) => kind.plural === Kinds.Job.plural;
    client.cache.list = ((kind, o) => (isJob(kind) ? before : list(kind, o))) as typeof client.cache.list;
    client.cache.byIndex = ((kind, index, value) =>
      isJob(kind) ? before : byIndex(kind, index, value)) as typeof client.cache.byIndex;

    const reconciler = new CronJobReconciler({ client, cache: client.cache, recorder: new FakeRecorder(), clock });
    for (let pass = 0; pass < 3; pass++) {
      clock.set(new Date(Date.parse("2026-11-25T10:00:30Z") + pass * 1000));
      await reconciler.reconcile({ namespace: NS, name: "cj" }, ctx);
    }
    const deletes = client.actions.filter((a) => a.verb === "delete" && a.resource === "jobs.batch").map((a) => a.name);
    assert.deepEqual(deletes.sort(), ["manual-0", "manual-1"], "each Job beyond the limit deleted once");
    const left = (await client.list<KubeObject>(Kinds.Job, { namespace: NS })).items.map((j) => j.metadata?.name);
    assert.deepEqual(left, ["manual-2"]);
  });

  it("a Job status.active lists that a live read found gone is not read again", async () => {
    const client = new FakeClient();
    const jobs = new ChildJobs(client);
    const cronJob = {
      metadata: { namespace: NS, uid: "uid-cj" },
      status: { active: [{ name: "gone-job", uid: "uid-gone" }] },
    };
    const gone = new Set<string>();
    const first = await jobs.confirmActive(cronJob, [], ctx, gone);
    assert.deepEqual([...first], [["gone-job", undefined]]);
    assert.deepEqual([...gone], ["uid-gone"]);
    const reads = () => client.actions.filter((a) => a.verb === "get" && a.resource === "jobs.batch").length;
    assert.equal(reads(), 1);
    const second = await jobs.confirmActive(cronJob, [], ctx, gone);
    assert.deepEqual([...second], [["gone-job", undefined]], "still gone for the pass");
    assert.equal(reads(), 1, "not read again");
  });
});

describe("history cleanup counts finished Jobs only", () => {
  it("a running Job is neither counted toward successfulJobsHistoryLimit nor deleted", async () => {
    const { clock, client } = await scene({ failedJobsHistoryLimit: 1 });
    const manual = { "cronjob.kubernetes.io/instantiate": "manual" };
    const owner = { name: "cj", uid: "uid-cj" };
    // The running Job started first: by start time it is the oldest.
    await createJob(
      client,
      batchJob({
        name: "running",
        namespace: NS,
        uid: "uid-r",
        owner,
        annotations: manual,
        state: "active",
        start: "2026-11-25T09:00:00Z",
      }),
    );
    await createJob(
      client,
      batchJob({
        name: "done",
        namespace: NS,
        uid: "uid-d",
        owner,
        annotations: manual,
        state: "complete",
        start: "2026-11-25T09:30:00Z",
        end: "2026-11-25T09:40:00Z",
      }),
    );
    const reconciler = new CronJobReconciler({ client, cache: client.cache, recorder: new FakeRecorder(), clock });
    await reconciler.reconcile({ namespace: NS, name: "cj" }, ctx);
    const left = (await client.list<KubeObject>(Kinds.Job, { namespace: NS })).items.map((j) => j.metadata?.name);
    assert.deepEqual(left.sort(), ["done", "running"], "one finished Job, within its limit of 1: nothing deleted");
  });
});
