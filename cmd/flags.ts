// Command-line flags of the manager, named and defaulted like a kubebuilder project's cmd/main.go.
// parseFlags never exits: it returns the options or a usage error the caller turns into exit code 2.
import { parseArgs } from "node:util";
import { parseGoDuration } from "../api/v1/schedule/duration.ts";
import { parseBindAddress } from "../runtime/httpserver.ts";
import { parseSelector } from "../runtime/cache/selector.ts";
import { type LogLevel, parseLogLevel } from "../runtime/log.ts";

export interface Flags {
  metricsBindAddress: string;
  metricsSecure: boolean;
  metricsCertPath: string;
  metricsCertName: string;
  metricsCertKey: string;
  healthProbeBindAddress: string;
  leaderElect: boolean;
  leaderElectionID: string;
  leaderElectionNamespace: string;
  webhookHost: string;
  webhookPort: number;
  /** --webhook-reuse-port: share the webhook port with the Pod's other webhook server (SO_REUSEPORT). */
  webhookReusePort: boolean;
  /** --webhooks-only: serve the webhooks and nothing else (no reconciler, no leader election). */
  webhooksOnly: boolean;
  webhookCertPath: string;
  webhookCertName: string;
  webhookCertKey: string;
  webhookCertProvision: "external" | "self";
  webhookCertSecret: string;
  webhookServiceName: string;
  webhookServiceNamespace: string;
  mutatingWebhookConfigurations: string[];
  validatingWebhookConfigurations: string[];
  enableHTTP2: boolean;
  kubeconfig: string;
  logLevel: LogLevel;
  logFormat: "json" | "console";
  maxConcurrentReconciles: number;
  perCronJobMetrics: boolean;
  shutdownDelayMs: number;
  /** --status-write-delay: how long a new run may wait to be written to status. */
  statusWriteDelayMs: number;
  /** --status-write-qps: status writes a second a change its Jobs tell is written at once with. */
  statusWriteQPS: number;
  /** --status-write-max-delay: the most such a change waits (0: none waits; every change is written at once). */
  statusWriteMaxDelayMs: number;
  enableWebhooks: boolean;
  /** --watch-namespaces: the namespaces this install acts in (empty: every namespace, or --watch-namespace-selector's). */
  watchNamespaces: string[];
  /** --watch-namespace-selector: a label selector over Namespaces; the install acts in those it matches. */
  watchNamespaceSelector: string;
  /** --sharding: every replica active, each with a Lease of its own, the namespaces divided between the live ones. */
  sharding: boolean;
  /** --namespace-claims: claim each namespace acted in (a Lease in it), so that two installs never both act in one. */
  namespaceClaims: boolean;
  help: boolean;
}

interface FlagSpec {
  name: string;
  type: "string" | "boolean";
  default: string | boolean;
  help: string;
}

