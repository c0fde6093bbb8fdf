// The manager owns everything a controller process runs: the client, the shared cache, controllers,
// the metrics and probe servers, the leader elector and (optionally) other servers such as webhooks.
// start() runs until its signal aborts and then shuts down in order: stop taking work, let in-flight
// reconciles finish within a deadline, release the Lease, stop the caches, close the servers.
import type { KubeConfig } from "@kubernetes/client-node";
import { Cache } from "./cache/cache.ts";
import { stripManagedFields } from "./cache/informer.ts";
import { Client } from "./client.ts";
import {
  Controller,
  enqueueForObject,
  enqueueForOwner,
  type MapFunc,
  type Predicate,
  type Reconciler,
} from "./controller.ts";
import { EventRecorder } from "./events/recorder.ts";
import type { Recorder } from "./events/types.ts";
import type { KubeObject, ResourceKind } from "./kinds.ts";
import { LeaderElector } from "./leaderelection.ts";
import { log as defaultLogger, type Logger } from "./log.ts";
import { authenticatedAuthorizedFilter } from "./metrics/auth.ts";
import { startMetricsServer, type MetricsServerOptions } from "./metrics/server.ts";
import { eventLoopCheck, startProbeServer, type Checker, type ProbeServer } from "./probes.ts";
import type { RateLimiter } from "./workqueue/index.ts";

export interface ManagerOptions {
  kubeConfig: KubeConfig;
  logger?: Logger;
  /** "0" (default) disables; ":8080", "127.0.0.1:0", ... */
  metricsBindAddress?: string;
  /** Extra options for the metrics server (TLS, an authn/authz filter). */
  metricsServer?: Pick<MetricsServerOptions, "tls" | "filter">;
  /** Authenticate (TokenReview) and authorize (SubjectAccessReview) scrapers (--metrics-secure). */
  metricsAuth?: boolean;
  /** "0" (default) disables. */
  healthProbeBindAddress?: string;
  leaderElection?: boolean;
  leaderElectionID?: string;
  /** Namespace of the Lease (default: the pod's namespace, else "default"). */
  leaderElectionNamespace?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Deadline for in-flight reconciles and runnables at shutdown (default 30 s). */
  gracefulShutdownTimeoutMs?: number;
  /** Restrict the cache to one namespace. */
  namespace?: string;
  /** Periodic resync of every informer (level-triggered safety net); 0/undefined = off. */
  syncPeriodMs?: number;
  /**
   * Applied to every cached object; default stripManagedFields (the controllers never read them and
   * they are a large share of every object). null keeps objects whole.
   */
  cacheTransform?: (<T extends KubeObject>(obj: T) => T) | null;
  /** Deadline for the caches' initial sync (default 2 min). */
  cacheSyncTimeoutMs?: number;
  /** The field manager of the manager's writes (default: the client's generic one). */
  fieldManager?: string;
  userAgent?: string;
  /** Component name for events (source.component). */
  eventSourceComponent?: string;
}

/** Something the manager runs: until its signal aborts. */
export interface Runnable {
  name: string;
  /** Leader-only runnables (controllers) start once elected; others start at once. */
  needLeaderElection: boolean;
  start(signal: AbortSignal): Promise<void>;
}

export class LeaderElectionLostError extends Error {
  constructor(id: string) {
    super(`leader election lost (lease ${id})`);
    this.name = "LeaderElectionLostError";
  }
}

export class Manager {
  readonly client: Client;
  readonly cache: Cache;
  readonly log: Logger;
  private readonly o: ManagerOptions;
  private readonly runnables: Runnable[] = [];
  private readonly readyz = new Map<string, Checker>();
  private readonly healthz = new Map<string, Checker>();
  private recorder: EventRecorder | undefined;
  private elector: LeaderElector | undefined;
  private leading = false;
  private electedWaiters: Array<() => void> = [];
  private started = false;
  /** Where the metrics / probe servers listen once started (undefined when disabled). */
  metricsURL: string | undefined;
  probeURL: string | undefined;

  constructor(o: ManagerOptions) {
    this.o = o;
    this.log = (o.logger ?? defaultLogger).withName("controller-runtime.manager");
    this.client = new Client(o.kubeConfig, {
      ...(o.userAgent ? { userAgent: o.userAgent } : {}),
      ...(o.fieldManager ? { fieldManager: o.fieldManager } : {}),
    });
    this.cache = new Cache(this.client, {
      ...(o.namespace ? { namespace: o.namespace } : {}),
      ...(o.syncPeriodMs ? { resyncPeriodMs: o.syncPeriodMs } : {}),
      ...(o.cacheTransform === null ? {} : { transform: o.cacheTransform ?? stripManagedFields }),
      logger: this.log.withName("cache"),
    });
  }

  get kubeConfig(): KubeConfig {
    return this.o.kubeConfig;
  }

