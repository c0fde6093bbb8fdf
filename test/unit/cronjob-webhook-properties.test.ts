// A property test of the CronJob validating webhook: it never throws, and whatever it admits the controller's parser
// and scheduler can schedule.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { parseHashedSchedule, scheduleWindow } from "../../api/v1/schedule/index.ts";
import type { AdmissionResult } from "../../runtime/webhook/index.ts";
import { mutateCronJob, validateCronJob, validateCronJobRequest } from "../../webhooks/cronjob_webhook.ts";
import { minimalCronJob, variant } from "../fixtures.ts";
import { request, withSpec } from "../admission.ts";

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

const atom: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 62 }).map(String) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 1_000_000 }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom(...MONTHS, ...DAYS, "JAN", "Mon", "+5", "07", "") },
  { weight: 3, arbitrary: fc.constantFrom("*", "?") },
  {
    weight: 1,
    arbitrary: fc.constantFrom("L", "5L", "LW", "15W", "H", "H(0-29)", "H/15", "H(0-29)/7", "h", "1#3", "mon#2", "-1"),
  },
);
const item: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: atom },
  { weight: 2, arbitrary: fc.tuple(atom, atom).map(([a, b]) => `${a}-${b}`) },
  { weight: 2, arbitrary: fc.tuple(atom, fc.integer({ min: 0, max: 70 })).map(([a, n]) => `${a}/${n}`) },
  {
    weight: 1,
    arbitrary: fc.tuple(atom, atom, fc.integer({ min: 0, max: 30 })).map(([a, b, n]) => `${a}-${b}/${n}`),
  },
);
const field: fc.Arbitrary<string> = fc.array(item, { minLength: 1, maxLength: 3 }).map((xs) => xs.join(","));
const separator = fc.constantFrom(" ", " ", " ", "  ", "\t", " \u00a0");
const cronText: fc.Arbitrary<string> = fc
  .tuple(fc.array(field, { minLength: 3, maxLength: 7 }), fc.array(separator, { minLength: 7, maxLength: 7 }))
  .map(([fields, seps]) => fields.map((f, i) => (i === 0 ? f : `${seps[i] ?? " "}${f}`)).join(""));
// Plausible schedules: five fields whose values are mostly in range, so many are admitted.
const plausibleCron: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom("*", "0", "*/15", "5,35", "59", "0-30/7", "H", "H/15"),
    fc.constantFrom("*", "2", "0-23/3", "1,13", "23", "*/5", "9-17", "H(9-17)"),
    fc.constantFrom("*", "?", "1", "29", "30", "31", "15-31/2", "*/10", "1,31"),
    fc.constantFrom("*", "2", "feb", "2,4", "dec", "1-12/6", "4,6,9,11", "*/2"),
    fc.constantFrom("*", "?", "0", "mon-fri", "sat,sun", "*/2", "6"),
  )
  .map((f) => f.join(" "));
const duration: fc.Arbitrary<string> = fc
  .array(
    fc.tuple(
      fc.oneof(
        fc.integer({ min: 0, max: 200 }).map(String),
        fc.constantFrom("0.5", ".5", "1.", "1.25", "90", "100000", "9223372036854775807"),
      ),
      fc.constantFrom("h", "m", "s", "ms", "us", "µs", "ns", "", "d", "H"),
    ),
    { minLength: 1, maxLength: 3 },
  )
  .chain((parts) => fc.constantFrom("", "-", "+").map((sign) => sign + parts.map(([n, u]) => `${n}${u}`).join("")));
const descriptor: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "@yearly",
    "@annually",
    "@monthly",
    "@weekly",
    "@daily",
    "@midnight",
    "@hourly",
    "@reboot",
    "@Hourly",
    "@every",
    "@",
  ),
  duration.map((d) => `@every ${d}`),
  duration.map((d) => `@every  ${d}`),
);
const schedule: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: cronText },
  { weight: 6, arbitrary: plausibleCron },
  { weight: 2, arbitrary: descriptor },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom("TZ=UTC ", "CRON_TZ=Europe/Berlin ", " TZ=", "tz=UTC "), plausibleCron)
      .map(([p, s]) => p + s),
  },
  { weight: 1, arbitrary: fc.string() },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 30 }) },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.constantFrom("*", "/", "-", ",", "?", " ", "1", "5", "L", "#", "@", "mon", "jan", "\t"), {
        maxLength: 20,
      })
      .map((xs) => xs.join("")),
  },
);

