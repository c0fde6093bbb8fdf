// Exclusions (spec.exclusions) through the reconciler, against the fake API server: step 7 of
// controllers/cronjob_controller.ts (the schedule; its exclusions part, controllers/exclusionstep.ts) with
// controllers/calendars.ts reading ExclusionCalendar objects from the cache. A slot inside a window (the CronJob's
// own, or a named calendar's) is not run: one Skipped/ExcludedByCalendar record entry per window's run of slots,
// naming where the window comes from, no Event, no run count, and nextScheduleTime and the wake-up skip it. A
// calendar named but missing holds the due slots (Held/CalendarNotFound, Degraded, one Warning per slot) until it
// exists. Run-now ignores windows; windows are read in spec.timeZone.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type CronJob,
  CronJobResource as CronJobKind,
  type ExclusionCalendar,
  ExclusionCalendarResource,
  type Job,
  jobNameFor,
  type RecentRunWire,
  RUN_NOW_ANNOTATION,
  waitingRunOf,
} from "../../api/v1/index.ts";
import { CronJobReconciler, setupCache } from "../../controllers/cronjob_controller.ts";
import type { CronJobRunMetrics, RunOutcome } from "../../controllers/metrics.ts";
import { FakeClock } from "../../runtime/fake-clock.ts";
import { FakeRecorder } from "../../runtime/events/fake.ts";
import { FakeClient } from "../../runtime/fake/client.ts";
import { Kinds } from "../../runtime/kinds.ts";
import { discardLogger } from "../../runtime/log.ts";

/** The slack the reconciler adds to a wake-up (requeue.ts REQUEUE_SLACK_MS). */
const SLACK = 10;
const slotJob = (iso: string) => jobNameFor("cj", new Date(iso));

interface SetUp {
  /** The clock, and the CronJob's creation a minute before. */
  start: string;
  spec?: Record<string, unknown>;
  annotations?: Record<string, string>;
  /** --status-write-delay (the manager's default is 60 s; 0 here unless given). */
  statusDelayMs?: number;
}

async function setUp(o: SetUp) {
  const clock = new FakeClock(o.start);
  const client = new FakeClient({ now: () => clock.now() });
  setupCache(client);
  const recorder = new FakeRecorder();
  const counted: RunOutcome[] = [];
  const metrics: CronJobRunMetrics = { countRun: (_ns, _name, outcome) => counted.push(outcome), forget() {} };
  const reconciler = new CronJobReconciler({
    client,
    cache: client.cache,
    recorder,
    clock,
    metrics,
    statusDelayMs: o.statusDelayMs ?? 0,
  });
  await client.create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: "ns" } });
  client.seed(CronJobKind, {
    apiVersion: "batch.tutorial.kubebuilder.io/v1",
    kind: "CronJob",
    metadata: {
      name: "cj",
      namespace: "ns",
      creationTimestamp: new Date(Date.parse(o.start) - 60_000).toISOString().replace(".000", ""),
      ...(o.annotations ? { annotations: o.annotations } : {}),
    },
    spec: {
      schedule: "0 * * * *",
      jobTemplate: {
        spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] } } },
      },
      ...o.spec,
    },
  } as unknown as CronJob);
  /** A reconcile at `at` (RFC 3339), as the work queue runs it. */
  const reconcile = (at?: string) => {
    if (at) clock.set(new Date(at));
    return reconciler.reconcile(
      { namespace: "ns", name: "cj" },
      { log: discardLogger, reconcileID: "t", signal: new AbortController().signal },
    );
  };
  const names = async () =>
    (await client.list<Job>(Kinds.Job, { namespace: "ns" })).items.map((j) => j.metadata?.name ?? "").sort();
  const stored = () => client.get<CronJob>(CronJobKind, "ns", "cj");
  const record = async () => (await stored()).status?.recentRuns ?? [];
  const events = () => recorder.events.map((e) => e);
  const calendar = (name: string, windows: unknown[]) =>
    client.create<ExclusionCalendar>(ExclusionCalendarResource, {
      apiVersion: "batch.tutorial.kubebuilder.io/v1",
      kind: "ExclusionCalendar",
      metadata: { name, namespace: "ns" },
      spec: { windows: windows as ExclusionCalendar["spec"]["windows"] },
    });
  return { client, clock, reconcile, names, stored, record, events, counted, calendar };
}

