// Exports of the product code that nothing imports: dead API surface that makes a module look used by
// more than it is. Run by `npm run lint` (make lint); fails listing each one. An export counts as used
// when another file of the repository that is not a test (product, tools, benchmark, envtest) imports it
// by name, through a namespace import's property, a destructured dynamic import, or a re-export that is
// itself used. An export only tests import is flagged too when its own module does not use it either: that is
// dead code kept alive by its test (an export a module uses itself and exposes to its unit test is not).
import { readdirSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import ts from "typescript";

export interface UnusedExport {
  /** Imported by tests only (and unused by its own module), rather than by nothing. */
  testsOnly?: boolean;
  file: string;
  line: number;
  name: string;
}

/** The directories whose exports must be used; everything else only counts as a user. */
export const PRODUCT_DIRS = ["api", "cmd", "controllers", "runtime", "webhooks"];

/**
 * The tests, and the test doubles kept beside what they stand in for (a fake client, clock and event
 * recorder): what these import does not make an export used, and their own exports are not judged.
 */
export const TEST_PATHS = ["test/", "runtime/fake/", "runtime/fake-clock.ts", "runtime/events/fake.ts"];

/**
 * The exports of the files `isProduct` selects that no other file of `fileNames` uses, not counting the
 * uses by the files `isTest` selects. Files are type-checked as one program, so imports are resolved
 * exactly as tsc resolves them.
 */
export function unusedExports(
  fileNames: readonly string[],
  isProduct: (file: string) => boolean,
  options: ts.CompilerOptions,
  isTest: (file: string) => boolean = () => false,
): UnusedExport[] {
  const program = ts.createProgram({ rootNames: fileNames, options });
  const checker = program.getTypeChecker();
  const byProduct = new Set<ts.Symbol>();
  const byTests = new Set<ts.Symbol>();
  let used = byProduct;

  const markChain = (symbol: ts.Symbol | undefined): void => {
    for (let s = symbol; s && !used.has(s);) {
      used.add(s);
      if (!(s.flags & ts.SymbolFlags.Alias)) break;
      const next = checker.getImmediateAliasedSymbol(s);
      if (next === s) break;
      s = next;
    }
  };
  const moduleOf = (specifier: ts.Expression): ts.Symbol | undefined => checker.getSymbolAtLocation(specifier);
  const markName = (module: ts.Symbol | undefined, name: string): void => {
    if (!module) return;
    markChain(checker.getExportsOfModule(module).find((s) => s.escapedName === name));
  };
  const markAll = (module: ts.Symbol | undefined): void => {
    if (module) for (const s of checker.getExportsOfModule(module)) markChain(s);
  };

  for (const sf of program.getSourceFiles()) {
    if (sf.isDeclarationFile) continue;
    used = isTest(sf.fileName) ? byTests : byProduct;
    const namespaces = new Map<ts.Symbol, ts.Symbol>();
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node)) {
        const module = moduleOf(node.moduleSpecifier);
        const clause = node.importClause;
        if (clause?.name) markName(module, "default");
        const bindings = clause?.namedBindings;
        if (bindings && ts.isNamedImports(bindings)) {
          for (const el of bindings.elements) markName(module, (el.propertyName ?? el.name).text);
        } else if (bindings && ts.isNamespaceImport(bindings)) {
          const local = checker.getSymbolAtLocation(bindings.name);
          if (local && module) namespaces.set(local, module);
        }
      } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
        // `export * from` and `export { x } from`: followed through when the re-export is used (markChain).
      } else if (ts.isExportSpecifier(node) && !node.parent.parent.moduleSpecifier) {
        // `export { local }`: the local binding is used by whoever uses this export, not by the export itself.
      } else if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression)) {
        const ns = checker.getSymbolAtLocation(node.expression);
        const module = ns && namespaces.get(ns);
        if (module) markName(module, node.name.text);
      } else if (ts.isIdentifier(node) && !ts.isPropertyAccessExpression(node.parent)) {
        // A namespace used whole (passed on, iterated): every export of its module counts as used.
        const s = checker.getSymbolAtLocation(node);
        const module = s && namespaces.get(s);
        if (module && !ts.isNamespaceImport(node.parent)) markAll(module);
      } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const [arg] = node.arguments;
        const module = arg && ts.isStringLiteral(arg) ? moduleOf(arg) : undefined;
        const decl = ts.isAwaitExpression(node.parent) ? node.parent.parent : undefined;
        if (decl && ts.isVariableDeclaration(decl) && ts.isObjectBindingPattern(decl.name)) {
          for (const el of decl.name.elements) {
            const name = el.propertyName ?? el.name;
            if (ts.isIdentifier(name)) markName(module, name.text);
          }
        } else {
          markAll(module);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }

  const out: UnusedExport[] = [];
  for (const sf of program.getSourceFiles()) {
    if (sf.isDeclarationFile || !isProduct(sf.fileName)) continue;
    const module = checker.getSymbolAtLocation(sf);
    if (!module) continue;
    for (const s of checker.getExportsOfModule(module)) {
      // Exports re-exported from another module are judged where they are declared.
      const decl = s.declarations?.[0];
      if (!decl || decl.getSourceFile() !== sf || byProduct.has(s)) continue;
      const testsOnly = byTests.has(s);
      if (testsOnly && usedElsewhere(checker, s, byProduct)) continue;
      const { line } = sf.getLineAndCharacterOfPosition(decl.getStart());
      out.push({ file: sf.fileName, line: line + 1, name: ts.symbolName(s), ...(testsOnly ? { testsOnly } : {}) });
    }
  }
  return out.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
}

