// Exclusion windows (api/v1/schedule/exclusionwindows.ts): how each form reads and what it holds, windows read in the
// schedule's zone across both DST changes, the schedule that skips them (held to the plain schedule slot by
// slot), what the webhook is told about slots left, and every refusal naming the field and the value.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type CompiledWindow,
  ExcludingSchedule,
  Exclusions,
  MAX_EXCLUSION_WINDOWS,
  MAX_SKIPPED_SLOTS,
  parseExclusionWindows,
  parseSchedule,
  type Schedule,
  slotsLeft,
} from "../../api/v1/schedule/index.ts";
import { scheduleListSchedules } from "../../api/v1/schedules.ts";

const PATH = "spec.exclusions.windows";
const NEVER = 8.64e15;

function windows(list: unknown[]): CompiledWindow[] {
  const r = parseExclusionWindows(list, PATH);
  assert.ok(r.ok, r.ok ? "" : r.errors.map((e) => e.message).join("\n"));
  return r.windows;
}

function window(w: object): CompiledWindow {
  const [only] = windows([w]);
  assert.ok(only);
  return only;
}

function exclusions(list: unknown[], by = "spec.exclusions"): Exclusions {
  return new Exclusions([{ by, windows: windows(list) }]);
}

function must(schedule: string, timeZone?: string): Schedule {
  const r = parseSchedule(schedule, timeZone);
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  return r.schedule;
}

/** A wall-clock time ("2026-12-25T02:30") as the floating ms windows take. */
const wall = (local: string) => Date.parse(`${local}Z`);
const at = (iso: string) => new Date(iso);
const iso = (d: Date | undefined) => d?.toISOString().slice(0, 16);

function errorsOf(list: unknown, path = PATH): string[] {
  const r = parseExclusionWindows(list, path);
  assert.equal(r.ok, false, "expected errors");
  return r.ok ? [] : r.errors.map((e) => e.message);
}

/** Slots in (from, to], forwards with next. */
function slots(s: Schedule, from: string, to: string): string[] {
  const out: string[] = [];
  const end = Date.parse(to);
  for (let t = s.next(at(from)); t.getTime() <= end; t = s.next(t)) out.push(iso(t) ?? "");
  return out;
}

/** The same slots found backwards with mostRecent, held to the forward answer. */
function both(s: Schedule, from: string, to: string): string[] {
  const forwards = slots(s, from, to);
  const backwards: string[] = [];
  const start = Date.parse(from);
  for (let t = s.mostRecent(at(to)); t && t.getTime() > start; t = s.mostRecent(new Date(t.getTime() - 1))) {
    backwards.unshift(iso(t) ?? "");
  }
  assert.deepEqual(backwards, forwards, "mostRecent disagrees with next");
  return forwards;
}

describe("exclusion windows: forms and how they read", () => {
  it("gives each form its canonical text, or its name", () => {
    const cases: [object, string][] = [
      [{ start: "2026-12-25" }, "2026-12-25"],
      [{ start: "2026-12-25", end: "2026-12-25" }, "2026-12-25"],
      [{ start: "2026-12-20", end: "2027-01-05" }, "2026-12-20 to 2027-01-05"],
      [{ start: "2026-12-24T18:00", end: "2026-12-27T06:00" }, "2026-12-24T18:00 to 2026-12-27T06:00"],
      [{ start: "2026-12-24T18:00:00", end: "2026-12-27T06:00:30" }, "2026-12-24T18:00 to 2026-12-27T06:00:30"],
      [{ start: "2026-12-24T18:00", end: "2026-12-24" }, "2026-12-24T18:00 to 2026-12-24"],
      [{ daysOfMonth: "1-7", daysOfWeek: "MON", from: "02:00", to: "04:00" }, "days 1-7, Mon, 02:00–04:00"],
      [{ from: "02:00", to: "04:00" }, "daily 02:00–04:00"],
      [{ from: "00:00" }, "daily 00:00–24:00"],
      [{ daysOfMonth: "*", months: "*", daysOfWeek: "?" }, "daily 00:00–24:00"],
      [{ daysOfWeek: "SAT,SUN" }, "Sat,Sun, 00:00–24:00"],
      [{ daysOfWeek: "1-5", months: "jun-aug,DEC" }, "Jun-Aug,Dec, Mon-Fri, 00:00–24:00"],
      [{ daysOfMonth: "25", months: "12" }, "day 25, Dec, 00:00–24:00"],
      [{ daysOfMonth: "1,15" }, "days 1,15, 00:00–24:00"],
      [{ daysOfMonth: "*/2", from: "22:00", to: "06:00" }, "days 1-31/2, 22:00–06:00"],
      [{ name: "Christmas Day", start: "2026-12-25" }, "Christmas Day"],
      [{ name: "Nightly backup", from: "01:00", to: "03:00" }, "Nightly backup"],
    ];
    for (const [w, text] of cases) assert.equal(window(w).text, text, JSON.stringify(w));
  });

  it("reads an absent list as none, and an explicit undefined field as absent", () => {
    assert.deepEqual(parseExclusionWindows(undefined, PATH), { ok: true, windows: [] });
    assert.equal(window({ start: "2026-12-25", end: undefined, from: undefined }).text, "2026-12-25");
  });

  it("takes up to MAX_EXCLUSION_WINDOWS windows", () => {
    assert.equal(MAX_EXCLUSION_WINDOWS, 366);
    const list = Array.from({ length: MAX_EXCLUSION_WINDOWS }, () => ({ start: "2026-12-25" }));
    assert.equal(windows(list).length, 366);
  });
});

