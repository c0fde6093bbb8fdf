// A webhook server's death under load, against kube-apiserver: two manager processes in --webhooks-only mode share
// the webhook port (--webhook-reuse-port, SO_REUSEPORT), as the manager's container and its Pod's webhooks container
// do (config/default), and CronJobs are created through the API server without a pause, v1 and v2 (the v2 ones
// through the CRD's conversion webhook, which the API server never retries). One process is SIGKILLed, started
// again, then the other: the port keeps answering, so no create made a moment (GRACE_MS) after a death fails. With one listener the
// address refused every call until something listened again ("connect: connection refused"), which is what a
// SIGKILLed container's Pod did for the seconds until it left the Service's endpoints.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { KubernetesObjectApi, type KubernetesObject } from "@kubernetes/client-node";
import { RESOURCE } from "../../api/v1/index.ts";
import { generateWebhookCertificates, type WebhookCertificates } from "../../envtest/certs.ts";
import { PROJECT_ROOT, TestEnv } from "../../envtest/index.ts";
import { freePort } from "../../envtest/ports.ts";
import type { ManagedProcess } from "../../envtest/processes.ts";
import { installConversionWebhook, installWebhooks } from "../../envtest/webhook.ts";
import { webhookConfigurations } from "../../hack/crdgen/webhook.ts";
import type { V1MutatingWebhookConfiguration, V1ValidatingWebhookConfiguration } from "@kubernetes/client-node";
import { eventually } from "../eventually.ts";
import { minimalCronJob } from "../fixtures.ts";
import { managerProcess } from "../manager-process.ts";

const NS = "default";
/**
 * How long after a death a create may still meet the dead process's connections: the API server drops a pooled
 * connection the kernel reset once its reader sees the reset, which on a loaded machine took over a second (a CI run
 * here, with other work beside it: one EOF 1 s after the death). A single listener fails every create until something
 * listens again, so the bound still tells the two apart.
 */
const GRACE_MS = 3_000;
const V2 = "batch.tutorial.kubebuilder.io/v2";

/** One create through the API server: when it started and ended, and how it went. */
interface Create {
  name: string;
  version: "v1" | "v2";
  startedAt: number;
  endedAt: number;
  error?: string;
}

