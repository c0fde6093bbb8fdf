// spec.jitter through the reconciler's one run path, against the fake API server: a slot's run starts at its slot
// plus its offset (hashed from the CronJob and the slot: the same after a restart), the Job keeps the slot's name and
// says its offset, the record's entry says when it was due, status.nextScheduleTime announces the start, the pass
// is woken for it, and startingDeadlineSeconds counts from it. The offsets are the product's own (jitterOffsetSeconds),
// pinned once to values computed apart from it (Python's hashlib) so that nothing of the process can enter them.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  ConcurrencyGroupResource,
  JITTER_OFFSET_ANNOTATION,
  jitterOffsetSeconds,
  runStartOf,
} from "../../api/v1/index.ts";
import { parseSchedule } from "../../api/v1/schedule/index.ts";
import { scheduleDecision } from "../../controllers/due.ts";
import { harnessCronJob, reconcilerHarness } from "../reconciler-harness.ts";

const KEY = { namespace: "ns", name: "cj" };
const SLOT = new Date("2026-11-25T10:00:00Z");
const SLACK = 10;

async function setUp(spec: Record<string, unknown>) {
  const h = await reconcilerHarness("2026-11-25T09:59:00Z");
  h.seed(harnessCronJob(KEY.name, { schedule: "0 * * * *", ...spec }, { creationTimestamp: "2026-11-25T09:30:00Z" }));
  const reconcile = (at: Date) => h.reconcile(KEY.name, at);
  return { reconcile, restart: h.restart, jobs: h.jobs, stored: () => h.stored(KEY.name) };
}

const plus = (d: Date, ms: number) => new Date(d.getTime() + ms);

