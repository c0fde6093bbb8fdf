// What every end-to-end test does to its NodeCluster: kubectl that fails loudly, JSON reads, `make` against the
// cluster, the operator deployed from its image, and the manager's pods, logs and leader. Each test keeps only
// the helpers its own scenario needs.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
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
/** The manager's Deployment, as `make deploy` names it. */
const MANAGER_DEPLOYMENT = "deploy/cronjob-operator-controller-manager";

/** Whether the object's status has condition `type` with status "True". */
export const conditionTrue = (o: K8sObject, type: string) =>
  (o.status?.conditions as { type: string; status: string }[] | undefined)?.some(
    (c) => c.type === type && c.status === "True",
  ) ?? false;

export const ready = (pod: K8sObject) => conditionTrue(pod, "Ready");

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

/** The Lease the manager's replicas elect a leader with: the flag's default, which the manifests keep. */
const LEASE = parseFlags([], {}).leaderElectionID;

/**
 * The helpers bound to a cluster and to the namespace the manager is deployed in. `cluster` is a getter
 * because tests start theirs in before(), after the helpers are made; calling one before that fails saying so.
 */
export function clusterTools(cluster: () => NodeCluster | undefined, managerNamespace: string) {
  const started = (): NodeCluster => {
    const c = cluster();
    if (!c) throw new Error("cluster tools used before the cluster started");
    return c;
  };

  /** kubectl's stdout; a non-zero exit throws with its stderr. */
  async function kubectl(args: string[], stdin?: string): Promise<string> {
    const r = await started().kubectl(args, stdin);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")}: ${r.stderr || r.stdout}`);
    return r.stdout;
  }
  async function getJSON<T = K8sObject>(args: string[]): Promise<T> {
    return JSON.parse(await kubectl([...args, "-o", "json"])) as T;
  }
  async function list(kind: string, namespace: string, selector?: string): Promise<K8sObject[]> {
    const args = ["get", kind, "-n", namespace, ...(selector ? ["-l", selector] : [])];
    return (await getJSON<{ items: K8sObject[] }>(args)).items;
  }
  /** `make -s <target>` in the project with the cluster's KUBECONFIG; never throws, the caller asserts. */
  function make(target: string[]): Promise<{ code: number; out: string }> {
    const kubeconfig = started().kubeconfigPath;
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
  }
  /** The Events about the object `name` in `namespace`, each as "Reason: message", oldest first. */
  async function eventsOf(namespace: string, name: string): Promise<string[]> {
    const args = ["get", "events", "-n", namespace, "--field-selector", `involvedObject.name=${name}`];
    const items = (await getJSON<{ items: { reason?: string; message?: string }[] }>(args)).items;
    return items.map(eventLine);
  }
  /**
   * Waits for an Event about `name` whose "Reason: message" matches. Events are written apart from (and may
   * land after) the status write of the same reconcile, as client-go's recorder does: never assert on them
   * once, right after seeing the status.
   */
  async function waitForEvent(namespace: string, name: string, match: RegExp, timeoutMs = 60_000): Promise<string> {
    let seen: string[] = [];
    return eventually(
      `an Event about ${namespace}/${name} matching ${match}`,
      async () => {
        seen = await eventsOf(namespace, name);
        return seen.find((e) => match.test(e));
      },
      timeoutMs,
      () => `; its Events: ${JSON.stringify(seen)}`,
      1000,
    );
  }
  /**
   * The operator deployed as a user deploys it, for a suite's before(): the image archive (`make image-build`)
   * loaded into the node, `make deploy` of the config/local overlay (it must exit 0), the Deployment's rollout
   * waited for; then the suite's own `namespace`, once its default ServiceAccount exists (its Pods need it),
   * polled every `pollMs`. Throws on the first step that fails.
   */
  async function deployOperator(o: { namespace: string; pollMs: number }): Promise<void> {
    assert.ok(existsSync(IMAGE_ARCHIVE), `${IMAGE_ARCHIVE} is missing: run \`make image-build\` (make test-e2e does)`);
    await started().importImage(IMAGE_ARCHIVE, IMG);
    const deploy = await make(["deploy", "OVERLAY=config/local", `IMG=${IMG}`]);
    assert.equal(deploy.code, 0, deploy.out);
    await kubectl(["-n", managerNamespace, "rollout", "status", MANAGER_DEPLOYMENT, "--timeout=180s"]);
    await kubectl(["create", "namespace", o.namespace]);
    await eventually(
      "the default ServiceAccount of the test namespace",
      () => kubectl(["get", "serviceaccount", "default", "-n", o.namespace]).then(() => true),
      60_000,
      undefined,
      o.pollMs,
    );
  }
  /** The last `tail` lines of the manager's log (of one of its pods), as kubectl answers; never throws on a non-zero exit. */
  function managerLogs(tail: number): Promise<CommandResult> {
    return started().kubectl(["-n", managerNamespace, "logs", MANAGER_DEPLOYMENT, `--tail=${tail}`]);
  }
  /** The manager's pods that are not being deleted. */
  async function managerPods(): Promise<K8sObject[]> {
    return (await list("pods", managerNamespace, "control-plane=controller-manager")).filter(
      (p) => !p.metadata.deletionTimestamp,
    );
  }
  /** The leader Lease's holder identity (<pod name>_<uuid>), "" when none holds it. */
  async function leaseHolder(): Promise<string> {
    return String((await getJSON(["-n", managerNamespace, "get", "lease", LEASE])).spec!.holderIdentity ?? "");
  }
  /** The manager pod that holds the leader Lease; throws if none does. */
  async function leaderPod(): Promise<{ pod: K8sObject; holder: string }> {
    const holder = await leaseHolder();
    const pod = (await managerPods()).find((p) => holder.startsWith(`${p.metadata.name}_`));
    if (!pod) throw new Error(`no manager pod holds the lease (holder ${holder})`);
    return { pod, holder };
  }

  return {
    kubectl,
    getJSON,
    list,
    make,
    deployOperator,
    managerLogs,
    waitForEvent,
    managerPods,
    leaseHolder,
    leaderPod,
  };
}
