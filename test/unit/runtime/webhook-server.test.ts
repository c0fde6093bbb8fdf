// The webhook server over real HTTPS on 127.0.0.1 (no apiserver): AdmissionReview handling, the
// error answers the apiserver or a misbehaving client can provoke, HTTP/2 policy, certificate
// rotation, and the admission response builders' apimachinery-compatible messages.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import http2 from "node:http2";
import https from "node:https";
import tls from "node:tls";
import { after, before, describe, it } from "node:test";
import { metricsRegistry } from "../../../runtime/metrics/registry.ts";
import {
  allowed,
  denied,
  escapeJSONPointer,
  invalid,
  invalidField,
  patched,
  requiredField,
  type AdmissionHandler,
  type AdmissionRequest,
} from "../../../runtime/webhook/index.ts";
import type { WebhookServer, WebhookServerOptions } from "../../../runtime/webhook/server.ts";
import { tooLongField } from "../../../runtime/field.ts";
import { type AdmissionReview } from "../../../runtime/webhook/admission.ts";
import { generateWebhookCertificates, type WebhookCertificates } from "../../../envtest/certs.ts";
import { admissionRequest, admissionReview } from "../../admission.ts";
import { metricValue } from "../../metrics.ts";
import { postHTTPS, type Reply, startLoopbackWebhookServer, withWebhookServer } from "../../servers.ts";

/** A CREATE of the ConfigMap "cm", its request changed by `request`. */
function review(request: Partial<AdmissionRequest> = {}): AdmissionReview {
  const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm" } };
  const uid = "705ab4f5-6393-11e8-b7cc-42010a800002";
  const create = {
    group: "",
    resource: "configmaps",
    kind: "ConfigMap",
    operation: "CREATE",
    object: cm,
    uid,
  } as const;
  return admissionReview({ ...admissionRequest(create), ...request });
}

function parse(reply: Reply): AdmissionReview {
  assert.match(String(reply.headers["content-type"]), /^application\/json/);
  return JSON.parse(reply.body) as AdmissionReview;
}

function peerSerial(url: string, ca: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: hostname, port: Number(port), ca, servername: "localhost" }, () => {
      const serial = socket.getPeerCertificate().serialNumber;
      socket.end();
      resolve(serial);
    });
    socket.on("error", reject);
  });
}

async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 8_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** POSTs a review to `${url}/ok` through `agent`: the status, whether the socket was reused, and the Connection header. */
function postOk(
  url: string,
  agent: https.Agent,
): Promise<{ status: number; reused: boolean; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      `${url}/ok`,
      { method: "POST", agent, headers: { "content-type": "application/json" } },
      (res) => {
        res.resume();
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket, connection: res.headers.connection }),
        );
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(review()));
  });
}

