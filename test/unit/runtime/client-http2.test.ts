// runtime/client.ts over HTTP/2 (runtime/h2.ts) against local TLS servers: one connection for every request,
// streaming watches, errors and timeouts as over HTTP/1.1, HTTP/1.1 when the server only speaks it (ALPN) or
// when HTTP/2 is off, and a new connection after the server closes one. test/integration runs the same client
// against kube-apiserver.
import assert from "node:assert/strict";
import { createServer as createHTTPSServer } from "node:https";
import {
  createSecureServer,
  type Http2SecureServer,
  type Http2ServerRequest,
  type ServerHttp2Session,
} from "node:http2";
import type { AddressInfo } from "node:net";
import type { IncomingMessage } from "node:http";
import { after, before, describe, it } from "node:test";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "../../../runtime/client.ts";
import { APIError } from "../../../runtime/errors.ts";
import { Kinds } from "../../../runtime/kinds.ts";
import { issueCA, issueServingCertificate } from "../../../runtime/webhook/index.ts";

const CM = Kinds.ConfigMap;
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

let tlsMaterial: { ca: string; cert: string; key: string };

before(async () => {
  const now = Date.now();
  const ca = await issueCA("client-http2-ca", { notBefore: now - 60_000, notAfter: now + 3_600_000 });
  const cert = await issueServingCertificate(ca, ["localhost"], { notBefore: now - 60_000, notAfter: now + 3_600_000 });
  tlsMaterial = { ca: ca.certPEM, cert: cert.certPEM, key: cert.keyPEM };
});

type Req = IncomingMessage | Http2ServerRequest;
/** What the handler uses of http.ServerResponse and the HTTP/2 compatibility response alike. */
type Res = {
  writeHead(code: number, headers: Record<string, string>): unknown;
  write(chunk: string): unknown;
  end(chunk: string): unknown;
};

/** A tiny API server: GET a ConfigMap, POST echoes, a watch streams two events, `slow` never answers. */
function handler(seen: Array<{ method: string; url: string; httpVersion: string; body: string }>) {
  return (req: Req, res: Res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (body += c));
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", httpVersion: req.httpVersion, body });
      const url = new URL(req.url ?? "/", "https://localhost");
      const json = (code: number, o: unknown) => {
        res.writeHead(code, { "content-type": "application/json" });
        res.end(JSON.stringify(o));
      };
      if (url.pathname.endsWith("/slow")) return; // never answers
      if (url.pathname.endsWith("/delayed")) {
        setTimeout(() => json(200, { metadata: { name: "delayed" } }), 300);
        return;
      }
      if (url.searchParams.get("watch") === "true") {
        res.writeHead(200, { "content-type": "application/json" });
        res.write(`${JSON.stringify({ type: "ADDED", object: { metadata: { name: "a" } } })}\n`);
        setTimeout(() => {
          res.end(`${JSON.stringify({ type: "DELETED", object: { metadata: { name: "a" } } })}\n`);
        }, 20);
        return;
      }
      if (req.method === "POST") return json(201, JSON.parse(body));
      if (url.pathname.endsWith("/missing"))
        return json(404, { kind: "Status", code: 404, reason: "NotFound", message: 'configmaps "missing" not found' });
      return json(200, { metadata: { name: url.pathname.split("/").pop() }, httpVersion: req.httpVersion });
    });
  };
}

async function listen(server: Http2SecureServer | ReturnType<typeof createHTTPSServer>): Promise<number> {
  await new Promise<void>((r) => server.listen(0, "localhost", r));
  return (server.address() as AddressInfo).port;
}

function clientFor(port: number, o: { http2?: boolean } = {}): Client {
  return new Client(
    {
      getCurrentCluster: () => ({ server: `https://localhost:${port}` }),
      applyToHTTPSOptions: async (opts: { ca?: string }) => {
        opts.ca = tlsMaterial.ca;
      },
    } as unknown as ConstructorParameters<typeof Client>[0],
    { timeoutMs: 2_000, ...o },
  );
}

