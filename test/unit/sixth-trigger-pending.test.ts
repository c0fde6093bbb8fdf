// A sixth trigger shaped like the retry (a spec field, and runs pending later) is one row everywhere too: written here
// as a fixture, "redo" runs a failed slot once more, spec.redo.delaySeconds after its failure. Every reader handles it
// from its row without an edit: the admission webhook checks its spec field; the controller holds it for its delay
// (a Held entry with startsAt), runs it through the one run path, orders its entries after its slot's own (runIndex)
// and does not count a failure it will run again towards spec.stopAfterConsecutiveFailures (runsAgain); `kubectl cron
// next`, `history` (its Job a later run of its slot: runOfJob), `why` and the dashboard say its pending run and its
// Job in its own words.
//
// Proof it is read from the row: with the row out of the table, no reader knows it (the last case).
//
// A real one would touch six files outside cmd/: api/v1/reasons.ts (its record trigger and reasons), a module of its
// own in api/v1 (its spec field's schema, its annotation with its reference entry, its `why` causes), the spec field
// in api/v1/cronjob_types.ts, its row in api/v1/triggers.ts (its causes listed in TRIGGER_CAUSES beside it), its half
// in a file of controllers/ with its line in controllers/triggers.ts; and none in cmd/ (one, answer/why/halves.ts,
// with a `why` half of its own). docs/ are generated.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type AttemptEntryInput,
  classifyJob,
  CRONJOB_NAME_LABEL,
  type CronJob,
  CronJobResource as CronJobKind,
  finishedAt,
  holdsSlotName,
  type Job,
  type JobSource,
  jobForSlot,
  pendingRuns,
  type PendingEntry,
  type PendingInput,
  RecordDecision,
  type RecordReason,
  type RecordTrigger,
  runIndexOf,
  type RunSubject,
  scheduledTimeOf,
  type TriggerRow,
} from "../../api/v1/index.ts";
import { parseCommandLine } from "../../cmd/kubectl-cron/model/args.ts";
import { history, next } from "../../cmd/kubectl-cron/commands/commands.ts";
import { marksOf } from "../../cmd/kubectl-cron/dashboard/marks.ts";
import { diagnose } from "../../cmd/kubectl-cron/answer/why/diagnose.ts";
import { CronJobReconciler, setupCache } from "../../controllers/cronjob_controller.ts";
import { bindRun, type RunParts, type Trigger, type TriggerRun } from "../../controllers/trigger.ts";
import { TRIGGERS } from "../../controllers/triggers.ts";
import type { TimedDecision } from "../../controllers/record.ts";
import { FakeClock } from "../../runtime/fake-clock.ts";
import { FakeRecorder } from "../../runtime/events/fake.ts";
import { FakeClient } from "../../runtime/fake/client.ts";
import { invalidField } from "../../runtime/field.ts";
import type { Client } from "../../runtime/client.ts";
import { Kinds } from "../../runtime/kinds.ts";
import { discardLogger } from "../../runtime/log.ts";
import { validateCronJob } from "../../webhooks/cronjob_webhook.ts";
import { jobStatus, minimalCronJob, variant } from "../fixtures.ts";
import { withTriggerRow } from "../trigger-row.ts";
import { whyFacts } from "../why-facts.ts";

/** The redo's Jobs name the slot's first Job in this annotation. */
const REDO_OF = "test.example/redo-of";
/** Its own record trigger and reasons: words no product row has (a real one adds them to api/v1/reasons.ts). */
const REDO = "Redo" as RecordTrigger;
const REDONE = "RedoAfterFailure" as RecordReason;
const REDO_DELAY = "RedoDelay" as RecordReason;

const redoJobName = (first: string) => `${first}-redo`;
/** spec.redo as the row reads it (a real one: its zod schema). */
const redoOf = (spec: object | undefined): { delaySeconds: number } | undefined => {
  const r = (spec as { redo?: { delaySeconds?: unknown } } | undefined)?.redo;
  return r && typeof r.delaySeconds === "number" ? { delaySeconds: r.delaySeconds } : undefined;
};
const redoSubject = (slot: Date | undefined, first: string | undefined): RunSubject => ({
  trigger: REDO,
  reason: REDONE,
  ...(slot ? { scheduledTime: slot } : {}),
  ...(first !== undefined ? { request: first } : {}),
});
/** A failed slot's own Job (the schedule's) the redo has not run yet. */
const owedFor = (cronJobName: string, job: Readonly<Job>, jobs: readonly Readonly<Job>[]) =>
  holdsSlotName(cronJobName, job) &&
  classifyJob(job) === "failed" &&
  !jobs.some((j) => j.metadata?.name === redoJobName(job.metadata?.name ?? ""));

