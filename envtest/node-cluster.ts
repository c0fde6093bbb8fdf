// A local Kubernetes cluster with a real node: the envtest control plane (etcd, kube-apiserver,
// kube-controller-manager with all default controllers) plus kube-scheduler, containerd + runc, a CNI
// bridge and a kubelet named "localhost" at NODE_IP (10.218.0.1). Jobs run Pods; owner references are
// garbage collected; `kubectl logs` works. Needs root. The binaries and the local images come from
// `hack/setup-envtest --node` (cached in ~/.cache/cronjob-operator/envtest/node-<version>).
//
//   const cluster = await NodeCluster.start();          // returns when the node is Ready (docs/development.md)
//   await cluster.kubectl(["apply", "-f", "-"], yaml);
//   await cluster.importImage("operator.oci.tar", "localhost/cronjob-operator:dev");
//   await cluster.stop();                                // the machine is as it was
//
// Nothing listens on a real interface: the apiserver, the kubelet, the scheduler, the controller-manager
// and containerd's streaming server bind 127.0.0.1. The node's IP, NODE_IP, is a host-local address on
// an interface of its own (NODE_LINK, cjo-node0: a dummy interface, or a bridge without ports, which
// transmits nothing off the machine; see node-host.ts), created at start and deleted by stop(). It is not
// loopback because kube-apiserver 1.20 refuses loopback addresses in Endpoints. hostNetwork pods get
// NODE_IP as their pod IP, so a Service in front of one has Endpoints, and the apiserver reaches it
// through the Service (`--enable-aggregator-routing=true`: webhooks and aggregated APIs are dialled at
// the endpoint address; the service proxy, /api/v1/namespaces/NS/services/SVC:PORT/proxy/, too). Such a
// pod's probes (host defaults to the pod IP) and Endpoints need it to listen on NODE_IP (its pod IP or
// every address), not only on 127.0.0.1. Pods without hostNetwork live in network namespaces on a bridge
// whose only host address is POD_GATEWAY_IP (no default route, no masquerading, no forwarding, no iptables
// rules: pods reach this host there and nothing else). The apiserver, the kubelet's probes and the tests reach
// pods at their pod IPs over that bridge. There is no kube-proxy and no cluster DNS: a pod that must reach the
// apiserver gets KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT from apiServerForPods() (POD_GATEWAY_IP,
// forwarded to the apiserver's loopback port; the apiserver advertises it, so its certificate covers it), or
// runs with hostNetwork and 127.0.0.1. The apiserver reaches the kubelet (`kubectl logs`, exec) by the
// node's Hostname address, "localhost" (127.0.0.1), where the kubelet listens, not by its InternalIP.
//
// Host hygiene (node-host.ts): sysctls, /kubepods cgroups, the bridge, the node's interface, host
// directories, mounts and processes are recorded before the node starts and restored by stop(); if this
// process dies first, the reaper (node-reaper.ts) restores them within a second or two; if that dies
// too, the next start does.
import { execFile, execFileSync, spawn } from "node:child_process";
import { randomBytes, X509Certificate } from "node:crypto";
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import { stringify } from "yaml";
import { generateCertificate } from "../runtime/selfsigned.ts";
import { type CommandResult, PROJECT_ROOT, TestEnv } from "./index.ts";
import { forwardTCP, type TCPForwarder } from "./tcp-forward.ts";
import {
  addNodeLink,
  addPodBridge,
  CNI_BRIDGE,
  CNI_NETWORK,
  cleanupHost,
  type CleanupReport,
  type HostRecord,
  MARKER_ENV,
  mountsUnder,
  NODE_IP,
  NODE_NAME,
  nodeHostDir,
  POD_GATEWAY_IP,
  POD_SUBNET,
  processRef,
  readHostRecord,
  removeHostRecord,
  unmountUnder,
} from "./node-host.ts";
import { freePort } from "./ports.ts";
import { ManagedProcess } from "./processes.ts";
import {
  binaryVersion,
  containerRuntimeArgs,
  insecurePortArgs,
  kubeletConfigFields,
  podsNeedTokenSecret,
} from "./versions.ts";

export { NODE_IP, NODE_LINK, NODE_NAME } from "./node-host.ts";

/** Images every node has (imported from setup-envtest's OCI archives at start). */
export const BUSYBOX_IMAGE = "localhost/busybox:latest";
export const PAUSE_IMAGE = "localhost/pause:latest";

/**
 * A Job spec whose one Pod runs `command` (a shell command, run with sh -c, or an argv) in the node's local busybox
 * image, once: backoffLimit 0, restartPolicy Never, a 1 s grace period so that deleting it is quick.
 */
export function nodeJobSpec(command: string | readonly string[]): Record<string, unknown> {
  return {
    backoffLimit: 0,
    template: {
      spec: {
        restartPolicy: "Never",
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: "run",
            image: BUSYBOX_IMAGE,
            imagePullPolicy: "Never",
            command: typeof command === "string" ? ["sh", "-c", command] : [...command],
          },
        ],
      },
    },
  };
}

