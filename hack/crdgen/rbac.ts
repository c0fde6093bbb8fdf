// Renders config/rbac/role.yaml (the ClusterRole `manager-role`, and a Role `manager-role` per namespace that
// markers name) from the manager's RBAC declarations, the way controller-gen's rbac generator does from
// +kubebuilder:rbac markers (`namespace=` puts a rule into that namespace's Role): rules with the same
// groups/resources/names/URLs merge their verbs, then rules differing only in resources merge, then rules
// differing only in groups merge; every list is deduplicated and sorted, and the rules are sorted by
// "groups + resources + resourceNames + URLs". The output does not depend on declaration order.
import { stringify } from "yaml";
import type { RBACMarker } from "../../controllers/rbac.ts";
import {
  CRONJOB_CONTROLLER_RBAC,
  MANAGER_RBAC,
  NAMESPACE_CLAIMS_RBAC,
  NAMESPACE_SELECTOR_RBAC,
  WEBHOOK_CERT_RBAC,
} from "../../controllers/rbac.ts";
import { CALENDAR_PLURAL } from "../../api/v1/index.ts";

export const ROLE_PATH = "config/rbac/role.yaml";
export const ROLE_NAME = "manager-role";

/** An rbac.authorization.k8s.io/v1 PolicyRule, keys in the order the YAML shows them. */
export interface PolicyRule {
  apiGroups?: string[];
  nonResourceURLs?: string[];
  resourceNames?: string[];
  resources?: string[];
  verbs: string[];
}

interface Rule {
  groups: string[];
  resources: string[];
  resourceNames: string[];
  urls: string[];
  verbs: string[];
}

/** Go's sort.Strings order (byte-wise for ASCII), without duplicates. */
function dedupSort(xs: readonly string[]): string[] {
  return [...new Set(xs)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function normalise(r: Rule): Rule {
  return {
    groups: dedupSort(r.groups),
    resources: dedupSort(r.resources),
    resourceNames: dedupSort(r.resourceNames),
    urls: dedupSort(r.urls),
    verbs: dedupSort(r.verbs),
  };
}

const key = (r: Rule): string =>
  `${r.groups.join("&")} + ${r.resources.join("&")} + ${r.resourceNames.join("&")} + ${r.urls.join("&")}`;

const copy = (r: Rule): Rule => ({
  groups: [...r.groups],
  resources: [...r.resources],
  resourceNames: [...r.resourceNames],
  urls: [...r.urls],
  verbs: [...r.verbs],
});

/** Groups rules by `by`, folding each group into its first rule with `merge`, then normalises. */
function mergeBy(rules: Rule[], by: (r: Rule) => string, merge: (into: Rule, from: Rule) => void): Rule[] {
  const groups = new Map<string, Rule[]>();
  for (const r of rules) {
    const k = by(r);
    const list = groups.get(k);
    if (list) list.push(r);
    else groups.set(k, [r]);
  }
  const out = new Map<string, Rule>();
  for (const [, [first, ...rest]] of groups) {
    const rule = copy(first!);
    for (const r of rest) merge(rule, r);
    const n = normalise(rule);
    out.set(key(n), n);
  }
  return [...out.values()];
}

/** controller-gen's NormalizeRules: merged, deduplicated, deterministically sorted PolicyRules. */
export function normaliseRules(markers: readonly RBACMarker[]): PolicyRule[] {
  for (const m of markers) {
    if (m.verbs.length === 0) throw new Error(`rbac marker for ${JSON.stringify(m)} has no verbs`);
    if (!m.resources?.length && !m.urls?.length) throw new Error(`rbac marker ${JSON.stringify(m)} has no resources`);
  }
  let rules: Rule[] = markers.map((m) =>
    normalise({
      // "core" is accepted for the core group, as controller-gen does; it is written as "".
      groups: m.groups.map((g) => (g === "core" ? "" : g)),
      resources: [...(m.resources ?? [])],
      resourceNames: [...(m.resourceNames ?? [])],
      urls: [...(m.urls ?? [])],
      verbs: [...m.verbs],
    }),
  );
  // 1. Same groups, resources, names and URLs: union of the verbs.
  rules = mergeBy(rules, key, (into, from) => into.verbs.push(...from.verbs));
  // 2. Same everything but resources: union of the resources.
  rules = mergeBy(
    rules,
    (r) => JSON.stringify([r.groups, r.resourceNames, r.urls, r.verbs]),
    (into, from) => into.resources.push(...from.resources),
  );
  // 3. Same everything but groups: union of the groups.
  rules = mergeBy(
    rules,
    (r) => JSON.stringify([r.resources, r.resourceNames, r.urls, r.verbs]),
    (into, from) => into.groups.push(...from.groups),
  );
  rules.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  // Keys in alphabetical order, as sigs.k8s.io/yaml writes them; empty lists are omitted.
  return rules.map((r) => ({
    ...(r.groups.length || r.resources.length ? { apiGroups: r.groups } : {}),
    ...(r.urls.length ? { nonResourceURLs: r.urls } : {}),
    ...(r.resourceNames.length ? { resourceNames: r.resourceNames } : {}),
    ...(r.resources.length ? { resources: r.resources } : {}),
    verbs: r.verbs.includes("*") ? ["*"] : r.verbs,
  }));
}

/** The ClusterRole the manager's ServiceAccount is bound to (config/rbac/role_binding.yaml): markers without a namespace. */
export function managerRole(markers: readonly RBACMarker[] = MANAGER_RBAC): Record<string, unknown> {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: ROLE_NAME },
    rules: normaliseRules(markers.filter((m) => !m.namespace)),
  };
}

