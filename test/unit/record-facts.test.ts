// Facts are fields, messages are for people (issue 55): what the operator decided is read from the record's fields
// and the Jobs' annotations, never taken back out of the words it wrote. Two guards: the product's source has no
// regular expression (or string search) over a message of the operator's own, and `kubectl cron why` says the same
// cause, fix and exit code when every message the operator wrote is reworded.
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import {
  API_VERSION,
  ENDED_MESSAGE_ANNOTATION,
  ENDED_PODS_ANNOTATION,
  ENDED_REASON_ANNOTATION,
  KIND,
  type CronJob,
  type Job,
  type RecentRun,
} from "../../api/v1/index.ts";
import { retryEntryOf } from "../../cmd/kubectl-cron/answer/retries.ts";
import { diagnose } from "../../cmd/kubectl-cron/answer/why.ts";
import type { WhyFacts } from "../../cmd/kubectl-cron/model/facts.ts";
import { PROJECT_ROOT } from "../../envtest/index.ts";
import { whyFacts } from "../why-facts.ts";

// --- the source ----------------------------------------------------------------------------------------------

/** The product's directories (tests, fixtures and generated files are not the product). */
const PRODUCT = ["api", "controllers", "webhooks", "runtime", "cmd", "hack", "envtest", "bench"];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === "node_modules" ? [] : sources(p);
    return p.endsWith(".ts") ? [p] : [];
  });
}

/**
 * A line that searches a message's text: a regular expression's exec/test over something named message, or a
 * string method (match, replace, split, startsWith, includes, …) called on one. Messages of others (the API server's,
 * an Error's) are read where nothing structured says the same; each such place is listed below with why.
 */
const SEARCHES_MESSAGE = [
  /\.(exec|test)\([^)]*\bmessage\b/i,
  /\bmessage\)?(\?\?\s*"")?\)?\s*\??\.(match|matchAll|replace|replaceAll|split|search|startsWith|endsWith|includes|indexOf)\(/i,
  /ENDED_MESSAGE_ANNOTATION\]\)?(\s*\?\?\s*"")?\)?\s*\.(match|matchAll|replace|replaceAll|split|search|startsWith|endsWith|includes|indexOf)\(/,
];

/** Messages the product reads that are not the operator's own, by file and the text of the line. */
const OTHERS_MESSAGES: readonly { file: string; line: RegExp; whose: string }[] = [
  {
    file: "webhooks/jobtemplate_dryrun.ts",
    line: /strict decoding error|unknown field|message === text \|\| message\.startsWith/,
    whose: "the API server's: a dry-run's strict-decoding warning and its field errors have no structured form",
  },
  {
    file: "cmd/flags.ts",
    line: /TypeError \\\[/,
    whose: "Node's: util.parseArgs' error, its code prefix dropped for the user",
  },
  {
    file: "hack/build-image.ts",
    line: /not a dynamic executable/,
    whose: "ldd's: a static binary has no libraries to copy into the image",
  },
];

describe("facts are fields: no code reads a message the operator wrote", () => {
  it("the product's source searches no message but the API server's and Node's (each listed with why)", () => {
    const hits: string[] = [];
    for (const dir of PRODUCT) {
      for (const file of sources(join(PROJECT_ROOT, dir))) {
        const rel = relative(PROJECT_ROOT, file);
        readFileSync(file, "utf8")
          .split("\n")
          .forEach((text, i) => {
            if (!SEARCHES_MESSAGE.some((re) => re.test(text))) return;
            if (OTHERS_MESSAGES.some((o) => o.file === rel && o.line.test(text))) return;
            hits.push(`${rel}:${i + 1}: ${text.trim()}`);
          });
      }
    }
    assert.deepEqual(hits, [], "read the fact from a field (api/v1/recentruns.ts) or an annotation instead");
  });

  it("the guard sees the searches it is for (each pattern, on the lines this project had)", () => {
    for (const line of [
      'const m = EXCLUDED_WORDS.exec(e.message ?? "");',
      "const failed = FAILED.exec(message);",
      'if (newest?.message?.replace(EXCLUDED_RUN, "") === what) {',
      'noPod: /no Pod was created/.test(pods ?? message ?? ""),',
      "const words = job.metadata.annotations[ENDED_MESSAGE_ANNOTATION].split(': ');",
    ])
      assert.ok(
        SEARCHES_MESSAGE.some((re) => re.test(line)),
        line,
      );
  });
});

// --- the verdicts ------------------------------------------------------------------------------------------------

const NOW = new Date("2026-11-25T11:12:00Z");
const NS = "prod";
const NAME = "backup";
const SLOT = "2026-11-25T02:00:00Z";
const JOB = "backup-1795572000";
const at = (t: string, seconds: number) => new Date(Date.parse(t) + seconds * 1000).toISOString();

function cronJob(spec: Record<string, unknown>, recentRuns: RecentRun[], conditions: unknown[] = []): CronJob {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name: NAME, namespace: NS, uid: "uid-backup", creationTimestamp: "2026-11-01T00:00:00Z" },
    spec: {
      schedule: "0 2 * * *",
      timeZone: "UTC",
      concurrencyPolicy: "Forbid",
      jobTemplate: {
        spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "backup", image: "backup:1" }] } } },
      },
      ...spec,
    },
    status: { lastScheduleTime: SLOT, recentRuns, conditions },
  } as unknown as CronJob;
}

