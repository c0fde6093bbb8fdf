// A CronJob with several schedules (API v2's spec.schedules, stored on the v1 hub as spec.schedule plus the
// more-schedules annotation): the reconciler runs the union of their slots, each second once, and every Job
// names the schedules its slot came from. Driven against the in-memory FakeClient with a fake clock.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  BACKFILL_ANNOTATION,
  BACKFILL_REQUEST_ANNOTATION,
  backfillAnnotationValue,
  type CronJob,
  CronJobResource as CronJobKind,
  type CronJobInput,
  type Job,
  K8S_SCHEDULED_TIMESTAMP_ANNOTATION,
  MAX_SCHEDULE_LENGTH,
  MORE_SCHEDULES_ANNOTATION,
  moreSchedulesValue,
  RUN_NOW_ANNOTATION,
  SCHEDULE_SOURCES_ANNOTATION,
  SCHEDULED_AT_ANNOTATION,
} from "../../api/v1/index.ts";
import { parseSchedule, ScheduleSet, UnionSchedule } from "../../api/v1/schedule/index.ts";
import { guards } from "../../controllers/guards.ts";
import { parsedSchedules as parseSchedules } from "../../controllers/guards.ts";
import { condition, ReconcileHarness } from "../integration/cronjob/harness.ts";
import type { FakeClient } from "../../runtime/fake/client.ts";

const iso = (t: string | number | Date) => new Date(t).toISOString().replace(/\.\d{3}Z$/, "Z");
const epoch = (t: string) => Date.parse(t) / 1000;

let namespaces = 0;

/**
 * A harness whose CronJob `name` was created at `created` with `spec` and, when given, the other schedules
 * (`more`: entries, or the annotation's raw value); the clock at `now`.
 */
async function withCronJob(o: {
  name?: string;
  created: string;
  now: string;
  spec: Partial<CronJobInput["spec"]>;
  more?: unknown[] | string;
  annotations?: Record<string, string>;
}): Promise<{ h: ReconcileHarness<FakeClient>; name: string }> {
  const name = o.name ?? "cj";
  const h = await ReconcileHarness.fake(`union-${++namespaces}`, o.now);
  const cj = h.cronJob(name, o.spec);
  const more: Record<string, string> =
    o.more === undefined
      ? {}
      : { [MORE_SCHEDULES_ANNOTATION]: typeof o.more === "string" ? o.more : moreSchedulesValue(o.more) };
  cj.metadata = { ...cj.metadata, creationTimestamp: o.created, annotations: { ...more, ...o.annotations } };
  h.fake!.seed(CronJobKind, cj as CronJob);
  return { h, name };
}

async function passAt(h: ReconcileHarness<FakeClient>, name: string, at: string): Promise<void> {
  h.clock.set(new Date(at));
  await h.reconcile(name);
}

const annotations = (job: Job | undefined) => job?.metadata?.annotations ?? {};
const sourcesOf = (job: Job | undefined) => {
  const v = annotations(job)[SCHEDULE_SOURCES_ANNOTATION];
  return v === undefined ? undefined : (JSON.parse(v) as unknown);
};
const slotsOf = (jobs: readonly Job[]) => jobs.map((j) => annotations(j)[SCHEDULED_AT_ANNOTATION]).sort();

