import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/**
 * Below the kernel's ephemeral range: a port there is never given to an outgoing connection. A port the kernel
 * picked for a listener (port 0) is from that range, and between this check and the caller's own bind an outgoing
 * connection (a test's client, the API server calling a webhook) could take it: the caller's listen then failed
 * with EADDRINUSE, more often the busier the machine.
 */
function ephemeralStart(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 20_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

const LOWEST = 15_000;

/** Whether `port` can be listened on at `host` now: "ok", or the error's code. */
function tryListen(port: number, host: string): Promise<string> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error"));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve("ok")));
  });
}

/** Every address: IPv6's wildcard (dual stack), or IPv4's on a machine without IPv6. */
async function wildcardFree(port: number): Promise<boolean> {
  const v6 = await tryListen(port, "::");
  if (v6 === "EAFNOSUPPORT" || v6 === "EADDRNOTAVAIL") return (await tryListen(port, "0.0.0.0")) === "ok";
  return v6 === "ok";
}

/**
 * A TCP port free a moment ago on 127.0.0.1 and on every address (a server given only the port listens on all), chosen
 * at random below the ephemeral range, where only explicit binds compete for it.
 */
export async function freePort(): Promise<number> {
  const top = ephemeralStart();
  for (let i = 0; i < 200; i++) {
    const port = LOWEST + Math.floor(Math.random() * (top - LOWEST));
    if ((await tryListen(port, "127.0.0.1")) === "ok" && (await wildcardFree(port))) return port;
  }
  throw new Error(`no free port found between ${LOWEST} and ${top}`);
}
