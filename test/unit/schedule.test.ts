import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  countSlots,
  countText,
  MISSED_COUNT_CAP,
  parseSchedule,
  ScheduleError,
  scheduleWindow,
  validateTimeZone,
  type Schedule,
} from "../../api/v1/schedule/index.ts";
import { countInRange, counted, must } from "../schedules.ts";

const d = (iso: string) => new Date(iso);

function rejection(schedule: string, timeZone?: string): ScheduleError {
  const r = parseSchedule(schedule, timeZone);
  assert.ok(!r.ok, `${JSON.stringify(schedule)} was accepted`);
  assert.ok(r.error instanceof ScheduleError);
  return r.error;
}

/** The next `n` slots after `from`, as ISO strings. */
function nexts(s: Schedule, from: string, n: number, anchor?: Date): string[] {
  const out: string[] = [];
  let t = d(from);
  for (let i = 0; i < n; i++) {
    t = s.next(t, anchor);
    out.push(t.toISOString());
  }
  return out;
}

const SYNTAX = "*, ?, lists (a,b), ranges (a-b) and steps (*/n, a-b/n, a/n)";
const DESCRIPTORS = "@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every <duration>";
const FIVE = "a schedule has 5 fields: minute hour day-of-month month day-of-week";

describe("schedule grammar: accepted (robfig/cron v3 ParseStandard)", () => {
  const accepted: [string, string][] = [
    ["*/15 * * * *", "*/15 * * * *"],
    ["? * * * *", "? * * * *"],
    ["0 9 * * MON-FRI", "0 9 * * MON-FRI"],
    ["0 9 * * mon-fri", "0 9 * * mon-fri"],
    ["0 9 * * Sun,sat", "0 9 * * Sun,sat"],
    ["0 0 1 jan,JUL *", "0 0 1 jan,JUL *"],
    ["5/15 * * * *", "5/15 * * * *"],
    ["1,1,2 * * * *", "1,1,2 * * * *"],
    ["0-59/7 0-23/5 1-31/3 1-12/2 0-6/3", "0-59/7 0-23/5 1-31/3 1-12/2 0-6/3"],
    ["30 10,11,12 * * 1-5", "30 10,11,12 * * 1-5"],
    ["0 0 29 2 *", "0 0 29 2 *"],
    ["0 0 31 1-12 *", "0 0 31 1-12 *"],
    [" 0  0 *\t* * ", "0 0 * * *"],
    // robfig quirks kept so that every schedule Kubernetes takes is taken here too:
    ["1,,2 * * * *", "1,,2 * * * *"], // empty list items are dropped
    ["+5 * * * *", "+5 * * * *"], // strconv.Atoi takes a plus sign
    ["05 07 * * *", "05 07 * * *"],
    ["*-5 * * * *", "*-5 * * * *"], // whatever follows "*-" is ignored
    ["@yearly", "@yearly"],
    ["@annually", "@annually"],
    ["@monthly", "@monthly"],
    ["@weekly", "@weekly"],
    ["@daily", "@daily"],
    ["@midnight", "@midnight"],
    ["@hourly", "@hourly"],
    ["@every 1h30m", "@every 1h30m0s"],
    ["@every 90s", "@every 1m30s"],
    ["@every 1.5h", "@every 1h30m0s"],
    ["@every 1m30.5s", "@every 1m30s"],
    ["@every 1500ms", "@every 1s"],
    ["@every .5m", "@every 30s"],
  ];
  for (const [schedule, description] of accepted) {
    it(`accepts ${JSON.stringify(schedule)}`, () => {
      const s = must(schedule);
      assert.equal(s.description, description);
      assert.equal(s.timeZone, "UTC");
    });
  }

  it("reports @every intervals in whole seconds and cron schedules as not-every", () => {
    assert.equal(must("@every 1h30m").everySeconds, 5400);
    assert.equal(must("@every 90s").everySeconds, 90);
    assert.equal(must("@every 1.5h").everySeconds, 5400);
    assert.equal(must("@every 1m30.5s").everySeconds, 90);
    assert.equal(must("@every 1h30m").isEvery, true);
    assert.equal(must("@hourly").isEvery, false);
    assert.equal(must("@hourly").everySeconds, undefined);
  });

  it("expands names, steps and N/step like robfig", () => {
    const s = must("5/15 * * * *");
    assert.deepEqual(nexts(s, "2026-01-01T00:00:00Z", 5), [
      "2026-01-01T00:05:00.000Z",
      "2026-01-01T00:20:00.000Z",
      "2026-01-01T00:35:00.000Z",
      "2026-01-01T00:50:00.000Z",
      "2026-01-01T01:05:00.000Z",
    ]);
    // 2026-01-02 is a Friday.
    assert.deepEqual(nexts(must("0 9 * * MON-FRI"), "2026-01-02T10:00:00Z", 2), [
      "2026-01-05T09:00:00.000Z",
      "2026-01-06T09:00:00.000Z",
    ]);
    assert.deepEqual(nexts(must("0 0 1 jan,JUL *"), "2026-01-01T00:00:00Z", 2), [
      "2026-07-01T00:00:00.000Z",
      "2027-01-01T00:00:00.000Z",
    ]);
    assert.deepEqual(nexts(must("*-5 * * * *"), "2026-01-01T00:10:00Z", 2), [
      "2026-01-01T00:11:00.000Z",
      "2026-01-01T00:12:00.000Z",
    ]);
  });

  it("gives every descriptor robfig's meaning", () => {
    const from = "2026-05-13T10:20:00Z"; // a Wednesday
    assert.deepEqual(nexts(must("@yearly"), from, 1), ["2027-01-01T00:00:00.000Z"]);
    assert.deepEqual(nexts(must("@annually"), from, 1), ["2027-01-01T00:00:00.000Z"]);
    assert.deepEqual(nexts(must("@monthly"), from, 1), ["2026-06-01T00:00:00.000Z"]);
    assert.deepEqual(nexts(must("@weekly"), from, 1), ["2026-05-17T00:00:00.000Z"]);
    assert.deepEqual(nexts(must("@daily"), from, 1), ["2026-05-14T00:00:00.000Z"]);
    assert.deepEqual(nexts(must("@midnight"), from, 1), ["2026-05-14T00:00:00.000Z"]);
    assert.deepEqual(nexts(must("@hourly"), from, 1), ["2026-05-13T11:00:00.000Z"]);
  });
});

