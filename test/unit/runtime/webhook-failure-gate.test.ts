// The failure gate's decisions (runtime/webhook/failuregate.ts): which webhooks it gates, which port of the Service
// they are called through, whether that port has a ready endpoint, and the failing twins it adds. A release's added
// webhooks ship Ignore; a failing twin before their port is served would refuse writes for an upgrade's seconds.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type EndpointSlice,
  gatedWebhooks,
  hasReadyEndpoint,
  portNameOf,
  servedTwinName,
  withTwins,
} from "../../../runtime/webhook/failuregate.ts";

const ANNOTATION = "example.com/fail-once-served";
const service = { name: "webhook-service", namespace: "system" };
const hook = (name: string, failurePolicy: string, svc: Record<string, unknown> = { ...service, port: 9443 }) => ({
  name,
  failurePolicy,
  clientConfig: { service: svc },
});

describe("the webhook failure gate", () => {
  it("gates only the listed webhooks that call its Service", () => {
    const cfg = {
      metadata: { annotations: { [ANNOTATION]: " added-a , added-c,added-d" } },
      webhooks: [
        hook("added-a", "Ignore"),
        hook("added-c", "Ignore", { name: "other-service", namespace: "system", port: 9443 }),
        hook("added-d", "Ignore", { ...service, namespace: "elsewhere" }),
        hook("users-choice", "Ignore"), // not listed: nothing is added beside it
      ],
    };
    assert.deepEqual(
      gatedWebhooks(cfg, ANNOTATION, service).map((w) => w.name),
      ["added-a"],
    );
    assert.deepEqual(gatedWebhooks({ ...cfg, metadata: {} }, ANNOTATION, service), []);
  });

  it("adds a failing twin beside a served webhook, keeps it, follows the webhook's changes, and drops it with the webhook", () => {
    assert.equal(servedTwinName("vexclusioncalendar-v1.kb.io"), "vexclusioncalendar-v1-served.kb.io");
    const a = { ...hook("va.kb.io", "Ignore"), rules: ["r1"], clientConfig: { service, caBundle: "CA1" } };
    const b = hook("vb.kb.io", "Fail");
    // Not served yet: nothing changes (the webhook stays Ignore, no twin: no write refused).
    assert.equal(
      withTwins([a, b], [a], () => false),
      undefined,
    );
    // Served: the twin, right after it, with Fail and its caBundle (none would fail TLS: a refusal).
    const twinned = withTwins([a, b], [a], () => true)!;
    assert.deepEqual(
      twinned.map((w) => [w.name, w.failurePolicy, w.clientConfig?.caBundle]),
      [
        ["va.kb.io", "Ignore", "CA1"],
        ["va-served.kb.io", "Fail", "CA1"],
        ["vb.kb.io", "Fail", undefined],
      ],
    );
    // Once there, kept whatever the endpoints say (never back), and unchanged is no write.
    assert.equal(
      withTwins(twinned, [a], () => false),
      undefined,
    );
    // The webhook changed (a re-apply of a newer release): the twin follows, keeping its own caBundle.
    const a2 = { ...a, rules: ["r1", "r2"], clientConfig: { service, caBundle: "CA2" } };
    const followed = withTwins([a2, twinned[1]!, b], [a2], () => false)!;
    assert.deepEqual(followed[1], {
      ...a2,
      name: "va-served.kb.io",
      failurePolicy: "Fail",
      clientConfig: { service, caBundle: "CA1" },
    });
    // No longer listed, or gone: its twin goes too.
    assert.deepEqual(
      withTwins(twinned, [], () => true)!.map((w) => w.name),
      ["va.kb.io", "vb.kb.io"],
    );
    assert.deepEqual(
      withTwins([twinned[1]!, b], [], () => true)!.map((w) => w.name),
      ["vb.kb.io"],
    );
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
