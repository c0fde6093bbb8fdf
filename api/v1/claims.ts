// The names of a namespace's claim and of a sharded install's replica Leases (docs/architecture.md, "Tenants and
// shards"): written by the manager (cmd/run.ts gives them to runtime/sharding), read by `kubectl cron why` and
// `instances`, and by the Helm chart's install-time check. One place, so the writer and its readers cannot drift.
import { documentedKey } from "./metadata.ts";

/** The claim's name: a coordination.k8s.io/v1 Lease of this name in every namespace an install claims. */
export const CLAIM_LEASE_NAME = "cronjob-operator";

const PREFIX = "cronjob-operator.tutorial.kubebuilder.io";

/** Every claim carries it ("true"): the installs' and `kubectl cron instances -A`'s selector. */
export const CLAIM_LABEL = documentedKey(`${PREFIX}/claim`, () => ({
  on: `Lease \`${CLAIM_LEASE_NAME}\` (a namespace's claim)`,
  setBy:
    "the controller (`--namespace-claims`, on with `--watch-namespaces`, `--watch-namespace-selector`, `--sharding`)",
  format: '`"true"`',
  meaning: "Marks the Lease as the claim of its namespace: the install that holds it is the one that acts in it.",
}));
/** The install holding the claim: `<its namespace>/<its --leader-election-id>`. */
export const INSTALL_ANNOTATION = documentedKey(`${PREFIX}/install`, () => ({
  on: `Lease \`${CLAIM_LEASE_NAME}\` (a namespace's claim)`,
  setBy: "the controller",
  format: "`<namespace>/<leader-election id>`, e.g. `team-a-cronjob-operator/80807133.tutorial.kubebuilder.io`",
  meaning:
    "The install that acts in the namespace. Another install refuses the namespace while this names a different one; " +
    "delete the claim of an install that is gone to free it.",
}));
/** `<namespace>/<name>` of the Lease whose renewal keeps the claim's holder alive. */
export const INSTANCE_LEASE_ANNOTATION = documentedKey(`${PREFIX}/instance-lease`, () => ({
  on: `Lease \`${CLAIM_LEASE_NAME}\` (a namespace's claim)`,
  setBy: "the controller",
  format: "`<namespace>/<name>` of a Lease",
  meaning:
    "The Lease that keeps the holder (`spec.holderIdentity`) alive: a shard's own, or the install's leader-election " +
    "Lease. Once it has not been renewed for its duration, another replica of the install takes the namespace.",
}));
/** On a sharded install's replica Leases, in its namespace: its --leader-election-id. */
export const INSTANCE_OF_LABEL = documentedKey(`${PREFIX}/instance-of`, () => ({
  on: "Lease `<leader-election id>-<pod>` (a sharded install's replica)",
  setBy: "the controller (`--sharding`)",
  format: "the install's `--leader-election-id`",
  meaning: "Marks the Lease as one replica of the install: the live ones divide its namespaces between them.",
}));
