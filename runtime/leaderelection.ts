// Leader election on a coordination.k8s.io/v1 Lease, following client-go's tools/leaderelection with a
// LeaseLock, so a TypeScript manager and a Go one can even contend for the same Lease.
//
// Safety rests on one rule: a lease held by someone else is trusted to be valid until *our* monotonic
// clock says leaseDuration has passed since we last saw its record change. Remote timestamps
// (renewTime) are written for humans and for other implementations; clocks of different machines
// disagree, so they never decide expiry here.
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { performance } from "node:perf_hooks";
import { Gauge } from "prom-client";
import type { Client } from "./client.ts";
import { isConflict, isNotFound } from "./errors.ts";
import { type KubeObject, Kinds } from "./kinds.ts";
import { discardLogger, type Logger } from "./log.ts";
import { microTime } from "./metatime.ts";
import { getOrCreate, metricsRegistry } from "./metrics/registry.ts";

const DEFAULT_LEASE_DURATION_MS = 15_000;
const DEFAULT_RENEW_DEADLINE_MS = 10_000;
const DEFAULT_RETRY_PERIOD_MS = 2_000;
/** client-go's JitterFactor: acquire attempts are spread over retryPeriod * [1, 2.2). */
const JITTER_FACTOR = 1.2;

/** coordination.k8s.io/v1 LeaseSpec as JSON (timestamps are metav1.MicroTime strings). */
interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number;
}

interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

interface LeaderCallbacks {
  /**
   * Called once the lease is acquired. `signal` aborts when leadership ends (lost, or stop requested).
   * If a promise is returned, a graceful stop keeps renewing the lease until it settles and only then
   * releases it, so a successor never overlaps with work that is still winding down. That promise
   * must therefore not wait for stop() itself.
   */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /**
   * Called once when leadership ends, whether lost or given up by stop() (after the release), just
   * before run() resolves; never if leadership was never held.
   */
  onStoppedLeading(): void | Promise<void>;
  /** Called when the observed holder changes to a new non-empty identity (ourselves included). */
  onNewLeader?(identity: string): void | Promise<void>;
}

interface LeaderElectorOptions {
  /**
   * The runtime's client (the manager passes its own): lease requests share its connections, fail
   * with its APIError and are counted in rest_client_requests_total like every other request.
   */
  client: Client;
  namespace: string;
  /** Name of the Lease object. */
  name: string;
  /** Unique per candidate; default `<hostname>_<uuid>`. */
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Labels of the Lease when this elector creates it (e.g. so that the replicas of a sharded install find each other's). */
  labels?: Readonly<Record<string, string>>;
  /** On stop(), hand the lease over at once instead of letting it expire (default true). */
  releaseOnCancel?: boolean;
  callbacks: LeaderCallbacks;
  logger?: Logger;
}

function masterStatus(): Gauge<"name"> {
  return getOrCreate(
    "leader_election_master_status",
    () =>
      new Gauge({
        name: "leader_election_master_status",
        help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
        labelNames: ["name"],
        registers: [metricsRegistry],
      }),
  );
}

/** For debug records, where an error is a detail rather than the subject. */
function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

// Like client-go's comparison of the raw record: any change of these fields (a renew by the holder
// included) restarts the expiry clock; other metadata edits do not.
function recordKey(spec: LeaseSpec | undefined): string {
  return JSON.stringify([
    spec?.holderIdentity ?? "",
    spec?.leaseDurationSeconds ?? 0,
    spec?.acquireTime ?? null,
    spec?.renewTime ?? null,
    spec?.leaseTransitions ?? 0,
  ]);
}

function validate(leaseMs: number, renewMs: number, retryMs: number): void {
  for (const [k, v] of [
    ["leaseDurationMs", leaseMs],
    ["renewDeadlineMs", renewMs],
    ["retryPeriodMs", retryMs],
  ] as const) {
    if (!Number.isFinite(v) || v <= 0) throw new Error(`leader election: ${k} must be a positive number, got ${v}`);
  }
  if (!(renewMs < leaseMs)) {
    throw new Error(`leader election: leaseDurationMs (${leaseMs}) must be greater than renewDeadlineMs (${renewMs})`);
  }
  if (!(retryMs * JITTER_FACTOR < renewMs)) {
    throw new Error(
      `leader election: renewDeadlineMs (${renewMs}) must be greater than retryPeriodMs*${JITTER_FACTOR} (${retryMs * JITTER_FACTOR})`,
    );
  }
}

export class LeaderElector {
  readonly identity: string;
  readonly name: string;
  readonly namespace: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  private readonly releaseOnCancel: boolean;
  private readonly labels: Readonly<Record<string, string>> | undefined;
  /** performance.now() when the last successful acquire or renewal was sent; 0 while not leading. */
  private renewedAt = 0;
  private readonly callbacks: LeaderCallbacks;
  private readonly log: Logger;
  private readonly client: Client;
  private readonly gauge: Gauge<"name">;

