// config/prometheus: the alert rules pass `promtool check rules` and their own `promtool test rules` (every
// alert firing and not firing), the PrometheusRule is the rule file's groups (generated, not hand-copied),
// the rules name the real controller and scrape job, and the ServiceMonitor keeps the CronJobs' namespace
// label. promtool comes with Debian's prometheus package (.ci/run installs it); without it these tests fail.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { parse, parseAllDocuments, stringify } from "yaml";
import { PROMETHEUS_RULE_PATH, prometheusRuleYAML, ruleGroups, RULES_PATH } from "../../hack/crdgen/prometheusrule.ts";
import { servedTwinName } from "../../runtime/webhook/failuregate.ts";
import { FAIL_ONCE_SERVED_ANNOTATION } from "../../webhooks/unserved.ts";
import { dashboardExprs } from "../promql.ts";

const root = resolve(import.meta.dirname, "..", "..");
const RULES_TEST_PATH = "config/prometheus/rules/cronjob-operator.rules.test.yaml";
const DASHBOARD_PATH = "config/grafana/cronjob-operator.json";
const KUBECTL = process.env.KUBECTL ?? "kubectl";
const ALERTS = [
  "CronJobMissedSchedule",
  "CronJobLastRunFailed",
  "CronJobStoppedAfterFailures",
  "CronJobNotRunOnTime",
  "CronJobBlockedByRunningJob",
  "CronJobConcurrencyGroupWaiting",
  "CronJobOperatorDown",
  "CronJobOperatorReconcileErrors",
  "CronJobCreationSkewSLO",
  "CronJobWebhookFailing",
  "CronJobWebhookServerErrors",
];
/** Alerts about one CronJob: labelled namespace and cronjob. */
const PER_CRONJOB = [
  "CronJobMissedSchedule",
  "CronJobLastRunFailed",
  "CronJobStoppedAfterFailures",
  "CronJobNotRunOnTime",
  "CronJobBlockedByRunningJob",
];

type Obj = Record<string, any>;
interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** What hack/setup-promtool found (make test, test-unit and test-integration set it), else promtool on the PATH. */
const PROMTOOL = process.env.PROMTOOL || "promtool";

