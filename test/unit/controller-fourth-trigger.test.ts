// A trigger is one row: a fourth trigger, defined here as a test fixture (a row of controllers/triggers.ts's shape
// plus its source), runs through the reconciler's one run path — admission, the create, Events, counts, the
// books (which Jobs are its own, which move lastScheduleTime) — with no edit to runs.ts, observe.ts or the
// controller. The fixture: a "poke" annotation whose every new value asks for one run, its Job named after it. It
// brings its own words: the record reason of its runs (recorded, subject), the Event reasons they make
// (eventReasons) and its own admission check (validate): the record and the webhook read them from the row, never
// from a switch of their own.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import {
  BACKFILL_ANNOTATION,
  BACKFILL_REQUEST_ANNOTATION,
  backfillAnnotationValue,
  type CronJob,
  CronJobResource as CronJobKind,
  type Job,
  type JobSource,
  jobForSlot,
  jobNameFor,
  MAX_RUN_NOW_REQUEST_LENGTH,
  type RecordReason,
  RUN_NOW_ANNOTATION,
  SCHEDULED_AT_ANNOTATION,
  TRIGGER_ROWS,
  type TriggerRow,
  type ValidationInput,
} from "../../api/v1/index.ts";
import { CronJobReconciler, setupCache } from "../../controllers/cronjob_controller.ts";
import type { RunSubject } from "../../api/v1/index.ts";
import { bindRun, type RunParts, type Trigger, triggerOfJob, type TriggerRun } from "../../controllers/trigger.ts";
import { TRIGGERS } from "../../controllers/triggers.ts";
import { FakeClock } from "../../runtime/fake-clock.ts";
import { FakeRecorder } from "../../runtime/events/fake.ts";
import { FakeClient } from "../../runtime/fake/client.ts";
import { invalidField } from "../../runtime/field.ts";
import { Kinds } from "../../runtime/kinds.ts";
import { discardLogger } from "../../runtime/log.ts";
import { validateCronJob } from "../../webhooks/cronjob_webhook.ts";
import { batchJob, jobStatus, minimalCronJob, variant } from "../fixtures.ts";

const POKE = "test.example/poke";
const POKED_BY = "test.example/poked-by";
/** The poke's own record reason: no other row's, and none the record knows by itself. */
const POKED = "Poked" as RecordReason;
/** The poke's own admission limit on its annotation. */
const MAX_POKE_LENGTH = 16;

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
  subject: (r) => pokeSubject(r.id),
};

/**
 * The record has no trigger of its own for a poke (a request made by hand, as run-now is), but the reason is the
 * poke's own: the record takes it from the row.
 */
const pokeSubject = (id: string | undefined): RunSubject => ({
  trigger: "RunNow",
  reason: POKED,
  ...(id !== undefined ? { request: id } : {}),
});

const poke: Trigger<"poke"> = {
  name: "poke",
  recordAs: "RunNow",
  records: ["RunNow"],
  word: "poke",
  jobOf: (cronJobName, e) => (e.request === undefined ? undefined : pokeName(cronJobName, e.request)),
  recorded: (job) => pokeSubject(job.metadata?.annotations?.[POKED_BY]),
  // Its Events: the create's and the hold's (not run-now's RunNow and RunNowDeferred).
  eventReasons: ["SuccessfulCreate", "JobAlreadyActive"],
  validate: ({ annotations }: ValidationInput) => {
    const value = annotations[POKE];
    if (typeof value !== "string" || value.length <= MAX_POKE_LENGTH) return { errors: [], warnings: [] };
    const detail = `must be no more than ${MAX_POKE_LENGTH} characters`;
    return { errors: [invalidField(`metadata.annotations[${POKE}]`, value, detail)], warnings: [] };
  },
  explicit: true,
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

interface SetUp {
  suspend?: boolean;
  concurrencyPolicy?: "Forbid";
  /** The CronJob's annotations (default: a poke "p1"). */
  annotations?: Record<string, string>;
  /** More of the spec (retry, ...). */
  spec?: Record<string, unknown>;
  /** The table (default: the product's and the poke). */
  triggers?: readonly Trigger[];
}

async function setUp(o: SetUp = {}) {
  const clock = new FakeClock("2026-11-25T09:45:00Z");
  const client = new FakeClient({ now: () => clock.now() });
  setupCache(client);
  const recorder = new FakeRecorder({ capacity: 100 });
  const triggers = o.triggers ?? [...TRIGGERS, poke];
  const reconcilerOf = () => new CronJobReconciler({ client, cache: client.cache, recorder, clock, triggers });
  let reconciler = reconcilerOf();
  await client.create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: "ns" } });
  const cronJob = {
    apiVersion: "batch.tutorial.kubebuilder.io/v1",
    kind: "CronJob",
    metadata: {
      name: "cj",
      namespace: "ns",
      creationTimestamp: "2026-11-25T09:30:00Z",
      annotations: o.annotations ?? { [POKE]: "p1" },
    },
    spec: {
      schedule: "0 * * * *",
      ...(o.suspend ? { suspend: true } : {}),
      ...(o.concurrencyPolicy ? { concurrencyPolicy: o.concurrencyPolicy } : {}),
      jobTemplate: {
        spec: { template: { spec: { restartPolicy: "OnFailure", containers: [{ name: "c", image: "busybox" }] } } },
      },
      ...o.spec,
    },
  } as unknown as CronJob;
  client.seed(CronJobKind, cronJob);
  const reconcile = () =>
    reconciler.reconcile(
      { namespace: "ns", name: "cj" },
      { log: discardLogger, reconcileID: "t", signal: new AbortController().signal },
    );
  /** A new process: nothing remembered, only what the API server stores. */
  const restart = () => {
    reconciler = reconcilerOf();
  };
  const jobs = async () => (await client.list<Job>(Kinds.Job, { namespace: "ns" })).items;
  const stored = () => client.get<CronJob>(CronJobKind, "ns", "cj");
  const events = () => recorder.events.map((e) => e.replace(/^(Normal|Warning) /, ""));
  /** Ends a running Job as the Job controller would, now. */
  const finish = async (job: Job, state: "complete" | "failed") => {
    const at = clock.now().getTime();
    await client.updateStatus(Kinds.Job, { ...job, status: jobStatus({ state, start: at - 1000, end: at }) });
  };
  return { client, clock, reconcile, restart, jobs, stored, events, finish };
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

