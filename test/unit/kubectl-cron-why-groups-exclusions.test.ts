// `kubectl cron why` on what holds a slot besides its own Jobs: its concurrency group (full, older runs first, missing)
// and its exclusions (a window or calendar that excluded it, a calendar missing or unreadable). The scene:
// test/why-scene.ts.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  API_VERSION,
  CALENDAR_KIND,
  CONCURRENCY_GROUP_LABEL,
  type RecentRun,
  RUN_NOW_ANNOTATION,
} from "../../api/v1/index.ts";
import type { KubeObject } from "../../runtime/kinds.ts";
import {
  A_SLOT,
  ask,
  at,
  B_SLOT,
  C_SLOT,
  cluster,
  concurrencyGroup,
  cronJob,
  diagnose,
  entry,
  expectCause,
  facts,
  GROUP_NAME,
  groupFacts,
  groupJob,
  heldByMissingCalendar,
  hungJob,
  JOB,
  missingCalendarProblem,
  NAME,
  note,
  NS,
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

/** Another CronJob of the group; `held`: its slot waiting for a place (its record's newest Held entry). */
function member(name: string, held?: string): KubeObject {
  return cronJob({
    meta: { name, uid: `uid-${name}` },
    spec: { concurrencyGroup: GROUP_NAME },
    status: {
      lastScheduleTime: PREV_SLOT,
      ...(held ? { recentRuns: [entry(held, "Held", "ConcurrencyGroupFull")] } : {}),
    },
  });
}

/** The CronJob asked about, in the group, its slot held for `reason`. */
const heldInGroup = (reason: string, o: Partial<RecentRun> = {}, group = GROUP_NAME) =>
  cronJob({
    spec: { concurrencyGroup: group },
    status: { lastScheduleTime: PREV_SLOT, recentRuns: [entry(SLOT, "Held", reason, o)] },
  });

describe("kubectl cron why NAME: concurrency groups", () => {
  it("group full: the slot waits for a place; the Jobs holding the places, of other CronJobs, are named", async () => {
    const a = groupJob("db-a", A_SLOT);
    const b = groupJob("db-b", B_SLOT);
    const aName = a.metadata!.name!;
    const bName = b.metadata!.name!;
    const server = await cluster([
      concurrencyGroup(GROUP_NAME, 2),
      heldInGroup("ConcurrencyGroupFull", {
        blockedBy: aName,
        message: `held: group ${GROUP_NAME} is at 2/2: Jobs ${aName}, ${bName}`,
      }),
      member("db-a"),
      member("db-b"),
      member("db-c", C_SLOT),
      a,
      b,
      // Finished: it holds no place.
      groupJob("db-c", PREV_SLOT, "complete"),
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "group-full", {
      verdict: [`did not run at ${SLOT_TEXT}: it waits for a place in group ${GROUP_NAME}, which is at 2/2`],
      evidence: [
        `held: group ${GROUP_NAME} is at 2/2`,
        `ConcurrencyGroup ${NS}/${GROUP_NAME}: limit 2; 2 Jobs of its CronJobs hold its places (labelled ${CONCURRENCY_GROUP_LABEL}=${GROUP_NAME}): ${aName} (CronJob db-a, running for 10h11m), ${bName} (CronJob db-b, running for 9h41m)`,
        `2 runs wait for a place, oldest first: db-c since ${C_SLOT}, ${NAME} since ${SLOT}`,
        `Job ${aName}: started ${at(A_SLOT, 3).replace(".000Z", "Z")}`,
      ],
      fix: [
        "Wait: it starts when a Job of the group ends",
        `\`kubectl cron groups ${GROUP_NAME} -n ${NS}\``,
        `\`kubectl patch concurrencygroup ${GROUP_NAME} -n ${NS} --type merge -p '{"spec":{"limit":3}}'\``,
        `Look at the Job holding a place, ${aName} of CronJob db-a: \`kubectl cron why db-a -n ${NS}\``,
      ],
    });
    assert.equal(r.d.next?.blocked, `group ${GROUP_NAME} is at 2/2: it waits for a place`);
    // One list of the namespace's groups and one of its CronJobs (the members); the Jobs are the namespace's list.
    const reads = server.requests.filter((q) => q.method === "GET").map((q) => q.path);
    assert.equal(reads.filter((p) => p === `/apis/${API_VERSION}/namespaces/${NS}/concurrencygroups`).length, 2);
    assert.equal(reads.filter((p) => p === `/apis/${API_VERSION}/namespaces/${NS}/cronjobs`).length, 2);
  });

  it("older runs of the group wait first: the group has a place, the members ahead are named", async () => {
    const r = await whyIn([
      concurrencyGroup(GROUP_NAME, 2),
      heldInGroup("ConcurrencyGroupQueue", {
        message: `held: group ${GROUP_NAME} is at 1/2 and older runs of db-c wait for the next place first`,
      }),
      member("db-a"),
      member("db-c", C_SLOT),
      // Held after this slot: not ahead of it.
      member("db-d", at(SLOT, 60)),
      groupJob("db-a", A_SLOT),
    ]);
    expectCause(r, "group-queue", {
      verdict: [
        `did not run at ${SLOT_TEXT}: group ${GROUP_NAME} is at 1/2 and older runs of db-c wait for its next place first`,
      ],
      evidence: [`3 runs wait for a place, oldest first: db-c since ${C_SLOT}, ${NAME} since ${SLOT}, db-d since`],
      fix: ["Wait: the group's runs take its places oldest first", `'{"spec":{"limit":3}}'`],
    });
    assert.equal(r.d.next?.blocked, undefined, "the group has a place for the next slot");
  });

  it("no such group: the slot waits until it exists; the fix creates it (kubectl apply) or names another", async () => {
    const r = await whyIn([
      cronJob({
        spec: { concurrencyGroup: "nosuch" },
        status: {
          lastScheduleTime: PREV_SLOT,
          recentRuns: [entry(SLOT, "Held", "ConcurrencyGroupNotFound")],
          conditions: [
            {
              type: "Degraded",
              status: "True",
              reason: "ConcurrencyGroupNotFound",
              message: `spec.concurrencyGroup names nosuch, which is not a ConcurrencyGroup of namespace ${NS}: runs wait until it exists`,
              lastTransitionTime: at(SLOT, 2),
            },
          ],
        },
      }),
      concurrencyGroup(GROUP_NAME, 2),
    ]);
    expectCause(r, "group-not-found", {
      verdict: [
        `did not run at ${SLOT_TEXT}: spec.concurrencyGroup names nosuch, which is not a ConcurrencyGroup of namespace ${NS}: its runs wait until it exists`,
      ],
      evidence: ["Held (ConcurrencyGroupNotFound)", `no ConcurrencyGroup nosuch in namespace ${NS}`],
      fix: [
        `echo '{"apiVersion":"${API_VERSION}","kind":"ConcurrencyGroup","metadata":{"name":"nosuch","namespace":"${NS}"},"spec":{"limit":1}}' | kubectl apply -f -`,
        `kubectl get concurrencygroups -n ${NS}`,
      ],
    });
    assert.deepEqual(r.d.also, [], "the finding is the verdict, not said twice");
    assert.equal(r.d.next?.blocked, "ConcurrencyGroup nosuch does not exist: it will not run until it does");
  });

  it("a member's held run whose Job exists runs, it does not wait (why, why -A, list): the record is written later", async () => {
    // db-c's 01:45 slot was held, and its Job has been created since; its record still says Held (the status write
    // comes up to --status-write-delay later). The group is at 3/2: db-c's Job holds a place, its run waits for none.
    const a = groupJob("db-a", A_SLOT);
    const b = groupJob("db-b", B_SLOT);
    const c = groupJob("db-c", C_SLOT);
    const server = await cluster([
      concurrencyGroup(GROUP_NAME, 2),
      heldInGroup("ConcurrencyGroupFull", { blockedBy: a.metadata!.name! }),
      member("db-a"),
      member("db-b"),
      member("db-c", C_SLOT),
      a,
      b,
      c,
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "group-full", {
      verdict: [`did not run at ${SLOT_TEXT}: it waits for a place in group ${GROUP_NAME}, which is at 3/2`],
      evidence: [
        `(CronJob db-c, running for 9h26m)`,
        `; 1 run waits for a place, oldest first: ${NAME} since ${SLOT}`,
        `the run of ${NAME} is 1 of 1 in the group's queue: it takes the next place`,
      ],
      fix: ["Wait: it starts when a Job of the group ends"],
    });
    assert.ok(!r.d.evidence.some((e) => e.includes("db-c since")), r.text);
    const all = await run(server, ["why", "-A"]);
    assert.equal(all.code, 1, all.err);
    // (The other members have no record of 03:00: each is a line of its own.)
    assert.deepEqual(
      all.out.split("\n").filter((l) => l.startsWith("(group)")),
      [`(group)\tgroup-full\tgroup ${GROUP_NAME} (${NS}) full at 3/2: 1 CronJob waiting (${NAME})`],
    );
    const listed = await run(server, ["list"]);
    assert.equal(listed.code, 0, listed.err);
    assert.deepEqual(listed.err.trimEnd().split("\n"), [
      `group ${GROUP_NAME} (${NS}) full at 3/2: 1 CronJob waiting (${NAME})`,
    ]);
  });

  it("a run-now request waiting in a full group: the group, the Jobs holding its places, its place in the queue (exit 1)", async () => {
    // `kubectl cron run` on a CronJob created this morning (no slot yet) in a group at 2/2, behind db-c's older slot.
    const a = groupJob("db-a", A_SLOT);
    const b = groupJob("db-b", B_SLOT);
    const request = "2026-11-25T11:05:00Z-9b5dad";
    const r = await whyIn([
      concurrencyGroup(GROUP_NAME, 2),
      cronJob({
        meta: { creationTimestamp: "2026-11-25T10:00:00Z", annotations: { [RUN_NOW_ANNOTATION]: request } },
        spec: { concurrencyGroup: GROUP_NAME, concurrencyPolicy: "Allow" },
        status: {
          lastScheduleTime: undefined,
          recentRuns: [
            {
              trigger: "RunNow",
              request,
              decision: "Held",
              reason: "ConcurrencyGroupFull",
              blockedBy: a.metadata!.name!,
              message: `held: group ${GROUP_NAME} is at 2/2: Jobs ${a.metadata!.name!}, ${b.metadata!.name!}`,
              decidedAt: "2026-11-25T11:05:01Z",
            },
          ],
        },
      }),
      member("db-a"),
      member("db-b"),
      member("db-c", C_SLOT),
      a,
      b,
    ]);
    expectCause(r, "group-full", {
      verdict: [
        `run-now request "${request}" has not run: it waits for a place in group ${GROUP_NAME}, which is at 2/2`,
      ],
      evidence: [
        `status.recentRuns: ${request} RunNow Held (ConcurrencyGroupFull)`,
        `2 Jobs of its CronJobs hold its places (labelled ${CONCURRENCY_GROUP_LABEL}=${GROUP_NAME}): ${a.metadata!.name!} (CronJob db-a, running for 10h11m)`,
        `2 runs wait for a place, oldest first: db-c since ${C_SLOT}, ${NAME} since 2026-11-25T11:05:01Z`,
        `the run of ${NAME} is 2 of 2 in the group's queue, behind db-c`,
        `Job ${a.metadata!.name!}: started ${at(A_SLOT, 3).replace(".000Z", "Z")}`,
      ],
      fix: [
        "Wait: it starts when a Job of the group ends",
        `\`kubectl cron groups ${GROUP_NAME} -n ${NS}\``,
        `Look at the Job holding a place, ${a.metadata!.name!} of CronJob db-a`,
      ],
    });
    assert.deepEqual(r.d.request, { trigger: "RunNow", id: request });
    assert.equal(r.d.slot, undefined, "a run-now request has no slot");
    assert.ok(!r.d.fix.some((f) => f.includes("raise `startingDeadlineSeconds`")), "a request has no deadline");
    assert.equal(r.d.next?.blocked, `group ${GROUP_NAME} is at 2/2: it waits for a place`);
  });

  it("a suspended CronJob's backfill request waiting behind older runs of its group: said as its waiting slot", async () => {
    const server = await cluster([
      concurrencyGroup(GROUP_NAME, 2),
      cronJob({
        spec: { concurrencyGroup: GROUP_NAME, suspend: true },
        status: {
          lastScheduleTime: PREV_SLOT,
          recentRuns: [
            entry("2026-11-20T02:00:00Z", "Held", "ConcurrencyGroupQueue", {
              trigger: "Backfill",
              request: "bf-1",
              decidedAt: "2026-11-25T11:00:01Z",
            }),
          ],
        },
      }),
      member("db-a"),
      member("db-c", C_SLOT),
      groupJob("db-a", A_SLOT),
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "group-queue", {
      verdict: [
        `backfill "bf-1" for 2026-11-20 03:00 Europe/Berlin (2026-11-20T02:00:00Z) has not run: group ${GROUP_NAME} is at 1/2 and older runs of db-c wait for its next place first`,
      ],
      evidence: [`the run of ${NAME} is 2 of 2 in the group's queue, behind db-c`],
      fix: ["Wait: the group's runs take its places oldest first"],
    });
    assert.deepEqual(r.d.request, { trigger: "Backfill", id: "bf-1" });
    assert.equal(r.d.slot?.utc, "2026-11-20T02:00:00Z");
    // Asked about its slot, the suspension is still the answer.
    const slot = await why(server, `--slot=${SLOT}`);
    assert.equal(slot.d.cause, "suspended", slot.text);
  });
});

describe("diagnose(): groups, where the live layer adds nothing", () => {
  it("missed while waiting for a place in its group (Missed, blockedBy a Job of another CronJob): group-full", () => {
    const a = groupJob("db-a", A_SLOT);
    const b = groupJob("db-b", B_SLOT);
    const cj = cronJob({
      spec: { startingDeadlineSeconds: 300, concurrencyGroup: GROUP_NAME },
      status: {
        lastScheduleTime: PREV_SLOT,
        recentRuns: [
          entry(SLOT, "Missed", "StartingDeadlineExceeded", { blockedBy: a.metadata!.name!, decidedAt: at(SLOT, 301) }),
        ],
      },
    });
    const r = ask(facts(cj, { group: groupFacts({ running: [a, b] }) }));
    expectCause(r, "group-full", {
      verdict: [
        `did not run at ${SLOT_TEXT}: it waited for a place in group ${GROUP_NAME} (now at 2/2) until startingDeadlineSeconds (300) passed`,
      ],
      evidence: ["Missed (StartingDeadlineExceeded)", `behind Job ${a.metadata!.name}`, "limit 2; 2 Jobs"],
      fix: ["raise `startingDeadlineSeconds`", `kubectl cron why db-a -n ${NS}`],
    });
    assert.ok(!r.d.fix.some((x) => x.startsWith("Wait:")), "a missed slot waits no more");
    // Its own Job under Forbid held it, not the group: forbid-held, as without a group.
    const own = hungJob("backup-m1f2e3d4");
    own.metadata!.labels = { [CONCURRENCY_GROUP_LABEL]: GROUP_NAME };
    const forbid = cronJob({
      spec: { startingDeadlineSeconds: 300, concurrencyGroup: GROUP_NAME },
      status: {
        recentRuns: [entry(SLOT, "Missed", "StartingDeadlineExceeded", { blockedBy: "backup-m1f2e3d4" })],
      },
    });
    const held = ask(facts(forbid, { jobs: [own], group: groupFacts({ running: [own] }) }));
    assert.equal(held.d.cause, "forbid-held", held.d.verdict);
  });

  it("a group named that does not exist is said besides a slot that ran (the condition Degraded with it)", () => {
    const cj = cronJob({
      spec: { concurrencyGroup: "nosuch" },
      status: {
        recentRuns: [
          entry(SLOT, "Created", "Scheduled", { job: JOB, outcome: { result: "Complete", finishedAt: at(SLOT, 14) } }),
        ],
        conditions: [{ type: "Degraded", status: "True", reason: "ConcurrencyGroupNotFound", message: "names nosuch" }],
      },
    });
    const d = diagnose(facts(cj, { group: groupFacts({ name: "nosuch", exists: false, limit: undefined }) }));
    note(d);
    assert.equal(d.status, "healthy", d.verdict);
    assert.deepEqual(
      d.also.map((a) => a.cause),
      ["group-not-found"],
    );
    assert.equal(
      d.also[0]!.summary,
      `spec.concurrencyGroup names nosuch, which is not a ConcurrencyGroup of namespace ${NS}: its runs wait until it exists`,
    );
    assert.ok(d.also[0]!.evidence.includes("condition Degraded=True ConcurrencyGroupNotFound: names nosuch"));
    assert.equal(d.exitCode, 1);
    assert.equal(d.next?.blocked, "ConcurrencyGroup nosuch does not exist: it will not run until it does");
  });
});

describe("kubectl cron why NAME: exclusions (spec.exclusions)", () => {
  const HOLIDAYS = {
    apiVersion: API_VERSION,
    kind: CALENDAR_KIND,
    metadata: { name: "holidays-de", namespace: NS, creationTimestamp: "2026-11-01T00:00:00Z" },
    spec: { windows: [{ name: "Staff day", start: "2026-11-25" }] },
  } as KubeObject;
  const byCalendar = { exclusions: { calendars: ["holidays-de"] } };
  const skipped = (message: string, exclusion?: RecentRun["exclusion"], slot = SLOT) =>
    entry(slot, "Skipped", "ExcludedByCalendar", {
      message,
      decidedAt: at(slot, 1),
      ...(exclusion ? { exclusion } : {}),
    });

  it("excluded by a calendar it names: the calendar and its window, from the record and the calendar read now", async () => {
    const r = await whyIn([
      HOLIDAYS,
      cronJob({
        spec: byCalendar,
        status: {
          lastScheduleTime: PREV_SLOT,
          recentRuns: [
            skipped("excluded by calendar holidays-de: Staff day", {
              calendar: "holidays-de",
              window: "Staff day",
              firstSlot: SLOT,
              slots: 1,
            }),
          ],
        },
      }),
    ]);
    expectCause(r, "excluded", {
      verdict: [`did not run at ${SLOT_TEXT}: excluded by calendar holidays-de: Staff day`],
      evidence: [
        `status.recentRuns: ${SLOT} Schedule Skipped (ExcludedByCalendar), decided 2026-11-25T02:00:01Z, excluded by calendar holidays-de: Staff day`,
        `ExclusionCalendar holidays-de: the window "Staff day" holds ${SLOT_TEXT}, read in ${ZONE}`,
      ],
      fix: [
        `kubectl edit exclusioncalendar holidays-de -n ${NS}`,
        `kubectl cron backfill ${NAME} -n ${NS} --from=${SLOT} --to=${SLOT} --include-excluded`,
      ],
    });
    assert.equal(r.d.verdict, `did not run at ${SLOT_TEXT}: excluded by calendar holidays-de: Staff day`);
    assert.equal(r.d.next?.utc, "2026-11-26T02:00:00Z", "the next run: a slot no window holds");
    assert.ok(!r.d.fix.some((x) => x.includes("spec.exclusions.windows")), "a calendar's window, not its own");
  });

  it("a slot of a run of excluded slots one entry stands for; and one the record no longer holds, by the windows", () => {
    const freeze = { exclusions: { windows: [{ start: "2026-11-20", end: "2026-11-25" }] } };
    const message = "excluded by spec.exclusions: 2026-11-20 to 2026-11-25 (6 slots from 2026-11-20T02:00:00Z)";
    const cj = cronJob({
      spec: freeze,
      status: {
        lastScheduleTime: "2026-11-19T02:00:00Z",
        recentRuns: [
          skipped(message, { window: "2026-11-20 to 2026-11-25", firstSlot: "2026-11-20T02:00:00Z", slots: 6 }),
        ],
      },
    });
    const r = ask(facts(cj), new Date("2026-11-22T02:00:00Z"));
    expectCause(r, "excluded", {
      verdict: [
        "did not run at 2026-11-22 03:00 Europe/Berlin (2026-11-22T02:00:00Z): excluded by spec.exclusions: 2026-11-20 to 2026-11-25",
      ],
      evidence: [
        "the entry stands for the slots from 2026-11-20T02:00:00Z to 2026-11-25T02:00:00Z the same window held",
        'spec.exclusions.windows: the window "2026-11-20 to 2026-11-25" holds',
      ],
      fix: ["spec.exclusions.windows", "--include-excluded"],
    });
    // The record's entry gone: the windows read now still say why.
    const gone = ask(facts(cronJob({ spec: freeze, status: { lastScheduleTime: "2026-11-19T02:00:00Z" } })));
    expectCause(gone, "excluded", {
      verdict: [`did not run at ${SLOT_TEXT}: excluded by spec.exclusions: 2026-11-20 to 2026-11-25`],
      evidence: [`spec.exclusions.windows: the window "2026-11-20 to 2026-11-25" holds ${SLOT_TEXT}`],
      fix: [],
    });
    // A slot still to come that a window holds will not run.
    const later = ask(
      facts(cronJob({ spec: { exclusions: { windows: [{ name: "audit", start: "2026-11-26" }] } } })),
      new Date("2026-11-26T02:00:00Z"),
    );
    expectCause(later, "excluded", {
      verdict: [
        "will not run at 2026-11-26 03:00 Europe/Berlin (2026-11-26T02:00:00Z): excluded by spec.exclusions: audit",
      ],
      evidence: ['the window "audit" holds'],
      fix: [],
    });
  });

  it("an ExcludedByCalendar entry of an earlier version (its message only): still excluded; its words quoted", () => {
    const words = "excluded by calendar holidays-de: Staff day";
    const cj = cronJob({ spec: byCalendar, status: { lastScheduleTime: PREV_SLOT, recentRuns: [skipped(words)] } });
    const line = `status.recentRuns: ${SLOT} Schedule Skipped (ExcludedByCalendar), decided 2026-11-25T02:00:01Z, ${words}`;
    // The calendar still holds the slot: the window read now names it, as for an entry with its fields.
    const live = ask(
      facts(cj, {
        calendars: [{ name: "holidays-de", state: "found", windows: [{ name: "Staff day", start: "2026-11-25" }] }],
      }),
    );
    expectCause(live, "excluded", {
      verdict: [`did not run at ${SLOT_TEXT}: excluded by calendar holidays-de: Staff day`],
      evidence: [line, `ExclusionCalendar holidays-de: the window "Staff day" holds ${SLOT_TEXT}`],
      fix: [`kubectl edit exclusioncalendar holidays-de -n ${NS}`, "--include-excluded"],
    });
    // The window gone since: the entry's reason still says a window held the slot; its message is quoted, not read.
    const gone = ask(facts(cj, { calendars: [{ name: "holidays-de", state: "found", windows: [] }] }));
    expectCause(gone, "excluded", {
      verdict: [`did not run at ${SLOT_TEXT}: excluded by a window: ${words}`],
      evidence: [line],
      fix: [`kubectl cron backfill ${NAME} -n ${NS} --from=${SLOT} --to=${SLOT} --include-excluded`],
    });
  });

  it("a calendar it names does not exist: the slot is held until it does (Degraded, next run blocked)", async () => {
    const problem = missingCalendarProblem("holidays-de");
    const r = await whyIn([cronJob({ spec: byCalendar, status: heldByMissingCalendar("holidays-de") })]);
    expectCause(r, "calendar-not-found", {
      verdict: [
        `did not run at ${SLOT_TEXT}: spec.exclusions.calendars names holidays-de, which is not an ExclusionCalendar of namespace ${NS}: its slots are held until it exists`,
      ],
      evidence: [
        `Held (CalendarNotFound)`,
        `no ExclusionCalendar holidays-de in namespace ${NS}`,
        `condition Degraded=True CalendarNotFound: ${problem}`,
      ],
      fix: [`kubectl get exclusioncalendars -n ${NS}`, "startingDeadlineSeconds"],
    });
    assert.equal(r.d.next?.blocked, "ExclusionCalendar holidays-de does not exist: it will not run until it does");
  });

  it("a CalendarNotFound entry of an earlier version (its message only): still calendar-not-found; its words quoted", () => {
    const problem = missingCalendarProblem("holidays-de");
    const cj = cronJob({
      spec: byCalendar,
      status: {
        lastScheduleTime: PREV_SLOT,
        recentRuns: [entry(SLOT, "Held", "CalendarNotFound", { message: `held: ${problem}` })],
        conditions: [{ type: "Degraded", status: "True", reason: "CalendarNotFound", message: problem }],
      },
    });
    const line = `status.recentRuns: ${SLOT} Schedule Held (CalendarNotFound), decided 2026-11-25T02:00:02Z, held: ${problem}`;
    // Still missing: the calendar read now names it, as for an entry with its fields.
    const missing = ask(facts(cj, { calendars: [{ name: "holidays-de", state: "missing" }] }));
    expectCause(missing, "calendar-not-found", {
      verdict: [
        `did not run at ${SLOT_TEXT}: spec.exclusions.calendars names holidays-de, which is not an ${CALENDAR_KIND} of namespace ${NS}: its slots are held until it exists`,
      ],
      evidence: [line, `no ${CALENDAR_KIND} holidays-de in namespace ${NS}`],
      fix: [`kubectl get exclusioncalendars -n ${NS}`],
    });
    // It exists now: the entry's reason still says why the slot was held; which calendar, its words say (quoted).
    const created = ask(facts(cj, { calendars: [{ name: "holidays-de", state: "found", windows: [] }] }));
    expectCause(created, "calendar-not-found", {
      verdict: [`did not run at ${SLOT_TEXT}: `],
      evidence: [line, `condition Degraded=True CalendarNotFound: ${problem}`],
      fix: ["startingDeadlineSeconds"],
    });
  });

  it("a calendar whose windows do not parse; one missing besides a slot that ran; a slot held past its deadline", () => {
    const bad = [{ name: "holidays-de", state: "found" as const, windows: [{ start: "2026-11-31" }] }];
    const held = entry(SLOT, "Held", "CalendarNotFound", {
      message: "held: ...",
      exclusion: { calendar: "holidays-de", problem: "Invalid" },
    });
    const r = ask(facts(cronJob({ spec: byCalendar, status: { recentRuns: [held] } }), { calendars: bad }));
    expectCause(r, "calendar-not-found", {
      verdict: [
        `did not run at ${SLOT_TEXT}: ExclusionCalendar holidays-de cannot be read (spec.windows[0].start: Invalid value: "2026-11-31": no such day: November 2026 has 30 days): its slots are held until it is fixed`,
      ],
      evidence: ["Held (CalendarNotFound)"],
      fix: ["kubectl edit exclusioncalendar holidays-de -n prod"],
    });
    // The next slot: the calendar named, as the verdict names it.
    assert.equal(r.d.next?.blocked, "ExclusionCalendar holidays-de cannot be read: it will not run until it is fixed");
    // The slot ran before the calendar went: a finding besides, about the slots to come.
    const ran = cronJob({
      spec: byCalendar,
      status: {
        recentRuns: [
          entry(SLOT, "Created", "Scheduled", { job: JOB, outcome: { result: "Complete", finishedAt: at(SLOT, 14) } }),
        ],
      },
    });
    const d = diagnose(facts(ran, { calendars: [{ name: "holidays-de", state: "missing" }] }));
    note(d);
    assert.equal(d.status, "healthy", d.verdict);
    assert.deepEqual(
      d.also.map((a) => [a.cause, a.summary]),
      [
        [
          "calendar-not-found",
          `spec.exclusions.calendars names holidays-de, which is not an ExclusionCalendar of namespace ${NS}: its slots are held until it exists`,
        ],
      ],
    );
    assert.equal(d.exitCode, 1);
    // Held until its deadline passed: the record says Missed, the condition says why.
    const missed = cronJob({
      spec: { ...byCalendar, startingDeadlineSeconds: 300 },
      status: {
        recentRuns: [entry(SLOT, "Missed", "StartingDeadlineExceeded", { decidedAt: at(SLOT, 301) })],
        conditions: [{ type: "Degraded", status: "True", reason: "CalendarNotFound", message: "held: ..." }],
      },
    });
    const m = ask(facts(missed, { calendars: [{ name: "holidays-de", state: "missing" }] }));
    expectCause(m, "calendar-not-found", {
      verdict: [
        `did not run at ${SLOT_TEXT}: spec.exclusions.calendars names holidays-de, which is not an ExclusionCalendar of namespace ${NS}: the slot was held until startingDeadlineSeconds passed`,
      ],
      evidence: ["Missed (StartingDeadlineExceeded)"],
      fix: [],
    });
  });
});

producesItsCauses("groups-exclusions");
