// The project stands on its own: a user clones only this repository, so nothing in it may read a
// sibling directory (the CRD generator and its test once read one beside the clone).
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, it } from "node:test";
import { OPENAPI_VERSION, readVendoredOpenAPI, VENDORED_OPENAPI } from "../../hack/crdgen/vendored-openapi.ts";

const root = resolve(import.meta.dirname, "..", "..");
const SKIP = new Set(["node_modules", ".git", "dist", "bin", "bench/results"]);
const CODE = /\.(ts|js|mjs|cjs|sh|json|ya?ml)$|^Makefile$|^Dockerfile$|^run$|^setup-envtest$|^kube-source$/;
// CI's entry point alone may pass on the Kubernetes source the machine keeps beside the clone (as KUBE_SOURCE):
// the project builds from whatever file it is given, and works without one.
const MAY_READ_BESIDE = new Set([".ci/run"]);

function* files(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const abs = join(dir, name);
    if (SKIP.has(relative(root, abs))) continue;
    if (statSync(abs).isDirectory()) yield* files(abs);
    else if (CODE.test(name)) yield abs;
  }
}

describe("self-contained repository", () => {
  it("no code, script or config refers to a directory beside the project", () => {
    const offenders: string[] = [];
    // Built at run time so this file does not match itself.
    const sibling = new RegExp(["\\.\\./", 'shared\\b|"\\.\\.", "shared"|/', "shared/k8s"].join(""));
    for (const f of files(root)) {
      if (MAY_READ_BESIDE.has(relative(root, f))) continue;
      const text = readFileSync(f, "utf8");
      text.split("\n").forEach((line, i) => {
        if (sibling.test(line)) offenders.push(`${relative(root, f)}:${i + 1}: ${line.trim()}`);
      });
    }
    assert.deepEqual(offenders, []);
  });

  it("vendors the pinned Kubernetes OpenAPI definitions with their provenance", () => {
    assert.ok(VENDORED_OPENAPI.startsWith(join(root, "third_party")));
    const doc = readVendoredOpenAPI() as { swagger: string; definitions: Record<string, unknown> };
    assert.equal(doc.swagger, "2.0");
    assert.ok(doc.definitions["io.k8s.api.batch.v1.JobTemplateSpec"]);
    const readme = readFileSync(join(root, "third_party", "k8s-openapi", "README.md"), "utf8");
    assert.match(readme, new RegExp(`Kubernetes \\*\\*${OPENAPI_VERSION}\\*\\*`));
    assert.match(readme, /Apache License 2\.0/);
  });
});
