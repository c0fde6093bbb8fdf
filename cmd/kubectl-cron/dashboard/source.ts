// The cluster as the dashboard follows it: informers (runtime/cache) over the CronJobs, Jobs, ExclusionCalendars and
// ConcurrencyGroups the user may read, in one namespace or all, each object trimmed to what the page draws. Changes
// are gathered for a moment and pushed as the rows and lanes they touch. The verdicts are `why`'s (answer/verdicts.ts: the
// same diagnosis over the same facts), read from these informers and, of what they do not hold (Pods, Events, quotas,
// the operator), one list a namespace: those of the CronJobs that changed a moment after the change, all of them at
// most every VERDICT_INTERVAL_MS (and every IDLE_VERDICT_INTERVAL_MS with no change: a slot can turn late unseen).
// The first screen comes before the rest (begin()): the first FIRST_SCREEN CronJobs in the page's order (the API
// server lists by namespace and name, as the page sorts) and their Jobs (by the label the Job index reads), read in
// two small requests while the informers list everything; the page draws them and asks for the whole fleet again
// (fleet(true) waits for the informers).
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
import { needsAttention, sharedProblems, verdictKeys, type VerdictKeys, verdictOf } from "../answer/verdicts.ts";
import { readNamespace } from "../read/whyfacts.ts";
import { namespaceNames } from "../read/api.ts";
import { gatherOperator, operatorsByClaim } from "../read/operator.ts";
import { type ClaimReader, claimReader } from "../read/claims.ts";
import type { ClaimRead } from "../model/claims.ts";
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
/**
 * Diagnoses made between two turns of the event loop: the page's requests are answered between them (25: ~10 ms
 * a turn on a busy 2-core machine; 100 held a screen's marks up to ~60 ms, issue 72).
 */
const DIAGNOSES_PER_TURN = 25;

/**
 * The CronJobs read first, and their Jobs: more than a screen of rows (a 1400×900 window shows ~30), few enough that
 * the read is one small page.
 */
const FIRST_SCREEN = 60;

/**
 * The informers' page: small, since the first screen does not wait for the lists; a page of 500 held ~5 MB of
 * response and parsed objects at once, two lists at a time (issue 72).
 */
