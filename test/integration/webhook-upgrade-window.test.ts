// An upgrade's window against kube-apiserver: the webhook configurations of this release installed (as kubectl apply
// and Helm apply them, beside the Deployment), answered by a replica of an older release that serves the CronJob's
// webhooks but not the fleet kinds' (ExclusionCalendar, ConcurrencyGroup): the state of every rollout that adds a
// webhook, until the new Pods run. Such a replica answered Go's 404, and the API server refused every calendar and
// group write for the seconds of the rollout; it now admits them, with a warning naming the webhook
// (webhooks/unserved.ts, as cmd/run.ts sets it), and the CronJob's own webhooks still check as before.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { API_VERSION } from "../../api/v1/index.ts";
import { discardLogger } from "../../runtime/log.ts";
import type { AdmissionHandler } from "../../runtime/webhook/index.ts";
import { cronJobWebhookHandlers, VALIDATE_PATH } from "../../webhooks/cronjob_webhook.ts";
import { CALENDAR_VALIDATE_PATH, GROUP_VALIDATE_PATH } from "../../webhooks/fleet_webhooks.ts";
import { unservedAdmission, unservedWarning } from "../../webhooks/unserved.ts";
import { minimalCronJob } from "../fixtures.ts";
import { probeOf, withWebhookServer } from "../servers.ts";

describe("an upgrade's window: a webhook configuration newer than the replica that answers", () => {
  const probed = new Set<string>();
  /** The paths that answered a request that was not a dry run. */
  const served = new Set<string>();
  /** An older replica's table: the CronJob's webhooks only. */
  const handlers = new Map<string, AdmissionHandler>();
  for (const [path, handler] of cronJobWebhookHandlers()) {
    handlers.set(path, (req) => {
      (req.dryRun ? probed : served).add(path);
      return handler(req);
    });
  }
  const webhooks = withWebhookServer(handlers, {
    server: { unservedAdmission: unservedAdmission(discardLogger) },
    cluster: { probes: [{ object: probeOf(minimalCronJob("unused")), seen: () => probed.has(VALIDATE_PATH) }] },
  });

  /** `kubectl create` of `obj`: its exit code, and what it printed on stderr (the warnings, a refusal). */
  async function create(obj: Record<string, unknown>): Promise<{ code: number; stderr: string }> {
    const r = await webhooks.env.kubectl(["create", "-f", "-"], JSON.stringify(obj));
    return { code: r.code, stderr: r.stderr };
  }

  it("admits a calendar and a group the replica has no webhook for, with a warning naming the webhook", async () => {
    const calendar = {
      apiVersion: API_VERSION,
      kind: "ExclusionCalendar",
      metadata: { name: "freeze", namespace: "default" },
      spec: { windows: [{ name: "release", start: "2026-12-20", end: "2027-01-02" }] },
    };
    const made = await create(calendar);
    assert.equal(made.code, 0, made.stderr);
    assert.ok(
      made.stderr.split("\n").includes(`Warning: ${unservedWarning(CALENDAR_VALIDATE_PATH)}`),
      `the warning names the webhook: ${made.stderr}`,
    );
    const group = {
      apiVersion: API_VERSION,
      kind: "ConcurrencyGroup",
      metadata: { name: "db", namespace: "default" },
      spec: { limit: 2 },
    };
    const madeGroup = await create(group);
    assert.equal(madeGroup.code, 0, madeGroup.stderr);
    assert.ok(
      madeGroup.stderr.split("\n").includes(`Warning: ${unservedWarning(GROUP_VALIDATE_PATH)}`),
      madeGroup.stderr,
    );
  });

  it("still serves its own: a CronJob goes through the replica's CronJob webhooks, with no such warning", async () => {
    const made = await create(minimalCronJob("nightly") as unknown as Record<string, unknown>);
    assert.equal(made.code, 0, made.stderr);
    assert.doesNotMatch(made.stderr, /admitted without the webhook/);
    assert.ok(served.has(VALIDATE_PATH), "the validating webhook answered the create");
  });
});
