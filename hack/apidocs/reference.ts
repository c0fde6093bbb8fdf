// The API reference, docs/reference/api.md (crd-ref-docs' job in a Go project): every field of the CronJob kind
// with its type, default, validation and description. It is rendered from the CRD as `make manifests` generates
// it (cronJobCRD: the zod schemas of api/v1 through z.toJSONSchema) and from the zod JSON Schema itself (field
// order, the upstream types' names, the checks the CronJob adds to the Job template), so it says what the CRD
// says; `make verify-manifests` fails when the committed page is stale. The output is what prettier writes
// (aligned tables), so `prettier --check` leaves it alone.
//
// The CRD's other versions (v2, api/v2) are documented by what they change: their types whose schema differs
// from the storage version's at the same path, each with the fields that differ, and their printer columns.
// Whether a version is served as deployed comes from config/crd's kustomize patches (the conversion webhook's
// patch serves v2), not from config/crd/bases alone.
//
// The group's other kinds (ConcurrencyGroup, ExclusionCalendar: hack/crdgen/crd.ts SIMPLE_KINDS) have a part of
// their own, from their CRDs and zod schemas the same way.
import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { join, resolve } from "node:path";
import { parse } from "yaml";
import { z } from "zod";
import * as api from "../../api/v1/index.ts";
import * as v2 from "../../api/v2/index.ts";
import { MAX_DESCRIPTION_LENGTH, SIMPLE_KINDS, simpleKindCRD } from "../crdgen/crd.ts";
import { convertDefinition, type Definitions, type JSONSchema } from "../crdgen/openapi.ts";

/** Where `make manifests` writes the reference. */
export const API_REFERENCE_PATH = join("docs", "reference", "api.md");

const K8S_API = "https://kubernetes.io/docs/reference/kubernetes-api";

interface UpstreamType {
  /** The name the reference uses (the Go type's). */
  name: string;
  /** Its API group/version, for the reader. */
  groupVersion: string;
  url: string;
  /**
   * "full": documented here with every field (a small type of the status); "shallow": one section with its
   * direct fields, each linked to the upstream documentation, and the checks the CronJob adds; "link": a link.
   */
  expand: "full" | "shallow" | "link";
  /** For "shallow": the upstream types of its fields. */
  fields?: Record<string, UpstreamType>;
}

const OBJECT_META: UpstreamType = {
  name: "ObjectMeta",
  groupVersion: "meta/v1",
  url: `${K8S_API}/common-definitions/object-meta/#ObjectMeta`,
  expand: "link",
};

const JOB_SPEC: UpstreamType = {
  name: "JobSpec",
  groupVersion: "batch/v1",
  url: `${K8S_API}/workload-resources/job-v1/#JobSpec`,
  expand: "link",
};

/** The upstream types the zod schemas name (their `k8sOpenAPI` metadata), by OpenAPI definition. */
const UPSTREAM_TYPES: Record<string, UpstreamType> = {
  "io.k8s.api.batch.v1.JobTemplateSpec": {
    name: "JobTemplateSpec",
    groupVersion: "batch/v1",
    url: `${K8S_API}/workload-resources/job-v1/`,
    expand: "shallow",
    fields: { metadata: OBJECT_META, spec: JOB_SPEC },
  },
  "io.k8s.api.core.v1.ObjectReference": {
    name: "ObjectReference",
    groupVersion: "core/v1",
    url: `${K8S_API}/common-definitions/object-reference/#ObjectReference`,
    expand: "full",
  },
  "io.k8s.apimachinery.pkg.apis.meta.v1.Condition": {
    name: "Condition",
    groupVersion: "meta/v1",
    url: "https://pkg.go.dev/k8s.io/apimachinery/pkg/apis/meta/v1#Condition",
    expand: "full",
  },
};

/** An annotation or label the API defines: its key comes from api/v1, the rest is written here. */
export interface MetadataKey {
  /** The api/v1 export that holds the key. */
  constant: string;
  key: string;
  /** The objects that carry it. */
  on: string;
  setBy: string;
  format: string;
  meaning: string;
}

/** A default the defaulting webhook writes and the CRD's schema does not (the webhook is the only one to apply it). */
export interface WebhookDefault {
  /** The field's JSON path, e.g. `.spec.suspend`. */
  path: string;
  value: unknown;
  /** Only when this holds (markdown). */
  when?: string;
}

/** One JSON patch operation of a kustomize patch. */
interface PatchOp {
  op: string;
  path: string;
  value?: unknown;
}

