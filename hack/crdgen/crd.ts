// Builds the CustomResourceDefinition for the CronJob API from its zod schemas (the controller-gen
// equivalent). zod's own JSON Schema export does the walk; the override hook makes it structural
// OpenAPI v3 and substitutes the upstream schemas named by the `k8sOpenAPI` metadata, tightened by the
// checks the zod schema adds to them (e.g. the Job template's restartPolicy enum).
import { z } from "zod";
import * as api from "../../api/v1/index.ts";
import * as v2 from "../../api/v2/index.ts";
import {
  convertDefinition,
  type ConvertOptions,
  type Definitions,
  type JSONSchema,
  sortKeys,
  structuralViolations,
} from "./openapi.ts";

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/**
 * Long upstream descriptions are cut at a sentence boundary so the CRD stays small (CRD_STORED_LIMIT);
 * `kubectl explain` on the core types gives the full text. 500 (was 600) took 2.8 KB off the CronJob CRD.
 */
export const MAX_DESCRIPTION_LENGTH = 500;

/**
 * The limit a CRD's size is held to: every install the project documents applies it server-side (the README's
 * `kubectl apply --server-side -f dist/install.yaml`, `make install`, `make deploy`) or with Helm, and none of
 * them keeps kubectl's last-applied copy (a client-side apply's, which annotations may hold 262,144 bytes of),
 * so what binds is the object the API server stores: one etcd request, at most etcd's --max-request-bytes,
 * 1,572,864 bytes by default ("etcdserver: request is too large" past it). The stored CRD is its JSON (CRDs
 * are stored as JSON) and what the server adds (CRD_SERVER_ADDS). test/integration/install-file.test.ts shows
 * the limit and measures the CRD the README's install stores; docs/architecture.md has the figures.
 */
export const CRD_STORED_LIMIT = 1_572_864;

/**
 * What the CronJob CRD as generated grows by once stored, at most: metadata (uid, timestamps), managedFields
 * (1.1 to 1.4 KB measured: to server-side apply the schema is one field), status (names and conditions, about
 * 1 KB), the conversion webhook's caBundle the manager injects (about 1.5 KB) and the kustomize patch that
 * names its Service. A cluster installed client-side and upgraded server-side also keeps the last-applied copy,
 * but only while the whole CRD fits the annotations: then the CRD is under 262,144 bytes and the two under
 * 524,288, well within the limit; past that the server drops the copy.
 */
export const CRD_SERVER_ADDS = 16_384;

/** What stays free below CRD_STORED_LIMIT (issue 55's floor): room for the next features' fields. */
export const CRD_ROOM = 20_480;

/** The value checks of a schema node (JSONSchemaProps keywords that refuse values), as opposed to its shape. */
const CHECK_KEYS = [
  "enum",
  "exclusiveMaximum",
  "exclusiveMinimum",
  "maxItems",
  "maxLength",
  "maxProperties",
  "maximum",
  "minItems",
  "minLength",
  "minProperties",
  "minimum",
  "multipleOf",
  "pattern",
  "uniqueItems",
] as const;

/** The checks of `s`, without zod's JS safe-integer bounds and date-time regex (the format says it). */
function checksOf(s: JSONSchema): JSONSchema {
  const out: JSONSchema = {};
  for (const k of CHECK_KEYS) {
    const v = s[k];
    if (v === undefined) continue;
    if ((k === "maximum" && v === MAX_SAFE) || (k === "minimum" && v === -MAX_SAFE)) continue;
    if (k === "pattern" && s.format === "date-time") continue;
    out[k] = v;
  }
  return out;
}

/**
 * Tightens an upstream schema with the checks and required fields the zod schema declares for the same
 * fields, so zod stays the one source of what the CRD adds (the restartPolicy enum, for one). A field zod
 * describes but upstream does not have, or of another type, is an error: it would silently not be enforced.
 */
export function overlayChecks(target: JSONSchema, zodJSON: JSONSchema, path: string): void {
  const zt = zodJSON.type;
  if (typeof zt === "string" && typeof target.type === "string" && zt !== target.type) {
    throw new Error(`${path}: the zod schema says ${zt}, the upstream schema ${target.type}`);
  }
  const checks = checksOf(zodJSON);
  if (Array.isArray(checks.enum) && Array.isArray(target.enum)) {
    const extra = (checks.enum as unknown[]).filter((v) => !(target.enum as unknown[]).includes(v));
    if (extra.length) throw new Error(`${path}: enum values ${JSON.stringify(extra)} are not allowed upstream`);
  }
  Object.assign(target, checks);
  const props = (zodJSON.properties ?? {}) as Record<string, JSONSchema>;
  const targetProps = (target.properties ?? {}) as Record<string, JSONSchema>;
  for (const [k, v] of Object.entries(props)) {
    const t = targetProps[k];
    if (!t) throw new Error(`${path}.${k}: the zod schema describes a field the upstream schema does not have`);
    overlayChecks(t, v, `${path}.${k}`);
  }
  if (Array.isArray(zodJSON.required) && zodJSON.required.length > 0) {
    for (const k of zodJSON.required as string[]) {
      if (!targetProps[k]) throw new Error(`${path}: required field ${k} is not in the upstream schema`);
    }
    target.required = [...new Set([...((target.required as string[] | undefined) ?? []), ...zodJSON.required])];
  }
  if (zodJSON.items && typeof zodJSON.items === "object") {
    if (!target.items || typeof target.items !== "object") throw new Error(`${path}: not an array upstream`);
    overlayChecks(target.items as JSONSchema, zodJSON.items as JSONSchema, `${path}[]`);
  }
  const za = zodJSON.additionalProperties;
  const ta = target.additionalProperties;
  if (za && typeof za === "object" && ta && typeof ta === "object") {
    overlayChecks(ta as JSONSchema, za as JSONSchema, `${path}{}`);
  }
}

