// `kubectl cron why` on the operator and the clocks: down, no leader, cannot tell, undecided, its webhooks unserved, a
// clock skewed; found where `make deploy`, Helm or `make run` put it; and which install runs the namespace (its
// claim: live, released, its instance or install down). The scene: test/why-scene.ts.
import assert from "node:assert/strict";
import { describe, it, mock } from "node:test";
import { GROUP } from "../../api/v1/index.ts";
import type { Diagnosis } from "../../cmd/kubectl-cron/answer/why.ts";
import { APIError } from "../../runtime/errors.ts";
import type { KubeObject } from "../../runtime/kinds.ts";
import { claimLease, instanceLease, leaseRef, microTime, TENANT_ID, TENANT_INSTALL, TENANT_NS } from "../claims.ts";
import { DEPLOYMENT, LEASE, OPERATOR_NS, OPERATOR_SELECTOR, WEBHOOK_SERVICE } from "../why-facts.ts";
import {
  at,
  cluster,
  crashingOperatorPod,
  createdAtSlot,
  cronJob,
  entry,
  expectCause,
  JOB,
  job,
  NAME,
  noEndpoints,
  note,
  NOW,
  NS,
  operator,
  operatorLease,
  PREV_SLOT,
  producesItsCauses,
  ranAtSlot,
  run,
  setUpScene,
  SLOT,
  SLOT_TEXT,
  undecided,
  why,
  whyIn,
} from "../why-scene.ts";
setUpScene();

