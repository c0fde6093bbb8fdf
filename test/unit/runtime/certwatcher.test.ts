// The webhook certificate watcher on real files: the initial pair, reloads (unchanged, new, invalid),
// callbacks before the switch, the directory watch, and stop().
import assert from "node:assert/strict";
import { renameSync, writeFileSync } from "node:fs";
import { describe, it } from "node:test";
import { generateWebhookCertificates } from "../../../envtest/certs.ts";
import { discardLogger, type Logger } from "../../../runtime/log.ts";
import { CertWatcher, loadKeyPair, type KeyPair } from "../../../runtime/webhook/certwatcher.ts";

async function eventually(what: string, check: () => boolean, timeoutMs = 8_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function errorLogger(): { logger: Logger; errors: string[] } {
  const errors: string[] = [];
  return { logger: { ...discardLogger, error: (msg: string) => errors.push(msg) }, errors };
}

describe("CertWatcher", () => {
  it("loads the pair at construction and names the file at fault", async () => {
    const certs = await generateWebhookCertificates();
    try {
      const w = new CertWatcher({ certDir: certs.dir, logger: discardLogger });
      assert.equal(w.current.serialNumber, certs.serving.serialNumber);
      assert.equal(w.certPath, `${certs.dir}/tls.crt`);
      assert.throws(
        () => new CertWatcher({ certDir: certs.dir, keyName: "nope.key", logger: discardLogger }),
        /cannot read the webhook serving key .*nope\.key/,
      );
      assert.throws(() => loadKeyPair(`${certs.dir}/tls.key`, `${certs.dir}/tls.key`), /is not a PEM certificate/);
    } finally {
      certs.cleanup();
    }
  });

  it("reloads on request: false when unchanged, callbacks before the switch, keeps the pair on bad files", async () => {
    const certs = await generateWebhookCertificates();
    try {
      const w = new CertWatcher({ certDir: certs.dir, logger: discardLogger });
      const seen: Array<{ next: string; current: string }> = [];
      w.registerCallback((next: KeyPair) => seen.push({ next: next.serialNumber, current: w.current.serialNumber }));
      const first = w.current.serialNumber;
      assert.equal(await w.reload(), false);

      const rotated = await certs.rotate();
      assert.equal(await w.reload(), true);
      assert.deepEqual(seen, [{ next: rotated.serialNumber, current: first }]);
      assert.equal(w.current.serialNumber, rotated.serialNumber);

      writeFileSync(w.certPath, "-----BEGIN CERTIFICATE-----\nhalf-writ");
      await assert.rejects(w.reload(), /tls\.crt is not a PEM certificate/);
      assert.equal(w.current.serialNumber, rotated.serialNumber);
      assert.equal(seen.length, 1);
      await w.stop();
    } finally {
      certs.cleanup();
    }
  });

  for (const layout of ["files", "secret-volume"] as const) {
    it(`picks up a rotation from the directory watch, and nothing after stop() (${layout})`, async () => {
      const certs = await generateWebhookCertificates(undefined, { layout });
      const w = new CertWatcher({ certDir: certs.dir, pollIntervalMs: 60_000, logger: discardLogger });
      try {
        const installed: string[] = [];
        w.registerCallback((p) => installed.push(p.serialNumber));
        w.start();
        const next = await certs.rotate();
        await eventually("the rotated pair", () => w.current.serialNumber === next.serialNumber);
        assert.deepEqual(installed, [next.serialNumber]);

        await w.stop();
        await certs.rotate();
        await new Promise((r) => setTimeout(r, 400));
        assert.equal(w.current.serialNumber, next.serialNumber);
      } finally {
        await w.stop();
        certs.cleanup();
      }
    });
  }

  it("logs a failure that repeats on every poll once", async () => {
    const certs = await generateWebhookCertificates();
    const { logger, errors } = errorLogger();
    const w = new CertWatcher({ certDir: certs.dir, pollIntervalMs: 30, logger });
    try {
      w.start();
      // Renamed into place, so no poll sees a half-written file (a different failure).
      writeFileSync(`${w.certPath}.new`, "garbage");
      renameSync(`${w.certPath}.new`, w.certPath);
      await new Promise((r) => setTimeout(r, 400));
      assert.deepEqual(errors, ["Cannot load the new webhook serving certificate; keeping the current one"]);
      const next = await certs.rotate();
      await eventually("the good pair", () => w.current.serialNumber === next.serialNumber);
    } finally {
      await w.stop();
      certs.cleanup();
    }
  });
});
