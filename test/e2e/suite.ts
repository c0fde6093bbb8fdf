// One fixture for every end-to-end suite, and one CronJob manifest. The suites share one local cluster with its
// real node: test/e2e/run.ts starts it once (the image loaded, `make deploy`), runs the non-disruptive suites
// concurrently, then the disruptive ones one at a time in the order it states, then stops the cluster and restores
// the machine. A file run on its own (`make test-e2e E2E_MODE=per-file`, or `node --test FILE`) starts a cluster of
// its own the same way. Each suite creates its namespace, checks that the cluster is as it needs it
// (shared-cluster.ts: a broken cluster names the suite that left it so), and in after() dumps its own objects and
// the manager's log lines about them when anything failed (the set-up included), then deletes its namespace.
// E2E_DUMP=always dumps after a pass too, E2E_DUMP=never not at all.
import { after, before, describe } from "node:test";
import { NodeCluster, nodeJobSpec } from "../../envtest/node-cluster.ts";
import { eventually } from "../eventually.ts";
import { ClusterTools, type K8sObject, MANAGER, suiteFailed } from "./cluster-tools.ts";
import { ClusterBook, type ClusterState, type Needs } from "./shared-cluster.ts";

/** The API versions of our CronJob. */
export const API_V1 = "batch.tutorial.kubebuilder.io/v1";
export const API_V2 = "batch.tutorial.kubebuilder.io/v2";
/** Our CronJobs, in the version kubectl prefers. */
export const CRONJOBS = "cronjobs.batch.tutorial.kubebuilder.io";
/** The annotation of each of our Jobs naming the slot it ran for. */
export const SCHEDULED_AT = "batch.tutorial.kubebuilder.io/scheduled-at";
/** The namespace `make deploy` runs the manager in. */
export const SYSTEM_NS = "cronjob-operator-system";

/**
 * A CronJob whose Jobs run one Pod of the node's local busybox image, once (backoffLimit 0, restartPolicy
 * Never, a 1 s grace period so that deleting it is quick). `spec` is everything but the Job template (the
 * schedule or schedules, the policies); `command` is a shell command (run with sh -c) or an argv. Our CronJob
 * in v1 unless `apiVersion` says otherwise (v2, or the built-in batch/v1 and batch/v1beta1: the same shape).
 */
export function cronJobManifest(
  metadata: { name: string; namespace: string; labels?: Record<string, string>; annotations?: Record<string, string> },
  spec: Record<string, unknown>,
  command: string | string[],
  apiVersion = API_V1,
): K8sObject {
  return {
    apiVersion,
    kind: "CronJob",
    metadata,
    spec: {
      ...spec,
      jobTemplate: { spec: nodeJobSpec(command) },
    },
  };
}

export interface SuiteOptions {
  /** The suite's namespace, where its CronJobs live. */
  namespace: string;
  /** Namespaces the suite creates itself (in setUp) and that go with it, like its own. */
  alsoNamespaces?: string[];
  /**
   * Leave the namespace (and alsoNamespaces) in place at the end: a later suite of the same file (its disruptive
   * part, run after the concurrent phase) goes on with the objects in it, and deletes it.
   */
  keepNamespace?: boolean;
  /** How often the fixture's waits poll (the suite's own eventually() calls use it too). */
  pollMs: number;
  /**
   * "deploy" (the default): the suite needs the operator as `make deploy` leaves it; its namespace is created.
   * "image": the suite needs no operator installed (the image is loaded); it installs the operator (and creates
   * its namespace) itself.
   */
  install?: "deploy" | "image";
  /** Where the manager runs: `make deploy`'s namespace unless the suite installs it elsewhere. */
  managerNamespace?: string;
  /** How many of the manager's log lines about the suite's namespaces the dump shows, per pod. */
  logLines?: number;
  /** The suite's own set-up, once the cluster is checked; its failure counts as the suite's. */
  setUp?: () => Promise<void>;
  /** The suite's own tear-down, before the dump and the namespace's deletion (e.g. a load to stop); always runs. */
  tearDown?: () => Promise<void>;
}

/** The fixture's helpers: the cluster tools, bound to the suite's namespace where a helper needs one. */
export class Suite extends ClusterTools {
  readonly namespace: string;
  readonly pollMs: number;
  /** Whether the set-up or a test of the suite has failed so far. */
  readonly failed: () => boolean;

  constructor(cluster: () => NodeCluster | undefined, o: SuiteOptions, failed: () => boolean) {
    super(cluster, o.managerNamespace ?? SYSTEM_NS);
    this.namespace = o.namespace;
    this.pollMs = o.pollMs;
    this.failed = failed;
  }

  /**
   * `kubectl apply` of a manifest (an object, sent as JSON), retried until admitted: the webhooks answer once a
   * manager is ready, and the first apply may still race the injection of their CA bundle.
   */
  admit = async (manifest: K8sObject, timeoutMs = 30_000): Promise<void> => {
    const json = JSON.stringify(manifest);
    await eventually(
      `${manifest.metadata.name} to be admitted`,
      () => this.kubectl(["apply", "-f", "-"], json).then(() => true),
      timeoutMs,
      undefined,
      this.pollMs,
    );
  };
  /** cronJobManifest() of a CronJob in the suite's namespace: `meta` is its name, or its name and more. */
  cronJob = (
    meta: string | Omit<Parameters<typeof cronJobManifest>[0], "namespace">,
    spec: Record<string, unknown>,
    command: string | string[],
    apiVersion = API_V1,
  ): K8sObject => {
    const metadata = typeof meta === "string" ? { name: meta } : meta;
    return cronJobManifest({ ...metadata, namespace: this.namespace }, spec, command, apiVersion);
  };
  /** The Jobs in the suite's namespace that the CronJob `name` (read as `resource`) owns. */
  jobsOf = async (name: string, resource = CRONJOBS): Promise<K8sObject[]> => {
    const uid = (await this.getJSON(["get", resource, name, "-n", this.namespace])).metadata.uid;
    return (await this.list("jobs", this.namespace)).filter((j) =>
      j.metadata.ownerReferences?.some((o) => o.uid === uid),
    );
  };
  /** The kubectl-cron executable in the suite's namespace. */
  plugin = (args: string[]) => this.kubectlCron([...args, "-n", this.namespace]);
}

