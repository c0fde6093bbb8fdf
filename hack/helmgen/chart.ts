// dist/chart, the Helm chart, generated from what config/ renders (kubebuilder's helm/v2-alpha idea: the
// chart is the kustomize output with values in it, so there is one source). config/default is the default
// (the manager provisions its own webhook certificate), config/default-certmanager the certManager.enable=true
// variant: the two renders are merged object by object, what only one of them has kept under that value.
// config/prometheus and config/network-policy give the optional objects. The values' defaults are what
// config/default renders, so `helm template` with no values gives config/default's objects (test/unit/helm-chart).
// The installs of "Tenants and shards" (docs/operating.md) take their objects from config/sharded/rbac (namespace
// claims and the namespace reader, cluster-wide) and config/rbac/namespace (a Role in each watched namespace):
// watchNamespaces renders what config/tenant does, sharding.enable what config/sharded does.
//
// Every object config/ renders must be classified in OBJECTS below: a new one fails the generator instead of
// landing in the chart unconditionally.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { FLAGS } from "../../cmd/flags.ts";
import { kustomize, kustomizeWith, objectKey, type Obj } from "./render.ts";
import {
  and,
  at,
  block,
  Emitter,
  entry,
  expr,
  field,
  lit,
  merge,
  open,
  openList,
  openMap,
  type Item,
  type TMap,
  type When,
} from "./template.ts";
import { valuesYAML, type Values } from "./values.ts";

export const CHART_DIR = join("dist", "chart");
export const CHART_NAME = "cronjob-operator";
const HELPERS = "cronjob-operator";
const DASHBOARD = join("config", "grafana", "cronjob-operator.json");
const DASHBOARD_IN_CHART = "dashboards/cronjob-operator.json";

const CM = ".Values.certManager.enable";
const NOT_CM = `not ${CM}`;
const WEBHOOK = ".Values.webhook.enable";
const METRICS = ".Values.metrics.enable";
/** A tenant's install: a Role in each of these namespaces instead of cluster-wide rules (config/tenant). */
const TENANT = ".Values.watchNamespaces";
const CLUSTER_WIDE = `not ${TENANT}`;
/** The install claims its namespaces (the flags that imply --namespace-claims, or it). */
const CLAIMS =
  "or .Values.namespaceClaims .Values.sharding.enable .Values.watchNamespaces .Values.watchNamespaceSelector";
/** The webhooks are called for some namespaces only. */
const SCOPED = `or ${TENANT} .Values.watchNamespaceSelector`;
/** The claim check and the identity of an install: <its namespace>/<--leader-election-id> (cmd/run.ts). */
const CLAIM_LEASE = "cronjob-operator";
/** The longest release-based fullname: <fullname>-controller-manager-metrics-service is a Service name (at most 63). */
const FULLNAME_MAX = 63 - "-controller-manager-metrics-service".length;
const INSTALL_ANNOTATION = "cronjob-operator.tutorial.kubebuilder.io/install";

/** Where each object of config/ goes in the chart, and the values it depends on (besides certManager). */
const OBJECTS: Record<string, { file: string; when: When }> = {
  "ServiceAccount/controller-manager": { file: "rbac/service_account.yaml", when: [] },
  "Role/leader-election-role": { file: "rbac/leader_election_role.yaml", when: [] },
  "RoleBinding/leader-election-rolebinding": { file: "rbac/leader_election_role_binding.yaml", when: [] },
  // A tenant's keeps its webhook configurations only (none without webhooks).
  "ClusterRole/manager-role": { file: "rbac/role.yaml", when: [`or (${CLUSTER_WIDE}) ${WEBHOOK}`] },
  "ClusterRoleBinding/manager-rolebinding": {
    file: "rbac/role_binding.yaml",
    when: [`or (${CLUSTER_WIDE}) ${WEBHOOK}`],
  },
  // Namespace claims (config/sharded/rbac): the ClusterRole, bound cluster-wide here or in each watched namespace.
  "ClusterRole/manager-claims-role": { file: "rbac/claims_role.yaml", when: [CLAIMS] },
  "ClusterRoleBinding/manager-claims-rolebinding": {
    file: "rbac/claims_role_binding.yaml",
    when: [CLAIMS, CLUSTER_WIDE],
  },
  // A cluster-wide install that claims reads the namespaces it may act in.
  "ClusterRole/manager-namespace-reader-role": {
    file: "rbac/namespace_reader_role.yaml",
    when: [CLAIMS, CLUSTER_WIDE],
  },
  "ClusterRoleBinding/manager-namespace-reader-rolebinding": {
    file: "rbac/namespace_reader_role_binding.yaml",
    when: [CLAIMS, CLUSTER_WIDE],
  },
  // The manager's own webhook certificate Secret (self-provisioned mode only).
  "Role/manager-role": { file: "rbac/webhook_cert_role.yaml", when: [WEBHOOK] },
  "RoleBinding/manager-rolebinding": { file: "rbac/webhook_cert_role_binding.yaml", when: [WEBHOOK] },
  // The cluster's, with the CRDs (config/platform): not a tenant's.
  "ClusterRole/cronjob-admin-role": { file: "rbac/cronjob_admin_role.yaml", when: [CLUSTER_WIDE] },
  "ClusterRole/cronjob-editor-role": { file: "rbac/cronjob_editor_role.yaml", when: [CLUSTER_WIDE] },
  "ClusterRole/cronjob-viewer-role": { file: "rbac/cronjob_viewer_role.yaml", when: [CLUSTER_WIDE] },
  "ClusterRole/metrics-auth-role": { file: "rbac/metrics_auth_role.yaml", when: [METRICS] },
  "ClusterRoleBinding/metrics-auth-rolebinding": { file: "rbac/metrics_auth_role_binding.yaml", when: [METRICS] },
  "ClusterRole/metrics-reader": { file: "rbac/metrics_reader_role.yaml", when: [METRICS] },
  "Deployment/controller-manager": { file: "manager/manager.yaml", when: [] },
  "PodDisruptionBudget/controller-manager": { file: "manager/pdb.yaml", when: [".Values.podDisruptionBudget.enable"] },
  "Service/controller-manager-metrics-service": { file: "metrics/metrics_service.yaml", when: [METRICS] },
  "Service/webhook-service": { file: "webhook/service.yaml", when: [WEBHOOK] },
  "MutatingWebhookConfiguration/mutating-webhook-configuration": { file: "webhook/mutating.yaml", when: [WEBHOOK] },
  "ValidatingWebhookConfiguration/validating-webhook-configuration": {
    file: "webhook/validating.yaml",
    when: [WEBHOOK],
  },
  "Issuer/selfsigned-issuer": { file: "certmanager/issuer.yaml", when: [`or ${WEBHOOK} ${METRICS}`] },
  "Certificate/serving-cert": { file: "certmanager/certificate-webhook.yaml", when: [WEBHOOK] },
  "Certificate/metrics-certs": { file: "certmanager/certificate-metrics.yaml", when: [METRICS] },
  "ServiceMonitor/controller-manager-metrics-monitor": {
    file: "prometheus/monitor.yaml",
    when: [".Values.prometheus.enable", METRICS],
  },
  "PrometheusRule/alert-rules": { file: "prometheus/prometheus_rule.yaml", when: [".Values.prometheusRule.enable"] },
  "NetworkPolicy/allow-webhook-traffic": {
    file: "network-policy/allow-webhook-traffic.yaml",
    when: [".Values.networkPolicy.enable", WEBHOOK],
  },
  "NetworkPolicy/allow-metrics-traffic": {
    file: "network-policy/allow-metrics-traffic.yaml",
    when: [".Values.networkPolicy.enable", METRICS],
  },
};

