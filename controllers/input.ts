// What a CronJob reads of other objects, as one entry of the inputs' list (inputs.ts): a concurrency group, exclusion
// calendars, spec.after's upstreams. An entry brings everything its reads need, so that the reconciler, the
// conditions, the admission webhook and cmd/run.ts loop over the list and name none of them: its cache indexes, the
// watches that wake the CronJobs reading it, its read of one CronJob (a value, and a problem as a reason code for
// Degraded), and its admission check over the same cache. docs/architecture.md "Inputs" says what a new one costs.
import type { ResourceKind } from "../runtime/kinds.ts";
import type { MapFunc, Predicate } from "../runtime/controller.ts";
import type { CacheIndexer, CacheReader } from "../runtime/interfaces.ts";
import type { ScrapeTimeMetric } from "../runtime/metrics/collector.ts";
import type { AdmissionCheck } from "../webhooks/admission_check.ts";

/** What is wrong with an input, as Degraded says it: a reason code for programs, a message for people. */
export interface InputProblem {
  readonly reason: "ConcurrencyGroupNotFound" | "CalendarNotFound" | "UpstreamNotFound" | "AfterCycle";
  readonly message: string;
}

/** An input's read of one CronJob this pass: what its rows and steps use, and what is wrong (none: nothing). */
export interface InputRead<V> {
  readonly value: V;
  readonly problem?: InputProblem | undefined;
}

/** A CronJob as an input reads it (its stored spec: an input reads what the spec names, in whatever shape). */
export interface InputCronJob {
  readonly metadata: { readonly namespace?: string | undefined; readonly name?: string | undefined };
  readonly spec: unknown;
}

/** A watch that wakes the CronJobs reading the input: a kind, which CronJobs an object of it concerns, and a filter. */
export interface InputWatch {
  readonly kind: ResourceKind;
  readonly map: MapFunc;
  readonly predicates?: Predicate[];
}

/** An input's reader over the manager's cache: one per reconciler (it may keep what it compiled between passes). */
export interface InputReader<V> {
  /** The CronJob's read of it this pass. */
  read(cronJob: InputCronJob): InputRead<V>;
  /** The watches that wake the CronJobs reading it; `now` is the reconciler's clock. */
  watches(now: () => number): InputWatch[];
  /** A CronJob deleted: what the reader keeps of it goes. */
  forget?(namespace: string, name: string): void;
  /** Its gauges, exported by the leader from what it reads (`isLeader`) at the scrape. */
  metrics?(o: { now: () => number; isLeader: () => boolean }): ScrapeTimeMetric[];
  /**
   * Its check at admission, over the same cache; `covers` says whether the cache reads a namespace (a shard's that
   * another replica holds is unknown there, not empty).
   */
  admission?(covers: (namespace: string) => boolean): AdmissionCheck;
}

/** An entry of the inputs' list. */
export interface Input<V, R extends InputReader<V> = InputReader<V>> {
  /** The spec field that names what it reads, for the docs and the logs. */
  readonly field: string;
  /** Its cache indexes, registered before the cache starts. */
  setupCache(cache: CacheIndexer): void;
  /**
   * The kinds its admission check reads: the webhooks-only server's cache watches them alone (that server reads
   * nothing it does not check with).
   */
  readonly admissionKinds?: readonly ResourceKind[];
  /** Its reader over the cache. */
  reader(cache: CacheReader): R;
}
