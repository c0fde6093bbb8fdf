// Fixtures that start a server for the tests of a describe and stop it after them: a webhook server
// (withWebhookServer: admission and conversion handlers on a fresh certificate, optionally installed in an
// envtest apiserver with the generated configurations) and a Prometheus (withPrometheus: Debian's binary on
// free loopback ports, its own data directory, the alert rules as they are). Call them inside a describe; their
// hooks run before the describe's own that are registered after them.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import https from "node:https";
import { join } from "node:path";
import { after, before } from "node:test";
import type {
  KubernetesObject,
  V1MutatingWebhookConfiguration,
  V1ValidatingWebhookConfiguration,
} from "@kubernetes/client-node";
import { stringify } from "yaml";
import { RULES_PATH } from "../hack/crdgen/prometheusrule.ts";
import { webhookConfigurations } from "../hack/crdgen/webhook.ts";
import { discardLogger } from "../runtime/log.ts";
import {
  startWebhookServer,
  type WebhookHandler,
  type WebhookServer,
  type WebhookServerOptions,
} from "../runtime/webhook/server.ts";
import { generateWebhookCertificates, type WebhookCertificates } from "../envtest/certs.ts";
import { PROJECT_ROOT, TestEnv } from "../envtest/index.ts";
import { freePort } from "../envtest/ports.ts";
import { ManagedProcess, removeOnExit } from "../envtest/processes.ts";
import { installWebhooks, uninstallWebhooks, waitForWebhookReady, type InstalledWebhooks } from "../envtest/webhook.ts";
import { eventually } from "./eventually.ts";
import { variant } from "./fixtures.ts";

/** The last lines of a log file, for failure messages. */
export function tail(file: string, n = 25): string {
  if (!existsSync(file)) return "(no log)";
  return readFileSync(file, "utf8")
    .split("\n")
    .slice(-n)
    .map((l) => l.slice(0, 500))
    .join("\n");
}

/** What a server answered: its status, its headers and its body as text. */
export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * A request (a POST of JSON unless `opts` says otherwise) to a server over HTTPS that `ca` signed; `chunked`: the
 * body (a Buffer) sent in several writes without a length up front.
 */
export function postHTTPS(
  url: string,
  ca: string,
  body: string | Buffer,
  opts: { headers?: Record<string, string>; method?: string; chunked?: boolean } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { "content-type": "application/json", ...opts.headers };
    if (opts.chunked) headers["transfer-encoding"] = "chunked";
    let answered = false;
    const req = https.request(url, { method: opts.method ?? "POST", ca, headers, agent: false }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }),
      );
      res.on("error", reject);
    });
    // A server that answers an oversized upload early may reset the rest of it; the answer is what counts.
    req.on("error", (err) => (answered ? undefined : reject(err)));
    if (opts.chunked && Buffer.isBuffer(body)) {
      // Several writes, so the server sees the body arrive in pieces without a length up front.
      const step = Math.max(1, Math.ceil(body.length / 4));
      for (let i = 0; i < body.length; i += step) req.write(body.subarray(i, i + step));
      req.end();
    } else {
      req.end(body);
    }
  });
}

/** Fail hook: an unfinished set-up logs what went wrong and the other steps still run. */
async function each(steps: Array<() => Promise<unknown> | undefined>): Promise<void> {
  for (const step of steps) await Promise.resolve(step()).catch((err: unknown) => console.error(err));
}

export interface WebhookServerFixture {
  readonly certs: WebhookCertificates;
  readonly server: WebhookServer;
  /** With `cluster`: the envtest apiserver that calls the server, and the configurations installed in it. */
  readonly env: TestEnv;
  readonly installed: InstalledWebhooks;
  /** Close the server before the describe ends (the operator down); it is not closed again after. */
  close(): Promise<void>;
}

export interface WebhookServerFixtureOptions {
  /** More server options (the certificate poll interval, a body limit). */
  server?: Partial<WebhookServerOptions>;
  /**
   * Also start an envtest apiserver and install the generated admission configurations (config/webhook),
   * pointed at the server; the fixture is ready once each probe's dry-run create reached the handlers.
   */
  cluster?: {
    /** Before the admission configurations are installed (a conversion webhook, say). */
    prepare?: (f: WebhookServerFixture) => Promise<void>;
    probes: ReadonlyArray<{ object: Record<string, unknown>; seen: () => boolean }>;
  };
}

/** An object to probe the webhooks with: `obj` named by the API server ("probe-…"), so probes never clash. */
export const probeOf = (obj: Record<string, unknown>): Record<string, unknown> =>
  variant(obj, (o) => {
    delete o.metadata.name;
    o.metadata.generateName = "probe-";
  });

/** A webhook server on 127.0.0.1 (a free port) serving `certs` with these handlers; `o` changes its options. */
export const startLoopbackWebhookServer = (
  certs: WebhookCertificates,
  handlers: Map<string, WebhookHandler>,
  o: Partial<WebhookServerOptions> = {},
): Promise<WebhookServer> =>
  startWebhookServer({ host: "127.0.0.1", port: 0, certDir: certs.dir, logger: discardLogger, handlers, ...o });

/**
 * A webhook server on 127.0.0.1 (a free port) with these handlers and a fresh CA and serving certificate,
 * started before the describe's tests and closed after them (with `cluster`: its apiserver too).
 */
