// Which install and instance runs the CronJob's namespace, from its claim (model/claims.ts, read with the operator):
// the line `why` says of it (the Diagnosis's runBy, in CLAIMS' words), and the finding when the instance holding it is
// down past the time another should have taken it (instance-down), unless the install is down as a whole (the operator's
// own findings say that).
import { CLAIM_LEASE_NAME } from "../../../../api/v1/index.ts";
import { type ClaimFacts, claimState, type ClaimState, splitRef } from "../../model/claims.ts";
import type { OperatorFacts } from "../../model/facts.ts";
import { iso } from "../../model/time.ts";
import { CLAIMS } from "../causes.ts";
import { ago, fact, type Found, plural, type RunBy, stamp } from "./verdict.ts";

/** The install and instance of a claim, as the words name them. */
const names = (c: ClaimFacts) => ({
  install: c.install ?? "?",
  instance: c.holder ?? "?",
  lease: c.instanceLease ?? "?",
  namespace: c.namespace,
});

/** A held claim's line, by its state. */
function heldText(c: ClaimFacts, s: ClaimState, now: Date): string {
  const n = names(c);
  switch (s.state) {
    case "active":
      return CLAIMS.active(n);
    case "released":
      return CLAIMS.released(n);
    case "down":
      return CLAIMS.down({ ...n, downFor: ago(s.downSince, now), takenIn: ago(now, s.takenBy) });
    case "overdue":
      return CLAIMS.overdue({ ...n, downFor: ago(s.downSince, now), late: ago(s.takenBy, now) });
    case "gone":
      return CLAIMS.gone(n);
    case "unknown":
      return CLAIMS.unknown(n);
  }
}

/** The namespace's claim as `why` says it (undefined: it was not read). */
export function runByOf(op: OperatorFacts, namespace: string, now: Date): RunBy | undefined {
  const read = op.claim;
  if (!read) return undefined;
  if (read.state === "none") return { state: "unclaimed", text: CLAIMS.unclaimed({ namespace }) };
  if (read.state === "unreadable") {
    return { state: "unreadable", text: CLAIMS.unreadable({ namespace, lease: `${namespace}/${CLAIM_LEASE_NAME}` }) };
  }
  const c = read.claim;
  const s = claimState(c, now);
  return {
    state: s.state,
    text: heldText(c, s, now),
    ...(c.install ? { install: c.install } : {}),
    ...(c.holder ? { instance: c.holder } : {}),
    ...(c.acquireTime ? { since: stamp(c.acquireTime) } : {}),
    ...(c.instanceLease ? { instanceLease: c.instanceLease } : {}),
  };
}

/**
 * instance-down: the instance holding the namespace's claim is down, and the time another should have taken it has
 * passed. The evidence is the claim and its instance Lease as read.
 */
export function claimFinding(op: OperatorFacts, now: Date): Found | undefined {
  if (op.claim?.state !== "claimed") return undefined;
  const c = op.claim.claim;
  const s = claimState(c, now);
  if (s.state !== "overdue" || c.instance?.state !== "found") return undefined;
  const l = c.instance.lease;
  const install = c.install ?? "?";
  return fact(
    "instance-down",
    {
      namespace: c.namespace,
      instance: c.holder ?? "?",
      install,
      age: ago(s.renewed, now),
      installNamespace: splitRef(install)?.namespace ?? "?",
    },
    [
      `Lease ${c.lease} (the claim): holder ${c.holder ?? "?"}, install ${install}, instance Lease ` +
        `${c.instanceLease ?? "?"}, acquired ${c.acquireTime ? stamp(c.acquireTime) : "?"}, leaseDurationSeconds ` +
        `${c.leaseDurationSeconds ?? "?"}, ${plural(c.transitions ?? 0, "transition")}`,
      `Lease ${l.lease} (the instance): holder ${l.holder ?? "(none: released)"}, renewed ${stamp(l.renewTime ?? "?")} ` +
        `(${ago(s.renewed, now)} ago), leaseDurationSeconds ${l.leaseDurationSeconds ?? "?"}`,
      `the API server's time is ${iso(now)}`,
    ],
  );
}