describe("admission response builders", () => {
  const cronJob = { group: "batch.tutorial.kubebuilder.io", kind: "CronJob" };

  it("invalid() with one cause matches apierrors.NewInvalid", () => {
    const status = invalid(cronJob, "my-job", [invalidField("spec.schedule", "x", "expected exactly 5 fields")]);
    assert.deepEqual(status, {
      status: "Failure",
      code: 422,
      reason: "Invalid",
      message:
        'CronJob.batch.tutorial.kubebuilder.io "my-job" is invalid: spec.schedule: Invalid value: "x": expected exactly 5 fields',
      details: {
        name: "my-job",
        group: "batch.tutorial.kubebuilder.io",
        kind: "CronJob",
        causes: [
          {
            reason: "FieldValueInvalid",
            message: 'Invalid value: "x": expected exactly 5 fields',
            field: "spec.schedule",
          },
        ],
      },
    });
  });

  it("invalid() with several causes brackets them, drops repeats, and renders values like Go", () => {
    const status = invalid(cronJob, "a-very-long-name", [
      { field: "metadata.name", value: "a-very-long-name", detail: "must be no more than 52 characters" },
      invalidField("spec.startingDeadlineSeconds", -5, "must be greater than or equal to 0"),
      invalidField("spec.suspend", true, "not allowed"),
      invalidField("spec.x", null, "cannot be null"),
      invalidField("spec.schedule", "x", "bad"),
      invalidField("spec.schedule", "x", "bad"),
      requiredField("spec.jobTemplate"),
      requiredField("spec.timeZone", "must be set when suspended"),
      tooLongField("metadata.labels", "x".repeat(70), 63),
    ]);
    assert.equal(
      status.message,
      'CronJob.batch.tutorial.kubebuilder.io "a-very-long-name" is invalid: [' +
        'metadata.name: Invalid value: "a-very-long-name": must be no more than 52 characters, ' +
        "spec.startingDeadlineSeconds: Invalid value: -5: must be greater than or equal to 0, " +
        "spec.suspend: Invalid value: true: not allowed, " +
        "spec.x: Invalid value: null: cannot be null, " +
        'spec.schedule: Invalid value: "x": bad, ' +
        "spec.jobTemplate: Required value, " +
        "spec.timeZone: Required value: must be set when suspended, " +
        "metadata.labels: Too long: must have at most 63 bytes]",
    );
    // Causes are one per error, repeats included, as NewInvalid builds them.
    assert.equal(status.details?.causes?.length, 9);
    assert.deepEqual(status.details?.causes?.slice(6), [
      { reason: "FieldValueRequired", message: "Required value", field: "spec.jobTemplate" },
      { reason: "FieldValueRequired", message: "Required value: must be set when suspended", field: "spec.timeZone" },
      { reason: "FieldValueTooLong", message: "Too long: must have at most 63 bytes", field: "metadata.labels" },
    ]);
  });

  it("invalid() leaves the core group out of the kind", () => {
    const status = invalid({ group: "", kind: "ConfigMap" }, "cm", [invalidField("data.bad", "yes", "no")]);
    assert.equal(status.message, 'ConfigMap "cm" is invalid: data.bad: Invalid value: "yes": no');
    assert.equal(status.details?.group, undefined);
  });

  it("patched() carries a base64 JSON Patch only when there are operations", () => {
    const none = patched([]);
    assert.equal(none.allowed, true);
    assert.equal("patch" in none, false);
    assert.equal("patchType" in none, false);

    const ops = [{ op: "add" as const, path: `/metadata/labels/${escapeJSONPointer("example.com/by")}`, value: "x" }];
    const some = patched(ops, ["defaulted"]);
    assert.equal(some.patchType, "JSONPatch");
    assert.deepEqual(JSON.parse(Buffer.from(some.patch ?? "", "base64").toString("utf8")), [
      { op: "add", path: "/metadata/labels/example.com~1by", value: "x" },
    ]);
    assert.deepEqual(some.warnings, ["defaulted"]);
    assert.equal(escapeJSONPointer("a~b/c"), "a~0b~1c");
  });

  it("allowed() and denied() follow controller-runtime's codes", () => {
    assert.deepEqual(allowed(), { allowed: true, status: { code: 200 } });
    assert.deepEqual(allowed([]), { allowed: true, status: { code: 200 } });
    assert.deepEqual(denied("nope"), {
      allowed: false,
      status: { status: "Failure", code: 403, reason: "Forbidden", message: "nope" },
    });
    assert.equal(denied(invalid({ group: "", kind: "ConfigMap" }, "cm", [])).status?.code, 422);
  });
});

