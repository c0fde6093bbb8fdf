// Builds the CustomResourceDefinition for the CronJob API from its zod schemas (the controller-gen
// equivalent). zod's own JSON Schema export does the walk; the override hook makes it structural
// OpenAPI v3 and substitutes the upstream schemas named by the `k8sOpenAPI` metadata.
import { z } from "zod";
import * as api from "../../api/v1/index.ts";
import {
  convertDefinition,
  type ConvertOptions,
  type Definitions,
  type JSONSchema,
  sortKeys,
  structuralViolations,
} from "./openapi.ts";

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

export interface CrdOptions extends ConvertOptions {
  /** OpenAPI v2 definitions that hold the upstream types named by `k8sOpenAPI` metadata. */
  definitions: Definitions;
}

/** The OpenAPI v3 schema of a zod schema, structural and with upstream types inlined. */
export function openAPIV3Schema(schema: z.ZodType, opts: CrdOptions): JSONSchema {
  const raw = z.toJSONSchema(schema, {
    io: "input", // defaulted fields are optional on input; the apiserver applies the defaults
    target: "openapi-3.0",
    reused: "inline",
    unrepresentable: "throw",
    override(ctx) {
      const js = ctx.jsonSchema as JSONSchema;
      const upstream = js[api.K8S_OPENAPI];
      if (typeof upstream === "string") {
        const description = js.description;
        const converted = convertDefinition(opts.definitions, upstream, opts);
        for (const k of Object.keys(js)) delete js[k];
        Object.assign(js, converted);
        if (typeof description === "string" && opts.descriptions !== false) js.description = description;
        return;
      }
      // zod bounds plain integers by the JS safe range; Kubernetes bounds them by their format.
      if (js.maximum === MAX_SAFE) delete js.maximum;
      if (js.minimum === -MAX_SAFE) delete js.minimum;
      if (js.type === "integer" && js.format === "int32") {
        if (js.maximum === 2 ** 31 - 1) delete js.maximum;
        if (js.minimum === -(2 ** 31)) delete js.minimum;
      }
      // The format says it all; zod's RFC 3339 regex is not something kubectl explain should print.
      if (js.format === "date-time") delete js.pattern;
      if (js.additionalProperties === false) delete js.additionalProperties;
      // A string record is a map; a loose object keeps what it does not describe.
      if (js.type === "object" && js.properties && typeof js.additionalProperties === "object") {
        delete js.additionalProperties;
        js["x-kubernetes-preserve-unknown-fields"] = true;
      }
      if (opts.descriptions === false) delete js.description;
    },
  }) as JSONSchema;
  delete raw.$schema;
  return normalise(raw);
}

/** Sort keys recursively so the output is byte-for-byte stable. */
function normalise(s: unknown): JSONSchema {
  if (Array.isArray(s)) return s.map(normalise) as unknown as JSONSchema;
  if (s === null || typeof s !== "object") return s as JSONSchema;
  const out: JSONSchema = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === "properties") {
      const props: Record<string, unknown> = {};
      for (const pk of Object.keys(v as object).sort()) props[pk] = normalise((v as Record<string, unknown>)[pk]);
      out[k] = props;
    } else if (k === "enum" || k === "required" || k === "x-kubernetes-list-map-keys" || k === "default") {
      out[k] = v;
    } else {
      out[k] = normalise(v);
    }
  }
  return sortKeys(out);
}

/** The CronJob CRD (apiextensions.k8s.io/v1). */
export function cronJobCRD(opts: CrdOptions): Record<string, unknown> {
  const schema = openAPIV3Schema(api.CronJobSchema, opts);
  // The apiserver owns metadata's schema; a CRD may only say it is an object.
  (schema.properties as Record<string, JSONSchema>).metadata = { type: "object" };
  const violations = structuralViolations(schema);
  if (violations.length > 0) throw new Error(`generated schema is not structural:\n  ${violations.join("\n  ")}`);
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: {
      annotations: { "cronjob-operator.tutorial.kubebuilder.io/generated-by": "hack/generate-manifests.ts" },
      name: api.RESOURCE,
    },
    spec: {
      group: api.GROUP,
      names: { kind: api.KIND, listKind: api.LIST_KIND, plural: api.PLURAL, singular: api.SINGULAR },
      scope: "Namespaced",
      versions: [
        {
          additionalPrinterColumns: api.printerColumns.map((c) => ({ ...c })),
          name: api.VERSION,
          schema: { openAPIV3Schema: schema },
          served: true,
          storage: true,
          subresources: { status: {} },
        },
      ],
    },
  };
}
