// Linux /proc readers: CPU time, peak RSS, and the real process behind a watchdog wrapper
// (envtest's ManagedProcess runs every binary as a child of a small bash loop).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { basename } from "node:path";

let clkTck: number | undefined;

/** Clock ticks per second for /proc/<pid>/stat (getconf CLK_TCK; 100 on every common kernel). */
export function clockTicks(): number {
  if (clkTck === undefined) {
    try {
      clkTck = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      clkTck = 100;
    }
  }
  return clkTck;
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** The executable name of a process: basename of argv[0]. */
export function commandName(pid: number): string | undefined {
  const cmdline = read(`/proc/${pid}/cmdline`);
  if (!cmdline) return undefined;
  return basename(cmdline.split("\0")[0] ?? "");
}

/** Direct children of a process. */
export function childPids(pid: number): number[] {
  const text = read(`/proc/${pid}/task/${pid}/children`);
  if (text !== undefined) return text.trim().split(/\s+/).filter(Boolean).map(Number);
  return [];
}

/**
 * The child of `wrapperPid` whose argv[0] basename is `name` (the watchdog also forks `sleep 1`
 * children, so the name matters). Retries for a while: the wrapper forks right after it starts.
 */
export async function findChild(wrapperPid: number, name: string, timeoutMs = 10_000): Promise<number | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const c of childPids(wrapperPid)) if (commandName(c) === name) return c;
    if (Date.now() > deadline) return undefined;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** User + system CPU seconds of a process (all threads), or undefined once it is gone. */
export function cpuSeconds(pid: number): number | undefined {
  const stat = read(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  // Field 2 (comm) may contain spaces and parentheses: split after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
  return (utime + stime) / clockTicks();
}

/** VmHWM (peak resident set) and VmRSS in bytes. */
export function memory(pid: number): { peakRss: number; rss: number } | undefined {
  const status = read(`/proc/${pid}/status`);
  if (!status) return undefined;
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) * 1024;
  return { peakRss: kb("VmHWM"), rss: kb("VmRSS") };
}

/** The 1, 5 and 15 minute load averages (/proc/loadavg), e.g. "2.08 1.50 1.82"; "?" when unreadable. */
export function loadavg(): string {
  return (read("/proc/loadavg") ?? "?").trim().split(/\s+/).slice(0, 3).join(" ");
}

/**
 * Bytes a process passed to read-like and write-like system calls (/proc/<pid>/io rchar, wchar): its socket
 * traffic (TLS records included), its own log writes and a little pipe/eventfd noise. Undefined once it is
 * gone or when /proc/<pid>/io cannot be read.
 */
export function ioBytes(pid: number): { read: number; written: number } | undefined {
  const text = read(`/proc/${pid}/io`);
  if (!text) return undefined;
  const field = (name: string) => Number(text.match(new RegExp(`^${name}: (\\d+)$`, "m"))?.[1] ?? NaN);
  const r = field("rchar");
  const w = field("wchar");
  return Number.isFinite(r) && Number.isFinite(w) ? { read: r, written: w } : undefined;
}