const REAPER = join(PROJECT_ROOT, "envtest", "node-reaper.ts");
const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export interface NodeClusterOptions {
  /**
   * Keep the cluster in this directory: etcd data, keys, certificates and tokens survive stop() and are
   * reused by the next start (kubeconfigs stay valid; Pods come back as after a node reboot). The
   * node's own state (containerd, kubelet, CNI) is always wiped. Default: a fresh directory under the
   * system temp dir, removed by stop().
   */
  dir?: string;
  /** CRD directories to install once the apiserver is up (default: none). */
  crdDirectoryPaths?: string[];
  /** More OCI image archives to import before the node is reported ready. */
  images?: { path: string; name: string }[];
  /** Extra kube-apiserver flags. */
  apiServerArgs?: string[];
  /** Extra kubelet flags. */
  kubeletArgs?: string[];
  /** How long to wait for the node to be Ready (default 180 s). */
  readyTimeoutMs?: number;
  /** How long to wait for another local node cluster on this machine to stop (default 30 min). */
  lockTimeoutMs?: number;
  /** Progress on stderr (default true). */
  verbose?: boolean;
}

export interface NodeClusterTimings {
  /** hack/setup-envtest --node (milliseconds; ~0 when cached). */
  provisionMs: number;
  /** Waiting for the machine's node lock and cleaning up after an earlier cluster. */
  lockMs: number;
  /** etcd + kube-apiserver + kube-controller-manager. */
  controlPlaneMs: number;
  /** containerd up and the images imported. */
  runtimeMs: number;
  /** kubelet start until the node is Ready. */
  nodeReadyMs: number;
  /** NodeCluster.start() from the call to its return (after provisioning). */
  startMs: number;
}

const ROOT_MESSAGE =
  "NodeCluster needs root: the kubelet and containerd mount filesystems, create cgroups (/kubepods), " +
  "a network bridge and network namespaces, and set kernel sysctls (vm.overcommit_memory, kernel.panic, " +
  "kernel.panic_on_oops; all restored on stop). Run as root (CI does), e.g. `sudo -E make test`.";

/** Throws a plain explanation when this process is not root. */
export function requireRoot(): void {
  if (process.getuid?.() !== 0) throw new Error(ROOT_MESSAGE);
}

/**
 * The node assets directory (kubelet, kube-scheduler, pause, images/ and links to the control plane):
 * $NODE_CLUSTER_ASSETS if set, else `hack/setup-envtest --node` (cached runs take milliseconds; the
 * first one installs Debian packages and builds kubelet and kube-scheduler, a few minutes).
 */
