// A run-now or backfill request in the words that stand where a slot's do (REQUESTED), by its trigger's row name.
import type { CauseParams } from "../causes/params.ts";
import type { Slot } from "../causes/say.ts";

/**
 * A request a verdict is about instead of a slot (`asked`: a run-now or backfill request waiting for a place in its
 * group), in the words that stand where a slot's do (`when`), by its trigger's row name; `other` for a row with no
 * words here (its word and request).
 */
export const REQUESTED = {
  runNow: (p: Pick<CauseParams, "request">) => `run-now request "${p.request}"`,
  /** A slot of a backfill request: the slot in words (`when`). */
  backfill: (p: Pick<CauseParams, "request"> & Slot) => `backfill "${p.request}" for ${p.when}`,
  other: (p: Pick<CauseParams, "request"> & { word?: string; when?: string }) =>
    `${p.word ?? "WORD"} request "${p.request}"${p.when ? ` for ${p.when}` : ""}`,
};

/** A request of a trigger's row in REQUESTED's words: its own, else `other`'s with the row's word. */
export function requestedText(row: { name: string; word: string }, p: { request: string; when?: string }): string {
  const own = (REQUESTED as Record<string, ((p: { request: string; when: string }) => string) | undefined>)[row.name];
  return own && row.name !== "other"
    ? own({ request: p.request, when: p.when ?? "" })
    : REQUESTED.other({ ...p, word: row.word });
}
