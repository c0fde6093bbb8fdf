// `kubectl cron instances`: which install and instance runs each claimed namespace, and each install's instance
// Leases, as pure functions of what read/claims.ts read (model/claims.ts): a row a claim, grouped by install then
// instance, its state as `why`'s "Run by:" line judges it (claimState), in CLAIMS' words.
import { CLAIMS } from "./causes.ts";
import { type ClaimFacts, claimState, type ClaimState, type LeaseFacts, leaseLive } from "../model/claims.ts";
import type { Output } from "../model/context.ts";
import { table } from "../model/table.ts";
import { humanDuration, iso } from "../model/time.ts";

/** What was read (read/claims.ts readInstances), where, and when. */
interface InstancesInput {
  claims: readonly ClaimFacts[] | undefined;
  instances: readonly (LeaseFacts & { install: string })[];
  /** The namespace asked about; undefined: every namespace (-A). */
  namespace: string | undefined;
  /** What could not be read (each read's name and why). */
  unreadable: readonly string[];
  now: Date;
}

const since = (from: Date, to: Date) => humanDuration(Math.max(0, Math.round((to.getTime() - from.getTime()) / 1000)));
const stamp = (t: string | undefined) => (t && !Number.isNaN(Date.parse(t)) ? iso(new Date(t)) : (t ?? "-"));

/** A claim's STATE, in CLAIMS' words. */
function stateText(s: ClaimState, now: Date): string {
  switch (s.state) {
    case "active":
      return CLAIMS.stateActive();
    case "released":
      return CLAIMS.stateReleased();
    case "down":
      return CLAIMS.stateDown({ downFor: since(s.downSince, now), takenIn: since(now, s.takenBy) });
    case "overdue":
      return CLAIMS.stateOverdue({ downFor: since(s.downSince, now), late: since(s.takenBy, now) });
    case "gone":
      return CLAIMS.stateGone();
    case "unknown":
      return CLAIMS.stateUnknown();
  }
}

/** An instance Lease's STATE: live, released, or expired how long ago. */
function instanceState(l: LeaseFacts, now: Date): string {
  if (leaseLive(l, now)) return CLAIMS.instanceLive();
  if (!l.holder || !l.renewTime) return CLAIMS.instanceReleased();
  const lapsed = new Date(Date.parse(l.renewTime) + (l.leaseDurationSeconds ?? 0) * 1000);
  return CLAIMS.instanceExpired({ downFor: since(lapsed, now) });
}

/** The claims as rows, by install, then instance (those let go last), then namespace. */
function claimRows(claims: readonly ClaimFacts[], now: Date) {
  return claims
    .map((c) => {
      const s = claimState(c, now);
      return {
        namespace: c.namespace,
        install: c.install ?? "-",
        instance: c.holder ?? "-",
        since: c.acquireTime ? stamp(c.acquireTime) : "-",
        state: s.state,
        text: stateText(s, now),
        instanceLease: c.instanceLease ?? "-",
        ...(s.state === "down" || s.state === "overdue"
          ? { downSince: iso(s.downSince), takenBy: iso(s.takenBy) }
          : {}),
      };
    })
    .sort(
      (a, b) =>
        a.install.localeCompare(b.install) ||
        // A claim let go, held by no instance, after those held.
        Number(a.state === "released") - Number(b.state === "released") ||
        a.instance.localeCompare(b.instance) ||
        a.namespace.localeCompare(b.namespace),
    );
}

/** `kubectl cron instances`: the claims' table, then the instance Leases'; exit 1 when the claims could not be read. */
export function instancesAnswer(x: InstancesInput): Output & { exitCode: number } {
  const rows = claimRows(x.claims ?? [], x.now);
  const instances = x.instances
    .map((l) => ({
      install: l.install,
      lease: l.lease,
      holder: l.holder ?? "-",
      renewTime: stamp(l.renewTime),
      leaseDurationSeconds: l.leaseDurationSeconds,
      state: instanceState(l, x.now),
      namespaces: rows.filter((r) => r.instanceLease === l.lease && r.state !== "released").length,
    }))
    .sort((a, b) => a.install.localeCompare(b.install) || a.lease.localeCompare(b.lease));
  const claimsTable = rows.length
    ? table(
        ["NAMESPACE", "INSTALL", "INSTANCE", "SINCE", "STATE"],
        rows.map((r) => [r.namespace, r.install, r.instance, r.since, r.text]),
      )
    : "";
  const instancesTable = instances.length
    ? table(
        ["INSTALL", "INSTANCE LEASE", "HOLDER", "RENEWED", "STATE", "NAMESPACES"],
        instances.map((l) => [l.install, l.lease, l.holder, l.renewTime, l.state, String(l.namespaces)]),
      )
    : "";
  const where = x.namespace === undefined ? "any namespace" : `namespace ${x.namespace}`;
  const none = x.namespace === undefined ? CLAIMS.noneClaimed() : CLAIMS.unclaimed({ namespace: x.namespace });
  const notes = [
    ...x.unreadable.map((what) => CLAIMS.notRead({ what })),
    ...(x.claims === undefined ? [CLAIMS.claimsUnreadable({ where })] : rows.length ? [] : [none]),
  ];
  return {
    text: [claimsTable, instancesTable].filter((t) => t).join("\n"),
    json: {
      claims: rows.map(({ text, ...r }) => ({ ...r, stateText: text })),
      instances,
      ...(x.unreadable.length ? { unreadable: x.unreadable } : {}),
    },
    notes,
    exitCode: x.claims === undefined ? 1 : 0,
  };
}
