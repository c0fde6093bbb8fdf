// What the Dockerfile's final stage builds, as hack/build-image.ts reproduces it without a container engine:
// the image config (ENTRYPOINT, CMD, USER, WORKDIR, ENV, LABEL, EXPOSE, STOPSIGNAL) and, for each COPY, what
// it copies, traced back to one of three things the builder can produce itself:
//
//   - a file or directory of the build context (the working tree, filtered by .dockerignore);
//   - the output of `npm run build` (outDir of tsconfig.build.json: `make build` writes it);
//   - the node_modules of a stage's `npm ci --omit=dev ...` (the builder runs the same command).
//
// The base image becomes Node from node_modules (the project's Node, same major as the FROM image) at the
// path the base image keeps it. Everything else in the final stage, or a COPY traced to anything else, is a
// problem: `make lint-dockerfile` reports it, and hack/build-image.ts refuses to build. So a change to the
// Dockerfile is either followed by the image built without an engine or fails the lint.
import { posix } from "node:path";
import {
  copies,
  type Dockerfile,
  envOf,
  type Instruction,
  isNpm,
  keyValues,
  nodeMajorOf,
  omitsDev,
  runCommands,
  runsBuild,
  type Stage,
  stageByRef,
  words,
  workdirOf,
} from "./dockerfile.ts";

/** The PATH of the node:* and distroless images (the rest of their environment is not needed). */
export const BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/** Where node:* images keep node (on PATH); distroless images keep it at /nodejs/bin/node. */
export const NODE_ON_PATH = "/usr/local/bin/node";
export const DISTROLESS_NODE = "/nodejs/bin/node";
/** The final-stage instructions the builder reproduces; FROM aside, any other fails the lint. */
export const SUPPORTED_INSTRUCTIONS = [
  "WORKDIR",
  "ENV",
  "USER",
  "ENTRYPOINT",
  "CMD",
  "COPY",
  "LABEL",
  "EXPOSE",
  "STOPSIGNAL",
] as const;
/** COPY flags with no effect on the files (--from is followed). */
const HARMLESS_COPY_FLAGS = new Set(["from", "link"]);

/** The OCI image config (the fields a Dockerfile sets), as the builder writes it. */
export interface ImageConfig {
  User?: string;
  Entrypoint?: string[];
  Cmd?: string[];
  WorkingDir?: string;
  Env: string[];
  Labels?: Record<string, string>;
  ExposedPorts?: Record<string, Record<string, never>>;
  StopSignal?: string;
}

export type ImageSource =
  /** A file or directory of the build context, relative to the project root. */
  | { kind: "context"; path: string }
  /** The output of `npm run build`, or a part of it: `path` is relative to the project root, under outDir. */
  | { kind: "build-output"; path: string }
  /**
   * The node_modules a stage's `npm ci --omit=dev` installs: `argv` run in a directory holding `manifests`
   * (the context files the stage copied before it, at `to` relative to its working directory).
   */
  | { kind: "production-dependencies"; argv: string[]; manifests: { from: string; to: string }[] };

export interface ImageCopy {
  source: ImageSource;
  /** Whether the source is a directory, whose contents then land in `dest`. */
  directory: boolean;
  /** The absolute path in the image: the file, or the directory receiving the source's contents. */
  dest: string;
}

/** One image layer per COPY instruction, as docker build makes. */
export interface ImageLayer {
  line: number;
  /** The instruction, for the layer's history. */
  createdBy: string;
  copies: ImageCopy[];
}

export interface ImagePlan {
  config: ImageConfig;
  /** The absolute path of node in the image. */
  node: string;
  /** The Node major of the FROM image. */
  nodeMajor?: number;
  /** The numeric uid and gid of USER (0 when unset). */
  uid: number;
  gid: number;
  /** Directories WORKDIR creates. */
  directories: string[];
  layers: ImageLayer[];
  problems: string[];
}