/**
 * A Skipped entry of excluded slots, the newest at `slot`, decided at `at`; `exclusion`, its fields: the window's
 * calendar (absent: spec.exclusions), the window, and the run of slots it stands for (from `firstSlot`, `slots` many).
 */
const excluded = (
  slot: string,
  at: string,
  message: string,
  exclusion: NonNullable<RecentRunWire["exclusion"]>,
): RecentRunWire => ({
  trigger: "Schedule",
  scheduledTime: slot,
  decision: "Skipped",
  reason: "ExcludedByCalendar",
  message,
  decidedAt: at,
  exclusion,
});

/** The entry of one slot excluded by `window`, of calendar `calendar` (else of spec.exclusions), decided at `at`. */
const excludedOne = (slot: string, at: string, window: string, calendar?: string): RecentRunWire =>
  excluded(slot, at, `excluded by ${calendar ? `calendar ${calendar}` : "spec.exclusions"}: ${window}`, {
    ...(calendar ? { calendar } : {}),
    window,
    firstSlot: slot,
    slots: 1,
  });

/** A scheduled slot's Created entry. */
const created = (slot: string, at: string): RecentRunWire => ({
  trigger: "Schedule",
  scheduledTime: slot,
  decision: "Created",
  reason: "Scheduled",
  decidedAt: at,
  job: slotJob(slot),
});

const LUNCH = { name: "lunch", from: "12:00", to: "14:00" };

