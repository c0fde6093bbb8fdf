// The triggers' table, the controller's half: each row spreads its trigger's row of api/v1/triggers.ts (its words,
// annotations, admission check, how the record names its Jobs: what every reader needs) and adds what only a pass
// does — which requests the trigger has this pass (its source), the Job a request creates, whether it already ran,
// its books (which status fields count its runs, which Jobs are its own), and the Event and count a create makes.
// The run path (controllers/runpath.ts), the books (observe.ts, books.ts) and admission (runs.ts) read the row and
// never switch on a trigger, so a new trigger is a row there and a file here (trigger-<row>.ts, the row's shape in
// trigger.ts), not an edit elsewhere. Pure.
import { after } from "./trigger-after.ts";
import { backfill } from "./trigger-backfill.ts";
import { retry } from "./trigger-retry.ts";
import { runNow } from "./trigger-runnow.ts";
import { schedule } from "./trigger-schedule.ts";
import type { Trigger } from "./trigger.ts";

/** The row's shape and what a row's source sees (trigger.ts), for the reconciler that runs the table. */
export type { SourceInput, Trigger } from "./trigger.ts";

/** The product's triggers, in the order a pass runs them (step 9): a row each, in the files beside this one. */
export const TRIGGERS = [schedule, runNow, backfill, retry, after] as const satisfies readonly Trigger[];
