// Polling for integration tests: wait until a condition holds against a real server.
import assert from "node:assert/strict";

/**
 * Calls `fn` every `everyMs` until it returns something other than undefined or false, and returns that.
 * Errors thrown meanwhile count as "not yet"; on time-out the last one and `detail()` (e.g. a log's tail)
 * go into the failure message.
 */
export async function eventually<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  timeoutMs = 30_000,
  detail: () => string | Promise<string> = () => "",
  everyMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  assert.fail(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}${await detail()}`);
}