describe("schedule grammar: rejected, with field, value and reason", () => {
  const rejected: [string, string][] = [
    ["0 0 0 * * *", `6 fields given; ${FIVE} (seconds are not supported)`],
    ["* * * *", `4 fields given; ${FIVE}, or a descriptor: ${DESCRIPTORS}`],
    ["* * * * * * *", `7 fields given; ${FIVE}`],
    ["", `empty schedule; ${FIVE}, or a descriptor: ${DESCRIPTORS}`],
    ["   ", `empty schedule; ${FIVE}, or a descriptor: ${DESCRIPTORS}`],
    ["0 0 * * 7", "day-of-week value 7 is out of range 0-6 (use 0 for Sunday)"],
    ["0 0 * * 0-7", "day-of-week value 7 is out of range 0-6 (use 0 for Sunday)"],
    ["0 0 * * 8", "day-of-week value 8 is out of range 0-6 (or sun-sat)"],
    ["0 0 L * *", `day-of-month "L": "L" (last day) is not supported; use values 1-31 with ${SYNTAX}`],
    ["0 0 * * 5L", `day-of-week "5L": "L" (last day) is not supported; use values 0-6 or sun-sat with ${SYNTAX}`],
    ["0 0 15W * *", `day-of-month "15W": "W" (nearest weekday) is not supported; use values 1-31 with ${SYNTAX}`],
    [
      "0 0 * * 5#3",
      `day-of-week "5#3": "#" (nth day-of-week of the month) is not supported; use values 0-6 or sun-sat with ${SYNTAX}`,
    ],
    ["H * * * *", `minute "H": "H" (hashed value) is not supported; use values 0-59 with ${SYNTAX}`],
    ["H(0-5) * * * *", `minute "H(0-5)": "H" (hashed value) is not supported; use values 0-59 with ${SYNTAX}`],
    ["@foo", `unknown descriptor "@foo"; use ${DESCRIPTORS}`],
    ["@DAILY", `unknown descriptor "@DAILY"; use ${DESCRIPTORS}`],
    ["@daily ", `unknown descriptor "@daily "; use ${DESCRIPTORS}`],
    ["@minutely", `unknown descriptor "@minutely"; use ${DESCRIPTORS}`],
    ["60 * * * *", "minute value 60 is out of range 0-59"],
    ["1,2,60 * * * *", "minute value 60 is out of range 0-59"],
    ["0 24 * * *", "hour value 24 is out of range 0-23"],
    ["0 0 * 13 *", "month value 13 is out of range 1-12 (or jan-dec)"],
    ["0 0 0 * *", "day-of-month value 0 is out of range 1-31"],
    ["0 0 32 * *", "day-of-month value 32 is out of range 1-31"],
    ["5-1 * * * *", "minute range 5-1 is reversed (5 > 1); write it as low-high"],
    ["0 0 * * fri-mon", "day-of-week range fri-mon is reversed (5 > 1); write it as low-high"],
    ["*/0 * * * *", 'minute step 0 in "*/0" must be at least 1'],
    ["*/x * * * *", 'minute step "x" in "*/x" must be a positive whole number'],
    ["1/2/3 * * * *", 'minute "1/2/3" has more than one "/"'],
    ["1-2-3 * * * *", 'minute "1-2-3" has more than one "-"'],
    ["-5 * * * *", `minute "-5" is not a valid value, range or step; use values 0-59 with ${SYNTAX}`],
    [", * * * *", 'never fires: minute "," has no values'],
    ["0 0 * , *", 'never fires: month "," has no values'],
    // An empty day field is no day (robfig): with a star in the other day field, or nothing in it, none matches.
    ["0 0 , * *", 'never fires: day-of-month "," has no values and day-of-week is "*"'],
    ["0 0 , * */1", 'never fires: day-of-month "," has no values and day-of-week is "*/1"'],
    ["0 0 ? * ,", 'never fires: day-of-week "," has no values and day-of-month is "?"'],
    ["0 0 , * ,,", 'never fires: day-of-month "," has no values and day-of-week is ",,"'],
    ["a * * * *", 'minute value "a" is not a number in 0-59'],
    ["0 0 * foo *", 'month value "foo" is neither a number nor a name in 1-12 or jan-dec'],
    ["0 0 * * monday", 'day-of-week value "monday" is neither a number nor a name in 0-6 or sun-sat'],
    ["0 0 * * jan", 'day-of-week value "jan" is neither a number nor a name in 0-6 or sun-sat'],
    ["0 0 * * constructor", 'day-of-week value "constructor" is neither a number nor a name in 0-6 or sun-sat'],
    ["TZ=UTC 0 0 * * *", "TZ= and CRON_TZ= prefixes are not supported; set spec.timeZone instead"],
    ["CRON_TZ=Europe/Berlin 0 0 * * *", "TZ= and CRON_TZ= prefixes are not supported; set spec.timeZone instead"],
    ["0 0 30 2 *", "never fires: day-of-month 30 does not occur in February"],
    ["0 0 30,31 feb *", "never fires: day-of-month 30,31 does not occur in February"],
    ["0 0 31 4,6,9,11 *", "never fires: day-of-month 31 does not occur in April, June, September or November"],
    ["0 0 31 apr *", "never fires: day-of-month 31 does not occur in April"],
    ["@every 500ms", '@every duration "500ms" is shorter than the minimum of 1s (sub-second parts are dropped)'],
    ["@every 999ms", '@every duration "999ms" is shorter than the minimum of 1s (sub-second parts are dropped)'],
    ["@every 0", '@every duration "0" is shorter than the minimum of 1s (sub-second parts are dropped)'],
    ["@every -1h", '@every duration "-1h" is shorter than the minimum of 1s (sub-second parts are dropped)'],
    ["@every 1x", '@every: unknown unit "x" in duration "1x"; use a Go duration such as 90s, 1h30m or 1.5h'],
    ["@every 1.5", '@every: missing unit in duration "1.5"; use a Go duration such as 90s, 1h30m or 1.5h'],
    ["@every .h", '@every: invalid duration ".h"; use a Go duration such as 90s, 1h30m or 1.5h'],
    [
      "@every 9999999999999h",
      '@every: invalid duration "9999999999999h"; use a Go duration such as 90s, 1h30m or 1.5h',
    ],
    ["@every", '@every needs a duration after a single space, e.g. "@every 1h30m"'],
  ];
  for (const [schedule, reason] of rejected) {
    it(`rejects ${JSON.stringify(schedule)}`, () => {
      const e = rejection(schedule);
      assert.equal(e.field, "spec.schedule");
      assert.equal(e.value, schedule);
      assert.equal(e.reason, reason);
      assert.equal(e.message, `spec.schedule: Invalid value: ${JSON.stringify(schedule)}: ${reason}`);
    });
  }

  it("words the message like apimachinery's field.Invalid", () => {
    assert.equal(
      rejection("0 0 30 2 *").message,
      'spec.schedule: Invalid value: "0 0 30 2 *": never fires: day-of-month 30 does not occur in February',
    );
  });

  it("keeps day-of-month feasibility to what can never happen", () => {
    must("0 0 31 * *"); // fires in 7 months
    must("0 0 30 1,2 *"); // January has a 30th
    must("0 0 30 2 1"); // day-of-week is restricted too, so Mondays in February fire
    must("0 0 29 feb *"); // leap years
  });
});

