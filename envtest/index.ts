// envtest for TypeScript: a real etcd + kube-apiserver (+ optionally kube-controller-manager) on free
// loopback ports, TLS and token auth, with the project's CRDs installed. The binaries come from
// hack/setup-envtest (or KUBEBUILDER_ASSETS).
import { execFile, execFileSync } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ApiextensionsV1Api, CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { ManagedProcess, removeOnExit } from "./processes.ts";
import { freePort } from "./ports.ts";
import { binaryVersion, insecurePortArgs, type KubeVersion } from "./versions.ts";

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

export interface TestEnvOptions {
  /** Directories of CRD manifests to install (default: config/crd/bases). Empty to install none. */
  crdDirectoryPaths?: string[];
  /** Also start kube-controller-manager (garbage collector, Job controller, ...). */
  controllerManager?:
    | boolean
    | {
        controllers?: string[];
        extraArgs?: string[];
        /** One service account per controller (what a real cluster does; needed for pods to be created). */
        useServiceAccountCredentials?: boolean;
      };
  /** Extra kube-apiserver flags. */
  apiServerArgs?: string[];
  /** kube-apiserver --authorization-mode (default ["RBAC"]). */
  authorizationModes?: string[];
  /** kube-apiserver --enable-admission-plugins, on top of its defaults (default none). */
  enableAdmissionPlugins?: string[];
  /** kube-apiserver --disable-admission-plugins (default ["ServiceAccount"]: no token volumes in pods). */
  disableAdmissionPlugins?: string[];
  /** More users for the token file, besides the admin (system:masters). */
  tokens?: { token: string; user: string; uid?: string; groups?: string[] }[];
  /** Where etcd keeps its data; default a fresh temp dir (removed on stop). */
  etcdDataDir?: string;
  /**
   * Keep everything (certificates, service-account key, admin token, etcd data, logs) in this directory
   * and reuse it on the next start; it is not removed on stop. Default: a fresh temp dir.
   */
  dir?: string;
  /** Directory with the binaries (default assetsDir()). */
  assets?: string;
  /** Extra environment for the control-plane processes. */
  processEnv?: Record<string, string>;
  /** Print what is started (default true). */
  verbose?: boolean;
}

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Directory with etcd, kube-apiserver, kube-controller-manager and kubectl. */
export function assetsDir(): string {
  const env = process.env.KUBEBUILDER_ASSETS;
  if (env && existsSync(join(env, "kube-apiserver")) && existsSync(join(env, "etcd"))) return env;
  // setup-envtest prints the directory on its last stdout line; cached runs take milliseconds.
  const out = execFileSync(join(PROJECT_ROOT, "hack", "setup-envtest"), {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const dir = out.trim().split("\n").at(-1) ?? "";
  if (!existsSync(join(dir, "kube-apiserver"))) {
    throw new Error(`hack/setup-envtest did not provide kube-apiserver (got "${dir}")`);
  }
  process.env.KUBEBUILDER_ASSETS = dir;
  return dir;
}

export class TestEnv {
  readonly dir: string;
  readonly assets: string;
  readonly token: string;
  readonly kubeconfigPath: string;
  server = "";
  kubeConfig = new KubeConfig();
  etcd?: ManagedProcess;
  apiServer?: ManagedProcess;
  controllerManager?: ManagedProcess;
  private apiServerArgs: string[] = [];
  private readonly opts: TestEnvOptions;
  private readonly etcdDataDir: string;
  private readonly keepDir: boolean;
  private stopped = false;

  private constructor(opts: TestEnvOptions) {
    this.opts = opts;
    this.assets = opts.assets ?? assetsDir();
    this.keepDir = !!opts.dir;
    if (opts.dir) {
      this.dir = opts.dir;
      mkdirSync(this.dir, { recursive: true });
    } else {
      this.dir = mkdtempSync(join(tmpdir(), "envtest-"));
      if (!process.env.ENVTEST_KEEP_DIR) removeOnExit(this.dir);
    }
    // A kept directory keeps its admin token, so kubeconfigs written earlier stay valid.
    this.token = (opts.dir && readAdminToken(join(this.dir, "tokens.csv"))) || randomBytes(24).toString("hex");
    this.kubeconfigPath = join(this.dir, "kubeconfig");
    this.etcdDataDir = opts.etcdDataDir ?? join(this.dir, "etcd");
  }

  /** The CA (the apiserver's self-signed serving certificate) clients trust; exists once started. */
  get caFile(): string {
    return join(this.dir, "apiserver-certs", "apiserver.crt");
  }

  private get processEnv(): NodeJS.ProcessEnv {
    return this.opts.processEnv ? { ...process.env, ...this.opts.processEnv } : process.env;
  }

  /** Start a control plane. On any failure everything started so far is stopped. */
  static async start(opts: TestEnvOptions = {}): Promise<TestEnv> {
    const env = new TestEnv(opts);
    try {
      await retryOnPortClash(() => env.startEtcd());
      await retryOnPortClash(() => env.startAPIServer());
      if (opts.controllerManager) await retryOnPortClash(() => env.startControllerManager());
      await env.installCRDs(opts.crdDirectoryPaths ?? [join(PROJECT_ROOT, "config", "crd", "bases")]);
      return env;
    } catch (err) {
      await env.stop();
      throw err;
    }
  }

  private log(msg: string): void {
    if (this.opts.verbose !== false) process.stderr.write(`envtest: ${msg}\n`);
  }

  private bin(name: string): string {
    return join(this.assets, name);
  }

  /** The control plane's Kubernetes version (kube-apiserver's). */
  get version(): KubeVersion {
    return binaryVersion(this.bin("kube-apiserver"));
  }

  /** kubectl from the assets, else the one on the PATH (assets of another version may come without it). */
  private get kubectlBin(): string {
    return existsSync(this.bin("kubectl")) ? this.bin("kubectl") : "kubectl";
  }

  /**
   * A token for a ServiceAccount from the TokenRequest API (GA since 1.20; what `kubectl create token`
   * asks for): since 1.24 no token Secret is created, so a test never waits for one.
   */
  async serviceAccountToken(namespace: string, name: string, expirationSeconds = 3600): Promise<string> {
    const api = this.kubeConfig.makeApiClient(CoreV1Api);
    const tr = await api.createNamespacedServiceAccountToken({
      namespace,
      name,
      body: {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { audiences: [], expirationSeconds },
      },
    });
    const token = tr.status?.token;
    if (!token) throw new Error(`TokenRequest for ${namespace}/${name} returned no token`);
    return token;
  }

  private async startEtcd(): Promise<void> {
    const [client, peer] = [await freePort(), await freePort()];
    mkdirSync(this.etcdDataDir, { recursive: true });
    const url = `http://127.0.0.1:${client}`;
    this.etcd = new ManagedProcess(
      "etcd",
      this.bin("etcd"),
      [
        `--data-dir=${this.etcdDataDir}`,
        `--listen-client-urls=${url}`,
        `--advertise-client-urls=${url}`,
        `--listen-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-cluster=default=http://127.0.0.1:${peer}`,
        "--unsafe-no-fsync=true",
      ],
      join(this.dir, "etcd.log"),
      this.processEnv,
    );
    this.etcdURL = url;
    await this.waitFor("etcd", this.etcd, () => httpOK(`${url}/health`), 30_000);
    this.log(
      `started ${firstLine(execFileSync(this.bin("etcd"), ["--version"], { encoding: "utf8" }))} (${this.bin("etcd")}) at ${url}`,
    );
  }

  etcdURL = "";

  private async startAPIServer(): Promise<void> {
    const port = await freePort();
    const certDir = join(this.dir, "apiserver-certs");
    mkdirSync(certDir, { recursive: true });
    // A kept directory keeps its service-account key: tokens issued earlier stay valid.
    if (!(this.keepDir && existsSync(join(this.dir, "sa.key")) && existsSync(join(this.dir, "sa.pub")))) {
      const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
      writeFileSync(join(this.dir, "sa.pub"), publicKey.export({ type: "spki", format: "pem" }));
      writeFileSync(join(this.dir, "sa.key"), privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
    }
    const tokenLines = [
      `${this.token},admin,admin,"system:masters"`,
      ...(this.opts.tokens ?? []).map((t) => `${t.token},${t.user},${t.uid ?? t.user},"${(t.groups ?? []).join(",")}"`),
    ];
    writeFileSync(join(this.dir, "tokens.csv"), tokenLines.join("\n") + "\n", { mode: 0o600 });
    this.apiServerArgs = [
      `--etcd-servers=${this.etcdURL}`,
      `--secure-port=${port}`,
      "--bind-address=127.0.0.1",
      "--advertise-address=127.0.0.1",
      `--cert-dir=${certDir}`,
      `--token-auth-file=${join(this.dir, "tokens.csv")}`,
      `--authorization-mode=${(this.opts.authorizationModes ?? ["RBAC"]).join(",")}`,
      "--service-account-issuer=https://kubernetes.default.svc",
      `--service-account-key-file=${join(this.dir, "sa.pub")}`,
      `--service-account-signing-key-file=${join(this.dir, "sa.key")}`,
      "--service-cluster-ip-range=10.0.0.0/24",
      ...(this.opts.enableAdmissionPlugins?.length
        ? [`--enable-admission-plugins=${this.opts.enableAdmissionPlugins.join(",")}`]
        : []),
      ...((this.opts.disableAdmissionPlugins ?? ["ServiceAccount"]).length
        ? [`--disable-admission-plugins=${(this.opts.disableAdmissionPlugins ?? ["ServiceAccount"]).join(",")}`]
        : []),
      "--allow-privileged=true",
      ...(this.opts.apiServerArgs ?? []),
    ];
    this.server = `https://127.0.0.1:${port}`;
    await this.launchAPIServer();
    this.log(
      `started ${firstLine(execFileSync(this.bin("kube-apiserver"), ["--version"], { encoding: "utf8" }))} (${this.bin("kube-apiserver")}) at ${this.server}`,
    );
  }

  private async launchAPIServer(): Promise<void> {
    this.apiServer = new ManagedProcess(
      "kube-apiserver",
      this.bin("kube-apiserver"),
      this.apiServerArgs,
      join(this.dir, "kube-apiserver.log"),
      this.processEnv,
    );
    const certFile = join(this.dir, "apiserver-certs", "apiserver.crt");
    await this.waitFor(
      "kube-apiserver",
      this.apiServer,
      () => existsSync(certFile) && httpOK(`${this.server}/readyz`, { token: this.token, ca: readFileSync(certFile) }),
      90_000,
    );
    this.writeKubeconfig(readFileSync(certFile));
  }

  /**
   * A second kube-apiserver on the same etcd, for tests that must change the cluster while the first
   * one is down (missed changes, 410 Gone). Stopped by stop() with the rest.
   */
  async startSecondAPIServer(): Promise<KubeConfig> {
    const port = await freePort();
    const certDir = join(this.dir, "apiserver2-certs");
    mkdirSync(certDir, { recursive: true });
    const args = this.apiServerArgs.map((a) =>
      a.startsWith("--secure-port=")
        ? `--secure-port=${port}`
        : a.startsWith("--cert-dir=")
          ? `--cert-dir=${certDir}`
          : a,
    );
    const proc = new ManagedProcess(
      "kube-apiserver-2",
      this.bin("kube-apiserver"),
      args,
      join(this.dir, "kube-apiserver-2.log"),
      this.processEnv,
    );
    this.extraProcesses.push(proc);
    const server = `https://127.0.0.1:${port}`;
    const certFile = join(certDir, "apiserver.crt");
    await this.waitFor(
      "kube-apiserver-2",
      proc,
      () => existsSync(certFile) && httpOK(`${server}/readyz`, { token: this.token, ca: readFileSync(certFile) }),
      90_000,
    );
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "envtest-2", server, caData: readFileSync(certFile).toString("base64") }],
      users: [{ name: "admin", token: this.token }],
      contexts: [{ name: "envtest-2", cluster: "envtest-2", user: "admin" }],
      currentContext: "envtest-2",
    });
    return kc;
  }

  private readonly extraProcesses: ManagedProcess[] = [];

  /** Stop kube-apiserver (etcd keeps the data) and start it again on the same port. */
  async restartAPIServer(downMs = 0): Promise<void> {
    await this.apiServer?.stop();
    if (downMs > 0) await sleep(downMs);
    await this.launchAPIServer();
  }

  private writeKubeconfig(ca: Buffer): void {
    const caData = ca.toString("base64");
    const cfg = {
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "envtest", cluster: { server: this.server, "certificate-authority-data": caData } }],
      users: [{ name: "envtest-admin", user: { token: this.token } }],
      contexts: [{ name: "envtest", context: { cluster: "envtest", user: "envtest-admin", namespace: "default" } }],
      "current-context": "envtest",
    };
    writeFileSync(this.kubeconfigPath, JSON.stringify(cfg, null, 2), { mode: 0o600 });
    const kc = new KubeConfig();
    kc.loadFromFile(this.kubeconfigPath);
    this.kubeConfig = kc;
  }

  private async startControllerManager(): Promise<void> {
    const cm = typeof this.opts.controllerManager === "object" ? this.opts.controllerManager : {};
    const port = await freePort();
    this.controllerManager = new ManagedProcess(
      "kube-controller-manager",
      this.bin("kube-controller-manager"),
      [
        `--kubeconfig=${this.kubeconfigPath}`,
        `--authentication-kubeconfig=${this.kubeconfigPath}`,
        `--authorization-kubeconfig=${this.kubeconfigPath}`,
        `--secure-port=${port}`,
        "--bind-address=127.0.0.1",
        "--leader-elect=false",
        ...insecurePortArgs(binaryVersion(this.bin("kube-controller-manager"))),
        `--controllers=${(cm.controllers ?? ["*"]).join(",")}`,
        `--service-account-private-key-file=${join(this.dir, "sa.key")}`,
        // The ca.crt of service-account token secrets: what pods verify the apiserver with.
        `--root-ca-file=${this.caFile}`,
        `--use-service-account-credentials=${cm.useServiceAccountCredentials === true}`,
        ...(cm.extraArgs ?? []),
      ],
      join(this.dir, "kube-controller-manager.log"),
      this.processEnv,
    );
    // Its serving certificate is self-signed and throwaway: only liveness matters here.
    await this.waitFor(
      "kube-controller-manager",
      this.controllerManager,
      () => httpOK(`https://127.0.0.1:${port}/healthz`, { insecure: true }),
      60_000,
    );
    this.log(`started kube-controller-manager (${this.bin("kube-controller-manager")})`);
  }

  /** Install CRDs the way `make install` does, then wait until each is Established. */
  async installCRDs(dirs: string[]): Promise<void> {
    for (const d of dirs) {
      if (!existsSync(d)) throw new Error(`CRD directory ${d} does not exist`);
      const apply = await this.kubectl(["apply", "--server-side", "--force-conflicts", "-f", d]);
      if (apply.code !== 0) throw new Error(`installing CRDs from ${d} failed: ${apply.stderr || apply.stdout}`);
      const names = apply.stdout
        .split("\n")
        .map((l) => /^customresourcedefinition\.apiextensions\.k8s\.io\/(\S+)/.exec(l)?.[1])
        .filter((n): n is string => !!n);
      for (const n of names) await this.waitEstablished(n);
    }
  }

  /** Poll until the CRD is Established and its API is discoverable (kubectl wait trips over a nil status). */
  async waitEstablished(name: string, timeoutMs = 60_000): Promise<void> {
    const api = this.kubeConfig.makeApiClient(ApiextensionsV1Api);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const crd = await api.readCustomResourceDefinition({ name }).catch(() => undefined);
      const ok = crd?.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");
      if (ok) return;
      if (Date.now() > deadline) throw new Error(`CRD ${name} did not become Established within ${timeoutMs} ms`);
      await sleep(100);
    }
  }

  /** Run kubectl against this control plane. */
  kubectl(args: string[], input?: string): Promise<CommandResult> {
    return new Promise((resolveP) => {
      const child = execFile(
        this.kubectlBin,
        // Its discovery and HTTP caches in this environment's directory, not ~/.kube/cache.
        [`--kubeconfig=${this.kubeconfigPath}`, `--cache-dir=${join(this.dir, "kubectl-cache")}`, ...args],
        { maxBuffer: 64 * 1024 * 1024, env: { ...process.env, KUBECONFIG: this.kubeconfigPath } },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
          resolveP({ code, stdout, stderr });
        },
      );
      if (input !== undefined) child.stdin?.end(input);
    });
  }

  /** Stop everything and remove temporary files. Safe to call twice. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.controllerManager?.stop();
    for (const p of this.extraProcesses) await p.stop();
    await this.apiServer?.stop();
    await this.etcd?.stop();
    if (this.keepDir) return;
    if (process.env.ENVTEST_KEEP_DIR) {
      this.log(`kept ${this.dir}`);
      return;
    }
    // A caller-provided etcd data dir lives outside this.dir and is kept.
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async waitFor(
    what: string,
    proc: ManagedProcess,
    ready: () => boolean | Promise<boolean>,
    timeoutMs: number,
  ): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!proc.running)
        throw new Error(
          `${what} exited during start-up; see ${join(this.dir, `${what}.log`)}:\n${tail(join(this.dir, `${what}.log`))}`,
        );
      if (await ready()) return;
      await sleep(200);
    }
    throw new Error(`${what} was not ready after ${timeoutMs} ms:\n${tail(join(this.dir, `${what}.log`))}`);
  }
}

let shared: Promise<TestEnv> | undefined;

/**
 * One control plane per test process, started on first use and stopped when the process exits
 * (test files that run in the same process share it).
 */