/**
 * Whether an export only tests import is still the product's: its module uses it itself, or (a re-export such as a
 * barrel's) what it re-exports is used by the product or by its own module.
 */
function usedElsewhere(checker: ts.TypeChecker, s: ts.Symbol, byProduct: ReadonlySet<ts.Symbol>): boolean {
  if (s.flags & ts.SymbolFlags.Alias) {
    const target = checker.getAliasedSymbol(s);
    const decl = target.declarations?.[0];
    return byProduct.has(target) || (!!decl && usedInOwnModule(checker, decl.getSourceFile(), target));
  }
  const decl = s.declarations?.[0];
  return !!decl && usedInOwnModule(checker, decl.getSourceFile(), s);
}

/** Whether the module that declares `s` refers to it anywhere but in its declarations' names. */
function usedInOwnModule(checker: ts.TypeChecker, sf: ts.SourceFile, s: ts.Symbol): boolean {
  const names = new Set((s.declarations ?? []).map((d) => ts.getNameOfDeclaration(d)));
  let found = false;
  const visit = (node: ts.Node): void => {
    if (found) return;
    if (ts.isIdentifier(node) && !names.has(node)) {
      const at = checker.getSymbolAtLocation(node);
      if (at && (at === s || checker.getExportSymbolOfSymbol(at) === s)) {
        found = true;
        return;
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

function tsFilesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (name === "node_modules" || name === "results" || name === "work") return [];
    return statSync(p).isDirectory() ? tsFilesUnder(p) : p.endsWith(".ts") ? [p] : [];
  });
}

function main(): number {
  const root = resolve(import.meta.dirname, "..");
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, "tsconfig.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      },
    },
  );
  if (!config) throw new Error("cannot read tsconfig.json");
  // The benchmark and the dashboard's page have their own tsconfig but use product code too.
  const files = [
    ...config.fileNames,
    ...tsFilesUnder(join(root, "bench")),
    ...tsFilesUnder(join(root, "cmd/kubectl-cron/dashboard/web")),
  ];
  const product = PRODUCT_DIRS.map((d) => join(root, d) + "/");
  const tests = TEST_PATHS.map((p) => join(root, p)); // a directory keeps its trailing slash
  const isTest = (f: string) => tests.some((t) => (t.endsWith("/") ? f.startsWith(t) : f === t));
  const unused = unusedExports(
    files,
    (f) => product.some((p) => f.startsWith(p)) && !isTest(f),
    config.options,
    isTest,
  );
  for (const u of unused) {
    process.stderr.write(
      `${relative(root, u.file)}:${u.line}: ${u.name} is exported but ${u.testsOnly ? "only tests use it (its module does not either): dead code with a test" : "imported nowhere"}\n`,
    );
  }
  if (unused.length > 0) process.stderr.write(`${unused.length} unused export(s): remove the export (or the code)\n`);
  return unused.length > 0 ? 1 : 0;
}

if (import.meta.main) process.exitCode = main();