describe("exclusions: a slot in a window is not run", () => {
  it("an inline window: the slot gets one Skipped/ExcludedByCalendar entry naming spec.exclusions and the window", async () => {
    const t = await setUp({ start: "2026-11-25T11:59:00Z", spec: { exclusions: { windows: [LUNCH] } } });
    await t.reconcile();
    const events = t.events().length;
    const counted = t.counted.length;
    const r = await t.reconcile("2026-11-25T12:00:01Z");
    assert.deepEqual(await t.names(), [], "not run");
    assert.deepEqual(await t.record(), [excludedOne("2026-11-25T12:00:00Z", "2026-11-25T12:00:01Z", "lunch")]);
    // No Event, no run counted: an excluded slot is neither a run nor a missed one.
    assert.deepEqual(t.events().slice(events), []);
    assert.deepEqual(t.counted.slice(counted), []);
    assert.equal((await t.stored()).status?.lastMissedTime, undefined);
    // The next run is the first slot after the window; the wake-up is the next slot, excluded or not, so an excluded
    // slot is decided when it comes (by the calendar as it is then), not when the next run comes.
    assert.equal((await t.stored()).status?.nextScheduleTime, "2026-11-25T14:00:00Z");
    assert.equal((await t.stored()).status?.lastExcludedTime, "2026-11-25T12:00:00Z");
    assert.equal(r.requeueAfterMs, Date.parse("2026-11-25T13:00:00Z") - Date.parse("2026-11-25T12:00:01Z") + SLACK);
    // Again in the same slot: the entry once.
    await t.reconcile("2026-11-25T12:30:00Z");
    assert.deepEqual(await t.record(), [excludedOne("2026-11-25T12:00:00Z", "2026-11-25T12:00:01Z", "lunch")]);
  });

  it("consecutive excluded slots coalesce into one entry with a count; the first slot after the window runs", async () => {
    const t = await setUp({ start: "2026-11-25T11:59:00Z", spec: { exclusions: { windows: [LUNCH] } } });
    await t.reconcile("2026-11-25T12:00:01Z");
    await t.reconcile("2026-11-25T13:00:01Z");
    const coalesced = excluded(
      "2026-11-25T13:00:00Z",
      "2026-11-25T13:00:01Z",
      "excluded by spec.exclusions: lunch (2 slots from 2026-11-25T12:00:00Z)",
      { window: "lunch", firstSlot: "2026-11-25T12:00:00Z", slots: 2 },
    );
    assert.deepEqual(await t.record(), [coalesced]);
    await t.reconcile("2026-11-25T14:00:01Z");
    assert.deepEqual(await t.names(), [slotJob("2026-11-25T14:00:00Z")]);
    assert.deepEqual(await t.record(), [created("2026-11-25T14:00:00Z", "2026-11-25T14:00:01Z"), coalesced]);
    assert.equal((await t.stored()).status?.nextScheduleTime, "2026-11-25T15:00:00Z");
  });

  it("slots passed while no reconcile ran (the operator was down) are recorded together, counted", async () => {
    const t = await setUp({
      start: "2026-12-24T22:59:00Z",
      spec: { exclusions: { windows: [{ name: "Christmas Day", start: "2026-12-25" }] } },
    });
    await t.reconcile("2026-12-24T23:00:01Z");
    const r = await t.reconcile("2026-12-24T23:00:30Z");
    assert.equal(r.requeueAfterMs, Date.parse("2026-12-25T00:00:00Z") - Date.parse("2026-12-24T23:00:30Z") + SLACK);
    await t.reconcile("2026-12-26T00:00:01Z");
    assert.deepEqual(await t.names(), [slotJob("2026-12-24T23:00:00Z"), slotJob("2026-12-26T00:00:00Z")].sort());
    assert.deepEqual((await t.record()).slice(0, 2), [
      created("2026-12-26T00:00:00Z", "2026-12-26T00:00:01Z"),
      excluded(
        "2026-12-25T23:00:00Z",
        "2026-12-26T00:00:01Z",
        "excluded by spec.exclusions: Christmas Day (24 slots from 2026-12-25T00:00:00Z)",
        { window: "Christmas Day", firstSlot: "2026-12-25T00:00:00Z", slots: 24 },
      ),
    ]);
  });

  it("a calendar object's window excludes, named calendar <name>; windows of several sources are told apart", async () => {
    const t = await setUp({
      start: "2026-12-24T23:59:00Z",
      spec: { exclusions: { calendars: ["holidays-de"], windows: [LUNCH] } },
    });
    await t.calendar("holidays-de", [{ name: "Christmas Day", start: "2026-12-25" }]);
    await t.reconcile("2026-12-25T00:00:01Z");
    assert.deepEqual(await t.names(), []);
    assert.deepEqual(await t.record(), [
      excludedOne("2026-12-25T00:00:00Z", "2026-12-25T00:00:01Z", "Christmas Day", "holidays-de"),
    ]);
    assert.equal((await t.stored()).status?.nextScheduleTime, "2026-12-26T00:00:00Z");
    // The next day's lunch is the CronJob's own window.
    await t.reconcile("2026-12-26T00:00:01Z");
    await t.reconcile("2026-12-26T12:00:01Z");
    assert.deepEqual((await t.record())[0], {
      ...excludedOne("2026-12-26T12:00:00Z", "2026-12-26T12:00:01Z", "lunch"),
    });
  });

  it("a calendar changed: its new windows apply at the next reconcile", async () => {
    const t = await setUp({ start: "2026-12-24T23:59:00Z", spec: { exclusions: { calendars: ["freeze"] } } });
    const cal = await t.calendar("freeze", [{ start: "2027-01-01" }]);
    await t.reconcile("2026-12-25T00:00:01Z");
    assert.deepEqual(await t.names(), [slotJob("2026-12-25T00:00:00Z")]);
    await t.client.update(ExclusionCalendarResource, {
      ...cal,
      spec: { windows: [{ name: "Christmas", start: "2026-12-25" }] },
    });
    await t.reconcile("2026-12-25T01:00:01Z");
    assert.deepEqual(await t.names(), [slotJob("2026-12-25T00:00:00Z")], "01:00 is excluded now");
    assert.deepEqual(
      (await t.record())[0],
      excludedOne("2026-12-25T01:00:00Z", "2026-12-25T01:00:01Z", "Christmas", "freeze"),
    );
  });
});

