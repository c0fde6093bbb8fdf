// The CronJob webhooks on what decides when runs happen: the missed-run policy and stopping after failures, runs
// that outlast the schedule's interval (warnings), backfill requests, limits (maxRuns, startTime, endTime), jitter and
// spec.after.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BACKFILL_ANNOTATION, jitterSecondsOf, RESUME_ANNOTATION, worstCaseRetrySeconds } from "../../api/v1/index.ts";
import { fieldErrorString } from "../../runtime/webhook/index.ts";
import { defaultCronJob, validateCronJob, validateCronJobRequest } from "../../webhooks/cronjob_webhook.ts";
import { minimalCronJob, variant } from "../fixtures.ts";
import { call, request, withSpec } from "../admission.ts";
import { afterCycleCheck } from "../../webhooks/admission_check.ts";

describe("missed-run policy and stop after failures at admission", () => {
  it("defaults maxCatchUpRuns to 10 only with missedRunPolicy RunAll; a CronJob without the fields gets no new default", () => {
    const runAll = variant(minimalCronJob("a"), (o) => (o.spec.missedRunPolicy = "RunAll"));
    assert.ok(defaultCronJob(runAll).some((op) => op.path === "/spec/maxCatchUpRuns" && op.value === 10));
    const set = variant(runAll, (o) => (o.spec.maxCatchUpRuns = 3));
    assert.ok(!defaultCronJob(set).some((op) => op.path === "/spec/maxCatchUpRuns"));
    // null is unset, as for the other defaults.
    const nulled = variant(runAll, (o) => (o.spec.maxCatchUpRuns = null));
    assert.ok(defaultCronJob(nulled).some((op) => op.path === "/spec/maxCatchUpRuns" && op.value === 10));
    for (const policy of [undefined, "RunLatest", "Skip"]) {
      const o = variant(minimalCronJob("a"), (x) => (x.spec.missedRunPolicy = policy));
      assert.ok(!defaultCronJob(o).some((op) => op.path === "/spec/maxCatchUpRuns"), String(policy));
    }
  });

  it("refuses an unknown policy and out-of-range values, naming the field and the value", () => {
    const cases: Array<[(s: Record<string, unknown>) => void, string, RegExp]> = [
      [(s) => (s.missedRunPolicy = "Sometimes"), "spec.missedRunPolicy", /Sometimes/],
      [(s) => ((s.missedRunPolicy = "RunAll"), (s.maxCatchUpRuns = 0)), "spec.maxCatchUpRuns", /0/],
      [(s) => ((s.missedRunPolicy = "RunAll"), (s.maxCatchUpRuns = 101)), "spec.maxCatchUpRuns", /101/],
      [(s) => (s.stopAfterConsecutiveFailures = 0), "spec.stopAfterConsecutiveFailures", /0/],
      [(s) => (s.stopAfterConsecutiveFailures = 1001), "spec.stopAfterConsecutiveFailures", /1001/],
      [(s) => (s.stopAfterConsecutiveFailures = 2.5), "spec.stopAfterConsecutiveFailures", /2\.5/],
    ];
    for (const [change, field, value] of cases) {
      const { errors } = validateCronJob(withSpec(change));
      assert.equal(errors.length, 1, `${field}: ${JSON.stringify(errors)}`);
      assert.equal(errors[0]!.field, field);
      assert.match(fieldErrorString(errors[0]!), value);
    }
  });

  it("refuses maxCatchUpRuns without RunAll, saying which policy is set", () => {
    const { errors } = validateCronJob(withSpec((s) => ((s.missedRunPolicy = "Skip"), (s.maxCatchUpRuns = 5))));
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.field, "spec.maxCatchUpRuns");
    assert.match(fieldErrorString(errors[0]!), /only used with spec.missedRunPolicy "RunAll" \(the policy is "Skip"\)/);
  });

  it("admits every policy, and RunAll with Replace with a warning", () => {
    for (const p of ["RunLatest", "Skip", "RunAll"]) {
      assert.deepEqual(validateCronJob(withSpec((s) => (s.missedRunPolicy = p))).errors, [], p);
    }
    const r = validateCronJob(withSpec((s) => ((s.missedRunPolicy = "RunAll"), (s.concurrencyPolicy = "Replace"))));
    assert.deepEqual(r.errors, []);
    assert.match(r.warnings.join("\n"), /runs only the newest missed time/);
    assert.deepEqual(validateCronJob(withSpec((s) => (s.stopAfterConsecutiveFailures = 3))).errors, []);
  });

  it("refuses a resume request longer than 253 characters, naming the annotation", () => {
    const o = variant(minimalCronJob("a"), (x) => (x.metadata.annotations = { [RESUME_ANNOTATION]: "x".repeat(254) }));
    const { errors } = validateCronJob(o);
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.field, `metadata.annotations[${RESUME_ANNOTATION}]`);
  });

  it("admits a resume request of 253 characters, counted trimmed", () => {
    for (const value of ["x".repeat(253), `  ${"x".repeat(253)}  `]) {
      const o = variant(minimalCronJob("a"), (x) => (x.metadata.annotations = { [RESUME_ANNOTATION]: value }));
      assert.deepEqual(validateCronJob(o).errors, [], JSON.stringify(value));
    }
  });
});

