// Held: concurrencyPolicy Forbid kept the slot behind a running Job (forbid-held), its concurrency group held it
// (group.ts), or a calendar it names cannot be read (excluded.ts).
import {
  classifyJob,
  HELD_BY_GROUP_REASONS,
  queuedBy,
  type RecentRun,
  RecordReason,
} from "../../../../api/v1/index.ts";
import { calendarHeldVerdict } from "./excluded.ts";
import { groupHeldVerdict, placeText } from "./group.ts";
import { jobSpec, keptAlive } from "./jobs.ts";
import { found, type SlotContext, type Verdict } from "./verdict.ts";

/** A Held entry: concurrencyPolicy Forbid kept the slot behind a Job that was still running, or its group held it. */
export function heldVerdict(c: SlotContext, e: RecentRun, evidence: string[]): Verdict {
  if ((HELD_BY_GROUP_REASONS as readonly string[]).includes(e.reason)) return groupHeldVerdict(c, e, evidence);
  if (e.reason === RecordReason.CalendarNotFound) return calendarHeldVerdict(c, e, evidence);
  const { slotText: when, f } = c;
  const blocker = e.blockedBy ? c.jobNamed(e.blockedBy) : undefined;
  if (!blocker || classifyJob(blocker) !== "active") {
    return found(
      "forbid-held",
      {
        when,
        namespace: c.namespace,
        job: e.blockedBy ?? "?",
        running: false,
        pastDeadline: false,
        noActiveDeadline: true,
      },
      [...evidence, blocker ? `Job ${e.blockedBy} has ended since` : `Job ${e.blockedBy} is gone`],
    );
  }
  const alive = keptAlive(blocker, c.podsOf(e.blockedBy!), f.now);
  // A queued Job holds its place without running: say so.
  if (queuedBy(blocker)) alive.evidence.unshift(`Job ${placeText(blocker, f.now)}`);
  return found(
    "forbid-held",
    {
      when,
      namespace: c.namespace,
      job: e.blockedBy!,
      running: true,
      pastDeadline: false,
      age: alive.age,
      bounds: alive.bounds,
      noActiveDeadline: jobSpec(blocker).activeDeadlineSeconds === undefined,
    },
    [...evidence, ...alive.evidence],
  );
}

/** A Missed entry naming a Job: held by concurrencyPolicy Forbid behind it until startingDeadlineSeconds passed. */
export function heldPastDeadlineVerdict(c: SlotContext, blockedBy: string, evidence: string[]): Verdict {
  const deadline = c.cronJob.spec?.startingDeadlineSeconds;
  const blocker = c.jobNamed(blockedBy);
  const alive =
    blocker && classifyJob(blocker) === "active" ? keptAlive(blocker, c.podsOf(blockedBy), c.f.now) : undefined;
  return found(
    "forbid-held",
    {
      when: c.slotText,
      namespace: c.namespace,
      job: blockedBy,
      running: alive !== undefined,
      pastDeadline: true,
      deadline: String(deadline ?? "?"),
      ...(alive ? { age: alive.age, bounds: alive.bounds } : {}),
      noActiveDeadline: true,
    },
    [...evidence, ...(alive?.evidence ?? [])],
  );
}
