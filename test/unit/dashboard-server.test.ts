// kubectl cron dashboard's server: each of its checks (the token, the Host, an action's Origin and body, the
// methods, the parameters) is shown by a request it must refuse, beside one it answers.
import assert from "node:assert/strict";
import { request } from "node:http";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
import { type DashboardServer, type Handlers, serve } from "../../cmd/kubectl-cron/dashboard/server.ts";
import type { Action, Push } from "../../cmd/kubectl-cron/dashboard/view.ts";

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** The status of a request to `path`, read from the response's head (an event stream's body never ends). */
function statusOf(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path }, (res) => {
      resolve(res.statusCode ?? 0);
      req.destroy();
    });
    req.on("error", reject);
    req.end();
  });
}

function send(
  port: number,
  path: string,
  o: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path, method: o.method ?? "GET", headers: o.headers ?? {} },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    if (o.body !== undefined) req.write(o.body);
    req.end();
  });
}

describe("kubectl cron dashboard: the server", () => {
  const TOKEN = "t0k3n-for-the-test-only-0123456789abcdefABCDEF";
  const done: { action: Action; id: string }[] = [];
  const listeners = new Set<(p: Push) => void>();
  const handlers: Handlers = {
    page: () => ({ html: "<!doctype html><p>page</p>", script: "void 0;", style: "p{}" }),
    fleet: () => ({
      now: "2026-11-27T10:00:00Z",
      scope: { allNamespaces: true },
      rows: [{ id: "ns/a", namespace: "ns", name: "a", suspended: false, schedule: "* * * * *" }],
      groups: [],
      shared: [],
      unreadable: [],
      actions: true,
    }),
    marks: (ids, from, to) =>
      ids.map((id) => ({ id, marks: [{ kind: "slot", at: from.toISOString(), title: to.toISOString() }], shades: [] })),
    detail: async (id) => ({ id, why: { text: "why" }, history: { text: "" }, next: { text: "" }, spec: [] }),
    action: async (action, id) => {
      done.push({ action, id });
      return { ok: true, text: `${action} ${id}` };
    },
    subscribe: (fn) => {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
  };
  let s: DashboardServer;
  let host: string;
  const q = `token=${TOKEN}`;
  before(async () => {
    s = await serve({ port: 0, handlers, token: TOKEN });
    host = `127.0.0.1:${s.port}`;
  });
  after(() => s.close());

  it("listens on 127.0.0.1 and prints a URL with its token", () => {
    assert.equal(s.url, `http://127.0.0.1:${s.port}/?token=${TOKEN}`);
  });

  it("is not reachable at another loopback address: it listens on 127.0.0.1, not on every address", async () => {
    // Linux routes all of 127.0.0.0/8 to lo: a server on 0.0.0.0 answers 127.0.0.2, one on 127.0.0.1 does not. (The
    // host's other addresses would tell the same, but a test's traffic stays on loopback.)
    const got = await new Promise<string>((resolve) => {
      const c = connect(s.port, "127.0.0.2", () => {
        c.destroy();
        resolve("connected");
      });
      c.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error"));
    });
    assert.equal(got, "ECONNREFUSED");
  });

  it("answers the page and its data with the token, with headers that keep the token and the page to itself", async () => {
    const page = await send(s.port, `/?${q}`);
    assert.equal(page.status, 200);
    assert.match(page.body, /page/);
    // The whole policy, directive by directive (written here, not read from the server): a source added to any of
    // them, such as script-src 'unsafe-inline', or a directive dropped, fails.
    const directives = (h: unknown) =>
      String(h)
        .split(";")
        .map((d) => d.trim().split(/\s+/).join(" "))
        .filter(Boolean)
        .sort();
    const policy = [
      "base-uri 'none'",
      "connect-src 'self'",
      "default-src 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
      "img-src 'self' data:",
      "script-src 'self'",
      "style-src 'self'",
    ];
    assert.deepEqual(directives(page.headers["content-security-policy"]), policy);
    assert.equal(page.headers["referrer-policy"], "no-referrer");
    assert.equal(page.headers["x-frame-options"], "DENY");
    assert.equal(page.headers["cache-control"], "no-store");
    const fleet = await send(s.port, `/api/fleet?${q}`);
    assert.equal(fleet.status, 200);
    assert.deepEqual(directives(fleet.headers["content-security-policy"]), policy);
    assert.equal(JSON.parse(fleet.body).rows[0].id, "ns/a");
    const marks = await send(s.port, `/api/marks?${q}&from=2026-11-26T10:00:00Z&to=2026-11-28T10:00:00Z&ids=ns%2Fa`);
    assert.equal(marks.status, 200);
    assert.equal(JSON.parse(marks.body)[0].id, "ns/a");
  });

  it("refuses a request without the token, or with a wrong one (even of the same length)", async () => {
    for (const path of [
      "/",
      "/app.js",
      "/api/fleet",
      `/api/fleet?token=${TOKEN.slice(1)}x`,
      `/api/fleet?token=${TOKEN}x`,
    ]) {
      const r = await send(s.port, path);
      assert.equal(r.status, 401, path);
      assert.doesNotMatch(r.body, /rows/);
      // A refusal is an answer too: never cached, framed or sniffed.
      assert.equal(r.headers["cache-control"], "no-store", path);
      assert.equal(r.headers["x-frame-options"], "DENY", path);
      assert.equal(r.headers["x-content-type-options"], "nosniff", path);
    }
  });

  it("requires the token on every route, the event stream's and the panel's too", async () => {
    for (const path of [
      "/",
      "/app.js",
      "/app.css",
      "/api/fleet",
      "/api/marks?from=2026-11-26T10:00:00Z&to=2026-11-28T10:00:00Z&ids=ns%2Fa",
      "/api/detail?id=ns%2Fa",
      "/api/events",
    ]) {
      assert.equal(await statusOf(s.port, path), 401, path);
    }
  });

  it("refuses a Host that is not its own (DNS rebinding), even with the token", async () => {
    for (const h of [
      "evil.example:80",
      `evil.example:${s.port}`,
      "127.0.0.1",
      `127.0.0.2:${s.port}`,
      `localhost.evil.example:${s.port}`,
      `localhost:${s.port + 1}`,
      `0.0.0.0:${s.port}`,
      `[::1]:${s.port}`,
    ]) {
      const r = await send(s.port, `/api/fleet?${q}`, { headers: { Host: h } });
      assert.equal(r.status, 403, h);
      assert.match(r.body, /Host/);
    }
    // No Host at all (HTTP/1.0), written by hand: Node's client always sends one.
    const bare = await new Promise<string>((resolve, reject) => {
      const c = connect(s.port, "127.0.0.1", () => c.end(`GET /api/fleet?${q} HTTP/1.0\r\n\r\n`));
      let text = "";
      c.setEncoding("utf8");
      c.on("data", (d: string) => (text += d));
      c.on("end", () => resolve(text));
      c.on("error", reject);
    });
    assert.match(bare, /^HTTP\/1\.1 403/);
    const ok = await send(s.port, `/api/fleet?${q}`, { headers: { Host: `localhost:${s.port}` } });
    assert.equal(ok.status, 200);
  });

  it("runs an action only from its own Origin, as JSON, by POST", async () => {
    const body = JSON.stringify({ action: "run", id: "ns/a" });
    const json = { "Content-Type": "application/json" };
    const refused = [
      { headers: { ...json }, status: 403 }, // no Origin
      { headers: { ...json, Origin: "http://evil.example" }, status: 403 },
      { headers: { ...json, Origin: `http://localhost:${s.port}` }, status: 403 }, // another origin than its Host
      { headers: { ...json, Origin: `http://${host}1` }, status: 403 }, // another port: its Host is only a prefix
      { headers: { ...json, Origin: `http://${host}.evil.example` }, status: 403 },
      { headers: { "Content-Type": "text/plain", Origin: `http://${host}` }, status: 415 }, // a form's
      { headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: `http://${host}` }, status: 415 },
    ];
    for (const r of refused) {
      const a = await send(s.port, `/api/action?${q}`, { method: "POST", headers: r.headers, body });
      assert.equal(a.status, r.status, JSON.stringify(r.headers));
    }
    const get = await send(s.port, `/api/action?${q}&action=run&id=ns%2Fa`);
    assert.equal(get.status, 405);
    const noToken = await send(s.port, `/api/action`, {
      method: "POST",
      headers: { ...json, Origin: `http://${host}` },
      body,
    });
    assert.equal(noToken.status, 401);
    assert.deepEqual(done, []);
    const ok = await send(s.port, `/api/action?${q}`, {
      method: "POST",
      headers: { ...json, Origin: `http://${host}` },
      body,
    });
    assert.equal(ok.status, 200);
    assert.deepEqual(done, [{ action: "run", id: "ns/a" }]);
  });

  it("names the field and the value of a bad request", async () => {
    const origin = { "Content-Type": "application/json", Origin: `http://${host}` };
    const cases: [string, { method?: string; headers?: Record<string, string>; body?: string }, RegExp][] = [
      [
        `/api/marks?${q}&from=yesterday&to=2026-11-28T10:00:00Z&ids=ns%2Fa`,
        {},
        /from: want an RFC 3339 time.*"yesterday"/,
      ],
      [`/api/marks?${q}&from=2026-11-28T10:00:00Z&to=2026-11-27T10:00:00Z`, {}, /to must be after from/],
      [`/api/marks?${q}&from=2020-01-01T00:00:00Z&to=2026-11-27T10:00:00Z`, {}, /at most 366 days/],
      [
        `/api/marks?${q}&from=2026-11-26T10:00:00Z&to=2026-11-27T10:00:00Z&ids=${"x%2Fy,".repeat(201)}`,
        {},
        /ids: at most 200/,
      ],
      [`/api/detail?${q}&id=nonamespace`, {}, /id: want NAMESPACE\/NAME; got "nonamespace"/],
      [`/api/detail?${q}&id=ns%2Fa&slot=soon`, {}, /slot: want an RFC 3339 time.*"soon"/],
      [`/api/action?${q}`, { method: "POST", headers: origin, body: "{" }, /the body is not JSON/],
      [
        `/api/action?${q}`,
        { method: "POST", headers: origin, body: '{"action":"delete","id":"ns/a"}' },
        /action: want one of run, suspend, resume; got "delete"/,
      ],
      [
        `/api/action?${q}`,
        { method: "POST", headers: origin, body: '{"action":"run","id":7}' },
        /id: want NAMESPACE\/NAME; got 7/,
      ],
      [`/api/action?${q}`, { method: "POST", headers: origin, body: "x".repeat(5000) }, /at most 4096 bytes/],
      [`/api/nothing?${q}`, {}, /not found: "\/api\/nothing"/],
      [`/api/fleet?${q}`, { method: "DELETE" }, /takes GET, not DELETE/],
    ];
    for (const [path, o, want] of cases) {
      const r = await send(s.port, path, o);
      assert.ok(r.status >= 400 && r.status < 500, `${path}: ${r.status}`);
      assert.match(r.body, want, path);
    }
    assert.equal(done.length, 1);
  });

  it("pushes changes to the page as server-sent events", async () => {
    const first: Push = { type: "changed", now: "x", rows: [], removed: ["ns/a"], groups: [], laneNamespaces: [] };
    const second: Push = { ...first, removed: ["ns/b"] };
    const got = await new Promise<string>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port: s.port, path: `/api/events?${q}` }, (res) => {
        assert.equal(res.headers["content-type"], "text/event-stream; charset=utf-8");
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          text += c;
          if (text.includes(": connected") && !text.includes("data: "))
            for (const l of listeners) {
              l(first);
              l(second);
            }
          if (text.includes('"ns/b"') && text.endsWith("\n")) {
            req.destroy();
            resolve(text);
          }
        });
      });
      req.on("error", reject);
      req.end();
    });
    assert.match(got, /data: \{"type":"changed".*"removed":\["ns\/a"\]/);
    // Each push an event of its own: its data line ended by a blank line (else the browser joins them into one).
    const events = got.split("\n\n");
    assert.ok(events.includes(`data: ${JSON.stringify(first)}`), got);
    assert.ok(events.includes(`data: ${JSON.stringify(second)}`), got);
  });

  it("unsubscribes an event stream when the page goes", async () => {
    let unsubscribed!: () => void;
    const gone = new Promise<void>((resolve) => (unsubscribed = resolve));
    const r = await serve({ port: 0, handlers: { ...handlers, subscribe: () => unsubscribed }, token: TOKEN });
    try {
      await new Promise<void>((resolve, reject) => {
        const req = request({ host: "127.0.0.1", port: r.port, path: `/api/events?${q}` }, (res) => {
          res.setEncoding("utf8");
          res.on("data", (c: string) => {
            if (c.includes(": connected")) {
              req.destroy();
              resolve();
            }
          });
        });
        req.on("error", reject);
        req.end();
      });
      // A bound on the wait, not a condition: a stream kept subscribed fails here rather than hanging the run.
      let bound: NodeJS.Timeout | undefined;
      const kept = new Promise<never>((_, reject) => {
        bound = setTimeout(() => reject(new Error("the stream was not unsubscribed when its request closed")), 5000);
      });
      await Promise.race([gone, kept]).finally(() => clearTimeout(bound));
    } finally {
      await r.close();
    }
  });

  it("refuses other methods than GET and HEAD on the page and its data", async () => {
    for (const method of ["POST", "PUT", "PATCH", "OPTIONS"]) {
      for (const path of [`/?${q}`, `/api/fleet?${q}`]) {
        const r = await send(s.port, path, { method });
        assert.equal(r.status, 405, `${method} ${path}`);
      }
    }
  });

  it("accepts what is at its limits: a window of 366 days, 200 CronJobs, a body of 4096 bytes", async () => {
    const window = (to: string) => send(s.port, `/api/marks?${q}&from=2025-11-27T00:00:00Z&to=${to}&ids=ns%2Fa`);
    assert.equal((await window("2026-11-28T00:00:00Z")).status, 200, "366 days");
    assert.equal((await window("2026-11-28T00:00:01Z")).status, 400, "366 days and a second");
    assert.equal((await window("2025-11-27T00:00:00Z")).status, 400, "to = from");
    const ids = Array.from({ length: 200 }, (_, i) => `ns%2Fc${i}`).join(",");
    const marks = await send(s.port, `/api/marks?${q}&from=2026-11-26T10:00:00Z&to=2026-11-27T10:00:00Z&ids=${ids}`);
    assert.equal(marks.status, 200, marks.body);
    assert.equal(JSON.parse(marks.body).length, 200);
    const json = JSON.stringify({ action: "resume", id: "ns/a" });
    const body = json + " ".repeat(4096 - json.length);
    const a = await send(s.port, `/api/action?${q}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: `http://${host}` },
      body,
    });
    assert.equal(a.status, 200, a.body);
    assert.deepEqual(done.at(-1), { action: "resume", id: "ns/a" });
  });

  it("refuses actions when started with --read-only", async () => {
    const { action: _a, ...readOnly } = handlers;
    const r = await serve({ port: 0, handlers: readOnly, token: TOKEN });
    try {
      const a = await send(r.port, `/api/action?${q}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Origin: `http://127.0.0.1:${r.port}` },
        body: JSON.stringify({ action: "suspend", id: "ns/a" }),
      });
      assert.equal(a.status, 403);
      assert.match(a.body, /--read-only/);
    } finally {
      await r.close();
    }
  });
});