describe("exclusion windows: absolute", () => {
  it("without an end covers the start's whole day", () => {
    const w = window({ start: "2026-12-25" });
    assert.equal(w.containsWall(wall("2026-12-25T00:00")), true);
    assert.equal(w.containsWall(wall("2026-12-25T23:59:59")), true);
    assert.equal(w.containsWall(wall("2026-12-24T23:59:59")), false);
    assert.equal(w.containsWall(wall("2026-12-26T00:00")), false);
    assert.equal(w.startsAtWall, wall("2026-12-25T00:00"));
    assert.equal(w.endsAtWall, wall("2026-12-26T00:00"));
  });

  it("takes an end date inclusive of that whole day", () => {
    const w = window({ start: "2026-12-20", end: "2027-01-05" });
    assert.equal(w.containsWall(wall("2026-12-20T00:00")), true);
    assert.equal(w.containsWall(wall("2027-01-05T23:59")), true);
    assert.equal(w.containsWall(wall("2027-01-06T00:00")), false);
    assert.equal(w.endsAtWall, wall("2027-01-06T00:00"));
  });

  it("takes an end date-time exclusive, a start date-time inclusive", () => {
    const w = window({ start: "2026-12-24T18:00", end: "2026-12-27T06:00" });
    assert.equal(w.containsWall(wall("2026-12-24T17:59:59")), false);
    assert.equal(w.containsWall(wall("2026-12-24T18:00")), true);
    assert.equal(w.containsWall(wall("2026-12-27T05:59:59")), true);
    assert.equal(w.containsWall(wall("2026-12-27T06:00")), false);
    assert.equal(w.endsAtWall, wall("2026-12-27T06:00"));
  });

  it("knows leap days", () => {
    assert.equal(window({ start: "2028-02-29" }).endsAtWall, wall("2028-03-01T00:00"));
    assert.equal(window({ start: "2000-02-29" }).endsAtWall, wall("2000-03-01T00:00"));
  });

  it("reports the span it holds, and none outside it", () => {
    const w = window({ start: "2026-12-20", end: "2027-01-05" });
    assert.deepEqual(w.spanAt(wall("2026-12-25T12:00")), {
      start: wall("2026-12-20T00:00"),
      end: wall("2027-01-06T00:00"),
    });
    assert.equal(w.spanAt(wall("2027-01-06T00:00")), undefined);
  });
});

describe("exclusion windows: recurring", () => {
  it("ANDs its day fields: days 1-7 and Monday is the first Monday", () => {
    const w = window({ daysOfMonth: "1-7", daysOfWeek: "MON", from: "02:00", to: "04:00" });
    assert.equal(w.containsWall(wall("2026-12-07T02:30")), true, "Monday the 7th");
    assert.equal(w.containsWall(wall("2026-12-14T02:30")), false, "a Monday, but the 14th");
    assert.equal(w.containsWall(wall("2026-12-03T02:30")), false, "the 3rd, but a Thursday");
    assert.equal(w.containsWall(wall("2026-12-07T04:00")), false, "to is exclusive");
    assert.equal(w.containsWall(wall("2026-12-07T01:59")), false);
    assert.equal(w.startsAtWall, undefined);
    assert.equal(w.endsAtWall, undefined);
  });

  it("ANDs months too", () => {
    const w = window({ months: "DEC", daysOfWeek: "SAT,SUN" });
    assert.equal(w.containsWall(wall("2026-12-19T12:00")), true, "a Saturday in December");
    assert.equal(w.containsWall(wall("2026-12-18T12:00")), false, "a Friday in December");
    assert.equal(w.containsWall(wall("2026-11-28T12:00")), false, "a Saturday in November");
  });

  it("wraps past midnight into the day after a matching day", () => {
    const w = window({ daysOfWeek: "FRI", from: "22:00", to: "06:00" });
    assert.equal(w.containsWall(wall("2026-12-18T21:59")), false, "Friday before from");
    assert.equal(w.containsWall(wall("2026-12-18T22:00")), true, "Friday 22:00");
    assert.equal(w.containsWall(wall("2026-12-19T05:59")), true, "Saturday morning, after the Friday");
    assert.equal(w.containsWall(wall("2026-12-19T06:00")), false, "to is exclusive");
    assert.equal(w.containsWall(wall("2026-12-19T23:00")), false, "Saturday night: Saturday does not match");
    assert.equal(w.containsWall(wall("2026-12-18T05:00")), false, "Friday morning: Thursday does not match");
    assert.deepEqual(w.spanAt(wall("2026-12-19T01:00")), {
      start: wall("2026-12-18T22:00"),
      end: wall("2026-12-19T06:00"),
    });
  });

  it("with from equal to to covers a day from that time", () => {
    const w = window({ daysOfMonth: "1", from: "02:00", to: "02:00" });
    assert.equal(w.containsWall(wall("2026-12-01T01:59")), false);
    assert.equal(w.containsWall(wall("2026-12-01T02:00")), true);
    assert.equal(w.containsWall(wall("2026-12-02T01:59")), true);
    assert.equal(w.containsWall(wall("2026-12-02T02:00")), false);
  });

  it("follows whole-day spans across the days they run into", () => {
    const w = window({ daysOfWeek: "SAT,SUN" });
    assert.deepEqual(w.spanAt(wall("2026-12-19T12:00")), {
      start: wall("2026-12-19T00:00"),
      end: wall("2026-12-21T00:00"),
    });
  });
});