describe("kubectl cron why NAME: the operator and the clocks", () => {
  /** The operator's Deployment scaled to zero replicas, unavailable since `since`. */
  const scaledToZero = (since: string) =>
    ({
      ...operator().deployment,
      spec: { replicas: 0 },
      status: { replicas: 0, conditions: [{ type: "Available", status: "False", lastTransitionTime: since }] },
    }) as KubeObject;

  it("operator down: no ready replica (and so no leader either)", async () => {
    const lease = operatorLease({ renewTime: "2026-11-25T01:41:12.000000Z" });
    const r = await whyIn([undecided()], { pod: crashingOperatorPod(31), lease });
    expectCause(r, "operator-down", {
      verdict: [`did not run at ${SLOT_TEXT}`, `the operator has no ready replica in namespace ${OPERATOR_NS}`],
      evidence: ["cronjob-operator-controller-manager-7d9f-abcde Running, not ready, 31 restarts"],
      fix: [`kubectl -n ${OPERATOR_NS} get deployment,pods -l ${OPERATOR_SELECTOR}`],
    });
    // The stale Lease is part of the same story, not a second finding.
    assert.ok(
      r.d.evidence.some((e) =>
        /holder cronjob-operator-controller-manager-7d9f-abcde_0c1d, renewed 2026-11-25T01:41:12Z \(9h30m ago\)/.test(
          e,
        ),
      ),
      r.text,
    );
    assert.deepEqual(r.d.also, [], r.text);
    assert.match(r.d.next?.blocked ?? "", /nothing runs until it is back/);
  });

  it("operator down: scaled to zero, no Pod at all (its Lease released)", async () => {
    const deployment = scaledToZero("2026-11-25T01:40:00Z");
    const lease = operatorLease({ holderIdentity: undefined, renewTime: "2026-11-25T01:39:58.123456Z" });
    const r = await whyIn([undecided()], { pod: undefined, deployment, lease });
    expectCause(r, "operator-down", {
      verdict: [`did not run at ${SLOT_TEXT}`, "no ready replica"],
      evidence: [
        `Deployment ${OPERATOR_NS}/${DEPLOYMENT}: 0/0 ready replicas`,
        "holder (none: released), renewed 2026-11-25T01:39:58Z (9h32m ago)",
      ],
      fix: [`kubectl -n ${OPERATOR_NS} get deployment,pods -l ${OPERATOR_SELECTOR}`],
    });
    assert.doesNotMatch(r.text, /\.\d{6}Z/, "no time printed with microseconds");
  });

  it("no leader: a ready replica, but the Lease is stale by the API server's clock", async () => {
    const server = await cluster([undecided()], { lease: operatorLease({ renewTime: "2026-11-25T01:58:00.000000Z" }) });
    const r = await why(server);
    note(r.d);
    expectCause(r, "operator-no-leader", {
      verdict: [
        `did not run at ${SLOT_TEXT}`,
        "the Lease was last renewed 9h14m ago by cronjob-operator-controller-manager-7d9f-abcde_0c1d",
      ],
      evidence: [
        `Lease ${OPERATOR_NS}/${LEASE}: holder cronjob-operator-controller-manager-7d9f-abcde_0c1d, renewed 2026-11-25T01:58:00Z (9h14m ago), leaseDurationSeconds 15`,
        "1 ready replica in cronjob-operator-system",
        "the API server's time is 2026-11-25T11:12:00Z",
      ],
      fix: ["leader election"],
    });
  });

  it("no leader: there is no Lease at all", async () => {
    const server = await cluster([undecided()], { lease: undefined });
    const r = await why(server);
    expectCause(r, "operator-no-leader", {
      verdict: [`did not run at ${SLOT_TEXT}`, `there is no Lease ${OPERATOR_NS}/${LEASE}`],
      evidence: [`no Lease ${OPERATOR_NS}/${LEASE}, while its replicas run with --leader-elect`],
      fix: ["leader election"],
    });
  });

  it("webhooks with no ready endpoint: an `also` finding beside a healthy run", async () => {
    const r = await whyIn(ranAtSlot(), { endpoints: noEndpoints() });
    assert.equal(r.d.status, "healthy");
    assert.equal(r.code, 1, r.text);
    const failing = r.d.also.filter((a) => a.cause === "operator-webhook-failing");
    assert.deepEqual(
      failing.map((a) => a.summary),
      [
        `webhook validating/cronjob-operator-validating-webhook-configuration/vcronjob-v1.kb.io has no ready endpoint (Service ${OPERATOR_NS}/${WEBHOOK_SERVICE})`,
        `webhook conversion/cronjobs.${GROUP} has no ready endpoint (Service ${OPERATOR_NS}/${WEBHOOK_SERVICE})`,
      ],
      r.text,
    );
    assert.match(failing[1]!.evidence.join("\n"), /0 ready addresses.*failed calling webhook.*conversion webhook/);
    assert.match(failing[0]!.fix.join("\n"), /Bring a replica up/);
  });

  it("webhooks whose Service has no EndpointSlice at all count as no endpoint", async () => {
    const server = await cluster([createdAtSlot()], { endpoints: undefined });
    const r = await why(server);
    assert.equal(r.d.also.filter((a) => a.cause === "operator-webhook-failing").length, 2, r.text);
    assert.deepEqual(r.d.unreadable, []);
  });

  it("counts an endpoint ready unless its slice says ready: false, over every slice of the Service", async () => {
    const op = operator();
    const slice = (name: string, ready: (boolean | undefined)[]) =>
      ({
        ...op.endpoints,
        metadata: { ...op.endpoints!.metadata, name },
        endpoints: ready.map((r, i) => ({
          addresses: [`10.244.0.${i + 10}`],
          conditions: r === undefined ? {} : { ready: r },
        })),
      }) as KubeObject;
    // Terminating or unready endpoints only: no ready endpoint.
    const down = await cluster([createdAtSlot()], { endpoints: slice(`${WEBHOOK_SERVICE}-a`, [false, false]) });
    const r = await why(down);
    assert.equal(r.d.also.filter((a) => a.cause === "operator-webhook-failing").length, 2, r.text);
    // A second slice with one endpoint whose readiness is unset (ready, as the API defines it): answering.
    const up = await cluster([createdAtSlot()], { endpoints: slice(`${WEBHOOK_SERVICE}-a`, [false]) });
    await up.seed(slice(`${WEBHOOK_SERVICE}-b`, [undefined]));
    const r2 = await why(up);
    assert.deepEqual(
      r2.d.also.filter((a) => a.cause === "operator-webhook-failing"),
      [],
      r2.text,
    );
  });

  it("clock skew: the leader's Lease renewTime is ahead of the API server's clock", async () => {
    const server = await cluster(ranAtSlot(), { lease: operatorLease({ renewTime: "2026-11-25T11:12:40.000000Z" }) });
    const r = await why(server);
    note(r.d);
    assert.equal(r.code, 1, r.text);
    const skew = r.d.also.find((a) => a.cause === "clock-skew");
    assert.ok(skew, r.text);
    assert.equal(skew.summary, "the leader's clock is 40s ahead of the API server's");
    assert.deepEqual(skew.evidence, [
      "Lease renewTime 2026-11-25T11:12:40Z is later than the API server's time 2026-11-25T11:12:00Z",
    ]);
    assert.match(skew.fix.join("\n"), /NTP/);
  });

  it("clock skew: this machine's clock against the API server's Date header; times are the API server's", async () => {
    const server = await cluster(ranAtSlot());
    mock.timers.setTime(NOW.getTime() + 150_000);
    const r = await why(server);
    note(r.d);
    const skew = r.d.also.find((a) => a.cause === "clock-skew");
    assert.ok(skew, r.text);
    assert.equal(skew.summary, "this machine's clock is 2m30s ahead of the API server's");
    assert.deepEqual(skew.evidence, [
      "this machine: 2026-11-25T11:14:30Z; the API server (Date header): 2026-11-25T11:12:00Z",
    ]);
    assert.equal(r.code, 1);
    // A skew within rounding of the Date header's whole seconds is not one.
    mock.timers.setTime(NOW.getTime() + 1_500);
    const close = await why(server);
    assert.deepEqual(close.d.also, [], close.text);
    assert.equal(close.code, 0);
  });

  /** An every-minute CronJob that ran its latest slot (the sample `make run` applies), as of NOW. */
  const everyMinute = () => {
    const slot = at(NOW.toISOString(), -60);
    const jobName = `${NAME}-${Date.parse(slot) / 1000}`;
    return [
      cronJob({
        spec: { schedule: "* * * * *", timeZone: "UTC" },
        status: {
          lastScheduleTime: slot,
          recentRuns: [entry(slot, "Created", "Scheduled", { job: jobName, decidedAt: at(slot, 1) })],
        },
      }),
      job(jobName, slot, { state: "complete", start: at(slot, 2), end: at(slot, 9) }),
    ];
  };
  /** No Pod, Deployment, Lease or webhook Service of the operator anywhere in the cluster. */
  const nothingDeployed = {
    pod: undefined,
    deployment: undefined,
    lease: undefined,
    validating: undefined,
    endpoints: undefined,
    crd: undefined,
  } as const;

  it("make run: the operator on the host (no Pod, no Lease, no Deployment): a healthy CronJob exits 0", async () => {
    const server = await cluster(everyMinute(), nothingDeployed);
    const r = await why(server);
    note(r.d);
    assert.equal(r.d.status, "healthy", r.text);
    assert.deepEqual(r.d.also, [], r.text);
    assert.equal(r.code, 0, r.text);
    assert.equal(r.d.next?.blocked, undefined, r.text);
    // The fleet view agrees: nothing needs attention.
    const list = await run(server, ["why", "-A"]);
    assert.equal(list.code, 0, list.out + list.err);
    assert.equal(list.out, "all 1 CronJobs ran as scheduled\n");
  });

  it("make run beside a Deployment scaled to zero whose Lease lapsed: the record's decisions say it works, so cannot tell (exit 2), not down", async () => {
    const deployment = scaledToZero("2026-11-25T09:00:00Z");
    const lease = operatorLease({ renewTime: "2026-11-25T08:59:50.000000Z" });
    const server = await cluster(everyMinute(), { pod: undefined, deployment, lease });
    const r = await why(server);
    note(r.d);
    assert.equal(r.d.status, "healthy", r.text);
    assert.equal(r.code, 2, r.text);
    const unclear = r.d.also.find((a) => a.cause === "operator-unclear");
    assert.ok(unclear, r.text);
    assert.match(unclear.summary, /^cannot tell whether the operator runs: /);
    assert.match(unclear.summary, /0\/0 ready replicas/);
    assert.match(unclear.summary, /but the record shows a decision at 2026-11-25T11:11:01Z \(59s ago, prod\/backup\)/);
    assert.ok(!r.d.also.some((a) => a.cause === "operator-down" || a.cause === "operator-no-leader"), r.text);
    const list = await run(server, ["why", "-A"]);
    assert.equal(list.code, 2, list.out);
    // The operator's state is every CronJob's: said once, with the CronJobs it affects.
    assert.match(
      list.out,
      /^\(operator\)\toperator-unclear\tcannot tell whether the operator runs: .*: affects 1 CronJob \(prod\/backup\)\n$/,
    );
  });

  it("Helm with another release name and namespace: found through its webhooks' Service, healthy, exit 0", async () => {
    const ns = "platform-cron";
    const op = operator();
    const move = <T extends KubeObject>(o: T): T => {
      const c = structuredClone(o);
      c.metadata = { ...c.metadata, namespace: ns };
      if (c.metadata.name?.startsWith("cronjob-operator-"))
        c.metadata.name = c.metadata.name.replace("cronjob-operator-", "nightly-ops-");
      return c;
    };
    const service = { namespace: ns, name: "nightly-ops-webhook-service", path: "/validate" };
    const validating = structuredClone(op.validating) as KubeObject & { webhooks: any[] };
    validating.metadata = { name: "nightly-ops-validating-webhook-configuration" };
    validating.webhooks[0].clientConfig = { service };
    const crd = structuredClone(op.crd) as KubeObject & { spec: any };
    crd.spec.conversion.webhook.clientConfig = { service: { ...service, path: "/convert" } };
    const endpoints = move(op.endpoints);
    endpoints.metadata!.name = `${service.name}-x7k2p`;
    endpoints.metadata!.labels = { "kubernetes.io/service-name": service.name };
    const r = await whyIn(everyMinute(), {
      pod: move(op.pod),
      deployment: move(op.deployment),
      lease: move(op.lease),
      validating,
      endpoints,
      crd,
    });
    assert.deepEqual(r.d.also, [], r.text);
    assert.equal(r.code, 0, r.text);
    // Down there is reported there, by its own names.
    const lease = move(op.lease) as KubeObject & { spec: Record<string, unknown> };
    lease.spec.renewTime = "2026-11-25T09:00:00.000000Z";
    const pod = move(op.pod) as KubeObject & { status: any };
    pod.status = {
      phase: "Running",
      conditions: [{ type: "Ready", status: "False", lastTransitionTime: "2026-11-25T09:00:00Z" }],
      containerStatuses: [],
    };
    const down = await cluster([undecided()], { pod, deployment: undefined, lease, validating, endpoints, crd });
    const d = await why(down);
    expectCause(d, "operator-down", {
      verdict: [`the operator has no ready replica in namespace ${ns}`],
      evidence: [`its Pods in ${ns}`, `Lease ${ns}/${LEASE}`],
      fix: [`kubectl -n ${ns} get deployment,pods -l ${OPERATOR_SELECTOR}`],
    });
  });

  it("no webhooks (a release with webhook.enable=false): its Pods are found by label in any namespace", async () => {
    const ns = "ops";
    const op = operator();
    const pod = structuredClone(op.pod);
    pod.metadata = { ...pod.metadata, namespace: ns };
    const lease = structuredClone(op.lease);
    lease.metadata = { ...lease.metadata, namespace: ns };
    const r = await whyIn([undecided()], { ...nothingDeployed, pod, lease });
    expectCause(r, "not-yet-decided", {
      exit: 2,
      verdict: ["has not decided about it"],
      evidence: [`the operator: 1 ready replica in ${ns}`, `the operator: Lease ${ns}/${LEASE}: holder`],
      fix: ["workqueue_depth"],
    });
  });

  it("stopped under make run: no trace of the operator and an undecided slot: cannot tell (exit 2), saying where it looked", async () => {
    const server = await cluster([undecided()], nothingDeployed);
    const r = await why(server);
    note(r.d);
    expectCause(r, "not-yet-decided", {
      exit: 2,
      verdict: ["has not decided about it"],
      evidence: [
        `the operator: no trace of it: looked for its Pods and Deployment (${OPERATOR_SELECTOR}) and ${LEASE} in ${OPERATOR_NS} (from the default install)`,
        "if it runs outside the cluster (make run), it is stopped or cannot reach the API server",
      ],
      fix: ["workqueue_depth"],
    });
  });

  it("a single replica without leader election and no Lease is not a missing leader", async () => {
    const op = operator();
    const pod = structuredClone(op.pod) as KubeObject & { spec: any };
    pod.spec.containers[0].args = ["dist/cmd/main.js", "--leader-elect=false"];
    const server = await cluster(everyMinute(), { pod, lease: undefined });
    const r = await why(server);
    assert.deepEqual(r.d.also, [], r.text);
    assert.equal(r.code, 0, r.text);
  });

  it("not yet decided: no entry, no Job, the operator healthy (exit 2)", async () => {
    const r = await whyIn([undecided()]);
    expectCause(r, "not-yet-decided", {
      exit: 2,
      verdict: [`did not run at ${SLOT_TEXT}`, "has not decided about it (9h12m ago) and looks healthy"],
      evidence: [`no entry for ${SLOT} in status.recentRuns, no Job ${JOB}`, `status.lastScheduleTime: ${PREV_SLOT}`],
      fix: ["workqueue_depth"],
    });
    assert.equal(r.d.status, "unknown");
  });

  it("a slot older than the record, its Job gone: cannot tell (exit 2)", async () => {
    const runs = Array.from({ length: 10 }, (_, i) => {
      const slot = at(SLOT, -86400 * i);
      return entry(slot, "Created", "Scheduled", {
        job: `backup-${Date.parse(slot) / 1000}`,
        outcome: { result: "Complete" as const, finishedAt: at(slot, 14) },
      });
    });
    const server = await cluster([cronJob({ status: { recentRuns: runs } })]);
    const r = await why(server, "--slot", "2026-11-10T03:00");
    assert.equal(r.code, 2, r.text);
    assert.equal(r.d.status, "unknown");
    assert.equal(r.d.cause, undefined);
    assert.match(
      r.d.verdict,
      /^cannot tell about 2026-11-10 03:00 Europe\/Berlin \(2026-11-10T02:00:00Z\): it is older than the 10 decisions the record keeps, and no Job for it is left$/,
    );
    assert.ok(
      r.d.evidence.some((e) => e.includes(`status.lastScheduleTime: ${SLOT}`)),
      r.text,
    );
  });

  it("a read the user may not make (403 on pods) is listed under unreadable; the diagnosis completes", async () => {
    const server = await cluster([createdAtSlot(), job(JOB, SLOT, { state: "active", start: at(SLOT, 3) })]);
    server.deny = (q) =>
      q.path.endsWith("/pods")
        ? new APIError(403, "Forbidden", `pods is forbidden: User "dev" cannot list resource "pods" in API group ""`)
        : undefined;
    const r = await why(server);
    assert.deepEqual(
      r.d.unreadable.toSorted(),
      [`pods in ${OPERATOR_NS}: forbidden`, `pods in ${NS}: forbidden`],
      r.text,
    );
    assert.match(r.text, /^Could not read: .*pods in prod: forbidden/m);
    assert.notEqual(r.d.cause, "pods-not-created", "Pods it could not read are not missing Pods");
    assert.equal(r.d.status, "healthy", r.text);
    assert.match(
      r.d.verdict,
      new RegExp(
        `^ran at ${SLOT_TEXT.replace(/[()]/g, "\\$&")}: Job ${JOB} \\(created 2 s after the slot\\) has been running for 9h11m`,
      ),
    );
  });
});

