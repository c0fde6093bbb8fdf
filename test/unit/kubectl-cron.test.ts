// The kubectl plugin's pure parts: argument handling and exit codes, next fire times with DST notes, history rows.
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type RequestListener } from "node:http";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { describe, it } from "node:test";
import { parse as parseYaml } from "yaml";
import {
  API_VERSION,
  BACKFILL_ANNOTATION,
  KIND,
  RESUME_ANNOTATION,
  CRONJOB_NAME_LABEL,
  manualJobName,
  RUN_NOW_REQUEST_ANNOTATION,
  INSTANTIATE_ANNOTATION,
  RETRY_ATTEMPT_ANNOTATION,
  RETRY_OF_ANNOTATION,
  retryJobName,
} from "../../api/v1/index.ts";
import { parseSchedule, resolveHashedSchedule } from "../../api/v1/schedule/index.ts";
import type { Job } from "../../api/v1/index.ts";
import type { CronJob } from "../../api/v1/index.ts";
import type { Client } from "../../runtime/client.ts";
import { parseCommandLine, UsageError } from "../../cmd/kubectl-cron/model/args.ts";
import { historyRows } from "../../cmd/kubectl-cron/answer/history.ts";
import { humanDuration } from "../../cmd/kubectl-cron/model/time.ts";
import {
  backfill,
  history,
  list,
  next,
  runNow,
  setSuspend,
  WaitTimeout,
} from "../../cmd/kubectl-cron/commands/commands.ts";
import type { Context } from "../../cmd/kubectl-cron/model/context.ts";
import { APIError } from "../../runtime/errors.ts";
import { EXIT, main } from "../../cmd/kubectl-cron/main.ts";
import { type FireTime, nextRuns } from "../../cmd/kubectl-cron/model/slots.ts";
import { cronJobSchedules } from "../../api/v1/index.ts";
import type { HashKey } from "../../api/v1/schedule/index.ts";
import { fieldErrorString } from "../../runtime/field.ts";

/**
 * The next fire times of one schedule given as text, as `kubectl cron next` computes them for a CronJob with just
 * that schedule (cronJobSchedules, then nextRuns): what it runs as, and the times.
 */
function nextFireTimes(input: {
  schedule: string;
  timeZone?: string;
  key?: HashKey;
  anchor?: Date;
  now: Date;
  count: number;
}):
  | { ok: true; resolvedSchedule: string; hashed: boolean; timeZone: string; times: FireTime[] }
  | { ok: false; error: string } {
  const key = input.key ?? { namespace: "", name: "" };
  const spec = { schedule: input.schedule, ...(input.timeZone !== undefined ? { timeZone: input.timeZone } : {}) };
  const parsed = cronJobSchedules({ metadata: {}, spec }, key);
  if (!parsed.ok) return { ok: false, error: parsed.errors.map(fieldErrorString).join("; ") };
  const [entry] = parsed.schedules.entries;
  return {
    ok: true,
    resolvedSchedule: entry!.resolvedSchedule,
    hashed: entry!.resolvedSchedule !== entry!.schedule,
    timeZone: parsed.schedules.schedule.timeZone,
    times: nextRuns(parsed.schedules, input.anchor, input.now, input.count),
  };
}
import { table } from "../../cmd/kubectl-cron/model/table.ts";
import { batchJob, type JobFixture } from "../fixtures.ts";
import type { KubeObject } from "../../runtime/kinds.ts";
import { pluginCluster } from "../plugin-cluster.ts";

async function runMain(argv: string[], env: NodeJS.ProcessEnv = { KUBECONFIG: "/nonexistent/kubeconfig" }) {
  let out = "";
  let err = "";
  const code = await main(argv, { stdout: (s) => (out += s), stderr: (s) => (err += s), env });
  return { code, out, err };
}

