// The webhook certificate provisioner (runtime/webhook/certprovisioner.ts) against a real kube-apiserver:
// it creates the Secret with a CA and a serving certificate for the Service's DNS names, writes the files,
// injects the CA into every webhook of the named configurations; a second replica reuses the Secret; a
// serving certificate or a CA near expiry is renewed and files, caBundle and the served certificate follow;
// a re-applied configuration with an empty caBundle gets it back; a corrupt or deleted Secret is repaired;
// replicas starting together agree on one Secret. And end to end: the apiserver calls the webhook server
// through the Service (kube-apiserver --enable-aggregator-routing resolves it through its Endpoints, here
// an address of this host) and trusts the injected CA under the name <service>.<namespace>.svc.
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import tls from "node:tls";
import { after, before, describe, it } from "node:test";
import { Client } from "../../../runtime/client.ts";
import { Kinds, type KubeObject } from "../../../runtime/kinds.ts";
import { createLogger, type Logger } from "../../../runtime/log.ts";
import { allowed, escapeJSONPointer, patched, type AdmissionHandler } from "../../../runtime/webhook/index.ts";
import { issueCA, issueServingCertificate } from "../../../runtime/webhook/certissue.ts";
import {
  CertKinds,
  CertProvisioner,
  serviceDNSNames,
  type CertProvisionerOptions,
} from "../../../runtime/webhook/certprovisioner.ts";
import { planRenewal, SecretKeys } from "../../../runtime/webhook/certrenewal.ts";
import { webhookRunnable } from "../../../runtime/webhook/runnable.ts";
import { TestEnv } from "../../../envtest/index.ts";
import { freePort } from "../../../envtest/ports.ts";
import { createServiceBackend, hostAddress } from "../../../envtest/service-backend.ts";

const NS = "cert-provisioner-test";
const SVC = "webhook-service";
const SECRET = "webhook-server-cert";
const MUTATING = "cert-test-mutating";
const VALIDATING = "cert-test-validating";
const SCOPE_LABEL = "cert-test.example.com/enabled";
const MUTATED_LABEL = "cert-test.example.com/mutated";
const DAY = 24 * 3_600_000;
const YEAR = 365 * DAY;
const NAMES = serviceDNSNames(SVC, NS);

type Obj = Record<string, any>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const b64 = (s: string) => Buffer.from(s).toString("base64");
const unb64 = (s: string | undefined) => Buffer.from(s ?? "", "base64").toString("utf8");

async function eventually<T>(what: string, f: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await f();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      assert.fail(`${what} did not happen within ${timeoutMs} ms${last ? `: ${String(last)}` : ""}`);
    await sleep(200);
  }
}

/** The serial number a fresh TLS connection to the server is served, verified with `ca` for the Service name. */
function servedSerial(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: "127.0.0.1", port, servername: NAMES[2], ca, rejectUnauthorized: true }, () => {
      const serial = socket.getPeerCertificate().serialNumber.toUpperCase();
      socket.end();
      resolve(serial);
    });
    socket.on("error", reject);
  });
}

const webhook = (name: string, path: string) => ({
  name,
  admissionReviewVersions: ["v1"],
  clientConfig: { service: { name: SVC, namespace: NS, path, port: 443 } },
  failurePolicy: "Fail",
  sideEffects: "None",
  timeoutSeconds: 10,
  namespaceSelector: { matchLabels: { [SCOPE_LABEL]: "true" } },
  rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["configmaps"] }],
});

const mutatingConfig = (): Obj => ({
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "MutatingWebhookConfiguration",
  metadata: { name: MUTATING },
  webhooks: [webhook("mcm.cert-test.example.com", "/mutate")],
});

const validatingConfig = (): Obj => ({
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "ValidatingWebhookConfiguration",
  metadata: { name: VALIDATING },
  webhooks: [webhook("vcm1.cert-test.example.com", "/validate"), webhook("vcm2.cert-test.example.com", "/validate")],
});

