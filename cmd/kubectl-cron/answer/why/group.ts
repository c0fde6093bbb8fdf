// Held by its concurrency group (spec.concurrencyGroup): the group full (group-full), older runs of its other
// CronJobs waiting first (group-queue), the group missing (group-not-found); and a slot missed while it waited. A
// run-now or backfill request waiting in its group is said as a waiting slot is (`asked`).
import {
  classifyJob,
  CONCURRENCY_GROUP_LABEL,
  groupLabelValue,
  type Job,
  queuedBy,
  type RecentRun,
  RecordReason,
} from "../../../../api/v1/index.ts";
import { cronJobOfJob, type GroupFacts } from "../../model/groupfacts.ts";
import type { WhyFacts } from "../../model/facts.ts";
import { keptAlive } from "./jobs.ts";
import { ago, type Blocker, blocker, found, plural, type SlotContext, stamp, type Verdict } from "./verdict.ts";

/** How many of the group's Jobs and waiting runs the evidence names, at most. */
const LISTED = 5;

const listed = (items: string[]) =>
  items.length > LISTED ? `${items.slice(0, LISTED).join(", ")} and ${items.length - LISTED} more` : items.join(", ");

/** A Job holding a place: its CronJob, its age, queued or not. */
export function placeText(j: Readonly<Job>, now: Date): string {
  const q = queuedBy(j);
  const created = j.metadata?.creationTimestamp;
  const state = q
    ? `queued: suspended by ${q.by}${q.since ? ` since ${stamp(q.since)}` : ""}`
    : `running${created ? ` for ${ago(new Date(created), now)}` : ""}`;
  return `${j.metadata?.name ?? "?"} (CronJob ${cronJobOfJob(j)}, ${state})`;
}

/**
 * The group in one line of evidence: its limit, the Jobs holding its places, its waiting runs; and the place of the
 * run of `member` (the CronJob asked about) in the queue, when it waits.
 */
function groupEvidence(g: GroupFacts, now: Date, member?: string): string[] {
  if (g.exists === false) return [`no ConcurrencyGroup ${g.name} in namespace ${g.namespace}`];
  const limit = g.exists === undefined ? "its limit could not be read" : `limit ${g.limit ?? "(none valid)"}`;
  const running = g.running.length
    ? `${plural(g.running.length, "Job")} of its CronJobs hold its places (labelled ${CONCURRENCY_GROUP_LABEL}=${groupLabelValue(g.name)}): ${listed(g.running.map((j) => placeText(j, now)))}`
    : `no Job of its CronJobs runs (labelled ${CONCURRENCY_GROUP_LABEL}=${groupLabelValue(g.name)})`;
  const waiting = g.waiting.length
    ? `; ${plural(g.waiting.length, "run")} ${g.waiting.length === 1 ? "waits" : "wait"} for a place, oldest first: ${listed(g.waiting.map((w) => `${w.cronJob} since ${stamp(w.since)}`))}`
    : "";
  const at = member === undefined ? -1 : g.waiting.findIndex((w) => w.cronJob === member);
  const place =
    at < 0
      ? []
      : [
          `the run of ${member} is ${at + 1} of ${g.waiting.length} in the group's queue` +
            (at ? `, behind ${listed(g.waiting.slice(0, at).map((w) => w.cronJob))}` : ": it takes the next place"),
        ];
  return [`ConcurrencyGroup ${g.namespace}/${g.name}: ${limit}; ${running}${waiting}`, ...place];
}

/** A count of places and the limit, in words the rows take. */
function places(g: GroupFacts | undefined): { inUse: string; groupLimit: string; newLimit: string } {
  const limit = g?.limit;
  return {
    inUse: String(g?.running.length ?? "?"),
    groupLimit: limit === undefined ? "?" : String(limit),
    newLimit: String((limit ?? 0) + 1),
  };
}

/**
 * A Held entry its group decided: full, older runs first, or no such group. `asked`: the entry is a run-now or
 * backfill request's (c.slotText names it), not the slot's.
 */
