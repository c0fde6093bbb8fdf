// kubectl cron migrate / unmigrate on the built-in CronJob users have: batch/v1 with the v2 controller's
// conventions (Kubernetes 1.28 to 1.35), its objects as a 1.32 apiserver returns them (test/fixtures/builtin-v1
// says how they were made), served over HTTP by test/fake-apiserver.ts to the plugin's own entry point
// (kubeconfig, client, discovery, exit codes). Our
// reconciler runs on the same store after the migration, and the built-in controller's scheduling rule after
// the give-back, so that "no slot runs twice and none is lost" is checked slot by slot across both handovers.
// The real 1.20 apiserver (batch/v1beta1) is test/integration/kubectl-cron-migrate.test.ts.
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { parseAllDocuments } from "yaml";
import {
  CronJobResource,
  K8S_SCHEDULED_TIMESTAMP_ANNOTATION,
  rfc3339InZone,
  type CronJob,
  type Job,
} from "../../api/v1/index.ts";
import { parseSchedule } from "../../api/v1/schedule/index.ts";
import { setupCache } from "../../controllers/cronjob_controller.ts";
import { APIError, isAlreadyExists } from "../../runtime/errors.ts";
import { Kinds } from "../../runtime/kinds.ts";
import { rfc3339 } from "../../runtime/metatime.ts";
import { builtinCronJobKind, type BuiltinCronJob } from "../../cmd/kubectl-cron/model/builtin.ts";
import {
  HANDOVER_ANNOTATION,
  MIGRATED_FROM_ANNOTATION,
  readMigratedFrom,
} from "../../cmd/kubectl-cron/model/convert.ts";
import { EXIT, main } from "../../cmd/kubectl-cron/main.ts";
import { runPlugin } from "../plugin-cluster.ts";
import { FakeAPIServer } from "../fake-apiserver.ts";
import { recorded } from "../fixtures/builtin-v1/index.ts";
import { ReconcileHarness } from "../integration/cronjob/harness.ts";

const V1 = builtinCronJobKind("v1");
const NS = "prod";
const NAME = "report";
const OURS = `cronjobs.batch.tutorial.kubebuilder.io ${NS}/${NAME}`;
const THEIRS = `batch/v1 CronJob ${NS}/${NAME}`;

const servers: FakeAPIServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

/**
 * The recorded cluster, its clock at 10:00Z (what ours' creationTimestamp gets); `late`: with the Job the
 * built-in controller created for 10:00Z; `extra`: more objects, made from the recorded ones.
 */
async function cluster(o: { late?: boolean; extra?: (r: ReturnType<typeof recorded>) => object[] } = {}) {
  const r = recorded();
  const server = await new FakeAPIServer({
    discovery: r.discovery,
    notFound: r.notFound,
    now: () => new Date("2026-11-24T10:00:00Z"),
  }).start(NS);
  servers.push(server);
  setupCache(server.store);
  await server.seed(r.cronJob, ...r.jobs, ...(o.late ? [r.lateJob] : []), ...((o.extra?.(r) ?? []) as Job[]));
  return { server, r, originalUID: server.uid(r.cronJob.metadata.uid) };
}

const cron = (server: FakeAPIServer, ...argv: string[]) => runPlugin(server, argv);

const original = (server: FakeAPIServer) => server.store.get<BuiltinCronJob>(V1, NS, NAME);
const ours = (server: FakeAPIServer) => server.store.get<CronJob>(CronJobResource, NS, NAME);