export interface PlanOptions {
  /** The tsconfig `npm run build` compiles (`tsc -p <buildConfig>`). */
  buildConfig: string;
  /** Its outDir, relative to the project root (dist). */
  outDir: string;
  /** Whether a path relative to the project root is a directory (decides where a COPY puts it). */
  isDirectory: (path: string) => boolean;
}

const WHO = "hack/build-image.ts";

/**
 * The image config the builder writes, from the final stage alone: a pure function of the parsed
 * Dockerfile. Also the problems that keep the builder from reproducing that stage.
 */
export function imageConfig(
  df: Dockerfile,
): Pick<ImagePlan, "config" | "node" | "nodeMajor" | "uid" | "gid" | "directories" | "problems"> {
  const problems: string[] = [];
  const problem = (msg: string, line?: number): void => {
    problems.push(`${line ? `Dockerfile:${line}: ` : ""}${msg}`);
  };
  const final = df.stages.at(-1);
  if (!final)
    return { config: { Env: [] }, node: NODE_ON_PATH, uid: 0, gid: 0, directories: [], problems: ["no stage"] };

  const nodeMajor = nodeMajorOf(final.base);
  const distroless = /distroless/.test(final.base);
  if (stageByRef(df, final.base))
    problem(`FROM ${final.base}: ${WHO} builds the final stage on Node alone, not on another stage`, final.line);
  else if (nodeMajor === undefined)
    problem(`FROM ${final.base}: ${WHO} replaces only node:<major>-* and distroless nodejs bases`, final.line);

  for (const ins of final.instructions)
    if (!(SUPPORTED_INSTRUCTIONS as readonly string[]).includes(ins.keyword))
      problem(
        `${ins.keyword} in the final stage: ${WHO} cannot reproduce it (it supports ${SUPPORTED_INSTRUCTIONS.join(", ")}); ` +
          "keep it out of the final stage or teach hack/image/plan.ts",
        ins.line,
      );

  const last = (k: string) => final.instructions.filter((i) => i.keyword === k).at(-1);
  const config: ImageConfig = { Env: [] };
  const env = envOf(final, new Map([["PATH", BASE_PATH]]));
  config.Env = [...env].map(([k, v]) => `${k}=${v}`);

  const directories: string[] = [];
  for (const ins of final.instructions.filter((i) => i.keyword === "WORKDIR")) {
    if (ins.args.includes("$")) problem(`WORKDIR ${ins.args}: ${WHO} does not substitute variables here`, ins.line);
    directories.push(workdirOf(final, ins.line));
  }
  if (directories.length) config.WorkingDir = directories.at(-1)!;

  let uid = 0;
  let gid = 0;
  const user = last("USER");
  if (user) {
    const m = /^(\d+)(?::(\d+))?$/.exec(user.args.trim());
    if (!m) problem(`USER ${user.args}: ${WHO} needs a numeric uid[:gid] (it writes no other users)`, user.line);
    else {
      uid = Number(m[1]);
      gid = Number(m[2] ?? m[1]);
    }
    config.User = user.args.trim();
  }

  const execForm = (ins: Instruction | undefined): string[] | undefined => {
    if (!ins) return undefined;
    if (!ins.args.trim().startsWith("[")) {
      problem(`${ins.keyword} ${ins.args}: the shell form needs /bin/sh, which ${WHO} does not install`, ins.line);
      return undefined;
    }
    return words(ins.args);
  };
  const entrypoint = last("ENTRYPOINT");
  const cmd = last("CMD");
  config.Entrypoint = execForm(entrypoint) ?? (distroless ? [DISTROLESS_NODE] : undefined);
  // An ENTRYPOINT in the stage resets the base image's CMD; a CMD of the stage stays.
  const cmdWords = execForm(cmd);
  if (cmdWords) config.Cmd = cmdWords;
  if (!config.Entrypoint && !distroless && nodeMajor !== undefined)
    problem(
      `the final stage sets no ENTRYPOINT: the node image's docker-entrypoint.sh is not in the image ${WHO} builds`,
      final.line,
    );

  let node = distroless ? DISTROLESS_NODE : NODE_ON_PATH;
  const argv0 = config.Entrypoint?.[0] ?? config.Cmd?.[0];
  if (argv0 !== undefined) {
    if (posix.basename(argv0) !== "node")
      problem(`the image runs ${JSON.stringify(argv0)}: ${WHO} provides node only`, (entrypoint ?? cmd)?.line);
    else if (argv0.startsWith("/")) node = argv0;
    else if (argv0.includes("/")) problem(`the image runs ${argv0}, a relative path`, (entrypoint ?? cmd)?.line);
    else if (!(env.get("PATH") ?? "").split(":").includes(posix.dirname(node)))
      problem(`the image runs node from PATH, but PATH (${env.get("PATH")}) lacks ${posix.dirname(node)}`);
  }

  const labels = final.instructions.filter((i) => i.keyword === "LABEL");
  if (labels.length) {
    config.Labels = {};
    for (const ins of labels) for (const [k, v] of keyValues(ins.args, env, ins.line)) config.Labels[k] = v;
  }
  const exposes = final.instructions.filter((i) => i.keyword === "EXPOSE");
  if (exposes.length) {
    config.ExposedPorts = {};
    for (const ins of exposes)
      for (const p of words(ins.args)) config.ExposedPorts[p.includes("/") ? p : `${p}/tcp`] = {};
  }
  const stop = last("STOPSIGNAL");
  if (stop) config.StopSignal = stop.args.trim();
  return { config, node, ...(nodeMajor !== undefined ? { nodeMajor } : {}), uid, gid, directories, problems };
}