/** Everything the reference is rendered from. */
export interface ReferenceSources {
  /** The CustomResourceDefinition, as cronJobCRD builds it. */
  crd: Record<string, unknown>;
  /** The zod JSON Schema of the CronJob (z.toJSONSchema of api.CronJobSchema, input side, as the CRD's). */
  zodSchema: JSONSchema;
  /** The zod JSON Schemas of the CRD's other versions (v2: api/v2's CronJobV2Schema), by version name. */
  otherZodSchemas: Record<string, JSONSchema>;
  /**
   * The JSON patches config/crd's kustomization applies to the CRD (the conversion webhook's, which serves v2),
   * by file: what config/default, dist/install.yaml and the Helm chart deploy, where `make install` deploys
   * config/crd/bases as it is.
   */
  crdPatches: { file: string; ops: PatchOp[] }[];
  /** The upstream schemas of the types documented "shallow", by definition name, without the zod checks. */
  upstream: Record<string, JSONSchema>;
  webhookDefaults: readonly WebhookDefault[];
  annotations: readonly MetadataKey[];
  labels: readonly MetadataKey[];
  /** The group's other kinds: each one's CRD, as simpleKindCRD builds it, and its zod JSON Schema. */
  otherKinds: readonly { crd: Record<string, unknown>; zodSchema: JSONSchema }[];
}

/**
 * The annotations (`*_ANNOTATION`) and labels (`*_LABEL`) api/v1 exports, each with the documentation its module
 * wrote beside the key (api/v1/metadata.ts documentedKey).
 */
function metadataKeys(suffix: "_ANNOTATION" | "_LABEL"): MetadataKey[] {
  const out: MetadataKey[] = [];
  for (const [constant, key] of Object.entries(api as Record<string, unknown>)) {
    if (!constant.endsWith(suffix) || typeof key !== "string") continue;
    const doc = api.metadataDocOf(key);
    if (!doc) throw new Error(`api/v1 exports ${constant} (${key}): define it with documentedKey (api/v1/metadata.ts)`);
    out.push({ constant, key, ...doc });
  }
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The zod schema of each version of the CRD (the one cronJobCRD renders it from). */
const ZOD_SCHEMAS: Record<string, z.ZodType> = {
  [api.VERSION]: api.CronJobSchema,
  [v2.VERSION]: v2.CronJobV2Schema,
};

const toJSONSchema = (schema: z.ZodType): JSONSchema =>
  z.toJSONSchema(schema, {
    io: "input",
    target: "openapi-3.0",
    reused: "inline",
    unrepresentable: "throw",
  }) as JSONSchema;

const ROOT = resolve(import.meta.dirname, "..", "..");
const CRD_KUSTOMIZATION = join("config", "crd", "kustomization.yaml");

/** The JSON patches config/crd/kustomization.yaml applies to the CustomResourceDefinition, in its order. */
function crdPatches(): { file: string; ops: PatchOp[] }[] {
  const kustomization = parse(readFileSync(join(ROOT, CRD_KUSTOMIZATION), "utf8")) as {
    patches?: { path?: string; patch?: string; target?: { kind?: string } }[];
  };
  const out: { file: string; ops: PatchOp[] }[] = [];
  for (const p of kustomization.patches ?? []) {
    if (p.target?.kind !== "CustomResourceDefinition") continue;
    const file = p.path ? join("config", "crd", p.path) : CRD_KUSTOMIZATION;
    const ops = parse(p.path ? readFileSync(join(ROOT, file), "utf8") : (p.patch ?? "")) as unknown;
    if (!Array.isArray(ops)) throw new Error(`${file}: not a JSON patch (hack/apidocs/reference.ts reads only those)`);
    out.push({ file, ops: ops as PatchOp[] });
  }
  return out;
}

/**
 * The reference's sources: `crd` as cronJobCRD built it (from `definitions`), and what api/v1 declares besides
 * (the zod JSON Schema, the webhook's defaults, the annotations and labels), api/v2's zod JSON Schema, the
 * patches config/crd applies to the CRD, and the group's other kinds (`kindCRDs`: simpleKindCRD's CRD of each of
 * SIMPLE_KINDS, by default as `make manifests` builds them).
 */
export function referenceSources(
  crd: Record<string, unknown>,
  definitions: Definitions,
  kindCRDs: readonly Record<string, unknown>[] = SIMPLE_KINDS.map((k) =>
    simpleKindCRD(k, { definitions, maxDescriptionLength: MAX_DESCRIPTION_LENGTH }),
  ),
): ReferenceSources {
  const versions = crdShape(crd).spec.versions;
  const storage = versions.find((v) => v.storage) ?? versions[0]!;
  const otherZodSchemas: Record<string, JSONSchema> = {};
  for (const v of versions) {
    const schema = ZOD_SCHEMAS[v.name];
    if (!schema) throw new Error(`the CRD has version ${v.name}: give its zod schema in hack/apidocs/reference.ts`);
    if (v !== storage) otherZodSchemas[v.name] = toJSONSchema(schema);
  }
  for (const name of Object.keys(ZOD_SCHEMAS)) {
    if (!versions.some((v) => v.name === name))
      throw new Error(`hack/apidocs/reference.ts documents ${name}: the CRD has no such version`);
  }
  const zodSchema = toJSONSchema(ZOD_SCHEMAS[storage.name]!);
  const upstream: Record<string, JSONSchema> = {};
  for (const [def, t] of Object.entries(UPSTREAM_TYPES)) {
    if (t.expand === "shallow") upstream[def] = convertDefinition(definitions, def, { descriptions: false });
  }
  const annotations = metadataKeys("_ANNOTATION");
  const labels = metadataKeys("_LABEL");
  return {
    crd,
    zodSchema,
    otherZodSchemas,
    crdPatches: crdPatches(),
    upstream,
    webhookDefaults: [
      ...[...api.WEBHOOK_ONLY_DEFAULTS].map((k) => ({ path: `.spec.${k}`, value: api.CRONJOB_SPEC_DEFAULTS[k] })),
      { path: ".spec.maxCatchUpRuns", value: api.DEFAULT_MAX_CATCH_UP_RUNS, when: "with missedRunPolicy `RunAll`" },
    ],
    annotations,
    labels,
    otherKinds: kindCRDs.map((c) => {
      const kind = crdShape(c).spec.names.kind;
      const k = SIMPLE_KINDS.find((x) => x.kind === kind);
      if (!k) throw new Error(`the reference is given a CRD of ${kind}: add it to SIMPLE_KINDS (hack/crdgen/crd.ts)`);
      return { crd: c, zodSchema: toJSONSchema(k.schema) };
    }),
  };
}

// ---- rendering ----

/** `crd` as the rendering reads it: a CustomResourceDefinition with names and at least one version. */
function crdShape(crd: Record<string, unknown>): CrdShape {
  if (!isCrdShape(crd))
    throw new Error("the reference needs a CustomResourceDefinition with spec.names and spec.versions");
  return crd;
}

function isCrdShape(v: Record<string, unknown>): v is Record<string, unknown> & CrdShape {
  const spec = v.spec;
  if (typeof spec !== "object" || spec === null) return false;
  const { names, versions, group } = spec as Record<string, unknown>;
  return (
    typeof group === "string" &&
    typeof names === "object" &&
    names !== null &&
    Array.isArray(versions) &&
    versions.length > 0 &&
    versions.every((x) => typeof x === "object" && x !== null && typeof (x as { name?: unknown }).name === "string")
  );
}

interface CrdShape {
  spec: {
    group: string;
    scope: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames?: string[];
      categories?: string[];
    };
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources?: Record<string, unknown>;
      additionalPrinterColumns?: {
        name: string;
        type: string;
        jsonPath: string;
        priority?: number;
        format?: string;
        description?: string;
      }[];
      schema: { openAPIV3Schema: JSONSchema };
    }[];
  };
}