/** Manager flags that carry the name of a webhook object or the webhook certificate. */
const WEBHOOK_FLAG = /^--(webhook-|mutating-webhook-configuration=|validating-webhook-configuration=)/;
/** Flags with a value of their own; each is passed only when config/ passes it or the value is not the manager's default. */
const VALUE_FLAGS = [
  { flag: "leader-elect", path: ["leaderElection", "enable"] },
  { flag: "log-level", path: ["logging", "level"] },
  { flag: "log-format", path: ["logging", "format"] },
  { flag: "per-cronjob-metrics", path: ["perCronJobMetrics"] },
  { flag: "sharding", path: ["sharding", "enable"] },
  { flag: "namespace-claims", path: ["namespaceClaims"] },
  { flag: "watch-namespace-selector", path: ["watchNamespaceSelector"] },
] as const;
/** --watch-namespaces, from the list of that name (both processes of the Pod act, or read, there only). */
const WATCH_NAMESPACES: Item = {
  value: expr(`{{ printf "--watch-namespaces=%s" (join "," ${TENANT}) | quote }}`),
  when: [TENANT],
};
const WATCH_NAMESPACE_SELECTOR: Item = {
  value: expr('{{ printf "--watch-namespace-selector=%s" .Values.watchNamespaceSelector | quote }}'),
  when: [".Values.watchNamespaceSelector"],
};
const SCHEDULING = ["nodeSelector", "tolerations", "affinity", "topologySpreadConstraints"] as const;

type Context = {
  namespace: string;
  prefix: string;
  values: Values;
  /** Secret name → the feature (webhook or metrics) its certificate serves, from the cert-manager variant. */
  certSecrets: Map<string, string>;
  metricsPort: number;
  webhookPort: number;
};

