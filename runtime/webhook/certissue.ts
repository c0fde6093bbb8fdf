// Issuing the webhook certificates: a self-signed CA, and serving certificates it signs (ECDSA P-256, SHA-256,
// a new key each time). What to issue, and when, is certrenewal.ts' decision.
import type { CAPair } from "./certrenewal.ts";
import { generateCertificate } from "../selfsigned.ts";

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
