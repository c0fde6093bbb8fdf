// `make image-build` / `make image-load`: the manager image without a container engine. The image the
// Dockerfile describes, assembled with umoci as an OCI archive from what the Dockerfile's stages would
// produce here:
//
//   - the final stage's base becomes Node from node_modules (the `node` devDependency: the project's Node,
//     which must be the FROM image's major) with the shared libraries and dynamic loader it links against
//     (ldd), /etc/passwd and /etc/group naming the USER, and a /tmp;
//   - each COPY of the final stage is one layer, with what hack/image/plan.ts traces it to: the output of
//     `make build` (only files whose source still exists: no dist/install.yaml, no stale output), the
//     node_modules of the deps stage's own `npm ci --omit=dev ...` (run in a cache directory, offline when
//     npm's cache has the packages), or build-context files (filtered by .dockerignore);
//   - the config (Entrypoint, Cmd, User, WorkingDir, Env, Labels, ExposedPorts, StopSignal) as the final
//     stage declares it, parsed from the Dockerfile, never restated here. `make lint-dockerfile` fails on
//     anything in the Dockerfile this cannot follow.
//
// Layers are tarred deterministically (sorted, owner 0, mtime $SOURCE_DATE_EPOCH or the last commit's), so
// the same inputs give the same image digest; an archive whose inputs did not change is not rebuilt.
//
//   node hack/build-image.ts build [--img localhost/cronjob-operator:dev] [--out bin/cronjob-operator-image.oci.tar] [--force]
//   node hack/build-image.ts load  [--img ...] [--archive ...] [--address <containerd socket>] [--snapshotter S]
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, posix, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import { isIgnored, parseDockerfile, parseDockerignore, type IgnorePattern } from "./image/dockerfile.ts";
import { DEFAULT_IMG, defaultContainerdAddress, loadImage, splitImageName } from "./image/load.ts";
import { type ImageConfig, type ImagePlan, type ImageSource, planImage } from "./image/plan.ts";
import { buildLayout } from "./lint-dockerfile.ts";

export { DEFAULT_IMG, defaultContainerdAddress, loadImage, type LoadOptions } from "./image/load.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** Where image-build writes the archive unless told otherwise (bin/ is git-ignored). */
export const DEFAULT_ARCHIVE = "bin/cronjob-operator-image.oci.tar";

export interface BuildOptions {
  root?: string;
  /** The image name (DEFAULT_IMG). */
  img?: string;
  /** The OCI archive to write (DEFAULT_ARCHIVE, relative to root). */
  out?: string;
  /** Rebuild even when the inputs did not change. */
  force?: boolean;
  /** Where the production node_modules are kept between builds (bin/.image-cache). */
  cacheDir?: string;
  log?: (line: string) => void;
}

export interface BuildResult {
  archive: string;
  img: string;
  /** The manifest digest (the image ID containerd shows). */
  digest: string;
  /** Bytes of the archive (compressed layers + metadata). */
  size: number;
  /** Bytes of the unpacked layers. */
  unpackedSize: number;
  /** True when the archive was up to date and not rebuilt. */
  cached: boolean;
  config: ImageConfig;
  plan: ImagePlan;
  nodeVersion: string;
}

/** What `<archive>.inputs` records: the inputs an archive was built from, and the result. */
interface Stamp {
  inputs: string;
  digest: string;
  size: number;
  unpackedSize: number;
}

type Run = (cmd: string, args: string[], opts?: { cwd?: string; env?: NodeJS.ProcessEnv }) => Promise<string>;

const APT: Record<string, string> = { umoci: "umoci", tar: "tar", ldd: "libc-bin", npm: "npm" };

const run: Run = async (cmd, args, opts = {}) => {
  try {
    const r = await promisify(execFile)(cmd, args, { ...opts, maxBuffer: 1 << 26, encoding: "utf8" });
    return r.stdout;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string; stdout?: string };
    if (e.code === "ENOENT")
      throw new Error(`${cmd} not found${APT[cmd] ? `: install it (Debian: apt-get install ${APT[cmd]})` : ""}`, {
        cause: err,
      });
    throw new Error(`${cmd} ${args.join(" ")} failed: ${(e.stderr || e.stdout || e.message).trim()}`, { cause: err });
  }
};

// --- files ---

const mib = (n: number): string => `${(n / 1048576).toFixed(1)} MiB`;
/** A path for messages: relative to the project when inside it. */
const shown = (root: string, p: string): string => (relative(root, p).startsWith("..") ? p : relative(root, p));