/** The chart's files, relative to the repository root. */
export function chartFiles(root: string): Map<string, string> {
  const kustomization = parse(readFileSync(join(root, "config", "default", "kustomization.yaml"), "utf8")) as Obj;
  const namespace = String(kustomization.namespace);
  const prefix = String(kustomization.namePrefix);
  const self = kustomize(join(root, "config", "default")).filter((o) => o.kind !== "Namespace");
  const certManager = kustomize(join(root, "config", "default-certmanager")).filter((o) => o.kind !== "Namespace");
  const extras = kustomizeWith(root, ["config/prometheus", "config/network-policy"], namespace, prefix);
  // Rendered without the ServiceAccount (and the claims ClusterRole), bindings name them unprefixed: as config/sharded
  // and config/tenant render them, they name config/default's.
  const bound = (o: Obj): Obj =>
    !o.kind.endsWith("Binding")
      ? o
      : {
          ...o,
          roleRef: { ...o.roleRef, name: o.roleRef.name.startsWith(prefix) ? o.roleRef.name : prefix + o.roleRef.name },
          subjects: o.subjects.map((x: Obj) => ({ ...x, name: `${prefix}controller-manager`, namespace })),
        };
  // Namespace claims and the namespace reader, cluster-wide (config/sharded's, named as config/default's objects).
  const shardedRBAC = kustomize(join(root, "config", "sharded", "rbac")).map(bound);
  // A tenant's Role and RoleBindings, as in each of its namespaces (config/tenant/namespaces/*).
  const perNamespace = kustomizeWith(root, ["config/rbac/namespace"], namespace, prefix).map(bound);

  const names = new Set<string>();
  for (const o of [...self, ...certManager, ...extras, ...shardedRBAC, ...perNamespace]) {
    const name = String(o.metadata?.name ?? "");
    if (o.kind !== "CustomResourceDefinition" && name.startsWith(prefix)) names.add(name);
  }
  const emitter = new Emitter(literalSubstitution(namespace, prefix, names));

  const values = defaultValues();
  const ctx: Context = {
    namespace,
    prefix,
    values,
    certSecrets: certSecretFeatures(certManager, prefix),
    metricsPort: bindPort(managerArgs(self), "metrics-bind-address"),
    webhookPort: Number(flagDefault("webhook-port")),
  };

  const out = new Map<string, string>();
  const put = (file: string, content: string) => {
    const path = join(CHART_DIR, "templates", file);
    if (out.has(path)) throw new Error(`two objects map to ${path}`);
    out.set(path, content);
  };

  const byKey = (objs: Obj[]) => new Map(objs.map((o) => [objectKey(o), o]));
  const a = byKey(self);
  const b = byKey(certManager);
  const keys = [...a.keys(), ...[...b.keys()].filter((k) => !a.has(k))];
  for (const key of keys) {
    const oa = a.get(key);
    const ob = b.get(key);
    const obj = (oa ?? ob)!;
    const { file, when } = placement(obj, prefix);
    const presence = oa && ob ? [] : oa ? [NOT_CM] : [CM];
    const tree = oa && ob ? openMap(merge(oa, ob, [NOT_CM], [CM]), key) : openMap(lit(obj), key);
    transform(obj, tree, ctx);
    put(file, templateFile(emitter, tree, and(presence, when)));
  }
  for (const obj of extras) {
    const { file, when } = placement(obj, prefix);
    const tree = openMap(lit(obj), objectKey(obj));
    if (obj.kind === "ServiceMonitor") serviceMonitor(root, tree, ctx);
    labels(tree);
    put(file, templateFile(emitter, tree, when));
  }
  for (const obj of shardedRBAC) {
    const { file, when } = placement(obj, prefix);
    const tree = openMap(lit(obj), objectKey(obj));
    labels(tree);
    put(file, templateFile(emitter, tree, when));
  }
  put("rbac/namespace_roles.yaml", namespaceRoles(emitter, perNamespace));
  put("checks.yaml", checksTemplate());
  put("grafana/dashboard.yaml", dashboardTemplate(prefix));
  put("_helpers.tpl", helpers(prefix));

  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string; description: string };
  out.set(join(CHART_DIR, "Chart.yaml"), chartYAML(pkg));
  out.set(join(CHART_DIR, "values.yaml"), valuesYAML(values));
  out.set(join(CHART_DIR, ".helmignore"), HELMIGNORE);
  out.set(join(CHART_DIR, DASHBOARD_IN_CHART), readFileSync(join(root, DASHBOARD), "utf8"));
  return out;
}

function placement(obj: Obj, prefix: string): { file: string; when: When } {
  if (obj.kind === "CustomResourceDefinition") {
    return { file: `crd/${obj.metadata.name}.yaml`, when: [".Values.crd.enable"] };
  }
  const name = String(obj.metadata?.name ?? "");
  const key = `${obj.kind}/${name.startsWith(prefix) ? name.slice(prefix.length) : name}`;
  const p = OBJECTS[key];
  if (!p) {
    throw new Error(
      `config/ renders ${obj.kind} ${name}, which the chart does not know: add it to OBJECTS in hack/helmgen/chart.ts`,
    );
  }
  return p;
}

function templateFile(emitter: Emitter, tree: TMap, when: When): string {
  const body = emitter.document(tree);
  if (!when.length) return body;
  const cond = when.length === 1 ? when[0] : `and ${when.map((c) => (/\s/.test(c) ? `(${c})` : c)).join(" ")}`;
  return `{{- if ${cond} }}\n${body}{{- end }}\n`;
}

/**
 * Names and the namespace in literal text become template expressions: config/default's prefixed names
 * follow fullnameOverride (also where they are part of a string: flags, DNS names, alert descriptions), its
 * namespace is the release's.
 */
function literalSubstitution(namespace: string, prefix: string, names: Set<string>): (text: string) => string {
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const suffixes = [...names].map((n) => n.slice(prefix.length)).sort((x, y) => y.length - x.length);
  const nameRe = new RegExp(`(?<![-a-z0-9])${escape(prefix)}(${suffixes.map(escape).join("|")})(?![-a-z0-9])`, "g");
  const nsRe = new RegExp(`(?<![-a-z0-9])${escape(namespace)}(?![-a-z0-9])`, "g");
  return (text) =>
    text
      .replace(nsRe, "{{ .Release.Namespace }}")
      .replace(nameRe, (_, suffix: string) => `{{ include "${HELPERS}.fullname" $ }}-${suffix}`);
}

