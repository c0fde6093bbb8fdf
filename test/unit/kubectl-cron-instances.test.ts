// `kubectl cron instances` (issue 77): which install and instance runs each claimed namespace, through the plugin's own
// entry point (main()) against test/fake-apiserver.ts holding the claims and instance Leases an install with
// --watch-namespaces or --sharding writes (test/claims.ts); and the plugin with a tenant's own read-only role, every
// request outside the tenant's namespace forbidden (cluster-scoped lists included): `why -n`, `next`, `history`,
// `instances` and the dashboard's reads degrade, none fails. (`why`'s "Run by:" line: kubectl-cron-why-operator.test.ts.)
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { API_VERSION, CRONJOB_NAME_LABEL, KIND } from "../../api/v1/index.ts";
import { claimReader } from "../../cmd/kubectl-cron/read/claims.ts";
import { readClocks } from "../../cmd/kubectl-cron/read/clocks.ts";
import { gatherOperator, operatorsByClaim } from "../../cmd/kubectl-cron/read/operator.ts";
import { readNamespace, readOne } from "../../cmd/kubectl-cron/read/whyfacts.ts";
import { whyAnswer } from "../../cmd/kubectl-cron/answer/answers.ts";
import { main } from "../../cmd/kubectl-cron/main.ts";
import { Client } from "../../runtime/client.ts";
import { APIError } from "../../runtime/errors.ts";
import { loadKubeConfig } from "../../runtime/kubeconfig.ts";
import type { KubeObject } from "../../runtime/kinds.ts";
import { claimLease, instanceLease, leaseRef, microTime, TENANT_ID, TENANT_INSTALL, TENANT_NS } from "../claims.ts";
import type { FakeAPIServer } from "../fake-apiserver.ts";
import { WHY_DISCOVERY } from "../why-facts.ts";
import { batchJob } from "../fixtures.ts";
import { pluginCluster, runPlugin } from "../plugin-cluster.ts";

const NOW = new Date("2026-11-25T11:12:00Z");
const SLOT = "2026-11-25T03:00:00Z";
const NS = "team-a";
const ACQUIRED = "2026-11-25T10:00:00.000000Z";

const { cluster } = pluginCluster(NS, NOW, WHY_DISCOVERY);

/** The instance `pod` of the tenant's install, renewed `seconds` ago, and the claims of `namespaces` it holds. */
function holding(pod: string, seconds: number, namespaces: string[], o: { released?: string[] } = {}): KubeObject[] {
  const lease = instanceLease({ pod, renewTime: microTime(NOW, -seconds) });
  return [
    lease,
    ...namespaces.map((namespace) =>
      claimLease({
        namespace,
        holder: o.released?.includes(namespace) ? "" : `${pod}_0c1d`,
        instanceLease: leaseRef(lease),
        acquireTime: ACQUIRED,
      }),
    ),
  ];
}

