// The one table of why a CronJob did not run (or ran and did nothing): each cause, how `kubectl cron why` detects
// it, and what to do. The command's verdicts name a row, and their fixes are the row's `fix` said with the names
// the diagnosis found, as what it says keeps the next slot from running is a row's `next`; docs/troubleshooting.md's
// list of causes and the runbooks' lists are generated from this table, each fix said with PLACEHOLDERS
// (test/unit/troubleshooting.test.ts and causes-words.test.ts check both).
//
// This module is the table's core: CAUSES assembled from its parts, in the order the docs list them, and the one way
// a row is said (verdictOf, fixOf, nextOf). The rows are data, a module a family (causes/: the schedule's, a slot
// held, skipped or refused, a run that did not work, the operator's; what they are said with, causes/params.ts), and
// a trigger's rows are its own, written in its spec module (api/v1 TRIGGER_CAUSES). The words that are not causes
// are tables of their own (words/), re-exported here as the verdicts that name no cause (causes/nocause.ts) are.
import { TRIGGER_CAUSES } from "../../../api/v1/index.ts";
import type { CauseParams } from "./causes/params.ts";
import { HELD_CAUSES } from "./causes/held.ts";
import { OPERATOR_CAUSES } from "./causes/operator.ts";
import { RAN_CAUSES } from "./causes/ran.ts";
import type { Cause } from "./causes/say.ts";
import { SCHEDULE_CAUSES } from "./causes/schedule.ts";
import { SKIPPED_CAUSES } from "./causes/skipped.ts";

export { PLACEHOLDERS } from "./causes/params.ts";
export { NO_CAUSE } from "./causes/nocause.ts";
export { CLAIMS } from "./words/claims.ts";
export { FLEET } from "./words/fleet.ts";
export { REQUESTED, requestedText } from "./words/requested.ts";
export { SHAPING } from "./words/shaping.ts";
export { AFTER_WHEN_WORDS, SLOT_WORDS } from "./words/slot.ts";

export const CAUSES = [
  ...SCHEDULE_CAUSES,
  ...HELD_CAUSES,
  ...SKIPPED_CAUSES,
  ...RAN_CAUSES,
  // The triggers' own causes (run-now's, the retry's, spec.after's), each row's written in its spec module.
  ...Object.values(TRIGGER_CAUSES).flat(),
  ...OPERATOR_CAUSES,
] as const satisfies readonly Cause[];

type Row = (typeof CAUSES)[number];
export type CauseId = Row["id"];

/** What a row's verdict and fix are said with: the facts they take (a row that takes none: nothing). */
export type CauseParamsOf<I extends CauseId> = ParamOf<Extract<Row, { id: I }>["verdict"]> &
  ParamOf<Extract<Row, { id: I }>["fix"]>;
type ParamOf<F> = F extends (...a: infer A) => unknown ? (A extends [infer P, ...unknown[]] ? P : unknown) : never;

export function causeOf(id: CauseId): Cause {
  return CAUSES.find((c) => c.id === id)!;
}

/** A cause's verdict (with `when`) or finding (without), said with the facts the diagnosis found. */
export function verdictOf<I extends CauseId>(id: I, p: CauseParamsOf<I>): string {
  return causeOf(id).verdict(p as Required<CauseParams>);
}

/** A cause's fix, said with the names the diagnosis found: the only way `kubectl cron why` words one. */
export function fixOf<I extends CauseId>(id: I, p: CauseParamsOf<I>): string[] {
  return causeOf(id).fix(p as CauseParams);
}

/** The causes that can keep the next slot from running (a row with `next`), and the facts their words take. */
export type NextCauseId = Extract<Row, { next: unknown }>["id"];
export type NextParamsOf<I extends NextCauseId> = ParamOf<Extract<Row, { id: I }>["next"]>;

/** What keeps the next slot from running, in its cause's words said with the facts found (`Next: TIME; WORDS`). */
export function nextOf<I extends NextCauseId>(id: I, p: NextParamsOf<I>): string {
  return causeOf(id).next!(p as Required<CauseParams>);
}
