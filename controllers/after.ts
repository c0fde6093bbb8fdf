// spec.after's reads for the controller: the upstream CronJobs a CronJob names and their Jobs (the after row's source,
// controllers/triggers.ts), what is wrong with them (one missing, a cycle: a Degraded reason, never an error loop), and
// the watches that wake a downstream when an upstream's Job changes or the upstream itself comes or goes. From the
// manager's cache only; the decisions are the row's.
import { afterCycle, cronJobOwnerOf, CronJobResource, upstreamsOf } from "../api/v1/index.ts";
import type { MapFunc, Request } from "../runtime/controller.ts";
import type { CacheIndexer, CacheReader } from "../runtime/interfaces.ts";
import { cachedChildren } from "./jobs.ts";
import { type AdmissionCheck, afterCycleCheck } from "../webhooks/admission_check.ts";
import { Kinds } from "../runtime/kinds.ts";
import type { Input, InputCronJob, InputProblem, InputRead, InputReader, InputWatch } from "./input.ts";
import type { UpstreamRuns, UpstreamsRead } from "./upstreams.ts";

/** CronJobs by the upstreams their spec.after names: `<namespace>/<upstream>`. */
const CRONJOB_AFTER_INDEX = "spec.after";

function setupAfterCache(cache: CacheIndexer): void {
  cache.indexField(CronJobResource, CRONJOB_AFTER_INDEX, (cj) => {
    const ns = cj.metadata?.namespace ?? "";
    return upstreamsOf((cj as { spec?: unknown }).spec).map((u) => `${ns}/${u.cronJob}`);
  });
}

class UpstreamReader implements InputReader<UpstreamsRead> {
  private readonly cache: CacheReader;

  constructor(cache: CacheReader) {
    this.cache = cache;
  }

  /** A CronJob's upstreams and their Jobs, from the cache; its problem: an upstream missing, or a cycle. */
  read(cronJob: InputCronJob): InputRead<UpstreamsRead> {
    const named = upstreamsOf(cronJob.spec);
    if (!named.length) return { value: { upstreams: [] } };
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
        value: { upstreams, cycle },
        problem: {
          reason: "AfterCycle",
          message: `spec.after makes a cycle (${cycle.join(" runs after ")}): no run after an upstream is made until it is broken`,
        },
      };
    const missing = upstreams.filter((u) => !u.found).map((u) => u.cronJob);
    return { value: { upstreams }, ...(missing.length ? { problem: missingProblem(missing, ns) } : {}) };
  }

  /** An upstream's Job changed (it ended, say), or the upstream came or went: its downstreams decide again. */
  watches(): InputWatch[] {
    return [
      { kind: Kinds.Job, map: this.jobEvents() },
      { kind: CronJobResource, map: this.cronJobEvents() },
    ];
  }

  /** At admission, spec.after making a cycle with the CronJobs this cache holds is refused. */
  admission(covers: (namespace: string) => boolean): AdmissionCheck {
    return afterCycleCheck((namespace, name) => {
      if (!covers(namespace)) return undefined;
      const cj = this.cache.get(CronJobResource, namespace, name);
      return cj ? upstreamsOf((cj as { spec?: unknown }).spec).map((u) => u.cronJob) : undefined;
    });
  }

  private jobEvents(): MapFunc {
    return (obj) => {
      const owner = cronJobOwnerOf(obj);
      return owner ? this.downstreams(obj.metadata?.namespace ?? "", owner.name) : [];
    };
  }

  private cronJobEvents(): MapFunc {
    return (obj) => this.downstreams(obj.metadata?.namespace ?? "", obj.metadata?.name ?? "");
  }

  private downstreams(namespace: string, upstream: string): Request[] {
    return this.cache
      .byIndex(CronJobResource, CRONJOB_AFTER_INDEX, `${namespace}/${upstream}`)
      .map((cj) => ({ namespace, name: cj.metadata?.name ?? "" }));
  }
}

function missingProblem(missing: readonly string[], ns: string): InputProblem {
  const many = missing.length > 1;
  return {
    reason: "UpstreamNotFound",
    message: `spec.after names ${missing.join(", ")}, which ${many ? "are not CronJobs" : "is not a CronJob"} of namespace ${ns}: nothing runs after ${many ? "them" : "it"} until ${many ? "they exist" : "it exists"}`,
  };
}

/** spec.after's upstreams, as an input (input.ts): their index, their Jobs, the cycle check. */
export const AFTER_INPUT: Input<UpstreamsRead, UpstreamReader> = {
  field: "spec.after",
  setupCache: setupAfterCache,
  reader: (cache) => new UpstreamReader(cache),
};
