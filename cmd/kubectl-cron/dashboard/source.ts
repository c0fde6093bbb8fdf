// The cluster as the dashboard follows it: informers (runtime/cache) over the CronJobs, Jobs, ExclusionCalendars and
// ConcurrencyGroups the user may read, in one namespace or all, each object trimmed to what the page draws. Changes
// are gathered for a moment and pushed as the rows and lanes they touch. The verdicts are `why`'s (answer/verdicts.ts: the
// same diagnosis over the same facts), read from these informers and, of what they do not hold (Pods, Events, quotas,
// the operator), one list a namespace: those of the CronJobs that changed a moment after the change, all of them at
// most every VERDICT_INTERVAL_MS (and every IDLE_VERDICT_INTERVAL_MS with no change: a slot can turn late unseen).
import {
  type CalendarRead,
  CONCURRENCY_GROUP_LABEL,
  ConcurrencyGroupResource,
  type CronJob,
  CronJobResource,
  CRONJOB_NAME_LABEL,
  ExclusionCalendarResource,
  groupLimitOf,
  type Job,
} from "../../../api/v1/index.ts";
import { Informer } from "../../../runtime/cache/informer.ts";
import type { Client } from "../../../runtime/client.ts";
import { APIError } from "../../../runtime/errors.ts";
import { Kinds, type KubeObject, type ResourceKind } from "../../../runtime/kinds.ts";
import { type GroupMember, groupsOf, memberOf } from "../model/groupfacts.ts";
import { iso } from "../model/time.ts";
import { needsAttention, sharedProblems, type Verdict, verdictOf } from "../answer/verdicts.ts";
import type { Diagnosis } from "../answer/why.ts";
import { readNamespace } from "../read/whyfacts.ts";
import { gatherOperator } from "../read/operator.ts";
import { readClocks } from "../read/clocks.ts";
import { jobFacts, trimCronJob } from "../model/trims.ts";
import { factsOf, type OperatorFacts } from "../model/facts.ts";
import { idOf, laneOf, marksOf, rowOf } from "./marks.ts";
import type { Attention, Fleet, GroupLane, Push, Row, RowMarks } from "./view.ts";

/** How long changes are gathered before one push: a burst of Job updates is one message. */
const PUSH_DELAY_MS = 300;
/** How long after a change the verdicts of the CronJobs it touched are read (a burst of changes is one pass). */
const CHANGE_VERDICT_DELAY_MS = 1_000;
/**
 * The least time between the end of one verdicts pass and the start of the next for changes: a fleet whose statuses
 * change every second (an operator at work) must not have its namespaces' Pods and Events listed every second.
 */
const VERDICT_PASS_GAP_MS = 3_000;
/** How often at most every CronJob's verdict is read again after changes (it lists Pods and Events of every namespace). */
const VERDICT_INTERVAL_MS = 30_000;
/** How often every verdict is read again with no change: time alone turns a slot late. */
const IDLE_VERDICT_INTERVAL_MS = 300_000;
/** Diagnoses made between two turns of the event loop: the page's requests are answered between them. */
const DIAGNOSES_PER_TURN = 100;

/** What start() needs of an informer, whatever it holds. */
type Startable = Pick<Informer, "kind" | "start" | "waitForSync">;

const JOBS_BY_CRONJOB = "cronjob";
const JOBS_BY_GROUP = "group";

interface SourceOptions {
  client: Client;
  /** undefined: every namespace (-A). */
  namespace: string | undefined;
  now: () => Date;
  /** Where the operator runs (`--operator-namespace`); else found as `why` finds it. */
  operatorNamespace?: string;
}

