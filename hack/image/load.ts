// `make image-load`: imports the OCI archive of `make image-build` into a containerd (the local cluster's)
// with `ctr images import`, in the namespace the kubelet's CRI uses (k8s.io). Pods then run it with
// `imagePullPolicy: IfNotPresent` (the default for a tag other than :latest) or `Never`.
import { execFile } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { createConnection } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

/** The name image-build gives the image unless IMG says otherwise. */
export const DEFAULT_IMG = "localhost/cronjob-operator:dev";
/** The namespace of the kubelet's (CRI's) images. */
export const CRI_NAMESPACE = "k8s.io";

/** The local cluster's containerd socket: $XDG_CACHE_HOME or ~/.cache, then cronjob-operator/cluster/. */
export function defaultContainerdAddress(env: NodeJS.ProcessEnv = process.env): string {
  return join(
    env.XDG_CACHE_HOME || join(homedir(), ".cache"),
    "cronjob-operator",
    "cluster",
    "containerd",
    "containerd.sock",
  );
}

/** `localhost/cronjob-operator:dev` → repository `localhost/cronjob-operator`, tag `dev` (default latest). */
export function splitImageName(img: string): { repository: string; tag: string } {
  if (img.includes("@")) throw new Error(`image name ${img}: a digest cannot name a built image; use a tag`);
  const slash = img.lastIndexOf("/");
  const colon = img.lastIndexOf(":");
  const [repository, tag] = colon > slash ? [img.slice(0, colon), img.slice(colon + 1)] : [img, "latest"];
  if (!/^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?::\d+)?(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/.test(repository))
    throw new Error(`image name ${img}: "${repository}" is not a valid repository (lowercase, e.g. ${DEFAULT_IMG})`);
  if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(tag))
    throw new Error(`image name ${img}: "${tag}" is not a valid tag`);
  return { repository, tag };
}

/** Resolves when something accepts connections on the unix socket, else rejects with a plain reason. */
function probeSocket(path: string, timeoutMs = 3000): Promise<void> {
  return new Promise((resolve, reject) => {
    const sock = createConnection({ path });
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    sock.once("connect", () => {
      clearTimeout(timer);
      sock.destroy();
      resolve();
    });
    sock.once("error", (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        new Error(
          err.code === "ECONNREFUSED" ? "connection refused (a stale socket: containerd is not running)" : err.message,
        ),
      );
    });
  });
}

export interface LoadOptions {
  /** The OCI archive image-build wrote. */
  archive: string;
  /** The image's name, as image-build wrote it (DEFAULT_IMG). */
  img?: string;
  /** containerd's socket, a path or unix://path (defaultContainerdAddress()). */
  address?: string;
  /** containerd namespace (k8s.io, the kubelet's). */
  namespace?: string;
  /** ctr's --snapshotter for unpacking (ctr's default, overlayfs, or $CONTAINERD_SNAPSHOTTER). */
  snapshotter?: string;
  /** The ctr binary (ctr on PATH). */
  ctr?: string;
}

/**
 * `ctr --address <socket> -n k8s.io images import --base-name <repository> [--snapshotter S] <archive>`,
 * after checking that a containerd listens there; then confirms containerd has the image under `img`.
 * Returns that name.
 */
export async function loadImage(opts: LoadOptions): Promise<string> {
  const img = opts.img ?? DEFAULT_IMG;
  const { repository } = splitImageName(img);
  const address = (opts.address || defaultContainerdAddress()).replace(/^unix:\/\//, "");
  const namespace = opts.namespace ?? CRI_NAMESPACE;
  const ctr = opts.ctr ?? "ctr";
  if (!existsSync(opts.archive)) throw new Error(`no image archive at ${opts.archive}: run \`make image-build\` first`);
  if (!existsSync(address) || !statSync(address).isSocket())
    throw new Error(
      `no containerd at ${address} (no socket there): start the local cluster, or set CONTAINERD_ADDRESS to the socket of a running containerd`,
    );
  try {
    await probeSocket(address);
  } catch (err) {
    throw new Error(
      `no containerd listening at ${address}: ${(err as Error).message}; start the local cluster, or set CONTAINERD_ADDRESS`,
      { cause: err },
    );
  }
  const run = async (args: string[]): Promise<string> => {
    try {
      return (await promisify(execFile)(ctr, ["--address", address, "-n", namespace, ...args], { maxBuffer: 1 << 24 }))
        .stdout;
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { stderr?: string };
      if (e.code === "ENOENT")
        throw new Error(`${ctr} not found: install containerd (Debian: apt-get install containerd)`);
      throw new Error(`ctr ${args.join(" ")} failed: ${(e.stderr || e.message).trim()}`, { cause: err });
    }
  };
  await run([
    "images",
    "import",
    "--base-name",
    repository,
    ...(opts.snapshotter ? ["--snapshotter", opts.snapshotter] : []),
    opts.archive,
  ]);
  const names = (await run(["images", "ls", "-q"])).split("\n").map((l) => l.trim());
  if (!names.includes(img))
    throw new Error(
      `ctr imported ${opts.archive}, but containerd has no image ${img} (it has: ${names.filter(Boolean).join(", ")})`,
    );
  return img;
}