  private observedLease: Lease | undefined;
  private observedKey = "";
  /** performance.now() when the observed record last changed. */
  private observedTime = 0;
  private reportedLeader = "";
  private leading = false;
  private stopRequested = false;
  private running: Promise<void> | undefined;
  private leadingAbort: AbortController | undefined;
  private workloadSettled = true;
  private waiter: (() => void) | undefined;

  constructor(opts: LeaderElectorOptions) {
    if (!opts.name) throw new Error("leader election: name is required");
    if (!opts.namespace) throw new Error("leader election: namespace is required");
    this.leaseDurationMs = opts.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS;
    this.retryPeriodMs = opts.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS;
    validate(this.leaseDurationMs, this.renewDeadlineMs, this.retryPeriodMs);
    this.identity = opts.identity ?? `${hostname()}_${randomUUID()}`;
    if (!this.identity) throw new Error("leader election: identity must not be empty");
    this.name = opts.name;
    this.namespace = opts.namespace;
    this.releaseOnCancel = opts.releaseOnCancel ?? true;
    this.labels = opts.labels;
    this.callbacks = opts.callbacks;
    this.log = (opts.logger ?? discardLogger).withValues({
      lease: `${opts.namespace}/${opts.name}`,
      identity: this.identity,
    });
    this.client = opts.client;
    this.gauge = masterStatus();
    this.gauge.set({ name: this.name }, 0);
  }

  /** True between onStartedLeading and the end of leadership. */
  isLeader(): boolean {
    return this.leading;
  }

  /**
   * The monotonic time (performance.now()) until which this elector may act as the holder: its last successful write
   * plus the renew deadline, before anyone else may take the lease over; 0 when not leading. Read it before a write
   * that only the holder may make: a process that was paused (SIGSTOP, a long collection) wakes up with its timers
   * late, and may run other work before the renewal loop notices the deadline has passed.
   */
  heldUntil(): number {
    return this.leading && this.renewedAt > 0 ? this.renewedAt + this.renewDeadlineMs : 0;
  }

  /** The holder of the lease as last observed ("" after a release); undefined before any observation. */
  getLeader(): string | undefined {
    return this.observedLease?.spec?.holderIdentity ?? undefined;
  }

  /**
   * Contend for the lease and lead until leadership is lost or stop is requested (by stop() or by
   * `signal`). Never rejects for API errors; an elector runs once.
   */
  run(signal?: AbortSignal): Promise<void> {
    if (this.running) return Promise.reject(new Error("leader election: run() was already called"));
    const onAbort = () => this.requestStop();
    if (signal?.aborted) this.requestStop();
    signal?.addEventListener("abort", onAbort, { once: true });
    this.running = this.loop()
      .catch((err: unknown) => this.log.error("leader election failed", err))
      .finally(() => signal?.removeEventListener("abort", onAbort));
    return this.running;
  }

  /** Stop contending; if leading, end leadership and (with releaseOnCancel) release the lease. */
  async stop(): Promise<void> {
    this.requestStop();
    await this.running;
  }

  private requestStop(): void {
    if (this.stopRequested) return;
    this.stopRequested = true;
    this.leadingAbort?.abort();
    this.kick();
  }

  private async loop(): Promise<void> {
    const acquiredAt = await this.acquire();
    if (acquiredAt === undefined) return;
    if (this.stopRequested) {
      // Stop arrived while the winning request was in flight: hand the lease straight back.
      if (this.releaseOnCancel) await this.release();
      return;
    }
    this.renewedAt = acquiredAt;
    this.startLeading();
    let outcome: "lost" | "stopped" = "lost";
    try {
      outcome = await this.renewLoop(acquiredAt);
    } catch (err) {
      // A bug, not an API error (those are retried): still end leadership cleanly.
      this.log.error("renewing the lease failed unexpectedly", err);
    }
    this.leading = false;
    this.renewedAt = 0;
    this.gauge.set({ name: this.name }, 0);
    this.leadingAbort?.abort();
    if (outcome === "stopped" && this.releaseOnCancel) await this.release();
    // No release after a loss: the work may still be winding down, so the lease must run out instead.
    this.log.info(outcome === "lost" ? "leader election lost" : "stopped leading");
    // Not awaited: a callback that awaits stop() (which awaits run()) must not deadlock.
    void this.safeCall("onStoppedLeading", () => this.callbacks.onStoppedLeading());
  }

