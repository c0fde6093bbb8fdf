// The Kubernetes OpenAPI v2 definitions the CRD's jobTemplate schema is generated from, vendored under
// third_party/k8s-openapi (provenance in its README). Pinned by version and sha256, like a Go module in
// go.sum: an edited or truncated file fails the generator instead of silently changing the CRD.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const OPENAPI_VERSION = "v1.35.0";
export const OPENAPI_SHA256 = "1d0ba96f78f669ca3aaa982c0ac3298aac7d716feb0fec8f9494c82bec411127";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const VENDORED_OPENAPI = join(
  root,
  "third_party",
  "k8s-openapi",
  OPENAPI_VERSION,
  "batch-v1-jobtemplatespec.swagger.json",
);

/** The vendored document, after checking it is byte-for-byte the pinned one. */
export function readVendoredOpenAPI(): unknown {
  const raw = readFileSync(VENDORED_OPENAPI);
  const sum = createHash("sha256").update(raw).digest("hex");
  if (sum !== OPENAPI_SHA256) {
    throw new Error(
      `${VENDORED_OPENAPI}: sha256 ${sum} is not the pinned ${OPENAPI_SHA256} (Kubernetes ${OPENAPI_VERSION}); ` +
        `restore it with git, or update the pin as third_party/k8s-openapi/README.md describes`,
    );
  }
  return JSON.parse(raw.toString("utf8"));
}
