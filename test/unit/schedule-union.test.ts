// The schedule math of a CronJob with several schedules (api/v1/schedule/union.ts, list.ts): the union of the
// members' slots, a shared second as one slot with every source, DST in several zones, H and @every members,
// caps and "more than" counts, and the list's validation. Ranges, newest slots, counts and windows go the way
// the product computes them: window.ts' functions over a UnionSchedule, each slot's sources from sourcesAt.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  countText,
  MAX_SCHEDULE_LENGTH,
  MAX_SCHEDULES,
  MAX_TIME_ZONE_LENGTH,
  MISSED_COUNT_CAP,
  newestSlots,
  parseHashedSchedule,
  parseScheduleList,
  ScheduleSet,
  type ScheduleSetMember,
  scheduleWindow,
  type SetAnchor,
  SLOT_COUNT_LIMIT,
  slotsInRange,
  type SourcedSlot,
  unionCountSlots,
  UnionSchedule,
} from "../../api/v1/schedule/index.ts";
import { fieldErrorString } from "../../runtime/field.ts";
import { countInRange, counted, must as p, sourced } from "../schedules.ts";

const d = (s: string) => new Date(s);
/** "2026-03-08T07:30:00Z 0,1": a slot as one comparable string. */
const show = (s: SourcedSlot | undefined) =>
  s === undefined ? "none" : `${s.at.toISOString().replace(".000Z", "Z")} ${s.sources.join(",")}`;

/** The union's slots in [from, to] as the product finds them: slotsInRange over a UnionSchedule. */
function slotsOf(
  set: ScheduleSet,
  from: Date,
  to: Date,
  o: { after?: Date; max: number; anchor?: Date },
): SourcedSlot[] {
  const union = new UnionSchedule(set);
  return sourced(union, slotsInRange(union, from, to, o), o.anchor);
}

/** The union's slots in (after, notAfter], newest first, as the product finds them: newestSlots over a UnionSchedule. */
function newestOf(set: ScheduleSet, after: Date, notAfter: Date, anchor: Date, max: number): SourcedSlot[] {
  const union = new UnionSchedule(set);
  return sourced(union, newestSlots(union, after, notAfter, anchor, max), anchor);
}

/**
 * The union's slots strictly after `after` up to `to`, at most `max`, with one anchor per member: UnionSchedule
 * takes one Date, so this walks the set's own merge (ScheduleSet.slotsAfter), which UnionSchedule.next continues.
 */
function setSlotsAfter(set: ScheduleSet, after: Date, to: Date, anchor: SetAnchor, max: number): SourcedSlot[] {
  const out: SourcedSlot[] = [];
  for (const slot of set.slotsAfter(after, anchor)) {
    if (slot.at.getTime() > to.getTime() || out.length >= max) break;
    out.push(slot);
  }
  return out;
}

