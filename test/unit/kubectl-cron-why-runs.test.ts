// `kubectl cron why` on a slot's runs: its Job and Pods (Pods never created or scheduled, an image that cannot be
// pulled, a crash loop, a Job queued by Kueue or another controller, a run the operator ended for its start timeout, a
// Job that failed), the retries of a failed run (spec.retry: pending, superseded, the attempts made) and runs after an
// upstream CronJob's (spec.after: waiting, its run failed, a missing upstream, a cycle). The scene: test/why-scene.ts.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  AFTER_ANNOTATION,
  afterJobName,
  API_VERSION,
  type CronJob,
  ENDED_MESSAGE_ANNOTATION,
  ENDED_PODS_ANNOTATION,
  ENDED_REASON_ANNOTATION,
  type Job,
  KIND,
  KUEUE_QUEUE_NAME_KEY,
  type RecentRun,
  RETRY_ATTEMPT_ANNOTATION,
  RETRY_OF_ANNOTATION,
  retryJobName,
} from "../../api/v1/index.ts";
import type { CauseId } from "../../cmd/kubectl-cron/answer/causes.ts";
import type { KubeObject } from "../../runtime/kinds.ts";
import type { WhyFacts } from "../../cmd/kubectl-cron/model/facts.ts";
import { batchJob } from "../fixtures.ts";
import {
  ask,
  at,
  cluster,
  createdAtSlot,
  cronJob,
  diagnose,
  entry,
  escapeRe,
  event,
  expectCause,
  facts,
  HUNG_SPEC,
  JOB,
  job,
  NAME,
  note,
  NS,
  pod,
  podFacts,
  PREV_JOB,
  PREV_SLOT,
  producesItsCauses,
  setUpScene,
  SLOT,
  SLOT_TEXT,
  why,
  whyIn,
  ZONE,
} from "../why-scene.ts";
setUpScene();

