// kubectl cron migrate / unmigrate: the conversion from the built-in CronJob (pure), the handover state machine
// against an in-memory API (idempotent at every step: crash it after any write and run it again), dry-run
// output, and shell completion. The handover runs for both built-in versions: batch/v1beta1 with 1.20's
// controller and batch/v1 with the v2 controller's Jobs; kubectl-cron-migrate-v1.test.ts takes batch/v1 end to
// end, through the plugin's entry point, on objects recorded from a 1.32 apiserver.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parse, parseAllDocuments } from "yaml";
import {
  CronJobResource,
  GROUP,
  INSTANTIATE_ANNOTATION,
  K8S_SCHEDULED_TIMESTAMP_ANNOTATION,
  rfc3339InZone,
  RUN_NOW_ANNOTATION,
  SCHEDULED_AT_ANNOTATION,
  type CronJob,
  type Job,
} from "../../api/v1/index.ts";
import { APIError } from "../../runtime/errors.ts";
import { Kinds, type KubeObject, type ResourceKind } from "../../runtime/kinds.ts";
import { isObj } from "../../runtime/objects.ts";
import type { HandoverAPI } from "../../cmd/kubectl-cron/write/handoverapi.ts";
import { parseCommandLine } from "../../cmd/kubectl-cron/model/args.ts";
import {
  builtinCronJobKind,
  builtinJobSlot,
  type BuiltinCronJob,
  type BuiltinVersion,
} from "../../cmd/kubectl-cron/model/builtin.ts";
import { complete, formatCompletion, type CompletionSources } from "../../cmd/kubectl-cron/commands/completion.ts";
import {
  convertBuiltin,
  HANDOVER_ANNOTATION,
  MIGRATED_FROM_ANNOTATION,
  readMigratedFrom,
} from "../../cmd/kubectl-cron/model/convert.ts";
import { migrate, unmigrate, type HandoverOptions } from "../../cmd/kubectl-cron/write/handover.ts";
import { render } from "../../cmd/kubectl-cron/commands/migrate.ts";

/**
 * A built-in CronJob as kube-apiserver 1.20 (batch/v1beta1) or 1.28+ (batch/v1) returns it (templates carry
 * `creationTimestamp: null`). test/fixtures/builtin-v1 has one exactly as 1.32 stores it.
 */
function builtinAs(
  version: BuiltinVersion,
  name: string,
  o: Partial<BuiltinCronJob["spec"]> = {},
  meta: Partial<BuiltinCronJob["metadata"]> = {},
) {
  return {
    apiVersion: `batch/${version}`,
    kind: "CronJob",
    metadata: {
      name,
      namespace: "prod",
      uid: `uid-${name}`,
      labels: { team: "data" },
      annotations: {
        "kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"batch/${version}"}`,
        "example.com/owner": "alice",
        [RUN_NOW_ANNOTATION]: "2026-01-01T00:00:00Z",
      },
      ...meta,
    },
    spec: {
      schedule: "*/1 * * * *",
      concurrencyPolicy: "Forbid",
      suspend: false,
      startingDeadlineSeconds: 30,
      successfulJobsHistoryLimit: 5,
      failedJobsHistoryLimit: 2,
      jobTemplate: {
        metadata: { creationTimestamp: null, labels: { app: name } },
        spec: {
          backoffLimit: 2,
          template: {
            metadata: { creationTimestamp: null, annotations: { "example.com/pod": "yes" } },
            spec: {
              restartPolicy: "Never",
              containers: [{ name: "c", image: "busybox:1.36", command: ["date"] }],
            },
          },
        },
      },
      ...o,
    },
  } as BuiltinCronJob;
}

const builtin = (name: string, o?: Partial<BuiltinCronJob["spec"]>, meta?: Partial<BuiltinCronJob["metadata"]>) =>
  builtinAs("v1beta1", name, o, meta);