/** A documented object type: a section of the reference. */
interface Section {
  name: string;
  /** Its heading: the name, with the version for a version documented by its differences (`CronJobSpec (v2)`). */
  title: string;
  /** The JSON paths it appears at (`.spec`, `.status.active[]`), the first one's schema documented. */
  paths: string[];
  /** The titles of the sections whose fields have this type, one for each path (none for the root). */
  parents: string[];
  crd: JSONSchema;
  zod: JSONSchema | undefined;
  upstream?: { def: string; type: UpstreamType };
}

const props = (s: JSONSchema | undefined): Record<string, JSONSchema> =>
  (s?.properties ?? {}) as Record<string, JSONSchema>;
const required = (s: JSONSchema | undefined): string[] => (s?.required ?? []) as string[];
const str = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v));
const code = (v: unknown): string => `\`${str(v).replaceAll("|", "\\|")}\``;
const pascal = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
/** GitHub's heading anchor for a heading (a type name, `CronJobSpec (v2)`). */
const anchor = (name: string): string =>
  `#${name
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, "")
    .replaceAll(" ", "-")}`;
const link = (t: UpstreamType): string => `[${t.name}](${t.url})`;

/** A description as one table cell: one line, single spaces, pipes escaped. */
function cellText(s: string): string {
  return s.replace(/\s+/g, " ").trim().replaceAll("|", "\\|");
}

/** The properties in the zod schema's order (the declaration order), then any the CRD adds, by name. */
function fieldOrder(crd: JSONSchema, zod: JSONSchema | undefined): string[] {
  const own = Object.keys(props(crd));
  const declared = Object.keys(props(zod)).filter((k) => own.includes(k));
  return [...declared, ...own.filter((k) => !declared.includes(k)).sort()];
}

const upstreamOf = (zod: JSONSchema | undefined): { def: string; type: UpstreamType } | undefined => {
  const def = zod?.[api.K8S_OPENAPI];
  if (typeof def !== "string") return undefined;
  const type = UPSTREAM_TYPES[def];
  if (!type) throw new Error(`the zod schema names ${def}: say in hack/apidocs/reference.ts how to document it`);
  return { def, type };
};

