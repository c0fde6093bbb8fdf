// Finding the kind with kubectl: short names and categories that do not clash with the built-in CronJob, and
// a description on every field so `kubectl explain` says something useful wherever a user looks.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as api from "../../api/v1/index.ts";
import {
  CRD_ROOM,
  CRD_SERVER_ADDS,
  CRD_STORED_LIMIT,
  cronJobCRD,
  MAX_DESCRIPTION_LENGTH,
  SIMPLE_KINDS,
  simpleKindCRD,
  UNDOCUMENTED_TEMPLATE,
} from "../../hack/crdgen/crd.ts";
import type { Definitions, JSONSchema } from "../../hack/crdgen/openapi.ts";
import { readVendoredOpenAPI } from "../../hack/crdgen/vendored-openapi.ts";

const defs = (readVendoredOpenAPI() as { definitions: Definitions }).definitions;
// kubectl's built-in short names and verbs a user could confuse ours with.
const BUILTIN_SHORT_NAMES = [
  "cj",
  "cm",
  "cs",
  "csr",
  "ds",
  "ep",
  "ev",
  "hpa",
  "ing",
  "job",
  "jobs",
  "netpol",
  "no",
  "ns",
  "pdb",
  "po",
  "pv",
  "pvc",
  "rc",
  "rs",
  "sa",
  "sc",
  "sts",
  "svc",
];

describe("the CRD for kubectl", () => {
  const crd = cronJobCRD({ definitions: defs }) as {
    spec: { names: Record<string, unknown>; versions: Array<{ schema: { openAPIV3Schema: JSONSchema } }> };
  };

  it("has short names and categories, none of them the built-in's", () => {
    assert.deepEqual(crd.spec.names.shortNames, [...api.SHORT_NAMES]);
    assert.deepEqual(crd.spec.names.categories, ["all"]);
    for (const s of api.SHORT_NAMES) assert.ok(!BUILTIN_SHORT_NAMES.includes(s), s);
  });

  it("describes every field kubectl explain can show, but for the Pod template's (kubectl explain pod.spec)", () => {
    const missing: string[] = [];
    const template = `.${UNDOCUMENTED_TEMPLATE.join(".")}`;
    const walk = (node: JSONSchema, path: string) => {
      // Root metadata may say nothing but name checks (the apiserver's rule); kubectl explains it as ObjectMeta.
      if (path === ".metadata") return;
      if (path === template) {
        assert.match(String(node.description), /Describes the pod .* see `kubectl explain pod\.spec`/);
        assert.doesNotMatch(JSON.stringify(node.properties), /"description"/, "no description below the template");
        return;
      }
      if (path && !node.description) missing.push(path);
      for (const [k, v] of Object.entries((node.properties ?? {}) as Record<string, JSONSchema>))
        walk(v, `${path}.${k}`);
      const items = node.items as JSONSchema | undefined;
      // List items are explained by their list's description; their fields still need their own.
      if (items?.properties)
        for (const [k, v] of Object.entries(items.properties as Record<string, JSONSchema>)) walk(v, `${path}[].${k}`);
    };
    walk(crd.spec.versions[0]!.schema.openAPIV3Schema, "");
    assert.deepEqual(missing, []);
  });

  it("keeps the Pod template's descriptions only when asked: they would more than double the CRD", () => {
    const full = cronJobCRD({ definitions: defs, templateDescriptions: true });
    assert.ok(JSON.stringify(full).length > JSON.stringify(crd).length * 2);
  });

  // The budget: the CRD as shipped (config/crd/bases, dist/install.yaml: descriptions cut to
  // MAX_DESCRIPTION_LENGTH, the Pod template's left out), its JSON without what the server adds. Installed
  // server-side, as the README says, it is held to what etcd takes in one request, CRD_STORED_LIMIT
  // (1,572,864 bytes), less what the server adds to it (CRD_SERVER_ADDS: managedFields, status, the
  // injected caBundle) and less CRD_ROOM kept free (hack/crdgen/crd.ts says why each). Not to a client-side
  // apply's 262,144 bytes of annotations: that install is no longer the promised one.
  // test/integration/install-file.test.ts measures the CRD the README's install stores against the same limit.
  it("fits what etcd stores in one request, with room to spare", (t) => {
    const shipped = JSON.stringify(cronJobCRD({ definitions: defs, maxDescriptionLength: MAX_DESCRIPTION_LENGTH }));
    const budget = CRD_STORED_LIMIT - CRD_SERVER_ADDS - CRD_ROOM;
    const figure =
      `${shipped.length} bytes of JSON; budget ${budget} (${CRD_STORED_LIMIT} less ${CRD_SERVER_ADDS} the server ` +
      `adds and ${CRD_ROOM} kept free): ${budget - shipped.length} bytes of room`;
    t.diagnostic(figure);
    assert.ok(shipped.length <= budget, figure);
  });
});

describe("the other kinds' CRDs for kubectl (ConcurrencyGroup, ExclusionCalendar)", () => {
  it("have short names of their own, none the built-in's or another kind's", () => {
    const seen = new Set<string>(api.SHORT_NAMES);
    for (const k of SIMPLE_KINDS) {
      const crd = simpleKindCRD(k, { definitions: defs }) as { spec: { names: { shortNames: string[] } } };
      assert.deepEqual(crd.spec.names.shortNames, [...k.shortNames], k.kind);
      for (const s of k.shortNames) {
        assert.ok(!BUILTIN_SHORT_NAMES.includes(s), `${k.kind}: ${s}`);
        assert.ok(!seen.has(s), `${k.kind}: ${s} is taken`);
        seen.add(s);
      }
    }
    assert.deepEqual(
      SIMPLE_KINDS.map((k) => k.kind),
      [api.GROUP_KIND, api.CALENDAR_KIND],
    );
  });

  // apiVersion and kind apart: these kinds' zod schemas give them no description (the CronJob's do).
  it("describe every field kubectl explain can show, but apiVersion and kind", () => {
    for (const k of SIMPLE_KINDS) {
      const crd = simpleKindCRD(k, { definitions: defs }) as {
        spec: { versions: Array<{ schema: { openAPIV3Schema: JSONSchema } }> };
      };
      const missing: string[] = [];
      const walk = (node: JSONSchema, path: string) => {
        if (path === ".metadata" || path === ".apiVersion" || path === ".kind") return;
        if (path && !node.description) missing.push(path);
        for (const [f, v] of Object.entries((node.properties ?? {}) as Record<string, JSONSchema>))
          walk(v, `${path}.${f}`);
        const items = node.items as JSONSchema | undefined;
        if (items?.properties)
          for (const [f, v] of Object.entries(items.properties as Record<string, JSONSchema>))
            walk(v, `${path}[].${f}`);
      };
      walk(crd.spec.versions[0]!.schema.openAPIV3Schema, "");
      assert.deepEqual(missing, [], k.kind);
    }
  });
});
