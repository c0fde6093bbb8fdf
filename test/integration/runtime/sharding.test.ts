// Sharding against a real apiserver: replicas divide namespaces by their live Leases, each watching only its own;
// a namespace never has two open holders at any sampled instant, through joins, graceful leaves and a replica
// that stops renewing (partitioned or paused); a second install never acts in a namespace another has claimed.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { TestEnv } from "../../../envtest/index.ts";
import { Cache } from "../../../runtime/cache/cache.ts";
import { Client } from "../../../runtime/client.ts";
import { type KubeObject, Kinds } from "../../../runtime/kinds.ts";
import type { ClaimNaming, Lease } from "../../../runtime/sharding/claims.ts";
import { discardLogger } from "../../../runtime/log.ts";
import { Manager } from "../../../runtime/manager.ts";
import { NamespaceCoordinator } from "../../../runtime/sharding/coordinator.ts";
import { ownerOf } from "../../../runtime/sharding/rendezvous.ts";
import { eventually } from "../../eventually.ts";

const NAMING: ClaimNaming = {
  name: "test-claim",
  labels: { "sharding.test/claim": "true" },
  installAnnotation: "sharding.test/install",
  instanceLeaseAnnotation: "sharding.test/instance-lease",
};
const NAMESPACES = Array.from({ length: 12 }, (_, i) => `shard-ns-${i}`);
/** A replica Lease unchanged this long is deleted by a live replica (10 minutes in the manager). */
const STALE_MS = 6_000;
const LEASE_MS = 3000;

interface Replica {
  name: string;
  coordinator: NamespaceCoordinator;
  cache: Cache;
  fenced: Client;
  own: Client;
  abort: AbortController;
  done: Promise<unknown>;
}

