import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import { createLogger, log, parseLogLevel, setDefaultLogger, type LoggerOptions } from "../../../runtime/log.ts";

function capture(opts: Omit<LoggerOptions, "stream"> = {}) {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  const logger = createLogger({ ...opts, stream });
  return {
    logger,
    text: () => chunks.join(""),
    records: () =>
      chunks
        .join("")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe("logger (JSON)", () => {
  it("writes one JSON object per line with level, ts, logger, msg and the key/values", () => {
    const c = capture();
    c.logger.withName("cronjob").info("Reconciling", { namespace: "ns", name: "a", reconcileID: "r1" });
    const [r, ...rest] = c.records();
    assert.equal(rest.length, 0);
    assert.ok(r);
    assert.equal(r.level, "info");
    assert.equal(r.msg, "Reconciling");
    assert.equal(r.logger, "cronjob");
    assert.equal(r.namespace, "ns");
    assert.equal(r.name, "a");
    assert.equal(r.reconcileID, "r1");
    assert.ok(!Number.isNaN(Date.parse(String(r.ts))), `ts ${String(r.ts)} is not a date`);
    assert.deepEqual(Object.keys(r).slice(0, 4), ["level", "ts", "logger", "msg"]);
  });

  it("composes withName segments with dots and accumulates withValues", () => {
    const c = capture();
    const base = c.logger.withName("controller-runtime").withValues({ controller: "cronjob" });
    base.withName("manager").withValues({ namespace: "ns" }).info("one", { name: "x" });
    base.info("two");
    const [one, two] = c.records();
    assert.equal(one?.logger, "controller-runtime.manager");
    assert.equal(one?.controller, "cronjob");
    assert.equal(one?.namespace, "ns");
    assert.equal(one?.name, "x");
    // The parent is unchanged by its children.
    assert.equal(two?.logger, "controller-runtime");
    assert.equal(two?.controller, "cronjob");
    assert.equal(two?.namespace, undefined);
  });

  it("keeps an Error's message and stack, whether passed as err or in the key/values", () => {
    const c = capture();
    const e1 = new Error("reconcile failed");
    c.logger.error("Reconciler error", e1, { controller: "cronjob" });
    c.logger.info("retrying", { err: new Error("conflict") });
    const [a, b] = c.records();
    assert.equal(a?.level, "error");
    assert.equal(a?.msg, "Reconciler error");
    assert.equal(a?.error, "reconcile failed");
    assert.equal(a?.controller, "cronjob");
    assert.match(String(a?.stacktrace), /^Error: reconcile failed\n\s+at /);
    assert.equal(b?.err, "conflict");
    assert.match(String(b?.stacktrace), /Error: conflict/);
  });

  it("logs whatever is passed as err as the error: a plain object is JSON-encoded, not merged as key/values", () => {
    const c = capture();
    c.logger.error("webhook rejected", { code: 403, reason: "Forbidden" }, { webhook: "/validate" });
    c.logger.error("no error value", undefined, { lease: "ns/x" });
    c.logger.error("a string", "boom");
    const [obj, none, str] = c.records();
    assert.equal(obj?.msg, "webhook rejected");
    assert.equal(obj?.error, '{"code":403,"reason":"Forbidden"}');
    assert.equal(obj?.code, undefined, "not merged into the record");
    assert.equal(obj?.reason, undefined, "not merged into the record");
    assert.equal(obj?.webhook, "/validate");
    assert.equal(obj?.stacktrace, undefined);
    assert.equal(none?.error, undefined);
    assert.equal(none?.lease, "ns/x");
    assert.equal(str?.error, "boom");
  });

  it("suppresses debug at info level and emits it at debug level or verbosity 1", () => {
    const info = capture({ level: "info" });
    info.logger.debug("hidden");
    info.logger.info("shown");
    assert.deepEqual(
      info.records().map((r) => r.msg),
      ["shown"],
    );
    assert.equal(info.logger.level, "info");
    assert.equal(info.logger.enabled("debug"), false);

    const v1 = capture({ level: 1 });
    v1.logger.debug("visible");
    assert.deepEqual(
      v1.records().map((r) => [r.level, r.msg]),
      [["debug", "visible"]],
    );
    assert.equal(v1.logger.level, "debug");
  });

  it("never throws on values JSON cannot encode", () => {
    const c = capture();
    const loop: Record<string, unknown> = { a: 1 };
    loop.self = loop;
    c.logger.info("odd", { big: 10n, loop });
    const [r] = c.records();
    assert.equal(r?.big, "10");
    assert.deepEqual(r?.loop, { a: 1, self: "[Circular]" });
  });
});

describe("logger (console)", () => {
  it("is human-readable, not JSON, and colourless on a non-TTY stream", () => {
    const c = capture({ format: "console" });
    c.logger.withName("setup").info("starting manager", { port: 8080 });
    const line = c.text().trimEnd();
    assert.throws(() => JSON.parse(line) as unknown);
    const cols = line.split("\t");
    assert.equal(cols[1], "INFO");
    assert.equal(cols[2], "setup");
    assert.equal(cols[3], "starting manager");
    assert.deepEqual(JSON.parse(cols[4] ?? ""), { port: 8080 });
    assert.ok(!line.includes("\u001b["), "no ANSI escapes");
  });
});

describe("parseLogLevel", () => {
  it("accepts names and verbosities", () => {
    assert.equal(parseLogLevel("debug"), "debug");
    assert.equal(parseLogLevel("ERROR"), "error");
    assert.equal(parseLogLevel("0"), "info");
    assert.equal(parseLogLevel("3"), "debug");
  });

  it("names the flag and the bad value", () => {
    assert.throws(() => parseLogLevel("loud"), {
      message: '--log-level must be one of debug, info, warn, error (or a non-negative integer); got "loud"',
    });
    assert.throws(() => parseLogLevel("-1"), /got "-1"/);
    assert.throws(() => createLogger({ level: -2 }), /got -2/);
  });
});

describe("default logger", () => {
  it("redirects loggers derived before setDefaultLogger", () => {
    const early = log.withName("cronjob").withValues({ controller: "cronjob" });
    const c = capture();
    setDefaultLogger(c.logger);
    try {
      early.info("after swap");
      const [r] = c.records();
      assert.equal(r?.logger, "cronjob");
      assert.equal(r?.controller, "cronjob");
      assert.equal(r?.msg, "after swap");
      // Installing a logger derived from `log` itself must not loop.
      setDefaultLogger(log.withName("root"));
      early.info("again");
      assert.equal(c.records()[1]?.logger, "root.cronjob");
    } finally {
      setDefaultLogger(createLogger({ level: "error" }));
    }
  });
});
