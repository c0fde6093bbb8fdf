// `make image-build` and `make image-load` for real: the manager image built without a container engine
// (hack/build-image.ts, umoci), unpacked and run. Needs root (chroot, and umoci unpack keeping owners) and
// the Debian packages umoci (build) and containerd (load: a private containerd is started in a temp dir,
// nothing of the machine's is touched). Building takes about half a minute.
import assert from "node:assert/strict";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, posix, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { buildImage, readImageConfig } from "../../hack/build-image.ts";
import { parseDockerfile } from "../../hack/image/dockerfile.ts";
import { imageConfig } from "../../hack/image/plan.ts";
import { envValue, readManagerDeployment } from "../../envtest/manager-deployment.ts";

const ROOT = resolve(import.meta.dirname, "..", "..");
const IMG = "localhost/cronjob-operator:image-test";
const TAG = "image-test";

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function exec(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; timeout?: number } = {}): Promise<Result> {
  return new Promise((resolveP) => {
    execFile(
      cmd,
      args,
      { cwd: ROOT, env: opts.env ?? process.env, maxBuffer: 64 << 20, timeout: opts.timeout ?? 300_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : (err.code ?? 1)) : 0;
        resolveP({ code: typeof code === "number" ? code : -1, stdout, stderr: stderr || (err?.message ?? "") });
      },
    );
  });
}

const make = (target: string, vars: string[]): Promise<Result> =>
  exec("make", ["--no-print-directory", target, ...vars]);

/** Fails (never skips) with what to install when a tool is missing. */
async function requireTool(cmd: string, args: string[], pkg: string): Promise<void> {
  const r = await exec(cmd, args, { timeout: 30_000 });
  if (r.code !== 0)
    throw new Error(
      `${cmd} is needed by this test but \`${cmd} ${args.join(" ")}\` failed (${r.stderr.trim()}): apt-get install ${pkg}`,
    );
}

/** Removes a tree of empty directories (anything else, and what holds it, stays). */
function removeEmptyDirs(dir: string): void {
  try {
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) removeEmptyDirs(join(dir, e.name));
    rmdirSync(dir);
  } catch {
    // not empty, or gone
  }
}

/** The image's environment, as the container runtime would set it (nothing from this process). */
const envOfImage = (env: string[]): NodeJS.ProcessEnv =>
  Object.fromEntries(env.map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]));

