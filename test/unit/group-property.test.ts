// A property of the reconciler with a CONCURRENCY GROUP: several CronJobs of one namespace share a ConcurrencyGroup's
// limit, each with its own schedule and concurrencyPolicy (Allow, Forbid, Replace), run-now and backfill requests on
// top, Jobs of random lengths, and restarts (a new CronJobReconciler: nothing remembered) — some of them a kill -9
// between a Job's create and the status write that books it (the write is lost). The reconciler is driven as the
// manager drives it: each CronJob by its own requeue times, by its Jobs' events (the owner), and by the group's
// wake-ups (GroupPlaces.jobEvents: the group's waiting runs when one of its Jobs ends), on a fake clock against the
// in-memory FakeClient. Backfill requests take the group's places too. What must hold:
//   1. After every reconcile, at most `limit` Jobs of the group run (the store's, not a cache's).
//   2. No slot's Job is created twice (by name), across restarts and lost status writes; the one exception is a
//      backfill request filling a slot whose run Replace cancelled (its Job deleted by the next slot) before the
//      backfill reached it, once per cancellation (docs/missed-runs-and-backfill.md).
//   3. No starvation: once the actions stop and every Job is short, every CronJob runs a slot of its schedule again
//      (its newest due slot before the horizon's last hour has its Job, or a later one does).
//   4. Every Held entry the group decided names the group, and a held run starts only when the group has room.
//   5. Retries (spec.retry, on some members; Jobs fail at random until the actions stop): attempt k of a slot is
//      created only after attempt k-1 failed, at least delaySeconds after that failure, k never above the limit,
//      and no attempt twice (2.); with Forbid or Replace a member never has two Jobs running at once.
// PROPERTY_RUNS sets the number of cases (default 60); PROPERTY_SEED fixes fast-check's seed.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  API_VERSION,
  BACKFILL_ANNOTATION,
  BACKFILL_REQUEST_ANNOTATION,
  backfillAnnotationValue,
  classifyJob,
  ConcurrencyGroupResource,
  CONCURRENCY_GROUP_LABEL,
  type CronJob,
  CronJobResource,
  type Job,
  KIND,
  retryAttemptOf,
  retryJobName,
  RUN_NOW_ANNOTATION,
} from "../../api/v1/index.ts";
import { CronJobReconciler, setupCache } from "../../controllers/cronjob_controller.ts";
import { FakeRecorder } from "../../runtime/events/fake.ts";
import { FakeClient } from "../../runtime/fake/client.ts";
import { FakeClock } from "../../runtime/fake-clock.ts";
import { type KubeObject, Kinds, type ResourceKind } from "../../runtime/kinds.ts";
import { discardLogger } from "../../runtime/log.ts";
import { jobStatus } from "../fixtures.ts";

const MIN = 60_000;
const HORIZON = 6 * 60 * MIN;
const LAST_ACTION = 4 * 60 * MIN;
const NS = "fleet";
const POLICIES = ["Allow", "Forbid", "Replace"] as const;
const SCHEDULES = ["*/10 * * * *", "*/15 * * * *", "0 * * * *", "5,35 * * * *"];

interface Member {
  schedule: string;
  policy: (typeof POLICIES)[number];
  deadline: number | undefined;
  retry: { limit: number; delaySeconds: number } | undefined;
}
interface Case {
  limit: number;
  members: Member[];
  /** Each Job's run time in minutes, in creation order (cycled). */
  lengths: number[];
  /** Whether each Job fails, in creation order (cycled; none after the actions stop). */
  fails: boolean[];
  /** Restarts: minutes after start, and whether the status write before it is lost. */
  restarts: { at: number; lost: boolean }[];
  runNows: { at: number; member: number }[];
  /** Backfill requests: when, of which member, a range of `span` minutes ending `back` minutes before, parallelism. */
  backfills: { at: number; member: number; back: number; span: number; parallelism: number }[];
  /** Per pass (cycled): the cache has not seen the Jobs this process created in the last 2 s (a lagging watch). */
  lag: boolean[];
  start: string;
}

