// The in-memory fake behaves as the apiserver does where reconcilers rely on it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { APIError, hasStatusCause, isAlreadyExists, isConflict, isNotFound } from "../../runtime/errors.ts";
import type { WriteOptions } from "../../runtime/client.ts";
import { FakeClient } from "../../runtime/fake/client.ts";
import { type KubeObject, Kinds, type ResourceKind } from "../../runtime/kinds.ts";

const Widget: ResourceKind = {
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  namespaced: true,
};

function widget(name: string, extra: Partial<KubeObject> = {}): KubeObject {
  return {
    apiVersion: "example.com/v1",
    kind: "Widget",
    metadata: { name, namespace: "ns" },
    spec: { n: 1 },
    ...extra,
  };
}

function owned(name: string, owner: KubeObject): KubeObject {
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name,
      namespace: "ns",
      ownerReferences: [
        {
          apiVersion: "example.com/v1",
          kind: "Widget",
          name: owner.metadata!.name!,
          uid: owner.metadata!.uid!,
          controller: true,
        },
      ],
    },
  };
}

describe("FakeClient", () => {
  it("fills in uid, creationTimestamp, generation and resourceVersion, and drops status on create", async () => {
    const f = new FakeClient({ now: () => new Date("2030-01-02T03:04:05.678Z") });
    const got = await f.create(Widget, widget("a", { status: { ready: true } }));
    assert.match(got.metadata!.uid!, /^[0-9a-f-]{36}$/);
    assert.equal(got.metadata!.creationTimestamp, "2030-01-02T03:04:05Z");
    assert.equal(got.metadata!.generation, 1);
    assert.equal(got.status, undefined);
    assert.ok(Number(got.metadata!.resourceVersion) > 0);
    const gen = await f.create<KubeObject>(Widget, { metadata: { generateName: "w-", namespace: "ns" } });
    assert.match(gen.metadata!.name!, /^w-[a-z0-9]{5}$/);
  });

  it("refuses a second create of a name (AlreadyExists) and reads of a missing one (NotFound)", async () => {
    const f = new FakeClient();
    await f.create(Widget, widget("a"));
    await assert.rejects(
      f.create(Widget, widget("a")),
      (e) => isAlreadyExists(e) && /widgets.example.com "a" already exists/.test(String(e)),
    );
    await assert.rejects(f.get(Widget, "ns", "b"), isNotFound);
    await assert.rejects(f.get(Widget, "other", "a"), isNotFound);
    await assert.rejects(f.update(Widget, widget("b")), isNotFound);
    await assert.rejects(f.delete(Widget, "ns", "b"), isNotFound);
  });

  it("conflicts on a stale resourceVersion; a write bumps it, a no-op write does not", async () => {
    const f = new FakeClient();
    const v1 = await f.create(Widget, widget("a"));
    const v2 = await f.update(Widget, { ...v1, spec: { n: 2 } });
    assert.notEqual(v2.metadata!.resourceVersion, v1.metadata!.resourceVersion);
    assert.equal(v2.metadata!.generation, 2);
    await assert.rejects(f.update(Widget, { ...v1, spec: { n: 3 } }), isConflict);
    await assert.rejects(f.updateStatus(Widget, { ...v1, status: { x: 1 } }), isConflict);
    const same = await f.update(Widget, v2);
    assert.equal(same.metadata!.resourceVersion, v2.metadata!.resourceVersion);
    // Without a resourceVersion the update is unconditional.
    const { resourceVersion: _rv, ...meta } = v2.metadata!;
    const v3 = await f.update(Widget, { ...v2, metadata: meta, spec: { n: 4 } });
    assert.deepEqual(v3.spec, { n: 4 });
  });

  it("keeps status and spec apart: the status subresource writes only status, update everything else", async () => {
    const f = new FakeClient();
    const v1 = await f.create(Widget, widget("a"));
    const v2 = await f.updateStatus(Widget, {
      ...v1,
      spec: { n: 9 },
      metadata: { ...v1.metadata, labels: { x: "y" } },
      status: { ok: 1 },
    });
    assert.deepEqual(v2.spec, { n: 1 });
    assert.equal(v2.metadata!.labels, undefined);
    assert.deepEqual(v2.status, { ok: 1 });
    assert.equal(v2.metadata!.generation, 1, "a status write does not bump the generation");
    const v3 = await f.update(Widget, { ...v2, spec: { n: 5 }, status: { ok: 2 } });
    assert.deepEqual(v3.spec, { n: 5 });
    assert.deepEqual(v3.status, { ok: 1 });
    // A kind without the subresource: status is an ordinary field, and /status does not exist.
    const cm = await f.create(Kinds.ConfigMap, { metadata: { name: "c", namespace: "ns" }, status: { s: 1 } });
    assert.deepEqual(cm.status, { s: 1 });
    await assert.rejects(f.updateStatus(Kinds.ConfigMap, cm), isNotFound);
  });

  it("deletes only with a matching UID precondition, and marks an object with finalizers instead", async () => {
    const f = new FakeClient({ now: () => new Date("2030-01-01T00:00:00Z") });
    const a = await f.create(Widget, widget("a", { metadata: { name: "a", namespace: "ns", finalizers: ["x/y"] } }));
    await assert.rejects(f.delete(Widget, "ns", "a", { preconditions: { uid: "other" } }), isConflict);
    await f.delete(Widget, "ns", "a", { preconditions: { uid: a.metadata!.uid! } });
    const marked = await f.get(Widget, "ns", "a");
    assert.equal(marked.metadata!.deletionTimestamp, "2030-01-01T00:00:00Z");
    await f.update(Widget, { ...marked, metadata: { ...marked.metadata, finalizers: [] } });
    await assert.rejects(f.get(Widget, "ns", "a"), isNotFound);
  });

  it("keeps a deleted namespace Terminating, refusing new content with the NamespaceTerminating cause", async () => {
    const f = new FakeClient();
    await f.create(Kinds.Namespace, { metadata: { name: "ns" } });
    await f.create(Widget, widget("a"));
    await f.delete(Kinds.Namespace, undefined, "ns");
    const ns = await f.get<KubeObject & { status?: { phase?: string } }>(Kinds.Namespace, undefined, "ns");
    assert.equal(ns.status?.phase, "Terminating");
    await assert.rejects(
      f.create(Widget, widget("b")),
      (e) => hasStatusCause(e, "NamespaceTerminating") && /because it is being terminated/.test(String(e)),
    );
    await f.create(Widget, { ...widget("c"), metadata: { name: "c", namespace: "other" } });
  });

  it("garbage-collects dependents only when asked to, and not for Orphan", async () => {
    for (const gc of ["none", "background"] as const) {
      const f = new FakeClient({ garbageCollection: gc });
      const a = await f.create(Widget, widget("a"));
      await f.create(Kinds.Job, owned("j", a));
      await f.delete(Widget, "ns", "a");
      assert.equal((await f.list(Kinds.Job, { namespace: "ns" })).items.length, gc === "none" ? 1 : 0, gc);
      const b = await f.create(Widget, widget("b"));
      await f.create(Kinds.Job, owned("k", b));
      await f.delete(Widget, "ns", "b", { propagationPolicy: "Orphan" });
      assert.ok((await f.list(Kinds.Job, { namespace: "ns" })).items.some((j) => j.metadata!.name === "k"));
    }
  });

  it("answers injected errors per verb, kind and name, as many times as asked", async () => {
    const f = new FakeClient();
    f.injectError({ verb: "create", kind: Kinds.Job, name: "j", times: 1 }, new APIError(500, "InternalError", "boom"));
    await f.create(Widget, widget("j"));
    await assert.rejects(f.create(Kinds.Job, { metadata: { name: "j", namespace: "ns" } }), /boom/);
    await f.create(Kinds.Job, { metadata: { name: "j", namespace: "ns" } });
    f.injectError({ verb: "updateStatus" }, () => new APIError(409, "Conflict", "raced"));
    const w = await f.get(Widget, "ns", "j");
    await assert.rejects(f.updateStatus(Widget, w), isConflict);
    await assert.rejects(f.updateStatus(Widget, w), isConflict);
    f.clearErrors();
    await f.updateStatus(Widget, { ...w, status: { a: 1 } });
    assert.deepEqual(
      f.actions.filter((a) => a.verb === "create").map((a) => `${a.resource}/${a.name}`),
      ["widgets.example.com/j", "jobs.batch/j", "jobs.batch/j"],
    );
  });

  it("passes injected warnings to a matching write's onWarning, in order, even when the write fails", async () => {
    const f = new FakeClient();
    const seen: string[] = [];
    // WriteOptions.onWarning, as the real client calls it for each `Warning: 299 - "..."` header.
    const onWarning = (w: string) => seen.push(w);
    const o: WriteOptions = { onWarning };
    f.injectWarnings({ verb: "create", kind: Widget, name: "a" }, ["first", "second"]);
    f.injectWarnings({ verb: "updateStatus", times: 1 }, ["status once"]);
    await f.create(Widget, widget("b"), o);
    assert.deepEqual(seen, [], "another name");
    const a = await f.create(Widget, widget("a"), o);
    assert.deepEqual(seen.splice(0), ["first", "second"]);
    await assert.rejects(f.create(Widget, widget("a"), o), isAlreadyExists);
    assert.deepEqual(seen.splice(0), ["first", "second"], "with an error response too");
    await f.create(Widget, widget("a"), { dryRun: true, onWarning }).catch(() => {});
    assert.deepEqual(seen.splice(0), ["first", "second"], "with a dry run too");
    await f.update(Widget, { ...a, spec: { n: 2 } }, o);
    assert.deepEqual(seen, [], "update is another verb");
    const cur = await f.get(Widget, "ns", "a");
    const s1 = await f.updateStatus(Widget, { ...cur, status: { x: 1 } }, o);
    await f.updateStatus(Widget, { ...s1, status: { x: 2 } }, o);
    assert.deepEqual(seen.splice(0), ["status once"], "times: 1");
    // A write without onWarning still consumes the match, and nothing throws.
    f.injectWarnings({ verb: "update", kind: Widget }, ["ignored"]);
    await f.update(Widget, { ...(await f.get(Widget, "ns", "a")), spec: { n: 3 } });
    assert.deepEqual(seen, []);
  });

  it("serves the cache side from the same store: transformed, indexed, one frozen object per version", async () => {
    const f = new FakeClient();
    f.setTransform<KubeObject>(Kinds.Job, (j) => ({ ...j, spec: undefined }));
    f.indexField<KubeObject>(Kinds.Job, "owner", (j) => (j.metadata?.ownerReferences ?? []).map((r) => r.uid));
    assert.throws(() => f.cache.byIndex(Kinds.Job, "nope", "x"), /no index "nope"/);
    const a = await f.create(Widget, widget("a"));
    await f.create(Kinds.Job, { ...owned("j1", a), spec: { big: true } });
    await f.create(Kinds.Job, { metadata: { name: "j2", namespace: "ns", labels: { l: "v" } } });
    const byOwner = f.cache.byIndex(Kinds.Job, "owner", a.metadata!.uid!);
    assert.deepEqual(
      byOwner.map((j) => j.metadata!.name),
      ["j1"],
    );
    assert.equal(byOwner[0]!.spec, undefined);
    assert.ok(Object.isFrozen(byOwner[0]));
    assert.equal(f.cache.get(Kinds.Job, "ns", "j1"), byOwner[0], "the same object until it changes");
    assert.deepEqual(
      f.cache.list(Kinds.Job, { namespace: "ns", labelSelector: "l=v" }).map((j) => j.metadata!.name),
      ["j2"],
    );
    const w = await f.get(Widget, "ns", "a");
    const before = f.cache.get(Widget, "ns", "a");
    await f.update(Widget, { ...w, spec: { n: 7 } });
    assert.notEqual(f.cache.get(Widget, "ns", "a"), before, "a new object once it changed");
    assert.deepEqual(f.cache.get(Widget, "ns", "a")!.spec, { n: 7 });
    // The client side hands out copies the caller may change.
    const copy = await f.get(Widget, "ns", "a");
    (copy.spec as { n: number }).n = 8;
    assert.deepEqual(f.cache.get(Widget, "ns", "a")!.spec, { n: 7 });
  });
});
