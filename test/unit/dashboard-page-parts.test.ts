// The dashboard's page in parts a reader can hold (issue 63): no function of web/ is over 150 lines, and the page's
// words about the record's decisions are the API's own (api/v1/reasons.ts), not restated beside them.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import ts from "typescript";
import { RECORD_DECISIONS } from "../../api/v1/reasons.ts";
import { MARK_WORDS } from "../../cmd/kubectl-cron/dashboard/view.ts";

const WEB = resolve(import.meta.dirname, "..", "..", "cmd", "kubectl-cron", "dashboard", "web");
const MAX_LINES = 150;

/** Every function, arrow function and method of a file, with its name (or where it starts) and its lines. */
function functionsOf(file: string): { name: string; lines: number }[] {
  const text = readFileSync(file, "utf8");
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: { name: string; lines: number }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const named = (node as ts.FunctionDeclaration).name?.getText(sf);
      out.push({ name: named ?? `the function at line ${start + 1}`, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

describe("the dashboard's page in parts", () => {
  it(`has no function over ${MAX_LINES} lines in web/`, () => {
    const files = readdirSync(WEB).filter((f) => f.endsWith(".ts"));
    assert.ok(files.length > 1, "web/ is in parts");
    const long = files.flatMap((f) =>
      functionsOf(join(WEB, f))
        .filter((fn) => fn.lines > MAX_LINES)
        .map((fn) => `${f}: ${fn.name} (${fn.lines} lines)`),
    );
    assert.deepEqual(long, []);
  });

  it("says what a record's decision means in the API's words", () => {
    for (const [kind, decision] of [
      ["missed", "Missed"],
      ["skipped", "Skipped"],
      ["stopped", "Stopped"],
    ] as const) {
      assert.equal(MARK_WORDS[kind].meaning, RECORD_DECISIONS[decision].description, kind);
    }
  });
});
