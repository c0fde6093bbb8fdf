// metav1.Condition bookkeeping (apimachinery's meta.SetStatusCondition): lastTransitionTime moves only
// when a condition's status changes.
import type { Condition } from "../api/v1/index.ts";

export type ConditionInput = Omit<Condition, "lastTransitionTime" | "observedGeneration">;

export function setConditions(
  previous: readonly Condition[] | undefined,
  next: ConditionInput[],
  now: Date,
  observedGeneration: number | undefined,
): Condition[] {
  const ts = now.toISOString().replace(/\.\d{3}Z$/, "Z");
  return next.map((c) => {
    const old = previous?.find((p) => p.type === c.type);
    const out: Condition = {
      ...c,
      lastTransitionTime: old && old.status === c.status ? old.lastTransitionTime : ts,
    };
    if (observedGeneration !== undefined) out.observedGeneration = observedGeneration;
    return out;
  });
}