/** The checks of a schema node, in a fixed order (markdown). */
function checks(s: JSONSchema): string[] {
  const out: string[] = [];
  if (Array.isArray(s.enum)) out.push(`enum: ${s.enum.map(code).join(", ")}`);
  if (s.format !== undefined) out.push(`format: ${code(s.format)}`);
  if (s.minimum !== undefined)
    out.push(`${s.exclusiveMinimum === true ? "exclusive minimum" : "minimum"}: ${str(s.minimum)}`);
  if (s.maximum !== undefined)
    out.push(`${s.exclusiveMaximum === true ? "exclusive maximum" : "maximum"}: ${str(s.maximum)}`);
  if (s.multipleOf !== undefined) out.push(`multiple of: ${str(s.multipleOf)}`);
  if (s.minLength !== undefined) out.push(`minLength: ${str(s.minLength)}`);
  if (s.maxLength !== undefined) out.push(`maxLength: ${str(s.maxLength)}`);
  if (s.pattern !== undefined) out.push(`pattern: ${code(s.pattern)}`);
  if (s.minItems !== undefined) out.push(`minItems: ${str(s.minItems)}`);
  if (s.maxItems !== undefined) out.push(`maxItems: ${str(s.maxItems)}`);
  if (s.uniqueItems === true) out.push("unique items");
  if (s.minProperties !== undefined) out.push(`minProperties: ${str(s.minProperties)}`);
  if (s.maxProperties !== undefined) out.push(`maxProperties: ${str(s.maxProperties)}`);
  if (s.nullable === true) out.push("nullable");
  if (s["x-kubernetes-list-type"] !== undefined) {
    const keys = s["x-kubernetes-list-map-keys"];
    const by = Array.isArray(keys) ? ` (keys: ${keys.map(code).join(", ")})` : "";
    out.push(`list type: ${code(s["x-kubernetes-list-type"])}${by}`);
  }
  if (s["x-kubernetes-map-type"] !== undefined) out.push(`map type: ${code(s["x-kubernetes-map-type"])}`);
  if (s["x-kubernetes-preserve-unknown-fields"] === true) out.push("unknown fields kept");
  return out;
}

/** The scalar (or map) type of a schema node that has no section of its own. */
function plainType(s: JSONSchema): string {
  if (s["x-kubernetes-int-or-string"] === true) return "integer or string";
  if (s.type === "array") {
    const items = (s.items ?? {}) as JSONSchema;
    return `${plainType(items)} array`;
  }
  if (s.type === "object" && s.additionalProperties && typeof s.additionalProperties === "object") {
    return `map[string]${plainType(s.additionalProperties as JSONSchema)}`;
  }
  return typeof s.type === "string" ? s.type : "any";
}

interface Row {
  field: string;
  type: string;
  default: string;
  validation: string;
  description: string;
}

interface Walk {
  sections: Section[];
  byName: Map<string, Section>;
  /** The version documented. */
  version: string;
  /** Appended to the section titles: "" for the storage version, ` (v2)` for another. */
  suffix: string;
  /** For another version: the storage version's, whose sections this one's say what they change from. */
  base?: { version: string; schema: JSONSchema; sections: readonly Section[] };
}

/** The node at a section path (`.spec`, `.status.active[]`) of a schema, if it has one. */
function nodeAt(schema: JSONSchema, path: string): JSONSchema | undefined {
  let node: JSONSchema | undefined = schema;
  for (const part of path.split(".").slice(1)) {
    const key = part.endsWith("[]") ? part.slice(0, -2) : part;
    node = props(node)[key];
    if (node && part.endsWith("[]")) node = node.items as JSONSchema | undefined;
    if (!node) return undefined;
  }
  return node;
}

/** Whether property `key` of `node` is the same in `base` (its schema and whether it is required). */
const sameField = (node: JSONSchema, base: JSONSchema | undefined, key: string): boolean =>
  base !== undefined &&
  key in props(base) &&
  isDeepStrictEqual(props(node)[key], props(base)[key]) &&
  required(node).includes(key) === required(base).includes(key);

/** The row of property `key` of section `sec`; queues the sections of the types it uses. */
function fieldRow(src: ReferenceSources, walk: Walk, sec: Section, key: string): Row {
  const node = props(sec.crd)[key]!;
  const zodNode = props(sec.zod)[key];
  const path = `${sec.paths[0]}.${key}`;
  const isArray = node.type === "array";
  const target = (isArray ? node.items : node) as JSONSchema;
  const zodTarget = (isArray ? zodNode?.items : zodNode) as JSONSchema | undefined;
  const suffix = isArray ? " array" : "";
  const extra: string[] = [];

  let type: string;
  const fromParent = sec.upstream?.type.fields?.[key];
  const upstream = upstreamOf(zodTarget);
  if (fromParent || key === "metadata") {
    // An ObjectMeta, or a field of a "shallow" upstream type: documented upstream. Checks the CRD puts on its
    // fields (metadata.name's length) are listed here.
    type = link(fromParent ?? OBJECT_META) + suffix;
    if (key === "metadata" && !fromParent) {
      for (const [k, v] of Object.entries(props(target))) {
        const c = checks(v);
        if (c.length) extra.push(`${code(k)}: ${c.join(", ")}`);
      }
    }
  } else if (upstream && upstream.type.expand === "link") {
    type = link(upstream.type) + suffix;
  } else if (upstream || Object.keys(props(target)).length > 0) {
    // An array's entries are named in the singular (`schedules`: CronJobSpecSchedule).
    const own = isArray && key.endsWith("s") ? key.slice(0, -1) : key;
    const name = upstream ? upstream.type.name : `${sec.name}${pascal(own)}`;
    const title = `${name}${walk.suffix}`;
    const itemPath = isArray ? `${path}[]` : path;
    const existing = walk.byName.get(name);
    if (existing) {
      if (!upstream) throw new Error(`two types would be called ${name} (${existing.paths[0]}, ${itemPath})`);
      existing.paths.push(itemPath);
      existing.parents.push(sec.title);
    } else {
      const s: Section = {
        name,
        title,
        paths: [itemPath],
        parents: [sec.title],
        crd: target,
        zod: zodTarget,
        upstream,
      };
      walk.sections.push(s);
      walk.byName.set(name, s);
    }
    type = `[${title}](${anchor(title)})${suffix}`;
  } else {
    type = plainType(node);
  }

  const validation = [required(sec.crd).includes(key) ? "required" : "optional", ...checks(node)];
  if (isArray && !Object.keys(props(target)).length && !upstream) {
    const c = checks(target);
    if (c.length) validation.push(`items: ${c.join(", ")}`);
  }
  validation.push(...extra);

  let def = "";
  if (node.default !== undefined) def = code(node.default);
  const hook = src.webhookDefaults.find((d) => d.path === path);
  if (hook) {
    if (def) throw new Error(`${path}: defaulted by both the CRD and the webhook`);
    def = `${code(hook.value)} (webhook${hook.when ? `, ${hook.when}` : ""})`;
  }
  return {
    field: code(key),
    type,
    default: def,
    validation: validation.join("; "),
    description:
      typeof node.description === "string"
        ? cellText(node.description)
        : key === "metadata"
          ? "Standard object metadata."
          : "",
  };
}