describe("exclusions: which window holds a slot", () => {
  it("reads windows in the zone it is given: one instant, Christmas in Berlin but not in UTC", () => {
    const ex = exclusions([{ name: "Christmas Day", start: "2026-12-25" }], "calendar holidays-de");
    const slot = at("2026-12-24T23:30Z");
    assert.deepEqual(ex.excludedBy(slot, "Europe/Berlin"), { by: "calendar holidays-de", window: "Christmas Day" });
    assert.equal(ex.excludedBy(slot, "UTC"), undefined);
    assert.equal(ex.excludedBy(at("2026-12-25T23:30Z"), "Europe/Berlin"), undefined);
    assert.deepEqual(ex.excludedBy(at("2026-12-25T23:30Z"), "UTC"), {
      by: "calendar holidays-de",
      window: "Christmas Day",
    });
  });

  it("names the first window in source order", () => {
    const ex = new Exclusions([
      { by: "spec.exclusions", windows: windows([{ daysOfWeek: "MON" }, { start: "2026-12-07" }]) },
      { by: "calendar freeze", windows: windows([{ start: "2026-12-01", end: "2026-12-31" }]) },
    ]);
    assert.deepEqual(ex.excludedBy(at("2026-12-07T12:00Z"), "UTC"), {
      by: "spec.exclusions",
      window: "Mon, 00:00–24:00",
    });
    assert.deepEqual(ex.excludedBy(at("2026-12-08T12:00Z"), "UTC"), {
      by: "calendar freeze",
      window: "2026-12-01 to 2026-12-31",
    });
    assert.equal(ex.empty, false);
    assert.equal(new Exclusions([]).empty, true);
    assert.equal(new Exclusions([{ by: "calendar empty", windows: [] }]).empty, true);
  });
});

describe("exclusions across DST in Europe/Berlin", () => {
  const tz = "Europe/Berlin";

  it("spring forward (2026-03-29 02:00 -> 03:00): a window in the gap holds no hourly slot", () => {
    const s = new ExcludingSchedule(must("0 * * * *", tz), exclusions([{ from: "02:00", to: "03:00" }]));
    // 01:00Z shows 03:00 CEST: nothing shows 02:xx on that day.
    const found = both(s, "2026-03-28T22:30Z", "2026-03-29T03:00Z");
    assert.deepEqual(found, [
      "2026-03-28T23:00",
      "2026-03-29T00:00",
      "2026-03-29T01:00",
      "2026-03-29T02:00",
      "2026-03-29T03:00",
    ]);
  });

  it("spring forward: the hour after the gap is excluded at its real wall-clock time", () => {
    const s = new ExcludingSchedule(must("0 * * * *", tz), exclusions([{ from: "03:00", to: "04:00" }]));
    const found = both(s, "2026-03-28T22:30Z", "2026-03-29T03:00Z");
    assert.deepEqual(found, ["2026-03-28T23:00", "2026-03-29T00:00", "2026-03-29T02:00", "2026-03-29T03:00"]);
  });

  it("spring forward: a fixed-hour slot shifted out of the gap is tested where it fires (03:30 CEST)", () => {
    const inGap = exclusions([{ from: "02:00", to: "03:00" }]);
    const afterGap = exclusions([{ from: "03:00", to: "04:00" }]);
    const slot = at("2026-03-29T01:30Z");
    assert.equal(must("30 2 * * *", tz).next(at("2026-03-29T00:00Z")).toISOString(), slot.toISOString());
    assert.equal(inGap.excludedBy(slot, tz), undefined);
    assert.deepEqual(afterGap.excludedBy(slot, tz), { by: "spec.exclusions", window: "daily 03:00–04:00" });
    // Every other day's 02:30 is inside the window: the shifted one is the only slot left that week.
    const s = new ExcludingSchedule(must("30 2 * * *", tz), inGap);
    assert.deepEqual(both(s, "2026-03-26T00:00Z", "2026-04-02T00:00Z"), ["2026-03-29T01:30"]);
  });

  it("spring forward inside a window: the jump over it ends where the clock shows its end (04:00 CEST)", () => {
    // 01:00-04:00 is 00:00Z-02:00Z that night (only two hours: 02:00 CET became 03:00 CEST at 01:00Z). Jumping to
    // 04:00 read at the offset before the change (03:00Z) would skip 04:00 and 04:30 CEST; jumping back from 03:30
    // CEST to 01:00 read at CEST's offset (23:00Z) would skip 00:00 and 00:30 CET.
    const s = new ExcludingSchedule(must("*/30 * * * *", tz), exclusions([{ from: "01:00", to: "04:00" }]));
    const found = both(s, "2026-03-28T22:30Z", "2026-03-29T03:00Z");
    assert.deepEqual(found, [
      "2026-03-28T23:00",
      "2026-03-28T23:30",
      "2026-03-29T02:00",
      "2026-03-29T02:30",
      "2026-03-29T03:00",
    ]);
  });

  it("fall back (2026-10-25 03:00 -> 02:00): a window over the repeated hour holds both occurrences", () => {
    const s = new ExcludingSchedule(must("30 * * * *", tz), exclusions([{ from: "02:00", to: "03:00" }]));
    // 00:30Z is 02:30 CEST and 01:30Z is 02:30 CET.
    const found = both(s, "2026-10-24T22:00Z", "2026-10-25T04:00Z");
    assert.deepEqual(found, ["2026-10-24T22:30", "2026-10-24T23:30", "2026-10-25T02:30", "2026-10-25T03:30"]);
  });

  it("fall back: a window spanning the change holds both passes of its repeated part", () => {
    const s = new ExcludingSchedule(must("0 * * * *", tz), exclusions([{ from: "01:00", to: "03:00" }]));
    const found = both(s, "2026-10-24T21:30Z", "2026-10-25T03:00Z");
    assert.deepEqual(found, ["2026-10-24T22:00", "2026-10-25T02:00", "2026-10-25T03:00"]);
  });

  it("fall back: a window ending inside the repeated hour leaves the second pass's start free", () => {
    // First pass 02:30-03:00 CEST (00:30Z-01:00Z) is held, then the clock shows 02:00 CET again (01:00Z), which is
    // not: a jump to the window's end must not carry the search over it.
    const s = new ExcludingSchedule(must("*/15 * * * *", tz), exclusions([{ from: "02:30", to: "03:00" }]));
    const found = both(s, "2026-10-25T00:00Z", "2026-10-25T02:00Z");
    assert.deepEqual(found, ["2026-10-25T00:15", "2026-10-25T01:00", "2026-10-25T01:15", "2026-10-25T02:00"]);
  });
});