function promtool(args: string[], cwd = root): { status: number | null; out: string } {
  const r = spawnSync(PROMTOOL, args, { cwd, encoding: "utf8", timeout: 50_000 });
  if (r.error && (r.error as NodeJS.ErrnoException).code === "ENOENT") {
    assert.fail(
      `promtool not found (${PROMTOOL}): \`make test\` provisions it (hack/setup-promtool: Debian's prometheus, ` +
        "apt-installed as root), or set PROMTOOL",
    );
  }
  if (r.error) throw r.error;
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

function kustomize(dir: string): Obj[] {
  const r = spawnSync(KUBECTL, ["kustomize", join(root, "config", dir)], { encoding: "utf8", maxBuffer: 64 << 20 });
  if (r.error) assert.fail(`cannot run ${KUBECTL} (kustomize is built into kubectl ≥ 1.14): ${r.error.message}`);
  assert.equal(r.status, 0, `kubectl kustomize config/${dir} failed:\n${r.stderr}`);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
}

const rules = (): Rule[] => (ruleGroups(root) as Array<{ rules: Rule[] }>).flatMap((g) => g.rules);
const alert = (name: string): Rule => {
  const r = rules().find((x) => x.alert === name);
  assert.ok(r, `no alert ${name} in ${RULES_PATH}`);
  return r;
};

describe("alert rules (config/prometheus)", () => {
  const tmp = mkdtempSync(join(tmpdir(), "prometheus-rules-"));
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it("pass promtool check rules", () => {
    const r = promtool(["check", "rules", RULES_PATH]);
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, new RegExp(`SUCCESS: ${ALERTS.length} rules found`));
  });

  it("pass their promtool unit tests (cronjob-operator.rules.test.yaml)", () => {
    const r = promtool(["test", "rules", RULES_TEST_PATH]);
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /SUCCESS/);
  });

  it("the unit tests see every alert fire and, elsewhere, not fire", () => {
    const doc = parse(readFileSync(join(root, RULES_TEST_PATH), "utf8")) as {
      rule_files: string[];
      tests: Array<{ alert_rule_test?: Array<{ alertname: string; exp_alerts?: unknown[] }> }>;
    };
    assert.deepEqual(doc.rule_files, ["cronjob-operator.rules.yaml"]);
    const cases = doc.tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const name of ALERTS) {
      const mine = cases.filter((c) => c.alertname === name);
      assert.ok(
        mine.some((c) => (c.exp_alerts ?? []).length > 0),
        `${RULES_TEST_PATH} never expects ${name} to fire`,
      );
      assert.ok(
        mine.some((c) => (c.exp_alerts ?? []).length === 0),
        `${RULES_TEST_PATH} never expects ${name} not to fire`,
      );
    }
  });

  it("are exactly the documented alerts, each with a severity, a summary and a description saying what to do", () => {
    assert.deepEqual(
      rules().map((r) => r.alert),
      ALERTS,
    );
    for (const r of rules()) {
      assert.ok(["warning", "critical"].includes(r.labels?.severity ?? ""), `${r.alert}: severity`);
      assert.ok(r.annotations?.summary, `${r.alert}: summary`);
      assert.match(r.annotations?.description ?? "", /`kubectl /, `${r.alert}: the description names no command`);
    }
    for (const name of PER_CRONJOB) {
      const a = alert(name);
      for (const k of ["summary", "description"]) {
        assert.match(a.annotations![k]!, /\{\{ \$labels\.namespace \}\}\/\{\{ \$labels\.cronjob \}\}/, `${name}.${k}`);
      }
      assert.match(a.annotations!.description!, /kubectl describe cronjobs\.batch\.tutorial\.kubebuilder\.io -n /);
      assert.match(a.annotations!.description!, /kubectl cron history -n /);
      // Aggregated by CronJob: the alert's labels do not change with the replica that exports the series.
      assert.match(a.expr, /by \(namespace, cronjob\)/, name);
    }
  });

  it("select the real controller and scrape job (the metrics Service of config/default)", () => {
    const controller = /\.named\("([^"]+)"\)/.exec(
      readFileSync(join(root, "controllers", "cronjob_controller.ts"), "utf8"),
    )?.[1];
    assert.ok(controller, "the CronJob controller's name (.named(...)) in controllers/cronjob_controller.ts");
    assert.match(alert("CronJobOperatorReconcileErrors").expr, new RegExp(`controller="${controller}"`));

    // prometheus-operator names the scrape job after the Service the ServiceMonitor selects.
    const service = kustomize("default").find((o) => o.kind === "Service" && /metrics-service$/.test(o.metadata.name));
    assert.ok(service, "config/default has no metrics Service");
    const jobs = new Set(rules().flatMap((r) => [...r.expr.matchAll(/\bjob="([^"]+)"/g)].map((m) => m[1])));
    assert.deepEqual([...jobs], [service.metadata.name]);
    for (const name of [
      "CronJobOperatorDown",
      "CronJobOperatorReconcileErrors",
      "CronJobCreationSkewSLO",
      "CronJobWebhookServerErrors",
    ]) {
      assert.match(alert(name).expr, /\bjob="/, `${name} must select the operator's scrape job`);
    }
  });

  // The API server labels its admission metrics with the webhook's name (webhooks[].name, which kustomize's
  // namePrefix leaves alone); a renamed webhook would silently disarm the alert.
  it("the admission alert selects exactly the webhooks config/default deploys, by name, in any scrape job", () => {
    const configs = kustomize("default").filter((o) => /^(Mutating|Validating)WebhookConfiguration$/.test(o.kind));
    const deployed = configs.flatMap((o) =>
      (o.webhooks as Array<{ name: string; failurePolicy?: string }>).map((w) => w),
    );
    // Shipped Ignore; the manager adds their failing twins once served (runtime/webhook/failuregate.ts).
    const gated = new Set(
      configs.flatMap((o) => (o.metadata?.annotations?.[FAIL_ONCE_SERVED_ANNOTATION] ?? "").split(",").filter(Boolean)),
    );
    assert.deepEqual(deployed.map((w) => w.name).sort(), [
      "mcronjob-v1.kb.io",
      "vconcurrencygroup-v1.kb.io",
      "vcronjob-v1.kb.io",
      "vexclusioncalendar-v1.kb.io",
    ]);
    // The alert's premise: a failed call refuses the write (for the gated ones, a call to their twins).
    for (const w of deployed) assert.equal(w.failurePolicy, gated.has(w.name) ? "Ignore" : "Fail", w.name);
    assert.deepEqual([...gated].sort(), ["vconcurrencygroup-v1.kb.io", "vexclusioncalendar-v1.kb.io"]);
    const expr = alert("CronJobWebhookFailing").expr;
    const selectors = [...expr.matchAll(/apiserver_admission_webhook_rejection_count\{name=~"([^"]+)"\}/g)].map(
      (m) => m[1],
    );
    assert.ok(selectors.length >= 3, expr);
    for (const re of selectors) {
      const matches = (n: string) => new RegExp(`^(?:${re})$`).test(n);
      for (const w of deployed) assert.ok(matches(w.name), `${re} does not select ${w.name}`);
      // The gated webhooks fail closed through their twins, which the manager adds (the ones that refuse).
      for (const g of gated) assert.ok(matches(servedTwinName(g)), `${re} does not select ${servedTwinName(g)}`);
      for (const other of [
        "mcronjob-v1xkbxio",
        "vcronjob-v1.kb.io.evil",
        "vexclusioncalendar-v1.kb.io2",
        "other.kb.io",
      ]) {
        assert.ok(!matches(other), `${re} selects ${other}`);
      }
    }
    assert.doesNotMatch(expr, /\bjob=/, "the API server's scrape job differs between setups");
    // A refusal of an invalid CronJob (4xx, no_error) is the webhook's job; everything else is a failure.
    assert.match(
      expr,
      /unless\s+apiserver_admission_webhook_rejection_count\{error_type="no_error", rejection_code=~"4\.\."\}/,
    );
  });

  it("every alert links its runbook (docs/runbooks/<alert>.md on the repository of PROJECT)", () => {
    const repo = /^repo: (\S+)$/m.exec(readFileSync(join(root, "PROJECT"), "utf8"))?.[1];
    assert.equal(repo, "github.com/cronjob-operator/cronjob-operator");
    for (const r of rules()) {
      assert.equal(
        r.annotations?.runbook_url,
        `https://${repo}/blob/main/docs/runbooks/${r.alert}.md`,
        `${r.alert}: runbook_url`,
      );
    }
  });

  it("the PrometheusRule holds the rule file's groups (generated by make manifests)", () => {
    assert.equal(
      readFileSync(join(root, PROMETHEUS_RULE_PATH), "utf8"),
      prometheusRuleYAML(root),
      `${PROMETHEUS_RULE_PATH} is stale: run make manifests`,
    );
    const objs = kustomize("prometheus");
    const pr = objs.find((o) => o.kind === "PrometheusRule");
    assert.ok(pr, "config/prometheus deploys no PrometheusRule");
    assert.equal(pr.apiVersion, "monitoring.coreos.com/v1");
    assert.deepEqual(pr.spec.groups, ruleGroups(root));

    // The PrometheusRule's groups, as a rule file, are valid for promtool too.
    const file = join(tmp, "from-prometheusrule.yaml");
    writeFileSync(file, stringify({ groups: pr.spec.groups }));
    const r = promtool(["check", "rules", file]);
    assert.equal(r.status, 0, r.out);
  });

  it("the ServiceMonitor keeps the CronJobs' own namespace label (honorLabels)", () => {
    const sm = kustomize("prometheus").find((o) => o.kind === "ServiceMonitor");
    assert.ok(sm);
    assert.equal(sm.spec.endpoints[0].honorLabels, true);
  });

  it("the dashboard's queries are valid PromQL (promtool, with Grafana's variables filled in)", () => {
    const dashboard = JSON.parse(readFileSync(join(root, DASHBOARD_PATH), "utf8")) as Obj;
    const exprs = dashboardExprs(dashboard);
    assert.ok(exprs.length >= 20, `only ${exprs.length} queries in ${DASHBOARD_PATH}`);
    const filled = exprs.map((e) =>
      e
        .replaceAll("$__rate_interval", "5m")
        .replace(/\$\{?(namespace|cronjob)\}?/g, ".*")
        .replace(/\$\{?job\}?/g, "cronjob-operator-controller-manager-metrics-service"),
    );
    for (const e of filled) assert.doesNotMatch(e, /\$/, `an unfilled variable in ${e}`);
    const file = join(tmp, "dashboard.rules.yaml");
    writeFileSync(
      file,
      stringify({
        groups: [{ name: "dashboard", rules: filled.map((expr, i) => ({ record: `dashboard:query_${i}`, expr })) }],
      }),
    );
    const r = promtool(["check", "rules", file]);
    assert.equal(r.status, 0, r.out);
  });
});