describe("runs that outlast the schedule's interval: warnings at admission", () => {
  const FORBID_HOURLY =
    'spec.concurrencyPolicy: "Forbid" without spec.jobTemplate.spec.activeDeadlineSeconds: a Job that hangs holds back every later run until someone deletes it; set activeDeadlineSeconds below the schedule\'s shortest interval between runs (1h, 3600 s)';
  const job = (s: Record<string, any>) => s.jobTemplate.spec as Record<string, any>;
  const hourly = (mutate: (spec: Record<string, any>) => void) =>
    withSpec((s) => {
      s.schedule = "0 * * * *";
      mutate(s);
    });

  it("warns of concurrencyPolicy Forbid without activeDeadlineSeconds, naming the schedule's interval", async () => {
    const r = await call(
      validateCronJobRequest,
      request(
        "CREATE",
        hourly((s) => (s.concurrencyPolicy = "Forbid")),
      ),
    );
    assert.equal(r.allowed, true);
    assert.deepEqual(r.warnings, [FORBID_HOURLY]);
    // The minimal CronJob's */5: 5m.
    assert.deepEqual(validateCronJob(withSpec((s) => (s.concurrencyPolicy = "Forbid"))).warnings, [
      FORBID_HOURLY.replace("(1h, 3600 s)", "(5m, 300 s)"),
    ]);
    // Any deadline bounds a hung Job; the other policies never hold a run back.
    for (const quiet of [
      hourly((s) => ((s.concurrencyPolicy = "Forbid"), (job(s).activeDeadlineSeconds = 1))),
      hourly((s) => ((s.concurrencyPolicy = "Forbid"), (job(s).activeDeadlineSeconds = 86_400))),
      hourly((s) => (s.concurrencyPolicy = "Allow")),
      hourly((s) => (s.concurrencyPolicy = "Replace")),
      hourly(() => undefined),
    ]) {
      assert.deepEqual(validateCronJob(quiet).warnings, [], JSON.stringify(quiet.spec));
    }
  });

  it("a Forbid CronJob whose schedule does not parse is still told, without an interval", () => {
    const r = validateCronJob(withSpec((s) => ((s.concurrencyPolicy = "Forbid"), (s.schedule = "61 * * * *"))));
    assert.deepEqual(
      r.errors.map((e) => e.field),
      ["spec.schedule"],
    );
    assert.deepEqual(r.warnings, [FORBID_HOURLY.replace(" (1h, 3600 s)", "")]);
  });

  it("the worst case of backoffLimit retries: 10 s doubling, at most 6 minutes each, without the Pods' run time", () => {
    for (const [limit, seconds] of [
      [0, 0],
      [1, 10],
      [2, 30],
      [5, 310],
      [6, 630],
      [7, 990],
      [15, 3870],
    ] as const) {
      let sum = 0;
      for (let i = 1; i <= limit; i++) sum += Math.min(10 * 2 ** (i - 1), 360);
      assert.equal(sum, seconds, `the sum for ${limit}`);
      assert.equal(worstCaseRetrySeconds(limit), seconds, String(limit));
    }
    // The largest value the API server takes, at once.
    assert.equal(worstCaseRetrySeconds(2 ** 31 - 1), 630 + (2 ** 31 - 1 - 6) * 360);
    assert.equal(worstCaseRetrySeconds(6, "Never"), 630);
  });

  it("with restartPolicy OnFailure, the kubelet's container restarts: 10 s doubling, at most 5 minutes each", () => {
    for (const limit of [0, 1, 2, 5, 6, 7, 15, 100]) {
      let sum = 0;
      for (let i = 1; i <= limit; i++) sum += Math.min(10 * 2 ** (i - 1), 300);
      assert.equal(worstCaseRetrySeconds(limit, "OnFailure"), sum, String(limit));
    }
    assert.equal(worstCaseRetrySeconds(6, "OnFailure"), 610);
    assert.equal(worstCaseRetrySeconds(2 ** 31 - 1, "OnFailure"), 310 + (2 ** 31 - 1 - 5) * 300);
  });

  it("warns of a backoffLimit whose retries outlast the interval, just over it and not just under", () => {
    // */5 (300 s): 4 retries wait 150 s, 5 wait 310 s.
    const limit = (n: number, mutate: (s: Record<string, any>) => void = () => undefined) =>
      validateCronJob(
        withSpec((s) => {
          job(s).backoffLimit = n;
          job(s).template.spec.restartPolicy = "Never";
          mutate(s);
        }),
      ).warnings;
    assert.deepEqual(limit(4), []);
    assert.deepEqual(limit(5), [
      "spec.jobTemplate.spec.backoffLimit: 5 retries of a failing Pod take at least 5m10s (310 s: the Job controller waits 10 s before the first retry, doubling up to 6m, and the Pods' own run time comes on top), longer than the schedule's shortest interval between runs (5m, 300 s): a failing run retries past the next scheduled time, and with concurrencyPolicy \"Allow\" the next runs start beside it and pile up; set spec.jobTemplate.spec.activeDeadlineSeconds to at most 300 or a smaller backoffLimit",
    ]);
    // Hourly (3600 s): 14 retries wait 3510 s, 15 wait 3870 s.
    const hourlyLimit = (n: number, restartPolicy = "Never") =>
      validateCronJob(
        hourly((s) => {
          job(s).backoffLimit = n;
          job(s).template.spec.restartPolicy = restartPolicy;
        }),
      ).warnings;
    assert.deepEqual(hourlyLimit(14), []);
    assert.equal(hourlyLimit(15).length, 1);
    assert.match(
      hourlyLimit(15)[0]!,
      /^spec\.jobTemplate\.spec\.backoffLimit: 15 retries of a failing Pod take at least 1h4m30s \(3870 s: /,
    );
    assert.match(hourlyLimit(15)[0]!, /\(1h, 3600 s\)/);
    // OnFailure: the kubelet restarts the container, capped at 5 minutes: 15 restarts wait 3310 s, 16 wait 3610 s.
    assert.deepEqual(hourlyLimit(15, "OnFailure"), []);
    assert.deepEqual(hourlyLimit(16, "OnFailure"), [
      "spec.jobTemplate.spec.backoffLimit: 16 retries of a failing Pod take at least 1h10s (3610 s: with restartPolicy OnFailure the kubelet restarts the container in its Pod, waiting 10 s before the first restart, doubling up to 5m, and the Pods' own run time comes on top), longer than the schedule's shortest interval between runs (1h, 3600 s): a failing run retries past the next scheduled time, and with concurrencyPolicy \"Allow\" the next runs start beside it and pile up; set spec.jobTemplate.spec.activeDeadlineSeconds to at most 3600 or a smaller backoffLimit",
    ]);
    // activeDeadlineSeconds at most the interval ends the retries in time; one second more does not.
    assert.deepEqual(
      limit(5, (s) => (job(s).activeDeadlineSeconds = 300)),
      [],
    );
    assert.deepEqual(
      limit(5, (s) => (job(s).activeDeadlineSeconds = 60)),
      [],
    );
    assert.equal(limit(5, (s) => (job(s).activeDeadlineSeconds = 301)).length, 1);
    // The API server's default (6, when unset) and 0 are not warned of.
    assert.deepEqual(validateCronJob(withSpec((s) => (s.schedule = "* * * * *"))).warnings, []);
    assert.deepEqual(
      limit(0, (s) => (s.schedule = "* * * * *")),
      [],
    );
  });

  it("says what the concurrency policy does with the runs the retries overlap", () => {
    const with_ = (policy: string) =>
      validateCronJob(
        withSpec((s) => {
          s.concurrencyPolicy = policy;
          job(s).backoffLimit = 5;
          job(s).activeDeadlineSeconds = 301;
        }),
      ).warnings;
    assert.match(
      with_("Forbid").join("\n"),
      /with concurrencyPolicy "Forbid" the next runs are held back until it ends;/,
    );
    assert.match(with_("Replace").join("\n"), /with concurrencyPolicy "Replace" the next run kills it;/);
    assert.match(
      with_("Allow").join("\n"),
      /with concurrencyPolicy "Allow" the next runs start beside it and pile up;/,
    );
    // Forbid without a deadline: both warnings, the hang first.
    const both = validateCronJob(
      hourly((s) => ((s.concurrencyPolicy = "Forbid"), (job(s).backoffLimit = 16))),
    ).warnings;
    assert.equal(both.length, 2);
    assert.equal(both[0], FORBID_HOURLY);
    assert.match(both[1]!, /^spec\.jobTemplate\.spec\.backoffLimit: 16 /);
  });

  it("measures the interval from the creation time, else the admission time: the same object, the same warning", () => {
    // A daily 09:00 in Berlin has 23h between its runs around the day the clocks go forward.
    const daily = (created?: string) =>
      variant(minimalCronJob("cj"), (o) => {
        o.spec.schedule = "0 9 * * *";
        o.spec.timeZone = "Europe/Berlin";
        o.spec.concurrencyPolicy = "Forbid";
        if (created) o.metadata.creationTimestamp = created;
      });
    const now = new Date("2026-06-01T00:00:00Z");
    assert.match(validateCronJob(daily("2026-03-20T00:00:00Z"), { now }).warnings[0]!, /\(23h, 82800 s\)$/);
    assert.match(validateCronJob(daily("2026-04-10T00:00:00Z"), { now }).warnings[0]!, /\(1d, 86400 s\)$/);
    assert.match(validateCronJob(daily(), { now: new Date("2026-03-20T00:00:00Z") }).warnings[0]!, /\(23h, 82800 s\)$/);
  });
});

describe("backfill requests at admission", () => {
  const now = new Date("2026-11-23T12:00:00Z");
  const withBackfill = (value: string, schedule = "0 * * * *") =>
    variant(minimalCronJob("a"), (o) => {
      o.metadata.annotations = { [BACKFILL_ANNOTATION]: value };
      o.spec.schedule = schedule;
    });
  const req = (from: string, to: string, extra: object = {}) => JSON.stringify({ id: "b1", from, to, ...extra });
  const field = `metadata.annotations[${BACKFILL_ANNOTATION}]`;

  it("admits a range of past slots", () => {
    assert.deepEqual(
      validateCronJob(withBackfill(req("2026-11-20T00:00:00Z", "2026-11-21T00:00:00Z")), { now }).errors,
      [],
    );
  });

  it("admits a range of exactly 1000 slots that ends now, and refuses 1001", () => {
    const everyMinute = (from: string) => withBackfill(req(from, "2026-11-23T12:00:00Z"), "* * * * *");
    // 19:21 to 12:00 the next day, both included: 999 minutes apart, 1000 slots; `to` is the admission time itself.
    assert.deepEqual(validateCronJob(everyMinute("2026-11-22T19:21:00Z"), { now }).errors, []);
    const over = validateCronJob(everyMinute("2026-11-22T19:20:00Z"), { now }).errors;
    assert.equal(over.length, 1);
    assert.equal(over[0]!.field, field);
    assert.match(fieldErrorString(over[0]!), /holds more than 1000 slots/);
  });

  it("refuses a malformed request, a reversed or future range, and more than 1000 slots", () => {
    const cases: Array<[string, RegExp]> = [
      ["tomorrow", /must be JSON/],
      [req("yesterday", "2026-11-21T00:00:00Z"), /from must be an RFC 3339 time/],
      [req("2026-11-21T00:00:00Z", "2026-11-20T00:00:00Z"), /is after to/],
      [req("2026-11-20T00:00:00Z", "2026-11-24T00:00:00Z"), /is in the future/],
      [
        req("2026-11-20T00:00:00Z", "2026-11-21T00:00:00Z", { parallelism: 0 }),
        /parallelism must be an integer from 1 to 100/,
      ],
      [req("2026-09-01T00:00:00Z", "2026-11-21T00:00:00Z"), /holds more than 1000 slots of the schedule; at most 1000/],
    ];
    for (const [value, message] of cases) {
      const { errors } = validateCronJob(withBackfill(value), { now });
      assert.equal(errors.length, 1, value);
      assert.equal(errors[0]!.field, field);
      assert.match(fieldErrorString(errors[0]!), message);
    }
  });

  it("the admission handler passes the stored request: an update that keeps it is not refused for it", async () => {
    // A past range (the handler checks against the real time).
    const value = req("2025-11-20T00:00:00Z", "2025-11-21T00:00:00Z");
    const everyMinute = withBackfill(value, "* * * * *");
    const stored = withBackfill(value);
    assert.equal((await call(validateCronJobRequest, request("UPDATE", everyMinute, stored))).allowed, true);
    assert.equal((await call(validateCronJobRequest, request("CREATE", everyMinute))).allowed, false);
  });

  it("quotes at most 64 characters of a value in its message (the annotation may hold 256 KiB)", () => {
    const { errors } = validateCronJob(withBackfill(req("x".repeat(100_000), "2026-11-21T00:00:00Z")), { now });
    assert.equal(errors.length, 1);
    assert.ok(errors[0]!.detail!.length < 300, errors[0]!.detail);
    assert.match(errors[0]!.detail!, /more characters/);
  });

  it("does not check an unchanged request again (its range may hold more slots after a schedule change)", () => {
    const value = req("2026-11-20T00:00:00Z", "2026-11-21T00:00:00Z");
    const o = withBackfill(value, "* * * * *");
    assert.equal(validateCronJob(o, { now }).errors.length, 1);
    assert.deepEqual(validateCronJob(o, { now, oldAnnotations: { [BACKFILL_ANNOTATION]: value } }).errors, []);
  });
});

describe("limits at admission: maxRuns, startTime, endTime", () => {
  it("refuses a bad time, an end not after the start and maxRuns below 1, naming the field and the value", () => {
    const cases: Array<[(s: Record<string, unknown>) => void, string, RegExp]> = [
      [(s) => (s.startTime = "tomorrow"), "spec.startTime", /tomorrow/],
      [(s) => (s.endTime = "2026-13-01T00:00:00Z"), "spec.endTime", /2026-13-01/],
      [
        (s) => ((s.startTime = "2026-12-01T00:00:00Z"), (s.endTime = "2026-12-01T00:00:00Z")),
        "spec.endTime",
        /must be after spec.startTime \(2026-12-01T00:00:00Z\)/,
      ],
      [(s) => (s.maxRuns = 0), "spec.maxRuns", /0/],
      [(s) => (s.maxRuns = 1.5), "spec.maxRuns", /1\.5/],
    ];
    for (const [change, field, value] of cases) {
      const { errors } = validateCronJob(withSpec(change));
      assert.ok(errors.length >= 1, `${field}: no error`);
      assert.ok(
        errors.every((e) => e.field === field),
        `${field}: ${JSON.stringify(errors)}`,
      );
      assert.match(fieldErrorString(errors[0]!), value);
    }
  });

  it("admits a window and maxRuns", () => {
    const limits = (s: Record<string, unknown>) => {
      s.startTime = "2026-12-01T00:00:00Z";
      s.endTime = "2026-12-02T00:00:00+01:00";
      s.maxRuns = 5;
    };
    assert.deepEqual(validateCronJob(withSpec(limits)).errors, []);
  });
});

describe("jitter at admission", () => {
  it("refuses a jitter that is no duration, not whole seconds, below 1s, or not shorter than the schedule's closest slots", () => {
    const cases: Array<[(s: Record<string, unknown>) => void, RegExp]> = [
      [(s) => (s.jitter = "soon"), /"soon".*Go duration/],
      [(s) => (s.jitter = "500ms"), /whole seconds/],
      [(s) => (s.jitter = "0s"), /"0s".*at least 1s/],
      [(s) => (s.jitter = "1.5s"), /"1\.5s".*whole seconds/],
      [(s) => (s.jitter = "1m0.25s"), /"1m0\.25s".*whole seconds/],
      [
        (s) => ((s.schedule = "*/5 * * * *"), (s.jitter = "5m")),
        /shorter than the 5m0s between the schedule's closest slots/,
      ],
      [(s) => ((s.schedule = "@every 90s"), (s.jitter = "2m")), /shorter than the 1m30s/],
    ];
    for (const [change, message] of cases) {
      const { errors } = validateCronJob(withSpec(change));
      assert.equal(errors.length, 1, JSON.stringify(errors));
      assert.equal(errors[0]!.field, "spec.jitter");
      assert.match(fieldErrorString(errors[0]!), message);
    }
  });

  it("a jitter stored before fractions were refused keeps its whole seconds", () => {
    assert.equal(jitterSecondsOf({ jitter: "1.5s" }), 1);
    assert.equal(jitterSecondsOf({ jitter: "2m30.9s" }), 150);
  });

  it("admits a jitter shorter than the gap, and warns of an end time already past", () => {
    assert.deepEqual(validateCronJob(withSpec((s) => ((s.schedule = "*/5 * * * *"), (s.jitter = "4m59s")))).errors, []);
    const past = validateCronJob(withSpec((s) => (s.endTime = "2020-01-01T00:00:00Z")));
    assert.deepEqual(past.errors, []);
    assert.match(past.warnings.join("\n"), /spec.endTime: 2020-01-01T00:00:00Z has passed/);
    // A slot at the end time still runs: at that very instant it has not passed.
    const endsNow = withSpec((s) => (s.endTime = "2026-11-23T12:00:00Z"));
    assert.deepEqual(validateCronJob(endsNow, { now: new Date("2026-11-23T12:00:00Z") }).warnings, []);
    assert.equal(validateCronJob(endsNow, { now: new Date("2026-11-23T12:00:00.001Z") }).warnings.length, 1);
  });
});

describe("spec.after at admission", () => {
  const after = (...names: string[]) => names.map((cronJob) => ({ cronJob }));
  it("refuses another namespace, itself, a name twice, more than 5, naming the field and the value", () => {
    const cases: Array<[(s: Record<string, unknown>) => void, string, RegExp]> = [
      [(s) => (s.after = after("other/extract")), "spec.after[0].cronJob", /other\/extract.*this namespace/],
      [(s) => (s.after = after("cj")), "spec.after[0].cronJob", /cannot run after itself/],
      [(s) => (s.after = after("x", "x")), "spec.after[1].cronJob", /named twice/],
      [(s) => (s.after = after("p", "q", "r", "s", "t", "u")), "spec.after", /5/],
      [(s) => (s.after = [{ cronJob: "x", when: "Sometimes" }]), "spec.after[0].when", /Sometimes/],
    ];
    for (const [change, field, value] of cases) {
      const { errors } = validateCronJob(withSpec(change));
      assert.ok(errors.length >= 1, `${field}: no error`);
      assert.equal(errors[0]!.field, field, JSON.stringify(errors));
      assert.match(fieldErrorString(errors[0]!), value);
    }
  });

  it("needs a schedule unless spec.after names upstreams; admits one without", () => {
    const none = validateCronJob(withSpec((s) => delete s.schedule));
    assert.ok(
      none.errors.some((e) => e.field === "spec.schedule"),
      JSON.stringify(none.errors),
    );
    const afterOnly = validateCronJob(withSpec((s) => ((s.after = after("extract")), delete s.schedule)));
    assert.deepEqual(afterOnly.errors, []);
  });

  it("refuses a cycle through the cluster's CronJobs, naming the path", () => {
    const cluster: Record<string, string[]> = { extract: ["load"], load: ["cj"] };
    const { errors } = validateCronJob(
      withSpec((s) => (s.after = after("extract"))),
      { inputs: [afterCycleCheck((_ns, name) => cluster[name])] },
    );
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.field, "spec.after");
    assert.match(fieldErrorString(errors[0]!), /makes a cycle: cj runs after extract runs after load runs after cj/);
    const chain = validateCronJob(
      withSpec((s) => (s.after = after("extract"))),
      { inputs: [afterCycleCheck((_ns, name) => ({ extract: ["load"] })[name])] },
    );
    assert.deepEqual(chain.errors, [], "a chain without a cycle is fine");
  });

  it("spec.afterPolicy All needs spec.after: refused without, naming the field and the value", () => {
    const { errors } = validateCronJob(withSpec((s) => (s.afterPolicy = "All")));
    assert.deepEqual(errors.map(fieldErrorString), [
      'spec.afterPolicy: Invalid value: "All": joins the upstreams spec.after names: set spec.after',
    ]);
    const join = validateCronJob(withSpec((s) => ((s.after = after("eu", "us")), (s.afterPolicy = "All"))));
    assert.deepEqual(join.errors, []);
    const other = validateCronJob(withSpec((s) => ((s.after = after("eu")), (s.afterPolicy = "Sometimes"))));
    assert.equal(other.errors[0]?.field, "spec.afterPolicy", JSON.stringify(other.errors));
  });
});
