// Refused: the API server refused the slot's Job (a quota, an admission webhook or policy, a foreign Job holding the
// name, or another reason).
import { type RecentRun, RefusedReason } from "../../../../api/v1/index.ts";
import { found, type SlotContext, type Verdict } from "./verdict.ts";

export function refusedVerdict(c: SlotContext, e: RecentRun, evidence: string[]): Verdict {
  const { slotText: when, f } = c;
  const msg = e.message ?? "";
  if (e.reason === RefusedReason.AlreadyExists) {
    const foreign = f.foreignJobs[0];
    const owner = foreign?.metadata?.ownerReferences?.find((r) => r.controller);
    return found("create-refused-name-taken", { when, ...(msg ? { message: msg } : {}) }, [
      ...evidence,
      ...(foreign
        ? [`Job ${foreign.metadata?.name}: ${owner ? `controlled by ${owner.kind} ${owner.name}` : "no controller"}`]
        : []),
    ]);
  }
  if (/exceeded quota/i.test(msg)) {
    const quotas = f.quotas.map(
      (q) =>
        `ResourceQuota ${q.name}: ${Object.entries(q.hard)
          .map(([k, v]) => `${k} ${q.used[k] ?? "?"}/${v}`)
          .join(", ")}`,
    );
    return found("create-refused-quota", { when, message: msg }, [...evidence, ...quotas]);
  }
  if (/admission webhook|denied the request|violates PodSecurity|denied by/i.test(msg)) {
    return found("create-refused-admission", { when, message: msg }, evidence);
  }
  return found(
    "create-refused",
    { when, reason: e.reason, message: msg, name: c.name, namespace: c.namespace },
    evidence,
  );
}