describe("time zones", () => {
  it("accepts IANA names and aliases Go's LoadLocation knows", () => {
    // Kubernetes takes up to 14 characters per part: "Port-au-Prince" and "ComodRivadavia" have 14.
    for (const tz of [
      "UTC",
      "Etc/UTC",
      "America/New_York",
      "Europe/Berlin",
      "Australia/Lord_Howe",
      "US/Eastern",
      "America/Port-au-Prince",
      "America/Argentina/ComodRivadavia",
    ]) {
      assert.equal(validateTimeZone(tz), undefined, tz);
      assert.equal(must("0 0 * * *", tz).timeZone, tz);
    }
    assert.equal(validateTimeZone("Etc/GMT+5"), undefined);
  });

  const rejected: [string, string][] = [
    ["", 'must not be empty; omit spec.timeZone for UTC or use an IANA name such as "America/New_York" or "Etc/UTC"'],
    [
      "Local",
      '"Local" (the controller\'s own zone) is not allowed; use an IANA name such as "America/New_York" or "Etc/UTC"',
    ],
    [
      "local",
      '"Local" (the controller\'s own zone) is not allowed; use an IANA name such as "America/New_York" or "Etc/UTC"',
    ],
    ["Mars/Olympus_Mons", 'unknown time zone; use an IANA name such as "America/New_York" or "Etc/UTC"'],
    ["../etc/passwd", 'unknown time zone; use an IANA name such as "America/New_York" or "Etc/UTC"'],
    [
      "+01:00",
      'a UTC offset is not a time zone name; use an IANA name such as "America/New_York" or "Etc/UTC" (or "Etc/GMT-1" for UTC+1)',
    ],
    ["america/new_york", 'time zone names are case-sensitive; did you mean "America/New_York"?'],
    ["utc", 'time zone names are case-sensitive; did you mean "UTC"?'],
  ];
  for (const [tz, reason] of rejected) {
    it(`rejects ${JSON.stringify(tz)}`, () => {
      const e = validateTimeZone(tz);
      assert.ok(e);
      assert.equal(e.field, "spec.timeZone");
      assert.equal(e.value, tz);
      assert.equal(e.reason, reason);
      assert.equal(e.message, `spec.timeZone: Invalid value: ${JSON.stringify(tz)}: ${reason}`);
      const viaParse = rejection("0 0 * * *", tz);
      assert.equal(viaParse.field, "spec.timeZone");
      assert.equal(viaParse.reason, reason);
    });
  }
});

