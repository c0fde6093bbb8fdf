// End to end, issue 46 on a real node: (1) an exclusion window of spec.exclusions over two slots of an every-minute
// CronJob: `kubectl cron next` marks them and names the next run, no Job runs for them while the slots around them
// run, the record has one coalesced Skipped/ExcludedByCalendar entry, and `kubectl cron why --slot` explains each;
// beside it the same window in an ExclusionCalendar, edited after its first slot was recorded (at its time): that
// slot never runs (issue 53);
// (2) spec.retry: a slot whose Job fails is run again as two new Jobs (named from the first, annotated, each
// delaySeconds after the failure before it), never a third, with the leader SIGKILLed between the first failure and
// the second retry; `kubectl cron why` and `next` say the pending attempt while it waits, and the record ends with
// both attempts. Needs root (the node); `make test-e2e`.
//
// The windows are local wall clock (UTC here: no spec.timeZone); (1) uses "* * * * *" and a window of two whole
// minutes. (2) is disruptive: it shares one leader death with the concurrency group's suite (leader-death.ts; run.ts
// runs them together, in DISRUPTIONS' order). Its CronJob fires once in the
// test (a cron for one minute of the year) with concurrencyPolicy Allow: under Forbid or Replace a retry is
// superseded once a newer slot's run starts, and a suspended CronJob runs no retries.
import assert from "node:assert/strict";
import { it } from "node:test";
import { RETRY_ATTEMPT_ANNOTATION, RETRY_OF_ANNOTATION, retryJobName } from "../../api/v1/index.ts";
import { eventually } from "../eventually.ts";
import { type K8sObject, conditionTrue, recordOf, sleep } from "./cluster-tools.ts";
import { LEADER_KILLED } from "./disruptions.ts";
import { leaderDeath, settled, successorOf } from "./leader-death.ts";
import { CRONJOBS, SCHEDULED_AT, e2eDescribe, e2eSuite } from "./suite.ts";

const NS = "fleets2";
const POLL_MS = 1000;
const MINUTE = 60_000;

/** `kubectl cron why -o json`, the fields read here. */
interface WhyJSON {
  status: string;
  verdict: string;
  cause?: string;
  evidence: string[];
  fix: string[];
  exitCode: number;
}

const slotOf = (j: K8sObject) => Date.parse(j.metadata.annotations?.[SCHEDULED_AT] ?? "");
/** RFC 3339 in UTC, without milliseconds: how the operator and the plugin write an instant. */
const utc = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");
/** A wall-clock time in UTC as a window (or `why --slot`) takes it: "2026-11-26T09:17". */
const wall = (ms: number) => new Date(ms).toISOString().slice(0, 16);
/** How `kubectl cron why` says a time of a UTC CronJob: "2026-11-26 09:17 UTC" (seconds only when not 0). */
const whyText = (ms: number) => {
  const s = new Date(ms).toISOString();
  return `${s.slice(0, 10)} ${s.slice(11, s.slice(17, 19) === "00" ? 16 : 19)} UTC`;
};
/** When a Job failed: its Failed condition's lastTransitionTime (1.20 sets no completionTime on a failed Job). */
function failedAt(j: K8sObject): number {
  const c = (j.status?.conditions as { type: string; status: string; lastTransitionTime: string }[] | undefined)?.find(
    (x) => x.type === "Failed" && x.status === "True",
  );
  assert.ok(c, `Job ${j.metadata.name} has no Failed condition`);
  return Date.parse(c.lastTransitionTime);
}
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The inline window's name: the record, `next` and `why` name it. */
const WINDOW = "e2e freeze";

