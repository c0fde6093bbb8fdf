// A trigger is one row everywhere: a sixth trigger, written here as a fixture, is read by every reader of triggers
// without an edit to any of them — its half every reader needs (an api/v1/triggers.ts TriggerRow: words, annotation,
// admission check and what the mutating webhook stamps on a request, how the record names its Jobs, its pending runs)
// and the controller's half (plan, ran, book: a file of its own, controllers/trigger-<row>.ts, listed in
// controllers/triggers.ts). The admission webhook, the record, the group's waiting rule (waitingRunOf), `kubectl cron
// history`, `next`'s pending runs and `why`'s reading of a slot's entries all loop over the rows. A real one would
// touch six files outside cmd/ (api/v1/reasons.ts for its words, a module of its own in api/v1 for its annotations
// and `why` causes, listed in TRIGGER_CAUSES beside its row in api/v1/triggers.ts, its half's file and its line in
// controllers/triggers.ts) and none in cmd/ (one, cmd/kubectl-cron/answer/why/halves.ts, with a `why` half of its
// own); docs/ are generated.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { describe, it } from "node:test";
import {
  type CronJob,
  CronJobResource as CronJobKind,
  type Job,
  type JobSource,
  jobForSlot,
  pendingRuns,
  type RecentRunWire,
  RecordDecision,
  type RecordReason,
  type RecordTrigger,
  rowOfEntry,
  type RunSubject,
  runJobName,
  SCHEDULED_AT_ANNOTATION,
  TRIGGER_ROWS,
  type TriggerRow,
  waitingRunOf,
} from "../../api/v1/index.ts";
import { historyRows } from "../../cmd/kubectl-cron/answer/history.ts";
import { CronJobReconciler, setupCache } from "../../controllers/cronjob_controller.ts";
import { bindRun, type RunParts, type Trigger } from "../../controllers/trigger.ts";
import { TRIGGERS } from "../../controllers/triggers.ts";
import { FakeClock } from "../../runtime/fake-clock.ts";
import { FakeRecorder } from "../../runtime/events/fake.ts";
import { FakeClient } from "../../runtime/fake/client.ts";
import { invalidField } from "../../runtime/field.ts";
import { Kinds } from "../../runtime/kinds.ts";
import { discardLogger } from "../../runtime/log.ts";
import type { AdmissionRequest } from "../../runtime/webhook/index.ts";
import { mutateCronJob, validateCronJob } from "../../webhooks/cronjob_webhook.ts";
import { minimalCronJob, variant } from "../fixtures.ts";
import { withTriggerRow } from "../trigger-row.ts";

/** The nudge: every new value of its annotation asks for one run, its Job named after it. */
const NUDGE = "test.example/nudge";
const NUDGED_BY = "test.example/nudged-by";
/** Who asked for the nudge: the mutating webhook adds it (only the webhook knows the user). */
const NUDGE_ASKED_BY = "test.example/nudge-asked-by";
/** Its own record trigger and reason: words no product row has (a real one adds them to api/v1/reasons.ts). */
const NUDGE_TRIGGER = "Nudge" as RecordTrigger;
const NUDGED = "Nudged" as RecordReason;
const MAX_NUDGE_LENGTH = 12;

const nudgeJobName = (cronJob: string, id: string) => `${cronJob}-n-${id}`;
const nudgeSubject = (id: string | undefined): RunSubject => ({
  trigger: NUDGE_TRIGGER,
  reason: NUDGED,
  ...(id !== undefined ? { request: id } : {}),
});

/** The half every reader needs, as api/v1/triggers.ts writes the product's rows. */
const NUDGE_ROW: TriggerRow<"nudge"> = {
  name: "nudge",
  recordAs: NUDGE_TRIGGER,
  records: [NUDGE_TRIGGER],
  word: "nudged",
  eventReasons: ["SuccessfulCreate", "JobAlreadyActive"],
  requestAnnotation: NUDGED_BY,
  explicit: true,
  movesLastScheduleTime: false,
  takesScheduleSlots: false,
  recorded: (job) => nudgeSubject(job.metadata?.annotations?.[NUDGED_BY]),
  jobOf: (cronJobName, e) => (e.request === undefined ? undefined : nudgeJobName(cronJobName, e.request)),
  // An unchanged request (an update of something else) is not checked again.
  validate: ({ annotations, oldAnnotations }) => {
    const value = annotations[NUDGE];
    if (typeof value !== "string" || value.length <= MAX_NUDGE_LENGTH || value === oldAnnotations?.[NUDGE])
      return { errors: [], warnings: [] };
    const detail = `must be no more than ${MAX_NUDGE_LENGTH} characters`;
    return { errors: [invalidField(`metadata.annotations[${NUDGE}]`, value, detail)], warnings: [] };
  },
  stamp: ({ annotations, oldAnnotations, username }): Record<string, string> =>
    typeof annotations[NUDGE] === "string" && annotations[NUDGE] !== oldAnnotations?.[NUDGE]
      ? { [NUDGE_ASKED_BY]: username }
      : {},
  // Its runs held for their group, read from the record as the retry row reads its attempts.
  pending: (cronJob) =>
    (cronJob.status?.recentRuns ?? [])
      .filter((e) => e.trigger === NUDGE_TRIGGER && e.decision === RecordDecision.Held)
      .map((e) => ({ entry: e, slot: new Date(e.decidedAt ?? 0), order: 0 })),
};