export const FLAGS: FlagSpec[] = [
  {
    name: "metrics-bind-address",
    type: "string",
    default: "0",
    help: "The address the metrics endpoint binds to. Use :8443 for HTTPS or :8080 for HTTP, or leave as 0 to disable the metrics service.",
  },
  {
    name: "metrics-secure",
    type: "boolean",
    default: true,
    help: "If set, the metrics endpoint is served securely via HTTPS, with authentication and authorization of scrapers (TokenReview, SubjectAccessReview). Use --metrics-secure=false to use HTTP instead.",
  },
  {
    name: "metrics-cert-path",
    type: "string",
    default: "",
    help: "The directory that contains the metrics server certificate; empty uses a self-signed certificate generated at start.",
  },
  {
    name: "metrics-cert-name",
    type: "string",
    default: "tls.crt",
    help: "The name of the metrics server certificate file.",
  },
  { name: "metrics-cert-key", type: "string", default: "tls.key", help: "The name of the metrics server key file." },
  {
    name: "health-probe-bind-address",
    type: "string",
    default: ":8081",
    help: "The address the probe endpoint binds to (0 disables).",
  },
  {
    name: "leader-elect",
    type: "boolean",
    default: false,
    help: "Enable leader election for controller manager. Enabling this will ensure there is only one active controller manager.",
  },
  {
    name: "leader-election-id",
    type: "string",
    default: "80807133.tutorial.kubebuilder.io",
    help: "The name of the Lease used for leader election.",
  },
  {
    name: "leader-election-namespace",
    type: "string",
    default: "",
    help: "The namespace of the leader election Lease (default: the pod's namespace from POD_NAMESPACE or the service account, else default).",
  },
  {
    name: "webhook-host",
    type: "string",
    default: "",
    help: "The address the admission webhook server listens on (default: all addresses; e.g. $(POD_IP)).",
  },
  { name: "webhook-port", type: "string", default: "9443", help: "The port the admission webhook server listens on." },
  {
    name: "webhook-reuse-port",
    type: "boolean",
    default: false,
    help: "If set, the webhook server shares its port with the other servers of the Pod that set it too (SO_REUSEPORT), so one container's death leaves the port answering instead of refusing the API server's calls until the Pod leaves the Service's endpoints.",
  },
  {
    name: "webhooks-only",
    type: "boolean",
    default: false,
    help: "If set, the process serves the admission and conversion webhooks and nothing else: no reconciler, no leader election (the manager Pod's second webhook server; needs the webhooks enabled).",
  },
  {
    name: "webhook-cert-path",
    type: "string",
    default: "/tmp/k8s-webhook-server/serving-certs",
    help: "The directory that contains the webhook certificate.",
  },
  { name: "webhook-cert-name", type: "string", default: "tls.crt", help: "The name of the webhook certificate file." },
  { name: "webhook-cert-key", type: "string", default: "tls.key", help: "The name of the webhook key file." },
  {
    name: "webhook-cert-provision",
    type: "string",
    default: "external",
    help:
      "Who provides the webhook serving certificate in --webhook-cert-path: external (cert-manager, a mounted Secret, you) " +
      "or self (the manager keeps a self-signed CA and a serving certificate for --webhook-service-name in the Secret " +
      "--webhook-cert-secret, writes them to --webhook-cert-path, injects the CA into the webhook configurations and renews " +
      "both before they expire).",
  },
  {
    name: "webhook-cert-secret",
    type: "string",
    default: "webhook-server-cert",
    help: "With --webhook-cert-provision=self: the Secret, in the webhook Service's namespace, that holds the CA and the serving certificate (created if missing).",
  },
  {
    name: "webhook-service-name",
    type: "string",
    default: "",
    help: "The Service the API server calls the webhooks through: with --webhook-cert-provision=self (required) the certificate is valid for its DNS names; its EndpointSlices tell when the webhooks a configuration lists in its fail-once-served annotation are served.",
  },
  {
    name: "webhook-service-namespace",
    type: "string",
    default: "",
    help: "The namespace of the webhook Service (and, with --webhook-cert-provision=self, of the Secret; default: the pod's namespace from POD_NAMESPACE or the service account).",
  },
  {
    name: "mutating-webhook-configuration",
    type: "string",
    default: "",
    help: "MutatingWebhookConfigurations (comma-separated) of the webhooks served here: with --webhook-cert-provision=self their webhooks get the CA as caBundle; with --webhook-service-name the webhooks their batch.tutorial.kubebuilder.io/fail-once-served annotation lists get a twin with failurePolicy Fail once the Service serves them.",
  },
  {
    name: "validating-webhook-configuration",
    type: "string",
    default: "",
    help: "ValidatingWebhookConfigurations (comma-separated) of the webhooks served here: with --webhook-cert-provision=self their webhooks get the CA as caBundle; with --webhook-service-name the webhooks their batch.tutorial.kubebuilder.io/fail-once-served annotation lists get a twin with failurePolicy Fail once the Service serves them.",
  },
  {
    name: "enable-http2",
    type: "boolean",
    default: false,
    help: "If set, HTTP/2 will be enabled for the metrics and webhook servers (off by default: HTTP/2 Stream Cancellation and Rapid Reset CVEs).",
  },
  {
    name: "kubeconfig",
    type: "string",
    default: "",
    help: "Path to a kubeconfig. Only required if out-of-cluster (default: $KUBECONFIG, in-cluster config, ~/.kube/config).",
  },
  {
    name: "log-level",
    type: "string",
    default: "info",
    help: "Log level: debug, info, warn, error (or a zap-style verbosity: 0 = info, 1+ = debug).",
  },
  {
    name: "log-format",
    type: "string",
    default: "json",
    help: "Log format: json, or console for human-readable development logs.",
  },
  {
    name: "max-concurrent-reconciles",
    type: "string",
    default: "16",
    help: "The number of CronJobs reconciled in parallel (each mostly waits on the API server, so many are cheap).",
  },
  {
    name: "per-cronjob-metrics",
    type: "boolean",
    default: true,
    help:
      "Export per-CronJob metrics (cronjob_next_schedule_time_seconds, cronjob_runs_total, ...: at most 14 series per " +
      "CronJob). Use --per-cronjob-metrics=false on very large clusters to export none of them.",
  },
  {
    name: "status-write-delay",
    type: "string",
    default: "10s",
    help:
      "How long a CronJob's status may wait to show a Job the operator just created (a Go duration; 0s: at once). A " +
      "Job that ends within it costs one status write, its start and its end together, instead of two.",
  },
  {
    name: "status-write-qps",
    type: "string",
    default: "10",
    help:
      "CronJob status writes a second that a change the Jobs already show (a scheduled run's start or end) is " +
      "written with at once; past it, such changes wait and several runs of a CronJob go in one write, at most " +
      "--status-write-max-delay. Anything a Job does not show (a skip, a hold, a miss, a refusal, a condition) is " +
      "written at once whatever the budget.",
  },
  {
    name: "status-write-max-delay",
    type: "string",
    default: "5m",
    help:
      "The most a CronJob's status may stay behind its Jobs while the status-write budget is spent (a Go " +
      "duration, at most 5m, which the CronJobNotRunOnTime alert allows; 0s: never, every change is written at once).",
  },
  {
    name: "shutdown-delay-duration",
    type: "string",
    default: "0s",
    help:
      "On SIGTERM, how long the webhook and metrics servers keep serving after /readyz starts failing and the leader has " +
      "released its lease (a Go duration such as 5s), so the Pod leaves the Services' endpoints before it stops " +
      "answering (as kube-apiserver's flag of the same name). Set it when several replicas serve fail-closed webhooks.",
  },
  {
    name: "watch-namespaces",
    type: "string",
    default: "",
    help:
      "The namespaces (comma-separated) this install acts in, with the permissions of a Role in each: an operator per " +
      'tenant (docs/operating.md, "Tenants and shards"). Empty: every namespace (or those --watch-namespace-selector ' +
      "matches). Implies --namespace-claims.",
  },
  {
    name: "watch-namespace-selector",
    type: "string",
    default: "",
    help:
      "A label selector over Namespaces (such as team=payments): the install acts in the namespaces it matches, as they " +
      "come and go (needs list and watch on namespaces). Implies --namespace-claims.",
  },
  {
    name: "sharding",
    type: "boolean",
    default: false,
    help:
      "If set, every replica is active: each holds a Lease of its own (named after --leader-election-id) and acts in " +
      "the namespaces a rendezvous hash gives it among the live replicas, watching only those. A namespace moves only " +
      "once its old owner has let it go or its Lease has expired. Replaces --leader-elect; implies --namespace-claims.",
  },
  {
    name: "namespace-claims",
    type: "boolean",
    default: false,
    help:
      "If set, the install claims each namespace it acts in (a Lease named cronjob-operator in it, naming the install " +
      "and its instance) and acts in none that another install claims, which it names in its log, its metrics and " +
      "kubectl cron why. On with --watch-namespaces, --watch-namespace-selector and --sharding; set it on a " +
      "cluster-wide install that shares the cluster with tenants' installs.",
  },
  { name: "help", type: "boolean", default: false, help: "Show this help and exit." },
];

