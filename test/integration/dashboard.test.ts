// kubectl cron dashboard against a real kube-apiserver, the page driven by a real browser (Debian's headless
// Chromium): a staged fleet (test/dashboard-fleet.ts) is drawn where it belongs (each CronJob's runs, held and
// excluded slots, the window shaded, a retry, the group's lane with the run that waits); a filter; a slot clicked
// shows `why` word for word as `kubectl cron why --slot` prints it; a Job created shows within seconds (watches);
// an action (suspend) asks to confirm and is done with the user's rights; HTML in a message is shown, never run;
// the server refuses a request without the token or of another Host. DASHBOARD_SCREENSHOTS=DIR keeps pictures of
// the page (the docs' are the end-to-end suite's, test/e2e/dashboard.test.ts: make dashboard-screenshots).
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "puppeteer-core";
import {
  API_VERSION,
  ConcurrencyGroupResource,
  CronJobResource,
  type CronJob,
  CRONJOB_NAME_LABEL,
  RUN_NOW_ANNOTATION,
} from "../../api/v1/index.ts";
import { main } from "../../cmd/kubectl-cron/main.ts";
import { TestEnv } from "../../envtest/index.ts";
import { Client } from "../../runtime/client.ts";
import { openPage, startBrowser } from "../../envtest/browser.ts";
import { type RunningDashboard, startDashboard } from "../../envtest/dashboard-process.ts";
import { type StagedFleet, stageFleet } from "../dashboard-fleet.ts";
import { batchJob, createJob } from "../fixtures.ts";

const NS = "dashboard";
/** In the page: whether `n` CronJobs' rows are drawn (the page's code, as text: this file has no DOM types). */
const rowsShown = (n: number) => `document.querySelectorAll("[data-id]").length === ${n}`;
const SCREENSHOTS = process.env.DASHBOARD_SCREENSHOTS;

