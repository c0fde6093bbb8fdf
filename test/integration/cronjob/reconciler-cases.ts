// The behaviour table of the CronJob reconciler: every numbered rule, driven with a fake clock. One table,
// two drivers: reconciler.test.ts runs it against envtest's apiserver (integration), and
// test/unit/cronjob-reconciler-table.test.ts against the in-memory FakeClient (unit, seconds). What only
// a real apiserver proves (the schema, real conflicts, dry-run, the cache lagging behind writes,
// restarts) stays in the other integration tests, not here.
// The cases are rows of data (rows.ts: times are offsets from the CronJob's first slot h1; no pass has seen
// the CronJob, the clock at h1 - 30m). The one that looks at a Job's make-up (template, owner reference, label
// selector, no status write on a repeat) is hand-written beside them.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { CRONJOB_NAME_LABEL } from "../../../api/v1/index.ts";
import { K8S_SCHEDULED_TIMESTAMP_ANNOTATION, SCHEDULED_AT_ANNOTATION, type Job } from "../../../api/v1/index.ts";
import type { ObjectClient } from "../../../runtime/interfaces.ts";
import { Kinds } from "../../../runtime/kinds.ts";
import { condition, type ReconcileHarness, type ReconcilerDriver } from "./harness.ts";
import { HOUR, MIN, type Names, type Row, rowTable, runRows, type Step } from "./rows.ts";

const iso = (t: number) => new Date(t).toISOString().replace(/\.\d{3}Z$/, "Z");
const jobName = (cj: string, slot: number) => `${cj}-${slot / 1000}`;

const suspendRows: Row[] = [
  {
    title: "suspend: no Jobs, no nextScheduleTime, Available=False/Suspended, no event; unsuspend runs the latest slot",
    spec: { suspend: true },
    steps: [
      { at: 2 * HOUR + 1000, reconcile: "pass", requeue: "none" },
      {
        expect: {
          jobCount: 0,
          status: { nextScheduleTime: null },
          conditions: { Available: "Suspended" },
          events: { are: [] },
        },
      },
      { patch: { suspend: false } },
      "pass",
      { expect: { jobNames: [2 * HOUR] } },
    ],
  },
];

const concurrencyRows: Row[] = [
  {
    title: "Forbid: reports JobAlreadyActive once per slot, keeps the slot due, runs it when the active Job finishes",
    spec: { concurrencyPolicy: "Forbid" },
    steps: [
      { at: 1000, reconcile: "pass" },
      "forget events",
      { at: HOUR + 1000, reconcile: "pass" },
      "pass",
      { expect: { jobCount: 1, events: { startingWith: "Normal JobAlreadyActive", count: 1 } } },
      { finish: 0, as: "Complete", start: 1000, end: HOUR + 5000 },
      { at: HOUR + 10_000, reconcile: "pass" },
      { expect: { jobNames: [0, HOUR] } },
    ],
  },
  {
    title: "Replace: deletes the active Job and creates the new one",
    spec: { concurrencyPolicy: "Replace" },
    steps: [
      { at: 1000, reconcile: "pass" },
      "forget events",
      { at: HOUR + 1000, reconcile: "pass" },
      {
        expect: {
          jobNames: [HOUR],
          events: {
            are: [
              (c) => `Normal SuccessfulDelete Deleted job ${c.job(0)}`,
              (c) => `Normal SuccessfulCreate Created job ${c.job(HOUR)}`,
            ],
          },
          status: { active: [HOUR] },
        },
      },
    ],
  },
  {
    title: "Allow: runs concurrently",
    steps: [
      { at: 1000, reconcile: "pass" },
      { at: HOUR + 1000, reconcile: "pass" },
      { expect: { status: { active: 2 } } },
    ],
  },
  {
    title: "skips a slot past startingDeadlineSeconds, reports MissSchedule once and sets lastMissedTime",
    spec: { startingDeadlineSeconds: 60 },
    steps: [
      { at: 5 * MIN, reconcile: "pass" },
      "pass",
      {
        expect: {
          jobCount: 0,
          status: { lastMissedTime: 0 },
          events: { count: 1, firstHas: [/^Warning MissSchedule Missed scheduled time to start a job: /] },
        },
      },
      // Within the deadline the next slot runs.
      { at: HOUR + 30_000, reconcile: "pass" },
      { expect: { jobNames: [HOUR] } },
    ],
  },
];

