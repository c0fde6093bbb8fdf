// A problem many CronJobs share, said once: the operator's own (it is down, no replica leads, its webhooks fail, a
// clock is off: the same finding for every CronJob), a concurrency group's (full, or missing: the same for all its
// CronJobs) and an ExclusionCalendar's (missing, or its windows do not parse: every CronJob naming it is held).
// `kubectl cron why -A` and `kubectl cron list` count the CronJobs each affects and say it in one line (causes.ts
// FLEET); a CronJob is listed on its own only for a cause of its own.
import type { CalendarHold } from "../../../../api/v1/index.ts";
import { FLEET } from "../causes.ts";
import type { CauseId } from "../causes.ts";
import type { GroupFacts } from "../../model/groupfacts.ts";
import { type OperatorView, operatorFindings } from "./operator.ts";
import { type Diagnosis, type Finding, finding } from "./verdict.ts";

/** The causes of the operator itself or the clocks: the same for every CronJob. */
const OPERATOR_CAUSES: ReadonlySet<CauseId> = new Set([
  "operator-down",
  "operator-no-leader",
  "operator-unclear",
  "instance-down",
  "operator-webhook-failing",
  "clock-skew",
]);
/** The causes of a concurrency group: the same for every CronJob of it. */
const GROUP_WAITS: ReadonlySet<CauseId> = new Set(["group-full", "group-queue"]);
const GROUP_MISSING: CauseId = "group-not-found";
/** The cause of a calendar that cannot be read: the same for every CronJob naming it. */
const CALENDAR_HELD: CauseId = "calendar-not-found";

/**
 * Whether a group's cause is the group's: its runs wait, or it does not exist as read now (one read that exists, or
 * could not be read, is not said missing for all: a slot held before it was created is its CronJob's own line).
 */
const groupShares = (c: CauseId, group: GroupFacts | undefined): group is GroupFacts =>
  group !== undefined && (GROUP_WAITS.has(c) || (c === GROUP_MISSING && group.exists === false));

/**
 * Whether a cause is one many share: the operator's, a group's (groupShares), or a calendar's when the calendars
 * were read and one the CronJob names holds its slots now (`hold`: its spec.exclusions as read).
 */
const shared = (c: CauseId, group: GroupFacts | undefined, hold: CalendarHold | undefined) =>
  OPERATOR_CAUSES.has(c) || groupShares(c, group) || (c === CALENDAR_HELD && hold?.calendar !== undefined);

/** What add() reads of a diagnosis: whose it is, its outcome, and its other findings' causes and lines. */
export type SharedInputs = Pick<Diagnosis, "cronJob" | "status" | "verdict" | "cause"> & {
  also: readonly Pick<Finding, "cause" | "summary">[];
};

/** A problem many share, as the JSON says it: its cause, its line, and every CronJob it affects. */
export interface SharedProblem {
  cause: CauseId;
  text: string;
  cronJobs: string[];
}

interface GroupCount {
  group: GroupFacts;
  names: string[];
}

interface CalendarCount {
  namespace: string;
  hold: CalendarHold & { calendar: string };
  names: string[];
}

/** The problems the CronJobs of a list share, counted as their diagnoses (or facts) come. */
export class Fleet {
  /** By cause and words: two webhooks failing are two problems. */
  private readonly operator = new Map<string, { cause: CauseId; summary: string; names: string[] }>();
  private readonly waiting = new Map<string, GroupCount>();
  private readonly missing = new Map<string, GroupCount>();
  private readonly calendars = new Map<string, CalendarCount>();
  /** The operator's findings by the operator's facts read (one per install: a namespace's claim may name its own). */
  private readonly findings = new Map<OperatorView["operator"], Finding[]>();

  private readonly allNamespaces: boolean;

  constructor(allNamespaces: boolean) {
    this.allNamespaces = allNamespaces;
  }

  /** How a CronJob is named in a line: with its namespace under -A. */
  private who(namespace: string, name: string): string {
    return this.allNamespaces ? `${namespace}/${name}` : name;
  }

  /** Counts `who` against the operator's finding `f` (its cause and words: the same for every CronJob). */
  private countOperator(f: { cause: CauseId; summary: string }, who: string): void {
    const key = `${f.cause}\u0000${f.summary}`;
    const entry = this.operator.get(key) ?? { cause: f.cause, summary: f.summary, names: [] };
    if (entry.names.at(-1) !== who) entry.names.push(who);
    this.operator.set(key, entry);
  }

  /**
   * The operator's findings, the same for every CronJob (its facts and the clocks were read once): counted against
   * the CronJobs `names`.
   */
  operatorAffects(view: OperatorView, names: readonly { namespace: string; name: string }[]): void {
    for (const x of operatorFindings(view)) {
      const f = finding(x);
      for (const n of names) this.countOperator(f, this.who(n.namespace, n.name));
    }
  }

  /** A group whose runs wait (`waiting`: its members' waiting runs), or one missing that CronJobs name. */
  groupAffects(g: GroupFacts): void {
    if (g.exists === false && g.members.length)
      this.missing.set(`${g.namespace}/${g.name}`, { group: g, names: g.members });
    else if (g.waiting.length) {
      this.waiting.set(`${g.namespace}/${g.name}`, { group: g, names: g.waiting.map((w) => w.cronJob) });
    }
  }

