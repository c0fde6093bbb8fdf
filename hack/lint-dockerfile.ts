// `make lint-dockerfile`: checks the Dockerfile statically, since there is no container engine to build it
// with here. It parses the Dockerfile and checks the contract between it, the build and the Deployment:
//
//   - a multi-stage build on the Node major of package.json's engines, the sources compiled in a builder
//     stage with the command of `npm run build` (tsc -p tsconfig.build.json), with the layout tsc expects;
//   - `npm ci --ignore-scripts` wherever a dependency has an install script (the `node` devDependency
//     would download a second Node), and only production node_modules (--omit=dev) in the final stage;
//   - the final stage runs as USER 65532:65532, as config/manager/manager.yaml's runAsUser;
//   - its entrypoint is the file `npm run build` emits for cmd/main.ts (outDir of tsconfig.build.json),
//     and config/manager/manager.yaml's command/args run the same file;
//   - .dockerignore keeps in the build context every file the Dockerfile copies and tsc compiles;
//   - `make image-build` (hack/build-image.ts, no engine) can reproduce the final stage: it derives the
//     image config and files from this Dockerfile (hack/image/plan.ts), and any instruction, COPY source
//     or flag it cannot follow is a problem here, so the two images cannot drift apart.
//
// Unless --no-compile is given, the TypeScript program of tsconfig.build.json is also emitted into a
// temporary directory, to confirm the entrypoint file and that every compiled source is copied.
//
//   node hack/lint-dockerfile.ts [--no-compile] [--dockerfile FILE]
import { mkdtempSync, readFileSync, rmSync, statSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, posix } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import ts from "typescript";
import {
  copies,
  envOf,
  isIgnored,
  isNpm,
  nodeMajorOf,
  omitsDev,
  parseDockerfile,
  parseDockerignore,
  runCommands,
  runsBuild,
  type Instruction,
  type Stage,
  stageByRef,
  words,
  workdirOf,
} from "./image/dockerfile.ts";
import { BASE_PATH, planImage } from "./image/plan.ts";
import { envValue, MANAGER_MANIFEST, readManagerDeployment } from "../envtest/manager-deployment.ts";

export type { Dockerfile, Instruction, Stage } from "./image/dockerfile.ts";
export { isIgnored, parseDockerfile, parseDockerignore } from "./image/dockerfile.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** The manager's source entrypoint (kubebuilder's cmd/main.go). */
export const ENTRY_SOURCE = "cmd/main.ts";
/** The nonroot uid and gid the image runs as (distroless' and kubebuilder's). */
export const NONROOT = 65532;

// --- the checks ---

export interface LintOptions {
  root?: string;
  dockerfile?: string;
  /** Emit the tsconfig.build.json program into a temp dir (default true). */
  compile?: boolean;
}

export interface LintResult {
  problems: string[];
  warnings: string[];
  /** The script the image runs, e.g. /workspace/dist/cmd/main.js. */
  entrypoint?: string;
}

/** Where a context file lands in a stage, or undefined if no COPY brings it in. */
function locationIn(stage: Stage, file: string, root: string): string | undefined {
  let where: string | undefined;
  for (const c of copies(stage)) {
    if (c.ins.flags.from) continue;
    const wd = workdirOf(stage, c.ins.line);
    for (const raw of c.sources) {
      const src = posix.normalize(raw).replace(/\/+$/, "");
      const isDir = src === "." || (existsSync(join(root, src)) && statSync(join(root, src)).isDirectory());
      const destIsDir = c.dest.endsWith("/") || c.sources.length > 1 || isDir;
      const dest = posix.resolve(wd, c.dest);
      if (src === "." || file.startsWith(src + "/")) {
        where = posix.join(dest, src === "." ? file : posix.relative(src, file));
      } else if (file === src) {
        where = destIsDir ? posix.join(dest, posix.basename(src)) : dest;
      }
    }
  }
  return where;
}

function readTsconfig(root: string, file: string): ts.ParsedCommandLine {
  const path = join(root, file);
  const read = ts.readConfigFile(path, (p) => ts.sys.readFile(p));
  if (read.error) throw new Error(`${file}: ${ts.flattenDiagnosticMessageText(read.error.messageText, "\n")}`);
  return ts.parseJsonConfigFileContent(read.config, ts.sys, dirname(path), undefined, path);
}

