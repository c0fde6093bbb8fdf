// The fleet's verdicts as `why` without NAME decides them, over facts however they were read (read/whyfacts.ts: the
// command's one-shot lists, or the dashboard's informers): each CronJob's diagnosis and what it may share with others,
// and the problems many share, said once. Pure.
import { type CalendarHold, exclusionsOf } from "../../../api/v1/index.ts";
import type { GroupFacts } from "../model/groupfacts.ts";
import { type Diagnosis, diagnose, Fleet } from "./why.ts";
import type { SharedProblem, SharedInputs } from "./why/fleet.ts";
import type { OperatorView } from "./why/operator.ts";
import type { WhyFacts } from "../model/facts.ts";

/** One CronJob's diagnosis, with what it may share with others: its group and the calendar holding its slots. */
interface Verdict {
  diagnosis: Diagnosis;
  /** The operator's facts and the clocks it was diagnosed with. */
  view: OperatorView;
  group: GroupFacts | undefined;
  /** What holds its slots by its spec.exclusions, as read (a calendar's hold is shared). */
  hold: CalendarHold | undefined;
}

/** The diagnosis of one CronJob's facts (`slot`: of that slot, else the latest that should have run). */
export function verdictOf(f: WhyFacts, slot?: Date): Verdict {
  const diagnosis = diagnose(f, slot ? { slot } : {});
  // What holds its slots by its spec.exclusions, as read (the calendars: one list of its namespace's).
  const hold = diagnosis.exitCode !== 0 && f.calendars ? exclusionsOf(f.cronJob, f.calendars).hold : undefined;
  // The operator's facts and the clocks only: a verdict kept must not keep the CronJob's Jobs, Pods and Events.
  const view = { operator: f.operator, now: f.now, localNow: f.localNow, serverClock: f.serverClock };
  return { diagnosis, view, group: f.group, hold };
}

/**
 * What is read of a verdict once it is made (needsAttention, sharedProblems, the dashboard's attention): its
 * diagnosis's outcome and own findings in a line each, and what it may share. A Verdict is one; verdictKeys() is the
 * least one, which a reader that keeps thousands of verdicts keeps instead.
 */
export interface VerdictKeys {
  diagnosis: SharedInputs & Pick<Diagnosis, "exitCode">;
  view: OperatorView;
  group: GroupFacts | undefined;
  hold: CalendarHold | undefined;
}

/**
 * A verdict's keys alone: no evidence, fixes, slot or next run (the dashboard keeps one per CronJob that needs
 * attention: at 5,000 a few MB of words no one reads again, issue 72).
 */
export function verdictKeys(v: Verdict): VerdictKeys {
  const d = v.diagnosis;
  return {
    diagnosis: {
      cronJob: d.cronJob,
      status: d.status,
      verdict: d.verdict,
      ...(d.cause !== undefined ? { cause: d.cause } : {}),
      also: d.also.map((a) => ({ cause: a.cause, summary: a.summary })),
      exitCode: d.exitCode,
    },
    view: v.view,
    group: v.group,
    hold: v.hold,
  };
}

/** Whether the CronJob needs attention: a cause found, or the state cannot tell. */
export const needsAttention = (v: VerdictKeys): boolean => v.diagnosis.exitCode !== 0;

/** The problems the CronJobs of `verdicts` share (the operator's, a group's, a calendar's), each once with every one it affects. */
export function sharedProblems(verdicts: Iterable<VerdictKeys>, allNamespaces: boolean): SharedProblem[] {
  const fleet = new Fleet(allNamespaces);
  for (const v of verdicts) if (needsAttention(v)) fleet.add(v.diagnosis, v.view, v.group, v.hold);
  return fleet.problems();
}
