// Run a controller the way the Deployment runs it: inside a cgroup with the container's CPU and memory
// limits (config/manager/manager.yaml resources.limits), as the kubelet would set them on cgroup v1:
// cpu → cpu.cfs_quota_us / cpu.cfs_period_us, memory → memory.limit_in_bytes.
//
// One child group per run, in each of the cpu and memory hierarchies, under the group the benchmark
// itself runs in (so the machine's own accounting still covers it), created before the controller starts
// and removed after it stops. The controller is started through a tiny shell wrapper that writes its own
// pid into both groups' cgroup.procs and then execs the controller: nothing is allocated outside the
// group, and Node sizes its heap from the group's memory limit, as it does in the pod.
//
// Without cgroup v1 cpu and memory hierarchies, or without the right to create groups, the benchmark
// says so in the report and runs the controller unbounded.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readManagerDeployment } from "../../envtest/manager-deployment.ts";

/** CPU in cores, memory in bytes; a missing key means no limit. */
export interface Limits {
  cpu?: number;
  memoryBytes?: number;
}

export interface ResolvedLimits {
  limits: Limits;
  /** Where they come from, for the report. */
  source: string;
  /** The Deployment's own limits (what "within the Deployment limit" compares with). */
  deployment: Limits;
}

const MEMORY_SUFFIX: Record<string, number> = {
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** A Kubernetes CPU quantity ("500m", "1", "1.5") in cores. */
export function parseCpu(q: string): number {
  const m = /^(\d+(?:\.\d+)?)(m?)$/.exec(q.trim());
  if (!m) throw new Error(`not a CPU quantity: "${q}" (e.g. 500m, 1, 1.5)`);
  const v = Number(m[1]) / (m[2] ? 1000 : 1);
  if (!(v > 0)) throw new Error(`CPU limit must be > 0: "${q}"`);
  return v;
}

/** A Kubernetes memory quantity ("256Mi", "1Gi", "512M", "1e9", bytes) in bytes. */
export function parseMemory(q: string): number {
  const m = /^(\d+(?:\.\d+)?(?:[eE]\d+)?)([kMGTPE]i?)?$/.exec(q.trim());
  const factor = MEMORY_SUFFIX[m?.[2] ?? ""];
  if (!m || factor === undefined) throw new Error(`not a memory quantity: "${q}" (e.g. 256Mi, 1Gi)`);
  const v = Math.round(Number(m[1]) * factor);
  if (!(v > 0)) throw new Error(`memory limit must be > 0: "${q}"`);
  return v;
}

export function formatCpu(cores: number): string {
  return Number.isInteger(cores) ? String(cores) : `${Math.round(cores * 1000)}m`;
}

export function formatMemory(bytes: number): string {
  for (const [suffix, f] of [
    ["Gi", 2 ** 30],
    ["Mi", 2 ** 20],
    ["Ki", 2 ** 10],
  ] as const) {
    if (bytes % f === 0) return `${bytes / f}${suffix}`;
  }
  return String(bytes);
}

/** "cpu 500m, memory 256Mi", "cpu unlimited, memory 256Mi", "none". */
export function formatLimits(l: Limits): string {
  if (l.cpu === undefined && l.memoryBytes === undefined) return "none";
  return (
    `cpu ${l.cpu === undefined ? "unlimited" : formatCpu(l.cpu)}, ` +
    `memory ${l.memoryBytes === undefined ? "unlimited" : formatMemory(l.memoryBytes)}`
  );
}

/** resources.limits of the manager container in config/manager/manager.yaml. */
export function deploymentLimits(root: string): Limits {
  const c = readManagerDeployment(root)?.container as
    { resources?: { limits?: { cpu?: string | number; memory?: string | number } } } | undefined;
  const l = c?.resources?.limits;
  const out: Limits = {};
  if (l?.cpu !== undefined) out.cpu = parseCpu(String(l.cpu));
  if (l?.memory !== undefined) out.memoryBytes = parseMemory(String(l.memory));
  return out;
}

/**
 * The limits to run ours with. `spec`: "" or "deployment" (the Deployment's limits), "none" (unbounded),
 * or "cpu=1,memory=512Mi": those keys replace the Deployment's ("cpu=none" lifts one of them).
 */
export function resolveLimits(spec: string, root: string): ResolvedLimits {
  const deployment = deploymentLimits(root);
  const s = spec.trim();
  if (s === "" || s === "deployment") {
    return {
      limits: { ...deployment },
      source: "the Deployment's resources.limits in config/manager/manager.yaml",
      deployment,
    };
  }
  if (s === "none") return { limits: {}, source: "none (--operator-limits=none)", deployment };
  const limits: Limits = { ...deployment };
  for (const part of s.split(",")) {
    const [k, v, extra] = part.split("=").map((x) => x.trim());
    if (!k || v === undefined || extra !== undefined)
      throw new Error(`--operator-limits: expected key=value, got "${part}"`);
    if (k === "cpu") {
      if (v === "none") delete limits.cpu;
      else limits.cpu = parseCpu(v);
    } else if (k === "memory") {
      if (v === "none") delete limits.memoryBytes;
      else limits.memoryBytes = parseMemory(v);
    } else throw new Error(`--operator-limits: unknown key "${k}" (cpu, memory)`);
  }
  return { limits, source: `--operator-limits=${s} (the Deployment's where not given)`, deployment };
}

// --- cgroup v1 ---------------------------------------------------------------------------------------

export interface CgroupSupport {
  ok: boolean;
  /** Why not, when !ok. */
  reason?: string;
  /** The groups the benchmark itself is in: new groups are created below these. */
  cpuParent?: string;
  memoryParent?: string;
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** Mount points of the cgroup v1 hierarchies, by controller. */
function v1Mounts(): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of (read("/proc/self/mounts") ?? "").split("\n")) {
    const [, mountPoint, fsType, options] = line.split(" ");
    if (fsType !== "cgroup" || !mountPoint || !options) continue;
    for (const o of options.split(",")) if (!out.has(o)) out.set(o, mountPoint);
  }
  return out;
}

