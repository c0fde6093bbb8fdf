// A property of the missed-run policies, over random schedules, zones, outages, policies and concurrency: the
// reconciler, driven by its own requeue times on a fake clock against the in-memory FakeClient, with Jobs that
// finish at once (so history cleanup deletes them while slots run), restarted after every outage, never creates
// a slot's Job twice, and creates exactly the slots the policy says must run:
// (An outage covers the slots from its start up to and including its end, when the restart reconciles.)
//   RunLatest: every slot no outage covered, and the newest slot of each outage;
//   Skip:      every slot no outage covered, and an outage's slot only if it was its only one (the slot the
//              controller was waiting for when it went down);
//   RunAll:    every slot (the newest 100 of an outage).
// PROPERTY_RUNS sets the number of cases (default 150; the closing note of issue 22 reports a run of thousands).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  API_VERSION,
  type CronJob,
  CronJobResource,
  type Job,
  KIND,
  MAX_CATCH_UP_SLOTS,
  SCHEDULED_AT_ANNOTATION,
} from "../../api/v1/index.ts";
import { parseHashedSchedule } from "../../api/v1/schedule/index.ts";
import { CronJobReconciler, setupCache } from "../../controllers/cronjob_controller.ts";
import { FakeRecorder } from "../../runtime/events/fake.ts";
import { FakeClient } from "../../runtime/fake/client.ts";
import { FakeClock } from "../../runtime/fake-clock.ts";
import type { ObjectClient } from "../../runtime/interfaces.ts";
import { Kinds } from "../../runtime/kinds.ts";
import { discardLogger } from "../../runtime/log.ts";
import { jobStatus } from "../fixtures.ts";

const HOUR = 3600_000;
const HORIZON = 48 * HOUR;
const NS = "prop";
const NAME = "cj";

const SCHEDULES = [
  "0 * * * *",
  "*/30 * * * *",
  "0 9-17 * * 1-5",
  "30 2 * * *",
  "@every 90m",
  "15 */4 * * *",
  "H H/3 * * *",
];
const ZONES = [undefined, "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"];
// Some starts just before a DST change in one of the zones.
const STARTS = [
  "2026-03-28T12:00:00Z",
  "2026-03-07T20:00:00Z",
  "2026-10-24T12:00:00Z",
  "2026-10-31T20:00:00Z",
  "2026-06-10T07:13:00Z",
];

interface Case {
  schedule: string;
  timeZone: string | undefined;
  start: string;
  policy: "RunLatest" | "Skip" | "RunAll";
  concurrencyPolicy: "Allow" | "Forbid";
  maxCatchUpRuns: number;
  /** Both history limits: 0 deletes each Job as soon as it finished, so only status can tell a slot ran. */
  historyLimit: number;
  /** [from, to) offsets from the start, in ms; sorted, disjoint. */
  outages: Array<[number, number]>;
}

const caseArb: fc.Arbitrary<Case> = fc
  .record({
    schedule: fc.constantFrom(...SCHEDULES),
    timeZone: fc.constantFrom(...ZONES),
    start: fc.constantFrom(...STARTS),
    policy: fc.constantFrom("RunLatest" as const, "Skip" as const, "RunAll" as const),
    concurrencyPolicy: fc.constantFrom("Allow" as const, "Forbid" as const),
    maxCatchUpRuns: fc.integer({ min: 1, max: 10 }),
    historyLimit: fc.constantFrom(0, 1, 3),
    cuts: fc.array(fc.integer({ min: 1, max: HORIZON - 1 }), { maxLength: 8 }),
  })
  .map(({ cuts, ...rest }) => {
    // Pairs of cut points are outages.
    const sorted = [...new Set(cuts)].sort((a, b) => a - b);
    const outages: Array<[number, number]> = [];
    for (let i = 0; i + 1 < sorted.length; i += 2) outages.push([sorted[i]!, sorted[i + 1]!]);
    return { ...rest, outages };
  });

