// What every end-to-end test does to its NodeCluster: kubectl that fails loudly, JSON reads, `make` and the
// kubectl-cron plugin against the cluster, the operator's image loaded and deployed, the manager's pods, logs
// and leader, and what the cluster holds dumped when a test fails. suite.ts binds them to a suite's cluster
// (started and stopped by its fixture); each test keeps only the helpers its own scenario needs.
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { constants as osConstants } from "node:os";
import { afterEach } from "node:test";
import { parseFlags } from "../../cmd/flags.ts";
import { type CommandResult, PROJECT_ROOT } from "../../envtest/index.ts";
import type { NodeCluster } from "../../envtest/node-cluster.ts";
import { eventually } from "../eventually.ts";

/** The fields of a Kubernetes object the tests read; the rest stays loosely typed. */
export interface K8sObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    generation?: number;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    ownerReferences?: { apiVersion?: string; kind?: string; name?: string; uid: string }[];
  };
  spec?: Record<string, any>;
  status?: Record<string, any>;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The operator's image: the name it is loaded into the node under, and deployed with. */
export const IMG = process.env.IMG || "localhost/cronjob-operator:dev";
/** The image as `make image-build` writes it: an OCI archive. */
const IMAGE_ARCHIVE = process.env.IMAGE_ARCHIVE || join(PROJECT_ROOT, "bin", "cronjob-operator-image.oci.tar");
/** The manager's Deployment, as `make deploy` and the chart name it. */
export const MANAGER = "cronjob-operator-controller-manager";
const MANAGER_DEPLOYMENT = `deploy/${MANAGER}`;
/** The kubectl-cron plugin as a user runs it: the executable (`make install-plugin` puts it on a PATH). */
export const PLUGIN = join(PROJECT_ROOT, "cmd", "kubectl-cron", "kubectl-cron");

/** What a command answered; `code` is 0 on success. */
export type Result = { code: number; stdout: string; stderr: string };

/** Whether the object's status has condition `type` with status "True". */
export const conditionTrue = (o: K8sObject, type: string) =>
  (o.status?.conditions as { type: string; status: string }[] | undefined)?.some(
    (c) => c.type === type && c.status === "True",
  ) ?? false;

export const ready = (pod: K8sObject) => conditionTrue(pod, "Ready");
/** Whether a Job has ended (a Complete or Failed condition): the operator's own test of a running Job. */
export const finished = (j: K8sObject) => conditionTrue(j, "Complete") || conditionTrue(j, "Failed");

/** An entry of status.recentRuns, as the tests read it. */
export interface RecentRun {
  trigger: string;
  scheduledTime?: string;
  decision: string;
  reason: string;
  message?: string;
  request?: string;
  decidedAt?: string;
  job?: string;
  blockedBy?: string;
  attempt?: { number: number; of: number; after: string; failure?: string };
  startsAt?: string;
  supersededBy?: string;
  exclusion?: { calendar?: string; window?: string; firstSlot?: string; slots?: number; problem?: string };
  outcome?: { result: string; reason?: string; message?: string; finishedAt?: string; pods?: string };
}

/** A CronJob's record (status.recentRuns), newest first. */
/**
 * A child's exit code as a test compares it: a signal (a timeout's kill) is 128 + its number, as a shell says it,
 * never mistaken for an exit code the command chose.
 */
export function exitCodeOf(err: { code?: unknown; signal?: unknown } | null): number {
  if (!err) return 0;
  if (typeof err.code === "number") return err.code;
  return typeof err.signal === "string" ? 128 + (osConstants.signals[err.signal as NodeJS.Signals] ?? 0) : 1;
}
/** What a child killed by a signal is said with, for the assertion's message. */
export const killedBy = (err: { signal?: unknown } | null) =>
  typeof err?.signal === "string" ? `\n(killed by ${err.signal}: it did not exit in time)` : "";

export const recordOf = (cj: K8sObject): RecentRun[] => (cj.status?.recentRuns as RecentRun[] | undefined) ?? [];

/**
 * Whether a test of the calling suite (nested suites included) has failed so far, for after() hooks that print
 * the manager's logs only then. node:test sets process.exitCode only once the whole run is over, so it is
 * still unset when a suite's after() runs. Call it in the describe() body.
 */
export function suiteFailed(): () => boolean {
  let failed = false;
  afterEach((t) => {
    // TestContext.passed (Node >= 20.12) is missing from the @types/node this project pins.
    if ((t as { passed?: boolean }).passed !== true) failed = true;
  });
  return () => failed;
}

/** One Event of an object, as `kubectl get events` shows it: "Reason: message". */
const eventLine = (e: { reason?: string; message?: string }) => `${e.reason ?? ""}: ${e.message ?? ""}`;

