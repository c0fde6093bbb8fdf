// metav1.Condition bookkeeping (apimachinery's meta.SetStatusCondition): lastTransitionTime moves only
// when a condition's status changes.
import type { Condition } from "../api/v1/index.ts";
import { rfc3339 } from "../runtime/metatime.ts";
import { bounded } from "./events.ts";

/** Longest condition message written (messages quote API errors and user values). */
export const MAX_CONDITION_MESSAGE = 4096;

export type ConditionInput = Omit<Condition, "lastTransitionTime" | "observedGeneration">;

/** A condition as stored: only the fields setConditions reads, with their wire types. */
type StoredCondition = Pick<Condition, "type" | "lastTransitionTime"> & { status: string };

export function setConditions(
  previous: readonly StoredCondition[] | undefined,
  next: ConditionInput[],
  now: Date,
  observedGeneration: number | undefined,
): Condition[] {
  const ts = rfc3339(now);
  return next.map((c) => {
    const old = previous?.find((p) => p.type === c.type);
    const out: Condition = {
      ...c,
      message: bounded(c.message, MAX_CONDITION_MESSAGE),
      lastTransitionTime: old && old.status === c.status ? old.lastTransitionTime : ts,
    };
    if (observedGeneration !== undefined) out.observedGeneration = observedGeneration;
    return out;
  });
}
