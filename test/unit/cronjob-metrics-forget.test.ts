// A deleted CronJob's per-CronJob run series go on one path: the reconciler, when it finds the CronJob
// gone (cmd/run.ts has no delete handler of its own). The CronJobMetrics tests cover what forget() drops.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { API_VERSION, CronJobResource, KIND, type CronJobInput } from "../../api/v1/index.ts";
import { CronJobReconciler, setupCache } from "../../controllers/cronjob_controller.ts";
import type { CronJobRunMetrics, RunOutcome } from "../../controllers/metrics.ts";
import { FakeRecorder } from "../../runtime/events/fake.ts";
import { FakeClient } from "../../runtime/fake/client.ts";
import { FakeClock } from "../../runtime/fake-clock.ts";
import { Kinds } from "../../runtime/kinds.ts";
import { discardLogger } from "../../runtime/log.ts";

class RecordingMetrics implements CronJobRunMetrics {
  readonly calls: string[] = [];
  countRun(namespace: string, name: string, outcome: RunOutcome): void {
    this.calls.push(`countRun ${namespace}/${name} ${outcome}`);
  }
  forget(namespace: string, name: string): void {
    this.calls.push(`forget ${namespace}/${name}`);
  }
}

describe("per-CronJob run series of a deleted CronJob", () => {
  it("the reconciler forgets them when it finds the CronJob gone", async () => {
    const client = new FakeClient();
    setupCache(client);
    await client.create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: "ns" } });
    const metrics = new RecordingMetrics();
    const clock = new FakeClock(0);
    const reconciler = new CronJobReconciler({
      client,
      cache: client.cache,
      recorder: new FakeRecorder({ capacity: 100 }),
      clock,
      metrics,
    });
    let n = 0;
    const reconcile = () =>
      reconciler.reconcile(
        { namespace: "ns", name: "every-minute" },
        { log: discardLogger, reconcileID: `r${++n}`, signal: new AbortController().signal },
      );

    const created = await client.create<CronJobInput>(CronJobResource, {
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: { name: "every-minute", namespace: "ns" },
      spec: {
        schedule: "* * * * *",
        jobTemplate: {
          spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "main", image: "busybox" }] } } },
        },
      },
    });
    // A slot is due once a minute has passed since the CronJob was created.
    clock.set(new Date(new Date(created.metadata.creationTimestamp ?? 0).getTime() + 90_000));
    await reconcile();
    assert.ok(
      metrics.calls.includes("countRun ns/every-minute created"),
      `a run was counted: ${metrics.calls.join("; ")}`,
    );
    assert.ok(!metrics.calls.some((c) => c.startsWith("forget")), "forgotten while it exists");

    await client.delete(CronJobResource, "ns", "every-minute");
    await reconcile();
    assert.equal(metrics.calls.filter((c) => c === "forget ns/every-minute").length, 1, metrics.calls.join("; "));
  });
});