describe("exclusions: a calendar named but missing holds the due slots", () => {
  const missing =
    "spec.exclusions.calendars names holidays-de, which is not an ExclusionCalendar of namespace ns: slots are held until it exists";

  it("Held/CalendarNotFound, Degraded CalendarNotFound, one Warning per slot; the calendar created, the slot runs", async () => {
    const t = await setUp({ start: "2026-11-25T09:59:00Z", spec: { exclusions: { calendars: ["holidays-de"] } } });
    await t.reconcile("2026-11-25T10:00:01Z");
    await t.reconcile("2026-11-25T10:00:30Z");
    assert.deepEqual(await t.names(), [], "not run while its exclusions cannot be read");
    const held: RecentRunWire = {
      trigger: "Schedule",
      scheduledTime: "2026-11-25T10:00:00Z",
      decision: "Held",
      reason: "CalendarNotFound",
      message: `held: ${missing}`,
      decidedAt: "2026-11-25T10:00:01Z",
      exclusion: { calendar: "holidays-de", problem: "NotFound" },
    };
    assert.deepEqual(await t.record(), [held]);
    const degraded = (await t.stored()).status?.conditions?.find((c) => c.type === "Degraded");
    assert.deepEqual([degraded?.status, degraded?.reason, degraded?.message], ["True", "CalendarNotFound", missing]);
    assert.deepEqual(t.events(), [`Warning CalendarNotFound Not starting job for 2026-11-25T10:00:00Z: ${missing}`]);
    assert.deepEqual(t.counted, [], "no run counted");

    await t.calendar("holidays-de", [{ name: "Christmas Day", start: "2026-12-25" }]);
    await t.reconcile("2026-11-25T10:01:00Z");
    assert.deepEqual(await t.names(), [slotJob("2026-11-25T10:00:00Z")], "the due slot runs");
    assert.deepEqual(await t.record(), [created("2026-11-25T10:00:00Z", "2026-11-25T10:01:00Z")]);
    const after = (await t.stored()).status?.conditions?.find((c) => c.type === "Degraded");
    assert.deepEqual([after?.status, after?.reason], ["False", "AsExpected"]);
  });

  it("each held slot has its own Warning: a second slot held by the same missing calendar is told too", async () => {
    const t = await setUp({ start: "2026-11-25T09:59:00Z", spec: { exclusions: { calendars: ["holidays-de"] } } });
    await t.reconcile("2026-11-25T10:00:01Z");
    await t.reconcile("2026-11-25T10:30:00Z");
    await t.reconcile("2026-11-25T11:00:01Z");
    assert.deepEqual(await t.names(), []);
    assert.deepEqual(t.events(), [
      `Warning CalendarNotFound Not starting job for 2026-11-25T10:00:00Z: ${missing}`,
      `Warning CalendarNotFound Not starting job for 2026-11-25T11:00:00Z: ${missing}`,
    ]);
  });

  it("the calendar created with a window over the held slot: the slot is not run but recorded excluded", async () => {
    const t = await setUp({ start: "2026-12-24T23:59:00Z", spec: { exclusions: { calendars: ["holidays-de"] } } });
    await t.reconcile("2026-12-25T00:00:01Z");
    assert.equal((await t.record())[0]?.reason, "CalendarNotFound");
    await t.calendar("holidays-de", [{ name: "Christmas Day", start: "2026-12-25" }]);
    await t.reconcile("2026-12-25T00:01:00Z");
    assert.deepEqual(await t.names(), []);
    assert.deepEqual(
      (await t.record())[0],
      excludedOne("2026-12-25T00:00:00Z", "2026-12-25T00:01:00Z", "Christmas Day", "holidays-de"),
    );
  });
});

