// The Metrics section of docs/operating.md names exactly the metrics the code registers (Node's process metrics
// aside, which prom-client defines): one list a dashboard or alert author can trust.
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { collectDefaultMetrics, Registry } from "prom-client";
import { parse } from "yaml";
import { CronJobMetrics } from "../../controllers/metrics.ts";
import { groupMetrics } from "../../controllers/groups.ts";
import { dashboardExprs, dashboardVariableMetrics, KUBE_APISERVER_METRICS, promqlMetricNames } from "../promql.ts";

const root = join(import.meta.dirname, "..", "..");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/**
 * Every `new Counter|Gauge|Histogram|Summary({ name: "..." })` (type arguments allowed) in the product code, and
 * what the per-CronJob and concurrency-group metrics register (built from a table, or by a helper).
 */
function registeredNames(): string[] {
  const names = new Set<string>();
  const perCronJob = new Registry();
  new CronJobMetrics({ list: () => [], registry: perCronJob });
  for (const m of perCronJob.getMetricsAsArray()) names.add((m as unknown as { name: string }).name);
  // The concurrency groups' gauges (built by a helper, registered by cmd/run.ts): their names, never collected.
  for (const m of groupMetrics({ cache: {} as never, places: {} as never, now: () => 0, isLeader: () => false }))
    names.add(m.name);
  for (const f of [...sources(join(root, "runtime")), ...sources(join(root, "controllers"))]) {
    const text = readFileSync(f, "utf8");
    for (const m of text.matchAll(/new (?:Counter|Gauge|Histogram|Summary)(?:<[^>(]*>)?\(\{\s*name:\s*"([a-z_:]+)"/g))
      names.add(m[1]!);
  }
  return [...names].sort();
}

function documentedNames(): string[] {
  const doc = readFileSync(join(root, "docs", "operating.md"), "utf8");
  const start = doc.indexOf("\n## Metrics\n");
  assert.ok(start >= 0, "docs/operating.md has a ## Metrics section");
  const end = doc.indexOf("\n## ", start + 1);
  const section = doc.slice(start, end < 0 ? undefined : end);
  const names = new Set<string>();
  for (const m of section.matchAll(/`([a-z][a-z0-9_]+)(?:\{[^}`]*\})?`/g)) {
    const name = m[1]!;
    // Full metric names only: label values (`queue_full`) and prefixes (`workqueue_*`) are not.
    if (
      /_(total|seconds|bytes|status|depth|workers|reconciles|in_flight|jobs|runs|suspended|stopped|failures|info|limit|namespaces|members)$/.test(
        name,
      )
    )
      names.add(name);
  }
  return [...names].filter((n) => !n.startsWith("process_") && !n.startsWith("nodejs_")).sort();
}

/**
 * What /metrics can serve: the registered names (a histogram also as its _bucket/_sum/_count series), prom-client's
 * process and Node metrics, and Prometheus' own `up`.
 */
function servedNames(): Set<string> {
  const names = new Set<string>(["up"]);
  for (const n of registeredNames()) for (const s of ["", "_bucket", "_sum", "_count"]) names.add(n + s);
  const defaults = new Registry();
  collectDefaultMetrics({ register: defaults });
  for (const m of defaults.getMetricsAsArray()) {
    const n = (m as unknown as { name: string }).name;
    for (const s of ["", "_bucket", "_sum", "_count"]) names.add(n + s);
  }
  return names;
}

describe("metric names", () => {
  it("the code registers metrics (the scan finds them)", () => {
    assert.ok(registeredNames().length >= 20, registeredNames().join(", "));
  });

  it("docs/operating.md lists exactly the metrics the code registers", () => {
    assert.deepEqual(documentedNames(), registeredNames());
  });

  // The alert rules and the Grafana dashboard query only metrics the operator serves (or, for admission,
  // kube-apiserver's own, checked against a real one by test/integration/prometheus-admission.test.ts), so a
  // renamed or removed metric fails here instead of silently emptying a panel or disarming an alert.
  it("the alert rules and the Grafana dashboard use only metrics the operator registers", () => {
    const known = servedNames();
    for (const n of Object.keys(KUBE_APISERVER_METRICS)) known.add(n);
    const rules = parse(
      readFileSync(join(root, "config", "prometheus", "rules", "cronjob-operator.rules.yaml"), "utf8"),
    ) as {
      groups: Array<{ rules: Array<{ alert?: string; record?: string; expr: string }> }>;
    };
    const dashboard = JSON.parse(readFileSync(join(root, "config", "grafana", "cronjob-operator.json"), "utf8"));
    const uses: Array<[string, string]> = [
      ...rules.groups.flatMap((g) =>
        g.rules.flatMap((r) =>
          promqlMetricNames(r.expr).map((n): [string, string] => [`rule ${r.alert ?? r.record}`, n]),
        ),
      ),
      ...dashboardExprs(dashboard).flatMap((e) =>
        promqlMetricNames(e).map((n): [string, string] => [`dashboard: ${e}`, n]),
      ),
      ...dashboardVariableMetrics(dashboard).map((n): [string, string] => ["dashboard variable", n]),
    ];
    assert.ok(uses.length > 30, `only ${uses.length} metric uses found`);
    const unknown = uses.filter(([, n]) => !known.has(n)).map(([where, n]) => `${n} (${where})`);
    assert.deepEqual(unknown, [], "metrics the operator does not register");
    // Both sides look at the per-CronJob series and at the controller's own.
    const used = new Set(uses.map(([, n]) => n));
    for (const n of [
      "cronjob_last_missed_time_seconds",
      "cronjob_runs_total",
      "controller_runtime_reconcile_errors_total",
    ])
      assert.ok(used.has(n), `${n} is used nowhere`);
  });

  it("the PromQL lexer finds metric names, not functions, labels or keywords", () => {
    assert.deepEqual(
      promqlMetricNames(
        'histogram_quantile(0.99, sum by (job, le) (rate(a_seconds_bucket{job="x",le!="+Inf"}[10m]))) > 15 ' +
          'unless on (namespace) (max by (namespace) (b_total offset 5m) == bool 1) or absent(up{job=~"$job"}) ' +
          'and c:recorded * on (x) group_left() d_info{cronjob=~"${cronjob}"}',
      ).sort(),
      ["a_seconds_bucket", "b_total", "c:recorded", "d_info", "up"],
    );
  });
});
