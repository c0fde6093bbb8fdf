// What the end-to-end suites promise each other on a shared cluster. Every suite says what it needs when it
// starts: the operator as `make deploy` leaves it (its CRD, its Deployment with every replica Ready), or no
// operator at all (the Helm suite installs its own). Before a suite runs, the cluster is read and held to that;
// when it falls short, the suite fails at once, naming the suite that finished last before it, the one that left
// the cluster so (a leader kill that never came back, a Deployment left at 0 replicas, a CRD deleted), instead of
// timing out somewhere in its own first test. Pure rules over what was read, so they are unit-tested.

/** What a suite needs of the shared cluster when it starts. */
export type Needs = "operator" | "no-operator";

/** What the cluster holds of the operator, as read before a suite starts. */
export interface ClusterState {
  /** Whether the CronJob CRD exists. */
  crd: boolean;
  /** The manager's Deployment in the operator's namespace, when it exists. */
  deployment?: { replicas: number; ready: number; updated: number };
}

/** Why the cluster is not what a suite needs; `settling` when waiting may fix it (a rollout in progress). */
export interface Shortfall {
  problems: string[];
  settling: boolean;
}

/** What is wrong with `s` for a suite that needs `needs`; no problems when nothing is. */
export function shortfall(s: ClusterState, needs: Needs): Shortfall {
  const problems: string[] = [];
  let settling = false;
  if (needs === "operator") {
    if (!s.crd) problems.push("the CronJob CRD is missing");
    const d = s.deployment;
    if (!d) problems.push("the manager's Deployment is missing");
    else if (d.replicas < 1) problems.push(`the manager's Deployment is scaled to ${d.replicas} replicas`);
    else if (d.ready < d.replicas || d.updated < d.replicas) {
      problems.push(`${d.ready} of the manager's ${d.replicas} replicas are Ready (${d.updated} up to date)`);
      settling = true;
    }
  } else {
    if (s.crd) problems.push("the CronJob CRD is still installed");
    if (s.deployment) problems.push("the manager's Deployment still exists");
  }
  return { problems, settling: settling && problems.length === 1 };
}

/**
 * Who ran on the cluster so far: the suite that finished last is the one a later suite names when it finds the
 * cluster broken. In the concurrent phase several finish; the last one before a suite started is the best lead.
 */
export class ClusterBook {
  #last = "the shared set-up (NodeCluster start, image load, make deploy)";
  /** The suites that found the cluster as they needed it: only they can have left it otherwise. */
  readonly #started = new Set<string>();

  /**
   * Notes that the suite `name` has finished (passed or not). One that found the cluster broken never ran: the
   * suite that left it so stays the one named.
   */
  finished(name: string): void {
    if (this.#started.delete(name)) this.#last = name;
  }

  /** The suite that finished last. */
  get last(): string {
    return this.#last;
  }

  /**
   * Reads the cluster (`read`) until it is what `needs` says, or a problem that waiting cannot fix shows, or
   * `settleMs` passes; then throws naming the suite that left it so. `suite` is the suite about to start.
   */
  async check(
    suite: string,
    needs: Needs,
    read: () => Promise<ClusterState>,
    settleMs = 180_000,
    everyMs = 2000,
  ): Promise<void> {
    const left = this.#last;
    const deadline = Date.now() + settleMs;
    for (;;) {
      const s = shortfall(await read(), needs);
      if (s.problems.length === 0) {
        this.#started.add(suite);
        return;
      }
      if (!s.settling || Date.now() >= deadline) {
        const waited = s.settling ? ` (still so after ${Math.round(settleMs / 1000)} s)` : "";
        throw new Error(
          `the shared cluster is not as suite "${suite}" needs it (${needs}): ${s.problems.join("; ")}${waited}. ` +
            `It was left so by "${left}", the last suite to finish before this one started.`,
        );
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }
}