describe("kubectl cron migrate: conversion from the built-in CronJob", () => {
  it("carries schedule, every policy and limit, the whole jobTemplate, and the user's metadata", () => {
    const c = convertBuiltin(builtin("backup"), "batch/v1beta1");
    assert.ok(c.ok, c.ok ? "" : c.reason);
    const { metadata, spec } = c.cronJob;
    assert.deepEqual(metadata.labels, { team: "data" });
    // kubectl's copy of the other kind and a run-now request (it would run at creation) are not carried.
    assert.deepEqual(Object.keys(metadata.annotations ?? {}).sort(), [
      HANDOVER_ANNOTATION,
      MIGRATED_FROM_ANNOTATION,
      "example.com/owner",
    ]);
    assert.deepEqual(readMigratedFrom(metadata.annotations), {
      apiVersion: "batch/v1beta1",
      namespace: "prod",
      name: "backup",
      uid: "uid-backup",
      suspend: false,
    });
    assert.deepEqual(spec, {
      schedule: "*/1 * * * *",
      startingDeadlineSeconds: 30,
      concurrencyPolicy: "Forbid",
      suspend: true, // until the handover ends
      successfulJobsHistoryLimit: 5,
      failedJobsHistoryLimit: 2,
      jobTemplate: {
        metadata: { labels: { app: "backup" } },
        spec: {
          backoffLimit: 2,
          template: {
            metadata: { annotations: { "example.com/pod": "yes" } },
            spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox:1.36", command: ["date"] }] },
          },
        },
      },
    });
  });

  it("batch/v1 with timeZone, and a spec with only the required fields", () => {
    const v1 = builtin("nightly", { schedule: "30 2 * * *", timeZone: "Europe/Berlin" });
    v1.apiVersion = "batch/v1";
    const c = convertBuiltin(v1, "batch/v1");
    assert.ok(c.ok);
    assert.equal(c.cronJob.spec.timeZone, "Europe/Berlin");
    assert.equal(readMigratedFrom(c.cronJob.metadata.annotations)?.apiVersion, "batch/v1");
    const bare = builtin("bare");
    bare.spec = { schedule: "@hourly", jobTemplate: bare.spec.jobTemplate! };
    const b = convertBuiltin(bare, "batch/v1beta1");
    assert.ok(b.ok);
    assert.deepEqual(Object.keys(b.cronJob.spec).sort(), ["jobTemplate", "schedule", "suspend"]);
  });

  it("refuses, with the field and the reason, what this kind does not accept", () => {
    for (const [name, spec, re] of [
      ["feb30", { schedule: "0 0 30 2 *" }, /spec\.schedule: Invalid value: "0 0 30 2 \*": never fires/],
      ["tz-prefix", { schedule: "TZ=Europe/Berlin 0 * * * *" }, /spec\.schedule: Invalid value: "TZ=Europe\/Berlin/],
      ["badzone", { timeZone: "Mars/Olympus" }, /spec\.timeZone: Invalid value: "Mars\/Olympus"/],
      ["x".repeat(53), {}, /metadata\.name: "x{53}" has 53 characters; this kind allows at most 52/],
    ] as const) {
      const c = convertBuiltin(builtin(name, spec), "batch/v1beta1");
      assert.ok(!c.ok, name);
      assert.match(c.reason, re);
    }
    assert.ok(convertBuiltin(builtin("y".repeat(52)), "batch/v1beta1").ok);
  });

  it("reads a built-in Job's slot from its annotation, else from its name (Unix minutes)", () => {
    const job = (name: string, annotations: Record<string, string> = {}): Job => ({ metadata: { name, annotations } });
    assert.equal(builtinJobSlot(job("backup-29432160"), "backup")?.toISOString(), "2025-12-17T00:00:00.000Z");
    assert.equal(
      builtinJobSlot(
        job("backup-29432160", { "batch.kubernetes.io/cronjob-scheduled-timestamp": "2025-12-17T01:00:00+01:00" }),
        "backup",
      )?.toISOString(),
      "2025-12-17T00:00:00.000Z",
    );
    // The old controller (1.20) names its Jobs after the Unix seconds.
    assert.equal(builtinJobSlot(job("backup-1765929600"), "backup")?.toISOString(), "2025-12-17T00:00:00.000Z");
    assert.equal(builtinJobSlot(job("backup-manual-x7"), "backup"), undefined);
    // A run `kubectl create job --from=cronjob/backup backup-2026112410` made has no slot, whatever its name.
    assert.equal(builtinJobSlot(job("backup-2026112410", { [INSTANTIATE_ANNOTATION]: "manual" }), "backup"), undefined);
    assert.equal(builtinJobSlot(job("other-29432160"), "backup"), undefined);
  });
});

const kindKey = (rk: ResourceKind) => `${rk.group}/${rk.plural}`;

function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/**
 * The API as the handover sees it: objects by kind (both built-in versions are the same objects), merge
 * patches of object or status, AlreadyExists, UID preconditions. `crashAfter` makes the n-th write throw, as
 * if the plugin died there.
 */
class FakeAPI implements HandoverAPI {
  objects = new Map<string, KubeObject>();
  writes: string[] = [];
  crashAfter: number | undefined;
  refuse: ((obj: KubeObject) => APIError | undefined) | undefined;
  private uids = 0;

  private k(rk: ResourceKind, ns: string, name: string) {
    return `${kindKey(rk)}/${ns}/${name}`;
  }
  private write(what: string) {
    if (this.crashAfter !== undefined && this.writes.length >= this.crashAfter) throw new Error(`crash before ${what}`);
    this.writes.push(what);
  }
  put(rk: ResourceKind, obj: KubeObject) {
    const m = obj.metadata!;
    m.uid ??= `uid-${++this.uids}`;
    this.objects.set(this.k(rk, m.namespace!, m.name!), structuredClone(obj));
  }
  peek<T>(rk: ResourceKind, ns: string, name: string): T {
    return structuredClone(this.objects.get(this.k(rk, ns, name))) as T;
  }
  async get<T extends KubeObject>(rk: ResourceKind, ns: string, name: string) {
    const o = this.objects.get(this.k(rk, ns, name));
    return o ? (structuredClone(o) as T) : undefined;
  }
  async list<T extends KubeObject>(rk: ResourceKind, o: { namespace?: string; labelSelector?: string }) {
    const [lk, lv] = (o.labelSelector ?? "").split("=");
    return [...this.objects.entries()]
      .filter(([k]) => k.startsWith(`${kindKey(rk)}/${o.namespace ? `${o.namespace}/` : ""}`))
      .map(([, v]) => structuredClone(v) as T)
      .filter((v) => !lk || v.metadata?.labels?.[lk] === lv);
  }
  async create<T extends KubeObject>(rk: ResourceKind, obj: T, o: { dryRun?: boolean } = {}) {
    const m = obj.metadata!;
    if (this.objects.has(this.k(rk, m.namespace!, m.name!)))
      throw new APIError(409, "AlreadyExists", `${rk.plural} "${m.name}" already exists`);
    const refusal = this.refuse?.(obj);
    if (refusal) throw refusal;
    if (o.dryRun) return structuredClone(obj);
    this.write(`create ${m.name}`);
    this.put(rk, { ...structuredClone(obj), metadata: { ...m, creationTimestamp: "2026-01-01T00:00:00Z" } });
    return this.peek<T>(rk, m.namespace!, m.name!);
  }
  async mergePatch<T extends KubeObject>(
    rk: ResourceKind,
    ns: string,
    name: string,
    patch: unknown,
    o: { status?: boolean } = {},
  ) {
    const cur = this.objects.get(this.k(rk, ns, name));
    if (!cur) throw new APIError(404, "NotFound", `${name} not found`);
    this.write(`patch ${rk.group || "core"}/${name}${o.status ? "/status" : ""} ${JSON.stringify(patch)}`);
    const p = patch as Record<string, unknown>;
    // The status subresource takes only status; the object itself everything but status.
    const scoped = o.status ? { status: p.status } : { ...p, status: undefined };
    this.objects.set(this.k(rk, ns, name), mergePatch(cur, JSON.parse(JSON.stringify(scoped))) as KubeObject);
    return this.peek<T>(rk, ns, name);
  }
  async replaceMembers<T extends KubeObject>(
    rk: ResourceKind,
    ns: string,
    name: string,
    members: { path: string; value: unknown }[],
  ) {
    const cur = this.objects.get(this.k(rk, ns, name));
    if (!cur) throw new APIError(404, "NotFound", `${name} not found`);
    this.write(`replace ${rk.group || "core"}/${name} ${members.map((m) => m.path).join(",")}`);
    const next = structuredClone(cur) as Record<string, any>;
    for (const { path, value } of members) {
      const keys = path.split("/").slice(1);
      let at = next;
      for (const k of keys.slice(0, -1)) at = at[k] ??= {};
      at[keys.at(-1)!] = structuredClone(value);
    }
    this.objects.set(this.k(rk, ns, name), next as KubeObject);
    return this.peek<T>(rk, ns, name);
  }
  async deleteOrphaning(rk: ResourceKind, ns: string, name: string, uid: string) {
    const cur = this.objects.get(this.k(rk, ns, name));
    if (!cur) throw new APIError(404, "NotFound", `${name} not found`);
    if (cur.metadata?.uid !== uid) throw new APIError(409, "Conflict", "uid precondition failed");
    this.write(`delete ${name}`);
    this.objects.delete(this.k(rk, ns, name));
  }
  async listJobs(ns: string) {
    return this.list<Job>(Kinds.Job, { namespace: ns });
  }
  /** Everything but the write log: what the cluster holds. */
  snapshot() {
    return JSON.stringify([...this.objects.entries()].sort());
  }
}

/**
 * A Job of the built-in controller for a slot: 1.20's (batch/v1beta1) names it after the slot's Unix seconds
 * and annotates nothing; the v2 controller (batch/v1) names it after the Unix minutes, annotates the slot in
 * the CronJob's zone (1.28+) and sets blockOwnerDeletion.
 */
function builtinJobName(version: BuiltinVersion, cronJobName: string, slot: string): string {
  return `${cronJobName}-${Date.parse(slot) / (version === "v1" ? 60_000 : 1000)}`;
}

function builtinJob(version: BuiltinVersion, cronJob: BuiltinCronJob, slot: string): Job {
  const v2 = version === "v1";
  return {
    metadata: {
      name: builtinJobName(version, cronJob.metadata.name!, slot),
      namespace: cronJob.metadata.namespace!,
      ...(v2
        ? {
            annotations: {
              [K8S_SCHEDULED_TIMESTAMP_ANNOTATION]: rfc3339InZone(new Date(slot), cronJob.spec.timeZone ?? "UTC"),
            },
          }
        : {}),
      ownerReferences: [
        {
          apiVersion: `batch/${version}`,
          kind: "CronJob",
          name: cronJob.metadata.name!,
          uid: cronJob.metadata.uid!,
          controller: true,
          ...(v2 ? { blockOwnerDeletion: true } : {}),
        },
      ],
    },
  };
}

const T0 = "2026-01-01T10:00:00Z";

for (const version of ["v1beta1", "v1"] as const) {
  const BUILTIN = builtinCronJobKind(version);
  const builtin = (name: string, o?: Partial<BuiltinCronJob["spec"]>, meta?: Partial<BuiltinCronJob["metadata"]>) =>
    builtinAs(version, name, o, meta);

  function cluster(...originals: BuiltinCronJob[]): FakeAPI {
    const api = new FakeAPI();
    for (const o of originals) {
      o.status = { lastScheduleTime: T0 };
      api.put(BUILTIN, o);
    }
    return api;
  }

  function options(settles: number[] = []): HandoverOptions {
    return {
      builtinVersion: version,
      dryRun: false,
      settleSeconds: 15,
      sleep: async (ms) => void settles.push(ms),
    };
  }

  async function listOriginals(api: FakeAPI) {
    return api.list<BuiltinCronJob>(BUILTIN, { namespace: "prod" });
  }

  describe(`kubectl cron migrate: the handover (batch/${version})`, () => {
    it("creates ours, suspends the original, waits once, carries the newest slot, then resumes ours", async () => {
      const a = builtin("a");
      const b = builtin("b");
      const api = cluster(a, b);
      // The built-in controller created a Job for 10:01 just before the suspension: newer than its status.
      api.put(Kinds.Job, builtinJob(version, api.peek(BUILTIN, "prod", "a"), "2026-01-01T10:01:00Z"));
      // A Job of a deleted built-in CronJob "b" with the same name: not b's.
      api.put(Kinds.Job, builtinJob(version, b, "2026-01-01T10:05:00Z"));
      const job = api.peek<Job>(Kinds.Job, "prod", builtinJobName(version, "b", "2026-01-01T10:05:00Z"));
      job.metadata!.ownerReferences![0]!.uid = "uid-of-an-older-b";
      api.put(Kinds.Job, job);

      const settles: number[] = [];
      const reports = await migrate(api, await listOriginals(api), options(settles));
      assert.deepEqual(
        reports.map((r) => [r.name, r.outcome]),
        [
          ["a", "migrated"],
          ["b", "migrated"],
        ],
      );
      assert.deepEqual(settles, [15_000], "one settle for the whole batch");
      const oursA = api.peek<CronJob>(CronJobResource, "prod", "a");
      assert.equal(oursA.spec.suspend, false);
      assert.equal(oursA.status?.lastScheduleTime, "2026-01-01T10:01:00Z");
      assert.equal(oursA.metadata.annotations?.[HANDOVER_ANNOTATION], undefined);
      assert.equal(api.peek<CronJob>(CronJobResource, "prod", "b").status?.lastScheduleTime, T0);
      assert.equal(api.peek<BuiltinCronJob>(BUILTIN, "prod", "a").spec.suspend, true);
      // Order per object: create (suspended), suspend the original, then status, then resume.
      const forA = api.writes.filter((w) => / a|\/a[ /]/.test(w));
      assert.deepEqual(
        forA.map((w) => w.split(" ")[0] + " " + w.split(" ")[1]),
        [
          "create a",
          "patch batch/a",
          "patch batch.tutorial.kubebuilder.io/a/status",
          "patch batch.tutorial.kubebuilder.io/a",
        ],
      );

      // Running it again changes nothing.
      const before = api.writes.length;
      const again = await migrate(api, await listOriginals(api), options());
      assert.deepEqual(
        again.map((r) => r.outcome),
        ["already migrated", "already migrated"],
      );
      assert.equal(api.writes.length, before);
    });

    it("crashing after any write and running it again ends in the same state, with one create", async () => {
      const reference = cluster(builtin("a"), builtin("b", { suspend: true }));
      await migrate(reference, await listOriginals(reference), options());
      const total = reference.writes.length;
      assert.ok(total >= 6, `writes: ${reference.writes.join("\n")}`);
      for (let crashAt = 0; crashAt < total; crashAt++) {
        const api = cluster(builtin("a"), builtin("b", { suspend: true }));
        api.crashAfter = crashAt;
        await assert.rejects(migrate(api, await listOriginals(api), options()), /crash before/);
        api.crashAfter = undefined;
        const reports = await migrate(api, await listOriginals(api), options());
        assert.ok(
          reports.every((r) => r.outcome === "migrated" || r.outcome === "already migrated"),
          JSON.stringify(reports),
        );
        assert.equal(api.snapshot(), reference.snapshot(), `crash after ${crashAt} writes`);
        assert.equal(api.writes.filter((w) => w.startsWith("create a")).length, 1);
      }
      // b was suspended before: ours stays suspended, and the record says so for the give-back.
      const b = reference.peek<CronJob>(CronJobResource, "prod", "b");
      assert.equal(b.spec.suspend, true);
      assert.equal(readMigratedFrom(b.metadata.annotations)?.suspend, true);
    });

    it("refuses per object, changing nothing for it, and carries on with the others", async () => {
      const api = cluster(
        builtin("taken"),
        builtin("feb30", { schedule: "0 0 30 2 *" }),
        builtin("webhook"),
        builtin("ok"),
      );
      api.put(CronJobResource, {
        apiVersion: `${GROUP}/v1`,
        kind: "CronJob",
        metadata: { name: "taken", namespace: "prod" },
        spec: { schedule: "@daily" },
      });
      api.refuse = (obj) =>
        obj.metadata?.name === "webhook"
          ? new APIError(
              422,
              "Invalid",
              'admission webhook "vcronjob-v1.kb.io" denied the request: spec.jobTemplate.spec.completions: Invalid value: -5',
            )
          : undefined;
      const reports = await migrate(api, await listOriginals(api), options());
      const by = Object.fromEntries(reports.map((r) => [r.name, r]));
      assert.equal(by.ok?.outcome, "migrated");
      assert.match(
        by.taken?.reason ?? "",
        new RegExp(`already exists and was not migrated from this batch/${version} CronJob`),
      );
      assert.match(by.feb30?.reason ?? "", /never fires/);
      assert.match(by.webhook?.reason ?? "", /denied the request: spec\.jobTemplate\.spec\.completions/);
      for (const name of ["taken", "feb30", "webhook"]) {
        assert.equal(api.peek<BuiltinCronJob>(BUILTIN, "prod", name).spec.suspend, false, name);
        assert.ok(!api.writes.some((w) => w.includes(`/${name} `) || w === `create ${name}`), name);
      }
      const args = parseCommandLine(["migrate"]);
      assert.ok(args !== "help");
      const out = render(reports, args, version, "");
      assert.equal(out.refused, true);
      assert.match(out.text, /^prod\/feb30: refused: spec\.schedule: Invalid value: "0 0 30 2 \*"/m);
      assert.match(out.text, new RegExp(`^prod/ok: migrated from batch/${version}\\n {2}create `, "m"));
    });

    it("--dry-run prints the YAML it would create and the changes, and writes nothing", async () => {
      const api = cluster(builtin("a"), builtin("z".repeat(53)));
      const before = api.snapshot();
      const reports = await migrate(api, await listOriginals(api), { ...options(), dryRun: true });
      assert.equal(api.writes.length, 0);
      assert.equal(api.snapshot(), before);
      const args = parseCommandLine(["migrate", "--dry-run"]);
      assert.ok(args !== "help");
      const out = render(reports, args, version, "");
      const docs = parseAllDocuments(out.text)
        .map((d) => d.toJS() as CronJob | null)
        .filter((d) => d);
      assert.deepEqual(
        docs.map((d) => [d!.kind, d!.metadata.name, d!.spec.suspend]),
        [["CronJob", "a", true]],
      );
      assert.match(out.text, new RegExp(`^# prod/a: would migrate from batch/${version}$`, "m"));
      assert.match(out.text, new RegExp(`^# {3}suspend batch/${version} CronJob prod/a$`, "m"));
      assert.match(out.text, /^# {3}resume cronjobs\.batch\.tutorial\.kubebuilder\.io prod\/a$/m);
      assert.match(out.text, /^# prod\/z{53}: refused: metadata\.name/m);
      // -o yaml: the report itself.
      const yamlArgs = parseCommandLine(["migrate", "--dry-run", "-o", "yaml"]);
      assert.ok(yamlArgs !== "help");
      const report = parse(JSON.stringify(render(reports, yamlArgs, version, "").json));
      assert.equal(report.items[0].object.metadata.name, "a");
    });
  });

  describe(`kubectl cron unmigrate: the give-back (batch/${version})`, () => {
    async function migrated(...originals: BuiltinCronJob[]) {
      const api = cluster(...originals);
      await migrate(api, await listOriginals(api), options());
      return api;
    }
    function ourJob(api: FakeAPI, name: string, slot: string) {
      const cj = api.peek<CronJob>(CronJobResource, "prod", name);
      api.put(Kinds.Job, {
        metadata: {
          name: `${name}-${Date.parse(slot) / 1000}`,
          namespace: "prod",
          annotations: { [SCHEDULED_AT_ANNOTATION]: slot },
          ownerReferences: [
            { apiVersion: `${GROUP}/v1`, kind: "CronJob", name, uid: cj.metadata.uid!, controller: true },
          ],
        },
      });
    }
    const ours = async (api: FakeAPI) => api.list<CronJob>(CronJobResource, { namespace: "prod" });

    it("suspends ours, carries our newest slot into the original's status, resumes it; twice changes nothing", async () => {
      const api = await migrated(builtin("a"), builtin("b", { suspend: true }));
      ourJob(api, "a", "2026-01-01T10:07:00Z");
      const settles: number[] = [];
      const reports = await unmigrate(api, await ours(api), { ...options(settles), settleSeconds: 5, delete: false });
      assert.deepEqual(
        reports.map((r) => r.outcome),
        ["given back", "given back"],
      );
      assert.deepEqual(settles, [5_000]);
      const a = api.peek<BuiltinCronJob>(BUILTIN, "prod", "a");
      assert.equal(a.spec.suspend, false);
      assert.equal(a.status?.lastScheduleTime, "2026-01-01T10:07:00Z");
      assert.equal(api.peek<BuiltinCronJob>(BUILTIN, "prod", "b").spec.suspend, true, "b was suspended before");
      const oursA = api.peek<CronJob>(CronJobResource, "prod", "a");
      assert.equal(oursA.spec.suspend, true);
      assert.equal(oursA.metadata.annotations?.[HANDOVER_ANNOTATION], "returned");

      const before = api.writes.length;
      const again = await unmigrate(api, await ours(api), { ...options(), delete: false });
      assert.deepEqual(
        again.map((r) => r.outcome),
        ["already given back", "already given back"],
      );
      assert.equal(api.writes.length, before);

      // Taken over again later: ours is replaced from the original's current spec (a field it dropped goes too)
      // and resumed.
      const changed = api.peek<BuiltinCronJob>(BUILTIN, "prod", "a");
      delete changed.spec.startingDeadlineSeconds;
      delete (changed.spec.jobTemplate!.spec as Record<string, unknown>).backoffLimit;
      api.put(BUILTIN, changed);
      const re = await migrate(api, await listOriginals(api), options());
      const retaken = api.peek<CronJob>(CronJobResource, "prod", "a");
      assert.equal(retaken.spec.startingDeadlineSeconds, undefined);
      assert.equal((retaken.spec.jobTemplate.spec as Record<string, unknown>).backoffLimit, undefined);
      assert.deepEqual(
        re.map((r) => r.outcome),
        ["migrated", "migrated"],
      );
      assert.equal(api.peek<CronJob>(CronJobResource, "prod", "a").spec.suspend, false);
      assert.equal(api.peek<BuiltinCronJob>(BUILTIN, "prod", "a").spec.suspend, true);

      // --delete removes ours (its Jobs are orphaned, not deleted) and leaves the original running.
      const del = await unmigrate(api, await ours(api), { ...options(), delete: true });
      assert.deepEqual(
        del.map((r) => r.outcome),
        ["given back", "given back"],
      );
      assert.deepEqual(await ours(api), []);
      assert.equal(api.peek<BuiltinCronJob>(BUILTIN, "prod", "a").spec.suspend, false);
    });

    it("crashing after any write and running it again ends in the same state", async () => {
      const setup = async () => {
        const api = await migrated(builtin("a"));
        ourJob(api, "a", "2026-01-01T10:07:00Z");
        api.writes = [];
        return api;
      };
      for (const del of [false, true]) {
        const reference = await setup();
        await unmigrate(reference, await ours(reference), { ...options(), delete: del });
        for (let crashAt = 0; crashAt < reference.writes.length; crashAt++) {
          const api = await setup();
          api.crashAfter = crashAt;
          await assert.rejects(unmigrate(api, await ours(api), { ...options(), delete: del }), /crash before/);
          api.crashAfter = undefined;
          await unmigrate(api, await ours(api), { ...options(), delete: del });
          assert.equal(api.snapshot(), reference.snapshot(), `delete=${del}, crash after ${crashAt} writes`);
        }
      }
    });

    it("refuses a CronJob migrate did not create, and one whose original is gone", async () => {
      const api = await migrated(builtin("a"));
      api.put(CronJobResource, {
        apiVersion: `${GROUP}/v1`,
        kind: "CronJob",
        metadata: { name: "native", namespace: "prod" },
        spec: { schedule: "@daily" },
      });
      api.objects.delete(`batch/cronjobs/prod/a`);
      const reports = await unmigrate(api, await ours(api), { ...options(), delete: true });
      const by = Object.fromEntries(reports.map((r) => [r.name, r]));
      assert.match(by.native?.reason ?? "", /was not created by kubectl cron migrate/);
      assert.match(
        by.a?.reason ?? "",
        new RegExp(`the original batch/${version} CronJob prod/a \\(uid uid-a\\) no longer exists`),
      );
      assert.equal((await ours(api)).length, 2, "nothing deleted");
    });
  });
}

describe("kubectl cron: shell completion (kubectl_complete-cron)", () => {
  const asked: string[] = [];
  const sources: CompletionSources = {
    async cronJobNames(kind, namespace) {
      asked.push(`${kind}:${namespace ?? "(context)"}`);
      return kind === "ours" ? ["backup", "billing", "report"] : ["legacy-a", "legacy-b"];
    },
    async groupNames(namespace) {
      asked.push(`groups:${namespace ?? "(context)"}`);
      return ["backups", "reports"];
    },
    async namespaces() {
      return ["default", "prod"];
    },
    contexts: () => ["local", "prod"],
  };
  const values = async (...words: string[]) => (await complete(words, sources)).candidates.map((c) => c.split("\t")[0]);

  it("completes commands, flags of the command, flag values and CronJob names of the namespace", async () => {
    assert.deepEqual(await values(""), [
      "run",
      "suspend",
      "resume",
      "next",
      "history",
      "list",
      "why",
      "groups",
      "instances",
      "backfill",
      "migrate",
      "unmigrate",
      "dashboard",
    ]);
    // instances takes no NAME either: its flags, never CronJob names.
    assert.deepEqual(await values("instances", "b"), []);
    assert.deepEqual(await values("instances", "--a"), ["--all-namespaces"]);
    // The dashboard takes no NAME: its flags, never CronJob names.
    assert.deepEqual(await values("dashboard", "--re"), ["--read-only", "--request-timeout"]);
    assert.deepEqual(await values("dashboard", "b"), []);
    assert.deepEqual(await values("why", "b"), ["backup", "billing"]);
    assert.deepEqual(await values("why", "backup", "--s"), ["--selector", "--slot"]);
    assert.deepEqual(await values("backfill", "b"), ["backup", "billing"]);
    assert.deepEqual(await values("why", "b"), ["backup", "billing"]);
    assert.deepEqual(await values("why", "--s"), ["--selector", "--slot"]);
    assert.deepEqual(await values("backfill", "backup", "--c"), ["--cancel", "--context"]);
    assert.deepEqual(await values("r"), ["run", "resume"]);
    assert.deepEqual(await values("run", "b"), ["backup", "billing"]);
    assert.deepEqual(await values("migrate", "-n", "prod", ""), ["legacy-a", "legacy-b"]);
    assert.deepEqual(asked.slice(-2), ["ours:(context)", "builtin:prod"]);
    assert.deepEqual(await values("unmigrate", "--d"), ["--dry-run", "--delete"]);
    assert.deepEqual(await values("next", "--c"), ["--count", "--context"]);
    assert.deepEqual(await values("next", "-n", ""), ["default", "prod"]);
    assert.deepEqual(await values("list", "-o", ""), ["json", "yaml"]);
    assert.deepEqual(await values("run", "--context", "p"), ["prod"]);
    assert.deepEqual(await values("groups", "-n", "prod", "b"), ["backups"]);
    assert.deepEqual(asked.at(-1), "groups:prod");
    assert.deepEqual(await values("groups", "--a"), ["--all-namespaces"]);
    assert.deepEqual(await values("groups", "-A", ""), [], "no NAME with -A");
    assert.deepEqual(await values("migrate", "-A", ""), [], "no NAME with -A");
    assert.deepEqual(await values("run", "backup", ""), [], "one NAME only");
    assert.equal(
      formatCompletion(await complete(["r"], sources)),
      "run\trequest one run now and wait for its Job\nresume\tschedule again\n:4\n",
    );
    assert.equal((await complete(["run", "--kubeconfig", ""], sources)).directive, 0, "file names for --kubeconfig");
  });
});
