// A controller: event sources enqueue object keys, N workers take keys off a rate-limited work queue
// and call the reconciler, and the result decides what happens next (controller-runtime semantics):
// error → rate-limited retry (RetryNoLaterThan: capped); requeueAfter → forget + addAfter; requeue → rate-limited;
// else forget.
import { randomUUID } from "node:crypto";
import { Counter, Gauge, Histogram } from "prom-client";
import type { BurstWindow } from "./burst.ts";
import type { SharedInformer } from "./cache/informer.ts";
import { controllerOf, type KubeObject, type ResourceKind } from "./kinds.ts";
import type { Logger } from "./log.ts";
import { getOrCreate, initCounter, initHistogram, metricsRegistry } from "./metrics/registry.ts";
import { RateLimitingQueue, type RateLimiter } from "./workqueue/index.ts";

export interface Request {
  namespace?: string;
  name: string;
}

export interface Result {
  /** Reconcile again after this many milliseconds (the rate limiter is reset). */
  requeueAfterMs?: number;
  /** Reconcile again soon, rate-limited. */
  requeue?: boolean;
  /**
   * Reconcile again once the burst of urgent writes is over (ctx.burst went quiet): the pass held back
   * writes that can wait. Independent of requeueAfterMs (both may be asked).
   */
  requeueWhenQuiet?: boolean;
  /**
   * Reconcile again once the controller has spare capacity (fewer keys waiting than it has workers, and no burst):
   * the pass held back a write that decides nothing (it only reports what the pass saw), so that the passes
   * that decide come first. Controller-runtime's priority queue gives the initial list's events low priority
   * for the same reason. Independent of requeueAfterMs (both may be asked).
   */
  requeueWhenIdle?: boolean;
}

/**
 * A reconcile error whose retry must come no later than `notLaterThanMs`: backed off as any error, but capped, for a
 * reconciler with work due at a known time (a failed write must not make the next scheduled one late).
 */
export class RetryNoLaterThan extends Error {
  readonly notLaterThanMs: number;

  constructor(message: string, notLaterThanMs: number) {
    super(message);
    this.name = "RetryNoLaterThan";
    this.notLaterThanMs = notLaterThanMs;
  }
}

export interface ReconcileContext {
  log: Logger;
  reconcileID: string;
  /** Aborted when the manager shuts down; long operations should give up. */
  signal: AbortSignal;
  /**
   * How many other keys are waiting in the queue right now. Lets a reconciler put urgent writes first
   * under load (and defer bookkeeping to a later pass). Absent when reconcile is called directly.
   */
  queueLength?: () => number;
  /**
   * The manager's burst of urgent writes (runtime/burst.ts): a reconcile notes each urgent write it makes,
   * and while the burst is active leaves writes that can wait to a pass after it (result.requeueWhenQuiet).
   * Absent when reconcile is called directly.
   */
  burst?: { active(): boolean; note(): void };
}

export interface Reconciler {
  reconcile(req: Request, ctx: ReconcileContext): Promise<Result | void>;
}

/** Filters events before they enqueue anything (controller-runtime's predicate.Funcs). */
export interface Predicate<T extends KubeObject = KubeObject> {
  create?(obj: Readonly<T>): boolean;
  update?(oldObj: Readonly<T>, newObj: Readonly<T>): boolean;
  delete?(obj: Readonly<T>): boolean;
}

export type MapFunc<T extends KubeObject = KubeObject> = (obj: Readonly<T>) => Request[];

interface ControllerOptions {
  maxConcurrentReconciles?: number;
  /** Shared with the manager's other writers (the event recorder): see ReconcileContext.burst. */
  burst?: BurstWindow;
  rateLimiter?: RateLimiter<string>;
  logger: Logger;
}

const reconcileTotal = getOrCreate(
  "controller_runtime_reconcile_total",
  () =>
    new Counter({
      name: "controller_runtime_reconcile_total",
      help: "Total number of reconciliations per controller",
      labelNames: ["controller", "result"],
      registers: [metricsRegistry],
    }),
);
const reconcileErrors = getOrCreate(
  "controller_runtime_reconcile_errors_total",
  () =>
    new Counter({
      name: "controller_runtime_reconcile_errors_total",
      help: "Total number of reconciliation errors per controller",
      labelNames: ["controller"],
      registers: [metricsRegistry],
    }),
);
const reconcilePanics = getOrCreate(
  "controller_runtime_reconcile_panics_total",
  () =>
    new Counter({
      name: "controller_runtime_reconcile_panics_total",
      help: "Total number of reconciliation panics (non-Error throws) per controller",
      labelNames: ["controller"],
      registers: [metricsRegistry],
    }),
);
const reconcileTime = getOrCreate(
  "controller_runtime_reconcile_time_seconds",
  () =>
    new Histogram({
      name: "controller_runtime_reconcile_time_seconds",
      help: "Length of time per reconciliation per controller",
      labelNames: ["controller"],
      buckets: [
        0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5,
        1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
      ],
      registers: [metricsRegistry],
    }),
);
const maxConcurrent = getOrCreate(
  "controller_runtime_max_concurrent_reconciles",
  () =>
    new Gauge({
      name: "controller_runtime_max_concurrent_reconciles",
      help: "Maximum number of concurrent reconciles per controller",
      labelNames: ["controller"],
      registers: [metricsRegistry],
    }),
);
const activeWorkers = getOrCreate(
  "controller_runtime_active_workers",
  () =>
    new Gauge({
      name: "controller_runtime_active_workers",
      help: "Number of currently used workers per controller",
      labelNames: ["controller"],
      registers: [metricsRegistry],
    }),
);

