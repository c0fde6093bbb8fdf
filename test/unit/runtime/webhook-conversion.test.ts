// CRD conversion webhooks (runtime/webhook/conversion.ts): the ConversionReview answers a converter gets,
// the apiserver's invariants checked before answering (apiextensions-apiserver's webhook_converter.go), and
// the conversion path on the real TLS webhook server beside an admission path: bad reviews answered as the
// admission ones are, size limits and metrics shared.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { CapturingLogger } from "../../capturing-logger.ts";
import type { WebhookCertificates } from "../../../envtest/certs.ts";
import { admissionRequest, admissionReview } from "../../admission.ts";
import { metricValue } from "../../metrics.ts";
import { postHTTPS, type Reply, startLoopbackWebhookServer, withWebhookServer } from "../../servers.ts";
import type { KubeObject } from "../../../runtime/kinds.ts";
import { discardLogger } from "../../../runtime/log.ts";
import { metricsRegistry } from "../../../runtime/metrics/registry.ts";
import { allowed, conversionHandler, type WebhookHandler } from "../../../runtime/webhook/index.ts";
import type { WebhookServer } from "../../../runtime/webhook/server.ts";
import { type AdmissionReview } from "../../../runtime/webhook/admission.ts";
import { type ConversionRequest, type ConversionReview, type Converter } from "../../../runtime/webhook/conversion.ts";

const V1 = "example.com/v1";
const V2 = "example.com/v2";

function widget(name: string, o: { apiVersion?: string; size?: number; namespace?: string } = {}): KubeObject {
  return {
    apiVersion: o.apiVersion ?? V1,
    kind: "Widget",
    metadata: {
      name,
      namespace: o.namespace ?? "ns",
      uid: `uid-${name}`,
      resourceVersion: "7",
      generation: 2,
      creationTimestamp: "2030-01-01T00:00:00Z",
      labels: { app: "w" },
      annotations: { "example.com/note": "n" },
      finalizers: ["example.com/f"],
      managedFields: [{ manager: "kubectl", operation: "Update" }],
    },
    spec: { size: o.size ?? 1 },
    status: { ready: true },
  };
}

/** v1 spec.size ⇄ v2 spec.dimensions.size. */
const convertWidget: Converter = (obj, desired) => {
  const spec = obj.spec as Record<string, unknown>;
  if (desired === V2) return { ...obj, apiVersion: V2, spec: { dimensions: { size: spec.size } } };
  if (desired === V1) return { ...obj, apiVersion: V1, spec: { size: (spec.dimensions as { size: number }).size } };
  throw new Error(`no conversion to ${desired}`);
};

function request(objects: KubeObject[], desiredAPIVersion = V2): ConversionRequest {
  return { uid: "f0b5e2d6-0000-4000-8000-000000000001", desiredAPIVersion, objects };
}

