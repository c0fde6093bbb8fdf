// The verdicts of `kubectl cron why` that name no cause (NO_CAUSE): their words, beside the table of causes
// (../causes.ts) and said with the same facts (CauseParams).
import type { CauseParams } from "./params.ts";
import type { Retried, Slot } from "./say.ts";

/**
 * The verdicts that name no cause: the slot ran (or runs) as it should, is not due yet, or the state cannot tell.
 * Their words, as functions of the facts like a cause's (the command's modules write none of their own).
 */
export const NO_CAUSE = {
  /**
   * It ran and completed (`createdAfter`: seconds from the slot to the Job's creation; `took`: how long); a retry
   * (spec.retry) says which attempt, after which Job failed.
   */
  completed: (p: Slot & Pick<CauseParams, "job" | "createdAfter" | "took"> & Retried) =>
    `ran at ${p.when}: Job ${p.job}${retried(p)}${createdAfter(p)}, Complete${p.took ? ` in ${p.took}` : ""}`,
  /** It runs, and nothing keeps its Pods from working (a retry: which attempt). */
  running: (p: Slot & Pick<CauseParams, "job" | "createdAfter" | "age" | "bounds"> & Retried) =>
    `ran at ${p.when}: Job ${p.job}${retried(p)}${createdAfter(p)} has been running for ${p.age} (${p.bounds})`,
  /** Its Job is gone and the record has no outcome. */
  outcomeLost: (p: Slot & Pick<CauseParams, "job">) =>
    `ran at ${p.when} (Job ${p.job}), but the Job is gone and the record has no outcome for it`,
  /** Older than the record and no Job left. */
  beyondRecord: (p: Slot) =>
    `cannot tell about ${p.when}: it is older than the 10 decisions the record keeps, and no Job for it is left`,
  /** Just due (`late`: seconds since the slot). */
  dueNow: (p: Slot & Pick<CauseParams, "late">) =>
    `${p.when} is due now: the operator has not started it yet (${p.late} s ago)`,
  /** A slot still to come (`age`: how long until it). */
  toCome: (p: Slot & Pick<CauseParams, "age">) => `${p.when} has not come yet (in ${p.age})`,
  /** No slot since the CronJob's creation (`nextSlot`: the first). */
  noSlotYet: (p: Pick<CauseParams, "nextSlot">) => `has had no slot since its creation; the first is ${p.nextSlot}`,
  /** Scheduling ended (spec.maxRuns, spec.endTime): api/v1/limits.ts's words, the Available condition's message. */
  ended: (p: Pick<CauseParams, "byMaxRuns" | "made" | "maxRuns" | "endTime">) =>
    p.byMaxRuns
      ? `ended: ${p.made} of ${p.maxRuns} runs made (spec.maxRuns); run-now and backfill requests still run`
      : `ended: spec.endTime ${p.endTime} has passed; run-now requests still run`,
  /** Before spec.startTime (`nextSlot`: the first slot in the window). */
  notStarted: (p: Pick<CauseParams, "startTime" | "nextSlot">) =>
    `not started: starts ${p.startTime}; the first slot is ${p.nextSlot}`,
  /** A slot of spec.jitter whose run starts later than the slot: not due yet. */
  jitterDue: (p: Slot & Pick<CauseParams, "startsAt" | "offset">) =>
    `${p.when} is due at ${p.startsAt} (jitter offset ${p.offset})`,
  /** spec.after: the upstream's newest run still runs. */
  upstreamRunning: (p: Pick<CauseParams, "upstream" | "upstreamRun" | "runningSince">) =>
    `waiting for ${p.upstream}'s ${p.upstreamRun} run (running since ${p.runningSince})`,
  /** spec.after: the upstream's newest run ended not as spec.after[].when asks. */
  upstreamEndedOther: (p: Pick<CauseParams, "upstream" | "upstreamRun" | "upstreamFailed" | "name" | "upstreamWhen">) =>
    `${p.upstream}'s ${p.upstreamRun} run ${p.upstreamFailed ? "failed" : "succeeded"}; ${p.name} runs after ` +
    p.upstreamWhen,
  /** spec.after: no run of the upstream has ended since the CronJob named it. */
  noUpstreamRun: (p: Pick<CauseParams, "upstream" | "name" | "upstreamWhen">) =>
    `waiting for a run of ${p.upstream}: ${p.name} runs after ${p.upstreamWhen}, and none has ended since it named ` +
    p.upstream,
  /** spec.afterPolicy All: an upstream has ended no run as spec.after[].when asks since the last join. */
  joinWaiting: (p: Pick<CauseParams, "upstream" | "name" | "upstreamWhen">) =>
    `waiting for a run of ${p.upstream}: ${p.name} runs once all of its upstreams have ended a run as spec.after ` +
    `asks (spec.afterPolicy All), and ${p.upstream} has ended none with ${p.upstreamWhen} since the last join`,
} satisfies Record<string, (p: Required<CauseParams>) => string>;

const createdAfter = (p: Pick<CauseParams, "createdAfter">) =>
  p.createdAfter === undefined ? "" : ` (created ${p.createdAfter} s after the slot)`;
/** A retry's Job: " (attempt 1 of 3, after Job X failed)". */
const retried = (p: Retried) =>
  p.attempt === undefined ? "" : ` (attempt ${p.attempt} of ${p.attempts}, after Job ${p.failedJob} failed)`;