/** Display width of a cell as prettier measures it (the generator writes ASCII; other text counts per code point). */
const width = (s: string): number => [...s].length;

/** A markdown table as prettier prints it: columns padded to their widest cell. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(3, width(h), ...rows.map((r) => width(r[i] ?? ""))));
  const line = (cells: string[]): string =>
    `| ${cells.map((c, i) => c + " ".repeat(widths[i]! - width(c))).join(" | ")} |`;
  return [line(header), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...rows.map(line)].join("\n");
}

/**
 * The checks the zod schema puts on a "shallow" upstream type, each with whether the upstream schema has it:
 * field by field in declaration order, a field's `required` before its own checks, a field before its fields.
 */
function addedChecks(zod: JSONSchema, upstream: JSONSchema | undefined): string[][] {
  const rows: string[][] = [];
  const visit = (z: JSONSchema, u: JSONSchema | undefined, path: string, isRequired: boolean, upRequired: boolean) => {
    if (isRequired) rows.push([code(path), "required", upRequired ? "yes" : "no"]);
    const theirs = new Set(u ? checks(u) : []);
    for (const c of checks(z)) rows.push([code(path), c, theirs.has(c) ? "yes" : "no"]);
    for (const [k, v] of Object.entries(props(z))) {
      const p = path ? `${path}.${k}` : k;
      visit(v, props(u)[k], p, required(z).includes(k), required(u).includes(k));
    }
    if (z.items && typeof z.items === "object") {
      visit(z.items as JSONSchema, u?.items as JSONSchema | undefined, `${path}[]`, false, false);
    }
  };
  visit(zod, upstream, "", false, false);
  return rows;
}

function sectionText(src: ReferenceSources, walk: Walk, sec: Section): string {
  const out: string[] = [`### ${sec.title}`];
  const desc = typeof sec.crd.description === "string" ? cellText(sec.crd.description) : "";
  if (desc) out.push(desc);
  const about: string[] = [];
  if (sec.parents.length) {
    const where = sec.parents.map((p, i) => `[${p}](${anchor(p)}) as ${code(sec.paths[i])}`);
    about.push(`Appears in: ${where.join(", ")}.`);
  }
  // Another version's type: only the fields it changes from the storage version's type at the same path (a type
  // the storage version does not have: all of them).
  const base = walk.base && nodeAt(walk.base.schema, sec.paths[0]!);
  const keys = fieldOrder(sec.crd, sec.zod).filter((k) => !sameField(sec.crd, base, k));
  if (walk.base && !base) {
    about.push(`New in ${walk.version}: ${walk.base.version} has no ${code(sec.paths[0]!.replace(/\[\]$/, ""))}.`);
  } else if (walk.base && base) {
    const theirs = walk.base.sections.find((b) => b.paths.includes(sec.paths[0]!));
    const named = theirs ? `[${theirs.title}](${anchor(theirs.title)})` : `type at ${code(sec.paths[0] || ".")}`;
    const same = fieldOrder(sec.crd, sec.zod).filter((k) => !keys.includes(k));
    const gone = Object.keys(props(base)).filter((k) => !(k in props(sec.crd)));
    about.push(
      `The fields below are what it changes from ${walk.base.version}'s ${named}` +
        (same.length
          ? `; its other fields, ${same.map(code).join(", ")}, are ${walk.base.version}'s, documented there`
          : "") +
        (gone.length
          ? `; ${walk.base.version}'s ${gone.map(code).join(", ")} ${gone.length > 1 ? "are" : "is"} not in it`
          : "") +
        ".",
    );
  }
  const up = sec.upstream?.type;
  if (up) {
    about.push(
      up.expand === "shallow"
        ? `The upstream ${up.groupVersion} ${up.name}, not expanded here: see the [Kubernetes API reference](${up.url}). ` +
            "The CRD's schema is the upstream one (from the Kubernetes OpenAPI definitions `make manifests` reads), " +
            "with the checks below added from the zod schema."
        : `The upstream ${up.groupVersion} [${up.name}](${up.url}), as the CRD's schema has it.`,
    );
  }
  if (about.length) out.push(about.join(" "));
  const rows = keys.map((k) => fieldRow(src, walk, sec, k));
  out.push(
    table(
      ["field", "type", "default", "validation", "description"],
      rows.map((r) => [r.field, r.type, r.default, r.validation, r.description]),
    ),
  );
  if (up?.expand === "shallow" && sec.zod) {
    out.push(
      `Checks the zod schema declares on the ${up.name} (fields under \`${sec.paths[0]}\`; the CRD enforces them, ` +
        '"upstream" says whether the upstream schema already has the same check):',
    );
    out.push(table(["field", "check", "upstream"], addedChecks(sec.zod, src.upstream[sec.upstream!.def])));
  }
  return out.join("\n\n");
}

