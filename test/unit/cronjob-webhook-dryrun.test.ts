// The CronJob validating webhook's check of the Job template by the API server: a dry-run create of the Job the
// controller would create, its causes mapped back to the CronJob (a fake client here;
// test/integration/cronjob/webhook-dryrun.test.ts runs it against kube-apiserver), and the fields an older
// cluster's Job API does not have.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GROUP, jobForSlot, type JobSource } from "../../api/v1/index.ts";
import { fieldErrorString } from "../../runtime/webhook/index.ts";
import { cronJobWebhookHandlers, VALIDATE_PATH } from "../../webhooks/cronjob_webhook.ts";
import { minimalCronJob, variant } from "../fixtures.ts";
import { APIError } from "../../runtime/errors.ts";
import { discardLogger } from "../../runtime/log.ts";
import {
  DRY_RUN_TIMEOUT_MS,
  type DryRunClient,
  dryRunJobTemplate,
  jobErrorsToCronJob,
  parseErrorBody,
  PLACEHOLDER_UID,
  strictDecodingFields,
  UNKNOWN_JOB_FIELD,
  unquoteGo,
} from "../../webhooks/jobtemplate_dryrun.ts";
import { call, request } from "../admission.ts";

const RFC1123_LABEL =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

/** The 422 the API server answers for an invalid Job, as the client surfaces it. */
function invalidJob(name: string, causes: Array<{ field: string; reason: string; message: string }>): APIError {
  return APIError.fromResponse(422, {
    kind: "Status",
    apiVersion: "v1",
    status: "Failure",
    message: `Job.batch "${name}" is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join(", ")}`,
    reason: "Invalid",
    details: { name, group: "batch", kind: "Job", causes },
    code: 422,
  });
}

interface Recorded {
  method: string;
  path: string;
  query: Record<string, unknown> | undefined;
  body: any;
  timeoutMs: number | undefined;
}

/** A DryRunClient whose answer is `answer` (a value resolves, an Error rejects, "hang" never settles). */
function fakeClient(answer: unknown): DryRunClient & { calls: Recorded[] } {
  const calls: Recorded[] = [];
  return {
    calls,
    request: (<T>(method: string, path: string, o: Record<string, any> = {}): Promise<T> => {
      calls.push({ method, path, query: o.query, body: o.body, timeoutMs: o.timeoutMs });
      if (answer === "hang") return new Promise<T>(() => undefined);
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer as T);
    }) as DryRunClient["request"],
  };
}

