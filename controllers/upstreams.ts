// What spec.after's reads hand a pass (controllers/after.ts reads them; the after row plans from them): the upstreams
// a CronJob names with their Jobs, and the cycle that stops its runs. A leaf of its own, so that the rows' shape
// (trigger.ts) names what the after row's source sees without importing the reader and the cache behind it. Types.
import type { Job, Upstream } from "../api/v1/index.ts";

/** An upstream as a pass reads it: what spec.after says, and its Jobs (none when it does not exist). */
export interface UpstreamRuns extends Upstream {
  /** The upstream exists now. */
  readonly found: boolean;
  readonly jobs: readonly Readonly<Job>[];
}

/** What spec.after's reads found: the upstreams, and what stops its runs (a cycle). */
export interface UpstreamsRead {
  readonly upstreams: readonly UpstreamRuns[];
  /** A cycle through spec.after: no run after an upstream is made (each would make the next, for ever). */
  readonly cycle?: string[];
}
