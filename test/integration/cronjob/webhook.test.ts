// The CronJob admission webhooks behind a real kube-apiserver, installed from the configurations
// `make manifests` generates: kubectl users see the apimachinery-shaped denials and the warnings,
// objects come back defaulted, deletes are never blocked, a rotated serving certificate is picked up
// without a restart, and the manager entrypoint serves the webhooks unless ENABLE_WEBHOOKS=false.
// Integration only: admission, the CRD schema and the serving path are the apiserver's (the fake has none).
import assert from "node:assert/strict";
import { request as httpsRequest } from "node:https";
import { connect as netConnect } from "node:net";
import { before, describe, it } from "node:test";
import tls from "node:tls";
import { ApiException, KubernetesObjectApi, type KubernetesObject, type V1Status } from "@kubernetes/client-node";
import { stringify } from "yaml";
import {
  allowed,
  fieldErrorString,
  type AdmissionHandler,
  type AdmissionRequest,
  type AdmissionResult,
} from "../../../runtime/webhook/index.ts";
import { type AdmissionReview } from "../../../runtime/webhook/admission.ts";
import {
  cronJobWebhookHandlers,
  MUTATE_PATH,
  VALIDATE_PATH,
  validateCronJob,
  validateCronJobRequest,
} from "../../../webhooks/cronjob_webhook.ts";
import {
  CALENDAR_VALIDATE_PATH,
  fleetWebhookHandlers,
  GROUP_VALIDATE_PATH,
  validateExclusionCalendar,
} from "../../../webhooks/fleet_webhooks.ts";
import { freePort } from "../../../envtest/ports.ts";
import { managerProcess } from "../../manager-process.ts";
import { minimalCronJob, variant } from "../../fixtures.ts";
import { probeOf, withWebhookServer } from "../../servers.ts";
import { resolveHashedSchedule } from "../../../api/v1/schedule/index.ts";
import {
  API_VERSION,
  KIND,
  RUN_NOW_ANNOTATION,
  RUN_NOW_REQUESTED_BY_ANNOTATION,
  runNowRequestedByValue,
} from "../../../api/v1/index.ts";

const NS = "default";
const RP_FIELD = "spec.jobTemplate.spec.template.spec.restartPolicy";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function eventually<T>(what: string, f: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await f();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`${what} did not happen within ${timeoutMs} ms${last ? `: ${String(last)}` : ""}`);
    }
    await sleep(100);
  }
}

/** The serial number of the certificate a fresh TLS connection is served, verified against `ca`. */
function servedSerial(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: "127.0.0.1", port, ca, rejectUnauthorized: true }, () => {
      const serial = socket.getPeerCertificate().serialNumber;
      socket.end();
      resolve(serial.toUpperCase());
    });
    socket.setTimeout(5000, () => socket.destroy(new Error("TLS handshake timed out")));
    socket.on("error", reject);
  });
}

/** Resolves with the error code of a plain TCP connect ("connected" if something listens). */
function tcpProbe(port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = netConnect({ host: "127.0.0.1", port });
    s.once("connect", () => {
      s.destroy();
      resolve("connected");
    });
    s.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

/** POSTs a CREATE AdmissionReview for `object` to a webhook server trusted through `ca`. */
function postReview(port: number, ca: string, path: string, object: unknown): Promise<AdmissionReview> {
  const body = JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "child-review",
      kind: { group: "batch.tutorial.kubebuilder.io", version: "v1", kind: "CronJob" },
      resource: { group: "batch.tutorial.kubebuilder.io", version: "v1", resource: "cronjobs" },
      name: "x",
      namespace: NS,
      operation: "CREATE",
      userInfo: {},
      object,
    },
  });
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: "127.0.0.1", port, path, method: "POST", ca, headers: { "content-type": "application/json" } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")) as AdmissionReview);
          } catch (err) {
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        });
        res.on("error", reject);
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error("the webhook did not answer")));
    req.on("error", reject);
    req.end(body);
  });
}

function yamlOf(obj: object): string {
  return stringify(obj);
}

function statusOf(err: unknown): V1Status {
  assert.ok(err instanceof ApiException, `expected an ApiException, got ${String(err)}`);
  return (typeof err.body === "string" ? JSON.parse(err.body) : err.body) as V1Status;
}

