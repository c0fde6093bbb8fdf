// What the API server says about a Job the controller creates reaches the CronJob's Events: its 299 warnings,
// and the template's fields it dropped because its Job API lacks them (a cluster older than the CRD's Job
// template), named by path in one JobWarning Event beside SuccessfulCreate.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setupCache } from "../../controllers/cronjob_controller.ts";
import type { WriteOptions } from "../../runtime/client.ts";
import { FakeClient } from "../../runtime/fake/client.ts";
import { type KubeObject, Kinds } from "../../runtime/kinds.ts";
import { ReconcileHarness } from "../integration/cronjob/harness.ts";

const HOUR = 3600_000;

/** An API server whose Job API lacks containers[].lifecycle.stopSignal (as 1.32 does): dropped with a warning. */
class OlderJobAPI extends FakeClient {
  override async create<T extends KubeObject>(rk: Parameters<FakeClient["create"]>[0], obj: T, o: WriteOptions = {}) {
    if (rk !== Kinds.Job) return super.create(rk, obj, o);
    const job = structuredClone(obj) as any;
    for (const c of job.spec.template.spec.containers) {
      if (c.lifecycle?.stopSignal) {
        delete c.lifecycle.stopSignal;
        o.onWarning?.(`unknown field "spec.template.spec.containers[0].lifecycle.stopSignal"`);
      }
    }
    return super.create(rk, job as T, o);
  }
}

describe("JobWarning", () => {
  it("reports the API server's warnings and the fields it dropped from a created Job", async () => {
    const client = new OlderJobAPI();
    setupCache(client);
    const h = await ReconcileHarness.fake("warn", new Date().toISOString(), client);
    const created = await h.createCronJob("cj", {
      schedule: "0 * * * *",
      jobTemplate: {
        spec: {
          template: {
            spec: {
              restartPolicy: "Never",
              containers: [{ name: "c", image: "busybox", lifecycle: { stopSignal: "SIGUSR1" } } as any],
            },
          },
        },
      },
    });
    const next = Math.floor(new Date(created.metadata.creationTimestamp!).getTime() / HOUR) * HOUR + HOUR;
    h.clock.set(new Date(next + 1_000));
    h.takeEvents();
    await h.reconcile("cj");
    assert.equal((await h.jobs("cj")).length, 1, "the Job is created (the cluster dropped the field)");
    const events = h.takeEvents();
    assert.ok(
      events.some((e) => e.startsWith("Normal SuccessfulCreate")),
      events.join("\n"),
    );
    const warning = events.filter((e) => e.startsWith("Warning JobWarning"));
    assert.equal(warning.length, 1, events.join("\n"));
    assert.match(
      warning[0]!,
      /^Warning JobWarning Job cj-\d+: unknown field "spec\.template\.spec\.containers\[0\]\.lifecycle\.stopSignal"; spec\.template\.spec\.containers\[0\]\.lifecycle\.stopSignal: this cluster's Job API has no such field; the Job was created without it$/,
    );

    // A template with no such field: SuccessfulCreate only.
    await h.createCronJob("plain", { schedule: "0 * * * *" });
    h.clock.set(new Date(next + HOUR + 1_000));
    h.takeEvents();
    await h.reconcile("plain");
    const plain = h.takeEvents();
    assert.ok(
      plain.some((e) => e.startsWith("Normal SuccessfulCreate")),
      plain.join("\n"),
    );
    assert.ok(!plain.some((e) => e.includes("JobWarning")), plain.join("\n"));
  });
});
