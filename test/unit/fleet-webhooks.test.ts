// Issue 53, item 2: an ExclusionCalendar or a ConcurrencyGroup that is wrong is refused at `kubectl apply`. The
// validating webhooks of the two kinds (webhooks/fleet_webhooks.ts) without a server: a calendar's windows refused
// with the field, the value and the same words as the same window inline in a CronJob, a group's limit refused at
// spec.limit with its value, a malformed object answered with an error (never a crash), DELETE never blocked; the
// generated webhook configuration that sends both kinds there; and no window format in the CRDs (the API server checks
// the schema before the webhook, and would answer a pattern's regular expression instead of the parser's words).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { parseAllDocuments } from "yaml";
import * as api from "../../api/v1/index.ts";
import { MAX_EXCLUSION_WINDOWS } from "../../api/v1/schedule/index.ts";
import { cronJobCRD, SIMPLE_KINDS, simpleKindCRD } from "../../hack/crdgen/crd.ts";
import { readVendoredOpenAPI } from "../../hack/crdgen/vendored-openapi.ts";
import { webhookConfigurations } from "../../hack/crdgen/webhook.ts";
import type { Operation } from "../../runtime/webhook/admission.ts";
import { FAIL_ONCE_SERVED_ANNOTATION } from "../../webhooks/unserved.ts";
import { type AdmissionResult, fieldErrorString } from "../../runtime/webhook/index.ts";
import { validateCronJob } from "../../webhooks/cronjob_webhook.ts";
import {
  CALENDAR_VALIDATE_PATH,
  FLEET_WEBHOOK_SERVICE_PORT,
  fleetWebhookHandlers,
  fleetWebhookMarkers,
  GROUP_VALIDATE_PATH,
  validateConcurrencyGroup,
  validateConcurrencyGroupRequest,
  validateExclusionCalendar,
  validateExclusionCalendarRequest,
} from "../../webhooks/fleet_webhooks.ts";
import { admissionRequest } from "../admission.ts";
import { minimalCronJob, variant } from "../fixtures.ts";

type Obj = Record<string, any>;
const root = resolve(import.meta.dirname, "..", "..");
const NOW = new Date("2026-11-26T10:00:00Z");

const calendar = (windows: unknown, name = "holidays"): Obj => ({
  apiVersion: api.API_VERSION,
  kind: api.CALENDAR_KIND,
  metadata: { name, namespace: "team-a" },
  spec: { windows },
});
const group = (limit: unknown, name = "backups"): Obj => ({
  apiVersion: api.API_VERSION,
  kind: api.GROUP_KIND,
  metadata: { name, namespace: "team-a" },
  spec: { limit },
});

const calendarRequest = (op: Operation, object: unknown, oldObject?: unknown) =>
  validateExclusionCalendarRequest(
    admissionRequest({
      resource: api.CALENDAR_PLURAL,
      kind: api.CALENDAR_KIND,
      namespace: "team-a",
      operation: op,
      object,
      oldObject,
    }),
  );
const groupRequest = (op: Operation, object: unknown, oldObject?: unknown) =>
  validateConcurrencyGroupRequest(
    admissionRequest({
      resource: api.GROUP_PLURAL,
      kind: api.GROUP_KIND,
      namespace: "team-a",
      operation: op,
      object,
      oldObject,
    }),
  );

/** The handlers are synchronous, but the type allows a promise. */
function sync(r: AdmissionResult | Promise<AdmissionResult>): AdmissionResult {
  assert.ok(!(r instanceof Promise), "the fleet webhooks answer synchronously");
  return r;
}
/** Admitted, without warnings. */
const admitted = (r: AdmissionResult | Promise<AdmissionResult>) => {
  const a = sync(r);
  assert.equal(a.allowed, true, a.status?.message);
  assert.deepEqual(a.warnings ?? [], []);
};
const causes = (r: AdmissionResult) =>
  (r.status?.details?.causes ?? []).map((c) => ({ field: c.field, message: c.message }));

const calendarErrors = (windows: unknown) => validateExclusionCalendar(calendar(windows)).map(fieldErrorString);
/** The same windows inline in a CronJob (spec.exclusions.windows), as the CronJob's webhook says them. */
const inlineErrors = (windows: unknown) =>
  validateCronJob(
    variant(minimalCronJob("x"), (o) => {
      o.spec.exclusions = { windows };
    }),
    { now: NOW },
  ).errors.map(fieldErrorString);

