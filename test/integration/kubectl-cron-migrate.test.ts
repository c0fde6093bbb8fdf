// kubectl cron migrate / unmigrate against a real kube-apiserver, through the plugin's own entry point; the
// garbage collector runs for --delete's orphaning. The built-in CronJob is the version the server prefers:
// batch/v1beta1 on 1.20 (the only one it serves), batch/v1 from 1.21 (batch/v1beta1 is gone from 1.25).
// The handover's anchor is checked with the real reconciler (fake clock): after a migration ours runs the slot
// after the original's last run, never that run again; after the give-back the original's status says so.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { parseAllDocuments } from "yaml";
import { CronJobResource, type CronJob } from "../../api/v1/index.ts";
import { cronJobOwnerOf, type Job } from "../../api/v1/index.ts";
import { Kinds } from "../../runtime/kinds.ts";
import { TestEnv } from "../../envtest/index.ts";
import { EXIT, main } from "../../cmd/kubectl-cron/main.ts";
import { builtinCronJobKind, type BuiltinCronJob } from "../../cmd/kubectl-cron/model/builtin.ts";
import { discoverBuiltinVersion } from "../../cmd/kubectl-cron/read/builtin.ts";
import { HANDOVER_ANNOTATION, readMigratedFrom } from "../../cmd/kubectl-cron/model/convert.ts";
import { ReconcileHarness } from "./cronjob/harness.ts";
import { builtinCronJobVersion, serverVersion } from "../versions.ts";

const MINUTE = 60_000;
const iso = (t: number) => new Date(t).toISOString().replace(/\.\d{3}Z$/, "Z");