describe("conversion handler", () => {
  it("converts every object, in order, and echoes the uid", async () => {
    const objects = [widget("a", { size: 1 }), widget("b", { size: 2, namespace: "other" }), widget("c", { size: 3 })];
    const res = await conversionHandler(convertWidget).review(request(objects), discardLogger);
    assert.deepEqual(res.result, { status: "Success" });
    assert.equal(res.uid, "f0b5e2d6-0000-4000-8000-000000000001");
    assert.deepEqual(
      res.convertedObjects.map((o) => [o.apiVersion, o.metadata?.namespace, o.metadata?.name, o.spec]),
      [
        [V2, "ns", "a", { dimensions: { size: 1 } }],
        [V2, "other", "b", { dimensions: { size: 2 } }],
        [V2, "ns", "c", { dimensions: { size: 3 } }],
      ],
    );
    // Everything the converter kept comes back as it was.
    assert.deepEqual(res.convertedObjects[1], { ...objects[1], apiVersion: V2, spec: { dimensions: { size: 2 } } });
    const none = await conversionHandler(convertWidget).review(request([]), discardLogger);
    assert.deepEqual(none, { uid: request([]).uid, convertedObjects: [], result: { status: "Success" } });
  });

  it("returns objects already at the desired version unchanged, without calling the converter", async () => {
    const calls: string[] = [];
    const counting: Converter = (obj, desired) => {
      calls.push(obj.metadata?.name ?? "");
      return convertWidget(obj, desired);
    };
    const already = { ...widget("b"), apiVersion: V2, spec: { anything: "as it is" } };
    const res = await conversionHandler(counting).review(request([widget("a"), already, widget("c")]), discardLogger);
    assert.deepEqual(calls, ["a", "c"]);
    assert.equal(res.result.status, "Success");
    assert.deepEqual(res.convertedObjects[1], already);
    assert.deepEqual(
      res.convertedObjects.map((o) => o.metadata?.name),
      ["a", "b", "c"],
    );
  });

  it("hands the converter a copy: changing it in place is fine, and the checks compare with the original", async () => {
    const original = widget("a");
    const snapshot = structuredClone(original);
    const inPlace: Converter = (obj) => {
      obj.apiVersion = V2;
      obj.spec = { dimensions: { size: 1 } };
      return obj;
    };
    const ok = await conversionHandler(inPlace).review(request([original]), discardLogger);
    assert.equal(ok.result.status, "Success");
    assert.deepEqual(original, snapshot, "the request object was changed");

    const renaming: Converter = (obj) => {
      obj.apiVersion = V2;
      obj.metadata!.name = "b";
      return obj;
    };
    const bad = await conversionHandler(renaming).review(request([original]), discardLogger);
    assert.equal(bad.result.status, "Failure");
    assert.match(bad.result.message ?? "", /metadata\.name must stay "a", not "b"/);
  });

  it("answers each broken invariant with a Failure naming the object and the rule", async () => {
    const big = "x".repeat(256 * 1024);
    const cases: Array<[string, (o: KubeObject) => unknown, RegExp]> = [
      [
        "another apiVersion",
        (o) => ({ ...o, apiVersion: V1 }),
        /apiVersion must be the desired "example\.com\/v2", not "example\.com\/v1"/,
      ],
      [
        "no apiVersion",
        (o) => ({ ...o, apiVersion: undefined }),
        /apiVersion must be the desired "example\.com\/v2", not null/,
      ],
      ["another kind", (o) => ({ ...o, kind: "Gadget" }), /kind must stay "Widget", not "Gadget"/],
      ["no metadata", (o) => ({ ...o, metadata: undefined }), /metadata is missing/],
      ["metadata not an object", (o) => ({ ...o, metadata: [] }), /metadata must be an object, not an array/],
      [
        "another name",
        (o) => ({ ...o, metadata: { ...o.metadata, name: "x" } }),
        /metadata\.name must stay "w-2", not "x"/,
      ],
      [
        "another namespace",
        (o) => ({ ...o, metadata: { ...o.metadata, namespace: "elsewhere" } }),
        /metadata\.namespace must stay "ns", not "elsewhere"/,
      ],
      [
        "another uid",
        (o) => ({ ...o, metadata: { ...o.metadata, uid: "u2" } }),
        /metadata\.uid must stay "uid-w-2", not "u2"/,
      ],
      [
        "no uid",
        (o) => ({ ...o, metadata: { ...o.metadata, uid: undefined } }),
        /metadata\.uid must stay "uid-w-2", not ""/,
      ],
      [
        "labels not a map",
        (o) => ({ ...o, metadata: { ...o.metadata, labels: ["a"] } }),
        /metadata\.labels must be a map of strings, not an array/,
      ],
      [
        "a label that is not a string",
        (o) => ({ ...o, metadata: { ...o.metadata, labels: { app: "w", replicas: 3 } } }),
        /metadata\.labels\["replicas"\] must be a string, not number/,
      ],
      [
        "an invalid label key",
        (o) => ({ ...o, metadata: { ...o.metadata, labels: { "bad key!": "v" } } }),
        /metadata\.labels: Invalid value: "bad key!": name part must consist of alphanumeric characters/,
      ],
      [
        "an invalid label key prefix",
        (o) => ({ ...o, metadata: { ...o.metadata, labels: { "Example.com/app": "v" } } }),
        /metadata\.labels: Invalid value: "Example\.com\/app": prefix part a lowercase RFC 1123 subdomain/,
      ],
      [
        "a label value too long",
        (o) => ({ ...o, metadata: { ...o.metadata, labels: { app: "v".repeat(64) } } }),
        /metadata\.labels: Invalid value: "v{64}": must be no more than 63 characters/,
      ],
      [
        "an invalid label value",
        (o) => ({ ...o, metadata: { ...o.metadata, labels: { app: "-v" } } }),
        /metadata\.labels: Invalid value: "-v": a valid label must consist of/,
      ],
      [
        "an invalid annotation key",
        (o) => ({ ...o, metadata: { ...o.metadata, annotations: { "a/b/c": "v" } } }),
        /metadata\.annotations: Invalid value: "a\/b\/c": a qualified name must consist of/,
      ],
      [
        "annotations over 256 KiB",
        (o) => ({ ...o, metadata: { ...o.metadata, annotations: { note: big } } }),
        /metadata\.annotations: Too long: must have at most 262144 bytes/,
      ],
      [
        "an annotation that is not a string",
        (o) => ({ ...o, metadata: { ...o.metadata, annotations: { note: null } } }),
        /metadata\.annotations\["note"\] must be a string, not null/,
      ],
      ["undefined", () => undefined, /the converter returned undefined, not an object/],
      [
        "a circular object",
        (o) => {
          const c: Record<string, unknown> = { ...o };
          c.self = c;
          return c;
        },
        /the converted object cannot be written as JSON: .*circular/,
      ],
      ["a BigInt", (o) => ({ ...o, spec: { size: 10n } }), /the converted object cannot be written as JSON: .*BigInt/],
      ["an array", () => [], /the converter returned an array, not an object/],
      ["a string", () => "{}", /the converter returned string, not an object/],
    ];
    for (const [what, breakIt, rule] of cases) {
      // The second object is the broken one: the message must name it, not the first.
      const convert: Converter = async (obj, desired) => {
        const out = (await convertWidget(obj, desired)) as KubeObject;
        return (obj.metadata?.name === "w-2" ? breakIt(out) : out) as object;
      };
      const log = new CapturingLogger();
      const res = await conversionHandler(convert).review(request([widget("w-1"), widget("w-2")]), log);
      assert.equal(res.result.status, "Failure", what);
      assert.equal(res.uid, request([]).uid, what);
      assert.deepEqual(res.convertedObjects, [], what);
      const message = res.result.message ?? "";
      assert.match(message, /^the converter returned an invalid Widget ns\/w-2 for example\.com\/v2: /, what);
      assert.match(message, rule, what);
      assert.deepEqual(log.at("error"), ["The converter returned an invalid object"], what);
      assert.equal(log.lines.find((l) => l.level === "error")?.kv.object, "Widget ns/w-2", what);
    }
  });

  it("keeps the original metadata with the converter's labels and annotations, as the apiserver does, logging what it undid once", async () => {
    const convert: Converter = (obj, desired) => {
      const out = convertWidget(obj, desired) as KubeObject;
      const { annotations: _dropped, ...meta } = out.metadata!;
      return {
        ...out,
        metadata: {
          ...meta,
          labels: { app: "w", "example.com/version": "v2" },
          finalizers: [],
          resourceVersion: "8",
          generation: undefined,
        },
      };
    };
    const log = new CapturingLogger();
    const handler = conversionHandler(convert);
    const original = widget("a");
    const res = await handler.review(request([original]), log);
    assert.equal(res.result.status, "Success");
    const { annotations: _gone, ...kept } = original.metadata!;
    assert.deepEqual(res.convertedObjects[0]?.metadata, {
      ...kept,
      labels: { app: "w", "example.com/version": "v2" },
    });
    assert.deepEqual(
      log.lines.filter((l) => l.level === "info").map((l) => [l.msg, l.kv.object, l.kv.fields]),
      [
        [
          "The converter changed metadata other than labels and annotations; kept the original, as the apiserver does",
          "Widget ns/a",
          ["metadata.finalizers", "metadata.generation", "metadata.resourceVersion"],
        ],
      ],
    );
    // Once per field and handler: the next request logs nothing new.
    await handler.review(request([widget("b")]), log);
    assert.equal(log.lines.filter((l) => l.level === "info").length, 1);
    // Labels and annotations the converter leaves alone pass through, even ones Go would not accept anew.
    const legacy = widget("c");
    legacy.metadata!.labels = { "legacy label": "kept" };
    const res2 = await conversionHandler(convertWidget).review(request([legacy]), discardLogger);
    assert.equal(res2.result.status, "Success");
    assert.deepEqual(res2.convertedObjects[0]?.metadata?.labels, { "legacy label": "kept" });
  });

  it("turns a converter that throws or rejects into a Failure naming the object and the error", async () => {
    const cases: Array<[string, Converter, RegExp]> = [
      [
        "throws",
        () => {
          throw new Error("size is negative");
        },
        /^cannot convert Widget ns\/a to example\.com\/v2: size is negative$/,
      ],
      ["rejects", () => Promise.reject(new Error("later")), /^cannot convert Widget ns\/a to example\.com\/v2: later$/],
      [
        "throws a string",
        () => {
          throw "plain";
        },
        /: plain$/,
      ],
    ];
    for (const [what, convert, message] of cases) {
      const log = new CapturingLogger();
      const res = await conversionHandler(convert).review(request([widget("a")]), log);
      assert.equal(res.result.status, "Failure", what);
      assert.deepEqual(res.convertedObjects, [], what);
      assert.match(res.result.message ?? "", message, what);
      assert.deepEqual(log.at("error"), ["Conversion failed"], what);
    }
    // A cluster-scoped object is named without a namespace; one without a name by its index.
    const clusterScoped = { ...widget("global"), metadata: { name: "global", uid: "u" } };
    const nameless = { ...widget("x"), metadata: {} };
    const fail: Converter = () => {
      throw new Error("no");
    };
    const res = await conversionHandler(fail).review(request([clusterScoped]), discardLogger);
    assert.match(res.result.message ?? "", /^cannot convert Widget global to /);
    const res2 = await conversionHandler(fail).review(
      request([{ ...widget("ok"), apiVersion: V2 }, nameless]),
      discardLogger,
    );
    assert.match(res2.result.message ?? "", /^cannot convert Widget objects\[1\] to /);
  });
});