describe("kubectl cron: command line", () => {
  it("parses kubectl-style flags; -n is the namespace, --count the number of times", () => {
    const a = parseCommandLine(["next", "backup", "-n", "ops", "--count", "7", "-o", "json", "--context", "prod"]);
    assert.notEqual(a, "help");
    if (a === "help") return;
    assert.deepEqual(
      { command: a.command, name: a.name, ns: a.namespace, count: a.count, output: a.output, context: a.context },
      { command: "next", name: "backup", ns: "ops", count: 7, output: "json", context: "prod" },
    );
    const r = parseCommandLine(["run", "backup", "--no-wait", "--timeout=2m"]);
    assert.ok(r !== "help" && r.wait === false && r.timeoutSeconds === 120);
    const m = parseCommandLine(["migrate", "-A", "-l", "team=data", "--dry-run", "--settle=1m", "-o", "yaml"]);
    assert.ok(m !== "help");
    assert.deepEqual(
      [m.name, m.allNamespaces, m.selector, m.dryRun, m.settleSeconds, m.output],
      ["", true, "team=data", true, 60, "yaml"],
    );
    const most = parseCommandLine(["next", "backup", "--count", "1000"]);
    assert.ok(most !== "help" && most.count === 1000, "--count takes up to 1000");
    const u = parseCommandLine(["unmigrate", "backup", "--delete"]);
    assert.ok(u !== "help" && u.delete && u.settleSeconds === 5 && !u.allNamespaces);
  });

  it("--request-timeout reads kubectl's forms; the default is the API server's own 60 s", () => {
    const timeout = (...flag: string[]) => {
      const a = parseCommandLine(["next", "x", ...flag]);
      return a === "help" ? undefined : a.requestTimeoutMs;
    };
    assert.equal(timeout(), 60_000);
    assert.equal(timeout("--request-timeout=0"), 0, "0: no client-side limit");
    assert.equal(timeout("--request-timeout=90"), 90_000, "a bare number is seconds");
    assert.equal(timeout("--request-timeout=1m30s"), 90_000);
    assert.equal(timeout("--request-timeout", "250ms"), 250);
    assert.equal(timeout("--request-timeout=1h"), 3_600_000);
    for (const bad of ["soon", "", "5x", "-1s", "1m soon"]) {
      assert.throws(
        () => parseCommandLine(["next", "x", `--request-timeout=${bad}`]),
        (e: unknown) =>
          e instanceof UsageError && e.message.includes(`--request-timeout`) && e.message.includes(JSON.stringify(bad)),
        bad,
      );
    }
  });

  it("refuses what it does not understand, naming the value", () => {
    for (const [argv, re] of [
      [["frobnicate", "x"], /unknown command "frobnicate"/],
      [["next"], /needs the CronJob's name/],
      [["next", "x", "--count", "0"], /--count: .* got "0"/],
      [["next", "x", "--count", "abc"], /--count: .* got "abc"/],
      [["run", "x", "--timeout", "soon"], /--timeout: .* got "soon"/],
      [["next", "x", "-o", "wide"], /--output: want json or yaml .* got "wide"/],
      [["migrate", "x", "-A"], /NAME and -A/],
      [["list", "-A", "-n", "ops"], /-n\/--namespace and -A/],
      [["next", "x", "--dry-run"], /--dry-run does not apply to next/],
      [["run", "x", "--delete"], /--delete does not apply to run/],
      [["migrate", "--settle", "soon"], /--settle: .* got "soon"/],
      [["next", "x", "y"], /unexpected arguments: y/],
      [["next", "x", "--bogus"], /bogus/],
    ] as const) {
      assert.throws(
        () => parseCommandLine([...argv]),
        (e: unknown) => e instanceof UsageError && re.test(e.message),
      );
    }
  });

  it("exit codes: 0 for help, 2 for usage, 1 when the cluster cannot be used", async () => {
    assert.equal((await runMain(["--help"])).code, EXIT.ok);
    assert.match((await runMain([])).out, /Usage:/);
    const usage = await runMain(["next"]);
    assert.equal(usage.code, EXIT.usage);
    assert.match(usage.err, /kubectl cron --help/);
    const noConfig = await runMain(["next", "backup"]);
    assert.equal(noConfig.code, EXIT.failed);
    assert.match(noConfig.err, /cannot read the kubeconfig \(KUBECONFIG=\/nonexistent\/kubeconfig\)/);
  });

  it("--help lists each exit code with the number main returns for it", async () => {
    const help = (await runMain(["--help"])).out.replaceAll("\n", " ");
    const codes = /Exit codes: (.*)$/.exec(help)?.[1] ?? "";
    assert.match(codes, new RegExp(`\\b${EXIT.failed} the cluster refused or could not be reached`));
    assert.match(codes, new RegExp(`\\b${EXIT.usage} wrong usage`));
    assert.match(codes, new RegExp(`\\b${EXIT.timeout} run: the request was made but no Job appeared`));
    assert.match(codes, new RegExp(`\\b${EXIT.refused} migrate/unmigrate refused some objects`));
    assert.doesNotMatch(codes, new RegExp(`\\b${EXIT.failed} [^;]*migrate/unmigrate refused`));
  });
});

describe("kubectl cron next", () => {
  it("computes exactly the controller's slots", () => {
    const now = new Date("2026-06-01T10:17:00Z");
    const r = nextFireTimes({ schedule: "*/20 9-17 * * 1-5", timeZone: "Asia/Kathmandu", now, count: 12 });
    assert.ok(r.ok);
    const s = parseSchedule("*/20 9-17 * * 1-5", "Asia/Kathmandu");
    assert.ok(s.ok);
    let t = now;
    for (const ft of r.times) {
      t = s.schedule.next(t);
      assert.equal(ft.utc, t.toISOString().replace(".000", ""));
      assert.match(ft.time, /\+05:45$/);
    }
  });

  it("marks a slot moved out of a DST gap and the offset change", () => {
    const r = nextFireTimes({
      schedule: "30 2 * * *",
      timeZone: "Europe/Berlin",
      now: new Date("2026-03-28T12:00:00Z"),
      count: 2,
    });
    assert.ok(r.ok);
    assert.equal(r.times[0]?.time, "2026-03-29T03:30:00+02:00");
    assert.match(r.times[0]?.note ?? "", /offset changed \+01:00 → \+02:00/);
    assert.match(r.times[0]?.note ?? "", /does not exist on 2026-03-29 .* runs at 03:30/);
    assert.equal(r.times[1]?.note, undefined);
  });

  it("marks a repeated hour: once for a fixed hour, twice for an hourly schedule", () => {
    const fixed = nextFireTimes({
      schedule: "30 1 * * *",
      timeZone: "America/New_York",
      now: new Date("2026-10-31T12:00:00Z"),
      count: 1,
    });
    assert.ok(fixed.ok);
    assert.match(fixed.times[0]?.note ?? "", /01:30 happens twice today .* runs once, at the first/);
    const hourly = nextFireTimes({
      schedule: "30 * * * *",
      timeZone: "America/New_York",
      now: new Date("2026-11-01T05:00:00Z"),
      count: 2,
    });
    assert.ok(hourly.ok);
    assert.deepEqual(
      hourly.times.map((t) => t.time),
      ["2026-11-01T01:30:00-04:00", "2026-11-01T01:30:00-05:00"],
    );
    assert.match(hourly.times[1]?.note ?? "", /01:30 again/);
  });

  it("counts @every from the anchor, and reports an invalid schedule with the field", () => {
    const r = nextFireTimes({
      schedule: "@every 90m",
      now: new Date("2026-11-01T04:00:00Z"),
      anchor: new Date("2026-11-01T00:00:00Z"),
      count: 2,
    });
    assert.ok(r.ok);
    assert.deepEqual(
      r.times.map((t) => t.time),
      ["2026-11-01T04:30:00Z", "2026-11-01T06:00:00Z"],
    );
    const bad = nextFireTimes({ schedule: "61 * * * *", now: new Date(), count: 1 });
    assert.ok(!bad.ok && /spec\.schedule: Invalid value: "61 \* \* \* \*"/.test(bad.error));
  });
});

describe("kubectl cron next: hashed schedules", () => {
  const cronJob = (schedule: string) =>
    ({
      apiVersion: "batch.tutorial.kubebuilder.io/v1",
      kind: "CronJob",
      metadata: { name: "backup", namespace: "prod", creationTimestamp: "2026-01-01T00:00:00Z" },
      spec: { schedule, timeZone: "Europe/Berlin", jobTemplate: { spec: { template: { spec: {} } } } },
    }) as unknown as CronJob;
  const ctxFor = (obj: CronJob): Context => ({
    client: { get: async () => obj } as unknown as Client,
    namespace: "prod",
    now: () => new Date("2026-06-01T10:17:00Z"),
    sleep: async () => undefined,
  });
  const args = (output: "table" | "json") => {
    const a = parseCommandLine(["next", "backup", "-n", "prod", "--count", "3", "-o", output]);
    assert.ok(a !== "help");
    return a;
  };

  it("resolves H with the CronJob's namespace/name and computes the controller's slots", () => {
    const key = { namespace: "prod", name: "backup" };
    const now = new Date("2026-06-01T10:17:00Z");
    const r = nextFireTimes({ schedule: "H H(9-17) * * 1-5", timeZone: "Europe/Berlin", key, now, count: 4 });
    assert.ok(r.ok);
    const resolved = resolveHashedSchedule("H H(9-17) * * 1-5", key);
    assert.ok(resolved.ok);
    assert.equal(r.resolvedSchedule, resolved.resolved);
    assert.equal(r.hashed, true);
    const s = parseSchedule(resolved.resolved, "Europe/Berlin");
    assert.ok(s.ok);
    let t = now;
    for (const ft of r.times) {
      t = s.schedule.next(t);
      assert.equal(ft.utc, t.toISOString().replace(".000", ""));
    }
    // Without H nothing changes; H without a name to hash from is refused with the reason.
    const plain = nextFireTimes({ schedule: "0 * * * *", key, now, count: 1 });
    assert.ok(plain.ok && plain.resolvedSchedule === "0 * * * *" && !plain.hashed);
    const nameless = nextFireTimes({ schedule: "H * * * *", now, count: 1 });
    assert.ok(!nameless.ok && /H needs a fixed metadata\.name/.test(nameless.error));
    const bad = nextFireTimes({ schedule: "H/0 * * * *", key, now, count: 1 });
    assert.ok(!bad.ok && bad.error.endsWith("minute H/0: step must be at least 1"));
  });

  it("shows the resolved schedule, in the table and in the JSON", async () => {
    const resolved = resolveHashedSchedule("H/15 * * * *", { namespace: "prod", name: "backup" });
    assert.ok(resolved.ok);
    const text = await next(ctxFor(cronJob("H/15 * * * *")), args("table"));
    assert.ok(
      text.text.startsWith(
        `schedule "H/15 * * * *" runs as ${JSON.stringify(resolved.resolved)} (H is hashed from namespace/name)\nNEXT (Europe/Berlin)`,
      ),
      text.text,
    );
    const json = (await next(ctxFor(cronJob("H/15 * * * *")), args("json"))).json as Record<string, unknown>;
    assert.equal(json.schedule, "H/15 * * * *");
    assert.equal(json.resolvedSchedule, resolved.resolved);
    assert.equal((json.times as unknown[]).length, 3);

    const plain = await next(ctxFor(cronJob("0 * * * *")), args("table"));
    assert.ok(plain.text.startsWith("NEXT (Europe/Berlin)"));
    assert.equal(((await next(ctxFor(cronJob("0 * * * *")), args("json"))).json as any).resolvedSchedule, "0 * * * *");
  });
});

describe("kubectl cron history", () => {
  const owner = "uid-1";
  /** A Job created at midnight, of the CronJob "b" whose uid is `ownerUID` (this one's by default). */
  const job = ({ ownerUID = owner, ...o }: JobFixture & { ownerUID?: string }): Job => {
    const j = batchJob({ owner: { name: "b", uid: ownerUID }, ...o });
    j.metadata!.creationTimestamp = "2026-01-01T00:00:00Z";
    return j;
  };

  it("lists only the CronJob's Jobs, oldest slot first, with result, trigger and duration", () => {
    const jobs = [
      job({ name: "b-1767232800", slot: "2026-01-01T02:00:00Z", state: "active", start: "2026-01-01T02:00:01Z" }),
      job({
        name: "b-1767229200",
        slot: "2026-01-01T01:00:00Z",
        state: "complete",
        start: "2026-01-01T01:00:01Z",
        end: "2026-01-01T01:03:13Z",
      }),
      job({
        name: manualJobName("b", "r1"),
        annotations: { [RUN_NOW_REQUEST_ANNOTATION]: "r1" },
        state: "failed",
        start: "2026-01-01T03:00:00Z",
        end: "2026-01-01T03:00:45Z",
      }),
      job({ name: "b-from-kubectl", annotations: { [INSTANTIATE_ANNOTATION]: "manual" } }),
      job({ name: "other", ownerUID: "someone-else" }),
      // Owned by the CronJob but not controlled by it (a reference for garbage collection only): not its run.
      (() => {
        const j = job({ name: "b-gc-only", slot: "2026-01-01T00:00:00Z" });
        j.metadata!.ownerReferences = j.metadata!.ownerReferences!.map((r) => ({ ...r, controller: false }));
        return j;
      })(),
    ];
    const rows = historyRows(jobs, owner, new Date("2026-01-01T02:10:01Z"));
    assert.deepEqual(
      rows.map((r) => [r.name, r.trigger, r.result, r.durationSeconds]),
      [
        ["b-from-kubectl", "manual", "Running", 7801],
        ["b-1767229200", "scheduled", "Complete", 192],
        ["b-1767232800", "scheduled", "Running", 600],
        [manualJobName("b", "r1"), "manual", "Failed", 45],
      ],
    );
    assert.equal(rows[1]?.scheduledTime, "2026-01-01T01:00:00Z");
  });

  it("lists a slot's attempts in their order (retry names are hashes): the first Job, then attempt 1, 2, …", () => {
    const slot = "2026-01-01T01:00:00Z";
    const first = "b-1767229200";
    const attempt = (k: number) =>
      job({
        name: retryJobName("b", first, k),
        slot,
        annotations: { [RETRY_OF_ANNOTATION]: first, [RETRY_ATTEMPT_ANNOTATION]: `${k}/4` },
      });
    // Whatever order the hashes sort in, and the API server lists them in.
    for (const listed of [
      [attempt(3), attempt(1), job({ name: first, slot }), attempt(4), attempt(2)],
      [attempt(4), attempt(2), attempt(3), attempt(1), job({ name: first, slot })],
    ]) {
      const rows = historyRows(listed, owner, new Date("2026-01-01T02:00:00Z"));
      assert.deepEqual(
        rows.map((r) => r.name),
        // By name attempt 4 (b-r27c…) would come second.
        [first, ...[1, 2, 3, 4].map((k) => retryJobName("b", first, k))],
      );
    }
  });

  it("asks the API server for the Jobs labelled with the CronJob's name, and still keeps only its own UID's", async () => {
    const selectors: (string | undefined)[] = [];
    const cronJob = { metadata: { name: "b", namespace: "prod", uid: owner }, spec: { schedule: "@hourly" } };
    const labelled = [
      job({ name: "b-1767229200", slot: "2026-01-01T01:00:00Z" }),
      // The same name and label, left by a deleted CronJob "b": not this one's history.
      job({ name: "b-1767225600", ownerUID: "deleted-b" }),
    ];
    const ctx: Context = {
      client: {
        get: async () => cronJob,
        list: async (_rk: unknown, o: { labelSelector?: string }) => {
          selectors.push(o.labelSelector);
          return { items: labelled, metadata: {} };
        },
      } as unknown as Client,
      namespace: "prod",
      now: () => new Date("2026-01-01T02:00:00Z"),
      sleep: async () => undefined,
    };
    const a = parseCommandLine(["history", "b", "-o", "yaml"]);
    assert.ok(a !== "help");
    const out = await history(ctx, a);
    assert.deepEqual(selectors, [`${CRONJOB_NAME_LABEL}=b`]);
    assert.deepEqual(
      (out.json as { items: { name: string }[] }).items.map((r) => r.name),
      ["b-1767229200"],
    );
    // -o yaml prints the same document as -o json.
    const printed = await runMain(["history", "b", "-o", "yaml"]);
    assert.equal(printed.code, EXIT.failed); // no cluster here; the flag itself is accepted
  });

  it("formats durations and tables as kubectl does", () => {
    assert.deepEqual([45, 192, 7500, 270000].map(humanDuration), ["45s", "3m12s", "2h5m", "3d3h"]);
    assert.equal(table(["A", "LONGER"], [["xyz", "1"]]), "A     LONGER\nxyz   1\n");
  });
});

describe("run-now request names", () => {
  it("are stable per request, distinct across requests, and fit a label value", () => {
    const name = "x".repeat(52);
    assert.equal(manualJobName(name, "a"), manualJobName(name, "a"));
    assert.notEqual(manualJobName(name, "a"), manualJobName(name, "b"));
    assert.ok(manualJobName(name, "a").length <= 63);
    assert.match(manualJobName("b", "a"), /^b-m[0-9a-f]{8}$/);
  });
});

describe("kubectl cron run: a request the operator holds", () => {
  /** A CronJob in a full group: the operator records the request Held and creates no Job. */
  function ctxFor(held: boolean): Context {
    let request = "";
    let t = Date.parse("2026-01-01T04:00:00Z");
    const obj = () =>
      ({
        metadata: { name: "b", namespace: "prod" },
        spec: { schedule: "@hourly", concurrencyGroup: "db" },
        status: {
          recentRuns: held
            ? [
                {
                  trigger: "RunNow",
                  request,
                  decision: "Held",
                  reason: "ConcurrencyGroupFull",
                  decidedAt: "2026-01-01T04:00:01Z",
                },
              ]
            : [],
        },
      }) as unknown as CronJob;
    return {
      client: {
        get: async (rk: { kind?: string }) => {
          if (rk.kind === "Job") throw new APIError(404, "NotFound", "jobs.batch not found");
          return obj();
        },
        patch: async (
          _rk: unknown,
          _ns: string,
          _name: string,
          body: { metadata: { annotations: Record<string, string> } },
        ) => {
          request = Object.values(body.metadata.annotations)[0]!;
          return obj();
        },
      } as unknown as Client,
      namespace: "prod",
      // Each look at the clock is 5 s later: the wait ends.
      now: () => new Date((t += 5000)),
      sleep: async () => undefined,
    };
  }
  const args = parseCommandLine(["run", "b", "--timeout=20s"]);
  assert.ok(args !== "help");

  it("says the group it waits for, and at the time-out what the record says held it", async () => {
    const err = await runNow(ctxFor(true), args).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof WaitTimeout, String(err));
    assert.match(
      err.message,
      /^the request \S+ was recorded and is held: .*\. The request stays; the operator runs it once the hold ends \(kubectl cron why b -n prod\)\.$/,
    );
    assert.doesNotMatch(err.message, /Is the operator running/);
  });

  it("with nothing decided, asks whether the operator runs", async () => {
    const err = await runNow(ctxFor(false), args).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof WaitTimeout);
    assert.match(err.message, /no Job b-m[0-9a-f]{8} appeared within 20s\. Is the operator running\?/);
  });

  it("--no-wait notes the group", async () => {
    const a = parseCommandLine(["run", "b", "--no-wait"]);
    assert.ok(a !== "help");
    const out = await runNow(ctxFor(true), a);
    assert.match(out.notes?.join("\n") ?? "", /in concurrency group db: the run starts when the group has a place/);
  });
});

