// The runs waiting for a place in a concurrency group, read from a member's record (api/v1 waitingRunOf), as the
// operator reads a member it has not reconciled since it started (controllers/groups.ts) and `kubectl cron` reads every
// member (groups, why, list): issue 53. A held run whose Job exists has started, whatever the record says (its status
// write may come seconds later: --status-write-delay); a suspended (or stopped) CronJob's explicit requests still wait,
// and keep their place in the queue, its slots do not.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Registry } from "prom-client";
import {
  API_VERSION,
  CONCURRENCY_GROUP_LABEL,
  ConcurrencyGroupResource,
  CRONJOB_NAME_LABEL,
  type CronJob,
  CronJobResource,
  jobNameFor,
  KIND,
  KUEUE_QUEUE_NAME_KEY,
  manualJobName,
  type RecentRunWire,
  isExplicit,
  retryJobName,
  RUN_NOW_ANNOTATION,
  type WaitingFacts,
  waitingRunOf,
} from "../../api/v1/index.ts";
import { CronJobReconciler, setupCache } from "../../controllers/cronjob_controller.ts";
import { GroupPlaces } from "../../controllers/groups.ts";
import { TRIGGERS } from "../../controllers/triggers.ts";
import { FakeRecorder } from "../../runtime/events/fake.ts";
import { FakeClient } from "../../runtime/fake/client.ts";
import { FakeClock } from "../../runtime/fake-clock.ts";
import { type KubeObject, Kinds } from "../../runtime/kinds.ts";
import { discardLogger } from "../../runtime/log.ts";

const NS = "fleet";
const NOW = Date.parse("2026-11-26T10:15:01Z");

/** A Held entry its group decided. */
function held(trigger: RecentRunWire["trigger"], o: Partial<RecentRunWire> = {}): RecentRunWire {
  return {
    trigger,
    decision: "Held",
    reason: "ConcurrencyGroupFull",
    message: "held: group g is at 1/1: Jobs other-1795680000",
    decidedAt: "2026-11-26T10:00:05Z",
    ...o,
  };
}

const SLOT = "2026-11-26T10:00:00Z";
const HELD = {
  schedule: held("Schedule", { scheduledTime: SLOT }),
  runNow: held("RunNow", { request: "req-1" }),
  backfill: held("Backfill", { scheduledTime: "2026-11-20T10:00:00Z", request: "bf-1" }),
  retry: held("Retry", { scheduledTime: "2026-11-26T09:00:00Z", request: "1/2" }),
};

/** A member whose record's newest entry is `entry` (what waitingRunOf reads of it); `spec` and `status` merged in. */
const member = (
  entry: RecentRunWire,
  o: { spec?: WaitingFacts["spec"]; status?: WaitingFacts["status"] } = {},
): WaitingFacts => ({
  metadata: { name: "sus" },
  spec: { ...o.spec },
  status: { lastScheduleTime: "2026-11-26T09:45:00Z", recentRuns: [entry], ...o.status },
});

describe("waitingRunOf: the runs a group's queue reads from a member's record", () => {
  it("a held run whose Job exists has started: it waits no more, whatever its trigger (the Job's name is the run's)", () => {
    const named = {
      schedule: jobNameFor("sus", new Date(SLOT)),
      runNow: manualJobName("sus", "req-1"),
      backfill: jobNameFor("sus", new Date("2026-11-20T10:00:00Z")),
      retry: retryJobName("sus", jobNameFor("sus", new Date("2026-11-26T09:00:00Z")), 1),
    };
    for (const [trigger, entry] of Object.entries(HELD) as [keyof typeof HELD, RecentRunWire][]) {
      const cj = member(entry);
      assert.equal(waitingRunOf(cj, NOW, [])?.held, entry, `${trigger}: waiting while it has no Job`);
      assert.equal(waitingRunOf(cj, NOW, [{ metadata: { name: "sus-1795600000" } }])?.held, entry, trigger);
      assert.equal(waitingRunOf(cj, NOW, [{ metadata: { name: named[trigger] } }]), undefined, `${trigger}: started`);
    }
  });

  it("suspended or stopped: its held run-now and backfill requests still wait, its slots and retries do not", () => {
    const stopped = { time: "2026-11-26T09:50:00Z", failures: 3, generation: 1 };
    for (const o of [{ spec: { suspend: true } }, { status: { stopped } }]) {
      const waits = (e: RecentRunWire) => waitingRunOf(member(e, o), NOW, [])?.held;
      assert.equal(waits(HELD.runNow), HELD.runNow, JSON.stringify(o));
      assert.equal(waits(HELD.backfill), HELD.backfill, JSON.stringify(o));
      assert.equal(waits(HELD.schedule), undefined, JSON.stringify(o));
      assert.equal(waits(HELD.retry), undefined, JSON.stringify(o));
    }
    // A request keeps the place the CronJob held in the queue: it waits since it was first held.
    assert.equal(
      waitingRunOf(member(HELD.runNow, { spec: { suspend: true } }), NOW, [])?.since,
      Date.parse(HELD.runNow.decidedAt),
    );
  });

  it("the requests that wait while suspended are the triggers the controller runs while suspended", () => {
    assert.deepEqual(
      TRIGGERS.map((t) => [t.name, isExplicit({ trigger: t.recordAs })]),
      TRIGGERS.map((t) => [t.name, t.explicit]),
    );
    assert.deepEqual(
      TRIGGERS.filter((t) => t.explicit).map((t) => t.name),
      ["runNow", "backfill"],
    );
  });
});