function transform(obj: Obj, tree: TMap, ctx: Context): void {
  switch (obj.kind) {
    case "Deployment":
      deployment(tree, ctx);
      break;
    case "PodDisruptionBudget":
      podDisruptionBudget(tree, ctx);
      break;
    case "CustomResourceDefinition": {
      const meta = at(tree, ["metadata"], "CustomResourceDefinition");
      let annotations = entry(meta, "annotations");
      if (!annotations) meta.entries.push((annotations = { key: "annotations", value: { t: "map", entries: [] } }));
      const map = openMap(annotations.value, "CustomResourceDefinition.metadata.annotations");
      annotations.value = map;
      // Helm leaves the CRD (and with it every CronJob) in place on uninstall.
      map.entries.push({ key: "helm.sh/resource-policy", value: lit("keep"), when: [".Values.crd.keep"] });
      conversionWithWebhooks(tree);
      break;
    }
    case "ClusterRole": {
      const rules = entry(tree, "rules");
      const manager = obj.metadata.name === `${ctx.prefix}manager-role`;
      if (rules && rules.value.t === "list") {
        for (const item of rules.value.items) {
          const r = item.value.t === "lit" ? (item.value.v as Obj) : undefined;
          // The objects the webhook servers write (the CA bundle, the failure gate): only with webhooks.
          const webhookTarget = (x: string) => x.endsWith("webhookconfigurations") || x === "customresourcedefinitions";
          if (r?.resources?.some(webhookTarget)) item.when = and(item.when ?? [], [WEBHOOK]);
          // A tenant's keeps its webhook configurations only (config/rbac/tenant): the rest is a Role in each of its
          // namespaces, and the CRD's conversion webhook is the cluster's (config/platform).
          const own = (x: string) => x.endsWith("webhookconfigurations");
          if (manager && !r?.resources?.every(own)) item.when = and(item.when ?? [], [CLUSTER_WIDE]);
        }
      }
      break;
    }
    case "MutatingWebhookConfiguration":
    case "ValidatingWebhookConfiguration": {
      // Called for the watched namespaces only (those listed, or those the selector matches).
      const webhooks = entry(tree, "webhooks");
      if (!webhooks) throw new Error(`${obj.kind}: no webhooks`);
      const list = openList(webhooks.value, `${obj.kind}.webhooks`);
      webhooks.value = list;
      for (const item of list.items) {
        const w = openMap(item.value, `${obj.kind}.webhooks[]`);
        item.value = w;
        if (entry(w, "namespaceSelector")) throw new Error(`${obj.kind}: config/ sets a namespaceSelector`);
        w.entries.push({ inline: `include "${HELPERS}.webhookNamespaceSelector" $`, when: [SCOPED] });
      }
      break;
    }
  }
  labels(tree);
}

/**
 * The CRD's conversion webhook is the manager's: with webhook.enable=false there is none, and a version that
 * is not the storage version is then not served (config/crd/patches/webhook_in_cronjobs.yaml says why).
 */
function conversionWithWebhooks(tree: TMap): void {
  const spec = at(tree, ["spec"], "CustomResourceDefinition");
  const conversion = entry(spec, "conversion");
  if (!conversion) return;
  conversion.when = and(conversion.when, [WEBHOOK]);
  const versions = entry(spec, "versions");
  if (!versions) throw new Error("CustomResourceDefinition: no spec.versions");
  const list = openList(versions.value, "CustomResourceDefinition.spec.versions");
  versions.value = list;
  for (const item of list.items) {
    if (field(item.value, "storage") === true) continue;
    const version = openMap(item.value, "CustomResourceDefinition.spec.versions[]");
    item.value = version;
    const served = entry(version, "served");
    if (served) served.value = { t: "choice", when: [WEBHOOK], then: served.value, else: lit(false) };
  }
}

/** kustomize's managed-by label gives way to Helm's standard labels. */
function labels(tree: TMap): void {
  const meta = at(tree, ["metadata"], "object");
  const include = { inline: `include "${HELPERS}.labels" $` };
  const l = entry(meta, "labels");
  if (!l) {
    const i = meta.entries.findIndex((e) => "key" in e && e.key === "name");
    meta.entries.splice(i + 1, 0, { key: "labels", value: { t: "map", entries: [include] } });
    return;
  }
  const map = openMap(l.value, "metadata.labels");
  map.entries = map.entries.filter((e) => !("key" in e && e.key === "app.kubernetes.io/managed-by"));
  map.entries.push(include);
  l.value = map;
}

