// `make test-e2e`: every end-to-end suite on one local cluster with a real node, as Kubernetes' e2e framework and
// kubebuilder's scaffolded suite share one cluster per run. The cluster is set up once (node, image, `make
// deploy`); the suites that disturb nobody run concurrently, each in its own namespace; then the disruptive ones,
// one at a time, in DISRUPTIONS' order; then the cluster is stopped and the machine restored. A suite that finds
// the cluster broken names the suite that left it so (shared-cluster.ts). `make test-e2e E2E_MODE=per-file` runs
// each file on a cluster of its own instead, as a file run alone does (`E2E_FILES=test/e2e/why.test.ts`);
// `make test-e2e E2E_SHARED=fleets.test.ts,fleets2.test.ts` only those files' suites, on one cluster as here.
import { readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, after, before } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { LEADER_KILLED } from "./disruptions.ts";
import { collectSuites, startCluster, stopCluster } from "./suite.ts";

/**
 * The disruptive suites' order. First the leader's death that HA, the concurrency group, the retries and the
 * backfill share (leader-death.ts), with HA's standby kill and rollout after it: the failovers the API v2 union is
 * then checked across (its slots ran through them); the leader's Pod deleted; the operator scaled to 0 and brought
 * back; undeploy; Helm's own install last, on the cluster undeploy left empty.
 */
export const DISRUPTIONS = [
  LEADER_KILLED,
  "api-v2: the union's slots across the leader's death",
  "e2e: the leader's Pod deleted",
  "why: the operator scaled to 0",
  "e2e: make undeploy",
  "helm: the chart's own install",
] as const;

const here = dirname(fileURLToPath(import.meta.url));
// E2E_SHARED=a.test.ts,b.test.ts: only these files' suites, still on one cluster and in this order (a failure that
// needs the suites before it, e.g. a disruption's aftermath, reproduced without the whole run).
const only = (process.env.E2E_SHARED ?? "").split(",").filter(Boolean);
const files = readdirSync(here).filter((n) => n.endsWith(".test.ts"));
const unknown = only.filter((n) => !files.includes(n));
if (unknown.length) throw new Error(`run.ts: E2E_SHARED names no file of test/e2e: ${unknown.join(", ")}`);
const suites = collectSuites();
for (const f of files.filter((n) => !only.length || only.includes(n)).sort()) {
  await import(pathToFileURL(join(here, f)).href);
}
const concurrent = suites.filter((s) => !s.disruptive);
// A disruption's suites, run together: those that share one (a leader death several stories need) make it once.
const disruptive = DISRUPTIONS.flatMap((d) => {
  const of = suites.filter((x) => x.disruptive === d);
  if (!of.length && !only.length) throw new Error(`run.ts: no suite makes the disruption "${d}"`);
  return of.length ? [{ disruption: d, suites: of }] : [];
});
const unordered = suites.filter((s) => s.disruptive && !(DISRUPTIONS as readonly string[]).includes(s.disruptive));
if (unordered.length) {
  throw new Error(
    `run.ts: disruptive suites missing from DISRUPTIONS: ${unordered.map((s) => s.disruptive).join(", ")}`,
  );
}

/**
 * E2E_READY_FILE: created once the cluster is up and the operator deployed. CI starts the work it runs beside this
 * run (unit tests, lint, the integration files that need no node) when it appears: on two cores, started at once
 * they made the image's build and the cluster's start 50 s longer, while every suite after them mostly waits.
 */
function markReady(): void {
  const file = process.env.E2E_READY_FILE;
  if (file) writeFileSync(file, `${new Date().toISOString()}\n`);
}

describe("end to end, on one cluster with a real node", { timeout: 3_600_000 }, () => {
  before(
    async () => {
      await startCluster(true);
      markReady();
    },
    { timeout: 900_000 },
  );
  after(() => stopCluster());
  describe("the non-disruptive suites, concurrently", { concurrency: true }, () => {
    for (const s of concurrent) describe(s.name, { ...s.options, concurrency: false }, s.fn);
  });
  for (const { disruption, suites: of } of disruptive) {
    if (of.length === 1) describe(of[0]!.name, { ...of[0]!.options, concurrency: false }, of[0]!.fn);
    else
      describe(`${disruption} (${of.length} suites, together)`, { concurrency: true }, () => {
        for (const s of of) describe(s.name, { ...s.options, concurrency: false }, s.fn);
      });
  }
});