describe("kubectl cron dashboard against kube-apiserver, in a real browser", { timeout: 300_000 }, () => {
  let env: TestEnv;
  let client: Client;
  let fleet: StagedFleet;
  let dashboard: RunningDashboard;
  let browser: Browser;
  let page: Page;
  let dialogs: string[] = [];
  /** What the page threw or logged as an error (a CSP violation is one). */
  let errors: string[] = [];

  before(async () => {
    env = await TestEnv.start();
    client = new Client(env.kubeConfig);
    fleet = await stageFleet(client, NS);
    [dashboard, browser] = await Promise.all([startDashboard(env.kubeconfigPath, ["-n", NS]), startBrowser()]);
    ({ page, errors, dialogs } = await openPage(browser, dashboard.url));
    await page.waitForSelector(`[data-id="${NS}/stuck"] [data-marks="loaded"]`, { timeout: 30_000 });
  });
  after(async () => {
    await browser?.close();
    await dashboard?.stop();
    client?.close();
    await env?.stop();
  });

  const kindsOf = (id: string) =>
    page.$$eval(`[data-id="${id}"] [data-kind]`, (els) => els.map((e) => e.getAttribute("data-kind") ?? ""));
  const shoot = async (name: string) => {
    if (!SCREENSHOTS) return;
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
  };

  it("draws each CronJob's day: runs, held and excluded slots, the window, a retry, the group's lane", async () => {
    assert.deepEqual(
      await page.$$eval("[data-id]", (els) => els.map((e) => e.getAttribute("data-id"))),
      fleet.names.map((n) => `${NS}/${n}`),
    );
    const backup = await kindsOf(`${NS}/backup`);
    assert.equal(backup.filter((k) => k === "succeeded").length, 10, backup.join());
    assert.equal(backup.filter((k) => k === "failed").length, 1);
    assert.ok(backup.includes("running") && backup.includes("slot"));
    const stuck = await kindsOf(`${NS}/stuck`);
    assert.equal(stuck.filter((k) => k === "held").length, 5, stuck.join());
    assert.equal(stuck.filter((k) => k === "running").length, 1);
    const sync = await kindsOf(`${NS}/sync`);
    assert.ok(sync.includes("slot-excluded"), sync.join());
    assert.equal(
      await page.$eval(`[data-id="${NS}/sync"] [data-shade]`, (e) => e.getAttribute("data-shade")),
      "calendar freeze",
    );
    assert.ok((await kindsOf(`${NS}/flaky`)).includes("pending"));
    // The group's lane: its limit, and report's run waiting for the place backup's run holds.
    const lane = await page.$eval(`[data-group="${NS}/db"]`, (e) => e.textContent ?? "");
    assert.match(lane, /db/);
    assert.match(lane, /limit 1/);
    assert.deepEqual(
      await page.$$eval(`[data-group="${NS}/db"] [data-wait]`, (els) => els.map((e) => e.getAttribute("data-wait"))),
      ["report"],
    );
    await shoot("dashboard-fleet");
  });

  it("says which CronJobs need attention as why -A does, and filters by it and by name", async () => {
    await page.waitForSelector(`[data-id="${NS}/audit"] [data-attention]`, { timeout: 30_000 });
    assert.equal(
      await page.$eval(`[data-id="${NS}/audit"] [data-attention]`, (e) => e.getAttribute("data-attention")),
      "calendar-not-found",
    );
    await page.click("input[name=attention]");
    await page.waitForFunction(rowsShown(1));
    await page.click("input[name=attention]");
    await page.type("input[name=name]", "fla");
    await page.waitForFunction(rowsShown(1));
    assert.equal(await page.$eval("[data-id]", (e) => e.getAttribute("data-id")), `${NS}/flaky`);
    await page.$eval("input[name=name]", (e) => {
      (e as unknown as { value: string }).value = "";
      e.dispatchEvent(new Event("input", { bubbles: true }));
    });
    await page.waitForFunction(rowsShown(fleet.names.length));
  });

  it("gives every row why -A's verdict, read from its own informers", async () => {
    await page.waitForSelector("[data-verdicts]:not([data-verdicts=''])", { timeout: 30_000 });
    let printed = "";
    await main(["why", "-n", NS, "-o", "json", "--kubeconfig", env.kubeconfigPath], {
      stdout: (s) => (printed += s),
      stderr: () => undefined,
      env: {},
    });
    const json = JSON.parse(printed) as {
      items: { cronJob: { name: string }; status: string; cause?: string; also: { cause: string }[] }[];
      shared?: { cause: string; cronJobs: string[] }[];
    };
    const want = new Map<string, string>();
    for (const d of json.items) want.set(d.cronJob.name, d.status !== "healthy" ? d.cause! : d.also[0]!.cause);
    for (const p of json.shared ?? []) for (const who of p.cronJobs) if (!want.has(who)) want.set(who, p.cause);
    const shown = await page.$$eval("[data-id]", (rows) =>
      rows.map((r) => [
        r.getAttribute("data-id") ?? "",
        (r.querySelector("[data-attention]")?.getAttribute("data-attention") ?? null) as string | null,
      ]),
    );
    assert.ok(want.size > 0, "the staged fleet has CronJobs that need attention");
    assert.deepEqual(
      Object.fromEntries(shown),
      Object.fromEntries(fleet.names.map((n) => [`${NS}/${n}`, want.get(n) ?? null])),
    );
  });

  it("says a changed CronJob's verdict within seconds, not at the next full read", async () => {
    const made = Date.now();
    await client.create(CronJobResource, {
      apiVersion: API_VERSION,
      kind: "CronJob",
      metadata: { name: "latecomer", namespace: NS },
      spec: {
        schedule: "*/5 * * * *",
        exclusions: { calendars: ["no-such-calendar"] },
        jobTemplate: {
          spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] } } },
        },
      },
    });
    try {
      await page.waitForSelector(`[data-id="${NS}/latecomer"] [data-attention="calendar-not-found"]`, {
        timeout: 10_000,
      });
      assert.ok(Date.now() - made < 10_000);
    } finally {
      await client.delete(CronJobResource, NS, "latecomer");
      await page.waitForFunction(`document.querySelector('[data-id="${NS}/latecomer"]') === null`, { timeout: 10_000 });
    }
  });

  it("shows a clicked slot's why word for word as kubectl cron why --slot prints it, with history and next", async () => {
    await page.click(`[data-id="${NS}/stuck"] [data-kind="held"][data-slot="${fleet.stuckSlot}"]`);
    await page.waitForSelector(`[data-detail="${NS}/stuck"] [data-why]`, { timeout: 30_000 });
    let printed = "";
    await main(["why", "stuck", "-n", NS, "--slot", fleet.stuckSlot, "--kubeconfig", env.kubeconfigPath], {
      stdout: (s) => (printed += s),
      stderr: () => undefined,
      env: {},
    });
    const shown = await page.$eval(`[data-detail="${NS}/stuck"] [data-why]`, (e) => e.textContent ?? "");
    assert.equal(shown.trim(), printed.trim());
    const history = await page.$eval(`[data-detail="${NS}/stuck"] [data-history]`, (e) => e.textContent ?? "");
    assert.match(history, /stuck-\d+\s+scheduled\s+\S+\s+Running/);
    await shoot("dashboard-why");
  });

  it("shows HTML of a message as text: nothing of it runs", async () => {
    const titles = await page.$$eval(`[data-id="${NS}/flaky"] [data-kind] title`, (els) =>
      els.map((e) => e.textContent ?? ""),
    );
    assert.ok(
      titles.some((t) => t.includes(fleet.html)),
      titles.join("\n"),
    );
    assert.equal(await page.evaluate("typeof window.__dashboardXSS"), "undefined");
    assert.equal(await page.$("img"), null);
  });

  it("follows the cluster: a Job created shows within seconds, without a reload, the row never blinking empty", async () => {
    // Whether the row's marks are ever taken away while it is read again (drawn "pending": empty).
    await page.evaluate(`(() => {
      const row = () => document.querySelector('[data-id="${NS}/backup"] svg');
      window.__blinked = false;
      new MutationObserver(() => {
        if (row()?.getAttribute("data-marks") === "pending") window.__blinked = true;
      }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ["data-marks"], childList: true });
    })()`);
    const backup = await client.get<CronJob>(CronJobResource, NS, "backup");
    const name = "backup-live";
    await createJob(
      client,
      batchJob({
        name,
        namespace: NS,
        owner: { name: "backup", uid: backup.metadata.uid! },
        slot: Date.now() - 5_000,
        labels: { [CRONJOB_NAME_LABEL]: "backup" },
        state: "active",
        start: Date.now() - 1_000,
      }),
      NS,
    );
    const t0 = Date.now();
    await page.waitForSelector(`[data-id="${NS}/backup"] [data-job="${name}"]`, { timeout: 10_000 });
    assert.ok(Date.now() - t0 < 10_000);
    assert.equal(await page.evaluate("window.__blinked"), false, "the row's marks were taken away while read again");
  });

  it("suspends a CronJob from the page after asking, with the user's rights", async () => {
    await page.click(`[data-open="${NS}/report"]`);
    await page.waitForSelector(`[data-detail="${NS}/report"] [data-action="suspend"]`);
    await page.click(`[data-detail="${NS}/report"] [data-action="suspend"]`);
    await page.waitForSelector(`[data-action-result="suspend"][data-ok="true"]`, { timeout: 30_000 });
    assert.ok(
      dialogs.some((d) => d.includes(`${NS}/report`)),
      dialogs.join(),
    );
    assert.equal((await client.get<CronJob>(CronJobResource, NS, "report")).spec.suspend, true);
    await page.waitForSelector(`[data-id="${NS}/report"] [data-suspended]`, { timeout: 10_000 });
  });

  it("follows the groups: a lane comes and goes with its ConcurrencyGroup, one its CronJobs name shows missing", async () => {
    const lane = (name: string) => `document.querySelector('[data-group="${NS}/${name}"]')`;
    await client.create(ConcurrencyGroupResource, {
      apiVersion: API_VERSION,
      kind: "ConcurrencyGroup",
      metadata: { name: "spare", namespace: NS },
      spec: { limit: 2 },
    });
    await page.waitForFunction(`${lane("spare")} !== null`, { timeout: 10_000 });
    await client.delete(ConcurrencyGroupResource, NS, "spare");
    await page.waitForFunction(`${lane("spare")} === null`, { timeout: 10_000 });
    await client.delete(ConcurrencyGroupResource, NS, "db");
    await page.waitForFunction(`(${lane("db")}?.textContent ?? "").includes("missing")`, { timeout: 10_000 });
  });

  it("ran without an error in the page (a CSP violation, a script error)", () => {
    assert.deepEqual(errors, []);
  });

  it("refuses, at the running command, a request without the token or of another Host", async () => {
    const base = `http://127.0.0.1:${dashboard.port}`;
    assert.equal((await fetch(`${base}/api/fleet`)).status, 401);
    assert.equal((await fetch(`${base}/api/fleet?token=${dashboard.token}`)).status, 200);
    const rebound = await new Promise<number>((resolve, reject) => {
      import("node:http").then(({ request }) => {
        const r = request(
          {
            host: "127.0.0.1",
            port: dashboard.port,
            path: `/api/fleet?token=${dashboard.token}`,
            headers: { Host: "rebind.example" },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        r.on("error", reject);
        r.end();
      }, reject);
    });
    assert.equal(rebound, 403);
  });

  it("started with --read-only, the running command refuses every action and changes nothing", async () => {
    const readOnly = await startDashboard(env.kubeconfigPath, ["-n", NS, "--read-only"]);
    try {
      const origin = `http://127.0.0.1:${readOnly.port}`;
      for (const action of ["run", "suspend", "resume"]) {
        const r = await fetch(`${origin}/api/action?token=${readOnly.token}`, {
          method: "POST",
          headers: { "Content-Type": "application/json", Origin: origin },
          body: JSON.stringify({ action, id: `${NS}/backup` }),
        });
        const body = await r.text();
        assert.equal(r.status, 403, `${action}: ${body}`);
        assert.match(body, /--read-only/);
      }
      // Nothing was done: no suspend, no run-now request on the CronJob.
      const cj = await client.get<CronJob>(CronJobResource, NS, "backup");
      assert.notEqual(cj.spec.suspend, true);
      assert.equal(cj.metadata.annotations?.[RUN_NOW_ANNOTATION], undefined);
      // The page it serves offers no action either.
      const fleetData = (await (await fetch(`${origin}/api/fleet?token=${readOnly.token}`)).json()) as {
        actions?: boolean;
      };
      assert.equal(fleetData.actions, false);
    } finally {
      await readOnly.stop();
    }
  });
});
