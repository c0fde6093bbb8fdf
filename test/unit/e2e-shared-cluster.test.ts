// The end-to-end suites' promise to each other on a shared cluster (test/e2e/shared-cluster.ts): a suite that finds
// the cluster broken fails at once, naming the suite that left it so, instead of timing out in its first test.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ClusterBook, type ClusterState, shortfall } from "../e2e/shared-cluster.ts";

const healthy: ClusterState = { crd: true, deployment: { replicas: 2, ready: 2, updated: 2 } };

describe("e2e shared cluster: what a suite needs", () => {
  it("the operator: its CRD and every replica of its Deployment Ready", () => {
    assert.deepEqual(shortfall(healthy, "operator"), { problems: [], settling: false });
    assert.deepEqual(shortfall({ ...healthy, crd: false }, "operator"), {
      problems: ["the CronJob CRD is missing"],
      settling: false,
    });
    assert.deepEqual(shortfall({ crd: true }, "operator").problems, ["the manager's Deployment is missing"]);
    const zero = shortfall({ crd: true, deployment: { replicas: 0, ready: 0, updated: 0 } }, "operator");
    assert.deepEqual(zero, { problems: ["the manager's Deployment is scaled to 0 replicas"], settling: false });
    const rolling = shortfall({ crd: true, deployment: { replicas: 2, ready: 1, updated: 2 } }, "operator");
    assert.deepEqual(rolling, { problems: ["1 of the manager's 2 replicas are Ready (2 up to date)"], settling: true });
    // A rollout that waiting would finish does not hide a CRD that waiting will not bring back.
    const both = shortfall({ crd: false, deployment: { replicas: 2, ready: 1, updated: 2 } }, "operator");
    assert.equal(both.settling, false);
  });

  it("no operator (the Helm suite installs its own): neither the CRD nor make deploy's Deployment", () => {
    assert.deepEqual(shortfall({ crd: false }, "no-operator"), { problems: [], settling: false });
    assert.deepEqual(shortfall(healthy, "no-operator").problems, [
      "the CronJob CRD is still installed",
      "the manager's Deployment still exists",
    ]);
  });
});

describe("e2e shared cluster: the suite that left it broken is named", () => {
  it("the operator left at 0 replicas: the next suite fails at once, naming the last suite to finish", async () => {
    const book = new ClusterBook();
    let reads = 0;
    const read = async (): Promise<ClusterState> => {
      reads++;
      return { crd: true, deployment: { replicas: 0, ready: 0, updated: 0 } };
    };
    await book.check("why: the operator stopped", "operator", async () => healthy);
    book.finished("why: the operator stopped");
    await assert.rejects(book.check("e2e: make undeploy", "operator", read, 60_000, 1), (err: Error) => {
      assert.match(err.message, /suite "e2e: make undeploy" needs it \(operator\)/);
      assert.match(err.message, /scaled to 0 replicas/);
      assert.match(err.message, /left so by "why: the operator stopped", the last suite to finish/);
      return true;
    });
    assert.equal(reads, 1, "no waiting for what waiting cannot fix");
  });

  it("a suite that found the cluster broken, and so never ran, does not take the blame from the one that broke it", async () => {
    const book = new ClusterBook();
    const zero: ClusterState = { crd: true, deployment: { replicas: 0, ready: 0, updated: 0 } };
    await book.check("why: the operator stopped", "operator", async () => healthy);
    book.finished("why: the operator stopped");
    await assert.rejects(book.check("e2e: make undeploy", "operator", async () => zero, 60_000, 1));
    book.finished("e2e: make undeploy");
    await assert.rejects(
      book.check("helm", "operator", async () => zero, 60_000, 1),
      /left so by "why: the operator stopped"/,
    );
  });

  it("the CRD deleted: named the same way; before any suite finished, the set-up is named", async () => {
    const book = new ClusterBook();
    await assert.rejects(
      book.check("api-v2", "operator", async () => ({ ...healthy, crd: false }), 60_000, 1),
      /CRD is missing.*left so by "the shared set-up/,
    );
  });

  it("a rollout in progress is waited for; one that never ends fails with the figure, still naming the suite", async () => {
    const book = new ClusterBook();
    await book.check("ha", "operator", async () => healthy);
    book.finished("ha");
    const states: ClusterState[] = [
      { crd: true, deployment: { replicas: 2, ready: 1, updated: 1 } },
      { crd: true, deployment: { replicas: 2, ready: 1, updated: 2 } },
      healthy,
    ];
    await book.check("policies", "operator", async () => states.shift()!, 60_000, 1);
    assert.equal(states.length, 0);
    const stuck = async (): Promise<ClusterState> => ({ crd: true, deployment: { replicas: 2, ready: 1, updated: 2 } });
    await assert.rejects(
      book.check("why", "operator", stuck, 20, 1),
      /1 of the manager's 2 replicas are Ready.*still so after 0 s.*left so by "ha"/,
    );
  });
});
