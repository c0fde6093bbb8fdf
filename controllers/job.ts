// What the CronJob controller keeps of the Jobs it watches, and how it finds a CronJob's Jobs.
import { cronJobOwnerOf, type Job, readJob } from "../api/v1/index.ts";
import type { CacheIndexer, CacheReader } from "../runtime/interfaces.ts";
import { type KubeObject, Kinds } from "../runtime/kinds.ts";

/** Field index: Jobs by the UID of their controlling CronJob. */
const JOB_OWNER_INDEX = "jobOwnerUID";

/**
 * The Job cache the reconciler reads, before the cache starts: Jobs trimmed to metadata and status
 * (trimJobForCache) and indexed by the UID of their controlling CronJob.
 */
export function setupJobCache(cache: CacheIndexer): void {
  cache.setTransform(Kinds.Job, trimJobForCache);
  cache.indexField(Kinds.Job, JOB_OWNER_INDEX, (job) => {
    const ref = cronJobOwnerOf(job);
    return ref ? [ref.uid] : [];
  });
}

/** Step 2: a CronJob's Jobs in the cache, through the owner index (of its namespace only, as ownerReferences are). */
export function cachedChildren(
  cache: CacheReader,
  cronJob: { metadata: { namespace?: string; uid?: string } },
): Readonly<Job>[] {
  return cache
    .byIndex(Kinds.Job, JOB_OWNER_INDEX, cronJob.metadata.uid ?? "")
    .filter((j) => j.metadata?.namespace === cronJob.metadata.namespace)
    .map(readJob);
}

/** kubectl apply's copy of the whole object: never read here, often as large as the spec. */
const LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * What the CronJob controller keeps of a Job in its cache: metadata (name, namespace, uid, resourceVersion,
 * labels, annotations, ownerReferences, timestamps), status, and of the spec only suspend and managedBy (what
 * says a Job is queued) and ttlSecondsAfterFinished (a Job that will be deleted once it ends). The rest of the spec (the pod template: most of a Job's bytes) and kubectl's
 * last-applied annotation go: no step reads them (children are classified and sorted by status and annotations;
 * Jobs are created from the CronJob's template and deleted by name and UID). A Job from the cache must therefore
 * never be written back: the one update (ending a run that never started, controllers/starts.ts) is of a live GET.
 */
export function trimJobForCache<T extends KubeObject>(job: T): T {
  // Copies without the keys, not `delete`: V8 turns an object that loses a property into a hash table, several
  // times larger (docs/operating.md, "The figures behind the code's rules").
  const { spec, ...rest } = job;
  // What a queued Job is read by (api/v1/job.ts queuedBy): a few bytes of the spec, kept.
  // ttlSecondsAfterFinished: a run whose Job the TTL controller will delete is written before it goes (statusfold.ts).
  const held = spec as { suspend?: unknown; managedBy?: unknown; ttlSecondsAfterFinished?: unknown } | undefined;
  const specKept = {
    ...(held?.suspend !== undefined ? { suspend: held.suspend } : {}),
    ...(held?.managedBy !== undefined ? { managedBy: held.managedBy } : {}),
    ...(held?.ttlSecondsAfterFinished !== undefined ? { ttlSecondsAfterFinished: held.ttlSecondsAfterFinished } : {}),
  };
  const trimmed = Object.keys(specKept).length ? { ...rest, spec: specKept } : rest;
  const annotations = job.metadata?.annotations;
  if (annotations && LAST_APPLIED_ANNOTATION in annotations) {
    const { [LAST_APPLIED_ANNOTATION]: _applied, ...kept } = annotations;
    return { ...trimmed, metadata: { ...job.metadata, annotations: kept } } as T;
  }
  return trimmed as T;
}
