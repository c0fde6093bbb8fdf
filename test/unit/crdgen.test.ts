import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { parse } from "yaml";
import * as api from "../../api/v1/index.ts";
import { cronJobCRD, overlayChecks, rootMetadataSchema } from "../../hack/crdgen/crd.ts";
import {
  convertDefinition,
  type Definitions,
  type JSONSchema,
  structuralViolations,
} from "../../hack/crdgen/openapi.ts";
import { readVendoredOpenAPI } from "../../hack/crdgen/vendored-openapi.ts";

const root = resolve(import.meta.dirname, "..", "..");
const defs = (readVendoredOpenAPI() as { definitions: Definitions }).definitions;

type S = JSONSchema & { properties: Record<string, S>; items: S };
const at = (s: JSONSchema, ...path: string[]): S =>
  path.reduce((cur: S, p) => (p === "[]" ? cur.items : cur.properties[p]) as S, s as S);

describe("OpenAPI v2 → structural CRD schema", () => {
  // The conversion with every description (the shipped CRD then drops the Pod template's: crd-discoverability).
  const crd = cronJobCRD({ definitions: defs, templateDescriptions: true }) as any;
  const schema = crd.spec.versions[0].schema.openAPIV3Schema as JSONSchema;
  const podSpec = at(schema, "spec", "jobTemplate", "spec", "template", "spec");

  it("is structural everywhere", () => {
    assert.deepEqual(structuralViolations(schema), []);
    assert.ok(!JSON.stringify(schema).includes("$ref"));
    assert.ok(!JSON.stringify(schema).includes("x-kubernetes-patch"));
  });

  it("carries the full upstream PodSpec with descriptions and list markers", () => {
    assert.ok((podSpec.required as string[]).includes("containers"));
    assert.match(String(at(podSpec, "containers").description), /List of containers belonging to the pod/);
    assert.equal(at(podSpec, "containers")["x-kubernetes-list-type"], "map");
    assert.deepEqual(at(podSpec, "containers")["x-kubernetes-list-map-keys"], ["name"]);
    assert.ok(at(podSpec, "containers", "[]", "securityContext", "capabilities"));
    assert.ok(at(podSpec, "volumes", "[]", "projected", "sources"));
  });

  it("maps IntOrString and Quantity to x-kubernetes-int-or-string", () => {
    const port = at(podSpec, "containers", "[]", "livenessProbe", "httpGet", "port");
    assert.equal(port["x-kubernetes-int-or-string"], true);
    assert.equal(port.type, undefined);
    const limits = at(podSpec, "containers", "[]", "resources", "limits");
    assert.equal((limits.additionalProperties as JSONSchema)["x-kubernetes-int-or-string"], true);
  });

  it("keeps labels and annotations of both embedded ObjectMetas", () => {
    for (const meta of [
      at(schema, "spec", "jobTemplate", "metadata"),
      at(schema, "spec", "jobTemplate", "spec", "template", "metadata"),
    ]) {
      assert.deepEqual(Object.keys(meta.properties).sort(), [
        "annotations",
        "finalizers",
        "labels",
        "name",
        "namespace",
      ]);
      assert.equal(at(meta, "labels").type, "object");
      assert.equal((at(meta, "labels").additionalProperties as JSONSchema).type, "string");
    }
  });

  it("defaults or requires every list-map key (apiserver rule)", () => {
    assert.equal(at(podSpec, "containers", "[]", "ports", "[]", "protocol").default, "TCP");
    assert.deepEqual(at(podSpec, "imagePullSecrets", "[]").required, ["name"]);
  });

  it("takes field metadata from the zod schemas", () => {
    const spec = at(schema, "spec");
    // Not required by the CRD: a CronJob that runs only after others has none (the webhook's check, spec.after).
    assert.ok(!(spec.required as string[]).includes("schedule"));
    assert.ok((spec.required as string[]).includes("jobTemplate"));
    assert.deepEqual(at(spec, "concurrencyPolicy").enum, ["Allow", "Forbid", "Replace"]);
    assert.equal(at(spec, "concurrencyPolicy").default, "Allow");
    assert.deepEqual(
      { ...at(spec, "successfulJobsHistoryLimit"), description: undefined },
      { description: undefined, default: 3, format: "int32", minimum: 0, type: "integer" },
    );
    assert.equal(at(spec, "startingDeadlineSeconds").format, "int64");
    assert.equal(at(schema, "status", "lastScheduleTime").format, "date-time");
    assert.equal(at(schema, "status", "lastScheduleTime").pattern, undefined);
    assert.equal(at(schema, "status", "conditions")["x-kubernetes-list-type"], "map");
    assert.equal(at(schema, "status", "active", "[]")["x-kubernetes-map-type"], "atomic");
    assert.equal(at(schema, "status", "active").maxItems, undefined);
    assert.deepEqual(at(schema, "metadata"), {
      type: "object",
      properties: { name: { maxLength: api.MAX_CRONJOB_NAME_LENGTH, type: "string" } },
    });
  });

  // The checks that hold when admission webhooks are bypassed: they come from the zod schemas.
  it("enforces the name length, restartPolicy and field lengths in the schema itself", () => {
    const spec = at(schema, "spec");
    assert.equal(api.MAX_CRONJOB_NAME_LENGTH, 52);
    assert.equal(at(spec, "schedule").maxLength, api.MAX_SCHEDULE_LENGTH);
    assert.equal(at(spec, "schedule").maxLength, 1024);
    assert.equal(at(spec, "timeZone").maxLength, api.MAX_TIME_ZONE_LENGTH);
    assert.equal(at(spec, "timeZone").maxLength, 255);
    assert.deepEqual(at(podSpec, "restartPolicy").enum, ["OnFailure", "Never"]);
    assert.deepEqual(podSpec.required, ["containers", "restartPolicy"]);
    // restartPolicy is required all the way down: an absent jobTemplate.spec or template.spec cannot skip it.
    assert.deepEqual(at(schema, "spec", "jobTemplate").required, ["spec"]);
    assert.deepEqual(at(schema, "spec", "jobTemplate", "spec").required, ["template"]);
    assert.deepEqual(at(schema, "spec", "jobTemplate", "spec", "template").required, ["spec"]);
    // The rest of the template's zod checks, carried onto the upstream schema.
    assert.equal(at(podSpec, "containers").minItems, 1);
    assert.equal(at(podSpec, "containers", "[]", "name").minLength, 1);
    // Upstream descriptions stay.
    assert.match(String(at(podSpec, "restartPolicy").description), /Restart policy for all containers/);
  });

  it("carries metav1.Condition's checks into status.conditions (what controller-gen emits for it)", () => {
    const c = at(schema, "status", "conditions", "[]");
    assert.deepEqual(at(c, "status").enum, ["True", "False", "Unknown"]);
    assert.equal(at(c, "reason").maxLength, 1024);
    assert.equal(at(c, "message").maxLength, 32768);
    assert.equal(at(c, "type").maxLength, 316);
    assert.equal(at(c, "observedGeneration").minimum, 0);
    assert.equal(at(c, "lastTransitionTime").pattern, undefined, "no zod date-time regex");
  });

  it("overlays zod checks onto an upstream schema, refusing what upstream does not have", () => {
    const upstream = (): JSONSchema => ({
      type: "object",
      properties: {
        policy: { type: "string", description: "kept" },
        list: { type: "array", items: { type: "object", properties: { n: { type: "string" } } } },
        choice: { type: "string", enum: ["A", "B"] },
      },
      required: ["list"],
    });
    const t = upstream();
    overlayChecks(
      t,
      {
        type: "object",
        properties: {
          policy: { type: "string", enum: ["X"], maxLength: 5 },
          list: {
            type: "array",
            minItems: 1,
            items: { type: "object", properties: { n: { type: "string", minLength: 1 } } },
          },
          choice: { type: "string", enum: ["A"] },
        },
        required: ["policy"],
        additionalProperties: {},
      },
      "T",
    );
    assert.deepEqual(t, {
      type: "object",
      properties: {
        policy: { type: "string", description: "kept", enum: ["X"], maxLength: 5 },
        list: {
          type: "array",
          minItems: 1,
          items: { type: "object", properties: { n: { type: "string", minLength: 1 } } },
        },
        choice: { type: "string", enum: ["A"] },
      },
      required: ["list", "policy"],
    });
    assert.throws(
      () => overlayChecks(upstream(), { properties: { typo: { type: "string", maxLength: 1 } } }, "T"),
      /T\.typo: the zod schema describes a field the upstream schema does not have/,
    );
    assert.throws(
      () => overlayChecks(upstream(), { properties: { policy: { type: "integer" } } }, "T"),
      /T\.policy: the zod schema says integer, the upstream schema string/,
    );
    assert.throws(
      () => overlayChecks(upstream(), { properties: { choice: { type: "string", enum: ["C"] } } }, "T"),
      /T\.choice: enum values \["C"\] are not allowed upstream/,
    );
    assert.throws(() => overlayChecks(upstream(), { required: ["nope"] }, "T"), /required field nope/);
  });

  it("puts only name and generateName checks into the root metadata (all a CRD may say there)", () => {
    assert.deepEqual(rootMetadataSchema(undefined), { type: "object" });
    assert.deepEqual(
      rootMetadataSchema({
        type: "object",
        properties: {
          name: { type: "string", maxLength: 10, description: "dropped" },
          generateName: { type: "string" },
          labels: { type: "object", maxProperties: 3 },
        },
      }),
      { type: "object", properties: { name: { maxLength: 10, type: "string" } } },
    );
  });

  it("gives every CronJob field a description", () => {
    const missing: string[] = [];
    const walk = (s: S, path: string) => {
      if (path.startsWith(".spec.jobTemplate.") || path === ".metadata") return;
      if (path && !s.description) missing.push(path);
      for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, `${path}.${k}`);
    };
    walk(schema as S, "");
    assert.deepEqual(missing, []);
  });

  it("has a status subresource, is namespaced and has the printer columns", () => {
    const v = crd.spec.versions[0];
    assert.deepEqual(v.subresources, { status: {} });
    assert.equal(crd.spec.scope, "Namespaced");
    assert.deepEqual(
      v.additionalPrinterColumns.map((c: { name: string }) => c.name),
      ["Schedule", "Resolved", "TimeZone", "Suspend", "Active", "Last Schedule", "Next Schedule", "Age"],
    );
    // The resolved schedule is for -o wide: without H it repeats the Schedule column.
    assert.equal(v.additionalPrinterColumns[1].priority, 1);
  });

  it("fails clearly on a missing or recursive definition", () => {
    assert.throws(() => convertDefinition({ a: { $ref: "#/definitions/b" } }, "a"), /"b" not found/);
    assert.throws(
      () => convertDefinition({ a: { type: "object", properties: { x: { $ref: "#/definitions/a" } } } }, "a"),
      /recursive OpenAPI definition a -> a/,
    );
  });
});

describe("make manifests", () => {
  it("is deterministic and the committed CRD is up to date", () => {
    const node = process.execPath;
    const r = spawnSync(node, [join(root, "hack", "generate-manifests.ts"), "--check"], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    const committed = parse(
      readFileSync(join(root, "config/crd/bases/batch.tutorial.kubebuilder.io_cronjobs.yaml"), "utf8"),
    );
    assert.equal(committed.metadata.name, "cronjobs.batch.tutorial.kubebuilder.io");
  });

  it("reports a missing definitions file with a hint", () => {
    const r = spawnSync(
      process.execPath,
      [join(root, "hack", "generate-manifests.ts"), "--check", "--openapi", "/nonexistent.json"],
      {
        encoding: "utf8",
      },
    );
    assert.equal(r.status, 1);
    assert.match(r.stderr, /not found at \/nonexistent\.json.*--from-cluster/);
  });
});