export function nodeAssetsDir(): string {
  const env = process.env.NODE_CLUSTER_ASSETS;
  if (env && existsSync(join(env, "kubelet"))) return env;
  const out = execFileSync(join(PROJECT_ROOT, "hack", "setup-envtest"), ["--node"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const dir = out.trim().split("\n").at(-1) ?? "";
  if (!existsSync(join(dir, "kubelet"))) {
    throw new Error(`hack/setup-envtest --node did not provide kubelet (got "${dir}")`);
  }
  process.env.NODE_CLUSTER_ASSETS = dir;
  return dir;
}

export interface StaleCleanupResult {
  /** "clean": nothing was left; "cleaned": an earlier cluster's leftovers were removed; "busy": a live
   *  cluster holds the machine's node lock (nothing was touched). */
  status: "clean" | "cleaned" | "busy";
  /** What could not be restored (status "cleaned" only). */
  problems: string[];
}

/**
 * Remove what a local node cluster that died without stopping left on this machine (processes, mounts,
 * cgroups, the bridge and the node's interface, sysctls, directories), using the record it wrote before
 * it started. Idempotent; NodeCluster.start() does it too. Waits up to `waitMs` (default 0) for a running
 * cluster to stop.
 */
export async function cleanupStaleNodeCluster(opts: { waitMs?: number } = {}): Promise<StaleCleanupResult> {
  requireRoot();
  mkdirSync(nodeHostDir(), { recursive: true });
  const waitS = Math.ceil((opts.waitMs ?? 0) / 1000);
  const flockArgs = waitS > 0 ? ["-w", String(waitS)] : ["-n"];
  const res = await run("flock", [...flockArgs, join(nodeHostDir(), "lock"), process.execPath, REAPER, "clean"], {
    env: withoutMarker(),
  });
  const line = res.stdout.trim().split("\n").at(-1) ?? "";
  if (!line.startsWith("{")) {
    if (res.code === 1 && !line) return { status: "busy", problems: [] };
    throw new Error(`node cleanup failed (exit ${res.code}): ${res.stderr || res.stdout}`);
  }
  const r = JSON.parse(line) as { cleaned: boolean; busy?: boolean; problems: string[] };
  return { status: r.busy ? "busy" : r.cleaned ? "cleaned" : "clean", problems: r.problems };
}

export class NodeCluster {
  /** The cluster directory: control-plane/ (etcd, keys, certificates), pki/, kubeconfig, logs/, and the
   *  node state wiped at every stop: containerd/ (root, state, containerd.sock), node/ (kubelet, CNI, runc). */
  readonly dir: string;
  /** The node assets directory (binaries and images). */
  readonly assets: string;
  readonly nodeName = NODE_NAME;
  readonly nodeIP = NODE_IP;
  /** containerd's socket (for `ctr --address`); images for pods live in its "k8s.io" namespace. */
  readonly containerdSocket: string;
  /** Admin kubeconfig (system:masters), a stable path in the cluster directory. */
  readonly kubeconfigPath: string;
  readonly timings: NodeClusterTimings = {
    provisionMs: 0,
    lockMs: 0,
    controlPlaneMs: 0,
    runtimeMs: 0,
    nodeReadyMs: 0,
    startMs: 0,
  };
  /** The control plane (etcd, kube-apiserver, kube-controller-manager). */
  env!: TestEnv;
  scheduler?: ManagedProcess;
  containerd?: ManagedProcess;
  kubelet?: ManagedProcess;
  /** What the last stop() did to the machine. */
  lastCleanup?: CleanupReport;

  /** The reaper's process group (flock and node-reaper.ts), which restores the machine if this process dies. */
  get reaperPid(): number | undefined {
    return this.host?.reaperPid;
  }

  private readonly opts: NodeClusterOptions;
  private readonly nodeDir: string;
  private readonly containerdDir: string;
  private readonly logDir: string;
  private readonly marker: Record<string, string>;
  private host?: HostLease;
  private podForwarder?: TCPForwarder;
  private stopping?: Promise<void>;

  private constructor(dir: string, assets: string, opts: NodeClusterOptions) {
    this.dir = dir;
    this.assets = assets;
    this.opts = opts;
    this.nodeDir = join(dir, "node");
    this.logDir = join(dir, "logs");
    this.containerdDir = join(dir, "containerd");
    this.containerdSocket = join(this.containerdDir, "containerd.sock");
    this.kubeconfigPath = join(dir, "kubeconfig");
    this.marker = { [MARKER_ENV]: dir };
  }

  /** Admin client configuration. */
  get kubeConfig(): KubeConfig {
    return this.env.kubeConfig;
  }

  /** https://127.0.0.1:<port> */
  get server(): string {
    return this.env.server;
  }

  get apiServerPort(): number {
    return Number(new URL(this.env.server).port);
  }

  /**
   * Where a pod (no hostNetwork) reaches the apiserver: POD_GATEWAY_IP, the host's address on the pods'
   * bridge, forwarded to the apiserver's loopback port. There is no kube-proxy, so the ClusterIP the kubelet
   * injects leads nowhere: give a pod that talks to the apiserver these as KUBERNETES_SERVICE_HOST and
   * KUBERNETES_SERVICE_PORT. The apiserver's certificate is valid for this address.
   */
  apiServerForPods(): { host: string; port: number } {
    return { host: POD_GATEWAY_IP, port: this.apiServerPort };
  }

  /** The apiserver's CA certificate file (what pods and kubeconfigs trust). */
  get caFile(): string {
    return this.env.caFile;
  }

  /**
   * Start a cluster and wait until its node is Ready and the default service account of "default" has
   * its token. Fails plainly without root. Waits for another local node cluster on this machine to stop
   * first (one at a time: they would share /kubepods and /var/log/pods). On any failure everything
   * started is stopped and the machine restored.
   */
  static async start(opts: NodeClusterOptions = {}): Promise<NodeCluster> {
    requireRoot();
    const t0 = performance.now();
    const assets = nodeAssetsDir();
    const t1 = performance.now();
    const dir = resolve(opts.dir ?? join(tmpdir(), `node-cluster-${randomBytes(4).toString("hex")}`));
    const cluster = new NodeCluster(dir, assets, opts);
    cluster.timings.provisionMs = Math.round(t1 - t0);
    try {
      cluster.host = await acquireHost(
        {
          dir,
          wipe: [cluster.nodeDir, cluster.containerdDir],
          removeDir: !opts.dir,
          owner: processRef(process.pid),
        },
        opts.lockTimeoutMs ?? 30 * 60_000,
        (m) => cluster.log(m),
      );
      cluster.timings.lockMs = Math.round(performance.now() - t1);
      await cluster.startAll();
      cluster.timings.startMs = Math.round(performance.now() - t1);
      cluster.log(
        `node ${NODE_NAME} Ready in ${(cluster.timings.startMs / 1000).toFixed(1)} s (control plane ${(cluster.timings.controlPlaneMs / 1000).toFixed(1)} s, kubelet → Ready ${(cluster.timings.nodeReadyMs / 1000).toFixed(1)} s); KUBECONFIG=${cluster.kubeconfigPath}`,
      );
      return cluster;
    } catch (err) {
      const kept = cluster.keepLogs();
      await cluster.stop().catch((e: unknown) => cluster.log(`stop after failed start: ${(e as Error).message}`));
      if (kept && err instanceof Error) err.message += `\n(logs of this start kept in ${kept})`;
      throw err;
    }
  }

  /** Copy the logs of a failed start out of a throwaway cluster directory (which stop() removes). */
  private keepLogs(): string | undefined {
    if (this.opts.dir || !existsSync(this.dir)) return undefined;
    const dest = join(nodeHostDir(), "failed-start-logs");
    try {
      rmSync(dest, { recursive: true, force: true });
      mkdirSync(dest, { recursive: true });
      for (const d of [this.logDir, join(this.dir, "control-plane")]) {
        if (!existsSync(d)) continue;
        for (const f of readdirSync(d)) if (f.endsWith(".log")) copyFileSync(join(d, f), join(dest, f));
      }
      return dest;
    } catch {
      return undefined;
    }
  }

  private log(msg: string): void {
    if (this.opts.verbose !== false) process.stderr.write(`node-cluster: ${msg}\n`);
  }

  private bin(name: string): string {
    return join(this.assets, name);
  }

  private async startAll(): Promise<void> {
    // Leftovers of a kept cluster's node state (the stale cleanup normally removed them already).
    for (const d of [this.nodeDir, this.containerdDir]) {
      if (!existsSync(d)) continue;
      unmountUnder([d], (m) => this.log(m));
      if (mountsUnder([d]).length === 0) rmSync(d, { recursive: true, force: true });
    }
    for (const d of [this.dir, this.nodeDir, this.logDir]) mkdirSync(d, { recursive: true });
    // The node's address (the host record lists its interface already: cleanup removes it).
    addNodeLink((m) => this.log(m));
    addPodBridge((m) => this.log(m));
    forgetCertificateWithoutSAN(join(this.dir, "control-plane", "apiserver-certs"), POD_GATEWAY_IP, (m) => this.log(m));
    const pki = await this.writePKI();
    const kubeletToken = randomBytes(24).toString("hex");

    const tCP = performance.now();
    this.env = await TestEnv.start({
      assets: this.assets,
      dir: join(this.dir, "control-plane"),
      crdDirectoryPaths: this.opts.crdDirectoryPaths ?? [],
      authorizationModes: ["Node", "RBAC"],
      enableAdmissionPlugins: ["NodeRestriction"],
      // ServiceAccount admission on: pods get their token volume, as on a real cluster.
      disableAdmissionPlugins: [],
      tokens: [{ token: kubeletToken, user: `system:node:${NODE_NAME}`, uid: "kubelet", groups: ["system:nodes"] }],
      apiServerArgs: [
        // Webhooks and aggregated APIs behind a Service are dialled at the endpoint (no kube-proxy here).
        "--enable-aggregator-routing=true",
        `--kubelet-client-certificate=${pki.clientCert}`,
        `--kubelet-client-key=${pki.clientKey}`,
        // The kubelet listens on 127.0.0.1 only: reach it by its Hostname address ("localhost"), not by
        // its InternalIP (NODE_IP).
        "--kubelet-preferred-address-types=Hostname,InternalIP",
        // Pods reach the apiserver at POD_GATEWAY_IP (forwarded to its loopback port): as its advertised
        // address, it is in the serving certificate the apiserver generates, which pods verify.
        `--advertise-address=${POD_GATEWAY_IP}`,
        ...(this.opts.apiServerArgs ?? []),
      ],
      controllerManager: { useServiceAccountCredentials: true },
      processEnv: this.marker,
      verbose: this.opts.verbose,
    });
    this.timings.controlPlaneMs = Math.round(performance.now() - tCP);
    copyFileSync(this.env.kubeconfigPath, this.kubeconfigPath);
    this.podForwarder = await forwardTCP(POD_GATEWAY_IP, this.apiServerPort, "127.0.0.1", this.apiServerPort);

    const tRT = performance.now();
    const schedulerReady = this.startScheduler();
    schedulerReady.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
    await this.startContainerd();
    await this.importImage(join(this.assets, "images", "pause.oci.tar"), PAUSE_IMAGE);
    await this.importImage(join(this.assets, "images", "busybox.oci.tar"), BUSYBOX_IMAGE);
    for (const img of this.opts.images ?? []) await this.importImage(img.path, img.name);
    this.timings.runtimeMs = Math.round(performance.now() - tRT);

    const tK = performance.now();
    await this.startKubelet(kubeletToken, pki.caCert);
    await schedulerReady;
    await this.waitNodeReady(this.opts.readyTimeoutMs ?? 180_000);
    this.timings.nodeReadyMs = Math.round(performance.now() - tK);
    await this.waitDefaultServiceAccount(60_000);
  }

  /** The CA the kubelet trusts for client certificates, and the apiserver's client certificate. */
  private async writePKI(): Promise<{ caCert: string; clientCert: string; clientKey: string }> {
    const dir = join(this.dir, "pki");
    mkdirSync(dir, { recursive: true });
    const f = {
      caCert: join(dir, "kubelet-client-ca.crt"),
      caKey: join(dir, "kubelet-client-ca.key"),
      clientCert: join(dir, "apiserver-kubelet-client.crt"),
      clientKey: join(dir, "apiserver-kubelet-client.key"),
    };
    if ([f.caCert, f.caKey, f.clientCert, f.clientKey].every((p) => existsSync(p))) return f;
    const now = Date.now();
    const validity = { notBeforeDate: new Date(now - 5 * 60_000), notAfterDate: new Date(now + 3650 * 86_400_000) };
    const ca = await generateCertificate([{ name: "commonName", value: "cronjob-operator-kubelet-client-ca" }], {
      keyType: "ec",
      algorithm: "sha256",
      ...validity,
      extensions: [
        { name: "basicConstraints", cA: true, critical: true },
        { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
      ],
    });
    const client = await generateCertificate(
      [
        { name: "commonName", value: "kube-apiserver-kubelet-client" },
        { name: "organizationName", value: "system:masters" },
      ],
      {
        keyType: "ec",
        algorithm: "sha256",
        ...validity,
        ca: { cert: ca.cert, key: ca.private },
        extensions: [
          { name: "basicConstraints", cA: false, critical: true },
          { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
          { name: "extKeyUsage", clientAuth: true },
        ],
      },
    );
    writeFileSync(f.caCert, ca.cert);
    writeFileSync(f.caKey, ca.private, { mode: 0o600 });
    writeFileSync(f.clientCert, client.cert);
    writeFileSync(f.clientKey, client.private, { mode: 0o600 });
    return f;
  }

  private managed(name: string, bin: string, args: string[]): ManagedProcess {
    const logFile = join(this.logDir, `${name}.log`);
    writeFileSync(logFile, "");
    return new ManagedProcess(name, bin, args, logFile, {
      ...process.env,
      PATH: `${process.env.PATH ?? ""}:${SYSTEM_PATH}`,
      ...this.marker,
    });
  }

  private async startScheduler(): Promise<void> {
    const port = await freePort();
    const kc = this.env.kubeconfigPath;
    this.scheduler = this.managed("kube-scheduler", this.bin("kube-scheduler"), [
      `--kubeconfig=${kc}`,
      `--authentication-kubeconfig=${kc}`,
      `--authorization-kubeconfig=${kc}`,
      "--leader-elect=false",
      ...insecurePortArgs(binaryVersion(this.bin("kube-scheduler"))),
      "--bind-address=127.0.0.1",
      `--secure-port=${port}`,
    ]);
    await this.waitFor("kube-scheduler", this.scheduler, () => httpsOK(`https://127.0.0.1:${port}/healthz`), 60_000);
    this.log("started kube-scheduler");
  }

  private async startContainerd(): Promise<void> {
    const c = this.containerdDir;
    const cniConfDir = join(this.nodeDir, "cni", "net.d");
    mkdirSync(cniConfDir, { recursive: true });
    writeFileSync(
      join(cniConfDir, `10-${CNI_NETWORK}.conflist`),
      JSON.stringify(
        {
          cniVersion: "0.4.0",
          name: CNI_NETWORK,
          plugins: [
            {
              // The bridge addPodBridge made (POD_GATEWAY_IP on the host): not the pods' gateway, no
              // masquerading, no iptables rules.
              type: "bridge",
              bridge: CNI_BRIDGE,
              isGateway: false,
              isDefaultGateway: false,
              ipMasq: false,
              hairpinMode: false,
              ipam: {
                type: "host-local",
                ranges: [[{ subnet: POD_SUBNET }]],
                dataDir: join(this.nodeDir, "cni", "ipam"),
              },
            },
          ],
        },
        null,
        2,
      ),
    );
    const cri = 'plugins."io.containerd.grpc.v1.cri"';
    const toml = [
      "version = 2",
      `root = ${q(join(c, "root"))}`,
      `state = ${q(join(c, "state"))}`,
      // Plugins that would create directories outside root/state, or that we do not use.
      `disabled_plugins = ${JSON.stringify([
        "io.containerd.internal.v1.opt",
        "io.containerd.snapshotter.v1.aufs",
        "io.containerd.snapshotter.v1.btrfs",
        "io.containerd.snapshotter.v1.zfs",
        "io.containerd.snapshotter.v1.devmapper",
        "io.containerd.tracing.processor.v1.otlp",
      ])}`,
      "[grpc]",
      `  address = ${q(this.containerdSocket)}`,
      "[ttrpc]",
      `  address = ""`,
      "[debug]",
      `  address = ""`,
      "[metrics]",
      `  address = ""`,
      // The legacy v1 runtime is required by the tasks service; unused, but kept off /run/containerd/runc.
      `[plugins."io.containerd.runtime.v1.linux"]`,
      `  runtime_root = ${q(join(this.nodeDir, "runc"))}`,
      `[${cri}]`,
      `  sandbox_image = ${q(PAUSE_IMAGE)}`,
      // Root here lacks CAP_SYS_RESOURCE: runc must not raise oom_score_adj above containerd's own.
      "  restrict_oom_score_adj = true",
      // Network namespaces under the state dir instead of /var/run/netns.
      "  netns_mounts_under_state_dir = true",
      `  stream_server_address = "127.0.0.1"`,
      `  stream_server_port = "0"`,
      "  enable_selinux = false",
      `[${cri}.containerd]`,
      `  snapshotter = "overlayfs"`,
      `  default_runtime_name = "runc"`,
      `[${cri}.containerd.runtimes.runc]`,
      `  runtime_type = "io.containerd.runc.v2"`,
      `[${cri}.containerd.runtimes.runc.options]`,
      `  Root = ${q(join(this.nodeDir, "runc"))}`,
      "  SystemdCgroup = false",
      `[${cri}.cni]`,
      `  bin_dir = "/usr/lib/cni"`,
      `  conf_dir = ${q(cniConfDir)}`,
      "  max_conf_num = 1",
      "",
    ].join("\n");
    mkdirSync(c, { recursive: true });
    const config = join(c, "config.toml");
    writeFileSync(config, toml);
    this.containerd = this.managed("containerd", "containerd", ["--config", config]);
    await this.waitFor(
      "containerd",
      this.containerd,
      async () => existsSync(this.containerdSocket) && (await this.ctr(["version"])).code === 0,
      60_000,
    );
    this.log(`started containerd (${this.containerdSocket})`);
  }

  /** Run `ctr` against this node's containerd, in the "k8s.io" namespace (the one the kubelet uses). */
  ctr(args: string[]): Promise<CommandResult> {
    return run("ctr", ["--address", this.containerdSocket, "--namespace", "k8s.io", ...args], {
      env: { ...process.env, PATH: `${process.env.PATH ?? ""}:${SYSTEM_PATH}` },
    });
  }

  /**
   * Import an image archive (an OCI layout as a tar, e.g. from umoci; or `docker save` output) under
   * `name` (e.g. "localhost/cronjob-operator:dev"), for Pods with imagePullPolicy Never/IfNotPresent.
   * Importing the same name again replaces it.
   */
  async importImage(archivePath: string, name: string): Promise<void> {
    if (!existsSync(archivePath)) throw new Error(`image archive ${archivePath} does not exist`);
    // --index-name names the whole archive `name`, whatever tags it carries inside; the tags themselves
    // land under a throwaway prefix, removed right after.
    const scratch = `cronjob-operator.invalid/import-${randomBytes(4).toString("hex")}`;
    const r = await this.ctr(["images", "import", "--index-name", name, "--base-name", scratch, archivePath]);
    if (r.code !== 0) throw new Error(`importing ${archivePath} as ${name} failed: ${r.stderr || r.stdout}`);
    const ls = await this.ctr(["images", "ls", "-q"]);
    const extra = ls.stdout.split("\n").filter((n) => n.startsWith(`${scratch}:`) || n.startsWith(`${scratch}@`));
    if (extra.length > 0) await this.ctr(["images", "rm", ...extra]);
    this.log(`imported ${name}`);
  }

  private async startKubelet(token: string, clientCA: string): Promise<void> {
    const kubeletDir = join(this.nodeDir, "kubelet");
    mkdirSync(kubeletDir, { recursive: true });
    const ca = readFileSync(this.env.caFile).toString("base64");
    const kubeconfig = join(this.nodeDir, "kubelet.kubeconfig");
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "local", cluster: { server: this.env.server, "certificate-authority-data": ca } }],
        users: [{ name: "kubelet", user: { token } }],
        contexts: [{ name: "kubelet", context: { cluster: "local", user: "kubelet" } }],
        "current-context": "kubelet",
      }),
      { mode: 0o600 },
    );
    const [port, healthzPort] = [await freePort(), await freePort()];
    const configFile = join(this.nodeDir, "kubelet-config.yaml");
    writeFileSync(
      configFile,
      stringify({
        apiVersion: "kubelet.config.k8s.io/v1beta1",
        kind: "KubeletConfiguration",
        address: "127.0.0.1",
        port,
        readOnlyPort: 0,
        healthzBindAddress: "127.0.0.1",
        healthzPort,
        cgroupDriver: "cgroupfs",
        failSwapOn: false,
        // The apiserver authenticates with its client certificate; everything else asks the apiserver.
        authentication: {
          anonymous: { enabled: false },
          webhook: { enabled: true, cacheTTL: "10s" },
          x509: { clientCAFile: clientCA },
        },
        authorization: { mode: "Webhook", webhook: { cacheAuthorizedTTL: "10s", cacheUnauthorizedTTL: "5s" } },
        // No KUBE-* chains in the host's iptables.
        makeIPTablesUtilChains: false,
        // Default /usr/libexec/kubernetes/kubelet-plugins/volume/exec, created at start.
        volumePluginDir: join(this.nodeDir, "volume-plugins"),
        // The local images cannot be pulled again: never garbage-collect them.
        imageGCHighThresholdPercent: 100,
        imageGCLowThresholdPercent: 99,
        evictionHard: {
          "memory.available": "50Mi",
          "nodefs.available": "2%",
          "imagefs.available": "2%",
          "nodefs.inodesFree": "2%",
        },
        // Ready (and other status changes) reach the apiserver within 2 s instead of 10.
        nodeStatusUpdateFrequency: "2s",
        serializeImagePulls: false,
        ...kubeletConfigFields(binaryVersion(this.bin("kubelet")), !isCgroupV2()),
      }),
    );
    this.kubelet = this.managed("kubelet", this.bin("kubelet"), [
      `--config=${configFile}`,
      `--kubeconfig=${kubeconfig}`,
      `--root-dir=${kubeletDir}`,
      `--cert-dir=${join(kubeletDir, "pki")}`,
      ...containerRuntimeArgs(binaryVersion(this.bin("kubelet"))),
      `--container-runtime-endpoint=unix://${this.containerdSocket}`,
      "--runtime-request-timeout=2m",
      `--hostname-override=${NODE_NAME}`,
      `--node-ip=${NODE_IP}`,
      "--v=1",
      ...(this.opts.kubeletArgs ?? []),
    ]);
    await this.waitFor(
      "kubelet",
      this.kubelet,
      () =>
        fetch(`http://127.0.0.1:${healthzPort}/healthz`).then(
          (r) => r.ok,
          () => false,
        ),
      120_000,
    );
    this.log("started kubelet");
  }

  private async waitNodeReady(timeoutMs: number): Promise<void> {
    const api = this.env.kubeConfig.makeApiClient(CoreV1Api);
    const kubelet = this.kubelet;
    if (!kubelet) throw new Error("kubelet not started");
    await this.waitFor(
      "kubelet",
      kubelet,
      async () => {
        const node = await api.readNode({ name: NODE_NAME }).catch(() => undefined);
        return !!node?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
      },
      timeoutMs,
      `node ${NODE_NAME} Ready`,
    );
  }

  /**
   * With ServiceAccount admission on, a namespace's pods are refused until its default ServiceAccount
   * exists, and before 1.21 also until its token Secret does (versions.ts: podsNeedTokenSecret).
   */
  private async waitDefaultServiceAccount(timeoutMs: number): Promise<void> {
    const api = this.env.kubeConfig.makeApiClient(CoreV1Api);
    const needSecret = podsNeedTokenSecret(this.env.version);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const sa = await api
        .readNamespacedServiceAccount({ name: "default", namespace: "default" })
        .catch(() => undefined);
      if (sa && (!needSecret || (sa.secrets?.length ?? 0) > 0)) return;
      if (Date.now() > deadline) {
        throw new Error(
          `service account default/default ${sa ? "has no token Secret" : "does not exist"} after ${timeoutMs} ms`,
        );
      }
      await sleep(200);
    }
  }

  /** Run kubectl with the admin kubeconfig. */
  kubectl(args: string[], stdin?: string): Promise<CommandResult> {
    return this.env.kubectl(args, stdin);
  }

  /**
   * Stop everything and put the machine back as it was: processes (containerd's shims and the pods'
   * processes included), mounts, /kubepods cgroups, the bridge and the node's interface, sysctls, host
   * directories; then the cluster directory (a kept one: only its node/ state). Throws if something
   * could not be restored (the record stays, and the reaper or the next start tries again). Safe to call
   * twice.
   */
  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  private async doStop(): Promise<void> {
    await this.podForwarder?.close();
    await this.kubelet?.stop();
    await this.scheduler?.stop();
    await this.containerd?.stop();
    await this.env?.stop();
    if (!this.host) return;
    const report = cleanupHost(this.host.record, (m) => this.log(m));
    this.lastCleanup = report;
    await this.host.release(report.problems.length === 0);
    if (report.problems.length > 0) {
      throw new Error(`the machine could not be fully restored: ${report.problems.join("; ")}`);
    }
    this.log(`stopped; machine restored (${report.actions.length} change(s) undone)`);
  }

  private async waitFor(
    what: string,
    proc: ManagedProcess,
    ready: () => boolean | Promise<boolean>,
    timeoutMs: number,
    goal = `${what} ready`,
  ): Promise<void> {
    const logFile = join(this.logDir, `${what}.log`);
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!proc.running) throw new Error(`${what} exited during start-up; see ${logFile}:\n${tail(logFile)}`);
      if (await ready()) return;
      await sleep(200);
    }
    throw new Error(`no ${goal} after ${timeoutMs} ms; see ${logFile}:\n${tail(logFile)}`);
  }
}

