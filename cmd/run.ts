// Wiring of the manager process; cmd/main.ts parses flags and calls run().
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { selfSignedCertificate } from "../runtime/metrics/auth.ts";
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import {
  CALENDAR_PLURAL,
  CLAIM_LABEL,
  CLAIM_LEASE_NAME,
  INSTALL_ANNOTATION,
  INSTANCE_LEASE_ANNOTATION,
  INSTANCE_OF_LABEL,
  CronJobResource,
  GROUP_PLURAL,
  PLURAL,
  RESOURCE,
} from "../api/v1/index.ts";
import { CronJobReconciler } from "../controllers/cronjob_controller.ts";
import {
  admissionChecks,
  admissionKinds,
  inputMetrics,
  inputReaders,
  type InputReaders,
} from "../controllers/inputs.ts";
import { metricsRegistry } from "../runtime/metrics/registry.ts";
import { CronJobMetrics, type CronJobRunMetrics, type CronJobView, noCronJobMetrics } from "../controllers/metrics.ts";
import { Client } from "../runtime/client.ts";
import { type KubeObject, Kinds } from "../runtime/kinds.ts";
import { loadKubeConfig, type RESTConfig } from "../runtime/kubeconfig.ts";
import { createLogger, log, setDefaultLogger } from "../runtime/log.ts";
import type { ClaimNaming } from "../runtime/sharding/claims.ts";
import { NamespaceCoordinator } from "../runtime/sharding/coordinator.ts";
import { LeaderElectionLostError, Manager, setupSignalHandler } from "../runtime/manager.ts";
import { podNamespace } from "../runtime/podnamespace.ts";
import { CertKinds, CertProvisioner } from "../runtime/webhook/certprovisioner.ts";
import { WebhookFailureGate } from "../runtime/webhook/failuregate.ts";
import type { WebhookHandler } from "../runtime/webhook/index.ts";
import { webhookRunnable } from "../runtime/webhook/runnable.ts";
import { CONVERT_PATH, cronJobConversion, cronJobWebhookHandlers } from "../webhooks/cronjob_webhook.ts";
import { fleetWebhookHandlers } from "../webhooks/fleet_webhooks.ts";
import { FAIL_ONCE_SERVED_ANNOTATION, unservedAdmission } from "../webhooks/unserved.ts";
import type { Flags } from "./flags.ts";

/** The product's name: user agent, field manager, certificate names (the runtime defaults to generic ones). */
const PRODUCT = "cronjob-operator";

