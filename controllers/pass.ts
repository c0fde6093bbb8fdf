// One pass of the reconciler as data: the CronJob as step 1 loads it, the working state the steps that run Jobs
// thread through (the status being built, the Jobs known and running, the effects for the commit), and what
// reconcile() hands the commit (step 10). Types, their constructors and the pass's own edits (take, unreported);
// no I/O.
import {
  classifyJob,
  type CronJob,
  CronJobSchema,
  type CronJobWire,
  CronJobWireSchema,
  type CronJobWireStatus,
  type Job,
} from "../api/v1/index.ts";
import type { Request } from "../runtime/controller.ts";
import type { KubeObject } from "../runtime/kinds.ts";
import type { ConditionInput, WriteProblems } from "./conditions.ts";
import type { EventDecision } from "./events.ts";
import type { CronJobKey } from "./memory.ts";
import type { RunOutcome } from "./metrics.ts";
import { enterDecisions, type GroupHold, type TimedDecision } from "./record.ts";
import type { JobEnd } from "./starts.ts";
import type { StateEvent } from "./trigger.ts";

/**
 * A stored CronJob as the reconciler reads it: the wire type, which a CronJob (the schema's output) also is.
 * Every step is written for it: defaulted fields may be unset on an object the schema refuses.
 */
export type StoredCronJob = Readonly<CronJobWire> & { readonly spec: Readonly<CronJobWire["spec"]> };

/** Step 1's answer for a CronJob in the cache. */
export type LoadedCronJob =
  /** The schema accepts it: its defaults applied. */
  | { valid: true; cronJob: StoredCronJob }
  /**
   * The schema refuses it (admission bypassed, or stored before a check existed): the stored values as
   * they are, without defaults, and the schema's issues (field: message, no values).
   */
  | { valid: false; cronJob: StoredCronJob; issues: string[] };

/**
 * One pass's working state, threaded through the steps that run Jobs and handed to the commit: the status
 * being built, the Jobs known to exist and to run (the cache's, the live reads, the ones this pass created or
 * adopted), and the effects for the commit to apply. Only the run path (runpath.ts) and step 9 change it.
 */
export interface Pass {
  readonly cronJob: StoredCronJob;
  status: CronJobWireStatus;
  /** Every Job of this CronJob known this pass, by name. */
  readonly jobs: Map<string, Readonly<Job>>;
  /** The ones that run (status.active is written from it). */
  readonly active: Map<string, Readonly<Job>>;
  readonly events: Array<EventDecision | StateEvent>;
  readonly counts: RunOutcome[];
  /** How late each Job this pass created for a due slot started, in seconds (the creation-skew histogram). */
  readonly skews: number[];
  /** What memory keeps of this pass (step 4's reports, Replace's deletes). */
  readonly remember: { sawCompleted: Set<string>; replaced: Set<string> };
  /** Reported in Degraded. */
  problems: WriteProblems;
  /** Thrown after the status write, so the work queue retries this CronJob with backoff. */
  retry?: string;
  /** This pass created (or adopted) a Job. */
  created: boolean;
  /** The Jobs this pass created (not adopted): their runs may wait statusDelayMs to be written. */
  readonly fresh: string[];
  /** A run its concurrency group holds: waiting since, and until when it may still start (ms). */
  groupWait?: { since: number; until?: number | undefined };
  /** Finished Jobs a trigger still needs (a failed run whose retry is owed): history cleanup passes them. */
  readonly kept: Set<string>;
  /** The earliest time a trigger's request that is not due yet is (a retry's delay). */
  wakeAt?: Date;
  /**
   * The running Jobs whose Pods never started, to end (step 4's start limit: one update each): by the commit, or
   * by Replace just before it deletes one, so the end's reason is not lost with the Job.
   */
  readonly ends: JobEnd[];
}

/** What the run path (RunPath.run) did with a request, and the Job that now runs it (created or adopted). */
export type RunResult =
  | { result: "created" | "adopted"; job: Readonly<Job>; replaced?: string[] }
  | {
      result: "held" | "failed" | "conflict";
      job?: undefined;
      /** Held behind this running Job (the concurrency policy, named). */
      blockedBy?: string;
      policy?: string | undefined;
      /** The API server refused the create. */
      refused?: { reason: string; message: string };
      /** Held by the concurrency group. */
      group?: GroupHold;
    };