/** `npm run build` (`tsc -p <buildConfig>`): its tsconfig, and that config's outDir and rootDir relative to root. */
export function buildLayout(root = ROOT): { buildConfig: string; outDir: string; rootDir: string } {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts?: Record<string, string> };
  const build = pkg.scripts?.build ?? "";
  const bm = /^tsc\s+(?:-p|--project)\s+(\S+)$/.exec(build.trim());
  if (!bm) throw new Error(`package.json's build script is "${build}", expected "tsc -p <tsconfig>"`);
  const parsed = readTsconfig(root, bm[1]!);
  const rel = (p: string): string => relative(root, p).split("\\").join("/");
  return {
    buildConfig: bm[1]!,
    outDir: rel(parsed.options.outDir ?? root),
    rootDir: rel(parsed.options.rootDir ?? root) || ".",
  };
}

/** The tsconfig files a config extends (tsconfig.build.json → tsconfig.json), relative to root. */
function tsconfigChain(root: string, file: string): string[] {
  const chain = [file];
  let cur = file;
  for (;;) {
    const read = ts.readConfigFile(join(root, cur), (p) => ts.sys.readFile(p));
    const ext = (read.config as { extends?: string } | undefined)?.extends;
    if (typeof ext !== "string" || !ext.startsWith(".")) return chain;
    cur = posix.normalize(posix.join(posix.dirname(cur), ext));
    chain.push(cur);
  }
}