/**
 * How kubectl prints a 422 Invalid status with causes (cmdutil.CheckErr): it rebuilds the text from
 * details.kind, details.name and one "* <field>: <message>" line per cause, dropping status.message (so
 * the "admission webhook ... denied the request" prefix only reaches API clients). A Go operator's
 * apierrors.NewInvalid denial renders the same way.
 */
function kubectlInvalid(obj: Record<string, any>): string {
  const { errors } = validateCronJob(obj);
  assert.ok(errors.length > 0);
  return [`The CronJob "${obj.metadata.name}" is invalid: `, ...errors.map((e) => `* ${fieldErrorString(e)}`)].join(
    "\n",
  );
}

/** The message the webhook gives for `obj`, computed locally: API clients must see exactly this. */
async function expectedDenial(obj: Record<string, any>): Promise<string> {
  const r = await validateCronJobRequest({
    uid: "local",
    kind: { group: "batch.tutorial.kubebuilder.io", version: "v1", kind: "CronJob" },
    resource: { group: "batch.tutorial.kubebuilder.io", version: "v1", resource: "cronjobs" },
    name: obj.metadata.name,
    namespace: NS,
    operation: "CREATE",
    userInfo: {},
    object: obj,
  });
  assert.equal(r.allowed, false);
  return `admission webhook "vcronjob-v1.kb.io" denied the request: ${r.status?.message ?? ""}`;
}

