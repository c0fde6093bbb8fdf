// Metric names in PromQL, for the tests that keep the alert rules and the Grafana dashboard in step with the
// metrics the operator registers. A small lexer, not a parser: it drops strings, label matchers, ranges,
// label lists (by/without/on/ignoring/group_left/group_right) and Grafana variables, and keeps the
// identifiers that are not a function call or a keyword.

type Obj = Record<string, any>;

const KEYWORDS = new Set(["and", "or", "unless", "bool", "offset", "inf", "nan", "Inf", "NaN"]);

/** The metric names an expression selects. */
export function promqlMetricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, "")
    .replace(/\[[^\]]*\]/g, "")
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, "")
    .replace(/\$\{[^}]*\}|\$\w+/g, "");
  const names = new Set<string>();
  for (const m of stripped.matchAll(/(?<![\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    if (m[2] || KEYWORDS.has(m[1]!)) continue;
    names.add(m[1]!);
  }
  return [...names];
}

/** Every target expression of every panel of a Grafana dashboard (rows included). */
export function dashboardExprs(dashboard: Obj): string[] {
  const panels = (ps: Obj[] = []): Obj[] => ps.flatMap((p) => [p, ...panels(p.panels as Obj[] | undefined)]);
  return panels(dashboard.panels as Obj[]).flatMap((p) =>
    ((p.targets ?? []) as Obj[]).map((t) => String(t.expr ?? "")).filter((e) => e !== ""),
  );
}

/** The metrics a dashboard's template variables query (label_values(metric{...}, label)). */
export function dashboardVariableMetrics(dashboard: Obj): string[] {
  const out: string[] = [];
  for (const v of (dashboard.templating?.list ?? []) as Obj[]) {
    if (v.type !== "query") continue;
    const q = typeof v.query === "string" ? v.query : String(v.query?.query ?? "");
    const m = /^\s*label_values\(\s*(.*),\s*[a-zA-Z_]\w*\s*\)\s*$/.exec(q);
    out.push(...(m ? promqlMetricNames(m[1]!) : promqlMetricNames(q)));
  }
  return out;
}

/**
 * kube-apiserver's admission-webhook metrics (1.16 and later; the same names and labels through 1.35) that the
 * admission alert and its runbook query: not the operator's, so they are named here.
 * test/integration/prometheus-admission.test.ts scrapes them from a real kube-apiserver.
 */
export const KUBE_APISERVER_METRICS: Readonly<Record<string, readonly string[]>> = {
  apiserver_admission_webhook_rejection_count: ["name", "type", "operation", "error_type", "rejection_code"],
  apiserver_admission_webhook_admission_duration_seconds_bucket: ["name", "type", "operation", "rejected", "le"],
  apiserver_admission_webhook_admission_duration_seconds_count: ["name", "type", "operation", "rejected"],
  apiserver_admission_webhook_admission_duration_seconds_sum: ["name", "type", "operation", "rejected"],
};