interface NudgeRequest {
  id: string;
}

const nudgeParts: RunParts<NudgeRequest> = {
  job: (cronJob: JobSource, r) => {
    const job = jobForSlot(cronJob, new Date(0));
    const { [SCHEDULED_AT_ANNOTATION]: _slot, ...annotations } = job.metadata?.annotations ?? {};
    job.metadata = {
      ...job.metadata,
      name: nudgeJobName(cronJob.metadata.name ?? "", r.id),
      annotations: { ...annotations, [NUDGED_BY]: r.id },
    };
    return job;
  },
  ran: (view, r) => {
    const job = view.jobs.get(nudgeJobName(view.cronJobName, r.id));
    return job ? { ran: true, job } : { ran: false };
  },
  book: (status) => ({ ...status }),
  created: (r, name) => ({
    event: { reason: "SuccessfulCreate", message: `Created job ${name} (nudge ${r.id})` },
    count: "manual",
    log: `created Job for nudge ${r.id}`,
  }),
  subject: (r) => nudgeSubject(r.id),
};

/** The controller's half: the row spread, and what only a pass does. */
const nudge: Trigger<"nudge"> = {
  ...NUDGE_ROW,
  onReplace: "wait",
  onConflict: "stop",
  plan: (input) => {
    const id = input.cronJob.metadata.annotations?.[NUDGE];
    return id ? { requests: [bindRun(nudge, { id }, nudgeParts)] } : undefined;
  },
  ours: (cronJob, job) =>
    job.metadata?.name === nudgeJobName(cronJob.metadata.name ?? "", job.metadata?.annotations?.[NUDGED_BY] ?? ""),
  unbooked: () => false,
};

/** Runs `fn` with the nudge's row in the API's table, and takes it out again. */
const withNudge = <T>(fn: () => T): T => withTriggerRow(NUDGE_ROW, fn);

