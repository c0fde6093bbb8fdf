// Property tests against independent oracles: schedules are generated from the grammar together with the
// value sets they must denote, and slots are recomputed by brute force (day by day in UTC; minute by minute
// through real DST transitions, with the DST policy written out directly).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { parseSchedule, type Schedule } from "../../api/v1/schedule/index.ts";

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const MAX_DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const MONTH_NAMES = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DAY_NAMES = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

interface GenField {
  text: string;
  values: ReadonlySet<number>;
  star: boolean;
  realTime: boolean;
}

interface GenSchedule {
  text: string;
  minute: GenField;
  hour: GenField;
  dom: GenField;
  month: GenField;
  dow: GenField;
}

function span(from: number, to: number, step: number): number[] {
  const out: number[] = [];
  for (let v = from; v <= to; v += step) out.push(v);
  return out;
}

function itemArb(min: number, max: number, names?: readonly string[]): fc.Arbitrary<GenField> {
  const value = fc.integer({ min, max });
  const step = fc.integer({ min: 1, max: max - min + 1 });
  const render = (v: number) =>
    names
      ? fc.constantFrom(
          String(v),
          names[v - min] ?? "",
          (names[v - min] ?? "").toUpperCase(),
          (names[v - min] ?? "").replace(/^./, (c) => c.toUpperCase()),
        )
      : fc.constant(String(v));
  const field = (text: string, values: number[], star: boolean, realTime: boolean): GenField => ({
    text,
    values: new Set(values),
    star,
    realTime,
  });
  return fc.oneof(
    fc.constantFrom("*", "?").map((t) => field(t, span(min, max, 1), true, true)),
    step.map((n) => field(`*/${n}`, span(min, max, n), n === 1, true)),
    value.chain((v) => render(v).map((t) => field(t, [v], false, false))),
    fc
      .tuple(value, value)
      .map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as const)
      .chain(([a, b]) =>
        fc.tuple(render(a), render(b)).map(([ta, tb]) => field(`${ta}-${tb}`, span(a, b, 1), false, false)),
      ),
    fc
      .tuple(value, value, step)
      .map(([a, b, n]) =>
        field(`${Math.min(a, b)}-${Math.max(a, b)}/${n}`, span(Math.min(a, b), Math.max(a, b), n), false, true),
      ),
    fc.tuple(value, step).map(([a, n]) => field(`${a}/${n}`, span(a, max, n), false, true)),
  );
}

function fieldArb(min: number, max: number, names?: readonly string[]): fc.Arbitrary<GenField> {
  return fc.array(itemArb(min, max, names), { minLength: 1, maxLength: 3 }).map((items) => ({
    text: items.map((i) => i.text).join(","),
    values: new Set(items.flatMap((i) => [...i.values])),
    star: items.some((i) => i.star),
    realTime: items.some((i) => i.realTime),
  }));
}

const star: GenField = { text: "*", values: new Set(span(0, 59, 1)), star: true, realTime: true };
const starIn = (min: number, max: number): GenField => ({ ...star, values: new Set(span(min, max, 1)) });

function scheduleArb(opts: { calendarStarBias?: boolean } = {}): fc.Arbitrary<GenSchedule> {
  const maybeStar = (arb: fc.Arbitrary<GenField>, min: number, max: number) =>
    opts.calendarStarBias
      ? fc.oneof({ weight: 3, arbitrary: fc.constant(starIn(min, max)) }, { weight: 1, arbitrary: arb })
      : arb;
  return fc
    .tuple(
      fieldArb(0, 59),
      fieldArb(0, 23),
      maybeStar(fieldArb(1, 31), 1, 31),
      maybeStar(fieldArb(1, 12, MONTH_NAMES), 1, 12),
      maybeStar(fieldArb(0, 6, DAY_NAMES), 0, 6),
    )
    .map(([minute, hour, dom, month, dow]) => ({
      text: [minute, hour, dom, month, dow].map((f) => f.text).join(" "),
      minute,
      hour,
      dom,
      month,
      dow,
    }));
}

function feasible(g: GenSchedule): boolean {
  if (!g.dow.star || g.dom.star) return true;
  const smallest = Math.min(...g.dom.values);
  return [...g.month.values].some((m) => smallest <= (MAX_DAYS_IN_MONTH[m - 1] ?? 0));
}

function dayMatches(g: GenSchedule, day: Date): boolean {
  const dom = g.dom.values.has(day.getUTCDate());
  const dow = g.dow.values.has(day.getUTCDay());
  return g.dom.star || g.dow.star ? dom && dow : dom || dow;
}