/** The ClusterRole, then one Role per namespace the markers name (sorted), as controller-gen writes them. */
export function managerRoles(markers: readonly RBACMarker[] = MANAGER_RBAC): Array<Record<string, unknown>> {
  const namespaces = dedupSort(markers.flatMap((m) => (m.namespace ? [m.namespace] : [])));
  return [
    managerRole(markers),
    ...namespaces.map((namespace) => ({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: ROLE_NAME, namespace },
      rules: normaliseRules(markers.filter((m) => m.namespace === namespace)),
    })),
  ];
}

/** config/rbac/role.yaml, byte for byte (same YAML style as the generated CRD). */
export function managerRoleYAML(markers: readonly RBACMarker[] = MANAGER_RBAC): string {
  return managerRoles(markers)
    .map((r) => "---\n" + stringify(r, { lineWidth: 0, aliasDuplicateObjects: false }))
    .join("");
}

/** Resources that are not in a namespace: a Role cannot grant them. */
const CLUSTER_SCOPED = new Set([
  "customresourcedefinitions",
  "mutatingwebhookconfigurations",
  "namespaces",
  "validatingwebhookconfigurations",
]);
const clusterScoped = (m: RBACMarker) => (m.resources ?? []).every((r) => CLUSTER_SCOPED.has(r));
const isCRD = (m: RBACMarker) => (m.resources ?? []).includes("customresourcedefinitions");

/**
 * The manager's cluster-wide rules (MANAGER_RBAC without a namespace) split by where an install that acts only in
 * the namespaces --watch-namespaces lists (config/tenant) is granted them: `namespace` in a Role of each of those
 * namespaces, `cluster` in its ClusterRole (its own webhook configurations), and `conversion` nowhere (the CRD's
 * conversion webhook is the cluster-wide part's: config/platform). Every rule is in exactly one of them.
 */
export function tenantSplit(markers: readonly RBACMarker[] = MANAGER_RBAC): {
  namespace: RBACMarker[];
  cluster: RBACMarker[];
  conversion: RBACMarker[];
} {
  const global = markers.filter((m) => !m.namespace);
  for (const m of global) {
    const scoped = (m.resources ?? []).map((r) => CLUSTER_SCOPED.has(r));
    if (m.urls?.length || scoped.some((x) => x !== scoped[0]))
      throw new Error(`rbac marker ${JSON.stringify(m)} mixes cluster-scoped and namespaced resources`);
  }
  return {
    namespace: global.filter((m) => !clusterScoped(m)),
    cluster: global.filter((m) => clusterScoped(m) && !isCRD(m)),
    conversion: global.filter(isCRD),
  };
}

/**
 * What config/platform's conversion webhook server calls (cmd/run.ts with --webhooks-only and no webhook
 * configuration): its certificate Secret in its namespace and the CRD it injects its CA into (WEBHOOK_CERT_RBAC), and
 * the ExclusionCalendars the webhooks-only process caches (CRONJOB_CONTROLLER_RBAC's list and watch on them).
 */
export const CONVERSION_WEBHOOK_RBAC: readonly RBACMarker[] = [
  ...WEBHOOK_CERT_RBAC.filter((m) => m.namespace || isCRD(m)),
  ...CRONJOB_CONTROLLER_RBAC.filter((m) => (m.resources ?? []).includes(CALENDAR_PLURAL)),
];

