// The manager's entrypoint (cmd/main.ts) as a child process against a test apiserver: the flags every such test
// passes (its kubeconfig, a webhook port, a probe server on a free loopback port, no metrics) and the wait for its
// /readyz, with its log in the error when it exits or never gets ready.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../envtest/index.ts";
import { ManagedProcess } from "../envtest/processes.ts";
import { eventually } from "./eventually.ts";

export interface ManagerProcess {
  proc: ManagedProcess;
  logFile: string;
  /** The log so far. */
  read(): string;
  /** Until "starting manager" is logged and /readyz answers 200; the log then. */
  ready(timeoutMs?: number): Promise<string>;
}

export function managerProcess(o: {
  name: string;
  /** Where the log goes (`<dir>/<name>.log`). */
  dir: string;
  kubeconfigPath: string;
  webhookPort: number;
  args?: string[];
  env?: NodeJS.ProcessEnv;
}): ManagerProcess {
  const logFile = join(o.dir, `${o.name}.log`);
  const proc = new ManagedProcess(
    o.name,
    join(PROJECT_ROOT, "node_modules", ".bin", "node"),
    [
      join(PROJECT_ROOT, "cmd", "main.ts"),
      "--kubeconfig",
      o.kubeconfigPath,
      "--webhook-port",
      String(o.webhookPort),
      "--health-probe-bind-address",
      "127.0.0.1:0",
      "--metrics-bind-address",
      "0",
      ...(o.args ?? []),
    ],
    logFile,
    { ...process.env, ...o.env },
  );
  const read = () => (existsSync(logFile) ? readFileSync(logFile, "utf8") : "");
  const ready = (timeoutMs = 30_000) =>
    eventually(
      `${o.name} becoming ready`,
      async () => {
        if (!proc.running) throw new Error(`${o.name} exited:\n${read()}`);
        const text = read();
        if (!text.includes("starting manager")) return undefined;
        const address = /"Starting health probe server"[^\n]*"address":"([^"]+)"/.exec(text)?.[1];
        if (!address) return undefined;
        const r = await fetch(`${address}/readyz`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
        return r?.status === 200 ? text : undefined;
      },
      timeoutMs,
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${o.name}'s log:\n${read()}`);
    });
  return { proc, logFile, read, ready };
}