describe("webhook server", () => {
  let certs: WebhookCertificates;
  let server: WebhookServer;
  const seen: AdmissionRequest[] = [];
  const handlers = new Map<string, AdmissionHandler>([
    [
      "/validate",
      (req) => {
        seen.push(req);
        return allowed(["looks odd"]);
      },
    ],
    [
      "/throws",
      () => {
        throw new Error("handler exploded");
      },
    ],
    ["/rejects", () => Promise.reject(new Error("async failure"))],
    ["/garbage", () => ({ nope: true }) as never],
    ["/deny", () => denied(invalid({ group: "", kind: "ConfigMap" }, "cm", [invalidField("data.bad", "yes", "no")]))],
  ]);

  const webhooks = withWebhookServer(handlers);
  before(() => {
    ({ certs, server } = webhooks);
  });

  it("calls the handler and answers with an AdmissionReview v1 carrying the request uid", async () => {
    const sent = review();
    const reply = await postHTTPS(`${server.url}/validate`, certs.caPEM, JSON.stringify(sent));
    assert.equal(reply.status, 200);
    const got = parse(reply);
    assert.equal(got.apiVersion, "admission.k8s.io/v1");
    assert.equal(got.kind, "AdmissionReview");
    assert.equal(got.response?.uid, sent.request?.uid);
    assert.equal(got.response?.allowed, true);
    assert.deepEqual(got.response?.warnings, ["looks odd"]);
    assert.deepEqual(seen.at(-1), sent.request);
  });

  it("passes a denial's status through untouched", async () => {
    const got = parse(await postHTTPS(`${server.url}/deny`, certs.caPEM, JSON.stringify(review())));
    assert.equal(got.response?.allowed, false);
    assert.equal(got.response?.status?.code, 422);
    assert.equal(got.response?.status?.message, 'ConfigMap "cm" is invalid: data.bad: Invalid value: "yes": no');
  });

  it("answers 400 for malformed JSON, a wrong kind or version, a missing uid, an empty body", async () => {
    const cases: [string, string | Buffer, RegExp][] = [
      ["malformed", "{not json", /cannot decode the AdmissionReview/],
      ["kind", JSON.stringify({ ...review(), kind: "ConfigMap" }), /expected kind "AdmissionReview", got "ConfigMap"/],
      ["version", JSON.stringify({ ...review(), apiVersion: "admission.k8s.io/v1beta1" }), /admissionReviewVersions/],
      ["uid", JSON.stringify(review({ uid: "" })), /no uid/],
      ["no request", JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview" }), /no request/],
      ["array", "[]", /not a JSON object/],
      ["empty", "", /empty/],
    ];
    for (const [name, body, message] of cases) {
      const reply = await postHTTPS(`${server.url}/validate`, certs.caPEM, body);
      assert.equal(reply.status, 400, name);
      const got = parse(reply);
      assert.equal(got.response?.allowed, false, name);
      assert.equal(got.response?.status?.code, 400, name);
      assert.match(got.response?.status?.message ?? "", message, name);
    }
  });

  it("accepts only POST with application/json", async () => {
    const text = await postHTTPS(`${server.url}/validate`, certs.caPEM, JSON.stringify(review()), {
      headers: { "content-type": "text/plain" },
    });
    assert.equal(text.status, 400);
    assert.match(parse(text).response?.status?.message ?? "", /contentType=text\/plain, expected application\/json/);

    const charset = await postHTTPS(`${server.url}/validate`, certs.caPEM, JSON.stringify(review()), {
      headers: { "content-type": "application/json; charset=utf-8" },
    });
    assert.equal(charset.status, 200);

    const get = await postHTTPS(`${server.url}/validate`, certs.caPEM, "", { method: "GET" });
    assert.equal(get.status, 405);
    assert.equal(get.headers.allow, "POST");
  });

  it("answers 404 for unregistered paths", async () => {
    for (const path of ["/nope", "/validate/", "/", "/validate/extra"]) {
      const reply = await postHTTPS(`${server.url}${path}`, certs.caPEM, JSON.stringify(review()));
      assert.equal(reply.status, 404, path);
    }
    const query = await postHTTPS(`${server.url}/validate?timeout=10s`, certs.caPEM, JSON.stringify(review()));
    assert.equal(query.status, 200, "the apiserver appends ?timeout=");
  });

  it("turns a throwing, rejecting or nonsensical handler into allowed: false with code 500", async () => {
    const cases: [string, RegExp][] = [
      ["/throws", /^handler exploded$/],
      ["/rejects", /^async failure$/],
      ["/garbage", /no decision/],
    ];
    for (const [path, message] of cases) {
      const sent = review();
      const reply = await postHTTPS(`${server.url}${path}`, certs.caPEM, JSON.stringify(sent));
      assert.equal(reply.status, 200, path);
      const got = parse(reply);
      assert.equal(got.response?.uid, sent.request?.uid, path);
      assert.equal(got.response?.allowed, false, path);
      assert.equal(got.response?.status?.code, 500, path);
      assert.match(got.response?.status?.message ?? "", message, path);
    }
  });

  it("accepts a body of exactly 3 MiB, answers 413 above it, and keeps serving", async () => {
    const limit = 3 * 1024 * 1024;
    const json = JSON.stringify(review());
    const exact = Buffer.alloc(limit, " ");
    exact.write(json);
    assert.equal((await postHTTPS(`${server.url}/validate`, certs.caPEM, exact)).status, 200);

    const over = Buffer.alloc(limit + 1, " ");
    over.write(json);
    for (const chunked of [false, true]) {
      const reply = await postHTTPS(`${server.url}/validate`, certs.caPEM, over, { chunked });
      assert.equal(reply.status, 413, chunked ? "chunked" : "content-length");
      assert.match(parse(reply).response?.status?.message ?? "", /request entity is too large; limit is 3145728 bytes/);
    }
    const huge = Buffer.alloc(32 * 1024 * 1024, " ");
    assert.equal((await postHTTPS(`${server.url}/validate`, certs.caPEM, huge, { chunked: true })).status, 413);

    const after = await postHTTPS(`${server.url}/validate`, certs.caPEM, json);
    assert.equal(after.status, 200);
  });

  it("exports every path's series at 0 before its first request", async () => {
    const handlers = new Map<string, AdmissionHandler>([["/never-called", () => allowed()]]);
    const fresh = await startLoopbackWebhookServer(certs, handlers);
    try {
      const text = await metricsRegistry.metrics();
      for (const code of ["200", "500"]) {
        assert.match(
          text,
          new RegExp(`^controller_runtime_webhook_requests_total\\{webhook="/never-called",code="${code}"\\} 0$`, "m"),
        );
      }
      assert.match(text, /^controller_runtime_webhook_requests_in_flight\{webhook="\/never-called"\} 0$/m);
      assert.match(text, /^controller_runtime_webhook_latency_seconds_count\{webhook="\/never-called"\} 0$/m);
    } finally {
      await fresh.close();
    }
  });

  it("counts requests under controller-runtime's metric names", async () => {
    const before =
      (await metricValue("controller_runtime_webhook_requests_total", { webhook: "/deny", code: "200" })) ?? 0;
    await postHTTPS(`${server.url}/deny`, certs.caPEM, JSON.stringify(review()));
    await postHTTPS(`${server.url}/deny`, certs.caPEM, "{");
    assert.equal(
      await metricValue("controller_runtime_webhook_requests_total", { webhook: "/deny", code: "200" }),
      before + 1,
    );
    assert.ok(
      ((await metricValue("controller_runtime_webhook_requests_total", { webhook: "/deny", code: "400" })) ?? 0) >= 1,
    );
    assert.equal(await metricValue("controller_runtime_webhook_requests_in_flight", { webhook: "/deny" }), 0);
    const text = await metricsRegistry.metrics();
    assert.match(text, /^controller_runtime_webhook_latency_seconds_count\{webhook="\/deny"\} \d+$/m);
    assert.doesNotMatch(text, /webhook="\/nope"/, "unknown paths are not labels");
  });

  it("speaks HTTP/1.1 only by default", async () => {
    const { port } = new URL(server.url);
    const alpn = await new Promise<string | false>((resolve, reject) => {
      const s = tls.connect(
        { host: "127.0.0.1", port: Number(port), ca: certs.caPEM, ALPNProtocols: ["h2", "http/1.1"] },
        () => {
          resolve(s.alpnProtocol ?? false);
          s.end();
        },
      );
      s.on("error", reject);
    });
    assert.equal(alpn, "http/1.1");

    const err = await new Promise<Error | undefined>((resolve) => {
      const session = http2.connect(server.url, { ca: certs.caPEM });
      session.on("error", (e) => resolve(e));
      session.on("connect", () => {
        session.close();
        resolve(undefined);
      });
    });
    assert.equal((err as NodeJS.ErrnoException | undefined)?.code, "ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL");
  });

  it("reports readiness like StartedChecker", async () => {
    await server.checker()();
  });
});

async function http2Post(
  url: string,
  ca: string,
  path: string,
  body: string,
): Promise<{ status: number; body: string }> {
  const session = http2.connect(url, { ca });
  try {
    return await new Promise((resolve, reject) => {
      session.on("error", reject);
      const req = session.request({ ":method": "POST", ":path": path, "content-type": "application/json" });
      let status = 0;
      const chunks: Buffer[] = [];
      req.on("response", (h) => (status = Number(h[":status"])));
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => resolve({ status, body: Buffer.concat(chunks).toString("utf8") }));
      req.on("error", reject);
      req.end(body);
    });
  } finally {
    session.close();
  }
}