const caseArb: fc.Arbitrary<Case> = fc.record({
  limit: fc.integer({ min: 1, max: 3 }),
  members: fc.array(
    fc.record({
      schedule: fc.constantFrom(...SCHEDULES),
      policy: fc.constantFrom(...POLICIES),
      deadline: fc.option(fc.constantFrom(300, 900, 3600), { nil: undefined }),
      retry: fc.option(
        fc.record({ limit: fc.integer({ min: 1, max: 2 }), delaySeconds: fc.constantFrom(0, 120, 600) }),
        { nil: undefined },
      ),
    }),
    { minLength: 2, maxLength: 4 },
  ),
  lengths: fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 12 }),
  fails: fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }),
  restarts: fc.array(fc.record({ at: fc.integer({ min: 1, max: LAST_ACTION / MIN }), lost: fc.boolean() }), {
    maxLength: 4,
  }),
  runNows: fc.array(
    fc.record({ at: fc.integer({ min: 1, max: LAST_ACTION / MIN }), member: fc.integer({ min: 0, max: 3 }) }),
    { maxLength: 4 },
  ),
  backfills: fc.array(
    fc.record({
      at: fc.integer({ min: 1, max: LAST_ACTION / MIN }),
      member: fc.integer({ min: 0, max: 3 }),
      back: fc.integer({ min: 0, max: 120 }),
      span: fc.integer({ min: 10, max: 90 }),
      parallelism: fc.integer({ min: 1, max: 3 }),
    }),
    { maxLength: 2 },
  ),
  lag: fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
  start: fc.constantFrom("2026-06-10T00:03:00Z", "2026-03-29T00:41:00Z"),
});

interface Outcome {
  violation?: string;
  created: Map<string, number>;
  /**
   * Jobs deleted by Replace while they ran, then created again by a backfill request: allowed (assertion 2), once
   * per cancellation (two requests over the slot may each fill it after Replace cancelled it again).
   */
  refilled: Map<string, number>;
  /** Per member: the newest slot it ran. */
  lastRun: Map<string, number>;
  /** Each Job: when it was created, and when it failed (if it did). */
  createdAt: Map<string, number>;
  failedAt: Map<string, number>;
  /** The Jobs the store holds at the end. */
  jobs: Job[];
}

