// `kubectl cron groups [-A]` and `kubectl cron groups NAME` through the plugin's own entry point (main()) against
// test/fake-apiserver.ts: each ConcurrencyGroup's limit, the Jobs of its CronJobs running (a queued one too; a
// finished one not), the runs waiting for a place read from the CronJobs' record, the oldest wait, its members; a
// group named but missing said once; three list reads whatever the number of CronJobs.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  API_VERSION,
  CONCURRENCY_GROUP_LABEL,
  CRONJOB_NAME_LABEL,
  type Job,
  jobNameFor,
  KIND,
  KUEUE_QUEUE_NAME_KEY,
  manualJobName,
  type RecentRun,
} from "../../api/v1/index.ts";
import { parseCommandLine } from "../../cmd/kubectl-cron/model/args.ts";
import { main } from "../../cmd/kubectl-cron/main.ts";
import type { KubeObject } from "../../runtime/kinds.ts";
import { FakeAPIServer } from "../fake-apiserver.ts";
import { batchJob } from "../fixtures.ts";
import { pluginCluster } from "../plugin-cluster.ts";

const NOW = new Date("2026-11-25T11:12:00Z");
const NS = "prod";
const at = (t: string, seconds: number) => new Date(Date.parse(t) + seconds * 1000).toISOString();

function group(name: string, limit: number, namespace = NS): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: "ConcurrencyGroup",
    metadata: { name, namespace, creationTimestamp: "2026-11-01T00:00:00Z" },
    spec: { limit },
  } as KubeObject;
}

/** A CronJob naming `groupName`; `held`: its slot waiting for a place (its record's Held entry, for `reason`). */
function cronJob(
  name: string,
  groupName: string | undefined,
  held?: { slot: string; reason?: string; lastScheduleTime?: string },
  namespace = NS,
): KubeObject {
  const entry: RecentRun | undefined = held && {
    trigger: "Schedule",
    scheduledTime: held.slot,
    decision: "Held",
    reason: held.reason ?? "ConcurrencyGroupFull",
    decidedAt: at(held.slot, 1),
  };
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    // No recorded uid: the fake maps each seeded one into every later object (quadratic at 5,000).
    metadata: { name, namespace, creationTimestamp: "2026-11-01T00:00:00Z" },
    spec: {
      schedule: "*/15 * * * *",
      ...(groupName ? { concurrencyGroup: groupName } : {}),
      jobTemplate: {
        spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "c" }] } } },
      },
    },
    status: {
      lastScheduleTime: held?.lastScheduleTime ?? "2026-11-25T00:00:00Z",
      ...(entry ? { recentRuns: [entry] } : {}),
    },
  } as KubeObject;
}

/** A Job of a CronJob of `groupName`, labelled as the operator labels it. */
function job(
  cronJobName: string,
  groupName: string,
  slot: string,
  o: { state?: "active" | "complete"; queue?: string; namespace?: string } = {},
): Job {
  const namespace = o.namespace ?? NS;
  const j = batchJob({
    name: jobNameFor(cronJobName, new Date(slot)),
    namespace,
    slot,
    labels: {
      [CRONJOB_NAME_LABEL]: cronJobName,
      [CONCURRENCY_GROUP_LABEL]: groupName,
      ...(o.queue ? { [KUEUE_QUEUE_NAME_KEY]: o.queue } : {}),
    },
    ...(o.queue ? {} : { state: o.state ?? "active", start: at(slot, 3) }),
    ...(o.state === "complete" ? { end: at(slot, 60) } : {}),
  });
  if (o.queue) {
    j.spec = { ...j.spec, suspend: true };
    j.status = {
      conditions: [{ type: "Suspended", status: "True", reason: "JobSuspended", lastTransitionTime: at(slot, 2) }],
    } as Job["status"];
  }
  j.metadata!.creationTimestamp = at(slot, 2);
  return j;
}

const { cluster, run } = pluginCluster(NS, NOW);