export class FleetSource {
  private readonly o: SourceOptions;
  private readonly cronJobs: Informer<CronJob>;
  private readonly jobs: Informer<Job>;
  private readonly calendars: Informer<KubeObject & { spec?: { windows?: unknown } }>;
  private readonly groups: Informer<KubeObject>;
  /** What this user may not read, as the page says it. */
  readonly unreadable: string[] = [];
  private readable = new Set<ResourceKind>();
  private readonly listeners = new Set<(p: Push) => void>();
  private dirtyRows = new Set<string>();
  private removed = new Set<string>();
  /** Namespaces whose calendars or groups changed: all their rows are pushed again. */
  private dirtyNamespaces = new Set<string>();
  /** Namespaces where anything changed: their groups' lanes are pushed again. */
  private laneNamespaces = new Set<string>();
  private pushTimer: NodeJS.Timeout | undefined;
  private attention: Record<string, Attention | null> | undefined;
  private shared: Attention[] = [];
  private verdictsAt: Date | undefined;
  /** When every CronJob's verdict was last read. */
  private fullVerdictsAt: Date | undefined;
  /**
   * Each CronJob's verdict as last read, by id: the whole verdict of one that needs attention (the shared problems
   * are counted from them), of a healthy one only that it is and its group's key.
   */
  private readonly verdicts = new Map<string, Verdict | { healthy: true; group: string | undefined }>();
  /** When the next verdicts pass is due (its timer set). */
  private verdictDue = 0;
  /** When the last verdicts pass ended. */
  private lastPassEnd = 0;
  /** CronJobs whose verdicts are stale: they, their Jobs, or their namespace's calendars or groups changed. */
  private staleVerdicts = new Set<string>();
  private verdictTimer: NodeJS.Timeout | undefined;
  private verdictsRunning = false;
  private stopped = false;

  constructor(o: SourceOptions) {
    this.o = o;
    const ns = o.namespace !== undefined ? { namespace: o.namespace } : {};
    this.cronJobs = new Informer<CronJob>(o.client, CronJobResource, { ...ns, pageSize: 500 });
    this.cronJobs.setTransform(trimCronJob);
    this.jobs = new Informer<Job>(o.client, Kinds.Job, { ...ns, pageSize: 500 });
    // Trimmed as `why` trims the Jobs it lists: the page reads less, never more.
    this.jobs.setTransform(jobFacts);
    this.jobs.addIndex(JOBS_BY_CRONJOB, (j) => {
      const owner = j.metadata?.labels?.[CRONJOB_NAME_LABEL];
      return owner === undefined ? [] : [`${j.metadata?.namespace ?? ""}/${owner}`];
    });
    this.jobs.addIndex(JOBS_BY_GROUP, (j) => {
      const g = j.metadata?.labels?.[CONCURRENCY_GROUP_LABEL];
      return g === undefined ? [] : [`${j.metadata?.namespace ?? ""}/${g}`];
    });
    this.calendars = new Informer(o.client, ExclusionCalendarResource, ns);
    this.groups = new Informer(o.client, ConcurrencyGroupResource, ns);
    this.cronJobs.addEventHandler({
      onAdd: (c) => this.touch(idOf(c)),
      onUpdate: (_, c) => this.touch(idOf(c)),
      onDelete: (c) => this.gone(idOf(c)),
    });
    this.jobs.addEventHandler({
      onAdd: (j) => this.touchJob(j),
      onUpdate: (_, j) => this.touchJob(j),
      onDelete: (j) => this.touchJob(j),
    });
    const namespaceChanged = (x: KubeObject) => this.touchNamespace(x.metadata?.namespace ?? "");
    this.calendars.addEventHandler({
      onAdd: namespaceChanged,
      onUpdate: (_, x) => namespaceChanged(x),
      onDelete: namespaceChanged,
    });
    this.groups.addEventHandler({
      onAdd: namespaceChanged,
      onUpdate: (_, x) => namespaceChanged(x),
      onDelete: namespaceChanged,
    });
  }