// --- the operator's side: a new process (a restart, a leader change) reads the queue from the records ------------

async function cluster(members: { name: string; spec?: object; status: object; annotations?: object }[]) {
  const clock = new FakeClock(new Date(NOW));
  const client = new FakeClient({ now: () => clock.now() });
  setupCache(client);
  await client.create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
  client.seed(ConcurrencyGroupResource, {
    apiVersion: API_VERSION,
    kind: "ConcurrencyGroup",
    metadata: { name: "g", namespace: NS },
    spec: { limit: 1 },
  } as KubeObject);
  for (const m of members) {
    client.seed(CronJobResource, {
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: {
        name: m.name,
        namespace: NS,
        uid: `uid-${m.name}`,
        creationTimestamp: "2026-11-01T00:00:00Z",
        ...(m.annotations ? { annotations: m.annotations } : {}),
      },
      spec: {
        schedule: "*/15 * * * *",
        concurrencyGroup: "g",
        concurrencyPolicy: "Allow",
        successfulJobsHistoryLimit: 3,
        failedJobsHistoryLimit: 1,
        jobTemplate: {
          spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "c" }] } } },
        },
        ...m.spec,
      },
      status: m.status,
    } as KubeObject);
  }
  const reconciler = new CronJobReconciler({
    client,
    cache: client.cache,
    recorder: new FakeRecorder({ capacity: 50 }),
    clock,
    statusDelayMs: 0,
  });
  const reconcile = (name: string) =>
    reconciler.reconcile(
      { namespace: NS, name },
      { log: discardLogger, reconcileID: name, signal: new AbortController().signal },
    );
  const jobs = async () =>
    (await client.list<KubeObject>(Kinds.Job, { namespace: NS })).items.map((j) => j.metadata?.name).sort();
  const record = async (name: string) =>
    (await client.get<CronJob>(CronJobResource, NS, name)).status?.recentRuns ?? [];
  return { client, reconcile, jobs, record };
}

describe("the operator's queue after a restart (controllers/groups.ts, a member's stored record)", () => {
  it("a suspended CronJob's older run-now request goes before another member's newer slot", async () => {
    // sus was suspended while its run-now request (10:00:05) waited for the group's one place; other's 10:15 slot is
    // due now, and the place is free. A new process has reconciled neither.
    const t = await cluster([
      {
        name: "sus",
        spec: { suspend: true },
        annotations: { [RUN_NOW_ANNOTATION]: "req-1" },
        status: { lastScheduleTime: "2026-11-26T09:45:00Z", recentRuns: [HELD.runNow] },
      },
      { name: "other", status: { lastScheduleTime: "2026-11-26T10:00:00Z" } },
    ]);
    const places = new GroupPlaces(t.client.cache);
    assert.deepEqual(
      places.waitersOf(NS, "g", NOW).map((w) => [w.member, w.since]),
      [["sus", Date.parse(HELD.runNow.decidedAt)]],
      "the suspended CronJob's request waits, since it was first held",
    );
    assert.deepEqual(places.view(NS, "g", "other", Date.parse("2026-11-26T10:15:00Z"), NOW).ahead, ["sus"]);

    await t.reconcile("other");
    assert.deepEqual(await t.jobs(), [], "other's newer slot leaves the place to the older request");
    const [otherHeld] = await t.record("other");
    assert.equal(otherHeld?.decision, "Held");
    assert.equal(otherHeld?.reason, "ConcurrencyGroupQueue");
    assert.equal(otherHeld?.scheduledTime, "2026-11-26T10:15:00Z");

    await t.reconcile("sus");
    assert.deepEqual(await t.jobs(), [manualJobName("sus", "req-1")], "the suspended CronJob's request runs first");
  });

  it("a member's held run whose Job exists (its record not written yet) is not ahead of anyone", async () => {
    const started = jobNameFor("busy", new Date(SLOT));
    const t = await cluster([
      { name: "busy", status: { lastScheduleTime: "2026-11-26T09:45:00Z", recentRuns: [HELD.schedule] } },
      { name: "other", status: { lastScheduleTime: "2026-11-26T10:00:00Z" } },
    ]);
    // busy's Job for 10:00 exists, and has ended: the group's one place is free.
    t.client.seed(Kinds.Job, {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: {
        name: started,
        namespace: NS,
        labels: { [CRONJOB_NAME_LABEL]: "busy", [CONCURRENCY_GROUP_LABEL]: "g" },
        annotations: { "batch.tutorial.kubebuilder.io/scheduled-at": SLOT },
        ownerReferences: [{ apiVersion: API_VERSION, kind: KIND, name: "busy", uid: "uid-busy", controller: true }],
      },
      spec: {},
      status: {
        startTime: "2026-11-26T10:05:00Z",
        completionTime: "2026-11-26T10:06:00Z",
        conditions: [{ type: "Complete", status: "True", lastTransitionTime: "2026-11-26T10:06:00Z" }],
      },
    } as KubeObject);
    const places = new GroupPlaces(t.client.cache);
    assert.deepEqual(places.waitersOf(NS, "g", NOW), [], "busy's held slot has its Job: it started");
    await t.reconcile("other");
    assert.deepEqual(await t.jobs(), [started, jobNameFor("other", new Date("2026-11-26T10:15:00Z"))].sort());
  });
});

