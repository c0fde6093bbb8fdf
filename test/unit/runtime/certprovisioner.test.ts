// The webhook certificate provisioner's decisions (runtime/webhook/certprovisioner.ts, with certrenewal.ts,
// certissue.ts and cabundleinjector.ts) without an apiserver: what a Secret's content calls for (keep, a new
// serving certificate, a new CA) at a given time, the renewal times, the certificates it issues, the CA bundle
// across a CA renewal, and the webhook server waiting for the provisioned files before it starts, and the CA
// bundle set in CustomResourceDefinitions' conversion webhooks (an in-memory fake client).
// test/integration/runtime/certprovisioner.test.ts runs it against a real kube-apiserver.
import assert from "node:assert/strict";
import { createPrivateKey, generateKeyPairSync, X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tls from "node:tls";
import { after, before, describe, it } from "node:test";
import { CapturingLogger } from "../../capturing-logger.ts";
import { Client, type WriteOptions } from "../../../runtime/client.ts";
import { APIError } from "../../../runtime/errors.ts";
import { FakeClient } from "../../../runtime/fake/client.ts";
import type { KubeObject, ResourceKind } from "../../../runtime/kinds.ts";
import { discardLogger } from "../../../runtime/log.ts";
import { issueCA, issueServingCertificate } from "../../../runtime/webhook/certissue.ts";
import {
  CertKinds,
  CertProvisioner,
  DEFAULT_CA_VALIDITY_MS,
  DEFAULT_CERT_VALIDITY_MS,
  serviceDNSNames,
  type CertProvisionerOptions,
} from "../../../runtime/webhook/certprovisioner.ts";
import {
  caBundleOf,
  caRenewalTime,
  certRenewalTime,
  planRenewal,
  RENEW_BEFORE_FRACTION,
  SecretKeys,
  type CAPair,
  type PlanOptions,
} from "../../../runtime/webhook/certrenewal.ts";
import { webhookRunnable } from "../../../runtime/webhook/runnable.ts";

const DAY = 24 * 3_600_000;
const YEAR = 365 * DAY;
const NOW = Date.parse("2030-06-01T00:00:00Z");
const NAMES = serviceDNSNames("webhook-service", "system");
const OPTS: PlanOptions = {
  now: NOW,
  dnsNames: NAMES,
  caValidityMs: DEFAULT_CA_VALIDITY_MS,
  certValidityMs: DEFAULT_CERT_VALIDITY_MS,
};

/** A Secret's data: a CA issued `caAge` before NOW, a serving certificate issued `certAge` before NOW. */
async function secretData(
  o: { caAge?: number; certAge?: number; names?: string[]; ca?: CAPair } = {},
): Promise<{ ca: CAPair; data: Record<string, string> }> {
  const caFrom = NOW - (o.caAge ?? 0);
  const ca = o.ca ?? (await issueCA("test-ca@1", { notBefore: caFrom - 3_600_000, notAfter: caFrom + 10 * YEAR }));
  const certFrom = NOW - (o.certAge ?? 0);
  const cert = await issueServingCertificate(ca, o.names ?? NAMES, {
    notBefore: certFrom - 3_600_000,
    notAfter: certFrom + YEAR,
  });
  return {
    ca,
    data: {
      [SecretKeys.caCert]: ca.certPEM,
      [SecretKeys.caKey]: ca.keyPEM,
      [SecretKeys.cert]: cert.certPEM,
      [SecretKeys.key]: cert.keyPEM,
    },
  };
}

describe("certificate provisioner: renewal decisions", () => {
  let fresh: { ca: CAPair; data: Record<string, string> };
  before(async () => {
    fresh = await secretData();
  });

  it("names the Service as the apiserver and in-cluster clients call it", () => {
    assert.deepEqual(serviceDNSNames("svc", "ns"), ["svc", "svc.ns", "svc.ns.svc", "svc.ns.svc.cluster.local"]);
    assert.deepEqual(serviceDNSNames("svc", "ns", "example.org").at(-1), "svc.ns.svc.example.org");
  });

  it("renews the serving certificate a third of its validity before expiry, the CA a third (at least one serving validity) before", () => {
    assert.equal(RENEW_BEFORE_FRACTION, 1 / 3);
    assert.equal(DEFAULT_CERT_VALIDITY_MS, YEAR);
    assert.equal(DEFAULT_CA_VALIDITY_MS, 10 * YEAR);
    assert.equal(certRenewalTime(NOW + YEAR, OPTS), NOW + YEAR - YEAR / 3); // about 122 days before expiry
    assert.equal(caRenewalTime(NOW + 10 * YEAR, OPTS), NOW + 10 * YEAR - (10 * YEAR) / 3);
    // A serving certificate never outlives its CA: with a short CA, the CA goes one serving validity early.
    assert.equal(caRenewalTime(NOW + 2 * YEAR, { caValidityMs: 2 * YEAR, certValidityMs: YEAR }), NOW + YEAR);
  });

  it("creates everything when the Secret does not exist", () => {
    assert.deepEqual(planRenewal(undefined, OPTS), { action: "renew-ca", reason: "the Secret does not exist" });
  });

  it("keeps a valid Secret, due for renewal when its serving certificate is", () => {
    const p = planRenewal(fresh.data, OPTS);
    assert.equal(p.action, "keep");
    assert.equal(p.action === "keep" && p.material.certPEM, fresh.data[SecretKeys.cert]);
    const notAfter = new X509Certificate(fresh.data[SecretKeys.cert]!).validToDate.getTime();
    assert.equal(p.action === "keep" && p.renewAt, notAfter - YEAR / 3);
    // Still kept a day before renewal is due; renewed a day after, from the same CA.
    assert.equal(planRenewal(fresh.data, { ...OPTS, now: notAfter - YEAR / 3 - DAY }).action, "keep");
    const due = planRenewal(fresh.data, { ...OPTS, now: notAfter - YEAR / 3 + DAY });
    assert.equal(due.action, "renew-cert");
    assert.match(due.action === "renew-cert" ? due.reason : "", /tls\.crt expires at .*renewal was due/);
    assert.equal(due.action === "renew-cert" && due.ca.certPEM, fresh.ca.certPEM);
  });

  it("renews an expired serving certificate from the same CA", async () => {
    const { data } = await secretData({ ca: fresh.ca, certAge: YEAR + DAY });
    const p = planRenewal(data, OPTS);
    assert.equal(p.action, "renew-cert");
    assert.equal(p.action === "renew-cert" && p.ca.keyPEM, fresh.ca.keyPEM);
  });

  it("renews the CA (and the serving certificate) before it is too close to expiry, trusting the old CA meanwhile", async () => {
    const { data } = await secretData({ caAge: 7 * YEAR }); // 3 years left < 10/3 years
    const p = planRenewal(data, OPTS);
    assert.equal(p.action, "renew-ca");
    assert.match(p.action === "renew-ca" ? p.reason : "", /the CA expires at/);
    assert.equal(p.action === "renew-ca" && p.previousCACertPEM, data[SecretKeys.caCert]);
    // An expired CA is not worth trusting any more.
    const { data: expired } = await secretData({ caAge: 10 * YEAR + DAY, certAge: 0 });
    const q = planRenewal(expired, OPTS);
    assert.equal(q.action, "renew-ca");
    assert.equal(q.action === "renew-ca" && q.previousCACertPEM, undefined);
  });

  it("repairs what is missing, corrupt or mismatched", async () => {
    const other = await secretData();
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({
      type: "pkcs8",
      format: "pem",
    }) as string;
    const cases: Array<[string, Record<string, string>, "renew-ca" | "renew-cert", RegExp]> = [
      ["ca.crt missing", { ...fresh.data, [SecretKeys.caCert]: "" }, "renew-ca", /ca\.crt is missing/],
      ["ca.crt garbage", { ...fresh.data, [SecretKeys.caCert]: "garbage" }, "renew-ca", /ca\.crt is not a PEM/],
      ["ca.key garbage", { ...fresh.data, [SecretKeys.caKey]: "garbage" }, "renew-ca", /ca\.key is not a PEM/],
      [
        "ca.key of another CA",
        { ...fresh.data, [SecretKeys.caKey]: other.ca.keyPEM },
        "renew-ca",
        /ca\.key does not belong/,
      ],
      ["ca.key not ECDSA", { ...fresh.data, [SecretKeys.caKey]: rsa }, "renew-ca", /rsa key/],
      [
        "ca.crt not a CA",
        {
          ...fresh.data,
          [SecretKeys.caCert]: fresh.data[SecretKeys.cert]!,
          [SecretKeys.caKey]: fresh.data[SecretKeys.key]!,
        },
        "renew-ca",
        /not a CA certificate/,
      ],
      ["tls.crt missing", { ...fresh.data, [SecretKeys.cert]: "" }, "renew-cert", /tls\.crt is missing/],
      ["tls.crt garbage", { ...fresh.data, [SecretKeys.cert]: "x" }, "renew-cert", /tls\.crt is not a PEM/],
      ["tls.key garbage", { ...fresh.data, [SecretKeys.key]: "x" }, "renew-cert", /tls\.key is not a PEM/],
      [
        "tls.key of another certificate",
        { ...fresh.data, [SecretKeys.key]: other.data[SecretKeys.key]! },
        "renew-cert",
        /tls\.key does not belong/,
      ],
      [
        "tls.crt signed by another CA",
        {
          ...fresh.data,
          [SecretKeys.cert]: other.data[SecretKeys.cert]!,
          [SecretKeys.key]: other.data[SecretKeys.key]!,
        },
        "renew-cert",
        /not signed by the CA/,
      ],
    ];
    for (const [what, data, action, reason] of cases) {
      const p = planRenewal(data, OPTS);
      assert.equal(p.action, action, what);
      assert.match((p as { reason?: string }).reason ?? "", reason, what);
    }
  });

  it("reissues a certificate for other DNS names (the Service was renamed)", async () => {
    const { data } = await secretData({ ca: fresh.ca, names: serviceDNSNames("old-service", "system") });
    const p = planRenewal(data, OPTS);
    assert.equal(p.action, "renew-cert");
    assert.match(p.action === "renew-cert" ? p.reason : "", /is for \[old-service.*not \[webhook-service/);
    // A subset is not enough either: the apiserver uses <svc>.<ns>.svc, in-cluster clients the others.
    const { data: partial } = await secretData({ ca: fresh.ca, names: NAMES.slice(2) });
    assert.equal(planRenewal(partial, OPTS).action, "renew-cert");
  });

  it("reissues what is not valid yet (a replica whose clock runs far ahead)", async () => {
    const { data } = await secretData({ ca: fresh.ca, certAge: -3 * 3_600_000 });
    const p = planRenewal(data, OPTS);
    assert.equal(p.action, "renew-cert");
    assert.match(p.action === "renew-cert" ? p.reason : "", /not valid before/);
  });

  it("issues a CA and a serving certificate the way TLS clients (and the apiserver) check them", async () => {
    const ca = new X509Certificate(fresh.ca.certPEM);
    const cert = new X509Certificate(fresh.data[SecretKeys.cert]!);
    assert.equal(ca.ca, true);
    assert.equal(cert.ca, false);
    assert.ok(cert.checkIssued(ca) && cert.verify(ca.publicKey));
    assert.equal(createPrivateKey(fresh.ca.keyPEM).asymmetricKeyType, "ec");
    assert.equal(cert.subjectAltName, NAMES.map((n) => `DNS:${n}`).join(", "));
    assert.deepEqual(cert.keyUsage, ["1.3.6.1.5.5.7.3.1"]); // extKeyUsage serverAuth
    for (const n of NAMES) assert.equal(cert.checkHost(n), n);
    // A TLS client that trusts only the CA accepts the server under the name the apiserver dials (issued
    // for the real clock: the TLS stack checks validity against it).
    const now = Date.now();
    const liveCA = await issueCA("live-ca@1", { notBefore: now - 60_000, notAfter: now + 2 * DAY });
    const live = await issueServingCertificate(liveCA, NAMES, { notBefore: now - 60_000, notAfter: now + DAY });
    const server = tls.createServer({ cert: live.certPEM, key: live.keyPEM }, (s) => s.end());
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const port = (server.address() as { port: number }).port;
      const authorized = await new Promise<boolean>((resolve, reject) => {
        const c = tls.connect({ host: "127.0.0.1", port, servername: NAMES[2], ca: liveCA.certPEM }, () => {
          resolve(c.authorized);
          c.end();
        });
        c.on("error", reject);
      });
      assert.equal(authorized, true);
    } finally {
      server.close();
    }
  });

  it("trusts the previous CA while it is valid, then only the current one", async () => {
    const previous = await issueCA("old@1", { notBefore: NOW - 7 * YEAR, notAfter: NOW + 3 * YEAR });
    const material = {
      ca: fresh.ca,
      certPEM: fresh.data[SecretKeys.cert]!,
      keyPEM: fresh.data[SecretKeys.key]!,
      previousCACertPEM: previous.certPEM,
    };
    const both = caBundleOf(material, NOW);
    assert.equal(both, `${fresh.ca.certPEM.trim()}\n${previous.certPEM.trim()}\n`);
    assert.equal(caBundleOf(material, NOW + 3 * YEAR + DAY), `${fresh.ca.certPEM.trim()}\n`);
    assert.equal(caBundleOf({ ...material, previousCACertPEM: "garbage" }, NOW), `${fresh.ca.certPEM.trim()}\n`);
  });

  it("refuses a CA validity that is not longer than the serving certificate's", () => {
    const client = new Client(fakeKubeConfig());
    const base = {
      client,
      secretNamespace: "ns",
      secretName: "s",
      serviceName: "svc",
      serviceNamespace: "ns",
      certDir: "/nonexistent",
      logger: discardLogger,
    };
    assert.throws(() => new CertProvisioner({ ...base, caValidityMs: YEAR, certValidityMs: YEAR }), /must be longer/);
    assert.throws(() => new CertProvisioner({ ...base, serviceName: "" }), /serviceName is required/);
    assert.deepEqual(new CertProvisioner(base).dnsNames, serviceDNSNames("svc", "ns"));
  });
});

describe("webhook server with a provisioned certificate (webhookRunnable certificateReady)", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "cert-ready-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("starts only once the certificate files exist, and is not ready until then", async () => {
    let release!: () => void;
    const ready = new Promise<void>((r) => (release = r));
    const runnable = webhookRunnable({
      port: 0,
      host: "127.0.0.1",
      certDir: dir,
      handlers: new Map(),
      logger: discardLogger,
      certificateReady: async (signal) => {
        await Promise.race([ready, new Promise((r) => signal.addEventListener("abort", r, { once: true }))]);
      },
    });
    const ac = new AbortController();
    const running = runnable.start(ac.signal);
    await new Promise((r) => setTimeout(r, 50));
    await assert.rejects(async () => runnable.checker(), /waiting for its serving certificate/);
    assert.equal(runnable.server(), undefined, "the server started without a certificate");

    const now = Date.now();
    const ca = await issueCA("ready-ca@1", { notBefore: now - 60_000, notAfter: now + DAY * 2 });
    const cert = await issueServingCertificate(ca, ["localhost"], { notBefore: now - 60_000, notAfter: now + DAY });
    writeFileSync(join(dir, "tls.key"), cert.keyPEM);
    writeFileSync(join(dir, "tls.crt"), cert.certPEM);
    release();
    for (let i = 0; i < 100 && !runnable.server(); i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(runnable.server(), "the server did not start once the certificate was there");
    await runnable.checker();
    ac.abort();
    await running;
  });

  it("stops waiting when the manager stops", async () => {
    const runnable = webhookRunnable({
      port: 0,
      certDir: join(dir, "never"),
      handlers: new Map(),
      logger: discardLogger,
      certificateReady: (signal) =>
        new Promise((r) => (signal.aborted ? r(false) : signal.addEventListener("abort", () => r(false)))),
    });
    const ac = new AbortController();
    const running = runnable.start(ac.signal);
    ac.abort();
    await running; // no certificate, no server, no error
    assert.equal(runnable.server(), undefined);
  });
});

