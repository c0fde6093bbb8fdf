// A real Prometheus scrapes the running operator and fires an alert of config/prometheus: the operator's
// metrics endpoint over HTTPS (its self-signed certificate) with the token of a ServiceAccount bound to the
// metrics-reader ClusterRole (TokenReview + SubjectAccessReview, as a ServiceMonitor's bearer token), the
// rule file loaded as it is, and CronJobMissedSchedule firing for a CronJob whose slot passed its
// startingDeadlineSeconds while the operator was down.
//
// Prometheus comes from Debian's prometheus package (.ci/run installs it); it runs here on free loopback
// ports with its own data directory, scraping and evaluating every second, and is stopped and removed after.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { parse } from "yaml";
import { API_VERSION, CronJobResource, KIND, type CronJob } from "../../api/v1/index.ts";
import { Client } from "../../runtime/client.ts";
import { Kinds, type ResourceKind } from "../../runtime/kinds.ts";
import { PROJECT_ROOT, TestEnv } from "../../envtest/index.ts";
import { freePort } from "../../envtest/ports.ts";
import { ManagedProcess } from "../../envtest/processes.ts";
import { eventually } from "../eventually.ts";
import { tail, withPrometheus } from "../servers.ts";

const NS = "prometheus-test";
const SCRAPER_NS = "monitoring";
const SCRAPER = "prometheus";
/** The scrape job the ServiceMonitor gives the operator's series (what the rules select). */
const JOB = "cronjob-operator-controller-manager-metrics-service";
/** A slot every 30 s; one more than 5 s late is not started. */
const EVERY_S = 30;
const DEADLINE_S = 5;

type Obj = Record<string, any>;

