// API warnings (runtime/warnings.ts) and what the Client does with them: every 299 warning of a response
// reaches the request's handler and the client's, also on a refused request, and none is cut at a comma.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { KubeConfig } from "@kubernetes/client-node";
import { Client } from "../../../runtime/client.ts";
import { Kinds } from "../../../runtime/kinds.ts";
import { apiWarningLogger } from "../../../runtime/manager.ts";
import { droppedFields } from "../../../runtime/objects.ts";
import { headerValues, parseWarningHeaders } from "../../../runtime/warnings.ts";
import { CapturingLogger } from "../../capturing-logger.ts";

describe("parseWarningHeaders", () => {
  it("reads the texts of 299 warnings, unescaped, several per value, with or without a date", () => {
    assert.deepEqual(
      parseWarningHeaders([
        '299 - "unknown field \\"spec.foo\\""',
        '299 - "a, b", 299 kube-apiserver "second" "Wed, 25 Nov 2026 01:00:00 GMT"',
        '199 - "not a 299"',
        "garbage",
      ]),
      ['unknown field "spec.foo"', "a, b", "second"],
    );
  });

  it("keeps repeated headers apart (Node joins them with commas)", () => {
    assert.deepEqual(headerValues(["Warning", "a", "Content-Type", "x", "warning", "b"], "warning"), ["a", "b"]);
  });
});

describe("droppedFields", () => {
  it("names each field the answer lacks, at its path, and nothing for zero values or normalised ones", () => {
    const sent = {
      a: { b: 1, c: "x", d: { e: true } },
      list: [{ name: "n", extra: "y" }],
      labels: { "kubernetes.io/os": "linux" },
      zero: { f: 0, g: "", h: false, i: [], j: {} },
      q: "1000m",
    };
    const stored = { a: { b: 1 }, list: [{ name: "n" }], q: "1", zero: {} };
    assert.deepEqual(droppedFields(sent, stored, "spec"), [
      "spec.a.c",
      "spec.a.d.e",
      "spec.list[0].extra",
      "spec.labels[kubernetes.io/os]",
    ]);
    // 1.33 drops a gated field and then its parent, now empty: the field set is named, not the parent.
    assert.deepEqual(droppedFields({ lifecycle: { stopSignal: "SIGUSR1" } }, {}, "c"), ["c.lifecycle.stopSignal"]);
    assert.deepEqual(droppedFields({ m: { "a/b": "v" } }, { m: {} }, "spec"), ["spec.m[a/b]"]);
    assert.deepEqual(droppedFields(sent, sent, "spec"), []);
  });
});

describe("Client: API warnings", () => {
  let server: Server;
  let client: Client;
  const seen: Array<[string, string]> = [];

  before(async () => {
    server = createServer((req, res) => {
      const refused = req.url?.includes("refuse");
      res.setHeader("Warning", ['299 - "first, with a comma"', '299 - "second"']);
      res.setHeader("Content-Type", "application/json");
      res.statusCode = refused ? 422 : 201;
      res.end(JSON.stringify(refused ? { kind: "Status", code: 422, reason: "Invalid", message: "no" } : { spec: {} }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        { name: "c", server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true },
      ],
      users: [{ name: "u" }],
      contexts: [{ name: "x", cluster: "c", user: "u" }],
      currentContext: "x",
    });
    client = new Client(kc, { onWarning: (w, r) => seen.push([w, r]) });
  });
  after(() => {
    client.close();
    server.close();
  });

  it("hands each warning to the request's handler and to the client's", async () => {
    const mine: string[] = [];
    await client.create(Kinds.Job, { metadata: { name: "j", namespace: "n" } }, { onWarning: (w) => mine.push(w) });
    assert.deepEqual(mine, ["first, with a comma", "second"]);
    assert.deepEqual(seen.splice(0), [
      ["first, with a comma", "POST /apis/batch/v1/namespaces/n/jobs"],
      ["second", "POST /apis/batch/v1/namespaces/n/jobs"],
    ]);
  });

  it("also on a refused request, and sends fieldValidation when asked", async () => {
    const mine: string[] = [];
    await assert.rejects(
      client.request("POST", "/refuse", { query: { fieldValidation: "Strict" }, onWarning: (w) => mine.push(w) }),
      /no/,
    );
    assert.deepEqual(mine, ["first, with a comma", "second"]);
    seen.length = 0;
  });

  it("the manager logs each distinct warning once", () => {
    const logger = new CapturingLogger();
    const onWarning = apiWarningLogger(logger);
    onWarning("deprecated", "PUT /x");
    onWarning("deprecated", "PUT /y");
    onWarning("other", "PUT /z");
    assert.deepEqual(
      logger.lines.map((e) => [e.msg, e.kv.request]),
      [
        ["deprecated", "PUT /x"],
        ["other", "PUT /z"],
      ],
    );
  });
});