function deployment(tree: TMap, ctx: Context): void {
  const where = "Deployment";
  const spec = at(tree, ["spec"], where);
  const replicas = entry(spec, "replicas");
  ctx.values.replicaCount = replicas?.value.t === "lit" ? (replicas.value.v as number) : 1;
  if (replicas) replicas.value = expr("{{ .Values.replicaCount }}");
  else spec.entries.unshift({ key: "replicas", value: expr("{{ .Values.replicaCount }}") });

  const pod = at(tree, ["spec", "template", "spec"], where);
  for (const key of SCHEDULING) {
    const e = entry(pod, key);
    if (e && e.value.t !== "lit")
      throw new Error(`${where}: ${key} differs between config/default and config/default-certmanager`);
    ctx.values[key] = e
      ? (e.value as { v: unknown }).v
      : key === "tolerations" || key === "topologySpreadConstraints"
        ? []
        : {};
    const templated = { key, value: block(`.Values.${key}`), when: [`.Values.${key}`] };
    if (e) pod.entries.splice(pod.entries.indexOf(e), 1, templated);
    else pod.entries.push(templated);
  }

  const containers = entry(pod, "containers");
  if (!containers) throw new Error(`${where}: no containers`);
  const list = openList(containers.value, `${where}.containers`);
  containers.value = list;
  const item = list.items.find((i) => field(i.value, "name") === "manager");
  if (!item) throw new Error(`${where}: no container named manager`);
  const c = openMap(item.value, `${where}.containers[manager]`);
  item.value = c;
  // The manager's container first: its image sets the values' default, the webhooks container must match it.

  imageTemplate(c, ctx, where, true);

  managerArgsTemplate(c, ctx);
  const second = list.items.find((i) => field(i.value, "name") === "webhooks");
  if (second) webhooksContainer(second, ctx);
  for (const other of list.items)
    if (other !== item && other !== second)
      throw new Error(`${where}: container ${String(field(other.value, "name"))} is not known to the chart`);

  const env = entry(c, "env");
  if (!env) throw new Error(`${where}: the manager container has no env`);
  const envList = openList(env.value, `${where}.env`);
  env.value = envList;
  const enable = envList.items.find((i) => field(i.value, "name") === "ENABLE_WEBHOOKS");
  if (!enable) throw new Error(`${where}: the manager container has no ENABLE_WEBHOOKS`);
  const enableMap = openMap(enable.value, `${where}.env[ENABLE_WEBHOOKS]`);
  enable.value = enableMap;
  entry(enableMap, "value")!.value = expr(`{{ ${WEBHOOK} | toString | quote }}`);
  envList.extra = ".Values.env";
  // sharding.enable: the replica's identity, its Pod's name (config/sharded).
  const podNamespace = envList.items.findIndex((i) => field(i.value, "name") === "POD_NAMESPACE");
  if (podNamespace < 0) throw new Error(`${where}: the manager container has no POD_NAMESPACE`);
  envList.items.splice(podNamespace + 1, 0, {
    value: lit({ name: "POD_NAME", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } }),
    when: [".Values.sharding.enable"],
  });

  const ports = entry(c, "ports");
  if (ports) {
    const l = openList(ports.value, `${where}.ports`);
    ports.value = l;
    for (const p of l.items) {
      const port = field(p.value, "containerPort");
      if (port === ctx.webhookPort) p.when = and(p.when, [WEBHOOK]);
      if (port === ctx.metricsPort) p.when = and(p.when, [METRICS]);
    }
  }

  const resources = entry(c, "resources");
  ctx.values.resources = resources?.value.t === "lit" ? resources.value.v : {};
  const templated = { key: "resources", value: block(".Values.resources"), when: [".Values.resources"] };
  if (resources) c.entries.splice(c.entries.indexOf(resources), 1, templated);
  else c.entries.push(templated);

  // The certificate volumes and their mounts go with the feature their certificate serves.
  const volumeFeature = new Map<string, string>();
  const volumes = entry(pod, "volumes");
  if (volumes) {
    const l = openList(volumes.value, `${where}.volumes`);
    volumes.value = l;
    // A volume only the webhooks container mounts goes with the webhooks.
    const mountsOf = (x: Item | undefined) => {
      const c = x ? open(x.value) : undefined;
      const mounts = c?.t === "map" ? entry(c, "volumeMounts")?.value : undefined;
      const l = mounts ? open(mounts) : undefined;
      return new Set(l?.t === "list" ? l.items.map((m) => String(field(m.value, "name"))) : []);
    };
    const managerMounts = mountsOf(item);
    const webhooksMounts = mountsOf(second);
    for (const v of l.items) {
      const name = String(field(v.value, "name"));
      if (webhooksMounts.has(name) && !managerMounts.has(name)) v.when = and(v.when, [WEBHOOK]);
      const secret = field(v.value, "secret") as Obj | undefined;
      const feature = secret ? ctx.certSecrets.get(secret.secretName) : undefined;
      if (feature) {
        volumeFeature.set(String(field(v.value, "name")), feature);
        v.when = and(v.when, [feature]);
      }
    }
  }
  const mounts = entry(c, "volumeMounts");
  if (mounts) {
    const l = openList(mounts.value, `${where}.volumeMounts`);
    mounts.value = l;
    for (const m of l.items) {
      const feature = volumeFeature.get(String(field(m.value, "name")));
      if (feature) m.when = and(m.when, [feature]);
    }
  }
}

/** The container's image and pull policy from the chart's values (the first call sets the values' defaults). */
function imageTemplate(c: TMap, ctx: Context, where: string, first: boolean): void {
  const image = entry(c, "image");
  const ref = String(image?.value.t === "lit" ? image.value.v : "");
  const colon = ref.lastIndexOf(":");
  const tagged = colon > ref.lastIndexOf("/");
  const repository = tagged ? ref.slice(0, colon) : ref;
  const tag = tagged ? ref.slice(colon + 1) : "latest";
  if (!image) throw new Error(`${where}: a container has no image`);
  if (first) ctx.values.image = { repository, tag, pullPolicy: "" };
  else if (ctx.values.image.repository !== repository || ctx.values.image.tag !== tag)
    throw new Error(`${where}: the containers' images differ (${ref}): the chart has one image value`);
  image.value = expr('"{{ .Values.image.repository }}:{{ .Values.image.tag }}"');
  const pullPolicy = entry(c, "imagePullPolicy");
  if (pullPolicy) {
    ctx.values.image.pullPolicy = String((pullPolicy.value as { v: unknown }).v);
    pullPolicy.value = expr("{{ .Values.image.pullPolicy }}");
  } else {
    c.entries.splice(c.entries.indexOf(image) + 1, 0, {
      key: "imagePullPolicy",
      value: expr("{{ .Values.image.pullPolicy }}"),
      when: [".Values.image.pullPolicy"],
    });
  }
}

/**
 * The Pod's second webhook server (config/default's webhooks container): there with the webhooks, the manager's
 * image, the same log flags and extra env.
 */
