// What the local node (node-cluster.ts) changes on the machine, and putting it back.
//
// kubelet, containerd, runc and the CNI plugins keep their state in the cluster directory wherever they
// let us, but some of it is global: sysctls the kubelet sets at start, the /kubepods cgroups, the CNI
// bridge, a few host directories with hard-coded paths, and the mounts and processes of running pods.
// Before anything starts, a HostRecord of the machine's state is written (state.json beside a lock file,
// see nodeHostDir()); cleanupHost() restores it. It runs from NodeCluster.stop(), from the reaper
// (node-reaper.ts) when the owning process dies without stopping, and at the next start if both died.
// Everything here is synchronous so that it also works from an exit path.
//
// The node's address: NODE_IP on an interface of its own, NODE_LINK, that the node creates (addNodeLink)
// and cleanup deletes. kube-apiserver 1.20 refuses loopback addresses in Endpoints, so a node at 127.0.0.1
// would leave every Service in front of a hostNetwork pod (the operator's webhook) without endpoints.
// NODE_LINK is a dummy interface (or, on kernels without the dummy driver, a bridge with no ports and no
// IPv6 link-local address): it transmits nothing off the machine, and its /32 is in no route to anywhere,
// so the address is reachable only from this host — in effect a second loopback address that Kubernetes
// accepts. Nothing listens on any real interface: the kubelet, the apiserver, the scheduler, the
// controller-manager and containerd keep binding 127.0.0.1; only hostNetwork pods that bind their pod IP
// (or every address) listen on NODE_IP.
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";

/** The node's name, and the host name the API server uses to reach its kubelet. */
export const NODE_NAME = "localhost";
/**
 * The node's IP (its InternalIP, and hostNetwork pods' IP): a host-local address on NODE_LINK (see the
 * header), in a private range that overlaps neither POD_SUBNET nor the service range.
 */
export const NODE_IP = "10.218.0.1";
/** The interface that carries NODE_IP, created for the node and deleted by cleanup. */
export const NODE_LINK = "cjo-node0";
export const CNI_NETWORK = "cronjob-operator";
/**
 * The pods' bridge. The host's only address on it is POD_GATEWAY_IP (no default route for pods, no
 * masquerading, no forwarding, no iptables rules): pods reach the host there and nowhere else, and the host
 * (the apiserver calling a webhook, the kubelet probing) reaches the pods directly.
 */
export const CNI_BRIDGE = "cjo-cni0";
export const POD_SUBNET = "10.217.0.0/16";
/**
 * The host's address on CNI_BRIDGE: where pods reach the apiserver (NodeCluster forwards it to the
 * apiserver's loopback port; see NodeCluster.apiServerForPods). host-local IPAM never hands it out (it is the
 * range's default gateway address, which it reserves).
 */
export const POD_GATEWAY_IP = "10.217.0.1";
/** Environment variable (value: the cluster directory) that marks every process the cluster starts. */
export const MARKER_ENV = "CRONJOB_OPERATOR_NODE_CLUSTER";

/**
 * Sysctls the kubelet sets at start (pkg/kubelet/cm: setupKernelTunables, with
 * protectKernelDefaults=false) and that the bridge plugin could set (ip_forward with isGateway, which
 * we do not use): recorded and restored.
 */
export const HOST_SYSCTLS = [
  "vm.overcommit_memory",
  "vm.panic_on_oom",
  "kernel.panic",
  "kernel.panic_on_oops",
  "kernel.keys.root_maxkeys",
  "kernel.keys.root_maxbytes",
  "net.ipv4.ip_forward",
  "net.bridge.bridge-nf-call-iptables",
  "net.bridge.bridge-nf-call-ip6tables",
];

/**
 * Host directories with paths hard-coded in kubelet 1.20 / containerd 1.6 / libcni (everything else is
 * pointed into the cluster directory): /var/lib/kubelet (device-plugins socket), /var/log/pods and
 * /var/log/containers (container logs), /var/lib/cni (libcni's result cache). Removed if the node created them; if they existed, only the entries it added are removed.
 */
