// What the webhook certificate Secret holds (SecretKeys, CertMaterial) and what its content calls for at a given
// time: keep it, issue a new serving certificate from its CA, or start over with a new CA (planRenewal); and the
// CA bundle that goes with it (caBundleOf). Pure: no I/O, the time is an argument. certprovisioner.ts acts on it.
import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";

/** The keys of the Secret. */
export const SecretKeys = {
  caCert: "ca.crt",
  caKey: "ca.key",
  cert: "tls.crt",
  key: "tls.key",
  previousCACert: "ca-previous.crt",
} as const;

/** Renew when less than this share of the validity is left. */
export const RENEW_BEFORE_FRACTION = 1 / 3;

/** PEM texts of one CA. */
export interface CAPair {
  certPEM: string;
  keyPEM: string;
}

/** Everything the Secret holds, decoded. */
export interface CertMaterial {
  ca: CAPair;
  certPEM: string;
  keyPEM: string;
  /** The CA before the last CA renewal, if any. */
  previousCACertPEM?: string;
}

export type RenewalPlan =
  | { action: "keep"; material: CertMaterial; renewAt: number }
  | { action: "renew-cert"; reason: string; ca: CAPair; previousCACertPEM?: string }
  | { action: "renew-ca"; reason: string; previousCACertPEM?: string };

export interface PlanOptions {
  now: number;
  dnsNames: readonly string[];
  caValidityMs: number;
  certValidityMs: number;
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

/** The Secret's data, as text. */
export function dataOf(m: CertMaterial): Record<string, string> {
  return {
    [SecretKeys.caCert]: m.ca.certPEM,
    [SecretKeys.caKey]: m.ca.keyPEM,
    [SecretKeys.cert]: m.certPEM,
    [SecretKeys.key]: m.keyPEM,
    ...(m.previousCACertPEM ? { [SecretKeys.previousCACert]: m.previousCACertPEM } : {}),
  };
}
