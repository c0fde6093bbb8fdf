// What a row of the table of causes is (Cause), and the words several rows share: how a verdict on a slot that did not
// run begins, a fix's commands. The rows are in the families' modules beside this one; ../causes.ts assembles them.
import type { CauseParams } from "./params.ts";

export interface Cause {
  /** Stable id: the JSON output's `cause`, and the anchor of its section in docs/troubleshooting.md. */
  readonly id: string;
  /** One line: what happened. */
  readonly title: string;
  /** How `kubectl cron why` finds it, from which live state. */
  readonly detect: string;
  /**
   * What `kubectl cron why` says, one line: its verdict on the slot (`when` given: "did not run at SLOT: …"), or
   * a finding besides it (no `when`); with PLACEHOLDERS, the docs'.
   */
  readonly verdict: (p: Required<CauseParams>) => string;
  /** What to do, one line each: the command's fix lines, and (with PLACEHOLDERS) the docs'. */
  readonly fix: (p: CauseParams) => string[];
  /**
   * What `kubectl cron why` says after the next slot's time (`Next: TIME; WORDS`) when the cause holds now and will
   * keep that slot from running: which cause it is, said with the facts found (nextOf).
   */
  readonly next?: (p: Required<CauseParams>) => string;
  /** The alert whose runbook covers it, when one does. */
  readonly alert?: string;
}

export type Names = Pick<CauseParams, "name" | "namespace">;

/** A fix that names nothing. */
export const fixed =
  (...lines: string[]) =>
  (): string[] =>
    lines;
/** `kubectl cron VERB NAME -n NAMESPACE`. */
export const cron = (verb: string, p: Names) => `\`kubectl cron ${verb} ${p.name} -n ${p.namespace}\``;
/** The backfill of one slot. */
export const backfill = (p: Names & Pick<CauseParams, "slot">) =>
  `\`kubectl cron backfill ${p.name} -n ${p.namespace} --from=${p.slot} --to=${p.slot}\``;
export const when = (yes: boolean, line: string) => (yes ? [line] : []);
/** The slot a verdict is about, in words (absent: a finding besides the verdict), and whether it is still to come. */
export type At = Partial<Pick<CauseParams, "when" | "toCome">>;
/** A retry's Job (spec.retry): which attempt, after which Job failed; none for a slot's first Job. */
export type Retried = Partial<Pick<CauseParams, "attempt" | "attempts" | "failedJob">>;
/** A verdict always about a slot. */
export type Slot = Required<Pick<CauseParams, "when">>;
/**
 * The verdict's words on a slot that did not run: "did not run at SLOT: WORDS" (of a slot to come, "will not run
 * at …"); without a slot (a finding besides the verdict), the words alone.
 */
export const didNotRun = (p: At, words: string) =>
  p.when === undefined ? words : `${p.toCome ? "will not run" : "did not run"} at ${p.when}: ${words}`;
/** The same, of a cause that is only ever a verdict on a slot. */
export const didNotRunAt = (p: Slot, words: string) => `did not run at ${p.when}: ${words}`;
/**
 * A run that waits for a place in its group: a slot "did not run at SLOT: WORDS"; a run-now or backfill request
 * (`asked`, `when` its words) "has not run: WORDS". Without `when` (a finding besides the verdict), the words alone.
 */
export const waitsInGroup = (p: At & Partial<Pick<CauseParams, "asked">>, words: string) =>
  p.asked && p.when !== undefined ? `${p.when} has not run: ${words}` : didNotRun(p, words);
/** A Job that started but whose Pods never worked: "started at SLOT but never got to work: WORDS". */
export const neverWorked = (p: Slot, words: string) => `started at ${p.when} but never got to work: ${words}`;