describe("a CronJob with several schedules: the reconciler runs their union", () => {
  it("two schedules in two zones: each slot once, in order, nextScheduleTime the union's earliest", async () => {
    const { h, name } = await withCronJob({
      created: "2026-03-02T00:00:00Z",
      now: "2026-03-02T07:00:00Z",
      spec: { schedule: "0 9 * * *", timeZone: "Europe/Berlin" },
      more: [{ schedule: "0 9 * * *", timeZone: "America/New_York" }],
    });
    await passAt(h, name, "2026-03-02T07:00:00Z");
    let cj = await h.get(name);
    assert.equal(cj.status?.nextScheduleTime, "2026-03-02T08:00:00Z", "Berlin's 09:00 comes first");
    assert.equal(cj.status?.resolvedSchedule, "0 9 * * *; 0 9 * * *");
    assert.equal((await h.jobs(name)).length, 0);

    await passAt(h, name, "2026-03-02T08:00:01Z");
    cj = await h.get(name);
    assert.equal(cj.status?.lastScheduleTime, "2026-03-02T08:00:00Z");
    assert.equal(cj.status?.nextScheduleTime, "2026-03-02T14:00:00Z", "then New York's 09:00");

    await passAt(h, name, "2026-03-02T14:00:01Z");
    await passAt(h, name, "2026-03-02T14:00:02Z");
    const jobs = await h.jobs(name);
    assert.deepEqual(
      jobs.map((j) => j.metadata?.name),
      [`${name}-${epoch("2026-03-02T08:00:00Z")}`, `${name}-${epoch("2026-03-02T14:00:00Z")}`],
    );
    const [berlin, newYork] = jobs;
    assert.deepEqual(sourcesOf(berlin), [{ index: 0, schedule: "0 9 * * *", timeZone: "Europe/Berlin" }]);
    assert.equal(annotations(berlin)[K8S_SCHEDULED_TIMESTAMP_ANNOTATION], "2026-03-02T09:00:00+01:00");
    assert.deepEqual(sourcesOf(newYork), [{ index: 1, schedule: "0 9 * * *", timeZone: "America/New_York" }]);
    assert.equal(
      annotations(newYork)[K8S_SCHEDULED_TIMESTAMP_ANNOTATION],
      "2026-03-02T09:00:00-05:00",
      "the upstream timestamp in the zone of the schedule the slot came from",
    );
    assert.equal((await h.get(name)).status?.nextScheduleTime, "2026-03-03T08:00:00Z");
  });

  it("a second two schedules share is one slot: one Job, naming both", async () => {
    const { h, name } = await withCronJob({
      created: "2026-01-05T00:00:00Z",
      now: "2026-01-05T07:00:00Z",
      spec: { schedule: "0 9 * * *", timeZone: "Europe/Berlin" },
      more: [{ schedule: "0 8 * * *" }, { schedule: "30 8 * * *" }],
    });
    await passAt(h, name, "2026-01-05T08:00:01Z");
    await passAt(h, name, "2026-01-05T08:00:05Z");
    const jobs = await h.jobs(name);
    assert.equal(jobs.length, 1);
    assert.equal(jobs[0]?.metadata?.name, `${name}-${epoch("2026-01-05T08:00:00Z")}`);
    assert.deepEqual(sourcesOf(jobs[0]), [
      { index: 0, schedule: "0 9 * * *", timeZone: "Europe/Berlin" },
      { index: 1, schedule: "0 8 * * *" },
    ]);
    assert.equal(annotations(jobs[0])[K8S_SCHEDULED_TIMESTAMP_ANNOTATION], "2026-01-05T09:00:00+01:00");
    assert.equal((await h.get(name)).status?.nextScheduleTime, "2026-01-05T08:30:00Z");
    const created = h.events().filter((e) => e.startsWith("Normal SuccessfulCreate"));
    assert.equal(created.length, 1);
  });

  it("RunAll catches up every missed slot of the union, oldest first, each once", async () => {
    const { h, name } = await withCronJob({
      created: "2026-01-05T00:00:00Z",
      now: "2026-01-05T06:40:00Z",
      spec: { schedule: "0 */2 * * *", missedRunPolicy: "RunAll", maxCatchUpRuns: 4 },
      more: [{ schedule: "30 */3 * * *" }, { schedule: "0 6 * * *", timeZone: "Etc/UTC" }],
    });
    await passAt(h, name, "2026-01-05T06:40:00Z");
    assert.equal((await h.jobs(name)).length, 4, "maxCatchUpRuns per pass");
    await passAt(h, name, "2026-01-05T06:40:01Z");
    await passAt(h, name, "2026-01-05T06:40:02Z");
    const jobs = await h.jobs(name);
    assert.deepEqual(slotsOf(jobs), [
      "2026-01-05T00:30:00Z",
      "2026-01-05T02:00:00Z",
      "2026-01-05T03:30:00Z",
      "2026-01-05T04:00:00Z",
      "2026-01-05T06:00:00Z",
      "2026-01-05T06:30:00Z",
    ]);
    const six = jobs.find((j) => annotations(j)[SCHEDULED_AT_ANNOTATION] === "2026-01-05T06:00:00Z");
    assert.deepEqual(sourcesOf(six), [
      { index: 0, schedule: "0 */2 * * *" },
      { index: 2, schedule: "0 6 * * *", timeZone: "Etc/UTC" },
    ]);
    const cj = await h.get(name);
    assert.equal(cj.status?.lastScheduleTime, "2026-01-05T06:30:00Z");
    assert.equal(cj.status?.nextScheduleTime, "2026-01-05T08:00:00Z");
  });

  it("RunLatest runs only the union's newest missed slot; startingDeadlineSeconds reports the one out of reach", async () => {
    const { h, name } = await withCronJob({
      created: "2026-01-05T00:00:00Z",
      now: "2026-01-05T06:40:00Z",
      spec: { schedule: "0 */2 * * *" },
      more: [{ schedule: "30 */3 * * *" }],
    });
    await passAt(h, name, "2026-01-05T06:40:00Z");
    assert.deepEqual(slotsOf(await h.jobs(name)), ["2026-01-05T06:30:00Z"]);

    const late = await withCronJob({
      created: "2026-01-05T00:00:00Z",
      now: "2026-01-05T06:40:00Z",
      spec: { schedule: "0 */2 * * *", startingDeadlineSeconds: 300 },
      more: [{ schedule: "30 */3 * * *" }],
    });
    await passAt(late.h, late.name, "2026-01-05T06:40:00Z");
    assert.equal((await late.h.jobs(late.name)).length, 0);
    assert.equal((await late.h.get(late.name)).status?.lastMissedTime, "2026-01-05T06:30:00Z");
    assert.ok(
      late.h
        .events()
        .some((e) => e.startsWith("Warning MissSchedule Missed scheduled time to start a job: 2026-01-05T06:30:00Z")),
      late.h.events().join("\n"),
    );
  });

  it("Skip runs the announced slot of the union and not a slot that passed unannounced", async () => {
    const { h, name } = await withCronJob({
      // After 00:30, the first slot of "30 */3 * * *": a CronJob no pass has seen is owed its first slot.
      created: "2026-01-05T00:40:00Z",
      now: "2026-01-05T01:00:00Z",
      spec: { schedule: "0 */2 * * *", missedRunPolicy: "Skip" },
      more: [{ schedule: "30 */3 * * *" }],
    });
    await passAt(h, name, "2026-01-05T01:00:00Z");
    assert.equal((await h.get(name)).status?.nextScheduleTime, "2026-01-05T02:00:00Z");
    await passAt(h, name, "2026-01-05T02:00:01Z");
    // Down from 02:00 to 04:10: 03:30 and 04:00 passed; 03:30 was announced, 04:00 was not.
    await passAt(h, name, "2026-01-05T04:10:00Z");
    assert.deepEqual(slotsOf(await h.jobs(name)), ["2026-01-05T02:00:00Z"]);
    assert.equal((await h.get(name)).status?.lastMissedTime, "2026-01-05T04:00:00Z");
  });

  it("an @every schedule keeps its own grid (from creation) when another schedule runs between its slots", async () => {
    const { h, name } = await withCronJob({
      created: "2026-01-05T00:17:00Z",
      now: "2026-01-05T00:30:00Z",
      spec: { schedule: "@every 1h" },
      more: [{ schedule: "0 1 * * *" }],
    });
    await passAt(h, name, "2026-01-05T00:30:00Z");
    assert.equal((await h.get(name)).status?.nextScheduleTime, "2026-01-05T01:00:00Z");
    await passAt(h, name, "2026-01-05T01:00:01Z");
    let cj = await h.get(name);
    assert.equal(cj.status?.lastScheduleTime, "2026-01-05T01:00:00Z");
    assert.equal(cj.status?.nextScheduleTime, "2026-01-05T01:17:00Z", "not re-phased to 02:00 by the cron run");
    await passAt(h, name, "2026-01-05T01:17:01Z");
    cj = await h.get(name);
    assert.equal(cj.status?.nextScheduleTime, "2026-01-05T02:17:00Z");
    const jobs = await h.jobs(name);
    assert.deepEqual(slotsOf(jobs), ["2026-01-05T01:00:00Z", "2026-01-05T01:17:00Z"]);
    const every = jobs.find((j) => annotations(j)[SCHEDULED_AT_ANNOTATION] === "2026-01-05T01:17:00Z");
    assert.deepEqual(sourcesOf(every), [{ index: 0, schedule: "@every 1h" }]);
  });

  it("an annotation that does not parse stops scheduling like an invalid spec.schedule, naming the field and value", async () => {
    const { h, name } = await withCronJob({
      created: "2026-01-05T00:00:00Z",
      now: "2026-01-05T01:00:01Z",
      spec: { schedule: "0 * * * *" },
      more: "not json",
    });
    await passAt(h, name, "2026-01-05T01:00:01Z");
    const cj = await h.get(name);
    assert.equal((await h.jobs(name)).length, 0);
    assert.equal(cj.status?.nextScheduleTime, undefined);
    assert.equal(cj.status?.resolvedSchedule, undefined);
    assert.equal(condition(cj, "Available")?.reason, "InvalidSchedule");
    assert.equal(condition(cj, "Degraded")?.reason, "InvalidSchedule");
    const event = h.events().find((e) => e.startsWith("Warning UnparseableSchedule "));
    assert.ok(event, h.events().join("\n"));
    assert.ok(
      event.startsWith(
        `Warning UnparseableSchedule metadata.annotations[${MORE_SCHEDULES_ANNOTATION}]: Invalid value: "not json": must be a JSON list`,
      ),
      event,
    );
  });

  it("an entry of the annotation with an unknown zone is UnknownTimeZone, at the entry's field", async () => {
    const { h, name } = await withCronJob({
      created: "2026-01-05T00:00:00Z",
      now: "2026-01-05T01:00:01Z",
      spec: { schedule: "0 * * * *" },
      more: [{ schedule: "0 9 * * *", timeZone: "Mars/Olympus" }],
    });
    await passAt(h, name, "2026-01-05T01:00:01Z");
    const cj = await h.get(name);
    assert.equal((await h.jobs(name)).length, 0);
    assert.equal(condition(cj, "Available")?.reason, "UnknownTimeZone");
    assert.match(
      cj.status?.conditions?.find((c) => c.type === "Available")?.message ?? "",
      new RegExp(
        `^metadata\\.annotations\\[${MORE_SCHEDULES_ANNOTATION.replaceAll(".", "\\.")}\\]\\[0\\]\\.timeZone: .*"Mars/Olympus"`,
      ),
    );
  });

  it("a backfill runs the union's slots in its range, a shared second once, each Job naming its schedules", async () => {
    const request = backfillAnnotationValue({
      id: "bf-1",
      from: new Date("2026-01-01T00:00:00Z"),
      to: new Date("2026-01-01T23:59:00Z"),
      parallelism: 10,
    });
    const { h, name } = await withCronJob({
      created: "2026-01-02T00:00:00Z",
      now: "2026-01-02T00:30:00Z",
      spec: { schedule: "0 */6 * * *", suspend: true },
      more: [{ schedule: "0 12 * * *", timeZone: "Europe/Berlin" }, { schedule: "0 18 * * *" }],
      annotations: { [BACKFILL_ANNOTATION]: request },
    });
    await passAt(h, name, "2026-01-02T00:30:00Z");
    const jobs = await h.jobs(name);
    assert.deepEqual(slotsOf(jobs), [
      "2026-01-01T00:00:00Z",
      "2026-01-01T06:00:00Z",
      "2026-01-01T11:00:00Z",
      "2026-01-01T12:00:00Z",
      "2026-01-01T18:00:00Z",
    ]);
    assert.ok(jobs.every((j) => annotations(j)[BACKFILL_REQUEST_ANNOTATION] === "bf-1"));
    const at = (slot: string) => jobs.find((j) => annotations(j)[SCHEDULED_AT_ANNOTATION] === slot);
    assert.deepEqual(sourcesOf(at("2026-01-01T11:00:00Z")), [
      { index: 1, schedule: "0 12 * * *", timeZone: "Europe/Berlin" },
    ]);
    assert.equal(
      annotations(at("2026-01-01T11:00:00Z"))[K8S_SCHEDULED_TIMESTAMP_ANNOTATION],
      "2026-01-01T12:00:00+01:00",
    );
    assert.deepEqual(sourcesOf(at("2026-01-01T18:00:00Z")), [
      { index: 0, schedule: "0 */6 * * *" },
      { index: 2, schedule: "0 18 * * *" },
    ]);
    const bf = (await h.get(name)).status?.backfill;
    assert.deepEqual([bf?.phase, bf?.total, bf?.created, bf?.skipped], ["Complete", 5, 5, 0]);
  });

  it("a backfill counts the union's slots against MAX_BACKFILL_SLOTS, a shared second once", async () => {
    // Every slot of "0 */2 * * *" in Berlin (whole-hour offsets) is one of "0 * * * *": the union is hourly. 1000
    // hours hold 1000 slots of the union (1500 if a shared second counted twice): accepted; one more hour is not.
    const request = (to: string, id: string) =>
      backfillAnnotationValue({ id, from: new Date("2026-01-01T00:00:00Z"), to: new Date(to), parallelism: 1 });
    const backfilled = (to: string) =>
      withCronJob({
        created: "2026-03-01T00:00:00Z",
        now: "2026-03-01T00:30:00Z",
        spec: { schedule: "0 */2 * * *", timeZone: "Europe/Berlin", suspend: true },
        more: [{ schedule: "0 * * * *" }],
        annotations: { [BACKFILL_ANNOTATION]: request(to, "bf") },
      });
    const within = await backfilled("2026-02-11T15:00:00Z");
    await passAt(within.h, within.name, "2026-03-01T00:30:00Z");
    const accepted = (await within.h.get(within.name)).status?.backfill;
    assert.equal(accepted?.phase, "Running", accepted?.message);
    assert.equal(accepted?.total, 1000);

    const { h, name } = await backfilled("2026-02-11T16:00:00Z");
    await passAt(h, name, "2026-03-01T00:30:00Z");
    const bf = (await h.get(name)).status?.backfill;
    assert.equal(bf?.phase, "Refused");
    assert.match(bf?.message ?? "", /the range holds more than 1000 slots; at most 1000/);
  });

  it("a run-now Job of a CronJob with several schedules, and every Job of a one-schedule CronJob, names none", async () => {
    const several = await withCronJob({
      created: "2026-01-05T00:00:00Z",
      now: "2026-01-05T00:10:00Z",
      spec: { schedule: "0 * * * *" },
      more: [{ schedule: "30 * * * *" }],
      annotations: { [RUN_NOW_ANNOTATION]: "r1" },
    });
    await passAt(several.h, several.name, "2026-01-05T00:10:00Z");
    const manual = await several.h.jobs(several.name);
    assert.equal(manual.length, 1);
    assert.equal(sourcesOf(manual[0]), undefined);

    const one = await withCronJob({ created: "2026-01-05T00:00:00Z", now: "2026-01-05T01:00:01Z", spec: {} });
    await passAt(one.h, one.name, "2026-01-05T01:00:01Z");
    const jobs = await one.h.jobs(one.name);
    assert.equal(jobs.length, 1);
    assert.deepEqual(
      Object.keys(annotations(jobs[0])).sort(),
      [K8S_SCHEDULED_TIMESTAMP_ANNOTATION, SCHEDULED_AT_ANNOTATION, "example.com/team"].sort(),
    );
    assert.equal((await one.h.get(one.name)).status?.resolvedSchedule, "0 * * * *");
  });
});