const requeueRows: Row[] = [
  {
    title: "never requeues with a non-positive delay",
    // Just before the next slot: the delay is still > 0.
    steps: [{ at: HOUR - 1, reconcile: "pass", requeue: { atLeastMs: 10 } }],
  },
];

const firstSlotRows: Row[] = [
  {
    title: "does nothing before the first slot and requeues for it",
    steps: [
      { at: { afterCreation: 1000 }, reconcile: "pass", requeue: 0 },
      {
        expect: {
          jobCount: 0,
          status: { nextScheduleTime: 0 },
          conditions: { Available: "Scheduled", Progressing: { status: "False" }, Degraded: "AsExpected" },
        },
      },
    ],
  },
];

/** Jobs that someone else than the pass created or deleted, and status that someone else wrote or lost. */
const storedRows: Row[] = [
  {
    title: "after a crash between create and status write, adopts its own Job instead of creating another",
    steps: [
      { createJob: 0 }, // the slot's Job, by a process that died before its status write
      { at: 2000, reconcile: "pass" },
      { expect: { jobCount: 1, status: { lastScheduleTime: 0, active: [0] } } },
      { expect: { events: { are: [] } }, why: "no UnexpectedJob for our own Job" },
    ],
  },
  {
    title: "reports a foreign Job holding the slot's name, without throwing or looping",
    steps: [
      { createJob: 0, owner: "none" },
      { at: 1000, reconcile: "pass", requeue: { atLeastMs: 1 } },
      {
        expect: {
          events: {
            count: 1,
            firstHas: [
              /^Warning FailedCreate Error creating job .* already exists and is not controlled by this CronJob/,
            ],
          },
          conditions: { Degraded: { reason: "JobCreationFailed", status: "True" } },
        },
      },
      { expect: { status: { lastScheduleTime: null } }, why: "the slot did not run" },
    ],
  },
  {
    title: "classifies finished Jobs, reports SawCompletedJob, records lastSuccessfulTime, and clears Degraded",
    steps: [
      { at: 1000, reconcile: "pass" },
      "forget events",
      { finish: 0, as: "Failed", start: 1000, end: 60_000 },
      { at: 2 * MIN, reconcile: "pass" },
      {
        expect: {
          status: { active: [] },
          conditions: {
            Degraded: { reason: "LastJobFailed", since: 2 * MIN },
            Progressing: "NoJobsActive",
          },
          events: { are: [(c) => `Normal SawCompletedJob Saw completed job: ${c.job(0)}, condition: Failed`] },
        },
      },
      { at: HOUR + 1000, reconcile: "pass" },
      { finish: HOUR, as: "Complete", start: HOUR + 1000, end: HOUR + 30_000 },
      { at: HOUR + 2 * MIN, reconcile: "pass" },
      {
        expect: {
          status: { lastSuccessfulTime: HOUR + 30_000 },
          conditions: { Degraded: { status: "False", reason: "AsExpected", since: HOUR + 2 * MIN } },
        },
      },
    ],
  },
  {
    title: "reports SawCompletedJob once even when the cache has not caught up with the status write",
    steps: [
      { at: 1000, reconcile: "pass" },
      { finish: 0, as: "Complete", start: 1000, end: 30_000 },
      // The CronJob as the cache holds it now: status still lists the finished Job as active.
      { keep: "stale" },
      { expect: { cached: { active: 1 } } },
      "forget events",
      { at: 2 * MIN, reconcile: "pass" },
      { expect: { status: { active: [] } } },
      // A lagging cache hands the next reconcile the old object again.
      { at: 3 * MIN, reconcile: "pass", cacheHolds: "stale" },
      {
        expect: {
          events: { are: [(c) => `Normal SawCompletedJob Saw completed job: ${c.job(0)}, condition: Complete`] },
        },
      },
    ],
  },
  {
    title: "a status write computed from a stale read is refused (409), never merged over a newer status",
    steps: [
      { at: 1000, reconcile: "pass" },
      { keep: "stale" },
      // Someone else writes status meanwhile (another replica's last pass, a user's tool).
      { writeStatus: { lastMissedTime: -HOUR } },
      { keep: "newer" },
      // The next pass still reads the old object, and has a status change of its own (the next slot's run).
      { at: HOUR + 1000, reconcile: "pass", cacheHolds: "stale", requeue: "retry" },
      { expect: { statusAsKept: "newer" }, why: "the stored status is the other writer's, untouched" },
      // The retry, from the current object, records the run and keeps the other writer's field.
      "pass",
      { expect: { status: { lastScheduleTime: HOUR, lastMissedTime: -HOUR } } },
    ],
  },
  {
    title:
      "drops an active reference whose Job is gone (MissingJob) and adopts an unexpected child once (UnexpectedJob)",
    steps: [
      { at: 1000, reconcile: "pass" },
      { deleteJob: 0 },
      { createJob: { named: "manual" } },
      "forget events",
      { at: 2000, reconcile: "pass" },
      {
        expect: {
          events: {
            count: 2,
            include: [
              (c) => `Normal MissingJob Active job went missing: ${c.job(0)}`,
              (c) => `Warning UnexpectedJob Saw a job that the controller did not create or forgot: ${c.name}-manual`,
            ],
          },
          status: { active: [{ named: "manual" }] },
        },
      },
      "pass",
      { expect: { events: { are: [] } }, why: "reported once" },
    ],
  },
  {
    title: "keeps lastScheduleTime across history cleanup (no re-run) and rebuilds it when status is lost",
    spec: { successfulJobsHistoryLimit: 0 },
    steps: [
      { at: 1000, reconcile: "pass" },
      { finish: 0, as: "Complete", start: 1000, end: 10_000 },
      { at: 20 * MIN, reconcile: "pass" },
      { expect: { jobCount: 0 }, why: "cleanup deleted the successful Job (limit 0)" },
      { expect: { status: { lastScheduleTime: 0 } } },
      { expect: { status: { lastSuccessfulTime: 10_000 } }, why: "lastSuccessfulTime also with limit 0" },
      { at: 40 * MIN, reconcile: "pass" },
      { expect: { jobCount: 0 }, why: "the old slot is not run again" },
      // Status lost (e.g. restored from a backup without status): rebuilt from the children.
      { at: HOUR + 1000, reconcile: "pass" },
      "lose status",
      { at: HOUR + 5 * MIN, reconcile: "pass" },
      { expect: { status: { lastScheduleTime: HOUR } } },
      { expect: { jobCount: 1 }, why: "no duplicate after status loss" },
    ],
  },
];

