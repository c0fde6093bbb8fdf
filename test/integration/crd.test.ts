// The generated CRD against a real kube-apiserver: install, schema defaults and validation (also with no
// admission webhook in front of it), embedded metadata, the status subresource.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { ApiException, ApiextensionsV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import {
  GROUP,
  MAX_CRONJOB_NAME_LENGTH,
  MAX_SCHEDULE_LENGTH,
  MAX_TIME_ZONE_LENGTH,
  PLURAL,
  RESOURCE,
  VERSION,
} from "../../api/v1/index.ts";
import { PROJECT_ROOT, TestEnv } from "../../envtest/index.ts";
import { atLeast } from "../../envtest/versions.ts";
import { minimalCronJob, variant } from "../fixtures.ts";
import { crdMaxLengthError, serverVersion, type ServerVersion } from "../versions.ts";

const ns = "default";

describe("CronJob CRD on a real apiserver", () => {
  let env: TestEnv;
  let api: CustomObjectsApi;
  let version: ServerVersion;

  before(async () => {
    env = await TestEnv.start();
    api = env.kubeConfig.makeApiClient(CustomObjectsApi);
    version = await serverVersion(env.kubeConfig);
  });
  after(async () => {
    await env?.stop();
  });

  const create = (body: object) =>
    api.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural: PLURAL, body });
  const get = (name: string) =>
    api.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural: PLURAL, name });

  async function rejection(body: object): Promise<string> {
    try {
      await create(body);
    } catch (err) {
      assert.ok(err instanceof ApiException, String(err));
      assert.equal(err.code, 422, String(err.body));
      return (JSON.parse(String(err.body)) as { message: string }).message;
    }
    assert.fail("the apiserver accepted an invalid CronJob");
  }

  it("is installed and Established, with our printer columns", async () => {
    const crd = await env.kubeConfig.makeApiClient(ApiextensionsV1Api).readCustomResourceDefinition({ name: RESOURCE });
    const established = crd.status?.conditions?.find((c) => c.type === "Established");
    assert.equal(established?.status, "True");
    assert.deepEqual(
      crd.spec.versions[0]?.additionalPrinterColumns?.map((c) => c.name),
      ["Schedule", "Resolved", "TimeZone", "Suspend", "Active", "Last Schedule", "Next Schedule", "Age"],
    );
    assert.deepEqual(crd.spec.names.shortNames, ["cron", "crons"]);
    assert.deepEqual(crd.spec.names.categories, ["all"]);
  });

  it("is found by its short name and in `kubectl get all`", async () => {
    const ns = "short-names";
    await env.kubectl(["create", "namespace", ns]);
    const obj = { ...minimalCronJob("found"), metadata: { name: "found", namespace: ns } };
    const applied = await env.kubectl(["apply", "-f", "-"], JSON.stringify(obj));
    assert.equal(applied.code, 0, applied.stderr);
    const short = await env.kubectl(["get", "cron", "-n", ns, "-o", "name"]);
    assert.equal(short.code, 0, short.stderr);
    assert.equal(short.stdout.trim(), "cronjob.batch.tutorial.kubebuilder.io/found");
    const all = await env.kubectl(["get", "all", "-n", ns, "-o", "name"]);
    assert.match(all.stdout, /cronjob\.batch\.tutorial\.kubebuilder\.io\/found/);
  });

  it("`make install` applies the CRD with kubectl (server-side, repeatable)", async () => {
    for (let i = 0; i < 2; i++) {
      const r = await promisify(execFile)("make", ["--no-print-directory", "install"], {
        cwd: PROJECT_ROOT,
        env: { ...process.env, KUBECONFIG: env.kubeconfigPath, KUBECTL: `${env.assets}/kubectl` },
      });
      assert.match(
        r.stdout,
        /customresourcedefinition\.apiextensions\.k8s\.io\/cronjobs\.batch\.tutorial\.kubebuilder\.io serverside-applied/,
      );
    }
  });

  it("`kubectl explain` prints our descriptions", async () => {
    // The apiserver publishes a new CRD's OpenAPI a few seconds after it is Established.
    const explain = async (field: string) => {
      for (let i = 0; ; i++) {
        const r = await env.kubectl(["explain", `${PLURAL}.${field}`, `--api-version=${GROUP}/${VERSION}`]);
        if (r.code === 0 || i >= 60) return r;
        await new Promise((res) => setTimeout(res, 500));
      }
    };
    const r = await explain("spec.concurrencyPolicy");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Specifies how to treat concurrent executions of a Job/);
    const j = await explain("spec.jobTemplate.spec.backoffLimit");
    assert.equal(j.code, 0, j.stderr);
    assert.match(j.stdout, /Specifies the number of retries before marking this job failed/);
    // The Pod template's fields are documented by the Pod API (hack/crdgen/crd.ts, UNDOCUMENTED_TEMPLATE).
    const t = await explain("spec.jobTemplate.spec.template");
    assert.equal(t.code, 0, t.stderr);
    // kubectl wraps descriptions at 80 columns.
    assert.match(t.stdout.replace(/\s+/g, " "), /see `kubectl explain pod\.spec` for their documentation/);
  });

  /** kubectl's default field validation refuses each unknown field by name client-side, the first it meets server-side. */
  async function refusesByName(obj: unknown, unknown: readonly string[]): Promise<void> {
    const plain = await env.kubectl(["apply", "-f", "-"], JSON.stringify(obj));
    assert.notEqual(plain.code, 0, `apply: ${plain.stdout}`);
    for (const field of unknown) assert.match(plain.stderr, new RegExp(field), `apply names ${field}`);
    // Server-side apply stops at the first field its typed patch does not know, in no fixed order: it names one.
    const ssa = await env.kubectl(["apply", "--server-side", "-f", "-"], JSON.stringify(obj));
    assert.notEqual(ssa.code, 0, `apply --server-side: ${ssa.stdout}`);
    assert.match(ssa.stderr, /field not declared in schema/, ssa.stderr);
    assert.ok(
      unknown.some((field) => ssa.stderr.includes(field)),
      `apply --server-side names one of ${unknown.join(", ")}: ${ssa.stderr}`,
    );
  }

  it("refuses unknown fields through kubectl, by name, and prunes them where they are let through", async () => {
    // The schema keeps no field it does not declare, the Pod template's included (its metadata too): from 1.25
    // kubectl's default field validation refuses them; let through (--validate=false), they are pruned.
    const ns = "unknown-fields";
    await env.kubectl(["create", "namespace", ns]);
    const obj = variant(minimalCronJob("unknown-fields", ns), (o) => {
      o.spec.notAField = "x";
      o.spec.jobTemplate.spec.template.metadata = { labels: { kept: "yes" }, notMetadata: "y" };
      o.spec.jobTemplate.spec.template.spec.containers[0].notAContainerField = "z";
    });
    const unknown = ["notAField", "notMetadata", "notAContainerField"];
    // Refused by name from 1.25 (server-side field validation); before it, kubectl lets them through, pruned below.
    if (atLeast(env.version, 25)) await refusesByName(obj, unknown);
    const through = await env.kubectl(["apply", "--validate=false", "-f", "-"], JSON.stringify(obj));
    assert.equal(through.code, 0, through.stderr);
    const got = await api.getNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns,
      plural: PLURAL,
      name: "unknown-fields",
    });
    const text = JSON.stringify(got.spec);
    for (const field of unknown) assert.doesNotMatch(text, new RegExp(field), `${field} pruned`);
    assert.equal(got.spec.jobTemplate.spec.template.metadata.labels.kept, "yes", "declared fields kept");
  });

  it("accepts a minimal CronJob and defaults concurrencyPolicy and the history limits", async () => {
    await create(minimalCronJob("minimal"));
    const got = await get("minimal");
    assert.equal(got.spec.concurrencyPolicy, "Allow");
    assert.equal(got.spec.successfulJobsHistoryLimit, 3);
    assert.equal(got.spec.failedJobsHistoryLimit, 1);
  });

  // These messages read the same from 1.20 to 1.36: minimum/maximum are field.Invalid with kube-openapi's
  // unchanged text, enum is field.NotSupported (values quoted with strconv.Quote), required field.Required.
  // Only maxLength changed wording (see crdMaxLengthError below).
  const invalid: Array<[string, (o: Record<string, any>) => void, RegExp]> = [
    [
      "an unknown concurrencyPolicy",
      (o) => (o.spec.concurrencyPolicy = "Sometimes"),
      /spec\.concurrencyPolicy: Unsupported value: "Sometimes"/,
    ],
    [
      "a negative startingDeadlineSeconds",
      (o) => (o.spec.startingDeadlineSeconds = -5),
      /spec\.startingDeadlineSeconds: Invalid value: -5: spec\.startingDeadlineSeconds in body should be greater than or equal to 0/,
    ],
    [
      "a negative successfulJobsHistoryLimit",
      (o) => (o.spec.successfulJobsHistoryLimit = -1),
      /spec\.successfulJobsHistoryLimit: Invalid value: -1/,
    ],
    [
      "a negative failedJobsHistoryLimit",
      (o) => (o.spec.failedJobsHistoryLimit = -1),
      /spec\.failedJobsHistoryLimit: Invalid value: -1/,
    ],
    [
      "an unknown missedRunPolicy",
      (o) => (o.spec.missedRunPolicy = "Sometimes"),
      /spec\.missedRunPolicy: Unsupported value: "Sometimes": supported values: "RunLatest", "Skip", "RunAll"/,
    ],
    [
      "a maxCatchUpRuns over 100",
      (o) => ((o.spec.missedRunPolicy = "RunAll"), (o.spec.maxCatchUpRuns = 101)),
      /spec\.maxCatchUpRuns: Invalid value: 101/,
    ],
    [
      "a stopAfterConsecutiveFailures of 0",
      (o) => (o.spec.stopAfterConsecutiveFailures = 0),
      /spec\.stopAfterConsecutiveFailures: Invalid value: 0/,
    ],
    ["a missing schedule", (o) => delete o.spec.schedule, /spec\.schedule: Required value/],
    ["a missing jobTemplate", (o) => delete o.spec.jobTemplate, /spec\.jobTemplate: Required value/],
    [
      "a pod template without containers",
      (o) => delete o.spec.jobTemplate.spec.template.spec.containers,
      /spec\.jobTemplate\.spec\.template\.spec\.containers: Required value/,
    ],
  ];
  for (const [what, mutate, message] of invalid) {
    it(`rejects ${what} with a field-named error`, async () => {
      const msg = await rejection(variant(minimalCronJob(`bad-${what.replace(/\W+/g, "-").toLowerCase()}`), mutate));
      assert.match(msg, message);
      // No line the object did not cause: a CEL rule in the schema made kube-apiserver add one to every refusal
      // ('<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid').
      assert.doesNotMatch(msg, /were not checked|Invalid value: "null"/);
    });
  }

  // Admission webhooks are off under `make run` against a cluster, when config/manager is deployed
  // alone, or when a webhook configuration is deleted: the schema itself refuses what can never run.
  describe("with no admission webhook installed (admission bypassed)", () => {
    const RP = "spec.jobTemplate.spec.template.spec.restartPolicy";
    const nameOf = (n: number) => `n${"x".repeat(n - 2)}n`;

    it("really has no webhook between the client and the schema", async () => {
      for (const kind of ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"]) {
        const r = await env.kubectl(["get", kind, "-o", "name"]);
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.stdout.trim(), "", `${kind} installed: this test must reach the schema alone`);
      }
    });

    // The maxLength refusals are worded by release: see crdMaxLengthError. The enum (field.NotSupported,
    // quoted values) and required (field.Required) ones read the same from 1.20 to 1.36.
    const refused: Array<[string, object, (v: ServerVersion) => RegExp]> = [
      [
        "a 53-character name",
        minimalCronJob(nameOf(53)),
        (v) => crdMaxLengthError(v, "metadata.name", MAX_CRONJOB_NAME_LENGTH),
      ],
      [
        "restartPolicy Always",
        variant(minimalCronJob("rp-always"), (o) => (o.spec.jobTemplate.spec.template.spec.restartPolicy = "Always")),
        () =>
          new RegExp(
            `${RP.replaceAll(".", "\\.")}: Unsupported value: "Always": supported values: "OnFailure", "Never"`,
          ),
      ],
      [
        "a missing restartPolicy (Job defaulting would make it Always)",
        variant(minimalCronJob("rp-missing"), (o) => delete o.spec.jobTemplate.spec.template.spec.restartPolicy),
        () => new RegExp(`${RP.replaceAll(".", "\\.")}: Required value`),
      ],
      [
        "a 2000-character schedule",
        variant(minimalCronJob("long-schedule"), (o) => (o.spec.schedule = `00 0 * * ${"1,".repeat(995)}1`)),
        (v) => crdMaxLengthError(v, "spec.schedule", MAX_SCHEDULE_LENGTH),
      ],
      [
        "a 300-character timeZone",
        variant(minimalCronJob("long-zone"), (o) => (o.spec.timeZone = `Europe/${"B".repeat(293)}`)),
        (v) => crdMaxLengthError(v, "spec.timeZone", MAX_TIME_ZONE_LENGTH),
      ],
    ];
    for (const [what, body, message] of refused) {
      it(`refuses ${what}, naming the field`, async () => {
        const b = body as { metadata: { name: string }; spec: { schedule: string; timeZone?: string } };
        if (what.includes("schedule")) assert.equal(b.spec.schedule.length, 2000);
        if (what.includes("timeZone")) assert.equal(b.spec.timeZone?.length, 300);
        if (what.includes("name")) assert.equal(b.metadata.name.length, 53);
        assert.match(await rejection(body), message(version));
        const got = await env.kubectl(["get", RESOURCE, b.metadata.name, "-n", ns]);
        assert.notEqual(got.code, 0, "the refused object must not exist");
      });
    }

    it("accepts a 52-character name and a valid object at the limits", async () => {
      const name = nameOf(52);
      assert.equal(name.length, MAX_CRONJOB_NAME_LENGTH);
      await create(minimalCronJob(name));
      assert.equal((await get(name)).metadata.name, name);
      const atLimits = variant(minimalCronJob("at-limits"), (o) => {
        o.spec.schedule = `00 0 * * ${"1,".repeat(507)}1`;
        o.spec.timeZone = "America/Argentina/ComodRivadavia";
        o.spec.jobTemplate.spec.template.spec.restartPolicy = "Never";
      });
      assert.equal(atLimits.spec.schedule.length, MAX_SCHEDULE_LENGTH);
      await create(atLimits);
      assert.equal((await get("at-limits")).spec.jobTemplate.spec.template.spec.restartPolicy, "Never");
    });

    it("refuses an update to restartPolicy Always", async () => {
      await create(minimalCronJob("rp-update"));
      const obj = await get("rp-update");
      obj.spec.jobTemplate.spec.template.spec.restartPolicy = "Always";
      const err = await api
        .replaceNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          namespace: ns,
          plural: PLURAL,
          name: "rp-update",
          body: obj,
        })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      assert.ok(err instanceof ApiException, "the update was accepted");
      assert.equal(err.code, 422);
      assert.match(
        (JSON.parse(String(err.body)) as { message: string }).message,
        /restartPolicy: Unsupported value: "Always"/,
      );
    });
  });

  it("keeps labels and annotations of the job template and the pod template", async () => {
    const body = variant(minimalCronJob("labels"), (o) => {
      o.spec.jobTemplate.metadata = { labels: { team: "data" }, annotations: { "example.com/owner": "ops" } };
      o.spec.jobTemplate.spec.template.metadata = {
        labels: { app: "report" },
        annotations: { "sidecar.istio.io/inject": "false" },
      };
    });
    await create(body);
    const got = await get("labels");
    assert.deepEqual(got.spec.jobTemplate.metadata, body.spec.jobTemplate.metadata);
    assert.deepEqual(got.spec.jobTemplate.spec.template.metadata, body.spec.jobTemplate.spec.template.metadata);
  });

  it("separates spec and status through the status subresource", async () => {
    await create(minimalCronJob("subresource"));
    const obj = await get("subresource");
    // A status write through the main resource is ignored.
    obj.status = { lastScheduleTime: "2026-01-01T00:00:00Z" };
    const afterSpec = await api.replaceNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns,
      plural: PLURAL,
      name: "subresource",
      body: obj,
    });
    assert.equal(afterSpec.status, undefined);

    afterSpec.status = { lastScheduleTime: "2026-01-01T00:00:00Z" };
    afterSpec.spec.schedule = "0 0 * * *";
    const afterStatus = await api.replaceNamespacedCustomObjectStatus({
      group: GROUP,
      version: VERSION,
      namespace: ns,
      plural: PLURAL,
      name: "subresource",
      body: afterSpec,
    });
    assert.equal(afterStatus.status.lastScheduleTime, "2026-01-01T00:00:00Z");
    assert.equal(afterStatus.spec.schedule, "*/5 * * * *", "a status write must not change spec");
    assert.equal(afterStatus.metadata.generation, obj.metadata.generation, "status writes do not bump generation");
  });

  it("accepts more than 10 entries in status.active (no cap)", async () => {
    await create(minimalCronJob("many-active"));
    const obj = await get("many-active");
    obj.status = {
      active: Array.from({ length: 25 }, (_, i) => ({
        apiVersion: "batch/v1",
        kind: "Job",
        name: `many-active-${i}`,
        namespace: ns,
        uid: `uid-${i}`,
      })),
      activeCount: 25,
    };
    const updated = await api.replaceNamespacedCustomObjectStatus({
      group: GROUP,
      version: VERSION,
      namespace: ns,
      plural: PLURAL,
      name: "many-active",
      body: obj,
    });
    assert.equal(updated.status.active.length, 25);
  });

  it("shows the printer columns in kubectl get", async () => {
    const r = await env.kubectl(["get", RESOURCE, "many-active", "-n", ns]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+NEXT SCHEDULE\s+AGE/);
    assert.match(r.stdout, /many-active\s+\*\/5 \* \* \* \*\s+25\s/);
  });
});