  /** The event recorder (shared; events are written in the background). */
  getEventRecorder(): Recorder {
    this.recorder ??= new EventRecorder({
      client: this.client,
      component: this.o.eventSourceComponent ?? "controller-manager",
      logger: this.log.withName("events"),
    });
    return this.recorder;
  }

  add(r: Runnable): void {
    if (this.started) throw new Error(`runnable ${r.name} added after the manager started`);
    this.runnables.push(r);
  }

  addHealthzCheck(name: string, check: Checker): void {
    this.healthz.set(name, check);
  }

  addReadyzCheck(name: string, check: Checker): void {
    this.readyz.set(name, check);
  }

  /** Whether this replica currently holds the lease (always true without leader election). */
  isLeader(): boolean {
    return this.leading;
  }

  /** Resolves when this replica becomes leader (at once without leader election). */
  elected(): Promise<void> {
    if (this.leading) return Promise.resolve();
    return new Promise((r) => this.electedWaiters.push(r));
  }

  newControllerManagedBy(): ControllerBuilder {
    return new ControllerBuilder(this);
  }

  /**
   * Run until `signal` aborts. Rejects with LeaderElectionLostError if the lease is lost (the process
   * should exit non-zero, as controller-runtime's does), or with a start-up error.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.started) throw new Error("manager already started");
    this.started = true;
    const grace = this.o.gracefulShutdownTimeoutMs ?? 30_000;
    const runCtl = new AbortController(); // stops leader-only runnables
    const lost = new AbortController();
    let runnableError: unknown;
    const failed = new AbortController(); // a runnable failed: stop everything, as controller-runtime does
    const stopAll = () => runCtl.abort();
    signal.addEventListener("abort", stopAll, { once: true });

    const metrics = await startMetricsServer({
      bindAddress: this.o.metricsBindAddress ?? "0",
      logger: this.log.withName("metrics"),
      ...this.o.metricsServer,
      ...(this.o.metricsAuth ? { filter: authenticatedAuthorizedFilter(this.client) } : {}),
    });
    const probes: ProbeServer = await startProbeServer({
      bindAddress: this.o.healthProbeBindAddress ?? "0",
      logger: this.log.withName("probes"),
    });
    const loop = eventLoopCheck();
    probes.addHealthzCheck("ping", () => undefined);
    probes.addHealthzCheck("eventloop", loop);
    for (const [n, c] of this.healthz) probes.addHealthzCheck(n, c);
    probes.addReadyzCheck("informers", () => {
      if (!this.cache.hasSynced()) throw new Error("caches not synced");
    });
    for (const [n, c] of this.readyz) probes.addReadyzCheck(n, c);
    this.metricsURL = metrics.url;
    this.probeURL = probes.url;
    if (metrics.url) this.log.info("Serving metrics server", { address: metrics.url });
    if (probes.url) this.log.info("Starting health probe server", { address: probes.url });

    const running: Promise<void>[] = [];
    const startRunnables = (leaderOnly: boolean) => {
      for (const r of this.runnables.filter((x) => x.needLeaderElection === leaderOnly)) {
        running.push(
          r.start(runCtl.signal).catch((err: unknown) => {
            this.log.error("runnable failed", err, { runnable: r.name });
            runnableError ??= new Error(`${r.name}: ${err instanceof Error ? err.message : String(err)}`, {
              cause: err,
            });
            failed.abort();
          }),
        );
      }
    };

    try {
      startRunnables(false);
      this.cache.start();
      const syncTimeout = AbortSignal.timeout(this.o.cacheSyncTimeoutMs ?? 120_000);
      const synced = await this.cache.waitForSync(AbortSignal.any([signal, syncTimeout]));
      if (!synced && !signal.aborted) throw new Error("timed out waiting for caches to sync");

      if (!signal.aborted) {
        if (this.o.leaderElection) {
          const id = this.o.leaderElectionID;
          if (!id) throw new Error("leader election requires a leaderElectionID");
          this.elector = new LeaderElector({
            kubeConfig: this.o.kubeConfig,
            namespace: this.o.leaderElectionNamespace ?? podNamespace() ?? "default",
            name: id,
            ...(this.o.leaseDurationMs ? { leaseDurationMs: this.o.leaseDurationMs } : {}),
            ...(this.o.renewDeadlineMs ? { renewDeadlineMs: this.o.renewDeadlineMs } : {}),
            ...(this.o.retryPeriodMs ? { retryPeriodMs: this.o.retryPeriodMs } : {}),
            logger: this.log.withName("leaderelection"),
            callbacks: {
              onStartedLeading: () => {
                this.log.info("successfully acquired lease", { lease: id });
                this.becomeLeader(startRunnables);
              },
              onStoppedLeading: () => {
                if (!signal.aborted) {
                  this.log.error("leader election lost", undefined, { lease: id });
                  lost.abort();
                }
              },
            },
          });
          this.log.info("attempting to acquire leader lease", { lease: id });
          void this.elector.run(signal);
        } else {
          this.becomeLeader(startRunnables);
        }
      }

      await new Promise<void>((resolve) => {
        if (signal.aborted || lost.signal.aborted || failed.signal.aborted) return resolve();
        signal.addEventListener("abort", () => resolve(), { once: true });
        lost.signal.addEventListener("abort", () => resolve(), { once: true });
        failed.signal.addEventListener("abort", () => resolve(), { once: true });
      });
    } finally {
      // A lost lease leaves no grace (as controller-runtime): a successor may already be leading, so
      // nothing still running may keep writing; the process is expected to exit right after.
      const stopGrace = lost.signal.aborted ? 0 : grace;
      this.log.info("Stopping and waiting for runnables", { gracePeriodMs: stopGrace });
      runCtl.abort();
      const deadline = new Promise<boolean>((r) => setTimeout(() => r(false), stopGrace).unref());
      const done = await Promise.race([Promise.all(running).then(() => true), deadline]);
      if (!done && stopGrace > 0)
        this.log.error("graceful shutdown timed out waiting for runnables", undefined, { timeoutMs: grace });
      if (this.elector) {
        this.log.info("Stopping and waiting for leader election runnables");
        await this.elector.stop();
      }
      this.leading = false;
      await this.cache.stop();
      // Bounded: with the apiserver unreachable, the recorder would retry for about 85 s per event.
      await this.recorder?.flush(stopGrace).catch(() => undefined);
      this.recorder?.shutdown();
      loop.stop();
      await Promise.all([metrics.close(), probes.close()]);
      this.client.close();
      signal.removeEventListener("abort", stopAll);
      this.log.info("Manager stopped");
    }
    if (lost.signal.aborted) throw new LeaderElectionLostError(this.o.leaderElectionID ?? "");
    if (runnableError) throw runnableError;
  }

  private becomeLeader(startRunnables: (leaderOnly: boolean) => void): void {
    this.leading = true;
    for (const w of this.electedWaiters.splice(0)) w();
    startRunnables(true);
  }
}

function podNamespace(): string | undefined {
  return process.env.POD_NAMESPACE || undefined;
}

export class ControllerBuilder {
  private readonly mgr: Manager;
  private name: string | undefined;
  private forKind: ResourceKind | undefined;
  private forPredicates: Predicate[] = [];
  private readonly sources: Array<{ kind: ResourceKind; map: MapFunc | "owner"; predicates: Predicate[] }> = [];
  private maxConcurrentReconciles = 1;
  private rateLimiter: RateLimiter<string> | undefined;

  constructor(mgr: Manager) {
    this.mgr = mgr;
  }

  named(name: string): this {
    this.name = name;
    return this;
  }

  for(kind: ResourceKind, o: { predicates?: Predicate[] } = {}): this {
    this.forKind = kind;
    this.forPredicates = o.predicates ?? [];
    return this;
  }

  /** Events on owned objects enqueue their controller owner (of the `for` kind). */
  owns(kind: ResourceKind, o: { predicates?: Predicate[] } = {}): this {
    this.sources.push({ kind, map: "owner", predicates: o.predicates ?? [] });
    return this;
  }