describe("ScheduleSet", () => {
  // 2026-06-05 is a Friday, 2026-06-06 a Saturday.
  const set = ScheduleSet.of([p("0 9 * * *"), p("30 8 * * *"), p("0 9 * * 1-5")]);

  it("merges the members' slots in order; a second members share is one slot naming each, in list order", () => {
    const slots = slotsOf(set, d("2026-06-05T00:00:00Z"), d("2026-06-06T23:59:59Z"), { max: 10 });
    assert.deepEqual(slots.map(show), [
      "2026-06-05T08:30:00Z 1",
      "2026-06-05T09:00:00Z 0,2",
      "2026-06-06T08:30:00Z 1",
      "2026-06-06T09:00:00Z 0",
    ]);
  });

  it("next is strictly after, mostRecent at or before, both with every source", () => {
    assert.equal(show(set.next(d("2026-06-05T08:59:59.999Z"))), "2026-06-05T09:00:00Z 0,2");
    assert.equal(show(set.next(d("2026-06-05T09:00:00Z"))), "2026-06-06T08:30:00Z 1");
    assert.equal(show(set.mostRecent(d("2026-06-05T09:00:00Z"))), "2026-06-05T09:00:00Z 0,2");
    assert.equal(show(set.mostRecent(d("2026-06-05T08:59:59.999Z"))), "2026-06-05T08:30:00Z 1");
  });

  it("names members by their index, whatever order they are given in", () => {
    const members: ScheduleSetMember[] = [
      { index: 5, text: "0 * * * *", schedule: p("0 * * * *") },
      { index: 2, text: "0 */2 * * *", schedule: p("0 */2 * * *") },
    ];
    const s = new ScheduleSet(members);
    assert.deepEqual(
      s.members.map((m) => m.index),
      [2, 5],
    );
    assert.equal(show(s.next(d("2026-01-01T01:30:00Z"))), "2026-01-01T02:00:00Z 2,5");
    assert.equal(show(s.mostRecent(d("2026-01-01T01:30:00Z"))), "2026-01-01T01:00:00Z 5");
  });

  it("refuses an empty list and two members with one index", () => {
    assert.throws(() => new ScheduleSet([]), RangeError);
    const m = { index: 1, text: "@hourly", schedule: p("@hourly") };
    assert.throws(() => new ScheduleSet([m, m]), /two members have index 1/);
    assert.throws(() => new ScheduleSet([{ ...m, index: -1 }]), RangeError);
  });

  it("has no most recent slot before any member's first one (@every without a slot yet)", () => {
    const anchor = d("2026-01-01T00:00:00Z");
    const s = ScheduleSet.of([p("@every 1h")]);
    assert.equal(s.mostRecent(d("2026-01-01T00:59:59Z"), anchor), undefined);
    assert.equal(show(s.mostRecent(d("2026-01-01T01:00:00Z"), anchor)), "2026-01-01T01:00:00Z 0");
  });
});