export async function run(flags: Flags): Promise<number> {
  const log = createLogger({ level: flags.logLevel, format: flags.logFormat });
  setDefaultLogger(log);
  const setupLog = log.withName("setup");

  let kubeConfig;
  try {
    kubeConfig = loadKubeConfig(flags.kubeconfig || undefined);
  } catch (err) {
    setupLog.error("unable to load the Kubernetes configuration", err);
    return 1;
  }

  // --metrics-secure: HTTPS with the given certificate (or a self-signed one) and authn/authz of scrapers.
  let metricsTLS: { cert: string | Buffer; key: string | Buffer } | undefined;
  if (flags.metricsSecure && flags.metricsBindAddress !== "0") {
    try {
      metricsTLS = flags.metricsCertPath
        ? {
            cert: readFileSync(join(flags.metricsCertPath, flags.metricsCertName)),
            key: readFileSync(join(flags.metricsCertPath, flags.metricsCertKey)),
          }
        : await selfSignedCertificate(undefined, `${PRODUCT}-metrics`);
    } catch (err) {
      setupLog.error("unable to load the metrics server certificate", err, { path: flags.metricsCertPath });
      return 1;
    }
  }

  const mgr = new Manager({
    kubeConfig,
    logger: log,
    metricsBindAddress: flags.metricsBindAddress,
    ...(metricsTLS ? { metricsServer: { tls: metricsTLS }, metricsAuth: true } : {}),
    healthProbeBindAddress: flags.healthProbeBindAddress,
    // --namespace-claims (and the flags that imply it): the reconciler's cache watches the namespaces this replica
    // holds, one watch each, given by the NamespaceCoordinator below. A webhooks-only server reads, and claims nothing.
    // A tenant's webhooks-only server reads the calendars of its namespaces alone (it may read no other).
    scopedCache: flags.namespaceClaims || (flags.webhooksOnly && flags.watchNamespaces.length > 0),
    leaderElection: flags.leaderElect,
    leaderElectionID: flags.leaderElectionID,
    ...(flags.leaderElectionNamespace ? { leaderElectionNamespace: flags.leaderElectionNamespace } : {}),
    eventSourceComponent: "cronjob-controller",
    shutdownDelayMs: flags.shutdownDelayMs,
    userAgent: PRODUCT,
    fieldManager: PRODUCT,
  });
  // --webhooks-only (the Pod's second webhook server, config/default): the webhooks and what their checks read,
  // nothing leader-gated. Otherwise the reconciler, whose inputs' cache the webhook reads as it does.
  const inputs = flags.webhooksOnly ? webhookInputs(mgr, flags.watchNamespaces) : setupReconciler(mgr, flags).inputs;
  if (!flags.webhooksOnly && flags.namespaceClaims) {
    const scope = setupNamespaceScope(mgr, flags, kubeConfig);
    if (typeof scope === "string") {
      setupLog.error(scope, undefined);
      return 1;
    }
  }

  // ENABLE_WEBHOOKS=false (e.g. `make run` against a cluster without the certificates) serves none.
  if (flags.enableWebhooks) {
    // --webhook-cert-provision=self (config/default): the manager provisions, injects and rotates its own
    // serving certificate; the server starts once the files exist. external: they must exist at start.
    let provisioner: CertProvisioner | undefined;
    if (flags.webhookCertProvision === "self") {
      const namespace = flags.webhookServiceNamespace || podNamespace();
      if (!namespace) {
        setupLog.error(
          "--webhook-cert-provision=self needs the webhook Service's namespace: set --webhook-service-namespace " +
            "(or POD_NAMESPACE)",
          undefined,
        );
        return 1;
      }
      provisioner = new CertProvisioner({
        client: mgr.client,
        secretNamespace: namespace,
        secretName: flags.webhookCertSecret,
        secretLabels: WEBHOOK_CERT_SECRET_LABELS,
        serviceName: flags.webhookServiceName,
        serviceNamespace: namespace,
        mutatingWebhookConfigurations: flags.mutatingWebhookConfigurations,
        validatingWebhookConfigurations: flags.validatingWebhookConfigurations,
        // The CRD's conversion webhook (v1 ↔ v2) is served here too; a CRD without one is left alone. Not by a
        // tenant's install: the CRD and its conversion are the platform's (config/platform), whose CA it would replace.
        customResourceDefinitions: flags.watchNamespaces.length > 0 || flags.watchNamespaceSelector ? [] : [RESOURCE],
        certDir: flags.webhookCertPath,
        certName: flags.webhookCertName,
        keyName: flags.webhookCertKey,
        logger: log.withName("webhook").withName("cert-provisioner"),
      });
      mgr.add(provisioner);
      mgr.addReadyzCheck("webhook-cert", provisioner.checker);
    }
    // The webhooks a release adds ship Ignore and become Fail once their Service port has a ready endpoint: the
    // rollout that adds them refuses no write (webhooks/unserved.ts). Every webhook server runs it (idempotent).
    const configurations = [
      ...flags.mutatingWebhookConfigurations.map((name) => ({ kind: CertKinds.MutatingWebhookConfiguration, name })),
      ...flags.validatingWebhookConfigurations.map((name) => ({
        kind: CertKinds.ValidatingWebhookConfiguration,
        name,
      })),
    ];
    if (flags.webhookServiceName && configurations.length > 0) {
      const namespace = flags.webhookServiceNamespace || podNamespace();
      if (!namespace) {
        setupLog.error(
          "--webhook-service-name needs the Service's namespace: set --webhook-service-namespace (or POD_NAMESPACE)",
          undefined,
        );
        return 1;
      }
      mgr.add(
        new WebhookFailureGate({
          client: mgr.client,
          configurations,
          annotation: FAIL_ONCE_SERVED_ANNOTATION,
          serviceName: flags.webhookServiceName,
          serviceNamespace: namespace,
          logger: log.withName("webhook").withName("failure-gate"),
        }),
      );
    }
    const webhooks = webhookRunnable({
      ...(flags.webhookHost ? { host: flags.webhookHost } : {}),
      port: flags.webhookPort,
      reusePort: flags.webhookReusePort,
      certDir: flags.webhookCertPath,
      certName: flags.webhookCertName,
      keyName: flags.webhookCertKey,
      enableHTTP2: flags.enableHTTP2,
      // The manager's client dry-runs each new or changed Job template (RBAC: create on batch jobs).
      handlers: new Map<string, WebhookHandler>([
        ...cronJobWebhookHandlers({
          client: mgr.client,
          logger: log.withName("webhook").withName("cronjob"),
          // What a CronJob names of other objects (a calendar, an upstream), read as the reconciler reads it (the
          // cache every replica runs). A namespace this replica's cache does not cover (a shard's that another holds)
          // is unknown, not empty: no warning of a calendar "missing" that is only another shard's to read.
          inputs: admissionChecks(inputs, (namespace) => mgr.cache.covers(namespace)),
        }),
        // The ExclusionCalendar's and ConcurrencyGroup's validation (static: no client, no cache).
        ...fleetWebhookHandlers(),
        [CONVERT_PATH, cronJobConversion],
      ]),
      // A path of a newer webhook configuration (an upgrade rolling out): admitted with a warning, not refused.
      unservedAdmission: unservedAdmission(log.withName("webhook").withName("unserved")),
      logger: log.withName("webhook"),
      ...(provisioner ? { certificateReady: (signal: AbortSignal) => provisioner.waitReady(signal) } : {}),
    });
    mgr.add(webhooks);
    mgr.addReadyzCheck("webhook", webhooks.checker);
    // A replica going away tells the API server to stop reusing its connections to it (admission and conversion).
    mgr.onShutdown(() => webhooks.server()?.drain());
  }

  setupLog.info("starting manager");
  try {
    await mgr.start(setupSignalHandler());
    return 0;
  } catch (err) {
    setupLog.error(err instanceof LeaderElectionLostError ? "leader election lost" : "problem running manager", err);
    return 1;
  }
}

