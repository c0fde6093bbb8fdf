// CI's node lane (.ci/run): the integration files that need a real node, on one node where they can share it
// (node-lane.ts says how a suite states what it needs). The node starts once; the suites that only use it run
// concurrently on it, each in namespaces of its own (sharding-faults' shards under faults, node-cluster's Jobs,
// Services and garbage collection); then, one at a time, the suites that need the machine to themselves:
// node-cluster's stop() of that node, and its owner's and reaper's deaths (a child process's node each), then `make run
// LOCAL=1` (its own node, as a user's). One node a machine: before, each file started its own, one after another
// (290-340 s in CI), and the short suites waited for the node while the longest mostly waits for real Lease lapses.
//
//   make test-integration INTEGRATION_FILES=test/integration/node-lane-run.ts
//
// A file of the lane still runs on its own, on a node of its own (`INTEGRATION_FILES=test/integration/make-run.test.ts`).
import { dirname, join } from "node:path";
import { after, before, describe } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  collectNodeLaneSuites,
  NODE_START_TIMEOUT_MS,
  type NodeNeeds,
  startLaneCluster,
  stopLaneCluster,
} from "./node-lane.ts";

/** The lane's files. Within each stage after the shared one, their suites run in this order. */
const NODE_LANE_FILES = ["node-cluster.test.ts", "sharding-faults.test.ts", "make-run.test.ts"] as const;
/** The stages, in order: the shared node's suites together, then the others one at a time. */
const STAGES: readonly NodeNeeds[] = ["node", "stops-node", "machine"];

const here = dirname(fileURLToPath(import.meta.url));
const suites = collectNodeLaneSuites();
for (const f of NODE_LANE_FILES) await import(pathToFileURL(join(here, f)).href);
const of = (needs: NodeNeeds) => suites.filter((s) => s.needs === needs);
const stray = suites.filter((s) => !STAGES.includes(s.needs));
if (stray.length) throw new Error(`node-lane-run.ts: suites of no stage: ${stray.map((s) => s.name).join(", ")}`);

describe("the node lane: one node for the suites that share it, then those that need the machine", () => {
  before(async () => void (await startLaneCluster()), { timeout: NODE_START_TIMEOUT_MS });
  // On a failure before the stage that stops it: the machine restored all the same.
  after(() => stopLaneCluster());
  describe("on one node, concurrently", { concurrency: true }, () => {
    for (const s of of("node")) describe(s.name, { concurrency: false, ...s.options }, s.fn);
  });
  for (const s of [...of("stops-node"), ...of("machine")]) describe(s.name, { concurrency: false, ...s.options }, s.fn);
});