describe("CronJob admission webhooks against kube-apiserver", () => {
  let client: KubernetesObjectApi;

  const probed = new Set<string>();
  const received: AdmissionRequest[] = [];
  /** Lets everything through the validating webhook, as if it had been off when an object was written. */
  let bypassValidation = false;

  const handlers = new Map<string, AdmissionHandler>();
  for (const [path, handler] of [...cronJobWebhookHandlers(), ...fleetWebhookHandlers()]) {
    handlers.set(path, (req): AdmissionResult | Promise<AdmissionResult> => {
      received.push(req);
      if (req.dryRun) probed.add(path);
      if (path === VALIDATE_PATH && bypassValidation) return allowed();
      return handler(req);
    });
  }

  const webhooks = withWebhookServer(handlers, {
    // fs.watch should see the rotation at once; polling is the fallback on filesystems where it does not.
    server: { certPollIntervalMs: 1000 },
    cluster: {
      probes: [
        { object: probeOf(minimalCronJob("unused")), seen: () => probed.has(MUTATE_PATH) && probed.has(VALIDATE_PATH) },
      ],
    },
  });
  before(() => {
    client = KubernetesObjectApi.makeApiClient(webhooks.env.kubeConfig);
  });

  it("installs the generated configurations, pointed at the local server", () => {
    assert.deepEqual(
      webhooks.installed.mutating.flatMap((c) => c.webhooks?.map((w) => [w.name, w.clientConfig.url]) ?? []),
      [["mcronjob-v1.kb.io", `https://127.0.0.1:${webhooks.server.port}${MUTATE_PATH}`]],
    );
    assert.deepEqual(
      webhooks.installed.validating.flatMap((c) => c.webhooks?.map((w) => [w.name, w.clientConfig.url]) ?? []),
      [
        ["vcronjob-v1.kb.io", `https://127.0.0.1:${webhooks.server.port}${VALIDATE_PATH}`],
        ["vexclusioncalendar-v1.kb.io", `https://127.0.0.1:${webhooks.server.port}${CALENDAR_VALIDATE_PATH}`],
        ["vconcurrencygroup-v1.kb.io", `https://127.0.0.1:${webhooks.server.port}${GROUP_VALIDATE_PATH}`],
      ],
    );
  });

  it("refuses a wrong ExclusionCalendar or ConcurrencyGroup at kubectl apply, naming the field and the value", async () => {
    const calendar = (name: string, windows: unknown[]) => ({
      apiVersion: API_VERSION,
      kind: "ExclusionCalendar",
      metadata: { name, namespace: NS },
      spec: { windows },
    });
    const group = (name: string, limit: unknown) => ({
      apiVersion: API_VERSION,
      kind: "ConcurrencyGroup",
      metadata: { name, namespace: NS },
      spec: { limit },
    });
    const apply = (obj: object) => webhooks.env.kubectl(["apply", "-f", "-"], yamlOf(obj));

    // An end before its start: the webhook's, in the words a CronJob's own window gets.
    const backwards = calendar("backwards", [{ name: "freeze", start: "2026-12-20", end: "2026-12-01" }]);
    const refused = await apply(backwards);
    assert.notEqual(refused.code, 0, refused.stdout);
    assert.ok(
      refused.stderr.includes(
        `The ExclusionCalendar "backwards" is invalid: spec.windows[0].end: Invalid value: "2026-12-01": must be after start "2026-12-20"`,
      ),
      refused.stderr,
    );
    const status = statusOf(
      await client.create(backwards as KubernetesObject).then(
        () => assert.fail("the webhook should have refused the calendar"),
        (e: unknown) => e,
      ),
    );
    assert.equal(
      status.message,
      `admission webhook "vexclusioncalendar-v1.kb.io" denied the request: ExclusionCalendar.batch.tutorial.kubebuilder.io "backwards" is invalid: ` +
        validateExclusionCalendar(backwards).map(fieldErrorString).join(", "),
    );
    assert.ok(received.some((r) => r.resource.resource === "exclusioncalendars" && r.name === "backwards"));

    // from: "25:00": the webhook refuses it, naming the field and the value in the parser's words, as it does the
    // same window inline in a CronJob (the CRDs carry no pattern that would answer first).
    const late = await apply(calendar("late", [{ from: "25:00" }]));
    assert.notEqual(late.code, 0, late.stdout);
    assert.match(
      late.stderr,
      /The ExclusionCalendar "late" is invalid: spec\.windows\[0\]\.from: Invalid value: "25:00": not a time of day \(HH:MM, 00:00-23:59\)/,
    );
    const inline = await apply(
      variant(minimalCronJob("late-inline"), (o) => (o.spec.exclusions = { windows: [{ from: "25:00" }] })),
    );
    assert.notEqual(inline.code, 0, inline.stdout);
    assert.match(inline.stderr, /spec\.exclusions\.windows\[0\]\.from: Invalid value: "25:00": not a time of day/);
    const said = (stderr: string) =>
      stderr
        .slice(stderr.indexOf('"25:00": '))
        .trim()
        .replace(/spec\.exclusions\./g, "spec.");
    assert.equal(said(late.stderr), said(inline.stderr));

    // A group's limit below 0 or not a whole number: the CRD's minimum and type (the webhook says the same).
    for (const [name, limit] of [
      ["negative", -1],
      ["fraction", 1.5],
    ] as const) {
      const res = await apply(group(name, limit));
      assert.notEqual(res.code, 0, res.stdout);
      assert.ok(res.stderr.includes(`The ConcurrencyGroup "${name}" is invalid`), res.stderr);
      assert.ok(res.stderr.includes("spec.limit"), res.stderr);
    }

    // Valid ones are admitted, through the webhooks; an update that breaks one is refused; deletes are not.
    const ok = await apply(
      calendar("holidays", [{ start: "2026-12-25" }, { daysOfWeek: "MON", from: "02:00", to: "24:00" }]),
    );
    assert.equal(ok.code, 0, ok.stderr);
    const okGroup = await apply(group("backups", 0));
    assert.equal(okGroup.code, 0, okGroup.stderr);
    assert.ok(received.some((r) => r.resource.resource === "concurrencygroups" && r.name === "backups"));
    const patch = await webhooks.env.kubectl([
      "patch",
      "exclusioncalendars.batch.tutorial.kubebuilder.io",
      "holidays",
      "-n",
      NS,
      "--type=merge",
      "-p",
      JSON.stringify({ spec: { windows: [{ start: "2026-12-25", end: "2026-12-24" }] } }),
    ]);
    assert.notEqual(patch.code, 0, "an update to a window that ends before it starts is denied");
    assert.ok(
      patch.stderr.includes(`spec.windows[0].end: Invalid value: "2026-12-24": must be after start "2026-12-25"`),
      patch.stderr,
    );
    for (const kind of ["exclusioncalendars", "concurrencygroups"]) {
      const name = kind === "exclusioncalendars" ? "holidays" : "backups";
      const del = await webhooks.env.kubectl(["delete", `${kind}.batch.tutorial.kubebuilder.io`, name, "-n", NS]);
      assert.equal(del.code, 0, del.stderr);
    }
  });

  it("denies a CronJob with an unknown time zone and a bad schedule, with every cause", async () => {
    // Both are checks only the webhook makes (the CRD schema refuses e.g. a long name itself, first).
    const NAME = "bad-schedule-and-zone";
    const bad = variant(minimalCronJob(NAME), (o) => {
      o.spec.schedule = "invalid-cron-schedule";
      o.spec.timeZone = "Mars/Olympus_Mons";
    });
    const expected = await expectedDenial(bad);
    assert.ok(
      expected.startsWith(
        `admission webhook "vcronjob-v1.kb.io" denied the request: CronJob.batch.tutorial.kubebuilder.io "${NAME}" is invalid: [` +
          `spec.timeZone: Invalid value: "Mars/Olympus_Mons": `,
      ),
      expected,
    );

    const res = await webhooks.env.kubectl(["apply", "-f", "-"], yamlOf(bad));
    assert.notEqual(res.code, 0, res.stdout);
    assert.ok(res.stderr.includes(kubectlInvalid(bad)), res.stderr);
    assert.ok(res.stderr.includes(`* spec.timeZone: Invalid value: "Mars/Olympus_Mons": `), res.stderr);
    assert.ok(res.stderr.includes(`* spec.schedule: Invalid value: "invalid-cron-schedule": `), res.stderr);

    // API clients get the whole Status: the message with the webhook's name, 422 and one cause per field.
    const err = await client.create(bad as KubernetesObject).then(
      () => assert.fail("the webhook should have denied the CronJob"),
      (e: unknown) => e,
    );
    assert.equal((err as ApiException<unknown>).code, 422);
    const status = statusOf(err);
    assert.equal(status.reason, "Invalid");
    assert.equal(status.message, expected);
    assert.deepEqual(
      status.details?.causes?.map((c) => c.field),
      ["spec.timeZone", "spec.schedule"],
    );
    assert.equal(status.details?.name, NAME);
    assert.equal(status.details?.kind, "CronJob");

    const get = await webhooks.env.kubectl(["get", "cronjobs.batch.tutorial.kubebuilder.io", NAME, "-n", NS]);
    assert.notEqual(get.code, 0, "the denied object must not exist");
    assert.match(get.stderr, /NotFound|not found/);
  });

  it("restartPolicy Always is refused by the CRD schema before the webhook (also with webhooks off)", async () => {
    const bad = variant(minimalCronJob("always-restarts"), (o) => {
      o.spec.schedule = "0 0 30 2 *";
      o.spec.jobTemplate.spec.template.spec.restartPolicy = "Always";
    });
    const res = await webhooks.env.kubectl(["apply", "-f", "-"], yamlOf(bad));
    assert.notEqual(res.code, 0);
    assert.ok(res.stderr.includes(`The CronJob "always-restarts" is invalid: `), res.stderr);
    assert.ok(res.stderr.includes(`${RP_FIELD}: Unsupported value: "Always"`), res.stderr);

    const err = await client.create(bad as KubernetesObject).then(
      () => assert.fail("the schema should have refused the CronJob"),
      (e: unknown) => e,
    );
    const status = statusOf(err);
    assert.equal(status.reason, "Invalid");
    assert.ok(!status.message?.includes("admission webhook"), status.message);
    // Only what the user's object caused: no "<nil>: … some validation rules were not checked" line, which
    // kube-apiserver adds to every schema refusal of a CRD that has a CEL rule (the CRD has none).
    assert.deepEqual(
      status.details?.causes?.map((c) => c.field),
      [RP_FIELD],
    );
    // The webhook says the same about it when it is asked directly.
    assert.match(await expectedDenial(bad), new RegExp(`${RP_FIELD.replaceAll(".", "\\.")}: Invalid value: "Always"`));
  });

  it("defaults a CronJob created without the defaulted fields", async () => {
    const created = await client.create(minimalCronJob("defaulted") as KubernetesObject);
    const spec = (created as unknown as { spec: Record<string, unknown> }).spec;
    // The CRD schema does not default suspend: false here means the mutating webhook ran.
    assert.equal(spec.suspend, false);
    assert.equal(spec.concurrencyPolicy, "Allow");
    assert.equal(spec.successfulJobsHistoryLimit, 3);
    assert.equal(spec.failedJobsHistoryLimit, 1);
    const mutated = received.find((r) => r.operation === "CREATE" && !r.dryRun && r.name === "defaulted");
    assert.ok(mutated, "the webhooks saw the create");

    const get = await webhooks.env.kubectl([
      "get",
      "cronjobs.batch.tutorial.kubebuilder.io",
      "defaulted",
      "-n",
      NS,
      "-o",
      "json",
    ]);
    assert.equal(get.code, 0, get.stderr);
    const stored = JSON.parse(get.stdout) as { spec: Record<string, unknown> };
    assert.equal(stored.spec.suspend, false);

    // An empty policy is defaulted before the CRD's enum sees it, as kubebuilder's Go defaulter does.
    const empty = variant(minimalCronJob("empty-policy"), (o) => (o.spec.concurrencyPolicy = ""));
    const res = await webhooks.env.kubectl(["apply", "-f", "-"], yamlOf(empty));
    assert.equal(res.code, 0, res.stderr);
    const got = await client.read({
      apiVersion: empty.apiVersion,
      kind: empty.kind,
      metadata: { name: "empty-policy", namespace: NS },
    });
    assert.equal((got as unknown as { spec: Record<string, unknown> }).spec.concurrencyPolicy, "Allow");
  });

  it("records who made a run-now request, and only when the request changes", async () => {
    const res = await webhooks.env.kubectl(["apply", "-f", "-"], yamlOf(minimalCronJob("run-now")));
    assert.equal(res.code, 0, res.stderr);
    const annotate = (value: string) =>
      webhooks.env.kubectl([
        "annotate",
        "--overwrite",
        "cronjobs.batch.tutorial.kubebuilder.io",
        "run-now",
        "-n",
        NS,
        `${RUN_NOW_ANNOTATION}=${value}`,
      ]);
    const stamp = async () => {
      const got = (await client.read({
        apiVersion: API_VERSION,
        kind: KIND,
        metadata: { name: "run-now", namespace: NS },
      })) as unknown as { metadata: { annotations?: Record<string, string> } };
      return got.metadata.annotations?.[RUN_NOW_REQUESTED_BY_ANNOTATION];
    };
    assert.equal((await annotate("r1")).code, 0);
    assert.equal(await stamp(), runNowRequestedByValue("admin", "r1"));
    assert.equal((await annotate("r2")).code, 0);
    assert.equal(await stamp(), runNowRequestedByValue("admin", "r2"));
    const tooLong = await annotate("x".repeat(254));
    assert.notEqual(tooLong.code, 0);
    assert.match(
      tooLong.stderr,
      /metadata\.annotations\[batch\.tutorial\.kubebuilder\.io\/run-now\]: .*at most|no more than 253/,
    );
  });

  it("keeps the fields a user set", async () => {
    const own = variant(minimalCronJob("own-values"), (o) => {
      o.spec.suspend = true;
      o.spec.concurrencyPolicy = "Forbid";
      o.spec.successfulJobsHistoryLimit = 0;
      o.spec.failedJobsHistoryLimit = 0;
    });
    const res = await webhooks.env.kubectl(["apply", "-f", "-"], yamlOf(own));
    assert.equal(res.code, 0, res.stderr);
    const got = await client.read({
      apiVersion: own.apiVersion,
      kind: own.kind,
      metadata: { name: "own-values", namespace: NS },
    });
    const spec = (got as unknown as { spec: Record<string, unknown> }).spec;
    assert.deepEqual(
      [spec.suspend, spec.concurrencyPolicy, spec.successfulJobsHistoryLimit, spec.failedJobsHistoryLimit],
      [true, "Forbid", 0, 0],
    );
  });

  it("passes warnings through to kubectl", async () => {
    const short = variant(minimalCronJob("short-deadline"), (o) => (o.spec.startingDeadlineSeconds = 5));
    const res = await webhooks.env.kubectl(["apply", "-f", "-"], yamlOf(short));
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /^Warning: spec\.startingDeadlineSeconds: 5 is less than 10/m);

    const often = variant(minimalCronJob("every-30s"), (o) => (o.spec.schedule = "@every 30s"));
    const res2 = await webhooks.env.kubectl(["apply", "-f", "-"], yamlOf(often));
    assert.equal(res2.code, 0, res2.stderr);
    assert.match(res2.stderr, /^Warning: spec\.schedule: "@every 30s" runs more often than once a minute/m);

    const quiet = variant(minimalCronJob("no-warning"), (o) => (o.spec.startingDeadlineSeconds = 10));
    const res3 = await webhooks.env.kubectl(["apply", "-f", "-"], yamlOf(quiet));
    assert.equal(res3.code, 0, res3.stderr);
    assert.doesNotMatch(res3.stderr, /Warning/);
  });

  it("resolves H from the CronJob's namespace/name and tells kubectl what it runs as", async () => {
    const warning = (schedule: string, name: string) => {
      const r = resolveHashedSchedule(schedule, { namespace: NS, name });
      assert.ok(r.ok && r.hashed);
      return `Warning: spec.schedule: ${JSON.stringify(schedule)} runs as ${JSON.stringify(r.resolved)} for this CronJob (H is hashed from namespace/name; an extension the built-in CronJob does not accept)`;
    };
    for (const [name, schedule] of [
      ["hashed-hourly", "H * * * *"],
      ["hashed-nightly", "H H(0-5) * * *"],
      ["hashed-quarter", "H/15 * * * *"],
    ] as const) {
      const obj = variant(minimalCronJob(name), (o) => (o.spec.schedule = schedule));
      const res = await webhooks.env.kubectl(["apply", "-f", "-"], yamlOf(obj));
      assert.equal(res.code, 0, res.stderr);
      assert.ok(res.stderr.split("\n").includes(warning(schedule, name)), res.stderr);
      // What is stored is what the user wrote; the controller resolves it the same way.
      const stored = (await client.read({
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        metadata: { name, namespace: NS },
      })) as any;
      assert.equal(stored.spec.schedule, schedule);
    }

    const bad = variant(minimalCronJob("hashed-bad"), (o) => (o.spec.schedule = "H(50-70) * * * *"));
    const res = await webhooks.env.kubectl(["apply", "-f", "-"], yamlOf(bad));
    assert.notEqual(res.code, 0);
    assert.match(
      res.stderr,
      /The CronJob "hashed-bad" is invalid: spec\.schedule: Invalid value: "H\(50-70\) \* \* \* \*": minute H\(50-70\): range must lie within 0-59/,
    );

    // generateName: the API server names the object before validating admission (the mutating webhook sees
    // no name yet), so H is hashed from the generated name, and the warning says what that gives.
    const generated = variant(minimalCronJob("unused"), (o) => {
      delete o.metadata.name;
      o.metadata.generateName = "hashed-gen-";
      o.spec.schedule = "H * * * *";
    });
    const gen = await webhooks.env.kubectl(["create", "-f", "-", "-o", "name"], yamlOf(generated));
    assert.equal(gen.code, 0, gen.stderr);
    const genName = gen.stdout.trim().split("/")[1] ?? "";
    assert.match(genName, /^hashed-gen-[a-z0-9]{5}$/);
    assert.ok(gen.stderr.split("\n").includes(warning("H * * * *", genName)), gen.stderr);
  });

  it("validates updates, and never blocks deletes, even of an object that is invalid", async () => {
    const ok = await webhooks.env.kubectl(["apply", "-f", "-"], yamlOf(minimalCronJob("to-delete")));
    assert.equal(ok.code, 0, ok.stderr);
    const patch = await webhooks.env.kubectl([
      "patch",
      "cronjobs.batch.tutorial.kubebuilder.io",
      "to-delete",
      "-n",
      NS,
      "--type=merge",
      "-p",
      JSON.stringify({ spec: { schedule: "@fortnightly" } }),
    ]);
    assert.notEqual(patch.code, 0, "an update to an invalid schedule is denied");
    assert.ok(patch.stderr.includes(`spec.schedule: Invalid value: "@fortnightly": `), patch.stderr);
    const del = await webhooks.env.kubectl(["delete", "cronjobs.batch.tutorial.kubebuilder.io", "to-delete", "-n", NS]);
    assert.equal(del.code, 0, del.stderr);

    // An object written while validation was off (or before the webhook was deployed).
    const legacy = variant(minimalCronJob("legacy-invalid"), (o) => (o.spec.schedule = "TZ=UTC 0 * * * *"));
    bypassValidation = true;
    try {
      await client.create(legacy as KubernetesObject);
    } finally {
      bypassValidation = false;
    }
    // An update that does not fix it is validated like a create...
    const label = await webhooks.env.kubectl([
      "label",
      "cronjobs.batch.tutorial.kubebuilder.io",
      "legacy-invalid",
      "-n",
      NS,
      "a=b",
    ]);
    assert.notEqual(label.code, 0);
    assert.ok(label.stderr.includes("TZ= and CRON_TZ= prefixes are not supported; set spec.timeZone"), label.stderr);
    // ...but deleting it is allowed.
    const del2 = await webhooks.env.kubectl([
      "delete",
      "cronjobs.batch.tutorial.kubebuilder.io",
      "legacy-invalid",
      "-n",
      NS,
    ]);
    assert.equal(del2.code, 0, del2.stderr);
    const gone = await webhooks.env.kubectl([
      "get",
      "cronjobs.batch.tutorial.kubebuilder.io",
      "legacy-invalid",
      "-n",
      NS,
    ]);
    assert.notEqual(gone.code, 0);
  });

  it("serves a rotated certificate without a restart", async () => {
    const port = webhooks.server.port;
    const ca = webhooks.certs.caPEM;
    const before = webhooks.certs.serving.serialNumber.toUpperCase();
    assert.equal(await servedSerial(port, ca), before);
    const rotated = await webhooks.certs.rotate();
    const after = rotated.serialNumber.toUpperCase();
    assert.notEqual(after, before);
    await eventually("the new certificate being served", async () =>
      (await servedSerial(port, ca)) === after ? true : undefined,
    );

    const seenBefore = received.length;
    const created = await client.create(minimalCronJob("after-rotation") as KubernetesObject);
    assert.equal((created as unknown as { spec: Record<string, unknown> }).spec.suspend, false);
    assert.ok(received.length > seenBefore, "the apiserver called the webhooks after the rotation");
    const bad = variant(minimalCronJob("bad-after-rotation"), (o) => (o.spec.schedule = "* * *"));
    const err = await client.create(bad as KubernetesObject).then(
      () => assert.fail("the webhook should have denied the CronJob"),
      (e: unknown) => e,
    );
    assert.equal(statusOf(err).message, await expectedDenial(bad));
  });

  describe("the manager entrypoint (cmd/main.ts)", () => {
    const startManager = (name: string, webhookPort: number, args: string[], env: NodeJS.ProcessEnv) =>
      managerProcess({
        name,
        dir: webhooks.env.dir,
        kubeconfigPath: webhooks.env.kubeconfigPath,
        webhookPort,
        args,
        env,
      });

    it("serves no webhooks with ENABLE_WEBHOOKS=false", async () => {
      const port = await freePort();
      const m = startManager("manager-no-webhooks", port, [], { ENABLE_WEBHOOKS: "false" });
      try {
        await m.ready();
        assert.equal(await tcpProbe(port), "ECONNREFUSED");
        assert.doesNotMatch(m.read(), /Serving webhook server/);
      } finally {
        await m.proc.stop();
      }
    });

    it("serves the webhooks over TLS by default", async () => {
      const port = await freePort();
      const m = startManager("manager-webhooks", port, ["--webhook-cert-path", webhooks.certs.dir], {
        ENABLE_WEBHOOKS: "",
      });
      try {
        await m.ready();
        assert.equal(await servedSerial(port, webhooks.certs.caPEM), webhooks.certs.serving.serialNumber.toUpperCase());
        // An admission round trip with the child's own handlers.
        const bad = variant(minimalCronJob("x"), (o) => (o.spec.schedule = "invalid-cron-schedule"));
        const review = await postReview(port, webhooks.certs.caPEM, VALIDATE_PATH, bad);
        assert.equal(review.response?.uid, "child-review");
        assert.equal(review.response?.allowed, false);
        assert.equal(review.response?.status?.code, 422);
        const defaulted = await postReview(port, webhooks.certs.caPEM, MUTATE_PATH, minimalCronJob("x"));
        assert.equal(defaulted.response?.allowed, true);
        assert.equal(defaulted.response?.patchType, "JSONPatch");
      } finally {
        await m.proc.stop();
      }
    });
  });
});