  /** Resolves with the monotonic time the winning attempt started, or undefined when stopped first. */
  private async acquire(): Promise<number | undefined> {
    this.log.info("attempting to acquire leader lease");
    while (!this.stopRequested) {
      const started = performance.now();
      const ok = await this.tryAcquireOrRenew(AbortSignal.timeout(this.renewDeadlineMs));
      this.maybeReportTransition();
      if (ok) {
        this.log.info("successfully acquired lease");
        return started;
      }
      const jittered = this.retryPeriodMs * (1 + Math.random() * JITTER_FACTOR);
      await this.sleep(jittered, () => this.stopRequested);
    }
    return undefined;
  }

  private startLeading(): void {
    this.leading = true;
    this.gauge.set({ name: this.name }, 1);
    const abort = new AbortController();
    this.leadingAbort = abort;
    this.workloadSettled = false;
    (async () => this.callbacks.onStartedLeading(abort.signal))()
      .catch((err: unknown) => this.log.error("onStartedLeading failed", err))
      .finally(() => {
        this.workloadSettled = true;
        this.kick();
      })
      .catch(() => undefined);
  }

  private async renewLoop(acquiredAt: number): Promise<"lost" | "stopped"> {
    // Measured from when the last successful write was *sent*: others may have observed it no earlier,
    // so giving up renewDeadline (< leaseDuration) after that is before anyone else may take over.
    let lastRenew = acquiredAt;
    this.renewedAt = acquiredAt;
    const stopDone = () => this.stopRequested && this.workloadSettled;
    for (;;) {
      await this.sleep(this.retryPeriodMs, stopDone);
      if (stopDone()) return "stopped";
      for (;;) {
        const remaining = lastRenew + this.renewDeadlineMs - performance.now();
        if (remaining <= 0) {
          this.log.info("failed to renew lease within the renew deadline");
          return "lost";
        }
        const started = performance.now();
        const ok = await this.tryAcquireOrRenew(AbortSignal.timeout(Math.ceil(remaining)));
        this.maybeReportTransition();
        if (ok) {
          lastRenew = started;
          this.renewedAt = started;
          this.log.debug("successfully renewed lease");
          break;
        }
        const holder = this.observedLease?.spec?.holderIdentity ?? "";
        if (holder && holder !== this.identity) {
          // client-go would keep polling until the deadline, but another holder is authoritative now.
          this.log.info("lease was taken by another candidate", { holder });
          return "lost";
        }
        await this.sleep(Math.min(this.retryPeriodMs, lastRenew + this.renewDeadlineMs - performance.now()));
      }
    }
  }

  private observedHolderIsMe(): boolean {
    return this.observedLease?.spec?.holderIdentity === this.identity;
  }

  private observedValid(): boolean {
    const secs = this.observedLease?.spec?.leaseDurationSeconds;
    const durationMs = secs && secs > 0 ? secs * 1000 : this.leaseDurationMs;
    return this.observedTime + durationMs > performance.now();
  }

  private setObserved(lease: Lease): void {
    const key = recordKey(lease.spec);
    if (key !== this.observedKey) {
      this.observedKey = key;
      this.observedTime = performance.now();
    }
    // Always kept, for its resourceVersion.
    this.observedLease = lease;
  }

  private leaseWith(base: Lease, spec: LeaseSpec): Lease {
    return { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: base.metadata, spec };
  }

  /**
   * One round of client-go's tryAcquireOrRenew; false on any failure (logged), never throws. `signal`
   * bounds every request: without it, a request to an apiserver that stopped answering could hang past
   * renewDeadline and the loss of leadership would go unnoticed.
   */
  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const now = microTime(new Date());
    const durationSeconds = Math.ceil(this.leaseDurationMs / 1000);
    const { name, namespace, client } = this;