/** A Pod's age, and its container's start and end (s after the Pod's creation) or why it waits ("podsSay"). */
function podTimes(p: K8sObject): string {
  const created = Date.parse(p.metadata.creationTimestamp ?? "");
  const after = (t: unknown) => (typeof t === "string" ? `${Math.round((Date.parse(t) - created) / 1000)} s` : "-");
  const state = (p.status?.containerStatuses?.[0]?.state ?? {}) as Record<string, Record<string, unknown>>;
  const run = state.running ?? state.terminated;
  const age = `${Math.round((Date.now() - created) / 1000)} s old`;
  if (state.waiting) return `${age}, waiting (${String(state.waiting.reason ?? "?")})`;
  return run
    ? `${age}, started at +${after(run.startedAt)}, ended at +${after(state.terminated?.finishedAt)}`
    : `${age}, no container yet`;
}

/** The Lease the manager's replicas elect a leader with: the flag's default, which the manifests keep. */
const LEASE = parseFlags([], {}).leaderElectionID;

/**
 * The helpers bound to a cluster and to the namespace the manager runs in. `cluster` is a getter because
 * suites start theirs in before(), after the helpers are made; a helper called before that fails saying so.
 * The helpers are fields (arrow functions), so a suite may destructure the ones it uses.
 */
export class ClusterTools {
  readonly #cluster: () => NodeCluster | undefined;
  readonly managerNamespace: string;

  constructor(cluster: () => NodeCluster | undefined, managerNamespace: string) {
    this.#cluster = cluster;
    this.managerNamespace = managerNamespace;
  }

  /** The started cluster; throws before it has started. */
  get cluster(): NodeCluster {
    const c = this.#cluster();
    if (!c) throw new Error("cluster tools used before the cluster started");
    return c;
  }

