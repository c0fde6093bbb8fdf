// A CronJob's child Jobs: what the Job cache keeps of them and how a CronJob's are found (the owner index), the live
// reads of those the cache lacks, and the writes: a create whose name is the run's lock (adopting our own Job of that
// name) and a delete of exactly one Job (by UID). What a failure means for the pass (a problem for Degraded, an
// Event, a retry) is returned, never acted on here.
import { cronJobOwnerOf, EventReason, type Job, readJob, RefusedReason } from "../api/v1/index.ts";
import type { ReconcileContext } from "../runtime/controller.ts";
import { APIError, hasStatusCause, isAlreadyExists, isConflict, isNotFound } from "../runtime/errors.ts";
import type { CacheIndexer, CacheReader, ObjectReader, ObjectWriter } from "../runtime/interfaces.ts";
import { type KubeObject, Kinds } from "../runtime/kinds.ts";
import { droppedFields } from "../runtime/objects.ts";
import type { WriteProblems } from "./conditions.ts";
import type { EventDecision } from "./events.ts";

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

/** The owning CronJob, as these writes need it. */
interface Owner {
  metadata: { namespace?: string; uid?: string };
}

type CreateOutcome =
  | {
      ok: true;
      job: Job;
      created: boolean;
      /** What the API server said about the create: its warnings, and fields of the Job it dropped. */
      warnings?: string[];
    }
  | {
      ok: false;
      problems: WriteProblems;
      event?: EventDecision;
      retry?: string;
      /** The API server refused the create: its reason (Forbidden, Invalid, AlreadyExists, ...) and message. */
      refused?: { reason: string; message: string };
    };

export class ChildJobs {
  readonly #client: ObjectReader & ObjectWriter;

  constructor(client: ObjectReader & ObjectWriter) {
    this.#client = client;
  }

  /** The Job as the API server has it now; undefined when it is gone. */
  async get(owner: Owner, name: string, ctx: ReconcileContext): Promise<Job | undefined> {
    try {
      return readJob(await this.#client.get(Kinds.Job, owner.metadata.namespace, name));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      ctx.log.error("reading a Job failed", err, { job: name });
      throw err;
    }
  }

  /**
   * Step 3: the Jobs the stored status.active lists that the cache lacks, read live (undefined: gone). `gone`: UIDs
   * known gone (not read again), and those a read finds gone are added.
   */
  async confirmActive(
    cronJob: Owner & { status?: { active?: readonly { name?: string; uid?: string }[] } },
    cached: readonly Readonly<Job>[],
    ctx: ReconcileContext,
    gone: Set<string> = new Set(),
  ): Promise<Map<string, Readonly<Job> | undefined>> {
    const uids = new Set(cached.map((j) => j.metadata?.uid));
    const live = new Map<string, Readonly<Job> | undefined>();
    for (const ref of cronJob.status?.active ?? []) {
      if (!ref.name || (ref.uid && uids.has(ref.uid))) continue;
      if (ref.uid && gone.has(ref.uid)) {
        live.set(ref.name, undefined);
        continue;
      }
      const job = await this.get(cronJob, ref.name, ctx);
      // Another Job of that name (a re-created CronJob's) is not the one listed: that one is gone too.
      const same = job && (!ref.uid || job.metadata?.uid === ref.uid);
      if (!same && ref.uid) gone.add(ref.uid);
      live.set(ref.name, job);
    }
    return live;
  }

  /**
   * Creates a Job whose name is its lock. The name already taken by a Job of ours (a crash between create and
   * status write) counts as created earlier (`created: false`); by anyone else's, it is reported and not retried
   * in a loop. Other failures are reported and retried with backoff.
   */
  async createOrAdopt(owner: Owner, job: Job, ctx: ReconcileContext): Promise<CreateOutcome> {
    const name = job.metadata!.name!;
    // An urgent write: writes that can wait hold back until the burst of creates is over.
    ctx.burst?.note();
    const warnings: string[] = [];
    try {
      const stored = await this.#client.create<KubeObject>(Kinds.Job, job, { onWarning: (w) => warnings.push(w) });
      // A cluster older than the CRD's Job template drops the fields it does not know (with a warning on
      // 1.25+ only): the webhook refuses such a template, but one stored before (or with the webhook off)
      // would run without them, silently.
      const storedSpec = (stored as { spec?: unknown }).spec;
      for (const f of storedSpec === undefined ? [] : droppedFields(job.spec, storedSpec, "spec")) {
        warnings.push(`${f}: this cluster's Job API has no such field; the Job was created without it`);
      }
      return { ok: true, job: readJob(stored), created: true, ...(warnings.length ? { warnings } : {}) };
    } catch (err) {
      const message = (err as Error).message;
      if (hasStatusCause(err, "NamespaceTerminating")) {
        // The namespace is going away with this CronJob in it: retry quietly, as the built-in does; it is not a
        // failure to report.
        ctx.log.info("not creating Job: the namespace is being terminated", { job: name });
        return { ok: false, problems: {}, retry: `creating Job ${name}: ${message}` };
      }
      if (!isAlreadyExists(err)) {
        const failed = `creating Job ${name}: ${message}`;
        const event: EventDecision = {
          reason: EventReason.FailedCreate,
          message: `Error creating job ${name}: ${message}`,
        };
        const reason = err instanceof APIError ? err.reason : "Unknown";
        return { ok: false, problems: { createFailed: failed }, event, retry: failed, refused: { reason, message } };
      }
    }
    const existing = await this.get(owner, name, ctx);
    if (!existing || cronJobOwnerOf(existing)?.uid !== owner.metadata.uid) {
      const msg = `Error creating job ${name}: a Job with that name already exists and is not controlled by this CronJob`;
      // Not retried: retrying cannot help until the other Job goes away (the Job watch brings us back).
      return {
        ok: false,
        problems: { createConflict: msg },
        event: { reason: EventReason.FailedCreate, message: msg },
        refused: {
          reason: RefusedReason.AlreadyExists,
          message: `a Job named ${name} already exists and is not controlled by this CronJob`,
        },
      };
    }
    return { ok: true, job: existing, created: false };
  }

  /** Deletes one Job (only the one with this UID), with its Event; a failure's message is returned too. */
  async delete(
    owner: Owner,
    job: Readonly<Job>,
    ctx: ReconcileContext,
    why: "history" | "replace",
  ): Promise<{ event: EventDecision; failed?: string }> {
    const name = job.metadata?.name ?? "";
    try {
      await this.#client.delete(Kinds.Job, job.metadata?.namespace ?? owner.metadata.namespace, name, {
        propagationPolicy: "Background",
        ...(job.metadata?.uid ? { preconditions: { uid: job.metadata.uid } } : {}),
      });
      ctx.log.debug("deleted Job", { job: name, why });
    } catch (err) {
      // Already gone, or replaced (another UID): not ours to delete, and nothing failed.
      if (!isNotFound(err) && !isConflict(err)) {
        ctx.log.error("deleting Job failed", err, { job: name, why });
        const failed = `Deleted job ${name} failed: ${(err as Error).message}`;
        return { event: { reason: EventReason.FailedDelete, message: failed }, failed };
      }
    }
    // Replace ending a running Job is news; history cleanup is routine.
    return {
      event: { reason: EventReason.SuccessfulDelete, message: `Deleted job ${name}`, routine: why === "history" },
    };
  }
}