describe("Job template dry-run: API server errors mapped to the CronJob", () => {
  const ctx = { name: "cj", jobName: "cj-1700000000", templateHasLabels: true };

  it("re-renders every cause at its spec.jobTemplate path, with the value, in the same format", () => {
    const causes = [
      {
        field: "spec.template.spec.containers[0].name",
        reason: "FieldValueInvalid",
        message: `Invalid value: "UPPER_case": ${RFC1123_LABEL}`,
      },
      {
        field: "spec.completions",
        reason: "FieldValueInvalid",
        message: "Invalid value: -5: must be greater than or equal to 0",
      },
      {
        field: "spec.backoffLimit",
        reason: "FieldValueInvalid",
        message: "Invalid value: -1: must be greater than or equal to 0",
      },
      {
        field: "spec.template.metadata.labels",
        reason: "FieldValueInvalid",
        message: `Invalid value: "${"v".repeat(64)}": must be no more than 63 characters`,
      },
      {
        field: "metadata.labels",
        reason: "FieldValueInvalid",
        message: `Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.'`,
      },
      {
        field: "spec.template.spec.restartPolicy",
        reason: "FieldValueNotSupported",
        message: `Unsupported value: "Always": supported values: "OnFailure", "Never"`,
      },
      { field: "spec.template.spec.containers[0].image", reason: "FieldValueRequired", message: "Required value" },
      {
        field: "metadata.annotations",
        reason: "FieldValueTooLong",
        message: "Too long: must have at most 262144 bytes",
      },
    ];
    const { errors, outside } = jobErrorsToCronJob(causes, ctx);
    assert.deepEqual(outside, []);
    assert.deepEqual(
      errors.map((e) => [e.field, e.type, e.value]),
      [
        ["spec.jobTemplate.spec.template.spec.containers[0].name", "FieldValueInvalid", "UPPER_case"],
        ["spec.jobTemplate.spec.completions", "FieldValueInvalid", -5],
        ["spec.jobTemplate.spec.backoffLimit", "FieldValueInvalid", -1],
        ["spec.jobTemplate.spec.template.metadata.labels", "FieldValueInvalid", "v".repeat(64)],
        ["spec.jobTemplate.metadata.labels", "FieldValueInvalid", "bad key!"],
        ["spec.jobTemplate.spec.template.spec.restartPolicy", "FieldValueNotSupported", "Always"],
        ["spec.jobTemplate.spec.template.spec.containers[0].image", "FieldValueRequired", undefined],
        ["spec.jobTemplate.metadata.annotations", "FieldValueTooLong", undefined],
      ],
    );
    // The API server's text, unchanged, after the CronJob's path.
    assert.deepEqual(
      errors.map(fieldErrorString),
      causes.map((c) => `spec.jobTemplate.${c.field}: ${c.message}`),
    );
  });

  it("blames the pod template for a Job label error when the template sets no labels (they are copied)", () => {
    const message = `Invalid value: "${"v".repeat(64)}": must be no more than 63 characters`;
    const causes = [
      { field: "metadata.labels", reason: "FieldValueInvalid", message },
      { field: "spec.template.metadata.labels", reason: "FieldValueInvalid", message },
    ];
    const { errors } = jobErrorsToCronJob(causes, { ...ctx, templateHasLabels: false });
    assert.deepEqual(errors.map(fieldErrorString), [`spec.jobTemplate.spec.template.metadata.labels: ${message}`]);
  });

  it("puts a Job name error on the CronJob's name and keeps controller-set fields out of jobTemplate", () => {
    const { errors, outside } = jobErrorsToCronJob(
      [
        {
          field: "metadata.name",
          reason: "FieldValueInvalid",
          message: `Invalid value: "cj-1700000000": must be no more than 63 characters`,
        },
        {
          field: "metadata.ownerReferences.uid",
          reason: "FieldValueInvalid",
          message: `Invalid value: "": uid must not be empty`,
        },
      ],
      ctx,
    );
    assert.deepEqual(errors, [
      {
        field: "metadata.name",
        type: "FieldValueInvalid",
        value: "cj",
        detail: `the name of its Jobs ("cj-1700000000" now) is invalid: Invalid value: "cj-1700000000": must be no more than 63 characters`,
      },
    ]);
    assert.deepEqual(outside, [`metadata.ownerReferences.uid: Invalid value: "": uid must not be empty`]);
  });

  it("parses Go-quoted values, numbers, booleans and nil, and keeps an unknown shape as the detail", () => {
    assert.deepEqual(parseErrorBody("FieldValueInvalid", `Invalid value: "a\\"b\\\\c: d\\x01é\\u00e9": bad: very`), {
      type: "FieldValueInvalid",
      value: 'a"b\\c: d\x01éé',
      detail: "bad: very",
    });
    assert.deepEqual(parseErrorBody("FieldValueInvalid", "Invalid value: true"), {
      type: "FieldValueInvalid",
      value: true,
    });
    assert.deepEqual(parseErrorBody("FieldValueInvalid", "Invalid value: null: x"), {
      type: "FieldValueInvalid",
      value: null,
      detail: "x",
    });
    assert.deepEqual(parseErrorBody("FieldValueTooMany", "Too many: 5: must have at most 4 items"), {
      type: "FieldValueTooMany",
      value: 5,
      detail: "must have at most 4 items",
    });
    // Newer apimachinery's types (1.34+): kept as theirs, not turned into Forbidden.
    assert.deepEqual(parseErrorBody("FieldValueTooFew", "Too few: 0: must have at least 1 item"), {
      type: "FieldValueTooFew",
      value: 0,
      detail: "must have at least 1 item",
    });
    assert.deepEqual(parseErrorBody("FieldValueTooShort", "Too short: must be at least 3 bytes"), {
      type: "FieldValueTooShort",
      detail: "must be at least 3 bytes",
    });
    assert.deepEqual(parseErrorBody("FieldValueForbidden", "Forbidden: may not be set: really"), {
      type: "FieldValueForbidden",
      detail: "may not be set: really",
    });
    // The reason is a hint; the text decides (an unknown reason still parses).
    assert.deepEqual(parseErrorBody("FieldValueTypeInvalid", `Invalid value: "x": y`), {
      type: "FieldValueInvalid",
      value: "x",
      detail: "y",
    });
    assert.deepEqual(parseErrorBody(undefined, "something else entirely"), {
      type: "FieldValueForbidden",
      detail: "something else entirely",
    });
    assert.deepEqual(unquoteGo(`"\\t\\101\\U0001F600"rest`), { value: "\tA😀", end: 18 });
    assert.equal(unquoteGo(`"unterminated`), undefined);
  });
});