  /**
   * A calendar the CronJob `name` of `namespace` names that holds its slots (`hold`: its spec.exclusions as read; a
   * hold of no calendar, its own windows or a name that is no calendar's, is its own).
   */
  calendarAffects(namespace: string, name: string, hold: CalendarHold | undefined): void {
    if (hold?.calendar === undefined) return;
    const key = `${namespace}/${hold.calendar}`;
    const entry = this.calendars.get(key) ?? { namespace, hold: { ...hold, calendar: hold.calendar }, names: [] };
    if (entry.names.at(-1) !== name) entry.names.push(name);
    this.calendars.set(key, entry);
  }

  /**
   * Counts what `d` shares with others (`group`: the group its CronJob names, as read; `hold`: what holds its slots
   * by its spec.exclusions, as read) and answers its own line: its verdict when the cause is its own (or the state
   * cannot tell), else its first finding of its own; undefined when all it needs attention for is shared.
   */
  add(
    d: SharedInputs,
    view: OperatorView,
    group: GroupFacts | undefined,
    hold: CalendarHold | undefined,
  ): string | undefined {
    const who = this.who(d.cronJob.namespace, d.cronJob.name);
    // The verdict said of its slot: the operator's finding of the same cause, in its words of no slot.
    const verdict = d.cause && d.status !== "healthy" ? d.cause : undefined;
    if (verdict && OPERATOR_CAUSES.has(verdict)) {
      let findings = this.findings.get(view.operator);
      if (!findings) this.findings.set(view.operator, (findings = operatorFindings(view).map(finding)));
      for (const f of findings.filter((x) => x.cause === verdict)) this.countOperator(f, who);
    }
    for (const a of d.also) if (OPERATOR_CAUSES.has(a.cause)) this.countOperator(a, who);
    for (const c of [...(verdict ? [verdict] : []), ...d.also.map((a) => a.cause)]) {
      if (groupShares(c, group)) {
        const byGroup = c === GROUP_MISSING ? this.missing : this.waiting;
        const key = `${group.namespace}/${group.name}`;
        const entry = byGroup.get(key) ?? { group, names: [] };
        if (entry.names.at(-1) !== d.cronJob.name) entry.names.push(d.cronJob.name);
        byGroup.set(key, entry);
      }
      if (c === CALENDAR_HELD) this.calendarAffects(d.cronJob.namespace, d.cronJob.name, hold);
    }
    const ownVerdict = d.status !== "healthy" && !(d.cause && shared(d.cause, group, hold));
    const ownFinding = d.also.find((a) => !shared(a.cause, group, hold));
    if (ownVerdict) return `${who}\t${d.cause ?? ownFinding?.cause ?? "unknown"}\t${d.verdict}`;
    if (ownFinding) return `${who}\t${ownFinding.cause}\t${ownFinding.summary}`;
    return undefined;
  }

  /** Each shared problem, once: the operator's first, then the groups', then the calendars', by namespace and name. */
  problems(): SharedProblem[] {
    const out: SharedProblem[] = [];
    for (const e of this.operator.values()) {
      out.push({ cause: e.cause, text: FLEET.operator({ summary: e.summary, names: e.names }), cronJobs: e.names });
    }
    const sorted = (m: Map<string, GroupCount>) => [...m].sort(([a], [b]) => a.localeCompare(b)).map(([, e]) => e);
    for (const { group: g, names } of sorted(this.missing)) {
      out.push({
        cause: GROUP_MISSING,
        text: FLEET.groupMissing({ group: g.name, namespace: g.namespace, names }),
        cronJobs: names.map((n) => this.who(g.namespace, n)),
      });
    }
    for (const { group: g, names } of sorted(this.waiting)) {
      const full = g.limit !== undefined && g.running.length >= g.limit;
      out.push({
        cause: full ? "group-full" : "group-queue",
        text: FLEET.groupWaiting({
          group: g.name,
          namespace: g.namespace,
          inUse: g.running.length,
          ...(g.limit !== undefined ? { limit: g.limit } : {}),
          names,
        }),
        cronJobs: names.map((n) => this.who(g.namespace, n)),
      });
    }
    for (const [, { namespace, hold, names }] of [...this.calendars].sort(([a], [b]) => a.localeCompare(b))) {
      const message = hold.missing ? undefined : (hold.detail ?? hold.problem);
      out.push({
        cause: CALENDAR_HELD,
        text: FLEET.calendarHeld({
          calendar: hold.calendar,
          namespace,
          missing: hold.missing,
          ...(message ? { message } : {}),
          names,
        }),
        cronJobs: names.map((n) => this.who(namespace, n)),
      });
    }
    return out;
  }

  /** The shared problems as lines of `why -A`'s table: what they are about, the cause, the words. */
  lines(): string[] {
    return this.problems().map((p) => {
      const about = OPERATOR_CAUSES.has(p.cause) ? "(operator)" : p.cause === CALENDAR_HELD ? "(calendar)" : "(group)";
      return `${about}\t${p.cause}\t${p.text}\n`;
    });
  }
}
