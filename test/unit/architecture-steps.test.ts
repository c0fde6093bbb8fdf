// docs/architecture.md matches the code step for step: the numbered steps of reconcile() (its `// N.` comments), the
// step list in the controller's header, and the "reconcile as data" list in the docs are one numbering, with the
// same names.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";

const root = new URL("../../", import.meta.url);
const controller = readFileSync(new URL("controllers/cronjob_controller.ts", root), "utf8");
const docs = readFileSync(new URL("docs/architecture.md", root), "utf8");

/** The numbers of reconcile()'s own step comments, in order ("// 9. The triggers" is 9; "10–11" ranges count). */
function reconcileSteps(): number[] {
  const start = controller.indexOf("  async reconcile(");
  assert.ok(start > 0, "reconcile() found");
  const end = controller.indexOf("\n  }\n", start);
  const body = controller.slice(start, end);
  return [...body.matchAll(/^\s*\/\/ (\d+)\. /gm)].map((m) => Number(m[1]));
}

/** The header's "1 load → 2 children → …" list: number → name. */
function headerSteps(): Map<number, string> {
  const header = controller.slice(0, controller.indexOf("\nimport "));
  const text = header
    .split("\n")
    .map((l) => l.replace(/^\/\/\s*/, ""))
    .join(" ");
  const after = text.split("reads top-down like the kubebuilder book's numbered steps:")[1];
  assert.ok(after, "the header lists the steps");
  const list = after.slice(0, after.indexOf("("));
  return new Map(
    [...list.matchAll(/(\d+) ([a-z ]+?)(?= →|\s*$)/g)].map((m) => [Number(m[1]), m[2]!.trim()] as [number, string]),
  );
}

/** docs/architecture.md's "The reconcile as data" block: number → name (the words before "(" or "──►"). */
function docSteps(): Map<number, string> {
  const section = docs.slice(docs.indexOf("## The reconcile as data"));
  const block = section.slice(section.indexOf("```\n") + 4, section.indexOf("\n```", section.indexOf("```\n") + 4));
  const out = new Map<number, string>();
  for (const m of block.matchAll(/^(\d+) ([a-z ]+?)(?= \(| ──►|:)/gm)) out.set(Number(m[1]), m[2]!.trim());
  return out;
}

describe("docs/architecture.md matches reconcile() step for step", () => {
  it("reconcile() numbers its steps 1..N, in order, each once", () => {
    const steps = reconcileSteps();
    assert.deepEqual(
      steps,
      steps.map((_, i) => i + 1),
    );
    assert.ok(steps.length >= 8, `${steps.length} steps`);
  });

  it("the controller's header and the docs list the same steps, with the same names, as reconcile() numbers them", () => {
    const n = reconcileSteps().length;
    const header = headerSteps();
    const documented = docSteps();
    assert.deepEqual(
      [...header.keys()],
      Array.from({ length: n }, (_, i) => i + 1),
      "header",
    );
    assert.deepEqual(
      [...documented.keys()],
      Array.from({ length: n }, (_, i) => i + 1),
      "docs",
    );
    assert.deepEqual([...documented.values()], [...header.values()]);
  });
});