describe("exclusions: an excluded slot is decided when it comes", () => {
  /** The work queue: each reconcile at the wake-up the one before asked for, from `from` while before `until`. */
  const follow = async (t: Awaited<ReturnType<typeof setUp>>, from: string, until: string) => {
    let at = Date.parse(from);
    const woken: string[] = [];
    while (at < Date.parse(until)) {
      const r = await t.reconcile(new Date(at).toISOString());
      woken.push(new Date(at).toISOString());
      assert.ok(r.requeueAfterMs !== undefined && r.requeueAfterMs > 0, "a wake-up is asked for");
      at += r.requeueAfterMs;
    }
    return woken;
  };

  it("a calendar edited after an excluded slot: the slot stays skipped, recorded at its time, and never runs", async () => {
    // The issue's case: calendar `shared` holds 18:00–19:10 for an every-minute CronJob; at 18:10:20 it is edited to
    // end at 18:10. The 18:08–18:10 slots were excluded when they came: none runs, each recorded then.
    const t = await setUp({
      start: "2026-11-26T17:59:30Z",
      spec: { schedule: "* * * * *", exclusions: { calendars: ["shared"] } },
    });
    const cal = await t.calendar("shared", [{ name: "evening", start: "2026-11-26T18:00", end: "2026-11-26T19:10" }]);
    const woken = await follow(t, "2026-11-26T17:59:30Z", "2026-11-26T18:10:20Z");
    assert.ok(woken.includes("2026-11-26T18:10:00.010Z"), `woken at each excluded slot: ${woken.join(" ")}`);
    const at1010 = await t.stored();
    assert.equal(at1010.status?.lastExcludedTime, "2026-11-26T18:10:00Z");
    assert.deepEqual(
      (await t.record()).filter((e) => e.reason === "ExcludedByCalendar"),
      [
        excluded(
          "2026-11-26T18:10:00Z",
          "2026-11-26T18:10:00Z",
          "excluded by calendar shared: evening (11 slots from 2026-11-26T18:00:00Z)",
          { calendar: "shared", window: "evening", firstSlot: "2026-11-26T18:00:00Z", slots: 11 },
        ),
      ],
    );
    await t.client.update(ExclusionCalendarResource, {
      ...cal,
      spec: { windows: [{ name: "evening", start: "2026-11-26T18:00", end: "2026-11-26T18:10" }] },
    });
    await t.reconcile("2026-11-26T18:10:20Z");
    assert.deepEqual(await t.names(), [slotJob("2026-11-26T17:59:00Z")], "18:10 is not run");
    assert.equal((await t.stored()).status?.lastMissedTime, undefined, "nor reported missed");
    await follow(t, "2026-11-26T18:10:20Z", "2026-11-26T18:11:30Z");
    const ran = [slotJob("2026-11-26T17:59:00Z"), slotJob("2026-11-26T18:11:00Z")];
    assert.deepEqual(await t.names(), ran, "the first slot the new window leaves runs");
  });

  it("an inline window removed after its slot was recorded: the slot does not run; its entry stays", async () => {
    const t = await setUp({
      start: "2026-11-25T11:59:30Z",
      spec: { schedule: "*/5 * * * *", exclusions: { windows: [LUNCH] } },
    });
    await follow(t, "2026-11-25T11:59:30Z", "2026-11-25T12:05:30Z");
    const cj = await t.stored();
    await t.client.update(CronJobKind, { ...cj, spec: { ...cj.spec, exclusions: undefined } } as CronJob);
    await t.reconcile("2026-11-25T12:05:40Z");
    assert.deepEqual(await t.names(), [], "12:05 was excluded when it came");
    assert.equal((await t.record())[0]?.scheduledTime, "2026-11-25T12:05:00Z");
    await follow(t, "2026-11-25T12:05:40Z", "2026-11-25T12:10:30Z");
    assert.deepEqual(await t.names(), [slotJob("2026-11-25T12:10:00Z")]);
  });

  it("a slot a group held no longer waits once a newer slot was excluded (the group's queue reads the same base)", () => {
    const heldEntry: RecentRunWire = {
      trigger: "Schedule",
      scheduledTime: "2026-11-26T10:05:00Z",
      decision: "Held",
      reason: "ConcurrencyGroupFull",
      message: "held",
      decidedAt: "2026-11-26T10:05:00Z",
    };
    const cj = (lastExcludedTime?: string) => ({
      spec: { concurrencyGroup: "g" },
      status: {
        lastScheduleTime: "2026-11-26T10:00:00Z",
        recentRuns: [heldEntry],
        ...(lastExcludedTime ? { lastExcludedTime } : {}),
      },
    });
    const now = Date.parse("2026-11-26T10:06:30Z");
    assert.equal(waitingRunOf(cj() as never, now)?.held, heldEntry, "waiting while nothing newer was decided");
    assert.equal(waitingRunOf(cj("2026-11-26T10:06:00Z") as never, now), undefined);
  });

  it("under --status-write-delay, a pass that excludes a slot writes it at once, beside a run whose write waits", async () => {
    // The delay (90 s) outlasts the minute between the 10:01 run and the 10:02 exclusion: a write held for the run
    // would still be waiting when the 10:02 pass decides, so only a write made at once shows the exclusion.
    const t = await setUp({
      start: "2026-11-26T10:00:35Z",
      statusDelayMs: 90_000,
      spec: { schedule: "* * * * *", exclusions: { calendars: ["freeze"] } },
    });
    await t.calendar("freeze", [{ name: "freeze", start: "2026-11-26T10:02", end: "2026-11-26T10:04" }]);
    await t.reconcile();
    await t.reconcile("2026-11-26T10:01:00.020Z");
    assert.equal((await t.stored()).status?.lastScheduleTime, undefined, "the 10:01 run's write waits");
    // The 10:01 run still runs, its write may wait; the 10:02 slot's exclusion may not.
    await t.reconcile("2026-11-26T10:02:00.020Z");
    const stored = (await t.stored()).status;
    assert.equal(stored?.lastExcludedTime, "2026-11-26T10:02:00Z");
    assert.equal(stored?.recentRuns?.[0]?.reason, "ExcludedByCalendar");

    // The calendar edited within the delay (its window gone): the 10:02 slot was decided, and never runs.
    const cal = await t.client.get<ExclusionCalendar>(ExclusionCalendarResource, "ns", "freeze");
    await t.client.update(ExclusionCalendarResource, {
      ...cal,
      spec: { windows: [{ name: "long ago", start: "2001-01-01", end: "2001-01-02" }] },
    });
    await t.reconcile("2026-11-26T10:02:05Z");
    await t.reconcile("2026-11-26T10:02:40Z");
    assert.deepEqual(await t.names(), [slotJob("2026-11-26T10:00:00Z"), slotJob("2026-11-26T10:01:00Z")]);
    const decided = (await t.record()).filter((e) => e.scheduledTime === "2026-11-26T10:02:00Z");
    assert.deepEqual(
      decided.map((e) => [e.decision, e.reason]),
      [["Skipped", "ExcludedByCalendar"]],
    );
  });
});

