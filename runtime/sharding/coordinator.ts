// Which namespaces this process acts in, and the handover of one between processes (docs/architecture.md, "Tenants
// and shards"). The namespaces it may act in (a list, a selector, or all) are divided between the live replicas of
// its install by rendezvous hashing; each one it is given is claimed (a Lease in the namespace, runtime/sharding/
// claims.ts), then watched (Cache.addNamespace), then opened to writes. A namespace it must give up is closed to
// writes first (the client's write guard), its writes in flight are waited for, its watches stopped, and only then
// is its claim let go. Another replica takes a claim only once it is let go or its holder's Lease has expired, so two
// replicas never act in one namespace at once; a paused replica that wakes up finds its writes refused (its Lease
// renewed too long ago), and the deterministic Job name stays the last guard.
import { performance } from "node:perf_hooks";
import { Counter, Gauge } from "prom-client";
import { Cache } from "../cache/cache.ts";
import { Informer } from "../cache/informer.ts";
import type { Client } from "../client.ts";
import { APIError } from "../errors.ts";
import { Kinds } from "../kinds.ts";
import { LeaderElector } from "../leaderelection.ts";
import { discardLogger, type Logger } from "../log.ts";
import { getOrCreate, metricsRegistry } from "../metrics/registry.ts";
import {
  type Claimant,
  type ClaimNaming,
  type ClaimState,
  type Lease,
  readClaim,
  releaseClaim,
  takeClaim,
} from "./claims.ts";
import { Members } from "./members.ts";
import { ownerOf } from "./rendezvous.ts";

/** The namespaces an install may act in: a fixed list, or those a label selector matches ("" : every namespace). */
type Candidates = { namespaces: readonly string[] } | { selector: string };

/** Sharded: every replica holds a Lease of its own. Otherwise the one active replica holds the install's Lease. */
type Membership =
  | {
      sharded: true;
      namespace: string;
      /** The replica's own Lease (`<id>-<replica>`): its key in the hash, kept across its container's restarts. */
      leaseName: string;
      labels: Readonly<Record<string, string>>;
      leaseDurationMs?: number;
      renewDeadlineMs?: number;
      retryPeriodMs?: number;
      /** Another replica's Lease unchanged this long is deleted (default STALE_LEASE_MS). */
      staleLeaseMs?: number;
    }
  | {
      sharded: false;
      /** `namespace/name` of the leader-election Lease (the claims name it), and when its holder's term ends. */
      lease: string;
      heldUntil: () => number;
      leaseDurationSeconds: number;
    };

interface CoordinatorOptions {
  /** Reads and writes claims, Namespaces and Leases (not fenced): the claims' writes and the Lease's renewals. */
  client: Client;
  /**
   * Its watches (Namespaces, claims, the replicas' Leases; one per namespace with a list), each holding an HTTP/1.1
   * connection for its life: not on `client`, whose few sockets the renewals must find free. Default: `client`.
   */
  watchClient?: Client;
  /** The client whose writes to namespaces are fenced (the manager's): its write guard is set here. */
  fenced: Client;
  /** A scoped cache (Cache({scoped: true})): the namespaces held are added to it and removed from it. */
  cache: Cache;
  candidates: Candidates;
  membership: Membership;
  naming: ClaimNaming;
  /** The install (`namespace/id`), the process's identity. */
  install: string;
  identity: string;
  /** The resources (plurals) whose writes are fenced: those the cache watches, and events. */
  fencedResources: readonly string[];
  retryPeriodMs?: number;
  logger?: Logger;
}

/** acquiring: its claim being written; claimed: written, its watches syncing; then held, releasing, letting-go. */
type HeldState = "acquiring" | "claimed" | "held" | "releasing" | "letting-go";

