import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parseFlags, usage, UsageError } from "../../cmd/flags.ts";

describe("manager flags", () => {
  it("has kubebuilder's defaults", () => {
    const f = parseFlags([], {});
    assert.equal(f.metricsBindAddress, "0");
    assert.equal(f.metricsSecure, true);
    assert.equal(f.healthProbeBindAddress, ":8081");
    assert.equal(f.leaderElect, false);
    assert.equal(f.webhookPort, 9443);
    assert.equal(f.webhookHost, "");
    assert.equal(parseFlags(["--webhook-host=10.0.0.7"], {}).webhookHost, "10.0.0.7");
    assert.equal(f.webhookCertPath, "/tmp/k8s-webhook-server/serving-certs");
    assert.equal(f.webhookCertName, "tls.crt");
    assert.equal(f.webhookCertKey, "tls.key");
    assert.equal(f.enableHTTP2, false);
    assert.equal(f.enableWebhooks, true);
    assert.equal(f.logLevel, "info");
    // The certificate files come from elsewhere (cert-manager, a mounted Secret) unless asked otherwise.
    assert.equal(f.webhookCertProvision, "external");
    assert.equal(f.webhookCertSecret, "webhook-server-cert");
    assert.equal(f.webhookServiceName, "");
    assert.equal(f.webhookServiceNamespace, "");
    assert.deepEqual(f.mutatingWebhookConfigurations, []);
    assert.deepEqual(f.validatingWebhookConfigurations, []);
  });

  it("provisions the webhook certificate itself with --webhook-cert-provision=self", () => {
    const f = parseFlags(
      [
        "--webhook-cert-provision=self",
        "--webhook-service-name=svc",
        "--webhook-service-namespace",
        "ns",
        "--webhook-cert-secret=my-cert",
        "--mutating-webhook-configuration=m1, m2",
        "--validating-webhook-configuration=v",
      ],
      {},
    );
    assert.equal(f.webhookCertProvision, "self");
    assert.equal(f.webhookServiceName, "svc");
    assert.equal(f.webhookServiceNamespace, "ns");
    assert.equal(f.webhookCertSecret, "my-cert");
    assert.deepEqual(f.mutatingWebhookConfigurations, ["m1", "m2"]);
    assert.deepEqual(f.validatingWebhookConfigurations, ["v"]);
  });

  it("waits --shutdown-delay-duration (a Go duration, default none) before it stops serving", () => {
    assert.equal(parseFlags([], {}).shutdownDelayMs, 0);
    assert.equal(parseFlags(["--shutdown-delay-duration=5s"], {}).shutdownDelayMs, 5_000);
    assert.equal(parseFlags(["--shutdown-delay-duration=1m30s"], {}).shutdownDelayMs, 90_000);
    assert.equal(parseFlags(["--shutdown-delay-duration=250ms"], {}).shutdownDelayMs, 250);
    assert.equal(parseFlags(["--shutdown-delay-duration=0"], {}).shutdownDelayMs, 0);
  });

  it("folds routine status writes past --status-write-qps (default 10) for at most --status-write-max-delay (5m)", () => {
    const d = parseFlags([], {});
    assert.equal(d.statusWriteQPS, 10);
    assert.equal(d.statusWriteMaxDelayMs, 300_000);
    const set = parseFlags(["--status-write-qps=0", "--status-write-max-delay=90s"], {});
    assert.equal(set.statusWriteQPS, 0);
    assert.equal(set.statusWriteMaxDelayMs, 90_000);
    assert.throws(() => parseFlags(["--status-write-qps=lots"], {}), /(?=.*--status-write-qps)(?=.*"lots")/);
    assert.throws(() => parseFlags(["--status-write-max-delay=6m"], {}), /(?=.*--status-write-max-delay)(?=.*"6m")/);
  });

  it("lets a new run's status wait --status-write-delay (default 10s; 0s: at once)", () => {
    assert.equal(parseFlags([], {}).statusWriteDelayMs, 10_000);
    assert.equal(parseFlags(["--status-write-delay=0s"], {}).statusWriteDelayMs, 0);
    assert.equal(parseFlags(["--status-write-delay=2500ms"], {}).statusWriteDelayMs, 2_500);
  });

  it("exports per-CronJob metrics unless --per-cronjob-metrics=false", () => {
    assert.equal(parseFlags([], {}).perCronJobMetrics, true);
    assert.equal(parseFlags(["--per-cronjob-metrics=false"], {}).perCronJobMetrics, false);
    assert.equal(parseFlags(["-per-cronjob-metrics=0"], {}).perCronJobMetrics, false);
    assert.match(usage(), /--per-cronjob-metrics\b.*\n.*\(default true\)/);
  });

  it("accepts Go-style spellings", () => {
    const f = parseFlags(
      [
        "-leader-elect",
        "--metrics-secure=false",
        "--metrics-bind-address=:8443",
        "--log-level",
        "debug",
        "--enable-http2=true",
      ],
      {
        ENABLE_WEBHOOKS: "false",
      },
    );
    assert.equal(f.leaderElect, true);
    assert.equal(f.metricsSecure, false);
    assert.equal(f.metricsBindAddress, ":8443");
    assert.equal(f.logLevel, "debug");
    assert.equal(f.enableHTTP2, true);
    assert.equal(f.enableWebhooks, false);
  });

  const bad: Array<[string[], NodeJS.ProcessEnv, RegExp]> = [
    [["--metrics-bind-address=8080"], {}, /8080/],
    [["--webhook-port=99999"], {}, /--webhook-port.*99999|99999.*--webhook-port/],
    [
      ["--max-concurrent-reconciles=zero"],
      {},
      /--max-concurrent-reconciles.*"zero"|"zero".*--max-concurrent-reconciles/,
    ],
    [["--log-level=loud"], {}, /--log-level.*loud/],
    [["--log-format=xml"], {}, /(?=.*--log-format)(?=.*"xml")/],
    [["--leader-elect=maybe"], {}, /--leader-elect.*maybe|maybe.*--leader-elect/],
    [["--no-such-flag"], {}, /no-such-flag/],
    [["--shutdown-delay-duration=5"], {}, /(?=.*--shutdown-delay-duration)(?=.*"5")/],
    [["--shutdown-delay-duration=-1s"], {}, /(?=.*--shutdown-delay-duration)(?=.*"-1s")/],
    [["--shutdown-delay-duration=1h"], {}, /(?=.*--shutdown-delay-duration)(?=.*"1h")/],
    [["--status-write-delay=5m"], {}, /(?=.*--status-write-delay)(?=.*"5m")/],
    [["--status-write-delay=soon"], {}, /(?=.*--status-write-delay)(?=.*"soon")/],
    [[], { ENABLE_WEBHOOKS: "nope" }, /(?=.*ENABLE_WEBHOOKS)(?=.*"nope")/],
    [["--webhook-cert-provision=cert-manager"], {}, /(?=.*--webhook-cert-provision)(?=.*"cert-manager")/],
    [["--webhook-cert-provision=self"], {}, /--webhook-cert-provision=self needs --webhook-service-name/],
    [
      ["--webhook-cert-provision=self", "--webhook-service-name=svc", "--webhook-cert-secret="],
      {},
      /--webhook-cert-provision=self needs a --webhook-cert-secret/,
    ],
    // A webhooks-only process holding the Lease would leave every CronJob unscheduled.
    [["--webhooks-only", "--leader-elect"], {}, /(?=.*--webhooks-only)(?=.*--leader-elect)/],
    [["--webhooks-only"], { ENABLE_WEBHOOKS: "false" }, /(?=.*--webhooks-only)(?=.*ENABLE_WEBHOOKS=false)/],
    [["--webhook-reuse-port=sometimes"], {}, /(?=.*--webhook-reuse-port)(?=.*"sometimes")/],
  ];
  for (const [args, env, msg] of bad) {
    it(`rejects ${args.join(" ") || JSON.stringify(env)} with a message naming the flag and value`, () => {
      assert.throws(
        () => parseFlags(args, env),
        (e: unknown) => e instanceof UsageError && msg.test((e as Error).message),
      );
    });
  }

  it("lists every flag with its default in --help", () => {
    const u = usage();
    for (const f of [
      "--metrics-bind-address",
      "--metrics-secure",
      "--health-probe-bind-address",
      "--leader-elect",
      "--leader-election-id",
      "--webhook-port",
      "--webhook-cert-path",
      "--webhook-cert-provision",
      "--webhook-cert-secret",
      "--webhook-service-name",
      "--webhook-service-namespace",
      "--mutating-webhook-configuration",
      "--validating-webhook-configuration",
      "--kubeconfig",
      "--log-level",
      "--max-concurrent-reconciles",
    ]) {
      assert.match(u, new RegExp(`${f}\\b`));
    }
    assert.match(u, /\(default ":8081"\)/);
  });

  it("the binary exits 2 on a bad flag and 0 on --help", () => {
    const main = join(import.meta.dirname, "..", "..", "cmd", "main.ts");
    const bad = spawnSync(process.execPath, [main, "--webhook-port=abc"], { encoding: "utf8" });
    assert.equal(bad.status, 2, bad.stderr);
    assert.match(bad.stderr, /--webhook-port/);
    const help = spawnSync(process.execPath, [main, "--help"], { encoding: "utf8" });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /--metrics-bind-address/);
  });
});
