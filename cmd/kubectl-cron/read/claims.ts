// What the plugin reads of namespace claims (model/claims.ts): a namespace's claim by its name (a get, which a
// tenant's namespaced role allows), the instance Lease it names (once however many claims name it), and for
// `kubectl cron instances` the claims of every namespace (one list by their label) and each install's instance Leases.
// A read that fails is noted (attempt), never thrown: what could be read is still said.
import { isNotFound } from "../../../runtime/errors.ts";
import { Kinds, type KubeObject } from "../../../runtime/kinds.ts";
import { CLAIM_LABEL, CLAIM_LEASE_NAME, INSTANCE_OF_LABEL } from "../../../api/v1/index.ts";
import {
  type ClaimFacts,
  claimFactsOf,
  type ClaimRead,
  type InstanceLeaseRead,
  type LeaseFacts,
  leaseFactsOf,
  splitRef,
} from "../model/claims.ts";
import { listMapped } from "./api.ts";
import type { Attempt, Reader } from "./clocks.ts";

/** A Lease by name: it, null when it does not exist, undefined when it could not be read (noted). */
function getLease(client: Reader, attempt: Attempt, namespace: string, name: string) {
  return attempt(`lease ${namespace}/${name}`, async () => {
    try {
      return await client.get<KubeObject>(Kinds.Lease, namespace, name);
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
  });
}

/** Reads claims: each namespace's once, each instance Lease once, however many ask. */
export interface ClaimReader {
  /** The claim of `namespace`. */
  claimOf(namespace: string): Promise<ClaimRead>;
  /** A claim (read or listed) with the instance Lease it names. */
  withInstance(claim: ClaimFacts): Promise<ClaimFacts>;
}

export function claimReader(client: Reader, attempt: Attempt): ClaimReader {
  const instances = new Map<string, Promise<InstanceLeaseRead>>();
  const claims = new Map<string, Promise<ClaimRead>>();
  const instanceOf = (ref: string): Promise<InstanceLeaseRead> => {
    let read = instances.get(ref);
    if (!read) {
      const at = splitRef(ref)!;
      read = getLease(client, attempt, at.namespace, at.name).then((l): InstanceLeaseRead =>
        l === undefined
          ? { state: "unreadable" }
          : l === null
            ? { state: "missing" }
            : { state: "found", lease: leaseFactsOf(l) },
      );
      instances.set(ref, read);
    }
    return read;
  };
  const withInstance = async (claim: ClaimFacts): Promise<ClaimFacts> =>
    splitRef(claim.instanceLease) ? { ...claim, instance: await instanceOf(claim.instanceLease!) } : claim;
  const read = async (namespace: string): Promise<ClaimRead> => {
    const lease = await getLease(client, attempt, namespace, CLAIM_LEASE_NAME);
    if (lease === undefined) return { state: "unreadable" };
    if (lease === null || lease.metadata?.labels?.[CLAIM_LABEL] !== "true") return { state: "none" };
    return { state: "claimed", claim: await withInstance(claimFactsOf(lease)) };
  };
  return {
    claimOf: (namespace) => {
      let r = claims.get(namespace);
      if (!r) claims.set(namespace, (r = read(namespace)));
      return r;
    },
    withInstance,
  };
}

/** What `kubectl cron instances` reads: the claims, and each install's instance Leases. */
interface InstancesRead {
  /** The claims found, each with its instance Lease; undefined: they could not be read. */
  claims: ClaimFacts[] | undefined;
  /** The instance Leases of the installs that hold the claims: those labelled as theirs, and those the claims name. */
  instances: (LeaseFacts & { install: string })[];
}

/**
 * The claims of `namespace` (its claim by name) or of every namespace (undefined: one list by their label), and the
 * instance Leases of the installs holding them (one list each in the install's namespace, by its label).
 */
export async function readInstances(
  client: Reader,
  attempt: Attempt,
  namespace: string | undefined,
): Promise<InstancesRead> {
  const reader = claimReader(client, attempt);
  let listed: ClaimFacts[] | undefined;
  if (namespace !== undefined) {
    const one = await reader.claimOf(namespace);
    listed = one.state === "unreadable" ? undefined : one.state === "claimed" ? [one.claim] : [];
  } else {
    const all = await attempt("leases in any namespace", () =>
      listMapped(client, Kinds.Lease, { labelSelector: `${CLAIM_LABEL}=true` }, claimFactsOf),
    );
    listed = all && (await Promise.all(all.map((c) => reader.withInstance(c))));
  }
  const installs = [...new Set((listed ?? []).map((c) => c.install).filter((i): i is string => !!splitRef(i)))];
  const labelled = await Promise.all(
    installs.map(async (install) => {
      const at = splitRef(install)!;
      const leases = await attempt(`leases of install ${install}`, () =>
        listMapped(
          client,
          Kinds.Lease,
          { namespace: at.namespace, labelSelector: `${INSTANCE_OF_LABEL}=${at.name}` },
          leaseFactsOf,
        ),
      );
      return (leases ?? []).map((l) => ({ ...l, install }));
    }),
  );
  const instances = new Map<string, LeaseFacts & { install: string }>();
  for (const l of labelled.flat()) instances.set(l.lease, l);
  for (const c of listed ?? []) {
    if (c.instance?.state === "found" && c.install && !instances.has(c.instance.lease.lease))
      instances.set(c.instance.lease.lease, { ...c.instance.lease, install: c.install });
  }
  return { claims: listed, instances: [...instances.values()] };
}