describe("kubectl cron instances", () => {
  it("-A: a row a claim, by install then instance, each claim's state as why judges it; then the instance Leases", async () => {
    const server = await cluster([
      // live, holding team-a and team-b; down 2 s (taken in 3 s) holding team-c; down 45 s holding team-d; idle.
      ...holding("manager-a", 3, ["team-a", "team-b"]),
      ...holding("manager-b", 17, ["team-c"]),
      ...holding("manager-c", 60, ["team-d", "team-e"], { released: ["team-e"] }),
      instanceLease({ pod: "manager-idle", renewTime: microTime(NOW, -1) }),
      // Another install's claim, listed under its own install.
      claimLease({
        namespace: "payments",
        holder: "pay-0_9f",
        install: "payments-system/pay.example.com",
        instanceLease: "payments-system/pay.example.com",
      }),
    ]);
    const r = await runPlugin(server, ["instances", "-A"]);
    assert.equal(r.code, 0, r.err);
    const rows = r.out.split("\n\n")[0]!.trimEnd().split("\n");
    const cells = (line: string) => line.split(/ {3,}/);
    assert.deepEqual(cells(rows[0]!), ["NAMESPACE", "INSTALL", "INSTANCE", "SINCE", "STATE"]);
    assert.deepEqual(
      rows.slice(1).map(cells),
      [
        ["payments", "payments-system/pay.example.com", "pay-0_9f", "-", "instance Lease gone"],
        ["team-a", TENANT_INSTALL, "manager-a_0c1d", "2026-11-25T10:00:00Z", "active"],
        ["team-b", TENANT_INSTALL, "manager-a_0c1d", "2026-11-25T10:00:00Z", "active"],
        ["team-c", TENANT_INSTALL, "manager-b_0c1d", "2026-11-25T10:00:00Z", "instance down 2s: taken within 3s"],
        [
          "team-d",
          TENANT_INSTALL,
          "manager-c_0c1d",
          "2026-11-25T10:00:00Z",
          "instance down 45s: should have been taken 40s ago",
        ],
        ["team-e", TENANT_INSTALL, "-", "2026-11-25T10:00:00Z", "released (moving)"],
      ].map((row) => row.map((c) => c.trimEnd())),
    );
    const leases = r.out.split("\n\n")[1]!.trimEnd().split("\n").map(cells);
    assert.deepEqual(leases[0], ["INSTALL", "INSTANCE LEASE", "HOLDER", "RENEWED", "STATE", "NAMESPACES"]);
    assert.deepEqual(
      leases.slice(1).map((l) => [l[1], l[4], l[5]]),
      [
        [`${TENANT_NS}/${TENANT_ID}-manager-a`, "live", "2"],
        [`${TENANT_NS}/${TENANT_ID}-manager-b`, "expired 2s ago", "1"],
        [`${TENANT_NS}/${TENANT_ID}-manager-c`, "expired 45s ago", "1"],
        [`${TENANT_NS}/${TENANT_ID}-manager-idle`, "live", "0"],
      ],
    );
    // The other install's instance Lease does not exist; its own install's Leases are not listed as this one's.
    assert.equal(r.err, "");
    const json = JSON.parse((await runPlugin(server, ["instances", "-A", "-o", "json"])).out) as {
      claims: { namespace: string; state: string; takenBy?: string }[];
    };
    assert.deepEqual(
      json.claims.map((c) => [c.namespace, c.state, c.takenBy ?? "-"]),
      [
        ["payments", "gone", "-"],
        ["team-a", "active", "-"],
        ["team-b", "active", "-"],
        ["team-c", "down", "2026-11-25T11:12:03Z"],
        ["team-d", "overdue", "2026-11-25T11:11:20Z"],
        ["team-e", "released", "-"],
      ],
    );
  });

  it("-n: the namespace's claim alone, read by name; none: which installs may run it", async () => {
    const server = await cluster(holding("manager-a", 3, ["team-a", "team-b"]));
    const r = await runPlugin(server, ["instances"]);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(r.out.split("\n")[1]!.split(/ {3,}/), [
      "team-a",
      TENANT_INSTALL,
      "manager-a_0c1d",
      "2026-11-25T10:00:00Z",
      "active",
    ]);
    assert.ok(
      !server.requests.some((q) => q.path === "/apis/coordination.k8s.io/v1/leases"),
      "no list across namespaces",
    );
    const none = await runPlugin(server, ["instances", "-n", "other"]);
    assert.equal(none.code, 0);
    assert.equal(none.out, "");
    assert.equal(
      none.err,
      "no install claims namespace other: a cluster-wide install that claims none runs it, or no install watches it\n",
    );
  });

  it("leases forbidden: said, with what it needs, and exit 1 (not a crash)", async () => {
    const server = await cluster(holding("manager-a", 3, ["team-a"]));
    server.deny = (q) => (q.path.includes("/leases") ? new APIError(403, "Forbidden", "forbidden") : undefined);
    const r = await runPlugin(server, ["instances", "-A"]);
    assert.equal(r.code, 1);
    assert.equal(r.out, "");
    assert.equal(
      r.err,
      "could not read leases in any namespace: forbidden\n" +
        "the claims in any namespace could not be read: instances needs get on leases (coordination.k8s.io) in the " +
        "namespace, and list on them in every namespace with -A\n",
    );
  });

  it("takes -A, no NAME; completes as a command, with -A", async () => {
    const server = await cluster([]);
    const named = await runPlugin(server, ["instances", "x"]);
    assert.equal(named.code, 2);
    assert.match(named.err, /instances takes no NAME/);
    const complete = async (...words: string[]) => {
      let out = "";
      await main(["__complete", ...words], { stdout: (s) => (out += s), stderr: () => undefined, env: {} });
      return out;
    };
    assert.match(await complete("ins"), /^instances\t/m);
    assert.match(await complete("instances", "--all"), /^--all-namespaces\t/m);
  });
});