describe("kubectl cron migrate/unmigrate against kube-apiserver (built-in CronJob)", { timeout: 240_000 }, () => {
  let env: TestEnv;
  let h: ReconcileHarness;
  const ns = "migrate";
  /** The built-in CronJob's version this server prefers, its kind, and "batch/<version>" as a RegExp source. */
  let version: ReturnType<typeof builtinCronJobVersion>;
  let builtinKind: ReturnType<typeof builtinCronJobKind>;
  let apiRe: string;

  before(async () => {
    env = await TestEnv.start({ controllerManager: { controllers: ["garbagecollector"] } });
    h = await ReconcileHarness.create(env, ns, new Date().toISOString());
    version = builtinCronJobVersion(await serverVersion(env.kubeConfig));
    builtinKind = builtinCronJobKind(version);
    apiRe = `batch\\/${version}`;
  });
  after(async () => {
    await h?.stop();
    await env?.stop();
  });

  async function cron(...argv: string[]) {
    let out = "";
    let err = "";
    const code = await main([...argv, "--kubeconfig", env.kubeconfigPath, "-n", ns], {
      stdout: (s) => (out += s),
      stderr: (s) => (err += s),
      env: {},
    });
    return { code, out, err };
  }

  async function createBuiltin(
    name: string,
    spec: Record<string, unknown> = {},
    lastScheduleTime?: string,
    labels: Record<string, string> = { migrate: "yes" },
  ) {
    const created = await h.client.create<BuiltinCronJob>(builtinKind, {
      apiVersion: `batch/${version}`,
      kind: "CronJob",
      metadata: { name, namespace: ns, labels, annotations: { "example.com/team": "data" } },
      spec: {
        schedule: "*/1 * * * *",
        startingDeadlineSeconds: 30,
        successfulJobsHistoryLimit: 10,
        jobTemplate: {
          metadata: { labels: { app: name } },
          spec: {
            template: { spec: { restartPolicy: "OnFailure", containers: [{ name: "c", image: "busybox:1.36" }] } },
          },
        },
        ...spec,
      },
    });
    if (lastScheduleTime) {
      await h.client.patch(builtinKind, ns, name, { status: { lastScheduleTime } }, "merge", { subresource: "status" });
    }
    return created;
  }

  /** A Job as 1.20's built-in (old) controller names it: <cronjob>-<scheduled time in Unix seconds>. */
  async function builtinJob(cj: BuiltinCronJob, slot: number) {
    await h.client.create<Job>(Kinds.Job, {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: {
        name: `${cj.metadata.name}-${slot / 1000}`,
        namespace: ns,
        ownerReferences: [
          {
            apiVersion: `batch/${version}`,
            kind: "CronJob",
            name: cj.metadata.name!,
            uid: cj.metadata.uid!,
            controller: true,
          },
        ],
      },
      spec: { template: { spec: { restartPolicy: "OnFailure", containers: [{ name: "c", image: "busybox:1.36" }] } } },
    });
  }

  it("discovers the built-in CronJob's preferred version (batch/v1beta1 on 1.20, batch/v1 from 1.21)", async () => {
    assert.equal(await discoverBuiltinVersion(h.client), version);
  });

  it("hands over from the original's newest run, once; ours runs the next slot; the give-back carries it back", async () => {
    const last = Math.floor(Date.now() / MINUTE) * MINUTE - 2 * MINUTE;
    // Its status says last-1m, but it created the Job for `last` just before the suspension.
    const original = await createBuiltin("report", {}, iso(last - MINUTE));
    await builtinJob(original, last);

    const r = await cron("migrate", "report", "--settle=0s");
    assert.equal(r.code, EXIT.ok, r.err);
    assert.match(r.out, new RegExp(`^migrate\\/report: migrated from ${apiRe}\\n`));
    const ours = await h.client.get<CronJob>(CronJobResource, ns, "report");
    assert.equal(ours.status?.lastScheduleTime, iso(last));
    assert.equal(ours.spec.suspend, false);
    assert.equal(ours.spec.startingDeadlineSeconds, 30);
    assert.equal(ours.spec.successfulJobsHistoryLimit, 10);
    assert.deepEqual(ours.spec.jobTemplate.metadata?.labels, { app: "report" });
    assert.deepEqual(ours.metadata.labels, { migrate: "yes" });
    assert.equal(ours.metadata.annotations?.["example.com/team"], "data");
    assert.equal(ours.metadata.annotations?.[HANDOVER_ANNOTATION], undefined);
    assert.equal(readMigratedFrom(ours.metadata.annotations)?.uid, original.metadata.uid);
    assert.equal((await h.client.get<BuiltinCronJob>(builtinKind, ns, "report")).spec.suspend, true);

    // Twice: nothing changes.
    const again = await cron("migrate", "report", "--settle=0s");
    assert.equal(again.code, EXIT.ok, again.err);
    assert.match(again.out, /^migrate\/report: already migrated/);
    assert.equal(
      (await h.client.get<CronJob>(CronJobResource, ns, "report")).metadata.resourceVersion,
      ours.metadata.resourceVersion,
    );

    // The real reconciler, just after the next slot: that slot runs, not `last` again.
    await h.settle("report");
    h.clock.set(new Date(last + MINUTE + 5_000));
    await h.reconcile("report");
    const jobs = (await h.jobs("report")).map((j) => j.metadata!.name);
    assert.deepEqual(jobs, [`report-${(last + MINUTE) / 1000}`]);
    // Give back: the original resumes from ours' newest slot, ours stays suspended and marked.
    const back = await cron("unmigrate", "report", "--settle=0s");
    assert.equal(back.code, EXIT.ok, back.err);
    assert.match(back.out, new RegExp(`^migrate\\/report: given back to ${apiRe}\\n`));
    const resumed = await h.client.get<BuiltinCronJob>(builtinKind, ns, "report");
    assert.equal(resumed.spec.suspend, false);
    assert.equal(resumed.status?.lastScheduleTime, iso(last + MINUTE));
    const kept = await h.client.get<CronJob>(CronJobResource, ns, "report");
    assert.equal(kept.spec.suspend, true);
    assert.equal(kept.metadata.annotations?.[HANDOVER_ANNOTATION], "returned");
    const twice = await cron("unmigrate", "report", "--settle=0s");
    assert.match(twice.out, /already given back/);

    // Taken over again (its spec replaced from the original's, which dropped a field), then given back again.
    await h.client.patch(builtinKind, ns, "report", { spec: { startingDeadlineSeconds: null } }, "merge");
    const retake = await cron("migrate", "report", "--settle=0s");
    assert.equal(retake.code, EXIT.ok, retake.err);
    assert.match(retake.out, new RegExp(`^migrate\\/report: migrated from ${apiRe}\\n {2}update `));
    const retaken = await h.client.get<CronJob>(CronJobResource, ns, "report");
    assert.equal(retaken.spec.startingDeadlineSeconds, undefined);
    assert.equal(retaken.spec.suspend, false);
    assert.equal(retaken.metadata.annotations?.[HANDOVER_ANNOTATION], undefined);
    assert.equal((await h.client.get<BuiltinCronJob>(builtinKind, ns, "report")).spec.suspend, true);

    // --delete removes ours; its Job is orphaned by the garbage collector, not deleted.
    const del = await cron("unmigrate", "report", "--delete", "--settle=0s");
    assert.equal(del.code, EXIT.ok, del.err);
    // The garbage collector handles the orphan finalizer once it has discovered the CRD (it rescans every 30 s).
    const deadline = Date.now() + 120_000;
    while (await h.client.get(CronJobResource, ns, "report").catch(() => undefined)) {
      assert.ok(Date.now() < deadline, "ours was not deleted");
      await new Promise((res) => setTimeout(res, 200));
    }
    const orphan = await h.client.get<Job>(Kinds.Job, ns, jobs[0]!);
    assert.equal(cronJobOwnerOf(orphan), undefined);
  });

  it("--dry-run prints YAML and changes nothing; refusals are per object and exit 4", async () => {
    await createBuiltin("dry-a", {}, undefined, { batch: "dry" });
    await createBuiltin("dry-feb30", { schedule: "0 0 30 2 *" }, undefined, { batch: "dry" });
    const dry = await cron("migrate", "-l", "batch=dry", "--dry-run");
    assert.equal(dry.code, EXIT.refused, dry.err);
    const docs = parseAllDocuments(dry.out)
      .map((d) => d.toJS() as CronJob | null)
      .filter((d) => d);
    assert.deepEqual(
      docs.map((d) => d!.metadata.name),
      ["dry-a"],
    );
    assert.match(dry.out, /^# migrate\/dry-feb30: refused: spec\.schedule: Invalid value: "0 0 30 2 \*": never fires/m);
    assert.equal(await h.client.get(CronJobResource, ns, "dry-a").catch(() => undefined), undefined);
    assert.equal((await h.client.get<BuiltinCronJob>(builtinKind, ns, "dry-a")).spec.suspend, false);

    const real = await cron("migrate", "-l", "batch=dry", "--settle=0s", "-o", "json");
    assert.equal(real.code, EXIT.refused);
    const outcomes = Object.fromEntries(
      (JSON.parse(real.out) as { items: { name: string; outcome: string }[] }).items.map((i) => [i.name, i.outcome]),
    );
    assert.equal(outcomes["dry-a"], "migrated");
    assert.equal(outcomes["dry-feb30"], "refused");
    assert.equal((await h.client.get<BuiltinCronJob>(builtinKind, ns, "dry-feb30")).spec.suspend, false);
  });

  it("refuses to take over when a CronJob of this kind with that name already exists", async () => {
    await createBuiltin("taken");
    await h.client.create(CronJobResource, h.cronJob("taken", {}) as CronJob);
    const r = await cron("migrate", "taken", "--settle=0s");
    assert.equal(r.code, EXIT.refused);
    assert.match(r.out, new RegExp(`already exists and was not migrated from this ${apiRe} CronJob`));
    assert.equal((await h.client.get<BuiltinCronJob>(builtinKind, ns, "taken")).spec.suspend, false);
  });

  it("list shows where a migrated CronJob came from; -o yaml prints the same objects", async () => {
    const r = await cron("list");
    assert.equal(r.code, EXIT.ok, r.err);
    assert.match(r.out, new RegExp(`^dry-a\\s+\\*\\/1 \\* \\* \\* \\*\\s+false\\s+0\\s+.*${apiRe}$`, "m"));
    const y = await cron("list", "-o", "yaml");
    assert.match(y.out, /^items:\n/);
  });

  it("completes CronJob names from the cluster (kubectl_complete-cron)", async () => {
    let out = "";
    const io = { stdout: (x: string) => (out += x), stderr: () => undefined, env: {} };
    const kc = ["--kubeconfig", env.kubeconfigPath];
    assert.equal(await main(["__complete", "next", ...kc, "-n", ns, "dry"], io), EXIT.ok);
    assert.equal(out, "dry-a\n:4\n");
    out = "";
    await main(["__complete", "migrate", ...kc, "-n", ns, "dry"], io);
    assert.equal(out, "dry-a\ndry-feb30\n:4\n", "migrate completes the built-in kind's names");
  });
});