describe("ScheduleSet across DST changes in different zones", () => {
  // 02:30 does not exist on the spring-forward day (it fires at 03:30, shifted by the gap) and exists twice on
  // Berlin's fall-back day (it fires at the first); on New York's fall-back day 01:00-02:00 repeats, not 02:30.
  const set = ScheduleSet.of([p("30 2 * * *", "Europe/Berlin"), p("30 2 * * *", "America/New_York")]);
  const between = (from: string, to: string) => slotsOf(set, d(from), d(to), { max: 100 }).map(show).join(" | ");

  it("New York springs forward (March 8), then Berlin (March 29)", () => {
    assert.equal(
      between("2026-03-07T00:00:00Z", "2026-03-09T23:59:59Z"),
      [
        "2026-03-07T01:30:00Z 0", // 02:30 CET
        "2026-03-07T07:30:00Z 1", // 02:30 EST
        "2026-03-08T01:30:00Z 0",
        "2026-03-08T07:30:00Z 1", // 02:30 EST does not exist: 03:30 EDT
        "2026-03-09T01:30:00Z 0",
        "2026-03-09T06:30:00Z 1", // 02:30 EDT
      ].join(" | "),
    );
    assert.equal(
      between("2026-03-28T00:00:00Z", "2026-03-30T23:59:59Z"),
      [
        "2026-03-28T01:30:00Z 0",
        "2026-03-28T06:30:00Z 1",
        "2026-03-29T01:30:00Z 0", // 02:30 CET does not exist: 03:30 CEST
        "2026-03-29T06:30:00Z 1",
        "2026-03-30T00:30:00Z 0", // 02:30 CEST
        "2026-03-30T06:30:00Z 1",
      ].join(" | "),
    );
  });

  it("Berlin falls back (October 25), then New York (November 1)", () => {
    assert.equal(
      between("2026-10-24T00:00:00Z", "2026-10-26T23:59:59Z"),
      [
        "2026-10-24T00:30:00Z 0",
        "2026-10-24T06:30:00Z 1",
        "2026-10-25T00:30:00Z 0", // the first 02:30 (CEST); the second (CET, 01:30Z) does not fire
        "2026-10-25T06:30:00Z 1",
        "2026-10-26T01:30:00Z 0",
        "2026-10-26T06:30:00Z 1",
      ].join(" | "),
    );
    assert.equal(
      between("2026-10-31T00:00:00Z", "2026-11-02T23:59:59Z"),
      [
        "2026-10-31T01:30:00Z 0",
        "2026-10-31T06:30:00Z 1",
        "2026-11-01T01:30:00Z 0",
        "2026-11-01T07:30:00Z 1", // 02:30 EST, after 01:00-02:00 repeated
        "2026-11-02T01:30:00Z 0",
        "2026-11-02T07:30:00Z 1",
      ].join(" | "),
    );
  });

  it("walks back over the same slots newest first, and counts them", () => {
    const from = d("2026-03-07T00:00:00Z");
    const to = d("2026-03-30T23:59:59Z");
    const forward = slotsOf(set, from, to, { max: 100 }).map(show);
    // Cron members ignore the anchor newestSlots takes.
    const back = newestOf(set, new Date(from.getTime() - 1), to, from, 100).map(show);
    assert.equal(forward.length, 48);
    assert.deepEqual(back, [...forward].reverse());
    assert.deepEqual(countInRange(new UnionSchedule(set), from, to, undefined), { count: 48, exact: true });
  });

  it("members in two zones share the instants both zones agree on, and part while only one is on summer time", () => {
    // 02:30 in Berlin is 20:30 the day before in New York, except between the two spring (and fall) changes.
    const cross = ScheduleSet.of([p("30 2 * * *", "Europe/Berlin"), p("30 20 * * *", "America/New_York")]);
    const slots = (from: string, to: string) => slotsOf(cross, d(from), d(to), { max: 100 }).map(show);
    assert.deepEqual(slots("2026-03-07T00:00:00Z", "2026-03-09T23:59:59Z"), [
      "2026-03-07T01:30:00Z 0,1",
      "2026-03-08T01:30:00Z 0,1",
      "2026-03-09T00:30:00Z 1",
      "2026-03-09T01:30:00Z 0",
    ]);
    assert.deepEqual(slots("2026-03-29T00:00:00Z", "2026-03-30T23:59:59Z"), [
      "2026-03-29T00:30:00Z 1",
      "2026-03-29T01:30:00Z 0",
      "2026-03-30T00:30:00Z 0,1",
    ]);
    assert.deepEqual(slots("2026-10-24T00:00:00Z", "2026-10-26T23:59:59Z"), [
      "2026-10-24T00:30:00Z 0,1",
      "2026-10-25T00:30:00Z 0,1",
      "2026-10-26T00:30:00Z 1",
      "2026-10-26T01:30:00Z 0",
    ]);
    assert.deepEqual(slots("2026-11-01T00:00:00Z", "2026-11-03T23:59:59Z"), [
      "2026-11-01T00:30:00Z 1",
      "2026-11-01T01:30:00Z 0",
      "2026-11-02T01:30:00Z 0,1",
      "2026-11-03T01:30:00Z 0,1",
    ]);
  });

  it("an hourly member in a real-time zone runs in both repeated hours; a fixed-hour one once", () => {
    const s = ScheduleSet.of([p("0 * * * *", "America/New_York"), p("0 1 * * *", "America/New_York")]);
    assert.deepEqual(slotsOf(s, d("2026-11-01T04:30:00Z"), d("2026-11-01T07:30:00Z"), { max: 10 }).map(show), [
      "2026-11-01T05:00:00Z 0,1", // 01:00 EDT: the fixed-hour member's first 01:00
      "2026-11-01T06:00:00Z 0", // 01:00 EST
      "2026-11-01T07:00:00Z 0",
    ]);
  });

  it("follows real time as a whole only when every member does", () => {
    assert.equal(new UnionSchedule(ScheduleSet.of([p("0 * * * *"), p("@every 1h")])).followsRealTime, true);
    assert.equal(new UnionSchedule(ScheduleSet.of([p("0 * * * *"), p("30 2 * * *")])).followsRealTime, false);
  });
});

