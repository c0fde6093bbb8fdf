// The webhook server's serving certificate without cert-manager, as open-policy-agent/cert-controller's
// rotator provides it to controller-runtime users. A CertProvisioner keeps one Secret, shared by every
// replica, holding
//
//   ca.crt, ca.key     a self-signed CA (ECDSA P-256, 10 years by default)
//   tls.crt, tls.key   a serving certificate signed by it for the webhook Service's DNS names (1 year)
//   ca-previous.crt    the CA before the last CA renewal, still trusted until it expires, so that a replica
//                      serving a certificate it signed keeps working while it catches up
//
// and on every replica writes tls.crt/tls.key into the webhook server's certificate directory (the server
// watches it and reloads) and sets the CA bundle (ca.crt, then ca-previous.crt while it is valid) as the
// clientConfig.caBundle of every webhook of the named Mutating/ValidatingWebhookConfigurations, and as the
// spec.conversion.webhook.clientConfig.caBundle of the named CustomResourceDefinitions whose conversion
// strategy is Webhook (a CRD with strategy None is left alone).
//
// Renewal (RENEW_BEFORE_FRACTION = 1/3, cert-manager's default): the serving certificate when less than a
// third of its validity is left (about 4 months of 1 year); the CA, and with it the serving certificate,
// when less than a third of its validity (3⅓ of 10 years) or less than one serving certificate's validity
// is left, so a serving certificate never outlives its CA. Anything missing, unparsable, mismatched (key
// and certificate, certificate and CA, DNS names) or not yet valid is regenerated at once.
//
// Concurrency: the Secret is the source of truth. A replica creates it only when it does not exist
// (AlreadyExists: another replica won, so re-read and use that) and replaces it only at the resourceVersion
// it read (Conflict: re-read and re-check). Every write is idempotent and every state in between is one the
// next pass repairs, so a crash at any point is harmless.
//
// Passes run at start, on every change of the Secret, of a webhook configuration or of a CRD (watches, so a
// re-applied configuration or CRD with an empty caBundle gets it back within a second), at the next renewal
// time, and every resyncIntervalMs (5 min) in case a watch missed something. Every pass sets the caBundles
// before it writes a new serving certificate, and after changing one waits trustPropagationDelayMs before
// serving a certificate the old bundle may not trust.
import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Backoff } from "../cache/backoff.ts";
import { Informer } from "../cache/informer.ts";
import type { Client } from "../client.ts";
import { isAlreadyExists, isConflict, isNotFound } from "../errors.ts";
import { Kinds, type KubeObject, type ResourceKind } from "../kinds.ts";
import { log, type KeyValues, type Logger } from "../log.ts";
import type { Runnable } from "../manager.ts";
import type { Checker } from "../probes.ts";
import { generateCertificate } from "../selfsigned.ts";
import { Kicker } from "./kicker.ts";

/** The kinds the provisioner reads and writes (test/unit/config.test.ts matches its calls to the RBAC). */
export const CertKinds = {
  Secret: Kinds.Secret,
  MutatingWebhookConfiguration: Kinds.MutatingWebhookConfiguration,
  ValidatingWebhookConfiguration: Kinds.ValidatingWebhookConfiguration,
  CustomResourceDefinition: Kinds.CustomResourceDefinition,
} as const satisfies Record<string, ResourceKind>;

/** The keys of the Secret. */
export const SecretKeys = {
  caCert: "ca.crt",
  caKey: "ca.key",
  cert: "tls.crt",
  key: "tls.key",
  previousCACert: "ca-previous.crt",
} as const;

const YEAR_MS = 365 * 24 * 3_600_000;
export const DEFAULT_CA_VALIDITY_MS = 10 * YEAR_MS;
export const DEFAULT_CERT_VALIDITY_MS = YEAR_MS;
/** Renew when less than this share of the validity is left. */
export const RENEW_BEFORE_FRACTION = 1 / 3;
const DEFAULT_RESYNC_INTERVAL_MS = 5 * 60_000;
/** notBefore is set this far in the past, so a replica whose clock lags accepts a new certificate. */
const BACKDATE_MS = 3_600_000;
/** How many times a pass re-reads an object that changed under it before giving up until the next pass. */
const MAX_ATTEMPTS = 5;