/** One slot of a CronJob under load that never lets up: created at the slot's second, done 10 s later. */
const overloadedSlot = (k: number): Step[] => [
  { at: k * HOUR + 1000, reconcile: "pass", load: "overloaded" },
  { finish: k * HOUR, as: "Complete", start: k * HOUR + 1000, end: k * HOUR + 10_000 },
  ...(k > 0
    ? [
        {
          expect: { status: { lastScheduleTime: { atLeast: (k - 1) * HOUR } } },
          why: `after slot ${k}: status.lastScheduleTime is more than one run behind`,
        },
      ]
    : []),
  { expect: { jobCount: { atMost: 3 } }, why: `after slot ${k}: more than 3 Jobs kept with a history limit of 1` },
  { expect: { exist: [k * HOUR] }, why: `after slot ${k}: its Job was created` },
];

/** A Job template whose backoffLimit -1 passes the CRD schema but not the Job API: every create fails (webhooks off). */
const REFUSED_TEMPLATE = {
  spec: {
    backoffLimit: -1,
    template: { spec: { restartPolicy: "OnFailure" as const, containers: [{ name: "c", image: "busybox" }] } },
  },
};
/** The fake's refusal of slot 0's Job, worded as the Job API refuses that template. */
const REFUSED_CREATE: Step = {
  fakeRefusesCreate: 0,
  code: 422,
  reason: "Invalid",
  message: (c) =>
    `Job.batch "${c.job(0)}" is invalid: spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0`,
};

