// The one-file install as the README gives it: `kubectl apply --server-side -f dist/install.yaml`. Server-side
// apply keeps no copy of the object in kubectl's last-applied-configuration annotation (which client-side
// apply does, and a CRD's annotations may hold 262,144 bytes in all), so what binds the CRD's size is the
// object the API server stores: one etcd request, at most 1,572,864 bytes (etcd's default --max-request-bytes;
// hack/crdgen/crd.ts, CRD_STORED_LIMIT). Here: the install and a second apply that changes nothing, the CronJob
// CRD's stored size and the room left, that limit shown to be the one etcd enforces, `kubectl explain` of the
// project's fields, and a cluster installed client-side (the README's install before) upgraded server-side.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { parseAllDocuments, stringify } from "yaml";
import { GROUP, PLURAL, RESOURCE } from "../../api/v1/index.ts";
import { VERSION as V2 } from "../../api/v2/index.ts";
import { PROJECT_ROOT, TestEnv } from "../../envtest/index.ts";
import { CRD_ROOM, CRD_STORED_LIMIT, cronJobCRD, MAX_DESCRIPTION_LENGTH } from "../../hack/crdgen/crd.ts";
import { definitionsOf } from "../../hack/crdgen/openapi.ts";
import { readVendoredOpenAPI, VENDORED_OPENAPI } from "../../hack/crdgen/vendored-openapi.ts";
import { serverVersion } from "../versions.ts";

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";
/** What a CRD's annotations may hold in all, kubectl's last-applied copy among them. */
const ANNOTATIONS_LIMIT = 262_144;
const CLIENT_SIDE_MANAGER = "kubectl-client-side-apply";

type Obj = Record<string, any>;

/** An object as the API server returns it; the rest of its fields are compared whole. */
interface Held {
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    generation?: number;
    resourceVersion?: string;
    managedFields?: Array<{ manager: string; operation: string }>;
    annotations?: Record<string, string>;
  };
  status?: unknown;
}

/**
 * dist/install.yaml as this control plane takes it: before 1.21 PodDisruptionBudget is served as policy/v1beta1
 * only (the Makefile's deploy does the same); the file is used as it is wherever policy/v1 is served.
 */
async function installText(env: TestEnv): Promise<string> {
  const text = readFileSync(join(PROJECT_ROOT, "dist", "install.yaml"), "utf8");
  const served = (await env.kubectl(["api-versions"])).stdout.split("\n");
  return served.includes("policy/v1") ? text : text.replace(/^apiVersion: policy\/v1$/gm, "apiVersion: policy/v1beta1");
}

/** The objects of a multi-document YAML file. */
function objectsOf(text: string): Obj[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => !!o?.kind);
}

const yamlOf = (objects: Obj[]) => objects.map((o) => stringify(o)).join("---\n");

/** The CRD of `objects` that defines CronJobs. */
const cronJobCRDOf = (objects: Obj[]) =>
  objects.find((o) => o.kind === "CustomResourceDefinition" && o.metadata.name === RESOURCE)!;

/** The manager's container of the Deployment of `objects`. */
function managerContainer(objects: Obj[]): Obj {
  const d = objects.find((o) => o.kind === "Deployment")!;
  return (d.spec.template.spec.containers as Obj[]).find((c) => c.name === "manager")!;
}

/**
 * The CronJob CRD's versions with the Pod template's field descriptions, which the generator leaves out
 * (hack/crdgen/crd.ts, UNDOCUMENTED_TEMPLATE): 3 times its size, more than a client-side apply could hold.
 */
function withTemplateDescriptions(crd: Obj): void {
  const full = cronJobCRD({
    definitions: definitionsOf(readVendoredOpenAPI(), VENDORED_OPENAPI),
    maxDescriptionLength: MAX_DESCRIPTION_LENGTH,
    templateDescriptions: true,
  }) as Obj;
  for (const v of crd.spec.versions as Obj[])
    v.schema = (full.spec.versions as Obj[]).find((f) => f.name === v.name)!.schema;
  assert.ok(JSON.stringify(crd).length > ANNOTATIONS_LIMIT, "the CRD is beyond a client-side apply");
}

/** The Pod template's schema in a CRD version, where the generator leaves the descriptions out. */
const templateSchema = (crd: Obj, version = 0): Obj =>
  crd.spec.versions[version].schema.openAPIV3Schema.properties.spec.properties.jobTemplate.properties.spec.properties
    .template;