/** The cluster this process runs its suites on, once started; one per run (shared) or per file. */
let cluster: NodeCluster | undefined;
/** Who ran on it so far. */
const book = new ClusterBook();

/** A describe() of the end-to-end suites, registered by e2eDescribe(). */
export interface E2eDescribe {
  name: string;
  options: { timeout: number };
  /** The disruption it makes (a leader kill, the operator scaled to 0, undeploy…): run.ts orders these. */
  disruptive?: string;
  fn: () => void;
}

/** The shared run's registry (run.ts), or undefined when a file runs on its own. */
let registry: E2eDescribe[] | undefined;

/**
 * For run.ts, before it imports the suite files: their e2eDescribe() calls are collected, not run, and run.ts
 * lays them out on one cluster (shared mode).
 */
export function collectSuites(): E2eDescribe[] {
  registry = [];
  return registry;
}

/**
 * A suite of end-to-end tests: a describe() whose body calls e2eSuite(). Collected for run.ts in shared mode;
 * otherwise described at once, on a cluster the file starts for itself before its first suite (and stops
 * after its last). `disruptive` names what the suite does to the cluster that others must not see.
 */
export function e2eDescribe(name: string, options: { timeout: number; disruptive?: string }, fn: () => void): void {
  const { disruptive, ...describeOptions } = options;
  // describe() runs its body at once: e2eSuite() in it reads the name here.
  const body = () => {
    describing = name;
    fn();
  };
  if (registry) {
    registry.push({ name, options: describeOptions, disruptive, fn: body });
    return;
  }
  if (!perFile) perFileCluster();
  describe(name, describeOptions, body);
}
/** The name of the suite whose body is running (e2eDescribe sets it for e2eSuite). */
let describing = "";

/**
 * The cluster of a file run on its own: started by its first suite's before() (deployed if that suite needs the
 * operator; a root-level before() would run before any describe() body, not knowing), stopped after its last.
 */
let perFile = false;
function perFileCluster(): void {
  perFile = true;
  after(() => stopCluster());
}

/** The cluster started, the image loaded, and the operator deployed when `deploy` (run.ts, or a file's own). */
export async function startCluster(deploy: boolean): Promise<void> {
  cluster = await NodeCluster.start();
  const tools = new ClusterTools(() => cluster, SYSTEM_NS);
  if (deploy) await tools.deployOperator();
  else await tools.loadImage();
}

/** The cluster stopped and the machine restored. */
export async function stopCluster(): Promise<void> {
  await cluster?.stop();
  cluster = undefined;
}

/** What the cluster holds of the operator `make deploy` installs (read with kubectl; a failed read throws). */
async function readClusterState(s: Suite): Promise<ClusterState> {
  const crd = await s.cluster.kubectl(["get", "crd", CRONJOBS, "-o", "name"]);
  if (crd.code !== 0 && !/NotFound|not found/.test(crd.stderr)) throw new Error(crd.stderr);
  const d = await s.cluster.kubectl(["-n", SYSTEM_NS, "get", "deployment", MANAGER, "-o", "json"]);
  if (d.code !== 0 && !/NotFound|not found/.test(d.stderr)) throw new Error(d.stderr);
  const status = d.code === 0 ? (JSON.parse(d.stdout) as K8sObject) : undefined;
  return {
    crd: crd.code === 0,
    deployment: status && {
      replicas: Number(status.spec?.replicas ?? 1),
      ready: Number(status.status?.readyReplicas ?? 0),
      updated: Number(status.status?.updatedReplicas ?? 0),
    },
  };
}

/**
 * The fixture, for a describe() body: registers the before() and after() hooks described at the top and
 * returns the suite's helpers. The suite reaches its cluster as `suite.cluster` once before() has run.
 */
export function e2eSuite(o: SuiteOptions): Suite {
  let setUpFailed = false;
  const testFailed = suiteFailed();
  const s = new Suite(
    () => cluster,
    o,
    () => setUpFailed || testFailed(),
  );
  const needs: Needs = (o.install ?? "deploy") === "deploy" ? "operator" : "no-operator";
  const namespaces = [o.namespace, ...(o.alsoNamespaces ?? [])];
  const name = describing || o.namespace;

  before(
    async () => {
      try {
        if (perFile && !cluster) await startCluster(needs === "operator");
        await book.check(name, needs, () => readClusterState(s));
        if (needs === "operator" && (await s.cluster.kubectl(["get", "namespace", o.namespace])).code !== 0) {
          await s.createNamespace(o.namespace, o.pollMs);
        }
        await o.setUp?.();
      } catch (err) {
        setUpFailed = true;
        throw err;
      }
    },
    { timeout: 900_000 },
  );

  after(async () => {
    try {
      await o.tearDown?.();
    } finally {
      if (cluster) {
        const dump = process.env.E2E_DUMP ?? "on-failure";
        if (dump === "always" || (dump !== "never" && s.failed())) {
          await s.dumpDiagnostics(namespaces, o.logLines ?? 50);
        }
        if (!o.keepNamespace) {
          await s.cluster.kubectl(["delete", "namespace", ...namespaces, "--ignore-not-found", "--wait=false"]);
        }
      }
      book.finished(name);
    }
  });
  return s;
}