export const HOST_DIRS = ["/var/lib/kubelet", "/var/log/pods", "/var/log/containers", "/var/lib/cni"];

/**
 * Host directories other programs share: /run/containerd (the runc shims' sockets, s/, whatever
 * containerd runs them) and /run/mount (libmount's, created by mount/umount). Sockets nobody listens on
 * are removed from /run/containerd/s; the directories are removed only if the node created them and they
 * are empty.
 */
export const SHARED_HOST_DIRS = ["/run/containerd/s", "/run/containerd", "/run/mount"];

export interface ProcessRef {
  pid: number;
  /** Start time in clock ticks since boot (/proc/<pid>/stat field 22): tells a reused pid apart. */
  start: number;
}

export interface HostRecord {
  version: 1;
  /** The cluster directory. */
  dir: string;
  /** Directories under `dir` that hold node state (containerd, kubelet, CNI): wiped by cleanup. */
  wipe: string[];
  /** Remove `dir` itself too (a throwaway cluster). */
  removeDir: boolean;
  /** The process that owns the cluster; when it is gone, the reaper cleans up. */
  owner: ProcessRef;
  /** Values before the node started. */
  sysctls: Record<string, string>;
  /** HOST_DIRS that did not exist. */
  createdDirs: string[];
  /** SHARED_HOST_DIRS that did not exist. */
  createdSharedDirs: string[];
  /** HOST_DIRS that existed, with their entries at the time. */
  existingDirs: Record<string, string[]>;
  /** `<hierarchy>/kubepods` cgroups that did not exist (every mounted hierarchy). */
  cgroups: string[];
  /** Network interfaces the node creates (NODE_LINK): deleted by cleanup. Absent in older records. */
  links?: string[];
  startedAt: string;
}

export type Log = (msg: string) => void;

/**
 * Lock and state of the (one per machine) local node: ~root/.cache/cronjob-operator/node-host. From the
 * user database, not $HOME or $XDG_CACHE_HOME: every run on the machine (tests often point those at
 * temp dirs) must see the same lock and the same record.
 */
export function nodeHostDir(): string {
  return join(userInfo().homedir, ".cache", "cronjob-operator", "node-host");
}

export function statePath(): string {
  return join(nodeHostDir(), "state.json");
}

export function readHostRecord(): HostRecord | undefined {
  try {
    const rec = JSON.parse(readFileSync(statePath(), "utf8")) as HostRecord;
    return rec.version === 1 ? rec : undefined;
  } catch {
    return undefined;
  }
}

export function writeHostRecord(rec: HostRecord): void {
  mkdirSync(nodeHostDir(), { recursive: true });
  const tmp = `${statePath()}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(rec, null, 2) + "\n");
  renameSync(tmp, statePath());
}

/** Remove the record if it is still the one given (a newer cluster's record is left alone). */
export function removeHostRecord(rec: HostRecord): void {
  const cur = readHostRecord();
  if (cur && cur.startedAt === rec.startedAt && cur.owner.pid === rec.owner.pid) rmSync(statePath(), { force: true });
}

// ---- processes -------------------------------------------------------------------------------------

function procStat(pid: number): string[] | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may contain spaces): state is field 3, starttime field 22.
    return s.slice(s.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

export function processRef(pid: number): ProcessRef {
  const f = procStat(pid);
  if (!f) throw new Error(`process ${pid} does not exist`);
  return { pid, start: Number(f[19]) };
}

/** The process still runs (not a zombie, and not another process that got its pid). */
export function processAlive(p: ProcessRef): boolean {
  const f = procStat(p.pid);
  return !!f && f[0] !== "Z" && f[0] !== "X" && Number(f[19]) === p.start;
}

function pids(): number[] {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
}

function inKubepods(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cgroup`, "utf8")
      .split("\n")
      .some((l) => /^\d+:[^:]*:\/kubepods(\/|$)/.test(l));
  } catch {
    return false;
  }
}