  /** kubectl's stdout; a non-zero exit throws with its stderr. */
  kubectl = async (args: string[], stdin?: string): Promise<string> => {
    const r = await this.cluster.kubectl(args, stdin);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")}: ${r.stderr || r.stdout}`);
    return r.stdout;
  };
  getJSON = async <T = K8sObject>(args: string[]): Promise<T> => {
    return JSON.parse(await this.kubectl([...args, "-o", "json"])) as T;
  };
  list = async (kind: string, namespace: string, selector?: string): Promise<K8sObject[]> => {
    const args = ["get", kind, "-n", namespace, ...(selector ? ["-l", selector] : [])];
    return (await this.getJSON<{ items: K8sObject[] }>(args)).items;
  };
  /**
   * The ready addresses of a Service of the operator's namespace, sorted: from its EndpointSlices
   * (discovery.k8s.io/v1; core/v1 Endpoints is deprecated from 1.33 and warns on every read).
   */
  serviceEndpointIPs = async (service: string): Promise<string[]> => {
    const slices = await this.list("endpointslices", this.managerNamespace, `kubernetes.io/service-name=${service}`);
    return slices
      .flatMap(
        (s) => (s as { endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[] }).endpoints ?? [],
      )
      .filter((e) => e.conditions?.ready !== false)
      .flatMap((e) => e.addresses)
      .sort();
  };
  /** `make -s <target>` in the project with the cluster's KUBECONFIG; never throws, the caller asserts. */
  make = (target: string[]): Promise<{ code: number; out: string }> => {
    const kubeconfig = this.cluster.kubeconfigPath;
    return new Promise((resolve) => {
      const child = spawn("make", ["-s", ...target], {
        cwd: PROJECT_ROOT,
        env: { ...process.env, KUBECONFIG: kubeconfig },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (out += d.toString()));
      child.once("exit", (code) => resolve({ code: code ?? 1, out }));
    });
  };
  /** The kubectl-cron executable with the cluster's KUBECONFIG (`args` name the namespace); never throws. */
  kubectlCron = (args: string[]): Promise<Result> => {
    const kubeconfig = this.cluster.kubeconfigPath;
    return new Promise((resolve) => {
      execFile(
        PLUGIN,
        args,
        // SIGKILL: a process hung in its exit ignores SIGTERM (its handler never runs).
        { env: { ...process.env, KUBECONFIG: kubeconfig }, timeout: 120_000, killSignal: "SIGKILL" },
        (err, stdout, stderr) => resolve({ code: exitCodeOf(err), stdout, stderr: stderr + killedBy(err) }),
      );
    });
  };
  /**
   * For a wait on a run's Pod that timed out: the Pods of `namespace` whose names start with `prefix`, a line each
   * (phase; seconds from its creation to its container's start and end, or its waiting reason), and the node's Pods
   * by phase. CI prints only a failure's tail: this says whether the Pod was late to start, to end, or never made.
   */
  podsSay = async (namespace: string, prefix = ""): Promise<string> => {
    try {
      const pods = await this.getJSON<{ items: K8sObject[] }>(["get", "pods", "-A"]);
      const byPhase = new Map<string, number>();
      const lines: string[] = [];
      for (const p of pods.items) {
        const phase = String(p.status?.phase ?? "?");
        byPhase.set(phase, (byPhase.get(phase) ?? 0) + 1);
        if (p.metadata.namespace !== namespace || !p.metadata.name.startsWith(prefix)) continue;
        lines.push(`${p.metadata.name} ${phase} ${podTimes(p)}`);
      }
      const node = [...byPhase].map(([phase, n]) => `${n} ${phase}`).join(", ");
      return `; the node's Pods: ${node}; ${namespace}/${prefix}*: ${lines.join("; ") || "none"}`;
    } catch (e) {
      return `; the Pods could not be listed: ${(e as Error).message}`;
    }
  };
  /** The Events about the object `name` in `namespace`, each as "Reason: message", oldest first. */
  eventsOf = async (namespace: string, name: string): Promise<string[]> => {
    const args = ["get", "events", "-n", namespace, "--field-selector", `involvedObject.name=${name}`];
    const items = (await this.getJSON<{ items: { reason?: string; message?: string }[] }>(args)).items;
    return items.map(eventLine);
  };
  /**
   * Waits for an Event about `name` whose "Reason: message" matches. Events are written apart from (and may
   * land after) the status write of the same reconcile, as client-go's recorder does: never assert on them
   * once, right after seeing the status.
   */
  waitForEvent = async (namespace: string, name: string, match: RegExp, timeoutMs = 60_000): Promise<string> => {
    let seen: string[] = [];
    return eventually(
      `an Event about ${namespace}/${name} matching ${match}`,
      async () => {
        seen = await this.eventsOf(namespace, name);
        return seen.find((e) => match.test(e));
      },
      timeoutMs,
      () => `; its Events: ${JSON.stringify(seen)}`,
      1000,
    );
  };
  /** The image archive (`make image-build`) loaded into the node under IMG. */
  loadImage = async (): Promise<void> => {
    assert.ok(existsSync(IMAGE_ARCHIVE), `${IMAGE_ARCHIVE} is missing: run \`make image-build\` (make test-e2e does)`);
    await this.cluster.importImage(IMAGE_ARCHIVE, IMG);
  };
  /** A namespace, once its default ServiceAccount exists (its Pods need it), polled every `pollMs`. */
  createNamespace = async (namespace: string, pollMs: number, timeoutMs = 60_000): Promise<void> => {
    await this.kubectl(["create", "namespace", namespace]);
    await eventually(
      "the default ServiceAccount of the test namespace",
      () => this.kubectl(["get", "serviceaccount", "default", "-n", namespace]).then(() => true),
      timeoutMs,
      undefined,
      pollMs,
    );
  };
  /**
   * The operator deployed as a user deploys it: the image loaded into the node, `make deploy` of the
   * config/local overlay (it must exit 0), the Deployment's rollout waited for. Throws on the first step that fails.
   */
  deployOperator = async (): Promise<void> => {
    await this.loadImage();
    const deploy = await this.make(["deploy", "OVERLAY=config/local", `IMG=${IMG}`]);
    assert.equal(deploy.code, 0, deploy.out);
    await this.kubectl(["-n", this.managerNamespace, "rollout", "status", MANAGER_DEPLOYMENT, "--timeout=180s"]);
  };
  /** The manager's pods that are not being deleted. */
  managerPods = async (): Promise<K8sObject[]> => {
    return (await this.list("pods", this.managerNamespace, "control-plane=controller-manager")).filter(
      (p) => !p.metadata.deletionTimestamp,
    );
  };
  /** Waits for `count` manager pods, all Ready, and returns them. */
  readyManagerPods = (count: number, timeoutMs: number, pollMs: number): Promise<K8sObject[]> => {
    return eventually(
      `${count} Ready manager pods`,
      async () => {
        const ps = await this.managerPods();
        return ps.length === count && ps.every(ready) ? ps : undefined;
      },
      timeoutMs,
      undefined,
      pollMs,
    );
  };
  /** The leader Lease's holder identity (<pod name>_<uuid>), "" when none holds it. */
  leaseHolder = async (): Promise<string> => {
    return String(
      (await this.getJSON(["-n", this.managerNamespace, "get", "lease", LEASE])).spec!.holderIdentity ?? "",
    );
  };
  /** The manager pod that holds the leader Lease; throws if none does. */
  leaderPod = async (): Promise<{ pod: K8sObject; holder: string }> => {
    const holder = await this.leaseHolder();
    const pod = (await this.managerPods()).find((p) => holder.startsWith(`${p.metadata.name}_`));
    if (!pod) throw new Error(`no manager pod holds the lease (holder ${holder})`);
    return { pod, holder };
  };
  /**
   * The manager pod whose leader is alive: the Lease's holder renewed it since the last look. A leader SIGKILLed keeps
   * its name in the Lease until the Lease expires, and its container restarts in the same pod, so a holder's pod name
   * alone says nothing of whether anyone leads.
   */
  liveLeaderPod = (timeoutMs: number, pollMs: number): Promise<{ pod: K8sObject; holder: string }> => {
    const lease = async () => (await this.getJSON(["-n", this.managerNamespace, "get", "lease", LEASE])).spec ?? {};
    let before: { holderIdentity?: unknown; renewTime?: unknown } | undefined;
    return eventually(
      "a lease holder that renews the Lease",
      async () => {
        const now = await lease();
        const renewed =
          before !== undefined &&
          now.holderIdentity === before.holderIdentity &&
          now.renewTime !== before.renewTime &&
          !!now.holderIdentity;
        before = now;
        return renewed ? this.leaderPod() : undefined;
      },
      timeoutMs,
      undefined,
      // Longer than the leader's retry period (2 s): a live holder renews between two looks.
      Math.max(pollMs, 2_500),
    );
  };
  /** The leader's pod deleted at once (no grace period), as a crash would leave it; its Lease is not released. */
  killLeaderPod = async (): Promise<void> => {
    const { pod } = await this.leaderPod();
    await this.kubectl([
      "-n",
      this.managerNamespace,
      "delete",
      "pod",
      pod.metadata.name,
      "--grace-period=0",
      "--force",
      "--wait=false",
    ]);
  };
  /**
   * What a failed suite left, written to stderr: the Pods and Events of its `namespaces`, the manager's Pods, and
   * the last `tail` lines of each manager pod's log that mention one of the namespaces (its previous container's
   * too, when it restarted): on a shared cluster, the other suites' objects and lines are not the failed one's.
   * Reads with kubectl and never throws: the cluster may be half broken.
   */
  dumpDiagnostics = async (namespaces: string[], tail: number): Promise<void> => {
    const read = (args: string[]): Promise<CommandResult> =>
      this.cluster.kubectl(args).catch((e: unknown) => ({ code: 1, stdout: "", stderr: String(e) }));
    const section = async (title: string, args: string[], keep = (out: string) => out): Promise<void> => {
      const r = await read(args);
      process.stderr.write(`--- ${title}\n${r.code === 0 ? keep(r.stdout) : r.stderr}`);
    };
    for (const ns of namespaces) {
      await section(`pods in ${ns}`, ["get", "pods", "-n", ns, "-o", "wide"]);
      await section(`events in ${ns}`, ["get", "events", "-n", ns, "--sort-by=.lastTimestamp"]);
    }
    await section(`manager pods in ${this.managerNamespace}`, [
      "get",
      "pods",
      "-n",
      this.managerNamespace,
      "-o",
      "wide",
    ]);
    const about = (out: string) => {
      const lines = out
        .split("\n")
        .filter((l) => namespaces.some((ns) => l.includes(`"${ns}"`) || l.includes(`${ns}/`)));
      return lines.slice(-tail).join("\n") + (lines.length ? "\n" : "");
    };
    const pods = await this.list("pods", this.managerNamespace, "control-plane=controller-manager").catch(() => []);
    for (const p of pods) {
      const name = p.metadata.name;
      const logs = ["-n", this.managerNamespace, "logs", name];
      await section(`logs of ${name} about ${namespaces.join(", ")} (last ${tail} lines)`, logs, about);
      // Each container that restarted (the manager's, the webhooks server's): its previous instance's logs too.
      for (const c of (p.status?.containerStatuses as { name: string; restartCount?: number }[] | undefined) ?? []) {
        if (!c.restartCount) continue;
        await section(`logs of ${name}'s previous ${c.name} container`, [...logs, "-c", c.name, "--previous"], about);
      }
    }
  };
}

/** The containerd ID of a manager Pod's container (the manager's unless named): what `ctr tasks kill` takes. */
export function containerID(pod: K8sObject, name = "manager"): string {
  const statuses = (pod.status?.containerStatuses ?? []) as { name: string; containerID?: string }[];
  const status = statuses.find((c) => c.name === name);
  if (!status?.containerID) throw new Error(`pod ${pod.metadata.name} has no running ${name} container`);
  return status.containerID.replace(/^containerd:\/\//, "");
}