function webhooksContainer(item: Item, ctx: Context): void {
  const where = "Deployment.containers[webhooks]";
  item.when = and(item.when, [WEBHOOK]);
  const c = openMap(item.value, where);
  item.value = c;
  imageTemplate(c, ctx, where, false);
  const args = entry(c, "args");
  if (!args) throw new Error(`${where}: no args`);
  const list = openList(args.value, `${where}.args`);
  args.value = list;
  for (const { flag, path } of VALUE_FLAGS.filter((f) => f.flag.startsWith("log-"))) {
    const valuePath = `.Values.${path.join(".")}`;
    const arg = expr(`{{ printf "--${flag}=%s" (toString ${valuePath}) | quote }}`);
    list.items.push({ value: arg, when: [`ne (toString ${valuePath}) ${JSON.stringify(flagDefault(flag))}`] });
  }
  // It reads the ExclusionCalendars of the manager's namespaces only (a tenant's install may read no others).
  list.items.push(WATCH_NAMESPACE_SELECTOR, WATCH_NAMESPACES);
  const env = entry(c, "env");
  if (env) {
    const envList = openList(env.value, `${where}.env`);
    env.value = envList;
    envList.extra = ".Values.env";
  }
}

function managerArgsTemplate(c: TMap, ctx: Context): void {
  const args = entry(c, "args");
  if (!args) throw new Error("Deployment: the manager container has no args");
  const list = openList(args.value, "Deployment.args");
  args.value = list;
  const argOf = (i: Item) => (i.value.t === "lit" && typeof i.value.v === "string" ? i.value.v : undefined);
  for (const item of list.items) {
    const arg = argOf(item);
    if (arg === undefined) continue;
    if (WEBHOOK_FLAG.test(arg)) item.when = and(item.when, [WEBHOOK]);
    if (arg.startsWith("--metrics-cert-path=")) item.when = and(item.when, [METRICS]);
    if (arg.startsWith("--metrics-bind-address=")) {
      item.value = { t: "choice", when: [METRICS], then: lit(arg), else: lit("--metrics-bind-address=0") };
    }
  }
  for (const { flag, path } of VALUE_FLAGS) {
    const def = flagDefault(flag);
    const valuePath = `.Values.${path.join(".")}`;
    const index = list.items.findIndex((i) => {
      const a = argOf(i);
      return a === `--${flag}` || a?.startsWith(`--${flag}=`);
    });
    const given = index >= 0 ? argOf(list.items[index]!)! : undefined;
    let item: Item;
    let value: unknown;
    if (typeof def === "boolean") {
      value = given === undefined ? def : given === `--${flag}` || given === `--${flag}=true`;
      if (given !== undefined) {
        const on = value ? given : `--${flag}`;
        const off = value ? `--${flag}=false` : given;
        item = { value: { t: "choice", when: [valuePath], then: lit(on), else: lit(off) } };
      } else if (def) {
        item = { value: lit(`--${flag}=false`), when: [`not ${valuePath}`] };
      } else {
        item = { value: lit(`--${flag}`), when: [valuePath] };
      }
    } else {
      value = given === undefined ? def : given.slice(`--${flag}=`.length);
      const arg = expr(`{{ printf "--${flag}=%s" (toString ${valuePath}) | quote }}`);
      item =
        given !== undefined
          ? { value: arg }
          : { value: arg, when: [`ne (toString ${valuePath}) ${JSON.stringify(def)}`] };
    }
    // --sharding replaces --leader-elect (the manager refuses both): neither form is passed with it.
    if (flag === "leader-elect") item.when = and(item.when, ["not .Values.sharding.enable"]);
    if (index >= 0) list.items[index] = { ...item, when: and(list.items[index]!.when, item.when) };
    else list.items.push(item);
    setPath(ctx.values, path, value);
  }
  list.items.push(WATCH_NAMESPACES);
  ctx.values.watchNamespaces = [];
}

function podDisruptionBudget(tree: TMap, ctx: Context): void {
  // Clusters before 1.21 serve PodDisruptionBudget only as policy/v1beta1, with the same fields for
  // minAvailable and maxUnavailable (the local cluster of the end-to-end tests is 1.20).
  const apiVersion = entry(tree, "apiVersion")!;
  const version = String((apiVersion.value as { v: unknown }).v);
  if (version === "policy/v1") {
    apiVersion.value = expr(
      '{{ if semverCompare ">=1.21-0" .Capabilities.KubeVersion.Version }}policy/v1{{ else }}policy/v1beta1{{ end }}',
    );
  }
  const spec = at(tree, ["spec"], "PodDisruptionBudget");
  const budget: Record<string, unknown> = { enable: true };
  spec.entries = spec.entries.filter((e) => {
    if (!("key" in e) || e.key === "selector") return true;
    budget[e.key] = (e.value as { v: unknown }).v;
    return false;
  });
  for (const key of ["minAvailable", "maxUnavailable", "unhealthyPodEvictionPolicy"]) {
    spec.entries.push({
      key,
      value: expr(`{{ .Values.podDisruptionBudget.${key} }}`),
      when: [`hasKey .Values.podDisruptionBudget "${key}"`],
    });
  }
  ctx.values.podDisruptionBudget = budget;
}

/**
 * The ServiceMonitor verifies the metrics certificate with cert-manager's CA (config/prometheus' TLS patch);
 * with the self-signed one the manager makes at start there is no CA to verify against (monitor.yaml as is).
 */
function serviceMonitor(root: string, tree: TMap, ctx: Context): void {
  const base = parse(readFileSync(join(root, "config", "prometheus", "monitor.yaml"), "utf8")) as Obj;
  const endpoints = entry(at(tree, ["spec"], "ServiceMonitor"), "endpoints")!;
  const list = openList(endpoints.value, "ServiceMonitor.spec.endpoints");
  endpoints.value = list;
  const first = openMap(list.items[0]!.value, "ServiceMonitor.spec.endpoints[0]");
  list.items[0]!.value = first;
  const tls = entry(first, "tlsConfig")!;
  const verified = { ...(tls.value as { v: Obj }).v };
  verified.serverName = `${ctx.prefix}controller-manager-metrics-service.${ctx.namespace}.svc`;
  tls.value = { t: "choice", when: [CM], then: lit(verified), else: lit(base.spec.endpoints[0].tlsConfig) };
}