describe("the client over HTTP/2", () => {
  const seen: Array<{ method: string; url: string; httpVersion: string; body: string }> = [];
  const sessions: ServerHttp2Session[] = [];
  let server: Http2SecureServer;
  let port: number;
  before(async () => {
    server = createSecureServer({ cert: tlsMaterial.cert, key: tlsMaterial.key, allowHTTP1: true }, handler(seen));
    server.on("session", (s: ServerHttp2Session) => sessions.push(s));
    port = await listen(server);
  });
  after(() => server.close());

  it("sends every request, concurrent ones too, as streams of one connection", async () => {
    const client = clientFor(port);
    const before = sessions.length;
    const got = await Promise.all(
      Array.from({ length: 20 }, (_, i) => client.get<{ metadata: { name: string } }>(CM, "ns", `cm-${i}`)),
    );
    assert.deepEqual(
      got.map((o) => o.metadata.name),
      Array.from({ length: 20 }, (_, i) => `cm-${i}`),
    );
    const created = await client.create(CM, { metadata: { name: "x", namespace: "ns" }, data: { k: "v" } });
    assert.deepEqual(created, { metadata: { name: "x", namespace: "ns" }, data: { k: "v" } });
    assert.equal(sessions.length - before, 1, "one HTTP/2 connection");
    assert.ok(seen.slice(-21).every((r) => r.httpVersion === "2.0"));
    assert.equal(seen.at(-1)?.url, "/api/v1/namespaces/ns/configmaps?fieldManager=controller-runtime-node");
    client.close();
  });

  it("answers an API error as an APIError with the server's code and reason", async () => {
    const client = clientFor(port);
    await assert.rejects(client.get(CM, "ns", "missing"), (err: unknown) => {
      assert.ok(err instanceof APIError);
      assert.equal(err.code, 404);
      assert.equal(err.reason, "NotFound");
      return true;
    });
    client.close();
  });

  it("streams a watch's events as they come", async () => {
    const client = clientFor(port);
    const events: string[] = [];
    for await (const e of await client.watch(CM, { namespace: "ns" })) events.push(e.type);
    assert.deepEqual(events, ["ADDED", "DELETED"]);
    client.close();
  });

  it("fails a request the server does not answer within the timeout", async () => {
    const client = clientFor(port);
    await assert.rejects(
      client.request("GET", "/api/v1/namespaces/ns/configmaps/slow", { timeoutMs: 100 }),
      (err: unknown) => err instanceof APIError && err.reason === "Timeout",
    );
    client.close();
  });

  it("opens a new connection after the server closes one", async () => {
    const client = clientFor(port);
    await client.get(CM, "ns", "first");
    const n = sessions.length;
    sessions.at(-1)?.goaway();
    sessions.at(-1)?.destroy();
    await new Promise((r) => setTimeout(r, 50));
    const o = await client.get<{ metadata: { name: string } }>(CM, "ns", "second");
    assert.equal(o.metadata.name, "second");
    assert.equal(sessions.length, n + 1, "a second connection");
    client.close();
  });

  it("keeps a process alive while a request is in flight, not after (a CLI exits when done)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "client-http2-"));
    const script = join(dir, "cli.ts");
    writeFileSync(
      script,
      [
        `import { Client } from ${JSON.stringify(join(ROOT, "runtime/client.ts"))};`,
        `const kc = { getCurrentCluster: () => ({ server: "https://localhost:${port}" }),`,
        `  applyToHTTPSOptions: async (o: { ca?: string }) => { o.ca = ${JSON.stringify(tlsMaterial.ca)}; } };`,
        `const c = new Client(kc as never);`,
        `const o = await c.request("GET", "/api/v1/namespaces/ns/configmaps/delayed") as { metadata: { name: string } };`,
        `console.log(o.metadata.name);`,
      ].join("\n"),
    );
    try {
      const started = Date.now();
      const out = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
        const child = execFile(process.execPath, [script], { timeout: 10_000 }, () => {});
        let stdout = "";
        child.stdout?.on("data", (c: Buffer) => (stdout += String(c)));
        child.on("exit", (code) => resolve({ code, stdout }));
      });
      assert.equal(out.stdout.trim(), "delayed", "the answer arrived (the connection kept the process alive)");
      assert.equal(out.code, 0);
      assert.ok(Date.now() - started < 9_000, "the process exited once done");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps to HTTP/1.1 when told to (http2: false, as DISABLE_HTTP2 does)", async () => {
    const client = clientFor(port, { http2: false });
    const o = await client.get<{ httpVersion: string }>(CM, "ns", "h1");
    assert.equal(o.httpVersion, "1.1");
    client.close();
  });
});

describe("the client against a server without HTTP/2", () => {
  const seen: Array<{ method: string; url: string; httpVersion: string; body: string }> = [];
  let server: ReturnType<typeof createHTTPSServer>;
  let port: number;
  before(async () => {
    server = createHTTPSServer({ cert: tlsMaterial.cert, key: tlsMaterial.key }, handler(seen));
    port = await listen(server);
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  it("speaks HTTP/1.1 when the TLS handshake chooses it, requests and watches alike", async () => {
    const client = clientFor(port);
    const o = await client.get<{ httpVersion: string }>(CM, "ns", "a");
    assert.equal(o.httpVersion, "1.1");
    const events: string[] = [];
    for await (const e of await client.watch(CM, { namespace: "ns" })) events.push(e.type);
    assert.deepEqual(events, ["ADDED", "DELETED"]);
    await assert.rejects(
      client.get(CM, "ns", "missing"),
      (err: unknown) => err instanceof APIError && err.code === 404,
    );
    client.close();
  });
});