/** Every Job's slot (the annotation both controllers write) and whose it is; manual runs have none. */
async function slots(server: FakeAPIServer): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const job of await server.objects<Job>(Kinds.Job, NS)) {
    const at = job.metadata?.annotations?.[K8S_SCHEDULED_TIMESTAMP_ANNOTATION];
    if (!at) continue;
    const owner = job.metadata?.ownerReferences?.find((o) => o.controller)?.apiVersion ?? "orphan";
    const key = rfc3339(new Date(at));
    out.set(key, [...(out.get(key) ?? []), owner]);
  }
  return new Map([...out].sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * The v2 CronJob controller's scheduling rule (syncCronJob, getJobFromTemplate2), enough to check a give-back:
 * unless suspended, the newest slot after status.lastScheduleTime that has come runs once, as a Job named
 * <name>-<minutes since the epoch> carrying the scheduled-timestamp annotation in the CronJob's zone, and
 * becomes status.lastScheduleTime.
 */
async function builtinControllerAt(server: FakeAPIServer, at: string): Promise<string | undefined> {
  const cj = await original(server);
  if (cj.spec.suspend) return undefined;
  const parsed = parseSchedule(cj.spec.schedule!, cj.spec.timeZone);
  assert.ok(parsed.ok);
  const from = new Date((cj.status?.lastScheduleTime ?? cj.metadata.creationTimestamp) as string);
  let due: Date | undefined;
  for (let t = parsed.schedule.next(from); t <= new Date(at); t = parsed.schedule.next(t)) due = t;
  if (!due) return undefined;
  const name = `${NAME}-${due.getTime() / 60_000}`;
  const template = structuredClone(cj.spec.jobTemplate!);
  await server.store
    .create<Job>(Kinds.Job, {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: {
        name,
        namespace: NS,
        annotations: { [K8S_SCHEDULED_TIMESTAMP_ANNOTATION]: rfc3339InZone(due, cj.spec.timeZone ?? "UTC") },
        ownerReferences: [
          {
            apiVersion: "batch/v1",
            kind: "CronJob",
            name: NAME,
            uid: cj.metadata.uid!,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: template.spec,
    })
    .catch((e: unknown) => {
      if (!isAlreadyExists(e)) throw e;
    });
  await server.store.updateStatus(V1, { ...cj, status: { ...cj.status, lastScheduleTime: rfc3339(due) } });
  return name;
}

describe("kubectl cron migrate on batch/v1 (recorded Kubernetes 1.32 objects)", () => {
  it("discovers batch/v1 and never asks for batch/v1beta1, which the apiserver no longer serves", async () => {
    const { server, r } = await cluster();
    const res = await fetch(new URL("/apis/batch/v1beta1", server.url));
    assert.equal(res.status, 404);
    assert.deepEqual(await res.json(), r.notFound);
    server.requests.length = 0;
    const dry = await cron(server, "migrate", NAME, "--dry-run");
    assert.equal(dry.code, EXIT.ok, dry.err);
    assert.equal(server.requests[0]?.path, "/apis/batch/v1");
    assert.deepEqual(
      server.requests.filter((q) => q.path.includes("v1beta1")),
      [],
    );
    // Shell completion of `kubectl cron migrate <TAB>` names the built-in kind's CronJobs.
    let completed = "";
    const io = { stdout: (x: string) => (completed += x), stderr: () => undefined, env: {} };
    assert.equal(await main(["__complete", "migrate", "--kubeconfig", server.kubeconfigPath, "re"], io), EXIT.ok);
    assert.equal(completed, "report\n:4\n");
  });

  it("creates ours from the original: schedule, timeZone, policies, limits, the jobTemplate, the user's metadata", async () => {
    const { server, r, originalUID } = await cluster();
    const jobsBefore = await server.objects<Job>(Kinds.Job, NS);
    const res = await cron(server, "migrate", NAME, "--settle=0s");
    assert.equal(res.code, EXIT.ok, res.err);
    assert.equal(
      res.out,
      [
        `${NS}/${NAME}: migrated from batch/v1`,
        `  create ${OURS}, suspended until the handover ends`,
        `  suspend ${THEIRS}`,
        `  set ${OURS} status.lastScheduleTime=2026-11-24T09:00:00Z (the original's last run)`,
        `  resume ${OURS}`,
        "",
      ].join("\n"),
    );

    const cj = await ours(server);
    // The recorded jobTemplate, less the `creationTimestamp: null` a template has no use for.
    const { metadata: _podMeta, ...podTemplate } = r.cronJob.spec.jobTemplate!.spec!.template as Record<string, any>;
    assert.deepEqual(cj.spec, {
      schedule: "0 7-18 * * 1-5",
      timeZone: "Europe/Berlin",
      concurrencyPolicy: "Allow",
      suspend: false,
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 1,
      jobTemplate: {
        spec: { backoffLimit: 2, template: { metadata: { labels: { app: "report" } }, ...podTemplate } },
      },
    });
    assert.equal(cj.status?.lastScheduleTime, "2026-11-24T09:00:00Z");
    // The user's labels and annotations; not kubectl's copy of the other kind, not managedFields.
    assert.deepEqual(cj.metadata.labels, { team: "data" });
    assert.deepEqual(Object.keys(cj.metadata.annotations ?? {}).sort(), [
      MIGRATED_FROM_ANNOTATION,
      "example.com/owner",
    ]);
    assert.deepEqual(readMigratedFrom(cj.metadata.annotations), {
      apiVersion: "batch/v1",
      namespace: NS,
      name: NAME,
      uid: originalUID,
      suspend: false,
    });

    // The original: suspended, nothing else changed; its Jobs: untouched (they stay its own).
    const theirs = await original(server);
    const running = r.cronJob.status!.active![0] as { uid: string };
    assert.equal(theirs.spec.suspend, true);
    assert.deepEqual({ ...theirs.spec, suspend: false }, r.cronJob.spec);
    assert.deepEqual(theirs.status, {
      ...r.cronJob.status,
      active: [{ ...running, uid: server.uid(running.uid) }],
    });
    assert.deepEqual(await server.objects<Job>(Kinds.Job, NS), jobsBefore);
    assert.deepEqual(server.writeLog(), [
      "POST /apis/batch.tutorial.kubebuilder.io/v1/namespaces/prod/cronjobs",
      "PATCH /apis/batch/v1/namespaces/prod/cronjobs/report",
      "PATCH /apis/batch.tutorial.kubebuilder.io/v1/namespaces/prod/cronjobs/report/status",
      "PATCH /apis/batch.tutorial.kubebuilder.io/v1/namespaces/prod/cronjobs/report",
    ]);

    const list = await cron(server, "list");
    assert.match(list.out, /^report\s+0 7-18 \* \* 1-5\s+Europe\/Berlin\b.*\bbatch\/v1$/m);
  });

  it("waits --settle, then counts the Job the built-in controller created as it was being suspended", async () => {
    const { server, r } = await cluster();
    // The controller decided on 10:00Z from a copy read before the suspension; its Job lands during the wait
    // (and its status update lost the race: the CronJob still says 09:00Z).
    server.afterWrite = (q) => {
      if (q.method === "PATCH" && q.path === "/apis/batch/v1/namespaces/prod/cronjobs/report") {
        setTimeout(() => void server.seed(r.lateJob), 100);
      }
    };
    const res = await cron(server, "migrate", NAME, "--settle=1s");
    assert.equal(res.code, EXIT.ok, res.err);
    assert.match(res.err, /^waiting 1s for the built-in CronJob controller to finish any Job it was creating/);
    assert.match(res.out, /status\.lastScheduleTime=2026-11-24T10:00:00Z \(the original's last run\)/);
    assert.equal((await ours(server)).status?.lastScheduleTime, "2026-11-24T10:00:00Z");
  });

  for (const late of [true, false]) {
    it(
      late
        ? "no slot twice: the original ran 10:00 as it was suspended; ours starts at 11:00; given back, it goes on at 12:00"
        : "no slot lost: the original did not get to 10:00 before its suspension; ours runs it, once",
      async () => {
        const { server } = await cluster({ late });
        const migrated = await cron(server, "migrate", NAME, "--settle=0s");
        assert.equal(migrated.code, EXIT.ok, migrated.err);

        // Our reconciler, on the same objects, just after 10:00 and 11:00 (twice each).
        const h = await ReconcileHarness.fake(NS, "2026-11-24T10:00:05Z", server.store);
        server.now = () => h.clock.now();
        await h.reconcile(NAME);
        await h.reconcile(NAME);
        h.clock.set(new Date("2026-11-24T11:00:05Z"));
        await h.reconcile(NAME);
        await h.reconcile(NAME);
        const oursJobs = (await h.jobs(NAME)).map((j) => j.metadata!.name);
        assert.deepEqual(oursJobs, late ? ["report-1795518000"] : ["report-1795514400", "report-1795518000"]);

        // The give-back at 11:30: the original's status gets ours' last run, through batch/v1.
        h.clock.set(new Date("2026-11-24T11:30:00Z"));
        server.requests.length = 0;
        const back = await cron(server, "unmigrate", NAME, "--settle=0s");
        assert.equal(back.code, EXIT.ok, back.err);
        assert.equal(
          back.out,
          [
            `${NS}/${NAME}: given back to batch/v1`,
            `  suspend ${OURS}`,
            `  set ${THEIRS} status.lastScheduleTime=2026-11-24T11:00:00Z (ours' last run)`,
            `  resume ${THEIRS}`,
            `  leave ${OURS} suspended, marked given back`,
            "",
          ].join("\n"),
        );
        assert.deepEqual(server.writeLog(), [
          "PATCH /apis/batch.tutorial.kubebuilder.io/v1/namespaces/prod/cronjobs/report",
          "PATCH /apis/batch/v1/namespaces/prod/cronjobs/report/status",
          "PATCH /apis/batch/v1/namespaces/prod/cronjobs/report",
          "PATCH /apis/batch.tutorial.kubebuilder.io/v1/namespaces/prod/cronjobs/report",
        ]);
        assert.equal((await original(server)).status?.lastScheduleTime, "2026-11-24T11:00:00Z");
        assert.equal((await ours(server)).metadata.annotations?.[HANDOVER_ANNOTATION], "returned");

        // The built-in controller at 11:30 has nothing to run; at 12:00 it runs 12:00. Ours, suspended, does not.
        assert.equal(await builtinControllerAt(server, "2026-11-24T11:30:00Z"), undefined);
        h.clock.set(new Date("2026-11-24T12:00:05Z"));
        await h.reconcile(NAME);
        assert.equal(await builtinControllerAt(server, "2026-11-24T12:00:05Z"), "report-29925360");

        // Every slot from the first recorded one to 12:00 has exactly one Job, of one kind or the other.
        const owners = await slots(server);
        const parsed = parseSchedule("0 7-18 * * 1-5", "Europe/Berlin");
        assert.ok(parsed.ok);
        const want: string[] = [];
        for (let t = new Date("2026-11-24T06:00:00Z"); t <= new Date("2026-11-24T12:00:00Z");) {
          want.push(rfc3339(t));
          t = parsed.schedule.next(t);
        }
        assert.deepEqual([...owners.keys()], want);
        const whose = (k: string) => (k === "batch/v1" ? "builtin" : "ours");
        assert.deepEqual(
          [...owners.values()].map((o) => o.map(whose).join("+")),
          late
            ? ["builtin", "builtin", "builtin", "builtin", "builtin", "ours", "builtin"]
            : ["builtin", "builtin", "builtin", "builtin", "ours", "ours", "builtin"],
        );
      },
    );
  }

  it("a manual run (kubectl create job --from) is no slot, even when its name looks like one", async () => {
    // `kubectl create job --from=cronjob/report report-2026112410`: named after the hour it was run in, which
    // reads as Unix seconds (2034-03-16); as a slot it would stop ours and, given back, the original until then.
    const { server } = await cluster({
      extra: (r) => {
        const manual = structuredClone(r.jobs.find((j) => j.metadata?.name === "report-manual-7xk2p")!);
        manual.metadata = { ...manual.metadata, name: "report-2026112410", uid: "uid-manual-2" };
        return [manual];
      },
    });
    const res = await cron(server, "migrate", NAME, "--settle=0s");
    assert.equal(res.code, EXIT.ok, res.err);
    assert.match(res.out, /status\.lastScheduleTime=2026-11-24T09:00:00Z \(the original's last run\)/);
    assert.equal((await ours(server)).status?.lastScheduleTime, "2026-11-24T09:00:00Z");
  });

  it("with concurrencyPolicy Forbid, warns that the original's running Job does not hold back ours", async () => {
    const { server } = await cluster();
    const cj = await original(server);
    await server.store.update(V1, { ...cj, spec: { ...cj.spec, concurrencyPolicy: "Forbid" } });
    const res = await cron(server, "migrate", NAME, "--settle=0s");
    assert.equal(res.code, EXIT.ok, res.err);
    assert.match(
      res.out,
      /^ {2}warning: concurrencyPolicy Forbid: the original's running Job\(s\) report-29925180 do not hold back ours$/m,
    );
    assert.equal((await ours(server)).spec.concurrencyPolicy, "Forbid");
  });

  it("warns when startingDeadlineSeconds is shorter than the handover (a slot due meanwhile may run nowhere)", async () => {
    const { server } = await cluster();
    const cj = await original(server);
    await server.store.update(V1, { ...cj, spec: { ...cj.spec, startingDeadlineSeconds: 20 } });
    const res = await cron(server, "migrate", NAME, "--settle=15s", "--dry-run");
    assert.equal(res.code, EXIT.ok, res.err);
    assert.match(
      res.out,
      /^(# )? {2}warning: startingDeadlineSeconds 20 is shorter than the handover \(--settle 15s /m,
    );
    const roomy = await cron(server, "migrate", NAME, "--settle=5s", "--dry-run");
    assert.doesNotMatch(roomy.out, /warning: startingDeadlineSeconds/);
  });

  it("refuses, naming the field and the value, what this kind does not take; changes nothing for it; exit 4", async () => {
    const variant = (r: ReturnType<typeof recorded>, name: string, change: (spec: BuiltinCronJob["spec"]) => void) => {
      const cj = structuredClone(r.cronJob) as BuiltinCronJob;
      cj.metadata = { ...cj.metadata, name, uid: `uid-${name}` };
      delete cj.status;
      change(cj.spec);
      return cj;
    };
    const { server } = await cluster({
      extra: (r) => [
        variant(r, "feb30", (spec) => void (spec.schedule = "0 0 30 2 *")),
        // Written before 1.27 and kept through the upgrades: a CRON_TZ= prefix instead of spec.timeZone.
        variant(r, "legacy-tz", (spec) => {
          spec.schedule = "CRON_TZ=Europe/Berlin 30 3 * * *";
          delete spec.timeZone;
        }),
        // A zone name the zone data of this kind (Node's ICU) does not have.
        variant(r, "factory-tz", (spec) => void (spec.timeZone = "Factory")),
      ],
    });

    const res = await cron(server, "migrate", "--settle=0s");
    assert.equal(res.code, EXIT.refused, res.err);
    assert.match(
      res.out,
      /^prod\/feb30: refused: spec\.schedule: Invalid value: "0 0 30 2 \*": never fires: day-of-month 30 does not occur in February$/m,
    );
    assert.match(
      res.out,
      /^prod\/legacy-tz: refused: spec\.schedule: Invalid value: "CRON_TZ=Europe\/Berlin 30 3 \* \* \*": TZ= and CRON_TZ= prefixes are not supported; set spec\.timeZone instead$/m,
    );
    assert.match(
      res.out,
      /^prod\/factory-tz: refused: spec\.timeZone: Invalid value: "Factory": unknown time zone; use an IANA name/m,
    );
    assert.match(res.out, /^prod\/report: migrated from batch\/v1$/m);
    assert.match(res.err, /some CronJobs were refused/);
    for (const name of ["feb30", "legacy-tz", "factory-tz"]) {
      assert.notEqual((await server.store.get<BuiltinCronJob>(V1, NS, name)).spec.suspend, true, name);
      await assert.rejects(server.store.get(CronJobResource, NS, name), /not found/);
    }
  });

  it("--dry-run prints ours as YAML and the plan; the create is a server-side dry run; nothing changes", async () => {
    const { server } = await cluster();
    const before = JSON.stringify(await state(server));
    const res = await cron(server, "migrate", NAME, "--dry-run");
    assert.equal(res.code, EXIT.ok, res.err);
    const docs = parseAllDocuments(res.out)
      .map((d) => d.toJS() as CronJob | null)
      .filter((d) => d !== null);
    assert.equal(docs.length, 1);
    assert.equal(docs[0]!.spec.timeZone, "Europe/Berlin");
    assert.equal(docs[0]!.spec.suspend, true);
    assert.match(res.out, /^# prod\/report: would migrate from batch\/v1$/m);
    assert.match(res.out, /^# {3}suspend batch\/v1 CronJob prod\/report$/m);
    assert.match(res.out, /original's last scheduled time \(now 2026-11-24T09:00:00Z\)/);
    assert.deepEqual(server.writeLog(), [
      "POST /apis/batch.tutorial.kubebuilder.io/v1/namespaces/prod/cronjobs (dry run)",
    ]);
    assert.equal(JSON.stringify(await state(server)), before);
  });

  /** What the cluster holds, less what differs between two runs of the same steps (UIDs, versions). */
  async function state(server: FakeAPIServer): Promise<unknown> {
    const all = [
      ...(await server.objects(V1, NS)),
      ...(await server.objects(CronJobResource, NS)),
      ...(await server.objects(Kinds.Job, NS)),
    ];
    const text = JSON.stringify(all, (k: string, v: unknown) =>
      k === "uid" || k === "resourceVersion" || k === "managedFields" ? undefined : v,
    );
    const originalUID = (await original(server)).metadata.uid!;
    return JSON.parse(text.replaceAll(originalUID, "<original>"));
  }

  for (const [what, steps] of [
    ["migrate", [["migrate", NAME, "--settle=0s"]]],
    ["unmigrate", [["unmigrate", NAME, "--settle=0s"]]],
    ["unmigrate --delete", [["unmigrate", NAME, "--delete", "--settle=0s"]]],
  ] as const) {
    it(`${what}: twice changes nothing; cut off after any write, running it again ends where one run does`, async () => {
      const prepare = async () => {
        const c = await cluster();
        if (what !== "migrate") assert.equal((await cron(c.server, "migrate", NAME, "--settle=0s")).code, EXIT.ok);
        c.server.writes = 0;
        return c.server;
      };
      const reference = await prepare();
      for (const argv of steps) assert.equal((await cron(reference, ...argv)).code, EXIT.ok);
      const writes = reference.writes;
      assert.ok(writes >= 3, `${writes} writes`);
      const want = await state(reference);
      const again = await cron(reference, ...steps[0]);
      if (what === "unmigrate --delete") {
        // Ours is gone: by NAME there is nothing to find (by -l or -A, nothing to do).
        assert.equal(again.code, EXIT.failed);
        assert.match(again.err, /^error: cronjob "report" not found in namespace "prod"/);
      } else {
        assert.equal(again.code, EXIT.ok, again.err);
        assert.match(
          again.out,
          what === "migrate" ? /: already migrated from batch\/v1$/m : /: already given back to batch\/v1$/m,
        );
      }
      assert.equal(reference.writes, writes, "the second run writes nothing");
      assert.deepEqual(await state(reference), want);

      for (let n = 1; n <= writes; n++) {
        const server = await prepare();
        server.dropWrite = n;
        const cut = await cron(server, ...steps[0]);
        assert.equal(cut.code, EXIT.failed, `cut at write ${n}: ${cut.out}`);
        assert.match(cut.err, /cannot reach the cluster|socket hang up|ECONNRESET/);
        server.dropWrite = undefined;
        const rerun = await cron(server, ...steps[0]);
        assert.equal(rerun.code, EXIT.ok, `rerun after a cut at write ${n}: ${rerun.err}`);
        assert.deepEqual(await state(server), want, `cut at write ${n}`);
      }
    });
  }

  it("a CronJob migrated as batch/v1beta1 before the upgrade is given back as batch/v1", async () => {
    const { server, originalUID } = await cluster();
    assert.equal((await cron(server, "migrate", NAME, "--settle=0s")).code, EXIT.ok);
    // As `kubectl cron migrate` wrote it on 1.20: the same object (same UID), then served as batch/v1beta1.
    const cj = await ours(server);
    const record = { ...readMigratedFrom(cj.metadata.annotations)!, apiVersion: "batch/v1beta1" };
    cj.metadata.annotations![MIGRATED_FROM_ANNOTATION] = JSON.stringify(record);
    await server.store.update(CronJobResource, cj);
    assert.match((await cron(server, "list")).out, /batch\/v1beta1$/m);

    server.requests.length = 0;
    const back = await cron(server, "unmigrate", NAME, "--delete", "--settle=0s");
    assert.equal(back.code, EXIT.ok, back.err);
    assert.match(back.out, /^prod\/report: given back to batch\/v1\n/);
    assert.deepEqual(
      server.requests.filter((q) => q.path.includes("v1beta1")),
      [],
    );
    const theirs = await original(server);
    assert.equal(theirs.metadata.uid, originalUID);
    assert.equal(theirs.spec.suspend, false);
    await assert.rejects(ours(server), /not found/);
  });

  it("taken over again after a give-back: ours is replaced from the original as it is now, and resumed", async () => {
    const { server } = await cluster();
    assert.equal((await cron(server, "migrate", NAME, "--settle=0s")).code, EXIT.ok);
    const dry = await cron(server, "unmigrate", NAME, "--dry-run");
    assert.equal(dry.code, EXIT.ok, dry.err);
    assert.match(dry.out, /^# prod\/report: would give back to batch\/v1$/m);
    assert.equal((await ours(server)).spec.suspend, false, "the dry run changed nothing");
    assert.equal((await cron(server, "unmigrate", NAME, "--settle=0s")).code, EXIT.ok);

    // Running again as the built-in kind, the original was changed: another zone and schedule, no limits.
    const cj = await original(server);
    const { successfulJobsHistoryLimit: _s, failedJobsHistoryLimit: _f, ...rest } = cj.spec;
    await server.store.update(V1, {
      ...cj,
      metadata: { ...cj.metadata, labels: { team: "finance" } },
      spec: { ...rest, schedule: "30 6 * * *", timeZone: "America/New_York" },
    });
    server.requests.length = 0;
    const again = await cron(server, "migrate", "-l", "team=finance", "--settle=0s");
    assert.equal(again.code, EXIT.ok, again.err);
    assert.match(
      again.out,
      /^ {2}update cronjobs\.batch\.tutorial\.kubebuilder\.io prod\/report \(given back earlier\)/m,
    );
    const retaken = await ours(server);
    assert.equal(retaken.spec.schedule, "30 6 * * *");
    assert.equal(retaken.spec.timeZone, "America/New_York");
    assert.equal(retaken.spec.suspend, false);
    // The limits the original no longer has are gone with it; our webhook defaults them, as the CRD does.
    assert.equal(retaken.spec.successfulJobsHistoryLimit, 3);
    assert.deepEqual(retaken.metadata.labels, { team: "finance" });
    assert.equal(retaken.metadata.annotations?.[HANDOVER_ANNOTATION], undefined);
    assert.equal((await original(server)).spec.suspend, true);
    assert.ok(server.writeLog().every((w) => !w.includes("v1beta1")));
  });

  it("without patch on the built-in's cronjobs/status, the give-back stops, naming it; granted, a second run ends it", async () => {
    const { server } = await cluster();
    assert.equal((await cron(server, "migrate", NAME, "--settle=0s")).code, EXIT.ok);
    // Ours ran 10:00: the give-back has a newer last run to write into the original's status.
    await (await ReconcileHarness.fake(NS, "2026-11-24T10:00:05Z", server.store)).reconcile(NAME);
    // The aggregated edit role: everything the give-back needs but the status subresource (docs/upgrading-and-migrating.md).
    server.deny = (q) =>
      q.method === "PATCH" && q.path === "/apis/batch/v1/namespaces/prod/cronjobs/report/status"
        ? new APIError(
            403,
            "Forbidden",
            'cronjobs.batch "report" is forbidden: User "jane" cannot patch resource "cronjobs/status" in API group "batch" in the namespace "prod"',
            { details: { name: NAME, group: "batch", kind: "cronjobs" } },
          )
        : undefined;
    const stopped = await cron(server, "unmigrate", NAME, "--settle=0s");
    assert.equal(stopped.code, EXIT.failed);
    assert.match(
      stopped.err,
      /^error: forbidden: cronjobs\.batch "report" is forbidden: User "jane" cannot patch resource "cronjobs\/status" in API group "batch" .*patch on their cronjobs\/status/m,
    );
    // Stopped half-way: ours suspended and marked, the original still suspended (nothing runs twice).
    assert.equal((await ours(server)).spec.suspend, true);
    assert.equal((await ours(server)).metadata.annotations?.[HANDOVER_ANNOTATION], "returning");
    assert.equal((await original(server)).spec.suspend, true);
    // migrate will not take it back over meanwhile.
    const retake = await cron(server, "migrate", NAME, "--settle=0s");
    assert.equal(retake.code, EXIT.refused);
    assert.match(retake.out, /refused: a give-back is unfinished: finish it first \(kubectl cron unmigrate report\)/);

    server.deny = undefined;
    const done = await cron(server, "unmigrate", NAME, "--settle=0s");
    assert.equal(done.code, EXIT.ok, done.err);
    assert.match(done.out, /^prod\/report: given back to batch\/v1\n {2}set batch\/v1 CronJob prod\/report status/);
    assert.equal((await original(server)).spec.suspend, false);
    assert.equal((await ours(server)).metadata.annotations?.[HANDOVER_ANNOTATION], "returned");
  });

  it("unmigrate --delete removes ours and keeps its Jobs, orphaned; the original runs again", async () => {
    const { server } = await cluster();
    assert.equal((await cron(server, "migrate", NAME, "--settle=0s")).code, EXIT.ok);
    const h = await ReconcileHarness.fake(NS, "2026-11-24T10:00:05Z", server.store);
    await h.reconcile(NAME);
    const [job] = await h.jobs(NAME);
    assert.equal(job?.metadata?.name, "report-1795514400");
    const back = await cron(server, "unmigrate", NAME, "--delete", "--settle=0s");
    assert.equal(back.code, EXIT.ok, back.err);
    assert.match(
      back.out,
      /^ {2}delete cronjobs\.batch\.tutorial\.kubebuilder\.io prod\/report \(its Jobs are kept\)$/m,
    );
    await assert.rejects(ours(server), /not found/);
    const kept = await server.store.get<Job>(Kinds.Job, NS, "report-1795514400");
    assert.equal(kept.metadata?.ownerReferences, undefined);
    assert.equal((await original(server)).status?.lastScheduleTime, "2026-11-24T10:00:00Z");
    assert.equal((await original(server)).spec.suspend, false);
  });
});
