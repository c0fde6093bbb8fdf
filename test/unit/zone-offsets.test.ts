// Zone offsets and transitions (api/v1/schedule/timezone.ts), which read a zone's wall clock through
// date-fns-tz: held to Intl's own offset names (seconds included), and shown not to depend on the process's
// time zone, which date-fns-tz carries its zoned Dates in.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, it } from "node:test";
import { utcOffsetAt, ZoneRules } from "../../api/v1/schedule/index.ts";

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Intl's offset name at an instant ("GMT-00:44:30", "GMT+05:45", "GMT"), in ms east of UTC. */
function intlOffset(timeZone: string, at: number): number {
  const format = new Intl.DateTimeFormat("en-US", { timeZone, timeZoneName: "longOffset" });
  const name = format.formatToParts(at).find((p) => p.type === "timeZoneName")?.value ?? "";
  const m = /^GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(name);
  assert.ok(m, `${timeZone}: ${name}`);
  if (!m[1]) return 0;
  return (m[1] === "-" ? -1 : 1) * (Number(m[2]) * HOUR + Number(m[3]) * MINUTE + Number(m[4] ?? 0) * SECOND);
}

function transitions(zone: string, from: string, to: string): string[] {
  const rules = new ZoneRules(zone);
  const out: string[] = [];
  const end = Date.parse(to);
  for (let p = Date.parse(from), t; (t = rules.firstTransitionIn(p, end)); p = t.at) {
    out.push(`${new Date(t.at).toISOString()} ${t.before / SECOND}s -> ${t.after / SECOND}s`);
  }
  return out;
}