/** A webhook server on a free loopback port with `certs`, allowing every review at /ok; `o` changes its options. */
const startOk = (certs: WebhookCertificates, o: Partial<WebhookServerOptions> = {}) =>
  startLoopbackWebhookServer(certs, new Map<string, AdmissionHandler>([["/ok", () => allowed()]]), o);

describe("webhook server options", () => {
  let certs: WebhookCertificates;
  const start = (o: Partial<WebhookServerOptions> = {}) => startOk(certs, o);

  before(async () => {
    certs = await generateWebhookCertificates();
  });
  after(() => certs?.cleanup());

  it("serves HTTP/2 and HTTP/1.1 with enableHTTP2", async () => {
    const server = await start({ enableHTTP2: true, maxBodyBytes: 2048 });
    try {
      const sent = review();
      const h2 = await http2Post(server.url, certs.caPEM, "/ok", JSON.stringify(sent));
      assert.equal(h2.status, 200);
      assert.equal((JSON.parse(h2.body) as AdmissionReview).response?.uid, sent.request?.uid);
      assert.equal((await http2Post(server.url, certs.caPEM, "/nope", "{}")).status, 404);
      assert.equal((await http2Post(server.url, certs.caPEM, "/ok", " ".repeat(4096))).status, 413);
      assert.equal((await http2Post(server.url, certs.caPEM, "/ok", JSON.stringify(sent))).status, 200);
      assert.equal((await postHTTPS(`${server.url}/ok`, certs.caPEM, JSON.stringify(sent))).status, 200);
    } finally {
      await server.close();
    }
  });

  it("honours maxBodyBytes", async () => {
    const server = await start({ maxBodyBytes: 100 });
    try {
      assert.equal((await postHTTPS(`${server.url}/ok`, certs.caPEM, JSON.stringify(review()))).status, 413);
    } finally {
      await server.close();
    }
  });

  it("names the missing files when the certificate is absent", async () => {
    await assert.rejects(
      start({ certDir: "/nonexistent/serving-certs" }),
      /cannot read the webhook serving certificate \/nonexistent\/serving-certs\/tls\.crt: .*ENOENT/,
    );
    await assert.rejects(start({ keyName: "missing.key" }), (err: Error) =>
      err.message.includes(`${certs.dir}/missing.key`),
    );
  });

  it("fails its readiness check once closed, and close() is idempotent", async () => {
    const server = await start();
    await server.checker()();
    await Promise.all([server.close(), server.close()]);
    await assert.rejects(async () => server.checker()(), /not running/);
  });

  it("keeps an idle connection open past Node's 5 s default, so the API server reuses it rather than finding it closed", async () => {
    const server = await start();
    const agent = new https.Agent({ keepAlive: true, ca: certs.caPEM, maxSockets: 1 });
    try {
      const send = async () => {
        const { reused, connection } = await postOk(server.url, agent);
        return { reused, connection };
      };
      assert.equal((await send()).reused, false);
      await new Promise((r) => setTimeout(r, 5_500));
      assert.deepEqual(await send(), { reused: true, connection: "keep-alive" });
    } finally {
      agent.destroy();
      await server.close();
    }
  });

  it("drain(): still answers, but ends each HTTP/1.1 connection after its request and sends HTTP/2 sessions a GOAWAY", async () => {
    const server = await start({ enableHTTP2: true });
    const agent = new https.Agent({ keepAlive: true, ca: certs.caPEM, maxSockets: 1 });
    const send = async () => {
      const { status, connection } = await postOk(server.url, agent);
      return { status, connection };
    };
    const session = http2.connect(server.url, { ca: certs.caPEM });
    const connected = new Promise<void>((resolve, reject) => {
      session.once("connect", () => resolve());
      session.once("error", reject);
    });
    try {
      assert.deepEqual(await send(), { status: 200, connection: "keep-alive" });
      await connected;
      const goaway = new Promise<void>((resolve) => session.once("goaway", () => resolve()));
      server.drain();
      await goaway;
      assert.deepEqual(await send(), { status: 200, connection: "close" });
      assert.deepEqual(await send(), { status: 200, connection: "close" }, "a new connection, closed after it too");
      await server.checker()();
    } finally {
      session.destroy();
      agent.destroy();
      await server.close();
    }
  });

  it("lets an in-flight request finish on close()", async () => {
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let entered = () => {};
    const serving = new Promise<void>((r) => (entered = r));
    const slow = new Map<string, AdmissionHandler>([["/slow", async () => (entered(), await gate, allowed())]]);
    const server = await start({ handlers: slow });
    const pending = postHTTPS(`${server.url}/slow`, certs.caPEM, JSON.stringify(review()));
    // The request is in flight once its handler runs; a fixed sleep raced a slow handshake on a busy machine.
    await serving;
    const closed = server.close();
    release();
    assert.equal((await pending).status, 200);
    await closed;
  });
});

