// Converts Kubernetes OpenAPI v2 definitions (the shape of `kubectl get --raw /openapi/v2` and of
// shared/k8s-openapi) into structural OpenAPI v3 schemas a CRD may embed: $refs inlined, IntOrString
// and Quantity as x-kubernetes-int-or-string, embedded ObjectMeta reduced to the fields a template may
// carry, keys a CRD schema may not hold dropped, list/map markers kept.

export type JSONSchema = { [key: string]: unknown };
export type Definitions = Record<string, JSONSchema>;

const REF_PREFIX = "#/definitions/";
const OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
const QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity";

/** Keys a CRD's JSONSchemaProps accepts; anything else is dropped. */
const ALLOWED_KEYS = new Set([
  "description",
  "type",
  "format",
  "title",
  "default",
  "maximum",
  "exclusiveMaximum",
  "minimum",
  "exclusiveMinimum",
  "maxLength",
  "minLength",
  "pattern",
  "maxItems",
  "minItems",
  "uniqueItems",
  "multipleOf",
  "enum",
  "maxProperties",
  "minProperties",
  "required",
  "items",
  "allOf",
  "oneOf",
  "anyOf",
  "not",
  "properties",
  "additionalProperties",
  "nullable",
  "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-embedded-resource",
  "x-kubernetes-int-or-string",
  "x-kubernetes-list-map-keys",
  "x-kubernetes-list-type",
  "x-kubernetes-map-type",
  // CEL rules (apiextensions v1, GA in 1.29; 1.28's beta is on by default): what the structural schema cannot say
  // ("a schedule, unless spec.after").
  "x-kubernetes-validations",
]);

// The pattern controller-gen emits for resource.Quantity.
const QUANTITY_PATTERN =
  "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$";

export interface ConvertOptions {
  /** Keep descriptions (default true). */
  descriptions?: boolean;
  /** Longest description kept, in characters; longer ones are cut at a sentence boundary. */
  maxDescriptionLength?: number;
}

export class DefinitionNotFoundError extends Error {
  constructor(name: string, from: string) {
    super(`OpenAPI definition "${name}" not found (referenced from ${from})`);
  }
}

/** Read the definitions out of an OpenAPI v2 document, failing clearly if it is not one. */
export function definitionsOf(doc: unknown, source: string): Definitions {
  if (doc === null || typeof doc !== "object" || !("definitions" in doc)) {
    throw new Error(`${source}: not an OpenAPI v2 document (no "definitions")`);
  }
  return (doc as { definitions: Definitions }).definitions;
}

/** The structural schema of definition `name`, fully inlined. */
export function convertDefinition(defs: Definitions, name: string, opts: ConvertOptions = {}): JSONSchema {
  const def = defs[name];
  if (!def) throw new DefinitionNotFoundError(name, "the caller");
  return new Converter(defs, opts).convertNamed(name, []);
}

class Converter {
  private readonly defs: Definitions;
  private readonly opts: Required<ConvertOptions>;

  constructor(defs: Definitions, opts: ConvertOptions) {
    this.defs = defs;
    this.opts = {
      descriptions: opts.descriptions ?? true,
      maxDescriptionLength: opts.maxDescriptionLength ?? Infinity,
    };
  }

  convertNamed(name: string, stack: string[]): JSONSchema {
    if (stack.includes(name)) {
      // Structural schemas cannot recurse; Kubernetes' JobTemplateSpec does not, so this is a data error.
      throw new Error(`recursive OpenAPI definition ${[...stack, name].join(" -> ")}`);
    }
    const def = this.defs[name];
    if (!def) throw new DefinitionNotFoundError(name, stack.at(-1) ?? "the caller");
    switch (name) {
      case INT_OR_STRING:
        return this.withDescription(
          { anyOf: [{ type: "integer" }, { type: "string" }], "x-kubernetes-int-or-string": true },
          def,
        );
      case QUANTITY:
        return this.withDescription(
          {
            anyOf: [{ type: "integer" }, { type: "string" }],
            pattern: QUANTITY_PATTERN,
            "x-kubernetes-int-or-string": true,
          },
          def,
        );
      case OBJECT_META:
        return this.embeddedObjectMeta(def, [...stack, name]);
    }
    return this.convert(def, [...stack, name]);
  }

  /** A template's metadata: what the apiserver keeps for an embedded ObjectMeta (controller-gen's generateEmbeddedObjectMeta). */
  private embeddedObjectMeta(def: JSONSchema, stack: string[]): JSONSchema {
    const props = (def.properties ?? {}) as Record<string, JSONSchema>;
    const keep = ["annotations", "finalizers", "labels", "name", "namespace"];
    const properties: Record<string, JSONSchema> = {};
    for (const k of keep) {
      const p = props[k];
      if (p) properties[k] = this.convert(p, stack);
    }
    return this.withDescription({ type: "object", properties }, def);
  }

