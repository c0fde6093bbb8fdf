// `kubectl cron next`, `history` and `backfill` with the operator's exclusions and retries, through the plugin's own
// entry point (main()) against test/fake-apiserver.ts: the slots of the schedule as written with those an exclusion
// window holds marked by what holds them (the CronJob's own windows, an ExclusionCalendar it names, GET through the
// plugin's client), the next run the first slot none holds, a calendar missing said (the operator holds every slot)
// rather than thrown; a retry waiting for its delay, from the record; a retry's Job labelled with its attempt.
import assert from "node:assert/strict";
import { describe, it, mock } from "node:test";
import {
  API_VERSION,
  BACKFILL_ANNOTATION,
  CALENDAR_KIND,
  CRONJOB_NAME_LABEL,
  type Job,
  jobNameFor,
  KIND,
  type RecentRun,
  RETRY_ATTEMPT_ANNOTATION,
  RETRY_OF_ANNOTATION,
  exclusionsOf,
  retryJobName,
} from "../../api/v1/index.ts";
import { APIError } from "../../runtime/errors.ts";
import type { KubeObject } from "../../runtime/kinds.ts";
import { FakeAPIServer } from "../fake-apiserver.ts";
import { batchJob } from "../fixtures.ts";
import { pluginCluster } from "../plugin-cluster.ts";

/** Wednesday 2026-12-23, 13:00 in Berlin. */
const NOW = new Date("2026-12-23T12:00:00Z");
const NS = "prod";
const NAME = "backup";
const UID = "uid-backup";

/** "0 3 * * *" in Berlin; `spec` merged into its spec, `status` into its status. */
function cronJob(o: { spec?: Record<string, unknown>; status?: Record<string, unknown> } = {}): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name: NAME, namespace: NS, uid: UID, creationTimestamp: "2026-11-01T00:00:00Z" },
    spec: {
      schedule: "0 3 * * *",
      timeZone: "Europe/Berlin",
      concurrencyPolicy: "Forbid",
      jobTemplate: {
        spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "b", image: "b" }] } } },
      },
      ...o.spec,
    },
    status: { lastScheduleTime: "2026-12-23T02:00:00Z", ...o.status },
  } as KubeObject;
}

function calendar(name: string, windows: object[]): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: CALENDAR_KIND,
    metadata: { name, namespace: NS, creationTimestamp: "2026-11-01T00:00:00Z" },
    spec: { windows },
  } as KubeObject;
}

const { cluster, run } = pluginCluster(NS, NOW);

/** The calendar reads a command made (GET by name). */
const calendarReads = (server: FakeAPIServer) =>
  server.requests.filter((r) => r.method === "GET" && r.path.includes("/exclusioncalendars")).map((r) => r.path);

const CHRISTMAS = { exclusions: { windows: [{ name: "Christmas", start: "2026-12-24", end: "2026-12-26" }] } };
const HOLIDAYS = calendar("holidays-de", [
  { name: "Christmas Day", start: "2026-12-25" },
  { name: "Boxing Day", start: "2026-12-26" },
]);