  /** Lists what it may (a kind this user may not list is said, not retried) and follows it; resolves once synced. */
  async start(): Promise<void> {
    const where = this.o.namespace !== undefined ? `in namespace ${this.o.namespace}` : "in any namespace";
    const informers: [Startable, string][] = [
      [this.cronJobs, "cronjobs"],
      [this.jobs, "jobs"],
      [this.calendars, "exclusioncalendars"],
      [this.groups, "concurrencygroups"],
    ];
    const started = await Promise.all(
      informers.map(async ([inf, what]) => {
        try {
          await this.o.client.list(inf.kind, {
            ...(this.o.namespace !== undefined ? { namespace: this.o.namespace } : {}),
            limit: 1,
          });
        } catch (e) {
          // The CronJobs themselves must be readable: that error is the command's.
          if (inf === this.cronJobs) throw e;
          const reason = e instanceof APIError ? (e.reason === "Forbidden" ? "forbidden" : e.message) : String(e);
          this.unreadable.push(`list ${what} ${where}: ${reason}`);
          return undefined;
        }
        this.readable.add(inf.kind);
        inf.start();
        return inf;
      }),
    );
    await Promise.all(started.map((inf) => inf?.waitForSync()));
    // What the initial lists added is the first page, not a change.
    this.dirtyRows.clear();
    this.dirtyNamespaces.clear();
    this.laneNamespaces.clear();
    clearTimeout(this.pushTimer);
    this.pushTimer = undefined;
    this.scheduleVerdicts(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.pushTimer);
    clearTimeout(this.verdictTimer);
    await Promise.all([this.cronJobs, this.jobs, this.calendars, this.groups].map((i) => i.stop()));
  }

  /** Pushes to `fn` from now on; the verdicts already read first (the page may have loaded before they came). */
  subscribe(fn: (p: Push) => void): () => void {
    this.listeners.add(fn);
    if (this.attention && this.verdictsAt) {
      fn({ type: "verdicts", at: iso(this.verdictsAt), attention: this.attention, shared: this.shared });
    }
    return () => this.listeners.delete(fn);
  }

  /** Every CronJob's line, sorted by namespace and name. */
  fleet(actions: boolean): Fleet {
    const now = this.o.now();
    const rows = this.cronJobs
      .list()
      .map((c) => this.row(c, now))
      .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
    return {
      now: iso(now),
      scope:
        this.o.namespace !== undefined
          ? { namespace: this.o.namespace, allNamespaces: false }
          : { allNamespaces: true },
      rows,
      groups: this.lanes(undefined, now),
      shared: this.shared,
      unreadable: [...this.unreadable],
      actions,
      ...(this.verdictsAt ? { verdictsAt: iso(this.verdictsAt) } : {}),
    };
  }

  /** The marks of the CronJobs `ids` over [from, to]; an id no CronJob has is left out. */
  marks(ids: readonly string[], from: Date, to: Date): RowMarks[] {
    const now = this.o.now();
    const out: RowMarks[] = [];
    for (const id of ids) {
      const c = this.cronJobs.getByKey(id);
      if (!c) continue;
      const namespace = c.metadata?.namespace ?? "";
      out.push(marksOf({ cronJob: c, jobs: this.jobsOf(id), calendars: this.calendarsOf(namespace), from, to, now }));
    }
    return out;
  }

  /** A CronJob as read now (trimmed: no Job template), or undefined. */
  cronJob(id: string): Readonly<CronJob> | undefined {
    return this.cronJobs.getByKey(id);
  }

  private row(c: Readonly<CronJob>, now: Date): Row {
    const row = rowOf(c, this.jobsOf(idOf(c)), now);
    if (this.attention) row.attention = this.attention[row.id] ?? null;
    return row;
  }

  private jobsOf(id: string): Job[] {
    return this.readable.has(Kinds.Job) ? (this.jobs.byIndex(JOBS_BY_CRONJOB, id) as Job[]) : [];
  }

  private calendarsOf(namespace: string): CalendarRead[] {
    if (!this.readable.has(ExclusionCalendarResource)) {
      // The operator may read them; this user cannot: every calendar named is unknown here.
      return [];
    }
    return this.calendars
      .list(namespace)
      .map((c) => ({ name: c.metadata?.name ?? "", state: "found", windows: c.spec?.windows ?? [] }));
  }