describe("next and mostRecent (UTC)", () => {
  it("crosses month ends, year ends and leap days", () => {
    assert.deepEqual(nexts(must("0 0 31 * *"), "2026-01-31T00:00:00Z", 3), [
      "2026-03-31T00:00:00.000Z",
      "2026-05-31T00:00:00.000Z",
      "2026-07-31T00:00:00.000Z",
    ]);
    assert.deepEqual(nexts(must("59 23 31 12 *"), "2026-12-31T23:59:00Z", 1), ["2027-12-31T23:59:00.000Z"]);
    assert.deepEqual(nexts(must("0 0 29 2 *"), "2025-03-01T00:00:00Z", 3), [
      "2028-02-29T00:00:00.000Z",
      "2032-02-29T00:00:00.000Z",
      "2036-02-29T00:00:00.000Z",
    ]);
    // 2100 is not a leap year: eight years between slots.
    assert.deepEqual(nexts(must("0 0 29 2 *"), "2096-03-01T00:00:00Z", 1), ["2104-02-29T00:00:00.000Z"]);
    assert.equal(must("0 0 29 2 *").mostRecent(d("2028-02-28T23:59:59Z"))?.toISOString(), "2024-02-29T00:00:00.000Z");
    assert.equal(must("0 0 1 1 *").mostRecent(d("2027-01-01T00:00:00Z"))?.toISOString(), "2027-01-01T00:00:00.000Z");
    assert.equal(must("0 0 1 1 *").mostRecent(d("2026-12-31T23:59:59Z"))?.toISOString(), "2026-01-01T00:00:00.000Z");
  });

  it("is strictly after / at-or-before, with whole seconds", () => {
    const s = must("*/5 * * * *");
    assert.equal(s.next(d("2026-01-01T00:05:00Z")).toISOString(), "2026-01-01T00:10:00.000Z");
    assert.equal(s.next(d("2026-01-01T00:04:59.999Z")).toISOString(), "2026-01-01T00:05:00.000Z");
    assert.equal(s.mostRecent(d("2026-01-01T00:05:00Z"))?.toISOString(), "2026-01-01T00:05:00.000Z");
    assert.equal(s.mostRecent(d("2026-01-01T00:04:59.999Z"))?.toISOString(), "2026-01-01T00:00:00.000Z");
    assert.equal(s.mostRecent(d("2026-01-01T00:05:00.500Z"))?.toISOString(), "2026-01-01T00:05:00.000Z");
  });

  it("is exact for irregular schedules where interval arithmetic skips slots", () => {
    const s = must("30 10,11,12 * * 1-5");
    // 2026-01-02 is a Friday; the weekend is skipped, and no slot between.
    assert.deepEqual(nexts(s, "2026-01-02T11:00:00Z", 4), [
      "2026-01-02T11:30:00.000Z",
      "2026-01-02T12:30:00.000Z",
      "2026-01-05T10:30:00.000Z",
      "2026-01-05T11:30:00.000Z",
    ]);
    assert.equal(s.mostRecent(d("2026-01-05T10:29:00Z"))?.toISOString(), "2026-01-02T12:30:00.000Z");
    assert.equal(s.mostRecent(d("2026-01-05T11:45:00Z"))?.toISOString(), "2026-01-05T11:30:00.000Z");
  });
});

