// A trigger's row written by a test, put in the API's table (api/v1 TRIGGER_ROWS) as a real one would be, for the
// length of a call (until its promise settles), and taken out again: every reader that loops over the table reads it.
import { TRIGGER_ROWS, type TriggerRow } from "../api/v1/index.ts";

export function withTriggerRow<T>(row: TriggerRow, fn: () => T): T {
  const rows = TRIGGER_ROWS as TriggerRow[];
  rows.push(row);
  const out = () => rows.splice(rows.indexOf(row), 1);
  let result: T;
  try {
    result = fn();
  } catch (err) {
    out();
    throw err;
  }
  if (result instanceof Promise) return result.finally(out) as T;
  out();
  return result;
}