function hasMarker(pid: number, dir: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(`${MARKER_ENV}=${dir}`);
  } catch {
    return false;
  }
}

/**
 * The cluster's live processes: everything it started (they carry MARKER_ENV, and so do containerd's
 * shims, which leave its process group) and everything in the /kubepods cgroups (pause and the pods'
 * processes, in their own PID namespaces). Never this process or its ancestors.
 */
export function nodeProcesses(dir: string): number[] {
  const exclude = new Set([process.pid, process.ppid]);
  return pids().filter((pid) => {
    if (exclude.has(pid) || zombie(pid)) return false;
    return hasMarker(pid, dir) || inKubepods(pid);
  });
}

function zombie(pid: number): boolean {
  const state = procStat(pid)?.[0];
  return state === undefined || state === "Z" || state === "X";
}

/** Live processes in /kubepods (a kubelet's pods), whoever started them. Zombies (killed pods that init
 *  has not reaped yet) still show their old cgroup: not counted. */
export function kubepodsProcesses(): number[] {
  return pids().filter((pid) => pid !== process.pid && inKubepods(pid) && !zombie(pid));
}

/** Running processes whose command is `name` (e.g. another kubelet). */
export function processesNamed(name: string): number[] {
  return pids().filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === name && !zombie(pid);
    } catch {
      return false;
    }
  });
}

export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** SIGKILL the cluster's processes until none is left (or `timeoutMs`); returns the survivors. */
export function killNodeProcesses(dir: string, timeoutMs = 15_000): number[] {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = nodeProcesses(dir);
    if (left.length === 0 || Date.now() > deadline) return left;
    for (const pid of left) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
    sleepSync(100);
  }
}

// ---- mounts ----------------------------------------------------------------------------------------

interface MountEntry {
  mountpoint: string;
  fstype: string;
}

function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

export function mounts(): MountEntry[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [pre, post = ""] = line.split(" - ");
      return { mountpoint: unescapeMount(pre?.split(" ")[4] ?? ""), fstype: post.split(" ")[0] ?? "" };
    });
}

function under(path: string, prefix: string): boolean {
  const p = prefix.endsWith("/") ? prefix.slice(0, -1) : prefix;
  return path === p || path.startsWith(`${p}/`);
}

/** Mount points at or under any of `prefixes`, deepest (and most recently mounted) first. */
export function mountsUnder(prefixes: string[]): string[] {
  const found = mounts()
    .map((m) => m.mountpoint)
    .filter((mp) => prefixes.some((p) => under(mp, p)));
  return found.reverse().sort((a, b) => b.split("/").length - a.split("/").length);
}

/** Unmount everything under `prefixes` (lazily when busy); returns what is still mounted. */
export function unmountUnder(prefixes: string[], log: Log): string[] {
  for (let round = 0; round < 5; round++) {
    const mps = mountsUnder(prefixes);
    if (mps.length === 0) return [];
    for (const mp of mps) {
      try {
        execFileSync("umount", [mp], { stdio: "ignore" });
      } catch {
        try {
          execFileSync("umount", ["-l", mp], { stdio: "ignore" });
          log(`unmounted ${mp} lazily`);
        } catch {
          // already gone with its parent, or retried next round
        }
      }
    }
  }
  return mountsUnder(prefixes);
}

// ---- cgroups ---------------------------------------------------------------------------------------

/** Mount points of every cgroup hierarchy (v1 controllers, named hierarchies, the v2 tree). */
export function cgroupHierarchies(): string[] {
  return [
    ...new Set(
      mounts()
        .filter((m) => m.fstype === "cgroup" || m.fstype === "cgroup2")
        .map((m) => m.mountpoint),
    ),
  ];
}

export function kubepodsCgroups(): string[] {
  return cgroupHierarchies()
    .map((h) => join(h, "kubepods"))
    .filter((p) => existsSync(p));
}

