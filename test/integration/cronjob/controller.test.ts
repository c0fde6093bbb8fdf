// The CronJob controller running inside a manager: the kubebuilder tutorial's controller test (real
// clock), a fake-clock run through the watch → queue → reconcile path, and a no-hot-loop check.
// Integration only (not in the behaviour tables the fake also runs): what it proves is the watches, the
// queue and a cache that lags behind writes, which only a real apiserver has.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  API_VERSION,
  ConcurrencyGroupResource,
  type CronJob,
  ExclusionCalendarResource,
  KIND,
} from "../../../api/v1/index.ts";
import { FakeClock } from "../../../runtime/fake-clock.ts";
import { CronJobReconciler } from "../../../controllers/cronjob_controller.ts";
import { cronJobOwnerOf, CronJobResource as CronJobKind, type Job } from "../../../api/v1/index.ts";
import { Client } from "../../../runtime/client.ts";
import { Kinds } from "../../../runtime/kinds.ts";
import { discardLogger } from "../../../runtime/log.ts";
import { Manager } from "../../../runtime/manager.ts";
import { metricsRegistry } from "../../../runtime/metrics/registry.ts";
import { TestEnv } from "../../../envtest/index.ts";
import { eventually } from "../../eventually.ts";
import { batchJob, createJob, jobStatus } from "../../fixtures.ts";

