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
//
// The parts: what the Secret holds and what it calls for (certrenewal.ts, pure), issuing certificates
// (certissue.ts), setting the caBundles (cabundleinjector.ts); this module runs the passes.
import { X509Certificate } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Backoff } from "../cache/backoff.ts";
import { Informer } from "../cache/informer.ts";
import type { Client } from "../client.ts";
import { isAlreadyExists, isConflict, isNotFound } from "../errors.ts";
import { Kinds, type KubeObject, type ResourceKind } from "../kinds.ts";
import { log, type Logger } from "../log.ts";
import type { Runnable } from "../manager.ts";
import type { Checker } from "../probes.ts";
import { CABundleInjector, type NamedObject } from "./cabundleinjector.ts";
import { issueCA, issueServingCertificate } from "./certissue.ts";
import { type CAPair, caBundleOf, type CertMaterial, dataOf, planRenewal, type RenewalPlan } from "./certrenewal.ts";
import { Kicker } from "./kicker.ts";

/** The kinds the provisioner reads and writes (test/unit/config.test.ts matches its calls to the RBAC). */
export const CertKinds = {
  Secret: Kinds.Secret,
  MutatingWebhookConfiguration: Kinds.MutatingWebhookConfiguration,
  ValidatingWebhookConfiguration: Kinds.ValidatingWebhookConfiguration,
  CustomResourceDefinition: Kinds.CustomResourceDefinition,
} as const satisfies Record<string, ResourceKind>;

const YEAR_MS = 365 * 24 * 3_600_000;
export const DEFAULT_CA_VALIDITY_MS = 10 * YEAR_MS;
export const DEFAULT_CERT_VALIDITY_MS = YEAR_MS;
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

/** The names a Service is reached by from inside the cluster (the apiserver uses <name>.<namespace>.svc). */
export function serviceDNSNames(name: string, namespace: string, clusterDomain = "cluster.local"): string[] {
  return [name, `${name}.${namespace}`, `${name}.${namespace}.svc`, `${name}.${namespace}.svc.${clusterDomain}`];
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

interface Secret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

function decode(secret: Secret | undefined): Record<string, string> | undefined {
  if (!secret) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(secret.data ?? {})) out[k] = Buffer.from(v, "base64").toString("utf8");
  return out;
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
  private readonly injector: CABundleInjector;

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
    this.injector = new CABundleInjector({ client: o.client, logger: this.log, maxAttempts: MAX_ATTEMPTS });
  }

  private get configurations(): NamedObject[] {
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

  private get crds(): NamedObject[] {
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
    const { injected, missing, skipped, errors } = await this.injector.inject(bundle, this.configurations, this.crds);
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