/**
 * Every object of `file` as the server holds it, by kind, namespace and name, in what a user would call a
 * change: the object whole (its spec, rules or data, labels, annotations, finalizers, owners, and its
 * generation, which moves with every change of its spec) but for what the server or controllers write on
 * their own. Left out: metadata.resourceVersion and metadata.managedFields, the server's record of writes
 * (a controller's status write moves the resourceVersion and adds a manager), and status, which apply never
 * writes. `count` objects must be there, one for each document of the file.
 */
async function held(env: TestEnv, file: string, count: number): Promise<Map<string, Held>> {
  const r = await env.kubectl(["get", "-f", file, "-o", "json"]);
  assert.equal(r.code, 0, r.stderr);
  const items = (JSON.parse(r.stdout) as { items: Held[] }).items;
  assert.equal(items.length, count, r.stdout.slice(0, 2000));
  return new Map(
    items.map((o) => {
      const { resourceVersion: _rv, managedFields: _mf, ...metadata } = o.metadata;
      const { status: _status, ...rest } = o;
      const key = `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata.name}`;
      return [key, { ...rest, metadata }];
    }),
  );
}

/** A second `kubectl apply --server-side -f file` changes nothing the server holds. */
async function secondApplyChangesNothing(env: TestEnv, file: string, count: number): Promise<void> {
  // Judged by what the server holds (held()), not by kubectl's wording. One line per object.
  const before = await held(env, file, count);
  const second = await env.kubectl(["apply", "--server-side", "-f", file]);
  assert.equal(second.code, 0, second.stderr);
  assert.equal(second.stdout.trim().split("\n").length, count, second.stdout);
  const after = await held(env, file, count);
  assert.deepEqual([...after.keys()], [...before.keys()], "the same objects");
  for (const [key, was] of before) {
    const now = after.get(key)!;
    assert.equal(now.metadata.generation, was.metadata.generation, `${key}: its generation moved`);
    assert.deepEqual(now, was, `${key} changed:\n${second.stdout}`);
  }
}

/** Every object of `file` with its managers (the server's managedFields), by kind and name. */
async function managers(env: TestEnv, file: string): Promise<Map<string, string[]>> {
  const r = await env.kubectl(["get", "-f", file, "-o", "json", "--show-managed-fields"]);
  assert.equal(r.code, 0, r.stderr);
  return new Map(
    (JSON.parse(r.stdout) as { items: Held[] }).items.map((o) => [
      `${o.kind} ${o.metadata.name}`,
      (o.metadata.managedFields ?? []).map((m) => m.manager),
    ]),
  );
}

/**
 * A CRD as the server holds it, managedFields included, and its size as etcd stores it: compact JSON (kubectl
 * prints it indented, 7 times the bytes for the CronJob CRD's deep schema).
 */
async function storedCRD(env: TestEnv, name = RESOURCE): Promise<{ crd: Obj; bytes: number }> {
  const r = await env.kubectl(["get", "crd", name, "-o", "json", "--show-managed-fields"]);
  assert.equal(r.code, 0, r.stderr);
  const crd = JSON.parse(r.stdout) as Obj;
  return { crd, bytes: Buffer.byteLength(JSON.stringify(crd)) };
}

