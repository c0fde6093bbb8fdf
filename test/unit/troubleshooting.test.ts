// One source for the causes (issue 38): `kubectl cron why` diagnoses with the table of cmd/kubectl-cron/answer/causes.ts,
// docs/troubleshooting.md lists exactly its rows (generated, and led by the command), and each alert a cause names
// has a runbook that lists the causes behind it.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { CAUSES, PLACEHOLDERS } from "../../cmd/kubectl-cron/answer/causes.ts";
import { ruleGroups } from "../../hack/crdgen/prometheusrule.ts";
import {
  fixWords,
  TROUBLESHOOTING_PATH,
  runbookPaths,
  withCauses,
  withRunbookCauses,
} from "../../hack/apidocs/causes.ts";

const root = resolve(import.meta.dirname, "..", "..");
const read = (rel: string) => readFileSync(join(root, rel), "utf8");

describe("the causes of `kubectl cron why`, the troubleshooting page and the runbooks: one table", () => {
  it("the table's ids are unique, kebab-case, and every row says how it is found and what to do", () => {
    const ids = CAUSES.map((c) => c.id);
    assert.equal(new Set(ids).size, ids.length, "duplicate ids");
    for (const c of CAUSES) {
      assert.match(c.id, /^[a-z]+(-[a-z]+)*$/, c.id);
      assert.ok(
        c.title.length > 10 && c.detect.length > 30 && c.fix(PLACEHOLDERS).join(" ").length > 20,
        `${c.id}: title, detect, fix`,
      );
    }
  });

  it("docs/troubleshooting.md holds the table's causes as generated, one section per cause, and nothing else", () => {
    const page = read(TROUBLESHOOTING_PATH);
    assert.equal(withCauses(page), page, "stale: run make manifests");
    const sections = [...page.matchAll(/^### ([a-z-]+)$/gm)].map((m) => m[1]);
    assert.deepEqual(
      sections,
      CAUSES.map((c) => c.id),
    );
    for (const c of CAUSES) assert.ok(page.includes(fixWords(c)), `${c.id}: its fix is on the page`);
  });

  it("the page leads with `kubectl cron why`, shows a real transcript, and lists the read-only RBAC it needs", () => {
    const page = read(TROUBLESHOOTING_PATH);
    const intro = page.slice(0, page.indexOf("\n## "));
    assert.match(intro.split("\n\n")[1] ?? "", /^Ask `kubectl cron why` first/);
    const transcript = /```console\n(\$ kubectl cron why [\s\S]*?)```/.exec(intro);
    assert.ok(transcript, "a console transcript of kubectl cron why before the first section");
    assert.match(transcript[1]!, /\nEvidence:\n {2}- /);
    assert.match(transcript[1]!, /\nFix:\n {2}- /);
    const rbac = /## What `kubectl cron why` needs[\s\S]*?```yaml\n([\s\S]*?)```/.exec(page)?.[1] ?? "";
    assert.ok(rbac.includes("verbs: [get, list]"), "the RBAC list");
    assert.doesNotMatch(rbac, /create|update|patch|delete|watch/, "read access only");
  });

  it("every alert a cause names has a runbook, which lists that cause (generated) and starts its checks with why", () => {
    const alerts = new Set(
      (ruleGroups(root) as Array<{ rules: { alert?: string }[] }>).flatMap((g) => g.rules.map((r) => r.alert)),
    );
    for (const rel of runbookPaths()) {
      const alert = /([^/]+)\.md$/.exec(rel)![1]!;
      assert.ok(alerts.has(alert), `${alert}: no such alert`);
      assert.ok(existsSync(join(root, rel)), `${rel} does not exist`);
      const page = read(rel);
      assert.equal(withRunbookCauses(rel, page), page, `${rel} is stale: run make manifests`);
      for (const c of CAUSES.filter((x) => "alert" in x && x.alert === alert)) {
        assert.ok(page.includes(`(../troubleshooting.md#${c.id})`), `${rel} links ${c.id}`);
      }
      const check = page.slice(page.indexOf("## How to check"));
      assert.match(check, /```sh\nkubectl cron why /, `${rel}: its checks start with kubectl cron why`);
    }
  });
});
