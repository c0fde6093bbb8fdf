// `make manifests`: writes the generated manifests under config/ (controller-gen's job in a Go project),
// dist/install.yaml, config/default rendered into one file, dist/chart, the Helm chart (hack/helmgen), and
// docs/reference/api.md, the API reference (crd-ref-docs' job; hack/apidocs).
//
//   node hack/generate-manifests.ts [--openapi FILE | --from-cluster] [--check]
//
// The jobTemplate schema comes from Kubernetes OpenAPI v2 definitions: by default the pinned v1.35.0 data
// vendored in third_party/k8s-openapi (--openapi FILE or K8S_OPENAPI override it); --from-cluster reads the current kubectl
// context's /openapi/v2 so the CRD matches your cluster's version. --check writes nothing and exits 1
// if a committed file is stale.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { parse, stringify } from "yaml";
import { cronJobCRD, MAX_DESCRIPTION_LENGTH, SIMPLE_KINDS, simpleKindCRD } from "./crdgen/crd.ts";
import { definitionsOf, type Definitions } from "./crdgen/openapi.ts";
import { readVendoredOpenAPI, VENDORED_OPENAPI } from "./crdgen/vendored-openapi.ts";
import { SHARDING_RBAC } from "../controllers/rbac.ts";
import { extraRBACFiles, LEADER_ELECTION_ROLE_PATH, managerRoleYAML, ROLE_PATH, ungranted } from "./crdgen/rbac.ts";
import { webhookConfigurations } from "./crdgen/webhook.ts";
import { PROMETHEUS_RULE_PATH, prometheusRuleYAML } from "./crdgen/prometheusrule.ts";
import { keepManagerImage } from "./crdgen/installer.ts";
import { CHART_DIR, chartFiles } from "./helmgen/chart.ts";
import { API_REFERENCE_PATH, apiReference, referenceSources } from "./apidocs/reference.ts";
import { runbookPaths, TROUBLESHOOTING_PATH, withCauses, withRunbookCauses } from "./apidocs/causes.ts";
import * as api from "../api/v1/index.ts";
import { KREW_MANIFEST_PATH, krewManifestYAML } from "./krew.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

function loadDefinitions(args: { openapi?: string; "from-cluster"?: boolean }): { defs: Definitions; source: string } {
  if (args["from-cluster"]) {
    const raw = execFileSync("kubectl", ["get", "--raw", "/openapi/v2"], { maxBuffer: 512 * 1024 * 1024 });
    return {
      defs: definitionsOf(JSON.parse(raw.toString("utf8")), "kubectl get --raw /openapi/v2"),
      source: "cluster",
    };
  }
  const file = args.openapi ?? process.env.K8S_OPENAPI;
  if (!file) return { defs: definitionsOf(readVendoredOpenAPI(), VENDORED_OPENAPI), source: VENDORED_OPENAPI };
  if (!existsSync(file)) {
    throw new Error(
      `OpenAPI definitions not found at ${file}: pass --openapi FILE, set K8S_OPENAPI, or use --from-cluster`,
    );
  }
  return { defs: definitionsOf(JSON.parse(readFileSync(file, "utf8")), file), source: file };
}

export function renderYAML(obj: unknown): string {
  return "---\n" + stringify(obj, { lineWidth: 0, aliasDuplicateObjects: false });
}