/** The half every reader needs, as api/v1/triggers.ts writes the product's rows. */
const REDO_ROW: TriggerRow<"redo"> = {
  name: "redo",
  recordAs: REDO,
  records: [REDO],
  word: "redo",
  eventReasons: ["SuccessfulCreate"],
  requestAnnotation: REDO_OF,
  explicit: false,
  movesLastScheduleTime: false,
  takesScheduleSlots: false,
  recorded: (job) => redoSubject(scheduledTimeOf(job), job.metadata?.annotations?.[REDO_OF]),
  jobOf: (_cronJobName, e) => (e.request === undefined ? undefined : redoJobName(e.request)),
  validate: ({ spec }) => {
    const redo = (spec as { redo?: { delaySeconds?: unknown } }).redo;
    const delay = redo?.delaySeconds;
    if (redo === undefined || (typeof delay === "number" && Number.isInteger(delay) && delay >= 0))
      return { errors: [], warnings: [] };
    return {
      errors: [invalidField("spec.redo.delaySeconds", delay, "must be a whole number of seconds, 0 or more")],
      warnings: [],
    };
  },
  runIndex: () => 1,
  runOfJob: (job) => {
    const first = job.metadata?.annotations?.[REDO_OF];
    return first === undefined ? undefined : { order: 1, which: "again", first };
  },
  runsAgain: (job, o) =>
    redoOf(o.spec) !== undefined && owedFor(job.metadata?.labels?.[CRONJOB_NAME_LABEL] ?? "", job, o.jobs),
  pending: <E extends AttemptEntryInput>(cronJob: PendingInput<E>): PendingEntry<E>[] =>
    !redoOf(cronJob.spec)
      ? []
      : (cronJob.status?.recentRuns ?? [])
          .filter((e) => e.trigger === REDO && e.decision === RecordDecision.Held && e.scheduledTime)
          .map((e) => ({
            entry: e,
            slot: new Date(e.scheduledTime!),
            what: "a second run",
            order: 1,
            ...(e.startsAt ? { startsAt: new Date(e.startsAt) } : {}),
            ...(e.request ? { failedJob: e.request } : {}),
          })),
};

interface RedoRequest {
  slot: Date;
  first: string;
}

const redoParts: RunParts<RedoRequest> = {
  job: (cronJob: JobSource, r) => {
    const job = jobForSlot(cronJob, r.slot);
    job.metadata = {
      ...job.metadata,
      name: redoJobName(r.first),
      annotations: { ...job.metadata?.annotations, [REDO_OF]: r.first },
    };
    return job;
  },
  ran: (view, r) => {
    const job = view.jobs.get(redoJobName(r.first));
    return job ? { ran: true, job } : { ran: false };
  },
  book: (status) => ({ ...status }),
  created: (r, name) => ({
    event: { reason: "SuccessfulCreate", message: `Created job ${name} (redo of ${r.first})` },
    count: "created",
    log: `created Job for the redo of ${r.first}`,
  }),
  subject: (r) => redoSubject(r.slot, r.first),
};

/** The controller's half: each failed slot's Job owed its redo, held until its delay has passed. */
const redo: Trigger<"redo"> = {
  ...REDO_ROW,
  onReplace: "wait",
  onConflict: "next",
  plan: (input) => {
    const policy = redoOf(input.cronJob.spec);
    if (!policy) return undefined;
    const name = input.cronJob.metadata.name ?? "";
    const requests: TriggerRun[] = [];
    const decisions: TimedDecision[] = [];
    let wakeAt: Date | undefined;
    for (const job of input.jobs) {
      const slot = scheduledTimeOf(job);
      if (!slot || !owedFor(name, job, input.jobs)) continue;
      const first = job.metadata?.name ?? "";
      const at = new Date((finishedAt(job) ?? input.now).getTime() + policy.delaySeconds * 1000);
      if (at <= input.now) {
        requests.push(bindRun(redo, { slot, first }, redoParts));
        continue;
      }
      const message = `a second run starts at ${at.toISOString()}`;
      const held = { decision: RecordDecision.Held, reason: REDO_DELAY, message, startsAt: at };
      decisions.push({ decision: { ...redoSubject(slot, first), ...held }, at: input.now });
      if (!wakeAt || at < wakeAt) wakeAt = at;
    }
    return { requests, decisions, ...(wakeAt ? { wakeAt } : {}) };
  },
  ours: (_cronJob, job) => job.metadata?.name === redoJobName(job.metadata?.annotations?.[REDO_OF] ?? ""),
  unbooked: () => false,
};