function metadataTable(keys: readonly MetadataKey[]): string {
  return table(
    ["key", "on", "set by", "format", "meaning"],
    keys.map((k) => [code(k.key), cellText(k.on), cellText(k.setBy), cellText(k.format), cellText(k.meaning)]),
  );
}

/** Per version other than the storage one: the user documentation of what it is for. */
const VERSION_DOCS: Record<string, { title: string; page: string }> = {
  [v2.VERSION]: { title: "Several schedules: API v2", page: "../several-schedules.md" },
};

type CrdVersion = CrdShape["spec"]["versions"][number];

/**
 * The CRD as config/crd's patches deploy it: each version's `served`, and the conversion. A patch operation the
 * generator does not know what it means for the reference (one that changes a schema) stops it.
 */
function deployed(crd: CrdShape["spec"], patches: ReferenceSources["crdPatches"]) {
  const served = new Map(crd.versions.map((v) => [v.name, v.served]));
  let conversion: { strategy: string; file: string } | undefined;
  for (const { file, ops } of patches) {
    for (const o of ops) {
      const m = /^\/spec\/versions\/(\d+)\/served$/.exec(o.path);
      const v = m ? crd.versions[Number(m[1])] : undefined;
      if (v && (o.op === "replace" || o.op === "add") && typeof o.value === "boolean") {
        served.set(v.name, o.value);
      } else if (o.path === "/spec/conversion" && (o.op === "add" || o.op === "replace")) {
        conversion = { strategy: str((o.value as { strategy?: unknown } | undefined)?.strategy ?? "None"), file };
      } else {
        throw new Error(`${file}: ${o.op} ${o.path}: say in hack/apidocs/reference.ts what it means for the reference`);
      }
    }
  }
  return { served, conversion };
}

/** The field paths `other` adds to `base` and the ones it drops (a field of both: the same checked below). */
function fieldChanges(base: JSONSchema, other: JSONSchema): { added: string[]; dropped: string[] } {
  const added: string[] = [];
  const dropped: string[] = [];
  const visit = (b: JSONSchema, o: JSONSchema, path: string): void => {
    if (isDeepStrictEqual(b, o)) return;
    for (const k of Object.keys(props(o))) if (!(k in props(b))) added.push(`${path}.${k}`);
    for (const k of Object.keys(props(b))) if (!(k in props(o))) dropped.push(`${path}.${k}`);
    for (const [k, v] of Object.entries(props(o))) {
      const bv = props(b)[k];
      if (!bv) continue;
      if (v.type === "array" && bv.type === "array")
        visit(bv.items as JSONSchema, v.items as JSONSchema, `${path}.${k}[]`);
      else visit(bv, v, `${path}.${k}`);
    }
  };
  visit(base, other, "");
  return { added, dropped };
}

const printerColumnsTable = (version: CrdVersion): string =>
  table(
    ["column", "type", "JSONPath", "priority"],
    (version.additionalPrinterColumns ?? []).map((c) => [
      cellText(c.name),
      code(c.type),
      code(c.jsonPath),
      str(c.priority ?? 0),
    ]),
  );

/**
 * The part on the group's other kinds: for each, its facts, its types (breadth first, as the CronJob's) and its
 * printer columns. Their webhook defaults are none: the defaulting webhook is the CronJob's.
 */
