// `kubectl cron dashboard` as a user starts it: the plugin's entry point in a process of its own, its URL read from
// what it prints; stopped with SIGTERM as Ctrl-C would.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..");

export interface RunningDashboard {
  url: string;
  /** The process' id (the launcher execs node: the same process). */
  pid: number;
  port: number;
  token: string;
  /** What it printed on stderr so far. */
  stderr(): string;
  stop(): Promise<number | null>;
}

/** The plugin from its TypeScript entry point (cli.ts), as the tests run it. */
const FROM_TYPESCRIPT: readonly string[] = [
  process.execPath,
  "--no-warnings=ExperimentalWarning",
  join(ROOT, "cmd/kubectl-cron/cli.ts"),
];

/** The plugin as a user runs it: the launcher, which runs the bundle `make plugin` built while it is fresh. */
export const LAUNCHER: readonly string[] = [join(ROOT, "cmd/kubectl-cron/kubectl-cron")];

export async function startDashboard(
  kubeconfig: string,
  args: readonly string[],
  timeoutMs = 60_000,
  /** The executable and its first arguments (default: cli.ts under this Node); LAUNCHER runs the built plugin. */
  command: readonly string[] = FROM_TYPESCRIPT,
): Promise<RunningDashboard> {
  const child: ChildProcess = spawn(
    command[0]!,
    [...command.slice(1), "dashboard", "--kubeconfig", kubeconfig, ...args],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, KUBECONFIG: kubeconfig },
    },
  );
  let out = "";
  let err = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the dashboard printed no URL within ${timeoutMs} ms; stderr: ${err}`)),
      timeoutMs,
    );
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      const m = /(http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the dashboard exited (${code}) before it printed a URL; stderr: ${err}`));
    });
  });
  const u = new URL(url);
  return {
    url,
    pid: child.pid!,
    port: Number(u.port),
    token: u.searchParams.get("token")!,
    stderr: () => err,
    async stop() {
      child.kill("SIGTERM");
      return exited;
    },
  };
}