export interface CertProvisionerOptions {
  client: Client;
  /** The Secret holding the CA and the serving certificate; created when missing. */
  secretNamespace: string;
  secretName: string;
  /** Labels set on the Secret when it is written. */
  secretLabels?: Readonly<Record<string, string>>;
  /**
   * The Service the apiserver calls (clientConfig.service): the certificate is valid for <name>,
   * <name>.<namespace>, <name>.<namespace>.svc and <name>.<namespace>.svc.<clusterDomain>.
   */
  serviceName: string;
  serviceNamespace: string;
  /** Default "cluster.local". */
  clusterDomain?: string;
  /** Configurations whose every webhook gets the CA bundle as clientConfig.caBundle. Never created. */
  mutatingWebhookConfigurations?: readonly string[];
  validatingWebhookConfigurations?: readonly string[];
  /**
   * CustomResourceDefinitions (by name, e.g. "cronjobs.batch.tutorial.kubebuilder.io") whose conversion
   * webhook gets the CA bundle as spec.conversion.webhook.clientConfig.caBundle, while their conversion
   * strategy is Webhook; one with strategy None is left alone. Never created.
   */
  customResourceDefinitions?: readonly string[];
  /** The webhook server's certificate directory and file names (default tls.crt, tls.key). */
  certDir: string;
  certName?: string;
  keyName?: string;
  /** Default 10 years; must be longer than certValidityMs. */
  caValidityMs?: number;
  /** Default 1 year. */
  certValidityMs?: number;
  /** The CA's common name, before "@<unix time>" (default "<serviceName>-ca"). */
  caCommonName?: string;
  /** Periodic re-check (default 5 min). */
  resyncIntervalMs?: number;
  /**
   * After a pass changed a caBundle, how long it waits before serving a certificate that the old bundle
   * may not trust: the apiserver learns of configuration changes from a watch (default 2 s).
   */
  trustPropagationDelayMs?: number;
  logger?: Logger;
  /** Clock (ms since the epoch); tests move it. */
  now?: () => number;
}

/** PEM texts of one CA. */
export interface CAPair {
  certPEM: string;
  keyPEM: string;
}

/** Everything the Secret holds, decoded. */
interface CertMaterial {
  ca: CAPair;
  certPEM: string;
  keyPEM: string;
  /** The CA before the last CA renewal, if any. */
  previousCACertPEM?: string;
}

type RenewalPlan =
  | { action: "keep"; material: CertMaterial; renewAt: number }
  | { action: "renew-cert"; reason: string; ca: CAPair; previousCACertPEM?: string }
  | { action: "renew-ca"; reason: string; previousCACertPEM?: string };

export interface PlanOptions {
  now: number;
  dnsNames: readonly string[];
  caValidityMs: number;
  certValidityMs: number;
}

/** The names a Service is reached by from inside the cluster (the apiserver uses <name>.<namespace>.svc). */
export function serviceDNSNames(name: string, namespace: string, clusterDomain = "cluster.local"): string[] {
  return [name, `${name}.${namespace}`, `${name}.${namespace}.svc`, `${name}.${namespace}.svc.${clusterDomain}`];
}

/** When the CA is due for renewal: a third of its validity or one serving certificate's validity before expiry. */
export function caRenewalTime(notAfter: number, o: Pick<PlanOptions, "caValidityMs" | "certValidityMs">): number {
  return notAfter - Math.max(o.caValidityMs * RENEW_BEFORE_FRACTION, o.certValidityMs);
}

