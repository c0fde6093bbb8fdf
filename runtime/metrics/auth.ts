// Authentication and authorization of metrics scrapers, as controller-runtime's
// filters.WithAuthenticationAndAuthorization: the bearer token is checked with a TokenReview and the
// user must be allowed `get` on the non-resource URL (/metrics) by a SubjectAccessReview. Answers
// are cached briefly so a scrape every few seconds costs no API calls.
import type { IncomingMessage } from "node:http";
import { X509Certificate } from "node:crypto";
import type { Client } from "../client.ts";
import { generateCertificate } from "../selfsigned.ts";
import type { FilterResult, RequestFilter } from "./server.ts";

interface CacheEntry {
  result: FilterResult;
  expires: number;
}

const CACHE_TTL_MS = 60_000;

export function authenticatedAuthorizedFilter(client: Client, o: { now?: () => number } = {}): RequestFilter {
  const now = o.now ?? Date.now;
  const cache = new Map<string, CacheEntry>();
  return async (req: IncomingMessage): Promise<FilterResult> => {
    const header = req.headers.authorization ?? "";
    const m = /^Bearer\s+(\S+)$/i.exec(header);
    if (!m) return { allowed: false, code: 401, reason: "Unauthorized: a bearer token is required" };
    const token = m[1]!;
    const path = (req.url ?? "/").split("?")[0]!;
    const verb = (req.method ?? "GET").toLowerCase() === "head" ? "get" : (req.method ?? "GET").toLowerCase();
    const key = `${token}\u0000${verb}\u0000${path}`;
    const hit = cache.get(key);
    if (hit && hit.expires > now()) return hit.result;

    const review = await client.request<{
      status?: {
        authenticated?: boolean;
        user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
        error?: string;
      };
    }>("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {
      body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token } },
    });
    let result: FilterResult;
    const user = review.status?.user;
    if (!review.status?.authenticated || !user) {
      result = {
        allowed: false,
        code: 401,
        reason: `Unauthorized${review.status?.error ? `: ${review.status.error}` : ""}`,
      };
    } else {
      const sar = await client.request<{ status?: { allowed?: boolean; reason?: string } }>(
        "POST",
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        {
          body: {
            apiVersion: "authorization.k8s.io/v1",
            kind: "SubjectAccessReview",
            spec: {
              user: user.username,
              uid: user.uid,
              groups: user.groups,
              extra: user.extra,
              nonResourceAttributes: { path, verb },
            },
          },
        },
      );
      result = sar.status?.allowed
        ? { allowed: true }
        : {
            allowed: false,
            code: 403,
            reason: `Forbidden: user "${user.username}" cannot ${verb} path "${path}"${sar.status?.reason ? `: ${sar.status.reason}` : ""}`,
          };
    }
    cache.set(key, { result, expires: now() + CACHE_TTL_MS });
    if (cache.size > 1000) cache.delete(cache.keys().next().value!);
    return result;
  };
}

/** A self-signed serving certificate, for --metrics-secure without --metrics-cert-path (as controller-runtime does). */
export async function selfSignedCertificate(
  hosts: string[] = ["localhost", "127.0.0.1"],
  commonName = "controller-runtime-metrics",
): Promise<{ cert: string; key: string }> {
  const pems = await generateCertificate([{ name: "commonName", value: commonName }], {
    keyType: "ec",
    algorithm: "sha256",
    notAfterDate: new Date(Date.now() + 365 * 24 * 3600_000),
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: hosts.map((h) =>
          /^\d+\.\d+\.\d+\.\d+$/.test(h) ? { type: 7 as const, ip: h } : { type: 2 as const, value: h },
        ),
      },
    ],
  });
  new X509Certificate(pems.cert); // fail early on a malformed certificate
  return { cert: pems.cert, key: pems.private };
}