export function lintDockerfile(opts: LintOptions = {}): LintResult {
  const root = opts.root ?? ROOT;
  const dockerfilePath = opts.dockerfile ?? join(root, "Dockerfile");
  const problems: string[] = [];
  const warnings: string[] = [];
  const problem = (msg: string, line?: number): void => {
    problems.push(line ? `Dockerfile:${line}: ${msg}` : msg);
  };
  const df = parseDockerfile(readFileSync(dockerfilePath, "utf8"));
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    type?: string;
    engines?: { node?: string };
    scripts?: Record<string, string>;
    dependencies?: Record<string, string>;
  };
  const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as {
    packages?: Record<string, { hasInstallScript?: boolean }>;
  };

  // Stages and base images.
  if (df.stages.length < 2) problem(`expected a multi-stage build, found ${df.stages.length} stage(s)`);
  const final = df.stages.at(-1);
  if (!final) return { problems, warnings };
  const wantMajor = Number(/(\d+)/.exec(pkg.engines?.node ?? "")?.[1]);
  const baseImage = (s: Stage): string => {
    const seen = new Set<Stage>();
    let cur: Stage | undefined = s;
    while (cur && !seen.has(cur)) {
      seen.add(cur);
      const next = stageByRef(df, cur.base);
      if (!next || next.index >= cur.index) return cur.base;
      cur = next;
    }
    return s.base;
  };
  for (const s of df.stages) {
    const image = baseImage(s);
    if (/\$/.test(image)) problem(`FROM ${s.base}: unresolved variable`, s.line);
    const major = nodeMajorOf(image);
    if (major === undefined)
      problem(`FROM ${image}: not a Node image (node:${wantMajor}-* or distroless nodejs${wantMajor})`, s.line);
    else if (wantMajor && major !== wantMajor)
      problem(`FROM ${image}: Node ${major}, but package.json's engines want Node ${wantMajor}`, s.line);
    if (/:latest$/.test(image) || !/:/.test(image.split("/").at(-1)!)) problem(`FROM ${image}: pin a tag`, s.line);
  }
  const distroless = /distroless/.test(baseImage(final));

  // npm ci: --ignore-scripts when a dependency has an install script.
  const withScripts = Object.entries(lock.packages ?? {})
    .filter(([k, v]) => k && v.hasInstallScript)
    .map(([k]) => k.replace(/^.*node_modules\//, ""));
  for (const s of df.stages)
    for (const c of runCommands(s))
      if (isNpm(c.argv, ["ci", "install", "i"]) && withScripts.length && !c.argv.includes("--ignore-scripts"))
        problem(`${c.argv.join(" ")}: add --ignore-scripts (install scripts of ${withScripts.join(", ")})`, c.line);

  // The builder: the command of `npm run build`, with the tsconfig files and sources it compiles.
  const build = pkg.scripts?.build ?? "";
  const bm = /^tsc\s+(?:-p|--project)\s+(\S+)$/.exec(build.trim());
  if (!bm) {
    problem(`package.json's build script is "${build}", expected "tsc -p <tsconfig>"`);
    return { problems, warnings };
  }
  const buildConfig = bm[1]!;
  const isBuild = (argv: string[]): boolean => runsBuild(argv, buildConfig);
  const builders = df.stages.filter((s) => s !== final && runCommands(s).some((c) => isBuild(c.argv)));
  if (builders.length !== 1) {
    problem(`expected one builder stage running "${build}" (or npm run build), found ${builders.length}`);
    return { problems, warnings };
  }
  const builder = builders[0]!;
  for (const c of runCommands(builder))
    if (isNpm(c.argv, ["run", "run-script"]) && c.argv[2] === "build")
      warnings.push(
        `Dockerfile:${c.line}: npm run build resolves node from node_modules/.bin, where the skipped \`node\` devDependency leaves nothing; run tsc with the image's node`,
      );
  const parsed = readTsconfig(root, buildConfig);
  const outDir = relative(root, parsed.options.outDir ?? root)
    .split("\\")
    .join("/");
  const rootDir = relative(root, parsed.options.rootDir ?? root)
    .split("\\")
    .join("/");
  if (!outDir || outDir.startsWith("..")) problem(`${buildConfig}: outDir must be a directory inside the project`);
  const emitted = posix.join(outDir, posix.relative(rootDir || ".", ENTRY_SOURCE).replace(/\.ts$/, ".js"));
  const builderWd = workdirOf(builder);
  const needed = new Set<string>([
    "package.json",
    "package-lock.json",
    ...tsconfigChain(root, buildConfig),
    ...parsed.fileNames.map((f) => relative(root, f).split("\\").join("/")),
  ]);

  // Optionally compile, which also finds sources imported from outside tsconfig.build.json's include.
  if (opts.compile !== false) {
    const out = mkdtempSync(join(tmpdir(), "lint-dockerfile-"));
    try {
      const program = ts.createProgram(parsed.fileNames, { ...parsed.options, outDir: join(out, outDir) });
      const result = program.emit();
      const diags = ts.getPreEmitDiagnostics(program).concat(result.diagnostics);
      if (diags.length)
        warnings.push(
          `tsc -p ${buildConfig} reports ${diags.length} type error(s) (make lint shows them); docker build would fail`,
        );
      for (const sf of program.getSourceFiles()) {
        const rel = relative(root, sf.fileName).split("\\").join("/");
        if (!rel.startsWith("..") && !rel.includes("node_modules/") && !sf.isDeclarationFile) needed.add(rel);
      }
      if (!existsSync(join(out, emitted))) problem(`tsc -p ${buildConfig} did not emit ${emitted}`);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }

  const ignorePath = join(root, ".dockerignore");
  const ignore = existsSync(ignorePath) ? parseDockerignore(readFileSync(ignorePath, "utf8")) : [];
  if (!existsSync(ignorePath)) problem(".dockerignore is missing (node_modules and dist would be sent to the build)");
  for (const p of ["node_modules/x", "dist/x"])
    if (!isIgnored(p, ignore)) problem(`.dockerignore must exclude ${p.split("/")[0]}/`);
  for (const f of [...needed].sort()) {
    if (isIgnored(f, ignore)) problem(`${f} is needed by the build but .dockerignore excludes it`);
    const at = locationIn(builder, f, root);
    if (!at) problem(`${f} is needed by "${build}" but the builder stage does not COPY it`);
    else if (at !== posix.join(builderWd, f))
      problem(`${f} lands at ${at} in the builder, not at ${posix.join(builderWd, f)} (tsc's layout)`);
  }

  // The final stage: no sources or dev dependencies, package.json for "type": "module", the build output.
  const finalWd = workdirOf(final);
  let finalEntry: string | undefined;
  const prodState = new Map<Stage, "none" | "all" | "prod">();
  for (const s of df.stages) {
    let state: "none" | "all" | "prod" = "none";
    for (const c of runCommands(s)) {
      if (isNpm(c.argv, ["ci", "install", "i"])) state = omitsDev(c.argv) ? "prod" : "all";
      if (isNpm(c.argv, ["prune"]) && omitsDev(c.argv)) state = "prod";
    }
    prodState.set(s, state);
  }
  if (prodState.get(final) === "all") problem("the final stage installs devDependencies (use --omit=dev)");
  let copiesNodeModules = false;
  let copiesPackageJson = false;
  let copiesOutput = false;
  for (const c of copies(final)) {
    const from = c.ins.flags.from ? stageByRef(df, c.ins.flags.from) : undefined;
    if (c.ins.flags.from && !from) {
      if (!/[:/]/.test(c.ins.flags.from)) problem(`COPY --from=${c.ins.flags.from}: no such stage`, c.ins.line);
      continue;
    }
    const wd = workdirOf(final, c.ins.line);
    for (const raw of c.sources) {
      const src = posix.normalize(raw).replace(/\/+$/, "");
      const dest = posix.resolve(wd, c.dest);
      if (!from) {
        if (c.ins.keyword === "ADD") problem(`ADD ${raw}: use COPY`, c.ins.line);
        if (src === "." || src === "*")
          problem(`COPY ${raw}: copies the whole build context into the final stage`, c.ins.line);
        if (/(^|\/)node_modules(\/|$)/.test(src))
          problem(`COPY ${raw}: node_modules from the build context`, c.ins.line);
        if (src === "package.json") copiesPackageJson = true;
        continue;
      }
      const fromWd = workdirOf(from, Infinity);
      const abs = posix.resolve(fromWd, src);
      if (/(^|\/)node_modules$/.test(abs)) {
        copiesNodeModules = true;
        if (prodState.get(from) !== "prod")
          problem(
            `COPY --from=${c.ins.flags.from} ${raw}: node_modules of a stage that installed devDependencies`,
            c.ins.line,
          );
        if (dest !== posix.join(finalWd, "node_modules"))
          problem(`node_modules must land at ${posix.join(finalWd, "node_modules")}, not ${dest}`, c.ins.line);
      }
      if (abs === posix.join(fromWd, "package.json")) copiesPackageJson = true;
      if (from === builder && abs === posix.join(builderWd, outDir)) {
        copiesOutput = true;
        finalEntry = posix.join(
          c.dest.endsWith("/") && posix.basename(dest) !== posix.basename(abs) ? posix.join(dest, outDir) : dest,
          posix.relative(outDir, emitted),
        );
      } else if (from === builder && abs !== posix.join(builderWd, outDir)) {
        problem(`COPY --from=${c.ins.flags.from} ${raw}: only ${outDir}/ should come from the builder`, c.ins.line);
      }
    }
  }
  if (Object.keys(pkg.dependencies ?? {}).length && !copiesNodeModules)
    problem("the final stage has no production node_modules");
  if (!copiesPackageJson && pkg.type === "module")
    problem('the final stage lacks package.json, whose "type": "module" makes dist/*.js ES modules');
  if (!copiesOutput) problem(`the final stage does not COPY ${outDir}/ from the builder`);

  // USER 65532:65532 — numeric, so runAsNonRoot can verify it.
  const users = final.instructions.filter((i) => i.keyword === "USER");
  const user = users.at(-1)?.args.trim();
  if (user !== `${NONROOT}:${NONROOT}` && user !== `${NONROOT}`)
    problem(`the final stage must end as USER ${NONROOT}:${NONROOT}, found ${user ?? "no USER"}`, users.at(-1)?.line);

  // The entrypoint runs what the build emits.
  const last = (k: string): Instruction | undefined => final.instructions.filter((i) => i.keyword === k).at(-1);
  const entrypointIns = last("ENTRYPOINT");
  const cmdIns = last("CMD");
  for (const i of [entrypointIns, cmdIns])
    if (i && !i.args.trim().startsWith("["))
      problem(`${i.keyword} must use the exec (JSON) form so node gets SIGTERM`, i.line);
  const argv = [
    ...(entrypointIns ? words(entrypointIns.args) : distroless ? ["/nodejs/bin/node"] : []),
    ...(cmdIns ? words(cmdIns.args) : []),
  ];
  const script = argv.slice(1).find((a) => !a.startsWith("-"));
  let entrypoint: string | undefined;
  if (!argv[0] || posix.basename(argv[0]) !== "node" || !script) {
    problem(`the image must run node <script>, found ${JSON.stringify(argv)}`, (entrypointIns ?? cmdIns)?.line);
  } else {
    entrypoint = posix.resolve(finalWd, script);
    const expected = finalEntry ?? posix.join(finalWd, emitted);
    if (entrypoint !== expected)
      problem(
        `the image runs ${entrypoint}, but ${ENTRY_SOURCE} is emitted to ${expected} (${buildConfig} outDir ${outDir})`,
      );
  }

  // The Deployment runs the same file, as the same user, with the same node options.
  const manager = readManagerDeployment(root);
  if (manager && entrypoint) {
    const { pod, container } = manager;
    if (!container) problem(`${MANAGER_MANIFEST}: no manager container`);
    else {
      // command replaces ENTRYPOINT; args replace CMD (and follow the image's ENTRYPOINT without command).
      const imageEntrypoint = entrypointIns ? words(entrypointIns.args) : argv.slice(0, 1);
      const cargv: string[] = [
        ...(container.command ?? imageEntrypoint),
        ...(container.args ?? (container.command ? [] : argv.slice(imageEntrypoint.length))),
      ];
      const cscript = cargv.slice(1).find((a) => !a.startsWith("-"));
      if (posix.basename(cargv[0] ?? "") !== "node" || !cscript || posix.resolve(finalWd, cscript) !== entrypoint)
        problem(`${MANAGER_MANIFEST} runs ${JSON.stringify(cargv)}, not node ${posix.relative(finalWd, entrypoint)}`);
      if (distroless && container.command && cargv[0] === "node")
        problem(`${MANAGER_MANIFEST}: command "node" is not on PATH in distroless images (/nodejs/bin/node)`);
      const uid = container.securityContext?.runAsUser ?? pod?.securityContext?.runAsUser;
      if (uid !== undefined && uid !== NONROOT)
        problem(`${MANAGER_MANIFEST}: runAsUser ${uid}, but the image's USER is ${NONROOT}`);
      // The Deployment's env replaces the image's: a NODE_OPTIONS in one only would run two different heaps.
      const imageNodeOptions = envOf(final, new Map([["PATH", BASE_PATH]])).get("NODE_OPTIONS") ?? "";
      const podNodeOptions = envValue(container, "NODE_OPTIONS");
      if (imageNodeOptions !== podNodeOptions)
        problem(
          `NODE_OPTIONS differs: the image sets ${JSON.stringify(imageNodeOptions)}, ` +
            `${MANAGER_MANIFEST} ${JSON.stringify(podNodeOptions)}`,
        );
    }
  }

  // The image built without an engine (hack/build-image.ts, `make image-build`) follows this Dockerfile: its
  // config and files are derived from it by hack/image/plan.ts, which reports what it cannot reproduce.
  if (outDir && !outDir.startsWith("..")) {
    const plan = planImage(df, {
      buildConfig,
      outDir,
      isDirectory: (p) => existsSync(join(root, p)) && statSync(join(root, p)).isDirectory(),
    });
    for (const p of plan.problems) problems.push(`${p} (make image-build would not match the Dockerfile)`);
  }
  return { problems, warnings, ...(entrypoint ? { entrypoint } : {}) };
}

function main(): number {
  const { values } = parseArgs({
    options: { "no-compile": { type: "boolean" }, dockerfile: { type: "string" } },
  });
  const result = lintDockerfile({
    compile: !values["no-compile"],
    ...(values.dockerfile ? { dockerfile: resolve(values.dockerfile) } : {}),
  });
  for (const w of result.warnings) console.error(`warning: ${w}`);
  for (const p of result.problems) console.error(`error: ${p}`);
  if (result.problems.length) {
    console.error(`lint-dockerfile: ${result.problems.length} problem(s)`);
    return 1;
  }
  console.log(`Dockerfile OK (runs node ${result.entrypoint} as ${NONROOT}:${NONROOT}; make image-build follows it)`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = main();
  } catch (err) {
    console.error(`lint-dockerfile: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  }
}
