// The Job template checked by kube-apiserver's own Job validation: the validating webhook dry-runs the
// Job the controller would create, so a CronJob whose Jobs can never be created is refused at
// `kubectl apply` (as the built-in CronJob is) with the spec.jobTemplate path and the value; an update
// that breaks the template is refused too; and when the dry-run cannot be made the CronJob is admitted
// with a warning, promptly, instead of every apply hanging on the webhook's timeout.
// Integration only: dry-run and the Job validation are the apiserver's (the fake validates nothing).
import assert from "node:assert/strict";
import { request as httpsRequest } from "node:https";
import { createServer, type Server, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import {
  ApiException,
  KubeConfig,
  KubernetesObjectApi,
  type KubernetesObject,
  type V1Status,
} from "@kubernetes/client-node";
import { stringify } from "yaml";
import { Client } from "../../../runtime/client.ts";
import { discardLogger } from "../../../runtime/log.ts";
import { allowed, type AdmissionHandler } from "../../../runtime/webhook/index.ts";
import type { AdmissionReview } from "../../../runtime/webhook/admission.ts";
import { cronJobWebhookHandlers, MUTATE_PATH, VALIDATE_PATH } from "../../../webhooks/cronjob_webhook.ts";
import { DRY_RUN_TIMEOUT_MS, type DryRunClient } from "../../../webhooks/jobtemplate_dryrun.ts";
import { freePort } from "../../../envtest/ports.ts";
import { minimalCronJob, variant } from "../../fixtures.ts";
import { managerProcess } from "../../manager-process.ts";
import { probeOf, withWebhookServer } from "../../servers.ts";
import { labelValueTooLong, serverVersion, type ServerVersion } from "../../versions.ts";

const NS = "default";
const CRONJOBS = "cronjobs.batch.tutorial.kubebuilder.io";
const DENIED = `admission webhook "vcronjob-v1.kb.io" denied the request: CronJob.batch.tutorial.kubebuilder.io`;
/** The API server's default webhook timeoutSeconds (the generated configurations leave it unset). */
const WEBHOOK_TIMEOUT_MS = 10_000;
const LONG_VALUE = "v".repeat(64);

/**
 * The five templates from the issue: each Job would fail at every run with FailedCreate. `expect` is the
 * start of each error, in cause order (a pod template label is checked twice by the API server's Pod
 * template validation, at .labels and .metadata.labels, as for the built-in CronJob), for the API server's
 * release: only the label value's length limit is worded differently (see labelValueTooLong); the RFC 1123,
 * label key and "greater than or equal to 0" texts are apimachinery's, unchanged from 1.20 to 1.36.
 */
const BAD_TEMPLATES: Array<{
  name: string;
  mutate: (o: Record<string, any>) => void;
  expect: (v: ServerVersion) => string[];
}> = [
  {
    name: "upper-container",
    mutate: (o) => (o.spec.jobTemplate.spec.template.spec.containers[0].name = "UPPER_case"),
    expect: () => [
      `spec.jobTemplate.spec.template.spec.containers[0].name: Invalid value: "UPPER_case": a lowercase RFC 1123 label`,
    ],
  },
  {
    name: "bad-label-key",
    mutate: (o) => (o.spec.jobTemplate.metadata = { labels: { "bad key!": "x" } }),
    expect: () => [`spec.jobTemplate.metadata.labels: Invalid value: "bad key!": name part must consist of`],
  },
  {
    name: "long-pod-label",
    mutate: (o) => (o.spec.jobTemplate.spec.template.metadata = { labels: { app: LONG_VALUE } }),
    expect: (v) => [
      `spec.jobTemplate.spec.template.metadata.labels: Invalid value: "${LONG_VALUE}": ${labelValueTooLong(v)}`,
      `spec.jobTemplate.spec.template.labels: Invalid value: "${LONG_VALUE}": ${labelValueTooLong(v)}`,
    ],
  },
  {
    name: "negative-completions",
    mutate: (o) => (o.spec.jobTemplate.spec.completions = -5),
    expect: () => [`spec.jobTemplate.spec.completions: Invalid value: -5: must be greater than or equal to 0`],
  },
  {
    name: "negative-backoff",
    mutate: (o) => (o.spec.jobTemplate.spec.backoffLimit = -1),
    expect: () => [`spec.jobTemplate.spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0`],
  },
];

function statusOf(err: unknown): V1Status {
  assert.ok(err instanceof ApiException, `expected an ApiException, got ${String(err)}`);
  return (typeof err.body === "string" ? JSON.parse(err.body) : err.body) as V1Status;
}

/** A kubeconfig for `server` (nothing there speaks Kubernetes). */
function kubeConfigFor(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "c", server, skipTLSVerify: true }],
    users: [{ name: "u", token: "t" }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x",
  });
  return kc;
}