/** Does a wall-clock time (encoded as the UTC instant with the same fields) match? */
function matches(g: GenSchedule, wall: number): boolean {
  const x = new Date(wall);
  return (
    x.getUTCSeconds() === 0 &&
    x.getUTCMilliseconds() === 0 &&
    g.minute.values.has(x.getUTCMinutes()) &&
    g.hour.values.has(x.getUTCHours()) &&
    g.month.values.has(x.getUTCMonth() + 1) &&
    dayMatches(g, x)
  );
}

const sorted = (s: ReadonlySet<number>) => [...s].sort((a, b) => a - b);

function bruteNext(g: GenSchedule, t: number): number {
  const hours = sorted(g.hour.values);
  const minutes = sorted(g.minute.values);
  for (let day = Math.floor(t / DAY) * DAY; day < t + 12 * 366 * DAY; day += DAY) {
    const d = new Date(day);
    if (!g.month.values.has(d.getUTCMonth() + 1) || !dayMatches(g, d)) continue;
    for (const h of hours)
      for (const m of minutes) if (day + h * HOUR + m * MINUTE > t) return day + h * HOUR + m * MINUTE;
  }
  throw new Error("bruteNext: nothing within 12 years");
}

function bruteMostRecent(g: GenSchedule, t: number): number {
  const hours = sorted(g.hour.values).reverse();
  const minutes = sorted(g.minute.values).reverse();
  for (let day = Math.floor(t / DAY) * DAY; day > t - 12 * 366 * DAY; day -= DAY) {
    const d = new Date(day);
    if (!g.month.values.has(d.getUTCMonth() + 1) || !dayMatches(g, d)) continue;
    for (const h of hours)
      for (const m of minutes) if (day + h * HOUR + m * MINUTE <= t) return day + h * HOUR + m * MINUTE;
  }
  throw new Error("bruteMostRecent: nothing within 12 years");
}

function parsed(g: GenSchedule, timeZone?: string): Schedule {
  const r = parseSchedule(g.text, timeZone);
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  return r.schedule;
}

const instantArb = fc
  .date({ min: new Date("1971-01-01T00:00:00Z"), max: new Date("2199-12-31T00:00:00Z"), noInvalidDate: true })
  .map((d) => d.getTime());