// --- the group's places, as admission, the wake-ups and the gauges read them -----------------------------------

/** A running Job of member `cj` in group g, its `spec` merged in. */
function groupJob(cj: string, slot: string, spec: object = {}, labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: jobNameFor(cj, new Date(slot)),
      namespace: NS,
      labels: { [CRONJOB_NAME_LABEL]: cj, [CONCURRENCY_GROUP_LABEL]: "g", ...labels },
      annotations: { "batch.tutorial.kubebuilder.io/scheduled-at": slot },
      ownerReferences: [{ apiVersion: API_VERSION, kind: KIND, name: cj, uid: `uid-${cj}`, controller: true }],
    },
    spec,
    status: {},
  } as KubeObject;
}

describe("the group's places (controllers/groups.ts)", () => {
  it("a member's queued Job (Kueue holds it suspended) takes its place: the other member's slot is held", async () => {
    const t = await cluster([
      { name: "busy", status: { lastScheduleTime: "2026-11-26T10:15:00Z" } },
      { name: "other", status: { lastScheduleTime: "2026-11-26T10:00:00Z" } },
    ]);
    const queued = groupJob("busy", "2026-11-26T10:15:00Z", { suspend: true }, { [KUEUE_QUEUE_NAME_KEY]: "team-a" });
    t.client.seed(Kinds.Job, queued);
    await t.reconcile("other");
    assert.deepEqual(await t.jobs(), [queued.metadata!.name], "other's 10:15 slot does not run");
    const [entry] = await t.record("other");
    assert.deepEqual(
      [entry?.decision, entry?.reason, entry?.blockedBy],
      ["Held", "ConcurrencyGroupFull", queued.metadata!.name],
    );
  });

  it("a run past its starting deadline waits no more: it is ahead of nobody", async () => {
    const t = await cluster([]);
    const places = new GroupPlaces(t.client.cache);
    const slot = Date.parse("2026-11-26T10:00:00Z");
    places.decided(NS, "g", "late", { since: slot, until: NOW - 1 });
    places.decided(NS, "g", "early", { since: slot + 1000, until: NOW + 1 });
    assert.deepEqual(
      places.waitersOf(NS, "g", NOW).map((w) => w.member),
      ["early"],
    );
    assert.deepEqual(places.view(NS, "g", "other", NOW, NOW).ahead, ["early"]);
  });

  it("a place frees, and the waiting runs are woken, when a Job of the group ends or is deleted", async () => {
    const t = await cluster([]);
    const [jobs] = new GroupPlaces(t.client.cache).watches(() => NOW);
    const freed = jobs!.predicates![0]!;
    const running = groupJob("busy", SLOT);
    const failed = { ...running, status: { conditions: [{ type: "Failed", status: "True" }] } } as KubeObject;
    assert.equal(freed.delete!(running), true, "deleted");
    assert.equal(freed.update!(running, failed), true, "ended");
    assert.equal(freed.update!(running, { ...running, status: { active: 1 } } as KubeObject), false, "still runs");
    assert.equal(freed.create!(running), false);
  });

  it("the gauges: the oldest waiting run's wait, the running Jobs, the waiting runs; none while not the leader", async () => {
    const t = await cluster([]);
    t.client.seed(Kinds.Job, groupJob("busy", SLOT));
    const places = new GroupPlaces(t.client.cache);
    places.decided(NS, "g", "newer", { since: NOW - 60_000, until: undefined });
    places.decided(NS, "g", "older", { since: NOW - 600_000, until: undefined });
    const scrape = async (leader: boolean) => {
      const registry = new Registry();
      for (const m of places.metrics({ now: () => NOW, isLeader: () => leader })) m.register(registry);
      return (await registry.metrics()).split("\n").filter((l) => l !== "" && !l.startsWith("#"));
    };
    assert.deepEqual((await scrape(true)).sort(), [
      'cronjob_concurrency_group_limit{namespace="fleet",group="g"} 1',
      'cronjob_concurrency_group_oldest_waiting_seconds{namespace="fleet",group="g"} 600',
      'cronjob_concurrency_group_running_jobs{namespace="fleet",group="g"} 1',
      'cronjob_concurrency_group_waiting_runs{namespace="fleet",group="g"} 2',
    ]);
    assert.deepEqual(
      places.waitersOf(NS, "g", NOW).map((w) => w.member),
      ["older", "newer"],
      "oldest first",
    );
    assert.deepEqual(await scrape(false), []);
  });
});