function conversionReview(request: Partial<ConversionRequest> & Record<string, unknown> = {}): ConversionReview {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "ConversionReview",
    request: { uid: "7c1e9d2a-0000-4000-8000-000000000002", desiredAPIVersion: V2, objects: [widget("a")], ...request },
  };
}

/** A CREATE of the Widget "a". */
const widgetReview = (): AdmissionReview =>
  admissionReview(
    admissionRequest({
      group: "example.com",
      resource: "widgets",
      kind: "Widget",
      operation: "CREATE",
      object: widget("a"),
      uid: "u-1",
    }),
  );

function parseConversion(reply: Reply): ConversionReview {
  assert.match(String(reply.headers["content-type"]), /^application\/json/);
  const review = JSON.parse(reply.body) as ConversionReview;
  assert.equal(review.apiVersion, "apiextensions.k8s.io/v1");
  assert.equal(review.kind, "ConversionReview");
  return review;
}

describe("conversion webhook on the webhook server", () => {
  let certs: WebhookCertificates;
  let server: WebhookServer;
  const handlers = new Map<string, WebhookHandler>([
    ["/convert", conversionHandler(convertWidget)],
    ["/validate", () => allowed()],
    [
      "/convert-broken",
      conversionHandler(() => {
        throw new Error("converter exploded");
      }),
    ],
  ]);

  const webhooks = withWebhookServer(handlers);
  before(() => {
    ({ certs, server } = webhooks);
  });

  it("converts a ConversionReview, beside an admission webhook on the same server", async () => {
    const sent = conversionReview({ objects: [widget("a", { size: 5 }), { ...widget("b"), apiVersion: V2 }] });
    const reply = await postHTTPS(`${server.url}/convert?timeout=30s`, certs.caPEM, JSON.stringify(sent));
    assert.equal(reply.status, 200);
    const got = parseConversion(reply);
    assert.equal(got.request, undefined);
    assert.equal(got.response?.uid, sent.request?.uid);
    assert.deepEqual(got.response?.result, { status: "Success" });
    assert.deepEqual(
      got.response?.convertedObjects.map((o) => [o.metadata?.name, o.apiVersion, o.spec]),
      [
        ["a", V2, { dimensions: { size: 5 } }],
        ["b", V2, { size: 1 }],
      ],
    );
    const admission = await postHTTPS(`${server.url}/validate`, certs.caPEM, JSON.stringify(widgetReview()));
    assert.equal(admission.status, 200);
    assert.equal((JSON.parse(admission.body) as AdmissionReview).response?.allowed, true);
  });

  it("answers a failing converter with 200 and a Failure result, not a 500", async () => {
    const sent = conversionReview();
    const reply = await postHTTPS(`${server.url}/convert-broken`, certs.caPEM, JSON.stringify(sent));
    assert.equal(reply.status, 200);
    assert.deepEqual(parseConversion(reply).response, {
      uid: sent.request?.uid,
      convertedObjects: [],
      result: { status: "Failure", message: "cannot convert Widget ns/a to example.com/v2: converter exploded" },
    });
  });

  it("answers a bad review with the HTTP status the admission review gets, and a ConversionReview saying why", async () => {
    const review = conversionReview() as unknown as Record<string, unknown>;
    const withRequest = (r: Record<string, unknown>) => JSON.stringify({ ...review, request: r });
    const cases: Array<[string, string, { method?: string; headers?: Record<string, string> }, number, RegExp]> = [
      ["non-JSON", "{not json", {}, 400, /^cannot decode the ConversionReview: /],
      ["empty", "", {}, 400, /^request body is empty$/],
      ["an array", "[]", {}, 400, /^the request body is not a JSON object$/],
      [
        "v1beta1",
        JSON.stringify({ ...review, apiVersion: "apiextensions.k8s.io/v1beta1" }),
        {},
        400,
        /^unsupported ConversionReview apiVersion "apiextensions\.k8s\.io\/v1beta1": this server accepts apiextensions\.k8s\.io\/v1 only \(set conversionReviewVersions: \["v1"\]/,
      ],
      [
        "another kind",
        JSON.stringify({ ...review, kind: "ConversionRequest" }),
        {},
        400,
        /^expected kind "ConversionReview", got "ConversionRequest"$/,
      ],
      [
        "an AdmissionReview",
        JSON.stringify(widgetReview()),
        {},
        400,
        /^expected kind "ConversionReview", got "AdmissionReview"$/,
      ],
      [
        "no request",
        JSON.stringify({ ...review, request: undefined }),
        {},
        400,
        /^the ConversionReview has no request$/,
      ],
      [
        "no uid",
        withRequest({ desiredAPIVersion: V2, objects: [] }),
        {},
        400,
        /^the ConversionReview request has no uid$/,
      ],
      ["no desiredAPIVersion", withRequest({ uid: "u", objects: [] }), {}, 400, /has no desiredAPIVersion$/],
      [
        "objects not a list",
        withRequest({ uid: "u", desiredAPIVersion: V2, objects: {} }),
        {},
        400,
        /objects is not a list$/,
      ],
      [
        "an object that is not one",
        withRequest({ uid: "u", desiredAPIVersion: V2, objects: [widget("a"), "b"] }),
        {},
        400,
        /objects\[1\] is not a JSON object$/,
      ],
      [
        "an object whose metadata is not one",
        withRequest({ uid: "u", desiredAPIVersion: V2, objects: [widget("a"), { ...widget("b"), metadata: "b" }] }),
        {},
        400,
        /objects\[1\]\.metadata is not a JSON object$/,
      ],
      ["GET", JSON.stringify(review), { method: "GET" }, 405, /^method GET not allowed; use POST$/],
      [
        "text/plain",
        JSON.stringify(review),
        { headers: { "content-type": "text/plain" } },
        400,
        /expected application\/json/,
      ],
    ];
    // The envelope's mistakes, which an admission path answers the same way for an AdmissionReview.
    const shared = new Set([
      "non-JSON",
      "empty",
      "an array",
      "v1beta1",
      "another kind",
      "no request",
      "no uid",
      "GET",
      "text/plain",
    ]);
    for (const [what, body, opts, code, message] of cases) {
      const reply = await postHTTPS(`${server.url}/convert`, certs.caPEM, body, opts);
      assert.equal(reply.status, code, what);
      const response = parseConversion(reply).response;
      assert.equal(response?.uid, "", what);
      assert.deepEqual(response?.convertedObjects, [], what);
      assert.equal(response?.result.status, "Failure", what);
      assert.equal(response?.result.code, code, what);
      assert.match(response?.result.message ?? "", message, what);
      if (shared.has(what)) {
        const asAdmission = body
          .replaceAll("ConversionReview", "AdmissionReview")
          .replace("apiextensions.k8s.io/", "admission.k8s.io/");
        const admission = await postHTTPS(`${server.url}/validate`, certs.caPEM, asAdmission, opts);
        assert.equal(admission.status, code, `${what} (admission)`);
        const admissionMessage = (JSON.parse(admission.body) as AdmissionReview).response?.status?.message ?? "";
        assert.equal(
          admissionMessage.replaceAll("AdmissionReview", "").replaceAll(/\(set .*\)|admission\.k8s\.io/g, ""),
          (response?.result.message ?? "")
            .replaceAll("ConversionReview", "")
            .replaceAll(/\(set .*\)|apiextensions\.k8s\.io/g, ""),
          `${what}: the same words`,
        );
      }
    }
    // A request without objects is an empty list, as Go decodes it.
    const empty = await postHTTPS(
      `${server.url}/convert`,
      certs.caPEM,
      withRequest({ uid: "u", desiredAPIVersion: V2 }),
    );
    assert.equal(empty.status, 200);
    assert.deepEqual(parseConversion(empty).response, {
      uid: "u",
      convertedObjects: [],
      result: { status: "Success" },
    });
  });

  it("shares the request size limit: 413 above maxBodyBytes, on conversion and admission paths alike", async () => {
    const small = await startLoopbackWebhookServer(certs, handlers, { maxBodyBytes: 4096 });
    try {
      const ok = JSON.stringify(conversionReview());
      assert.equal((await postHTTPS(`${small.url}/convert`, certs.caPEM, ok)).status, 200);
      const over = Buffer.alloc(4097, " ");
      over.write(ok);
      for (const path of ["/convert", "/validate"]) {
        const reply = await postHTTPS(`${small.url}${path}`, certs.caPEM, over);
        assert.equal(reply.status, 413, path);
      }
      const reply = await postHTTPS(`${small.url}/convert`, certs.caPEM, over);
      assert.equal(parseConversion(reply).response?.result.code, 413);
      assert.match(
        parseConversion(reply).response?.result.message ?? "",
        /request entity is too large; limit is 4096 bytes/,
      );
    } finally {
      await small.close();
    }
  });

  it("counts conversion requests under controller-runtime's webhook metrics, labelled with the path", async () => {
    const text = await metricsRegistry.metrics();
    assert.match(text, /^controller_runtime_webhook_requests_total\{webhook="\/convert-broken",code="500"\} 0$/m);
    assert.match(text, /^controller_runtime_webhook_requests_in_flight\{webhook="\/convert-broken"\} 0$/m);
    const total = (code: string) =>
      metricValue("controller_runtime_webhook_requests_total", { webhook: "/convert", code });
    const before200 = (await total("200")) ?? 0;
    const before400 = (await total("400")) ?? 0;
    await postHTTPS(`${server.url}/convert`, certs.caPEM, JSON.stringify(conversionReview()));
    await postHTTPS(`${server.url}/convert`, certs.caPEM, "{");
    assert.equal(await total("200"), before200 + 1);
    assert.equal(await total("400"), before400 + 1);
    assert.equal(await metricValue("controller_runtime_webhook_requests_in_flight", { webhook: "/convert" }), 0);
    assert.match(
      await metricsRegistry.metrics(),
      /^controller_runtime_webhook_latency_seconds_count\{webhook="\/convert"\} [1-9]\d*$/m,
    );
  });

  it("serves a conversion path registered after start", async () => {
    handlers.set("/convert-later", conversionHandler(convertWidget));
    const reply = await postHTTPS(`${server.url}/convert-later`, certs.caPEM, JSON.stringify(conversionReview()));
    assert.equal(reply.status, 200);
    assert.equal(parseConversion(reply).response?.result.status, "Success");
  });
});