/** Runs `fn` with the redo's row in the API's table, and takes it out again. */
const withRedo = <T>(fn: () => T): T => withTriggerRow(REDO_ROW, fn);

const SLOT = "2026-11-25T10:00:00Z";
const FIRST = `cj-${Date.parse(SLOT) / 1000}`;

describe("a sixth trigger with a spec field and runs pending later is one row everywhere", () => {
  it("the admission webhook checks its spec field by its row, naming the field and the value", async () => {
    const now = new Date("2026-11-25T12:00:00Z");
    const obj = variant(minimalCronJob("cj"), (o) => {
      o.spec.redo = { delaySeconds: -5 };
    });
    assert.deepEqual(validateCronJob(obj, { now }).errors, [], "not in the table: not checked");
    const refused = await withRedo(() => validateCronJob(obj, { now }));
    assert.deepEqual(
      refused.errors.map((e) => [e.field, e.value]),
      [["spec.redo.delaySeconds", -5]],
    );
  });

  it("is held for its delay, run once through the run path, and said by every reader in its own words", async () => {
    const clock = new FakeClock("2026-11-25T10:00:05Z");
    const client = new FakeClient({ now: () => clock.now() });
    setupCache(client);
    const recorder = new FakeRecorder({ capacity: 100 });
    const reconcile = () =>
      new CronJobReconciler({ client, cache: client.cache, recorder, clock, triggers: [...TRIGGERS, redo] }).reconcile(
        { namespace: "ns", name: "cj" },
        { log: discardLogger, reconcileID: "t", signal: new AbortController().signal },
      );
    const stored = () => client.get<CronJob>(CronJobKind, "ns", "cj");
    const jobNames = async () =>
      (await client.list<Job>(Kinds.Job, { namespace: "ns" })).items.map((j) => j.metadata?.name).sort();
    const fail = async (name: string, at: string) => {
      clock.set(new Date(at));
      const end = Date.parse(at);
      const job = await client.get<Job>(Kinds.Job, "ns", name);
      const status = jobStatus({
        state: "failed",
        start: end - 1000,
        end,
        failure: { reason: "BackoffLimitExceeded" },
      });
      await client.updateStatus(Kinds.Job, { ...job, status });
    };
    const ctx = {
      client: client as unknown as Client,
      namespace: "ns",
      now: () => clock.now(),
      sleep: async () => undefined,
    };
    const args = (...argv: string[]) => {
      const a = parseCommandLine(argv);
      assert.ok(a !== "help");
      return a;
    };
    await client.create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: "ns" } });
    client.seed(
      CronJobKind,
      variant(minimalCronJob("cj"), (o) => {
        o.metadata.namespace = "ns";
        o.metadata.creationTimestamp = "2026-11-25T09:30:00Z";
        o.spec.schedule = "0 * * * *";
        o.spec.stopAfterConsecutiveFailures = 1;
        o.spec.redo = { delaySeconds: 600 };
      }) as unknown as CronJob,
    );

    await withRedo(async () => {
      await reconcile();
      assert.deepEqual(await jobNames(), [FIRST]);
      // The slot's Job fails: the redo is owed, so the failure does not stop the CronJob (runsAgain); it is held.
      await fail(FIRST, "2026-11-25T10:02:00Z");
      await reconcile();
      let cronJob = await stored();
      assert.equal(cronJob.status?.stopped, undefined, "a failure the redo runs again is not counted");
      assert.equal(cronJob.status?.consecutiveFailures, 0);
      const held = cronJob.status?.recentRuns?.find((e) => e.trigger === REDO);
      assert.deepEqual(
        [held?.decision, held?.reason, held?.request, held?.startsAt],
        [RecordDecision.Held, REDO_DELAY, FIRST, "2026-11-25T10:12:00Z"],
      );
      // The record orders it after its slot's own entry (its row's runIndex).
      assert.equal(runIndexOf(held!), 1);

      // Every reader of pending runs says it in its row's word and words.
      assert.deepEqual(
        pendingRuns(cronJob).map((p) => [p.word, p.what, p.slot.toISOString(), p.startsAt?.toISOString()]),
        [["redo", "a second run", "2026-11-25T10:00:00.000Z", "2026-11-25T10:12:00.000Z"]],
      );
      const nextOut = await next(ctx, args("next", "cj", "-o", "json"));
      assert.deepEqual((nextOut.json as { retries: unknown[] }).retries, [
        {
          trigger: "redo",
          scheduledTime: SLOT,
          startsAt: "2026-11-25T10:12:00Z",
          failedJob: FIRST,
        },
      ]);
      const nextText = await next(ctx, args("next", "cj"));
      assert.match(nextText.text, /^redo: a second run of 2026-11-25T10:00:00Z starts at 2026-11-25T10:12:00Z/m);
      const marks = marksOf({
        cronJob,
        jobs: [],
        calendars: [],
        from: new Date("2026-11-25T09:00:00Z"),
        to: new Date("2026-11-25T11:00:00Z"),
        now: clock.now(),
      }).marks.filter((m) => m.kind === "pending");
      assert.deepEqual(
        marks.map((m) => [m.at, m.slot, m.trigger]),
        [["2026-11-25T10:12:00Z", SLOT, "redo"]],
      );
      assert.match(marks[0]!.title, /redo: a second run of slot 2026-11-25T10:00:00Z after Job /);

      // `why` about the slot: its run failed, and the evidence says the redo pending, in its row's words.
      const jobs = (await client.list<Job>(Kinds.Job, { namespace: "ns" })).items;
      const asked = diagnose(whyFacts(cronJob, clock.now(), { jobs }));
      assert.equal(asked.cause, "job-failed");
      assert.ok(
        asked.evidence.some((l) => /^redo: a second run of .* starts at .*: Job cj-\d+ failed/.test(l)),
        asked.evidence.join("\n"),
      );

      // Its delay passed: the run path makes its Job once, and the record's entry says so.
      clock.set(new Date("2026-11-25T10:12:01Z"));
      await reconcile();
      await reconcile();
      assert.deepEqual(await jobNames(), [FIRST, redoJobName(FIRST)]);
      cronJob = await stored();
      const ran = cronJob.status?.recentRuns?.filter((e) => e.trigger === REDO);
      assert.deepEqual(
        ran?.map((e) => [e.decision, e.request, e.job]),
        [[RecordDecision.Created, FIRST, redoJobName(FIRST)]],
      );
      assert.deepEqual(pendingRuns(cronJob), [], "no longer pending");
      const hist = await history(ctx, args("history", "cj", "-o", "json"));
      assert.deepEqual(
        (hist.json as { items: { name: string; trigger: string; attempt?: string; retryOf?: string }[] }).items.map(
          (r) => [r.name, r.trigger, r.attempt, r.retryOf],
        ),
        [
          [FIRST, "scheduled", undefined, undefined],
          [redoJobName(FIRST), "redo", "again", FIRST],
        ],
      );

      // The redo fails too: nothing runs it again, so it is counted, and the CronJob stops.
      await fail(redoJobName(FIRST), "2026-11-25T10:13:00Z");
      await reconcile();
      cronJob = await stored();
      assert.equal(cronJob.status?.consecutiveFailures, 1);
      assert.ok(cronJob.status?.stopped, JSON.stringify(cronJob.status));
    });
  });

  it("out of the table, no reader knows it", () => {
    const held = {
      trigger: REDO,
      scheduledTime: SLOT,
      request: FIRST,
      decision: RecordDecision.Held,
      reason: REDO_DELAY,
      decidedAt: "2026-11-25T10:02:05Z",
      startsAt: "2026-11-25T10:12:00Z",
    };
    const cronJob = { spec: { redo: { delaySeconds: 600 } }, status: { recentRuns: [held] } };
    assert.deepEqual(pendingRuns(cronJob), []);
    assert.equal(runIndexOf(held), 0);
  });
});
