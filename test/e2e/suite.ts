// One fixture for every end-to-end suite, and one CronJob manifest. The fixture starts the local cluster with
// its real node in before(), installs the operator (`make deploy` of its image, or only the image loaded, for a
// suite that installs it another way), creates the suite's namespace, and in after() dumps what the cluster
// holds when anything failed (the set-up included), then stops the cluster and restores the machine. The dump:
// every Pod, the Events of the manager's and the suite's namespaces, each manager pod's log; E2E_DUMP=always
// dumps after a pass too, E2E_DUMP=never not at all.
import { after, before } from "node:test";
import { BUSYBOX_IMAGE, NodeCluster } from "../../envtest/node-cluster.ts";
import { eventually } from "../eventually.ts";
import { ClusterTools, type K8sObject, suiteFailed } from "./cluster-tools.ts";

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
      jobTemplate: {
        spec: {
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
                  command: typeof command === "string" ? ["sh", "-c", command] : command,
                },
              ],
            },
          },
        },
      },
    },
  };
}

export interface SuiteOptions {
  /** The suite's namespace, where its CronJobs live. */
  namespace: string;
  /** How often the fixture's waits poll (the suite's own eventually() calls use it too). */
  pollMs: number;
  /**
   * "deploy" (the default): `make deploy` of the operator's image, then the namespace is created. "image": the
   * image loaded into the node only; the suite installs the operator (and creates its namespace) itself.
   */
  install?: "deploy" | "image";
  /** Where the manager runs: `make deploy`'s namespace unless the suite installs it elsewhere. */
  managerNamespace?: string;
  /** How many lines of each manager pod's log the dump shows. */
  logLines?: number;
  /** The suite's own set-up, once the operator is installed; its failure counts as the suite's. */
  setUp?: () => Promise<void>;
  /** The suite's own tear-down, before the dump and the cluster's stop (e.g. a load to stop); always runs. */
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

/**
 * The fixture, for a describe() body: registers the before() and after() hooks described at the top and
 * returns the suite's helpers. The suite reaches its cluster as `suite.cluster` once before() has run.
 */
export function e2eSuite(o: SuiteOptions): Suite {
  let cluster: NodeCluster | undefined;
  let setUpFailed = false;
  const testFailed = suiteFailed();
  const s = new Suite(
    () => cluster,
    o,
    () => setUpFailed || testFailed(),
  );

  before(async () => {
    try {
      cluster = await NodeCluster.start();
      if ((o.install ?? "deploy") === "deploy") await s.deployOperator({ namespace: o.namespace, pollMs: o.pollMs });
      else await s.loadImage();
      await o.setUp?.();
    } catch (err) {
      setUpFailed = true;
      throw err;
    }
  });

  after(async () => {
    try {
      await o.tearDown?.();
    } finally {
      if (cluster) {
        const dump = process.env.E2E_DUMP ?? "on-failure";
        if (dump === "always" || (dump !== "never" && s.failed())) {
          await s.dumpDiagnostics([s.managerNamespace, o.namespace], o.logLines ?? 50);
        }
        await cluster.stop();
      }
    }
  });
  return s;
}