/** The reconciler and what it exports: the CronJobs' and the groups' metrics. */
function setupReconciler(mgr: Manager, flags: Flags): CronJobReconciler {
  // --per-cronjob-metrics: the cronjob_* series of every CronJob (controllers/metrics.ts), read from the
  // CronJob informer's cache at scrape time and exported by the leader only. A deleted CronJob's run
  // counters go when the reconciler finds it gone (it forgets the CronJob's other state there too).
  let cronJobMetrics: CronJobRunMetrics = noCronJobMetrics;
  if (flags.perCronJobMetrics) {
    const cronJobs = mgr.cache.informerFor<KubeObject>(CronJobResource);
    const m = new CronJobMetrics({
      list: () => cronJobs.list() as readonly CronJobView[],
      isLeader: () => mgr.isLeader(),
    });
    cronJobMetrics = m;
  }
  // `metrics` is the reconciler's run counter (countRun, forget) once setupWithManager takes it.
  const reconcilerOptions = {
    maxConcurrentReconciles: flags.maxConcurrentReconciles,
    metrics: cronJobMetrics,
    statusDelayMs: flags.statusWriteDelayMs,
    ...(flags.statusWriteMaxDelayMs > 0
      ? { statusFold: { qps: flags.statusWriteQPS, maxDelayMs: flags.statusWriteMaxDelayMs } }
      : {}),
  };
  const reconciler = CronJobReconciler.setupWithManager(mgr, reconcilerOptions);
  // The inputs' gauges (the concurrency groups': controllers/groups.ts), exported by the leader, whose places they read.
  for (const m of inputMetrics(reconciler.inputs, { now: () => Date.now(), isLeader: () => mgr.isLeader() }))
    m.register(metricsRegistry);
  return reconciler;
}

