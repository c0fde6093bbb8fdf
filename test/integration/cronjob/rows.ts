// The behaviour tables as rows of data, played by one runner. A row is a title, a CronJob spec and steps:
// set the fake clock, reconcile (a pass of the table's reconciler, or of a new one: a restart), play the Job
// controller, change the CronJob, and expect what the apiserver then holds (Jobs, status, Events). Times are
// offsets from the case's first slot h1 (the first full hour after the CronJob's creation), so a row reads as
// the story it tests. Each row becomes one `it` with the row's title; cases whose story does not fit these
// steps stay hand-written next to the rows, on the same harness (the table's `h`, `fresh`, `play`).
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import {
  backfillAnnotationValue,
  BACKFILL_ANNOTATION,
  BACKFILL_REQUEST_ANNOTATION,
  type CronJob,
  type CronJobInput,
  CronJobResource as CronJobKind,
  jobForRunNow,
  manualJobName,
  RUN_NOW_REQUEST_ANNOTATION,
  SCHEDULED_AT_ANNOTATION,
} from "../../../api/v1/index.ts";
import { CronJobReconciler } from "../../../controllers/cronjob_controller.ts";
import type { RunOutcome } from "../../../controllers/metrics.ts";
import type { Result } from "../../../runtime/controller.ts";
import type { ObjectClient } from "../../../runtime/interfaces.ts";
import { Kinds } from "../../../runtime/kinds.ts";
import { discardLogger } from "../../../runtime/log.ts";
import { condition, type ReconcileHarness, type ReconcilerDriver } from "./harness.ts";

export const HOUR = 3600_000;
export const MIN = 60_000;
/** The slots h1 + n hours. */
export const hours = (...n: number[]): Offset[] => n.map((i) => i * HOUR);
/** `count` consecutive hourly slots from h1 + `from` hours. */
export const hourRange = (from: number, count: number): Offset[] =>
  Array.from({ length: count }, (_, i) => (from + i) * HOUR);
/** `count` passes a minute apart, the first a minute after `after`. */
export const minutely = (after: Offset, count: number): Step[] =>
  Array.from({ length: count }, (_, i): Step => ({ at: after + (i + 1) * MIN, reconcile: "pass" }));
const iso = (t: number) => new Date(t).toISOString().replace(/\.\d{3}Z$/, "Z");
const nextHour = (t: number) => Math.floor(t / HOUR) * HOUR + HOUR;

/** An instant, in ms after the case's first slot h1 (negative: before it). */
export type Offset = number;
/** A Job of the case's CronJob: the scheduled run of the slot at that offset, or a run-now request's Job. */
export type JobRef = Offset | { runNow: string };
/** What a text names in a case: its CronJob, a Job's name, an instant as status writes it. */
export interface Names {
  readonly name: string;
  job(ref: JobRef): string;
  time(at: Offset): string;
}
/** An expected text; a function when it names the case's objects. */
type Text = string | ((c: Names) => string);
type Spec = Partial<CronJobInput["spec"]>;

export type Step =
  /** A reconcile by the table's reconciler ("pass") or by a new one that remembers nothing ("restart"). */
  | "pass"
  | "restart"
  /** Drop the Events recorded so far. */
  | "forget events"
  /** Set the fake clock. */
  | { at: Offset }
  /**
   * A reconcile, the clock first set to `at`; with what it must return: requeued at once (at most 1 s), later
   * (more), for an instant (10 ms after it, the reconciler's slack), not at all ("none": an empty result), or
   * after at least `atLeastMs`. `unseen`: Jobs that pass's cache does not show yet.
   */
  | {
      reconcile: "pass" | "restart";
      at?: Offset;
      unseen?: JobRef[];
      requeue?: "now" | "later" | "none" | Offset | { atLeastMs: number };
    }
  /** The Job controller starts a Job. */
  | { startJob: JobRef; since: Offset }
  /** The Job controller ends a Job: started at `start` (a slot's own by default), ended a minute later by default. */
  | { finish: JobRef; as: "Complete" | "Failed"; start?: Offset; end?: Offset }
  /** The Job a process created for a run-now request before it died: status never recorded the request. */
  | { createRunNowJob: string }
  /** Set annotations on the CronJob (null removes one), as `kubectl annotate` does. */
  | { annotate: Record<string, string | null> }
  /** Request a backfill of the slots from `from` to `to` (the backfill annotation; id "bf-1", parallelism 1). */
  | { backfill: { from: Offset; to: Offset; parallelism?: number; id?: string } }
  /** Change the CronJob's spec. */
  | { patch: Spec }
  /** What the apiserver holds now; `why` is the message of each assertion. */
  | { expect: Expect; why?: string };