describe("kubectl cron resume and list: a CronJob stopped after failures", () => {
  const stopped = { time: "2026-01-01T03:02:00Z", failures: 3, generation: 4 };
  const cronJob = (o: { suspend?: boolean; stopped?: typeof stopped }) =>
    ({
      metadata: { name: "b", namespace: "prod" },
      spec: { schedule: "@hourly", suspend: o.suspend ?? false, stopAfterConsecutiveFailures: 3 },
      status: o.stopped ? { stopped: o.stopped } : {},
    }) as unknown as CronJob;
  function ctxFor(obj: CronJob, patches: unknown[]): Context {
    return {
      client: {
        get: async () => obj,
        patch: async (_rk: unknown, _ns: string, _name: string, body: unknown) => {
          patches.push(body);
          return obj;
        },
        list: async () => ({ items: [obj], metadata: {} }),
      } as unknown as Client,
      namespace: "prod",
      now: () => new Date("2026-01-01T04:00:00Z"),
      sleep: async () => undefined,
    };
  }
  const args = (...argv: string[]) => {
    const a = parseCommandLine(argv);
    assert.ok(a !== "help");
    return a;
  };

  it("resume asks the operator to resume it (a new resume annotation), and says after how many failures", async () => {
    const patches: unknown[] = [];
    const out = await setSuspend(ctxFor(cronJob({ stopped }), patches), args("resume", "b"), false);
    assert.deepEqual(patches, [{ metadata: { annotations: { [RESUME_ANNOTATION]: "2026-01-01T04:00:00.000Z" } } }]);
    assert.equal(out.text, "cronjobs.batch.tutorial.kubebuilder.io/b resumed\n");
    assert.match(out.notes?.join("\n") ?? "", /stopped after 3 failed runs in a row/);
  });

  it("resume of a suspended and stopped one does both in one patch; of a running one, nothing", async () => {
    const patches: unknown[] = [];
    await setSuspend(ctxFor(cronJob({ suspend: true, stopped }), patches), args("resume", "b"), false);
    assert.deepEqual(patches, [
      { spec: { suspend: false }, metadata: { annotations: { [RESUME_ANNOTATION]: "2026-01-01T04:00:00.000Z" } } },
    ]);
    const none: unknown[] = [];
    const out = await setSuspend(ctxFor(cronJob({}), none), args("resume", "b"), false);
    assert.deepEqual(none, []);
    assert.match(out.text, /already resumed/);
  });

  it("list shows the stop in the STOPPED column", async () => {
    const out = await list(ctxFor(cronJob({ stopped }), []), args("list"));
    const [header, row] = out.text.split("\n");
    assert.match(header!, /SUSPEND +STOPPED +ACTIVE/);
    assert.match(row!, /false +after 3 failures +0/);
    const running = await list(ctxFor(cronJob({}), []), args("list"));
    assert.match(running.text.split("\n")[1]!, /false +- +0/);
    const plain = { ...cronJob({}), spec: { schedule: "@hourly" } } as unknown as CronJob;
    const without = await list(ctxFor(plain, []), args("list"));
    assert.match(without.text.split("\n")[0]!, /SUSPEND +ACTIVE/, "no STOPPED column when no CronJob uses the feature");
  });
});

