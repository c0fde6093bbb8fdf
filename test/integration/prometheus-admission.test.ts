// The admission alert against the real thing: a real Prometheus scrapes a real kube-apiserver's /metrics (as a
// cluster's Prometheus scrapes job="apiserver") with the alert rules loaded as they are. Our webhooks (the
// generated configurations, the real handlers) refusing an invalid CronJob is their job and fires nothing;
// once the webhook server is gone, the API server's failed call refuses the write and CronJobWebhookFailing
// fires on it. Also checks that kube-apiserver serves the admission metrics under the names and labels the
// rules, the runbooks and test/promql.ts's KUBE_APISERVER_METRICS assume.
//
// Prometheus comes from Debian's prometheus package (.ci/run installs it); it runs on free loopback ports
// with its own data directory, scraping and evaluating every second, and is stopped and removed after.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ApiException, KubernetesObjectApi, type KubernetesObject } from "@kubernetes/client-node";
import type { WebhookHandler } from "../../runtime/webhook/index.ts";
import { cronJobWebhookHandlers, MUTATE_PATH, VALIDATE_PATH } from "../../webhooks/cronjob_webhook.ts";
import { eventually } from "../eventually.ts";
import { minimalCronJob, variant } from "../fixtures.ts";
import { KUBE_APISERVER_METRICS } from "../promql.ts";
import { probeOf, tail, withPrometheus, withWebhookServer } from "../servers.ts";
import { callingWebhookRejectionCode, serverVersion } from "../versions.ts";

const NS = "default";
const ALERT = "CronJobWebhookFailing";
const OUR_WEBHOOKS =
  'name=~"mcronjob-v1[.]kb[.]io|vcronjob-v1[.]kb[.]io|vexclusioncalendar-v1[.]kb[.]io|vconcurrencygroup-v1[.]kb[.]io"';

interface PromAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: string;
}