describe("webhook certificate rotation", () => {
  for (const layout of ["files", "secret-volume"] as const) {
    it(`serves a rotated certificate without a restart (${layout})`, async () => {
      const certs = await generateWebhookCertificates(undefined, { layout });
      // Long enough that only the directory watch can explain a prompt reload.
      const server = await startOk(certs, { certPollIntervalMs: 60_000 });
      try {
        const first = certs.serving.serialNumber;
        assert.equal(await peerSerial(server.url, certs.caPEM), first);
        const next = await certs.rotate();
        assert.notEqual(next.serialNumber, first);
        await eventually(
          "the new certificate being served",
          async () => (await peerSerial(server.url, certs.caPEM)) === next.serialNumber,
        );
        assert.equal((await postHTTPS(`${server.url}/ok`, certs.caPEM, JSON.stringify(review()))).status, 200);
        assert.equal(await server.reloadCertificate(), false, "unchanged files are not reloaded");
      } finally {
        await server.close();
        certs.cleanup();
      }
    });
  }

  it("keeps the current certificate when the new files are invalid, then picks up a good pair", async () => {
    const certs = await generateWebhookCertificates();
    const server = await startOk(certs, { certPollIntervalMs: 200 });
    try {
      const first = certs.serving.serialNumber;
      writeFileSync(`${certs.dir}/tls.crt`, "-----BEGIN CERTIFICATE-----\nhalf-writ");
      await assert.rejects(server.reloadCertificate(), /tls\.crt is not a PEM certificate/);
      // A complete certificate with the old key: the pair does not match.
      const other = await generateWebhookCertificates();
      writeFileSync(`${certs.dir}/tls.crt`, other.serving.certPEM);
      other.cleanup();
      await assert.rejects(server.reloadCertificate(), /tls\.key does not belong to the certificate/);
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(await peerSerial(server.url, certs.caPEM), first);
      assert.equal((await postHTTPS(`${server.url}/ok`, certs.caPEM, JSON.stringify(review()))).status, 200);

      const next = await certs.rotate();
      await eventually(
        "the good pair being served",
        async () => (await peerSerial(server.url, certs.caPEM)) === next.serialNumber,
      );
    } finally {
      await server.close();
      certs.cleanup();
    }
  });
});