describe("webhook certificate provisioner against kube-apiserver", { timeout: 300_000 }, () => {
  let env: TestEnv;
  let client: Client;
  let ip: string | undefined;
  let port: number;
  const dirs: string[] = [];
  const running: Array<{ ac: AbortController; done: Promise<void> }> = [];
  const logLines: string[] = [];
  let logger: Logger;
  let a: CertProvisioner;
  let b: CertProvisioner;
  let server: ReturnType<typeof webhookRunnable> | undefined;
  const validated: string[] = [];

  const logTail = () => `\nprovisioner log:\n${logLines.slice(-25).join("")}`;
  const newDir = () => {
    const d = mkdtempSync(join(tmpdir(), "cert-provisioner-"));
    dirs.push(d);
    return d;
  };
  const provisioner = (name: string, o: Partial<CertProvisionerOptions> = {}) =>
    new CertProvisioner({
      client,
      secretNamespace: NS,
      secretName: SECRET,
      secretLabels: { "app.kubernetes.io/component": "webhook-certificate" },
      serviceName: SVC,
      serviceNamespace: NS,
      mutatingWebhookConfigurations: [MUTATING],
      validatingWebhookConfigurations: [VALIDATING],
      certDir: newDir(),
      trustPropagationDelayMs: 300,
      resyncIntervalMs: 60_000,
      logger: logger.withName(name),
      ...o,
    });
  const start = (p: CertProvisioner) => {
    const ac = new AbortController();
    running.push({ ac, done: p.start(ac.signal) });
  };
  const getSecret = () => client.get<Obj & KubeObject>(CertKinds.Secret, NS, SECRET);
  const secretText = (s: Obj) =>
    Object.fromEntries(Object.entries((s.data ?? {}) as Record<string, string>).map(([k, v]) => [k, unb64(v)]));
  const files = (p: CertProvisioner) => ({
    cert: readFileSync(p.certPath, "utf8"),
    key: readFileSync(p.keyPath, "utf8"),
  });
  const caBundles = async (): Promise<string[]> => {
    const out: string[] = [];
    for (const [kind, name] of [
      [CertKinds.MutatingWebhookConfiguration, MUTATING],
      [CertKinds.ValidatingWebhookConfiguration, VALIDATING],
    ] as const) {
      const cfg = await client.get<Obj & KubeObject>(kind, undefined, name);
      for (const w of cfg.webhooks as Obj[]) out.push(unb64(w.clientConfig.caBundle as string | undefined));
    }
    return out;
  };
  /** Waits until the Secret holds usable material that both replicas have written and injected. */
  const settled = async (what: string, ok: (data: Record<string, string>) => boolean = () => true) =>
    eventually(
      what,
      async () => {
        const s = await getSecret();
        const data = secretText(s);
        const plan = planRenewal(data, {
          now: Date.now(),
          dnsNames: NAMES,
          caValidityMs: 10 * YEAR,
          certValidityMs: YEAR,
        });
        if (plan.action !== "keep" || !ok(data)) return false;
        for (const p of [a, b]) {
          const f = files(p);
          if (f.cert !== data[SecretKeys.cert] || f.key !== data[SecretKeys.key]) return false;
        }
        const bundles = await caBundles();
        const want = [data[SecretKeys.caCert]!, data[SecretKeys.previousCACert]]
          .filter((x): x is string => !!x)
          .map((p) => `${p.trim()}\n`)
          .join("");
        if (!bundles.every((x) => x === want)) return false;
        return { secret: s, data };
      },
      30_000,
    ).catch((err: unknown) => assert.fail(`${String(err)}${logTail()}`));

  /** A ConfigMap create in the webhooks' scope: the apiserver has to call both configurations through the Service. */
  const admitted = async (prefix: string) => {
    const cm = await client.create<Obj & KubeObject>(Kinds.ConfigMap, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { generateName: `${prefix}-`, namespace: NS },
      data: { k: "v" },
    });
    const name = cm.metadata?.name ?? "";
    assert.equal(cm.metadata?.labels?.[MUTATED_LABEL], "true", "the mutating webhook was not called");
    assert.equal(validated.filter((n) => n === name).length, 2, "both validating webhooks are called");
  };

  before(async () => {
    const stream = new PassThrough();
    stream.on("data", (c: Buffer) => logLines.push(c.toString()));
    logger = createLogger({ level: "debug", stream });
    env = await TestEnv.start({ crdDirectoryPaths: [], apiServerArgs: ["--enable-aggregator-routing=true"] });
    client = new Client(env.kubeConfig, { userAgent: "cert-provisioner-test" });
    ip = hostAddress();
    port = await freePort();
    await client.create(Kinds.Namespace, {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: NS, labels: { [SCOPE_LABEL]: "true" } },
    });
    // A Service without a selector, and its endpoints pointing at the webhook server on this host.
    await client.create(
      { group: "", version: "v1", kind: "Service", plural: "services", namespaced: true },
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: SVC, namespace: NS },
        spec: { ports: [{ port: 443, protocol: "TCP", targetPort: port }] },
      },
    );
    if (ip) {
      await createServiceBackend(client, { service: SVC, namespace: NS, ip, port });
    }
    await client.create(CertKinds.MutatingWebhookConfiguration, mutatingConfig());
    await client.create(CertKinds.ValidatingWebhookConfiguration, validatingConfig());
  });

  after(async () => {
    for (const r of running) r.ac.abort();
    await Promise.all(running.map((r) => r.done));
    client?.close();
    await env?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("creates the Secret (CA + serving certificate for the Service), writes the files, injects every webhook", async () => {
    a = provisioner("a");
    assert.throws(() => a.checker(), /not provisioned yet/);
    start(a);
    assert.equal(await a.waitReady(AbortSignal.timeout(30_000)), true, `not ready${logTail()}`);
    a.checker();

    const s = await getSecret();
    assert.equal(s.type, "kubernetes.io/tls");
    assert.equal(s.metadata?.labels?.["app.kubernetes.io/component"], "webhook-certificate");
    const data = secretText(s);
    const ca = new X509Certificate(data[SecretKeys.caCert]!);
    const cert = new X509Certificate(data[SecretKeys.cert]!);
    assert.equal(ca.ca, true);
    assert.ok(cert.checkIssued(ca) && cert.verify(ca.publicKey), "the serving certificate is not signed by the CA");
    assert.equal(cert.subjectAltName, NAMES.map((n) => `DNS:${n}`).join(", "));
    const validity = cert.validToDate.getTime() - Date.now();
    assert.ok(validity > YEAR - DAY && validity <= YEAR, `serving certificate valid for ${validity / DAY} days`);
    assert.ok(ca.validToDate.getTime() - Date.now() > 10 * YEAR - DAY, "CA valid for 10 years");
    assert.equal(data[SecretKeys.previousCACert], undefined);

    assert.deepEqual(files(a), { cert: data[SecretKeys.cert], key: data[SecretKeys.key] });
    assert.deepEqual(
      await caBundles(),
      [0, 1, 2].map(() => `${data[SecretKeys.caCert]!.trim()}\n`),
    );
  });

  it("the apiserver calls the webhooks through the Service and trusts the injected CA", async (t) => {
    const mutate: AdmissionHandler = (req) => {
      const labels = (req.object as Obj | undefined)?.metadata?.labels;
      return patched([
        ...(labels ? [] : [{ op: "add" as const, path: "/metadata/labels", value: {} }]),
        { op: "add", path: `/metadata/labels/${escapeJSONPointer(MUTATED_LABEL)}`, value: "true" },
      ]);
    };
    const validate: AdmissionHandler = (req) => {
      validated.push(((req.object as Obj | undefined)?.metadata?.name as string | undefined) ?? req.name ?? "");
      return allowed();
    };
    server = webhookRunnable({
      port,
      certDir: a.certDir,
      handlers: new Map([
        ["/mutate", mutate],
        ["/validate", validate],
      ]),
      logger: logger.withName("server"),
      certificateReady: (signal) => a.waitReady(signal),
    });
    const ac = new AbortController();
    running.push({ ac, done: server.start(ac.signal) });
    await eventually("the webhook server", async () => server?.server());
    const data = secretText(await getSecret());
    assert.equal(
      await servedSerial(port, data[SecretKeys.caCert]!),
      new X509Certificate(data[SecretKeys.cert]!).serialNumber,
    );
    if (!ip) {
      t.skip("this host has no non-loopback IPv4 address for the Service's Endpoints");
      return;
    }
    // The apiserver picks new configurations and Endpoints up from watches: retry the first call.
    await eventually("a ConfigMap admitted through both webhook configurations", async () => {
      await admitted("first");
      return true;
    });
  });

  it("a second replica reuses the Secret: no rotation fight", async () => {
    const before = await getSecret();
    b = provisioner("b");
    start(b);
    assert.equal(await b.waitReady(AbortSignal.timeout(30_000)), true, `not ready${logTail()}`);
    assert.deepEqual(files(b), files(a));
    // Its own watch events and a few passes later, nobody has rewritten anything.
    await sleep(2_500);
    const now = await getSecret();
    assert.equal(
      now.metadata?.resourceVersion,
      before.metadata?.resourceVersion,
      `the Secret was rewritten${logTail()}`,
    );
  });

  it("a serving certificate near expiry is renewed from the same CA; files, server and caBundle follow", async () => {
    const s = await getSecret();
    const data = secretText(s);
    const now = Date.now();
    // Issued 300 days ago, 65 days left: renewal (a third of a year before expiry) is overdue.
    const old = await issueServingCertificate(
      { certPEM: data[SecretKeys.caCert]!, keyPEM: data[SecretKeys.caKey]! },
      NAMES,
      { notBefore: now - 300 * DAY, notAfter: now + 65 * DAY },
    );
    const oldSerial = new X509Certificate(old.certPEM).serialNumber;
    await client.update(CertKinds.Secret, {
      ...s,
      data: { ...s.data, [SecretKeys.cert]: b64(old.certPEM), [SecretKeys.key]: b64(old.keyPEM) },
    });
    const { data: renewed } = await settled(
      "the renewed certificate everywhere",
      (d) => d[SecretKeys.cert] !== old.certPEM,
    );
    assert.equal(renewed[SecretKeys.caCert], data[SecretKeys.caCert], "the CA was kept");
    const serial = new X509Certificate(renewed[SecretKeys.cert]!).serialNumber;
    assert.notEqual(serial, oldSerial);
    await eventually(
      "the server to serve the renewed certificate",
      async () => (await servedSerial(port, renewed[SecretKeys.caCert]!)) === serial,
    );
    if (ip) await eventually("admission after the renewal", async () => (await admitted("after-cert-renewal"), true));
  });

  it("a CA near expiry is renewed with the serving certificate; the old CA stays trusted meanwhile", async () => {
    const s = await getSecret();
    const now = Date.now();
    // A CA issued 7 years ago (3 years left < 10/3): due. Its serving certificate is fine by itself.
    const oldCA = await issueCA(`${SVC}-ca@old`, { notBefore: now - 7 * YEAR, notAfter: now + 3 * YEAR });
    const serving = await issueServingCertificate(oldCA, NAMES, { notBefore: now - DAY, notAfter: now + YEAR - DAY });
    await client.update(CertKinds.Secret, {
      ...s,
      data: {
        [SecretKeys.caCert]: b64(oldCA.certPEM),
        [SecretKeys.caKey]: b64(oldCA.keyPEM),
        [SecretKeys.cert]: b64(serving.certPEM),
        [SecretKeys.key]: b64(serving.keyPEM),
      },
    });
    const { data } = await settled(
      "a new CA everywhere, the old one kept as ca-previous.crt",
      (d) => d[SecretKeys.caCert] !== oldCA.certPEM && d[SecretKeys.previousCACert] === oldCA.certPEM,
    );
    const ca = new X509Certificate(data[SecretKeys.caCert]!);
    assert.ok(new X509Certificate(data[SecretKeys.cert]!).checkIssued(ca));
    // The bundle holds both (settled checked it against every webhook): the new one first.
    const [first] = await caBundles();
    assert.ok(first?.startsWith(data[SecretKeys.caCert]!.trim()));
    assert.ok(first?.includes(oldCA.certPEM.trim()));
    await eventually(
      "the server to serve a certificate of the new CA",
      async () =>
        (await servedSerial(port, data[SecretKeys.caCert]!)) ===
        new X509Certificate(data[SecretKeys.cert]!).serialNumber,
    );
    if (ip) await eventually("admission after the CA renewal", async () => (await admitted("after-ca-renewal"), true));
  });

  it("a re-applied webhook configuration without caBundle gets it back", async () => {
    const want = (await caBundles())[0]!;
    // Replaced in place, as `kubectl replace` (or a client-side apply that owned caBundle) would.
    const cfg = await client.get<Obj & KubeObject>(CertKinds.ValidatingWebhookConfiguration, undefined, VALIDATING);
    await client.update(CertKinds.ValidatingWebhookConfiguration, {
      ...validatingConfig(),
      metadata: { name: VALIDATING, resourceVersion: cfg.metadata?.resourceVersion },
    });
    // Deleted and created again, as a fresh `make deploy` after `kubectl delete` does.
    await client.delete(CertKinds.MutatingWebhookConfiguration, undefined, MUTATING);
    await client.create(CertKinds.MutatingWebhookConfiguration, mutatingConfig());
    await eventually(
      "the caBundle back in every webhook",
      async () => (await caBundles()).every((x) => x === want),
      10_000,
    ).catch((err: unknown) => assert.fail(`${String(err)}${logTail()}`));
    if (ip) await eventually("admission after the re-apply", async () => (await admitted("after-reapply"), true));
  });

  it("a corrupt or deleted Secret is repaired", async () => {
    let s = await getSecret();
    const before = secretText(s);
    // A broken serving certificate: reissued from the same CA.
    await client.update(CertKinds.Secret, { ...s, data: { ...s.data, [SecretKeys.cert]: b64("garbage") } });
    const { data: fixed } = await settled("a repaired tls.crt", (d) => d[SecretKeys.cert] !== "garbage");
    assert.equal(fixed[SecretKeys.caCert], before[SecretKeys.caCert]);

    // A broken CA key: a new CA (the old certificate, still valid, stays trusted).
    s = await getSecret();
    await client.update(CertKinds.Secret, { ...s, data: { ...s.data, [SecretKeys.caKey]: b64("garbage") } });
    const { data: newCA } = await settled(
      "a new CA after a corrupt ca.key",
      (d) => d[SecretKeys.caCert] !== before[SecretKeys.caCert],
    );
    assert.equal(newCA[SecretKeys.previousCACert], before[SecretKeys.caCert]);

    // Deleted: created again.
    const uid = (await getSecret()).metadata?.uid;
    await client.delete(CertKinds.Secret, NS, SECRET);
    const { secret } = await settled("the Secret created again", () => true);
    assert.notEqual(secret.metadata?.uid, uid);
    if (ip) await eventually("admission after the repairs", async () => (await admitted("after-repair"), true));
  });

  it("replicas starting together agree on one Secret, and a configuration created later gets the CA", async () => {
    const LATE = "cert-test-late";
    const opts = {
      secretName: "other-webhook-cert",
      mutatingWebhookConfigurations: [LATE],
      validatingWebhookConfigurations: [],
    };
    const c = provisioner("c", opts);
    const d = provisioner("d", opts);
    start(c);
    start(d);
    const signal = AbortSignal.timeout(30_000);
    assert.deepEqual(await Promise.all([c.waitReady(signal), d.waitReady(signal)]), [true, true], logTail());
    // Ready without the configuration: the files are what the server needs.
    await eventually("both replicas on the Secret's certificate", async () => {
      const data = secretText(await client.get<Obj & KubeObject>(CertKinds.Secret, NS, "other-webhook-cert"));
      return files(c).cert === data[SecretKeys.cert] && files(d).cert === data[SecretKeys.cert] ? data : undefined;
    });
    const data = secretText(await client.get<Obj & KubeObject>(CertKinds.Secret, NS, "other-webhook-cert"));
    await client.create(CertKinds.MutatingWebhookConfiguration, {
      ...mutatingConfig(),
      metadata: { name: LATE },
      webhooks: [
        { ...webhook("late.cert-test.example.com", "/mutate"), namespaceSelector: { matchLabels: { none: "x" } } },
      ],
    });
    await eventually("the CA injected into the configuration created later", async () => {
      const cfg = await client.get<Obj & KubeObject>(CertKinds.MutatingWebhookConfiguration, undefined, LATE);
      return (
        unb64((cfg.webhooks as Obj[])[0]?.clientConfig.caBundle as string) === `${data[SecretKeys.caCert]!.trim()}\n`
      );
    }).catch((err: unknown) => assert.fail(`${String(err)}${logTail()}`));
  });
});