/** Files of a directory tree, relative and /-separated, sorted; directories and symlinks included. */
function walk(dir: string, keep: (rel: string) => boolean = () => true, prefix = ""): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const rel = prefix ? `${prefix}/${name}` : name;
    if (!keep(rel)) continue;
    out.push(rel);
    const st = lstatSync(join(dir, name));
    if (st.isDirectory()) out.push(...walk(join(dir, name), keep, rel));
  }
  return out;
}

/**
 * Copies `src` (a file, symlink or directory, filtered by `keep`) to `dest`, with normalised modes: 0755 for
 * directories and executables, 0644 otherwise, whatever the umask of whoever made the source.
 */
function copyTree(src: string, dest: string, keep: (rel: string) => boolean = () => true): void {
  const st = lstatSync(src);
  mkdirSync(dirname(dest), { recursive: true });
  if (st.isSymbolicLink()) {
    symlinkSync(readlinkSync(src), dest);
  } else if (st.isDirectory()) {
    mkdirSync(dest, { recursive: true });
    chmodSync(dest, 0o755);
    for (const rel of walk(src, keep)) {
      const s = join(src, rel);
      const d = join(dest, rel);
      const est = lstatSync(s);
      if (est.isSymbolicLink()) symlinkSync(readlinkSync(s), d);
      else if (est.isDirectory()) {
        mkdirSync(d);
        chmodSync(d, 0o755);
      } else if (est.isFile()) copyFile(s, d, est.mode);
      else throw new Error(`${s}: neither a file, a directory nor a symlink`);
    }
  } else copyFile(src, dest, st.mode);
}

function copyFile(src: string, dest: string, mode: number): void {
  mkdirSync(dirname(dest), { recursive: true });
  copyFileSync(src, dest);
  chmodSync(dest, mode & 0o111 ? 0o755 : 0o644);
}

/** sha256 of a tree's paths, kinds, modes and contents (or a file's). */
function hashTree(path: string, keep?: (rel: string) => boolean): string {
  const h = createHash("sha256");
  const st = lstatSync(path);
  const one = (p: string, rel: string): void => {
    const s = lstatSync(p);
    h.update(`${rel}\0${s.isDirectory() ? "d" : s.isSymbolicLink() ? "l" : "f"}${s.mode & 0o111 ? "x" : "-"}\0`);
    if (s.isSymbolicLink()) h.update(readlinkSync(p));
    else if (s.isFile()) h.update(readFileSync(p));
    h.update("\0");
  };
  if (st.isDirectory()) for (const rel of walk(path, keep)) one(join(path, rel), rel);
  else one(path, "");
  return h.digest("hex");
}

// --- what goes in ---

/** The shared libraries and dynamic loader an ELF binary needs, from ldd: the paths it resolves them to. */
export async function sharedLibraries(binary: string): Promise<string[]> {
  const out = await run("ldd", [binary]).catch((err: Error) => {
    if (/not a dynamic executable/.test(err.message)) return "";
    throw err;
  });
  const libs: string[] = [];
  for (const line of out.split("\n")) {
    if (/=>\s*not found/.test(line)) throw new Error(`${binary} needs a library this machine lacks: ${line.trim()}`);
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m) libs.push(m[1]!);
  }
  return libs;
}

/** Whether a file of the build output still has its source (no stale output, no dist/install.yaml). */
function hasSource(root: string, rootDir: string, outRel: string): boolean {
  const p = outRel.replace(/\.map$/, "");
  const base = join(root, rootDir, p);
  const candidates = [base];
  if (/\.js$/.test(p)) candidates.push(base.replace(/\.js$/, ".ts"), base.replace(/\.js$/, ".tsx"));
  if (/\.mjs$/.test(p)) candidates.push(base.replace(/\.mjs$/, ".mts"));
  if (/\.cjs$/.test(p)) candidates.push(base.replace(/\.cjs$/, ".cts"));
  return candidates.some((c) => existsSync(c) && statSync(c).isFile());
}

/** The SOURCE_DATE_EPOCH of the image: the variable, else the last commit's time, else 0. */
async function sourceDateEpoch(root: string): Promise<number> {
  const env = process.env.SOURCE_DATE_EPOCH;
  if (env && /^\d+$/.test(env)) return Number(env);
  try {
    return Number((await run("git", ["-C", root, "log", "-1", "--format=%ct"])).trim()) || 0;
  } catch {
    return 0;
  }
}