const namespacesGauge = getOrCreate(
  "sharding_namespaces",
  () =>
    new Gauge({
      name: "sharding_namespaces",
      help: "Namespaces of this replica, by state: held (acted in), acquiring (its claim being written, or its watches syncing), releasing, conflict (claimed by another install), candidate (it may act in).",
      labelNames: ["state"],
      registers: [metricsRegistry],
    }),
);
const membersGauge = getOrCreate(
  "sharding_members",
  () =>
    new Gauge({
      name: "sharding_members",
      help: "Live replicas of this install that divide its namespaces, as this replica sees them.",
      registers: [metricsRegistry],
    }),
);
const movesTotal = getOrCreate(
  "sharding_namespace_moves_total",
  () =>
    new Counter({
      name: "sharding_namespace_moves_total",
      help: "Namespaces this replica took (acquired) or let go (released).",
      labelNames: ["direction"],
      registers: [metricsRegistry],
    }),
);

/**
 * A replica Lease unchanged this long is deleted (collectStaleLeases): long past any duration, so that a replica
 * stopped (SIGSTOP, a paused VM) for less comes back to its own Lease.
 */
const STALE_LEASE_MS = 10 * 60_000;

/** A write the fence refused: this replica does not hold the namespace now (APIError so callers back off). */
function notHeld(namespace: string, why: string): APIError {
  return new APIError(0, "Unknown", `namespace ${namespace} is not held by this replica (${why}): write not sent`);
}

export class NamespaceCoordinator {
  readonly name = "namespace-coordinator";
  readonly needLeaderElection: boolean;
  private readonly o: CoordinatorOptions;
  private readonly log: Logger;
  private readonly claimant: Claimant;
  private readonly memberKey: string;
  private readonly fenced: Set<string>;
  private readonly held = new Map<string, HeldState>();
  private readonly open = new Set<string>();
  private readonly conflicts = new Map<string, string>();
  /** When each claim's record last changed, as we saw it (a dead holder's claim is taken only after its duration). */
  private readonly claimSeen = new Map<string, { rv: string; at: number }>();
  private readonly letting = new Set<string>();
  /** When (monotonic ms) this replica was first seen among the live members, since it last was not. */
  private memberSince: number | undefined;
  /** Stale replica Leases being deleted (collectStaleLeases). */
  private readonly collecting = new Set<string>();
  private elector: LeaderElector | undefined;
  private members: Members | undefined;
  private namespaces: Informer | undefined;
  private claims: Informer<Lease> | undefined;
  private claimsByNamespace: Cache | undefined;
  private wake: (() => void) | undefined;
  private dirty = true;
  private signal: AbortSignal | undefined;

  constructor(o: CoordinatorOptions) {
    this.o = o;
    this.log = (o.logger ?? discardLogger).withValues({ install: o.install, identity: o.identity });
    this.needLeaderElection = !o.membership.sharded;
    const m = o.membership;
    this.memberKey = m.sharded ? m.leaseName : m.lease;
    this.claimant = {
      install: o.install,
      identity: o.identity,
      instanceLease: m.sharded ? `${m.namespace}/${m.leaseName}` : m.lease,
      leaseDurationSeconds: m.sharded ? Math.ceil((m.leaseDurationMs ?? 15_000) / 1000) : m.leaseDurationSeconds,
    };
    this.fenced = new Set(o.fencedResources);
    o.fenced.setWriteGuard((namespace, resource) => this.guard(namespace, resource));
  }

  private watcher(): Client {
    return this.o.watchClient ?? this.o.client;
  }

  /** The namespaces this replica acts in now (open to writes). */
  heldNamespaces(): string[] {
    return [...this.open].sort();
  }

  /** Namespaces another install claims, with that install. */
  conflicting(): ReadonlyMap<string, string> {
    return this.conflicts;
  }

  private guard(namespace: string, resource: string): Error | undefined {
    if (!this.fenced.has(resource)) return undefined;
    if (!this.open.has(namespace)) return notHeld(namespace, "not one of its namespaces now");
    if (performance.now() >= this.heldUntil()) return notHeld(namespace, "its Lease was not renewed in time");
    return undefined;
  }

  private heldUntil(): number {
    const m = this.o.membership;
    return m.sharded ? (this.elector?.heldUntil() ?? 0) : m.heldUntil();
  }

  async start(signal: AbortSignal): Promise<void> {
    this.signal = signal;
    const lost = this.startSources();
    try {
      await this.loop(signal, lost);
    } finally {
      await this.shutdown();
    }
  }

