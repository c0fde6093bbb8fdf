// Which install, and which instance of it, runs a namespace: the claim an install that claims its namespaces
// (--namespace-claims, on with --watch-namespaces, --watch-namespace-selector and --sharding) keeps in each namespace
// it acts in, a coordination.k8s.io/v1 Lease named CLAIM_LEASE_NAME, and the instance Lease whose renewal keeps that
// claim alive (a shard's own, or the install's leader-election Lease). Plain data and pure functions of it: `why`
// says one line of it, `instances` lists them, from the same state (claimState).
import type { KubeObject } from "../../../runtime/kinds.ts";

import { INSTALL_ANNOTATION, INSTANCE_LEASE_ANNOTATION } from "../../../api/v1/index.ts";

/**
 * How long after the claim's leaseDurationSeconds (counted from the instance Lease's last renewTime) another instance
 * has taken a namespace whose instance died ("plus a few seconds": it must see the Lease lapse first).
 */
const TAKEOVER_GRACE_SECONDS = 5;

/** A Lease, the fields that say who holds it and whether it is kept alive. */
export interface LeaseFacts {
  /** `<namespace>/<name>`. */
  lease: string;
  holder?: string;
  renewTime?: string;
  acquireTime?: string;
  leaseDurationSeconds?: number;
  transitions?: number;
}

/** The instance Lease a claim names, as read. */
export type InstanceLeaseRead =
  | { state: "found"; lease: LeaseFacts }
  /** It does not exist (an instance that stops deletes its own). */
  | { state: "missing" }
  /** It could not be read (noted among what could not be read). */
  | { state: "unreadable" };

/** A namespace's claim, as read. */
export interface ClaimFacts extends LeaseFacts {
  /** The claimed namespace. */
  namespace: string;
  /** The install, `<namespace>/<leader-election id>` (its annotation). */
  install: string | undefined;
  /** `<namespace>/<name>` of its instance Lease (its annotation). */
  instanceLease: string | undefined;
  /** The instance Lease, when the claim names one. */
  instance?: InstanceLeaseRead;
}

/** What was read of a namespace's claim: it, none (no install claims the namespace), or not readable. */
export type ClaimRead = { state: "claimed"; claim: ClaimFacts } | { state: "none" } | { state: "unreadable" };

/** A Lease trimmed to who holds it and whether it is kept alive. */
export function leaseFactsOf(lease: KubeObject): LeaseFacts {
  const spec = (lease.spec ?? {}) as {
    holderIdentity?: string | null;
    renewTime?: string | null;
    acquireTime?: string | null;
    leaseDurationSeconds?: number | null;
    leaseTransitions?: number | null;
  };
  return {
    lease: `${lease.metadata?.namespace ?? ""}/${lease.metadata?.name ?? ""}`,
    ...(spec.holderIdentity ? { holder: spec.holderIdentity } : {}),
    ...(spec.renewTime ? { renewTime: spec.renewTime } : {}),
    ...(spec.acquireTime ? { acquireTime: spec.acquireTime } : {}),
    ...(typeof spec.leaseDurationSeconds === "number" ? { leaseDurationSeconds: spec.leaseDurationSeconds } : {}),
    ...(typeof spec.leaseTransitions === "number" ? { transitions: spec.leaseTransitions } : {}),
  };
}

/** A claim Lease of `namespace` as the plugin keeps it (its instance Lease read apart). */
export function claimFactsOf(lease: KubeObject): ClaimFacts {
  const a = lease.metadata?.annotations ?? {};
  return {
    ...leaseFactsOf(lease),
    namespace: lease.metadata?.namespace ?? "",
    install: a[INSTALL_ANNOTATION] || undefined,
    instanceLease: a[INSTANCE_LEASE_ANNOTATION] || undefined,
  };
}

/** `<namespace>/<name>` (an install, an instance Lease) as its two parts; undefined when it is not one. */
export function splitRef(ref: string | undefined): { namespace: string; name: string } | undefined {
  const i = ref?.indexOf("/") ?? -1;
  if (!ref || i <= 0 || i === ref.length - 1) return undefined;
  return { namespace: ref.slice(0, i), name: ref.slice(i + 1) };
}

/**
 * Where a claim stands now: held by a live instance (`active`), let go (`released`), held by an instance whose Lease
 * lapsed (`down`: another takes it by `takenBy`; `overdue`: past that, none has), by one whose Lease is gone, or by
 * one whose Lease could not be read (`unknown`).
 */
export type ClaimState =
  | { state: "active"; renewed?: Date }
  | { state: "released" }
  | { state: "down"; downSince: Date; takenBy: Date; renewed: Date }
  | { state: "overdue"; downSince: Date; takenBy: Date; renewed: Date }
  | { state: "gone" }
  | { state: "unknown" };

/** Whether an instance Lease is kept alive at `now`: held, and renewed within its leaseDurationSeconds. */
export function leaseLive(l: LeaseFacts, now: Date): boolean {
  if (!l.holder || !l.renewTime) return false;
  return now.getTime() - Date.parse(l.renewTime) <= (l.leaseDurationSeconds ?? 0) * 1000;
}

/** Where `claim` stands at `now` (the API server's clock), from its holder and its instance Lease. */
export function claimState(claim: ClaimFacts, now: Date): ClaimState {
  if (!claim.holder) return { state: "released" };
  const instance = claim.instance;
  if (!instance || instance.state === "unreadable") return { state: "unknown" };
  if (instance.state === "missing") return { state: "gone" };
  const l = instance.lease;
  if (!l.renewTime) return { state: "unknown" };
  const renewed = new Date(l.renewTime);
  if (leaseLive(l, now)) return { state: "active", renewed };
  // Let go by its own instance (no holder): down since its last renewal; else since its Lease lapsed.
  const downSince = new Date(renewed.getTime() + (l.holder ? (l.leaseDurationSeconds ?? 0) * 1000 : 0));
  const takeover = (claim.leaseDurationSeconds ?? l.leaseDurationSeconds ?? 0) + TAKEOVER_GRACE_SECONDS;
  const takenBy = new Date(renewed.getTime() + takeover * 1000);
  return { state: now < takenBy ? "down" : "overdue", downSince, takenBy, renewed };
}
