// The spec's defaults are written once (CRONJOB_SPEC_DEFAULTS): the schema's .default()s, the CRD's
// `default:`s generated from them, and the defaulting webhook's patch must all say the same.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as api from "../../api/v1/index.ts";
import { CRONJOB_SPEC_DEFAULTS, parseCronJob, WEBHOOK_ONLY_DEFAULTS } from "../../api/v1/index.ts";
import { cronJobCRD } from "../../hack/crdgen/crd.ts";
import type { Definitions, JSONSchema } from "../../hack/crdgen/openapi.ts";
import { readVendoredOpenAPI } from "../../hack/crdgen/vendored-openapi.ts";
import { defaultCronJob } from "../../webhooks/cronjob_webhook.ts";
import { minimalCronJob } from "../fixtures.ts";

const table = Object.entries(CRONJOB_SPEC_DEFAULTS);
const schemaDefaulted = table.filter(([k]) => !WEBHOOK_ONLY_DEFAULTS.has(k as keyof typeof CRONJOB_SPEC_DEFAULTS));

describe("spec defaults: schema, CRD and defaulting webhook", () => {
  it("the webhook's patch for a spec without them is the table, in its order", () => {
    assert.deepEqual(
      defaultCronJob(minimalCronJob("d")),
      table.map(([field, value]) => ({ op: "add", path: `/spec/${field}`, value })),
    );
  });

  it("the schema fills the same values, except the fields only the webhook defaults", () => {
    const r = parseCronJob(minimalCronJob("d"));
    assert.ok(r.ok);
    const spec = r.value.spec as Record<string, unknown>;
    for (const [field, value] of schemaDefaulted) assert.equal(spec[field], value, field);
    assert.deepEqual([...WEBHOOK_ONLY_DEFAULTS], ["suspend"]);
    for (const field of WEBHOOK_ONLY_DEFAULTS) assert.equal(spec[field], undefined, field);
  });

  it("the CRD's defaults are exactly the schema-defaulted fields of the table", () => {
    const defs = (readVendoredOpenAPI() as { definitions: Definitions }).definitions;
    const crd = cronJobCRD({ definitions: defs }) as {
      spec: { versions: Array<{ schema: { openAPIV3Schema: JSONSchema } }> };
    };
    const root = crd.spec.versions[0]!.schema.openAPIV3Schema as { properties: Record<string, JSONSchema> };
    const spec = root.properties.spec as { properties: Record<string, JSONSchema> };
    const crdDefaults = Object.entries(spec.properties)
      .filter(([, s]) => "default" in s)
      .map(([k, s]) => [k, s.default]);
    assert.deepEqual(Object.fromEntries(crdDefaults), Object.fromEntries(schemaDefaulted));
    assert.ok(Object.keys(api.CronJobSpecSchema.shape).every((k) => k in spec.properties));
  });

  it("a patched object parses to what the unpatched one parses to, plus the webhook-only fields", () => {
    const cj = minimalCronJob("d");
    const patched = structuredClone(cj) as { spec: Record<string, unknown> };
    for (const op of defaultCronJob(cj)) patched.spec[op.path.slice("/spec/".length)] = op.value;
    const a = parseCronJob(cj);
    const b = parseCronJob(patched);
    assert.ok(a.ok && b.ok);
    assert.deepEqual(b.value, { ...a.value, spec: { ...a.value.spec, suspend: CRONJOB_SPEC_DEFAULTS.suspend } });
  });
});