describe(
  "Prometheus fires CronJobWebhookFailing from kube-apiserver's own admission metrics",
  { timeout: 300_000 },
  () => {
    let probed = false;

    const validate = cronJobWebhookHandlers().get(VALIDATE_PATH)!;
    const handlers = new Map<string, WebhookHandler>([
      [MUTATE_PATH, cronJobWebhookHandlers().get(MUTATE_PATH)!],
      [
        VALIDATE_PATH,
        (req) => {
          if (req.dryRun) probed = true;
          return validate(req);
        },
      ],
    ]);

    const webhooks = withWebhookServer(handlers, {
      cluster: { probes: [{ object: probeOf(minimalCronJob("unused")), seen: () => probed }] },
    });
    const prom = withPrometheus("prometheus-admission");
    const promAPI = prom.api;
    const query = prom.query;
    const ourAlerts = () =>
      promAPI<{ alerts: PromAlert[] }>("/api/v1/alerts").then((r) =>
        r.alerts.filter((a) => a.labels.alertname === ALERT),
      );
    const detail = async () =>
      `\ntargets: ${JSON.stringify(await promAPI("/api/v1/targets").catch((e: unknown) => String(e)))}` +
      `\nprometheus log:\n${tail(prom.log, 10)}`;

    it("a refused invalid CronJob fires nothing; a failed webhook call fires the alert with its runbook", async () => {
      const env = webhooks.env;
      // Prometheus scrapes the API server with the admin token, as a cluster's Prometheus does with its own.
      // Not a skip: without Prometheus this test fails, saying how to get it.
      await prom.start({ token: env.token, targets: [{ job: "apiserver", target: new URL(env.server).host }] });
      await eventually(
        "the API server scraped",
        async () => {
          if (!prom.running) throw new Error("prometheus exited");
          return (await query('up{job="apiserver"} == 1')).length === 1;
        },
        60_000,
        detail,
      );

      // The webhooks at work: an invalid CronJob refused (422), a valid one admitted.
      const api = KubernetesObjectApi.makeApiClient(env.kubeConfig);
      const invalid = variant(minimalCronJob("never", NS), (o) => (o.spec.schedule = "0 0 30 2 *"));
      const refused = await api.create(invalid as KubernetesObject).then(
        () => assert.fail("the validating webhook admitted an invalid schedule"),
        (e: unknown) => e,
      );
      assert.ok(refused instanceof ApiException && refused.code === 422, String(refused));
      await api.create(minimalCronJob("valid", NS) as KubernetesObject);

      // kube-apiserver counts the refusal under the names and labels the rules select.
      const rejection = await eventually(
        "the refusal in apiserver_admission_webhook_rejection_count",
        async () =>
          (await query(`apiserver_admission_webhook_rejection_count{${OUR_WEBHOOKS}}`)).find(
            (s) => s.metric.rejection_code === "422",
          ),
        30_000,
        detail,
      );
      assert.deepEqual(rejection.metric, {
        __name__: "apiserver_admission_webhook_rejection_count",
        instance: new URL(env.server).host,
        job: "apiserver",
        name: "vcronjob-v1.kb.io",
        type: "validating",
        operation: "CREATE",
        error_type: "no_error",
        rejection_code: "422",
      });
      for (const [metric, labels] of Object.entries(KUBE_APISERVER_METRICS)) {
        const series = await query(`${metric}{${OUR_WEBHOOKS}}`);
        assert.ok(series.length > 0, `kube-apiserver serves no ${metric} for our webhooks`);
        for (const s of series) {
          const names = Object.keys(s.metric).filter((k) => !["__name__", "job", "instance"].includes(k));
          assert.deepEqual(names.sort(), [...labels].sort(), `${metric}'s labels: ${JSON.stringify(s.metric)}`);
        }
      }
      const admitted = await query(
        `apiserver_admission_webhook_admission_duration_seconds_count{name="vcronjob-v1.kb.io", rejected="false"}`,
      );
      assert.ok(admitted.length > 0, 'the admitted CronJob is counted with rejected="false"');

      // Some evaluations later: a refusal of an invalid CronJob is no failure.
      const evaluatedAfter = Date.now() + 5_000;
      await eventually("rule evaluations", async () => Date.now() > evaluatedAfter, 10_000);
      assert.deepEqual(await ourAlerts(), [], `${ALERT} fired for a 422`);

      // The webhook server gone (the operator down): the API server cannot call the mutating webhook, refuses
      // the write, and counts a calling error.
      await webhooks.close();
      const failed = await api.create(minimalCronJob("blocked", NS) as KubernetesObject).then(
        () => assert.fail("the API server admitted a CronJob without its webhooks (failurePolicy: Fail)"),
        (e: unknown) => e,
      );
      assert.ok(failed instanceof ApiException, String(failed));
      assert.match(
        String((failed as ApiException<unknown>).body),
        /failed calling webhook \\?"mcronjob-v1\.kb\.io\\?"/,
      );

      const alert = await eventually(
        `${ALERT} firing`,
        async () => (await ourAlerts()).find((a) => a.state === "firing"),
        60_000,
        detail,
      );
      assert.deepEqual(alert.labels, {
        alertname: ALERT,
        severity: "critical",
        name: "mcronjob-v1.kb.io",
        type: "admit",
        operation: "CREATE",
        error_type: "calling_webhook_error",
        // A refused connection: 0 on 1.20–1.22, 400 on 1.23–1.33, 503 from 1.34 (see callingWebhookRejectionCode).
        rejection_code: callingWebhookRejectionCode(await serverVersion(env.kubeConfig)),
      });
      assert.equal(
        alert.annotations.runbook_url,
        `https://github.com/cronjob-operator/cronjob-operator/blob/main/docs/runbooks/${ALERT}.md`,
      );
      assert.match(alert.annotations.summary ?? "", /webhook mcronjob-v1\.kb\.io fail/);
    });
  },
);
