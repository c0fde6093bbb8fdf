// The CronJob status write as a JSON patch (controllers/statuswriter.ts, runtime/jsonpatch.ts) against a real
// kube-apiserver: a patch that sets metadata.resourceVersion is conditional on it (a stale one gets 409 Conflict,
// also when the rest of the patch would apply to the newer object: the server does not re-read and retry it), a
// run's write sends only what changed (the record's new entry in front, its oldest removed) and leaves spec and
// other field managers' managedFields as stored, and an object deleted meanwhile is a 404 the writer takes as done.
// Integration only: what it proves is kube-apiserver's handling of the patch, which the fake only imitates.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type CronJob, CronJobResource as CronJobKind } from "../../../api/v1/index.ts";
import { CronJobReconciler } from "../../../controllers/cronjob_controller.ts";
import type { Remembered } from "../../../controllers/memory.ts";
import { loadedFrom } from "../../../controllers/pass.ts";
import { writeStatus } from "../../../controllers/statuswriter.ts";
import { TestEnv } from "../../../envtest/index.ts";
import type { Client, PatchType } from "../../../runtime/client.ts";
import { APIError, isConflict, isNotFound } from "../../../runtime/errors.ts";
import type { JSONPatchOperation } from "../../../runtime/jsonpatch.ts";
import { discardLogger } from "../../../runtime/log.ts";
import { canonical } from "../../../runtime/objects.ts";
import { ReconcileHarness } from "./harness.ts";

const NS = "status-patch";
const MIN = 60_000;
const ctx = () => ({ log: discardLogger, reconcileID: "status-patch", signal: new AbortController().signal });
const rvOp = (rv: string | undefined): JSONPatchOperation => ({
  op: "replace",
  path: "/metadata/resourceVersion",
  value: rv,
});
const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