export function groupHeldVerdict(c: SlotContext, e: RecentRun, evidence: string[], asked = false): Verdict {
  const g = c.f.group;
  const group = g?.name ?? c.cronJob.spec?.concurrencyGroup ?? "?";
  const more = [...evidence, ...(g ? groupEvidence(g, c.f.now, c.name) : [])];
  if (e.reason === RecordReason.ConcurrencyGroupNotFound) {
    if (g?.exists) more.push(`ConcurrencyGroup ${group} exists now: the operator runs it at its next pass`);
    return found(
      "group-not-found",
      { when: c.slotText, group, namespace: c.namespace, pastDeadline: false, asked },
      more,
    );
  }
  if (e.reason === RecordReason.ConcurrencyGroupQueue) {
    // The runs ahead of it in the queue; when it no longer waits there, those held since before it.
    const at = (g?.waiting ?? []).findIndex((w) => w.cronJob === c.name);
    const since = e.scheduledTime ?? e.decidedAt;
    const first =
      at >= 0
        ? g!.waiting.slice(0, at)
        : (g?.waiting ?? []).filter((w) => w.cronJob !== c.name && Date.parse(w.since) < Date.parse(since));
    return found(
      "group-queue",
      {
        when: c.slotText,
        asked,
        group,
        namespace: c.namespace,
        ...places(g),
        ...(first.length ? { waitingFirst: listed(first.map((w) => w.cronJob)) } : {}),
      },
      more,
    );
  }
  return groupFull(c, group, g, e.blockedBy, more, false, asked);
}

/** group-full: the slot waits (or waited, until its deadline passed) behind the group's running Jobs. */
function groupFull(
  c: SlotContext,
  group: string,
  g: GroupFacts | undefined,
  blockedBy: string | undefined,
  evidence: string[],
  pastDeadline: boolean,
  asked = false,
): Verdict {
  // The Job the record names, if it still holds a place; else the group's oldest running Job.
  const named = blockedBy
    ? (g?.running.find((j) => j.metadata?.name === blockedBy) ?? c.jobNamed(blockedBy))
    : undefined;
  const blocker = named && classifyJob(named) === "active" ? named : g?.running[0];
  const out = [...evidence];
  if (blockedBy && blocker?.metadata?.name !== blockedBy)
    out.push(`Job ${blockedBy}, which it was held behind, has ended since`);
  if (blocker) {
    const name = blocker.metadata?.name ?? "";
    out.push(...keptAlive(blocker, c.podsOf(name), c.f.now).evidence);
  }
  const deadline = c.cronJob.spec?.startingDeadlineSeconds;
  return found(
    "group-full",
    {
      when: c.slotText,
      asked,
      group,
      namespace: c.namespace,
      ...places(g),
      pastDeadline,
      ...(pastDeadline ? { deadline: String(deadline ?? "?") } : {}),
      running: blocker !== undefined,
      job: blocker?.metadata?.name ?? blockedBy ?? "?",
      owner: blocker ? cronJobOfJob(blocker) : "?",
    },
    out,
  );
}

/**
 * A Missed entry of a CronJob in a group, when the group is why: held behind a Job of the group (blockedBy) that is
 * not its own under concurrencyPolicy Forbid, or the group does not exist. Undefined: the group is not why.
 */
export function groupMissedVerdict(c: SlotContext, e: RecentRun, evidence: string[]): Verdict | undefined {
  const g = c.f.group;
  const group = c.cronJob.spec?.concurrencyGroup;
  if (!group) return undefined;
  const more = [...evidence, ...(g ? groupEvidence(g, c.f.now) : [])];
  if (e.blockedBy) {
    // Forbid acts before the group: its own Job under Forbid held it.
    const own = c.jobNamed(e.blockedBy);
    if (own && c.cronJob.spec?.concurrencyPolicy === "Forbid") return undefined;
    return groupFull(c, group, g, e.blockedBy, more, true);
  }
  if (g?.exists === false) {
    return found("group-not-found", { when: c.slotText, group, namespace: c.namespace, pastDeadline: true }, more);
  }
  return undefined;
}

/** The group's state, in evidence, for a verdict it is not the cause of (a missed slot of a member). */
export function groupContext(f: WhyFacts): string[] {
  return f.group ? groupEvidence(f.group, f.now) : [];
}

/**
 * What keeps the next slot from running in its group: a group that does not exist, or one full now (the cause, and the
 * facts its row's `next` words take).
 */
export function groupBlocker(f: WhyFacts): Blocker | undefined {
  const g = f.group;
  if (!g) return undefined;
  if (g.exists === false) return blocker("group-not-found", { group: g.name });
  if (g.limit !== undefined && g.running.length >= g.limit)
    return blocker("group-full", { group: g.name, inUse: String(g.running.length), groupLimit: String(g.limit) });
  return undefined;
}