describe("certificate provisioner: CA bundle of CustomResourceDefinitions (fake client)", () => {
  const CRD = CertKinds.CustomResourceDefinition;
  const VWC = CertKinds.ValidatingWebhookConfiguration;
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "crd-ca-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const webhookConversion = () => ({
    strategy: "Webhook",
    webhook: {
      conversionReviewVersions: ["v1"],
      clientConfig: { service: { namespace: "system", name: "webhook-service", path: "/convert", port: 443 } },
    },
  });

  function crd(name: string, conversion?: Record<string, unknown>): KubeObject {
    return {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name },
      spec: {
        group: name.slice(name.indexOf(".") + 1),
        names: { kind: "Widget", plural: name.slice(0, name.indexOf(".")) },
        scope: "Namespaced",
        versions: [{ name: "v1", served: true, storage: true }],
        ...(conversion ? { conversion } : {}),
      },
    };
  }

  let n = 0;
  function provisioner(client: FakeClient, o: Partial<CertProvisionerOptions> = {}): CertProvisioner {
    return new CertProvisioner({
      // The provisioner's reads and writes are the fake's (its informers, started by start(), are not used).
      client: client as unknown as Client,
      secretNamespace: "system",
      secretName: "webhook-server-cert",
      serviceName: "webhook-service",
      serviceNamespace: "system",
      certDir: join(dir, String(++n)),
      trustPropagationDelayMs: 0,
      logger: discardLogger,
      ...o,
    });
  }

  /** A cluster with a CRD converted by a webhook and a validating configuration "vwc" whose webhook has `clientConfig`. */
  async function withConversionCRD(clientConfig: Record<string, unknown>): Promise<FakeClient> {
    const client = new FakeClient();
    await client.create(CRD, crd("widgets.example.com", webhookConversion()));
    await client.create(VWC, {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: "vwc" },
      webhooks: [{ name: "v.example.com", clientConfig }],
    });
    return client;
  }

  async function caBundleOfCRD(client: FakeClient, name: string): Promise<string | undefined> {
    const got = await client.get<
      KubeObject & { spec: { conversion?: { webhook?: { clientConfig?: { caBundle?: string } } } } }
    >(CRD, undefined, name);
    const b64 = got.spec.conversion?.webhook?.clientConfig?.caBundle;
    return b64 === undefined ? undefined : Buffer.from(b64, "base64").toString("utf8");
  }

  async function secretCA(client: FakeClient): Promise<string> {
    const s = await client.get<KubeObject & { data: Record<string, string> }>(
      CertKinds.Secret,
      "system",
      "webhook-server-cert",
    );
    return Buffer.from(s.data[SecretKeys.caCert]!, "base64").toString("utf8");
  }

  it("sets the bundle in a CRD whose conversion strategy is Webhook, beside the webhook configurations, and keeps it", async () => {
    const client = await withConversionCRD({ service: { name: "webhook-service", namespace: "system" } });
    const p = provisioner(client, {
      validatingWebhookConfigurations: ["vwc"],
      customResourceDefinitions: ["widgets.example.com"],
    });
    const first = await p.sync();
    assert.deepEqual(first.injected, [
      "ValidatingWebhookConfiguration/vwc",
      "CustomResourceDefinition/widgets.example.com",
    ]);
    assert.deepEqual(first.skipped, []);
    assert.equal(await caBundleOfCRD(client, "widgets.example.com"), `${(await secretCA(client)).trim()}\n`);
    // Only the caBundle changed: the rest of the conversion webhook is as it was.
    const got = await client.get<KubeObject & { spec: { conversion: ReturnType<typeof webhookConversion> } }>(
      CRD,
      undefined,
      "widgets.example.com",
    );
    const { caBundle: _set, ...clientConfig } = got.spec.conversion.webhook.clientConfig as Record<string, unknown>;
    assert.deepEqual(
      { ...got.spec.conversion, webhook: { ...got.spec.conversion.webhook, clientConfig } },
      webhookConversion(),
    );
    assert.deepEqual(
      { ...got.spec, conversion: undefined },
      { ...crd("widgets.example.com").spec!, conversion: undefined },
    );

    // A pass with nothing to do reads and writes nothing else.
    const writes = () =>
      client.actions.filter(
        (a) => a.verb === "update" && a.resource === "customresourcedefinitions.apiextensions.k8s.io",
      );
    assert.equal(writes().length, 1);
    const second = await p.sync();
    assert.deepEqual(second.injected, []);
    assert.equal(writes().length, 1);

    // A re-applied CRD without the bundle gets it back.
    const cur = await client.get<KubeObject>(CRD, undefined, "widgets.example.com");
    await client.update(CRD, { ...cur, spec: { ...(cur.spec as object), conversion: webhookConversion() } });
    assert.equal(await caBundleOfCRD(client, "widgets.example.com"), undefined);
    assert.deepEqual((await p.sync()).injected, ["CustomResourceDefinition/widgets.example.com"]);
    assert.notEqual(await caBundleOfCRD(client, "widgets.example.com"), undefined);
  });

  it("leaves a CRD with strategy None (or no conversion at all) alone, logging it once, until it turns to Webhook", async () => {
    const client = new FakeClient();
    await client.create(CRD, crd("nones.example.com", { strategy: "None" }));
    await client.create(CRD, crd("unsets.example.com"));
    const before = [
      await client.get(CRD, undefined, "nones.example.com"),
      await client.get(CRD, undefined, "unsets.example.com"),
    ];
    const logger = new CapturingLogger();
    const p = provisioner(client, { customResourceDefinitions: ["nones.example.com", "unsets.example.com"], logger });
    for (let i = 0; i < 3; i++) {
      const r = await p.sync();
      assert.deepEqual(r.skipped, [
        "CustomResourceDefinition/nones.example.com",
        "CustomResourceDefinition/unsets.example.com",
      ]);
      assert.deepEqual(r.injected, []);
    }
    assert.deepEqual(
      [await client.get(CRD, undefined, "nones.example.com"), await client.get(CRD, undefined, "unsets.example.com")],
      before,
      "a CRD without a conversion webhook was written",
    );
    const leftAlone = () =>
      logger.lines
        .filter((l) => l.msg.startsWith("CustomResourceDefinition left alone"))
        .map((l) => [l.msg, l.kv.customResourceDefinition]);
    assert.deepEqual(leftAlone(), [
      [
        "CustomResourceDefinition left alone: its conversion strategy is None, not Webhook",
        "CustomResourceDefinition/nones.example.com",
      ],
      [
        "CustomResourceDefinition left alone: its conversion strategy is None, not Webhook",
        "CustomResourceDefinition/unsets.example.com",
      ],
    ]);

    const cur = await client.get<KubeObject>(CRD, undefined, "nones.example.com");
    await client.update(CRD, { ...cur, spec: { ...(cur.spec as object), conversion: webhookConversion() } });
    const r = await p.sync();
    assert.deepEqual(r.injected, ["CustomResourceDefinition/nones.example.com"]);
    assert.deepEqual(r.skipped, ["CustomResourceDefinition/unsets.example.com"]);
    assert.equal(leftAlone().length, 2, "logged again");
  });

  it("waits for a CRD that does not exist yet, logging that once, and re-reads after a Conflict", async () => {
    const client = new FakeClient();
    const logger = new CapturingLogger();
    const p = provisioner(client, { customResourceDefinitions: ["widgets.example.com"], logger });
    assert.deepEqual((await p.sync()).missing, ["CustomResourceDefinition/widgets.example.com"]);
    assert.deepEqual((await p.sync()).missing, ["CustomResourceDefinition/widgets.example.com"]);
    assert.deepEqual(
      logger.lines.filter((l) => l.msg.includes("not found")).map((l) => l.msg),
      ["CustomResourceDefinition not found; its CA bundle is set once it exists"],
    );

    await client.create(CRD, crd("widgets.example.com", webhookConversion()));
    client.injectError(
      { verb: "update", kind: CRD, times: 1 },
      () => new APIError(409, "Conflict", "the object has been modified"),
    );
    const r = await p.sync();
    assert.deepEqual(r.missing, []);
    assert.deepEqual(r.injected, ["CustomResourceDefinition/widgets.example.com"]);
    assert.equal(
      client.actions.filter(
        (a) => a.verb === "update" && a.resource === "customresourcedefinitions.apiextensions.k8s.io",
      ).length,
      2,
    );
    assert.equal(await caBundleOfCRD(client, "widgets.example.com"), `${(await secretCA(client)).trim()}\n`);
  });

  it("names the CRD it cannot write (e.g. without RBAC), still serving and injecting the rest", async () => {
    const client = await withConversionCRD({});
    client.injectError(
      { verb: "update", kind: CRD },
      () =>
        new APIError(
          403,
          "Forbidden",
          'customresourcedefinitions.apiextensions.k8s.io "widgets.example.com" is forbidden',
        ),
    );
    const p = provisioner(client, {
      validatingWebhookConfigurations: ["vwc"],
      customResourceDefinitions: ["widgets.example.com"],
    });
    await assert.rejects(
      p.sync(),
      /cannot set the CA bundle of CustomResourceDefinition\/widgets\.example\.com: .*forbidden/,
    );
    assert.doesNotThrow(() => p.checker(), "the certificate files were written");
    client.clearErrors();
    const r = await p.sync();
    assert.deepEqual(
      r.injected,
      ["CustomResourceDefinition/widgets.example.com"],
      "the configuration had its bundle already",
    );
  });

  it("sets a new CA's bundle in the CRD before it serves a certificate the old bundle does not cover", async () => {
    const client = new FakeClient();
    await client.create(CRD, crd("widgets.example.com", webhookConversion()));
    let now = Date.now();
    const delay = 300;
    const p = provisioner(client, {
      customResourceDefinitions: ["widgets.example.com"],
      trustPropagationDelayMs: delay,
      now: () => now,
    });
    await p.sync();
    const oldCert = readFileSync(p.certPath, "utf8");
    const oldCA = await secretCA(client);

    // What the certificate directory held when the CRD got its new bundle.
    const seen: Array<{ at: number; cert: string }> = [];
    const update = client.update.bind(client);
    client.update = (<T extends KubeObject>(rk: ResourceKind, obj: T, o?: WriteOptions) => {
      if (rk.kind === CRD.kind) seen.push({ at: Date.now(), cert: readFileSync(p.certPath, "utf8") });
      return update(rk, obj, o);
    }) as FakeClient["update"];

    // Eight years on, the CA (10 years) is due for renewal: a new CA, a new serving certificate.
    now += 8 * YEAR;
    const r = await p.sync();
    assert.equal(r.secret, "renewed-ca");
    assert.deepEqual(r.injected, ["CustomResourceDefinition/widgets.example.com"]);
    assert.equal(r.filesWritten, true);
    const newCA = await secretCA(client);
    assert.notEqual(newCA, oldCA);
    // The bundle trusts the new CA and, while it is valid, the old one.
    assert.equal(await caBundleOfCRD(client, "widgets.example.com"), `${newCA.trim()}\n${oldCA.trim()}\n`);
    // The CRD was written while the old certificate was still being served, and the new one came after the delay.
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.cert, oldCert);
    const newCert = readFileSync(p.certPath, "utf8");
    assert.notEqual(newCert, oldCert);
    assert.ok(new X509Certificate(newCert).checkIssued(new X509Certificate(newCA)));
    assert.ok(statSync(p.certPath).mtimeMs - seen[0]!.at >= delay - 20, "the new certificate was served too early");
  });
});

/** A kubeconfig for a Client that is never called. */
function fakeKubeConfig() {
  return {
    getCurrentCluster: () => ({ server: "https://127.0.0.1:1" }),
    applyToHTTPSOptions: async () => undefined,
  } as unknown as ConstructorParameters<typeof Client>[0];
}