/** Where a context source of a COPY lands: the file, or the directory receiving a directory's contents. */
function landing(wd: string, c: { sources: string[]; dest: string }, src: string, directory: boolean): string {
  const dest = posix.resolve(wd, c.dest);
  if (directory) return dest;
  return c.dest.endsWith("/") || c.sources.length > 1 ? posix.join(dest, posix.basename(src)) : dest;
}

/** The context path a stage's `COPY <context> ...` put at `abs`, if any (the last COPY wins). */
function contextOrigin(stage: Stage, abs: string, opts: PlanOptions, uptoLine = Infinity): string | undefined {
  let origin: string | undefined;
  for (const c of copies(stage)) {
    if (c.ins.flags.from || c.ins.line > uptoLine) continue;
    const wd = workdirOf(stage, c.ins.line);
    for (const raw of c.sources) {
      const src = posix.normalize(raw).replace(/\/+$/, "") || ".";
      const directory = src === "." || opts.isDirectory(src);
      const at = landing(wd, c, src, directory);
      if (abs === at) origin = src;
      else if (directory && abs.startsWith(at === "/" ? "/" : at + "/"))
        origin = posix.normalize(posix.join(src, posix.relative(at, abs)));
    }
  }
  return origin;
}

/** What `COPY --from=<stage> <abs>` copies, as something the builder can produce, or a problem. */
function resolveInStage(
  df: Dockerfile,
  stage: Stage,
  abs: string,
  opts: PlanOptions,
  problem: (msg: string, line?: number) => void,
  line: number,
): ImageSource | undefined {
  const cmds = runCommands(stage);
  const what = `COPY --from=${stage.name ?? stage.index} ${abs}`;
  // The builder stage: its outDir is `make build`'s. Only installs and the build may run there.
  if (cmds.some((c) => runsBuild(c.argv, opts.buildConfig))) {
    const out = posix.join(workdirOf(stage), opts.outDir);
    if (abs === out || abs.startsWith(out + "/")) {
      for (const c of cmds)
        if (!runsBuild(c.argv, opts.buildConfig) && !isNpm(c.argv, ["ci", "install", "i"]))
          problem(
            `RUN ${c.argv.join(" ")} in stage ${stage.name ?? stage.index}: ${WHO} takes ${opts.outDir}/ from \`make build\` and cannot follow it`,
            c.line,
          );
      return { kind: "build-output", path: posix.join(opts.outDir, posix.relative(out, abs)) };
    }
  }
  // A stage's `npm ci --omit=dev`: the builder runs the same command.
  const installs = cmds.filter((c) => isNpm(c.argv, ["ci", "install", "i"]));
  const install = installs.at(-1);
  if (install && omitsDev(install.argv)) {
    const wd = workdirOf(stage, install.line);
    if (abs === posix.join(wd, "node_modules")) {
      for (const c of cmds)
        if (c !== install && !(isNpm(c.argv, ["cache"]) && c.argv[2] === "clean"))
          problem(`RUN ${c.argv.join(" ")}: ${WHO} runs only the stage's npm ci and cannot follow it`, c.line);
      if (install.argv[1] !== "ci" || install.argv.slice(2).some((a) => !a.startsWith("-")))
        problem(`${install.argv.join(" ")}: ${WHO} reproduces \`npm ci --omit=dev [flags]\` only`, install.line);
      const manifests: { from: string; to: string }[] = [];
      for (const name of ["package.json", "package-lock.json", ".npmrc"]) {
        const from = contextOrigin(stage, posix.join(wd, name), opts, install.line);
        if (from) manifests.push({ from, to: name });
      }
      if (!manifests.some((m) => m.to === "package-lock.json"))
        problem(`stage ${stage.name ?? stage.index} runs npm ci without package-lock.json`, install.line);
      return { kind: "production-dependencies", argv: install.argv, manifests };
    }
  }
  const origin = contextOrigin(stage, abs, opts);
  if (origin) return { kind: "context", path: origin };
  const base = stageByRef(df, stage.base);
  if (base && base.index < stage.index) return resolveInStage(df, base, abs, opts, problem, line);
  problem(
    `${what}: ${WHO} cannot tell what that is (it copies context files, the build output and npm ci --omit=dev's node_modules)`,
    line,
  );
  return undefined;
}

