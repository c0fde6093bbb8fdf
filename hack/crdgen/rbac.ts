// Renders config/rbac/role.yaml (the ClusterRole `manager-role`, and a Role `manager-role` per namespace that
// markers name) from the manager's RBAC declarations, the way controller-gen's rbac generator does from
// +kubebuilder:rbac markers (`namespace=` puts a rule into that namespace's Role): rules with the same
// groups/resources/names/URLs merge their verbs, then rules differing only in resources merge, then rules
// differing only in groups merge; every list is deduplicated and sorted, and the rules are sorted by
// "groups + resources + resourceNames + URLs". The output does not depend on declaration order.
import { stringify } from "yaml";
import type { RBACMarker } from "../../controllers/rbac.ts";
import { MANAGER_RBAC } from "../../controllers/rbac.ts";

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
