// `kubectl cron` for a CronJob with several schedules (spec.schedule plus the more-schedules annotation): next
// shows the union's slots with the schedules each came from, history the schedules a Job names, backfill the
// union's slots. A one-schedule CronJob's output is unchanged (test/unit/kubectl-cron.test.ts).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type CronJob,
  type Job,
  MORE_SCHEDULES_ANNOTATION,
  moreSchedulesValue,
  SCHEDULE_SOURCES_ANNOTATION,
  scheduleSourcesOf,
  scheduleSourcesValue,
} from "../../api/v1/index.ts";
import { parseCommandLine } from "../../cmd/kubectl-cron/model/args.ts";
import { backfill, history, list, next } from "../../cmd/kubectl-cron/commands/commands.ts";
import type { Context } from "../../cmd/kubectl-cron/model/context.ts";
import type { Client } from "../../runtime/client.ts";
import { batchJob } from "../fixtures.ts";

const cronJob = (more: unknown[] | undefined, schedule = "0 9 * * *") =>
  ({
    apiVersion: "batch.tutorial.kubebuilder.io/v1",
    kind: "CronJob",
    metadata: {
      name: "backup",
      namespace: "prod",
      uid: "u",
      creationTimestamp: "2026-01-01T00:00:00Z",
      ...(more ? { annotations: { [MORE_SCHEDULES_ANNOTATION]: moreSchedulesValue(more) } } : {}),
    },
    spec: { schedule, timeZone: "Europe/Berlin", jobTemplate: { spec: { template: { spec: {} } } } },
  }) as unknown as CronJob;

const ctxFor = (obj: CronJob, jobs: Job[] = [], now = "2026-03-27T10:17:00Z"): Context => ({
  client: {
    get: async () => obj,
    list: async () => ({ items: jobs, metadata: {} }),
  } as unknown as Client,
  namespace: "prod",
  now: () => new Date(now),
  sleep: async () => undefined,
});

const args = (...argv: string[]) => {
  const a = parseCommandLine(argv);
  assert.ok(a !== "help");
  return a;
};

const THREE = [{ schedule: "0 9 * * *", timeZone: "America/New_York" }, { schedule: "0 8 * * *" }];

describe("kubectl cron next: several schedules", () => {
  it("lists the union's slots, each in its schedule's zone, a shared second once with both schedules", async () => {
    const out = await next(ctxFor(cronJob(THREE)), args("next", "backup", "--count", "5"));
    assert.equal(
      out.text,
      [
        "NEXT                        UTC                    SCHEDULE                               NOTE",
        "2026-03-27T09:00:00-04:00   2026-03-27T13:00:00Z   0 9 * * * (America/New_York)",
        "2026-03-28T09:00:00+01:00   2026-03-28T08:00:00Z   0 9 * * * (Europe/Berlin); 0 8 * * *",
        "2026-03-28T09:00:00-04:00   2026-03-28T13:00:00Z   0 9 * * * (America/New_York)",
        "2026-03-29T09:00:00+02:00   2026-03-29T07:00:00Z   0 9 * * * (Europe/Berlin)              offset changed +01:00 → +02:00",
        "2026-03-29T08:00:00Z        2026-03-29T08:00:00Z   0 8 * * *",
        "",
      ].join("\n"),
    );
    const json = out.json as { times: { utc: string; sources: { index: number }[] }[] };
    assert.deepEqual(
      json.times.map((t) => `${t.utc} ${t.sources.map((s) => s.index).join(",")}`),
      [
        "2026-03-27T13:00:00Z 1",
        "2026-03-28T08:00:00Z 0,2",
        "2026-03-28T13:00:00Z 1",
        "2026-03-29T07:00:00Z 0",
        "2026-03-29T08:00:00Z 2",
      ],
    );
  });

  it("says what an H schedule runs as, and reports an annotation that does not parse", async () => {
    const out = await next(ctxFor(cronJob([{ schedule: "H 3 * * *" }])), args("next", "backup", "--count", "2"));
    assert.match(
      out.text,
      /^schedule "H 3 \* \* \*" runs as "\d+ 3 \* \* \*" \(H is hashed from namespace\/name\)\nNEXT/,
    );
    const broken = cronJob(undefined);
    broken.metadata.annotations = { [MORE_SCHEDULES_ANNOTATION]: "[" };
    await assert.rejects(
      next(ctxFor(broken), args("next", "backup")),
      new RegExp(
        `has no next run: metadata\\.annotations\\[${MORE_SCHEDULES_ANNOTATION.replaceAll(".", "\\.")}\\]: Invalid value: "\\["`,
      ),
    );
  });

  it("one schedule: the table as before", async () => {
    const out = await next(ctxFor(cronJob(undefined)), args("next", "backup", "--count", "1"));
    assert.equal(
      out.text,
      "NEXT (Europe/Berlin)        UTC                    NOTE\n2026-03-28T09:00:00+01:00   2026-03-28T08:00:00Z\n",
    );
  });
});