describe("exclusions: what they do not hold", () => {
  it("run-now runs during a window", async () => {
    const t = await setUp({
      start: "2026-11-25T12:29:00Z",
      spec: { exclusions: { windows: [LUNCH] } },
      annotations: { [RUN_NOW_ANNOTATION]: "r1" },
    });
    await t.reconcile("2026-11-25T12:30:00Z");
    const names = await t.names();
    assert.equal(names.length, 1, "run-now's Job");
    assert.ok(
      t.events().some((e) => e.startsWith("Normal RunNow Created job")),
      t.events().join("\n"),
    );
    assert.deepEqual(
      (await t.record()).map((e) => [e.trigger, e.decision, e.reason, e.job]),
      [["RunNow", "Created", "RunNowRequested", names[0]]],
    );
  });

  it("a window is read in spec.timeZone: 12:00–14:00 in Berlin holds 11:00Z and 12:00Z, not 13:00Z", async () => {
    const t = await setUp({
      start: "2026-11-25T10:59:00Z",
      spec: { timeZone: "Europe/Berlin", exclusions: { windows: [LUNCH] } },
    });
    await t.reconcile("2026-11-25T11:00:01Z");
    assert.equal((await t.stored()).status?.nextScheduleTime, "2026-11-25T13:00:00Z");
    await t.reconcile("2026-11-25T12:00:01Z");
    await t.reconcile("2026-11-25T13:00:01Z");
    assert.deepEqual(await t.names(), [slotJob("2026-11-25T13:00:00Z")]);
    assert.deepEqual(await t.record(), [
      created("2026-11-25T13:00:00Z", "2026-11-25T13:00:01Z"),
      excluded(
        "2026-11-25T12:00:00Z",
        "2026-11-25T12:00:01Z",
        "excluded by spec.exclusions: lunch (2 slots from 2026-11-25T11:00:00Z)",
        { window: "lunch", firstSlot: "2026-11-25T11:00:00Z", slots: 2 },
      ),
    ]);
  });
});