describe("make image-build / image-load: the manager image without a container engine", () => {
  let work: string;
  let archive: string;
  let layout: string;
  let rootfs: string;
  let built: Result;
  const dockerfile = imageConfig(parseDockerfile(readFileSync(join(ROOT, "Dockerfile"), "utf8")));

  before(async () => {
    if (process.getuid?.() !== 0) throw new Error("this test needs root: it chroots into the unpacked image");
    await requireTool("umoci", ["--version"], "umoci");
    work = mkdtempSync(join(tmpdir(), "image-test-"));
    archive = join(work, "image.oci.tar");
    built = await make("image-build", [`IMG=${IMG}`, `IMAGE_ARCHIVE=${archive}`]);
    assert.equal(built.code, 0, `make image-build failed:\n${built.stdout}\n${built.stderr}`);
    layout = join(work, "layout");
    mkdirSync(layout);
    const x = await exec("tar", ["-xf", archive, "-C", layout]);
    assert.equal(x.code, 0, x.stderr);
    const u = await exec("umoci", ["unpack", "--image", `${layout}:${TAG}`, join(work, "bundle")]);
    assert.equal(u.code, 0, `umoci unpack: ${u.stderr}`);
    rootfs = join(work, "bundle", "rootfs");
  });
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("writes an OCI archive named IMG whose config is the Dockerfile's final stage", () => {
    const index = JSON.parse(readFileSync(join(layout, "index.json"), "utf8")) as {
      manifests: { annotations?: Record<string, string> }[];
    };
    assert.equal(index.manifests.length, 1);
    assert.equal(index.manifests[0]!.annotations?.["org.opencontainers.image.ref.name"], TAG);
    assert.equal(index.manifests[0]!.annotations?.["io.containerd.image.name"], undefined, "ctr would always add it");
    const config = readImageConfig(layout);
    assert.deepEqual(dockerfile.problems, []);
    assert.equal(config.User, dockerfile.config.User);
    assert.deepEqual(config.Entrypoint, dockerfile.config.Entrypoint);
    assert.equal(config.Cmd, dockerfile.config.Cmd);
    assert.equal(config.WorkingDir, dockerfile.config.WorkingDir);
    assert.deepEqual(config.Env, dockerfile.config.Env);
    // The values themselves: the Deployment's user and node options, the build output.
    assert.equal(config.User, "65532:65532");
    assert.deepEqual(config.Entrypoint, ["node", "dist/cmd/main.js"]);
    const manager = readManagerDeployment(ROOT)!.container;
    assert.ok(config.Env.includes(`NODE_OPTIONS=${envValue(manager, "NODE_OPTIONS")}`), String(config.Env));
    assert.ok(config.Env.includes("NODE_ENV=production"));
    const size = statSync(archive).size;
    assert.ok(size > 30 << 20 && size < 120 << 20, `archive of ${size} bytes`);
    console.log(`image: ${(size / 1048576).toFixed(1)} MiB; ${built.stdout.trim().split("\n").at(-1)}`);
  });

  it("holds the project's Node 24 with its libraries: it runs in the rootfs", async () => {
    const node = join(rootfs, "usr", "local", "bin", "node");
    assert.ok(existsSync(node), "no /usr/local/bin/node");
    const r = await exec("chroot", [rootfs, "/usr/local/bin/node", "-e", "console.log(process.versions.node)"], {
      env: envOfImage(readImageConfig(layout).Env),
    });
    assert.equal(r.code, 0, r.stderr);
    const here = (await exec(join(ROOT, "node_modules", ".bin", "node"), ["-p", "process.versions.node"])).stdout;
    assert.match(r.stdout.trim(), /^24\./);
    assert.equal(r.stdout.trim(), here.trim(), "the Node of node_modules");
  });

  it("runs the manager's entrypoint as 65532:65532 (--help), with the image's environment", async () => {
    const config = readImageConfig(layout);
    assert.ok(existsSync(join(rootfs, "workspace", "dist", "cmd", "main.js")));
    // chroot starts in /: the script is resolved against WorkingDir; node is found on the image's PATH.
    const [cmd, script, ...rest] = config.Entrypoint!;
    const env = envOfImage(config.Env);
    const help = await exec(
      "chroot",
      ["--userspec=65532:65532", rootfs, cmd!, posix.resolve(config.WorkingDir!, script!), ...rest, "--help"],
      { env },
    );
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /Usage: manager/);
    assert.match(help.stdout, /--leader-elect/);
    const who = await exec(
      "chroot",
      [
        "--userspec=65532:65532",
        rootfs,
        cmd!,
        "-e",
        "const os=require('os');console.log(process.getuid(),os.userInfo().username,process.env.NODE_OPTIONS,require('v8').getHeapStatistics().total_available_size>0);require('fs').writeFileSync('/tmp/w','1')",
      ],
      { env },
    );
    assert.equal(who.code, 0, who.stderr);
    assert.equal(
      who.stdout.trim(),
      `65532 nonroot ${envValue(readManagerDeployment(ROOT)!.container, "NODE_OPTIONS")} true`,
    );
  });

  it("has production node_modules only, package.json and only the build output of dist/", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const modules = join(rootfs, "workspace", "node_modules");
    for (const name of Object.keys(pkg.dependencies))
      assert.ok(existsSync(join(modules, name, "package.json")), `dependency ${name} is missing`);
    const devOnly = Object.keys(pkg.devDependencies).filter((n) => lock.packages[`node_modules/${n}`]?.dev);
    for (const name of ["typescript", "eslint", "prettier", "fast-check", "node"]) assert.ok(devOnly.includes(name));
    for (const name of devOnly) assert.ok(!existsSync(join(modules, name)), `devDependency ${name} is in the image`);
    const imagePkg = JSON.parse(readFileSync(join(rootfs, "workspace", "package.json"), "utf8")) as { type?: string };
    assert.equal(imagePkg.type, "module");
    assert.ok(!existsSync(join(rootfs, "workspace", "dist", "install.yaml")), "dist/install.yaml is no build output");
    assert.ok(!existsSync(join(rootfs, "workspace", "src")) && !existsSync(join(rootfs, "workspace", "cmd")));
    assert.equal(statSync(join(rootfs, "tmp")).mode & 0o7777, 0o1777);
    assert.match(readFileSync(join(rootfs, "etc", "passwd"), "utf8"), /^nonroot:x:65532:65532:/m);
  });

  it("rebuilds nothing when nothing changed, and the same inputs give the same bytes", async () => {
    const again = await make("image-build", [`IMG=${IMG}`, `IMAGE_ARCHIVE=${archive}`]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /is up to date/);
    const other = join(work, "again.oci.tar");
    await buildImage({ img: IMG, out: other, force: true, log: () => {} });
    const sha = (f: string): string => createHash("sha256").update(readFileSync(f)).digest("hex");
    assert.equal(sha(other), sha(archive));
  });

  it("make image-load says plainly when no containerd listens", async () => {
    const sock = join(work, "stale.sock");
    writeFileSync(sock, ""); // not even a socket
    for (const address of [join(work, "none.sock"), sock]) {
      const r = await make("image-load", [`IMG=${IMG}`, `IMAGE_ARCHIVE=${archive}`, `CONTAINERD_ADDRESS=${address}`]);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, new RegExp(`no containerd at ${address.replace(/[.]/g, "\\.")}.*CONTAINERD_ADDRESS`));
    }
  });

  it("make image-load imports it into containerd (k8s.io), which runs it", async () => {
    await requireTool("containerd", ["--version"], "containerd");
    await requireTool("ctr", ["--version"], "containerd");
    const dir = join(work, "containerd");
    mkdirSync(dir);
    const sock = join(dir, "containerd.sock");
    writeFileSync(
      join(dir, "config.toml"),
      [
        "version = 2",
        `root = "${dir}/root"`,
        `state = "${dir}/state"`,
        'disabled_plugins = ["io.containerd.grpc.v1.cri"]',
        "[grpc]",
        `  address = "${sock}"`,
        '[plugins."io.containerd.internal.v1.opt"]',
        `  path = "${dir}/opt"`,
      ].join("\n") + "\n",
    );
    let log = "";
    const containerd: ChildProcess = spawn("containerd", ["--config", join(dir, "config.toml")], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    containerd.stdout!.on("data", (d: Buffer) => (log += d.toString()));
    containerd.stderr!.on("data", (d: Buffer) => (log += d.toString()));
    const exited = new Promise<void>((r) => containerd.once("exit", () => r()));
    // containerd 1.6 puts shim sockets in /run/containerd/s whatever its state dir: leave no trace there.
    const shimDir = "/run/containerd";
    const hadShimDir = existsSync(shimDir);
    try {
      for (let i = 0; i < 100 && !existsSync(sock); i++) await new Promise((r) => setTimeout(r, 100));
      assert.ok(existsSync(sock), `containerd did not start:\n${log.slice(-3000)}`);
      const load = await make("image-load", [`IMG=${IMG}`, `IMAGE_ARCHIVE=${archive}`, `CONTAINERD_ADDRESS=${sock}`]);
      assert.equal(load.code, 0, `make image-load failed:\n${load.stdout}\n${load.stderr}`);
      assert.match(load.stdout, new RegExp(`loaded ${IMG} into the containerd at ${sock}`));
      const ctr = (args: string[]) => exec("ctr", ["--address", sock, "-n", "k8s.io", ...args], { timeout: 120_000 });
      const ls = await ctr(["images", "ls", "-q"]);
      assert.ok(ls.stdout.split("\n").includes(IMG), ls.stdout);
      // runc runs it: WorkingDir, PATH, user and environment as in the config.
      const fifo = join(dir, "fifo");
      const run = await ctr([
        "run",
        "--rm",
        "--fifo-dir",
        fifo,
        "--runc-root",
        join(dir, "runc"),
        IMG,
        "image-test",
        "node",
        "-e",
        "console.log(process.cwd(), process.getuid(), process.env.NODE_ENV); import('@kubernetes/client-node').then(() => console.log('ok'))",
      ]);
      assert.equal(run.code, 0, `ctr run: ${run.stderr}\n${log.slice(-2000)}`);
      assert.equal(run.stdout.trim(), "/workspace 65532 production\nok");
      const help = await ctr([
        "run",
        "--rm",
        "--fifo-dir",
        fifo,
        "--runc-root",
        join(dir, "runc"),
        IMG,
        "image-test-2",
        "node",
        "dist/cmd/main.js",
        "--help",
      ]);
      assert.equal(help.code, 0, help.stderr);
      assert.match(help.stdout, /Usage: manager/);
    } finally {
      containerd.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (containerd.exitCode === null && containerd.signalCode === null) containerd.kill("SIGKILL");
      const mounts = readFileSync("/proc/self/mountinfo", "utf8")
        .split("\n")
        .map((l) => l.split(" ")[4])
        .filter((m): m is string => !!m && m.startsWith(dir));
      for (const m of mounts.reverse()) await exec("umount", ["-l", m]);
      if (!hadShimDir) removeEmptyDirs(shimDir);
    }
  });
});
