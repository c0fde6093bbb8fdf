// How the manager starts and stops what it runs (controller-runtime's runnable_group.go): phases started
// in order and stopped in the reverse order, so nothing stops while something started after it (and so
// possibly depending on it) still runs; one deadline shared by the whole stop; and one place, the
// Stopper, that decides why and when the manager stops.

/** Something the manager runs: until its signal aborts. */
export interface Runnable {
  name: string;
  /** Leader-only runnables (controllers) start once elected; others start at once. */
  needLeaderElection: boolean;
  start(signal: AbortSignal): Promise<void>;
}

/** Runnables started together and stopped together with one signal. */
export class RunnableGroup {
  readonly name: string;
  private readonly members: Runnable[] = [];
  private readonly running: Promise<void>[] = [];
  private readonly ctl = new AbortController();
  private started = false;

  constructor(name: string) {
    this.name = name;
  }

  add(r: Runnable): void {
    this.members.push(r);
  }

  get size(): number {
    return this.members.length;
  }

  /**
   * Starts every member; a member that fails (its start rejects) is passed to `onError`. Starting
   * again, or after stop(), does nothing: a late election must not start controllers during shutdown.
   */
  start(onError: (r: Runnable, err: unknown) => void): void {
    if (this.started || this.ctl.signal.aborted) return;
    this.started = true;
    for (const r of this.members) {
      this.running.push(r.start(this.ctl.signal).catch((err: unknown) => onError(r, err)));
    }
  }

  stop(): void {
    this.ctl.abort();
  }

  /** Resolves once every started member has returned. */
  done(): Promise<void> {
    return Promise.all(this.running).then(() => undefined);
  }
}

/** One shutdown deadline for every phase, so stopping takes at most `ms` however many phases wait. */
export class Deadline {
  readonly ms: number;
  private readonly expired: Promise<false>;
  private readonly onMissed: () => void;
  private missed = false;

  /** `onMissed` is called once, the first time a wait() runs out. */
  constructor(ms: number, onMissed: () => void = () => {}) {
    this.ms = ms;
    this.onMissed = onMissed;
    this.expired = new Promise((resolve) => setTimeout(() => resolve(false), ms).unref());
  }

  /** True once `work` settles, false when the deadline passes first (the work is left running). */
  async wait(work: Promise<unknown>): Promise<boolean> {
    const settled = work.then(
      () => true as const,
      () => true as const,
    );
    const done = await Promise.race([settled, this.expired]);
    if (!done && !this.missed) {
      this.missed = true;
      this.onMissed();
    }
    return done;
  }
}

/** A stage of the manager's life. */
export interface Phase {
  readonly name: string;
  start(): void | Promise<void>;
  stop(deadline: Deadline): void | Promise<void>;
}

/** Phases in start order; stopAll() stops them last first, each once the ones after it have stopped. */
export class Phases {
  private readonly started: Phase[] = [];

  /** A phase whose start fails part-way is still stopped by stopAll(), to undo what it did start. */
  async start(phase: Phase): Promise<void> {
    this.started.push(phase);
    await phase.start();
  }

  async stopAll(deadline: Deadline): Promise<void> {
    for (const phase of this.started.splice(0).reverse()) await phase.stop(deadline);
  }
}

/**
 * Why the manager stops. The first cause ends the run: the caller's signal, a lost lease, or a failed
 * runnable. A failure is remembered even during shutdown (it is still an error to report); a lease lost
 * because the manager was already stopping is not a loss.
 */
export class Stopper {
  private readonly ctl = new AbortController();
  private readonly external: AbortSignal;
  private readonly onExternal = () => this.ctl.abort();
  private lost = false;
  private failure: { error: unknown } | undefined;

  constructor(external: AbortSignal) {
    this.external = external;
    if (external.aborted) this.ctl.abort();
    else external.addEventListener("abort", this.onExternal, { once: true });
  }

  /** Aborts at the first cause. */
  get signal(): AbortSignal {
    return this.ctl.signal;
  }

  get stopping(): boolean {
    return this.ctl.signal.aborted;
  }

  get leaseLost(): boolean {
    return this.lost;
  }

  /** The first runnable failure, if any. */
  get failed(): { error: unknown } | undefined {
    return this.failure;
  }

  /** Resolves at the first cause. */
  stopped(): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return new Promise((resolve) => this.ctl.signal.addEventListener("abort", () => resolve(), { once: true }));
  }

  loseLease(): void {
    if (this.stopping) return;
    this.lost = true;
    this.ctl.abort();
  }

  fail(error: unknown): void {
    this.failure ??= { error };
    this.ctl.abort();
  }

  /** Stops listening to the caller's signal. */
  dispose(): void {
    this.external.removeEventListener("abort", this.onExternal);
  }
}
