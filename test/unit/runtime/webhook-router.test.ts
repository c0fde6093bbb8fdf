// The webhook server's parts without a listener: path routing, AdmissionReview decoding and encoding,
// the admission HTTP handler on in-memory requests, and the in-flight count close() waits for.
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import type http from "node:http";
import { Readable } from "node:stream";
import { describe, it } from "node:test";
import { discardLogger } from "../../../runtime/log.ts";
import { allowed, type AdmissionHandler, type AdmissionReview } from "../../../runtime/webhook/admission.ts";
import { serveAdmission, type Incoming, type Outgoing } from "../../../runtime/webhook/http.ts";
import {
  checkResult,
  decodeReview,
  encodeReview,
  failureResponse,
  HTTPError,
  isJSONContentType,
  responseFor,
} from "../../../runtime/webhook/review.ts";
import { checkPaths, newRouter, requestPath } from "../../../runtime/webhook/router.ts";
import { InFlight } from "../../../runtime/webhook/tlsserver.ts";

/** An in-memory response: what was written, and a "close" the test emits. */
class FakeResponse extends EventEmitter implements Outgoing {
  status = 0;
  headers: http.OutgoingHttpHeaders = {};
  body = "";
  get headersSent(): boolean {
    return this.status !== 0;
  }
  writeHead(statusCode: number, headers: http.OutgoingHttpHeaders = {}) {
    this.status = statusCode;
    this.headers = headers;
    return this;
  }
  end(chunk: string) {
    this.body = chunk;
    this.emit("close");
    return this;
  }
  override once(event: "close", listener: () => void): this {
    return super.once(event, listener);
  }
}

function request(
  body: string,
  o: { method?: string; url?: string; headers?: http.IncomingHttpHeaders } = {},
): Incoming {
  return Object.assign(Readable.from([Buffer.from(body)]), {
    method: o.method ?? "POST",
    url: o.url ?? "/validate",
    headers: { "content-type": "application/json", ...o.headers },
    httpVersionMajor: 1,
  });
}

const review = (req: Record<string, unknown> = {}) =>
  JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: { uid: "u-1", operation: "CREATE", ...req },
  });

describe("webhook router", () => {
  it("sends registered paths to the route and answers everything else with a plain 404", () => {
    const handlers = new Map<string, string>([["/validate", "v"]]);
    const routed: Array<[string, string]> = [];
    const serve = newRouter(handlers, (path, handler) => routed.push([path, handler]), discardLogger);

    serve(request("", { url: "/validate?timeout=10s" }), new FakeResponse());
    for (const url of ["/validate/", "/", "/nope", "/validate/extra"]) {
      const res = new FakeResponse();
      serve(request("", { url }), res);
      assert.equal(res.status, 404, url);
      assert.equal(res.body, "404 page not found\n");
      assert.equal(res.headers["content-type"], "text/plain; charset=utf-8");
    }
    assert.deepEqual(routed, [["/validate", "v"]]);

    // The table is read per request: a path registered later is served.
    handlers.set("/mutate", "m");
    serve(request("", { url: "/mutate" }), new FakeResponse());
    assert.deepEqual(routed.at(-1), ["/mutate", "m"]);
  });

  it("sends a path no entry serves to the server's handler for unserved paths, when it has one", () => {
    const routed: Array<[string, string]> = [];
    const serve = newRouter(
      new Map([["/validate", "v"]]),
      (path, handler) => routed.push([path, handler]),
      discardLogger,
      (path) => `unserved ${path}`,
    );
    serve(request("", { url: "/validate-new-kind?timeout=10s" }), new FakeResponse());
    serve(request("", { url: "/validate" }), new FakeResponse());
    assert.deepEqual(routed, [
      ["/validate-new-kind", "unserved /validate-new-kind"],
      ["/validate", "v"],
    ]);
  });

  it("strips the query and checks registered paths", () => {
    assert.equal(requestPath("/a?b=c"), "/a");
    assert.equal(requestPath(undefined), "/");
    assert.doesNotThrow(() => checkPaths(["/a", "/b"]));
    assert.throws(() => checkPaths(["/a", "mutate"]), /webhook path "mutate" must start with "\/"/);
  });
});

