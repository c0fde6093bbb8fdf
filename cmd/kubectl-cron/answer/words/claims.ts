// Which install and instance runs a namespace, from its claim (CLAIMS), and what its words are said with.

/** What the words of a namespace's claim are said with (model/claims.ts). */
interface ClaimParams {
  /** The claimed namespace. */
  namespace: string;
  /** The install holding it (`<its namespace>/<its leader-election id>`), and the instance acting in it. */
  install: string;
  instance: string;
  /** The instance Lease that keeps the claim alive (`<namespace>/<name>`), or the claim itself (unreadable). */
  lease: string;
  /** How long ago the instance Lease lapsed. */
  downFor: string;
  /** How long until another instance takes the namespace; how long ago one should have. */
  takenIn: string;
  late: string;
  /** instances: where the claims were looked for ("namespace prod", "any namespace"). */
  where: string;
}

/**
 * Which install and instance runs a namespace, from its claim (model/claims.ts): what `kubectl cron why` says on its
 * "Run by:" line, and `kubectl cron instances` in its STATE column and notes.
 */
export const CLAIMS = {
  active: (p: Pick<ClaimParams, "install" | "instance">) => `install ${p.install} (instance ${p.instance})`,
  unknown: (p: Pick<ClaimParams, "install" | "instance" | "lease">) =>
    `install ${p.install} (instance ${p.instance}); whether the instance is live is not known: its Lease ` +
    `${p.lease} could not be read`,
  down: (p: Pick<ClaimParams, "install" | "instance" | "lease" | "downFor" | "takenIn" | "namespace">) =>
    `install ${p.install} (instance ${p.instance}), which is down: its Lease ${p.lease} lapsed ${p.downFor} ago; ` +
    `another instance takes namespace ${p.namespace} within ${p.takenIn}`,
  overdue: (p: Pick<ClaimParams, "install" | "instance" | "lease" | "downFor" | "late" | "namespace">) =>
    `install ${p.install} (instance ${p.instance}), which is down: its Lease ${p.lease} lapsed ${p.downFor} ago; ` +
    `another instance should have taken namespace ${p.namespace} ${p.late} ago`,
  gone: (p: Pick<ClaimParams, "install" | "instance" | "lease" | "namespace">) =>
    `install ${p.install} (instance ${p.instance}), which stopped: its Lease ${p.lease} is gone; another instance ` +
    `takes namespace ${p.namespace}`,
  released: (p: Pick<ClaimParams, "install" | "namespace">) =>
    `moving: install ${p.install} let namespace ${p.namespace} go; the next instance to claim it runs it`,
  unclaimed: (p: Pick<ClaimParams, "namespace">) =>
    `no install claims namespace ${p.namespace}: a cluster-wide install that claims none runs it, or no install ` +
    "watches it",
  unreadable: (p: Pick<ClaimParams, "namespace" | "lease">) =>
    `not known: the claim of namespace ${p.namespace} (Lease ${p.lease}) could not be read`,
  /** `instances`: a claim's STATE. */
  stateActive: () => "active",
  stateReleased: () => "released (moving)",
  stateDown: (p: Pick<ClaimParams, "downFor" | "takenIn">) => `instance down ${p.downFor}: taken within ${p.takenIn}`,
  stateOverdue: (p: Pick<ClaimParams, "downFor" | "late">) =>
    `instance down ${p.downFor}: should have been taken ${p.late} ago`,
  stateGone: () => "instance Lease gone",
  stateUnknown: () => "unknown: instance Lease unreadable",
  /** `instances`: an instance Lease's STATE. */
  instanceLive: () => "live",
  instanceExpired: (p: Pick<ClaimParams, "downFor">) => `expired ${p.downFor} ago`,
  instanceReleased: () => "released",
  /** `instances`: a read that failed (its name and why). */
  notRead: (p: { what: string }) => `could not read ${p.what}`,
  /** `instances -A` found no claim. */
  noneClaimed: () =>
    "no namespace is claimed: a cluster-wide install that claims none runs them, or no install watches them",
  /** `instances` could not read the claims. */
  claimsUnreadable: (p: Pick<ClaimParams, "where">) =>
    `the claims in ${p.where} could not be read: instances needs get on leases (coordination.k8s.io) in the ` +
    "namespace, and list on them in every namespace with -A",
};