/**
 * Take the machine's node lock through a reaper process (node-reaper.ts), which first cleans up after
 * an earlier cluster that died, then records the machine's state and watches this process.
 */
async function acquireHost(
  req: Pick<HostRecord, "dir" | "wipe" | "removeDir" | "owner">,
  timeoutMs: number,
  log: (m: string) => void,
): Promise<HostLease> {
  const hostDir = nodeHostDir();
  mkdirSync(hostDir, { recursive: true });
  const reaperLog = join(hostDir, "reaper.log");
  const logFd = openSync(reaperLog, existsSync(reaperLog) && statSync(reaperLog).size > 1 << 20 ? "w" : "a");
  const child = spawn(
    "flock",
    [
      "-w",
      String(Math.ceil(timeoutMs / 1000)),
      join(hostDir, "lock"),
      process.execPath,
      REAPER,
      "watch",
      JSON.stringify(req),
    ],
    // Its own session: a Ctrl-C to this terminal's process group must not reach it.
    { detached: true, stdio: ["ignore", "pipe", logFd], env: withoutMarker() },
  );
  closeSync(logFd);
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const waiting = setTimeout(() => {
    const rec = readHostRecord();
    log(
      `waiting for the local node cluster ${rec ? `in ${rec.dir} (pid ${rec.owner.pid}) ` : ""}to stop (one node per machine; lock ${join(hostDir, "lock")})`,
    );
  }, 2000);
  const stdout = child.stdout;
  if (!stdout) throw new Error("flock: no stdout");
  const line = await new Promise<string>((resolveP) => {
    let buf = "";
    stdout.on("data", (d: Buffer) => {
      buf += d.toString();
      if (buf.includes("\n")) resolveP(buf.split("\n")[0] ?? "");
    });
    void exited.then((code) => resolveP(buf.split("\n")[0] || `exit ${code}`));
  });
  clearTimeout(waiting);
  stdout.destroy();
  child.unref();
  if (line !== "ready") {
    if (line.startsWith("error ")) throw new Error(`cannot start a local node: ${JSON.parse(line.slice(6)) as string}`);
    if (line === "exit 1") {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for another local node cluster to stop (see ${join(hostDir, "reaper.log")})`,
      );
    }
    throw new Error(`the node reaper failed (${line}); see ${join(hostDir, "reaper.log")}`);
  }
  const record = readHostRecord();
  if (!record || record.owner.pid !== process.pid) throw new Error("the node reaper wrote no host record");
  return {
    record,
    reaperPid: child.pid,
    release: async (removeRecord) => {
      if (!removeRecord) return; // the reaper keeps watching and retries when this process is gone
      removeHostRecord(record);
      await Promise.race([exited, sleep(3000)]);
    },
  };
}

interface HostLease {
  record: HostRecord;
  reaperPid?: number;
  /** After stop(): remove the record (the reaper then exits), unless the machine is not fully restored. */
  release: (removeRecord: boolean) => Promise<void>;
}

function withoutMarker(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env[MARKER_ENV];
  return env;
}

function q(s: string): string {
  return JSON.stringify(s);
}

function run(cmd: string, args: string[], o: { env?: NodeJS.ProcessEnv } = {}): Promise<CommandResult> {
  return new Promise((resolveP) => {
    execFile(cmd, args, { maxBuffer: 64 * 1024 * 1024, env: o.env ?? process.env }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
      resolveP({ code, stdout, stderr });
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** The last errors (klog E/F lines, Go panics, containerd level=error) and the last lines of a log. */
function tail(file: string, lines = 15): string {
  try {
    const all = readFileSync(file, "utf8").split("\n");
    const errors = all.filter((l) => /^(E|F)\d{4} |^panic: |^fatal error: |level=(error|fatal)/.test(l)).slice(-8);
    const last = all.slice(-lines);
    return [...errors.filter((l) => !last.includes(l)), ...(errors.length ? ["…"] : []), ...last].join("\n");
  } catch {
    return "(no log)";
  }
}

/** 200 from a local HTTPS endpoint with a throwaway self-signed certificate. */
function httpsOK(url: string): Promise<boolean> {
  return new Promise((resolveP) => {
    const req = request(url, { rejectUnauthorized: false, timeout: 2000 }, (res) => {
      res.resume();
      resolveP(res.statusCode === 200);
    });
    req.on("error", () => resolveP(false));
    req.on("timeout", () => req.destroy());
    req.end();
  });
}

/**
 * The apiserver reuses the serving certificate it generated in a kept cluster directory; one made before
 * pods reached it at `ip` lacks that address: remove it, and the apiserver generates a new one.
 */
function forgetCertificateWithoutSAN(certDir: string, ip: string, log: (m: string) => void): void {
  const cert = join(certDir, "apiserver.crt");
  if (!existsSync(cert)) return;
  try {
    const san = new X509Certificate(readFileSync(cert)).subjectAltName ?? "";
    if (san.split(/,\s*/).includes(`IP Address:${ip}`)) return;
  } catch {
    // unreadable: regenerate
  }
  rmSync(cert, { force: true });
  rmSync(join(certDir, "apiserver.key"), { force: true });
  log(`regenerating the apiserver's certificate (no ${ip} in it)`);
}

/** Whether /sys/fs/cgroup is the unified (v2) hierarchy: it then holds cgroup.controllers. */
function isCgroupV2(): boolean {
  return existsSync("/sys/fs/cgroup/cgroup.controllers");
}