describe("kubectl cron backfill", () => {
  const cronJob = {
    metadata: { name: "b", namespace: "prod", uid: "u", creationTimestamp: "2026-01-01T00:00:00Z" },
    spec: { schedule: "0 * * * *" },
    status: {},
  } as unknown as CronJob;
  const existing = { metadata: { name: "b-1767229200" } }; // the 01:00 slot ran
  function ctxFor(patches: unknown[]): Context {
    return {
      client: {
        get: async () => cronJob,
        patch: async (_rk: unknown, _ns: string, _name: string, body: unknown) => (patches.push(body), cronJob),
        list: async () => ({ items: [existing], metadata: {} }),
      } as unknown as Client,
      namespace: "prod",
      now: () => new Date("2026-01-02T00:00:00Z"),
      sleep: async () => undefined,
    };
  }
  const args = (...argv: string[]) => {
    const a = parseCommandLine(["backfill", "b", ...argv]);
    assert.ok(a !== "help");
    return a;
  };

  it("--dry-run lists the slots, marks those whose Job exists, and changes nothing", async () => {
    const patches: unknown[] = [];
    const out = await backfill(
      ctxFor(patches),
      args("--from=2026-01-01T00:30:00Z", "--to=2026-01-01T03:00:00Z", "--dry-run"),
    );
    assert.deepEqual(patches, []);
    assert.deepEqual(
      (out.json as { slots: { slot: string; action: string }[] }).slots.map((s) => `${s.slot} ${s.action}`),
      ["2026-01-01T01:00:00Z skip: its Job exists", "2026-01-01T02:00:00Z run", "2026-01-01T03:00:00Z run"],
    );
    assert.match(out.notes!.join(), /2 of 3 slots would run/);
  });

  it("writes the request annotation; refuses a future range and more than 1000 slots, saying how many", async () => {
    const patches: unknown[] = [];
    const out = await backfill(
      ctxFor(patches),
      args("--from=2026-01-01T00:30:00Z", "--to=2026-01-01T03:00:00Z", "--parallelism=2"),
    );
    const value = (patches[0] as { metadata: { annotations: Record<string, string> } }).metadata.annotations[
      BACKFILL_ANNOTATION
    ]!;
    assert.deepEqual(
      { ...JSON.parse(value), id: "x" },
      { id: "x", from: "2026-01-01T00:30:00.000Z", to: "2026-01-01T03:00:00.000Z", parallelism: 2 },
    );
    assert.match(out.text, /requested: 3 slots/);
    await assert.rejects(
      backfill(ctxFor([]), args("--from=2026-01-01T00:30:00Z", "--to=2026-01-03T00:00:00Z")),
      /in the future/,
    );
    await assert.rejects(
      backfill(ctxFor([]), args("--from=2025-01-01T00:00:00Z", "--to=2026-01-01T00:00:00Z")),
      /holds more than 1000 slots; at most 1000/,
    );
  });

  it("refuses a half range, a reversed one and --cancel with a range, as usage errors", () => {
    assert.throws(() => parseCommandLine(["backfill", "b", "--from=2026-01-01T00:00:00Z"]), UsageError);
    assert.throws(
      () => parseCommandLine(["backfill", "b", "--from=2026-01-02T00:00:00Z", "--to=2026-01-01T00:00:00Z"]),
      /after --to/,
    );
    assert.throws(
      () => parseCommandLine(["backfill", "b", "--from=yesterday", "--to=2026-01-01T00:00:00Z"]),
      /RFC 3339/,
    );
    assert.throws(
      () => parseCommandLine(["backfill", "b", "--cancel", "--from=2026-01-01T00:00:00Z", "--to=2026-01-01T01:00:00Z"]),
      UsageError,
    );
  });
});

