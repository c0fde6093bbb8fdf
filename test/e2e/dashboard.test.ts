// End to end, `kubectl cron dashboard` (issue 56) in a real browser (Debian's headless Chromium, envtest/browser.ts) on
// a fleet staged with minute schedules whose Pods run on the real node: a ConcurrencyGroup of limit 1 whose two
// members' runs (50 s each, every minute) keep one of them waiting, an ExclusionCalendar over the next minutes of an
// every-minute CronJob, a CronJob whose run fails and whose retry waits for its delay, and a Forbid CronJob stuck
// behind a `sleep 3600` run. Once the operator has decided a few slots (its record), the plugin's executable serves
// the page, and the suite checks what is drawn: the group's lane with the waiting run, the stuck CronJob's held
// slots, the excluded slots and their shade, the retry; a held slot clicked shows `kubectl cron why --slot` word for
// word and names the Job it waits behind; the filters; a Job the operator creates (run from the page) is drawn
// within seconds of its creation, without a reload. DASHBOARD_SCREENSHOTS=DIR writes pictures of the page
// (`make dashboard-screenshots`: docs/images/dashboard-fleet.png and dashboard-why.png). Non-disruptive. Needs root
// (the node) and a headless Chromium (CHROMIUM, which make test-e2e sets); `make test-e2e E2E_SHARED=dashboard.test.ts`.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { it } from "node:test";
import type { Browser, Page } from "puppeteer-core";
import { chromiumPath, openPage, startBrowser } from "../../envtest/browser.ts";
import { type RunningDashboard, startDashboard } from "../../envtest/dashboard-process.ts";
import { eventually } from "../eventually.ts";
import { type K8sObject, PLUGIN, type RecentRun, recordOf } from "./cluster-tools.ts";
import { API_V1, CRONJOBS, e2eDescribe, e2eSuite } from "./suite.ts";

const NS = "dashboard";
const POLL_MS = 1000;
const MINUTE = 60_000;
const SCREENSHOTS = process.env.DASHBOARD_SCREENSHOTS;
/**
 * For the pictures, minutes more of history before the page is drawn (the retry's slot and the window's end come
 * that much later, so that they are still to come): the group's queue, the held slots, the excluded ones fill the
 * window's past half. The checks are the same.
 */
const EXTRA_MIN = SCREENSHOTS ? 4 : 0;
/** Never in the test: the first minute of the year. */
const NEVER = "0 0 1 1 *";
/** The CronJobs, as the page sorts its rows. */
const NAMES = ["adhoc", "backup", "flaky", "report", "stuck", "sync"];
const id = (name: string) => `${NS}/${name}`;
/** RFC 3339 in UTC, without milliseconds: how the operator and the plugin write an instant. */
const utc = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
/** A wall-clock time in UTC as an exclusion window takes it: "2026-11-26T09:17". */
const wall = (ms: number) => new Date(ms).toISOString().slice(0, 16);

/** A duration as the plugin prints one (humanDuration: 45s, 3m12s, 2h5m, 3d4h). */
const DURATION = /\b(?:\d+[dhms])+\b/g;
const UNIT: Record<string, number> = { d: 86_400, h: 3_600, m: 60, s: 1 };
const secondsOf = (d: string) =>
  [...d.matchAll(/(\d+)([dhms])/g)].reduce((n, [, v, u]) => n + Number(v) * UNIT[u!]!, 0);

/** A text split at its ages: its words between them, and the ages. */
const agesOf = (t: string) => ({ words: JSON.stringify(t.trim().split(DURATION)), ages: t.match(DURATION) ?? [] });

/**
 * Whether `shown` is, word for word, what `kubectl cron why` printed just `before` and just `after` it was read
 * (both the same words), but for the ages (a running Job's "has been running for 1m5s"), which count on between the
 * three: each of the page's lies between the two printed ones. undefined when it is; else what differs.
 */
function sameWhy(shown: string, before: string, after: string): string | undefined {
  const [s, b, a] = [shown, before, after].map(agesOf);
  if (s!.words !== b!.words) return `the page shows\n${shown}\nkubectl cron why printed\n${before}`;
  for (const [i, age] of s!.ages.entries()) {
    const [x, y, z] = [secondsOf(b!.ages[i]!), secondsOf(age), secondsOf(a!.ages[i]!)];
    if (y < Math.min(x, z) || y > Math.max(x, z))
      return `age ${i + 1} on the page, ${age}, is not between ${b!.ages[i]} and ${a!.ages[i]} printed around it`;
  }
  return undefined;
}