  /** The groups' lanes of one namespace, or of all (`namespace` undefined), over the last day and the next. */
  private lanes(namespace: string | undefined, now: Date): GroupLane[] {
    const from = new Date(now.getTime() - 7 * 86_400_000);
    const to = new Date(now.getTime() + 86_400_000);
    const byNamespace = new Map<string, CronJob[]>();
    for (const c of this.cronJobs.list(namespace)) {
      if (!c.spec?.concurrencyGroup) continue;
      const ns = c.metadata?.namespace ?? "";
      byNamespace.set(ns, [...(byNamespace.get(ns) ?? []), c]);
    }
    const groupsRead = this.readable.has(ConcurrencyGroupResource);
    for (const g of groupsRead ? this.groups.list(namespace) : []) {
      const ns = g.metadata?.namespace ?? "";
      if (!byNamespace.has(ns)) byNamespace.set(ns, []);
    }
    const out: GroupLane[] = [];
    for (const [ns, members] of [...byNamespace].sort(([a], [b]) => a.localeCompare(b))) {
      const limits = groupsRead
        ? new Map(this.groups.list(ns).map((g) => [g.metadata?.name ?? "", groupLimitOf(g)] as const))
        : undefined;
      const jobs = this.readable.has(Kinds.Job) ? (this.jobs.list(ns) as Job[]) : [];
      const facts = groupsOf(
        ns,
        limits,
        jobs,
        members.map(memberOf).filter((m): m is GroupMember => m !== undefined),
        now,
      );
      for (const g of facts.values()) {
        const groupJobs = this.jobs.byIndex(JOBS_BY_GROUP, `${ns}/${g.name}`) as Job[];
        const own = members.filter((c) => c.spec?.concurrencyGroup === g.name);
        out.push(laneOf({ group: g, jobs: groupJobs, cronJobs: own, from, to, now }));
      }
    }
    return out;
  }

  private touch(id: string): void {
    this.removed.delete(id);
    this.dirtyRows.add(id);
    this.changed(id.slice(0, id.indexOf("/")));
  }

  private touchJob(j: Readonly<Job>): void {
    const owner = j.metadata?.labels?.[CRONJOB_NAME_LABEL];
    if (owner !== undefined) this.touch(`${j.metadata?.namespace ?? ""}/${owner}`);
  }

  private gone(id: string): void {
    this.dirtyRows.delete(id);
    this.removed.add(id);
    this.changed(id.slice(0, id.indexOf("/")));
  }

  /** A calendar or group changed: every CronJob of the namespace may draw differently. */
  private touchNamespace(namespace: string): void {
    this.dirtyNamespaces.add(namespace);
    this.changed(namespace);
  }

  /** Something of `namespace` changed: its groups' lanes are pushed again with the rows, soon. */
  private changed(namespace: string): void {
    this.laneNamespaces.add(namespace);
    this.pushTimer ??= setTimeout(() => this.flush(), PUSH_DELAY_MS);
  }

  private flush(): void {
    this.pushTimer = undefined;
    if (this.stopped) return;
    const now = this.o.now();
    const ids = new Set(this.dirtyRows);
    for (const ns of this.dirtyNamespaces) for (const c of this.cronJobs.list(ns)) ids.add(idOf(c));
    const rows = [...ids].flatMap((id) => {
      const c = this.cronJobs.getByKey(id);
      return c ? [this.row(c, now)] : [];
    });
    const groups = [...this.laneNamespaces].flatMap((ns) => this.lanes(ns, now));
    const push: Push = {
      type: "changed",
      now: iso(now),
      rows,
      removed: [...this.removed],
      groups,
      laneNamespaces: [...this.laneNamespaces],
    };
    this.markStale(ids, this.removed);
    this.dirtyRows = new Set();
    this.removed = new Set();
    this.dirtyNamespaces = new Set();
    this.laneNamespaces = new Set();
    for (const l of this.listeners) l(push);
    this.scheduleVerdicts(CHANGE_VERDICT_DELAY_MS);
  }

