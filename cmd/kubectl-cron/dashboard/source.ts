// The cluster as the dashboard follows it: informers (runtime/cache) over the CronJobs, Jobs, ExclusionCalendars and
// ConcurrencyGroups the user may read, in one namespace or all, each object trimmed to what the page draws. Changes
// are gathered for a moment and pushed as the rows and lanes they touch; the verdicts are `why -A`'s own (the
// command's code, run again after changes, at most every VERDICT_INTERVAL_MS), never a copy of its rules.
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
import { parseCommandLine } from "../args.ts";
import type { Context } from "../context.ts";
import { type GroupMember, groupsOf, memberOf } from "../groupfacts.ts";
import { iso } from "../history.ts";
import type { Diagnosis } from "../why.ts";
import { why } from "../whycommand.ts";
import { jobFacts, trimCronJob } from "../whyfacts.ts";
import { idOf, laneOf, marksOf, rowOf } from "./marks.ts";
import type { Attention, Fleet, GroupLane, Push, Row, RowMarks } from "./view.ts";

/** How long changes are gathered before one push: a burst of Job updates is one message. */
const PUSH_DELAY_MS = 300;
/** How often at most `why` reads the whole fleet again after changes (it lists Pods and Events of every namespace). */
const VERDICT_INTERVAL_MS = 30_000;

/** What start() needs of an informer, whatever it holds. */
type Startable = Pick<Informer, "kind" | "start" | "waitForSync">;

const JOBS_BY_CRONJOB = "cronjob";
const JOBS_BY_GROUP = "group";

interface SourceOptions {
  client: Client;
  /** undefined: every namespace (-A). */
  namespace: string | undefined;
  now: () => Date;
  /** The command line `why` is run with for the verdicts (-n NS or -A, and the operator's namespace). */
  whyArgs: string[];
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
  private verdictTimer: NodeJS.Timeout | undefined;
  private verdictsRunning = false;
  private changedSinceVerdicts = false;
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
    this.changedSinceVerdicts = true;
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
    this.dirtyRows = new Set();
    this.removed = new Set();
    this.dirtyNamespaces = new Set();
    this.laneNamespaces = new Set();
    for (const l of this.listeners) l(push);
    this.scheduleVerdicts(VERDICT_INTERVAL_MS);
  }

  private scheduleVerdicts(delayMs: number): void {
    if (this.stopped || this.verdictTimer || this.verdictsRunning) return;
    const since = this.verdictsAt ? this.o.now().getTime() - this.verdictsAt.getTime() : Infinity;
    const wait = Math.max(0, Math.min(delayMs, VERDICT_INTERVAL_MS - since));
    this.verdictTimer = setTimeout(() => void this.readVerdicts(), wait);
    this.verdictTimer.unref();
  }

  /** Runs `kubectl cron why -o json` over the scope, as the user would, and pushes what needs attention. */
  private async readVerdicts(): Promise<void> {
    this.verdictTimer = undefined;
    this.verdictsRunning = true;
    this.changedSinceVerdicts = false;
    try {
      const args = parseCommandLine(["why", ...this.o.whyArgs, "-o", "json"]);
      if (args === "help") return;
      const ctx: Context = {
        client: this.o.client,
        namespace: this.o.namespace ?? "default",
        now: this.o.now,
        sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
      };
      const out = await why(ctx, args);
      const json = out.json as { items: Diagnosis[]; shared?: { cause: string; text: string; cronJobs: string[] }[] };
      const attention: Record<string, Attention | null> = {};
      for (const d of json.items) {
        const id = `${d.cronJob.namespace}/${d.cronJob.name}`;
        const cause = d.status !== "healthy" ? d.cause : d.also[0]?.cause;
        const text = d.status !== "healthy" ? d.verdict : (d.also[0]?.summary ?? d.verdict);
        attention[id] = { cause: cause ?? "unknown", text, ...(cause === "suspended" ? { suspended: true } : {}) };
      }
      const shared = json.shared ?? [];
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
    } catch (e) {
      // Said on the page (the fleet's unreadable, pushed), and tried again after the interval, changes or not.
      const said = `kubectl cron why: ${e instanceof Error ? e.message : String(e)}`;
      if (!this.unreadable.includes(said)) this.unreadable.push(said);
      this.changedSinceVerdicts = true;
      const push: Push = { type: "unreadable", unreadable: [...this.unreadable] };
      for (const l of this.listeners) l(push);
    } finally {
      this.verdictsRunning = false;
      if (this.changedSinceVerdicts) this.scheduleVerdicts(VERDICT_INTERVAL_MS);
    }
  }
}
