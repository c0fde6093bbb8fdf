// docs/reference/api.md is rendered from the CRD and the zod schemas (hack/apidocs/reference.ts): every field of
// the CRD's schema is in it with its type, default, checks and description, the committed page is the
// generator's output, and prettier leaves it as it is.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { isDeepStrictEqual } from "node:util";
import * as prettier from "prettier";
import * as api from "../../api/v1/index.ts";
import { MAX_SCHEDULES } from "../../api/v1/schedule/index.ts";
import * as v2 from "../../api/v2/index.ts";
import { API_REFERENCE_PATH, apiReference, referenceSources } from "../../hack/apidocs/reference.ts";
import { cronJobCRD, MAX_DESCRIPTION_LENGTH, SIMPLE_KINDS } from "../../hack/crdgen/crd.ts";
import { definitionsOf, type JSONSchema } from "../../hack/crdgen/openapi.ts";
import { readVendoredOpenAPI, VENDORED_OPENAPI } from "../../hack/crdgen/vendored-openapi.ts";

const root = resolve(import.meta.dirname, "..", "..");
const defs = definitionsOf(readVendoredOpenAPI(), VENDORED_OPENAPI);
// What `make manifests` renders (it reads the vendored definitions unless told otherwise).
const crd = cronJobCRD({ definitions: defs, maxDescriptionLength: MAX_DESCRIPTION_LENGTH });
const sources = referenceSources(crd, defs);
const md = apiReference(sources);
const schema = (crd as any).spec.versions[0].schema.openAPIV3Schema as JSONSchema;
const v2Schema = (crd as any).spec.versions[1].schema.openAPIV3Schema as JSONSchema;

type Row = { field: string; type: string; default: string; validation: string; description: string };
interface Section {
  name: string;
  paths: string[];
  text: string;
  rows: Map<string, Row>;
}

/** The cells of a markdown table line (pipes escaped with a backslash are text). */
const cells = (line: string): string[] =>
  line
    .slice(1, -1)
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());

/** The type sections of the page: heading, the JSON paths they appear at (the root's is ""), the field table. */
function sections(text: string): Map<string, Section> {
  return typeSections(text.slice(text.indexOf("\n## Types\n"), text.indexOf("\n## Printer columns\n")));
}

/** The part of the page on API v2, up to the next part (## heading). */
function v2Part(text: string): string {
  const start = text.indexOf("\n## API v2\n");
  assert.ok(start > 0, "no ## API v2 part");
  return text.slice(start, text.indexOf("\n## ", start + 1));
}

/** The part on the group's other kinds (ConcurrencyGroup, ExclusionCalendar), up to the next part. */
function otherKindsPart(text: string): string {
  const start = text.indexOf("\n## Other kinds\n");
  assert.ok(start > 0, "no ## Other kinds part");
  return text.slice(start, text.indexOf("\n## ", start + 1));
}

/** The type sections of API v2's part (its printer columns apart). */
const v2Sections = (text: string): Map<string, Section> =>
  typeSections(v2Part(text).slice(0, v2Part(text).indexOf("\n### Printer columns (v2)\n")));

function typeSections(types: string): Map<string, Section> {
  const out = new Map<string, Section>();
  for (const chunk of types.split(/^### /m).slice(1)) {
    const name = chunk.slice(0, chunk.indexOf("\n"));
    const appears = /^Appears in: (.*)$/m.exec(chunk)?.[1];
    const paths = appears ? [...appears.matchAll(/ as `([^`]+)`/g)].map((m) => m[1]!) : [""];
    const table = chunk.slice(chunk.indexOf("\n| field "));
    const lines = table.trim().split("\n\n")[0]!.split("\n");
    assert.deepEqual(cells(lines[0]!), ["field", "type", "default", "validation", "description"], name);
    const rows = new Map<string, Row>();
    for (const line of lines.slice(2)) {
      const [field, type, def, validation, description] = cells(line);
      rows.set(field!.replaceAll("`", ""), {
        field: field!,
        type: type!,
        default: def!,
        validation,
        description,
      } as Row);
    }
    out.set(name, { name, paths, text: chunk, rows });
  }
  return out;
}

