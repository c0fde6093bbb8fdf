// End to end: `kubectl cron migrate` and `unmigrate` on a local cluster with a real node, where the built-in
// CronJob controller of kube-controller-manager (batch/v1beta1 on 1.20, batch/v1 from 1.21) and the operator
// (deployed from its image) both run. Built-in CronJobs firing every minute run a slot or two, are taken over, run a slot as ours,
// are given back and run again as the built-in's; across both kinds every slot has exactly one Job.
// Needs root (the node); `make image-build` first.
import assert from "node:assert/strict";
import { it } from "node:test";
import { eventually } from "../eventually.ts";
import type { K8sObject } from "./cluster-tools.ts";
import { SCHEDULED_AT, e2eDescribe, e2eSuite } from "./suite.ts";
import { builtinCronJobVersion, serverVersion } from "../versions.ts";

const NS = "migrate-e2e";
const NAMES = ["every-minute", "forbid"];
const MINUTE = 60_000;
/** How often eventually() polls: the slots it waits for are a minute apart. */
const POLL_MS = 2000;

/**
 * The slot a Job ran for: ours from its annotation, the built-in's from its name: 1.20's old controller names
 * them <cronjob>-<Unix seconds> (10 digits, as ours are named), the v2 controller (the default from 1.21, the
 * only one from 1.23) <cronjob>-<Unix minutes> (8 digits until 2160). Not from owner references: unmigrate
 * --delete orphans ours'.
 */
function slotOf(job: K8sObject): { cronJob: string; kind: "ours" | "builtin"; slot: number } | undefined {
  const m = /^(.*)-(\d+)$/.exec(job.metadata.name);
  if (!m) return undefined;
  const annotated = job.metadata.annotations?.[SCHEDULED_AT];
  if (annotated) return { cronJob: m[1]!, kind: "ours", slot: Date.parse(annotated) };
  return { cronJob: m[1]!, kind: "builtin", slot: Number(m[2]) * (m[2]!.length >= 10 ? 1000 : MINUTE) };
}