describe("day-of-month × day-of-week (robfig's star bit)", () => {
  const days = (schedule: string, n: number) =>
    nexts(must(schedule), "2026-01-31T12:00:00Z", n).map((iso) => iso.slice(0, 10));

  it("0 0 1 * 1 fires on the 1st and on every Monday (OR)", () => {
    // February 2026 starts on a Sunday.
    assert.deepEqual(days("0 0 1 * 1", 6), [
      "2026-02-01",
      "2026-02-02",
      "2026-02-09",
      "2026-02-16",
      "2026-02-23",
      "2026-03-01",
    ]);
  });

  it("a stepped */2 day-of-month is not a star, so it ORs with day-of-week", () => {
    assert.deepEqual(days("0 0 */2 * 1", 5), ["2026-02-01", "2026-02-02", "2026-02-03", "2026-02-05", "2026-02-07"]);
  });

  it("a full range is not a star either (OR), but */1 and a list holding * are (AND)", () => {
    assert.deepEqual(days("0 0 1-31 * 1", 3), ["2026-02-01", "2026-02-02", "2026-02-03"]);
    assert.deepEqual(days("0 0 */1 * 1", 3), ["2026-02-02", "2026-02-09", "2026-02-16"]);
    assert.deepEqual(days("0 0 *,5 * 1", 3), ["2026-02-02", "2026-02-09", "2026-02-16"]);
    assert.deepEqual(days("0 0 ? * 1", 3), ["2026-02-02", "2026-02-09", "2026-02-16"]);
  });

  it("0 0 * * 1 is only Mondays and 0 0 1 * * only the 1st", () => {
    assert.deepEqual(days("0 0 * * 1", 3), ["2026-02-02", "2026-02-09", "2026-02-16"]);
    assert.deepEqual(days("0 0 1 * *", 3), ["2026-02-01", "2026-03-01", "2026-04-01"]);
  });

  it("an empty day field is no day, so the other alone says the days (robfig's OR; Kubernetes runs these)", () => {
    assert.deepEqual(days("0 0 , * 1", 3), ["2026-02-02", "2026-02-09", "2026-02-16"]);
    assert.deepEqual(days("0 0 1 * ,", 3), ["2026-02-01", "2026-03-01", "2026-04-01"]);
    assert.deepEqual(days("0 0 ,, * */3", 3), ["2026-02-01", "2026-02-04", "2026-02-07"]);
    assert.deepEqual(days("0 0 30 2,3 ,", 2), ["2026-03-30", "2027-03-30"]);
    assert.equal(must("0 0 , * 1").mostRecent(d("2026-02-08T12:00:00Z"))?.toISOString(), "2026-02-02T00:00:00.000Z");
  });

  it("mostRecent applies the same rule", () => {
    assert.equal(must("0 0 1 * 1").mostRecent(d("2026-02-08T12:00:00Z"))?.toISOString(), "2026-02-02T00:00:00.000Z");
    assert.equal(must("0 0 1 * *").mostRecent(d("2026-02-08T12:00:00Z"))?.toISOString(), "2026-02-01T00:00:00.000Z");
  });
});