const deferredKeys = getOrCreate(
  "controller_runtime_deferred_reconciles",
  () =>
    new Gauge({
      name: "controller_runtime_deferred_reconciles",
      help: "Reconciles waiting for spare capacity (work that decides nothing, behind the work that does) per controller",
      labelNames: ["controller"],
      registers: [metricsRegistry],
    }),
);

/** The `result` label values of controller_runtime_reconcile_total. */
const RECONCILE_RESULTS = ["error", "requeue", "requeue_after", "success"] as const;

function requestKey(r: Request): string {
  return r.namespace ? `${r.namespace}/${r.name}` : r.name;
}

function keyToRequest(key: string): Request {
  const i = key.indexOf("/");
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

export class Controller {
  readonly name: string;
  readonly queue: RateLimitingQueue<string>;
  private readonly reconciler: Reconciler;
  private readonly workers: number;
  private readonly log: Logger;
  private readonly burst: BurstWindow | undefined;
  /** Keys waiting for the burst to end (requeueWhenQuiet); added to the queue together when it does. */
  private readonly parked = new Set<string>();
  /** Keys waiting for spare capacity (requeueWhenIdle), oldest first; added a few at a time. */
  private readonly idle = new Set<string>();
  private idleWake: Promise<void> | undefined;
  private started = false;

  constructor(name: string, reconciler: Reconciler, o: ControllerOptions) {
    this.name = name;
    this.burst = o.burst;
    this.reconciler = reconciler;
    this.workers = Math.max(1, o.maxConcurrentReconciles ?? 1);
    this.log = o.logger.withValues({ controller: name });
    this.queue = new RateLimitingQueue<string>(o.rateLimiter ? { name, rateLimiter: o.rateLimiter } : { name });
    this.initMetrics();
  }

  /**
   * Every series of this controller exists from the start, at 0 (controller-runtime's initMetrics):
   * a counter that has not counted yet would otherwise be missing from /metrics, and dashboards and
   * alerts would see "no data" instead of 0.
   */
  private initMetrics(): void {
    const controller = this.name;
    for (const result of RECONCILE_RESULTS) initCounter(reconcileTotal, { controller, result });
    initCounter(reconcileErrors, { controller });
    initCounter(reconcilePanics, { controller });
    initHistogram(reconcileTime, { controller });
    maxConcurrent.set({ controller }, this.workers);
    activeWorkers.set({ controller }, 0);
    deferredKeys.set({ controller }, 0);
  }

  /** Enqueue what `map` returns for every event on `informer` that passes the predicates. */
  watch<T extends KubeObject>(informer: SharedInformer<T>, map: MapFunc<T>, predicates: Predicate<T>[] = []): void {
    const enqueue = (obj: Readonly<T>) => {
      for (const r of map(obj)) this.queue.add(requestKey(r));
    };
    informer.addEventHandler({
      onAdd: (o) => predicates.every((p) => p.create?.(o) ?? true) && enqueue(o),
      onUpdate: (a, b) => {
        if (!predicates.every((p) => p.update?.(a, b) ?? true)) return;
        enqueue(b);
        // An object that moved to another owner must wake the old one too.
        if (a !== b) enqueue(a);
      },
      onDelete: (o) => predicates.every((p) => p.delete?.(o) ?? true) && enqueue(o),
    });
  }

  /** Enqueue a request directly (e.g. from a test or another source). */
  enqueue(r: Request): void {
    this.queue.add(requestKey(r));
  }

  /**
   * Run the workers until `signal` aborts; then stop taking work and wait up to `drainMs` for
   * in-flight reconciles.
   */
  async start(signal: AbortSignal, drainMs = 30_000): Promise<void> {
    if (this.started) throw new Error(`controller ${this.name} already started`);
    this.started = true;
    this.log.info("Starting workers", { "worker count": this.workers });
    const workers = Array.from({ length: this.workers }, () => this.worker(signal));
    await new Promise<void>((resolve) =>
      signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true }),
    );
    this.log.info("Shutdown signal received, waiting for all workers to finish");
    this.queue.shutDown();
    const drained = Promise.all(workers).then(() => true);
    const timedOut = new Promise<boolean>((r) => setTimeout(() => r(false), drainMs).unref());
    if (!(await Promise.race([drained, timedOut]))) {
      this.log.error("Timed out waiting for in-flight reconciles", undefined, { timeoutMs: drainMs });
    } else {
      this.log.info("All workers finished");
    }
  }

  private async worker(signal: AbortSignal): Promise<void> {
    for (;;) {
      const item = await this.queue.get();
      if (item.shutdown) return;
      if (signal.aborted) {
        // Shutting down: do not start new work.
        this.queue.done(item.key);
        continue;
      }
      activeWorkers.inc({ controller: this.name });
      try {
        await this.process(item.key, signal);
      } finally {
        activeWorkers.dec({ controller: this.name });
        this.queue.done(item.key);
        this.releaseIdle();
      }
    }
  }

  private async process(key: string, signal: AbortSignal): Promise<void> {
    const req = keyToRequest(key);
    const reconcileID = randomUUID();
    const log = this.log.withValues({ namespace: req.namespace ?? "", name: req.name, reconcileID });
    const started = performance.now();
    let result: Result | void;
    try {
      result = await this.reconciler.reconcile(req, {
        log,
        reconcileID,
        signal,
        queueLength: () => this.queue.len(),
        ...(this.burst ? { burst: this.burst } : {}),
      });
    } catch (err) {
      // Never let a reconcile take the process down; back off and retry.
      if (!(err instanceof Error)) reconcilePanics.inc({ controller: this.name });
      reconcileErrors.inc({ controller: this.name });
      reconcileTotal.inc({ controller: this.name, result: "error" });
      log.error("Reconciler error", err);
      this.queue.addRateLimited(key, err instanceof RetryNoLaterThan ? err.notLaterThanMs : undefined);
      return;
    } finally {
      reconcileTime.observe({ controller: this.name }, (performance.now() - started) / 1000);
    }
    if (result?.requeueWhenQuiet) this.park(key);
    if (result?.requeueWhenIdle) {
      this.idle.add(key);
      deferredKeys.set({ controller: this.name }, this.idle.size);
    }
    if (result?.requeueAfterMs !== undefined && result.requeueAfterMs > 0) {
      this.queue.forget(key);
      this.queue.addAfter(key, result.requeueAfterMs);
      reconcileTotal.inc({ controller: this.name, result: "requeue_after" });
    } else if (result?.requeue) {
      this.queue.addRateLimited(key);
      reconcileTotal.inc({ controller: this.name, result: "requeue" });
    } else {
      this.queue.forget(key);
      reconcileTotal.inc({ controller: this.name, result: "success" });
    }
  }

  /**
   * Hand idle-parked keys to the queue while it has room: at most as many as there are workers at a time, so that
   * a key that needs a decision (a slot's wake-up, an event) never waits behind more than one round of them.
   */
  private releaseIdle(): void {
    if (this.idle.size === 0 || this.queue.shuttingDown()) return;
    if (this.burst?.active()) {
      this.idleWake ??= this.burst.whenQuiet().then(() => {
        this.idleWake = undefined;
        this.releaseIdle();
      });
      return;
    }
    let room = this.workers - this.queue.len();
    for (const k of this.idle) {
      if (room-- <= 0) break;
      this.idle.delete(k);
      this.queue.add(k);
    }
    deferredKeys.set({ controller: this.name }, this.idle.size);
  }

  /** Hold `key` until the burst is over; one wake-up adds every parked key. */
  private park(key: string): void {
    if (!this.burst) {
      this.queue.add(key);
      return;
    }
    const first = this.parked.size === 0;
    this.parked.add(key);
    if (!first) return;
    void this.burst.whenQuiet().then(() => {
      for (const k of this.parked) this.queue.add(k);
      this.parked.clear();
    });
  }
}

/** Map an owned object to its controller owner of `ownerKind` (EnqueueRequestForOwner, OnlyControllerOwner). */
export function enqueueForOwner(ownerKind: ResourceKind): MapFunc {
  return (obj) => {
    const ref = controllerOf(obj as KubeObject);
    if (!ref || ref.kind !== ownerKind.kind) return [];
    const group = ref.apiVersion.includes("/") ? ref.apiVersion.split("/")[0] : "";
    if (group !== ownerKind.group) return [];
    return [ownerKind.namespaced ? { namespace: obj.metadata?.namespace ?? "", name: ref.name } : { name: ref.name }];
  };
}

/** Map an object to itself (EnqueueRequestForObject). */
export const enqueueForObject: MapFunc = (obj) => [
  obj.metadata?.namespace
    ? { namespace: obj.metadata.namespace, name: obj.metadata.name ?? "" }
    : { name: obj.metadata?.name ?? "" },
];
