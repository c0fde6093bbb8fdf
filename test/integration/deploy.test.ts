// `make install` / `make deploy` / `make undeploy` / `make uninstall` for real, against the test control
// plane, and proof that the deployed RBAC is enough: the operator runs with the deployed ServiceAccount's
// token (TokenRequest) instead of admin and the deployed arguments, provisions its webhook certificate
// (config/default: the Secret, the caBundle of both configurations), serves the webhooks the apiserver calls
// through the deployed Service, and drives one schedule → Job → history cycle.
//
// There is no kubelet, so the Deployment never gets pods, and no cert-manager, which config/default does not
// need: the operator runs here as a process, and an Endpoints object for the webhook Service points at it
// (an address of this host). `make undeploy` must also finish after a partial deploy, including one of
// config/default-certmanager on this cluster without cert-manager's kinds.
//
// kube-apiserver runs with --enable-aggregator-routing so that it resolves webhook Services through their
// Endpoints instead of dialling a ClusterIP that leads nowhere on this machine, and with the
// OwnerReferencesPermissionEnforcement admission plugin (on in OpenShift, for one), which demands RBAC
// for the Jobs' blockOwnerDeletion: the strictest RBAC check the operator must pass.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { parseAllDocuments } from "yaml";
import {
  API_VERSION,
  CronJobResource,
  type CronJob,
  ExclusionCalendarResource,
  GROUP,
  KIND,
  RESOURCE,
} from "../../api/v1/index.ts";
import { FLAGS, parseFlags } from "../../cmd/flags.ts";
import { cronJobOwnerOf, type Job, SCHEDULED_AT_ANNOTATION } from "../../api/v1/index.ts";
import { Client } from "../../runtime/client.ts";
import { APIError } from "../../runtime/errors.ts";
import { Kinds, type KubeObject } from "../../runtime/kinds.ts";
import { serviceDNSNames } from "../../runtime/webhook/certprovisioner.ts";
import { planRenewal, SecretKeys } from "../../runtime/webhook/certrenewal.ts";
import { servedTwinName } from "../../runtime/webhook/failuregate.ts";
import { type CommandResult, PROJECT_ROOT, TestEnv } from "../../envtest/index.ts";
import { freePort } from "../../envtest/ports.ts";
import { createServiceBackend, hostAddress } from "../../envtest/service-backend.ts";
import { ManagedProcess } from "../../envtest/processes.ts";
import { eventually } from "../eventually.ts";
import { jobStatus } from "../fixtures.ts";

const NS = "cronjob-operator-system";
const PREFIX = "cronjob-operator-";
const SA = `${PREFIX}controller-manager`;
const IMG = "registry.example/cronjob-operator:deploy-test";
const WORK_NS = "deploy-rbac";
const LEASE = String(FLAGS.find((f) => f.name === "leader-election-id")!.default);
const WEBHOOK_SERVICE = `${PREFIX}webhook-service`;
const MUTATING = `${PREFIX}mutating-webhook-configuration`;
const VALIDATING = `${PREFIX}validating-webhook-configuration`;
const CERT_SECRET = "webhook-server-cert";
/** The webhooks config/default ships Ignore, for the operator to make Fail once served (fail-once-served). */
const FLEET_WEBHOOKS = ["vexclusioncalendar-v1.kb.io", "vconcurrencygroup-v1.kb.io"];

type Obj = Record<string, any>;

/** API groups kube-apiserver 1.20 serves itself; objects of any other group (but ours) need a CRD first. */
const BUILT_IN_GROUPS = new Set([
  "",
  "apps",
  "batch",
  "policy",
  "rbac.authorization.k8s.io",
  "admissionregistration.k8s.io",
  "apiextensions.k8s.io",
  "coordination.k8s.io",
  "networking.k8s.io",
  "scheduling.k8s.io",
  "storage.k8s.io",
]);

const groupOf = (o: Obj): string => (String(o.apiVersion).includes("/") ? String(o.apiVersion).split("/")[0]! : "");
const describeObj = (o: Obj): string =>
  `${o.kind}/${o.metadata?.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata?.name}`;
const unb64 = (s: unknown): string => Buffer.from(typeof s === "string" ? s : "", "base64").toString("utf8");

function parseObjects(yaml: string): Obj[] {
  return parseAllDocuments(yaml)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
}

