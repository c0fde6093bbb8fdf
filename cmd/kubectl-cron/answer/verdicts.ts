// The fleet's verdicts as `why` without NAME decides them, over facts however they were read (read/whyfacts.ts: the
// command's one-shot lists, or the dashboard's informers): each CronJob's diagnosis and what it may share with others,
// and the problems many share, said once. Pure.
import { type CalendarHold, exclusionsOf } from "../../../api/v1/index.ts";
import type { GroupFacts } from "../model/groupfacts.ts";
import { type Diagnosis, diagnose, Fleet } from "./why.ts";
import type { SharedProblem } from "./why/fleet.ts";
import type { OperatorView } from "./why/operator.ts";
import type { WhyFacts } from "../model/facts.ts";

/** One CronJob's diagnosis, with what it may share with others: its group and the calendar holding its slots. */
export interface Verdict {
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

/** Whether the CronJob needs attention: a cause found, or the state cannot tell. */
export const needsAttention = (v: Verdict): boolean => v.diagnosis.exitCode !== 0;

/** The problems the CronJobs of `verdicts` share (the operator's, a group's, a calendar's), each once with every one it affects. */
export function sharedProblems(verdicts: Iterable<Verdict>, allNamespaces: boolean): SharedProblem[] {
  const fleet = new Fleet(allNamespaces);
  for (const v of verdicts) if (needsAttention(v)) fleet.add(v.diagnosis, v.view, v.group, v.hold);
  return fleet.problems();
}