describe("a CronJob's schedules as the controller reads them (api/v1/schedules.ts, guarded in controllers/guards.ts)", () => {
  const key = { namespace: "ns", name: "cj" };
  const cronJob = (schedule: string, more?: unknown[], timeZone?: string) => ({
    metadata: {
      name: "cj",
      namespace: "ns",
      ...(more ? { annotations: { [MORE_SCHEDULES_ANNOTATION]: moreSchedulesValue(more) } } : {}),
    },
    spec: { schedule, ...(timeZone ? { timeZone } : {}) },
  });

  it("without the annotation: the single schedule, its resolved text and its error as before", () => {
    const ok = parseSchedules(cronJob("H 3 * * *"), key);
    assert.ok(ok.ok);
    assert.match(ok.schedules.resolved, /^\d+ 3 \* \* \*$/);
    assert.equal(ok.schedules.schedule.set.members.length, 1);
    const bad = parseSchedules(cronJob("0 0 30 2 *"), key);
    assert.ok(!bad.ok);
    assert.equal(bad.error.field, "spec.schedule");
    assert.match(bad.error.message, /^spec\.schedule: Invalid value: "0 0 30 2 \*"/);
    const times = { lastScheduleTime: "2026-01-02T00:00:00Z", creationTimestamp: "2026-01-01T00:00:00Z" };
    assert.equal(
      ok.schedules.everyAnchor(times)?.toISOString(),
      "2026-01-02T00:00:00.000Z",
      "one schedule: the last run",
    );
    assert.equal(ok.schedules.sourcesAt(new Date("2026-01-01T03:00:00Z"), undefined), undefined);
  });

  it("with it: the resolved texts joined by '; ', an entry's error at its field, guarded as InvalidSchedule", () => {
    const ok = parseSchedules(cronJob("H 3 * * *", [{ schedule: "@every 90m" }]), key);
    assert.ok(ok.ok);
    assert.match(ok.schedules.resolved, /^\d+ 3 \* \* \*; @every 90m$/);
    const times = { lastScheduleTime: "2026-01-02T00:00:00Z", creationTimestamp: "2026-01-01T00:00:00Z" };
    assert.equal(ok.schedules.everyAnchor(times)?.toISOString(), "2026-01-01T00:00:00.000Z", "several: the creation");
    const bad = parseSchedules(cronJob("0 3 * * *", [{ schedule: "0 9 * * *" }, { schedule: "0 0 31 2 *" }]), key);
    assert.ok(!bad.ok);
    assert.equal(bad.error.field, `metadata.annotations[${MORE_SCHEDULES_ANNOTATION}][1].schedule`);
    assert.ok(bad.error.message.startsWith(`${bad.error.field}: Invalid value: "0 0 31 2 *"`), bad.error.message);
    const d = guards({ metadata: {}, spec: {} }, bad, 0);
    assert.ok(d.stop && d.event?.reason === "UnparseableSchedule" && d.resolvedSchedule === null);
    assert.deepEqual(
      d.conditions.map((c) => c.reason),
      ["InvalidSchedule", "NoJobsActive", "InvalidSchedule"],
    );
  });

  it("status.resolvedSchedule stays within the CRD's maxLength however long the schedules", () => {
    const long = (minute: number) => `${minute} ${Array.from({ length: 24 }, (_, h) => h).join(",")} * * *`;
    const more = Array.from({ length: 15 }, (_, i) => ({ schedule: long(i + 1) }));
    const ok = parseSchedules(cronJob(long(0), more), key);
    assert.ok(ok.ok);
    assert.equal(ok.schedules.resolved.length, MAX_SCHEDULE_LENGTH);
    assert.ok(ok.schedules.resolved.startsWith(`${long(0)}; ${long(1)}; `) && ok.schedules.resolved.endsWith("…"));
  });

  it("an oversized annotation value is quoted bounded", () => {
    const huge = "x".repeat(10_000);
    const bad = parseSchedules(
      { metadata: { annotations: { [MORE_SCHEDULES_ANNOTATION]: huge } }, spec: { schedule: "0 * * * *" } },
      key,
    );
    assert.ok(!bad.ok);
    assert.ok(bad.error.message.length < 1000, `${bad.error.message.length} characters`);
    assert.match(bad.error.message, /more characters/);
  });
});