/** What the rows said while a reconciler ran them: each row's Event reasons and record reasons. */
interface Said {
  events: Map<string, Set<string>>;
  reasons: Map<string, Set<string>>;
}

/**
 * The row as it is, noting every Event its runs make (its plan's, a create's, a hold's, its finish's) and every
 * reason its runs are recorded with (subject() for the run path, recorded() for step 4).
 */
function noted(row: Trigger, said: Said): Trigger {
  const note = (m: Map<string, Set<string>>, v: string) => m.set(row.name, (m.get(row.name) ?? new Set()).add(v));
  const event = <E extends { reason: string }>(e: E) => (note(said.events, e.reason), e);
  const reason = (s: RunSubject) => (note(said.reasons, s.reason), s);
  const run = (r: TriggerRun): TriggerRun => ({
    ...r,
    ...(r.held ? { held: (running: string[]) => event(r.held!(running)) } : {}),
    created: (name) => {
      const made = r.created(name);
      event(made.event);
      return made;
    },
    subject: () => reason(r.subject()),
  });
  return {
    ...row,
    recorded: (job) => reason(row.recorded(job)),
    plan: (input) => {
      const plan = row.plan(input);
      if (!plan) return plan;
      plan.events?.forEach(event);
      const { finish } = plan;
      return {
        ...plan,
        requests: [...plan.requests].map(run),
        ...(finish
          ? {
              finish: (status, complete) => {
                const done = finish(status, complete);
                done.events.forEach(event);
                return done;
              },
            }
          : {}),
      };
    },
  };
}