describe("ExcludingSchedule", () => {
  it("skips excluded slots going forward and back", () => {
    const s = new ExcludingSchedule(must("0 9 * * *"), exclusions([{ start: "2026-12-24", end: "2026-12-26" }]));
    assert.equal(iso(s.next(at("2026-12-23T09:00Z"))), "2026-12-27T09:00");
    assert.equal(iso(s.next(at("2026-12-22T12:00Z"))), "2026-12-23T09:00");
    assert.equal(iso(s.mostRecent(at("2026-12-26T10:00Z"))), "2026-12-23T09:00");
    assert.equal(iso(s.mostRecent(at("2026-12-27T09:00Z"))), "2026-12-27T09:00");
  });

  it("delegates everything else to the inner schedule", () => {
    const inner = must("@every 1h30m", "Europe/Berlin");
    const s = new ExcludingSchedule(inner, exclusions([{ from: "00:00", to: "06:00" }]));
    assert.equal(s.inner, inner);
    assert.equal(s.description, "@every 1h30m0s");
    assert.equal(s.timeZone, "Europe/Berlin");
    assert.equal(s.isEvery, true);
    assert.equal(s.everySeconds, 5400);
    assert.equal(s.followsRealTime, true);
    // @every keeps its anchor: from 20:00Z (21:00 CET) the grid is 21:30Z, 23:00Z (00:00 CET, held), ... 05:00Z.
    const anchor = at("2026-12-01T20:00Z");
    assert.equal(iso(s.next(at("2026-12-01T21:30Z"), anchor)), "2026-12-02T05:00");
    assert.equal(iso(s.mostRecent(at("2026-12-02T04:59Z"), anchor)), "2026-12-01T21:30");
  });

  it("with no windows is the inner schedule", () => {
    const s = new ExcludingSchedule(must("*/5 * * * *"), new Exclusions([]));
    assert.equal(iso(s.next(at("2026-12-01T00:01Z"))), "2026-12-01T00:05");
    assert.equal(iso(s.mostRecent(at("2026-12-01T00:01Z"))), "2026-12-01T00:00");
  });

  it("jumps a two-week freeze over a minutely schedule", () => {
    const freeze = exclusions([{ name: "year-end freeze", start: "2026-12-20", end: "2027-01-02" }]);
    const s = new ExcludingSchedule(must("* * * * *", "Europe/Berlin"), freeze);
    assert.equal(iso(s.next(at("2026-12-19T22:58Z"))), "2026-12-19T22:59");
    assert.equal(iso(s.next(at("2026-12-19T22:59Z"))), "2027-01-02T23:00");
    assert.equal(iso(s.mostRecent(at("2027-01-02T22:59:59Z"))), "2026-12-19T22:59");
    assert.equal(iso(s.mostRecent(at("2027-01-02T23:00Z"))), "2027-01-02T23:00");
  });

  it("jumps recurring spans too: weekends over a minutely schedule", () => {
    const s = new ExcludingSchedule(must("* * * * *"), exclusions([{ daysOfWeek: "SAT,SUN" }]));
    assert.equal(iso(s.next(at("2026-12-18T23:59Z"))), "2026-12-21T00:00");
    assert.equal(iso(s.mostRecent(at("2026-12-20T23:59Z"))), "2026-12-18T23:59");
  });

  it("merges windows that touch or overlap into one stretch", () => {
    const s = new ExcludingSchedule(
      must("*/10 * * * *"),
      exclusions([
        { from: "01:00", to: "02:00" },
        { start: "2026-12-01T01:30", end: "2026-12-01T03:00" },
        { daysOfMonth: "1", from: "03:00", to: "04:00" },
      ]),
    );
    assert.equal(iso(s.next(at("2026-12-01T00:55Z"))), "2026-12-01T04:00");
    assert.equal(iso(s.mostRecent(at("2026-12-01T03:59Z"))), "2026-12-01T00:50");
    assert.equal(iso(s.next(at("2026-12-02T00:55Z"))), "2026-12-02T02:00");
  });

  it("returns the far-future sentinel (and no recent slot) when every slot is excluded", () => {
    const s = new ExcludingSchedule(must("* * * * *"), exclusions([{ from: "00:00", to: "24:00" }]));
    assert.equal(s.next(at("2026-12-01T00:00Z")).getTime(), NEVER);
    assert.equal(s.next(new Date(NEVER)).getTime(), NEVER, "the sentinel is a fixed point");
    assert.equal(s.mostRecent(at("2026-12-01T00:00Z")), undefined);
    assert.equal(MAX_SKIPPED_SLOTS, 100_000);
  });

  it("finds the first slot past a long absolute window", () => {
    const s = new ExcludingSchedule(must("0 0 1 1 *"), exclusions([{ start: "2026-01-01", end: "2069-12-31" }]));
    assert.equal(iso(s.next(at("2025-06-01T00:00Z"))), "2070-01-01T00:00");
    assert.equal(iso(s.mostRecent(at("2070-06-01T00:00Z"))), "2070-01-01T00:00");
    assert.equal(iso(s.mostRecent(at("2069-06-01T00:00Z"))), "2025-01-01T00:00");
  });

  it("searches 28 years past the last absolute window's end, allowing for the schedule's zone", () => {
    // Feb 29 falls on each weekday once in 28 years. Every Feb 29 but a Thursday is held, and 2052's (a Thursday) is
    // in the absolute window: the next free one is 2080's, 28 years later. 12:00 in Pago Pago (-11) is 23:00Z, later
    // than 28 years after the window's end (13:00 wall) read as if it were UTC.
    const ex = exclusions([
      { start: "2026-01-01", end: "2052-02-29T13:00" },
      { months: "FEB", daysOfMonth: "29", daysOfWeek: "SUN-WED,FRI,SAT" },
    ]);
    const s = new ExcludingSchedule(must("0 12 29 2 *", "Pacific/Pago_Pago"), ex);
    assert.equal(iso(s.next(at("2025-06-01T00:00Z"))), "2080-02-29T23:00");
  });

  it("remembers a searched stretch per @every grid: under another anchor it searches afresh", () => {
    const s = new ExcludingSchedule(must("@every 1h"), exclusions([{ from: "10:00", to: "12:00" }]));
    // Anchored at 09:30: 10:30 and 11:30 are held, 12:30 is free.
    assert.equal(iso(s.next(at("2026-12-01T09:30Z"), at("2026-12-01T09:30Z"))), "2026-12-01T12:30");
    // Anchored at 09:00 the slots are 10:00 and 11:00 (held), then 12:00.
    assert.equal(iso(s.next(at("2026-12-01T09:30Z"), at("2026-12-01T09:00Z"))), "2026-12-01T12:00");
  });
});

