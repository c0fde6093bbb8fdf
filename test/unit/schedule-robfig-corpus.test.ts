// Parity with the built-in CronJob's schedule math, held by recorded facts: the answers of robfig/cron v3 (Kubernetes
// 1.33.3's vendored copy, parsed and asked as its CronJob controller does) for random schedules, zones and instants.
// A differential run against robfig drew them and kept the cases where robfig's answer is not one of the documented
// differences (DST days, schedules that never fire, @every below a second: docs/using-cronjobs.md's behaviour table);
// on those it agreed with this module on every one of 68,000 cases but an empty day field, fixed since.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { parseSchedule } from "../../api/v1/schedule/index.ts";

interface Corpus {
  accepted: { expr: string; tz?: string; from: string; next: string[] }[];
  refused: { expr: string; tz?: string }[];
}

const corpus = JSON.parse(readFileSync(new URL("../fixtures/robfig-cron-v3.json", import.meta.url), "utf8")) as Corpus;
const where = (c: { expr: string; tz?: string }) => `${JSON.stringify(c.expr)} in ${c.tz ?? "no zone"}`;

describe("schedules against robfig/cron v3's recorded answers", () => {
  it(`gives robfig's next slots for ${corpus.accepted.length} schedules it accepts`, () => {
    assert.ok(corpus.accepted.length >= 300);
    for (const c of corpus.accepted) {
      const parsed = parseSchedule(c.expr, c.tz);
      assert.ok(parsed.ok, `${where(c)} refused: ${parsed.ok ? "" : parsed.error.message}`);
      const got: string[] = [];
      for (let t = new Date(c.from); got.length < c.next.length;) {
        t = parsed.schedule.next(t);
        got.push(t.toISOString().replace(".000Z", "Z"));
      }
      assert.deepEqual(got, c.next, `${where(c)} after ${c.from}`);
    }
  });

  it(`refuses the ${corpus.refused.length} schedules robfig or Kubernetes' validation refuses`, () => {
    assert.ok(corpus.refused.length >= 100);
    for (const c of corpus.refused) assert.equal(parseSchedule(c.expr, c.tz).ok, false, `${where(c)} accepted`);
  });
});