  /**
   * The verdicts `changed` and `removed` touch are stale: their own, and those of the other members of their
   * concurrency groups (a run's start or end moves the group's places for all of them).
   */
  private markStale(changed: Iterable<string>, removed: Iterable<string>): void {
    const groups = new Set<string>();
    for (const id of changed) {
      this.staleVerdicts.add(id);
      const g = this.cronJobs.getByKey(id)?.spec?.concurrencyGroup;
      if (g) groups.add(`${id.slice(0, id.indexOf("/"))}/${g}`);
    }
    for (const id of removed) {
      const v = this.verdicts.get(id);
      const g = v && "healthy" in v ? v.group : v?.group && `${v.group.namespace}/${v.group.name}`;
      if (g) groups.add(g);
      this.verdicts.delete(id);
      this.staleVerdicts.delete(id);
    }
    for (const key of groups) {
      const [ns, g] = [key.slice(0, key.indexOf("/")), key.slice(key.indexOf("/") + 1)];
      for (const c of this.cronJobs.list(ns)) if (c.spec?.concurrencyGroup === g) this.staleVerdicts.add(idOf(c));
    }
  }

  /**
   * The next verdicts pass: every CronJob's when none was read yet, or VERDICT_INTERVAL_MS after the last full one
   * with changes since (IDLE_VERDICT_INTERVAL_MS without); the stale ones' after `delayMs`.
   */
  private scheduleVerdicts(delayMs: number): void {
    if (this.stopped || this.verdictsRunning) return;
    const now = this.o.now().getTime();
    const sinceFull = this.fullVerdictsAt ? now - this.fullVerdictsAt.getTime() : Infinity;
    const full = Math.max(0, (this.staleVerdicts.size ? VERDICT_INTERVAL_MS : IDLE_VERDICT_INTERVAL_MS) - sinceFull);
    const wait = this.staleVerdicts.size
      ? Math.max(Math.min(delayMs, full), this.lastPassEnd + VERDICT_PASS_GAP_MS - now)
      : full;
    if (this.verdictTimer) {
      if (this.verdictDue <= now + wait) return;
      clearTimeout(this.verdictTimer);
    }
    this.verdictDue = now + wait;
    this.verdictTimer = setTimeout(() => void this.readVerdicts(), wait);
    this.verdictTimer.unref();
  }

  /**
   * Reads the verdicts (verdicts.ts) of the stale CronJobs, or of all of them when the last full pass is
   * VERDICT_INTERVAL_MS old, from the informers' state and one list a namespace of what they do not hold, and pushes
   * what needs attention.
   */
  private async readVerdicts(): Promise<void> {
    this.verdictTimer = undefined;
    this.verdictsRunning = true;
    const started = this.o.now();
    const full = !this.fullVerdictsAt || started.getTime() - this.fullVerdictsAt.getTime() >= VERDICT_INTERVAL_MS;
    const ids = full ? new Set(this.cronJobs.list().map(idOf)) : this.staleVerdicts;
    this.staleVerdicts = new Set();
    try {
      const unreadable: string[] = [];
      const clocks = await readClocks(this.o.client, unreadable, this.o.now);
      const operator = await gatherOperator(this.o.client, clocks.attempt, {
        operatorNamespace: this.o.operatorNamespace,
        cronJobs: this.cronJobs.list(),
      });
      for (const [ns, stale] of byNamespace(ids)) {
        if (this.stopped) return;
        await this.readNamespaceVerdicts(ns, stale, operator, clocks, unreadable);
      }
      if (full) {
        this.fullVerdictsAt = started;
        for (const id of this.verdicts.keys()) if (!this.cronJobs.getByKey(id)) this.verdicts.delete(id);
      }
      this.pushVerdicts();
    } catch (e) {
      // Said on the page (the fleet's unreadable, pushed), and tried again: the CronJobs asked for are stale still.
      for (const id of ids) this.staleVerdicts.add(id);
      const said = `verdicts: ${e instanceof Error ? e.message : String(e)}`;
      if (!this.unreadable.includes(said)) this.unreadable.push(said);
      const push: Push = { type: "unreadable", unreadable: [...this.unreadable] };
      for (const l of this.listeners) l(push);
    } finally {
      this.verdictsRunning = false;
      this.lastPassEnd = this.o.now().getTime();
      this.scheduleVerdicts(this.staleVerdicts.size ? CHANGE_VERDICT_DELAY_MS : IDLE_VERDICT_INTERVAL_MS);
    }
  }