describe("schedule properties (UTC)", () => {
  it("accepts exactly the feasible generated schedules, and rejects the rest as never firing", () => {
    fc.assert(
      fc.property(scheduleArb(), (g) => {
        const r = parseSchedule(g.text);
        if (feasible(g)) {
          assert.ok(r.ok, r.ok ? "" : r.error.message);
          assert.equal(r.schedule.followsRealTime, g.hour.realTime);
        } else {
          assert.ok(!r.ok);
          assert.match(r.error.reason, /^never fires: day-of-month /);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("next and mostRecent equal a brute-force search, and fit together", () => {
    fc.assert(
      fc.property(scheduleArb(), instantArb, (g, t) => {
        fc.pre(feasible(g));
        const s = parsed(g);
        const next = s.next(new Date(t)).getTime();
        const recent = s.mostRecent(new Date(t))?.getTime();
        assert.equal(next, bruteNext(g, t), "next");
        assert.equal(recent, bruteMostRecent(g, t), "mostRecent");
        assert.ok(next > t);
        assert.ok(matches(g, next));
        assert.equal(s.mostRecent(new Date(next))?.getTime(), next);
        assert.ok(recent !== undefined && recent <= t);
        assert.equal(s.next(new Date(recent)).getTime(), next, "next(mostRecent(t)) skips past t");
        assert.ok(t < next);
      }),
      { numRuns: 400 },
    );
  });

  it("next is strictly increasing and visits every slot", () => {
    fc.assert(
      fc.property(scheduleArb(), instantArb, (g, t) => {
        fc.pre(feasible(g));
        const s = parsed(g);
        let prev = t;
        for (let i = 0; i < 6; i++) {
          const n = s.next(new Date(prev)).getTime();
          assert.ok(n > prev);
          assert.equal(n, bruteNext(g, prev));
          assert.equal(n % 60_000, 0);
          prev = n;
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe("schedule properties (parsing never throws)", () => {
  // Mostly near-valid fields, so that the evaluator is reached and not only the error paths.
  const piece = fc.oneof(
    { weight: 3, arbitrary: fc.constant("*") },
    { weight: 4, arbitrary: fc.integer({ min: 0, max: 6 }).map(String) },
    {
      weight: 2,
      arbitrary: fc.constantFrom("?", "12", "23", "29", "30", "31", "59", "60", "0", "7", "L", "1W", "mon", "JAN", ""),
    },
  );
  const separator = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom("-", "/", ",") },
    { weight: 1, arbitrary: fc.constantFrom("#", "") },
  );
  const token = fc
    .tuple(piece, fc.array(fc.tuple(separator, piece), { maxLength: 2, size: "xsmall" }))
    .map(([first, rest]) => first + rest.map(([sep, p]) => sep + p).join(""));
  const cronish = fc.oneof(
    { weight: 6, arbitrary: fc.array(token, { minLength: 5, maxLength: 5 }).map((ts) => ts.join(" ")) },
    { weight: 1, arbitrary: fc.array(token, { minLength: 4, maxLength: 6 }).map((ts) => ts.join(" ")) },
    {
      weight: 1,
      arbitrary: fc.string({ unit: fc.constantFrom(..."0123456789*/?,-LW#H@ \tajnMONhmsµ.+TZ=CRON_"), maxLength: 30 }),
    },
  );

  it("on arbitrary strings", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.string({ unit: "binary" })),
        fc.option(fc.string(), { nil: undefined }),
        (s, tz) => {
          const r = parseSchedule(s, tz);
          if (!r.ok) assert.match(r.error.message, /^spec\.(schedule|timeZone): Invalid value: /);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("on cron-like noise; whatever is accepted can be evaluated", () => {
    const at = new Date("2026-05-05T05:05:05Z");
    let accepted = 0;
    fc.assert(
      fc.property(
        fc.oneof(
          cronish,
          cronish.map((s) => `@every ${s}`),
        ),
        (s) => {
          const r = parseSchedule(s);
          if (!r.ok) {
            assert.equal(r.error.field, "spec.schedule");
            assert.equal(r.error.value, s);
            return;
          }
          accepted++;
          const n = r.schedule.next(at, at);
          assert.ok(n > at);
          const m = r.schedule.mostRecent(n, at);
          assert.equal(m?.getTime(), n.getTime());
        },
      ),
      { numRuns: 3000 },
    );
    assert.ok(accepted > 100, `only ${accepted} accepted: the generator does not reach the evaluator`);
  });

  it("reads @every durations as Go does, truncated to whole seconds", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 500 }),
        fc.integer({ min: 0, max: 500 }),
        fc.integer({ min: 0, max: 500 }),
        fc.integer({ min: 0, max: 999 }),
        (h, m, s, ms) => {
          const text = `@every ${h}h${m}m${s}s${ms}ms`;
          const total = h * 3600 + m * 60 + s;
          const r = parseSchedule(text);
          if (total < 1) {
            assert.ok(!r.ok);
          } else {
            assert.ok(r.ok, text);
            assert.equal(r.schedule.everySeconds, total);
          }
        },
      ),
    );
  });
});

// --- DST: minute-by-minute oracle around real transitions ------------------------------------------------

interface ZoneWindow {
  zone: string;
  start: number;
  /** Offset (ms) at start + i minutes. */
  offsets: number[];
}

function intlOffset(format: Intl.DateTimeFormat, t: number): number {
  const name = format.formatToParts(t).find((p) => p.type === "timeZoneName")?.value ?? "GMT";
  const m = /^GMT(?:([+-])(\d{2}):(\d{2}))?$/.exec(name);
  assert.ok(m, name);
  if (!m[1]) return 0;
  return (m[1] === "-" ? -1 : 1) * (Number(m[2]) * HOUR + Number(m[3]) * MINUTE);
}

function zoneWindow(zone: string, around: string): ZoneWindow {
  const format = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" });
  const start = new Date(around).getTime() - 36 * HOUR;
  const offsets: number[] = [];
  for (let i = 0; i <= 72 * 60; i++) offsets.push(intlOffset(format, start + i * MINUTE));
  return { zone, start, offsets };
}

/** Every slot in the window under our DST policy, written out the naive way. */
function oracle(g: GenSchedule, w: ZoneWindow): number[] {
  const fixed = !g.hour.realTime;
  const out = new Set<number>();
  const seen = new Set<number>();
  for (let i = 0; i < w.offsets.length; i++) {
    const t = w.start + i * MINUTE;
    const off = w.offsets[i] ?? 0;
    const wall = t + off;
    const prevOff = w.offsets[i - 1];
    if (fixed && prevOff !== undefined) {
      // Wall minutes the clock jumped over fire shifted forward by the gap (measured with the old offset).
      const prevWall = t - MINUTE + prevOff;
      for (let skipped = prevWall + MINUTE; skipped < wall; skipped += MINUTE) {
        if (matches(g, skipped)) out.add(skipped - prevOff);
      }
    }
    const first = !seen.has(wall);
    seen.add(wall);
    if (matches(g, wall) && (!fixed || first)) out.add(t);
  }
  return [...out].sort((a, b) => a - b);
}

const WINDOWS: [string, string][] = [
  ["America/New_York", "2026-03-08T07:00:00Z"],
  ["America/New_York", "2026-11-01T06:00:00Z"],
  ["Europe/Berlin", "2026-03-29T01:00:00Z"],
  ["Europe/Berlin", "2026-10-25T01:00:00Z"],
  ["Australia/Lord_Howe", "2026-04-04T15:00:00Z"],
  ["Australia/Lord_Howe", "2026-10-03T15:30:00Z"],
  ["America/Santiago", "2026-04-05T03:00:00Z"],
  ["America/Santiago", "2026-09-06T04:00:00Z"],
  ["Pacific/Apia", "2011-12-30T10:00:00Z"], // the whole of 2011-12-30 was skipped
  ["Asia/Tehran", "2021-09-21T19:30:00Z"], // fall-back at midnight, +03:30 zone
  ["Antarctica/Troll", "2026-03-29T01:00:00Z"], // two-hour shifts
  ["Antarctica/Troll", "2026-10-25T01:00:00Z"],
];

describe("schedule properties (DST policy against a minute-by-minute oracle)", () => {
  const windows = WINDOWS.map(([zone, around]) => zoneWindow(zone, around));

  it("next and mostRecent match the oracle around real transitions", () => {
    fc.assert(
      fc.property(
        scheduleArb({ calendarStarBias: true }),
        fc.integer({ min: 0, max: windows.length - 1 }),
        // Anywhere in the window, and many more within a few hours of the transition.
        fc.array(
          fc.oneof(
            fc.integer({ min: 0, max: 72 * 60 * MINUTE }),
            fc.integer({ min: 32 * HOUR, max: 40 * HOUR }),
            fc.integer({ min: 32 * 60, max: 40 * 60 }).map((m) => m * MINUTE),
          ),
          { minLength: 10, maxLength: 30 },
        ),
        (g, wi, offsets) => {
          fc.pre(feasible(g));
          const w = windows[wi];
          assert.ok(w);
          const s = parsed(g, w.zone);
          const expected = oracle(g, w);
          const end = w.start + 72 * 60 * MINUTE;
          const queries = offsets.map((o) => w.start + o);
          // Slots near the transition, and just either side of them.
          const near = expected.filter((slot) => Math.abs(slot - (w.start + 36 * HOUR)) < 6 * HOUR);
          const stride = Math.max(1, Math.floor(near.length / 40));
          for (let i = 0; i < near.length; i += stride) {
            const slot = near[i] ?? 0;
            queries.push(slot - 1, slot, slot + 1);
          }
          for (const q of queries) {
            const want = expected.find((x) => x > q);
            if (want !== undefined) {
              assert.equal(
                s.next(new Date(q)).toISOString(),
                new Date(want).toISOString(),
                `next(${new Date(q).toISOString()})`,
              );
            }
            const wantBack = expected.findLast((x) => x <= q);
            if (wantBack !== undefined && q <= end) {
              assert.equal(
                s.mostRecent(new Date(q))?.toISOString(),
                new Date(wantBack).toISOString(),
                `mostRecent(${new Date(q).toISOString()})`,
              );
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("next is strictly increasing and mostRecent(next(t)) == next(t) in any zone", () => {
    const zones = ["America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "America/Santiago", "Asia/Kolkata"];
    fc.assert(
      fc.property(scheduleArb(), fc.constantFrom(...zones), instantArb, (g, zone, t) => {
        fc.pre(feasible(g));
        const s = parsed(g, zone);
        let prev = t;
        for (let i = 0; i < 4; i++) {
          const n = s.next(new Date(prev)).getTime();
          assert.ok(n > prev);
          assert.equal(s.mostRecent(new Date(n))?.getTime(), n);
          const r = s.mostRecent(new Date(n - 1))?.getTime();
          assert.ok(r !== undefined && r <= prev, "no slot between");
          prev = n;
        }
      }),
      { numRuns: 150 },
    );
  });
});
