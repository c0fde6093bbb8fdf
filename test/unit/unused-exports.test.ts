// hack/unused-exports.ts, the lint's check for exports nothing imports, on a tiny project.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import ts from "typescript";
import { unusedExports } from "../../hack/unused-exports.ts";

describe("unused exports check", () => {
  const dir = mkdtempSync(join(tmpdir(), "unused-exports-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const files: Record<string, string> = {
    "product/a.ts": [
      "export const named = 1;",
      "export const viaNamespace = 2;",
      "export const viaDynamic = 3;",
      "export const viaBarrel = 4;",
      "export const onlyInside = 5;",
      "export const dead = 6;",
      "export const onlyTested = 7;",
      "export type Shape = { x: number };",
      "export type DeadType = string;",
      "const local = onlyInside;",
      "export { local as renamed };",
      "export function testedThroughTheBarrel(): number { return 8; }",
    ].join("\n"),
    "product/index.ts": 'export * from "./a.ts";\nexport { dead as alsoDead } from "./a.ts";\n',
    "product/whole.ts": "export const one = 1;\nexport const two = 2;\n",
    "user.ts": [
      'import { named, type Shape } from "./product/a.ts";',
      'import * as a from "./product/a.ts";',
      'import { viaBarrel } from "./product/index.ts";',
      'import * as whole from "./product/whole.ts";',
      'const { viaDynamic } = await import("./product/a.ts");',
      "const s: Shape = { x: named + a.viaNamespace + viaDynamic + viaBarrel };",
      "console.log(s, Object.keys(whole));",
    ].join("\n"),
    // A test's imports do not make an export used: not by name, namespace, dynamic import or barrel. An export
    // its own module uses (onlyInside) and a test imports is the module's, exposed to its test: not flagged.
    "test/a.test.ts": [
      'import { onlyTested, dead } from "../product/a.ts";',
      'import * as a from "../product/a.ts";',
      'import { testedThroughTheBarrel } from "../product/index.ts";',
      'const { alsoDead } = await import("../product/index.ts");',
      "console.log(onlyTested, dead, a.onlyInside, testedThroughTheBarrel(), alsoDead);",
    ].join("\n"),
  };
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2023,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowImportingTsExtensions: true,
    noEmit: true,
    strict: true,
    types: [],
  };

  it("lists exactly the exports no other file uses, by file and line, not counting what tests import", () => {
    const found = unusedExports(
      Object.keys(files).map((f) => join(dir, f)),
      (f) => f.startsWith(join(dir, "product") + "/"),
      options,
      (f) => f.startsWith(join(dir, "test") + "/"),
    );
    assert.deepEqual(
      found.map((u) => `${u.file.slice(dir.length + 1)}:${u.line} ${u.name}`),
      [
        "product/a.ts:6 dead",
        "product/a.ts:7 onlyTested",
        "product/a.ts:9 DeadType",
        "product/a.ts:11 renamed",
        "product/a.ts:12 testedThroughTheBarrel",
        "product/index.ts:2 alsoDead",
      ],
    );
  });

  it("counts a test's imports as uses when no file is a test (the check without its test rule)", () => {
    const found = unusedExports(
      Object.keys(files).map((f) => join(dir, f)),
      (f) => f.startsWith(join(dir, "product") + "/"),
      options,
    );
    assert.deepEqual(
      found.map((u) => `${u.file.slice(dir.length + 1)}:${u.line} ${u.name}`),
      ["product/a.ts:9 DeadType", "product/a.ts:11 renamed"],
    );
  });
});
