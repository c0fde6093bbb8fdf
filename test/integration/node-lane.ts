// The integration suites that need a real node (envtest/node-cluster.ts) share one where that is sound, as the
// end-to-end suites share one cluster (test/e2e/run.ts). One node runs a machine at a time, so files that each
// started their own ran one after another, every start and stop on the lane's critical path, while the longest
// suite (sharding-faults: real Lease lapses and 15-s slots) mostly waits. A suite declares itself with
// nodeLaneDescribe() and says what it needs of the machine's node:
//
//   - "node": a node with the CRDs installed. It reaches it with laneCluster() once its before() hooks have run,
//     works in namespaces of its own and never stops it.
//   - "stops-node": that node too, and then the machine to itself: its tests stop the node (what stop() leaves is
//     what they check) and may start nodes of their own afterwards.
//   - "machine": the machine to itself, with no node running: it starts its own (`make run LOCAL=1`).
//
// test/integration/node-lane-run.ts (CI's node lane) imports the files, starts the node once, runs the "node" suites
// concurrently on it, then the "stops-node" suites and the "machine" suites one at a time, in the order it states. A
// file run on its own (`node --test FILE`, `make test-integration INTEGRATION_FILES=FILE`) is described at once: its
// first suite that needs the node starts one of its own (the same options), stopped after its last suite.
import { join } from "node:path";
import { after, before, describe } from "node:test";
import { PROJECT_ROOT } from "../../envtest/index.ts";
import { NodeCluster, type NodeClusterOptions } from "../../envtest/node-cluster.ts";

/** What a suite needs of the machine's node (above). */
export type NodeNeeds = "node" | "stops-node" | "machine";

/** A describe() of a node suite, registered by nodeLaneDescribe() for the lane's runner. */
export interface NodeLaneSuite {
  name: string;
  needs: NodeNeeds;
  options: { timeout?: number; concurrency?: boolean };
  /** The describe() body, with the hooks that give it its node (or the machine). */
  fn: () => void;
}

/** The node every suite gets, alone or in the lane: sharding-faults' managers need the CRDs. */
const NODE_OPTIONS: NodeClusterOptions = { crdDirectoryPaths: [join(PROJECT_ROOT, "config", "crd", "bases")] };
/** A first run provisions the node (apt packages, kubelet and kube-scheduler builds) before it starts. */
export const NODE_START_TIMEOUT_MS = 45 * 60_000;

/** The lane's registry (node-lane-run.ts), or undefined when a file runs on its own. */
let registry: NodeLaneSuite[] | undefined;
let starting: Promise<NodeCluster> | undefined;
let cluster: NodeCluster | undefined;
const beforeStart: (() => void)[] = [];
let perFile = false;

/** For the runner, before it imports the files: their suites are collected, not described. */
export function collectNodeLaneSuites(): NodeLaneSuite[] {
  registry = [];
  return registry;
}

/**
 * `fn` runs just before the node starts (and waits for the machine's node lock): e.g. a look at the machine that a
 * test compares with what stop() leaves.
 */
export function beforeNodeStarts(fn: () => void): void {
  beforeStart.push(fn);
}

/** Starts the node, once; every caller gets the same one (or the same failure). */
export function startLaneCluster(): Promise<NodeCluster> {
  starting ??= (async () => {
    for (const fn of beforeStart) fn();
    cluster = await NodeCluster.start(NODE_OPTIONS);
    return cluster;
  })();
  return starting;
}

/** The node, in a suite that needs it, once its before() hooks have run. */
export function laneCluster(): NodeCluster {
  if (!cluster) throw new Error("node-lane: laneCluster() before the node started (in a suite's before() hooks)");
  return cluster;
}

/** Stops the node and restores the machine (NodeCluster.stop(): idempotent); nothing when it never started. */
export async function stopLaneCluster(): Promise<void> {
  await starting?.catch(() => undefined);
  await cluster?.stop();
}

/** `fn` with the hooks that give the suite what it needs: the node started, or stopped for the machine. */
function withNode(needs: NodeNeeds, fn: () => void): () => void {
  return () => {
    if (needs === "machine") before(() => stopLaneCluster());
    else before(async () => void (await startLaneCluster()), { timeout: NODE_START_TIMEOUT_MS });
    fn();
  };
}

/**
 * A suite of the node lane: collected for node-lane-run.ts, else described at once. `needs` is what it needs of the
 * machine's node (the header).
 */
export function nodeLaneDescribe(
  name: string,
  needs: NodeNeeds,
  options: NodeLaneSuite["options"],
  fn: () => void,
): void {
  if (registry) {
    registry.push({ name, needs, options, fn: withNode(needs, fn) });
    return;
  }
  if (!perFile) {
    perFile = true;
    after(() => stopLaneCluster());
  }
  describe(name, options, withNode(needs, fn));
}
