// docs/architecture.md matches the code step for step: the numbered steps of reconcile() (its `// N.` comments), the
// step list in the controller's header, and the "reconcile as data" list in the docs are one numbering, with the
// same names; and every module of controllers/ that refers to a step ("step 9", "steps 7–8") names one of them, as
// every test does (its comments, and its describe() and it() titles). And the controller stays the steps and no more
// (issue 72): its file, its class and the functions of it and of the two modules it hands work to (runpath.ts, commit.ts)
// held to the sizes they were split to; and so is every function of the plugin (cmd/kubectl-cron/), the why path first.
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";

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

/** Every module of controllers/ (the controller's own file included): file name → source. */
function controllerModules(): Map<string, string> {
  const dir = new URL("controllers/", root);
  const files = readdirSync(dir).filter((f) => f.endsWith(".ts"));
  assert.ok(files.includes("cronjob_controller.ts"), "the controller is among the modules read");
  return new Map(files.map((f) => [f, readFileSync(new URL(f, dir), "utf8")]));
}

/** Every test module (test/, this one aside: its own samples name steps that do not exist): path → source. */
function testModules(): Map<string, string> {
  const top = fileURLToPath(new URL("test/", root));
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const p = join(dir, name);
      return statSync(p).isDirectory() ? walk(p) : p.endsWith(".ts") ? [p] : [];
    });
  const self = fileURLToPath(import.meta.url);
  const files = walk(top).filter((p) => p !== self);
  assert.ok(files.length > 50, `${files.length} test modules`);
  return new Map(files.map((p) => [relative(fileURLToPath(root), p), readFileSync(p, "utf8")]));
}

