// A headless Chromium for the dashboard's tests and its benchmark (bench/dashboard.ts), driven by puppeteer-core
// (which brings no browser): Debian's chromium-headless-shell, found by hack/setup-chromium (CHROMIUM, which make
// test and make test-e2e set).
import { existsSync } from "node:fs";
import { type Browser, launch, type Page } from "puppeteer-core";

const DEFAULT = "/usr/bin/chromium-headless-shell";

export function chromiumPath(): string {
  const path = process.env.CHROMIUM || DEFAULT;
  if (!existsSync(path)) {
    throw new Error(
      `no headless Chromium at ${path}: run hack/setup-chromium (Debian's chromium-headless-shell), or set CHROMIUM`,
    );
  }
  return path;
}

/** A browser of its own profile; the test closes it. Root needs --no-sandbox (as in CI). */
export function startBrowser(): Promise<Browser> {
  return launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check"],
    defaultViewport: { width: 1400, height: 900 },
  });
}

/**
 * Chromium's own, not the page's: it aborts the requests in flight when the host's network changes, which a real
 * node on the same machine does whenever a Pod's interface comes or goes (seen in CI: the end-to-end dashboard's
 * check failed on it as a run's Pod started). The page's requests are made again (its event stream reconnects, its
 * reads repeat), and the checks before and after hold it to that.
 */
const HOST_NETWORK_CHANGED = /^Failed to load resource: net::ERR_NETWORK_CHANGED$/;

/** A page at `url`, with what it threw or logged as an error (a CSP violation is one) and the dialogs it opened (accepted). */
export async function openPage(
  browser: Browser,
  url: string,
): Promise<{ page: Page; errors: string[]; dialogs: string[] }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  const dialogs: string[] = [];
  page.on("pageerror", (e) => errors.push(e instanceof Error ? e.message : String(e)));
  page.on("console", (m) => {
    if (m.type() === "error" && !HOST_NETWORK_CHANGED.test(m.text())) errors.push(m.text());
  });
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.accept();
  });
  await page.goto(url);
  return { page, errors, dialogs };
}