export function sharedTestEnv(opts: TestEnvOptions = {}): Promise<TestEnv> {
  if (!shared) {
    shared = TestEnv.start(opts);
    shared.then(
      (env) => {
        // A graceful stop when the runner is done; processes.ts kills and cleans up on any other exit.
        process.once("beforeExit", () => void env.stop());
      },
      () => undefined,
    );
  }
  return shared;
}

/** The admin token of an existing tokens.csv (its `…,admin,admin,…` line). */
function readAdminToken(file: string): string | undefined {
  try {
    const line = readFileSync(file, "utf8")
      .split("\n")
      .find((l) => l.split(",")[1] === "admin");
    return line?.split(",")[0] || undefined;
  } catch {
    return undefined;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function firstLine(s: string): string {
  return s.split("\n")[0]?.trim() ?? "";
}

function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

function httpOK(url: string, o: { token?: string; ca?: Buffer; insecure?: boolean } = {}): Promise<boolean> {
  if (url.startsWith("http://")) {
    return fetch(url, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.ok,
      () => false,
    );
  }
  return new Promise((resolveP) => {
    const req = request(
      url,
      {
        ca: o.ca,
        rejectUnauthorized: !o.insecure,
        headers: o.token ? { authorization: `Bearer ${o.token}` } : {},
        timeout: 2000,
      },
      (res) => {
        res.resume();
        resolveP(res.statusCode === 200);
      },
    );
    req.on("error", () => resolveP(false));
    req.on("timeout", () => req.destroy());
    req.end();
  });
}

/**
 * Runs a component's start-up again (with new ports) when it failed because its port was taken: freePort()
 * returns a port that was free a moment ago, and with test files running in parallel another process (or an
 * outgoing connection's ephemeral port) can take it before the component binds it.
 */
async function retryOnPortClash(start: () => Promise<void>, attempts = 3): Promise<void> {
  for (let i = 1; ; i++) {
    try {
      return await start();
    } catch (err) {
      if (i >= attempts || !/address already in use/.test(String(err))) throw err;
      process.stderr.write(
        `envtest: a port was taken during start-up; trying again with new ports (${i}/${attempts})\n`,
      );
    }
  }
}