async function consistently(
  what: string,
  fn: () => Promise<boolean>,
  durationMs: number,
  everyMs = 250,
): Promise<void> {
  const end = Date.now() + durationMs;
  while (Date.now() < end) {
    assert.ok(await fn(), `${what} stopped holding`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

const template = {
  spec: {
    template: { spec: { restartPolicy: "OnFailure", containers: [{ name: "test-container", image: "test-image" }] } },
  },
};

function startManager(env: TestEnv, clock?: FakeClock) {
  const mgr = new Manager({ kubeConfig: env.kubeConfig, logger: discardLogger });
  CronJobReconciler.setupWithManager(mgr, clock ? { clock } : {});
  const stop = new AbortController();
  const running = mgr.start(stop.signal);
  return {
    mgr,
    async stop() {
      stop.abort();
      await running;
    },
  };
}

describe("CronJob controller (ported from the kubebuilder tutorial; real clock)", () => {
  let env: TestEnv;
  let client: Client;
  let m: ReturnType<typeof startManager>;
  before(async () => {
    env = await TestEnv.start();
    client = new Client(env.kubeConfig);
    m = startManager(env);
    await m.mgr.elected();
  });
  after(async () => {
    await m?.stop();
    client?.close();
    await env?.stop();
  });

  it("adds a running Job to status.active and keeps the newest finished Jobs", async () => {
    const ns = "default";
    const cronJob = await client.create<CronJob>(CronJobKind, {
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: { name: "test-cronjob", namespace: ns },
      // The tutorial's "1 * * * *", at a minute half an hour away: on the real clock a slot during the test would put
      // its own Job in status.active (CI failed on it once, run at 04:01).
      spec: {
        schedule: `${(new Date().getUTCMinutes() + 30) % 60} * * * *`,
        jobTemplate: template,
        successfulJobsHistoryLimit: 1,
        failedJobsHistoryLimit: 1,
      },
    } as unknown as CronJob);
    const get = () => client.get<CronJob>(CronJobKind, ns, "test-cronjob");

    // Ensure there are no active Jobs yet.
    await consistently("no active Jobs", async () => ((await get()).status?.active?.length ?? 0) === 0, 10_000);

    const owner = { name: "test-cronjob", uid: cronJob.metadata.uid! };
    await createJob(client, batchJob({ name: "test-job", namespace: ns, owner, spec: template.spec }));
    const c = await eventually("test-job in status.active", async () => {
      const cj = await get();
      return cj.status?.active?.some((a) => a.name === "test-job") ? cj : undefined;
    });
    const available = c.status?.conditions?.find((x) => x.type === "Available");
    assert.equal(available?.status, "True");
    assert.equal(available?.reason, "JobsActive");

    // History: of two failed and two successful Jobs, the older of each is deleted.
    const now = Date.now();
    const finished: Array<[string, "complete" | "failed", number]> = [
      ["failed-old", "failed", now - 60_000],
      ["failed-new", "failed", now + 1000],
      ["ok-old", "complete", now - 60_000],
      ["ok-new", "complete", now + 1000],
    ];
    for (const [name, state, start] of finished) {
      await createJob(
        client,
        batchJob({ name, namespace: ns, owner, spec: template.spec, state, start, end: start + 500 }),
      );
    }
    await eventually("older finished Jobs deleted", async () => {
      const names = (await client.list<Job>(Kinds.Job, { namespace: ns })).items.map((j) => j.metadata!.name);
      return !names.includes("failed-old") && !names.includes("ok-old") ? names : undefined;
    });
    // (A run of the schedule would add a test-cronjob-<time> Job; it is not part of this.)
    const names = (await client.list<Job>(Kinds.Job, { namespace: ns })).items
      .map((j) => j.metadata!.name!)
      .filter((n) => !n.startsWith("test-cronjob-"))
      .sort();
    assert.deepEqual(names, ["failed-new", "ok-new", "test-job"]);
  });
});

/**
 * A fake clock 2 s past the slot that starts the minute after next: CronJobs made now (every minute) find that slot
 * due on their first pass, and their own wake-up is the slot after it, 58 s of real time away.
 */
function clockPastASlot(): { clock: FakeClock; slot: number } {
  const slot = Math.floor(Date.now() / 60_000) * 60_000 + 120_000;
  return { clock: new FakeClock(new Date(slot + 2000)), slot };
}

describe("CronJob controller through the manager (fake clock)", () => {
  let env: TestEnv;
  let client: Client;
  before(async () => {
    env = await TestEnv.start();
    client = new Client(env.kubeConfig);
  });
  after(async () => {
    client?.close();
    await env?.stop();
  });

  it("a calendar or a group changed wakes the CronJobs that name it, and a group's Job that ends wakes its waiting member (the watches)", async () => {
    // Each wake-up here comes from a watch: the CronJobs' own requeue is the next slot, a minute of real time away,
    // longer than any wait below.
    const ns = "default";
    // The fake clock stands past a slot two real minutes ahead before the CronJobs exist, so their first pass holds
    // it and wakes them again only at the next slot, 58 s of real time later: whatever the second the case starts
    // at, only a watch can run the held slots within the waits below.
    const { clock, slot } = clockPastASlot();
    const m = startManager(env, clock);
    const group = "wake-group";
    try {
      await m.mgr.elected();
      const make = async (name: string, spec: Record<string, unknown>) =>
        client.create<CronJob>(CronJobKind, {
          apiVersion: API_VERSION,
          kind: KIND,
          metadata: { name, namespace: ns },
          spec: { schedule: "* * * * *", jobTemplate: template, ...spec },
        } as unknown as CronJob);
      await client.create(ConcurrencyGroupResource, {
        apiVersion: API_VERSION,
        kind: "ConcurrencyGroup",
        metadata: { name: group, namespace: ns },
        spec: { limit: 0 },
      });
      const made = [
        await make("wake-cal", { exclusions: { calendars: ["wake-calendar"] } }),
        await make("wake-a", { concurrencyGroup: group }),
        await make("wake-b", { concurrencyGroup: group }),
      ];
      assert.ok(
        made.every((c) => Date.parse(c.metadata.creationTimestamp!) < slot),
        "the CronJobs exist before the slot",
      );
      const jobsOf = async (name: string) =>
        (await client.list<Job>(Kinds.Job, { namespace: ns })).items.filter((j) =>
          j.metadata!.name!.startsWith(`${name}-`),
        );
      const heldFor = (name: string, reason: string) =>
        eventually(`${name} held (${reason})`, async () => {
          const r = (await client.get<CronJob>(CronJobKind, ns, name)).status?.recentRuns?.[0];
          return r?.decision === "Held" && r.reason === reason;
        });
      await heldFor("wake-cal", "CalendarNotFound");
      await heldFor("wake-a", "ConcurrencyGroupFull");
      await heldFor("wake-b", "ConcurrencyGroupFull");

      // The calendar created (no window over the slot): the CronJob naming it is woken, and its held slot runs.
      await client.create(ExclusionCalendarResource, {
        apiVersion: API_VERSION,
        kind: "ExclusionCalendar",
        metadata: { name: "wake-calendar", namespace: ns },
        spec: { windows: [{ name: "long ago", start: "2001-01-01", end: "2001-01-02" }] },
      });
      await eventually(
        "wake-cal's held slot runs once its calendar exists",
        async () => (await jobsOf("wake-cal")).length === 1,
        15_000,
      );

      // The group's limit raised to 1: its members are woken, and exactly one of them runs.
      const g = await client.get<{ spec: { limit: number } } & Record<string, unknown>>(
        ConcurrencyGroupResource,
        ns,
        group,
      );
      await client.update(ConcurrencyGroupResource, { ...g, spec: { limit: 1 } });
      const first = await eventually(
        "one member of the group runs once its limit is 1",
        async () => {
          const jobs = [...(await jobsOf("wake-a")), ...(await jobsOf("wake-b"))];
          return jobs.length ? jobs : undefined;
        },
        15_000,
      );
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal([...(await jobsOf("wake-a")), ...(await jobsOf("wake-b"))].length, 1, "never two in a group of 1");
      const other = first[0]!.metadata!.name!.startsWith("wake-a-") ? "wake-b" : "wake-a";

      // Its Job ends: the Job event wakes the member still waiting, which takes the freed place.
      const job = await client.get<Job>(Kinds.Job, ns, first[0]!.metadata!.name!);
      await client.updateStatus(Kinds.Job, {
        ...job,
        status: jobStatus({ state: "complete", start: slot + 2500, end: slot + 3000 }),
      });
      await eventually(
        `${other} runs once the group's Job ended`,
        async () => (await jobsOf(other)).length === 1,
        15_000,
      );
    } finally {
      await m.stop();
      // The next case counts every CronJob's reconciles: these leave.
      for (const name of ["wake-cal", "wake-a", "wake-b"]) await client.delete(CronJobKind, ns, name).catch(() => {});
    }
  });

  it("a calendar edited in one namespace wakes that namespace's CronJobs, not those naming a calendar of the same name elsewhere", async () => {
    // Two namespaces, each with a calendar "shared" and a CronJob naming it. Both run their first slot; the clock
    // then moves past the next one with no event, so a CronJob runs it only when something wakes it (its own wake-up
    // is 58 s of real time away). The calendar edited in one namespace must wake that namespace's CronJob alone.
    const { clock, slot } = clockPastASlot();
    const m = startManager(env, clock);
    const spaces = ["cal-east", "cal-west"];
    try {
      await m.mgr.elected();
      const calendarIn = (ns: string, windows: unknown[]) => ({
        apiVersion: API_VERSION,
        kind: "ExclusionCalendar",
        metadata: { name: "shared", namespace: ns },
        spec: { windows },
      });
      const longAgo = { name: "long ago", start: "2001-01-01", end: "2001-01-02" };
      for (const ns of spaces) {
        await client.create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
        await client.create(ExclusionCalendarResource, calendarIn(ns, [longAgo]));
        await client.create(CronJobKind, {
          apiVersion: API_VERSION,
          kind: KIND,
          metadata: { name: "nightly", namespace: ns },
          spec: { schedule: "* * * * *", jobTemplate: template, exclusions: { calendars: ["shared"] } },
        } as unknown as CronJob);
      }
      const jobOf = async (ns: string, at: number) =>
        (await client.list<Job>(Kinds.Job, { namespace: ns })).items.some(
          (j) => j.metadata!.name === `nightly-${at / 1000}`,
        );
      const written = (ns: string, at: number) =>
        eventually(`${ns}'s status shows the ${new Date(at).toISOString()} run`, async () => {
          const s = (await client.get<CronJob>(CronJobKind, ns, "nightly")).status;
          return s?.lastScheduleTime === new Date(at).toISOString().replace(".000Z", "Z");
        });
      for (const ns of spaces) await written(ns, slot);
      // What the first runs set off (their Jobs' events, the status writes) has passed before the clock moves.
      await new Promise((r) => setTimeout(r, 1500));
      const next = slot + 60_000;
      clock.set(new Date(next + 2000));

      const edit = async (ns: string) => {
        const cal = await client.get<Record<string, unknown>>(ExclusionCalendarResource, ns, "shared");
        await client.update(ExclusionCalendarResource, {
          ...cal,
          spec: { windows: [longAgo, { ...longAgo, name: `edited in ${ns}` }] },
        });
      };
      await edit("cal-east");
      await eventually(
        "cal-east's CronJob, woken by its calendar, runs the next slot",
        () => jobOf("cal-east", next),
        15_000,
      );
      await consistently(
        "cal-west's CronJob is not woken by cal-east's calendar",
        async () => !(await jobOf("cal-west", next)),
        3000,
      );
      await edit("cal-west");
      await eventually(
        "cal-west's CronJob, woken by its own calendar, runs the next slot",
        () => jobOf("cal-west", next),
        15_000,
      );
    } finally {
      await m.stop();
      for (const ns of spaces) await client.delete(CronJobKind, ns, "nightly").catch(() => {});
    }
  });

  it("creates exactly one Job for a due slot through watch events, and does not hot-loop on bad input", async () => {
    const ns = "default";
    const clock = new FakeClock(new Date());
    const m = startManager(env, clock);
    try {
      await m.mgr.elected();
      const created = await client.create<CronJob>(CronJobKind, {
        apiVersion: API_VERSION,
        kind: KIND,
        metadata: { name: "every-minute", namespace: ns },
        spec: { schedule: "* * * * *", jobTemplate: template },
      } as unknown as CronJob);
      const c = new Date(created.metadata.creationTimestamp!).getTime();
      // Move the fake clock past the next minute and poke the CronJob (a label change).
      const slot = Math.floor(c / 60_000) * 60_000 + 60_000;
      clock.set(new Date(slot + 2000));
      await client.patch(CronJobKind, ns, "every-minute", { metadata: { labels: { poke: "1" } } }, "merge");
      const jobs = await eventually("one Job", async () => {
        const items = (await client.list<Job>(Kinds.Job, { namespace: ns })).items.filter(
          (j) => cronJobOwnerOf(j)?.uid === created.metadata.uid,
        );
        return items.length > 0 ? items : undefined;
      });
      await new Promise((r) => setTimeout(r, 1500)); // Job events bring more reconciles: still one Job
      const again = (await client.list<Job>(Kinds.Job, { namespace: ns })).items.filter(
        (j) => cronJobOwnerOf(j)?.uid === created.metadata.uid,
      );
      assert.equal(again.length, 1);
      assert.equal(jobs[0]!.metadata!.name, `every-minute-${slot / 1000}`);

      // Many CronJobs due in the same second: every one gets exactly one Job, and every status catches up
      // (Jobs are created first, the status writes follow through the Jobs' watch events).
      const many = Array.from({ length: 30 }, (_, i) => `burst-${i}`);
      for (const name of many) {
        await client.create(CronJobKind, {
          apiVersion: API_VERSION,
          kind: KIND,
          metadata: { name, namespace: ns },
          spec: { schedule: "* * * * *", jobTemplate: template },
        } as unknown as CronJob);
      }
      const slot2 = slot + 60_000;
      clock.set(new Date(slot2 + 1000));
      await Promise.all(
        many.map((name) => client.patch(CronJobKind, ns, name, { metadata: { labels: { poke: "2" } } }, "merge")),
      );
      await eventually("every burst CronJob has its status written", async () => {
        const cjs = (await client.list<CronJob>(CronJobKind, { namespace: ns })).items.filter((c) =>
          c.metadata.name!.startsWith("burst-"),
        );
        const want = new Date(slot2).toISOString().replace(".000Z", "Z");
        return (
          cjs.length === many.length &&
          cjs.every(
            (c) =>
              c.status?.lastScheduleTime === want &&
              c.status?.active?.some((a) => a.name === `${c.metadata.name}-${slot2 / 1000}`),
          )
        );
      });
      // (They were created with the fake clock already past the first slot, so that one ran too.)
      const burstJobs = (await client.list<Job>(Kinds.Job, { namespace: ns })).items.filter(
        (j) => j.metadata!.name!.startsWith("burst-") && j.metadata!.name!.endsWith(`-${slot2 / 1000}`),
      );
      assert.deepEqual(burstJobs.map((j) => j.metadata!.name).sort(), many.map((n) => `${n}-${slot2 / 1000}`).sort());

      // Webhooks off: an unparseable schedule must settle, not spin.
      const count = async () =>
        ((await metricsRegistry.getSingleMetric("controller_runtime_reconcile_total")?.get())?.values ?? [])
          .filter((v) => v.labels.controller === "cronjob")
          .reduce((a, v) => a + v.value, 0);
      // The burst's own passes (its status writes, held by the write delay, and their watch events) end first: the
      // count below is the controller's, not the broken CronJob's, so it is taken once the rest is quiet.
      await eventually("the controller quiet before the broken CronJob", async () => {
        const a = await count();
        await new Promise((r) => setTimeout(r, 1500));
        return (await count()) === a;
      });
      await client.create(CronJobKind, {
        apiVersion: API_VERSION,
        kind: KIND,
        metadata: { name: "broken", namespace: ns },
        spec: { schedule: "not a schedule", jobTemplate: template },
      } as unknown as CronJob);
      await eventually("Degraded condition", async () => {
        const b = await client.get<CronJob>(CronJobKind, ns, "broken");
        return b.status?.conditions?.some((x) => x.type === "Degraded" && x.reason === "InvalidSchedule") ?? false;
      });
      await new Promise((r) => setTimeout(r, 1000)); // let the events of its own status write settle
      const before = await count();
      await new Promise((r) => setTimeout(r, 3000));
      const during = (await count()) - before;
      assert.ok(during <= 1, `${during} reconciles in 3 s with nothing changing`);
    } finally {
      await m.stop();
    }
  });
});
