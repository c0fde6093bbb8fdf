// What the dashboard draws of a CronJob and a group (cmd/kubectl-cron/dashboard/marks.ts), from a record, Jobs and
// schedules written here: each kind of mark where it belongs, the slots to come as `next` computes them, the
// windows that hold them shaded, a dense schedule as bands, a group's places over time.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  CONCURRENCY_GROUP_LABEL,
  CRONJOB_NAME_LABEL,
  type CronJob,
  type Job,
  MORE_SCHEDULES_ANNOTATION,
  SCHEDULED_AT_ANNOTATION,
} from "../../api/v1/index.ts";
import { laneOf, marksOf, rowOf } from "../../cmd/kubectl-cron/dashboard/marks.ts";
import { PAGE_WORDS } from "../../cmd/kubectl-cron/dashboard/view.ts";
import type { GroupFacts } from "../../cmd/kubectl-cron/model/groupfacts.ts";

const NOW = new Date("2026-11-27T12:00:00Z");
const FROM = new Date("2026-11-26T12:00:00Z");
const TO = new Date("2026-11-28T12:00:00Z");
const UID = "uid-backup";

function cronJob(spec: Record<string, unknown>, recentRuns: unknown[] = []): CronJob {
  return {
    apiVersion: "batch.tutorial.kubebuilder.io/v1",
    kind: "CronJob",
    metadata: { name: "backup", namespace: "team", uid: UID, creationTimestamp: "2026-11-01T00:00:00Z" },
    spec: { schedule: "0 */6 * * *", jobTemplate: { spec: { template: { spec: { containers: [] } } } }, ...spec },
    status: { recentRuns },
  } as unknown as CronJob;
}

function job(
  name: string,
  slot: string,
  start: string,
  end: string | undefined,
  result: "Complete" | "Failed" | undefined,
  labels: Record<string, string> = {},
): Job {
  return {
    metadata: {
      name,
      namespace: "team",
      creationTimestamp: start,
      labels: { [CRONJOB_NAME_LABEL]: "backup", ...labels },
      annotations: { [SCHEDULED_AT_ANNOTATION]: slot },
      ownerReferences: [
        { apiVersion: "batch.tutorial.kubebuilder.io/v1", kind: "CronJob", name: "backup", uid: UID, controller: true },
      ],
    },
    status: {
      startTime: start,
      ...(result ? { conditions: [{ type: result, status: "True", lastTransitionTime: end }] } : {}),
      ...(result === "Complete" ? { completionTime: end } : {}),
    },
  } as unknown as Job;
}