const facts = (cj: CronJob, o: Partial<WhyFacts> = {}): WhyFacts => whyFacts(cj, NOW, o);

/** A Job of the CronJob for SLOT that the operator ended for StartTimeout (Failed, DeadlineExceeded). */
function endedJob(pods: string): Job {
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: JOB,
      namespace: NS,
      uid: "uid-job",
      creationTimestamp: at(SLOT, 1),
      annotations: {
        "batch.tutorial.kubebuilder.io/scheduled-at": SLOT,
        [ENDED_REASON_ANNOTATION]: "StartTimeout",
        [ENDED_PODS_ANNOTATION]: pods,
        [ENDED_MESSAGE_ANNOTATION]: "container backup: ErrImagePull (pull access denied)",
      },
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: KIND,
          name: NAME,
          uid: "uid-backup",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { activeDeadlineSeconds: 61, template: {} },
    status: {
      startTime: at(SLOT, 1),
      failed: 1,
      conditions: [{ type: "Failed", status: "True", reason: "DeadlineExceeded", lastTransitionTime: at(SLOT, 62) }],
    },
  } as unknown as Job;
}

/** The slot's Created entry (JOB, decided a second after the slot), with `o`. */
const created = (o: Partial<RecentRun> = {}): RecentRun => ({
  trigger: "Schedule",
  scheduledTime: SLOT,
  decision: "Created",
  reason: "Scheduled",
  decidedAt: at(SLOT, 1),
  job: JOB,
  ...o,
});

/** Each kind of entry whose facts were once words, as the operator writes it now, and what else the slot needs. */
const CASES: { name: string; f: () => WhyFacts; cause: string }[] = [
  {
    name: "an excluded run of slots (exclusion: calendar, window, first slot, count)",
    cause: "excluded",
    f: () =>
      facts(
        cronJob({ schedule: "0 * * * *", exclusions: { calendars: ["freeze"] } }, [
          {
            trigger: "Schedule",
            scheduledTime: "2026-11-25T11:00:00Z",
            decision: "Skipped",
            reason: "ExcludedByCalendar",
            decidedAt: "2026-11-25T11:00:01Z",
            message:
              "excluded by calendar freeze: 2026-11-25T00:00Z/2026-11-26T00:00Z (12 slots from 2026-11-25T00:00:00Z)",
            exclusion: {
              calendar: "freeze",
              window: "2026-11-25T00:00Z/2026-11-26T00:00Z",
              firstSlot: "2026-11-25T00:00:00Z",
              slots: 12,
            },
          },
        ]),
        { calendars: [{ name: "freeze", state: "found", windows: [] }] },
      ),
  },
  {
    name: "a calendar that does not exist (exclusion.problem NotFound)",
    cause: "calendar-not-found",
    f: () =>
      facts(
        cronJob({ exclusions: { calendars: ["holidays"] } }, [
          {
            trigger: "Schedule",
            scheduledTime: SLOT,
            decision: "Held",
            reason: "CalendarNotFound",
            decidedAt: at(SLOT, 1),
            message:
              "held: spec.exclusions.calendars names holidays, which is not an ExclusionCalendar of namespace prod",
            exclusion: { calendar: "holidays", problem: "NotFound" },
          },
        ]),
        { calendars: [{ name: "holidays", state: "found", windows: [] }] },
      ),
  },
  {
    name: "a retry waiting for its delay (attempt, startsAt)",
    cause: "retry-pending",
    f: () =>
      facts(
        cronJob({ retry: { limit: 2, delaySeconds: 36000 } }, [
          {
            trigger: "Retry",
            scheduledTime: SLOT,
            request: "1/2",
            decision: "Held",
            reason: "RetryDelay",
            decidedAt: at(SLOT, 120),
            message: `attempt 1 of 2 starts at ${at(SLOT, 36_120)}: Job ${JOB} failed (BackoffLimitExceeded); spec.retry.delaySeconds 36000`,
            attempt: { number: 1, of: 2, after: JOB, failure: "BackoffLimitExceeded" },
            startsAt: at(SLOT, 36_120),
          },
          created({ outcome: { result: "Failed", reason: "BackoffLimitExceeded", finishedAt: at(SLOT, 120) } }),
        ]),
      ),
  },
  {
    name: "a run the operator ended, its Job gone (outcome.pods ImagePull)",
    cause: "start-timeout",
    f: () =>
      facts(
        cronJob({ startTimeoutSeconds: 60 }, [
          created({
            outcome: {
              result: "Failed",
              reason: "StartTimeout",
              message: "container backup: ErrImagePull (pull access denied)",
              finishedAt: at(SLOT, 62),
              pods: "ImagePull",
            },
          }),
        ]),
      ),
  },
  {
    name: "a run the operator ended, its Job kept (ended-pods NoPod)",
    cause: "start-timeout",
    f: () => facts(cronJob({ startTimeoutSeconds: 60 }, [created()]), { jobs: [endedJob("NoPod")] }),
  },
];