describe("kubectl cron why NAME: runs that never started, queued Jobs", () => {
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
    const r = await whyIn([
      createdAtSlot(
        {
          outcome: { result: "Failed", reason: "StartTimeout", message, finishedAt: at(SLOT, 304), pods: "ImagePull" },
        },
        { startTimeoutSeconds: 300 },
      ),
      ended,
    ]);
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
    const r = await whyIn([
      createdAtSlot(
        { outcome: { result: "Failed", reason: "StartTimeout", message, finishedAt: at(SLOT, 304) } },
        { startTimeoutSeconds: 300 },
      ),
      ended,
    ]);
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
    const r = await whyIn([createdAtSlot(), queued]);
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
  const FAILED_CREATE = `Error creating: pods "${JOB}-x7k2p" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "backup" must set securityContext.allowPrivilegeEscalation=false)`;
  const UNSCHEDULABLE =
    "0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.";
  const NOT_FOUND =
    'rpc error: code = NotFound desc = failed to pull and unpack image "registry.example.com/backup:1.2.3": not found';
  /** Alike but for what they stage: the slot's Job (its fixture), its Pods and Events; and what `why` must say. */
  const cases: {
    title: string;
    job: Parameters<typeof job>[2];
    objects: KubeObject[];
    cause: CauseId;
    says: Parameters<typeof expectCause>[2];
  }[] = [
    {
      title: "Job active with no Pods, and a FailedCreate Event (PodSecurity): pods-not-created",
      job: {},
      objects: [event("Job", JOB, "FailedCreate", FAILED_CREATE, { count: 23, last: "2026-11-25T11:05:00Z" })],
      cause: "pods-not-created",
      says: {
        verdict: [`started at ${SLOT_TEXT}`, `its Job ${JOB} has no Pod 9h11m after its creation`],
        evidence: [`Event FailedCreate on Job ${JOB} (23×, last 2026-11-25T11:05:00Z): ${FAILED_CREATE}`],
        fix: ["Fix what the Event names"],
      },
    },
    {
      title: "Pod Pending, Unschedulable: the scheduler's message",
      job: { state: "active" },
      objects: [
        pod(`${JOB}-q8w9e`, JOB, {
          phase: "Pending",
          conditions: [{ type: "PodScheduled", status: "False", reason: "Unschedulable", message: UNSCHEDULABLE }],
        }),
      ],
      cause: "pods-unschedulable",
      says: {
        verdict: [`started at ${SLOT_TEXT}`, `its Pod ${JOB}-q8w9e is Pending: Unschedulable`],
        evidence: [`Pod ${JOB}-q8w9e: PodScheduled=False, Unschedulable: ${UNSCHEDULABLE}`],
        fix: ["capacity"],
      },
    },
    {
      title: "image pull error: ErrImagePull with the kubelet's message",
      job: { state: "active" },
      objects: [
        pod(`${JOB}-p1o2i`, JOB, {
          phase: "Pending",
          conditions: [{ type: "PodScheduled", status: "True" }],
          containers: [{ state: { waiting: { reason: "ErrImagePull", message: NOT_FOUND } } }],
        }),
      ],
      cause: "image-pull",
      says: {
        verdict: [`started at ${SLOT_TEXT}`, `its Pod ${JOB}-p1o2i cannot pull its image (ErrImagePull)`],
        evidence: [`Pod ${JOB}-p1o2i container backup: ErrImagePull: ${NOT_FOUND}`],
        fix: ["imagePullSecrets"],
      },
    },
    {
      title: "crash looping: restarts and the last exit code",
      job: { state: "active", start: at(SLOT, 3) },
      objects: [
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
      ],
      cause: "crash-looping",
      says: {
        verdict: [
          `started at ${SLOT_TEXT}`,
          `its Pod ${JOB}-c4r5t keeps crashing (CrashLoopBackOff, 14 restarts, last exit code 2 Error)`,
        ],
        evidence: [
          `Pod ${JOB}-c4r5t: Running; backup waiting: CrashLoopBackOff`,
          "restarted 14 times (last: Error, exit code 2)",
        ],
        fix: [`kubectl logs ${JOB}-c4r5t -n ${NS} --previous`],
      },
    },
  ];
  for (const c of cases) {
    it(c.title, async () => {
      const r = await whyIn([createdAtSlot(), job(JOB, SLOT, c.job), ...c.objects]);
      expectCause(r, c.cause, c.says);
    });
  }

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
    const r = await whyIn([
      createdAtSlot({
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

describe("diagnose(): Jobs and Pods, where the live layer adds nothing", () => {
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
      const r = ask(facts(createdAtSlot(), { jobs: active(), pods }));
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
    const r = ask(facts(createdAtSlot(), { jobs, pods, now: new Date(at(SLOT, 6)) }));
    expectCause(r, "image-pull", {
      verdict: [`started at ${SLOT_TEXT}`, `its Pod ${PREV_JOB}-01dp0 cannot pull its image (ImagePullBackOff)`],
      evidence: [`Job ${JOB} started 5 s ago: its Pods show nothing yet; Job ${PREV_JOB}`, message],
      fix: ["image name or tag"],
    });
    // Half a minute later the run's own Pods would have said so: it is judged on its own.
    const later = ask(facts(createdAtSlot(), { jobs, pods, now: new Date(at(SLOT, 40)) }));
    assert.equal(later.d.status, "healthy", later.d.verdict);
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
      facts(createdAtSlot(), {
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
    const r = await whyIn([cronJob({ spec: retry, status: { recentRuns: [pending, firstRan] } }), failedFirst()]);
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

describe("diagnose(): runs after an upstream (issue 71)", () => {
  const BACKOFF = { reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit" };
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

  it("spec.after, the upstream's run ended and no run after it yet: the evidence names the Job it would be", () => {
    const r = ask(withUp([upJob("complete")]));
    assert.equal(r.d.cause, "not-yet-decided", JSON.stringify(r.d, null, 2));
    const mine = afterJobName(NAME, UP, UP_JOB);
    assert.ok(
      r.d.evidence.some((e) => e.endsWith(`no Job ${mine}`)),
      r.d.evidence.join("\n"),
    );
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

producesItsCauses("runs");
