// `kubectl cron why` over many CronJobs (without NAME, -A, -l) and `list`: one line per CronJob that needs attention,
// a problem many share (the operator, a group, a calendar) said once with the CronJobs it affects, at 5,000
// CronJobs and over several pages of each list. The scene: test/why-scene.ts.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { API_VERSION, CALENDAR_KIND, GROUP, jobNameFor } from "../../api/v1/index.ts";
import { type Diagnosis, Fleet } from "../../cmd/kubectl-cron/answer/why.ts";
import { needsAttention, sharedProblems, verdictKeys, verdictOf } from "../../cmd/kubectl-cron/answer/verdicts.ts";
import { APIError } from "../../runtime/errors.ts";
import type { KubeObject } from "../../runtime/kinds.ts";
import { batchJob } from "../fixtures.ts";
import { OPERATOR_NS, WEBHOOK_SERVICE } from "../why-facts.ts";
import {
  A_SLOT,
  at,
  B_SLOT,
  cluster,
  completeJob,
  concurrencyGroup,
  crashingOperatorPod,
  cronJob,
  entry,
  event,
  facts,
  foreignJob,
  GROUP_NAME,
  groupFacts,
  groupJob,
  healthyOperatorFacts,
  heldByMissingCalendar,
  JOB,
  noEndpoints,
  NOW,
  NS,
  operatorLease,
  pod,
  PREV_SLOT,
  run,
  setUpScene,
  SLOT,
  SLOT_TEXT,
  undecided,
  ZONE,
} from "../why-scene.ts";
setUpScene();

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
    completeJob(),
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
          objects.push(
            cronJob({
              meta,
              status: {
                lastScheduleTime: PREV_SLOT,
                recentRuns: [entry(SLOT, "Refused", "AlreadyExists", { message })],
              },
            }),
            foreignJob(jobName, namespace),
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
      endpoints: noEndpoints(),
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
    const server = await cluster([
      // prod: holidays-de does not exist. backup ran before it went (a finding besides), nightly's slot is held,
      // report is suspended (its own line too); weekly's slot was held by team-cal, which exists now.
      cronJob({
        spec: calendars("holidays-de"),
        status: { recentRuns: [entry(SLOT, "Created", "Scheduled", { job: JOB })] },
      }),
      completeJob(),
      named("nightly", { spec: calendars("holidays-de"), status: heldByMissingCalendar("holidays-de") }),
      named("report", { spec: { suspend: true, ...calendars("holidays-de") } }),
      named("weekly", { spec: calendars("team-cal"), status: heldByMissingCalendar("team-cal") }),
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
        status: heldByMissingCalendar("holidays-de", "staging"),
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
    const down = crashingOperatorPod(12);
    const lease = operatorLease({ renewTime: "2026-11-25T10:00:00.000000Z" });
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
        objects.push(
          at5000(name, namespace, {
            spec: { exclusions: { calendars: ["nosuch-cal"] } },
            status: heldByMissingCalendar("nosuch-cal"),
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
    const server = await cluster(objects, { pod: down, lease, endpoints: noEndpoints() });
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

describe("diagnose(): a problem many share", () => {
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

  it("a clock skew is this machine's, not a CronJob's: one shared problem naming every CronJob it touches", () => {
    const localNow = new Date(NOW.getTime() + 150_000); // this machine 2m30s ahead of the API server
    const verdicts = ["a", "b"].map((name) => verdictOf(facts(cronJob({ meta: { name } }), { localNow })));
    assert.ok(verdicts.every((v) => v.diagnosis.also.some((f) => f.cause === "clock-skew")));
    const shared = sharedProblems(verdicts, true);
    assert.deepEqual(
      shared.map((p) => [p.cause, p.cronJobs]),
      [["clock-skew", [`${NS}/a`, `${NS}/b`]]],
    );
  });

  it("a verdict that cannot tell (exit 2) needs attention, as one with a cause does", () => {
    const v = verdictOf(facts(undecided()));
    assert.equal(v.diagnosis.cause, "not-yet-decided");
    assert.equal(v.diagnosis.exitCode, 2);
    assert.equal(needsAttention(v), true);
    assert.equal(needsAttention(verdictKeys(v)), true);
  });

  it("says the groups' problems in the order of their namespace and name", () => {
    const fleet = new Fleet(true);
    for (const [namespace, name, member] of [
      ["staging", "a", "x"],
      ["prod", "b", "y"],
      ["prod", "a", "z"],
    ] as const)
      fleet.groupAffects(groupFacts({ namespace, name, exists: false, limit: undefined, members: [member] }));
    assert.deepEqual(
      fleet.problems().map((p) => [p.cause, p.cronJobs]),
      [
        ["group-not-found", ["prod/z"]],
        ["group-not-found", ["prod/y"]],
        ["group-not-found", ["staging/x"]],
      ],
    );
  });
});
