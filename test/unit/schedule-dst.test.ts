// The DST policy, pinned on real transitions. Kubernetes (robfig) runs a daily job twice on fall-back and
// skips it on spring-forward (kubernetes#121594); cron-parser 5.10.5 gets these right going forward in
// whole-hour zones, but its prev() disagrees with next(), step hours are gap-shifted instead of skipped, a
// 30-minute gap drops the slot, and an hourly schedule on Lord Howe's fall-back throws "loop limit exceeded".
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Schedule } from "../../api/v1/schedule/index.ts";
import { must } from "../schedules.ts";

/** Every slot in (from, to], forwards with next. */
function slots(s: Schedule, from: string, to: string): string[] {
  const out: string[] = [];
  const end = new Date(to).getTime();
  for (let t = s.next(new Date(from)); t.getTime() <= end; t = s.next(t)) out.push(t.toISOString().slice(0, 16));
  return out;
}

/** The same slots found backwards with mostRecent, so both directions are held to one answer. */
function slotsBackwards(s: Schedule, from: string, to: string): string[] {
  const out: string[] = [];
  const start = new Date(from).getTime();
  for (let t = s.mostRecent(new Date(to)); t && t.getTime() > start; t = s.mostRecent(new Date(t.getTime() - 1))) {
    out.unshift(t.toISOString().slice(0, 16));
  }
  return out;
}

function both(s: Schedule, from: string, to: string): string[] {
  const forwards = slots(s, from, to);
  assert.deepEqual(slotsBackwards(s, from, to), forwards, "mostRecent disagrees with next");
  return forwards;
}

function localDate(iso: string, timeZone: string): string {
  return new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(
    new Date(`${iso}:00Z`),
  );
}

function localTime(iso: string, timeZone: string): string {
  return new Intl.DateTimeFormat("en-GB", {
    timeZone,
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
    timeZoneName: "longOffset",
  }).format(new Date(`${iso}:00Z`));
}

/** A fixed-hour daily schedule fires exactly once on each local day of the range. */
function assertOncePerLocalDay(found: string[], timeZone: string, days: string[]) {
  assert.deepEqual(
    found.map((iso) => localDate(iso, timeZone)),
    days,
  );
}