/** The deterministic tar options of every layer and of the archive. */
const tarFlags = (epoch: number): string[] => [
  "--sort=name",
  "--format=posix",
  "--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime",
  `--mtime=@${epoch}`,
  "--numeric-owner",
];

/** The production node_modules: the deps stage's `npm ci --omit=dev ...`, cached by its inputs. */
async function productionDependencies(
  root: string,
  cacheDir: string,
  source: Extract<ImageSource, { kind: "production-dependencies" }>,
  log: (l: string) => void,
): Promise<string> {
  const h = createHash("sha256").update(JSON.stringify(source.argv));
  for (const m of source.manifests) h.update(`\0${m.to}\0`).update(readFileSync(join(root, m.from)));
  const key = h.digest("hex").slice(0, 16);
  const dir = join(cacheDir, `production-dependencies-${key}`);
  if (existsSync(join(dir, "node_modules"))) return join(dir, "node_modules");
  mkdirSync(cacheDir, { recursive: true });
  const tmp = join(cacheDir, `tmp-${randomBytes(6).toString("hex")}`);
  try {
    mkdirSync(tmp);
    for (const m of source.manifests) copyFileSync(join(root, m.from), join(tmp, m.to));
    log(`  ${source.argv.join(" ")} --prefer-offline (in ${shown(root, cacheDir)})`);
    await run(source.argv[0]!, [...source.argv.slice(1), "--prefer-offline"], {
      cwd: tmp,
      env: {
        ...process.env,
        PATH: `${join(root, "node_modules", ".bin")}:${process.env.PATH ?? ""}`,
        npm_config_update_notifier: "false",
      },
    });
    try {
      renameSync(tmp, dir);
    } catch (err) {
      if (!existsSync(join(dir, "node_modules"))) throw err; // else a concurrent build got there first
    }
    for (const old of readdirSync(cacheDir))
      if (old.startsWith("production-dependencies-") && join(cacheDir, old) !== dir)
        rmSync(join(cacheDir, old), { recursive: true, force: true });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return join(dir, "node_modules");
}

/** The files of one copy source and how to filter them. */
function sourceFiles(
  root: string,
  layout: { outDir: string; rootDir: string },
  ignore: IgnorePattern[],
  source: Exclude<ImageSource, { kind: "production-dependencies" }>,
): { path: string; keep: (rel: string) => boolean } {
  const path = join(root, source.path);
  if (source.kind === "context") {
    if (source.path !== "." && isIgnored(source.path, ignore))
      throw new Error(`COPY ${source.path}: .dockerignore excludes it from the build context`);
    if (!existsSync(path)) throw new Error(`COPY ${source.path}: not in the build context`);
    return { path, keep: (rel) => !isIgnored(source.path === "." ? rel : posix.join(source.path, rel), ignore) };
  }
  if (!existsSync(path)) throw new Error(`${source.path} does not exist: run \`make build\` first`);
  return {
    path,
    keep: (rel) =>
      lstatSync(join(path, rel)).isDirectory() ||
      hasSource(root, layout.rootDir, posix.relative(layout.outDir, posix.join(source.path, rel))),
  };
}

// --- the build ---

export async function buildImage(opts: BuildOptions = {}): Promise<BuildResult> {
  const root = opts.root ?? ROOT;
  const img = opts.img ?? DEFAULT_IMG;
  const { tag } = splitImageName(img);
  const archive = resolve(root, opts.out ?? DEFAULT_ARCHIVE);
  const cacheDir = opts.cacheDir ?? join(root, "bin", ".image-cache");
  const log = opts.log ?? ((l: string) => console.log(l));
  const started = Date.now();

  await run("umoci", ["--version"]);
  const df = parseDockerfile(readFileSync(join(root, "Dockerfile"), "utf8"));
  const layout = buildLayout(root);
  const plan = planImage(df, {
    buildConfig: layout.buildConfig,
    outDir: layout.outDir,
    isDirectory: (p) => existsSync(join(root, p)) && statSync(join(root, p)).isDirectory(),
  });
  if (plan.problems.length)
    throw new Error(
      `the Dockerfile has what this builder cannot reproduce (make lint-dockerfile):\n  ${plan.problems.join("\n  ")}`,
    );
  const ignore = existsSync(join(root, ".dockerignore"))
    ? parseDockerignore(readFileSync(join(root, ".dockerignore"), "utf8"))
    : [];

  // Node: the project's, the FROM image's major.
  const nodeLink = join(root, "node_modules", ".bin", "node");
  if (!existsSync(nodeLink)) throw new Error(`${nodeLink} is missing: run \`make deps\``);
  const nodeBinary = realpathSync(nodeLink);
  const nodeVersion = (await run(nodeBinary, ["-p", "process.versions.node"])).trim();
  if (plan.nodeMajor !== undefined && Number(nodeVersion.split(".")[0]) !== plan.nodeMajor)
    throw new Error(`node_modules has Node ${nodeVersion}, but the Dockerfile's final stage is Node ${plan.nodeMajor}`);
  const libs = await sharedLibraries(nodeBinary);
  const epoch = await sourceDateEpoch(root);
  const created = new Date(epoch * 1000).toISOString().replace(/\.000Z$/, "Z");

  // The inputs; an archive built from the same ones is kept.
  const inputs = createHash("sha256");
  inputs.update(JSON.stringify({ plan, img, epoch, nodeVersion, libs, umoci: await run("umoci", ["--version"]) }));
  for (const f of readdirSync(join(root, "hack", "image")).sort())
    inputs.update(readFileSync(join(root, "hack", "image", f)));
  inputs.update(readFileSync(fileURLToPath(import.meta.url)));
  inputs.update(hashTree(nodeBinary));
  for (const l of libs) inputs.update(hashTree(realpathSync(l)));
  for (const layer of plan.layers)
    for (const c of layer.copies) {
      if (c.source.kind === "production-dependencies") {
        inputs.update(JSON.stringify(c.source.argv));
        for (const m of c.source.manifests) inputs.update(readFileSync(join(root, m.from)));
      } else {
        const { path, keep } = sourceFiles(root, layout, ignore, c.source);
        inputs.update(`${c.dest}\0${hashTree(path, keep)}`);
      }
    }
  const inputDigest = inputs.digest("hex");
  const stamp = `${archive}.inputs`;

  // The entrypoint script must be in the image: `make build` has run.
  const argv = [...(plan.config.Entrypoint ?? []), ...(plan.config.Cmd ?? [])];
  const script = argv.slice(1).find((a) => !a.startsWith("-"));
  if (script) {
    const abs = posix.resolve(plan.config.WorkingDir ?? "/", script);
    const found = plan.layers.some((l) =>
      l.copies.some((c) => {
        if (c.source.kind === "production-dependencies") return false;
        const rel = c.directory ? posix.relative(c.dest, abs) : abs === c.dest ? "" : "..";
        return !rel.startsWith("..") && existsSync(join(root, c.source.path, rel));
      }),
    );
    if (!found) throw new Error(`the image runs ${abs}, which no COPY provides: run \`make build\` first`);
  }

  if (!opts.force && existsSync(archive) && existsSync(stamp)) {
    const last = JSON.parse(readFileSync(stamp, "utf8")) as Stamp;
    if (last.inputs === inputDigest && last.size === statSync(archive).size) {
      log(`${shown(root, archive)} is up to date (${img} ${last.digest})`);
      const { digest, size, unpackedSize } = last;
      return { archive, img, digest, size, unpackedSize, cached: true, config: plan.config, plan, nodeVersion };
    }
  }

  log(`building ${img} (Node ${nodeVersion}) -> ${shown(root, archive)}`);
  const work = mkdtempSync(join(tmpdir(), "cronjob-operator-image-"));
  try {
    const tars: { file: string; createdBy: string }[] = [];
    let unpackedSize = 0;
    const tarLayer = async (dir: string, name: string, createdBy: string): Promise<string> => {
      const file = join(work, `${name}.tar`);
      const entries = readdirSync(dir).sort();
      await run("tar", ["-C", dir, ...tarFlags(epoch), "--owner=0", "--group=0", "-cf", file, ...entries]);
      tars.push({ file, createdBy });
      return file;
    };

    // The base: node, its libraries and loader, the users, /tmp, WORKDIRs.
    const base = join(work, "base");
    const users = [`root:x:0:0:root:/root:/sbin/nologin`];
    const groups = [`root:x:0:`];
    if (plan.uid !== 0) {
      users.push(`nonroot:x:${plan.uid}:${plan.gid}:nonroot:/home/nonroot:/sbin/nologin`);
      if (plan.gid !== 0) groups.push(`nonroot:x:${plan.gid}:`);
    }
    mkdirSync(join(base, "etc"), { recursive: true });
    writeFileSync(join(base, "etc", "passwd"), users.join("\n") + "\n");
    writeFileSync(join(base, "etc", "group"), groups.join("\n") + "\n");
    for (const f of ["passwd", "group"]) chmodSync(join(base, "etc", f), 0o644);
    mkdirSync(join(base, "tmp"));
    chmodSync(join(base, "tmp"), 0o1777);
    mkdirSync(join(base, "home"));
    for (const d of plan.directories) mkdirSync(join(base, d), { recursive: true });
    copyFile(nodeBinary, join(base, plan.node), 0o755);
    for (const l of libs) copyFile(realpathSync(l), join(base, l), statSync(l).mode);
    for (const d of walk(base))
      if (lstatSync(join(base, d)).isDirectory() && d !== "tmp") chmodSync(join(base, d), 0o755);
    const baseTar = await tarLayer(
      base,
      "base",
      `FROM ${df.stages.at(-1)!.base} (hack/build-image.ts: Node ${nodeVersion} from node_modules, ${libs.length} libraries, /etc/passwd, /tmp)`,
    );
    if (plan.uid !== 0) {
      // The user's home, owned by the user (distroless' /home/nonroot).
      mkdirSync(join(base, "home", "nonroot"), { mode: 0o700 });
      chmodSync(join(base, "home", "nonroot"), 0o700);
      await run("tar", [
        "-C",
        base,
        ...tarFlags(epoch),
        `--owner=${plan.uid}`,
        `--group=${plan.gid}`,
        "--no-recursion",
        "-rf",
        baseTar,
        "home/nonroot",
      ]);
    }
    unpackedSize += statSync(baseTar).size;

    // One layer per COPY.
    for (const [i, layer] of plan.layers.entries()) {
      const dir = join(work, `layer-${i + 1}`);
      mkdirSync(dir);
      for (const c of layer.copies) {
        const dest = join(dir, c.dest);
        if (c.source.kind === "production-dependencies") {
          copyTree(await productionDependencies(root, cacheDir, c.source, log), dest);
        } else {
          const { path, keep } = sourceFiles(root, layout, ignore, c.source);
          copyTree(path, dest, keep);
        }
      }
      // Parent directories a COPY creates are root's 0755, as in docker build.
      for (const d of walk(dir)) if (lstatSync(join(dir, d)).isDirectory()) chmodSync(join(dir, d), 0o755);
      const file = await tarLayer(dir, `layer-${i + 1}`, layer.createdBy);
      unpackedSize += statSync(file).size;
      rmSync(dir, { recursive: true, force: true });
    }
    rmSync(base, { recursive: true, force: true });

    // The OCI layout: umoci adds the layers (gzip) and writes the config.
    const oci = join(work, "oci");
    const ref = `${oci}:${tag}`;
    await run("umoci", ["init", "--layout", oci]);
    await run("umoci", ["new", "--image", ref]);
    for (const t of tars)
      await run("umoci", [
        "raw",
        "add-layer",
        "--image",
        ref,
        "--history.created",
        created,
        "--history.created_by",
        t.createdBy,
        t.file,
      ]);
    const cfg = plan.config;
    const arch = { x64: "amd64", arm64: "arm64", arm: "arm", ppc64: "ppc64le", s390x: "s390x" }[process.arch as string];
    if (!arch) throw new Error(`no OCI architecture for ${process.arch}`);
    await run("umoci", [
      "config",
      "--image",
      ref,
      "--no-history",
      "--created",
      created,
      "--os",
      "linux",
      "--architecture",
      arch,
      ...(cfg.User !== undefined ? ["--config.user", cfg.User] : []),
      ...(cfg.WorkingDir !== undefined ? ["--config.workingdir", cfg.WorkingDir] : []),
      ...(cfg.Entrypoint ?? []).flatMap((a) => ["--config.entrypoint", a]),
      ...(cfg.Cmd ?? []).flatMap((a) => ["--config.cmd", a]),
      ...cfg.Env.flatMap((e) => ["--config.env", e]),
      ...Object.entries(cfg.Labels ?? {}).flatMap(([k, v]) => ["--config.label", `${k}=${v}`]),
      ...Object.keys(cfg.ExposedPorts ?? {}).flatMap((p) => ["--config.exposedports", p]),
      ...(cfg.StopSignal !== undefined ? ["--config.stopsignal", cfg.StopSignal] : []),
    ]);
    await run("umoci", ["gc", "--layout", oci]);

    // The index names the manifest by its tag only (org.opencontainers.image.ref.name), as OCI archives
    // do: `ctr images import --base-name <repository>` makes it <repository>:<tag>, and `--index-name`
    // (envtest/node-cluster.ts) names the archive anything. No io.containerd.image.name: ctr would
    // create that name too, whatever --base-name/--index-name say. Then a self-check of the config.
    const index = JSON.parse(readFileSync(join(oci, "index.json"), "utf8")) as {
      manifests: { digest: string; annotations?: Record<string, string> }[];
    };
    if (index.manifests.length !== 1) throw new Error(`umoci wrote ${index.manifests.length} manifests, expected 1`);
    const desc = index.manifests[0]!;
    if (desc.annotations?.["org.opencontainers.image.ref.name"] !== tag)
      throw new Error(`umoci did not tag the manifest ${tag}: ${JSON.stringify(desc.annotations)}`);
    const written = readImageConfig(oci);
    const want = { ...cfg };
    for (const k of Object.keys(want) as (keyof ImageConfig)[]) {
      if (JSON.stringify(written[k]) !== JSON.stringify(want[k]))
        throw new Error(`umoci wrote ${k} ${JSON.stringify(written[k])}, expected ${JSON.stringify(want[k])}`);
    }

    // The archive: a tar of the layout, written next to its destination and renamed into place.
    mkdirSync(dirname(archive), { recursive: true });
    const tmpArchive = `${archive}.${randomBytes(4).toString("hex")}.tmp`;
    try {
      await run("tar", [
        "-C",
        oci,
        ...tarFlags(epoch),
        "--owner=0",
        "--group=0",
        "--mode=a+r,u+w",
        "-cf",
        tmpArchive,
        "oci-layout",
        "index.json",
        "blobs",
      ]);
      renameSync(tmpArchive, archive);
    } finally {
      rmSync(tmpArchive, { force: true });
    }
    const size = statSync(archive).size;
    const done: Stamp = { inputs: inputDigest, digest: desc.digest, size, unpackedSize };
    writeFileSync(stamp, JSON.stringify(done) + "\n");
    log(
      `${shown(root, archive)}: ${img} ${desc.digest}, ${mib(size)} (${mib(unpackedSize)} unpacked), ` +
        `${plan.layers.length + 1} layers, ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    return { archive, img, digest: desc.digest, size, unpackedSize, cached: false, config: cfg, plan, nodeVersion };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The image config of the one image in an OCI layout directory. */
export function readImageConfig(layoutDir: string): ImageConfig & Record<string, unknown> {
  const blob = (d: string): string => readFileSync(join(layoutDir, "blobs", ...d.split(":")), "utf8");
  const index = JSON.parse(readFileSync(join(layoutDir, "index.json"), "utf8")) as { manifests: { digest: string }[] };
  const manifest = JSON.parse(blob(index.manifests[0]!.digest)) as { config: { digest: string } };
  const image = JSON.parse(blob(manifest.config.digest)) as { config?: ImageConfig & Record<string, unknown> };
  return image.config ?? { Env: [] };
}

// --- command line ---

async function main(): Promise<number> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      img: { type: "string" },
      out: { type: "string" },
      archive: { type: "string" },
      address: { type: "string" },
      snapshotter: { type: "string" },
      force: { type: "boolean" },
    },
  });
  const cmd = positionals[0] ?? "build";
  const img = values.img || DEFAULT_IMG;
  if (cmd === "build") {
    await buildImage({ img, ...(values.out ? { out: values.out } : {}), force: !!values.force });
    return 0;
  }
  if (cmd === "load") {
    const archive = resolve(values.archive || values.out || join(ROOT, DEFAULT_ARCHIVE));
    const address = values.address || defaultContainerdAddress();
    const name = await loadImage({
      archive,
      img,
      address,
      ...(values.snapshotter ? { snapshotter: values.snapshotter } : {}),
    });
    console.log(`loaded ${name} into the containerd at ${address} (namespace k8s.io)`);
    return 0;
  }
  console.error(`usage: node hack/build-image.ts build|load [--img NAME] [--out|--archive FILE] [--address SOCKET]`);
  return 2;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      console.error(`build-image: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 1;
    },
  );
}
