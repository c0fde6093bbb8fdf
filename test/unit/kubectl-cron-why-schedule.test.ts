// `kubectl cron why` on the CronJob's schedule and what the operator decided about its slots: healthy, suspended,
// stopped after failures, an invalid schedule or zone, a --slot that is no slot or comes before its creation (DST, H,
// the wall clock), the limits that end or start its schedule and its jitter; a slot missed past
// startingDeadlineSeconds (a leader change, a restart, a deadline shorter than the lag), held behind a running Job
// (Forbid), skipped by the missed-run policy, a run-now request waiting, a Job's create refused (a quota, a webhook, a
// name taken, any other reason). The scene: test/why-scene.ts.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  API_VERSION,
  GROUP,
  JITTER_OFFSET_ANNOTATION,
  jitterOffsetSeconds,
  offsetText,
  RUN_NOW_ANNOTATION,
  scheduleEndText,
} from "../../api/v1/index.ts";
import { parseSlot } from "../../cmd/kubectl-cron/answer/why.ts";
import { type CauseId, causeOf, PLACEHOLDERS } from "../../cmd/kubectl-cron/answer/causes.ts";
import type { KubeObject } from "../../runtime/kinds.ts";
import { LEASE, OPERATOR_NS } from "../why-facts.ts";
import {
  ask,
  at,
  cluster,
  cronJob,
  diagnose,
  entry,
  escapeRe,
  expectCause,
  facts,
  foreignJob,
  healthyOperatorFacts,
  HUNG_REQUEST,
  hungJob,
  JOB,
  job,
  NAME,
  note,
  NOW,
  NS,
  operatorLease,
  pod,
  PREV_JOB,
  PREV_SLOT,
  producesItsCauses,
  run,
  setUpScene,
  SLOT,
  SLOT_TEXT,
  why,
  whyIn,
  ZONE,
} from "../why-scene.ts";
setUpScene();

describe("kubectl cron why NAME: through main against the fake API server", () => {
  it("healthy: it ran, Complete in 12 s, and the next slot is named (exit 0)", async () => {
    const r = await whyIn([
      cronJob({
        status: {
          recentRuns: [
            entry(SLOT, "Created", "Scheduled", {
              job: JOB,
              decidedAt: at(SLOT, 2),
              outcome: { result: "Complete", finishedAt: at(SLOT, 14) },
            }),
          ],
        },
      }),
      job(JOB, SLOT, { state: "complete", start: at(SLOT, 2), end: at(SLOT, 14) }),
    ]);
    assert.equal(r.code, 0, r.text);
    assert.equal(r.d.status, "healthy");
    assert.equal(r.d.verdict, `ran at ${SLOT_TEXT}: Job ${JOB} (created 2 s after the slot), Complete in 12s`);
    assert.deepEqual(r.d.next, {
      utc: "2026-11-26T02:00:00Z",
      local: "2026-11-26T03:00:00+01:00",
      text: "2026-11-26 03:00 Europe/Berlin (2026-11-26T02:00:00Z)",
    });
    assert.match(r.text, /^Next: 2026-11-26 03:00 Europe\/Berlin \(2026-11-26T02:00:00Z\)$/m);
    assert.deepEqual(r.d.also, []);
    assert.deepEqual(r.d.unreadable, []);
  });
});

