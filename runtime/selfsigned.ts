// The one loader of the selfsigned package, the way the project makes X.509 certificates: the webhook
// certificate provisioner's CA and serving certificates (webhook/certprovisioner.ts), the metrics server's
// self-signed certificate (metrics/auth.ts) and the test harness's throwaway PKI (envtest/) all call
// generateCertificate. The package, with its ASN.1 stack, is imported on the first certificate made, never at
// start: a manager that is given its certificates does not pay for it (its cost: docs/operating.md, Sizing).
import type { generate } from "selfsigned";

/** selfsigned's `generate`, the package imported on the first call. */
export async function generateCertificate(...args: Parameters<typeof generate>): ReturnType<typeof generate> {
  const selfsigned = await import("selfsigned");
  return selfsigned.generate(...args);
}