export interface Expect {
  /** The slots of all the CronJob's Jobs (the scheduled-at annotation), sorted. */
  jobs?: Offset[];
  /** The slots of its scheduled runs (Jobs not of a backfill), sorted. */
  scheduledJobs?: Offset[];
  /** The slots of its backfill Jobs, sorted; a number: how many. */
  backfillJobs?: Offset[] | number;
  /** The names of all its Jobs, by name. */
  jobNames?: JobRef[];
  /** How many Jobs it has, of any kind. */
  jobCount?: number;
  /** Its run-now Jobs by request, by name; a number: how many. */
  runNowJobs?: string[] | number;
  /** A Job of each of these names exists. */
  exist?: JobRef[];
  status?: StatusExpect;
  /** The reason of each condition. */
  conditions?: Record<string, string>;
  /** The Events recorded since the last look (taken: the next look starts after them). */
  events?: EventsExpect;
  /** The outcomes counted (run metrics) since the case began: the table counts runs. */
  counted?: RunOutcome[];
}

/** Fields of status.* as given; null: absent. */
export interface StatusExpect {
  lastScheduleTime?: Offset | null;
  nextScheduleTime?: Offset | null;
  lastMissedTime?: Offset | null;
  lastSuccessfulTime?: Offset | null;
  lastFailedTime?: Offset | null;
  consecutiveFailures?: number | null;
  lastResumeRequest?: string;
  lastRunNowRequest?: string | null;
  /** "set": present; {failures}: that count only; with time and generation: exactly that. */
  stopped?: null | "set" | { failures: number } | { time: Offset; failures: number; generation: number };
  /** The names of status.active; a number: how many. */
  active?: JobRef[] | number;
  /** The fields given of status.backfill; the message matches the pattern. */
  backfill?: {
    id?: string;
    phase?: string;
    total?: number;
    created?: number;
    skipped?: number;
    lastSlot?: Offset;
    message?: RegExp;
  };
}

export interface EventsExpect {
  /** Only the Events whose line contains this, or starts with this (all by default). */
  containing?: string;
  startingWith?: string;
  /** Exactly these, in order. */
  are?: Text[];
  count?: number;
  /** The first of them contains each text, matches each pattern; matches none of `firstLacks`. */
  firstHas?: (Text | RegExp | ((c: Names) => RegExp))[];
  firstLacks?: RegExp[];
  /** One of them starts with each of these. */
  someStartWith?: Text[];
  /** One of them is each of these. */
  include?: Text[];
}

export interface Row {
  title: string;
  spec?: Spec;
  /** Whether a pass sees the CronJob before the steps, at h1 - 30m (the table's default). */
  firstPass?: boolean;
  steps: readonly Step[];
}

/** A case's CronJob, as created. */
export interface Case extends Names {
  readonly h1: number;
  readonly created: CronJob;
}

export interface TableOptions {
  /** The namespace of the table's CronJobs, and their names' prefix. */
  namespace: string;
  prefix: string;
  /**
   * Before a case's steps the clock is at h1 - 30m; with firstPass, one pass has seen the CronJob and its
   * Events are dropped.
   */
  firstPass: boolean;
  /** Passes by a reconciler of the table's own that counts runs (Expect.counted); else the harness's. */
  countRuns?: boolean;
}

/**
 * The harness of a table, set up before its cases and stopped after them: call inside the table's describe.
 * Its rows and hand-written cases share it (one control plane on envtest).
 */
export function rowTable(driver: ReconcilerDriver, o: TableOptions): RowTable {
  const table = new RowTable(o);
  before(async () => {
    await driver.setup();
    await table.start(await driver.harness(o.namespace, new Date().toISOString()));
  });
  after(async () => {
    await table.stop();
    await driver.teardown();
  });
  return table;
}

/** One `it` per row, with the row's title, in the describe it is called in. */
export function runRows(table: RowTable, rows: readonly Row[]): void {
  for (const row of rows) it(row.title, () => table.run(row));
}