const burstRows: Row[] = [
  {
    // A failed create notes the burst like any create: its pass must still write what went wrong, or a create that
    // keeps failing (a quota, a webhook) keeps its own report back for as long as it fails.
    title:
      "a create refused during a burst is reported at once (Degraded, not held back by the burst it noted), and retried no later than the next slot",
    spec: { jobTemplate: REFUSED_TEMPLATE },
    steps: [
      REFUSED_CREATE,
      { at: 1000, reconcile: "pass", load: "burst", urgentWrites: 1, rejects: /creating Job/, retryBy: HOUR },
      { expect: { jobCount: 0, conditions: { Degraded: "JobCreationFailed" } }, why: "written during the burst" },
    ],
  },
  {
    title: "during a burst of creates a pass only creates; cleanup and status follow after it, also after a crash",
    spec: { successfulJobsHistoryLimit: 0 },
    steps: [
      { at: 1000, reconcile: "pass" },
      // It ends 6 s before the next slot, unrecorded yet: a burst may hold that for up to 30 s (a run that
      // ended longer ago is written at once: "…a run that ended leaves status.active within 30 s").
      { finish: 0, as: "Complete", start: 1000, end: HOUR - 5000 },
      { keep: "before" },
      "forget events",
      // The next slot, while other CronJobs' creates keep the burst on (the manager's BurstWindow): the create
      // is noted as urgent, a pass after the burst owes the rest, and the next slot's wake-up stays.
      {
        at: HOUR + 1000,
        reconcile: "pass",
        load: "burst",
        urgentWrites: 1,
        requeue: { atLeastMs: 1, whenQuiet: true },
      },
      {
        expect: { jobNames: [0, HOUR] },
        why: "the new Job is created; the finished one is not deleted yet (limit 0)",
      },
      { expect: { statusAsKept: "before" }, why: "no status write during the burst" },
      // The process dies here; the next process's first pass (no burst) does what was held back, once.
      "restart",
      { expect: { status: { lastScheduleTime: HOUR, active: [HOUR] } } },
      { expect: { jobNames: [HOUR] }, why: "history cleaned up after the burst" },
      { expect: { events: { counts: { SuccessfulCreate: 1, SuccessfulDelete: 1 } } } },
      "restart",
      { expect: { jobCount: 1 }, why: "no slot runs twice" },
    ],
  },
  {
    // More every-minute CronJobs than the apiserver can take: every pass has a slot to create, other
    // CronJobs always wait and the burst never ends. Cleanup and the status write may wait one pass, not more.
    title: "under a burst that never ends the books fall one run behind at most; each slot runs once",
    spec: { successfulJobsHistoryLimit: 1 },
    steps: [
      ...[0, 1, 2, 3, 4, 5].flatMap(overloadedSlot),
      // Each slot once, and history cleanup ran.
      { expect: { events: { counts: { SuccessfulCreate: 6, SuccessfulDelete: { atLeast: 1 } } } } },
    ],
  },
  {
    // A CronJob with no slot due has no create of its own: its completion may wait for a burst, not forever.
    title: "under a burst that never ends a run that ended leaves status.active within 30 s",
    steps: [
      { at: 1000, reconcile: "pass" },
      { expect: { status: { active: [0] } } },
      { finish: 0, as: "Complete", start: 1000, end: 10_000 },
      { at: 20_000, reconcile: "pass", load: "overloaded", requeue: { whenQuiet: true } },
      { expect: { status: { active: [0] } }, why: "10 s after it ended the write may wait for the burst" },
      { at: 41_000, reconcile: "pass", load: "overloaded" },
      {
        expect: { status: { active: [], lastSuccessfulTime: 10_000 } },
        why: "31 s after it ended the run is written as finished",
      },
    ],
  },
];

/**
 * Seven finished Jobs from long before h1 (started minutes after h1 - 11h, all ended at h1 - 10h): four successful
 * with a tie at 3m, the newest of them `newest` (a start, or undefined: no startTime), and two failed. A pass after
 * the creation keeps the 3 newest successful and the newest failed (the default limits) and deletes the others.
 */