describe("kubectl cron why NAME: the CronJob's own state", () => {
  it("suspended: names the manager and the time that set spec.suspend (managedFields)", async () => {
    const r = await whyIn([
      cronJob({
        spec: { suspend: true },
        status: { lastScheduleTime: "2026-11-20T02:00:00Z" },
        meta: {
          managedFields: [
            {
              manager: "kubectl-client-side-apply",
              operation: "Update",
              apiVersion: API_VERSION,
              time: "2026-11-01T00:00:00Z",
              fieldsType: "FieldsV1",
              fieldsV1: { "f:spec": { "f:schedule": {}, "f:timeZone": {} } },
            },
            {
              manager: "kubectl-cron",
              operation: "Update",
              apiVersion: API_VERSION,
              time: "2026-11-20T08:15:00Z",
              fieldsType: "FieldsV1",
              fieldsV1: { "f:spec": { "f:suspend": {} } },
            },
            {
              manager: "helm",
              operation: "Update",
              apiVersion: API_VERSION,
              time: "2026-11-22T10:00:00Z",
              fieldsType: "FieldsV1",
              fieldsV1: { "f:metadata": { "f:labels": { "f:team": {} } } },
            },
          ],
        },
      }),
    ]);
    expectCause(r, "suspended", {
      verdict: [`did not run at ${SLOT_TEXT}`, "suspended", "kubectl-cron", "2026-11-20T08:15:00Z"],
      evidence: ["spec.suspend: true", "kubectl-cron (Update) at 2026-11-20T08:15:00Z"],
      fix: [`kubectl cron resume ${NAME} -n ${NS}`],
    });
    assert.match(r.d.next?.blocked ?? "", /suspended/);
  });

  it("stopped after failures: when, after how many, and the failed Jobs' reasons", async () => {
    const failed = (slot: string, job: string) =>
      entry(slot, "Created", "Scheduled", {
        job,
        outcome: {
          result: "Failed",
          reason: "BackoffLimitExceeded",
          message: "Job has reached the specified backoff limit",
          finishedAt: at(slot, 300),
        },
      });
    const r = await whyIn([
      cronJob({
        spec: { stopAfterConsecutiveFailures: 3 },
        status: {
          lastScheduleTime: PREV_SLOT,
          stopped: { time: at(PREV_SLOT, 301), failures: 3, generation: 1 },
          recentRuns: [
            entry(SLOT, "Stopped", "StoppedAfterFailures", {
              message: "scheduling stopped after 3 failed runs in a row",
            }),
            failed(PREV_SLOT, PREV_JOB),
            failed("2026-11-23T02:00:00Z", "backup-1795399200"),
            failed("2026-11-22T02:00:00Z", "backup-1795312800"),
          ],
        },
      }),
    ]);
    expectCause(r, "stopped-after-failures", {
      verdict: [
        `did not run at ${SLOT_TEXT}`,
        `stopped at ${at(PREV_SLOT, 301)}`,
        "after 3 failed runs in a row",
        "stopAfterConsecutiveFailures 3",
      ],
      evidence: ["status.stopped", `Job ${PREV_JOB} failed: BackoffLimitExceeded`, "Job backup-1795312800 failed"],
      fix: [`kubectl cron resume ${NAME} -n ${NS}`],
    });
  });

  it("invalid schedule stored past admission: Available=False InvalidSchedule, with the field's message", async () => {
    const message = 'spec.schedule: Invalid value: "0 3 * * 8": day-of-week: 8 is out of range 0-7';
    const r = await whyIn([
      cronJob({
        spec: { schedule: "0 3 * * 8" },
        status: {
          conditions: [
            {
              type: "Available",
              status: "False",
              reason: "InvalidSchedule",
              message,
              lastTransitionTime: "2026-11-01T00:00:00Z",
            },
          ],
        },
      }),
    ]);
    expectCause(r, "invalid-schedule", {
      verdict: ["never runs", message],
      evidence: ['spec.schedule: "0 3 * * 8"', `condition Available=False InvalidSchedule: ${message}`],
      fix: ["spec.schedule"],
    });
  });

  it("unknown time zone stored past admission: Available=False UnknownTimeZone", async () => {
    const message = 'spec.timeZone: Invalid value: "Europe/Berlim": unknown time zone';
    const server = await cluster([
      cronJob({
        spec: { timeZone: "Europe/Berlim" },
        status: {
          conditions: [
            {
              type: "Available",
              status: "False",
              reason: "UnknownTimeZone",
              message,
              lastTransitionTime: "2026-11-01T00:00:00Z",
            },
          ],
        },
      }),
    ]);
    const r = await why(server);
    expectCause(r, "invalid-schedule", {
      verdict: ["never runs", message],
      evidence: ['spec.timeZone: "Europe/Berlim"', `condition Available=False UnknownTimeZone: ${message}`],
      fix: ["spec.timeZone"],
    });
  });

  it("--slot at a time it does not fire: the nearest slots in its zone and in UTC", async () => {
    const server = await cluster([cronJob()]);
    const r = await why(server, "--slot", "2026-11-25T04:00");
    note(r.d);
    expectCause(r, "not-a-slot", {
      verdict: [
        "2026-11-25 04:00 Europe/Berlin (2026-11-25T03:00:00Z) is not a time this CronJob runs",
        `the nearest slots are ${SLOT_TEXT} and 2026-11-26 03:00 Europe/Berlin (2026-11-26T02:00:00Z)`,
      ],
      evidence: ["schedule: 0 3 * * * in Europe/Berlin", "slot 2026-11-25T03:00:00+01:00 (2026-11-25T02:00:00Z)"],
      fix: [`kubectl cron next ${NAME} -n ${NS}`],
    });
  });

  it("--slot given as a wall-clock time is read in the CronJob's zone (03:00 in Berlin is 02:00Z)", async () => {
    const server = await cluster([
      cronJob({ status: { recentRuns: [entry(SLOT, "Skipped", "MissedRunPolicySkip")] } }),
    ]);
    for (const slot of ["2026-11-25T03:00", "2026-11-25 03:00", "2026-11-25T02:00:00Z", "2026-11-25T03:00:00+01:00"]) {
      const r = await why(server, `--slot=${slot}`);
      assert.equal(r.d.slot?.utc, SLOT, slot);
      assert.equal(r.d.slot?.local, "2026-11-25T03:00:00+01:00", slot);
      assert.equal(r.d.cause, "policy-skipped", slot);
      // The entry's reason says which policy decided (the spec has changed since: unset is RunLatest, which skips nothing).
      assert.match(r.d.verdict, /missedRunPolicy Skip runs only the announced time/, slot);
      assert.ok(r.d.evidence.includes("spec.missedRunPolicy is RunLatest now (changed since the decision)"), slot);
    }
    const bad = await run(server, ["why", NAME, "--slot", "tomorrow"]);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--slot: want an RFC 3339 time .* got "tomorrow"/);
  });

  it("--slot before the CronJob's creation", async () => {
    const server = await cluster([cronJob()]);
    const r = await why(server, "--slot", "2026-10-30T03:00");
    note(r.d);
    expectCause(r, "before-creation", {
      verdict: [
        "did not run at 2026-10-30 03:00 Europe/Berlin (2026-10-30T02:00:00Z)",
        "created later, at 2026-11-01T00:00:00Z",
      ],
      evidence: ["metadata.creationTimestamp: 2026-11-01T00:00:00Z"],
      fix: [`kubectl cron backfill ${NAME} -n ${NS} --from=2026-10-30T02:00:00Z --to=2026-10-30T02:00:00Z`],
    });
  });
});