describe("kubectl cron dashboard: the marks of a CronJob", () => {
  it("draws its runs from its Jobs, the record's other decisions, and its slots to come", () => {
    const c = cronJob({}, [
      {
        trigger: "Schedule",
        scheduledTime: "2026-11-26T18:00:00Z",
        decision: "Held",
        reason: "ConcurrencyPolicyForbid",
        decidedAt: "2026-11-26T18:00:01Z",
        blockedBy: "backup-1",
      },
      {
        trigger: "Schedule",
        scheduledTime: "2026-11-27T00:00:00Z",
        decision: "Missed",
        reason: "StartingDeadlineExceeded",
        decidedAt: "2026-11-27T00:10:00Z",
        message: "past the deadline",
      },
      {
        trigger: "Schedule",
        scheduledTime: "2026-11-20T00:00:00Z",
        decision: "Missed",
        reason: "StartingDeadlineExceeded",
        decidedAt: "2026-11-20T00:10:00Z",
      },
    ]);
    const jobs = [
      job("backup-1", "2026-11-26T12:00:00Z", "2026-11-26T12:00:02Z", "2026-11-26T12:30:00Z", "Complete"),
      job("backup-2", "2026-11-27T06:00:00Z", "2026-11-27T06:00:02Z", "2026-11-27T06:05:00Z", "Failed"),
      job("backup-3", "2026-11-27T12:00:00Z", "2026-11-27T12:00:01Z", undefined, undefined),
      // Another CronJob's Job of the same name (deleted and made again): not drawn.
      {
        ...job("backup-x", "2026-11-27T06:00:00Z", "2026-11-27T06:00:02Z", undefined, undefined),
        metadata: {
          ...job("x", "2026-11-27T06:00:00Z", "2026-11-27T06:00:02Z", undefined, undefined).metadata,
          name: "backup-x",
          ownerReferences: [{ apiVersion: "v1", kind: "CronJob", name: "backup", uid: "old", controller: true }],
        },
      } as unknown as Job,
    ];
    const m = marksOf({ cronJob: c, jobs, calendars: [], from: FROM, to: TO, now: NOW });
    const seen = m.marks.map((x) => [x.kind, x.at, x.end, x.slot, x.job].filter((v) => v !== undefined).join(" "));
    assert.deepEqual(seen, [
      "succeeded 2026-11-26T12:00:02Z 2026-11-26T12:30:00Z 2026-11-26T12:00:00Z backup-1",
      "held 2026-11-26T18:00:00Z 2026-11-26T18:00:00Z",
      "missed 2026-11-27T00:00:00Z 2026-11-27T00:00:00Z",
      "failed 2026-11-27T06:00:02Z 2026-11-27T06:05:00Z 2026-11-27T06:00:00Z backup-2",
      "running 2026-11-27T12:00:01Z 2026-11-27T12:00:00Z backup-3",
      "slot 2026-11-27T18:00:00Z 2026-11-27T18:00:00Z",
      "slot 2026-11-28T00:00:00Z 2026-11-28T00:00:00Z",
      "slot 2026-11-28T06:00:00Z 2026-11-28T06:00:00Z",
      "slot 2026-11-28T12:00:00Z 2026-11-28T12:00:00Z",
    ]);
    assert.match(m.marks[1]!.title, /^held: ConcurrencyPolicyForbid/);
    assert.match(m.marks[2]!.title, /^missed: StartingDeadlineExceeded: past the deadline/);
    const row = rowOf(c, jobs, NOW);
    assert.deepEqual(row, {
      id: "team/backup",
      namespace: "team",
      name: "backup",
      suspended: false,
      schedule: "0 */6 * * *",
      last: "Running",
    });
  });

  it("marks the slots an exclusion window holds, shades the window, and draws a run of excluded slots as one", () => {
    const c = cronJob(
      { exclusions: { windows: [{ name: "freeze", start: "2026-11-27T20:00:00", end: "2026-11-28T04:00:00" }] } },
      [
        {
          trigger: "Schedule",
          scheduledTime: "2026-11-27T06:00:00Z",
          decision: "Skipped",
          reason: "ExcludedByCalendar",
          decidedAt: "2026-11-27T06:00:00Z",
          exclusion: { calendar: "holidays", window: "2026-11-27", firstSlot: "2026-11-27T00:00:00Z", slots: 2 },
        },
      ],
    );
    const m = marksOf({ cronJob: c, jobs: [], calendars: [], from: FROM, to: TO, now: NOW });
    const excluded = m.marks.find((x) => x.kind === "excluded")!;
    assert.deepEqual([excluded.at, excluded.end, excluded.count], ["2026-11-27T00:00:00Z", "2026-11-27T06:00:00Z", 2]);
    const slots = m.marks
      .filter((x) => x.kind === "slot" || x.kind === "slot-excluded")
      .map((x) => `${x.kind} ${x.at}`);
    assert.deepEqual(slots, [
      "slot 2026-11-27T18:00:00Z",
      "slot-excluded 2026-11-28T00:00:00Z",
      "slot 2026-11-28T06:00:00Z",
      "slot 2026-11-28T12:00:00Z",
    ]);
    assert.match(m.marks.find((x) => x.kind === "slot-excluded")!.title, /spec\.exclusions: freeze/);
    assert.deepEqual(m.shades, [
      { from: "2026-11-27T20:00:00Z", to: "2026-11-28T04:00:00Z", by: "spec.exclusions", window: "freeze" },
    ]);
  });

  it("draws a schedule too dense to draw slot by slot as bands, bounded", () => {
    const c = cronJob({ schedule: "* * * * *" });
    const m = marksOf({ cronJob: c, jobs: [], calendars: [], from: FROM, to: TO, now: NOW });
    assert.deepEqual(
      m.marks.map((x) => [x.kind, x.at, x.end, x.count]),
      [["slots", "2026-11-27T12:01:00Z", "2026-11-28T12:00:00Z", 1440]],
    );
  });

  it("draws a lone slot among dense ones as a slot, a band with its count; a suspended CronJob's would run then", () => {
    for (const suspend of [false, true]) {
      // 120 slots a minute apart, and one at 20:00 (a second schedule): 121, too many to draw one by one.
      const c = cronJob({ schedule: "* 13-14 * * *", suspend });
      c.metadata = { ...c.metadata, annotations: { [MORE_SCHEDULES_ANNOTATION]: '[{"schedule":"0 20 * * *"}]' } };
      const m = marksOf({ cronJob: c, jobs: [], calendars: [], from: FROM, to: TO, now: NOW });
      assert.deepEqual(
        m.marks.map((x) => [x.kind, x.at, x.end, x.count]),
        [
          ["slots", "2026-11-27T13:00:00Z", "2026-11-27T14:59:00Z", 120],
          ["slot", "2026-11-27T20:00:00Z", undefined, undefined],
        ],
      );
      const [band, slot] = m.marks.map((x) => x.title);
      const said = suspend ? PAGE_WORDS.wouldRun(PAGE_WORDS.slots(120), 120) : PAGE_WORDS.slots(120);
      assert.equal(band, `many slots: ${said}`);
      assert.equal(slot!.includes(PAGE_WORDS.wouldRun("")), suspend, slot);
    }
    assert.equal(PAGE_WORDS.slots(1), "1 slot");
  });

  it("draws a pending retry at its start, and no slot for a window in the past", () => {
    const c = cronJob({ retry: { limit: 3, delaySeconds: 600 } }, [
      {
        trigger: "Retry",
        scheduledTime: "2026-11-27T06:00:00Z",
        decision: "Held",
        reason: "RetryDelay",
        decidedAt: "2026-11-27T11:55:00Z",
        startsAt: "2026-11-27T12:05:00Z",
        attempt: { number: 1, of: 3, after: "backup-2", failure: "BackoffLimitExceeded" },
      },
    ]);
    const m = marksOf({ cronJob: c, jobs: [], calendars: [], from: FROM, to: TO, now: NOW });
    const retry = m.marks.find((x) => x.kind === "pending")!;
    assert.equal(retry.at, "2026-11-27T12:05:00Z");
    assert.equal(retry.slot, "2026-11-27T06:00:00Z");
    assert.match(retry.title, /attempt 1 of 3 .* after Job backup-2/);
    const past = marksOf({
      cronJob: c,
      jobs: [],
      calendars: [],
      from: FROM,
      to: new Date("2026-11-27T00:00:00Z"),
      now: NOW,
    });
    assert.equal(past.marks.filter((x) => x.kind === "slot").length, 0);
  });
});

