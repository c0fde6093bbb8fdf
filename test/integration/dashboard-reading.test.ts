// kubectl cron dashboard as a person reads it (issue 62), against a real kube-apiserver in a real browser, in the
// page's first window (the last 24 hours and the next 24): a schedule every five minutes is one band with its count,
// a suspended CronJob's slots say (and look) that they would run then, a suspended row says "suspended" once, and a
// group's lane draws a waiting run from the first slot it waited for, the `since` of `kubectl cron why`.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "puppeteer-core";
import {
  API_VERSION,
  CONCURRENCY_GROUP_LABEL,
  ConcurrencyGroupResource,
  CRONJOB_NAME_LABEL,
} from "../../api/v1/index.ts";
import { MARK_WORDS, PAGE_WORDS } from "../../cmd/kubectl-cron/dashboard/view.ts";
import { main } from "../../cmd/kubectl-cron/main.ts";
import { TestEnv } from "../../envtest/index.ts";
import { Client } from "../../runtime/client.ts";
import { Kinds } from "../../runtime/kinds.ts";
import { openPage, startBrowser } from "../../envtest/browser.ts";
import { type RunningDashboard, startDashboard } from "../../envtest/dashboard-process.ts";
import { stagedCronJob } from "../dashboard-fleet.ts";
import { batchJob, createJob } from "../fixtures.ts";

const NS = "reading";
const HOUR = 3_600_000;
const iso = (t: number) => new Date(t).toISOString().replace(/\.\d{3}Z$/, "Z");
/** The five-minute slots of the page's next 24 hours: `*\/5` has 288 a day (287 when now is on one of them). */
const DAY_OF_FIVE_MINUTES = 288;
/** What the tests call of the page's window in it (this file has no DOM types). */
interface PageWindow {
  getComputedStyle(e: unknown): { opacity: string };
}