function otherKindsPart(src: ReferenceSources): string[] {
  if (!src.otherKinds.length) return [];
  const out: string[] = [
    "## Other kinds",
    "The kinds beside the CronJob in the same API group, each with a CRD of its own: one version, served and " +
      "stored, no conversion, no status (what they decide for a CronJob's runs is in its `status.recentRuns`). " +
      "A CronJob names them in its spec; the controller reads them from its cache.",
  ];
  const own: ReferenceSources = { ...src, webhookDefaults: [] };
  for (const k of src.otherKinds) {
    const crd = crdShape(k.crd).spec;
    const version = crd.versions.find((v) => v.storage) ?? crd.versions[0]!;
    const { kind, listKind, plural, singular, shortNames = [] } = crd.names;
    const root: Section = {
      name: kind,
      title: kind,
      paths: [""],
      parents: [],
      crd: version.schema.openAPIV3Schema,
      zod: k.zodSchema,
    };
    const walk: Walk = { sections: [root], byName: new Map([[kind, root]]), version: version.name, suffix: "" };
    const rendered: string[] = [];
    for (let i = 0; i < walk.sections.length; i++) rendered.push(sectionText(own, walk, walk.sections[i]!));
    const facts = [
      `- Group: ${code(crd.group)}; version: ${code(version.name)} (served: ${version.served}, storage: ${version.storage})`,
      `- Kind: ${code(kind)}; list kind: ${code(listKind)}`,
      `- Resource: ${code(plural)} (singular ${code(singular)}), ${crd.scope === "Namespaced" ? "namespaced" : "cluster-scoped"}`,
      `- Short names: ${shortNames.length ? shortNames.map(code).join(", ") : "none"}`,
      `- CRD: \`config/crd/bases/${crd.group}_${plural}.yaml\``,
    ].join("\n");
    const columns = `What \`kubectl get ${plural}\` prints; \`-o wide\` adds the columns of priority 1.`;
    // The kind's facts and printer columns go with its own section, before the sections of its types.
    rendered[0] = [rendered[0]!, facts, columns, printerColumnsTable(version)].join("\n\n");
    out.push(...rendered);
  }
  return out;
}

