// A trigger is one row: a fourth trigger, defined here as a test fixture (a row of controllers/triggers.ts's shape
// plus its source), runs through the reconciler's one run path — admission, the create, Events, counts, the
// books (which Jobs are its own, which move lastScheduleTime) — with no edit to runs.ts, observe.ts or the
// controller. The fixture: a "poke" annotation whose every new value asks for one run, its Job named after it.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import {
  type CronJob,
  CronJobResource as CronJobKind,
  type Job,
  type JobSource,
  jobForSlot,
  jobNameFor,
  SCHEDULED_AT_ANNOTATION,
} from "../../api/v1/index.ts";
import { CronJobReconciler, setupCache } from "../../controllers/cronjob_controller.ts";
import { bindRun, type RunParts, type Trigger, TRIGGERS } from "../../controllers/triggers.ts";
import { FakeClock } from "../../runtime/fake-clock.ts";
import { FakeRecorder } from "../../runtime/events/fake.ts";
import { FakeClient } from "../../runtime/fake/client.ts";
import { Kinds } from "../../runtime/kinds.ts";
import { discardLogger } from "../../runtime/log.ts";

const POKE = "test.example/poke";
const POKED_BY = "test.example/poked-by";

const pokeName = (cronJob: string, id: string) =>
  `${cronJob}-p${createHash("sha256").update(id).digest("hex").slice(0, 8)}`;

interface Poke {
  id: string;
}

const pokeParts: RunParts<Poke> = {
  job: (cronJob: JobSource, r) => {
    // The template as every trigger's Job has it; named after the poke, marked with it, no slot of its own.
    const job = jobForSlot(cronJob, new Date(0));
    const { [SCHEDULED_AT_ANNOTATION]: _slot, ...annotations } = job.metadata?.annotations ?? {};
    job.metadata = {
      ...job.metadata,
      name: pokeName(cronJob.metadata.name ?? "", r.id),
      annotations: { ...annotations, [POKED_BY]: r.id },
    };
    return job;
  },
  ran: (view, r) => {
    const job = view.jobs.get(pokeName(view.cronJobName, r.id));
    return job ? { ran: true, job } : { ran: false };
  },
  held: (r, running) => ({
    reason: "JobAlreadyActive",
    message: `poke ${r.id} waits for ${running.join(", ")}`,
    once: { topic: "poke", key: r.id },
  }),
  book: (status) => ({ ...status }),
  created: (r, name) => ({
    event: { reason: "SuccessfulCreate", message: `Created job ${name} (poke ${r.id})` },
    count: "manual",
    log: `created Job for poke ${r.id}`,
  }),
  // The record has no trigger of its own for a poke: it is a request made by hand, as run-now is.
  subject: (r) => ({ trigger: "RunNow", request: r.id }),
};

const poke: Trigger<"poke"> = {
  name: "poke",
  recordAs: "RunNow",
  runsWhileSuspended: true,
  onReplace: "wait",
  onConflict: "stop",
  requestAnnotation: POKED_BY,
  movesLastScheduleTime: false,
  takesScheduleSlots: false,
  plan: (input) => {
    const id = input.cronJob.metadata.annotations?.[POKE];
    return id ? { requests: [bindRun(poke, { id }, pokeParts)] } : undefined;
  },
  ours: (cronJob, job) =>
    job.metadata?.name === pokeName(cronJob.metadata.name ?? "", job.metadata?.annotations?.[POKED_BY] ?? ""),
  unbooked: () => false,
};

async function setUp(o: { suspend?: boolean; concurrencyPolicy?: "Forbid" } = {}) {
  const client = new FakeClient();
  setupCache(client);
  const clock = new FakeClock("2026-11-25T09:45:00Z");
  const recorder = new FakeRecorder({ capacity: 100 });
  const reconciler = new CronJobReconciler({
    client,
    cache: client.cache,
    recorder,
    clock,
    triggers: [...TRIGGERS, poke],
  });
  await client.create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: "ns" } });
  const cronJob = {
    apiVersion: "batch.tutorial.kubebuilder.io/v1",
    kind: "CronJob",
    metadata: { name: "cj", namespace: "ns", creationTimestamp: "2026-11-25T09:30:00Z", annotations: { [POKE]: "p1" } },
    spec: {
      schedule: "0 * * * *",
      ...(o.suspend ? { suspend: true } : {}),
      ...(o.concurrencyPolicy ? { concurrencyPolicy: o.concurrencyPolicy } : {}),
      jobTemplate: {
        spec: { template: { spec: { restartPolicy: "OnFailure", containers: [{ name: "c", image: "busybox" }] } } },
      },
    },
  } as unknown as CronJob;
  client.seed(CronJobKind, cronJob);
  const reconcile = () =>
    reconciler.reconcile(
      { namespace: "ns", name: "cj" },
      { log: discardLogger, reconcileID: "t", signal: new AbortController().signal },
    );
  const jobs = async () => (await client.list<Job>(Kinds.Job, { namespace: "ns" })).items;
  const events = () => recorder.events.map((e) => e.replace(/^(Normal|Warning) /, ""));
  return { client, clock, reconcile, jobs, events };
}

describe("a fourth trigger is a row and its source", () => {
  it("runs once through the one run path: its Job, its Event, its books; the schedule's books untouched", async () => {
    const t = await setUp();
    await t.reconcile();
    const [job] = await t.jobs();
    assert.equal(job?.metadata?.name, pokeName("cj", "p1"));
    assert.equal(job?.metadata?.annotations?.[POKED_BY], "p1");
    assert.ok(
      t.events().includes(`SuccessfulCreate Created job ${pokeName("cj", "p1")} (poke p1)`),
      t.events().join("\n"),
    );
    // Its Job is its own (not an UnexpectedJob), and does not move lastScheduleTime.
    await t.reconcile();
    assert.equal((await t.jobs()).length, 1, "ran once");
    assert.ok(!t.events().some((e) => e.startsWith("UnexpectedJob")), t.events().join("\n"));
    const stored = await t.client.get<CronJob>(CronJobKind, "ns", "cj");
    assert.equal(stored.status?.lastScheduleTime, undefined);
    assert.deepEqual(
      stored.status?.active?.map((a) => a.name),
      [pokeName("cj", "p1")],
    );
  });

  it("runs while the CronJob is suspended, as its row says", async () => {
    const t = await setUp({ suspend: true });
    await t.reconcile();
    assert.deepEqual(
      (await t.jobs()).map((j) => j.metadata?.name),
      [pokeName("cj", "p1")],
    );
  });

  it("is held by Forbid behind a running Job with its own state Event, through the one admission rule", async () => {
    const t = await setUp({ concurrencyPolicy: "Forbid" });
    // The 10:00 slot runs first (the schedule comes first in the table) and keeps running.
    t.clock.set(new Date("2026-11-25T10:00:01Z"));
    await t.reconcile();
    const slotJob = jobNameFor("cj", new Date("2026-11-25T10:00:00Z"));
    const names = (await t.jobs()).map((j) => j.metadata?.name);
    assert.deepEqual(names, [slotJob], "the scheduled run only");
    assert.ok(t.events().includes(`JobAlreadyActive poke p1 waits for ${slotJob}`), t.events().join("\n"));
  });
});
