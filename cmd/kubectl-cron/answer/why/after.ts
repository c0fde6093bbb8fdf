// spec.after as `why` reads it, asked about no slot: what the CronJob waits for, from the snapshot's upstream CronJobs
// and their Jobs (model/facts.ts upstreams): an upstream's run still running, one that ended not as spec.after[].when
// asks, the run after an upstream's run (its Job's annotation, the record's After entry: its request names that run),
// and an upstream missing or a cycle (Degraded UpstreamNotFound, AfterCycle). The run after an upstream's run is
// asked about as a slot is, its "slot" being that run's end (the record's scheduledTime for it). The after row's half
// (AFTER_HALF): its problems, and its answer asked about no slot.
import {
  AFTER_ANNOTATION,
  afterCycle,
  afterJobName,
  afterRequest,
  classifyJob,
  endedRuns,
  endsAs,
  finishedAt,
  type Job,
  RecordTrigger,
  scheduledTimeOf,
  upstreamsOf,
} from "../../../../api/v1/index.ts";
import { afterPolicyOf, joinJobName, joinRequest, parseJoinRequest } from "../../../../api/v1/join.ts";
import { AFTER_WHEN_WORDS, NO_CAUSE, SLOT_WORDS } from "../causes.ts";
import type { UpstreamFacts } from "../../model/facts.ts";
import { iso } from "../../model/time.ts";
import { ranVerdict } from "./ran.ts";
import { recordVerdict } from "./record.ts";
import { slotText, zoneOf } from "./slot.ts";
import type { NowAnswer, RowGround, TriggerHalf } from "./half.ts";
import { undecidedVerdict } from "./undecided.ts";
import { type Found, fact, type SlotContext, type Verdict } from "./verdict.ts";

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
function afterProblems(c: Pick<SlotContext, "f" | "name" | "namespace">): Found[] {
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

/** The after row's half (halves.ts): spec.after's problems, said whichever slot is asked, and what it waits for now. */
export const AFTER_HALF: TriggerHalf = { problems: afterProblems, now: afterAnswer };

/**
 * What the CronJob waits for of its upstreams, asked about no slot: the upstream whose newest run is newest answers
 * (the run after an upstream's run is asked about as a slot, its context `slotAt`); undefined without spec.after.
 */
function afterAnswer(c: RowGround): NowAnswer | undefined {
  const ups = (c.f.upstreams ?? []).filter((u) => u.object);
  if (!c.f.upstreams?.length) return undefined;
  if (afterPolicyOf(c.f.cronJob.spec) === "All") return joinAnswer(c, ups);
  const runs = ups.map((u) => ({ u, job: newestRun(u.jobs) }));
  const time = (j: Readonly<Job> | undefined) => (j ? (startOf(j)?.getTime() ?? -Infinity) : -Infinity);
  const newest = runs.sort((a, b) => time(b.job) - time(a.job))[0];
  if (!newest) return undefined;
  return upstreamAnswer(c, newest.u, newest.job);
}

/** What the CronJob waits for of one upstream, by its newest run (`job`), or the run after it. */
function upstreamAnswer(
  c: RowGround,
  u: UpstreamFacts,
  job: Readonly<Job> | undefined,
  joined: string[] = [],
): NowAnswer {
  const when = { upstream: u.cronJob, name: c.name, upstreamWhen: AFTER_WHEN_WORDS[u.when] };
  const healthy = (verdict: string, evidence: string[]): NowAnswer => ({
    verdict: { status: "healthy", verdict, evidence: [...evidence, ...joined, bookLine(c, u)], fix: [] },
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
  // A join's upstream whose newest run the last join took: it waits for another.
  if (joined.length) return healthy(NO_CAUSE.joinWaiting(when), [endLine]);
  const words = SLOT_WORDS.afterRun({
    when: slotText(ended, zoneOf(c.f.cronJob)),
    ...when,
    upstreamRun,
    upstreamJob: jobName,
  });
  return { verdict: runAfter(c.slotAt(ended, words), u, jobName, c.operator, endLine), at: startOf(job) };
}

/** The run after an upstream's run: its Job (named from the upstream's), else the record's After entry, else none yet. */
function runAfter(c: SlotContext, u: UpstreamFacts, upstreamJob: string, operator: Found[], endLine: string): Verdict {
  const request = afterRequest(u.cronJob, upstreamJob);
  const name = afterJobName(c.name, u.cronJob, upstreamJob);
  const job = c.jobNamed(name) ?? c.f.jobs.find((j) => j.metadata?.annotations?.[AFTER_ANNOTATION] === request);
  const entry = (c.cronJob.status?.recentRuns ?? []).find(
    (e) => e.trigger === RecordTrigger.After && e.request === request,
  );
  const own = job
    ? ranVerdict(c, job, entry)
    : entry
      ? recordVerdict(c, entry)
      : undecidedVerdict(c, operator, { job: name });
  const annotation = job ? [`Job ${job.metadata?.name ?? ""}: ${AFTER_ANNOTATION}: ${request}`] : [];
  return { ...own, evidence: [endLine, ...annotation, ...own.evidence, bookLine(c, u)] };
}

/** An upstream's runs ended as spec.after asks since its book (none without a book: the operator has not started it). */
function sinceBook(c: Pick<RowGround, "f">, u: UpstreamFacts) {
  const b = c.f.cronJob.status?.upstreams?.find((x) => x.cronJob === u.cronJob);
  return b ? endedRuns(u.jobs, u.when, { ended: new Date(b.lastEnded), job: b.lastJob }) : [];
}

/**
 * spec.afterPolicy All, asked about no slot: the join once every upstream ended a run since the books (its "slot" the
 * end that completed it), else what it waits for: the first upstream with none, the others' runs as evidence; when
 * none has a new run, the last join's run.
 */
function joinAnswer(c: RowGround, ups: readonly UpstreamFacts[]): NowAnswer | undefined {
  if (ups.length < (c.f.upstreams?.length ?? 0)) return undefined;
  const since = ups.map((u) => ({ u, runs: sinceBook(c, u) }));
  const joined = since.flatMap(({ u, runs }) =>
    runs.length
      ? [`${u.cronJob}: a run ended as spec.after asks, not joined yet (Job ${runs[0]!.job.metadata?.name ?? ""})`]
      : [],
  );
  const waiting = since.find((s) => !s.runs.length);
  const lastJoin = [...c.f.jobs]
    .filter((j) => parseJoinRequest(j.metadata?.annotations?.[AFTER_ANNOTATION]))
    .sort((a, b) => (scheduledTimeOf(b)?.getTime() ?? 0) - (scheduledTimeOf(a)?.getTime() ?? 0))[0];
  if (waiting && (joined.length || !lastJoin)) {
    return upstreamAnswer(c, waiting.u, newestRun(waiting.u.jobs), [...joined, `spec.afterPolicy: All`]);
  }
  const firsts = waiting
    ? parseJoinRequest(lastJoin!.metadata?.annotations?.[AFTER_ANNOTATION])!.map((r) => ({
        u: ups.find((u) => u.cronJob === r.upstream)!,
        job: ups.find((u) => u.cronJob === r.upstream)?.jobs.find((j) => j.metadata?.name === r.job),
        name: r.job,
      }))
    : since.map(({ u, runs }) => ({ u, job: runs[0]!.job, name: runs[0]!.job.metadata?.name ?? "" }));
  const ended = waiting
    ? scheduledTimeOf(lastJoin!)
    : new Date(Math.max(...since.map((s) => s.runs[0]!.ended.getTime())));
  if (!ended) return undefined;
  return { verdict: joinRun(c, firsts, ended), at: ended };
}

/** A join's run: its Job (named from the runs it joins), else the record's entry, else none yet. */
function joinRun(
  c: RowGround,
  firsts: readonly { u: UpstreamFacts; job: Readonly<Job> | undefined; name: string }[],
  ended: Date,
): Verdict {
  const runs = firsts.map((f) => ({ upstream: f.u.cronJob, job: f.name }));
  const request = joinRequest(runs);
  const last = firsts.find((f) => f.job && finishedAt(f.job)?.getTime() === ended.getTime()) ?? firsts[0]!;
  const words = SLOT_WORDS.afterRun({
    when: slotText(ended, zoneOf(c.f.cronJob)),
    upstream: last.u.cronJob,
    upstreamRun: last.job ? runText(last.u, last.job) : last.name,
    upstreamJob: last.name,
  });
  const s = c.slotAt(ended, words);
  const name = joinJobName(c.name, runs);
  const job = s.jobNamed(name);
  const entry = (s.cronJob.status?.recentRuns ?? []).find(
    (e) => e.trigger === RecordTrigger.After && e.request === request,
  );
  const own = job
    ? ranVerdict(s, job, entry)
    : entry
      ? recordVerdict(s, entry)
      : undecidedVerdict(s, c.operator, { job: name });
  const joinedLine = `spec.afterPolicy: All: joins ${runs.map((r) => `${r.upstream}'s Job ${r.job}`).join(", ")}`;
  return { ...own, evidence: [joinedLine, ...own.evidence, ...firsts.map((f) => bookLine(c, f.u))] };
}