const LIST_PAGE = 100;
/** The longest string interned(): names, namespaces, words and times, not messages. */
const INTERNED_LENGTH = 64;
/** Strings interned() keeps during the initial lists, and after them (watch events). */
const INTERNED_MAX = 50_000;
const INTERNED_AFTER_SYNC = 2_000;

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
   * Each CronJob's verdict as last read, by id: the keys of one that needs attention (what the page says of it, and
   * what the shared problems are counted from), of a healthy one only that it is and its group's key.
   */
  private readonly verdicts = new Map<string, VerdictKeys | { healthy: true; group: string | undefined }>();
  /** When the next verdicts pass is due (its timer set). */
  private verdictDue = 0;
  /** When the last verdicts pass ended. */
  private lastPassEnd = 0;
  /** CronJobs whose verdicts are stale: they, their Jobs, or their namespace's calendars or groups changed. */
  private staleVerdicts = new Set<string>();
  private verdictTimer: NodeJS.Timeout | undefined;
  private verdictsRunning = false;
  private stopped = false;
  /** Until the informers are synced: the first screen's CronJobs and, by id, their Jobs (absent: not read). */
  private first: { cronJobs: CronJob[]; jobs: Map<string, Job[]> } | undefined;
  private synced = false;
  /** The short strings the informers' objects share (interned()). */
  private strings = new Map<string, string>();
  /** start()'s end: the informers synced (rejected: the CronJobs could not be listed). */
  private ready: Promise<void> | undefined;
  /** The calendars' and groups' informers synced (or found unreadable): the first screen's marks need them. */
  private smallReady: Promise<void> | undefined;

  constructor(o: SourceOptions) {
    this.o = o;
    // Read at each list (a relist too: namespaces come and go); unreadable, the list is one.
    const listNamespaces = () => namespaceNames(o.client);
    // Across namespaces, the two large lists are read a namespace at a time, two at once: the API server's time
    // per page, not ours, was most of the wait for the first verdicts (issue 79: 1.3 s of 5,000 CronJobs as one list).
    const ns = o.namespace !== undefined ? { namespace: o.namespace } : {};
    const large = { ...ns, pageSize: LIST_PAGE, ...(o.namespace === undefined ? { listNamespaces } : {}) };
    this.cronJobs = new Informer<CronJob>(o.client, CronJobResource, large);
    this.cronJobs.setTransform((c) => this.interned(trimCronJob(c)));
    this.jobs = new Informer<Job>(o.client, Kinds.Job, large);
    // Trimmed as `why` trims the Jobs it lists: the page reads less, never more.
    this.jobs.setTransform((j) => this.interned(jobFacts(j)));
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

  /**
   * `o` with its short strings shared: each parsed object has its own copy of its apiVersion, kind, namespace, owner's
   * name, conditions' words and record's decisions (of 5,000 CronJobs and 3,333 Jobs, ~30,000 copies of a few hundred
   * strings). The table lives for the initial lists; afterwards it stays small (INTERNED_AFTER_SYNC).
   */
  private interned<T>(o: T): T {
    const seen = this.strings;
    const walk = (v: unknown): unknown => {
      if (typeof v === "string") {
        if (v.length > INTERNED_LENGTH) return v;
        const known = seen.get(v);
        if (known !== undefined) return known;
        if (seen.size < (this.synced ? INTERNED_AFTER_SYNC : INTERNED_MAX)) seen.set(v, v);
        return v;
      }
      // An object already stored (frozen) is already interned.
      if (!v || typeof v !== "object" || Object.isFrozen(v)) return v;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) v[i] = walk(v[i]);
      } else {
        const r = v as Record<string, unknown>;
        for (const k in r) r[k] = walk(r[k]);
      }
      return v;
    };
    return walk(o) as T;
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
    const probed = Promise.all(
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
    // Set before the first await: begin() and marks() may wait on it at once.
    this.smallReady = probed.then(async (started) => {
      await Promise.all(started.slice(2).map((inf) => inf?.waitForSync()));
    });
    this.smallReady.catch(() => undefined);
    const started = await probed;
    await Promise.all(started.map((inf) => inf?.waitForSync()));
    this.synced = true;
    this.strings = new Map();
    this.first = undefined;
    // What the initial lists added is the first page, not a change.
    this.dirtyRows.clear();
    this.dirtyNamespaces.clear();
    this.laneNamespaces.clear();
    clearTimeout(this.pushTimer);
    this.pushTimer = undefined;
    this.scheduleVerdicts(0);
  }

  /**
   * Reads the first screen (the first FIRST_SCREEN CronJobs and their Jobs) and starts the informers behind it;
   * resolves once the first screen is read. An error reading the CronJobs is the command's, as start()'s.
   */
  async begin(): Promise<void> {
    const ns = this.o.namespace !== undefined ? { namespace: this.o.namespace } : {};
    const list = await this.o.client.list<CronJob>(CronJobResource, { ...ns, limit: FIRST_SCREEN });
    this.ready = this.start();
    // Said where it is awaited (fleet, marks); never an unhandled rejection meanwhile.
    this.ready.catch(() => undefined);
    const cronJobs = list.items.map(trimCronJob);
    const names = new Map<string, string[]>();
    for (const c of cronJobs) {
      const name = c.metadata?.name ?? "";
      // A label value is at most 63 characters: a longer name's Jobs come with the informers.
      if (name.length > 63) continue;
      const n = c.metadata?.namespace ?? "";
      names.set(n, [...(names.get(n) ?? []), name]);
    }
    const jobs = new Map<string, Job[]>();
    await Promise.all(
      [...names].map(async ([namespace, owners]) => {
        try {
          const r = await this.o.client.list<Job>(Kinds.Job, {
            namespace,
            labelSelector: `${CRONJOB_NAME_LABEL} in (${owners.join(",")})`,
          });
          for (const owner of owners) jobs.set(`${namespace}/${owner}`, []);
          for (const j of r.items.map(jobFacts)) {
            const owner = j.metadata?.labels?.[CRONJOB_NAME_LABEL];
            if (owner !== undefined) jobs.get(`${namespace}/${owner}`)?.push(j);
          }
        } catch {
          // Unreadable here: the informers say so, and these rows' marks wait for them.
        }
      }),
    );
    if (!this.synced) this.first = { cronJobs, jobs };
  }

  /** Resolves once the informers are synced (at once after start()). */
  async whenReady(): Promise<void> {
    await this.ready;
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

  /**
   * Every CronJob's line, sorted by namespace and name; before the informers are synced, the first screen's
   * (`partial`) unless `whole`, which waits for them.
   */
  async fleet(actions: boolean, whole: boolean): Promise<Fleet> {
    if (!this.synced) {
      const first = this.first;
      if (whole || !first) await this.ready;
      else return this.partialFleet(first, actions);
    }
    const now = this.o.now();
    const rows = this.cronJobs
      .list()
      .map((c) => this.row(c, now))
      .sort((a, b) => byId(a.id, b.id));
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

  /** The first screen's rows, before the informers are synced: no lanes, no verdicts yet. */
  private partialFleet(first: NonNullable<FleetSource["first"]>, actions: boolean): Fleet {
    const now = this.o.now();
    return {
      now: iso(now),
      scope:
        this.o.namespace !== undefined
          ? { namespace: this.o.namespace, allNamespaces: false }
          : { allNamespaces: true },
      rows: first.cronJobs.map((c) => rowOf(c, first.jobs.get(idOf(c)) ?? [], now)).sort((a, b) => byId(a.id, b.id)),
      groups: [],
      shared: [],
      unreadable: [...this.unreadable],
      actions,
      partial: true,
    };
  }

  /**
   * The marks of the CronJobs `ids` over [from, to]; an id no CronJob has is left out. Before the informers are
   * synced, those of the first screen (once the calendars are read); any other waits for them.
   */
  async marks(ids: readonly string[], from: Date, to: Date): Promise<RowMarks[]> {
    const first = this.first;
    if (!this.synced) {
      const early = first && ids.every((id) => first.jobs.has(id));
      await (early ? this.smallReady : this.ready);
    }
    const now = this.o.now();
    const out: RowMarks[] = [];
    const firstOf = this.synced ? undefined : first;
    for (const id of ids) {
      const c = firstOf ? firstOf.cronJobs.find((x) => idOf(x) === id) : this.cronJobs.getByKey(id);
      if (!c) continue;
      const namespace = c.metadata?.namespace ?? "";
      const jobs = firstOf ? (firstOf.jobs.get(id) ?? []) : this.jobsOf(id);
      out.push(marksOf({ cronJob: c, jobs, calendars: this.calendarsOf(namespace), from, to, now }));
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
    // The initial lists are the first page, not changes: start() clears what they touched.
    if (!this.synced) return;
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
      const namespaces = byNamespace(ids);
      const claims = claimReader(this.o.client, clocks.attempt);
      // A namespace's lists are read while the one before it is diagnosed (the first's with the operator's).
      const reading = (i: number) => {
        const r = i < namespaces.length ? this.namespaceReads(...namespaces[i]!, clocks, claims) : undefined;
        r?.catch(() => undefined);
        return r;
      };
      let next = reading(0);
      const operatorOf = await this.operators(clocks, claims);
      for (let i = 0; i < namespaces.length; i++) {
        if (this.stopped) return;
        const read = await next;
        next = reading(i + 1);
        if (read) await this.diagnoseNamespace(read, await operatorOf(read.claim, read.cronJobs), clocks, unreadable);
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

  /**
   * The operator of each namespace, as `why` finds it: the one found once (of one namespace, the install its claim
   * names), else the install a namespace's claim names (read/operator.ts operatorsByClaim).
   */
  private async operators(clocks: Awaited<ReturnType<typeof readClocks>>, claims: ClaimReader) {
    const claim = this.o.namespace !== undefined ? await claims.claimOf(this.o.namespace) : undefined;
    const base = await gatherOperator(this.o.client, clocks.attempt, {
      operatorNamespace: this.o.operatorNamespace,
      cronJobs: this.cronJobs.list(),
      ...(claim ? { claim } : {}),
    });
    return operatorsByClaim(this.o.client, clocks.attempt, base, this.o.operatorNamespace);
  }

  /**
   * What the verdicts of the CronJobs `stale` of namespace `ns` are read from: the informers' and the namespace's
   * other lists, and its claim (undefined: none of them is left).
   */
  private async namespaceReads(
    ns: string,
    stale: ReadonlySet<string>,
    clocks: Awaited<ReturnType<typeof readClocks>>,
    claims: ClaimReader,
  ): Promise<
    { ns: string; cronJobs: CronJob[]; reads: Awaited<ReturnType<typeof readNamespace>>; claim: ClaimRead } | undefined
  > {
    const all = this.cronJobs
      .list(ns)
      .slice()
      .sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""));
    const cronJobs = all.filter((c) => stale.has(idOf(c)));
    if (!cronJobs.length) return undefined;
    const known = {
      jobs: this.readable.has(Kinds.Job) ? (this.jobs.list(ns) as Job[]) : [],
      calendars: this.readable.has(ExclusionCalendarResource)
        ? new Map(this.calendars.list(ns).map((c) => [c.metadata?.name ?? "", c.spec?.windows ?? []] as const))
        : undefined,
      groupLimits: this.readable.has(ConcurrencyGroupResource)
        ? new Map(this.groups.list(ns).map((g) => [g.metadata?.name ?? "", groupLimitOf(g)] as const))
        : undefined,
    };
    const [reads, claim] = await Promise.all([
      readNamespace(this.o.client, ns, all, clocks, true, known),
      claims.claimOf(ns),
    ]);
    return { ns, cronJobs, reads, claim };
  }

  /** The verdicts of a namespace's CronJobs read (namespaceReads), kept. */
  private async diagnoseNamespace(
    { ns, cronJobs, reads }: NonNullable<Awaited<ReturnType<FleetSource["namespaceReads"]>>>,
    operator: OperatorFacts,
    clocks: Awaited<ReturnType<typeof readClocks>>,
    unreadable: string[],
  ): Promise<void> {
    for (let i = 0; i < cronJobs.length; i += DIAGNOSES_PER_TURN) {
      // Answer the page's requests between diagnoses: a pass over thousands must not hold them. The facts are made
      // a turn's worth at a time (factsOf is one CronJob's facts each), so a namespace's are never all held at once.
      if (i > 0) await new Promise((r) => setImmediate(r));
      const turn = cronJobs.slice(i, i + DIAGNOSES_PER_TURN);
      for (const f of factsOf(ns, turn, reads, operator, clocks, unreadable)) {
        const v = verdictOf(f);
        const group = f.cronJob.spec?.concurrencyGroup;
        this.verdicts.set(
          idOf(f.cronJob),
          needsAttention(v) ? verdictKeys(v) : { healthy: true, group: group && `${ns}/${group}` },
        );
      }
    }
  }

  /** What needs attention, as the verdicts read say it (a healthy CronJob: null), pushed to every page. */
  private pushVerdicts(): void {
    const attention: Record<string, Attention | null> = {};
    for (const c of this.cronJobs.list()) {
      const v = this.verdicts.get(idOf(c));
      if (v) attention[idOf(c)] = "healthy" in v ? null : attentionOf(v.diagnosis);
    }
    const needing = [...this.verdicts.values()].filter((v): v is VerdictKeys => !("healthy" in v));
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
function attentionOf(d: VerdictKeys["diagnosis"]): Attention {
  const cause = d.status !== "healthy" ? d.cause : d.also[0]?.cause;
  const text = d.status !== "healthy" ? d.verdict : (d.also[0]?.summary ?? d.verdict);
  return { cause: cause ?? "unknown", text, ...(cause === "suspended" ? { suspended: true } : {}) };
}

/** The page's order of ids (namespace/name, by code unit), which is the API server's order of a list. */
const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

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