/** The reference page, docs/reference/api.md. Pure: the same sources give the same text. */
export function apiReference(src: ReferenceSources): string {
  const crd = crdShape(src.crd).spec;
  const version = crd.versions.find((v) => v.storage) ?? crd.versions[0]!;
  const schema = version.schema.openAPIV3Schema;
  const { kind, listKind, plural, singular, shortNames = [], categories = [] } = crd.names;
  const gv = `${crd.group}/${version.name}`;
  const { served, conversion } = deployed(crd, src.crdPatches);
  const bases = `config/crd/bases/${crd.group}_${plural}.yaml`;

  const root: Section = { name: kind, title: kind, paths: [""], parents: [], crd: schema, zod: src.zodSchema };
  const walk: Walk = { sections: [root], byName: new Map([[kind, root]]), version: version.name, suffix: "" };
  // Breadth first: a section's rows queue the sections of its types, so the order is spec, status, their types...
  const rendered: string[] = [];
  for (let i = 0; i < walk.sections.length; i++) rendered.push(sectionText(src, walk, walk.sections[i]!));

  // Each other version: its types that differ from the storage version's, with the fields that differ.
  const others = crd.versions.filter((v) => v !== version);
  const otherLines: string[] = [];
  const otherParts: string[] = [];
  for (const v of others) {
    const zod = src.otherZodSchemas[v.name];
    if (!zod) throw new Error(`no zod schema for version ${v.name} in the reference's sources`);
    const docs = VERSION_DOCS[v.name];
    if (!docs)
      throw new Error(`the CRD has version ${v.name}: link its user documentation in hack/apidocs/reference.ts`);
    const vSchema = v.schema.openAPIV3Schema;
    const title = `${kind} (${v.name})`;
    const vRoot: Section = { name: kind, title, paths: [""], parents: [], crd: vSchema, zod };
    const vWalk: Walk = {
      sections: [vRoot],
      byName: new Map([[kind, vRoot]]),
      version: v.name,
      suffix: ` (${v.name})`,
      base: { version: version.name, schema, sections: walk.sections },
    };
    const vRendered: string[] = [];
    for (let i = 0; i < vWalk.sections.length; i++) vRendered.push(sectionText(src, vWalk, vWalk.sections[i]!));

    const { added, dropped } = fieldChanges(schema, vSchema);
    const paths = (xs: string[]): string => xs.map(code).join(", ");
    const change =
      version.name +
      (added.length && dropped.length
        ? ` with ${paths(added)} in place of ${paths(dropped)}`
        : added.length
          ? ` with ${paths(added)}`
          : dropped.length
            ? ` without ${paths(dropped)}`
            : ", its fields changed");
    const isServed = served.get(v.name)!;
    const through = !conversion
      ? ""
      : conversion.strategy === "Webhook"
        ? ` through the conversion webhook (\`${conversion.file}\`)`
        : ` with conversion ${code(conversion.strategy)} (\`${conversion.file}\`)`;
    const how =
      isServed && !v.served
        ? `,${through}: served by \`config/default\`, \`dist/install.yaml\` and the Helm chart (\`webhook.enable\`, ` +
          "the default), not by `make install` (`config/crd/bases`: served: false)"
        : !isServed && v.served
          ? ": served by `make install` (`config/crd/bases`), not by `config/default`"
          : "";
    otherLines.push(
      `- Version ${code(v.name)} (served: ${isServed}, storage: ${v.storage})${how}; ${change}: ` +
        `see [${docs.title}](${docs.page}) and [API ${v.name}](${anchor(`API ${v.name}`)}).`,
    );
    // kubectl's default version is the highest one served (of GA versions, the highest number).
    const ga = (name: string): number => (/^v\d+$/.test(name) ? Number(name.slice(1)) : -1);
    const highest = ga(v.name) > 0 && crd.versions.every((o) => ga(o.name) <= ga(v.name));
    const vColumns = isDeepStrictEqual(v.additionalPrinterColumns ?? [], version.additionalPrinterColumns ?? [])
      ? [`${version.name}'s: see [Printer columns](#printer-columns).`]
      : [
          `What \`kubectl get ${plural}.${v.name}.${crd.group}\` prints` +
            (highest
              ? ` (and plain \`kubectl get ${plural}\` where ${v.name} is served: kubectl prefers the highest version)`
              : "") +
            "; `-o wide` adds the columns of priority 1.",
          printerColumnsTable(v),
        ];
    otherParts.push(
      `## API ${v.name}`,
      `The ${kind} kind of the \`${crd.group}/${v.name}\` API: ${change}. See [${docs.title}](${docs.page}) for how ` +
        `to use it. This part is generated from the zod schema of \`api/${v.name}\` through the CRD's ${v.name} schema, ` +
        `and documents only what differs from ${version.name}: a ${v.name} type whose schema is ${version.name}'s at the ` +
        `same path (the Job template, the status, ...) is ${version.name}'s, documented above, and so is every field not listed here.`,
      ...vRendered,
      `### Printer columns (${v.name})`,
      ...vColumns,
    );
  }

  const list = (xs: readonly string[]): string => (xs.length ? xs.map(code).join(", ") : "none");
  const subresources = Object.keys(version.subresources ?? {});
  const storageServed = served.get(version.name)!;
  const apis = ["api/" + version.name, ...others.map((v) => `api/${v.name}`)];
  const parts = [
    `# API reference: ${kind} (${gv})`,
    `<!-- Generated by \`make manifests\` (hack/apidocs/reference.ts) from the zod schemas in ${apis.join(" and ")}: do not edit. -->`,
    `The ${kind} kind of the \`${gv}\` API: one ${kind} runs the Jobs of its \`spec.jobTemplate\` on the schedule ` +
      "of its `spec.schedule`, and reports them in its status.",
    [
      `- Group: ${code(crd.group)}; version: ${code(version.name)} (served: ${storageServed}, storage: ${version.storage})` +
        (storageServed !== version.served ? ` (\`${bases}\`: served: ${version.served})` : ""),
      ...otherLines,
      `- Kind: ${code(kind)}; list kind: ${code(listKind)}`,
      `- Resource: ${code(plural)} (singular ${code(singular)}), ${crd.scope === "Namespaced" ? "namespaced" : "cluster-scoped"}`,
      `- Short names: ${list(shortNames)}; categories: ${list(categories)}`,
      `- Subresources: ${list(subresources)}`,
      ...(src.otherKinds.length
        ? [
            "- Other kinds of the group: " +
              src.otherKinds
                .map((k) => crdShape(k.crd).spec.names.kind)
                .map((n) => `[${n}](${anchor(n)})`)
                .join(", "),
          ]
        : []),
    ].join("\n"),
    "## How to read it",
    "Each object type has a table, in the order of its fields' declaration in the zod schema:",
    [
      "- **type**: the JSON type (`integer`, `string`, ...), a link to the object type's own table, or a link to the " +
        "Kubernetes API reference for an upstream type that is not expanded here;",
      "- **default**: the value the API server fills in from the CRD's schema; `(webhook)` marks a default only the " +
        "defaulting webhook writes (without the webhook the field stays unset, which means the same to the controller);",
      "- **validation**: whether the field is required, and what the CRD's schema checks: bounds, lengths, enum values, " +
        "pattern, format (`int32`, `int64`, `date-time`: an RFC 3339 time) and list semantics;",
      "- **description**: as `kubectl explain` prints it.",
    ].join("\n"),
    `This page is generated from the zod schemas in \`api/${version.name}\` through the CRD ` +
      `(\`${bases}\`), by \`make manifests\`; \`make verify-manifests\` fails when it is ` +
      "stale, so it says what the CRD says. The validating webhook checks more than a schema can (that the schedule " +
      "parses and fires, that the time zone exists, a dry run of the Job): see [How a CronJob is validated](../using-cronjobs.md#how-a-cronjob-is-validated).",
    "## Types",
    ...rendered,
    "## Printer columns",
    others.length
      ? `What \`kubectl get ${plural}.${version.name}.${crd.group}\` prints (and plain \`kubectl get ${plural}\` where no higher version is served); \`-o wide\` adds the columns of priority 1.`
      : "What `kubectl get` prints; `-o wide` adds the columns of priority 1.",
    printerColumnsTable(version),
    ...otherParts,
    ...otherKindsPart(src),
    "## Annotations",
    "The annotations the API defines (api/v1's `*_ANNOTATION` keys), on the CronJob and on the Jobs the controller creates.",
    metadataTable(src.annotations),
    "## Labels",
    "The labels the API defines (api/v1's `*_LABEL` keys).",
    metadataTable(src.labels),
  ];
  return `${parts.join("\n\n")}\n`;
}