describe("exclusions under the manager's status-write delay", () => {
  it("excluded slots decided by passes whose status write waited are recorded by the pass after the next run", async () => {
    // Every minute, a window over 10:02 and 10:03, --status-write-delay 60 s (the manager's default). No pass comes
    // in the window (the wake-up skips it): the 10:04 pass finds the excluded slots, and its write waits behind the
    // 10:04 run; the pass that writes (the Job ended) already sees 10:04's Job, and must still record them.
    const t = await setUp({
      start: "2026-11-26T10:00:35Z",
      statusDelayMs: 60_000,
      spec: {
        schedule: "* * * * *",
        exclusions: { windows: [{ name: "e2e freeze", start: "2026-11-26T10:02", end: "2026-11-26T10:04" }] },
      },
    });
    const finish = async (at: string) => {
      for (const j of (await t.client.list<Job>(Kinds.Job, { namespace: "ns" })).items) {
        if (j.status?.conditions?.length) continue;
        const status = {
          startTime: at,
          completionTime: at,
          succeeded: 1,
          conditions: [
            { type: "SuccessCriteriaMet", status: "True", lastTransitionTime: at },
            { type: "Complete", status: "True", lastTransitionTime: at },
          ],
        };
        await t.client.updateStatus(Kinds.Job, { ...j, status });
      }
    };
    await t.reconcile();
    await t.reconcile("2026-11-26T10:01:00.020Z");
    await finish("2026-11-26T10:01:01Z");
    await t.reconcile("2026-11-26T10:01:01.100Z");
    await t.reconcile("2026-11-26T10:04:00.020Z");
    await finish("2026-11-26T10:04:01Z");
    await t.reconcile("2026-11-26T10:04:01.100Z");
    await t.reconcile("2026-11-26T10:05:30Z");
    assert.deepEqual(await t.names(), [
      slotJob("2026-11-26T10:00:00Z"),
      slotJob("2026-11-26T10:01:00Z"),
      slotJob("2026-11-26T10:04:00Z"),
      slotJob("2026-11-26T10:05:00Z"),
    ]);
    const skipped = (await t.record()).filter((e) => e.reason === "ExcludedByCalendar");
    assert.deepEqual(
      skipped.map((e) => [e.scheduledTime, e.message]),
      [["2026-11-26T10:03:00Z", "excluded by spec.exclusions: e2e freeze (2 slots from 2026-11-26T10:02:00Z)"]],
    );
  });
});