describe("kubectl cron dashboard as a person reads it, in a real browser", { timeout: 300_000 }, () => {
  let env: TestEnv;
  let client: Client;
  let dashboard: RunningDashboard;
  let browser: Browser;
  let page: Page;
  let errors: string[] = [];
  const hour = Math.floor(Date.now() / HOUR) * HOUR;
  /** The slots report's run was held at in its group, newest last: it waits since the first. */
  const held = [hour - 2 * HOUR, hour - HOUR];

  const cronJob = (name: string, spec: Record<string, unknown>, recentRuns: unknown[] = []) =>
    stagedCronJob(client, { namespace: NS, name, spec, recentRuns, lastRun: hour - 3 * HOUR });

  before(async () => {
    env = await TestEnv.start();
    client = new Client(env.kubeConfig);
    await client.create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
    await client.create(ConcurrencyGroupResource, {
      apiVersion: API_VERSION,
      kind: "ConcurrencyGroup",
      metadata: { name: "db", namespace: NS },
      spec: { limit: 1 },
    });
    // holder's run holds the group's one place; report's run, held at two slots in a row (newest first, as the
    // record keeps them), waits since the first.
    const holder = await cronJob("holder", { schedule: "0 */6 * * *", concurrencyGroup: "db" });
    await createJob(
      client,
      batchJob({
        name: "holder-1",
        namespace: NS,
        owner: { name: "holder", uid: holder.metadata!.uid! },
        slot: held[0]! - HOUR,
        labels: { [CRONJOB_NAME_LABEL]: "holder", [CONCURRENCY_GROUP_LABEL]: "db" },
        state: "active",
        start: held[0]! - HOUR + 5_000,
      }),
      NS,
    );
    await cronJob(
      "report",
      { schedule: "0 * * * *", concurrencyGroup: "db" },
      [...held].reverse().map((slot) => ({
        trigger: "Schedule",
        scheduledTime: iso(slot),
        decision: "Held",
        reason: "ConcurrencyGroupFull",
        decidedAt: iso(slot + 1_000),
        blockedBy: "holder-1",
        message: "group db is full: 1 of 1 places used",
      })),
    );
    // adhoc's run-now request waits too: asked about, why lists the group's waiting runs, each since when.
    await cronJob("adhoc", { schedule: "0 0 1 1 *", concurrencyGroup: "db" }, [
      {
        trigger: "RunNow",
        request: "req-1",
        decision: "Held",
        reason: "ConcurrencyGroupQueue",
        decidedAt: iso(hour - 30 * 60_000),
      },
    ]);
    await cronJob("tick", { schedule: "*/5 * * * *" });
    await cronJob("paused", { schedule: "*/5 * * * *", suspend: true });
    [dashboard, browser] = await Promise.all([startDashboard(env.kubeconfigPath, ["-n", NS]), startBrowser()]);
    ({ page, errors } = await openPage(browser, dashboard.url));
    for (const name of ["tick", "paused", "report"]) {
      await page.waitForSelector(`[data-id="${NS}/${name}"] [data-marks="loaded"]`, { timeout: 30_000 });
    }
  });
  after(async () => {
    await browser?.close();
    await dashboard?.stop();
    client?.close();
    await env?.stop();
  });

  /** A row's "many slots" marks: their count, title, band label and opacity as the browser computes it. */
  const bandsOf = (name: string) =>
    page.$$eval(`[data-id="${NS}/${name}"] [data-kind="slots"]`, (els) =>
      els.map((e) => ({
        count: Number(e.getAttribute("data-count")),
        title: e.querySelector("title")?.textContent ?? "",
        label: e.querySelector("text")?.textContent ?? "",
        opacity: (globalThis as unknown as PageWindow).getComputedStyle(e).opacity,
      })),
    );

  it("draws the slots too close to draw apart as one band with their count, none of one slot", async () => {
    const bands = await bandsOf("tick");
    assert.equal(bands.length, 1, bands.map((b) => b.title).join("\n"));
    const [band] = bands;
    assert.ok(band!.count >= DAY_OF_FIVE_MINUTES - 1 && band!.count <= DAY_OF_FIVE_MINUTES, String(band!.count));
    assert.equal(band!.title, `${MARK_WORDS.slots.label}: ${PAGE_WORDS.slots(band!.count)}`);
    assert.equal(band!.label, PAGE_WORDS.slots(band!.count));
    const slots = await page.$$(`[data-id="${NS}/tick"] [data-kind="slot"]`);
    assert.equal(slots.length, 0);
  });

  it("says, and shows, that a suspended CronJob's merged slots would run then, as its single slots do", async () => {
    const [active] = await bandsOf("tick");
    const bands = await bandsOf("paused");
    assert.equal(bands.length, 1, bands.map((b) => b.title).join("\n"));
    const [band] = bands;
    assert.equal(
      band!.title,
      `${MARK_WORDS.slots.label}: ${PAGE_WORDS.wouldRun(PAGE_WORDS.slots(band!.count), band!.count)}`,
    );
    assert.notEqual(band!.opacity, active!.opacity, "a suspended CronJob's band looks like one that will run");
  });

  it("says suspended once in a suspended CronJob's row, also once why -A says it is why", async () => {
    const row = `[data-id="${NS}/paused"]`;
    // why -A's verdict for it has come: its cause is the row's.
    await page.waitForSelector(`${row} [data-attention="suspended"]`, { timeout: 60_000 });
    const badges = await page.$$eval(`${row} .badge`, (els) => els.map((e) => e.textContent ?? ""));
    assert.deepEqual(badges, [PAGE_WORDS.suspended]);
  });

  it("draws a waiting run in its group's lane from the first slot it waited for, as kubectl cron why says since", async () => {
    const from = await page.$eval(`[data-group="${NS}/db"] [data-wait="report"]`, (e) => e.getAttribute("data-from"));
    let printed = "";
    // report's slots are older than the CronJob (made by this test): why asks about adhoc's request, and says the
    // group's queue with report in it.
    await main(["why", "adhoc", "-n", NS, "--kubeconfig", env.kubeconfigPath], {
      stdout: (s) => (printed += s),
      stderr: () => undefined,
      env: {},
    });
    const since = /report since (\S+?Z)\b/.exec(printed)?.[1];
    assert.equal(since, iso(held[0]!), printed);
    assert.equal(from, since);
  });

  it("ran without an error in the page", () => {
    assert.deepEqual(errors, []);
  });
});