describe("the ExclusionCalendar webhook", () => {
  it("refuses a window whose end is before its start, naming spec.windows[0].end and the value", () => {
    const r = sync(calendarRequest("CREATE", calendar([{ name: "freeze", start: "2026-12-20", end: "2026-12-01" }])));
    assert.equal(r.allowed, false);
    assert.equal(r.status?.code, 422);
    assert.equal(r.status?.reason, "Invalid");
    assert.equal(
      r.status?.message,
      `ExclusionCalendar.batch.tutorial.kubebuilder.io "holidays" is invalid: ` +
        `spec.windows[0].end: Invalid value: "2026-12-01": must be after start "2026-12-20"`,
    );
    assert.deepEqual(r.status?.details?.kind, api.CALENDAR_KIND);
    assert.deepEqual(r.status?.details?.group, api.GROUP);
    assert.deepEqual(causes(r), [
      { field: "spec.windows[0].end", message: 'Invalid value: "2026-12-01": must be after start "2026-12-20"' },
    ]);
  });

  it('refuses from: "25:00" (and a to past 24:00), naming the field and the value', () => {
    assert.deepEqual(calendarErrors([{ from: "25:00" }]), [
      'spec.windows[0].from: Invalid value: "25:00": not a time of day (HH:MM, 00:00-23:59)',
    ]);
    assert.deepEqual(
      calendarErrors([
        { from: "22:00", to: "24:01" },
        { daysOfWeek: "MON", from: "24:00" },
      ]),
      [
        'spec.windows[0].to: Invalid value: "24:01": not a time of day (HH:MM, 00:00-24:00)',
        'spec.windows[1].from: Invalid value: "24:00": not a time of day (HH:MM, 00:00-23:59)',
      ],
    );
    const r = sync(calendarRequest("CREATE", calendar([{ from: "25:00" }])));
    assert.equal(r.allowed, false);
    assert.deepEqual(causes(r), [
      {
        field: "spec.windows[0].from",
        message: 'Invalid value: "25:00": not a time of day (HH:MM, 00:00-23:59)',
      },
    ]);
  });

  it("says each error in the words the same window gets inline in a CronJob's spec.exclusions.windows", () => {
    const cases: unknown[] = [
      [{ start: "2026-12-20", end: "2026-12-01" }],
      [{ from: "25:00" }],
      [{ start: "2026-12-20T10:00" }],
      [{ start: "2026-02-30" }],
      [{ start: "2026-12-20", from: "02:00" }],
      [{ daysOfMonth: "30-31", months: "FEB" }],
      [{ daysOfWeek: "FUNDAY" }],
      [{ end: "2026-12-20" }],
      [{ start: 20261220 }],
      [{ colour: "red", start: "2026-12-20" }],
      [{ name: " ", start: "2026-12-20" }],
      [{}],
      ["2026-12-20"],
      "2026-12-20",
      Array.from({ length: MAX_EXCLUSION_WINDOWS + 1 }, () => ({ start: "2026-12-20" })),
    ];
    for (const windows of cases) {
      const own = calendarErrors(windows);
      const inline = inlineErrors(windows);
      assert.ok(own.length > 0, `${JSON.stringify(windows)} is refused`);
      assert.deepEqual(
        own.map((e) => e.replace(/^spec\.windows/, "")),
        inline.map((e) => e.replace(/^spec\.exclusions\.windows/, "")),
        JSON.stringify(windows),
      );
      for (const e of own) assert.match(e, /^spec\.windows(\[\d+\]\S*)?: (Invalid value|Too many): /);
    }
    assert.deepEqual(calendarErrors(cases.at(-1)), ["spec.windows: Too many: 367: must have at most 366 items"]);
  });

  it("admits a valid calendar, without warnings: config/samples' and one of each kind of window", () => {
    const sample = parseAllDocuments(
      readFileSync(join(root, "config", "samples", "batch_v1_exclusioncalendar.yaml"), "utf8"),
    )[0]!.toJS() as Obj;
    assert.deepEqual(validateExclusionCalendar(sample), []);
    const valid = calendar([
      { name: "Christmas Day", start: "2026-12-25" },
      { name: "change freeze", start: "2026-12-20", end: "2027-01-05" },
      { start: "2026-12-31T18:00", end: "2027-01-01T06:00:30" },
      { name: "maintenance", daysOfMonth: "1-7", daysOfWeek: "MON", from: "02:00", to: "04:00" },
      { name: "nights", from: "22:00", to: "24:00" },
    ]);
    for (const op of ["CREATE", "UPDATE"] as const) {
      admitted(calendarRequest(op, valid, op === "UPDATE" ? calendar([]) : undefined));
    }
    admitted(calendarRequest("CREATE", calendar([])));
  });

  it("refuses an UPDATE that makes the windows invalid, and never blocks a DELETE", () => {
    const good = calendar([{ start: "2026-12-20" }]);
    const bad = calendar([{ start: "2026-12-20", end: "2026-12-01" }]);
    const update = sync(calendarRequest("UPDATE", bad, good));
    assert.equal(update.allowed, false);
    assert.deepEqual(
      causes(update).map((c) => c.field),
      ["spec.windows[0].end"],
    );
    // The object, when sent, may be anything: a DELETE is not looked at.
    for (const r of [
      calendarRequest("DELETE", undefined, bad),
      calendarRequest("DELETE", bad, bad),
      calendarRequest("DELETE", "not an object"),
      calendarRequest("CONNECT", bad),
    ]) {
      admitted(r);
    }
  });

  it("lets a calendar stored before it was checked be deleted, but not changed while it is wrong", () => {
    const bad = calendar([{ start: "2026-12-20", end: "2026-12-01" }]);
    // The garbage collector removing a finalizer of an object being deleted: never blocked.
    const deleting = variant(bad, (o) => {
      o.metadata.deletionTimestamp = "2026-11-26T10:00:00Z";
      o.metadata.finalizers = [];
    });
    const finalized = variant(bad, (o) => (o.metadata.finalizers = ["foregroundDeletion"]));
    admitted(calendarRequest("UPDATE", deleting, finalized));
    admitted(calendarRequest("DELETE", undefined, bad));
    // Any other update is validated like a create (as a CronJob's): a label on it too, and a change that keeps it wrong.
    const labelled = variant(bad, (o) => (o.metadata.labels = { team: "a" }));
    const r = sync(calendarRequest("UPDATE", labelled, bad));
    assert.equal(r.allowed, false);
    assert.deepEqual(causes(r), [
      { field: "spec.windows[0].end", message: 'Invalid value: "2026-12-01": must be after start "2026-12-20"' },
    ]);
    const still = calendar([{ start: "2026-12-20", end: "2026-12-01" }, { start: "2026-12-25" }]);
    assert.equal(sync(calendarRequest("UPDATE", still, bad)).allowed, false);
    admitted(calendarRequest("UPDATE", calendar([{ start: "2026-12-20" }]), bad));
  });

  it("answers a malformed object with an error naming the field and the value, never a crash", () => {
    const cases: Array<[unknown, string[]]> = [
      [{ metadata: { name: "x" } }, ["spec: Required value: an ExclusionCalendar needs spec.windows, its windows"]],
      [
        { metadata: { name: "x" }, spec: null },
        ["spec: Required value: an ExclusionCalendar needs spec.windows, its windows"],
      ],
      [
        { metadata: { name: "x" }, spec: "windows" },
        ['spec: Invalid value: "windows": must be an object: an ExclusionCalendar needs spec.windows, its windows'],
      ],
      [
        { metadata: { name: "x" }, spec: {} },
        ["spec.windows: Required value: the calendar's windows (a list; [] excludes nothing)"],
      ],
      [calendar("2026-12-25"), ['spec.windows: Invalid value: "2026-12-25": must be a list of windows']],
      [
        calendar({ start: "2026-12-25" }),
        ['spec.windows: Invalid value: {"start":"2026-12-25"}: must be a list of windows'],
      ],
      [calendar(null), ["spec.windows: Invalid value: null: must be a list of windows"]],
      [
        calendar([null, 7]),
        [
          "spec.windows[0]: Invalid value: null: must be an object (a window: start and end, or recurring fields)",
          "spec.windows[1]: Invalid value: 7: must be an object (a window: start and end, or recurring fields)",
        ],
      ],
      [calendar([{ from: 2 }]), ["spec.windows[0].from: Invalid value: 2: must be a string"]],
      [
        "a calendar",
        [
          '<root>: Invalid value: "a calendar": must be an object: an ExclusionCalendar needs spec.windows, its windows',
        ],
      ],
    ];
    for (const [obj, want] of cases) {
      assert.deepEqual(validateExclusionCalendar(obj).map(fieldErrorString), want, JSON.stringify(obj));
      const r = sync(calendarRequest("CREATE", obj));
      assert.equal(r.allowed, false, JSON.stringify(obj));
      assert.deepEqual(
        causes(r).map((c) => `${c.field}: ${c.message}`),
        want,
      );
    }
    // And what the schema says besides (a field of the wrong type the parser does not read).
    assert.deepEqual(validateExclusionCalendar({ ...calendar([]), kind: "CronJob" }).map(fieldErrorString), [
      'kind: Invalid value: "CronJob": Invalid input: expected "ExclusionCalendar"',
    ]);
  });
});

