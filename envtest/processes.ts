// Child processes of the test control plane. Each binary runs under a small bash watchdog in its own
// process group: stopping kills the whole group, and if this Node process dies without cleaning up
// (SIGKILL, a crashed runner) the watchdog notices within a second and takes its child down with it.
// A signal to the group reaches the binary once, as the kubelet's SIGTERM reaches a container: the watchdog
// only waits for it (it forwarded the group's SIGTERM once, and the second SIGTERM made a manager exit at once,
// as controller-runtime's does, instead of letting its namespaces and Lease go). SIGINT is the exception: a
// background job of a non-interactive shell ignores it, so the watchdog turns it into the SIGTERM.
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, rmSync, type WriteStream } from "node:fs";

const WATCHDOG = `
parent="$1"; shift
"$@" &
child=$!
trap 'wait "$child"; exit 0' TERM
trap 'kill -TERM "$child" 2>/dev/null; wait "$child"; exit 0' INT
while kill -0 "$parent" 2>/dev/null && kill -0 "$child" 2>/dev/null; do sleep 1; done
if kill -0 "$child" 2>/dev/null; then
  kill -TERM "$child" 2>/dev/null; sleep 3; kill -KILL "$child" 2>/dev/null
fi
wait "$child"
`;

const live = new Set<ManagedProcess>();
const tempDirs = new Set<string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // 'exit' handlers must be synchronous: SIGKILL every group we still own, then remove temp dirs.
  process.on("exit", () => {
    for (const p of live) p.killNow();
    for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
  });
  if (!exitOnSignals) return;
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(sig, () => process.exit(128 + (sig === "SIGINT" ? 2 : sig === "SIGTERM" ? 15 : 1)));
  }
}

let exitOnSignals = true;

/**
 * By default SIGINT/SIGTERM exit the process (and the exit hook takes the control plane down). A
 * program that shuts down gracefully on its own (make run) turns that off before starting anything.
 */
export function handleSignalsYourself(): void {
  exitOnSignals = false;
}

/** Remove `dir` when the process exits, however it exits (short of SIGKILL). */
export function removeOnExit(dir: string): () => void {
  installExitHook();
  tempDirs.add(dir);
  return () => tempDirs.delete(dir);
}

export class ManagedProcess {
  readonly name: string;
  private readonly child: ChildProcess;
  private readonly log: WriteStream;
  private readonly exited: Promise<number | null>;
  private done = false;

  constructor(name: string, bin: string, args: string[], logFile: string, env: NodeJS.ProcessEnv = process.env) {
    installExitHook();
    this.name = name;
    this.log = createWriteStream(logFile, { flags: "a" });
    this.child = spawn("bash", ["-c", WATCHDOG, "watchdog", String(process.pid), bin, ...args], {
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env,
    });
    this.child.stdout?.pipe(this.log, { end: false });
    this.child.stderr?.pipe(this.log, { end: false });
    this.exited = new Promise((resolve) => {
      this.child.once("exit", (code) => {
        this.done = true;
        live.delete(this);
        resolve(code);
      });
    });
    // Don't keep the test runner alive just because a control plane is up.
    this.child.unref();
    live.add(this);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return !this.done;
  }

  /** Resolves with the exit code when the process ends. */
  wait(): Promise<number | null> {
    return this.exited;
  }

  /** SIGTERM the group, then SIGKILL after `graceMs`. */
  async stop(graceMs = 5000): Promise<void> {
    if (this.done) return;
    this.signal("SIGTERM");
    const timer = setTimeout(() => this.signal("SIGKILL"), graceMs);
    await this.exited;
    clearTimeout(timer);
    this.signal("SIGKILL"); // anything left in the group
    this.log.end();
  }

  /** Simulates a crash: SIGKILL to the whole group. */
  async kill(): Promise<void> {
    this.killNow();
    await this.exited;
    this.log.end();
  }

  killNow(): void {
    this.signal("SIGKILL");
  }

  private signal(sig: NodeJS.Signals): void {
    if (this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, sig);
    } catch {
      // group already gone
    }
  }
}
