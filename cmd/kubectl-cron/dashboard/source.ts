// The cluster as the dashboard follows it: informers (runtime/cache) over the CronJobs, Jobs, ExclusionCalendars and
// ConcurrencyGroups the user may read, in one namespace or all, each object trimmed to what the page draws (and its
// short strings shared: interner.ts). Changes are gathered for a moment and pushed as the rows and lanes they touch,
// and make the verdicts of the CronJobs they touch stale (fleetverdicts.ts reads them again and pushes them).
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
import { namespaceNames } from "../read/api.ts";
import { jobFacts, trimCronJob } from "../model/trims.ts";
import { CHANGE_VERDICT_DELAY_MS, FleetVerdicts } from "./fleetverdicts.ts";
import { Interner } from "./interner.ts";
import { idOf, laneOf, marksOf, rowOf } from "./marks.ts";
import type { Fleet, GroupLane, Push, Row, RowMarks } from "./view.ts";

/** How long changes are gathered before one push: a burst of Job updates is one message. */
const PUSH_DELAY_MS = 300;

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
  private readonly readable = new Set<ResourceKind>();
  private readonly listeners = new Set<(p: Push) => void>();
  private dirtyRows = new Set<string>();
  private removed = new Set<string>();
  /** Namespaces whose calendars or groups changed: all their rows are pushed again. */
  private dirtyNamespaces = new Set<string>();
  /** Namespaces where anything changed: their groups' lanes are pushed again. */
  private laneNamespaces = new Set<string>();
  private pushTimer: NodeJS.Timeout | undefined;
  private readonly verdicts: FleetVerdicts;
  private stopped = false;
  /** Until the informers are synced: the first screen's CronJobs and, by id, their Jobs (absent: not read). */
  private first: { cronJobs: CronJob[]; jobs: Map<string, Job[]> } | undefined;
  private synced = false;
  /** The short strings the informers' objects share. */
  private readonly interner = new Interner();
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
    this.cronJobs.setTransform((c) => this.interner.intern(trimCronJob(c)));
    this.jobs = new Informer<Job>(o.client, Kinds.Job, large);
    // Trimmed as `why` trims the Jobs it lists: the page reads less, never more.
    this.jobs.setTransform((j) => this.interner.intern(jobFacts(j)));
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
    this.verdicts = new FleetVerdicts({
      ...o,
      cronJobs: this.cronJobs,
      jobs: this.jobs,
      calendars: this.calendars,
      groups: this.groups,
      readable: this.readable,
      unreadable: this.unreadable,
      push: (p) => {
        for (const l of this.listeners) l(p);
      },
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
    this.interner.synced();
    this.first = undefined;
    // What the initial lists added is the first page, not a change.
    this.dirtyRows.clear();
    this.dirtyNamespaces.clear();
    this.laneNamespaces.clear();
    clearTimeout(this.pushTimer);
    this.pushTimer = undefined;
    this.verdicts.schedule(0);
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
    this.verdicts.stop();
    await Promise.all([this.cronJobs, this.jobs, this.calendars, this.groups].map((i) => i.stop()));
  }

  /** Pushes to `fn` from now on; the verdicts already read first (the page may have loaded before they came). */
  subscribe(fn: (p: Push) => void): () => void {
    this.listeners.add(fn);
    const { attention, at, shared } = this.verdicts;
    if (attention && at) fn({ type: "verdicts", at: iso(at), attention, shared });
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
      shared: this.verdicts.shared,
      unreadable: [...this.unreadable],
      actions,
      ...(this.verdicts.at ? { verdictsAt: iso(this.verdicts.at) } : {}),
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
    const attention = this.verdicts.attention;
    if (attention) row.attention = attention[row.id] ?? null;
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
    this.verdicts.markStale(ids, this.removed);
    this.dirtyRows = new Set();
    this.removed = new Set();
    this.dirtyNamespaces = new Set();
    this.laneNamespaces = new Set();
    for (const l of this.listeners) l(push);
    this.verdicts.schedule(CHANGE_VERDICT_DELAY_MS);
  }
}

/** The page's order of ids (namespace/name, by code unit), which is the API server's order of a list. */
const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