describe("AdmissionReview decoding and encoding", () => {
  it("decodes the request and names what is wrong with a bad envelope", () => {
    assert.equal(decodeReview(Buffer.from(review())).uid, "u-1");
    const bad: Array<[string, RegExp]> = [
      ["", /request body is empty/],
      ["{", /cannot decode the AdmissionReview/],
      ["[]", /not a JSON object/],
      [JSON.stringify({ kind: "Pod" }), /expected kind "AdmissionReview", got "Pod"/],
      [JSON.stringify({ kind: "AdmissionReview", apiVersion: "admission.k8s.io/v1beta1" }), /accepts admission/],
      [JSON.stringify({ kind: "AdmissionReview", apiVersion: "admission.k8s.io/v1" }), /has no request/],
      [review({ uid: "" }), /has no uid/],
    ];
    for (const [body, message] of bad) {
      assert.throws(
        () => decodeReview(Buffer.from(body)),
        (err: unknown) => err instanceof HTTPError && err.code === 400 && message.test(err.message),
        body,
      );
    }
  });

  it("accepts only a well-formed decision from a handler", () => {
    assert.deepEqual(checkResult({ allowed: true }), { allowed: true });
    assert.throws(() => checkResult(undefined), /no decision/);
    assert.throws(() => checkResult({ allowed: "yes" }), /no decision/);
    assert.throws(() => checkResult({ allowed: true, warnings: [1] }), /warnings/);
    assert.throws(() => checkResult({ allowed: true, patch: [] }), /patch/);
  });

  it("answers with the request uid, a patch type for a patch, and no empty warnings", () => {
    const req = JSON.parse(review()).request;
    assert.deepEqual(responseFor(req, { allowed: true, patch: "W10=", warnings: [] }), {
      uid: "u-1",
      allowed: true,
      patch: "W10=",
      patchType: "JSONPatch",
    });
    assert.deepEqual(JSON.parse(encodeReview(failureResponse(413, "too big"))), {
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: "", allowed: false, status: { status: "Failure", code: 413, message: "too big" } },
    });
    assert.ok(isJSONContentType("Application/JSON; charset=utf-8"));
    assert.ok(!isJSONContentType(undefined));
  });

  it("answers with the request's uid even when a handler's result carries another", () => {
    const req = JSON.parse(review()).request;
    const result = checkResult({ allowed: true, uid: "not-the-request" });
    assert.equal(responseFor(req, result).uid, "u-1");
  });
});

describe("admission HTTP handler", () => {
  const o = { maxBodyBytes: 1024, logger: discardLogger };
  const serve = (handler: AdmissionHandler, req: Incoming) => {
    const res = new FakeResponse();
    return serveAdmission("/validate", handler, req, res, o).then((code) => ({ code, res }));
  };

  it("answers 200 with the handler's decision", async () => {
    const { code, res } = await serve(() => allowed(["w"]), request(review()));
    assert.equal(code, 200);
    const got = JSON.parse(res.body) as AdmissionReview;
    assert.deepEqual(got.response, { uid: "u-1", allowed: true, status: { code: 200 }, warnings: ["w"] });
  });

  it("answers the request's own mistakes itself, with the code it counts", async () => {
    const never: AdmissionHandler = () => assert.fail("the handler must not be called");
    const cases: Array<[Incoming, number]> = [
      [request(review(), { method: "GET" }), 405],
      [request(review(), { headers: { "content-type": "text/plain" } }), 400],
      [request(review(), { headers: { "content-length": "4096" } }), 413],
      [request(" ".repeat(2048)), 413],
      [request("{"), 400],
    ];
    for (const [req, want] of cases) {
      const { code, res } = await serve(never, req);
      assert.equal(code, want);
      assert.equal(res.status, want);
      assert.equal((JSON.parse(res.body) as AdmissionReview).response?.status?.code, want);
    }
  });

  it("turns a failing handler into a denial with code 500", async () => {
    const { code, res } = await serve(() => {
      throw new Error("boom");
    }, request(review()));
    assert.equal(code, 200);
    const got = JSON.parse(res.body) as AdmissionReview;
    assert.equal(got.response?.allowed, false);
    assert.equal(got.response?.status?.code, 500);
    assert.equal(got.response?.status?.message, "boom");
  });

  it("counts nothing for a client that left before sending its body", async () => {
    const req = Object.assign(new Readable({ read() {} }), {
      method: "POST",
      url: "/validate",
      headers: { "content-type": "application/json" },
      httpVersionMajor: 1,
    });
    const pending = serve(() => allowed(), req);
    req.destroy();
    const { code, res } = await pending;
    assert.equal(code, undefined);
    assert.equal(res.status, 0);
  });
});

describe("in-flight requests", () => {
  it("is idle at once with none, when the last response closes, or at the timeout", async () => {
    const inFlight = new InFlight();
    await inFlight.idle(60_000);
    const a = new FakeResponse();
    const b = new FakeResponse();
    inFlight.track(a);
    inFlight.track(b);
    assert.equal(inFlight.size, 2);
    let idle = false;
    const waiting = inFlight.idle(60_000).then(() => (idle = true));
    a.emit("close");
    await new Promise((r) => setImmediate(r));
    assert.equal(idle, false);
    b.emit("close");
    await waiting;
    assert.equal(inFlight.size, 0);

    const stuck = new InFlight();
    stuck.track(new FakeResponse());
    const t0 = performance.now();
    await stuck.idle(50);
    assert.ok(performance.now() - t0 >= 40);
  });
});
