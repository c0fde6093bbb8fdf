// A CronJob's limits and jitter as `why` reads them (api/v1/limits.ts, api/v1/jitter.ts): scheduling ended
// (spec.maxRuns made, spec.endTime passed), not started (before spec.startTime), and a jittered slot's offset (the
// Job's annotation, else the record's startsAt, else the hash the operator computes) and whether its run is due yet.
import {
  type CronJob,
  endTimeEnd,
  type Job,
  jitterOffsetOf,
  jitterOffsetSeconds,
  jitterSecondsOf,
  maxRunsEnd,
  offsetText,
  type RecentRun,
  type ScheduleEnd,
} from "../../../../api/v1/index.ts";
import { NO_CAUSE, SLOT_WORDS } from "../causes.ts";
import { iso } from "../../model/time.ts";
import { SECOND, type Verdict } from "./verdict.ts";

/** What ended the CronJob's scheduling, if it has: its count reached, or its end time passed with no slot left. */
export function scheduleEndOf(cronJob: CronJob, now: Date, nextSlot: Date | undefined): ScheduleEnd | undefined {
  const byCount = maxRunsEnd(cronJob.spec, cronJob.status);
  if (byCount) return byCount;
  const available = cronJob.status?.conditions?.find((x) => x.type === "Available" && x.status === "False");
  const stored = available?.reason === "EndTimeReached";
  return endTimeEnd(cronJob.spec, now, stored ? undefined : nextSlot, 0);
}

/**
 * The verdict of a CronJob whose scheduling ended: healthy, with the count or the end and the Available condition;
 * `last`: the verdict on its last slot, said as evidence when it is well (else it stays the verdict, the end said
 * in its evidence: a last run that failed is a problem still).
 */
export function endedVerdict(cronJob: CronJob, end: ScheduleEnd, last: Verdict | undefined): Verdict {
  if (last && last.status !== "healthy") return { ...last, evidence: [...last.evidence, endedOf(end)] };
  const available = cronJob.status?.conditions?.find((x) => x.type === "Available" && x.status === "False");
  const evidence =
    end.reason === "MaxRunsReached"
      ? [`status.scheduledRuns: ${end.made}`, `spec.maxRuns: ${end.of}`]
      : [`spec.endTime: ${String(cronJob.spec?.endTime)}`];
  if (available?.reason === end.reason) evidence.push(`condition Available=False ${available.reason}`);
  if (last) evidence.push(`last slot: ${last.verdict}`);
  return { status: "healthy", verdict: endedOf(end), evidence, fix: [] };
}

/** The end in words (NO_CAUSE's, as limits.ts says it). */
const endedOf = (end: ScheduleEnd) =>
  NO_CAUSE.ended(
    end.reason === "MaxRunsReached"
      ? { byMaxRuns: true, made: String(end.made), maxRuns: String(end.of), endTime: "" }
      : { byMaxRuns: false, made: "", maxRuns: "", endTime: iso(end.endTime) },
  );

/** A slot's jitter offset in seconds: its Job's annotation, else its entry's startsAt, else the operator's hash. */
export function offsetOf(
  cronJob: CronJob,
  slot: Date,
  job: Readonly<Job> | undefined,
  entry: RecentRun | undefined,
): number | undefined {
  const jitter = jitterSecondsOf(cronJob.spec);
  if (jitter <= 0) return undefined;
  const fromJob = job ? jitterOffsetOf(job) : undefined;
  if (fromJob !== undefined) return fromJob;
  if (entry?.startsAt) return Math.max(0, Math.round((Date.parse(entry.startsAt) - slot.getTime()) / SECOND));
  const key = { namespace: cronJob.metadata?.namespace ?? "", name: cronJob.metadata?.name ?? "" };
  return jitterOffsetSeconds(key, slot, jitter);
}

/** Where the offset was read, as evidence. */
export function offsetEvidence(slot: Date, offset: number, job: Readonly<Job> | undefined): string {
  const start = new Date(slot.getTime() + offset * SECOND);
  const from =
    job && jitterOffsetOf(job) !== undefined ? `Job ${job.metadata?.name ?? ""}'s annotation` : "spec.jitter";
  return `slot ${iso(slot)} + jitter offset ${offsetText(offset)} (${from}): its run starts at ${iso(start)}`;
}

/** A slot in words with its offset. */
export const jitteredText = (when: string, offset: number): string =>
  SLOT_WORDS.jittered({ when, offset: offsetText(offset) });

/** A jittered slot whose run has not started yet and is not due: when it starts. */
export function jitterDueVerdict(when: string, slot: Date, offset: number): Verdict {
  const start = new Date(slot.getTime() + offset * SECOND);
  return {
    status: "healthy",
    verdict: NO_CAUSE.jitterDue({ when, startsAt: iso(start), offset: offsetText(offset) }),
    evidence: [offsetEvidence(slot, offset, undefined)],
    fix: [],
  };
}
