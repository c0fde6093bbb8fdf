// What the CRD's schema costs kube-apiserver on each status write: N of our CronJobs on a fresh control
// plane, then rounds of N status PUTs (the whole object, as ours writes them), under the generated CRD and
// under two slimmer copies of it, kube-apiserver CPU ms per write. A one-off measurement for the
// benchmark's analysis (issue 23), not part of `make bench`:
//
//   node_modules/.bin/node bench/status-schema-cost.ts [--n=2000] [--rounds=3]
//
// Variants: `generated` (config/crd/bases as `make install` applies it: the Job template's full schema),
// `template-open` (the Pod template under jobTemplate.spec.template is x-kubernetes-preserve-unknown-fields),
// `jobtemplate-open` (all of jobTemplate is).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { parse, stringify } from "yaml";
import { CronJobResource } from "../api/v1/index.ts";
import { PROJECT_ROOT, TestEnv } from "../envtest/index.ts";
import { Client } from "../runtime/client.ts";
import type { KubeObject } from "../runtime/kinds.ts";
import { forEachLimit, sleep } from "./lib/pool.ts";
import { cpuSeconds, findChild } from "./lib/proc.ts";
import { createNamespaces, ourCronJob, placement } from "./lib/workload.ts";

const { values } = parseArgs({ options: { n: { type: "string" }, rounds: { type: "string" } } });
const n = Number(values.n ?? 2000);
const rounds = Number(values.rounds ?? 3);
const OPEN = { type: "object", "x-kubernetes-preserve-unknown-fields": true };
const variants: Record<
  string,
  (spec: { properties: Record<string, { properties: Record<string, unknown> }> }) => void
> = {
  generated: () => {},
  "template-open": (spec) => {
    (spec.properties.jobTemplate!.properties.spec as { properties: Record<string, unknown> }).properties.template =
      OPEN;
  },
  "jobtemplate-open": (spec) => {
    spec.properties.jobTemplate = OPEN as never;
  },
};

for (const [name, change] of Object.entries(variants)) {
  const crd = parse(
    readFileSync(join(PROJECT_ROOT, "config/crd/bases/batch.tutorial.kubebuilder.io_cronjobs.yaml"), "utf8"),
  ) as { spec: { versions: Array<{ schema: { openAPIV3Schema: { properties: { spec: never } } } }> } };
  for (const v of crd.spec.versions) change(v.schema.openAPIV3Schema.properties.spec);
  const dir = mkdtempSync(join(tmpdir(), `crd-${name}-`));
  writeFileSync(join(dir, "crd.yaml"), stringify(crd));
  const env = await TestEnv.start({ verbose: false, crdDirectoryPaths: [dir] });
  const client = new Client(env.kubeConfig, { userAgent: "bench", maxSockets: 64 });
  try {
    const pid = env.apiServer?.pid === undefined ? undefined : await findChild(env.apiServer.pid, "kube-apiserver");
    if (pid === undefined) throw new Error("kube-apiserver's pid not found");
    await createNamespaces(client, 4);
    const objs = new Array<KubeObject>(n);
    await forEachLimit(n, 48, async (i) => {
      const p = placement(i, 4);
      objs[i] = await client.create(CronJobResource, ourCronJob(p.namespace, p.name));
    });
    const at = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    const perWrite: string[] = [];
    for (let round = 0; round < rounds; round++) {
      await sleep(5000); // the CRD's install and the creates settle
      const before = cpuSeconds(pid) ?? NaN;
      await forEachLimit(n, 48, async (i) => {
        const o = objs[i]!;
        objs[i] = await client.updateStatus(CronJobResource, {
          ...o,
          status: {
            active: [
              {
                apiVersion: "batch/v1",
                kind: "Job",
                name: `${o.metadata?.name}-${round}`,
                namespace: o.metadata?.namespace,
              },
            ],
            activeCount: 1,
            lastScheduleTime: at,
          },
        });
      });
      perWrite.push(((((cpuSeconds(pid) ?? NaN) - before) * 1000) / n).toFixed(2));
    }
    console.log(`${name}: kube-apiserver CPU ms per status PUT, ${n} CronJobs, by round: ${perWrite.join(" ")}`);
  } finally {
    client.close();
    await env.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
