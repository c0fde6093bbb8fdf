// shortestInterval (api/v1/schedules.ts): the shortest time between two runs of a CronJob's schedules, which the
// admission warnings about activeDeadlineSeconds and backoffLimit measure against, and `kubectl cron why` reuses.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cronJobSchedules, scheduleListSchedules, shortestInterval } from "../../api/v1/index.ts";

const key = { namespace: "default", name: "cj" };
const HOUR = 3600;
const DAY = 24 * HOUR;

function v1(schedule: string, timeZone?: string) {
  const r = cronJobSchedules({ spec: { schedule, ...(timeZone ? { timeZone } : {}) } }, key);
  assert.ok(r.ok, schedule);
  return r.schedules;
}

describe("shortestInterval", () => {
  const from = new Date("2026-01-15T12:34:56Z");

  it("is a cron schedule's smallest gap between slots", () => {
    for (const [schedule, seconds] of [
      ["* * * * *", 60],
      ["*/5 * * * *", 300],
      ["0 * * * *", HOUR],
      ["0 9,17 * * *", 8 * HOUR],
      // Weekdays: the weekend's gap is longer, the next run after Monday's comes a day later.
      ["0 9 * * 1-5", DAY],
      ["@weekly", 7 * DAY],
      // February.
      ["0 9 1 * *", 28 * DAY],
    ] as const) {
      assert.equal(shortestInterval(v1(schedule), from), seconds, schedule);
    }
  });

  it("is an @every schedule's period, wherever it is counted from", () => {
    assert.equal(shortestInterval(v1("@every 90m"), from), 90 * 60);
    assert.equal(shortestInterval(v1("@every 1h30m"), new Date(0)), 90 * 60);
  });

  it("is the union's for several schedules: the gap between two members' slots counts", () => {
    const two = scheduleListSchedules([{ schedule: "0 9 * * *" }, { schedule: "0 10 * * *", timeZone: "UTC" }], key);
    assert.ok(two.ok);
    assert.equal(shortestInterval(two.schedules, from), HOUR);
    // Each @every member counted from `from`: 00:00, 02:00, ... beside :30 every hour.
    const mixed = scheduleListSchedules([{ schedule: "@every 2h" }, { schedule: "30 * * * *" }], key);
    assert.ok(mixed.ok);
    assert.equal(shortestInterval(mixed.schedules, new Date("2026-01-15T00:00:00Z")), 30 * 60);
  });

  it("counts a DST change in its span (the day the clocks go forward has 23h), and no other", () => {
    const berlin = v1("0 9 * * *", "Europe/Berlin");
    assert.equal(shortestInterval(berlin, new Date("2026-03-20T00:00:00Z")), 23 * HOUR);
    assert.equal(shortestInterval(berlin, new Date("2026-04-10T00:00:00Z")), DAY);
  });

  // Bounded: a search that ran on would hit the test's time-out (a limit on a hang, not a performance figure:
  // those are `make bench`'s).
  it("is deterministic from its starting point, and bounded for a rare schedule", { timeout: 10_000 }, () => {
    const leap = v1("0 0 29 2 *");
    assert.equal(shortestInterval(leap, from), 1461 * DAY);
    assert.equal(shortestInterval(leap, from), shortestInterval(leap, new Date(from)));
  });
});
