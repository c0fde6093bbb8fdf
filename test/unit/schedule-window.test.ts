// spec.startTime and spec.endTime as a schedule's window (api/v1/schedule/limited.ts): no slot outside it, both ends
// inclusive, and past the end no next slot at all, for cron and `@every` schedules and a CronJob's parsed schedules.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { cronJobSchedules } from "../../api/v1/index.ts";
import { isSlot, NO_SLOT, parseSchedule, WindowedSchedule } from "../../api/v1/schedule/index.ts";

const t = (iso: string) => new Date(iso);
const hourly = () => {
  const p = parseSchedule("0 * * * *");
  assert.ok(p.ok);
  return p.schedule;
};

describe("a schedule within a window", () => {
  const window = { start: t("2026-12-01T10:00:00Z"), end: t("2026-12-01T12:00:00Z") };
  const s = new WindowedSchedule(hourly(), window);

  it("has its first slot at the start, and none before it", () => {
    assert.deepEqual(s.next(t("2026-11-01T00:00:00Z")), t("2026-12-01T10:00:00Z"));
    assert.equal(s.mostRecent(t("2026-12-01T09:59:59Z")), undefined);
    assert.deepEqual(s.mostRecent(t("2026-12-01T10:00:00Z")), t("2026-12-01T10:00:00Z"));
  });

  it("has its last slot at the end, and no next slot after it", () => {
    assert.deepEqual(s.next(t("2026-12-01T11:00:00Z")), t("2026-12-01T12:00:00Z"));
    assert.equal(s.next(t("2026-12-01T12:00:00Z")).getTime(), NO_SLOT);
    assert.ok(!isSlot(s.next(t("2027-01-01T00:00:00Z"))));
    assert.deepEqual(s.mostRecent(t("2027-01-01T00:00:00Z")), t("2026-12-01T12:00:00Z"));
  });

  it("gives the schedule's own slots inside the window (property)", () => {
    const inner = hourly();
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 6 * 3600 }), (sec) => {
        const at = new Date(Date.parse("2026-12-01T08:00:00Z") + sec * 1000);
        const n = s.next(at);
        const m = s.mostRecent(at);
        if (isSlot(n)) {
          assert.ok(n >= window.start && n <= window.end);
          assert.deepEqual(n, inner.next(at < window.start ? new Date(window.start.getTime() - 1) : at));
        }
        if (m) assert.ok(m >= window.start && m <= window.end);
      }),
    );
  });

  it("keeps `@every` on its anchor's grid", () => {
    const p = parseSchedule("@every 25m");
    assert.ok(p.ok);
    const anchor = t("2026-12-01T09:00:00Z");
    const e = new WindowedSchedule(p.schedule, { start: t("2026-12-01T10:00:00Z") });
    assert.deepEqual(e.next(anchor, anchor), t("2026-12-01T10:15:00Z"));
  });

  it("without an anchor, counts `@every` from `after` (robfig), not from the start", () => {
    const p = parseSchedule("@every 1h");
    assert.ok(p.ok);
    const e = new WindowedSchedule(p.schedule, { start: t("2026-12-01T10:30:00Z") });
    // From 09:00: 10:00 is before the start, so 11:00 is the first slot in the window (not 11:30, an hour after it).
    assert.deepEqual(e.next(t("2026-12-01T09:00:00Z")), t("2026-12-01T11:00:00Z"));
  });

  it("is what a CronJob's parsed schedules give, each schedule windowed", () => {
    const cronJob = {
      metadata: { name: "w", namespace: "d" },
      spec: { schedule: "0 * * * *", startTime: "2026-12-01T10:00:00Z", endTime: "2026-12-01T12:00:00Z" },
    };
    const parsed = cronJobSchedules(cronJob, { namespace: "d", name: "w" });
    assert.ok(parsed.ok);
    assert.deepEqual(parsed.schedules.schedule.next(t("2026-11-30T00:00:00Z")), t("2026-12-01T10:00:00Z"));
    assert.ok(!isSlot(parsed.schedules.schedule.next(t("2026-12-01T12:00:00Z"))));
    const bad = cronJobSchedules(
      { ...cronJob, spec: { ...cronJob.spec, endTime: "2026-12-01T09:00:00Z" } },
      {
        namespace: "d",
        name: "w",
      },
    );
    assert.ok(!bad.ok);
    assert.equal(bad.errors[0]!.field, "spec.endTime");
  });
});