const bySection = sections(md);
const sectionAt = (path: string): Section => {
  const s = [...bySection.values()].find((x) => x.paths.includes(path));
  assert.ok(s, `no section documents ${path || "the CronJob"}`);
  return s;
};
const rowAt = (path: string): Row => {
  const i = path.lastIndexOf(".");
  const row = sectionAt(path.slice(0, i)).rows.get(path.slice(i + 1));
  assert.ok(row, `no row for ${path}`);
  return row;
};
const text = (s: string): string => s.replace(/\s+/g, " ").trim().replaceAll("|", "\\|");
const props = (s: JSONSchema): Record<string, JSONSchema> => (s.properties ?? {}) as Record<string, JSONSchema>;
const shown = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v));

/** Every property the reference documents: the whole schema but the upstream ObjectMeta and Job spec. */
function fields(): { path: string; node: JSONSchema; parent: JSONSchema }[] {
  const out: { path: string; node: JSONSchema; parent: JSONSchema }[] = [];
  const visit = (s: JSONSchema, path: string): void => {
    for (const [k, v] of Object.entries(props(s))) {
      const p = `${path}.${k}`;
      out.push({ path: p, node: v, parent: s });
      if (k === "metadata" || p === ".spec.jobTemplate.spec") continue;
      if (v.type === "array") visit(v.items as JSONSchema, `${p}[]`);
      else visit(v, p);
    }
  };
  visit(schema, "");
  return out;
}