e2eDescribe("end to end: an exclusion window over two slots, on a real node", { timeout: 600_000 }, () => {
  const suite = e2eSuite({ namespace: NS, pollMs: POLL_MS, logLines: 80 });
  const { kubectl, getJSON, cronJob, admit, jobsOf, plugin } = suite;
  const get = (name: string) => getJSON(["get", CRONJOBS, name, "-n", NS]);

  it(
    "skips the two slots spec.exclusions holds (one coalesced Skipped entry) and runs the ones around them; next and why say so",
    { timeout: 330_000 },
    async () => {
      // The first excluded slot: the first whole minute at least 45 s away, so that the CronJob is made and `next`
      // asked before it (25 s was once too few on a node shared with the other suites). The window holds it and the
      // next one: [e1, e1 + 2 min), end exclusive.
      const e1 = Math.ceil((Date.now() + 45_000) / MINUTE) * MINUTE;
      const excluded = [e1, e1 + MINUTE];
      const after = e1 + 2 * MINUTE;
      const before = e1 - MINUTE;
      await admit(
        cronJob(
          "freeze",
          {
            schedule: "* * * * *",
            successfulJobsHistoryLimit: 10,
            exclusions: { windows: [{ name: WINDOW, start: wall(e1), end: wall(after) }] },
          },
          "true",
        ),
      );
      const created = Date.parse(String((await get("freeze")).metadata.creationTimestamp));
      // Beside it, the same window in a shared ExclusionCalendar, edited once its first slot was decided (issue 53): the
      // slot is judged by the calendar as it was when it came, recorded then, and the edit never runs it.
      const calendar = (windows: unknown[]): K8sObject => ({
        apiVersion: "batch.tutorial.kubebuilder.io/v1",
        kind: "ExclusionCalendar",
        metadata: { name: "shared", namespace: NS },
        spec: { windows },
      });
      await admit(calendar([{ name: "shared freeze", start: wall(e1), end: wall(after) }]));
      await admit(cronJob("freeze-cal", { schedule: "* * * * *", exclusions: { calendars: ["shared"] } }, "true"));

      // Meanwhile: the webhook reads the calendars a CronJob names from the operator's cache. One the namespace lacks
      // is a warning kubectl prints, never a refusal (the calendar may be applied next).
      const lacking = cronJob(
        "no-calendar",
        { schedule: "0 0 1 1 *", exclusions: { calendars: ["no-such-calendar"] } },
        "true",
      );
      const applied = await suite.cluster.kubectl(["apply", "-f", "-"], JSON.stringify(lacking));
      assert.equal(applied.code, 0, applied.stderr);
      assert.match(
        applied.stderr,
        new RegExp(
          `^Warning: spec\\.exclusions\\.calendars names no-such-calendar, which is not an ExclusionCalendar of namespace ${NS}: slots are held until it exists$`,
          "m",
        ),
      );
      await kubectl(["delete", CRONJOBS, "no-calendar", "-n", NS, "--wait=false"]);

      // `kubectl cron next`, before the window and once the slot before it (when it is the CronJob's) has passed:
      // the window's two slots come first, marked, and the first slot after them is named the next run.
      if (before > Date.now()) await sleep(before - Date.now() + 1000);
      const next = await plugin(["next", "freeze", "--count=4"]);
      const answered = Date.now();
      assert.equal(next.code, 0, next.stderr);
      assert.ok(answered < e1, `next answered at ${utc(answered)}, before the window's first slot ${utc(e1)}`);
      const row = (t: number, cell: string) => new RegExp(`^${utc(t)}\\s+${utc(t)}\\s+${escape(cell)}\\s*$`, "m");
      for (const t of excluded) assert.match(next.stdout, row(t, `spec.exclusions: ${WINDOW}`));
      const marked = next.stdout.split("\n").filter((l) => l.includes("spec.exclusions:"));
      assert.equal(marked.length, 2, `exactly the window's two slots are marked:\n${next.stdout}`);
      assert.match(next.stdout, row(after, "-"));
      assert.match(
        next.stdout,
        new RegExp(`^next run: ${utc(after)} \\(${utc(after)}\\); the slots before it are excluded$`, "m"),
      );
      assert.match(next.stdout.split("\n").find((l) => /^NEXT/.test(l)) ?? "", /EXCLUDED BY/, next.stdout);

      // The calendar's first slot is recorded when it comes (the operator wakes for an excluded slot too), before the
      // calendar is edited to hold the second slot only; e1 still never runs.
      let calSeen: unknown;
      const first = await eventually(
        `freeze-cal's Skipped entry for ${utc(e1)}, written at its time`,
        async () => {
          const cj = await get("freeze-cal");
          calSeen = cj.status?.recentRuns;
          return recordOf(cj).find((e) => e.reason === "ExcludedByCalendar" && e.scheduledTime === utc(e1));
        },
        Math.max(e1 + 20_000 - Date.now(), 1000),
        () => `; status.recentRuns: ${JSON.stringify(calSeen)}`,
        POLL_MS,
      );
      assert.ok(Date.parse(first.decidedAt ?? "") - e1 <= 15_000, `decided at ${first.decidedAt}, late for ${utc(e1)}`);
      assert.equal((await get("freeze-cal")).status?.lastExcludedTime, utc(e1));
      await kubectl(
        ["apply", "-f", "-"],
        JSON.stringify(calendar([{ name: "shared freeze", start: wall(e1 + MINUTE), end: wall(after) }])),
      );

      // The slot after the window runs (its Job named after it); wait for it, then read what the operator did.
      await eventually(
        `the Job of ${utc(after)}, the first slot after the window`,
        async () => (await jobsOf("freeze")).some((j) => slotOf(j) === after),
        Math.max(after + 45_000 - Date.now(), 1000),
        undefined,
        POLL_MS,
      );
      const jobs = await jobsOf("freeze");
      const bySlot = (t: number) => jobs.filter((j) => slotOf(j) === t).map((j) => j.metadata.name);
      for (const t of excluded) assert.deepEqual(bySlot(t), [], `no Job for the excluded slot ${utc(t)}`);
      const calJobs = (await jobsOf("freeze-cal")).map(slotOf);
      for (const t of excluded)
        assert.ok(!calJobs.includes(t), `freeze-cal: no Job for ${utc(t)}, excluded when it came`);
      assert.deepEqual(bySlot(after), [`freeze-${after / 1000}`], `one Job for ${utc(after)}`);
      // The slot before the window is the CronJob's only when it was made before it (the test started late in a
      // minute).
      if (before > created) assert.deepEqual(bySlot(before), [`freeze-${before / 1000}`], `one Job for ${utc(before)}`);

      // `kubectl cron why --slot`: each excluded slot explained, by the window that holds it (read now, in its zone).
      const why = async (slot: string) => {
        const r = await plugin(["why", "freeze", `--slot=${slot}`, "-o", "json"]);
        const d = JSON.parse(r.stdout) as WhyJSON;
        assert.equal(r.code, d.exitCode, "the exit code is the diagnosis'");
        return d;
      };
      const d = await why(utc(e1));
      assert.equal(d.cause, "excluded", JSON.stringify(d));
      assert.equal(d.exitCode, 1);
      assert.equal(d.verdict, `did not run at ${whyText(e1)}: excluded by spec.exclusions: ${WINDOW}`);
      assert.ok(
        d.evidence.includes(`spec.exclusions.windows: the window "${WINDOW}" holds ${whyText(e1)}, read in UTC`),
        d.evidence.join("\n"),
      );
      assert.ok(
        d.fix.some((f) => f.includes(`--from=${utc(e1)} --to=${utc(e1)} --include-excluded`)),
        d.fix.join("\n"),
      );
      // As text, the second slot asked as a wall-clock time in the CronJob's zone.
      const text = await plugin(["why", "freeze", `--slot=${wall(excluded[1]!)}`]);
      assert.equal(text.code, 1, text.stderr);
      assert.match(
        text.stdout,
        new RegExp(
          `^${NS}/freeze: did not run at ${whyText(excluded[1]!)}: excluded by spec\\.exclusions: ${WINDOW}$`,
          "m",
        ),
      );

      // The record, once it has the run after the window: one Skipped entry for both slots, on the newer, counting
      // them; not a missed run.
      let seen: unknown;
      const record = await eventually(
        `the record's entries for ${utc(after)} and the excluded slots`,
        async () => {
          const cj = await get("freeze");
          seen = cj.status?.recentRuns;
          const r = recordOf(cj);
          const ran = r.some((e) => Date.parse(e.scheduledTime ?? "") === after && e.decision === "Created");
          return ran && r.some((e) => e.reason === "ExcludedByCalendar") ? r : undefined;
        },
        30_000,
        () => `; status.recentRuns: ${JSON.stringify(seen)}`,
        POLL_MS,
      );
      const skipped = record.filter((e) => e.reason === "ExcludedByCalendar");
      assert.equal(skipped.length, 1, JSON.stringify(record));
      assert.equal(skipped[0]!.decision, "Skipped");
      assert.equal(skipped[0]!.trigger, "Schedule");
      assert.equal(skipped[0]!.scheduledTime, utc(excluded[1]!));
      assert.equal(skipped[0]!.message, `excluded by spec.exclusions: ${WINDOW} (2 slots from ${utc(e1)})`);
      assert.deepEqual(skipped[0]!.exclusion, { window: WINDOW, firstSlot: utc(e1), slots: 2 });
      assert.ok(!skipped[0]!.job, "no Job on the excluded entry");
      assert.deepEqual(
        record.filter((e) => e.decision === "Missed"),
        [],
        "an excluded slot is not a missed run",
      );
      // And why names the record's entry, the run of slots it stands for.
      const recorded = await why(utc(e1));
      assert.equal(recorded.cause, "excluded");
      assert.ok(
        recorded.evidence.some((e) => /Schedule Skipped \(ExcludedByCalendar\)/.test(e)),
        recorded.evidence.join("\n"),
      );
      assert.ok(
        recorded.evidence.includes(
          `the entry stands for the slots from ${utc(e1)} to ${utc(excluded[1]!)} the same window held`,
        ),
        recorded.evidence.join("\n"),
      );
      await kubectl(["delete", CRONJOBS, "freeze", "freeze-cal", "-n", NS, "--wait=false"]);
    },
  );
});