describe("DST: America/New_York", () => {
  const tz = "America/New_York";

  it("spring forward (2026-03-08 02:00 -> 03:00): 30 2 * * * fires once, at 03:30 EDT", () => {
    const found = both(must("30 2 * * *", tz), "2026-03-06T12:00Z", "2026-03-10T12:00Z");
    assert.deepEqual(found, ["2026-03-07T07:30", "2026-03-08T07:30", "2026-03-09T06:30", "2026-03-10T06:30"]);
    assert.equal(localTime("2026-03-08T07:30", tz), "03:30 GMT-04:00");
    assertOncePerLocalDay(found, tz, ["2026-03-07", "2026-03-08", "2026-03-09", "2026-03-10"]);
  });

  it("fall back (2026-11-01 02:00 -> 01:00): 30 1 * * * fires once, at the first 01:30 (05:30Z)", () => {
    const found = both(must("30 1 * * *", tz), "2026-10-30T12:00Z", "2026-11-03T12:00Z");
    assert.deepEqual(found, ["2026-10-31T05:30", "2026-11-01T05:30", "2026-11-02T06:30", "2026-11-03T06:30"]);
    assert.equal(localTime("2026-11-01T05:30", tz), "01:30 GMT-04:00");
  });

  it("fall back: 30 2 * * * (not repeated) fires once per day", () => {
    const found = both(must("30 2 * * *", tz), "2026-10-30T12:00Z", "2026-11-03T12:00Z");
    assertOncePerLocalDay(found, tz, ["2026-10-31", "2026-11-01", "2026-11-02", "2026-11-03"]);
    assert.deepEqual(found[1], "2026-11-01T07:30");
  });

  it("hourly follows real time: both 01:00 EDT and 01:00 EST on fall-back, nothing invented on spring-forward", () => {
    assert.deepEqual(both(must("0 * * * *", tz), "2026-11-01T03:30Z", "2026-11-01T08:30Z"), [
      "2026-11-01T04:00",
      "2026-11-01T05:00",
      "2026-11-01T06:00",
      "2026-11-01T07:00",
      "2026-11-01T08:00",
    ]);
    assert.equal(localTime("2026-11-01T05:00", tz), "01:00 GMT-04:00");
    assert.equal(localTime("2026-11-01T06:00", tz), "01:00 GMT-05:00");
    assert.deepEqual(both(must("0 * * * *", tz), "2026-03-08T04:30Z", "2026-03-08T08:30Z"), [
      "2026-03-08T05:00",
      "2026-03-08T06:00",
      "2026-03-08T07:00",
      "2026-03-08T08:00",
    ]);
    assert.equal(localTime("2026-03-08T07:00", tz), "03:00 GMT-04:00");
  });

  it("*/30 * * * * follows real time through both transitions", () => {
    assert.deepEqual(both(must("*/30 * * * *", tz), "2026-11-01T04:50Z", "2026-11-01T07:10Z"), [
      "2026-11-01T05:00",
      "2026-11-01T05:30",
      "2026-11-01T06:00",
      "2026-11-01T06:30",
      "2026-11-01T07:00",
    ]);
    assert.deepEqual(both(must("*/30 * * * *", tz), "2026-03-08T05:50Z", "2026-03-08T07:40Z"), [
      "2026-03-08T06:00",
      "2026-03-08T06:30",
      "2026-03-08T07:00",
      "2026-03-08T07:30",
    ]);
  });

  it("a stepped hour follows real time too: 0 */2 skips the 02:00 that does not exist", () => {
    assert.deepEqual(both(must("0 */2 * * *", tz), "2026-03-08T04:30Z", "2026-03-08T10:30Z"), [
      "2026-03-08T05:00",
      "2026-03-08T08:00",
      "2026-03-08T10:00",
    ]);
  });

  it("a fixed hour list or range fires once per local slot: 0 1-3 on fall-back", () => {
    assert.deepEqual(both(must("0 1-3 * * *", tz), "2026-11-01T03:30Z", "2026-11-01T09:00Z"), [
      "2026-11-01T05:00",
      "2026-11-01T07:00",
      "2026-11-01T08:00",
    ]);
  });

  it("a gap-shifted slot that lands on another slot fires once", () => {
    // 02:30 shifts to 03:30 EDT, which is also the 03:30 slot.
    assert.deepEqual(both(must("30 2,3 * * *", tz), "2026-03-08T05:00Z", "2026-03-08T09:00Z"), ["2026-03-08T07:30"]);
  });

  it("answers next and mostRecent from inside the gap and inside the repeated hour", () => {
    const daily = must("30 1 * * *", tz);
    // 06:10Z is 01:10 EST, the second pass: today's 01:30 already fired at 05:30Z.
    assert.equal(daily.next(new Date("2026-11-01T06:10:00Z")).toISOString(), "2026-11-02T06:30:00.000Z");
    assert.equal(daily.mostRecent(new Date("2026-11-01T06:40:00Z"))?.toISOString(), "2026-11-01T05:30:00.000Z");
    const shifted = must("30 2 * * *", tz);
    assert.equal(shifted.next(new Date("2026-03-08T07:00:00Z")).toISOString(), "2026-03-08T07:30:00.000Z");
    assert.equal(shifted.mostRecent(new Date("2026-03-08T07:29:59Z"))?.toISOString(), "2026-03-07T07:30:00.000Z");
    assert.equal(shifted.mostRecent(new Date("2026-03-08T07:30:00Z"))?.toISOString(), "2026-03-08T07:30:00.000Z");
  });
});