describe("a tenant's read-only role: namespaced reads in its namespace only", () => {
  /** The tenant's CronJob, its 03:00 run complete, its namespace claimed by the tenant's install (live). */
  function tenantScene(): KubeObject[] {
    const cronJob = {
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: { name: "backup", namespace: NS, uid: "uid-backup", creationTimestamp: "2026-11-01T00:00:00Z" },
      spec: {
        schedule: "0 3 * * *",
        jobTemplate: {
          spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "b" }] } } },
        },
      },
      status: {
        lastScheduleTime: SLOT,
        recentRuns: [
          {
            trigger: "Schedule",
            scheduledTime: SLOT,
            decision: "Created",
            reason: "Scheduled",
            decidedAt: "2026-11-25T03:00:02Z",
            job: "backup-1795575600",
            outcome: { result: "Complete", finishedAt: "2026-11-25T03:00:14Z" },
          },
        ],
      },
    } as KubeObject;
    const job = batchJob({
      name: "backup-1795575600",
      namespace: NS,
      owner: { name: "backup", uid: "uid-backup" },
      labels: { [CRONJOB_NAME_LABEL]: "backup" },
      slot: SLOT,
      state: "complete",
      start: "2026-11-25T03:00:02Z",
      end: "2026-11-25T03:00:14Z",
    });
    job.metadata!.creationTimestamp = "2026-11-25T03:00:02Z";
    return [cronJob, job as KubeObject, ...holding("manager-a", 3, [NS])];
  }

  /** Forbids what the tenant's Role does not grant: everything outside its namespace, cluster-scoped reads first. */
  function tenant(server: FakeAPIServer): { forbidden: string[] } {
    const seen = { forbidden: [] as string[] };
    server.deny = (q) => {
      if (q.path === "/version" || q.path.includes(`/namespaces/${NS}/`)) return undefined;
      seen.forbidden.push(q.path);
      return new APIError(403, "Forbidden", `${q.path} is forbidden: User "tenant" cannot get it`);
    };
    return seen;
  }

  it("why NAME, why -n, next, history and instances all answer; what they may not read is said", async () => {
    const server = await cluster(tenantScene());
    const seen = tenant(server);
    const why = await runPlugin(server, ["why", "backup", "-o", "json"]);
    assert.equal(why.code, 0, why.out + why.err);
    const d = JSON.parse(why.out) as {
      status: string;
      runBy: { state: string };
      unreadable: string[];
      also: unknown[];
    };
    assert.equal(d.status, "healthy");
    assert.equal(d.runBy.state, "unknown", "its instance Lease is in the install's namespace, which it may not read");
    assert.deepEqual(d.also, [], "nothing it could not read is said wrong");
    assert.deepEqual(d.unreadable.toSorted(), [
      `customresourcedefinition cronjobs.batch.tutorial.kubebuilder.io: forbidden`,
      `deployments in ${TENANT_NS}: forbidden`,
      `lease ${TENANT_NS}/${TENANT_ID}-manager-a: forbidden`,
      `lease ${TENANT_NS}/${TENANT_ID}: forbidden`,
      "mutatingwebhookconfigurations: forbidden",
      `pods in ${TENANT_NS}: forbidden`,
      "validatingwebhookconfigurations: forbidden",
    ]);
    // The cluster-scoped reads were tried (and forbidden): none was needed.
    assert.ok(seen.forbidden.some((p) => p.startsWith("/apis/admissionregistration.k8s.io/")));
    assert.ok(
      !seen.forbidden.some((p) => p === "/api/v1/pods"),
      "the claim says where the install runs: no search for its Pods in every namespace",
    );
    const list = await runPlugin(server, ["why", "-n", NS]);
    assert.equal(list.code, 0, list.err);
    assert.equal(list.out, "all 1 CronJobs ran as scheduled\n");
    for (const argv of [["next", "backup"], ["history", "backup"], ["instances"]]) {
      const r = await runPlugin(server, argv);
      assert.equal(r.code, 0, `${argv.join(" ")}: ${r.err}`);
      assert.ok(r.out.length > 0, argv.join(" "));
    }
  });

  it("the dashboard's reads (its panel, its verdicts pass) in the tenant's namespace: none throws", async () => {
    const server = await cluster(tenantScene());
    tenant(server);
    const client = new Client(loadKubeConfig(server.kubeconfigPath, {}));
    // The panel: one read of the CronJob, answered as why answers.
    const f = await readOne({ client, namespace: NS, now: () => NOW }, "backup");
    assert.equal(whyAnswer(f, undefined).exitCode, 0);
    assert.equal(f.operator.foundBy, "claim");
    // The verdicts pass (dashboard/source.ts): the operator once, each namespace's lists and claim.
    const unreadable: string[] = [];
    const clocks = await readClocks(client, unreadable, () => NOW);
    const claims = claimReader(client, clocks.attempt);
    const claim = await claims.claimOf(NS);
    assert.equal(claim.state, "claimed");
    const base = await gatherOperator(client, clocks.attempt, { cronJobs: [f.cronJob], claim });
    const operator = await operatorsByClaim(client, clocks.attempt, base, undefined)(claim, [f.cronJob]);
    assert.equal(operator.namespace, TENANT_NS);
    assert.equal(operator.pods, undefined, "unread, not none");
    const reads = await readNamespace(client, NS, [f.cronJob], clocks, true, {
      jobs: f.jobs,
      calendars: undefined,
      groupLimits: undefined,
    });
    assert.deepEqual(
      reads.events.length + reads.quotas.length + reads.limitRanges.length,
      0,
      "its namespace's lists read",
    );
    assert.ok(unreadable.includes("validatingwebhookconfigurations: forbidden"), unreadable.join("; "));
  });
});