describe("slotsLeft", () => {
  const from = at("2026-12-01T00:00Z");

  it("is ok when slots remain within the year", () => {
    assert.equal(slotsLeft(must("0 9 * * *"), exclusions([{ start: "2026-12-25" }]), from), "ok");
    assert.equal(slotsLeft(must("0 9 * * *"), new Exclusions([]), from), "ok");
  });

  it("is notWithinYear when the exclusions hold every slot of the year but later ones remain", () => {
    // The Christmas 2026 and 2027 slots are held; 2028's is free, but 755 days away.
    const both = exclusions([{ start: "2026-12-25", end: "2027-12-25" }]);
    assert.equal(slotsLeft(must("0 0 25 12 *"), both, from), "notWithinYear");
    // Only 2026's held: the next one (2027-12-25) is 389 days after from, past the 366 days looked at.
    assert.equal(slotsLeft(must("0 0 25 12 *"), exclusions([{ start: "2026-12-25" }]), from), "notWithinYear");
    // A weekday schedule over a freeze of more than a year.
    const longFreeze = exclusions([{ start: "2026-01-01", end: "2060-12-31" }]);
    assert.equal(slotsLeft(must("0 9 * * 1-5"), longFreeze, from), "notWithinYear");
  });

  it("counts a slot exactly 366 days after from as within the year", () => {
    // Every midnight after from held through 2027-12-01: the first free one, 2027-12-02, is from + 366 days.
    const held = exclusions([{ start: "2026-12-02", end: "2027-12-01" }]);
    assert.equal(slotsLeft(must("0 0 * * *"), held, from), "ok");
    // Held one day longer, the first free midnight is a day past the year looked at.
    const longer = exclusions([{ start: "2026-12-02", end: "2027-12-02" }]);
    assert.equal(slotsLeft(must("0 0 * * *"), longer, from), "notWithinYear");
  });

  it("is ok when the schedule has no slot in the year by itself", () => {
    // "0 0 29 2 *" fires next on 2028-02-29: not the exclusions' doing.
    assert.equal(slotsLeft(must("0 0 29 2 *"), exclusions([{ daysOfWeek: "MON" }]), from), "ok");
  });

  it("is never when no slot is left", () => {
    assert.equal(slotsLeft(must("* * * * *"), exclusions([{ from: "00:00" }]), from), "never");
    assert.equal(slotsLeft(must("0 9 * * 1-5"), exclusions([{ daysOfWeek: "MON-FRI" }]), from), "never");
    assert.equal(
      slotsLeft(must("0 12 * * *", "Europe/Berlin"), exclusions([{ from: "11:00", to: "13:00" }]), from),
      "never",
    );
    // A window beside the slot leaves every slot.
    assert.equal(slotsLeft(must("0 12 * * *"), exclusions([{ from: "12:30", to: "13:00" }]), from), "ok");
  });
});