describe("the ConcurrencyGroup webhook", () => {
  it("refuses a negative or non-integer limit, naming spec.limit and the value", () => {
    const rule =
      "must be a whole number from 0 to 2147483647: the most Jobs of the group's CronJobs that run at once (0 holds every new run)";
    for (const [limit, value] of [
      [-1, "-1"],
      [1.5, "1.5"],
      ["2", '"2"'],
      [2 ** 31, "2147483648"],
      [true, "true"],
    ] as const) {
      const r = sync(groupRequest("CREATE", group(limit)));
      assert.equal(r.allowed, false, String(limit));
      assert.equal(
        r.status?.message,
        `ConcurrencyGroup.batch.tutorial.kubebuilder.io "backups" is invalid: spec.limit: Invalid value: ${value}: ${rule}`,
      );
      assert.deepEqual(causes(r), [{ field: "spec.limit", message: `Invalid value: ${value}: ${rule}` }]);
    }
  });

  it("admits 0 and a positive limit, on create and update", () => {
    for (const limit of [0, 1, 2, 2 ** 31 - 1]) {
      assert.deepEqual(validateConcurrencyGroup(group(limit)), []);
      admitted(groupRequest("CREATE", group(limit)));
      admitted(groupRequest("UPDATE", group(limit), group(3)));
    }
  });

  it("refuses an UPDATE to an invalid limit, and never blocks a DELETE", () => {
    const r = sync(groupRequest("UPDATE", group(-2), group(2)));
    assert.equal(r.allowed, false);
    assert.deepEqual(
      causes(r).map((c) => c.field),
      ["spec.limit"],
    );
    admitted(groupRequest("DELETE", undefined, group(-2)));
    admitted(groupRequest("DELETE", group(-2), group(-2)));
    // One stored before it was checked: deleted, also through its finalizers, but not changed while wrong.
    const deleting = variant(group(-2), (o) => (o.metadata.deletionTimestamp = "2026-11-26T10:00:00Z"));
    admitted(groupRequest("UPDATE", deleting, group(-2)));
    const labelled = variant(group(-2), (o) => (o.metadata.labels = { team: "a" }));
    assert.equal(sync(groupRequest("UPDATE", labelled, group(-2))).allowed, false);
    assert.equal(sync(groupRequest("UPDATE", group(-3), group(-2))).allowed, false);
  });

  it("answers a malformed object with an error naming the field and the value, never a crash", () => {
    const needs = "a ConcurrencyGroup needs spec.limit, the most Jobs of its CronJobs that run at once";
    const cases: Array<[unknown, string[]]> = [
      [{ metadata: { name: "x" } }, [`spec: Required value: ${needs}`]],
      [{ metadata: { name: "x" }, spec: [2] }, [`spec: Invalid value: [2]: must be an object: ${needs}`]],
      [
        { metadata: { name: "x" }, spec: {} },
        [
          "spec.limit: Required value: must be a whole number from 0 to 2147483647: the most Jobs of the group's CronJobs that run at once (0 holds every new run)",
        ],
      ],
      [7, [`<root>: Invalid value: 7: must be an object: ${needs}`]],
      [null, [`<root>: Invalid value: null: must be an object: ${needs}`]],
    ];
    for (const [obj, want] of cases) {
      assert.deepEqual(validateConcurrencyGroup(obj).map(fieldErrorString), want, JSON.stringify(obj));
      assert.equal(sync(groupRequest("CREATE", obj)).allowed, false);
    }
  });
});