/**
 * spec.retry of the disruptive suite: two new Jobs at most, each 40 s after the failure before it. The Held entry
 * lasts that long: room for a loaded machine to write it and for the test to see it. With the slot a minute after
 * the shared plan's first (leader-death.ts), the kill (first + 115 s) comes after the first attempt's failure (about
 * 45 s after the slot) and well before the second attempt (40 s after that failure, or later): the successor makes
 * it. The suite still ends before the group's (first + 4 minutes).
 */
const LIMIT = 2;
const DELAY_S = 40;

e2eDescribe(
  "end to end: retries as new Jobs across the leader's death, on a real node",
  { timeout: 600_000, disruptive: LEADER_KILLED },
  () => {
    const suite = e2eSuite({ namespace: `${NS}-retry`, pollMs: POLL_MS, logLines: 200 });
    const { getJSON, cronJob, admit, jobsOf, plugin, waitForEvent } = suite;
    const NS_R = suite.namespace;
    const NAME = "retried";
    const get = () => getJSON(["get", CRONJOBS, NAME, "-n", NS_R]);
    /** The CronJob's Job `name` once it has failed. */
    const failedJob = (name: string, timeoutMs: number) =>
      eventually(
        `Job ${name} Failed`,
        async () => {
          const j = (await jobsOf(NAME)).find((x) => x.metadata.name === name);
          return j && conditionTrue(j, "Failed") ? j : undefined;
        },
        timeoutMs,
        undefined,
        POLL_MS,
      );

    it("retries a failed slot as 2 new Jobs, each >= delaySeconds after the failure before it, the leader SIGKILLed between; never a third; why, next and the record say so", async () => {
      await settled(suite);
      // One slot in the test: a cron for one minute of the year, the minute after the shared plan's first; the
      // leader dies KILL_AFTER_MS after that first (leader-death.ts), between the attempts.
      const death = leaderDeath(suite);
      const slot = death.first + MINUTE;
      assert.ok(death.killAt - slot > 30_000, "the kill comes after the slot's Job and its first attempt can fail");
      const at = new Date(slot);
      const schedule = `${at.getUTCMinutes()} ${at.getUTCHours()} ${at.getUTCDate()} ${at.getUTCMonth() + 1} *`;
      await admit(
        cronJob(
          NAME,
          {
            schedule,
            concurrencyPolicy: "Allow",
            retry: { limit: LIMIT, delaySeconds: DELAY_S },
            // Every attempt kept, to read when each failed.
            failedJobsHistoryLimit: 5,
          },
          "echo failing; exit 1",
        ),
      );
      const first = `${NAME}-${slot / 1000}`;
      const r1 = retryJobName(NAME, first, 1);
      const r2 = retryJobName(NAME, first, 2);
      assert.match(r1, new RegExp(`^${NAME}-r[0-9a-f]{8}$`));

      // The slot's Job fails; attempt 1 waits for its delay: the record's newest entry says when it starts.
      const job0 = await failedJob(first, Math.max(slot + 90_000 - Date.now(), 1000));
      const f0 = failedAt(job0);
      const held = await eventually(
        "the record's newest entry Held (RetryDelay) for attempt 1/2",
        async () => {
          const e = recordOf(await get())[0];
          return e?.decision === "Held" && e.reason === "RetryDelay" && e.request === `1/${LIMIT}` ? e : undefined;
        },
        DELAY_S * 1000,
        undefined,
        250,
      );
      // Asked as a user asks, while it waits: both at once, the delay is short.
      const [why, next] = await Promise.all([plugin(["why", NAME, "-o", "json"]), plugin(["next", NAME, "--count=1"])]);
      const startsAt = f0 + DELAY_S * 1000;
      assert.equal(Date.parse(held.scheduledTime ?? ""), slot);
      assert.equal(
        held.message,
        `attempt 1 of ${LIMIT} starts at ${utc(startsAt)}: Job ${first} failed (BackoffLimitExceeded); spec.retry.delaySeconds ${DELAY_S}`,
      );
      assert.equal(held.startsAt, utc(startsAt));
      assert.deepEqual(held.attempt, { number: 1, of: LIMIT, after: first, failure: "BackoffLimitExceeded" });
      const d = JSON.parse(why.stdout) as WhyJSON;
      assert.equal(why.code, d.exitCode, "the exit code is the diagnosis'");
      assert.equal(d.cause, "retry-pending", why.stdout);
      assert.match(
        d.verdict,
        new RegExp(
          `^ran at ${whyText(slot)} and failed \\(Job ${first}: BackoffLimitExceeded[^)]*\\); attempt 1 of ${LIMIT} starts at ${whyText(startsAt)}$`,
        ),
      );
      assert.ok(d.evidence.includes(`spec.retry: limit ${LIMIT}, delaySeconds ${DELAY_S}`), d.evidence.join("\n"));
      assert.equal(next.code, 0, next.stderr);
      assert.match(
        next.stdout,
        new RegExp(
          `^retry: attempt 1 of ${LIMIT} of ${utc(slot)} starts at \\S+ \\(${utc(startsAt)}\\): Job ${first} failed \\(BackoffLimitExceeded\\)$`,
          "m",
        ),
      );

      // Attempt 1 made and failed; the leader killed before attempt 2, which is the successor's.
      await eventually(
        `attempt 1, Job ${r1}`,
        async () => (await jobsOf(NAME)).some((j) => j.metadata.name === r1),
        60_000,
        undefined,
        POLL_MS,
      );
      const job1 = await failedJob(r1, 90_000);
      const f1 = failedAt(job1);
      const kill = await death.kill;
      const successor = await successorOf(suite, kill);
      const job2 = await failedJob(r2, 150_000);
      const f2 = failedAt(job2);
      // Long enough after the last attempt's failure for a third to have been made, were one made.
      await sleep(Math.max(0, f2 + DELAY_S * 1000 + 20_000 - Date.now()));

      const jobs = await jobsOf(NAME);
      const attempts = jobs
        .map((j) => ({
          name: j.metadata.name,
          slot: utc(slotOf(j)),
          of: j.metadata.annotations?.[RETRY_OF_ANNOTATION],
          attempt: j.metadata.annotations?.[RETRY_ATTEMPT_ANNOTATION],
          failed: conditionTrue(j, "Failed"),
          created: j.metadata.creationTimestamp,
        }))
        .sort((a, b) => String(a.attempt).localeCompare(String(b.attempt)));
      process.stderr.write(
        `fleets2: ${JSON.stringify({ kill: { at: utc(kill.at), before: kill.holder, after: successor }, attempts })}\n`,
      );
      assert.deepEqual(
        attempts.map(({ created: _, ...a }) => a),
        [
          { name: first, slot: utc(slot), of: undefined, attempt: `0/${LIMIT}`, failed: true },
          { name: r1, slot: utc(slot), of: first, attempt: `1/${LIMIT}`, failed: true },
          { name: r2, slot: utc(slot), of: first, attempt: `2/${LIMIT}`, failed: true },
        ],
        "the slot's Job and exactly 2 attempts (no third, no attempt twice), named from the first, annotated k/N",
      );
      const createdAt = (j: K8sObject) => Date.parse(String(j.metadata.creationTimestamp));
      const gap1 = createdAt(job1) - f0;
      const gap2 = createdAt(job2) - f1;
      assert.ok(gap1 >= DELAY_S * 1000, `attempt 1 created ${gap1 / 1000} s after ${first} failed`);
      assert.ok(gap2 >= DELAY_S * 1000, `attempt 2 created ${gap2 / 1000} s after ${r1} failed`);
      assert.ok(
        kill.at > f0 && kill.at < createdAt(job2) + 1000,
        "the leader was killed between the first failure and attempt 2",
      );

      // The record ends with both attempts made (each entry replacing its Held one), and nothing waits.
      const record = recordOf(await get());
      const retries = record
        .filter((e) => e.trigger === "Retry")
        .map((e) => ({
          decision: e.decision,
          reason: e.reason,
          request: e.request,
          job: e.job,
          slot: e.scheduledTime,
        }));
      assert.deepEqual(
        retries.sort((a, b) => String(a.request).localeCompare(String(b.request))),
        [
          { decision: "Created", reason: "RetryAfterFailure", request: `1/${LIMIT}`, job: r1, slot: utc(slot) },
          { decision: "Created", reason: "RetryAfterFailure", request: `2/${LIMIT}`, job: r2, slot: utc(slot) },
        ],
        JSON.stringify(record),
      );
      assert.deepEqual(
        record.filter((e) => e.decision === "Held"),
        [],
        "no attempt waits after the last",
      );
      const entry1 = record.find((e) => e.job === r1);
      assert.equal(entry1?.message, `attempt 1 of ${LIMIT}: Job ${first} failed`);
      const entry2 = record.find((e) => e.job === r2);
      assert.equal(entry2?.message, `attempt 2 of ${LIMIT}: Job ${r1} failed`);
      // Attempt 2's Event, from the new leader.
      await waitForEvent(NS_R, NAME, new RegExp(`^RetryCreated: Created job ${r2}: attempt 2 of ${LIMIT} for `));

      // The suite leaves the operator as it found it: two Ready replicas.
      await settled(suite);

      // `kubectl cron history`, oldest first: the slot's Job, then its attempts in order, each labelled k/N.
      const history = await plugin(["history", NAME, "-o", "json"]);
      assert.equal(history.code, 0, history.stderr);
      const rows = (JSON.parse(history.stdout) as { items: { name: string; trigger: string; attempt?: string }[] })
        .items;
      assert.deepEqual(
        rows.map((r) => [r.name, r.trigger, r.attempt]),
        [
          [first, "scheduled", undefined],
          [r1, "retry", `1/${LIMIT}`],
          [r2, "retry", `2/${LIMIT}`],
        ],
        `history lists the slot's Jobs oldest first:\n${history.stdout}`,
      );
    });
  },
);