describe("CronJob validating webhook with the Job template dry-run", () => {
  const NOW = new Date("2026-11-22T05:53:00Z");
  const sec = Math.floor(NOW.getTime() / 1000);
  const bad = invalidJob(`cj-${sec}`, [
    {
      field: "spec.completions",
      reason: "FieldValueInvalid",
      message: "Invalid value: -5: must be greater than or equal to 0",
    },
  ]);

  it("dry-runs exactly the Job the controller would create, in the request's namespace", async () => {
    const client = fakeClient({});
    const cj = variant(minimalCronJob("cj", "team-a"), (o) => {
      o.spec.timeZone = "Europe/Berlin";
      o.spec.jobTemplate.metadata = { labels: { app: "x" }, annotations: { a: "b" } };
    });
    assert.deepEqual(await dryRunJobTemplate(client, cj as JobSource, "team-a", { slot: NOW }), { kind: "valid" });
    assert.equal(client.calls.length, 1);
    const sent = client.calls[0]!;
    assert.equal(sent.method, "POST");
    assert.equal(sent.path, "/apis/batch/v1/namespaces/team-a/jobs");
    // Strict: a 1.25+ server refuses fields its Job schema lacks instead of dropping them.
    assert.deepEqual(sent.query, { dryRun: "All", fieldValidation: "Strict" });
    assert.equal(sent.timeoutMs, DRY_RUN_TIMEOUT_MS);
    assert.equal(sent.body.metadata.name, `cj-${sec}`);
    assert.equal(sent.body.metadata.ownerReferences[0].uid, PLACEHOLDER_UID);
    const expected = jobForSlot(
      { ...(cj as JobSource), metadata: { name: "cj", namespace: "team-a", uid: PLACEHOLDER_UID } },
      NOW,
    );
    assert.deepEqual(sent.body, expected);
  });

  it("denies with the API server's errors at the CronJob's paths, on CREATE", async () => {
    const client = fakeClient(bad);
    const handler = cronJobWebhookHandlers({ client }).get(VALIDATE_PATH)!;
    const cj = variant(minimalCronJob("cj"), (o) => (o.spec.jobTemplate.spec.completions = -5));
    const r = await call(handler, request("CREATE", cj));
    assert.equal(r.allowed, false);
    assert.equal(r.status?.code, 422);
    assert.equal(
      r.status?.message,
      `CronJob.${GROUP} "cj" is invalid: spec.jobTemplate.spec.completions: Invalid value: -5: must be greater than or equal to 0`,
    );
    assert.deepEqual(r.status?.details?.causes, [
      {
        reason: "FieldValueInvalid",
        message: "Invalid value: -5: must be greater than or equal to 0",
        field: "spec.jobTemplate.spec.completions",
      },
    ]);
    assert.equal(client.calls[0]?.path, "/apis/batch/v1/namespaces/default/jobs");
  });

  it("validates an UPDATE that changes the template (with the CronJob's uid), not one that keeps it", async () => {
    const old = variant(minimalCronJob("cj"), (o) => (o.metadata.uid = "1234-uid"));
    const changed = variant(old, (o) => (o.spec.jobTemplate.spec.backoffLimit = -1));
    const client = fakeClient(bad);
    const handler = cronJobWebhookHandlers({ client }).get(VALIDATE_PATH)!;
    assert.equal((await call(handler, request("UPDATE", changed, old))).allowed, false);
    assert.equal(client.calls[0]?.body.metadata.ownerReferences[0].uid, "1234-uid");

    const relabelled = variant(changed, (o) => (o.metadata.labels = { a: "b" }));
    const r = await call(handler, request("UPDATE", relabelled, changed));
    assert.equal(r.allowed, true);
    assert.equal(client.calls.length, 1, "an unchanged template is not dry-run again");
  });

  it("does not dry-run on DELETE or when the static checks already deny", async () => {
    const client = fakeClient(bad);
    const handler = cronJobWebhookHandlers({ client }).get(VALIDATE_PATH)!;
    assert.equal((await call(handler, request("DELETE", undefined, minimalCronJob("cj")))).allowed, true);
    const staticBad = variant(minimalCronJob("cj"), (o) => (o.spec.schedule = "nope"));
    const r = await call(handler, request("CREATE", staticBad));
    assert.equal(r.allowed, false);
    assert.deepEqual(
      r.status?.details?.causes?.map((c) => c.field),
      ["spec.schedule"],
    );
    assert.equal(client.calls.length, 0);
  });

  it("admits a valid template, and a Job name that is taken (AlreadyExists comes after validation)", async () => {
    for (const answer of [
      {},
      APIError.fromResponse(409, { kind: "Status", code: 409, reason: "AlreadyExists", message: "exists" }),
    ]) {
      const handler = cronJobWebhookHandlers({ client: fakeClient(answer) }).get(VALIDATE_PATH)!;
      const r = await call(handler, request("CREATE", minimalCronJob("cj")));
      assert.equal(r.allowed, true);
      assert.equal(r.warnings, undefined);
    }
  });

  it("admits with a warning, promptly, when the dry-run cannot be made", async () => {
    const cases: Array<[unknown, RegExp]> = [
      [
        new APIError(0, "Unknown", "POST /apis/batch/v1/namespaces/default/jobs: connect ECONNREFUSED 127.0.0.1:1"),
        /ECONNREFUSED/,
      ],
      [
        APIError.fromResponse(403, {
          kind: "Status",
          code: 403,
          reason: "Forbidden",
          message: 'jobs.batch is forbidden: User "x" cannot create resource "jobs"',
        }),
        /403 Forbidden: jobs\.batch is forbidden/,
      ],
      [APIError.fromResponse(503, "upstream down"), /503 ServiceUnavailable/],
      ["hang", /no answer to the dry-run create of Job "cj-\d+" in namespace "default" within 50 ms/],
      [
        invalidJob("cj-1", [
          { field: "metadata.ownerReferences.uid", reason: "FieldValueInvalid", message: `Invalid value: ""` },
        ]),
        /refused the Job for fields the controller sets: metadata\.ownerReferences\.uid/,
      ],
    ];
    for (const [answer, reason] of cases) {
      const handler = cronJobWebhookHandlers({
        client: fakeClient(answer),
        dryRunTimeoutMs: 50,
        logger: discardLogger,
      }).get(VALIDATE_PATH)!;
      const short = variant(minimalCronJob("cj"), (o) => (o.spec.startingDeadlineSeconds = 5));
      const started = Date.now();
      const r = await call(handler, request("CREATE", short));
      assert.ok(Date.now() - started < 2000, "the webhook answers within the dry-run deadline");
      assert.equal(r.allowed, true, String(answer));
      assert.equal(r.warnings?.length, 2, JSON.stringify(r.warnings));
      assert.match(r.warnings?.[0] ?? "", /^spec\.startingDeadlineSeconds: 5/);
      assert.match(r.warnings?.[1] ?? "", /^spec\.jobTemplate: could not be checked against the API server \(/);
      assert.match(r.warnings?.[1] ?? "", reason);
    }
  });
});

// Version skew: the CRD's Job template is a recent Kubernetes', the cluster may be older. What such a cluster
// does with a field it lacks: 1.25+ with fieldValidation=Strict answers 400 "strict decoding error"; any
// version without it stores the Job without the field (with a 299 warning from 1.25 on).
describe("Job template dry-run: fields the cluster's Job API does not have", () => {
  const STOP_SIGNAL = "spec.jobTemplate.spec.template.spec.containers[0].lifecycle.stopSignal";
  const withStopSignal = () =>
    variant(
      minimalCronJob("cj"),
      (o) => (o.spec.jobTemplate.spec.template.spec.containers[0].lifecycle = { stopSignal: "SIGUSR1" }),
    );

  /** A client answering like a kube-apiserver: a body (or an error) and 299 warnings. */
  function server(answer: (body: any) => unknown, warnings: string[] = []): DryRunClient {
    return {
      request: (<T>(_m: string, _p: string, o: Record<string, any> = {}): Promise<T> => {
        for (const w of warnings) o.onWarning?.(w);
        const a = answer(o.body);
        return a instanceof Error ? Promise.reject(a) : Promise.resolve(a as T);
      }) as DryRunClient["request"],
    };
  }
  /** What an older server stores: the Job without the containers' lifecycle fields it does not know. */
  const dropsStopSignal = (body: any) => {
    const stored = structuredClone(body);
    for (const c of stored.spec.template.spec.containers) if (c.lifecycle) c.lifecycle = {};
    return stored;
  };

  it("refuses a field a server without strict validation drops (compares the Job it would store)", async () => {
    const outcome = await dryRunJobTemplate(server(dropsStopSignal), withStopSignal() as JobSource, "default");
    assert.deepEqual(outcome, {
      kind: "invalid",
      errors: [{ field: STOP_SIGNAL, type: "FieldValueForbidden", detail: UNKNOWN_JOB_FIELD }],
    });
  });

  it("refuses the fields a strict decoding error names (1.25+)", async () => {
    const strict = APIError.fromResponse(400, {
      kind: "Status",
      code: 400,
      reason: "BadRequest",
      message:
        'Job in version "v1" cannot be handled as a Job: strict decoding error: unknown field "spec.template.spec.containers[0].lifecycle.stopSignal", unknown field "spec.managedByX"',
    });
    const outcome = await dryRunJobTemplate(
      server(() => strict),
      withStopSignal() as JobSource,
      "default",
    );
    assert.deepEqual(outcome, {
      kind: "invalid",
      errors: [
        { field: STOP_SIGNAL, type: "FieldValueForbidden", detail: UNKNOWN_JOB_FIELD },
        { field: "spec.jobTemplate.spec.managedByX", type: "FieldValueForbidden", detail: UNKNOWN_JOB_FIELD },
      ],
    });
    assert.deepEqual(strictDecodingFields("some other bad request"), []);
  });

  it("does not take normalised values, defaults or empty values for dropped fields", async () => {
    const cj = variant(minimalCronJob("cj"), (o) => {
      const c = o.spec.jobTemplate.spec.template.spec.containers[0];
      c.resources = { limits: { cpu: "1000m" } };
      c.args = [];
      c.stdin = false;
      o.spec.jobTemplate.spec.template.spec.nodeSelector = { "kubernetes.io/os": "linux" };
    });
    const normalises = (body: any) => {
      const stored = structuredClone(body);
      const c = stored.spec.template.spec.containers[0];
      c.resources.limits.cpu = "1"; // a quantity in its canonical form
      delete c.args; // omitempty
      delete c.stdin;
      c.terminationMessagePath = "/dev/termination-log"; // a default
      return stored;
    };
    assert.deepEqual(await dryRunJobTemplate(server(normalises), cj as JobSource, "default"), { kind: "valid" });
  });

  it("passes the API server's warnings on to the admission response, and refuses with them too", async () => {
    const warning = 'spec.template.spec.containers[0].ports[0]: duplicate port definition with ID "80/TCP"';
    const ok = cronJobWebhookHandlers({ client: server((b) => b, [warning]) }).get(VALIDATE_PATH)!;
    const r = await call(ok, request("CREATE", minimalCronJob("cj")));
    assert.equal(r.allowed, true);
    assert.deepEqual(r.warnings, [`spec.jobTemplate: the API server warns about the Job: ${warning}`]);

    const dropped = 'unknown field "spec.template.spec.containers[0].lifecycle.stopSignal"';
    const old = cronJobWebhookHandlers({ client: server(dropsStopSignal, [dropped]) }).get(VALIDATE_PATH)!;
    const denied = await call(old, request("CREATE", withStopSignal()));
    assert.equal(denied.allowed, false);
    assert.equal(denied.status?.code, 422);
    assert.deepEqual(
      denied.status?.details?.causes?.map((c) => c.field),
      [STOP_SIGNAL],
    );
    assert.match(
      denied.status?.message ?? "",
      /lifecycle\.stopSignal: Forbidden: this cluster's Job API has no such field/,
    );
    assert.deepEqual(denied.warnings, [`spec.jobTemplate: the API server warns about the Job: ${dropped}`]);
  });
});