describe("the fleet webhooks' declarations and configuration", () => {
  const VALIDATING = () => webhookConfigurations().find((c) => c.kind === "ValidatingWebhookConfiguration")!;

  it("serves each kind at the path its declaration names", () => {
    const handlers = fleetWebhookHandlers();
    assert.deepEqual([...handlers.keys()], [CALENDAR_VALIDATE_PATH, GROUP_VALIDATE_PATH]);
    assert.equal(CALENDAR_VALIDATE_PATH, "/validate-batch-tutorial-kubebuilder-io-v1-exclusioncalendar");
    assert.equal(GROUP_VALIDATE_PATH, "/validate-batch-tutorial-kubebuilder-io-v1-concurrencygroup");
    assert.deepEqual(
      fleetWebhookMarkers.map((m) => m.validating.path),
      [...handlers.keys()],
    );
  });

  it("the generated validating configuration sends both kinds' CREATE and UPDATE there; the mutating none", () => {
    const hooks = VALIDATING().webhooks as Obj[];
    const byResource = new Map(hooks.map((w) => [w.rules[0].resources[0], w]));
    for (const [resource, name, path] of [
      [api.CALENDAR_PLURAL, "vexclusioncalendar-v1.kb.io", CALENDAR_VALIDATE_PATH],
      [api.GROUP_PLURAL, "vconcurrencygroup-v1.kb.io", GROUP_VALIDATE_PATH],
    ]) {
      const w = byResource.get(resource);
      assert.ok(w, `no validating webhook for ${resource}`);
      assert.equal(w.name, name);
      assert.equal(w.clientConfig.service.path, path);
      // Added after a release: Ignore until the manager's failure gate sees their port served, then Fail.
      assert.equal(w.failurePolicy, "Ignore");
      assert.equal(w.clientConfig.service.port, FLEET_WEBHOOK_SERVICE_PORT);
      const annotations = (VALIDATING().metadata as { annotations: Record<string, string> }).annotations;
      assert.ok(annotations[FAIL_ONCE_SERVED_ANNOTATION]!.split(",").includes(name!));
      assert.equal(w.sideEffects, "None");
      assert.deepEqual(w.rules, [
        {
          apiGroups: [api.GROUP],
          apiVersions: [api.VERSION],
          operations: ["CREATE", "UPDATE"],
          resources: [resource],
          scope: "*",
        },
      ]);
    }
    const mutating = webhookConfigurations().find((c) => c.kind === "MutatingWebhookConfiguration")!;
    assert.deepEqual(
      (mutating.webhooks as Obj[]).map((w) => w.rules[0].resources),
      [["cronjobs"]],
    );
  });

  it("config/webhook/manifests.yaml is the generated configuration", () => {
    const file = parseAllDocuments(readFileSync(join(root, "config", "webhook", "manifests.yaml"), "utf8")).map((d) =>
      d.toJS(),
    );
    assert.deepEqual(file, webhookConfigurations());
  });
});