describe("the API reference (docs/reference/api.md)", () => {
  it("documents every property of the CRD's schema with its type, required-ness, checks and description", () => {
    const all = fields();
    assert.ok(all.length >= 50, `only ${all.length} fields walked`);
    // No more rows than fields either: each field once, in the section of its object type.
    assert.equal(
      [...bySection.values()].reduce((n, s) => n + s.rows.size, 0),
      all.length,
    );
    for (const { path, node, parent } of all) {
      const row = rowAt(path);
      const item = (node.type === "array" ? node.items : node) as JSONSchema;
      if (Object.keys(props(item)).length > 0) {
        // An object type: a link, to its own section or to the upstream documentation.
        assert.match(row.type, /^\[\w+\]\((#[a-z]+|https:\/\/[^)]+)\)( array)?$/, path);
        if (node.type === "array") assert.match(row.type, / array$/, path);
      } else {
        assert.ok(row.type.startsWith(String(item.type)), `${path}: type ${row.type}, the CRD says ${item.type}`);
      }
      const isRequired = ((parent.required ?? []) as string[]).includes(path.slice(path.lastIndexOf(".") + 1));
      assert.ok(row.validation.startsWith(isRequired ? "required" : "optional"), `${path}: ${row.validation}`);
      for (const k of ["minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems"]) {
        if (node[k] !== undefined) assert.ok(row.validation.includes(`${k}: ${node[k]}`), `${path}: ${k}`);
      }
      for (const v of (node.enum ?? []) as unknown[]) assert.ok(row.validation.includes(`\`${shown(v)}\``), path);
      // A pattern's | is escaped in the table (GFM: also inside a code span), as text() escapes it.
      if (node.pattern)
        assert.ok(row.validation.includes(`pattern: \`${text(String(node.pattern))}\``), `${path}: pattern`);
      if (node.format) assert.ok(row.validation.includes(`format: \`${node.format}\``), `${path}: format`);
      if (typeof node.description === "string") assert.equal(row.description, text(node.description), path);
    }
    // The root metadata is ObjectMeta, with the one check the CRD puts on it.
    assert.match(rowAt(".metadata").validation, /`name`: maxLength: 52/);
    assert.equal(api.MAX_CRONJOB_NAME_LENGTH, 52);
  });

  it("links every type it names to a section of its own, or to the Kubernetes API reference", () => {
    const anchors = new Set([...bySection.keys()].map((n) => `#${n.toLowerCase()}`));
    // API v2's part and its sections: `CronJobSpec (v2)` is #cronjobspec-v2.
    anchors.add("#api-v2");
    for (const n of v2Sections(md).keys()) anchors.add(`#${n.toLowerCase().replace(/[()]/g, "").replaceAll(" ", "-")}`);
    // The other kinds' sections.
    for (const n of typeSections(otherKindsPart(md)).keys()) anchors.add(`#${n.toLowerCase()}`);
    for (const m of md.matchAll(/\]\((#[^)]*)\)/g)) assert.ok(anchors.has(m[1]!), `dangling link ${m[1]}`);
    assert.match(
      rowAt(".spec.jobTemplate.spec").type,
      /\(https:\/\/kubernetes\.io\/docs\/reference\/kubernetes-api\/workload-resources\/job-v1\/#JobSpec\)/,
    );
    assert.match(sectionAt(".spec.jobTemplate").text, /workload-resources\/job-v1\//);
    // Stable order: the root, then breadth first in the fields' declaration order.
    assert.deepEqual([...bySection.keys()].slice(0, 6), [
      "CronJob",
      "CronJobSpec",
      "CronJobStatus",
      "CronJobSpecExclusions",
      "CronJobSpecRetry",
      "CronJobSpecAfter",
    ]);
    assert.deepEqual([...sectionAt(".spec").rows.keys()].slice(0, 2), ["schedule", "timeZone"]);
  });

  it("gives the CRD's defaults, and the webhook's of CRONJOB_SPEC_DEFAULTS", () => {
    let defaulted = 0;
    for (const { path, node } of fields()) {
      const row = rowAt(path);
      if (node.default !== undefined) {
        assert.equal(row.default, `\`${shown(node.default)}\``, path);
        defaulted++;
      } else {
        assert.ok(row.default === "" || row.default.includes("(webhook"), `${path}: ${row.default}`);
      }
    }
    assert.ok(defaulted >= 3);
    for (const [k, v] of Object.entries(api.CRONJOB_SPEC_DEFAULTS)) {
      const cell = rowAt(`.spec.${k}`).default;
      assert.ok(cell.startsWith(`\`${shown(v)}\``), `spec.${k}: ${cell}`);
      const webhookOnly = api.WEBHOOK_ONLY_DEFAULTS.has(k as keyof typeof api.CRONJOB_SPEC_DEFAULTS);
      assert.equal(cell.includes("(webhook"), webhookOnly, `spec.${k}: ${cell}`);
    }
    assert.match(rowAt(".spec.maxCatchUpRuns").default, new RegExp(`^\`${api.DEFAULT_MAX_CATCH_UP_RUNS}\` \\(webhook`));
  });

  it("says which checks the CronJob adds to the upstream Job template, each one in the CRD", () => {
    const section = sectionAt(".spec.jobTemplate").text;
    const checks = section.slice(section.indexOf("| field ", section.indexOf("Checks the zod schema")));
    assert.match(checks, /\| `spec\.template\.spec\.restartPolicy` +\| enum: `OnFailure`, `Never` +\| no +\|/);
    assert.match(checks, /\| `spec\.template\.spec\.restartPolicy` +\| required +\| no +\|/);
    assert.match(checks, /\| `spec\.template\.spec\.containers` +\| minItems: 1 +\| no +\|/);
    assert.match(checks, /\| `spec` +\| required +\| no +\|/);
    const podSpec = props(props(props(props(props(schema).spec!).jobTemplate!).spec!).template!).spec!;
    assert.deepEqual(props(podSpec).restartPolicy!.enum, [...api.RestartPolicyValues]);
    assert.ok(((podSpec.required ?? []) as string[]).includes("restartPolicy"));
    assert.equal(props(podSpec).containers!.minItems, 1);
  });

  it("lists the annotations and labels of api/v1, the printer columns, short names and categories", () => {
    const exported = Object.entries(api).filter(([k]) => /_(ANNOTATION|LABEL)$/.test(k));
    assert.ok(exported.length >= 10);
    for (const [k, key] of exported) assert.match(md, new RegExp(`^\\| \`${key}\` +\\|`, "m"), k);
    for (const c of api.printerColumns) assert.ok(md.includes(`\`${c.jsonPath}\``), c.name);
    assert.match(md, /Short names: `cron`, `crons`; categories: `all`/);
    assert.match(md, /^# API reference: CronJob \(batch\.tutorial\.kubebuilder\.io\/v1\)$/m);
    // What the backfill annotation's row says of its value, as backfillRequestOf checks it.
    const request = (extra: object) => ({
      metadata: {
        annotations: {
          [api.BACKFILL_ANNOTATION]: JSON.stringify({
            id: "a",
            from: "2026-01-01T00:00:00Z",
            to: "2026-01-02T00:00:00Z",
            ...extra,
          }),
        },
      },
    });
    assert.match(md, /"parallelism":<1-100>\}`.*`parallelism` optional \(1\)/);
    const parsed = api.backfillRequestOf(request({}));
    assert.ok(parsed?.ok && parsed.request.parallelism === 1);
    assert.equal(api.backfillRequestOf(request({ parallelism: 100 }))?.ok, true);
    assert.equal(api.backfillRequestOf(request({ parallelism: 101 }))?.ok, false);
  });

  it("changes with the schema it is given (nothing is written twice)", () => {
    const copy = structuredClone(sources);
    const s = (copy.crd as any).spec.versions[0].schema.openAPIV3Schema;
    s.properties.spec.properties.schedule.description = "A changed description.";
    s.properties.spec.properties.successfulJobsHistoryLimit.default = 7;
    s.properties.status.properties.backfill.properties.total.maximum = 1000;
    const changed = sections(apiReference(copy));
    const spec = [...changed.values()].find((x) => x.paths.includes(".spec"))!;
    assert.equal(spec.rows.get("schedule")!.description, "A changed description.");
    assert.equal(spec.rows.get("successfulJobsHistoryLimit")!.default, "`7`");
    const backfill = [...changed.values()].find((x) => x.paths.includes(".status.backfill"))!;
    assert.match(backfill.rows.get("total")!.validation, /maximum: 1000/);
    // The zod side: the checks added to the Job template.
    const zodCopy = structuredClone(sources);
    const zt = (zodCopy.zodSchema as any).properties.spec.properties.jobTemplate;
    zt.properties.spec.properties.template.properties.spec.properties.restartPolicy.enum = ["Never"];
    assert.match(apiReference(zodCopy), /\| `spec\.template\.spec\.restartPolicy` +\| enum: `Never` +\|/);
    assert.equal(apiReference(sources), md, "deterministic");
  });

  it("is committed as generated, and prettier leaves it as it is", async () => {
    const file = join(root, API_REFERENCE_PATH);
    assert.equal(readFileSync(file, "utf8"), md, `${API_REFERENCE_PATH} is stale: run make manifests`);
    const options = (await prettier.resolveConfig(file)) ?? {};
    assert.equal(await prettier.format(md, { ...options, filepath: file }), md);
  });
});

const v2BySection = v2Sections(md);
const v2SectionAt = (path: string): Section => {
  const s = [...v2BySection.values()].find((x) => x.paths.includes(path));
  assert.ok(s, `API v2 has no section for ${path || "the CronJob"}`);
  return s;
};
const v2RowAt = (path: string): Row | undefined => {
  const i = path.lastIndexOf(".");
  return v2SectionAt(path.slice(0, i)).rows.get(path.slice(i + 1));
};
const required = (s: JSONSchema | undefined): string[] => (s?.required ?? []) as string[];

/** Every property of v2's schema, and whether it is v1's: the same schema, required the same, at the same path. */
function v2Fields(): { path: string; node: JSONSchema; parent: JSONSchema; same: boolean }[] {
  const out: { path: string; node: JSONSchema; parent: JSONSchema; same: boolean }[] = [];
  const visit = (s: JSONSchema, base: JSONSchema | undefined, path: string): void => {
    for (const [k, v] of Object.entries(props(s))) {
      const p = `${path}.${k}`;
      const b = base && props(base)[k];
      const same = !!b && isDeepStrictEqual(v, b) && required(s).includes(k) === required(base).includes(k);
      out.push({ path: p, node: v, parent: s, same });
      if (same || k === "metadata") continue;
      if (v.type === "array") visit(v.items as JSONSchema, b?.items as JSONSchema | undefined, `${p}[]`);
      else visit(v, b, p);
    }
  };
  visit(v2Schema, schema, "");
  return out;
}

describe("the API reference's part on API v2", () => {
  it("says in the header that v2 is served with the conversion webhook as deployed, not by make install", () => {
    const line = md.split("\n").find((l) => l.startsWith("- Version `v2`"));
    assert.ok(line, "no header line for v2");
    assert.match(line, /^- Version `v2` \(served: true, storage: false\), through the conversion webhook /);
    assert.match(line, /`config\/crd\/patches\/webhook_in_cronjobs\.yaml`/);
    assert.match(line, /served by `config\/default`, `dist\/install\.yaml` and the Helm chart/);
    assert.match(line, /not by `make install` \(`config\/crd\/bases`: served: false\)/);
    assert.match(line, /`\.spec\.schedules` in place of `\.spec\.schedule`, `\.spec\.timeZone`/);
    assert.match(line, /\]\(\.\.\/several-schedules\.md\)/);
    assert.match(line, /\]\(#api-v2\)/);
    // What it says comes from the CRD (v2 not served in config/crd/bases) and config/crd's patch (it is deployed).
    const versions = (crd as any).spec.versions;
    assert.deepEqual(
      versions.map((v: any) => [v.name, v.served, v.storage]),
      [
        ["v1", true, true],
        ["v2", false, false],
      ],
    );
    const ops = sources.crdPatches.flatMap((p) => p.ops);
    assert.ok(ops.some((o) => o.path === "/spec/versions/1/served" && o.value === true));
    assert.ok(ops.some((o) => o.path === "/spec/conversion" && (o.value as any)?.strategy === "Webhook"));
    // v1's header line is as it was.
    assert.match(md, /^- Group: `batch\.tutorial\.kubebuilder\.io`; version: `v1` \(served: true, storage: true\)$/m);
  });

  it("documents every field v2 changes from v1 with the CRD's v2 type, required-ness, checks and description", () => {
    const all = v2Fields();
    const changed = all.filter((f) => !f.same);
    for (const p of [
      ".apiVersion",
      ".spec",
      ".spec.schedules",
      ".spec.schedules[].schedule",
      ".spec.schedules[].timeZone",
    ])
      assert.ok(
        changed.some((f) => f.path === p),
        `${p} is not a v2 change`,
      );
    // Only what differs: one row for each changed field, none for v1's.
    assert.equal(
      [...v2BySection.values()].reduce((n, s) => n + s.rows.size, 0),
      changed.length,
    );
    for (const { path, node, parent } of changed) {
      const row = v2RowAt(path);
      assert.ok(row, `API v2: no row for ${path}`);
      const item = (node.type === "array" ? node.items : node) as JSONSchema;
      if (Object.keys(props(item)).length > 0) {
        // A changed object type: a link to its v2 section.
        assert.match(row.type, /^\[\w+ \(v2\)\]\(#[a-z]+-v2\)( array)?$/, path);
        if (node.type === "array") assert.match(row.type, / array$/, path);
      } else {
        assert.ok(row.type.startsWith(String(item.type)), `${path}: type ${row.type}, the CRD says ${item.type}`);
      }
      const isRequired = required(parent).includes(path.slice(path.lastIndexOf(".") + 1));
      assert.ok(row.validation.startsWith(isRequired ? "required" : "optional"), `${path}: ${row.validation}`);
      for (const k of ["minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems"]) {
        if (node[k] !== undefined) assert.ok(row.validation.includes(`${k}: ${node[k]}`), `${path}: ${k}`);
      }
      for (const v of (node.enum ?? []) as unknown[]) assert.ok(row.validation.includes(`\`${shown(v)}\``), path);
      if (typeof node.description === "string") assert.equal(row.description, text(node.description), path);
    }
    // v1's fields of a changed type: no row, named as v1's, with a link to v1's section.
    for (const { path, same } of all) {
      if (!same) continue;
      const parent = path.slice(0, path.lastIndexOf("."));
      const section = v2SectionAt(parent);
      assert.equal(section.rows.get(path.slice(path.lastIndexOf(".") + 1)), undefined, path);
      assert.match(
        section.text,
        new RegExp(`its other fields, [^;]*\`${path.slice(path.lastIndexOf(".") + 1)}\``),
        path,
      );
      assert.match(
        section.text,
        new RegExp(`changes from v1's \\[${sectionAt(parent).name}\\]\\(#${sectionAt(parent).name.toLowerCase()}\\)`),
      );
    }
    // No v1 type written twice: the Job template, the status and their types are v1's.
    for (const name of v2BySection.keys()) assert.match(name, /^(CronJob|CronJobSpec|CronJobSpecSchedule) \(v2\)$/);
  });

  it("gives spec.schedules its bound (16; none is the webhook's, with spec.after) and its entry type's fields, from the CRD and the zod schema", () => {
    const schedules = v2RowAt(".spec.schedules")!;
    assert.equal(schedules.type, "[CronJobSpecSchedule (v2)](#cronjobspecschedule-v2) array");
    assert.equal(schedules.validation, "required; maxItems: 16");
    assert.equal(MAX_SCHEDULES, 16);
    const zodSchedules = props(props(sources.otherZodSchemas.v2!).spec!).schedules!;
    assert.equal(zodSchedules.minItems, undefined);
    assert.equal(zodSchedules.maxItems, MAX_SCHEDULES);
    const entry = v2SectionAt(".spec.schedules[]");
    assert.equal(entry.name, "CronJobSpecSchedule (v2)");
    assert.deepEqual([...entry.rows.keys()], ["schedule", "timeZone"]);
    assert.equal(entry.rows.get("schedule")!.validation, "required; minLength: 1; maxLength: 1024");
    assert.equal(entry.rows.get("timeZone")!.validation, "optional; minLength: 1; maxLength: 255");
    assert.match(entry.rows.get("schedule")!.description, /^A schedule in Cron format: .*this entry's timeZone\.$/);
    assert.match(entry.rows.get("timeZone")!.description, /^The IANA time zone name this schedule .* If unset, UTC\.$/);
    assert.match(entry.text, /New in v2: v1 has no `\.spec\.schedules`\./);
    // The spec section: v1's schedule and timeZone are not in v2, the other fields are v1's.
    const spec = v2SectionAt(".spec");
    assert.deepEqual([...spec.rows.keys()], ["schedules"]);
    assert.match(spec.text, /v1's `schedule`, `timeZone` are not in it\./);
    assert.match(spec.text, /its other fields, `startingDeadlineSeconds`, .*`jobTemplate`, .*are v1's/);
    assert.match(v2RowAt(".apiVersion")!.validation, /^required; enum: `batch\.tutorial\.kubebuilder\.io\/v2`$/);
  });

  it("lists v2's printer columns", () => {
    const part = v2Part(md);
    const columns = part.slice(part.indexOf("\n### Printer columns (v2)\n"));
    const rows = columns
      .split("\n")
      .filter((l) => l.startsWith("| "))
      .slice(2)
      .map(cells);
    assert.deepEqual(
      rows.map((r) => [r[0], r[2]]),
      v2.printerColumns.map((c) => [c.name, `\`${c.jsonPath}\``]),
    );
    assert.ok(!columns.includes("`.spec.schedule`"), "v2 has no .spec.schedule column");
    assert.match(columns, /`kubectl get cronjobs\.v2\.batch\.tutorial\.kubebuilder\.io`/);
  });

  it("changes with the v2 schema, the zod schema and config/crd's patches it is given", () => {
    const copy = structuredClone(sources);
    const s = (copy.crd as any).spec.versions[1].schema.openAPIV3Schema;
    s.properties.spec.properties.schedules.maxItems = 20;
    s.properties.spec.properties.schedules.items.properties.timeZone.description = "A changed description.";
    // A v2 field made different from v1's is documented; one made v1's again is not.
    s.properties.status.properties.activeCount.maximum = 5;
    s.properties.apiVersion = structuredClone((schema as any).properties.apiVersion);
    const changed = v2Sections(apiReference(copy));
    const at = (path: string) => [...changed.values()].find((x) => x.paths.includes(path))!;
    assert.match(at(".spec").rows.get("schedules")!.validation, /maxItems: 20/);
    assert.equal(at(".spec.schedules[]").rows.get("timeZone")!.description, "A changed description.");
    assert.equal(at(".status").name, "CronJobStatus (v2)");
    assert.deepEqual([...at(".status").rows.keys()], ["activeCount"]);
    assert.match(at(".status").rows.get("activeCount")!.validation, /maximum: 5/);
    assert.deepEqual([...at("").rows.keys()], ["spec", "status"]);
    // The zod side: field order.
    const zodCopy = structuredClone(sources);
    const entry = (zodCopy.otherZodSchemas.v2 as any).properties.spec.properties.schedules.items;
    entry.properties = { timeZone: entry.properties.timeZone, schedule: entry.properties.schedule };
    const reordered = [...v2Sections(apiReference(zodCopy)).values()].find((x) =>
      x.paths.includes(".spec.schedules[]"),
    )!;
    assert.deepEqual([...reordered.rows.keys()], ["timeZone", "schedule"]);
    // Without config/crd's patch, v2 is not served and nothing says it is.
    const unpatched = apiReference({ ...sources, crdPatches: [] });
    assert.match(unpatched, /^- Version `v2` \(served: false, storage: false\); v1 with /m);
    assert.ok(!unpatched.includes("make install"));
    // A patch that changes what the reference documents (a schema) stops the generator.
    const schemaPatch = { file: "x.yaml", ops: [{ op: "replace", path: "/spec/versions/1/schema", value: {} }] };
    assert.throws(
      () => apiReference({ ...sources, crdPatches: [schemaPatch] }),
      /x\.yaml: replace \/spec\/versions\/1\/schema/,
    );
    // A version with no zod schema, or none of its user documentation, stops it too.
    const v3 = structuredClone(crd) as any;
    v3.spec.versions.push({ ...structuredClone(v3.spec.versions[1]), name: "v3" });
    assert.throws(() => referenceSources(v3, defs), /version v3: give its zod schema/);
    assert.throws(
      () =>
        apiReference({
          ...sources,
          crd: v3,
          otherZodSchemas: { ...sources.otherZodSchemas, v3: sources.otherZodSchemas.v2! },
        }),
      /version v3: link its user documentation/,
    );
    assert.equal(apiReference(sources), md, "deterministic");
  });
});

describe("the API reference's part on the group's other kinds", () => {
  const part = otherKindsPart(md);
  const kindSections = typeSections(part);

  it("documents every property of each kind's CRD, with its type, required-ness, checks and description", () => {
    assert.deepEqual(
      sources.otherKinds.map((k) => (k.crd as any).spec.names.kind),
      SIMPLE_KINDS.map((k) => k.kind),
    );
    let rows = 0;
    for (const k of sources.otherKinds) {
      const kindSchema = (k.crd as any).spec.versions[0].schema.openAPIV3Schema as JSONSchema;
      const kind = (k.crd as any).spec.names.kind as string;
      const at = (path: string): Section => {
        const sec = [...kindSections.values()].find((x) => x.paths.includes(path) && x.name.startsWith(kind));
        assert.ok(sec, `no section documents ${kind}${path}`);
        return sec;
      };
      const visit = (node: JSONSchema, path: string): void => {
        for (const [f, v] of Object.entries(props(node))) {
          const row = at(path).rows.get(f);
          assert.ok(row, `${kind}: no row for ${path}.${f}`);
          rows++;
          const isRequired = required(node).includes(f);
          assert.ok(row.validation.startsWith(isRequired ? "required" : "optional"), `${kind}${path}.${f}`);
          for (const c of ["minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems"]) {
            if (v[c] !== undefined) assert.ok(row.validation.includes(`${c}: ${v[c]}`), `${kind}${path}.${f}: ${c}`);
          }
          if (typeof v.description === "string") assert.equal(row.description, text(v.description), `${path}.${f}`);
          if (f === "metadata") continue;
          if (v.type === "array") visit(v.items as JSONSchema, `${path}.${f}[]`);
          else visit(v, `${path}.${f}`);
        }
      };
      visit(kindSchema, "");
      // The kind's facts and printer columns, from its CRD.
      const root = kindSections.get(kind)!;
      const names = (k.crd as any).spec.names;
      assert.match(
        root.text,
        new RegExp(`- Resource: \`${names.plural}\` \\(singular \`${names.singular}\`\\), namespaced`),
      );
      assert.ok(root.text.includes(`- Short names: ${names.shortNames.map((n: string) => `\`${n}\``).join(", ")}`));
      for (const c of (k.crd as any).spec.versions[0].additionalPrinterColumns)
        assert.ok(root.text.includes(`\`${c.jsonPath}\``), `${kind}: column ${c.name}`);
    }
    assert.equal(
      [...kindSections.values()].reduce((n, x) => n + x.rows.size, 0),
      rows,
      "each field once",
    );
  });

  it("names ExclusionCalendar's types and links them from the page's header", () => {
    assert.deepEqual(
      [...kindSections.keys()].filter((n) => n.startsWith("ExclusionCalendar")),
      ["ExclusionCalendar", "ExclusionCalendarSpec", "ExclusionCalendarSpecWindow"],
    );
    assert.match(
      md,
      /^- Other kinds of the group: \[ConcurrencyGroup\]\(#concurrencygroup\), \[ExclusionCalendar\]\(#exclusioncalendar\)$/m,
    );
    const windows = kindSections.get("ExclusionCalendarSpec")!.rows.get("windows")!;
    assert.match(windows.validation, new RegExp(`^required; maxItems: \\d+; list type: \`atomic\`$`));
    assert.equal(windows.type, "[ExclusionCalendarSpecWindow](#exclusioncalendarspecwindow) array");
    assert.match(md, /^\| `batch\.tutorial\.kubebuilder\.io\/retry-attempt` +\|/m);
    assert.match(md, /^\| `batch\.tutorial\.kubebuilder\.io\/retry-of` +\|/m);
  });
});