describe("a sixth trigger is one row everywhere", () => {
  it("the controller's rows are the API's rows, in the same order, every field the same", () => {
    assert.deepEqual(
      TRIGGERS.map((t) => t.name),
      TRIGGER_ROWS.map((r) => r.name),
    );
    TRIGGER_ROWS.forEach((row, i) => {
      for (const [key, value] of Object.entries(row))
        assert.equal((TRIGGERS[i] as unknown as Record<string, unknown>)[key], value, `${row.name}.${key}`);
    });
  });

  it("the admission webhook asks its row: an over-long nudge is refused, naming the field and the value", () => {
    const now = new Date("2026-11-25T12:00:00Z");
    const value = "n".repeat(MAX_NUDGE_LENGTH + 1);
    const obj = variant(minimalCronJob("cj"), (o) => {
      o.metadata.annotations = { [NUDGE]: value };
    });
    assert.deepEqual(validateCronJob(obj, { now }).errors, [], "not in the table: not checked");
    const refused = withNudge(() => validateCronJob(obj, { now }));
    assert.deepEqual(
      refused.errors.map((e) => [e.field, e.value]),
      [[`metadata.annotations[${NUDGE}]`, value]],
    );
    // What the webhook keeps of the old object is the row's to read: an unchanged request is let through.
    const kept = withNudge(() => validateCronJob(obj, { now, oldAnnotations: { [NUDGE]: value } }));
    assert.deepEqual(kept.errors, []);
  });

  it("the mutating webhook adds what its row stamps on a new request: who asked", async () => {
    const obj = variant(minimalCronJob("cj"), (o) => {
      o.metadata.annotations = { [NUDGE]: "n1" };
    });
    const review = (old?: unknown): AdmissionRequest => ({
      uid: "u1",
      kind: { group: "batch.tutorial.kubebuilder.io", version: "v1", kind: "CronJob" },
      resource: { group: "batch.tutorial.kubebuilder.io", version: "v1", resource: "cronjobs" },
      name: "cj",
      namespace: "default",
      operation: old ? "UPDATE" : "CREATE",
      userInfo: { username: "alice" },
      object: obj,
      ...(old ? { oldObject: old } : {}),
    });
    const stamped = async (old?: unknown) => {
      const r = await mutateCronJob(review(old));
      const ops = JSON.parse(Buffer.from(r.patch ?? "W10=", "base64").toString("utf8")) as { path: string }[];
      return ops.filter((op) => op.path.startsWith("/metadata/annotations/"));
    };
    assert.deepEqual(await stamped(), [], "not in the table: nothing stamped");
    const asked = await withNudge(() => stamped());
    assert.deepEqual(asked, [
      { op: "add", path: "/metadata/annotations/test.example~1nudge-asked-by", value: "alice" },
    ]);
    assert.deepEqual(await withNudge(() => stamped(obj)), [], "an unchanged request: nothing stamped");
  });

  it("the controller runs it through the one run path, and the record names its Job by the row, after a restart too", async () => {
    const clock = new FakeClock("2026-11-25T09:45:00Z");
    const client = new FakeClient({ now: () => clock.now() });
    setupCache(client);
    const recorder = new FakeRecorder({ capacity: 100 });
    const reconcile = () =>
      new CronJobReconciler({
        client,
        cache: client.cache,
        recorder,
        clock,
        triggers: [...TRIGGERS, nudge],
      }).reconcile(
        { namespace: "ns", name: "cj" },
        { log: discardLogger, reconcileID: "t", signal: new AbortController().signal },
      );
    await client.create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: "ns" } });
    client.seed(
      CronJobKind,
      variant(minimalCronJob("cj"), (o) => {
        o.metadata.namespace = "ns";
        o.metadata.annotations = { [NUDGE]: "n1" };
        o.metadata.creationTimestamp = "2026-11-25T09:30:00Z";
        o.spec.schedule = "0 * * * *";
      }) as unknown as CronJob,
    );
    await reconcile();
    const jobs = (await client.list<Job>(Kinds.Job, { namespace: "ns" })).items;
    assert.deepEqual(
      jobs.map((j) => j.metadata?.name),
      [nudgeJobName("cj", "n1")],
    );
    const entry = (await client.get<CronJob>(CronJobKind, "ns", "cj")).status?.recentRuns?.[0];
    assert.deepEqual(
      [entry?.trigger, entry?.reason, entry?.request, entry?.decision, entry?.job],
      [NUDGE_TRIGGER, NUDGED, "n1", "Created", nudgeJobName("cj", "n1")],
    );
    // A new process, the record lost: step 4 enters the Job again from its row's recorded().
    const stored = await client.get<CronJob>(CronJobKind, "ns", "cj");
    await client.updateStatus(CronJobKind, { ...stored, status: { ...stored.status, recentRuns: [] } });
    await reconcile();
    const rebuilt = (await client.get<CronJob>(CronJobKind, "ns", "cj")).status?.recentRuns?.[0];
    assert.deepEqual(
      [rebuilt?.trigger, rebuilt?.reason, rebuilt?.request, rebuilt?.job],
      [NUDGE_TRIGGER, NUDGED, "n1", nudgeJobName("cj", "n1")],
    );
    // `kubectl cron history` says its word, from the API's table.
    const [row] = withNudge(() => historyRows(jobs, stored.metadata!.uid!, clock.now()));
    assert.equal(row?.trigger, "nudged");
  });

  it("the group's waiting rule and the plugin's readers take its facts from its row", () => {
    const now = Date.parse("2026-11-25T12:00:00Z");
    const held: RecentRunWire = {
      trigger: NUDGE_TRIGGER,
      request: "n2",
      decision: RecordDecision.Held,
      reason: "ConcurrencyGroupFull",
      decidedAt: "2026-11-25T11:58:00Z",
    } as RecentRunWire;
    const member = {
      metadata: { name: "cj" },
      spec: { suspend: true, retry: { limit: 1 } },
      status: { recentRuns: [held] },
    };
    withNudge(() => {
      assert.equal(rowOfEntry(TRIGGER_ROWS, held), NUDGE_ROW);
      // Explicit: it waits while the CronJob is suspended, since it was asked.
      assert.equal(waitingRunOf(member, now, [])?.since, Date.parse(held.decidedAt));
      // Its Job, named by its row, ends the wait.
      assert.equal(runJobName("cj", held), nudgeJobName("cj", "n2"));
      const started = [{ metadata: { name: nudgeJobName("cj", "n2") } }];
      assert.equal(waitingRunOf(member, now, started), undefined);
      // `kubectl cron next` and the dashboard list what every row says is pending, each in its row's word.
      assert.deepEqual(
        pendingRuns(member).map((p) => [p.entry, p.word]),
        [[held, "nudged"]],
      );
    });
    // Out of the table, no reader knows it: nothing is hard-coded for it anywhere.
    assert.equal(rowOfEntry(TRIGGER_ROWS, held), undefined);
    assert.equal(runJobName("cj", held), undefined);
    assert.equal(waitingRunOf(member, now, []), undefined);
    assert.deepEqual(pendingRuns(member), []);
  });
});

describe("the controller's table of triggers", () => {
  it("is a file per row, each named in the reconciler's header (what a reader of the steps starts from)", () => {
    const controllers = new URL("../../controllers/", import.meta.url);
    const source = readFileSync(new URL("cronjob_controller.ts", controllers), "utf8");
    const header = source.slice(0, source.indexOf("\nimport "));
    for (const row of TRIGGERS) {
      const file = `trigger-${row.name.toLowerCase()}.ts`;
      assert.ok(existsSync(new URL(file, controllers)), `controllers/${file}: the ${row.name} row's file`);
      assert.ok(header.includes(file), `the header of controllers/cronjob_controller.ts names ${file}`);
    }
  });
});