describe("sharding: namespaces divided between live replicas", () => {
  let env: TestEnv;
  let admin: Client;
  const replicas = new Map<string, Replica>();

  function startReplica(name: string, install = "default/test-install"): Replica {
    const fenced = new Client(env.kubeConfig);
    const own = new Client(env.kubeConfig);
    const cache = new Cache(fenced, { scoped: true });
    cache.informerFor(Kinds.ConfigMap);
    cache.start();
    const coordinator = new NamespaceCoordinator({
      client: own,
      fenced,
      cache,
      candidates: { namespaces: NAMESPACES },
      membership: {
        sharded: true,
        namespace: "default",
        leaseName: `${install.split("/")[1]}-${name}`,
        labels: { "sharding.test/instance-of": install.split("/")[1]! },
        leaseDurationMs: LEASE_MS,
        renewDeadlineMs: 2000,
        retryPeriodMs: 300,
        staleLeaseMs: STALE_MS,
      },
      naming: NAMING,
      install,
      identity: `${name}_process`,
      fencedResources: ["configmaps"],
      retryPeriodMs: 300,
    });
    const abort = new AbortController();
    const done = coordinator.start(abort.signal).catch((err: unknown) => err);
    const r = { name, coordinator, cache, fenced, own, abort, done };
    replicas.set(name, r);
    return r;
  }

  async function stopReplica(r: Replica): Promise<void> {
    replicas.delete(r.name);
    r.abort.abort();
    // Bounded: a failed test must not hold the file for its whole time-out.
    await Promise.race([
      Promise.all([r.done, r.cache.stop()]),
      new Promise((resolve) => setTimeout(resolve, 20_000).unref()),
    ]);
    r.fenced.close();
    r.own.close();
  }

  /** Every namespace held by exactly one of `names`, as the hash over them says. */
  function settledOn(names: string[]): boolean {
    const keys = names.map((n) => `test-install-${n}`).sort();
    return NAMESPACES.every((ns) => {
      const holders = names.filter((n) => replicas.get(n)!.coordinator.heldNamespaces().includes(ns));
      return holders.length === 1 && `test-install-${holders[0]}` === ownerOf(ns, keys);
    });
  }

  /** Samples every replica's open namespaces until stopped; fails on any namespace open in two at once. */
  function watchForOverlap(): { stop: () => void; overlaps: string[] } {
    const overlaps: string[] = [];
    const t = setInterval(() => {
      const seen = new Map<string, string>();
      for (const r of replicas.values())
        for (const ns of r.coordinator.heldNamespaces()) {
          if (seen.has(ns)) overlaps.push(`${ns}: ${seen.get(ns)} and ${r.name}`);
          seen.set(ns, r.name);
        }
    }, 5);
    return { stop: () => clearInterval(t), overlaps };
  }

  before(async () => {
    env = await TestEnv.start({ crdDirectoryPaths: [], verbose: false });
    admin = new Client(env.kubeConfig);
    for (const ns of NAMESPACES) {
      await admin.create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
      await admin.create(Kinds.ConfigMap, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "marker", namespace: ns },
        data: { ns },
      } as KubeObject);
    }
  });

  after(async () => {
    for (const r of [...replicas.values()]) await stopReplica(r);
    await env?.stop();
  });

  it("divides the namespaces, moves them on a join and a leave with never two holders, and fences a lapsed replica", async () => {
    const overlap = watchForOverlap();
    const a = startReplica("a");
    await eventually("replica a holds every namespace", async () => settledOn(["a"]), 30_000);
    // Each replica watches only its namespaces: its cache has their objects and no other.
    assert.deepEqual(a.cache.namespaces().sort(), [...NAMESPACES].sort());
    assert.equal(a.cache.list(Kinds.ConfigMap).length, NAMESPACES.length);

    const b = startReplica("b");
    const c = startReplica("c");
    await eventually("a, b and c divide them by the hash", async () => settledOn(["a", "b", "c"]), 30_000);
    for (const r of [a, b, c]) {
      const mine = r.coordinator.heldNamespaces();
      assert.deepEqual(r.cache.namespaces().sort(), mine, `${r.name} watches exactly what it holds`);
      // A read of another's namespace is not an answer (the webhook then says unknown, not missing).
      assert.deepEqual(
        NAMESPACES.filter((ns) => r.cache.covers(ns)),
        NAMESPACES.filter((ns) => mine.includes(ns)),
      );
      assert.deepEqual(
        r.cache
          .list(Kinds.ConfigMap)
          .map((o) => o.metadata?.namespace)
          .sort(),
        mine,
      );
    }

    // The claim names the holder and its Lease, and the write fence follows the claim.
    const bNs = b.coordinator.heldNamespaces()[0]!;
    const claim = await admin.get<Lease>(Kinds.Lease, bNs, NAMING.name);
    assert.equal(claim.spec?.holderIdentity, "b_process");
    assert.equal(claim.metadata?.annotations?.[NAMING.instanceLeaseAnnotation], "default/test-install-b");
    await a.fenced
      .create(Kinds.ConfigMap, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "x", namespace: bNs },
      } as KubeObject)
      .then(
        () => assert.fail("a wrote in b's namespace"),
        (err: Error) => assert.match(err.message, /not held by this replica/),
      );

    // A graceful leave hands b's namespaces over at once (its claims let go, its Lease deleted).
    const bHeld = b.coordinator.heldNamespaces();
    await stopReplica(b);
    // Before b's Lease could have lapsed: only a claim let go is taken this early.
    await eventually("a and c take b's namespaces", async () => settledOn(["a", "c"]), LEASE_MS - 200);
    const bLease = await admin.get(Kinds.Lease, "default", "test-install-b").catch((err: Error) => err);
    assert.match(String(bLease), /not found/i, "b deleted its own Lease as it stopped");
    assert.ok(bHeld.length > 0);

    // c stops renewing (partitioned, or paused): its writes are refused once its renew deadline passes, and its
    // namespaces move to a only after its Lease has expired.
    const cNs = c.coordinator.heldNamespaces();
    assert.ok(cNs.length > 0);
    c.own.setWriteGuard(() => new Error("partitioned"));
    const cutAt = Date.now();
    await eventually(
      "c's writes are fenced",
      async () =>
        c.fenced
          .create(Kinds.ConfigMap, {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { generateName: "fenced-", namespace: cNs[0] },
          } as KubeObject)
          .then(
            () => false,
            (err: Error) => /not renewed in time|not one of its namespaces/.test(err.message),
          ),
      10_000,
    );
    await eventually(
      "a holds c's namespaces",
      async () => cNs.every((ns) => a.coordinator.heldNamespaces().includes(ns)),
      LEASE_MS * 4,
    );
    assert.ok(Date.now() - cutAt >= LEASE_MS - 500, "not taken before c's Lease could have expired");
    // A replica that joins while c's dead Lease is still there counts c out at once, as a does (by the Lease's own
    // expired renewTime), not after watching it unchanged for a Lease's duration: meanwhile the namespaces its view
    // gave c and a's gave it would have had no holder.
    const d = startReplica("d");
    await eventually("a and d divide them, c counted out", async () => settledOn(["a", "d"]), LEASE_MS - 200);
    // c's Lease, never renewed again (a replica SIGKILLed never deletes its own), is deleted by a live replica once
    // it has been stale that long; a's own stays.
    await eventually(
      "c's stale Lease deleted",
      async () =>
        await admin.get(Kinds.Lease, "default", "test-install-c").then(
          () => false,
          () => true,
        ),
      STALE_MS * 3,
    );
    assert.ok(Date.now() - cutAt >= STALE_MS - 500, "not deleted before it had been stale that long");
    await admin.get(Kinds.Lease, "default", "test-install-a");
    assert.ok(d.coordinator.heldNamespaces().length > 0);
    overlap.stop();
    assert.deepEqual(overlap.overlaps, []);
  });

  it("a manager's scoped cache watches more namespaces and kinds than its client has sockets", async () => {
    // 12 namespaces × 6 kinds = 72 watches, each holding a connection: more than the manager's client's 64 sockets.
    const mgr = new Manager({
      kubeConfig: env.kubeConfig,
      logger: discardLogger,
      metricsBindAddress: "0",
      healthProbeBindAddress: "0",
      scopedCache: true,
    });
    for (const kind of [Kinds.ConfigMap, Kinds.Secret, Kinds.Service, Kinds.Pod, Kinds.Event, Kinds.Lease])
      mgr.cache.informerFor(kind);
    mgr.cache.start();
    try {
      // Bounded: the namespaces past the sockets never synced (their lists waited for a connection forever).
      const synced = await Promise.all(NAMESPACES.map((ns) => mgr.cache.addNamespace(ns, AbortSignal.timeout(30_000))));
      assert.deepEqual(
        synced,
        NAMESPACES.map(() => true),
        "every namespace synced",
      );
      assert.equal(
        mgr.cache.list(Kinds.ConfigMap).filter((o) => o.metadata?.name === "marker").length,
        NAMESPACES.length,
      );
      // And the manager's own requests still find a connection.
      await mgr.client.create(Kinds.ConfigMap, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "after-the-watches", namespace: NAMESPACES[0] },
      } as KubeObject);
    } finally {
      await mgr.cache.stop();
      mgr.client.close();
    }
  });

  it("a second install never acts in a namespace another install has claimed, and names it", async () => {
    const other = startReplica("z", "default/other-install");
    await eventually(
      "the other install sees every namespace claimed by test-install",
      async () => other.coordinator.conflicting().size === NAMESPACES.length,
      15_000,
    );
    assert.equal(other.coordinator.conflicting().get(NAMESPACES[0]!), "default/test-install");
    assert.deepEqual(other.coordinator.heldNamespaces(), []);
    await stopReplica(other);
  });
});