describe("kubectl cron next: exclusions", () => {
  it("an inline window over the next slots: each marked by it, and the next run is the first it does not hold", async () => {
    const server = await cluster([cronJob({ spec: CHRISTMAS })]);
    const r = await run(server, ["next", NAME, "--count", "5"]);
    assert.equal(r.code, 0, r.err);
    assert.equal(
      r.out,
      [
        "next run: 2026-12-27T03:00:00+01:00 (2026-12-27T02:00:00Z); the slots before it are excluded",
        "NEXT (Europe/Berlin)        UTC                    EXCLUDED BY                  NOTE",
        "2026-12-24T03:00:00+01:00   2026-12-24T02:00:00Z   spec.exclusions: Christmas",
        "2026-12-25T03:00:00+01:00   2026-12-25T02:00:00Z   spec.exclusions: Christmas",
        "2026-12-26T03:00:00+01:00   2026-12-26T02:00:00Z   spec.exclusions: Christmas",
        "2026-12-27T03:00:00+01:00   2026-12-27T02:00:00Z   -",
        "2026-12-28T03:00:00+01:00   2026-12-28T02:00:00Z   -",
        "",
      ].join("\n"),
    );
    assert.equal(r.err, "");
    assert.deepEqual(calendarReads(server), [], "no calendar named, none read");
    const json = JSON.parse((await run(server, ["next", NAME, "--count", "5", "-o", "json"])).out) as {
      times: { utc: string; excluded?: { by: string; window: string } }[];
      nextRun: { utc: string } | null;
    };
    assert.deepEqual(json.times[0]!.excluded, { by: "spec.exclusions", window: "Christmas" });
    assert.equal(json.times[3]!.excluded, undefined);
    assert.equal(json.nextRun?.utc, "2026-12-27T02:00:00Z");
  });

  it("a calendar it names (GET once) and its own windows: each slot says which holds it; the first runs", async () => {
    const freeze = { name: "year-end freeze", start: "2026-12-28", end: "2027-01-02" };
    const server = await cluster([
      HOLIDAYS,
      cronJob({ spec: { exclusions: { calendars: ["holidays-de"], windows: [freeze] } } }),
    ]);
    const r = await run(server, ["next", NAME, "--count", "7"]);
    assert.equal(r.code, 0, r.err);
    assert.equal(
      r.out,
      [
        "NEXT (Europe/Berlin)        UTC                    EXCLUDED BY                           NOTE",
        "2026-12-24T03:00:00+01:00   2026-12-24T02:00:00Z   -",
        "2026-12-25T03:00:00+01:00   2026-12-25T02:00:00Z   calendar holidays-de: Christmas Day",
        "2026-12-26T03:00:00+01:00   2026-12-26T02:00:00Z   calendar holidays-de: Boxing Day",
        "2026-12-27T03:00:00+01:00   2026-12-27T02:00:00Z   -",
        "2026-12-28T03:00:00+01:00   2026-12-28T02:00:00Z   spec.exclusions: year-end freeze",
        "2026-12-29T03:00:00+01:00   2026-12-29T02:00:00Z   spec.exclusions: year-end freeze",
        "2026-12-30T03:00:00+01:00   2026-12-30T02:00:00Z   spec.exclusions: year-end freeze",
        "",
      ].join("\n"),
    );
    assert.deepEqual(calendarReads(server), [`/apis/${API_VERSION}/namespaces/${NS}/exclusioncalendars/holidays-de`]);
  });

  it("a calendar that does not exist is said, not thrown: the operator holds every slot until it does", async () => {
    const server = await cluster([
      HOLIDAYS,
      cronJob({ spec: { exclusions: { calendars: ["holidays-de", "nosuch"] } } }),
    ]);
    const r = await run(server, ["next", NAME, "--count", "3"]);
    assert.equal(r.code, 0, r.err);
    assert.equal(
      r.out,
      [
        "held: spec.exclusions.calendars names nosuch, which is not an ExclusionCalendar of namespace prod: slots are held until it exists",
        "NEXT (Europe/Berlin)        UTC                    EXCLUDED BY                           NOTE",
        "2026-12-24T03:00:00+01:00   2026-12-24T02:00:00Z   held",
        "2026-12-25T03:00:00+01:00   2026-12-25T02:00:00Z   calendar holidays-de: Christmas Day",
        "2026-12-26T03:00:00+01:00   2026-12-26T02:00:00Z   calendar holidays-de: Boxing Day",
        "",
      ].join("\n"),
    );
    const json = JSON.parse((await run(server, ["next", NAME, "-o", "json"])).out) as {
      nextRun: unknown;
      held: { calendar: string; missing: boolean };
    };
    assert.equal(json.nextRun, null);
    assert.deepEqual([json.held.calendar, json.held.missing], ["nosuch", true]);
  });

  it("a calendar the user may not read: the slots it would exclude are not marked, and stderr says so", async () => {
    const server = await cluster([HOLIDAYS, cronJob({ spec: { exclusions: { calendars: ["holidays-de"] } } })]);
    server.deny = (req) =>
      req.path.includes("/exclusioncalendars/")
        ? new APIError(403, "Forbidden", `exclusioncalendars is forbidden: User "dev" cannot get resource`)
        : undefined;
    const r = await run(server, ["next", NAME, "--count", "2"]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^2026-12-24T03:00:00\+01:00 {3}2026-12-24T02:00:00Z {3}\?$/m);
    assert.equal(
      r.err,
      "could not read ExclusionCalendar prod/holidays-de: forbidden: the slots it excludes are not marked (the operator reads it)\n",
    );
  });

  it("windows that do not parse hold the slots, as the operator holds them, naming the field", () => {
    const bad = exclusionsOf({ metadata: { namespace: NS }, spec: { exclusions: { calendars: ["holidays-de"] } } }, [
      { name: "holidays-de", state: "found", windows: [{ start: "2026-12-32" }] },
    ]);
    assert.equal(bad.exclusions, undefined);
    assert.equal(bad.hold?.calendar, "holidays-de");
    assert.equal(bad.hold?.missing, false);
    assert.match(bad.hold?.detail ?? "", /^spec\.windows\[0\]\.start: Invalid value: "2026-12-32"/);
    assert.match(
      bad.hold?.problem ?? "",
      /^ExclusionCalendar holidays-de: spec\.windows\[0\]\.start: .*: slots are held until it is fixed$/,
    );
  });
});