/** The step references in a test's describe() and it() titles ("step 9: the triggers"), with their lines. */
function titleReferences(source: string): { line: number; text: string; steps: string[] }[] {
  const titles = source
    .split("\n")
    .map((text, i) => ({ text, i }))
    .filter(({ text }) => /^\s*(describe|it)\(/.test(text));
  return titles.flatMap(({ text, i }) =>
    [...text.matchAll(STEP_REFERENCE)].map((m) => ({ line: i + 1, text: text.trim(), steps: stepNumbers(m[1]!) })),
  );
}

/** "step 9", "Steps 7–8", "steps 9, 10 and 11", "step 10b": the numbers as written, a range's two ends. */
const STEP_REFERENCE = /\b[Ss]teps? ((?:\d+[a-z]?)(?:(?:\s*[–-]\s*|, | and )\d+[a-z]?)*)/g;
const stepNumbers = (written: string) => [...written.matchAll(/\d+[a-z]?/g)].map((n) => n[0]);

/** The references among `refs` that name no step of reconcile()'s 1..n, or name them out of order. */
function wrongSteps(refs: { line: number; text: string; steps: string[] }[], n: number, file: string): string[] {
  return refs.flatMap((ref) => {
    const numbers = ref.steps.map((s) => (/^\d+$/.test(s) ? Number(s) : NaN));
    const bad = numbers.some((x) => !(x >= 1 && x <= n)) || numbers.some((x, i) => i > 0 && x <= numbers[i - 1]!);
    return bad ? [`${file}:${ref.line}: step ${ref.steps.join(", ")}: ${ref.text}`] : [];
  });
}

/**
 * The step references in a module's comments: "Step 9", "step 4's", "steps 7–8", "steps 9, 10 and 11", "10–11b";
 * each with the line it is on and the step numbers as written (a range's two ends).
 */
function stepReferences(source: string): { line: number; text: string; steps: string[] }[] {
  const out: { line: number; text: string; steps: string[] }[] = [];
  source.split("\n").forEach((text, i) => {
    const comment = /\/\/|^\s*\*|\/\*\*/.exec(text);
    if (!comment) return;
    const part = text.slice(comment.index);
    for (const m of part.matchAll(STEP_REFERENCE))
      out.push({ line: i + 1, text: text.trim(), steps: stepNumbers(m[1]!) });
  });
  return out;
}

/** docs/architecture.md's "The reconcile as data" block: number → name (the words before "(" or "──►"). */
function docSteps(): Map<number, string> {
  const out = new Map<number, string>();
  for (const m of docBlock().matchAll(/^(\d+) ([a-z ]+?)(?= \(| ──►|:)/gm)) out.set(Number(m[1]), m[2]!.trim());
  return out;
}

function docBlock(): string {
  const section = docs.slice(docs.indexOf("## The reconcile as data"));
  return section.slice(section.indexOf("```\n") + 4, section.indexOf("\n```", section.indexOf("```\n") + 4));
}

/** The module the docs block names first for a step ("4 observe (observe.ts)"): module → its step. */
function docModuleSteps(): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of docBlock().matchAll(/^(\d+) [a-z ]+\(([a-z_]+\.ts)/gm)) out.set(m[2]!, Number(m[1]));
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

describe("the modules of controllers/ refer to reconcile()'s steps as it numbers them", () => {
  it("every step a module's comments name is one of reconcile()'s (no step past the last, no lettered step)", () => {
    const n = reconcileSteps().length;
    const wrong = [...controllerModules()].flatMap(([file, source]) =>
      wrongSteps(stepReferences(source), n, `controllers/${file}`),
    );
    assert.deepEqual(wrong, [], `reconcile() has steps 1..${n}`);
  });

  it("so does every test: its comments and its describe() and it() titles", () => {
    const n = reconcileSteps().length;
    const wrong = [...testModules()].flatMap(([file, source]) =>
      wrongSteps([...stepReferences(source), ...titleReferences(source)], n, file),
    );
    assert.deepEqual(wrong, [], `reconcile() has steps 1..${n}`);
    const sample = 'describe("step 12: conditions", () => {\n  it("drops it (step 6b sets it)", () => {';
    assert.deepEqual(
      wrongSteps(titleReferences(sample), n, "sample").map((w) => w.split(": ")[0]),
      ["sample:1", "sample:2"],
      "a title naming a step that is not reconcile()'s",
    );
  });

  it("a module the docs name for a step refers to that step in its header", () => {
    const modules = controllerModules();
    const named = docModuleSteps();
    assert.ok(named.size >= 4, `${named.size} modules named in the docs' step list`);
    for (const [file, step] of named) {
      const source = modules.get(file);
      assert.ok(source !== undefined, `controllers/${file} (named in the docs for step ${step}) exists`);
      const header = source.slice(0, source.indexOf("\nimport "));
      const steps = stepReferences(header).flatMap((r) => r.steps.map(Number));
      if (steps.length) assert.ok(steps.includes(step), `controllers/${file}'s header names step ${step}: ${steps}`);
    }
  });

  it("finds the references it checks", () => {
    const refs = stepReferences(
      "// Steps 7–8, the schedule\n/** Step 4's part */\nconst x = 1; // (steps 9, 10 and 11)",
    );
    assert.deepEqual(
      refs.map((r) => r.steps),
      [["7", "8"], ["4"], ["9", "10", "11"]],
    );
    assert.deepEqual(stepReferences("// (steps 10–11b)")[0]?.steps, ["10", "11b"]);
  });
});

/** The functions and methods of a module with a body: name → lines (first to last, the doc comment not counted). */
function functionLines(file: string, source: string): Map<string, number> {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const out = new Map<string, number>();
  const line = (pos: number) => sf.getLineAndCharacterOfPosition(pos).line;
  const visit = (n: ts.Node): void => {
    if ((ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isConstructorDeclaration(n)) && n.body) {
      out.set(n.name?.getText(sf) ?? "constructor", line(n.end) - line(n.getStart(sf)) + 1);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** The methods of a class (the constructor and static ones included). */
function methodsOf(source: string, name: string): string[] {
  const sf = ts.createSourceFile("x.ts", source, ts.ScriptTarget.Latest, true);
  const cls = sf.statements.find((s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name?.text === name);
  assert.ok(cls, `class ${name} found`);
  return cls.members
    .filter((m) => ts.isMethodDeclaration(m) || ts.isConstructorDeclaration(m))
    .map((m) => m.name?.getText(sf) ?? "constructor");
}

describe("the controller is reconcile()'s steps and no more (issue 72)", () => {
  /** What the split left (750 lines, 18 methods, commit() 113 lines before it), with a little room. */
  const MAX_FILE_LINES = 400;
  const MAX_METHODS = 8;
  const MAX_FUNCTION_LINES = 85;

  it(`cronjob_controller.ts is at most ${MAX_FILE_LINES} lines, its reconciler at most ${MAX_METHODS} methods`, () => {
    const lines = controller.split("\n").length - 1;
    assert.ok(lines <= MAX_FILE_LINES, `cronjob_controller.ts: ${lines} lines`);
    const methods = methodsOf(controller, "CronJobReconciler");
    assert.ok(methods.length <= MAX_METHODS, `CronJobReconciler: ${methods.length} methods: ${methods.join(", ")}`);
  });

  it(`no function of the controller, its run path or its commit is over ${MAX_FUNCTION_LINES} lines`, () => {
    const modules = controllerModules();
    const long = ["cronjob_controller.ts", "runpath.ts", "commit.ts"].flatMap((file) => {
      const source = modules.get(file);
      assert.ok(source !== undefined, `controllers/${file} exists`);
      return [...functionLines(file, source)]
        .filter(([, n]) => n > MAX_FUNCTION_LINES)
        .map(([name, n]) => `${file} ${name}: ${n} lines`);
    });
    assert.deepEqual(long, []);
    assert.ok((functionLines("x.ts", controller).get("reconcile") ?? 0) > 10, "reconcile() is measured");
  });
});

/**
 * Every function of a module with a body, arrow functions and function expressions included (a row's function in a
 * data table too, each on its own; the table itself is data, not a function): its name (the variable, property or
 * method it is, else `<anonymous>`), first line and lines (first to last, the doc comment not counted).
 */
function everyFunction(file: string, source: string): { name: string; line: number; lines: number }[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const out: { name: string; line: number; lines: number }[] = [];
  const line = (pos: number) => sf.getLineAndCharacterOfPosition(pos).line;
  const nameOf = (n: ts.FunctionLikeDeclaration): string => {
    if (n.name) return n.name.getText(sf);
    if (ts.isConstructorDeclaration(n)) return "constructor";
    const p = n.parent;
    if (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p))
      return p.name.getText(sf);
    return "<anonymous>";
  };
  const visit = (n: ts.Node): void => {
    if (ts.isFunctionLike(n) && "body" in n && n.body) {
      const f = n as ts.FunctionLikeDeclaration;
      out.push({ name: nameOf(f), line: line(f.getStart(sf)) + 1, lines: line(f.end) - line(f.getStart(sf)) + 1 });
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** Every module of the plugin, its page included: path under cmd/kubectl-cron/ → source. */
function pluginModules(): Map<string, string> {
  const top = fileURLToPath(new URL("cmd/kubectl-cron/", root));
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const p = join(dir, name);
      return statSync(p).isDirectory() ? walk(p) : /\.tsx?$/.test(p) ? [p] : [];
    });
  return new Map(walk(top).map((p) => [relative(top, p), readFileSync(p, "utf8")]));
}

describe("the plugin's functions are one cause or step each, as the controller's are (issue 72)", () => {
  /** What the why path was split from: diagnose() 219 lines, ranVerdict() 163, migrate() 162 before it. */
  const MAX_FUNCTION_LINES = 80;

  it(`no function of cmd/kubectl-cron/ is over ${MAX_FUNCTION_LINES} lines`, () => {
    const modules = pluginModules();
    assert.ok(modules.size > 50, `${modules.size} modules of the plugin`);
    const long = [...modules].flatMap(([file, source]) =>
      everyFunction(file, source)
        .filter((f) => f.lines > MAX_FUNCTION_LINES)
        .map((f) => `${file}:${f.line} ${f.name}: ${f.lines} lines`),
    );
    assert.deepEqual(long, []);
    const diagnose = everyFunction("diagnose.ts", modules.get("answer/why/diagnose.ts") ?? "");
    assert.ok((diagnose.find((f) => f.name === "diagnose")?.lines ?? 0) > 5, "diagnose() is measured");
  });

  it("measures arrow functions and methods, by name, and not a data table", () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  x${i}();`).join("\n");
    const rows = Array.from({ length: 100 }, (_, i) => `  { id: ${i}, verdict: () => "v${i}" },`).join("\n");
    const sample = [
      `const arrow = () => {\n${body(81)}\n};`,
      `class K {\n  method() {\n${body(3)}\n  }\n}`,
      `const TABLE = [\n${rows}\n];`,
      `export function named() {\n${body(78)}\n}`,
    ].join("\n");
    const found = everyFunction("sample.ts", sample);
    const lines = new Map(found.map((f) => [f.name, f.lines]));
    assert.equal(lines.get("arrow"), 83);
    assert.equal(lines.get("method"), 5);
    assert.equal(lines.get("named"), 80);
    assert.equal(lines.get("verdict"), 1, "a table row's function, on its own");
    assert.ok(!found.some((f) => f.lines > 83), "the table is no function");
  });
});