class RowTable {
  #h: ReconcileHarness<ObjectClient> | undefined;
  #reconciler: CronJobReconciler | undefined;
  #n = 0;
  /** Runs counted since the last case began (countRuns), as `namespace/name outcome`. */
  readonly counted: string[] = [];
  readonly #o: TableOptions;

  /** The reconciler of the table's passes. */
  get reconciler(): CronJobReconciler {
    return this.#reconciler ?? this.h.reconciler;
  }

  constructor(o: TableOptions) {
    this.#o = o;
  }

  get h(): ReconcileHarness<ObjectClient> {
    if (!this.#h) throw new Error("the table's harness is used before its setup");
    return this.#h;
  }

  async start(h: ReconcileHarness<ObjectClient>): Promise<void> {
    this.#h = h;
    if (this.#o.countRuns)
      this.#reconciler = new CronJobReconciler({
        client: h.client,
        cache: h.cache,
        recorder: h.recorder,
        clock: h.clock,
        metrics: {
          countRun: (ns: string, name: string, outcome: RunOutcome) => this.counted.push(`${ns}/${name} ${outcome}`),
          forget: () => {},
        },
      });
  }

  async stop(): Promise<void> {
    await this.#h?.stop();
  }

  /** A new CronJob on `0 * * * *` with `spec`, the clock half an hour before its first slot h1. */
  async fresh(spec: Spec = {}, firstPass = this.#o.firstPass): Promise<Case> {
    const h = this.h;
    const name = `${this.#o.prefix}-${++this.#n}`;
    const created = await h.createCronJob(name, spec);
    const h1 = nextHour(new Date(created.metadata.creationTimestamp!).getTime());
    h.clock.set(new Date(h1 - HOUR / 2));
    if (firstPass) await this.reconcile(name);
    h.takeEvents();
    this.counted.length = 0;
    return {
      name,
      h1,
      created,
      job: (ref) => (typeof ref === "number" ? `${name}-${(h1 + ref) / 1000}` : manualJobName(name, ref.runNow)),
      time: (at) => iso(h1 + at),
    };
  }

  /** A pass of the table's reconciler; `unseen`: Jobs its cache does not show yet. */
  async reconcile(name: string, unseen?: readonly string[]): Promise<Result> {
    const h = this.h;
    const reconciler = this.#reconciler;
    if (!reconciler) return h.reconcile(name, unseen ? { unseenJobs: unseen } : {});
    const pass = () =>
      reconciler.reconcile(
        { namespace: h.namespace, name },
        { log: discardLogger, reconcileID: "run-now", signal: new AbortController().signal },
      );
    const r = unseen ? await h.withJobsUnseen(unseen, pass) : await pass();
    await h.settle(name);
    return r;
  }

  /** A reconcile by another reconciler: a restart, or another replica after a leader change. */
  async restart(name: string, unseen?: readonly string[]): Promise<Result> {
    const h = this.h;
    const other = new CronJobReconciler({ client: h.client, cache: h.cache, recorder: h.recorder, clock: h.clock });
    const pass = () =>
      other.reconcile(
        { namespace: h.namespace, name },
        { log: discardLogger, reconcileID: "restarted", signal: new AbortController().signal },
      );
    const r = unseen ? await h.withJobsUnseen(unseen, pass) : await pass();
    await h.settle(name);
    return r;
  }

  async run(row: Row): Promise<void> {
    await this.play(await this.fresh(row.spec, row.firstPass), row.steps);
  }

  async play(c: Case, steps: readonly Step[]): Promise<void> {
    for (const s of steps) await this.#step(c, s);
  }