const cleanup = (newest: [string, number | undefined], kept: string[]): Step[] => [
  ...(
    [
      ["s1", "complete", 1],
      ["s2", "complete", 2],
      ["s3b", "complete", 3],
      ["s3a", "complete", 3],
      [newest[0], "complete", newest[1]],
      ["f1", "failed", 1],
      ["f2", "failed", 2],
    ] as const
  ).map(([named, state, startMin]): Step =>
    startMin === undefined
      ? { createJob: { named }, state, end: -10 * HOUR, unstarted: true }
      : { createJob: { named }, state, start: -11 * HOUR + startMin * MIN, end: -10 * HOUR },
  ),
  { at: { afterCreation: 1000 }, reconcile: "pass" },
  {
    expect: {
      jobNames: kept.map((named) => ({ named })),
      events: {
        containing: "SuccessfulDelete",
        count: 3,
        include: ["f1", "s1", "s2"].map((n) => (c: Names) => `Normal SuccessfulDelete Deleted job ${c.name}-${n}`),
      },
    },
  },
];

const historyRows: Row[] = [
  {
    title: "cleans up history by start time (ties by name) with default limits 3 and 1",
    steps: cleanup(["s4", 4], ["f2", "s3a", "s3b", "s4"]),
  },
  {
    // A finished Job without startTime (s0): cannot exist on 1.31+, tested on the fake only. A 1.31+ apiserver
    // refuses that status, so the fake holds it as an older cluster left it: seeded into its store.
    title: "cleans up history by start time (missing start = newest, ties by name) with default limits 3 and 1",
    only: "fake",
    steps: cleanup(["s0", undefined], ["f2", "s0", "s3a", "s3b"]),
  },
  {
    title: "cleans history even when every create fails, then reports FailedCreate and retries (throws)",
    // backoffLimit -1 passes the CRD schema but not the Job API: creates fail (webhooks off).
    spec: { failedJobsHistoryLimit: 0, jobTemplate: REFUSED_TEMPLATE },
    steps: [
      REFUSED_CREATE,
      { createJob: { named: "old" }, state: "failed", start: -HOUR, end: -HOUR + 1000 },
      { at: 1000, reconcile: "pass", rejects: /creating Job/ },
      { expect: { jobCount: 0 }, why: "history cleaned although the create failed" },
      {
        expect: {
          events: {
            include: [(c) => `Normal SuccessfulDelete Deleted job ${c.name}-old`],
            someStartWith: [(c) => `Warning FailedCreate Error creating job ${c.job(0)}`],
          },
          conditions: { Degraded: "JobCreationFailed" },
        },
      },
    ],
  },
];

const webhooksOffRows: Row[] = [
  {
    title: "webhooks off: an invalid time zone sets conditions and an event, and does not requeue",
    spec: { timeZone: "Mars/Olympus" },
    steps: [
      { at: 1000, reconcile: "pass", requeue: "none" },
      {
        expect: {
          conditions: { Available: "UnknownTimeZone", Degraded: "UnknownTimeZone" },
          status: { nextScheduleTime: null },
          events: { firstHas: [/^Warning UnknownTimeZone .*Mars\/Olympus/] },
        },
      },
    ],
  },
  {
    title:
      "webhooks off: an invalid schedule sets conditions and an event, and does not requeue; fixing it clears them",
    spec: { schedule: "61 * * * *" },
    steps: [
      { at: 1000, reconcile: "pass", requeue: "none" },
      {
        expect: {
          conditions: { Available: "InvalidSchedule", Degraded: { status: "True" } },
          events: { firstHas: [/^Warning UnparseableSchedule spec\.schedule: Invalid value: "61 \* \* \* \*"/] },
          jobCount: 0,
        },
      },
      { patch: { schedule: "0 * * * *" } },
      { reconcile: "pass", requeue: { atLeastMs: 1 } },
      { expect: { conditions: { Degraded: "AsExpected", Available: { status: "True" } } } },
    ],
  },
  {
    title: "being deleted: no scheduling, nextScheduleTime empty",
    steps: [
      { finalizers: ["example.com/hold"] },
      "delete",
      { at: 1000, reconcile: "pass", requeue: "none" },
      { expect: { jobCount: 0, status: { nextScheduleTime: null }, conditions: { Available: "Deleting" } } },
      { finalizers: [] },
    ],
  },
];

