// `kubectl cron why` (issue 38): every cause of cmd/kubectl-cron/answer/causes.ts staged and asked about. Most cases go
// through the plugin's own entry point (main(["why", ...])) against test/fake-apiserver.ts, whose store holds the
// CronJob, its Jobs, their Pods, Events, quotas and the operator's objects (its Pod, its Lease, its webhooks and their
// endpoints, the CRD), and whose Date header is the API server's clock; this machine's clock is mocked to the same
// instant unless a case stages a skew. Where the live layer adds nothing (DST, H, the wall-clock --slot), the pure
// diagnose() is asked on facts built by hand. Each case checks the cause id, the exit code, that the verdict names
// the specific facts, that the evidence cites the state it rests on, and the fix.
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it, mock } from "node:test";
import {
  API_VERSION,
  CALENDAR_KIND,
  CONCURRENCY_GROUP_LABEL,
  CRONJOB_NAME_LABEL,
  ENDED_MESSAGE_ANNOTATION,
  ENDED_PODS_ANNOTATION,
  ENDED_REASON_ANNOTATION,
  GROUP,
  KIND,
  KUEUE_QUEUE_NAME_KEY,
  RUN_NOW_ANNOTATION,
  type Job,
  jobNameFor,
  type RecentRun,
  RETRY_ATTEMPT_ANNOTATION,
  RETRY_OF_ANNOTATION,
  retryJobName,
  AFTER_ANNOTATION,
  afterJobName,
  type CronJob,
  JITTER_OFFSET_ANNOTATION,
  jitterOffsetSeconds,
  offsetText,
  scheduleEndText,
} from "../../api/v1/index.ts";
import { CAUSES, type CauseId, causeOf, PLACEHOLDERS } from "../../cmd/kubectl-cron/answer/causes.ts";
import { runPlugin } from "../plugin-cluster.ts";
import { type Diagnosis, diagnose as diagnoseFacts, parseSlot } from "../../cmd/kubectl-cron/answer/why.ts";
import { needsAttention, sharedProblems, verdictKeys, verdictOf } from "../../cmd/kubectl-cron/answer/verdicts.ts";
import type { GroupFacts } from "../../cmd/kubectl-cron/model/groupfacts.ts";
import type { PodFacts, WhyFacts } from "../../cmd/kubectl-cron/model/facts.ts";
import { APIError } from "../../runtime/errors.ts";
import type { KubeObject } from "../../runtime/kinds.ts";
import { fixDiffersFromRow, verdictDiffersFromNoCause, verdictDiffersFromRow } from "../cause-words.ts";
import { claimLease, instanceLease, leaseRef, microTime, TENANT_ID, TENANT_INSTALL, TENANT_NS } from "../claims.ts";
import { FakeAPIServer } from "../fake-apiserver.ts";
import { batchJob } from "../fixtures.ts";
import { recorded } from "../fixtures/builtin-v1/index.ts";
import {
  DEPLOYMENT,
  healthyOperator,
  LEASE,
  OPERATOR_NS,
  OPERATOR_SELECTOR,
  WEBHOOK_SERVICE,
  whyFacts,
  WHY_DISCOVERY,
} from "../why-facts.ts";

// --- the scene ---------------------------------------------------------------------------------------------------

/** When the question is asked: Wednesday 2026-11-25, 12:12 in Berlin (UTC+1). */
const NOW = new Date("2026-11-25T11:12:00Z");
const NS = "prod";
const NAME = "backup";
const UID = "uid-backup";
const ZONE = "Europe/Berlin";
/** The latest slot: 03:00 in Berlin. */
const SLOT = "2026-11-25T02:00:00Z";
const SLOT_TEXT = "2026-11-25 03:00 Europe/Berlin (2026-11-25T02:00:00Z)";
const JOB = "backup-1795572000";
const PREV_SLOT = "2026-11-24T02:00:00Z";
const PREV_JOB = "backup-1795485600";
const OPERATOR_LABELS = { "app.kubernetes.io/name": "cronjob-operator", "control-plane": "controller-manager" };
const healthyOperatorFacts = (now = NOW) => healthyOperator(now);

const at = (t: string, seconds: number) => new Date(Date.parse(t) + seconds * 1000).toISOString();

/** The CronJob: "0 3 * * *" in Berlin, Forbid, created on 2026-11-01; `o` is merged into its spec and status. */
function cronJob(o: { spec?: Record<string, unknown>; status?: Record<string, unknown>; meta?: object } = {}) {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name: NAME, namespace: NS, uid: UID, creationTimestamp: "2026-11-01T00:00:00Z", ...o.meta },
    spec: {
      schedule: "0 3 * * *",
      timeZone: ZONE,
      concurrencyPolicy: "Forbid",
      jobTemplate: {
        spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "backup", image: "backup:1" }] } } },
      },
      ...o.spec,
    },
    status: { lastScheduleTime: SLOT, ...o.status },
  } as KubeObject;
}

/** A status.recentRuns entry for a slot (a Schedule trigger unless said otherwise). */
function entry(slot: string, decision: RecentRun["decision"], reason: string, o: Partial<RecentRun> = {}): RecentRun {
  return { trigger: "Schedule", scheduledTime: slot, decision, reason, decidedAt: at(slot, 2), ...o };
}

/** A Job of the CronJob for a slot (its controller reference and scheduled-time annotations). */
function job(
  name: string,
  slot: string,
  o: {
    state?: "active" | "complete" | "failed";
    start?: string;
    end?: string;
    spec?: Record<string, unknown>;
    created?: string;
    annotations?: Record<string, string>;
    failure?: { reason: string; message?: string };
  } = {},
): Job {
  const j = batchJob({
    name,
    namespace: NS,
    owner: { name: NAME, uid: UID },
    slot,
    timeZone: ZONE,
    ...(o.state ? { state: o.state } : {}),
    ...(o.start ? { start: o.start } : {}),
    ...(o.end ? { end: o.end } : {}),
    ...(o.spec ? { spec: o.spec } : {}),
    ...(o.annotations ? { annotations: o.annotations } : {}),
    ...(o.failure ? { failure: o.failure } : {}),
  });
  j.metadata!.creationTimestamp = o.created ?? at(slot, 2);
  return j;
}

type ContainerStatus = {
  name?: string;
  ready?: boolean;
  restartCount?: number;
  state?: object;
  lastState?: object;
};

/** A Pod of a Job (its job-name label), with the status the kubelet and scheduler write. */
function pod(
  name: string,
  jobName: string,
  o: { phase: string; created?: string; conditions?: object[]; containers?: ContainerStatus[] },
): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace: NS,
      labels: { "job-name": jobName, "batch.kubernetes.io/job-name": jobName },
      creationTimestamp: o.created ?? at(SLOT, 3),
    },
    spec: { containers: [{ name: "backup", image: "backup:1" }] },
    status: {
      phase: o.phase,
      ...(o.conditions ? { conditions: o.conditions } : {}),
      ...(o.containers
        ? { containerStatuses: o.containers.map((c) => ({ name: "backup", ready: false, restartCount: 0, ...c })) }
        : {}),
    },
  };
}

/** An Event about an object of the namespace. */
function event(kind: string, name: string, reason: string, message: string, o: { count?: number; last?: string } = {}) {
  return {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: `${name}.${reason.toLowerCase()}`, namespace: NS },
    involvedObject: { kind, name, namespace: NS },
    type: "Warning",
    reason,
    message,
    count: o.count ?? 1,
    lastTimestamp: o.last ?? at(SLOT, 3),
  } as KubeObject;
}

/** The operator as the default install runs it, healthy: one ready replica leading, its webhooks served. */
function operator() {
  const service = { namespace: OPERATOR_NS, name: WEBHOOK_SERVICE, path: "/validate" };
  return {
    pod: {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: "cronjob-operator-controller-manager-7d9f-abcde",
        namespace: OPERATOR_NS,
        labels: OPERATOR_LABELS,
        creationTimestamp: "2026-11-01T00:00:00Z",
      },
      spec: { containers: [{ name: "manager", command: ["node"], args: ["dist/cmd/main.js", "--leader-elect"] }] },
      status: {
        phase: "Running",
        conditions: [{ type: "Ready", status: "True" }],
        containerStatuses: [{ name: "manager", ready: true, restartCount: 0 }],
      },
    } as KubeObject,
    deployment: {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: DEPLOYMENT, namespace: OPERATOR_NS, labels: OPERATOR_LABELS },
      spec: { replicas: 1 },
      status: {
        replicas: 1,
        readyReplicas: 1,
        conditions: [{ type: "Available", status: "True", lastTransitionTime: "2026-11-01T00:00:30Z" }],
      },
    } as KubeObject,
    lease: {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: LEASE, namespace: OPERATOR_NS, creationTimestamp: "2026-11-01T00:00:00Z" },
      spec: {
        holderIdentity: "cronjob-operator-controller-manager-7d9f-abcde_0c1d",
        acquireTime: "2026-11-01T00:00:10.000000Z",
        renewTime: at(NOW.toISOString(), -3).replace(/\.\d+Z$/, ".000000Z"),
        leaseDurationSeconds: 15,
        leaseTransitions: 1,
      },
    } as KubeObject,
    validating: {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: "cronjob-operator-validating-webhook-configuration" },
      webhooks: [
        {
          name: "vcronjob-v1.kb.io",
          clientConfig: { service },
          rules: [
            { apiGroups: [GROUP], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["cronjobs"] },
          ],
        },
      ],
    } as KubeObject,
    // The webhook Service's endpoints, as the EndpointSlice controller writes them (core/v1 Endpoints is deprecated
    // from 1.33: why reads slices only).
    endpoints: {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: {
        name: `${WEBHOOK_SERVICE}-x7k2p`,
        namespace: OPERATOR_NS,
        labels: { "kubernetes.io/service-name": WEBHOOK_SERVICE },
      },
      addressType: "IPv4",
      endpoints: [{ addresses: ["10.244.0.7"], conditions: { ready: true } }],
      ports: [{ port: 9443 }],
    } as KubeObject,
    crd: {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `cronjobs.${GROUP}` },
      spec: {
        group: GROUP,
        conversion: { strategy: "Webhook", webhook: { clientConfig: { service: { ...service, path: "/convert" } } } },
      },
    } as KubeObject,
  };
}

// --- the fake API server -----------------------------------------------------------------------------------------

const servers: FakeAPIServer[] = [];
beforeEach(() => mock.timers.enable({ apis: ["Date"], now: NOW }));
afterEach(async () => {
  mock.timers.reset();
  for (const s of servers.splice(0)) await s.stop();
});

/** A cluster holding `objects` and the operator (healthy unless `op` says otherwise). */
async function cluster(
  objects: KubeObject[],
  op: Partial<Record<keyof ReturnType<typeof operator>, KubeObject | undefined>> = {},
): Promise<FakeAPIServer> {
  const server = await new FakeAPIServer({
    discovery: WHY_DISCOVERY,
    notFound: recorded().notFound,
    now: () => NOW,
  }).start(NS);
  servers.push(server);
  const ops = Object.values({ ...operator(), ...op }).filter((x): x is KubeObject => x !== undefined);
  await server.seed(...ops, ...objects);
  return server;
}

/**
 * Every verdict and fix a diagnosis gives (its own and each `also`'s) is its cause's row, in the row's words; a
 * verdict that names no cause is one of NO_CAUSE's.
 */
function fixesAsRows(d: Diagnosis): Diagnosis {
  if (d.cause && d.status !== "healthy") {
    // A verdict about its slot says it ("did not run at SLOT: …"); with no slot to name, it may not.
    const differs =
      fixDiffersFromRow(d.cause, d.fix) ?? verdictDiffersFromRow(d.cause, d.verdict, d.slot ? "verdict" : "either");
    assert.equal(differs, undefined, differs);
  } else {
    assert.deepEqual(d.fix, [], "no fix without a cause");
    const differs = verdictDiffersFromNoCause(d.verdict);
    assert.equal(differs, undefined, differs);
  }
  for (const a of d.also) {
    const differs = fixDiffersFromRow(a.cause, a.fix) ?? verdictDiffersFromRow(a.cause, a.summary, "finding");
    assert.equal(differs, undefined, differs);
  }
  return d;
}

const diagnose = (...a: Parameters<typeof diagnoseFacts>) => fixesAsRows(diagnoseFacts(...a));

const run = runPlugin;

/**
 * `kubectl cron why NAME [args]`, asked twice: as text and with -o json. Both must tell the same diagnosis with the
 * same exit code; the text prints the verdict, each piece of evidence and each fix.
 */
async function why(server: FakeAPIServer, ...args: string[]): Promise<{ code: number; text: string; d: Diagnosis }> {
  const text = await run(server, ["why", NAME, ...args]);
  const json = await run(server, ["why", NAME, ...args, "-o", "json"]);
  assert.equal(text.err, "", "no error");
  const d = fixesAsRows(JSON.parse(json.out) as Diagnosis);
  assert.equal(json.code, text.code, "-o json exits as the text does");
  assert.equal(d.exitCode, text.code, "the exit code is the diagnosis's");
  const lines = text.out.split("\n");
  assert.equal(lines[0], `${NS}/${NAME}: ${d.verdict}`, "the text's first line is the verdict");
  for (const e of d.evidence) assert.ok(lines.includes(`  - ${e}`), `the text shows the evidence ${e}`);
  for (const f of d.fix) assert.ok(lines.includes(`  - ${f}`), `the text shows the fix ${f}`);
  return { code: text.code, text: text.out, d };
}

/** What a diagnosis with a cause must say: the cause, the exit code, the facts named by the verdict, evidence, fix. */
function expectCause(
  r: { code: number; d: Diagnosis; text?: string },
  cause: CauseId,
  o: { exit?: number; verdict: (string | RegExp)[]; evidence: (string | RegExp)[]; fix: (string | RegExp)[] },
): void {
  const show = r.text ?? JSON.stringify(r.d, null, 2);
  assert.equal(r.d.cause, cause, show);
  assert.equal(r.code, o.exit ?? 1, show);
  assert.ok(r.d.evidence.length > 0, `evidence: ${show}`);
  const has = (texts: string[], p: string | RegExp) =>
    texts.some((t) => (typeof p === "string" ? t.includes(p) : p.test(t)));
  for (const p of o.verdict) assert.ok(has([r.d.verdict], p), `verdict names ${String(p)}: ${show}`);
  for (const p of o.evidence) assert.ok(has(r.d.evidence, p), `evidence cites ${String(p)}: ${show}`);
  assert.ok(o.fix.length === 0 || r.d.fix.length > 0, `a fix: ${show}`);
  for (const p of o.fix) assert.ok(has(r.d.fix, p), `fix says ${String(p)}: ${show}`);
}

/** The cause ids a set of diagnoses found (verdict or also). */
const covered = new Set<string>();
const note = (d: Diagnosis) => {
  if (d.cause) covered.add(d.cause);
  for (const a of d.also) covered.add(a.cause);
};

// --- the cases ---------------------------------------------------------------------------------------------------

describe("kubectl cron why NAME: through main against the fake API server", () => {
  it("healthy: it ran, Complete in 12 s, and the next slot is named (exit 0)", async () => {
    const server = await cluster([
      cronJob({
        status: {
          recentRuns: [
            entry(SLOT, "Created", "Scheduled", {
              job: JOB,
              decidedAt: at(SLOT, 2),
              outcome: { result: "Complete", finishedAt: at(SLOT, 14) },
            }),
          ],
        },
      }),
      job(JOB, SLOT, { state: "complete", start: at(SLOT, 2), end: at(SLOT, 14) }),
    ]);
    const r = await why(server);
    note(r.d);
    assert.equal(r.code, 0, r.text);
    assert.equal(r.d.status, "healthy");
    assert.equal(r.d.verdict, `ran at ${SLOT_TEXT}: Job ${JOB} (created 2 s after the slot), Complete in 12s`);
    assert.deepEqual(r.d.next, {
      utc: "2026-11-26T02:00:00Z",
      local: "2026-11-26T03:00:00+01:00",
      text: "2026-11-26 03:00 Europe/Berlin (2026-11-26T02:00:00Z)",
    });
    assert.match(r.text, /^Next: 2026-11-26 03:00 Europe\/Berlin \(2026-11-26T02:00:00Z\)$/m);
    assert.deepEqual(r.d.also, []);
    assert.deepEqual(r.d.unreadable, []);
  });
});