describe("ScheduleSet with H members", () => {
  const key = { namespace: "team-a", name: "report" };
  const hashed = (text: string) => {
    const r = parseHashedSchedule(text, key);
    assert.ok(r.ok && r.hashed);
    return r;
  };

  it("resolves each member with the CronJob's hashes: members share the hashed minute", () => {
    const hourly = hashed("H * * * *");
    const daily = hashed("H H * * *");
    const [minute, hour] = daily.resolved.split(" ").map(Number) as [number, number];
    assert.equal(hourly.resolved, `${minute} * * * *`);
    const set = new ScheduleSet([
      { index: 0, text: "H * * * *", schedule: hourly.schedule },
      { index: 1, text: "H H * * *", schedule: daily.schedule },
    ]);
    const day = slotsOf(set, d("2026-06-01T00:00:00Z"), d("2026-06-01T23:59:59Z"), { max: 100 });
    assert.equal(day.length, 24);
    for (const [h, slot] of day.entries()) {
      assert.equal(slot.at.getTime(), Date.UTC(2026, 5, 1, h, minute));
      assert.deepEqual(slot.sources, h === hour ? [0, 1] : [0]);
    }
  });
});

describe("ScheduleSet with @every members", () => {
  const anchor = d("2026-01-01T00:00:00Z");

  it("counts each @every member from the anchor, sharing the seconds it has in common with the others", () => {
    const set = ScheduleSet.of([p("@every 90m"), p("0 * * * *")]);
    const slots = slotsOf(set, anchor, d("2026-01-01T06:00:00Z"), { max: 100, anchor });
    assert.deepEqual(slots.map(show), [
      "2026-01-01T00:00:00Z 1", // the anchor itself is no @every slot (k >= 1)
      "2026-01-01T01:00:00Z 1",
      "2026-01-01T01:30:00Z 0",
      "2026-01-01T02:00:00Z 1",
      "2026-01-01T03:00:00Z 0,1",
      "2026-01-01T04:00:00Z 1",
      "2026-01-01T04:30:00Z 0",
      "2026-01-01T05:00:00Z 1",
      "2026-01-01T06:00:00Z 0,1",
    ]);
    assert.deepEqual(unionCountSlots(set, anchor, d("2026-01-01T06:00:00Z"), anchor), { count: 8, exact: true });
  });

  it("merges @every members at second precision", () => {
    const set = ScheduleSet.of([p("@every 45s"), p("@every 1m")]);
    const slots = slotsOf(set, anchor, d("2026-01-01T00:03:00Z"), { max: 100, anchor });
    assert.deepEqual(slots.map(show), [
      "2026-01-01T00:00:45Z 0",
      "2026-01-01T00:01:00Z 1",
      "2026-01-01T00:01:30Z 0",
      "2026-01-01T00:02:00Z 1",
      "2026-01-01T00:02:15Z 0",
      "2026-01-01T00:03:00Z 0,1",
    ]);
  });

  it("takes one anchor per member: another member's run does not move an @every member's grid", () => {
    const set = ScheduleSet.of([p("@every 1h"), p("0 9 * * *")]);
    const created = d("2026-01-01T08:17:00Z");
    const lastRun = d("2026-01-01T09:00:00Z"); // member 1's slot
    const to = d("2026-01-01T11:30:00Z");
    // One shared anchor (the union's last run) re-phases the @every member to 10:00, 11:00.
    assert.deepEqual(slotsOf(set, lastRun, to, { after: lastRun, max: 10, anchor: lastRun }).map(show), [
      "2026-01-01T10:00:00Z 0",
      "2026-01-01T11:00:00Z 0",
    ]);
    // Its own anchor (the creation time until it has run) keeps it at :17 ...
    const own = new Map([[0, created]]);
    assert.deepEqual(setSlotsAfter(set, lastRun, to, own, 10).map(show), [
      "2026-01-01T09:17:00Z 0",
      "2026-01-01T10:17:00Z 0",
      "2026-01-01T11:17:00Z 0",
    ]);
    assert.equal(show(set.mostRecent(d("2026-01-01T09:30:00Z"), own)), "2026-01-01T09:17:00Z 0");
    // ... and so does its own newest slot once it has one: the same grid.
    const ran = d("2026-01-01T09:17:00Z");
    assert.deepEqual(setSlotsAfter(set, ran, to, new Map([[0, ran]]), 10).map(show), [
      "2026-01-01T10:17:00Z 0",
      "2026-01-01T11:17:00Z 0",
    ]);
  });

  it("a member a map leaves out has no anchor: next counts from `after`, and it has no most recent slot", () => {
    const set = ScheduleSet.of([p("@every 1h"), p("0 9 * * *")]);
    const none = new Map<number, Date>();
    assert.equal(show(set.next(d("2026-01-01T07:20:00Z"), none)), "2026-01-01T08:20:00Z 0");
    assert.equal(show(set.mostRecent(d("2026-01-01T09:30:00Z"), none)), "2026-01-01T09:00:00Z 1");
  });

  it("UnionSchedule.next continues its walk only under the same anchor: another one moves the @every grid", () => {
    const union = new UnionSchedule(ScheduleSet.of([p("@every 1h"), p("0 9 * * *")]));
    assert.equal(union.next(anchor, anchor).toISOString(), "2026-01-01T01:00:00.000Z");
    // Asked from that slot again, anchored at 00:20 now: 01:20, not 02:00 (the next step of the walk anchored at 00:00).
    const moved = d("2026-01-01T00:20:00Z");
    assert.equal(union.next(d("2026-01-01T01:00:00Z"), moved).toISOString(), "2026-01-01T01:20:00.000Z");
  });
});

