// The one-file install as users do it: `kubectl apply -f dist/install.yaml`, client-side, which is what
// kubebuilder projects' READMEs tell users to run. kubectl keeps each object's JSON in its
// last-applied-configuration annotation, and a CRD's annotations may hold 262,144 bytes in all: the CRD
// must fit (hack/crdgen/crd.ts, UNDOCUMENTED_TEMPLATE).
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { parseAllDocuments, stringify } from "yaml";
import { RESOURCE } from "../../api/v1/index.ts";
import { PROJECT_ROOT, TestEnv } from "../../envtest/index.ts";
import { cronJobCRD, MAX_DESCRIPTION_LENGTH } from "../../hack/crdgen/crd.ts";
import { definitionsOf } from "../../hack/crdgen/openapi.ts";
import { readVendoredOpenAPI, VENDORED_OPENAPI } from "../../hack/crdgen/vendored-openapi.ts";

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";
const ANNOTATIONS_LIMIT = 262_144;

/** An object as `kubectl get -o json` shows it; the rest of its fields are compared whole. */
interface Held {
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    generation?: number;
    resourceVersion?: string;
    managedFields?: unknown;
    annotations?: Record<string, unknown>;
  };
  status?: unknown;
}

describe("dist/install.yaml with a plain kubectl apply", () => {
  let env: TestEnv;
  let file: string;

  before(async () => {
    env = await TestEnv.start({ crdDirectoryPaths: [] });
    const text = readFileSync(join(PROJECT_ROOT, "dist", "install.yaml"), "utf8");
    // Before 1.21 PodDisruptionBudget is served as policy/v1beta1 only (the Makefile's deploy does the
    // same); the file is used as it is wherever policy/v1 is served.
    const served = (await env.kubectl(["api-versions"])).stdout.split("\n");
    file = join(env.dir, "install.yaml");
    writeFileSync(
      file,
      served.includes("policy/v1") ? text : text.replace(/^apiVersion: policy\/v1$/gm, "apiVersion: policy/v1beta1"),
    );
  });
  after(async () => {
    await env?.stop();
  });

  /**
   * Every object of the file as the server holds it, by kind, namespace and name, in what a user would call a
   * change: the object whole (its spec, rules or data, labels, annotations, finalizers, owners, and its
   * generation, which moves with every change of its spec) but for what the server or controllers write on
   * their own. Left out: metadata.resourceVersion and metadata.managedFields, the server's record of writes,
   * which move on a write that leaves the object as it was (e.g. a patch whose result equals the object, or a
   * last-applied annotation rewritten with the same content; and a controller's status write moves the
   * resourceVersion too), and status, which apply never writes. kubectl's last-applied annotation stays in, as
   * the JSON it holds: it is the base of the user's next apply, so a change to it is a change, its text's
   * spacing or key order is not. `count` objects must be there, one for each document of the file.
   */
  async function held(count: number): Promise<Map<string, Held>> {
    const r = await env.kubectl(["get", "-f", file, "-o", "json"]);
    assert.equal(r.code, 0, r.stderr);
    const items = (JSON.parse(r.stdout) as { items: Held[] }).items;
    assert.equal(items.length, count, r.stdout.slice(0, 2000));
    return new Map(
      items.map((o) => {
        const { resourceVersion: _rv, managedFields: _mf, ...metadata } = o.metadata;
        const annotations = metadata.annotations && { ...metadata.annotations };
        if (annotations?.[LAST_APPLIED]) annotations[LAST_APPLIED] = JSON.parse(annotations[LAST_APPLIED] as string);
        const { status: _status, ...rest } = o;
        const key = `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata.name}`;
        return [key, { ...rest, metadata: { ...metadata, ...(annotations ? { annotations } : {}) } }];
      }),
    );
  }

  it("installs every object, and a second apply changes nothing", async () => {
    const objects = parseAllDocuments(readFileSync(file, "utf8"))
      .map((d) => d.toJS() as { kind?: string } | null)
      .filter((o) => o?.kind);
    const first = await env.kubectl(["apply", "-f", file]);
    assert.equal(first.code, 0, first.stderr);
    const created = first.stdout.split("\n").filter((l) => / created$/.test(l));
    assert.equal(created.length, objects.length, first.stdout);
    await env.waitEstablished(RESOURCE);

    const crd = JSON.parse((await env.kubectl(["get", "crd", RESOURCE, "-o", "json"])).stdout) as {
      metadata: { annotations?: Record<string, string> };
    };
    const lastApplied = crd.metadata.annotations?.[LAST_APPLIED] ?? "";
    assert.ok(lastApplied.length > 0, "client-side apply records the CRD's last-applied configuration");
    // The margin left for what a later version (a second served API version) adds.
    assert.ok(
      // Two versions, each with the Job template's schema (test/unit/crd-discoverability.test.ts).
      lastApplied.length < ANNOTATIONS_LIMIT * 0.75,
      `the CRD's last-applied annotation is ${lastApplied.length} bytes, over 3/4 of the ${ANNOTATIONS_LIMIT} allowed`,
    );

    // Judged by what the server holds (held()), not by kubectl's wording: against a 1.32 control plane kubectl
    // 1.32 prints "poddisruptionbudget.policy/… configured" here although the PodDisruptionBudget stays as it
    // was (its generation 1, `kubectl diff` empty). One line per object, whatever it says.
    const before = await held(objects.length);
    const second = await env.kubectl(["apply", "-f", file]);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout.trim().split("\n").length, objects.length, second.stdout);
    const after = await held(objects.length);
    assert.deepEqual([...after.keys()], [...before.keys()], "the same objects");
    for (const [key, was] of before) {
      const now = after.get(key)!;
      assert.equal(now.metadata.generation, was.metadata.generation, `${key}: its generation moved`);
      assert.deepEqual(now, was, `${key} changed:\n${second.stdout}`);
    }
  });

  it("needs the Pod template's descriptions left out: with them the CRD is refused (why the generator drops them)", async () => {
    const crd = cronJobCRD({
      definitions: definitionsOf(readVendoredOpenAPI(), VENDORED_OPENAPI),
      maxDescriptionLength: MAX_DESCRIPTION_LENGTH,
      templateDescriptions: true,
    }) as { metadata: { name: string } };
    crd.metadata.name = RESOURCE;
    const big = join(env.dir, "crd-with-template-descriptions.yaml");
    writeFileSync(big, stringify(crd));
    const r = await env.kubectl(["apply", "-f", big]);
    assert.notEqual(r.code, 0, r.stdout);
    // 1.20: "Too long: must have at most 262144 bytes"; later releases: "Too long: may not be more than 262144 bytes".
    assert.match(r.stderr, /metadata\.annotations: Too long: .*262144 bytes/);
  });

  it("is removed by kubectl delete -f", async () => {
    const r = await env.kubectl(["delete", "-f", file, "--wait=false"]);
    assert.equal(r.code, 0, r.stderr);
  });
});