describe("kubectl cron why NAME: which install runs its namespace (its claim)", () => {
  const POD = "cronjob-operator-controller-manager-7d9-abc";
  const ACQUIRED = "2026-11-25T10:00:00.000000Z";
  /** The CronJob, its 03:00 run complete. */
  const ran = () => [
    cronJob({
      status: {
        recentRuns: [
          entry(SLOT, "Created", "Scheduled", { job: JOB, outcome: { result: "Complete", finishedAt: at(SLOT, 14) } }),
        ],
      },
    }),
    job(JOB, SLOT, { state: "complete", start: at(SLOT, 2), end: at(SLOT, 14) }),
  ];
  /** The tenant's instance Lease, renewed `seconds` before now, and the claim of prod it keeps alive. */
  const claimed = (seconds: number, holder = POD) => {
    const instance = instanceLease({ pod: POD, renewTime: microTime(NOW, -seconds) });
    return [instance, claimLease({ namespace: NS, holder, instanceLease: leaseRef(instance), acquireTime: ACQUIRED })];
  };
  const runByLine = (text: string) => text.split("\n").find((l) => l.startsWith("Run by: "));
  /** The operator's Pod, not ready, `meta` merged into its metadata. */
  const notReady = (meta: object) => {
    const pod = operator().pod;
    return {
      ...pod,
      metadata: { ...pod.metadata, ...meta },
      status: { phase: "Running", conditions: [{ type: "Ready", status: "False" }] },
    } as KubeObject;
  };

  it("claimed and live: the install and instance, and the operator looked for where the claim says", async () => {
    const server = await cluster([...ran(), ...claimed(3)]);
    const r = await why(server);
    assert.equal(r.code, 0, r.text);
    const instanceRef = `${TENANT_NS}/${TENANT_ID}-${POD}`;
    assert.deepEqual(r.d.runBy, {
      state: "active",
      text: `install ${TENANT_INSTALL} (instance ${POD})`,
      install: TENANT_INSTALL,
      instance: POD,
      since: "2026-11-25T10:00:00Z",
      instanceLease: instanceRef,
    });
    assert.equal(runByLine(r.text), `Run by: install ${TENANT_INSTALL} (instance ${POD})`);
    assert.deepEqual(r.d.also, [], r.text);
    // The install the claim names is the operator looked at: its namespace, no search for its Pods in any namespace.
    const reads = server.requests.filter((q) => q.method === "GET").map((q) => q.path);
    assert.ok(reads.includes(`/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/cronjob-operator`), "the claim");
    assert.ok(reads.includes(`/apis/coordination.k8s.io/v1/namespaces/${TENANT_NS}/leases/${TENANT_ID}-${POD}`));
    assert.ok(reads.includes(`/apis/apps/v1/namespaces/${TENANT_NS}/deployments`), "the install's Deployments");
    assert.ok(!reads.includes(`/apis/apps/v1/namespaces/${OPERATOR_NS}/deployments`), "not the default install's");
  });

  it("released: it is moving, and nothing is wrong (exit 0)", async () => {
    const server = await cluster([...ran(), ...claimed(3, "")]);
    const r = await why(server);
    assert.equal(r.code, 0, r.text);
    assert.equal(r.d.runBy?.state, "released");
    assert.equal(
      runByLine(r.text),
      `Run by: moving: install ${TENANT_INSTALL} let namespace ${NS} go; the next instance to claim it runs it`,
    );
    assert.deepEqual(r.d.also, [], r.text);
  });

  it("its instance down, with time left: when another instance takes the namespace (no finding yet)", async () => {
    // Renewed 17 s ago, for 15 s: lapsed 2 s ago; taken at most 15 s (and 5) after the renewal, in 3 s.
    const server = await cluster([...ran(), ...claimed(17)]);
    const r = await why(server);
    assert.equal(r.code, 0, r.text);
    assert.equal(r.d.runBy?.state, "down");
    assert.equal(
      runByLine(r.text),
      `Run by: install ${TENANT_INSTALL} (instance ${POD}), which is down: its Lease ${TENANT_NS}/${TENANT_ID}-${POD} ` +
        `lapsed 2s ago; another instance takes namespace ${NS} within 3s`,
    );
    assert.deepEqual(r.d.also, [], r.text);
  });

  it("its instance down past its duration: instance-down, besides a slot that ran and as the verdict of one undecided", async () => {
    const r = await whyIn([...ran(), ...claimed(60)]);
    assert.equal(r.code, 1, r.text);
    assert.equal(r.d.runBy?.state, "overdue");
    assert.match(
      runByLine(r.text) ?? "",
      new RegExp(`lapsed 45s ago; another instance should have taken namespace ${NS} 40s ago$`),
    );
    const down = r.d.also.find((a) => a.cause === "instance-down");
    assert.ok(down, r.text);
    assert.equal(
      down.summary,
      `namespace ${NS} is held by instance ${POD} of install ${TENANT_INSTALL}, whose Lease was last renewed 1m ago, ` +
        "and no other instance took it",
    );
    assert.ok(
      down.fix[0]?.startsWith(`\`kubectl cron instances -n ${NS}\` and \`kubectl -n ${TENANT_NS} get pods,leases\``),
    );
    assert.ok(down.evidence.some((e) => e.includes(`renewed 2026-11-25T11:11:00Z (1m ago), leaseDurationSeconds 15`)));

    const stuck = await cluster([undecided(), ...claimed(60)]);
    const u = await why(stuck);
    note(u.d);
    expectCause(u, "instance-down", {
      verdict: [`did not run at ${SLOT_TEXT}: namespace ${NS} is held by instance ${POD}`],
      evidence: [`Lease ${NS}/cronjob-operator (the claim): holder ${POD}, install ${TENANT_INSTALL}`],
      fix: ["kubectl cron instances -n prod"],
    });
    assert.match(u.d.next?.blocked ?? "", /no other instance took it: nothing runs in it until an instance takes it$/);
    // Without NAME: said once, as the operator's problems are.
    const all = await run(stuck, ["why"]);
    assert.equal(all.code, 1, all.err);
    assert.match(all.out, /^\(operator\)\tinstance-down\tnamespace prod is held by .*: affects 1 CronJob \(backup\)$/m);
  });

  it("its install down as a whole: operator-down for the install the claim names, not instance-down besides", async () => {
    const server = await cluster([undecided(), ...claimed(600), notReady({ name: POD, namespace: TENANT_NS })]);
    const r = await why(server);
    expectCause(r, "operator-down", {
      verdict: [`the operator has no ready replica in namespace ${TENANT_NS}`],
      evidence: [`${POD} Running, not ready`],
      fix: [`kubectl -n ${TENANT_NS} get deployment,pods`],
    });
    assert.ok(!r.d.also.some((a) => a.cause === "instance-down"), r.text);
    assert.match(runByLine(r.text) ?? "", /which is down: .* should have taken namespace prod 9m40s ago$/);
    // Another namespace, unclaimed, is the default install's, which is well: why -A tells them apart.
    const other = cronJob({ meta: { namespace: "other", uid: "uid-other" }, status: { lastScheduleTime: SLOT } });
    await server.seed(other);
    const all = await run(server, ["why", "-A", "-o", "json"]);
    const d = JSON.parse(all.out) as { items: Diagnosis[]; shared: { cause: string; cronJobs: string[] }[] };
    assert.deepEqual(
      d.shared.map((p) => [p.cause, p.cronJobs]),
      [["operator-down", [`${NS}/${NAME}`]]],
    );
  });

  it("why -A: each namespace's operator is the install its claim names, and a problem is said of its own install", async () => {
    const lease = operatorLease({ renewTime: "2026-11-25T01:41:12.000000Z" });
    // other/backup: unclaimed, the default install's, down; prod/backup: the tenant's, down too.
    const other = cronJob({ meta: { namespace: "other", uid: "uid-other" }, status: { lastScheduleTime: PREV_SLOT } });
    const server = await cluster([undecided(), other, ...claimed(600), notReady({ name: POD, namespace: TENANT_NS })], {
      pod: notReady({}),
      lease,
    });
    const all = await run(server, ["why", "-A", "-o", "json"]);
    const d = JSON.parse(all.out) as { shared: { cause: string; text: string; cronJobs: string[] }[] };
    assert.deepEqual(
      d.shared.map((p) => [p.cause, p.text.replace(/: affects.*/, ""), p.cronJobs]),
      [
        ["operator-down", `the operator has no ready replica in namespace ${OPERATOR_NS}`, ["other/backup"]],
        ["operator-down", `the operator has no ready replica in namespace ${TENANT_NS}`, [`${NS}/${NAME}`]],
      ],
    );
  });

  it("no claim: no install claims the namespace (the default install claims none)", async () => {
    const server = await cluster(ran());
    const r = await why(server);
    assert.equal(r.code, 0, r.text);
    assert.deepEqual(r.d.runBy, {
      state: "unclaimed",
      text: `no install claims namespace ${NS}: a cluster-wide install that claims none runs it, or no install watches it`,
    });
    assert.deepEqual(r.d.unreadable, []);
  });

  it("leases forbidden: the claim (and the leader Lease) said unread, not failed, and no operator finding made of it", async () => {
    const server = await cluster([...ran(), ...claimed(3)]);
    server.deny = (q) =>
      q.path.includes("/leases")
        ? new APIError(
            403,
            "Forbidden",
            `leases.coordination.k8s.io is forbidden: User "dev" cannot get resource "leases"`,
          )
        : undefined;
    const r = await why(server);
    assert.equal(r.code, 0, r.text);
    assert.equal(
      runByLine(r.text),
      `Run by: not known: the claim of namespace ${NS} (Lease ${NS}/cronjob-operator) could not be read`,
    );
    assert.deepEqual(r.d.unreadable.toSorted(), [
      `lease ${OPERATOR_NS}/${LEASE}: forbidden`,
      `lease ${NS}/cronjob-operator: forbidden`,
    ]);
    assert.deepEqual(r.d.also, [], "a Lease it could not read is not a Lease missing");
    // Only its instance's Lease forbidden: the install and instance are known, whether it is live is not.
    server.deny = (q) =>
      q.path.startsWith(`/apis/coordination.k8s.io/v1/namespaces/${TENANT_NS}/`)
        ? new APIError(403, "Forbidden", "forbidden")
        : undefined;
    const half = await why(server);
    assert.equal(half.code, 0, half.text);
    assert.equal(half.d.runBy?.state, "unknown");
    assert.match(
      runByLine(half.text) ?? "",
      /^Run by: install .* \(instance .*\); whether the instance is live is not known: its Lease .* could not be read$/,
    );
  });
});

producesItsCauses("operator");