/** The inputs as the CronJob webhook reads them, from a cache of what their checks read alone (the calendars). */
function webhookInputs(mgr: Manager, namespaces: readonly string[]): InputReaders {
  for (const kind of admissionKinds()) mgr.cache.informerFor(kind);
  // A tenant's: the objects of its namespaces, watched from the start (nothing to claim: it only reads).
  if (mgr.cache.scoped) for (const ns of namespaces) void mgr.cache.addNamespace(ns);
  return inputReaders(mgr.cache);
}

/** The claim in every namespace an install acts in (api/v1/claims.ts names its parts). */
const NAMESPACE_CLAIM: ClaimNaming = {
  name: CLAIM_LEASE_NAME,
  labels: { [CLAIM_LABEL]: "true" },
  installAnnotation: INSTALL_ANNOTATION,
  instanceLeaseAnnotation: INSTANCE_LEASE_ANNOTATION,
};

/**
 * --namespace-claims: the NamespaceCoordinator that claims, watches and fences this replica's namespaces; with
 * --sharding, every replica's. A string: why it cannot start.
 */
function setupNamespaceScope(mgr: Manager, flags: Flags, kubeConfig: RESTConfig): NamespaceCoordinator | string {
  const namespace = flags.leaderElectionNamespace || podNamespace() || "default";
  const install = `${namespace}/${flags.leaderElectionID}`;
  const replica = process.env.POD_NAME || hostname();
  const identity = `${replica}_${randomUUID()}`;
  const leaseName = `${flags.leaderElectionID}-${replica}`.toLowerCase();
  if (flags.sharding && !/^[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?$/.test(flags.leaderElectionID))
    return `--sharding labels each replica's Lease with --leader-election-id, which must then be a label value: "${flags.leaderElectionID}"`;
  const leader = mgr.leaderLease();
  const coordinator = new NamespaceCoordinator({
    // Its own connections, as leader election has: claims and renewals must not queue behind a burst of creates.
    client: new Client(kubeConfig, { userAgent: `${PRODUCT}/sharding`, fieldManager: PRODUCT, maxSockets: 4 }),
    // Its watches hold a connection each (one per namespace with --watch-namespaces): as many as they need.
    watchClient: new Client(kubeConfig, { userAgent: `${PRODUCT}/sharding`, maxSockets: Infinity }),
    fenced: mgr.client,
    cache: mgr.cache,
    candidates:
      flags.watchNamespaces.length > 0
        ? { namespaces: flags.watchNamespaces }
        : { selector: flags.watchNamespaceSelector },
    membership: flags.sharding
      ? { sharded: true, namespace, leaseName, labels: { [INSTANCE_OF_LABEL]: flags.leaderElectionID } }
      : {
          sharded: false,
          lease: leader.ref,
          leaseDurationSeconds: leader.durationSeconds,
          heldUntil: () => mgr.leaderHeldUntil(),
        },
    naming: NAMESPACE_CLAIM,
    install,
    identity,
    fencedResources: [PLURAL, Kinds.Job.plural, CALENDAR_PLURAL, GROUP_PLURAL, "events"],
    logger: log.withName("sharding"),
  });
  mgr.add(coordinator);
  return coordinator;
}

/** Labels of the Secret the manager keeps its webhook CA and serving certificate in. */
const WEBHOOK_CERT_SECRET_LABELS: Readonly<Record<string, string>> = {
  "app.kubernetes.io/name": "cronjob-operator",
  "app.kubernetes.io/component": "webhook-certificate",
  "app.kubernetes.io/managed-by": "cronjob-operator",
};