/** The facts with every message the operator wrote reworded: the record's, its outcomes', the Jobs' ended-message. */
function reworded(f: WhyFacts): WhyFacts {
  const runs = (f.cronJob.status?.recentRuns ?? []).map((e) => ({
    ...e,
    ...(e.message !== undefined ? { message: "reworded" } : {}),
    ...(e.outcome ? { outcome: { ...e.outcome, ...(e.outcome.message ? { message: "reworded" } : {}) } } : {}),
  }));
  const jobs = f.jobs.map((j) => {
    const a = j.metadata?.annotations;
    return a?.[ENDED_MESSAGE_ANNOTATION] === undefined
      ? j
      : { ...j, metadata: { ...j.metadata, annotations: { ...a, [ENDED_MESSAGE_ANNOTATION]: "reworded" } } };
  });
  return { ...f, cronJob: { ...f.cronJob, status: { ...f.cronJob.status, recentRuns: runs } } as CronJob, jobs };
}

/** Every message reworded() rewords. */
function messagesOf(f: WhyFacts): string[] {
  const runs = f.cronJob.status?.recentRuns ?? [];
  return [
    ...runs.flatMap((e) => [e.message, e.outcome?.message]),
    ...f.jobs.map((j) => j.metadata?.annotations?.[ENDED_MESSAGE_ANNOTATION]),
  ].filter((m): m is string => m !== undefined);
}

describe("facts are fields: a reworded message changes no verdict", () => {
  for (const c of CASES) {
    it(`${c.name}: the same answer, but for the words it quotes`, () => {
      const before = diagnose(c.f());
      assert.equal(before.cause, c.cause, before.verdict);
      const after = diagnose(reworded(c.f()));
      // The whole answer, where it quotes a message quoting the new words: nothing else may move.
      let expected = JSON.stringify(before);
      for (const m of messagesOf(c.f())) expected = expected.split(JSON.stringify(m).slice(1, -1)).join("reworded");
      assert.deepEqual(after, JSON.parse(expected));
    });
  }

  it("a retry's facts come from its fields: which attempt after which Job, when it starts, what superseded it", () => {
    const base = {
      trigger: "Retry",
      scheduledTime: SLOT,
      request: "2/3",
      decidedAt: at(SLOT, 60),
      message: "reworded",
      attempt: { number: 2, of: 3, after: `${JOB}-r1`, failure: "DeadlineExceeded" },
    } as const;
    const held = retryEntryOf({ ...base, decision: "Held", reason: "RetryDelay", startsAt: at(SLOT, 600) });
    assert.deepEqual(
      { k: held?.k, n: held?.n, failedJob: held?.failedJob, failure: held?.failure, startsAt: held?.startsAt },
      { k: 2, n: 3, failedJob: `${JOB}-r1`, failure: "DeadlineExceeded", startsAt: new Date(at(SLOT, 600)) },
    );
    const skipped = retryEntryOf({
      ...base,
      decision: "Skipped",
      reason: "RetrySuperseded",
      supersededBy: at(SLOT, 86_400),
    });
    assert.deepEqual(skipped?.newerRun, new Date(at(SLOT, 86_400)));
    // An earlier version's entry (its facts in its message only): its attempt still reads from its request.
    const old = retryEntryOf({
      trigger: "Retry",
      scheduledTime: SLOT,
      request: "1/2",
      decision: "Held",
      reason: "RetryDelay",
      decidedAt: at(SLOT, 60),
      message: `attempt 1 of 2 starts at ${at(SLOT, 600)}: Job ${JOB} failed (BackoffLimitExceeded)`,
    });
    assert.deepEqual(
      { k: old?.k, n: old?.n, startsAt: old?.startsAt, failedJob: old?.failedJob },
      { k: 1, n: 2, startsAt: undefined, failedJob: undefined },
    );
  });
});