describe("union window functions: caps and counts", () => {
  it("counts a shared second once", () => {
    const set = ScheduleSet.of([p("0 * * * *"), p("0 */2 * * *")]);
    const c = countInRange(new UnionSchedule(set), d("2026-01-01T00:00:00Z"), d("2026-01-01T23:00:00Z"), undefined);
    assert.deepEqual(c, { count: 24, exact: true });
    assert.deepEqual(unionCountSlots(set, d("2026-01-01T00:00:00Z"), d("2026-01-01T00:00:00Z"), undefined), {
      count: 0,
      exact: true,
    });
  });

  it("is exact up to the limit and 'more than' past it", () => {
    const set = ScheduleSet.of([p("0 * * * *"), p("30 * * * *", "Asia/Kolkata")]); // :30 in Kolkata is :00 UTC
    const after = d("2026-01-01T00:00:00Z");
    assert.deepEqual(unionCountSlots(set, after, d("2026-01-01T10:00:00Z"), undefined, 10), { count: 10, exact: true });
    assert.deepEqual(unionCountSlots(set, after, d("2026-01-01T11:00:00Z"), undefined, 10), {
      count: 10,
      exact: false,
    });
    assert.equal(countText(unionCountSlots(set, after, d("2026-01-01T11:00:00Z"), undefined, 10)), "more than 10");
  });

  it("stays bounded for members firing every minute over years: at most limit + 1 slots are visited", () => {
    const a = counted(p("* * * * *", "Europe/Berlin"));
    const b = counted(p("*/2 * * * *"));
    const set = ScheduleSet.of([a.schedule, b.schedule]);
    const c = unionCountSlots(set, d("2020-01-01T00:00:00Z"), d("2030-01-01T00:00:00Z"), undefined);
    assert.deepEqual(c, { count: SLOT_COUNT_LIMIT, exact: false });
    assert.equal(countText(c), `more than ${SLOT_COUNT_LIMIT}`);
    // Each member's chain goes one slot past the limit, no further.
    assert.ok(a.calls() <= SLOT_COUNT_LIMIT + 2, `${a.calls()} calls`);
    assert.ok(b.calls() <= SLOT_COUNT_LIMIT / 2 + 2, `${b.calls()} calls`);
  });

  it("newest slots stop at the cap, slots in a range at max, each without walking further", () => {
    const a = counted(p("* * * * *"));
    const b = counted(p("*/5 * * * *", "America/New_York"));
    const set = ScheduleSet.of([a.schedule, b.schedule]);
    const union = new UnionSchedule(set);
    const from = d("2016-01-01T00:00:00Z");
    const to = d("2026-01-01T00:00:00Z");
    // Cron members ignore the anchor newestSlots takes.
    const newestAt = newestSlots(union, from, to, from, 101);
    const [aCalls, bCalls] = [a.calls(), b.calls()];
    const newest = sourced(union, newestAt);
    assert.equal(newest.length, 101);
    assert.equal(show(newest[0]), "2026-01-01T00:00:00Z 0,1");
    assert.equal(show(newest[1]), "2025-12-31T23:59:00Z 0");
    assert.equal(show(newest[100]), "2025-12-31T22:20:00Z 0,1");
    // UnionSchedule.mostRecent merges afresh at each step, so newestSlots asks every member once per slot, and
    // once past the cap: no further.
    assert.ok(aCalls <= 102 && bCalls <= 102, `${aCalls}, ${bCalls} calls`);
    // The set's own backward merge (what UnionSchedule.mostRecent starts) asks only the members that fired.
    const [a0, b0] = [a.calls(), b.calls()];
    const back: SourcedSlot[] = [];
    for (const slot of set.slotsBackFrom(to)) {
      if (slot.at.getTime() <= from.getTime()) break;
      back.push(slot);
      if (back.length >= 101) break;
    }
    assert.deepEqual(back.map(show), newest.map(show));
    assert.ok(a.calls() - a0 <= 102 && b.calls() - b0 <= 22, `${a.calls() - a0}, ${b.calls() - b0} calls`);

    const first = slotsOf(set, from, to, { max: 3 });
    assert.deepEqual(first.map(show), ["2016-01-01T00:00:00Z 0,1", "2016-01-01T00:01:00Z 0", "2016-01-01T00:02:00Z 0"]);
    const resumed = slotsOf(set, from, to, { max: 2, after: first[2]!.at });
    assert.deepEqual(resumed.map(show), ["2016-01-01T00:03:00Z 0", "2016-01-01T00:04:00Z 0"]);
    assert.deepEqual(slotsOf(set, from, to, { max: 0 }), []);
    assert.deepEqual(newestOf(set, from, to, from, 0), []);
  });

  it("the schedule window: newest missed slot with its sources, the next one, missed slots counted to the cap", () => {
    const set = ScheduleSet.of([p("0 * * * *"), p("0 0 * * *", "Europe/Berlin")]);
    const union = new UnionSchedule(set);
    const now = d("2026-01-10T23:30:00Z");
    const w = scheduleWindow({ schedule: union, earliest: d("2026-01-01T00:00:00Z"), now });
    assert.equal(show(w.missed && sourced(union, [w.missed])[0]), "2026-01-10T23:00:00Z 0,1"); // midnight in Berlin
    assert.equal(show(sourced(union, [w.next])[0]), "2026-01-11T00:00:00Z 0");
    assert.equal(w.missedCount, MISSED_COUNT_CAP);

    const recent = scheduleWindow({ schedule: union, earliest: d("2026-01-10T20:30:00Z"), now });
    assert.equal(recent.missedCount, 3);
    const none = scheduleWindow({ schedule: union, earliest: d("2026-01-10T23:00:00Z"), now });
    assert.deepEqual({ missed: none.missed, missedCount: none.missedCount }, { missed: undefined, missedCount: 0 });
  });
});

