// The deployment side: every config/ overlay builds with `kubectl kustomize` and refers only to files that
// exist, the manager's Deployment is hardened and runs flags the manager accepts, the default overlay is
// namespaced and prefixed and provisions its own webhook certificate (no cert-manager kinds) while
// config/default-certmanager is the same with cert-manager's certificates, the generated RBAC is current and
// least-privilege (exactly the verbs the code calls), the NetworkPolicies match the manager's ports, and the
// Dockerfile passes hack/lint-dockerfile.ts.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { parse, parseAllDocuments } from "yaml";
import * as api from "../../api/v1/index.ts";
import { parseExclusionWindows } from "../../api/v1/schedule/index.ts";
import { parseFlags } from "../../cmd/flags.ts";
import {
  CRONJOB_CONTROLLER_RBAC,
  MANAGER_RBAC,
  MUTATING_WEBHOOK_CONFIGURATION,
  NAMESPACE_CLAIMS_RBAC,
  NAMESPACE_SELECTOR_RBAC,
  type RBACMarker,
  SHARDING_RBAC,
  VALIDATING_WEBHOOK_CONFIGURATION,
  WEBHOOK_CERT_RBAC,
  WEBHOOK_SERVICE,
  WEBHOOK_CERT_SECRET,
} from "../../controllers/rbac.ts";
import {
  CONVERSION_WEBHOOK_RBAC,
  extraRBACFiles,
  managerRoles,
  managerRoleYAML,
  normaliseRules,
  ROLE_PATH,
  tenantSplit,
  ungranted,
} from "../../hack/crdgen/rbac.ts";
import { webhookConfigurations } from "../../hack/crdgen/webhook.ts";
import { isIgnored, lintDockerfile, parseDockerfile, parseDockerignore } from "../../hack/lint-dockerfile.ts";
import { Kinds, type ResourceKind } from "../../runtime/kinds.ts";
import { CertKinds } from "../../runtime/webhook/certprovisioner.ts";
import { POD_GATEWAY_IP } from "../../envtest/node-host.ts";
import { FLEET_WEBHOOK_SERVICE_PORT } from "../../webhooks/fleet_webhooks.ts";
import { FAIL_ONCE_SERVED_ANNOTATION } from "../../webhooks/unserved.ts";

const root = resolve(import.meta.dirname, "..", "..");
const KUBECTL = process.env.KUBECTL ?? "kubectl";
const NAMESPACE = "cronjob-operator-system";
const PREFIX = "cronjob-operator-";
const WEBHOOK_MANIFESTS = join(root, "config", "webhook", "manifests.yaml");
const OVERLAYS = [
  "crd",
  "rbac",
  "manager",
  "webhook",
  "certmanager",
  "prometheus",
  "network-policy",
  "default",
  "default-certmanager",
  "local",
  "samples",
  "tenant",
  "sharded",
  "platform",
];

type Obj = Record<string, any>;

const built = new Map<string, Obj[]>();

/** `kubectl kustomize config/<dir>`, parsed; fails the test with kustomize's error. */
function kustomize(dir: string): Obj[] {
  const cached = built.get(dir);
  if (cached) return cached;
  if ((dir === "webhook" || dir === "default") && !existsSync(WEBHOOK_MANIFESTS)) {
    assert.fail(
      `config/webhook/manifests.yaml is missing: config/${dir} includes it (the webhook configurations generated ` +
        `by make manifests). Generate it, then rerun.`,
    );
  }
  const r = spawnSync(KUBECTL, ["kustomize", join(root, "config", dir)], { encoding: "utf8", maxBuffer: 64 << 20 });
  if (r.error) assert.fail(`cannot run ${KUBECTL} (kustomize is built into kubectl ≥ 1.14): ${r.error.message}`);
  assert.equal(r.status, 0, `kubectl kustomize config/${dir} failed:\n${r.stderr}`);
  const objs = parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
  assert.ok(objs.length > 0, `config/${dir} builds no objects`);
  built.set(dir, objs);
  return objs;
}

const find = (objs: Obj[], kind: string, name?: string): Obj => {
  const o = objs.find((x) => x.kind === kind && (name === undefined || x.metadata?.name === name));
  assert.ok(
    o,
    `no ${kind}${name ? ` ${name}` : ""} in [${objs.map((x) => `${x.kind}/${x.metadata?.name}`).join(", ")}]`,
  );
  return o;
};

const managerContainer = (dep: Obj): Obj => {
  const c = dep.spec.template.spec.containers.find((x: Obj) => x.name === "manager");
  assert.ok(c, "the Deployment has no manager container");
  return c;
};