describe("dist/install.yaml with kubectl apply --server-side (the README's install)", () => {
  let env: TestEnv;
  let file: string;
  let count: number;

  before(async () => {
    env = await TestEnv.start({ crdDirectoryPaths: [] });
    const text = await installText(env);
    count = objectsOf(text).length;
    file = join(env.dir, "install.yaml");
    writeFileSync(file, text);
  });
  after(async () => {
    await env?.stop();
  });

  it("installs every object, and a second apply changes nothing", async () => {
    const first = await env.kubectl(["apply", "--server-side", "-f", file]);
    assert.equal(first.code, 0, first.stderr);
    const applied = first.stdout.split("\n").filter((l) => / serverside-applied$/.test(l));
    assert.equal(applied.length, count, first.stdout);
    await env.waitEstablished(RESOURCE);
    for (const [key, o] of await held(env, file, count))
      assert.equal(o.metadata.annotations?.[LAST_APPLIED], undefined, `${key}: a last-applied copy`);
    await secondApplyChangesNothing(env, file, count);
  });

  it(`stores the CronJob CRD with more than ${CRD_ROOM} bytes to spare below etcd's ${CRD_STORED_LIMIT}`, async (t) => {
    const { crd, bytes } = await storedCRD(env);
    const managed = Buffer.byteLength(JSON.stringify(crd.metadata.managedFields));
    assert.ok(managed > 0, "managedFields are there");
    const room = CRD_STORED_LIMIT - bytes;
    const figure =
      `the CronJob CRD is stored as ${bytes} bytes of JSON (managedFields ${managed} of them); ` +
      `etcd takes at most ${CRD_STORED_LIMIT} a request: ${room} bytes of room`;
    t.diagnostic(figure);
    assert.ok(bytes + CRD_ROOM < CRD_STORED_LIMIT, `${figure}, less than the ${CRD_ROOM} kept free`);
  });

  it("is held to etcd's request limit, not the annotations': a CRD stored near it is kept, one past it refused", async () => {
    // Two CRDs of a group of their own, their size in one long description. At CRD_STORED_LIMIT less
    // CRD_ROOM (what the server adds, managedFields and status, fits in the rest) the CRD is stored and
    // Established; at CRD_STORED_LIMIT, etcd refuses the write.
    const padded = (plural: string, size: number) => {
      const crd = {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: `${plural}.size.example.com` },
        spec: {
          group: "size.example.com",
          names: { kind: plural[0]!.toUpperCase() + plural.slice(1, -1), plural },
          scope: "Namespaced",
          versions: [
            {
              name: "v1",
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: "object", description: "" } },
            },
          ],
        },
      };
      crd.spec.versions[0]!.schema.openAPIV3Schema.description = "x".repeat(size - JSON.stringify(crd).length);
      assert.equal(JSON.stringify(crd).length, size);
      return JSON.stringify(crd);
    };
    const near = await env.kubectl(["apply", "--server-side", "-f", "-"], padded("nears", CRD_STORED_LIMIT - CRD_ROOM));
    assert.equal(near.code, 0, near.stderr);
    await env.waitEstablished("nears.size.example.com");
    const { bytes } = await storedCRD(env, "nears.size.example.com");
    assert.ok(bytes > CRD_STORED_LIMIT - CRD_ROOM && bytes < CRD_STORED_LIMIT, `stored as ${bytes} bytes`);
    const past = await env.kubectl(["apply", "--server-side", "-f", "-"], padded("pasts", CRD_STORED_LIMIT));
    assert.notEqual(past.code, 0, past.stdout);
    assert.match(past.stderr, /etcdserver: request is too large/);
    const gone = await env.kubectl(["delete", "crd", "nears.size.example.com", "--wait=false"]);
    assert.equal(gone.code, 0, gone.stderr);
  });

  it("`kubectl explain` prints the project's fields' descriptions, v1's and v2's", async () => {
    // The apiserver publishes a new CRD's OpenAPI a few seconds after it is Established.
    const explain = async (field: string, version: string) => {
      for (let i = 0; ; i++) {
        const r = await env.kubectl(["explain", `${PLURAL}.${field}`, `--api-version=${GROUP}/${version}`]);
        if (r.code === 0 || i >= 60) return r;
        await new Promise((res) => setTimeout(res, 500));
      }
    };
    const v1 = await explain("spec.concurrencyPolicy", "v1");
    assert.equal(v1.code, 0, v1.stderr);
    assert.match(v1.stdout, /Specifies how to treat concurrent executions of a Job/);
    const v2 = await explain("spec.schedules.timeZone", V2);
    assert.equal(v2.code, 0, v2.stderr);
    assert.match(v2.stdout, /IANA/);
  });

  it("client-side apply, no longer the way to install, refuses a CRD past 262,144 bytes: server-side apply stores it", async () => {
    // The CronJob CRD with the Pod template's descriptions (3 times its size): kubectl's last-applied copy of
    // it does not fit the annotations. It is why the README's install is server-side; the CRD as shipped still
    // fits a client-side apply today (docs/operating.md), but no test holds it to that.
    const crd = cronJobCRDOf(objectsOf(readFileSync(file, "utf8")));
    withTemplateDescriptions(crd);
    const big = join(env.dir, "crd-with-template-descriptions.yaml");
    writeFileSync(big, stringify(crd));
    const client = await env.kubectl(["apply", "-f", big]);
    assert.notEqual(client.code, 0, client.stdout);
    // 1.20: "Too long: must have at most 262144 bytes"; later releases: "Too long: may not be more than 262144 bytes".
    assert.match(client.stderr, /metadata\.annotations: Too long: .*262144 bytes/);
    const server = await env.kubectl(["apply", "--server-side", "-f", big]);
    assert.equal(server.code, 0, server.stderr);
    const { crd: stored, bytes } = await storedCRD(env);
    assert.ok(bytes > ANNOTATIONS_LIMIT, `stored as ${bytes} bytes`);
    assert.match(JSON.stringify(templateSchema(stored)), /"description"/, "the Pod template's descriptions");
    assert.equal(stored.metadata.annotations?.[LAST_APPLIED], undefined);
  });

  it("is removed by kubectl delete -f", async () => {
    const r = await env.kubectl(["delete", "-f", file, "--wait=false"]);
    assert.equal(r.code, 0, r.stderr);
  });
});