const timeZones = [
  undefined,
  "UTC",
  "Etc/UTC",
  "Europe/Berlin",
  "America/New_York",
  "Australia/Lord_Howe",
  "Asia/Kathmandu",
  "Pacific/Apia",
  "Pacific/Chatham",
  "America/St_Johns",
  "Africa/Casablanca",
  "Antarctica/Troll",
  "Etc/GMT-14",
  "Mars/Base",
  "",
  "Local",
  "utc",
  "+01:00",
  "Europe/berlin",
  "America/New York",
  5,
  null,
] as const;
// Valid zones (and none) more often than invalid ones.
const timeZoneArb = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...timeZones.slice(0, 13)) },
  { weight: 1, arbitrary: fc.constantFrom(...timeZones) },
);

// Mostly valid values (so a good share of objects is admitted and reaches the scheduler), some invalid.
const mostly = <T, U>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<U>): fc.Arbitrary<T | U> =>
  fc.oneof({ weight: 12, arbitrary: valid }, { weight: 1, arbitrary: invalid });

const specArb = fc.record({
  schedule: fc.oneof(
    { weight: 20, arbitrary: schedule },
    { weight: 1, arbitrary: fc.constantFrom(undefined, 7, null) },
  ),
  timeZone: timeZoneArb,
  startingDeadlineSeconds: mostly(
    fc.oneof(fc.constant(undefined), fc.integer({ min: 0, max: 100_000 })),
    fc.oneof(
      fc.integer({ min: -100, max: -1 }),
      fc.double({ min: -10, max: 100, noNaN: true }),
      fc.constantFrom("5", null),
    ),
  ),
  restartPolicy: mostly(
    fc.constantFrom("OnFailure", "Never"),
    fc.constantFrom(undefined, "Always", "", "onfailure", 1),
  ),
  concurrencyPolicy: mostly(fc.constantFrom(undefined, "Allow", "Forbid", "Replace"), fc.constantFrom("Never", "")),
  suspend: mostly(fc.constantFrom(undefined, true, false), fc.constantFrom("true", 0)),
  successfulJobsHistoryLimit: mostly(
    fc.oneof(fc.constant(undefined), fc.integer({ min: 0, max: 10 })),
    fc.oneof(fc.integer({ min: -5, max: -1 }), fc.double({ min: -1, max: 5, noNaN: true })),
  ),
  failedJobsHistoryLimit: mostly(
    fc.oneof(fc.constant(undefined), fc.integer({ min: 0, max: 10 })),
    fc.constantFrom(-1, 2 ** 31, 0.5),
  ),
  name: mostly(
    fc.constant("fuzz"),
    fc.integer({ min: 0, max: 80 }).map((n) => "n".repeat(n)),
  ),
});

type SpecInput = typeof specArb extends fc.Arbitrary<infer T> ? T : never;

function build(s: SpecInput): Record<string, any> {
  return variant(minimalCronJob(s.name), (o) => {
    const spec = o.spec as Record<string, any>;
    const set = (k: string, v: unknown) => {
      if (v === undefined) delete spec[k];
      else spec[k] = v;
    };
    set("schedule", s.schedule);
    set("timeZone", s.timeZone);
    set("startingDeadlineSeconds", s.startingDeadlineSeconds);
    set("concurrencyPolicy", s.concurrencyPolicy);
    set("suspend", s.suspend);
    set("successfulJobsHistoryLimit", s.successfulJobsHistoryLimit);
    set("failedJobsHistoryLimit", s.failedJobsHistoryLimit);
    const pod = spec.jobTemplate.spec.template.spec as Record<string, unknown>;
    if (s.restartPolicy === undefined) delete pod.restartPolicy;
    else pod.restartPolicy = s.restartPolicy;
  });
}