describe("exclusion windows: refused values name the field and the value", () => {
  it("refuses bad absolute windows", () => {
    const cases: [unknown, string[]][] = [
      [
        { start: "2026-12-01", end: "2026-13-01" },
        [
          `${PATH}[0].end: Invalid value: "2026-13-01": not a date (YYYY-MM-DD) or local date-time (YYYY-MM-DDTHH:MM[:SS])`,
        ],
      ],
      [
        { start: "2026-02-30" },
        [`${PATH}[0].start: Invalid value: "2026-02-30": no such day: February 2026 has 28 days`],
      ],
      [{ start: "2026-04-31" }, [`${PATH}[0].start: Invalid value: "2026-04-31": no such day: April 2026 has 30 days`]],
      [
        { start: "2026-12-24T24:00", end: "2026-12-26" },
        [
          `${PATH}[0].start: Invalid value: "2026-12-24T24:00": not a date (YYYY-MM-DD) or local date-time (YYYY-MM-DDTHH:MM[:SS])`,
        ],
      ],
      [
        { start: "2026-12-24T18:00Z", end: "2026-12-26" },
        [
          `${PATH}[0].start: Invalid value: "2026-12-24T18:00Z": not a date (YYYY-MM-DD) or local date-time (YYYY-MM-DDTHH:MM[:SS])`,
        ],
      ],
      [
        { start: "2026-12-24T18:00" },
        [
          `${PATH}[0].start: Invalid value: "2026-12-24T18:00": a date-time start needs an end (a date alone is that whole day)`,
        ],
      ],
      [{ end: "2026-12-24" }, [`${PATH}[0].end: Invalid value: "2026-12-24": needs a start`]],
      [
        { start: "2026-12-05", end: "2026-12-04" },
        [`${PATH}[0].end: Invalid value: "2026-12-04": must be after start "2026-12-05"`],
      ],
      [
        { start: "2026-12-05T10:00", end: "2026-12-05T10:00" },
        [`${PATH}[0].end: Invalid value: "2026-12-05T10:00": must be after start "2026-12-05T10:00"`],
      ],
    ];
    for (const [w, expected] of cases) assert.deepEqual(errorsOf([w]), expected, JSON.stringify(w));
  });

  it("refuses bad recurring windows, with the schedule grammar's words for cron fields", () => {
    const cases: [unknown, string[]][] = [
      [
        { daysOfMonth: "32" },
        [`${PATH}[0].daysOfMonth: Invalid value: "32": day-of-month value 32 is out of range 1-31`],
      ],
      [
        { daysOfWeek: "7" },
        [`${PATH}[0].daysOfWeek: Invalid value: "7": day-of-week value 7 is out of range 0-6 (use 0 for Sunday)`],
      ],
      [
        { months: "foo" },
        [
          `${PATH}[0].months: Invalid value: "foo": month value "foo" is neither a number nor a name in 1-12 or jan-dec`,
        ],
      ],
      [{ daysOfMonth: "1 2" }, [`${PATH}[0].daysOfMonth: Invalid value: "1 2": must not contain spaces`]],
      [
        { daysOfMonth: "30", months: "FEB" },
        [`${PATH}[0].daysOfMonth: Invalid value: "30": never matches: day-of-month 30 does not occur in February`],
      ],
      [{ from: "24:00" }, [`${PATH}[0].from: Invalid value: "24:00": not a time of day (HH:MM, 00:00-23:59)`]],
      [{ from: "2:00" }, [`${PATH}[0].from: Invalid value: "2:00": not a time of day (HH:MM, 00:00-23:59)`]],
      [{ to: "24:01" }, [`${PATH}[0].to: Invalid value: "24:01": not a time of day (HH:MM, 00:00-24:00)`]],
      [
        { from: "12:60", to: "25:00" },
        [
          `${PATH}[0].from: Invalid value: "12:60": not a time of day (HH:MM, 00:00-23:59)`,
          `${PATH}[0].to: Invalid value: "25:00": not a time of day (HH:MM, 00:00-24:00)`,
        ],
      ],
    ];
    for (const [w, expected] of cases) assert.deepEqual(errorsOf([w]), expected, JSON.stringify(w));
  });

  it("refuses mixed forms, no form, unknown fields, wrong types and long strings", () => {
    const either = "a window is either absolute (start, end) or recurring (daysOfMonth, months, daysOfWeek, from, to)";
    const needs =
      "a window needs start (and optionally end) or at least one of daysOfMonth, months, daysOfWeek, from, to";
    const cases: [unknown, string[]][] = [
      [
        { start: "2026-12-25", from: "02:00" },
        [`${PATH}[0].from: Invalid value: "02:00": not allowed with start: ${either}`],
      ],
      [{}, [`${PATH}[0]: Invalid value: {}: ${needs}`]],
      [{ name: "x" }, [`${PATH}[0]: Invalid value: {"name":"x"}: ${needs}`]],
      [
        { start: "2026-12-25", colour: "red" },
        [
          `${PATH}[0].colour: Invalid value: "red": unknown field; a window has name, start, end, daysOfMonth, months, daysOfWeek, from, to`,
        ],
      ],
      [{ start: 20261225 }, [`${PATH}[0].start: Invalid value: 20261225: must be a string`]],
      [{ start: null }, [`${PATH}[0].start: Invalid value: null: must be a string`]],
      [{ from: ["02:00"] }, [`${PATH}[0].from: Invalid value: ["02:00"]: must be a string`]],
      [{ name: "", start: "2026-12-25" }, [`${PATH}[0].name: Invalid value: "": must not be empty`]],
      [
        { name: "a\nb", start: "2026-12-25" },
        [`${PATH}[0].name: Invalid value: "a\\nb": must not contain control characters`],
      ],
      [
        { name: "n".repeat(64), start: "2026-12-25" },
        [`${PATH}[0].name: Invalid value: "${"n".repeat(64)}": must be at most 63 characters`],
      ],
      [
        { daysOfMonth: "1,".repeat(40) },
        [`${PATH}[0].daysOfMonth: Invalid value: "${"1,".repeat(40)}": must be at most 64 characters`],
      ],
      [null, [`${PATH}[0]: Invalid value: null: must be an object (a window: start and end, or recurring fields)`]],
      [
        "2026-12-25",
        [`${PATH}[0]: Invalid value: "2026-12-25": must be an object (a window: start and end, or recurring fields)`],
      ],
    ];
    for (const [w, expected] of cases) assert.deepEqual(errorsOf([w]), expected, JSON.stringify(w));
    const ok = window({ name: "n".repeat(63), daysOfMonth: "1,".repeat(32) });
    assert.equal(ok.text, "n".repeat(63));
  });

  it("refuses a list that is not one, or too long, naming the path given", () => {
    assert.deepEqual(errorsOf({ start: "2026-12-25" }, "spec.windows"), [
      `spec.windows: Invalid value: {"start":"2026-12-25"}: must be a list of windows`,
    ]);
    assert.deepEqual(errorsOf(null, "spec.windows"), ["spec.windows: Invalid value: null: must be a list of windows"]);
    const tooMany = Array.from({ length: MAX_EXCLUSION_WINDOWS + 1 }, () => ({ start: "2026-12-25" }));
    assert.deepEqual(errorsOf(tooMany, "spec.windows"), ["spec.windows: Too many: 367: must have at most 366 items"]);
  });

  it("reports every bad window of a list, each at its index, with field and value", () => {
    const r = parseExclusionWindows([{ start: "2026-12-25" }, { start: "nope" }, { to: "nope" }], "spec.windows");
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.deepEqual(
      r.errors.map((e) => [e.field, e.value]),
      [
        ["spec.windows[1].start", "nope"],
        ["spec.windows[2].to", "nope"],
      ],
    );
    for (const e of r.errors) assert.ok(e.message.startsWith(`${e.field}: Invalid value: "nope": `), e.message);
  });

  it("cuts a huge value in the message", () => {
    const [message] = errorsOf([{ start: "9".repeat(100_000) }]);
    assert.ok(message !== undefined && message.length < 400, message);
    assert.match(message, /… \(99744 more characters\)": must be at most 64 characters$/);
  });
});

/** A small deterministic PRNG (mulberry32), so a failure reproduces. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("exclusions: robustness and agreement with the plain schedule", () => {
  const random = rng(20261225);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  const int = (n: number) => Math.floor(random() * n);
  const pad = (n: number) => String(n).padStart(2, "0");

  function fuzzString(): string {
    const near = [
      "2026-12-25",
      "2026-12-24T18:00",
      "2026-02-29",
      "0000-01-01",
      "9999-12-31T23:59:59",
      "02:00",
      "24:00",
      "1-7",
      "*/2",
      "MON",
      "jan-dec",
      "",
      " ",
      "*",
      "1,,2",
      "@daily",
      "TZ=UTC",
    ];
    const r = random();
    if (r < 0.5) return pick(near);
    if (r < 0.55) return "x".repeat(int(200_000));
    const alphabet = "0123456789-:T,*/?LW#HZ monFRIDecSUN\u0085\u00a0";
    return Array.from({ length: int(20) }, () => pick([...alphabet])).join("");
  }

  function fuzzValue(depth: number): unknown {
    const r = random();
    if (r < 0.3 || depth > 2) return fuzzString();
    if (r < 0.4) return pick([null, true, false, 0, -1, 1e308, NaN, 2026, {}, []]);
    if (r < 0.5) return Array.from({ length: int(4) }, () => fuzzValue(depth + 1));
    const keys = ["name", "start", "end", "daysOfMonth", "months", "daysOfWeek", "from", "to", "__proto__", "x"];
    const o: Record<string, unknown> = {};
    for (let i = int(5); i > 0; i--) o[pick(keys)] = fuzzValue(depth + 1);
    return o;
  }

  it("never throws on random JSON, and answers in the promised shape", () => {
    for (let i = 0; i < 3000; i++) {
      const list = random() < 0.8 ? Array.from({ length: int(5) }, () => fuzzValue(0)) : fuzzValue(0);
      const r = parseExclusionWindows(list, "spec.windows");
      if (r.ok) {
        const ex = new Exclusions([{ by: "fuzz", windows: r.windows }]);
        for (const w of r.windows) {
          assert.equal(typeof w.text, "string");
          const t = wall("2026-01-01T00:00") + int(2 * 366) * 86_400_000 + int(1440) * 60_000;
          const span = w.spanAt(t);
          assert.equal(span !== undefined, w.containsWall(t));
          if (span) assert.ok(span.start <= t && t < span.end);
        }
        ex.excludedBy(new Date(NaN), "UTC");
        ex.excludedBy(at("2026-06-01T00:00Z"), "Europe/Berlin");
      } else {
        assert.ok(r.errors.length > 0);
        for (const e of r.errors) {
          assert.ok(e.field.startsWith("spec.windows"), e.field);
          assert.ok(e.message.startsWith(`${e.field}: `), e.message);
          assert.ok(e.message.length < 2000, e.message.slice(0, 200));
        }
      }
    }
  });

  // Windows of a few hours on some days: enough to hold runs of slots, DST changes and wraps past midnight, and
  // rarely every slot (which costs a search decades long, and is pinned by its own tests above).
  function randomWindow(): object {
    if (random() < 0.3) {
      const day = wall("2026-01-01T00:00") + int(400) * 86_400_000;
      const start = new Date(day + int(96) * 900_000).toISOString().slice(0, 16);
      const end = new Date(Date.parse(`${start}Z`) + (1 + int(96 * 5)) * 900_000).toISOString().slice(0, 16);
      return { start, end };
    }
    const w: Record<string, string> = {};
    if (random() < 0.5) w["daysOfMonth"] = pick(["1-7", "1,15", "*/2", "28-31", "10-20"]);
    if (random() < 0.3) w["months"] = pick(["DEC", "1-3", "mar,oct,nov", "*/2"]);
    if (random() < 0.6 || Object.keys(w).length === 0) w["daysOfWeek"] = pick(["MON", "SAT,SUN", "1-5", "0", "FRI"]);
    const from = int(96) * 15;
    const to = (from + (1 + int(48)) * 15) % 1440;
    const hhmm = (m: number) => `${pad(Math.floor(m / 60))}:${pad(m % 60)}`;
    if (random() < 0.8) w["from"] = hhmm(from);
    if (random() < 0.8) w["to"] = to === 0 && random() < 0.5 ? "24:00" : hhmm(to);
    return w;
  }

  it("skips exactly the slots a window holds, forwards and backwards, across zones and DST", () => {
    const schedules = [
      "*/15 * * * *",
      "0 * * * *",
      "30 2 * * *",
      "0 0 * * 1",
      "0 9 * * 1-5",
      "@every 45m",
      "5 1 1 * *",
    ];
    const zones = ["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe"];
    // @every counts from it; cron ignores it.
    const anchor = at("2025-12-31T00:07:30Z");
    const full = (d: Date | undefined) => d?.toISOString();
    for (let i = 0; i < 80; i++) {
      const inner = must(pick(schedules), pick(zones));
      const list = Array.from({ length: 1 + int(4) }, randomWindow);
      const ex = exclusions(list);
      const held = (d: Date) => ex.excludedBy(d, inner.timeZone) !== undefined;
      const s = new ExcludingSchedule(inner, ex);
      // Mostly at a held slot, where the skipping happens: forwards from just before it, backwards from it.
      let from = at("2026-01-01T00:00Z").getTime() + int(366) * 86_400_000 + int(1440) * 60_000;
      if (random() < 0.8) {
        let t = inner.next(new Date(from), anchor);
        for (let k = 0; k < 500 && !held(t); k++) t = inner.next(t, anchor);
        if (held(t)) from = t.getTime() - 1;
      }
      const label = `${inner.description} in ${inner.timeZone} with ${JSON.stringify(list)} from ${new Date(from).toISOString()}`;

      const next = s.next(new Date(from), anchor);
      let t = inner.next(new Date(from), anchor);
      for (let steps = 0; t.getTime() < next.getTime() && steps < 2000; steps++) {
        assert.ok(held(t), `${label}: skipped ${t.toISOString()}, which no window holds`);
        t = inner.next(t, anchor);
      }
      if (next.getTime() !== NEVER) {
        assert.equal(full(next), full(t), label);
        assert.equal(held(next), false, label);
      }

      const notAfter = new Date(from + 1);
      const recent = s.mostRecent(notAfter, anchor);
      let b = inner.mostRecent(notAfter, anchor);
      for (let steps = 0; b && b.getTime() > (recent?.getTime() ?? -Infinity) && steps < 2000; steps++) {
        assert.ok(held(b), `${label}: skipped ${b.toISOString()} backwards, which no window holds`);
        b = inner.mostRecent(new Date(b.getTime() - 1), anchor);
      }
      if (recent) {
        assert.equal(full(recent), full(b), label);
        assert.equal(held(recent), false, label);
      }

      // What a search remembers for the next never changes an answer: asked again a little later (as the
      // controller does), the same schedule agrees with a fresh one.
      const later = new Date(from + int(3 * 86_400_000));
      assert.equal(full(s.next(later, anchor)), full(new ExcludingSchedule(inner, ex).next(later, anchor)), label);
      assert.equal(
        full(s.mostRecent(later, anchor)),
        full(new ExcludingSchedule(inner, ex).mostRecent(later, anchor)),
        label,
      );
    }
  });
});