/**
 * config/rbac/leader_election_role.yaml is static (kubebuilder's): the Role a sharded install's replicas keep their
 * own Leases with (SHARDING_RBAC) too. `make manifests` fails when it no longer grants them.
 */
export const LEADER_ELECTION_ROLE_PATH = "config/rbac/leader_election_role.yaml";

/** What the markers ask for that the rules do not grant, as "group/resource verb" (resourceNames aside). */
export function ungranted(markers: readonly RBACMarker[], rules: readonly PolicyRule[]): string[] {
  const missing: string[] = [];
  for (const m of markers) {
    for (const g of m.groups.map((x) => (x === "core" ? "" : x))) {
      for (const r of m.resources ?? []) {
        for (const v of m.verbs) {
          const granted = rules.some(
            (rule) =>
              (rule.apiGroups ?? []).some((x) => x === g || x === "*") &&
              (rule.resources ?? []).some((x) => x === r || x === "*") &&
              (rule.verbs.includes(v) || rule.verbs.includes("*")),
          );
          if (!granted) missing.push(`${g || "core"}/${r} ${v}`);
        }
      }
    }
  }
  return missing;
}

/** The generated RBAC files besides role.yaml: the pieces config/tenant, config/sharded and config/platform add. */
export const CLAIMS_ROLE_PATH = "config/rbac/claims/claims_role.yaml";
export const NAMESPACE_READER_ROLE_PATH = "config/rbac/namespace-reader/namespace_reader_role.yaml";
export const NAMESPACE_ROLE_PATH = "config/rbac/namespace/namespace_role.yaml";
export const TENANT_ROLE_PATCH_PATH = "config/rbac/tenant/manager_role_patch.yaml";
export const CONVERSION_ROLE_PATH = "config/rbac/conversion-webhook/role.yaml";

const render = (objs: Array<Record<string, unknown>>) =>
  objs.map((r) => "---\n" + stringify(r, { lineWidth: 0, aliasDuplicateObjects: false })).join("");

function clusterRole(name: string, markers: readonly RBACMarker[]): Record<string, unknown> {
  if (markers.some((m) => m.namespace)) throw new Error(`ClusterRole ${name}: a marker names a namespace`);
  return { ...managerRole(markers), metadata: { name } };
}

function role(name: string, namespace: string, markers: readonly RBACMarker[]): Record<string, unknown> {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name, namespace },
    rules: normaliseRules(markers.map((m) => ({ ...m, namespace: undefined }))),
  };
}

/** Each generated RBAC file besides role.yaml, by path (make manifests writes them; config.test.ts checks them). */
export function extraRBACFiles(): Map<string, string> {
  const split = tenantSplit();
  const conversionNamespaces = dedupSort(CONVERSION_WEBHOOK_RBAC.flatMap((m) => (m.namespace ? [m.namespace] : [])));
  return new Map([
    // Claims: a Lease named cronjob-operator in each namespace acted in. Bound by a RoleBinding in each namespace of
    // a tenant's install (config/rbac/namespace), by a ClusterRoleBinding for a cluster-wide one (config/sharded).
    [CLAIMS_ROLE_PATH, render([clusterRole("manager-claims-role", NAMESPACE_CLAIMS_RBAC)])],
    // The namespaces a cluster-wide install that claims may act in, or those --watch-namespace-selector matches.
    [NAMESPACE_READER_ROLE_PATH, render([clusterRole("manager-namespace-reader-role", NAMESPACE_SELECTOR_RBAC)])],
    // The manager's rules as a Role, in each namespace a tenant's install acts in (config/tenant sets the namespace).
    [NAMESPACE_ROLE_PATH, render([role("manager-namespace-role", "system", split.namespace)])],
    // A tenant's ClusterRole manager-role: its webhook configurations only (a patch of role.yaml's, by name).
    [TENANT_ROLE_PATCH_PATH, render([clusterRole(ROLE_NAME, split.cluster)])],
    // config/platform's conversion webhook server.
    [
      CONVERSION_ROLE_PATH,
      render([
        clusterRole(
          "conversion-webhook-role",
          CONVERSION_WEBHOOK_RBAC.filter((m) => !m.namespace),
        ),
        ...conversionNamespaces.map((ns) =>
          role(
            "conversion-webhook-role",
            ns,
            CONVERSION_WEBHOOK_RBAC.filter((m) => m.namespace === ns),
          ),
        ),
      ]),
    ],
  ]);
}
