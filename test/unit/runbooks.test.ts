// docs/runbooks: every alert of config/prometheus links a runbook in this repository (its runbook_url, on the
// repository PROJECT names), and each runbook says what the alert means, how to check and what to do. The
// commands in them must exist: `kubectl cron` subcommands of the plugin, PromQL that promtool parses and that
// queries only metrics the operator (docs/operating.md: Metrics) or kube-apiserver serves.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { stringify } from "yaml";
import { COMMANDS } from "../../cmd/kubectl-cron/model/args.ts";
import { ruleGroups } from "../../hack/crdgen/prometheusrule.ts";
import { KUBE_APISERVER_METRICS, promqlMetricNames } from "../promql.ts";

const root = resolve(import.meta.dirname, "..", "..");
const RUNBOOKS = "docs/runbooks";
const SECTIONS = ["## What it means", "## How to check", "## What to do"];

interface Rule {
  alert?: string;
  expr: string;
  annotations?: Record<string, string>;
}

const alerts = (): Rule[] =>
  (ruleGroups(root) as Array<{ rules: Rule[] }>).flatMap((g) => g.rules).filter((r) => r.alert !== undefined);

function runbookURLBase(): string {
  const repo = /^repo: (\S+)$/m.exec(readFileSync(join(root, "PROJECT"), "utf8"))?.[1];
  assert.ok(repo, "PROJECT has no repo:");
  return `https://${repo}/blob/main/${RUNBOOKS}/`;
}

/** The text under each `## ` heading of a Markdown page. */
function sections(md: string): Map<string, string> {
  const out = new Map<string, string>();
  const parts = md.split(/^(?=## )/m).slice(1);
  for (const p of parts) {
    const nl = p.indexOf("\n");
    out.set(p.slice(0, nl).trim(), p.slice(nl + 1).trim());
  }
  return out;
}

/** The metric names the Metrics section of docs/operating.md lists (metric-names.test.ts holds it to the code). */
function operatorMetrics(): Set<string> {
  const doc = readFileSync(join(root, "docs", "operating.md"), "utf8");
  const start = doc.indexOf("\n## Metrics\n");
  assert.ok(start >= 0, "docs/operating.md has a ## Metrics section");
  const end = doc.indexOf("\n## ", start + 1);
  const section = doc.slice(start, end < 0 ? undefined : end);
  const names = new Set<string>(["up", "process_cpu_seconds_total", "process_start_time_seconds"]);
  for (const m of section.matchAll(/`([a-z][a-z0-9_]+)(?:\{[^}`]*\})?`/g)) {
    for (const suffix of ["", "_bucket", "_sum", "_count"]) names.add(m[1]! + suffix);
  }
  return names;
}

describe("runbooks (docs/runbooks)", () => {
  const tmp = mkdtempSync(join(tmpdir(), "runbooks-"));
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it("every alert has a runbook_url to docs/runbooks/<alert>.md of this repository, and the page exists", () => {
    const base = runbookURLBase();
    assert.equal(base, "https://github.com/cronjob-operator/cronjob-operator/blob/main/docs/runbooks/");
    assert.ok(alerts().length >= 8, `only ${alerts().length} alerts`);
    for (const a of alerts()) {
      const url = a.annotations?.runbook_url;
      assert.equal(url, `${base}${a.alert}.md`, `${a.alert}: runbook_url`);
      const file = join(root, RUNBOOKS, `${a.alert}.md`);
      assert.ok(existsSync(file), `${a.alert}: ${RUNBOOKS}/${a.alert}.md does not exist`);
    }
  });

  it("each runbook is titled with its alert and says what it means, how to check and what to do", () => {
    for (const a of alerts()) {
      const md = readFileSync(join(root, RUNBOOKS, `${a.alert}.md`), "utf8");
      assert.equal(md.split("\n")[0], `# ${a.alert}`, `${a.alert}: title`);
      const s = sections(md);
      assert.deepEqual([...s.keys()], SECTIONS, `${a.alert}: its sections, in this order`);
      for (const h of SECTIONS) assert.ok((s.get(h) ?? "").length >= 150, `${a.alert}: "${h}" is (nearly) empty`);
      // "How to check" gives commands to run, not prose only.
      assert.match(s.get("## How to check")!, /```(sh|promql)\n/, `${a.alert}: no command under "How to check"`);
    }
  });

  it("no runbook without an alert (a renamed alert leaves no stale page), and the index lists them all", () => {
    const names = new Set(alerts().map((a) => `${a.alert}.md`));
    const pages = readdirSync(join(root, RUNBOOKS)).filter((f) => f !== "README.md");
    assert.deepEqual(pages.sort(), [...names].sort());
    const index = readFileSync(join(root, RUNBOOKS, "README.md"), "utf8");
    for (const a of alerts()) assert.match(index, new RegExp(`\\[${a.alert}\\]\\(${a.alert}\\.md\\)`), a.alert!);
  });

  it("`kubectl cron` commands in the runbooks are subcommands the plugin has", () => {
    const known = new Set<string>(COMMANDS);
    let seen = 0;
    for (const f of readdirSync(join(root, RUNBOOKS))) {
      const md = readFileSync(join(root, RUNBOOKS, f), "utf8");
      for (const m of md.matchAll(/kubectl cron ([a-z-]+)/g)) {
        seen++;
        assert.ok(known.has(m[1]!), `${f}: kubectl cron ${m[1]} is no subcommand (${[...known].join(", ")})`);
      }
    }
    assert.ok(seen >= 5, `only ${seen} kubectl cron commands in the runbooks`);
  });

  it("their PromQL parses (promtool) and queries only metrics the operator or kube-apiserver serves", () => {
    const known = operatorMetrics();
    for (const n of Object.keys(KUBE_APISERVER_METRICS)) known.add(n);
    const exprs: Array<{ file: string; expr: string }> = [];
    for (const f of readdirSync(join(root, RUNBOOKS))) {
      const md = readFileSync(join(root, RUNBOOKS, f), "utf8");
      for (const m of md.matchAll(/```promql\n([\s\S]*?)```/g)) exprs.push({ file: f, expr: m[1]!.trim() });
    }
    assert.ok(exprs.length >= 10, `only ${exprs.length} PromQL blocks`);
    for (const { file, expr } of exprs) {
      for (const n of promqlMetricNames(expr)) assert.ok(known.has(n), `${file}: ${n} is served by nobody (${expr})`);
    }
    // As recording rules, with the placeholders (<namespace>, <cronjob>) as label values: promtool parses them.
    const rulesFile = join(tmp, "runbooks.rules.yaml");
    writeFileSync(
      rulesFile,
      stringify({
        groups: [{ name: "runbooks", rules: exprs.map((e, i) => ({ record: `runbook:q${i}`, expr: e.expr })) }],
      }),
    );
    const promtool = process.env.PROMTOOL || "promtool";
    const r = spawnSync(promtool, ["check", "rules", rulesFile], { encoding: "utf8", timeout: 50_000 });
    if (r.error)
      assert.fail(
        `${promtool}: ${r.error.message} (\`make test\` provisions it: hack/setup-promtool; or set PROMTOOL)`,
      );
    assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  });
});
