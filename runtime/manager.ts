// The manager owns everything a controller process runs: the client, the shared cache, controllers,
// the metrics and probe servers, the leader elector and (optionally) other servers such as webhooks.
// start() brings its parts up in phases (servers, event recorder, caches, runnables that run on every
// replica, then, once elected, the leader-only ones) and, when its signal aborts, the lease is lost or a
// runnable fails, stops them in the reverse order under one deadline (see runnables.ts).
import { BurstWindow } from "./burst.ts";
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
import { exitProcess, quiesceBackgroundCompilers } from "./exit.ts";
import { EventRecorder } from "./events/recorder.ts";
import type { Recorder } from "./events/types.ts";
import type { KubeObject, ResourceKind } from "./kinds.ts";
import type { RESTConfig } from "./kubeconfig.ts";
import { LeaderElector } from "./leaderelection.ts";
import { podNamespace } from "./podnamespace.ts";
import { log as defaultLogger, type Logger } from "./log.ts";
import { authenticatedAuthorizedFilter } from "./metrics/auth.ts";
import { startMetricsServer, type MetricsServerOptions } from "./metrics/server.ts";
import { eventLoopCheck, startProbeServer, type Checker, type ProbeServer } from "./probes.ts";
import { Deadline, Phases, RunnableGroup, Stopper, type Phase, type Runnable } from "./runnables.ts";
import type { RateLimiter } from "./workqueue/index.ts";