/** The list reads a command made: their path and label selector. */
const lists = (server: FakeAPIServer) =>
  server.requests
    .filter((r) => r.method === "GET" && !r.path.startsWith("/api/v1/namespaces/") && !/\/version$/.test(r.path))
    .filter((r) => !/^\/apis?(\/[^/]+){0,2}$/.test(r.path))
    .map((r) => `${r.path}${r.query.get("labelSelector") ? `?labelSelector=${r.query.get("labelSelector")}` : ""}`);

/**
 * The scene: in prod, group backups (limit 2) runs db-a's and db-b's Jobs (db-c's earlier one finished), db-c's and
 * db-d's runs wait (since 01:45 and 02:00), db-e names it and waits for nothing; group reports (limit 1) holds a Job
 * Kueue keeps suspended; group idle (limit 0) has no member; report-x names a group that does not exist. In staging,
 * group backups (limit 1) of its own.
 */
function scene(): KubeObject[] {
  return [
    group("backups", 2),
    group("reports", 1),
    group("idle", 0),
    group("backups", 1, "staging"),
    cronJob("db-a", "backups"),
    cronJob("db-b", "backups"),
    cronJob("db-c", "backups", { slot: "2026-11-25T01:45:00Z" }),
    cronJob("db-d", "backups", { slot: "2026-11-25T02:00:00Z", reason: "ConcurrencyGroupQueue" }),
    cronJob("db-e", "backups"),
    // Held once, but it ran since (lastScheduleTime reached the slot): it waits no more.
    cronJob("db-f", "backups", { slot: "2026-11-25T01:00:00Z", lastScheduleTime: "2026-11-25T01:00:00Z" }),
    cronJob("rep-a", "reports"),
    cronJob("report-x", "nosuch", { slot: "2026-11-25T02:00:00Z", reason: "ConcurrencyGroupNotFound" }),
    cronJob("plain", undefined),
    cronJob("st-a", "backups", undefined, "staging"),
    job("db-a", "backups", "2026-11-25T01:00:00Z"),
    job("db-b", "backups", "2026-11-25T01:30:00Z"),
    job("db-c", "backups", "2026-11-25T00:45:00Z", { state: "complete" }),
    job("rep-a", "reports", "2026-11-25T02:00:00Z", { queue: "team-a" }),
    job("st-a", "backups", "2026-11-25T03:00:00Z", { namespace: "staging" }),
  ];
}

