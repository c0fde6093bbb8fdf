// --apiserver-profile: kube-apiserver's CPU profile during a controller's burst. kube-apiserver serves
// net/http/pprof (--profiling is on by default) to the bench's admin (system:masters); the profile starts at the
// first measured slot's minute boundary, when the controller creates that slot's Jobs, and is saved next to the
// report. With a Go toolchain at hand (hack/kube-source installs one in the envtest cache to build Kubernetes)
// its `go tool pprof -top -cum` goes beside it, so the report can be read without one.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { homedir } from "node:os";
import { join } from "node:path";
import type { TestEnv } from "../../envtest/index.ts";
import { sleep } from "./pool.ts";

export interface ProfileResult {
  /** The pprof file (gzipped protobuf, `go tool pprof` reads it), absolute. */
  file?: string;
  /** `go tool pprof -top -cum` of it (its first TOP_LINES lines), absolute. */
  topFile?: string;
  /** Why there is no top: no Go toolchain found, or pprof failed. */
  topNote?: string;
  /** When the profile started (RFC 3339, ms) and for how long. */
  startedAt?: string;
  seconds: number;
  bytes?: number;
  /** The profile could not be taken: the phase goes on without it. */
  error?: string;
}

/** Lines of `go tool pprof -top -cum` kept: the header and the ~50 heaviest call paths. */
const TOP_LINES = 60;

/**
 * Waits until `at` (epoch ms), then takes `seconds` of kube-apiserver CPU profile into `file`, and its top
 * (`<file without .pprof>.top.txt`) when a Go toolchain is found. Never rejects: a profile that fails is reported
 * in `error`, and the measurement it accompanies stands.
 */
export async function apiserverProfile(
  env: TestEnv,
  o: { at: number; seconds: number; file: string; log: (msg: string) => void },
): Promise<ProfileResult> {
  const result: ProfileResult = { seconds: o.seconds };
  try {
    // Not a millisecond early: a timer may fire before its time.
    while (Date.now() < o.at) await sleep(o.at - Date.now());
    result.startedAt = new Date().toISOString();
    const body = await fetchProfile(env, o.seconds);
    writeFileSync(o.file, body);
    result.file = o.file;
    result.bytes = body.length;
    o.log(`kube-apiserver CPU profile (${o.seconds} s from ${result.startedAt.slice(11, 19)}): ${o.file}`);
  } catch (err) {
    result.error = err instanceof Error ? err.message : String(err);
    o.log(`no kube-apiserver CPU profile: ${result.error}`);
    return result;
  }
  const go = findGo();
  if (!go) {
    result.topNote = "no Go toolchain found (PATH, or the envtest cache's from hack/kube-source)";
    return result;
  }
  const topFile = o.file.replace(/\.pprof$/, "") + ".top.txt";
  try {
    const top = execFileSync(go, ["tool", "pprof", "-top", "-cum", o.file], {
      encoding: "utf8",
      // The toolchain as it is: no download of another one, and a cache it may write to.
      env: { ...process.env, GOTOOLCHAIN: "local" },
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 120_000,
      maxBuffer: 64 * 2 ** 20,
    });
    writeFileSync(topFile, top.split("\n").slice(0, TOP_LINES).join("\n") + "\n");
    result.topFile = topFile;
  } catch (err) {
    // Its exit status and stderr, not its message: what go printed says why.
    const e = err as { status?: number; stderr?: string };
    result.topNote = `${go} tool pprof failed (exit ${e.status ?? "?"}): ${String(e.stderr ?? "")
      .trim()
      .slice(0, 300)}`;
  }
  return result;
}

/** GET /debug/pprof/profile?seconds=S with the admin token, trusting the apiserver's CA: the profile's bytes. */
function fetchProfile(env: TestEnv, seconds: number): Promise<Buffer> {
  const caData = env.kubeConfig.getCurrentCluster()?.caData;
  const url = `${env.server}/debug/pprof/profile?seconds=${seconds}`;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        headers: { authorization: `Bearer ${env.token}` },
        ...(caData ? { ca: Buffer.from(caData, "base64") } : { rejectUnauthorized: false }),
        // The answer comes after the profile's seconds.
        timeout: (seconds + 30) * 1000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const body = Buffer.concat(chunks);
          if (res.statusCode !== 200)
            reject(new Error(`GET ${url}: HTTP ${res.statusCode}: ${body.toString("utf8").slice(0, 200)}`));
          else resolve(body);
        });
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`GET ${url}: no answer within ${seconds + 30} s`)));
    req.on("error", reject);
    req.end();
  });
}

/**
 * A `go` to run pprof with: the toolchain hack/kube-source unpacked into the envtest cache
 * (`<cache>/go-<minor>-<suite>/usr/lib/go-<minor>/bin/go`, the one that built kube-apiserver), else the PATH's.
 */
function findGo(): string | undefined {
  const cache =
    process.env.ENVTEST_CACHE_DIR ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "cronjob-operator", "envtest");
  const inCache = (existsSync(cache) ? readdirSync(cache) : [])
    .filter((d) => d.startsWith("go-"))
    .sort()
    .reverse()
    .flatMap((d) => {
      const lib = join(cache, d, "usr", "lib");
      return existsSync(lib) ? readdirSync(lib).map((g) => join(lib, g, "bin", "go")) : [];
    })
    .find((bin) => existsSync(bin));
  if (inCache) return inCache;
  try {
    execFileSync("go", ["version"], { stdio: "ignore", timeout: 10_000 });
    return "go";
  } catch {
    return undefined;
  }
}