  async #annotate(c: Case, annotations: Record<string, string | null>): Promise<void> {
    await this.#update(c, (cj) => {
      const merged: Record<string, string> = { ...cj.metadata.annotations };
      for (const [k, v] of Object.entries(annotations)) {
        if (v === null) delete merged[k];
        else merged[k] = v;
      }
      cj.metadata.annotations = merged;
    });
  }

  async #update(c: Case, change: (cj: CronJob) => void): Promise<void> {
    const cj = await this.h.get(c.name);
    change(cj);
    await this.h.client.update(CronJobKind, cj);
    await this.h.settle(c.name);
  }

  async #step(c: Case, s: Step): Promise<void> {
    const h = this.h;
    if (s === "pass") await this.reconcile(c.name);
    else if (s === "restart") await this.restart(c.name);
    else if (s === "forget events") h.takeEvents();
    else if ("reconcile" in s) {
      if (s.at !== undefined) h.clock.set(new Date(c.h1 + s.at));
      const unseen = s.unseen?.map((r) => c.job(r));
      const r = s.reconcile === "pass" ? await this.reconcile(c.name, unseen) : await this.restart(c.name, unseen);
      if (s.requeue === "none") assert.deepEqual(r, {}, "not requeued");
      else if (typeof s.requeue === "object")
        assert.ok(
          (r.requeueAfterMs ?? -Infinity) >= s.requeue.atLeastMs,
          `requeued after ${s.requeue.atLeastMs} ms at least: ${JSON.stringify(r)}`,
        );
      else if (s.requeue === "now")
        assert.ok((r.requeueAfterMs ?? Infinity) <= 1000, `requeued at once: ${JSON.stringify(r)}`);
      else if (s.requeue === "later")
        assert.ok((r.requeueAfterMs ?? Infinity) > 1000, `requeued later: ${JSON.stringify(r)}`);
      else if (s.requeue !== undefined)
        assert.equal(
          r.requeueAfterMs,
          c.h1 + s.requeue - h.clock.now().getTime() + 10,
          `requeued for ${c.time(s.requeue)}`,
        );
    } else if ("at" in s) h.clock.set(new Date(c.h1 + s.at));
    else if ("startJob" in s) await h.startJob(c.job(s.startJob), c.time(s.since));
    else if ("finish" in s) {
      const start = s.start ?? (typeof s.finish === "number" ? s.finish : undefined);
      if (start === undefined) throw new Error("finish: a run-now Job's start must be given");
      await h.finishJob(c.job(s.finish), s.as, c.time(start), c.time(s.end ?? start + MIN));
      await h.settle(c.name);
    } else if ("createRunNowJob" in s) {
      await h.client.create(Kinds.Job, jobForRunNow(c.created, s.createRunNowJob, undefined));
      await h.settle(c.name);
    } else if ("annotate" in s) await this.#annotate(c, s.annotate);
    else if ("backfill" in s) {
      const { from, to, parallelism = 1, id = "bf-1" } = s.backfill;
      const value = backfillAnnotationValue({ id, from: new Date(c.h1 + from), to: new Date(c.h1 + to), parallelism });
      await this.#annotate(c, { [BACKFILL_ANNOTATION]: value });
    } else if ("patch" in s) await this.#update(c, (cj) => Object.assign(cj.spec, s.patch));
    else await this.#expect(c, s.expect, s.why);
  }

  async #expect(c: Case, e: Expect, why: string | undefined): Promise<void> {
    const h = this.h;
    const text = (t: Text) => (typeof t === "string" ? t : t(c));
    if (
      e.jobs ||
      e.scheduledJobs ||
      e.backfillJobs !== undefined ||
      e.jobNames ||
      e.jobCount !== undefined ||
      e.runNowJobs !== undefined ||
      e.exist
    ) {
      const jobs = await h.jobs(c.name);
      const slot = (j: (typeof jobs)[number]) => j.metadata?.annotations?.[SCHEDULED_AT_ANNOTATION];
      const ofBackfill = (j: (typeof jobs)[number]) =>
        j.metadata?.annotations?.[BACKFILL_REQUEST_ANNOTATION] !== undefined;
      const slots = (js: typeof jobs) =>
        js
          .map(slot)
          .filter((s): s is string => s !== undefined)
          .sort();
      if (e.jobs) assert.deepEqual(slots(jobs), e.jobs.map(c.time), why);
      if (e.scheduledJobs)
        assert.deepEqual(slots(jobs.filter((j) => !ofBackfill(j))), e.scheduledJobs.map(c.time), why);
      if (typeof e.backfillJobs === "number") assert.equal(jobs.filter(ofBackfill).length, e.backfillJobs, why);
      else if (e.backfillJobs) assert.deepEqual(slots(jobs.filter(ofBackfill)), e.backfillJobs.map(c.time), why);
      if (e.jobNames)
        assert.deepEqual(
          jobs.map((j) => j.metadata!.name!),
          e.jobNames.map(c.job),
          why,
        );
      if (e.jobCount !== undefined) assert.equal(jobs.length, e.jobCount, why);
      const runNow = jobs.filter((j) => j.metadata?.annotations?.[RUN_NOW_REQUEST_ANNOTATION] !== undefined);
      if (typeof e.runNowJobs === "number") assert.equal(runNow.length, e.runNowJobs, why);
      else if (e.runNowJobs)
        assert.deepEqual(
          runNow.map((j) => j.metadata!.name!),
          e.runNowJobs.map((id) => c.job({ runNow: id })),
          why,
        );
      for (const ref of e.exist ?? [])
        assert.ok(
          jobs.some((j) => j.metadata?.name === c.job(ref)),
          why ?? `${c.job(ref)} exists`,
        );
    }
    if (e.status || e.conditions) {
      const cj = await h.get(c.name);
      if (e.status) this.#status(c, cj, e.status, why);
      for (const [type, reason] of Object.entries(e.conditions ?? {}))
        assert.equal(condition(cj, type)?.reason, reason, why ?? type);
    }
    if (e.events) {
      const ev = e.events;
      const taken = h.takeEvents();
      const got = taken.filter(
        (l) =>
          (ev.containing === undefined || l.includes(ev.containing)) &&
          (ev.startingWith === undefined || l.startsWith(ev.startingWith)),
      );
      if (ev.are) assert.deepEqual(got, ev.are.map(text), why);
      if (ev.count !== undefined) assert.equal(got.length, ev.count, why ?? got.join("\n"));
      if (ev.firstHas || ev.firstLacks) {
        const first = got[0];
        assert.ok(first !== undefined, why ?? `no such Event among ${JSON.stringify(taken)}`);
        for (const m of ev.firstHas ?? []) {
          const want = typeof m === "function" ? m(c) : m;
          if (want instanceof RegExp) assert.match(first, want, why);
          else assert.ok(first.includes(want), why ?? first);
        }
        for (const m of ev.firstLacks ?? []) assert.doesNotMatch(first, m, why);
      }
      for (const t of ev.someStartWith ?? [])
        assert.ok(
          got.some((l) => l.startsWith(text(t))),
          why ?? `an Event starts with ${text(t)}: ${got.join("\n")}`,
        );
      for (const t of ev.include ?? []) assert.ok(got.includes(text(t)), why ?? `${text(t)}: ${got.join("\n")}`);
    }
    if (e.counted)
      assert.deepEqual(
        this.counted,
        e.counted.map((o) => `${h.namespace}/${c.name} ${o}`),
        why,
      );
  }

  #status(c: Case, cj: CronJob, e: StatusExpect, why: string | undefined): void {
    const st = cj.status;
    const times = ["lastScheduleTime", "nextScheduleTime", "lastMissedTime", "lastSuccessfulTime", "lastFailedTime"];
    for (const k of times as (keyof StatusExpect & keyof NonNullable<typeof st>)[]) {
      const want = e[k] as Offset | null | undefined;
      if (want !== undefined) assert.equal(st?.[k], want === null ? undefined : c.time(want), why ?? k);
    }
    for (const k of ["consecutiveFailures", "lastResumeRequest", "lastRunNowRequest"] as const) {
      const want = e[k];
      if (want !== undefined) assert.equal(st?.[k], want ?? undefined, why ?? k);
    }
    const stopped = e.stopped;
    if (stopped === null) assert.equal(st?.stopped, undefined, why ?? "stopped");
    else if (stopped === "set") assert.ok(st?.stopped, why ?? "stopped");
    else if (stopped && "time" in stopped)
      assert.deepEqual(st?.stopped, { ...stopped, time: c.time(stopped.time) }, why ?? "stopped");
    else if (stopped) assert.equal(st?.stopped?.failures, stopped.failures, why ?? "stopped.failures");
    if (typeof e.active === "number") assert.equal(st?.active?.length, e.active, why ?? "active");
    else if (e.active)
      assert.deepEqual(
        st?.active?.map((r) => r.name),
        e.active.map(c.job),
        why ?? "active",
      );
    if (e.backfill) {
      const { message, lastSlot, ...fields } = e.backfill;
      const bf = st?.backfill;
      const want: Record<string, unknown> = {
        ...fields,
        ...(lastSlot !== undefined ? { lastSlot: c.time(lastSlot) } : {}),
      };
      const got = Object.fromEntries(
        Object.keys(want).map((k) => [k, (bf as Record<string, unknown> | undefined)?.[k]]),
      );
      assert.deepEqual(got, want, why ?? "backfill");
      if (message) {
        assert.ok(bf?.message !== undefined, why ?? "backfill.message");
        assert.match(bf.message, message, why);
      }
    }
  }
}
