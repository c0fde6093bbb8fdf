// The Dockerfile as the tools that must agree with it read it: hack/lint-dockerfile.ts (the static lint) and
// hack/build-image.ts (the image built without a container engine, through hack/image/plan.ts). A parser of
// the subset of the Dockerfile syntax the project uses, plus .dockerignore matching.
import { posix } from "node:path";

export interface Instruction {
  keyword: string;
  /** Arguments after the keyword and its --flags. */
  args: string;
  flags: Record<string, string>;
  line: number;
}

export interface Stage {
  index: number;
  name?: string;
  /** The FROM image with global ARGs substituted. */
  base: string;
  instructions: Instruction[];
  line: number;
}

export interface Dockerfile {
  globalArgs: Map<string, string>;
  stages: Stage[];
}

/** Logical lines: continuations joined, comments and blank lines dropped. */
function logicalLines(text: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  let cur: { text: string; line: number } | undefined;
  text.split(/\r?\n/).forEach((raw, i) => {
    const trimmed = raw.trim();
    if (trimmed.startsWith("#") || (trimmed === "" && !cur)) return;
    const cont = /\\\s*$/.test(raw);
    const piece = cont ? raw.replace(/\\\s*$/, "") : raw;
    if (cur) cur.text += " " + piece.trim();
    else cur = { text: piece.trim(), line: i + 1 };
    if (!cont) {
      if (cur.text) out.push(cur);
      cur = undefined;
    }
  });
  if (cur?.text) out.push(cur);
  return out;
}

function substitute(s: string, vars: Map<string, string>): string {
  return s.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (m, a, def, b) => {
    const name = (a ?? b) as string;
    return vars.get(name) ?? (def as string | undefined) ?? m;
  });
}

export function parseDockerfile(text: string): Dockerfile {
  const globalArgs = new Map<string, string>();
  const stages: Stage[] = [];
  for (const { text: l, line } of logicalLines(text)) {
    const m = /^(\S+)\s*(.*)$/.exec(l)!;
    const keyword = m[1]!.toUpperCase();
    let rest = m[2]!;
    const flags: Record<string, string> = {};
    if (keyword !== "RUN" || rest.startsWith("--")) {
      for (let f = /^--([a-z-]+)(?:=(\S*))?\s*/.exec(rest); f; f = /^--([a-z-]+)(?:=(\S*))?\s*/.exec(rest)) {
        flags[f[1]!] = f[2] ?? "true";
        rest = rest.slice(f[0].length);
      }
    }
    if (keyword === "FROM") {
      const fm = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest);
      if (!fm) throw new Error(`line ${line}: cannot parse FROM ${rest}`);
      stages.push({
        index: stages.length,
        base: substitute(fm[1]!, globalArgs),
        ...(fm[2] ? { name: fm[2].toLowerCase() } : {}),
        instructions: [],
        line,
      });
      continue;
    }
    if (stages.length === 0) {
      if (keyword !== "ARG") throw new Error(`line ${line}: ${keyword} before the first FROM`);
      const am = /^([A-Za-z_][A-Za-z0-9_]*)(?:=(.*))?$/.exec(rest);
      if (am) globalArgs.set(am[1]!, (am[2] ?? "").replace(/^"(.*)"$/, "$1"));
      continue;
    }
    stages.at(-1)!.instructions.push({ keyword, args: rest, flags, line });
  }
  return { globalArgs, stages };
}

/** Exec-form (JSON array) or shell-form arguments as a list of words. */
export function words(args: string): string[] {
  if (args.trim().startsWith("[")) {
    const parsed: unknown = JSON.parse(args);
    if (!Array.isArray(parsed) || !parsed.every((w) => typeof w === "string"))
      throw new Error(`bad JSON form: ${args}`);
    return parsed as string[];
  }
  return args.split(/\s+/).filter(Boolean);
}

/**
 * One ENV value as Docker reads it: quotes removed (single quotes literal), backslash escapes, and `$VAR`,
 * `${VAR}`, `${VAR:-default}`, `${VAR:+alternative}` replaced by the environment before the instruction.
 * Stops at unquoted whitespace when `toSpace`; returns the value and where it stopped.
 */