describe("kubectl cron why NAME: the CronJob's own state", () => {
  it("suspended: names the manager and the time that set spec.suspend (managedFields)", async () => {
    const server = await cluster([
      cronJob({
        spec: { suspend: true },
        status: { lastScheduleTime: "2026-11-20T02:00:00Z" },
        meta: {
          managedFields: [
            {
              manager: "kubectl-client-side-apply",
              operation: "Update",
              apiVersion: API_VERSION,
              time: "2026-11-01T00:00:00Z",
              fieldsType: "FieldsV1",
              fieldsV1: { "f:spec": { "f:schedule": {}, "f:timeZone": {} } },
            },
            {
              manager: "kubectl-cron",
              operation: "Update",
              apiVersion: API_VERSION,
              time: "2026-11-20T08:15:00Z",
              fieldsType: "FieldsV1",
              fieldsV1: { "f:spec": { "f:suspend": {} } },
            },
            {
              manager: "helm",
              operation: "Update",
              apiVersion: API_VERSION,
              time: "2026-11-22T10:00:00Z",
              fieldsType: "FieldsV1",
              fieldsV1: { "f:metadata": { "f:labels": { "f:team": {} } } },
            },
          ],
        },
      }),
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "suspended", {
      verdict: [`did not run at ${SLOT_TEXT}`, "suspended", "kubectl-cron", "2026-11-20T08:15:00Z"],
      evidence: ["spec.suspend: true", "kubectl-cron (Update) at 2026-11-20T08:15:00Z"],
      fix: [`kubectl cron resume ${NAME} -n ${NS}`],
    });
    assert.match(r.d.next?.blocked ?? "", /suspended/);
  });

  it("stopped after failures: when, after how many, and the failed Jobs' reasons", async () => {
    const failed = (slot: string, job: string) =>
      entry(slot, "Created", "Scheduled", {
        job,
        outcome: {
          result: "Failed",
          reason: "BackoffLimitExceeded",
          message: "Job has reached the specified backoff limit",
          finishedAt: at(slot, 300),
        },
      });
    const server = await cluster([
      cronJob({
        spec: { stopAfterConsecutiveFailures: 3 },
        status: {
          lastScheduleTime: PREV_SLOT,
          stopped: { time: at(PREV_SLOT, 301), failures: 3, generation: 1 },
          recentRuns: [
            entry(SLOT, "Stopped", "StoppedAfterFailures", {
              message: "scheduling stopped after 3 failed runs in a row",
            }),
            failed(PREV_SLOT, PREV_JOB),
            failed("2026-11-23T02:00:00Z", "backup-1795399200"),
            failed("2026-11-22T02:00:00Z", "backup-1795312800"),
          ],
        },
      }),
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "stopped-after-failures", {
      verdict: [
        `did not run at ${SLOT_TEXT}`,
        `stopped at ${at(PREV_SLOT, 301)}`,
        "after 3 failed runs in a row",
        "stopAfterConsecutiveFailures 3",
      ],
      evidence: ["status.stopped", `Job ${PREV_JOB} failed: BackoffLimitExceeded`, "Job backup-1795312800 failed"],
      fix: [`kubectl cron resume ${NAME} -n ${NS}`],
    });
  });

  it("invalid schedule stored past admission: Available=False InvalidSchedule, with the field's message", async () => {
    const message = 'spec.schedule: Invalid value: "0 3 * * 8": day-of-week: 8 is out of range 0-7';
    const server = await cluster([
      cronJob({
        spec: { schedule: "0 3 * * 8" },
        status: {
          conditions: [
            {
              type: "Available",
              status: "False",
              reason: "InvalidSchedule",
              message,
              lastTransitionTime: "2026-11-01T00:00:00Z",
            },
          ],
        },
      }),
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "invalid-schedule", {
      verdict: ["never runs", message],
      evidence: ['spec.schedule: "0 3 * * 8"', `condition Available=False InvalidSchedule: ${message}`],
      fix: ["spec.schedule"],
    });
  });

  it("unknown time zone stored past admission: Available=False UnknownTimeZone", async () => {
    const message = 'spec.timeZone: Invalid value: "Europe/Berlim": unknown time zone';
    const server = await cluster([
      cronJob({
        spec: { timeZone: "Europe/Berlim" },
        status: {
          conditions: [
            {
              type: "Available",
              status: "False",
              reason: "UnknownTimeZone",
              message,
              lastTransitionTime: "2026-11-01T00:00:00Z",
            },
          ],
        },
      }),
    ]);
    const r = await why(server);
    expectCause(r, "invalid-schedule", {
      verdict: ["never runs", message],
      evidence: ['spec.timeZone: "Europe/Berlim"', `condition Available=False UnknownTimeZone: ${message}`],
      fix: ["spec.timeZone"],
    });
  });

  it("--slot at a time it does not fire: the nearest slots in its zone and in UTC", async () => {
    const server = await cluster([cronJob()]);
    const r = await why(server, "--slot", "2026-11-25T04:00");
    note(r.d);
    expectCause(r, "not-a-slot", {
      verdict: [
        "2026-11-25 04:00 Europe/Berlin (2026-11-25T03:00:00Z) is not a time this CronJob runs",
        `the nearest slots are ${SLOT_TEXT} and 2026-11-26 03:00 Europe/Berlin (2026-11-26T02:00:00Z)`,
      ],
      evidence: ["schedule: 0 3 * * * in Europe/Berlin", "slot 2026-11-25T03:00:00+01:00 (2026-11-25T02:00:00Z)"],
      fix: [`kubectl cron next ${NAME} -n ${NS}`],
    });
  });

  it("--slot given as a wall-clock time is read in the CronJob's zone (03:00 in Berlin is 02:00Z)", async () => {
    const server = await cluster([
      cronJob({ status: { recentRuns: [entry(SLOT, "Skipped", "MissedRunPolicySkip")] } }),
    ]);
    for (const slot of ["2026-11-25T03:00", "2026-11-25 03:00", "2026-11-25T02:00:00Z", "2026-11-25T03:00:00+01:00"]) {
      const r = await why(server, `--slot=${slot}`);
      assert.equal(r.d.slot?.utc, SLOT, slot);
      assert.equal(r.d.slot?.local, "2026-11-25T03:00:00+01:00", slot);
      assert.equal(r.d.cause, "policy-skipped", slot);
      // The entry's reason says which policy decided (the spec has changed since: unset is RunLatest, which skips nothing).
      assert.match(r.d.verdict, /missedRunPolicy Skip runs only the announced time/, slot);
      assert.ok(r.d.evidence.includes("spec.missedRunPolicy is RunLatest now (changed since the decision)"), slot);
    }
    const bad = await run(server, ["why", NAME, "--slot", "tomorrow"]);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--slot: want an RFC 3339 time .* got "tomorrow"/);
  });

  it("--slot before the CronJob's creation", async () => {
    const server = await cluster([cronJob()]);
    const r = await why(server, "--slot", "2026-10-30T03:00");
    note(r.d);
    expectCause(r, "before-creation", {
      verdict: [
        "did not run at 2026-10-30 03:00 Europe/Berlin (2026-10-30T02:00:00Z)",
        "created later, at 2026-11-01T00:00:00Z",
      ],
      evidence: ["metadata.creationTimestamp: 2026-11-01T00:00:00Z"],
      fix: [`kubectl cron backfill ${NAME} -n ${NS} --from=2026-10-30T02:00:00Z --to=2026-10-30T02:00:00Z`],
    });
  });
});

describe("kubectl cron why NAME: the operator's decisions (status.recentRuns)", () => {
  it("missed past startingDeadlineSeconds because the leader changed after the slot", async () => {
    const op = operator();
    const lease = structuredClone(op.lease) as KubeObject & { spec: Record<string, unknown> };
    lease.spec.acquireTime = "2026-11-25T02:07:20.000000Z";
    lease.spec.holderIdentity = "cronjob-operator-controller-manager-7d9f-fghij_77aa";
    lease.spec.leaseTransitions = 4;
    const server = await cluster(
      [
        cronJob({
          spec: { startingDeadlineSeconds: 60 },
          status: {
            lastScheduleTime: PREV_SLOT,
            lastMissedTime: SLOT,
            recentRuns: [
              entry(SLOT, "Missed", "StartingDeadlineExceeded", {
                decidedAt: "2026-11-25T02:07:31Z",
                message: "missed: reached 7m31s after the slot, past startingDeadlineSeconds 60",
              }),
              entry(PREV_SLOT, "Created", "Scheduled", {
                job: PREV_JOB,
                outcome: { result: "Complete", finishedAt: at(PREV_SLOT, 20) },
              }),
            ],
          },
        }),
      ],
      { lease },
    );
    const r = await why(server);
    note(r.d);
    expectCause(r, "deadline-missed", {
      verdict: [
        `did not run at ${SLOT_TEXT}`,
        "7m31s late",
        "startingDeadlineSeconds 60",
        "no replica led from before the slot until 2026-11-25T02:07:20Z, when cronjob-operator-controller-manager-7d9f-fghij_77aa took the Lease",
      ],
      evidence: [
        "Missed (StartingDeadlineExceeded)",
        `Lease ${OPERATOR_NS}/${LEASE}: cronjob-operator-controller-manager-7d9f-fghij_77aa acquired it at 2026-11-25T02:07:20Z, after the slot; 4 leader changes in all`,
        "The Lease shows only its newest acquisition",
      ],
      fix: ["startingDeadlineSeconds", `kubectl cron backfill ${NAME} -n ${NS} --from=${SLOT} --to=${SLOT}`],
    });
  });

  it("a slot missed, then backfilled: its own entry is the schedule's decision, not the backfill's (slotRank)", async () => {
    const backfilled = `backup-b${Date.parse(SLOT) / 1000}`;
    const server = await cluster([
      cronJob({
        spec: { startingDeadlineSeconds: 60 },
        status: {
          lastScheduleTime: PREV_SLOT,
          lastMissedTime: SLOT,
          // Newest first: the backfill's run of the slot, decided after the schedule missed it.
          recentRuns: [
            entry(SLOT, "Created", "Backfill", {
              trigger: "Backfill",
              request: "bf-1",
              job: backfilled,
              decidedAt: at(SLOT, 3600),
              outcome: { result: "Complete", finishedAt: at(SLOT, 3620) },
            }),
            entry(SLOT, "Missed", "StartingDeadlineExceeded", {
              decidedAt: "2026-11-25T02:07:31Z",
              message: "missed: reached 7m31s after the slot, past startingDeadlineSeconds 60",
            }),
          ],
        },
      }),
    ]);
    const r = await why(server, `--slot=${SLOT}`);
    note(r.d);
    assert.equal(r.d.slot?.utc, SLOT, r.text);
    assert.equal(r.d.request, undefined, `the slot's own decision, not the backfill request's: ${r.text}`);
    assert.match(r.d.evidence.join("\n"), /Missed \(StartingDeadlineExceeded\)/, r.text);
  });

  it("missed because startingDeadlineSeconds is shorter than the observed lag (40-50 s, deadline 30)", async () => {
    const created = (slot: string, lag: number) =>
      entry(slot, "Created", "Scheduled", {
        job: `backup-${Date.parse(slot) / 1000}`,
        decidedAt: at(slot, lag),
        outcome: { result: "Complete", finishedAt: at(slot, lag + 12) },
      });
    const server = await cluster([
      cronJob({
        spec: { startingDeadlineSeconds: 30 },
        status: {
          lastScheduleTime: PREV_SLOT,
          recentRuns: [
            entry(SLOT, "Missed", "StartingDeadlineExceeded", { decidedAt: at(SLOT, 47) }),
            created(PREV_SLOT, 41),
            created("2026-11-23T02:00:00Z", 50),
            created("2026-11-22T02:00:00Z", 44),
          ],
        },
      }),
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "deadline-shorter-than-lag", {
      verdict: [`did not run at ${SLOT_TEXT}`, "startingDeadlineSeconds 30", "41, 50, 44 s"],
      evidence: ["Missed (StartingDeadlineExceeded)", "47s after the slot"],
      fix: ["Raise `startingDeadlineSeconds`"],
    });
  });
});

/** The run-now Job of the Forbid scene: started 9h12m before NOW, hung in CrashLoopBackOff for hours. */
const HUNG_REQUEST = "2026-11-25T01:59:30Z";
const HUNG_SPEC = {
  backoffLimit: 600,
  template: { spec: { restartPolicy: "OnFailure", containers: [{ name: "backup", image: "backup:1" }] } },
};
function hungJob(name: string): Job {
  const j = batchJob({
    name,
    namespace: NS,
    owner: { name: NAME, uid: UID },
    state: "active",
    start: "2026-11-25T01:59:31Z",
    spec: HUNG_SPEC,
  });
  j.metadata!.creationTimestamp = "2026-11-25T01:59:30Z";
  return j;
}
const crashLooping = (name: string, jobName: string, restarts: number) =>
  pod(name, jobName, {
    phase: "Running",
    created: "2026-11-25T01:59:31Z",
    conditions: [{ type: "PodScheduled", status: "True" }],
    containers: [
      {
        restartCount: restarts,
        state: { waiting: { reason: "CrashLoopBackOff", message: "back-off 5m0s restarting failed container=backup" } },
        lastState: { terminated: { reason: "Error", exitCode: 1, finishedAt: at(NOW.toISOString(), -200) } },
      },
    ],
  });

describe("kubectl cron why NAME: held, skipped, refused", () => {
  it("Forbid held behind a Job running for hours (no activeDeadlineSeconds, backoffLimit 600, CrashLoopBackOff)", async () => {
    const blocker = "backup-m1f2e3d4";
    const server = await cluster([
      cronJob({
        status: {
          lastScheduleTime: PREV_SLOT,
          recentRuns: [
            entry(SLOT, "Held", "ConcurrencyPolicyForbid", {
              blockedBy: blocker,
              message: `not started: concurrencyPolicy Forbid and Job ${blocker} still running`,
            }),
            {
              trigger: "RunNow",
              request: HUNG_REQUEST,
              decision: "Created",
              reason: "RunNowRequested",
              decidedAt: "2026-11-25T01:59:30Z",
              job: blocker,
            },
          ],
        },
      }),
      hungJob(blocker),
      crashLooping(`${blocker}-x7k2p`, blocker, 87),
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "forbid-held", {
      verdict: [
        `did not run at ${SLOT_TEXT}: concurrencyPolicy Forbid and Job ${blocker} has been running for 9h12m (activeDeadlineSeconds unset, backoffLimit 600, its Pods in CrashLoopBackOff, 87 restarts); it will not run until that Job ends`,
      ],
      evidence: [
        `behind Job ${blocker}`,
        `Job ${blocker}: started 2026-11-25T01:59:31Z, activeDeadlineSeconds unset, backoffLimit 600`,
        `Pod ${blocker}-x7k2p: Running; backup waiting: CrashLoopBackOff`,
        "restarted 87 times (last: Error, exit code 1)",
      ],
      fix: [`kubectl delete job ${blocker} -n ${NS}`, "activeDeadlineSeconds"],
    });
    assert.match(
      r.d.next?.blocked ?? "",
      new RegExp(`concurrencyPolicy Forbid: it will not run while ${blocker} runs`),
    );
  });

  it("several schedules (API v2): a held slot names the schedule it came from and shows it in that schedule's zone", async () => {
    const blocker = "backup-m1f2e3d4";
    // 03:00 in Berlin, and 04:30 in New York (09:30Z): the latest slot is New York's.
    const nySlot = "2026-11-25T09:30:00Z";
    const server = await cluster([
      cronJob({
        meta: {
          annotations: {
            [`${GROUP}/more-schedules`]: JSON.stringify([{ schedule: "30 4 * * *", timeZone: "America/New_York" }]),
          },
        },
        status: {
          lastScheduleTime: SLOT,
          recentRuns: [
            entry(nySlot, "Held", "ConcurrencyPolicyForbid", { blockedBy: blocker }),
            entry(SLOT, "Created", "Scheduled", { job: blocker, decidedAt: "2026-11-25T01:59:30Z" }),
          ],
        },
      }),
      hungJob(blocker),
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "forbid-held", {
      verdict: [
        `did not run at 2026-11-25 04:30 America/New_York (2026-11-25T09:30:00Z) from schedule "30 4 * * *" (America/New_York): concurrencyPolicy Forbid and Job ${blocker}`,
      ],
      evidence: [`behind Job ${blocker}`],
      fix: [`kubectl delete job ${blocker} -n ${NS}`],
    });
    assert.deepEqual(r.d.slot, {
      utc: nySlot,
      local: "2026-11-25T04:30:00-05:00",
      timeZone: "America/New_York",
      schedules: [{ schedule: "30 4 * * *", timeZone: "America/New_York" }],
    });
    // The next slot is Berlin's, named and shown in Berlin.
    assert.match(
      r.d.next?.text ?? "",
      /^2026-11-26 03:00 Europe\/Berlin \(2026-11-26T02:00:00Z\) from schedule "0 3 \* \* \*" \(Europe\/Berlin\)$/,
    );
  });

  it("a run-now request waiting behind a running Job is an `also` finding (run-now-waiting)", async () => {
    const server = await cluster([
      cronJob({
        meta: { annotations: { [RUN_NOW_ANNOTATION]: "2026-11-25T11:00:00Z" } },
        status: {
          lastRunNowRequest: "2026-11-20T09:00:00Z",
          recentRuns: [entry(SLOT, "Created", "Scheduled", { job: JOB })],
        },
      }),
      job(JOB, SLOT, { state: "active", start: at(SLOT, 3) }),
      pod(`${JOB}-abcde`, JOB, {
        phase: "Running",
        conditions: [
          { type: "PodScheduled", status: "True" },
          { type: "Ready", status: "True" },
        ],
        containers: [{ ready: true, state: { running: { startedAt: at(SLOT, 5) } } }],
      }),
    ]);
    const r = await why(server);
    note(r.d);
    assert.equal(r.d.status, "healthy", r.text);
    assert.match(
      r.d.verdict,
      new RegExp(`^ran at .*: Job ${JOB} \\(created 2 s after the slot\\) has been running for 9h11m`),
    );
    const waiting = r.d.also.find((a) => a.cause === "run-now-waiting");
    assert.ok(waiting, r.text);
    assert.match(
      waiting.summary,
      new RegExp(`run-now request "2026-11-25T11:00:00Z" waits: ${JOB} still running \\(concurrencyPolicy Forbid\\)`),
    );
    assert.match(
      waiting.evidence.join("\n"),
      /status.lastRunNowRequest: 2026-11-20T09:00:00Z; its Job would be backup-m[0-9a-f]{8}/,
    );
    assert.deepEqual(waiting.fix, causeOf("run-now-waiting").fix({ ...PLACEHOLDERS, namespace: NS, job: JOB }));
    assert.equal(r.code, 1, "a finding besides a healthy verdict needs attention");
    assert.match(r.text, /^Also: run-now request .* \[run-now-waiting\]$/m);
  });

  it("missedRunPolicy Skip chose not to run the slot", async () => {
    const server = await cluster([
      cronJob({
        spec: { missedRunPolicy: "Skip" },
        status: {
          lastScheduleTime: PREV_SLOT,
          recentRuns: [
            entry(SLOT, "Skipped", "MissedRunPolicySkip", {
              decidedAt: "2026-11-25T02:40:00Z",
              message: "not run: missedRunPolicy Skip runs only the announced time",
            }),
          ],
        },
      }),
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "policy-skipped", {
      verdict: [`did not run at ${SLOT_TEXT}`, "missedRunPolicy Skip", "MissedRunPolicySkip"],
      evidence: ["Skipped (MissedRunPolicySkip)", "decided 2026-11-25T02:40:00Z"],
      fix: ["spec.missedRunPolicy", `kubectl cron backfill ${NAME} -n ${NS} --from=${SLOT} --to=${SLOT}`],
    });
  });

  it("create refused by a ResourceQuota: the API server's message, and the quota's used/hard", async () => {
    const message = `jobs.batch "${JOB}" is forbidden: exceeded quota: compute, requested: count/jobs.batch=1, used: count/jobs.batch=10, limited: count/jobs.batch=10`;
    const server = await cluster([
      cronJob({
        status: { lastScheduleTime: PREV_SLOT, recentRuns: [entry(SLOT, "Refused", "Forbidden", { message })] },
      }),
      {
        apiVersion: "v1",
        kind: "ResourceQuota",
        metadata: { name: "compute", namespace: NS },
        spec: { hard: { "count/jobs.batch": "10", "requests.cpu": "4" } },
        status: {
          hard: { "count/jobs.batch": "10", "requests.cpu": "4" },
          used: { "count/jobs.batch": "10", "requests.cpu": "1500m" },
        },
      },
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "create-refused-quota", {
      verdict: [`did not run at ${SLOT_TEXT}`, message],
      evidence: ["Refused (Forbidden)", "ResourceQuota compute: count/jobs.batch 10/10, requests.cpu 1500m/4"],
      fix: ["Raise the quota"],
    });
  });

  it("create refused by an admission webhook: the webhook's denial", async () => {
    const message = `admission webhook "validate.kyverno.svc-fail" denied the request: policy Job/${NS}/${JOB} for resource violation: require-team-label: the label team is required`;
    const server = await cluster([
      cronJob({
        status: { lastScheduleTime: PREV_SLOT, recentRuns: [entry(SLOT, "Refused", "BadRequest", { message })] },
      }),
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "create-refused-admission", {
      verdict: [
        `did not run at ${SLOT_TEXT}`,
        'admission webhook "validate.kyverno.svc-fail" denied the request',
        "require-team-label",
      ],
      evidence: ["Refused (BadRequest)"],
      fix: ["Change the Job template to satisfy the policy"],
    });
  });

  it("create refused: a Job that is not this CronJob's holds the slot's name", async () => {
    const message = `a Job named ${JOB} already exists and is not controlled by this CronJob`;
    const foreign = batchJob({ name: JOB, namespace: NS, state: "complete", start: at(SLOT, -60), end: at(SLOT, -30) });
    foreign.metadata!.creationTimestamp = at(SLOT, -60);
    const server = await cluster([
      cronJob({
        status: { lastScheduleTime: PREV_SLOT, recentRuns: [entry(SLOT, "Refused", "AlreadyExists", { message })] },
      }),
      foreign,
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "create-refused-name-taken", {
      verdict: [`did not run at ${SLOT_TEXT}`, message],
      evidence: ["Refused (AlreadyExists)", `Job ${JOB}: no controller`],
      fix: ["Delete or rename the foreign Job"],
    });
  });

  it("create refused for another reason: the API server's reason and message", async () => {
    const message = `Job.batch "${JOB}" is invalid: spec.template.spec.containers[0].image: Required value`;
    const server = await cluster([
      cronJob({
        status: { lastScheduleTime: PREV_SLOT, recentRuns: [entry(SLOT, "Refused", "Invalid", { message })] },
      }),
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "create-refused", {
      verdict: [`did not run at ${SLOT_TEXT}`, "(Invalid)", message],
      evidence: ["Refused (Invalid)"],
      fix: ["Fix what the message names", `kubectl cron run ${NAME} -n ${NS}`],
    });
  });
});

// --- fleets: concurrency groups, runs that never started, queued Jobs ---------------------------------------------

const GROUP_NAME = "backups";
/** The slots of the group's other CronJobs (their schedules do not matter here: only their Jobs and records do). */
const A_SLOT = "2026-11-25T01:00:00Z";
const B_SLOT = "2026-11-25T01:30:00Z";
const C_SLOT = "2026-11-25T01:45:00Z";

/** A ConcurrencyGroup of the namespace. */
function concurrencyGroup(name: string, limit: number): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: "ConcurrencyGroup",
    metadata: { name, namespace: NS, creationTimestamp: "2026-11-01T00:00:00Z" },
    spec: { limit },
  } as KubeObject;
}

/** A Job of a CronJob of the group, labelled as the operator labels it (jobForSlot). */
function groupJob(cronJobName: string, slot: string, state: "active" | "complete" = "active"): Job {
  const j = batchJob({
    name: jobNameFor(cronJobName, new Date(slot)),
    namespace: NS,
    owner: { name: cronJobName, uid: `uid-${cronJobName}` },
    slot,
    timeZone: ZONE,
    labels: { [CRONJOB_NAME_LABEL]: cronJobName, [CONCURRENCY_GROUP_LABEL]: GROUP_NAME },
    state,
    start: at(slot, 3),
    ...(state === "complete" ? { end: at(slot, 60) } : {}),
  });
  j.metadata!.creationTimestamp = at(slot, 2);
  return j;
}

/** Another CronJob of the group; `held`: its slot waiting for a place (its record's newest Held entry). */
function member(name: string, held?: string): KubeObject {
  return cronJob({
    meta: { name, uid: `uid-${name}` },
    spec: { concurrencyGroup: GROUP_NAME },
    status: {
      lastScheduleTime: PREV_SLOT,
      ...(held ? { recentRuns: [entry(held, "Held", "ConcurrencyGroupFull")] } : {}),
    },
  });
}

/** The CronJob asked about, in the group, its slot held for `reason`. */
const heldInGroup = (reason: string, o: Partial<RecentRun> = {}, group = GROUP_NAME) =>
  cronJob({
    spec: { concurrencyGroup: group },
    status: { lastScheduleTime: PREV_SLOT, recentRuns: [entry(SLOT, "Held", reason, o)] },
  });

describe("kubectl cron why NAME: concurrency groups", () => {
  it("group full: the slot waits for a place; the Jobs holding the places, of other CronJobs, are named", async () => {
    const a = groupJob("db-a", A_SLOT);
    const b = groupJob("db-b", B_SLOT);
    const aName = a.metadata!.name!;
    const bName = b.metadata!.name!;
    const server = await cluster([
      concurrencyGroup(GROUP_NAME, 2),
      heldInGroup("ConcurrencyGroupFull", {
        blockedBy: aName,
        message: `held: group ${GROUP_NAME} is at 2/2: Jobs ${aName}, ${bName}`,
      }),
      member("db-a"),
      member("db-b"),
      member("db-c", C_SLOT),
      a,
      b,
      // Finished: it holds no place.
      groupJob("db-c", PREV_SLOT, "complete"),
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "group-full", {
      verdict: [`did not run at ${SLOT_TEXT}: it waits for a place in group ${GROUP_NAME}, which is at 2/2`],
      evidence: [
        `held: group ${GROUP_NAME} is at 2/2`,
        `ConcurrencyGroup ${NS}/${GROUP_NAME}: limit 2; 2 Jobs of its CronJobs hold its places (labelled ${CONCURRENCY_GROUP_LABEL}=${GROUP_NAME}): ${aName} (CronJob db-a, running for 10h11m), ${bName} (CronJob db-b, running for 9h41m)`,
        `2 runs wait for a place, oldest first: db-c since ${C_SLOT}, ${NAME} since ${SLOT}`,
        `Job ${aName}: started ${at(A_SLOT, 3).replace(".000Z", "Z")}`,
      ],
      fix: [
        "Wait: it starts when a Job of the group ends",
        `\`kubectl cron groups ${GROUP_NAME} -n ${NS}\``,
        `\`kubectl patch concurrencygroup ${GROUP_NAME} -n ${NS} --type merge -p '{"spec":{"limit":3}}'\``,
        `Look at the Job holding a place, ${aName} of CronJob db-a: \`kubectl cron why db-a -n ${NS}\``,
      ],
    });
    assert.equal(r.d.next?.blocked, `group ${GROUP_NAME} is at 2/2: it waits for a place`);
    // One list of the namespace's groups and one of its CronJobs (the members); the Jobs are the namespace's list.
    const reads = server.requests.filter((q) => q.method === "GET").map((q) => q.path);
    assert.equal(reads.filter((p) => p === `/apis/${API_VERSION}/namespaces/${NS}/concurrencygroups`).length, 2);
    assert.equal(reads.filter((p) => p === `/apis/${API_VERSION}/namespaces/${NS}/cronjobs`).length, 2);
  });

  it("older runs of the group wait first: the group has a place, the members ahead are named", async () => {
    const server = await cluster([
      concurrencyGroup(GROUP_NAME, 2),
      heldInGroup("ConcurrencyGroupQueue", {
        message: `held: group ${GROUP_NAME} is at 1/2 and older runs of db-c wait for the next place first`,
      }),
      member("db-a"),
      member("db-c", C_SLOT),
      // Held after this slot: not ahead of it.
      member("db-d", at(SLOT, 60)),
      groupJob("db-a", A_SLOT),
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "group-queue", {
      verdict: [
        `did not run at ${SLOT_TEXT}: group ${GROUP_NAME} is at 1/2 and older runs of db-c wait for its next place first`,
      ],
      evidence: [`3 runs wait for a place, oldest first: db-c since ${C_SLOT}, ${NAME} since ${SLOT}, db-d since`],
      fix: ["Wait: the group's runs take its places oldest first", `'{"spec":{"limit":3}}'`],
    });
    assert.equal(r.d.next?.blocked, undefined, "the group has a place for the next slot");
  });

  it("no such group: the slot waits until it exists; the fix creates it (kubectl apply) or names another", async () => {
    const server = await cluster([
      cronJob({
        spec: { concurrencyGroup: "nosuch" },
        status: {
          lastScheduleTime: PREV_SLOT,
          recentRuns: [entry(SLOT, "Held", "ConcurrencyGroupNotFound")],
          conditions: [
            {
              type: "Degraded",
              status: "True",
              reason: "ConcurrencyGroupNotFound",
              message: `spec.concurrencyGroup names nosuch, which is not a ConcurrencyGroup of namespace ${NS}: runs wait until it exists`,
              lastTransitionTime: at(SLOT, 2),
            },
          ],
        },
      }),
      concurrencyGroup(GROUP_NAME, 2),
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "group-not-found", {
      verdict: [
        `did not run at ${SLOT_TEXT}: spec.concurrencyGroup names nosuch, which is not a ConcurrencyGroup of namespace ${NS}: its runs wait until it exists`,
      ],
      evidence: ["Held (ConcurrencyGroupNotFound)", `no ConcurrencyGroup nosuch in namespace ${NS}`],
      fix: [
        `echo '{"apiVersion":"${API_VERSION}","kind":"ConcurrencyGroup","metadata":{"name":"nosuch","namespace":"${NS}"},"spec":{"limit":1}}' | kubectl apply -f -`,
        `kubectl get concurrencygroups -n ${NS}`,
      ],
    });
    assert.deepEqual(r.d.also, [], "the finding is the verdict, not said twice");
    assert.equal(r.d.next?.blocked, "ConcurrencyGroup nosuch does not exist: it will not run until it does");
  });

  it("a member's held run whose Job exists runs, it does not wait (why, why -A, list): the record is written later", async () => {
    // db-c's 01:45 slot was held, and its Job has been created since; its record still says Held (the status write
    // comes up to --status-write-delay later). The group is at 3/2: db-c's Job holds a place, its run waits for none.
    const a = groupJob("db-a", A_SLOT);
    const b = groupJob("db-b", B_SLOT);
    const c = groupJob("db-c", C_SLOT);
    const server = await cluster([
      concurrencyGroup(GROUP_NAME, 2),
      heldInGroup("ConcurrencyGroupFull", { blockedBy: a.metadata!.name! }),
      member("db-a"),
      member("db-b"),
      member("db-c", C_SLOT),
      a,
      b,
      c,
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "group-full", {
      verdict: [`did not run at ${SLOT_TEXT}: it waits for a place in group ${GROUP_NAME}, which is at 3/2`],
      evidence: [
        `(CronJob db-c, running for 9h26m)`,
        `; 1 run waits for a place, oldest first: ${NAME} since ${SLOT}`,
        `the run of ${NAME} is 1 of 1 in the group's queue: it takes the next place`,
      ],
      fix: ["Wait: it starts when a Job of the group ends"],
    });
    assert.ok(!r.d.evidence.some((e) => e.includes("db-c since")), r.text);
    const all = await run(server, ["why", "-A"]);
    assert.equal(all.code, 1, all.err);
    // (The other members have no record of 03:00: each is a line of its own.)
    assert.deepEqual(
      all.out.split("\n").filter((l) => l.startsWith("(group)")),
      [`(group)\tgroup-full\tgroup ${GROUP_NAME} (${NS}) full at 3/2: 1 CronJob waiting (${NAME})`],
    );
    const listed = await run(server, ["list"]);
    assert.equal(listed.code, 0, listed.err);
    assert.deepEqual(listed.err.trimEnd().split("\n"), [
      `group ${GROUP_NAME} (${NS}) full at 3/2: 1 CronJob waiting (${NAME})`,
    ]);
  });

  it("a run-now request waiting in a full group: the group, the Jobs holding its places, its place in the queue (exit 1)", async () => {
    // `kubectl cron run` on a CronJob created this morning (no slot yet) in a group at 2/2, behind db-c's older slot.
    const a = groupJob("db-a", A_SLOT);
    const b = groupJob("db-b", B_SLOT);
    const request = "2026-11-25T11:05:00Z-9b5dad";
    const server = await cluster([
      concurrencyGroup(GROUP_NAME, 2),
      cronJob({
        meta: { creationTimestamp: "2026-11-25T10:00:00Z", annotations: { [RUN_NOW_ANNOTATION]: request } },
        spec: { concurrencyGroup: GROUP_NAME, concurrencyPolicy: "Allow" },
        status: {
          lastScheduleTime: undefined,
          recentRuns: [
            {
              trigger: "RunNow",
              request,
              decision: "Held",
              reason: "ConcurrencyGroupFull",
              blockedBy: a.metadata!.name!,
              message: `held: group ${GROUP_NAME} is at 2/2: Jobs ${a.metadata!.name!}, ${b.metadata!.name!}`,
              decidedAt: "2026-11-25T11:05:01Z",
            },
          ],
        },
      }),
      member("db-a"),
      member("db-b"),
      member("db-c", C_SLOT),
      a,
      b,
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "group-full", {
      verdict: [
        `run-now request "${request}" has not run: it waits for a place in group ${GROUP_NAME}, which is at 2/2`,
      ],
      evidence: [
        `status.recentRuns: ${request} RunNow Held (ConcurrencyGroupFull)`,
        `2 Jobs of its CronJobs hold its places (labelled ${CONCURRENCY_GROUP_LABEL}=${GROUP_NAME}): ${a.metadata!.name!} (CronJob db-a, running for 10h11m)`,
        `2 runs wait for a place, oldest first: db-c since ${C_SLOT}, ${NAME} since 2026-11-25T11:05:01Z`,
        `the run of ${NAME} is 2 of 2 in the group's queue, behind db-c`,
        `Job ${a.metadata!.name!}: started ${at(A_SLOT, 3).replace(".000Z", "Z")}`,
      ],
      fix: [
        "Wait: it starts when a Job of the group ends",
        `\`kubectl cron groups ${GROUP_NAME} -n ${NS}\``,
        `Look at the Job holding a place, ${a.metadata!.name!} of CronJob db-a`,
      ],
    });
    assert.deepEqual(r.d.request, { trigger: "RunNow", id: request });
    assert.equal(r.d.slot, undefined, "a run-now request has no slot");
    assert.ok(!r.d.fix.some((f) => f.includes("raise `startingDeadlineSeconds`")), "a request has no deadline");
    assert.equal(r.d.next?.blocked, `group ${GROUP_NAME} is at 2/2: it waits for a place`);
  });

  it("a suspended CronJob's backfill request waiting behind older runs of its group: said as its waiting slot", async () => {
    const server = await cluster([
      concurrencyGroup(GROUP_NAME, 2),
      cronJob({
        spec: { concurrencyGroup: GROUP_NAME, suspend: true },
        status: {
          lastScheduleTime: PREV_SLOT,
          recentRuns: [
            entry("2026-11-20T02:00:00Z", "Held", "ConcurrencyGroupQueue", {
              trigger: "Backfill",
              request: "bf-1",
              decidedAt: "2026-11-25T11:00:01Z",
            }),
          ],
        },
      }),
      member("db-a"),
      member("db-c", C_SLOT),
      groupJob("db-a", A_SLOT),
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "group-queue", {
      verdict: [
        `backfill "bf-1" for 2026-11-20 03:00 Europe/Berlin (2026-11-20T02:00:00Z) has not run: group ${GROUP_NAME} is at 1/2 and older runs of db-c wait for its next place first`,
      ],
      evidence: [`the run of ${NAME} is 2 of 2 in the group's queue, behind db-c`],
      fix: ["Wait: the group's runs take its places oldest first"],
    });
    assert.deepEqual(r.d.request, { trigger: "Backfill", id: "bf-1" });
    assert.equal(r.d.slot?.utc, "2026-11-20T02:00:00Z");
    // Asked about its slot, the suspension is still the answer.
    const slot = await why(server, `--slot=${SLOT}`);
    assert.equal(slot.d.cause, "suspended", slot.text);
  });
});

describe("kubectl cron why NAME: runs that never started, queued Jobs", () => {
  const ranAt = (o: Partial<RecentRun> = {}, spec: Record<string, unknown> = {}) =>
    cronJob({ spec, status: { recentRuns: [entry(SLOT, "Created", "Scheduled", { job: JOB, ...o })] } });
  const pull = 'container backup: ImagePullBackOff (Back-off pulling image "registry.example.com/backup:9")';
  /** The Job the operator ended (controllers/starts.ts) with `annotations`, failed at its lowered deadline. */
  const endedJob = (annotations: Record<string, string>) => {
    const ended = job(JOB, SLOT, { state: "failed", start: at(SLOT, 3), end: at(SLOT, 304) });
    ended.metadata!.annotations = { ...ended.metadata!.annotations, ...annotations };
    ended.spec = { ...ended.spec, activeDeadlineSeconds: 301 };
    ended.status!.conditions = ended.status!.conditions!.map((c) => ({ ...c, reason: "DeadlineExceeded" }));
    return ended;
  };

  it("ended for StartTimeout: the operator ended it; its Pods' words from the Job; the fix for an image", async () => {
    // As the operator writes it: what the Pods showed, as a code (ended-pods) and in words (ended-message).
    const message = pull;
    const ended = endedJob({
      [ENDED_REASON_ANNOTATION]: "StartTimeout",
      [ENDED_PODS_ANNOTATION]: "ImagePull",
      [ENDED_MESSAGE_ANNOTATION]: message,
    });
    const server = await cluster([
      ranAt(
        {
          outcome: { result: "Failed", reason: "StartTimeout", message, finishedAt: at(SLOT, 304), pods: "ImagePull" },
        },
        { startTimeoutSeconds: 300 },
      ),
      ended,
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "start-timeout", {
      verdict: [`ran at ${SLOT_TEXT} but its Pods never started within 300s: ${pull}; the operator ended it`],
      evidence: [
        `${ENDED_REASON_ANNOTATION}: StartTimeout; ${ENDED_PODS_ANNOTATION}: ImagePull; ${ENDED_MESSAGE_ANNOTATION}: ${message}`,
        `Job ${JOB}: Failed, DeadlineExceeded (the operator lowered its activeDeadlineSeconds to 301 to end it)`,
      ],
      fix: ["image name and tag", "raise `spec.startTimeoutSeconds`"],
    });
    assert.ok(!r.d.fix.some((x) => /No node fits|No Pod was created/.test(x)), r.text);
  });

  it("ended for StartTimeout by an earlier version (the limit in its message, no ended-pods): its words quoted whole, the general fix", async () => {
    const message = `its Pods did not start within spec.startTimeoutSeconds (300s): ${pull}`;
    const ended = endedJob({ [ENDED_REASON_ANNOTATION]: "StartTimeout", [ENDED_MESSAGE_ANNOTATION]: message });
    const server = await cluster([
      ranAt(
        { outcome: { result: "Failed", reason: "StartTimeout", message, finishedAt: at(SLOT, 304) } },
        { startTimeoutSeconds: 300 },
      ),
      ended,
    ]);
    const r = await why(server);
    note(r.d);
    // Still start-timeout, the limit from the spec; the Job's words are quoted as they are, never read.
    expectCause(r, "start-timeout", {
      verdict: [`ran at ${SLOT_TEXT} but its Pods never started within 300s: ${message}; the operator ended it`],
      evidence: [
        `${ENDED_REASON_ANNOTATION}: StartTimeout; ${ENDED_PODS_ANNOTATION}: (none); ${ENDED_MESSAGE_ANNOTATION}: ${message}`,
        `Job ${JOB}: Failed, DeadlineExceeded (the operator lowered its activeDeadlineSeconds to 301 to end it)`,
      ],
      fix: ["raise `spec.startTimeoutSeconds`"],
    });
    // Without the code, no fix for one kind of trouble: the general one only.
    assert.equal(r.d.fix.length, 1, r.text);
  });

  it("queued by Kueue: queued (suspended by Kueue, since when) instead of running; the fix looks at its Workload", async () => {
    const queued = job(JOB, SLOT);
    queued.metadata!.labels = { ...queued.metadata!.labels, [KUEUE_QUEUE_NAME_KEY]: "team-a" };
    queued.spec = { ...queued.spec, suspend: true };
    queued.status = {
      conditions: [
        { type: "Suspended", status: "True", reason: "JobSuspended", lastTransitionTime: at(SLOT, 2), message: "" },
      ],
    } as Job["status"];
    const server = await cluster([ranAt(), queued]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "job-queued", {
      verdict: [
        `ran at ${SLOT_TEXT}: Job ${JOB} is queued (suspended by Kueue (queue team-a), since ${at(SLOT, 2).slice(0, 19)}Z), not running`,
      ],
      evidence: [`Job ${JOB}: spec.suspend true, label ${KUEUE_QUEUE_NAME_KEY}=team-a`],
      fix: [`kubectl get workloads -n ${NS}`, `kubectl get job ${JOB} -n ${NS} -o yaml`],
    });
  });
});

describe("kubectl cron why NAME: the Job and its Pods", () => {
  const created = (o: Record<string, unknown> = {}) =>
    cronJob({ status: { recentRuns: [entry(SLOT, "Created", "Scheduled", { job: JOB, ...o })] } });

  it("Job active with no Pods, and a FailedCreate Event (PodSecurity): pods-not-created", async () => {
    const message = `Error creating: pods "${JOB}-x7k2p" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "backup" must set securityContext.allowPrivilegeEscalation=false)`;
    const server = await cluster([
      created(),
      job(JOB, SLOT),
      event("Job", JOB, "FailedCreate", message, { count: 23, last: "2026-11-25T11:05:00Z" }),
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "pods-not-created", {
      verdict: [`started at ${SLOT_TEXT}`, `its Job ${JOB} has no Pod 9h11m after its creation`],
      evidence: [`Event FailedCreate on Job ${JOB} (23×, last 2026-11-25T11:05:00Z): ${message}`],
      fix: ["Fix what the Event names"],
    });
  });

  it("Pod Pending, Unschedulable: the scheduler's message", async () => {
    const message =
      "0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.";
    const server = await cluster([
      created(),
      job(JOB, SLOT, { state: "active" }),
      pod(`${JOB}-q8w9e`, JOB, {
        phase: "Pending",
        conditions: [{ type: "PodScheduled", status: "False", reason: "Unschedulable", message }],
      }),
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "pods-unschedulable", {
      verdict: [`started at ${SLOT_TEXT}`, `its Pod ${JOB}-q8w9e is Pending: Unschedulable`],
      evidence: [`Pod ${JOB}-q8w9e: PodScheduled=False, Unschedulable: ${message}`],
      fix: ["capacity"],
    });
  });

  it("image pull error: ErrImagePull with the kubelet's message", async () => {
    const message =
      'rpc error: code = NotFound desc = failed to pull and unpack image "registry.example.com/backup:1.2.3": not found';
    const server = await cluster([
      created(),
      job(JOB, SLOT, { state: "active" }),
      pod(`${JOB}-p1o2i`, JOB, {
        phase: "Pending",
        conditions: [{ type: "PodScheduled", status: "True" }],
        containers: [{ state: { waiting: { reason: "ErrImagePull", message } } }],
      }),
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "image-pull", {
      verdict: [`started at ${SLOT_TEXT}`, `its Pod ${JOB}-p1o2i cannot pull its image (ErrImagePull)`],
      evidence: [`Pod ${JOB}-p1o2i container backup: ErrImagePull: ${message}`],
      fix: ["imagePullSecrets"],
    });
  });

  it("crash looping: restarts and the last exit code", async () => {
    const server = await cluster([
      created(),
      job(JOB, SLOT, { state: "active", start: at(SLOT, 3) }),
      pod(`${JOB}-c4r5t`, JOB, {
        phase: "Running",
        conditions: [{ type: "PodScheduled", status: "True" }],
        containers: [
          {
            restartCount: 14,
            state: { waiting: { reason: "CrashLoopBackOff", message: "back-off 5m0s restarting failed container" } },
            lastState: { terminated: { reason: "Error", exitCode: 2 } },
          },
        ],
      }),
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "crash-looping", {
      verdict: [
        `started at ${SLOT_TEXT}`,
        `its Pod ${JOB}-c4r5t keeps crashing (CrashLoopBackOff, 14 restarts, last exit code 2 Error)`,
      ],
      evidence: [
        `Pod ${JOB}-c4r5t: Running; backup waiting: CrashLoopBackOff`,
        "restarted 14 times (last: Error, exit code 2)",
      ],
      fix: [`kubectl logs ${JOB}-c4r5t -n ${NS} --previous`],
    });
  });

  it("Job failed with BackoffLimitExceeded and its Pod OOMKilled", async () => {
    const failedJob = job(JOB, SLOT, { spec: { backoffLimit: 0, template: HUNG_SPEC.template } });
    failedJob.status = {
      startTime: at(SLOT, 3),
      failed: 1,
      conditions: [
        {
          type: "FailureTarget",
          status: "True",
          reason: "BackoffLimitExceeded",
          message: "Job has reached the specified backoff limit",
          lastTransitionTime: at(SLOT, 95),
        },
        {
          type: "Failed",
          status: "True",
          reason: "BackoffLimitExceeded",
          message: "Job has reached the specified backoff limit",
          lastTransitionTime: at(SLOT, 95),
        },
      ],
    } as Job["status"];
    const server = await cluster([
      created({
        outcome: {
          result: "Failed",
          reason: "BackoffLimitExceeded",
          message: "Job has reached the specified backoff limit",
          finishedAt: at(SLOT, 95),
        },
      }),
      failedJob,
      pod(`${JOB}-m3m0r`, JOB, {
        phase: "Failed",
        containers: [{ state: { terminated: { reason: "OOMKilled", exitCode: 137, finishedAt: at(SLOT, 94) } } }],
      }),
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "job-failed", {
      verdict: [`ran at ${SLOT_TEXT} and failed`, `Job ${JOB} BackoffLimitExceeded, backup OOMKilled`],
      evidence: [
        `Job ${JOB}: Failed, BackoffLimitExceeded: Job has reached the specified backoff limit`,
        `Pod ${JOB}-m3m0r: Failed; backup terminated: OOMKilled, exit code 137`,
      ],
      fix: ["memory limit", `kubectl logs job/${JOB} -n ${NS}`],
    });
  });

  it("the Job is gone and no Event is left: the record's outcomes answer (asked hours later)", async () => {
    const server = await cluster([
      cronJob({
        status: {
          recentRuns: [
            entry(SLOT, "Created", "Scheduled", {
              job: JOB,
              outcome: {
                result: "Failed",
                reason: "DeadlineExceeded",
                message: "Job was active longer than specified deadline",
                finishedAt: at(SLOT, 3602),
              },
            }),
            entry(PREV_SLOT, "Created", "Scheduled", {
              job: PREV_JOB,
              decidedAt: at(PREV_SLOT, 1),
              outcome: { result: "Complete", finishedAt: at(PREV_SLOT, 13) },
            }),
          ],
        },
      }),
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "job-failed", {
      verdict: [
        `ran at ${SLOT_TEXT} and failed`,
        `Job ${JOB} DeadlineExceeded (Job was active longer than specified deadline)`,
      ],
      evidence: [
        `status.recentRuns: ${SLOT} Schedule Created (Scheduled), decided 2026-11-25T02:00:02Z, Job ${JOB}, ended Failed (DeadlineExceeded) at 2026-11-25T03:00:02Z`,
        `Job ${JOB} is gone`,
      ],
      fix: ["activeDeadlineSeconds"],
    });
    assert.ok(!server.requests.some((q) => q.path.endsWith(`/jobs/${JOB}`)), "no Job read by name");
    const prev = await why(server, "--slot", PREV_SLOT);
    assert.equal(prev.code, 0, prev.text);
    assert.equal(
      prev.d.verdict,
      `ran at 2026-11-24 03:00 Europe/Berlin (${PREV_SLOT}): Job ${PREV_JOB} (created 1 s after the slot), Complete in 12s`,
    );
    assert.match(prev.d.evidence[0] ?? "", /ended Complete at 2026-11-24T02:00:13/);
  });
});

describe("kubectl cron why NAME: the operator and the clocks", () => {
  /** The CronJob whose latest slot the operator has not decided about. */
  const undecided = () => cronJob({ status: { lastScheduleTime: PREV_SLOT, nextScheduleTime: SLOT } });

  it("operator down: no ready replica (and so no leader either)", async () => {
    const op = operator();
    const down = structuredClone(op.pod) as KubeObject & { status: Record<string, unknown> };
    down.status = {
      phase: "Running",
      conditions: [{ type: "Ready", status: "False", reason: "ContainersNotReady" }],
      containerStatuses: [
        { name: "manager", ready: false, restartCount: 31, state: { waiting: { reason: "CrashLoopBackOff" } } },
      ],
    };
    const lease = structuredClone(op.lease) as KubeObject & { spec: Record<string, unknown> };
    lease.spec.renewTime = "2026-11-25T01:41:12.000000Z";
    const server = await cluster([undecided()], { pod: down, lease });
    const r = await why(server);
    note(r.d);
    expectCause(r, "operator-down", {
      verdict: [`did not run at ${SLOT_TEXT}`, `the operator has no ready replica in namespace ${OPERATOR_NS}`],
      evidence: ["cronjob-operator-controller-manager-7d9f-abcde Running, not ready, 31 restarts"],
      fix: [`kubectl -n ${OPERATOR_NS} get deployment,pods -l ${OPERATOR_SELECTOR}`],
    });
    // The stale Lease is part of the same story, not a second finding.
    assert.ok(
      r.d.evidence.some((e) =>
        /holder cronjob-operator-controller-manager-7d9f-abcde_0c1d, renewed 2026-11-25T01:41:12Z \(9h30m ago\)/.test(
          e,
        ),
      ),
      r.text,
    );
    assert.deepEqual(r.d.also, [], r.text);
    assert.match(r.d.next?.blocked ?? "", /nothing runs until it is back/);
  });

  it("operator down: scaled to zero, no Pod at all (its Lease released)", async () => {
    const op = operator();
    const deployment = structuredClone(op.deployment) as KubeObject & { spec: any; status: any };
    deployment.spec.replicas = 0;
    deployment.status = {
      replicas: 0,
      conditions: [{ type: "Available", status: "False", lastTransitionTime: "2026-11-25T01:40:00Z" }],
    };
    const lease = structuredClone(op.lease) as KubeObject & { spec: Record<string, unknown> };
    delete lease.spec.holderIdentity;
    lease.spec.renewTime = "2026-11-25T01:39:58.123456Z";
    const server = await cluster([undecided()], { pod: undefined, deployment, lease });
    const r = await why(server);
    note(r.d);
    expectCause(r, "operator-down", {
      verdict: [`did not run at ${SLOT_TEXT}`, "no ready replica"],
      evidence: [
        `Deployment ${OPERATOR_NS}/${DEPLOYMENT}: 0/0 ready replicas`,
        "holder (none: released), renewed 2026-11-25T01:39:58Z (9h32m ago)",
      ],
      fix: [`kubectl -n ${OPERATOR_NS} get deployment,pods -l ${OPERATOR_SELECTOR}`],
    });
    assert.doesNotMatch(r.text, /\.\d{6}Z/, "no time printed with microseconds");
  });

  it("no leader: a ready replica, but the Lease is stale by the API server's clock", async () => {
    const op = operator();
    const lease = structuredClone(op.lease) as KubeObject & { spec: Record<string, unknown> };
    lease.spec.renewTime = "2026-11-25T01:58:00.000000Z";
    const server = await cluster([undecided()], { lease });
    const r = await why(server);
    note(r.d);
    expectCause(r, "operator-no-leader", {
      verdict: [
        `did not run at ${SLOT_TEXT}`,
        "the Lease was last renewed 9h14m ago by cronjob-operator-controller-manager-7d9f-abcde_0c1d",
      ],
      evidence: [
        `Lease ${OPERATOR_NS}/${LEASE}: holder cronjob-operator-controller-manager-7d9f-abcde_0c1d, renewed 2026-11-25T01:58:00Z (9h14m ago), leaseDurationSeconds 15`,
        "1 ready replica in cronjob-operator-system",
        "the API server's time is 2026-11-25T11:12:00Z",
      ],
      fix: ["leader election"],
    });
  });

  it("no leader: there is no Lease at all", async () => {
    const server = await cluster([undecided()], { lease: undefined });
    const r = await why(server);
    expectCause(r, "operator-no-leader", {
      verdict: [`did not run at ${SLOT_TEXT}`, `there is no Lease ${OPERATOR_NS}/${LEASE}`],
      evidence: [`no Lease ${OPERATOR_NS}/${LEASE}, while its replicas run with --leader-elect`],
      fix: ["leader election"],
    });
  });

  it("webhooks with no ready endpoint: an `also` finding beside a healthy run", async () => {
    const op = operator();
    const endpoints = { ...op.endpoints, endpoints: [] } as KubeObject;
    const server = await cluster(
      [
        cronJob({ status: { recentRuns: [entry(SLOT, "Created", "Scheduled", { job: JOB })] } }),
        job(JOB, SLOT, { state: "complete", start: at(SLOT, 3), end: at(SLOT, 15) }),
      ],
      { endpoints },
    );
    const r = await why(server);
    note(r.d);
    assert.equal(r.d.status, "healthy");
    assert.equal(r.code, 1, r.text);
    const failing = r.d.also.filter((a) => a.cause === "operator-webhook-failing");
    assert.deepEqual(
      failing.map((a) => a.summary),
      [
        `webhook validating/cronjob-operator-validating-webhook-configuration/vcronjob-v1.kb.io has no ready endpoint (Service ${OPERATOR_NS}/${WEBHOOK_SERVICE})`,
        `webhook conversion/cronjobs.${GROUP} has no ready endpoint (Service ${OPERATOR_NS}/${WEBHOOK_SERVICE})`,
      ],
      r.text,
    );
    assert.match(failing[1]!.evidence.join("\n"), /0 ready addresses.*failed calling webhook.*conversion webhook/);
    assert.match(failing[0]!.fix.join("\n"), /Bring a replica up/);
  });

  it("webhooks whose Service has no EndpointSlice at all count as no endpoint", async () => {
    const server = await cluster(
      [cronJob({ status: { recentRuns: [entry(SLOT, "Created", "Scheduled", { job: JOB })] } })],
      {
        endpoints: undefined,
      },
    );
    const r = await why(server);
    assert.equal(r.d.also.filter((a) => a.cause === "operator-webhook-failing").length, 2, r.text);
    assert.deepEqual(r.d.unreadable, []);
  });

  it("counts an endpoint ready unless its slice says ready: false, over every slice of the Service", async () => {
    const op = operator();
    const slice = (name: string, ready: (boolean | undefined)[]) =>
      ({
        ...op.endpoints,
        metadata: { ...op.endpoints!.metadata, name },
        endpoints: ready.map((r, i) => ({
          addresses: [`10.244.0.${i + 10}`],
          conditions: r === undefined ? {} : { ready: r },
        })),
      }) as KubeObject;
    // Terminating or unready endpoints only: no ready endpoint.
    const down = await cluster(
      [cronJob({ status: { recentRuns: [entry(SLOT, "Created", "Scheduled", { job: JOB })] } })],
      { endpoints: slice(`${WEBHOOK_SERVICE}-a`, [false, false]) },
    );
    const r = await why(down);
    assert.equal(r.d.also.filter((a) => a.cause === "operator-webhook-failing").length, 2, r.text);
    // A second slice with one endpoint whose readiness is unset (ready, as the API defines it): answering.
    const up = await cluster(
      [cronJob({ status: { recentRuns: [entry(SLOT, "Created", "Scheduled", { job: JOB })] } })],
      { endpoints: slice(`${WEBHOOK_SERVICE}-a`, [false]) },
    );
    await up.seed(slice(`${WEBHOOK_SERVICE}-b`, [undefined]));
    const r2 = await why(up);
    assert.deepEqual(
      r2.d.also.filter((a) => a.cause === "operator-webhook-failing"),
      [],
      r2.text,
    );
  });

  it("clock skew: the leader's Lease renewTime is ahead of the API server's clock", async () => {
    const op = operator();
    const lease = structuredClone(op.lease) as KubeObject & { spec: Record<string, unknown> };
    lease.spec.renewTime = "2026-11-25T11:12:40.000000Z";
    const server = await cluster(
      [
        cronJob({ status: { recentRuns: [entry(SLOT, "Created", "Scheduled", { job: JOB })] } }),
        job(JOB, SLOT, { state: "complete", start: at(SLOT, 3), end: at(SLOT, 15) }),
      ],
      { lease },
    );
    const r = await why(server);
    note(r.d);
    assert.equal(r.code, 1, r.text);
    const skew = r.d.also.find((a) => a.cause === "clock-skew");
    assert.ok(skew, r.text);
    assert.equal(skew.summary, "the leader's clock is 40s ahead of the API server's");
    assert.deepEqual(skew.evidence, [
      "Lease renewTime 2026-11-25T11:12:40Z is later than the API server's time 2026-11-25T11:12:00Z",
    ]);
    assert.match(skew.fix.join("\n"), /NTP/);
  });

  it("clock skew: this machine's clock against the API server's Date header; times are the API server's", async () => {
    const server = await cluster([
      cronJob({ status: { recentRuns: [entry(SLOT, "Created", "Scheduled", { job: JOB })] } }),
      job(JOB, SLOT, { state: "complete", start: at(SLOT, 3), end: at(SLOT, 15) }),
    ]);
    mock.timers.setTime(NOW.getTime() + 150_000);
    const r = await why(server);
    note(r.d);
    const skew = r.d.also.find((a) => a.cause === "clock-skew");
    assert.ok(skew, r.text);
    assert.equal(skew.summary, "this machine's clock is 2m30s ahead of the API server's");
    assert.deepEqual(skew.evidence, [
      "this machine: 2026-11-25T11:14:30Z; the API server (Date header): 2026-11-25T11:12:00Z",
    ]);
    assert.equal(r.code, 1);
    // A skew within rounding of the Date header's whole seconds is not one.
    mock.timers.setTime(NOW.getTime() + 1_500);
    const close = await why(server);
    assert.deepEqual(close.d.also, [], close.text);
    assert.equal(close.code, 0);
  });

  /** An every-minute CronJob that ran its latest slot (the sample `make run` applies), as of NOW. */
  const everyMinute = () => {
    const slot = at(NOW.toISOString(), -60);
    const jobName = `${NAME}-${Date.parse(slot) / 1000}`;
    return [
      cronJob({
        spec: { schedule: "* * * * *", timeZone: "UTC" },
        status: {
          lastScheduleTime: slot,
          recentRuns: [entry(slot, "Created", "Scheduled", { job: jobName, decidedAt: at(slot, 1) })],
        },
      }),
      job(jobName, slot, { state: "complete", start: at(slot, 2), end: at(slot, 9) }),
    ];
  };
  /** No Pod, Deployment, Lease or webhook Service of the operator anywhere in the cluster. */
  const nothingDeployed = {
    pod: undefined,
    deployment: undefined,
    lease: undefined,
    validating: undefined,
    endpoints: undefined,
    crd: undefined,
  } as const;

  it("make run: the operator on the host (no Pod, no Lease, no Deployment): a healthy CronJob exits 0", async () => {
    const server = await cluster(everyMinute(), nothingDeployed);
    const r = await why(server);
    note(r.d);
    assert.equal(r.d.status, "healthy", r.text);
    assert.deepEqual(r.d.also, [], r.text);
    assert.equal(r.code, 0, r.text);
    assert.equal(r.d.next?.blocked, undefined, r.text);
    // The fleet view agrees: nothing needs attention.
    const list = await run(server, ["why", "-A"]);
    assert.equal(list.code, 0, list.out + list.err);
    assert.equal(list.out, "all 1 CronJobs ran as scheduled\n");
  });

  it("make run beside a Deployment scaled to zero whose Lease lapsed: the record's decisions say it works, so cannot tell (exit 2), not down", async () => {
    const op = operator();
    const deployment = structuredClone(op.deployment) as KubeObject & { spec: any; status: any };
    deployment.spec.replicas = 0;
    deployment.status = {
      replicas: 0,
      conditions: [{ type: "Available", status: "False", lastTransitionTime: "2026-11-25T09:00:00Z" }],
    };
    const lease = structuredClone(op.lease) as KubeObject & { spec: Record<string, unknown> };
    lease.spec.renewTime = "2026-11-25T08:59:50.000000Z";
    const server = await cluster(everyMinute(), { pod: undefined, deployment, lease });
    const r = await why(server);
    note(r.d);
    assert.equal(r.d.status, "healthy", r.text);
    assert.equal(r.code, 2, r.text);
    const unclear = r.d.also.find((a) => a.cause === "operator-unclear");
    assert.ok(unclear, r.text);
    assert.match(unclear.summary, /^cannot tell whether the operator runs: /);
    assert.match(unclear.summary, /0\/0 ready replicas/);
    assert.match(unclear.summary, /but the record shows a decision at 2026-11-25T11:11:01Z \(59s ago, prod\/backup\)/);
    assert.ok(!r.d.also.some((a) => a.cause === "operator-down" || a.cause === "operator-no-leader"), r.text);
    const list = await run(server, ["why", "-A"]);
    assert.equal(list.code, 2, list.out);
    // The operator's state is every CronJob's: said once, with the CronJobs it affects.
    assert.match(
      list.out,
      /^\(operator\)\toperator-unclear\tcannot tell whether the operator runs: .*: affects 1 CronJob \(prod\/backup\)\n$/,
    );
  });

  it("Helm with another release name and namespace: found through its webhooks' Service, healthy, exit 0", async () => {
    const ns = "platform-cron";
    const op = operator();
    const move = <T extends KubeObject>(o: T): T => {
      const c = structuredClone(o);
      c.metadata = { ...c.metadata, namespace: ns };
      if (c.metadata.name?.startsWith("cronjob-operator-"))
        c.metadata.name = c.metadata.name.replace("cronjob-operator-", "nightly-ops-");
      return c;
    };
    const service = { namespace: ns, name: "nightly-ops-webhook-service", path: "/validate" };
    const validating = structuredClone(op.validating) as KubeObject & { webhooks: any[] };
    validating.metadata = { name: "nightly-ops-validating-webhook-configuration" };
    validating.webhooks[0].clientConfig = { service };
    const crd = structuredClone(op.crd) as KubeObject & { spec: any };
    crd.spec.conversion.webhook.clientConfig = { service: { ...service, path: "/convert" } };
    const endpoints = move(op.endpoints);
    endpoints.metadata!.name = `${service.name}-x7k2p`;
    endpoints.metadata!.labels = { "kubernetes.io/service-name": service.name };
    const server = await cluster(everyMinute(), {
      pod: move(op.pod),
      deployment: move(op.deployment),
      lease: move(op.lease),
      validating,
      endpoints,
      crd,
    });
    const r = await why(server);
    note(r.d);
    assert.deepEqual(r.d.also, [], r.text);
    assert.equal(r.code, 0, r.text);
    // Down there is reported there, by its own names.
    const lease = move(op.lease) as KubeObject & { spec: Record<string, unknown> };
    lease.spec.renewTime = "2026-11-25T09:00:00.000000Z";
    const pod = move(op.pod) as KubeObject & { status: any };
    pod.status = {
      phase: "Running",
      conditions: [{ type: "Ready", status: "False", lastTransitionTime: "2026-11-25T09:00:00Z" }],
      containerStatuses: [],
    };
    const down = await cluster([undecided()], { pod, deployment: undefined, lease, validating, endpoints, crd });
    const d = await why(down);
    expectCause(d, "operator-down", {
      verdict: [`the operator has no ready replica in namespace ${ns}`],
      evidence: [`its Pods in ${ns}`, `Lease ${ns}/${LEASE}`],
      fix: [`kubectl -n ${ns} get deployment,pods -l ${OPERATOR_SELECTOR}`],
    });
  });

  it("no webhooks (a release with webhook.enable=false): its Pods are found by label in any namespace", async () => {
    const ns = "ops";
    const op = operator();
    const pod = structuredClone(op.pod);
    pod.metadata = { ...pod.metadata, namespace: ns };
    const lease = structuredClone(op.lease);
    lease.metadata = { ...lease.metadata, namespace: ns };
    const server = await cluster([undecided()], { ...nothingDeployed, pod, lease });
    const r = await why(server);
    note(r.d);
    expectCause(r, "not-yet-decided", {
      exit: 2,
      verdict: ["has not decided about it"],
      evidence: [`the operator: 1 ready replica in ${ns}`, `the operator: Lease ${ns}/${LEASE}: holder`],
      fix: ["workqueue_depth"],
    });
  });

  it("stopped under make run: no trace of the operator and an undecided slot: cannot tell (exit 2), saying where it looked", async () => {
    const server = await cluster([undecided()], nothingDeployed);
    const r = await why(server);
    note(r.d);
    expectCause(r, "not-yet-decided", {
      exit: 2,
      verdict: ["has not decided about it"],
      evidence: [
        `the operator: no trace of it: looked for its Pods and Deployment (${OPERATOR_SELECTOR}) and ${LEASE} in ${OPERATOR_NS} (from the default install)`,
        "if it runs outside the cluster (make run), it is stopped or cannot reach the API server",
      ],
      fix: ["workqueue_depth"],
    });
  });

  it("a single replica without leader election and no Lease is not a missing leader", async () => {
    const op = operator();
    const pod = structuredClone(op.pod) as KubeObject & { spec: any };
    pod.spec.containers[0].args = ["dist/cmd/main.js", "--leader-elect=false"];
    const server = await cluster(everyMinute(), { pod, lease: undefined });
    const r = await why(server);
    assert.deepEqual(r.d.also, [], r.text);
    assert.equal(r.code, 0, r.text);
  });

  it("not yet decided: no entry, no Job, the operator healthy (exit 2)", async () => {
    const server = await cluster([undecided()]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "not-yet-decided", {
      exit: 2,
      verdict: [`did not run at ${SLOT_TEXT}`, "has not decided about it (9h12m ago) and looks healthy"],
      evidence: [`no entry for ${SLOT} in status.recentRuns, no Job ${JOB}`, `status.lastScheduleTime: ${PREV_SLOT}`],
      fix: ["workqueue_depth"],
    });
    assert.equal(r.d.status, "unknown");
  });

  it("a slot older than the record, its Job gone: cannot tell (exit 2)", async () => {
    const runs = Array.from({ length: 10 }, (_, i) => {
      const slot = at(SLOT, -86400 * i);
      return entry(slot, "Created", "Scheduled", {
        job: `backup-${Date.parse(slot) / 1000}`,
        outcome: { result: "Complete" as const, finishedAt: at(slot, 14) },
      });
    });
    const server = await cluster([cronJob({ status: { recentRuns: runs } })]);
    const r = await why(server, "--slot", "2026-11-10T03:00");
    assert.equal(r.code, 2, r.text);
    assert.equal(r.d.status, "unknown");
    assert.equal(r.d.cause, undefined);
    assert.match(
      r.d.verdict,
      /^cannot tell about 2026-11-10 03:00 Europe\/Berlin \(2026-11-10T02:00:00Z\): it is older than the 10 decisions the record keeps, and no Job for it is left$/,
    );
    assert.ok(
      r.d.evidence.some((e) => e.includes(`status.lastScheduleTime: ${SLOT}`)),
      r.text,
    );
  });

  it("a read the user may not make (403 on pods) is listed under unreadable; the diagnosis completes", async () => {
    const server = await cluster([
      cronJob({ status: { recentRuns: [entry(SLOT, "Created", "Scheduled", { job: JOB })] } }),
      job(JOB, SLOT, { state: "active", start: at(SLOT, 3) }),
    ]);
    server.deny = (q) =>
      q.path.endsWith("/pods")
        ? new APIError(403, "Forbidden", `pods is forbidden: User "dev" cannot list resource "pods" in API group ""`)
        : undefined;
    const r = await why(server);
    assert.deepEqual(
      r.d.unreadable.toSorted(),
      [`pods in ${OPERATOR_NS}: forbidden`, `pods in ${NS}: forbidden`],
      r.text,
    );
    assert.match(r.text, /^Could not read: .*pods in prod: forbidden/m);
    assert.notEqual(r.d.cause, "pods-not-created", "Pods it could not read are not missing Pods");
    assert.equal(r.d.status, "healthy", r.text);
    assert.match(
      r.d.verdict,
      new RegExp(
        `^ran at ${SLOT_TEXT.replace(/[()]/g, "\\$&")}: Job ${JOB} \\(created 2 s after the slot\\) has been running for 9h11m`,
      ),
    );
  });
});

describe("kubectl cron why [-A] [-l SEL]: one line per CronJob that needs attention", () => {
  const named = (name: string, o: Parameters<typeof cronJob>[0] = {}) =>
    cronJob({
      ...o,
      meta: { name, uid: `uid-${name}`, labels: { team: name === "report" ? "data" : "ops" }, ...o.meta },
    });
  const healthy = () => [
    cronJob({
      meta: { labels: { team: "ops" } },
      status: { recentRuns: [entry(SLOT, "Created", "Scheduled", { job: JOB })] },
    }),
    job(JOB, SLOT, { state: "complete", start: at(SLOT, 3), end: at(SLOT, 15) }),
  ];

  it("lists only those needing attention, with their cause; exits 1 when one does", async () => {
    const server = await cluster([
      ...healthy(),
      named("report", { spec: { suspend: true } }),
      named("nightly", { status: { lastScheduleTime: PREV_SLOT } }),
    ]);
    const text = await run(server, ["why"]);
    assert.equal(text.code, 1, text.out + text.err);
    assert.deepEqual(text.out.trimEnd().split("\n"), [
      `nightly\tnot-yet-decided\tdid not run at ${SLOT_TEXT}: the operator has not decided about it (9h12m ago) and looks healthy`,
      `report\tsuspended\tdid not run at ${SLOT_TEXT}: the CronJob is suspended`,
    ]);
    const json = await run(server, ["why", "-o", "json"]);
    assert.equal(json.code, 1);
    const data = JSON.parse(json.out) as { items: Diagnosis[]; checked: number };
    assert.equal(data.checked, 3);
    assert.deepEqual(
      data.items.map((d) => [d.cronJob.name, d.cause, d.exitCode]),
      [
        ["nightly", "not-yet-decided", 2],
        ["report", "suspended", 1],
      ],
    );
    const selected = await run(server, ["why", "-l", "team=data"]);
    assert.equal(selected.code, 1);
    assert.deepEqual(
      selected.out
        .trimEnd()
        .split("\n")
        .map((l) => l.split("\t")[0]),
      ["report"],
    );
  });

  it("-A names each namespace; a healthy namespace exits 0 and says so", async () => {
    const server = await cluster([
      ...healthy(),
      named("report", { spec: { suspend: true }, meta: { namespace: "staging" } }),
    ]);
    const all = await run(server, ["why", "-A"]);
    assert.equal(all.code, 1);
    assert.deepEqual(
      all.out
        .trimEnd()
        .split("\n")
        .map((l) => l.split("\t").slice(0, 2).join(" ")),
      ["staging/report suspended"],
    );
    const prod = await run(server, ["why"]);
    assert.equal(prod.code, 0, prod.out);
    assert.equal(prod.out, "all 1 CronJobs ran as scheduled\n");
    const json = await run(server, ["why", "-o", "json"]);
    assert.deepEqual(JSON.parse(json.out), { items: [], checked: 1 });
  });

  it("-A over several pages of each list (CronJobs, Jobs, Pods, Events): each line and item as `why NAME` says it", async () => {
    // 1,100 CronJobs over two namespaces (3 pages of CronJobs; 2 of Jobs, Pods and Events in the larger one), five
    // kinds of state: a complete Job; suspended (managedFields, kubectl apply's annotation); a failed Job with its
    // Pod and Events (and an Event about another kind); not decided yet; refused, a foreign Job holding the name.
    const objects: KubeObject[] = [];
    const names: string[] = [];
    for (let i = 0; i < 1100; i++) {
      const namespace = i % 10 === 9 ? "staging" : NS;
      const name = `cj-${String(i).padStart(4, "0")}`;
      const uid = `uid-${name}`;
      const jobName = jobNameFor(name, new Date(SLOT));
      names.push(`${namespace}/${name}`);
      const meta = { name, namespace, uid };
      const ours = (state: "complete" | "failed") => {
        const j = batchJob({
          name: jobName,
          namespace,
          owner: { name, uid },
          slot: SLOT,
          timeZone: ZONE,
          state,
          start: at(SLOT, 3),
          end: at(SLOT, 60),
        });
        j.metadata!.creationTimestamp = at(SLOT, 2);
        return j;
      };
      const inNs = <T extends KubeObject>(o: T) => ({ ...o, metadata: { ...o.metadata, namespace } }) as T;
      switch (i % 5) {
        case 0:
          objects.push(
            cronJob({ meta, status: { recentRuns: [entry(SLOT, "Created", "Scheduled", { job: jobName })] } }),
            ours("complete"),
          );
          break;
        case 1:
          objects.push(
            cronJob({
              spec: { suspend: true },
              status: { lastScheduleTime: PREV_SLOT },
              meta: {
                ...meta,
                annotations: { "kubectl.kubernetes.io/last-applied-configuration": JSON.stringify({ spec: {} }) },
                managedFields: [
                  {
                    manager: "kubectl-client-side-apply",
                    operation: "Update",
                    time: "2026-11-01T00:00:00Z",
                    fieldsV1: { "f:spec": { "f:schedule": {} } },
                  },
                  {
                    manager: `kubectl-cron-${i}`,
                    operation: "Update",
                    time: at("2026-11-20T08:15:00Z", i),
                    fieldsV1: { "f:spec": { "f:suspend": {} } },
                  },
                ],
              },
            }),
          );
          break;
        case 2:
          objects.push(
            cronJob({ meta, status: { recentRuns: [entry(SLOT, "Created", "Scheduled", { job: jobName })] } }),
            ours("failed"),
            ...[0, 1, 2].flatMap((k) => [
              inNs(
                pod(`${jobName}-x${k}`, jobName, {
                  phase: "Failed",
                  containers: [
                    { state: { terminated: { reason: "OOMKilled", exitCode: 137, finishedAt: at(SLOT, 50 + k) } } },
                  ],
                }),
              ),
              inNs(event("Pod", `${jobName}-x${k}`, "BackOff", "Back-off restarting failed container")),
            ]),
            inNs(event("Job", jobName, "BackoffLimitExceeded", "Job has reached the specified backoff limit")),
            inNs(event("ConfigMap", `${jobName}-config`, "BackoffLimitExceeded", "not about a Job")),
          );
          break;
        case 3:
          objects.push(cronJob({ meta, status: { lastScheduleTime: PREV_SLOT } }));
          break;
        default: {
          const message = `a Job named ${jobName} already exists and is not controlled by this CronJob`;
          const foreign = batchJob({
            name: jobName,
            namespace,
            state: "complete",
            start: at(SLOT, -60),
            end: at(SLOT, -30),
          });
          foreign.metadata!.creationTimestamp = at(SLOT, -60);
          objects.push(
            cronJob({
              meta,
              status: {
                lastScheduleTime: PREV_SLOT,
                recentRuns: [entry(SLOT, "Refused", "AlreadyExists", { message })],
              },
            }),
            foreign,
          );
        }
      }
    }
    const server = await cluster(objects);
    const text = await run(server, ["why", "-A"]);
    const json = await run(server, ["why", "-A", "-o", "json"]);
    assert.equal(text.code, 1, text.err);
    assert.equal(json.code, 1, json.err);
    const continued = server.requests.filter((r) => r.method === "GET" && r.query.has("continue"));
    for (const what of ["cronjobs", "jobs", "pods", "events"]) {
      assert.ok(
        continued.some((r) => r.path.endsWith(`/${what}`)),
        `the ${what} were read in more than one page`,
      );
    }
    const data = JSON.parse(json.out) as { items: Diagnosis[]; checked: number };
    assert.equal(data.checked, 1100);
    const lines = text.out.trimEnd().split("\n");
    assert.deepEqual(
      lines.map((l) => l.split("\t")[0]),
      data.items.map((d) => `${d.cronJob.namespace}/${d.cronJob.name}`),
    );
    // Two of each kind, in both namespaces: `why NAME` reads the whole CronJob, -A its trimmed copy.
    for (const i of [...Array(10).keys()].map((k) => k * 21)) {
      const [namespace, name] = names[i]!.split("/") as [string, string];
      const one = await run(server, ["why", name, "-n", namespace, "-o", "json"]);
      const d = JSON.parse(one.out) as Diagnosis;
      const listed = data.items.find((x) => x.cronJob.namespace === namespace && x.cronJob.name === name);
      if (d.exitCode === 0) {
        assert.equal(listed, undefined, `${namespace}/${name} is not listed`);
        continue;
      }
      assert.deepEqual(listed, d, `${namespace}/${name}: -A -o json's item is why NAME's diagnosis`);
      const cause = d.cause ?? d.also[0]?.cause ?? "unknown";
      const words = d.status === "healthy" && d.also[0] ? d.also[0].summary : d.verdict;
      assert.ok(lines.includes(`${namespace}/${name}\t${cause}\t${words}`), `${namespace}/${name}'s line`);
    }
    assert.deepEqual(
      new Set(data.items.map((d) => d.cause)),
      new Set(["suspended", "job-failed", "not-yet-decided", "create-refused-name-taken"]),
    );
  });

  it("a healthy verdict with an operator finding is listed by that finding, once for all it affects", async () => {
    const server = await cluster([...healthy(), named("report", { spec: { suspend: true } })], {
      endpoints: { ...operator().endpoints, endpoints: [] } as KubeObject,
    });
    const r = await run(server, ["why"]);
    assert.equal(r.code, 1);
    // Two webhooks, two findings, each said once; the suspended one has a line of its own too.
    const service = `Service ${OPERATOR_NS}/${WEBHOOK_SERVICE}`;
    assert.deepEqual(r.out.trimEnd().split("\n"), [
      `(operator)\toperator-webhook-failing\twebhook validating/cronjob-operator-validating-webhook-configuration/vcronjob-v1.kb.io has no ready endpoint (${service}): affects 2 CronJobs (backup, report)`,
      `(operator)\toperator-webhook-failing\twebhook conversion/cronjobs.${GROUP} has no ready endpoint (${service}): affects 2 CronJobs (backup, report)`,
      `report\tsuspended\tdid not run at ${SLOT_TEXT}: the CronJob is suspended`,
    ]);
    // -o json: every diagnosis, and the shared problems with every CronJob each affects.
    const json = JSON.parse((await run(server, ["why", "-o", "json"])).out) as {
      items: Diagnosis[];
      shared: { cause: string; text: string; cronJobs: string[] }[];
    };
    assert.deepEqual(
      json.items.map((d) => d.cronJob.name),
      ["backup", "report"],
    );
    assert.deepEqual(
      json.shared.map((p) => [p.cause, p.cronJobs]),
      [
        ["operator-webhook-failing", ["backup", "report"]],
        ["operator-webhook-failing", ["backup", "report"]],
      ],
    );
    assert.equal(`(operator)\t${json.shared[0]!.cause}\t${json.shared[0]!.text}`, r.out.split("\n")[0]);
  });

  it("a calendar missing that several CronJobs name is one line per namespace; one that exists now is not", async () => {
    const calendars = (...names: string[]) => ({ exclusions: { calendars: names } });
    const problem = (calendar: string, namespace = NS) =>
      `spec.exclusions.calendars names ${calendar}, which is not an ${CALENDAR_KIND} of namespace ${namespace}: slots are held until it exists`;
    const heldBy = (calendar: string, namespace = NS) => ({
      lastScheduleTime: PREV_SLOT,
      recentRuns: [
        entry(SLOT, "Held", "CalendarNotFound", {
          message: `held: ${problem(calendar, namespace)}`,
          exclusion: { calendar, problem: "NotFound" },
        }),
      ],
      conditions: [
        { type: "Degraded", status: "True", reason: "CalendarNotFound", message: problem(calendar, namespace) },
      ],
    });
    const server = await cluster([
      // prod: holidays-de does not exist. backup ran before it went (a finding besides), nightly's slot is held,
      // report is suspended (its own line too); weekly's slot was held by team-cal, which exists now.
      cronJob({
        spec: calendars("holidays-de"),
        status: { recentRuns: [entry(SLOT, "Created", "Scheduled", { job: JOB })] },
      }),
      job(JOB, SLOT, { state: "complete", start: at(SLOT, 3), end: at(SLOT, 15) }),
      named("nightly", { spec: calendars("holidays-de"), status: heldBy("holidays-de") }),
      named("report", { spec: { suspend: true, ...calendars("holidays-de") } }),
      named("weekly", { spec: calendars("team-cal"), status: heldBy("team-cal") }),
      {
        apiVersion: API_VERSION,
        kind: CALENDAR_KIND,
        metadata: { name: "team-cal", namespace: NS },
        spec: { windows: [{ name: "offsite", start: "2026-12-01" }] },
      } as KubeObject,
      // staging: a calendar of the same name, missing there too: a problem of its own namespace.
      named("nightly", {
        meta: { namespace: "staging", uid: "uid-staging-nightly" },
        spec: calendars("holidays-de"),
        status: heldBy("holidays-de", "staging"),
      }),
    ]);
    const missing = (namespace: string, n: string, names: string) =>
      `calendar holidays-de (${namespace}) does not exist: the slots of ${n} naming it are held until it exists (${names})`;
    const prod = missing(NS, "3 CronJobs", "backup, nightly, report");
    const staging = missing("staging", "1 CronJob", "nightly");
    const weekly =
      `did not run at ${SLOT_TEXT}: spec.exclusions.calendars names team-cal, which is not an ${CALENDAR_KIND} of ` +
      `namespace ${NS}: its slots are held until it exists`;
    const suspended = `did not run at ${SLOT_TEXT}: the CronJob is suspended`;
    const all = await run(server, ["why", "-A"]);
    assert.equal(all.code, 1, all.err);
    assert.deepEqual(all.out.trimEnd().split("\n"), [
      `(calendar)\tcalendar-not-found\t${prod}`,
      `(calendar)\tcalendar-not-found\t${staging}`,
      `${NS}/report\tsuspended\t${suspended}`,
      `${NS}/weekly\tcalendar-not-found\t${weekly}`,
    ]);
    // -o json: every diagnosis, and each calendar's problem with every CronJob it holds.
    const json = JSON.parse((await run(server, ["why", "-A", "-o", "json"])).out) as {
      items: Diagnosis[];
      shared: { cause: string; text: string; cronJobs: string[] }[];
    };
    assert.deepEqual(
      json.items.map((d) => `${d.cronJob.namespace}/${d.cronJob.name}`),
      [`${NS}/backup`, `${NS}/nightly`, `${NS}/report`, `${NS}/weekly`, "staging/nightly"],
    );
    assert.deepEqual(
      json.shared.map((p) => [p.cause, p.text, p.cronJobs]),
      [
        ["calendar-not-found", prod, [`${NS}/backup`, `${NS}/nightly`, `${NS}/report`]],
        ["calendar-not-found", staging, ["staging/nightly"]],
      ],
    );
    // One namespace: its own calendar's problem only.
    const one = await run(server, ["why"]);
    assert.deepEqual(one.out.trimEnd().split("\n"), [
      `(calendar)\tcalendar-not-found\t${prod}`,
      `report\tsuspended\t${suspended}`,
      `weekly\tcalendar-not-found\t${weekly}`,
    ]);
    // `list`: the same problems once each on stderr, the calendars read in one list (of every namespace with -A).
    server.requests.length = 0;
    const listed = await run(server, ["list", "-A"]);
    assert.equal(listed.code, 0, listed.err);
    assert.deepEqual(listed.err.trimEnd().split("\n"), [prod, staging]);
    assert.deepEqual(
      server.requests.filter((q) => q.path.endsWith("/exclusioncalendars")).map((q) => q.path),
      [`/apis/${GROUP}/v1/exclusioncalendars`],
    );
    server.requests.length = 0;
    const inProd = await run(server, ["list", "-o", "json"]);
    assert.equal(inProd.err, `${prod}\n`);
    assert.deepEqual(
      (JSON.parse(inProd.out) as { shared: { cause: string; text: string; cronJobs: string[] }[] }).shared,
      [{ cause: "calendar-not-found", text: prod, cronJobs: ["backup", "nightly", "report"] }],
    );
    assert.deepEqual(
      server.requests.filter((q) => q.path.endsWith("/exclusioncalendars")).map((q) => q.path),
      [`/apis/${GROUP}/v1/namespaces/${NS}/exclusioncalendars`],
    );
    // The calendars the user may not read: nothing is said of them as shared; a held slot is its CronJob's own line.
    server.deny = (q) =>
      q.path.endsWith("/exclusioncalendars")
        ? new APIError(403, "Forbidden", "exclusioncalendars is forbidden")
        : undefined;
    const denied = await run(server, ["list", "-A"]);
    assert.equal(denied.err, "");
    const blind = await run(server, ["why"]);
    assert.deepEqual(
      blind.out
        .trimEnd()
        .split("\n")
        .map((l) => l.split("\t").slice(0, 2).join(" ")),
      ["nightly calendar-not-found", "report suspended", "weekly calendar-not-found"],
    );
  });

  it("a group that exists now is not said missing for all: a slot held before it was created is its own line", async () => {
    const notFound = (name: string) =>
      cronJob({
        meta: { name, uid: `uid-${name}` },
        spec: { concurrencyGroup: GROUP_NAME },
        status: { lastScheduleTime: PREV_SLOT, recentRuns: [entry(SLOT, "Held", "ConcurrencyGroupNotFound")] },
      });
    const server = await cluster([notFound("backup"), notFound("nightly"), concurrencyGroup(GROUP_NAME, 2)]);
    const r = await run(server, ["why"]);
    assert.equal(r.code, 1, r.err);
    const held = `did not run at ${SLOT_TEXT}: spec.concurrencyGroup names ${GROUP_NAME}, which is not a ConcurrencyGroup of namespace ${NS}: its runs wait until it exists`;
    assert.deepEqual(r.out.trimEnd().split("\n"), [
      `backup\tgroup-not-found\t${held}`,
      `nightly\tgroup-not-found\t${held}`,
    ]);
  });
});

describe("kubectl cron why -A and list at 5,000 CronJobs: a problem many share is said once", () => {
  it("the operator down, its webhooks unserved, a group full, a group missing, a calendar missing and one that does not parse: one line each, with the count", async () => {
    const op = operator();
    const down = structuredClone(op.pod) as KubeObject & { status: Record<string, unknown> };
    down.status = {
      phase: "Running",
      conditions: [{ type: "Ready", status: "False", reason: "ContainersNotReady" }],
      containerStatuses: [
        { name: "manager", ready: false, restartCount: 12, state: { waiting: { reason: "CrashLoopBackOff" } } },
      ],
    };
    const lease = structuredClone(op.lease) as KubeObject & { spec: Record<string, unknown> };
    lease.spec.renewTime = "2026-11-25T10:00:00.000000Z";
    const endpoints = { ...op.endpoints, endpoints: [] } as KubeObject;
    // No recorded uids: the fake maps each seeded one into every later object (quadratic at 5,000).
    const at5000 = (name: string, namespace: string, o: Parameters<typeof cronJob>[0] = {}) =>
      cronJob({ ...o, meta: { name, namespace, uid: undefined } });
    // A calendar whose windows do not parse: every slot of a CronJob naming it is held, as when it is missing.
    const broken = {
      apiVersion: API_VERSION,
      kind: CALENDAR_KIND,
      metadata: { name: "broken", namespace: NS },
      spec: { windows: [{ start: "2026-11-31" }] },
    } as KubeObject;
    const BROKEN = 'spec.windows[0].start: Invalid value: "2026-11-31": no such day: November 2026 has 30 days';
    const objects: KubeObject[] = [concurrencyGroup(GROUP_NAME, 2), broken];
    const waiting: string[] = [];
    for (let i = 0; i < 5000; i++) {
      const namespace = i < 4000 ? NS : "staging";
      const name = `cj-${String(i).padStart(4, "0")}`;
      if (i < 37) {
        // 37 wait for a place in backups, behind the Jobs of cj-0037 and cj-0038.
        waiting.push(name);
        objects.push(
          at5000(name, namespace, {
            spec: { concurrencyGroup: GROUP_NAME },
            status: {
              lastScheduleTime: PREV_SLOT,
              recentRuns: [
                entry(SLOT, "Held", "ConcurrencyGroupFull", { blockedBy: jobNameFor("cj-0037", new Date(A_SLOT)) }),
              ],
            },
          }),
        );
      } else if (i < 39) {
        objects.push(
          at5000(name, namespace, { spec: { concurrencyGroup: GROUP_NAME }, status: { lastScheduleTime: PREV_SLOT } }),
          groupJob(name, A_SLOT),
        );
      } else if (i >= 40 && i < 45) {
        objects.push(
          at5000(name, namespace, {
            spec: { concurrencyGroup: "nosuch" },
            status: { lastScheduleTime: PREV_SLOT, recentRuns: [entry(SLOT, "Held", "ConcurrencyGroupNotFound")] },
          }),
        );
      } else if (i >= 45 && i < 48) {
        const problem = `spec.exclusions.calendars names nosuch-cal, which is not an ${CALENDAR_KIND} of namespace ${NS}: slots are held until it exists`;
        objects.push(
          at5000(name, namespace, {
            spec: { exclusions: { calendars: ["nosuch-cal"] } },
            status: {
              lastScheduleTime: PREV_SLOT,
              recentRuns: [
                entry(SLOT, "Held", "CalendarNotFound", {
                  message: `held: ${problem}`,
                  exclusion: { calendar: "nosuch-cal", problem: "NotFound" },
                }),
              ],
              conditions: [{ type: "Degraded", status: "True", reason: "CalendarNotFound", message: problem }],
            },
          }),
        );
      } else if (i >= 48 && i < 50) {
        objects.push(
          at5000(name, namespace, {
            spec: { exclusions: { calendars: ["broken"] } },
            status: { lastScheduleTime: PREV_SLOT },
          }),
        );
      } else if (i >= 50 && i < 53) {
        objects.push(at5000(name, namespace, { spec: { suspend: true } }));
      } else {
        objects.push(at5000(name, namespace, { status: { lastScheduleTime: PREV_SLOT } }));
      }
    }
    const server = await cluster(objects, { pod: down, lease, endpoints });
    const r = await run(server, ["why", "-A"]);
    assert.equal(r.code, 1, r.err);
    const service = `Service ${OPERATOR_NS}/${WEBHOOK_SERVICE}`;
    const all = "5,000 CronJobs (prod/cj-0000, prod/cj-0001, prod/cj-0002 and 4,997 more)";
    const suspended = (n: string) => `prod/${n}\tsuspended\tdid not run at ${SLOT_TEXT}: the CronJob is suspended`;
    assert.deepEqual(r.out.trimEnd().split("\n"), [
      `(operator)\toperator-down\tthe operator has no ready replica in namespace ${OPERATOR_NS}: affects ${all}`,
      `(operator)\toperator-webhook-failing\twebhook validating/cronjob-operator-validating-webhook-configuration/vcronjob-v1.kb.io has no ready endpoint (${service}): affects ${all}`,
      `(operator)\toperator-webhook-failing\twebhook conversion/cronjobs.${GROUP} has no ready endpoint (${service}): affects ${all}`,
      `(group)\tgroup-not-found\tgroup nosuch (${NS}) does not exist: the runs of 5 CronJobs naming it wait (cj-0040, cj-0041, cj-0042 and 2 more)`,
      `(group)\tgroup-full\tgroup ${GROUP_NAME} (${NS}) full at 2/2: 37 CronJobs waiting (cj-0000, cj-0001, cj-0002 and 34 more)`,
      `(calendar)\tcalendar-not-found\tcalendar broken (${NS}) cannot be read (${BROKEN}): the slots of 2 CronJobs naming it are held until it is fixed (cj-0048, cj-0049)`,
      `(calendar)\tcalendar-not-found\tcalendar nosuch-cal (${NS}) does not exist: the slots of 3 CronJobs naming it are held until it exists (cj-0045, cj-0046, cj-0047)`,
      suspended("cj-0050"),
      suspended("cj-0051"),
      suspended("cj-0052"),
    ]);
    // `list -A`: the table of all 5,000, and the same problems once each on stderr (a suspended one is not affected
    // by the operator being down); the groups read once, the operator's state a constant number of times.
    server.requests.length = 0;
    const listed = await run(server, ["list", "-A"]);
    assert.equal(listed.code, 0, listed.err);
    assert.equal(listed.out.trimEnd().split("\n").length, 5001);
    const some = "4,997 CronJobs (prod/cj-0000, prod/cj-0001, prod/cj-0002 and 4,994 more)";
    assert.deepEqual(listed.err.trimEnd().split("\n"), [
      `the operator has no ready replica in namespace ${OPERATOR_NS}: affects ${some}`,
      `webhook validating/cronjob-operator-validating-webhook-configuration/vcronjob-v1.kb.io has no ready endpoint (${service}): affects ${some}`,
      `webhook conversion/cronjobs.${GROUP} has no ready endpoint (${service}): affects ${some}`,
      `group nosuch (${NS}) does not exist: the runs of 5 CronJobs naming it wait (cj-0040, cj-0041, cj-0042 and 2 more)`,
      `group ${GROUP_NAME} (${NS}) full at 2/2: 37 CronJobs waiting (cj-0000, cj-0001, cj-0002 and 34 more)`,
      `calendar broken (${NS}) cannot be read (${BROKEN}): the slots of 2 CronJobs naming it are held until it is fixed (cj-0048, cj-0049)`,
      `calendar nosuch-cal (${NS}) does not exist: the slots of 3 CronJobs naming it are held until it exists (cj-0045, cj-0046, cj-0047)`,
    ]);
    const reads = server.requests.filter((q) => q.method === "GET" && !q.path.endsWith("/cronjobs"));
    assert.ok(
      reads.length < 20,
      `the operator's, groups' and calendars' state in a few reads: ${reads.map((q) => q.path)}`,
    );
    assert.deepEqual(
      reads.filter((q) => q.path.endsWith("/exclusioncalendars")).map((q) => q.path),
      ["/apis/batch.tutorial.kubebuilder.io/v1/exclusioncalendars"],
      "the calendars in one list of every namespace, none read per CronJob",
    );
    assert.match(listed.out.split("\n")[0]!, /SUSPEND +GROUP +ACTIVE/);
  });
});

// --- diagnose() on facts built by hand -----------------------------------------------------------------------

/** WhyFacts for `cj`, everything else empty and healthy unless `o` says otherwise. */
const facts = (cj: KubeObject, o: Partial<WhyFacts> = {}): WhyFacts => whyFacts(cj, o.now ?? NOW, o);

function podFacts(name: string, jobName: string, o: Partial<PodFacts> = {}): PodFacts {
  return { name, job: jobName, phase: "Pending", created: at(SLOT, 3), conditions: [], containers: [], ...o };
}

/** diagnose() with the exit code as `code`, for expectCause. */
function ask(f: WhyFacts, slot?: Date) {
  const d = diagnose(f, slot ? { slot } : {});
  note(d);
  return { code: d.exitCode, d };
}

describe("diagnose(): the slot asked about (DST, H, the wall clock)", () => {
  const berlinDST = (schedule: string) =>
    cronJob({
      spec: { schedule },
      meta: { creationTimestamp: "2026-01-01T00:00:00Z" },
      status: { lastScheduleTime: "2026-03-30T00:30:00Z" },
    });
  const march30 = new Date("2026-03-30T12:00:00Z");

  it("a DST spring-forward day: 02:30 does not exist in Berlin on 2026-03-29; the slot runs at 03:30 CEST", () => {
    const f = facts(berlinDST("30 2 * * *"), { now: march30 });
    const r = ask(f, new Date("2026-03-29T02:30:00Z"));
    expectCause(r, "not-a-slot", {
      verdict: [
        "2026-03-29 04:30 Europe/Berlin (2026-03-29T02:30:00Z) is not a time this CronJob runs",
        "the nearest slots are 2026-03-29 03:30 Europe/Berlin (2026-03-29T01:30:00Z) and 2026-03-30 02:30 Europe/Berlin (2026-03-30T00:30:00Z)",
      ],
      evidence: [
        "slot 2026-03-29T03:30:00+02:00 (2026-03-29T01:30:00Z): shifted: the local time it names does not exist on 2026-03-29 (clocks go forward), so it runs at 03:30",
        "slot 2026-03-30T02:30:00+02:00 (2026-03-30T00:30:00Z)",
      ],
      fix: ["spec.timeZone"],
    });
    // Asked as the wall-clock time the schedule names, it is that day's (shifted) slot.
    const wall = parseSlot("2026-03-29T02:30", ZONE);
    assert.equal(wall?.toISOString(), "2026-03-29T01:30:00.000Z");
    const slot = diagnose(f, { slot: wall! });
    assert.equal(slot.slot?.utc, "2026-03-29T01:30:00Z");
    assert.match(slot.slot?.note ?? "", /does not exist on 2026-03-29 \(clocks go forward\), so it runs at 03:30/);
    assert.notEqual(slot.cause, "not-a-slot");
  });

  it("a DST fall-back day: a wall-clock time in the repeated hour is its first occurrence, as the schedule runs it", () => {
    const cj = cronJob({
      spec: { schedule: "30 2 * * *" },
      meta: { creationTimestamp: "2026-01-01T00:00:00Z" },
      status: {
        lastScheduleTime: "2026-10-25T00:30:00Z",
        recentRuns: [entry("2026-10-25T00:30:00Z", "Skipped", "MissedRunPolicySkip")],
      },
    });
    const f = facts(cj, { now: new Date("2026-10-25T12:00:00Z") });
    const wall = parseSlot("2026-10-25T02:30", ZONE);
    assert.equal(wall?.toISOString(), "2026-10-25T00:30:00.000Z", "02:30 CEST, the first 02:30");
    const d = diagnose(f, { slot: wall! });
    assert.equal(d.cause, "policy-skipped", d.verdict);
    assert.match(d.slot?.note ?? "", /02:30 happens twice today \(clocks go back\): it runs once, at the first/);
  });

  it("an H schedule: the resolved minute is shown", () => {
    const cj = cronJob({ spec: { schedule: "H 3 * * *" } });
    const r = ask(facts(cj), new Date("2026-11-25T02:00:00Z"));
    const resolved = /H 3 \* \* \* → (\d+) 3 \* \* \* \(H resolved\) in Europe\/Berlin/.exec(r.d.evidence[0] ?? "");
    assert.ok(resolved, JSON.stringify(r.d, null, 2));
    const minute = resolved[1]!.padStart(2, "0");
    expectCause(r, "not-a-slot", {
      verdict: [
        `2026-11-25 03:00 Europe/Berlin (2026-11-25T02:00:00Z) is not a time this CronJob runs`,
        `2026-11-25 03:${minute} Europe/Berlin (2026-11-25T02:${minute}:00Z)`,
      ],
      evidence: [`slot 2026-11-25T03:${minute}:00+01:00 (2026-11-25T02:${minute}:00Z)`],
      fix: ["kubectl cron next"],
    });
  });

  it("--slot: RFC 3339 as given; a wall-clock time in the CronJob's zone (summer and winter offsets)", () => {
    assert.equal(parseSlot("2026-11-25T02:00:00Z", ZONE)?.toISOString(), "2026-11-25T02:00:00.000Z");
    assert.equal(parseSlot("2026-11-25T03:00:00+01:00", ZONE)?.toISOString(), "2026-11-25T02:00:00.000Z");
    assert.equal(parseSlot("2026-11-25T03:00", ZONE)?.toISOString(), "2026-11-25T02:00:00.000Z");
    assert.equal(parseSlot("2026-07-01 03:00", ZONE)?.toISOString(), "2026-07-01T01:00:00.000Z");
    assert.equal(parseSlot("2026-07-01T03:00", "UTC")?.toISOString(), "2026-07-01T03:00:00.000Z");
    for (const bad of ["tomorrow", "2026-11-25", "03:00", "2026-13-45T03:00"])
      assert.equal(parseSlot(bad, ZONE), undefined, bad);
  });

  it("a --slot still to come is not late: it has not come yet, or will not run while suspended", () => {
    const tomorrow = new Date("2026-11-26T02:00:00Z");
    const d = diagnose(facts(cronJob()), { slot: tomorrow });
    assert.equal(d.status, "healthy");
    assert.equal(d.verdict, "2026-11-26 03:00 Europe/Berlin (2026-11-26T02:00:00Z) has not come yet (in 14h48m)");
    assert.equal(d.exitCode, 0);
    const suspended = ask(facts(cronJob({ spec: { suspend: true } })), tomorrow);
    expectCause(suspended, "suspended", {
      verdict: ["will not run at 2026-11-26 03:00 Europe/Berlin (2026-11-26T02:00:00Z): the CronJob is suspended"],
      evidence: ["spec.suspend: true"],
      fix: [`kubectl cron resume ${NAME} -n ${NS}`],
    });
  });

  it("the default slot: one just due and not yet decided yields to the one before it", () => {
    const cj = cronJob({
      status: {
        lastScheduleTime: PREV_SLOT,
        recentRuns: [
          entry(PREV_SLOT, "Created", "Scheduled", {
            job: PREV_JOB,
            outcome: { result: "Complete", finishedAt: at(PREV_SLOT, 14) },
          }),
        ],
      },
    });
    const d = diagnose(facts(cj, { now: new Date(at(SLOT, 20)) }));
    assert.equal(d.slot?.utc, PREV_SLOT);
    assert.equal(d.exitCode, 0, d.verdict);
  });
});

describe("diagnose(): causes where the live layer adds nothing", () => {
  const created = () => cronJob({ status: { recentRuns: [entry(SLOT, "Created", "Scheduled", { job: JOB })] } });
  const active = () => [job(JOB, SLOT, { state: "active", start: at(SLOT, 3) })];

  for (const [reason, message] of [
    ["ImagePullBackOff", 'Back-off pulling image "registry.example.com/backup:1.2.3"'],
    ["InvalidImageName", 'couldn\'t parse image name "registry.example.com/Backup::1": invalid reference format'],
  ] as const) {
    it(`image pull: ${reason} with the kubelet's message`, () => {
      const pods = [
        podFacts(`${JOB}-p1o2i`, JOB, {
          containers: [{ name: "backup", ready: false, restartCount: 0, waiting: { reason, message } }],
        }),
      ];
      const r = ask(facts(created(), { jobs: active(), pods }));
      expectCause(r, "image-pull", {
        verdict: [`started at ${SLOT_TEXT}`, `(${reason})`],
        evidence: [`container backup: ${reason}: ${message}`],
        fix: ["image name or tag"],
      });
    });
  }

  it("a run seconds old whose Pods show nothing yet: an earlier run still stuck pulling its image says why", () => {
    const message = 'Back-off pulling image "registry.example.com/backup:1.2.3"';
    const jobs = [
      job(JOB, SLOT, { state: "active", created: at(SLOT, 1) }),
      job(PREV_JOB, PREV_SLOT, { state: "active", start: at(PREV_SLOT, 3) }),
    ];
    const pods = [
      podFacts(`${JOB}-n3w0n`, JOB, { created: at(SLOT, 2) }),
      podFacts(`${PREV_JOB}-01dp0`, PREV_JOB, {
        containers: [
          { name: "backup", ready: false, restartCount: 0, waiting: { reason: "ImagePullBackOff", message } },
        ],
      }),
    ];
    const r = ask(facts(created(), { jobs, pods, now: new Date(at(SLOT, 6)) }));
    expectCause(r, "image-pull", {
      verdict: [`started at ${SLOT_TEXT}`, `its Pod ${PREV_JOB}-01dp0 cannot pull its image (ImagePullBackOff)`],
      evidence: [`Job ${JOB} started 5 s ago: its Pods show nothing yet; Job ${PREV_JOB}`, message],
      fix: ["image name or tag"],
    });
    // Half a minute later the run's own Pods would have said so: it is judged on its own.
    const later = ask(facts(created(), { jobs, pods, now: new Date(at(SLOT, 40)) }));
    assert.equal(later.d.status, "healthy", later.d.verdict);
  });

  it("missed while held behind a running Job (Missed with blockedBy): forbid-held, the Job named", () => {
    const blocker = "backup-m1f2e3d4";
    const cj = cronJob({
      spec: { startingDeadlineSeconds: 300 },
      status: {
        recentRuns: [
          entry(SLOT, "Missed", "StartingDeadlineExceeded", { blockedBy: blocker, decidedAt: at(SLOT, 301) }),
        ],
      },
    });
    const r = ask(facts(cj, { jobs: [hungJob(blocker)] }));
    expectCause(r, "forbid-held", {
      verdict: [
        `did not run at ${SLOT_TEXT}`,
        `behind Job ${blocker} until startingDeadlineSeconds (300) passed`,
        "has been running for 9h12m",
      ],
      evidence: [`behind Job ${blocker}`, `Job ${blocker}: started 2026-11-25T01:59:31Z`],
      fix: [`kubectl delete job ${blocker} -n ${NS}`],
    });
  });

  /** The group as the plugin reads it: `running` its Jobs holding places. */
  const groupFacts = (o: Partial<GroupFacts> = {}): GroupFacts => ({
    namespace: NS,
    name: GROUP_NAME,
    exists: true,
    limit: 2,
    running: [],
    waiting: [],
    members: [NAME, "db-a", "db-b"],
    ...o,
  });

  it("missed while waiting for a place in its group (Missed, blockedBy a Job of another CronJob): group-full", () => {
    const a = groupJob("db-a", A_SLOT);
    const b = groupJob("db-b", B_SLOT);
    const cj = cronJob({
      spec: { startingDeadlineSeconds: 300, concurrencyGroup: GROUP_NAME },
      status: {
        lastScheduleTime: PREV_SLOT,
        recentRuns: [
          entry(SLOT, "Missed", "StartingDeadlineExceeded", { blockedBy: a.metadata!.name!, decidedAt: at(SLOT, 301) }),
        ],
      },
    });
    const r = ask(facts(cj, { group: groupFacts({ running: [a, b] }) }));
    expectCause(r, "group-full", {
      verdict: [
        `did not run at ${SLOT_TEXT}: it waited for a place in group ${GROUP_NAME} (now at 2/2) until startingDeadlineSeconds (300) passed`,
      ],
      evidence: ["Missed (StartingDeadlineExceeded)", `behind Job ${a.metadata!.name}`, "limit 2; 2 Jobs"],
      fix: ["raise `startingDeadlineSeconds`", `kubectl cron why db-a -n ${NS}`],
    });
    assert.ok(!r.d.fix.some((x) => x.startsWith("Wait:")), "a missed slot waits no more");
    // Its own Job under Forbid held it, not the group: forbid-held, as without a group.
    const own = hungJob("backup-m1f2e3d4");
    own.metadata!.labels = { [CONCURRENCY_GROUP_LABEL]: GROUP_NAME };
    const forbid = cronJob({
      spec: { startingDeadlineSeconds: 300, concurrencyGroup: GROUP_NAME },
      status: {
        recentRuns: [entry(SLOT, "Missed", "StartingDeadlineExceeded", { blockedBy: "backup-m1f2e3d4" })],
      },
    });
    const held = ask(facts(forbid, { jobs: [own], group: groupFacts({ running: [own] }) }));
    assert.equal(held.d.cause, "forbid-held", held.d.verdict);
  });

  it("a group named that does not exist is said besides a slot that ran (the condition Degraded with it)", () => {
    const cj = cronJob({
      spec: { concurrencyGroup: "nosuch" },
      status: {
        recentRuns: [
          entry(SLOT, "Created", "Scheduled", { job: JOB, outcome: { result: "Complete", finishedAt: at(SLOT, 14) } }),
        ],
        conditions: [{ type: "Degraded", status: "True", reason: "ConcurrencyGroupNotFound", message: "names nosuch" }],
      },
    });
    const d = diagnose(facts(cj, { group: groupFacts({ name: "nosuch", exists: false, limit: undefined }) }));
    note(d);
    assert.equal(d.status, "healthy", d.verdict);
    assert.deepEqual(
      d.also.map((a) => a.cause),
      ["group-not-found"],
    );
    assert.equal(
      d.also[0]!.summary,
      `spec.concurrencyGroup names nosuch, which is not a ConcurrencyGroup of namespace ${NS}: its runs wait until it exists`,
    );
    assert.ok(d.also[0]!.evidence.includes("condition Degraded=True ConcurrencyGroupNotFound: names nosuch"));
    assert.equal(d.exitCode, 1);
    assert.equal(d.next?.blocked, "ConcurrencyGroup nosuch does not exist: it will not run until it does");
  });

  it("sharedProblems counts a verdict's keys (verdictKeys: what the dashboard keeps) as it counts the whole verdict", () => {
    const a = groupJob("db-a", A_SLOT);
    const b = groupJob("db-b", B_SLOT);
    const waiting = cronJob({
      meta: { name: "waits" },
      spec: { startingDeadlineSeconds: 300, concurrencyGroup: GROUP_NAME },
      status: {
        lastScheduleTime: PREV_SLOT,
        recentRuns: [entry(SLOT, "Missed", "StartingDeadlineExceeded", { blockedBy: a.metadata!.name! })],
      },
    });
    const missing = cronJob({ meta: { name: "names-nosuch" }, spec: { concurrencyGroup: "nosuch" } });
    const suspended = cronJob({ meta: { name: "suspended" }, spec: { suspend: true } });
    // The operator's webhook unserved: a finding every verdict has, said once.
    const healthy = healthyOperatorFacts();
    const operator = { ...healthy, webhooks: healthy.webhooks.map((w) => ({ ...w, readyEndpoints: 0 })) };
    const verdicts = [
      verdictOf(facts(waiting, { operator, group: groupFacts({ running: [a, b] }) })),
      verdictOf(facts(missing, { operator, group: groupFacts({ name: "nosuch", exists: false, limit: undefined }) })),
      verdictOf(facts(suspended, { operator })),
    ];
    const keys = verdicts.map(verdictKeys);
    assert.deepEqual(keys.map(needsAttention), verdicts.map(needsAttention));
    const shared = sharedProblems(verdicts, true);
    assert.deepEqual(
      shared.map((p) => p.cause),
      ["operator-webhook-failing", "group-not-found", "group-full"],
    );
    assert.deepEqual(sharedProblems(keys, true), shared);
    assert.ok(
      keys.every((k) => !("evidence" in k.diagnosis) && !("fix" in k.diagnosis)),
      "the keys keep no words",
    );
  });

  it("ended for StartTimeout, its Job gone: the record's outcome; the fix for Pods no node fits", () => {
    const why = "Unschedulable: 0/3 nodes are available: 3 Insufficient memory.";
    // The limit is the spec's (the record's outcome holds what the Pods showed: `pods`, and `message` in words).
    const cj = cronJob({
      spec: { startTimeoutSeconds: 120 },
      status: {
        recentRuns: [
          entry(SLOT, "Created", "Scheduled", {
            job: JOB,
            outcome: {
              result: "Failed",
              reason: "StartTimeout",
              message: why,
              finishedAt: at(SLOT, 125),
              pods: "Unschedulable",
            },
          }),
        ],
      },
    });
    const r = ask(facts(cj));
    expectCause(r, "start-timeout", {
      verdict: [`ran at ${SLOT_TEXT} but its Pods never started within 120s: ${why}; the operator ended it`],
      evidence: [`Job ${JOB} is gone (history cleanup)`],
      fix: ["No node fits its Pods", "raise `spec.startTimeoutSeconds`"],
    });
    assert.ok(!r.d.fix.some((x) => /image could not be pulled/.test(x)));
    // A message in other words: said whole, the limit from the spec.
    const other = cronJob({
      spec: { startTimeoutSeconds: 600 },
      status: {
        recentRuns: [
          entry(SLOT, "Created", "Scheduled", {
            job: JOB,
            outcome: {
              result: "Failed",
              reason: "StartTimeout",
              message: "no Pod was created (a quota)",
              pods: "NoPod",
            },
          }),
        ],
      },
    });
    const r2 = ask(facts(other));
    assert.equal(
      r2.d.verdict,
      `ran at ${SLOT_TEXT} but its Pods never started within 600s: no Pod was created (a quota); the operator ended it`,
    );
    assert.ok(r2.d.fix.some((x) => x.includes(`kubectl describe job ${JOB} -n ${NS}`)));
  });

  it("ended for StartTimeout by an earlier version, its Job gone: the outcome's words quoted whole, the general fix", () => {
    // An earlier version's outcome: the limit it used in its message, no `pods`; the spec's limit raised since.
    const message =
      "its Pods did not start within spec.startTimeoutSeconds (120s): Unschedulable: 0/3 nodes are available: 3 Insufficient memory.";
    const cj = cronJob({
      spec: { startTimeoutSeconds: 600 },
      status: {
        recentRuns: [
          entry(SLOT, "Created", "Scheduled", {
            job: JOB,
            outcome: { result: "Failed", reason: "StartTimeout", message, finishedAt: at(SLOT, 125) },
          }),
        ],
      },
    });
    const r = ask(facts(cj));
    expectCause(r, "start-timeout", {
      verdict: [`ran at ${SLOT_TEXT} but its Pods never started within 600s: ${message}; the operator ended it`],
      evidence: [`Job ${JOB} is gone (history cleanup)`, "ended Failed (StartTimeout)"],
      fix: ["raise `spec.startTimeoutSeconds`"],
    });
    assert.equal(r.d.fix.length, 1, "no fix for one kind of trouble without the code");
  });

  it("queued by another controller (spec.managedBy): no Kueue fix; not pods-not-created however long it waits", () => {
    const queued = job(JOB, SLOT, { spec: { suspend: true, managedBy: "example.com/batch-admission" } });
    const r = ask(
      facts(cronJob({ status: { recentRuns: [entry(SLOT, "Created", "Scheduled", { job: JOB })] } }), {
        jobs: [queued],
      }),
    );
    expectCause(r, "job-queued", {
      verdict: [`Job ${JOB} is queued (suspended by example.com/batch-admission, since ${at(SLOT, 2).slice(0, 19)}Z)`],
      evidence: ["spec.managedBy example.com/batch-admission"],
      fix: [`kubectl get job ${JOB} -n ${NS} -o yaml`],
    });
    assert.ok(!r.d.fix.some((x) => x.includes("workloads")));
  });

  it("missed past the deadline while the operator restarted (its Pod started after the slot)", () => {
    const op = healthyOperatorFacts();
    op.pods![0]!.created = "2026-11-25T02:04:10Z";
    const cj = cronJob({
      spec: { startingDeadlineSeconds: 120 },
      status: {
        recentRuns: [entry(SLOT, "Missed", "StartingDeadlineExceeded", { decidedAt: "2026-11-25T02:04:40Z" })],
      },
    });
    const r = ask(facts(cj, { operator: op }));
    expectCause(r, "deadline-missed", {
      verdict: [
        `did not run at ${SLOT_TEXT}`,
        "4m40s late",
        "startingDeadlineSeconds 120",
        "the operator restarted: its Pod started at 2026-11-25T02:04:10Z, after the slot",
      ],
      evidence: ["operator Pods started after the slot: 2026-11-25T02:04:10Z"],
      fix: ["backfill"],
    });
  });

  // A deadline shorter than the operator's lag (5 s; it reached the slot 8 s after it, within its usual reaction) is
  // the deadline's fault only when the operator was there: a leader change or a restart after the slot is why it was
  // late, and the verdict names it. The three cases differ in the operator's facts only.
  describe("a short startingDeadlineSeconds, with or without a leader change or restart after the slot", () => {
    const decidedAt = at(SLOT, 8);
    const shortDeadline = () =>
      cronJob({
        spec: { startingDeadlineSeconds: 5 },
        status: {
          lastScheduleTime: PREV_SLOT,
          lastMissedTime: SLOT,
          recentRuns: [entry(SLOT, "Missed", "StartingDeadlineExceeded", { decidedAt })],
        },
      });

    it("neither: the deadline is shorter than the operator's lag (deadline-shorter-than-lag)", () => {
      const r = ask(facts(shortDeadline()));
      expectCause(r, "deadline-shorter-than-lag", {
        verdict: [
          `did not run at ${SLOT_TEXT}`,
          "startingDeadlineSeconds 5 is shorter than the operator's lag: it reached the slot 8 s after it",
        ],
        evidence: ["Missed (StartingDeadlineExceeded)", "8s after the slot"],
        fix: ["Raise `startingDeadlineSeconds`"],
      });
    });

    it("the leader changed after the slot: deadline-missed, naming the leader change", () => {
      const op = healthyOperatorFacts();
      op.lease = {
        ...op.lease!,
        holder: "cronjob-operator-controller-manager-7d9f-fghij_77aa",
        acquireTime: at(SLOT, 6),
        transitions: 2,
      };
      const r = ask(facts(shortDeadline(), { operator: op }));
      expectCause(r, "deadline-missed", {
        verdict: [
          `did not run at ${SLOT_TEXT}`,
          "8s late, past startingDeadlineSeconds 5",
          "no replica led from before the slot until 2026-11-25T02:00:06Z, when cronjob-operator-controller-manager-7d9f-fghij_77aa took the Lease",
        ],
        evidence: [
          `Lease ${OPERATOR_NS}/${LEASE}: cronjob-operator-controller-manager-7d9f-fghij_77aa acquired it at 2026-11-25T02:00:06Z, after the slot; 2 leader changes in all`,
        ],
        fix: [`kubectl cron backfill ${NAME} -n ${NS} --from=${SLOT} --to=${SLOT}`],
      });
    });

    it("the operator restarted after the slot: deadline-missed, naming the restart", () => {
      const op = healthyOperatorFacts();
      op.pods![0]!.created = at(SLOT, 4);
      const r = ask(facts(shortDeadline(), { operator: op }));
      expectCause(r, "deadline-missed", {
        verdict: [
          `did not run at ${SLOT_TEXT}`,
          "8s late, past startingDeadlineSeconds 5",
          `the operator restarted: its Pod started at ${at(SLOT, 4)}, after the slot`,
        ],
        evidence: [`operator Pods started after the slot: ${at(SLOT, 4)}`],
        fix: [`kubectl cron backfill ${NAME} -n ${NS} --from=${SLOT} --to=${SLOT}`],
      });
    });
  });

  it("a risk besides the verdict: recent runs started close to startingDeadlineSeconds", () => {
    const cj = cronJob({
      spec: { startingDeadlineSeconds: 60 },
      status: {
        recentRuns: [
          entry(SLOT, "Created", "Scheduled", {
            job: JOB,
            decidedAt: at(SLOT, 45),
            outcome: { result: "Complete", finishedAt: at(SLOT, 57) },
          }),
        ],
      },
    });
    const d = diagnose(facts(cj));
    note(d);
    assert.equal(d.status, "healthy");
    assert.deepEqual(
      d.also.map((a) => a.cause),
      ["deadline-shorter-than-lag"],
    );
    assert.match(
      d.also[0]!.summary,
      /startingDeadlineSeconds 60 leaves little room: recent runs started up to 45 s after their slot/,
    );
    assert.equal(d.exitCode, 1);
  });
});

describe("kubectl cron why NAME: exclusions (spec.exclusions)", () => {
  const HOLIDAYS = {
    apiVersion: API_VERSION,
    kind: CALENDAR_KIND,
    metadata: { name: "holidays-de", namespace: NS, creationTimestamp: "2026-11-01T00:00:00Z" },
    spec: { windows: [{ name: "Staff day", start: "2026-11-25" }] },
  } as KubeObject;
  const byCalendar = { exclusions: { calendars: ["holidays-de"] } };
  const skipped = (message: string, exclusion?: RecentRun["exclusion"], slot = SLOT) =>
    entry(slot, "Skipped", "ExcludedByCalendar", {
      message,
      decidedAt: at(slot, 1),
      ...(exclusion ? { exclusion } : {}),
    });

  it("excluded by a calendar it names: the calendar and its window, from the record and the calendar read now", async () => {
    const server = await cluster([
      HOLIDAYS,
      cronJob({
        spec: byCalendar,
        status: {
          lastScheduleTime: PREV_SLOT,
          recentRuns: [
            skipped("excluded by calendar holidays-de: Staff day", {
              calendar: "holidays-de",
              window: "Staff day",
              firstSlot: SLOT,
              slots: 1,
            }),
          ],
        },
      }),
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "excluded", {
      verdict: [`did not run at ${SLOT_TEXT}: excluded by calendar holidays-de: Staff day`],
      evidence: [
        `status.recentRuns: ${SLOT} Schedule Skipped (ExcludedByCalendar), decided 2026-11-25T02:00:01Z, excluded by calendar holidays-de: Staff day`,
        `ExclusionCalendar holidays-de: the window "Staff day" holds ${SLOT_TEXT}, read in ${ZONE}`,
      ],
      fix: [
        `kubectl edit exclusioncalendar holidays-de -n ${NS}`,
        `kubectl cron backfill ${NAME} -n ${NS} --from=${SLOT} --to=${SLOT} --include-excluded`,
      ],
    });
    assert.equal(r.d.verdict, `did not run at ${SLOT_TEXT}: excluded by calendar holidays-de: Staff day`);
    assert.equal(r.d.next?.utc, "2026-11-26T02:00:00Z", "the next run: a slot no window holds");
    assert.ok(!r.d.fix.some((x) => x.includes("spec.exclusions.windows")), "a calendar's window, not its own");
  });

  it("a slot of a run of excluded slots one entry stands for; and one the record no longer holds, by the windows", () => {
    const freeze = { exclusions: { windows: [{ start: "2026-11-20", end: "2026-11-25" }] } };
    const message = "excluded by spec.exclusions: 2026-11-20 to 2026-11-25 (6 slots from 2026-11-20T02:00:00Z)";
    const cj = cronJob({
      spec: freeze,
      status: {
        lastScheduleTime: "2026-11-19T02:00:00Z",
        recentRuns: [
          skipped(message, { window: "2026-11-20 to 2026-11-25", firstSlot: "2026-11-20T02:00:00Z", slots: 6 }),
        ],
      },
    });
    const r = ask(facts(cj), new Date("2026-11-22T02:00:00Z"));
    expectCause(r, "excluded", {
      verdict: [
        "did not run at 2026-11-22 03:00 Europe/Berlin (2026-11-22T02:00:00Z): excluded by spec.exclusions: 2026-11-20 to 2026-11-25",
      ],
      evidence: [
        "the entry stands for the slots from 2026-11-20T02:00:00Z to 2026-11-25T02:00:00Z the same window held",
        'spec.exclusions.windows: the window "2026-11-20 to 2026-11-25" holds',
      ],
      fix: ["spec.exclusions.windows", "--include-excluded"],
    });
    // The record's entry gone: the windows read now still say why.
    const gone = ask(facts(cronJob({ spec: freeze, status: { lastScheduleTime: "2026-11-19T02:00:00Z" } })));
    expectCause(gone, "excluded", {
      verdict: [`did not run at ${SLOT_TEXT}: excluded by spec.exclusions: 2026-11-20 to 2026-11-25`],
      evidence: [`spec.exclusions.windows: the window "2026-11-20 to 2026-11-25" holds ${SLOT_TEXT}`],
      fix: [],
    });
    // A slot still to come that a window holds will not run.
    const later = ask(
      facts(cronJob({ spec: { exclusions: { windows: [{ name: "audit", start: "2026-11-26" }] } } })),
      new Date("2026-11-26T02:00:00Z"),
    );
    expectCause(later, "excluded", {
      verdict: [
        "will not run at 2026-11-26 03:00 Europe/Berlin (2026-11-26T02:00:00Z): excluded by spec.exclusions: audit",
      ],
      evidence: ['the window "audit" holds'],
      fix: [],
    });
  });

  it("an ExcludedByCalendar entry of an earlier version (its message only): still excluded; its words quoted", () => {
    const words = "excluded by calendar holidays-de: Staff day";
    const cj = cronJob({ spec: byCalendar, status: { lastScheduleTime: PREV_SLOT, recentRuns: [skipped(words)] } });
    const line = `status.recentRuns: ${SLOT} Schedule Skipped (ExcludedByCalendar), decided 2026-11-25T02:00:01Z, ${words}`;
    // The calendar still holds the slot: the window read now names it, as for an entry with its fields.
    const live = ask(
      facts(cj, {
        calendars: [{ name: "holidays-de", state: "found", windows: [{ name: "Staff day", start: "2026-11-25" }] }],
      }),
    );
    expectCause(live, "excluded", {
      verdict: [`did not run at ${SLOT_TEXT}: excluded by calendar holidays-de: Staff day`],
      evidence: [line, `ExclusionCalendar holidays-de: the window "Staff day" holds ${SLOT_TEXT}`],
      fix: [`kubectl edit exclusioncalendar holidays-de -n ${NS}`, "--include-excluded"],
    });
    // The window gone since: the entry's reason still says a window held the slot; its message is quoted, not read.
    const gone = ask(facts(cj, { calendars: [{ name: "holidays-de", state: "found", windows: [] }] }));
    expectCause(gone, "excluded", {
      verdict: [`did not run at ${SLOT_TEXT}: excluded by a window: ${words}`],
      evidence: [line],
      fix: [`kubectl cron backfill ${NAME} -n ${NS} --from=${SLOT} --to=${SLOT} --include-excluded`],
    });
  });

  it("a calendar it names does not exist: the slot is held until it does (Degraded, next run blocked)", async () => {
    const problem =
      "spec.exclusions.calendars names holidays-de, which is not an ExclusionCalendar of namespace prod: slots are held until it exists";
    const server = await cluster([
      cronJob({
        spec: byCalendar,
        status: {
          lastScheduleTime: PREV_SLOT,
          recentRuns: [
            entry(SLOT, "Held", "CalendarNotFound", {
              message: `held: ${problem}`,
              exclusion: { calendar: "holidays-de", problem: "NotFound" },
            }),
          ],
          conditions: [{ type: "Degraded", status: "True", reason: "CalendarNotFound", message: problem }],
        },
      }),
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "calendar-not-found", {
      verdict: [
        `did not run at ${SLOT_TEXT}: spec.exclusions.calendars names holidays-de, which is not an ExclusionCalendar of namespace ${NS}: its slots are held until it exists`,
      ],
      evidence: [
        `Held (CalendarNotFound)`,
        `no ExclusionCalendar holidays-de in namespace ${NS}`,
        `condition Degraded=True CalendarNotFound: ${problem}`,
      ],
      fix: [`kubectl get exclusioncalendars -n ${NS}`, "startingDeadlineSeconds"],
    });
    assert.equal(r.d.next?.blocked, "ExclusionCalendar holidays-de does not exist: it will not run until it does");
  });

  it("a CalendarNotFound entry of an earlier version (its message only): still calendar-not-found; its words quoted", () => {
    const problem = `spec.exclusions.calendars names holidays-de, which is not an ${CALENDAR_KIND} of namespace ${NS}: slots are held until it exists`;
    const cj = cronJob({
      spec: byCalendar,
      status: {
        lastScheduleTime: PREV_SLOT,
        recentRuns: [entry(SLOT, "Held", "CalendarNotFound", { message: `held: ${problem}` })],
        conditions: [{ type: "Degraded", status: "True", reason: "CalendarNotFound", message: problem }],
      },
    });
    const line = `status.recentRuns: ${SLOT} Schedule Held (CalendarNotFound), decided 2026-11-25T02:00:02Z, held: ${problem}`;
    // Still missing: the calendar read now names it, as for an entry with its fields.
    const missing = ask(facts(cj, { calendars: [{ name: "holidays-de", state: "missing" }] }));
    expectCause(missing, "calendar-not-found", {
      verdict: [
        `did not run at ${SLOT_TEXT}: spec.exclusions.calendars names holidays-de, which is not an ${CALENDAR_KIND} of namespace ${NS}: its slots are held until it exists`,
      ],
      evidence: [line, `no ${CALENDAR_KIND} holidays-de in namespace ${NS}`],
      fix: [`kubectl get exclusioncalendars -n ${NS}`],
    });
    // It exists now: the entry's reason still says why the slot was held; which calendar, its words say (quoted).
    const created = ask(facts(cj, { calendars: [{ name: "holidays-de", state: "found", windows: [] }] }));
    expectCause(created, "calendar-not-found", {
      verdict: [`did not run at ${SLOT_TEXT}: `],
      evidence: [line, `condition Degraded=True CalendarNotFound: ${problem}`],
      fix: ["startingDeadlineSeconds"],
    });
  });

  it("a calendar whose windows do not parse; one missing besides a slot that ran; a slot held past its deadline", () => {
    const bad = [{ name: "holidays-de", state: "found" as const, windows: [{ start: "2026-11-31" }] }];
    const held = entry(SLOT, "Held", "CalendarNotFound", {
      message: "held: ...",
      exclusion: { calendar: "holidays-de", problem: "Invalid" },
    });
    const r = ask(facts(cronJob({ spec: byCalendar, status: { recentRuns: [held] } }), { calendars: bad }));
    expectCause(r, "calendar-not-found", {
      verdict: [
        `did not run at ${SLOT_TEXT}: ExclusionCalendar holidays-de cannot be read (spec.windows[0].start: Invalid value: "2026-11-31": no such day: November 2026 has 30 days): its slots are held until it is fixed`,
      ],
      evidence: ["Held (CalendarNotFound)"],
      fix: ["kubectl edit exclusioncalendar holidays-de -n prod"],
    });
    // The next slot: the calendar named, as the verdict names it.
    assert.equal(r.d.next?.blocked, "ExclusionCalendar holidays-de cannot be read: it will not run until it is fixed");
    // The slot ran before the calendar went: a finding besides, about the slots to come.
    const ran = cronJob({
      spec: byCalendar,
      status: {
        recentRuns: [
          entry(SLOT, "Created", "Scheduled", { job: JOB, outcome: { result: "Complete", finishedAt: at(SLOT, 14) } }),
        ],
      },
    });
    const d = diagnose(facts(ran, { calendars: [{ name: "holidays-de", state: "missing" }] }));
    note(d);
    assert.equal(d.status, "healthy", d.verdict);
    assert.deepEqual(
      d.also.map((a) => [a.cause, a.summary]),
      [
        [
          "calendar-not-found",
          `spec.exclusions.calendars names holidays-de, which is not an ExclusionCalendar of namespace ${NS}: its slots are held until it exists`,
        ],
      ],
    );
    assert.equal(d.exitCode, 1);
    // Held until its deadline passed: the record says Missed, the condition says why.
    const missed = cronJob({
      spec: { ...byCalendar, startingDeadlineSeconds: 300 },
      status: {
        recentRuns: [entry(SLOT, "Missed", "StartingDeadlineExceeded", { decidedAt: at(SLOT, 301) })],
        conditions: [{ type: "Degraded", status: "True", reason: "CalendarNotFound", message: "held: ..." }],
      },
    });
    const m = ask(facts(missed, { calendars: [{ name: "holidays-de", state: "missing" }] }));
    expectCause(m, "calendar-not-found", {
      verdict: [
        `did not run at ${SLOT_TEXT}: spec.exclusions.calendars names holidays-de, which is not an ExclusionCalendar of namespace ${NS}: the slot was held until startingDeadlineSeconds passed`,
      ],
      evidence: ["Missed (StartingDeadlineExceeded)"],
      fix: [],
    });
  });
});

describe("kubectl cron why NAME: retries (spec.retry)", () => {
  const retry = { retry: { limit: 3, delaySeconds: 1800 } };
  const FIRST_ATTEMPT = { [RETRY_ATTEMPT_ANNOTATION]: "0/3" };
  const BACKOFF = { reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit" };
  const R1 = retryJobName(NAME, JOB, 1);
  const R2 = retryJobName(NAME, JOB, 2);
  const attempt = (k: number, of = JOB) => ({ [RETRY_ATTEMPT_ANNOTATION]: `${k}/3`, [RETRY_OF_ANNOTATION]: of });
  const firstRan = entry(SLOT, "Created", "Scheduled", {
    job: JOB,
    outcome: { result: "Failed", reason: "BackoffLimitExceeded", finishedAt: "2026-11-25T11:02:00Z" },
  });
  const failedFirst = () =>
    job(JOB, SLOT, {
      state: "failed",
      start: at(SLOT, 3),
      end: "2026-11-25T11:02:00Z",
      annotations: FIRST_ATTEMPT,
      failure: BACKOFF,
    });
  const retryEntry = (decision: RecentRun["decision"], reason: string, o: Partial<RecentRun>) =>
    entry(SLOT, decision, reason, { trigger: "Retry", request: "1/3", decidedAt: "2026-11-25T11:02:05Z", ...o });

  it("failed, and a retry waits for its delay: which attempt, when, after which Job failed how", async () => {
    const pending = retryEntry("Held", "RetryDelay", {
      message: `attempt 1 of 3 starts at 2026-11-25T11:32:00Z: Job ${JOB} failed (BackoffLimitExceeded); spec.retry.delaySeconds 1800`,
      attempt: { number: 1, of: 3, after: JOB, failure: "BackoffLimitExceeded" },
      startsAt: "2026-11-25T11:32:00Z",
    });
    const server = await cluster([
      cronJob({ spec: retry, status: { recentRuns: [pending, firstRan] } }),
      failedFirst(),
    ]);
    const r = await why(server);
    note(r.d);
    expectCause(r, "retry-pending", {
      verdict: [
        `ran at ${SLOT_TEXT} and failed (Job ${JOB}: BackoffLimitExceeded); attempt 1 of 3 starts at 2026-11-25 12:32 Europe/Berlin (2026-11-25T11:32:00Z)`,
      ],
      evidence: [
        "spec.retry: limit 3, delaySeconds 1800",
        `Job ${JOB} (the slot's first Job): Failed (BackoffLimitExceeded)`,
        `${SLOT} Retry Held (RetryDelay)`,
      ],
      fix: [`kubectl logs job/${JOB} -n ${NS}`],
    });
  });

  it("a retry waiting behind a running Job, or late; a retry a newer run superseded (Forbid)", () => {
    const running = job(PREV_JOB, PREV_SLOT, { state: "active", start: at(PREV_SLOT, 3) });
    const behind = retryEntry("Held", "ConcurrencyPolicyForbid", {
      blockedBy: PREV_JOB,
      attempt: { number: 1, of: 3, after: JOB },
    });
    const r = ask(
      facts(cronJob({ spec: retry, status: { recentRuns: [behind, firstRan] } }), { jobs: [failedFirst(), running] }),
    );
    expectCause(r, "retry-pending", {
      verdict: [
        `ran at ${SLOT_TEXT} and failed (Job ${JOB}: BackoffLimitExceeded); attempt 1 of 3 waits: concurrencyPolicy Forbid and a running Job (Job ${PREV_JOB})`,
      ],
      evidence: [`behind Job ${PREV_JOB}`],
      fix: [],
    });
    const late = retryEntry("Held", "RetryDelay", {
      message: `attempt 1 of 3 starts at 2026-11-25T11:32:00Z: Job ${JOB} failed (BackoffLimitExceeded); spec.retry.delaySeconds 1800`,
      attempt: { number: 1, of: 3, after: JOB, failure: "BackoffLimitExceeded" },
      startsAt: "2026-11-25T11:32:00Z",
    });
    // Its Job gone: the record's outcome says how it failed.
    const overdue = ask(
      facts(cronJob({ spec: retry, status: { recentRuns: [late, firstRan] } }), {
        now: new Date("2026-11-25T11:40:00Z"),
      }),
    );
    expectCause(overdue, "retry-pending", {
      verdict: [
        `(Job ${JOB}: BackoffLimitExceeded); attempt 1 of 3 was due at 2026-11-25 12:32 Europe/Berlin (2026-11-25T11:32:00Z) and has not started`,
      ],
      evidence: [`Job ${JOB} (the slot's first Job): Failed (BackoffLimitExceeded), its Job gone`],
      fix: [],
    });
    const superseded = retryEntry("Skipped", "RetrySuperseded", {
      message: `attempt 1 of 3 not run: Job ${JOB} failed (BackoffLimitExceeded), and the run of 2026-11-26T02:00:00Z started first (concurrencyPolicy Forbid)`,
      attempt: { number: 1, of: 3, after: JOB, failure: "BackoffLimitExceeded" },
      supersededBy: "2026-11-26T02:00:00Z",
    });
    const s = ask(
      facts(
        cronJob({
          spec: retry,
          status: { lastScheduleTime: "2026-11-26T02:00:00Z", recentRuns: [superseded, firstRan] },
        }),
        {
          jobs: [failedFirst()],
          now: new Date("2026-11-26T03:00:00Z"),
        },
      ),
      new Date(SLOT),
    );
    expectCause(s, "retry-superseded", {
      verdict: [
        `ran at ${SLOT_TEXT} and failed (Job ${JOB}: BackoffLimitExceeded); attempt 1 of 3 was not run: the run of 2026-11-26 03:00 Europe/Berlin (2026-11-26T02:00:00Z) started first (concurrencyPolicy Forbid)`,
      ],
      evidence: ["Retry Skipped (RetrySuperseded)"],
      fix: ["spec.retry.delaySeconds", `kubectl cron run ${NAME} -n ${NS}`],
    });
  });

  it("retry entries of an earlier version (request k/N and a message only): the attempt, its time from the failure", () => {
    // RetryDelay without startsAt: when it starts is the failure (the Job's end) plus spec.retry.delaySeconds.
    const pending = retryEntry("Held", "RetryDelay", {
      message: `attempt 1 of 3 starts at 2026-11-25T11:32:00Z: Job ${JOB} failed (BackoffLimitExceeded); spec.retry.delaySeconds 1800`,
    });
    const r = ask(
      facts(cronJob({ spec: retry, status: { recentRuns: [pending, firstRan] } }), { jobs: [failedFirst()] }),
    );
    expectCause(r, "retry-pending", {
      verdict: [
        `ran at ${SLOT_TEXT} and failed (Job ${JOB}: BackoffLimitExceeded); attempt 1 of 3 starts at 2026-11-25 12:32 Europe/Berlin (2026-11-25T11:32:00Z)`,
      ],
      evidence: [
        `${SLOT} Retry Held (RetryDelay)`,
        "the failure ended at 2026-11-25T11:02:00Z; spec.retry.delaySeconds 1800",
      ],
      fix: [`kubectl logs job/${JOB} -n ${NS}`],
    });
    // The same old entry once history cleanup deleted the failed Job: the record's outcome keeps when it ended.
    const gone = ask(facts(cronJob({ spec: retry, status: { recentRuns: [pending, firstRan] } }), { jobs: [] }));
    expectCause(gone, "retry-pending", {
      verdict: [
        `ran at ${SLOT_TEXT} and failed (Job ${JOB}: BackoffLimitExceeded); attempt 1 of 3 starts at 2026-11-25 12:32 Europe/Berlin (2026-11-25T11:32:00Z)`,
      ],
      evidence: ["the failure ended at 2026-11-25T11:02:00Z; spec.retry.delaySeconds 1800"],
      fix: [],
    });
    // RetrySuperseded without supersededBy: the newer run is the schedule's last (status.lastScheduleTime).
    const superseded = retryEntry("Skipped", "RetrySuperseded", {
      message: `attempt 1 of 3 not run: Job ${JOB} failed (BackoffLimitExceeded), and the run of 2026-11-26T02:00:00Z started first (concurrencyPolicy Forbid)`,
    });
    const s = ask(
      facts(
        cronJob({
          spec: retry,
          status: { lastScheduleTime: "2026-11-26T02:00:00Z", recentRuns: [superseded, firstRan] },
        }),
        { jobs: [failedFirst()], now: new Date("2026-11-26T03:00:00Z") },
      ),
      new Date(SLOT),
    );
    expectCause(s, "retry-superseded", {
      verdict: [
        `attempt 1 of 3 was not run: the run of 2026-11-26 03:00 Europe/Berlin (2026-11-26T02:00:00Z) started first (concurrencyPolicy Forbid)`,
      ],
      evidence: ["Retry Skipped (RetrySuperseded)"],
      fix: ["spec.retry.delaySeconds"],
    });
  });

  it("a retried run: the attempt that completed (exit 0), the one running, the last that failed", () => {
    const r1Entry = retryEntry("Created", "RetryAfterFailure", {
      job: R1,
      message: `attempt 1 of 3: Job ${JOB} failed (BackoffLimitExceeded)`,
      decidedAt: "2026-11-25T11:32:01Z",
      attempt: { number: 1, of: 3, after: JOB },
    });
    const r1 = (state: "complete" | "active" | "failed") =>
      job(R1, SLOT, {
        state,
        start: "2026-11-25T11:32:03Z",
        ...(state === "active" ? {} : { end: "2026-11-25T11:32:15Z" }),
        created: "2026-11-25T11:32:01Z",
        annotations: attempt(1),
        ...(state === "failed" ? { failure: BACKOFF } : {}),
      });
    const cj = cronJob({ spec: retry, status: { recentRuns: [r1Entry, firstRan] } });
    const done = diagnose(facts(cj, { jobs: [failedFirst(), r1("complete")] }));
    note(done);
    assert.equal(done.status, "healthy", done.verdict);
    assert.equal(
      done.verdict,
      `ran at ${SLOT_TEXT}: Job ${R1} (attempt 1 of 3, after Job ${JOB} failed), Complete in 12s`,
    );
    assert.equal(done.exitCode, 0);
    assert.ok(done.evidence.includes(`Job ${R1} (attempt 1/3): Complete`), done.evidence.join("\n"));
    const running = diagnose(facts(cj, { jobs: [failedFirst(), r1("active")], now: new Date("2026-11-25T11:40:00Z") }));
    assert.match(
      running.verdict,
      new RegExp(`^ran at .*: Job ${R1} \\(attempt 1 of 3, after Job ${JOB} failed\\) has been running for 7m57s`),
    );
    // The last attempt failed: the run failed, after all its attempts.
    const r2Entry = retryEntry("Created", "RetryAfterFailure", {
      request: "2/3",
      job: R2,
      decidedAt: "2026-11-25T12:02:01Z",
      attempt: { number: 2, of: 3, after: R1 },
    });
    const r2 = job(R2, SLOT, {
      state: "failed",
      start: "2026-11-25T12:02:03Z",
      end: "2026-11-25T12:05:00Z",
      created: "2026-11-25T12:02:01Z",
      annotations: attempt(2),
      failure: BACKOFF,
    });
    const last = ask(
      facts(cronJob({ spec: { retry: { limit: 2 } }, status: { recentRuns: [r2Entry, r1Entry, firstRan] } }), {
        jobs: [failedFirst(), r1("failed"), r2],
        now: new Date("2026-11-25T12:10:00Z"),
      }),
    );
    expectCause(last, "job-failed", {
      verdict: [
        `ran at ${SLOT_TEXT} and failed: Job ${R2} BackoffLimitExceeded, attempt 2 of 2 after Job ${R1} failed`,
      ],
      evidence: [`Job ${JOB} (the slot's first Job): Failed`, `Job ${R1} (attempt 1/2): Failed`],
      fix: [`kubectl logs job/${R2} -n ${NS}`],
    });
  });
});

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe("diagnose(): limits, jitter and runs after an upstream (issue 71)", () => {
  const BACKOFF = { reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit" };
  const complete = () => job(JOB, SLOT, { state: "complete", start: at(SLOT, 3), end: at(SLOT, 60) });

  it("spec.maxRuns made: healthy, 'ended: 5 of 5 runs made', with the count, the limit and the last run", () => {
    const cj = cronJob({
      spec: { maxRuns: 5 },
      status: {
        scheduledRuns: 5,
        conditions: [{ type: "Available", status: "False", reason: "MaxRunsReached", message: "ended" }],
      },
    });
    const r = ask(facts(cj, { jobs: [complete()] }));
    assert.equal(r.code, 0, JSON.stringify(r.d, null, 2));
    assert.equal(r.d.status, "healthy");
    assert.equal(
      r.d.verdict,
      "ended: 5 of 5 runs made (spec.maxRuns); run-now and backfill requests still run",
      JSON.stringify(r.d),
    );
    assert.equal(r.d.verdict, scheduleEndText({ reason: "MaxRunsReached", made: 5, of: 5 }), "limits.ts's words");
    for (const e of ["status.scheduledRuns: 5", "spec.maxRuns: 5", "condition Available=False MaxRunsReached"])
      assert.ok(r.d.evidence.includes(e), e);
    assert.ok(
      r.d.evidence.some((e) => e.startsWith(`last slot: ran at ${SLOT_TEXT}: Job ${JOB}`)),
      r.d.evidence.join("\n"),
    );
    assert.equal(r.d.next, undefined, "no next slot once ended");
  });

  it("spec.endTime passed: healthy, 'ended: spec.endTime … has passed', with the field, and no next slot", () => {
    const cj = cronJob({ spec: { endTime: "2026-11-25T05:00:00Z" } });
    const r = ask(facts(cj, { jobs: [complete()] }));
    assert.equal(r.code, 0, JSON.stringify(r.d, null, 2));
    assert.equal(r.d.verdict, scheduleEndText({ reason: "EndTimeReached", endTime: new Date("2026-11-25T05:00:00Z") }));
    assert.match(r.d.verdict, /^ended: spec\.endTime 2026-11-25T05:00:00Z has passed/);
    assert.ok(r.d.evidence.includes("spec.endTime: 2026-11-25T05:00:00Z"), r.d.evidence.join("\n"));
    assert.equal(r.d.next, undefined);
    // The last run failed: that stays the verdict, the end is said beside it.
    const failed = job(JOB, SLOT, { state: "failed", start: at(SLOT, 3), end: at(SLOT, 60), failure: BACKOFF });
    const f = ask(facts(cj, { jobs: [failed] }));
    assert.equal(f.d.cause, "job-failed");
    assert.ok(
      f.d.evidence.some((e) => e.startsWith("ended: spec.endTime 2026-11-25T05:00:00Z")),
      f.d.evidence.join("\n"),
    );
  });

  it("before spec.startTime: healthy, 'not started: starts …' and the first slot in the window", () => {
    const cj = cronJob({ spec: { startTime: "2026-12-01T00:00:00+01:00" }, status: { lastScheduleTime: undefined } });
    const r = ask(facts(cj));
    assert.equal(r.code, 0);
    assert.equal(
      r.d.verdict,
      "not started: starts 2026-11-30T23:00:00Z; the first slot is 2026-12-01 03:00 Europe/Berlin (2026-12-01T02:00:00Z)",
    );
    assert.ok(r.d.evidence.includes("spec.startTime: 2026-12-01T00:00:00+01:00"));
    assert.equal(r.d.next?.utc, "2026-12-01T02:00:00Z");
  });

  it("spec.jitter: a slot whose start has not come is due at its start (not missed); a run says its offset", () => {
    const offset = jitterOffsetSeconds({ namespace: NS, name: NAME }, new Date(SLOT), 600);
    assert.ok(offset > 2, `the slot's offset (${offset}s) lies after the moment asked`);
    const cj = cronJob({ spec: { jitter: "10m" }, status: { lastScheduleTime: PREV_SLOT } });
    const due = ask(facts(cj, { now: new Date(Date.parse(SLOT) + 2000) }));
    assert.equal(due.code, 0, JSON.stringify(due.d, null, 2));
    const start = new Date(Date.parse(SLOT) + offset * 1000).toISOString().replace(".000Z", "Z");
    assert.equal(due.d.verdict, `${SLOT_TEXT} is due at ${start} (jitter offset ${offsetText(offset)})`);
    assert.ok(
      due.d.evidence.some((e) => e.includes(`its run starts at ${start}`)),
      due.d.evidence.join("\n"),
    );
    // It ran: the verdict names the slot and the offset its Job says.
    const ran = job(JOB, SLOT, {
      state: "complete",
      start: at(SLOT, 40),
      end: at(SLOT, 90),
      created: at(SLOT, 38),
      annotations: { [JITTER_OFFSET_ANNOTATION]: "37s" },
    });
    const r = ask(facts(cj, { jobs: [ran] }));
    assert.equal(r.code, 0);
    assert.match(r.d.verdict, new RegExp(`^ran at ${escapeRe(SLOT_TEXT)} \\(jitter offset 37s\\): Job ${JOB}`));
    assert.ok(
      r.d.evidence.includes(
        `slot ${SLOT} + jitter offset 37s (Job ${JOB}'s annotation): its run starts at 2026-11-25T02:00:37Z`,
      ),
      r.d.evidence.join("\n"),
    );
  });

  const UP = "extract";
  const UP_UID = "uid-extract";
  const upstream = (spec: Record<string, unknown> = {}) =>
    ({
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: { name: UP, namespace: NS, uid: UP_UID, creationTimestamp: "2026-11-01T00:00:00Z" },
      spec: { schedule: "0 3 * * *", timeZone: ZONE, jobTemplate: {}, ...spec },
    }) as unknown as CronJob;
  const UP_JOB = "extract-1795572000";
  const upJob = (state: "active" | "complete" | "failed") =>
    batchJob({
      name: UP_JOB,
      namespace: NS,
      owner: { name: UP, uid: UP_UID },
      slot: SLOT,
      timeZone: ZONE,
      state,
      start: at(SLOT, 4),
      ...(state === "active" ? {} : { end: "2026-11-25T02:40:00Z" }),
      ...(state === "failed" ? { failure: BACKOFF } : {}),
    });
  /** B: no schedule of its own, after extract. */
  const downstream = (status: Record<string, unknown> = {}) =>
    cronJob({
      spec: { schedule: undefined, after: [{ cronJob: UP }] },
      status: { lastScheduleTime: undefined, ...status },
    });
  const withUp = (jobs: Job[], o: Partial<WhyFacts> = {}, spec?: Record<string, unknown>) =>
    facts(downstream(), {
      upstreams: [{ cronJob: UP, when: "Succeeded", object: upstream(spec), jobs }],
      ...o,
    });

  it("spec.after, the upstream's run still running: 'waiting for extract's 03:00 run (running since …)'", () => {
    const r = ask(withUp([upJob("active")]));
    assert.equal(r.code, 0, JSON.stringify(r.d, null, 2));
    assert.equal(
      r.d.verdict,
      `waiting for ${UP}'s ${SLOT_TEXT} run (running since ${at(SLOT, 4).replace(".000Z", "Z")})`,
    );
    assert.ok(
      r.d.evidence.some((e) => e.startsWith(`Job ${UP_JOB} of ${UP}: running since`)),
      r.d.evidence.join("\n"),
    );
    assert.ok(r.d.evidence.includes(`status.upstreams: nothing decided about ${UP} yet`));
    assert.equal(r.d.next, undefined, "no schedule of its own: no next slot");
  });

  it("spec.after, the upstream's run failed and `when` asks a success: 'A's run failed; B runs after a success'", () => {
    const r = ask(withUp([upJob("failed")]));
    assert.equal(r.code, 0);
    assert.equal(r.d.verdict, `${UP}'s ${SLOT_TEXT} run failed; ${NAME} runs after a success`);
    assert.ok(r.d.evidence.includes(`Job ${UP_JOB} of ${UP}: Failed at 2026-11-25T02:40:00Z`), r.d.evidence.join("\n"));
  });

  it("spec.after, a run after the upstream's run: the verdict names the upstream run it followed", () => {
    const request = `${UP}/${UP_JOB}`;
    const mine = afterJobName(NAME, UP, UP_JOB);
    const b = job(mine, "2026-11-25T02:40:00Z", {
      state: "complete",
      start: "2026-11-25T02:40:03Z",
      end: "2026-11-25T02:45:00Z",
      annotations: { [AFTER_ANNOTATION]: request },
    });
    const r = ask(withUp([upJob("complete")], { jobs: [b] }));
    assert.equal(r.code, 0, JSON.stringify(r.d, null, 2));
    assert.match(
      r.d.verdict,
      new RegExp(
        `^ran at 2026-11-25 03:40 Europe/Berlin \\(2026-11-25T02:40:00Z\\), after ${UP}'s ${escapeRe(SLOT_TEXT)} run \\(Job ${UP_JOB}\\): Job ${mine}`,
      ),
    );
    assert.ok(r.d.evidence.includes(`Job ${mine}: ${AFTER_ANNOTATION}: ${request}`), r.d.evidence.join("\n"));
    // Held in the record (behind a running Job): the record's entry, trigger After, request "<upstream>/<job>".
    const held = entry("2026-11-25T02:40:00Z", "Held", "ConcurrencyPolicyForbid", {
      trigger: "After",
      request,
      blockedBy: "backup-other",
    });
    const h = ask(
      facts(downstream({ recentRuns: [held] }), {
        upstreams: [{ cronJob: UP, when: "Succeeded", object: upstream(), jobs: [upJob("complete")] }],
      }),
    );
    assert.match(h.d.verdict, new RegExp(`, after ${UP}'s .* run \\(Job ${UP_JOB}\\)`), h.d.verdict);
    assert.notEqual(h.d.status, "healthy");
  });

  it("spec.after names a CronJob that does not exist: upstream-not-found, with the fix", () => {
    const f = facts(
      downstream({
        conditions: [
          { type: "Degraded", status: "True", reason: "UpstreamNotFound", message: "spec.after names extract" },
        ],
      }),
      { upstreams: [{ cronJob: UP, when: "Succeeded", jobs: [] }] },
    );
    expectCause(ask(f), "upstream-not-found", {
      verdict: [`spec.after names ${UP}, which is not a CronJob of namespace ${NS}`],
      evidence: [`spec.after[0].cronJob: ${UP}: no such CronJob in namespace ${NS}`, "Degraded=True UpstreamNotFound"],
      fix: [`Create the CronJob ${UP} in namespace ${NS}`],
    });
  });

  it("spec.after makes a cycle: after-cycle, naming the path", () => {
    const f = facts(
      downstream({
        conditions: [{ type: "Degraded", status: "True", reason: "AfterCycle", message: "a cycle" }],
      }),
      { upstreams: [{ cronJob: UP, when: "Succeeded", object: upstream({ after: [{ cronJob: NAME }] }), jobs: [] }] },
    );
    expectCause(ask(f), "after-cycle", {
      verdict: [`spec.after makes a cycle (${NAME} runs after ${UP} runs after ${NAME})`],
      evidence: ["Degraded=True AfterCycle"],
      fix: [`(${NAME} runs after ${UP} runs after ${NAME})`],
    });
  });

  it("through `kubectl cron why`: the read room reads the upstream CronJob and its Jobs into the one snapshot", async () => {
    const up = upstream() as unknown as KubeObject;
    const running = upJob("active") as unknown as KubeObject;
    running.metadata!.uid = "uid-extract-job";
    const server = await cluster([downstream() as KubeObject, up, running]);
    const r = await why(server);
    assert.equal(r.code, 0, r.text);
    assert.match(r.d.verdict, new RegExp(`^waiting for ${UP}'s ${escapeRe(SLOT_TEXT)} run \\(running since`));
    // A missing upstream is read as missing, not unreadable.
    const lone = await cluster([downstream() as KubeObject]);
    const m = await why(lone);
    assert.equal(m.d.cause, "upstream-not-found", m.text);
    assert.deepEqual(m.d.unreadable, []);
  });
});

describe("kubectl cron why NAME: which install runs its namespace (its claim)", () => {
  const POD = "cronjob-operator-controller-manager-7d9-abc";
  const ACQUIRED = "2026-11-25T10:00:00.000000Z";
  /** The CronJob, its 03:00 run complete. */
  const ran = () => [
    cronJob({
      status: {
        recentRuns: [
          entry(SLOT, "Created", "Scheduled", { job: JOB, outcome: { result: "Complete", finishedAt: at(SLOT, 14) } }),
        ],
      },
    }),
    job(JOB, SLOT, { state: "complete", start: at(SLOT, 2), end: at(SLOT, 14) }),
  ];
  /** The CronJob whose latest slot no one decided about. */
  const undecided = () => cronJob({ status: { lastScheduleTime: PREV_SLOT, nextScheduleTime: SLOT } });
  /** The tenant's instance Lease, renewed `seconds` before now, and the claim of prod it keeps alive. */
  const claimed = (seconds: number, holder = POD) => {
    const instance = instanceLease({ pod: POD, renewTime: microTime(NOW, -seconds) });
    return [instance, claimLease({ namespace: NS, holder, instanceLease: leaseRef(instance), acquireTime: ACQUIRED })];
  };
  const runByLine = (text: string) => text.split("\n").find((l) => l.startsWith("Run by: "));

  it("claimed and live: the install and instance, and the operator looked for where the claim says", async () => {
    const server = await cluster([...ran(), ...claimed(3)]);
    const r = await why(server);
    assert.equal(r.code, 0, r.text);
    const instanceRef = `${TENANT_NS}/${TENANT_ID}-${POD}`;
    assert.deepEqual(r.d.runBy, {
      state: "active",
      text: `install ${TENANT_INSTALL} (instance ${POD})`,
      install: TENANT_INSTALL,
      instance: POD,
      since: "2026-11-25T10:00:00Z",
      instanceLease: instanceRef,
    });
    assert.equal(runByLine(r.text), `Run by: install ${TENANT_INSTALL} (instance ${POD})`);
    assert.deepEqual(r.d.also, [], r.text);
    // The install the claim names is the operator looked at: its namespace, no search for its Pods in any namespace.
    const reads = server.requests.filter((q) => q.method === "GET").map((q) => q.path);
    assert.ok(reads.includes(`/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/cronjob-operator`), "the claim");
    assert.ok(reads.includes(`/apis/coordination.k8s.io/v1/namespaces/${TENANT_NS}/leases/${TENANT_ID}-${POD}`));
    assert.ok(reads.includes(`/apis/apps/v1/namespaces/${TENANT_NS}/deployments`), "the install's Deployments");
    assert.ok(!reads.includes(`/apis/apps/v1/namespaces/${OPERATOR_NS}/deployments`), "not the default install's");
  });

  it("released: it is moving, and nothing is wrong (exit 0)", async () => {
    const server = await cluster([...ran(), ...claimed(3, "")]);
    const r = await why(server);
    assert.equal(r.code, 0, r.text);
    assert.equal(r.d.runBy?.state, "released");
    assert.equal(
      runByLine(r.text),
      `Run by: moving: install ${TENANT_INSTALL} let namespace ${NS} go; the next instance to claim it runs it`,
    );
    assert.deepEqual(r.d.also, [], r.text);
  });

  it("its instance down, with time left: when another instance takes the namespace (no finding yet)", async () => {
    // Renewed 17 s ago, for 15 s: lapsed 2 s ago; taken at most 15 s (and 5) after the renewal, in 3 s.
    const server = await cluster([...ran(), ...claimed(17)]);
    const r = await why(server);
    assert.equal(r.code, 0, r.text);
    assert.equal(r.d.runBy?.state, "down");
    assert.equal(
      runByLine(r.text),
      `Run by: install ${TENANT_INSTALL} (instance ${POD}), which is down: its Lease ${TENANT_NS}/${TENANT_ID}-${POD} ` +
        `lapsed 2s ago; another instance takes namespace ${NS} within 3s`,
    );
    assert.deepEqual(r.d.also, [], r.text);
  });

  it("its instance down past its duration: instance-down, besides a slot that ran and as the verdict of one undecided", async () => {
    const server = await cluster([...ran(), ...claimed(60)]);
    const r = await why(server);
    note(r.d);
    assert.equal(r.code, 1, r.text);
    assert.equal(r.d.runBy?.state, "overdue");
    assert.match(
      runByLine(r.text) ?? "",
      new RegExp(`lapsed 45s ago; another instance should have taken namespace ${NS} 40s ago$`),
    );
    const down = r.d.also.find((a) => a.cause === "instance-down");
    assert.ok(down, r.text);
    assert.equal(
      down.summary,
      `namespace ${NS} is held by instance ${POD} of install ${TENANT_INSTALL}, whose Lease was last renewed 1m ago, ` +
        "and no other instance took it",
    );
    assert.ok(
      down.fix[0]?.startsWith(`\`kubectl cron instances -n ${NS}\` and \`kubectl -n ${TENANT_NS} get pods,leases\``),
    );
    assert.ok(down.evidence.some((e) => e.includes(`renewed 2026-11-25T11:11:00Z (1m ago), leaseDurationSeconds 15`)));

    const stuck = await cluster([undecided(), ...claimed(60)]);
    const u = await why(stuck);
    note(u.d);
    expectCause(u, "instance-down", {
      verdict: [`did not run at ${SLOT_TEXT}: namespace ${NS} is held by instance ${POD}`],
      evidence: [`Lease ${NS}/cronjob-operator (the claim): holder ${POD}, install ${TENANT_INSTALL}`],
      fix: ["kubectl cron instances -n prod"],
    });
    assert.match(u.d.next?.blocked ?? "", /no other instance took it: nothing runs in it until an instance takes it$/);
    // Without NAME: said once, as the operator's problems are.
    const all = await run(stuck, ["why"]);
    assert.equal(all.code, 1, all.err);
    assert.match(all.out, /^\(operator\)\tinstance-down\tnamespace prod is held by .*: affects 1 CronJob \(backup\)$/m);
  });

  it("its install down as a whole: operator-down for the install the claim names, not instance-down besides", async () => {
    const op = operator();
    const pod = structuredClone(op.pod) as KubeObject & { status: Record<string, unknown> };
    pod.metadata = { ...pod.metadata, name: POD, namespace: TENANT_NS };
    pod.status = { phase: "Running", conditions: [{ type: "Ready", status: "False" }] };
    const server = await cluster([undecided(), ...claimed(600), pod]);
    const r = await why(server);
    expectCause(r, "operator-down", {
      verdict: [`the operator has no ready replica in namespace ${TENANT_NS}`],
      evidence: [`${POD} Running, not ready`],
      fix: [`kubectl -n ${TENANT_NS} get deployment,pods`],
    });
    assert.ok(!r.d.also.some((a) => a.cause === "instance-down"), r.text);
    assert.match(runByLine(r.text) ?? "", /which is down: .* should have taken namespace prod 9m40s ago$/);
    // Another namespace, unclaimed, is the default install's, which is well: why -A tells them apart.
    const other = cronJob({ meta: { namespace: "other", uid: "uid-other" }, status: { lastScheduleTime: SLOT } });
    await server.seed(other);
    const all = await run(server, ["why", "-A", "-o", "json"]);
    const d = JSON.parse(all.out) as { items: Diagnosis[]; shared: { cause: string; cronJobs: string[] }[] };
    assert.deepEqual(
      d.shared.map((p) => [p.cause, p.cronJobs]),
      [["operator-down", [`${NS}/${NAME}`]]],
    );
  });

  it("why -A: each namespace's operator is the install its claim names, and a problem is said of its own install", async () => {
    const op = operator();
    const notReady = (pod: KubeObject, meta: object) =>
      ({
        ...structuredClone(pod),
        metadata: { ...pod.metadata, ...meta },
        status: { phase: "Running", conditions: [{ type: "Ready", status: "False" }] },
      }) as KubeObject;
    const lease = structuredClone(op.lease) as KubeObject & { spec: Record<string, unknown> };
    lease.spec.renewTime = "2026-11-25T01:41:12.000000Z";
    // other/backup: unclaimed, the default install's, down; prod/backup: the tenant's, down too.
    const other = cronJob({ meta: { namespace: "other", uid: "uid-other" }, status: { lastScheduleTime: PREV_SLOT } });
    const server = await cluster(
      [undecided(), other, ...claimed(600), notReady(op.pod, { name: POD, namespace: TENANT_NS })],
      {
        pod: notReady(op.pod, {}),
        lease,
      },
    );
    const all = await run(server, ["why", "-A", "-o", "json"]);
    const d = JSON.parse(all.out) as { shared: { cause: string; text: string; cronJobs: string[] }[] };
    assert.deepEqual(
      d.shared.map((p) => [p.cause, p.text.replace(/: affects.*/, ""), p.cronJobs]),
      [
        ["operator-down", `the operator has no ready replica in namespace ${OPERATOR_NS}`, ["other/backup"]],
        ["operator-down", `the operator has no ready replica in namespace ${TENANT_NS}`, [`${NS}/${NAME}`]],
      ],
    );
  });

  it("no claim: no install claims the namespace (the default install claims none)", async () => {
    const server = await cluster(ran());
    const r = await why(server);
    assert.equal(r.code, 0, r.text);
    assert.deepEqual(r.d.runBy, {
      state: "unclaimed",
      text: `no install claims namespace ${NS}: a cluster-wide install that claims none runs it, or no install watches it`,
    });
    assert.deepEqual(r.d.unreadable, []);
  });

  it("leases forbidden: the claim (and the leader Lease) said unread, not failed, and no operator finding made of it", async () => {
    const server = await cluster([...ran(), ...claimed(3)]);
    server.deny = (q) =>
      q.path.includes("/leases")
        ? new APIError(
            403,
            "Forbidden",
            `leases.coordination.k8s.io is forbidden: User "dev" cannot get resource "leases"`,
          )
        : undefined;
    const r = await why(server);
    assert.equal(r.code, 0, r.text);
    assert.equal(
      runByLine(r.text),
      `Run by: not known: the claim of namespace ${NS} (Lease ${NS}/cronjob-operator) could not be read`,
    );
    assert.deepEqual(r.d.unreadable.toSorted(), [
      `lease ${OPERATOR_NS}/${LEASE}: forbidden`,
      `lease ${NS}/cronjob-operator: forbidden`,
    ]);
    assert.deepEqual(r.d.also, [], "a Lease it could not read is not a Lease missing");
    // Only its instance's Lease forbidden: the install and instance are known, whether it is live is not.
    server.deny = (q) =>
      q.path.startsWith(`/apis/coordination.k8s.io/v1/namespaces/${TENANT_NS}/`)
        ? new APIError(403, "Forbidden", "forbidden")
        : undefined;
    const half = await why(server);
    assert.equal(half.code, 0, half.text);
    assert.equal(half.d.runBy?.state, "unknown");
    assert.match(
      runByLine(half.text) ?? "",
      /^Run by: install .* \(instance .*\); whether the instance is live is not known: its Lease .* could not be read$/,
    );
  });
});

describe("kubectl cron why: every cause of causes.ts", () => {
  it("each row of the table was reproduced above (as the verdict or as an `also` finding)", () => {
    assert.deepEqual(
      CAUSES.map((c) => c.id).filter((id) => !covered.has(id)),
      [],
      "causes no case reproduced",
    );
  });
});