describe("@every", () => {
  it("counts from the anchor (lastScheduleTime ?? creationTimestamp)", () => {
    const s = must("@every 1h");
    const anchor = d("2026-01-01T10:00:07Z");
    assert.deepEqual(nexts(s, "2026-01-01T10:00:07Z", 2, anchor), [
      "2026-01-01T11:00:07.000Z",
      "2026-01-01T12:00:07.000Z",
    ]);
    assert.equal(s.next(d("2026-01-01T09:00:00Z"), anchor).toISOString(), "2026-01-01T11:00:07.000Z");
    assert.equal(s.next(d("2026-01-01T15:30:00Z"), anchor).toISOString(), "2026-01-01T16:00:07.000Z");
    assert.equal(s.mostRecent(d("2026-01-01T15:30:00Z"), anchor)?.toISOString(), "2026-01-01T15:00:07.000Z");
    assert.equal(s.mostRecent(d("2026-01-01T11:00:07Z"), anchor)?.toISOString(), "2026-01-01T11:00:07.000Z");
    // k >= 1: the anchor itself is not a slot.
    assert.equal(s.mostRecent(d("2026-01-01T11:00:06Z"), anchor), undefined);
  });

  it("drops sub-second parts of the interval and of the anchor", () => {
    const s = must("@every 1m30.5s");
    assert.equal(s.everySeconds, 90);
    const anchor = d("2026-01-01T00:00:00.750Z");
    assert.equal(s.next(anchor, anchor).toISOString(), "2026-01-01T00:01:30.000Z");
  });

  it("without an anchor, next counts from `after` (robfig) and mostRecent has nothing", () => {
    const s = must("@every 90s");
    assert.equal(s.next(d("2026-01-01T00:00:10Z")).toISOString(), "2026-01-01T00:01:40.000Z");
    assert.equal(s.mostRecent(d("2026-01-01T00:00:10Z")), undefined);
  });
});

