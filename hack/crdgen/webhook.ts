// Renders config/webhook/manifests.yaml from the webhook declarations (controller-gen's webhook output): the
// CronJob's defaulting and validating webhooks (webhooks/cronjob_webhook.ts), then the validating webhooks of the
// ExclusionCalendar and ConcurrencyGroup (webhooks/fleet_webhooks.ts), in one configuration of each type.
import { webhookMarkers } from "../../webhooks/cronjob_webhook.ts";
import { fleetWebhookMarkers } from "../../webhooks/fleet_webhooks.ts";
import { FAIL_ONCE_SERVED_ANNOTATION } from "../../webhooks/unserved.ts";

interface Declaration {
  mutating?: Marker;
  validating?: Marker;
  group: string;
  versions: readonly string[];
  resource: string;
  /**
   * A webhook added after a release: the Service port it is called through (one only its Pods serve), shipped
   * failurePolicy Ignore and listed in FAIL_ONCE_SERVED_ANNOTATION, which the manager turns to Fail once served.
   */
  servedBy?: number;
}
interface Marker {
  name: string;
  path: string;
  operations: readonly string[];
}

const DECLARATIONS: readonly Declaration[] = [webhookMarkers, ...fleetWebhookMarkers];

function webhook(d: Declaration, m: Marker) {
  return {
    admissionReviewVersions: ["v1"],
    clientConfig: {
      service: {
        name: "webhook-service",
        namespace: "system",
        path: m.path,
        ...(d.servedBy ? { port: d.servedBy } : {}),
      },
    },
    failurePolicy: d.servedBy ? "Ignore" : "Fail",
    name: m.name,
    rules: [
      {
        apiGroups: [d.group],
        apiVersions: [...d.versions],
        operations: [...m.operations],
        resources: [d.resource],
        // The apiserver's default, written out: rules is an atomic list, so a defaulted field the file
        // lacks would make every client-side `kubectl apply` of it a change ("configured").
        scope: "*",
      },
    ],
    sideEffects: "None",
  };
}

function configuration(kind: string, name: string, which: "mutating" | "validating"): Record<string, unknown> {
  const declared = DECLARATIONS.flatMap((d) => (d[which] ? [{ d, m: d[which] }] : []));
  const gated = declared.filter(({ d }) => d.servedBy).map(({ m }) => m.name);
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind,
    metadata: { name, ...(gated.length ? { annotations: { [FAIL_ONCE_SERVED_ANNOTATION]: gated.join(",") } } : {}) },
    webhooks: declared.map(({ d, m }) => webhook(d, m)),
  };
}

export function webhookConfigurations(): Array<Record<string, unknown>> {
  return [
    configuration("MutatingWebhookConfiguration", "mutating-webhook-configuration", "mutating"),
    configuration("ValidatingWebhookConfiguration", "validating-webhook-configuration", "validating"),
  ];
}