interface ManagerOptions {
  /** loadKubeConfig's answer, or a @kubernetes/client-node KubeConfig. */
  kubeConfig: RESTConfig;
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
  /**
   * At shutdown, how long the every-replica runnables (webhook server, ...) and the metrics server keep serving
   * after /readyz starts failing and the leader-only runnables have stopped and released the lease (default
   * 0), so that endpoints move to the other replicas before this one stops answering. Within
   * gracefulShutdownTimeoutMs; skipped when the lease was lost or a runnable failed.
   */
  shutdownDelayMs?: number;
  /** Restrict the cache to one namespace. */
  namespace?: string;
  /**
   * The cache watches the namespaces it is given (Cache.addNamespace: runtime/sharding's NamespaceCoordinator), none
   * at first, one watch per namespace and kind.
   */
  scopedCache?: boolean;
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

export type { Runnable } from "./runnables.ts";

export class LeaderElectionLostError extends Error {
  constructor(id: string) {
    super(`leader election lost (lease ${id})`);
    this.name = "LeaderElectionLostError";
  }
}

export class Manager {
  readonly client: Client;
  readonly cache: Cache;
  /** The cache's client: the manager's, or, scoped, one of its own (see the constructor). */
  private readonly cacheClient: Client;
  readonly log: Logger;
  private readonly o: ManagerOptions;
  /** Started at once on every replica (webhooks, certificate provisioning). */
  private readonly everyReplica = new RunnableGroup("every-replica");
  /** Started once elected (controllers). */
  private readonly leaderOnly = new RunnableGroup("leader-election");
  private readonly readyz = new Map<string, Checker>();
  private shuttingDown = false;
  private readonly shutdownHooks: Array<() => void> = [];
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
      onWarning: apiWarningLogger(this.log.withName("KubeAPIWarningLogger")),
    });
    // Scoped, the cache holds a watch per namespace and kind, each on an HTTP/1.1 connection of its own for its life:
    // on the manager's client (64 sockets) 16 namespaces of 4 kinds took every socket, and every other request (the
    // next namespace's lists, every write) waited for one forever. Its own connections, as many as it watches.
    this.cacheClient = o.scopedCache
      ? new Client(o.kubeConfig, {
          ...(o.userAgent ? { userAgent: o.userAgent } : {}),
          maxSockets: Infinity,
        })
      : this.client;
    this.cache = new Cache(this.cacheClient, {
      ...(o.namespace ? { namespace: o.namespace } : {}),
      ...(o.scopedCache ? { scoped: true } : {}),
      ...(o.syncPeriodMs ? { resyncPeriodMs: o.syncPeriodMs } : {}),
      ...(o.cacheTransform === null ? {} : { transform: o.cacheTransform ?? stripManagedFields }),
      logger: this.log.withName("cache"),
    });
  }

  get kubeConfig(): RESTConfig {
    return this.o.kubeConfig;
  }

  /**
   * The burst of urgent writes every controller of this manager notes and its other writers wait for (the
   * event recorder, reconcile passes that only keep books): see runtime/burst.ts.
   */
  readonly burst = new BurstWindow();

  /** The event recorder (shared; events are written in the background, and wait while a burst is on). */
  getEventRecorder(): Recorder {
    this.recorder ??= new EventRecorder({
      client: this.client,
      holdWhile: this.burst,
      component: this.o.eventSourceComponent ?? "controller-manager",
      logger: this.log.withName("events"),
    });
    return this.recorder;
  }

  add(r: Runnable): void {
    if (this.started) throw new Error(`runnable ${r.name} added after the manager started`);
    (r.needLeaderElection ? this.leaderOnly : this.everyReplica).add(r);
  }

  addHealthzCheck(name: string, check: Checker): void {
    this.healthz.set(name, check);
  }

  addReadyzCheck(name: string, check: Checker): void {
    this.readyz.set(name, check);
  }

  /**
   * `hook` runs once when the manager begins to stop (a signal, a lost lease, a failed runnable), as /readyz
   * starts failing and before the shutdown delay: e.g. a server stops keeping connections alive, so its
   * clients move to other replicas while it still answers them.
   */
  onShutdown(hook: () => void): void {
    this.shutdownHooks.push(hook);
  }

  /** Whether this replica currently holds the lease (always true without leader election). */
  isLeader(): boolean {
    return this.leading;
  }

  /**
   * The monotonic time (performance.now()) until which this replica may act as the leader: its Lease's last renewal
   * plus the renew deadline (Infinity without leader election, 0 when not leading). A write only the leader may make
   * checks it: a paused process wakes up before its renewal loop can notice it is late.
   */
  leaderHeldUntil(): number {
    if (!this.o.leaderElection) return this.leading ? Infinity : 0;
    return this.elector?.heldUntil() ?? 0;
  }

  /** The leader-election Lease (`namespace/name`) and its duration in seconds. */
  leaderLease(): { ref: string; durationSeconds: number } {
    const namespace = this.o.leaderElectionNamespace ?? podNamespace() ?? "default";
    return {
      ref: `${namespace}/${this.o.leaderElectionID ?? ""}`,
      durationSeconds: Math.ceil((this.o.leaseDurationMs ?? 15_000) / 1000),
    };
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
   * should exit non-zero, as controller-runtime's does), with the first runnable's failure, or with a
   * start-up error.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.started) throw new Error("manager already started");
    this.started = true;
    const stopper = new Stopper(signal);
    stopper.signal.addEventListener(
      "abort",
      () => {
        this.shuttingDown = true;
        for (const hook of this.shutdownHooks) {
          try {
            hook();
          } catch (err) {
            this.log.error("shutdown hook failed", err);
          }
        }
      },
      { once: true },
    );
    const phases = new Phases();
    try {
      await this.run(phases, stopper, signal);
    } finally {
      await this.shutdown(phases, stopper);
      stopper.dispose();
    }
    if (stopper.leaseLost) throw new LeaderElectionLostError(this.o.leaderElectionID ?? "");
    if (stopper.failed) throw stopper.failed.error;
  }

  /** Starts the phases in order, then runs until the stopper says why to stop. */
  private async run(phases: Phases, stopper: Stopper, signal: AbortSignal): Promise<void> {
    const onError = (r: Runnable, err: unknown) => this.runnableFailed(stopper, r, err);
    await phases.start(this.serversPhase());
    await phases.start(this.recorderPhase());
    await phases.start({ name: "caches", start: () => this.cache.start(), stop: () => this.cache.stop() });
    await phases.start(this.groupPhase(this.everyReplica, onError));
    // Stopped after the leader phase (phases stop in reverse), before the every-replica runnables.
    await phases.start(this.shutdownDelayPhase(stopper));
    const syncTimeout = AbortSignal.timeout(this.o.cacheSyncTimeoutMs ?? 120_000);
    const synced = await this.cache.waitForSync(AbortSignal.any([stopper.signal, syncTimeout]));
    if (!synced && !stopper.stopping) throw new Error("timed out waiting for caches to sync");
    if (!stopper.stopping) await phases.start(this.leaderPhase(signal, stopper, onError));
    await stopper.stopped();
  }

  private async shutdown(phases: Phases, stopper: Stopper): Promise<void> {
    const grace = this.o.gracefulShutdownTimeoutMs ?? 30_000;
    // A lost lease leaves no grace (as controller-runtime): a successor may already be leading, so
    // nothing still running may keep writing; the process is expected to exit right after.
    const stopGrace = stopper.leaseLost ? 0 : grace;
    this.log.info("Stopping and waiting for runnables", { gracePeriodMs: stopGrace });
    const deadline = new Deadline(stopGrace, () => {
      if (stopGrace > 0)
        this.log.error("graceful shutdown timed out waiting for runnables", undefined, { timeoutMs: grace });
    });
    await phases.stopAll(deadline);
    this.client.close();
    if (this.cacheClient !== this.client) this.cacheClient.close();
    this.log.info("Manager stopped");
  }

  private runnableFailed(stopper: Stopper, r: Runnable, err: unknown): void {
    this.log.error("runnable failed", err, { runnable: r.name });
    const message = `${r.name}: ${err instanceof Error ? err.message : String(err)}`;
    // A runnable failed: stop everything, as controller-runtime does.
    stopper.fail(new Error(message, { cause: err }));
  }

  /** The metrics and probe servers: up first so a slow start can be watched, closed last. */
  private serversPhase(): Phase {
    let close = async () => {};
    return {
      name: "servers",
      start: async () => {
        close = await this.startServers();
      },
      stop: () => close(),
    };
  }

  /** Starts the metrics and probe servers; resolves with what closes them. */
  private async startServers(): Promise<() => Promise<void>> {
    const metrics = await startMetricsServer({
      bindAddress: this.o.metricsBindAddress ?? "0",
      logger: this.log.withName("metrics"),
      ...this.o.metricsServer,
      ...(this.o.metricsAuth ? { filter: authenticatedAuthorizedFilter(this.client) } : {}),
    });
    const probes = await startProbeServer({
      bindAddress: this.o.healthProbeBindAddress ?? "0",
      logger: this.log.withName("probes"),
    }).catch(async (err: unknown) => {
      await metrics.close();
      throw err;
    });
    const loop = this.addChecks(probes);
    this.metricsURL = metrics.url;
    this.probeURL = probes.url;
    if (metrics.url) this.log.info("Serving metrics server", { address: metrics.url });
    if (probes.url) this.log.info("Starting health probe server", { address: probes.url });
    return async () => {
      loop.stop();
      await Promise.all([metrics.close(), probes.close()]);
    };
  }

  /** Registers the built-in and added checks; returns the event-loop check, which must be stopped. */
  private addChecks(probes: ProbeServer): ReturnType<typeof eventLoopCheck> {
    const loop = eventLoopCheck();
    probes.addHealthzCheck("ping", () => undefined);
    probes.addHealthzCheck("eventloop", loop);
    for (const [n, c] of this.healthz) probes.addHealthzCheck(n, c);
    // Failing at once on shutdown: the endpoints controller takes this Pod out of the Services' endpoints
    // while the shutdown delay keeps it serving.
    probes.addReadyzCheck("shutdown", () => {
      if (this.shuttingDown) throw new Error("shutting down");
    });
    probes.addReadyzCheck("informers", () => {
      if (!this.cache.hasSynced()) throw new Error("caches not synced");
    });
    for (const [n, c] of this.readyz) probes.addReadyzCheck(n, c);
    return loop;
  }

  /** A Pod that is going away keeps answering while it leaves the endpoints (see shutdownDelayMs). */
  private shutdownDelayPhase(stopper: Stopper): Phase {
    return {
      name: "shutdown-delay",
      start: () => {},
      stop: async (deadline) => {
        const ms = this.o.shutdownDelayMs ?? 0;
        // A lost lease or a failed runnable leaves nothing to drain for: stop now.
        if (ms <= 0 || stopper.leaseLost || stopper.failed) return;
        this.log.info("Shutdown delay: still serving while endpoints move to other replicas", { delayMs: ms });
        await deadline.wait(new Promise((r) => setTimeout(r, ms)));
      },
    };
  }

  /** Events recorded while stopping are still written: the recorder is flushed after the runnables stop. */
  private recorderPhase(): Phase {
    return {
      name: "event-recorder",
      start: () => {},
      stop: async (deadline) => {
        // Bounded: with the apiserver unreachable, the recorder would retry for about 85 s per event.
        await this.recorder?.flush(deadline.ms).catch(() => undefined);
        this.recorder?.shutdown();
      },
    };
  }

  private groupPhase(group: RunnableGroup, onError: (r: Runnable, err: unknown) => void): Phase {
    return {
      name: group.name,
      start: () => group.start(onError),
      stop: async (deadline) => {
        group.stop();
        await deadline.wait(group.done());
      },
    };
  }

  /** Leader-only runnables, started once elected; stopping them releases the lease afterwards. */
  private leaderPhase(signal: AbortSignal, stopper: Stopper, onError: (r: Runnable, err: unknown) => void): Phase {
    const group = this.groupPhase(this.leaderOnly, onError);
    return {
      name: "leader-election",
      start: () => (this.o.leaderElection ? this.startElection(signal, stopper, onError) : this.becomeLeader(onError)),
      stop: async (deadline) => {
        await group.stop(deadline);
        if (this.elector) {
          this.log.info("Stopping and waiting for leader election runnables");
          await this.elector.stop();
        }
        this.leading = false;
      },
    };
  }

  private startElection(signal: AbortSignal, stopper: Stopper, onError: (r: Runnable, err: unknown) => void): void {
    const id = this.o.leaderElectionID;
    if (!id) throw new Error("leader election requires a leaderElectionID");
    this.elector = new LeaderElector({
      // Its own connections (client-go gives leader election its own client too): renewals must not queue
      // behind a burst of Job creates on the shared pool, or a busy leader would lose its lease.
      client: new Client(this.o.kubeConfig, {
        ...(this.o.userAgent ? { userAgent: `${this.o.userAgent}/leader-election` } : {}),
        ...(this.o.fieldManager ? { fieldManager: this.o.fieldManager } : {}),
        maxSockets: 2,
      }),
      namespace: this.o.leaderElectionNamespace ?? podNamespace() ?? "default",
      name: id,
      ...(this.o.leaseDurationMs ? { leaseDurationMs: this.o.leaseDurationMs } : {}),
      ...(this.o.renewDeadlineMs ? { renewDeadlineMs: this.o.renewDeadlineMs } : {}),
      ...(this.o.retryPeriodMs ? { retryPeriodMs: this.o.retryPeriodMs } : {}),
      logger: this.log.withName("leaderelection"),
      callbacks: {
        onStartedLeading: () => {
          this.log.info("successfully acquired lease", { lease: id });
          this.becomeLeader(onError);
        },
        onStoppedLeading: () => {
          // Leadership also ends when the manager gives it up on stopping; only an unasked-for end is a loss.
          if (stopper.stopping) return;
          this.log.error("leader election lost", undefined, { lease: id });
          stopper.loseLease();
        },
      },
    });
    this.log.info("attempting to acquire leader lease", { lease: id });
    void this.elector.run(signal);
  }

  private becomeLeader(onError: (r: Runnable, err: unknown) => void): void {
    this.leading = true;
    for (const w of this.electedWaiters.splice(0)) w();
    this.leaderOnly.start(onError);
  }
}

class ControllerBuilder {
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
      burst: this.mgr.burst,
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
    if (ac.signal.aborted) exitProcess(1);
    quiesceBackgroundCompilers();
    ac.abort();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  return ac.signal;
}

/** Most distinct API warnings logged; later ones are counted in the log line that says so, once. */
const MAX_LOGGED_WARNINGS = 1_000;

/**
 * controller-runtime's KubeAPIWarningLogger: every API warning the manager's client receives is logged,
 * each distinct text once (a deprecated field warned on every write must not flood the log).
 */
export function apiWarningLogger(log: Logger): (warning: string, request: string) => void {
  const seen = new Set<string>();
  let full = false;
  return (warning, request) => {
    if (seen.has(warning)) return;
    if (seen.size >= MAX_LOGGED_WARNINGS) {
      if (!full) log.info("more distinct API warnings than are logged; the rest are not", { max: MAX_LOGGED_WARNINGS });
      full = true;
      return;
    }
    seen.add(warning);
    log.info(warning, { request });
  };
}