export function withWebhookServer(
  handlers: Map<string, WebhookHandler>,
  o: WebhookServerFixtureOptions = {},
): WebhookServerFixture {
  let certs: WebhookCertificates | undefined;
  let server: WebhookServer | undefined;
  let env: TestEnv | undefined;
  let installed: InstalledWebhooks | undefined;
  const need = <T>(v: T | undefined, what: string): T => {
    if (v === undefined) throw new Error(`the webhook fixture's ${what} is used before its set-up`);
    return v;
  };
  const fixture: WebhookServerFixture = {
    get certs() {
      return need(certs, "certificates");
    },
    get server() {
      return need(server, "server");
    },
    get env() {
      return need(env, "apiserver (cluster)");
    },
    get installed() {
      return need(installed, "installed configurations (cluster)");
    },
    async close() {
      const s = server;
      server = undefined;
      await s?.close();
    },
  };
  before(async () => {
    if (o.cluster) env = await TestEnv.start();
    certs = await generateWebhookCertificates();
    server = await startLoopbackWebhookServer(certs, handlers, o.server);
    if (!o.cluster || !env) return;
    await o.cluster.prepare?.(fixture);
    const configs = webhookConfigurations();
    installed = await installWebhooks(env, {
      mutating: configs.filter((c) => c.kind === "MutatingWebhookConfiguration") as V1MutatingWebhookConfiguration[],
      validating: configs.filter(
        (c) => c.kind === "ValidatingWebhookConfiguration",
      ) as V1ValidatingWebhookConfiguration[],
      port: server.port,
      caPEM: certs.caPEM,
    });
    for (const probe of o.cluster.probes)
      await waitForWebhookReady(env, { probe: probe.object as KubernetesObject, seen: probe.seen });
  });
  after(async () => {
    await each([
      () => (installed && env ? uninstallWebhooks(env, installed) : undefined),
      () => fixture.close(),
      () => env?.stop(),
    ]);
    certs?.cleanup();
  });
  return fixture;
}

const PROMETHEUS = process.env.PROMETHEUS || "prometheus";

/** A scrape target over HTTPS (any certificate), with the bearer token given to start(). */
export interface ScrapeTarget {
  job: string;
  /** host:port */
  target: string;
  /** Labels the target carries (as a ServiceMonitor's do); `honorLabels` keeps the series' own. */
  labels?: Record<string, string>;
  honorLabels?: boolean;
}

export interface PrometheusFixture {
  /** Its own directory (removed after): put other logs of the test here. */
  readonly dir: string;
  readonly log: string;
  readonly url: string;
  /** Whether its process still runs (a wait fails at once when it exited). */
  readonly running: boolean;
  /**
   * Start Prometheus, scraping and evaluating every second, with the alert rules as they are; resolves once it
   * is ready. Fails, saying how to get it, where the binary does not run (not a skip).
   */
  start(o: { token: string; targets: ScrapeTarget[] }): Promise<void>;
  /** The data of an HTTP API answer; throws on an error answer. */
  api<T = unknown>(path: string): Promise<T>;
  /** An instant query's series. */
  query(q: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>>;
}

/** A Prometheus for the describe's tests (started by the test with start()), stopped and removed after. */
export function withPrometheus(name: string): PrometheusFixture {
  let dir = "";
  let url = "";
  let prometheus: ManagedProcess | undefined;
  const fixture: PrometheusFixture = {
    get dir() {
      return dir;
    },
    get log() {
      return join(dir, "prometheus.log");
    },
    get url() {
      return url;
    },
    get running() {
      return prometheus?.running ?? false;
    },
    async start({ token, targets }) {
      const v = spawnSync(PROMETHEUS, ["--version"], { encoding: "utf8" });
      if (v.error || v.status !== 0) {
        assert.fail(
          `cannot run ${PROMETHEUS} (${v.error?.message ?? v.stderr}): apt-get install prometheus ` +
            "(Debian's package; .ci/run installs it), or set PROMETHEUS to the binary",
        );
      }
      const tokenFile = join(dir, "token");
      writeFileSync(tokenFile, token, { mode: 0o600 });
      const port = await freePort();
      url = `http://127.0.0.1:${port}`;
      const config = {
        global: { scrape_interval: "1s", scrape_timeout: "1s", evaluation_interval: "1s" },
        rule_files: [join(PROJECT_ROOT, RULES_PATH)],
        scrape_configs: targets.map((t) => ({
          job_name: t.job,
          scheme: "https",
          ...(t.honorLabels ? { honor_labels: true } : {}),
          tls_config: { insecure_skip_verify: true },
          authorization: { type: "Bearer", credentials_file: tokenFile },
          static_configs: [{ targets: [t.target], ...(t.labels ? { labels: t.labels } : {}) }],
        })),
      };
      const configFile = join(dir, "prometheus.yml");
      writeFileSync(configFile, stringify(config));
      const p = new ManagedProcess(
        "prometheus",
        PROMETHEUS,
        [
          `--config.file=${configFile}`,
          `--storage.tsdb.path=${join(dir, "data")}`,
          `--web.listen-address=127.0.0.1:${port}`,
        ],
        fixture.log,
      );
      prometheus = p;
      await eventually(
        "Prometheus ready",
        async () => {
          if (!p.running) throw new Error("prometheus exited");
          return (await fetch(`${url}/-/ready`)).status === 200;
        },
        60_000,
        () => `\nprometheus log:\n${tail(fixture.log)}`,
      );
    },
    async api<T>(path: string): Promise<T> {
      const res = await fetch(`${url}${path}`);
      const body = (await res.json()) as { status: string; data: T; error?: string };
      if (body.status !== "success") throw new Error(`${path}: ${body.error ?? res.status}`);
      return body.data;
    },
    query: (q) =>
      fixture
        .api<{ result: Array<{ metric: Record<string, string>; value: [number, string] }> }>(
          `/api/v1/query?query=${encodeURIComponent(q)}`,
        )
        .then((r) => r.result),
  };
  before(() => {
    dir = mkdtempSync(join(tmpdir(), `${name}-`));
    removeOnExit(dir);
  });
  after(async () => {
    await each([() => prometheus?.stop()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return fixture;
}
