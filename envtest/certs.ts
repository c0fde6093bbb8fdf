// Throwaway PKI for webhook tests (what controller-runtime's envtest does with its TinyCA): a CA the
// apiserver is told to trust via caBundle, and serving certificates for 127.0.0.1/localhost signed by
// it. Keys are ECDSA P-256: fast to generate and accepted by every Go TLS stack the apiserver uses.
import { X509Certificate } from "node:crypto";
import {
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  lstatSync,
  readlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateCertificate } from "../runtime/selfsigned.ts";
import { removeOnExit } from "./processes.ts";

export interface CertificateAuthority {
  certPEM: string;
  keyPEM: string;
}

export interface ServingCertificate {
  certPEM: string;
  keyPEM: string;
  /** Upper-case hex, as X509Certificate.serialNumber and TLSSocket.getPeerCertificate() print it. */
  serialNumber: string;
}

export interface ServingCertificateOptions {
  /** DNS names and IP addresses to put in subjectAltName (default 127.0.0.1 and localhost). */
  hosts?: string[];
  /** Validity in days from now (default 1). Negative values make an already expired certificate. */
  days?: number;
}

// A little backdating absorbs clock differences between this process and the apiserver.
const SKEW_MS = 5 * 60_000;
const DAY_MS = 24 * 3_600_000;

function isIP(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(":");
}

function validity(days: number): { notBeforeDate: Date; notAfterDate: Date } {
  const now = Date.now();
  const notAfter = now + days * DAY_MS;
  return { notBeforeDate: new Date(Math.min(now, notAfter) - SKEW_MS), notAfterDate: new Date(notAfter) };
}

export async function createCertificateAuthority(commonName = "envtest-webhook-ca"): Promise<CertificateAuthority> {
  const pems = await generateCertificate([{ name: "commonName", value: commonName }], {
    keyType: "ec",
    algorithm: "sha256",
    ...validity(7),
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  return { certPEM: pems.cert, keyPEM: pems.private };
}

/** A new serving certificate (new key, new random serial) signed by `ca`. */
export async function issueServingCertificate(
  ca: CertificateAuthority,
  opts: ServingCertificateOptions = {},
): Promise<ServingCertificate> {
  const hosts = opts.hosts ?? ["127.0.0.1", "localhost"];
  const pems = await generateCertificate([{ name: "commonName", value: hosts[0] ?? "localhost" }], {
    keyType: "ec",
    algorithm: "sha256",
    ...validity(opts.days ?? 1),
    ca: { cert: ca.certPEM, key: ca.keyPEM },
    extensions: [
      { name: "basicConstraints", cA: false, critical: true },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: hosts.map((h) => (isIP(h) ? { type: 7 as const, ip: h } : { type: 2 as const, value: h })),
      },
    ],
  });
  return { certPEM: pems.cert, keyPEM: pems.private, serialNumber: new X509Certificate(pems.cert).serialNumber };
}

export interface WriteOptions {
  certName?: string;
  keyName?: string;
  /**
   * "files" (default) rewrites the two files in place; "secret-volume" lays them out as the kubelet
   * does for a mounted Secret: a timestamped directory behind a "..data" symlink that is swapped
   * atomically, with tls.crt/tls.key as symlinks through it.
   */
  layout?: "files" | "secret-volume";
}

let generation = 0;

/** Writes the pair as the webhook server expects it in its certDir. */
export function writeServingCertificate(dir: string, cert: ServingCertificate, opts: WriteOptions = {}): void {
  const certName = opts.certName ?? "tls.crt";
  const keyName = opts.keyName ?? "tls.key";
  mkdirSync(dir, { recursive: true });
  if ((opts.layout ?? "files") === "files") {
    writeFileSync(join(dir, keyName), cert.keyPEM, { mode: 0o600 });
    writeFileSync(join(dir, certName), cert.certPEM);
    return;
  }
  const stamp = `..${new Date().toISOString().replace(/[-:.]/g, "_")}.${process.pid}.${++generation}`;
  mkdirSync(join(dir, stamp));
  writeFileSync(join(dir, stamp, keyName), cert.keyPEM, { mode: 0o600 });
  writeFileSync(join(dir, stamp, certName), cert.certPEM);
  let previous: string | undefined;
  try {
    previous = readlinkSync(join(dir, "..data"));
  } catch {
    previous = undefined;
  }
  symlinkSync(stamp, join(dir, "..data_tmp"));
  renameSync(join(dir, "..data_tmp"), join(dir, "..data"));
  for (const name of [certName, keyName]) {
    const link = join(dir, name);
    let isLink = false;
    try {
      isLink = lstatSync(link).isSymbolicLink();
    } catch {
      isLink = false;
    }
    if (!isLink) {
      rmSync(link, { force: true });
      symlinkSync(join("..data", name), link);
    }
  }
  if (previous && previous !== stamp) rmSync(join(dir, previous), { recursive: true, force: true });
}

export interface WebhookCertificates {
  /** The directory holding tls.crt and tls.key: the webhook server's certDir. */
  readonly dir: string;
  readonly ca: CertificateAuthority;
  /** The CA certificate: the caBundle of the webhook configurations. */
  readonly caPEM: string;
  /** The serving certificate currently in `dir`. */
  readonly serving: ServingCertificate;
  /** Issues a new serving certificate from the same CA and writes it into `dir` (a rotation). */
  rotate(opts?: ServingCertificateOptions & WriteOptions): Promise<ServingCertificate>;
  /** Removes `dir` when it was created here. */
  cleanup(): void;
}

/**
 * A CA plus a serving certificate for 127.0.0.1/localhost written to `dir` (default a new temp dir,
 * removed on exit).
 */
export async function generateWebhookCertificates(
  dir?: string,
  opts: ServingCertificateOptions & WriteOptions = {},
): Promise<WebhookCertificates> {
  const ownDir = dir === undefined;
  const certDir = dir ?? mkdtempSync(join(tmpdir(), "webhook-certs-"));
  if (ownDir) removeOnExit(certDir);
  const ca = await createCertificateAuthority();
  let serving = await issueServingCertificate(ca, opts);
  writeServingCertificate(certDir, serving, opts);
  return {
    dir: certDir,
    ca,
    caPEM: ca.certPEM,
    get serving() {
      return serving;
    },
    async rotate(o = {}) {
      const next = await issueServingCertificate(ca, { ...opts, ...o });
      writeServingCertificate(certDir, next, { ...opts, ...o });
      serving = next;
      return next;
    },
    cleanup() {
      if (ownDir) rmSync(certDir, { recursive: true, force: true });
    },
  };
}