/** rmdir a cgroup and its children, deepest first; cgroups of just-killed tasks need a moment. */
function removeCgroup(path: string): boolean {
  if (!existsSync(path)) return true;
  let ok = true;
  try {
    for (const e of readdirSync(path, { withFileTypes: true })) {
      if (e.isDirectory()) ok = removeCgroup(join(path, e.name)) && ok;
    }
  } catch {
    return !existsSync(path);
  }
  for (let i = 0; i < 50; i++) {
    try {
      rmdirSync(path);
      return ok;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return ok;
      sleepSync(100);
    }
  }
  return false;
}

// ---- network ---------------------------------------------------------------------------------------

export function linkExists(name: string): boolean {
  try {
    execFileSync("ip", ["link", "show", "dev", name], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Delete the bridge and any veth still attached to it. */
export function removeBridge(name: string, log: Log): void {
  if (!linkExists(name)) return;
  try {
    const out = execFileSync("ip", ["-o", "link", "show", "master", name], { encoding: "utf8" });
    for (const line of out.split("\n")) {
      const ifname = /^\d+:\s+([^@:\s]+)/.exec(line)?.[1];
      if (!ifname) continue;
      try {
        execFileSync("ip", ["link", "del", "dev", ifname], { stdio: "ignore" });
      } catch {
        // went with its namespace
      }
    }
  } catch {
    // no ports
  }
  try {
    execFileSync("ip", ["link", "del", "dev", name], { stdio: "ignore" });
    log(`deleted bridge ${name}`);
  } catch (err) {
    log(`could not delete bridge ${name}: ${(err as Error).message}`);
  }
}

/** Delete a network interface (idempotent). */
export function removeLink(name: string, log: Log): void {
  if (!linkExists(name)) return;
  try {
    execFileSync("ip", ["link", "del", "dev", name], { stdio: "ignore" });
    log(`deleted interface ${name}`);
  } catch (err) {
    log(`could not delete interface ${name}: ${(err as Error).message}`);
  }
}

/** Interfaces other than NODE_LINK that carry NODE_IP. */
function otherHoldersOfNodeIP(): string[] {
  try {
    const out = execFileSync("ip", ["-o", "-4", "addr", "show", "to", `${NODE_IP}/32`], { encoding: "utf8" });
    return out
      .split("\n")
      .map((l) => /^\d+:\s+([^@:\s]+)/.exec(l)?.[1])
      .filter((n): n is string => !!n && n !== NODE_LINK);
  } catch {
    return [];
  }
}

/**
 * Create NODE_LINK with NODE_IP/32 (the host record must already list it, so that cleanup removes it
 * whatever happens next). A dummy interface where the kernel has the driver, else a bridge without ports.
 */
export function addNodeLink(log: Log): void {
  const ip = (...args: string[]) => execFileSync("ip", args, { stdio: ["ignore", "ignore", "pipe"] });
  removeLink(NODE_LINK, log);
  let kind = "dummy";
  try {
    ip("link", "add", NODE_LINK, "type", "dummy");
  } catch {
    kind = "bridge";
    ip("link", "add", NODE_LINK, "type", "bridge");
  }
  // No IPv6 link-local address (nothing to announce), then the node's address, host-local.
  ip("link", "set", "dev", NODE_LINK, "addrgenmode", "none");
  ip("addr", "add", `${NODE_IP}/32`, "dev", NODE_LINK);
  ip("link", "set", "dev", NODE_LINK, "up");
  log(`created interface ${NODE_LINK} (${kind}) with ${NODE_IP}/32`);
}

/**
 * Create CNI_BRIDGE with POD_GATEWAY_IP before the first pod (the bridge plugin, with isGateway false, adopts
 * an existing bridge as it is). Cleanup removes the bridge, and the address with it.
 */
export function addPodBridge(log: Log): void {
  const ip = (...args: string[]) => execFileSync("ip", args, { stdio: ["ignore", "ignore", "pipe"] });
  removeBridge(CNI_BRIDGE, log);
  ip("link", "add", CNI_BRIDGE, "type", "bridge");
  ip("link", "set", "dev", CNI_BRIDGE, "addrgenmode", "none");
  ip("addr", "add", `${POD_GATEWAY_IP}/${POD_SUBNET.split("/")[1]}`, "dev", CNI_BRIDGE);
  ip("link", "set", "dev", CNI_BRIDGE, "up");
  log(`created bridge ${CNI_BRIDGE} with ${POD_GATEWAY_IP} for the pods`);
}

/** Paths of the unix sockets some process has bound (in this network namespace). */
function boundUnixSockets(): Set<string> {
  const out = new Set<string>();
  try {
    for (const line of readFileSync("/proc/net/unix", "utf8").split("\n").slice(1)) {
      const path = line.trim().split(/\s+/)[7];
      if (path?.startsWith("/")) out.add(path);
    }
  } catch {
    // no procfs view: remove nothing
  }
  return out;
}

// ---- sysctls ---------------------------------------------------------------------------------------

function sysctlPath(name: string): string {
  return join("/proc/sys", ...name.split("."));
}

export function readSysctls(names: string[] = HOST_SYSCTLS): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of names) {
    try {
      out[n] = readFileSync(sysctlPath(n), "utf8").trim();
    } catch {
      // not on this kernel (e.g. br_netfilter not loaded)
    }
  }
  return out;
}

// ---- the record and the cleanup ------------------------------------------------------------------------

/** The machine's state now, for a cluster in `dir` owned by `owner`. */
export function snapshotHost(req: { dir: string; wipe: string[]; removeDir: boolean; owner: ProcessRef }): HostRecord {
  const createdDirs: string[] = [];
  const existingDirs: Record<string, string[]> = {};
  for (const d of HOST_DIRS) {
    if (existsSync(d)) existingDirs[d] = readdirSync(d);
    else createdDirs.push(d);
  }
  return {
    version: 1,
    dir: req.dir,
    wipe: req.wipe,
    removeDir: req.removeDir,
    owner: req.owner,
    sysctls: readSysctls(),
    createdDirs,
    createdSharedDirs: SHARED_HOST_DIRS.filter((d) => !existsSync(d)),
    existingDirs,
    cgroups: cgroupHierarchies()
      .map((h) => join(h, "kubepods"))
      .filter((p) => !existsSync(p)),
    links: [NODE_LINK],
    startedAt: new Date().toISOString(),
  };
}

/**
 * What stands in the way of a new node: another kubelet, pods of one. Leftovers of ours without a
 * record (an empty /kubepods, our bridge) are removed.
 */
export function preflight(log: Log): string[] {
  const problems: string[] = [];
  const kubelets = processesNamed("kubelet");
  if (kubelets.length > 0) {
    problems.push(
      `a kubelet is already running on this machine (pid ${kubelets.join(", ")}); the local node would share /kubepods, /var/log/pods and /var/lib/kubelet with it`,
    );
  }
  const podProcs = kubepodsProcesses();
  if (podProcs.length > 0) {
    problems.push(`processes of another kubelet's pods run in the /kubepods cgroups (pid ${podProcs.join(", ")})`);
  }
  const holders = otherHoldersOfNodeIP();
  if (holders.length > 0) {
    problems.push(`the node's address ${NODE_IP} is already assigned on this machine (${holders.join(", ")})`);
  }
  if (problems.length > 0) return problems;
  for (const cg of kubepodsCgroups()) {
    if (removeCgroup(cg)) log(`removed the empty leftover cgroup ${cg}`);
    else problems.push(`could not remove the leftover cgroup ${cg}`);
  }
  if (linkExists(CNI_BRIDGE)) removeBridge(CNI_BRIDGE, log);
  removeLink(NODE_LINK, log);
  return problems;
}

export interface CleanupReport {
  /** Things that could not be restored (empty: the machine is as it was). */
  problems: string[];
  actions: string[];
}

/** Put the machine back as `rec` found it. Idempotent; safe while parts are already gone. */
export function cleanupHost(rec: HostRecord, log: Log = () => undefined): CleanupReport {
  const actions: string[] = [];
  const problems: string[] = [];
  const note = (m: string) => {
    actions.push(m);
    log(m);
  };

  // 1. Processes: everything the cluster started (containerd, its shims, kubelet, the control plane,
  //    the watchdogs) and everything in /kubepods (pause and the pods' processes).
  const before = nodeProcesses(rec.dir).length;
  const survivors = killNodeProcesses(rec.dir);
  if (before > 0) note(`killed ${before - survivors.length} process(es)`);
  if (survivors.length > 0) problems.push(`processes still running: ${survivors.join(", ")}`);

  // 2. Mounts: overlay root filesystems, shm and network namespaces under containerd's state, tmpfs
  //    volumes and the kubelet's own (rshared bind) mount of its root directory.
  const mountRoots = [rec.dir, ...HOST_DIRS];
  const mountedBefore = mountsUnder(mountRoots).length;
  const stillMounted = unmountUnder(mountRoots, log);
  if (mountedBefore > 0) note(`unmounted ${mountedBefore - stillMounted.length} filesystem(s)`);
  if (stillMounted.length > 0) problems.push(`still mounted: ${stillMounted.join(", ")}`);

  // 3. cgroups.
  for (const cg of rec.cgroups) {
    if (!existsSync(cg)) continue;
    if (removeCgroup(cg)) note(`removed cgroup ${cg}`);
    else problems.push(`could not remove cgroup ${cg}`);
  }

  // 4. Network: the bridge (and veths left by namespaces that are still pinned somewhere), and the
  //    node's own interface (records older than `links` had none).
  if (linkExists(CNI_BRIDGE)) {
    removeBridge(CNI_BRIDGE, note);
    if (linkExists(CNI_BRIDGE)) problems.push(`bridge ${CNI_BRIDGE} still exists`);
  }
  for (const link of rec.links ?? []) {
    removeLink(link, note);
    if (linkExists(link)) problems.push(`interface ${link} still exists`);
  }

  // 5. Sysctls.
  const now = readSysctls(Object.keys(rec.sysctls));
  for (const [name, value] of Object.entries(rec.sysctls)) {
    if (now[name] === value) continue;
    try {
      writeFileSync(sysctlPath(name), value);
      note(`restored ${name} = ${value} (was ${now[name]})`);
    } catch (err) {
      problems.push(`could not restore ${name} = ${value}: ${(err as Error).message}`);
    }
  }

  // 6. Directories. Never recursively delete through a mount point.
  const remove = (path: string) => {
    if (!existsSync(path)) return;
    const m = mountsUnder([path]);
    if (m.length > 0) {
      problems.push(`not removing ${path}: still mounted ${m.join(", ")}`);
      return;
    }
    rmSync(path, { recursive: true, force: true });
    note(`removed ${path}`);
  };
  for (const d of rec.createdDirs) remove(d);
  for (const [d, entries] of Object.entries(rec.existingDirs)) {
    if (!existsSync(d)) continue;
    const keep = new Set(entries);
    for (const e of readdirSync(d)) if (!keep.has(e)) remove(join(d, e));
  }
  // libcni's cache of our network's results, when /var/lib/cni/results was there before.
  const results = "/var/lib/cni/results";
  if (existsSync(results)) {
    for (const e of readdirSync(results)) if (e.startsWith(`${CNI_NETWORK}-`)) remove(join(results, e));
  }
  if (rec.removeDir) remove(rec.dir);
  else for (const d of rec.wipe) remove(d);

  // 7. Shared directories: dead shim sockets, then what the node created if nobody else uses it now.
  const shimSockets = "/run/containerd/s";
  if (existsSync(shimSockets)) {
    const bound = boundUnixSockets();
    for (const e of readdirSync(shimSockets)) {
      const p = join(shimSockets, e);
      if (!bound.has(p)) rmSync(p, { force: true });
    }
  }
  for (const d of rec.createdSharedDirs ?? []) {
    try {
      rmdirSync(d);
      note(`removed ${d}`);
    } catch {
      // not there, or in use by someone else now: theirs
    }
  }

  return { problems, actions };
}