async function simulate(c: Case): Promise<Outcome> {
  const clock = new FakeClock(new Date(c.start));
  const fake = new FakeClient({ now: () => clock.now() });
  setupCache(fake);
  const recorder = new FakeRecorder({ capacity: 20 });
  await fake.create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
  await fake.create(ConcurrencyGroupResource, {
    apiVersion: API_VERSION,
    kind: "ConcurrencyGroup",
    metadata: { name: "g", namespace: NS },
    spec: { limit: c.limit },
  });
  const names = c.members.map((_, i) => `m${i}`);
  for (const [i, m] of c.members.entries()) {
    await fake.create<CronJob>(CronJobResource, {
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: { name: names[i]!, namespace: NS },
      spec: {
        schedule: m.schedule,
        concurrencyPolicy: m.policy,
        concurrencyGroup: "g",
        ...(m.deadline !== undefined ? { startingDeadlineSeconds: m.deadline } : {}),
        ...(m.retry ? { retry: m.retry } : {}),
        successfulJobsHistoryLimit: 100,
        failedJobsHistoryLimit: 100,
        jobTemplate: {
          spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "x" }] } } },
        },
      },
    } as CronJob);
  }
  const out: Outcome = {
    created: new Map(),
    refilled: new Map(),
    lastRun: new Map(),
    createdAt: new Map(),
    failedAt: new Map(),
    jobs: [],
  };
  /** The Jobs that will fail when they end. */
  const failing = new Set<string>();
  /** Jobs Replace deleted while they ran. */
  const cancelled = new Map<string, number>();
  const now = () => clock.now().getTime();
  const ends: { at: number; name: string }[] = [];
  let loseNextStatusWrite = false;
  let creates = 0;
  /** Jobs by name: when they were created, and by which process (a new process lists everything at its start). */
  const made = new Map<string, { at: number; by: number; shown?: boolean }>();
  let process = 0;
  let lagging = false;
  const cache = fake.cache;
  const { get, list, byIndex } = cache;
  const unseen = (o: Readonly<KubeObject> | undefined) => {
    const m = o?.kind === undefined || o.kind === "Job" ? made.get(o?.metadata?.name ?? "") : undefined;
    const hidden = lagging && !!m && m.by === process && now() - m.at < 2000 && !m.shown;
    // A watch never goes back: a Job the cache has shown stays shown.
    if (m && !hidden) m.shown = true;
    return hidden;
  };
  const lagged: typeof cache = Object.create(cache);
  lagged.get = ((kind: ResourceKind, ns: string, n: string) => {
    const o = get.call(cache, kind, ns, n);
    return kind.kind === "Job" && unseen(o) ? undefined : o;
  }) as typeof cache.get;
  lagged.list = ((kind: ResourceKind, o?: object) =>
    list.call(cache, kind, o as never).filter((x) => kind.kind !== "Job" || !unseen(x))) as typeof cache.list;
  lagged.byIndex = ((kind: ResourceKind, index: string, value: string) =>
    byIndex.call(cache, kind, index, value).filter((x) => kind.kind !== "Job" || !unseen(x))) as typeof cache.byIndex;

  const client = new Proxy(fake, {
    get(target, prop, receiver) {
      if (prop === "create") {
        return async (kind: ResourceKind, obj: KubeObject) => {
          const created = await target.create(kind, obj);
          if (kind.kind === Kinds.Job.kind) {
            const name = created.metadata!.name!;
            const refills = out.refilled.get(name) ?? 0;
            if ((cancelled.get(name) ?? 0) > refills && created.metadata?.annotations?.[BACKFILL_REQUEST_ANNOTATION])
              out.refilled.set(name, refills + 1);
            made.set(name, { at: now(), by: process });
            out.created.set(name, (out.created.get(name) ?? 0) + 1);
            out.createdAt.set(name, now());
            const quiet = now() > LAST_ACTION + Date.parse(c.start);
            if (!quiet && c.fails[creates % c.fails.length]) failing.add(name);
            const length = c.lengths[creates++ % c.lengths.length]! * MIN;
            ends.push({ at: now() + (now() > LAST_ACTION + Date.parse(c.start) ? MIN : length), name });
            const job = await target.get<Job>(Kinds.Job, NS, name);
            job.status = jobStatus({ state: "active", start: clock.now().toISOString() });
            await target.updateStatus(Kinds.Job, job as KubeObject);
          }
          return created;
        };
      }
      if (prop === "delete") {
        return async (kind: ResourceKind, ns: string, name: string, o?: object) => {
          if (kind.kind === Kinds.Job.kind) {
            const job = await target.get<Job>(kind, ns, name).catch(() => undefined);
            if (job && classifyJob(job) === "active") cancelled.set(name, (cancelled.get(name) ?? 0) + 1);
          }
          return target.delete(kind, ns, name, o);
        };
      }
      if (prop === "updateStatus") {
        return async (kind: ResourceKind, obj: KubeObject) => {
          if (kind.kind === CronJobResource.kind && loseNextStatusWrite) {
            loseNextStatusWrite = false;
            throw new Error("killed before the status write");
          }
          return target.updateStatus(kind, obj);
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
  const newReconciler = () => {
    process++;
    return new CronJobReconciler({ client, cache: lagged, recorder, clock, statusDelayMs: 0 });
  };
  let reconciler = newReconciler();

  /** When each CronJob wants its next pass. */
  const due = new Map<string, number>(names.map((n) => [n, now()]));
  const restarts = [...c.restarts].sort((a, b) => a.at - b.at);
  const runNows = [...c.runNows].sort((a, b) => a.at - b.at);
  const backfills = [...c.backfills].sort((a, b) => a.at - b.at);
  const t0 = now();
  const running = async () =>
    (await fake.list<Job>(Kinds.Job, { namespace: NS })).items.filter(
      (j) => j.metadata?.labels?.[CONCURRENCY_GROUP_LABEL] === "g" && classifyJob(j) === "active",
    );

  for (let steps = 0; steps < 20_000; steps++) {
    // The next thing to happen: a pass, a Job's end, a restart, a run-now request.
    const nextPass = Math.min(...due.values());
    const nextEnd = ends.length ? Math.min(...ends.map((e) => e.at)) : Infinity;
    const nextRestart = restarts.length ? t0 + restarts[0]!.at * MIN : Infinity;
    const nextRunNow = runNows.length ? t0 + runNows[0]!.at * MIN : Infinity;
    const nextBackfill = backfills.length ? t0 + backfills[0]!.at * MIN : Infinity;
    const t = Math.min(nextPass, nextEnd, nextRestart, nextRunNow, nextBackfill);
    if (t > t0 + HORIZON) break;
    clock.set(new Date(Math.max(t, now())));
    if (t === nextEnd) {
      const i = ends.findIndex((e) => e.at === nextEnd);
      const [e] = ends.splice(i, 1);
      const job = await fake.get<Job>(Kinds.Job, NS, e!.name).catch(() => undefined);
      if (!job || classifyJob(job) !== "active") continue;
      const at = clock.now().toISOString();
      const fails = failing.has(e!.name);
      if (fails) out.failedAt.set(e!.name, now());
      job.status = jobStatus({
        state: fails ? "failed" : "complete",
        start: job.status?.startTime ?? at,
        end: at,
        ...(fails
          ? { failure: { reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit" } }
          : {}),
      });
      await fake.updateStatus(Kinds.Job, job as KubeObject);
      // The watch: the owner, and the group's waiting runs.
      const owner = job.metadata?.ownerReferences?.[0]?.name;
      if (owner) due.set(owner, now());
      for (const r of reconciler.inputs.group.jobEvents(now)(job as KubeObject)) due.set(r.name, now());
      continue;
    }
    if (t === nextRestart) {
      const r = restarts.shift()!;
      if (r.lost) loseNextStatusWrite = true;
      else reconciler = newReconciler();
      for (const n of names) due.set(n, now());
      continue;
    }
    if (t === nextRunNow) {
      const r = runNows.shift()!;
      const name = names[r.member % names.length]!;
      const cj = await fake.get<CronJob>(CronJobResource, NS, name);
      cj.metadata.annotations = { ...cj.metadata.annotations, [RUN_NOW_ANNOTATION]: `req-${r.at}` };
      await fake.update(CronJobResource, cj as KubeObject);
      due.set(name, now());
      continue;
    }
    if (t === nextBackfill) {
      const b = backfills.shift()!;
      const name = names[b.member % names.length]!;
      const to = t - b.back * MIN;
      const value = backfillAnnotationValue({
        id: `bf-${b.at}`,
        from: new Date(to - b.span * MIN),
        to: new Date(to),
        parallelism: b.parallelism,
      });
      const cj = await fake.get<CronJob>(CronJobResource, NS, name);
      cj.metadata.annotations = { ...cj.metadata.annotations, [BACKFILL_ANNOTATION]: value };
      await fake.update(CronJobResource, cj as KubeObject);
      due.set(name, now());
      continue;
    }
    const name = [...due].find(([, at]) => at === nextPass)![0];
    lagging = c.lag[steps % c.lag.length]!;
    let result;
    try {
      result =
        (await reconciler.reconcile(
          { namespace: NS, name },
          { log: discardLogger, reconcileID: `p${steps}`, signal: new AbortController().signal },
        )) ?? {};
    } catch (err) {
      // The process died before its status write: a new one takes over (nothing remembered).
      if (String(err).includes("killed before the status write")) {
        reconciler = newReconciler();
        for (const n of names) due.set(n, now());
        continue;
      }
      result = { requeueAfterMs: 1000 };
    }
    const run = await running();
    if (run.length > c.limit) {
      out.violation = `${run.length} Jobs of the group run after a pass of ${name} at ${clock.now().toISOString()} (limit ${c.limit})`;
      return out;
    }
    for (const [i, m] of c.members.entries()) {
      const mine = run.filter((j) => j.metadata?.ownerReferences?.[0]?.name === names[i]);
      if (m.policy !== "Allow" && mine.length > 1) {
        out.violation = `${names[i]} (${m.policy}) runs ${mine.map((j) => j.metadata?.name).join(", ")} at once at ${clock.now().toISOString()}`;
        return out;
      }
    }
    const after = result.requeueAfterMs ?? (result.requeue ? 1000 : 3_600_000);
    due.set(name, now() + Math.max(after, 1000));
  }
  out.jobs = (await fake.list<Job>(Kinds.Job, { namespace: NS })).items;
  for (const j of out.jobs) {
    const owner = j.metadata?.ownerReferences?.[0]?.name ?? "";
    const slot = Date.parse(j.metadata?.annotations?.["batch.tutorial.kubebuilder.io/scheduled-at"] ?? "");
    if (!Number.isNaN(slot)) out.lastRun.set(owner, Math.max(out.lastRun.get(owner) ?? 0, slot));
  }
  return out;
}

/** Property 5: each retry attempt follows its previous attempt's failure by the member's delay, within its limit. */
function retryViolation(c: Case, out: Outcome, jobs: readonly Job[]): string | undefined {
  const attempts = new Map<string, string>();
  for (const j of jobs) {
    const a = retryAttemptOf(j);
    if (!a) continue;
    const same = attempts.get(`${a.of}/${a.k}`);
    if (same) return `attempt ${a.k} of ${a.of} made twice: ${same} and ${j.metadata?.name}`;
    attempts.set(`${a.of}/${a.k}`, j.metadata?.name ?? "");
    const owner = j.metadata?.ownerReferences?.[0]?.name ?? "";
    const member = c.members[Number(owner.slice(1))];
    const name = j.metadata?.name ?? "";
    if (!member?.retry) return `${name}: a retry of ${owner}, which has no spec.retry`;
    if (a.k > member.retry.limit) return `${name}: attempt ${a.k} above the limit ${member.retry.limit}`;
    const before = a.k === 1 ? a.of : retryJobName(owner, a.of, a.k - 1);
    const failed = out.failedAt.get(before);
    if (failed === undefined) return `${name}: attempt ${a.k} although ${before} did not fail`;
    const at = out.createdAt.get(name) ?? 0;
    if (at < failed + member.retry.delaySeconds * 1000)
      return `${name}: created ${(at - failed) / 1000} s after ${before} failed (delaySeconds ${member.retry.delaySeconds})`;
  }
  return undefined;
}

describe("a concurrency group under interleaved triggers, retries, restarts and lost status writes (property)", () => {
  it("never runs more than the limit, never runs a slot or an attempt twice, retries only as spec.retry says, starves no CronJob", async () => {
    const runs = Number(process.env.PROPERTY_RUNS ?? 60);
    const seed = process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : undefined;
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const out = await simulate(c);
        assert.equal(out.violation, undefined);
        assert.equal(retryViolation(c, out, out.jobs), undefined);
        for (const [name, count] of out.created) {
          assert.equal(count, 1 + (out.refilled.get(name) ?? 0), `${name} created ${count} times`);
        }
        // Liveness: the last two hours are quiet (Jobs of a minute): every member ran within the last hour.
        const end = Date.parse(c.start) + HORIZON;
        for (let i = 0; i < c.members.length; i++) {
          const last = out.lastRun.get(`m${i}`) ?? 0;
          assert.ok(last >= end - 70 * MIN, `m${i} starved: its newest slot run is ${new Date(last).toISOString()}`);
        }
      }),
      { numRuns: runs, ...(seed !== undefined ? { seed } : {}) },
    );
  });
});