const ServiceAccount: ResourceKind = {
  group: "",
  version: "v1",
  kind: "ServiceAccount",
  plural: "serviceaccounts",
  namespaced: true,
};
const rbac = (kind: string, plural: string): ResourceKind => ({
  group: "rbac.authorization.k8s.io",
  version: "v1",
  kind,
  plural,
  namespaced: false,
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("Prometheus scrapes the operator and fires CronJobMissedSchedule", { timeout: 300_000 }, () => {
  let env: TestEnv;
  let client: Client;
  let operator: ManagedProcess | undefined;

  before(async () => {
    env = await TestEnv.start({});
    client = new Client(env.kubeConfig, { userAgent: "prometheus-test" });
  });
  // First: the operator logs into Prometheus's directory.
  after(async () => {
    await operator?.stop();
  });
  const prom = withPrometheus("prometheus-test");
  const promAPI = prom.api;
  after(async () => {
    client?.close();
    await env?.stop();
  });

  it("fires for a CronJob whose slot passed its starting deadline while the operator was down", async () => {
    const operatorLog = join(prom.dir, "operator.log");
    // The scraper: a ServiceAccount bound to the metrics-reader ClusterRole (config/rbac), and its token
    // (TokenRequest), which Prometheus sends as its bearer token.
    const reader = parse(readFileSync(join(PROJECT_ROOT, "config", "rbac", "metrics_reader_role.yaml"), "utf8")) as Obj;
    assert.equal(reader.kind, "ClusterRole");
    await client.create(rbac("ClusterRole", "clusterroles"), reader);
    for (const name of [NS, SCRAPER_NS])
      await client.create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
    await client.create(ServiceAccount, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: SCRAPER, namespace: SCRAPER_NS },
    });
    await client.create(rbac("ClusterRoleBinding", "clusterrolebindings"), {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "prometheus-metrics-reader" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: reader.metadata.name },
      subjects: [{ kind: "ServiceAccount", name: SCRAPER, namespace: SCRAPER_NS }],
    });
    const token = await env.serviceAccountToken(SCRAPER_NS, SCRAPER);

    // The CronJob, created while no operator runs: a slot every 30 s, at most 5 s late.
    const cj = await client.create<CronJob>(CronJobResource, {
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: { name: "missed", namespace: NS },
      spec: {
        schedule: `@every ${EVERY_S}s`,
        startingDeadlineSeconds: DEADLINE_S,
        jobTemplate: {
          spec: {
            template: { spec: { restartPolicy: "OnFailure", containers: [{ name: "c", image: "busybox:1.36" }] } },
          },
        },
      },
    } as unknown as CronJob);

    // Prometheus, scraping where the operator will listen, with the rule file as it is. The target carries a
    // `namespace` label, as a ServiceMonitor's does: honor_labels keeps the CronJobs' own.
    const metricsPort = await freePort();
    const probePort = await freePort();
    // Not a skip: without Prometheus this fails, saying how to get it.
    await prom.start({
      token,
      targets: [
        {
          job: JOB,
          target: `127.0.0.1:${metricsPort}`,
          labels: { namespace: "cronjob-operator-system" },
          honorLabels: true,
        },
      ],
    });
    const rules = await promAPI<{ groups: Array<{ rules: Array<{ name: string }> }> }>("/api/v1/rules");
    assert.ok(
      rules.groups.some((g) => g.rules.some((r) => r.name === "CronJobMissedSchedule")),
      "Prometheus did not load the rule file",
    );

    // Wait out a slot and its deadline: the slot at creation + 30 s is more than 5 s late from creation + 36 s
    // on, and the next one is not due before creation + 60 s.
    const created = Date.parse(cj.metadata.creationTimestamp!);
    const missedSlot = created + EVERY_S * 1000;
    await sleep(Math.max(0, missedSlot + (DEADLINE_S + 1) * 1000 - Date.now()));

    // The operator, with metrics over HTTPS (self-signed) and scrapers authenticated and authorised.
    operator = new ManagedProcess(
      "operator",
      join(PROJECT_ROOT, "node_modules", ".bin", "node"),
      [
        join(PROJECT_ROOT, "cmd", "main.ts"),
        `--kubeconfig=${env.kubeconfigPath}`,
        `--metrics-bind-address=127.0.0.1:${metricsPort}`,
        "--metrics-secure=true",
        `--health-probe-bind-address=127.0.0.1:${probePort}`,
      ],
      operatorLog,
      { ...process.env, ENABLE_WEBHOOKS: "false" },
    );
    const detail = async () =>
      `\ntargets: ${JSON.stringify(await promAPI("/api/v1/targets").catch((e: unknown) => String(e)))}` +
      `\noperator log:\n${tail(operatorLog)}\nprometheus log:\n${tail(prom.log, 10)}`;

    // The operator reports the miss in status (and its MissSchedule event).
    const status = await eventually(
      "status.lastMissedTime",
      async () => {
        if (!operator!.running) throw new Error("the operator exited");
        const s = (await client.get<CronJob>(CronJobResource, NS, "missed")).status;
        return s?.lastMissedTime ? s : undefined;
      },
      60_000,
      detail,
    );
    assert.equal(
      Date.parse(status.lastMissedTime!),
      missedSlot,
      `the missed slot (operator started ${Date.now() - missedSlot} ms after it)`,
    );

    // Prometheus scrapes it over HTTPS with the token: the series carries the CronJob's namespace.
    const series = await eventually(
      "cronjob_last_missed_time_seconds in Prometheus",
      async () => {
        const r = await promAPI<{ result: Array<{ metric: Record<string, string>; value: [number, string] }> }>(
          `/api/v1/query?query=${encodeURIComponent(`cronjob_last_missed_time_seconds{cronjob="missed"}`)}`,
        );
        return r.result[0];
      },
      60_000,
      detail,
    );
    assert.equal(series.metric.namespace, NS, JSON.stringify(series.metric));
    assert.equal(series.metric.job, JOB);
    assert.equal(Number(series.value[1]), missedSlot / 1000);

    // And the alert fires, with the CronJob in its labels and annotations.
    const alert = await eventually(
      "CronJobMissedSchedule firing",
      async () => {
        const r = await promAPI<{
          alerts: Array<{ labels: Record<string, string>; annotations: Record<string, string>; state: string }>;
        }>("/api/v1/alerts");
        return r.alerts.find(
          (a) =>
            a.labels.alertname === "CronJobMissedSchedule" &&
            a.labels.namespace === NS &&
            a.labels.cronjob === "missed" &&
            a.state === "firing",
        );
      },
      60_000,
      detail,
    );
    assert.equal(alert.labels.severity, "warning");
    assert.match(alert.annotations.summary ?? "", new RegExp(`CronJob ${NS}/missed missed a scheduled run`));
    assert.match(alert.annotations.description ?? "", new RegExp(`kubectl cron history -n ${NS} missed`));

    // The operator is up for Prometheus: the authorised scrape succeeded (no 401/403).
    const up = await promAPI<{ result: Array<{ value: [number, string] }> }>(
      `/api/v1/query?query=${encodeURIComponent(`up{job="${JOB}"}`)}`,
    );
    assert.equal(up.result[0]?.value[1], "1");
  });
});