/** Counts the dry-runs a client makes. */
function counting(client: DryRunClient): DryRunClient & { count: number } {
  const c = {
    count: 0,
    request: ((method: string, path: string, o?: Record<string, unknown>) => {
      c.count++;
      return client.request(method, path, o);
    }) as DryRunClient["request"],
  };
  return c;
}

/** POSTs a CREATE AdmissionReview to a webhook server trusted through `ca`. */
function postReview(port: number, ca: string, object: Record<string, any>): Promise<AdmissionReview> {
  const body = JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "manager-review",
      kind: { group: "batch.tutorial.kubebuilder.io", version: "v1", kind: "CronJob" },
      resource: { group: "batch.tutorial.kubebuilder.io", version: "v1", resource: "cronjobs" },
      name: object.metadata.name,
      namespace: NS,
      operation: "CREATE",
      userInfo: {},
      object,
    },
  });
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: "127.0.0.1",
        port,
        path: VALIDATE_PATH,
        method: "POST",
        ca,
        headers: { "content-type": "application/json" },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")) as AdmissionReview));
        res.on("error", reject);
      },
    );
    req.setTimeout(WEBHOOK_TIMEOUT_MS, () => req.destroy(new Error("the webhook did not answer")));
    req.on("error", reject);
    req.end(body);
  });
}