e2eDescribe(
  "end to end: kubectl cron migrate/unmigrate between the built-in CronJob and ours",
  { timeout: 1_500_000 },
  () => {
    /** The built-in CronJob's version the cluster prefers (what the plugin migrates from and gives back to). */
    let builtin: "v1" | "v1beta1";
    const suite = e2eSuite({
      namespace: NS,
      pollMs: POLL_MS,
      logLines: 30,
      setUp: async () => {
        builtin = builtinCronJobVersion(await serverVersion(suite.cluster.kubeConfig));
      },
    });
    // The plugin as a user runs it: the executable, with KUBECONFIG (each call names the namespace).
    const { kubectl, list, cronJob, kubectlCron: plugin } = suite;

    async function slots() {
      return (await list("jobs", NS)).map(slotOf).filter((s) => s !== undefined);
    }

    it("takes over built-in CronJobs firing every minute and gives them back: every slot has exactly one Job", async () => {
      for (const name of NAMES) {
        const spec = {
          schedule: "*/1 * * * *",
          concurrencyPolicy: name === "forbid" ? "Forbid" : "Allow",
          // Keep every Job: the test counts them all.
          successfulJobsHistoryLimit: 100,
          failedJobsHistoryLimit: 100,
        };
        const manifest = cronJob({ name, labels: { e2e: "migrate" } }, spec, "date", `batch/${builtin}`);
        await kubectl(["apply", "-f", "-"], JSON.stringify(manifest));
      }
      // The built-in controller runs a slot or two first.
      await eventually(
        "a Job of each built-in CronJob",
        async () => {
          const s = await slots();
          return NAMES.every((n) => s.some((x) => x.cronJob === n && x.kind === "builtin"));
        },
        180_000,
        undefined,
        POLL_MS,
      );

      const dry = await plugin(["migrate", "-n", NS, "-l", "e2e=migrate", "--dry-run"]);
      assert.equal(dry.code, 0, dry.stderr);
      assert.match(dry.stdout, new RegExp(`^# ${NS}/every-minute: would migrate from batch/${builtin}$`, "m"));
      assert.equal((await list("cronjobs.batch.tutorial.kubebuilder.io", NS)).length, 0, "--dry-run created nothing");

      const migrated = await plugin(["migrate", "-n", NS, "-l", "e2e=migrate"]);
      assert.equal(migrated.code, 0, `${migrated.stdout}${migrated.stderr}`);
      for (const name of NAMES)
        assert.match(migrated.stdout, new RegExp(`^${NS}/${name}: migrated from batch/${builtin}$`, "m"));
      const again = await plugin(["migrate", "-n", NS, "-l", "e2e=migrate"]);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(again.stdout.match(/already migrated/g)?.length, NAMES.length, again.stdout);
      const migratedAt = Date.now();

      // A slot as ours: what is at stake is each handover's boundary, where a slot could run twice or not at all.
      await eventually(
        "a Job of each of ours",
        async () => {
          const s = await slots();
          return NAMES.every((n) => s.some((x) => x.cronJob === n && x.kind === "ours"));
        },
        240_000,
        undefined,
        POLL_MS,
      );
      const ours = await slots();
      assert.ok(
        ours.every((x) => x.kind === "ours" || x.slot < migratedAt),
        "no built-in Job for a slot after the migration",
      );

      const back = await plugin(["unmigrate", "-n", NS, "--delete"]);
      assert.equal(back.code, 0, `${back.stdout}${back.stderr}`);
      for (const name of NAMES)
        assert.match(back.stdout, new RegExp(`^${NS}/${name}: given back to batch/${builtin}$`, "m"));
      const givenBackAt = Date.now();
      await eventually(
        "a Job of each built-in CronJob after the give-back",
        async () => {
          const s = await slots();
          return NAMES.every((n) =>
            s.some((x) => x.cronJob === n && x.kind === "builtin" && x.slot > givenBackAt - MINUTE),
          );
        },
        180_000,
        undefined,
        POLL_MS,
      );

      // Stop both kinds, let the built-in controller finish, then count: its status names its newest Job's slot (it
      // writes lastScheduleTime in the sync that made the Job), so a create in flight is waited for.
      for (const name of NAMES) {
        await kubectl(["patch", "cronjobs.batch", name, "-n", NS, "--type=merge", "-p", '{"spec":{"suspend":true}}']);
      }
      let unsettled = "";
      await eventually(
        "the built-in CronJobs' lastScheduleTime at their newest Job's slot",
        async () => {
          const s = await slots();
          const builtins = await list(`cronjobs.${builtin}.batch`, NS);
          unsettled = NAMES.filter((name) => {
            const newest = Math.max(...s.filter((x) => x.cronJob === name && x.kind === "builtin").map((x) => x.slot));
            const cj = builtins.find((c) => c.metadata.name === name);
            return Date.parse(String(cj?.status?.lastScheduleTime)) !== newest;
          }).join(", ");
          return unsettled === "";
        },
        60_000,
        () => `; not yet: ${unsettled}`,
        POLL_MS,
      );
      const all = await slots();
      for (const name of NAMES) {
        const mine = all.filter((x) => x.cronJob === name).sort((a, b) => a.slot - b.slot);
        const bySlot = new Map<number, string[]>();
        for (const x of mine) bySlot.set(x.slot, [...(bySlot.get(x.slot) ?? []), x.kind]);
        const dupes = [...bySlot].filter(([, kinds]) => kinds.length > 1);
        assert.deepEqual(dupes, [], `${name}: slots with more than one Job`);
        const first = mine[0]!.slot;
        const last = mine.at(-1)!.slot;
        const missing: string[] = [];
        for (let t = first; t <= last; t += MINUTE) if (!bySlot.has(t)) missing.push(new Date(t).toISOString());
        assert.deepEqual(missing, [], `${name}: slots without a Job`);
        // Both kinds ran, in order: built-in, ours, built-in.
        const kinds = mine.map((x) => x.kind).filter((k, i, xs) => i === 0 || xs[i - 1] !== k);
        assert.deepEqual(kinds, ["builtin", "ours", "builtin"], `${name}: ${mine.map((x) => x.kind).join(",")}`);
      }
    });
  },
);