describe("make install / deploy / undeploy / uninstall on a real control plane", { timeout: 420_000 }, () => {
  let env: TestEnv;
  let client: Client;
  let manifests: string; // `kubectl kustomize config/default`
  let objs: Obj[];
  let operator: ManagedProcess | undefined;

  const kubectl = (args: string[], input?: string) => env.kubectl(args, input);
  const applyJSON = async (items: Obj[]) => {
    const r = await kubectl(
      ["apply", "--server-side", "-f", "-"],
      JSON.stringify({ apiVersion: "v1", kind: "List", items }),
    );
    assert.equal(r.code, 0, r.stderr);
  };

  /** `make <target>` as a user would run it, against the test control plane. */
  function make(target: string, vars: string[] = []): Promise<CommandResult> {
    return new Promise((resolveP) => {
      execFile(
        "make",
        ["--no-print-directory", target, ...vars],
        {
          cwd: PROJECT_ROOT,
          env: { ...process.env, KUBECONFIG: env.kubeconfigPath, KUBECTL: join(env.assets, "kubectl") },
          maxBuffer: 64 << 20,
          timeout: 150_000,
        },
        (err, stdout, stderr) =>
          resolveP({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
      );
    });
  }

  /** The caBundle of every webhook of both deployed configurations, decoded. */
  const caBundles = async (): Promise<string[]> => {
    const out: string[] = [];
    for (const [kind, name] of [
      [mutatingKind, MUTATING],
      [validatingKind, VALIDATING],
    ] as const) {
      const cfg = await client.get<Obj & KubeObject>(kind, undefined, name);
      for (const w of cfg.webhooks as Obj[]) out.push(unb64(w.clientConfig?.caBundle));
    }
    return out;
  };

  /** Nothing of the render (and no namespace, CRD or webhook configuration) is left on the cluster. */
  const assertNothingLeft = async (rendered: string) => {
    const left = await kubectl(["get", "-f", "-", "--ignore-not-found", "-o", "name"], rendered);
    assert.equal(left.stdout.trim(), "", "objects left after make undeploy");
    for (const [kind, name] of [
      ["namespace", NS],
      ["customresourcedefinition", RESOURCE],
      ["clusterrole", `${PREFIX}manager-role`],
      ["clusterrolebinding", `${PREFIX}manager-rolebinding`],
      ["mutatingwebhookconfiguration", MUTATING],
      ["validatingwebhookconfiguration", VALIDATING],
    ] as const) {
      const g = await kubectl(["get", kind, name]);
      assert.notEqual(g.code, 0, `${kind} ${name} is still there`);
      assert.match(g.stderr, /NotFound|not found/);
    }
  };

  before(async () => {
    env = await TestEnv.start({
      crdDirectoryPaths: [], // make install does it
      // The namespace controller and the garbage collector let undeploy finish; the built-in job and
      // cronjob controllers must not run: this test plays the Job controller itself. No endpoints
      // controller either: the test writes the webhook Service's Endpoints itself.
      controllerManager: { controllers: ["namespace", "garbagecollector"] },
      apiServerArgs: [
        "--enable-aggregator-routing=true",
        "--enable-admission-plugins=OwnerReferencesPermissionEnforcement",
      ],
    });
    client = new Client(env.kubeConfig, { userAgent: "deploy-test" });
    const k = await kubectl(["kustomize", join(PROJECT_ROOT, "config", "default")]);
    assert.equal(k.code, 0, k.stderr);
    // Before 1.21 PodDisruptionBudget is served as policy/v1beta1 only; make deploy uses it there (so must
    // the comparisons below). 1.21+ serve policy/v1 (and 1.25+ only that).
    const served = await kubectl(["api-versions"]);
    manifests = served.stdout.split("\n").includes("policy/v1")
      ? k.stdout
      : k.stdout.replace(/^apiVersion: policy\/v1$/gm, "apiVersion: policy/v1beta1");
    objs = parseObjects(manifests);
    assert.ok(
      objs.some((o) => o.kind === "PodDisruptionBudget"),
      "config/default has the manager's PDB",
    );
  });

  after(async () => {
    await operator?.stop();
    client?.close();
    await env?.stop();
  });

  it("make install applies the CRD; it becomes Established", async () => {
    const r = await make("install");
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      new RegExp(`customresourcedefinition\\.apiextensions\\.k8s\\.io/${RESOURCE} serverside-applied`),
    );
    await env.waitEstablished(RESOURCE);
  });

  it("make deploy applies every object of config/default on a cluster without cert-manager", async () => {
    // config/default needs nothing this control plane does not serve: no cert-manager, no ServiceMonitor.
    const foreign = objs.filter((o) => !BUILT_IN_GROUPS.has(groupOf(o)) && groupOf(o) !== GROUP).map(describeObj);
    assert.deepEqual(foreign, [], "config/default needs kinds beyond the built-in ones");
    assert.equal(
      objs.filter((o) => o.kind === "Certificate" || o.kind === "Issuer").length,
      0,
      "cert-manager kinds in config/default",
    );

    const r = await make("deploy", [`IMG=${IMG}`]);
    assert.equal(r.code, 0, `make deploy failed:\n${r.stdout}\n${r.stderr}`);
    assert.equal(r.stdout.match(/ serverside-applied$/gm)?.length, objs.length, r.stdout);

    // Every object of the overlay exists.
    const got = await kubectl(["get", "-f", "-", "-o", "json"], manifests);
    assert.equal(got.code, 0, got.stderr);
    const items = (JSON.parse(got.stdout) as { items?: Obj[] }).items ?? [JSON.parse(got.stdout) as Obj];
    assert.deepEqual(items.map(describeObj).sort(), objs.map(describeObj).sort());

    // The CRD is Established.
    await env.waitEstablished(RESOURCE);

    // The Deployment: the image of IMG, the hardened security context, the webhook server on with a
    // certificate it provisions for the deployed Service and configurations (no Secret to mount), a
    // ServiceAccount that exists. (No kubelet: it never gets a pod here.)
    const live = await client.get<Obj>(deploymentKind, NS, SA);
    const pod = live.spec.template.spec;
    const c = (pod.containers as Obj[]).find((x) => x.name === "manager");
    assert.ok(c, "no manager container");
    assert.equal(c.image, IMG);
    assert.equal(pod.serviceAccountName, SA);
    assert.equal(pod.securityContext.runAsNonRoot, true);
    assert.equal(pod.securityContext.seccompProfile?.type, "RuntimeDefault");
    assert.equal(c.securityContext.runAsNonRoot, true);
    assert.equal(c.securityContext.readOnlyRootFilesystem, true);
    assert.equal(c.securityContext.allowPrivilegeEscalation, false);
    assert.deepEqual(c.securityContext.capabilities?.drop, ["ALL"]);
    assert.equal(c.securityContext.seccompProfile?.type, "RuntimeDefault");
    assert.equal((c.env as Obj[]).find((e) => e.name === "ENABLE_WEBHOOKS")?.value, "true");
    const flags = parseFlags((c.args as string[]).slice(1), { ENABLE_WEBHOOKS: "true" });
    assert.equal(flags.webhookCertProvision, "self");
    assert.equal(flags.webhookServiceName, WEBHOOK_SERVICE);
    assert.deepEqual(flags.mutatingWebhookConfigurations, [MUTATING]);
    assert.deepEqual(flags.validatingWebhookConfigurations, [VALIDATING]);
    assert.ok(!(pod.volumes as Obj[]).some((v) => v.secret), "the Deployment mounts a Secret nobody creates");
    assert.ok(items.some((o) => o.kind === "ServiceAccount" && o.metadata.name === SA));

    // The Services select the manager's pods and reach its named ports.
    const podLabels = live.spec.template.metadata.labels as Record<string, string>;
    for (const svc of items.filter((o) => o.kind === "Service")) {
      for (const [k, v] of Object.entries(svc.spec.selector as Record<string, string>)) {
        assert.equal(
          podLabels[k],
          v,
          `${describeObj(svc)} selects ${k}=${v}, the pods are labelled ${k}=${podLabels[k]}`,
        );
      }
      for (const p of svc.spec.ports as Obj[]) {
        assert.ok(
          (c.ports as Obj[]).some((cp) => cp.containerPort === p.targetPort || cp.name === p.targetPort),
          `${describeObj(svc)} targets port ${p.targetPort}, which the manager container does not expose`,
        );
      }
    }
    // Every webhook calls the deployed Service, which is what the provisioned certificate is for.
    for (const wc of items.filter((o) => /WebhookConfiguration$/.test(o.kind))) {
      for (const w of wc.webhooks as Obj[]) {
        assert.deepEqual(w.clientConfig.service.name, WEBHOOK_SERVICE);
        assert.deepEqual(w.clientConfig.service.namespace, NS);
        assert.equal(w.clientConfig.caBundle, undefined, "the caBundle is the manager's to set");
      }
    }

    // The webhooks are live and fail closed: until the manager runs, a CronJob is refused.
    const err = await client.create<CronJob>(CronJobResource, cronJob("refused", "default", "@every 1h")).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof APIError, `the CronJob was admitted without a webhook server: ${String(err)}`);
    assert.match(err.message, /failed calling webhook "mcronjob-v1\.kb\.io"/);
    assert.doesNotMatch(err.message, /dial tcp/);
  });

  it("the deployed RBAC and arguments are enough: webhook certificate, webhooks, one schedule → Job → history cycle with the SA's token", async (t) => {
    // A token for the deployed ServiceAccount (TokenRequest API) and a kubeconfig that uses only it.
    let token: string;
    try {
      token = await env.serviceAccountToken(NS, SA);
    } catch (e) {
      assert.fail(
        `TokenRequest for ${NS}/${SA} failed (the apiserver needs --service-account-issuer and ` +
          `--service-account-signing-key-file, see envtest/index.ts): ${String(e)}`,
      );
    }
    assert.ok(token);
    const cluster = env.kubeConfig.getCurrentCluster()!;
    const saKubeconfig = join(env.dir, "sa-kubeconfig");
    writeFileSync(
      saKubeconfig,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [
          { name: "envtest", cluster: { server: cluster.server, "certificate-authority-data": cluster.caData } },
        ],
        users: [{ name: SA, user: { token } }],
        contexts: [{ name: "sa", context: { cluster: "envtest", user: SA } }],
        "current-context": "sa",
      }),
      { mode: 0o600 },
    );
    const canI = async (...args: string[]) =>
      (await kubectl([`--kubeconfig=${saKubeconfig}`, "auth", "can-i", ...args])).stdout.trim();
    assert.equal(await canI("get", "secrets", "--all-namespaces"), "no", "the token must not be an admin's");
    // Least privilege: exactly the verbs the code calls (controllers/rbac.ts), and the cycle below shows
    // they are enough. Not granted: a live GET of a CronJob (read from the cache), GET/PATCH of its status
    // (written with PUT), events.k8s.io Events (the recorder writes core/v1 ones); any Secret but its own
    // webhook certificate (and that one only to read, watch and replace; create cannot be limited to a
    // name), any webhook configuration but its own two (never created, patched or deleted).
    const cronjobs = `cronjobs.${GROUP}`;
    const expected: Array<[string, string, string, "yes" | "no"]> = [
      ["list", cronjobs, "", "yes"],
      ["watch", cronjobs, "", "yes"],
      ["get", cronjobs, "", "no"],
      ["update", cronjobs, "", "no"],
      ["patch", cronjobs, "", "no"],
      ["delete", cronjobs, "", "no"],
      ["update", cronjobs, "status", "yes"],
      ["get", cronjobs, "status", "no"],
      ["patch", cronjobs, "status", "no"],
      ["update", cronjobs, "finalizers", "yes"],
      // update: a run whose Pods never started is ended (controllers/starts.ts).
      ...(["get", "list", "watch", "create", "update", "delete"] as const).map((v): [string, string, string, "yes"] => [
        v,
        "jobs.batch",
        "",
        "yes",
      ]),
      ["patch", "jobs.batch", "", "no"],
      // The concurrency groups, read from the cache; a run's Pods, listed once its start limit passes.
      ["list", `concurrencygroups.${GROUP}`, "", "yes"],
      ["watch", `concurrencygroups.${GROUP}`, "", "yes"],
      ["get", `concurrencygroups.${GROUP}`, "", "no"],
      ["update", `concurrencygroups.${GROUP}`, "", "no"],
      // The exclusion calendars, read from the cache too.
      ["list", `exclusioncalendars.${GROUP}`, "", "yes"],
      ["watch", `exclusioncalendars.${GROUP}`, "", "yes"],
      ["get", `exclusioncalendars.${GROUP}`, "", "no"],
      ["update", `exclusioncalendars.${GROUP}`, "", "no"],
      ["list", "pods", "", "yes"],
      ["get", "pods", "", "no"],
      ["delete", "pods", "", "no"],
      ["create", "events", "", "yes"],
      ["patch", "events", "", "yes"],
      ["create", "events.events.k8s.io", "", "no"],
      ["patch", "events.events.k8s.io", "", "no"],
      ["create", "secrets", "", "no"], // in WORK_NS
      ["get", `secrets/${CERT_SECRET}`, "", "no"], // in WORK_NS
      ["list", "endpointslices.discovery.k8s.io", "", "no"], // in WORK_NS
    ];
    const inNS: Array<[string, string, "yes" | "no"]> = [
      ["create", "secrets", "yes"],
      ...(["get", "list", "watch", "update"] as const).map((v): [string, string, "yes"] => [
        v,
        `secrets/${CERT_SECRET}`,
        "yes",
      ]),
      ["patch", `secrets/${CERT_SECRET}`, "no"],
      ["delete", `secrets/${CERT_SECRET}`, "no"],
      ["get", "secrets/another-secret", "no"],
      ["list", "secrets", "no"],
      // The failure gate: its Service (which port is which) and the Service's EndpointSlices.
      ["get", `services/${WEBHOOK_SERVICE}`, "yes"],
      ["get", "services/another-service", "no"],
      ["update", `services/${WEBHOOK_SERVICE}`, "no"],
      ["list", "endpointslices.discovery.k8s.io", "yes"],
      ["watch", "endpointslices.discovery.k8s.io", "yes"],
      ["update", "endpointslices.discovery.k8s.io", "no"],
    ];
    const clusterWide: Array<[string, string, "yes" | "no"]> = [
      ...[`mutatingwebhookconfigurations/${MUTATING}`, `validatingwebhookconfigurations/${VALIDATING}`].flatMap(
        (r): Array<[string, string, "yes" | "no"]> => [
          ...(["get", "list", "watch", "update"] as const).map((v): [string, string, "yes"] => [v, r, "yes"]),
          ["patch", r, "no"],
          ["delete", r, "no"],
        ],
      ),
      ["get", "mutatingwebhookconfigurations/another-configuration", "no"],
      ["update", "validatingwebhookconfigurations/another-configuration", "no"],
      ["create", "mutatingwebhookconfigurations", "no"],
      ["list", "validatingwebhookconfigurations", "no"],
    ];
    const got: string[] = [];
    const want: string[] = [];
    for (const [verb, resource, sub, answer] of expected) {
      const what = `${verb} ${resource}${sub ? `/${sub}` : ""}`;
      const args = [verb, resource, "-n", WORK_NS, ...(sub ? [`--subresource=${sub}`] : [])];
      got.push(`${what}: ${await canI(...args)}`);
      want.push(`${what}: ${answer}`);
    }
    for (const [verb, resource, answer] of inNS) {
      got.push(`${verb} ${resource} -n ${NS}: ${await canI(verb, resource, "-n", NS)}`);
      want.push(`${verb} ${resource} -n ${NS}: ${answer}`);
    }
    for (const [verb, resource, answer] of clusterWide) {
      got.push(`${verb} ${resource}: ${await canI(verb, resource)}`);
      want.push(`${verb} ${resource}: ${answer}`);
    }
    assert.deepEqual(got, want, "the deployed manager-role is not exactly controllers/rbac.ts");

    await applyJSON([{ apiVersion: "v1", kind: "Namespace", metadata: { name: WORK_NS } }]);

    // The webhook Service's endpoints (no pods, no endpoints controller here): the operator on this host.
    const ip = hostAddress();
    const webhookPort = await freePort();
    const backend = (address: string) => ({ service: WEBHOOK_SERVICE, namespace: NS, ip: address, port: webhookPort });
    const probePort = await freePort();
    if (ip) {
      // As a Pod of a release before the fleet kinds' webhooks: the CronJob webhooks' port only. Their webhooks
      // (shipped Ignore, called through the port webhook-fleet) have no endpoint until the backend declares it below.
      await createServiceBackend(client, { ...backend(ip), portNames: ["webhook"] });
    } else {
      // Without an address the apiserver can dial, nothing could serve the webhooks, which fail closed.
      t.diagnostic("no non-loopback IPv4 address on this host: the webhooks are removed for the cycle");
      for (const name of [MUTATING, VALIDATING]) {
        const kind = name === MUTATING ? "mutatingwebhookconfiguration" : "validatingwebhookconfiguration";
        const d = await kubectl(["delete", kind, name]);
        assert.equal(d.code, 0, d.stderr);
      }
    }

    // The real entrypoint with the deployed arguments (only what binds to this host changed: ports and
    // the certificate directory) and nothing but the ServiceAccount's credentials.
    const live = await client.get<Obj>(deploymentKind, NS, SA);
    const container = (live.spec.template.spec.containers as Obj[]).find((x) => x.name === "manager")!;
    const certDir = mkdtempSync(join(env.dir, "webhook-certs-"));
    const args = (container.args as string[])
      .slice(1)
      .filter((a) => !/^--(webhook-cert-path|health-probe-bind-address|metrics-bind-address)=/.test(a));
    const logFile = join(env.dir, "operator.log");
    const childEnv: NodeJS.ProcessEnv = {
      ...process.env,
      ENABLE_WEBHOOKS: "true",
      KUBECONFIG: saKubeconfig,
      POD_NAMESPACE: NS,
    };
    operator = new ManagedProcess(
      "operator",
      join(PROJECT_ROOT, "node_modules", ".bin", "node"),
      [
        join(PROJECT_ROOT, "cmd", "main.ts"),
        ...args,
        `--kubeconfig=${saKubeconfig}`,
        `--webhook-cert-path=${certDir}`,
        `--webhook-port=${webhookPort}`,
        `--health-probe-bind-address=127.0.0.1:${probePort}`,
        "--metrics-bind-address=0",
      ],
      logFile,
      childEnv,
    );
    const log = () => (existsSync(logFile) ? readFileSync(logFile, "utf8") : "");
    const logTail = () =>
      `\noperator log:\n${log()
        .split("\n")
        .slice(-30)
        .map((l) => l.slice(0, 600))
        .join("\n")}`;
    try {
      await eventually(
        "the operator to acquire the leader Lease",
        async () => {
          if (!operator!.running) throw new Error("the operator exited");
          return log().includes("successfully acquired lease");
        },
        30_000,
        logTail,
      );
      const lease = await client.get<Obj>(Kinds.Lease, NS, LEASE);
      assert.ok(lease.spec?.holderIdentity, `Lease ${NS}/${LEASE} has no holder`);

      // Ready only with the webhook server up, on the certificate the operator provisioned.
      await eventually(
        "/readyz",
        async () => (await fetch(`http://127.0.0.1:${probePort}/readyz`)).status === 200,
        30_000,
        logTail,
      );
      const secret = await client.get<Obj & KubeObject>(secretKind, NS, CERT_SECRET);
      const data = Object.fromEntries(
        Object.entries(secret.data as Record<string, string>).map(([k, v]) => [k, unb64(v)]),
      );
      const dnsNames = serviceDNSNames(WEBHOOK_SERVICE, NS);
      const plan = planRenewal(data, {
        now: Date.now(),
        dnsNames,
        caValidityMs: 10 * 365 * 86_400_000,
        certValidityMs: 365 * 86_400_000,
      });
      assert.equal(plan.action, "keep", `the provisioned Secret is not usable: ${JSON.stringify(plan)}`);
      assert.equal(secret.metadata?.labels?.["app.kubernetes.io/name"], "cronjob-operator");
      assert.ok(new X509Certificate(data[SecretKeys.cert]!).checkHost(`${WEBHOOK_SERVICE}.${NS}.svc`));
      assert.equal(readFileSync(join(certDir, "tls.crt"), "utf8"), data[SecretKeys.cert]);
      if (ip) {
        // Every webhook config/default declares (the CronJob's two, the calendar's and the group's) trusts the CA.
        const declared = objs
          .filter((o) => o.kind === "MutatingWebhookConfiguration" || o.kind === "ValidatingWebhookConfiguration")
          .flatMap((o) => (o.webhooks as Obj[]) ?? []);
        assert.ok(declared.length >= 4, `${declared.length} webhooks declared`);
        assert.deepEqual(
          await caBundles(),
          declared.map(() => `${data[SecretKeys.caCert]!.trim()}\n`),
        );
      }

      // As admin (a user), a CronJob that is due every 5 s and keeps one successful Job: admitted through
      // the operator's webhooks (the apiserver dials the Service's Endpoints and trusts the injected CA).
      const spec = { ...cronJob("every-5s", WORK_NS, "@every 5s").spec, successfulJobsHistoryLimit: 1 };
      const cj = await eventually(
        "the CronJob admitted by the operator's webhooks",
        async () =>
          client.create<CronJob>(CronJobResource, { ...cronJob("every-5s", WORK_NS, "@every 5s"), spec } as CronJob),
        30_000,
        logTail,
      );
      // Defaulted by the mutating webhook (the CRD's schema has no default for suspend).
      if (ip) assert.equal((cj.spec as Obj).suspend, false, "the mutating webhook was not called");
      const ownJobs = async () =>
        (await client.list<Job>(Kinds.Job, { namespace: WORK_NS })).items
          .filter((j) => cronJobOwnerOf(j)?.uid === cj.metadata.uid)
          .sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));
      // Play the Job controller: the Job ran and completed.
      const complete = async (j: Job) => {
        j.status = jobStatus({ state: "complete", start: j.metadata!.creationTimestamp!, end: new Date() });
        await client.updateStatus(Kinds.Job, j);
      };

      const first = await eventually("the first Job", async () => (await ownJobs())[0], 40_000, logTail);
      await complete(first);
      const second = await eventually(
        "a second Job",
        async () => (await ownJobs()).find((j) => j.metadata!.name! > first.metadata!.name!),
        40_000,
        logTail,
      );
      await complete(second);

      // History: with successfulJobsHistoryLimit 1 the older successful Job is deleted.
      await eventually(
        `${first.metadata!.name} deleted (history limit)`,
        async () => !(await ownJobs()).some((j) => j.metadata!.name === first.metadata!.name),
        30_000,
        logTail,
      );
      assert.ok((await ownJobs()).some((j) => j.metadata!.name === second.metadata!.name));

      // Status written through the status subresource.
      const st = await eventually(
        "status.lastSuccessfulTime",
        async () => {
          const s = (await client.get<CronJob>(CronJobResource, WORK_NS, "every-5s")).status;
          return s?.lastSuccessfulTime && s.lastScheduleTime ? s : undefined;
        },
        20_000,
        logTail,
      );
      assert.ok(new Date(st.lastScheduleTime!) >= new Date(second.metadata!.annotations![SCHEDULED_AT_ANNOTATION]!));

      // Events about the CronJob, recorded by the operator.
      const reasons = await eventually(
        "the operator's events",
        async () => {
          const evs = (await client.list<Obj & KubeObject>(Kinds.Event, { namespace: WORK_NS })).items.filter(
            (e) => e.involvedObject?.kind === KIND && e.involvedObject?.name === "every-5s",
          );
          const ours = evs.filter((e) => e.source?.component === "cronjob-controller");
          const rs = new Set(ours.map((e) => e.reason as string));
          return ["SuccessfulCreate", "SawCompletedJob"].every((r) => rs.has(r)) ? ours : undefined;
        },
        20_000,
        logTail,
      );
      // A run every 5 s: its routine Events (a run created, a success, history cleanup) share one budget of three,
      // then one per 5 minutes (docs/using-cronjobs.md#events), so after several runs there are still three at most.
      const routine = new Set(["SuccessfulCreate", "SawCompletedJob", "SuccessfulDelete"]);
      assert.ok(
        reasons.filter((e) => routine.has(e.reason as string)).length <= 3,
        reasons.map((e) => `${e.reason}: ${e.message}`).join("\n"),
      );

      if (ip) {
        // The failure gate (runtime/webhook/failuregate.ts), as in an upgrade from a release before the fleet
        // kinds' webhooks: while the one endpoint declares only the CronJob webhooks' port (an old Pod), theirs
        // stay Ignore and a calendar write is admitted, not refused (nothing serves their port: no endpoint). Once
        // the endpoint declares webhook-fleet (a new Pod ready), the operator adds their failing twins and they check.
        const policies = async () =>
          ((await client.get<Obj & KubeObject>(validatingKind, undefined, VALIDATING)).webhooks as Obj[])
            .filter((w) => /^v(exclusioncalendar|concurrencygroup)-/.test(w.name))
            .map((w) => `${w.name}=${w.failurePolicy}`);
        assert.deepEqual(
          await policies(),
          FLEET_WEBHOOKS.map((n) => `${n}=Ignore`),
          logTail(),
        );
        const calendar = (name: string, start: string) =>
          ({
            apiVersion: API_VERSION,
            kind: "ExclusionCalendar",
            metadata: { name, namespace: WORK_NS },
            spec: { windows: [{ name: "freeze", start, end: "2027-01-02" }] },
          }) as KubeObject;
        await client.create(ExclusionCalendarResource, calendar("before-the-rollout", "2026-12-20"));
        await createServiceBackend(client, { ...backend(ip), portNames: ["webhook", "webhook-fleet"] });
        // Each gets its twin (`-served`), which fails closed; the webhook itself stays as shipped (the installer's).
        await eventually(
          "the fleet webhooks' failing twins once their port is served",
          async () =>
            JSON.stringify(await policies()) ===
            JSON.stringify(FLEET_WEBHOOKS.flatMap((n) => [`${n}=Ignore`, `${servedTwinName(n)}=Fail`])),
          30_000,
          logTail,
        );
        assert.match(log(), /"msg":"Webhooks now served: their twins fail closed"/);
        const refusal = await eventually(
          "a bad calendar refused by its webhook, through the port webhook-fleet",
          async () => {
            try {
              await client.create(ExclusionCalendarResource, calendar("bad", "not-a-date"));
              await client.delete(ExclusionCalendarResource, WORK_NS, "bad");
              return undefined;
            } catch (err) {
              return err instanceof APIError && /denied the request/.test(err.message) ? err.message : undefined;
            }
          },
          30_000,
          logTail,
        );
        assert.match(refusal, /spec\.windows\[0\]\.start/);
      }

      // No request was refused: any missing permission shows as a 403 in the log.
      const text = log();
      const refused = text.split("\n").filter((l) => /forbidden|"code":\s*40[13]\b|unauthorized/i.test(l));
      assert.deepEqual(refused, [], `the operator was refused requests: missing RBAC?${logTail()}`);
      assert.ok(operator.running, `the operator exited${logTail()}`);
      assert.match(text, /"msg":"starting manager"/);
      assert.match(text, /"msg":"Created the webhook certificate Secret"/);
    } finally {
      await operator.stop();
    }
  });

  it("make deploy again keeps the injected caBundle; make undeploy and make uninstall remove everything", async (t) => {
    const before = await caBundles().catch(() => [] as string[]);
    // Put back whatever the previous test took away (and show make deploy is repeatable).
    const again = await make("deploy", [`IMG=${IMG}`]);
    assert.equal(again.code, 0, `make deploy (again) failed:\n${again.stdout}\n${again.stderr}`);
    const present = await kubectl(["get", "-f", "-", "-o", "name"], manifests);
    assert.equal(present.code, 0, present.stderr);
    assert.equal(present.stdout.trim().split("\n").length, objs.length);
    // Server-side apply leaves fields it does not own alone: the operator's caBundle survives a re-deploy.
    if (before.length > 0 && before.every((b) => b !== "")) assert.deepEqual(await caBundles(), before);
    else t.diagnostic("the webhook configurations were recreated: no caBundle to keep");

    const u = await make("undeploy", [`IMG=${IMG}`]);
    assert.equal(u.code, 0, `make undeploy failed:\n${u.stdout}\n${u.stderr}`);
    const un = await make("uninstall"); // the CRD went with undeploy: --ignore-not-found
    assert.equal(un.code, 0, `make uninstall failed:\n${un.stdout}\n${un.stderr}`);
    await assertNothingLeft(manifests);
    // The Secret the operator created went with the namespace.
    const secret = await client.get(secretKind, NS, CERT_SECRET).then(
      () => "present",
      (e: unknown) => (e instanceof APIError ? e.reason : String(e)),
    );
    assert.equal(secret, "NotFound");
    // Not asserted: Jobs the CronJobs created outlive undeploy. The CRD (and with it every CronJob) goes
    // at once, and the garbage collector, no longer able to resolve the owner's kind, keeps the dependents
    // (upstream behaviour, kubernetes/kubernetes#102641). Delete CronJobs before undeploying to avoid it.
    const orphans = (await client.list<Job>(Kinds.Job, { namespace: WORK_NS })).items.length;
    t.diagnostic(`Jobs left in ${WORK_NS} after undeploy: ${orphans}`);
  });

  it("make undeploy exits 0 after a partial deploy, also of config/default-certmanager without cert-manager", async () => {
    // make deploy of the cert-manager overlay refuses up front when cert-manager is missing.
    const refused = await make("deploy", [`IMG=${IMG}`, "OVERLAY=config/default-certmanager"]);
    assert.notEqual(refused.code, 0, "make deploy of config/default-certmanager succeeded without cert-manager");
    assert.match(refused.stderr, /does not serve cert-manager\.io\/v1.*nothing was applied/);
    assert.match(refused.stderr, /Install cert-manager first/);
    assert.notEqual((await kubectl(["get", "namespace", NS])).code, 0, "make deploy applied something");

    // What a plain `kubectl apply` of that overlay leaves behind (the old make deploy): everything but
    // cert-manager's kinds, webhook configurations that refuse every CronJob included.
    const k = await kubectl(["kustomize", join(PROJECT_ROOT, "config", "default-certmanager")]);
    assert.equal(k.code, 0, k.stderr);
    const cmObjs = parseObjects(k.stdout);
    assert.deepEqual([...new Set(cmObjs.filter((o) => groupOf(o) === "cert-manager.io").map((o) => o.kind))].sort(), [
      "Certificate",
      "Issuer",
    ]);
    const half = await kubectl(["apply", "--server-side", "--force-conflicts", "-f", "-"], k.stdout);
    assert.notEqual(half.code, 0);
    assert.match(half.stderr, /no matches for kind "Certificate"/);
    assert.equal((await kubectl(["get", "mutatingwebhookconfiguration", MUTATING])).code, 0);

    const u = await make("undeploy", ["OVERLAY=config/default-certmanager"]);
    assert.equal(u.code, 0, `make undeploy failed:\n${u.stdout}\n${u.stderr}`);
    assert.match(
      u.stdout,
      /skipped Certificate cronjob-operator-serving-cert: the cluster does not serve cert-manager\.io\/v1/,
    );
    await assertNothingLeft(manifests);

    // A deploy of config/default that stopped after a few objects: undeploy removes those, skips the rest.
    const some = objs.filter((o) => ["Namespace", "ServiceAccount", "MutatingWebhookConfiguration"].includes(o.kind));
    await applyJSON(some);
    const u2 = await make("undeploy");
    assert.equal(u2.code, 0, `make undeploy failed:\n${u2.stdout}\n${u2.stderr}`);
    await assertNothingLeft(manifests);

    // And on a cluster where nothing is deployed at all.
    const u3 = await make("undeploy");
    assert.equal(u3.code, 0, `make undeploy (nothing deployed) failed:\n${u3.stdout}\n${u3.stderr}`);
  });
});

const secretKind = { group: "", version: "v1", kind: "Secret", plural: "secrets", namespaced: true };
const deploymentKind = { group: "apps", version: "v1", kind: "Deployment", plural: "deployments", namespaced: true };
const mutatingKind = {
  group: "admissionregistration.k8s.io",
  version: "v1",
  kind: "MutatingWebhookConfiguration",
  plural: "mutatingwebhookconfigurations",
  namespaced: false,
};
const validatingKind = {
  ...mutatingKind,
  kind: "ValidatingWebhookConfiguration",
  plural: "validatingwebhookconfigurations",
};

function cronJob(name: string, namespace: string, schedule: string): CronJob {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name, namespace },
    spec: {
      schedule,
      jobTemplate: {
        spec: {
          template: { spec: { restartPolicy: "OnFailure", containers: [{ name: "hello", image: "busybox:1.36" }] } },
        },
      },
    },
  } as unknown as CronJob;
}