// 1971 to 2098: instants the controller may plausibly see, leap years and the non-leap 2100 boundary aside.
const instant = fc.integer({ min: Date.UTC(1971, 0, 1), max: Date.UTC(2098, 0, 1) });

describe("CronJob validating webhook (properties)", () => {
  it("never throws, and whatever it admits the reconciler can schedule", () => {
    let admitted = 0;
    fc.assert(
      fc.property(
        specArb,
        fc.array(fc.tuple(instant, fc.nat(400 * 86_400), fc.nat(86_400)), { minLength: 1, maxLength: 3 }),
        (s, nows) => {
          const obj = build(s);
          const { errors, warnings } = validateCronJob(obj);
          assert.ok(Array.isArray(warnings));
          for (const e of errors) assert.ok(e.field.length > 0 && (e.detail ?? "").length > 0, JSON.stringify(e));
          for (const op of ["CREATE", "UPDATE"] as const) {
            const r = validateCronJobRequest(request(op, obj, op === "UPDATE" ? obj : undefined)) as AdmissionResult;
            assert.equal(r.allowed, errors.length === 0);
          }
          assert.equal((mutateCronJob(request("CREATE", obj)) as AdmissionResult).allowed, true);
          if (errors.length > 0) return;
          admitted++;

          assert.equal(typeof s.schedule, "string");
          const tz = typeof s.timeZone === "string" ? s.timeZone : undefined;
          // The controller resolves H with the CronJob's namespace/name before parsing.
          const parsed = parseHashedSchedule(s.schedule as string, { namespace: "default", name: s.name }, tz);
          assert.ok(parsed.ok, `admitted ${JSON.stringify(s.schedule)} in ${tz} but the controller cannot parse it`);
          const sched = parsed.schedule;
          if (parsed.hashed) {
            assert.ok(warnings.some((w) => w.includes(` runs as ${JSON.stringify(parsed.resolved)} for this CronJob`)));
          }
          if (sched.isEvery && (sched.everySeconds ?? 0) < 60) {
            assert.ok(
              warnings.some((w) => w.startsWith("spec.schedule: ")),
              "sub-minute @every warns",
            );
          }
          for (const [nowMs, sinceCreation, deadline] of nows) {
            const now = new Date(nowMs);
            const anchor = new Date(nowMs - sinceCreation * 1000);
            const earliest = new Date(Math.max(anchor.getTime(), nowMs - deadline * 1000));
            const w = scheduleWindow({ schedule: sched, earliest, now, anchor });
            assert.ok(
              w.next instanceof Date && w.next.getTime() > nowMs,
              `${JSON.stringify(s.schedule)} in ${tz ?? "UTC"}: next ${String(w.next)} is not after ${now.toISOString()}`,
            );
            if (w.missed) assert.ok(w.missed.getTime() <= nowMs && w.missed.getTime() > earliest.getTime());
          }
        },
      ),
      { numRuns: 600 },
    );
    assert.ok(admitted > 50, `only ${admitted} generated objects were admitted; the generator needs work`);
  });

  it("admits exactly what the controller's parser admits, for otherwise valid objects", () => {
    fc.assert(
      fc.property(schedule, fc.constantFrom(...timeZones.filter((t) => typeof t === "string")), (sched, tz) => {
        const obj = withSpec((s) => {
          s.schedule = sched;
          s.timeZone = tz;
        });
        const { errors } = validateCronJob(obj);
        const parsed =
          sched === "" ? { ok: false } : parseHashedSchedule(sched, { namespace: "default", name: "cj" }, tz);
        assert.equal(errors.length === 0, parsed.ok, `${JSON.stringify(sched)} in ${JSON.stringify(tz)}`);
        for (const e of errors) {
          assert.ok(["spec.schedule", "spec.timeZone"].includes(e.field), e.field);
          if (e.field === "spec.schedule" && e.type !== "FieldValueRequired") assert.equal(e.value, sched);
          if (e.field === "spec.timeZone") assert.equal(e.value, tz);
        }
      }),
      { numRuns: 500 },
    );
  });
});