function envWord(s: string, from: number, env: ReadonlyMap<string, string>, toSpace: boolean): [string, number] {
  let out = "";
  let quote: '"' | "'" | undefined;
  let i = from;
  for (; i < s.length; i++) {
    const c = s[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else out += c;
    } else if (c === "\\" && i + 1 < s.length && (!quote || /["\\$]/.test(s[i + 1]!))) {
      out += s[++i]!;
    } else if (c === '"') {
      quote = quote ? undefined : '"';
    } else if (c === "'" && !quote) {
      quote = "'";
    } else if (c === "$") {
      const m = /^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::([-+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/.exec(s.slice(i));
      if (!m) {
        out += c;
        continue;
      }
      const name = (m[1] ?? m[4])!;
      const value = env.get(name);
      if (m[2] === "-") out += value || m[3]!;
      else if (m[2] === "+") out += value ? m[3]! : "";
      else out += value ?? "";
      i += m[0].length - 1;
    } else if (!quote && toSpace && /\s/.test(c)) {
      break;
    } else out += c;
  }
  return [out, i];
}

/** The `K=V K2="v 2"` pairs of an ENV or LABEL instruction, substituted from `env`. */
export function keyValues(args: string, env: ReadonlyMap<string, string>, line = 0): [string, string][] {
  const out: [string, string][] = [];
  const a = args.trim();
  for (let i = 0; i < a.length;) {
    const km = /^\s*("(?:[^"\\]|\\.)*"|[^\s=]+)=/.exec(a.slice(i));
    if (!km) throw new Error(`line ${line}: cannot parse ${a}`);
    const [value, end] = envWord(a, i + km[0].length, env, true);
    out.push([km[1]!.startsWith('"') ? (JSON.parse(km[1]!) as string) : km[1]!, value]);
    i = end;
    while (i < a.length && /\s/.test(a[i]!)) i++;
  }
  return out;
}

/**
 * The environment at the end of a stage: `base` (the base image's) updated by its ENV instructions in
 * order, both `ENV K=V ...` and the legacy `ENV K V` form, with Docker's quoting and substitution (every
 * value of one instruction sees the environment before it).
 */
export function envOf(stage: Stage, base: ReadonlyMap<string, string> = new Map()): Map<string, string> {
  const env = new Map(base);
  for (const ins of stage.instructions) {
    if (ins.keyword !== "ENV") continue;
    const a = ins.args.trim();
    const legacy = /^([^\s=]+)\s+(.*)$/.exec(a);
    if (legacy && !legacy[1]!.includes("=")) env.set(legacy[1]!, envWord(legacy[2]!, 0, env, false)[0]);
    else for (const [k, v] of keyValues(a, new Map(env), ins.line)) env.set(k, v);
  }
  return env;
}

export interface ShellCommand {
  line: number;
  argv: string[];
}

/** The simple commands of a stage's RUN instructions (split at &&, || and ;). */
export function runCommands(stage: Stage): ShellCommand[] {
  const out: ShellCommand[] = [];
  for (const ins of stage.instructions) {
    if (ins.keyword !== "RUN") continue;
    const cmd = ins.args.trim().startsWith("[") ? words(ins.args).join(" ") : ins.args;
    for (const part of cmd.split(/&&|\|\||;/))
      out.push({ line: ins.line, argv: part.trim().split(/\s+/).filter(Boolean) });
  }
  return out;
}

export const isNpm = (argv: string[], sub: string[]): boolean => argv[0] === "npm" && sub.includes(argv[1] ?? "");
export const omitsDev = (argv: string[]): boolean =>
  argv.some((a) => a === "--omit=dev" || a === "--production" || a === "--only=prod" || a === "--only=production");

/** Whether a command is `npm run build` or the `tsc -p <buildConfig>` it runs. */
export const runsBuild = (argv: string[], buildConfig: string): boolean =>
  (isNpm(argv, ["run", "run-script"]) && argv[2] === "build") ||
  (argv.some((a) => /(^|\/)tsc$/.test(a)) &&
    argv.some((a, i) => (a === "-p" || a === "--project") && argv[i + 1] === buildConfig));

/** The working directory of a stage after its instructions up to `uptoLine`. */
export function workdirOf(stage: Stage, uptoLine = Infinity): string {
  let wd = "/";
  for (const ins of stage.instructions) {
    if (ins.line > uptoLine) break;
    if (ins.keyword === "WORKDIR") wd = posix.resolve(wd, ins.args.trim());
  }
  return wd;
}

export interface Copy {
  ins: Instruction;
  sources: string[];
  dest: string;
}

export function copies(stage: Stage): Copy[] {
  return stage.instructions
    .filter((i) => i.keyword === "COPY" || i.keyword === "ADD")
    .map((ins) => {
      const w = words(ins.args);
      return { ins, sources: w.slice(0, -1), dest: w.at(-1) ?? "" };
    });
}

export function stageByRef(df: Dockerfile, ref: string): Stage | undefined {
  return /^\d+$/.test(ref) ? df.stages[Number(ref)] : df.stages.find((s) => s.name === ref.toLowerCase());
}

/** The Node major of a node:* or distroless nodejs image, else undefined. */
export function nodeMajorOf(image: string): number | undefined {
  const m =
    /^(?:docker\.io\/)?(?:library\/)?node:(\d+)(?:[.-]|$)/.exec(image) ??
    /^gcr\.io\/distroless\/nodejs(\d+)-/.exec(image);
  return m ? Number(m[1]) : undefined;
}

// --- .dockerignore (moby/patternmatcher semantics, enough for allowlists and ** patterns) ---

export interface IgnorePattern {
  negate: boolean;
  re: RegExp;
}

export function parseDockerignore(text: string): IgnorePattern[] {
  const out: IgnorePattern[] = [];
  for (const raw of text.split(/\r?\n/)) {
    let p = raw.trim();
    if (!p || p.startsWith("#")) continue;
    const negate = p.startsWith("!");
    if (negate) p = p.slice(1).trim();
    p = posix.normalize(p).replace(/^\/+/, "").replace(/\/+$/, "");
    let re = "";
    for (let i = 0; i < p.length; i++) {
      const c = p[i]!;
      if (c === "*" && p[i + 1] === "*") {
        if (p[i + 2] === "/") {
          re += "(?:.*/)?";
          i += 2;
        } else {
          re += ".*";
          i += 1;
        }
      } else if (c === "*") re += "[^/]*";
      else if (c === "?") re += "[^/]";
      else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
    }
    out.push({ negate, re: new RegExp(`^${re}$`) });
  }
  return out;
}

/** Whether a context path (relative, /-separated) is excluded: last matching pattern wins, parents count. */
export function isIgnored(path: string, patterns: IgnorePattern[]): boolean {
  const parts = posix.normalize(path).split("/");
  const candidates = parts.map((_, i) => parts.slice(0, i + 1).join("/"));
  let ignored = false;
  for (const p of patterns) if (candidates.some((c) => p.re.test(c))) ignored = !p.negate;
  return ignored;
}
