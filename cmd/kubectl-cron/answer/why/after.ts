// spec.after as `why` reads it, asked about no slot: what the CronJob waits for, from the snapshot's upstream CronJobs
// and their Jobs (model/facts.ts upstreams): an upstream's run still running, one that ended not as spec.after[].when
// asks, the run after an upstream's run (its Job's annotation, the record's After entry: its request names that run),
// and an upstream missing or a cycle (Degraded UpstreamNotFound, AfterCycle). The run after an upstream's run is
// asked about as a slot is, its "slot" being that run's end (the record's scheduledTime for it).
import {
  AFTER_ANNOTATION,
  afterCycle,
  afterJobName,
  afterRequest,
  classifyJob,
  endsAs,
  finishedAt,
  type Job,
  RecordTrigger,
  scheduledTimeOf,
  upstreamsOf,
} from "../../../../api/v1/index.ts";
import { AFTER_WHEN_WORDS, NO_CAUSE, SLOT_WORDS } from "../causes.ts";
import type { UpstreamFacts } from "../../model/facts.ts";
import { iso } from "../../model/time.ts";
import { ranVerdict } from "./ran.ts";
import { recordVerdict } from "./record.ts";
import { slotText, zoneOf } from "./slot.ts";
import { undecidedVerdict } from "./undecided.ts";
import { type Found, fact, type SlotContext, type Verdict } from "./verdict.ts";

/** What spec.after says now: the verdict, and the time it is about (the upstream run's start, for the newest). */
interface AfterAnswer {
  verdict: Verdict;
  at: Date | undefined;
}

const startOf = (j: Readonly<Job>) => {
  const t = j.status?.startTime ?? j.metadata?.creationTimestamp;
  return t ? new Date(t) : undefined;
};

/** The upstream's newest run: by its start (a Job's creation). */
function newestRun(jobs: readonly Readonly<Job>[]): Readonly<Job> | undefined {
  const t = (j: Readonly<Job>) => startOf(j)?.getTime() ?? -Infinity;
  return [...jobs].sort((a, b) => t(b) - t(a) || (b.metadata?.name ?? "").localeCompare(a.metadata?.name ?? ""))[0];
}

/** The problems of spec.after (a cycle, an upstream missing), as findings: the verdict of a CronJob with no schedule. */
export function afterProblems(c: Pick<SlotContext, "f" | "name" | "namespace">): Found[] {
  const ups = c.f.upstreams ?? [];
  const degraded = c.f.cronJob.status?.conditions?.find((x) => x.type === "Degraded" && x.status === "True");
  const condition = degraded ? [`condition Degraded=True ${degraded.reason ?? "?"}: ${degraded.message ?? ""}`] : [];
  const out: Found[] = [];
  if (degraded?.reason === "AfterCycle") {
    const specOf = (n: string) => ups.find((u) => u.cronJob === n)?.object?.spec;
    const path = afterCycle(
      c.name,
      ups.map((u) => u.cronJob),
      (n) => {
        const spec = specOf(n);
        return spec ? upstreamsOf(spec).map((u) => u.cronJob) : undefined;
      },
    );
    const cycle = (path ?? [c.name, ...ups.map((u) => u.cronJob), "…"]).join(" runs after ");
    out.push(fact("after-cycle", { cycle }, condition));
  }
  for (const [i, u] of ups.entries()) {
    if (u.object || u.unread) continue;
    const evidence = [`spec.after[${i}].cronJob: ${u.cronJob}: no such CronJob in namespace ${c.namespace}`];
    if (degraded?.reason === "UpstreamNotFound") evidence.push(...condition);
    out.push(
      fact("upstream-not-found", { upstream: upstreamName(c, i), namespace: c.namespace, name: c.name }, evidence),
    );
  }
  return out;
}

const upstreamName = (c: Pick<SlotContext, "f">, i: number) => c.f.upstreams?.[i]?.cronJob ?? "?";

/** How an upstream's run is named: its slot in the upstream's zone (a run-now's: when it started). */
const runText = (u: UpstreamFacts, job: Readonly<Job>) => {
  const at = scheduledTimeOf(job) ?? startOf(job) ?? new Date(0);
  return slotText(at, u.object ? zoneOf(u.object) : "UTC");
};

