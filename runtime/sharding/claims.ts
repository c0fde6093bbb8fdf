// A namespace's claim: one coordination.k8s.io/v1 Lease in the namespace, written only when the namespace changes
// hands (never renewed: the holder's liveness is its instance Lease's, named in the claim). What one claim says, as
// plain data (readClaim), and the three writes that move it (create, take, let go), each conditional on the
// resourceVersion read, so that of two replicas that race for a namespace exactly one wins.
import type { Client } from "../client.ts";
import { type KubeObject, Kinds } from "../kinds.ts";
import { microTime } from "../metatime.ts";

interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number | null;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number | null;
}

export interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

/** How an install names its claims (the product's words: the runtime knows none). */
export interface ClaimNaming {
  /** The claim Lease's name in every namespace. */
  name: string;
  /** Labels every claim carries (the claims' informer selects on them). */
  labels: Readonly<Record<string, string>>;
  /** Annotation naming the install that holds the claim. */
  installAnnotation: string;
  /** Annotation naming the Lease (`namespace/name`) whose renewal keeps the holder alive. */
  instanceLeaseAnnotation: string;
}

/** Who holds the claim this replica identifies as (install, the Lease that backs it, the process). */
export interface Claimant {
  install: string;
  instanceLease: string;
  identity: string;
  leaseDurationSeconds: number;
}

export type ClaimState =
  /** No claim: the namespace is free. */
  | { kind: "none" }
  /** Let go by its last holder (holderIdentity ""): free. */
  | { kind: "released"; lease: Lease }
  /** Held by this very process. */
  | { kind: "mine"; lease: Lease }
  /** Held by another process of this install: free once its instance Lease is dead (decided by the caller). */
  | { kind: "member"; lease: Lease; holder: string; instanceLease: string; durationMs: number }
  /** Held by another install: never taken; the overlap is named. */
  | { kind: "other-install"; lease: Lease; install: string; holder: string };

export function readClaim(lease: Lease | undefined, naming: ClaimNaming, me: Claimant): ClaimState {
  if (!lease) return { kind: "none" };
  const annotations = lease.metadata?.annotations ?? {};
  const holder = lease.spec?.holderIdentity ?? "";
  const install = annotations[naming.installAnnotation] ?? "";
  if (install && install !== me.install) return { kind: "other-install", lease, install, holder };
  if (!holder) return { kind: "released", lease };
  if (holder === me.identity) return { kind: "mine", lease };
  return {
    kind: "member",
    lease,
    holder,
    instanceLease: annotations[naming.instanceLeaseAnnotation] ?? "",
    durationMs: (lease.spec?.leaseDurationSeconds ?? me.leaseDurationSeconds) * 1000,
  };
}

function claimBody(
  namespace: string,
  naming: ClaimNaming,
  me: Claimant,
  base: Lease | undefined,
  holder: string,
): Lease {
  const now = microTime(new Date());
  const taking = holder !== "" && base?.spec?.holderIdentity !== holder;
  return {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: {
      ...(base?.metadata ?? {}),
      name: naming.name,
      namespace,
      labels: { ...(base?.metadata?.labels ?? {}), ...naming.labels },
      annotations: {
        ...(base?.metadata?.annotations ?? {}),
        [naming.installAnnotation]: me.install,
        [naming.instanceLeaseAnnotation]: me.instanceLease,
      },
    },
    spec: {
      holderIdentity: holder,
      leaseDurationSeconds: me.leaseDurationSeconds,
      acquireTime: taking ? now : (base?.spec?.acquireTime ?? now),
      renewTime: now,
      leaseTransitions: (base?.spec?.leaseTransitions ?? 0) + (taking && base ? 1 : 0),
    },
  };
}

/** Creates the claim (none yet) or takes it over at the resourceVersion read; rejects on a race (409). */
export async function takeClaim(
  client: Client,
  namespace: string,
  naming: ClaimNaming,
  me: Claimant,
  current: Lease | undefined,
): Promise<Lease> {
  const body = claimBody(namespace, naming, me, current, me.identity);
  return current ? client.update<Lease>(Kinds.Lease, body) : client.create<Lease>(Kinds.Lease, body);
}

/** Lets the claim go (holderIdentity ""): the next owner may take it at once. */
export function releaseClaim(
  client: Client,
  namespace: string,
  naming: ClaimNaming,
  me: Claimant,
  current: Lease,
): Promise<Lease> {
  return client.update<Lease>(Kinds.Lease, claimBody(namespace, naming, me, current, ""));
}
