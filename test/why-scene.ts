// The scene of the `kubectl cron why` tests (test/unit/kubectl-cron-why-*.test.ts, a file per family of verdicts): a
// CronJob in Berlin whose latest slot was 03:00 today, its Jobs, their Pods, Events, the operator's objects, and the
// question asked through the plugin's own entry point (main(["why", ...])) against test/fake-apiserver.ts, whose
// Date header is the API server's clock (this machine's clock is mocked to the same instant unless a case stages a
// skew); or, where the live layer adds nothing, the pure diagnose() asked on facts built by hand. Each family's file
// says which causes of cmd/kubectl-cron/answer/causes.ts its cases reproduce (FAMILIES), and checks that they do
// (producesItsCauses); kubectl-cron-why-causes.test.ts checks that every cause is some family's.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  API_VERSION,
  CALENDAR_KIND,
  CONCURRENCY_GROUP_LABEL,
  CRONJOB_NAME_LABEL,
  GROUP,
  KIND,
  type Job,
  jobNameFor,
  type RecentRun,
} from "../api/v1/index.ts";
import type { CauseId } from "../cmd/kubectl-cron/answer/causes.ts";
import { type Diagnosis, diagnose as diagnoseFacts } from "../cmd/kubectl-cron/answer/why.ts";
import type { GroupFacts } from "../cmd/kubectl-cron/model/groupfacts.ts";
import type { PodFacts, WhyFacts } from "../cmd/kubectl-cron/model/facts.ts";
import type { KubeObject } from "../runtime/kinds.ts";
import { fixDiffersFromRow, verdictDiffersFromNoCause, verdictDiffersFromRow } from "./cause-words.ts";
import type { FakeAPIServer } from "./fake-apiserver.ts";
import { batchJob } from "./fixtures.ts";
import { pluginCluster, runPlugin } from "./plugin-cluster.ts";
import {
  DEPLOYMENT,
  healthyOperator,
  LEASE,
  OPERATOR_NS,
  WEBHOOK_SERVICE,
  whyFacts,
  WHY_DISCOVERY,
} from "./why-facts.ts";

// --- the scene ---------------------------------------------------------------------------------------------------

/** When the question is asked: Wednesday 2026-11-25, 12:12 in Berlin (UTC+1). */
export const NOW = new Date("2026-11-25T11:12:00Z");
export const NS = "prod";
export const NAME = "backup";
const UID = "uid-backup";
export const ZONE = "Europe/Berlin";
/** The latest slot: 03:00 in Berlin. */
export const SLOT = "2026-11-25T02:00:00Z";
export const SLOT_TEXT = "2026-11-25 03:00 Europe/Berlin (2026-11-25T02:00:00Z)";
export const JOB = "backup-1795572000";
export const PREV_SLOT = "2026-11-24T02:00:00Z";
export const PREV_JOB = "backup-1795485600";
const OPERATOR_LABELS = { "app.kubernetes.io/name": "cronjob-operator", "control-plane": "controller-manager" };
export const healthyOperatorFacts = (now = NOW) => healthyOperator(now);

export const at = (t: string, seconds: number) => new Date(Date.parse(t) + seconds * 1000).toISOString();