    // Fast path: the leader writes over the version it saw last, saving a GET per renewal.
    const cached = this.observedLease;
    if (cached && this.observedHolderIsMe() && this.observedValid()) {
      const spec: LeaseSpec = {
        holderIdentity: this.identity,
        leaseDurationSeconds: durationSeconds,
        acquireTime: cached.spec?.acquireTime ?? now,
        renewTime: now,
        leaseTransitions: cached.spec?.leaseTransitions ?? 0,
      };
      try {
        this.setObserved(await client.update(Kinds.Lease, this.leaseWith(cached, spec), { signal }));
        return true;
      } catch (err) {
        if (signal.aborted) {
          this.log.error("failed to renew lease", err);
          return false;
        }
        this.log.debug("optimistic lease update failed, falling back to a read", { error: messageOf(err) });
      }
    }

    let lease: Lease;
    try {
      lease = await client.get<Lease>(Kinds.Lease, namespace, name, { signal });
    } catch (err) {
      if (!isNotFound(err)) {
        this.log.error("error retrieving lease", err);
        return false;
      }
      const body: Lease = {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name, namespace, ...(this.labels ? { labels: { ...this.labels } } : {}) },
        spec: {
          holderIdentity: this.identity,
          leaseDurationSeconds: durationSeconds,
          acquireTime: now,
          renewTime: now,
          leaseTransitions: 0,
        },
      };
      try {
        this.setObserved(await client.create(Kinds.Lease, body, { signal }));
        return true;
      } catch (err2) {
        this.log.error("error creating lease", err2);
        return false;
      }
    }

    this.setObserved(lease);
    const old = lease.spec ?? {};
    const holder = old.holderIdentity ?? "";
    const mine = holder === this.identity;
    if (holder && !mine && this.observedValid()) {
      this.log.debug("lease is held by another candidate and has not yet expired", { holder });
      return false;
    }
    const spec: LeaseSpec = {
      holderIdentity: this.identity,
      leaseDurationSeconds: durationSeconds,
      acquireTime: mine ? (old.acquireTime ?? now) : now,
      renewTime: now,
      leaseTransitions: (old.leaseTransitions ?? 0) + (mine ? 0 : 1),
    };
    try {
      this.setObserved(await client.update(Kinds.Lease, this.leaseWith(lease, spec), { signal }));
      return true;
    } catch (err) {
      if (isConflict(err)) {
        this.log.debug("lease changed concurrently; not acquired this round");
      } else {
        this.log.error("failed to update lease", err);
      }
      return false;
    }
  }

  /** client-go's release: empty holder, 1 s duration, so any candidate may take it over at once. */
  private async release(): Promise<void> {
    const cached = this.observedLease;
    if (!cached || !this.observedHolderIsMe()) return;
    const now = microTime(new Date());
    const spec: LeaseSpec = {
      holderIdentity: "",
      leaseDurationSeconds: 1,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: cached.spec?.leaseTransitions ?? 0,
    };
    try {
      const released = await this.client.update(Kinds.Lease, this.leaseWith(cached, spec), {
        signal: AbortSignal.timeout(this.renewDeadlineMs),
      });
      this.setObserved(released);
      this.maybeReportTransition();
      this.log.info("released lease");
    } catch (err) {
      this.log.error("failed to release lease", err);
    }
  }

  private maybeReportTransition(): void {
    const holder = this.observedLease?.spec?.holderIdentity ?? "";
    if (holder === this.reportedLeader) return;
    this.reportedLeader = holder;
    if (!holder) return;
    this.log.info("new leader elected", { leader: holder });
    const onNewLeader = this.callbacks.onNewLeader;
    if (onNewLeader) void this.safeCall("onNewLeader", () => onNewLeader.call(this.callbacks, holder));
  }

  private async safeCall(what: string, fn: () => void | Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.log.error(`${what} failed`, err);
    }
  }

  /** Sleep for `ms`, or until kick() finds `wakeWhen` true (checked up front as well). */
  private sleep(ms: number, wakeWhen?: () => boolean): Promise<void> {
    return new Promise((resolve) => {
      if (wakeWhen?.()) return resolve();
      const done = () => {
        clearTimeout(timer);
        if (this.waiter === check) this.waiter = undefined;
        resolve();
      };
      const check = () => {
        if (wakeWhen?.()) done();
      };
      const timer = setTimeout(done, Math.max(0, Math.ceil(ms)));
      if (wakeWhen) this.waiter = check;
    });
  }

  private kick(): void {
    this.waiter?.();
  }
}