describe("kubectl cron dashboard: a group's lane", () => {
  it("steps its places used over time from its Jobs, and lists the runs that waited", () => {
    const g: GroupFacts = {
      namespace: "team",
      name: "db",
      exists: true,
      limit: 1,
      running: [],
      waiting: [
        // Held at 10:00, then at 11:00 (a newer slot replaced it): it waits since 10:00, as why says.
        {
          cronJob: "report",
          since: "2026-11-27T10:00:00Z",
          slot: "2026-11-27T11:00:00Z",
          reason: "ConcurrencyGroupFull",
        },
      ],
      members: ["backup", "report"],
    };
    const label = { [CONCURRENCY_GROUP_LABEL]: "db" };
    const jobs = [
      job("backup-1", "2026-11-27T08:00:00Z", "2026-11-27T08:00:00Z", "2026-11-27T09:00:00Z", "Complete", label),
      job("backup-2", "2026-11-27T08:30:00Z", "2026-11-27T08:30:00Z", "2026-11-27T10:00:00Z", "Failed", label),
      job("backup-3", "2026-11-27T11:30:00Z", "2026-11-27T11:30:00Z", undefined, undefined, label),
    ];
    const late = cronJob({ concurrencyGroup: "db" }, [
      {
        trigger: "Schedule",
        scheduledTime: "2026-11-27T08:00:00Z",
        decision: "Created",
        reason: "Scheduled",
        decidedAt: "2026-11-27T08:30:00Z",
        job: "backup-2",
      },
    ]);
    const lane = laneOf({ group: g, jobs, cronJobs: [late], from: FROM, to: TO, now: NOW });
    assert.deepEqual(lane.usage, [
      { at: "2026-11-27T08:00:00Z", used: 1 },
      { at: "2026-11-27T08:30:00Z", used: 2 },
      { at: "2026-11-27T09:00:00Z", used: 1 },
      { at: "2026-11-27T10:00:00Z", used: 0 },
      { at: "2026-11-27T11:30:00Z", used: 1 },
      { at: "2026-11-27T12:00:00Z", used: 0 },
    ]);
    assert.deepEqual(lane.waits, [
      { cronJob: "backup", from: "2026-11-27T08:00:00Z", to: "2026-11-27T08:30:00Z", job: "backup-2" },
      { cronJob: "report", from: "2026-11-27T10:00:00Z" },
    ]);
    assert.equal(lane.limit, 1);
  });
});
