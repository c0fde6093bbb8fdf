import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Counter, Registry } from "prom-client";
import { discardLogger } from "../../../runtime/log.ts";
import { registerProcessMetrics } from "../../../runtime/metrics/process.ts";
import { parseBindAddress, startMetricsServer } from "../../../runtime/metrics/server.ts";

const logger = discardLogger;

describe("parseBindAddress", () => {
  it("follows controller-runtime's forms", () => {
    assert.equal(parseBindAddress("0"), undefined);
    assert.deepEqual(parseBindAddress(":8080"), { host: "", port: 8080 });
    assert.deepEqual(parseBindAddress("127.0.0.1:0"), { host: "127.0.0.1", port: 0 });
    assert.deepEqual(parseBindAddress("[::1]:9443"), { host: "::1", port: 9443 });
    assert.deepEqual(parseBindAddress("localhost:8443"), { host: "localhost", port: 8443 });
  });

  it("rejects garbage, naming the value", () => {
    for (const bad of ["8080", "", ":http", ":70000", "::1:80", "a b:80", "[::1]80", "[nope]:80"]) {
      assert.throws(
        () => parseBindAddress(bad),
        (e: Error) => e.message.includes(JSON.stringify(bad)),
        bad,
      );
    }
    assert.throws(() => parseBindAddress("nope", "--metrics-bind-address"), /--metrics-bind-address "nope"/);
  });
});

describe("metrics server", () => {
  it("serves registered metrics on /metrics and 404 elsewhere", async () => {
    const registry = new Registry();
    const c = new Counter({
      name: "test_reconciles_total",
      help: "test",
      labelNames: ["result"],
      registers: [registry],
    });
    c.inc({ result: "success" }, 3);
    const srv = await startMetricsServer({ bindAddress: "127.0.0.1:0", registry, logger });
    try {
      assert.ok(srv.url);
      const res = await fetch(`${srv.url}/metrics`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("content-type"), registry.contentType);
      const body = await res.text();
      assert.match(body, /^test_reconciles_total\{result="success"\} 3$/m);
      assert.match(body, /^process_cpu_seconds_total /m);
      assert.match(body, /^nodejs_eventloop_lag_seconds /m);

      const other = await fetch(`${srv.url}/healthz`);
      assert.equal(other.status, 404);
      await other.arrayBuffer();
      const post = await fetch(`${srv.url}/metrics`, { method: "POST" });
      assert.equal(post.status, 405);
      await post.arrayBuffer();
    } finally {
      await srv.close();
    }
    // Closed means closed: nothing is listening any more.
    await assert.rejects(fetch(`${srv.url}/metrics`));
  });

  it("applies the request filter before serving", async () => {
    const registry = new Registry();
    const srv = await startMetricsServer({
      bindAddress: "127.0.0.1:0",
      registry,
      logger,
      processMetrics: false,
      filter: (req) =>
        req.headers.authorization === "Bearer good"
          ? { allowed: true }
          : { allowed: false, code: 401, reason: "no token" },
    });
    try {
      const denied = await fetch(`${srv.url}/metrics`);
      assert.equal(denied.status, 401);
      assert.equal(await denied.text(), "no token\n");
      const ok = await fetch(`${srv.url}/metrics`, { headers: { authorization: "Bearer good" } });
      assert.equal(ok.status, 200);
      await ok.arrayBuffer();
    } finally {
      await srv.close();
    }
  });

  it('is disabled by "0"', async () => {
    const srv = await startMetricsServer({ bindAddress: "0", logger });
    assert.equal(srv.address, undefined);
    assert.equal(srv.url, undefined);
    await srv.close();
  });

  it("rejects a bad bind address, naming it", async () => {
    await assert.rejects(startMetricsServer({ bindAddress: "localhost", logger }), /"localhost"/);
  });

  it("reports a port already in use", async () => {
    const a = await startMetricsServer({ bindAddress: "127.0.0.1:0", registry: new Registry(), logger });
    try {
      const taken = `127.0.0.1:${a.address?.port}`;
      await assert.rejects(
        startMetricsServer({ bindAddress: taken, registry: new Registry(), logger }),
        (e: Error) => e.message.includes(taken) && /EADDRINUSE/.test(e.message),
      );
    } finally {
      await a.close();
    }
  });

  it("registers process metrics only once per registry", () => {
    const registry = new Registry();
    registerProcessMetrics(registry);
    assert.doesNotThrow(() => registerProcessMetrics(registry));
    assert.ok(registry.getSingleMetric("process_resident_memory_bytes"));
  });
});
