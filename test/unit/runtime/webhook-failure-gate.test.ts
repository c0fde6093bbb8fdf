// The failure gate's decisions (runtime/webhook/failuregate.ts): which webhooks it may turn to Fail, which port of
// the Service they are called through, and whether that port has a ready endpoint. A release's added webhooks ship
// Ignore; making them Fail before their port is served would refuse writes for an upgrade's seconds, and making a
// webhook Fail that the configuration does not list would undo a user's choice.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type EndpointSlice,
  gatedWebhooks,
  hasReadyEndpoint,
  portNameOf,
} from "../../../runtime/webhook/failuregate.ts";

const ANNOTATION = "example.com/fail-once-served";
const service = { name: "webhook-service", namespace: "system" };
const hook = (name: string, failurePolicy: string, svc: Record<string, unknown> = { ...service, port: 9443 }) => ({
  name,
  failurePolicy,
  clientConfig: { service: svc },
});

describe("the webhook failure gate", () => {
  it("turns only the listed webhooks that are still Ignore and call its Service", () => {
    const cfg = {
      metadata: { annotations: { [ANNOTATION]: " added-a , added-b,added-c,added-d" } },
      webhooks: [
        hook("added-a", "Ignore"),
        hook("added-b", "Fail"), // already turned
        hook("added-c", "Ignore", { name: "other-service", namespace: "system", port: 9443 }),
        hook("added-d", "Ignore", { ...service, namespace: "elsewhere" }),
        hook("users-choice", "Ignore"), // not listed: a user's Ignore stays
      ],
    };
    assert.deepEqual(
      gatedWebhooks(cfg, ANNOTATION, service).map((w) => w.name),
      ["added-a"],
    );
    assert.deepEqual(gatedWebhooks({ ...cfg, metadata: {} }, ANNOTATION, service), []);
  });

  it("finds the port name a webhook's Service port has (443 when the webhook names none)", () => {
    const svc = {
      spec: {
        ports: [
          { name: "webhook", port: 443 },
          { name: "webhook-fleet", port: 9443 },
        ],
      },
    };
    assert.equal(portNameOf(svc, 9443), "webhook-fleet");
    assert.equal(portNameOf(svc, undefined), "webhook");
    assert.equal(portNameOf(svc, 8443), undefined);
    assert.equal(portNameOf({ spec: { ports: [{ port: 443 }] } }, undefined), "");
  });

  it("is served once a slice with the port has a ready endpoint; Pods without the port never count", () => {
    const slice = (ports: string[], ready: Array<boolean | null | undefined>): EndpointSlice => ({
      ports: ports.map((name) => ({ name })),
      endpoints: ready.map((r) => (r === undefined ? {} : { conditions: { ready: r } })),
    });
    // An old release's Pods, ready: their slice has no webhook-fleet port.
    assert.equal(hasReadyEndpoint([slice(["webhook"], [true, true])], "webhook-fleet"), false);
    // A new Pod, not ready yet.
    assert.equal(
      hasReadyEndpoint([slice(["webhook"], [true]), slice(["webhook", "webhook-fleet"], [false])], "webhook-fleet"),
      false,
    );
    // Ready (unset and null mean ready, the EndpointSlice API's rule for consumers).
    assert.equal(hasReadyEndpoint([slice(["webhook", "webhook-fleet"], [false, true])], "webhook-fleet"), true);
    assert.equal(hasReadyEndpoint([slice(["webhook-fleet"], [undefined])], "webhook-fleet"), true);
    assert.equal(hasReadyEndpoint([slice(["webhook-fleet"], [null])], "webhook-fleet"), true);
    assert.equal(hasReadyEndpoint([{ ports: null, endpoints: null }], ""), false);
    assert.equal(hasReadyEndpoint([], "webhook-fleet"), false);
  });
});