/** The CronJob x of `namespace`, as the API server answers a GET of it. */
const cronJobX = (namespace = "default") => ({
  apiVersion: "batch.tutorial.kubebuilder.io/v1",
  kind: "CronJob",
  metadata: { name: "x", namespace },
  spec: { schedule: "0 * * * *", jobTemplate: { spec: { template: { spec: { containers: [] } } } } },
});

/** A kubeconfig whose one cluster is `server`, its one user `user`, its current context the first of `contexts`. */
const kubeconfigFor = (
  server: string,
  user: object,
  contexts = [{ name: "c", context: { cluster: "c", user: "u" } }],
) =>
  JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "c", cluster: { server, "insecure-skip-tls-verify": true } }],
    users: [{ name: "u", user }],
    contexts,
    "current-context": contexts[0]!.name,
  });

/** A plain HTTP server on 127.0.0.1 that `respond`s to every request (its URL) and a temporary directory, for `fn`. */
async function withHTTPServer(
  respond: RequestListener,
  fn: (server: string, dir: string) => Promise<void>,
): Promise<void> {
  const srv = createServer(respond);
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const dir = mkdtempSync(join(tmpdir(), "kubectl-cron-server-"));
  try {
    await fn(`http://127.0.0.1:${(srv.address() as { port: number }).port}`, dir);
  } finally {
    srv.closeAllConnections();
    srv.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("kubectl cron: API warnings", () => {
  it("prints the API server's warnings as kubectl does (Warning: ...) on stderr", async () => {
    const respond: RequestListener = (_req, res) => {
      res.setHeader("Warning", '299 - "batch.tutorial.kubebuilder.io/v1 CronJob is deprecated; use v2"');
      res.setHeader("Content-Type", "application/json");
      res.end(JSON.stringify(cronJobX()));
    };
    await withHTTPServer(respond, async (server, dir) => {
      const kubeconfig = join(dir, "config");
      writeFileSync(kubeconfig, kubeconfigFor(server, {}));
      const r = await runMain(["next", "x", "--count=1", `--kubeconfig=${kubeconfig}`]);
      assert.equal(r.code, 0, r.err);
      assert.match(r.err, /^Warning: batch\.tutorial\.kubebuilder\.io\/v1 CronJob is deprecated; use v2$/m);
    });
  });
});

describe("kubectl cron: --request-timeout", () => {
  it("ends a request the server leaves unanswered after the given time, and waits without a limit for 0", async () => {
    // As an API server waiting on a slow admission webhook: the answer comes after 400 ms.
    const respond: RequestListener = (_req, res) => {
      setTimeout(() => {
        res.setHeader("Content-Type", "application/json");
        res.end(JSON.stringify(cronJobX()));
      }, 400);
    };
    await withHTTPServer(respond, async (server, dir) => {
      const kubeconfig = join(dir, "config");
      writeFileSync(kubeconfig, kubeconfigFor(server, {}));
      const short = await runMain(["next", "x", "--count=1", `--kubeconfig=${kubeconfig}`, "--request-timeout=100ms"]);
      assert.equal(short.code, 1, short.err);
      assert.match(short.err, /no response within 100 ms/);
      for (const flag of ["--request-timeout=0", "--request-timeout=5s"]) {
        const r = await runMain(["next", "x", "--count=1", `--kubeconfig=${kubeconfig}`, flag]);
        assert.equal(r.code, 0, `${flag}: ${r.err}`);
      }
    });
  });
});

// The plugin loads its kubeconfig as the manager does (runtime/kubeconfig.ts): the forms kubectl accepts,
// through the plugin's own main(), against a server that records what it was asked.
describe("kubectl cron: the kubeconfig", () => {
  /** `fn` with a server answering the CronJob x of the namespace asked, and what it was asked. */
  async function withServer(
    fn: (server: string, dir: string, seen: Array<{ path: string; auth: string; groups?: string[] }>) => Promise<void>,
  ): Promise<void> {
    const seen: Array<{ path: string; auth: string; groups?: string[] }> = [];
    const respond: RequestListener = (req, res) => {
      const groups = req.headersDistinct["impersonate-group"];
      seen.push({ path: req.url ?? "", auth: String(req.headers.authorization ?? ""), ...(groups ? { groups } : {}) });
      const ns = /namespaces\/([^/]+)\//.exec(req.url ?? "")?.[1] ?? "default";
      res.setHeader("Content-Type", "application/json");
      res.end(JSON.stringify(cronJobX(ns)));
    };
    await withHTTPServer(respond, (server, dir) => fn(server, dir, seen));
  }

  it("reads $KUBECONFIG from its environment, skipping a listed file that does not exist", async () => {
    await withServer(async (server, dir, seen) => {
      const file = join(dir, "config");
      writeFileSync(file, kubeconfigFor(server, { token: "t0ken" }));
      const r = await runMain(["next", "x", "--count=1"], { KUBECONFIG: [join(dir, "missing"), file].join(delimiter) });
      assert.equal(r.code, 0, r.err);
      assert.deepEqual(seen, [
        { path: "/apis/batch.tutorial.kubebuilder.io/v1/namespaces/default/cronjobs/x", auth: "Bearer t0ken" },
      ]);
    });
  });

  it("--context picks another context and its namespace; an unknown one is a usage error", async () => {
    await withServer(async (server, dir, seen) => {
      const file = join(dir, "config");
      writeFileSync(
        file,
        kubeconfigFor(server, { token: "t" }, [
          { name: "c", context: { cluster: "c", user: "u" } },
          { name: "team", context: { cluster: "c", user: "u", namespace: "team-a" } } as never,
        ]),
      );
      const r = await runMain(["next", "x", "--count=1", "--context", "team"], { KUBECONFIG: file });
      assert.equal(r.code, 0, r.err);
      assert.match(seen[0]!.path, /\/namespaces\/team-a\/cronjobs\/x$/);
      const bad = await runMain(["next", "x", "--context", "nope"], { KUBECONFIG: file });
      assert.equal(bad.code, EXIT.usage);
      assert.match(bad.err, /--context: no context "nope" in KUBECONFIG=/);
    });
  });

  it("impersonated groups go as one header line each", async () => {
    await withServer(async (server, dir, seen) => {
      const file = join(dir, "config");
      writeFileSync(file, kubeconfigFor(server, { token: "t", as: "bob", "as-groups": ["devs", "ops, with a comma"] }));
      const r = await runMain(["next", "x", "--count=1", `--kubeconfig=${file}`]);
      assert.equal(r.code, 0, r.err);
      assert.deepEqual(seen[0]!.groups, ["devs", "ops, with a comma"]);
    });
  });

  it("an exec credential plugin user (client-node's authenticator, loaded only for it)", async () => {
    await withServer(async (server, dir, seen) => {
      const plugin = join(dir, "credential-plugin");
      writeFileSync(
        plugin,
        `#!/bin/sh\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-exec"}}'\n`,
      );
      chmodSync(plugin, 0o755);
      const file = join(dir, "config");
      writeFileSync(
        file,
        kubeconfigFor(server, {
          exec: { apiVersion: "client.authentication.k8s.io/v1", command: plugin, interactiveMode: "Never" },
        }),
      );
      const r = await runMain(["next", "x", "--count=1", `--kubeconfig=${file}`]);
      assert.equal(r.code, 0, r.err);
      assert.equal(seen[0]!.auth, "Bearer from-exec");
    });
  });
});

describe("kubectl cron against a cluster: the output format and the exit code of a run", () => {
  const { cluster, run } = pluginCluster("prod", new Date("2026-01-01T04:00:00Z"));
  const cronJob = {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name: "b", namespace: "prod", uid: "uid-b", creationTimestamp: "2025-12-01T00:00:00Z" },
    spec: {
      schedule: "0 * * * *",
      jobTemplate: {
        spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "c" }] } } },
      },
    },
  } as unknown as KubeObject;

  it("-o yaml prints the document -o json prints", async () => {
    const server = await cluster([cronJob]);
    const json = await run(server, ["next", "b", "--count", "2", "-o", "json"]);
    const yaml = await run(server, ["next", "b", "--count", "2", "-o", "yaml"]);
    assert.equal(json.code, EXIT.ok, json.err);
    assert.equal(yaml.code, EXIT.ok, yaml.err);
    const doc = JSON.parse(json.out) as { times: { utc: string }[] };
    assert.deepEqual(
      doc.times.map((t) => t.utc),
      ["2026-01-01T05:00:00Z", "2026-01-01T06:00:00Z"],
    );
    assert.doesNotMatch(yaml.out, /^\s*\{/, "YAML, not JSON");
    assert.deepEqual(parseYaml(yaml.out), doc);
  });

  it("run exits 3 when the request was made but no Job appeared before --timeout", async () => {
    const server = await cluster([cronJob]);
    const r = await run(server, ["run", "b", "--timeout=0s"]);
    assert.equal(r.code, EXIT.timeout, r.err);
    assert.equal(EXIT.timeout, 3);
    assert.match(r.err, /^error: the request \S+ was recorded, but no Job b-m[0-9a-f]{8} appeared within 0s\./);
  });
});