describe("jitter: a slot's run starts at its slot plus its offset", () => {
  const JITTER = 1800;
  const offset = jitterOffsetSeconds(KEY, SLOT, JITTER);
  const start = runStartOf(KEY, SLOT, JITTER);

  it("the offset is the hash's, inside [0, jitter), and the same for the same CronJob and slot", () => {
    assert.ok(offset >= 0 && offset < JITTER);
    assert.equal(jitterOffsetSeconds(KEY, SLOT, JITTER), offset);
    assert.equal(start.getTime(), SLOT.getTime() + offset * 1000);
  });

  it("offsets are pinned: computed apart from the product (Python's hashlib), so nothing of the process enters them", () => {
    // int.from_bytes(hashlib.sha256(b"<namespace>/<name>/<slot's unix seconds>").digest()[:4], "big") % jitter
    const pinned: Array<[{ namespace: string; name: string }, string, number, number]> = [
      [KEY, "2026-11-25T10:00:00Z", 1800, 1225],
      [KEY, "2026-11-25T11:00:00Z", 1800, 234],
      [KEY, "2026-11-25T10:00:00Z", 7, 4],
      [{ namespace: "team-a", name: "nightly" }, "2026-11-25T10:00:00Z", 3600, 297],
      [{ namespace: "f", name: "cj-7" }, "2026-11-25T10:00:00Z", 60, 6],
    ];
    for (const [key, slot, jitter, expected] of pinned)
      assert.equal(jitterOffsetSeconds(key, new Date(slot), jitter), expected, `${key.namespace}/${key.name} ${slot}`);
  });

  it("a jittered slot whose offset is 0 still says it (0s): it was jittered, not unjittered", async () => {
    // jitter 1s: every offset is 0.
    const t = await setUp({ jitter: "1s" });
    await t.reconcile(SLOT);
    const [job] = await t.jobs();
    assert.equal(job?.metadata?.annotations?.[JITTER_OFFSET_ANNOTATION], "0s");
    const plain = await setUp({});
    await plain.reconcile(SLOT);
    const [unjittered] = await plain.jobs();
    assert.ok(unjittered, "the slot's Job");
    assert.equal(unjittered.metadata?.annotations?.[JITTER_OFFSET_ANNOTATION], undefined, "no jitter: no offset");
  });

  it("offsets spread a fleet over the jitter (property: 500 CronJobs on one slot fill every tenth of it)", () => {
    const tenths = new Set<number>();
    for (let i = 0; i < 500; i++)
      tenths.add(Math.floor(jitterOffsetSeconds({ namespace: "f", name: `cj-${i}` }, SLOT, 60) / 6));
    assert.equal(tenths.size, 10);
  });

  it("waits for the start, announces it, is woken for it; the Job keeps its slot's name and says its offset", async () => {
    assert.ok(offset > 2, "the test needs an offset of a few seconds");
    const t = await setUp({ jitter: "30m" });
    const early = await t.reconcile(plus(SLOT, 1000));
    assert.deepEqual(await t.jobs(), [], "no Job before the run's start");
    assert.equal((await t.stored()).status?.nextScheduleTime, start.toISOString().replace(".000Z", "Z"));
    assert.equal(early.requeueAfterMs, start.getTime() - SLOT.getTime() - 1000 + SLACK);
    await t.reconcile(plus(start, -1000));
    assert.equal((await t.jobs()).length, 0, "a second early: nothing yet");
    await t.reconcile(start);
    const [job] = await t.jobs();
    assert.equal(job?.metadata?.name, `cj-${SLOT.getTime() / 1000}`, "the slot's name: the lock");
    assert.equal(
      job?.metadata?.annotations?.[JITTER_OFFSET_ANNOTATION],
      `${offset >= 60 ? `${Math.floor(offset / 60)}m` : ""}${offset % 60}s`,
    );
    const [entry] = (await t.stored()).status?.recentRuns ?? [];
    assert.equal(entry?.scheduledTime, "2026-11-25T10:00:00Z");
    assert.equal(entry?.startsAt, start.toISOString().replace(".000Z", "Z"));
    t.restart();
    await t.reconcile(plus(start, 2000));
    assert.equal((await t.jobs()).length, 1, "a restart decides the same offset: no second run");
  });

  it("startingDeadlineSeconds counts from the run's start, not the slot", async () => {
    const t = await setUp({ jitter: "30m", startingDeadlineSeconds: 60 });
    await t.reconcile(plus(start, 59_000));
    assert.equal((await t.jobs()).length, 1, "59 s after its start (maybe minutes after its slot): it runs");
    const late = await setUp({ jitter: "30m", startingDeadlineSeconds: 60 });
    await late.reconcile(plus(start, 61_000));
    assert.equal((await late.jobs()).length, 0, "61 s after its start: missed");
    assert.equal((await late.stored()).status?.lastMissedTime, "2026-11-25T10:00:00Z");
  });

  it("in a full concurrency group the run waits since its start, and until its start plus the deadline", async () => {
    const h = await reconcilerHarness("2026-11-25T09:59:00Z");
    h.client.seed(ConcurrencyGroupResource, {
      apiVersion: "batch.tutorial.kubebuilder.io/v1",
      kind: "ConcurrencyGroup",
      metadata: { name: "g", namespace: "ns" },
      spec: { limit: 0 },
    } as never);
    const spec = { schedule: "0 * * * *", jitter: "30m", startingDeadlineSeconds: 600, concurrencyGroup: "g" };
    h.seed(harnessCronJob(KEY.name, spec, { creationTimestamp: "2026-11-25T09:30:00Z" }));
    await h.reconcile(KEY.name, start);
    assert.deepEqual(await h.jobs(), [], "limit 0 holds it");
    const waiting = (at: Date) => h.reconciler().inputs.group.waitersOf("ns", "g", at.getTime());
    assert.deepEqual(waiting(start), [{ member: KEY.name, since: start.getTime() }]);
    assert.equal(waiting(plus(start, 599_000)).length, 1, "within the deadline from its start");
    assert.deepEqual(waiting(plus(start, 601_000)), [], "past it");
  });
});

describe("scheduleDecision with jitter (property: every slot is due exactly from its start, once)", () => {
  const hourly = parseSchedule("0 * * * *");
  assert.ok(hourly.ok);
  it("due at and after its start, never before, with no deadline and RunLatest", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3599 }), fc.integer({ min: 0, max: 7200 }), (jitter, sec) => {
        const offsetMs = (slot: Date) => jitterOffsetSeconds(KEY, slot, jitter) * 1000;
        const now = plus(SLOT, sec * 1000);
        const d = scheduleDecision({
          schedule: hourly.schedule,
          lastScheduleTime: "2026-11-25T09:00:00Z",
          creationTimestamp: "2026-11-25T08:30:00Z",
          startingDeadlineSeconds: undefined,
          offsetMs,
          jitterMs: jitter * 1000,
          now,
          clockNow: now,
        });
        // RunLatest: the newest slot whose run has started (its slot plus its offset at or before now).
        const slots = [0, 1, 2].map((h) => plus(SLOT, h * 3600_000)).filter((t) => t <= now);
        const started = slots.filter((t) => t.getTime() + offsetMs(t) <= now.getTime());
        const expected = started.at(-1);
        assert.deepEqual(d.due, expected ? [expected] : [], `at +${sec}s, jitter ${jitter}s`);
        assert.ok(d.nextStart.getTime() > now.getTime() || d.due.length === 0 || d.nextStart > d.due[0]!);
      }),
    );
  });
});