describe("the status write as a JSON patch, on a real kube-apiserver", () => {
  let env: TestEnv;
  let h: ReconcileHarness<Client>;

  before(async () => {
    env = await TestEnv.start();
    h = await ReconcileHarness.create(env, NS, new Date().toISOString());
  });

  after(async () => {
    await h?.stop();
    await env?.stop();
  });

  it("a resourceVersion the patch sets is a precondition: stale, 409 (isConflict), not retried by the server", async () => {
    await h.createCronJob("pre", { schedule: "*/5 * * * *" });
    const read = await h.get("pre");
    const rv = read.metadata.resourceVersion;
    const first = await h.client.patchStatus<CronJob>(
      CronJobKind,
      NS,
      "pre",
      [rvOp(rv), { op: "add", path: "/status", value: { activeCount: 0 } }],
      "json",
    );
    assert.notEqual(first.metadata.resourceVersion, rv, "written");
    assert.deepEqual(first.status, { activeCount: 0 });
    // The same resourceVersion again: the object has changed since. The rest of the patch would apply to the newer
    // object (activeCount exists there), so the refusal is the precondition's, and the server did not retry the
    // patch on the object it read.
    const stale = [rvOp(rv), { op: "replace", path: "/status/activeCount", value: 1 }];
    const err = await h.client.patchStatus(CronJobKind, NS, "pre", stale, "json").then(
      () => assert.fail("a stale resourceVersion was accepted"),
      (e: unknown) => e,
    );
    assert.ok(isConflict(err), `not a conflict: ${String(err)}`);
    assert.ok(err instanceof APIError);
    assert.equal(err.code, 409);
    assert.match(err.message, /the object has been modified; please apply your changes to the latest version/);
    assert.deepEqual((await h.get("pre")).status, { activeCount: 0 }, "nothing written");
    // Without the precondition the same change applies to whatever is stored.
    const loose = await h.client.patchStatus<CronJob>(CronJobKind, NS, "pre", stale.slice(1), "json");
    assert.deepEqual(loose.status, { activeCount: 1 });
    // At the current resourceVersion it applies; an operation that does not apply fails the whole patch (422).
    const at = loose.metadata.resourceVersion;
    const bad = [
      rvOp(at),
      { op: "replace", path: "/status/activeCount", value: 2 },
      { op: "remove", path: "/status/nope" },
    ];
    await assert.rejects(
      h.client.patchStatus(CronJobKind, NS, "pre", bad, "json"),
      (e) => e instanceof APIError && e.code === 422,
    );
    assert.deepEqual((await h.get("pre")).status, { activeCount: 1 });

    // The writer: a stale read is a lost race (false, retried by the pass), a fresh one is written.
    await h.settle("pre");
    const computed = { activeCount: 3 };
    const staleCJ = loadedFrom({ namespace: NS, name: "pre" }, read).cronJob;
    // Nothing remembered: each call decides from the object it is given.
    const w = (cj: typeof staleCJ) =>
      writeStatus(h.client, cj, computed, [], { now: new Date(), remembered: {} satisfies Remembered, ctx: ctx() });
    assert.equal(await w(staleCJ), false, "a stale read is a conflict");
    assert.deepEqual((await h.get("pre")).status, { activeCount: 1 });
    const fresh = loadedFrom({ namespace: NS, name: "pre" }, await h.get("pre")).cronJob;
    assert.equal(await w(fresh), true);
    assert.deepEqual((await h.get("pre")).status, { activeCount: 3, conditions: [] });

    // Deleted meanwhile: 404, which the writer takes as nothing to write.
    await h.client.delete(CronJobKind, NS, "pre");
    await assert.rejects(h.client.patchStatus(CronJobKind, NS, "pre", [rvOp(at)], "json"), isNotFound);
    assert.equal(await w({ ...fresh, status: {} }), true);
  });

  it("a run's write: what changed only (the record's new entry in front, its oldest removed); spec and others' managedFields stay", async (t) => {
    const created = await h.createCronJob("run", { schedule: "*/5 * * * *", successfulJobsHistoryLimit: 1 });
    // Another field manager's entry, which a PUT without managedFields would have dropped.
    await h.client.update(
      CronJobKind,
      { ...created, metadata: { ...created.metadata, labels: { team: "data" } } },
      { fieldManager: "someone-else" },
    );
    await h.settle("run");
    const sent: Array<{ ops: JSONPatchOperation[]; before: CronJob | undefined }> = [];
    const client = new Proxy(h.client, {
      get(target, prop, receiver) {
        if (prop === "patchStatus")
          return (kind: typeof CronJobKind, ns: string, name: string, patch: unknown, type: PatchType) => {
            sent.push({ ops: patch as JSONPatchOperation[], before: h.cache.get<CronJob>(CronJobKind, ns, name) });
            return target.patchStatus(kind, ns, name, patch, type);
          };
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const reconciler = new CronJobReconciler({ client, cache: h.cache, recorder: h.recorder, clock: h.clock });
    const reconcile = async () => {
      await reconciler.reconcile({ namespace: NS, name: "run" }, ctx());
      await h.settle("run");
    };
    // Eleven runs, each created, then finished: the record is full (10 entries) before the last one.
    const first = Math.ceil((Date.parse(created.metadata.creationTimestamp!) + MIN) / (5 * MIN)) * 5 * MIN;
    for (let run = 0; run < 11; run++) {
      const slot = first + run * 5 * MIN;
      h.clock.set(new Date(slot + 1000));
      sent.length = 0;
      await reconcile();
      const job = (await h.jobs("run")).find((j) => !j.status?.completionTime);
      assert.ok(job, `run ${run}: no Job created`);
      if (run === 10) break;
      h.clock.set(new Date(slot + 61_000));
      await h.finishJob(
        job.metadata!.name!,
        "Complete",
        new Date(slot + 2000).toISOString(),
        new Date(slot + 60_000).toISOString(),
      );
      await h.settle("run");
      await reconcile();
    }
    assert.equal(sent.length, 1, "the last run's creation: one status write");
    const { ops, before } = sent[0]!;
    assert.ok(before?.status?.recentRuns?.length === 10, "the record was full");
    const after = await h.get("run");
    // What it sent: the precondition, the record's edits, the fields the run changed; nothing unchanged.
    assert.deepEqual(ops[0], rvOp(before.metadata.resourceVersion));
    const paths = ops.slice(1).map((op) => `${op.op} ${op.path}`);
    assert.ok(paths.includes("remove /status/recentRuns/9"), paths.join(", "));
    assert.ok(paths.includes("add /status/recentRuns/0"), paths.join(", "));
    assert.ok(!paths.includes("replace /status/recentRuns"), "not the whole record");
    for (const f of ["active", "lastScheduleTime", "nextScheduleTime"]) {
      assert.ok(
        paths.some((p) => p.endsWith(` /status/${f}`)),
        `${f} not written: ${paths.join(", ")}`,
      );
    }
    for (const op of ops.slice(1)) {
      const field = op.path.split("/")[2]!;
      const was = (before.status as Record<string, unknown>)[field];
      const now = (after.status as Record<string, unknown>)[field];
      assert.notEqual(canonical(was), canonical(now), `${op.path}: unchanged, but sent`);
    }
    // Applied by the server as the whole status: the record as the reconciler keeps it, spec as it was, and the
    // other manager's managedFields entry still there beside ours.
    assert.equal(after.status?.recentRuns?.length, 10);
    assert.deepEqual(after.status?.recentRuns?.slice(1), before.status.recentRuns.slice(0, 9));
    assert.equal(canonical(after.spec), canonical(before.spec));
    const managedFields = (after.metadata as { managedFields?: Array<{ manager?: string; subresource?: string }> })
      .managedFields;
    const managers = (managedFields ?? []).map((m) => `${m.manager}/${m.subresource ?? ""}`);
    assert.ok(managers.includes("someone-else/"), managers.join(", "));
    // The bytes a PUT of the object as read would have sent, against the patch's.
    const put = bytes({ ...before, status: after.status });
    const patch = bytes(ops);
    t.diagnostic(
      `status write of a run (full record): JSON patch ${patch} bytes (${ops.length} operations: ${paths.join(", ")}), ` +
        `PUT of the object ${put} bytes`,
    );
    assert.ok(patch * 3 < put, `the patch (${patch} bytes) is not a fraction of the PUT (${put} bytes)`);
  });
});