describe("scheduleWindow", () => {
  const hourly = must("0 * * * *");
  const last = d("2026-01-01T12:00:00Z");
  // The caller computes earliest = max(lastScheduleTime, now - startingDeadlineSeconds).
  const earliestFor = (now: Date, deadlineSeconds: number) =>
    new Date(Math.max(last.getTime(), now.getTime() - deadlineSeconds * 1000));

  it("hourly, last run 12:00, deadline 30 min: at 13:00 the 13:00 slot is due", () => {
    const now = d("2026-01-01T13:00:00Z");
    const w = scheduleWindow({ schedule: hourly, earliest: earliestFor(now, 1800), now, anchor: last });
    assert.equal(w.missed?.toISOString(), "2026-01-01T13:00:00.000Z");
    assert.equal(w.missedCount, 1);
    assert.equal(w.next.toISOString(), "2026-01-01T14:00:00.000Z");
  });

  it("hourly, deadline 30 min: at 13:28 the 13:00 slot is still due", () => {
    const now = d("2026-01-01T13:28:00Z");
    const w = scheduleWindow({ schedule: hourly, earliest: earliestFor(now, 1800), now, anchor: last });
    assert.equal(w.missed?.toISOString(), "2026-01-01T13:00:00.000Z");
    assert.equal(w.next.toISOString(), "2026-01-01T14:00:00.000Z");
  });

  it("hourly, deadline 30 min: at 13:31 nothing is due any more", () => {
    const now = d("2026-01-01T13:31:00Z");
    const w = scheduleWindow({ schedule: hourly, earliest: earliestFor(now, 1800), now, anchor: last });
    assert.equal(w.missed, undefined);
    assert.equal(w.missedCount, 0);
  });

  it("hourly, deadline 3 h, last run 12:00, now 18:11: the newest slot 18:00 is due", () => {
    const now = d("2026-01-01T18:11:00Z");
    const w = scheduleWindow({ schedule: hourly, earliest: earliestFor(now, 3 * 3600), now, anchor: last });
    assert.equal(w.missed?.toISOString(), "2026-01-01T18:00:00.000Z");
    assert.equal(w.missedCount, 3); // 16:00, 17:00, 18:00 are after 15:11
    assert.equal(w.next.toISOString(), "2026-01-01T19:00:00.000Z");
    const all = scheduleWindow({ schedule: hourly, earliest: last, now, anchor: last });
    assert.equal(all.missedCount, 6);
  });

  it("excludes earliest and includes now", () => {
    const w = scheduleWindow({ schedule: hourly, earliest: last, now: last, anchor: last });
    assert.equal(w.missed, undefined);
    assert.equal(w.missedCount, 0);
    assert.equal(w.next.toISOString(), "2026-01-01T13:00:00.000Z");
  });

  it("works for @every from the anchor", () => {
    const s = must("@every 1h");
    const anchor = d("2026-01-01T10:00:07Z");
    const w = scheduleWindow({ schedule: s, earliest: anchor, now: d("2026-01-01T13:30:00Z"), anchor });
    assert.equal(w.missed?.toISOString(), "2026-01-01T13:00:07.000Z");
    assert.equal(w.missedCount, 3);
    assert.equal(w.next.toISOString(), "2026-01-01T14:00:07.000Z");
    const capped = scheduleWindow({ schedule: s, earliest: anchor, now: d("2027-01-01T00:00:00Z"), anchor });
    assert.equal(capped.missedCount, MISSED_COUNT_CAP);
  });

  it("answers a year of minutely downtime in bounded work: newest missed minute and a capped count", () => {
    const { schedule: s, calls } = counted(must("* * * * *"));
    const now = d("2026-06-15T08:42:31Z");
    const earliest = d("2025-06-15T08:42:31Z");
    const w = scheduleWindow({ schedule: s, earliest, now, anchor: earliest });
    // 525,600 slots were missed; the work is bounded by the cap, not by the downtime: counted in schedule calls,
    // not timed (a busy machine would fail a timing without any extra work done).
    assert.ok(calls() <= MISSED_COUNT_CAP + 3, `${calls()} schedule calls`);
    assert.equal(w.missed?.toISOString(), "2026-06-15T08:42:00.000Z");
    assert.equal(w.missedCount, MISSED_COUNT_CAP);
    assert.ok(MISSED_COUNT_CAP > 100);
    assert.equal(w.next.toISOString(), "2026-06-15T08:43:00.000Z");
  });

  it("counts up to a custom cap", () => {
    const now = d("2026-01-01T18:11:00Z");
    assert.equal(scheduleWindow({ schedule: hourly, earliest: last, now, cap: 4 }).missedCount, 4);
  });
});