/** The book's line for an upstream: up to which of its runs the CronJob decided (status.upstreams). */
function bookLine(c: Pick<SlotContext, "f">, u: UpstreamFacts): string {
  const b = c.f.cronJob.status?.upstreams?.find((x) => x.cronJob === u.cronJob);
  return b
    ? `status.upstreams: ${u.cronJob} decided up to the run that ended at ${b.lastEnded}${b.lastJob ? ` (Job ${b.lastJob})` : ""}`
    : `status.upstreams: nothing decided about ${u.cronJob} yet`;
}

/**
 * What the CronJob waits for of its upstreams, asked about no slot: the upstream whose newest run is newest answers
 * (`slotCtx`: the context of a slot at a time, for the run after an upstream's run); undefined without spec.after.
 */
export function afterAnswer(
  c: Pick<SlotContext, "f" | "name" | "namespace">,
  operator: Found[],
  slotCtx: (slot: Date, words: string) => SlotContext,
): AfterAnswer | undefined {
  const ups = (c.f.upstreams ?? []).filter((u) => u.object);
  if (!c.f.upstreams?.length) return undefined;
  const runs = ups.map((u) => ({ u, job: newestRun(u.jobs) }));
  const time = (j: Readonly<Job> | undefined) => (j ? (startOf(j)?.getTime() ?? -Infinity) : -Infinity);
  const newest = runs.sort((a, b) => time(b.job) - time(a.job))[0];
  if (!newest) return undefined;
  const { u, job } = newest;
  const when = { upstream: u.cronJob, name: c.name, upstreamWhen: AFTER_WHEN_WORDS[u.when] };
  const healthy = (verdict: string, evidence: string[]): AfterAnswer => ({
    verdict: { status: "healthy", verdict, evidence: [...evidence, bookLine(c, u)], fix: [] },
    at: job ? startOf(job) : undefined,
  });
  if (!job) return healthy(NO_CAUSE.noUpstreamRun(when), [`${u.cronJob} has no Jobs`]);
  const jobName = job.metadata?.name ?? "";
  const upstreamRun = runText(u, job);
  const ended = finishedAt(job);
  if (classifyJob(job) === "active" || !ended) {
    const since = iso(startOf(job) ?? new Date(0));
    return healthy(NO_CAUSE.upstreamRunning({ ...when, upstreamRun, runningSince: since }), [
      `Job ${jobName} of ${u.cronJob}: running since ${since}`,
    ]);
  }
  const result = classifyJob(job) === "failed" ? "Failed" : "Complete";
  const endLine = `Job ${jobName} of ${u.cronJob}: ${result} at ${iso(ended)}`;
  if (!endsAs(job, u.when)) {
    return healthy(NO_CAUSE.upstreamEndedOther({ ...when, upstreamRun, upstreamFailed: result === "Failed" }), [
      endLine,
      `spec.after: ${u.cronJob}, when ${u.when}`,
    ]);
  }
  const words = SLOT_WORDS.afterRun({
    when: slotText(ended, zoneOf(c.f.cronJob)),
    ...when,
    upstreamRun,
    upstreamJob: jobName,
  });
  return { verdict: runAfter(slotCtx(ended, words), u, jobName, operator, endLine), at: startOf(job) };
}

/** The run after an upstream's run: its Job (named from the upstream's), else the record's After entry, else none yet. */
function runAfter(c: SlotContext, u: UpstreamFacts, upstreamJob: string, operator: Found[], endLine: string): Verdict {
  const request = afterRequest(u.cronJob, upstreamJob);
  const job =
    c.jobNamed(afterJobName(c.name, u.cronJob, upstreamJob)) ??
    c.f.jobs.find((j) => j.metadata?.annotations?.[AFTER_ANNOTATION] === request);
  const entry = (c.cronJob.status?.recentRuns ?? []).find(
    (e) => e.trigger === RecordTrigger.After && e.request === request,
  );
  const own = job ? ranVerdict(c, job, entry) : entry ? recordVerdict(c, entry) : undecidedVerdict(c, operator);
  const annotation = job ? [`Job ${job.metadata?.name ?? ""}: ${AFTER_ANNOTATION}: ${request}`] : [];
  return { ...own, evidence: [endLine, ...annotation, ...own.evidence, bookLine(c, u)] };
}
