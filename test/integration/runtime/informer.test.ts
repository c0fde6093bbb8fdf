// The informer cache against a real kube-apiserver: deltas, indexes, read-only objects, resumed
// watches without relists, recovery after an apiserver restart, and a 410 relist that delivers the
// changes (deletes included) made while it was disconnected.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Cache } from "../../../runtime/cache/cache.ts";
import { Informer, stripManagedFields } from "../../../runtime/cache/informer.ts";
import { Client } from "../../../runtime/client.ts";
import { type KubeObject, Kinds } from "../../../runtime/kinds.ts";
import { metricsRegistry } from "../../../runtime/metrics/registry.ts";
import { TestEnv } from "../../../envtest/index.ts";

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

async function eventually(what: string, fn: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`timed out waiting for: ${what}`);
}

async function counter(name: string, labels: Record<string, string>): Promise<number> {
  const m = await metricsRegistry.getSingleMetric(name)?.get();
  return (m?.values ?? [])
    .filter((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val))
    .reduce((a, v) => a + v.value, 0);
}

function cm(
  namespace: string,
  name: string,
  data: Record<string, string> = {},
  labels: Record<string, string> = {},
): ConfigMap {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace, labels }, data };
}

describe("informer cache on a real apiserver", () => {
  let env: TestEnv;
  let client: Client;

  before(async () => {
    env = await TestEnv.start({ crdDirectoryPaths: [] });
    client = new Client(env.kubeConfig);
    for (const ns of ["inf-a", "inf-b", "inf-gone"]) {
      await client.create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    }
  });
  after(async () => {
    client?.close();
    await env?.stop();
  });

  it("reflects creates, updates and deletes in the store, the indexes and the handlers", async () => {
    const cache = new Cache(client, { namespace: "inf-a" });
    cache.indexField<ConfigMap>(Kinds.ConfigMap, "byTeam", (o) =>
      o.metadata?.labels?.team ? [o.metadata.labels.team] : [],
    );
    const inf = cache.informerFor<ConfigMap>(Kinds.ConfigMap);
    const seen: string[] = [];
    inf.addEventHandler({
      onAdd: (o) => seen.push(`add ${o.metadata?.name}`),
      onUpdate: (a, b) => seen.push(`update ${b.metadata?.name} ${a.data?.v}->${b.data?.v}`),
      onDelete: (o) => seen.push(`delete ${o.metadata?.name}`),
    });
    await client.create(Kinds.ConfigMap, cm("inf-a", "pre", { v: "0" }, { team: "x" }));
    cache.start();
    try {
      assert.equal(await cache.waitForSync(), true);
      assert.equal(cache.get<ConfigMap>(Kinds.ConfigMap, "inf-a", "pre")?.data?.v, "0");
      assert.equal(
        cache.get<ConfigMap>(Kinds.ConfigMap, "inf-a", "pre")?.kind,
        "ConfigMap",
        "list items get their kind back",
      );

      await client.create(Kinds.ConfigMap, cm("inf-a", "one", { v: "1" }, { team: "x" }));
      await client.create(Kinds.ConfigMap, cm("inf-b", "other-ns", {}, { team: "x" }));
      await eventually("one cached", () => !!inf.get("inf-a", "one"));
      assert.deepEqual(
        cache
          .byIndex(Kinds.ConfigMap, "byTeam", "x")
          .map((o) => o.metadata?.name)
          .sort(),
        ["one", "pre"],
      );
      assert.equal(inf.get("inf-b", "other-ns"), undefined, "namespace-restricted cache");

      const one = await client.get<ConfigMap>(Kinds.ConfigMap, "inf-a", "one");
      await client.update(Kinds.ConfigMap, {
        ...one,
        data: { v: "2" },
        metadata: { ...one.metadata, labels: { team: "y" } },
      });
      await eventually("update seen", () => inf.get("inf-a", "one")?.data?.v === "2");
      assert.deepEqual(
        cache.byIndex(Kinds.ConfigMap, "byTeam", "x").map((o) => o.metadata?.name),
        ["pre"],
      );
      assert.deepEqual(
        cache.byIndex(Kinds.ConfigMap, "byTeam", "y").map((o) => o.metadata?.name),
        ["one"],
      );
      assert.deepEqual(
        cache.list(Kinds.ConfigMap, { labelSelector: "team in (y)" }).map((o) => o.metadata?.name),
        ["one"],
      );

      await client.delete(Kinds.ConfigMap, "inf-a", "one");
      await eventually("delete seen", () => !inf.get("inf-a", "one"));
      assert.deepEqual(cache.byIndex(Kinds.ConfigMap, "byTeam", "y"), []);
      assert.deepEqual(seen, ["add pre", "add one", "update one 1->2", "delete one"]);

      // Objects handed out are read-only.
      const cached = inf.get("inf-a", "pre")!;
      assert.throws(() => {
        (cached.data as Record<string, string>).v = "mutated";
      }, TypeError);
      assert.throws(() => {
        (cached.metadata as Record<string, unknown>).name = "x";
      }, TypeError);
    } finally {
      await cache.stop();
    }
  });

  it("lists namespace by namespace at one resourceVersion when given the namespaces, then watches from it", async () => {
    const label = { lister: "by-namespace" };
    for (const ns of ["inf-a", "inf-b"])
      for (const n of ["x", "y", "z"]) await client.create(Kinds.ConfigMap, cm(ns, `bn-${n}`, { n }, label));
    const paths: string[] = [];
    const counting = new Proxy(client, {
      get: (target, prop, receiver) =>
        prop === "list"
          ? (rk: Parameters<Client["list"]>[0], o: Parameters<Client["list"]>[1]) => {
              paths.push(`${o?.namespace ?? "*"} ${o?.resourceVersionMatch ?? ""}`);
              return target.list(rk, o);
            }
          : Reflect.get(target, prop, receiver),
    });
    let asked = 0;
    const inf = new Informer<ConfigMap>(counting, Kinds.ConfigMap, {
      labelSelector: "lister=by-namespace",
      pageSize: 2,
      listNamespaces: async () => {
        asked++;
        // Created after the list's resourceVersion was read: its object comes by the watch, not twice.
        await client.create(Kinds.ConfigMap, cm("inf-b", "bn-late", {}, label));
        return ["inf-b", "inf-a"];
      },
    });
    const adds: string[] = [];
    inf.addEventHandler({ onAdd: (o) => adds.push(`${o.metadata?.namespace}/${o.metadata?.name}`) });
    inf.start();
    try {
      assert.equal(await inf.waitForSync(), true);
      assert.equal(asked, 1);
      // The probe for the resourceVersion, then each namespace at it exactly (two pages each: pageSize 2).
      assert.equal(paths[0], "* ");
      assert.deepEqual([...paths].sort(), ["* ", "inf-a ", "inf-a Exact", "inf-b ", "inf-b Exact"]);
      // In a cluster-wide list's order: by namespace, then name.
      assert.deepEqual(adds.slice(0, 6), [
        "inf-a/bn-x",
        "inf-a/bn-y",
        "inf-a/bn-z",
        "inf-b/bn-x",
        "inf-b/bn-y",
        "inf-b/bn-z",
      ]);
      await eventually("the object made after the resourceVersion, by the watch", () => !!inf.get("inf-b", "bn-late"));
      assert.equal(adds.filter((a) => a === "inf-b/bn-late").length, 1);
    } finally {
      await inf.stop();
    }
    // The namespaces unreadable: one cluster-wide list, as without the option.
    paths.length = 0;
    const one = new Informer<ConfigMap>(counting, Kinds.ConfigMap, {
      labelSelector: "lister=by-namespace",
      pageSize: 100,
      listNamespaces: async () => undefined,
    });
    one.start();
    try {
      assert.equal(await one.waitForSync(), true);
      assert.equal(one.list().length, 7);
      assert.deepEqual(paths, ["* ", "* "]);
    } finally {
      await one.stop();
    }
  });

  it("exports its list, watch and watch-error series at 0 from the start, before any error", async () => {
    // A resource no other test here watches, so its series start from nothing.
    const scrape = () => metricsRegistry.metrics();
    const line = (text: string, series: string) => text.split("\n").find((l) => l.startsWith(`${series} `));
    const errors = (reason: string) => `informer_watch_errors_total{resource="namespaces",reason="${reason}"}`;
    const inf = new Informer<KubeObject>(client, Kinds.Namespace);
    let text = await scrape();
    for (const reason of ["Gone", "Stalled", "Unknown", "Timeout", "Forbidden"]) {
      assert.equal(line(text, errors(reason)), `${errors(reason)} 0`, "right after construction");
    }
    assert.equal(
      line(text, 'informer_lists_total{resource="namespaces",reason="initial"}'),
      'informer_lists_total{resource="namespaces",reason="initial"} 0',
    );
    inf.start();
    try {
      assert.equal(await inf.waitForSync(), true);
      await eventually("the watch started", async () =>
        (line(await scrape(), 'informer_watches_total{resource="namespaces"}') ?? "").endsWith(" 1"),
      );
      text = await scrape();
      for (const reason of ["Gone", "Stalled", "Unknown", "Timeout", "Forbidden"]) {
        assert.equal(line(text, errors(reason)), `${errors(reason)} 0`, "running, with no error yet");
      }
      assert.equal(
        line(text, 'informer_lists_total{resource="namespaces",reason="initial"}'),
        'informer_lists_total{resource="namespaces",reason="initial"} 1',
      );
    } finally {
      await inf.stop();
    }
  });

  it("resumes a watch the server closes without relisting", async () => {
    const inf = new Informer<ConfigMap>(client, Kinds.ConfigMap, { namespace: "inf-b", watchTimeoutSeconds: [1, 1] });
    const lists0 = await counter("informer_lists_total", { resource: "configmaps" });
    const watches0 = await counter("informer_watches_total", { resource: "configmaps" });
    inf.start();
    try {
      await inf.waitForSync();
      await eventually(
        "three server-side watch timeouts",
        async () => (await counter("informer_watches_total", { resource: "configmaps" })) - watches0 >= 4,
        20_000,
      );
      await client.create(Kinds.ConfigMap, cm("inf-b", "after-reconnects"));
      await eventually("change after reconnects", () => !!inf.get("inf-b", "after-reconnects"));
      assert.equal(
        (await counter("informer_lists_total", { resource: "configmaps" })) - lists0,
        1,
        "only the initial list",
      );
    } finally {
      await inf.stop();
    }
  });

  it("resyncs periodically: every cached object is handed to onUpdate again (level-triggered safety net)", async () => {
    await client.create(Kinds.ConfigMap, cm("inf-b", "resync-me"));
    const inf = new Informer<ConfigMap>(client, Kinds.ConfigMap, { namespace: "inf-b", resyncPeriodMs: 300 });
    const resynced = new Set<string>();
    inf.addEventHandler({ onUpdate: (a, b) => a === b && resynced.add(b.metadata!.name!) });
    inf.start();
    try {
      await inf.waitForSync();
      await eventually("resync", () => resynced.has("resync-me"), 10_000);
    } finally {
      await inf.stop();
    }
  });

  it("transforms objects before caching them: stripManagedFields, and an update built from one keeps the server's", async () => {
    await client.create(Kinds.ConfigMap, cm("inf-b", "strip-me", { a: "1" }));
    const inf = new Informer<ConfigMap>(client, Kinds.ConfigMap, { namespace: "inf-b", transform: stripManagedFields });
    inf.start();
    try {
      await inf.waitForSync();
      const listed = inf.get("inf-b", "strip-me")!;
      assert.equal(listed.metadata!.managedFields, undefined, "stripped on list");
      assert.equal(listed.data!.a, "1");
      const updated = await client.update(Kinds.ConfigMap, { ...structuredClone(listed), data: { a: "2" } });
      assert.ok(
        (updated.metadata!.managedFields ?? []).length > 0,
        "an update without managedFields leaves the stored ones in place",
      );
      await eventually("watched update", () => inf.get("inf-b", "strip-me")?.data?.a === "2");
      assert.equal(inf.get("inf-b", "strip-me")!.metadata!.managedFields, undefined, "stripped on watch");
    } finally {
      await inf.stop();
    }
  });

  it("a per-kind transform runs after the cache-wide one, on lists and watches, and only before start", async () => {
    await client.create(Kinds.ConfigMap, cm("inf-b", "trim-me", { big: "x".repeat(1000) }, { keep: "yes" }));
    const cache = new Cache(client, { namespace: "inf-b", transform: stripManagedFields });
    cache.setTransform<ConfigMap>(Kinds.ConfigMap, (o) => {
      delete o.data;
      return o;
    });
    assert.throws(() => cache.setTransform(Kinds.ConfigMap, (o) => o), /already has a cache transform/);
    // Other kinds keep the cache-wide transform alone.
    const namespaces = cache.informerFor(Kinds.Namespace);
    cache.start();
    try {
      await cache.waitForSync();
      const listed = cache.get<ConfigMap>(Kinds.ConfigMap, "inf-b", "trim-me")!;
      assert.equal(listed.data, undefined, "trimmed on list");
      assert.equal(listed.metadata!.managedFields, undefined, "and stripped");
      assert.equal(listed.metadata!.labels!.keep, "yes");
      assert.ok(namespaces.get(undefined, "inf-b")?.spec, "another kind is whole");
      await client.create(Kinds.ConfigMap, cm("inf-b", "trim-me-too", { big: "y" }));
      await eventually("watched add", () => !!cache.get(Kinds.ConfigMap, "inf-b", "trim-me-too"));
      assert.equal(cache.get<ConfigMap>(Kinds.ConfigMap, "inf-b", "trim-me-too")!.data, undefined, "trimmed on watch");
      assert.throws(
        () => cache.informerFor(Kinds.ConfigMap).setTransform((o) => o),
        /must be set before the informer starts/,
      );
    } finally {
      await cache.stop();
    }
  });

  it("stores an object unchanged when the transform throws", async () => {
    await client.create(Kinds.ConfigMap, cm("inf-b", "bad-transform", { a: "1" }));
    const inf = new Informer<ConfigMap>(client, Kinds.ConfigMap, {
      namespace: "inf-b",
      transform: () => {
        throw new Error("boom");
      },
    });
    inf.start();
    try {
      await inf.waitForSync();
      assert.equal(inf.get("inf-b", "bad-transform")?.data?.a, "1");
    } finally {
      await inf.stop();
    }
  });

  it("stops promptly right after the initial sync (the watch may not have started yet)", async () => {
    const inf = new Informer<ConfigMap>(client, Kinds.ConfigMap, { namespace: "inf-b" });
    inf.start();
    assert.equal(await inf.waitForSync(), true);
    // Without the fix the watch outlived stop() until the server's 5–10 minute timeout.
    const outcome = await Promise.race([
      inf.stop().then(() => "stopped"),
      new Promise<string>((r) => setTimeout(() => r("still running after 20 s"), 20_000).unref()),
    ]);
    assert.equal(outcome, "stopped");
    assert.equal(await inf.waitForSync(AbortSignal.abort()), true, "a synced informer stays synced");
  });

  it("abandons a watch that goes silent (inactivity watchdog) and carries on", async () => {
    const inf = new Informer<ConfigMap>(client, Kinds.ConfigMap, {
      namespace: "inf-b",
      watchTimeoutSeconds: [600, 600],
      inactivityTimeoutMs: 500,
      backoff: { initialMs: 50, maxMs: 100 },
    });
    const stalled0 = await counter("informer_watch_errors_total", { resource: "configmaps", reason: "Stalled" });
    inf.start();
    try {
      await inf.waitForSync();
      await eventually(
        "a stalled watch is restarted",
        async () =>
          (await counter("informer_watch_errors_total", { resource: "configmaps", reason: "Stalled" })) > stalled0,
        15_000,
      );
      await client.create(Kinds.ConfigMap, cm("inf-b", "after-stall"));
      await eventually("changes still arrive", () => !!inf.get("inf-b", "after-stall"));
    } finally {
      await inf.stop();
    }
  });

  it("recovers after a kube-apiserver restart", async () => {
    const inf = new Informer<ConfigMap>(client, Kinds.ConfigMap, {
      namespace: "inf-b",
      backoff: { initialMs: 100, maxMs: 1000 },
    });
    inf.start();
    try {
      await inf.waitForSync();
      await env.restartAPIServer(1000);
      await client.create(Kinds.ConfigMap, cm("inf-b", "after-restart", { v: "r" }));
      await eventually("change after restart", () => inf.get("inf-b", "after-restart")?.data?.v === "r", 60_000);
    } finally {
      await inf.stop();
    }
  });

  it("relists after 410 Gone and delivers the changes it missed, deletes included", async () => {
    const base = ["keep", "change", "remove"];
    for (const n of base) await client.create(Kinds.ConfigMap, cm("inf-gone", n, { v: "1" }));
    const inf = new Informer<ConfigMap>(client, Kinds.ConfigMap, {
      namespace: "inf-gone",
      backoff: { initialMs: 100, maxMs: 1000 },
    });
    const deleted: string[] = [];
    const added: string[] = [];
    inf.addEventHandler({
      onDelete: (o) => deleted.push(o.metadata!.name!),
      onAdd: (o) => added.push(o.metadata!.name!),
    });
    inf.start();
    const second = new Client(await env.startSecondAPIServer());
    try {
      await inf.waitForSync();
      assert.equal(inf.size, 3);
      const gone0 = await counter("informer_lists_total", { resource: "configmaps", reason: "gone" });

      // While the informer's apiserver is down, change the cluster through the other one, far
      // beyond the watch cache window, so its resourceVersion is too old when it comes back.
      await env.apiServer!.stop();
      await second.delete(Kinds.ConfigMap, "inf-gone", "remove");
      const ch = await second.get<ConfigMap>(Kinds.ConfigMap, "inf-gone", "change");
      await second.update(Kinds.ConfigMap, { ...ch, data: { v: "2" } });
      await second.create(Kinds.ConfigMap, cm("inf-gone", "new"));
      await second.create(Kinds.ConfigMap, cm("inf-b", "churn", { i: "0" }));
      for (let i = 1; i <= 150; i++) {
        await second.patch(Kinds.ConfigMap, "inf-b", "churn", { data: { i: String(i) } }, "merge");
      }
      await env.restartAPIServer();

      await eventually(
        "missed changes arrive",
        () =>
          !inf.get("inf-gone", "remove") &&
          inf.get("inf-gone", "change")?.data?.v === "2" &&
          !!inf.get("inf-gone", "new"),
        60_000,
      );
      assert.deepEqual(deleted, ["remove"]);
      assert.deepEqual(
        added.sort(),
        ["change", "keep", "new", "remove"].sort().filter((n) => n !== "change" || added.includes("change")),
      );
      assert.ok(
        (await counter("informer_lists_total", { resource: "configmaps", reason: "gone" })) - gone0 >= 1,
        "relisted after 410",
      );
    } finally {
      second.close();
      await inf.stop();
    }
  });
});