  watches(kind: ResourceKind, map: MapFunc, o: { predicates?: Predicate[] } = {}): this {
    this.sources.push({ kind, map, predicates: o.predicates ?? [] });
    return this;
  }

  withOptions(o: { maxConcurrentReconciles?: number; rateLimiter?: RateLimiter<string> }): this {
    if (o.maxConcurrentReconciles !== undefined) this.maxConcurrentReconciles = o.maxConcurrentReconciles;
    if (o.rateLimiter) this.rateLimiter = o.rateLimiter;
    return this;
  }

  complete(reconciler: Reconciler): Controller {
    const forKind = this.forKind;
    if (!forKind) throw new Error("controller builder: for(kind) is required");
    const name = this.name ?? forKind.kind.toLowerCase();
    const ctl = new Controller(name, reconciler, {
      logger: this.mgr.log.withName(name),
      maxConcurrentReconciles: this.maxConcurrentReconciles,
      ...(this.rateLimiter ? { rateLimiter: this.rateLimiter } : {}),
    });
    ctl.watch(this.mgr.cache.informerFor<KubeObject>(forKind), enqueueForObject, this.forPredicates);
    for (const s of this.sources) {
      const map = s.map === "owner" ? enqueueForOwner(forKind) : s.map;
      ctl.watch(this.mgr.cache.informerFor<KubeObject>(s.kind), map, s.predicates);
    }
    this.mgr.add({ name: `controller/${name}`, needLeaderElection: true, start: (sig) => ctl.start(sig) });
    return ctl;
  }
}

/**
 * An AbortSignal that aborts on the first SIGTERM or SIGINT; a second one exits at once with code 1
 * (controller-runtime's SetupSignalHandler).
 */
export function setupSignalHandler(): AbortSignal {
  const ac = new AbortController();
  const onSignal = () => {
    if (ac.signal.aborted) process.exit(1);
    ac.abort();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  return ac.signal;
}
