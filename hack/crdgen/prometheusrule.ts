// Renders config/prometheus/prometheus_rule.yaml, the prometheus-operator PrometheusRule
// (monitoring.coreos.com/v1) that deploys the alert rules of config/prometheus/rules/cronjob-operator.rules.yaml:
// the same groups, taken from that file, so the two cannot drift. The rule file stays the source: it is what
// `promtool check rules` and `promtool test rules` run on (test/unit/prometheus-rules.test.ts), and what a
// Prometheus without the operator loads.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse, stringify } from "yaml";

export const RULES_PATH = "config/prometheus/rules/cronjob-operator.rules.yaml";
export const PROMETHEUS_RULE_PATH = "config/prometheus/prometheus_rule.yaml";
/** kustomize's namePrefix makes it cronjob-operator-alert-rules in config/default. */
export const PROMETHEUS_RULE_NAME = "alert-rules";

const HEADER = `# Generated from ${RULES_PATH} by make manifests (hack/crdgen/prometheusrule.ts): edit that file, not this one.
# The alert rules for the prometheus-operator. A Prometheus selects PrometheusRules by label (its ruleSelector;
# kube-prometheus-stack's default wants release: <its release name>): add that label in your overlay.
`;

/** The groups of a Prometheus rule file (rule_files format). */
export function ruleGroups(root: string, rulesPath = RULES_PATH): unknown[] {
  const doc = parse(readFileSync(join(root, rulesPath), "utf8")) as { groups?: unknown } | null;
  if (!doc || !Array.isArray(doc.groups) || doc.groups.length === 0) {
    throw new Error(`${rulesPath}: no rule groups (want a Prometheus rule file: groups: [...])`);
  }
  return doc.groups;
}

/** The PrometheusRule holding the rule file's groups. */
export function prometheusRule(groups: unknown[]): Record<string, unknown> {
  return {
    apiVersion: "monitoring.coreos.com/v1",
    kind: "PrometheusRule",
    metadata: {
      labels: {
        "app.kubernetes.io/name": "cronjob-operator",
        "app.kubernetes.io/managed-by": "kustomize",
      },
      name: PROMETHEUS_RULE_NAME,
      namespace: "system",
    },
    spec: { groups },
  };
}

/** config/prometheus/prometheus_rule.yaml, byte for byte. */
export function prometheusRuleYAML(root: string): string {
  return HEADER + "---\n" + stringify(prometheusRule(ruleGroups(root)), { lineWidth: 0, aliasDuplicateObjects: false });
}