  /** Starts the informers (and, sharded, the replica's own Lease); resolves when that Lease is lost. */
  private startSources(): Promise<void> {
    const kick = () => this.kick();
    const c = this.o.candidates;
    const retry = this.o.retryPeriodMs ?? 2_000;
    if ("selector" in c) {
      this.namespaces = new Informer(this.watcher(), Kinds.Namespace, {
        ...(c.selector ? { labelSelector: c.selector } : {}),
      });
      this.namespaces.addEventHandler({ onAdd: kick, onDelete: kick, onUpdate: () => {} });
      this.claims = new Informer<Lease>(this.watcher(), Kinds.Lease, {
        labelSelector: selectorOf(this.o.naming.labels),
      });
    }
    const claimHandler = {
      onAdd: (l: Lease) => this.sawClaim(l),
      onUpdate: (_: Lease, l: Lease) => this.sawClaim(l),
      onDelete: (l: Lease) => {
        this.claimSeen.delete(l.metadata?.namespace ?? "");
        kick();
      },
    };
    this.claims?.addEventHandler(claimHandler);
    this.namespaces?.start();
    this.claims?.start();
    if ("namespaces" in c) this.watchClaimsIn(c.namespaces, claimHandler);
    const m = this.o.membership;
    if (!m.sharded) return new Promise(() => {});
    this.members = new Members({
      client: this.watcher(),
      namespace: m.namespace,
      labelSelector: selectorOf(m.labels),
      logger: this.log.withName("members"),
      onChange: kick,
    });
    this.members.start();
    return new Promise((resolve) => {
      this.elector = new LeaderElector({
        client: this.o.client,
        namespace: m.namespace,
        name: m.leaseName,
        identity: this.o.identity,
        labels: m.labels,
        ...(m.leaseDurationMs ? { leaseDurationMs: m.leaseDurationMs } : {}),
        ...(m.renewDeadlineMs ? { renewDeadlineMs: m.renewDeadlineMs } : {}),
        retryPeriodMs: m.retryPeriodMs ?? retry,
        logger: this.log.withName("lease"),
        callbacks: { onStartedLeading: kick, onStoppedLeading: () => resolve() },
      });
      // Not on `signal`: on a stop the namespaces are let go first, while the Lease still vouches for the replica
      // (shutdown), and only then is the Lease released.
      void this.elector.run();
    });
  }

  /** A list of namespaces: their claims are watched in each (a tenant reads no Lease outside them). */
  private watchClaimsIn(
    namespaces: readonly string[],
    handler: Parameters<Informer<Lease>["addEventHandler"]>[0],
  ): void {
    const cache = new Cache(this.watcher(), {
      scoped: true,
      informerOptions: { labelSelector: selectorOf(this.o.naming.labels) },
    });
    const inf = cache.informerFor<Lease>(Kinds.Lease);
    inf.addEventHandler(handler);
    cache.start();
    for (const ns of namespaces) void cache.addNamespace(ns);
    this.claimsByNamespace = cache;
  }

  private sawClaim(l: Lease): void {
    const ns = l.metadata?.namespace ?? "";
    const rv = l.metadata?.resourceVersion ?? "";
    if (this.claimSeen.get(ns)?.rv !== rv) this.claimSeen.set(ns, { rv, at: performance.now() });
    this.kick();
  }

  private claimOf(ns: string): Lease | undefined {
    const name = this.o.naming.name;
    return this.claimsByNamespace
      ? this.claimsByNamespace.get<Lease>(Kinds.Lease, ns, name)
      : this.claims?.get(ns, name);
  }

  private candidateNamespaces(): Set<string> {
    const c = this.o.candidates;
    if ("namespaces" in c) return new Set(c.namespaces);
    return new Set((this.namespaces?.list() ?? []).map((n) => n.metadata?.name ?? "").filter(Boolean));
  }

  private liveMembers(now: number): string[] {
    if (!this.o.membership.sharded) return now < this.heldUntil() ? [this.memberKey] : [];
    const live = this.members?.live(now) ?? [];
    // Ourselves only while our own Lease is renewed (and once it is acquired).
    const mine = now < this.heldUntil();
    return mine ? [...new Set([...live, this.memberKey])].sort() : live.filter((k) => k !== this.memberKey);
  }

  kick(): void {
    this.dirty = true;
    this.wake?.();
  }