function main(): number {
  const { values } = parseArgs({
    options: {
      openapi: { type: "string" },
      "from-cluster": { type: "boolean" },
      check: { type: "boolean" },
    },
  });
  const { defs } = loadDefinitions(values);
  const files = new Map<string, string>();
  const crd = cronJobCRD({ definitions: defs, maxDescriptionLength: MAX_DESCRIPTION_LENGTH });
  files.set(
    join(
      "config",
      "crd",
      "bases",
      `${api.RESOURCE}.yaml`.replace(`${api.PLURAL}.${api.GROUP}`, `${api.GROUP}_${api.PLURAL}`),
    ),
    renderYAML(crd),
  );
  // The simple kinds' CRDs (ConcurrencyGroup, ExclusionCalendar): one version each, no status.
  for (const kind of SIMPLE_KINDS) {
    files.set(
      join("config", "crd", "bases", `${api.GROUP}_${kind.plural}.yaml`),
      renderYAML(simpleKindCRD(kind, { definitions: defs, maxDescriptionLength: MAX_DESCRIPTION_LENGTH })),
    );
  }
  // The manager's ClusterRole, from the controllers' RBAC declarations (controllers/rbac.ts).
  files.set(ROLE_PATH, managerRoleYAML());
  // The RBAC the other installs add (config/tenant, config/sharded, config/platform): namespace claims, the namespace
  // reader, a tenant's Role in each of its namespaces and its ClusterRole, the conversion webhook server's roles.
  for (const [rel, content] of extraRBACFiles()) files.set(rel, content);
  // A sharded install's replicas keep their own Leases with the (static) leader-election Role.
  const leaderElection = parse(readFileSync(join(root, LEADER_ELECTION_ROLE_PATH), "utf8")) as { rules?: [] };
  const missing = ungranted(SHARDING_RBAC, leaderElection.rules ?? []);
  if (missing.length)
    throw new Error(
      `${LEADER_ELECTION_ROLE_PATH} does not grant what --sharding needs (SHARDING_RBAC): ${missing.join(", ")}`,
    );
  files.set(PROMETHEUS_RULE_PATH, prometheusRuleYAML(root));
  // The admission webhook configurations, from the webhook declarations (webhooks/cronjob_webhook.ts).
  files.set(join("config", "webhook", "manifests.yaml"), webhookConfigurations().map(renderYAML).join(""));
  // The API reference, from the CRD above and the zod schemas it comes from (hack/apidocs/reference.ts).
  files.set(API_REFERENCE_PATH, apiReference(referenceSources(crd, defs)));
  // docs/troubleshooting.md's causes, from the table `kubectl cron why` diagnoses with (cmd/kubectl-cron/answer/causes.ts).
  files.set(TROUBLESHOOTING_PATH, withCauses(readFileSync(join(root, TROUBLESHOOTING_PATH), "utf8")));
  // Each runbook's list of the causes behind its alert, from the same table.
  // (A cause naming an alert with no runbook is test/unit/troubleshooting.test.ts's to report.)
  for (const rel of runbookPaths().filter((r) => existsSync(join(root, r)))) {
    files.set(rel, withRunbookCauses(rel, readFileSync(join(root, rel), "utf8")));
  }

  // The krew plugin manifest's template (its release fills in the archive's URL and sha256: hack/krew.ts).
  files.set(KREW_MANIFEST_PATH, krewManifestYAML());

  let stale = 0;
  for (const [rel, content] of files) stale += syncFile(rel, content, values.check ?? false);
  // dist/install.yaml, the one-file installer (kubebuilder's build-installer output), rendered from the files
  // above as they are on disk now, with the manager image it has (a `make build-installer IMG=…` result's).
  if (!stale) stale += syncFile(INSTALLER_PATH, installerYAML(), values.check ?? false);
  // dist/chart, the Helm chart, from config/ as rendered now (hack/helmgen); files it no longer has go.
  if (!stale) stale += syncChart(values.check ?? false);
  return stale ? 1 : 0;
}

const INSTALLER_PATH = join("dist", "install.yaml");

/** config/default rendered by kubectl's built-in kustomize, with the manager image dist/install.yaml has. */
function installerYAML(): string {
  let rendered: string;
  try {
    rendered = execFileSync("kubectl", ["kustomize", join(root, "config", "default")], {
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim();
    throw new Error(`kubectl kustomize config/default failed (needed for ${INSTALLER_PATH}): ${stderr || String(err)}`);
  }
  const existing = join(root, INSTALLER_PATH);
  return keepManagerImage(rendered, existsSync(existing) ? readFileSync(existing, "utf8") : undefined);
}

/** dist/chart's files written (or compared); a file there that is no longer generated is removed (or reported). */
function syncChart(check: boolean): number {
  const files = chartFiles(root);
  // The krew plugin manifest's template (its release fills in the archive's URL and sha256: hack/krew.ts).
  files.set(KREW_MANIFEST_PATH, krewManifestYAML());

  let stale = 0;
  for (const [rel, content] of files) stale += syncFile(rel, content, check);
  const dir = join(root, CHART_DIR);
  const existing = existsSync(dir) ? readdirSync(dir, { recursive: true, withFileTypes: true }) : [];
  for (const f of existing) {
    if (!f.isFile()) continue;
    const rel = relative(root, join(f.parentPath, f.name));
    if (files.has(rel)) continue;
    if (check) {
      console.error(`stale: ${rel} is no longer generated (run make manifests)`);
      stale++;
    } else {
      rmSync(join(root, rel));
      console.log(`removed ${rel}`);
    }
  }
  return stale;
}

/** Write (or, with check, compare) one generated file; returns 1 when check finds it stale. */
function syncFile(rel: string, content: string, check: boolean): number {
  const abs = join(root, rel);
  const current = existsSync(abs) ? readFileSync(abs, "utf8") : undefined;
  if (current === content) return 0;
  if (check) {
    console.error(`stale: ${relative(process.cwd(), abs)} (run make manifests)`);
    return 1;
  }
  mkdirSync(dirname(abs), { recursive: true });
  writeFileSync(abs, content);
  console.log(`wrote ${rel} (${Buffer.byteLength(content)} bytes)`);
  return 0;
}

try {
  process.exitCode = main();
} catch (err) {
  console.error(`generate-manifests: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