describe("kubectl cron next: a retry waiting for its delay", () => {
  const SLOT = "2026-12-23T02:00:00Z";
  const FIRST = jobNameFor(NAME, new Date(SLOT));
  const record: RecentRun[] = [
    {
      trigger: "Retry",
      scheduledTime: SLOT,
      request: "1/3",
      decision: "Held",
      reason: "RetryDelay",
      message: `attempt 1 of 3 starts at 2026-12-23T12:30:00Z: Job ${FIRST} failed (BackoffLimitExceeded); spec.retry.delaySeconds 1800`,
      decidedAt: "2026-12-23T12:00:05Z",
      attempt: { number: 1, of: 3, after: FIRST, failure: "BackoffLimitExceeded" },
      startsAt: "2026-12-23T12:30:00Z",
    },
    {
      trigger: "Schedule",
      scheduledTime: SLOT,
      decision: "Created",
      reason: "Scheduled",
      job: FIRST,
      decidedAt: "2026-12-23T02:00:02Z",
      outcome: { result: "Failed", reason: "BackoffLimitExceeded", finishedAt: "2026-12-23T12:00:00Z" },
    },
  ];

  it("says which attempt of which slot starts when, after which Job failed how", async () => {
    const retry = { limit: 3, delaySeconds: 1800 };
    const server = await cluster([cronJob({ spec: { retry }, status: { recentRuns: record } })]);
    const r = await run(server, ["next", NAME, "--count", "1"]);
    assert.equal(r.code, 0, r.err);
    assert.equal(
      r.out,
      [
        `retry: attempt 1 of 3 of 2026-12-23T03:00:00+01:00 starts at 2026-12-23T13:30:00+01:00 (2026-12-23T12:30:00Z): Job ${FIRST} failed (BackoffLimitExceeded)`,
        "NEXT (Europe/Berlin)        UTC                    NOTE",
        "2026-12-24T03:00:00+01:00   2026-12-24T02:00:00Z",
        "",
      ].join("\n"),
    );
    const json = JSON.parse((await run(server, ["next", NAME, "-o", "json"])).out) as { retries: unknown[] };
    assert.deepEqual(json.retries, [
      {
        trigger: "retry",
        scheduledTime: SLOT,
        attempt: 1,
        limit: 3,
        startsAt: "2026-12-23T12:30:00Z",
        failedJob: FIRST,
        failure: "BackoffLimitExceeded",
      },
    ]);
  });

  it("one held behind a running Job says what it waits for", async () => {
    // Held behind a Job, as the operator writes it: the attempt and the Job it follows, no delay's time.
    const { startsAt: _startsAt, ...delayed } = record[0]!;
    const behind: RecentRun = {
      ...delayed,
      reason: "ConcurrencyPolicyForbid",
      blockedBy: "backup-other",
      message: "attempt 1 of 3 waits",
      attempt: { number: 1, of: 3, after: FIRST },
    };
    const server = await cluster([
      cronJob({ spec: { retry: { limit: 3 } }, status: { recentRuns: [behind, record[1]!] } }),
    ]);
    const r = await run(server, ["next", NAME, "--count", "1"]);
    // The Job it follows is a field of every Retry entry now (it was in the words of the delay's entry only).
    assert.match(
      r.out,
      new RegExp(
        `^retry: attempt 1 of 3 of 2026-12-23T03:00:00\\+01:00 waits: concurrencyPolicy Forbid and a running Job \\(Job backup-other\\): Job ${FIRST} failed$`,
        "m",
      ),
    );
  });

  it("an entry of an earlier version (request k/N and a message only): which attempt of which slot, waiting", async () => {
    const { attempt: _attempt, startsAt: _startsAt, ...earlier } = record[0]!;
    const retry = { limit: 3, delaySeconds: 1800 };
    const server = await cluster([cronJob({ spec: { retry }, status: { recentRuns: [earlier, record[1]!] } })]);
    const r = await run(server, ["next", NAME, "--count", "1"]);
    assert.equal(r.code, 0, r.err);
    // Its message is for people: when it starts and after which failure are not read from it.
    assert.match(r.out, /^retry: attempt 1 of 3 of 2026-12-23T03:00:00\+01:00 waits for its delay$/m);
    const json = JSON.parse((await run(server, ["next", NAME, "-o", "json"])).out) as { retries: unknown[] };
    assert.deepEqual(json.retries, [{ trigger: "retry", scheduledTime: SLOT, attempt: 1, limit: 3 }]);
  });

  it("none once spec.retry is unset (the operator retries nothing)", async () => {
    const server = await cluster([cronJob({ status: { recentRuns: record } })]);
    const r = await run(server, ["next", NAME, "--count", "1"]);
    assert.doesNotMatch(r.out, /retry/);
  });
});