describe("the Job template checked with kube-apiserver's Job validation (dry-run)", () => {
  let api: KubernetesObjectApi;
  let apiClient: Client | undefined;
  let real: (DryRunClient & { count: number }) | undefined;
  let version: ServerVersion;
  /** Accepts connections and never answers. */
  let silent: Server | undefined;
  const silentSockets = new Set<Socket>();
  const clients: Client[] = [];

  let probed = false;
  /** The validating handler the webhook server calls now (tests switch clients). */
  let validate: AdmissionHandler = () => allowed();
  const handlers = new Map<string, AdmissionHandler>([
    [MUTATE_PATH, cronJobWebhookHandlers().get(MUTATE_PATH)!],
    [
      VALIDATE_PATH,
      (req) => {
        if (req.dryRun) probed = true;
        return validate(req);
      },
    ],
  ]);
  const validatorWith = (client: DryRunClient): AdmissionHandler =>
    cronJobWebhookHandlers({ client, logger: discardLogger }).get(VALIDATE_PATH)!;
  /**
   * The validating handler on `client`, timing each of its answers: how fast the webhook answers is the property,
   * not how long kubectl, the API server and a busy machine take around it.
   */
  const timedValidatorWith = (client: DryRunClient): { handler: AdmissionHandler; answers: number[] } => {
    const inner = validatorWith(client);
    const answers: number[] = [];
    const handler: AdmissionHandler = async (req) => {
      const started = performance.now();
      try {
        return await inner(req);
      } finally {
        answers.push(performance.now() - started);
      }
    };
    return { handler, answers };
  };

  const apply = (obj: Record<string, any>) => webhooks.env.kubectl(["apply", "-f", "-"], stringify(obj));

  const webhooks = withWebhookServer(handlers, {
    cluster: { probes: [{ object: probeOf(minimalCronJob("unused")), seen: () => probed }] },
  });
  before(async () => {
    const env = webhooks.env;
    version = await serverVersion(env.kubeConfig);
    api = KubernetesObjectApi.makeApiClient(env.kubeConfig);
    apiClient = new Client(env.kubeConfig);
    clients.push(apiClient);
    real = counting(apiClient);
    validate = validatorWith(real);
  });

  after(() => {
    for (const c of clients) c.close();
    for (const s of silentSockets) s.destroy();
    silent?.close();
  });

  it("admits a valid CronJob, after the API server accepted its Job", async () => {
    const before = real!.count;
    const res = await apply(minimalCronJob("valid-template"));
    assert.equal(res.code, 0, res.stderr);
    assert.doesNotMatch(res.stderr, /Warning/);
    assert.equal(real!.count, before + 1, "the Job template was dry-run");
  });

  // Version skew: the CRD's Job template is Kubernetes 1.35's. lifecycle.stopSignal is a field no default
  // cluster keeps: 1.20–1.32 do not have it, 1.33–1.35 drop it (ContainerStopSignals, alpha, off by
  // default). Stored as it is, every Job would run without it, silently; the webhook refuses it instead
  // (from the Job the API server would store on any version; 1.25+ with fieldValidation=Strict too).
  it("refuses a Job field this cluster's Job API does not keep (lifecycle.stopSignal), at its path", async () => {
    const obj = variant(minimalCronJob("stop-signal"), (o) => {
      o.spec.jobTemplate.spec.template.spec.containers[0].lifecycle = { stopSignal: "SIGUSR1" };
    });
    const res = await apply(obj);
    assert.notEqual(res.code, 0, res.stdout);
    assert.ok(
      res.stderr.includes(
        `spec.jobTemplate.spec.template.spec.containers[0].lifecycle.stopSignal: Forbidden: this cluster's Job API has no such field: its Jobs would be created without it`,
      ),
      res.stderr,
    );
    const get = await webhooks.env.kubectl(["get", CRONJOBS, "stop-signal", "-n", NS]);
    assert.notEqual(get.code, 0, "the denied object must not exist");
  });

  for (const bad of BAD_TEMPLATES) {
    it(`refuses ${bad.name} at kubectl apply, at the spec.jobTemplate path with the value`, async () => {
      const obj = variant(minimalCronJob(bad.name), bad.mutate);
      const expect = bad.expect(version);
      const res = await apply(obj);
      assert.notEqual(res.code, 0, res.stdout);
      assert.ok(res.stderr.includes(`The CronJob "${bad.name}" is invalid: `), res.stderr);
      for (const e of expect) assert.ok(res.stderr.includes(e), `${e}\n${res.stderr}`);

      // API clients: 422 Invalid from the webhook, one cause per error, at the CronJob's paths.
      const err = await api.create(obj as KubernetesObject).then(
        () => assert.fail("the webhook should have denied the CronJob"),
        (e: unknown) => e,
      );
      assert.equal((err as ApiException<unknown>).code, 422);
      const status = statusOf(err);
      assert.equal(status.reason, "Invalid");
      assert.ok(status.message?.startsWith(`${DENIED} "${bad.name}" is invalid: `), status.message);
      for (const e of expect) assert.ok(status.message?.includes(e), `${e}\n${status.message}`);
      assert.deepEqual(
        status.details?.causes?.map((c) => c.field),
        expect.map((e) => e.slice(0, e.indexOf(": "))),
      );
      assert.ok(
        status.details?.causes?.every((c, i) => `${c.field}: ${c.message}`.startsWith(expect[i]!)),
        JSON.stringify(status.details?.causes),
      );
      const get = await webhooks.env.kubectl(["get", CRONJOBS, bad.name, "-n", NS]);
      assert.notEqual(get.code, 0, "the denied object must not exist");
    });
  }

  it("refuses an update that makes the template bad; a metadata-only update of a bad template passes", async () => {
    const created = await apply(minimalCronJob("to-break"));
    assert.equal(created.code, 0, created.stderr);
    const patch = await webhooks.env.kubectl([
      "patch",
      CRONJOBS,
      "to-break",
      "-n",
      NS,
      "--type=merge",
      "-p",
      JSON.stringify({ spec: { jobTemplate: { spec: { backoffLimit: -1 } } } }),
    ]);
    assert.notEqual(patch.code, 0, patch.stdout);
    assert.ok(
      patch.stderr.includes(
        `spec.jobTemplate.spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0`,
      ),
      patch.stderr,
    );

    // A bad template stored while validation was off: only changes to spec.jobTemplate are dry-run.
    const legacy = variant(minimalCronJob("legacy-bad-template"), (o) => (o.spec.jobTemplate.spec.completions = -5));
    const saved = validate;
    validate = () => allowed();
    try {
      await api.create(legacy as KubernetesObject);
    } finally {
      validate = saved;
    }
    const before = real!.count;
    const label = await webhooks.env.kubectl(["label", CRONJOBS, "legacy-bad-template", "-n", NS, "a=b"]);
    assert.equal(label.code, 0, label.stderr);
    assert.equal(real!.count, before, "an unchanged template is not dry-run");
    const fix = await webhooks.env.kubectl([
      "patch",
      CRONJOBS,
      "legacy-bad-template",
      "-n",
      NS,
      "--type=merge",
      "-p",
      JSON.stringify({ spec: { jobTemplate: { spec: { completions: 2 } } } }),
    ]);
    assert.equal(fix.code, 0, fix.stderr);
    assert.equal(real!.count, before + 1);
  });

  it("admits with a warning, at once, when the API server cannot be reached for the dry-run", async () => {
    const port = await freePort(); // nothing listens there
    const closed = new Client(kubeConfigFor(`https://127.0.0.1:${port}`));
    clients.push(closed);
    const timed = timedValidatorWith(closed);
    validate = timed.handler;
    try {
      const res = await apply(minimalCronJob("unchecked-refused"));
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stderr, /^Warning: spec\.jobTemplate: could not be checked against the API server \(/m);
      assert.match(res.stderr, /ECONNREFUSED/);
      // At once: a refused connection is not waited on (the webhook's answers, not the whole kubectl apply).
      assert.ok(timed.answers.length > 0, "the webhook answered");
      assert.ok(Math.max(...timed.answers) < WEBHOOK_TIMEOUT_MS / 2, `answered in ${timed.answers.join(", ")} ms`);
      const get = await webhooks.env.kubectl(["get", CRONJOBS, "unchecked-refused", "-n", NS]);
      assert.equal(get.code, 0, get.stderr);
    } finally {
      validate = validatorWith(real!);
    }
  });

  it("admits with a warning within the dry-run deadline when the API server never answers", async () => {
    silent = createServer((s) => {
      silentSockets.add(s);
      s.on("error", () => undefined);
    });
    await new Promise<void>((resolve) => silent!.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as { port: number };
    const hanging = new Client(kubeConfigFor(`https://127.0.0.1:${port}`));
    clients.push(hanging);
    const timed = timedValidatorWith(hanging);
    validate = timed.handler;
    try {
      const res = await apply(minimalCronJob("unchecked-silent"));
      assert.equal(res.code, 0, res.stderr);
      assert.match(
        res.stderr,
        new RegExp(
          `^Warning: spec\\.jobTemplate: could not be checked against the API server \\(no answer to the dry-run create of Job "unchecked-silent-\\d+" in namespace "default" within ${DRY_RUN_TIMEOUT_MS} ms\\)`,
          "m",
        ),
      );
      // The dry-run's deadline, not the webhook's timeout (failurePolicy Fail would refuse the apply): the webhook's
      // own answer, timed without kubectl and the API server around it.
      const took = Math.max(...timed.answers);
      assert.ok(took >= DRY_RUN_TIMEOUT_MS - 500 && took < WEBHOOK_TIMEOUT_MS - 1000, `answered in ${took} ms`);
    } finally {
      validate = validatorWith(real!);
    }
  });

  it("the manager entrypoint wires its client into the validating webhook", async () => {
    const webhookPort = await freePort();
    const { proc, read } = managerProcess({
      name: "manager-dryrun",
      dir: webhooks.env.dir,
      kubeconfigPath: webhooks.env.kubeconfigPath,
      webhookPort,
      args: ["--webhook-cert-path", webhooks.certs.dir],
      env: { ENABLE_WEBHOOKS: "" },
    });
    try {
      const deadline = Date.now() + 30_000;
      let review: AdmissionReview | undefined;
      const bad = variant(minimalCronJob("via-manager"), (o) => (o.spec.jobTemplate.spec.completions = -5));
      while (!review) {
        if (!proc.running) throw new Error(`the manager exited:\n${read()}`);
        review = await postReview(webhookPort, webhooks.certs.caPEM, bad).catch(() => undefined);
        if (!review) {
          if (Date.now() > deadline) throw new Error(`the manager's webhook never answered:\n${read()}`);
          await new Promise((r) => setTimeout(r, 200));
        }
      }
      assert.equal(review.response?.allowed, false, JSON.stringify(review.response));
      assert.equal(review.response?.status?.code, 422);
      assert.equal(
        review.response?.status?.message,
        `CronJob.batch.tutorial.kubebuilder.io "via-manager" is invalid: spec.jobTemplate.spec.completions: Invalid value: -5: must be greater than or equal to 0`,
      );
    } finally {
      await proc.stop();
    }
  });
});