describe("DST: Europe/Berlin", () => {
  const tz = "Europe/Berlin";

  it("spring forward (2026-03-29 02:00 -> 03:00): 30 2 * * * fires once, at 03:30 CEST", () => {
    const found = both(must("30 2 * * *", tz), "2026-03-27T12:00Z", "2026-03-31T12:00Z");
    assert.deepEqual(found, ["2026-03-28T01:30", "2026-03-29T01:30", "2026-03-30T00:30", "2026-03-31T00:30"]);
    assert.equal(localTime("2026-03-29T01:30", tz), "03:30 GMT+02:00");
  });

  it("fall back (2026-10-25 03:00 -> 02:00): 30 2 * * * fires once, at the first 02:30 (CEST)", () => {
    const found = both(must("30 2 * * *", tz), "2026-10-23T12:00Z", "2026-10-27T12:00Z");
    assert.deepEqual(found, ["2026-10-24T00:30", "2026-10-25T00:30", "2026-10-26T01:30", "2026-10-27T01:30"]);
    assert.equal(localTime("2026-10-25T00:30", tz), "02:30 GMT+02:00");
  });

  it("hourly runs in both repeated hours", () => {
    assert.deepEqual(both(must("0 * * * *", tz), "2026-10-24T23:30Z", "2026-10-25T02:30Z"), [
      "2026-10-25T00:00",
      "2026-10-25T01:00",
      "2026-10-25T02:00",
    ]);
    assert.equal(localTime("2026-10-25T00:00", tz), "02:00 GMT+02:00");
    assert.equal(localTime("2026-10-25T01:00", tz), "02:00 GMT+01:00");
  });
});

describe("DST: Australia/Lord_Howe (30-minute shifts)", () => {
  const tz = "Australia/Lord_Howe";

  it("fall back (2026-04-05 02:00 -> 01:30): 30 2 and 45 1 fire once per day, 45 1 at its first occurrence", () => {
    const daily = both(must("30 2 * * *", tz), "2026-04-03T00:00Z", "2026-04-06T23:00Z");
    assertOncePerLocalDay(daily, tz, ["2026-04-04", "2026-04-05", "2026-04-06", "2026-04-07"]);
    const repeated = both(must("45 1 * * *", tz), "2026-04-03T12:00Z", "2026-04-06T12:00Z");
    assert.deepEqual(repeated, ["2026-04-03T14:45", "2026-04-04T14:45", "2026-04-05T15:15"]);
    assert.equal(localTime("2026-04-04T14:45", tz), "01:45 GMT+11:00");
  });

  it("spring forward (2026-10-04 02:00 -> 02:30): 15 2 shifts by the 30-minute gap to 02:45", () => {
    const found = both(must("15 2 * * *", tz), "2026-10-02T12:00Z", "2026-10-05T00:00Z");
    assert.deepEqual(found, ["2026-10-02T15:45", "2026-10-03T15:45", "2026-10-04T15:15"]);
    assert.equal(localTime("2026-10-03T15:45", tz), "02:45 GMT+11:00");
    const daily = both(must("30 2 * * *", tz), "2026-10-02T12:00Z", "2026-10-05T18:00Z");
    assertOncePerLocalDay(daily, tz, ["2026-10-03", "2026-10-04", "2026-10-05", "2026-10-06"]);
  });

  it("keeps the daily slot of the day after either change, which robfig/cron v3 skips (a differential against it)", () => {
    // robfig's next after these instants is a day later: 2024-04-09 00:00 and 2025-10-06 03:00.
    assert.deepEqual(both(must("0 0 * * *", tz), "2024-04-06T14:30Z", "2024-04-08T14:00Z"), [
      "2024-04-07T13:30",
      "2024-04-08T13:30",
    ]);
    assert.equal(localTime("2024-04-07T13:30", tz), "00:00 GMT+10:30");
    assert.deepEqual(both(must("0 3 * * *", tz), "2025-10-04T15:00Z", "2025-10-05T17:00Z"), [
      "2025-10-04T16:00",
      "2025-10-05T16:00",
    ]);
    assert.equal(localTime("2025-10-04T16:00", tz), "03:00 GMT+11:00");
  });

  it("hourly and */30 follow real time across the half-hour fall-back", () => {
    // 01:00 LHDT, then the clock shows 02:00 again only 90 minutes later.
    assert.deepEqual(both(must("0 * * * *", tz), "2026-04-04T13:50Z", "2026-04-04T17:00Z"), [
      "2026-04-04T14:00",
      "2026-04-04T15:30",
      "2026-04-04T16:30",
    ]);
    assert.deepEqual(both(must("*/30 * * * *", tz), "2026-04-04T13:50Z", "2026-04-04T16:00Z"), [
      "2026-04-04T14:00",
      "2026-04-04T14:30",
      "2026-04-04T15:00",
      "2026-04-04T15:30",
      "2026-04-04T16:00",
    ]);
    assert.deepEqual(both(must("*/30 * * * *", tz), "2026-10-03T14:50Z", "2026-10-03T16:00Z"), [
      "2026-10-03T15:00",
      "2026-10-03T15:30",
      "2026-10-03T16:00",
    ]);
  });
});