describe("kubectl cron history: the schedules a Job ran for", () => {
  const owner = { name: "backup", uid: "u" };
  const sources = scheduleSourcesValue([
    { index: 0, schedule: "0 9 * * *", timeZone: "Europe/Berlin" },
    { index: 2, schedule: "0 8 * * *" },
  ]);

  it("a SCHEDULE column when a listed Job names its schedules, '-' for one that does not", async () => {
    const jobs = [
      batchJob({
        name: "backup-1772352000",
        owner,
        slot: "2026-03-01T08:00:00Z",
        annotations: { [SCHEDULE_SOURCES_ANNOTATION]: sources },
      }),
      batchJob({ name: "backup-1772265600", owner, slot: "2026-02-28T08:00:00Z" }),
    ];
    const out = await history(ctxFor(cronJob(THREE), jobs), args("history", "backup"));
    assert.equal(
      out.text,
      [
        "NAME                TRIGGER     SCHEDULED              SCHEDULE                               RESULT    STARTED   DURATION",
        "backup-1772265600   scheduled   2026-02-28T08:00:00Z   -                                      Running   -         -",
        "backup-1772352000   scheduled   2026-03-01T08:00:00Z   0 9 * * * (Europe/Berlin); 0 8 * * *   Running   -         -",
        "",
      ].join("\n"),
    );
    assert.deepEqual(scheduleSourcesOf(jobs[0]!), [
      { index: 0, schedule: "0 9 * * *", timeZone: "Europe/Berlin" },
      { index: 2, schedule: "0 8 * * *" },
    ]);
  });

  it("no column when no Job names schedules; a malformed annotation names none", async () => {
    const jobs = [batchJob({ name: "backup-1772265600", owner, slot: "2026-02-28T08:00:00Z" })];
    const out = await history(ctxFor(cronJob(undefined), jobs), args("history", "backup"));
    assert.ok(out.text.startsWith("NAME                TRIGGER     SCHEDULED              RESULT"), out.text);
    const odd = batchJob({ name: "x", annotations: { [SCHEDULE_SOURCES_ANNOTATION]: '[{"index":"0"}]' } });
    assert.equal(scheduleSourcesOf(odd), undefined);
  });
});

describe("kubectl cron backfill: several schedules", () => {
  it("--dry-run lists the union's slots with the schedules each came from", async () => {
    const out = await backfill(
      ctxFor(cronJob(THREE), [], "2026-03-10T00:00:00Z"),
      args("backfill", "backup", "--from=2026-03-01T00:00:00Z", "--to=2026-03-02T12:00:00Z", "--dry-run"),
    );
    assert.equal(
      out.text,
      [
        "SLOT (UTC)             JOB                 SCHEDULE                               ACTION",
        "2026-03-01T08:00:00Z   backup-1772352000   0 9 * * * (Europe/Berlin); 0 8 * * *   run",
        "2026-03-01T14:00:00Z   backup-1772373600   0 9 * * * (America/New_York)           run",
        "2026-03-02T08:00:00Z   backup-1772438400   0 9 * * * (Europe/Berlin); 0 8 * * *   run",
        "",
      ].join("\n"),
    );
    assert.match(out.notes!.join(), /3 of 3 slots would run/);
  });

  it("counts the union's slots against the limit, a shared second once", async () => {
    // Every slot of "0 */2 * * *" (Berlin, whole-hour offsets) is one of "0 * * * *": the union is hourly. 1000
    // hours hold 1000 slots of the union (1500 if a shared second counted twice); one more hour is too many.
    const within = await backfill(
      ctxFor(cronJob([{ schedule: "0 * * * *" }], "0 */2 * * *"), [], "2026-03-10T00:00:00Z"),
      args("backfill", "backup", "--from=2026-01-01T00:00:00Z", "--to=2026-02-11T15:00:00Z", "--dry-run"),
    );
    assert.match(within.notes?.join("\n") ?? "", /dry run: 1000 of 1000 slots would run/);
    await assert.rejects(
      backfill(
        ctxFor(cronJob([{ schedule: "0 * * * *" }], "0 */2 * * *"), [], "2026-03-10T00:00:00Z"),
        args("backfill", "backup", "--from=2026-01-01T00:00:00Z", "--to=2026-02-11T16:00:00Z"),
      ),
      /holds more than 1000 slots; at most 1000/,
    );
  });
});

describe("kubectl cron list: a CronJob with several schedules", () => {
  it("shows every schedule with its zone in SCHEDULE, and one schedule as before", async () => {
    const listing = (obj: CronJob) =>
      list(
        {
          ...ctxFor(obj),
          client: { list: async () => ({ items: [obj], metadata: {} }) } as unknown as Client,
        },
        args("list"),
      );
    const several = (await listing(cronJob(THREE))).text.split("\n");
    assert.match(several[0]!, /^NAME +SCHEDULE +TIMEZONE +SUSPEND/);
    assert.match(
      several[1]!,
      /^backup +0 9 \* \* \* \(Europe\/Berlin\); 0 9 \* \* \* \(America\/New_York\); 0 8 \* \* \* +- +false /,
    );
    const one = (await listing(cronJob(undefined))).text.split("\n");
    assert.match(one[1]!, /^backup +0 9 \* \* \* +Europe\/Berlin +false /);
  });
});
