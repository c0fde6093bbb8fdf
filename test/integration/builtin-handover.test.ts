// The handover in real time, without a node: kube-controller-manager runs the built-in CronJob controller
// (batch/v1beta1 on 1.20, batch/v1 from 1.21), our manager runs in-process, and `kubectl cron migrate` /
// `unmigrate` hand a CronJob firing every minute from one to the other and back. Across both kinds every
// slot has exactly one Job (the Jobs run no Pods here; test/e2e/migrate.test.ts is the same on a real node).
// About five minutes. Named to sort first: the integration runner starts files in name order, and this one, mostly
// waiting for real minutes, is the longest; started last it would be the run's tail.
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { CronJobReconciler } from "../../controllers/cronjob_controller.ts";
import { SCHEDULED_AT_ANNOTATION, type Job } from "../../api/v1/index.ts";
import { Client } from "../../runtime/client.ts";
import { Kinds } from "../../runtime/kinds.ts";
import { createLogger } from "../../runtime/log.ts";
import { Manager } from "../../runtime/manager.ts";
import { TestEnv } from "../../envtest/index.ts";
import { EXIT, main } from "../../cmd/kubectl-cron/main.ts";
import { builtinCronJobKind } from "../../cmd/kubectl-cron/model/builtin.ts";
import { eventually } from "../eventually.ts";
import { builtinCronJobVersion, serverVersion } from "../versions.ts";

const NS = "default";
const NAME = "every-minute";
const MINUTE = 60_000;

/**
 * Ours: slot from the annotation. The built-in's from the name: 1.20's old controller names a Job
 * <cronjob>-<Unix seconds> (10 digits), the v2 controller (the default from 1.21, the only one from 1.23)
 * <cronjob>-<Unix minutes> (8 digits until 2160).
 */
function slotOf(job: Job): { kind: "ours" | "builtin"; slot: number } | undefined {
  const m = /^every-minute-(\d+)$/.exec(job.metadata?.name ?? "");
  if (!m) return undefined;
  const annotated = job.metadata?.annotations?.[SCHEDULED_AT_ANNOTATION];
  if (annotated) return { kind: "ours", slot: Date.parse(annotated) };
  return { kind: "builtin", slot: Number(m[1]) * (m[1]!.length >= 10 ? 1000 : MINUTE) };
}

describe("kubectl cron migrate/unmigrate in real time: built-in controller and ours", { timeout: 600_000 }, () => {
  let env: TestEnv;
  let client: Client;
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  const logs: string[] = [];

  before(async () => {
    env = await TestEnv.start({ controllerManager: { controllers: ["cronjob", "garbagecollector"] } });
    client = new Client(env.kubeConfig);
    const mgr = new Manager({
      kubeConfig: env.kubeConfig,
      logger: createLogger({
        level: "debug",
        stream: new Writable({
          write(chunk: Buffer, _enc, done) {
            logs.push(chunk.toString().trim());
            done();
          },
        }),
      }),
    });
    CronJobReconciler.setupWithManager(mgr, {});
    running = mgr.start(stop.signal);
  });
  after(async () => {
    stop.abort();
    await running;
    client?.close();
    await env?.stop();
  });

  async function cron(...argv: string[]) {
    let out = "";
    let err = "";
    const code = await main([...argv, "--kubeconfig", env.kubeconfigPath, "-n", NS], {
      stdout: (s) => (out += s),
      stderr: (s) => (err += s),
      env: {},
    });
    return { code, out: out + err };
  }
  async function slots() {
    const jobs = (await client.list<Job>(Kinds.Job, { namespace: NS })).items;
    return jobs.map(slotOf).filter((s) => s !== undefined);
  }
  const detail = () => `\noperator log:\n${logs.slice(-30).join("\n")}`;

  it("every slot has exactly one Job, across the migration and the give-back", async () => {
    const version = builtinCronJobVersion(await serverVersion(env.kubeConfig));
    await client.create(builtinCronJobKind(version), {
      apiVersion: `batch/${version}`,
      kind: "CronJob",
      metadata: { name: NAME, namespace: NS },
      spec: {
        schedule: "*/1 * * * *",
        successfulJobsHistoryLimit: 100,
        failedJobsHistoryLimit: 100,
        jobTemplate: {
          spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] } } },
        },
      },
    });
    await eventually("a Job of the built-in CronJob", async () => (await slots()).length > 0, 100_000, detail, 1000);

    const migrated = await cron("migrate", NAME);
    assert.equal(migrated.code, EXIT.ok, migrated.out);
    const migratedAt = Date.now();
    await eventually(
      "two Jobs of ours",
      async () => (await slots()).filter((s) => s.kind === "ours").length >= 2,
      170_000,
      async () => `${detail()}\n${JSON.stringify(await slots())}`,
      1000,
    );
    assert.ok((await slots()).every((s) => s.kind === "ours" || s.slot < migratedAt));

    const back = await cron("unmigrate", NAME);
    assert.equal(back.code, EXIT.ok, back.out);
    const backAt = Date.now();
    await eventually(
      "a Job of the built-in CronJob after the give-back",
      async () => (await slots()).some((s) => s.kind === "builtin" && s.slot > backAt - MINUTE),
      100_000,
      detail,
      1000,
    );
    await client.patch(builtinCronJobKind(version), NS, NAME, { spec: { suspend: true } }, "merge");
    await new Promise((r) => setTimeout(r, 12_000));

    const all = (await slots()).sort((a, b) => a.slot - b.slot);
    const counts = new Map<number, string[]>();
    for (const s of all) counts.set(s.slot, [...(counts.get(s.slot) ?? []), s.kind]);
    const report = [...counts].map(([t, k]) => `${new Date(t).toISOString()} ${k.join("+")}`).join("\n");
    for (let t = all[0]!.slot; t <= all.at(-1)!.slot; t += MINUTE) {
      assert.equal(counts.get(t)?.length, 1, `slot ${new Date(t).toISOString()}:\n${report}`);
    }
    const runs = all.map((s) => s.kind).filter((k, i, xs) => i === 0 || xs[i - 1] !== k);
    assert.deepEqual(runs, ["builtin", "ours", "builtin"], report);
  });
});