describe("countSlots: counts a message may quote", () => {
  const hourly = parseSchedule("0 * * * *");
  const every = parseSchedule("@every 90m");
  if (!hourly.ok || !every.ok) throw new Error("test schedules must parse");

  it("counts exactly, beyond any window cap (500 hours: 500, not 101)", () => {
    const after = d("2026-01-01T00:00:00Z");
    const c = countSlots(hourly.schedule, after, new Date(after.getTime() + 500 * 3600_000), after);
    assert.deepEqual(c, { count: 500, exact: true });
    assert.ok(c.count > MISSED_COUNT_CAP);
  });

  it("stops at its limit and says so", () => {
    const after = d("2026-01-01T00:00:00Z");
    const c = countSlots(hourly.schedule, after, d("2027-01-01T00:00:00Z"), after, 1000);
    assert.deepEqual(c, { count: 1000, exact: false });
    assert.equal(countText(c), "more than 1000");
    assert.equal(countText({ count: 7, exact: true }), "7");
  });

  it("counts an @every schedule from its anchor without walking it, and a range inclusively", () => {
    const anchor = d("2026-01-01T00:00:00Z");
    assert.deepEqual(countSlots(every.schedule, anchor, d("2026-01-01T06:00:00Z"), anchor), { count: 4, exact: true });
    // [01:00, 03:00] holds 01:00, 02:00 and 03:00.
    assert.deepEqual(countInRange(hourly.schedule, d("2026-01-01T01:00:00Z"), d("2026-01-01T03:00:00Z"), anchor), {
      count: 3,
      exact: true,
    });
    assert.deepEqual(countSlots(hourly.schedule, anchor, anchor, anchor), { count: 0, exact: true });
  });

  it("counts an @every schedule on the grid next() walks: the anchor's milliseconds dropped, k >= 1", () => {
    // Anchored at 00:00:00.750, the slots are 01:30:00 and 03:00:00 (robfig drops the sub-second part).
    const anchor = d("2026-01-01T00:00:00.750Z");
    assert.equal(every.schedule.next(anchor, anchor).toISOString(), "2026-01-01T01:30:00.000Z");
    assert.deepEqual(countSlots(every.schedule, anchor, d("2026-01-01T03:00:00Z"), anchor), { count: 2, exact: true });
    // From before the anchor: only anchor + k·90m with k >= 1 are slots, so (21:00 the day before, 03:00] holds two.
    const whole = d("2026-01-01T00:00:00Z");
    assert.deepEqual(countSlots(every.schedule, d("2025-12-31T21:00:00Z"), d("2026-01-01T03:00:00Z"), whole), {
      count: 2,
      exact: true,
    });
  });
});