const missedRows: Row[] = [
  {
    title: "more than 100 missed slots: TooManyMissedTimes, and the newest still runs",
    spec: { schedule: "* * * * *" },
    steps: [
      { at: 3 * HOUR + 7000, reconcile: "pass" },
      { expect: { jobNames: [3 * HOUR], events: { someStartWith: ["Warning TooManyMissedTimes"] } } },
    ],
  },
];

export function reconcilerCases(driver: ReconcilerDriver): void {
  describe(`CronJob reconciler (fake clock, ${driver.name})`, () => {
    const table = rowTable(driver, { namespace: "reconcile", prefix: "cj", firstPass: false });
    let h: ReconcileHarness<ObjectClient>;
    before(() => {
      h = table.h;
    });

    runRows(table, firstSlotRows);

    it("creates the Job for a due slot with the template, annotations and owner, then never twice", async () => {
      const { name, h1, created: cj } = await table.fresh({ timeZone: "America/New_York" });
      h.clock.set(new Date(h1 + 5000));
      const r = await h.reconcile(name);
      const jobs = await h.jobs(name);
      assert.equal(jobs.length, 1);
      const job = jobs[0]!;
      assert.equal(job.metadata!.name, jobName(name, h1));
      assert.deepEqual(job.metadata!.labels, { app: name, [CRONJOB_NAME_LABEL]: name });
      assert.equal(job.metadata!.annotations!["example.com/team"], "data");
      // `kubectl get jobs -l batch.tutorial.kubebuilder.io/cronjob-name=NAME` finds it, and only its CronJob's.
      const selected = await h.client.list<Job>(Kinds.Job, {
        namespace: h.namespace,
        labelSelector: `${CRONJOB_NAME_LABEL}=${name}`,
      });
      assert.deepEqual(
        selected.items.map((j) => j.metadata!.name),
        [job.metadata!.name],
      );
      assert.equal(job.metadata!.annotations![SCHEDULED_AT_ANNOTATION], iso(h1));
      assert.match(
        job.metadata!.annotations![K8S_SCHEDULED_TIMESTAMP_ANNOTATION]!,
        /^\d{4}-\d\d-\d\dT\d\d:00:00-0[45]:00$/,
      );
      assert.deepEqual(job.metadata!.ownerReferences, [
        {
          apiVersion: "batch.tutorial.kubebuilder.io/v1",
          kind: "CronJob",
          name,
          uid: cj.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      assert.equal(
        (job.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]!.image,
        "busybox",
      );
      assert.deepEqual(h.takeEvents(), [`Normal SuccessfulCreate Created job ${job.metadata!.name}`]);

      const st = (await h.get(name)).status!;
      assert.equal(st.lastScheduleTime, iso(h1));
      assert.equal(st.nextScheduleTime, iso(h1 + HOUR));
      assert.deepEqual(
        st.active!.map((a) => a.name),
        [job.metadata!.name],
      );
      assert.equal(st.activeCount, 1);
      assert.equal(r.requeueAfterMs, HOUR - 5000 + 10);
      const got = await h.get(name);
      assert.equal(condition(got, "Available")?.reason, "JobsActive");
      assert.equal(condition(got, "Progressing")?.status, "True");
      assert.equal(got.status?.observedGeneration, got.metadata.generation);

      // Idempotent: same time, same state → no Job, no status write.
      const rv = got.metadata.resourceVersion;
      await h.reconcile(name);
      h.clock.advance(30 * MIN);
      await h.reconcile(name);
      assert.equal((await h.jobs(name)).length, 1);
      assert.equal((await h.get(name)).metadata.resourceVersion, rv);
      assert.deepEqual(h.takeEvents(), []);
    });

    runRows(table, storedRows);
    runRows(table, burstRows);
    runRows(table, historyRows);
    runRows(table, suspendRows);
    runRows(table, webhooksOffRows);
    runRows(table, concurrencyRows);
    runRows(table, missedRows);
    runRows(table, requeueRows);
  });
}