describe("diagnose(): the slot asked about (DST, H, the wall clock)", () => {
  const berlinDST = (schedule: string) =>
    cronJob({
      spec: { schedule },
      meta: { creationTimestamp: "2026-01-01T00:00:00Z" },
      status: { lastScheduleTime: "2026-03-30T00:30:00Z" },
    });
  const march30 = new Date("2026-03-30T12:00:00Z");

  it("a CronJob created at a slot's very second has had no slot yet: its runs are the slots after its creation", () => {
    // The controller's window starts after creationTimestamp, so 03:00 was never this CronJob's to run.
    const d = diagnose(facts(cronJob({ meta: { creationTimestamp: SLOT } })));
    assert.equal(d.slot, undefined);
    assert.equal(d.exitCode, 0);
    assert.match(d.verdict, /has had no slot since its creation; the first is 2026-11-26 03:00 Europe\/Berlin/);
    // Asked about that second, it is before-creation, in words that fit the instant.
    const asked = ask(facts(cronJob({ meta: { creationTimestamp: SLOT } })), new Date(SLOT));
    expectCause(asked, "before-creation", {
      verdict: [
        `did not run at ${SLOT_TEXT}`,
        "the CronJob was created at that very second, and it runs the slots after its creation",
      ],
      evidence: [`metadata.creationTimestamp: ${SLOT}`],
      fix: [`kubectl cron backfill ${NAME} -n ${NS} --from=${SLOT} --to=${SLOT}`],
    });
  });

  it("@every, asked about no slot: the newest slot since the last run, not the last run itself", () => {
    // Every hour from status.lastScheduleTime 09:00: 10:00 and 11:00 are due by 11:12; 11:00 is the latest.
    const every = cronJob({ spec: { schedule: "@every 1h" }, status: { lastScheduleTime: "2026-11-25T09:00:00Z" } });
    const d = diagnose(facts(every));
    assert.equal(d.slot?.utc, "2026-11-25T11:00:00Z");
  });

  it("a DST spring-forward day: 02:30 does not exist in Berlin on 2026-03-29; the slot runs at 03:30 CEST", () => {
    const f = facts(berlinDST("30 2 * * *"), { now: march30 });
    const r = ask(f, new Date("2026-03-29T02:30:00Z"));
    expectCause(r, "not-a-slot", {
      verdict: [
        "2026-03-29 04:30 Europe/Berlin (2026-03-29T02:30:00Z) is not a time this CronJob runs",
        "the nearest slots are 2026-03-29 03:30 Europe/Berlin (2026-03-29T01:30:00Z) and 2026-03-30 02:30 Europe/Berlin (2026-03-30T00:30:00Z)",
      ],
      evidence: [
        "slot 2026-03-29T03:30:00+02:00 (2026-03-29T01:30:00Z): shifted: the local time it names does not exist on 2026-03-29 (clocks go forward), so it runs at 03:30",
        "slot 2026-03-30T02:30:00+02:00 (2026-03-30T00:30:00Z)",
      ],
      fix: ["spec.timeZone"],
    });
    // Asked as the wall-clock time the schedule names, it is that day's (shifted) slot.
    const wall = parseSlot("2026-03-29T02:30", ZONE);
    assert.equal(wall?.toISOString(), "2026-03-29T01:30:00.000Z");
    const slot = diagnose(f, { slot: wall! });
    assert.equal(slot.slot?.utc, "2026-03-29T01:30:00Z");
    assert.match(slot.slot?.note ?? "", /does not exist on 2026-03-29 \(clocks go forward\), so it runs at 03:30/);
    assert.notEqual(slot.cause, "not-a-slot");
  });

  it("a DST fall-back day: a wall-clock time in the repeated hour is its first occurrence, as the schedule runs it", () => {
    const cj = cronJob({
      spec: { schedule: "30 2 * * *" },
      meta: { creationTimestamp: "2026-01-01T00:00:00Z" },
      status: {
        lastScheduleTime: "2026-10-25T00:30:00Z",
        recentRuns: [entry("2026-10-25T00:30:00Z", "Skipped", "MissedRunPolicySkip")],
      },
    });
    const f = facts(cj, { now: new Date("2026-10-25T12:00:00Z") });
    const wall = parseSlot("2026-10-25T02:30", ZONE);
    assert.equal(wall?.toISOString(), "2026-10-25T00:30:00.000Z", "02:30 CEST, the first 02:30");
    const d = diagnose(f, { slot: wall! });
    assert.equal(d.cause, "policy-skipped", d.verdict);
    assert.match(d.slot?.note ?? "", /02:30 happens twice today \(clocks go back\): it runs once, at the first/);
  });

  it("an H schedule: the resolved minute is shown", () => {
    const cj = cronJob({ spec: { schedule: "H 3 * * *" } });
    const r = ask(facts(cj), new Date("2026-11-25T02:00:00Z"));
    const resolved = /H 3 \* \* \* → (\d+) 3 \* \* \* \(H resolved\) in Europe\/Berlin/.exec(r.d.evidence[0] ?? "");
    assert.ok(resolved, JSON.stringify(r.d, null, 2));
    const minute = resolved[1]!.padStart(2, "0");
    expectCause(r, "not-a-slot", {
      verdict: [
        `2026-11-25 03:00 Europe/Berlin (2026-11-25T02:00:00Z) is not a time this CronJob runs`,
        `2026-11-25 03:${minute} Europe/Berlin (2026-11-25T02:${minute}:00Z)`,
      ],
      evidence: [`slot 2026-11-25T03:${minute}:00+01:00 (2026-11-25T02:${minute}:00Z)`],
      fix: ["kubectl cron next"],
    });
  });

  it("--slot: RFC 3339 as given; a wall-clock time in the CronJob's zone (summer and winter offsets)", () => {
    assert.equal(parseSlot("2026-11-25T02:00:00Z", ZONE)?.toISOString(), "2026-11-25T02:00:00.000Z");
    assert.equal(parseSlot("2026-11-25T03:00:00+01:00", ZONE)?.toISOString(), "2026-11-25T02:00:00.000Z");
    assert.equal(parseSlot("2026-11-25T03:00", ZONE)?.toISOString(), "2026-11-25T02:00:00.000Z");
    assert.equal(parseSlot("2026-07-01 03:00", ZONE)?.toISOString(), "2026-07-01T01:00:00.000Z");
    assert.equal(parseSlot("2026-07-01T03:00", "UTC")?.toISOString(), "2026-07-01T03:00:00.000Z");
    for (const bad of ["tomorrow", "2026-11-25", "03:00", "2026-13-45T03:00"])
      assert.equal(parseSlot(bad, ZONE), undefined, bad);
  });

  it("a --slot still to come is not late: it has not come yet, or will not run while suspended", () => {
    const tomorrow = new Date("2026-11-26T02:00:00Z");
    const d = diagnose(facts(cronJob()), { slot: tomorrow });
    assert.equal(d.status, "healthy");
    assert.equal(d.verdict, "2026-11-26 03:00 Europe/Berlin (2026-11-26T02:00:00Z) has not come yet (in 14h48m)");
    assert.equal(d.exitCode, 0);
    const suspended = ask(facts(cronJob({ spec: { suspend: true } })), tomorrow);
    expectCause(suspended, "suspended", {
      verdict: ["will not run at 2026-11-26 03:00 Europe/Berlin (2026-11-26T02:00:00Z): the CronJob is suspended"],
      evidence: ["spec.suspend: true"],
      fix: [`kubectl cron resume ${NAME} -n ${NS}`],
    });
  });

  it("the default slot: one just due and not yet decided yields to the one before it", () => {
    const cj = cronJob({
      status: {
        lastScheduleTime: PREV_SLOT,
        recentRuns: [
          entry(PREV_SLOT, "Created", "Scheduled", {
            job: PREV_JOB,
            outcome: { result: "Complete", finishedAt: at(PREV_SLOT, 14) },
          }),
        ],
      },
    });
    const d = diagnose(facts(cj, { now: new Date(at(SLOT, 20)) }));
    assert.equal(d.slot?.utc, PREV_SLOT);
    assert.equal(d.exitCode, 0, d.verdict);
  });
});