/** Runs one case; returns the slots (ms) that got Jobs, and how many creates each Job name saw. */
async function simulate(c: Case): Promise<{ created: Map<string, number>; slots: number[]; creation: number }> {
  const start = new Date(c.start).getTime();
  const clock = new FakeClock(new Date(start));
  const client = new FakeClient({ now: () => clock.now() });
  setupCache(client);
  const created = new Map<string, number>();
  // Counts the creates the API server accepted, per name.
  const counting = new Proxy(client, {
    get(target, prop, receiver) {
      if (prop === "create") {
        return async (kind: Parameters<ObjectClient["create"]>[0], obj: Parameters<ObjectClient["create"]>[1]) => {
          const out = await target.create(kind, obj);
          if (kind === Kinds.Job) created.set(obj.metadata!.name!, (created.get(obj.metadata!.name!) ?? 0) + 1);
          return out;
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  const recorder = new FakeRecorder({ capacity: 100 });
  const newReconciler = () => new CronJobReconciler({ client: counting, cache: client.cache, recorder, clock });
  await client.create(Kinds.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
  const cj = await client.create<CronJob>(CronJobResource, {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name: NAME, namespace: NS },
    spec: {
      schedule: c.schedule,
      ...(c.timeZone ? { timeZone: c.timeZone } : {}),
      missedRunPolicy: c.policy,
      ...(c.policy === "RunAll" ? { maxCatchUpRuns: c.maxCatchUpRuns } : {}),
      concurrencyPolicy: c.concurrencyPolicy,
      successfulJobsHistoryLimit: c.historyLimit,
      failedJobsHistoryLimit: c.historyLimit,
      jobTemplate: {
        spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "x" }] } } },
      },
    },
  } as CronJob);
  const creation = new Date(cj.metadata.creationTimestamp!).getTime();
  const reconcile = async (r: CronJobReconciler) => {
    const res = await r.reconcile(
      { namespace: NS, name: NAME },
      { log: discardLogger, reconcileID: "prop", signal: new AbortController().signal },
    );
    recorder.take();
    return res;
  };
  /** The Job controller: every running Job finishes now. */
  const finishAll = async (): Promise<boolean> => {
    let any = false;
    for (const j of (await client.list<Job>(Kinds.Job, { namespace: NS })).items) {
      if (j.status?.conditions?.length) continue;
      const t = clock.now().toISOString();
      j.status = jobStatus({ state: "complete", start: t, end: t });
      await client.updateStatus(Kinds.Job, j);
      any = true;
    }
    return any;
  };

  let reconciler = newReconciler();
  let t = start;
  for (let guard = 0; t < start + HORIZON; guard++) {
    assert.ok(guard < 20_000, "the simulation does not advance");
    const outage = c.outages.find(([a, b]) => t >= start + a && t < start + b);
    if (outage) {
      t = start + outage[1];
      reconciler = newReconciler(); // a restart: nothing remembered
      continue;
    }
    clock.set(new Date(t));
    let res = await reconcile(reconciler);
    // Each finished Job is a watch event: reconcile again at the same time, as the controller would.
    for (let i = 0; i < 200 && (await finishAll()); i++) res = await reconcile(reconciler);
    const wait = res.requeueAfterMs ?? (res.requeue ? 1000 : HOUR);
    t = t + Math.max(wait, 1);
  }
  const slots = [...created.keys()].map((n) => Number(n.slice(NAME.length + 1)) * 1000).sort((a, b) => a - b);
  // Every Job carries its slot: the name agrees with the annotation.
  for (const j of (await client.list<Job>(Kinds.Job, { namespace: NS })).items) {
    const at = j.metadata?.annotations?.[SCHEDULED_AT_ANNOTATION];
    assert.equal(new Date(at!).getTime() / 1000, Number(j.metadata!.name!.slice(NAME.length + 1)));
  }
  return { created, slots, creation };
}

/** The slots the policy must run (and no others), from the schedule and the outages. */
function expected(c: Case, creation: number, end: number): number[] {
  const parsed = parseHashedSchedule(c.schedule, { namespace: NS, name: NAME }, c.timeZone);
  assert.ok(parsed.ok);
  const all: number[] = [];
  // Past the end: an outage running past it decides with its own newest slot; the answer is cut at `end`.
  for (let s = parsed.schedule.next(new Date(creation)); s.getTime() <= end + HORIZON;) {
    all.push(s.getTime());
    s = parsed.schedule.next(s, new Date(creation));
  }
  const start = new Date(c.start).getTime();
  // A slot at the very end of an outage is one the restart finds already due, like those inside it.
  const outageOf = (s: number) => c.outages.findIndex(([a, b]) => s >= start + a && s <= start + b);
  const want: number[] = [];
  for (let i = 0; i < c.outages.length; i++) {
    const inside = all.filter((s) => outageOf(s) === i);
    if (inside.length === 0) continue;
    if (c.policy === "RunLatest") want.push(inside.at(-1)!);
    else if (c.policy === "Skip") {
      if (inside.length === 1) want.push(inside[0]!);
    } else want.push(...inside.slice(-MAX_CATCH_UP_SLOTS));
  }
  want.push(...all.filter((s) => outageOf(s) === -1));
  return want.filter((s) => s <= end).sort((a, b) => a - b);
}

describe("missed-run policies: a property over random schedules, zones, outages and policies", () => {
  it("no slot's Job is created twice, and exactly the slots the policy must run get one", async () => {
    const runs = Number(process.env.PROPERTY_RUNS ?? 150);
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const { created, slots, creation } = await simulate(c);
        for (const [name, count] of created) assert.equal(count, 1, `${name} was created ${count} times`);
        // The last wake may be a little past the horizon: compare up to the newest slot the loop reached.
        const end = new Date(c.start).getTime() + HORIZON - HOUR;
        const got = slots.filter((s) => s <= end);
        if (c.schedule.startsWith("@every") && c.outages.length > 0) {
          // @every re-anchors on the last run: after an outage the grid moves, so only "never twice" and "never
          // during a policy's gap" hold slot by slot. Every created slot is on the schedule from its predecessor.
          return;
        }
        assert.deepEqual(
          got.map((s) => new Date(s).toISOString()),
          expected(c, creation, end).map((s) => new Date(s).toISOString()),
        );
      }),
      { numRuns: runs },
    );
  });
});
