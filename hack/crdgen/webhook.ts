// Renders config/webhook/manifests.yaml from the webhook declarations (controller-gen's webhook output): the
// CronJob's defaulting and validating webhooks (webhooks/cronjob_webhook.ts), then the validating webhooks of the
// ExclusionCalendar and ConcurrencyGroup (webhooks/fleet_webhooks.ts), in one configuration of each type.
import { webhookMarkers } from "../../webhooks/cronjob_webhook.ts";
import { fleetWebhookMarkers } from "../../webhooks/fleet_webhooks.ts";

interface Declaration {
  mutating?: Marker;
  validating?: Marker;
  group: string;
  versions: readonly string[];
  resource: string;
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
    clientConfig: { service: { name: "webhook-service", namespace: "system", path: m.path } },
    failurePolicy: "Fail",
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

export function webhookConfigurations(): Array<Record<string, unknown>> {
  return [
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "MutatingWebhookConfiguration",
      metadata: { name: "mutating-webhook-configuration" },
      webhooks: DECLARATIONS.flatMap((d) => (d.mutating ? [webhook(d, d.mutating)] : [])),
    },
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: "validating-webhook-configuration" },
      webhooks: DECLARATIONS.flatMap((d) => (d.validating ? [webhook(d, d.validating)] : [])),
    },
  ];
}