export const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The CronJob: "0 3 * * *" in Berlin, Forbid, created on 2026-11-01; `o` is merged into its spec and status. */
export function cronJob(o: { spec?: Record<string, unknown>; status?: Record<string, unknown>; meta?: object } = {}) {
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
export function entry(
  slot: string,
  decision: RecentRun["decision"],
  reason: string,
  o: Partial<RecentRun> = {},
): RecentRun {
  return { trigger: "Schedule", scheduledTime: slot, decision, reason, decidedAt: at(slot, 2), ...o };
}

/** The CronJob whose record says its latest slot's Job (JOB) was created; `o` is merged into that entry. */
export const createdAtSlot = (o: Partial<RecentRun> = {}, spec: Record<string, unknown> = {}) =>
  cronJob({ spec, status: { recentRuns: [entry(SLOT, "Created", "Scheduled", { job: JOB, ...o })] } });

/** The CronJob whose latest slot the operator has not decided about. */
export const undecided = () => cronJob({ status: { lastScheduleTime: PREV_SLOT, nextScheduleTime: SLOT } });

/** A Job of the CronJob for a slot (its controller reference and scheduled-time annotations). */
export function job(
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

/** JOB, Complete `seconds` after the slot (started 3 s after it). */
export const completeJob = (seconds = 15) =>
  job(JOB, SLOT, { state: "complete", start: at(SLOT, 3), end: at(SLOT, seconds) });

/** The CronJob whose latest slot ran: its record's entry, and JOB Complete. */
export const ranAtSlot = (): KubeObject[] => [createdAtSlot(), completeJob()];

type ContainerStatus = {
  name?: string;
  ready?: boolean;
  restartCount?: number;
  state?: object;
  lastState?: object;
};

/** A Pod of a Job (its job-name label), with the status the kubelet and scheduler write. */
export function pod(
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
export function event(
  kind: string,
  name: string,
  reason: string,
  message: string,
  o: { count?: number; last?: string } = {},
) {
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

/** A Job of the namespace named `name` that no CronJob controls, Complete before the slot. */
export function foreignJob(name: string, namespace = NS): Job {
  const foreign = batchJob({ name, namespace, state: "complete", start: at(SLOT, -60), end: at(SLOT, -30) });
  foreign.metadata!.creationTimestamp = at(SLOT, -60);
  return foreign;
}

/** The run-now Job of the Forbid scene: started 9h12m before NOW, hung in CrashLoopBackOff for hours. */
export const HUNG_REQUEST = "2026-11-25T01:59:30Z";
export const HUNG_SPEC = {
  backoffLimit: 600,
  template: { spec: { restartPolicy: "OnFailure", containers: [{ name: "backup", image: "backup:1" }] } },
};
export function hungJob(name: string): Job {
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

// --- the operator ------------------------------------------------------------------------------------------------

/** The operator as the default install runs it, healthy: one ready replica leading, its webhooks served. */
export function operator() {
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

/** The operator's leader Lease with `spec` merged in (a field given as undefined is removed). */
export function operatorLease(spec: Record<string, unknown>): KubeObject {
  const lease = structuredClone(operator().lease) as KubeObject & { spec: Record<string, unknown> };
  for (const [k, v] of Object.entries(spec)) {
    if (v === undefined) delete lease.spec[k];
    else lease.spec[k] = v;
  }
  return lease;
}

/** The operator's Pod, not ready: its manager in CrashLoopBackOff after `restarts` restarts. */
export function crashingOperatorPod(restarts: number): KubeObject {
  const down = structuredClone(operator().pod) as KubeObject & { status: Record<string, unknown> };
  down.status = {
    phase: "Running",
    conditions: [{ type: "Ready", status: "False", reason: "ContainersNotReady" }],
    containerStatuses: [
      { name: "manager", ready: false, restartCount: restarts, state: { waiting: { reason: "CrashLoopBackOff" } } },
    ],
  };
  return down;
}

/** The operator's webhook Service with no endpoint at all. */
export const noEndpoints = () => ({ ...operator().endpoints, endpoints: [] }) as KubeObject;

// --- fleets: concurrency groups ----------------------------------------------------------------------------------

export const GROUP_NAME = "backups";
/** The slots of the group's other CronJobs (their schedules do not matter here: only their Jobs and records do). */
export const A_SLOT = "2026-11-25T01:00:00Z";
export const B_SLOT = "2026-11-25T01:30:00Z";
export const C_SLOT = "2026-11-25T01:45:00Z";

/** A ConcurrencyGroup of the namespace. */
export function concurrencyGroup(name: string, limit: number): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: "ConcurrencyGroup",
    metadata: { name, namespace: NS, creationTimestamp: "2026-11-01T00:00:00Z" },
    spec: { limit },
  } as KubeObject;
}

/** A Job of a CronJob of the group, labelled as the operator labels it (jobForSlot). */
export function groupJob(cronJobName: string, slot: string, state: "active" | "complete" = "active"): Job {
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

/** The group as the plugin reads it: `running` its Jobs holding places. */
export const groupFacts = (o: Partial<GroupFacts> = {}): GroupFacts => ({
  namespace: NS,
  name: GROUP_NAME,
  exists: true,
  limit: 2,
  running: [],
  waiting: [],
  members: [NAME, "db-a", "db-b"],
  ...o,
});

// --- exclusions: calendars ---------------------------------------------------------------------------------------

/** The condition's message of a CronJob that names `calendar`, which is not a calendar of `namespace`. */
export const missingCalendarProblem = (calendar: string, namespace = NS) =>
  `spec.exclusions.calendars names ${calendar}, which is not an ${CALENDAR_KIND} of namespace ${namespace}: slots are held until it exists`;

/** The status of a CronJob whose slot is held because `calendar` is missing: its record's entry, Degraded. */
export const heldByMissingCalendar = (calendar: string, namespace = NS) => ({
  lastScheduleTime: PREV_SLOT,
  recentRuns: [
    entry(SLOT, "Held", "CalendarNotFound", {
      message: `held: ${missingCalendarProblem(calendar, namespace)}`,
      exclusion: { calendar, problem: "NotFound" },
    }),
  ],
  conditions: [
    {
      type: "Degraded",
      status: "True",
      reason: "CalendarNotFound",
      message: missingCalendarProblem(calendar, namespace),
    },
  ],
});

// --- the fake API server -----------------------------------------------------------------------------------------

let plugin: ReturnType<typeof pluginCluster> | undefined;

/** The clock mocked to NOW for each test of the file, and its fake API servers stopped after it. */
export function setUpScene(): void {
  plugin = pluginCluster(NS, NOW, WHY_DISCOVERY);
}

/** A cluster holding `objects` and the operator (healthy unless `op` says otherwise). */
export async function cluster(
  objects: KubeObject[],
  op: Partial<Record<keyof ReturnType<typeof operator>, KubeObject | undefined>> = {},
): Promise<FakeAPIServer> {
  assert.ok(plugin, "setUpScene() first");
  const ops = Object.values({ ...operator(), ...op }).filter((x): x is KubeObject => x !== undefined);
  return await plugin.cluster([...ops, ...objects]);
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

/** diagnose(), its verdicts and fixes checked against their causes' rows. */
export const diagnose = (...a: Parameters<typeof diagnoseFacts>) => fixesAsRows(diagnoseFacts(...a));

export const run = runPlugin;

/**
 * `kubectl cron why NAME [args]`, asked twice: as text and with -o json. Both must tell the same diagnosis with the
 * same exit code; the text prints the verdict, each piece of evidence and each fix.
 */
export async function why(
  server: FakeAPIServer,
  ...args: string[]
): Promise<{ code: number; text: string; d: Diagnosis }> {
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

/** `why` asked once of a cluster holding `objects` and the operator (as `cluster` takes them), its causes noted. */
export async function whyIn(objects: KubeObject[], op: Parameters<typeof cluster>[1] = {}) {
  const r = await why(await cluster(objects, op));
  note(r.d);
  return r;
}

/** What a diagnosis with a cause must say: the cause, the exit code, the facts named by the verdict, evidence, fix. */
export function expectCause(
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

// --- diagnose() on facts built by hand -----------------------------------------------------------------------

/** WhyFacts for `cj`, everything else empty and healthy unless `o` says otherwise. */
export const facts = (cj: KubeObject, o: Partial<WhyFacts> = {}): WhyFacts => whyFacts(cj, o.now ?? NOW, o);

export function podFacts(name: string, jobName: string, o: Partial<PodFacts> = {}): PodFacts {
  return { name, job: jobName, phase: "Pending", created: at(SLOT, 3), conditions: [], containers: [], ...o };
}

/** diagnose() with the exit code as `code`, for expectCause; its causes noted. */
export function ask(f: WhyFacts, slot?: Date) {
  const d = diagnose(f, slot ? { slot } : {});
  note(d);
  return { code: d.exitCode, d };
}

// --- the causes each family reproduces ---------------------------------------------------------------------------

/**
 * The causes each family's file (test/unit/kubectl-cron-why-<family>.test.ts) reproduces, as the verdict or as an
 * `also` finding of a diagnosis it notes. Its file checks that its cases did (producesItsCauses, its last test), and
 * kubectl-cron-why-causes.test.ts that every row of causes.ts is some family's: a cause whose last case is removed
 * fails the one or, taken off its family's list too, the other. (kubectl-cron-why-fleet.test.ts, on many CronJobs at
 * once, reproduces no cause of its own: it is no family.)
 */
export const FAMILIES = {
  schedule: [
    "suspended",
    "stopped-after-failures",
    "invalid-schedule",
    "not-a-slot",
    "before-creation",
    "deadline-missed",
    "deadline-shorter-than-lag",
    "forbid-held",
    "run-now-waiting",
    "policy-skipped",
    "create-refused-quota",
    "create-refused-admission",
    "create-refused-name-taken",
    "create-refused",
  ],
  runs: [
    "pods-not-created",
    "pods-unschedulable",
    "image-pull",
    "job-queued",
    "crash-looping",
    "start-timeout",
    "job-failed",
    "retry-pending",
    "retry-superseded",
    "upstream-not-found",
    "after-cycle",
  ],
  "groups-exclusions": ["group-full", "group-queue", "group-not-found", "excluded", "calendar-not-found"],
  operator: [
    "operator-down",
    "operator-no-leader",
    "operator-unclear",
    "instance-down",
    "operator-webhook-failing",
    "clock-skew",
    "not-yet-decided",
  ],
} as const satisfies Record<string, readonly CauseId[]>;
type Family = keyof typeof FAMILIES;

/** The cause ids the diagnoses of this file's cases found (verdict or also): this process is one test file. */
const covered = new Set<string>();
export const note = (d: Diagnosis) => {
  if (d.cause) covered.add(d.cause);
  for (const a of d.also) covered.add(a.cause);
};

/** The file's last test: each cause FAMILIES gives `family` was found by a diagnosis its cases noted. */
export function producesItsCauses(family: Family): void {
  describe(`kubectl cron why: the causes of family ${family}`, () => {
    it(`each cause FAMILIES["${family}"] names was reproduced above (as the verdict or as an \`also\` finding)`, () => {
      assert.deepEqual(
        FAMILIES[family].filter((id) => !covered.has(id)),
        [],
        "causes no case reproduced",
      );
    });
  });
}