describe("DST: a transition at midnight (America/Santiago)", () => {
  const tz = "America/Santiago";

  it("@daily still fires once on the day that starts at 01:00", () => {
    // 2026-09-06 00:00 -04 jumps to 01:00 -03.
    const found = both(must("@daily", tz), "2026-09-04T12:00Z", "2026-09-07T12:00Z");
    assertOncePerLocalDay(found, tz, ["2026-09-05", "2026-09-06", "2026-09-07"]);
    assert.equal(found[1], "2026-09-06T04:00");
  });
});

describe("DST: a two-hour shift (Antarctica/Troll, +00 <-> +02)", () => {
  const tz = "Antarctica/Troll";

  it("deep inside the two-hour repeat, a fixed slot that already fired is not offered again", () => {
    // 2026-10-25 01:00Z: 03:00 +02 becomes 01:00 +00, so 01:00-02:59 is shown twice.
    const s = must("30 2 * * *", tz);
    assert.equal(s.mostRecent(new Date("2026-10-25T02:45:00Z"))?.toISOString(), "2026-10-25T00:30:00.000Z");
    assert.equal(s.next(new Date("2026-10-25T02:10:00Z")).toISOString(), "2026-10-26T02:30:00.000Z");
    assert.deepEqual(both(s, "2026-10-24T00:00Z", "2026-10-26T23:00Z"), [
      "2026-10-24T00:30",
      "2026-10-25T00:30",
      "2026-10-26T02:30",
    ]);
  });

  it("a slot in the two-hour gap shifts by two hours", () => {
    // 2026-03-29 01:00Z: 01:00 +00 becomes 03:00 +02; 02:30 fires at 04:30 +02.
    assert.deepEqual(both(must("30 2 * * *", tz), "2026-03-28T00:00Z", "2026-03-30T23:00Z"), [
      "2026-03-28T02:30",
      "2026-03-29T02:30",
      "2026-03-30T00:30",
    ]);
    assert.equal(localTime("2026-03-29T02:30", tz), "04:30 GMT+02:00");
  });
});

describe("DST: a whole day skipped (Pacific/Apia, 2011-12-30)", () => {
  const tz = "Pacific/Apia";

  it("a slot on the skipped day fires shifted by the whole day, also asked about hours after the jump", () => {
    // 2011-12-30T10:00Z: 23:59:59 -10 on the 29th became 00:00 +14 on the 31st, so 12:00 on the 30th never
    // showed; shifted forward by the 24-hour gap it fires at 12:00 +14 on the 31st (22:00Z).
    const s = must("0 12 30 12 *", tz);
    assert.deepEqual(both(s, "2011-12-28T00:00Z", "2012-01-02T00:00Z"), ["2011-12-30T22:00"]);
    assert.equal(localTime("2011-12-30T22:00", tz), "12:00 GMT+14:00");
    // 20:00Z is 10:00 on the 31st, ten hours after the jump and before the shifted slot.
    assert.equal(s.next(new Date("2011-12-30T20:00:00Z")).toISOString(), "2011-12-30T22:00:00.000Z");
  });
});