  /** The verdicts of the CronJobs `stale` of namespace `ns`, from the informers and the namespace's other lists. */
  private async readNamespaceVerdicts(
    ns: string,
    stale: ReadonlySet<string>,
    operator: OperatorFacts,
    clocks: Awaited<ReturnType<typeof readClocks>>,
    unreadable: string[],
  ): Promise<void> {
    const all = this.cronJobs
      .list(ns)
      .slice()
      .sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""));
    const cronJobs = all.filter((c) => stale.has(idOf(c)));
    if (!cronJobs.length) return;
    const known = {
      jobs: this.readable.has(Kinds.Job) ? (this.jobs.list(ns) as Job[]) : [],
      calendars: this.readable.has(ExclusionCalendarResource)
        ? new Map(this.calendars.list(ns).map((c) => [c.metadata?.name ?? "", c.spec?.windows ?? []] as const))
        : undefined,
      groupLimits: this.readable.has(ConcurrencyGroupResource)
        ? new Map(this.groups.list(ns).map((g) => [g.metadata?.name ?? "", groupLimitOf(g)] as const))
        : undefined,
    };
    const reads = await readNamespace(this.o.client, ns, all, clocks, true, known);
    const facts = factsOf(ns, cronJobs, reads, operator, clocks, unreadable);
    for (let i = 0; i < facts.length; i++) {
      // Answer the page's requests between diagnoses: a pass over thousands must not hold them.
      if (i > 0 && i % DIAGNOSES_PER_TURN === 0) await new Promise((r) => setImmediate(r));
      const f = facts[i]!;
      const v = verdictOf(f);
      const group = f.cronJob.spec?.concurrencyGroup;
      this.verdicts.set(idOf(f.cronJob), needsAttention(v) ? v : { healthy: true, group: group && `${ns}/${group}` });
    }
  }

  /** What needs attention, as the verdicts read say it (a healthy CronJob: null), pushed to every page. */
  private pushVerdicts(): void {
    const attention: Record<string, Attention | null> = {};
    for (const c of this.cronJobs.list()) {
      const v = this.verdicts.get(idOf(c));
      if (v) attention[idOf(c)] = "healthy" in v ? null : attentionOf(v.diagnosis);
    }
    const needing = [...this.verdicts.values()].filter((v): v is Verdict => !("healthy" in v));
    const shared = sharedProblems(needing, this.o.namespace === undefined);
    for (const p of shared) {
      for (const who of p.cronJobs) {
        const id = this.o.namespace !== undefined ? `${this.o.namespace}/${who}` : who;
        attention[id] ??= { cause: p.cause, text: p.text };
      }
    }
    this.attention = attention;
    this.shared = shared.map((p) => ({ cause: p.cause, text: p.text }));
    this.verdictsAt = this.o.now();
    const push: Push = { type: "verdicts", at: iso(this.verdictsAt), attention, shared: this.shared };
    for (const l of this.listeners) l(push);
  }
}

/** What the page says of a CronJob that needs attention: its verdict's cause and words, or its first finding's. */
function attentionOf(d: Diagnosis): Attention {
  const cause = d.status !== "healthy" ? d.cause : d.also[0]?.cause;
  const text = d.status !== "healthy" ? d.verdict : (d.also[0]?.summary ?? d.verdict);
  return { cause: cause ?? "unknown", text, ...(cause === "suspended" ? { suspended: true } : {}) };
}

/** CronJob ids by namespace, the namespaces sorted. */
function byNamespace(ids: Iterable<string>): [string, Set<string>][] {
  const out = new Map<string, Set<string>>();
  for (const id of ids) {
    const ns = id.slice(0, id.indexOf("/"));
    const set = out.get(ns) ?? new Set<string>();
    set.add(id);
    out.set(ns, set);
  }
  return [...out].sort(([a], [b]) => a.localeCompare(b));
}
