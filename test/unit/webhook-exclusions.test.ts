// The validating webhook's checks of issue 46's fields: spec.exclusions' own windows (each error naming the
// window's field and value; exclusions that leave no slot ever refused, none within a year warned), the calendars it
// names as the manager's cache has them (warnings only: missing, not parsing, leaving no slot), and spec.retry
// (a delay that cannot fit before the next slot under Forbid or Replace warned). The math is
// test/unit/exclusions.test.ts's; here, what a user applying a manifest is told.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { API_VERSION as V2 } from "../../api/v2/index.ts";
import { fieldErrorString } from "../../runtime/webhook/index.ts";
import { validateCronJob } from "../../webhooks/cronjob_webhook.ts";
import { calendarCheck } from "../../webhooks/exclusion_checks.ts";
import { minimalCronJob, variant } from "../fixtures.ts";

const NOW = new Date("2026-11-26T10:00:00Z");
const check = (mutate: (o: Record<string, any>) => void) => {
  const r = validateCronJob(variant(minimalCronJob("x"), mutate), { now: NOW });
  return { errors: r.errors.map(fieldErrorString), warnings: r.warnings };
};

describe("the webhook and spec.exclusions", () => {
  it("accepts windows that parse and leave slots", () => {
    const r = check((o) => {
      o.spec.exclusions = {
        calendars: ["holidays-de"],
        windows: [
          { name: "freeze", start: "2026-12-20", end: "2027-01-05" },
          { daysOfMonth: "1-7", daysOfWeek: "MON", from: "02:00", to: "04:00" },
        ],
      };
    });
    assert.deepEqual(r, { errors: [], warnings: [] });
  });

  it("refuses a window that does not parse, naming the window's field and the value", () => {
    const r = check((o) => {
      o.spec.exclusions = { windows: [{ start: "2026-12-20" }, { start: "2026-13-01" }] };
    });
    assert.equal(r.errors.length, 1, r.errors.join("\n"));
    assert.match(r.errors[0]!, /^spec\.exclusions\.windows\[1\]\.start: Invalid value: "2026-13-01": /);
  });

  it("refuses an end before its start", () => {
    const r = check((o) => {
      o.spec.exclusions = { windows: [{ start: "2026-12-20", end: "2026-12-01" }] };
    });
    assert.equal(r.errors.length, 1, r.errors.join("\n"));
    assert.match(r.errors[0]!, /^spec\.exclusions\.windows\[0\]\.end: Invalid value: "2026-12-01": /);
  });

  it("refuses exclusions that leave the schedule no slot ever, as a schedule that never fires", () => {
    const r = check((o) => {
      o.spec.schedule = "0 2 * * *";
      o.spec.exclusions = { windows: [{ name: "nights", from: "01:00", to: "03:00" }] };
    });
    assert.equal(r.errors.length, 1, r.errors.join("\n"));
    assert.match(r.errors[0]!, /^spec\.exclusions\.windows: Invalid value: .*leave the schedule no time to run/);
  });

  it("warns when they leave no slot in the next year, and accepts", () => {
    const r = check((o) => {
      o.spec.schedule = "0 0 25 12 *";
      o.spec.exclusions = { windows: [{ start: "2026-12-25" }, { start: "2027-12-25" }] };
    });
    assert.deepEqual(r.errors, []);
    assert.equal(r.warnings.length, 1, r.warnings.join("\n"));
    assert.match(r.warnings[0]!, /^spec\.exclusions\.windows: .* in the next year/);
  });

  it("with several schedules (v2), judges by the schedule the windows leave the most slots", () => {
    const nights = { name: "nights", from: "01:00", to: "03:00" };
    const v2 = (schedules: string[], windows: unknown[]) =>
      check((o) => {
        o.apiVersion = V2;
        delete o.spec.schedule;
        o.spec.schedules = schedules.map((schedule) => ({ schedule }));
        o.spec.exclusions = { windows };
      });
    // 02:00 is always in a window, noon never: the CronJob still runs, nothing to say.
    assert.deepEqual(v2(["0 2 * * *", "0 12 * * *"], [nights]), { errors: [], warnings: [] });
    // 02:00 never runs, Christmas midnight not in the next year: a warning, not a refusal.
    const r = v2(["0 2 * * *", "0 0 25 12 *"], [nights, { start: "2026-12-25" }]);
    assert.deepEqual(r.errors, []);
    assert.equal(r.warnings.length, 1, r.warnings.join("\n"));
    assert.match(r.warnings[0]!, /^spec\.exclusions\.windows: .* in the next year/);
  });

  describe("the calendars it names, read from the manager's cache: warnings only", () => {
    const withCalendars = (
      calendars: Record<string, unknown[]> | "unknown",
      mutate: (o: Record<string, any>) => void,
    ) => {
      const inTeam = (o: Record<string, any>) => {
        o.metadata.namespace = "team";
        mutate(o);
      };
      const r = validateCronJob(variant(minimalCronJob("x"), inTeam), {
        now: NOW,
        inputs: [
          calendarCheck((namespace, name) =>
            calendars === "unknown"
              ? "unknown"
              : namespace === "team" && calendars[name]
                ? { name, state: "found", windows: calendars[name] }
                : { name, state: "missing" },
          ),
        ],
      });
      return { errors: r.errors.map(fieldErrorString), warnings: r.warnings };
    };

    it("says nothing of calendars that exist and leave slots", () => {
      const r = withCalendars({ "holidays-de": [{ name: "Christmas Day", start: "2026-12-25" }] }, (o) => {
        o.spec.exclusions = { calendars: ["holidays-de"] };
      });
      assert.deepEqual(r, { errors: [], warnings: [] });
    });

    it("warns of a calendar the namespace does not have: its slots would be held", () => {
      const r = withCalendars({}, (o) => {
        o.spec.exclusions = { calendars: ["holidays-de"] };
      });
      assert.deepEqual(r.errors, []);
      assert.deepEqual(r.warnings, [
        "spec.exclusions.calendars names holidays-de, which is not an ExclusionCalendar of namespace team: slots are held until it exists",
      ]);
    });

    it("warns of a calendar whose windows do not parse", () => {
      const r = withCalendars({ broken: [{ start: "2026-13-01" }] }, (o) => {
        o.spec.exclusions = { calendars: ["broken"] };
      });
      assert.deepEqual(r.errors, []);
      assert.equal(r.warnings.length, 1, r.warnings.join("\n"));
      assert.match(
        r.warnings[0]!,
        /^ExclusionCalendar broken: spec\.windows\[0\]\.start: .*slots are held until it is fixed$/,
      );
    });

    it("warns, never refuses, when the calendars leave no slot ever or none in the next year", () => {
      const never = withCalendars({ nights: [{ from: "01:00", to: "03:00" }] }, (o) => {
        o.spec.schedule = "0 2 * * *";
        o.spec.exclusions = { calendars: ["nights"] };
      });
      assert.deepEqual(never.errors, []);
      assert.deepEqual(never.warnings, [
        "spec.exclusions.calendars (nights): with these calendars every scheduled time falls in a window: the schedule would never run (not refused: a calendar can change)",
      ]);
      const year = withCalendars({ xmas: [{ start: "2026-12-25" }, { start: "2027-12-25" }] }, (o) => {
        o.spec.schedule = "0 0 25 12 *";
        o.spec.exclusions = { calendars: ["xmas"] };
      });
      assert.deepEqual(year.warnings, [
        "spec.exclusions.calendars (xmas): with these calendars every scheduled time in the next year falls in a window",
      ]);
    });

    it("says nothing while the cache cannot say, and adds nothing to what the CronJob's own windows already get", () => {
      const unknown = withCalendars("unknown", (o) => {
        o.spec.exclusions = { calendars: ["holidays-de"] };
      });
      assert.deepEqual(unknown, { errors: [], warnings: [] });
      const own = withCalendars({ nights: [{ from: "01:00", to: "03:00" }] }, (o) => {
        o.spec.schedule = "0 2 * * *";
        o.spec.exclusions = { calendars: ["nights"], windows: [{ from: "01:00", to: "03:00" }] };
      });
      assert.equal(own.errors.length, 1, "the own windows' error");
      assert.deepEqual(own.warnings, []);
    });
  });

  it("reads the windows in spec.timeZone, as the schedule", () => {
    // 02:00 in Tokyo is 17:00 UTC: a window read in UTC would not hold it; read in Tokyo it holds every slot.
    const r = check((o) => {
      o.spec.schedule = "0 2 * * *";
      o.spec.timeZone = "Asia/Tokyo";
      o.spec.exclusions = { windows: [{ from: "01:00", to: "03:00" }] };
    });
    assert.equal(r.errors.length, 1, r.errors.join("\n"));
    assert.match(r.errors[0]!, /leave the schedule no time to run/);
  });

  it("follows DST as the slots do: a slot the spring gap moves out of the window is a slot left", () => {
    // In New York 02:00 does not exist on 2027-03-14: that day's slot runs at 03:00, outside 01:00–03:00.
    const r = check((o) => {
      o.spec.schedule = "0 2 * * *";
      o.spec.timeZone = "America/New_York";
      o.spec.exclusions = { windows: [{ from: "01:00", to: "03:00" }] };
    });
    assert.deepEqual(r.errors, []);
  });
});