// Exactly what the code calls (see controllers/rbac.ts): no get on cronjobs (read from the cache), no
// get/patch on cronjobs/status (written with PUT), no events.k8s.io (core/v1 Events are recorded).
const CRONJOB_RULES = [
  { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
  // A run whose Pods never started: its Pods are read once its start limit passes (controllers/starts.ts).
  { apiGroups: [""], resources: ["pods"], verbs: ["list"] },
  { apiGroups: ["batch"], resources: ["jobs"], verbs: ["create", "delete", "get", "list", "update", "watch"] },
  {
    apiGroups: [api.GROUP],
    resources: ["concurrencygroups", "cronjobs", "exclusioncalendars"],
    verbs: ["list", "watch"],
  },
  { apiGroups: [api.GROUP], resources: ["cronjobs/finalizers", "cronjobs/status"], verbs: ["update"] },
];
// The webhook certificate provisioner: its own two webhook configurations (names prefixed by kustomize)...
const webhookConfigRules = (prefix = "") => [
  {
    apiGroups: ["admissionregistration.k8s.io"],
    resourceNames: [`${prefix}${MUTATING_WEBHOOK_CONFIGURATION}`],
    resources: ["mutatingwebhookconfigurations"],
    verbs: ["get", "list", "update", "watch"],
  },
  {
    apiGroups: ["admissionregistration.k8s.io"],
    resourceNames: [`${prefix}${VALIDATING_WEBHOOK_CONFIGURATION}`],
    resources: ["validatingwebhookconfigurations"],
    verbs: ["get", "list", "update", "watch"],
  },
];
// ...and the CRD, whose conversion webhook (v1 ↔ v2) it gives the caBundle.
const CRD_RULE = {
  apiGroups: ["apiextensions.k8s.io"],
  resourceNames: [api.RESOURCE],
  resources: ["customresourcedefinitions"],
  verbs: ["get", "list", "update", "watch"],
};
const EXPECTED_RULES = [...CRONJOB_RULES.slice(0, 2), ...webhookConfigRules(), CRD_RULE, ...CRONJOB_RULES.slice(2)];
// ...and, in the Role of the manager's namespace, its own Secret (create cannot be limited to a name).
// The failure gate, in the same Role: the webhook Service (which port is which) and its EndpointSlices.
const gateRoleRules = (prefix = "") => [
  { apiGroups: [""], resourceNames: [`${prefix}${WEBHOOK_SERVICE}`], resources: ["services"], verbs: ["get"] },
  { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
];
const EXPECTED_ROLE_RULES = [
  { apiGroups: [""], resources: ["secrets"], verbs: ["create"] },
  {
    apiGroups: [""],
    resourceNames: [WEBHOOK_CERT_SECRET],
    resources: ["secrets"],
    verbs: ["get", "list", "update", "watch"],
  },
  ...gateRoleRules(),
];

/**
 * Calls the scan below cannot see, matched by hand and tied to the code by a pattern that must be there:
 * the provisioner's CA bundle injector reaches both webhook configuration kinds through a variable, and the
 * provisioner watches the Secret and the configurations with Informers (list, watch).
 */
const PROVISIONER = join("runtime", "webhook", "certprovisioner.ts");
const INJECTOR = join("runtime", "webhook", "cabundleinjector.ts");
const CONFIGS = [CertKinds.MutatingWebhookConfiguration, CertKinds.ValidatingWebhookConfiguration];
const GATE = join("runtime", "webhook", "failuregate.ts");
const DYNAMIC_CALLS: Array<{ file?: string; pattern: RegExp; kinds: ResourceKind[]; verbs: string[] }> = [
  { file: INJECTOR, pattern: /\bclient\.get<WebhookConfiguration>\(kind,/, kinds: CONFIGS, verbs: ["get"] },
  { file: INJECTOR, pattern: /\bclient\.update<WebhookConfiguration>\(kind,/, kinds: CONFIGS, verbs: ["update"] },
  {
    file: INJECTOR,
    pattern: /\bclient\.get<CustomResourceDefinition>\(kind,/,
    kinds: [CertKinds.CustomResourceDefinition],
    verbs: ["get"],
  },
  {
    file: INJECTOR,
    pattern: /\bclient\.update<CustomResourceDefinition>\(kind,/,
    kinds: [CertKinds.CustomResourceDefinition],
    verbs: ["update"],
  },
  {
    pattern: /new Informer<KubeObject>\(this\.o\.client, kind,/,
    kinds: [CertKinds.Secret, ...CONFIGS, CertKinds.CustomResourceDefinition],
    verbs: ["list", "watch"],
  },
  // The failure gate: the configurations it is given (through a variable), and its informers.
  { file: GATE, pattern: /\bclient\.get<Configuration>\(kind,/, kinds: CONFIGS, verbs: ["get"] },
  { file: GATE, pattern: /\bclient\.update<Configuration>\(kind,/, kinds: CONFIGS, verbs: ["update"] },
  { file: GATE, pattern: /new Informer<KubeObject>\(this\.o\.client, kind,/, kinds: CONFIGS, verbs: ["list", "watch"] },
  {
    file: GATE,
    pattern: /new Informer<EndpointSlice>\(this\.o\.client, Kinds\.EndpointSlice,/,
    kinds: [Kinds.EndpointSlice],
    verbs: ["list", "watch"],
  },
];

/**
 * The API calls the code makes, found in the source: client.<verb>(<kind>, ...), client.request("<METHOD>",
 * collectionPath|objectPath(<kind>, ...)) and the informers of .for(<kind>) / .owns(<kind>) (list, watch).
 * Returns "group|resource|verb" strings with the places they were found.
 */
function apiCallsIn(dirs: string[]): Map<string, string[]> {
  const kinds = new Map<string, ResourceKind>([
    ["CronJobKind", api.CronJobResource],
    ["CronJobResource", api.CronJobResource],
    ["ConcurrencyGroupResource", api.ConcurrencyGroupResource],
    ["ExclusionCalendarResource", api.ExclusionCalendarResource],
  ]);
  for (const [k, v] of Object.entries(Kinds)) kinds.set(`Kinds.${k}`, v);
  for (const [k, v] of Object.entries(CertKinds)) kinds.set(`CertKinds.${k}`, v);
  const KIND = String.raw`(CronJobKind|CronJobResource|ConcurrencyGroupResource|ExclusionCalendarResource|Kinds\.\w+|CertKinds\.\w+)`;
  const GENERIC = String.raw`(?:<[^>()]*>)?`;
  const clientCall = new RegExp(
    String.raw`\bclient\.(get|list|watch|create|update|updateStatus|patch|delete)\s*${GENERIC}\(\s*${KIND}\b`,
    "g",
  );
  const rawCall = new RegExp(
    String.raw`\bclient\.request\s*${GENERIC}\(\s*"(GET|POST|PUT|PATCH|DELETE)",\s*(collectionPath|objectPath)\(\s*${KIND}\b`,
    "g",
  );
  const informer = new RegExp(String.raw`\.(for|owns|watches)\(\s*${KIND}\b`, "g");
  const calls = new Map<string, string[]>();
  const add = (kindRef: string, verb: string, subresource: string, where: string) => {
    const k = kinds.get(kindRef);
    assert.ok(k, `${where}: unknown kind ${kindRef}`);
    const key = `${k.group}|${k.plural}${subresource ? `/${subresource}` : ""}|${verb}`;
    calls.set(key, [...(calls.get(key) ?? []), where]);
  };
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((f) => {
      const p = join(dir, f);
      return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
    });
  for (const file of dirs.flatMap((d) => files(join(root, d)))) {
    const src = readFileSync(file, "utf8");
    const at = (i: number) => `${relative(root, file)}:${src.slice(0, i).split("\n").length}`;
    for (const m of src.matchAll(clientCall)) {
      const verb = m[1] === "updateStatus" ? "update" : m[1]!;
      add(m[2]!, verb, m[1] === "updateStatus" ? "status" : "", at(m.index));
    }
    for (const m of src.matchAll(rawCall)) {
      const method = m[1]!;
      const verb =
        method === "GET"
          ? m[2] === "collectionPath"
            ? "list"
            : "get"
          : { POST: "create", PUT: "update", PATCH: "patch", DELETE: "delete" }[method]!;
      add(m[3]!, verb, "", at(m.index));
    }
    for (const m of src.matchAll(informer)) {
      add(m[2]!, "list", "", at(m.index));
      add(m[2]!, "watch", "", at(m.index));
    }
  }
  for (const d of DYNAMIC_CALLS) {
    const file = d.file ?? PROVISIONER;
    const src = readFileSync(join(root, file), "utf8");
    const m = d.pattern.exec(src);
    assert.ok(m, `${file} no longer contains ${d.pattern}: update DYNAMIC_CALLS`);
    const where = `${file}:${src.slice(0, m.index).split("\n").length}`;
    for (const k of d.kinds) {
      for (const v of d.verbs) {
        const key = `${k.group}|${k.plural}|${v}`;
        calls.set(key, [...(calls.get(key) ?? []), where]);
      }
    }
  }
  return calls;
}

/** Every resource and file a kustomization.yaml refers to, also in commented-out entries (`#- ../x`). */
function kustomizationRefs(dir: string): string[] {
  const text = readFileSync(join(dir, "kustomization.yaml"), "utf8");
  const k = (parse(text) ?? {}) as Obj;
  const refs: string[] = [
    ...((k.resources as string[] | undefined) ?? []),
    ...((k.components as string[] | undefined) ?? []),
    ...((k.configurations as string[] | undefined) ?? []),
    ...((k.patches as Obj[] | undefined) ?? []).flatMap((p) => (typeof p.path === "string" ? [p.path] : [])),
  ];
  for (const m of text.matchAll(/^\s*#\s*-\s+(?:path:\s*)?((?:\.\.\/)?[\w./-]+?(?:\.ya?ml)?)\s*$/gm)) {
    const ref = m[1]!;
    if (ref.endsWith(".yaml") || ref.endsWith(".yml") || ref.startsWith("../")) refs.push(ref);
  }
  return refs;
}

describe("config/ overlays build with kubectl kustomize", () => {
  for (const dir of OVERLAYS) {
    it(`config/${dir}`, () => {
      kustomize(dir);
    });
  }

  it("every overlay is tested, and every reference in a kustomization.yaml (also commented out) exists", () => {
    const dirs = readdirSync(join(root, "config")).filter((d) =>
      existsSync(join(root, "config", d, "kustomization.yaml")),
    );
    assert.deepEqual([...dirs].sort(), [...OVERLAYS].sort());
    const missing: string[] = [];
    for (const d of dirs) {
      const base = join(root, "config", d);
      for (const ref of kustomizationRefs(base)) {
        if (!existsSync(resolve(base, ref))) missing.push(`config/${d}/kustomization.yaml: ${ref}`);
      }
    }
    assert.deepEqual(missing, []);
    // config/default refers to the optional overlays (commented out) that exist.
    const defaults = kustomizationRefs(join(root, "config", "default"));
    for (const optional of ["../prometheus", "../network-policy"]) assert.ok(defaults.includes(optional), optional);
  });
});

describe("generated RBAC (controllers/rbac.ts → config/rbac/role.yaml)", () => {
  it("is up to date (make manifests)", () => {
    assert.equal(
      readFileSync(join(root, ROLE_PATH), "utf8"),
      managerRoleYAML(),
      `${ROLE_PATH} is stale: run make manifests`,
    );
    // The pieces of config/tenant, config/sharded and config/platform.
    for (const [rel, content] of extraRBACFiles()) {
      assert.equal(readFileSync(join(root, rel), "utf8"), content, `${rel} is stale: run make manifests`);
    }
  });

  it("splits the manager's cluster-wide rules for a tenant: a Role per namespace, its webhook configurations, the CRD none", () => {
    const split = tenantSplit();
    const global = MANAGER_RBAC.filter((m) => !m.namespace);
    assert.equal(split.namespace.length + split.cluster.length + split.conversion.length, global.length);
    for (const m of global) {
      const groups = [split.namespace, split.cluster, split.conversion].filter((g) => g.includes(m));
      assert.equal(groups.length, 1, JSON.stringify(m));
    }
    assert.deepEqual(normaliseRules(split.namespace), CRONJOB_RULES);
    assert.deepEqual(normaliseRules(split.cluster), webhookConfigRules());
    assert.deepEqual(normaliseRules(split.conversion), [CRD_RULE]);
  });

  it("grants exactly what the CronJob controller and the webhook certificate provisioner need", () => {
    const objs = kustomize("rbac");
    assert.deepEqual(find(objs, "ClusterRole", "manager-role").rules, EXPECTED_RULES);
    const role = objs.find((o) => o.kind === "Role" && o.metadata.name === "manager-role");
    assert.ok(role, "no Role manager-role");
    assert.equal(role.metadata.namespace, "system");
    assert.deepEqual(role.rules, EXPECTED_ROLE_RULES);
    assert.deepEqual(normaliseRules(CRONJOB_CONTROLLER_RBAC), CRONJOB_RULES);
    assert.deepEqual(
      managerRoles().map((r) => [r.kind, (r.metadata as { namespace?: string }).namespace]),
      [
        ["ClusterRole", undefined],
        ["Role", "system"],
      ],
    );
    // The names match what the manifests and the manager use.
    assert.deepEqual(
      webhookConfigurations().map((c) => (c.metadata as { name: string }).name),
      [MUTATING_WEBHOOK_CONFIGURATION, VALIDATING_WEBHOOK_CONFIGURATION],
    );
    assert.equal(parseFlags([], {}).webhookCertSecret, WEBHOOK_CERT_SECRET);
    assert.ok(WEBHOOK_CERT_RBAC.every((m) => MANAGER_RBAC.includes(m)));
  });

  it("declares exactly the verbs the code calls (controllers/, webhooks/, runtime/events/, runtime/webhook/)", () => {
    const calls = apiCallsIn(["controllers", "webhooks", join("runtime", "events"), join("runtime", "webhook")]);
    const declared = new Set(
      MANAGER_RBAC.flatMap((m) =>
        m.groups.flatMap((g) =>
          (m.resources ?? []).flatMap((r) => m.verbs.map((v) => `${g === "core" ? "" : g}|${r}|${v}`)),
        ),
      ),
    );
    // Granted without a call: blockOwnerDeletion on the Jobs' ownerReferences needs it when the
    // OwnerReferencesPermissionEnforcement admission plugin is on (test/integration/deploy.test.ts).
    const noCall = new Set([`${api.GROUP}|cronjobs/finalizers|update`]);
    const undeclared = [...calls].filter(([k]) => !declared.has(k)).map(([k, where]) => `${k} (${where.join(", ")})`);
    assert.deepEqual(undeclared, [], "the code calls verbs controllers/rbac.ts does not grant");
    const unused = [...declared].filter((k) => !calls.has(k) && !noCall.has(k));
    assert.deepEqual(unused, [], "controllers/rbac.ts grants verbs the code never calls");
    // The scan finds the calls it must (a regression guard for the patterns themselves).
    for (const k of [
      `${api.GROUP}|cronjobs|list`,
      `${api.GROUP}|cronjobs/status|update`,
      "batch|jobs|get",
      "batch|jobs|create",
      "batch|jobs|delete",
      "|events|create",
      "|events|patch",
      "|secrets|create",
      "|secrets|get",
      "|secrets|update",
    ]) {
      assert.ok(calls.has(k), `no call found for ${k}`);
    }
  });

  it("does not depend on declaration order or on how the markers are split", () => {
    const reversed = [...MANAGER_RBAC].reverse();
    assert.equal(managerRoleYAML(reversed), managerRoleYAML());
    const split = MANAGER_RBAC.flatMap((m) => m.verbs.map((v) => ({ ...m, verbs: [v] })));
    assert.equal(managerRoleYAML(split.reverse()), managerRoleYAML());
    assert.equal(managerRoleYAML([...MANAGER_RBAC, ...MANAGER_RBAC]), managerRoleYAML());
  });

  it("merges and sorts like controller-gen", () => {
    assert.deepEqual(
      normaliseRules([
        { groups: ["apps"], resources: ["deployments"], verbs: ["get"] },
        { groups: ["core"], resources: ["pods"], verbs: ["list", "get"] },
        { groups: ["apps"], resources: ["deployments"], verbs: ["list", "get"] },
        { groups: [""], resources: ["configmaps"], verbs: ["get", "list"] },
        { groups: ["x.io"], resources: ["things"], verbs: ["get", "*"] },
        { groups: [], urls: ["/metrics"], verbs: ["get"] },
      ]),
      [
        { nonResourceURLs: ["/metrics"], verbs: ["get"] },
        { apiGroups: [""], resources: ["configmaps", "pods"], verbs: ["get", "list"] },
        { apiGroups: ["apps"], resources: ["deployments"], verbs: ["get", "list"] },
        { apiGroups: ["x.io"], resources: ["things"], verbs: ["*"] },
      ],
    );
  });

  it("binds manager-role, leader election and metrics auth to the manager's ServiceAccount", () => {
    const objs = kustomize("rbac");
    find(objs, "ServiceAccount", "controller-manager");
    for (const [kind, name, roleKind, role] of [
      ["ClusterRoleBinding", "manager-rolebinding", "ClusterRole", "manager-role"],
      ["RoleBinding", "manager-rolebinding", "Role", "manager-role"],
      ["RoleBinding", "leader-election-rolebinding", "Role", "leader-election-role"],
      ["ClusterRoleBinding", "metrics-auth-rolebinding", "ClusterRole", "metrics-auth-role"],
    ] as const) {
      const b = find(objs, kind, name);
      assert.deepEqual(b.roleRef, { apiGroup: "rbac.authorization.k8s.io", kind: roleKind, name: role });
      assert.deepEqual(b.subjects, [{ kind: "ServiceAccount", name: "controller-manager", namespace: "system" }]);
      find(objs, roleKind, role);
    }
    const le = find(objs, "Role", "leader-election-role");
    assert.deepEqual(
      le.rules.map((r: Obj) => [r.apiGroups, r.resources]),
      [
        [["coordination.k8s.io"], ["leases"]],
        [[""], ["events"]],
      ],
    );
    const auth = find(objs, "ClusterRole", "metrics-auth-role");
    assert.deepEqual(
      auth.rules.map((r: Obj) => [r.apiGroups[0], r.resources[0], r.verbs]),
      [
        ["authentication.k8s.io", "tokenreviews", ["create"]],
        ["authorization.k8s.io", "subjectaccessreviews", ["create"]],
      ],
    );
    assert.deepEqual(find(objs, "ClusterRole", "metrics-reader").rules, [
      { nonResourceURLs: ["/metrics"], verbs: ["get"] },
    ]);
    for (const [name, label] of [
      ["cronjob-admin-role", "aggregate-to-admin"],
      ["cronjob-editor-role", "aggregate-to-edit"],
      ["cronjob-viewer-role", "aggregate-to-view"],
    ]) {
      const r = find(objs, "ClusterRole", name);
      assert.equal(r.metadata.labels[`rbac.authorization.k8s.io/${label}`], "true", name);
      assert.deepEqual(r.rules[0].resources, ["concurrencygroups", "cronjobs", "exclusioncalendars"]);
    }
  });
});

describe("the manager Deployment (config/manager)", () => {
  it("runs the compiled manager with flags it accepts", () => {
    const objs = kustomize("manager");
    const ns = find(objs, "Namespace", "system");
    assert.equal(ns.metadata.labels["control-plane"], "controller-manager");
    const dep = find(objs, "Deployment", "controller-manager");
    const c = managerContainer(dep);
    assert.equal(c.image, "controller:latest");
    assert.deepEqual(c.command, ["node"]);
    assert.deepEqual(c.args, [
      "dist/cmd/main.js",
      "--leader-elect",
      "--health-probe-bind-address=:8081",
      "--metrics-bind-address=:8443",
      "--shutdown-delay-duration=5s",
    ]);
    const env = Object.fromEntries(c.env.map((e: Obj) => [e.name, e.value ?? e.valueFrom]));
    const flags = parseFlags(c.args.slice(1), env);
    assert.equal(flags.leaderElect, true);
    assert.equal(flags.shutdownDelayMs, 5_000);
    assert.equal(flags.metricsBindAddress, ":8443");
    assert.equal(flags.enableWebhooks, false, "config/manager alone runs without webhook certificates");
    assert.match(env.NODE_OPTIONS, /--max-semi-space-size=16\b/, "young generation not sized from the pod limit");
    // apiVersion as the server stores it: a server-side apply over a client-side install takes the (atomic)
    // fieldRef over without a conflict (test/integration/install-file.test.ts).
    assert.deepEqual(env.POD_NAMESPACE, { fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } });
    assert.equal(dep.spec.template.spec.serviceAccountName, "controller-manager");
    // The shutdown delay fits in the grace period with room for the graceful stop.
    assert.ok(dep.spec.template.spec.terminationGracePeriodSeconds * 1000 >= flags.shutdownDelayMs + 10_000);
    assert.deepEqual(c.resources, {
      requests: { cpu: "10m", memory: "128Mi" },
      limits: { cpu: "1", memory: "512Mi" },
    });
    assert.deepEqual(
      [c.livenessProbe.httpGet, c.readinessProbe.httpGet],
      [
        { path: "/healthz", port: 8081 },
        { path: "/readyz", port: 8081 },
      ],
    );
    assert.equal(`:${c.livenessProbe.httpGet.port}`, flags.healthProbeBindAddress);
    // The selector matches the template, and the Services select the pods.
    for (const [k, v] of Object.entries(dep.spec.selector.matchLabels))
      assert.equal(dep.spec.template.metadata.labels[k], v);
  });

  it("is highly available: 2 replicas with leader election, spread over nodes (softly), a PodDisruptionBudget keeps one", () => {
    const objs = kustomize("manager");
    const dep = find(objs, "Deployment", "controller-manager");
    assert.equal(dep.spec.replicas, 2);
    assert.ok(managerContainer(dep).args.includes("--leader-elect"));
    const pod = dep.spec.template.spec;
    // Soft: one node still runs both replicas.
    assert.equal(pod.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution, undefined);
    const [pref] = pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution;
    assert.equal(pref.podAffinityTerm.topologyKey, "kubernetes.io/hostname");
    assert.deepEqual(pref.podAffinityTerm.labelSelector.matchLabels, dep.spec.selector.matchLabels);
    const pdb = find(objs, "PodDisruptionBudget", "controller-manager");
    assert.equal(pdb.apiVersion, "policy/v1");
    assert.equal(pdb.spec.minAvailable, 1);
    assert.ok(pdb.spec.minAvailable < dep.spec.replicas, "a PDB as large as the Deployment would block every drain");
    assert.deepEqual(pdb.spec.selector.matchLabels, dep.spec.selector.matchLabels);
    // Readiness is probed often enough that a replica leaving is noticed within its shutdown delay.
    assert.ok(managerContainer(dep).readinessProbe.periodSeconds <= 5);
  });

  it("is hardened: non-root 65532, read-only root, no privilege escalation, no capabilities, RuntimeDefault seccomp", () => {
    const dep = find(kustomize("manager"), "Deployment", "controller-manager");
    const pod = dep.spec.template.spec;
    const c = managerContainer(dep);
    for (const sc of [pod.securityContext, c.securityContext]) {
      assert.equal(sc.runAsNonRoot, true);
      assert.equal(sc.runAsUser, 65532);
      assert.deepEqual(sc.seccompProfile, { type: "RuntimeDefault" });
    }
    assert.equal(c.securityContext.readOnlyRootFilesystem, true);
    assert.equal(c.securityContext.allowPrivilegeEscalation, false);
    assert.deepEqual(c.securityContext.capabilities, { drop: ["ALL"] });
    assert.equal(c.securityContext.privileged, undefined);
    const tmp = c.volumeMounts.find((m: Obj) => m.mountPath === "/tmp");
    assert.ok(tmp, "no writable /tmp");
    assert.deepEqual(pod.volumes.find((v: Obj) => v.name === tmp.name).emptyDir, {});
  });
});

const CLUSTER_SCOPED = new Set([
  "Namespace",
  "CustomResourceDefinition",
  "ClusterRole",
  "ClusterRoleBinding",
  "MutatingWebhookConfiguration",
  "ValidatingWebhookConfiguration",
]);

function assertNamespacedAndPrefixed(objs: Obj[]): void {
  for (const o of objs) {
    const id = `${o.kind}/${o.metadata.name}`;
    if (o.kind === "CustomResourceDefinition") {
      assert.ok([api.RESOURCE, api.GROUP_RESOURCE, api.CALENDAR_RESOURCE].includes(o.metadata.name), id);
      continue;
    }
    if (o.kind === "Namespace") assert.equal(o.metadata.name, NAMESPACE, id);
    else assert.ok(o.metadata.name.startsWith(PREFIX), `${id} lacks the ${PREFIX} prefix`);
    if (CLUSTER_SCOPED.has(o.kind)) assert.equal(o.metadata.namespace, undefined, id);
    else assert.equal(o.metadata.namespace, NAMESPACE, id);
    for (const s of o.subjects ?? []) assert.equal(s.namespace, NAMESPACE, `${id} subject`);
    if (o.roleRef) assert.ok(o.roleRef.name.startsWith(PREFIX), `${id} roleRef`);
  }
}

/** The manager container of an overlay's Deployment and the flags it runs with. */
function managerOf(objs: Obj[]): { dep: Obj; c: Obj; flags: ReturnType<typeof parseFlags> } {
  const dep = find(objs, "Deployment", `${PREFIX}controller-manager`);
  const c = managerContainer(dep);
  const env = Object.fromEntries(c.env.map((e: Obj) => [e.name, e.value ?? e.valueFrom]));
  return { dep, c, flags: parseFlags(c.args.slice(1), env) };
}

describe("config/default: the manager provisions its webhook certificate", () => {
  it("namespaces and prefixes every object", () => {
    assertNamespacedAndPrefixed(kustomize("default"));
  });

  it("needs no cert-manager (nor any kind a plain cluster lacks)", () => {
    const objs = kustomize("default");
    const groups = new Set(objs.map((o) => String(o.apiVersion).split("/").slice(0, -1).join("/")));
    assert.deepEqual(
      [...groups].filter((g) => g.includes("cert-manager") || g.includes("monitoring.coreos.com")),
      [],
    );
    assert.deepEqual(
      objs.filter((o) => ["Certificate", "Issuer", "ServiceMonitor"].includes(o.kind)).map((o) => o.kind),
      [],
    );
    for (const wc of objs.filter((o) => /WebhookConfiguration$/.test(o.kind))) {
      assert.equal(wc.metadata.annotations?.["cert-manager.io/inject-ca-from"], undefined, wc.metadata.name);
    }
  });

  it("wires the webhook server: Service, provisioned certificate for it, the configurations to inject", () => {
    const objs = kustomize("default");
    const svc = find(objs, "Service", `${PREFIX}webhook-service`);
    // Two ports to one listener: every replica for the CronJob's webhooks, and for the webhooks a release added
    // (fail-once-served) only the Pods that declare the port name, which a release before them did not.
    assert.deepEqual(svc.spec.ports, [
      { name: "webhook", port: 443, protocol: "TCP", targetPort: 9443 },
      { name: "webhook-fleet", port: FLEET_WEBHOOK_SERVICE_PORT, protocol: "TCP", targetPort: "webhook-fleet" },
    ]);
    const { dep, c, flags } = managerOf(objs);
    for (const [k, v] of Object.entries(svc.spec.selector)) assert.equal(dep.spec.template.metadata.labels[k], v);
    assert.equal(flags.enableWebhooks, true);
    assert.ok(c.ports.some((p: Obj) => p.containerPort === flags.webhookPort && p.name === "webhook-fleet"));
    const validating = find(objs, "ValidatingWebhookConfiguration");
    const gated = validating.metadata.annotations[FAIL_ONCE_SERVED_ANNOTATION].split(",");
    assert.deepEqual(gated, ["vexclusioncalendar-v1.kb.io", "vconcurrencygroup-v1.kb.io"]);
    for (const w of validating.webhooks) {
      const isGated = gated.includes(w.name);
      assert.equal(w.failurePolicy, isGated ? "Ignore" : "Fail", w.name);
      assert.equal(w.clientConfig.service.port, isGated ? FLEET_WEBHOOK_SERVICE_PORT : undefined, w.name);
    }
    assert.equal(flags.webhookCertProvision, "self");
    assert.equal(flags.webhookServiceName, svc.metadata.name, "the certificate must name the Service that is called");
    assert.equal(flags.webhookServiceNamespace, "", "the pod's namespace (POD_NAMESPACE)");
    assert.deepEqual(c.env.find((e: Obj) => e.name === "POD_NAMESPACE").valueFrom, {
      fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" },
    });
    assert.deepEqual(flags.mutatingWebhookConfigurations, [find(objs, "MutatingWebhookConfiguration").metadata.name]);
    assert.deepEqual(flags.validatingWebhookConfigurations, [
      find(objs, "ValidatingWebhookConfiguration").metadata.name,
    ]);
    for (const wc of objs.filter((o) => /WebhookConfiguration$/.test(o.kind))) {
      for (const w of wc.webhooks) {
        assert.deepEqual(
          { name: w.clientConfig.service.name, namespace: w.clientConfig.service.namespace },
          { name: svc.metadata.name, namespace: NAMESPACE },
        );
        assert.equal(w.clientConfig.caBundle, undefined, "the manager sets the caBundle");
      }
    }
    // The files are written into the writable /tmp emptyDir; no Secret is mounted.
    const mount = c.volumeMounts
      .filter((m: Obj) => flags.webhookCertPath.startsWith(`${m.mountPath}/`) || flags.webhookCertPath === m.mountPath)
      .sort((a: Obj, b: Obj) => b.mountPath.length - a.mountPath.length)[0];
    assert.equal(mount?.mountPath, "/tmp", `${flags.webhookCertPath} is not in the /tmp emptyDir`);
    assert.notEqual(mount.readOnly, true);
    assert.deepEqual(dep.spec.template.spec.volumes.find((v: Obj) => v.name === mount.name).emptyDir, {});
    assert.ok(!dep.spec.template.spec.volumes.some((v: Obj) => v.secret), "no Secret volume");
  });

  it("runs a second webhook server in each Pod, on the manager's port: one container's death leaves it answering", () => {
    for (const overlay of ["default", "default-certmanager"]) {
      const objs = kustomize(overlay);
      const { dep, c, flags } = managerOf(objs);
      const w = dep.spec.template.spec.containers.find((x: Obj) => x.name === "webhooks");
      assert.ok(w, `${overlay}: the Pod has a webhooks container`);
      const env = Object.fromEntries(w.env.map((e: Obj) => [e.name, e.value ?? e.valueFrom]));
      const second = parseFlags(w.args.slice(1), env);
      assert.equal(w.image, c.image, overlay);
      assert.deepEqual(w.command, c.command, overlay);
      assert.equal(second.webhooksOnly, true, `${overlay}: it serves the webhooks only`);
      assert.equal(second.leaderElect, false, `${overlay}: it never holds the Lease`);
      // Both bind the one port with SO_REUSEPORT; the Service's targetPort is the manager's named port.
      assert.equal(flags.webhookReusePort, true, overlay);
      assert.equal(second.webhookReusePort, true, overlay);
      assert.equal(second.webhookPort, flags.webhookPort, overlay);
      assert.equal(second.webhookHost, flags.webhookHost, overlay);
      // The same certificate, however it comes: provisioned into the one Secret, or cert-manager's mounted.
      for (const k of [
        "webhookCertProvision",
        "webhookCertSecret",
        "webhookServiceName",
        "webhookCertPath",
        "mutatingWebhookConfigurations",
        "validatingWebhookConfigurations",
      ] as const)
        assert.deepEqual(second[k], flags[k], `${overlay}: ${k}`);
      const certMount = (x: Obj) => x.volumeMounts.find((m: Obj) => m.mountPath === flags.webhookCertPath)?.name;
      assert.equal(certMount(w), certMount(c), `${overlay}: the certificate's mount`);
      // Its own probe port and /tmp (a provisioner writes its files there), and no metrics server.
      assert.notEqual(second.healthProbeBindAddress, flags.healthProbeBindAddress, overlay);
      assert.equal(w.readinessProbe.httpGet.port, Number(second.healthProbeBindAddress.split(":").at(-1)), overlay);
      assert.equal(second.metricsBindAddress, "0", overlay);
      const tmp = (x: Obj) => x.volumeMounts.find((m: Obj) => m.mountPath === "/tmp")?.name;
      assert.ok(tmp(w) && tmp(w) !== tmp(c), `${overlay}: its own /tmp`);
      assert.deepEqual(w.securityContext, c.securityContext, overlay);
    }
  });

  it("validates ExclusionCalendars and ConcurrencyGroups on create and update, through the webhook Service (issue 53)", () => {
    const objs = kustomize("default");
    const svc = find(objs, "Service", `${PREFIX}webhook-service`);
    const hooks: Obj[] = find(objs, "ValidatingWebhookConfiguration").webhooks;
    for (const [resource, name] of [
      [api.CALENDAR_PLURAL, "vexclusioncalendar-v1.kb.io"],
      [api.GROUP_PLURAL, "vconcurrencygroup-v1.kb.io"],
    ] as const) {
      const w = hooks.find((h) => h.rules.some((r: Obj) => r.resources.includes(resource)));
      assert.ok(w, `no validating webhook for ${resource}`);
      assert.equal(w.name, name);
      assert.deepEqual(w.clientConfig.service, {
        name: svc.metadata.name,
        namespace: NAMESPACE,
        path: `/validate-batch-tutorial-kubebuilder-io-v1-${resource.replace(/s$/, "")}`,
        port: FLEET_WEBHOOK_SERVICE_PORT,
      });
      assert.deepEqual(w.rules[0].operations, ["CREATE", "UPDATE"]);
      // Ignore until the manager's failure gate sees the port served (then Fail).
      assert.equal(w.failurePolicy, "Ignore");
    }
    // Defaulting is the CronJob's alone.
    assert.deepEqual(
      find(objs, "MutatingWebhookConfiguration").webhooks.map((w: Obj) => w.rules[0].resources),
      [["cronjobs"]],
    );
  });

  it("grants the provisioner its own Secret and webhook configurations, by their deployed names", () => {
    const objs = kustomize("default");
    const { flags } = managerOf(objs);
    const clusterRole = find(objs, "ClusterRole", `${PREFIX}manager-role`);
    assert.deepEqual(clusterRole.rules, [
      ...CRONJOB_RULES.slice(0, 2),
      ...webhookConfigRules(PREFIX),
      CRD_RULE,
      ...CRONJOB_RULES.slice(2),
    ]);
    assert.deepEqual(
      [...flags.mutatingWebhookConfigurations, ...flags.validatingWebhookConfigurations],
      webhookConfigRules(PREFIX).map((r) => r.resourceNames[0]),
    );
    const role = objs.find((o) => o.kind === "Role" && o.metadata.name === `${PREFIX}manager-role`);
    assert.ok(role, "no Role for the webhook certificate Secret");
    assert.equal(role.metadata.namespace, NAMESPACE, "the Secret is in the manager's namespace");
    assert.deepEqual(role.rules, [...EXPECTED_ROLE_RULES.slice(0, 2), ...gateRoleRules(PREFIX)]);
    assert.equal(EXPECTED_ROLE_RULES[1]?.resourceNames?.[0], flags.webhookCertSecret);
    const binding = objs.find((o) => o.kind === "RoleBinding" && o.roleRef?.name === role.metadata.name);
    assert.ok(binding, "the Role is not bound");
    assert.deepEqual(binding.roleRef.kind, "Role");
    assert.deepEqual(binding.subjects, [
      { kind: "ServiceAccount", name: `${PREFIX}controller-manager`, namespace: NAMESPACE },
    ]);
  });

  it("exposes HTTPS metrics with a self-signed certificate generated at start", () => {
    const objs = kustomize("default");
    const svc = find(objs, "Service", `${PREFIX}controller-manager-metrics-service`);
    const { c, flags } = managerOf(objs);
    const port = Number(flags.metricsBindAddress.split(":").at(-1));
    assert.deepEqual(svc.spec.ports, [{ name: "https", port, protocol: "TCP", targetPort: port }]);
    assert.ok(c.ports.some((p: Obj) => p.containerPort === port && p.name === "https"));
    assert.equal(flags.metricsSecure, true);
    assert.equal(flags.metricsCertPath, "");
  });
});

describe("config/default-certmanager: config/default with cert-manager's certificates", () => {
  const SELF_PROVISIONING =
    /^--(webhook-cert-provision|webhook-cert-secret|webhook-service-namespace|mutating-webhook-configuration)=/;

  it("namespaces and prefixes every object", () => {
    assertNamespacedAndPrefixed(kustomize("default-certmanager"));
  });

  it("is config/default but for the certificates: same objects, same arguments without the self-provisioning (the failure gate's stay)", () => {
    const def = kustomize("default");
    const cm = kustomize("default-certmanager");
    const id = (o: Obj) => `${o.kind}/${o.metadata.name}`;
    const certManager = (o: Obj) => String(o.apiVersion).startsWith("cert-manager.io/");
    assert.deepEqual(cm.filter(certManager).map(id).sort(), [
      `Certificate/${PREFIX}metrics-certs`,
      `Certificate/${PREFIX}serving-cert`,
      `Issuer/${PREFIX}selfsigned-issuer`,
    ]);
    // config/default's objects.
    assert.deepEqual(
      cm
        .filter((o) => !certManager(o))
        .map(id)
        .sort(),
      def.map(id).sort(),
    );
    // Identical but for the Deployment, the manager's roles (no Secret, CRD or mutating configuration) and the
    // injection annotations.
    const differs = new Set([
      `Deployment/${PREFIX}controller-manager`,
      `ClusterRole/${PREFIX}manager-role`,
      `Role/${PREFIX}manager-role`,
      `MutatingWebhookConfiguration/${PREFIX}mutating-webhook-configuration`,
      `ValidatingWebhookConfiguration/${PREFIX}validating-webhook-configuration`,
      `CustomResourceDefinition/${api.RESOURCE}`,
    ]);
    for (const o of cm.filter((x) => !certManager(x) && !differs.has(id(x)))) {
      assert.deepEqual(
        o,
        def.find((x) => id(x) === id(o)),
        id(o),
      );
    }
    const a = managerOf(def).c;
    const b = managerOf(cm).c;
    assert.deepEqual(
      b.args,
      [
        ...a.args.filter((x: string) => !SELF_PROVISIONING.test(x)),
        "--metrics-cert-path=/tmp/k8s-metrics-server/metrics-certs",
      ],
      "config/default-certmanager/manager_webhook_patch.yaml lists config/default's arguments: keep them in step",
    );
    assert.deepEqual({ ...b, args: [], volumeMounts: [] }, { ...a, args: [], volumeMounts: [] });
  });

  it("serves the webhooks with cert-manager's certificate and has cert-manager inject its CA", () => {
    const objs = kustomize("default-certmanager");
    const svc = find(objs, "Service", `${PREFIX}webhook-service`);
    const { dep, c, flags } = managerOf(objs);
    assert.equal(flags.enableWebhooks, true);
    assert.equal(flags.webhookCertProvision, "external");
    const mount = c.volumeMounts.find((m: Obj) => m.mountPath === flags.webhookCertPath);
    assert.ok(mount, `nothing mounted at ${flags.webhookCertPath}`);
    assert.equal(mount.readOnly, true);
    const vol = dep.spec.template.spec.volumes.find((v: Obj) => v.name === mount.name);
    const cert = find(objs, "Certificate", `${PREFIX}serving-cert`);
    assert.equal(vol.secret.secretName, cert.spec.secretName);
    assert.equal(cert.spec.secretName, "webhook-server-cert");
    assert.deepEqual(cert.spec.dnsNames, [
      `${svc.metadata.name}.${NAMESPACE}.svc`,
      `${svc.metadata.name}.${NAMESPACE}.svc.cluster.local`,
    ]);
    assert.equal(cert.spec.issuerRef.name, find(objs, "Issuer").metadata.name);
    const configs = objs.filter((o) => /WebhookConfiguration$/.test(o.kind));
    assert.equal(configs.length, 2);
    for (const wc of configs) {
      assert.equal(wc.metadata.annotations["cert-manager.io/inject-ca-from"], `${NAMESPACE}/${PREFIX}serving-cert`);
    }
    // The conversion webhook's caBundle too: the cainjector fills spec.conversion.webhook.clientConfig.
    const crd = find(objs, "CustomResourceDefinition", api.RESOURCE);
    assert.equal(crd.metadata.annotations?.["cert-manager.io/inject-ca-from"], `${NAMESPACE}/${PREFIX}serving-cert`);
    assert.equal(crd.spec.conversion.strategy, "Webhook");
  });

  it("grants the manager nothing on Secrets, the mutating configuration or the CRD; the failure gate what it reads and writes", () => {
    const objs = kustomize("default-certmanager");
    assert.deepEqual(find(objs, "ClusterRole", `${PREFIX}manager-role`).rules, [
      ...CRONJOB_RULES.slice(0, 2),
      webhookConfigRules(PREFIX)[1],
      ...CRONJOB_RULES.slice(2),
    ]);
    const role = find(objs, "Role", `${PREFIX}manager-role`);
    assert.deepEqual(role.rules, gateRoleRules(PREFIX));
    assert.equal(find(objs, "RoleBinding", `${PREFIX}manager-rolebinding`).roleRef.name, role.metadata.name);
    // Both webhook servers run the gate on the prefixed Service and validating configuration.
    const dep = find(objs, "Deployment", `${PREFIX}controller-manager`);
    for (const c of dep.spec.template.spec.containers) {
      const flags = parseFlags(c.args.slice(1), {});
      assert.equal(flags.webhookServiceName, `${PREFIX}webhook-service`, c.name);
      assert.deepEqual(flags.validatingWebhookConfigurations, [`${PREFIX}validating-webhook-configuration`], c.name);
      assert.deepEqual(flags.mutatingWebhookConfigurations, [], c.name);
    }
  });

  it("exposes HTTPS metrics with a cert-manager certificate", () => {
    const objs = kustomize("default-certmanager");
    const svc = find(objs, "Service", `${PREFIX}controller-manager-metrics-service`);
    const { dep, c, flags } = managerOf(objs);
    assert.equal(flags.metricsSecure, true);
    const mount = c.volumeMounts.find((m: Obj) => m.mountPath === flags.metricsCertPath);
    assert.ok(mount, `nothing mounted at --metrics-cert-path ${flags.metricsCertPath}`);
    const cert = find(objs, "Certificate", `${PREFIX}metrics-certs`);
    const vol = dep.spec.template.spec.volumes.find((v: Obj) => v.name === mount.name);
    assert.equal(vol.secret.secretName, cert.spec.secretName);
    assert.equal(cert.spec.dnsNames[0], `${svc.metadata.name}.${NAMESPACE}.svc`);
  });
});

describe("config/network-policy (kubebuilder's, off by default)", () => {
  let dir: string;
  before(() => {
    // config/default with [NETWORK POLICY] uncommented, in a copy of config/ (config/ is never modified).
    dir = mkdtempSync(join(tmpdir(), "network-policy-test-"));
    cpSync(join(root, "config"), join(dir, "config"), { recursive: true });
    const k = join(dir, "config", "default", "kustomization.yaml");
    const text = readFileSync(k, "utf8");
    assert.match(text, /^#- \.\.\/network-policy$/m);
    writeFileSync(k, text.replace(/^#- \.\.\/network-policy$/m, "- ../network-policy"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const enabled = (): Obj[] => {
    const r = spawnSync(KUBECTL, ["kustomize", join(dir, "config", "default")], {
      encoding: "utf8",
      maxBuffer: 64 << 20,
    });
    assert.equal(r.status, 0, r.stderr);
    return parseAllDocuments(r.stdout)
      .map((d) => d.toJS() as Obj | null)
      .filter((o): o is Obj => o !== null);
  };

  it("is not in config/default by default", () => {
    assert.equal(
      kustomize("default").filter((o) => o.kind === "NetworkPolicy").length,
      0,
      "enabling it blocks Prometheus until its namespace is labelled metrics: enabled",
    );
    assert.match(
      readFileSync(join(root, "config", "default", "kustomization.yaml"), "utf8"),
      /^#- \.\.\/network-policy$/m,
    );
  });

  it("admits metrics only from namespaces labelled metrics: enabled, on the manager's metrics port", () => {
    const objs = kustomize("network-policy");
    assert.deepEqual(objs.map((o) => `${o.kind}/${o.metadata.name}`).sort(), [
      "NetworkPolicy/allow-metrics-traffic",
      "NetworkPolicy/allow-webhook-traffic",
    ]);
    const np = find(objs, "NetworkPolicy", "allow-metrics-traffic");
    assert.deepEqual(np.spec.policyTypes, ["Ingress"]);
    assert.deepEqual(np.spec.ingress, [
      {
        from: [{ namespaceSelector: { matchLabels: { metrics: "enabled" } } }],
        ports: [{ port: 8443, protocol: "TCP" }],
      },
    ]);
  });

  it("leaves the webhook port open to the API server (which no selector matches)", () => {
    const np = find(kustomize("network-policy"), "NetworkPolicy", "allow-webhook-traffic");
    assert.deepEqual(np.spec.policyTypes, ["Ingress"]);
    assert.deepEqual(np.spec.ingress, [{ ports: [{ port: 9443, protocol: "TCP" }] }]);
  });

  it("enabled in config/default, selects the manager's Pods and allows exactly its metrics and webhook ports", () => {
    const objs = enabled();
    const dep = find(objs, "Deployment", `${PREFIX}controller-manager`);
    const podLabels = dep.spec.template.metadata.labels as Record<string, string>;
    const c = managerContainer(dep);
    const env = Object.fromEntries(c.env.map((e: Obj) => [e.name, e.value ?? e.valueFrom]));
    const flags = parseFlags(c.args.slice(1), env);
    const metricsPort = Number(flags.metricsBindAddress.split(":").at(-1));
    const policies = objs.filter((o) => o.kind === "NetworkPolicy");
    assert.equal(policies.length, 2);
    const allowed = new Set<number>();
    for (const np of policies) {
      assert.equal(np.metadata.namespace, NAMESPACE);
      assert.ok(np.metadata.name.startsWith(PREFIX));
      for (const [k, v] of Object.entries(np.spec.podSelector.matchLabels as Record<string, string>)) {
        assert.equal(podLabels[k], v, `${np.metadata.name} selects ${k}=${v}, not the manager's Pods`);
      }
      for (const rule of np.spec.ingress as Obj[]) for (const p of rule.ports as Obj[]) allowed.add(p.port);
    }
    assert.deepEqual([...allowed].sort(), [metricsPort, flags.webhookPort].sort());
    for (const port of allowed) {
      assert.ok(
        (c.ports as Obj[]).some((p) => p.containerPort === port),
        `port ${port} is not a port of the manager container`,
      );
    }
  });
});

describe("other overlays", () => {
  it("config/prometheus scrapes the metrics Service over HTTPS with a bearer token", () => {
    const sm = find(kustomize("prometheus"), "ServiceMonitor", "controller-manager-metrics-monitor");
    const [ep] = sm.spec.endpoints;
    assert.equal(ep.scheme, "https");
    assert.equal(ep.port, "https");
    assert.equal(ep.bearerTokenFile, "/var/run/secrets/kubernetes.io/serviceaccount/token");
    assert.equal(ep.tlsConfig.ca.secret.name, "metrics-server-cert");
    assert.equal(sm.spec.selector.matchLabels["control-plane"], "controller-manager");
  });

  it("config/samples holds a valid CronJob", () => {
    const sample = find(kustomize("samples"), api.KIND, "cronjob-sample");
    assert.equal(sample.apiVersion, api.API_VERSION);
    const parsed = api.parseCronJob(sample);
    assert.ok(parsed.ok, parsed.ok ? "" : api.formatFieldErrors(parsed.errors));
    assert.equal(sample.spec.schedule, "*/1 * * * *");
    assert.equal(sample.spec.jobTemplate.spec.template.spec.restartPolicy, "OnFailure");
  });

  it("config/samples holds a valid ExclusionCalendar: Germany's 2026 holidays and a first-Monday window", () => {
    const sample = find(kustomize("samples"), api.CALENDAR_KIND, "exclusioncalendar-sample");
    assert.equal(sample.apiVersion, api.API_VERSION);
    const parsed = api.ExclusionCalendarSchema.safeParse(sample);
    assert.ok(parsed.success, parsed.success ? "" : parsed.error.message);
    // What the webhook and the controller accept (the CRD checks only the JSON shape).
    const windows = parseExclusionWindows(sample.spec.windows, "spec.windows");
    assert.ok(windows.ok, windows.ok ? "" : windows.errors.map((e) => e.message).join("\n"));
    const at = (wall: string) =>
      windows.windows.filter((w) => w.containsWall(Date.parse(`${wall}Z`))).map((w) => w.text);
    assert.deepEqual(at("2026-04-03T12:00:00"), ["Karfreitag"]);
    assert.deepEqual(at("2026-12-26T23:59:00"), ["Weihnachten"]);
    assert.deepEqual(at("2026-12-27T00:00:00"), []);
    // 2026-06-01 is the first Monday of June, 2026-06-08 the second.
    assert.deepEqual(at("2026-06-01T03:00:00"), ["first Monday maintenance"]);
    assert.deepEqual(at("2026-06-01T04:00:00"), []);
    assert.deepEqual(at("2026-06-08T03:00:00"), []);
  });

  it("config/crd installs the generated CRD", () => {
    const crd = find(kustomize("crd"), "CustomResourceDefinition", api.RESOURCE);
    assert.equal(crd.spec.scope, "Namespaced");
  });

  it("serves v2 only with its conversion webhook: the deployed CRD calls the webhook Service's /convert", () => {
    const bases = find(kustomize("crd"), "CustomResourceDefinition", api.RESOURCE);
    const versions = (crd: Obj) => crd.spec.versions.map((v: Obj) => [v.name, v.served, v.storage]);
    const base = parseAllDocuments(
      readFileSync(join(root, "config", "crd", "bases", `${api.GROUP}_${api.PLURAL}.yaml`), "utf8"),
    )[0]!.toJS() as Obj;
    assert.deepEqual(versions(base), [
      ["v1", true, true],
      ["v2", false, false],
    ]);
    assert.equal(base.spec.conversion, undefined, "make install: v1 alone, no conversion");
    assert.deepEqual(versions(bases), [
      ["v1", true, true],
      ["v2", true, false],
    ]);
    const objs = kustomize("default");
    const crd = find(objs, "CustomResourceDefinition", api.RESOURCE);
    const service = find(objs, "Service", `${PREFIX}webhook-service`);
    assert.deepEqual(crd.spec.conversion, {
      strategy: "Webhook",
      webhook: {
        clientConfig: { service: { name: service.metadata.name, namespace: NAMESPACE, path: "/convert" } },
        conversionReviewVersions: ["v1"],
      },
    });
  });
});

const TENANT_PREFIX = `team-a-${PREFIX}`;
const TENANT_NAMESPACE = "team-a-cronjob-operator";
const TENANT_NAMESPACES = ["team-a", "team-b"];
const subject = (prefix: string, namespace: string) => [
  { kind: "ServiceAccount", name: `${prefix}controller-manager`, namespace },
];
/** The rules of markers for a role with these names (kustomize prefixes the configurations' in resourceNames). */
const prefixedRules = (markers: readonly RBACMarker[], prefix: string) =>
  normaliseRules(markers).map((r) =>
    r.resourceNames?.some((n) => n.endsWith("webhook-configuration"))
      ? { ...r, resourceNames: r.resourceNames.map((n) => `${prefix}${n}`) }
      : r,
  );

describe("config/tenant: an operator per tenant", () => {
  const objs = () => kustomize("tenant");
  const install = (o: Obj) => !TENANT_NAMESPACES.includes(o.metadata.namespace);

  it("installs no CRD and none of the cluster's roles; names everything after the tenant, cluster-wide objects too", () => {
    const all = objs();
    assert.deepEqual(
      all.filter(
        (o) => o.kind === "CustomResourceDefinition" || /cronjob-(admin|editor|viewer)-role$/.test(o.metadata.name),
      ),
      [],
    );
    for (const o of all) {
      const id = `${o.kind}/${o.metadata.name}`;
      if (o.kind === "Namespace") assert.equal(o.metadata.name, TENANT_NAMESPACE);
      else assert.ok(o.metadata.name.startsWith(TENANT_PREFIX), `${id} is not named after the tenant`);
      if (CLUSTER_SCOPED.has(o.kind)) assert.equal(o.metadata.namespace, undefined, id);
      else if (install(o)) assert.equal(o.metadata.namespace, TENANT_NAMESPACE, id);
      else assert.ok(["Role", "RoleBinding"].includes(o.kind), `${id} in a tenant's namespace`);
      for (const s of o.subjects ?? [])
        assert.deepEqual(s, subject(TENANT_PREFIX, TENANT_NAMESPACE)[0], `${id} subject`);
    }
  });

  it("reads no Jobs, Pods or Events cluster-wide: its ClusterRoles cover its own webhook configurations and metrics auth", () => {
    const all = objs();
    const bound = all
      .filter((o) => o.kind === "ClusterRoleBinding")
      .map((b) => find(all, "ClusterRole", b.roleRef.name));
    const resources = new Set(bound.flatMap((r) => r.rules.flatMap((x: Obj) => x.resources ?? [])));
    assert.deepEqual([...resources].sort(), [
      "mutatingwebhookconfigurations",
      "subjectaccessreviews",
      "tokenreviews",
      "validatingwebhookconfigurations",
    ]);
    assert.deepEqual(
      find(all, "ClusterRole", `${TENANT_PREFIX}manager-role`).rules,
      prefixedRules(tenantSplit().cluster, TENANT_PREFIX),
    );
    // The claims ClusterRole is bound in its namespaces only.
    const claims = find(all, "ClusterRole", `${TENANT_PREFIX}manager-claims-role`);
    assert.deepEqual(claims.rules, normaliseRules(NAMESPACE_CLAIMS_RBAC));
    assert.ok(!all.some((o) => o.kind === "ClusterRoleBinding" && o.roleRef.name === claims.metadata.name));
  });

  it("grants the manager's rules and its claim as a Role and RoleBindings in each of its namespaces", () => {
    const all = objs();
    for (const ns of TENANT_NAMESPACES) {
      const here = all.filter((o) => o.metadata.namespace === ns);
      const role = find(here, "Role", `${TENANT_PREFIX}manager-namespace-role`);
      assert.deepEqual(role.rules, CRONJOB_RULES, ns);
      assert.deepEqual(
        here.filter((o) => o.kind === "RoleBinding").map((b) => [b.roleRef.kind, b.roleRef.name, b.subjects]),
        [
          ["ClusterRole", `${TENANT_PREFIX}manager-claims-role`, subject(TENANT_PREFIX, TENANT_NAMESPACE)],
          ["Role", role.metadata.name, subject(TENANT_PREFIX, TENANT_NAMESPACE)],
        ],
        ns,
      );
    }
    // In its own namespace, config/default's: the webhook certificate, the failure gate, leader election.
    const def = kustomize("default");
    for (const name of ["manager-role", "leader-election-role"]) {
      const rules = (o: Obj) => JSON.stringify(o.rules).replaceAll(TENANT_PREFIX, PREFIX);
      assert.equal(rules(find(all, "Role", `${TENANT_PREFIX}${name}`)), rules(find(def, "Role", `${PREFIX}${name}`)));
    }
  });

  it("acts, and has its webhooks called, in the namespaces it has a Role in: the flag of both processes, every namespaceSelector", () => {
    const all = objs();
    const roles = all.filter((o) => o.kind === "Role" && !install(o)).map((o) => o.metadata.namespace);
    assert.deepEqual(roles, TENANT_NAMESPACES);
    const dep = find(all, "Deployment", `${TENANT_PREFIX}controller-manager`);
    for (const c of dep.spec.template.spec.containers) {
      const env = Object.fromEntries(c.env.map((e: Obj) => [e.name, e.value ?? e.valueFrom]));
      const flags = parseFlags(c.args.slice(1), env);
      assert.deepEqual(flags.watchNamespaces, roles, c.name);
      assert.equal(flags.sharding, false, c.name);
      // Its own webhook objects, by their names here.
      assert.equal(flags.webhookServiceName, `${TENANT_PREFIX}${WEBHOOK_SERVICE}`, c.name);
      assert.deepEqual(flags.mutatingWebhookConfigurations, [`${TENANT_PREFIX}${MUTATING_WEBHOOK_CONFIGURATION}`]);
      assert.deepEqual(flags.validatingWebhookConfigurations, [`${TENANT_PREFIX}${VALIDATING_WEBHOOK_CONFIGURATION}`]);
    }
    assert.equal(managerContainer(dep).args.includes("--leader-elect"), true);
    const configs = all.filter((o) => /WebhookConfiguration$/.test(o.kind));
    assert.deepEqual(
      configs.map((c) => c.webhooks.length),
      [1, 3],
    );
    for (const w of configs.flatMap((c) => c.webhooks)) {
      assert.deepEqual(
        w.namespaceSelector,
        { matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: roles }] },
        w.name,
      );
      assert.deepEqual(w.clientConfig.service.name, `${TENANT_PREFIX}${WEBHOOK_SERVICE}`);
      assert.deepEqual(w.clientConfig.service.namespace, TENANT_NAMESPACE);
    }
  });

  it("is config/default's Deployment otherwise (named after the tenant, one flag more in each container)", () => {
    const rename = (o: Obj) =>
      JSON.parse(JSON.stringify(o).replaceAll(TENANT_PREFIX, PREFIX).replaceAll(TENANT_NAMESPACE, NAMESPACE));
    const dep = rename(find(objs(), "Deployment", `${TENANT_PREFIX}controller-manager`));
    const def = find(kustomize("default"), "Deployment", `${PREFIX}controller-manager`);
    for (const c of dep.spec.template.spec.containers) c.args = c.args.filter((a: string) => !a.startsWith("--watch-"));
    assert.deepEqual(dep, def);
  });
});

describe("config/sharded: several active instances", () => {
  it("is config/default with --sharding instead of --leader-elect, 3 replicas, POD_NAME, and claims and namespaces cluster-wide", () => {
    const sharded = kustomize("sharded");
    const def = kustomize("default");
    assertNamespacedAndPrefixed(sharded);
    const id = (o: Obj) => `${o.kind}/${o.metadata.name}`;
    const added = sharded.filter((o) => !def.some((d) => id(d) === id(o)));
    assert.deepEqual(added.map(id).sort(), [
      `ClusterRole/${PREFIX}manager-claims-role`,
      `ClusterRole/${PREFIX}manager-namespace-reader-role`,
      `ClusterRoleBinding/${PREFIX}manager-claims-rolebinding`,
      `ClusterRoleBinding/${PREFIX}manager-namespace-reader-rolebinding`,
    ]);
    for (const o of def) {
      if (o.kind !== "Deployment") assert.deepEqual(find(sharded, o.kind, o.metadata.name), o, id(o));
    }
    assert.deepEqual(
      find(sharded, "ClusterRole", `${PREFIX}manager-claims-role`).rules,
      normaliseRules(NAMESPACE_CLAIMS_RBAC),
    );
    assert.deepEqual(
      find(sharded, "ClusterRole", `${PREFIX}manager-namespace-reader-role`).rules,
      normaliseRules(NAMESPACE_SELECTOR_RBAC),
    );
    for (const b of added.filter((o) => o.kind === "ClusterRoleBinding")) {
      assert.deepEqual(b.subjects, subject(PREFIX, NAMESPACE), b.metadata.name);
      find(added, "ClusterRole", b.roleRef.name);
    }

    const { dep, c, flags } = managerOf(sharded);
    const d = managerOf(def);
    assert.equal(dep.spec.replicas, 3);
    assert.equal(flags.sharding, true);
    assert.equal(flags.leaderElect, false);
    assert.equal(flags.namespaceClaims, true);
    assert.deepEqual(c.args, [...d.c.args.filter((a: string) => a !== "--leader-elect"), "--sharding"]);
    assert.deepEqual(c.env[1], {
      name: "POD_NAME",
      valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } },
    });
    assert.deepEqual(
      c.env.filter((e: Obj) => e.name !== "POD_NAME"),
      d.c.env,
    );
    // The webhooks container is config/default's: it serves, it is not a shard.
    assert.deepEqual(dep.spec.template.spec.containers[1], d.dep.spec.template.spec.containers[1]);
  });

  it("keeps each replica's Lease in its namespace with the leader-election Role (SHARDING_RBAC, delete included)", () => {
    const role = find(kustomize("sharded"), "Role", `${PREFIX}leader-election-role`);
    assert.deepEqual(ungranted(SHARDING_RBAC, role.rules), []);
    assert.ok(
      SHARDING_RBAC.every((m) => m.namespace === "system"),
      "the install's namespace",
    );
    assert.ok(SHARDING_RBAC.some((m) => m.verbs.includes("delete")));
    // The check itself.
    assert.deepEqual(
      ungranted(SHARDING_RBAC, [{ apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get"] }]).length,
      5,
    );
  });
});

describe("config/platform: the CRDs and their conversion webhook, for a cluster of tenants' installs", () => {
  it("installs config/default's CRDs, the admin/editor/viewer roles and a conversion webhook server, nothing else", () => {
    const objs = kustomize("platform");
    const def = kustomize("default");
    assertNamespacedAndPrefixed(objs);
    for (const o of def.filter(
      (x) => x.kind === "CustomResourceDefinition" || /cronjob-(admin|editor|viewer)-role$/.test(x.metadata.name),
    ))
      assert.deepEqual(find(objs, o.kind, o.metadata.name), o, o.metadata.name);
    assert.deepEqual(objs.map((o) => `${o.kind}/${o.metadata.name}`).sort(), [
      `ClusterRole/${PREFIX}conversion-webhook-role`,
      `ClusterRole/${PREFIX}cronjob-admin-role`,
      `ClusterRole/${PREFIX}cronjob-editor-role`,
      `ClusterRole/${PREFIX}cronjob-viewer-role`,
      `ClusterRoleBinding/${PREFIX}conversion-webhook-rolebinding`,
      `CustomResourceDefinition/${api.GROUP_RESOURCE}`,
      `CustomResourceDefinition/${api.RESOURCE}`,
      `CustomResourceDefinition/${api.CALENDAR_RESOURCE}`,
      `Deployment/${PREFIX}conversion-webhook`,
      `Namespace/${NAMESPACE}`,
      `PodDisruptionBudget/${PREFIX}conversion-webhook`,
      `Role/${PREFIX}conversion-webhook-role`,
      `RoleBinding/${PREFIX}conversion-webhook-rolebinding`,
      `Service/${PREFIX}webhook-service`,
      `ServiceAccount/${PREFIX}conversion-webhook`,
    ]);
  });

  it("serves the conversion webhook the CRD calls, with a certificate it provisions and injects into the CRD only", () => {
    const objs = kustomize("platform");
    const dep = find(objs, "Deployment", `${PREFIX}conversion-webhook`);
    const [c] = dep.spec.template.spec.containers;
    const env = Object.fromEntries(c.env.map((e: Obj) => [e.name, e.value ?? e.valueFrom]));
    const flags = parseFlags(c.args.slice(1), env);
    assert.equal(flags.webhooksOnly, true);
    assert.equal(flags.leaderElect, false);
    assert.equal(flags.enableWebhooks, true);
    assert.equal(flags.webhookCertProvision, "self");
    assert.deepEqual([...flags.mutatingWebhookConfigurations, ...flags.validatingWebhookConfigurations], []);
    assert.deepEqual(flags.watchNamespaces, []);
    const svc = find(objs, "Service", `${PREFIX}webhook-service`);
    assert.equal(flags.webhookServiceName, svc.metadata.name);
    assert.deepEqual(
      find(objs, "CustomResourceDefinition", api.RESOURCE).spec.conversion.webhook.clientConfig.service,
      {
        name: svc.metadata.name,
        namespace: NAMESPACE,
        path: "/convert",
      },
    );
    for (const [k, v] of Object.entries(svc.spec.selector)) assert.equal(dep.spec.template.metadata.labels[k], v);
    assert.deepEqual(
      svc.spec.ports.map((p: Obj) => p.targetPort),
      [flags.webhookPort],
    );
    assert.equal(`:${c.readinessProbe.httpGet.port}`, flags.healthProbeBindAddress);
    const pdb = find(objs, "PodDisruptionBudget", `${PREFIX}conversion-webhook`);
    assert.ok(pdb.spec.minAvailable < dep.spec.replicas);
    assert.deepEqual(pdb.spec.selector.matchLabels, dep.spec.selector.matchLabels);
    // Hardened as the manager.
    const manager = managerContainer(find(kustomize("default"), "Deployment", `${PREFIX}controller-manager`));
    assert.deepEqual(c.securityContext, manager.securityContext);
    assert.equal(c.image, manager.image);
    assert.ok(c.volumeMounts.some((m: Obj) => m.mountPath === "/tmp"));
  });

  it("grants it its Secret, the CRD and the calendars it caches, by CONVERSION_WEBHOOK_RBAC", () => {
    const objs = kustomize("platform");
    const sa = find(objs, "Deployment", `${PREFIX}conversion-webhook`).spec.template.spec.serviceAccountName;
    find(objs, "ServiceAccount", sa);
    const role = find(objs, "ClusterRole", `${PREFIX}conversion-webhook-role`);
    assert.deepEqual(role.rules, normaliseRules(CONVERSION_WEBHOOK_RBAC.filter((m) => !m.namespace)));
    assert.deepEqual(role.rules[0], CRD_RULE);
    const nsRole = find(objs, "Role", `${PREFIX}conversion-webhook-role`);
    assert.deepEqual(nsRole.rules, EXPECTED_ROLE_RULES.slice(0, 2));
    for (const [kind, roleKind] of [
      ["ClusterRoleBinding", "ClusterRole"],
      ["RoleBinding", "Role"],
    ] as const) {
      const b = find(objs, kind, `${PREFIX}conversion-webhook-rolebinding`);
      assert.deepEqual(b.roleRef, { apiGroup: "rbac.authorization.k8s.io", kind: roleKind, name: role.metadata.name });
      assert.deepEqual(b.subjects, [{ kind: "ServiceAccount", name: sa, namespace: NAMESPACE }]);
    }
  });
});

describe("Dockerfile (hack/lint-dockerfile.ts)", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "dockerfile-test-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const original = readFileSync(join(root, "Dockerfile"), "utf8");
  /** Lints the project's Dockerfile with `edit` applied (statically: no compile). */
  const lintEdited = (edit: (s: string) => string): string[] => {
    const file = join(dir, "Dockerfile");
    const edited = edit(original);
    assert.notEqual(edited, original, "the edit changed nothing");
    writeFileSync(file, edited);
    return lintDockerfile({ root, dockerfile: file, compile: false }).problems;
  };

  it("passes, compiling tsconfig.build.json to find the entrypoint and every source", () => {
    const r = lintDockerfile({ root });
    assert.deepEqual(r.problems, []);
    assert.equal(r.entrypoint, "/workspace/dist/cmd/main.js");
  });

  it("parses stages, flags and continuations", () => {
    const df = parseDockerfile(original);
    assert.ok(df.stages.length >= 2);
    assert.ok(df.stages.some((s) => s.name === "builder"));
    const copy = df.stages.at(-1)!.instructions.find((i) => i.keyword === "COPY" && i.flags.from);
    assert.ok(copy);
    const cont = parseDockerfile("FROM node:24-alpine AS a\nRUN echo 1 \\\n  # comment\n  && echo 2\n").stages[0]!;
    assert.equal(cont.instructions[0]!.args, "echo 1 && echo 2");
  });

  it("rejects a root final stage", () => {
    assert.match(lintEdited((s) => s.replace(/^USER .*$/m, "USER root")).join("\n"), /USER 65532:65532/);
  });

  it("rejects dev dependencies in the final stage", () => {
    const problems = lintEdited((s) =>
      s.replace(/COPY --from=deps \/workspace\/node_modules/, "COPY --from=builder /workspace/node_modules"),
    );
    assert.match(problems.join("\n"), /installed devDependencies/);
  });

  it("rejects an image whose NODE_OPTIONS differ from the Deployment's", () => {
    const problems = lintEdited((s) => s.replace(/^ENV NODE_OPTIONS=.*$/m, "ENV NODE_OPTIONS=--max-old-space-size=64"));
    assert.match(problems.join("\n"), /NODE_OPTIONS differs: the image sets "--max-old-space-size=64"/);
    const legacy = lintEdited((s) => s.replace(/^ENV NODE_OPTIONS=.*$/m, "ENV NODE_OPTIONS --max-semi-space-size=16"));
    assert.deepEqual(legacy, [], "the legacy ENV form with the same value");
  });

  it("rejects an entrypoint that is not the build output", () => {
    const problems = lintEdited((s) => s.replace('"dist/cmd/main.js"', '"dist/main.js"'));
    assert.match(problems.join("\n"), /emitted to \/workspace\/dist\/cmd\/main\.js/);
  });

  it("requires --ignore-scripts (the node devDependency's install script)", () => {
    const problems = lintEdited((s) => s.replace("npm ci --ignore-scripts --no-audit", "npm ci --no-audit"));
    assert.match(problems.join("\n"), /--ignore-scripts.*node/);
  });

  it("rejects a single-stage build and a non-Node base", () => {
    const problems = lintEdited(() => 'FROM debian:12\nCOPY . .\nUSER 65532:65532\nENTRYPOINT ["node", "x.js"]\n');
    assert.match(problems.join("\n"), /multi-stage/);
    assert.match(problems.join("\n"), /not a Node image/);
  });

  it("evaluates .dockerignore like docker", () => {
    const ignore = parseDockerignore(readFileSync(join(root, ".dockerignore"), "utf8"));
    assert.equal(isIgnored("node_modules/yaml/package.json", ignore), true);
    assert.equal(isIgnored("api/v1/index.ts", ignore), false);
    assert.equal(isIgnored("runtime/cache/node_modules/x", ignore), true);
    assert.equal(isIgnored("test/unit/config.test.ts", ignore), true);
    assert.equal(isIgnored(".git/HEAD", ignore), true);
  });
});

describe("config/local: config/default on the local cluster with a real node", () => {
  it("runs the manager with pod networking, reaching the apiserver at the pods' bridge address, nothing else changed", () => {
    const local = kustomize("local");
    const def = kustomize("default");
    const dep = find(local, "Deployment", "cronjob-operator-controller-manager");
    const spec = dep.spec.template.spec;
    // Pod networking (two replicas on one node need their own addresses and ports).
    assert.equal(spec.hostNetwork, undefined);
    const c = spec.containers[0];
    assert.deepEqual(
      c.env.find((e: Obj) => e.name === "KUBERNETES_SERVICE_HOST"),
      { name: "KUBERNETES_SERVICE_HOST", value: POD_GATEWAY_IP },
    );
    // Only that variable differs from config/default (make deploy adds the port).
    const defDep = find(def, "Deployment", "cronjob-operator-controller-manager");
    const defC = defDep.spec.template.spec.containers[0];
    assert.deepEqual(
      c.env.filter((e: Obj) => e.name !== "KUBERNETES_SERVICE_HOST"),
      defC.env,
    );
    assert.deepEqual({ ...c, env: [] }, { ...defC, env: [] });
    // Everything but the Deployment is config/default's.
    const rest = (objs: Obj[]) => objs.filter((o) => o.kind !== "Deployment");
    assert.deepEqual(rest(local), rest(def));
  });
});