describe("the CRDs' own checks of the two kinds", () => {
  const defs = (readVendoredOpenAPI() as { definitions: never }).definitions;
  const windowItems = (crd: Obj, at: string[]): Obj =>
    at.reduce((n, k) => n.properties[k], crd.spec.versions[0].schema.openAPIV3Schema).items.properties;
  const calendarCRD = simpleKindCRD(
    SIMPLE_KINDS.find((k) => k.kind === api.CALENDAR_KIND)!,
    { definitions: defs },
  ) as Obj;
  const groupCRD = simpleKindCRD(
    SIMPLE_KINDS.find((k) => k.kind === api.GROUP_KIND)!,
    {
      definitions: defs,
    },
  ) as Obj;

  it("the ConcurrencyGroup's limit is an int32 of at least 0", () => {
    const limit = groupCRD.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.limit;
    assert.equal(limit.type, "integer");
    assert.equal(limit.format, "int32");
    assert.equal(limit.minimum, 0);
  });

  it("a window's fields carry no pattern in either CRD: the webhook's words answer a bad format, the same for both kinds", () => {
    const items = windowItems(calendarCRD, ["spec", "windows"]);
    // The CronJob's inline windows are the same schema, in both versions.
    const cronJob = cronJobCRD({ definitions: defs }) as Obj;
    for (const v of cronJob.spec.versions) {
      assert.deepEqual(windowItems({ spec: { versions: [v] } }, ["spec", "exclusions", "windows"]), items);
    }
    for (const field of ["start", "end", "from", "to"]) {
      assert.equal(items[field].pattern, undefined, field);
      assert.equal(items[field].maxLength, 64, field);
    }
    const [inCalendar] = validateExclusionCalendar(calendar([{ from: "25:00" }]));
    assert.equal(
      fieldErrorString(inCalendar!),
      'spec.windows[0].from: Invalid value: "25:00": not a time of day (HH:MM, 00:00-23:59)',
    );
  });
});