/**
 * The root `metadata` schema: the apiserver owns metadata's schema, and a CRD may only say it is an
 * object and put checks on `name` and `generateName` (apiextensions v1, also on 1.20). Those checks come
 * from the zod schema; every other metadata field is left to the apiserver.
 */
export function rootMetadataSchema(zodMeta: JSONSchema | undefined): JSONSchema {
  // Nothing else, not even a description: the apiserver refuses a root metadata schema that says more than
  // name and generateName checks (kubectl explain shows ObjectMeta's own documentation there).
  const out: JSONSchema = { type: "object" };
  const props = (zodMeta?.properties ?? {}) as Record<string, JSONSchema>;
  const kept: Record<string, JSONSchema> = {};
  for (const k of ["generateName", "name"]) {
    const checks = props[k] ? checksOf(props[k]) : {};
    if (Object.keys(checks).length > 0) kept[k] = sortKeys({ type: "string", ...checks });
  }
  if (Object.keys(kept).length > 0) out.properties = kept;
  return out;
}

export interface CrdOptions extends ConvertOptions {
  /** OpenAPI v2 definitions that hold the upstream types named by `k8sOpenAPI` metadata. */
  definitions: Definitions;
  /** Keep the Pod template's field descriptions (UNDOCUMENTED_TEMPLATE; default false). */
  templateDescriptions?: boolean;
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
        // What the zod schema checks on top of the upstream type, e.g. restartPolicy OnFailure/Never only.
        const own = z.toJSONSchema(ctx.zodSchema, {
          io: "input",
          target: "openapi-3.0",
          reused: "inline",
          unrepresentable: "throw",
        }) as JSONSchema;
        overlayChecks(converted, own, upstream);
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
  return normaliseObject(raw);
}

/** Sort keys recursively so the output is byte-for-byte stable. */
function normalise(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(normalise);
  if (s === null || typeof s !== "object") return s;
  return normaliseObject(s);
}