// A cluster installed the way the README said before: `kubectl apply -f dist/install.yaml`, client-side. The
// next release is applied as the README says now, `kubectl apply --server-side -f`, with no --force-conflicts:
// kubectl (1.26 and later) moves the fields its client-side apply owned to its server-side manager, and the
// server lets an apply take over a field the last-applied copy still holds as it is. The next release here has
// a new manager image and a changed CronJob CRD: a sentence more in a description and, from Kubernetes 1.22,
// the Pod template's descriptions too (3 times the CRD's size, more than a client-side apply could hold), as
// the server then drops a last-applied copy it can no longer keep (kubernetes#102105, cherry-picked to later
// 1.20 and 1.21 patches; 1.20.2, the suites' default, refuses the write, so there the CRD stays within it).
describe("an install made with kubectl apply -f (client-side), upgraded with kubectl apply --server-side -f", () => {
  const NEXT_IMAGE = "registry.example.com/cronjob-operator:v99.0.0";
  const NEXT_SENTENCE = " Changed by the next release.";
  const previous: Array<[string, (objects: Obj[]) => void]> = [
    ["this release's file", () => {}],
    [
      // fieldRef is atomic to server-side apply, and the server stores it with apiVersion v1: with the file's
      // fieldRef lacking it, the last-applied copy differs from what is stored, and only a file that says
      // apiVersion v1 (config/manager/manager.yaml) takes the field over without a conflict.
      "the file as releases before this one wrote it (POD_NAMESPACE's fieldRef without apiVersion)",
      (objects) => {
        const env = (managerContainer(objects).env as Obj[]).find((e) => e.name === "POD_NAMESPACE")!;
        assert.equal(env.valueFrom.fieldRef.apiVersion, "v1", "this release's file says apiVersion v1");
        delete env.valueFrom.fieldRef.apiVersion;
      },
    ],
  ];
  /** spec.concurrencyPolicy's schema in a CRD version. */
  const concurrencyPolicy = (crd: Obj, version: number): Obj =>
    crd.spec.versions[version].schema.openAPIV3Schema.properties.spec.properties.concurrencyPolicy;

  for (const [title, edit] of previous) {
    it(`from ${title}: the new image and CRD, nothing to force, a second apply changes nothing`, async () => {
      const env = await TestEnv.start({ crdDirectoryPaths: [] });
      try {
        const version = await serverVersion(env.kubeConfig);
        const dropsCopy = version.major > 1 || version.minor >= 22;
        const text = await installText(env);
        const old = objectsOf(text);
        edit(old);
        const oldFile = join(env.dir, "previous.yaml");
        writeFileSync(oldFile, yamlOf(old));
        const installed = await env.kubectl(["apply", "-f", oldFile]);
        assert.equal(installed.code, 0, installed.stderr);
        await env.waitEstablished(RESOURCE);

        const next = objectsOf(text);
        managerContainer(next).image = NEXT_IMAGE;
        const nextCRD = cronJobCRDOf(next);
        if (dropsCopy) withTemplateDescriptions(nextCRD);
        nextCRD.spec.versions.forEach(
          (_: unknown, i: number) => (concurrencyPolicy(nextCRD, i).description += NEXT_SENTENCE),
        );
        const nextFile = join(env.dir, "next.yaml");
        writeFileSync(nextFile, yamlOf(next));
        const upgraded = await env.kubectl(["apply", "--server-side", "-f", nextFile]);
        assert.equal(upgraded.code, 0, upgraded.stderr);
        assert.doesNotMatch(upgraded.stderr, /conflict/i);
        assert.equal(upgraded.stdout.trim().split("\n").length, next.length, upgraded.stdout);

        const deployment = [...(await held(env, nextFile, next.length)).values()].find((o) => o.kind === "Deployment");
        assert.equal(managerContainer([deployment as Obj]).image, NEXT_IMAGE);
        const { crd, bytes } = await storedCRD(env);
        assert.ok(String(concurrencyPolicy(crd, 0).description).endsWith(NEXT_SENTENCE), "the new description");
        if (dropsCopy) {
          assert.match(JSON.stringify(templateSchema(crd)), /"description"/, "the Pod template's descriptions");
          assert.equal(crd.metadata.annotations?.[LAST_APPLIED], undefined, `a CRD of ${bytes} bytes keeps no copy`);
        }
        // No field is left to the client-side manager: the next apply, server-side, owns them all.
        for (const [key, names] of await managers(env, nextFile))
          assert.ok(!names.includes(CLIENT_SIDE_MANAGER), `${key}: managed by ${names.join(", ")}`);

        await secondApplyChangesNothing(env, nextFile, next.length);
      } finally {
        await env.stop();
      }
    });
  }
});