  private convert(s: JSONSchema, stack: string[]): JSONSchema {
    const ref = s.$ref;
    if (typeof ref === "string") {
      if (!ref.startsWith(REF_PREFIX)) throw new Error(`unsupported $ref "${ref}" in ${stack.join(" -> ")}`);
      const inner = this.convertNamed(ref.slice(REF_PREFIX.length), stack);
      // The property's own description (more specific) wins over the referenced type's.
      return typeof s.description === "string" ? this.withDescription({ ...inner, description: undefined }, s) : inner;
    }

    const out: JSONSchema = {};
    for (const [k, v] of Object.entries(s)) {
      if (!ALLOWED_KEYS.has(k)) continue;
      switch (k) {
        case "description":
          break;
        case "properties": {
          const props: Record<string, JSONSchema> = {};
          for (const [pk, pv] of Object.entries(v as Record<string, JSONSchema>)) props[pk] = this.convert(pv, stack);
          out.properties = props;
          break;
        }
        case "items":
        case "additionalProperties":
          out[k] = typeof v === "object" && v !== null ? this.convert(v as JSONSchema, stack) : v;
          break;
        case "allOf":
        case "anyOf":
        case "oneOf":
          out[k] = (v as JSONSchema[]).map((x) => this.convert(x, stack));
          break;
        case "format":
          if (v === "int-or-string") {
            delete out.type;
            out["x-kubernetes-int-or-string"] = true;
            out.anyOf = [{ type: "integer" }, { type: "string" }];
          } else out.format = v;
          break;
        case "type":
          if (s.format !== "int-or-string") out.type = v;
          break;
        default:
          out[k] = v;
      }
    }
    // An object with neither properties nor additionalProperties would be pruned to {}; keep its content.
    if (out.type === "object" && !out.properties && !out.additionalProperties) {
      out["x-kubernetes-preserve-unknown-fields"] = true;
    }
    this.defaultListMapKeys(out);
    return this.withDescription(out, s);
  }

  /**
   * The apiserver requires every x-kubernetes-list-map-keys key to be required or defaulted. Upstream
   * defaults such keys through +default markers that OpenAPI v2 does not carry, so take the documented
   * default ("Defaults to \"TCP\"."). A key without one (LocalObjectReference.name, "effectively
   * required" upstream, defaulted to "") becomes required: apiservers before 1.23 reject an empty-string
   * default in a CRD, and an entry without its key names nothing.
   */
  private defaultListMapKeys(out: JSONSchema): void {
    const keys = out["x-kubernetes-list-map-keys"] as string[] | undefined;
    const items = out.items as JSONSchema | undefined;
    if (!keys || !items?.properties) return;
    const required = new Set((items.required as string[] | undefined) ?? []);
    const props = items.properties as Record<string, JSONSchema>;
    for (const key of keys) {
      const p = props[key];
      if (!p || required.has(key) || p.default !== undefined) continue;
      const documented = /Defaults to "([^"]+)"/.exec(String(p.description ?? ""));
      if (documented) p.default = documented[1];
      else required.add(key);
    }
    if (required.size > 0) items.required = [...required].sort();
  }

  private withDescription(out: JSONSchema, from: JSONSchema): JSONSchema {
    const result: JSONSchema = {};
    for (const [k, v] of Object.entries(out)) if (k !== "description" && v !== undefined) result[k] = v;
    const d = typeof from.description === "string" && from.description ? from.description : out.description;
    if (this.opts.descriptions && typeof d === "string" && d.length > 0) result.description = this.trim(d);
    return sortKeys(result);
  }

  private trim(d: string): string {
    const max = this.opts.maxDescriptionLength;
    if (d.length <= max) return d;
    const cut = d.slice(0, max);
    const end = cut.lastIndexOf(". ");
    return end > 0 ? cut.slice(0, end + 1) : cut;
  }
}

/** Deterministic key order: description first, then alphabetical (what controller-gen emits). */
export function sortKeys(s: JSONSchema): JSONSchema {
  const out: JSONSchema = {};
  const keys = Object.keys(s).sort((a, b) =>
    a === "description" ? -1 : b === "description" ? 1 : a < b ? -1 : a > b ? 1 : 0,
  );
  for (const k of keys) out[k] = s[k];
  return out;
}

/**
 * Check the rules of a structural schema that this converter could break: every node has a type (or is
 * int-or-string / preserve-unknown-fields), no $ref, and properties/additionalProperties are exclusive.
 * Returns the paths that violate them.
 */
export function structuralViolations(s: JSONSchema, path = "<root>"): string[] {
  const errs: string[] = [];
  const intOrString = s["x-kubernetes-int-or-string"] === true;
  const preserve = s["x-kubernetes-preserve-unknown-fields"] === true;
  if (s.$ref !== undefined) errs.push(`${path}: $ref`);
  if (s.type === undefined && !intOrString && !preserve) errs.push(`${path}: no type`);
  if (s.properties && s.additionalProperties !== undefined) errs.push(`${path}: properties and additionalProperties`);
  for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, JSONSchema>)) {
    errs.push(...structuralViolations(v, `${path}.${k}`));
  }
  if (s.items && typeof s.items === "object") errs.push(...structuralViolations(s.items as JSONSchema, `${path}[]`));
  if (s.additionalProperties && typeof s.additionalProperties === "object") {
    errs.push(...structuralViolations(s.additionalProperties as JSONSchema, `${path}{}`));
  }
  for (const k of Object.keys(s)) if (!ALLOWED_KEYS.has(k)) errs.push(`${path}: key ${k} not allowed`);
  return errs;
}