describe("kubectl cron dashboard: its command line", () => {
  it("takes -A, --port, --read-only, --open and no NAME; a wrong value names the flag and the value", async () => {
    const { parseCommandLine, UsageError } = await import("../../cmd/kubectl-cron/model/args.ts");
    const a = parseCommandLine(["dashboard", "-A", "--port", "8088", "--read-only", "--open"]);
    assert.ok(a !== "help");
    assert.deepEqual([a.allNamespaces, a.port, a.readOnly, a.open], [true, 8088, true, true]);
    const d = parseCommandLine(["dashboard"]);
    assert.ok(d !== "help");
    assert.deepEqual([d.port, d.readOnly, d.open], [0, false, false]);
    const top = parseCommandLine(["dashboard", "--port", "65535"]);
    assert.ok(top !== "help" && top.port === 65535, "the highest port");
    const refused: [string[], RegExp][] = [
      [["dashboard", "backup"], /dashboard takes no NAME/],
      [["dashboard", "--port", "http"], /--port: want a port from 0 \(a free one\) to 65535; got "http"/],
      [["dashboard", "--port", "70000"], /--port: .*got "70000"/],
      [["why", "--read-only"], /--read-only does not apply to why \(only to dashboard\)/],
      [["list", "--port", "1"], /--port does not apply to list/],
    ];
    for (const [argv, want] of refused)
      assert.throws(
        () => parseCommandLine(argv),
        (e) => e instanceof UsageError && want.test(e.message),
        argv.join(" "),
      );
  });
});
