// Property tests of the union of schedules (api/v1/schedule/union.ts) over random cron, descriptor, H and @every
// schedules in random zones: a one-member set gives exactly what the single-schedule functions give; and a set
// of several gives exactly the union of its members' slots, found by brute force (every minute, or every second
// for short windows, asking each member whether it fires then) and by merging each member's own slotsInRange.
// The union's ranges, newest slots, counts and windows are taken the way the product takes them: window.ts'
// functions over a UnionSchedule, each slot's sources from sourcesAt; with one anchor per member (which
// UnionSchedule does not take), from the set's own walks (ScheduleSet.slotsAfter, slotsBackFrom).
// The single-schedule functions themselves are checked against independent oracles in schedule-properties.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  countSlots,
  MISSED_COUNT_CAP,
  newestSlots,
  parseHashedSchedule,
  type Schedule,
  ScheduleSet,
  scheduleWindow,
  type SetAnchor,
  slotsInRange,
  type SourcedSlot,
  unionCountSlots,
  UnionSchedule,
} from "../../api/v1/schedule/index.ts";
import { countInRange, sourced } from "../schedules.ts";

const SECOND = 1000;
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const KEY = { namespace: "prop", name: "union" };

const ZONES = [
  undefined,
  "Europe/Berlin",
  "America/New_York",
  "Asia/Kolkata",
  "Australia/Lord_Howe",
  "America/Santiago",
  "Asia/Tokyo",
];
// Around DST changes (and the day Samoa skipped) in the zones above, so windows cross them often.
const TRANSITIONS = [
  "2026-03-08T07:00:00Z",
  "2026-11-01T06:00:00Z",
  "2026-03-29T01:00:00Z",
  "2026-10-25T01:00:00Z",
  "2026-04-04T15:00:00Z",
  "2026-10-03T15:30:00Z",
  "2026-04-05T03:00:00Z",
  "2026-09-06T04:00:00Z",
].map((s) => Date.parse(s));

// --- generators ------------------------------------------------------------------------------------------

