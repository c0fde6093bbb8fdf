// spec.after's reads for the controller: the upstream CronJobs a CronJob names and their Jobs (the after row's source,
// controllers/triggers.ts), what is wrong with them (one missing, a cycle: a Degraded reason, never an error loop), and
// the watches that wake a downstream when an upstream's Job changes or the upstream itself comes or goes. From the
// manager's cache only; the decisions are the row's.
import { afterCycle, cronJobOwnerOf, CronJobResource, type Job, type Upstream, upstreamsOf } from "../api/v1/index.ts";
import type { MapFunc, Request } from "../runtime/controller.ts";
import type { CacheIndexer, CacheReader } from "../runtime/interfaces.ts";
import { cachedChildren } from "./job.ts";

/** CronJobs by the upstreams their spec.after names: `<namespace>/<upstream>`. */
const CRONJOB_AFTER_INDEX = "spec.after";

export function setupAfterCache(cache: CacheIndexer): void {
  cache.indexField(CronJobResource, CRONJOB_AFTER_INDEX, (cj) => {
    const ns = cj.metadata?.namespace ?? "";
    return upstreamsOf((cj as { spec?: unknown }).spec).map((u) => `${ns}/${u.cronJob}`);
  });
}

/** An upstream as a pass reads it: what spec.after says, and its Jobs (none when it does not exist). */
interface UpstreamRuns extends Upstream {
  /** The upstream exists now. */
  readonly found: boolean;
  readonly jobs: readonly Readonly<Job>[];
}

/** What spec.after's reads found: the upstreams, and what stops its runs (a cycle) or is wrong (one missing). */
export interface UpstreamsRead {
  readonly upstreams: readonly UpstreamRuns[];
  /** A cycle through spec.after: no run after an upstream is made (each would make the next, for ever). */
  readonly cycle?: string[];
  /** Degraded's reason and message: an upstream missing, or the cycle (none: nothing wrong). */
  readonly problems: { upstream?: { reason: "UpstreamNotFound" | "AfterCycle"; message: string } };
}

export class UpstreamReader {
  private readonly cache: CacheReader;

  constructor(cache: CacheReader) {
    this.cache = cache;
  }

  /** A CronJob's upstreams and their Jobs, from the cache. */
  read(cronJob: {
    metadata: { namespace?: string | undefined; name?: string | undefined };
    spec: unknown;
  }): UpstreamsRead {
    const named = upstreamsOf(cronJob.spec);
    if (!named.length) return { upstreams: [], problems: {} };
    const ns = cronJob.metadata.namespace ?? "";
    const name = cronJob.metadata.name ?? "";
    const upstreams = named.map((u): UpstreamRuns => {
      const up = this.cache.get(CronJobResource, ns, u.cronJob);
      const jobs = up?.metadata?.uid
        ? cachedChildren(this.cache, { metadata: { namespace: ns, uid: up.metadata.uid } })
        : [];
      return { ...u, found: !!up, jobs };
    });
    const cycle = afterCycle(
      name,
      named.map((u) => u.cronJob),
      (other) => {
        const cj = this.cache.get(CronJobResource, ns, other);
        return cj ? upstreamsOf((cj as { spec?: unknown }).spec).map((u) => u.cronJob) : undefined;
      },
    );
    if (cycle)
      return {
        upstreams,
        cycle,
        problems: {
          upstream: {
            reason: "AfterCycle",
            message: `spec.after makes a cycle (${cycle.join(" runs after ")}): no run after an upstream is made until it is broken`,
          },
        },
      };
    const missing = upstreams.filter((u) => !u.found).map((u) => u.cronJob);
    if (!missing.length) return { upstreams, problems: {} };
    return {
      upstreams,
      problems: {
        upstream: {
          reason: "UpstreamNotFound",
          message: `spec.after names ${missing.join(", ")}, which ${missing.length > 1 ? "are not CronJobs" : "is not a CronJob"} of namespace ${ns}: nothing runs after ${missing.length > 1 ? "them" : "it"} until ${missing.length > 1 ? "they exist" : "it exists"}`,
        },
      },
    };
  }

  /** A Job of an upstream changed (it ended, say): its downstreams decide again. */
  jobEvents(): MapFunc {
    return (obj) => {
      const owner = cronJobOwnerOf(obj);
      return owner ? this.downstreams(obj.metadata?.namespace ?? "", owner.name) : [];
    };
  }

  /** An upstream created, changed or deleted: its downstreams decide again (one missing says so, or no longer). */
  cronJobEvents(): MapFunc {
    return (obj) => this.downstreams(obj.metadata?.namespace ?? "", obj.metadata?.name ?? "");
  }

  private downstreams(namespace: string, upstream: string): Request[] {
    return this.cache
      .byIndex(CronJobResource, CRONJOB_AFTER_INDEX, `${namespace}/${upstream}`)
      .map((cj) => ({ namespace, name: cj.metadata?.name ?? "" }));
  }
}
