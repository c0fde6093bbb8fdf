// Which Kubernetes the harness runs, and the flags and waits that depend on it. The harness takes
// binaries of any version from 1.20 (Debian's, hack/setup-envtest's fallback) to current releases
// (KUBEBUILDER_ASSETS, NODE_CLUSTER_ASSETS); each version-dependent choice is one row below, with the
// release that changed it, so a newer binary never gets a flag it no longer has.
import { execFileSync } from "node:child_process";

export interface KubeVersion {
  major: number;
  minor: number;
  patch: number;
  /** As the binary prints it, e.g. "v1.20.2". */
  text: string;
}

/** `kube-apiserver --version` and the like: "Kubernetes v1.32.3" (etcd: "etcd Version: 3.5.30"). */
export function parseVersion(output: string): KubeVersion {
  const m = /v?(\d+)\.(\d+)\.(\d+)(?:[-+][\w.+-]*)?/.exec(output);
  if (!m) throw new Error(`no version in ${JSON.stringify(output.trim().split("\n")[0] ?? "")}`);
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]), text: `v${m[1]}.${m[2]}.${m[3]}` };
}

const cache = new Map<string, KubeVersion>();

/** The version of a Kubernetes binary (asked once per path). */
export function binaryVersion(path: string): KubeVersion {
  let v = cache.get(path);
  if (!v) {
    v = parseVersion(execFileSync(path, ["--version"], { encoding: "utf8" }));
    cache.set(path, v);
  }
  return v;
}

/** Whether `v` is at least 1.`minor`. */
export function atLeast(v: KubeVersion, minor: number): boolean {
  return v.major > 1 || (v.major === 1 && v.minor >= minor);
}

/**
 * kube-controller-manager and kube-scheduler: before 1.22 they also serve plain HTTP on 0.0.0.0
 * (10252, 10251) unless `--port=0`, so two test clusters would clash. 1.22 removed insecure serving
 * (kubernetes#96216, #96345) and 1.24 the flag itself: `Error: unknown flag: --port`.
 */
export function insecurePortArgs(v: KubeVersion): string[] {
  return atLeast(v, 22) ? [] : ["--port=0"];
}

/**
 * kubelet: before 1.24 (dockershim) a CRI runtime needs `--container-runtime=remote`; 1.24 made remote
 * the only runtime, and 1.27 removed the flag.
 */
export function containerRuntimeArgs(v: KubeVersion): string[] {
  return atLeast(v, 24) ? [] : ["--container-runtime=remote"];
}

/**
 * Whether pods need the ServiceAccount's token Secret before they can be created. Before 1.21 the
 * ServiceAccount admission plugin mounts that Secret (and refuses pods until it exists); from 1.21
 * (BoundServiceAccountTokenVolume on by default, GA in 1.22) pods get a projected token from the
 * TokenRequest API, and from 1.24 no token Secret is created at all
 * (LegacyServiceAccountTokenNoAutoGeneration).
 */
export function podsNeedTokenSecret(v: KubeVersion): boolean {
  return !atLeast(v, 21);
}

/**
 * KubeletConfiguration fields by version. The local node runs on cgroup v1 hosts (Debian 12's default
 * hybrid layout); from 1.35 the kubelet refuses to start on cgroup v1 unless `failCgroupV1` is false
 * (a field since 1.31, where it defaults to false). Older kubelets do not get a field they lack.
 */
export function kubeletConfigFields(v: KubeVersion, cgroupV1: boolean): Record<string, unknown> {
  return cgroupV1 && atLeast(v, 31) ? { failCgroupV1: false } : {};
}

/**
 * kube-controller-manager's CronJob controller: 1.20 runs the v1 controller unless the CronJobControllerV2 gate is
 * on (beta and on by default in 1.21, GA in 1.22); from 1.24 the gate is gone and naming it is an error
 * ("unrecognized feature gate").
 */
export function cronJobControllerV2Args(v: KubeVersion): string[] {
  return atLeast(v, 21) ? [] : ["--feature-gates=CronJobControllerV2=true"];
}