/** This process's group path per v1 controller, from /proc/self/cgroup ("4:memory:/a/b"). */
function ownPaths(): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of (read("/proc/self/cgroup") ?? "").split("\n")) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!m || !m[1]) continue;
    for (const c of m[1].split(",")) out.set(c, m[2] ?? "/");
  }
  return out;
}

export function cgroupSupport(): CgroupSupport {
  if (process.platform !== "linux") return { ok: false, reason: `not Linux (${process.platform})` };
  const mounts = v1Mounts();
  const own = ownPaths();
  const cpuMount = mounts.get("cpu");
  const memMount = mounts.get("memory");
  if (!cpuMount || !memMount) {
    const v2 = existsSync("/sys/fs/cgroup/cgroup.controllers");
    return {
      ok: false,
      reason: v2
        ? "cgroup v2 only (the benchmark drives cgroup v1's cpu and memory hierarchies)"
        : "no cgroup v1 cpu and memory hierarchies mounted",
    };
  }
  const cpuParent = join(cpuMount, own.get("cpu") ?? "/");
  const memoryParent = join(memMount, own.get("memory") ?? "/");
  for (const [dir, file] of [
    [cpuParent, "cpu.cfs_quota_us"],
    [memoryParent, "memory.limit_in_bytes"],
  ] as const) {
    if (!existsSync(join(dir, file))) return { ok: false, reason: `${join(dir, file)} not found` };
  }
  if (process.getuid?.() !== 0) return { ok: false, reason: "not root: cannot create cgroups" };
  return { ok: true, cpuParent, memoryParent };
}

export interface CgroupStats {
  /** cpu.stat: CFS periods with runnable tasks, periods throttled, total time throttled (s). */
  nrPeriods: number;
  nrThrottled: number;
  throttledS: number;
  /** memory.max_usage_in_bytes: the group's peak (RSS + page cache + kernel memory charged to it). */
  memoryMaxUsageBytes: number;
  memoryUsageBytes: number;
  /** memory.failcnt: times usage hit the limit (the kernel then reclaims; not necessarily an OOM). */
  memoryFailcnt: number;
  /** memory.oom_control oom_kill: processes the OOM killer killed in this group. */
  oomKills: number;
  /** memory.stat total_rss (anonymous memory) and total_cache (page cache) at the time of reading. */
  memoryRssBytes?: number;
  memoryCacheBytes?: number;
}

export interface CgroupInfo {
  cpuDir: string;
  memoryDir: string;
  /** What was written: cpu.cfs_quota_us (−1 = none), cpu.cfs_period_us, memory.limit_in_bytes (undefined = none). */
  cfsQuotaUs: number;
  cfsPeriodUs: number;
  memoryLimitBytes?: number;
}

const PERIOD_US = 100_000;

function keyValues(text: string | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of (text ?? "").split("\n")) {
    const [k, v] = line.trim().split(/\s+/);
    if (k && v !== undefined && Number.isFinite(Number(v))) out[k] = Number(v);
  }
  return out;
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

const live = new Set<Cgroup>();
let exitHook = false;

export class Cgroup {
  readonly info: CgroupInfo;
  private removed = false;

  private constructor(info: CgroupInfo) {
    this.info = info;
  }