/** When the serving certificate is due for renewal: a third of its validity before expiry. */
export function certRenewalTime(notAfter: number, o: Pick<PlanOptions, "certValidityMs">): number {
  return notAfter - o.certValidityMs * RENEW_BEFORE_FRACTION;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function parseCertificate(pem: string | undefined, what: string): X509Certificate {
  if (!pem) throw new Error(`${what} is missing`);
  try {
    return new X509Certificate(pem);
  } catch (err) {
    throw new Error(`${what} is not a PEM certificate: ${messageOf(err)}`, { cause: err });
  }
}

function parseKey(pem: string | undefined, what: string): KeyObject {
  if (!pem) throw new Error(`${what} is missing`);
  try {
    return createPrivateKey(pem);
  } catch (err) {
    throw new Error(`${what} is not a PEM private key: ${messageOf(err)}`, { cause: err });
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function sanDNSNames(cert: X509Certificate): string[] {
  return (cert.subjectAltName ?? "")
    .split(", ")
    .filter((s) => s.startsWith("DNS:"))
    .map((s) => s.slice(4));
}

const sameNames = (a: readonly string[], b: readonly string[]): boolean => {
  const x = [...new Set(a)].sort();
  const y = [...new Set(b)].sort();
  return x.length === y.length && x.every((v, i) => v === y[i]);
};

/** A CA certificate that is no longer (or not yet) valid is left out of the bundle. */
function validAt(pem: string | undefined, now: number): boolean {
  if (!pem) return false;
  try {
    const c = new X509Certificate(pem);
    return c.validFromDate.getTime() <= now && now < c.validToDate.getTime();
  } catch {
    return false;
  }
}

/**
 * What a pass has to do with the Secret's (decoded) data: keep it, issue a new serving certificate from the
 * CA it holds, or start over with a new CA. Pure: the decision depends only on the data and the options.
 */
export function planRenewal(data: Readonly<Record<string, string>> | undefined, o: PlanOptions): RenewalPlan {
  if (!data) return { action: "renew-ca", reason: "the Secret does not exist" };
  const oldCA = data[SecretKeys.caCert];
  const previousIfValid = (pem: string | undefined) => (validAt(pem, o.now) ? { previousCACertPEM: pem! } : {});

  // The CA: a CA certificate with its (ECDSA) key, valid now and not due for renewal.
  let ca: X509Certificate;
  let caRenewAt: number;
  try {
    ca = parseCertificate(oldCA, SecretKeys.caCert);
    const caKey = parseKey(data[SecretKeys.caKey], SecretKeys.caKey);
    if (!ca.ca) throw new Error(`${SecretKeys.caCert} is not a CA certificate`);
    if (caKey.asymmetricKeyType !== "ec") {
      throw new Error(`${SecretKeys.caKey} is a ${caKey.asymmetricKeyType ?? "unknown"} key; ECDSA keys are issued`);
    }
    if (!ca.checkPrivateKey(caKey)) throw new Error(`${SecretKeys.caKey} does not belong to ${SecretKeys.caCert}`);
    const notBefore = ca.validFromDate.getTime();
    const notAfter = ca.validToDate.getTime();
    if (o.now < notBefore) throw new Error(`the CA is not valid before ${iso(notBefore)}`);
    caRenewAt = caRenewalTime(notAfter, o);
    if (o.now >= caRenewAt)
      throw new Error(`the CA expires at ${iso(notAfter)} (renewal was due at ${iso(caRenewAt)})`);
  } catch (err) {
    // Keep trusting the old CA while replicas switch over, when it is a certificate that is still valid.
    return { action: "renew-ca", reason: messageOf(err), ...previousIfValid(oldCA) };
  }
  const caPair = { certPEM: oldCA!, keyPEM: data[SecretKeys.caKey]! };
  const previous = previousIfValid(data[SecretKeys.previousCACert]);

  // The serving certificate: signed by that CA, for exactly the DNS names, with its key, valid and not due.
  try {
    const cert = parseCertificate(data[SecretKeys.cert], SecretKeys.cert);
    const key = parseKey(data[SecretKeys.key], SecretKeys.key);
    if (!cert.checkPrivateKey(key)) throw new Error(`${SecretKeys.key} does not belong to ${SecretKeys.cert}`);
    if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) {
      throw new Error(`${SecretKeys.cert} is not signed by the CA in ${SecretKeys.caCert}`);
    }
    const names = sanDNSNames(cert);
    if (!sameNames(names, o.dnsNames)) {
      throw new Error(`${SecretKeys.cert} is for [${names.join(", ")}], not [${o.dnsNames.join(", ")}]`);
    }
    const notBefore = cert.validFromDate.getTime();
    const notAfter = cert.validToDate.getTime();
    if (o.now < notBefore) throw new Error(`${SecretKeys.cert} is not valid before ${iso(notBefore)}`);
    const renewAt = certRenewalTime(notAfter, o);
    if (o.now >= renewAt) {
      throw new Error(`${SecretKeys.cert} expires at ${iso(notAfter)} (renewal was due at ${iso(renewAt)})`);
    }
    return {
      action: "keep",
      material: { ca: caPair, certPEM: data[SecretKeys.cert]!, keyPEM: data[SecretKeys.key]!, ...previous },
      renewAt: Math.min(renewAt, caRenewAt),
    };
  } catch (err) {
    return { action: "renew-cert", reason: messageOf(err), ca: caPair, ...previous };
  }
}

/** The caBundle: the CA, then the previous CA while it is valid. */
export function caBundleOf(material: CertMaterial, now: number): string {
  const pems = [material.ca.certPEM];
  if (validAt(material.previousCACertPEM, now)) pems.push(material.previousCACertPEM!);
  return pems.map((p) => `${p.trim()}\n`).join("");
}

interface IssueOptions {
  notBefore: number;
  notAfter: number;
}

/** A new self-signed CA (ECDSA P-256, SHA-256). */
export async function issueCA(commonName: string, o: IssueOptions): Promise<CAPair> {
  const pems = await generateCertificate([{ name: "commonName", value: commonName }], {
    keyType: "ec",
    curve: "P-256",
    algorithm: "sha256",
    notBeforeDate: new Date(o.notBefore),
    notAfterDate: new Date(o.notAfter),
    extensions: [
      { name: "basicConstraints", cA: true, pathLenConstraint: 0, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  return { certPEM: pems.cert, keyPEM: pems.private };
}

/** A new serving certificate (new key, random serial) for `dnsNames`, signed by `ca`. */
export async function issueServingCertificate(
  ca: CAPair,
  dnsNames: readonly string[],
  o: IssueOptions,
): Promise<{ certPEM: string; keyPEM: string }> {
  const pems = await generateCertificate([{ name: "commonName", value: dnsNames[0] ?? "webhook" }], {
    keyType: "ec",
    curve: "P-256",
    algorithm: "sha256",
    notBeforeDate: new Date(o.notBefore),
    notAfterDate: new Date(o.notAfter),
    ca: { cert: ca.certPEM, key: ca.keyPEM },
    extensions: [
      { name: "basicConstraints", cA: false, critical: true },
      { name: "keyUsage", digitalSignature: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      { name: "subjectAltName", altNames: dnsNames.map((value) => ({ type: 2 as const, value })) },
    ],
  });
  return { certPEM: pems.cert, keyPEM: pems.private };
}

interface Secret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

interface ClientConfig {
  caBundle?: string;
  [k: string]: unknown;
}

interface WebhookConfiguration extends KubeObject {
  webhooks?: Array<{ name?: string; clientConfig?: ClientConfig; [k: string]: unknown }>;
}

interface CustomResourceDefinition extends KubeObject {
  spec?: {
    conversion?: {
      /** "None" when unset. */
      strategy?: string;
      webhook?: { clientConfig?: ClientConfig; [k: string]: unknown };
      [k: string]: unknown;
    };
    [k: string]: unknown;
  };
}

/** One object whose caBundle a pass sets; every kind follows the same read-check-write discipline. */
interface InjectionTarget<T extends KubeObject> {
  /** "Kind/name", in logs and results. */
  id: string;
  /** The key `id` is logged under. */
  logKey: string;
  /** What the object is, as log messages start ("Webhook configuration"). */
  what: string;
  /** Where the bundle goes, as log messages end ("the webhook configuration"). */
  into: string;
  read(): Promise<T>;
  /**
   * The object with the caBundle set and what that changed (for the log); "current" when it already has
   * it; or why the object is not to be touched.
   */
  edit(obj: T): { updated: T; changed: KeyValues } | "current" | { skip: string };
  /** An update at the resourceVersion read. */
  write(obj: T): Promise<unknown>;
}

function decode(secret: Secret | undefined): Record<string, string> | undefined {
  if (!secret) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(secret.data ?? {})) out[k] = Buffer.from(v, "base64").toString("utf8");
  return out;
}

/** The Secret's data, as text. */
function dataOf(m: CertMaterial): Record<string, string> {
  return {
    [SecretKeys.caCert]: m.ca.certPEM,
    [SecretKeys.caKey]: m.ca.keyPEM,
    [SecretKeys.cert]: m.certPEM,
    [SecretKeys.key]: m.keyPEM,
    ...(m.previousCACertPEM ? { [SecretKeys.previousCACert]: m.previousCACertPEM } : {}),
  };
}

function encode(m: CertMaterial): Record<string, string> {
  return Object.fromEntries(Object.entries(dataOf(m)).map(([k, v]) => [k, Buffer.from(v).toString("base64")]));
}

function readIfExists(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** Write-then-rename, so a reader never sees half a file. */
function writeAtomically(path: string, content: string, mode: number): void {
  const tmp = `${path}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    writeFileSync(tmp, content, { mode });
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

interface SyncResult {
  /** What happened to the Secret in this pass. */
  secret: "unchanged" | "created" | "renewed-cert" | "renewed-ca";
  /** Configurations and CRDs whose caBundle this pass set ("Kind/name"). */
  injected: string[];
  /** Named configurations and CRDs that do not exist (yet). */
  missing: string[];
  /** Named CRDs left alone because their conversion strategy is not Webhook. */
  skipped: string[];
  /** Whether this pass wrote new certificate files. */
  filesWritten: boolean;
  /** When the material in use becomes due for renewal (ms since the epoch). */
  renewAt: number;
}

/**
 * Provisions and rotates the webhook serving certificate; a Runnable that runs on every replica (not
 * leader-elected: each replica serves webhooks with the files it wrote).
 */
export class CertProvisioner implements Runnable {
  readonly name = "webhook-cert-provisioner";
  readonly needLeaderElection = false;
  readonly dnsNames: readonly string[];
  private readonly o: CertProvisionerOptions;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly caValidityMs: number;
  private readonly certValidityMs: number;
  private ready = false;
  private readonly readyWaiters: Array<() => void> = [];
  private lastError: string | undefined;
  private readonly kicker = new Kicker();
  private missingLogged = new Set<string>();
  private skippedLogged = new Set<string>();

  constructor(o: CertProvisionerOptions) {
    for (const [flag, v] of [
      ["secretNamespace", o.secretNamespace],
      ["secretName", o.secretName],
      ["serviceName", o.serviceName],
      ["serviceNamespace", o.serviceNamespace],
      ["certDir", o.certDir],
    ] as const) {
      if (!v) throw new Error(`webhook certificate provisioner: ${flag} is required`);
    }
    this.o = o;
    this.log = o.logger ?? log.withName("controller-runtime").withName("webhook").withName("cert-provisioner");
    this.now = o.now ?? Date.now;
    this.caValidityMs = o.caValidityMs ?? DEFAULT_CA_VALIDITY_MS;
    this.certValidityMs = o.certValidityMs ?? DEFAULT_CERT_VALIDITY_MS;
    if (!(this.certValidityMs > 0) || !(this.caValidityMs > this.certValidityMs)) {
      throw new Error(
        `webhook certificate provisioner: the CA validity (${this.caValidityMs} ms) must be longer than the ` +
          `serving certificate's (${this.certValidityMs} ms), which must be positive`,
      );
    }
    this.dnsNames = serviceDNSNames(o.serviceName, o.serviceNamespace, o.clusterDomain);
  }

  private get configurations(): Array<{ kind: ResourceKind; name: string }> {
    return [
      ...(this.o.mutatingWebhookConfigurations ?? []).map((name) => ({
        kind: CertKinds.MutatingWebhookConfiguration,
        name,
      })),
      ...(this.o.validatingWebhookConfigurations ?? []).map((name) => ({
        kind: CertKinds.ValidatingWebhookConfiguration,
        name,
      })),
    ];
  }

  private get crds(): Array<{ kind: ResourceKind; name: string }> {
    return (this.o.customResourceDefinitions ?? []).map((name) => ({ kind: CertKinds.CustomResourceDefinition, name }));
  }

  get certDir(): string {
    return this.o.certDir;
  }

  get certPath(): string {
    return join(this.o.certDir, this.o.certName ?? "tls.crt");
  }

  get keyPath(): string {
    return join(this.o.certDir, this.o.keyName ?? "tls.key");
  }

  /** Passes once the certificate files have been written (the webhook server can start). */
  readonly checker: Checker = () => {
    if (!this.ready) {
      throw new Error(
        `the webhook serving certificate is not provisioned yet${this.lastError ? `: ${this.lastError}` : ""}`,
      );
    }
  };

  /** Resolves true once the certificate files exist, false if the signal aborts first. */
  waitReady(signal?: AbortSignal): Promise<boolean> {
    if (this.ready) return Promise.resolve(true);
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve(false);
      const onAbort = () => resolve(false);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.readyWaiters.push(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve(true);
      });
    });
  }

  async start(signal: AbortSignal): Promise<void> {
    const informers = this.watchTargets().map(({ kind, namespace, name }) => {
      const inf = new Informer<KubeObject>(this.o.client, kind, {
        ...(namespace ? { namespace } : {}),
        fieldSelector: `metadata.name=${name}`,
        logger: this.log.withName("watch"),
      });
      const kick = () => this.kick();
      inf.addEventHandler({ onAdd: kick, onUpdate: kick, onDelete: kick });
      inf.start();
      return inf;
    });
    if (this.configurations.length === 0 && this.crds.length === 0) {
      this.log.info("No webhook configurations to inject the CA into; the caBundle is left to the user", {
        secret: `${this.o.secretNamespace}/${this.o.secretName}`,
      });
    }
    const backoff = new Backoff({ initialMs: 1_000, maxMs: 60_000 });
    const resync = this.o.resyncIntervalMs ?? DEFAULT_RESYNC_INTERVAL_MS;
    try {
      while (!signal.aborted) {
        this.kicker.passStarts();
        let delay: number;
        let wrote = false;
        try {
          const r = await this.sync();
          this.lastError = undefined;
          backoff.reset();
          wrote = r.secret !== "unchanged" || r.injected.length > 0 || r.filesWritten;
          delay = Math.min(resync, Math.max(1_000, r.renewAt - this.now()));
        } catch (err) {
          this.lastError = messageOf(err);
          delay = backoff.next();
          this.log.error("Cannot provision the webhook serving certificate; retrying", err, {
            retryInMs: Math.round(delay),
          });
        }
        // Our own writes come back as watch events: a pass that wrote waits a second before the next one,
        // which bounds a fight with anything else writing the same objects.
        await this.kicker.sleep(delay, wrote ? 1_000 : 100, signal);
      }
    } finally {
      await Promise.all(informers.map((i) => i.stop()));
    }
  }

  /** Asks for a pass soon (after a short debounce). */
  kick(): void {
    this.kicker.kick();
  }

  private watchTargets(): Array<{ kind: ResourceKind; namespace?: string; name: string }> {
    return [
      { kind: CertKinds.Secret, namespace: this.o.secretNamespace, name: this.o.secretName },
      ...this.configurations,
      ...this.crds,
    ];
  }

  /**
   * One pass: make the Secret hold a valid CA and serving certificate, set the CA bundle in every named
   * webhook configuration and CRD, and write the serving pair to the certificate directory. Throws (after
   * doing what it could) when any step failed.
   */
  async sync(): Promise<SyncResult> {
    const { material, secret, renewAt } = await this.ensureSecret();
    const bundle = caBundleOf(material, this.now());
    const { injected, missing, skipped, errors } = await this.injectCABundle(bundle);
    const filesWritten = await this.writeFiles(material, injected.length > 0);
    if (!this.ready) {
      this.ready = true;
      for (const w of this.readyWaiters.splice(0)) w();
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, errors.map(messageOf).join("; "));
    return { secret, injected, missing, skipped, filesWritten, renewAt };
  }

  private async ensureSecret(): Promise<{ material: CertMaterial; secret: SyncResult["secret"]; renewAt: number }> {
    const { client, secretNamespace: namespace, secretName: name } = this.o;
    const where = `${namespace}/${name}`;
    for (let attempt = 1; ; attempt++) {
      const current = await client.get<Secret>(CertKinds.Secret, namespace, name).catch((err: unknown) => {
        if (isNotFound(err)) return undefined;
        throw err;
      });
      const now = this.now();
      const planOpts = {
        now,
        dnsNames: this.dnsNames,
        caValidityMs: this.caValidityMs,
        certValidityMs: this.certValidityMs,
      };
      const plan = planRenewal(decode(current), planOpts);
      if (plan.action === "keep") return { material: plan.material, secret: "unchanged", renewAt: plan.renewAt };
      if (attempt > MAX_ATTEMPTS) {
        throw new Error(`the Secret ${where} changed under every one of ${MAX_ATTEMPTS} attempts to write it`);
      }

      const material = await this.issue(plan, now);
      const check = planRenewal(dataOf(material), planOpts);
      if (check.action !== "keep") throw new Error(`a freshly issued certificate is unusable: ${check.reason}`);
      const labels = { ...current?.metadata?.labels, ...this.o.secretLabels };
      const result = !current ? "created" : plan.action === "renew-ca" ? "renewed-ca" : "renewed-cert";
      try {
        if (!current) {
          await client.create<Secret>(CertKinds.Secret, {
            apiVersion: "v1",
            kind: "Secret",
            metadata: { name, namespace, ...(Object.keys(labels).length ? { labels } : {}) },
            type: "kubernetes.io/tls",
            data: encode(material),
          });
        } else {
          // The type is immutable: a Secret someone else created keeps its own.
          await client.update<Secret>(CertKinds.Secret, {
            ...current,
            metadata: { ...current.metadata, ...(Object.keys(labels).length ? { labels } : {}) },
            data: encode(material),
          });
        }
      } catch (err) {
        // Another replica wrote first: read what it wrote and decide again.
        if (isAlreadyExists(err) || isConflict(err) || isNotFound(err)) {
          this.log.debug("The Secret changed while it was written; reading it again", {
            secret: where,
            reason: messageOf(err),
          });
          continue;
        }
        throw err;
      }
      const serving = new X509Certificate(material.certPEM);
      this.log.info(
        result === "created"
          ? "Created the webhook certificate Secret"
          : result === "renewed-ca"
            ? "Renewed the webhook CA and serving certificate"
            : "Renewed the webhook serving certificate",
        {
          secret: where,
          reason: plan.reason,
          dnsNames: this.dnsNames,
          serialNumber: serving.serialNumber,
          notAfter: serving.validToDate.toISOString(),
          caNotAfter: new X509Certificate(material.ca.certPEM).validToDate.toISOString(),
        },
      );
      return { material, secret: result, renewAt: check.renewAt };
    }
  }

  private async issue(plan: Exclude<RenewalPlan, { action: "keep" }>, now: number): Promise<CertMaterial> {
    let ca: CAPair;
    if (plan.action === "renew-ca") {
      const cn = `${this.o.caCommonName ?? `${this.o.serviceName}-ca`}@${Math.floor(now / 1000)}`;
      ca = await issueCA(cn, { notBefore: now - BACKDATE_MS, notAfter: now + this.caValidityMs });
    } else {
      ca = plan.ca;
    }
    // Never past the CA's own expiry (the CA is renewed before that can matter).
    const caNotAfter = new X509Certificate(ca.certPEM).validToDate.getTime();
    const serving = await issueServingCertificate(ca, this.dnsNames, {
      notBefore: now - BACKDATE_MS,
      notAfter: Math.min(now + this.certValidityMs, caNotAfter),
    });
    return {
      ca,
      ...serving,
      ...(plan.previousCACertPEM ? { previousCACertPEM: plan.previousCACertPEM } : {}),
    };
  }

  private async injectCABundle(
    bundle: string,
  ): Promise<{ injected: string[]; missing: string[]; skipped: string[]; errors: Error[] }> {
    const caBundle = Buffer.from(bundle).toString("base64");
    const result = {
      injected: [] as string[],
      missing: [] as string[],
      skipped: [] as string[],
      errors: [] as Error[],
    };
    for (const { kind, name } of this.configurations) {
      await this.inject(result, {
        id: `${kind.kind}/${name}`,
        logKey: "configuration",
        what: "Webhook configuration",
        into: "the webhook configuration",
        read: () => this.o.client.get<WebhookConfiguration>(kind, undefined, name),
        edit: (cfg) => {
          const webhooks = cfg.webhooks ?? [];
          const stale = webhooks.filter((w) => w.clientConfig?.caBundle !== caBundle).map((w) => w.name);
          if (stale.length === 0) return "current";
          return {
            updated: {
              ...cfg,
              webhooks: webhooks.map((w) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle } })),
            },
            changed: { webhooks: stale },
          };
        },
        write: (cfg) => this.o.client.update<WebhookConfiguration>(kind, cfg),
      });
    }
    for (const { kind, name } of this.crds) {
      await this.inject(result, {
        id: `${kind.kind}/${name}`,
        logKey: "customResourceDefinition",
        what: "CustomResourceDefinition",
        into: "the CustomResourceDefinition's conversion webhook",
        read: () => this.o.client.get<CustomResourceDefinition>(kind, undefined, name),
        edit: (crd) => {
          const conversion = crd.spec?.conversion;
          const strategy = conversion?.strategy ?? "None";
          if (!conversion || strategy !== "Webhook") {
            return { skip: `its conversion strategy is ${strategy}, not Webhook` };
          }
          const webhook = conversion.webhook ?? {};
          if (webhook.clientConfig?.caBundle === caBundle) return "current";
          return {
            updated: {
              ...crd,
              spec: {
                ...crd.spec,
                conversion: {
                  ...conversion,
                  webhook: { ...webhook, clientConfig: { ...webhook.clientConfig, caBundle } },
                },
              },
            },
            changed: {},
          };
        },
        write: (crd) => this.o.client.update<CustomResourceDefinition>(kind, crd),
      });
    }
    return result;
  }

  /**
   * Sets one object's caBundle: reads it, and unless it is missing, already current or not to be touched,
   * replaces it at the resourceVersion read (a Conflict or NotFound re-reads, up to MAX_ATTEMPTS times).
   * A missing or skipped object is logged once until that changes.
   */
  private async inject<T extends KubeObject>(
    result: { injected: string[]; missing: string[]; skipped: string[]; errors: Error[] },
    t: InjectionTarget<T>,
  ): Promise<void> {
    const { id } = t;
    try {
      for (let attempt = 1; ; attempt++) {
        let obj: T;
        try {
          obj = await t.read();
        } catch (err) {
          if (!isNotFound(err)) throw err;
          result.missing.push(id);
          if (!this.missingLogged.has(id)) {
            this.log.info(`${t.what} not found; its CA bundle is set once it exists`, { [t.logKey]: id });
            this.missingLogged.add(id);
          }
          return;
        }
        this.missingLogged.delete(id);
        const edit = t.edit(obj);
        if (edit === "current") {
          this.skippedLogged.delete(id);
          return;
        }
        if ("skip" in edit) {
          result.skipped.push(id);
          if (!this.skippedLogged.has(id)) {
            this.log.info(`${t.what} left alone: ${edit.skip}`, { [t.logKey]: id });
            this.skippedLogged.add(id);
          }
          return;
        }
        this.skippedLogged.delete(id);
        if (attempt > MAX_ATTEMPTS) throw new Error(`${id} changed under every one of ${MAX_ATTEMPTS} attempts`);
        try {
          await t.write(edit.updated);
        } catch (err) {
          if (isConflict(err) || isNotFound(err)) continue;
          throw err;
        }
        result.injected.push(id);
        this.log.info(`Injected the CA bundle into ${t.into}`, { [t.logKey]: id, ...edit.changed });
        return;
      }
    } catch (err) {
      result.errors.push(new Error(`cannot set the CA bundle of ${id}: ${messageOf(err)}`, { cause: err }));
    }
  }

  private async writeFiles(material: CertMaterial, bundleChanged: boolean): Promise<boolean> {
    const { certPath, keyPath } = this;
    const cert = readIfExists(certPath);
    const key = readIfExists(keyPath);
    if (cert === material.certPEM && key === material.keyPEM) return false;
    if (bundleChanged && cert !== undefined) {
      // The server is serving something already: give the apiserver time to see the new bundle first.
      const ms = this.o.trustPropagationDelayMs ?? 2_000;
      if (ms > 0) await new Promise((r) => setTimeout(r, ms));
    }
    mkdirSync(this.o.certDir, { recursive: true });
    writeAtomically(keyPath, material.keyPEM, 0o600);
    writeAtomically(certPath, material.certPEM, 0o644);
    this.log.info("Wrote the webhook serving certificate", {
      certPath,
      serialNumber: new X509Certificate(material.certPEM).serialNumber,
    });
    return true;
  }
}
