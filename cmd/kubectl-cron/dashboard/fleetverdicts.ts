// The dashboard's verdicts: `why`'s (answer/verdicts.ts: the same diagnosis over the same facts) of the CronJobs the
// source follows, read from its informers and, of what they do not hold (Pods, Events, quotas, the operator), one
// list a namespace: those of the CronJobs that changed a moment after the change, all of them at most every
// VERDICT_INTERVAL_MS (and every IDLE_VERDICT_INTERVAL_MS with no change: a slot can turn late unseen). What needs
// attention is pushed to the pages (source.ts says when something changed).
import {
  type CronJob,
  ConcurrencyGroupResource,
  ExclusionCalendarResource,
  groupLimitOf,
  type Job,
} from "../../../api/v1/index.ts";
import type { Informer } from "../../../runtime/cache/informer.ts";
import type { Client } from "../../../runtime/client.ts";
import { Kinds, type KubeObject, type ResourceKind } from "../../../runtime/kinds.ts";
import { needsAttention, sharedProblems, verdictKeys, type VerdictKeys, verdictOf } from "../answer/verdicts.ts";
import { readNamespace } from "../read/whyfacts.ts";
import { gatherOperator, operatorsByClaim } from "../read/operator.ts";
import { type ClaimReader, claimReader } from "../read/claims.ts";
import type { ClaimRead } from "../model/claims.ts";
import { readClocks } from "../read/clocks.ts";
import { iso } from "../model/time.ts";
import { factsOf, type OperatorFacts } from "../model/facts.ts";
import { idOf } from "./marks.ts";
import type { Attention, Push } from "./view.ts";

/** How long after a change the verdicts of the CronJobs it touched are read (a burst of changes is one pass). */
export const CHANGE_VERDICT_DELAY_MS = 1_000;
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

/** What the verdicts are read from: the source's informers, the kinds this user may read, and where to say what. */
interface VerdictSources {
  client: Client;
  /** undefined: every namespace (-A). */
  namespace: string | undefined;
  now: () => Date;
  /** Where the operator runs (`--operator-namespace`); else found as `why` finds it. */
  operatorNamespace?: string;
  cronJobs: Informer<CronJob>;
  jobs: Informer<Job>;
  calendars: Informer<KubeObject & { spec?: { windows?: unknown } }>;
  groups: Informer<KubeObject>;
  /** The kinds this user may list (filled as the informers start). */
  readable: ReadonlySet<ResourceKind>;
  /** What this user may not read, as the page says it: a failed pass adds its error. */
  unreadable: string[];
  /** Sends a push to every page. */
  push(p: Push): void;
}

/** The verdicts of the CronJobs a FleetSource follows, read again as they go stale, and what needs attention. */
export class FleetVerdicts {
  private readonly o: VerdictSources;
  /** What needs attention by id (a healthy CronJob: null), as last pushed; undefined until the first pass. */
  private attentionById: Record<string, Attention | null> | undefined;
  private sharedAttention: Attention[] = [];
  private readAt: Date | undefined;
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

  constructor(o: VerdictSources) {
    this.o = o;
  }

  /** What needs attention by id (a healthy CronJob: null); undefined until the first pass. */
  get attention(): Record<string, Attention | null> | undefined {
    return this.attentionById;
  }

  /** The problems several CronJobs share, as last pushed. */
  get shared(): Attention[] {
    return this.sharedAttention;
  }

  /** When the verdicts pushed last were read. */
  get at(): Date | undefined {
    return this.readAt;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.verdictTimer);
  }

  /**
   * The verdicts `changed` and `removed` touch are stale: their own, and those of the other members of their
   * concurrency groups (a run's start or end moves the group's places for all of them).
   */
  markStale(changed: Iterable<string>, removed: Iterable<string>): void {
    const groups = new Set<string>();
    for (const id of changed) {
      this.staleVerdicts.add(id);
      const g = this.o.cronJobs.getByKey(id)?.spec?.concurrencyGroup;
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
      for (const c of this.o.cronJobs.list(ns)) if (c.spec?.concurrencyGroup === g) this.staleVerdicts.add(idOf(c));
    }
  }

  /**
   * The next verdicts pass: every CronJob's when none was read yet, or VERDICT_INTERVAL_MS after the last full one
   * with changes since (IDLE_VERDICT_INTERVAL_MS without); the stale ones' after `delayMs`.
   */
  schedule(delayMs: number): void {
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
    const ids = full ? new Set(this.o.cronJobs.list().map(idOf)) : this.staleVerdicts;
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
        for (const id of this.verdicts.keys()) if (!this.o.cronJobs.getByKey(id)) this.verdicts.delete(id);
      }
      this.pushVerdicts();
    } catch (e) {
      // Said on the page (the fleet's unreadable, pushed), and tried again: the CronJobs asked for are stale still.
      for (const id of ids) this.staleVerdicts.add(id);
      const said = `verdicts: ${e instanceof Error ? e.message : String(e)}`;
      if (!this.o.unreadable.includes(said)) this.o.unreadable.push(said);
      const push: Push = { type: "unreadable", unreadable: [...this.o.unreadable] };
      this.o.push(push);
    } finally {
      this.verdictsRunning = false;
      this.lastPassEnd = this.o.now().getTime();
      this.schedule(this.staleVerdicts.size ? CHANGE_VERDICT_DELAY_MS : IDLE_VERDICT_INTERVAL_MS);
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
      cronJobs: this.o.cronJobs.list(),
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
    const all = this.o.cronJobs
      .list(ns)
      .slice()
      .sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""));
    const cronJobs = all.filter((c) => stale.has(idOf(c)));
    if (!cronJobs.length) return undefined;
    const known = {
      jobs: this.o.readable.has(Kinds.Job) ? (this.o.jobs.list(ns) as Job[]) : [],
      calendars: this.o.readable.has(ExclusionCalendarResource)
        ? new Map(this.o.calendars.list(ns).map((c) => [c.metadata?.name ?? "", c.spec?.windows ?? []] as const))
        : undefined,
      groupLimits: this.o.readable.has(ConcurrencyGroupResource)
        ? new Map(this.o.groups.list(ns).map((g) => [g.metadata?.name ?? "", groupLimitOf(g)] as const))
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
    { ns, cronJobs, reads }: NonNullable<Awaited<ReturnType<FleetVerdicts["namespaceReads"]>>>,
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
    for (const c of this.o.cronJobs.list()) {
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
    this.attentionById = attention;
    this.sharedAttention = shared.map((p) => ({ cause: p.cause, text: p.text }));
    this.readAt = this.o.now();
    const push: Push = { type: "verdicts", at: iso(this.readAt), attention, shared: this.sharedAttention };
    this.o.push(push);
  }
}

/** What the page says of a CronJob that needs attention: its verdict's cause and words, or its first finding's. */
function attentionOf(d: VerdictKeys["diagnosis"]): Attention {
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
