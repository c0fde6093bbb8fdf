// cronjob_runs_total as the reconciler counts it and a scrape reports it (controllers/metrics.ts): the counts are
// the CronJob's own (one re-created under the same name starts from 0), and a slot the missed-run policy chose
// not to run is "missed_policy", never "missed_deadline", also when it is past startingDeadlineSeconds too.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Registry } from "prom-client";
import { API_VERSION, type CronJob, type CronJobInput, CronJobResource, KIND } from "../../api/v1/index.ts";
import { CronJobReconciler, setupCache } from "../../controllers/cronjob_controller.ts";
import { CronJobMetrics, type CronJobView } from "../../controllers/metrics.ts";
import { FakeRecorder } from "../../runtime/events/fake.ts";
import { FakeClient } from "../../runtime/fake/client.ts";
import { FakeClock } from "../../runtime/fake-clock.ts";
import { Kinds } from "../../runtime/kinds.ts";
import { discardLogger } from "../../runtime/log.ts";

const NS = "ns";
const MIN = 60_000;
const HOUR = 3600_000;
/** The CronJobs are created at 10:10; their first hourly slot is 11:00. */
const CREATED = "2026-03-02T10:10:00Z";
const H1 = Date.parse("2026-03-02T11:00:00Z");

async function setup() {
  const clock = new FakeClock(CREATED);
  const client = new FakeClient({ now: () => clock.now() });
  setupCache(client);
  await client.create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
  const registry = new Registry();
  const metrics = new CronJobMetrics({
    list: () => client.cache.list<CronJob>(CronJobResource) as readonly CronJobView[],
    registry,
  });
  const recorder = new FakeRecorder({ capacity: 1000 });
  const reconciler = new CronJobReconciler({ client, cache: client.cache, recorder, clock, metrics });
  let n = 0;
  const reconcile = (name: string) =>
    reconciler.reconcile(
      { namespace: NS, name },
      { log: discardLogger, reconcileID: `r${++n}`, signal: new AbortController().signal },
    );
  const create = (name: string, spec: Partial<CronJobInput["spec"]>) =>
    client.create<CronJobInput>(CronJobResource, {
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: { name, namespace: NS },
      spec: {
        schedule: "0 * * * *",
        jobTemplate: {
          spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "main", image: "busybox" }] } } },
        },
        ...spec,
      },
    });
  const patchSpec = async (name: string, change: Partial<CronJobInput["spec"]>) => {
    const cj = await client.get<CronJobInput>(CronJobResource, NS, name);
    cj.spec = { ...cj.spec, ...change };
    await client.update(CronJobResource, cj);
  };
  /** cronjob_runs_total of one CronJob at a scrape, by outcome. */
  const runs = async (name: string): Promise<Record<string, number>> => {
    const out: Record<string, number> = {};
    const re = new RegExp(`^cronjob_runs_total\\{namespace="${NS}",cronjob="${name}",outcome="([a-z_]+)"\\} (\\d+)$`);
    for (const line of (await registry.metrics()).split("\n")) {
      const m = re.exec(line);
      if (m) out[m[1]!] = Number(m[2]);
    }
    return out;
  };
  return { clock, client, recorder, reconcile, create, patchSpec, runs, at: (t: number) => clock.set(new Date(t)) };
}

describe("cronjob_runs_total from the reconciler (controllers/metrics.ts)", () => {
  it("a CronJob deleted and re-created under the same name before the next scrape counts its runs from 0", async () => {
    const { client, reconcile, create, runs, at } = await setup();
    await create("report", {});
    at(H1 - 30 * MIN);
    await reconcile("report");
    at(H1 + 1000);
    await reconcile("report");
    assert.equal((await runs("report")).created, 1, "the first CronJob ran its slot");

    // Deleted and created again at once: no reconcile saw it gone (the work queue holds one entry per name).
    await client.delete(CronJobResource, NS, "report");
    await create("report", {});
    at(H1 + 2 * MIN);
    await reconcile("report"); // the new CronJob: its first slot is H1 + 1h
    assert.equal(
      (await client.list(Kinds.Job, { namespace: NS })).items.length,
      1,
      "the new CronJob has not run (the old one's Job is left: no garbage collector)",
    );
    const counts = await runs("report");
    assert.ok(Object.keys(counts).length > 0, "the series exist");
    for (const [outcome, v] of Object.entries(counts)) {
      assert.equal(v, 0, `outcome ${outcome} of the new CronJob: ${JSON.stringify(counts)}`);
    }

    at(H1 + HOUR + 1000);
    await reconcile("report");
    assert.equal((await runs("report")).created, 1, "its own run, counted once");
  });

  it("Skip after an outage: the slots not run are missed_policy, never missed_deadline", async () => {
    const { reconcile, create, runs, at } = await setup();
    await create("skip", { missedRunPolicy: "Skip" });
    at(H1 - 30 * MIN);
    await reconcile("skip"); // announces H1
    // Down until H1 + 2h + 30m: H1, H1+1h, H1+2h passed.
    at(H1 + 2 * HOUR + 30 * MIN);
    await reconcile("skip");
    at(H1 + 2 * HOUR + 40 * MIN);
    await reconcile("skip");
    const counts = await runs("skip");
    assert.ok((counts.missed_policy ?? 0) >= 1, `counted as missed_policy: ${JSON.stringify(counts)}`);
    assert.equal(counts.missed_deadline, 0, `no deadline in the spec: ${JSON.stringify(counts)}`);
    assert.equal(counts.created, 0);
  });

  it("Skip after an outage with startingDeadlineSeconds, the slots also past their deadline: missed_policy, never missed_deadline", async () => {
    const { reconcile, create, runs, at, clock } = await setup();
    await create("skip-deadline", { missedRunPolicy: "Skip", startingDeadlineSeconds: 600 });
    at(H1 - 30 * MIN);
    await reconcile("skip-deadline"); // announces H1
    // Down until H1 + 2h + 30m: H1, H1+1h and H1+2h passed, each more than 10 minutes ago.
    at(H1 + 2 * HOUR + 30 * MIN);
    await reconcile("skip-deadline");
    for (let i = 0; i < 3; i++) {
      clock.set(new Date(clock.now().getTime() + MIN));
      await reconcile("skip-deadline");
    }
    const counts = await runs("skip-deadline");
    assert.equal(counts.missed_deadline, 0, `the policy chose not to run them: ${JSON.stringify(counts)}`);
    assert.ok((counts.missed_policy ?? 0) >= 1, `counted as missed_policy: ${JSON.stringify(counts)}`);
    at(H1 + 3 * HOUR + 1000);
    await reconcile("skip-deadline");
    assert.equal((await runs("skip-deadline")).created, 1, "the next slot runs");
  });

  it("Skip on unsuspend after a slot passed its deadline: missed_policy, never missed_deadline", async () => {
    const { reconcile, create, patchSpec, runs, at } = await setup();
    await create("skip-suspended", { missedRunPolicy: "Skip", startingDeadlineSeconds: 600, suspend: true });
    at(H1 - 30 * MIN);
    await reconcile("skip-suspended");
    at(H1 + 20 * MIN); // H1 passed while suspended, and is past its deadline
    await reconcile("skip-suspended");
    await patchSpec("skip-suspended", { suspend: false });
    await reconcile("skip-suspended");
    await reconcile("skip-suspended");
    const counts = await runs("skip-suspended");
    assert.equal(counts.missed_deadline, 0, `the policy chose not to run it: ${JSON.stringify(counts)}`);
    assert.ok((counts.missed_policy ?? 0) >= 1, `counted as missed_policy: ${JSON.stringify(counts)}`);
  });
});
