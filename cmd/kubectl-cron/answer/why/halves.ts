// The plugin's halves of the trigger rows, by row name (half.ts: what a half is): a row added to api/v1 TRIGGER_ROWS
// with something of its own to say in `why` registers its half here, and only here.
import { TRIGGER_ROWS, type TriggerRow } from "../../../../api/v1/index.ts";
import { AFTER_HALF } from "./after.ts";
import type { TriggerHalf } from "./half.ts";
import { RETRY_HALF } from "./retry.ts";

/** Each row's half, by the row's name; a row with none has nothing of its own to say. */
const TRIGGER_HALVES: Readonly<Record<string, TriggerHalf>> = { retry: RETRY_HALF, after: AFTER_HALF };

/** The rows in the table (those given, else TRIGGER_ROWS), in its order, each with its half (an empty one: none). */
export function halvesOf(rows: readonly TriggerRow[] = TRIGGER_ROWS): { row: TriggerRow; half: TriggerHalf }[] {
  return rows.map((row) => ({ row, half: TRIGGER_HALVES[row.name] ?? {} }));
}