/**
 * A tenant's Role and RoleBindings in each namespace of watchNamespaces (config/rbac/namespace, as config/tenant
 * renders them there): the manager's rules, and its claim.
 */
function namespaceRoles(emitter: Emitter, objs: Obj[]): string {
  const docs = objs.map((obj) => {
    const tree = openMap(lit(obj), objectKey(obj));
    at(tree, ["metadata"], obj.kind).entries.forEach((e) => {
      if ("key" in e && e.key === "namespace") e.value = expr("{{ $ns }}");
    });
    labels(tree);
    // In the range, `.` is the namespace: the release's is $.Release.
    return "---\n" + emitter.document(tree).replaceAll("{{ .Release.", "{{ $.Release.");
  });
  return `{{- if ${TENANT} }}\n` + `{{- range $ns := ${TENANT} }}\n` + docs.join("") + "{{- end }}\n" + "{{- end }}\n";
}

/**
 * What Helm can refuse before anything is applied: both ways of naming the namespaces, a tenant's install with the
 * CRDs (the cluster's: config/platform), and a watched namespace another install has claimed (its claim Lease names
 * that install: cmd/run.ts NAMESPACE_CLAIM). `lookup` reads the cluster on install and upgrade; `helm template` and a
 * client-side dry run see no claim.
 */
function checksTemplate(): string {
  const install = `printf "%s/%s" .Release.Namespace ${JSON.stringify(flagDefault("leader-election-id"))}`;
  return `{{- if and ${TENANT} .Values.watchNamespaceSelector }}
{{- fail "watchNamespaces and watchNamespaceSelector both name the namespaces the install acts in: set one" }}
{{- end }}
{{- if and ${TENANT} .Values.crd.enable }}
{{- fail "watchNamespaces: a tenant's install does not install the CRDs, which are the cluster's, with their conversion webhook (config/platform; docs/operating.md, Tenants and shards): set crd.enable=false" }}
{{- end }}
{{- $install := ${install} }}
{{- range $ns := ${TENANT} }}
{{- $claim := lookup "coordination.k8s.io/v1" "Lease" $ns ${JSON.stringify(CLAIM_LEASE)} }}
{{- $holder := dig "metadata" "annotations" ${JSON.stringify(INSTALL_ANNOTATION)} "" $claim }}
{{- if and $holder (ne $holder $install) }}
{{- fail (printf "namespace %s is claimed by the cronjob-operator install %s (the Lease ${CLAIM_LEASE} in %s), and two installs never act in one namespace: leave %s out of watchNamespaces, or uninstall %s first; if that install is gone, delete its claim: kubectl -n %s delete lease ${CLAIM_LEASE}" $ns $holder $ns $ns $holder $ns) }}
{{- end }}
{{- end }}
`;
}

function dashboardTemplate(prefix: string): string {
  return `{{- if .Values.grafana.enable }}
# config/grafana/cronjob-operator.json for Grafana's dashboard sidecar (it loads ConfigMaps labelled grafana_dashboard).
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "${HELPERS}.fullname" $ }}-grafana-dashboard
  namespace: {{ .Release.Namespace }}
  labels:
    app.kubernetes.io/name: ${prefix.replace(/-$/, "")}
    grafana_dashboard: "1"
    {{- include "${HELPERS}.labels" $ | nindent 4 }}
data:
  cronjob-operator.json: |-
    {{- .Files.Get "${DASHBOARD_IN_CHART}" | nindent 4 }}
{{- end }}
`;
}

