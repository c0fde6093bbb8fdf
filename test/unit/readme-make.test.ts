// What the docs say about the make targets and CI is what the Makefile and .ci/run do: which targets run
// `npm ci` first, what `make manifests` writes, and what CI runs (docs/development.md, once the README's
// Prerequisites and Development sections; test/unit/docs-commands.test.ts checks every make command in the docs).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { API_REFERENCE_PATH } from "../../hack/apidocs/reference.ts";
import { PROMETHEUS_RULE_PATH } from "../../hack/crdgen/prometheusrule.ts";
import { ROLE_PATH } from "../../hack/crdgen/rbac.ts";

const root = resolve(import.meta.dirname, "..", "..");
const development = readFileSync(join(root, "docs", "development.md"), "utf8");
const makefile = readFileSync(join(root, "Makefile"), "utf8");

/** Each target's prerequisites, as written on its rule line. */
function prerequisites(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of makefile.matchAll(/^([a-z][a-z0-9-]*):([^=\n#]*)/gm)) {
    out.set(m[1]!, m[2]!.trim().split(/\s+/).filter(Boolean));
  }
  return out;
}

/** Whether `target` runs the npm ci rule ($(NODE_MODULES)) first, directly or through another target. */
function runsNpmCi(target: string, deps = prerequisites(), seen = new Set<string>()): boolean {
  if (seen.has(target)) return false;
  seen.add(target);
  const pre = deps.get(target);
  assert.ok(pre, `no target ${target} in the Makefile`);
  return pre.some((p) => p === "$(NODE_MODULES)" || (deps.has(p) && runsNpmCi(p, deps, seen)));
}

describe("the make and CI claims of docs/development.md", () => {
  it("names the targets that run npm ci first, and those that do not", () => {
    const line =
      /- Node: `npm ci` \(([\s\S]*?)\) installs Node 24[\s\S]*?The kubectl- and Docker-only targets \(([^)]*)\) do not run it\./.exec(
        development,
      );
    assert.ok(line, "docs/development.md: the Prerequisites' Node paragraph");
    const backticked = (text: string) => [...text.matchAll(/`([a-z][a-z0-9-]*)`/g)].map((m) => m[1]!);
    const runs = backticked(line[1]!.replace("`npm ci`", ""));
    assert.ok(runs.length >= 5, line[1]);
    for (const t of runs) assert.ok(runsNpmCi(t), `docs: make ${t} runs npm ci, but it does not depend on it`);
    const not = backticked(line[2]!);
    assert.deepEqual(not.sort(), ["docker-build", "docker-push", "install", "undeploy", "uninstall"]);
    for (const t of not) assert.ok(!runsNpmCi(t), `docs: make ${t} does not run npm ci, but it does`);
  });

  it("lists what make manifests writes, the PrometheusRule and the API reference included", () => {
    const line = /^make manifests +# regenerate (.*)$/m.exec(development)?.[1];
    assert.ok(line, "docs/development.md: the make targets' make manifests line");
    for (const path of [
      "config/crd/bases",
      ROLE_PATH,
      "config/webhook/manifests.yaml",
      PROMETHEUS_RULE_PATH,
      "dist/install.yaml",
      API_REFERENCE_PATH,
    ]) {
      assert.ok(line.includes(path), `make manifests writes ${path}; the docs' line does not say so`);
    }
    assert.match(
      readFileSync(join(root, "hack", "generate-manifests.ts"), "utf8"),
      /PROMETHEUS_RULE_PATH, prometheusRuleYAML/,
    );
    assert.match(
      readFileSync(join(root, "hack", "generate-manifests.ts"), "utf8"),
      /files\.set\(API_REFERENCE_PATH, apiReference\(/,
    );
  });

  it("says what CI runs: every make target of .ci/run, the ones it runs in turn in its order", () => {
    const ci = readFileSync(join(root, ".ci", "run"), "utf8").replace(/^\s*#.*$/gm, "");
    const ran = new Set(
      [...ci.matchAll(/(?:^\s*|[{;&]\s*)make ([a-z][a-z0-9-]*)/gm)].map((m) => m[1]!).filter((t) => t !== "deps"),
    );
    // In turn: a line of its own at the top level; the others run beside one of them.
    const inTurn = [...ci.matchAll(/^make ([a-z0-9-]+)$/gm)].map((m) => m[1]!).filter((t) => t !== "deps");
    const said = /CI \(`\.ci\/run`\) installs([\s\S]*?)\n\n/.exec(development)?.[1];
    assert.ok(said, "docs/development.md: the paragraph on what CI runs");
    const named = [...said.matchAll(/`make\s+([a-z0-9-]+)`/g)].map((m) => m[1]!);
    for (const t of ran) assert.ok(named.includes(t), `.ci/run runs make ${t}; docs/development.md does not say so`);
    assert.deepEqual(
      [...new Set(named.filter((t) => inTurn.includes(t)))],
      inTurn,
      "the targets CI runs in turn, in its order",
    );
  });
});