describe("a webhook server SIGKILLed under load while another shares its port (--webhook-reuse-port)", () => {
  let env: TestEnv;
  let certs: WebhookCertificates;
  let port: number;
  let client: KubernetesObjectApi;
  const started: ManagedProcess[] = [];
  const logFiles: string[] = [];

  /** A manager serving the webhooks only, on the shared port; resolves once its /readyz answers 200. */
  async function webhookServer(name: string): Promise<ManagedProcess> {
    const m = managerProcess({
      name,
      dir: env.dir,
      kubeconfigPath: env.kubeconfigPath,
      webhookPort: port,
      args: [
        "--webhooks-only",
        "--webhook-reuse-port",
        "--webhook-host",
        "127.0.0.1",
        "--webhook-cert-path",
        certs.dir,
      ],
      env: { ENABLE_WEBHOOKS: "" },
    });
    started.push(m.proc);
    logFiles.push(m.logFile);
    await m.ready(60_000);
    return m.proc;
  }

  before(async () => {
    env = await TestEnv.start();
    certs = await generateWebhookCertificates();
    port = await freePort();
    client = KubernetesObjectApi.makeApiClient(env.kubeConfig);
  });
  after(async () => {
    for (const p of started) await p.stop().catch(() => {});
    await env?.stop();
  });

  it("keeps answering the API server across each process's death: no create made a moment after a death fails", async (t) => {
    await webhookServer("webhooks-a");
    const b = await webhookServer("webhooks-b");
    const a = started[0]!;
    const configs = webhookConfigurations();
    await installWebhooks(env, {
      mutating: configs.filter((c) => c.kind === "MutatingWebhookConfiguration") as V1MutatingWebhookConfiguration[],
      validating: configs.filter(
        (c) => c.kind === "ValidatingWebhookConfiguration",
      ) as V1ValidatingWebhookConfiguration[],
      port,
      caPEM: certs.caPEM,
    });
    await installConversionWebhook(env, {
      crdName: RESOURCE,
      patchPath: join(PROJECT_ROOT, "config", "crd", "patches", "webhook_in_cronjobs.yaml"),
      port,
      caPEM: certs.caPEM,
    });

    // The load: one create after the other, v1 and v2 in turn, until stopped.
    const creates: Create[] = [];
    let stop = false;
    const load = (async () => {
      for (let i = 0; !stop; i++) {
        const version = i % 2 ? "v2" : "v1";
        const name = `load-${i}`;
        const v1 = minimalCronJob(name, NS) as unknown as Record<string, unknown> & { spec: Record<string, unknown> };
        const { schedule, ...rest } = v1.spec;
        const obj = version === "v1" ? v1 : { ...v1, apiVersion: V2, spec: { ...rest, schedules: [{ schedule }] } };
        const c: Create = { name, version, startedAt: Date.now(), endedAt: 0 };
        try {
          await client.create(obj as KubernetesObject);
        } catch (err) {
          const body = (err as { body?: unknown }).body;
          c.error = typeof body === "string" ? body : err instanceof Error ? err.message : String(err);
        }
        c.endedAt = Date.now();
        creates.push(c);
      }
    })();
    const createsSince = (at: number) => creates.filter((c) => c.startedAt >= at);
    const waitCreates = (what: string, at: number, n: number) =>
      eventually(what, async () => (createsSince(at).length >= n ? true : undefined), 120_000);

    try {
      await waitCreates("creates before the first death", 0, 10);
      // The first death: a; b holds the port alone after it, so every connection the API server makes next is b's.
      await a.kill();
      const firstDeath = Date.now();
      await waitCreates("creates after the first death", firstDeath + GRACE_MS, 20);
      // a again, then the death of b, which holds every connection the API server kept.
      await webhookServer("webhooks-a2");
      await waitCreates("creates with both answering again", Date.now(), 10);
      await b.kill();
      const secondDeath = Date.now();
      await waitCreates("creates after the second death", secondDeath + GRACE_MS, 20);
      stop = true;
      await load;

      // At a death, a call the dying process was answering is lost with it, and for a moment the API server can
      // still pick a pooled connection to it that the kernel has just reset (it retries no EOF; a conversion not even
      // a reset): those are reported, not counted. Every create started once a death is GRACE_MS old must pass; with
      // one listener, every create failed until something listened on the port again.
      const atADeath = (c: Create) =>
        [firstDeath, secondDeath].some((d) => c.startedAt < d + GRACE_MS && c.endedAt >= d);
      const inFlight = creates.filter((c) => c.error !== undefined && atADeath(c));
      const failedAfter = creates.filter((c) => c.error !== undefined && c.startedAt >= firstDeath && !atADeath(c));
      t.diagnostic(
        `${creates.length} creates (${creates.filter((c) => c.version === "v2").length} in v2); ` +
          `failed at a death (within ${GRACE_MS} ms): ${inFlight.length} (${inFlight.map((c) => c.error?.slice(0, 600)).join("; ")})`,
      );
      // How long after the death before it each failure started: what a next bound would be measured from.
      const sinceDeath = (c: Create) => c.startedAt - (c.startedAt >= secondDeath ? secondDeath : firstDeath);
      assert.deepEqual(
        failedAfter.map((c) => `${c.version} ${c.name} (${sinceDeath(c)} ms after a death): ${c.error}`),
        [],
        "creates started after a webhook server's death failed",
      );
      assert.ok(
        createsSince(secondDeath).some((c) => c.version === "v2" && !c.error),
        "v2 creates went through",
      );
      // The webhooks are still in the path: the survivor refuses what they refuse.
      const bad = minimalCronJob("bad-schedule", NS) as unknown as { spec: Record<string, unknown> };
      bad.spec.schedule = "* * *";
      await assert.rejects(client.create(bad as unknown as KubernetesObject), /schedule/);
      for (const f of logFiles.slice(0, 2)) assert.match(readFileSync(f, "utf8"), /"reusePort":true/);
    } finally {
      stop = true;
      await load;
    }
  });
});