describe("parseScheduleList", () => {
  const key = { namespace: "team-a", name: "report" };
  const errorsOf = (list: unknown) => {
    const r = parseScheduleList(list, key);
    assert.ok(!r.ok, "expected errors");
    return r.errors.map(fieldErrorString);
  };

  it("builds the set, members indexed by position, labelled as written", () => {
    const r = parseScheduleList(
      [
        { schedule: "30 2 * * *", timeZone: "Europe/Berlin" },
        { schedule: "30 2 * * *", timeZone: "America/New_York" },
      ],
      key,
    );
    assert.ok(r.ok);
    assert.deepEqual(
      r.set.members.map((m) => [m.index, m.text, m.schedule.timeZone]),
      [
        [0, "30 2 * * *", "Europe/Berlin"],
        [1, "30 2 * * *", "America/New_York"],
      ],
    );
    assert.deepEqual(r.warnings, []);
  });

  it("needs between 1 and MAX_SCHEDULES schedules", () => {
    assert.match(errorsOf(undefined)[0] ?? "", /^spec\.schedules: Required value: at least one schedule/);
    assert.match(errorsOf([])[0] ?? "", /^spec\.schedules: Required value: at least one schedule/);
    assert.match(errorsOf("0 * * * *")[0] ?? "", /^spec\.schedules: Invalid value: "0 \* \* \* \*": must be a list/);
    const many = Array.from({ length: MAX_SCHEDULES + 1 }, (_, i) => ({ schedule: `${i} * * * *` }));
    assert.deepEqual(errorsOf(many), [`spec.schedules: Too many: ${MAX_SCHEDULES + 1}: must have at most 16 items`]);
    assert.ok(parseScheduleList(many.slice(0, MAX_SCHEDULES), key).ok);
  });

  it("bounds each member's schedule and zone as the schema bounds spec.schedule and spec.timeZone", () => {
    // v1's more-schedules annotation has no schema of its own: without this, a v1 write could store a schedule
    // that the same object read as v2 refuses, and Job annotations quoting it without bound.
    const longest = `00 0 * * ${"1,".repeat(507)}1`;
    assert.equal(longest.length, MAX_SCHEDULE_LENGTH);
    assert.ok(parseScheduleList([{ schedule: "0 9 * * *" }, { schedule: longest }], key).ok);
    const errors = errorsOf([
      { schedule: "0 9 * * *" },
      { schedule: `${longest},1` },
      { schedule: "0 9 * * *", timeZone: `Europe/${"B".repeat(MAX_TIME_ZONE_LENGTH)}` },
    ]);
    assert.equal(errors.length, 2, errors.join("\n"));
    assert.match(errors[0]!, /^spec\.schedules\[1\]\.schedule: Too long: must have at most 1024 bytes$/);
    assert.match(errors[1]!, /^spec\.schedules\[2\]\.timeZone: Too long: must have at most 255 bytes$/);
  });

  it("names both entries of a duplicate", () => {
    assert.deepEqual(
      errorsOf([
        { schedule: "0 9 * * *" },
        { schedule: "0 * * * *", timeZone: "Europe/Berlin" },
        { schedule: "0 * * * *" },
        { schedule: "0  *  * * *", timeZone: "Europe/Berlin" },
      ]),
      [
        'spec.schedules[3]: Duplicate value: {"schedule":"0  *  * * *","timeZone":"Europe/Berlin"}: the same schedule as spec.schedules[1] ("0 * * * *" in Europe/Berlin): it fires at the same times; remove one',
      ],
    );
  });

  it("takes a duplicate by what it fires at: descriptors, H, unset zone as UTC, @every in any zone", () => {
    const dup = (a: object, b: object) => errorsOf([a, b]).some((e) => e.startsWith("spec.schedules[1]: Duplicate"));
    assert.ok(dup({ schedule: "@hourly" }, { schedule: "0 * * * *", timeZone: "UTC" }));
    const hashed = parseHashedSchedule("H * * * *", key);
    assert.ok(hashed.ok && hashed.hashed);
    assert.ok(dup({ schedule: "H * * * *" }, { schedule: ` ${hashed.resolved} ` }));
    assert.ok(dup({ schedule: "@every 1h", timeZone: "Asia/Tokyo" }, { schedule: "@every 60m" }));
    // Not duplicates: other zones, and another DST policy (hour `*` follows real time, 0-23 fires once per hour).
    assert.ok(
      parseScheduleList([{ schedule: "0 9 * * *" }, { schedule: "0 9 * * *", timeZone: "Asia/Tokyo" }], key).ok,
    );
    assert.ok(parseScheduleList([{ schedule: "0 * * * *" }, { schedule: "0 0-23 * * *" }], key).ok);
  });

  it("reports each member's error at its own path, all of them", () => {
    assert.deepEqual(
      errorsOf([
        { schedule: "0 * * * *" },
        { schedule: "@every 1h" },
        { schedule: "61 * * * *" },
        { schedule: "0 * * * *", timeZone: "Mars/Olympus" },
        { schedule: "h * * * *" },
        "@daily",
        {},
        { schedule: 5, timeZone: 3 },
        { schedule: "bad", timeZone: "local" },
      ]),
      [
        'spec.schedules[2].schedule: Invalid value: "61 * * * *": minute value 61 is out of range 0-59',
        'spec.schedules[3].timeZone: Invalid value: "Mars/Olympus": unknown time zone; use an IANA name such as "America/New_York" or "Etc/UTC"',
        'spec.schedules[4].schedule: Invalid value: "h * * * *": minute h: write H in upper case (H)',
        'spec.schedules[5]: Invalid value: "@daily": must be an object: {schedule: "<cron>", timeZone: "<IANA zone>"} (timeZone optional, UTC when unset)',
        'spec.schedules[6].schedule: Required value: a schedule in cron format, e.g. "0 * * * *" or "@hourly"',
        "spec.schedules[7].timeZone: Invalid value: 3: must be an IANA time zone name such as Europe/Berlin",
        'spec.schedules[7].schedule: Invalid value: 5: must be a string in cron format, e.g. "0 * * * *"',
        'spec.schedules[8].timeZone: Invalid value: "local": "Local" (the controller\'s own zone) is not allowed; use an IANA name such as "America/New_York" or "Etc/UTC"',
        'spec.schedules[8].schedule: Invalid value: "bad": 1 field given; a schedule has 5 fields: minute hour day-of-month month day-of-week, or a descriptor: @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every <duration>',
      ],
    );
  });

  it("H needs the CronJob's name; its errors and warnings point at the member", () => {
    const r = parseScheduleList([{ schedule: "0 9 * * *" }, { schedule: "H * * * *" }], { namespace: "ns", name: "" });
    assert.ok(!r.ok);
    assert.match(
      fieldErrorString(r.errors[0]!),
      /^spec\.schedules\[1\]\.schedule: Invalid value: "H \* \* \* \*": H needs a fixed metadata\.name/,
    );

    const ok = parseScheduleList([{ schedule: "H H * * *" }, { schedule: "@every 30s" }], key);
    assert.ok(ok.ok);
    assert.equal(ok.warnings.length, 2);
    assert.match(
      ok.warnings[0] ?? "",
      /^spec\.schedules\[0\]\.schedule: "H H \* \* \*" runs as "\d+ \d+ \* \* \*" for this CronJob/,
    );
    assert.match(
      ok.warnings[1] ?? "",
      /^spec\.schedules\[1\]\.schedule: "@every 30s" runs more often than once a minute/,
    );
  });

  it("takes another path for the list", () => {
    assert.deepEqual(
      (() => {
        const r = parseScheduleList([{ schedule: "x" }], key, "spec.template.schedules");
        return r.ok ? [] : r.errors.map((e) => e.field);
      })(),
      ["spec.template.schedules[0].schedule"],
    );
  });
});