/** The whole plan: the config and, layer by layer, what each COPY of the final stage copies and where. */
export function planImage(df: Dockerfile, opts: PlanOptions): ImagePlan {
  const base = imageConfig(df);
  const problems = [...base.problems];
  const problem = (msg: string, line?: number): void => {
    problems.push(`${line ? `Dockerfile:${line}: ` : ""}${msg}`);
  };
  const final = df.stages.at(-1);
  const layers: ImageLayer[] = [];
  for (const c of final ? copies(final) : []) {
    const { ins } = c;
    const flags = Object.keys(ins.flags).filter((f) => !HARMLESS_COPY_FLAGS.has(f));
    if (ins.keyword !== "COPY") continue; // reported by imageConfig
    if (flags.length) problem(`COPY --${flags.join(", --")}: ${WHO} does not support it`, ins.line);
    const wd = workdirOf(final!, ins.line);
    const layer: ImageLayer = {
      line: ins.line,
      createdBy: `COPY ${Object.entries(ins.flags)
        .map(([k, v]) => `--${k}=${v} `)
        .join("")}${ins.args}`,
      copies: [],
    };
    const from = ins.flags.from;
    const stage = from ? stageByRef(df, from) : undefined;
    if (from && (!stage || stage.index >= final!.index)) {
      problem(`COPY --from=${from}: ${WHO} copies from earlier stages only, not from images`, ins.line);
      continue;
    }
    for (const raw of c.sources) {
      if (/[*?[]/.test(raw)) {
        problem(`COPY ${raw}: ${WHO} does not expand wildcards`, ins.line);
        continue;
      }
      const src = posix.normalize(raw).replace(/\/+$/, "") || ".";
      const source: ImageSource | undefined = stage
        ? resolveInStage(df, stage, posix.resolve(workdirOf(stage), src), opts, problem, ins.line)
        : { kind: "context", path: src };
      if (!source) continue;
      const directory =
        source.kind === "production-dependencies" ||
        (source.kind === "build-output" && source.path === opts.outDir) ||
        (source.kind === "context" && source.path === ".") ||
        ("path" in source && opts.isDirectory(source.path));
      layer.copies.push({ source, directory, dest: landing(wd, c, src, directory) });
    }
    layers.push(layer);
  }
  return { ...base, problems, layers };
}