function helpers(prefix: string): string {
  const base = prefix.replace(/-$/, "");
  return `{{/*
The prefix of every object's name: config/default's namePrefix unless fullnameOverride is set. An install that acts
in some namespaces only (watchNamespaces, watchNamespaceSelector) shares the cluster with others: its cluster-wide
objects (webhook configurations, ClusterRoles) are named after the release, <release>-${base} (as config/tenant's
<tenant>-${base}-...), or the release's name alone where it says ${base} already or where that would be longer than
${FULLNAME_MAX} characters (the metrics Service's name, ${FULLNAME_MAX} + ${63 - FULLNAME_MAX}, must fit in 63).
*/}}
{{- define "${HELPERS}.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trimSuffix "-" }}
{{- else if or .Values.watchNamespaces .Values.watchNamespaceSelector }}
{{- $name := printf "%s-%s" .Release.Name ${JSON.stringify(base)} }}
{{- if or (contains ${JSON.stringify(base)} .Release.Name) (gt (len $name) ${FULLNAME_MAX}) }}
{{- $name = .Release.Name }}
{{- end }}
{{- $name | trunc ${FULLNAME_MAX} | trimSuffix "-" }}
{{- else }}
{{- ${JSON.stringify(base)} }}
{{- end }}
{{- end }}

{{/*
The webhooks' namespaceSelector: the namespaces of watchNamespaces by name, or watchNamespaceSelector as a
LabelSelector.
*/}}
{{- define "${HELPERS}.webhookNamespaceSelector" -}}
{{- if .Values.watchNamespaces -}}
namespaceSelector:
  matchExpressions:
    - key: kubernetes.io/metadata.name
      operator: In
      values:
        {{- toYaml .Values.watchNamespaces | nindent 8 }}
{{- else if .Values.watchNamespaceSelector -}}
namespaceSelector:
  {{- include "${HELPERS}.labelSelector" .Values.watchNamespaceSelector | nindent 2 }}
{{- end -}}
{{- end }}

{{/*
A label selector in its string form (the manager's --watch-namespace-selector: "team=a,env in (x,y),!legacy") as a
LabelSelector: key=value and key==value in matchLabels; key!=value, key in (...), key notin (...), key and !key in
matchExpressions.
*/}}
{{- define "${HELPERS}.labelSelector" -}}
{{- $labels := dict }}
{{- $expressions := list }}
{{- range $term := regexFindAll "[^,(]+(\\\\([^)]*\\\\))?" . -1 }}
{{- $t := trim $term }}
{{- if regexMatch "^[^\\\\s!=()]+\\\\s+(in|notin)\\\\s+\\\\(.*\\\\)$" $t }}
{{- $key := regexReplaceAll "^([^\\\\s]+)\\\\s.*$" $t "\${1}" }}
{{- $op := ternary "In" "NotIn" (regexMatch "^[^\\\\s]+\\\\s+in\\\\s" $t) }}
{{- $values := list }}
{{- range $v := splitList "," (regexReplaceAll "^[^(]*\\\\((.*)\\\\)$" $t "\${1}") }}
{{- if trim $v }}{{- $values = append $values (trim $v) }}{{- end }}
{{- end }}
{{- $expressions = append $expressions (dict "key" $key "operator" $op "values" $values) }}
{{- else if regexMatch "^[^\\\\s!=]+\\\\s*!=" $t }}
{{- $parts := regexSplit "\\\\s*!=\\\\s*" $t 2 }}
{{- $expressions = append $expressions (dict "key" (index $parts 0) "operator" "NotIn" "values" (list (index $parts 1))) }}
{{- else if regexMatch "^[^\\\\s!=]+\\\\s*==?" $t }}
{{- $parts := regexSplit "\\\\s*==?\\\\s*" $t 2 }}
{{- $_ := set $labels (index $parts 0) (index $parts 1) }}
{{- else if hasPrefix "!" $t }}
{{- $expressions = append $expressions (dict "key" (trim (trimPrefix "!" $t)) "operator" "DoesNotExist") }}
{{- else }}
{{- $expressions = append $expressions (dict "key" $t "operator" "Exists") }}
{{- end }}
{{- end }}
{{- if $labels }}
matchLabels:
  {{- toYaml $labels | nindent 2 }}
{{- end }}
{{- if $expressions }}
matchExpressions:
  {{- toYaml $expressions | nindent 2 }}
{{- end }}
{{- end }}

{{/*
Helm's standard labels, on every object (the selectors keep config/'s labels only, so they never change).
*/}}
{{- define "${HELPERS}.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}
`;
}

function chartYAML(pkg: { version: string; description: string }): string {
  return (
    "# Generated by make manifests (hack/helmgen) from config/; edit config/ and regenerate.\n" +
    stringify(
      {
        apiVersion: "v2",
        name: CHART_NAME,
        description: pkg.description,
        type: "application",
        version: pkg.version,
        appVersion: pkg.version,
      },
      { lineWidth: 0 },
    )
  );
}

const HELMIGNORE = `# Patterns to ignore when building the chart package (helm package).
.DS_Store
*.swp
*.bak
*.tmp
*.orig
*~
`;

function defaultValues(): Values {
  return {
    fullnameOverride: "",
    image: { repository: "", tag: "", pullPolicy: "" },
    replicaCount: 1,
    resources: {},
    leaderElection: { enable: false },
    logging: { level: "", format: "" },
    perCronJobMetrics: true,
    watchNamespaces: [],
    watchNamespaceSelector: "",
    sharding: { enable: false },
    namespaceClaims: false,
    env: [],
    nodeSelector: {},
    tolerations: [],
    affinity: {},
    topologySpreadConstraints: [],
    podDisruptionBudget: { enable: false },
    crd: { enable: true, keep: true },
    webhook: { enable: true },
    certManager: { enable: false },
    metrics: { enable: true },
    prometheus: { enable: false },
    prometheusRule: { enable: false },
    networkPolicy: { enable: false },
    grafana: { enable: false },
  };
}

function certSecretFeatures(objs: Obj[], prefix: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const o of objs) {
    if (o.kind !== "Certificate") continue;
    const { when } = placement(o, prefix);
    const feature = when.find((w) => w === WEBHOOK || w === METRICS);
    if (feature) out.set(o.spec.secretName, feature);
  }
  return out;
}

function managerArgs(objs: Obj[]): string[] {
  const dep = objs.find((o) => o.kind === "Deployment");
  const c = dep?.spec?.template?.spec?.containers?.find((x: Obj) => x.name === "manager");
  if (!c) throw new Error("config/default renders no Deployment with a manager container");
  return c.args ?? [];
}

function bindPort(args: string[], flag: string): number {
  const arg = args.find((a) => a.startsWith(`--${flag}=`));
  const addr = arg ? arg.slice(flag.length + 3) : String(flagDefault(flag));
  return Number(addr.slice(addr.lastIndexOf(":") + 1));
}

function flagDefault(name: string): string | boolean {
  const f = FLAGS.find((x) => x.name === name);
  if (!f) throw new Error(`the manager has no flag --${name} (cmd/flags.ts)`);
  return f.default;
}

function setPath(obj: object, path: readonly string[], value: unknown): void {
  let o = obj as Record<string, unknown>;
  for (const k of path.slice(0, -1)) o = (o[k] ??= {}) as Record<string, unknown>;
  o[path.at(-1)!] = value;
}