  private async loop(signal: AbortSignal, lost: Promise<void>): Promise<void> {
    let isLost = false;
    void lost.then(() => {
      isLost = true;
      this.kick();
    });
    const retry = this.o.retryPeriodMs ?? 2_000;
    while (!signal.aborted && !isLost) {
      if (this.dirty) {
        this.dirty = false;
        try {
          this.pass(performance.now());
        } catch (err) {
          this.log.error("dividing the namespaces failed", err);
        }
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(done, retry);
        function done(): void {
          clearTimeout(t);
          resolve();
        }
        this.wake = done;
        signal.addEventListener("abort", done, { once: true });
      });
      this.wake = undefined;
      // Expiries are time, not events: look again every retry period.
      this.dirty = true;
    }
    if (isLost && !signal.aborted) throw new Error(`the replica's Lease was lost (${this.claimant.instanceLease})`);
  }

  /**
   * Sharded: deletes replica Leases unchanged for STALE_LEASE_MS (a replica SIGKILLed, OOM-killed or evicted never
   * deletes its own, and each Pod's name makes a new one). Any live replica may; the preconditions make one delete
   * win, and only of the record judged stale (a renewal since makes it fail).
   */
  private collectStaleLeases(now: number): void {
    const m = this.o.membership;
    if (!m.sharded || !this.members) return;
    for (const l of this.members.stale(m.staleLeaseMs ?? STALE_LEASE_MS, now)) {
      if (l.name === m.leaseName || this.collecting.has(l.name)) continue;
      this.collecting.add(l.name);
      void this.o.client
        .delete(Kinds.Lease, m.namespace, l.name, { preconditions: { uid: l.uid, resourceVersion: l.resourceVersion } })
        .then(
          () => this.log.info("deleted a replica's Lease not renewed for long", { lease: l.name }),
          () => undefined, // another replica deleted it first, or it was renewed: nothing to do
        )
        .finally(() => this.collecting.delete(l.name));
    }
  }

  /** One look: give up what is no longer ours, take what is ours and free, let go of what was given up. */
  private pass(now: number): void {
    const members = this.liveMembers(now);
    membersGauge.set(members.length);
    this.collectStaleLeases(now);
    const candidates = this.candidateNamespaces();
    for (const [ns, state] of this.held) {
      const ours = candidates.has(ns) && ownerOf(ns, members) === this.memberKey;
      if ((state === "held" || state === "claimed") && !ours) void this.release(ns);
      if (state === "letting-go") void this.letGo(ns);
    }
    const member = members.includes(this.memberKey);
    this.memberSince = member ? (this.memberSince ?? now) : undefined;
    const joined = member && now - this.memberSince! >= this.joinDelayMs();
    for (const ns of candidates) {
      if (this.held.has(ns)) continue;
      const claim = readClaim(this.claimOf(ns), this.o.naming, this.claimant);
      const ours = joined && ownerOf(ns, members) === this.memberKey;
      if (ours && this.mayTake(ns, claim, now)) void this.acquire(ns, claim);
      // Ours on record but not in hand (a claim written as the namespace moved on): let it go.
      else if (!ours && claim.kind === "mine") {
        this.held.set(ns, "letting-go");
        void this.letGo(ns);
      }
    }
    for (const ns of [...this.conflicts.keys()]) if (!candidates.has(ns)) this.conflicts.delete(ns);
    this.report(candidates.size);
  }

  /**
   * Sharded: a replica takes nothing until it has been a member for half a renewal period (so the next look takes):
   * replicas that start together (a rollout, a scale-up, the benchmark) then see each other's Leases before dividing,
   * instead of each claiming every namespace, starting its watches and handing most of them back at once, a cold
   * start many times over that a CPU-limited replica paid for with its own Lease's renewals.
   */
  private joinDelayMs(): number {
    const m = this.o.membership;
    return m.sharded ? (m.retryPeriodMs ?? this.o.retryPeriodMs ?? 2_000) / 2 : 0;
  }

  private mayTake(ns: string, claim: ClaimState, now: number): boolean {
    if (claim.kind === "other-install") {
      if (this.conflicts.get(ns) !== claim.install)
        this.log.error("namespace claimed by another install: not acting in it", undefined, {
          namespace: ns,
          claimedBy: claim.install,
          holder: claim.holder,
        });
      this.conflicts.set(ns, claim.install);
      return false;
    }
    this.conflicts.delete(ns);
    if (claim.kind !== "member") return true;
    // A holder whose Lease is now ours (an earlier process of this replica, or the leader before us) is gone.
    if (claim.instanceLease === this.claimant.instanceLease) return true;
    const seen = this.claimSeen.get(ns);
    const quiet = !!seen && now - seen.at >= claim.durationMs;
    return quiet && !(this.members?.isLive(claim.instanceLease, now) ?? false);
  }

  private async acquire(ns: string, claim: ClaimState): Promise<void> {
    this.held.set(ns, "acquiring");
    try {
      await takeClaim(this.o.client, ns, this.o.naming, this.claimant, claim.kind === "none" ? undefined : claim.lease);
    } catch (err) {
      this.held.delete(ns);
      this.log.info("could not claim a namespace; trying again", { namespace: ns, error: String(err) });
      return;
    }
    if (this.held.get(ns) !== "acquiring") return;
    this.held.set(ns, "claimed");
    const synced = await this.o.cache.addNamespace(ns, this.signal);
    if (!synced || this.held.get(ns) !== "claimed") return;
    this.held.set(ns, "held");
    this.open.add(ns);
    movesTotal.inc({ direction: "acquired" });
    this.log.info("acting in namespace", { namespace: ns });
    this.kick();
  }

  /** Closes the namespace to writes, waits for those in flight, stops watching it; its claim is let go next. */
  private async release(ns: string): Promise<void> {
    this.held.set(ns, "releasing");
    this.open.delete(ns);
    await this.o.fenced.writesSettled(ns);
    await this.o.cache.removeNamespace(ns);
    this.held.set(ns, "letting-go");
    await this.letGo(ns);
  }

  private async letGo(ns: string): Promise<void> {
    if (this.letting.has(ns)) return;
    this.letting.add(ns);
    try {
      const claim = readClaim(this.claimOf(ns), this.o.naming, this.claimant);
      if (claim.kind === "mine") await releaseClaim(this.o.client, ns, this.o.naming, this.claimant, claim.lease);
      this.held.delete(ns);
      movesTotal.inc({ direction: "released" });
      this.log.info("let go of namespace", { namespace: ns });
      this.kick();
    } catch (err) {
      this.log.info("could not let go of a namespace's claim yet; trying again", { namespace: ns, error: String(err) });
    } finally {
      this.letting.delete(ns);
    }
  }

  private report(candidates: number): void {
    const count = (s: HeldState) => [...this.held.values()].filter((v) => v === s).length;
    namespacesGauge.set({ state: "held" }, count("held"));
    // Taking: the claim being written, or written with its watches syncing.
    namespacesGauge.set({ state: "acquiring" }, count("acquiring") + count("claimed"));
    namespacesGauge.set({ state: "releasing" }, count("releasing") + count("letting-go"));
    namespacesGauge.set({ state: "conflict" }, this.conflicts.size);
    namespacesGauge.set({ state: "candidate" }, candidates);
  }

  /** On a stop: every namespace closed and let go (so others take them at once), then the replica's Lease. */
  private async shutdown(): Promise<void> {
    const lost = performance.now() >= this.heldUntil();
    const held = [...this.held.keys()];
    for (const ns of held) this.open.delete(ns);
    // A lost Lease leaves the claims to expire: another replica may already act in them.
    if (!lost)
      await Promise.race([
        Promise.all(held.map((ns) => this.release(ns))),
        new Promise((r) => setTimeout(r, 10_000).unref()),
      ]);
    await this.elector?.stop();
    const m = this.o.membership;
    if (m.sharded && !lost) await this.o.client.delete(Kinds.Lease, m.namespace, m.leaseName).catch(() => undefined);
    await Promise.all([
      this.members?.stop(),
      this.namespaces?.stop(),
      this.claims?.stop(),
      this.claimsByNamespace?.stop(),
    ]);
    this.report(0);
  }
}

/** `a=b,c=d` from labels. */
function selectorOf(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
}