describe("zone offsets", () => {
  it("agree with Intl's offset for every zone in January and July 2026", () => {
    for (const zone of Intl.supportedValuesOf("timeZone")) {
      const rules = new ZoneRules(zone);
      for (const iso of ["2026-01-15T12:00:00Z", "2026-07-15T12:00:00Z"]) {
        const at = Date.parse(iso);
        assert.equal(rules.offsetAt(at), intlOffset(zone, at), `${zone} at ${iso}`);
      }
    }
  });

  it("keep 30- and 45-minute offsets, LMT offsets with seconds, and the far past and future", () => {
    const cases: [string, string, string][] = [
      ["Asia/Kathmandu", "2026-07-01T00:00:00Z", "+05:45"],
      ["Pacific/Chatham", "2026-07-01T00:00:00Z", "+12:45"],
      ["Pacific/Chatham", "2026-01-01T00:00:00Z", "+13:45"],
      ["Australia/Lord_Howe", "2026-07-01T00:00:00Z", "+10:30"],
      ["America/St_Johns", "2026-01-01T00:00:00Z", "-03:30"],
      ["Africa/Monrovia", "1960-06-01T00:00:00.500Z", "-00:44:30"],
      ["Europe/Dublin", "1910-06-01T00:00:00Z", "-00:25:21"],
      ["America/New_York", "1850-06-01T00:00:00Z", "-04:56:02"],
      // Before year 1 (date-fns-tz reads the year without its era there) and near its start.
      ["America/New_York", "-000100-06-01T00:00:00Z", "-04:56:02"],
      ["America/New_York", "0001-01-01T00:00:00Z", "-04:56:02"],
      ["Asia/Tokyo", "0001-01-01T00:00:00Z", "+09:18:59"],
      ["Europe/London", "+010000-07-01T00:00:00Z", "+01:00"],
      ["America/New_York", "+275000-01-01T00:00:00Z", "-05:00"],
      ["UTC", "+275000-01-01T00:00:00Z", "+00:00"],
    ];
    for (const [zone, iso, want] of cases) {
      const at = Date.parse(iso);
      const m = /^([+-])(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(want)!;
      const ms = (m[1] === "-" ? -1 : 1) * (+m[2]! * HOUR + +m[3]! * MINUTE + +(m[4] ?? 0) * SECOND);
      assert.equal(intlOffset(zone, at), ms, `the oracle, ${zone} at ${iso}`);
      assert.equal(new ZoneRules(zone).offsetAt(at), ms, `${zone} at ${iso}`);
      assert.equal(utcOffsetAt(zone, new Date(at)), ms, `utcOffsetAt ${zone} at ${iso}`);
    }
  });

  it("find transitions to the second, including sub-minute and whole-day ones", () => {
    assert.deepEqual(transitions("America/New_York", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"), [
      "2026-03-08T07:00:00.000Z -18000s -> -14400s",
      "2026-11-01T06:00:00.000Z -14400s -> -18000s",
    ]);
    assert.deepEqual(transitions("Australia/Lord_Howe", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"), [
      "2026-04-04T15:00:00.000Z 39600s -> 37800s",
      "2026-10-03T15:30:00.000Z 37800s -> 39600s",
    ]);
    assert.deepEqual(transitions("Africa/Monrovia", "1971-12-01T00:00:00Z", "1972-02-01T00:00:00Z"), [
      "1972-01-07T00:44:30.000Z -2670s -> 0s",
    ]);
    assert.deepEqual(transitions("Europe/Dublin", "1916-01-01T00:00:00Z", "1916-12-01T00:00:00Z"), [
      "1916-05-21T02:25:21.000Z -1521s -> 2079s",
      "1916-10-01T02:25:21.000Z 2079s -> 0s",
    ]);
    assert.deepEqual(transitions("Pacific/Apia", "2011-12-01T00:00:00Z", "2012-01-01T00:00:00Z"), [
      "2011-12-30T10:00:00.000Z -36000s -> 50400s",
    ]);
  });

  it("do not depend on the process's time zone", () => {
    // Zones and years where reading date-fns-tz's zoned Date without the process-gap check gives phantom
    // transitions when the process runs in New York or Berlin (the zone's wall clock falls in the process's
    // own DST gap), and a process zone with a seconds offset (Monrovia before 1972); the scheduled-timestamp
    // annotation's RFC 3339 text too (date-fns-tz's formatInTimeZone would be an hour off in those gaps).
    const module = resolve(import.meta.dirname, "..", "..", "api", "v1", "schedule", "index.ts");
    const jobModule = resolve(import.meta.dirname, "..", "..", "api", "v1", "job.ts");
    const script = `
      const { ZoneRules, parseSchedule } = await import(${JSON.stringify(module)});
      const { rfc3339InZone } = await import(${JSON.stringify(jobModule)});
      const out = [];
      const cases = [["Africa/Blantyre", 2026], ["Africa/Bujumbura", 2026], ["Europe/Helsinki", 2026],
        ["Europe/London", 2026], ["America/New_York", 2026], ["Australia/Lord_Howe", 2026], ["Asia/Kathmandu", 2026],
        ["Africa/Accra", 1971], ["Africa/Monrovia", 1971], ["Africa/Monrovia", 1972], ["Pacific/Apia", 2011]];
      for (const [zone, year] of cases) {
        const rules = new ZoneRules(zone);
        const end = Date.UTC(year + 1, 0, 1);
        for (let p = Date.UTC(year, 0, 1) - 1, t; (t = rules.firstTransitionIn(p, end)); p = t.at) out.push([zone, t.at, t.before, t.after]);
        for (let h = 0; h < 24 * 366; h += 7) out.push(rules.offsetAt(Date.UTC(year, 0, 1) + h * 3600000));
      }
      for (const zone of ["Africa/Blantyre", "Europe/Berlin", "America/New_York"]) {
        const r = parseSchedule("30 2 * * *", zone);
        let t = new Date("2026-03-05T00:00:00Z");
        for (let i = 0; i < 30; i++) out.push((t = r.schedule.next(t)).toISOString());
      }
      // The scheduled-timestamp annotation's text, through the process's own DST gaps (New York, Berlin).
      for (const zone of ["UTC", "Europe/London", "America/New_York", "Asia/Kathmandu"]) {
        for (let t = Date.UTC(2026, 2, 7); t < Date.UTC(2026, 3, 1); t += 30 * 60000) out.push(rfc3339InZone(new Date(t), zone));
      }
      process.stdout.write(JSON.stringify(out));
    `;
    const run = (tz: string) => {
      const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
        env: { ...process.env, TZ: tz },
        encoding: "utf8",
      });
      assert.equal(r.status, 0, `TZ=${tz}: ${r.stderr}`);
      return r.stdout;
    };
    const utc = run("UTC");
    assert.ok(utc.includes('"Africa/Monrovia",63593070000,-2670000,0'), "the reference run has Monrovia's 1972 change");
    assert.ok(!utc.includes('"Africa/Blantyre"'), "the reference run has no transition in Blantyre in 2026");
    for (const tz of ["America/New_York", "Europe/Berlin", "Africa/Monrovia", "Pacific/Apia"]) {
      assert.equal(run(tz), utc, `TZ=${tz}`);
    }
  });
});