describe("exclusions over several schedules (API v2), each read in its own zone", () => {
  // 08:00 UTC is 09:00 in Berlin: both schedules fire at that instant. A window 08:30–09:30 holds it for the Berlin
  // schedule only; the UTC one keeps it, so the slot runs and is not reported excluded.
  const key = { namespace: "ns", name: "cj" };
  const both = scheduleListSchedules(
    [
      { schedule: "0 8 * * *", timeZone: "UTC" },
      { schedule: "0 9 * * *", timeZone: "Europe/Berlin" },
    ],
    key,
  );
  const berlinOnly = scheduleListSchedules([{ schedule: "0 9 * * *", timeZone: "Europe/Berlin" }], key);
  const window = parseExclusionWindows(
    [{ name: "late morning", daysOfMonth: "2", from: "08:30", to: "09:30" }],
    "spec.exclusions.windows",
  );
  assert.ok(both.ok && berlinOnly.ok && window.ok);
  const exclusions = new Exclusions([{ by: "spec.exclusions", windows: window.windows }]);
  const slot = new Date("2026-12-02T08:00:00Z");

  it("a slot one schedule keeps runs, and is not reported excluded", () => {
    const s = both.schedules.excluding(exclusions);
    assert.deepEqual(s.schedule.next(new Date(slot.getTime() - 1000)), slot);
    assert.equal(s.excludedBy(slot, undefined), undefined);
  });

  it("a slot every schedule of it excludes is skipped, and reported by the window", () => {
    const s = berlinOnly.schedules.excluding(exclusions);
    assert.deepEqual(s.schedule.next(new Date(slot.getTime() - 1000)), new Date("2026-12-03T08:00:00Z"));
    assert.deepEqual(s.excludedBy(slot, undefined), { by: "spec.exclusions", window: "late morning" });
  });
});