export class UsageError extends Error {
  constructor(msg: string) {
    super(msg);
    this.name = "UsageError";
  }
}

export function usage(): string {
  const lines = ["Usage: manager [flags]", "", "Runs the cronjob-operator controller manager.", "", "Flags:"];
  for (const f of FLAGS) {
    const def = f.type === "boolean" ? String(f.default) : JSON.stringify(f.default);
    lines.push(`  --${f.name}${f.type === "string" ? " string" : ""}`, `        ${f.help} (default ${def})`);
  }
  lines.push("", "Environment:", "  ENABLE_WEBHOOKS=false   do not start the admission webhook server", "");
  return lines.join("\n");
}

export function parseFlags(argv: string[], env: NodeJS.ProcessEnv = process.env): Flags {
  const options: Record<string, { type: "string" | "boolean" }> = {};
  for (const f of FLAGS) options[f.name] = { type: f.type };
  let values: Record<string, string | boolean | undefined>;
  const { args, explicit } = normaliseBooleans(argv);
  try {
    ({ values } = parseArgs({ args, options, strict: true, allowPositionals: false }));
    for (const [k, v] of explicit) values[k] = v;
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/^TypeError \[[A-Z_]+\]: /, ""));
  }
  const get = <T extends string | boolean>(name: string): T =>
    (values[name] ?? FLAGS.find((f) => f.name === name)!.default) as T;

  const addr = (name: string): string => {
    const v = get<string>(name);
    try {
      parseBindAddress(v, `--${name}`);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    return v;
  };
  const int = (name: string, min: number, max: number): number => {
    const v = get<string>(name);
    const n = Number(v);
    if (!/^\d+$/.test(v) || n < min || n > max)
      throw new UsageError(`invalid value "${v}" for flag --${name}: must be an integer from ${min} to ${max}`);
    return n;
  };
  const duration = (name: string, maxMs: number): number => {
    const v = get<string>(name);
    const d = parseGoDuration(v);
    const ms = d.ok ? Number(d.nanoseconds / 1_000_000n) : NaN;
    if (!d.ok || d.nanoseconds < 0n || ms > maxMs)
      throw new UsageError(
        `invalid value "${v}" for flag --${name}: must be a duration from 0s to ${maxMs / 1000}s, such as 5s` +
          (d.ok ? "" : ` (${d.reason})`),
      );
    return ms;
  };
  let logLevel: LogLevel;
  try {
    logLevel = parseLogLevel(get<string>("log-level"));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const logFormat = get<string>("log-format");
  if (logFormat !== "json" && logFormat !== "console")
    throw new UsageError(`invalid value "${logFormat}" for flag --log-format: must be json or console`);
  const provision = get<string>("webhook-cert-provision");
  if (provision !== "external" && provision !== "self")
    throw new UsageError(`invalid value "${provision}" for flag --webhook-cert-provision: must be external or self`);
  const list = (name: string): string[] =>
    get<string>(name)
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "");
  if (provision === "self") {
    if (!get<string>("webhook-service-name"))
      throw new UsageError(
        "--webhook-cert-provision=self needs --webhook-service-name (the Service the certificate is for)",
      );
    if (!get<string>("webhook-cert-secret"))
      throw new UsageError("--webhook-cert-provision=self needs a --webhook-cert-secret name");
  }
  const enableWebhooksEnv = env.ENABLE_WEBHOOKS;
  if (enableWebhooksEnv !== undefined && !["true", "false", ""].includes(enableWebhooksEnv)) {
    throw new UsageError(`invalid value "${enableWebhooksEnv}" for ENABLE_WEBHOOKS: must be true or false`);
  }
  const webhooksOnly = get<boolean>("webhooks-only");
  if (webhooksOnly && enableWebhooksEnv === "false")
    throw new UsageError("--webhooks-only serves the webhooks, but ENABLE_WEBHOOKS=false turns them off");
  // A process that runs no controller must never hold the Lease: the leader would schedule nothing.
  if (webhooksOnly && get<boolean>("leader-elect"))
    throw new UsageError("--webhooks-only runs no controller: it cannot take part in leader election (--leader-elect)");
  const watchNamespaces = list("watch-namespaces");
  for (const ns of watchNamespaces)
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(ns) || ns.length > 63)
      throw new UsageError(`invalid value "${ns}" in flag --watch-namespaces: not a namespace name (RFC 1123 label)`);
  const watchNamespaceSelector = get<string>("watch-namespace-selector").trim();
  if (watchNamespaceSelector) {
    try {
      parseSelector(watchNamespaceSelector);
    } catch (err) {
      throw new UsageError(`invalid value for flag --watch-namespace-selector: ${(err as Error).message}`);
    }
  }
  if (watchNamespaces.length > 0 && watchNamespaceSelector)
    throw new UsageError("--watch-namespaces and --watch-namespace-selector name the namespaces twice: set one");
  const sharding = get<boolean>("sharding");
  if (sharding && webhooksOnly)
    throw new UsageError("--webhooks-only runs no controller: it cannot be a shard (--sharding)");
  if (sharding && get<boolean>("leader-elect"))
    throw new UsageError("--sharding makes every replica active, each with its own Lease: drop --leader-elect");
  return {
    metricsBindAddress: addr("metrics-bind-address"),
    metricsSecure: get<boolean>("metrics-secure"),
    metricsCertPath: get<string>("metrics-cert-path"),
    metricsCertName: get<string>("metrics-cert-name"),
    metricsCertKey: get<string>("metrics-cert-key"),
    healthProbeBindAddress: addr("health-probe-bind-address"),
    leaderElect: get<boolean>("leader-elect"),
    leaderElectionID: get<string>("leader-election-id"),
    leaderElectionNamespace: get<string>("leader-election-namespace"),
    webhookHost: get<string>("webhook-host"),
    webhookPort: int("webhook-port", 1, 65535),
    webhookReusePort: get<boolean>("webhook-reuse-port"),
    webhooksOnly,
    webhookCertPath: get<string>("webhook-cert-path"),
    webhookCertName: get<string>("webhook-cert-name"),
    webhookCertKey: get<string>("webhook-cert-key"),
    webhookCertProvision: provision,
    webhookCertSecret: get<string>("webhook-cert-secret"),
    webhookServiceName: get<string>("webhook-service-name"),
    webhookServiceNamespace: get<string>("webhook-service-namespace"),
    mutatingWebhookConfigurations: list("mutating-webhook-configuration"),
    validatingWebhookConfigurations: list("validating-webhook-configuration"),
    enableHTTP2: get<boolean>("enable-http2"),
    kubeconfig: get<string>("kubeconfig"),
    logLevel,
    logFormat,
    maxConcurrentReconciles: int("max-concurrent-reconciles", 1, 1000),
    perCronJobMetrics: get<boolean>("per-cronjob-metrics"),
    shutdownDelayMs: duration("shutdown-delay-duration", 10 * 60_000),
    statusWriteDelayMs: duration("status-write-delay", 60_000),
    statusWriteQPS: int("status-write-qps", 0, 100_000),
    // At most 5m: CronJobNotRunOnTime fires once status.nextScheduleTime is 7 minutes old (docs/architecture.md).
    statusWriteMaxDelayMs: duration("status-write-max-delay", 300_000),
    enableWebhooks: enableWebhooksEnv !== "false",
    watchNamespaces,
    watchNamespaceSelector,
    sharding,
    // A webhooks-only server acts in no namespace: it claims none.
    namespaceClaims:
      !webhooksOnly &&
      (get<boolean>("namespace-claims") || sharding || watchNamespaces.length > 0 || watchNamespaceSelector !== ""),
    help: get<boolean>("help"),
  };
}

/** Go's flag package accepts --flag=true/false for booleans (and one dash); node's parseArgs does not. */
function normaliseBooleans(argv: string[]): { args: string[]; explicit: Map<string, boolean> } {
  const bools = new Set(FLAGS.filter((f) => f.type === "boolean").map((f) => f.name));
  const args: string[] = [];
  const explicit = new Map<string, boolean>();
  for (const raw of argv) {
    const a = /^-[a-z]/.test(raw) ? `-${raw}` : raw;
    const m = /^--([a-z0-9-]+)=(.*)$/.exec(a);
    if (m && bools.has(m[1]!)) {
      const v = m[2]!.toLowerCase();
      if (v === "true" || v === "1") explicit.set(m[1]!, true);
      else if (v === "false" || v === "0") explicit.set(m[1]!, false);
      else throw new UsageError(`invalid boolean value "${m[2]}" for flag --${m[1]}: must be true or false`);
      continue;
    }
    args.push(a);
  }
  return { args, explicit };
}