/** What reconcile() decided, for the commit (step 10). */
export interface Outcome {
  pass: Pass;
  /** The status as observed before any trigger ran (what the books rules compare the stored status with). */
  observed: CronJobWireStatus;
  /** The Jobs the cache listed that ended, by class (history cleanup's input). */
  history: { successful: Readonly<Job>[]; failed: Readonly<Job>[] };
  conditions: ConditionInput[];
  /** Runs whose end the stored status has not booked (step 4). */
  unbookedEnds: number;
  /** A run a folded status write left unbooked lost its Job (observe.ts vanishedSlot): written at once. */
  jobsGone?: boolean;
  /** Reconcile again after this many milliseconds; none while not scheduling. */
  requeueAfterMs?: number | undefined;
}

export function newPass(
  cronJob: StoredCronJob,
  status: CronJobWireStatus,
  seen: { jobs: readonly Readonly<Job>[]; counts: readonly RunOutcome[]; reported: Set<string>; replaced: Set<string> },
  events: Array<EventDecision | StateEvent>,
  ends: readonly JobEnd[] = [],
): Pass {
  const byName = new Map(seen.jobs.map((j) => [j.metadata?.name ?? "", j]));
  const listed = new Set((status.active ?? []).map((r) => r.name));
  const active = new Map([...byName].filter(([name, j]) => listed.has(name) && classifyJob(j) === "active"));
  return {
    cronJob,
    status,
    jobs: byName,
    active,
    events,
    counts: [...seen.counts],
    skews: [],
    remember: { sawCompleted: seen.reported, replaced: seen.replaced },
    problems: {},
    created: false,
    fresh: [],
    kept: new Set(),
    ends: [...ends],
  };
}

/** Step 1's parse of a cached CronJob. */
export function loadedFrom(req: Request, raw: Readonly<KubeObject>): LoadedCronJob {
  // The CRD schema already validated and defaulted it; parsing fills defaults for objects written before a
  // default existed. A parse failure of the template must not stop the controller from reporting (the guards
  // report schedule problems with their own messages).
  const parsed = CronJobSchema.safeParse(raw);
  if (parsed.success) return { valid: true, cronJob: withUnknownSpecFields(parsed.data, raw) };
  const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "<root>"}: ${i.message}`);
  // The CRD's structural schema guarantees the JSON types of every stored object.
  const stored = CronJobWireSchema.safeParse(raw);
  if (!stored.success) throw new Error(`CronJob ${req.namespace}/${req.name} cannot be read: ${issues.join("; ")}`);
  return { valid: false, cronJob: stored.data, issues };
}

/**
 * The parsed CronJob with the spec fields its schema does not know, as stored: the API server prunes what the CRD
 * lacks, so these are fields the CRD serves that a trigger's row reads from the spec (its own settings), which the
 * schema's parse would drop. The known fields are the schema's, defaults filled.
 */
function withUnknownSpecFields(cronJob: CronJob, raw: Readonly<KubeObject>): CronJob {
  const stored = (raw as { spec?: unknown }).spec;
  if (typeof stored !== "object" || stored === null) return cronJob;
  const unknown = Object.entries(stored).filter(([k]) => !(k in CronJobSchema.shape.spec.shape));
  return unknown.length ? { ...cronJob, spec: { ...Object.fromEntries(unknown), ...cronJob.spec } } : cronJob;
}

/** A CronJob's key in the reconciler's memory. */
export function keyOf(cronJob: StoredCronJob): CronJobKey {
  const { namespace, name, uid } = cronJob.metadata;
  return { namespace: namespace ?? "", name: name ?? "", ...(uid ? { uid } : {}) };
}

/** A step's decision taken into the pass: its status, Events, counts and problems. */
export function take(
  pass: Pass,
  d:
    | {
        status: CronJobWireStatus;
        /** For the record, entered the one way (enterDecisions). */
        decisions?: readonly TimedDecision[];
        events?: readonly (EventDecision | StateEvent)[];
        counts?: readonly RunOutcome[];
        problems?: WriteProblems;
      }
    | undefined,
): void {
  if (!d) return;
  pass.status = d.decisions?.length ? enterDecisions(d.status, d.decisions) : d.status;
  pass.events.push(...(d.events ?? []));
  pass.counts.push(...(d.counts ?? []));
  if (d.problems && Object.keys(d.problems).length) pass.problems = { ...pass.problems, ...d.problems };
}

/** The Events of the ends that failed (the Job gone, a conflict): not reported; a later pass tries again. */
export function unreported(pass: Pass, failed: readonly EventDecision[]): void {
  for (const e of failed) {
    const i = pass.events.indexOf(e);
    if (i >= 0) pass.events.splice(i, 1);
  }
}