describe("UnionSchedule: a ScheduleSet as one Schedule", () => {
  const parsed = (s: string, tz?: string) => {
    const r = parseSchedule(s, tz);
    assert.ok(r.ok);
    return r.schedule;
  };

  it("one member gives exactly the member's next and mostRecent, and @every's closed-form count", () => {
    for (const [text, tz] of [
      ["30 2 * * *", "Europe/Berlin"],
      ["@every 7m", undefined],
      ["*/5 * * * *", "America/New_York"],
    ] as const) {
      const s = parsed(text, tz);
      const u = new UnionSchedule(ScheduleSet.of([s]));
      assert.equal(u.isEvery, s.isEvery);
      assert.equal(u.everySeconds, s.everySeconds);
      const anchor = new Date("2026-03-28T23:13:00Z");
      let t = new Date("2026-03-29T00:00:00Z");
      for (let i = 0; i < 50; i++) {
        const want = s.next(t, anchor);
        assert.equal(u.next(t, anchor).getTime(), want.getTime(), `${text} after ${iso(t)}`);
        assert.equal(u.mostRecent(t, anchor)?.getTime(), s.mostRecent(t, anchor)?.getTime());
        t = i % 7 === 3 ? new Date(want.getTime() + 17_000) : want;
      }
    }
  });

  it("several members: the union's slots, a shared second once, with the members that fire at it", () => {
    const u = new UnionSchedule(ScheduleSet.of([parsed("0 */2 * * *"), parsed("0 */3 * * *"), parsed("0 1 * * *")]));
    assert.equal(u.isEvery, false);
    assert.equal(u.everySeconds, undefined);
    assert.equal(u.description, "0 */2 * * *; 0 */3 * * *; 0 1 * * *");
    const slots: string[] = [];
    for (let t = new Date("2026-01-01T00:00:00Z"); slots.length < 6;) {
      t = u.next(t);
      slots.push(`${iso(t)} ${u.sourcesAt(t).join(",")}`);
    }
    assert.deepEqual(slots, [
      "2026-01-01T01:00:00Z 2",
      "2026-01-01T02:00:00Z 0",
      "2026-01-01T03:00:00Z 1",
      "2026-01-01T04:00:00Z 0",
      "2026-01-01T06:00:00Z 0,1",
      "2026-01-01T08:00:00Z 0",
    ]);
    assert.deepEqual(u.sourcesAt(new Date("2026-01-01T05:00:00Z")), []);
    assert.equal(iso(u.mostRecent(new Date("2026-01-01T05:59:59Z"))!), "2026-01-01T04:00:00Z");
    // A walk that jumps (another `after`, another anchor) gives what a fresh set.next gives.
    assert.equal(iso(u.next(new Date("2026-01-01T00:30:00Z"))), "2026-01-01T01:00:00Z");
    assert.equal(iso(u.next(new Date("2026-01-01T06:00:00Z"))), "2026-01-01T08:00:00Z");
  });
});