describe("the poke brings its own words: record reason, Event reasons, admission check", () => {
  it("its Job's record entry carries the poke's reason, not run-now's; so does the entry step 4 rebuilds after a crash", async () => {
    const want = {
      trigger: "RunNow",
      request: "p1",
      decision: "Created",
      reason: "Poked",
      decidedAt: "2026-11-25T09:45:00Z",
      job: pokeName("cj", "p1"),
    };
    // The run path's entry (subject()).
    const t = await setUp();
    await t.reconcile();
    const entries = (await t.stored()).status?.recentRuns;
    assert.deepEqual(entries, [want]);

    // A crash between the create and the status write: the next process enters the Job from the Job (recorded()).
    const c = await setUp();
    c.client.injectError({ verb: "updateStatus", kind: CronJobKind, times: 1 }, new Error("killed"));
    await assert.rejects(c.reconcile(), /killed/);
    assert.equal((await c.stored()).status?.recentRuns, undefined, "the status write was lost");
    c.restart();
    c.clock.set(new Date("2026-11-25T09:46:00Z"));
    await c.reconcile();
    assert.equal((await c.jobs()).length, 1, "no second Job");
    assert.deepEqual((await c.stored()).status?.recentRuns, [want], "rebuilt at the Job's creation, with its reason");
  });

  it("every Event a row's run made is one of its eventReasons; every row records with reasons of its own", async () => {
    const said: Said = { events: new Map(), reasons: new Map() };
    const rows = [...TRIGGERS, poke].map((row) => noted(row, said));
    const t = await setUp({
      concurrencyPolicy: "Forbid",
      triggers: rows,
      annotations: {
        [POKE]: "p1",
        [RUN_NOW_ANNOTATION]: "r1",
        [BACKFILL_ANNOTATION]: backfillAnnotationValue({
          id: "bf",
          from: new Date("2026-11-25T06:00:00Z"),
          to: new Date("2026-11-25T07:00:00Z"),
          parallelism: 1,
        }),
      },
      spec: { retry: { limit: 1 }, after: [{ cronJob: "up" }] },
    });
    // The after row's upstream, whose one run ends after the first pass started the book.
    t.client.seed(CronJobKind, {
      ...minimalCronJob("up"),
      metadata: { name: "up", namespace: "ns", uid: "uid-up" },
    } as unknown as CronJob);
    // Forbid: one Job at a time, so a row's run waits behind another's (its hold) and then runs (its create): the
    // 10:00 slot first, run-now and the poke held behind it. Every scheduled slot's Job fails, so the retry row runs
    // too (held behind run-now's Job first); every other Job completes.
    t.clock.set(new Date("2026-11-25T10:00:01Z"));
    for (let i = 0; i < 30; i++) {
      await t.reconcile();
      if (i === 0) {
        const at = t.clock.now().getTime() + 60_000;
        t.client.seed(
          Kinds.Job,
          batchJob({
            name: "up-1",
            namespace: "ns",
            uid: "uid-up-1",
            owner: { name: "up", uid: "uid-up" },
            state: "complete",
            start: at - 1000,
            end: at,
          }),
        );
      }
      for (const job of await t.jobs()) {
        if (job.status?.conditions?.length) continue;
        const slotJob =
          /^cj-\d+$/.test(job.metadata?.name ?? "") && !job.metadata?.annotations?.[BACKFILL_REQUEST_ANNOTATION];
        await t.finish(job, slotJob ? "failed" : "complete");
      }
      t.clock.advance(5 * 60_000);
    }
    const log = t.events().join("\n");
    for (const row of rows) {
      const made = [...(said.events.get(row.name) ?? [])];
      assert.ok(made.length > 0, `${row.name} made Events: ${log}`);
      for (const reason of made) {
        assert.ok(row.eventReasons.includes(reason as never), `${row.name}'s ${reason} is in its eventReasons`);
      }
    }
    // The holds of the manual rows were seen (their own Events), not only their creates.
    assert.ok(said.events.get("runNow")?.has("RunNowDeferred"), log);
    assert.ok(said.events.get("poke")?.has("JobAlreadyActive"), log);
    assert.ok(said.events.get("retry")?.has("RetryCreated"), log);
    assert.ok(said.events.get("retry")?.has("JobAlreadyActive"), log);
    assert.ok(said.events.get("backfill")?.has("BackfillComplete"), log);
    assert.ok(!said.events.get("poke")?.has("RunNow"), "the poke does not borrow run-now's Events");

    // No two rows record their runs with the same reason; the poke's is its own.
    const owner = new Map<string, string>();
    for (const row of rows) {
      const reasons = said.reasons.get(row.name) ?? new Set();
      assert.ok(reasons.size > 0, `${row.name} recorded a run`);
      for (const r of reasons) {
        assert.equal(owner.get(r) ?? row.name, row.name, `${r}: ${owner.get(r)} and ${row.name}`);
        owner.set(r, row.name);
      }
    }
    assert.deepEqual([...(said.reasons.get("poke") ?? [])], ["Poked"]);
    // And the record says so: each Job's entry has the reason its row gives.
    const jobs = new Map((await t.jobs()).map((j) => [j.metadata?.name, j]));
    const entries = ((await t.stored()).status?.recentRuns ?? []).filter((e) => e.job && jobs.has(e.job));
    assert.ok(entries.length > 0);
    for (const e of entries) {
      const job = jobs.get(e.job)!;
      assert.equal(e.reason, triggerOfJob(rows, job).recorded(job).reason, `${e.job}'s entry`);
    }
  });
});