describe("kubectl cron history: retries", () => {
  it("a retry's Job is labelled a retry, with its attempt", async () => {
    const slot = "2026-12-23T02:00:00Z";
    const first = jobNameFor(NAME, new Date(slot));
    const retryName = retryJobName(NAME, first, 1);
    const job = (name: string, o: { state: "failed" | "active"; annotations?: Record<string, string> }): Job => {
      const j = batchJob({
        name,
        namespace: NS,
        owner: { name: NAME, uid: UID },
        slot,
        labels: { [CRONJOB_NAME_LABEL]: NAME },
        state: o.state,
        start: "2026-12-23T02:00:02Z",
        ...(o.state === "failed" ? { end: "2026-12-23T02:10:00Z" } : {}),
        ...(o.annotations ? { annotations: o.annotations } : {}),
      });
      j.metadata!.creationTimestamp = "2026-12-23T02:00:02Z";
      return j;
    };
    const server = await cluster([
      cronJob({ spec: { retry: { limit: 3 } } }),
      job(first, { state: "failed", annotations: { [RETRY_ATTEMPT_ANNOTATION]: "0/3" } }),
      job(retryName, {
        state: "active",
        annotations: { [RETRY_ATTEMPT_ANNOTATION]: "1/3", [RETRY_OF_ANNOTATION]: first },
      }),
    ]);
    const r = await run(server, ["history", NAME]);
    assert.equal(r.code, 0, r.err);
    const rows = r.out
      .trim()
      .split("\n")
      .map((l) => l.split(/ {3,}/));
    assert.deepEqual(
      rows.map((c) => c.slice(0, 4)),
      [
        ["NAME", "TRIGGER", "SCHEDULED", "RESULT"],
        [first, "scheduled", slot, "Failed"],
        [retryName, "retry 1/3", slot, "Running"],
      ],
    );
    const json = JSON.parse((await run(server, ["history", NAME, "-o", "json"])).out) as {
      items: { name: string; trigger: string; attempt?: string; retryOf?: string }[];
    };
    assert.deepEqual(json.items[1], { ...json.items[1], trigger: "retry", attempt: "1/3", retryOf: first });
    assert.equal(json.items[0]!.attempt, undefined);
  });
});

describe("kubectl cron backfill: exclusions", () => {
  it("--dry-run skips the slots a window holds, as the operator does; --include-excluded asks it to run them", async () => {
    const server = await cluster([cronJob({ spec: CHRISTMAS, status: { lastScheduleTime: "2026-12-27T02:00:00Z" } })]);
    mock.timers.setTime(Date.parse("2026-12-28T12:00:00Z"));
    const range = ["--from=2026-12-23T00:00:00Z", "--to=2026-12-27T23:00:00Z"];
    const dry = await run(server, ["backfill", NAME, ...range, "--dry-run"]);
    assert.equal(dry.code, 0, dry.err);
    const actions = dry.out
      .trim()
      .split("\n")
      .slice(1)
      .map((l) => l.split(/ {3,}/).at(-1));
    assert.deepEqual(actions, [
      "run",
      "skip: excluded by spec.exclusions: Christmas",
      "skip: excluded by spec.exclusions: Christmas",
      "skip: excluded by spec.exclusions: Christmas",
      "run",
    ]);
    assert.match(dry.err, /dry run: 2 of 5 slots would run \(3 excluded: --include-excluded runs them\)/);
    const asked = await run(server, ["backfill", NAME, ...range]);
    assert.equal(asked.code, 0, asked.err);
    assert.match(asked.out, /requested: 2 slots \(3 more excluded: skipped\) from/);
    const all = await run(server, ["backfill", NAME, ...range, "--include-excluded"]);
    assert.equal(all.code, 0, all.err);
    assert.match(all.out, /requested: 5 slots from/);
    const [stored] = await server.objects(server.kindOf(API_VERSION, KIND), NS);
    const value = JSON.parse(stored!.metadata!.annotations![BACKFILL_ANNOTATION]!) as { includeExcluded?: boolean };
    assert.equal(value.includeExcluded, true);
  });
});