describe("diagnose(): limits and jitter (issue 71)", () => {
  const BACKOFF = { reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit" };
  const complete = () => job(JOB, SLOT, { state: "complete", start: at(SLOT, 3), end: at(SLOT, 60) });

  it("spec.maxRuns made: healthy, 'ended: 5 of 5 runs made', with the count, the limit and the last run", () => {
    const cj = cronJob({
      spec: { maxRuns: 5 },
      status: {
        scheduledRuns: 5,
        conditions: [{ type: "Available", status: "False", reason: "MaxRunsReached", message: "ended" }],
      },
    });
    const r = ask(facts(cj, { jobs: [complete()] }));
    assert.equal(r.code, 0, JSON.stringify(r.d, null, 2));
    assert.equal(r.d.status, "healthy");
    assert.equal(
      r.d.verdict,
      "ended: 5 of 5 runs made (spec.maxRuns); run-now and backfill requests still run",
      JSON.stringify(r.d),
    );
    assert.equal(r.d.verdict, scheduleEndText({ reason: "MaxRunsReached", made: 5, of: 5 }), "limits.ts's words");
    for (const e of ["status.scheduledRuns: 5", "spec.maxRuns: 5", "condition Available=False MaxRunsReached"])
      assert.ok(r.d.evidence.includes(e), e);
    assert.ok(
      r.d.evidence.some((e) => e.startsWith(`last slot: ran at ${SLOT_TEXT}: Job ${JOB}`)),
      r.d.evidence.join("\n"),
    );
    assert.equal(r.d.next, undefined, "no next slot once ended");
  });

  it("spec.endTime passed: healthy, 'ended: spec.endTime … has passed', with the field, and no next slot", () => {
    const cj = cronJob({ spec: { endTime: "2026-11-25T05:00:00Z" } });
    const r = ask(facts(cj, { jobs: [complete()] }));
    assert.equal(r.code, 0, JSON.stringify(r.d, null, 2));
    assert.equal(r.d.verdict, scheduleEndText({ reason: "EndTimeReached", endTime: new Date("2026-11-25T05:00:00Z") }));
    assert.match(r.d.verdict, /^ended: spec\.endTime 2026-11-25T05:00:00Z has passed/);
    assert.ok(r.d.evidence.includes("spec.endTime: 2026-11-25T05:00:00Z"), r.d.evidence.join("\n"));
    assert.equal(r.d.next, undefined);
    // The last run failed: that stays the verdict, the end is said beside it.
    const failed = job(JOB, SLOT, { state: "failed", start: at(SLOT, 3), end: at(SLOT, 60), failure: BACKOFF });
    const f = ask(facts(cj, { jobs: [failed] }));
    assert.equal(f.d.cause, "job-failed");
    assert.ok(
      f.d.evidence.some((e) => e.startsWith("ended: spec.endTime 2026-11-25T05:00:00Z")),
      f.d.evidence.join("\n"),
    );
  });

  it("before spec.startTime: healthy, 'not started: starts …' and the first slot in the window", () => {
    const cj = cronJob({ spec: { startTime: "2026-12-01T00:00:00+01:00" }, status: { lastScheduleTime: undefined } });
    const r = ask(facts(cj));
    assert.equal(r.code, 0);
    assert.equal(
      r.d.verdict,
      "not started: starts 2026-11-30T23:00:00Z; the first slot is 2026-12-01 03:00 Europe/Berlin (2026-12-01T02:00:00Z)",
    );
    assert.ok(r.d.evidence.includes("spec.startTime: 2026-12-01T00:00:00+01:00"));
    assert.equal(r.d.next?.utc, "2026-12-01T02:00:00Z");
  });

  it("spec.jitter: a slot whose start has not come is due at its start (not missed); a run says its offset", () => {
    const offset = jitterOffsetSeconds({ namespace: NS, name: NAME }, new Date(SLOT), 600);
    assert.ok(offset > 2, `the slot's offset (${offset}s) lies after the moment asked`);
    const cj = cronJob({ spec: { jitter: "10m" }, status: { lastScheduleTime: PREV_SLOT } });
    const due = ask(facts(cj, { now: new Date(Date.parse(SLOT) + 2000) }));
    assert.equal(due.code, 0, JSON.stringify(due.d, null, 2));
    const start = new Date(Date.parse(SLOT) + offset * 1000).toISOString().replace(".000Z", "Z");
    assert.equal(due.d.verdict, `${SLOT_TEXT} is due at ${start} (jitter offset ${offsetText(offset)})`);
    assert.ok(
      due.d.evidence.some((e) => e.includes(`its run starts at ${start}`)),
      due.d.evidence.join("\n"),
    );
    // It ran: the verdict names the slot and the offset its Job says.
    const ran = job(JOB, SLOT, {
      state: "complete",
      start: at(SLOT, 40),
      end: at(SLOT, 90),
      created: at(SLOT, 38),
      annotations: { [JITTER_OFFSET_ANNOTATION]: "37s" },
    });
    const r = ask(facts(cj, { jobs: [ran] }));
    assert.equal(r.code, 0);
    assert.match(r.d.verdict, new RegExp(`^ran at ${escapeRe(SLOT_TEXT)} \\(jitter offset 37s\\): Job ${JOB}`));
    assert.ok(
      r.d.evidence.includes(
        `slot ${SLOT} + jitter offset 37s (Job ${JOB}'s annotation): its run starts at 2026-11-25T02:00:37Z`,
      ),
      r.d.evidence.join("\n"),
    );
  });
});

describe("kubectl cron why NAME: the operator's decisions (status.recentRuns)", () => {
  it("missed past startingDeadlineSeconds because the leader changed after the slot", async () => {
    const lease = operatorLease({
      acquireTime: "2026-11-25T02:07:20.000000Z",
      holderIdentity: "cronjob-operator-controller-manager-7d9f-fghij_77aa",
      leaseTransitions: 4,
    });
    const r = await whyIn(
      [
        cronJob({
          spec: { startingDeadlineSeconds: 60 },
          status: {
            lastScheduleTime: PREV_SLOT,
            lastMissedTime: SLOT,
            recentRuns: [
              entry(SLOT, "Missed", "StartingDeadlineExceeded", {
                decidedAt: "2026-11-25T02:07:31Z",
                message: "missed: reached 7m31s after the slot, past startingDeadlineSeconds 60",
              }),
              entry(PREV_SLOT, "Created", "Scheduled", {
                job: PREV_JOB,
                outcome: { result: "Complete", finishedAt: at(PREV_SLOT, 20) },
              }),
            ],
          },
        }),
      ],
      { lease },
    );
    expectCause(r, "deadline-missed", {
      verdict: [
        `did not run at ${SLOT_TEXT}`,
        "7m31s late",
        "startingDeadlineSeconds 60",
        "no replica led from before the slot until 2026-11-25T02:07:20Z, when cronjob-operator-controller-manager-7d9f-fghij_77aa took the Lease",
      ],
      evidence: [
        "Missed (StartingDeadlineExceeded)",
        `Lease ${OPERATOR_NS}/${LEASE}: cronjob-operator-controller-manager-7d9f-fghij_77aa acquired it at 2026-11-25T02:07:20Z, after the slot; 4 leader changes in all`,
        "The Lease shows only its newest acquisition",
      ],
      fix: ["startingDeadlineSeconds", `kubectl cron backfill ${NAME} -n ${NS} --from=${SLOT} --to=${SLOT}`],
    });
  });

  it("a slot missed, then backfilled: its own entry is the schedule's decision, not the backfill's (slotRank)", async () => {
    const backfilled = `backup-b${Date.parse(SLOT) / 1000}`;
    const server = await cluster([
      cronJob({
        spec: { startingDeadlineSeconds: 60 },
        status: {
          lastScheduleTime: PREV_SLOT,
          lastMissedTime: SLOT,
          // Newest first: the backfill's run of the slot, decided after the schedule missed it.
          recentRuns: [
            entry(SLOT, "Created", "Backfill", {
              trigger: "Backfill",
              request: "bf-1",
              job: backfilled,
              decidedAt: at(SLOT, 3600),
              outcome: { result: "Complete", finishedAt: at(SLOT, 3620) },
            }),
            entry(SLOT, "Missed", "StartingDeadlineExceeded", {
              decidedAt: "2026-11-25T02:07:31Z",
              message: "missed: reached 7m31s after the slot, past startingDeadlineSeconds 60",
            }),
          ],
        },
      }),
    ]);
    const r = await why(server, `--slot=${SLOT}`);
    note(r.d);
    assert.equal(r.d.slot?.utc, SLOT, r.text);
    assert.equal(r.d.request, undefined, `the slot's own decision, not the backfill request's: ${r.text}`);
    assert.match(r.d.evidence.join("\n"), /Missed \(StartingDeadlineExceeded\)/, r.text);
  });

  it("missed because startingDeadlineSeconds is shorter than the observed lag (40-50 s, deadline 30)", async () => {
    const created = (slot: string, lag: number) =>
      entry(slot, "Created", "Scheduled", {
        job: `backup-${Date.parse(slot) / 1000}`,
        decidedAt: at(slot, lag),
        outcome: { result: "Complete", finishedAt: at(slot, lag + 12) },
      });
    const r = await whyIn([
      cronJob({
        spec: { startingDeadlineSeconds: 30 },
        status: {
          lastScheduleTime: PREV_SLOT,
          recentRuns: [
            entry(SLOT, "Missed", "StartingDeadlineExceeded", { decidedAt: at(SLOT, 47) }),
            created(PREV_SLOT, 41),
            created("2026-11-23T02:00:00Z", 50),
            created("2026-11-22T02:00:00Z", 44),
          ],
        },
      }),
    ]);
    expectCause(r, "deadline-shorter-than-lag", {
      verdict: [`did not run at ${SLOT_TEXT}`, "startingDeadlineSeconds 30", "41, 50, 44 s"],
      evidence: ["Missed (StartingDeadlineExceeded)", "47s after the slot"],
      fix: ["Raise `startingDeadlineSeconds`"],
    });
  });
});

const crashLooping = (name: string, jobName: string, restarts: number) =>
  pod(name, jobName, {
    phase: "Running",
    created: "2026-11-25T01:59:31Z",
    conditions: [{ type: "PodScheduled", status: "True" }],
    containers: [
      {
        restartCount: restarts,
        state: { waiting: { reason: "CrashLoopBackOff", message: "back-off 5m0s restarting failed container=backup" } },
        lastState: { terminated: { reason: "Error", exitCode: 1, finishedAt: at(NOW.toISOString(), -200) } },
      },
    ],
  });

describe("kubectl cron why NAME: held, skipped, refused", () => {
  it("Forbid held behind a Job running for hours (no activeDeadlineSeconds, backoffLimit 600, CrashLoopBackOff)", async () => {
    const blocker = "backup-m1f2e3d4";
    const r = await whyIn([
      cronJob({
        status: {
          lastScheduleTime: PREV_SLOT,
          recentRuns: [
            entry(SLOT, "Held", "ConcurrencyPolicyForbid", {
              blockedBy: blocker,
              message: `not started: concurrencyPolicy Forbid and Job ${blocker} still running`,
            }),
            {
              trigger: "RunNow",
              request: HUNG_REQUEST,
              decision: "Created",
              reason: "RunNowRequested",
              decidedAt: "2026-11-25T01:59:30Z",
              job: blocker,
            },
          ],
        },
      }),
      hungJob(blocker),
      crashLooping(`${blocker}-x7k2p`, blocker, 87),
    ]);
    expectCause(r, "forbid-held", {
      verdict: [
        `did not run at ${SLOT_TEXT}: concurrencyPolicy Forbid and Job ${blocker} has been running for 9h12m (activeDeadlineSeconds unset, backoffLimit 600, its Pods in CrashLoopBackOff, 87 restarts); it will not run until that Job ends`,
      ],
      evidence: [
        `behind Job ${blocker}`,
        `Job ${blocker}: started 2026-11-25T01:59:31Z, activeDeadlineSeconds unset, backoffLimit 600`,
        `Pod ${blocker}-x7k2p: Running; backup waiting: CrashLoopBackOff`,
        "restarted 87 times (last: Error, exit code 1)",
      ],
      fix: [`kubectl delete job ${blocker} -n ${NS}`, "activeDeadlineSeconds"],
    });
    assert.match(
      r.d.next?.blocked ?? "",
      new RegExp(`concurrencyPolicy Forbid: it will not run while ${blocker} runs`),
    );
  });

  it("several schedules (API v2): a held slot names the schedule it came from and shows it in that schedule's zone", async () => {
    const blocker = "backup-m1f2e3d4";
    // 03:00 in Berlin, and 04:30 in New York (09:30Z): the latest slot is New York's.
    const nySlot = "2026-11-25T09:30:00Z";
    const r = await whyIn([
      cronJob({
        meta: {
          annotations: {
            [`${GROUP}/more-schedules`]: JSON.stringify([{ schedule: "30 4 * * *", timeZone: "America/New_York" }]),
          },
        },
        status: {
          lastScheduleTime: SLOT,
          recentRuns: [
            entry(nySlot, "Held", "ConcurrencyPolicyForbid", { blockedBy: blocker }),
            entry(SLOT, "Created", "Scheduled", { job: blocker, decidedAt: "2026-11-25T01:59:30Z" }),
          ],
        },
      }),
      hungJob(blocker),
    ]);
    expectCause(r, "forbid-held", {
      verdict: [
        `did not run at 2026-11-25 04:30 America/New_York (2026-11-25T09:30:00Z) from schedule "30 4 * * *" (America/New_York): concurrencyPolicy Forbid and Job ${blocker}`,
      ],
      evidence: [`behind Job ${blocker}`],
      fix: [`kubectl delete job ${blocker} -n ${NS}`],
    });
    assert.deepEqual(r.d.slot, {
      utc: nySlot,
      local: "2026-11-25T04:30:00-05:00",
      timeZone: "America/New_York",
      schedules: [{ schedule: "30 4 * * *", timeZone: "America/New_York" }],
    });
    // The next slot is Berlin's, named and shown in Berlin.
    assert.match(
      r.d.next?.text ?? "",
      /^2026-11-26 03:00 Europe\/Berlin \(2026-11-26T02:00:00Z\) from schedule "0 3 \* \* \*" \(Europe\/Berlin\)$/,
    );
  });

  it("a run-now request waiting behind a running Job is an `also` finding (run-now-waiting)", async () => {
    const r = await whyIn([
      cronJob({
        meta: { annotations: { [RUN_NOW_ANNOTATION]: "2026-11-25T11:00:00Z" } },
        status: {
          lastRunNowRequest: "2026-11-20T09:00:00Z",
          recentRuns: [entry(SLOT, "Created", "Scheduled", { job: JOB })],
        },
      }),
      job(JOB, SLOT, { state: "active", start: at(SLOT, 3) }),
      pod(`${JOB}-abcde`, JOB, {
        phase: "Running",
        conditions: [
          { type: "PodScheduled", status: "True" },
          { type: "Ready", status: "True" },
        ],
        containers: [{ ready: true, state: { running: { startedAt: at(SLOT, 5) } } }],
      }),
    ]);
    assert.equal(r.d.status, "healthy", r.text);
    assert.match(
      r.d.verdict,
      new RegExp(`^ran at .*: Job ${JOB} \\(created 2 s after the slot\\) has been running for 9h11m`),
    );
    const waiting = r.d.also.find((a) => a.cause === "run-now-waiting");
    assert.ok(waiting, r.text);
    assert.match(
      waiting.summary,
      new RegExp(`run-now request "2026-11-25T11:00:00Z" waits: ${JOB} still running \\(concurrencyPolicy Forbid\\)`),
    );
    assert.match(
      waiting.evidence.join("\n"),
      /status.lastRunNowRequest: 2026-11-20T09:00:00Z; its Job would be backup-m[0-9a-f]{8}/,
    );
    assert.deepEqual(waiting.fix, causeOf("run-now-waiting").fix({ ...PLACEHOLDERS, namespace: NS, job: JOB }));
    assert.equal(r.code, 1, "a finding besides a healthy verdict needs attention");
    assert.match(r.text, /^Also: run-now request .* \[run-now-waiting\]$/m);
  });

  it("missedRunPolicy Skip chose not to run the slot", async () => {
    const r = await whyIn([
      cronJob({
        spec: { missedRunPolicy: "Skip" },
        status: {
          lastScheduleTime: PREV_SLOT,
          recentRuns: [
            entry(SLOT, "Skipped", "MissedRunPolicySkip", {
              decidedAt: "2026-11-25T02:40:00Z",
              message: "not run: missedRunPolicy Skip runs only the announced time",
            }),
          ],
        },
      }),
    ]);
    expectCause(r, "policy-skipped", {
      verdict: [`did not run at ${SLOT_TEXT}`, "missedRunPolicy Skip", "MissedRunPolicySkip"],
      evidence: ["Skipped (MissedRunPolicySkip)", "decided 2026-11-25T02:40:00Z"],
      fix: ["spec.missedRunPolicy", `kubectl cron backfill ${NAME} -n ${NS} --from=${SLOT} --to=${SLOT}`],
    });
  });

  const QUOTA = `jobs.batch "${JOB}" is forbidden: exceeded quota: compute, requested: count/jobs.batch=1, used: count/jobs.batch=10, limited: count/jobs.batch=10`;
  const DENIED = `admission webhook "validate.kyverno.svc-fail" denied the request: policy Job/${NS}/${JOB} for resource violation: require-team-label: the label team is required`;
  const TAKEN = `a Job named ${JOB} already exists and is not controlled by this CronJob`;
  const INVALID = `Job.batch "${JOB}" is invalid: spec.template.spec.containers[0].image: Required value`;
  /** The create of the slot's Job refused for `reason` with `message` (and `objects` beside); what `why` must say. */
  const refusals: {
    title: string;
    reason: string;
    message: string;
    objects: KubeObject[];
    cause: CauseId;
    says: Parameters<typeof expectCause>[2];
  }[] = [
    {
      title: "create refused by a ResourceQuota: the API server's message, and the quota's used/hard",
      reason: "Forbidden",
      message: QUOTA,
      objects: [
        {
          apiVersion: "v1",
          kind: "ResourceQuota",
          metadata: { name: "compute", namespace: NS },
          spec: { hard: { "count/jobs.batch": "10", "requests.cpu": "4" } },
          status: {
            hard: { "count/jobs.batch": "10", "requests.cpu": "4" },
            used: { "count/jobs.batch": "10", "requests.cpu": "1500m" },
          },
        },
      ],
      cause: "create-refused-quota",
      says: {
        verdict: [`did not run at ${SLOT_TEXT}`, QUOTA],
        evidence: ["Refused (Forbidden)", "ResourceQuota compute: count/jobs.batch 10/10, requests.cpu 1500m/4"],
        fix: ["Raise the quota"],
      },
    },
    {
      title: "create refused by an admission webhook: the webhook's denial",
      reason: "BadRequest",
      message: DENIED,
      objects: [],
      cause: "create-refused-admission",
      says: {
        verdict: [
          `did not run at ${SLOT_TEXT}`,
          'admission webhook "validate.kyverno.svc-fail" denied the request',
          "require-team-label",
        ],
        evidence: ["Refused (BadRequest)"],
        fix: ["Change the Job template to satisfy the policy"],
      },
    },
    {
      title: "create refused: a Job that is not this CronJob's holds the slot's name",
      reason: "AlreadyExists",
      message: TAKEN,
      objects: [foreignJob(JOB)],
      cause: "create-refused-name-taken",
      says: {
        verdict: [`did not run at ${SLOT_TEXT}`, TAKEN],
        evidence: ["Refused (AlreadyExists)", `Job ${JOB}: no controller`],
        fix: ["Delete or rename the foreign Job"],
      },
    },
    {
      title: "create refused for another reason: the API server's reason and message",
      reason: "Invalid",
      message: INVALID,
      objects: [],
      cause: "create-refused",
      says: {
        verdict: [`did not run at ${SLOT_TEXT}`, "(Invalid)", INVALID],
        evidence: ["Refused (Invalid)"],
        fix: ["Fix what the message names", `kubectl cron run ${NAME} -n ${NS}`],
      },
    },
  ];
  for (const c of refusals) {
    it(c.title, async () => {
      const refused = entry(SLOT, "Refused", c.reason, { message: c.message });
      const r = await whyIn([
        cronJob({ status: { lastScheduleTime: PREV_SLOT, recentRuns: [refused] } }),
        ...c.objects,
      ]);
      expectCause(r, c.cause, c.says);
    });
  }
});

describe("diagnose(): missed and held, where the live layer adds nothing", () => {
  it("missed while held behind a running Job (Missed with blockedBy): forbid-held, the Job named", () => {
    const blocker = "backup-m1f2e3d4";
    const cj = cronJob({
      spec: { startingDeadlineSeconds: 300 },
      status: {
        recentRuns: [
          entry(SLOT, "Missed", "StartingDeadlineExceeded", { blockedBy: blocker, decidedAt: at(SLOT, 301) }),
        ],
      },
    });
    const r = ask(facts(cj, { jobs: [hungJob(blocker)] }));
    expectCause(r, "forbid-held", {
      verdict: [
        `did not run at ${SLOT_TEXT}`,
        `behind Job ${blocker} until startingDeadlineSeconds (300) passed`,
        "has been running for 9h12m",
      ],
      evidence: [`behind Job ${blocker}`, `Job ${blocker}: started 2026-11-25T01:59:31Z`],
      fix: [`kubectl delete job ${blocker} -n ${NS}`],
    });
  });

  it("missed past the deadline while the operator restarted (its Pod started after the slot)", () => {
    const op = healthyOperatorFacts();
    op.pods![0]!.created = "2026-11-25T02:04:10Z";
    const cj = cronJob({
      spec: { startingDeadlineSeconds: 120 },
      status: {
        recentRuns: [entry(SLOT, "Missed", "StartingDeadlineExceeded", { decidedAt: "2026-11-25T02:04:40Z" })],
      },
    });
    const r = ask(facts(cj, { operator: op }));
    expectCause(r, "deadline-missed", {
      verdict: [
        `did not run at ${SLOT_TEXT}`,
        "4m40s late",
        "startingDeadlineSeconds 120",
        "the operator restarted: its Pod started at 2026-11-25T02:04:10Z, after the slot",
      ],
      evidence: ["operator Pods started after the slot: 2026-11-25T02:04:10Z"],
      fix: ["backfill"],
    });
  });

  // A deadline shorter than the operator's lag (5 s; it reached the slot 8 s after it, within its usual reaction) is
  // the deadline's fault only when the operator was there: a leader change or a restart after the slot is why it was
  // late, and the verdict names it. The three cases differ in the operator's facts only.
  describe("a short startingDeadlineSeconds, with or without a leader change or restart after the slot", () => {
    const decidedAt = at(SLOT, 8);
    const shortDeadline = () =>
      cronJob({
        spec: { startingDeadlineSeconds: 5 },
        status: {
          lastScheduleTime: PREV_SLOT,
          lastMissedTime: SLOT,
          recentRuns: [entry(SLOT, "Missed", "StartingDeadlineExceeded", { decidedAt })],
        },
      });

    it("neither: the deadline is shorter than the operator's lag (deadline-shorter-than-lag)", () => {
      const r = ask(facts(shortDeadline()));
      expectCause(r, "deadline-shorter-than-lag", {
        verdict: [
          `did not run at ${SLOT_TEXT}`,
          "startingDeadlineSeconds 5 is shorter than the operator's lag: it reached the slot 8 s after it",
        ],
        evidence: ["Missed (StartingDeadlineExceeded)", "8s after the slot"],
        fix: ["Raise `startingDeadlineSeconds`"],
      });
    });

    it("the leader changed after the slot: deadline-missed, naming the leader change", () => {
      const op = healthyOperatorFacts();
      op.lease = {
        ...op.lease!,
        holder: "cronjob-operator-controller-manager-7d9f-fghij_77aa",
        acquireTime: at(SLOT, 6),
        transitions: 2,
      };
      const r = ask(facts(shortDeadline(), { operator: op }));
      expectCause(r, "deadline-missed", {
        verdict: [
          `did not run at ${SLOT_TEXT}`,
          "8s late, past startingDeadlineSeconds 5",
          "no replica led from before the slot until 2026-11-25T02:00:06Z, when cronjob-operator-controller-manager-7d9f-fghij_77aa took the Lease",
        ],
        evidence: [
          `Lease ${OPERATOR_NS}/${LEASE}: cronjob-operator-controller-manager-7d9f-fghij_77aa acquired it at 2026-11-25T02:00:06Z, after the slot; 2 leader changes in all`,
        ],
        fix: [`kubectl cron backfill ${NAME} -n ${NS} --from=${SLOT} --to=${SLOT}`],
      });
    });

    it("the operator restarted after the slot: deadline-missed, naming the restart", () => {
      const op = healthyOperatorFacts();
      op.pods![0]!.created = at(SLOT, 4);
      const r = ask(facts(shortDeadline(), { operator: op }));
      expectCause(r, "deadline-missed", {
        verdict: [
          `did not run at ${SLOT_TEXT}`,
          "8s late, past startingDeadlineSeconds 5",
          `the operator restarted: its Pod started at ${at(SLOT, 4)}, after the slot`,
        ],
        evidence: [`operator Pods started after the slot: ${at(SLOT, 4)}`],
        fix: [`kubectl cron backfill ${NAME} -n ${NS} --from=${SLOT} --to=${SLOT}`],
      });
    });
  });

  it("a risk besides the verdict: recent runs started close to startingDeadlineSeconds", () => {
    const cj = cronJob({
      spec: { startingDeadlineSeconds: 60 },
      status: {
        recentRuns: [
          entry(SLOT, "Created", "Scheduled", {
            job: JOB,
            decidedAt: at(SLOT, 45),
            outcome: { result: "Complete", finishedAt: at(SLOT, 57) },
          }),
        ],
      },
    });
    const d = diagnose(facts(cj));
    note(d);
    assert.equal(d.status, "healthy");
    assert.deepEqual(
      d.also.map((a) => a.cause),
      ["deadline-shorter-than-lag"],
    );
    assert.match(
      d.also[0]!.summary,
      /startingDeadlineSeconds 60 leaves little room: recent runs started up to 45 s after their slot/,
    );
    assert.equal(d.exitCode, 1);
  });
});

producesItsCauses("schedule");