  /** Create the groups `name` below the benchmark's own and write the limits. Throws when it cannot. */
  static create(support: CgroupSupport, name: string, limits: Limits): Cgroup {
    if (!support.ok || !support.cpuParent || !support.memoryParent) throw new Error(support.reason ?? "no cgroups");
    const cpuDir = join(support.cpuParent, name);
    const memoryDir = join(support.memoryParent, name);
    const cfsQuotaUs = limits.cpu === undefined ? -1 : Math.max(1000, Math.round(limits.cpu * PERIOD_US));
    const info: CgroupInfo = { cpuDir, memoryDir, cfsQuotaUs, cfsPeriodUs: PERIOD_US };
    if (limits.memoryBytes !== undefined) info.memoryLimitBytes = limits.memoryBytes;
    const cg = new Cgroup(info);
    if (!exitHook) {
      exitHook = true;
      // However the benchmark ends (short of SIGKILL), leave no group behind.
      process.on("exit", () => {
        for (const g of live) g.remove();
      });
    }
    live.add(cg);
    try {
      mkdirSync(cpuDir);
      mkdirSync(memoryDir);
      writeFileSync(join(cpuDir, "cpu.cfs_period_us"), String(PERIOD_US));
      writeFileSync(join(cpuDir, "cpu.cfs_quota_us"), String(cfsQuotaUs));
      if (limits.memoryBytes !== undefined) {
        writeFileSync(join(memoryDir, "memory.limit_in_bytes"), String(limits.memoryBytes));
        // As the kubelet does not set memsw: with swap off the limit above is the whole story.
      }
    } catch (err) {
      cg.remove();
      throw err;
    }
    return cg;
  }

  /**
   * bin + args as a command that first joins both groups and then execs the real program, so the
   * process (and its name, for /proc lookups) is the real program from its first allocation on.
   */
  wrap(bin: string, args: string[]): { bin: string; args: string[] } {
    const script = 'echo $$ > "$1/cgroup.procs" && echo $$ > "$2/cgroup.procs" && shift 2 && exec "$@"';
    return { bin: "sh", args: ["-c", script, "cgroup-join", this.info.cpuDir, this.info.memoryDir, bin, ...args] };
  }

  /** Whether pid is in both groups (their cgroup.procs). */
  contains(pid: number): boolean {
    const procs = (dir: string) => (read(join(dir, "cgroup.procs")) ?? "").split("\n").map(Number);
    return procs(this.info.cpuDir).includes(pid) && procs(this.info.memoryDir).includes(pid);
  }

  stats(): CgroupStats {
    const cpu = keyValues(read(join(this.info.cpuDir, "cpu.stat")));
    const oom = keyValues(read(join(this.info.memoryDir, "memory.oom_control")));
    const mem = keyValues(read(join(this.info.memoryDir, "memory.stat")));
    const num = (f: string) => Number((read(join(this.info.memoryDir, f)) ?? "").trim());
    const s: CgroupStats = {
      nrPeriods: cpu.nr_periods ?? 0,
      nrThrottled: cpu.nr_throttled ?? 0,
      throttledS: (cpu.throttled_time ?? 0) / 1e9,
      memoryMaxUsageBytes: num("memory.max_usage_in_bytes"),
      memoryUsageBytes: num("memory.usage_in_bytes"),
      memoryFailcnt: num("memory.failcnt"),
      oomKills: oom.oom_kill ?? 0,
    };
    if (mem.total_rss !== undefined) s.memoryRssBytes = mem.total_rss;
    if (mem.total_cache !== undefined) s.memoryCacheBytes = mem.total_cache;
    return s;
  }

  /** Move anything left to the parent groups and remove both groups (retries while the kernel lets go). */
  remove(): void {
    if (this.removed) return;
    for (const dir of [this.info.memoryDir, this.info.cpuDir]) {
      if (!existsSync(dir)) continue;
      for (let attempt = 0; attempt < 50; attempt++) {
        try {
          rmdirSync(dir);
          break;
        } catch {
          // Processes still inside (a stop that has not finished): hand them to the parent group.
          const parent = join(dir, "..");
          for (const pid of (read(join(dir, "cgroup.procs")) ?? "").split("\n").filter(Boolean)) {
            try {
              writeFileSync(join(parent, "cgroup.procs"), pid);
            } catch {
              // gone meanwhile
            }
          }
          sleepSync(100);
        }
      }
    }
    this.removed = !existsSync(this.info.cpuDir) && !existsSync(this.info.memoryDir);
    if (this.removed) live.delete(this);
  }
}

/** Leftover groups of earlier runs that were SIGKILLed (names start with `prefix`). */
export function leftoverGroups(support: CgroupSupport, prefix: string): string[] {
  const out: string[] = [];
  for (const parent of [support.cpuParent, support.memoryParent]) {
    if (!parent) continue;
    try {
      for (const d of readdirSync(parent)) if (d.startsWith(prefix)) out.push(join(parent, d));
    } catch {
      // unreadable
    }
  }
  return out;
}