describe("kubectl cron groups", () => {
  it("a table of the namespace's groups: limit, running Jobs, waiting runs, the oldest wait, members", async () => {
    const server = await cluster(scene());
    const r = await run(server, ["groups"]);
    assert.equal(r.code, 0, r.err);
    assert.equal(
      r.out,
      [
        "NAME      LIMIT   RUNNING   WAITING   OLDEST WAIT   MEMBERS",
        "backups   2       2         2         9h27m         6",
        "idle      0       0         0         -             0",
        "reports   1       1         0         -             1",
        "",
      ].join("\n"),
    );
    assert.equal(
      r.err,
      "group nosuch (prod) does not exist: the runs of 1 CronJob naming it wait (report-x)\n",
      "a missing group, said once",
    );
    // One list of each kind, whatever the number of CronJobs; the Jobs by the group label only.
    assert.deepEqual(lists(server).sort(), [
      `/apis/${API_VERSION}/namespaces/${NS}/concurrencygroups`,
      `/apis/${API_VERSION}/namespaces/${NS}/cronjobs`,
      `/apis/batch/v1/namespaces/${NS}/jobs?labelSelector=${CONCURRENCY_GROUP_LABEL}`,
    ]);
    const json = JSON.parse((await run(server, ["groups", "-o", "json"])).out) as {
      items: { name: string; running: number; waiting: number; oldestWaitSeconds: number; members: number }[];
      missing: { name: string; members: string[] }[];
    };
    assert.deepEqual(json.items[0], {
      namespace: NS,
      name: "backups",
      limit: 2,
      running: 2,
      waiting: 2,
      oldestWaitSeconds: 9 * 3600 + 27 * 60,
      members: 6,
    });
    assert.deepEqual(json.missing, [{ namespace: NS, name: "nosuch", members: ["report-x"] }]);
  });

  it("-A: every namespace's groups, a NAMESPACE column, still three cluster-wide lists", async () => {
    const server = await cluster(scene());
    const r = await run(server, ["groups", "-A"]);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(r.out.trimEnd().split("\n"), [
      "NAMESPACE   NAME      LIMIT   RUNNING   WAITING   OLDEST WAIT   MEMBERS",
      "prod        backups   2       2         2         9h27m         6",
      "prod        idle      0       0         0         -             0",
      "prod        reports   1       1         0         -             1",
      "staging     backups   1       1         0         -             1",
    ]);
    assert.deepEqual(lists(server).sort(), [
      `/apis/${API_VERSION}/concurrencygroups`,
      `/apis/${API_VERSION}/cronjobs`,
      `/apis/batch/v1/jobs?labelSelector=${CONCURRENCY_GROUP_LABEL}`,
    ]);
  });

  it("NAME: its running Jobs (a queued one marked) and its waiting runs, oldest first, each with its CronJob", async () => {
    const server = await cluster(scene());
    const r = await run(server, ["groups", "backups"]);
    assert.equal(r.code, 0, r.err);
    const a = jobNameFor("db-a", new Date("2026-11-25T01:00:00Z"));
    const b = jobNameFor("db-b", new Date("2026-11-25T01:30:00Z"));
    assert.deepEqual(r.out.trimEnd().split("\n"), [
      "group backups (prod): limit 2, 2 running, 2 waiting, 6 CronJobs name it",
      "STATE     CRONJOB   JOB               SLOT                   SINCE                  FOR      NOTE",
      `Running   db-a      ${a}   2026-11-25T01:00:00Z   2026-11-25T01:00:02Z   10h11m`,
      `Running   db-b      ${b}   2026-11-25T01:30:00Z   2026-11-25T01:30:02Z   9h41m`,
      "Waiting   db-c      -                 2026-11-25T01:45:00Z   2026-11-25T01:45:00Z   9h27m    ConcurrencyGroupFull",
      "Waiting   db-d      -                 2026-11-25T02:00:00Z   2026-11-25T02:00:00Z   9h12m    ConcurrencyGroupQueue",
    ]);
    const reports = await run(server, ["groups", "reports", "-o", "json"]);
    const data = JSON.parse(reports.out) as { running: { state: string; queuedBy?: string }[] };
    assert.deepEqual(
      data.running.map((x) => [x.state, x.queuedBy]),
      [["Queued", "Kueue (queue team-a)"]],
    );
    assert.match(
      (await run(server, ["groups", "reports"])).out,
      /^Queued +rep-a .*suspended by Kueue \(queue team-a\)$/m,
    );
    // Shell completion of `kubectl cron groups <TAB>` names the namespace's groups.
    let completed = "";
    const io = { stdout: (x: string) => (completed += x), stderr: () => undefined, env: {} };
    assert.equal(await main(["__complete", "groups", "--kubeconfig", server.kubeconfigPath, "-n", "prod", "b"], io), 0);
    assert.equal(completed, "backups\n:4\n");
  });

  it("a held run whose Job exists runs, it does not wait: the record is written later (issue 53)", async () => {
    // db-c's 01:45 slot and db-g's run-now request were held, and their Jobs have been created since; their records
    // still say Held (the status write comes up to --status-write-delay later, or was lost).
    const request = "2026-11-25T11:00:00Z-abc123";
    const dbg = cronJob("db-g", "backups");
    (dbg.status as { recentRuns: RecentRun[] }).recentRuns = [
      {
        trigger: "RunNow",
        request,
        decision: "Held",
        reason: "ConcurrencyGroupFull",
        decidedAt: "2026-11-25T11:00:01Z",
      },
    ];
    const runNowJob = job("db-g", "backups", "2026-11-25T11:00:00Z");
    runNowJob.metadata!.name = manualJobName("db-g", request);
    const server = await cluster([...scene(), dbg, job("db-c", "backups", "2026-11-25T01:45:00Z"), runNowJob]);
    const r = await run(server, ["groups"]);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(r.out.trimEnd().split("\n"), [
      "NAME      LIMIT   RUNNING   WAITING   OLDEST WAIT   MEMBERS",
      "backups   2       4         1         9h12m         7",
      "idle      0       0         0         -             0",
      "reports   1       1         0         -             1",
    ]);
    const one = await run(server, ["groups", "backups"]);
    assert.equal(one.code, 0, one.err);
    const rows = one.out.trimEnd().split("\n");
    assert.equal(rows[0], "group backups (prod): limit 2, 4 running, 1 waiting, 7 CronJobs name it");
    assert.deepEqual(
      rows.slice(2).map((l) => l.split(/ +/).slice(0, 3).join(" ")),
      [
        `Running db-a ${jobNameFor("db-a", new Date("2026-11-25T01:00:00Z"))}`,
        `Running db-b ${jobNameFor("db-b", new Date("2026-11-25T01:30:00Z"))}`,
        `Running db-c ${jobNameFor("db-c", new Date("2026-11-25T01:45:00Z"))}`,
        `Running db-g ${manualJobName("db-g", request)}`,
        "Waiting db-d -",
      ],
    );
    // `kubectl cron list` says the same of the group once.
    const listed = await run(server, ["list"]);
    assert.equal(listed.code, 0, listed.err);
    assert.deepEqual(
      listed.err.split("\n").filter((l) => l.startsWith("group backups")),
      ["group backups (prod) full at 4/2: 1 CronJob waiting (db-d)"],
    );
  });

  it("NAME of a group that does not exist: an error naming the CronJobs whose runs wait for it", async () => {
    const server = await cluster(scene());
    const r = await run(server, ["groups", "nosuch"]);
    assert.equal(r.code, 1);
    assert.equal(r.out, "");
    assert.equal(
      r.err,
      'error: concurrencygroup "nosuch" not found in namespace "prod"; group nosuch (prod) does not exist: the runs of 1 CronJob naming it wait (report-x) (list them: kubectl cron groups -n prod)\n',
    );
  });

  it("at 5,000 CronJobs: the same three lists (paged), and the counts", async () => {
    const objects: KubeObject[] = [group("backups", 3), group("reports", 2)];
    for (let i = 0; i < 5000; i++) {
      const name = `cj-${String(i).padStart(4, "0")}`;
      const g = i % 2 ? "backups" : "reports";
      // Every 100th waits since its slot; the first three of each group run.
      objects.push(cronJob(name, g, i % 100 === 7 ? { slot: at("2026-11-25T10:00:00Z", i) } : undefined));
      if (i < 6) objects.push(job(name, g, "2026-11-25T10:00:00Z"));
    }
    const server = await cluster(objects);
    const r = await run(server, ["groups"]);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(r.out.trimEnd().split("\n"), [
      "NAME      LIMIT   RUNNING   WAITING   OLDEST WAIT   MEMBERS",
      "backups   3       3         50        1h11m         2500",
      "reports   2       3         0         -             2500",
    ]);
    const reads = lists(server);
    assert.equal(reads.filter((p) => p.endsWith("/cronjobs")).length, 10, "5,000 CronJobs in pages of 500");
    assert.deepEqual([...new Set(reads)].sort(), [
      `/apis/${API_VERSION}/namespaces/${NS}/concurrencygroups`,
      `/apis/${API_VERSION}/namespaces/${NS}/cronjobs`,
      `/apis/batch/v1/namespaces/${NS}/jobs?labelSelector=${CONCURRENCY_GROUP_LABEL}`,
    ]);
  });

  it("takes -A and a NAME, not -l or a NAME with -A", () => {
    assert.deepEqual(
      (({ command, name, allNamespaces }) => ({ command, name, allNamespaces }))(
        parseCommandLine(["groups", "-A"]) as Exclude<ReturnType<typeof parseCommandLine>, "help">,
      ),
      { command: "groups", name: "", allNamespaces: true },
    );
    assert.throws(() => parseCommandLine(["groups", "-l", "team=a"]), /--selector does not apply to groups/);
    assert.throws(() => parseCommandLine(["groups", "backups", "-A"]), /a NAME and -A/);
  });
});