/** In the page (its code, as text: this file has no DOM types): the ids of the rows drawn. */
const ROW_IDS = `[...document.querySelectorAll("[data-id]")].map((e) => e.getAttribute("data-id"))`;

/** A mark as the page draws it: a `g[data-kind]` of a row, with its data-* attributes. */
interface DrawnMark {
  kind: string;
  at: string;
  slot: string | null;
  job: string | null;
}

e2eDescribe(
  "end to end: kubectl cron dashboard in a real browser, a staged fleet on a real node",
  { timeout: 600_000 },
  () => {
    let dashboard: RunningDashboard | undefined;
    let browser: Browser | undefined;
    let page: Page;
    /** What the page threw or logged as an error. */
    let errors: string[] = [];
    let dialogs: string[] = [];
    /** The staging's facts, read from the cluster once the operator has decided them. */
    const staged = {
      /** The end of the calendar's window. */
      freezeEnd: 0,
      /** flaky's one slot. */
      flakySlot: 0,
      /** The Job stuck's later slots wait behind. */
      stuckJob: "",
      /** A slot of stuck held behind it (the newest held when the set-up saw it, drawn then). */
      heldSlot: "",
    };

    const suite = e2eSuite({
      namespace: NS,
      pollMs: POLL_MS,
      logLines: 80,
      setUp: async () => {
        // Before anything is staged: no browser is a set-up failure that says what to install.
        chromiumPath();
        await stage();
        await decided();
        [dashboard, browser] = await Promise.all([
          startDashboard(suite.cluster.kubeconfigPath, ["-n", NS], 60_000, [PLUGIN]),
          startBrowser(),
        ]);
        ({ page, errors, dialogs } = await openPage(browser, dashboard.url));
        await page.waitForSelector(`[data-id="${id("stuck")}"] [data-marks="loaded"]`, { timeout: 30_000 });
      },
      tearDown: async () => {
        await browser?.close();
        await dashboard?.stop();
        if (suite.failed() && dashboard?.stderr())
          process.stderr.write(`--- the dashboard's stderr\n${dashboard.stderr()}`);
      },
    });
    const { admit, cronJob, getJSON, plugin, jobsOf } = suite;
    const get = (name: string) => getJSON(["get", CRONJOBS, name, "-n", NS]);

    /** The fleet, each CronJob on the real node. */
    async function stage(): Promise<void> {
      const now = Date.now();
      // The calendar's window: from this minute to eight minutes on, past the suite's end (its slots to come are
      // drawn excluded, under its shade, while the page is looked at).
      const start = Math.floor(now / MINUTE) * MINUTE;
      staged.freezeEnd = start + (8 + EXTRA_MIN) * MINUTE;
      await Promise.all([
        admit({
          apiVersion: API_V1,
          kind: "ConcurrencyGroup",
          metadata: { name: "db", namespace: NS },
          spec: { limit: 1 },
        }),
        admit({
          apiVersion: API_V1,
          kind: "ExclusionCalendar",
          metadata: { name: "freeze", namespace: NS },
          spec: { windows: [{ name: "release freeze", start: wall(start), end: wall(staged.freezeEnd) }] },
        }),
      ]);
      const everyMinute = { schedule: "* * * * *" };
      await Promise.all([
        // Two members of the group of limit 1, each running 50 s every minute: one waits for the other's place.
        admit(cronJob("backup", { ...everyMinute, concurrencyGroup: "db" }, "sleep 50")),
        admit(cronJob("report", { ...everyMinute, concurrencyGroup: "db" }, "sleep 50")),
        admit(cronJob("sync", { ...everyMinute, exclusions: { calendars: ["freeze"] } }, "true")),
        admit(cronJob("stuck", { ...everyMinute, concurrencyPolicy: "Forbid" }, "sleep 3600")),
        admit(cronJob("adhoc", { schedule: NEVER }, "sleep 20")),
      ]);
      // flaky fires once, at the second slot of the others (by then stuck's first run holds its second slot; for the
      // pictures, EXTRA_MIN later): its run fails and its retry waits 90 s, long after the page is drawn. A cron for
      // one minute of the year, Allow: under Forbid or Replace a newer slot's run would supersede the retry.
      const created = Date.parse(String((await get("stuck")).metadata.creationTimestamp));
      staged.flakySlot = Math.floor(created / MINUTE) * MINUTE + (2 + EXTRA_MIN) * MINUTE;
      const d = new Date(staged.flakySlot);
      const once = `${d.getUTCMinutes()} ${d.getUTCHours()} ${d.getUTCDate()} ${d.getUTCMonth() + 1} *`;
      await admit(cronJob("flaky", { schedule: once, retry: { limit: 1, delaySeconds: 90 } }, "exit 1"));
    }

    /** The operator's record holds what the page is to draw: a held slot of each kind, the retry, the excluded. */
    async function decided(): Promise<void> {
      const entry = (runs: RecentRun[], decision: string, reasons: string[]) =>
        runs.find((e) => e.decision === decision && reasons.includes(e.reason));
      let seen: Record<string, RecentRun[]> = {};
      await eventually(
        "the operator's record of a group wait, a Forbid hold, an excluded slot and a retry waiting for its delay",
        async () => {
          const all = await Promise.all(["backup", "report", "stuck", "sync", "flaky"].map(get));
          seen = Object.fromEntries(all.map((c) => [c.metadata.name, recordOf(c)]));
          const held = seen.stuck!.filter((e) => e.decision === "Held" && e.reason === "ConcurrencyPolicyForbid");
          const ok =
            held.length > 0 &&
            held[0]!.blockedBy !== undefined &&
            (entry(seen.backup!, "Held", ["ConcurrencyGroupFull", "ConcurrencyGroupQueue"]) ??
              entry(seen.report!, "Held", ["ConcurrencyGroupFull", "ConcurrencyGroupQueue"])) !== undefined &&
            entry(seen.sync!, "Skipped", ["ExcludedByCalendar"]) !== undefined &&
            entry(seen.flaky!, "Held", ["RetryDelay"]) !== undefined;
          if (!ok) return undefined;
          const newest = held.reduce((a, b) => (Date.parse(a.scheduledTime!) > Date.parse(b.scheduledTime!) ? a : b));
          staged.stuckJob = newest.blockedBy!;
          staged.heldSlot = utc(Date.parse(newest.scheduledTime!));
          return true;
        },
        // The first slot is up to a minute away, the Forbid hold a minute after it.
        240_000 + EXTRA_MIN * MINUTE,
        () => `; the records: ${JSON.stringify(seen)}`,
        2000,
      );
    }

    const marksOf = (name: string): Promise<DrawnMark[]> =>
      page.$$eval(`[data-id="${id(name)}"] g[data-kind]`, (els) =>
        els.map((e) => ({
          kind: e.getAttribute("data-kind") ?? "",
          at: e.getAttribute("data-at") ?? "",
          slot: e.getAttribute("data-slot"),
          job: e.getAttribute("data-job"),
        })),
      );
    const shoot = async (name: string) => {
      if (!SCREENSHOTS) return;
      mkdirSync(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
    };
    const rowsAre = (ids: string[]) =>
      page.waitForFunction(`JSON.stringify(${ROW_IDS}) === ${JSON.stringify(JSON.stringify(ids))}`, {
        timeout: 10_000,
      });

    it("draws the fleet at 15 minutes wide: held slots, excluded slots under the calendar's shade, the retry, the group's lane with the waiting run", async () => {
      await page.waitForSelector("[data-live=live]", { timeout: 30_000 });
      assert.deepEqual(await page.evaluate(ROW_IDS), NAMES.map(id));
      // A minute schedule's slots to come are drawn one by one in a narrow window (wider, they merge into bands).
      await page.click('[data-width="15m"]');
      const excludedDrawn = `document.querySelector('[data-id="${id("sync")}"] g[data-kind="slot-excluded"]') !== null`;
      const allLoaded = `document.querySelectorAll('[data-marks="pending"]').length === 0`;
      await page.waitForFunction(`${excludedDrawn} && ${allLoaded}`, { timeout: 30_000 });
      const now = Date.now();

      // stuck: its first run, running, and the slots since held behind it (each one the record holds as such).
      const stuck = await marksOf("stuck");
      const running = stuck.filter((m) => m.kind === "running");
      assert.deepEqual(
        running.map((m) => m.job),
        [staged.stuckJob],
        JSON.stringify(stuck),
      );
      const held = stuck.filter((m) => m.kind === "held");
      assert.ok(
        held.some((m) => m.slot === staged.heldSlot),
        `a held mark at ${staged.heldSlot}: ${JSON.stringify(stuck)}`,
      );
      const heldInRecord = new Set(
        recordOf(await get("stuck"))
          .filter((e) => e.decision === "Held" && e.blockedBy === staged.stuckJob)
          .map((e) => utc(Date.parse(e.scheduledTime!))),
      );
      for (const m of held) assert.ok(heldInRecord.has(m.slot!), `held mark ${m.slot} is no Held entry of the record`);
      assert.ok(
        stuck.some((m) => m.kind === "slot" && Date.parse(m.at) > now - 5_000),
        "stuck's slots to come",
      );

      // sync: the slots the window held (the record's coalesced entry), the ones to come in it excluded, those after
      // it not; the window shaded with the calendar's name.
      const sync = await marksOf("sync");
      assert.ok(
        sync.some((m) => m.kind === "excluded"),
        `the record's excluded slots: ${JSON.stringify(sync)}`,
      );
      const toCome = sync.filter((m) => m.kind === "slot" || m.kind === "slot-excluded");
      assert.ok(toCome.length > 0, JSON.stringify(sync));
      for (const m of toCome) {
        const inWindow = Date.parse(m.slot!) < staged.freezeEnd;
        assert.equal(m.kind, inWindow ? "slot-excluded" : "slot", `sync's slot ${m.slot}`);
      }
      assert.deepEqual(
        await page.$$eval(`[data-id="${id("sync")}"] rect[data-shade]`, (els) =>
          els.map((e) => e.getAttribute("data-shade")),
        ),
        ["calendar freeze"],
      );
      assert.ok(!sync.some((m) => m.job), "no Job of sync in the window");

      // flaky: its run failed, and its retry is drawn where it starts (the record's startsAt), for its slot.
      const flaky = await marksOf("flaky");
      const flakyRecord = recordOf(await get("flaky"));
      const pending = flakyRecord.find((e) => e.decision === "Held" && e.reason === "RetryDelay");
      assert.ok(pending?.startsAt, JSON.stringify(flakyRecord));
      const failedJob = flakyRecord.find((e) => e.decision === "Created")?.job;
      assert.ok(
        flaky.some((m) => m.kind === "failed" && m.job === failedJob),
        `the failed run ${failedJob}: ${JSON.stringify(flaky)}`,
      );
      const retry = flaky.filter((m) => m.kind === "pending");
      assert.equal(retry.length, 1, JSON.stringify(flaky));
      assert.equal(retry[0]!.slot, utc(staged.flakySlot));
      assert.equal(Date.parse(retry[0]!.at), Date.parse(pending.startsAt));

      // The group's lane: its limit, and a member's run still waiting for the place the other's run holds.
      const lane = `[data-group="${id("db")}"]`;
      assert.match(await page.$eval(lane, (e) => e.textContent ?? ""), /group db \(limit 1\)/);
      await page.waitForSelector(`${lane} g.waiting[data-wait]`, { timeout: 30_000 });
      const waits = await page.$$eval(`${lane} g[data-wait]`, (els) =>
        els.map((e) => ({ cronJob: e.getAttribute("data-wait"), cls: e.getAttribute("class") })),
      );
      for (const w of waits) assert.ok(["backup", "report"].includes(w.cronJob ?? ""), JSON.stringify(waits));
      // Both members ran, one after the other.
      for (const name of ["backup", "report"]) {
        assert.ok(
          (await marksOf(name)).some((m) => m.job && ["running", "succeeded"].includes(m.kind)),
          `${name} ran: ${JSON.stringify(await marksOf(name))}`,
        );
      }

      // The verdicts: stuck needs attention, as `why` says (forbid-held).
      await page.waitForSelector(`[data-id="${id("stuck")}"] [data-attention="forbid-held"]`, { timeout: 60_000 });
      await shoot("dashboard-fleet");
    });

    it("filters by name and by group", async () => {
      await page.type("input[name=name]", "stu");
      await rowsAre([id("stuck")]);
      assert.equal(await page.$eval("[data-count]", (e) => e.getAttribute("data-count")), "1");
      await page.$eval("input[name=name]", (e) => {
        (e as unknown as { value: string }).value = "";
        e.dispatchEvent(new Event("input", { bubbles: true }));
      });
      await rowsAre(NAMES.map(id));
      await page.select("select[name=group]", id("db"));
      await rowsAre([id("backup"), id("report")]);
      await page.select("select[name=group]", "");
      await rowsAre(NAMES.map(id));
    });

    it("shows a held slot's why word for word as kubectl cron why --slot prints it, naming the Job it waits behind", async (t) => {
      const why = `aside[data-detail="${id("stuck")}"] pre[data-why]`;
      let differs: string | undefined = "not compared";
      let tries = 0;
      // The page's answer is read between two of the plugin's, about the newest held slot drawn. A minute turning
      // meanwhile (the next slot named; a held slot replaced by a newer one, as RunLatest does) asks again.
      for (let attempt = 0; attempt < 4 && differs; attempt++) {
        tries++;
        const held = (await marksOf("stuck")).filter((m) => m.kind === "held" && m.slot).map((m) => m.slot!);
        const slot = held.sort().at(-1);
        assert.ok(slot, "a held slot of stuck is drawn");
        const before = await plugin(["why", "stuck", `--slot=${slot}`]);
        const clicked = await page
          .click(`[data-id="${id("stuck")}"] g[data-kind="held"][data-slot="${slot}"]`)
          .then(() => true)
          .catch(() => false);
        if (!clicked) continue;
        await page.waitForFunction(
          `(document.querySelector('aside[data-detail="${id("stuck")}"] [data-detail-slot]')?.getAttribute("data-detail-slot") === ${JSON.stringify(slot)}) && (document.querySelector('${why}')?.textContent ?? "").trim() !== ""`,
          { timeout: 30_000 },
        );
        const shown = await page.$eval(why, (e) => e.textContent ?? "");
        const after = await plugin(["why", "stuck", `--slot=${slot}`]);
        // Exit 1: the slot did not run (a diagnosis needing attention), not an error.
        for (const r of [before, after])
          assert.ok(r.code <= 1 && r.stdout.trim() !== "", `exit ${r.code}: ${r.stderr}`);
        if (agesOf(before.stdout).words !== agesOf(after.stdout).words && attempt < 3) continue;
        differs = sameWhy(shown, before.stdout, after.stdout);
        if (!differs) {
          assert.match(shown, new RegExp(`concurrencyPolicy Forbid and Job ${staged.stuckJob} has been running for`));
        }
      }
      t.diagnostic(`compared ${tries} time(s)`);
      assert.equal(differs, undefined, differs);
      const history = await page.$eval(`aside[data-detail="${id("stuck")}"] pre[data-history]`, (e) => e.textContent);
      assert.match(history ?? "", new RegExp(`${staged.stuckJob}\\s+scheduled\\s+\\S+\\s+Running`));
      const next = await page.$eval(`aside[data-detail="${id("stuck")}"] pre[data-next]`, (e) => e.textContent);
      assert.match(next ?? "", /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00Z/);
      await shoot("dashboard-why");
    });

    it("draws a run the operator creates (asked from the page) within seconds of its Job's creation, without a reload", async (t) => {
      // When each Job's mark first appears in the page, by the page's clock (the same machine's).
      await page.evaluate(`(() => {
        const seen = (window.__jobSeen = {});
        const note = () => {
          for (const e of document.querySelectorAll("[data-job]")) {
            const j = e.getAttribute("data-job");
            if (!(j in seen)) seen[j] = Date.now();
          }
        };
        note();
        new MutationObserver(note).observe(document.body, { subtree: true, childList: true, attributes: true });
      })()`);
      await page.click(`button[data-open="${id("adhoc")}"]`);
      await page.waitForSelector(`aside[data-detail="${id("adhoc")}"] button[data-action="run"]`);
      await page.click(`aside[data-detail="${id("adhoc")}"] button[data-action="run"]`);
      await page.waitForSelector('pre[data-action-result="run"][data-ok="true"]', { timeout: 30_000 });
      assert.ok(
        dialogs.some((d) => d.includes(id("adhoc"))),
        dialogs.join(),
      );
      const job: K8sObject = await eventually(
        "the run's Job",
        async () => (await jobsOf("adhoc"))[0],
        60_000,
        undefined,
        500,
      );
      const name = job.metadata.name;
      const seen = Number(
        await page
          .waitForFunction(`window.__jobSeen[${JSON.stringify(name)}]`, { timeout: 15_000 })
          .then((h) => h.jsonValue()),
      );
      const created = Date.parse(String(job.metadata.creationTimestamp));
      t.diagnostic(`Job ${name} created ${utc(created)}, its mark drawn ${seen - created} ms after that second`);
      // Within seconds (creationTimestamp is to the second): the integration test's bound, on a node under load.
      assert.ok(
        seen - created < 10_000,
        `Job ${name} created ${utc(created)}, drawn ${seen - created} ms later (${new Date(seen).toISOString()})`,
      );
      const marks = await marksOf("adhoc");
      assert.ok(
        marks.some((m) => m.job === name && ["running", "succeeded"].includes(m.kind)),
        JSON.stringify(marks),
      );
    });

    it("ran without an error in the page", () => {
      assert.deepEqual(errors, []);
    });
  },
);
