// Parsed schedules are shared by text and zone (api/v1/schedule/schedule.ts): one object for every CronJob that has
// them, answering as a fresh parse would, and never one zone's schedule for another.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseSchedule } from "../../api/v1/schedule/schedule.ts";

const one = (text: string, zone?: string) => {
  const r = parseSchedule(text, zone);
  assert.ok(r.ok, text);
  return r.schedule;
};

describe("parsed schedules, shared", () => {
  it("are one object for the same text and zone, another for another zone or text", () => {
    assert.equal(one("*/15 * * * *"), one("*/15 * * * *"));
    assert.equal(one("30 2 * * *", "Europe/Paris"), one("30 2 * * *", "Europe/Paris"));
    assert.notEqual(one("30 2 * * *", "Europe/Paris"), one("30 2 * * *"));
    assert.notEqual(one("30 2 * * *", "Europe/Paris"), one("30 2 * * *", "America/New_York"));
    assert.notEqual(one("*/15 * * * *"), one("*/10 * * * *"));
  });

  it("answer as a fresh parse does, whatever instants other callers asked before", () => {
    const shared = one("30 2 * * *", "Europe/Paris");
    // Other CronJobs' questions first (the shared memos fill with their instants).
    for (let d = 0; d < 50; d++) shared.next(new Date(Date.UTC(2026, 2, 1 + d, 1, 7)));
    const at = new Date(Date.UTC(2026, 2, 29, 0, 30)); // the night Paris springs forward
    // A different text with the same slots parses anew (a fresh object, no memo filled).
    const fresh = one("30 2 * * 0-6", "Europe/Paris");
    assert.notEqual(fresh, shared);
    assert.equal(shared.next(at).toISOString(), fresh.next(at).toISOString());
    assert.equal(shared.mostRecent(at)?.toISOString(), fresh.mostRecent(at)?.toISOString());
  });

  it("no zone is UTC, an empty zone is refused: never the other's answer", () => {
    assert.ok(parseSchedule("* * * * *").ok);
    const empty = parseSchedule("* * * * *", "");
    assert.equal(empty.ok, false, 'spec.timeZone "" is refused, also after the same text without a zone');
    assert.ok(parseSchedule("* * * * *", "UTC").ok);
  });

  it("an invalid schedule is refused each time, naming the field", () => {
    for (let i = 0; i < 2; i++) {
      const r = parseSchedule("61 * * * *");
      assert.equal(r.ok, false);
      if (!r.ok) assert.equal(r.error.field, "spec.schedule");
    }
  });
});