describe("the webhook and spec.retry", () => {
  it("warns when the delay cannot fit before the next slot under Forbid", () => {
    const r = check((o) => {
      o.spec.schedule = "*/5 * * * *";
      o.spec.concurrencyPolicy = "Forbid";
      o.spec.retry = { limit: 1, delaySeconds: 600 };
    });
    assert.deepEqual(r.errors, []);
    assert.ok(
      r.warnings.some((w) => w.startsWith("spec.retry.delaySeconds: 600 is not less than the 300 s")),
      r.warnings.join("\n"),
    );
  });

  it("warns under Replace too, and of a delay just equal to the interval", () => {
    const r = check((o) => {
      o.spec.schedule = "*/5 * * * *";
      o.spec.concurrencyPolicy = "Replace";
      o.spec.retry = { limit: 1, delaySeconds: 300 };
    });
    assert.deepEqual(r.errors, []);
    assert.deepEqual(
      r.warnings.filter((w) => w.startsWith("spec.retry")),
      [
        "spec.retry.delaySeconds: 300 is not less than the 300 s between scheduled times: with concurrencyPolicy Replace a retry is skipped once the next scheduled run has started (the record says so)",
      ],
    );
  });

  it("says nothing with Allow, or a delay that fits", () => {
    for (const [policy, delay] of [
      ["Allow", 600],
      ["Forbid", 60],
    ] as const) {
      const r = check((o) => {
        o.spec.concurrencyPolicy = policy;
        o.spec.retry = { limit: 2, delaySeconds: delay };
      });
      assert.deepEqual(r.errors, [], `${policy} ${delay}`);
      assert.deepEqual(
        r.warnings.filter((w) => w.startsWith("spec.retry")),
        [],
        `${policy} ${delay}`,
      );
    }
  });

  it("refuses a limit out of range, naming the field", () => {
    const r = check((o) => {
      o.spec.retry = { limit: 11 };
    });
    assert.ok(
      r.errors.some((e) => e.startsWith("spec.retry.limit")),
      r.errors.join("\n"),
    );
  });
});
