// Missed: the operator reached the slot after startingDeadlineSeconds (deadline-missed), or a deadline shorter than
// its usual lag lost it (deadline-shorter-than-lag); why it was late (a leader change, a restart).
import { type CronJob, type RecentRun, RecordDecision, RecordTrigger } from "../../../../api/v1/index.ts";
import { humanDuration, iso } from "../../model/time.ts";
import { calendarMissedVerdict } from "./excluded.ts";
import { groupContext, groupMissedVerdict } from "./group.ts";
import { heldPastDeadlineVerdict } from "./held.ts";
import { found, plural, SECOND, secondsBetween, type SlotContext, stamp, type Verdict } from "./verdict.ts";

/** How late the operator reaches a slot when nothing is wrong, at most (a pass, a create, a busy queue). */
const USUAL_LAG_S = 10;

/**
 * Why the operator reached a slot late: a leader change, its Pods starting, or load (the record's lags). `because`:
 * the causes found, in words for the verdict; `evidence`: the times they rest on.
 */
function lateness(c: SlotContext, decidedAt: Date): { because: string[]; evidence: string[] } {
  const because: string[] = [];
  const evidence: string[] = [];
  const lease = c.f.operator.lease;
  const late = secondsBetween(c.slot, decidedAt);
  evidence.push(`the operator decided at ${iso(decidedAt)}, ${humanDuration(late)} after the slot`);
  if (
    lease?.acquireTime &&
    new Date(lease.acquireTime) > c.slot &&
    new Date(lease.acquireTime) <= new Date(decidedAt.getTime() + 60 * SECOND)
  ) {
    // The Lease keeps only its newest acquisition: it shows that no replica held it from before the slot until
    // then, not why (a leader lost, a restart, every replica paused), nor any earlier gap.
    const transitions = lease.transitions === undefined ? "" : `; ${plural(lease.transitions, "leader change")} in all`;
    because.push(
      `no replica led from before the slot until ${stamp(lease.acquireTime)}, when ${lease.holder ?? "?"} took the Lease`,
    );
    evidence.push(
      `Lease ${c.f.operator.namespace}/${c.f.operator.leaseName}: ${lease.holder ?? "?"} acquired it at ${stamp(lease.acquireTime)}, after the slot${transitions}. The Lease shows only its newest acquisition: that no replica held it until then (a leader lost, a restart, or every replica paused), not which`,
    );
  }
  const started = (c.f.operator.pods ?? [])
    .map((p) => p.created)
    .filter((t): t is string => !!t && new Date(t) > c.slot && new Date(t) <= decidedAt);
  if (started.length) {
    because.push(
      `the operator restarted: ${started.length > 1 ? `its Pods started at ${started.join(", ")}` : `its Pod started at ${started[0]}`}, after the slot`,
    );
    evidence.push(`operator Pods started after the slot: ${started.join(", ")}`);
  }
  return { because, evidence };
}

/** The lags (seconds from slot to Job creation) the record shows for recent scheduled runs. */
export function observedLags(cronJob: CronJob): number[] {
  return (cronJob.status?.recentRuns ?? [])
    .filter(
      (e) =>
        (e.decision === RecordDecision.Created || e.decision === RecordDecision.Adopted) &&
        e.trigger === RecordTrigger.Schedule &&
        e.scheduledTime,
    )
    .map((e) => secondsBetween(new Date(e.scheduledTime!), new Date(e.decidedAt)));
}

/**
 * A Missed entry: the operator reached the slot after startingDeadlineSeconds (behind a Job: held.ts; waiting in its
 * group: group.ts).
 */
export function missedVerdict(c: SlotContext, e: RecentRun, evidence: string[]): Verdict {
  const { cronJob, slotText: when } = c;
  const deadline = cronJob.spec?.startingDeadlineSeconds;
  const byGroup = groupMissedVerdict(c, e, evidence);
  if (byGroup) return byGroup;
  if (e.blockedBy) return heldPastDeadlineVerdict(c, e.blockedBy, evidence);
  // Held while a calendar it names could not be read, until its deadline passed.
  const byCalendar = calendarMissedVerdict(c, evidence);
  if (byCalendar) return byCalendar;
  // A run of a group may have waited for a place until its deadline (the record keeps no reason for it): the group's
  // state goes with the verdict.
  const shown = [...evidence, ...groupContext(c.f)];
  const decided = new Date(e.decidedAt);
  const why = lateness(c, decided);
  const late = secondsBetween(c.slot, decided);
  const lags = observedLags(cronJob);
  // The operator was away (a leader change, a restart after the slot): the deadline did its job. Otherwise a slot
  // reached within the operator's usual reaction (its recent lags, or a few seconds) was lost to a deadline too
  // short for it.
  const away = why.because.length > 0;
  const usual = Math.max(USUAL_LAG_S, ...lags);
  if (!away && deadline !== undefined && late <= usual) {
    return found(
      "deadline-shorter-than-lag",
      { when, deadline: String(deadline), late: String(late), ...(lags.length ? { lags: lags.join(", ") } : {}) },
      [...shown, ...why.evidence],
    );
  }
  return found(
    "deadline-missed",
    {
      when,
      recordLost: false,
      late: humanDuration(late),
      deadline: String(deadline ?? "?"),
      ...(away ? { because: why.because.join(", and ") } : {}),
      name: c.name,
      namespace: c.namespace,
      slot: iso(c.slot),
    },
    [...shown, ...why.evidence],
  );
}