function fieldArb(min: number, max: number, starWeight: number): fc.Arbitrary<string> {
  const value = fc.integer({ min, max });
  const step = fc.integer({ min: 1, max: max - min + 1 });
  const item = fc.oneof(
    { weight: starWeight, arbitrary: fc.constant("*") },
    { weight: 1, arbitrary: step.map((n) => `*/${n}`) },
    { weight: 2, arbitrary: value.map(String) },
    { weight: 1, arbitrary: fc.tuple(value, value).map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`) },
    {
      weight: 1,
      arbitrary: fc.tuple(value, value, step).map(([a, b, n]) => `${Math.min(a, b)}-${Math.max(a, b)}/${n}`),
    },
  );
  return fc.array(item, { minLength: 1, maxLength: 2 }).map((items) => items.join(","));
}

const cronArb = fc
  .tuple(fieldArb(0, 59, 1), fieldArb(0, 23, 2), fieldArb(1, 31, 6), fieldArb(1, 12, 8), fieldArb(0, 6, 6))
  .map((fields) => fields.join(" "));

const hashedArb = fc
  .tuple(
    fc.constantFrom("H", "H/15", "H(0-29)", "H/7", "0", "*/10"),
    fc.constantFrom("H", "*", "H/6", "H(8-17)", "*/2", "9"),
    fc.constantFrom("*", "*", "H", "1-15"),
    fc.constantFrom("*", "*", "H"),
    fc.constantFrom("*", "*", "1-5", "H"),
  )
  .map((fields) => fields.join(" "));

/** What people write: dense enough to meet each other in a short window. */
const commonArb = fc.constantFrom(
  "0 * * * *",
  "30 * * * *",
  "*/15 * * * *",
  "*/5 * * * *",
  "0 */2 * * *",
  "0 0 * * *",
  "30 2 * * *",
  "0 9-17 * * 1-5",
  "H * * * *",
  "H/20 * * * *",
  "@every 30m",
  "@every 1h",
);

const descriptorArb = fc.constantFrom("@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually");

/** `@every` in whole seconds; `minuteGrid` keeps it on whole minutes (for the minute-by-minute oracle). */
const everyArb = (o: { minuteGrid: boolean }) =>
  o.minuteGrid
    ? fc.integer({ min: 1, max: 36 * 60 }).map((m) => `@every ${m}m`)
    : fc.oneof(fc.integer({ min: 1, max: 600 }), fc.integer({ min: 1, max: 3 * 86_400 })).map((s) => `@every ${s}s`);

interface Member {
  text: string;
  zone: string | undefined;
  schedule: Schedule;
}

const memberArb = (o: { minuteGrid: boolean }): fc.Arbitrary<Member> =>
  fc
    .tuple(
      fc.oneof(
        { weight: 4, arbitrary: cronArb },
        { weight: 5, arbitrary: commonArb },
        { weight: 2, arbitrary: hashedArb },
        { weight: 1, arbitrary: descriptorArb },
        { weight: 2, arbitrary: everyArb(o) },
      ),
      fc.constantFrom(...ZONES),
    )
    .map(([text, zone]) => {
      const r = parseHashedSchedule(text, KEY, zone);
      return r.ok ? { text, zone, schedule: r.schedule } : undefined;
    })
    .filter((m): m is Member => m !== undefined);

/** An instant anywhere in 1990-2090, or within a day of a DST change. */
const instantArb = fc.oneof(
  fc.integer({ min: Date.parse("1990-01-01T00:00:00Z"), max: Date.parse("2090-01-01T00:00:00Z") }),
  fc.tuple(fc.constantFrom(...TRANSITIONS), fc.integer({ min: -DAY, max: DAY })).map(([t, o]) => t + o),
);

const lengthArb = fc.oneof(
  fc.integer({ min: 0, max: 2 * HOUR }),
  fc.integer({ min: 0, max: 3 * DAY }),
  fc.integer({ min: 0, max: 2 * 366 * DAY }),
);

const show = (s: SourcedSlot) => `${s.at.toISOString()} ${s.sources.join(",")}`;
const showDate = (d: Date | undefined) => (d === undefined ? "none" : d.toISOString());

/** The set's own walk (ScheduleSet.slotsAfter) over [from, to], bounded as slotsInRange bounds a range. */
function setSlotsInRange(
  set: ScheduleSet,
  from: Date,
  to: Date,
  o: { after?: Date; max: number; anchor?: SetAnchor },
): SourcedSlot[] {
  const out: SourcedSlot[] = [];
  if (o.max <= 0) return out;
  const start = o.after && o.after.getTime() >= from.getTime() ? o.after : new Date(from.getTime() - 1);
  for (const slot of set.slotsAfter(start, o.anchor)) {
    if (slot.at.getTime() > to.getTime()) break;
    out.push(slot);
    if (out.length >= o.max) break;
  }
  return out;
}

/** The set's own walk back (ScheduleSet.slotsBackFrom) over (after, notAfter], newest first, as newestSlots. */
function setNewestSlots(set: ScheduleSet, after: Date, notAfter: Date, anchor: SetAnchor, max: number): SourcedSlot[] {
  const out: SourcedSlot[] = [];
  if (max <= 0) return out;
  for (const slot of set.slotsBackFrom(notAfter, anchor)) {
    if (slot.at.getTime() <= after.getTime()) break;
    out.push(slot);
    if (out.length >= max) break;
  }
  return out;
}

// --- one member: exactly the single-schedule functions ---------------------------------------------------------

describe("a one-member ScheduleSet equals its schedule", () => {
  it("next, mostRecent and every window function, for any anchor form", () => {
    fc.assert(
      fc.property(
        memberArb({ minuteGrid: false }),
        fc.integer({ min: 0, max: 15 }),
        instantArb,
        lengthArb,
        fc.integer({ min: -10 * DAY, max: DAY }),
        fc.constantFrom("date", "map", "none"),
        fc.integer({ min: 0, max: 150 }),
        fc.integer({ min: 0, max: 300 }),
        fc.double({ min: -0.2, max: 1, noNaN: true }),
        (m, index, start, length, anchorOffset, anchorForm, max, limit, afterAt) => {
          const { schedule } = m;
          const set = new ScheduleSet([{ index, text: m.text, schedule }]);
          const from = new Date(start);
          const to = new Date(start + length);
          const anchor = new Date(start + anchorOffset);
          const single = anchorForm === "none" ? undefined : anchor;
          const union: SetAnchor =
            anchorForm === "none" ? undefined : anchorForm === "map" ? new Map([[index, anchor]]) : anchor;
          const as = (dates: Date[]) => dates.map((d) => `${d.toISOString()} ${index}`);
          const label = `${m.text} in ${m.zone ?? "UTC"}, [${from.toISOString()}, ${to.toISOString()}]`;

          for (const q of [from, to, new Date(start + length / 2)]) {
            const n = set.next(q, union);
            assert.equal(n.at.toISOString(), schedule.next(q, single).toISOString(), `next: ${label}`);
            assert.deepEqual(n.sources, [index]);
            const r = set.mostRecent(q, union);
            assert.equal(showDate(r?.at), showDate(schedule.mostRecent(q, single)), `mostRecent: ${label}`);
            if (r) assert.deepEqual(r.sources, [index]);
          }

          const after = afterAt < 0 ? undefined : new Date(start + Math.floor(afterAt * length));
          const o = { max, ...(after ? { after } : {}) };
          const expectedRange = as(slotsInRange(schedule, from, to, { ...o, ...(single ? { anchor: single } : {}) }));
          const expectedNewest = as(newestSlots(schedule, from, to, single ?? anchor, max));
          const w = scheduleWindow({ schedule, earliest: from, now: to, ...(single ? { anchor: single } : {}) });
          assert.deepEqual(
            unionCountSlots(set, from, to, union, limit),
            countSlots(schedule, from, to, single, limit),
            `countSlots: ${label}`,
          );
          if (union !== undefined && !(union instanceof Date)) {
            // UnionSchedule takes one Date for every member: a per-member anchor goes through the set's own walks.
            assert.deepEqual(
              setSlotsInRange(set, from, to, { ...o, anchor: union }).map(show),
              expectedRange,
              `slotsInRange: ${label}`,
            );
            assert.deepEqual(
              setNewestSlots(set, from, to, union, max).map(show),
              expectedNewest,
              `newestSlots: ${label}`,
            );
            if (length <= 3 * DAY) {
              // The default limit (100,000) is within reach of an @every 1s member only in short ranges.
              assert.deepEqual(
                unionCountSlots(set, new Date(from.getTime() - 1), to, union),
                countInRange(schedule, from, to, single),
                `countSlots over the range: ${label}`,
              );
            }
            const newest = set.mostRecent(to, union);
            const missed = newest && newest.at.getTime() > from.getTime() ? newest : undefined;
            assert.equal(set.next(to, union).at.toISOString(), w.next.toISOString(), `window next: ${label}`);
            assert.equal(showDate(missed?.at), showDate(w.missed), `window missed: ${label}`);
            const missedCount = missed ? unionCountSlots(set, from, to, union, MISSED_COUNT_CAP).count : 0;
            assert.equal(missedCount, w.missedCount, `window count: ${label}`);
            return;
          }

          const u = new UnionSchedule(set);
          for (const q of [from, to, new Date(start + length / 2)]) {
            assert.equal(
              u.next(q, union).toISOString(),
              schedule.next(q, single).toISOString(),
              `union next: ${label}`,
            );
            assert.equal(
              showDate(u.mostRecent(q, union)),
              showDate(schedule.mostRecent(q, single)),
              `union mostRecent`,
            );
          }
          const range = slotsInRange(u, from, to, { ...o, anchor: union });
          if (union === undefined && schedule.isEvery) {
            // sourcesAt finds a slot's members from just before it, where an anchorless `@every` member counts from
            // each `after` (no grid): only the walk that found its slots can name them, the set's own.
            const walk = setSlotsInRange(set, from, to, o);
            assert.deepEqual(
              range.map(showDate),
              walk.map((slot) => showDate(slot.at)),
              `slotsInRange: ${label}`,
            );
            assert.deepEqual(walk.map(show), expectedRange, `slotsInRange: ${label}`);
          } else {
            assert.deepEqual(sourced(u, range, union).map(show), expectedRange, `slotsInRange: ${label}`);
          }
          assert.deepEqual(
            sourced(u, newestSlots(u, from, to, union ?? anchor, max), union ?? anchor).map(show),
            expectedNewest,
            `newestSlots: ${label}`,
          );
          assert.deepEqual(
            countSlots(u, from, to, union, limit),
            countSlots(schedule, from, to, single, limit),
            `countSlots: ${label}`,
          );
          if (length <= 3 * DAY) {
            // The default limit (100,000) is within reach of an @every 1s member only in short ranges.
            assert.deepEqual(
              countInRange(u, from, to, union),
              countInRange(schedule, from, to, single),
              `countSlots over the range: ${label}`,
            );
          }
          const uw = scheduleWindow({ schedule: u, earliest: from, now: to, anchor: union });
          assert.equal(uw.next.toISOString(), w.next.toISOString(), `window next: ${label}`);
          assert.equal(showDate(uw.missed), showDate(w.missed), `window missed: ${label}`);
          assert.equal(uw.missedCount, w.missedCount, `window count: ${label}`);
        },
      ),
      { numRuns: 250 },
    );
  });
});

// --- several members: the union, by brute force ----------------------------------------------------------------

/** One shared anchor, or one per member. */
type Anchor = Exclude<SetAnchor, undefined>;

/** Each member's anchor: one shared instant, or one per member. */
function anchorsArb(count: number, base: number, grid: number): fc.Arbitrary<Anchor> {
  // Often on a whole hour, so @every members meet the others.
  const at = fc
    .tuple(fc.integer({ min: -3 * DAY, max: 0 }), fc.constantFrom(grid, HOUR))
    .map(([o, g]) => new Date(Math.floor((base + o) / g) * g));
  return fc.oneof<fc.Arbitrary<Anchor>[]>(
    at,
    fc.array(at, { minLength: count, maxLength: count }).map((dates) => new Map(dates.map((d, i) => [i, d]))),
  );
}

function anchorOf(anchor: SetAnchor, index: number): Date | undefined {
  return anchor instanceof Date || anchor === undefined ? anchor : anchor.get(index);
}

/** The union on a grid of instants: at each, the members that fire then (asked one by one). */
function bruteUnion(members: readonly Schedule[], anchor: SetAnchor, from: number, to: number, step: number) {
  const out: string[] = [];
  for (let t = Math.ceil(from / step) * step; t <= to; t += step) {
    const sources = members.flatMap((s, i) =>
      s.mostRecent(new Date(t), anchorOf(anchor, i))?.getTime() === t ? [i] : [],
    );
    if (sources.length > 0) out.push(`${new Date(t).toISOString()} ${sources.join(",")}`);
  }
  return out;
}

/** Runs whose window held slots, and held a slot of several members: the generators must reach both. */
const reached = { slots: 0, shared: 0 };

function assertReached(before: typeof reached): void {
  const slots = reached.slots - before.slots;
  const shared = reached.shared - before.shared;
  assert.ok(slots >= 30 && shared >= 5, `only ${slots} runs with slots, ${shared} with shared ones`);
}

function checkAgainst(
  set: ScheduleSet,
  anchor: Anchor,
  from: number,
  to: number,
  expected: string[],
  queries: number[],
) {
  if (expected.length > 0) reached.slots++;
  if (expected.some((e) => e.includes(","))) reached.shared++;
  const f = new Date(from);
  const t = new Date(to);
  const big = expected.length + 10;
  if (!(anchor instanceof Date)) {
    // UnionSchedule takes one Date for every member: a per-member anchor goes through the set's own walks.
    assert.deepEqual(setSlotsInRange(set, f, t, { max: big, anchor }).map(show), expected, "set.slotsAfter");
    assert.deepEqual(
      setNewestSlots(set, new Date(from - 1), t, anchor, big).map(show),
      [...expected].reverse(),
      "set.slotsBackFrom",
    );
    assert.deepEqual(unionCountSlots(set, new Date(from - 1), t, anchor), { count: expected.length, exact: true });
  } else {
    const union = new UnionSchedule(set);
    const range = slotsInRange(union, f, t, { max: big, anchor });
    assert.deepEqual(sourced(union, range, anchor).map(show), expected, "slotsInRange");
    assert.deepEqual(
      sourced(union, newestSlots(union, new Date(from - 1), t, anchor, big), anchor).map(show),
      [...expected].reverse(),
      "newestSlots",
    );
    assert.deepEqual(countInRange(union, f, t, anchor), { count: expected.length, exact: true });
    if (expected.length > 1) {
      const limit = Math.floor(expected.length / 2);
      assert.deepEqual(countSlots(union, new Date(from - 1), t, anchor, limit), { count: limit, exact: false });
    }
    const at = expected.map((s) => Date.parse(s.slice(0, s.indexOf(" "))));
    for (const q of queries) {
      const i = at.findIndex((x) => x > q);
      if (i >= 0) {
        const next = union.next(new Date(q), anchor);
        assert.equal(show(sourced(union, [next], anchor)[0]!), expected[i], `union next(${new Date(q).toISOString()})`);
      }
      const j = at.findLastIndex((x) => x <= q);
      if (j >= 0 && q >= from) {
        const recent = union.mostRecent(new Date(q), anchor);
        assert.ok(recent, `union mostRecent(${new Date(q).toISOString()})`);
        assert.equal(
          show(sourced(union, [recent], anchor)[0]!),
          expected[j],
          `union mostRecent(${new Date(q).toISOString()})`,
        );
      }
    }
  }
  if (expected.length > 1) {
    // A limit inside the window: exact up to it, "more than" past it.
    const limit = Math.floor(expected.length / 2);
    assert.deepEqual(unionCountSlots(set, new Date(from - 1), t, anchor, limit), { count: limit, exact: false });
  }
  const at = expected.map((s) => Date.parse(s.slice(0, s.indexOf(" "))));
  for (const q of queries) {
    const i = at.findIndex((x) => x > q);
    if (i >= 0) assert.equal(show(set.next(new Date(q), anchor)), expected[i], `next(${new Date(q).toISOString()})`);
    const j = at.findLastIndex((x) => x <= q);
    if (j >= 0 && q >= from) {
      assert.equal(show(set.mostRecent(new Date(q), anchor)!), expected[j], `mostRecent(${new Date(q).toISOString()})`);
    }
  }
}

const windowStartArb = fc.oneof(
  fc.tuple(fc.constantFrom(...TRANSITIONS), fc.integer({ min: -12 * 60, max: 6 * 60 })).map(([t, m]) => t + m * MINUTE),
  fc
    .integer({ min: Date.parse("2000-01-01T00:00:00Z") / MINUTE, max: Date.parse("2060-01-01T00:00:00Z") / MINUTE })
    .map((m) => m * MINUTE),
);

/** Members (indexed 0..n-1) with their anchors, shared or one each, on a grid. */
const membersWithAnchorsArb = (o: { minuteGrid: boolean; min: number; max: number }, grid: number) =>
  fc
    .tuple(fc.array(memberArb(o), { minLength: o.min, maxLength: o.max }), windowStartArb)
    .chain(([members, from]) => anchorsArb(members.length, from, grid).map((anchor) => ({ members, from, anchor })));

describe("a ScheduleSet of several members is the union of their slots", () => {
  it("minute by minute over windows of up to 12 hours, many across DST changes", () => {
    const before = { ...reached };
    fc.assert(
      fc.property(
        membersWithAnchorsArb({ minuteGrid: true, min: 2, max: 4 }, MINUTE),
        fc.integer({ min: 60, max: 12 * 60 }),
        fc.array(fc.integer({ min: 0, max: 12 * 60 }), { maxLength: 8 }),
        ({ members, from, anchor }, minutes, queryMinutes) => {
          const to = from + minutes * MINUTE;
          const schedules = members.map((m) => m.schedule);
          const expected = bruteUnion(schedules, anchor, from, to, MINUTE);
          const queries = queryMinutes.map((m) => from + m * MINUTE + (m % 3) * 17 * SECOND).filter((q) => q < to);
          checkAgainst(ScheduleSet.of(schedules), anchor, from, to, expected, queries);
        },
      ),
      { numRuns: 60 },
    );
    assertReached(before);
  });

  it("second by second over windows of up to 15 minutes, with @every members of any interval and anchor", () => {
    const everyMember = fc
      .tuple(
        fc.oneof(fc.constantFrom(1, 2, 3, 5, 10, 15, 20, 30, 45, 60, 90, 120), fc.integer({ min: 1, max: 400 })),
        fc.constantFrom(...ZONES),
      )
      .map(([seconds, zone]): Member => {
        const r = parseHashedSchedule(`@every ${seconds}s`, KEY, zone);
        assert.ok(r.ok);
        return { text: `@every ${seconds}s`, zone, schedule: r.schedule };
      });
    const before = { ...reached };
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof({ weight: 3, arbitrary: everyMember }, { weight: 1, arbitrary: memberArb({ minuteGrid: true }) }),
          {
            minLength: 2,
            maxLength: 4,
          },
        ),
        windowStartArb,
        fc.integer({ min: 0, max: 15 * 60 }),
        fc.array(
          fc.oneof(
            fc.integer({ min: -20 * 60 * SECOND, max: 0 }),
            fc.integer({ min: -240, max: 0 }).map((n) => n * 5 * SECOND),
          ),
          { minLength: 4, maxLength: 4 },
        ),
        fc.boolean(),
        fc.array(fc.integer({ min: 0, max: 15 * 60 * SECOND }), { maxLength: 8 }),
        (members, from, seconds, anchorOffsets, shared, queryOffsets) => {
          const to = from + seconds * SECOND;
          // Anchors with milliseconds: @every drops them, as robfig does.
          const anchors = anchorOffsets.map((o) => new Date(from + o));
          const anchor: Anchor = shared ? anchors[0]! : new Map(members.map((_, i) => [i, anchors[i]!]));
          const schedules = members.map((m) => m.schedule);
          const expected = bruteUnion(schedules, anchor, from, to, SECOND);
          const queries = queryOffsets.map((o) => from + o).filter((q) => q < to);
          checkAgainst(ScheduleSet.of(schedules), anchor, from, to, expected, queries);
        },
      ),
      { numRuns: 60 },
    );
    assertReached(before);
  });

  it("equals the merge of each member's own slotsInRange, up to 16 members over days", () => {
    const before = { ...reached };
    fc.assert(
      fc.property(
        membersWithAnchorsArb({ minuteGrid: true, min: 1, max: 16 }, SECOND),
        fc.integer({ min: 0, max: 2 * DAY }),
        ({ members, from, anchor }, length) => {
          const f = new Date(from);
          const t = new Date(from + length);
          const bySlot = new Map<number, number[]>();
          for (const [i, m] of members.entries()) {
            const own = anchorOf(anchor, i);
            for (const d of slotsInRange(m.schedule, f, t, { max: 5000, ...(own ? { anchor: own } : {}) })) {
              bySlot.set(d.getTime(), [...(bySlot.get(d.getTime()) ?? []), i]);
            }
          }
          const expected = [...bySlot.entries()]
            .sort(([a], [b]) => a - b)
            .map(([at, sources]) => `${new Date(at).toISOString()} ${sources.join(",")}`);
          checkAgainst(ScheduleSet.of(members.map((m) => m.schedule)), anchor, from, from + length, expected, []);
        },
      ),
      { numRuns: 60 },
    );
    assertReached(before);
  });
});