describe("admission is row-driven: the webhook asks every row of TRIGGER_ROWS (api/v1)", () => {
  const now = new Date("2026-11-25T12:00:00Z");
  const withAnnotations = (annotations: Record<string, string>, spec: Record<string, unknown> = {}) =>
    variant(minimalCronJob("cj"), (o) => {
      o.metadata.annotations = annotations;
      o.spec.schedule = "0 * * * *";
      Object.assign(o.spec, spec);
    });
  const table = TRIGGER_ROWS as TriggerRow[];

  /** Runs `fn` with the table changed by `change`, and puts the table back as it was. */
  function withTable<T>(change: (rows: TriggerRow[]) => void, fn: () => T): T {
    const saved = table.map((row) => ({ row, validate: row.validate }));
    const rows = [...table];
    try {
      change(table);
      return fn();
    } finally {
      table.splice(0, table.length, ...rows);
      for (const { row, validate } of saved) {
        if (validate) row.validate = validate;
        else delete row.validate;
      }
    }
  }

  it("calls the validate of every row that has one, once, with the object's annotations, spec and time", () => {
    const calls = new Map<string, ValidationInput[]>();
    const checked = table.filter((row) => row.validate);
    assert.deepEqual(
      checked.map((r) => r.name),
      ["schedule", "runNow", "backfill", "retry", "after"],
      "the rows with a check of their own",
    );
    const obj = withAnnotations({ [RUN_NOW_ANNOTATION]: "r1" }, { retry: { limit: 2 } });
    withTable(
      (rows) => {
        for (const row of rows) {
          const own = row.validate?.bind(row);
          if (!own) continue;
          row.validate = (input) => {
            calls.set(row.name, [...(calls.get(row.name) ?? []), input]);
            return own(input);
          };
        }
      },
      () => assert.deepEqual(validateCronJob(obj, { now }), { errors: [], warnings: [] }),
    );
    for (const row of checked) {
      const got = calls.get(row.name) ?? [];
      assert.equal(got.length, 1, `${row.name}.validate called once`);
      assert.equal(got[0]!.annotations[RUN_NOW_ANNOTATION], "r1");
      assert.deepEqual(got[0]!.spec.retry, { limit: 2 });
      assert.equal(got[0]!.now, now);
      assert.ok(got[0]!.schedules, "the parsed schedules");
    }
  });

  it("refuses an over-long run-now request and a bad backfill request, naming the field and the value", () => {
    const long = "x".repeat(MAX_RUN_NOW_REQUEST_LENGTH + 1);
    const runNow = validateCronJob(withAnnotations({ [RUN_NOW_ANNOTATION]: long }), { now });
    assert.deepEqual(
      runNow.errors.map((e) => [e.field, e.value]),
      [[`metadata.annotations[${RUN_NOW_ANNOTATION}]`, long]],
    );
    const future = backfillAnnotationValue({
      id: "b",
      from: new Date("2026-11-25T00:00:00Z"),
      to: new Date("2026-11-26T00:00:00Z"),
      parallelism: 1,
    });
    for (const [value, why] of [
      ["tomorrow", /must be JSON/],
      [future, /is in the future/],
    ] as const) {
      const { errors } = validateCronJob(withAnnotations({ [BACKFILL_ANNOTATION]: value }), { now });
      assert.deepEqual(
        errors.map((e) => [e.field, e.value]),
        [[`metadata.annotations[${BACKFILL_ANNOTATION}]`, value]],
      );
      assert.match(errors[0]!.detail ?? "", why);
    }
    // The retry row's own warning: a delay that cannot fit between two slots with Forbid.
    const { errors, warnings } = validateCronJob(
      withAnnotations({}, { concurrencyPolicy: "Forbid", retry: { limit: 1, delaySeconds: 3600 } }),
      { now },
    );
    assert.deepEqual(errors, []);
    assert.equal(warnings.filter((w) => w.startsWith("spec.retry.delaySeconds: 3600")).length, 1, warnings.join("\n"));
  });

  it("the checks are the rows' alone: a row without its check lets its request through, a new row's check refuses", () => {
    const long = "x".repeat(MAX_RUN_NOW_REQUEST_LENGTH + 1);
    const runNow = withAnnotations({ [RUN_NOW_ANNOTATION]: long });
    assert.equal(validateCronJob(runNow, { now }).errors.length, 1);
    const unchecked = withTable(
      (rows) => delete rows.find((r) => r.name === "runNow")!.validate,
      () => validateCronJob(runNow, { now }),
    );
    assert.deepEqual(unchecked.errors, [], "the webhook keeps no check of its own for run-now");

    // The poke, a row of the table: the webhook asks it too.
    const poked = withAnnotations({ [POKE]: "p".repeat(MAX_POKE_LENGTH + 1) });
    assert.deepEqual(validateCronJob(poked, { now }).errors, [], "not a row of the product: not checked");
    const refused = withTable(
      (rows) => rows.push(poke),
      () => validateCronJob(poked, { now }),
    );
    assert.deepEqual(
      refused.errors.map((e) => [e.field, e.value]),
      [[`metadata.annotations[${POKE}]`, "p".repeat(MAX_POKE_LENGTH + 1)]],
    );
    assert.equal(table.length, TRIGGERS.length);
    assert.ok(!TRIGGER_ROWS.includes(poke), "the table is put back");
    assert.ok(!table.includes(poke), "the table is put back");
  });
});