function normaliseObject(s: object): JSONSchema {
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

/**
 * The embedded Pod template, whose field documentation is left out of the CRD. With it, the CronJob CRD
 * is 3 times its size (640 KB of JSON for v1 and v2, each with the template, against 200 KB), for text
 * that `kubectl explain pod.spec` shows anyway; so only theirs go, like controller-gen's crd:maxDescLen=0
 * does for a whole CRD, and the CronJob's own fields and the Job's keep their descriptions. Left out, the
 * CRD also still fits a client-side `kubectl apply -f` (kubectl's last-applied copy in an annotation,
 * 262,144 bytes at most), which is no longer the way to install and which nothing holds it to
 * (CRD_STORED_LIMIT).
 */
export const UNDOCUMENTED_TEMPLATE = ["spec", "jobTemplate", "spec", "template"] as const;

const TEMPLATE_NOTE =
  " Its fields are those of a Pod (metadata and spec): see `kubectl explain pod.spec` for their documentation.";

/** Drops every description below `path` (the node at `path` keeps its own, with `note` appended). */
export function dropDescriptionsBelow(schema: JSONSchema, path: readonly string[], note: string): void {
  let node: JSONSchema | undefined = schema;
  for (const key of path) node = (node?.properties as Record<string, JSONSchema> | undefined)?.[key];
  if (!node) throw new Error(`no schema at ${path.join(".")}`);
  const strip = (s: unknown): void => {
    if (Array.isArray(s)) s.forEach(strip);
    if (s === null || typeof s !== "object") return;
    const o = s as JSONSchema;
    delete o.description;
    for (const [k, v] of Object.entries(o)) {
      // Under `properties` the keys are field names (a field may be called "description").
      if (k === "properties") for (const p of Object.values(v as object)) strip(p);
      else if (k !== "default" && k !== "enum") strip(v);
    }
  };
  const own = node.description;
  strip(node);
  node.description = `${typeof own === "string" ? own : ""}${note}`.trim();
}

/** One version's schema: structural, the root metadata as the apiserver allows, the Pod template undocumented. */
function versionSchema(schema: z.ZodType, opts: CrdOptions): JSONSchema {
  return structuralSchema(schema, opts, (out) => {
    if (opts.descriptions !== false && !opts.templateDescriptions)
      dropDescriptionsBelow(out, UNDOCUMENTED_TEMPLATE, TEMPLATE_NOTE);
  });
}

/** A kind's schema as a CRD holds it: the root metadata as the apiserver allows, `adjust`ed, checked structural. */
function structuralSchema(schema: z.ZodType, opts: CrdOptions, adjust?: (out: JSONSchema) => void): JSONSchema {
  const out = openAPIV3Schema(schema, opts);
  const props = out.properties as Record<string, JSONSchema>;
  props.metadata = rootMetadataSchema(props.metadata);
  adjust?.(out);
  const violations = structuralViolations(out);
  if (violations.length > 0) throw new Error(`generated schema is not structural:\n  ${violations.join("\n  ")}`);
  return out;
}

/**
 * The CronJob CRD (apiextensions.k8s.io/v1): v1, the storage version, served, and v2, not served here. The
 * conversion between them (spec.conversion, a webhook) is the kustomize patch
 * config/crd/patches/webhook_in_cronjobs.yaml, as in a kubebuilder project (it names the webhook Service, which
 * only config/default knows), and that patch also serves v2: v2 without its conversion would lose data.
 */
export function cronJobCRD(opts: CrdOptions): Record<string, unknown> {
  const version = (name: string, schema: z.ZodType, columns: readonly object[], storage: boolean) => ({
    additionalPrinterColumns: columns.map((c) => ({ ...c })),
    name,
    schema: { openAPIV3Schema: versionSchema(schema, opts) },
    // v2 is served by config/crd's conversion patch, which gives it its webhook: see that patch.
    served: storage,
    storage,
    subresources: { status: {} },
  });
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: {
      annotations: { "cronjob-operator.tutorial.kubebuilder.io/generated-by": "hack/generate-manifests.ts" },
      name: api.RESOURCE,
    },
    spec: {
      group: api.GROUP,
      names: {
        kind: api.KIND,
        listKind: api.LIST_KIND,
        plural: api.PLURAL,
        singular: api.SINGULAR,
        shortNames: [...api.SHORT_NAMES],
        categories: [...api.CATEGORIES],
      },
      scope: "Namespaced",
      versions: [
        version(api.VERSION, api.CronJobSchema, api.printerColumns, true),
        version(v2.VERSION, v2.CronJobV2Schema, v2.printerColumns, false),
      ],
    },
  };
}

/** What a simple kind's CRD is built from: its names, its schema and its printer columns. */
export interface SimpleKind {
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  shortNames: readonly string[];
  schema: z.ZodType;
  printerColumns: readonly object[];
}

/** The ConcurrencyGroup kind (api/v1/concurrencygroup_types.ts). */
export const CONCURRENCY_GROUP_KIND: SimpleKind = {
  kind: api.GROUP_KIND,
  listKind: api.GROUP_LIST_KIND,
  plural: api.GROUP_PLURAL,
  singular: api.GROUP_SINGULAR,
  shortNames: api.GROUP_SHORT_NAMES,
  schema: api.ConcurrencyGroupSchema,
  printerColumns: api.groupPrinterColumns,
};

/** The ExclusionCalendar kind (api/v1/exclusioncalendar_types.ts). */
export const EXCLUSION_CALENDAR_KIND: SimpleKind = {
  kind: api.CALENDAR_KIND,
  listKind: api.CALENDAR_LIST_KIND,
  plural: api.CALENDAR_PLURAL,
  singular: api.CALENDAR_SINGULAR,
  shortNames: api.CALENDAR_SHORT_NAMES,
  schema: api.ExclusionCalendarSchema,
  printerColumns: api.calendarPrinterColumns,
};

/** The simple kinds beside the CronJob, each with a CRD of its own (simpleKindCRD). */
export const SIMPLE_KINDS: readonly SimpleKind[] = [CONCURRENCY_GROUP_KIND, EXCLUSION_CALENDAR_KIND];

/**
 * The CRD of a simple namespaced kind: one version (v1, served and stored), no conversion, no status subresource
 * (ConcurrencyGroup and ExclusionCalendar hold none: their types' files say why).
 */
export function simpleKindCRD(k: SimpleKind, opts: CrdOptions): Record<string, unknown> {
  const schema = structuralSchema(k.schema, opts);
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: {
      annotations: { "cronjob-operator.tutorial.kubebuilder.io/generated-by": "hack/generate-manifests.ts" },
      name: `${k.plural}.${api.GROUP}`,
    },
    spec: {
      group: api.GROUP,
      names: {
        kind: k.kind,
        listKind: k.listKind,
        plural: k.plural,
        singular: k.singular,
        shortNames: [...k.shortNames],
      },
      scope: "Namespaced",
      versions: [
        {
          additionalPrinterColumns: k.printerColumns.map((c) => ({ ...c })),
          name: api.VERSION,
          schema: { openAPIV3Schema: schema },
          served: true,
          storage: true,
        },
      ],
    },
  };
}
