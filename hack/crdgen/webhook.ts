// Renders config/webhook/manifests.yaml from the webhook declarations (controller-gen's webhook output).
import { webhookMarkers } from "../../webhooks/cronjob_webhook.ts";

function webhook(m: { name: string; path: string; operations: readonly string[] }) {
  return {
    admissionReviewVersions: ["v1"],
    clientConfig: { service: { name: "webhook-service", namespace: "system", path: m.path } },
    failurePolicy: "Fail",
    name: m.name,
    rules: [
      {
        apiGroups: [webhookMarkers.group],
        apiVersions: [...webhookMarkers.versions],
        operations: [...m.operations],
        resources: [webhookMarkers.resource],
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
      webhooks: [webhook(webhookMarkers.mutating)],
    },
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: "validating-webhook-configuration" },
      webhooks: [webhook(webhookMarkers.validating)],
    },
  ];
}
